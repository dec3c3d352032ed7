//! Simplicial meshes: triangles in 2D, tetrahedra in 3D.
//!
//! A [`Mesh`] is vertex coordinates (`n_vertices × dim`, `f64`) and cell
//! connectivity (`n_cells × (dim+1)` vertex indices, `u32`). Every cell is
//! positively oriented: `det J > 0` for the affine map `x = X_0 + J ξ` from
//! the reference simplex (see [`crate::layout`]), where column `i` of `J` is
//! `X_{i+1} − X_0`.
//!
//! * [`Mesh::new`] builds and validates a mesh; [`Mesh::validate`] states the
//!   rules; [`Mesh::reorient`] makes a mesh written clockwise positively
//!   oriented, and refuses a tangled one.
//! * [`Mesh::boundary_facets`] and [`Mesh::boundary_vertices`] find the
//!   boundary; a [`MeshPart`] (the boundary, boundary facets chosen by a
//!   predicate, Gmsh physical groups) is where a Dirichlet condition fixes
//!   the dofs of a space; a [`FacetSet`](crate::facet::FacetSet) (the
//!   same choices) is where a boundary term is integrated; [`Mesh::h_max`],
//!   [`Mesh::cell_volume`] and [`Mesh::total_volume`] measure the mesh.
//! * [`generate`] builds structured meshes of the unit square and cube,
//!   optionally jittered and shuffled; [`gmsh`] reads Gmsh MSH 4.1 files.
//! * [`renumber`] renumbers vertices and cells for memory locality;
//!   [`mod@refine`] refines uniformly (multigrid hierarchies); [`edges`]
//!   numbers the global edges (P2 nodes; the refinement's midpoints, which
//!   it renumbers by first touch).
//! * [`size`] checks the size of a mesh, a refinement hierarchy or a solve
//!   against `u32` indices and this machine's memory before anything is
//!   allocated, and parses cell counts (`1e6`, `16M`, `2^24`).
//!
//! All whole-mesh operations run in parallel (rayon) and scale to meshes of
//! 2²⁵ cells and more; the ones that report an error report the one with the
//! smallest cell index, so results do not depend on the thread count.

use rayon::prelude::*;

use crate::{Error, Result};

mod boundary;
pub mod edges;
pub mod generate;
pub mod gmsh;
mod orientation;
mod part;
pub mod refine;
pub mod renumber;
pub mod size;
#[cfg(test)]
mod size_tests;

pub use boundary::{BoundaryFacet, TETRAHEDRON_FACETS, TRIANGLE_FACETS};
pub use edges::{MeshEdges, mesh_edges};
pub use generate::{
    MAX_JITTER, MeshOptions, mesh_for_cells, n_for_cells, unit_box, unit_cube, unit_square,
};
pub use gmsh::{
    GmshElement, GmshEntity, GmshMesh, GmshNumbering, GmshOptions, PhysicalGroup, parse_gmsh,
    parse_gmsh_with, read_gmsh, read_gmsh_with,
};
pub use part::MeshPart;
pub use refine::{
    Refinement, check_refinements, prepare_for_refinement, refine, refine_gmsh, refine_uniformly,
};
pub use renumber::{LocalityMetrics, Renumbering, locality_metrics, locality_renumbering};

/// Relative tolerance below which a cell counts as degenerate: a cell with
/// longest edge `h` is degenerate when `|det J| ≤ DEGENERACY_TOLERANCE · h^dim`.
///
/// `h^dim` is `dim!` times the volume of a right-angled simplex with legs
/// `h`, so the test is invariant under scaling of the mesh and flags cells
/// whose volume is ~10⁻¹² of what their size suggests (flat slivers and
/// collapsed cells), whose `J⁻¹` would be meaningless in floating point.
pub const DEGENERACY_TOLERANCE: f64 = 1e-12;

