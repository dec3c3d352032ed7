//! Matrix-free (preconditioned) conjugate gradients.

use super::krylov::{
    AttainableCheck, KrylovStats, PreconditionedSystem, Separate, Tol, checked_norm, krylov_start,
    non_finite_output, true_residual,
};
use crate::linalg::LinearOperator;
use crate::vector::{CgFusion, VectorOps};
use crate::{Error, Result};

/// Statistics of [`cg`].
pub type CgStats = KrylovStats;

/// What to do about an operator that is not positive definite: the end of
/// [`cg`]'s error (callers that know the operator's origin replace it).
pub(crate) const OPERATOR_ADVICE: &str = " (conjugate gradients needs a symmetric positive \
     definite operator: an indefinite or singular one gives this; use gmres for an indefinite or \
     non-symmetric operator, make a singular one definite, e.g. by fixing more unknowns)";

/// What to do about a preconditioner that is not positive definite: the end
/// of [`cg`]'s error.
pub(crate) const PRECONDITIONER_ADVICE: &str =
    " (preconditioned conjugate gradients needs a symmetric positive definite M⁻¹)";

/// `z = M⁻¹ r` if there is a preconditioner `M` (then `z` is `Some`);
/// returns `(r·r, r·z)` in one reduction (`r·z = r·r` without `M`).
fn precondition<V: VectorOps>(
    system: &mut (impl PreconditionedSystem<V> + ?Sized),
    r: &V,
    z: &mut Option<V>,
) -> Result<(f64, f64)> {
    match z {
        Some(z) => {
            system.precondition(r, z)?;
            let d = r.dots(&[r, z])?;
            if !d[1].is_finite() && d[0].is_finite() {
                return Err(non_finite_output(
                    "preconditioner",
                    "M⁻¹ r (preconditioner output)",
                    z,
                    "r·M⁻¹r",
                    d[1],
                ));
            }
            Ok((d[0], d[1]))
        }
        None => {
            let rr = r.dot(r)?;
            Ok((rr, rr))
        }
    }
}

/// `x ← x + α p; r ← r − α A p`, then `z = M⁻¹ r` and `(r·r, r·z)`, fused
/// as far as the preconditioner allows ([`VectorOps::cg_update`]): with no
/// preconditioner or a diagonal scaling (Jacobi) all in one pass, else the
/// two updates in one pass, then `M⁻¹` and one multi-dot ([`precondition`]).
/// The values are bitwise those of the unfused sequence
/// (`axpy`, `axpy`, [`precondition`]).
fn update<V: VectorOps>(
    system: &mut (impl PreconditionedSystem<V> + ?Sized),
    alpha: f64,
    p: &V,
    ap: &V,
    x: &mut V,
    r: &mut V,
    z: &mut Option<V>,
) -> Result<(f64, f64)> {
    let sums = match z.as_mut() {
        None => r.cg_update(alpha, p, ap, x, CgFusion::Norm)?,
        Some(z) => match system.diagonal_scaling() {
            Some(d) => r.cg_update(
                alpha,
                p,
                ap,
                x,
                CgFusion::Jacobi {
                    inverse_diagonal: d,
                    z,
                },
            )?,
            None => None,
        },
    };
    let Some((rr, rz)) = sums else {
        r.cg_update(alpha, p, ap, x, CgFusion::Update)?;
        return precondition(system, r, z);
    };
    if let Some(z) = z
        && !rz.is_finite()
        && rr.is_finite()
    {
        return Err(non_finite_output(
            "preconditioner",
            "M⁻¹ r (preconditioner output)",
            z,
            "r·M⁻¹r",
            rz,
        ));
    }
    Ok((rr, rz))
}

