//! [`DistVector`]: a vector over the vertices of a [`DistMesh`], each rank
//! holding its owned and ghost entries in one femquad [`Vector`] — on the
//! host, or on the rank's OpenCL device; femquad's solvers run on it through
//! [`VectorOps`].
//!
//! # Owned and ghost entries
//! `per_node` entries per local vertex, in the layout's local numbering
//! (owned vertices first): entry `l·per_node + c` is global entry
//! `global_vertices[l]·per_node + c`. Owned entries are the vector's
//! values; ghost entries are copies, current only after
//! [`DistVector::ghost_update`] (the owner's values to every ghost), or
//! partial sums to add to the owner by [`DistVector::ghost_accumulate`].
//! Elementwise operations act on all local entries; reductions read owned
//! entries only.
//!
//! # Reproducible reductions
//! Each rank sums the products of its owned entries in a fixed order — on
//! the host in local order in `f64`, on a device by femquad's fixed-order
//! device reduction over the owned prefix
//! ([`DeviceVector::dots_prefix`](femquad::opencl::DeviceVector::dots_prefix));
//! the partial sums of all ranks are all-gathered and summed in rank order
//! on every rank. So every rank gets the same bits, and a reduction is
//! bitwise reproducible from run to run at a fixed number of ranks,
//! partition and location (not across numbers of ranks: the order of
//! additions changes).
//!
//! # Halo messages
//! Tagged by direction ([`TAG_UPDATE`] owner → ghosts, [`TAG_ACCUMULATE`]
//! ghosts → owner), one message per neighbour and direction, sent
//! non-blocking while the receives are posted; the owner adds received
//! contributions in increasing neighbour rank, after its own (a fixed order,
//! the same bits on the host and on a device).
//!
//! On a device only the halo crosses to the host (OpenCL buffers cannot go
//! to MPI), through the device's transfer queue
//! ([`Device::transfer_queue`]), ordered with the compute queue by events
//! (see [`Timeline`]), into and out of pinned host memory
//! ([`PinnedHost`](femquad::opencl::PinnedHost): page-locked on NVIDIA,
//! the MPI messages' buffers themselves, `HostBuffer` in `host_buffer.rs`): a ghost update
//! gathers every neighbour's send entries into one small device vector
//! (one index gather on the compute queue, the neighbours' entries
//! consecutive as in the messages) and downloads it once gathered (one
//! non-blocking transfer after a marker; the host waits once), exchanges
//! it, and uploads the received values straight into the ghost block (the
//! ghosts are the last local entries, each neighbour's consecutive;
//! non-blocking), after which the compute queue waits for the upload (a
//! barrier); a ghost accumulate downloads the ghost block the same way,
//! uploads the received contributions as one block and adds each
//! neighbour's to the owned entries (one scatter-add a neighbour, in
//! increasing rank). The next exchange's wait
//! also covers the uploads of the one before (the host does not overwrite
//! pinned memory a transfer still reads). Bytes read from and written to the device
//! per update or accumulate: `(Σ ghosts + Σ shared owned)·per_node·size_of::<R>()`
//! in total, nothing else.
//!
//! # Failure
//! A ghost update or accumulate agrees on failure
//! ([`Ranks::agree`](crate::comm::Ranks::agree)) once before its messages
//! (every step that may fail before them) and once at the end (the
//! uploads after them).

use std::cell::{RefCell, RefMut};
use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;

use femquad::backend::{IndexSet, Location, Vector};
use femquad::opencl::{Device, DeviceIndices, DeviceVector};
use femquad::vector::{CgFusion, VectorOps};
use femquad::{Error, Precision, Real, Result};

use crate::comm::Ranks;
use crate::dist_mesh::DistMesh;
use crate::host_buffer::HostBuffer;
use crate::timeline::{HostStep, Queue, Step, Timeline};

/// Tag of ghost updates (owner → ghosts).
pub const TAG_UPDATE: i32 = 1;
/// Tag of ghost accumulations (ghosts → owner).
pub const TAG_ACCUMULATE: i32 = 2;

/// A vector over a [`DistMesh`]: `per_node` entries per vertex, owned and
/// ghost entries on each rank, on the host or a device (see the [module
/// documentation](self)).
pub struct DistVector<R: Real> {
    mesh: Rc<DistMesh>,
    per_node: usize,
    values: Versioned<Vector<R>>,
    /// The halo's indices and staging buffers, shared by the vectors of the
    /// same mesh, `per_node` and location (made by `zeros_like`).
    halo: Rc<Halo<R>>,
}

/// A value with a version that changes on every mutable access: read
/// through `Deref`, written through [`Versioned::get_mut`] only, so every
/// write is seen. Versions come from one counter of the process: two
/// values never share one, so an equal version means the same value,
/// unchanged.
struct Versioned<T> {
    value: T,
    version: u64,
}

impl<T> Versioned<T> {
    fn new(value: T) -> Self {
        Versioned {
            value,
            version: next_version(),
        }
    }

    /// The value, to be written: a new version.
    fn get_mut(&mut self) -> &mut T {
        self.version = next_version();
        &mut self.value
    }

    fn into_inner(self) -> T {
        self.value
    }
}