/// A conforming simplicial mesh in 2D or 3D.
///
/// Vertex coordinates are stored vertex-major (`n_vertices × dim`), cells
/// as `dim + 1` vertex indices each (`n_cells × (dim + 1)`), positively
/// oriented. The generators ([`unit_square`], [`unit_cube`]) and the Gmsh
/// reader ([`read_gmsh`]) make meshes; [`Mesh::new`] takes your own arrays:
///
/// ```
/// use femquad::prelude::*;
///
/// // the unit square as two counterclockwise triangles
/// let vertices = vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
/// let mesh = Mesh::new(2, vertices, vec![0, 1, 2, 0, 2, 3])?;
/// assert_eq!((mesh.dim(), mesh.n_vertices(), mesh.n_cells()), (2, 4, 2));
/// assert_eq!(mesh.cell(1), &[0, 2, 3]);
/// assert_eq!(mesh.vertex(2), &[1.0, 1.0]);
/// assert_eq!((mesh.det_j(0), mesh.cell_volume(0)), (1.0, 0.5));
/// assert!((mesh.total_volume() - 1.0).abs() < 1e-15);
/// // a clockwise (negatively oriented) cell is refused by the checked constructor
/// assert!(Mesh::new(2, vec![0.0, 0.0, 0.0, 1.0, 1.0, 0.0], vec![0, 1, 2]).is_err());
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    dim: usize,
    vertices: Vec<f64>,
    cells: Vec<u32>,
}

/// What is wrong with one cell (formatted into [`Error::InvalidCell`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum CellDefect {
    OutOfRange {
        local: usize,
        index: u32,
    },
    Repeated {
        index: u32,
    },
    NonFinite {
        vertex: u32,
        coord: usize,
        value: f64,
    },
    Degenerate {
        det: f64,
        h: f64,
    },
    Inverted {
        det: f64,
    },
}

impl CellDefect {
    fn reason(self, dim: usize, n_vertices: usize) -> String {
        match self {
            CellDefect::OutOfRange { local, index } => format!(
                "vertex index {index} (local vertex {local}) is out of range ({n_vertices} vertices)"
            ),
            CellDefect::Repeated { index } => {
                format!("vertex {index} is repeated")
            }
            CellDefect::NonFinite {
                vertex,
                coord,
                value,
            } => format!(
                "vertex {vertex} has a non-finite coordinate ({} = {value})",
                ["x", "y", "z"][coord.min(2)]
            ),
            CellDefect::Degenerate { det, h } => format!(
                "degenerate (det J = {}, below {DEGENERACY_TOLERANCE:e}·h^{dim} = {} for its \
                 longest edge h = {})",
                num(det),
                num(DEGENERACY_TOLERANCE * h.powi(dim as i32)),
                num(h)
            ),
            CellDefect::Inverted { det } => {
                format!("negatively oriented (det J = {})", num(det))
            }
        }
    }
}

/// Formats a number readably: plain for moderate magnitudes, scientific otherwise.
fn num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || (1e-4..1e6).contains(&a) || !a.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// `det J` and the squared longest edge of a simplex whose vertices are in
/// range. `J` has columns `X_{i+1} − X_0`.
#[inline]
fn simplex_geometry(dim: usize, coords: &[f64], cell: &[u32]) -> (f64, f64) {
    if dim == 2 {
        let p = |v: u32| {
            let i = v as usize * 2;
            [coords[i], coords[i + 1]]
        };
        let (a, b, c) = (p(cell[0]), p(cell[1]), p(cell[2]));
        let e1 = [b[0] - a[0], b[1] - a[1]];
        let e2 = [c[0] - a[0], c[1] - a[1]];
        let e3 = [c[0] - b[0], c[1] - b[1]];
        let det = e1[0] * e2[1] - e1[1] * e2[0];
        let h2 = (e1[0] * e1[0] + e1[1] * e1[1])
            .max(e2[0] * e2[0] + e2[1] * e2[1])
            .max(e3[0] * e3[0] + e3[1] * e3[1]);
        (det, h2)
    } else {
        let p = |v: u32| {
            let i = v as usize * 3;
            [coords[i], coords[i + 1], coords[i + 2]]
        };
        let x = [p(cell[0]), p(cell[1]), p(cell[2]), p(cell[3])];
        let d = |i: usize, j: usize| [x[j][0] - x[i][0], x[j][1] - x[i][1], x[j][2] - x[i][2]];
        let (a, b, c) = (d(0, 1), d(0, 2), d(0, 3));
        let det = a[0] * (b[1] * c[2] - b[2] * c[1]) - b[0] * (a[1] * c[2] - a[2] * c[1])
            + c[0] * (a[1] * b[2] - a[2] * b[1]);
        let n2 = |v: [f64; 3]| v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        let h2 = n2(a)
            .max(n2(b))
            .max(n2(c))
            .max(n2(d(1, 2)))
            .max(n2(d(1, 3)))
            .max(n2(d(2, 3)));
        (det, h2)
    }
}

