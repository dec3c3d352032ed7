//! The agglomerated levels of a [`DistMultigrid`](crate::DistMultigrid):
//! the small levels `0..=L_a` of a [`DistHierarchy`] gathered onto rank 0
//! and cycled there by femquad's serial multigrid, so that they cost the
//! distributed cycle one gather and one scatter instead of the halo
//! exchanges of every level (each a device → host → MPI → device round
//! trip, while a small level's own work takes microseconds).
//!
//! # The serial levels on rank 0
//! * **Mesh 0**: every rank sends rank 0 its cells of the distributed
//!   coarse mesh (global cell numbers, their vertices' global numbers in
//!   the cells' own order) and its owned vertices' coordinates; rank 0
//!   puts them back in place, the global mesh exactly as it was
//!   distributed (the tetrahedra's vertex order decides their refinement).
//! * **Meshes `1..=L_a`**: [`MeshHierarchy::prepared`] — the gathered mesh
//!   refined as it is (not prepared a second time), as every rank refined
//!   its part ([`crate::hierarchy`]): the same cells and the same vertex
//!   coordinates, bit for bit, in another vertex numbering.
//! * **The vertex map** of level `L_a`: each distributed global vertex to
//!   the serial vertex at the same coordinates (their bits). A count that
//!   differs, a vertex without a match or two on one serial vertex is
//!   refused with [`Error::InvalidArgument`] naming `hierarchy`, on every
//!   rank: never a wrong map.
//! * **The serial multigrid**: the form on the P1 space of mesh `L_a`
//!   ([`Operator`]), femquad's [`OperatorLevels`] of the serial hierarchy
//!   with the agglomeration's own [`MultigridOptions`] (assembled levels,
//!   the `f32` cycle, the dense coarse solve: whatever is fastest on one
//!   device); its fixed dofs those of level `L_a` (gathered and mapped),
//!   its state level `L_a`'s injected state (gathered and mapped; the
//!   serial setup injects it further down itself), its time state likewise.
//!
//! # One coarse correction
//! `x = M_a⁻¹ b` for `b` of level `L_a`: `b`'s owned entries gathered to
//! rank 0 (one `MPI_Gatherv`) and put into the serial numbering there, one
//! V-cycle of the serial multigrid, and every rank's local entries of `x`
//! (owned and ghosts: no ghost update after) scattered back (one
//! `MPI_Scatterv`). With `L_a = 0` the serial multigrid has one level: the
//! direct solve of femquad's
//! [`CoarseSolver`](femquad::multigrid::CoarseSolver).
//!
//! On a device the messages' host memory is pinned and kept
//! (`HostBuffer`, `host_buffer.rs`), each transfer moves only its entries (the owned ones
//! down, every rank's local ones up) on the transfer queue, and rank 0
//! permutes on its device (femquad's index scatter into the serial
//! numbering, gather out of it): the host only passes the messages on.
//!
//! # Failure
//! Rank 0's serial work between two collectives ends in
//! [`Ranks::agree`]: an error there (a refused option, a setup that
//! fails) is every rank's error, and no rank waits for a message rank 0
//! will not send.

use std::collections::HashMap;

use mpi::datatype::Equivalence;

use femquad::backend::{Backend, IndexSet, Vector};
use femquad::element::Element;
use femquad::form::Form;
use femquad::linalg::FixedDofs;
use femquad::mesh::Mesh;
use femquad::multigrid::{
    EigenEstimate, LevelReport, MeshHierarchy, MultigridOptions, OperatorLevels,
};
use femquad::operator::Operator;
use femquad::space::FunctionSpace;
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

use crate::comm::{Parts, Ranks};
use crate::hierarchy::DistHierarchy;
use crate::host_buffer::HostBuffer;
use crate::vector::DistVector;

/// The default most global dofs of the agglomerated level
/// ([`AgglomeratedLevel::MaxDofs`]): `2^18`.
pub const AGGLOMERATE_MAX_DOFS: usize = 1 << 18;

