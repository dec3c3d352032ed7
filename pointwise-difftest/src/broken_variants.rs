//! Each tightening of the checks (issue #20, item 4) against a
//! deliberately broken variant that the looser check let pass — a
//! derivative rule returning NaN, an AD constant wrong in the fourth
//! digit, wrong `f32` tangents, an O(1) error next to a large value, a
//! wrong Jacobian entry at a point other than the worst, a linearity claim
//! that does not hold — injected into the inputs of the comparison (the
//! native tangent, the OpenCL values, the Jacobian), natively: no device.
//! Each test also checks that the legitimate case the looser rule was made
//! for is still explained.

use crate::derivatives::tangents_compared;
use crate::differences::ad_versus_differences;
use crate::jacobians::{device_compared, native_versus_tangent};
use crate::linearity::claim_checked;
use crate::pt::{self, F, Unary};
use crate::residuals::residuals_compared;
use crate::runtime::{Body, widen};
use crate::tangents::native_tangents;
use femquad::Real;
use femquad::layout::jac_g0;
use femquad::opencl::probe::{Inputs, PointSizes};
use femquad::physics::{
    Direction, EvalPrecision, PointArgs, Pointwise, PointwiseError, PointwiseEval,
    PointwiseEvalBoth, PointwiseInfo,
};
use femquad::pointwise;
use femquad::rng::Rng;

/// The plain copy's signature (`runtime::Plain`).
type Result = std::result::Result<(), PointwiseError>;

/// `f0 = [2 sin u₀, 3 u₁]`: smooth, every tangent finite.
#[pointwise]
fn smooth(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0].sin() * 2.0;
    f0[1] = u[1] * 3.0;
}

fn smooth_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = pt::sin(a.u[0]) * R::from_f64(2.0);
    f0[1] = a.u[1] * R::from_f64(3.0);
    Ok(())
}

/// `f0 = [tanh(u₀/0) + u₀, u₁]`: a constant `±1` plus `u₀`, whose tangent
/// is NaN (`(1 − tanh²)·(u̇₀/0) = 0·∞`) where the function is smooth.
#[pointwise]
fn discarded(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = (u[0] / 0.0).tanh() + u[0];
    f0[1] = u[1];
}

fn discarded_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = pt::tanh(pt::div(a.u[0], R::ZERO)) + a.u[0];
    f0[1] = a.u[1];
    Ok(())
}

/// `f0 = [u₀ + 0·tanh(u₁/0), u₁]`: `u₀`, whose tangent is NaN
/// (`0·((1 − tanh²)·(u̇₁/0)) = 0·(0·∞)`): the non-finite intermediate's
/// value is masked by the zero factor, not its derivative.
#[pointwise]
fn masked(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0] + (u[1] / 0.0).tanh() * 0.0;
    f0[1] = u[1];
}

fn masked_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0] + pt::tanh(pt::div(a.u[1], R::ZERO)) * R::ZERO;
    f0[1] = a.u[1];
    Ok(())
}

/// `f0 = [tanh(3u₀), 3u₁]`: a saturating function on entry 0's path.
#[pointwise]
fn saturating(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = (u[0] * 3.0).tanh();
    f0[1] = u[1] * 3.0;
}

fn saturating_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = pt::tanh(a.u[0] * R::from_f64(3.0));
    f0[1] = a.u[1] * R::from_f64(3.0);
    Ok(())
}

/// `f0 = [tanh(u₀ + 30), 1000 u₁]`: entry 0 saturated (its tangent exactly
/// 0 natively, in both precisions) beside a large entry 1.
#[pointwise]
fn saturated(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = (u[0] + 30.0).tanh();
    f0[1] = u[1] * 1000.0;
}

fn saturated_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = pt::tanh(a.u[0] + R::from_f64(30.0));
    f0[1] = a.u[1] * R::from_f64(1000.0);
    Ok(())
}

