//! `DirichletProblem::solve_linear` solves by conjugate gradients, which is
//! right only for an affine physics with a symmetric positive definite
//! Jacobian. These tests give it what it cannot solve — a nonlinear
//! physics, an advection–diffusion (non-symmetric), an indefinite and a
//! singular problem — and check that each is refused with an error that
//! names the physics and says what to do, under every preconditioner; that
//! the suggested `solve_nonlinear` does solve the first two; and that CG's
//! tolerance is checked against what the precision can reach and its
//! reported residual is the true one (the cases of issue 19). All on the
//! native backend (host vectors): the checks are the same code on the
//! device.

use std::sync::Arc;

use femquad::backend::Backend;
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_square};
use femquad::multigrid::MeshHierarchy;
use femquad::operator::Operator;
use femquad::physics::builtin::{NonlinearDiffusion, Poisson};
use femquad::physics::{EvalPrecision, Pointwise, PointwiseEvalBoth};
use femquad::pointwise;
use femquad::quadrature::Quadrature;
use femquad::solve::{
    DirichletProblem, GmresOptions, JacobianProducts, NewtonOptions, Preconditioner,
};
use femquad::space::FunctionSpace;
use femquad::vector::VectorOps;
use femquad::{Error, Real};

/// Advection–diffusion `−Δu + β·∇u = 1`, `β = (constants[0], 0)`: affine,
/// with a non-symmetric Jacobian.
#[pointwise]
fn advection_diffusion<const D: usize>(
    grad_u: &[[f64; D]; 1],
    constants: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = constants[0] * grad_u[0][0] - 1.0;
    f1[0] = grad_u[0];
}

/// Helmholtz `−Δu − k²u = 1` with `k² = constants[0]`: affine and
/// symmetric, indefinite once `k²` exceeds the smallest Dirichlet
/// eigenvalue of `−Δ` (`2π²` on the unit square).
#[pointwise]
fn helmholtz<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    constants: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = -constants[0] * u[0] - 1.0;
    f1[0] = grad_u[0];
}

/// Multigrid (the default), Jacobi and none.
fn preconditioners() -> [Preconditioner; 3] {
    [
        Preconditioner::default(),
        Preconditioner::Jacobi,
        Preconditioner::None,
    ]
}

fn mesh(n: usize) -> Arc<Mesh> {
    unit_square(
        n,
        &MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 7,
        },
    )
    .unwrap()
    .into()
}

/// The native P1 operator of `physics` with `constants` on `mesh`.
fn p1_operator<R: EvalPrecision>(
    mesh: &Arc<Mesh>,
    physics: &'static dyn PointwiseEvalBoth,
    constants: &[f64],
) -> Operator<R> {
    let element = Element::lagrange(2, 1).unwrap();
    let space = FunctionSpace::new(mesh.clone(), element, 1).unwrap();
    let q = Quadrature::default_for(&element).unwrap();
    let form = Form::new(space, R::physics(physics))
        .and_then(|f| f.with_quadrature(q))
        .and_then(|f| f.with_constants(constants))
        .unwrap();
    Operator::new(form, &Backend::native()).unwrap()
}

/// The P1 problem of `physics` with `constants`, u = g on the boundary of
/// the unit square (`n` × `n` squares), a two-level hierarchy for
/// multigrid, preconditioned by `pc`.
fn problem_with<R: EvalPrecision>(
    n: usize,
    pc: &Preconditioner,
    physics: &'static dyn PointwiseEvalBoth,
    constants: &[f64],
    g: impl Fn(&[f64], &mut [f64]) + Sync,
) -> DirichletProblem<R> {
    let h = MeshHierarchy::new(&mesh(n), 1).unwrap();
    let r = p1_operator(h.finest(), physics, constants);
    let mut p = DirichletProblem::on_hierarchy(r, h, g).unwrap();
    p.set_preconditioner(pc.clone());
    p
}

/// [`problem_with`] u = 0 on the boundary.
fn problem<R: EvalPrecision>(
    n: usize,
    pc: &Preconditioner,
    physics: &'static dyn PointwiseEvalBoth,
    constants: &[f64],
) -> DirichletProblem<R> {
    problem_with(n, pc, physics, constants, |_, g| g[0] = 0.0)
}