/// Which level of a [`DistHierarchy`] is the agglomerated level `L_a`
/// (levels `0..=L_a` on rank 0, `L_a + 1..=L` distributed; the finest
/// level `L` always stays distributed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgglomeratedLevel {
    /// The finest level below `L` with at most this many global dofs;
    /// level 0 if none has so few (`MaxDofs(0)`: level 0, the coarsest
    /// level's direct solve on rank 0 and nothing more).
    MaxDofs(usize),
    /// This level (below `L`).
    Level(usize),
}

impl AgglomeratedLevel {
    /// `L_a` for a hierarchy whose levels have `dofs` global dofs each,
    /// coarsest first.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `agglomeration` for
    /// [`AgglomeratedLevel::Level`] at or above the finest level, or a
    /// hierarchy of fewer than two levels.
    pub fn choose(self, dofs: &[usize]) -> Result<usize> {
        let n_levels = dofs.len();
        if n_levels < 2 {
            return Err(Error::arg(
                "agglomeration",
                "a hierarchy of at least two levels is needed (the finest stays distributed)",
            ));
        }
        match self {
            AgglomeratedLevel::MaxDofs(max) => Ok((0..n_levels - 1)
                .rev()
                .find(|&l| dofs[l] <= max)
                .unwrap_or(0)),
            AgglomeratedLevel::Level(l) if l + 1 < n_levels => Ok(l),
            AgglomeratedLevel::Level(l) => Err(Error::arg(
                "agglomeration",
                format!(
                    "level {l} cannot be agglomerated: the hierarchy's finest level is {}, and \
                     it stays distributed (choose a level below it)",
                    n_levels - 1
                ),
            )),
        }
    }
}

/// The agglomeration of a [`DistMultigrid`](crate::DistMultigrid): which
/// level `L_a`, and the options of femquad's serial multigrid on levels
/// `0..=L_a` on rank 0 (every serial option applies there: assembled
/// levels, the `f32` cycle, the dense coarse solve, its factorization and
/// `max_coarse_dofs`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Agglomeration {
    /// `L_a`.
    pub level: AgglomeratedLevel,
    /// The serial multigrid's options.
    pub options: MultigridOptions,
}

impl Default for Agglomeration {
    /// [`AgglomeratedLevel::MaxDofs`]`(`[`AGGLOMERATE_MAX_DOFS`]`)` with
    /// femquad's default [`MultigridOptions`].
    fn default() -> Self {
        Agglomeration {
            level: AgglomeratedLevel::MaxDofs(AGGLOMERATE_MAX_DOFS),
            options: MultigridOptions::default(),
        }
    }
}

/// Levels `0..=L_a` on rank 0 (see the [module documentation](self)), held
/// by every rank: the gather and scatter parts on rank 0, this rank's
/// received entries, and on rank 0 the serial levels.
pub(crate) struct Agglomerated<R: Real> {
    /// `L_a`.
    level: usize,
    /// Rank 0: every rank's owned entries of level `L_a` (the gathers).
    owned: Parts,
    /// Rank 0: every rank's local entries of level `L_a` (the scatter).
    local: Parts,
    /// This rank's owned entries of `b`, sent.
    sent: HostBuffer<R>,
    /// This rank's local entries of `x`, received.
    received: HostBuffer<R>,
    /// Rank 0.
    root: Option<Root<R>>,
    /// The serial levels' reports after a setup (every rank), coarsest
    /// first.
    report: Vec<LevelReport>,
}

/// Rank 0's serial levels.
struct Root<R: Real> {
    hierarchy: MeshHierarchy,
    /// The form on the serial mesh `L_a`.
    finest: Operator<R>,
    levels: OperatorLevels<R>,
    /// Serial vectors of level `L_a`: the state, the time state's `b`,
    /// the last gathered vector, the V-cycle's result.
    state: Vector<R>,
    time_b: Vector<R>,
    input: Vector<R>,
    x: Vector<R>,
    /// The serial entry of each gathered entry (rank order, each rank's
    /// owned entries in its order).
    owned_serial: IndexSet,
    /// The serial entry of each scattered entry (rank order, each rank's
    /// local entries).
    local_serial: IndexSet,
    /// The serial vertex of each distributed global vertex of level `L_a`.
    serial_of: Vec<u32>,
    /// The gathered entries, received (host) and uploaded (in rank order).
    gathered_host: HostBuffer<R>,
    gathered: Vector<R>,
    /// The scattered entries, picked from `x` (in rank order) and
    /// downloaded.
    scattered: Vector<R>,
    scattered_host: HostBuffer<R>,
}

