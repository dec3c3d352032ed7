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
//!   that reach, an `f32` difference is still attributed to the math
//!   libraries (`tangent-ulp`, its detail says so) when the program calls
//!   functions that OpenCL rounds differently and its `f64` tangents agree,
//!   native and OpenCL: the tangent's own math calls (`1 − tanh²` from
//!   OpenCL's `tanh` of 1 − 2⁻²⁴ where Rust's gives 1, then `acos′` of
//!   it) cannot be perturbed from here, and a translation fault would show
//!   in `f64`, printed from the same program. In both precisions a
//!   difference is also explained by the rounding of the derivative
//!   formulas themselves, which perturbing the function cannot show: within
//!   [`POINT_SCALE`] ulps of the largest tangent entry at the point, or
//!   within the rounding noise of the native tangent ([`rounding_reach`]);
//!   and a tangent at a point where the plain copy gives a math function
//!   a NaN that PoCL may fold to anything (`nan-fold`: the differences of
//!   the copy change under NaN poison, or in `f32` the native tangent is not
//!   finite, OpenCL's is and the `f64` tangents agree). Each explained
//!   difference is tagged with its kind (`verdict`);
//! - in `f64`, **AD versus differences** (`ad-ok`, `ad-mismatch`): the
//!   native tangent against a Richardson-extrapolated central difference of
//!   the plain copy with its decisions frozen (steps 10⁻³, 5·10⁻⁴ and
//!   2.5·10⁻⁴), entry by entry, relative 10⁻⁶ plus the rounding noise of
//!   the differences, at the entries where the three steps agree; see
//!   `crate::differences`. A mismatch within the rounding noise of the
//!   tangent ([`rounding_reach`]) and of the differences is `ad-explained`
//!   (`[tangent-noise]`, listed, not a finding): a function that cancels
//!   inside rounds both at the scale of its terms; so is one that finer
//!   steps resolve (`[fine-step]`: a pole inside the default stencils) or
//!   that the rounding of a far larger value explains (`[absorbed]`);
//! - **Jacobian versus tangent**, natively and on the device: see
//!   `crate::jacobians`.

use crate::runtime::{Body, Settings, evaluate, plain, pt};
use crate::verdict;
use femquad::Real;
use femquad::opencl::probe::{Evaluation, Inputs, Outputs, Probe};
use femquad::physics::EvalPrecision;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// In `f32`, the reach of a tangent entry is at least this many times the
/// distance of the native `f32` tangent from the native `f64` one: the
/// native error comes from `f32` rounding with the host's math library
/// (within about one ulp), OpenCL's functions may err by up to 17 ulps
/// (`powf`), and to first order the error of a tangent is linear in those
/// of the math results.
const F32_BOUND: f64 = 18.0;

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

/// Trials of [`rounding_reach`], and the ulps each input moves at most: as
/// far as OpenCL's bounds let a math result move (16 for `powf`), so that a
/// derivative formula that amplifies its arguments' rounding (`1/r²` of a
/// residue `r = x % y` with a tiny `y`, where a few ulps of `x` move `r`
/// by a part in a thousand) is measured at the scale the libraries move it.
const NUDGE_TRIALS: u64 = 16;
const NUDGE_ULPS: u64 = 16;

/// `x` moved by `n` ulps of its precision.
fn nudge<R: Real>(x: R, n: i64) -> R {
    use crate::pt::F;
    match R::PRECISION {
        femquad::Precision::F64 => R::from_f64(x.to_f64().nudge(n)),
        femquad::Precision::F32 => R::from_f64((x.to_f64() as f32).nudge(n) as f64),
    }
}

/// The rounding noise of the native tangents, entry by entry (`f0` then
/// `f1`, all points): the largest finite change of `t(v′)/s` from `t(v)`
/// over [`NUDGE_TRIALS`] trials in which every input and the direction
/// move by a random number of ulps (at most [`NUDGE_ULPS`]) and the
/// direction `v′` is then scaled by a random `s` in `[0.5, 2)` (the
/// tangent is linear in it: what changes is rounding). A derivative
/// formula that cancels where the function does not (`2f·(0.1/f)` is 0.2
/// to the ulp, its tangent `0.2f′/f − 0.2f·f′/f²` keeps the rounding of
/// terms of size `f′/f`; `f − (g + f)` keeps that of `g + f`) turns the
/// few-ulp differences of the two libraries' math results into differences
/// this large, which perturbing the plain copy's math results (a
/// difference of the function) cannot show; it is also the rounding noise
/// of a Jacobian applied to the direction against the tangent
/// (`crate::jacobians`), whose columns round at other scales. An input
/// within a few ulps of a decision moves the tangent as far as the
/// decision does.
pub(crate) fn rounding_reach<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
    base: &Outputs<R>,
    seed: u64,
) -> Vec<f64> {
    let all =
        |o: &Outputs<R>| -> Vec<f64> { o.f0.iter().chain(&o.f1).map(|x| x.to_f64()).collect() };
    let base = all(base);
    let mut r = vec![0.0f64; base.len()];
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..NUDGE_TRIALS {
        let mut j = nudged(i, next());
        let scale = 0.5 + 1.5 * (next() >> 11) as f64 / (1u64 << 53) as f64;
        for x in j.du.iter_mut().chain(j.dgrad_u.iter_mut()) {
            *x = R::from_f64(x.to_f64() * scale);
        }
        let Ok(t) = native_tangents(b, &j) else {
            continue;
        };
        for (k, (x, y)) in all(&t).iter().zip(&base).enumerate() {
            let d = verdict::distance(*x / scale, *y);
            if d.is_finite() {
                r[k] = r[k].max(d);
            }
        }
    }
    r
}

