//! The runtime of a generated test crate (this file is copied into it as
//! `src/runtime.rs`; it is also compiled here, to keep it checked).
//!
//! For every program, dimension and precision it evaluates the physics at
//! random points natively (`PointwiseEval::eval`), on the OpenCL device (the
//! femquad probe, many programs per OpenCL build) and with the plain copy
//! (`plain_*`, the same body as ordinary Rust), and prints one line per
//! (program, dimension, precision) with the verdict of `verdict`:
//!
//! ```text
//! result <id> <dim> <f32|f64> <verdict> <worst> <detail>
//! ```
//!
//! The plain copy is also evaluated with every math-library result (and, in
//! `f32`, every division) moved by a random number of ulps within OpenCL's
//! error bound plus one (the host's libm is not exact either): the largest
//! change it causes is how far the math libraries alone can move a result,
//! which is how a difference is told apart from a translation error.
#![allow(dead_code)]

use femquad::Real;
use femquad::opencl::DeviceSelector;
use femquad::opencl::probe::{Evaluation, Inputs, Outputs, PointSizes, Probe};
use femquad::physics::{EvalPrecision, PointArgs, Pointwise, PointwiseError, PointwiseEvalBoth};
use femquad::rng::Rng;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The plain copy of a physics, behind `PointwiseEval::eval`'s interface.
pub type Plain<R> = fn(usize, &PointArgs<'_, R>, &mut [R], &mut [R]) -> Result<(), PointwiseError>;

/// A native evaluation, as `PointwiseEval::eval`.
type EvalFn<'a, R> =
    dyn Fn(usize, &PointArgs<'_, R>, &mut [R], &mut [R]) -> Result<(), PointwiseError> + 'a;

/// A program of the crate.
pub struct Body {
    pub id: usize,
    /// The stream of its random points.
    pub points: usize,
    pub physics: &'static dyn PointwiseEvalBoth,
    pub plain_f64: Plain<f64>,
    pub plain_f32: Plain<f32>,
}

/// Perturbable math: what the plain copies call (see `crate::pt`).
pub(crate) use crate::pt;

/// Run settings, read from the command line: `--seed S --points P
/// --batch B [--only ID,ID…] [--native-only 1]`.
pub struct Settings {
    pub seed: u64,
    pub points: usize,
    pub batch: usize,
    pub only: Option<Vec<usize>>,
    /// Only the checks that need no device: AD against differences, the
    /// native Jacobian and the linearity claim (`f64`), for reducing their
    /// findings without compiling OpenCL.
    pub native_only: bool,
}

impl Settings {
    pub fn from_args() -> Settings {
        let mut s = Settings {
            seed: 1,
            points: 16,
            batch: 40,
            only: None,
            native_only: false,
        };
        let args: Vec<String> = std::env::args().collect();
        let mut i = 1;
        while i + 1 < args.len() {
            let v = &args[i + 1];
            match args[i].as_str() {
                "--seed" => s.seed = v.parse().expect("--seed"),
                "--points" => s.points = v.parse().expect("--points"),
                "--batch" => s.batch = v.parse().expect("--batch"),
                "--only" => s.only = Some(v.split(',').map(|x| x.parse().expect("id")).collect()),
                "--native-only" => s.native_only = v == "1",
                _ => {}
            }
            i += 2;
        }
        s
    }
}

/// The entry point of a generated crate.
pub fn main(bodies: &[Body]) {
    let settings = Settings::from_args();
    let bodies: Vec<&Body> = bodies
        .iter()
        .filter(|b| settings.only.as_ref().is_none_or(|o| o.contains(&b.id)))
        .collect();
    // Native panics are caught and reported; keep their messages short.
    std::panic::set_hook(Box::new(|_| {}));
    let probe = match Probe::open(&DeviceSelector::from_env()) {
        Ok(p) => p,
        Err(e) => {
            println!("fatal no OpenCL device: {e}");
            std::process::exit(2);
        }
    };
    // The device the verdicts were reached on (the explained differences
    // are those of its math library).
    let info = probe.device().info();
    println!("opencl {}: {} ({})", info.vendor, info.name, info.driver);
    for dim in [2, 3] {
        let here: Vec<&Body> = bodies
            .iter()
            .copied()
            .filter(|b| b.physics.info().supports_dim(dim))
            .collect();
        for chunk in here.chunks(settings.batch.max(1)) {
            run::<f64>(&probe, chunk, dim, &settings);
            run::<f32>(&probe, chunk, dim, &settings);
        }
    }
    println!("done");
}

/// The probe's residuals or tangents of `bodies`; a batch that does not
/// build is split until the programs that do not build are alone.
pub(crate) fn device<R: Real>(
    probe: &Probe,
    bodies: &[&Body],
    inputs: &[Inputs<R>],
    dim: usize,
    eval: Evaluation,
) -> Vec<Result<Outputs<R>, String>> {
    let what = match eval {
        Evaluation::Tangent => "tangent",
        Evaluation::Jacobian => "jacobian",
        Evaluation::Residual => "residual",
    };
    announce(bodies, dim, R::PRECISION, what);
    let items: Vec<(&dyn Pointwise, &Inputs<R>)> = bodies
        .iter()
        .map(|b| b.physics as &dyn Pointwise)
        .zip(inputs.iter())
        .collect();
    let out = match eval {
        Evaluation::Tangent => probe.tangents(dim, &items),
        _ => probe.residuals(dim, &items),
    };
    match out {
        Ok(out) => out.into_iter().map(Ok).collect(),
        Err(e) if bodies.len() == 1 => vec![Err(e.to_string())],
        Err(_) => {
            let h = bodies.len() / 2;
            let mut out = device(probe, &bodies[..h], &inputs[..h], dim, eval);
            out.extend(device(probe, &bodies[h..], &inputs[h..], dim, eval));
            out
        }
    }
}

/// Prints `device <dim> <precision> <evaluation> <id,id,…>` before an
/// OpenCL evaluation: if it never returns (a device that hangs), the
/// driver knows which programs to suspect (see `crate::project`).
pub(crate) fn announce(bodies: &[&Body], dim: usize, prec: femquad::Precision, what: &str) {
    use std::io::Write;
    let ids: Vec<String> = bodies.iter().map(|b| b.id.to_string()).collect();
    println!("device {dim} {prec} {what} {}", ids.join(","));
    let _ = std::io::stdout().flush();
}

/// Evaluations of one program: native through a function `eval`.
pub(crate) fn evaluate<R: Real>(
    eval: &EvalFn<'_, R>,
    inputs: &Inputs<R>,
) -> Result<Outputs<R>, String> {
    let per_point = inputs.sizes.outputs();
    let mut out = Outputs {
        per_point,
        f0: vec![R::ZERO; per_point[0] * inputs.points],
        f1: vec![R::ZERO; per_point[1] * inputs.points],
    };
    for p in 0..inputs.points {
        let (n0, n1) = (per_point[0], per_point[1]);
        let (f0, f1) = (
            &mut out.f0[p * n0..(p + 1) * n0],
            &mut out.f1[p * n1..(p + 1) * n1],
        );
        crate::freeze::point(p);
        match catch_unwind(AssertUnwindSafe(|| {
            eval(inputs.sizes.dim, &inputs.point(p), f0, f1)
        })) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e.to_string()),
            Err(panic) => {
                let msg = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                return Err(format!("panic at point {p}: {msg}"));
            }
        }
    }
    Ok(out)
}

