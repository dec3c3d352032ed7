//! Sizes before allocation: what a mesh, a refinement hierarchy and a solve
//! on it will take at least, checked against 32-bit indices and this
//! machine's memory before anything is allocated; and the parser of the
//! cell counts people write (`1e6`, `16M`, `2^24`).
//!
//! Every size that follows from a user's input — the generators' `n`
//! ([`super::unit_box`], [`super::n_for_cells`]), refinement depth
//! ([`super::refine_uniformly`], [`super::refine()`],
//! [`crate::multigrid::MeshHierarchy`]), the examples' `--levels`,
//! `--refine` and `--cells` — is checked by [`Footprint::too_large`] first,
//! and refused at once with the bound stated, instead of running for
//! minutes until the operating system kills the process for want of
//! memory.
//!
//! # The bound
//! [`Footprint::min_bytes`] counts what is certainly allocated, at its
//! smallest: every mesh kept (vertex coordinates in `f64`, cells as `u32`)
//! and, for a solve, on the finest mesh the dof map (`u32` per cell node),
//! cell-local coefficients and element vectors and the geometry `J⁻¹`,
//! `det J` (at least 4 bytes each) and the four global vectors a Krylov
//! solver holds at least (`f64`). A computation whose lower bound exceeds
//! the memory cannot succeed; one below it may still run out (the bound
//! leaves out the operator's and the preconditioner's own arrays).

use std::sync::OnceLock;

use super::Mesh;
use crate::{Error, Result};

/// The most cells, vertices, nodes or dofs a mesh or space can number:
/// their indices are `u32`.
pub const MAX_INDEX: f64 = u32::MAX as f64;

const GIB: f64 = (1u64 << 30) as f64;

/// The counts of a simplicial mesh that decide its size, as `f64` (so that
/// sizes far beyond memory are represented too).
///
/// Exact for [`MeshSize::unit_box`] and its refinements; for
/// [`MeshSize::of`] a mesh, `edges` and (in 3D) `triangles` are not counted
/// and stand at 0, a lower bound, so everything derived from them (the
/// vertices of refinements, P2 nodes, bytes) is a lower bound too.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshSize {
    /// Spatial dimension, 2 or 3.
    pub dim: usize,
    /// Vertices.
    pub vertices: f64,
    /// Edges (at least).
    pub edges: f64,
    /// Triangles: the cells in 2D, the faces of the tetrahedra in 3D (at least).
    pub triangles: f64,
    /// Cells: triangles in 2D, tetrahedra in 3D.
    pub cells: f64,
}

impl MeshSize {
    /// The counts of `mesh`: its vertices and cells (edges, and in 3D
    /// triangles, taken as 0: see the [type documentation](Self)).
    pub fn of(mesh: &Mesh) -> MeshSize {
        let cells = mesh.n_cells() as f64;
        MeshSize {
            dim: mesh.dim(),
            vertices: mesh.n_vertices() as f64,
            edges: 0.0,
            triangles: if mesh.dim() == 2 { cells } else { 0.0 },
            cells,
        }
    }

    /// The counts of [`super::unit_box`]`(dim, n, …)`: `(n+1)^dim`
    /// vertices, `(2n+1)^dim − (n+1)^dim` edges (a P2 node each), `2n²`
    /// triangles or `6n³` tetrahedra, and in 3D the triangles from Euler's
    /// formula `V − E + F − T = 1`.
    pub fn unit_box(dim: usize, n: f64) -> MeshSize {
        let d = dim as i32;
        let vertices = (n + 1.0).powi(d);
        let edges = (2.0 * n + 1.0).powi(d) - vertices;
        if dim == 2 {
            let cells = 2.0 * n * n;
            MeshSize {
                dim,
                vertices,
                edges,
                triangles: cells,
                cells,
            }
        } else {
            let cells = 6.0 * n * n * n;
            MeshSize {
                dim,
                vertices,
                edges,
                triangles: 1.0 - vertices + edges + cells,
                cells,
            }
        }
    }

