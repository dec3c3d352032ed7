//! Boundary terms in time-dependent problems: a boundary physics reads `u_t`
//! (a dynamic boundary condition) and `t` (a flux `g(t, x)`), evaluated at
//! the facet points with the cells' time state `u_t = σ·u + b`, natively
//! and on the device (PoCL in CI).
//!
//! * With a time state bound, `F(u)`, `J(u)·v` and the point-block diagonal
//!   of forms with transient boundary terms equal the native reference on
//!   the device (f64 ≤ 1e-12 relative to the largest entry) in both
//!   assembly modes; so does the device's assembled matrix, against the
//!   host CSR.
//! * The step Jacobian's boundary part (`σ·∂f0/∂u_t + ∂f0/∂u`) equals
//!   central differences of `F` and the host-assembled matrix.
//! * Backward Euler on the heat equation with a dynamic boundary condition
//!   and a time-dependent Neumann flux (manufactured solution, exact in
//!   space for P2) converges at rate 1 in `Δt`; one step on the device
//!   equals the native one.
//! * A backward-Euler step with multigrid on a mesh with a Robin-type
//!   dynamic boundary converges in a bounded number of iterations (the
//!   levels integrate the boundary term with the finest level's time state).

use std::sync::Arc;

use femquad::facet::{BoundaryTerm, FacetSet};
use femquad::mesh::MeshPart;
use femquad::opencl::Assembly;
use femquad::opencl::testing;
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;
use femquad::quadrature::Quadrature;
use femquad::time::{Scheme, StepControl, TimeIntegrator};

/// `f0 = (1 + u²)·u_t + c₀·u·(∇u·n) + t·(1 + x₀)·u − c₁`: reads `u`, `grad_u`,
/// `u_t`, `x`, `n`, `t` and constants, nonlinear in `u` and `u_t`.
#[pointwise]
fn transient_boundary<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    u_t: &[f64; 1],
    x: &[f64; D],
    n: &[f64; D],
    t: f64,
    constants: &[f64; 2],
    f0: &mut [f64; 1],
) {
    let mut dn = 0.0;
    for d in 0..D {
        dn += grad_u[0][d] * n[d];
    }
    f0[0] = (1.0 + u[0] * u[0]) * u_t[0] + constants[0] * u[0] * dn + t * (1.0 + x[0]) * u[0]
        - constants[1];
}

/// `f0 = −t·(1 + x₀·x₁)`: a time-dependent flux `g(t, x)`, reads `t` and
/// `x` only.
#[pointwise]
fn time_flux<const D: usize>(x: &[f64; D], t: f64, f0: &mut [f64; 1]) {
    f0[0] = -t * (1.0 + x[0] * x[1]);
}

/// `f0 = (1 + u²)·u_t + u³ + t·x₀`, `f1 = ∇u`: a transient cell physics.
#[pointwise]
fn transient_cells<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    u_t: &[f64; 1],
    x: &[f64; D],
    t: f64,
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = (1.0 + u[0] * u[0]) * u_t[0] + u[0] * u[0] * u[0] + t * x[0];
    for d in 0..D {
        f1[0][d] = grad_u[0][d];
    }
}

fn jittered(dim: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 7,
    };
    Arc::new(unit_box(dim, if dim == 2 { 4 } else { 2 }, &opts).unwrap())
}

/// The form on `backend`: transient cells (or the stationary Laplacian:
/// a dynamic boundary condition alone makes the problem transient), with
/// `TransientBoundary` on the sides `x₀ = 0` and `x₁ = 1` and `TimeFlux` on
/// `x₀ = 1`.
fn operator(dim: usize, order: usize, transient_cells: bool, backend: &Backend) -> Operator<f64> {
    let m = jittered(dim);
    let space = FunctionSpace::new(m.clone(), Element::lagrange(dim, order).unwrap(), 1).unwrap();
    let dynamic = FacetSet::boundary_where(&m, |x| x[0] < 1e-12 || x[1] > 1.0 - 1e-12).unwrap();
    let flux = FacetSet::boundary_where(&m, |x| x[0] > 1.0 - 1e-12).unwrap();
    let dynamic = BoundaryTerm::new(dynamic, TransientBoundary)
        .unwrap()
        .with_constants(&[0.7, 0.2])
        .unwrap();
    let flux = BoundaryTerm::new(flux, TimeFlux).unwrap();
    let form = if transient_cells {
        Form::new(space, TransientCells).unwrap()
    } else {
        Form::new(space, Laplacian).unwrap()
    };
    let form = form
        .with_boundary(dynamic)
        .unwrap()
        .with_boundary(flux)
        .unwrap();
    Operator::new(form, backend).unwrap()
}

