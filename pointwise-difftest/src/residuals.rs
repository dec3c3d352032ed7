//! The residual checks (copied into the generated crates with the
//! runtime): native against OpenCL residuals, with the reach of the math
//! libraries from perturbation trials of the plain copy (see
//! `crate::runtime` for the line format and `crate::verdict` for the
//! measure).

use crate::runtime::{Body, Settings, device, evaluate, plain, pt, widen};
use femquad::Real;
use femquad::opencl::probe::{Evaluation, Inputs, Outputs, Probe};
use femquad::physics::EvalPrecision;

/// Perturbation trials per disagreement.
const TRIALS: u64 = 24;

/// The residual checks (see the module documentation).
pub(crate) fn residuals<R: EvalPrecision>(
    probe: &Probe,
    bodies: &[&Body],
    inputs: &[Inputs<R>],
    dim: usize,
    s: &Settings,
) {
    let device = device(probe, bodies, inputs, dim, Evaluation::Residual);
    let prec = R::PRECISION;
    for ((b, inputs), device) in bodies.iter().zip(inputs).zip(device) {
        let id = b.id;
        let device = match device {
            Ok(d) => d,
            Err(e) => {
                let first = e.lines().take(12).collect::<Vec<_>>().join(" | ");
                println!("result {id} {dim} {prec} build-failure 0 {first}");
                continue;
            }
        };
        let native = evaluate::<R>(
            &|d, a, f0, f1| R::physics(b.physics).eval(d, a, f0, f1),
            inputs,
        );
        let native = match native {
            Ok(n) => n,
            Err(e) => {
                println!("result {id} {dim} {prec} native-panic 0 {e}");
                continue;
            }
        };
        pt::set(0);
        let reference = evaluate::<R>(plain::<R>(b), inputs);
        let reference = match reference {
            Ok(r) => r,
            Err(e) => {
                println!("result {id} {dim} {prec} native-panic 0 plain copy: {e}");
                continue;
            }
        };
        if let Some(d) = crate::verdict::first_mismatch(&native, &reference) {
            println!("result {id} {dim} {prec} native-mismatch 0 eval vs plain copy: {d}");
            continue;
        }
        let line = residuals_compared(b, inputs, &device, &native, s.seed);
        println!("result {id} {dim} {prec} {line}");
    }
}

/// The OpenCL residuals `device` of `b` at `inputs` against the native
/// ones `native`, entry by entry (see the module documentation and
/// `crate::verdict`): `<agree|ulp|disagree> <worst relative difference>
/// <detail>`.
pub(crate) fn residuals_compared<R: Real>(
    b: &Body,
    inputs: &Inputs<R>,
    device: &Outputs<R>,
    native: &Outputs<R>,
    seed: u64,
) -> String {
    let (id, dim, prec) = (b.id, inputs.sizes.dim, R::PRECISION);
    let tol = crate::verdict::tolerance(prec);
    let mut spread: Option<Vec<Outputs<f64>>> = None;
    let mut frozen: Option<(Vec<Outputs<f64>>, Vec<usize>)> = None;
    let mut nan_fold: Option<Vec<Outputs<f64>>> = None;
    let mut worst = crate::verdict::Worst::default();
    for p in 0..inputs.points {
        for (k, (dv, nv)) in [(device.f0(p), native.f0(p)), (device.f1(p), native.f1(p))]
            .into_iter()
            .enumerate()
        {
            for (j, (o, n)) in dv.iter().zip(nv).enumerate() {
                let (o, n) = (o.to_f64(), n.to_f64());
                let rel = crate::verdict::relative(o, n);
                if rel <= tol {
                    worst.agree(rel);
                    continue;
                }
                // Beyond the tolerance: how far can the math libraries move it?
                let trials = spread.get_or_insert_with(|| {
                    (1..=TRIALS)
                        .filter_map(|t| {
                            pt::set(seed.wrapping_mul(0x9e37_79b9).wrapping_add(t) | 1);
                            let r = evaluate::<R>(plain::<R>(b), inputs).ok();
                            pt::set(0);
                            r.map(|r| widen(&r))
                        })
                        .collect()
                });
                let reach = crate::verdict::reach(
                    o,
                    n,
                    trials
                        .iter()
                        .map(|t| if k == 0 { t.f0(p)[j] } else { t.f1(p)[j] }),
                );
                let dist = crate::verdict::distance(o, n);
                // (`τ·|n|` is 0 where `n` is NaN, as in `Worst::differ`.)
                let tol_abs = if n.is_nan() { 0.0 } else { tol * n.abs() };
                let within = |reach: f64| dist <= 2.0 * reach + tol_abs;
                let get = |t: &Outputs<f64>| if k == 0 { t.f0(p)[j] } else { t.f1(p)[j] };
                // Why the math libraries explain it (see `verdict`'s kinds).
                let (reach, kind) = if within(reach) {
                    // (finite against ±∞ or NaN, or ∞ against NaN)
                    if !(o.is_finite() && n.is_finite()) {
                        if reach.is_infinite() {
                            crate::verdict::note_finiteness_flip(id, dim, prec);
                        }
                        (reach, Some("finite-flip"))
                    } else {
                        let (frozen, diverged) =
                            frozen.get_or_insert_with(|| frozen_trials::<R>(b, inputs, seed));
                        let r = crate::verdict::reach(o, n, frozen.iter().map(get));
                        if !diverged.contains(&p) && within(r) {
                            (reach, Some("rounding"))
                        } else {
                            (reach, Some("decision"))
                        }
                    }
                } else if nan_fold
                    .get_or_insert_with(|| {
                        crate::paths::replaced_trials::<R>(b, inputs, pt::Calls::NanArgument, seed)
                    })
                    .iter()
                    .any(|t| !crate::verdict::same(get(t), n))
                {
                    (f64::INFINITY, Some("nan-fold"))
                } else {
                    (reach, None)
                };
                let what = match kind {
                    Some(kind) => format!(
                        "[{kind}] point {p} f{k}[{j}]: native {n:e} OpenCL {o:e} (reach {reach:e})"
                    ),
                    None => format!(
                        "point {p} f{k}[{j}]: native {n:e} OpenCL {o:e} (math libraries reach {reach:e})"
                    ),
                };
                worst.differ(rel, dist, reach, tol_abs, what);
            }
        }
    }
    worst.line()
}

/// The perturbation trials of the plain copy of `b` with the decisions of
/// its unperturbed evaluation frozen (`crate::freeze`), and the points
/// whose replay diverged: a difference they reach comes from rounding
/// along the branch both sides took, one they do not from a decision (a
/// comparison, a cast to an integer, `floor`, …) that the math libraries
/// move.
fn frozen_trials<R: Real>(
    b: &Body,
    inputs: &Inputs<R>,
    seed: u64,
) -> (Vec<Outputs<f64>>, Vec<usize>) {
    pt::set(0);
    crate::freeze::record();
    let _ = evaluate::<R>(plain::<R>(b), inputs);
    crate::freeze::replay();
    let trials = (1..=TRIALS)
        .filter_map(|t| {
            pt::set(seed.wrapping_mul(0x9e37_79b9).wrapping_add(t) | 1);
            let r = evaluate::<R>(plain::<R>(b), inputs).ok();
            pt::set(0);
            r.map(|r| widen(&r))
        })
        .collect();
    (trials, crate::freeze::stop())
}
