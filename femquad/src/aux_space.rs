//! Auxiliary fields: variable coefficients `a` of the physics.
//!
//! As in the paper (§ Variable coefficients), an auxiliary field lives either
//! in the solution's finite-element space (same element, its own number of
//! components) or in P0, one constant per cell. The kernel receives it
//! cell-local, like `u`:
//!
//! - [`AuxSpace::Field`]: `[cell][b][k]` (`N_b·N_aux` values per cell, see
//!   [`crate::layout::cell_dof`]); at a quadrature point
//!   `a_k = Σ_b φ_b a_{b,k}` and `∇a_k = Σ_b ∇φ_b a_{b,k}`.
//! - [`AuxSpace::Cell`]: `[cell][k]` (`N_aux` values per cell);
//!   `a_k` is the cell value and `∇a_k = 0`.

use crate::{Error, Result};

/// Where the auxiliary field lives.
///
/// A coefficient `a₀ = 3` per cell (P0) makes the variable-coefficient
/// Laplacian `f1 = a₀∇u` three times the plain one:
///
/// ```
/// use femquad::physics::builtin::{Laplacian, LaplacianCoefficient};
/// use femquad::prelude::*;
///
/// let mesh = std::sync::Arc::new(unit_square(2, &MeshOptions::default())?); // 8 cells, shared
/// let element = Element::lagrange(2, 1)?;
/// let aux = AuxSpace::Cell { n_comp: 1 };
/// assert_eq!((aux.n_comp(), aux.values_per_cell(element.n_basis())), (1, 1));
/// let space = FunctionSpace::new(mesh.clone(), element, 1)?;
/// let mut plain = Operator::<f64>::new(Form::new(space.clone(), Laplacian)?, &Backend::native())?;
/// let form = Form::new(space, LaplacianCoefficient)?.with_aux(aux)?;
/// let mut scaled = Operator::<f64>::new(form, &Backend::native())?;
/// scaled.set_aux(&[3.0; 8])?; // [cell][k]
///
/// let values = plain.space().interpolate(|x, u| u[0] = x[0] * x[1]);
/// let u = plain.vector_from(&values)?;
/// let (mut r, mut r3) = (plain.vector()?, scaled.vector()?);
/// plain.apply(&u, &mut r)?;
/// scaled.apply(&u, &mut r3)?;
/// let (r, r3) = (r.to_host()?, r3.to_host()?);
/// assert!(r.iter().zip(&r3).all(|(a, b)| (3.0 * a - b).abs() < 1e-14));
/// assert!(r.iter().any(|a| a.abs() > 0.1));
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AuxSpace {
    /// No auxiliary field.
    #[default]
    None,
    /// The solution's element (P1 or P2), with `n_comp` components.
    Field {
        /// Components `N_aux`.
        n_comp: usize,
    },
    /// P0: `n_comp` constants per cell.
    Cell {
        /// Components `N_aux`.
        n_comp: usize,
    },
}

impl AuxSpace {
    /// Components `N_aux` (0 for [`AuxSpace::None`]).
    pub fn n_comp(self) -> usize {
        match self {
            AuxSpace::None => 0,
            AuxSpace::Field { n_comp } | AuxSpace::Cell { n_comp } => n_comp,
        }
    }

    /// Values per cell in the cell-local aux array, for an element with `n_b`
    /// basis functions.
    pub fn values_per_cell(self, n_b: usize) -> usize {
        match self {
            AuxSpace::None => 0,
            AuxSpace::Field { n_comp } => n_b * n_comp,
            AuxSpace::Cell { n_comp } => n_comp,
        }
    }

    /// Short name for reports: `none`, `field`, `cell`.
    pub fn kind(self) -> &'static str {
        match self {
            AuxSpace::None => "none",
            AuxSpace::Field { .. } => "field",
            AuxSpace::Cell { .. } => "cell",
        }
    }

    /// Checks that the space matches a physics that reads `n_aux` components.
    pub fn check_against(self, n_aux: usize, physics: &str) -> Result<()> {
        if self.n_comp() == n_aux {
            Ok(())
        } else {
            Err(Error::arg(
                "aux",
                format!(
                    "physics `{physics}` reads {n_aux} auxiliary component(s) but the auxiliary \
                     space {self:?} has {}",
                    self.n_comp()
                ),
            ))
        }
    }
}

/// Checks the global values `aux` of an auxiliary field in `space` on a
/// mesh of `n_nodes` nodes and `n_cells` cells: `[node][k]` for a field,
/// `[cell][k]` for P0, every value finite. The one check of `set_aux`, made
/// by the backend that takes the values.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `aux` for a wrong length or a form
/// without auxiliary field; [`Error::NonFinite`] with the index in `aux`.
pub(crate) fn check_values<R: crate::Real>(
    space: AuxSpace,
    aux: &[R],
    n_nodes: usize,
    n_cells: usize,
) -> Result<()> {
    let len = match space {
        AuxSpace::None => {
            return Err(Error::arg(
                "aux",
                "the form has no auxiliary field (AuxSpace::None): give it one with Form::with_aux",
            ));
        }
        AuxSpace::Field { n_comp } => n_nodes * n_comp,
        AuxSpace::Cell { n_comp } => n_cells * n_comp,
    };
    crate::error::check_len("aux", aux, len)?;
    crate::real::check_finite("aux", aux)
}

/// Checks that an auxiliary field which `physics` reads was set (`set`):
/// the one check of every backend's evaluations, with one message.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `aux` if `physics` reads `a` or `∇a`
/// and the field was never set (an unset field is not read as zeros).
pub(crate) fn check_set(physics: &crate::physics::PointwiseInfo, set: bool) -> Result<()> {
    if set || !(physics.reads.a || physics.reads.grad_a) {
        return Ok(());
    }
    Err(Error::arg(
        "aux",
        format!(
            "the physics `{}` reads an auxiliary field, which was never set: call \
             set_aux first (Operator::set_aux; DirichletProblem::set_aux sets it on every \
             multigrid level too); an unset field is not read as zeros",
            physics.name
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_per_cell() {
        assert_eq!(AuxSpace::None.values_per_cell(3), 0);
        assert_eq!(AuxSpace::Field { n_comp: 2 }.values_per_cell(6), 12);
        assert_eq!(AuxSpace::Cell { n_comp: 2 }.values_per_cell(6), 2);
        assert!(AuxSpace::Cell { n_comp: 1 }.check_against(1, "p").is_ok());
        let e = AuxSpace::None
            .check_against(1, "p")
            .unwrap_err()
            .to_string();
        assert!(e.contains("reads 1 auxiliary"), "{e}");
    }
}
