//! Simplicial meshes: triangles in 2D, tetrahedra in 3D.
//!
//! A [`Mesh`] is vertex coordinates (`n_vertices × dim`, `f64`) and cell
//! connectivity (`n_cells × (dim+1)` vertex indices, `u32`). Every cell is
//! positively oriented: `det J > 0` for the affine map `x = X_0 + J ξ` from
//! the reference simplex (see [`crate::layout`]), where column `i` of `J` is
//! `X_{i+1} − X_0`.
//!
//! * [`Mesh::new`] builds and validates a mesh; [`Mesh::validate`] states the
//!   rules; [`Mesh::reorient`] repairs inverted cells.
//! * [`Mesh::boundary_facets`] and [`Mesh::boundary_vertices`] find the
//!   boundary (for Dirichlet conditions); [`Mesh::h_max`],
//!   [`Mesh::cell_volume`] and [`Mesh::total_volume`] measure the mesh.
//! * [`generate`] builds structured meshes of the unit square and cube,
//!   optionally jittered and shuffled; [`gmsh`] reads Gmsh MSH 4.1 files.
//! * [`renumber`] renumbers vertices and cells for memory locality;
//!   [`mod@refine`] refines uniformly (multigrid hierarchies); [`edges`]
//!   numbers the global edges (P2 nodes, refinement midpoints).
//!
//! All whole-mesh operations run in parallel (rayon) and scale to meshes of
//! 2²⁵ cells and more; the ones that report an error report the one with the
//! smallest cell index, so results do not depend on the thread count.

use rayon::prelude::*;

use crate::{Error, Result};

pub mod edges;
pub mod generate;
pub mod gmsh;
pub mod refine;
pub mod renumber;

pub use edges::{MeshEdges, mesh_edges};
pub use generate::{
    MAX_JITTER, MeshOptions, mesh_for_cells, n_for_cells, unit_box, unit_cube, unit_square,
};
pub use gmsh::{GmshElement, GmshEntity, GmshMesh, PhysicalGroup, parse_gmsh, read_gmsh};
pub use refine::{Refinement, prepare_for_refinement, refine, refine_gmsh, refine_uniformly};
pub use renumber::{LocalityMetrics, Renumbering, locality_metrics, locality_renumbering};

/// Relative tolerance below which a cell counts as degenerate: a cell with
/// longest edge `h` is degenerate when `|det J| ≤ DEGENERACY_TOLERANCE · h^dim`.
///
/// `h^dim` is `dim!` times the volume of a right-angled simplex with legs
/// `h`, so the test is invariant under scaling of the mesh and flags cells
/// whose volume is ~10⁻¹² of what their size suggests (flat slivers and
/// collapsed cells), whose `J⁻¹` would be meaningless in floating point.
pub const DEGENERACY_TOLERANCE: f64 = 1e-12;

/// Local facets of a triangle: facet `i` is the edge opposite local vertex
/// `i`, listed so that the cell lies to its left (for a positively oriented
/// triangle the outward normal of the edge `(a, b)` is `(b − a)` rotated
/// clockwise by 90°).
pub const TRIANGLE_FACETS: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];

/// Local facets of a tetrahedron: facet `i` is the triangle opposite local
/// vertex `i`, listed so that `(b − a) × (c − a)` points out of a positively
/// oriented tetrahedron.
pub const TETRAHEDRON_FACETS: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

/// A conforming simplicial mesh in 2D or 3D.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    dim: usize,
    vertices: Vec<f64>,
    cells: Vec<u32>,
}

/// A facet (edge in 2D, triangle in 3D) that belongs to exactly one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BoundaryFacet {
    /// The cell the facet belongs to.
    pub cell: u32,
    /// Local index of the facet in its cell: the local vertex opposite to it
    /// (see [`TRIANGLE_FACETS`], [`TETRAHEDRON_FACETS`]).
    pub local: u8,
    /// The facet's vertices, ordered so that the facet is oriented outwards:
    /// in 2D the edge `(v0, v1)` has the domain on its left (outward normal
    /// `(y1 − y0, x0 − x1)`), in 3D `(X_{v1} − X_{v0}) × (X_{v2} − X_{v0})`
    /// is the outward normal. In 2D only `vertices[..2]` are used and
    /// `vertices[2]` is `u32::MAX`.
    pub vertices: [u32; 3],
}

