//! Global residuals: gather, integrate, assemble.
//!
//! [`Residual::evaluate`] computes `F(u) = Eᵀ I(E u, E_a a)`: it gathers the
//! cell-local coefficients of the global vector `u` (and of the auxiliary
//! field), integrates element vectors with the chosen backend, and sums them
//! into the global residual. Work arrays are kept between evaluations.

use crate::aux_space::AuxSpace;
use crate::backend::{Backend, Integrator};
use crate::discretization::{CellInputs, Discretization};
use crate::error::check_len;
use crate::mesh::Mesh;
use crate::physics::Pointwise;
use crate::quadrature::Quadrature;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

/// Evaluates global residuals `F(u)_i = Σ_cells ∫ φ_i·f0 + ∇φ_i:f1` of one
/// discretized field.
pub struct Residual<R: Real> {
    space: FunctionSpace,
    aux_space: Option<FunctionSpace>,
    integrator: Integrator<R>,
    u_cells: Vec<R>,
    aux_cells: Vec<R>,
    element_vectors: Vec<R>,
}

impl<R: Real> Residual<R> {
    /// Sets up residual evaluation of fields in `space` over `mesh` with
    /// `quadrature`, an auxiliary field in `aux`, integrated by `backend`.
    pub fn new(
        mesh: &Mesh,
        space: FunctionSpace,
        quadrature: Quadrature,
        aux: AuxSpace,
        backend: &Backend,
    ) -> Result<Self> {
        let disc = Discretization::new(mesh, &space, quadrature, aux)?;
        let aux_space = match aux {
            AuxSpace::Field { n_comp } => Some(FunctionSpace::new(mesh, space.element(), n_comp)?),
            _ => None,
        };
        let n_cells = mesh.n_cells();
        let n_cell_dofs = space.n_cell_dofs();
        Ok(Residual {
            u_cells: vec![R::ZERO; n_cell_dofs],
            aux_cells: vec![R::ZERO; n_cells * disc.aux_per_cell()],
            element_vectors: vec![R::ZERO; n_cell_dofs],
            integrator: Integrator::new(disc, backend)?,
            space,
            aux_space,
        })
    }

    /// The solution space.
    pub fn space(&self) -> &FunctionSpace {
        &self.space
    }

    /// The discretization.
    pub fn discretization(&self) -> &Discretization<R> {
        self.integrator.discretization()
    }

    /// The integrator (for backend-specific queries such as kernel timings).
    pub fn integrator(&mut self) -> &mut Integrator<R> {
        &mut self.integrator
    }

    /// Number of entries of an auxiliary vector: nodes × N_aux for a field,
    /// cells × N_aux for P0, 0 without aux.
    pub fn aux_len(&self) -> usize {
        match (self.discretization().aux(), &self.aux_space) {
            (AuxSpace::Field { .. }, Some(s)) => s.n_dofs(),
            (AuxSpace::Cell { n_comp }, _) => n_comp * self.space.n_cells(),
            _ => 0,
        }
    }

    /// Sets the auxiliary field: global nodal values (`[node][k]`) for a
    /// field, `[cell][k]` for P0. Kept until the next call.
    pub fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        check_len("aux", aux, self.aux_len())?;
        match &self.aux_space {
            Some(s) => s.gather(aux, &mut self.aux_cells),
            None => {
                self.aux_cells.copy_from_slice(aux);
                Ok(())
            }
        }
    }

    /// `r = F(u)` for the global vector `u` (`n_dofs` entries) with `constants`.
    pub fn evaluate<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &[R],
        constants: &[R],
        r: &mut [R],
    ) -> Result<()> {
        self.element_vectors_of(physics, u, constants)?;
        self.space.assemble(&self.element_vectors, r)
    }

    /// Gathers `u` and computes the element vectors (kept in
    /// [`Residual::element_vectors`]).
    pub fn element_vectors_of<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &[R],
        constants: &[R],
    ) -> Result<()> {
        if u.len() != self.space.n_dofs() {
            return Err(Error::arg(
                "u",
                format!(
                    "expected {} entries (the space's dofs), got {}",
                    self.space.n_dofs(),
                    u.len()
                ),
            ));
        }
        self.space.gather(u, &mut self.u_cells)?;
        let inputs = CellInputs {
            u: &self.u_cells,
            aux: &self.aux_cells,
            constants,
        };
        self.integrator
            .element_vectors(physics, &inputs, &mut self.element_vectors)
    }

    /// The element vectors of the last evaluation, `n_cells × N_bt`.
    pub fn element_vectors(&self) -> &[R] {
        &self.element_vectors
    }
}