/// `‖G(u)‖ / ‖G(u_D)‖`: the relative residual of `u` for the constrained
/// residual `G` (the free rows of `F`, `u − g` on the fixed ones), computed
/// from `u` itself.
fn true_relative_residual<R: Real>(
    p: &mut DirichletProblem<R>,
    u: &femquad::backend::Vector<R>,
) -> f64 {
    let mut r = p.operator().vector().unwrap();
    p.constrained_residual(u, &mut r).unwrap();
    let base: Vec<R> = p.fixed_values().iter().map(|&v| R::from_f64(v)).collect();
    let base = p.operator().vector_from(&base).unwrap();
    let mut r0 = p.operator().vector().unwrap();
    p.constrained_residual(&base, &mut r0).unwrap();
    r.norm2().unwrap() / r0.norm2().unwrap()
}

/// The error's argument name and message, for a refused solve (printed:
/// `--nocapture` shows what the user reads).
fn refused(e: Error) -> (&'static str, String) {
    let text = e.to_string();
    eprintln!("{text}\n");
    match e {
        Error::InvalidArgument { name, .. } => (name, text),
        other => panic!("expected an argument error, got {other}"),
    }
}

/// A nonlinear physics is not solved as if it were linear: before, Jacobi
/// returned `Ok` with a CG residual of 5.7e-11 while `‖F(u)‖` was 6.41, and
/// multigrid failed with a Cholesky message. Now every preconditioner
/// refuses it, pointing to `solve_nonlinear`, which solves it.
#[test]
fn a_nonlinear_physics_is_refused_and_solve_nonlinear_solves_it() {
    assert!(!NonlinearDiffusion.info().linear);
    let g = |x: &[f64], o: &mut [f64]| o[0] = 1.0 + x[0];
    for pc in &preconditioners() {
        let mut p = problem_with::<f64>(4, pc, &NonlinearDiffusion, &[], g);
        let (name, text) = refused(p.solve_linear(1e-10, 500).unwrap_err());
        assert_eq!(name, "physics", "{text}");
        assert!(
            text.contains("`nonlinear_diffusion` is not (provably) affine")
                && text.contains("Use solve_nonlinear"),
            "{}: {text}",
            pc.name()
        );
        let (u, stats) = p
            .solve_nonlinear(None, JacobianProducts::Exact, &NewtonOptions::default())
            .unwrap();
        let rel = true_relative_residual(&mut p, &u);
        assert!(rel <= 1e-10, "{}: {rel:e} {stats:?}", pc.name());
    }
}

/// A non-symmetric (advection–diffusion) physics: before, multigrid failed
/// with "Cholesky needs a symmetric matrix" and no pointer to GMRES. Now
/// every preconditioner refuses it before CG, saying it is not symmetric
/// and to use `solve_nonlinear`, which solves it.
#[test]
fn a_non_symmetric_physics_is_refused_and_solve_nonlinear_solves_it() {
    let beta = [20.0];
    for pc in &preconditioners() {
        let mut p = problem::<f64>(4, pc, &AdvectionDiffusion, &beta);
        let (name, text) = refused(p.solve_linear(1e-10, 500).unwrap_err());
        assert_eq!(name, "physics", "{text}");
        assert!(
            text.contains(
                "the Jacobian of `advection_diffusion` on the free dofs is not symmetric"
            ) && text.contains("use solve_nonlinear"),
            "{}: {text}",
            pc.name()
        );
        // affine: one Newton step when GMRES solves to the Newton tolerance
        let opts = NewtonOptions {
            linear: GmresOptions {
                tol: 1e-11,
                ..GmresOptions::default()
            },
            ..NewtonOptions::default()
        };
        let (u, stats) = p
            .solve_nonlinear(None, JacobianProducts::Exact, &opts)
            .unwrap();
        let rel = true_relative_residual(&mut p, &u);
        assert!(rel <= 1e-10, "{}: {rel:e} {stats:?}", pc.name());
        assert_eq!(stats.iterations, 1, "{stats:?}");
    }
}

/// A symmetric but indefinite problem (Helmholtz beyond the first
/// eigenvalue), and one whose operator is negative definite (a sign
/// error): refused with "not positive definite", naming the physics and
/// saying what to do — by the random probe, the multigrid setup or CG,
/// whichever meets it first.
#[test]
fn an_indefinite_physics_is_refused() {
    for k2 in [200.0, 1e6] {
        for pc in &preconditioners() {
            let mut p = problem::<f64>(4, pc, &Helmholtz, &[k2]);
            let (name, text) = refused(p.solve_linear(1e-10, 500).unwrap_err());
            assert_eq!(name, "physics", "k² = {k2}, {}: {text}", pc.name());
            assert!(
                text.contains("Jacobian of `helmholtz`")
                    && text.contains("not positive definite")
                    && text.contains("solve_nonlinear"),
                "k² = {k2}, {}: {text}",
                pc.name()
            );
        }
    }
}

