//! Eigenvalue estimates of `D⁻¹A` by a few steps of preconditioned
//! conjugate gradients (Lanczos), for the Chebyshev smoother's interval.

use super::block_jacobi::PointBlockJacobi;
use super::operators::Action;
use crate::backend::Vector;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The extreme Ritz values of `D⁻¹A` after some Lanczos steps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EigenEstimate {
    /// Largest Ritz value: a lower bound of `λ_max(D⁻¹A)`, close to it
    /// after a few steps (the extreme eigenvalues converge first).
    pub max: f64,
    /// Smallest Ritz value: an upper bound of `λ_min(D⁻¹A)` (poor after few
    /// steps; reported, not used by the smoother).
    pub min: f64,
    /// Steps taken (fewer than asked if the Krylov space was exhausted).
    pub steps: usize,
}

/// Estimates the extreme eigenvalues of `D⁻¹A` (`A` symmetric positive
/// definite given by `a(v, out)`, `D` by `jacobi`) from `steps` steps of
/// preconditioned conjugate gradients on `A x = b` from `x = 0`: with CG's
/// coefficients `α_j`, `β_j`, the Lanczos matrix of `D⁻¹A` in the
/// `D`-inner product is the symmetric tridiagonal
///
/// ```text
/// T_00 = 1/α_0,   T_jj = 1/α_j + β_{j−1}/α_{j−1},   T_{j,j−1} = √β_{j−1} / α_{j−1},
/// ```
///
/// whose eigenvalues (the Ritz values, found here by Sturm bisection) lie
/// in the spectrum's hull and approach its ends first. `b` should be rich
/// in every eigenvector (a random vector, [`super::fill_random`]) and zero
/// on fixed dofs. Each step costs one application of `A` and of `D⁻¹` and
/// two reductions (a scalar read each on a device); the iterate itself is
/// not formed.
///
/// # Errors
/// * [`Error::InvalidArgument`] naming `steps` if 0, `b` if it is zero,
///   `a` if `p·Ap ≤ 0` occurs (the operator is not positive definite) or
///   is not finite, `jacobi` if `r·D⁻¹r ≤ 0` or is not finite.
/// * Those of `a` and of the vector operations.
pub fn estimate_eigenvalues<R: Real>(
    a: &mut Action<'_, R>,
    jacobi: &PointBlockJacobi<R>,
    b: &Vector<R>,
    steps: usize,
) -> Result<EigenEstimate> {
    estimate_eigenvalues_of(a, &mut |r, z| jacobi.apply(r, z), b, steps)
}

/// [`estimate_eigenvalues`] for any vector type: `a(v, out)` sets
/// `out = A v`, `precondition(r, z)` sets `z = D⁻¹ r`, and every inner
/// product is the vectors' own [`VectorOps::dot`] — for distributed vectors
/// a global sum over all ranks, so every rank gets the same estimate.
/// The same steps, coefficients and errors as [`estimate_eigenvalues`]
/// (which is this with [`PointBlockJacobi::apply`] on femquad's vectors).
///
/// # Errors
/// As [`estimate_eigenvalues`] (naming `jacobi` for `r·D⁻¹r ≤ 0`); those
/// of `precondition`.
pub fn estimate_eigenvalues_of<V: VectorOps>(
    a: &mut dyn FnMut(&V, &mut V) -> Result<()>,
    precondition: &mut dyn FnMut(&V, &mut V) -> Result<()>,
    b: &V,
    steps: usize,
) -> Result<EigenEstimate> {
    if steps == 0 {
        return Err(Error::arg("steps", "an estimate needs at least one step"));
    }
    let mut r = b.zeros_like()?;
    r.copy_from(b)?;
    let mut z = b.zeros_like()?;
    precondition(&r, &mut z)?;
    let mut p = b.zeros_like()?;
    p.copy_from(&z)?;
    let mut w = b.zeros_like()?;
    let mut rz = r.dot(&z)?;
    if rz == 0.0 {
        return Err(Error::arg(
            "b",
            "the start vector of the eigenvalue estimate is zero (on the free dofs)",
        ));
    }
    let rz0 = rz;
    let (mut alphas, mut betas) = (Vec::new(), Vec::new());
    for k in 0..steps {
        if !(rz > 0.0 && rz.is_finite()) {
            return Err(Error::arg(
                "jacobi",
                format!(
                    "r·D⁻¹r = {rz:e} at Lanczos step {k}: the point-block diagonal is not \
                     positive definite"
                ),
            ));
        }
        a(&p, &mut w)?;
        let pap = p.dot(&w)?;
        if !(pap > 0.0 && pap.is_finite()) {
            return Err(Error::arg(
                "a",
                format!(
                    "not positive definite on the free dofs (indefinite, or singular): \
                     p·Ap = {pap:e} at Lanczos step {k} of the eigenvalue estimate"
                ),
            ));
        }
        let alpha = rz / pap;
        alphas.push(alpha);
        r.axpy(-alpha, &w)?;
        precondition(&r, &mut z)?;
        let rz_next = r.dot(&z)?;
        // exhausted (b lies in an invariant subspace): T is exact there
        if rz_next.abs() <= 1e-28 * rz0 {
            break;
        }
        let beta = rz_next / rz;
        betas.push(beta);
        p.axpby(1.0, &z, beta)?;
        rz = rz_next;
    }
    let m = alphas.len();
    let mut diag = vec![0.0; m];
    let mut off = vec![0.0; m.saturating_sub(1)];
    diag[0] = 1.0 / alphas[0];
    for j in 1..m {
        diag[j] = 1.0 / alphas[j] + betas[j - 1] / alphas[j - 1];
        off[j - 1] = betas[j - 1].sqrt() / alphas[j - 1];
    }
    let (min, max) = tridiagonal_extremes(&diag, &off);
    Ok(EigenEstimate { max, min, steps: m })
}