/// The combinatorial defects of a cell: an index out of range or a repeated vertex.
#[inline]
fn index_defect(cell: &[u32], n_vertices: usize) -> Option<CellDefect> {
    for (local, &v) in cell.iter().enumerate() {
        if v as usize >= n_vertices {
            return Some(CellDefect::OutOfRange { local, index: v });
        }
        if cell[..local].contains(&v) {
            return Some(CellDefect::Repeated { index: v });
        }
    }
    None
}

/// The first cell of `cells` (`k` vertices each) with an [`index_defect`],
/// and its defect. Parallel over blocks of [`BLOCK`] cells, each searched
/// serially: rayon's search item by item costs several times the check
/// itself (measured 6× on 16.6 M triangles, 2 threads).
fn first_index_defect(cells: &[u32], k: usize, n_vertices: usize) -> Option<(usize, CellDefect)> {
    cells
        .par_chunks(k * BLOCK)
        .enumerate()
        .find_map_first(|(b, block)| {
            block
                .chunks_exact(k)
                .enumerate()
                .find_map(|(j, cell)| index_defect(cell, n_vertices).map(|d| (b * BLOCK + j, d)))
        })
}

/// `dim!` for dim 2 or 3.
fn factorial(dim: usize) -> f64 {
    (1..=dim).product::<usize>() as f64
}

/// Cells per task in whole-mesh loops.
const BLOCK: usize = 4096;

/// Number of bits needed to store every value in `0..n` (at least 1).
fn bits_for(n: usize) -> u32 {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1)
}

impl Mesh {
    /// Builds a mesh from coordinates (`n_vertices × dim`) and connectivity
    /// (`n_cells × (dim+1)`), without validating the cells.
    ///
    /// Use [`Mesh::new`] unless the input is known to be valid.
    pub fn from_raw(dim: usize, vertices: Vec<f64>, cells: Vec<u32>) -> Result<Mesh> {
        if dim != 2 && dim != 3 {
            return Err(Error::InvalidMesh(format!(
                "dimension {dim} is not supported (2 or 3)"
            )));
        }
        if !vertices.len().is_multiple_of(dim) {
            return Err(Error::InvalidMesh(format!(
                "{} coordinates is not a multiple of the dimension {dim}",
                vertices.len()
            )));
        }
        if !cells.len().is_multiple_of(dim + 1) {
            return Err(Error::InvalidMesh(format!(
                "{} cell indices is not a multiple of {} vertices per cell",
                cells.len(),
                dim + 1
            )));
        }
        if vertices.len() / dim > u32::MAX as usize {
            return Err(Error::InvalidMesh(format!(
                "{} vertices do not fit 32-bit vertex indices",
                vertices.len() / dim
            )));
        }
        Ok(Mesh {
            dim,
            vertices,
            cells,
        })
    }

