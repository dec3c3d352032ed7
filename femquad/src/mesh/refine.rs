//! Uniform ("red") refinement of simplicial meshes, for geometric multigrid.
//!
//! [`refine`] splits every triangle into 4 and every tetrahedron into 8 by
//! the midpoints of its edges; [`refine_uniformly`] repeats it to build a
//! hierarchy; [`refine_gmsh`] refines a Gmsh mesh together with its boundary
//! elements, so that physical groups still resolve on the fine mesh.
//!
//! # Numbering
//! * **Vertices.** The coarse vertices keep their indices `0..n_v`; fine
//!   vertex `n_v + k` is the midpoint `(X_a + X_b)/2` of the coarse edge
//!   `[a, b] = edge_vertices()[k]` (`a < b`). The edges are numbered by
//!   **first touch**: scanning the coarse cells in order, and each cell's
//!   edges in [`crate::layout::simplex_edges`] order, every edge not met
//!   before gets the next number — the edges of cell 0 are `0, 1, 2, …`,
//!   and each later cell's new edges follow consecutively, in its local
//!   edge order. The new vertices are the nodes of the coarse P2
//!   space ([`crate::space`], same midpoint formula, bitwise the same
//!   points) in another order: P2 numbers the edges in the sorted order of
//!   [`super::edges::mesh_edges`] (increasing `(a, b)`), whose consecutive
//!   midpoints, ordered by their smaller endpoint, lie all over the domain.
//!   The first-touch order keeps the midpoints of neighbouring cells close
//!   in the numbering, and the cells' gathers local: on an H100 the CSR
//!   SpMV of the assembled P1 Laplacian on a 2^24-cell finest mesh of
//!   [`crate::multigrid::MeshHierarchy::new`] took 0.227 ms instead of
//!   0.262 in 2D f32 (f64 0.378 against 0.443; 3D f32 0.189 against 0.200,
//!   f64 0.268 against 0.291), the coarse vertices still first so that the
//!   hierarchy stays nested (`femquad-bench`'s `spmv_numbering`,
//!   `benchmarks/h100-2026-11-27-s12b`).
//! * **Cells.** The children of coarse cell `c` are the fine cells
//!   `2^dim·c + j`, `j < 2^dim` (4 in 2D, 8 in 3D), contiguous, so a coarse
//!   mesh renumbered for locality ([`super::renumber`]) gives a fine mesh
//!   whose cell order is as local, and a fine cell's parent is
//!   `fine / 2^dim` ([`Refinement::parent_cell`]).
//!
//! Hence the P1 prolongation (the interpolation of a coarse P1 function on
//! the fine mesh, which is exact because the spaces are nested) is
//! `u_f[v] = u_c[v]` for `v < n_v` and `u_f[n_v + k] = (u_c[a] + u_c[b])/2`
//! ([`Refinement::prolong_p1`]); its transpose is
//! [`Refinement::restrict_p1`].
//!
//! # Children
//! Children are listed by *local nodes* of the parent in P2 order (the
//! [`crate::layout`] convention): nodes `0..=dim` are its vertices, node
//! `dim + 1 + e` is the midpoint of its local edge `e` of
//! [`crate::layout::simplex_edges`].
//! * **Triangles** ([`TRIANGLE_CHILDREN`]): the three corner triangles and
//!   the middle one. All four are similar to the parent (the middle one
//!   rotated by π), so element quality never changes.
//! * **Tetrahedra** ([`TETRAHEDRON_CHILDREN`]): Bey's regular refinement
//!   (J. Bey, "Tetrahedral grid refinement", Computing 55, 1995): four
//!   corner tetrahedra and four around the interior diagonal `x₀₂–x₁₃`,
//!   with Bey's vertex order. Bey proves that refining a tetrahedron any
//!   number of times this way, each child in the vertex order the rule
//!   gives it, yields tetrahedra of at most 3 congruence classes: element
//!   quality stays bounded at every level, by a purely combinatorial rule.
//!   (Cutting the shortest diagonal at every level depends on the geometry
//!   and on how ties are broken; Bey's rule needs neither.) Which classes arise
//!   depends on the coarse vertex order only; [`prepare_for_refinement`]
//!   permutes each coarse tetrahedron's vertices (evenly) so that the first
//!   diagonal cut is its shortest, and [`refine_uniformly`] does so before
//!   its first level. In the tests the worst shape `h_max³/|det J|` of the
//!   whole hierarchy is then the coarse mesh's — 6.21 on a jittered Kuhn mesh,
//!   5.34 for one irregular tetrahedron — where refining the stored order
//!   gives 16.96 and, for the tetrahedron listed with its longest diagonal
//!   first, 31.30, at every level from the first on (bounded either way;
//!   the test `quality_stays_bounded`).
//!
//! **Orientation.** In Bey's order two of the eight children (his `T₆`,
//! `T₈`) are mirror images of the parent's orientation: `det J < 0` for a
//! positive parent. femquad requires `det J > 0`, so these two are stored
//! with their local vertices 0 and 2 swapped. That swap does not spoil
//! Bey's bound: it belongs to the group `D₄` of the 8 permutations of
//! `(0, 1, 2, 3)` that map the pair of edges `{02, 13}` onto itself, and
//! Bey's rule is `D₄`-equivariant — applying it to a `D₄`-reordered
//! tetrahedron gives the same 8 child point sets, each in a `D₄`-reordered
//! vertex order (checked exhaustively by the test
//! `bey_rule_is_equivariant_under_d4`). By induction every stored fine
//! tetrahedron is a `D₄`-reordering of the one pure Bey refinement would
//! produce, so the point sets, and their ≤ 3 congruence classes per coarse
//! tetrahedron, are Bey's.
//!
//! # Cost
//! `O(n log n)` (the edge numbering's parallel sort), the rest `O(n)` and
//! parallel, the first-touch numbering too (an atomic minimum per edge,
//! then a prefix sum over blocks of cell edges, rather than one serial
//! scan of all the cell edges); deterministic.
//! Release build, renumbered jittered squares (the `#[ignore]`d test
//! `timing_to_2_24_cells`, before the first-touch order), on a 16-core machine
//! (its 2-thread figures in parentheses): 4 199 202 → 16 796 808 triangles
//! in 0.40 s (1.2 s); two levels 1 051 250 → 16 820 000 in 0.35–0.49 s
//! (1.4 s). On the shared 2-core development machine under load: 1.2 s and
//! 2.3 s.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::edges::{MeshEdges, mesh_edges};
use super::renumber::invert;
use super::size::{Footprint, MeshSize, physical_memory, refinements_too_many};
use super::{BLOCK, GmshElement, GmshMesh, Mesh};
use crate::{Error, Real, Result};