/// `f0 = [1000 u₀, sin u₁]`: entry 1 small next to entry 0.
#[pointwise]
fn scaled(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0] * 1000.0;
    f0[1] = u[1].sin();
}

fn scaled_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0] * R::from_f64(1000.0);
    f0[1] = pt::sin(a.u[1]);
    Ok(())
}

/// `f0 = [3 u₀]`: linear.
#[pointwise]
fn linear(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = u[0] * 3.0;
}

fn linear_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0] * R::from_f64(3.0);
    Ok(())
}

/// `f0 = [u₀ + c − c, 2u₁]` with `c = cosh(123.456)`: entry 0 loses `u₀`
/// to the rounding of `c` (its differences are 0, AD gives `u̇₀`); entry 1
/// does not depend on `c`.
#[pointwise]
fn absorbing(u: &[f64; 2], f0: &mut [f64; 2]) {
    let c = f64::cosh(123.456);
    f0[0] = u[0] + c - c;
    f0[1] = u[1] * 2.0;
}

fn absorbing_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    let c = pt::cosh(R::from_f64(123.456));
    f0[0] = a.u[0] + c - c;
    f0[1] = a.u[1] * R::from_f64(2.0);
    Ok(())
}

/// `f0 = [w − tanh w]`, `w = 3·10¹⁰·(u₀ % 10⁻¹⁰)`: moderate at the point,
/// but moving by `3·10⁷·u̇₀` over the default stencils (the quotient of `%`
/// frozen), where `tanh` saturates; as program 504 of seed 20261123 (`w`
/// there `1.5 % y` with `y ≈ 4·10⁻⁹`, a slope of `4·10⁸`).
#[pointwise]
fn steep(u: &[f64; 1], f0: &mut [f64; 1]) {
    let w = (u[0] % 1e-10) * 3e10;
    f0[0] = w - w.tanh();
}

fn steep_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    let w = pt::rem(a.u[0], R::from_f64(1e-10)) * R::from_f64(3e10);
    f0[0] = w - pt::tanh(w);
    Ok(())
}

/// `f0 = [u₀, √(u₁ − 2)]`: entry 1 is NaN at every point (`u₁ < 1`).
#[pointwise]
fn half_nan(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0];
    f0[1] = (u[1] - 2.0).sqrt();
}

fn half_nan_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0];
    f0[1] = pt::sqrt(a.u[1] - R::from_f64(2.0));
    Ok(())
}

/// `f0 = [2u₀, ⌈√(u₁ − 0.5)⌉]`: `ceil` is given a NaN where `u₁ < 0.5`
/// (which PoCL may fold to anything).
#[pointwise]
fn folding(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0] * 2.0;
    f0[1] = (u[1] - 0.5).sqrt().ceil();
}

fn folding_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0] * R::from_f64(2.0);
    f0[1] = pt::ceil(pt::sqrt(a.u[1] - R::from_f64(0.5)));
    Ok(())
}

/// `f0 = [3u₀ + u₁, u₁ − u₀/2]`: no math function (the reach of the math
/// libraries is 0).
#[pointwise]
fn arithmetic(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = u[0] * 3.0 + u[1];
    f0[1] = u[1] - u[0] * 0.5;
}

fn arithmetic_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0] * R::from_f64(3.0) + a.u[1];
    f0[1] = a.u[1] - a.u[0] * R::from_f64(0.5);
    Ok(())
}

/// `f0 = [u₀²]`: not linear.
#[pointwise]
fn square(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = u[0] * u[0];
}

fn square_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    f0: &mut [R],
    _: &mut [R],
) -> Result {
    f0[0] = a.u[0] * a.u[0];
    Ok(())
}

/// The first body of issue #19: piecewise linear, its Jacobian depends on
/// `u` through the index.
#[pointwise]
fn index_write<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0][((u[0].abs() * 2.0) as usize) % 2] = grad_u[0][0];
}