impl<T> std::ops::Deref for Versioned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// The next version of the process's counter.
fn next_version() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// The entries this rank exchanges with one neighbour, and their staging
/// on the device.
struct Link {
    rank: usize,
    /// Owned entries the neighbour holds as ghosts (local entry indices).
    shared: Vec<u32>,
    /// Their positions in the halo's shared staging (the links' ranges
    /// tile it in link order).
    shared_at: Range<usize>,
    /// The ghost entries the neighbour owns: positions in the halo's ghost
    /// block (local entry `Halo::ghost_start + i` for position `i`).
    ghosts: Range<usize>,
    /// On a device: the shared entries' indices there.
    device: Option<DeviceIndices>,
}

/// The shared entries of all links on the device, in the order of the
/// host staging (each link's at its `shared_at`): one gather and one
/// transfer per exchange, whatever the number of neighbours.
struct DeviceShared<R: Real> {
    /// Every link's shared entries, concatenated in link order.
    indices: DeviceIndices,
    /// As many entries: the packed owned entries, or the received sums.
    buf: DeviceVector<R>,
}

/// The halo of one mesh, `per_node` and location: a link per neighbour
/// (increasing rank) and the host staging of the messages.
///
/// The ghost entries are one block at the end of the local entries, each
/// neighbour's a consecutive range of it in increasing rank (the layout
/// orders ghosts by owner rank): a ghost update writes the whole block and
/// a ghost accumulate reads it, one transfer each.
struct Halo<R: Real> {
    /// The first ghost entry, `n_owned·per_node`.
    ghost_start: usize,
    links: RefCell<Vec<Link>>,
    /// On a device: the links' shared entries there (`None` on the host).
    device: RefCell<Option<DeviceShared<R>>>,
    /// Host staging of every link's shared entries (at `Link::shared_at`):
    /// the owned values sent, or the sums received.
    shared_host: RefCell<HostBuffer<R>>,
    /// Host staging of the ghost block: received owner values, or the
    /// ghosts' partial sums.
    ghost_host: RefCell<HostBuffer<R>>,
}

/// A [`Halo`]'s links and host staging, borrowed for one exchange.
struct Staging<'a, R: Real> {
    ghost_start: usize,
    links: RefMut<'a, Vec<Link>>,
    device: RefMut<'a, Option<DeviceShared<R>>>,
    shared_host: RefMut<'a, HostBuffer<R>>,
    ghost_host: RefMut<'a, HostBuffer<R>>,
}

impl<R: Real> Staging<'_, R> {
    /// Waits for the device's transfers in flight that use the host
    /// staging (one wait per buffer; none on the host).
    ///
    /// # Errors
    /// A transfer's failure.
    fn wait(&mut self) -> Result<()> {
        self.shared_host.wait()?;
        self.ghost_host.wait()
    }
}

impl<R: Real> Halo<R> {
    /// The links and staging for one exchange.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `vectors` if an exchange of
    /// another vector with this halo is under way (vectors made from each
    /// other by `zeros_like` updated together).
    fn staging(&self) -> Result<Staging<'_, R>> {
        let busy = |_| {
            Error::arg(
                "vectors",
                "two vectors sharing their halo (one made from the other by zeros_like) \
                 exchanged together: make one with DistVector::zeros_on",
            )
        };
        Ok(Staging {
            ghost_start: self.ghost_start,
            links: self.links.try_borrow_mut().map_err(busy)?,
            device: self.device.try_borrow_mut().map_err(busy)?,
            shared_host: self.shared_host.try_borrow_mut().map_err(busy)?,
            ghost_host: self.ghost_host.try_borrow_mut().map_err(busy)?,
        })
    }

    /// The halo of host vectors.
    ///
    /// # Errors
    /// [`Error::Internal`] if the layout's ghosts are not grouped by owner
    /// ([`RankLayout::ghost_ranges`](crate::layout::RankLayout::ghost_ranges)).
    fn host(mesh: &DistMesh, per_node: usize) -> Result<Self> {
        let layout = mesh.layout();
        let k = per_node as u32;
        let ghost_start = layout.n_owned * per_node;
        let ghost_ranges = layout.ghost_ranges()?;
        let mut shared_next = 0;
        let mut links = Vec::with_capacity(layout.neighbours.len());
        for (n, vertices) in layout.neighbours.iter().zip(ghost_ranges) {
            let at = (vertices.start - layout.n_owned) * per_node;
            let shared_at = shared_next..shared_next + n.shared_owned.len() * per_node;
            shared_next = shared_at.end;
            links.push(Link {
                rank: n.rank,
                shared: n
                    .shared_owned
                    .iter()
                    .flat_map(|&l| (0..k).map(move |c| l * k + c))
                    .collect(),
                shared_at,
                ghosts: at..at + vertices.len() * per_node,
                device: None,
            });
        }
        Ok(Halo {
            ghost_start,
            shared_host: RefCell::new(HostBuffer::Plain(vec![R::ZERO; shared_next])),
            ghost_host: RefCell::new(HostBuffer::Plain(vec![
                R::ZERO;
                (layout.n_local() - layout.n_owned)
                    * per_node
            ])),
            links: RefCell::new(links),
            device: RefCell::new(None),
        })
    }

    /// The halo of vectors on `device`: the host's, with the shared
    /// entries' indices and the staging vectors uploaded, and pinned host
    /// staging ([`Device::pinned_host`]).
    fn on(mesh: &DistMesh, per_node: usize, device: &Arc<Device>) -> Result<Self> {
        let halo = Halo::host(mesh, per_node)?;
        for buffer in [&halo.shared_host, &halo.ghost_host] {
            let mut buffer = buffer.borrow_mut();
            let len = buffer.host()?.len();
            *buffer = HostBuffer::Pinned(device.pinned_host(len)?);
        }
        let mut all = Vec::new();
        for link in halo.links.borrow_mut().iter_mut() {
            link.device = Some(DeviceIndices::from_host(device, &link.shared)?);
            all.extend_from_slice(&link.shared);
        }
        *halo.device.borrow_mut() = Some(DeviceShared {
            indices: DeviceIndices::from_host(device, &all)?,
            buf: DeviceVector::zeros(device, all.len())?,
        });
        Ok(halo)
    }
}

