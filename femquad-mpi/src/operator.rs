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
//! # Two parts per rank
//! A rank's cells are split once ([`CellSplit`]) into *interior* cells (no
//! vertex shared with another rank) and *boundary* cells (the rest), each
//! part bound as its own femquad [`Operator`]: the interior one over all
//! the rank's local vertices (it reads and writes the rank's local vectors
//! directly), the boundary one over the boundary cells' vertices only (its
//! inputs gathered from the local vectors, its results added into them:
//! `boundary_part.rs`). So `F_p = F_I + F_B`.
//!
//! # Overlap
//! The interior cells need no ghost value and contribute to no shared
//! vertex, so an application runs them while the halo is in flight:
//!
//! 1. `u` (and `v`) copied into the operator's scratch vectors and their
//!    shared owned entries gathered into staging vectors, on the device's
//!    compute queue, followed by a marker;
//! 2. the interior part enqueued on the compute queue right away, reading
//!    the caller's `u` and `v` and writing the result `r`, and submitted
//!    (`clFlush`);
//! 3. meanwhile the staged entries downloaded on the device's *transfer*
//!    queue (waiting for the marker, not for the interior part), the
//!    ghost-update messages exchanged on the host, and the received ghost
//!    values uploaded into the scratch vectors' ghost block on the
//!    transfer queue;
//! 4. a barrier on the compute queue waiting for the upload, then the
//!    boundary part on the scratch vectors, added into `r`, and the check
//!    of `r` for NaN (`F(u)`, the diagonal);
//! 5. the ghost accumulate of `r` (the ghosts' partial sums downloaded on
//!    the transfer queue, exchanged, uploaded and added to their owners).
//!
//! At a state `u` the operator updated last (unchanged since:
//! [`DistVector::version`], agreed on by the ranks so that all exchange the
//! same vectors) steps 1, 3 and 4 skip `u`: a linear solve's `J·v` copies,
//! exchanges and gathers only `v`; `F(u)` at such a state has no ghost
//! update at all.
//!
//! The commands, their queues and wait lists are recorded in a
//! [`Timeline`] ([`DistOperator::timeline`]), which also times the phases.
//! The ranks agree on failure ([`Ranks::agree`](crate::comm::Ranks::agree))
//! three times per application: before the update's messages (steps 1–3),
//! before the accumulate's (everything after the update's messages), and
//! at the end — never between the messages of one exchange, so a failing
//! rank ends every rank with its error instead of leaving one waiting.
//!
//! Only the ghost update is hidden: the accumulate needs the boundary
//! part's results, which need the update.
//! [`DistOperator::set_overlap`]`(false)` runs the same steps with the
//! interior part after the update's upload instead (step 2 after 3): the
//! same arithmetic, for measuring what the overlap hides. On the native
//! backend every step runs on the host in turn.
//!
//! # Order of additions
//! Each entry of the result is, in this order: the interior cells' sum
//! (in the order of the assembly: increasing cell with
//! [`Assembly::Deterministic`], as natively; atomic otherwise), plus the
//! boundary cells' sum (likewise), plus the neighbours' contributions in
//! increasing rank (the ghost accumulate). Owned entries are then the
//! serial result's up to the order of these additions; with deterministic
//! assembly bitwise the same from run to run at a fixed number of ranks
//! and partition, with or without overlap (the schedule changes, not the
//! arithmetic). On a device nothing but the halo crosses to the host (see
//! [`DistVector`]'s "Halo messages").

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

use crate::boundary_part::BoundaryPart;
use crate::cell_split::CellSplit;
use crate::dist_mesh::DistMesh;
use crate::layout::RankLayout;
use crate::timeline::{HostStep, Queue, Step, Timeline};
use crate::vector::DistVector;

/// A form bound on every rank's cells (see the [module
/// documentation](self)); P1 spaces (vertex dofs) only.
pub struct DistOperator<R: Real> {
    mesh: Rc<DistMesh>,
    n_comp: usize,
    /// The space over all of the rank's cells (`None` on a rank without
    /// cells), for output and error norms.
    space: Option<FunctionSpace>,
    /// The interior cells over all local vertices (`None` without any).
    interior: Option<Operator<R>>,
    /// The boundary cells over their vertices (`None` without any).
    boundary: Option<BoundaryPart<R>>,
    /// The device of an OpenCL backend (also on a rank without cells).
    device: Option<Arc<Device>>,
    /// Scratch copies of the inputs `u`, `v` with current ghosts, each with
    /// its own halo (they are updated together).
    scratch: [DistVector<R>; 2],
    /// The [`DistVector::version`] of the state `u` whose copy with current
    /// ghosts is in `scratch[0]` and gathered by the boundary part (`None`
    /// after anything else was written there): an application at the same
    /// state on every rank copies, exchanges and gathers only `v`.
    current_state: Option<u64>,
    /// Whether the interior part runs during the ghost update.
    overlap: bool,
    /// The device commands of the last application.
    timeline: Timeline,
}

