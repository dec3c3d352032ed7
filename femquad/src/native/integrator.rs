//! The native integrator of a bound form ([`NativeIntegrator`]): gather on
//! the host, the element integrals of [`super`], assembly `Eᵀ` on the host.
//! The reference the OpenCL backend is checked against.

use std::borrow::Cow;
use std::sync::Arc;

use super::{
    BoundaryIntegrals, Execution, diagonal_blocks, element_vectors, tangent_element_vectors,
};
use crate::aux_space::AuxSpace;
use crate::discretization::{CellInputs, CellTime, Discretization};
use crate::physics::PointwiseEval;
use crate::seam::Integrate;
use crate::space::FunctionSpace;
use crate::{Real, Result};

/// A form's physics, discretization, constants and auxiliary field bound
/// natively, with the work arrays of its evaluations
/// ([`Integrate`] for host vectors `Vec<R>`).
pub struct NativeIntegrator<R: Real> {
    space: FunctionSpace,
    disc: Discretization<R>,
    physics: Arc<dyn PointwiseEval<R>>,
    /// The form's boundary terms, added into the cell-local arrays.
    boundary: Arc<BoundaryIntegrals<R>>,
    execution: Execution,
    constants: Vec<R>,
    /// The auxiliary field's space (a field in the solution's element).
    aux_space: Option<FunctionSpace>,
    /// The auxiliary field, cell-local (`[cell][b][k]`, or `[cell][k]` for
    /// P0), and whether it was set.
    aux_cells: Vec<R>,
    aux_set: bool,
    u_cells: Vec<R>,
    /// The direction of a Jacobian action, cell-local.
    v_cells: Vec<R>,
    /// The bound time state: `t`, `σ` and `b` cell-local
    /// ([`Integrate::set_time`]).
    time: Option<(R, R, Vec<R>)>,
    element_vectors: Vec<R>,
}

impl<R: Real> NativeIntegrator<R> {
    /// Binds `physics` with `constants` on `disc` (a discretization of
    /// `space`) and the boundary terms `boundary`, computing with
    /// `execution`; the auxiliary field is zero until [`Integrate::set_aux`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `physics` if it reads `x`
    /// and `disc` stores no cell coordinates
    /// ([`Discretization::without_coordinates`]); if the auxiliary field's
    /// space cannot be built.
    pub fn new(
        space: &FunctionSpace,
        disc: Discretization<R>,
        physics: Arc<dyn PointwiseEval<R>>,
        boundary: Arc<BoundaryIntegrals<R>>,
        constants: &[R],
        execution: Execution,
    ) -> Result<Self> {
        if physics.info().reads.x && disc.geometry().coords().is_none() {
            return Err(crate::Error::arg(
                "physics",
                format!(
                    "`{}` reads x but the discretization stores no cell coordinates \
                     (Discretization::without_coordinates): build it with Discretization::new",
                    physics.info().name
                ),
            ));
        }
        let aux_space = match disc.aux() {
            AuxSpace::Field { n_comp } => Some(space.with_n_comp(n_comp)?),
            _ => None,
        };
        let n_cell_dofs = space.n_cell_dofs();
        Ok(NativeIntegrator {
            space: space.clone(),
            aux_cells: vec![R::ZERO; space.n_cells() * disc.aux_per_cell()],
            aux_set: false,
            disc,
            physics,
            boundary,
            execution,
            constants: constants.to_vec(),
            aux_space,
            u_cells: vec![R::ZERO; n_cell_dofs],
            v_cells: Vec::new(),
            time: None,
            element_vectors: vec![R::ZERO; n_cell_dofs],
        })
    }

    /// The discretization.
    pub fn discretization(&self) -> &Discretization<R> {
        &self.disc
    }

    /// Serial or parallel.
    pub fn execution(&self) -> Execution {
        self.execution
    }

    /// Checks that an auxiliary field the physics reads was set: the one
    /// check of the native evaluations.
    fn check_aux(&self) -> Result<()> {
        crate::aux_space::check_set(self.physics.info(), self.aux_set)
    }
}

impl<R: Real> Integrate<R> for NativeIntegrator<R> {
    type Vector = Vec<R>;

    fn residual(&mut self, u: &Vec<R>, r: &mut Vec<R>) -> Result<()> {
        self.check_aux()?;
        self.space.gather(u, &mut self.u_cells)?;
        let inputs = CellInputs {
            u: &self.u_cells,
            aux: &self.aux_cells,
            constants: &self.constants,
            time: cell_time(&self.time),
        };
        element_vectors(
            &self.disc,
            &*self.physics,
            &inputs,
            &mut self.element_vectors,
            self.execution,
        )?;
        self.boundary.add_residual(
            &self.u_cells,
            cell_time(&self.time).as_ref(),
            &mut self.element_vectors,
        )?;
        self.space.assemble(&self.element_vectors, r)
    }

