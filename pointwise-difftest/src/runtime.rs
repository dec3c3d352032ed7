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
use femquad::opencl::probe::{Evaluation, Inputs, Outputs, Probe};
use femquad::physics::{PointArgs, Pointwise, PointwiseError, PointwiseEvalBoth};
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
        Evaluation::JacobianUT => "jacobian_u_t",
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

pub(crate) fn widen<R: Real>(o: &Outputs<R>) -> Outputs<f64> {
    Outputs {
        per_point: o.per_point,
        f0: o.f0.iter().map(|x| x.to_f64()).collect(),
        f1: o.f1.iter().map(|x| x.to_f64()).collect(),
    }
}