    /// Builds a mesh and checks it with [`Mesh::validate`]: the checked
    /// constructor.
    ///
    /// `vertices` holds `n_vertices × dim` coordinates (vertex-major),
    /// `cells` holds `n_cells × (dim+1)` vertex indices (cell-major).
    pub fn new(dim: usize, vertices: Vec<f64>, cells: Vec<u32>) -> Result<Mesh> {
        let mesh = Mesh::from_raw(dim, vertices, cells)?;
        mesh.validate()?;
        Ok(mesh)
    }

    /// Checks that the mesh is usable by the integrators.
    ///
    /// For every cell `c`, in this order:
    /// 1. every vertex index is `< n_vertices`;
    /// 2. no vertex appears twice;
    /// 3. every coordinate of its vertices is finite;
    /// 4. it is not degenerate: `|det J| > DEGENERACY_TOLERANCE · h^dim`
    ///    with `h` its longest edge ([`DEGENERACY_TOLERANCE`]);
    /// 5. it is positively oriented: `det J > 0`, `J = [X_1 − X_0, …, X_dim − X_0]`.
    ///
    /// Then every coordinate of every vertex (also of vertices no cell uses)
    /// is finite.
    ///
    /// Returns [`Error::InvalidCell`] for the invalid cell with the smallest
    /// index (whatever the number of threads), with a reason such as
    /// `"negatively oriented (det J = -0.25); …"`, or [`Error::InvalidMesh`]
    /// naming a non-finite unused vertex. Conformity (facets shared by at
    /// most two cells) is checked by [`Mesh::boundary_facets`].
    pub fn validate(&self) -> Result<()> {
        if let Some((cell, defect)) = self.first_defect(true) {
            let mut reason = defect.reason(self.dim, self.n_vertices());
            if let CellDefect::Inverted { .. } = defect {
                reason.push_str(
                    "; if the mesh, or a region of it, is written clockwise, Mesh::reorient \
                     flips its cells (it refuses a tangled mesh)",
                );
            }
            return Err(Error::InvalidCell { cell, reason });
        }
        let bad = self
            .vertices
            .par_chunks(BLOCK)
            .enumerate()
            .find_map_first(|(b, block)| {
                let i = block.iter().position(|x| !x.is_finite())?;
                Some(b * BLOCK + i)
            });
        if let Some(i) = bad {
            return Err(Error::InvalidMesh(format!(
                "vertex {} (used by no cell) has a non-finite coordinate ({} = {})",
                i / self.dim,
                ["x", "y", "z"][i % self.dim],
                self.vertices[i]
            )));
        }
        Ok(())
    }

    /// The invalid cell with the smallest index and its first defect, or
    /// `None` if every cell is valid (the cell checks of [`Mesh::validate`];
    /// a negative orientation counts only if `orientation`).
    fn first_defect(&self, orientation: bool) -> Option<(usize, CellDefect)> {
        let k = self.vertices_per_cell();
        let nv = self.n_vertices();
        let counts = |d: &CellDefect| orientation || !matches!(d, CellDefect::Inverted { .. });
        self.cells
            .par_chunks(k * BLOCK)
            .enumerate()
            .find_map_first(|(b, block)| {
                block.chunks_exact(k).enumerate().find_map(|(j, cell)| {
                    let d = self.cell_defect(cell, nv).filter(counts)?;
                    Some((b * BLOCK + j, d))
                })
            })
    }

    /// The first defect of one cell, or `None` if the cell is valid.
    #[inline]
    fn cell_defect(&self, cell: &[u32], nv: usize) -> Option<CellDefect> {
        if let Some(d) = index_defect(cell, nv) {
            return Some(d);
        }
        let (det, h2) = simplex_geometry(self.dim, &self.vertices, cell);
        // every vertex is on an edge, so a non-finite coordinate makes h2
        // non-finite: look for it only then
        if !h2.is_finite() || !det.is_finite() {
            for &v in cell {
                for (coord, &value) in self.vertex(v as usize).iter().enumerate() {
                    if !value.is_finite() {
                        return Some(CellDefect::NonFinite {
                            vertex: v,
                            coord,
                            value,
                        });
                    }
                }
            }
        }
        let h = h2.sqrt();
        if det.abs() <= DEGENERACY_TOLERANCE * h.powi(self.dim as i32) {
            return Some(CellDefect::Degenerate { det, h });
        }
        if det < 0.0 {
            return Some(CellDefect::Inverted { det });
        }
        None
    }