/// What every rank of level `L_a` sends rank 0 at construction.
struct Gathered {
    cells: Vec<Vec<u32>>,
    connectivity: Vec<Vec<u32>>,
    coarse_owned: Vec<Vec<u32>>,
    coarse_coordinates: Vec<Vec<f64>>,
    /// Level `L_a`: every local vertex's global number, owned first.
    local: Vec<Vec<u32>>,
    n_owned: Vec<Vec<u64>>,
    coordinates: Vec<Vec<f64>>,
    fixed: Vec<Vec<u8>>,
}

impl<R: Real + Equivalence> Agglomerated<R> {
    /// Collective: levels `0..=level` of `hierarchy` on rank 0 for the
    /// field of `n_comp` components whose form `make_form` makes, bound on
    /// `backend` there; `fixed` the fixed local entries of level `level`.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `hierarchy` for a
    /// gathered mesh or vertex map that is not consistent (see the [module
    /// documentation](self)); rank 0's errors of [`MeshHierarchy::prepared`],
    /// [`Operator::new`] and [`OperatorLevels::new`] (e.g. `options` it
    /// refuses).
    pub(crate) fn new(
        hierarchy: &DistHierarchy,
        level: usize,
        n_comp: usize,
        make_form: &impl Fn(FunctionSpace) -> Result<Form<R>>,
        backend: &Backend,
        fixed: &[bool],
        options: MultigridOptions,
    ) -> Result<Self> {
        let coarse = level_mesh(hierarchy, 0)?;
        let fine = level_mesh(hierarchy, level)?;
        let ranks = coarse.ranks();
        let c = coarse.layout();
        let f = fine.layout();
        let dim = c.dim;
        let connectivity: Vec<u32> = c
            .connectivity
            .iter()
            .map(|&v| c.global_vertices[v as usize])
            .collect();
        let flags: Vec<u8> = fixed[..f.n_owned * n_comp]
            .iter()
            .map(|&x| u8::from(x))
            .collect();
        let gathered = [
            ranks.gather_varcount(&c.cells)?,
            ranks.gather_varcount(&connectivity)?,
            ranks.gather_varcount(&c.global_vertices[..c.n_owned])?,
            ranks.gather_varcount(&f.global_vertices)?,
        ];
        let coordinates = [
            ranks.gather_varcount(&c.coordinates[..c.n_owned * dim])?,
            ranks.gather_varcount(&f.coordinates[..f.n_owned * dim])?,
        ];
        let n_owned = ranks.gather_varcount(&[f.n_owned as u64])?;
        let flags = ranks.gather_varcount(&flags)?;
        let root = match (gathered, coordinates, n_owned, flags) {
            (
                [
                    Some(cells),
                    Some(connectivity),
                    Some(coarse_owned),
                    Some(local),
                ],
                [Some(coarse_coordinates), Some(coordinates)],
                Some(n_owned),
                Some(fixed),
            ) => {
                let g = Gathered {
                    cells,
                    connectivity,
                    coarse_owned,
                    coarse_coordinates,
                    local,
                    n_owned,
                    coordinates,
                    fixed,
                };
                let sizes = (dim, c.n_global_vertices, f.n_global_vertices);
                Root::new(&g, sizes, level, n_comp, make_form, backend, options).map(Some)
            }
            _ => Ok(None),
        };
        let root = ranks.agree(root)?;
        let (owned, local) = match &root {
            Some((_, owned, local)) => (owned.clone(), local.clone()),
            None => (Parts::default(), Parts::default()),
        };
        let device = match backend {
            Backend::OpenCl { device, .. } => Some(device),
            Backend::Native(_) => None,
        };
        let buffers = ranks.agree((|| {
            Ok([
                HostBuffer::new(device, f.n_owned * n_comp)?,
                HostBuffer::new(device, f.n_local() * n_comp)?,
            ])
        })())?;
        let [sent, received] = buffers;
        Ok(Agglomerated {
            level,
            owned,
            local,
            sent,
            received,
            root: root.map(|r| r.0),
            report: Vec::new(),
        })
    }

