//! Time-dependent problems on the native backend: the heat equation with a
//! manufactured solution (temporal rates of backward Euler, Crank–Nicolson
//! and BDF2; adaptive steps), a long run reaching the stationary solution,
//! the shifted Jacobian against differences, and misuse as errors.

use femquad::physics::builtin::Poisson;
use femquad::prelude::*;
use femquad::quadrature::Quadrature;
use femquad::solve::JacobianProducts;
use femquad::time::{Adaptive, Scheme, StepControl, TimeIntegrator};

/// The exact solution `u = T(t)·q(x)`, `T = 1 + sin(2t)`,
/// `q = 1 + x² + 2y²` (quadratic in space: P2 holds it exactly, so the
/// semi-discrete solution is `u` itself and every error is the scheme's).
fn exact(t: f64, x: &[f64]) -> f64 {
    (1.0 + (2.0 * t).sin()) * (1.0 + x[0] * x[0] + 2.0 * x[1] * x[1])
}

/// `u_t − Δu = f` with `f = T'·q − 6·T` for [`exact`] (`Δq = 6`).
#[femquad::pointwise]
fn heat_mms(
    u_t: &[f64; 1],
    grad_u: &[[f64; 2]; 1],
    x: &[f64; 2],
    t: f64,
    f0: &mut [f64; 1],
    f1: &mut [[f64; 2]; 1],
) {
    let q = 1.0 + x[0] * x[0] + 2.0 * x[1] * x[1];
    let f = 2.0 * (2.0 * t).cos() * q - 6.0 * (1.0 + (2.0 * t).sin());
    f0[0] = u_t[0] - f;
    f1[0][0] = grad_u[0][0];
    f1[0][1] = grad_u[0][1];
}

/// `u_t − Δu = 1`.
#[femquad::pointwise]
fn heat_source<const D: usize>(
    u_t: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = u_t[0] - 1.0;
    for d in 0..D {
        f1[0][d] = grad_u[0][d];
    }
}

/// A nonlinear transient physics: `f0 = (1 + u²)·u_t + u³ + t·x₀`,
/// `f1 = (1 + u_t²)·∇u`.
#[femquad::pointwise]
fn nonlinear_transient(
    u: &[f64; 1],
    grad_u: &[[f64; 2]; 1],
    u_t: &[f64; 1],
    x: &[f64; 2],
    t: f64,
    f0: &mut [f64; 1],
    f1: &mut [[f64; 2]; 1],
) {
    f0[0] = (1.0 + u[0] * u[0]) * u_t[0] + u[0] * u[0] * u[0] + t * x[0];
    f1[0][0] = (1.0 + u_t[0] * u_t[0]) * grad_u[0][0];
    f1[0][1] = (1.0 + u_t[0] * u_t[0]) * grad_u[0][1];
}

/// The MMS problem on a P2 mesh of `n`×`n` squares, `u = exact` on the
/// boundary at every time.
fn mms_integrator(scheme: Scheme) -> TimeIntegrator<DirichletProblem<f64>> {
    let mesh = unit_square(2, &MeshOptions::default()).unwrap();
    let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let form = Form::new(space, HeatMms)
        .unwrap()
        .with_quadrature(Quadrature::simplex(2, 4).unwrap())
        .unwrap();
    let op = Operator::<f64>::new(form, &Backend::native()).unwrap();
    let problem = DirichletProblem::on_boundary(op, |x, g| g[0] = exact(0.0, x)).unwrap();
    TimeIntegrator::new(problem, scheme)
        .unwrap()
        .with_boundary_values(|t, x, g| g[0] = exact(t, x))
}

