//! Perturbable math: what the plain copies call (copied into the
//! generated crates with the runtime, which re-exports it as
//! `runtime::pt`).
//!
//! Every math function whose result OpenCL may round differently is moved
//! by a random number of ulps within OpenCL C's error bound plus one (the
//! host's libm is not exact either) when perturbations are on ([`set`]),
//! kept within the function's range; the largest change this causes is how
//! far the math libraries alone can move a result (see `crate::verdict`).
//! The decisions of a piecewise computation (comparisons of reals, casts to
//! integers, rounding functions, the quotient of `%`, `abs`, `min`, `max`)
//! go through `crate::freeze`. Classes of calls can be replaced by
//! arbitrary values ([`replace`]): an output entry that then changes lies
//! on the path of such a call (a NaN given to a built-in, a non-finite or
//! singular intermediate, a saturating function, a large result), which
//! is what several explanations of a difference require.

use std::cell::Cell;

thread_local! {
    /// The state of the perturbation generator; 0: off.
    static STATE: Cell<u64> = const { Cell::new(0) };
}

/// Turns perturbations on (seed ≠ 0) or off (0).
pub fn set(seed: u64) {
    STATE.with(|s| s.set(seed));
}

thread_local! {
    /// Which calls are replaced, and the state of the generator of their
    /// replacements (see [`replace`]; 0: by NaN, see [`replace_by_nan`]).
    static REPLACE: Cell<(Calls, u64)> = const { Cell::new((Calls::None, 0)) };
    /// The points at which a math function was given a NaN (see
    /// [`nan_points`]).
    static NAN_AT: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The points (`crate::freeze::point`) at which a math function was given
/// a NaN since the last call.
pub fn nan_points() -> Vec<usize> {
    NAN_AT.with(|t| std::mem::take(&mut *t.borrow_mut()))
}

/// Which calls of the plain copy [`replace`] replaces by arbitrary finite
/// values. An output entry that then changes depends on such a call: the
/// call lies on that entry's path.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Calls {
    /// None: the plain copy as written.
    None,
    /// Math functions given a NaN. PoCL compiles its built-in functions
    /// assuming no NaN arguments: where its compiler knows an argument is
    /// NaN (`x / x` of a zero it has propagated), `ceil`, `floor`, `tanh`,
    /// … fold to an arbitrary value (LLVM's poison: 0, or the value stored
    /// next to it), in `float` and `double`; at run time they return NaN.
    /// The runtime evaluates the plain copy this way to tell that device
    /// behaviour from a translation error (`crate::verdict`'s *Kinds*).
    NanArgument,
    /// Math functions and divisions with a non-finite argument or result,
    /// one whose square overflows, or at a singular point of their
    /// derivative (`sqrt(0)`, `asin(±1)`, `x / 0`, …): where forward mode's
    /// derivative is legitimately not finite (`tanh(x / 0.0)` is ±1, its
    /// tangent `0·∞`; `atan2(y, x)` of `x, y ~ 1e200` is finite, its
    /// derivative's `x² + y²` is not; `0 / (x / 0.0)` is 0, its tangent
    /// `0·∞`, which only [`replace_by_nan`] shows).
    Singular,
    /// Saturating functions (`tanh`): their derivative formula `1 − tanh²`
    /// cancels where they saturate, and in `f32` Rust's `tanh` reaches ±1
    /// where OpenCL's stops at `±(1 − 2⁻²⁴)`.
    Saturating,
    /// Math functions and divisions whose result is finite and at least
    /// this large in magnitude (`u + c − c` with `c = cosh(123.456)` loses
    /// every small `u` to the rounding of `c`).
    AtLeast(f64),
}

/// Replaces the calls `calls` selects by arbitrary finite values, drawn
/// from `seed` (the same seed gives the same values in the same order);
/// `Calls::None` turns it off.
pub fn replace(calls: Calls, seed: u64) {
    REPLACE.with(|s| s.set((calls, seed | 1)));
}