/// What [`nan_fold`] finds, with the unpoisoned differences.
type Folds = (Vec<usize>, Vec<Vec<f64>>, Option<Vec<f64>>);

/// The points at which the plain copy of `b` gives a math function a NaN,
/// and the central differences (step `h`, entry by entry) of the copy under
/// NaN poison (`pt::set_poison`, the same arbitrary values at both points
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
            pt::set_poison(seed);
            let plus = evaluate::<R>(plain::<R>(b), &up).ok();
            pt::set_poison(seed);
            let minus = evaluate::<R>(plain::<R>(b), &down).ok();
            pt::set_poison(0);
            Some(central(&widen(&plus?), &widen(&minus?), h))
        })
        .collect();
    pt::nan_points();
    (points, trials)
}

/// `i` with every input and the direction moved by a random number of
/// ulps, at most [`NUDGE_ULPS`] (`seed` ≠ 0 draws them).
fn nudged<R: Real>(i: &Inputs<R>, seed: u64) -> Inputs<R> {
    let mut state = seed | 1;
    let mut j = i.clone();
    for v in [
        &mut j.u,
        &mut j.grad_u,
        &mut j.a,
        &mut j.grad_a,
        &mut j.x,
        &mut j.constants,
        &mut j.du,
        &mut j.dgrad_u,
    ] {
        for x in v.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *x = nudge(
                *x,
                (state % (2 * NUDGE_ULPS + 1)) as i64 - NUDGE_ULPS as i64,
            );
        }
    }
    j
}

/// The native tangents at every point.
pub(crate) fn native_tangents<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
) -> Result<Outputs<R>, String> {
    let per_point = i.sizes.outputs();
    let mut out = Outputs {
        per_point,
        f0: vec![R::ZERO; per_point[0] * i.points],
        f1: vec![R::ZERO; per_point[1] * i.points],
    };
    for p in 0..i.points {
        let (n0, n1) = (per_point[0], per_point[1]);
        let (f0, f1) = (
            &mut out.f0[p * n0..(p + 1) * n0],
            &mut out.f1[p * n1..(p + 1) * n1],
        );
        let (du, dgu) = i.direction(p);
        match catch_unwind(AssertUnwindSafe(|| {
            R::physics(b.physics).eval_tangent(i.sizes.dim, &i.point(p), du, dgu, f0, f1)
        })) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => return Err(format!("panic at point {p}")),
        }
    }
    Ok(out)
}