fn index_write_plain<R: Real + F + Unary>(
    _: usize,
    a: &PointArgs<'_, R>,
    _: &mut [R],
    f1: &mut [R],
) -> Result {
    f1.iter_mut().for_each(|x| *x = R::ZERO);
    f1[pt::int_usize((pt::abs(a.u[0]) * R::from_f64(2.0)).to_f64() as usize) % 2] = a.grad_u[0];
    Ok(())
}

/// A physics that claims to be linear (`info().linear`), whatever the
/// macro proved, and is otherwise `inner`.
struct ClaimsLinear {
    inner: &'static dyn PointwiseEvalBoth,
    info: &'static PointwiseInfo,
}

impl ClaimsLinear {
    fn new(inner: &'static dyn PointwiseEvalBoth) -> &'static ClaimsLinear {
        let info = Box::leak(Box::new(PointwiseInfo {
            linear: true,
            ..*inner.info()
        }));
        Box::leak(Box::new(ClaimsLinear { inner, info }))
    }
}

impl Pointwise for ClaimsLinear {
    fn info(&self) -> &'static PointwiseInfo {
        self.info
    }
    fn opencl_source(&self) -> &'static str {
        self.inner.opencl_source()
    }
    fn source_hash(&self) -> u64 {
        self.inner.source_hash()
    }
}

impl PointwiseEval<f64> for ClaimsLinear {
    fn eval(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        f0: &mut [f64],
        f1: &mut [f64],
    ) -> Result {
        f64::physics(self.inner).eval(dim, args, f0, f1)
    }
    fn eval_jacobian(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        g0: &mut [f64],
        g1: &mut [f64],
        g2: &mut [f64],
        g3: &mut [f64],
    ) -> Result {
        f64::physics(self.inner).eval_jacobian(dim, args, g0, g1, g2, g3)
    }
}

impl PointwiseEval<f32> for ClaimsLinear {
    fn eval(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        f0: &mut [f32],
        f1: &mut [f32],
    ) -> Result {
        f32::physics(self.inner).eval(dim, args, f0, f1)
    }
}

/// `inner` with a broken derivative rule: its native tangents (both
/// precisions) passed through `corrupt` (on `df0`), consistently — the
/// rounding-noise estimates recompute them.
struct Corrupted {
    inner: &'static dyn PointwiseEvalBoth,
    corrupt: fn(&mut [f64]),
}

impl Corrupted {
    fn new(inner: &'static dyn PointwiseEvalBoth, corrupt: fn(&mut [f64])) -> &'static Corrupted {
        Box::leak(Box::new(Corrupted { inner, corrupt }))
    }
}

impl Pointwise for Corrupted {
    fn info(&self) -> &'static PointwiseInfo {
        self.inner.info()
    }
    fn opencl_source(&self) -> &'static str {
        self.inner.opencl_source()
    }
    fn source_hash(&self) -> u64 {
        self.inner.source_hash()
    }
}

impl PointwiseEval<f64> for Corrupted {
    fn eval(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        f0: &mut [f64],
        f1: &mut [f64],
    ) -> Result {
        f64::physics(self.inner).eval(dim, args, f0, f1)
    }
    fn eval_tangent(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        dir: &Direction<'_, f64>,
        df0: &mut [f64],
        df1: &mut [f64],
    ) -> Result {
        f64::physics(self.inner).eval_tangent(dim, args, dir, df0, df1)?;
        (self.corrupt)(df0);
        Ok(())
    }
    fn eval_jacobian(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        g0: &mut [f64],
        g1: &mut [f64],
        g2: &mut [f64],
        g3: &mut [f64],
    ) -> Result {
        f64::physics(self.inner).eval_jacobian(dim, args, g0, g1, g2, g3)
    }
}

