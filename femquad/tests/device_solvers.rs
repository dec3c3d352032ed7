//! CG, GMRES and Newton–Krylov on device vectors against host vectors: one
//! solver code path, the same iterates to rounding; a device CG solve moves
//! no array; Jacobi preconditioning of a badly scaled problem.
//!
//! The operators are 1D tridiagonal matrices, applied by a small device
//! kernel on device vectors and by the same formula on the host.

use std::sync::{Arc, OnceLock};

use femquad::backend::Vector;
use femquad::linalg::{Jacobi, LinearOperator};
use femquad::opencl::{Device, DeviceVector};
use femquad::solve::{
    GmresOptions, Jacobian, KrylovStats, NewtonOptions, cg, gmres, newton_krylov,
};
use femquad::vector::VectorOps;
use femquad::{Error, Result};
use opencl3::kernel::ExecuteKernel;

/// The tests' device ([`femquad::opencl::testing::device`]), opened once for
/// this file.
fn device() -> Arc<Device> {
    static DEVICE: OnceLock<Arc<Device>> = OnceLock::new();
    DEVICE.get_or_init(femquad::opencl::testing::device).clone()
}

const TRIDIAG: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF
__kernel void tridiag(__global const double *x, __global double *y, const ulong n,
                      const double l, const double d, const double u)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    const double left = i > 0 ? x[i - 1] : 0.0;
    const double right = i + 1 < n ? x[i + 1] : 0.0;
    y[i] = d * x[i] + l * left + u * right;
}
";

/// Vectors with the tridiagonal product `y = tridiag(l, d, u) x`.
trait Tridiag: VectorOps {
    fn tridiag(&self, y: &mut Self, l: f64, d: f64, u: f64) -> Result<()>;
}

impl Tridiag for Vec<f64> {
    fn tridiag(&self, y: &mut Self, l: f64, d: f64, u: f64) -> Result<()> {
        let n = self.len();
        for i in 0..n {
            let left = if i > 0 { self[i - 1] } else { 0.0 };
            let right = if i + 1 < n { self[i + 1] } else { 0.0 };
            y[i] = d * self[i] + l * left + u * right;
        }
        Ok(())
    }
}

impl Tridiag for DeviceVector<f64> {
    fn tridiag(&self, y: &mut Self, l: f64, d: f64, u: f64) -> Result<()> {
        let device = self.device().clone();
        let kernel = device.kernel(TRIDIAG, "tridiag")?;
        let n = self.len() as u64;
        // SAFETY: the arguments match the kernel's signature; both buffers
        // hold n values.
        unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(self.buffer())
                .set_arg(y.buffer_mut())
                .set_arg(&n)
                .set_arg(&l)
                .set_arg(&d)
                .set_arg(&u)
                .set_global_work_size(self.len().div_ceil(64).max(1) * 64)
                .set_local_work_size(64)
                .enqueue_nd_range(device.queue())
        }
        .map(drop)
        .map_err(|e| Error::arg("tridiag", e.to_string()))
    }
}

impl Tridiag for Vector<f64> {
    fn tridiag(&self, y: &mut Self, l: f64, d: f64, u: f64) -> Result<()> {
        match (self, y) {
            (Vector::Host(x), Vector::Host(y)) => x.tridiag(y, l, d, u),
            (Vector::Device(x), Vector::Device(y)) => x.tridiag(y, l, d, u),
            _ => Err(Error::arg("y", "mixed locations")),
        }
    }
}

/// `A = tridiag(l, d, u)` as an operator.
fn matrix<V: Tridiag>(l: f64, d: f64, u: f64) -> impl FnMut(&V, &mut V) -> Result<()> {
    move |x: &V, y: &mut V| x.tridiag(y, l, d, u)
}

/// `A = S T S` with `T = tridiag(−1, 4, −1)` (condition number below 3) and
/// the diagonal `S = diag(s)`.
fn scaled<V: Tridiag>(s: &V) -> impl FnMut(&V, &mut V) -> Result<()> + '_ {
    let (mut t, mut ts) = (s.zeros_like().unwrap(), s.zeros_like().unwrap());
    move |x: &V, y: &mut V| {
        t.pointwise_mult(s, x)?;
        t.tridiag(&mut ts, -1.0, 4.0, -1.0)?;
        y.pointwise_mult(s, &ts)
    }
}