/// The inputs moved by `t` along their direction.
pub(crate) fn shifted<R: Real>(i: &Inputs<R>, t: f64) -> Inputs<R> {
    let mut j = i.clone();
    let mv = |v: &mut Vec<R>, d: &[R]| {
        for (x, d) in v.iter_mut().zip(d) {
            *x = R::from_f64(x.to_f64() + t * d.to_f64());
        }
    };
    mv(&mut j.u, &i.du);
    mv(&mut j.grad_u, &i.dgrad_u);
    j
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

pub(crate) fn widen<R: Real>(o: &Outputs<R>) -> Outputs<f64> {
    Outputs {
        per_point: o.per_point,
        f0: o.f0.iter().map(|x| x.to_f64()).collect(),
        f1: o.f1.iter().map(|x| x.to_f64()).collect(),
    }
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
    let tol = verdict::tolerance(prec);
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
        // The reach of the math libraries on a difference tangent.
        let h = if prec == femquad::Precision::F64 {
            1e-4
        } else {
            1e-2
        };
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
        let reference: Option<Vec<f64>> = (prec == femquad::Precision::F32)
            .then(|| native_tangents::<f64>(b, &i.convert()).ok())
            .flatten()
            .map(|t| t.f0.iter().chain(&t.f1).copied().collect());
        // In f32: whether the f64 tangents agreed and the program calls
        // functions that OpenCL rounds differently (see the module
        // documentation).
        let amplified = prec == femquad::Precision::F32
            && F64_AGREE.with(|s| s.borrow().contains(&(id, dim)))
            && {
                pt::inexact_calls();
                let _ = evaluate::<R>(plain::<R>(b), i);
                pt::inexact_calls() > 0
            };
        let mut reach: Option<Vec<f64>> = None;
        let mut formula: Option<Vec<f64>> = None;
        let mut folds: Option<Folds> = None;

        let mut worst = verdict::Worst::default();
        let (d_all, n_all) = (widen(&device), widen(&native));
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
                let (p, t) = nan_fold(b, i, h, s.seed ^ 0x51f1_5eed);
                (p, t, difference(0))
            });
            points.contains(&point_of(e))
                && (trials
                    .iter()
                    .any(|t| base.as_ref().is_some_and(|b| !verdict::same(t[e], b[e])))
                    || (prec == femquad::Precision::F32
                        && !n.is_finite()
                        && o.is_finite()
                        && F64_AGREE.with(|s| s.borrow().contains(&(id, dim)))))
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
        let eps = match prec {
            femquad::Precision::F64 => f64::EPSILON,
            femquad::Precision::F32 => f32::EPSILON as f64,
        };
        let entries: Vec<(f64, f64)> = d_all
            .f0
            .iter()
            .chain(&d_all.f1)
            .zip(n_all.f0.iter().chain(&n_all.f1))
            .map(|(o, n)| (*o, *n))
            .collect();
        for (e, (o, n)) in entries.iter().copied().enumerate() {
            let rel = verdict::relative(o, n);
            if rel <= tol {
                worst.agree(rel);
                continue;
            }
            let r = reach.get_or_insert_with(|| {
                let base = difference(0);
                let mut r = vec![0.0; entries.len()];
                for t in 1..=24u64 {
                    let seed = s.seed.wrapping_mul(0x9e37_79b9).wrapping_add(t) | 1;
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
            let (what, k) = if e < n0 { ("df0", e) } else { ("df1", e - n0) };
            let explained = |reach: f64, kind: &str| {
                format!(
                    "[{kind}] entry {what}[{k}] (all points): native {n:e} OpenCL {o:e} \
                     (reach {reach:e})"
                )
            };
            let (reach_e, detail) = if within(r[e]) {
                let kind = if r[e].is_infinite() {
                    "finite-flip"
                } else {
                    "rounding"
                };
                (r[e], explained(r[e], kind))
            } else if within(POINT_SCALE * eps * point_scale(point_of(e))) {
                let r = POINT_SCALE * eps * point_scale(point_of(e));
                (r, explained(r, "point-scale"))
            } else if within(precision_reach) {
                (precision_reach, explained(precision_reach, "f32-precision"))
            } else if let Some(f) = formula
                .get_or_insert_with(|| rounding_reach(b, i, &native, s.seed ^ 0x7f4a_7c15))
                .get(e)
                .copied()
                .filter(|f| within(*f))
            {
                (f, explained(f, "tangent-noise"))
            } else if o.is_finite() != n.is_finite() && verdict::finiteness_flipped(id, dim, prec) {
                let mut d = explained(f64::INFINITY, "finite-flip");
                d.push_str(
                    ": the function's own value turns non-finite on one side within the \
                     reach of the math libraries (see its residual line)",
                );
                (f64::INFINITY, d)
            } else if nan_folded(e, o, n) {
                let mut d = explained(f64::INFINITY, "nan-fold");
                d.push_str(
                    ": the plain copy gives a math function a NaN at this point, which \
                     PoCL may fold to an arbitrary value",
                );
                (f64::INFINITY, d)
            } else if amplified {
                let mut d = explained(f64::INFINITY, "f32-amplified");
                d.push_str(
                    ": beyond the reach, but the f64 tangents agree: math-library rounding \
                     amplified by a derivative formula in f32",
                );
                (f64::INFINITY, d)
            } else {
                let reach = r[e].max(precision_reach);
                (
                    reach,
                    format!(
                        "entry {what}[{k}] (all points): native {n:e} OpenCL {o:e} \
                         (math libraries reach {reach:e})"
                    ),
                )
            };
            worst.differ(rel, dist, reach_e, tol * n.abs(), detail);
        }
        if prec == femquad::Precision::F64 && worst.agrees() {
            F64_AGREE.with(|s| s.borrow_mut().insert((id, dim)));
        }
        println!("result {id} {dim} {prec} tangent-{}", worst.line());
        if prec == femquad::Precision::F64 {
            let i64: Inputs<f64> = i.convert();
            let n64: Outputs<f64> = widen(&native);
            crate::differences::ad_versus_differences(b, &i64, &n64, dim);
            crate::jacobians::native_versus_tangent(b, &i64, &n64, dim);
        }
    }
    crate::jacobians::device_versus_tangent(probe, bodies, inputs, &tangents, dim);
}