impl PointwiseEval<f32> for Corrupted {
    fn eval(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        f0: &mut [f32],
        f1: &mut [f32],
    ) -> Result {
        f32::physics(self.inner).eval(dim, args, f0, f1)
    }
    fn eval_tangent(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        dir: &Direction<'_, f32>,
        df0: &mut [f32],
        df1: &mut [f32],
    ) -> Result {
        f32::physics(self.inner).eval_tangent(dim, args, dir, df0, df1)?;
        let mut wide: Vec<f64> = df0.iter().map(|x| *x as f64).collect();
        (self.corrupt)(&mut wide);
        df0.iter_mut().zip(wide).for_each(|(x, w)| *x = w as f32);
        Ok(())
    }
}

/// A program of the given physics and plain copy (`id` keys the runtime's
/// per-program state, such as whether its `f64` tangents agreed).
macro_rules! body {
    ($id:expr, $physics:expr, $plain:ident) => {
        Body {
            id: $id,
            points: 0,
            physics: $physics,
            plain_f64: $plain::<f64>,
            plain_f32: $plain::<f32>,
        }
    };
}

/// Random inputs of `physics` in 2D with a direction, `points` points.
fn inputs(physics: &dyn Pointwise, points: usize, seed: u64) -> Inputs<f64> {
    let mut rng = Rng::stream(seed, 1);
    Inputs::<f64>::random(PointSizes::of(physics, 2), points, &mut rng, -1.0, 1.0)
        .with_direction(&mut rng, -1.0, 1.0)
}

fn verdict(line: &str) -> &str {
    line.split(' ').next().unwrap_or("")
}

/// `ad-nonfinite` was never a finding: a derivative rule returning NaN
/// passed. Now it needs a non-finite or singular intermediate on the
/// entry's path.
#[test]
fn a_nan_tangent_without_a_singular_intermediate_is_an_ad_mismatch() {
    let b = body!(1, &Smooth, smooth_plain);
    let i = inputs(&Smooth, 8, 1);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &native);
    assert_eq!(verdict(&line), "ad-ok", "{line}");
    let b = body!(
        1,
        Corrupted::new(&Smooth, |d| d[0] = f64::NAN),
        smooth_plain
    );
    let broken = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &broken);
    assert_eq!(verdict(&line), "ad-mismatch", "{line}");
    assert!(
        line.contains("no non-finite or singular intermediate"),
        "{line}"
    );
    // `tanh(u₀/0)`: NaN for a reason, listed.
    let b = body!(2, &Discarded, discarded_plain);
    let i = inputs(&Discarded, 8, 2);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    assert!(native.f0[0].is_nan());
    let line = ad_versus_differences(&b, &i, &native);
    assert_eq!(verdict(&line), "ad-nonfinite", "{line}");
}

/// A non-finite intermediate whose value an exact zero masks lies on the
/// entry's path (programs 856 and 1248 of seed 20261123: `0 % (−3/0)`,
/// `0 / (x/0)`): replaced by any finite value the entry does not change,
/// replaced by NaN it does. Its NaN tangent is `ad-nonfinite` and
/// `[nonfinite]`, not a derivative rule returning NaN.
#[test]
fn a_non_finite_intermediate_masked_by_a_zero_lies_on_the_path() {
    let b = body!(21, &Masked, masked_plain);
    let i = inputs(&Masked, 8, 16);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    assert!(native.f0.iter().step_by(2).all(|t| t.is_nan()));
    let line = ad_versus_differences(&b, &i, &native);
    assert_eq!(verdict(&line), "ad-nonfinite", "{line}");
    let line = tangents_compared(&b, &i, &native, &native, 16);
    assert!(
        line.starts_with("ulp") && line.contains("[nonfinite]"),
        "{line}"
    );
    let line = native_versus_tangent(&b, &i, &native);
    assert_eq!(verdict(&line), "jacobian-ok", "{line}");
}