    /// `L_a`.
    pub(crate) fn level(&self) -> usize {
        self.level
    }

    /// The serial levels' reports of the last setup (coarsest first, the
    /// same on every rank; empty before a setup).
    pub(crate) fn report(&self) -> &[LevelReport] {
        &self.report
    }

    /// Rank 0: the serial multigrid.
    pub(crate) fn levels(&self) -> Option<&OperatorLevels<R>> {
        self.root.as_ref().map(|r| &r.levels)
    }

    /// Rank 0: the serial hierarchy and the serial vertex of each
    /// distributed global vertex of level `L_a`.
    pub(crate) fn vertex_map(&self) -> Option<(&MeshHierarchy, &[u32])> {
        self.root.as_ref().map(|r| (&r.hierarchy, &r.serial_of[..]))
    }

    /// Collective: `state` (level `L_a`'s) gathered, the serial levels set
    /// up at it on rank 0, their reports sent to every rank.
    ///
    /// # Errors
    /// On every rank: rank 0's errors of [`OperatorLevels::setup`]; a
    /// device read error.
    pub(crate) fn setup(&mut self, ranks: &Ranks, state: &DistVector<R>) -> Result<()> {
        self.report.clear();
        self.on_root(ranks, state, |root| {
            root.state.copy_from(&root.input)?;
            root.levels.setup(&mut root.finest, &root.state)
        })?;
        let mut words = match self
            .root
            .as_ref()
            .and_then(|r| r.levels.multigrid().report())
        {
            Some(report) => report.levels.iter().flat_map(report_words).collect(),
            None => Vec::new(),
        };
        ranks.broadcast_f64s(&mut words);
        self.report = words.chunks_exact(REPORT_WORDS).map(report_of).collect();
        Ok(())
    }

    /// Collective: binds the time state `t`, `u_t = σ·u + b` (`b` level
    /// `L_a`'s) on rank 0's serial mesh `L_a` (the serial setup injects it
    /// further down).
    ///
    /// # Errors
    /// On every rank: rank 0's errors of [`Operator::set_time`].
    pub(crate) fn set_time(
        &mut self,
        ranks: &Ranks,
        t: f64,
        sigma: f64,
        b: &DistVector<R>,
    ) -> Result<()> {
        self.on_root(ranks, b, |root| {
            root.time_b.copy_from(&root.input)?;
            root.finest.set_time(t, sigma, &root.time_b)
        })
    }

    /// Collective: `x = M_a⁻¹ b` (see the [module documentation](self)).
    ///
    /// # Errors
    /// On every rank: rank 0's errors of the serial V-cycle; device errors.
    pub(crate) fn solve(
        &mut self,
        ranks: &Ranks,
        b: &DistVector<R>,
        x: &mut DistVector<R>,
    ) -> Result<()> {
        self.on_root(ranks, b, |root| {
            root.levels
                .apply(&mut root.finest, &root.state, &root.input, &mut root.x)?;
            root.scattered.gather(&root.x, &root.local_serial)?;
            let all = 0..root.scattered.len();
            root.scattered_host.download(&root.scattered, all)
        })?;
        let scattered = match &mut self.root {
            Some(root) => root.scattered_host.host(),
            None => Ok(&mut [][..]),
        };
        let views = scattered.and_then(|s| Ok((s, self.received.host()?)));
        let (scattered, received) = ranks.agree(views)?;
        ranks.scatter_parts(scattered, &self.local, received);
        let all = 0..x.n_local();
        ranks.agree(self.received.upload(x.local_mut(), all))
    }

