//! [`DistOperator`]: femquad's [`Operator`] bound on each rank's cells,
//! applied to [`DistVector`]s: `F(u)`, `J(u)·v` and the point-block
//! diagonal of `J(u)` over all ranks.
//!
//! Each rank integrates its own cells only (each cell on exactly one rank),
//! so with `F_p` the residual of rank `p`'s cells on its local vertices,
//!
//! ```text
//! F(u)_i = Σ_p F_p(u|_p)_i        (i owned by one rank, a ghost on others)
//! ```
//!
//! An application: (1) ghost update of the inputs (every rank sees its
//! cells' values of `u`, `v`), (2) the local operator on the rank's
//! vertices — natively or on the rank's OpenCL device, the local vectors
//! staged through the host (OpenCL buffers cannot go to MPI), (3) agreement
//! on failure ([`Ranks::agree`](crate::comm::Ranks::agree)), (4) ghost
//! accumulate (the ghosts' partial sums added to their owners). Owned
//! entries of the result are then the serial result's, up to the order of
//! the additions at shared vertices; with deterministic assembly
//! ([`femquad::backend::Assembly::Deterministic`]) bitwise the same from run
//! to run at a fixed number of ranks and partition.

use std::rc::Rc;
use std::sync::Arc;

use mpi::datatype::Equivalence;

use femquad::backend::{Assembly, Backend};
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::Mesh;
use femquad::operator::Operator;
use femquad::space::FunctionSpace;
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

use crate::dist_mesh::DistMesh;
use crate::vector::DistVector;

/// A form bound on every rank's cells (see the [module
/// documentation](self)); P1 spaces (vertex dofs) only.
pub struct DistOperator<R: Real> {
    mesh: Rc<DistMesh>,
    n_comp: usize,
    /// `None` on a rank without cells.
    local: Option<Operator<R>>,
}