/// NaN against NaN counted as agreement: a derivative rule returning NaN
/// on both sides passed the tangent check.
#[test]
fn tangents_nan_on_both_sides_agree_only_for_a_reason() {
    for (id, f32_too) in [(3, false), (4, true)] {
        let b = body!(
            id,
            Corrupted::new(&Smooth, |d| d[1] = f64::NAN),
            smooth_plain
        );
        let i = inputs(&Smooth, 8, 3);
        let line = if f32_too {
            let i: Inputs<f32> = i.convert();
            let broken = native_tangents::<f32>(&b, &i).unwrap();
            tangents_compared(&b, &i, &broken, &broken, 3)
        } else {
            let broken = native_tangents::<f64>(&b, &i).unwrap();
            tangents_compared(&b, &i, &broken, &broken, 3)
        };
        assert_eq!(verdict(&line), "disagree", "{line}");
        assert!(
            line.contains("a derivative rule returns a non-finite value"),
            "{line}"
        );
    }
    let b = body!(5, &Discarded, discarded_plain);
    let i = inputs(&Discarded, 8, 4);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = tangents_compared(&b, &i, &native, &native, 4);
    assert_eq!(verdict(&line), "ulp", "{line}");
    assert!(line.contains("[nonfinite]"), "{line}");
}