    /// The counts after one uniform refinement ([`super::refine()`]): each
    /// edge gives a vertex and 2 edges; each triangle 3 more edges and 4
    /// triangles; each tetrahedron 1 more edge (the diagonal), 8 more
    /// triangles and 8 tetrahedra.
    pub fn refined(&self) -> MeshSize {
        let tets = if self.dim == 3 { self.cells } else { 0.0 };
        let triangles = 4.0 * self.triangles + 8.0 * tets;
        MeshSize {
            dim: self.dim,
            vertices: self.vertices + self.edges,
            edges: 2.0 * self.edges + 3.0 * self.triangles + tets,
            triangles,
            cells: if self.dim == 2 { triangles } else { 8.0 * tets },
        }
    }

    /// The nodes of a Lagrange space of `order` (1 or 2) on the mesh: its
    /// vertices, and for P2 its edges too.
    pub fn nodes(&self, order: usize) -> f64 {
        if order >= 2 {
            self.vertices + self.edges
        } else {
            self.vertices
        }
    }

    /// Bytes of the mesh itself: coordinates (`f64`) and cells (`u32`).
    pub fn bytes(&self) -> f64 {
        let d = self.dim as f64;
        self.vertices * d * 8.0 + self.cells * (d + 1.0) * 4.0
    }

    /// What the cells are called: `triangles` or `tetrahedra`.
    pub fn shape(&self) -> &'static str {
        if self.dim == 2 {
            "triangles"
        } else {
            "tetrahedra"
        }
    }
}

/// A field solved on a mesh: what decides its arrays besides the mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldSize {
    /// Lagrange order, 1 or 2.
    pub order: usize,
    /// Components of the field.
    pub n_comp: usize,
}

impl FieldSize {
    /// Dofs on `mesh`: its nodes times the components.
    pub fn dofs(&self, mesh: &MeshSize) -> f64 {
        mesh.nodes(self.order) * self.n_comp as f64
    }

    /// A lower bound of the bytes of a solve on `mesh` besides the mesh: the
    /// dof map (`u32` per cell node), cell-local coefficients and element
    /// vectors and the geometry `J⁻¹`, `det J` (at least 4 bytes each), and
    /// the four global vectors a Krylov solver holds at least (`f64`).
    pub fn bytes(&self, mesh: &MeshSize) -> f64 {
        let d = mesh.dim as f64;
        // nodes per cell: (d+1) for P1, (d+1)(d+2)/2 for P2
        let n_b = if self.order >= 2 {
            (d + 1.0) * (d + 2.0) / 2.0
        } else {
            d + 1.0
        };
        let cells = mesh.cells;
        cells * n_b * 4.0
            + 2.0 * cells * n_b * self.n_comp as f64 * 4.0
            + cells * (d * d + 1.0) * 4.0
            + 4.0 * self.dofs(mesh) * 8.0
    }
}

/// What a computation holds at once: meshes (a refinement hierarchy, coarse
/// to fine, or one mesh) and, possibly, a field solved on the finest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Footprint<'a> {
    /// The meshes held together, the finest last (not empty).
    pub meshes: &'a [MeshSize],
    /// The field solved on the finest mesh, if any.
    pub field: Option<FieldSize>,
}

