//! The derivative checks of the runtime (copied into the generated crates
//! with it), for every program, dimension and precision, at the residual's
//! points along a random direction:
//!
//! - **native versus OpenCL tangents** (`tangent-agree`, `tangent-ulp`,
//!   `tangent-disagree`): the measure of `verdict`, the reach of the math
//!   libraries estimated as the largest change of a central difference of
//!   the plain copy over the perturbation trials, the math results at the
//!   two points of the stencil perturbed independently (a derivative
//!   formula such as `tanh′ = 1 − tanh²` turns one ulp of its function's
//!   value into a change of the tangent that only independent
//!   perturbations show: Rust's `f32` `tanh` saturates to 1 where OpenCL's
//!   gives 1 − 2⁻²⁴); in `f32`, at least [`F32_BOUND`] times the distance
//!   of the native `f32` tangent from the native `f64` one (a derivative
//!   formula that cancels, `1 − tanh²` near saturation, amplifies the
//!   rounding of `f32` in both libraries alike, which a difference with a
//!   step of 10⁻² cannot see where the function varies faster). Beyond
//!   that reach, an `f32` difference of at most [`F32_AMPLIFIED`] relative
//!   is still attributed to the math libraries (`f32-amplified`) when a
//!   saturating function lies on the entry's path (`pt::Calls::Saturating`)
//!   and the program's `f64` tangents agree, native and OpenCL: the
//!   tangent's own math calls (`1 − tanh²` from OpenCL's `tanh` of
//!   1 − 2⁻²⁴ where Rust's gives 1) cannot be perturbed from here, and a
//!   translation fault would show in `f64`, printed from the same program.
//!   On the same two conditions, an entry exactly 0 natively differs by
//!   any amount (`f32-saturated`): there the saturating function reached
//!   its limit natively, so its derivative is exactly 0, while OpenCL's
//!   stopped ulps short of it (PoCL's `tanh`), where the derivative is
//!   about 2⁻²³ times the incoming tangent — which no relative bound
//!   measures, and a square root after it (`asin`, `acos` of the value)
//!   amplifies without bound (programs 3158, 3444, 3819, 3925, 4292 and
//!   4729 of seed 20261123).
//!   A difference is also explained by the rounding of the derivative
//!   formulas themselves, which perturbing the function cannot show: in
//!   `f64` within [`POINT_SCALE`] ulps of the largest tangent entry at the
//!   point (`point-scale`), in both precisions within the rounding noise of
//!   the native tangent ([`rounding_reach`], `tangent-noise`); a tangent at
//!   a point where the plain copy gives a math function a NaN that PoCL may
//!   fold to anything (`nan-fold`: the differences of the copy change under
//!   NaN poison, or in `f32` the native tangent is not finite, OpenCL's is
//!   and the `f64` tangents agree); and tangents not finite on either side
//!   where the function's value is not finite or a non-finite or singular
//!   intermediate lies on the entry's path (`nonfinite`). Tangents that are
//!   the same NaN or infinity on both sides agree only where the function's
//!   value is not finite either; with a non-finite or singular intermediate
//!   on the path they are `nonfinite`, and otherwise a disagreement (a
//!   derivative rule returning a non-finite value on both sides). Each
//!   explained difference is tagged with its kind (`verdict`);
//! - in `f64`, **AD versus differences** (`ad-ok`, `ad-mismatch`): the
//!   native tangent against a Richardson-extrapolated central difference of
//!   the plain copy with its decisions frozen (steps 10⁻³, 5·10⁻⁴ and
//!   2.5·10⁻⁴), entry by entry, relative 10⁻⁶ plus the rounding noise of
//!   the differences, at the entries where the three steps agree; see
//!   `crate::differences`. A mismatch within the rounding noise of the
//!   tangent ([`rounding_reach`]) and of the differences is `ad-explained`
//!   (`[tangent-noise]`, listed, not a finding): a function that cancels
//!   inside rounds both at the scale of its terms; so is one that finer
//!   exact steps along each coordinate, with an error bound of at most
//!   10⁻⁶, resolve (`[fine-step]`: a pole inside the default stencils, or a
//!   steep inner function driving a saturating one) or that the rounding
//!   of a far larger value on the entry's path explains (`[absorbed]`);
//! - **Jacobian versus tangent**, natively and on the device: see
//!   `crate::jacobians`.