    fn jacobian_action(&mut self, u: &Vec<R>, v: &Vec<R>, out: &mut Vec<R>) -> Result<()> {
        self.check_aux()?;
        self.space.gather(u, &mut self.u_cells)?;
        self.v_cells.resize(self.u_cells.len(), R::ZERO);
        self.space.gather(v, &mut self.v_cells)?;
        let inputs = CellInputs {
            u: &self.u_cells,
            aux: &self.aux_cells,
            constants: &self.constants,
            time: cell_time(&self.time),
        };
        tangent_element_vectors(
            &self.disc,
            &*self.physics,
            &inputs,
            &self.v_cells,
            &mut self.element_vectors,
            self.execution,
        )?;
        self.boundary.add_tangent(
            &self.u_cells,
            &self.v_cells,
            cell_time(&self.time).as_ref(),
            &mut self.element_vectors,
        )?;
        self.space.assemble(&self.element_vectors, out)
    }

    fn jacobian_diagonal(&mut self, u: &Vec<R>, out: &mut Vec<R>) -> Result<()> {
        self.check_aux()?;
        crate::real::check_finite("u", u)?;
        self.space.gather(u, &mut self.u_cells)?;
        let inputs = CellInputs {
            u: &self.u_cells,
            aux: &self.aux_cells,
            constants: &self.constants,
            time: cell_time(&self.time),
        };
        let blocks = point_block_diagonal(
            &self.space,
            &self.disc,
            &*self.physics,
            &self.boundary,
            &inputs,
            self.execution,
        )?;
        out.copy_from_slice(&blocks);
        Ok(())
    }

    fn set_time(&mut self, time: Option<(R, R, &Vec<R>)>) -> Result<()> {
        self.time = match time {
            None => None,
            Some((t, sigma, b)) => {
                let mut b_cells = vec![R::ZERO; self.u_cells.len()];
                self.space.gather(b, &mut b_cells)?;
                Some((t, sigma, b_cells))
            }
        };
        Ok(())
    }

    fn set_constants(&mut self, constants: &[R]) -> Result<()> {
        self.constants = constants.to_vec();
        Ok(())
    }

    fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        let (n_nodes, n_cells) = (self.space.n_nodes(), self.space.n_cells());
        crate::aux_space::check_values(self.disc.aux(), aux, n_nodes, n_cells)?;
        match &self.aux_space {
            Some(s) => s.gather(aux, &mut self.aux_cells)?,
            None => self.aux_cells.copy_from_slice(aux),
        }
        self.aux_set = true;
        Ok(())
    }

    fn cell_aux(&self) -> Result<Cow<'_, [R]>> {
        self.check_aux()?;
        Ok(Cow::Borrowed(&self.aux_cells))
    }
}

/// The bound time state `(t, σ, b cell-local)`, as [`CellInputs::time`].
fn cell_time<R: Real>(time: &Option<(R, R, Vec<R>)>) -> Option<CellTime<'_, R>> {
    time.as_ref().map(|(t, sigma, b)| CellTime {
        t: *t,
        sigma: *sigma,
        b,
    })
}

/// The point-block diagonal of `J(u)`, `[node][fc][gc]`
/// (`n_nodes·N_comp²` entries), from the cell-local `inputs`: the diagonal
/// blocks of the element matrices ([`diagonal_blocks`]) plus those of the
/// boundary terms ([`BoundaryIntegrals::add_diagonal_blocks`]) summed per
/// node in increasing cell order. NaN and ±∞ are kept.
///
/// # Errors
/// Those of [`diagonal_blocks`] and
/// [`BoundaryIntegrals::add_diagonal_blocks`].
pub fn point_block_diagonal<R: Real>(
    space: &FunctionSpace,
    disc: &Discretization<R>,
    physics: &dyn PointwiseEval<R>,
    boundary: &BoundaryIntegrals<R>,
    inputs: &CellInputs<'_, R>,
    execution: Execution,
) -> Result<Vec<R>> {
    let nc = space.n_comp();
    let per_block = nc * nc;
    let mut blocks = vec![R::ZERO; disc.n_cells() * disc.n_b() * per_block];
    diagonal_blocks(disc, physics, inputs, &mut blocks, execution)?;
    boundary.add_diagonal_blocks(inputs.u, inputs.time.as_ref(), &mut blocks)?;
    let mut out = vec![R::ZERO; space.n_nodes() * per_block];
    for (c, cell) in blocks.chunks(space.n_basis() * per_block).enumerate() {
        for (block, &node) in cell.chunks(per_block).zip(space.cell_nodes(c)) {
            let start = node as usize * per_block;
            for (o, &v) in out[start..start + per_block].iter_mut().zip(block) {
                *o += v;
            }
        }
    }
    Ok(out)
}
