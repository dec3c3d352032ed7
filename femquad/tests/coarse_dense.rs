//! The coarse solve by the dense inverse on the device
//! ([`CoarseSolver`] with device kernels and at most
//! `dense_max_dofs` dofs, `MultigridOptions::dense_coarse_max_dofs`): it agrees with the host's sparse solve
//! to rounding on the assembled P1 operators of 2D Poisson and 2D Lamé with
//! their boundary dofs fixed, keeps `x_D = b_D` exactly on the fixed dofs,
//! and is bitwise the native twin of its kernel
//! ([`MultigridKernels::dense_apply`] on the host); above the bound, and on
//! host kernels, the host path runs ([`CoarseSolver::dense_on_device`]).
//! [`DirectSolver::inverse`] is the inverse (Cholesky and LU).
//!
//! Runs on the tests' device and options ([`femquad::opencl::testing`]; PoCL in CI).

mod level_support;

use level_support::relative_difference;

use femquad::Real;
use femquad::backend::{Backend, MultigridKernels, Vector};
use femquad::linalg::FixedDofs;
use femquad::multigrid::CoarseSolver;

/// The dense bound these tests pass (the largest the docs suggest).
const DENSE_MAX_DOFS: usize = 4096;
use femquad::opencl::testing;
use femquad::rng::Rng;
use femquad::sparse::{CsrMatrix, DirectSolver, Factorization};

/// The 2D P1 operator of Poisson (`lame` false) or Lamé at 0 on the host
/// ([`level_support::assembled`]), with its `N_comp` and boundary dofs.
fn coarsest(lame: bool) -> (CsrMatrix, usize, Vec<u32>) {
    let (op, matrix, fixed) = level_support::assembled::<f64>(2, lame, &Backend::native());
    (matrix.to_host().unwrap(), op.space().n_comp(), fixed)
}

fn random<R: Real>(n: usize, seed: u64) -> Vec<R> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| R::from_f64(rng.range(-1.0, 1.0))).collect()
}

/// The first entry where `a` and `b` differ in their bits.
fn first_difference<R: Real>(a: &[R], b: &[R]) -> Option<usize> {
    a.iter()
        .zip(b)
        .position(|(x, y)| x.to_f64().to_bits() != y.to_f64().to_bits())
}

fn dense_equals_sparse<R: Real>(lame: bool, tolerance: f64) {
    let (matrix, nc, fixed_dofs) = coarsest(lame);
    let n = matrix.n_rows();
    let fixed = FixedDofs::new(n, &fixed_dofs).unwrap();
    let case = format!(
        "{} {:?}, {n} dofs",
        if lame { "Lamé" } else { "Poisson" },
        R::PRECISION
    );
    let device = testing::device();
    let on_device = Vector::<R>::device_zeros(&device, n).unwrap();
    let device_kernels = MultigridKernels::like(&on_device, nc).unwrap();
    let host_kernels = MultigridKernels::<R>::host(nc).unwrap();
    let f = Factorization::Cholesky;
    let mut dense = CoarseSolver::new(
        matrix.clone(),
        fixed.clone(),
        f,
        &device_kernels,
        DENSE_MAX_DOFS,
    )
    .unwrap();
    let mut sparse = CoarseSolver::new(
        matrix.clone(),
        fixed.clone(),
        f,
        &host_kernels,
        DENSE_MAX_DOFS,
    )
    .unwrap();
    assert!(
        dense.dense_on_device(),
        "{case}: device kernels, the dense path"
    );
    assert!(
        !sparse.dense_on_device(),
        "{case}: host kernels, the host path"
    );

    // b random, the fixed dofs too: x_D = b_D there (identity rows)
    let b = random::<R>(n, 7 + nc as u64);
    let b_device = Vector::Host(b.clone()).to_device(&device).unwrap();
    let mut x_device = on_device;
    dense.solve(&b_device, &mut x_device).unwrap();
    let x_dense = x_device.to_host().unwrap();
    let mut x_host = Vector::host_zeros(n);
    sparse.solve(&Vector::Host(b.clone()), &mut x_host).unwrap();
    let x_sparse = x_host.to_host().unwrap();
    let rel = relative_difference(&x_dense, &x_sparse);
    eprintln!("{case}: |x_dense − x_sparse| / |x_sparse| = {rel:e}");
    assert!(
        rel <= tolerance,
        "{case}: dense {rel:e} from sparse (tolerance {tolerance:e})"
    );
    for &d in &fixed_dofs {
        let d = d as usize;
        assert_eq!(
            x_dense[d].to_f64().to_bits(),
            b[d].to_f64().to_bits(),
            "{case}: x_D = b_D at {d}"
        );
    }

    // the kernel is bitwise its native twin, on the same inverse
    let mut eliminated = matrix;
    fixed.eliminate_matrix(&mut eliminated).unwrap();
    let inverse: Vec<R> = DirectSolver::cholesky(&eliminated)
        .unwrap()
        .inverse()
        .unwrap()
        .into_iter()
        .map(R::from_f64)
        .collect();
    let mut x_native = Vector::host_zeros(n);
    host_kernels
        .dense_apply(&mut x_native, &Vector::Host(inverse), &Vector::Host(b))
        .unwrap();
    let x_native = x_native.to_host().unwrap();
    assert_eq!(
        first_difference(&x_dense, &x_native),
        None,
        "{case}: device ≢ native"
    );
}