use crate::paths::Paths;
use crate::runtime::{Body, Settings, evaluate, plain, pt, widen};
use crate::tangents::{native_tangents, rounding_reach, shifted};
use crate::verdict;
use femquad::Real;
use femquad::opencl::probe::{Evaluation, Inputs, Outputs, Probe};
use femquad::physics::EvalPrecision;

/// In `f32`, the reach of a tangent entry is at least this many times the
/// distance of the native `f32` tangent from the native `f64` one: the
/// native error comes from `f32` rounding with the host's math library
/// (within about one ulp), OpenCL's functions may err by up to 17 ulps
/// (`powf`), and to first order the error of a tangent is linear in those
/// of the math results.
const F32_BOUND: f64 = 18.0;

/// In `f32`, a difference beyond every reach is attributed to a derivative
/// formula amplifying math-library rounding (`f32-amplified`) only up to
/// this relative size, and only with a saturating function on the entry's
/// path (see [`tangents_compared`]).
const F32_AMPLIFIED: f64 = 1e-2;

thread_local! {
    /// The (program, dimension) pairs whose `f64` tangents agree, native
    /// and OpenCL (the runtime checks `f64` before `f32`).
    static F64_AGREE: std::cell::RefCell<std::collections::HashSet<(usize, usize)>> =
        std::cell::RefCell::new(std::collections::HashSet::new());
}

/// An entry of a tangent may differ by this many ulps of the largest entry
/// at its point: the derivative formulas round at the scale of their
/// terms, which the largest entry shows (`2f·(0.1/f)` is 0.2 to the ulp,
/// its tangent `0.2f′/f − 0.2f·f′/f²` cancels from terms of size `f′/f` to
/// a few of their ulps, 0 natively and −2⁻⁵² on the device; the rounding
/// of the two libraries' `tan` moves which).
const POINT_SCALE: f64 = 64.0;

/// What [`nan_fold`] finds, with the unpoisoned differences.
type Folds = (Vec<usize>, Vec<Vec<f64>>, Option<Vec<f64>>);

/// The points at which the plain copy of `b` gives a math function a NaN,
/// and the central differences (step `h`, entry by entry) of the copy under
/// NaN poison (`pt::Calls::NanArgument`, the same arbitrary values at both points
/// of a trial).
fn nan_fold<R: Real>(b: &Body, i: &Inputs<R>, h: f64, seed: u64) -> (Vec<usize>, Vec<Vec<f64>>) {
    pt::set(0);
    pt::nan_points();
    let _ = evaluate::<R>(plain::<R>(b), i);
    let points = pt::nan_points();
    if points.is_empty() {
        return (points, Vec::new());
    }
    let (up, down) = (shifted(i, h), shifted(i, -h));
    let trials = (1..=6u64)
        .filter_map(|t| {
            let seed = seed.wrapping_mul(0x2545_f491).wrapping_add(t) | 1;
            pt::replace(pt::Calls::NanArgument, seed);
            let plus = evaluate::<R>(plain::<R>(b), &up).ok();
            pt::replace(pt::Calls::NanArgument, seed);
            let minus = evaluate::<R>(plain::<R>(b), &down).ok();
            pt::replace(pt::Calls::None, 0);
            Some(central(&widen(&plus?), &widen(&minus?), h))
        })
        .collect();
    pt::nan_points();
    (points, trials)
}

/// Central differences of an evaluation, entry by entry.
fn central(plus: &Outputs<f64>, minus: &Outputs<f64>, h: f64) -> Vec<f64> {
    plus.f0
        .iter()
        .chain(&plus.f1)
        .zip(minus.f0.iter().chain(&minus.f1))
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect()
}