/// Solves `A x = b` by the conjugate gradient method (Hestenes–Stiefel),
/// preconditioned by `M ≈ A` if `preconditioner` gives `z = M⁻¹ r`, for a
/// symmetric positive definite operator `a` given by its action
/// ([`LinearOperator`]: `y = A x`; closures qualify) and a symmetric positive
/// definite `M⁻¹`. Without preconditioner (`None`), `M = I`.
///
/// `x` holds the initial guess on entry and the solution on exit. The
/// solve stops when the true residual `r = b − A x` satisfies
/// `‖r‖₂ ≤ tol · ‖b‖₂` (relative residual, not preconditioned), and
/// reports that true residual. If `b = 0` the solution is `x = 0` and no
/// iteration runs. With `z_k = M⁻¹ r_k`:
///
/// ```text
/// α_k = (r_k·z_k)/(p_k·A p_k),  x_{k+1} = x_k + α_k p_k,  r_{k+1} = r_k − α_k A p_k,
/// β_k = (r_{k+1}·z_{k+1})/(r_k·z_k),  p_{k+1} = z_{k+1} + β_k p_k,  p_0 = z_0.
/// ```
///
/// The updated `r_k` drifts from `b − A x_k` by rounding (in `f32`, or
/// near the attainable accuracy, by orders of magnitude), so when it first
/// meets the tolerance the true residual is computed (one more application
/// of `A`, one reduction). If the true residual misses the tolerance, CG
/// restarts from it (`r = b − A x`, `p = M⁻¹ r`); when the next claim is
/// false again and its true residual is not at least 10 % below the
/// previous false claim's, the true residual has stagnated: the tolerance
/// is out of reach and the solve says so (see Errors).
///
/// Each iteration costs one application of `A` (and of `M⁻¹`) and two
/// reductions — on device vectors two round trips of scalars (`p·Ap`, then
/// `r·r` and `r·z` together) and no array transfer; the final check of the
/// true residual costs one application and one scalar more. The updates of
/// `x` and `r` are fused with the reduction that follows them
/// ([`VectorOps::cg_update`]), with a Jacobi `M⁻¹`
/// ([`LinearOperator::diagonal_scaling`]) also `z = D⁻¹ r`. Vector kernel
/// launches per iteration on a device (besides those of `A` and `M⁻¹`;
/// a reduction is two launches and one blocking read, a *host sync*):
///
/// | preconditioner | unfused (before) | fused (now) | host syncs |
/// |---|---|---|---|
/// | none | 7: `p·Ap` (2), `axpy` ×2, `r·r` (2), `p ← r + βp` | 5: `p·Ap` (2), update + `r·r` (2), `p ← r + βp` | 2 |
/// | Jacobi | 8: as above + `z = D⁻¹ r`, `(r·r, r·z)` (2) | 5: `p·Ap` (2), update + `z` + `(r·r, r·z)` (2), `p ← z + βp` | 2 |
/// | other `M⁻¹` | 7 (+ `M⁻¹`) | 6: `p·Ap` (2), update (1), `(r·r, r·z)` (2), `p ← z + βp` (+ `M⁻¹`) | 2 |
///
/// (`p ← z + βp` stays one `axpby` pass: it cannot join the next `A p`
/// through this seam.) The iterates are bitwise those of the unfused
/// sequence.
///
/// In exact arithmetic the error decreases in the `A`-norm by at least the
/// factor `2((√κ − 1)/(√κ + 1))^k` after `k` iterations (`κ` the condition
/// number of `M⁻¹A`), so for a finite-element Laplacian on a mesh of width
/// `h` the unpreconditioned iteration count grows like `1/h`; a Jacobi
/// preconditioner ([`crate::linalg::Jacobi`]) removes the effect of a badly scaled
/// diagonal.
///
/// # Errors
/// * [`Error::InvalidArgument`] naming
///   * `x` if its length differs from `b`'s, or it lives elsewhere (host
///     and device);
///   * `tol` if it is not positive and finite, below the machine epsilon
///     of the vectors' precision (the bound is in the message), or below
///     what CG attains for this operator (the true residual stagnates
///     above it; the attained value is in the message);
///   * `a` if `p·Ap ≤ 0` occurs (the operator is not positive definite:
///     indefinite, or singular on the Krylov space);
///   * `preconditioner` if `r·M⁻¹r ≤ 0` (it is not positive definite).
/// * [`Error::NonFinite`] if `b` or `x` holds NaN or ±∞, or the operator or
///   preconditioner returns a non-finite value (with its index).
/// * [`Error::NoConvergence`] after `max_iter` iterations without reaching
///   the tolerance, with the true relative residual (`x` then holds the last
///   iterate).
/// * Any error returned by `a` or the preconditioner.
pub fn cg<V: VectorOps>(
    a: &mut (impl LinearOperator<V> + ?Sized),
    preconditioner: Option<&mut dyn LinearOperator<V>>,
    b: &V,
    x: &mut V,
    tol: f64,
    max_iter: usize,
) -> Result<CgStats> {
    cg_system(&mut Separate { a, preconditioner }, b, x, tol, max_iter)
}