/// Children of a triangle as local P2 nodes of the parent (vertices
/// `0, 1, 2`; edge midpoints `3 = (0,1)`, `4 = (1,2)`, `5 = (2,0)`), each
/// positively oriented for a positively oriented parent, with volume 1/4 of
/// the parent's.
pub const TRIANGLE_CHILDREN: [[usize; 3]; 4] = [[0, 3, 5], [3, 1, 4], [5, 4, 2], [4, 5, 3]];

/// Children of a tetrahedron as local P2 nodes of the parent (vertices
/// `0..4`; edge midpoints `4 = (0,1)`, `5 = (1,2)`, `6 = (2,0)`,
/// `7 = (0,3)`, `8 = (1,3)`, `9 = (2,3)`): Bey's children `T₁ … T₈` in his
/// order, `T₆` and `T₈` with local vertices 0 and 2 swapped for positive
/// orientation (see the [module documentation](self)). Each has volume 1/8
/// of the parent's.
pub const TETRAHEDRON_CHILDREN: [[usize; 4]; 8] = [
    [0, 4, 6, 7], // T1 = (x0, x01, x02, x03)
    [4, 1, 5, 8], // T2 = (x01, x1, x12, x13)
    [6, 5, 2, 9], // T3 = (x02, x12, x2, x23)
    [7, 8, 9, 3], // T4 = (x03, x13, x23, x3)
    [4, 6, 7, 8], // T5 = (x01, x02, x03, x13)
    [5, 6, 4, 8], // T6 = (x01, x02, x12, x13), 0 ↔ 2
    [6, 7, 8, 9], // T7 = (x02, x03, x13, x23)
    [8, 5, 6, 9], // T8 = (x02, x12, x13, x23), 0 ↔ 2
];

/// Children of a line element `(0, 1)` (a boundary edge, or a curve of a
/// 3D model) as local nodes (`2` = midpoint), in the line's direction.
const SEGMENT_CHILDREN: [[usize; 2]; 2] = [[0, 2], [2, 1]];