/// Replaces the calls `calls` selects by NaN. An exact zero masks a value
/// from every finite replacement (`0 / y`, `0 % y`, `0·tanh(y)` are zero
/// for any finite `y`), not from NaN: an output entry computed from such a
/// call changes (forward mode's derivative there is legitimately `0·∞`,
/// NaN). `replace(Calls::None, 0)` turns it off.
pub fn replace_by_nan(calls: Calls) {
    REPLACE.with(|s| s.set((calls, 0)));
}

/// What a call is, for [`replaced`].
#[derive(Clone, Copy, Default)]
struct Call {
    /// An OpenCL built-in function (not a division), which PoCL may fold
    /// given a NaN.
    builtin: bool,
    /// At a singular point of its derivative.
    singular: bool,
    /// A saturating function.
    saturating: bool,
    /// Perturbed within a bound (a math result or a quotient), which
    /// [`Calls::AtLeast`] selects by size.
    sized: bool,
}

const BUILTIN: Call = Call {
    builtin: true,
    singular: false,
    saturating: false,
    sized: false,
};

const MATH: Call = Call {
    sized: true,
    ..BUILTIN
};

/// The replacement of a call with arguments `args` and result `v` under
/// [`replace`], if it selects the call. Notes the point of a NaN argument
/// of a built-in either way ([`nan_points`]).
fn replaced<R: F>(args: &[R], v: R, call: Call) -> Option<R> {
    let nan = args.iter().any(|a| a.to64().is_nan());
    if nan && call.builtin {
        let p = crate::freeze::current();
        NAN_AT.with(|t| {
            let mut t = t.borrow_mut();
            if !t.contains(&p) {
                t.push(p);
            }
        });
    }
    REPLACE.with(|s| {
        let (calls, mut x) = s.get();
        let hit = match calls {
            Calls::None => false,
            Calls::NanArgument => nan && call.builtin,
            Calls::Singular => {
                // (A value whose square overflows: derivative formulas
                // square arguments and results — `atan2`, `hypot`, `asin`,
                // `1 − tanh²`, the quotient rule's `q·ḃ/b`.)
                let huge = if R::SINGLE {
                    (f32::MAX as f64).sqrt()
                } else {
                    f64::MAX.sqrt()
                };
                let singular = |x: f64| !x.is_finite() || x.abs() >= huge;
                call.singular || singular(v.to64()) || args.iter().any(|a| singular(a.to64()))
            }
            Calls::Saturating => call.saturating,
            Calls::AtLeast(m) => call.sized && v.to64().is_finite() && v.to64().abs() >= m,
        };
        if !hit {
            return None;
        }
        if x == 0 {
            return Some(R::from64(f64::NAN));
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set((calls, x));
        Some(R::from64(
            [0.0, 1.0, -1.0, 0.5, 2.0, -3.0][(x % 6) as usize],
        ))
    })
}

/// A random integer in `[-b, b]`, or 0 when off.
fn draw(b: u32) -> i64 {
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 || b == 0 {
            return 0;
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        (x % (2 * b as u64 + 1)) as i64 - b as i64
    })
}

/// The floating-point types.
pub trait F: Copy {
    /// Whether this is `f32` (whose division and `sqrt` OpenCL rounds
    /// less accurately).
    const SINGLE: bool;
    /// `self` moved by `n` ulps.
    fn nudge(self, n: i64) -> Self;
    fn to64(self) -> f64;
    fn from64(v: f64) -> Self;
}

impl F for f64 {
    const SINGLE: bool = false;
    fn nudge(self, n: i64) -> f64 {
        if !self.is_finite() || n == 0 {
            return self;
        }
        // The position of `self` on the line of floats, ±(bits of |self|),
        // moved by `n` (through zero if it must; at most to ±∞).
        let m = (self.to_bits() & !(1 << 63)) as i64;
        let at = if self.is_sign_negative() { -m } else { m } + n;
        let m = at.unsigned_abs().min(f64::INFINITY.to_bits());
        f64::from_bits(m | if at < 0 { 1 << 63 } else { 0 })
    }
    fn to64(self) -> f64 {
        self
    }
    fn from64(v: f64) -> f64 {
        v
    }
}