impl<R: Real + Equivalence> DistVector<R> {
    /// Zeros on the host, `per_node` entries per vertex (`N_comp` for a
    /// field).
    ///
    /// # Errors
    /// [`Error::Internal`] if the mesh's layout does not group its ghosts
    /// by owner rank (as [`crate::layout`] makes it).
    pub fn zeros(mesh: &Rc<DistMesh>, per_node: usize) -> Result<Self> {
        Ok(DistVector {
            mesh: mesh.clone(),
            per_node,
            values: Versioned::new(Vector::host_zeros(mesh.layout().n_local() * per_node)),
            halo: Rc::new(Halo::host(mesh, per_node)?),
        })
    }

    /// Zeros on `device` (owned, then ghost entries in one device vector),
    /// with the halo's index sets and staging vectors uploaded once.
    ///
    /// # Errors
    /// Device allocation and kernel build errors (e.g. [`Error::NoFp64`]).
    pub fn zeros_on(mesh: &Rc<DistMesh>, per_node: usize, device: &Arc<Device>) -> Result<Self> {
        Ok(DistVector {
            mesh: mesh.clone(),
            per_node,
            values: Versioned::new(Vector::device_zeros(
                device,
                mesh.layout().n_local() * per_node,
            )?),
            halo: Rc::new(Halo::on(mesh, per_node, device)?),
        })
    }

    /// This rank's entries taken from a global vector `global`
    /// (`n_global_vertices·per_node` entries in the serial numbering), ghosts
    /// included, on the host; every rank passes the same vector (e.g. values
    /// interpolated on the global mesh and broadcast).
    /// [`DistVector::to_device`] moves it to a device.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `global` for a wrong length.
    pub fn from_global(mesh: &Rc<DistMesh>, per_node: usize, global: &[R]) -> Result<Self> {
        let n = mesh.layout().n_global_vertices * per_node;
        if global.len() != n {
            return Err(Error::arg(
                "global",
                format!(
                    "expected {n} entries (global vertices × {per_node}), got {}",
                    global.len()
                ),
            ));
        }
        let values: Vec<R> = mesh
            .layout()
            .global_vertices
            .iter()
            .flat_map(|&v| {
                let at = v as usize * per_node;
                global[at..at + per_node].iter().copied()
            })
            .collect();
        let mut x = DistVector::zeros(mesh, per_node)?;
        *x.values.get_mut() = Vector::Host(values);
        Ok(x)
    }

    /// A copy on `device` (one upload of the local entries).
    ///
    /// # Errors
    /// Those of [`DistVector::zeros_on`].
    pub fn to_device(&self, device: &Arc<Device>) -> Result<Self> {
        let mut x = DistVector::zeros_on(&self.mesh, self.per_node, device)?;
        *x.values.get_mut() = self.values.to_device(device)?;
        Ok(x)
    }