/// A singular problem (no Dirichlet dofs: the constants are in the kernel
/// of the Laplacian) with multigrid: the coarse Cholesky meets a
/// non-positive pivot, reported as the physics' Jacobian being singular,
/// with "fix more dofs" — not as an error of an argument `coarse operator`
/// the user never passed.
#[test]
fn a_singular_problem_says_to_fix_more_dofs() {
    let m = mesh(4);
    let r = p1_operator::<f64>(&m, &Poisson, &[1.0]);
    let n = r.space().n_dofs();
    let mut p = DirichletProblem::new(r, &[], &vec![0.0; n])
        .unwrap()
        .with_hierarchy(MeshHierarchy::single(m))
        .unwrap();
    let (name, text) = refused(p.solve_linear(1e-10, 500).unwrap_err());
    assert_eq!(name, "physics", "{text}");
    assert!(
        text.contains("multigrid for the Jacobian of `poisson`")
            && text.contains("not positive definite")
            && text.contains("fix more dofs")
            && !text.contains("coarse operator"),
        "{text}"
    );
}

/// The tolerances of issue 19 that CG claimed to reach: f32 with 1e-12
/// (reported 3.7e-13, true 4.9e-6) and f64 with 1e-30 (reported 2.7e-31,
/// true 7.5e-14). Both are below the machine epsilon of the precision and
/// refused, with the bound.
#[test]
fn tolerances_below_the_precision_are_refused_with_the_bound() {
    for pc in &preconditioners() {
        let mut p32 = problem::<f32>(4, pc, &Poisson, &[1.0]);
        let (name, text) = refused(p32.solve_linear(1e-12, 500).unwrap_err());
        assert_eq!(name, "tol", "{text}");
        assert!(
            text.contains("tol = 1e-12 is below the machine epsilon")
                && text.contains("(f32: ε = 1.1920928955078125e-7)")
                && text.contains("Choose tol ≥ 1.1920928955078125e-7")
                && text.contains("or solve in f64"),
            "{text}"
        );
        let mut p64 = problem::<f64>(4, pc, &Poisson, &[1.0]);
        let (name, text) = refused(p64.solve_linear(1e-30, 500).unwrap_err());
        assert_eq!(name, "tol", "{text}");
        assert!(
            text.contains("tol = 1e-30 is below the machine epsilon")
                && text.contains("(f64: ε = 2.220446049250313e-16)"),
            "{text}"
        );
    }
}

/// What CG reports is the residual of the solution it returns: in f32 and
/// f64, under every preconditioner, the reported relative residual meets
/// the tolerance and equals `‖G(u)‖/‖G(u_D)‖` computed from the returned
/// `u` within the rounding of the two ways of computing it
/// (`b − A v` against `F(u_D + v)`).
#[test]
fn the_reported_residual_is_the_residual_of_the_solution() {
    for pc in &preconditioners() {
        for (tol, check) in [
            (1e-5, check_reported::<f32> as fn(_, _)),
            (1e-12, check_reported::<f64>),
        ] {
            check(pc, tol);
        }
    }
}

fn check_reported<R: EvalPrecision>(pc: &Preconditioner, tol: f64) {
    let mut p = problem::<R>(8, pc, &Poisson, &[1.0]);
    let (u, stats) = p.solve_linear(tol, 2000).unwrap();
    let true_rel = true_relative_residual(&mut p, &u);
    let eps = R::EPSILON.to_f64();
    eprintln!(
        "{} {}: reported {:e}, true {true_rel:e}, {} iterations",
        R::PRECISION,
        pc.name(),
        stats.relative_residual,
        stats.iterations
    );
    assert!(stats.relative_residual <= tol, "{stats:?}");
    assert_eq!(stats.history.last(), Some(&stats.residual_norm));
    assert!(
        (stats.relative_residual - true_rel).abs() <= 1e-2 * true_rel + 10.0 * eps * tol,
        "{} {}: reported {:e}, true {true_rel:e}",
        R::PRECISION,
        pc.name(),
        stats.relative_residual
    );
}
