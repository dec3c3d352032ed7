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
//! cells' values of `u`, `v`) in the operator's scratch copies, (2) the
//! local operator on the rank's local vector — natively on host vectors, or
//! on the rank's OpenCL device directly on the device vector (nothing but
//! the halo crosses to the host, see [`DistVector`]'s "Halo messages"),
//! (3) agreement on failure ([`Ranks::agree`](crate::comm::Ranks::agree)),
//! (4) ghost accumulate (the ghosts' partial sums added to their owners).
//! Owned entries of the result are then the serial result's, up to the
//! order of the additions at shared vertices; with deterministic assembly
//! ([`femquad::backend::Assembly::Deterministic`]) bitwise the same from run
//! to run at a fixed number of ranks and partition.
//!
//! # No overlap (yet)
//! The ghost update finishes before the local operator starts: femquad's
//! [`Operator`] integrates all of a rank's cells in one launch, so there is
//! no "interior cells first" part to run while the halo is in flight.
//! Overlapping needs the rank's cells split in two operators (cells with no
//! ghost vertex; the rest) whose results add up — not done here.

use std::rc::Rc;
use std::sync::Arc;

use mpi::datatype::Equivalence;

use femquad::backend::{Assembly, Backend, Vector};
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::Mesh;
use femquad::opencl::{Device, DeviceIndices, DeviceVector};
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
    /// The device of an OpenCL backend (also on a rank without cells).
    device: Option<Arc<Device>>,
    /// Scratch copies of the inputs `u`, `v` with current ghosts.
    scratch: [DistVector<R>; 2],
}

impl<R: Real + Equivalence> DistOperator<R> {
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
        let device = match backend {
            Backend::OpenCl { device, .. } => Some(device.clone()),
            Backend::Native(_) => None,
        };
        let scratch = mesh.ranks().agree((|| {
            let a = new_vector(mesh, n_comp, device.as_ref())?;
            let b = a.zeros_like()?;
            Ok([a, b])
        })())?;
        Ok(DistOperator {
            mesh: mesh.clone(),
            n_comp,
            local,
            device,
            scratch,
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

    /// A field vector of zeros (`n_comp` entries per vertex), where this
    /// operator's vectors live (the device of an OpenCL backend, else the
    /// host).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn vector(&self) -> Result<DistVector<R>> {
        new_vector(&self.mesh, self.n_comp, self.device.as_ref())
    }

    /// A vector of `per_node` entries per vertex where this operator's
    /// vectors live (e.g. `N_comp²` for [`DistOperator::jacobian_diagonal`]).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn vector_with(&self, per_node: usize) -> Result<DistVector<R>> {
        new_vector(&self.mesh, per_node, self.device.as_ref())
    }

    /// Collective: binds the time state `t`, `u_t = σ·u + b` on every
    /// rank's operator ([`Operator::set_time`]): the next evaluations compute
    /// `F(t, u, σ·u + b)` and the step Jacobian `σ·∂F/∂u_t + ∂F/∂u`. `b`'s
    /// ghosts are updated first (each rank's cells read `b` at their ghost
    /// vertices too).
    ///
    /// # Errors
    /// On every rank: those of [`Operator::set_time`] (a non-finite `t`,
    /// `sigma` or entry of `b`, its dof in the serial numbering); `b` on
    /// another mesh or in another place, as [`DistOperator::apply`].
    pub fn set_time(&mut self, t: f64, sigma: f64, b: &DistVector<R>) -> Result<()> {
        self.check(&[("b", b, self.n_comp)])?;
        self.update_scratch(0, b)?;
        let [sb, _] = &self.scratch;
        let result = match &mut self.local {
            Some(op) => op.set_time(t, sigma, sb.local()),
            None => Ok(()),
        };
        self.mesh
            .ranks()
            .agree(result.map_err(|e| self.to_global(e)))
    }

    /// Collective: `r = F(u)`.
    ///
    /// # Errors
    /// On every rank: [`Operator::apply`]'s errors, with indices in the
    /// serial numbering (the dof of `u` holding NaN, the dof of a non-finite
    /// result), [`Error::RankFailed`] on the ranks that did not fail;
    /// [`Error::InvalidArgument`] naming a vector on another mesh or in
    /// another place than the operator.
    pub fn apply(&mut self, u: &DistVector<R>, r: &mut DistVector<R>) -> Result<()> {
        self.check(&[("u", u, self.n_comp), ("r", r, self.n_comp)])?;
        self.update_scratch(0, u)?;
        let [su, _] = &self.scratch;
        let result = match &mut self.local {
            Some(op) => op.apply(su.local(), r.local_mut()),
            None => r.fill(0.0),
        };
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
        self.update_scratch(0, u)?;
        self.update_scratch(1, v)?;
        let [su, sv] = &self.scratch;
        let result = match &mut self.local {
            Some(op) => op.jacobian_action(su.local(), sv.local(), out.local_mut()),
            None => out.fill(0.0),
        };
        self.finish(result, out)
    }