/// [`cg`] on a system whose operator and preconditioner are one object
/// (errors naming `a` are about its operator, `preconditioner` about its
/// preconditioner).
pub(crate) fn cg_system<V: VectorOps>(
    system: &mut (impl PreconditionedSystem<V> + ?Sized),
    b: &V,
    x: &mut V,
    tol: f64,
    max_iter: usize,
) -> Result<CgStats> {
    let tol_arg = Tol {
        value: tol,
        arg: "tol",
        label: "tol",
    };
    let Some(b_norm) = krylov_start(b, x, tol_arg)? else {
        return Ok(KrylovStats::solved_by_zero());
    };
    let target = tol * b_norm;
    let mut ap = b.zeros_like()?;
    let mut r = b.zeros_like()?;
    true_residual(system, b, x, &mut ap, &mut r)?;
    let mut z = match system.is_preconditioned() {
        true => Some(b.zeros_like()?),
        false => None,
    };
    let (mut rr, mut rz) = precondition(system, &r, &mut z)?;
    let start = checked_norm(rr, &ap)?;
    let mut p = b.zeros_like()?;
    p.copy_from(z.as_ref().unwrap_or(&r))?;
    let mut history = vec![start];
    let mut attainable = AttainableCheck::new("conjugate gradients", b_norm, tol_arg);
    let mut k = 0;
    loop {
        let claimed = rr.sqrt() <= target;
        if claimed || k == max_iter {
            // r is the true residual b − A x only before the first update
            let r_is_true = k == 0;
            if !r_is_true {
                true_residual(system, b, x, &mut ap, &mut r)?;
                rr = r.dot(&r)?;
                let norm = checked_norm(rr, &ap)?;
                if let Some(last) = history.last_mut() {
                    *last = norm;
                }
            }
            let norm = rr.sqrt();
            if norm <= target {
                return Ok(KrylovStats {
                    iterations: k,
                    residual_norm: norm,
                    relative_residual: norm / b_norm,
                    history,
                });
            }
            if k == max_iter {
                return Err(Error::NoConvergence {
                    solver: "conjugate gradients",
                    iterations: k,
                    residual: norm / b_norm,
                    tolerance: tol,
                });
            }
            if !r_is_true {
                // the recurrence claimed the tolerance, b − A x misses it:
                // restart from the true residual, unless it has stagnated
                attainable.restart(true, norm, k)?;
                rz = precondition(system, &r, &mut z)?.1;
                p.copy_from(z.as_ref().unwrap_or(&r))?;
            }
        }
        if rz <= 0.0 {
            return Err(Error::arg(
                "preconditioner",
                format!(
                    "the preconditioner is not positive definite: r·M⁻¹r = {rz:e} at iteration \
                     {k}{PRECONDITIONER_ADVICE}"
                ),
            ));
        }
        system.apply(&p, &mut ap)?;
        let pap = p.dot(&ap)?;
        if !pap.is_finite() {
            return Err(non_finite_output(
                "a",
                "A p (operator output)",
                &ap,
                "p·Ap",
                pap,
            ));
        }
        if pap <= 0.0 {
            return Err(Error::arg(
                "a",
                format!(
                    "the operator is not positive definite: p·Ap = {pap:e} at iteration \
                     {k}{OPERATOR_ADVICE}"
                ),
            ));
        }
        let alpha = rz / pap;
        let (rr_new, rz_new) = update(system, alpha, &p, &ap, x, &mut r, &mut z)?;
        if !rr_new.is_finite() {
            return Err(non_finite_output(
                "a",
                "r (the residual)",
                &r,
                "r·r",
                rr_new,
            ));
        }
        let beta = rz_new / rz;
        // p = z + β p
        p.axpby(1.0, z.as_ref().unwrap_or(&r), beta)?;
        rr = rr_new;
        rz = rz_new;
        k += 1;
        history.push(rr.sqrt());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Real;
    use crate::linalg::Jacobi;

    /// The 1D Dirichlet Laplacian `tridiag(−1, 2, −1)` in any precision.
    #[allow(clippy::ptr_arg)]
    fn laplace_1d_in<R: Real>(v: &Vec<R>, out: &mut Vec<R>) -> Result<()> {
        let n = v.len();
        for i in 0..n {
            let left = if i > 0 { v[i - 1] } else { R::ZERO };
            let right = if i + 1 < n { v[i + 1] } else { R::ZERO };
            out[i] = R::from_f64(2.0) * v[i] - left - right;
        }
        Ok(())
    }

    /// `(‖b − A x‖₂, ‖b‖₂ + ‖|A||x|‖₂)` in f64 for the 1D Laplacian: the
    /// exact residual of the iterate `x`, and the scale of its rounding.
    fn exact_residual<R: Real>(b: &[R], x: &[R]) -> (f64, f64) {
        let n = x.len();
        let at = |i: usize| x[i].to_f64();
        let (mut rr, mut bb, mut aa) = (0.0, 0.0, 0.0);
        for (i, bi) in b.iter().enumerate() {
            let bi = bi.to_f64();
            let left = if i > 0 { at(i - 1) } else { 0.0 };
            let right = if i + 1 < n { at(i + 1) } else { 0.0 };
            let r = bi - (2.0 * at(i) - left - right);
            let abs = 2.0 * at(i).abs() + left.abs() + right.abs();
            rr += r * r;
            bb += bi * bi;
            aa += abs * abs;
        }
        (rr.sqrt(), bb.sqrt() + aa.sqrt())
    }

    /// The residual CG reports is `‖b − A x‖` of the `x` it returns: bitwise
    /// the value computed in the vectors' precision, and within its rounding
    /// of the exact residual — in f32, where the recurrence's residual drifts
    /// below the true one, and in f64.
    #[test]
    fn the_reported_residual_is_b_minus_a_x() {
        fn check<R: Real>(n: usize, tol: f64) {
            let b = rhs::<R>(n);
            let mut x = vec![R::ZERO; n];
            let stats = cg(&mut laplace_1d_in::<R>, None, &b, &mut x, tol, 10 * n).unwrap();
            // b − A x as CG computes it, in the vectors' precision: the same
            // value to the bit (a recurrence's residual would differ)
            let mut r = vec![R::ZERO; n];
            laplace_1d_in(&x, &mut r).unwrap();
            r.axpby(1.0, &b, -1.0).unwrap();
            assert_eq!(stats.residual_norm, r.dot(&r).unwrap().sqrt());
            // and the exact residual of x within the rounding of A x
            let (exact, scale) = exact_residual(&b, &x);
            let eps = R::EPSILON.to_f64();
            assert!(
                (stats.residual_norm - exact).abs() <= 4.0 * eps * scale,
                "{}: reported {:e}, exact {exact:e} (rounding {:e})",
                R::PRECISION,
                stats.residual_norm,
                eps * scale
            );
            assert!(stats.relative_residual <= tol, "{stats:?}");
            assert_eq!(stats.history.last(), Some(&stats.residual_norm));
        }
        // f32 at 1e-4: the recurrence's first claim is false (the true
        // residual is above 1e-4 then), a restart from b − A x meets it
        check::<f32>(100, 1e-4);
        check::<f64>(100, 1e-12);
    }

    /// A right-hand side `b_i = 1 + sin(0.7 i)` (not one whose CG iterates
    /// are exact in binary arithmetic, as `b = 1` is for this operator).
    fn rhs<R: Real>(n: usize) -> Vec<R> {
        (0..n)
            .map(|i| R::from_f64(1.0 + (0.7 * i as f64).sin()))
            .collect()
    }

    /// Below what the precision attains for the operator (f32, 1D Laplacian
    /// of 100 unknowns: about 6·10⁻⁵ relative), CG's recurrence still claims
    /// convergence; now the claim is checked, CG restarts from the true
    /// residual, and when that stagnates it refuses the tolerance, stating
    /// the residual of the `x` it leaves.
    #[test]
    fn a_tolerance_out_of_reach_is_refused_with_the_attained_residual() {
        let n = 100;
        let b = rhs::<f32>(n);
        let mut x = vec![0f32; n];
        let e = cg(&mut laplace_1d_in::<f32>, None, &b, &mut x, 1e-5, 1000).unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::InvalidArgument { name: "tol", .. }),
            "{text}"
        );
        let attained: f64 = text
            .split("stays at ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no attained residual in: {text}"));
        // the stated residual is that of the x left, within its rounding
        let (exact, scale) = exact_residual(&b, &x);
        let b_norm = b.iter().map(|v| f64::from(*v).powi(2)).sum::<f64>().sqrt();
        let rounding = 4.0 * f64::from(f32::EPSILON) * scale / b_norm;
        assert!(
            attained > 1e-5 && (attained - exact / b_norm).abs() <= rounding,
            "stated {attained:e}, exact {:e} (rounding {rounding:e}): {text}",
            exact / b_norm
        );
        assert!(
            text.contains("tol = 1e-5 is below the accuracy conjugate gradients attains")
                && text.contains("Choose tol above"),
            "{text}"
        );
    }

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
