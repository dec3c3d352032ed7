//! Matrix-free restarted GMRES, right-preconditioned, with classical
//! Gram–Schmidt and one re-orthogonalisation (CGS2).

use super::krylov::{KrylovStats, krylov_start, non_finite_output};
use super::operator::LinearOperator;
use crate::vector::VectorOps;
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

/// One Arnoldi step's orthogonalisation of `w` against `basis` by classical
/// Gram–Schmidt twice (CGS2): `h = Vᵀw, w ← w − V h`, then again with the
/// correction added to `h`. Returns `h` (one entry per basis vector). Each
/// pass is one multi-dot (one round trip on a device) and one multi-axpy;
/// the second pass restores the orthogonality that one classical pass loses
/// ("twice is enough", Giraud, Langou and Rozložník 2005), at the cost of
/// modified Gram–Schmidt's `k` sequential reductions.
fn orthogonalise<V: VectorOps>(w: &mut V, basis: &[V]) -> Result<Vec<f64>> {
    let refs: Vec<&V> = basis.iter().collect();
    let mut h = w.dots(&refs)?;
    if let Some(&bad) = h.iter().find(|v| !v.is_finite()) {
        return Err(non_finite_output("A v (operator output)", w, "vᵀ A v", bad));
    }
    let minus: Vec<f64> = h.iter().map(|c| -c).collect();
    w.maxpy(&minus, &refs)?;
    let h2 = w.dots(&refs)?;
    let minus: Vec<f64> = h2.iter().map(|c| -c).collect();
    w.maxpy(&minus, &refs)?;
    for (a, c) in h.iter_mut().zip(h2) {
        *a += c;
    }
    Ok(h)
}