impl BoundaryFacet {
    /// The facet's vertices: 2 in 2D, 3 in 3D (outward oriented, see the
    /// field `vertices`).
    pub fn vertex_slice(&self) -> &[u32] {
        if self.vertices[2] == u32::MAX {
            &self.vertices[..2]
        } else {
            &self.vertices[..]
        }
    }
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
            CellDefect::Inverted { det } => format!(
                "negatively oriented (det J = {}); Mesh::reorient swaps two vertices of such cells",
                num(det)
            ),
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
        let k = self.vertices_per_cell();
        let nv = self.n_vertices();
        let found =
            self.cells
                .par_chunks(k * BLOCK)
                .enumerate()
                .find_map_first(|(b, block)| {
                    block.chunks_exact(k).enumerate().find_map(|(j, cell)| {
                        self.cell_defect(cell, nv).map(|d| (b * BLOCK + j, d))
                    })
                });
        if let Some((cell, defect)) = found {
            return Err(Error::InvalidCell {
                cell,
                reason: defect.reason(self.dim, nv),
            });
        }
        let bad = self
            .vertices
            .par_iter()
            .with_min_len(4096)
            .position_first(|x| !x.is_finite());
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

    /// Makes every cell positively oriented by swapping its local vertices 1
    /// and 2 where `det J < 0` (the swap negates `det J` and keeps vertex 0),
    /// and returns how many cells were flipped.
    ///
    /// Cells with an out-of-range index, a non-finite coordinate or
    /// `det J ≥ 0` are left as they are; degenerate cells remain errors for
    /// [`Mesh::validate`].
    pub fn reorient(&mut self) -> usize {
        let (dim, k, nv) = (self.dim, self.vertices_per_cell(), self.n_vertices());
        let coords = &self.vertices;
        self.cells
            .par_chunks_mut(k)
            .with_min_len(1024)
            .map(|cell| {
                if cell.iter().any(|&v| v as usize >= nv) {
                    return 0;
                }
                let (det, _) = simplex_geometry(dim, coords, cell);
                if det < 0.0 {
                    cell.swap(1, 2);
                    1
                } else {
                    0
                }
            })
            .sum()
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

    /// Vertices of local facet `local` of cell `c`, outward oriented for a
    /// positively oriented cell (the convention of [`BoundaryFacet`]; in 2D
    /// the third entry is `u32::MAX`).
    ///
    /// Panics if `c ≥ n_cells` or `local > dim`.
    pub fn facet_vertices(&self, c: usize, local: usize) -> [u32; 3] {
        let cell = self.cell(c);
        if self.dim == 2 {
            let [a, b] = TRIANGLE_FACETS[local];
            [cell[a], cell[b], u32::MAX]
        } else {
            let [a, b, cc] = TETRAHEDRON_FACETS[local];
            [cell[a], cell[b], cell[cc]]
        }
    }

    /// The facets that belong to exactly one cell, sorted by `(cell, local)`.
    ///
    /// A facet is identified by its sorted vertex indices `s_0 < s_1 (< s_2)`.
    /// These are packed into integer keys and sorted: equal facets become
    /// adjacent, and a facet that occurs once is on the boundary, one that
    /// occurs twice is interior. To keep keys in 64 bits and the sorts in
    /// cache, the facets are first distributed (a counting sort, in
    /// parallel over chunks of cells) into `2^p` partitions by the high bits
    /// of `s_0`, and each partition is sorted on its own, in parallel; a key
    /// is the low bits of `s_0` followed by `s_1 (, s_2)`. A last parallel
    /// pass over the cells finds the `(cell, local)` of the boundary facets
    /// (by binary search, for facets whose vertices are all on the
    /// boundary). Time `O(F log(F/2^p))` for `F = (dim+1)·n_cells` facets;
    /// memory 8 bytes per facet; no hash table.
    ///
    /// Errors: [`Error::InvalidCell`] for the first cell with an
    /// out-of-range or repeated vertex, or for the smallest cell that has a
    /// facet shared by more than two cells (a non-manifold mesh);
    /// [`Error::InvalidMesh`] for a 3D mesh of more than 2²⁹ vertices.
    pub fn boundary_facets(&self) -> Result<Vec<BoundaryFacet>> {
        let boundary = self.boundary_keys()?;
        // a bit per vertex (2 MB for 2^24 vertices) stays in cache even when
        // the cells visit vertices in random order
        let mut bits = vec![0u64; self.n_vertices().div_ceil(64)];
        for f in &boundary {
            for &v in &f[..self.dim] {
                bits[v as usize / 64] |= 1 << (v % 64);
            }
        }
        let on = |v: u32| bits[v as usize / 64] >> (v % 64) & 1 == 1;
        let (dim, k) = (self.dim, self.vertices_per_cell());
        Ok(self
            .cells
            .par_chunks(k)
            .with_min_len(BLOCK)
            .enumerate()
            .flat_map_iter(|(c, cell)| {
                let (boundary, on) = (&boundary, &on);
                (0..k).filter_map(move |i| {
                    let on_boundary = cell.iter().enumerate().all(|(j, &v)| j == i || on(v));
                    (on_boundary && boundary.binary_search(&sorted_facet(dim, cell, i)).is_ok())
                        .then(|| BoundaryFacet {
                            cell: c as u32,
                            local: i as u8,
                            vertices: self.facet_vertices(c, i),
                        })
                })
            })
            .collect())
    }

    /// Mask of the vertices that lie on a boundary facet
    /// ([`Mesh::boundary_facets`]), `n_vertices` long.
    ///
    /// Errors as [`Mesh::boundary_facets`].
    pub fn boundary_vertices(&self) -> Result<Vec<bool>> {
        Ok(self.mask_of(&self.boundary_keys()?))
    }

    /// Mask of the vertices of the given facets.
    fn mask_of(&self, facets: &[[u32; 3]]) -> Vec<bool> {
        let mut mask = vec![false; self.n_vertices()];
        for f in facets {
            for &v in &f[..self.dim] {
                mask[v as usize] = true;
            }
        }
        mask
    }

    /// The sorted vertex triples (third entry 0 in 2D) of the facets that
    /// occur exactly once, in increasing order; see [`Mesh::boundary_facets`].
    fn boundary_keys(&self) -> Result<Vec<[u32; 3]>> {
        let (dim, k, nv, nc) = (
            self.dim,
            self.vertices_per_cell(),
            self.n_vertices(),
            self.n_cells(),
        );
        let bad = self
            .cells
            .par_chunks(k)
            .with_min_len(BLOCK)
            .enumerate()
            .find_map_first(|(c, cell)| index_defect(cell, nv).map(|d| (c, d)));
        if let Some((cell, d)) = bad {
            return Err(Error::InvalidCell {
                cell,
                reason: d.reason(dim, nv),
            });
        }
        if nc == 0 {
            return Ok(Vec::new());
        }
        let packing = FacetPacking::new(dim, nv)?;
        let parts = packing.parts();

        // counting sort into partitions, in parallel over chunks of cells
        let chunk_cells = nc.div_ceil(4 * rayon::current_num_threads()).max(BLOCK);
        let pieces: Vec<(Vec<usize>, Vec<u64>)> = self
            .cells
            .par_chunks(chunk_cells * k)
            .map(|cells| {
                let mut start = vec![0usize; parts + 1];
                for cell in cells.chunks_exact(k) {
                    for i in 0..k {
                        start[packing.part(&sorted_facet(dim, cell, i)) + 1] += 1;
                    }
                }
                for p in 0..parts {
                    start[p + 1] += start[p];
                }
                let mut cursor = start.clone();
                let mut keys = vec![0u64; cells.len()];
                for cell in cells.chunks_exact(k) {
                    for i in 0..k {
                        let f = sorted_facet(dim, cell, i);
                        let p = packing.part(&f);
                        keys[cursor[p]] = packing.key(&f);
                        cursor[p] += 1;
                    }
                }
                (start, keys)
            })
            .collect();

        // sort each partition; runs of one are boundary facets
        // per partition: the facets that occur once, and one that occurs
        // more than twice if any
        type PartResult = (Vec<[u32; 3]>, Option<[u32; 3]>);
        let per_part: Vec<PartResult> = (0..parts)
            .into_par_iter()
            .map(|p| {
                let len = pieces.iter().map(|(s, _)| s[p + 1] - s[p]).sum();
                let mut keys = Vec::with_capacity(len);
                for (start, piece) in &pieces {
                    keys.extend_from_slice(&piece[start[p]..start[p + 1]]);
                }
                keys.sort_unstable();
                let mut once = Vec::new();
                let mut shared: Option<[u32; 3]> = None;
                for run in keys.chunk_by(|a, b| a == b) {
                    match run.len() {
                        1 => once.push(packing.unpack(p, run[0])),
                        2 => {}
                        _ => {
                            shared.get_or_insert(packing.unpack(p, run[0]));
                        }
                    }
                }
                (once, shared)
            })
            .collect();
        drop(pieces);

        let shared: Vec<[u32; 3]> = per_part.iter().filter_map(|(_, s)| *s).collect();
        if !shared.is_empty() {
            // report the smallest cell with a facet shared by more than two cells
            let (c, i) = self
                .cells
                .par_chunks(k)
                .with_min_len(BLOCK)
                .enumerate()
                .find_map_first(|(c, cell)| {
                    (0..k)
                        .find(|&i| shared.contains(&sorted_facet(dim, cell, i)))
                        .map(|i| (c, i))
                })
                .unwrap_or((0, 0));
            let f = self.facet_vertices(c, i);
            return Err(Error::InvalidCell {
                cell: c,
                reason: format!(
                    "non-manifold mesh: its facet {i} (vertices {:?}) is shared by more than \
                     two cells",
                    &f[..dim]
                ),
            });
        }
        Ok(per_part.into_iter().flat_map(|(once, _)| once).collect())
    }
}

/// The vertices of the facet of `cell` opposite local vertex `i`, sorted
/// increasingly (third entry 0 in 2D).
#[inline]
fn sorted_facet(dim: usize, cell: &[u32], i: usize) -> [u32; 3] {
    let mut s = [0u32; 3];
    let mut n = 0;
    for (j, &v) in cell.iter().enumerate() {
        if j != i {
            s[n] = v;
            n += 1;
        }
    }
    if dim == 2 {
        if s[0] > s[1] {
            s.swap(0, 1);
        }
    } else {
        if s[0] > s[1] {
            s.swap(0, 1);
        }
        if s[1] > s[2] {
            s.swap(1, 2);
        }
        if s[0] > s[1] {
            s.swap(0, 1);
        }
    }
    s
}

/// Packing of a sorted facet `(s_0, s_1[, s_2])` into a partition (the high
/// `p` bits of `s_0`) and a 64-bit key (the other bits of `s_0`, then
/// `s_1[, s_2]`, `b` bits each).
struct FacetPacking {
    dim: usize,
    /// Bits per vertex index.
    b: u32,
    /// Partition bits.
    p: u32,
}

impl FacetPacking {
    fn new(dim: usize, nv: usize) -> Result<Self> {
        let b = bits_for(nv);
        // the key holds dim·b − p bits: at least dim·b − 64 partition bits;
        // 2^8 partitions for parallelism and cache-sized sorts (few enough
        // output streams for the counting sort)
        let p_min = (dim as u32 * b).saturating_sub(64);
        if p_min > 24 {
            return Err(Error::InvalidMesh(format!(
                "mesh too large for boundary detection ({nv} vertices)"
            )));
        }
        Ok(FacetPacking {
            dim,
            b,
            p: p_min.max(b.min(8)),
        })
    }