fn values(n: usize, phase: f64) -> Vec<f64> {
    (0..n)
        .map(|i| 0.5 + 0.4 * (1.3 * i as f64 + phase).sin())
        .collect()
}

/// The time state of the comparisons: `t = 0.4`, `σ = 7.5`, `b = values(1)`.
fn bind_time(op: &mut Operator<f64>) {
    let n = op.space().n_dofs();
    let b = op.vector_from(&values(n, 1.0)).unwrap();
    op.set_time(0.4, 7.5, &b).unwrap();
}

/// `F(u)`, `J(u)·v` and the diagonal of `op` at the time state of
/// [`bind_time`], on the host.
fn evaluate(op: &mut Operator<f64>) -> [Vec<f64>; 3] {
    bind_time(op);
    let n = op.space().n_dofs();
    let u = op.vector_from(&values(n, 0.0)).unwrap();
    let v = op.vector_from(&values(n, 2.0)).unwrap();
    let mut r = op.vector().unwrap();
    op.apply(&u, &mut r).unwrap();
    let mut jv = op.vector().unwrap();
    op.jacobian_action(&u, &v, &mut jv).unwrap();
    let mut d = op.vector().unwrap();
    op.jacobian_diagonal(&u, &mut d).unwrap();
    [
        r.to_host().unwrap(),
        jv.to_host().unwrap(),
        d.to_host().unwrap(),
    ]
}

/// The cases `(dim, order, transient cells)`.
const CASES: [(usize, usize, bool); 4] = [(2, 1, true), (2, 2, true), (3, 1, true), (2, 1, false)];

#[test]
fn device_transient_boundary_terms_equal_the_native_reference() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for (dim, order, cells) in CASES {
        let reference = evaluate(&mut operator(dim, order, cells, &Backend::native()));
        let mut gpu = operator(dim, order, cells, &device);
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            gpu.set_assembly(assembly).unwrap();
            let got = evaluate(&mut gpu);
            for (what, (a, b)) in ["F(u)", "J(u)·v", "diag J(u)"]
                .iter()
                .zip(reference.iter().zip(&got))
            {
                let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let diff = (x - y).abs() / scale;
                    assert!(
                        diff <= 1e-12,
                        "{dim}D P{order} transient cells {cells} {assembly:?} {what}[{i}]: \
                         native {x} device {y} (relative {diff:e})"
                    );
                }
            }
        }
    }
}

/// With a time state bound, the device's assembled matrix
/// (`Operator::assemble_matrix`) of forms with transient boundary terms —
/// their step Jacobian `σ·∂f0/∂u_t + ∂f0/∂u`, from the boundary tangent
/// with the direction `σ·φ_b` in `u_t` — is the host CSR
/// (`Operator::assemble_jacobian`, `g0 + σ·g0_t`) to 1e-12 relative to the
/// largest entry, in both assembly modes.
#[test]
fn the_device_assembled_step_jacobian_includes_the_transient_boundary_terms() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for (dim, order, cells) in CASES {
        let mut op = operator(dim, order, cells, &device);
        bind_time(&mut op);
        let u = op.vector_from(&values(op.space().n_dofs(), 0.0)).unwrap();
        let host = op.assemble_jacobian(&u).unwrap();
        let scale = host.values().iter().fold(0.0f64, |m, x| m.max(x.abs()));
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            op.set_assembly(assembly).unwrap();
            let a = op.assemble_matrix(&u).unwrap().to_host().unwrap();
            assert!(Arc::ptr_eq(a.pattern(), host.pattern()));
            for (k, (x, y)) in host.values().iter().zip(a.values()).enumerate() {
                let diff = (x - y).abs() / scale;
                assert!(
                    diff <= 1e-12,
                    "{dim}D P{order} transient cells {cells} {assembly:?} entry {k}: host {x} \
                     device {y} (relative {diff:e})"
                );
            }
        }
    }
}

