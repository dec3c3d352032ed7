//! [`Chebyshev`]: the polynomial smoother of the multigrid levels.

use super::block_jacobi::PointBlockJacobi;
use super::operators::SmoothedOperator;
use crate::backend::Vector;
use crate::seam::{ChebyshevCoefficients, FusedChebyshevStep, ResidualUpdate};
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// Chebyshev iteration on the point-block-Jacobi-preconditioned operator
/// `D⁻¹A` ([`PointBlockJacobi`]) for eigenvalues in `[λ_lo, λ_hi]`: `m`
/// steps of the three-term recurrence (Saad, *Iterative Methods for Sparse
/// Linear Systems*, Alg. 12.1, preconditioned)
///
/// ```text
/// θ = (λ_hi + λ_lo)/2,  δ = (λ_hi − λ_lo)/2,  σ = θ/δ,  ρ_0 = 1/σ
/// r_0 = b − A x_0,  d_0 = D⁻¹ r_0 / θ
/// x_{k+1} = x_k + d_k,  r_{k+1} = r_k − A d_k,
/// ρ_{k+1} = 1/(2σ − ρ_k),  d_{k+1} = ρ_{k+1} ρ_k d_k + (2ρ_{k+1}/δ) D⁻¹ r_{k+1}.
/// ```
///
/// After `m` steps the error is `e_m = p_m(D⁻¹A) e_0` with `p_m` the
/// Chebyshev polynomial of degree `m` scaled to `p_m(0) = 1` and minimal
/// on `[λ_lo, λ_hi]`: the components of the error with eigenvalues in the
/// interval (the high frequencies, when `λ_hi` bounds the spectrum and `λ_lo`
/// is a fraction of it) are damped by at least `1/T_m(σ)`, the others are
/// left to the coarse levels. `p_m` is a fixed polynomial of `D⁻¹A`, so
/// the smoother is a linear operator, self-adjoint in the `A` inner product
/// when `A` and `D` are symmetric — a V-cycle with the same smoother before
/// and after the coarse correction is a symmetric preconditioner for CG.
///
/// Cost: `m − 1` operator applications from `x_0 = 0`, `m` otherwise; one
/// blockwise `D⁻¹` pass per step (fused with the update of `d`), no inner
/// products — nothing read back from a device. Where the operator offers
/// it ([`SmoothedOperator::fused_chebyshev_step`]: an assembled level),
/// each step `k ≥ 2` is one pass with its product `A d_k` fused in (the
/// same values, bitwise; the new `d` written to the work vector `w`, which
/// then swaps with `d`).
///
/// Fixed (Dirichlet) dofs `D`: with `D⁻¹` zero on their rows and columns
/// ([`super::OnFixed::Zero`]) and `x` zero on them, the steps keep `d` and
/// `x` zero on `D` (`d_D ← a·d_D + c·0`) whatever `b_D`, `(A v)_D` and so
/// `r_D` hold, and no free entry reads `r_D`; as `v_D = 0` for every `v`
/// the operator is applied to, `(A v)_F` is the constrained operator's. The
/// smoothing of the free dofs, with the operator given unconstrained.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Chebyshev {
    lower: f64,
    upper: f64,
    degree: usize,
}

/// The work vectors of [`Chebyshev::smooth`]: the residual `r`, the update
/// `d` and `w = A d` (or, in a fused step, the next `d`), all of one
/// level's length and place.
#[derive(Debug)]
pub struct ChebyshevWork<R: Real> {
    r: Vector<R>,
    d: Vector<R>,
    w: Vector<R>,
}

impl<R: Real> ChebyshevWork<R> {
    /// Three vectors like `like` (same length and place).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn like(like: &Vector<R>) -> Result<Self> {
        Ok(ChebyshevWork {
            r: like.zeros_like()?,
            d: like.zeros_like()?,
            w: like.zeros_like()?,
        })
    }

    /// The residual `b − A x` before the last step (for diagnostics; with
    /// `D⁻¹` zero on fixed dofs, meaningful on the free dofs only).
    pub fn residual(&self) -> &Vector<R> {
        &self.r
    }
}

