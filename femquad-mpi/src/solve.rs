//! A linear problem with Dirichlet conditions solved over all ranks by
//! femquad's own Krylov solvers ([`femquad::solve::cg`],
//! [`femquad::solve::gmres`]) on [`DistVector`]s, Jacobi-preconditioned.

use mpi::datatype::Equivalence;

use femquad::backend::IndexSet;
use femquad::linalg::{Jacobi, LinearOperator};
use femquad::solve::{GmresOptions, KrylovStats, cg, gmres};
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

use crate::operator::DistOperator;
use crate::vector::DistVector;

/// The Krylov solver of [`solve_linear`], with its tolerance (relative to
/// `‖b‖₂`, on the true residual) and iteration limit.
#[derive(Clone, Debug)]
pub enum Krylov {
    /// Conjugate gradients (the constrained Jacobian must be symmetric
    /// positive definite).
    Cg {
        /// Relative tolerance.
        tol: f64,
        /// Iteration limit.
        max_iter: usize,
    },
    /// Restarted GMRES.
    Gmres(GmresOptions),
}

/// Solves `F(u) = 0` at the free dofs of a form whose residual is affine in
/// `u` (e.g. Poisson's), with `u` fixed at the dofs `fixed` marks (a mask
/// of this rank's local dofs, [`DistMesh::local_mask`](crate::DistMesh::local_mask)),
/// by `solver` to its tolerance: one Newton step from `u`, whose
/// fixed entries hold the Dirichlet values on entry.
///
/// With `D` the fixed dofs, the step `δ` solves the symmetrically
/// constrained system
///
/// ```text
/// A δ = b,   A = [ I 0 ; 0 J_FF ],   b_F = −F(u)_F,  b_D = 0,
/// ```
///
/// (`A v = J (v with v_D = 0)` at the free dofs, `v_D` at the fixed ones),
/// by `solver` preconditioned with the inverse of `A`'s diagonal (1 at fixed
/// dofs); then `u ← u + δ`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `fixed` for a mask of another length
/// than this rank's local dofs; a zero diagonal entry at a free dof (named
/// by its serial dof); those of [`DistOperator`] and of [`cg`] or [`gmres`]
/// (on every rank).
pub fn solve_linear<R: Real + Equivalence>(
    op: &mut DistOperator<R>,
    u: &mut DistVector<R>,
    fixed: &[bool],
    solver: &Krylov,
) -> Result<KrylovStats> {
    solve(op, u, fixed, solver, None)
}

/// [`solve_linear`] preconditioned by `preconditioner` (e.g. a
/// [`DistMultigrid`](crate::DistMultigrid) set up at `u` for the same form
/// and fixed dofs) in place of Jacobi.
///
/// # Errors
/// As [`solve_linear`] (but no zero-diagonal check); those of
/// `preconditioner`.
pub fn solve_linear_preconditioned<R: Real + Equivalence>(
    op: &mut DistOperator<R>,
    u: &mut DistVector<R>,
    fixed: &[bool],
    solver: &Krylov,
    preconditioner: &mut dyn LinearOperator<DistVector<R>>,
) -> Result<KrylovStats> {
    solve(op, u, fixed, solver, Some(preconditioner))
}

/// [`solve_linear`] with `preconditioner`, or Jacobi without one.
fn solve<R: Real + Equivalence>(
    op: &mut DistOperator<R>,
    u: &mut DistVector<R>,
    fixed: &[bool],
    solver: &Krylov,
    preconditioner: Option<&mut dyn LinearOperator<DistVector<R>>>,
) -> Result<KrylovStats> {
    let mut step = LinearStep::new(op, u, fixed, preconditioner.is_none())?;
    step.solve(op, u, solver, preconditioner)
}

/// The one-time work of [`solve_linear`] at a state `u`: the right-hand
/// side `b` (`b_F = −F(u)_F`, `b_D = 0`), the fixed entries where the
/// vectors live, and (for Jacobi) the inverse diagonal of `A` — so that
/// repeated solves of the same system (a benchmark timing the Krylov
/// iterations alone) do only the Krylov work.
pub struct LinearStep<R: Real> {
    b: DistVector<R>,
    fixed: IndexSet,
    jacobi: Option<Jacobi<DistVector<R>>>,
}

impl<R: Real + Equivalence> LinearStep<R> {
    /// Prepares the step of `op` at `u` with the dofs `fixed` marks (as
    /// [`solve_linear`]); `jacobi`: also the inverse diagonal, for a solve
    /// without a preconditioner of the caller's.
    ///
    /// # Errors
    /// As [`solve_linear`], before its Krylov solve (on every rank).
    pub fn new(
        op: &mut DistOperator<R>,
        u: &DistVector<R>,
        fixed: &[bool],
        jacobi: bool,
    ) -> Result<Self> {
        let n_local = u.n_local();
        let bad_mask = (fixed.len() != n_local).then(|| {
            Error::arg(
                "fixed",
                format!(
                    "expected one flag per local dof ({n_local}), got {}",
                    fixed.len()
                ),
            )
        });
        op.mesh().ranks().agree(bad_mask.map_or(Ok(()), Err))?;
        let fixed_entries: Vec<u32> = (0..n_local as u32).filter(|&i| fixed[i as usize]).collect();
        let fixed = op.mesh().ranks().agree(u.index_set(&fixed_entries))?;
        let mut b = op.vector()?;
        op.apply(u, &mut b)?;
        op.mesh().ranks().agree(b.local_mut().set_at(&fixed, 0.0))?;
        b.scale(-1.0)?;
        let jacobi = if jacobi {
            Some(Jacobi::new(inverse_diagonal(op, u, &fixed_entries)?))
        } else {
            None
        };
        Ok(LinearStep { b, fixed, jacobi })
    }