/// One level of uniform refinement: the fine mesh and how it relates to the
/// coarse one (see the [module documentation](self) for the numbering).
#[derive(Clone, Debug, PartialEq)]
pub struct Refinement {
    mesh: Mesh,
    n_coarse_vertices: usize,
    edge_vertices: Vec<[u32; 2]>,
}

impl Refinement {
    /// The fine mesh.
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    /// The fine mesh, dropping the relation to the coarse one.
    pub fn into_mesh(self) -> Mesh {
        self.mesh
    }

    /// The fine mesh and the edge vertices ([`Refinement::edge_vertices`]),
    /// moved out (no copy).
    pub fn into_parts(self) -> (Mesh, Vec<[u32; 2]>) {
        (self.mesh, self.edge_vertices)
    }

    /// Number of coarse vertices `n_v`: fine vertices `0..n_v` are the coarse
    /// vertices.
    pub fn n_coarse_vertices(&self) -> usize {
        self.n_coarse_vertices
    }

    /// Number of coarse cells (`n_fine_cells / 2^dim`).
    pub fn n_coarse_cells(&self) -> usize {
        self.mesh.n_cells() / self.children_per_cell()
    }

    /// Children per coarse cell, `2^dim`: 4 triangles or 8 tetrahedra.
    pub fn children_per_cell(&self) -> usize {
        1 << self.mesh.dim()
    }

    /// The coarse endpoints `[a, b]` (`a < b`) of each new vertex: fine
    /// vertex `n_coarse_vertices() + k` is the midpoint of `edge_vertices()[k]`.
    /// The coarse mesh's edges in first-touch order (see the
    /// [module documentation](self)), not [`mesh_edges`]' sorted order.
    pub fn edge_vertices(&self) -> &[[u32; 2]] {
        &self.edge_vertices
    }

    /// The coarse cell that fine cell `fine` lies in: `fine / 2^dim`.
    pub fn parent_cell(&self, fine: usize) -> usize {
        fine / self.children_per_cell()
    }

    /// The fine cells of coarse cell `coarse`: `2^dim·coarse .. 2^dim·(coarse + 1)`.
    pub fn children(&self, coarse: usize) -> Range<usize> {
        let n = self.children_per_cell();
        n * coarse..n * (coarse + 1)
    }

    /// P1 prolongation `u_f = P u_c` of a field with `n_comp` components
    /// (node-major, `u[v·n_comp + j]`): `u_f[v] = u_c[v]` for coarse vertices
    /// `v`, `u_f[n_v + k] = (u_c[a] + u_c[b])/2` for edge `k = [a, b]`. The
    /// fine P1 function equals the coarse one everywhere (nested spaces).
    ///
    /// Errors: [`Error::InvalidArgument`] (`coarse`) unless
    /// `coarse.len() == n_coarse_vertices·n_comp`, `n_comp ≥ 1`.
    pub fn prolong_p1<R: Real>(&self, coarse: &[R], n_comp: usize) -> Result<Vec<R>> {
        let nv = self.n_coarse_vertices;
        check_field("coarse", coarse.len(), nv, n_comp)?;
        let half = R::from_f64(0.5);
        let mut fine = vec![R::ZERO; self.mesh.n_vertices() * n_comp];
        let (head, tail) = fine.split_at_mut(nv * n_comp);
        head.copy_from_slice(coarse);
        tail.par_chunks_mut(n_comp)
            .with_min_len(BLOCK)
            .zip(self.edge_vertices.par_iter())
            .for_each(|(out, &[a, b])| {
                let (a, b) = (a as usize * n_comp, b as usize * n_comp);
                for (j, o) in out.iter_mut().enumerate() {
                    *o = (coarse[a + j] + coarse[b + j]) * half;
                }
            });
        Ok(fine)
    }