/// `f32-amplified` excused any `f32` tangent difference of any size in a
/// program that calls an inexact function and whose `f64` tangents agree.
#[test]
fn f32_amplified_is_capped_and_needs_a_saturating_function_on_the_path() {
    // (`f32` OpenCL tangent, relative error at entry 0, whether explained)
    let cases: [(usize, &'static dyn PointwiseEvalBoth, bool, f32, bool); 3] = [
        // sin: no saturating function; a wrong f32 tangent of 1e-3
        (6, &Smooth, false, 1e-3, false),
        // tanh, but 5e-2 relative
        (7, &Saturating, true, 5e-2, false),
        // tanh, 5e-3 relative: what f32-amplified is for
        (8, &Saturating, true, 5e-3, true),
    ];
    for (id, physics, tanh, error, explained) in cases {
        let b = if tanh {
            body!(id, physics, saturating_plain)
        } else {
            body!(id, physics, smooth_plain)
        };
        let i = inputs(physics, 8, 5);
        // The f64 tangents agree (checked first, as the runtime does).
        let n64 = native_tangents::<f64>(&b, &i).unwrap();
        let line = tangents_compared(&b, &i, &n64, &n64, 5);
        assert_eq!(verdict(&line), "agree", "{line}");
        let i: Inputs<f32> = i.convert();
        let native = native_tangents::<f32>(&b, &i).unwrap();
        let mut device = native.clone();
        device.f0[0] *= 1.0 + error;
        let line = tangents_compared(&b, &i, &device, &native, 5);
        if explained {
            assert!(
                line.starts_with("ulp") && line.contains("[f32-amplified]"),
                "{line}"
            );
        } else {
            assert_eq!(verdict(&line), "disagree", "{line}");
        }
    }
}

/// An `f32` tangent entry exactly 0 natively was a `tangent-disagree`
/// whatever its cause: a saturating function at its limit natively (its
/// derivative exactly 0) and an ulp short of it on the device (PoCL's
/// `tanh`, programs 3158, 3444, 3819, 3925, 4292, 4729 of seed 20261123).
/// It is `f32-saturated` now, but only with a saturating function on the
/// entry's path and the `f64` tangents agreeing.
#[test]
fn f32_saturated_needs_a_saturating_function_and_agreeing_f64() {
    // (program, physics, saturating, f64 agrees, explained)
    let cases: [(usize, &'static dyn PointwiseEvalBoth, bool, bool, bool); 3] = [
        (22, &Saturated, true, true, true),
        // the f64 tangents disagree
        (23, &Saturated, true, false, false),
        // entry 1 of `scaled` is sin(u₁), 0 where du₁ = 0: no saturating
        // function on its path
        (24, &Scaled, false, true, false),
    ];
    for (id, physics, saturating, agrees64, explained) in cases {
        let b = if saturating {
            body!(id, physics, saturated_plain)
        } else {
            body!(id, physics, scaled_plain)
        };
        let mut i = inputs(physics, 8, 7);
        if !saturating {
            i.du[1] = 0.0;
        }
        let n64 = native_tangents::<f64>(&b, &i).unwrap();
        let mut d64 = n64.clone();
        if !agrees64 {
            d64.f0[1] *= 1.0 + 1e-6;
        }
        let line = tangents_compared(&b, &i, &d64, &n64, 7);
        assert_eq!(verdict(&line) == "agree", agrees64, "{line}");
        let (zero, large) = if saturating { (0, 1) } else { (1, 0) };
        let i: Inputs<f32> = i.convert();
        let native = native_tangents::<f32>(&b, &i).unwrap();
        assert_eq!(native.f0[zero], 0.0, "entry {zero} is exactly 0 natively");
        let mut device = native.clone();
        device.f0[zero] = native.f0[large];
        let line = tangents_compared(&b, &i, &device, &native, 7);
        if explained {
            assert!(
                line.starts_with("ulp") && line.contains("[f32-saturated]"),
                "{line}"
            );
        } else {
            assert_eq!(verdict(&line), "disagree", "{line}");
        }
    }
}

/// `point-scale` let any `f32` entry miss by 64 ulps (1.5e-5) of the
/// point's largest entry.
#[test]
fn point_scale_is_for_f64_only() {
    let b = body!(9, &Scaled, scaled_plain);
    let mut i = inputs(&Scaled, 4, 6);
    i.du[0] = 1.0;
    // f64: beyond the reach, within 64 ulps of the largest entry (1000),
    // as a derivative formula that cancels rounds.
    let n64 = native_tangents::<f64>(&b, &i).unwrap();
    let mut device = n64.clone();
    device.f0[1] += 2e-11;
    let line = tangents_compared(&b, &i, &device, &n64, 6);
    assert!(
        line.starts_with("ulp") && line.contains("[point-scale]"),
        "{line}"
    );
    // f32: entry 1 wrong by 1e-3, within 64 ulps of entry 0 (1000).
    let i: Inputs<f32> = i.convert();
    let native = native_tangents::<f32>(&b, &i).unwrap();
    let mut device = native.clone();
    device.f0[1] += 1e-3;
    let line = tangents_compared(&b, &i, &device, &native, 6);
    assert_eq!(verdict(&line), "disagree", "{line}");
}

/// `fine-step` tried steps down to 2.5e-14 with an error bound of up to
/// 1e-3·|r|: an AD constant wrong in the fourth digit passed at one of them.
#[test]
fn fine_steps_must_be_accurate_to_a_millionth() {
    let b = body!(10, &Linear, linear_plain);
    let mut i = inputs(&Linear, 1, 7);
    i.u[0] = 0.1;
    i.du[0] = 1.0;
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &native);
    assert_eq!(verdict(&line), "ad-ok", "{line}");
    // 3.0006 for 3.
    let b = body!(
        10,
        Corrupted::new(&Linear, |d| d[0] *= 1.0 + 2e-4),
        linear_plain
    );
    let broken = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &broken);
    assert_eq!(verdict(&line), "ad-mismatch", "{line}");
}

