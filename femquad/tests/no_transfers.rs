//! Work on device vectors moves no array between host and device once its
//! one-time work is done (kernels built, mesh data uploaded): the Jacobian
//! action `J(u)·v` and the point-block diagonal `diag(J)` in both assembly
//! modes, the deterministic `F(u)`, and whole Dirichlet solves — linear
//! (conjugate gradients) and nonlinear (Newton–Krylov) — in both assembly
//! modes. Only scalars come back: the NaN checks (of `u` and of the result
//! for `F(u)`, of the result for `diag(J)`: [`femquad::Error::NonFiniteResult`])
//! and the reductions of the solvers. (The atomic `F(u)` is proven in
//! `operator_device.rs`, whose counters this file reads the same way:
//! [`femquad::opencl::DeviceStats`] of a device of the test's own.)
//!
//! Runs on the tests' device ([`femquad::opencl::testing`]; PoCL in CI).

mod operator_support;
use operator_support::{device_backend as backend, operator};

use std::sync::Arc;

use femquad::opencl::{Assembly, Device, DeviceStats};
use femquad::physics::PointwiseEvalBoth;
use femquad::physics::builtin::{Lame, LameParameters, NonlinearDiffusion, Poisson};
use femquad::prelude::*;
use femquad::rng::Rng;
use femquad::solve::{JacobianProducts, NewtonOptions};

/// A device of this test alone (the tests' device policy,
/// [`femquad::opencl::testing`]): the counters of a shared one would move with the
/// other tests.
fn own_device() -> Arc<Device> {
    femquad::opencl::testing::device()
}

fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 17,
    };
    unit_box(dim, n, &opts).unwrap().into()
}

/// The counters that `work` moved: array bytes written and read, scalar
/// reads, program builds.
#[derive(Debug)]
struct Moved {
    array_bytes_written: u64,
    array_bytes_read: u64,
    scalar_reads: u64,
    builds: usize,
}

fn moved(device: &Device, work: impl FnOnce()) -> Moved {
    let before: DeviceStats = device.stats();
    work();
    let after = device.stats();
    Moved {
        array_bytes_written: after.array_bytes_written() - before.array_bytes_written(),
        array_bytes_read: after.array_bytes_read - before.array_bytes_read,
        scalar_reads: after.scalar_reads - before.scalar_reads,
        builds: after.builds - before.builds,
    }
}

impl Moved {
    /// No array either way and no build; at most `max_scalars` scalar reads
    /// (the NaN checks, one scalar each).
    fn only_scalars(&self, max_scalars: u64) -> bool {
        self.array_bytes_written == 0
            && self.array_bytes_read == 0
            && self.builds == 0
            && self.scalar_reads <= max_scalars
    }
}

#[test]
fn jacobian_action_diagonal_and_deterministic_residual_move_no_array() {
    let device = own_device();
    let lame = LameParameters::new(1.5, 0.8).constants();
    for (dim, order, physics, n_comp, constants) in [
        (
            2,
            2,
            &NonlinearDiffusion as &dyn PointwiseEvalBoth,
            1,
            vec![],
        ),
        (3, 1, &Lame as &dyn PointwiseEvalBoth, 3, lame.to_vec()),
    ] {
        let m = mesh(dim, if dim == 2 { 12 } else { 5 });
        let mut res = operator::<f64>(
            &m,
            order,
            n_comp,
            AuxSpace::None,
            physics,
            &constants,
            &backend(&device),
        );
        let n = res.space().n_dofs();
        let u = res.vector_from(&Rng::new(1).vec(n, -1.0, 1.0)).unwrap();
        let v = res.vector_from(&Rng::new(2).vec(n, -1.0, 1.0)).unwrap();
        let mut out = res.vector().unwrap();
        let mut diag = Vector::device_zeros(&device, res.jacobian_diagonal_len()).unwrap();
        let what = format!("{dim}D P{order} {}", physics.info().name);
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            // the kernels of the assembly built (geometry and incidence
            // uploaded) now, and first calls
            res.set_assembly(assembly).unwrap();
            res.apply(&u, &mut out).unwrap();
            res.jacobian_action(&u, &v, &mut out).unwrap();
            let m = moved(&device, || {
                for _ in 0..3 {
                    res.apply(&u, &mut out).unwrap();
                }
            });
            println!("{what}: 3 × F(u), {assembly:?}: {m:?}");
            // each call: u checked, F(u) checked
            assert!(m.only_scalars(6), "{what}: F(u), {assembly:?}: {m:?}");
            let m = moved(&device, || {
                for _ in 0..3 {
                    res.jacobian_action(&u, &v, &mut out).unwrap();
                }
            });
            println!("{what}: 3 × J(u)·v, {assembly:?}: {m:?}");
            // no NaN check: nothing at all comes back
            assert!(m.only_scalars(0), "{what}: J(u)·v, {assembly:?}: {m:?}");
        }
        res.jacobian_diagonal(&u, &mut diag).unwrap();
        let m = moved(&device, || {
            for _ in 0..3 {
                res.jacobian_diagonal(&u, &mut diag).unwrap();
            }
        });
        println!("{what}: 3 × diag(J): {m:?}");
        // each call: diag(J) checked
        assert!(m.only_scalars(3), "{what}: diag(J): {m:?}");
    }
}