impl F for f32 {
    const SINGLE: bool = true;
    fn nudge(self, n: i64) -> f32 {
        if !self.is_finite() || n == 0 {
            return self;
        }
        let m = (self.to_bits() & !(1 << 31)) as i64;
        let at = if self.is_sign_negative() { -m } else { m } + n;
        let m = at.unsigned_abs().min(f32::INFINITY.to_bits() as u64) as u32;
        f32::from_bits(m | if at < 0 { 1 << 31 } else { 0 })
    }
    fn to64(self) -> f64 {
        self as f64
    }
    fn from64(v: f64) -> f32 {
        v as f32
    }
}

/// `v` moved by a random number of ulps within `bound` (while perturbations
/// are on, see [`set`]), kept within the range `[lo, hi]` of the function
/// (a library within its error bound does not leave it: `tanh` is not
/// above 1).
fn p<R: F>(v: R, bound: u32, lo: f64, hi: f64) -> R {
    let w = v.nudge(draw(bound));
    if w.to64() < lo || w.to64() > hi { v } else { w }
}

/// Math functions of one argument: `name bound, lo, hi, singular, call`
/// (`singular`: whether the argument is a singular point of the
/// derivative).
macro_rules! unary {
    ($($f:ident $b:expr, $lo:expr, $hi:expr, $singular:expr, $call:expr);* $(;)?) => { $(
        pub fn $f<R: F + Unary>(x: R) -> R {
            let v = x.$f();
            let singular: fn(f64) -> bool = $singular;
            let call = Call { singular: singular(x.to64()), ..$call };
            replaced(&[x], v, call).unwrap_or_else(|| p(v, $b, $lo, $hi))
        }
    )* };
}