/// A steep inner function driving a saturating one (program 504 of seed
/// 20261123): the default differences, `w′ − (tanh w(u+h) − tanh w(u−h))/2h`
/// with `tanh` saturated, agree among themselves and miss AD's
/// `w′ tanh²w` by `w′(1 − tanh²w)`; finer steps resolve `tanh` and
/// converge to AD, but only where they are exact: `u₀ + t` with `t` not a
/// power of two errs by up to half an ulp of `u₀`, `ulp/(2t)` of the step
/// (`5·10⁻⁶` at `t = 10⁻¹¹`, where `w` has only just stopped saturating).
/// A derivative wrong by 10⁻⁴ is still a mismatch.
#[test]
fn finer_exact_steps_resolve_a_steep_inner_function() {
    let b = body!(13, &Steep, steep_plain);
    let mut i = inputs(&Steep, 1, 10);
    // A direction whose steps `t·u̇₀` are not multiples of `ulp(u₀)`.
    (i.u[0], i.du[0]) = (0.9 + 6.5e-11, 0.618_033_988_749_894_9);
    // The case: `tanh` far from saturated at the point, so AD and the
    // default differences differ by more than 10⁻³ relative.
    let w = (i.u[0] % 1e-10) * 3e10;
    let unsaturated = 1.0 - w.tanh().powi(2);
    assert!((1e-3..0.5).contains(&unsaturated), "w = {w}");
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &native);
    assert!(
        line.starts_with("ad-explained") && line.contains("[fine-step]"),
        "{line}"
    );
    // 1.0001 times the derivative.
    let b = body!(
        13,
        Corrupted::new(&Steep, |d| d[0] *= 1.0 + 1e-4),
        steep_plain
    );
    let broken = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &broken);
    assert_eq!(verdict(&line), "ad-mismatch", "{line}");
}

/// `absorbed` took the largest math result anywhere at the point: one
/// `cosh(123.456)` excused an O(1) error in an unrelated output.
#[test]
fn absorbed_needs_the_large_value_on_the_entry_s_path() {
    let b = body!(11, &Absorbing, absorbing_plain);
    let i = inputs(&Absorbing, 4, 8);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &native);
    assert!(
        line.starts_with("ad-explained") && line.contains("[absorbed]"),
        "{line}"
    );
    // Entry 1 (2u̇₁) wrong by half.
    let b = body!(
        11,
        Corrupted::new(&Absorbing, |d| d[1] *= 1.5),
        absorbing_plain
    );
    let broken = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &broken);
    assert_eq!(verdict(&line), "ad-mismatch", "{line}");
}

/// `ad-ok` could pass with no entry compared.
#[test]
fn ad_ok_needs_nine_tenths_of_the_entries_compared() {
    let b = body!(12, &HalfNan, half_nan_plain);
    let i = inputs(&HalfNan, 8, 9);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = ad_versus_differences(&b, &i, &native);
    assert_eq!(verdict(&line), "ad-partial", "{line}");
    assert!(line.contains("8 of 16 entries compared"), "{line}");
}

/// The device-Jacobian check classified its worst point only: an
/// explained NaN fold there hid a wrong entry at another point.
#[test]
fn every_point_of_a_device_jacobian_is_classified() {
    let b = body!(13, &Folding, folding_plain);
    let mut i = inputs(&Folding, 2, 10);
    // `ceil` of a NaN at point 0 only.
    i.u[1] = 0.0;
    i.u[3] = 0.9;
    let n = i.sizes.jacobians();
    let native: Vec<[Vec<f64>; 4]> = (0..2)
        .map(|p| {
            let mut g = n.map(|k| vec![0.0; k]);
            let [g0, g1, g2, g3] = &mut g;
            Folding
                .eval_jacobian(2, &i.point(p), g0, g1, g2, g3)
                .unwrap();
            g
        })
        .collect();
    let t = widen(&native_tangents::<f64>(&b, &i).unwrap());
    let nc = i.sizes.n_comp;
    let g = |p: usize| native[p].clone();
    assert_eq!(
        verdict(&device_compared(&b, &i, &g, &t)),
        "jacobian-device-ok"
    );
    // Point 0: an infinite entry where the plain copy folds a NaN (explained).
    let folded = |p: usize| {
        let mut g = native[p].clone();
        if p == 0 {
            g[0][jac_g0(0, 0, nc)] = f64::INFINITY;
        }
        g
    };
    let line = device_compared(&b, &i, &folded, &t);
    assert!(
        line.starts_with("jacobian-device-explained") && line.contains("[nan-fold]"),
        "{line}"
    );
    // And point 1 wrong by a part in a million: not explained.
    let broken = |p: usize| {
        let mut g = folded(p);
        if p == 1 {
            g[0][jac_g0(0, 0, nc)] *= 1.0 + 1e-6;
        }
        g
    };
    let line = device_compared(&b, &i, &broken, &t);
    assert_eq!(verdict(&line), "jacobian-device-mismatch", "{line}");
    assert!(line.contains("point 1"), "{line}");
}

