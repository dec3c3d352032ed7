//! Matrix-free restarted GMRES, right-preconditioned, with classical
//! Gram–Schmidt and one re-orthogonalisation (CGS2).

use super::krylov::{
    AttainableCheck, KrylovStats, PreconditionedSystem, Separate, Tol, checked_norm, krylov_start,
    non_finite_output, true_residual,
};
use crate::linalg::LinearOperator;
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
        return Err(non_finite_output(
            "a",
            "A v (operator output)",
            w,
            "vᵀ A v",
            bad,
        ));
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
/// The Arnoldi estimate `|g_{k+1}|` equals `‖b − A x_k‖₂` only in exact
/// arithmetic: rounding (in `f32`, or near the attainable accuracy) and an
/// operator that is itself approximate (finite-difference Jacobian
/// products, [`super::newton_krylov`]) make it drift, and it can claim any
/// tolerance. So a cycle whose estimate meets the tolerance is followed by
/// the true residual of the updated `x` (one application of `A`, one
/// reduction, not counted in [`KrylovStats::iterations`], which counts
/// Arnoldi steps); it decides convergence and is what is reported. If it
/// misses the tolerance, GMRES restarts from it; when the next claim is
/// false again and its true residual is not at least 10 % below the
/// previous false claim's, the true residual has stagnated: the tolerance
/// is out of reach and the solve says so (see Errors). Every restart
/// starts from the true residual of the current `x` too.
///
/// # Errors
/// * [`Error::InvalidArgument`] naming
///   * `x` if its length differs from `b`'s, or it lives elsewhere;
///   * `opts` if `tol` is not positive and finite, below the machine
///     epsilon of the vectors' precision, or below what GMRES attains for
///     this operator (the attained value is in the message), or if
///     `restart` is 0;
///   * `a` if the operator is singular on the Krylov space (`A v = 0`).
/// * [`Error::NonFinite`] if `b`, `x` or an operator output holds NaN or ±∞
///   (with its index).
/// * [`Error::NoConvergence`] after `max_iter` applications without reaching
///   the tolerance, with the true relative residual (`x` then holds the last
///   iterate).
/// * Any error returned by `a` or the preconditioner.
pub fn gmres<V: VectorOps>(
    a: &mut (impl LinearOperator<V> + ?Sized),
    preconditioner: Option<&mut dyn LinearOperator<V>>,
    b: &V,
    x: &mut V,
    opts: &GmresOptions,
) -> Result<KrylovStats> {
    gmres_system(&mut Separate { a, preconditioner }, b, x, opts)
}