/// The max nodal error at `t_end = 1` with steps `dt`.
fn mms_error(scheme: Scheme, dt: f64) -> f64 {
    let mut integrator = mms_integrator(scheme);
    let space = integrator.problem().space().clone();
    let u0 = space.interpolate(|x, u| u[0] = exact(0.0, x));
    let (u, stats) = integrator
        .run(&u0, 0.0, 1.0, StepControl::Fixed(dt))
        .unwrap();
    assert_eq!(stats.steps, (1.0 / dt).round() as usize);
    let exact_end = space.interpolate(|x, u| u[0] = exact(1.0, x));
    u.to_host()
        .unwrap()
        .iter()
        .zip(&exact_end)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// The observed orders `log2(e(dt)/e(dt/2))`.
fn rates(scheme: Scheme, dts: &[f64]) -> Vec<f64> {
    let errors: Vec<f64> = dts.iter().map(|&dt| mms_error(scheme, dt)).collect();
    eprintln!("{scheme:?}: errors {errors:?}");
    errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect()
}

/// A step of the affine heat problem is one Krylov solve (the integrator
/// takes it to Newton's tolerance): one Newton step per time step; the
/// nonlinear transient needs more.
#[test]
fn an_affine_step_is_one_newton_step_and_a_nonlinear_one_more() {
    let mut integrator = mms_integrator(Scheme::BackwardEuler);
    let u0 = integrator
        .problem()
        .space()
        .interpolate(|x, u| u[0] = exact(0.0, x));
    let (_, stats) = integrator
        .run(&u0, 0.0, 0.2, StepControl::Fixed(0.05))
        .unwrap();
    assert_eq!(stats.steps, 4);
    assert_eq!(stats.newton_iterations, stats.steps, "{stats:?}");

    let op = nonlinear_operator();
    let n = op.space().n_dofs();
    let problem = DirichletProblem::on_boundary(op, |_, g| g[0] = 0.0).unwrap();
    let mut integrator = TimeIntegrator::new(problem, Scheme::BackwardEuler).unwrap();
    let (_, stats) = integrator
        .run(&wave(n, 0.7), 0.0, 0.1, StepControl::Fixed(0.05))
        .unwrap();
    assert!(stats.newton_iterations > stats.steps, "{stats:?}");
}

#[test]
fn temporal_rates_are_one_for_backward_euler_and_two_for_crank_nicolson_and_bdf2() {
    let dts = [0.05, 0.025, 0.0125, 0.00625];
    let mut wrong = Vec::new();
    for (scheme, order) in [
        (Scheme::BackwardEuler, 1.0),
        (Scheme::CRANK_NICOLSON, 2.0),
        (Scheme::Bdf2, 2.0),
    ] {
        let r = rates(scheme, &dts);
        eprintln!("{scheme:?}: rates {r:?}");
        if (r[r.len() - 1] - order).abs() > 0.1 {
            wrong.push(format!("{scheme:?}: rates {r:?}, expected {order}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn adaptive_steps_meet_their_tolerance_on_the_manufactured_solution() {
    for scheme in [Scheme::BackwardEuler, Scheme::Bdf2] {
        let mut errors = Vec::new();
        for tol in [1e-4, 1e-5] {
            let mut integrator = mms_integrator(scheme);
            let space = integrator.problem().space().clone();
            let u0 = space.interpolate(|x, u| u[0] = exact(0.0, x));
            let (u, stats) = integrator
                .run(
                    &u0,
                    0.0,
                    1.0,
                    StepControl::Adaptive(Adaptive::new(0.1, tol)),
                )
                .unwrap();
            let exact_end = space.interpolate(|x, u| u[0] = exact(1.0, x));
            let err = u
                .to_host()
                .unwrap()
                .iter()
                .zip(&exact_end)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            eprintln!("{scheme:?} tol {tol:e}: error {err:e}, {stats:?}");
            assert!(stats.max_error_estimate.unwrap() <= tol);
            // each step's local error below tol: the global error of this
            // contractive problem is at most their sum
            assert!(err <= tol * stats.steps as f64, "{err:e} {stats:?}");
            let total: f64 = stats.step_sizes.iter().sum();
            assert!((total - 1.0).abs() < 1e-12, "{total}");
            errors.push((err, stats.steps));
        }
        // a tighter tolerance: more steps, a smaller error
        assert!(
            errors[1].1 > errors[0].1 && errors[1].0 < errors[0].0,
            "{errors:?}"
        );
    }
}

#[test]
fn a_long_run_reaches_the_stationary_solution() {
    let mesh = unit_square(4, &MeshOptions::default()).unwrap();
    let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    // the stationary problem −Δu = 1, u = 0 on the boundary
    let form = Form::new(space.clone(), Poisson)
        .unwrap()
        .with_constants(&[1.0])
        .unwrap();
    let op = Operator::<f64>::new(form, &Backend::native()).unwrap();
    let mut stationary = DirichletProblem::on_boundary(op, |_, g| g[0] = 0.0).unwrap();
    let (u_s, _) = stationary.solve_linear(1e-12, 100).unwrap();
    let u_s = u_s.to_host().unwrap();

    let op = Operator::<f64>::new(
        Form::new(space.clone(), HeatSource).unwrap(),
        &Backend::native(),
    )
    .unwrap();
    let problem = DirichletProblem::on_boundary(op, |_, g| g[0] = 0.0).unwrap();
    let mut integrator = TimeIntegrator::new(problem, Scheme::BackwardEuler).unwrap();
    let u0 = vec![0.0; space.n_dofs()];
    let (u, stats) = integrator
        .run(&u0, 0.0, 20.0, StepControl::Fixed(0.5))
        .unwrap();
    assert_eq!(stats.steps, 40);
    let diff = u
        .to_host()
        .unwrap()
        .iter()
        .zip(&u_s)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let top = u_s.iter().cloned().fold(0.0, f64::max);
    assert!(top > 0.05, "{top}");
    assert!(diff <= 1e-9 * top, "{diff:e}");
}

/// The operator of [`NonlinearTransient`] on a jittered P2 mesh.
fn nonlinear_operator() -> Operator<f64> {
    let mesh = unit_square(
        3,
        &MeshOptions {
            jitter: 0.15,
            shuffle: true,
            seed: 7,
        },
    )
    .unwrap();
    let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    Operator::<f64>::new(
        Form::new(space, NonlinearTransient).unwrap(),
        &Backend::native(),
    )
    .unwrap()
}

fn wave(n: usize, k: f64) -> Vec<f64> {
    (0..n).map(|i| 0.3 * (k * i as f64).sin()).collect()
}

#[test]
fn the_shifted_jacobian_is_the_derivative_of_f_at_u_t_sigma_u_plus_b() {
    let mut op = nonlinear_operator();
    let n = op.space().n_dofs();
    let (sigma, t) = (7.5, 0.4);
    let b = op.vector_from(&wave(n, 1.3)).unwrap();
    op.set_time(t, sigma, &b).unwrap();
    let u_h = wave(n, 0.7);
    let v_h = wave(n, 2.9);
    let u = op.vector_from(&u_h).unwrap();
    let v = op.vector_from(&v_h).unwrap();
    let mut jv = op.vector().unwrap();
    op.jacobian_action(&u, &v, &mut jv).unwrap();
    let jv = jv.to_host().unwrap();
    // central differences of F(t, u, σu + b) along v
    let h = 1e-5;
    let mut f = |s: f64| {
        let x: Vec<f64> = u_h.iter().zip(&v_h).map(|(u, v)| u + s * v).collect();
        let x = op.vector_from(&x).unwrap();
        let mut r = op.vector().unwrap();
        op.apply(&x, &mut r).unwrap();
        r.to_host().unwrap()
    };
    let (fp, fm) = (f(h), f(-h));
    let differences: Vec<f64> = (0..n).map(|i| (fp[i] - fm[i]) / (2.0 * h)).collect();
    let scale = differences.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let max_diff = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
            / scale
    };
    // the assembled Jacobian (its product and its diagonal) and the
    // matrix-free diagonal, each against the differences
    let a = op.assemble_jacobian(&u).unwrap();
    let mut av = vec![0.0; n];
    a.spmv(&v_h, &mut av).unwrap();
    let mut diag = op.vector().unwrap();
    op.jacobian_diagonal(&u, &mut diag).unwrap();
    let diag = diag.to_host().unwrap();
    let diag_scale = diag.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diag_diff = a
        .diagonal()
        .iter()
        .zip(&diag)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / diag_scale;
    // the σ part matters: without it the action would differ by far more
    let (jv_err, av_err) = (max_diff(&jv, &differences), max_diff(&av, &differences));
    eprintln!("J·v {jv_err:e}, CSR·v {av_err:e}, diagonals {diag_diff:e}");
    assert!(
        jv_err <= 1e-7 && av_err <= 1e-7 && diag_diff <= 1e-12,
        "relative differences: J·v {jv_err:e}, CSR·v {av_err:e}, CSR diagonal vs \
         jacobian_diagonal {diag_diff:e}"
    );
}

#[test]
fn transient_misuse_is_a_clear_error() {
    // a transient physics evaluated without a time state
    let mut op = nonlinear_operator();
    let n = op.space().n_dofs();
    let u = op.vector_from(&wave(n, 0.7)).unwrap();
    let mut r = op.vector().unwrap();
    let e = op.apply(&u, &mut r).unwrap_err().to_string();
    assert!(
        e.contains("`nonlinear_transient` reads `u_t`: bind a time state (Operator::set_time"),
        "{e}"
    );
    let e = op.jacobian_action(&u, &u, &mut r).unwrap_err().to_string();
    assert!(e.contains("bind a time state"), "{e}");
    let e = op.set_time(f64::NAN, 1.0, &u).unwrap_err().to_string();
    assert!(e.contains("`t`") || e.contains("t"), "{e}");
    // and a stationary solve of it
    let problem = DirichletProblem::on_boundary(op, |_, g| g[0] = 0.0).unwrap();
    let mut problem = problem;
    let e = problem
        .solve_nonlinear(None, JacobianProducts::Exact, &Default::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("reads `u_t`: bind a time state"), "{e}");

    // a stationary physics given to an integrator
    let mesh = unit_square(2, &MeshOptions::default()).unwrap();
    let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let form = Form::new(space, Poisson)
        .unwrap()
        .with_constants(&[1.0])
        .unwrap();
    let op = Operator::<f64>::new(form, &Backend::native()).unwrap();
    let problem = DirichletProblem::on_boundary(op, |_, g| g[0] = 0.0).unwrap();
    let e = TimeIntegrator::new(problem, Scheme::BackwardEuler)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("`poisson` does not read `u_t` (nor does a boundary term): it is stationary"),
        "{e}"
    );

    // θ outside (0, 1], dt ≤ 0 or not finite, t_end < t0
    let e = TimeIntegrator::new(
        DirichletProblem::on_boundary(nonlinear_operator(), |_, g| g[0] = 0.0).unwrap(),
        Scheme::Theta(1.5),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        e.contains("theta") && e.contains("must be in (0, 1]"),
        "{e}"
    );
    let mut integrator = mms_integrator(Scheme::BackwardEuler);
    let u0 = vec![0.0; integrator.problem().space().n_dofs()];
    for dt in [0.0, -0.1, f64::NAN] {
        let e = integrator
            .run(&u0, 0.0, 1.0, StepControl::Fixed(dt))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("dt") && e.contains("must be a finite number > 0"),
            "{e}"
        );
    }
    let e = integrator
        .run(&u0, 1.0, 0.5, StepControl::Fixed(0.1))
        .unwrap_err()
        .to_string();
    assert!(e.contains("0.5 is before t0 = 1"), "{e}");
}

#[test]
fn progress_and_a_paraview_series_are_reported() {
    use std::sync::{Arc, Mutex};
    let dir = std::env::temp_dir().join(format!("femquad_time_series_{}", std::process::id()));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_in = Arc::clone(&seen);
    let integrator = mms_integrator(Scheme::Bdf2);
    let series =
        femquad::output::TimeSeries::new(&dir, "u", integrator.problem().space(), 3).unwrap();
    let mut integrator = integrator.with_output(series).with_progress(move |r| {
        seen_in
            .lock()
            .unwrap()
            .push((r.step, r.t, r.newton_iterations))
    });
    let u0 = integrator
        .problem()
        .space()
        .interpolate(|x, u| u[0] = exact(0.0, x));
    integrator
        .run(&u0, 0.0, 0.7, StepControl::Fixed(0.1))
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 7);
    assert!(
        seen.iter()
            .enumerate()
            .all(|(i, s)| s.0 == i + 1 && s.2 >= 1)
    );
    assert!((seen[6].1 - 0.7).abs() < 1e-12);
    // t = 0, steps 3 and 6, and the last (7)
    let times = integrator.output().unwrap().times();
    assert_eq!(times.len(), 4, "{times:?}");
    assert!((times[3] - 0.7).abs() < 1e-12);
    assert!(dir.join("u.pvd").exists() && dir.join("u_000007.vtu").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