    /// Collective: `v`'s owned entries gathered to rank 0 and put into
    /// the serial numbering there (`Root::input`), then `work` there;
    /// agreed.
    fn on_root(
        &mut self,
        ranks: &Ranks,
        v: &DistVector<R>,
        work: impl FnOnce(&mut Root<R>) -> Result<()>,
    ) -> Result<()> {
        let gathered = match &mut self.root {
            Some(root) => root.gathered_host.host(),
            None => Ok(&mut [][..]),
        };
        let sent = &mut self.sent;
        let views = sent
            .download(v.local(), 0..v.n_owned())
            .and_then(|()| Ok((sent.host()?, gathered?)));
        let (sent, gathered) = ranks.agree(views)?;
        ranks.gather_parts_into(sent, &self.owned, gathered);
        let done = match self.root.as_mut() {
            Some(root) => {
                let all = 0..root.gathered.len();
                root.gathered_host
                    .upload(&mut root.gathered, all)
                    .and_then(|()| root.input.scatter(&root.owned_serial, &root.gathered))
                    .and_then(|()| work(root))
            }
            None => Ok(()),
        };
        ranks.agree(done)
    }
}

impl<R: Real> Root<R> {
    /// Rank 0: the serial levels of what it gathered (`sizes`: dimension,
    /// global vertices of mesh 0 and of level `level`), with the parts of
    /// the owned and local entries.
    fn new(
        g: &Gathered,
        sizes: (usize, usize, usize),
        level: usize,
        n_comp: usize,
        make_form: &impl Fn(FunctionSpace) -> Result<Form<R>>,
        backend: &Backend,
        options: MultigridOptions,
    ) -> Result<(Self, Parts, Parts)> {
        let (dim, n_coarse, n_fine) = sizes;
        let mesh = coarse_mesh(g, dim, n_coarse)?;
        let hierarchy = MeshHierarchy::prepared(mesh, level)?;
        let serial = hierarchy.finest();
        let owned: Vec<&[u32]> = g
            .local
            .iter()
            .zip(&g.n_owned)
            .map(|(l, n)| &l[..n.first().map_or(0, |&n| n as usize).min(l.len())])
            .collect();
        let placed = by_global(n_fine, dim, &owned, &g.coordinates, "level")?;
        let serial_of = match_vertices(&placed, serial.vertices(), dim, level)?;
        let k = n_comp as u32;
        let entries = |vertices: &[u32]| -> Vec<u32> {
            vertices
                .iter()
                .flat_map(|&v| {
                    let s = serial_of[v as usize];
                    (0..k).map(move |c| s * k + c)
                })
                .collect()
        };
        let owned_entries: Vec<Vec<u32>> = owned.iter().map(|o| entries(o)).collect();
        let local_entries: Vec<Vec<u32>> = g.local.iter().map(|l| entries(l)).collect();
        let mut fixed: Vec<u32> = owned_entries
            .iter()
            .zip(&g.fixed)
            .flat_map(|(e, f)| e.iter().zip(f).filter(|p| *p.1 != 0).map(|p| *p.0))
            .collect();
        fixed.sort_unstable();
        let n = serial.n_vertices() * n_comp;
        let fixed = FixedDofs::new(n, &fixed)?;
        let space = FunctionSpace::new(serial.clone(), Element::lagrange(dim, 1)?, n_comp)?;
        let mut finest = Operator::new(make_form(space)?, backend)?;
        let levels = OperatorLevels::new(&hierarchy, &finest, backend, &fixed, options)?;
        let parts = |e: &[Vec<u32>]| Parts::new(&e.iter().map(Vec::len).collect::<Vec<_>>());
        let (owned_parts, local_parts) = (parts(&owned_entries)?, parts(&local_entries)?);
        let x = finest.vector()?;
        let (owned_serial, local_serial) = (owned_entries.concat(), local_entries.concat());
        let device = x.as_device().map(|d| d.device().clone());
        let root = Root {
            state: finest.vector()?,
            time_b: finest.vector()?,
            input: finest.vector()?,
            owned_serial: IndexSet::located_like(&x, &owned_serial)?,
            local_serial: IndexSet::located_like(&x, &local_serial)?,
            gathered_host: HostBuffer::new(device.as_ref(), owned_serial.len())?,
            gathered: finest.integrator().zeros(owned_serial.len())?,
            scattered: finest.integrator().zeros(local_serial.len())?,
            scattered_host: HostBuffer::new(device.as_ref(), local_serial.len())?,
            x,
            hierarchy,
            finest,
            levels,
            serial_of,
        };
        Ok((root, owned_parts, local_parts))
    }
}