/// Solves `A x = b` by restarted GMRES (Saad–Schultz), right-preconditioned
/// if `preconditioner` gives `z = M⁻¹ r`, for a general (nonsingular)
/// operator `a` given by its action ([`LinearOperator`]: `y = A x`; closures
/// qualify).
///
/// Each cycle builds an orthonormal basis `V_m` of the Krylov space
/// `span{r_0, A M⁻¹ r_0, …, (A M⁻¹)^{m−1} r_0}` by Arnoldi with classical
/// Gram–Schmidt applied twice (CGS2: two multi-dots and two multi-axpys per
/// step, so a step on device vectors costs three scalar round trips with the
/// norm, whatever the basis size), reduces the Hessenberg least-squares
/// problem `min ‖β e_1 − H_m y‖` with Givens rotations on the host (the last
/// entry is the current residual norm, so no extra operator application is
/// needed to monitor convergence), and updates `x ← x + M⁻¹ V_m y`. With
/// right preconditioning the monitored residual is the true one,
/// `‖b − A x‖₂`, not a preconditioned one. After `opts.restart` steps the
/// cycle restarts from the current `x`. `x` holds the initial guess on entry,
/// the solution on exit. If `b = 0`, `x = 0` and no iteration runs.
///
/// Convergence is judged, as in most GMRES implementations, by the Arnoldi
/// estimate of the residual norm `|g_{k+1}|`, which equals `‖b − A x_k‖₂`
/// in exact arithmetic; it is also the right measure when `a` is itself
/// approximate (finite-difference Jacobian products, [`super::newton_krylov`]),
/// where a true residual would carry the approximation's own error. A
/// restart computes the true residual of the current `x` to begin the next
/// cycle (one application per restart, not counted in
/// [`KrylovStats::iterations`], which counts Arnoldi steps).
///
/// # Errors
/// * [`Error::InvalidArgument`] if `x` and `b` differ in length, `tol` is not
///   positive and finite or `restart` is 0, the operator is singular on the
///   Krylov space, or vectors live in different places.
/// * [`Error::NonFinite`] if `b`, `x` or an operator output holds NaN or ±∞
///   (with its index).
/// * [`Error::NoConvergence`] after `max_iter` applications without reaching
///   the tolerance (`x` then holds the last iterate).
/// * Any error returned by `a` or the preconditioner.
pub fn gmres<V: VectorOps>(
    a: &mut (impl LinearOperator<V> + ?Sized),
    mut preconditioner: Option<&mut dyn LinearOperator<V>>,
    b: &V,
    x: &mut V,
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
    let mut w = b.zeros_like()?;
    // M⁻¹ v (if preconditioned)
    let mut z = match preconditioner {
        Some(_) => Some(b.zeros_like()?),
        None => None,
    };
    // The basis vectors, allocated as the first cycle needs them and reused.
    let mut basis: Vec<V> = Vec::with_capacity(m + 1);
    basis.push(b.zeros_like()?);
    // Hessenberg matrix column by column: h[j] has j + 2 entries.
    let mut h: Vec<Vec<f64>> = Vec::with_capacity(m);
    let (mut cs, mut sn) = (vec![0.0; m], vec![0.0; m]);
    let mut g = vec![0.0; m + 1];
    let mut history = Vec::new();
    let mut iterations = 0;
    loop {
        // v_0 = r/β with r = b − A x
        a.apply(x, &mut w)?;
        basis[0].copy_from(&w)?;
        basis[0].axpby(1.0, b, -1.0)?;
        let beta = basis[0].norm2()?;
        if !beta.is_finite() {
            return Err(non_finite_output(
                "A x (operator output)",
                &w,
                "‖b − A x‖",
                beta,
            ));
        }
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
        basis[0].scale(1.0 / beta)?;
        h.clear();
        g.as_mut_slice().fill(0.0);
        g[0] = beta;
        let mut k = 0; // basis vectors used in this cycle
        let mut res = beta;
        while k < m && iterations < opts.max_iter && res > target {
            // w = A M⁻¹ v_k
            match (&mut preconditioner, &mut z) {
                (Some(pc), Some(z)) => {
                    pc.apply(&basis[k], z)?;
                    a.apply(z, &mut w)?;
                }
                _ => a.apply(&basis[k], &mut w)?,
            }
            iterations += 1;
            let mut col = orthogonalise(&mut w, &basis[..=k])?;
            let wn = w.norm2()?;
            col.push(wn);
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
            // v_{k+1} = w/‖w‖ (w takes the old vector's storage)
            if basis.len() == k {
                basis.push(w.zeros_like()?);
            }
            std::mem::swap(&mut basis[k], &mut w);
            basis[k].scale(1.0 / wn)?;
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
        // x ← x + M⁻¹ V y
        let refs: Vec<&V> = basis[..k].iter().collect();
        match (&mut preconditioner, &mut z) {
            (Some(pc), Some(z)) => {
                w.fill(0.0)?;
                w.maxpy(&y, &refs)?;
                pc.apply(&w, z)?;
                x.axpy(1.0, z)?;
            }
            _ => x.maxpy(&y, &refs)?,
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
    use crate::solve::Jacobi;

    /// A nonsymmetric convection–diffusion matrix `tridiag(−1 − c, 2, −1 + c)`.
    fn convection_diffusion(c: f64) -> impl FnMut(&Vec<f64>, &mut Vec<f64>) -> Result<()> {
        move |v: &Vec<f64>, out: &mut Vec<f64>| {
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
        for (restart, preconditioned) in [(n, false), (10, false), (10, true)] {
            let mut x = vec![0.0; n];
            let opts = GmresOptions {
                tol: 1e-12,
                max_iter: 2000,
                restart,
            };
            // Jacobi: diag = 2
            let mut m = Jacobi::new(vec![0.5; n]);
            let pc: Option<&mut dyn LinearOperator<Vec<f64>>> =
                if preconditioned { Some(&mut m) } else { None };
            let stats = gmres(&mut convection_diffusion(0.4), pc, &b, &mut x, &opts).unwrap();
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
            assert!(r.norm2().unwrap() <= 1e-12 * b.norm2().unwrap() * 1.01);
        }
    }

    #[test]
    fn happy_breakdown_and_zero_rhs() {
        // A = 3 I: one step, exact
        let mut apply = |v: &Vec<f64>, out: &mut Vec<f64>| {
            for i in 0..v.len() {
                out[i] = 3.0 * v[i];
            }
            Ok(())
        };
        let mut x = vec![0.0; 4];
        let stats = gmres(
            &mut apply,
            None,
            &vec![3.0, 6.0, -3.0, 0.0],
            &mut x,
            &GmresOptions::default(),
        )
        .unwrap();
        assert_eq!(stats.iterations, 1);
        assert_eq!(x, [1.0, 2.0, -1.0, 0.0]);
        let stats = gmres(
            &mut apply,
            None,
            &vec![0.0; 4],
            &mut x,
            &GmresOptions::default(),
        )
        .unwrap();
        assert_eq!((x, stats.iterations), (vec![0.0; 4], 0));
    }

    #[test]
    fn errors_are_reported() {
        let mut x = vec![0.0; 30];
        let opts = GmresOptions {
            tol: 1e-12,
            max_iter: 3,
            restart: 2,
        };
        let e = gmres(
            &mut convection_diffusion(0.1),
            None,
            &vec![1.0; 30],
            &mut x,
            &opts,
        )
        .unwrap_err();
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
        assert!(
            gmres(
                &mut convection_diffusion(0.1),
                None,
                &vec![1.0; 3],
                &mut vec![0.0; 3],
                &opts
            )
            .is_err()
        );
        let mut zero = |_: &Vec<f64>, out: &mut Vec<f64>| {
            out.as_mut_slice().fill(0.0);
            Ok(())
        };
        let e = gmres(
            &mut zero,
            None,
            &vec![1.0; 3],
            &mut vec![0.0; 3],
            &GmresOptions::default(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("singular"), "{e}");
        // a NaN in A v (not in A x) is found by the Arnoldi step
        let mut calls = 0;
        let mut nan_later = |v: &Vec<f64>, out: &mut Vec<f64>| {
            convection_diffusion(0.1)(v, out)?;
            calls += 1;
            if calls > 1 {
                out[1] = f64::INFINITY;
            }
            Ok(())
        };
        let e = gmres(
            &mut nan_later,
            None,
            &vec![1.0; 3],
            &mut vec![0.0; 3],
            &GmresOptions::default(),
        )
        .unwrap_err();
        assert!(
            matches!(
                e,
                Error::NonFinite {
                    name: "A v (operator output)",
                    index: 1,
                    ..
                }
            ),
            "{e}"
        );
    }
}
