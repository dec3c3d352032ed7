//! The comparison of one OpenCL output entry `o` with its native value `n`
//! (this file is also copied into the generated crates).
//!
//! **Relative measure.** `rel(o, n) = |o − n| / |n|`, with `rel = 0` when
//! `o` and `n` are equal (bitwise, or both NaN, or the same infinity) and
//! `rel = ∞` when exactly one is NaN or `n = 0 ≠ o`. An entry *agrees* when
//! `rel ≤ τ`, `τ = 1e-12` in `f64` and `1e-6` in `f32`.
//!
//! **Cancellation guard.** A relative measure is meaningless where the
//! result is the small difference of large terms: there a few ulps of a
//! math function (which Rust's libm and OpenCL's library compute
//! differently, within bounds) become a large relative change. So an entry
//! beyond `τ` is attributed to the math libraries when
//! `|o − n| ≤ 2·R + τ·|n|`, where `R` is the *reach* of the math libraries
//! at that point ([`reach`]): the largest finite `|p − n|` over 24
//! evaluations `p` of the plain copy of the body with every math-function
//! result (and every `f32` division and square root) moved by a random
//! number of ulps within OpenCL's bound for it plus one (`runtime::pt`). Otherwise the entry is a
//! *disagreement*: a translation error. Bodies without math functions have
//! `R = 0` (IEEE arithmetic is exact and identical on both sides, nothing
//! is contracted), so any difference beyond `τ` there is a disagreement.

//!
//! **Kinds.** Every explained difference is tagged with why (`[kind]`
//! first in its detail; the campaign counts them):
//!
//! - `rounding`: within the reach of perturbations that keep the
//!   decisions of the unperturbed plain copy (`crate::freeze`): a few ulps
//!   amplified along the branch both sides took (cancellation, a steep
//!   function, `asin` near 1);
//! - `decision`: within the reach only when perturbations may change
//!   decisions: a comparison, a cast to an integer, an index or `floor`
//!   that lands on the other side after a few ulps (an O(1) difference);
//! - `finite-flip`: finite on one side, ±∞ or NaN on the other (or ∞
//!   against NaN), within the reach (an overflow or a domain edge moved by
//!   a few ulps; a NaN output has no relative tolerance);
//! - `nan-fold`: the entry changes when every math function given a NaN
//!   returns an arbitrary number instead (`pt::Calls::NanArgument`): PoCL compiles
//!   its built-ins assuming no NaN, so where its compiler knows an argument
//!   is NaN (`x / x` of a propagated zero) `ceil`, `floor`, `tanh`, … fold
//!   to an arbitrary value (LLVM's poison), against C99 and OpenCL C; for
//!   a tangent, the poisoned differences change, or (`f32`) the native
//!   tangent is not finite, OpenCL's is, the plain copy gives a math
//!   function a NaN at that point and the `f64` tangents agree;
//! - tangents also (`derivatives`): `point-scale` (within 64 ulps of the
//!   largest tangent entry at the point: a derivative formula that
//!   cancels where the function does not), `tangent-noise` (within the
//!   change of the native tangent when the inputs move by a few ulps and
//!   the direction is scaled), `f32-precision` (`f32`, within
//!   `derivatives::F32_BOUND` times the native `f32` tangent's distance
//!   from the `f64` one), `f32-amplified` (`f32`, beyond every reach,
//!   but the `f64` tangents agree) and `f32-saturated` (`f32`, an entry
//!   exactly 0 natively with a saturating function on its path, the `f64`
//!   tangents agreeing); Jacobians applied to the direction
//!   (`jacobians`): `tangent-noise` and `nan-fold`; AD against differences
//!   (`derivatives`): `tangent-noise`.

use femquad::Precision;
use femquad::opencl::probe::Outputs;

/// `τ`: 1e-12 in `f64`, 1e-6 in `f32` (8 ulps: beyond, the reach of the
/// math libraries must explain a difference).
pub fn tolerance(p: Precision) -> f64 {
    match p {
        Precision::F64 => 1e-12,
        Precision::F32 => 1e-6,
    }
}

/// Equal bitwise, both NaN, or the same infinity.
pub fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// `|a − b|`: 0 when [`same`], ∞ when exactly one is NaN.
pub fn distance(a: f64, b: f64) -> f64 {
    if same(a, b) {
        0.0
    } else if a.is_nan() || b.is_nan() {
        f64::INFINITY
    } else {
        (a - b).abs()
    }
}

/// `rel(o, n)` (see the module documentation).
pub fn relative(o: f64, n: f64) -> f64 {
    if same(o, n) {
        return 0.0;
    }
    let d = distance(o, n);
    if n == 0.0 || !d.is_finite() {
        f64::INFINITY
    } else {
        d / n.abs()
    }
}

/// The reach of the math libraries at an entry with native value `n` and
/// OpenCL value `o`, from the perturbed evaluations `trials`: the largest
/// finite `|p − n|`. A trial that gives NaN or ±∞ (a perturbed argument
/// left a function's domain) counts only when `o` is itself NaN or
/// infinite: then the reach is ∞, otherwise that trial is ignored. Where
/// `n` is NaN or ±∞ and a trial is finite (`acos` of a `tanh` that is 1
/// natively, below 1 perturbed, then a division by it), the reach is ∞ too.
pub fn reach(o: f64, n: f64, trials: impl Iterator<Item = f64>) -> f64 {
    let mut r: f64 = 0.0;
    for p in trials {
        let d = distance(p, n);
        if d.is_finite() {
            r = r.max(d);
        } else if (!o.is_finite() && !p.is_finite()) || (!n.is_finite() && p.is_finite()) {
            r = f64::INFINITY;
        }
    }
    r
}