    /// Spatial dimension (2 or 3).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vertices.
    pub fn n_vertices(&self) -> usize {
        self.vertices.len() / self.dim
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.cells.len() / (self.dim + 1)
    }

    /// Vertices per cell, `dim + 1`.
    pub fn vertices_per_cell(&self) -> usize {
        self.dim + 1
    }

    /// All coordinates, `n_vertices × dim`.
    pub fn vertices(&self) -> &[f64] {
        &self.vertices
    }

    /// All cell vertex indices, `n_cells × (dim+1)`.
    pub fn cells(&self) -> &[u32] {
        &self.cells
    }

    /// Coordinates of vertex `v`.
    pub fn vertex(&self, v: usize) -> &[f64] {
        &self.vertices[v * self.dim..(v + 1) * self.dim]
    }

    /// Vertex indices of cell `c`.
    pub fn cell(&self, c: usize) -> &[u32] {
        let k = self.dim + 1;
        &self.cells[c * k..(c + 1) * k]
    }

    /// `det J` of cell `c` (signed), `J = [X_1 − X_0, …, X_dim − X_0]`.
    ///
    /// Panics if `c` or one of its vertex indices is out of range (a mesh
    /// that passed [`Mesh::validate`] has none).
    pub fn det_j(&self, c: usize) -> f64 {
        simplex_geometry(self.dim, &self.vertices, self.cell(c)).0
    }

    /// Volume (area in 2D) of cell `c`: `|det J| / dim!`.
    ///
    /// Panics as [`Mesh::det_j`].
    pub fn cell_volume(&self, c: usize) -> f64 {
        self.det_j(c).abs() / factorial(self.dim)
    }

    /// Diameter of cell `c`: its longest edge `max_{i<j} |X_i − X_j|` (the
    /// diameter of a simplex is attained at two vertices).
    ///
    /// Panics as [`Mesh::det_j`].
    pub fn cell_diameter(&self, c: usize) -> f64 {
        simplex_geometry(self.dim, &self.vertices, self.cell(c))
            .1
            .sqrt()
    }

    /// Mesh size `h = max_c diam(c)`, the longest edge of the mesh (the `h`
    /// of convergence tables); `0` for a mesh without cells.
    ///
    /// Panics if a vertex index is out of range.
    pub fn h_max(&self) -> f64 {
        let k = self.vertices_per_cell();
        self.cells
            .par_chunks(k)
            .with_min_len(1024)
            .map(|cell| simplex_geometry(self.dim, &self.vertices, cell).1)
            .reduce(|| 0.0, f64::max)
            .sqrt()
    }

    /// Total volume (area in 2D) `Σ_c |det J_c| / dim!`.
    ///
    /// Summed in fixed blocks of cells and then over blocks in order, so the
    /// result is bit-for-bit the same for any number of threads.
    ///
    /// Panics if a vertex index is out of range.
    pub fn total_volume(&self) -> f64 {
        const BLOCK: usize = 4096;
        let k = self.vertices_per_cell();
        let partial: Vec<f64> = self
            .cells
            .par_chunks(k * BLOCK)
            .map(|block| {
                block
                    .chunks_exact(k)
                    .map(|cell| simplex_geometry(self.dim, &self.vertices, cell).0.abs())
                    .sum::<f64>()
            })
            .collect();
        partial.iter().sum::<f64>() / factorial(self.dim)
    }
}

#[cfg(test)]
mod tests;
