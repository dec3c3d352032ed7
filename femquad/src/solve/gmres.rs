//! Matrix-free restarted GMRES.

use super::cg::{KrylovStats, krylov_start};
use super::vector::{axpy, dot, norm2};
use crate::error::check_finite;
use crate::{Error, Result};

/// Options of [`gmres`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GmresOptions {
    /// Relative tolerance: stop when `‖b − A x‖₂ ≤ tol·‖b‖₂`.
    pub tol: f64,
    /// Largest number of operator applications in all cycles together.
    pub max_iter: usize,
    /// Krylov subspace dimension of one cycle (GMRES(m)); the basis takes
    /// `(m + 1)·n` values of memory.
    pub restart: usize,
}

impl Default for GmresOptions {
    /// `tol = 1e-10`, `max_iter = 10 000`, `restart = 200`.
    fn default() -> Self {
        GmresOptions {
            tol: 1e-10,
            max_iter: 10_000,
            restart: 200,
        }
    }
}

/// Solves `A x = b` by restarted GMRES (Saad–Schultz) without
/// preconditioning, for a general (nonsingular) operator given by its
/// action `apply(v, out)`, `out = A v`.
///
/// Each cycle builds an orthonormal basis `V_m` of the Krylov space
/// `span{r_0, A r_0, …, A^{m−1} r_0}` by Arnoldi with modified Gram–Schmidt,
/// reduces the Hessenberg least-squares problem `min ‖β e_1 − H_m y‖` with
/// Givens rotations (whose last entry is the current residual norm, so no
/// extra operator application is needed to monitor convergence), and updates
/// `x ← x + V_m y`. After `opts.restart` steps the cycle restarts from the
/// current `x`. `x` holds the initial guess on entry, the solution on exit.
/// If `b = 0`, `x = 0` and no iteration runs.
///
/// Convergence is judged, as in most GMRES implementations, by the Arnoldi
/// estimate of the residual norm `|g_{k+1}|`, which equals `‖b − A x_k‖₂`
/// in exact arithmetic; it is also the right measure when `apply` is itself
/// approximate (finite-difference Jacobian products, [`super::newton_krylov`]),
/// where a true residual would carry the approximation's own error. A
/// restart computes the true residual of the current `x` to begin the next
/// cycle (one application per restart, not counted in
/// [`KrylovStats::iterations`], which counts Arnoldi steps).
///
/// # Errors
/// * [`Error::InvalidArgument`] if `x` and `b` differ in length, `tol` is not
///   positive and finite or `restart` is 0.
/// * [`Error::NonFinite`] if `b`, `x` or an operator output holds NaN or ±∞.
/// * [`Error::NoConvergence`] after `max_iter` applications without reaching
///   the tolerance (`x` then holds the last iterate).
/// * Any error returned by `apply`.
pub fn gmres(
    mut apply: impl FnMut(&[f64], &mut [f64]) -> Result<()>,
    b: &[f64],
    x: &mut [f64],
    opts: &GmresOptions,
) -> Result<KrylovStats> {
    let tol = opts.tol;
    if opts.restart == 0 {
        return Err(Error::arg(
            "restart",
            "the Krylov dimension must be at least 1",
        ));
    }
    let Some(b_norm) = krylov_start(b, x, tol)? else {
        return Ok(KrylovStats::solved_by_zero());
    };
    let n = b.len();
    let target = tol * b_norm;
    let m = opts.restart.min(n.max(1));
    let mut w = vec![0.0; n];
    let mut basis: Vec<Vec<f64>> = Vec::with_capacity(m + 1);
    // Hessenberg matrix column by column: h[j] has j + 2 entries.
    let mut h: Vec<Vec<f64>> = Vec::with_capacity(m);
    let (mut cs, mut sn) = (vec![0.0; m], vec![0.0; m]);
    let mut g = vec![0.0; m + 1];
    let mut history = Vec::new();
    let mut iterations = 0;
    loop {
        // r = b − A x
        apply(x, &mut w)?;
        check_finite("A x (operator output)", &w)?;
        let r: Vec<f64> = b.iter().zip(&w).map(|(bi, ai)| bi - ai).collect();
        let beta = norm2(&r);
        if history.is_empty() {
            history.push(beta);
        }
        if beta <= target {
            return Ok(KrylovStats {
                iterations,
                residual_norm: beta,
                relative_residual: beta / b_norm,
                history,
            });
        }
        if iterations >= opts.max_iter {
            return Err(Error::NoConvergence {
                solver: "GMRES",
                iterations,
                residual: beta / b_norm,
                tolerance: tol,
            });
        }
        basis.clear();
        h.clear();
        basis.push(r.iter().map(|v| v / beta).collect());
        g.fill(0.0);
        g[0] = beta;
        let mut k = 0; // basis vectors used in this cycle
        let mut res = beta;
        while k < m && iterations < opts.max_iter && res > target {
            apply(&basis[k], &mut w)?;
            check_finite("A v (operator output)", &w)?;
            iterations += 1;
            let mut col = vec![0.0; k + 2];
            for (i, v) in basis.iter().enumerate() {
                let hij = dot(&w, v);
                col[i] = hij;
                axpy(-hij, v, &mut w);
            }
            let wn = norm2(&w);
            col[k + 1] = wn;
            // apply the previous rotations, then a new one to zero col[k+1]
            for i in 0..k {
                let (a, b2) = (col[i], col[i + 1]);
                col[i] = cs[i] * a + sn[i] * b2;
                col[i + 1] = -sn[i] * a + cs[i] * b2;
            }
            let (a, b2) = (col[k], col[k + 1]);
            let rho = a.hypot(b2);
            if rho == 0.0 {
                // A v_k = 0: the operator is singular on the Krylov space.
                return Err(Error::arg(
                    "apply",
                    format!(
                        "the operator is singular (A v = 0 for a Krylov vector at iteration {iterations})"
                    ),
                ));
            }
            cs[k] = a / rho;
            sn[k] = b2 / rho;
            col[k] = rho;
            col[k + 1] = 0.0;
            g[k + 1] = -sn[k] * g[k];
            g[k] *= cs[k];
            res = g[k + 1].abs();
            history.push(res);
            h.push(col);
            k += 1;
            if wn == 0.0 {
                // happy breakdown: the Krylov space is invariant, x is exact
                break;
            }
            basis.push(w.iter().map(|v| v / wn).collect());
        }
        // back substitution H y = g (upper triangular k × k)
        let mut y = vec![0.0; k];
        for i in (0..k).rev() {
            let mut s = g[i];
            for j in i + 1..k {
                s -= h[j][i] * y[j];
            }
            y[i] = s / h[i][i];
        }
        for (j, yj) in y.iter().enumerate() {
            axpy(*yj, &basis[j], x);
        }
        if res <= target {
            return Ok(KrylovStats {
                iterations,
                residual_norm: res,
                relative_residual: res / b_norm,
                history,
            });
        }
        // next cycle: its head computes the true residual of the new x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A nonsymmetric convection–diffusion matrix `tridiag(−1 − c, 2, −1 + c)`.
    fn convection_diffusion(c: f64) -> impl FnMut(&[f64], &mut [f64]) -> Result<()> {
        move |v: &[f64], out: &mut [f64]| {
            let n = v.len();
            for i in 0..n {
                let left = if i > 0 { v[i - 1] } else { 0.0 };
                let right = if i + 1 < n { v[i + 1] } else { 0.0 };
                out[i] = 2.0 * v[i] - (1.0 + c) * left - (1.0 - c) * right;
            }
            Ok(())
        }
    }

    #[test]
    fn solves_a_nonsymmetric_system() {
        let n = 40;
        let x_exact: Vec<f64> = (0..n)
            .map(|i| ((i as f64) * 0.3).sin() + 0.1 * i as f64)
            .collect();
        let mut b = vec![0.0; n];
        convection_diffusion(0.4)(&x_exact, &mut b).unwrap();
        for restart in [n, 10] {
            let mut x = vec![0.0; n];
            let opts = GmresOptions {
                tol: 1e-12,
                max_iter: 2000,
                restart,
            };
            let stats = gmres(convection_diffusion(0.4), &b, &mut x, &opts).unwrap();
            assert!(stats.relative_residual <= 1e-12, "{stats:?}");
            if restart == n {
                assert!(
                    stats.iterations <= n,
                    "full GMRES needs at most n steps: {stats:?}"
                );
            }
            let err = x
                .iter()
                .zip(&x_exact)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-8, "restart {restart}: error {err}");
            // the true residual agrees with the reported one
            let mut ax = vec![0.0; n];
            convection_diffusion(0.4)(&x, &mut ax).unwrap();
            let r: Vec<f64> = b.iter().zip(&ax).map(|(p, q)| p - q).collect();
            assert!(norm2(&r) <= 1e-12 * norm2(&b) * 1.01);
        }
    }

    #[test]
    fn happy_breakdown_and_zero_rhs() {
        // A = 3 I: one step, exact
        let apply = |v: &[f64], out: &mut [f64]| {
            for i in 0..v.len() {
                out[i] = 3.0 * v[i];
            }
            Ok(())
        };
        let mut x = [0.0; 4];
        let stats = gmres(
            apply,
            &[3.0, 6.0, -3.0, 0.0],
            &mut x,
            &GmresOptions::default(),
        )
        .unwrap();
        assert_eq!(stats.iterations, 1);
        assert_eq!(x, [1.0, 2.0, -1.0, 0.0]);
        let stats = gmres(apply, &[0.0; 4], &mut x, &GmresOptions::default()).unwrap();
        assert_eq!((x, stats.iterations), ([0.0; 4], 0));
    }

    #[test]
    fn errors_are_reported() {
        let mut x = [0.0; 30];
        let opts = GmresOptions {
            tol: 1e-12,
            max_iter: 3,
            restart: 2,
        };
        let e = gmres(convection_diffusion(0.1), &[1.0; 30], &mut x, &opts).unwrap_err();
        assert!(
            matches!(
                e,
                Error::NoConvergence {
                    solver: "GMRES",
                    iterations: 3,
                    ..
                }
            ),
            "{e}"
        );
        let opts = GmresOptions {
            restart: 0,
            ..GmresOptions::default()
        };
        assert!(gmres(convection_diffusion(0.1), &[1.0; 3], &mut [0.0; 3], &opts).is_err());
        let zero = |_: &[f64], out: &mut [f64]| {
            out.fill(0.0);
            Ok(())
        };
        let e = gmres(zero, &[1.0; 3], &mut [0.0; 3], &GmresOptions::default()).unwrap_err();
        assert!(e.to_string().contains("singular"), "{e}");
    }
}
