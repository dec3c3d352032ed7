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
//! ```text
//! cargo run --release --example allen_cahn -- /tmp/ac
//! paraview /tmp/ac/allen_cahn.pvd
//! ```
//!
//! It prints one line per step (time, step size, Newton and Krylov
//! iterations) and, at the end, the fraction of the square in each phase.
//!
//! Native backend: the OpenCL kernels do not yet evaluate a time state
//! (an operator on the device refuses one with an error saying so).

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

fn main() -> femquad::Result<()> {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "allen_cahn_out".into());
    let epsilon: f64 = 0.02;
    let hierarchy = MeshHierarchy::new(&unit_square(8, &MeshOptions::default())?, 4)?;
    let space = FunctionSpace::new(hierarchy.finest().clone(), Element::lagrange(2, 1)?, 1)?;
    let form = Form::new(space, AllenCahn)?.with_constants(&[epsilon * epsilon])?;
    let op = Operator::<f64>::new(form, &Backend::native())?;
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
    let (u, stats) = integrator.run(&u0, 0.0, 10.0, control)?;
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