    /// A copy in the same place (a device-side copy on a device).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn try_clone(&self) -> Result<Self> {
        let mut x = self.zeros_like()?;
        x.values.get_mut().copy_from(&self.values)?;
        Ok(x)
    }

    /// Collective: the owned entries of all ranks in the serial numbering,
    /// on rank 0 (`None` elsewhere) — to compare with a serial result or
    /// write output (a download of the owned entries on a device).
    ///
    /// # Errors
    /// A rank's device read error, on every rank.
    pub fn gather_to_root(&self) -> Result<Option<Vec<R>>> {
        const TAG_GATHER: i32 = 3;
        let owned = self.mesh.ranks().agree(self.owned_to_host())?;
        let layout = self.mesh.layout();
        let comm = self.mesh.ranks().comm();
        let k = self.per_node;
        if layout.rank != 0 {
            let root = comm.process_at_rank(0);
            root.send_with_tag(&layout.global_vertices[..layout.n_owned], TAG_GATHER);
            root.send_with_tag(&owned[..], TAG_GATHER);
            return Ok(None);
        }
        let mut global = vec![R::ZERO; layout.n_global_vertices * k];
        let mut place = |vertices: &[u32], values: &[R]| {
            for (&v, chunk) in vertices.iter().zip(values.chunks_exact(k)) {
                global[v as usize * k..(v as usize + 1) * k].copy_from_slice(chunk);
            }
        };
        place(&layout.global_vertices[..layout.n_owned], &owned);
        for q in 1..layout.n_ranks {
            let from = comm.process_at_rank(q as i32);
            let (vertices, _) = from.receive_vec_with_tag::<u32>(TAG_GATHER);
            let (values, _) = from.receive_vec_with_tag::<R>(TAG_GATHER);
            place(&vertices, &values);
        }
        Ok(Some(global))
    }

    /// The distributed mesh.
    pub fn mesh(&self) -> &Rc<DistMesh> {
        &self.mesh
    }

    /// Entries per vertex.
    pub fn per_node(&self) -> usize {
        self.per_node
    }

    /// Where this rank's entries live.
    pub fn location(&self) -> Location {
        self.values.location()
    }

    /// The number of this rank's entries (owned and ghosts).
    pub fn n_local(&self) -> usize {
        self.values.len()
    }

    /// The number of this rank's owned entries (the first ones).
    pub fn n_owned(&self) -> usize {
        self.mesh.layout().n_owned * self.per_node
    }

    /// This rank's entries (owned, then ghosts) as a femquad vector, e.g.
    /// for femquad's operators on the rank's cells.
    pub fn local(&self) -> &Vector<R> {
        &self.values
    }

    /// This rank's entries, mutable.
    pub fn local_mut(&mut self) -> &mut Vector<R> {
        self.values.get_mut()
    }

    /// The version of this rank's entries: a number that changes with
    /// every mutable access to them ([`DistVector::local_mut`], the vector
    /// operations, the exchanges), never the same for two vectors. An
    /// equal version means the same entries, unchanged (e.g. a state whose
    /// ghosts an operator has updated already).
    pub fn version(&self) -> u64 {
        self.values.version
    }

    /// This rank's entries (owned, then ghosts), the vector consumed.
    pub fn into_local(self) -> Vector<R> {
        self.values.into_inner()
    }

    /// A host copy of this rank's entries, owned then ghosts (a download on
    /// a device).
    ///
    /// # Errors
    /// Device read errors.
    pub fn local_to_host(&self) -> Result<Vec<R>> {
        self.values.to_host()
    }

    /// A host copy of this rank's owned entries (a download on a device).
    ///
    /// # Errors
    /// Device read errors.
    pub fn owned_to_host(&self) -> Result<Vec<R>> {
        let n = self.n_owned();
        match &*self.values {
            Vector::Host(v) => Ok(v[..n].to_vec()),
            Vector::Device(d) => {
                let mut all = d.to_host()?;
                all.truncate(n);
                Ok(all)
            }
        }
    }

    /// Overwrites this rank's entries (owned, then ghosts) with `values`
    /// (an upload on a device).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `values` for another length than
    /// the rank's entries; device errors.
    pub fn set_local_from_host(&mut self, values: &[R]) -> Result<()> {
        if values.len() != self.values.len() {
            return Err(Error::arg(
                "values",
                format!(
                    "expected this rank's {} entries (owned and ghosts), got {}",
                    self.values.len(),
                    values.len()
                ),
            ));
        }
        self.values.get_mut().copy_from_host(values)
    }

    /// An index set of local entries placed where this vector lives (e.g.
    /// its Dirichlet entries).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn index_set(&self, local_entries: &[u32]) -> Result<IndexSet> {
        IndexSet::located_like(&self.values, local_entries)
    }

    /// Collective: every ghost entry gets its owner's value.
    ///
    /// # Errors
    /// A rank's device error, on every rank.
    pub fn ghost_update(&mut self) -> Result<()> {
        Self::ghost_update_while(&mut [self], || Ok(()))
    }

    /// Collective: [`DistVector::ghost_update`] of each of `vectors`,
    /// calling `during` once their shared owned entries are staged (on a
    /// device: gathered, before they are downloaded) and before the
    /// messages are exchanged: work that `during` enqueues on the device's
    /// compute queue (and submits: [`Vector::flush`]) runs while the
    /// entries are downloaded and the messages travel (see [`Timeline`]).
    /// `during` must not touch the vectors. Each vector needs a halo of its
    /// own: two vectors where one was made from the other by `zeros_like`
    /// share it, an error here.
    ///
    /// # Errors
    /// On every rank: a rank's device error, `during`'s error,
    /// [`Error::InvalidArgument`] naming `vectors` if two share their halo
    /// or there are none.
    pub fn ghost_update_while(
        vectors: &mut [&mut Self],
        during: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let Some(mesh) = vectors.first().map(|v| v.mesh.clone()) else {
            return Err(Error::arg("vectors", "a ghost update of no vector"));
        };
        let after = Self::update_ghosts(vectors, Ok(()), |_| during(), &mut Timeline::default())?;
        mesh.ranks().agree(after)
    }

    /// The ghost update of `vectors` (see
    /// [`DistVector::ghost_update_while`]; `during` gets the timeline) after
    /// the caller's local result `pending`, with one agreement on failure,
    /// before the messages: the steps that follow them (the uploads of the
    /// ghosts) return their local result, `Ok(Err(e))` on a rank where one
    /// failed, which the caller must agree on ([`Ranks::agree`]) before it
    /// returns or sends a message. The device commands are recorded in
    /// `timeline`.
    ///
    /// # Errors
    /// The agreed failure of a step before the messages, on every rank.
    ///
    /// [`Ranks::agree`]: crate::comm::Ranks::agree
    pub(crate) fn update_ghosts(
        vectors: &mut [&mut Self],
        pending: Result<()>,
        during: impl FnOnce(&mut Timeline) -> Result<()>,
        timeline: &mut Timeline,
    ) -> Result<Result<()>> {
        let Some(mesh) = vectors.first().map(|v| v.mesh.clone()) else {
            return Err(Error::arg("vectors", "a ghost update of no vector"));
        };
        let halos: Vec<Rc<Halo<R>>> = vectors.iter().map(|v| v.halo.clone()).collect();
        let prepared = pending.and_then(|()| {
            let mut staging = halos
                .iter()
                .map(|h| h.staging())
                .collect::<Result<Vec<_>>>()?;
            let staged = vectors
                .iter()
                .zip(&mut staging)
                .map(|(v, s)| stage_shared(&v.values, s, timeline))
                .collect::<Result<Vec<_>>>()?;
            timeline.stamp(HostStep::Gathers);
            during(timeline)?;
            for ((v, s), &at) in vectors.iter().zip(&mut staging).zip(&staged) {
                download_shared(&v.values, s, at, timeline)?;
            }
            // one wait for all downloads (and the last exchange's uploads)
            for s in &mut staging {
                s.wait()?;
            }
            timeline.stamp(HostStep::DownloadWait);
            Ok((staging, staged))
        });
        let (mut staging, staged) = mesh.ranks().agree(prepared)?;
        timeline.stamp(HostStep::Agree);
        for s in &mut staging {
            let Staging {
                links,
                shared_host,
                ghost_host,
                ..
            } = s;
            // waited for before the agreement: no OpenCL call, no failure
            let (shared, ghosts) = (shared_host.host()?, ghost_host.host()?);
            let send: Vec<&[R]> = links.iter().map(|l| &shared[l.shared_at.clone()]).collect();
            let mut recv = split(ghosts, links.iter().map(|l| l.ghosts.len()));
            exchange(mesh.ranks(), TAG_UPDATE, links, &send, &mut recv);
        }
        timeline.stamp(HostStep::Messages);
        let uploaded = vectors
            .iter_mut()
            .zip(&mut staging)
            .zip(&staged)
            .try_for_each(|((v, s), &at)| upload_ghosts(v.values.get_mut(), s, at, timeline));
        timeline.stamp(HostStep::UploadEnqueue);
        Ok(uploaded)
    }

    /// Collective: every ghost entry is added to its owner's entry (own
    /// value first, then the neighbours' in increasing rank); ghost entries
    /// are left as they were (not current: call
    /// [`DistVector::ghost_update`] to make them so).
    ///
    /// # Errors
    /// A rank's device error, on every rank.
    pub fn ghost_accumulate(&mut self) -> Result<()> {
        self.accumulate(Ok(()), &mut Timeline::default())
    }

    /// [`DistVector::ghost_accumulate`] after the caller's local result
    /// `pending` (of steps not agreed on yet), agreed on together with the
    /// staging of the ghost entries, before the messages; the device
    /// commands recorded in `timeline`.
    ///
    /// # Errors
    /// On every rank: `pending`'s error or a rank's device error.
    pub(crate) fn accumulate(
        &mut self,
        pending: Result<()>,
        timeline: &mut Timeline,
    ) -> Result<()> {
        let ranks = self.mesh.ranks();
        let halo = self.halo.clone();
        let prepared = pending.and_then(|()| {
            let mut s = halo.staging()?;
            let staged = stage_ghosts(&self.values, &mut s, timeline)?;
            // one wait for the download (and the last exchange's uploads)
            s.wait()?;
            Ok((s, staged))
        });
        timeline.stamp(HostStep::AccumulateDownloadWait);
        let (mut s, staged) = ranks.agree(prepared)?;
        timeline.stamp(HostStep::AccumulateAgree);
        {
            let Staging {
                links,
                shared_host,
                ghost_host,
                ..
            } = &mut s;
            // waited for before the agreement: no OpenCL call, no failure
            let (shared, ghosts) = (shared_host.host()?, ghost_host.host()?);
            let send: Vec<&[R]> = links.iter().map(|l| &ghosts[l.ghosts.clone()]).collect();
            let mut recv = split(shared, links.iter().map(|l| l.shared_at.len()));
            exchange(ranks, TAG_ACCUMULATE, links, &send, &mut recv);
        }
        timeline.stamp(HostStep::AccumulateMessages);
        let added = add_shared(self.values.get_mut(), &mut s, staged, timeline);
        timeline.stamp(HostStep::SumsEnqueue);
        let agreed = ranks.agree(added);
        timeline.stamp(HostStep::FinalAgree);
        agreed
    }

    /// The reproducible sum over ranks of each rank's `partial`s (see the
    /// [module documentation](self#reproducible-reductions)).
    fn sum_over_ranks(&self, partials: &[f64]) -> Vec<f64> {
        let all = self.mesh.ranks().all_gather_f64s(partials);
        let m = partials.len();
        (0..m)
            .map(|j| {
                all.chunks_exact(m.max(1))
                    .map(|p| p[j])
                    .fold(0.0, |s, x| s + x)
            })
            .collect()
    }

    /// This rank's partial sums `Σ_{owned i} x_i v_i` for each `v` in `vs`.
    fn local_dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        let n = self.n_owned();
        match &*self.values {
            Vector::Host(x) => vs
                .iter()
                .map(|v| match &*v.values {
                    Vector::Host(y) => Ok(x[..n]
                        .iter()
                        .zip(&y[..n])
                        .fold(0.0, |s, (&a, &b)| s + a.to_f64() * b.to_f64())),
                    other => Err(misplaced(other.location(), self.location())),
                })
                .collect(),
            Vector::Device(x) => {
                let ys = vs
                    .iter()
                    .map(|v| {
                        v.values
                            .as_device()
                            .ok_or_else(|| misplaced(v.location(), self.location()))
                    })
                    .collect::<Result<Vec<_>>>()?;
                x.dots_prefix(&ys, n)
            }
        }
    }
}