    /// Solves `A δ = b` from `δ = 0` by `solver`, preconditioned by
    /// `preconditioner` or else the prepared Jacobi, and adds `δ` to `u`
    /// (`A`: the Jacobian of `op` at `u`, constrained; `u` is the state the
    /// step was prepared at, or another with the same fixed values for an
    /// affine form).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `preconditioner` if neither it nor
    /// a prepared Jacobi is there; those of [`cg`] or [`gmres`] (on every
    /// rank).
    pub fn solve(
        &mut self,
        op: &mut DistOperator<R>,
        u: &mut DistVector<R>,
        solver: &Krylov,
        preconditioner: Option<&mut dyn LinearOperator<DistVector<R>>>,
    ) -> Result<KrylovStats> {
        let preconditioner: &mut dyn LinearOperator<DistVector<R>> =
            match (preconditioner, &mut self.jacobi) {
                (Some(p), _) => p,
                (None, Some(j)) => j,
                (None, None) => {
                    return Err(Error::arg(
                        "preconditioner",
                        "none given, and the step was prepared without Jacobi \
                         (LinearStep::new with jacobi = true)",
                    ));
                }
            };
        let free = op.vector()?;
        let mut delta = self.b.zeros_like()?;
        let mut constrained = Constrained {
            op,
            u,
            fixed: &self.fixed,
            free,
        };
        let stats = match solver {
            &Krylov::Cg { tol, max_iter } => cg(
                &mut constrained,
                Some(preconditioner),
                &self.b,
                &mut delta,
                tol,
                max_iter,
            )?,
            Krylov::Gmres(opts) => gmres(
                &mut constrained,
                Some(preconditioner),
                &self.b,
                &mut delta,
                opts,
            )?,
        };
        u.axpy(1.0, &delta)?;
        Ok(stats)
    }
}

/// The inverse of `A`'s diagonal: 1 at the fixed local entries, `1/J_ii`
/// at the free ones — computed on the host (once per solve: one download
/// and one upload of the local entries on a device).
///
/// # Errors
/// [`Error::InvalidArgument`] naming `op` for a zero diagonal entry at a
/// free dof; device errors; on every rank.
pub(crate) fn inverse_diagonal<R: Real + Equivalence>(
    op: &mut DistOperator<R>,
    u: &DistVector<R>,
    fixed_entries: &[u32],
) -> Result<DistVector<R>> {
    let mut inverse = op.diagonal(u)?;
    let diagonal = op.mesh().ranks().agree(inverse.local_to_host())?;
    let mut fixed = vec![false; diagonal.len()];
    for &i in fixed_entries {
        fixed[i as usize] = true;
    }
    let n_owned = inverse.n_owned();
    let zero_at = diagonal[..n_owned]
        .iter()
        .zip(&fixed)
        .position(|(&d, &f)| !f && d == R::ZERO);
    let zero = match zero_at {
        Some(l) => {
            let nc = op.n_comp();
            let g = op.mesh().layout().global_vertices[l / nc] as usize * nc + l % nc;
            Err(Error::arg(
                "op",
                format!(
                    "the Jacobian's diagonal is 0 at the free dof {g}: Jacobi cannot \
                     precondition it (fix that dof, or check the form)"
                ),
            ))
        }
        None => Ok(()),
    };
    op.mesh().ranks().agree(zero)?;
    let values: Vec<R> = diagonal
        .iter()
        .zip(&fixed)
        .map(|(&d, &f)| if f { R::ONE } else { R::ONE / d })
        .collect();
    op.mesh()
        .ranks()
        .agree(inverse.set_local_from_host(&values))?;
    Ok(inverse)
}

/// The constrained Jacobian `A` of [`solve_linear`].
struct Constrained<'a, R: Real> {
    op: &'a mut DistOperator<R>,
    u: &'a DistVector<R>,
    /// The fixed local entries, where the vectors live.
    fixed: &'a IndexSet,
    /// Scratch: `v` with `v_D = 0`.
    free: DistVector<R>,
}

impl<R: Real + Equivalence> LinearOperator<DistVector<R>> for Constrained<'_, R> {
    fn apply(&mut self, v: &DistVector<R>, y: &mut DistVector<R>) -> Result<()> {
        self.free.copy_from(v)?;
        let masked = self.free.local_mut().set_at(self.fixed, 0.0);
        self.op.mesh().ranks().agree(masked)?;
        self.op.jacobian_action(self.u, &self.free, y)?;
        let kept = y.local_mut().copy_at(self.fixed, v.local());
        self.op.mesh().ranks().agree(kept)
    }
}
