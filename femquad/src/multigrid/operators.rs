//! [`LevelOperators`]: what multigrid needs of the operator on each level.

use crate::Real;
use crate::Result;
use crate::backend::Vector;
use crate::seam::FusedChebyshevStep;
use crate::sparse::CsrMatrix;

/// An operator given by its action, `a(x, y)` setting `y = A x` (a level's
/// constrained operator inside the smoother and the eigenvalue estimate).
pub type Action<'a, R> = dyn FnMut(&Vector<R>, &mut Vector<R>) -> Result<()> + 'a;

/// A level's operator as the smoother uses it ([`super::Chebyshev::smooth`]):
/// its action `y = A x` and, where the level offers one, a Chebyshev step
/// with the product `A d` fused in ([`FusedChebyshevStep`]). Every closure
/// `FnMut(&Vector, &mut Vector) -> Result<()>` is one without the fused
/// step; [`LevelAction`] is level `l` of a [`LevelOperators`].
pub trait SmoothedOperator<R: Real> {
    /// `y = A x`.
    ///
    /// # Errors
    /// Whatever evaluating the operator reports.
    fn apply(&mut self, x: &Vector<R>, y: &mut Vector<R>) -> Result<()>;

    /// The step `w = A d`, `r ← r − w`, `d_next ← a·d + c·D⁻¹r`,
    /// `x ← x + d_next` in one pass, bitwise [`SmoothedOperator::apply`]
    /// followed by the unfused step, if the operator offers it: `Ok(true)`
    /// once done, `Ok(false)` (nothing done) if it does not — the default.
    ///
    /// # Errors
    /// Whatever the fused step reports.
    fn fused_chebyshev_step(&mut self, step: FusedChebyshevStep<'_, Vector<R>>) -> Result<bool> {
        let _ = step;
        Ok(false)
    }
}

impl<R: Real, F: FnMut(&Vector<R>, &mut Vector<R>) -> Result<()>> SmoothedOperator<R> for F {
    fn apply(&mut self, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        self(x, y)
    }
}

/// Level `level` of the [`LevelOperators`] `ops` as a
/// [`SmoothedOperator`]: its action, and, if `fuse`, its fused Chebyshev
/// step where the level offers one ([`LevelOperators::fused_chebyshev_step`]).
pub struct LevelAction<'o, O: ?Sized> {
    /// The levels' operators.
    pub ops: &'o mut O,
    /// The level.
    pub level: usize,
    /// Whether to take the level's fused step
    /// ([`MultigridOptions::fused_step_max_dofs`](super::MultigridOptions::fused_step_max_dofs)).
    pub fuse: bool,
}

impl<R: Real, O: LevelOperators<R> + ?Sized> SmoothedOperator<R> for LevelAction<'_, O> {
    fn apply(&mut self, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        self.ops.apply(self.level, x, y)
    }

    fn fused_chebyshev_step(&mut self, step: FusedChebyshevStep<'_, Vector<R>>) -> Result<bool> {
        match self.fuse {
            true => self.ops.fused_chebyshev_step(self.level, step),
            false => Ok(false),
        }
    }
}

/// The operators `A_l` of the multigrid levels `l = 0` (coarsest) …
/// `L` (finest), as [`super::Multigrid`] uses them: their action (every
/// level), their point-block diagonal (every level but the coarsest, for
/// the smoother) and the assembled matrix (the coarsest level, for the
/// direct solve). For a residual `F` linearized at a state `u` these are the
/// Jacobian `J_l(u_l)` of the residual on level `l`'s space, at the state
/// injected into that level ([`super::Multigrid::inject`]):
/// [`Operator::jacobian_action`](crate::operator::Operator::jacobian_action), its
/// point-block diagonal and its assembly — rediscretization, not a Galerkin
/// product, so every level stays matrix-free but the coarsest.
///
/// The operators are **unconstrained**: the multigrid imposes the Dirichlet
/// rows itself (fixed rows and columns the identity's, from the fixed dofs
/// it was given). Vectors are the level's `n_dofs` dofs (interleaved
/// node-major) and live where the multigrid's vectors live.
pub trait LevelOperators<R: Real> {
    /// `y = A_l x`.
    ///
    /// # Errors
    /// Whatever evaluating the operator reports.
    fn apply(&mut self, level: usize, x: &Vector<R>, y: &mut Vector<R>) -> Result<()>;

    /// The point-block diagonal of `A_l` into `out`: `n_nodes·N_comp²`
    /// entries, `out[(n·N_comp + fc)·N_comp + gc] = A_l[n·N_comp + fc][n·N_comp + gc]`
    /// (for a scalar field, the diagonal).
    ///
    /// # Errors
    /// Whatever computing it reports.
    fn block_diagonal(&mut self, level: usize, out: &mut Vector<R>) -> Result<()>;

    /// A Chebyshev step of level `l`'s smoother with the product `A_l d`
    /// fused in ([`FusedChebyshevStep`]), if the level offers it
    /// (an assembled level: one pass over its matrix's rows): `Ok(true)`
    /// once done, `Ok(false)` (nothing done) otherwise — the default; the
    /// smoother then applies [`LevelOperators::apply`] and steps apart.
    ///
    /// # Errors
    /// Whatever the fused step reports.
    fn fused_chebyshev_step(
        &mut self,
        level: usize,
        step: FusedChebyshevStep<'_, Vector<R>>,
    ) -> Result<bool> {
        let _ = (level, step);
        Ok(false)
    }

    /// `A_l` assembled (asked for the coarsest level only), `f64`, on the host.
    ///
    /// # Errors
    /// Whatever assembling it reports.
    fn assemble(&mut self, level: usize) -> Result<CsrMatrix>;
}