/// Number of eigenvalues below `x` of the symmetric tridiagonal matrix
/// (Sturm sequence of the `LDLᵀ` pivots).
fn count_below(diag: &[f64], off: &[f64], x: f64) -> usize {
    let mut count = 0;
    let mut q = 1.0;
    for j in 0..diag.len() {
        let o2 = if j == 0 { 0.0 } else { off[j - 1] * off[j - 1] };
        q = diag[j] - x - if j == 0 { 0.0 } else { o2 / q };
        if q == 0.0 {
            q = -f64::EPSILON * (diag[j].abs() + x.abs()).max(f64::MIN_POSITIVE);
        }
        if q < 0.0 {
            count += 1;
        }
    }
    count
}

/// The smallest and largest eigenvalues of the symmetric tridiagonal matrix
/// with diagonal `diag` and off-diagonal `off`, by bisection inside the
/// Gershgorin interval to relative accuracy `1e-13`.
pub(crate) fn tridiagonal_extremes(diag: &[f64], off: &[f64]) -> (f64, f64) {
    let n = diag.len();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for j in 0..n {
        let radius =
            if j > 0 { off[j - 1].abs() } else { 0.0 } + if j + 1 < n { off[j].abs() } else { 0.0 };
        lo = lo.min(diag[j] - radius);
        hi = hi.max(diag[j] + radius);
    }
    let bisect = |k: usize| {
        // the k-th smallest eigenvalue: count_below(x) ≤ k < count_below(y)
        let (mut a, mut b) = (lo, hi);
        let scale = lo.abs().max(hi.abs()).max(f64::MIN_POSITIVE);
        for _ in 0..200 {
            if b - a <= 1e-13 * scale {
                break;
            }
            let m = 0.5 * (a + b);
            if count_below(diag, off, m) > k {
                b = m;
            } else {
                a = m;
            }
        }
        0.5 * (a + b)
    };
    (bisect(0), bisect(n - 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tridiagonal_extremes_of_the_1d_laplacian() {
        // tridiag(−1, 2, −1) of size n: λ_k = 2 − 2 cos(kπ/(n+1))
        let n = 20;
        let (lo, hi) = tridiagonal_extremes(&vec![2.0; n], &vec![-1.0; n - 1]);
        let pi = std::f64::consts::PI;
        let want = |k: f64| 2.0 - 2.0 * (k * pi / (n as f64 + 1.0)).cos();
        assert!((lo - want(1.0)).abs() < 1e-12, "{lo}");
        assert!((hi - want(n as f64)).abs() < 1e-12, "{hi}");
        let (lo, hi) = tridiagonal_extremes(&[3.0], &[]);
        assert!((lo - 3.0).abs() < 1e-12 && (hi - 3.0).abs() < 1e-12);
    }
}