    fn parts(&self) -> usize {
        1 << self.p
    }

    #[inline]
    fn part(&self, f: &[u32; 3]) -> usize {
        (f[0] >> (self.b - self.p)) as usize
    }

    #[inline]
    fn key(&self, f: &[u32; 3]) -> u64 {
        let low = u128::from(f[0]) & ((1u128 << (self.b - self.p)) - 1);
        let mut key = low;
        for &v in &f[1..self.dim] {
            key = (key << self.b) | u128::from(v);
        }
        key as u64
    }

    fn unpack(&self, part: usize, key: u64) -> [u32; 3] {
        let mask = (1u64 << self.b) - 1;
        let mut f = [0u32; 3];
        let mut rest = key;
        for j in (1..self.dim).rev() {
            f[j] = (rest & mask) as u32;
            rest >>= self.b;
        }
        f[0] = ((part as u64) << (self.b - self.p) | rest) as u32;
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two triangles of the unit square, positively oriented.
    fn two_triangles() -> (Vec<f64>, Vec<u32>) {
        (
            vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
            vec![0, 1, 2, 0, 2, 3],
        )
    }

    fn cell_error(r: Result<Mesh>) -> (usize, String) {
        match r {
            Err(Error::InvalidCell { cell, reason }) => (cell, reason),
            other => panic!("expected InvalidCell, got {other:?}"),
        }
    }

    #[test]
    fn valid_mesh_and_measures() {
        let (v, c) = two_triangles();
        let m = Mesh::new(2, v, c).unwrap();
        assert_eq!(m.n_cells(), 2);
        assert_eq!(m.det_j(0), 1.0);
        assert_eq!(m.cell_volume(1), 0.5);
        assert_eq!(m.cell_diameter(0), 2f64.sqrt());
        assert_eq!(m.h_max(), 2f64.sqrt());
        assert_eq!(m.total_volume(), 1.0);
        // the reference tetrahedron: det J = 1, volume 1/6
        let t = Mesh::new(
            3,
            vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.],
            vec![0, 1, 2, 3],
        )
        .unwrap();
        assert_eq!(t.det_j(0), 1.0);
        assert_eq!(t.cell_volume(0), 1.0 / 6.0);
    }

