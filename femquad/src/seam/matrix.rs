//! [`AssembledMatrix`]: an operator assembled into a sparse matrix on a
//! backend.

use std::borrow::Cow;

use super::multigrid::FusedChebyshevStep;
use crate::{Real, Result};

/// A square sparse matrix (compressed sparse rows on a pattern of a
/// space's dofs, values in `R`) living where a backend's vectors live: the
/// assembled representation of an operator (its Jacobian at a state),
/// applied instead of the matrix-free action.
///
/// ```text
/// apply:                 y_i = Σ_k values[k] · x[col_idx[k]],  k in row i (increasing columns)
/// point_block_diagonal:  out[(n·N_comp + fc)·N_comp + gc] = A[n·N_comp + fc][n·N_comp + gc]
/// ```
pub trait AssembledMatrix<R: Real> {
    /// The vectors it reads and writes.
    type Vector;

    /// `y = A x`.
    ///
    /// # Errors
    /// `x` or `y` of a wrong length (or on another device); backend
    /// failures.
    fn apply(&self, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;

    /// The point-block diagonal into `out` (`n_rows·N_comp` entries, 0
    /// where not stored).
    ///
    /// # Errors
    /// `out` of a wrong length (or on another device); backend failures.
    fn point_block_diagonal(&self, out: &mut Self::Vector) -> Result<()>;

    /// One Chebyshev step with this matrix's product fused in
    /// ([`FusedChebyshevStep`]): per node `n` of `N_comp` rows
    /// `i = n·N_comp + fc`, `w_i` as [`AssembledMatrix::apply`] sums it,
    /// then the node's updates as the unfused step makes them — bitwise
    /// `apply` followed by the backend's Chebyshev step.
    ///
    /// # Errors
    /// An operand of a wrong length (or on another device), `inv` not
    /// `n_rows·N_comp`; backend failures.
    fn chebyshev_step(&self, step: FusedChebyshevStep<'_, Self::Vector>) -> Result<()>;

    /// The stored values on the host, in the pattern's order (a download
    /// on a device).
    ///
    /// # Errors
    /// Backend failures.
    fn values_to_host(&self) -> Result<Cow<'_, [R]>>;
}