/// Rank 0: the distributed coarse mesh put back together — every cell at
/// its global number with its vertices' global numbers in its own order,
/// every vertex at its global number.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `hierarchy` for a cell or vertex
/// missing or sent twice; those of [`Mesh::new`].
fn coarse_mesh(g: &Gathered, dim: usize, n_vertices: usize) -> Result<Mesh> {
    let k = dim + 1;
    let n_cells: usize = g.cells.iter().map(Vec::len).sum();
    let mut cells = vec![0u32; n_cells * k];
    let mut placed = vec![false; n_cells];
    for (numbers, vertices) in g.cells.iter().zip(&g.connectivity) {
        for (&c, cell) in numbers.iter().zip(vertices.chunks_exact(k)) {
            let c = c as usize;
            if c >= n_cells || placed[c] {
                return Err(Error::arg(
                    "hierarchy",
                    format!(
                        "the distributed coarse mesh's cell {c} is out of range or on two \
                         ranks ({n_cells} cells in all)"
                    ),
                ));
            }
            placed[c] = true;
            cells[c * k..(c + 1) * k].copy_from_slice(cell);
        }
    }
    let owned: Vec<&[u32]> = g.coarse_owned.iter().map(Vec::as_slice).collect();
    let vertices = by_global(n_vertices, dim, &owned, &g.coarse_coordinates, "coarse")?;
    Mesh::new(dim, vertices, cells)
}

/// The coordinates of `n` global vertices from every rank's owned ones
/// (`owned[q]`, their coordinates `coordinates[q]`); `what` names the level
/// in errors.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `hierarchy` for a vertex out of range,
/// owned twice or by no rank.
fn by_global(
    n: usize,
    dim: usize,
    owned: &[&[u32]],
    coordinates: &[Vec<f64>],
    what: &str,
) -> Result<Vec<f64>> {
    let mut out = vec![0.0; n * dim];
    let mut placed = vec![false; n];
    for (vertices, xs) in owned.iter().zip(coordinates) {
        for (&v, x) in vertices.iter().zip(xs.chunks_exact(dim)) {
            let v = v as usize;
            if v >= n || placed[v] {
                return Err(Error::arg(
                    "hierarchy",
                    format!("the {what} mesh's vertex {v} is out of range or owned twice"),
                ));
            }
            placed[v] = true;
            out[v * dim..(v + 1) * dim].copy_from_slice(x);
        }
    }
    if let Some(v) = placed.iter().position(|&p| !p) {
        return Err(Error::arg(
            "hierarchy",
            format!("the {what} mesh's vertex {v} is owned by no rank"),
        ));
    }
    Ok(out)
}

/// For each distributed vertex (coordinates `dist`, in its global
/// numbering) the serial vertex at the same coordinates (`serial`), by
/// their bits; `level` for errors.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `hierarchy` if the counts differ, two
/// serial vertices share coordinates, a distributed vertex has no serial
/// vertex at its coordinates or shares one with another.
pub(crate) fn match_vertices(
    dist: &[f64],
    serial: &[f64],
    dim: usize,
    level: usize,
) -> Result<Vec<u32>> {
    let refuse = |why: String| {
        Err(Error::arg(
            "hierarchy",
            format!(
                "the agglomerated level {level}: {why} — the serial refinement of the gathered \
                 coarse mesh is not the distributed one"
            ),
        ))
    };
    let (n, n_serial) = (dist.len() / dim, serial.len() / dim);
    if n != n_serial {
        return refuse(format!(
            "{n} distributed vertices but {n_serial} serial ones"
        ));
    }
    let key = |x: &[f64]| -> Vec<u64> { x.iter().map(|c| c.to_bits()).collect() };
    let index: HashMap<Vec<u64>, u32> = serial
        .chunks_exact(dim)
        .enumerate()
        .map(|(i, x)| (key(x), i as u32))
        .collect();
    if index.len() != n {
        return refuse("two serial vertices at the same coordinates".into());
    }
    let mut taken = vec![false; n];
    let mut map = Vec::with_capacity(n);
    for (g, x) in dist.chunks_exact(dim).enumerate() {
        let Some(&s) = index.get(&key(x)) else {
            return refuse(format!(
                "the distributed vertex {g} at {x:?} has no serial vertex there"
            ));
        };
        if std::mem::replace(&mut taken[s as usize], true) {
            return refuse(format!(
                "the distributed vertex {g} at {x:?} is at another one's coordinates"
            ));
        }
        map.push(s);
    }
    Ok(map)
}