/// [`gmres`] on a system whose operator and preconditioner are one object
/// (errors naming `a` are about its operator).
pub(crate) fn gmres_system<V: VectorOps>(
    system: &mut (impl PreconditionedSystem<V> + ?Sized),
    b: &V,
    x: &mut V,
    opts: &GmresOptions,
) -> Result<KrylovStats> {
    let tol = opts.tol;
    if opts.restart == 0 {
        return Err(Error::arg(
            "opts",
            "GmresOptions::restart (the Krylov dimension of a cycle) must be at least 1",
        ));
    }
    let tol_arg = Tol {
        value: tol,
        arg: "opts",
        label: "GmresOptions::tol",
    };
    let Some(b_norm) = krylov_start(b, x, tol_arg)? else {
        return Ok(KrylovStats::solved_by_zero());
    };
    let n = b.len();
    let target = tol * b_norm;
    let m = opts.restart.min(n.max(1));
    let mut w = b.zeros_like()?;
    // M⁻¹ v (if preconditioned)
    let mut z = match system.is_preconditioned() {
        true => Some(b.zeros_like()?),
        false => None,
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
    let mut attainable = AttainableCheck::new("GMRES", b_norm, tol_arg);
    // whether the last cycle's estimate met the tolerance
    let mut claimed = false;
    loop {
        // v_0 = r/β with r = b − A x, the true residual
        true_residual(system, b, x, &mut w, &mut basis[0])?;
        let beta = checked_norm(basis[0].dot(&basis[0])?, &w)?;
        match history.last_mut() {
            None => history.push(beta),
            Some(last) => *last = beta,
        }
        if beta <= target {
            return Ok(KrylovStats {
                iterations,
                residual_norm: beta,
                relative_residual: beta / b_norm,
                history,
            });
        }
        attainable.restart(claimed, beta, iterations)?;
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
            match &mut z {
                Some(z) => {
                    system.precondition(&basis[k], z)?;
                    system.apply(z, &mut w)?;
                }
                None => system.apply(&basis[k], &mut w)?,
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
                    "a",
                    format!(
                        "the operator is singular: A v = 0 for a Krylov vector at iteration \
                         {iterations}, so A x = b has no unique solution (make the operator \
                         nonsingular, e.g. by fixing more unknowns)"
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
        match &mut z {
            Some(z) => {
                w.fill(0.0)?;
                w.maxpy(&y, &refs)?;
                system.precondition(&w, z)?;
                x.axpy(1.0, z)?;
            }
            None => x.maxpy(&y, &refs)?,
        }
        // next cycle: its head computes the true residual of the new x,
        // which decides whether the estimate's claim holds
        claimed = res <= target;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Real;
    use crate::linalg::Jacobi;

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

    /// `convection_diffusion(c)` in any precision.
    fn convection_diffusion_in<R: Real>(c: f64) -> impl FnMut(&Vec<R>, &mut Vec<R>) -> Result<()> {
        let (l, d, u) = (
            R::from_f64(-1.0 - c),
            R::from_f64(2.0),
            R::from_f64(-1.0 + c),
        );
        move |v: &Vec<R>, out: &mut Vec<R>| {
            let n = v.len();
            for i in 0..n {
                let left = if i > 0 { v[i - 1] } else { R::ZERO };
                let right = if i + 1 < n { v[i + 1] } else { R::ZERO };
                out[i] = d * v[i] + l * left + u * right;
            }
            Ok(())
        }
    }

    /// `‖b − A x‖₂` in f64 for `convection_diffusion(c)`, and the scale
    /// `‖b‖ + ‖|A||x|‖` of its rounding.
    fn exact_residual<R: Real>(c: f64, b: &[R], x: &[R]) -> (f64, f64) {
        let n = x.len();
        let at = |i: usize| x[i].to_f64();
        let (mut rr, mut bb, mut aa) = (0.0, 0.0, 0.0);
        for (i, bi) in b.iter().enumerate() {
            let bi = bi.to_f64();
            let left = if i > 0 { at(i - 1) } else { 0.0 };
            let right = if i + 1 < n { at(i + 1) } else { 0.0 };
            let ax = 2.0 * at(i) - (1.0 + c) * left - (1.0 - c) * right;
            let abs = 2.0 * at(i).abs() + (1.0 + c) * left.abs() + (1.0 - c).abs() * right.abs();
            rr += (bi - ax).powi(2);
            bb += bi * bi;
            aa += abs * abs;
        }
        (rr.sqrt(), bb.sqrt() + aa.sqrt())
    }

    /// The residual GMRES reports is `‖b − A x‖` of the `x` it returns (not
    /// the least-squares estimate): bitwise the value computed in the
    /// vectors' precision, and within its rounding of the exact residual, in
    /// f32 and f64, restarted and not, preconditioned and not.
    #[test]
    fn the_reported_residual_is_b_minus_a_x() {
        fn check<R: Real>(tol: f64, restart: usize, preconditioned: bool) {
            let (n, c) = (100, 0.4);
            let b: Vec<R> = (0..n)
                .map(|i| R::from_f64(1.0 + (0.7 * i as f64).sin()))
                .collect();
            let mut x = vec![R::ZERO; n];
            let mut m = Jacobi::new(vec![R::from_f64(0.5); n]);
            let pc: Option<&mut dyn LinearOperator<Vec<R>>> =
                if preconditioned { Some(&mut m) } else { None };
            let opts = GmresOptions {
                tol,
                max_iter: 5000,
                restart,
            };
            let mut a = convection_diffusion_in::<R>(c);
            let stats = gmres(&mut a, pc, &b, &mut x, &opts).unwrap();
            // b − A x as GMRES computes it: the same value to the bit (the
            // least-squares estimate would differ)
            let mut r = vec![R::ZERO; n];
            a(&x, &mut r).unwrap();
            r.axpby(1.0, &b, -1.0).unwrap();
            assert_eq!(stats.residual_norm, r.dot(&r).unwrap().sqrt());
            let (exact, scale) = exact_residual(c, &b, &x);
            let eps = R::EPSILON.to_f64();
            assert!(
                (stats.residual_norm - exact).abs() <= 4.0 * eps * scale,
                "{} GMRES({restart}): reported {:e}, exact {exact:e} (rounding {:e})",
                R::PRECISION,
                stats.residual_norm,
                eps * scale
            );
            assert!(stats.relative_residual <= tol, "{stats:?}");
            assert_eq!(stats.history.last(), Some(&stats.residual_norm));
        }
        // f32 GMRES(100) at 1e-5: the estimate's first claim is false, a
        // restart from b − A x meets the tolerance
        check::<f32>(1e-5, 100, false);
        for (restart, preconditioned) in [(100, false), (10, false), (10, true)] {
            check::<f32>(1e-4, restart, preconditioned);
            check::<f64>(1e-12, restart, preconditioned);
        }
    }

    /// Below what f32 attains for the operator, GMRES's least-squares
    /// estimate still claims convergence; now the claim is checked against
    /// `b − A x`, and when restarting from it does not help, the tolerance
    /// is refused with the attained residual. A tolerance below the machine
    /// epsilon is refused before any work, with the bound.
    #[test]
    fn a_tolerance_out_of_reach_is_refused() {
        let (n, c) = (100, 0.4);
        let b: Vec<f32> = (0..n).map(|i| 1.0 + (0.7 * i as f32).sin()).collect();
        let mut x = vec![0f32; n];
        let opts = GmresOptions {
            tol: 3e-7,
            max_iter: 5000,
            restart: 100,
        };
        let e = gmres(
            &mut convection_diffusion_in::<f32>(c),
            None,
            &b,
            &mut x,
            &opts,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::InvalidArgument { name: "opts", .. }),
            "{text}"
        );
        assert!(
            text.contains("GmresOptions::tol = 3e-7 is below the accuracy GMRES attains")
                && text.contains("stays at"),
            "{text}"
        );
        let opts = GmresOptions {
            tol: 1e-30,
            ..GmresOptions::default()
        };
        let e = gmres(
            &mut convection_diffusion(0.4),
            None,
            &vec![1.0; n],
            &mut vec![0.0; n],
            &opts,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains(
                "GmresOptions::tol = 1e-30 is below the machine epsilon of the vectors' \
                 precision (f64: ε = 2.220446049250313e-16)"
            ),
            "{e}"
        );
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
