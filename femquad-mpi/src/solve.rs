//! A linear problem with Dirichlet conditions solved over all ranks by
//! femquad's own Krylov solvers ([`femquad::solve::cg`],
//! [`femquad::solve::gmres`]) on [`DistVector`]s, Jacobi-preconditioned.

use mpi::datatype::Equivalence;

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
) -> Result<KrylovStats>
where
    Vec<R>: VectorOps,
{
    let n_local = u.local().len();
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
    let mut b = op.vector();
    op.apply(u, &mut b)?;
    mask(&mut b, fixed, |_| R::ZERO);
    b.scale(-1.0)?;
    let mut inverse_diagonal = op.diagonal(u)?;
    let zero_at = inverse_diagonal
        .owned()
        .iter()
        .zip(fixed)
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
    for (d, &f) in inverse_diagonal.local_mut().iter_mut().zip(fixed) {
        *d = if f { R::ONE } else { R::ONE / *d };
    }
    let mut constrained = Constrained { op, u, fixed };
    let mut jacobi = Jacobi::new(inverse_diagonal);
    let mut delta = b.zeros_like()?;
    let stats = match solver {
        &Krylov::Cg { tol, max_iter } => cg(
            &mut constrained,
            Some(&mut jacobi),
            &b,
            &mut delta,
            tol,
            max_iter,
        )?,
        Krylov::Gmres(opts) => gmres(&mut constrained, Some(&mut jacobi), &b, &mut delta, opts)?,
    };
    u.axpy(1.0, &delta)?;
    Ok(stats)
}

/// `x_i ← value(x_i)` at the marked local entries.
fn mask<R: Real + Equivalence>(x: &mut DistVector<R>, marked: &[bool], value: impl Fn(R) -> R) {
    for (y, &m) in x.local_mut().iter_mut().zip(marked) {
        if m {
            *y = value(*y);
        }
    }
}

/// The constrained Jacobian `A` of [`solve_linear`].
struct Constrained<'a, R: Real> {
    op: &'a mut DistOperator<R>,
    u: &'a DistVector<R>,
    fixed: &'a [bool],
}

impl<R: Real + Equivalence> LinearOperator<DistVector<R>> for Constrained<'_, R>
where
    Vec<R>: VectorOps,
{
    fn apply(&mut self, v: &DistVector<R>, y: &mut DistVector<R>) -> Result<()> {
        let mut free = v.clone();
        mask(&mut free, self.fixed, |_| R::ZERO);
        self.op.jacobian_action(self.u, &free, y)?;
        for ((y, &v), &f) in y.local_mut().iter_mut().zip(v.local()).zip(self.fixed) {
            if f {
                *y = v;
            }
        }
        Ok(())
    }
}