/// The error for an operand in another place than the receiver.
fn misplaced(operand: Location, receiver: Location) -> Error {
    Error::arg(
        "vs",
        format!("is on {operand} but the vector it is combined with on {receiver}"),
    )
}

/// The device part of a device vector's halo (or a link's).
fn on_device<T>(part: Option<&mut T>) -> Result<&mut T> {
    part.ok_or_else(|| Error::internal("a device vector's halo has no device staging"))
}

/// Sends, to each neighbour of `links`, its entries `send`, and receives
/// into `recv` what each neighbour sent (in neighbour order).
fn exchange<R: Real + Equivalence>(
    ranks: &Ranks,
    tag: i32,
    links: &[Link],
    send: &[&[R]],
    recv: &mut [&mut [R]],
) {
    let comm = ranks.comm();
    mpi::request::scope(|scope| {
        let requests: Vec<_> = links
            .iter()
            .zip(send)
            .filter(|(_, b)| !b.is_empty())
            .map(|(l, b)| {
                comm.process_at_rank(l.rank as i32)
                    .immediate_send_with_tag(scope, *b, tag)
            })
            .collect();
        for (l, r) in links.iter().zip(recv.iter_mut()) {
            if !r.is_empty() {
                comm.process_at_rank(l.rank as i32)
                    .receive_into_with_tag(&mut r[..], tag);
            }
        }
        for request in requests {
            request.wait();
        }
    });
}