    /// The transpose `Pᵀ r_f` of [`Refinement::prolong_p1`] (restriction of
    /// a residual): `r_c[v] = r_f[v] + ½ Σ_{k : v ∈ edge k} r_f[n_v + k]`,
    /// per component. It runs serially over the edges, in edge order
    /// (`O(n_edges)`, a scattered sum that parallel threads would race on).
    ///
    /// Errors: [`Error::InvalidArgument`] (`fine`) unless
    /// `fine.len() == n_fine_vertices·n_comp`, `n_comp ≥ 1`.
    pub fn restrict_p1<R: Real>(&self, fine: &[R], n_comp: usize) -> Result<Vec<R>> {
        let nv = self.n_coarse_vertices;
        check_field("fine", fine.len(), self.mesh.n_vertices(), n_comp)?;
        let half = R::from_f64(0.5);
        let mut coarse = fine[..nv * n_comp].to_vec();
        let edge_values = &fine[nv * n_comp..];
        for (k, &[a, b]) in self.edge_vertices.iter().enumerate() {
            for j in 0..n_comp {
                let r = edge_values[k * n_comp + j] * half;
                coarse[a as usize * n_comp + j] += r;
                coarse[b as usize * n_comp + j] += r;
            }
        }
        Ok(coarse)
    }
}

fn check_field(name: &'static str, len: usize, n: usize, n_comp: usize) -> Result<()> {
    if n_comp == 0 || len != n * n_comp {
        return Err(Error::arg(
            name,
            format!("has {len} entries, expected {n} vertices × {n_comp} components (n_comp ≥ 1)"),
        ));
    }
    Ok(())
}

/// One level of uniform refinement of `mesh` (see the
/// [module documentation](self)): triangles into 4, tetrahedra into 8 by
/// [`TETRAHEDRON_CHILDREN`] in the stored vertex order, every child
/// positively oriented with `det J_child = det J_parent / 2^dim`. Repeated
/// calls refine by Bey's rule throughout; [`refine_uniformly`] first applies
/// [`prepare_for_refinement`], for better shapes.
///
/// `mesh` must pass [`Mesh::validate`] (checked: then every child is valid
/// too). A non-conforming mesh is refined cell by cell, and stays
/// non-conforming.
///
/// Errors: those of [`Mesh::validate`] (naming the cell); those of
/// [`mesh_edges`]; [`Error::InvalidArgument`] (`mesh`) if the fine mesh
/// would have more than `u32::MAX` vertices or cells, or the two meshes
/// together need more memory than this machine has ([`super::size`]),
/// checked before the fine mesh is allocated.
pub fn refine(mesh: &Mesh) -> Result<Refinement> {
    mesh.validate()?;
    let edges = mesh_edges(mesh)?;
    let touch = first_touch(&edges);
    refine_with_edges(mesh, edges, &touch)
}

/// A hierarchy of `levels` uniform refinements of `mesh`, for multigrid:
/// element 0 refines [`prepare_for_refinement`]`(mesh)`, element `l`
/// refines the mesh of element `l − 1` ([`refine`]), so the last one holds
/// the finest mesh, with `2^(dim·levels)` times the cells of `mesh`. Empty
/// for `levels = 0`.
///
/// The preparation only permutes the local vertices of tetrahedra evenly;
/// vertices, cells and their numbers are those of `mesh`, so the relations
/// of element 0 (edge vertices, parents, prolongation) hold for `mesh`
/// itself. It keeps the worst element shape of the whole hierarchy that of
/// `mesh` in the tests (2.7× and 5.9× better than refining the stored order
/// of a jittered Kuhn mesh and of an irregular tetrahedron; see the
/// [module documentation](self)).
///
/// Errors: [`check_refinements`] first (too many levels for this machine,
/// refused before anything is allocated); then as [`refine`].
pub fn refine_uniformly(mesh: &Mesh, levels: usize) -> Result<Vec<Refinement>> {
    check_refinements(mesh, levels)?;
    let mut out: Vec<Refinement> = Vec::with_capacity(levels);
    if levels == 0 {
        return Ok(out);
    }
    out.push(refine(&prepare_for_refinement(mesh)?)?);
    for _ in 1..levels {
        let next = refine(out[out.len() - 1].mesh())?;
        out.push(next);
    }
    Ok(out)
}

