//! Matrix-free conjugate gradients.

use super::vector::{axpy, dot, norm2};
use crate::error::{check_finite, check_len};
use crate::{Error, Result};

/// What a Krylov solve did.
#[derive(Clone, Debug, PartialEq)]
pub struct KrylovStats {
    /// Iterations performed (operator applications after the initial residual).
    pub iterations: usize,
    /// Final residual norm `‖b − A x‖₂` (as tracked by the recurrence).
    pub residual_norm: f64,
    /// Final relative residual `‖b − A x‖₂ / ‖b‖₂` (0 when `b = 0`).
    pub relative_residual: f64,
    /// Residual norm before each iteration and after the last
    /// (`iterations + 1` entries).
    pub history: Vec<f64>,
}

/// Statistics of [`cg`].
pub type CgStats = KrylovStats;

impl KrylovStats {
    /// The statistics of `b = 0`, solved by `x = 0` without iterating.
    pub(crate) fn solved_by_zero() -> Self {
        KrylovStats {
            iterations: 0,
            residual_norm: 0.0,
            relative_residual: 0.0,
            history: vec![0.0],
        }
    }
}

/// The argument checks shared by the Krylov solvers: `x` as long as `b`,
/// both finite, `tol` positive and finite. Returns `‖b‖₂`, or `None` when
/// `b = 0`, after setting `x = 0` (the solution).
pub(crate) fn krylov_start(b: &[f64], x: &mut [f64], tol: f64) -> Result<Option<f64>> {
    check_len("x", x, b.len())?;
    check_finite("b", b)?;
    check_finite("x", x)?;
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::arg(
            "tol",
            format!("must be positive and finite, got {tol}"),
        ));
    }
    let b_norm = norm2(b);
    if b_norm == 0.0 {
        x.fill(0.0);
        return Ok(None);
    }
    Ok(Some(b_norm))
}

/// Solves `A x = b` by the conjugate gradient method (Hestenes–Stiefel),
/// without preconditioning, for a symmetric positive definite operator
/// given by its action: `apply(v, out)` sets `out = A v`.
///
/// `x` holds the initial guess on entry and the solution on exit. With
/// `r_k = b − A x_k` the iteration stops at the first `k` with
/// `‖r_k‖₂ ≤ tol · ‖b‖₂` (relative residual). If `b = 0` the solution is
/// `x = 0` and no iteration runs. Each iteration costs one application of
/// `A`, two inner products and three vector updates:
///
/// ```text
/// α_k = (r_k·r_k)/(p_k·A p_k),  x_{k+1} = x_k + α_k p_k,  r_{k+1} = r_k − α_k A p_k,
/// β_k = (r_{k+1}·r_{k+1})/(r_k·r_k),  p_{k+1} = r_{k+1} + β_k p_k.
/// ```
///
/// In exact arithmetic the error decreases in the `A`-norm by at least the
/// factor `2((√κ − 1)/(√κ + 1))^k` after `k` iterations (`κ` the condition
/// number), so for a finite-element Laplacian on a mesh of width `h` the
/// iteration count grows like `1/h`.
///
/// # Errors
/// * [`Error::InvalidArgument`] if `x` and `b` differ in length, `tol` is not
///   positive and finite, or `p·A p ≤ 0` occurs (the operator is not
///   positive definite, or it is singular on the Krylov space).
/// * [`Error::NonFinite`] if `b` or `x` holds NaN or ±∞, or the operator
///   returns a non-finite value.
/// * [`Error::NoConvergence`] after `max_iter` iterations without reaching
///   the tolerance (`x` then holds the last iterate).
/// * Any error returned by `apply`.
pub fn cg(
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<()>,
    b: &[f64],
    x: &mut [f64],
    tol: f64,
    max_iter: usize,
) -> Result<CgStats> {
    let Some(b_norm) = krylov_start(b, x, tol)? else {
        return Ok(KrylovStats::solved_by_zero());
    };
    let n = b.len();
    let target = tol * b_norm;
    let mut ap = vec![0.0; n];
    // r = b − A x
    apply(x, &mut ap)?;
    check_finite("A x (operator output)", &ap)?;
    let mut r: Vec<f64> = b.iter().zip(&ap).map(|(bi, ai)| bi - ai).collect();
    let mut p = r.clone();
    let mut rr = dot(&r, &r);
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
        apply(&p, &mut ap)?;
        check_finite("A p (operator output)", &ap)?;
        let pap = dot(&p, &ap);
        if pap <= 0.0 {
            return Err(Error::arg(
                "apply",
                format!(
                    "the operator is not positive definite: p·Ap = {pap:e} at iteration {k} \
                     (conjugate gradients needs a symmetric positive definite operator)"
                ),
            ));
        }
        let alpha = rr / pap;
        axpy(alpha, &p, x);
        axpy(-alpha, &ap, &mut r);
        let rr_new = dot(&r, &r);
        let beta = rr_new / rr;
        for (pi, ri) in p.iter_mut().zip(&r) {
            *pi = ri + beta * *pi;
        }
        rr = rr_new;
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

    /// The 1D Dirichlet Laplacian `tridiag(−1, 2, −1)` of size `n`.
    fn laplace_1d(v: &[f64], out: &mut [f64]) -> Result<()> {
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
        let stats = cg(laplace_1d, &b, &mut x, 1e-12, 100).unwrap();
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
        let apply = |v: &[f64], out: &mut [f64]| {
            for i in 0..v.len() {
                out[i] = d[i] * v[i];
            }
            Ok(())
        };
        let b = [1.0, -1.0, 2.0, 0.5, 0.25, 1.0, -3.0];
        let mut x = [0.0; 7];
        let stats = cg(apply, &b, &mut x, 1e-13, 20).unwrap();
        assert_eq!(stats.iterations, 3);
        for i in 0..7 {
            assert!((x[i] - b[i] / d[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn zero_right_hand_side_gives_zero() {
        let mut x = [3.0, 4.0];
        let stats = cg(laplace_1d, &[0.0, 0.0], &mut x, 1e-10, 10).unwrap();
        assert_eq!((x, stats.iterations), ([0.0, 0.0], 0));
    }

    #[test]
    fn errors_are_reported() {
        let mut x = [0.0; 3];
        let e = cg(laplace_1d, &[1.0; 3], &mut x[..2], 1e-8, 10).unwrap_err();
        assert!(e.to_string().contains("`x`"), "{e}");
        let e = cg(laplace_1d, &[1.0, f64::NAN, 0.0], &mut x, 1e-8, 10).unwrap_err();
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
        let e = cg(laplace_1d, &[1.0; 3], &mut x, 0.0, 10).unwrap_err();
        assert!(e.to_string().contains("tol"), "{e}");
        let negative = |v: &[f64], out: &mut [f64]| {
            for i in 0..v.len() {
                out[i] = -v[i];
            }
            Ok(())
        };
        let e = cg(negative, &[1.0; 3], &mut x, 1e-8, 10).unwrap_err();
        assert!(e.to_string().contains("not positive definite"), "{e}");
        let mut x = vec![0.0; 200];
        let e = cg(laplace_1d, &vec![1.0; 200], &mut x, 1e-12, 5).unwrap_err();
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
        let failing = |_: &[f64], _: &mut [f64]| Err(Error::arg("apply", "boom"));
        let e = cg(failing, &[1.0; 3], &mut [0.0; 3], 1e-8, 10).unwrap_err();
        assert!(e.to_string().contains("boom"));
    }
}