/// `F(u) = tridiag(−1, 3, −1) u + u∘u∘u − b`.
fn cubic<V: Tridiag>(b: &V) -> impl FnMut(&V, &mut V) -> Result<()> + '_ {
    let (mut u2, mut u3) = (b.zeros_like().unwrap(), b.zeros_like().unwrap());
    move |u: &V, r: &mut V| {
        u.tridiag(r, -1.0, 3.0, -1.0)?;
        u2.pointwise_mult(u, u)?;
        u3.pointwise_mult(&u2, u)?;
        r.axpy(1.0, &u3)?;
        r.axpy(-1.0, b)
    }
}

/// The end of the error for vectors in two places.
const MIXED: &str = ": vectors combined in one operation must live in one place (femquad \
                     never transfers implicitly; use Vector::to_device or Vector::to_host)";

fn rhs(n: usize) -> Vec<f64> {
    (0..n).map(|i| 1.0 + (i as f64 * 0.37).sin()).collect()
}

fn up(v: &[f64]) -> DeviceVector<f64> {
    DeviceVector::from_host(&device(), v).unwrap()
}

/// The larger of `a` and `b`, NaN if either is (`f64::max` would drop a
/// NaN, and a NaN entry would pass every tolerance).
fn max_or_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| max_or_nan(m, v.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| max_or_nan(m, (x - y).abs()))
        / scale
}

/// Same iteration count, histories and solutions to `tol`.
fn same_solve(what: &str, host: (&KrylovStats, &[f64]), dev: (&KrylovStats, &[f64]), tol: f64) {
    assert_eq!(
        host.0.iterations, dev.0.iterations,
        "{what}: {:?} vs {:?}",
        host.0, dev.0
    );
    let h = max_rel_diff(&dev.0.history, &host.0.history);
    assert!(h <= 1e-6, "{what}: histories differ by {h:e}");
    let d = max_rel_diff(dev.1, host.1);
    assert!(d <= tol, "{what}: solutions differ by {d:e}");
}

#[test]
fn cg_on_device_vectors_matches_host_vectors() {
    let n = 100;
    let b = rhs(n);
    let mut x = vec![0.0; n];
    let host = cg(&mut matrix(-1.0, 2.0, -1.0), None, &b, &mut x, 1e-10, 500).unwrap();
    let (db, mut dx) = (up(&b), up(&vec![0.0; n]));
    let dev = cg(&mut matrix(-1.0, 2.0, -1.0), None, &db, &mut dx, 1e-10, 500).unwrap();
    same_solve("CG", (&host, &x), (&dev, &dx.to_host().unwrap()), 1e-10);
    // the user-facing Vector on the device: the same
    let vb = Vector::Device(up(&b));
    let mut vx = Vector::device_zeros(&device(), n).unwrap();
    let v = cg(&mut matrix(-1.0, 2.0, -1.0), None, &vb, &mut vx, 1e-10, 500).unwrap();
    same_solve(
        "CG (Vector)",
        (&host, &x),
        (&v, &vx.to_host().unwrap()),
        1e-10,
    );
    // a host operand for a device solve is an error naming both places
    let mut hx = Vector::host_zeros(n);
    let e = cg(&mut matrix(-1.0, 2.0, -1.0), None, &vb, &mut hx, 1e-10, 500)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "invalid argument `x`: `x` is on the host but `b` on device [{}] `{}`{MIXED}",
            device().info().index,
            device().info().name
        )
    );
}

#[test]
fn gmres_on_device_vectors_matches_host_vectors() {
    let n = 120;
    let b = rhs(n);
    let opts = GmresOptions {
        tol: 1e-10,
        max_iter: 2000,
        restart: 10,
    };
    for preconditioned in [false, true] {
        let mut x = vec![0.0; n];
        let mut m = Jacobi::new(vec![0.5; n]);
        let pc: Option<&mut dyn LinearOperator<Vec<f64>>> =
            if preconditioned { Some(&mut m) } else { None };
        let host = gmres(&mut matrix(-1.4, 2.0, -0.6), pc, &b, &mut x, &opts).unwrap();
        let (db, mut dx) = (up(&b), up(&vec![0.0; n]));
        let mut dm = Jacobi::new(up(&vec![0.5; n]));
        let pc: Option<&mut dyn LinearOperator<DeviceVector<f64>>> =
            if preconditioned { Some(&mut dm) } else { None };
        let dev = gmres(&mut matrix(-1.4, 2.0, -0.6), pc, &db, &mut dx, &opts).unwrap();
        assert!(host.iterations > opts.restart, "restarts are exercised");
        same_solve(
            &format!("GMRES(10), Jacobi {preconditioned}"),
            (&host, &x),
            (&dev, &dx.to_host().unwrap()),
            1e-10,
        );
    }
}

