//! The contracts between the algorithms and the backends: traits that the
//! algorithms (`operator/`, `multigrid/`, `solve/`) reach through
//! `backend/`'s dispatching types, and that `native/` and `opencl/`
//! implement for their vectors: [`Integrate`] (an operator's integrator) and
//! [`MultigridOps`] (the kernels of the multigrid algorithms). This module
//! names neither backend.

mod multigrid;

pub use multigrid::{MultigridOps, TransferGraph, block_tolerance};

use crate::{Real, Result};

/// The backend side of an operator: a form's physics, discretization,
/// constants and auxiliary field bound on one backend, evaluating
///
/// ```text
/// F(u)_i = Σ_cells ∫ φ_i · f0(u, ∇u, a, ∇a, x; c) + ∇φ_i : f1(u, ∇u, a, ∇a, x; c) dx,
/// J(u)·v = ∂F/∂u (u) · v,
/// D(u)[n][fc][gc] = J(u)[n·N_comp + fc][n·N_comp + gc]   (the point-block diagonal),
/// ```
///
/// on vectors of its own kind. The caller (`Operator`) has checked the
/// lengths, where the vectors live, that an auxiliary field the physics
/// reads was set and that the constants are finite; an implementation
/// checks nothing per call that it could check when bound.
pub trait Integrate<R: Real> {
    /// The vectors it reads and writes (global, `n_dofs` entries, or
    /// `n_nodes·N_comp²` for the diagonal).
    type Vector;

    /// `r = F(u)`.
    ///
    /// # Errors
    /// Backend failures (a launch, device memory); a physics' evaluation
    /// error.
    fn residual(&mut self, u: &Self::Vector, r: &mut Self::Vector) -> Result<()>;

    /// `out = J(u)·v`, from the physics' tangent.
    ///
    /// # Errors
    /// As [`Integrate::residual`]; a physics without derivatives.
    fn jacobian_action(
        &mut self,
        u: &Self::Vector,
        v: &Self::Vector,
        out: &mut Self::Vector,
    ) -> Result<()>;

    /// `out` = the point-block diagonal of `J(u)`, `[node][fc][gc]`; NaN
    /// and ±∞ that the physics produces are kept for the caller to report.
    ///
    /// # Errors
    /// As [`Integrate::jacobian_action`].
    fn jacobian_diagonal(&mut self, u: &Self::Vector, out: &mut Self::Vector) -> Result<()>;

    /// Replaces the physics' constants (already checked: their number and
    /// finiteness); the next evaluations use them.
    ///
    /// # Errors
    /// Backend failures (an upload).
    fn set_constants(&mut self, constants: &[R]) -> Result<()>;

    /// Replaces the auxiliary field: global values, `[node][k]` for a field,
    /// `[cell][k]` for P0 (already checked: length and finiteness).
    ///
    /// # Errors
    /// Backend failures (an upload).
    fn set_aux(&mut self, aux: &[R]) -> Result<()>;
}
