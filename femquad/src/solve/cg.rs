//! Matrix-free (preconditioned) conjugate gradients.

use super::krylov::{KrylovStats, krylov_start, non_finite_output};
use super::operator::LinearOperator;
use crate::vector::VectorOps;
use crate::{Error, Result};

/// Statistics of [`cg`].
pub type CgStats = KrylovStats;

/// `z = M⁻¹ r` if there is a preconditioner `M`; returns `(r·r, r·z)` in
/// one reduction (`r·z = r·r` without `M`).
fn precondition<V: VectorOps>(
    m: &mut Option<&mut dyn LinearOperator<V>>,
    r: &V,
    z: &mut Option<V>,
) -> Result<(f64, f64)> {
    match (m, z) {
        (Some(m), Some(z)) => {
            m.apply(r, z)?;
            let d = r.dots(&[r, z])?;
            if !d[1].is_finite() && d[0].is_finite() {
                return Err(non_finite_output(
                    "M⁻¹ r (preconditioner output)",
                    z,
                    "r·M⁻¹r",
                    d[1],
                ));
            }
            Ok((d[0], d[1]))
        }
        _ => {
            let rr = r.dot(r)?;
            Ok((rr, rr))
        }
    }
}

/// Solves `A x = b` by the conjugate gradient method (Hestenes–Stiefel),
/// preconditioned by `M ≈ A` if `preconditioner` gives `z = M⁻¹ r`, for a
/// symmetric positive definite operator `a` given by its action
/// ([`LinearOperator`]: `y = A x`; closures qualify) and a symmetric positive
/// definite `M⁻¹`. Without preconditioner (`None`), `M = I`.
///
/// `x` holds the initial guess on entry and the solution on exit. With
/// `r_k = b − A x_k` the iteration stops at the first `k` with
/// `‖r_k‖₂ ≤ tol · ‖b‖₂` (relative residual, not preconditioned). If `b = 0`
/// the solution is `x = 0` and no iteration runs. With `z_k = M⁻¹ r_k`:
///
/// ```text
/// α_k = (r_k·z_k)/(p_k·A p_k),  x_{k+1} = x_k + α_k p_k,  r_{k+1} = r_k − α_k A p_k,
/// β_k = (r_{k+1}·z_{k+1})/(r_k·z_k),  p_{k+1} = z_{k+1} + β_k p_k,  p_0 = z_0.
/// ```
///
/// Each iteration costs one application of `A` (and of `M⁻¹`), three
/// vector updates and two reductions — on device vectors two round trips of
/// scalars (`p·Ap`, then `r·r` and `r·z` together) and no array transfer.
///
/// In exact arithmetic the error decreases in the `A`-norm by at least the
/// factor `2((√κ − 1)/(√κ + 1))^k` after `k` iterations (`κ` the condition
/// number of `M⁻¹A`), so for a finite-element Laplacian on a mesh of width
/// `h` the unpreconditioned iteration count grows like `1/h`; a Jacobi
/// preconditioner ([`super::Jacobi`]) removes the effect of a badly scaled
/// diagonal.
///
/// # Errors
/// * [`Error::InvalidArgument`] if `x` and `b` differ in length, `tol` is not
///   positive and finite, `p·A p ≤ 0` occurs (the operator is not positive
///   definite, or it is singular on the Krylov space), or `r·M⁻¹r ≤ 0` (the
///   preconditioner is not positive definite); and for vectors in different
///   places (host and device).
/// * [`Error::NonFinite`] if `b` or `x` holds NaN or ±∞, or the operator or
///   preconditioner returns a non-finite value (with its index).
/// * [`Error::NoConvergence`] after `max_iter` iterations without reaching
///   the tolerance (`x` then holds the last iterate).
/// * Any error returned by `a` or the preconditioner.
pub fn cg<V: VectorOps>(
    a: &mut (impl LinearOperator<V> + ?Sized),
    mut preconditioner: Option<&mut dyn LinearOperator<V>>,
    b: &V,
    x: &mut V,
    tol: f64,
    max_iter: usize,
) -> Result<CgStats> {
    let Some(b_norm) = krylov_start(b, x, tol)? else {
        return Ok(KrylovStats::solved_by_zero());
    };
    let target = tol * b_norm;
    let mut ap = b.zeros_like()?;
    // r = b − A x
    a.apply(x, &mut ap)?;
    let mut r = b.zeros_like()?;
    r.copy_from(&ap)?;
    r.axpby(1.0, b, -1.0)?;
    let mut z = match preconditioner {
        Some(_) => Some(b.zeros_like()?),
        None => None,
    };
    let (mut rr, mut rz) = precondition(&mut preconditioner, &r, &mut z)?;
    if !rr.is_finite() {
        return Err(non_finite_output("A x (operator output)", &ap, "r·r", rr));
    }
    let mut p = b.zeros_like()?;
    p.copy_from(z.as_ref().unwrap_or(&r))?;
    let mut history = vec![rr.sqrt()];
    let mut k = 0;
    while rr.sqrt() > target {
        if k == max_iter {
            return Err(Error::NoConvergence {
                solver: "conjugate gradients",
                iterations: k,
                residual: rr.sqrt() / b_norm,
                tolerance: tol,
            });
        }
        if rz <= 0.0 {
            return Err(Error::arg(
                "preconditioner",
                format!(
                    "the preconditioner is not positive definite: r·M⁻¹r = {rz:e} at iteration {k} \
                     (preconditioned conjugate gradients needs a symmetric positive definite M⁻¹)"
                ),
            ));
        }
        a.apply(&p, &mut ap)?;
        let pap = p.dot(&ap)?;
        if !pap.is_finite() {
            return Err(non_finite_output("A p (operator output)", &ap, "p·Ap", pap));
        }
        if pap <= 0.0 {
            return Err(Error::arg(
                "apply",
                format!(
                    "the operator is not positive definite: p·Ap = {pap:e} at iteration {k} \
                     (conjugate gradients needs a symmetric positive definite operator)"
                ),
            ));
        }
        let alpha = rz / pap;
        x.axpy(alpha, &p)?;
        r.axpy(-alpha, &ap)?;
        let (rr_new, rz_new) = precondition(&mut preconditioner, &r, &mut z)?;
        if !rr_new.is_finite() {
            return Err(non_finite_output("r (the residual)", &r, "r·r", rr_new));
        }
        let beta = rz_new / rz;
        // p = z + β p
        p.axpby(1.0, z.as_ref().unwrap_or(&r), beta)?;
        rr = rr_new;
        rz = rz_new;
        k += 1;
        history.push(rr.sqrt());
    }
    Ok(KrylovStats {
        iterations: k,
        residual_norm: rr.sqrt(),
        relative_residual: rr.sqrt() / b_norm,
        history,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::Jacobi;

    /// The 1D Dirichlet Laplacian `tridiag(−1, 2, −1)` of size `n`.
    // An operator on `Vec<f64>` vectors takes `&Vec<f64>`, not a slice.
    #[allow(clippy::ptr_arg)]
    fn laplace_1d(v: &Vec<f64>, out: &mut Vec<f64>) -> Result<()> {
        let n = v.len();
        for i in 0..n {
            let left = if i > 0 { v[i - 1] } else { 0.0 };
            let right = if i + 1 < n { v[i + 1] } else { 0.0 };
            out[i] = 2.0 * v[i] - left - right;
        }
        Ok(())
    }

    #[test]
    fn solves_the_1d_laplacian_in_at_most_n_steps() {
        let n = 50;
        // exact solution x_i = i(n+1−i)/2 for b = 1
        let b = vec![1.0; n];
        let mut x = vec![0.0; n];
        let stats = cg(&mut laplace_1d, None, &b, &mut x, 1e-12, 100).unwrap();
        // at most n iterations in exact arithmetic
        assert!(stats.iterations <= n, "{stats:?}");
        assert!(stats.relative_residual <= 1e-12);
        for (i, xi) in x.iter().enumerate() {
            let j = (i + 1) as f64;
            let exact = j * ((n + 1) as f64 - j) / 2.0;
            assert!(
                (xi - exact).abs() < 1e-9 * exact,
                "x[{i}] = {xi}, expected {exact}"
            );
        }
        assert_eq!(stats.history.len(), stats.iterations + 1);
    }

    #[test]
    fn diagonal_operator_with_k_distinct_eigenvalues_takes_k_steps() {
        let d = [1.0, 2.0, 3.0, 1.0, 2.0, 3.0, 3.0];
        let mut apply = |v: &Vec<f64>, out: &mut Vec<f64>| {
            for i in 0..v.len() {
                out[i] = d[i] * v[i];
            }
            Ok(())
        };
        let b = vec![1.0, -1.0, 2.0, 0.5, 0.25, 1.0, -3.0];
        let mut x = vec![0.0; 7];
        let stats = cg(&mut apply, None, &b, &mut x, 1e-13, 20).unwrap();
        assert_eq!(stats.iterations, 3);
        for i in 0..7 {
            assert!((x[i] - b[i] / d[i]).abs() < 1e-12);
        }
        // the exact inverse as preconditioner: one step
        let mut m = Jacobi::new(d.iter().map(|v| 1.0 / v).collect::<Vec<f64>>());
        let mut x = vec![0.0; 7];
        let stats = cg(&mut apply, Some(&mut m), &b, &mut x, 1e-13, 20).unwrap();
        assert_eq!(stats.iterations, 1);
    }

    #[test]
    fn zero_right_hand_side_gives_zero() {
        let mut x = vec![3.0, 4.0];
        let stats = cg(&mut laplace_1d, None, &vec![0.0, 0.0], &mut x, 1e-10, 10).unwrap();
        assert_eq!((x, stats.iterations), (vec![0.0, 0.0], 0));
    }

    #[test]
    fn errors_are_reported() {
        let mut x = vec![0.0; 3];
        let e = cg(
            &mut laplace_1d,
            None,
            &vec![1.0; 3],
            &mut vec![0.0; 2],
            1e-8,
            10,
        )
        .unwrap_err();
        assert!(e.to_string().contains("`x`"), "{e}");
        let e = cg(
            &mut laplace_1d,
            None,
            &vec![1.0, f64::NAN, 0.0],
            &mut x,
            1e-8,
            10,
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::NonFinite {
                    name: "b",
                    index: 1,
                    ..
                }
            ),
            "{e}"
        );
        let e = cg(&mut laplace_1d, None, &vec![1.0; 3], &mut x, 0.0, 10).unwrap_err();
        assert!(e.to_string().contains("tol"), "{e}");
        let mut negative = |v: &Vec<f64>, out: &mut Vec<f64>| {
            for i in 0..v.len() {
                out[i] = -v[i];
            }
            Ok(())
        };
        let e = cg(&mut negative, None, &vec![1.0; 3], &mut x, 1e-8, 10).unwrap_err();
        assert!(e.to_string().contains("not positive definite"), "{e}");
        let mut m = Jacobi::new(vec![-1.0; 3]);
        let e = cg(
            &mut laplace_1d,
            Some(&mut m),
            &vec![1.0; 3],
            &mut x,
            1e-8,
            10,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("preconditioner is not positive definite"),
            "{e}"
        );
        let mut x = vec![0.0; 200];
        let e = cg(&mut laplace_1d, None, &vec![1.0; 200], &mut x, 1e-12, 5).unwrap_err();
        match e {
            Error::NoConvergence {
                iterations,
                residual,
                ..
            } => {
                assert_eq!(iterations, 5);
                assert!(residual > 1e-12 && residual.is_finite());
            }
            other => panic!("{other}"),
        }
        let mut failing = |_: &Vec<f64>, _: &mut Vec<f64>| Err(Error::arg("apply", "boom"));
        let e = cg(
            &mut failing,
            None,
            &vec![1.0; 3],
            &mut vec![0.0; 3],
            1e-8,
            10,
        )
        .unwrap_err();
        assert!(e.to_string().contains("boom"));
        // a NaN in the operator's output is reported with its index
        let mut nan_at_2 = |v: &Vec<f64>, out: &mut Vec<f64>| {
            laplace_1d(v, out)?;
            out[2] = f64::NAN;
            Ok(())
        };
        let e = cg(
            &mut nan_at_2,
            None,
            &vec![1.0; 4],
            &mut vec![0.0; 4],
            1e-8,
            10,
        )
        .unwrap_err();
        assert!(matches!(e, Error::NonFinite { index: 2, .. }), "{e}");
        assert!(e.to_string().contains("A x (operator output)"), "{e}");
    }
}