#[test]
fn newton_krylov_on_device_vectors_matches_host_vectors() {
    let n = 60;
    let u_exact: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.2).sin()).collect();
    let mut b = vec![0.0; n];
    cubic(&vec![0.0; n])(&u_exact, &mut b).unwrap();
    let opts = NewtonOptions {
        rtol: 1e-12,
        // difference products are accurate to about √ε ≈ 1.5e-8: a linear
        // tolerance below that is refused (GMRES checks its claims against
        // the true residual of these products)
        linear: GmresOptions {
            tol: 1e-6,
            ..GmresOptions::default()
        },
        ..NewtonOptions::default()
    };
    let mut u = vec![0.0; n];
    let host = newton_krylov(cubic(&b), Jacobian::Differences, None, &mut u, &opts).unwrap();
    let db = up(&b);
    let mut du = up(&vec![0.0; n]);
    let dev = newton_krylov(cubic(&db), Jacobian::Differences, None, &mut du, &opts).unwrap();
    assert_eq!(host.iterations, dev.iterations, "{host:?} vs {dev:?}");
    assert_eq!(host.linear_iterations, dev.linear_iterations);
    let du = du.to_host().unwrap();
    assert!(max_rel_diff(&du, &u) <= 1e-10);
    assert!(max_rel_diff(&du, &u_exact) <= 1e-9);
}

#[test]
fn a_device_cg_solve_moves_no_array() {
    // its own device: the counters of the shared one move with the other tests
    let device = femquad::opencl::testing::device();
    let n = 256;
    let b = DeviceVector::from_host(&device, &rhs(n)).unwrap();
    let mut x = DeviceVector::<f64>::zeros(&device, n).unwrap();
    let before = device.stats();
    let stats = cg(&mut matrix(-1.0, 2.0, -1.0), None, &b, &mut x, 1e-10, 1000).unwrap();
    let after = device.stats();
    assert!(stats.iterations > 10, "{stats:?}");
    assert_eq!(after.array_bytes_written(), before.array_bytes_written());
    assert_eq!(after.array_bytes_read, before.array_bytes_read);
    // b and x checked finite, ‖b‖, r·r; then p·Ap and r·r per iteration;
    // then ‖b − A x‖² of the true residual that confirms convergence
    let reads = after.scalar_reads - before.scalar_reads;
    assert_eq!(reads, 4 + 2 * stats.iterations as u64 + 1, "{stats:?}");
    assert_eq!(after.read_bytes - before.read_bytes, 8 * reads);
}

#[test]
fn jacobi_preconditioning_fixes_a_badly_scaled_problem() {
    let n = 1000;
    // A = S T S with s_i rising smoothly from 10^−1 to 10 (a spread,
    // not clustered, spectrum): diag(A) = 4 s², and Jacobi undoes S
    let s: Vec<f64> = (0..n)
        .map(|i| 10f64.powf(2.0 * i as f64 / (n - 1) as f64 - 1.0))
        .collect();
    let inv_diag: Vec<f64> = s.iter().map(|v| 1.0 / (4.0 * v * v)).collect();
    let b = rhs(n);
    let (tol, max_iter) = (1e-8, 5000);
    let mut x = vec![0.0; n];
    let plain = cg(&mut scaled(&s), None, &b, &mut x, tol, max_iter).unwrap();
    let mut xj = vec![0.0; n];
    let mut m = Jacobi::new(inv_diag.clone());
    let jacobi = cg(&mut scaled(&s), Some(&mut m), &b, &mut xj, tol, max_iter).unwrap();
    assert!(
        4 * jacobi.iterations < plain.iterations,
        "Jacobi {} vs plain {} iterations",
        jacobi.iterations,
        plain.iterations
    );
    assert!(jacobi.iterations <= 30, "{jacobi:?}");
    // on the device: the same counts, the same solution
    let (ds, db) = (up(&s), up(&b));
    let mut dxj = up(&vec![0.0; n]);
    let mut dm = Jacobi::new(up(&inv_diag));
    let dev = cg(
        &mut scaled(&ds),
        Some(&mut dm),
        &db,
        &mut dxj,
        tol,
        max_iter,
    )
    .unwrap();
    same_solve(
        "Jacobi-CG",
        (&jacobi, &xj),
        (&dev, &dxj.to_host().unwrap()),
        1e-10,
    );
    let mut dx = up(&vec![0.0; n]);
    let dplain = cg(&mut scaled(&ds), None, &db, &mut dx, tol, max_iter).unwrap();
    assert!(
        2 * dev.iterations < dplain.iterations,
        "{} vs {}",
        dev.iterations,
        dplain.iterations
    );
    println!(
        "CG iterations, badly scaled 1D Laplacian (n = {n}): plain {} (device {}), Jacobi {} (device {})",
        plain.iterations, dplain.iterations, jacobi.iterations, dev.iterations
    );
}

