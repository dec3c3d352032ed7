//! Linear algebra at the bottom of the crate: linear operators by their
//! action — what the Krylov solvers ([`crate::solve`]) iterate with, and
//! what the operators of the crate (an
//! [`Operator`](crate::operator::Operator)'s Jacobian, an assembled
//! [`CsrMatrix`](crate::sparse::CsrMatrix), a direct solver, a multigrid
//! cycle) implement where they are defined — and the fixed (Dirichlet)
//! unknowns of a system ([`FixedDofs`]), which the solvers, multigrid and
//! the sparse elimination share.

mod fixed_dofs;

pub use fixed_dofs::FixedDofs;

use crate::Result;
use crate::vector::VectorOps;

/// A linear operator given by its action `y = A x` on vectors of type `V`
/// (host or device vectors, see [`crate::vector`]). Preconditioners are
/// linear operators too: `z = M⁻¹ r`.
///
/// Implemented for every closure `FnMut(&V, &mut V) -> Result<()>`; give
/// the closure's parameter types (`|x: &Vec<f64>, y: &mut Vec<f64>| …`).
/// A type that holds state (a multigrid cycle, a device kernel) implements
/// the trait itself.
pub trait LinearOperator<V> {
    /// Sets `y = A x`. `y` holds arbitrary values on entry.
    fn apply(&mut self, x: &V, y: &mut V) -> Result<()>;

    /// `Some(d)` if the operator is the diagonal scaling `y = d ∘ x` (a
    /// [`Jacobi`] preconditioner): a solver may then apply it inside its
    /// own vector updates ([`crate::vector::CgFusion::Jacobi`]) instead of
    /// calling [`LinearOperator::apply`]. `None` (the default) otherwise.
    fn diagonal_scaling(&self) -> Option<&V> {
        None
    }
}

impl<V, F> LinearOperator<V> for F
where
    F: FnMut(&V, &mut V) -> Result<()>,
{
    fn apply(&mut self, x: &V, y: &mut V) -> Result<()> {
        self(x, y)
    }
}

/// The Jacobi (diagonal) preconditioner `z = D⁻¹ r`, applied as the
/// pointwise product with the inverse diagonal `D⁻¹` of the operator.
#[derive(Debug)]
pub struct Jacobi<V> {
    inverse_diagonal: V,
}

impl<V: VectorOps> Jacobi<V> {
    /// The preconditioner from the entries `1/A_ii` (where the vectors live).
    pub fn new(inverse_diagonal: V) -> Self {
        Jacobi { inverse_diagonal }
    }

    /// The entries `1/A_ii`.
    pub fn inverse_diagonal(&self) -> &V {
        &self.inverse_diagonal
    }
}

impl<V: VectorOps> LinearOperator<V> for Jacobi<V> {
    fn apply(&mut self, r: &V, z: &mut V) -> Result<()> {
        z.pointwise_mult(&self.inverse_diagonal, r)
    }

    fn diagonal_scaling(&self) -> Option<&V> {
        Some(&self.inverse_diagonal)
    }
}
