//! The heat equation with a manufactured solution in space and time,
//!
//! ```text
//! u_t − Δu = f  in (0,1)² × (0, 1],   u = g on the boundary,   u(0) = u₀,
//! u(x, t) = e^{−t} · sin(πx) sin(πy) + x·(1 + t²)     (f, g, u₀ from u),
//! ```
//!
//! solved by femquad's time integrators (`femquad::time`): each step binds
//! the operator's time state `u_t = σ·u + b` and solves the step's system
//! by Newton–Krylov with the exact step Jacobian `σ·∂F/∂u_t + ∂F/∂u`
//! (from the `#[pointwise]` physics' automatic differentiation),
//! preconditioned by multigrid. It prints two tables:
//!
//! * **rates in Δt**: P2 on 32×32 squares, `Δt` halved — the error at `t = 1`
//!   falls like `Δt` (backward Euler) and `Δt²` (Crank–Nicolson, BDF2);
//! * **rates in h**: P1 and BDF2 with `Δt = h/4` (error `O(h² + Δt²)` =
//!   `O(h²)`): the `L²` error falls like `h²`.
//!
//! ```text
//! cargo run --release --example heat
//! ```
//!
//! Native backend here (the OpenCL backend evaluates time states too,
//! `femquad/tests/time_device.rs`).

use std::f64::consts::PI;

use femquad::prelude::*;
use femquad::solve::l2_error;
use femquad::time::{Scheme, StepControl, TimeIntegrator};

/// The manufactured solution.
fn exact(t: f64, x: &[f64]) -> f64 {
    (-t).exp() * (PI * x[0]).sin() * (PI * x[1]).sin() + x[0] * (1.0 + t * t)
}

/// `u_t − Δu − f(x, t)`, `f = u_t − Δu` of [`exact`]:
/// `f = (2π² − 1)·e^{−t} sin(πx) sin(πy) + 2t·x` (`constants = [π]`).
#[femquad::pointwise]
fn heat_mms(
    u_t: &[f64; 1],
    grad_u: &[[f64; 2]; 1],
    x: &[f64; 2],
    t: f64,
    constants: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; 2]; 1],
) {
    let pi = constants[0];
    let s = (pi * x[0]).sin() * (pi * x[1]).sin();
    let f = (2.0 * pi * pi - 1.0) * (-t).exp() * s + 2.0 * t * x[0];
    f0[0] = u_t[0] - f;
    f1[0][0] = grad_u[0][0];
    f1[0][1] = grad_u[0][1];
}

/// The `L²` error at `t = 1` of `scheme` with steps `dt` on `n`×`n`
/// squares refined `levels` times, elements of `order`.
fn error(scheme: Scheme, n: usize, levels: usize, order: usize, dt: f64) -> femquad::Result<f64> {
    let hierarchy = MeshHierarchy::new(&unit_square(n, &MeshOptions::default())?, levels)?;
    let space = FunctionSpace::new(hierarchy.finest().clone(), Element::lagrange(2, order)?, 1)?;
    let form = Form::new(space, HeatMms)?.with_constants(&[PI])?;
    let op = Operator::<f64>::new(form, &Backend::native())?;
    let problem = DirichletProblem::on_hierarchy(op, hierarchy, |x, g| g[0] = exact(0.0, x))?;
    let mut integrator =
        TimeIntegrator::new(problem, scheme)?.with_boundary_values(|t, x, g| g[0] = exact(t, x));
    let space = integrator.problem().space().clone();
    let u0 = space.interpolate(|x, u| u[0] = exact(0.0, x));
    let (u, _) = integrator.run(&u0, 0.0, 1.0, StepControl::Fixed(dt))?;
    l2_error(
        &space,
        &u.to_host()?,
        |x, e| e[0] = exact(1.0, x),
        2 * order + 2,
    )
}

fn main() -> femquad::Result<()> {
    println!("rates in dt (P2, 32x32 squares, error at t = 1):");
    println!(
        "{:>16} {:>8} {:>12} {:>6}",
        "scheme", "dt", "L2 error", "rate"
    );
    for (name, scheme) in [
        ("backward Euler", Scheme::BackwardEuler),
        ("Crank-Nicolson", Scheme::CRANK_NICOLSON),
        ("BDF2", Scheme::Bdf2),
    ] {
        let mut previous: Option<f64> = None;
        for k in 2..6 {
            let dt = 1.0 / (1 << k) as f64;
            let e = error(scheme, 8, 2, 2, dt)?;
            let rate = previous.map_or(String::new(), |p| format!("{:.2}", (p / e).log2()));
            println!("{name:>16} {dt:>8.4} {e:>12.3e} {rate:>6}");
            previous = Some(e);
        }
    }
    println!("\nrates in h (P1, BDF2, dt = h/4, error at t = 1):");
    println!("{:>8} {:>8} {:>12} {:>6}", "h", "dt", "L2 error", "rate");
    let mut previous: Option<f64> = None;
    for levels in 0..4 {
        let h = 1.0 / (4 << levels) as f64;
        let dt = h / 4.0;
        let e = error(Scheme::Bdf2, 4, levels, 1, dt)?;
        let rate = previous.map_or(String::new(), |p| format!("{:.2}", (p / e).log2()));
        println!("{h:>8.4} {dt:>8.4} {e:>12.3e} {rate:>6}");
        previous = Some(e);
    }
    Ok(())
}