impl Chebyshev {
    /// The smoother of degree `degree` (steps) for the interval `[lower, upper]`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `degree` if 0, or `lower`/`upper`
    /// unless `0 < lower < upper < ∞`.
    pub fn new(lower: f64, upper: f64, degree: usize) -> Result<Self> {
        if degree == 0 {
            return Err(Error::arg(
                "degree",
                "Chebyshev smoothing needs at least one step",
            ));
        }
        if !(lower > 0.0 && lower.is_finite()) {
            return Err(Error::arg(
                "lower",
                format!("must be positive and finite, got {lower}"),
            ));
        }
        if !(upper > lower && upper.is_finite()) {
            return Err(Error::arg(
                "upper",
                format!("must be finite and above lower = {lower}, got {upper}"),
            ));
        }
        Ok(Chebyshev {
            lower,
            upper,
            degree,
        })
    }

    /// The interval `[λ_lo, λ_hi]`.
    pub fn interval(&self) -> (f64, f64) {
        (self.lower, self.upper)
    }

    /// The number of steps `m`.
    pub fn degree(&self) -> usize {
        self.degree
    }

    /// The damping factor `1/T_m(σ)` guaranteed on `[λ_lo, λ_hi]`.
    pub fn damping(&self) -> f64 {
        let sigma = (self.upper + self.lower) / (self.upper - self.lower);
        // T_m(σ) = cosh(m·acosh σ), σ > 1
        1.0 / (self.degree as f64 * sigma.acosh()).cosh()
    }

    /// `m` Chebyshev steps on `A x = b` from `x` (or from `x = 0` if
    /// `zero_initial`, whatever `x` holds), with `a` the operator (a
    /// closure `a(v, out)` setting `out = A v`, or a level's
    /// [`super::LevelAction`], which may fuse the steps with their
    /// products) and `jacobi` the blocks of `D`. All vectors live in one
    /// place and have one length. (Fixed dofs: see the [type
    /// documentation](Self).)
    ///
    /// # Errors
    /// Those of `a` and of the vector operations (lengths, places).
    pub fn smooth<R: Real>(
        &self,
        a: &mut dyn SmoothedOperator<R>,
        jacobi: &PointBlockJacobi<R>,
        b: &Vector<R>,
        x: &mut Vector<R>,
        zero_initial: bool,
        work: &mut ChebyshevWork<R>,
    ) -> Result<()> {
        let ChebyshevWork { r, d, w } = work;
        let theta = 0.5 * (self.upper + self.lower);
        let delta = 0.5 * (self.upper - self.lower);
        let sigma = theta / delta;
        // step 1: r = b − A x (r = b from x = 0), d = D⁻¹r/θ, x += d
        let residual = if zero_initial {
            ResidualUpdate::FromRhs
        } else {
            a.apply(x, w)?;
            ResidualUpdate::RhsMinusW
        };
        let first = ChebyshevCoefficients {
            residual,
            a: 0.0,
            c: 1.0 / theta,
            x_from_zero: zero_initial,
        };
        jacobi.chebyshev_step(x, d, r, (b, w), first)?;
        // steps k = 2..m: r −= A d, d = ρ_k ρ_{k−1} d + (2ρ_k/δ) D⁻¹r, x += d
        let mut rho = 1.0 / sigma;
        for _ in 2..=self.degree {
            let rho_next = 1.0 / (2.0 * sigma - rho);
            let (step_a, step_c) = (rho_next * rho, 2.0 * rho_next / delta);
            let fused = FusedChebyshevStep {
                x: &mut *x,
                d: &*d,
                d_next: &mut *w,
                r: &mut *r,
                inv: jacobi.inverse(),
                a: step_a,
                c: step_c,
            };
            if a.fused_chebyshev_step(fused)? {
                // the new d is in w
                std::mem::swap(d, w);
            } else {
                a.apply(d, w)?;
                let step = ChebyshevCoefficients {
                    residual: ResidualUpdate::MinusW,
                    a: step_a,
                    c: step_c,
                    x_from_zero: false,
                };
                jacobi.chebyshev_step(x, d, r, (b, w), step)?;
            }
            rho = rho_next;
        }
        Ok(())
    }
}