/// `block` split into consecutive slices of `lens` (the links' ranges of
/// the ghost block or of the shared staging, which tile it in link order:
/// [`Halo::host`]).
fn split<R: Real>(block: &mut [R], lens: impl Iterator<Item = usize>) -> Vec<&mut [R]> {
    let mut rest = block;
    lens.map(|n| {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(n);
        rest = tail;
        head
    })
    .collect()
}

/// Stages the shared owned entries of `values` for a ghost update: on the
/// host copied into the host staging; on a device gathered into each
/// link's staging vector on the compute queue, followed by the marker
/// [`Step::SharedStaged`], whose index in `timeline` is returned (`None`
/// on the host or without neighbours).
fn stage_shared<R: Real>(
    values: &Vector<R>,
    s: &mut Staging<'_, R>,
    timeline: &mut Timeline,
) -> Result<Option<usize>> {
    match values {
        Vector::Host(v) => {
            let shared = s.shared_host.host()?;
            for link in s.links.iter() {
                for (b, &i) in shared[link.shared_at.clone()].iter_mut().zip(&link.shared) {
                    *b = v[i as usize];
                }
            }
            Ok(None)
        }
        Vector::Device(_) if s.links.is_empty() => Ok(None),
        Vector::Device(v) => {
            let d = on_device(s.device.as_mut())?;
            if !d.indices.is_empty() {
                d.buf.gather(v, &d.indices)?;
            }
            let device = v.device();
            timeline
                .enqueue(device, Step::SharedStaged, Queue::Compute, &[], |_| {
                    device.compute_marker()
                })
                .map(Some)
        }
    }
}

/// Downloads the links' staged shared entries (one block) into the pinned
/// staging on the transfer queue, after the staging (`staged`, from
/// [`stage_shared`]), without waiting ([`Staging::wait`]); nothing on the
/// host.
fn download_shared<R: Real>(
    values: &Vector<R>,
    s: &mut Staging<'_, R>,
    staged: Option<usize>,
    timeline: &mut Timeline,
) -> Result<()> {
    let (Vector::Device(v), Some(staged)) = (values, staged) else {
        return Ok(());
    };
    let pinned = s.shared_host.pinned()?;
    let d = on_device(s.device.as_mut())?;
    if !d.indices.is_empty() {
        let all = 0..d.indices.len();
        timeline.enqueue(
            v.device(),
            Step::SharedDownload,
            Queue::Transfer,
            &[staged],
            |after| d.buf.read_range_after(0, pinned, all, after),
        )?;
    }
    Ok(())
}