/// The one-argument math methods of both float types.
pub trait Unary: Sized {
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn log10(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn tanh(self) -> Self;
    fn abs(self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn cbrt(self) -> Self;
    fn asin(self) -> Self;
    fn acos(self) -> Self;
    fn atan(self) -> Self;
    fn sinh(self) -> Self;
    fn cosh(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round(self) -> Self;
    fn trunc(self) -> Self;
    fn powi(self, n: i32) -> Self;
    fn powf(self, y: Self) -> Self;
    fn min(self, y: Self) -> Self;
    fn max(self, y: Self) -> Self;
    fn hypot(self, y: Self) -> Self;
    fn atan2(self, y: Self) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn div(self, y: Self) -> Self;
    fn rem(self, y: Self) -> Self;
}

macro_rules! impl_unary {
    ($t:ty) => {
        impl Unary for $t {
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            fn log10(self) -> Self {
                <$t>::log10(self)
            }
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn exp2(self) -> Self {
                <$t>::exp2(self)
            }
            fn log2(self) -> Self {
                <$t>::log2(self)
            }
            fn cbrt(self) -> Self {
                <$t>::cbrt(self)
            }
            fn asin(self) -> Self {
                <$t>::asin(self)
            }
            fn acos(self) -> Self {
                <$t>::acos(self)
            }
            fn atan(self) -> Self {
                <$t>::atan(self)
            }
            fn sinh(self) -> Self {
                <$t>::sinh(self)
            }
            fn cosh(self) -> Self {
                <$t>::cosh(self)
            }
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            fn round(self) -> Self {
                <$t>::round(self)
            }
            fn trunc(self) -> Self {
                <$t>::trunc(self)
            }
            fn powi(self, n: i32) -> Self {
                <$t>::powi(self, n)
            }
            fn powf(self, y: Self) -> Self {
                <$t>::powf(self, y)
            }
            fn min(self, y: Self) -> Self {
                <$t>::min(self, y)
            }
            fn max(self, y: Self) -> Self {
                <$t>::max(self, y)
            }
            fn hypot(self, y: Self) -> Self {
                <$t>::hypot(self, y)
            }
            fn atan2(self, y: Self) -> Self {
                <$t>::atan2(self, y)
            }
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
            fn div(self, y: Self) -> Self {
                self / y
            }
            fn rem(self, y: Self) -> Self {
                self % y
            }
        }
    };
}
impl_unary!(f32);
impl_unary!(f64);

const INF: f64 = f64::INFINITY;
// Within the function's range (the bounds of `f32` results, which
// round the ends outwards where `f64`'s do not).
const HALF_PI: f64 = std::f64::consts::FRAC_PI_2 + 1e-7;
const SATURATING: Call = Call {
    saturating: true,
    ..MATH
};
// OpenCL C's ulp bounds (full profile, single and double precision
// agree for these), plus one for the host's libm.
unary!(
    ln 4, -INF, INF, |x| x == 0.0, MATH;
    log10 4, -INF, INF, |x| x == 0.0, MATH;
    log2 4, -INF, INF, |x| x == 0.0, MATH;
    tan 6, -INF, INF, |_| false, MATH;
    cbrt 3, -INF, INF, |x| x == 0.0, MATH;
    sinh 5, -INF, INF, |_| false, MATH;
    exp 4, 0.0, INF, |_| false, MATH;
    exp2 4, 0.0, INF, |_| false, MATH;
    sin 5, -1.0, 1.0, |_| false, MATH;
    cos 5, -1.0, 1.0, |_| false, MATH;
    tanh 6, -1.0, 1.0, |_| false, SATURATING;
    cosh 5, 1.0, INF, |_| false, MATH;
    asin 5, -HALF_PI, HALF_PI, |x| x.abs() == 1.0, MATH;
    acos 5, 0.0, 2.0 * HALF_PI, |x| x.abs() == 1.0, MATH;
    atan 6, -HALF_PI, HALF_PI, |_| false, MATH;
);

// Exact in both, and decisions (see `crate::freeze`): their results
// are frozen while decisions are replayed.
macro_rules! rounding {
    ($($f:ident),*) => { $(
        pub fn $f<R: F + Unary>(x: R) -> R {
            let v = x.$f();
            replaced(&[x], v, BUILTIN).unwrap_or_else(|| frozen(v))
        }
    )* };
}
rounding!(floor, ceil, round, trunc);

/// A real value decided at the recorded point (see `crate::freeze`).
fn frozen<R: F>(v: R) -> R {
    R::from64(f64::from_bits(crate::freeze::decide(v.to64().to_bits())))
}

/// A comparison of reals, a decision.
pub fn cond(b: bool) -> bool {
    crate::freeze::decide(b as u64) != 0
}

/// A cast to `i32`, a decision.
pub fn int_i32(v: i32) -> i32 {
    crate::freeze::decide(v as u32 as u64) as u32 as i32
}

/// A cast to `usize`, a decision.
pub fn int_usize(v: usize) -> usize {
    crate::freeze::decide(v as u64) as usize
}

/// `x % y` (`fmod`, exact): `x − n·y` with the quotient `n` a decision.
/// Replayed as `r₀ + (x − x₀) − n·(y − y₀)` from the recorded `x₀`,
/// `y₀`, `r₀ = x₀ % y₀` (`x − n·y` itself would lose a small `r₀`
/// next to a large `x`).
pub fn rem<R: F + Unary>(x: R, y: R) -> R {
    let r = x.rem(y);
    let call = Call {
        singular: y.to64() == 0.0,
        ..BUILTIN
    };
    if let Some(v) = replaced(&[x, y], r, call) {
        return v;
    }
    let (x64, y64, r64) = (x.to64(), y.to64(), r.to64());
    let keep = |v: f64| f64::from_bits(crate::freeze::decide(v.to_bits()));
    let n = keep((x64 - r64) / y64);
    let (x0, y0, r0) = (keep(x64), keep(y64), keep(r64));
    if crate::freeze::replaying() {
        R::from64(r0 + (x64 - x0) - n * (y64 - y0))
    } else {
        r
    }
}

/// `|x|` (exact), its sign a decision (`−x` where `x < 0`, as the
/// tangent rule).
pub fn abs<R: F + Unary>(x: R) -> R {
    if let Some(v) = replaced(&[x], x.abs(), BUILTIN) {
        return v;
    }
    let negative = cond(x.to64() < 0.0);
    if crate::freeze::replaying() {
        R::from64(if negative { -x.to64() } else { x.to64() })
    } else {
        x.abs()
    }
}

/// `sqrt`: correctly rounded in Rust and in OpenCL's `double`; 3 ulp
/// in OpenCL's `float`.
pub fn sqrt<R: F + Unary>(x: R) -> R {
    let v = x.sqrt();
    let call = Call {
        singular: x.to64() == 0.0,
        ..MATH
    };
    replaced(&[x], v, call).unwrap_or_else(|| p(v, if R::SINGLE { 3 } else { 0 }, 0.0, INF))
}

/// Division: correctly rounded but in OpenCL's `float` (2.5 ulp).
pub fn div<R: F + Unary>(x: R, y: R) -> R {
    let v = x.div(y);
    let call = Call {
        builtin: false,
        singular: y.to64() == 0.0,
        ..MATH
    };
    replaced(&[x, y], v, call).unwrap_or_else(|| p(v, if R::SINGLE { 3 } else { 0 }, -INF, INF))
}

/// `*place /= y`, as [`div`].
pub fn div_assign<R: F + Unary>(place: &mut R, y: R) {
    *place = div(*place, y);
}

/// `powi`: OpenCL's `pown` is within 16 ulp; Rust's multiplies, within
/// about one ulp per factor. Singular at `0ⁿ` with `n < 1` (its
/// derivative `n·0ⁿ⁻¹`).
pub fn powi<R: F + Unary>(x: R, n: i32) -> R {
    let v = x.powi(n);
    let call = Call {
        singular: x.to64() == 0.0 && n < 1,
        ..MATH
    };
    replaced(&[x], v, call).unwrap_or_else(|| p(v, 17 + n.unsigned_abs().min(64), -INF, INF))
}

/// `powf`, singular at `x = 0` (its derivatives `y·xʸ⁻¹` and `xʸ·ln x`).
pub fn powf<R: F + Unary>(x: R, y: R) -> R {
    let v = x.powf(y);
    let call = Call {
        singular: x.to64() == 0.0,
        ..MATH
    };
    replaced(&[x, y], v, call).unwrap_or_else(|| p(v, 17, -INF, INF))
}

/// `min` (exact), the argument it returns a decision (`y` where
/// `y < x` or `x` is NaN, as the tangent rule).
pub fn min<R: F + Unary>(x: R, y: R) -> R {
    if let Some(v) = replaced(&[x, y], x.min(y), BUILTIN) {
        return v;
    }
    let second = cond(y.to64() < x.to64() || x.to64().is_nan());
    if crate::freeze::replaying() {
        if second { y } else { x }
    } else {
        x.min(y)
    }
}

/// `max` (exact), the argument it returns a decision (`y` where
/// `y > x` or `x` is NaN).
pub fn max<R: F + Unary>(x: R, y: R) -> R {
    if let Some(v) = replaced(&[x, y], x.max(y), BUILTIN) {
        return v;
    }
    let second = cond(y.to64() > x.to64() || x.to64().is_nan());
    if crate::freeze::replaying() {
        if second { y } else { x }
    } else {
        x.max(y)
    }
}

/// `hypot`, singular at `(0, 0)`.
pub fn hypot<R: F + Unary>(x: R, y: R) -> R {
    let v = x.hypot(y);
    let call = Call {
        singular: x.to64() == 0.0 && y.to64() == 0.0,
        ..MATH
    };
    replaced(&[x, y], v, call).unwrap_or_else(|| p(v, 5, 0.0, INF))
}

/// `atan2`, singular at `(0, 0)`.
pub fn atan2<R: F + Unary>(x: R, y: R) -> R {
    let v = x.atan2(y);
    let call = Call {
        singular: x.to64() == 0.0 && y.to64() == 0.0,
        ..MATH
    };
    replaced(&[x, y], v, call).unwrap_or_else(|| p(v, 7, -INF, INF))
}

/// `fma` is correctly rounded in both.
pub fn mul_add<R: F + Unary>(x: R, a: R, b: R) -> R {
    let v = x.mul_add(a, b);
    replaced(&[x, a, b], v, BUILTIN).unwrap_or(v)
}

#[cfg(test)]
mod tests {
    use super::F;

    #[test]
    fn nudges_move_by_ulps_through_zero() {
        let tiny = f64::from_bits(1);
        assert_eq!((-tiny).nudge(3), 2.0 * tiny);
        assert_eq!(tiny.nudge(-1), 0.0);
        assert_eq!(1.0f64.nudge(1), 1.0 + f64::EPSILON);
        assert_eq!((-1.0f64).nudge(-1), -1.0 - f64::EPSILON);
        assert_eq!(f64::MAX.nudge(5), f64::INFINITY);
        let tiny = f32::from_bits(1);
        assert_eq!((-tiny).nudge(3), 2.0 * tiny);
        assert_eq!((-1.0f32).nudge(2), -1.0 + f32::EPSILON);
        assert_eq!(f32::MAX.nudge(1), f32::INFINITY);
    }

    #[test]
    fn nan_poison_replaces_math_of_a_nan_and_notes_its_point() {
        use super::{Calls, replace};
        crate::freeze::point(3);
        super::nan_points();
        assert!(super::ceil(f64::NAN).is_nan());
        assert_eq!(super::nan_points(), vec![3]);
        replace(Calls::NanArgument, 7);
        let v = super::tanh(f32::NAN);
        let w = super::powf(2.0f64, f64::NAN);
        // A division is not a built-in function: never folded.
        let q = super::div(f64::NAN, 2.0);
        replace(Calls::None, 0);
        assert!(v.is_finite() && w.is_finite() && q.is_nan());
        // Arguments that are not NaN are computed as ever.
        replace(Calls::NanArgument, 7);
        assert_eq!(super::ceil(1.5f64), 2.0);
        replace(Calls::None, 0);
        assert_eq!(super::nan_points(), vec![3]);
        assert!(super::nan_points().is_empty());
    }

    /// An exact zero masks a call from every finite replacement, not from
    /// NaN.
    #[test]
    fn nan_replacement_shows_a_masked_call() {
        use super::{Calls, replace, replace_by_nan};
        let f = || super::tanh(super::div(1.0f64, 0.0)) * 0.0;
        replace(Calls::None, 0);
        let plain = f();
        for seed in 1..=64u64 {
            replace(Calls::Singular, seed);
            let v = f();
            replace(Calls::None, 0);
            assert_eq!(v, plain);
        }
        replace_by_nan(Calls::Singular);
        let v = f();
        replace(Calls::None, 0);
        assert!(plain == 0.0 && v.is_nan());
    }

    /// Each class of [`super::Calls`] selects its calls and no others.
    #[test]
    fn replacements_select_their_calls() {
        use super::{Calls, replace};
        let replaced = |calls: Calls, f: &dyn Fn() -> f64| {
            replace(Calls::None, 0);
            let plain = f();
            // Six draws: one of them differs from any given value.
            (1..=6u64).any(|seed| {
                replace(calls, seed);
                let v = f();
                replace(Calls::None, 0);
                !(v == plain || (v.is_nan() && plain.is_nan()))
            })
        };
        // Singular: a non-finite argument or result, or a singular point.
        assert!(replaced(Calls::Singular, &|| super::tanh(super::div(
            1.0, 0.0
        ))));
        assert!(replaced(Calls::Singular, &|| super::sqrt(0.0)));
        assert!(replaced(Calls::Singular, &|| super::asin(-1.0)));
        assert!(replaced(Calls::Singular, &|| super::powi(0.0, 0)));
        assert!(replaced(Calls::Singular, &|| super::atan2(1e200, 3e200)));
        assert!(!replaced(Calls::Singular, &|| super::atan2(1e100, 3e100)));
        assert!(!replaced(Calls::Singular, &|| super::sqrt(2.0)));
        assert!(!replaced(Calls::Singular, &|| super::powi(0.0, 2)));
        // Saturating: `tanh` only.
        assert!(replaced(Calls::Saturating, &|| super::tanh(0.3)));
        assert!(!replaced(Calls::Saturating, &|| super::atan(30.0)));
        // At least a size: math results and quotients, not exact functions.
        assert!(replaced(Calls::AtLeast(1e50), &|| super::cosh(123.456)));
        assert!(replaced(Calls::AtLeast(1e50), &|| super::div(1e60, 3.0)));
        assert!(!replaced(Calls::AtLeast(1e50), &|| super::cosh(12.0)));
        assert!(!replaced(Calls::AtLeast(1e50), &|| super::max(1e60, 3.0)));
    }
}