    #[test]
    fn rejects_out_of_range_index() {
        let (v, mut c) = two_triangles();
        c[4] = 99;
        let (cell, reason) = cell_error(Mesh::new(2, v, c));
        assert_eq!(cell, 1);
        assert_eq!(
            reason,
            "vertex index 99 (local vertex 1) is out of range (4 vertices)"
        );
    }

    #[test]
    fn rejects_repeated_vertex() {
        let (v, mut c) = two_triangles();
        c[2] = 0;
        let (cell, reason) = cell_error(Mesh::new(2, v, c));
        assert_eq!(cell, 0);
        assert_eq!(reason, "vertex 0 is repeated");
    }

    #[test]
    fn rejects_inverted_cell_and_reorient_fixes_it() {
        let (v, mut c) = two_triangles();
        c.swap(4, 5); // cell 1 = (0, 3, 2): det J = -1
        let (cell, reason) = cell_error(Mesh::new(2, v.clone(), c.clone()));
        assert_eq!(cell, 1);
        assert!(
            reason.starts_with("negatively oriented (det J = -1)"),
            "{reason}"
        );
        let mut m = Mesh::from_raw(2, v, c).unwrap();
        assert_eq!(m.reorient(), 1);
        assert_eq!(m.cell(1), &[0, 2, 3]);
        assert_eq!(m.reorient(), 0);
        m.validate().unwrap();
    }