/// Checks, before anything is allocated, that `mesh` and `refinements`
/// uniform refinements of it can be held together on this machine, as a
/// refinement hierarchy holds them ([`crate::multigrid::MeshHierarchy`],
/// [`refine_uniformly`]): the finest mesh's cells and vertices must fit
/// `u32` indices and a lower bound of the meshes' memory must fit this
/// machine's ([`super::size::refinements_too_many`]; each level has
/// `2^dim` times the cells of the one before, so a few levels too many
/// exceed any memory).
///
/// Errors: [`Error::InvalidArgument`] naming `refinements`, with the
/// reason and the most refinements of this mesh that fit, e.g. `20
/// refinements of 8 triangles give 8.796e12 triangles; at most 13 fit: 14
/// give 2.147e9 triangles and 1.074e9 vertices, which need at least … GiB
/// (coordinates and cells with the 14 coarser levels), more than this
/// machine's … GiB of memory`.
pub fn check_refinements(mesh: &Mesh, refinements: usize) -> Result<()> {
    let size = MeshSize::of(mesh);
    match refinements_too_many(&size, refinements, None, physical_memory()) {
        Some(why) => Err(Error::arg("refinements", why)),
        None => Ok(()),
    }
}

/// The relative difference of squared diagonal lengths below which
/// [`prepare_for_refinement`] takes two diagonals as equally long (far above
/// the rounding of their few operations, far below any geometric choice).
pub const DIAGONAL_TIE: f64 = 1e-10;

/// `mesh` with the local vertices of every tetrahedron permuted evenly (so
/// `det J` is unchanged) such that the interior diagonal that [`refine`]
/// cuts, `x₀₂–x₁₃` (midpoints of local edges `(0,2)` and `(1,3)`), is the
/// shortest of the three (`x₀₁–x₂₃`, `x₀₃–x₁₂` the others); the current one
/// is kept unless another is shorter by more than a relative
/// [`DIAGONAL_TIE`] of its squared length (ties up to rounding — every Kuhn
/// cube of `i/n` coordinates has exact ties, which rounding would break
/// either way from cell to cell — keep the current order), then the
/// shortest taken, `x₀₁–x₂₃` on a tie. The squared lengths are rounded
/// alike whatever the vertex order (`((x_a + x_b) − (x_c + x_d))²` per
/// coordinate), so preparing is idempotent, and a distributed hierarchy of
/// a prepared coarse mesh has the levels of
/// [`crate::multigrid::MeshHierarchy::new`]. Triangles (all of whose
/// children are similar to them) are unchanged.
///
/// Bey's bound (≤ 3 congruence classes) holds for any starting order; the
/// classes depend on it, and starting from the shortest diagonal gives the
/// best ones in practice: on a Kuhn mesh it reproduces Freudenthal's
/// subdivision, whose children are all congruent to Kuhn tetrahedra.
/// Used by [`refine_uniformly`] before its first level.
///
/// Errors: [`Error::InvalidCell`] for the first cell with a vertex index out
/// of range or repeated.
pub fn prepare_for_refinement(mesh: &Mesh) -> Result<Mesh> {
    let (dim, nv) = (mesh.dim(), mesh.n_vertices());
    let k = mesh.vertices_per_cell();
    let bad = super::first_index_defect(mesh.cells(), k, nv);
    if let Some((cell, d)) = bad {
        return Err(Error::InvalidCell {
            cell,
            reason: d.reason(dim, nv),
        });
    }
    let mut cells = mesh.cells().to_vec();
    if dim == 3 {
        cells
            .par_chunks_mut(4)
            .with_min_len(BLOCK)
            .for_each(|cell| {
                let x = |i: usize| mesh.vertex(cell[i] as usize);
                // |x_ab − x_cd|², up to the factor 4, rounded the same for
                // any order of the vertices (sums commute, the square is
                // even), so that preparing a prepared mesh keeps it
                let diagonal = |a: usize, b: usize, c: usize, d: usize| -> f64 {
                    (0..3)
                        .map(|i| ((x(a)[i] + x(b)[i]) - (x(c)[i] + x(d)[i])).powi(2))
                        .sum()
                };
                let (d02, d01, d03) = (
                    diagonal(0, 2, 1, 3),
                    diagonal(0, 1, 2, 3),
                    diagonal(0, 3, 1, 2),
                );
                // shorter than the current one beyond rounding
                let shorter = |d: f64| d < d02 * (1.0 - DIAGONAL_TIE);
                let c = [cell[0], cell[1], cell[2], cell[3]];
                if !shorter(d01) && !shorter(d03) {
                    // the current diagonal is (one of) the shortest
                } else if d01 <= d03 {
                    // (1, 2, 0, 3): even; its pairs (0,2), (1,3) are the old (1,0), (2,3)
                    cell.copy_from_slice(&[c[1], c[2], c[0], c[3]]);
                } else {
                    // (0, 2, 3, 1): even; its pairs are the old (0,3), (2,1)
                    cell.copy_from_slice(&[c[0], c[2], c[3], c[1]]);
                }
            });
    }
    Mesh::from_raw(dim, mesh.vertices().to_vec(), cells)
}