thread_local! {
    /// The (program, dimension, precision) whose value is finite on one
    /// side and not on the other at some point, within the reach of the
    /// math libraries (see [`note_finiteness_flip`]).
    static FLIPS: std::cell::RefCell<Vec<(usize, usize, femquad::Precision)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Notes that the residual of program `id` is finite on one side (native
/// or OpenCL) and not on the other, explained by the math libraries (`acos`
/// of a `tanh` that is 1 in Rust and 1 − 2⁻²⁴ in OpenCL, then a division
/// by it). Its tangents then differ the same way, beyond what perturbing
/// the plain copy can show: see [`finiteness_flipped`].
pub fn note_finiteness_flip(id: usize, dim: usize, prec: femquad::Precision) {
    FLIPS.with(|f| f.borrow_mut().push((id, dim, prec)));
}

/// Whether [`note_finiteness_flip`] was called for these.
pub fn finiteness_flipped(id: usize, dim: usize, prec: femquad::Precision) -> bool {
    FLIPS.with(|f| f.borrow().contains(&(id, dim, prec)))
}

/// The first entry where two native evaluations are not [`same`], if any.
pub fn first_mismatch<R: femquad::Real>(a: &Outputs<R>, b: &Outputs<R>) -> Option<String> {
    for (k, (x, y)) in [(&a.f0, &b.f0), (&a.f1, &b.f1)].into_iter().enumerate() {
        for (i, (p, q)) in x.iter().zip(y.iter()).enumerate() {
            let (p, q) = (p.to_f64(), q.to_f64());
            if !same(p, q) {
                return Some(format!("f{k} entry {i}: {p:e} vs {q:e}"));
            }
        }
    }
    None
}

/// The verdict on a program in one dimension and precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Agree,
    /// Within the reach of the math libraries.
    Ulp,
    Disagree,
}

/// The worst entry seen so far.
#[derive(Debug, Default)]
pub struct Worst {
    verdict: Option<Verdict>,
    rel: f64,
    detail: String,
}

impl Worst {
    /// Whether every entry so far agrees.
    pub fn agrees(&self) -> bool {
        self.verdict.is_none_or(|v| v == Verdict::Agree)
    }

    /// An entry that agrees, with relative difference `rel`.
    pub fn agree(&mut self, rel: f64) {
        if self.verdict.is_none_or(|v| v == Verdict::Agree) {
            self.verdict = Some(Verdict::Agree);
            self.rel = self.rel.max(rel);
        }
    }

    /// An entry beyond the tolerance: `dist = |o − n|`, `reach` of the
    /// math libraries, `tol_abs = τ·|n|`.
    pub fn differ(&mut self, rel: f64, dist: f64, reach: f64, tol_abs: f64, what: String) {
        // (`τ·|n|` is NaN where `n` is.)
        let tol_abs = if tol_abs.is_nan() { 0.0 } else { tol_abs };
        if dist <= 2.0 * reach + tol_abs {
            self.explained(rel, what);
        } else {
            self.unexplained(rel, what);
        }
    }

    /// An entry beyond the tolerance, explained (`what` says why).
    pub fn explained(&mut self, rel: f64, what: String) {
        self.note(Verdict::Ulp, rel, what);
    }

    /// An entry that nothing explains: a disagreement.
    pub fn unexplained(&mut self, rel: f64, what: String) {
        self.note(Verdict::Disagree, rel, what);
    }

    fn note(&mut self, v: Verdict, rel: f64, what: String) {
        let worse = match self.verdict {
            None | Some(Verdict::Agree) => true,
            Some(w) => v > w || (v == w && rel > self.rel),
        };
        if worse {
            self.verdict = Some(v);
            self.rel = rel;
            self.detail = what;
        }
    }

    /// `<verdict> <worst relative difference> <detail>`.
    pub fn line(&self) -> String {
        let v = match self.verdict.unwrap_or(Verdict::Agree) {
            Verdict::Agree => "agree",
            Verdict::Ulp => "ulp",
            Verdict::Disagree => "disagree",
        };
        format!("{v} {:e} {}", self.rel, self.detail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_measure() {
        assert_eq!(relative(1.0, 1.0), 0.0);
        assert_eq!(relative(f64::NAN, f64::NAN), 0.0);
        assert_eq!(relative(f64::INFINITY, f64::INFINITY), 0.0);
        assert_eq!(relative(1.0, f64::NAN), f64::INFINITY);
        assert_eq!(relative(1e-300, 0.0), f64::INFINITY);
        assert!((relative(1.000001, 1.0) - 1e-6).abs() < 1e-15);
        assert_eq!(distance(f64::NAN, 2.0), f64::INFINITY);
        // non-finite trials count only for a non-finite OpenCL value
        let trials = [1.5, f64::NAN, 0.5];
        assert_eq!(reach(1.2, 1.0, trials.into_iter()), 0.5);
        assert_eq!(reach(f64::NAN, 1.0, trials.into_iter()), f64::INFINITY);
        // a native NaN that perturbations make finite
        assert_eq!(
            reach(0.5, f64::NAN, [f64::NAN, 0.7].into_iter()),
            f64::INFINITY
        );
        assert_eq!(reach(0.5, f64::NAN, [f64::NAN].into_iter()), 0.0);
    }

    #[test]
    fn differences_within_the_reach_of_the_math_libraries_are_ulp() {
        let mut w = Worst::default();
        w.agree(1e-13);
        assert!(w.line().starts_with("agree"));
        w.differ(1e-3, 1e-3, 1e-3, 1e-12, "a".into());
        assert!(w.line().starts_with("ulp"), "{}", w.line());
        w.differ(1e-6, 1e-6, 0.0, 1e-12, "b".into());
        assert!(w.line().starts_with("disagree"), "{}", w.line());
        assert!(w.line().ends_with(" b"));
    }
}