    /// Collective: the point-block diagonal of `J(u)` (`N_comp²` entries
    /// per vertex, as [`Operator::jacobian_diagonal`]) into `out` (made by
    /// [`DistOperator::vector_with`]`(N_comp²)`).
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_action`].
    pub fn jacobian_diagonal(&mut self, u: &DistVector<R>, out: &mut DistVector<R>) -> Result<()> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc), ("out", out, nc * nc)])?;
        self.update_scratch(0, u)?;
        let [su, _] = &self.scratch;
        let result = match &mut self.local {
            Some(op) => op.jacobian_diagonal(su.local(), out.local_mut()),
            None => out.fill(0.0),
        };
        self.finish(result, out)
    }

    /// Collective: the diagonal of `J(u)` (`N_comp` entries per vertex: the
    /// diagonals of the point blocks), where the operator's vectors live.
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_diagonal`].
    pub fn diagonal(&mut self, u: &DistVector<R>) -> Result<DistVector<R>> {
        let nc = self.n_comp;
        let mut blocks = self.vector_with(nc * nc)?;
        self.jacobian_diagonal(u, &mut blocks)?;
        let mut d = self.vector()?;
        // entry l·nc + c of d is entry l·nc² + c·nc + c of the blocks
        let picked: Vec<u32> = (0..d.n_local())
            .map(|i| ((i / nc) * nc * nc + (i % nc) * (nc + 1)) as u32)
            .collect();
        let result = match (d.local_mut(), blocks.local()) {
            (Vector::Host(d), Vector::Host(b)) => {
                for (x, &i) in d.iter_mut().zip(&picked) {
                    *x = b[i as usize];
                }
                Ok(())
            }
            (Vector::Device(d), Vector::Device(b)) => pick_on_device(d, b, &picked),
            _ => Err(Error::internal(
                "DistOperator::diagonal: the blocks and the diagonal in different places",
            )),
        };
        self.mesh.ranks().agree(result)?;
        Ok(d)
    }

    /// Collective: this rank's part of `J(u)` assembled, as entries
    /// `(row, column, value)` in the **global** dof numbering
    /// (`vertex·N_comp + c` of the mesh's global vertices): the element
    /// matrices of this rank's cells only, so the global Jacobian is the sum
    /// of every rank's entries (repeated positions added). For gathering a
    /// coarse level's matrix on one rank.
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_action`] (those of
    /// [`Operator::assemble_jacobian`]).
    pub fn assemble_jacobian_entries(
        &mut self,
        u: &DistVector<R>,
    ) -> Result<Vec<(usize, usize, f64)>> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc)])?;
        self.update_scratch(0, u)?;
        let [su, _] = &self.scratch;
        let matrix = match &mut self.local {
            Some(op) => op.assemble_jacobian(su.local()).map(Some),
            None => Ok(None),
        };
        let matrix = self
            .mesh
            .ranks()
            .agree(matrix.map_err(|e| self.to_global(e)))?;
        let Some(matrix) = matrix else {
            return Ok(Vec::new());
        };
        let layout = self.mesh.layout();
        let dof = |d: usize| layout.global_vertices[d / nc] as usize * nc + d % nc;
        let mut entries = Vec::with_capacity(matrix.nnz());
        for i in 0..matrix.n_rows() {
            if let Some((columns, values)) = matrix.row(i) {
                for (&j, &v) in columns.iter().zip(values) {
                    entries.push((dof(i), dof(j as usize), v));
                }
            }
        }
        Ok(entries)
    }

    /// Checks each named vector: this operator's mesh, `per_node` and
    /// location.
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
            let here = self.scratch[0].location();
            if v.location() != here {
                return Err(Error::arg(
                    name,
                    format!(
                        "is on {} but the operator's vectors on {here}: make it with \
                         DistOperator::vector, or move it with DistVector::to_device",
                        v.location()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Scratch copy `which` ← `x`, with current ghosts (a device-side copy
    /// on a device; then the ghost update).
    fn update_scratch(&mut self, which: usize, x: &DistVector<R>) -> Result<()> {
        let copied = self.scratch[which].local_mut().copy_from(x.local());
        self.mesh.ranks().agree(copied)?;
        self.scratch[which].ghost_update()
    }

    /// Agreement on the local results (errors in the serial numbering), then
    /// the ghosts' sums to the owners.
    fn finish(&self, result: Result<()>, out: &mut DistVector<R>) -> Result<()> {
        let result = result.map_err(|e| self.to_global(e));
        self.mesh.ranks().agree(result)?;
        out.ghost_accumulate()
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

/// A vector of `per_node` entries per vertex on `device`, or on the host.
fn new_vector<R: Real + Equivalence>(
    mesh: &Rc<DistMesh>,
    per_node: usize,
    device: Option<&Arc<Device>>,
) -> Result<DistVector<R>> {
    match device {
        Some(device) => DistVector::zeros_on(mesh, per_node, device),
        None => Ok(DistVector::zeros(mesh, per_node)),
    }
}

/// `d[i] ← b[picked[i]]` on the device (femquad's index gather).
fn pick_on_device<R: Real>(
    d: &mut DeviceVector<R>,
    b: &DeviceVector<R>,
    picked: &[u32],
) -> Result<()> {
    let indices = DeviceIndices::from_host(d.device(), picked)?;
    d.gather(b, &indices)
}
