//! Time-dependent problems on the device (`kernels/integrate.cl`,
//! `jacobian_diagonal.cl`, `element_matrix.cl`; PoCL in CI): with a time
//! state `t`, `u_t = σ·u + b` bound, `F(u)`, `J(u)·v`, the point-block
//! diagonal and the device-assembled matrix of transient physics (scalar
//! and vector, P1 and P2, 2D and 3D) equal the native reference (f64 ≤
//! 1e-12, f32 ≤ 1e-5, relative to the largest entry) in both assembly
//! modes, `F(u)` and `J(u)·v` on both kernels (the thread transposition
//! and the cell-parallel one, `LaunchConfig::cell_parallel`, also with
//! patches: `u`, `b` and `v` copied per work-group); one
//! backward-Euler step and one BDF2 step of the heat equation
//! solved on the device equal the native ones.

use std::sync::Arc;

use femquad::opencl::testing;
use femquad::opencl::{Assembly, LaunchConfig};
use femquad::prelude::*;
use femquad::time::{Scheme, StepControl, TimeIntegrator};

/// `f0 = (1 + u²)·u_t + u³ + t·x₀`, `f1 = (1 + u_t²)·∇u`: reads `u`,
/// `grad_u`, `u_t`, `x` and `t`, nonlinear in `u_t`.
#[pointwise]
fn transient_scalar<const D: usize>(
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
        f1[0][d] = (1.0 + u_t[0] * u_t[0]) * grad_u[0][d];
    }
}

/// A vector (D-component) transient physics: `f0_c = u_t,c + u_c·u_t,c+1
/// + t`, `f1_c = (1 + u_t,c²)·∇u_c`.
#[pointwise]
fn transient_vector<const D: usize>(
    u: &[f64; D],
    grad_u: &[[f64; D]; D],
    u_t: &[f64; D],
    t: f64,
    f0: &mut [f64; D],
    f1: &mut [[f64; D]; D],
) {
    for c in 0..D {
        f0[c] = u_t[c] + u[c] * u_t[(c + 1) % D] + t;
        for d in 0..D {
            f1[c][d] = (1.0 + u_t[c] * u_t[c]) * grad_u[c][d];
        }
    }
}

/// `u_t − Δu = f(t, x)` with `f = 2 cos(2t)·q − 6·(1 + sin 2t)`,
/// `q = 1 + x² + 2y²` (the manufactured heat problem of `time_heat.rs`).
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

fn mesh(dim: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 5,
    };
    Arc::new(unit_box(dim, if dim == 2 { 4 } else { 2 }, &opts).unwrap())
}

/// The operator of the scalar or vector transient physics on `backend`.
fn operator<R: Real + femquad::physics::EvalPrecision>(
    dim: usize,
    order: usize,
    vector: bool,
    backend: &Backend,
) -> Operator<R>
where
    TransientScalar: PointwiseEval<R>,
    TransientVector: PointwiseEval<R>,
{
    let element = Element::lagrange(dim, order).unwrap();
    let form = if vector {
        Form::new(
            FunctionSpace::new(mesh(dim), element, dim).unwrap(),
            TransientVector,
        )
        .unwrap()
    } else {
        Form::new(
            FunctionSpace::new(mesh(dim), element, 1).unwrap(),
            TransientScalar,
        )
        .unwrap()
    };
    Operator::new(form, backend).unwrap()
}

fn values<R: Real>(n: usize, phase: f64) -> Vec<R> {
    (0..n)
        .map(|i| R::from_f64(0.3 * (1.3 * i as f64 + phase).sin()))
        .collect()
}

/// With the time state `t = 0.4`, `σ = 7.5`, `b = values(1)` bound:
/// `F(u)`, `J(u)·v`, the diagonal and the assembled matrix's values of
/// `op`, on the host.
fn evaluate<R: Real>(op: &mut Operator<R>) -> [Vec<f64>; 4] {
    let n = op.space().n_dofs();
    let b = op.vector_from(&values::<R>(n, 1.0)).unwrap();
    op.set_time(0.4, 7.5, &b).unwrap();
    let u = op.vector_from(&values::<R>(n, 0.0)).unwrap();
    let v = op.vector_from(&values::<R>(n, 2.0)).unwrap();
    let mut r = op.vector().unwrap();
    op.apply(&u, &mut r).unwrap();
    let mut jv = op.vector().unwrap();
    op.jacobian_action(&u, &v, &mut jv).unwrap();
    let len = op.jacobian_diagonal_len();
    let mut d = match op.integrator().opencl() {
        None => Vector::host_zeros(len),
        Some(bound) => Vector::device_zeros(&bound.device().clone(), len).unwrap(),
    };
    op.jacobian_diagonal(&u, &mut d).unwrap();
    let matrix = op.assemble_matrix(&u).unwrap().to_host().unwrap();
    let host =
        |v: Vector<R>| -> Vec<f64> { v.to_host().unwrap().iter().map(|x| x.to_f64()).collect() };
    [host(r), host(jv), host(d), matrix.values().to_vec()]
}

/// The cases `(dim, order, vector)` compared with the native reference.
const CASES_F64: [(usize, usize, bool); 4] =
    [(2, 1, false), (2, 2, false), (3, 1, false), (2, 2, true)];
const CASES_F32: [(usize, usize, bool); 2] = [(2, 2, false), (3, 1, true)];