#[test]
fn solver_errors_on_device_vectors_name_the_cause() {
    let n = 50;
    let mut bad = rhs(n);
    bad[17] = f64::NAN;
    let e = cg(
        &mut matrix(-1.0, 2.0, -1.0),
        None,
        &up(&bad),
        &mut up(&vec![0.0; n]),
        1e-8,
        100,
    )
    .unwrap_err();
    assert!(
        matches!(
            e,
            Error::NonFinite {
                name: "b",
                index: 17,
                ..
            }
        ),
        "{e}"
    );
    let e = cg(
        &mut matrix(-1.0, 2.0, -1.0),
        None,
        &up(&rhs(n)),
        &mut up(&vec![0.0; n - 1]),
        1e-8,
        100,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "invalid argument `x`: expected {n} entries (as `b`), got {}",
            n - 1
        )
    );
    // an operator output with a NaN: found on the device, with its index
    let mut nan_at_5 = |x: &DeviceVector<f64>, y: &mut DeviceVector<f64>| -> Result<()> {
        x.tridiag(y, -1.0, 2.0, -1.0)?;
        let idx = femquad::opencl::DeviceIndices::from_host(x.device(), &[5])?;
        y.set_at(&idx, f64::NAN)
    };
    let e = cg(
        &mut nan_at_5,
        None,
        &up(&rhs(n)),
        &mut up(&vec![0.0; n]),
        1e-8,
        100,
    )
    .unwrap_err();
    assert!(matches!(e, Error::NonFinite { index: 5, .. }), "{e}");
    let e = gmres(
        &mut nan_at_5,
        None,
        &up(&rhs(n)),
        &mut up(&vec![0.0; n]),
        &GmresOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(e, Error::NonFinite { index: 5, .. }), "{e}");
    let e = cg(
        &mut matrix(1.0, -2.0, 1.0),
        None,
        &up(&rhs(n)),
        &mut up(&vec![0.0; n]),
        1e-8,
        100,
    )
    .unwrap_err();
    // the first p·Ap is b·Ab, negative for this negative definite matrix
    let b = rhs(n);
    let mut ab = vec![0.0; n];
    b.tridiag(&mut ab, 1.0, -2.0, 1.0).unwrap();
    let bab: f64 = b.iter().zip(&ab).map(|(x, y)| x * y).sum();
    let e = e.to_string();
    let pap = e
        .strip_prefix("invalid argument `a`: the operator is not positive definite: p·Ap = ")
        .and_then(|rest| {
            rest.strip_suffix(
                " at iteration 0 (conjugate gradients needs a symmetric positive definite \
                 operator: an indefinite or singular one gives this; use gmres for an \
                 indefinite or non-symmetric operator, make a singular one definite, e.g. by \
                 fixing more unknowns)",
            )
        })
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{e}"));
    assert!(
        bab < 0.0 && (pap - bab).abs() <= 1e-12 * bab.abs(),
        "{pap} vs {bab}"
    );
    let e = cg(
        &mut matrix(-1.0, 2.0, -1.0),
        None,
        &up(&rhs(n)),
        &mut up(&vec![0.0; n]),
        1e-14,
        3,
    )
    .unwrap_err();
    assert!(
        matches!(e, Error::NoConvergence { iterations: 3, .. }),
        "{e}"
    );
}