/// The first-touch numbering `σ` of the edges of a mesh (the order of the
/// new vertices of its refinement): `σ[e]`, for edge `e` of `edges`
/// ([`mesh_edges`]' sorted numbering), is the number of distinct edges met
/// before it when the cells are scanned in order and each cell's edges in
/// [`crate::layout::simplex_edges`] order (`edges.cell_edges_all()`). So
/// the edges of cell 0 get `0, 1, 2, …` in its local edge order, and every
/// later cell gives the edges no earlier cell has the next numbers, in its
/// local edge order. A permutation of `0..n_edges` (every edge is an edge
/// of some cell).
///
/// `O(n_cells)` and parallel: each edge's first slot in
/// `cell_edges_all()` (an atomic minimum over its slots), then the first
/// slots numbered in slot order — each block of slots counts its first
/// slots, a prefix sum over the blocks gives each block its first number.
/// Deterministic (the minimum and the counts do not depend on the order
/// the threads run in).
pub(crate) fn first_touch(edges: &MeshEdges) -> Vec<u32> {
    let slots = edges.cell_edges_all();
    let first: Vec<AtomicUsize> = (0..edges.n_edges())
        .into_par_iter()
        .map(|_| AtomicUsize::new(usize::MAX))
        .collect();
    slots
        .par_iter()
        .enumerate()
        .with_min_len(BLOCK)
        .for_each(|(s, &e)| {
            first[e as usize].fetch_min(s, Ordering::Relaxed);
        });
    // the first slots of block b, in order, get numbers from start[b] on
    let counts: Vec<u32> = slots
        .par_chunks(BLOCK)
        .enumerate()
        .map(|(b, block)| first_slots(&first, b, block).count() as u32)
        .collect();
    let start: Vec<u32> = counts
        .iter()
        .scan(0u32, |next, &c| {
            let s = *next;
            *next += c;
            Some(s)
        })
        .collect();
    let sigma: Vec<AtomicU32> = (0..edges.n_edges())
        .into_par_iter()
        .map(|_| AtomicU32::new(u32::MAX))
        .collect();
    slots.par_chunks(BLOCK).enumerate().for_each(|(b, block)| {
        for (k, e) in first_slots(&first, b, block).enumerate() {
            sigma[e as usize].store(start[b] + k as u32, Ordering::Relaxed);
        }
    });
    sigma.into_par_iter().map(AtomicU32::into_inner).collect()
}

/// The edges whose first slot (`first[e]`, an index into the cell edges) is
/// in `block`, block `b` of [`BLOCK`] slots, in slot order.
fn first_slots<'a>(
    first: &'a [AtomicUsize],
    b: usize,
    block: &'a [u32],
) -> impl Iterator<Item = u32> + 'a {
    block
        .iter()
        .enumerate()
        .filter(move |&(i, &e)| first[e as usize].load(Ordering::Relaxed) == b * BLOCK + i)
        .map(|(_, &e)| e)
}