impl Footprint<'_> {
    /// A lower bound of the bytes the computation allocates: every mesh's
    /// [`MeshSize::bytes`] and the field's [`FieldSize::bytes`] on the
    /// finest (see the [module documentation](self)).
    pub fn min_bytes(&self) -> f64 {
        let meshes: f64 = self.meshes.iter().map(MeshSize::bytes).sum();
        match (self.field, self.meshes.last()) {
            (Some(f), Some(finest)) => meshes + f.bytes(finest),
            _ => meshes,
        }
    }

    /// Why the computation cannot be done, or `None` if it can as far as
    /// sizes tell: the finest mesh has more cells or vertices than `u32`
    /// indices number ([`MAX_INDEX`]), the field more nodes or dofs, or
    /// [`Footprint::min_bytes`] exceeds `memory` (bytes; not checked if
    /// `None`). The reason states the counts and the bound, e.g.
    /// `8.796e12 triangles, more than the 4294967295 cells a mesh can
    /// number (cell indices are u32)`.
    pub fn too_large(&self, memory: Option<u64>) -> Option<String> {
        let finest = self.meshes.last()?;
        let shape = finest.shape();
        if finest.cells > MAX_INDEX {
            return Some(format!(
                "{:.3e} {shape}, more than the {MAX_INDEX} cells a mesh can number (cell \
                 indices are u32)",
                finest.cells
            ));
        }
        if finest.vertices > MAX_INDEX {
            return Some(format!(
                "{:.3e} vertices, more than the {MAX_INDEX} a mesh can number (vertex indices \
                 are u32)",
                finest.vertices
            ));
        }
        if let Some(f) = self.field {
            let (nodes, dofs) = (finest.nodes(f.order), f.dofs(finest));
            if nodes > MAX_INDEX {
                return Some(format!(
                    "{nodes:.3e} P{} nodes, more than the {MAX_INDEX} a space can number (node \
                     indices are u32)",
                    f.order
                ));
            }
            if dofs > MAX_INDEX {
                return Some(format!(
                    "{dofs:.3e} dofs, more than the {MAX_INDEX} a space can number (dof indices \
                     are u32)"
                ));
            }
        }
        let bytes = self.min_bytes();
        let m = memory? as f64;
        if bytes <= m {
            return None;
        }
        let coarser = match self.meshes.len() {
            1 => String::new(),
            2 => " with the coarser level".to_string(),
            n => format!(" with the {} coarser levels", n - 1),
        };
        Some(match self.field {
            Some(f) => format!(
                "{:.3e} {shape} and {:.3e} dofs, which need at least {:.1} GiB (mesh{coarser}, \
                 dof map, cell arrays, geometry, 4 solver vectors), more than this machine's \
                 {:.1} GiB of memory",
                finest.cells,
                f.dofs(finest),
                bytes / GIB,
                m / GIB
            ),
            None => format!(
                "{:.3e} {shape} and {:.3e} vertices, which need at least {:.1} GiB (coordinates \
                 and cells{coarser}), more than this machine's {:.1} GiB of memory",
                finest.cells,
                finest.vertices,
                bytes / GIB,
                m / GIB
            ),
        })
    }
}

/// Why `refinements` uniform refinements of a mesh of size `coarse` cannot
/// be held together (the hierarchy [`crate::multigrid::MeshHierarchy`]
/// keeps every level), with a `field` solved on the finest, in `memory`
/// bytes ([`Footprint::too_large`]); `None` if they can. The reason states
/// the most refinements that can, and why one more cannot, e.g. `20
/// refinements of 8 triangles give 8.796e12 triangles; at most 13 fit:
/// 14 give 2.147e9 triangles and …, which need at least …`.
pub fn refinements_too_many(
    coarse: &MeshSize,
    refinements: usize,
    field: Option<FieldSize>,
    memory: Option<u64>,
) -> Option<String> {
    // levels coarse to fine, grown until the request or the first too large
    let mut levels = vec![*coarse];
    let mut why = Footprint {
        meshes: &levels,
        field,
    }
    .too_large(memory);
    while why.is_none() && levels.len() <= refinements {
        let next = levels[levels.len() - 1].refined();
        levels.push(next);
        why = Footprint {
            meshes: &levels,
            field,
        }
        .too_large(memory);
    }
    let why = why?;
    let shape = coarse.shape();
    let failing = levels.len() - 1;
    if failing == 0 {
        return Some(format!("the mesh itself has {why}"));
    }
    let per_level = 2f64.powi(coarse.dim as i32);
    let cells = coarse.cells * per_level.powi(refinements.min(4096) as i32);
    Some(format!(
        "{refinements} refinements of {} {shape} give {cells:.3e} {shape}; at most {} fit: \
         {failing} give {why}",
        coarse.cells,
        failing - 1
    ))
}