/// A [`LevelReport`] in [`REPORT_WORDS`] words, for a broadcast.
const REPORT_WORDS: usize = 9;

fn report_words(r: &LevelReport) -> [f64; REPORT_WORDS] {
    let e = r.eigen.unwrap_or(EigenEstimate {
        max: 0.0,
        min: 0.0,
        steps: 0,
    });
    let (lo, hi) = r.interval.unwrap_or((0.0, 0.0));
    [
        r.dofs as f64,
        r.fixed as f64,
        f64::from(u8::from(r.eigen.is_some())),
        e.max,
        e.min,
        e.steps as f64,
        f64::from(u8::from(r.interval.is_some())),
        lo,
        hi,
    ]
}

fn report_of(w: &[f64]) -> LevelReport {
    LevelReport {
        dofs: w[0] as usize,
        fixed: w[1] as usize,
        eigen: (w[2] != 0.0).then_some(EigenEstimate {
            max: w[3],
            min: w[4],
            steps: w[5] as usize,
        }),
        interval: (w[6] != 0.0).then_some((w[7], w[8])),
    }
}

/// The mesh of level `l` of `hierarchy`.
fn level_mesh(hierarchy: &DistHierarchy, l: usize) -> Result<&std::rc::Rc<crate::DistMesh>> {
    hierarchy
        .mesh(l)
        .ok_or_else(|| Error::internal(format!("no level {l} in the hierarchy")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vertices_match_by_coordinates_and_mismatches_are_refused() {
        // serial: (0,0) (1,0) (0,1) (1,1); distributed: another order
        let serial = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
        let dist = [1.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0];
        let map = match_vertices(&dist, &serial, 2, 3).unwrap();
        assert_eq!(map, [3, 0, 2, 1]);
        for (g, &s) in map.iter().enumerate() {
            assert_eq!(
                dist[2 * g..2 * g + 2],
                serial[2 * s as usize..2 * s as usize + 2]
            );
        }
        // one bit off, a vertex missing, a vertex twice
        let mut off = dist;
        off[5] = f64::from_bits(1.0f64.to_bits() - 1);
        let twice = [1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0];
        for (bad, why) in [
            (&off[..], "has no serial vertex there"),
            (&dist[..6], "3 distributed vertices but 4 serial ones"),
            (&twice[..], "is at another one's coordinates"),
        ] {
            let e = match_vertices(bad, &serial, 2, 3).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("level 3"), "{e}");
        }
    }

    #[test]
    fn the_agglomerated_level_is_the_finest_small_one_below_the_finest() {
        let dofs = [25, 81, 289, 1089];
        let at = |l: AgglomeratedLevel| l.choose(&dofs);
        assert_eq!(at(AgglomeratedLevel::MaxDofs(0)).unwrap(), 0);
        assert_eq!(at(AgglomeratedLevel::MaxDofs(81)).unwrap(), 1);
        assert_eq!(at(AgglomeratedLevel::MaxDofs(288)).unwrap(), 1);
        // the finest stays distributed
        assert_eq!(at(AgglomeratedLevel::MaxDofs(1 << 20)).unwrap(), 2);
        assert_eq!(at(AgglomeratedLevel::Level(2)).unwrap(), 2);
        let e = at(AgglomeratedLevel::Level(3)).unwrap_err().to_string();
        assert!(e.contains("finest level is 3"), "{e}");
        assert!(AgglomeratedLevel::Level(0).choose(&[25]).is_err());
    }
}