/// The refinement of a valid `mesh` whose edges are `edges`, numbered by
/// `touch` ([`first_touch`]`(&edges)`): the midpoint of edge `e` is fine
/// vertex `n_v + touch[e]`.
fn refine_with_edges(mesh: &Mesh, edges: MeshEdges, touch: &[u32]) -> Result<Refinement> {
    let (dim, k) = (mesh.dim(), mesh.vertices_per_cell());
    let (nv, ne, nc) = (mesh.n_vertices(), edges.n_edges(), mesh.n_cells());
    let n_children = 1usize << dim;
    let coarse = MeshSize {
        edges: ne as f64,
        ..MeshSize::of(mesh)
    };
    let both = [coarse, coarse.refined()];
    if let Some(why) = (Footprint {
        meshes: &both,
        field: None,
    })
    .too_large(physical_memory())
    {
        return Err(Error::arg(
            "mesh",
            format!("refined, its {nc} {} would give {why}", coarse.shape()),
        ));
    }
    // the edges in first-touch order: edge_vertices[touch[e]] = endpoints of e
    let edge_vertices: Vec<[u32; 2]> = invert(touch)
        .into_par_iter()
        .map(|e| edges.endpoints()[e as usize])
        .collect();
    // cells: the children of coarse cell c at 2^dim·c + j
    let mut cells = vec![0u32; nc * n_children * k];
    let ne_cell = edges.edges_per_cell();
    cells
        .par_chunks_mut(n_children * k)
        .with_min_len(BLOCK / n_children)
        .zip(mesh.cells().par_chunks(k))
        .zip(edges.cell_edges_all().par_chunks(ne_cell))
        .for_each(|((out, cell), cell_edges)| {
            // the parent's local P2 nodes as fine vertices
            let mut nodes = [0u32; 10];
            nodes[..k].copy_from_slice(cell);
            for (n, &e) in nodes[k..k + ne_cell].iter_mut().zip(cell_edges) {
                *n = (nv + touch[e as usize] as usize) as u32;
            }
            if dim == 2 {
                write_children(out, &TRIANGLE_CHILDREN, &nodes);
            } else {
                write_children(out, &TETRAHEDRON_CHILDREN, &nodes);
            }
        });
    drop(edges);
    // vertices: the coarse ones, then the edge midpoints
    let mut vertices = vec![0.0; (nv + ne) * dim];
    let (head, tail) = vertices.split_at_mut(nv * dim);
    head.copy_from_slice(mesh.vertices());
    tail.par_chunks_mut(dim)
        .with_min_len(BLOCK)
        .zip(edge_vertices.par_iter())
        .for_each(|(x, &[a, b])| {
            let (xa, xb) = (mesh.vertex(a as usize), mesh.vertex(b as usize));
            for d in 0..dim {
                x[d] = 0.5 * (xa[d] + xb[d]);
            }
        });
    let fine = Mesh::from_raw(dim, vertices, cells)?;
    // Valid by construction (each child is an affine image of a reference
    // child with det J_parent / 2^dim > 0); checked in debug builds.
    if cfg!(debug_assertions) {
        fine.validate()?;
    }
    Ok(Refinement {
        mesh: fine,
        n_coarse_vertices: nv,
        edge_vertices,
    })
}

/// Writes the children `table` of a parent with local P2 nodes `nodes`.
fn write_children<const K: usize>(out: &mut [u32], table: &[[usize; K]], nodes: &[u32; 10]) {
    for (child, local) in out.chunks_exact_mut(K).zip(table) {
        for (v, &l) in child.iter_mut().zip(local) {
            *v = nodes[l];
        }
    }
}

/// Refines a Gmsh mesh: the mesh as [`refine`], and the lower-dimensional
/// elements with it, so that every physical group resolves on the fine mesh
/// to the refinement of what it was.
///
/// * **Cells:** fine cell `2^dim·c + j` inherits `cell_entities[c]`.
/// * **Elements**, in the original order, each replaced by its children in
///   turn, with its `entity`: a point stays a point; a line `(a, b)` becomes
///   `(a, m), (m, b)` with `m` its midpoint vertex; a triangle (of a 3D
///   mesh) becomes the 4 triangles of [`TRIANGLE_CHILDREN`], which keep its
///   orientation (normal direction). So [`GmshMesh::group_vertices`] of a
///   boundary group returns the fine vertices on that boundary, and
///   [`GmshMesh::group_cells`] of a domain group the children of its cells.
/// * **`node_tags`:** coarse vertices keep theirs; new vertex `n_v + k`
///   (the midpoint of edge `k` in [`refine`]'s first-touch order) gets
///   `t_max + 1 + k`, `t_max` the largest coarse node tag.
/// * **`cell_tags` and element tags** are all new, so that no fine element
///   reuses the tag of a different coarse one: with `T` the largest coarse
///   element tag (cells and elements), fine cell `i` gets `T + 1 + i` and
///   the fine elements `T + 1 + n_fine_cells + i` in order. The parent of
///   fine cell `i` is coarse cell `i / 2^dim`.
/// * `entities`, `physical_groups`, `reoriented` and `second_order` are
///   copied (the last two describe how the coarse file was read).
///
/// Cells are refined in their stored order, like [`refine`]; to start a
/// hierarchy from the shortest diagonals, set
/// `gmsh.mesh = prepare_for_refinement(&gmsh.mesh)?` first (it only permutes
/// local vertices, so the rest of the [`GmshMesh`] stays valid).
///
/// Errors: those of [`refine`]; [`Error::InvalidArgument`] (`gmsh`) if a tag
/// array's length differs from the mesh's counts, or an element (named by
/// its tag) has the wrong number of vertices for its dimension, a vertex
/// out of range, or an edge that no cell has.
pub fn refine_gmsh(gmsh: &GmshMesh) -> Result<GmshMesh> {
    refine_gmsh_with_edges(gmsh).map(|(fine, _)| fine)
}