#[test]
fn the_dense_device_solve_is_the_sparse_host_solve_to_rounding() {
    for lame in [false, true] {
        dense_equals_sparse::<f64>(lame, 1e-12);
        dense_equals_sparse::<f32>(lame, 1e-5);
    }
}

/// `scale` times the tridiagonal `tridiag(−1, 2.5, −1)` (`lu`:
/// `tridiag(−1, 2.5, −1.5)`, not symmetric) of `n` rows.
fn tridiagonal(n: usize, lu: bool, scale: f64) -> CsrMatrix {
    let mut entries = Vec::new();
    for i in 0..n {
        entries.push((i, i, 2.5 * scale));
        if i > 0 {
            let upper = if lu { -1.5 } else { -1.0 };
            entries.extend([(i, i - 1, -scale), (i - 1, i, upper * scale)]);
        }
    }
    CsrMatrix::from_triplets(n, n, &entries).unwrap()
}

/// At the bound (`DENSE_MAX_DOFS`) device kernels take the dense path, one
/// more takes the host path (bitwise the host solve); both agree with the
/// host solve for Cholesky and LU (a non-symmetric inverse), before and
/// after a refactorization with new values.
#[test]
fn above_the_bound_the_host_path_runs_and_a_refactorization_renews_the_inverse() {
    let device = testing::device();
    let like = Vector::<f32>::device_zeros(&device, 1).unwrap();
    let kernels = MultigridKernels::like(&like, 1).unwrap();
    let host_kernels = MultigridKernels::<f32>::host(1).unwrap();
    for (n, dense) in [(DENSE_MAX_DOFS, true), (DENSE_MAX_DOFS + 1, false)] {
        for (lu, f) in [(false, Factorization::Cholesky), (true, Factorization::Lu)] {
            let case = format!("{n} dofs, {f:?}");
            let fixed = FixedDofs::new(n, &[0, 5]).unwrap();
            let a = tridiagonal(n, lu, 1.0);
            let mut on_device =
                CoarseSolver::new(a.clone(), fixed.clone(), f, &kernels, DENSE_MAX_DOFS).unwrap();
            let mut on_host =
                CoarseSolver::new(a, fixed, f, &host_kernels, DENSE_MAX_DOFS).unwrap();
            assert_eq!(on_device.dense_on_device(), dense, "{case}");
            let b = random::<f32>(n, 3);
            let b_device = Vector::Host(b.clone()).to_device(&device).unwrap();
            for scale in [1.0, 3.0] {
                if scale != 1.0 {
                    on_device.refactor(tridiagonal(n, lu, scale)).unwrap();
                    on_host.refactor(tridiagonal(n, lu, scale)).unwrap();
                }
                let mut x = Vector::device_zeros(&device, n).unwrap();
                on_device.solve(&b_device, &mut x).unwrap();
                let mut y = Vector::host_zeros(n);
                on_host.solve(&Vector::Host(b.clone()), &mut y).unwrap();
                let (x, y) = (x.to_host().unwrap(), y.to_host().unwrap());
                let rel = relative_difference(&x, &y);
                if dense {
                    assert!(
                        rel <= 1e-5,
                        "{case}, scale {scale}: dense {rel:e} from sparse"
                    );
                } else {
                    // the host path on device vectors: the same f64 solve
                    assert_eq!(
                        first_difference(&x, &y),
                        None,
                        "{case}: host path, scale {scale}"
                    );
                }
            }
        }
    }
}

#[test]
fn the_inverse_of_a_factorization_times_the_matrix_is_the_identity() {
    let n = 300;
    for lu in [false, true] {
        let a = tridiagonal(n, lu, 1.0);
        let solver = if lu {
            DirectSolver::lu(&a)
        } else {
            DirectSolver::cholesky(&a)
        }
        .unwrap();
        let inverse = solver.inverse().unwrap();
        assert_eq!(inverse.len(), n * n);
        // A · A⁻¹ column by column: A applied to row-major A⁻¹'s column j
        let mut worst: f64 = 0.0;
        for j in 0..n {
            let column: Vec<f64> = (0..n).map(|i| inverse[i * n + j]).collect();
            let mut y = vec![0.0; n];
            a.spmv(&column, &mut y).unwrap();
            for (i, v) in y.iter().enumerate() {
                let want = if i == j { 1.0 } else { 0.0 };
                worst = worst.max((v - want).abs());
            }
        }
        assert!(worst <= 1e-12, "lu {lu}: |A·A⁻¹ − I| = {worst:e}");
    }
}