/// Boundary values of the solves: an affine function (not zero, so the
/// fixed values take part).
fn boundary(x: &[f64], g: &mut [f64]) {
    g[0] = 0.5 + x[0] - 0.25 * x[1];
}

#[test]
fn whole_dirichlet_solves_move_no_array() {
    let device = own_device();
    let m = mesh(2, 16);
    for assembly in [Assembly::Atomic, Assembly::Deterministic] {
        // one problem per physics, of the same mesh, boundary values and
        // Jacobi preconditioner
        let problem = |physics: &'static dyn PointwiseEvalBoth, constants: &[f64]| {
            let mut res = operator::<f64>(
                &m,
                1,
                1,
                AuxSpace::None,
                physics,
                constants,
                &backend(&device),
            );
            res.set_assembly(assembly).unwrap();
            let mut p = DirichletProblem::on_boundary(res, boundary).unwrap();
            p.set_preconditioner(Preconditioner::Jacobi);
            p
        };
        let mut p = problem(&Poisson, &[1.0]);
        // Linear: Poisson by Jacobi-preconditioned CG. The first solve does
        // the one-time work (the diagonal's kernel among it).
        let (first, stats) = p.solve_linear(1e-10, 500).unwrap();
        assert!(stats.iterations > 5, "{stats:?}");
        let mut again = None;
        let m_linear = moved(&device, || {
            again = Some(p.solve_linear(1e-10, 500).unwrap());
        });
        let (u, again_stats) = again.unwrap();
        assert_eq!(again_stats.iterations, stats.iterations);
        println!(
            "linear solve, {assembly:?}: {} CG iterations, {m_linear:?}",
            stats.iterations
        );
        assert_eq!(
            (
                m_linear.array_bytes_written,
                m_linear.array_bytes_read,
                m_linear.builds
            ),
            (0, 0, 0),
            "linear solve, {assembly:?}: {m_linear:?}"
        );
        // the repeated solve is the same solve (downloads after the count)
        let (a, b) = (first.to_host().unwrap(), u.to_host().unwrap());
        let scale = a.iter().fold(0.0f64, |s, x| s.max(x.abs()));
        let far = a
            .iter()
            .zip(&b)
            .position(|(x, y)| (x - y).abs().is_nan() || (x - y).abs() > 1e-12 * scale);
        assert_eq!(far, None, "the two solves differ (max |u| = {scale:e})");

        // Nonlinear: −∇·((1 + u²)∇u) = 0 by Newton–Krylov with Jacobi.
        let mut p = problem(&NonlinearDiffusion, &[]);
        let opts = NewtonOptions {
            rtol: 1e-9,
            ..NewtonOptions::default()
        };
        let (_, stats) = p
            .solve_nonlinear(None, JacobianProducts::Exact, &opts)
            .unwrap();
        assert!(stats.iterations >= 2, "{stats:?}");
        let mut again = None;
        let m_newton = moved(&device, || {
            again = Some(
                p.solve_nonlinear(None, JacobianProducts::Exact, &opts)
                    .unwrap(),
            );
        });
        let (_, again_stats) = again.unwrap();
        assert_eq!(again_stats.iterations, stats.iterations);
        println!(
            "nonlinear solve, {assembly:?}: {} Newton steps, GMRES {:?}, {m_newton:?}",
            stats.iterations, stats.linear_iterations
        );
        assert_eq!(
            (
                m_newton.array_bytes_written,
                m_newton.array_bytes_read,
                m_newton.builds
            ),
            (0, 0, 0),
            "nonlinear solve, {assembly:?}: {m_newton:?}"
        );
    }
}