/// The per-entry `f32` tolerance was 1e-4 (about 800 ulps): a body without
/// math functions could differ by 100 ulps unnoticed.
#[test]
fn f32_entries_agree_to_a_millionth_without_math_functions() {
    let b = body!(14, &Arithmetic, arithmetic_plain);
    let i: Inputs<f32> = inputs(&Arithmetic, 8, 11).convert();
    let native =
        crate::runtime::evaluate::<f32>(&|d, a, f0, f1| Arithmetic.eval(d, a, f0, f1), &i).unwrap();
    assert_eq!(
        verdict(&residuals_compared(&b, &i, &native, &native, 11)),
        "agree"
    );
    let mut device = native.clone();
    device.f0[0] *= 1.0 + 1e-5;
    let line = residuals_compared(&b, &i, &device, &native, 11);
    assert_eq!(verdict(&line), "disagree", "{line}");
}

/// The Jacobian check skipped every output array with a non-finite
/// tangent entry.
#[test]
fn a_non_finite_tangent_against_a_finite_jacobian_is_a_mismatch() {
    let b = body!(15, &Smooth, smooth_plain);
    let i = inputs(&Smooth, 4, 12);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = native_versus_tangent(&b, &i, &native);
    assert_eq!(verdict(&line), "jacobian-ok", "{line}");
    let b = body!(
        15,
        Corrupted::new(&Smooth, |d| d[0] = f64::NAN),
        smooth_plain
    );
    let broken = native_tangents::<f64>(&b, &i).unwrap();
    let line = native_versus_tangent(&b, &i, &broken);
    assert_eq!(verdict(&line), "jacobian-mismatch", "{line}");
    // NaN in both J·v and the tangent (`tanh(u₀/0)`): compared, counted.
    let b = body!(16, &Discarded, discarded_plain);
    let i = inputs(&Discarded, 4, 13);
    let native = native_tangents::<f64>(&b, &i).unwrap();
    let line = native_versus_tangent(&b, &i, &native);
    assert_eq!(verdict(&line), "jacobian-ok", "{line}");
    assert!(line.contains("4 entries not finite in both"), "{line}");
}

/// A claim of linearity is checked: the Jacobian may not depend on `u`.
#[test]
fn a_linearity_claim_that_does_not_hold_is_a_finding() {
    let b = body!(17, &Linear, linear_plain);
    let i = inputs(&Linear, 8, 14);
    assert!(Linear.info().linear);
    let line = claim_checked(&b, &i).expect("claimed");
    assert_eq!(verdict(&line), "linear-ok", "{line}");
    // Not claimed: not checked.
    let b = body!(18, &Square, square_plain);
    assert!(claim_checked(&b, &inputs(&Square, 8, 14)).is_none());
    // A false claim.
    let b = body!(19, ClaimsLinear::new(&Square), square_plain);
    let line = claim_checked(&b, &inputs(&Square, 8, 14)).expect("claimed");
    assert_eq!(verdict(&line), "linear-mismatch", "{line}");
    // Issue #19's body: if the macro claims it linear (it did), the check
    // finds that its Jacobian depends on `u`.
    let b = body!(20, &IndexWrite, index_write_plain);
    let i = inputs(&IndexWrite, 16, 15);
    if let Some(line) = claim_checked(&b, &i) {
        assert_eq!(verdict(&line), "linear-mismatch", "{line}");
    }
}