/// Runs the derivative checks of `bodies` (their inputs `inputs`, with a
/// direction) and prints their lines.
pub fn run<R: EvalPrecision>(
    probe: &Probe,
    bodies: &[&Body],
    inputs: &[Inputs<R>],
    dim: usize,
    s: &Settings,
) {
    let device = crate::runtime::device(probe, bodies, inputs, dim, Evaluation::Tangent);
    let prec = R::PRECISION;
    // The OpenCL tangents, for the OpenCL Jacobian check.
    let mut tangents: Vec<Option<Outputs<f64>>> = Vec::new();
    for ((b, i), device) in bodies.iter().zip(inputs).zip(device) {
        let id = b.id;
        tangents.push(device.as_ref().ok().map(widen));
        let device = match device {
            Ok(d) => d,
            Err(e) => {
                let first = e.lines().take(12).collect::<Vec<_>>().join(" | ");
                println!("result {id} {dim} {prec} tangent-build-failure 0 {first}");
                continue;
            }
        };
        let native = match native_tangents(b, i) {
            Ok(n) => n,
            Err(e) => {
                println!("result {id} {dim} {prec} tangent-native-panic 0 {e}");
                continue;
            }
        };
        let line = tangents_compared(b, i, &device, &native, s.seed);
        println!("result {id} {dim} {prec} tangent-{line}");
        if prec == femquad::Precision::F64 {
            native_checks(b, &i.convert());
        }
    }
    crate::jacobians::device_versus_tangent(probe, bodies, inputs, &tangents, dim);
}

/// The checks that need no device, in `f64`, at `i`: AD against
/// differences, the native Jacobian against the native tangent, the
/// linearity claim; prints their lines.
pub fn native_checks(b: &Body, i: &Inputs<f64>) {
    let (id, dim) = (b.id, i.sizes.dim);
    let native = match native_tangents(b, i) {
        Ok(n) => n,
        Err(e) => {
            println!("result {id} {dim} f64 tangent-native-panic 0 {e}");
            return;
        }
    };
    let line = crate::differences::ad_versus_differences(b, i, &native);
    println!("result {id} {dim} f64 {line}");
    let line = crate::jacobians::native_versus_tangent(b, i, &native);
    println!("result {id} {dim} f64 {line}");
    if let Some(line) = crate::linearity::claim_checked(b, i) {
        println!("result {id} {dim} f64 {line}");
    }
}

