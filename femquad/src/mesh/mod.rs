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
//!
//! All whole-mesh operations run in parallel (rayon) and scale to meshes of
//! 2²⁵ cells and more; the ones that report an error report the one with the
//! smallest cell index, so results do not depend on the thread count.

use rayon::prelude::*;

use crate::{Error, Result};

pub mod generate;
pub mod gmsh;

pub use generate::{MAX_JITTER, MeshOptions, mesh_for_cells, unit_box, unit_cube, unit_square};
pub use gmsh::{GmshElement, GmshEntity, GmshMesh, PhysicalGroup, read_gmsh};

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
    OutOfRange { local: usize, index: u32 },
    Repeated { index: u32 },
    NonFinite { vertex: u32, coord: usize, value: f64 },
    Degenerate { det: f64, h: f64 },
    Inverted { det: f64 },
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
        if vertices.len() % dim != 0 {
            return Err(Error::InvalidMesh(format!(
                "{} coordinates is not a multiple of the dimension {dim}",
                vertices.len()
            )));
        }
        if cells.len() % (dim + 1) != 0 {
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
        let found = self
            .cells
            .par_chunks(k)
            .with_min_len(1024)
            .enumerate()
            .find_map_first(|(c, cell)| self.cell_defect(cell, nv).map(|d| (c, d)));
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
    fn cell_defect(&self, cell: &[u32], nv: usize) -> Option<CellDefect> {
        if let Some(d) = index_defect(cell, nv) {
            return Some(d);
        }
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
        let (det, h2) = simplex_geometry(self.dim, &self.vertices, cell);
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
    /// Every facet `(c, i)` (the facet of cell `c` opposite its local vertex
    /// `i`) is packed with its sorted vertex indices into one integer key,
    /// `((s_0·2^b + s_1)·2^b + s_2)·2^f + (c·(dim+1) + i)` with `b` bits per
    /// vertex index and `f` bits per facet index, and the keys are sorted in
    /// parallel (`u64` keys where they fit, `u128` otherwise). Equal vertex
    /// sets are then adjacent: a run of one is a boundary facet, a run of
    /// two an interior facet. Memory: 8 or 16 bytes per facet (a 3D mesh of
    /// 2²⁵ cells needs 2.1 GB); no hash table.
    ///
    /// Errors: [`Error::InvalidCell`] for a cell with an out-of-range or
    /// repeated vertex, or for the smallest cell on a facet shared by more
    /// than two cells (a non-manifold mesh).
    pub fn boundary_facets(&self) -> Result<Vec<BoundaryFacet>> {
        let (dim, k, nv) = (self.dim, self.vertices_per_cell(), self.n_vertices());
        let nc = self.n_cells();
        let bad = self
            .cells
            .par_chunks(k)
            .with_min_len(1024)
            .enumerate()
            .find_map_first(|(c, cell)| index_defect(cell, nv).map(|d| (c, d)));
        if let Some((cell, d)) = bad {
            return Err(Error::InvalidCell {
                cell,
                reason: d.reason(dim, nv),
            });
        }
        let bits_v = bits_for(nv);
        let bits_f = bits_for(nc * k);
        let total = dim as u32 * bits_v + bits_f;
        let ids = if total <= 64 {
            self.facet_runs::<u64>(bits_v, bits_f)?
        } else if total <= 128 {
            self.facet_runs::<u128>(bits_v, bits_f)?
        } else {
            return Err(Error::InvalidMesh(format!(
                "mesh too large for boundary detection: {nv} vertices and {} facets need \
                 {total} > 128 key bits",
                nc * k
            )));
        };
        Ok(ids
            .into_iter()
            .map(|id| {
                let (c, local) = (id as usize / k, id as usize % k);
                BoundaryFacet {
                    cell: c as u32,
                    local: local as u8,
                    vertices: self.facet_vertices(c, local),
                }
            })
            .collect())
    }

    /// Sorts the packed facet keys and returns the facet ids (`c·(dim+1) + i`)
    /// of the facets that occur once, sorted.
    fn facet_runs<K: FacetKey>(&self, bits_v: u32, bits_f: u32) -> Result<Vec<u64>> {
        let (dim, k) = (self.dim, self.vertices_per_cell());
        let mut keys: Vec<K> = self
            .cells
            .par_chunks(k)
            .with_min_len(1024)
            .enumerate()
            .flat_map_iter(|(c, cell)| {
                (0..k).map(move |i| {
                    let mut s = [0u32; 3];
                    let mut n = 0;
                    for (j, &v) in cell.iter().enumerate() {
                        if j != i {
                            s[n] = v;
                            n += 1;
                        }
                    }
                    s[..dim].sort_unstable();
                    let mut key: u128 = 0;
                    for &v in &s[..dim] {
                        key = (key << bits_v) | v as u128;
                    }
                    K::from_u128((key << bits_f) | (c * k + i) as u128)
                })
            })
            .collect();
        keys.par_sort_unstable();
        let id_mask = (1u128 << bits_f) - 1;
        let mut boundary = Vec::new();
        let mut non_manifold: Option<u64> = None;
        let mut i = 0;
        while i < keys.len() {
            let vertex_key = keys[i].to_u128() >> bits_f;
            let mut j = i + 1;
            while j < keys.len() && keys[j].to_u128() >> bits_f == vertex_key {
                j += 1;
            }
            let id = |x: K| (x.to_u128() & id_mask) as u64;
            match j - i {
                1 => boundary.push(id(keys[i])),
                2 => {}
                _ => {
                    // ids within a run are sorted: keys[i] has the smallest cell
                    let first = id(keys[i]);
                    non_manifold = Some(non_manifold.map_or(first, |m| m.min(first)));
                }
            }
            i = j;
        }
        if let Some(id) = non_manifold {
            let (c, local) = (id as usize / k, id as usize % k);
            let f = self.facet_vertices(c, local);
            return Err(Error::InvalidCell {
                cell: c,
                reason: format!(
                    "non-manifold mesh: its facet {local} (vertices {:?}) is shared by more \
                     than two cells",
                    &f[..dim]
                ),
            });
        }
        boundary.par_sort_unstable();
        Ok(boundary)
    }

    /// Mask of the vertices that lie on a boundary facet
    /// ([`Mesh::boundary_facets`]), `n_vertices` long.
    ///
    /// Errors as [`Mesh::boundary_facets`].
    pub fn boundary_vertices(&self) -> Result<Vec<bool>> {
        let mut mask = vec![false; self.n_vertices()];
        for f in self.boundary_facets()? {
            for &v in &f.vertices[..self.dim] {
                mask[v as usize] = true;
            }
        }
        Ok(mask)
    }
}

/// An unsigned integer type used as packed facet key in [`Mesh::boundary_facets`].
trait FacetKey: Copy + Ord + Send + Sync {
    fn from_u128(x: u128) -> Self;
    fn to_u128(self) -> u128;
}

impl FacetKey for u64 {
    #[inline]
    fn from_u128(x: u128) -> Self {
        x as u64
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self as u128
    }
}

impl FacetKey for u128 {
    #[inline]
    fn from_u128(x: u128) -> Self {
        x
    }
    #[inline]
    fn to_u128(self) -> u128 {
        self
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
        let edges: Vec<_> = b.iter().map(|f| (f.cell, f.local, f.vertex_slice())).collect();
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
    fn key_bits() {
        assert_eq!(bits_for(0), 1);
        assert_eq!(bits_for(1), 1);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(3), 2);
        assert_eq!(bits_for(1 << 20), 20);
        assert_eq!(bits_for((1 << 20) + 1), 21);
    }
}