/// The largest `n` in `lo..=hi` for which `fits(n)` holds, for a `fits`
/// that holds up to some `n` and not beyond (bisection); `None` if
/// `fits(lo)` does not hold.
pub fn largest(lo: usize, hi: usize, fits: impl Fn(usize) -> bool) -> Option<usize> {
    if lo > hi || !fits(lo) {
        return None;
    }
    if fits(hi) {
        return Some(hi);
    }
    // fits(good), not fits(bad)
    let (mut good, mut bad) = (lo, hi);
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if fits(mid) {
            good = mid;
        } else {
            bad = mid;
        }
    }
    Some(good)
}

/// This machine's memory in bytes, if known: the physical memory
/// (`MemTotal` of `/proc/meminfo`), or the control group's limit if that is
/// smaller (`/sys/fs/cgroup/memory.max`, or `memory.limit_in_bytes` of
/// cgroup v1: a container's share).
///
/// Read once per process (the files are not read again).
pub fn physical_memory() -> Option<u64> {
    static MEMORY: OnceLock<Option<u64>> = OnceLock::new();
    *MEMORY.get_or_init(read_memory)
}

/// [`physical_memory`], read now.
fn read_memory() -> Option<u64> {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let total = read("/proc/meminfo").and_then(|info| {
        let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    });
    let limit = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .filter_map(|p| read(p)?.trim().parse::<u64>().ok())
    .min();
    match (total, limit) {
        (Some(t), Some(l)) => Some(t.min(l)),
        (t, l) => t.or(l),
    }
}

/// Parses a count as people write them: `16777216`, `16_777_216`, `2^24`,
/// `1e6`, `16M` (10⁶), `4k` (10³), `1G` (10⁹) — a whole number from 1 to
/// 2⁵³ (beyond which `f64` no longer holds every integer). Whether a mesh
/// of that many cells fits is a separate question ([`Footprint`]).
///
/// ```
/// use femquad::mesh::size::parse_count;
///
/// assert_eq!(parse_count("2^24")?, 1 << 24);
/// assert_eq!(parse_count("1e6")?, 1_000_000);
/// assert_eq!(parse_count("16M")?, 16_000_000);
/// assert_eq!(parse_count("1e12")?, 1_000_000_000_000);
/// assert!(parse_count("1.5").is_err());
/// # Ok::<(), femquad::Error>(())
/// ```
///
/// # Errors
/// [`Error::InvalidArgument`] naming `count`: not a number in one of these
/// forms (the reason shows the forms), below 1, not whole, or above 2⁵³.
pub fn parse_count(s: &str) -> Result<usize> {
    let t = s.trim().replace('_', "");
    let bad = |why: String| Error::arg("count", why);
    let not_a_count = || {
        bad(format!(
            "`{s}` is not a count (write e.g. 16777216, 2^24, 1e6 or 16M)"
        ))
    };
    let number = |x: &str| x.parse::<f64>().map_err(|_| not_a_count());
    let value = if let Ok(n) = t.parse::<u64>() {
        n as f64
    } else if let Some((b, e)) = t.split_once('^') {
        let e: i32 = e.parse().map_err(|_| not_a_count())?;
        number(b)?.powi(e)
    } else if let Some(x) = t.strip_suffix(['k', 'K']) {
        number(x)? * 1e3
    } else if let Some(x) = t.strip_suffix(['m', 'M']) {
        number(x)? * 1e6
    } else if let Some(x) = t.strip_suffix(['g', 'G']) {
        number(x)? * 1e9
    } else {
        number(&t)?
    };
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if value.is_nan() {
        return Err(not_a_count());
    }
    if value < 1.0 {
        return Err(bad(format!("`{s}` must be at least 1")));
    }
    if value > EXACT {
        return Err(bad(format!(
            "`{s}` = {value:e} is above 2^53, where counts are no longer exact"
        )));
    }
    if value.fract() != 0.0 {
        return Err(bad(format!("`{s}` = {value} is not a whole number")));
    }
    Ok(value as usize)
}
