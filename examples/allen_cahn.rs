//! A nonlinear transient: the Allen–Cahn equation
//!
//! ```text
//! u_t − ε²Δu + u³ − u = 0  in (0,1)² × (0, T],   u = −1 on the boundary,
//! ```
//!
//! from a small perturbation of `u = 0`: the field separates into the two
//! phases `u = ±1`, divided by interfaces of width ~ε that then move by mean
//! curvature. The physics is written with `#[pointwise]`; the time
//! integrator (adaptive BDF2, `femquad::time`) solves every step by
//! Newton–Krylov with the exact step Jacobian `σ·∂F/∂u_t + ∂F/∂u` from the
//! macro's automatic differentiation, preconditioned by multigrid, and
//! writes a ParaView series (`allen_cahn.pvd` + `.vtu` files) into the
//! directory given as the first argument (default `allen_cahn_out`).
//!
//! It runs on the OpenCL device `FEMQUAD_DEVICE` names
//! (`Backend::opencl_from_env`: the kernels evaluate `u_t = σ·u + b`), or
//! natively with `--native`; `--refine L` sets the refinements of the
//! 8×8 coarse mesh (default 4) and `--t-end T` the final time (default 10).
//!
//! ```text
//! cargo run --release --example allen_cahn -- /tmp/ac
//! cargo run --release --example allen_cahn -- /tmp/ac --native --refine 2 --t-end 1
//! paraview /tmp/ac/allen_cahn.pvd
//! ```
//!
//! It prints one line per step (time, step size, Newton and Krylov
//! iterations) and, at the end, the fraction of the square in each phase.
//!

use femquad::output::TimeSeries;
use femquad::prelude::*;
use femquad::time::{Adaptive, Scheme, StepControl, TimeIntegrator};

/// `f0 = u_t + u³ − u`, `f1 = ε²∇u` (`constants = [ε²]`).
#[femquad::pointwise]
fn allen_cahn<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    u_t: &[f64; 1],
    constants: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = u_t[0] + u[0] * u[0] * u[0] - u[0];
    for d in 0..D {
        f1[0][d] = constants[0] * grad_u[0][d];
    }
}

/// The command line: `[OUT] [--native] [--refine L] [--t-end T]`.
struct Args {
    out: String,
    native: bool,
    refine: usize,
    t_end: f64,
}

fn parse_args() -> femquad::Result<Args> {
    let mut args = Args {
        out: "allen_cahn_out".into(),
        native: false,
        refine: 4,
        t_end: 10.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &'static str| {
            it.next()
                .ok_or_else(|| femquad::Error::arg(name, "needs a value"))
        };
        match a.as_str() {
            "--native" => args.native = true,
            "--refine" => {
                let v = value("--refine")?;
                args.refine = v.parse().map_err(|_| {
                    femquad::Error::arg("--refine", format!("`{v}` is not a count"))
                })?;
            }
            "--t-end" => {
                let v = value("--t-end")?;
                args.t_end = v.parse().map_err(|_| {
                    femquad::Error::arg("--t-end", format!("`{v}` is not a number"))
                })?;
            }
            _ if a.starts_with("--") => {
                return Err(femquad::Error::arg(
                    "arguments",
                    format!("unknown option `{a}` (known: --native, --refine L, --t-end T)"),
                ));
            }
            _ => args.out = a,
        }
    }
    Ok(args)
}

fn main() -> femquad::Result<()> {
    let args = parse_args()?;
    let out = args.out;
    let backend = if args.native {
        Backend::native()
    } else {
        Backend::opencl_from_env()?
    };
    let epsilon: f64 = 0.02;
    let coarse = unit_square(8, &MeshOptions::default())?;
    let hierarchy = MeshHierarchy::new(&coarse, args.refine)?;
    let space = FunctionSpace::new(hierarchy.finest().clone(), Element::lagrange(2, 1)?, 1)?;
    let form = Form::new(space, AllenCahn)?.with_constants(&[epsilon * epsilon])?;
    let op = Operator::<f64>::new(form, &backend)?;
    let problem = DirichletProblem::on_hierarchy(op, hierarchy, |_, g| g[0] = -1.0)?;
    let space = problem.space().clone();
    let series = TimeSeries::new(&out, "allen_cahn", &space, 5)?;
    let mut integrator = TimeIntegrator::new(problem, Scheme::Bdf2)?
        .with_output(series)
        .with_progress(|r| {
            println!(
                "step {:4}  t = {:8.4}  dt = {:.2e}  newton {:2}  krylov {:4}  rejected {}",
                r.step, r.t, r.dt, r.newton_iterations, r.linear_iterations, r.rejected
            )
        });
    // a deterministic small perturbation of the unstable state u = 0
    let u0 = space.interpolate(|x, u| {
        u[0] = 0.05 * ((23.0 * x[0]).sin() * (17.0 * x[1]).cos() + (31.0 * x[0] * x[1]).sin())
    });
    let control = StepControl::Adaptive(Adaptive {
        dt_max: 0.5,
        ..Adaptive::new(1e-3, 1e-3)
    });
    let (u, stats) = integrator.run(&u0, 0.0, args.t_end, control)?;
    let u = u.to_host()?;
    let plus = u.iter().filter(|&&v| v > 0.0).count() as f64 / u.len() as f64;
    println!(
        "{} steps ({} rejected), {} Newton and {} Krylov iterations; nodes with u > 0: {:.1} %, \
         |u| > 0.9: {:.1} %",
        stats.steps,
        stats.rejected,
        stats.newton_iterations,
        stats.linear_iterations,
        100.0 * plus,
        100.0 * u.iter().filter(|v| v.abs() > 0.9).count() as f64 / u.len() as f64
    );
    if let Some(series) = integrator.output() {
        println!("ParaView series: {}", series.pvd_path().display());
    }
    Ok(())
}