    #[test]
    fn reorients_tetrahedra_and_counts() {
        // the reference tet and its mirror image, both inverted by a swap
        let v = vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1., 0., 0., -1.];
        let c = vec![0, 2, 1, 3, 0, 1, 2, 4, 0, 1, 2, 3];
        let mut m = Mesh::from_raw(3, v, c).unwrap();
        assert_eq!(cell_error(m.validate().map(|_| m.clone())).0, 0);
        assert_eq!(m.reorient(), 2);
        m.validate().unwrap();
        for c in 0..3 {
            assert_eq!(m.det_j(c), 1.0);
        }
    }

    #[test]
    fn rejects_degenerate_cell_and_reorient_leaves_it() {
        // cell 1 has three collinear vertices
        let v = vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 2.0, 0.0];
        let c = vec![0, 1, 2, 0, 1, 3];
        let (cell, reason) = cell_error(Mesh::new(2, v.clone(), c.clone()));
        assert_eq!(cell, 1);
        assert_eq!(
            reason,
            "degenerate (det J = 0, below 1e-12·h^2 = 4e-12 for its longest edge h = 2)"
        );
        // nearly degenerate at scale 1e-3: det J = 1e-21 ≪ 1e-12·(1e-3)²
        let s = 1e-3;
        let v = vec![0.0, 0.0, s, 0.0, 0.5 * s, 1e-18];
        let (cell, reason) = cell_error(Mesh::new(2, v.clone(), vec![0, 1, 2]));
        assert_eq!(cell, 0);
        assert!(reason.starts_with("degenerate (det J = "), "{reason}");
        // but a tiny well-shaped cell is fine: the tolerance is relative
        Mesh::new(2, vec![0.0, 0.0, s, 0.0, 0.0, s], vec![0, 1, 2]).unwrap();
        let mut m = Mesh::from_raw(2, v, vec![0, 2, 1]).unwrap();
        assert_eq!(m.reorient(), 1);
        assert_eq!(cell_error(m.validate().map(|_| m.clone())).0, 0);
    }

    #[test]
    fn rejects_non_finite_coordinates() {
        let (mut v, c) = two_triangles();
        v[7] = f64::NAN; // y of vertex 3, used by cell 1 only
        let (cell, reason) = cell_error(Mesh::new(2, v, c));
        assert_eq!(cell, 1);
        assert_eq!(reason, "vertex 3 has a non-finite coordinate (y = NaN)");
        // an unused vertex with an infinite coordinate
        let (mut v, c) = two_triangles();
        v.extend([f64::INFINITY, 0.0]);
        match Mesh::new(2, v, c) {
            Err(Error::InvalidMesh(m)) => assert_eq!(
                m,
                "vertex 4 (used by no cell) has a non-finite coordinate (x = inf)"
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reports_the_smallest_bad_cell() {
        // 20000 copies of the two triangles; cells 7001 and 30001 are inverted
        let (v, c) = two_triangles();
        let mut cells: Vec<u32> = c.iter().cycle().take(6 * 20000).copied().collect();
        for bad in [30001usize, 7001] {
            cells.swap(bad * 3 + 1, bad * 3 + 2);
        }
        for _ in 0..3 {
            let (cell, _) = cell_error(Mesh::new(2, v.clone(), cells.clone()));
            assert_eq!(cell, 7001);
        }
    }

    #[test]
    fn from_raw_checks_shapes() {
        assert!(matches!(
            Mesh::from_raw(4, vec![], vec![]),
            Err(Error::InvalidMesh(_))
        ));
        assert!(matches!(
            Mesh::from_raw(2, vec![0.0; 3], vec![]),
            Err(Error::InvalidMesh(_))
        ));
        assert!(matches!(
            Mesh::from_raw(3, vec![0.0; 3], vec![0; 5]),
            Err(Error::InvalidMesh(_))
        ));
    }

    #[test]
    fn boundary_of_two_triangles() {
        let (v, c) = two_triangles();
        let m = Mesh::new(2, v, c).unwrap();
        let b = m.boundary_facets().unwrap();
        // the diagonal (0, 2) is interior; the four sides are boundary,
        // each oriented counterclockwise around the square
        let edges: Vec<_> = b
            .iter()
            .map(|f| (f.cell, f.local, f.vertex_slice()))
            .collect();
        assert_eq!(
            edges,
            vec![
                (0, 0, &[1u32, 2][..]),
                (0, 2, &[0, 1][..]),
                (1, 0, &[2, 3][..]),
                (1, 1, &[3, 0][..]),
            ]
        );
        assert_eq!(m.boundary_vertices().unwrap(), vec![true; 4]);
    }

    #[test]
    fn boundary_facets_of_a_tetrahedron_point_outwards() {
        let m = Mesh::new(
            3,
            vec![0., 0., 0., 1., 0., 0., 0., 1., 0., 0., 0., 1.],
            vec![0, 1, 2, 3],
        )
        .unwrap();
        let b = m.boundary_facets().unwrap();
        assert_eq!(b.len(), 4);
        let centroid = [0.25, 0.25, 0.25];
        for f in &b {
            let p: Vec<&[f64]> = f.vertices.iter().map(|&v| m.vertex(v as usize)).collect();
            let d = |i: usize| [0, 1, 2].map(|k| p[i][k] - p[0][k]);
            let (a, bb) = (d(1), d(2));
            let n = [
                a[1] * bb[2] - a[2] * bb[1],
                a[2] * bb[0] - a[0] * bb[2],
                a[0] * bb[1] - a[1] * bb[0],
            ];
            let out: f64 = (0..3).map(|k| n[k] * (p[0][k] - centroid[k])).sum();
            assert!(out > 0.0, "facet {f:?} points inwards");
            // the facet misses exactly its opposite vertex
            assert!(!f.vertices.contains(&(f.local as u32)));
        }
    }

    #[test]
    fn non_manifold_is_an_error() {
        // three triangles sharing the edge (0, 1)
        let v = vec![0.0, 0.0, 1.0, 0.0, 0.5, 1.0, 0.5, -1.0, 0.5, 2.0];
        let c = vec![0, 1, 2, 1, 0, 3, 0, 1, 4];
        let m = Mesh::new(2, v, c).unwrap();
        let (cell, reason) = cell_error(m.boundary_facets().map(|_| m.clone()));
        assert_eq!(cell, 0);
        assert_eq!(
            reason,
            "non-manifold mesh: its facet 2 (vertices [0, 1]) is shared by more than two cells"
        );
    }

    #[test]
    fn boundary_detects_bad_indices_without_panicking() {
        let m = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 7]).unwrap();
        assert_eq!(cell_error(m.boundary_facets().map(|_| m.clone())).0, 0);
    }

    #[test]
    fn facet_packing_round_trips() {
        let mut rng = crate::rng::Rng::new(9);
        for (dim, nv) in [
            (2, 3),
            (2, 1 << 20),
            (2, u32::MAX as usize),
            (3, 4),
            (3, 1 << 21),
            (3, (1 << 23) + 5),
            (3, 1 << 28),
        ] {
            let p = FacetPacking::new(dim, nv).unwrap();
            assert!(dim as u32 * p.b - p.p <= 64);
            let mut last = None;
            for _ in 0..1000 {
                let mut f = [0u32; 3];
                for v in &mut f[..dim] {
                    *v = rng.below(nv) as u32;
                }
                f[..dim].sort();
                let (part, key) = (p.part(&f), p.key(&f));
                assert!(part < p.parts());
                assert_eq!(p.unpack(part, key), f, "dim {dim} nv {nv}");
                // order of (part, key) is the lexicographic order of facets
                if let Some((g, pk)) = last {
                    assert_eq!((part, key).cmp(&pk), f.cmp(&g));
                }
                last = Some((f, (part, key)));
            }
        }
        // 2^32 vertices in 3D would need 2^32 partitions
        assert!(matches!(
            FacetPacking::new(3, u32::MAX as usize),
            Err(Error::InvalidMesh(_))
        ));
    }

    #[test]
    fn key_bits() {
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(3), 2);
        assert_eq!(bits_for(1 << 20), 20);
        assert_eq!(bits_for((1 << 20) + 1), 21);
    }
}
