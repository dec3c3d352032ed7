//! [`FixedDofs`]: the fixed (Dirichlet) unknowns of a system, on the host.

use crate::{Error, Result};

/// A set `D` of fixed unknowns (dofs) of a system of `n_dofs` unknowns,
/// built once and checked once: the dofs increasing, each once, each
/// `< n_dofs`, with a mask for membership in `O(1)`.
///
/// The one host representation of Dirichlet dofs in the crate: a
/// [`DirichletProblem`](crate::solve::DirichletProblem) keeps its fixed dofs
/// as one (with their values and, where the operator lives, their index
/// set), multigrid derives every level's from the finest level's
/// ([`LevelSpaces::fixed_dofs`](crate::multigrid::LevelSpaces::fixed_dofs))
/// and makes the coarsest level's rows the identity's with it, and an
/// assembled system is constrained by symmetric elimination
/// ([`FixedDofs::eliminate`], in [`crate::sparse`]).
///
/// ```
/// use femquad::linalg::FixedDofs;
///
/// # fn main() -> femquad::Result<()> {
/// // any order, repetitions allowed
/// let fixed = FixedDofs::new(5, &[4, 0, 4])?;
/// assert_eq!(fixed.dofs(), &[0, 4]);
/// assert!(fixed.is_fixed(4) && !fixed.is_fixed(2));
/// assert_eq!(fixed.n_free(), 3);
/// // a dof out of range is refused, with the dof
/// let e = FixedDofs::new(5, &[5]).unwrap_err();
/// assert!(e.to_string().contains("dof 5 is out of range (5 dofs)"));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixedDofs {
    is_fixed: Vec<bool>,
    dofs: Vec<u32>,
}

impl FixedDofs {
    /// The dofs `fixed_dofs` (any order; repetitions allowed) of a system
    /// with `n_dofs` unknowns.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `fixed_dofs` and the dof if one is
    /// `≥ n_dofs`.
    pub fn new(n_dofs: usize, fixed_dofs: &[u32]) -> Result<FixedDofs> {
        let mut is_fixed = vec![false; n_dofs];
        for &d in fixed_dofs {
            let slot = is_fixed.get_mut(d as usize).ok_or_else(|| {
                Error::arg(
                    "fixed_dofs",
                    format!("dof {d} is out of range ({n_dofs} dofs)"),
                )
            })?;
            *slot = true;
        }
        let dofs = (0..n_dofs)
            .filter(|&d| is_fixed[d])
            .map(|d| d as u32)
            .collect();
        Ok(FixedDofs { is_fixed, dofs })
    }

    /// Number of unknowns of the system (fixed and free).
    pub fn n_dofs(&self) -> usize {
        self.is_fixed.len()
    }

    /// Number of free unknowns: `n_dofs − |D|`.
    pub fn n_free(&self) -> usize {
        self.n_dofs() - self.dofs.len()
    }

    /// The fixed dofs, increasing.
    pub fn dofs(&self) -> &[u32] {
        &self.dofs
    }

    /// Whether dof `i` is fixed (`false` out of range).
    pub fn is_fixed(&self, i: usize) -> bool {
        self.is_fixed.get(i).copied().unwrap_or(false)
    }

    /// The fixed dofs among the first `n` unknowns, as those of a system of
    /// `n` unknowns: dof `d < n` is fixed there iff it is here. (A coarser
    /// multigrid level's dofs are the first of the finer level's.)
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n` if it exceeds `n_dofs`.
    pub fn first(&self, n: usize) -> Result<FixedDofs> {
        let is_fixed = self.is_fixed.get(..n).ok_or_else(|| {
            Error::arg(
                "n",
                format!("{n} unknowns asked of a system of {}", self.n_dofs()),
            )
        })?;
        let below = self.dofs.partition_point(|&d| (d as usize) < n);
        Ok(FixedDofs {
            is_fixed: is_fixed.to_vec(),
            dofs: self.dofs[..below].to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The dofs come out increasing and once each, the mask agrees with
    /// them, and the first `n` unknowns keep exactly the dofs below `n`.
    #[test]
    fn dofs_are_sorted_unique_and_the_mask_agrees() {
        let fixed = FixedDofs::new(8, &[6, 1, 6, 3, 1, 0]).unwrap();
        assert_eq!(fixed.dofs(), &[0, 1, 3, 6]);
        assert_eq!((fixed.n_dofs(), fixed.n_free()), (8, 4));
        let mask: Vec<bool> = (0..10).map(|i| fixed.is_fixed(i)).collect();
        let mut expected = vec![false; 10];
        for d in [0, 1, 3, 6] {
            expected[d] = true;
        }
        assert_eq!(mask, expected);
        let first = fixed.first(4).unwrap();
        assert_eq!(first, FixedDofs::new(4, &[0, 1, 3]).unwrap());
        assert_eq!(fixed.first(8).unwrap(), fixed);
        assert_eq!(fixed.first(0).unwrap().dofs(), &[] as &[u32]);
    }

    #[test]
    fn bad_input_is_named() {
        let e = FixedDofs::new(4, &[1, 4]).unwrap_err();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    name: "fixed_dofs",
                    ..
                }
            ) && e.to_string().contains("dof 4 is out of range (4 dofs)"),
            "{e}"
        );
        let e = FixedDofs::new(4, &[1]).unwrap().first(5).unwrap_err();
        assert!(matches!(e, Error::InvalidArgument { name: "n", .. }), "{e}");
    }
}