/// The boundary terms' part of `F` moves with the time state: with the
/// stationary Laplacian in the cells, a change of `t` moves `F` at the
/// nodes of the sides with a term (`x₀ = 0`, `x₁ = 1`: `TransientBoundary`;
/// `x₀ = 1`: `TimeFlux`) and nowhere else, a change of `σ` at the nodes of
/// `TransientBoundary`'s sides only — so the facets see the bound `t` and
/// `u_t = σ·u + b`, not a stationary `t = 0`, `u_t = 0`.
#[test]
fn the_boundary_residual_depends_on_the_time_state() {
    for backend in [
        Backend::native(),
        Backend::opencl_with(testing::device(), testing::options()),
    ] {
        let mut op = operator(2, 1, false, &backend);
        let n = op.space().n_dofs();
        let x = op.space().node_coordinates();
        let u = op.vector_from(&values(n, 0.0)).unwrap();
        let at = |op: &mut Operator<f64>, t: f64, sigma: f64| {
            let b = op.vector_from(&values(n, 1.0)).unwrap();
            op.set_time(t, sigma, &b).unwrap();
            let mut r = op.vector().unwrap();
            op.apply(&u, &mut r).unwrap();
            r.to_host().unwrap()
        };
        let base = at(&mut op, 0.4, 7.5);
        let dynamic = |x: &[f64]| x[0] < 1e-12 || x[1] > 1.0 - 1e-12;
        let flux = |x: &[f64]| x[0] > 1.0 - 1e-12;
        for (t, sigma) in [(0.9, 7.5), (0.4, 2.0)] {
            let other = at(&mut op, t, sigma);
            for i in 0..n {
                let xi = &x[2 * i..2 * i + 2];
                let moves = dynamic(xi) || (t != 0.4 && flux(xi));
                let moved = (base[i] - other[i]).abs() > 1e-12;
                assert_eq!(
                    moved, moves,
                    "dof {i} at {xi:?}, t = {t}, σ = {sigma}: {} vs {}",
                    base[i], other[i]
                );
            }
        }
    }
}

/// With a time state bound, `J(u)·v` (AD tangent with the direction `σ·v`
/// in `u_t`) equals the central difference `(F(u + hv) − F(u − hv))/2h` to
/// 1e-7 (`F` evaluated with `u_t = σ·(u ± hv) + b`), the host-assembled
/// matrix's `A·v` to 1e-12, and the point diagonal the matrix's diagonal.
#[test]
fn the_transient_boundary_jacobian_matches_differences_and_the_assembled_matrix() {
    for (dim, order, cells) in CASES {
        let mut op = operator(dim, order, cells, &Backend::native());
        bind_time(&mut op);
        let n = op.space().n_dofs();
        let (u_h, v_h) = (values(n, 0.0), values(n, 2.0));
        let u = op.vector_from(&u_h).unwrap();
        let v = op.vector_from(&v_h).unwrap();
        let mut jv = op.vector().unwrap();
        op.jacobian_action(&u, &v, &mut jv).unwrap();
        let jv = jv.to_host().unwrap();
        let h = 1e-6;
        let f_at = |op: &mut Operator<f64>, s: f64| {
            let w: Vec<f64> = u_h.iter().zip(&v_h).map(|(a, b)| a + s * b).collect();
            let w = op.vector_from(&w).unwrap();
            let mut r = op.vector().unwrap();
            op.apply(&w, &mut r).unwrap();
            r.to_host().unwrap()
        };
        let (fp, fm) = (f_at(&mut op, h), f_at(&mut op, -h));
        let scale = jv.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1.0);
        for i in 0..n {
            let fd = (fp[i] - fm[i]) / (2.0 * h);
            assert!(
                (jv[i] - fd).abs() <= 1e-7 * scale,
                "{dim}D P{order} cells {cells} dof {i}: J·v {} vs difference {fd}",
                jv[i]
            );
        }
        let a = op.assemble_jacobian(&u).unwrap();
        let mut av = vec![0.0; n];
        a.spmv(&v_h, &mut av).unwrap();
        let mut diag = op.vector().unwrap();
        op.jacobian_diagonal(&u, &mut diag).unwrap();
        let diag = diag.to_host().unwrap();
        for i in 0..n {
            assert!(
                (jv[i] - av[i]).abs() <= 1e-12 * scale,
                "{dim}D P{order} cells {cells} dof {i}: J·v {} vs CSR·v {}",
                jv[i],
                av[i]
            );
            let c = a.diagonal()[i];
            assert!(
                (diag[i] - c).abs() <= 1e-12 * scale,
                "{dim}D P{order} cells {cells} dof {i}: diagonal {} vs CSR {c}",
                diag[i]
            );
        }
    }
}