/// The plain copy of `b` in precision `R`.
pub(crate) fn plain<R: Real>(b: &Body) -> &EvalFn<'static, R> {
    let any: &dyn std::any::Any = if R::PRECISION == femquad::Precision::F64 {
        &b.plain_f64
    } else {
        &b.plain_f32
    };
    let f: &Plain<R> = any.downcast_ref().expect("precision");
    f
}

/// Perturbation trials per disagreement.
const TRIALS: u64 = 24;

fn run<R: EvalPrecision>(probe: &Probe, bodies: &[&Body], dim: usize, s: &Settings) {
    let inputs: Vec<Inputs<R>> = bodies
        .iter()
        .map(|b| {
            let mut rng = Rng::stream(s.seed, (b.points * 4 + dim) as u64);
            let sizes = PointSizes::of(b.physics, dim);
            Inputs::<f64>::random(sizes, s.points, &mut rng, -1.0, 1.0)
                .with_direction(&mut rng, -1.0, 1.0)
                .convert()
        })
        .collect();
    if s.native_only {
        if R::PRECISION == femquad::Precision::F64 {
            for (b, i) in bodies.iter().zip(&inputs) {
                crate::derivatives::native_checks(b, &i.convert());
            }
        }
        return;
    }
    residuals::<R>(probe, bodies, &inputs, dim, s);
    crate::derivatives::run::<R>(probe, bodies, &inputs, dim, s);
}

/// The residual checks (see the module documentation).
fn residuals<R: EvalPrecision>(
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

pub(crate) fn widen<R: Real>(o: &Outputs<R>) -> Outputs<f64> {
    Outputs {
        per_point: o.per_point,
        f0: o.f0.iter().map(|x| x.to_f64()).collect(),
        f1: o.f1.iter().map(|x| x.to_f64()).collect(),
    }
}