/// [`refine_gmsh`], with the refinement's edges: fine vertex `n_v + k` is
/// the midpoint of the returned `[a, b] = edges[k]`, as
/// [`Refinement::edge_vertices`] of [`refine`]`(&gmsh.mesh)`.
pub(crate) fn refine_gmsh_with_edges(gmsh: &GmshMesh) -> Result<(GmshMesh, Vec<[u32; 2]>)> {
    let mesh = &gmsh.mesh;
    let (nv, nc) = (mesh.n_vertices(), mesh.n_cells());
    gmsh.check_parts()?;
    mesh.validate()?;
    let edges = mesh_edges(mesh)?;
    let touch = first_touch(&edges);
    let n_edges = edges.n_edges();
    let n_children = 1 << mesh.dim();
    let n_fine_cells = nc * n_children;

    let mut elements = Vec::with_capacity(gmsh.elements.len() * 4);
    for e in &gmsh.elements {
        let bad = |why: String| Error::arg("gmsh", format!("element {}: {why}", e.tag));
        // local P2 nodes of the element: its vertices, then its edge midpoints
        let mut nodes = e.vertices.clone();
        let element_edges: &[[usize; 2]] = match e.dim {
            0 => &[],
            1 => &[[0, 1]],
            _ => &crate::layout::TRIANGLE_EDGES,
        };
        for &[i, j] in element_edges {
            let (a, b) = (e.vertices[i], e.vertices[j]);
            let k = edges
                .find(a, b)
                .ok_or_else(|| bad(format!("its edge ({a}, {b}) is not an edge of any cell")))?;
            nodes.push((nv + touch[k as usize] as usize) as u32);
        }
        let children: Vec<Vec<u32>> = match e.dim {
            0 => vec![nodes],
            1 => SEGMENT_CHILDREN
                .iter()
                .map(|c| c.iter().map(|&l| nodes[l]).collect())
                .collect(),
            _ => TRIANGLE_CHILDREN
                .iter()
                .map(|c| c.iter().map(|&l| nodes[l]).collect())
                .collect(),
        };
        for vertices in children {
            elements.push(GmshElement {
                tag: 0, // numbered below
                dim: e.dim,
                entity: e.entity,
                vertices,
            });
        }
    }

    let refinement = refine_with_edges(mesh, edges, &touch)?;
    let max_node_tag = gmsh.node_tags.iter().copied().max().unwrap_or(0);
    let max_tag = gmsh
        .cell_tags
        .iter()
        .chain(gmsh.elements.iter().map(|e| &e.tag))
        .copied()
        .max()
        .unwrap_or(0);
    let node_tags = gmsh
        .node_tags
        .iter()
        .copied()
        .chain((0..n_edges as u64).map(|k| max_node_tag + 1 + k))
        .collect();
    let cell_tags = (0..n_fine_cells as u64).map(|i| max_tag + 1 + i).collect();
    for (i, e) in elements.iter_mut().enumerate() {
        e.tag = max_tag + 1 + (n_fine_cells + i) as u64;
    }
    let cell_entities = gmsh
        .cell_entities
        .par_iter()
        .flat_map_iter(|&entity| std::iter::repeat_n(entity, n_children))
        .collect();
    let (fine, edge_vertices) = refinement.into_parts();
    let fine = GmshMesh {
        mesh: Arc::new(fine),
        reoriented: gmsh.reoriented,
        second_order: gmsh.second_order,
        node_tags,
        cell_tags,
        cell_entities,
        elements,
        entities: gmsh.entities.clone(),
        physical_groups: gmsh.physical_groups.clone(),
    };
    Ok((fine, edge_vertices))
}

#[cfg(test)]
mod tests;