/// The manufactured solution `u = T(t)·q(x)`, `T = 1 + sin 2t`,
/// `q = 1 + x² + 2y²`: quadratic in space, so P2 holds it exactly and every
/// error is the time scheme's.
fn exact(t: f64, x: &[f64]) -> f64 {
    (1.0 + (2.0 * t).sin()) * (1.0 + x[0] * x[0] + 2.0 * x[1] * x[1])
}

/// `u_t − Δu = f`, `f = T'·q − 6·T` for [`exact`].
#[pointwise]
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

/// The dynamic boundary condition `u_t + ∂u/∂n = g` on the side `x = 1`
/// (`∂u/∂n = ∂u/∂x = 2x·T`): `f0 = u_t − g`, `g = T'·q + 2x·T`.
#[pointwise]
fn dynamic_right(u_t: &[f64; 1], x: &[f64; 2], t: f64, f0: &mut [f64; 1]) {
    let q = 1.0 + x[0] * x[0] + 2.0 * x[1] * x[1];
    let g = 2.0 * (2.0 * t).cos() * q + 2.0 * x[0] * (1.0 + (2.0 * t).sin());
    f0[0] = u_t[0] - g;
}

/// The Neumann flux `∂u/∂n = ∂u/∂y = 4y·T(t)` on the side `y = 1`:
/// `f0 = −4y·T(t)`, depending on time only through `t`.
#[pointwise]
fn flux_top(x: &[f64; 2], t: f64, f0: &mut [f64; 1]) {
    f0[0] = -4.0 * x[1] * (1.0 + (2.0 * t).sin());
}

/// The MMS problem on P2 over 2×2 squares: the heat equation with the
/// dynamic condition on `x = 1`, the flux on `y = 1`, `u = exact` on
/// `x = 0` and `y = 0`.
fn mms_integrator(backend: &Backend) -> TimeIntegrator<DirichletProblem<f64>> {
    let mesh = Arc::new(unit_square(2, &MeshOptions::default()).unwrap());
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let right = FacetSet::boundary_where(&mesh, |x| x[0] == 1.0).unwrap();
    let top = FacetSet::boundary_where(&mesh, |x| x[1] == 1.0).unwrap();
    let form = Form::new(space, HeatMms)
        .unwrap()
        .with_quadrature(Quadrature::simplex(2, 4).unwrap())
        .unwrap()
        .with_boundary(BoundaryTerm::new(right, DynamicRight).unwrap())
        .unwrap()
        .with_boundary(BoundaryTerm::new(top, FluxTop).unwrap())
        .unwrap();
    let op = Operator::<f64>::new(form, backend).unwrap();
    let fixed = MeshPart::boundary_where(&mesh, |x| x[0] == 0.0 || x[1] == 0.0).unwrap();
    let problem =
        DirichletProblem::on_part(op, &fixed, Components::All, |x, g| g[0] = exact(0.0, x))
            .unwrap();
    TimeIntegrator::new(problem, Scheme::BackwardEuler)
        .unwrap()
        .with_boundary_values(|t, x, g| g[0] = exact(t, x))
}

/// The max nodal error at `t_end` with steps `dt` on `backend`.
fn mms_error(backend: &Backend, dt: f64, t_end: f64) -> (f64, Vec<f64>) {
    let mut integrator = mms_integrator(backend);
    let space = integrator.problem().space().clone();
    let u0 = space.interpolate(|x, u| u[0] = exact(0.0, x));
    let (u, stats) = integrator
        .run(&u0, 0.0, t_end, StepControl::Fixed(dt))
        .unwrap();
    assert_eq!(stats.steps, (t_end / dt).round() as usize);
    let u = u.to_host().unwrap();
    let exact_end = space.interpolate(|x, v| v[0] = exact(t_end, x));
    let err = u
        .iter()
        .zip(&exact_end)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    (err, u)
}

#[test]
fn backward_euler_with_a_dynamic_boundary_and_a_time_dependent_flux_has_rate_one() {
    let dts = [0.05, 0.025, 0.0125, 0.00625];
    let errors: Vec<f64> = dts
        .iter()
        .map(|&dt| mms_error(&Backend::native(), dt, 1.0).0)
        .collect();
    let rates: Vec<f64> = errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect();
    eprintln!("backward Euler, dynamic boundary: errors {errors:?}, rates {rates:?}");
    let last = rates[rates.len() - 1];
    assert!(
        (last - 1.0).abs() <= 0.1,
        "rate {last} (errors {errors:?}), expected 1"
    );
    // the error is the scheme's: O(Δt) with a moderate constant
    assert!(errors[3] < 0.05, "errors {errors:?}");
}