/// Writes the received ghost block into the ghost entries of `values`: on
/// the host copied; on a device uploaded on the transfer queue (after the
/// staging `staged`, so after every command that wrote the vector before)
/// and followed by the compute queue's barrier [`Step::GhostsIn`], which
/// waits for the upload.
fn upload_ghosts<R: Real>(
    values: &mut Vector<R>,
    s: &mut Staging<'_, R>,
    staged: Option<usize>,
    timeline: &mut Timeline,
) -> Result<()> {
    match (values, staged) {
        (Vector::Host(v), _) => {
            v[s.ghost_start..].copy_from_slice(s.ghost_host.host()?);
            Ok(())
        }
        (Vector::Device(v), Some(staged)) if v.len() > s.ghost_start => {
            let device = v.device().clone();
            let block = s.ghost_host.pinned()?;
            let all = 0..block.len();
            let upload = timeline.enqueue(
                &device,
                Step::GhostUpload,
                Queue::Transfer,
                &[staged],
                |after| v.write_range_after(s.ghost_start, block, all, after),
            )?;
            timeline.enqueue(
                &device,
                Step::GhostsIn,
                Queue::Compute,
                &[upload],
                |after| device.compute_waits_for(after),
            )?;
            Ok(())
        }
        (Vector::Device(_), _) => Ok(()),
    }
}

/// Stages the ghost block of `values` for a ghost accumulate: on the host
/// copied; on a device downloaded on the transfer queue after the marker
/// [`Step::ResultStaged`] (every command enqueued before), whose index is
/// returned (`None` on the host or without neighbours).
fn stage_ghosts<R: Real>(
    values: &Vector<R>,
    s: &mut Staging<'_, R>,
    timeline: &mut Timeline,
) -> Result<Option<usize>> {
    match values {
        Vector::Host(v) => {
            s.ghost_host.host()?.copy_from_slice(&v[s.ghost_start..]);
            Ok(None)
        }
        Vector::Device(_) if s.links.is_empty() => Ok(None),
        Vector::Device(v) => {
            let device = v.device();
            let staged =
                timeline.enqueue(device, Step::ResultStaged, Queue::Compute, &[], |_| {
                    device.compute_marker()
                })?;
            if v.len() > s.ghost_start {
                let block = s.ghost_host.pinned()?;
                let all = 0..block.len();
                timeline.enqueue(
                    device,
                    Step::GhostDownload,
                    Queue::Transfer,
                    &[staged],
                    |after| v.read_range_after(s.ghost_start, block, all, after),
                )?;
            }
            Ok(Some(staged))
        }
    }
}

/// Adds each link's received sums to the owned entries of `values`, one
/// neighbour after the other (increasing rank, the host's order of
/// additions): on the host directly; on a device all links' sums uploaded
/// (one block) on the transfer queue (after `staged`: the previous use of
/// the staging vector finished), the compute queue's barrier
/// [`Step::SumsIn`] waiting for it, then per link one scatter-add.
fn add_shared<R: Real>(
    values: &mut Vector<R>,
    s: &mut Staging<'_, R>,
    staged: Option<usize>,
    timeline: &mut Timeline,
) -> Result<()> {
    match (values, staged) {
        (Vector::Host(v), _) => {
            let shared = s.shared_host.host()?;
            for link in s.links.iter() {
                for (&i, &x) in link.shared.iter().zip(&shared[link.shared_at.clone()]) {
                    v[i as usize] += x;
                }
            }
            Ok(())
        }
        (Vector::Device(v), Some(staged)) => {
            let device = v.device().clone();
            let pinned = s.shared_host.pinned()?;
            let d = on_device(s.device.as_mut())?;
            if d.indices.is_empty() {
                return Ok(());
            }
            let all = 0..d.indices.len();
            let upload = timeline.enqueue(
                &device,
                Step::SumUpload,
                Queue::Transfer,
                &[staged],
                |after| d.buf.write_range_after(0, pinned, all, after),
            )?;
            timeline.enqueue(&device, Step::SumsIn, Queue::Compute, &[upload], |after| {
                device.compute_waits_for(after)
            })?;
            for link in s.links.iter_mut() {
                if !link.shared.is_empty() {
                    let from = link.shared_at.start;
                    v.scatter_add(on_device(link.device.as_mut())?, &d.buf, from)?;
                }
            }
            Ok(())
        }
        (Vector::Device(_), None) => Ok(()),
    }
}

/// `max |x|` with NaN winning.
fn max_abs(m: f64, a: f64) -> f64 {
    if m.is_nan() || a.is_nan() {
        f64::NAN
    } else {
        m.max(a.abs())
    }
}

impl<R: Real + Equivalence> VectorOps for DistVector<R> {
    /// The number of **global** entries (`n_global_vertices·per_node`).
    fn len(&self) -> usize {
        self.mesh.layout().n_global_vertices * self.per_node
    }

    fn precision(&self) -> Precision {
        R::PRECISION
    }

    fn zeros_like(&self) -> Result<Self> {
        Ok(DistVector {
            mesh: self.mesh.clone(),
            per_node: self.per_node,
            values: Versioned::new(self.values.zeros_like()?),
            halo: self.halo.clone(),
        })
    }

    fn check_compatible(&self, own: &str, name: &'static str, other: &Self) -> Result<()> {
        if !Rc::ptr_eq(&self.mesh, &other.mesh) {
            return Err(Error::arg(
                name,
                format!("is distributed over another DistMesh than `{own}`"),
            ));
        }
        if self.per_node != other.per_node {
            return Err(Error::arg(
                name,
                format!(
                    "has {} entries per vertex, `{own}` has {}",
                    other.per_node, self.per_node
                ),
            ));
        }
        self.values.check_compatible(own, name, &other.values)
    }