impl<R: Real + Equivalence> DistOperator<R>
where
    Vec<R>: VectorOps,
{
    /// Collective: on every rank, the P1 space of `n_comp` components over
    /// its cells, the form `make_form` makes on it, bound on `backend`.
    ///
    /// # Errors
    /// On every rank ([`Ranks::agree`](crate::comm::Ranks::agree)): a rank's
    /// invalid cell ([`Error::InvalidCell`] with the **global** cell index),
    /// `make_form`'s or the backend's errors (no device, a build failure),
    /// [`Error::InvalidArgument`] naming `order` for an order other than 1;
    /// on the other ranks as [`Error::RankFailed`].
    pub fn new(
        mesh: &Rc<DistMesh>,
        order: usize,
        n_comp: usize,
        make_form: impl FnOnce(FunctionSpace) -> Result<Form<R>>,
        backend: &Backend,
    ) -> Result<Self> {
        let local = (|| {
            if order != 1 {
                return Err(Error::arg(
                    "order",
                    format!(
                        "femquad-mpi distributes P1 spaces only (vertex dofs); order \
                         {order} has edge dofs, whose ownership across ranks is not \
                         implemented"
                    ),
                ));
            }
            let Some(local_mesh) = mesh.layout().local_mesh()? else {
                return Ok(None);
            };
            let local_mesh: Arc<Mesh> = Arc::new(local_mesh);
            let space =
                FunctionSpace::new(local_mesh, Element::lagrange(mesh.layout().dim, 1)?, n_comp)?;
            Operator::new(make_form(space)?, backend).map(Some)
        })();
        let local = mesh.ranks().agree(local)?;
        Ok(DistOperator {
            mesh: mesh.clone(),
            n_comp,
            local,
        })
    }

    /// The distributed mesh.
    pub fn mesh(&self) -> &Rc<DistMesh> {
        &self.mesh
    }

    /// Components of the field.
    pub fn n_comp(&self) -> usize {
        self.n_comp
    }

    /// This rank's operator (`None` on a rank without cells).
    pub fn local(&self) -> Option<&Operator<R>> {
        self.local.as_ref()
    }

    /// Collective: sets the assembly of every rank's operator.
    ///
    /// # Errors
    /// A rank's device error, on every rank.
    pub fn set_assembly(&mut self, assembly: Assembly) -> Result<()> {
        let result = match &mut self.local {
            Some(op) => op.set_assembly(assembly),
            None => Ok(()),
        };
        self.mesh.ranks().agree(result)
    }

    /// A field vector of zeros (`n_comp` entries per vertex).
    pub fn vector(&self) -> DistVector<R> {
        DistVector::zeros(&self.mesh, self.n_comp)
    }

    /// Collective: `r = F(u)`.
    ///
    /// # Errors
    /// On every rank: [`Operator::apply`]'s errors, with indices in the
    /// serial numbering (the dof of `u` holding NaN, the dof of a non-finite
    /// result), [`Error::RankFailed`] on the ranks that did not fail.
    pub fn apply(&mut self, u: &DistVector<R>, r: &mut DistVector<R>) -> Result<()> {
        self.check(&[("u", u, self.n_comp), ("r", r, self.n_comp)])?;
        let u = self.updated(u);
        let result = self.on_local(|op| {
            let u = op.vector_from(u.local())?;
            let mut out = op.vector()?;
            op.apply(&u, &mut out)?;
            out.to_host()
        });
        self.finish(result, r)
    }

    /// Collective: `out = J(u)·v`.
    ///
    /// # Errors
    /// As [`DistOperator::apply`]; a physics without derivatives.
    pub fn jacobian_action(
        &mut self,
        u: &DistVector<R>,
        v: &DistVector<R>,
        out: &mut DistVector<R>,
    ) -> Result<()> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc), ("v", v, nc), ("out", out, nc)])?;
        let (u, v) = (self.updated(u), self.updated(v));
        let result = self.on_local(|op| {
            let u = op.vector_from(u.local())?;
            let v = op.vector_from(v.local())?;
            let mut out = op.vector()?;
            op.jacobian_action(&u, &v, &mut out)?;
            out.to_host()
        });
        self.finish(result, out)
    }

    /// Collective: the point-block diagonal of `J(u)` (`N_comp²` entries
    /// per vertex, as [`Operator::jacobian_diagonal`]) into `out`.
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_action`].
    pub fn jacobian_diagonal(&mut self, u: &DistVector<R>, out: &mut DistVector<R>) -> Result<()> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc), ("out", out, nc * nc)])?;
        let u = self.updated(u);
        let result = self.on_local(|op| {
            let u = op.vector_from(u.local())?;
            let len = op.jacobian_diagonal_len();
            let mut out = op.integrator().zeros(len)?;
            op.jacobian_diagonal(&u, &mut out)?;
            out.to_host()
        });
        self.finish(result, out)
    }

    /// Collective: the diagonal of `J(u)` (`N_comp` entries per vertex: the
    /// diagonals of the point blocks).
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_diagonal`].
    pub fn diagonal(&mut self, u: &DistVector<R>) -> Result<DistVector<R>> {
        let nc = self.n_comp;
        let mut blocks = DistVector::zeros(&self.mesh, nc * nc);
        self.jacobian_diagonal(u, &mut blocks)?;
        let mut d = self.vector();
        for (node, block) in d
            .local_mut()
            .chunks_exact_mut(nc)
            .zip(blocks.local().chunks_exact(nc * nc))
        {
            for (c, x) in node.iter_mut().enumerate() {
                *x = block[c * nc + c];
            }
        }
        Ok(d)
    }

    /// Checks each named vector: this operator's mesh and `per_node`.
    fn check(&self, vectors: &[(&'static str, &DistVector<R>, usize)]) -> Result<()> {
        for &(name, v, per_node) in vectors {
            if !Rc::ptr_eq(v.mesh(), &self.mesh) {
                return Err(Error::arg(
                    name,
                    "is distributed over another DistMesh than the operator: make it with \
                     DistOperator::vector",
                ));
            }
            if v.per_node() != per_node {
                return Err(Error::arg(
                    name,
                    format!(
                        "has {} entries per vertex, the operator needs {per_node}",
                        v.per_node()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A copy of `x` with current ghosts.
    fn updated(&self, x: &DistVector<R>) -> DistVector<R> {
        let mut x = x.clone();
        x.ghost_update();
        x
    }

    /// `f` on this rank's operator (an empty result on a rank without
    /// cells), its errors in the serial numbering.
    fn on_local(&mut self, f: impl FnOnce(&mut Operator<R>) -> Result<Vec<R>>) -> Result<Vec<R>> {
        match &mut self.local {
            Some(op) => f(op).map_err(|e| self.to_global(e)),
            None => Ok(Vec::new()),
        }
    }

    /// Agreement on the local results, then the ghosts' sums to the owners.
    fn finish(&self, result: Result<Vec<R>>, out: &mut DistVector<R>) -> Result<()> {
        let values = self.mesh.ranks().agree(result)?;
        out.set_local(values)?;
        out.ghost_accumulate();
        Ok(())
    }

    /// `e` with its local indices (dof, node, cell) replaced by the serial ones.
    fn to_global(&self, e: Error) -> Error {
        let layout = self.mesh.layout();
        let nc = self.n_comp;
        let dof = |d: usize| layout.global_vertices[d / nc] as usize * nc + d % nc;
        match e {
            Error::NonFinite { name, index, value } => Error::NonFinite {
                name,
                index: dof(index),
                value,
            },
            Error::NonFiniteResult {
                quantity,
                physics,
                dof: d,
                node,
                component,
                value,
            } => Error::NonFiniteResult {
                quantity,
                physics,
                dof: dof(d),
                node: layout.global_vertices[node] as usize,
                component,
                value,
            },
            Error::InvalidCell { cell, reason } => Error::InvalidCell {
                cell: layout.cells.get(cell).map_or(cell, |&c| c as usize),
                reason,
            },
            other => other,
        }
    }
}