#[test]
fn a_backward_euler_step_with_transient_boundary_terms_on_the_device_equals_the_native_one() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    let (_, native) = mms_error(&Backend::native(), 0.05, 0.1);
    let (_, gpu) = mms_error(&device, 0.05, 0.1);
    let scale = native.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = native
        .iter()
        .zip(&gpu)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
        / scale;
    assert!(diff <= 1e-10, "native and device differ by {diff:e}");
}

/// `u_t − Δu = 1` in the cells.
#[pointwise]
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

/// A Robin-type dynamic condition `β u_t + ∂u/∂n + α u = 0`:
/// `f0 = β u_t + α u` (`constants = [β, α]`).
#[pointwise]
fn dynamic_robin(u: &[f64; 1], u_t: &[f64; 1], constants: &[f64; 2], f0: &mut [f64; 1]) {
    f0[0] = constants[0] * u_t[0] + constants[1] * u[0];
}

/// Krylov iterations of each Newton step of `steps` backward-Euler steps
/// (`Δt = 1e-3`) with multigrid on the `2^levels`-fold refinement of 4×4
/// squares (P1) or 2×2×2 cubes, `u = 0` on `x₀ = 0`, the Robin-type
/// dynamic condition (`β = 1`, `α = 2`) on the rest of the boundary.
fn multigrid_iterations(dim: usize, levels: usize, backend: &Backend) -> Vec<usize> {
    let coarse = unit_box(dim, if dim == 2 { 4 } else { 2 }, &MeshOptions::default()).unwrap();
    let hierarchy = MeshHierarchy::new(&coarse, levels).unwrap();
    let mesh = hierarchy.finest().clone();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1).unwrap(), 1).unwrap();
    let robin = FacetSet::boundary_where(&mesh, |x| x[0] > 1e-12).unwrap();
    let term = BoundaryTerm::new(robin, DynamicRobin)
        .unwrap()
        .with_constants(&[1.0, 2.0])
        .unwrap();
    let form = Form::new(space, HeatSource)
        .unwrap()
        .with_boundary(term)
        .unwrap();
    let op = Operator::<f64>::new(form, backend).unwrap();
    let left = MeshPart::boundary_where(&mesh, |x| x[0] == 0.0).unwrap();
    let problem = DirichletProblem::on_part(op, &left, Components::All, |_, g| g[0] = 0.0)
        .unwrap()
        .with_hierarchy(hierarchy)
        .unwrap();
    let iterations = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = Arc::clone(&iterations);
    let mut integrator = TimeIntegrator::new(problem, Scheme::BackwardEuler)
        .unwrap()
        .with_progress(move |s| {
            record
                .lock()
                .unwrap()
                .push(s.linear_iterations / s.newton_iterations.max(1))
        });
    let u0 = integrator
        .problem()
        .space()
        .interpolate(|x, u| u[0] = x[0] * (1.0 + x[1]));
    let (_, stats) = integrator
        .run(&u0, 0.0, 3e-3, StepControl::Fixed(1e-3))
        .unwrap();
    assert_eq!(stats.steps, 3);
    assert!(stats.newton_iterations >= 3, "{}", stats.newton_iterations);
    let cycles = integrator.problem().multigrid().unwrap().cycles();
    assert!(cycles > 0, "multigrid was not used");
    iterations.lock().unwrap().clone()
}

#[test]
fn a_backward_euler_step_with_a_dynamic_robin_boundary_converges_in_bounded_multigrid_iterations() {
    for dim in [2, 3] {
        let levels = if dim == 2 { [1, 3] } else { [1, 2] };
        let counts: Vec<Vec<usize>> = levels
            .iter()
            .map(|&l| multigrid_iterations(dim, l, &Backend::native()))
            .collect();
        eprintln!("{dim}D: Krylov iterations per Newton step, levels {levels:?}: {counts:?}");
        for (l, c) in levels.iter().zip(&counts) {
            assert!(
                c.iter().all(|&k| (1..=8).contains(&k)),
                "{dim}D, {l} refinements: {c:?} Krylov iterations per Newton step"
            );
        }
    }
}
