//! The contracts between the algorithms and the backends: traits that the
//! algorithms (`operator/`, `multigrid/`, `solve/`) reach through
//! `backend/`'s dispatching types, and that `native/` and `opencl/`
//! implement for their vectors: [`Integrate`] (an operator's integrator),
//! [`AssembledMatrix`] (an operator assembled into a sparse matrix) and
//! [`MultigridOps`] (the kernels of the multigrid algorithms). This module
//! names neither backend.

mod matrix;
mod multigrid;

pub use matrix::AssembledMatrix;
pub use multigrid::{
    ChebyshevCoefficients, ChebyshevOperands, DENSE_LANES, FusedChebyshevStep, MultigridOps,
    ResidualUpdate, TransferGraph, block_tolerance,
};

use std::borrow::Cow;

use crate::{Real, Result};

/// The backend side of an operator: a form's physics, discretization,
/// constants and auxiliary field bound on one backend, evaluating
///
/// ```text
/// F(u)_i = Σ_cells ∫ φ_i · f0(u, ∇u, a, ∇a, x; c) + ∇φ_i : f1(u, ∇u, a, ∇a, x; c) dx,
/// J(u)·v = ∂F/∂u (u) · v,
/// (with a time state t, u_t = σ·u + b bound (`Integrate::set_time`): f0, f1 also of t
///  and u_t, and J = σ·∂F/∂u_t + ∂F/∂u)
/// D(u)[n][fc][gc] = J(u)[n·N_comp + fc][n·N_comp + gc]   (the point-block diagonal),
/// ```
///
/// on vectors of its own kind. The caller (`Operator`) has checked the
/// lengths, where the vectors live and that the constants are finite; an
/// implementation checks nothing per call that it could check when bound.
///
/// It owns the auxiliary field: its values ([`Integrate::set_aux`] checks
/// them) and whether they were set. Every evaluation, and
/// [`Integrate::cell_aux`], refuses a physics that reads a field which was
/// never set.
pub trait Integrate<R: Real> {
    /// The vectors it reads and writes (global, `n_dofs` entries, or
    /// `n_nodes·N_comp²` for the diagonal).
    type Vector;

    /// `r = F(u)`.
    ///
    /// # Errors
    /// `aux` if the physics reads an auxiliary field that was never set;
    /// backend failures (a launch, device memory); a physics' evaluation
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

    /// Binds the time state of a transient evaluation: the time `t` and
    /// `u_t = σ·u + b` (`b` global, checked by the caller: its length,
    /// location and finiteness); the next evaluations compute
    /// `F(t, u, σ·u + b)`, its Jacobian `σ·∂F/∂u_t + ∂F/∂u` and that
    /// Jacobian's diagonal. `None` unbinds it (stationary: `t` = 0, no
    /// `u_t`).
    ///
    /// # Errors
    /// A backend that cannot evaluate transient physics; backend failures
    /// (a gather, an upload).
    fn set_time(&mut self, time: Option<(R, R, &Self::Vector)>) -> Result<()>;

    /// Replaces the physics' constants (already checked: their number and
    /// finiteness); the next evaluations use them. The bound form owns
    /// the constants: this is called only by `Operator::set_constants`,
    /// after the form, and the backend's copy (a device buffer, the native
    /// integrator's values) is what it evaluates with.
    ///
    /// # Errors
    /// Backend failures (an upload).
    fn set_constants(&mut self, constants: &[R]) -> Result<()>;

    /// Replaces the auxiliary field: global values, `[node][k]` for a field,
    /// `[cell][k]` for P0; the next evaluations read them. A rejected call
    /// leaves the field as it was.
    ///
    /// # Errors
    /// Those of the values' check (`crate::aux_space::check_values`:
    /// `aux` of a wrong length, a form without auxiliary field, a NaN or
    /// ±∞ with its index); backend failures (an upload).
    fn set_aux(&mut self, aux: &[R]) -> Result<()>;

    /// The auxiliary field cell-local on the host (`[cell][b][k]` for a
    /// field, `[cell][k]` for P0, `n_cells · aux_per_cell` values; zeros
    /// if it was never set and the physics does not read it), for host
    /// computations of the bound form (the assembled Jacobian).
    ///
    /// # Errors
    /// `aux` if the physics reads a field that was never set; backend
    /// failures (a download).
    fn cell_aux(&self) -> Result<Cow<'_, [R]>>;
}