/// The OpenCL tangents `device` of `b` at `i` against the native ones
/// `native`, entry by entry (see the module documentation):
/// `<agree|ulp|disagree> <worst relative difference> <detail>`.
///
/// Non-finite tangents are never silently in agreement: where both are
/// the same NaN or infinity, the function's own value at that entry must
/// be non-finite too, or a non-finite or singular intermediate lie on the
/// entry's path (explained, `[nonfinite]`); otherwise a derivative rule
/// returns a non-finite value on both sides (a disagreement with the
/// differentiable function, reported as one).
pub(crate) fn tangents_compared<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
    device: &Outputs<R>,
    native: &Outputs<R>,
    seed: u64,
) -> String {
    let (id, dim, prec) = (b.id, i.sizes.dim, R::PRECISION);
    let double = prec == femquad::Precision::F64;
    let tol = verdict::tolerance(prec);
    // The reach of the math libraries on a difference tangent.
    let h = if double { 1e-4 } else { 1e-2 };
    let difference = |seed: u64| -> Option<Vec<f64>> {
        pt::set(seed);
        let plus = evaluate::<R>(plain::<R>(b), &shifted(i, h)).ok()?;
        // Another perturbation at the other point (0 stays 0: none).
        pt::set(if seed == 0 {
            0
        } else {
            (seed ^ 0x5bd1_e995) | 1
        });
        let minus = evaluate::<R>(plain::<R>(b), &shifted(i, -h)).ok()?;
        pt::set(0);
        Some(central(&widen(&plus), &widen(&minus), h))
    };
    // In f32, the native f64 tangent at the same points: how far f32
    // rounding moves the native tangent (see the module documentation).
    let reference: Option<Vec<f64>> = (!double)
        .then(|| native_tangents::<f64>(b, &i.convert()).ok())
        .flatten()
        .map(|t| t.f0.iter().chain(&t.f1).copied().collect());
    // In f32: whether the f64 tangents agreed.
    let agreed64 = !double && F64_AGREE.with(|s| s.borrow().contains(&(id, dim)));
    let mut reach: Option<Vec<f64>> = None;
    let mut formula: Option<Vec<f64>> = None;
    let mut folds: Option<Folds> = None;
    let mut paths = Paths::new(b, i, seed);

    let mut worst = verdict::Worst::default();
    let (d_all, n_all) = (widen(device), widen(native));
    let n0 = n_all.f0.len();
    let [p0, p1] = i.sizes.outputs();
    let point_of = |e: usize| {
        if e < n0 {
            e / p0.max(1)
        } else {
            (e - n0) / p1.max(1)
        }
    };
    // Whether entry `e` (OpenCL `o`, native `n`) is at a point where the
    // plain copy gives a math function a NaN that matters (`nan-fold`).
    let mut nan_folded = |e: usize, o: f64, n: f64| {
        let (points, trials, base) = folds.get_or_insert_with(|| {
            let (p, t) = nan_fold(b, i, h, seed ^ 0x51f1_5eed);
            (p, t, difference(0))
        });
        points.contains(&point_of(e))
            && (trials
                .iter()
                .any(|t| base.as_ref().is_some_and(|b| !verdict::same(t[e], b[e])))
                || (!double && !n.is_finite() && o.is_finite() && agreed64))
    };
    // The largest finite native tangent entry at a point, both arrays.
    let point_scale = |p: usize| {
        n_all
            .f0(p)
            .iter()
            .chain(n_all.f1(p))
            .filter(|x| x.is_finite())
            .fold(0.0f64, |m, x| m.max(x.abs()))
    };
    let entries: Vec<(f64, f64)> = d_all
        .f0
        .iter()
        .chain(&d_all.f1)
        .zip(n_all.f0.iter().chain(&n_all.f1))
        .map(|(o, n)| (*o, *n))
        .collect();
    // Entries not finite (the same on both sides) where the function is not.
    let mut with_function = 0usize;
    for (e, (o, n)) in entries.iter().copied().enumerate() {
        let (what, k) = if e < n0 { ("df0", e) } else { ("df1", e - n0) };
        let rel = verdict::relative(o, n);
        if !n.is_finite() && verdict::same(o, n) {
            if !paths.finite(e) {
                with_function += 1;
            } else if paths.singular(e) {
                worst.explained(
                    0.0,
                    format!(
                        "[nonfinite] entry {what}[{k}] (all points): native {n:e} OpenCL {o:e}: \
                         a non-finite or singular intermediate lies on its path"
                    ),
                );
            } else {
                worst.unexplained(
                    f64::INFINITY,
                    format!(
                        "entry {what}[{k}] (all points): native {n:e} OpenCL {o:e} where the \
                         function and every intermediate on the entry's path are finite: a \
                         derivative rule returns a non-finite value"
                    ),
                );
            }
            continue;
        }
        if rel <= tol {
            worst.agree(rel);
            continue;
        }
        let r = reach.get_or_insert_with(|| {
            let base = difference(0);
            let mut r = vec![0.0; entries.len()];
            for t in 1..=24u64 {
                let seed = seed.wrapping_mul(0x9e37_79b9).wrapping_add(t) | 1;
                if let (Some(base), Some(d)) = (&base, difference(seed)) {
                    for (k, (x, y)) in d.iter().zip(base).enumerate() {
                        let dist = verdict::distance(*x, *y);
                        if dist.is_finite() {
                            r[k] = f64::max(r[k], dist);
                        } else if !y.is_finite() && x.is_finite() {
                            // Not finite natively, finite perturbed.
                            r[k] = f64::INFINITY;
                        }
                    }
                }
            }
            r
        });
        let precision_reach = reference
            .as_ref()
            .map(|t| F32_BOUND * verdict::distance(n, t[e]))
            .filter(|r| r.is_finite())
            .unwrap_or(0.0);
        let dist = verdict::distance(o, n);
        let within = |reach: f64| dist <= 2.0 * reach + tol * n.abs();
        // The first explanation that reaches (see `verdict`'s kinds).
        let explained = |reach: f64, kind: &str| {
            format!(
                "[{kind}] entry {what}[{k}] (all points): native {n:e} OpenCL {o:e} \
                 (reach {reach:e})"
            )
        };
        let scale = POINT_SCALE * f64::EPSILON * point_scale(point_of(e));
        let detail = if within(r[e]) {
            let kind = if r[e].is_infinite() {
                "finite-flip"
            } else {
                "rounding"
            };
            Some(explained(r[e], kind))
        } else if double && within(scale) {
            Some(explained(scale, "point-scale"))
        } else if within(precision_reach) {
            Some(explained(precision_reach, "f32-precision"))
        } else if let Some(f) = formula
            .get_or_insert_with(|| rounding_reach(b, i, native, seed ^ 0x7f4a_7c15))
            .get(e)
            .copied()
            .filter(|f| within(*f))
        {
            Some(explained(f, "tangent-noise"))
        } else if !o.is_finite() && !n.is_finite() && (!paths.finite(e) || paths.singular(e)) {
            let mut d = explained(f64::INFINITY, "nonfinite");
            d.push_str(
                ": not finite on both sides, the function's value or an intermediate on the \
                 entry's path not finite or singular",
            );
            Some(d)
        } else if o.is_finite() != n.is_finite() && verdict::finiteness_flipped(id, dim, prec) {
            let mut d = explained(f64::INFINITY, "finite-flip");
            d.push_str(
                ": the function's own value turns non-finite on one side within the \
                 reach of the math libraries (see its residual line)",
            );
            Some(d)
        } else if nan_folded(e, o, n) {
            let mut d = explained(f64::INFINITY, "nan-fold");
            d.push_str(
                ": the plain copy gives a math function a NaN at this point, which \
                 PoCL may fold to an arbitrary value",
            );
            Some(d)
        } else if agreed64 && rel <= F32_AMPLIFIED && paths.saturating(e) {
            let mut d = explained(f64::INFINITY, "f32-amplified");
            d.push_str(
                ": beyond the reach, but the f64 tangents agree, the difference is at most \
                 1e-2 relative and a saturating function lies on the entry's path: \
                 math-library rounding amplified by its derivative formula in f32",
            );
            Some(d)
        } else if agreed64 && n == 0.0 && paths.saturating(e) {
            let mut d = explained(f64::INFINITY, "f32-saturated");
            d.push_str(
                ": the entry is exactly 0 natively, the f64 tangents agree and a saturating \
                 function lies on the entry's path: natively it reaches its limit in f32, \
                 where its derivative is 0; OpenCL's may stop ulps short of it (PoCL's f32 \
                 tanh is 1 - 2^-24 from 9 on), where its derivative is about 2^-23, times \
                 the incoming tangent and whatever follows (asin or acos of it: a square \
                 root of that)",
            );
            Some(d)
        } else {
            None
        };
        match detail {
            Some(d) => worst.explained(rel, d),
            None => {
                let reach = r[e].max(precision_reach);
                let in_f64 = reference
                    .as_ref()
                    .map(|t| format!(", native f64 {:e}", t[e]))
                    .unwrap_or_default();
                worst.unexplained(
                    rel,
                    format!(
                        "entry {what}[{k}] (all points): native {n:e} OpenCL {o:e} \
                         (math libraries reach {reach:e}{in_f64}, point scale {:e})",
                        point_scale(point_of(e))
                    ),
                );
            }
        }
    }
    if double && worst.agrees() {
        F64_AGREE.with(|s| s.borrow_mut().insert((id, dim)));
    }
    let mut line = worst.line();
    if with_function > 0 {
        line.push_str(&format!(
            " ({with_function} entries not finite where the function is not finite either)"
        ));
    }
    line
}
