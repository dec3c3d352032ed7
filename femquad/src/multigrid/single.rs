//! The V-cycle in single precision inside a double-precision solve:
//! [`CyclePrecision`] and [`SingleLevels`] (the levels' operators in `f32`:
//! single-precision copies of their assembled matrices). The `f32`
//! multigrid a [`Multigrid<f64>`](super::Multigrid) then runs its cycles on
//! is part of it (`vcycle.rs`).

use super::operators::LevelOperators;
use crate::backend::{Matrix, Vector};
use crate::seam::FusedChebyshevStep;
use crate::sparse::CsrMatrix;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The precision of the multigrid V-cycle
/// ([`MultigridOptions::cycle_precision`](super::MultigridOptions::cycle_precision)).
///
/// The outer Krylov solve (its residual, its tolerance, its operator) stays
/// in the problem's precision either way; with [`CyclePrecision::Single`]
/// the preconditioner of an `f64` problem is
///
/// ```text
/// z = M⁻¹ r := P( M₃₂⁻¹ P⁻¹ r ),   P⁻¹: f64 → f32 rounded to nearest (ties to even),
///                                   P:   f32 → f64 exact,
/// ```
///
/// with `M₃₂⁻¹` the V-cycle computed in `f32`: `f32` vectors, and on every
/// smoothed level the level's assembled Jacobian with its values rounded to
/// `f32` (SpMV reading 8 bytes per stored entry instead of 12), the
/// point-block Jacobi inverse of that `f32` matrix, eigenvalue estimates
/// and Chebyshev smoothing on `f32` vectors (reductions accumulate in
/// `f64`), transfers in `f32` (their weights 1 and ½ are exact), and the
/// coarsest level's exact `f64` factorization applied to the `f32` vectors
/// (converted to `f64` on the host and back). `M₃₂⁻¹` is a preconditioner
/// as good as the `f64` cycle to `f32` rounding (about `6·10⁻⁸` relative):
/// CG's iteration counts stay within ±1, its solution is the same to the
/// solver's tolerance. `z` is not exactly symmetric in `r` at the level of
/// the `f32` rounding, which CG tolerates as it tolerates the variable
/// rounding of any preconditioner. (Values of `r` beyond `f32::MAX`
/// would become ±∞ — a residual of 10³⁸ is not a solve's.)
///
/// The point-block Jacobi inverse comes from the `f32` matrix (its
/// point-block diagonal, inverted in `f32`), not converted from the `f64`
/// one: it is then the inverse of the diagonal of the operator the `f32`
/// smoother applies, and no further conversion is needed. With one level
/// (the direct solve alone) the cycle is the `f64` factorization applied
/// to the `f32`-rounded residual, no longer an exact solve: CG needs an
/// iteration or two more than its one; Working suits that case.
///
/// Single needs every smoothed level assembled
/// ([`MultigridOptions::assembled_max_dofs`](super::MultigridOptions::assembled_max_dofs) at least the finest level's
/// dofs): the `f32` copies are of assembled matrices; a matrix-free
/// smoothed level is refused ([`Error::InvalidArgument`] naming
/// `cycle_precision`). On an `f32` problem the cycle is in `f32` already:
/// Single is Working there.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CyclePrecision {
    /// The cycle in the problem's precision `R` (the default).
    #[default]
    Working,
    /// The cycle in `f32` (see the type's documentation).
    Single,
}

/// The error for a matrix-free smoothed `level` (of `dofs` dofs, if known)
/// in a cycle in single precision.
pub(crate) fn matrix_free_level_error(level: usize, dofs: Option<usize>) -> Error {
    let dofs = dofs.map_or(String::new(), |d| format!(" ({d} dofs)"));
    Error::arg(
        "cycle_precision",
        format!(
            "CyclePrecision::Single runs the V-cycle on single-precision copies of the \
             assembled level matrices, but smoothed multigrid level {level}{dofs} is \
             matrix-free: raise `assembled_max_dofs` to at least the finest level's dofs (with \
             SmallLevels::Assembled) so that every level above the coarsest is assembled, or \
             use CyclePrecision::Working"
        ),
    )
}

/// The operators of the levels in `f32` for a cycle in single precision:
/// every smoothed level applies (and takes its point-block diagonal from)
/// its assembled matrix rounded to `f32` ([`Matrix::converted`]); the
/// coarsest level's operator is assembled by the working-precision
/// operators `working` (in `f64`, for the exact coarse factorization).
pub struct SingleLevels<'a, R: Real> {
    /// Per level, coarsest first: the `f32` copy of the level's assembled
    /// operator (every level above the coarsest).
    pub matrices: &'a [Option<Matrix<f32>>],
    /// The operators in the working precision (the coarsest level's
    /// assembly).
    pub working: &'a mut dyn LevelOperators<R>,
}

impl<R: Real> SingleLevels<'_, R> {
    fn matrix(&self, level: usize, dofs: Option<usize>) -> Result<&Matrix<f32>> {
        match self.matrices.get(level) {
            Some(Some(m)) => Ok(m),
            _ => Err(matrix_free_level_error(level, dofs)),
        }
    }
}

impl<R: Real> LevelOperators<f32> for SingleLevels<'_, R> {
    fn apply(&mut self, level: usize, x: &Vector<f32>, y: &mut Vector<f32>) -> Result<()> {
        self.matrix(level, Some(x.len()))?.apply(x, y)
    }

    fn block_diagonal(&mut self, level: usize, out: &mut Vector<f32>) -> Result<()> {
        self.matrix(level, None)?.point_block_diagonal(out)
    }

    /// Every smoothed level is assembled: its Chebyshev steps are fused
    /// with their SpMV ([`Matrix::chebyshev_step`]).
    fn fused_chebyshev_step(
        &mut self,
        level: usize,
        step: FusedChebyshevStep<'_, Vector<f32>>,
    ) -> Result<bool> {
        let dofs = step.x.len();
        self.matrix(level, Some(dofs))?
            .chebyshev_step(step)
            .map(|()| true)
    }

    fn assemble(&mut self, level: usize) -> Result<CsrMatrix> {
        self.working.assemble(level)
    }
}