fn compare<R: Real + femquad::physics::EvalPrecision>(cases: &[(usize, usize, bool)], tol: f64)
where
    TransientScalar: PointwiseEval<R>,
    TransientVector: PointwiseEval<R>,
{
    let device = Backend::opencl_with(testing::device(), testing::options());
    for &(dim, order, vector) in cases {
        let reference = evaluate(&mut operator::<R>(dim, order, vector, &Backend::native()));
        let mut gpu = operator::<R>(dim, order, vector, &device);
        // (assembly, cell-parallel kernel, patches)
        for (assembly, cell_parallel, patches) in [
            (Assembly::Atomic, false, false),
            (Assembly::Deterministic, false, false),
            (Assembly::Atomic, true, false),
            (Assembly::Deterministic, true, false),
            (Assembly::Atomic, true, true),
        ] {
            gpu.set_assembly(assembly).unwrap();
            if cell_parallel {
                // F(u) and J(u)·v on the cell-parallel kernel; with patches,
                // u, b and v come from the group's copies in local memory
                let op = gpu.integrator().opencl().unwrap();
                for variant in [op.residual_variant(), op.jacobian_action_variant()] {
                    let c = op.config(variant).unwrap();
                    let mut cell = LaunchConfig {
                        n_tc: 1,
                        patches,
                        ..c
                    }
                    .with_cell_parallel(true);
                    // a patch's copies in local memory: smaller chunks
                    // where the device's local memory is smaller (a GPU's
                    // 48 KiB for 2D P2 vectors)
                    while let Err(femquad::Error::DeviceLimit { .. }) = op.shape(variant, cell) {
                        if cell.n_bl > 1 {
                            cell.n_bl /= 2;
                        } else if cell.n_cb > 1 {
                            cell.n_cb /= 2;
                        } else {
                            break;
                        }
                    }
                    op.set_config(variant, cell).unwrap();
                }
            }
            let got = evaluate(&mut gpu);
            if patches {
                // F(u) and J(u)·v again, each launch seen: they ran patches
                let n = gpu.space().n_dofs();
                let u = gpu.vector_from(&values::<R>(n, 0.0)).unwrap();
                let mut r = gpu.vector().unwrap();
                for tangent in [false, true] {
                    if tangent {
                        gpu.jacobian_action(&u, &u, &mut r).unwrap();
                    } else {
                        gpu.apply(&u, &mut r).unwrap();
                    }
                    let op = gpu.integrator().opencl().unwrap();
                    let launch = op.last_run().launch().unwrap();
                    assert!(
                        launch.config.patches && launch.patch_groups > 0,
                        "{dim}D P{order} vector {vector} J·v {tangent}: no patch in {launch:?}"
                    );
                }
            }
            for (what, (a, b)) in ["F(u)", "J(u)·v", "diag J(u)", "assembled J(u)"]
                .iter()
                .zip(reference.iter().zip(&got))
            {
                assert_eq!(a.len(), b.len(), "{what}");
                let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-300);
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let diff = (x - y).abs() / scale;
                    assert!(
                        diff <= tol,
                        "{dim}D P{order} vector {vector} {assembly:?} cell-parallel \
                         {cell_parallel} patches {patches} {what}[{i}]: native {x} device {y} \
                         (relative {diff:e})"
                    );
                }
            }
        }
    }
}

#[test]
fn device_transient_evaluations_equal_the_native_reference_in_f64() {
    compare::<f64>(&CASES_F64, 1e-12);
}

#[test]
fn device_transient_evaluations_equal_the_native_reference_in_f32() {
    compare::<f32>(&CASES_F32, 1e-5);
}

/// `u(2·dt)` after `steps` steps of `scheme` (`dt = 0.05`, from the
/// manufactured solution at 0) of the heat problem on a P`order` mesh,
/// solved on `backend`, and the start `u0`.
fn heat_steps(backend: &Backend, order: usize, scheme: Scheme, steps: usize) -> [Vec<f64>; 2] {
    let exact =
        |t: f64, x: &[f64]| (1.0 + (2.0 * t).sin()) * (1.0 + x[0] * x[0] + 2.0 * x[1] * x[1]);
    let space = FunctionSpace::new(mesh(2), Element::lagrange(2, order).unwrap(), 1).unwrap();
    let op = Operator::<f64>::new(Form::new(space, HeatMms).unwrap(), backend).unwrap();
    let problem = DirichletProblem::on_boundary(op, move |x, g| g[0] = exact(0.0, x)).unwrap();
    let mut integrator = TimeIntegrator::new(problem, scheme)
        .unwrap()
        .with_boundary_values(move |t, x, g| g[0] = exact(t, x));
    // a start away from the exact solution, so that the step moves it
    let u0 = integrator
        .problem()
        .space()
        .interpolate(|x, u| u[0] = exact(0.0, x) + 0.5 * (3.0 * x[0]).sin() * x[1]);
    let dt = 0.05;
    let (u, stats) = integrator
        .run(&u0, 0.0, steps as f64 * dt, StepControl::Fixed(dt))
        .unwrap();
    assert_eq!(stats.steps, steps);
    [u.to_host().unwrap(), u0]
}

#[test]
fn a_backward_euler_and_a_bdf2_step_of_the_heat_equation_on_the_device_equal_the_native_ones() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    // BDF2: its first step starts with backward Euler, the second is BDF2
    for (scheme, steps) in [(Scheme::BackwardEuler, 1), (Scheme::Bdf2, 2)] {
        for order in [1, 2] {
            let [native, u0] = heat_steps(&Backend::native(), order, scheme, steps);
            let [gpu, _] = heat_steps(&device, order, scheme, steps);
            let scale = native.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let moved = native
                .iter()
                .zip(&u0)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            let diff = native
                .iter()
                .zip(&gpu)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
                / scale;
            eprintln!("{scheme:?} P{order}: moved {moved:e}, relative difference {diff:e}");
            assert!(
                moved > 1e-2 * scale,
                "{scheme:?} P{order}: the step did not move u"
            );
            assert!(
                diff <= 1e-8,
                "{scheme:?} P{order}: native and device steps differ by {diff:e} (relative)"
            );
        }
    }
}