impl<R: Real + Equivalence> DistOperator<R> {
    /// Collective: on every rank, the P1 space of `n_comp` components over
    /// each part of its cells (interior and boundary, see the [module
    /// documentation](self)), the form `make_form` makes on it (called
    /// once per part), bound on `backend`; overlap on.
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
        make_form: impl Fn(FunctionSpace) -> Result<Form<R>>,
        backend: &Backend,
    ) -> Result<Self> {
        let device = match backend {
            Backend::OpenCl { device, .. } => Some(device.clone()),
            Backend::Native(_) => None,
        };
        let scratch = mesh.ranks().agree((|| {
            Ok([
                new_vector(mesh, n_comp, device.as_ref())?,
                new_vector(mesh, n_comp, device.as_ref())?,
            ])
        })())?;
        let parts = (|| {
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
            let layout = mesh.layout();
            let Some(local_mesh) = layout.local_mesh()? else {
                return Ok((None, None, None));
            };
            let element = Element::lagrange(layout.dim, 1)?;
            let space_on = |m: Mesh| FunctionSpace::new(Arc::new(m), element, n_comp);
            let bind = |m: Mesh| Operator::new(make_form(space_on(m)?)?, backend);
            let split = CellSplit::new(layout);
            let interior = split.interior_mesh(layout)?.map(bind).transpose()?;
            let boundary = match split.boundary_mesh(layout)? {
                Some(m) => Some(BoundaryPart::new(
                    bind(m)?,
                    &split.boundary_vertices,
                    scratch[0].local(),
                )?),
                None => None,
            };
            Ok((Some(space_on(local_mesh)?), interior, boundary))
        })();
        let (space, interior, boundary) = mesh.ranks().agree(parts)?;
        Ok(DistOperator {
            mesh: mesh.clone(),
            n_comp,
            space,
            interior,
            boundary,
            device,
            scratch,
            current_state: None,
            overlap: true,
            timeline: Timeline::default(),
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

    /// The space over all of this rank's cells and local vertices (`None`
    /// on a rank without cells): for output and cellwise norms of local
    /// vectors.
    pub fn space(&self) -> Option<&FunctionSpace> {
        self.space.as_ref()
    }

    /// Whether the interior cells are integrated while the ghost update's
    /// messages travel (on by default; see the [module
    /// documentation](self#overlap)). Off, they are integrated after: the
    /// same results bit for bit, for measuring the overlap. Each rank's
    /// own setting (ranks may differ).
    pub fn set_overlap(&mut self, overlap: bool) {
        self.overlap = overlap;
    }

    /// The device commands of this rank's last application (`F(u)`,
    /// `J·v` or the diagonal), with their wait lists and events, and its
    /// messages' wall time: for checking the order of the halo staging and
    /// timing its phases ([`Timeline::phases`]).
    pub fn timeline(&self) -> &Timeline {
        &self.timeline
    }

    /// Collective: sets the assembly of every rank's operators.
    ///
    /// # Errors
    /// A rank's device error, on every rank.
    pub fn set_assembly(&mut self, assembly: Assembly) -> Result<()> {
        let result = (|| {
            if let Some(op) = &mut self.interior {
                op.set_assembly(assembly)?;
            }
            if let Some(b) = &mut self.boundary {
                b.op_mut().set_assembly(assembly)?;
            }
            Ok(())
        })();
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
        let ranks = self.mesh.ranks();
        self.current_state = None;
        let [sb, _] = &mut self.scratch;
        ranks.agree(sb.local_mut().copy_from(b.local()))?;
        sb.ghost_update()?;
        let (layout, nc) = (self.mesh.layout(), self.n_comp);
        let mut result = match &mut self.interior {
            Some(op) => op
                .set_time(t, sigma, sb.local())
                .map_err(|e| to_global(layout, nc, e, &|k| k)),
            None => Ok(()),
        };
        if let (Ok(()), Some(part)) = (&result, &mut self.boundary) {
            result = part.set_time(t, sigma, sb.local()).map_err(|e| {
                let vertices = part.vertices();
                to_global(layout, nc, e, &|k| vertices[k] as usize)
            });
        }
        ranks.agree(result)
    }

    /// The form of this rank's operator (`None` on a rank without cells):
    /// both parts of its cells bind the same form.
    pub fn form(&self) -> Option<&Form<R>> {
        match (&self.interior, &self.boundary) {
            (Some(op), _) => Some(op.form()),
            (None, Some(part)) => Some(part.op().form()),
            (None, None) => None,
        }
    }

    /// Collective: `r = F(u)`.
    ///
    /// # Errors
    /// On every rank: [`Error::NonFinite`] naming `u` and the global index
    /// of its first NaN or ±∞; [`Operator::apply`]'s other errors, with
    /// indices in the serial numbering (the dof of a non-finite result),
    /// [`Error::RankFailed`] on the ranks that did not fail;
    /// [`Error::InvalidArgument`] naming a vector on another mesh or in
    /// another place than the operator.
    pub fn apply(&mut self, u: &DistVector<R>, r: &mut DistVector<R>) -> Result<()> {
        self.check(&[("u", u, self.n_comp), ("r", r, self.n_comp)])?;
        femquad::vector::check_finite("u", u)?;
        self.run(
            u,
            None,
            r,
            |op, r| op.apply_unchecked(u.local(), r),
            |b, su, _, r| b.add_residual(su, r),
            |op, _, r| op.check_residual(r),
        )
    }

    /// Collective: `out = J(u)·v`.
    ///
    /// # Errors
    /// As [`DistOperator::apply`] but the checks for NaN; a physics without
    /// derivatives.
    pub fn jacobian_action(
        &mut self,
        u: &DistVector<R>,
        v: &DistVector<R>,
        out: &mut DistVector<R>,
    ) -> Result<()> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc), ("v", v, nc), ("out", out, nc)])?;
        self.jacobian_action_unchecked(u, v.local(), out)
    }

    /// Collective: `out = J(u)·v` for `v` given by this rank's entries
    /// (owned, then ghosts; its ghosts need not be current), e.g. a
    /// smoother's local work vector: one copy fewer than through a
    /// [`DistVector`].
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_action`]; [`Error::InvalidArgument`]
    /// naming `v` for another length than the rank's entries or another
    /// place.
    pub fn jacobian_action_local(
        &mut self,
        u: &DistVector<R>,
        v: &Vector<R>,
        out: &mut DistVector<R>,
    ) -> Result<()> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc), ("out", out, nc)])?;
        // v's length and place are checked where it is copied (`run`), and
        // agreed with the ghost update: no collective of its own
        self.jacobian_action_unchecked(u, v, out)
    }

    /// `out = J(u)·v` for checked arguments.
    fn jacobian_action_unchecked(
        &mut self,
        u: &DistVector<R>,
        v: &Vector<R>,
        out: &mut DistVector<R>,
    ) -> Result<()> {
        self.run(
            u,
            Some(v),
            out,
            |op, out| op.jacobian_action(u.local(), v, out),
            |b, su, sv, out| b.add_jacobian_action(su, sv, out),
            |_, _, _| Ok(()),
        )
    }

    /// Collective: the point-block diagonal of `J(u)` (`N_comp²` entries
    /// per vertex, as [`Operator::jacobian_diagonal`]) into `out` (made by
    /// [`DistOperator::vector_with`]`(N_comp²)`).
    ///
    /// # Errors
    /// As [`DistOperator::jacobian_action`]; those of
    /// [`Operator::check_diagonal`] (in the serial numbering) for a
    /// non-finite entry.
    pub fn jacobian_diagonal(&mut self, u: &DistVector<R>, out: &mut DistVector<R>) -> Result<()> {
        let nc = self.n_comp;
        self.check(&[("u", u, nc), ("out", out, nc * nc)])?;
        self.run(
            u,
            None,
            out,
            |op, out| op.jacobian_diagonal_unchecked(u.local(), out),
            |b, su, _, out| b.add_jacobian_diagonal(su, out),
            |op, su, out| op.check_diagonal(su, out),
        )
    }

    /// The steps of an application (see the [module
    /// documentation](self#overlap)): the state `u` and the direction `v`
    /// (if any) copied into the scratch vectors and their ghosts updated
    /// while (or, without overlap, before) `interior` writes `out` (zeros
    /// on a rank without interior cells), then `boundary` adds into `out`
    /// from the scratch vectors (given `u`'s only where the part must
    /// gather it again), `check` looks at `out` (given a part's operator
    /// and the scratch state), and `out` is accumulated. The state is
    /// copied, exchanged and gathered only if some rank's scratch does not
    /// hold it already ([`DistOperator`]'s `current_state`, agreed: every
    /// rank exchanges the same vectors). The ranks agree on failure three
    /// times: before the update's messages, before the accumulate's
    /// (everything in between) and at the end.
    fn run(
        &mut self,
        u: &DistVector<R>,
        v: Option<&Vector<R>>,
        out: &mut DistVector<R>,
        interior: impl FnOnce(&mut Operator<R>, &mut Vector<R>) -> Result<()>,
        boundary: impl FnOnce(
            &mut BoundaryPart<R>,
            Option<&Vector<R>>,
            &Vector<R>,
            &mut Vector<R>,
        ) -> Result<()>,
        check: impl FnOnce(&Operator<R>, &Vector<R>, &Vector<R>) -> Result<()>,
    ) -> Result<()> {
        let ranks = self.mesh.ranks();
        let state_current = ranks.all(self.current_state == Some(u.version()));
        self.current_state = None;
        let mut timeline = Timeline::default();
        let [su, sv] = &mut self.scratch;
        let mut updated: Vec<&mut DistVector<R>> = Vec::new();
        let mut copied = Ok(());
        if !state_current {
            copied = su.local_mut().copy_from(u.local());
            updated.push(su);
        }
        if let Some(v) = v {
            copied = copied
                .and_then(|()| sv.local().check_compatible("the rank's entries", "v", v))
                .and_then(|()| sv.local_mut().copy_from(v));
            updated.push(sv);
        }
        timeline.stamp(HostStep::Copy);
        let device = self.device.clone();
        let part = &mut self.interior;
        let run_interior = |timeline: &mut Timeline| -> Result<()> {
            match part {
                Some(op) => interior(op, out.local_mut())?,
                None => out.fill(0.0)?,
            }
            out.local().flush()?;
            mark(device.as_ref(), Step::Interior, timeline)?;
            timeline.stamp(HostStep::InteriorEnqueue);
            Ok(())
        };
        let updated = if updated.is_empty() {
            Ok(copied.and_then(|()| run_interior(&mut timeline)))
        } else if self.overlap {
            DistVector::update_ghosts(&mut updated, copied, run_interior, &mut timeline)
        } else {
            DistVector::update_ghosts(&mut updated, copied, |_| Ok(()), &mut timeline)
                .map(|r| r.and_then(|()| run_interior(&mut timeline)))
        }?;
        let [su, sv] = &self.scratch;
        let gather_u = (!state_current).then(|| su.local());
        let local = updated
            .and_then(|()| match &mut self.boundary {
                Some(b) => boundary(b, gather_u, sv.local(), out.local_mut()),
                None => Ok(()),
            })
            .and_then(|()| mark(self.device.as_ref(), Step::Boundary, &mut timeline));
        timeline.stamp(HostStep::BoundaryEnqueue);
        let any_op = self
            .interior
            .as_ref()
            .or(self.boundary.as_ref().map(|b| b.op()));
        let local = local
            .and_then(|()| match any_op {
                Some(op) => check(op, su.local(), out.local()),
                None => Ok(()),
            })
            .map_err(|e| to_global(self.mesh.layout(), self.n_comp, e, &|k| k));
        timeline.stamp(HostStep::Check);
        let result = out.accumulate(local, &mut timeline);
        self.timeline = timeline;
        if result.is_ok() {
            self.current_state = Some(u.version());
        }
        result
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
}

/// `e` with the indices (dof, node) of a part's vector replaced by the
/// serial ones: part vertex `k` is local vertex `local(k)` of `layout`,
/// `nc` entries per vertex (the identity for the rank's local vectors).
fn to_global(layout: &RankLayout, nc: usize, e: Error, local: &dyn Fn(usize) -> usize) -> Error {
    let node = |k: usize| layout.global_vertices[local(k)] as usize;
    let dof = |d: usize| node(d / nc) * nc + d % nc;
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
            node: n,
            component,
            value,
        } => Error::NonFiniteResult {
            quantity,
            physics,
            dof: dof(d),
            node: node(n),
            component,
            value,
        },
        other => other,
    }
}

/// Records a marker `step` on `device`'s compute queue (nothing on the
/// host).
fn mark(device: Option<&Arc<Device>>, step: Step, timeline: &mut Timeline) -> Result<()> {
    if let Some(d) = device {
        timeline.enqueue(d, step, Queue::Compute, &[], |_| d.compute_marker())?;
    }
    Ok(())
}

/// A vector of `per_node` entries per vertex on `device`, or on the host.
fn new_vector<R: Real + Equivalence>(
    mesh: &Rc<DistMesh>,
    per_node: usize,
    device: Option<&Arc<Device>>,
) -> Result<DistVector<R>> {
    match device {
        Some(device) => DistVector::zeros_on(mesh, per_node, device),
        None => DistVector::zeros(mesh, per_node),
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