    fn copy_from(&mut self, x: &Self) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.values.get_mut().copy_from(&x.values)
    }

    fn fill(&mut self, value: f64) -> Result<()> {
        self.values.get_mut().fill(value)
    }

    fn scale(&mut self, alpha: f64) -> Result<()> {
        self.values.get_mut().scale(alpha)
    }

    fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.values.get_mut().axpy(alpha, &x.values)
    }

    fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.values.get_mut().axpby(alpha, &x.values, beta)
    }

    fn pointwise_mult(&mut self, x: &Self, z: &Self) -> Result<()> {
        self.check_compatible("y", "x", x)?;
        self.check_compatible("y", "y", z)?;
        self.values.get_mut().pointwise_mult(&x.values, &z.values)
    }

    fn dot(&self, y: &Self) -> Result<f64> {
        Ok(self.dots(&[y])?[0])
    }

    fn norm2(&self) -> Result<f64> {
        Ok(self.dot(self)?.sqrt())
    }

    fn norm_inf(&self) -> Result<f64> {
        let n = self.n_owned();
        let local = match &*self.values {
            Vector::Host(v) => Ok(v[..n].iter().fold(0.0f64, |m, &x| max_abs(m, x.to_f64()))),
            Vector::Device(d) => d.norm_inf_prefix(n),
        };
        let local = self.mesh.ranks().agree(local)?;
        let all = self.mesh.ranks().all_gather_f64(local);
        Ok(all.into_iter().fold(0.0f64, max_abs))
    }

    fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>> {
        for v in vs {
            self.check_compatible("x", "vs", v)?;
        }
        let partials = self.mesh.ranks().agree(self.local_dots(vs))?;
        Ok(self.sum_over_ranks(&partials))
    }

    /// The unfused sequence of [`CgFusion`]'s table on the rank's entries
    /// (the updates are local; the reductions are [`VectorOps::dots`]'s, in
    /// rank order): the values the fused host pass gives, with one
    /// all-gather for both sums.
    fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>> {
        self.check_compatible("r", "p", p)?;
        self.check_compatible("r", "q", q)?;
        self.check_compatible("r", "x", x)?;
        x.axpy(alpha, p)?;
        self.axpy(-alpha, q)?;
        match then {
            CgFusion::Update => Ok(None),
            CgFusion::Norm => {
                let rr = self.dots(&[self])?[0];
                Ok(Some((rr, rr)))
            }
            CgFusion::Jacobi {
                inverse_diagonal,
                z,
            } => {
                self.check_compatible("r", "inverse_diagonal", inverse_diagonal)?;
                self.check_compatible("r", "z", z)?;
                z.pointwise_mult(inverse_diagonal, self)?;
                let sums = self.dots(&[self, z])?;
                Ok(Some((sums[0], sums[1])))
            }
        }
    }

    fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()> {
        for x in xs {
            self.check_compatible("y", "xs", x)?;
        }
        let locals: Vec<&Vector<R>> = xs.iter().map(|x| &*x.values).collect();
        self.values.get_mut().maxpy(alphas, &locals)
    }

    /// The first **global** index (serial numbering) of a non-finite owned
    /// entry, over all ranks (collective).
    fn first_non_finite(&self) -> Result<Option<usize>> {
        let layout = self.mesh.layout();
        let k = self.per_node;
        let n = self.n_owned();
        let to_global = |i: usize| layout.global_vertices[i / k] as u64 * k as u64 + (i % k) as u64;
        let local = match &*self.values {
            Vector::Host(v) => Ok(v[..n]
                .iter()
                .enumerate()
                .filter(|(_, x)| !x.is_finite())
                .map(|(i, _)| to_global(i))
                .min()),
            // owned vertices are in increasing global index: the first
            // local non-finite entry is this rank's first global one
            Vector::Device(d) => d.first_non_finite_prefix(n).map(|i| i.map(to_global)),
        };
        let local = self.mesh.ranks().agree(local)?.unwrap_or(u64::MAX);
        let first = self.mesh.ranks().all_gather_u64(local).into_iter().min();
        Ok(first.filter(|&g| g != u64::MAX).map(|g| g as usize))
    }

    /// The entry of **global** index `index` (collective: its owner sends it).
    fn value_at(&self, index: usize) -> Result<f64> {
        let k = self.per_node;
        if index >= self.len() {
            return Err(Error::arg(
                "index",
                format!("{index} is out of range ({} global entries)", self.len()),
            ));
        }
        let mine = match self.mesh.layout().owned_local((index / k) as u32) {
            Some(l) => self.values.value_at(l * k + index % k).map(Some),
            None => Ok(None),
        };
        let mine = self.mesh.ranks().agree(mine)?;
        let ranks = self.mesh.ranks();
        let has = ranks.all_gather_u64(u64::from(mine.is_some()));
        let values = ranks.all_gather_f64(mine.unwrap_or(0.0));
        let owner = has
            .iter()
            .position(|&h| h == 1)
            .ok_or_else(|| Error::Internal {
                what: format!("global entry {index} has no owner"),
            })?;
        Ok(values[owner])
    }
}
