//! Renumbering vertices and cells for memory locality.
//!
//! A kernel that walks the cells in order and gathers (scatters) vertex
//! data through the connectivity reads `u[cell[c][i]]`. When neighbouring
//! cells have nearby numbers and their vertices have nearby numbers, those
//! reads hit cache lines (and GPU L2 sectors) that were just loaded; on a
//! randomly numbered mesh almost every read is a miss.
//! [`locality_renumbering`] computes such a numbering, [`Renumbering`]
//! applies it to a mesh ([`Renumbering::apply`]), a Gmsh mesh with its
//! boundary elements and tags ([`Renumbering::apply_to_gmsh`]), and moves
//! vertex and cell data between the two numberings.
//!
//! # Method: Hilbert order of cell centroids, vertices by first touch
//! 1. Each cell's centroid is quantized on a `2^b × 2^b (× 2^b)` grid
//!    spanning the bounding box of the vertices (one scale for all axes), and
//!    mapped to its index along the Hilbert curve of that grid (Skilling's
//!    transpose algorithm, J. Skilling, "Programming the Hilbert curve",
//!    AIP Conf. Proc. 707, 2004).
//! 2. Cells are sorted by `(Hilbert index, old cell index)`: the new cell
//!    order. The pair is packed in one `u64` (`b = ⌊(64 − bits(n_cells))/dim⌋`
//!    bits per axis, 20 in 2D and 13 in 3D at 2²⁴ cells), so the sort is a
//!    parallel sort of distinct integers: deterministic.
//! 3. Vertices are numbered in the order in which the new cell sequence
//!    first touches them (cell by cell, local vertices in order): vertex `v`
//!    gets the rank of `min{c·(dim+1) + i : cell c has v as local vertex i}`.
//!    The cells' vertex lists are gathered in the new order in parallel, in
//!    chunks, and scanned in order against a bit set of the vertices seen
//!    (`n_vertices/8` bytes, which stays in cache). Vertices that no cell
//!    uses come last, in their old order.
//!
//! Cost: `O(n log n)` for the sort, the rest `O(n)`; all parallel but the
//! first-touch scan, which streams through memory. The result does not
//! depend on the number of threads. Memory: 8 bytes per cell of
//! temporaries; a [`Renumbering`] keeps both directions of both
//! permutations, 8 bytes per vertex and 8 per cell.
//!
//! # Why a space-filling curve rather than reverse Cuthill–McKee
//! Measured by the `#[ignore]`d test `compare_orders` ([`LocalityMetrics`]:
//! span = max − min of a cell's vertex numbers, jump = distance between the
//! smallest vertex numbers of consecutive cells, warp sectors = 32-byte
//! sectors of an `f32` vertex array read per cell by a warp of 32
//! consecutive cells) on shuffled, jittered structured meshes. Hilbert and
//! Morton number vertices by first touch; RCM orders the vertex graph
//! (breadth-first from a pseudo-peripheral vertex, neighbours by degree,
//! reversed) and then the cells by their (smallest, largest) vertex. Times
//! on 16 cores; the test's RCM (breadth-first search) and Morton code are
//! serial.
//!
//! | 4 199 202 triangles | mean span | p95 span | mean jump | warp sectors / cell | time |
//! |---|---|---|---|---|---|
//! | shuffled (input) | 1 051 052 | 1 817 674 | 450 669 | 3.00 | |
//! | RCM | 967 | 1 414 | 1 | 0.190 | 3.47 s |
//! | Morton | 1 458 | 698 | 815 | 0.254 | 1.66 s |
//! | **Hilbert** | 1 764 | 655 | 664 | 0.217 | 0.27 s |
//!
//! | 4 088 832 tetrahedra | mean span | p95 span | mean jump | warp sectors / cell | time |
//! |---|---|---|---|---|---|
//! | shuffled (input) | 423 051 | 636 093 | 125 331 | 4.00 | |
//! | RCM | 5 849 | 7 905 | 0 | 0.213 | 2.25 s |
//! | Morton | 8 003 | 37 419 | 3 950 | 0.369 | 1.50 s |
//! | **Hilbert** | 8 556 | 26 721 | 3 354 | 0.321 | 0.18 s |
//!
//! Both RCM and Hilbert improve every measure by two to three orders of
//! magnitude over the shuffled numbering, and a warp's gather by 14× (2D)
//! and 12× (3D). RCM is better at the scale of a few cells: its mean span
//! is 1.5–1.8× smaller and its warp reads 1.1× (2D) to 1.5× (3D) fewer
//! sectors, because consecutive cells share their smallest vertex; Hilbert
//! has the smaller 95th-percentile span in 2D, and its jumps are the rare
//! long ones of cells whose vertices were numbered by a neighbour far
//! back on the curve. At the scale of a GPU's L2 cache (windows of 2¹⁶
//! cells) both read every sector about once — 0.064 (RCM) and 0.065
//! (Hilbert) sectors per cell in 2D, 0.025 and 0.027 in 3D (0.5M-cell
//! meshes) — so the DRAM traffic of a gather, which is what a device-
//! resident operator pays, is the same. Hilbert is chosen because it is
//! one parallel integer sort, 12–13× faster here and deterministic on any
//! number of threads, while RCM's breadth-first search is sequential (it
//! would take seconds at 2²⁴ cells whatever the core count); and because
//! contiguous ranges of Hilbert-ordered cells are compact pieces of the
//! domain (good for splitting work among threads or devices) where RCM's
//! are thin layers. Morton is dominated by Hilbert.
//!
//! # Timing
//! Release build, shuffled jittered squares, 16-core machine (its 2-thread
//! figures in parentheses): 2²² cells (4 199 202) in 0.26–0.37 s
//! (1.1–1.25 s), [`Renumbering::apply`] 0.02 s (0.16 s); 2²⁴ cells
//! (16 785 218, 8.4M vertices) in 1.1 s, `apply` 0.1 s. On the shared
//! 2-core development machine, loaded by other builds, 2²² cells took
//! 1.7–4 s. (The `#[ignore]`d test `timing_2_22_cells`, its size set by
//! `FEMQUAD_LOG2_CELLS`; the `mesh_ops` group of `benches/mesh.rs`.)

use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

use rayon::prelude::*;

use super::{BLOCK, CellDefect, GmshElement, GmshMesh, Mesh, bits_for};
use crate::{Error, Result};

/// A renumbering of the vertices and cells of a mesh: two permutations and
/// their inverses.
///
/// Vertex `v` of the old mesh is vertex `vertex_new_of_old()[v]` of the new
/// one, and `vertex_old_of_new()` is the inverse; likewise for cells. A
/// renumbered mesh has `new_vertices[vertex_new_of_old[v]] = old_vertices[v]`
/// and `new_cell(cell_new_of_old[c])[i] = vertex_new_of_old[old_cell(c)[i]]`:
/// every cell keeps its local vertex order, hence its orientation and its
/// reference map up to relabelling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Renumbering {
    vertex_new_of_old: Vec<u32>,
    vertex_old_of_new: Vec<u32>,
    cell_new_of_old: Vec<u32>,
    cell_old_of_new: Vec<u32>,
}

/// Locality measures of a mesh's numbering ([`locality_metrics`]).
///
/// Small spans mean that a cell's vertices have nearby numbers (they share
/// cache lines, and were loaded by recent cells); small jumps mean that
/// consecutive cells use nearby vertex ranges; `warp_sectors_per_cell`
/// models the memory transactions of a GPU gather.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalityMetrics {
    /// Mean over cells of the span `max_i v_i − min_i v_i` of the cell's
    /// vertex numbers `v_0, …, v_dim`.
    pub mean_span: f64,
    /// 95th percentile of the span: the span of cell `⌊0.95·n_cells⌋` in
    /// increasing order of span.
    pub p95_span: u32,
    /// Mean over consecutive cells `c − 1, c` of `|min_i v_i(c) − min_i v_i(c − 1)|`,
    /// the distance between the starts of their vertex-number ranges.
    pub mean_jump: f64,
    /// Number of distinct 32-byte sectors of a scalar `f32` vertex array
    /// (vertices `8s … 8s + 7` form sector `s`) read by each group of 32
    /// consecutive cells (one GPU warp gathering one value per cell vertex),
    /// summed over the groups and divided by `n_cells`. At most `dim + 1`
    /// (every read its own sector), at least about
    /// `n_vertices / (8·n_cells)` (every sector read once).
    pub warp_sectors_per_cell: f64,
}

/// Computes the [`LocalityMetrics`] of `mesh`'s numbering (in parallel;
/// the result does not depend on the thread count).
///
/// Errors: [`Error::InvalidCell`] for the first cell with a vertex index out
/// of range.
pub fn locality_metrics(mesh: &Mesh) -> Result<LocalityMetrics> {
    check_indices(mesh)?;
    let k = mesh.vertices_per_cell();
    let n = mesh.n_cells();
    if n == 0 {
        return Ok(LocalityMetrics {
            mean_span: 0.0,
            p95_span: 0,
            mean_jump: 0.0,
            warp_sectors_per_cell: 0.0,
        });
    }
    let min = |c: usize| *mesh.cell(c).iter().min().unwrap_or(&0);
    let mut spans: Vec<u32> = mesh
        .cells()
        .par_chunks(k)
        .with_min_len(BLOCK)
        .map(|c| c.iter().max().unwrap_or(&0) - c.iter().min().unwrap_or(&0))
        .collect();
    // integer sums: exact, whatever the thread count
    let span_sum: u64 = spans.par_iter().map(|&s| u64::from(s)).sum();
    let jump_sum: u64 = (1..n)
        .into_par_iter()
        .with_min_len(BLOCK)
        .map(|c| u64::from(min(c).abs_diff(min(c - 1))))
        .sum();
    let sectors: usize = mesh
        .cells()
        .par_chunks(32 * k)
        .with_min_len(BLOCK / 32)
        .map(|group| {
            let mut s: Vec<u32> = group.iter().map(|&v| v / 8).collect();
            s.sort_unstable();
            s.dedup();
            s.len()
        })
        .sum();
    let p95_span = *spans.select_nth_unstable((n * 95 / 100).min(n - 1)).1;
    Ok(LocalityMetrics {
        mean_span: span_sum as f64 / n as f64,
        p95_span,
        mean_jump: jump_sum as f64 / (n - 1).max(1) as f64,
        warp_sectors_per_cell: sectors as f64 / n as f64,
    })
}

/// The locality renumbering of `mesh`: cells in Hilbert order of their
/// centroids, vertices in order of first touch (see the
/// [module documentation](self) for the method and why).
///
/// Errors: [`Error::InvalidCell`] for the first cell with a vertex index out
/// of range; [`Error::InvalidMesh`] naming the first vertex with a
/// non-finite coordinate.
pub fn locality_renumbering(mesh: &Mesh) -> Result<Renumbering> {
    check_indices(mesh)?;
    check_cell_count(mesh)?;
    check_finite(mesh)?;
    let order = hilbert_cell_order(mesh);
    Renumbering::from_cell_order(mesh, order)
}

impl Mesh {
    /// This mesh renumbered for locality ([`locality_renumbering`] then
    /// [`Renumbering::apply`]), and the renumbering, to carry data across.
    ///
    /// Errors as [`locality_renumbering`].
    pub fn renumbered_for_locality(&self) -> Result<(Mesh, Renumbering)> {
        let r = locality_renumbering(self)?;
        Ok((r.apply(self)?, r))
    }
}

impl Renumbering {
    /// The renumbering with the given cell order (`cell_old_of_new[c']` is
    /// the old index of new cell `c'`) and vertices numbered by first touch
    /// in that order: vertex `v` gets the rank of its first slot
    /// `min{c'·(dim+1) + i : new cell c' has v as local vertex i}` (the
    /// cells are scanned in the new order, local vertices in order, against
    /// a bit set of the vertices seen); vertices of no cell follow, in their
    /// old order.
    ///
    /// Errors: [`Error::InvalidArgument`] (`cell_old_of_new`) if it is not a
    /// permutation of `0..n_cells` (naming the first bad position);
    /// [`Error::InvalidCell`] for the first cell with a vertex index out of
    /// range.
    pub fn from_cell_order(mesh: &Mesh, cell_old_of_new: Vec<u32>) -> Result<Renumbering> {
        check_indices(mesh)?;
        check_cell_count(mesh)?;
        check_permutation("cell_old_of_new", &cell_old_of_new, mesh.n_cells())?;
        let (k, nv) = (mesh.vertices_per_cell(), mesh.n_vertices());
        // Chunks of cells in the new order are gathered in parallel (random
        // reads), then scanned in order against a bit set of the vertices
        // seen (n_vertices/8 bytes: in cache), which gives the first touches
        // in slot order.
        const CHUNK: usize = 1 << 16;
        let mut seen = vec![0u64; nv.div_ceil(64)];
        let mut vertex_old_of_new: Vec<u32> = Vec::with_capacity(nv);
        let chunk = CHUNK.min(cell_old_of_new.len()).max(1);
        let mut slots = vec![0u32; chunk * k];
        for olds in cell_old_of_new.chunks(chunk) {
            let slots = &mut slots[..olds.len() * k];
            slots
                .par_chunks_mut(k)
                .with_min_len(BLOCK)
                .zip(olds.par_iter())
                .for_each(|(s, &old)| s.copy_from_slice(mesh.cell(old as usize)));
            for &v in slots.iter() {
                let (word, bit) = (v as usize / 64, 1u64 << (v % 64));
                if seen[word] & bit == 0 {
                    seen[word] |= bit;
                    vertex_old_of_new.push(v);
                }
            }
        }
        // vertices of no cell, in their old order
        let unused: Vec<u32> = (0..nv as u32)
            .into_par_iter()
            .filter(|&v| seen[v as usize / 64] & (1 << (v % 64)) == 0)
            .collect();
        vertex_old_of_new.extend_from_slice(&unused);
        Ok(Renumbering {
            vertex_new_of_old: invert(&vertex_old_of_new),
            vertex_old_of_new,
            cell_new_of_old: invert(&cell_old_of_new),
            cell_old_of_new,
        })
    }

    /// The renumbering with the given maps from old to new indices.
    ///
    /// Errors: [`Error::InvalidArgument`] (naming the argument and the first
    /// bad position) unless both are permutations (of `0..n_vertices` and
    /// `0..n_cells`).
    pub fn from_permutations(
        vertex_new_of_old: Vec<u32>,
        cell_new_of_old: Vec<u32>,
    ) -> Result<Renumbering> {
        check_permutation(
            "vertex_new_of_old",
            &vertex_new_of_old,
            vertex_new_of_old.len(),
        )?;
        check_permutation("cell_new_of_old", &cell_new_of_old, cell_new_of_old.len())?;
        Ok(Renumbering {
            vertex_old_of_new: invert(&vertex_new_of_old),
            vertex_new_of_old,
            cell_old_of_new: invert(&cell_new_of_old),
            cell_new_of_old,
        })
    }

    /// The inverse renumbering (new → old).
    pub fn inverse(&self) -> Renumbering {
        Renumbering {
            vertex_new_of_old: self.vertex_old_of_new.clone(),
            vertex_old_of_new: self.vertex_new_of_old.clone(),
            cell_new_of_old: self.cell_old_of_new.clone(),
            cell_old_of_new: self.cell_new_of_old.clone(),
        }
    }

    /// Number of vertices of the meshes it maps between.
    pub fn n_vertices(&self) -> usize {
        self.vertex_new_of_old.len()
    }

    /// Number of cells of the meshes it maps between.
    pub fn n_cells(&self) -> usize {
        self.cell_new_of_old.len()
    }

    /// New index of every old vertex.
    pub fn vertex_new_of_old(&self) -> &[u32] {
        &self.vertex_new_of_old
    }

    /// Old index of every new vertex.
    pub fn vertex_old_of_new(&self) -> &[u32] {
        &self.vertex_old_of_new
    }

    /// New index of every old cell.
    pub fn cell_new_of_old(&self) -> &[u32] {
        &self.cell_new_of_old
    }

    /// Old index of every new cell.
    pub fn cell_old_of_new(&self) -> &[u32] {
        &self.cell_old_of_new
    }

    /// The renumbered mesh: `new_vertices[v'] = old_vertices[vertex_old_of_new[v']]`,
    /// `new_cell(c')[i] = vertex_new_of_old[old_cell(cell_old_of_new[c'])[i]]`.
    /// Cells keep their local vertex order (and so their orientation and
    /// `det J`, bit for bit); the result is valid if `mesh` is.
    ///
    /// Errors: [`Error::InvalidArgument`] (`mesh`) if its vertex or cell
    /// count differs from the renumbering's; [`Error::InvalidCell`] for the
    /// first cell with a vertex index out of range.
    pub fn apply(&self, mesh: &Mesh) -> Result<Mesh> {
        self.check_counts(mesh)?;
        check_indices(mesh)?;
        let (dim, k) = (mesh.dim(), mesh.vertices_per_cell());
        let mut vertices = vec![0.0; mesh.vertices().len()];
        vertices
            .par_chunks_mut(dim)
            .with_min_len(BLOCK)
            .zip(self.vertex_old_of_new.par_iter())
            .for_each(|(x, &old)| x.copy_from_slice(mesh.vertex(old as usize)));
        let mut cells = vec![0u32; mesh.cells().len()];
        cells
            .par_chunks_mut(k)
            .with_min_len(BLOCK)
            .zip(self.cell_old_of_new.par_iter())
            .for_each(|(cell, &old)| {
                for (new, &v) in cell.iter_mut().zip(mesh.cell(old as usize)) {
                    *new = self.vertex_new_of_old[v as usize];
                }
            });
        Mesh::from_raw(dim, vertices, cells)
    }

    /// The renumbered Gmsh mesh: the [`Mesh`] as [`Renumbering::apply`];
    /// `node_tags`, `cell_tags` and `cell_entities` permuted with their
    /// vertices and cells (so `node_tags` is no longer increasing: it maps
    /// each new vertex to its Gmsh node tag); lower-dimensional `elements`
    /// keep their order, tags and entities, with their vertices relabelled;
    /// entities and physical groups unchanged. Hence
    /// [`GmshMesh::group_vertices`] of the result is the renumbered image of
    /// the original's, and [`GmshMesh::group_cells`] likewise.
    ///
    /// Errors: those of [`Renumbering::apply`]; [`Error::InvalidArgument`]
    /// (`gmsh`) if a tag array's length differs from the mesh's counts or an
    /// element names a vertex out of range (naming the element's tag).
    pub fn apply_to_gmsh(&self, gmsh: &GmshMesh) -> Result<GmshMesh> {
        let (nv, nc) = (gmsh.mesh.n_vertices(), gmsh.mesh.n_cells());
        for (name, len, want) in [
            ("node_tags", gmsh.node_tags.len(), nv),
            ("cell_tags", gmsh.cell_tags.len(), nc),
            ("cell_entities", gmsh.cell_entities.len(), nc),
        ] {
            if len != want {
                return Err(Error::arg(
                    "gmsh",
                    format!("{name} has {len} entries for {want} mesh entities"),
                ));
            }
        }
        if let Some(e) = gmsh
            .elements
            .iter()
            .find(|e| e.vertices.iter().any(|&v| v as usize >= nv))
        {
            return Err(Error::arg(
                "gmsh",
                format!(
                    "element {} names vertices {:?}, out of range ({nv} vertices)",
                    e.tag, e.vertices
                ),
            ));
        }
        let mesh = self.apply(&gmsh.mesh)?;
        let elements = gmsh
            .elements
            .par_iter()
            .map(|e| GmshElement {
                tag: e.tag,
                dim: e.dim,
                entity: e.entity,
                vertices: e
                    .vertices
                    .iter()
                    .map(|&v| self.vertex_new_of_old[v as usize])
                    .collect(),
            })
            .collect();
        Ok(GmshMesh {
            mesh,
            reoriented: gmsh.reoriented,
            second_order: gmsh.second_order,
            node_tags: permute(&gmsh.node_tags, &self.vertex_old_of_new, 1),
            cell_tags: permute(&gmsh.cell_tags, &self.cell_old_of_new, 1),
            cell_entities: permute(&gmsh.cell_entities, &self.cell_old_of_new, 1),
            elements,
            entities: gmsh.entities.clone(),
            physical_groups: gmsh.physical_groups.clone(),
        })
    }

    /// Vertex data (`n_vertices × n_comp`, node-major: entry `v·n_comp + j`)
    /// in the new numbering: `new[v'·n_comp + j] = old[vertex_old_of_new[v']·n_comp + j]`.
    /// For a P1 field this is the same field on the renumbered mesh.
    ///
    /// Errors: [`Error::InvalidArgument`] (`old`) unless
    /// `old.len() == n_vertices·n_comp` with `n_comp ≥ 1`.
    pub fn vertex_data_to_new<T: Copy + Send + Sync>(
        &self,
        old: &[T],
        n_comp: usize,
    ) -> Result<Vec<T>> {
        check_data("old", old.len(), self.n_vertices(), n_comp)?;
        Ok(permute(old, &self.vertex_old_of_new, n_comp))
    }

    /// Vertex data in the new numbering back in the old one (the inverse of
    /// [`Renumbering::vertex_data_to_new`]).
    ///
    /// Errors: [`Error::InvalidArgument`] (`new`) unless
    /// `new.len() == n_vertices·n_comp` with `n_comp ≥ 1`.
    pub fn vertex_data_to_old<T: Copy + Send + Sync>(
        &self,
        new: &[T],
        n_comp: usize,
    ) -> Result<Vec<T>> {
        check_data("new", new.len(), self.n_vertices(), n_comp)?;
        Ok(permute(new, &self.vertex_new_of_old, n_comp))
    }

    /// Cell data (`n_cells × n_comp`, entry `c·n_comp + j`) in the new
    /// numbering: `new[c'·n_comp + j] = old[cell_old_of_new[c']·n_comp + j]`.
    ///
    /// Errors: [`Error::InvalidArgument`] (`old`) unless
    /// `old.len() == n_cells·n_comp` with `n_comp ≥ 1`.
    pub fn cell_data_to_new<T: Copy + Send + Sync>(
        &self,
        old: &[T],
        n_comp: usize,
    ) -> Result<Vec<T>> {
        check_data("old", old.len(), self.n_cells(), n_comp)?;
        Ok(permute(old, &self.cell_old_of_new, n_comp))
    }

    /// Cell data in the new numbering back in the old one (the inverse of
    /// [`Renumbering::cell_data_to_new`]).
    ///
    /// Errors: [`Error::InvalidArgument`] (`new`) unless
    /// `new.len() == n_cells·n_comp` with `n_comp ≥ 1`.
    pub fn cell_data_to_old<T: Copy + Send + Sync>(
        &self,
        new: &[T],
        n_comp: usize,
    ) -> Result<Vec<T>> {
        check_data("new", new.len(), self.n_cells(), n_comp)?;
        Ok(permute(new, &self.cell_new_of_old, n_comp))
    }

    fn check_counts(&self, mesh: &Mesh) -> Result<()> {
        if mesh.n_vertices() != self.n_vertices() || mesh.n_cells() != self.n_cells() {
            return Err(Error::arg(
                "mesh",
                format!(
                    "it has {} vertices and {} cells; the renumbering is for {} and {}",
                    mesh.n_vertices(),
                    mesh.n_cells(),
                    self.n_vertices(),
                    self.n_cells()
                ),
            ));
        }
        Ok(())
    }
}

/// `out[i·n_comp + j] = data[source[i]·n_comp + j]` (in parallel).
fn permute<T: Copy + Send + Sync>(data: &[T], source: &[u32], n_comp: usize) -> Vec<T> {
    let mut out = data.to_vec();
    out.par_chunks_mut(n_comp)
        .with_min_len(BLOCK)
        .zip(source.par_iter())
        .for_each(|(o, &s)| {
            let s = s as usize * n_comp;
            o.copy_from_slice(&data[s..s + n_comp]);
        });
    out
}

/// The inverse of a permutation (in parallel; each entry is stored once).
fn invert(p: &[u32]) -> Vec<u32> {
    let inv: Vec<AtomicU32> = (0..p.len())
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    p.par_iter()
        .with_min_len(BLOCK)
        .enumerate()
        .for_each(|(i, &j)| inv[j as usize].store(i as u32, Relaxed));
    inv.into_par_iter().map(AtomicU32::into_inner).collect()
}

/// Checks that `p` is a permutation of `0..n`, naming the first position
/// holding a value out of range or repeated.
fn check_permutation(name: &'static str, p: &[u32], n: usize) -> Result<()> {
    if p.len() != n {
        return Err(Error::arg(
            name,
            format!("has {} entries, expected {n}", p.len()),
        ));
    }
    let mut seen = vec![false; n];
    for (i, &v) in p.iter().enumerate() {
        if v as usize >= n {
            return Err(Error::arg(
                name,
                format!("entry {i} is {v}, out of range (a permutation of 0..{n})"),
            ));
        }
        if std::mem::replace(&mut seen[v as usize], true) {
            return Err(Error::arg(
                name,
                format!("entry {i} repeats the value {v} (not a permutation)"),
            ));
        }
    }
    Ok(())
}

fn check_data(name: &'static str, len: usize, n: usize, n_comp: usize) -> Result<()> {
    if n_comp == 0 || len != n * n_comp {
        return Err(Error::arg(
            name,
            format!("has {len} entries, expected {n}·{n_comp} (entities × components, n_comp ≥ 1)"),
        ));
    }
    Ok(())
}

/// Checks that every vertex index is in range (the smallest bad cell).
fn check_indices(mesh: &Mesh) -> Result<()> {
    let (k, nv) = (mesh.vertices_per_cell(), mesh.n_vertices());
    let bad = mesh
        .cells()
        .par_chunks(k)
        .with_min_len(BLOCK)
        .enumerate()
        .find_map_first(|(c, cell)| {
            cell.iter().enumerate().find_map(|(local, &v)| {
                (v as usize >= nv).then_some((c, CellDefect::OutOfRange { local, index: v }))
            })
        });
    if let Some((cell, d)) = bad {
        return Err(Error::InvalidCell {
            cell,
            reason: d.reason(mesh.dim(), nv),
        });
    }
    Ok(())
}

/// Checks that cell indices fit the `u32` of a [`Renumbering`].
fn check_cell_count(mesh: &Mesh) -> Result<()> {
    if mesh.n_cells() > u32::MAX as usize {
        return Err(Error::arg(
            "mesh",
            format!("{} cells do not fit 32-bit cell indices", mesh.n_cells()),
        ));
    }
    Ok(())
}

/// Checks that every coordinate is finite (naming the first bad vertex).
fn check_finite(mesh: &Mesh) -> Result<()> {
    let dim = mesh.dim();
    if let Some(i) = mesh
        .vertices()
        .par_iter()
        .with_min_len(BLOCK)
        .position_first(|x| !x.is_finite())
    {
        return Err(Error::InvalidMesh(format!(
            "vertex {} has a non-finite coordinate ({} = {}); cannot order cells by position",
            i / dim,
            ["x", "y", "z"][i % dim],
            mesh.vertices()[i]
        )));
    }
    Ok(())
}

/// The cells in Hilbert order of their centroids (ties by old index);
/// vertex indices in range and coordinates finite.
fn hilbert_cell_order(mesh: &Mesh) -> Vec<u32> {
    let cell_bits = bits_for(mesh.n_cells());
    let mut keys = if mesh.dim() == 2 {
        hilbert_keys::<2>(mesh, cell_bits)
    } else {
        hilbert_keys::<3>(mesh, cell_bits)
    };
    keys.par_sort_unstable();
    let mask = (1u64 << cell_bits) - 1;
    keys.into_par_iter()
        .map(|key| (key & mask) as u32)
        .collect()
}

/// The sort keys `hilbert_index(centroid) << cell_bits | c` of all cells
/// `c` of a mesh of dimension `D`, with `b = ⌊(64 − cell_bits)/D⌋` bits per
/// axis: centroids are quantized on `2^b` boxes per axis over the bounding
/// box of the vertices (its longest side, for all axes).
fn hilbert_keys<const D: usize>(mesh: &Mesh, cell_bits: u32) -> Vec<u64> {
    let bits = ((64 - cell_bits) / D as u32).min(32);
    let (lo, hi) = mesh
        .vertices()
        .par_chunks_exact(D)
        .with_min_len(BLOCK)
        .fold(
            || ([f64::INFINITY; D], [f64::NEG_INFINITY; D]),
            |(lo, hi), x| {
                (
                    std::array::from_fn(|d| lo[d].min(x[d])),
                    std::array::from_fn(|d| hi[d].max(x[d])),
                )
            },
        )
        .reduce(
            || ([f64::INFINITY; D], [f64::NEG_INFINITY; D]),
            |(a, b), (c, d)| {
                (
                    std::array::from_fn(|i| a[i].min(c[i])),
                    std::array::from_fn(|i| b[i].max(d[i])),
                )
            },
        );
    let extent = (0..D).map(|d| hi[d] - lo[d]).fold(0.0, f64::max);
    let boxes = 2f64.powi(bits as i32);
    let scale = if extent > 0.0 { boxes / extent } else { 0.0 };
    let max_q = (boxes - 1.0) as u32;
    let k = D + 1;
    mesh.cells()
        .par_chunks_exact(k)
        .with_min_len(BLOCK)
        .enumerate()
        .map(|(c, cell)| {
            let mut sum = [0.0; D];
            for &v in cell {
                for (s, x) in sum.iter_mut().zip(mesh.vertex(v as usize)) {
                    *s += x;
                }
            }
            // in [0, 2^bits]: the cast saturates, the min clamps the top
            let q = sum.map(|s| s / k as f64);
            let q: [u32; D] = std::array::from_fn(|d| (((q[d] - lo[d]) * scale) as u32).min(max_q));
            (hilbert_index(q, bits) << cell_bits) | c as u64
        })
        .collect()
}

/// Index along the Hilbert curve of the point with integer coordinates
/// `x[..dim]` (each `< 2^bits`, `dim·bits ≤ 64`) on the `2^bits`-per-axis
/// grid: Skilling's `AxestoTranspose` (undo the excess work of the
/// reflections and rotations bit by bit from the top, then Gray-encode),
/// followed by interleaving the transposed bits, most significant first,
/// `x[0]` first within each bit level. Consecutive indices are face
/// neighbours on the grid.
fn hilbert_index<const D: usize>(mut x: [u32; D], bits: u32) -> u64 {
    let dim = D;
    // Branch-free form of Skilling's loop (the branches depend on the data
    // and would be mispredicted half of the time): `mask` is all ones where
    // bit `q` of `x[i]` is set.
    let top = 1u32 << (bits - 1);
    let mut q = top;
    while q > 1 {
        let p = q - 1;
        for i in 0..dim {
            let mask = 0u32.wrapping_sub(u32::from(x[i] & q != 0));
            // set: invert the low bits of x[0]; clear: exchange the low
            // bits of x[0] and x[i] (a no-op for i = 0)
            let t = (x[0] ^ x[i]) & p & !mask;
            x[0] ^= (p & mask) | t;
            x[i] ^= t;
        }
        q >>= 1;
    }
    for i in 1..dim {
        x[i] ^= x[i - 1];
    }
    let mut t = 0;
    let mut q = top;
    while q > 1 {
        t ^= (q - 1) & 0u32.wrapping_sub(u32::from(x[dim - 1] & q != 0));
        q >>= 1;
    }
    for xi in x.iter_mut() {
        *xi ^= t;
    }
    let mut h = 0u64;
    for b in (0..bits).rev() {
        for xi in x.iter() {
            h = (h << 1) | u64::from((xi >> b) & 1);
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::mesh::edges::mesh_edges;
    use crate::mesh::generate::{MeshOptions, mesh_for_cells, unit_cube, unit_square};
    use crate::mesh::gmsh::read_gmsh;

    fn jittered_shuffled(seed: u64) -> MeshOptions {
        MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed,
        }
    }

    /// A shuffled jittered square (2·64² cells) and cube (6·12³ cells).
    fn meshes() -> [Mesh; 2] {
        [
            unit_square(64, &jittered_shuffled(1)).unwrap(),
            unit_cube(12, &jittered_shuffled(2)).unwrap(),
        ]
    }

    fn test_mesh(name: &str) -> GmshMesh {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        read_gmsh(&path).unwrap()
    }

    fn is_permutation(p: &[u32]) -> bool {
        let mut s = p.to_vec();
        s.sort_unstable();
        s.iter().enumerate().all(|(i, &v)| v as usize == i)
    }

    /// Grid points sorted by Hilbert index: the indices are `0..4^b` (`8^b`)
    /// and consecutive points are face neighbours (one coordinate ±1).
    #[test]
    fn hilbert_index_walks_the_grid_by_face_neighbours() {
        fn check<const D: usize>(bits: u32) {
            let side = 1u32 << bits;
            let n = (side as usize).pow(D as u32);
            let mut points: Vec<(u64, [u32; D])> = (0..n)
                .map(|i| {
                    let x: [u32; D] =
                        std::array::from_fn(|d| (i as u32 >> (bits * d as u32)) % side);
                    (hilbert_index(x, bits), x)
                })
                .collect();
            points.sort();
            for (i, (h, _)) in points.iter().enumerate() {
                assert_eq!(*h, i as u64);
            }
            assert_eq!(points[0].1, [0; D]);
            for w in points.windows(2) {
                let dist: u32 = (0..D).map(|d| w[0].1[d].abs_diff(w[1].1[d])).sum();
                assert_eq!(dist, 1, "{:?} → {:?}", w[0], w[1]);
            }
        }
        check::<2>(1);
        check::<2>(5);
        check::<3>(1);
        check::<3>(4);
    }

    #[test]
    fn renumbered_mesh_has_the_same_cells_and_volume() {
        for m in meshes() {
            let (new, r) = m.renumbered_for_locality().unwrap();
            new.validate().unwrap();
            assert_eq!(r.n_vertices(), m.n_vertices());
            assert_eq!(r.n_cells(), m.n_cells());
            for p in [
                r.vertex_new_of_old(),
                r.vertex_old_of_new(),
                r.cell_new_of_old(),
                r.cell_old_of_new(),
            ] {
                assert!(is_permutation(p));
            }
            for (v, &nv) in r.vertex_new_of_old().iter().enumerate() {
                assert_eq!(r.vertex_old_of_new()[nv as usize] as usize, v);
                assert_eq!(new.vertex(nv as usize), m.vertex(v));
            }
            for (c, &nc) in r.cell_new_of_old().iter().enumerate() {
                assert_eq!(r.cell_old_of_new()[nc as usize] as usize, c);
                // same points in the same local order: the same det J, bit for bit
                let old_points: Vec<&[f64]> =
                    m.cell(c).iter().map(|&v| m.vertex(v as usize)).collect();
                let new_points: Vec<&[f64]> = new
                    .cell(nc as usize)
                    .iter()
                    .map(|&v| new.vertex(v as usize))
                    .collect();
                assert_eq!(old_points, new_points);
                assert_eq!(new.det_j(nc as usize), m.det_j(c));
            }
            let (a, b) = (m.total_volume(), new.total_volume());
            assert!(
                (a - 1.0).abs() < 1e-12 && (b - 1.0).abs() < 1e-12,
                "{a} {b}"
            );
            // P2 edge count unchanged (the edges are relabelled, not changed)
            assert_eq!(
                mesh_edges(&m).unwrap().n_edges(),
                mesh_edges(&new).unwrap().n_edges()
            );
        }
    }

    #[test]
    fn locality_improves_by_large_factors() {
        for m in [
            unit_square(128, &jittered_shuffled(4)).unwrap(),
            unit_cube(20, &jittered_shuffled(5)).unwrap(),
        ] {
            let before = locality_metrics(&m).unwrap();
            let (new, _) = m.renumbered_for_locality().unwrap();
            let after = locality_metrics(&new).unwrap();
            // measured factors: 2D 54, 40, 54, 14.5; 3D 11.7, 3.0, 13, 12.2
            let want = if m.dim() == 2 {
                [40.0, 30.0, 40.0, 12.0]
            } else {
                [10.0, 2.5, 10.0, 10.0]
            };
            let got = [
                before.mean_span / after.mean_span,
                f64::from(before.p95_span) / f64::from(after.p95_span),
                before.mean_jump / after.mean_jump,
                before.warp_sectors_per_cell / after.warp_sectors_per_cell,
            ];
            for (g, w) in got.iter().zip(want) {
                assert!(*g >= w, "{}D: factors {got:?}, want {want:?}", m.dim());
            }
            // a warp's gather: 0.20 (2D) and 0.31 (3D) sectors per cell,
            // against ≈ dim + 1 − ε when shuffled
            let bound = if m.dim() == 2 { 0.21 } else { 0.32 };
            assert!(after.warp_sectors_per_cell < bound, "{after:?}");
        }
    }

    #[test]
    fn boundary_vertices_map_to_boundary_vertices() {
        for m in meshes() {
            let (new, r) = m.renumbered_for_locality().unwrap();
            let (bo, bn) = (
                m.boundary_vertices().unwrap(),
                new.boundary_vertices().unwrap(),
            );
            assert_eq!(
                bo.iter().filter(|&&b| b).count(),
                bn.iter().filter(|&&b| b).count()
            );
            for (v, &on) in bo.iter().enumerate() {
                assert_eq!(bn[r.vertex_new_of_old()[v] as usize], on, "vertex {v}");
            }
            assert_eq!(
                m.boundary_facets().unwrap().len(),
                new.boundary_facets().unwrap().len()
            );
        }
    }

    #[test]
    fn same_result_on_any_thread_count() {
        // large enough for several parallel blocks and first-touch chunks
        let m = unit_square(300, &jittered_shuffled(3)).unwrap();
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| {
                    let r = locality_renumbering(&m).unwrap();
                    let metrics = locality_metrics(&r.apply(&m).unwrap()).unwrap();
                    (r, metrics)
                })
        };
        let one = run(1);
        assert_eq!(one, run(3));
        assert_eq!(one, run(4));
    }

    #[test]
    fn gmsh_physical_groups_survive_renumbering() {
        for name in [
            "mesh_square.msh",
            "mesh_square_binary.msh",
            "mesh_cube.msh",
            "mesh_cube_binary.msh",
            "mesh_disk_p2.msh",
        ] {
            let g = test_mesh(name);
            let r = locality_renumbering(&g.mesh).unwrap();
            let h = r.apply_to_gmsh(&g).unwrap();
            assert_eq!(h.mesh, r.apply(&g.mesh).unwrap());
            assert!(!g.physical_groups.is_empty(), "{name}");
            for group in &g.physical_groups {
                let mut want: Vec<u32> = g
                    .group_vertices(group)
                    .iter()
                    .map(|&v| r.vertex_new_of_old()[v as usize])
                    .collect();
                want.sort_unstable();
                assert_eq!(h.group_vertices(group), want, "{name}: {group:?}");
                let mut want: Vec<u32> = g
                    .group_cells(group)
                    .iter()
                    .map(|&c| r.cell_new_of_old()[c as usize])
                    .collect();
                want.sort_unstable();
                assert_eq!(h.group_cells(group), want, "{name}: {group:?}");
            }
            for v in 0..g.mesh.n_vertices() {
                let nv = r.vertex_new_of_old()[v] as usize;
                assert_eq!(h.node_tags[nv], g.node_tags[v]);
                assert_eq!(h.mesh.vertex(nv), g.mesh.vertex(v));
            }
            for c in 0..g.mesh.n_cells() {
                let nc = r.cell_new_of_old()[c] as usize;
                assert_eq!(h.cell_tags[nc], g.cell_tags[c]);
                assert_eq!(h.cell_entities[nc], g.cell_entities[c]);
            }
            for (a, b) in g.elements.iter().zip(&h.elements) {
                assert_eq!((a.tag, a.dim, a.entity), (b.tag, b.dim, b.entity));
                let mapped: Vec<u32> = a
                    .vertices
                    .iter()
                    .map(|&v| r.vertex_new_of_old()[v as usize])
                    .collect();
                assert_eq!(b.vertices, mapped);
            }
        }
    }

    #[test]
    fn data_moves_across_and_back() {
        let m = &meshes()[1];
        let (new, r) = m.renumbered_for_locality().unwrap();
        // vertex data: the coordinates themselves, 3 components
        let x = r.vertex_data_to_new(m.vertices(), 3).unwrap();
        assert_eq!(x, new.vertices());
        assert_eq!(r.vertex_data_to_old(&x, 3).unwrap(), m.vertices());
        // cell data: det J per cell
        let det: Vec<f64> = (0..m.n_cells()).map(|c| m.det_j(c)).collect();
        let det_new = r.cell_data_to_new(&det, 1).unwrap();
        for (c, &d) in det_new.iter().enumerate() {
            assert_eq!(d, new.det_j(c));
        }
        assert_eq!(r.cell_data_to_old(&det_new, 1).unwrap(), det);
        // the inverse renumbering maps the new mesh back
        assert_eq!(&r.inverse().apply(&new).unwrap(), m);
        let again = Renumbering::from_permutations(
            r.vertex_new_of_old().to_vec(),
            r.cell_new_of_old().to_vec(),
        )
        .unwrap();
        assert_eq!(again, r);
    }

    #[test]
    fn unused_vertices_come_last() {
        // vertex 0 and 4 are used by no cell
        let m = Mesh::new(
            2,
            vec![9.0, 9.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 7.0, 7.0, 1.0, 1.0],
            vec![1, 2, 3, 2, 5, 3],
        )
        .unwrap();
        let r = locality_renumbering(&m).unwrap();
        assert_eq!(&r.vertex_old_of_new()[4..], &[0, 4]);
        let first = r.cell_old_of_new()[0] as usize;
        // the first new cell numbers its vertices 0, 1, 2 in local order
        let new = r.apply(&m).unwrap();
        assert_eq!(new.cell(0), &[0, 1, 2]);
        assert_eq!(new.vertex(0), m.vertex(m.cell(first)[0] as usize));
        let empty = Mesh::new(3, vec![], vec![]).unwrap();
        let r = locality_renumbering(&empty).unwrap();
        assert_eq!((r.n_vertices(), r.n_cells()), (0, 0));
    }

    #[test]
    fn bad_input_is_reported() {
        let m = unit_square(2, &MeshOptions::default()).unwrap();
        let r = locality_renumbering(&m).unwrap();
        let other = unit_square(3, &MeshOptions::default()).unwrap();
        match r.apply(&other) {
            Err(Error::InvalidArgument {
                name: "mesh",
                reason,
            }) => assert_eq!(
                reason,
                "it has 16 vertices and 18 cells; the renumbering is for 9 and 8"
            ),
            e => panic!("{e:?}"),
        }
        assert!(matches!(
            r.vertex_data_to_new(&[0.0; 10], 1),
            Err(Error::InvalidArgument { name: "old", .. })
        ));
        assert!(matches!(
            r.cell_data_to_old(&[0.0; 16], 0),
            Err(Error::InvalidArgument { name: "new", .. })
        ));
        match Renumbering::from_permutations(vec![0, 2, 2], vec![]) {
            Err(Error::InvalidArgument { name, reason }) => {
                assert_eq!(name, "vertex_new_of_old");
                assert_eq!(reason, "entry 2 repeats the value 2 (not a permutation)");
            }
            e => panic!("{e:?}"),
        }
        match Renumbering::from_cell_order(&m, vec![0, 1, 2, 3, 4, 5, 6, 8]) {
            Err(Error::InvalidArgument { name, reason }) => {
                assert_eq!(name, "cell_old_of_new");
                assert_eq!(reason, "entry 7 is 8, out of range (a permutation of 0..8)");
            }
            e => panic!("{e:?}"),
        }
        let mut x = m.vertices().to_vec();
        x[9] = f64::NAN;
        let nan = Mesh::from_raw(2, x, m.cells().to_vec()).unwrap();
        match locality_renumbering(&nan) {
            Err(Error::InvalidMesh(reason)) => assert!(
                reason.starts_with("vertex 4 has a non-finite coordinate (y = NaN)"),
                "{reason}"
            ),
            e => panic!("{e:?}"),
        }
        let out = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 2, 0, 3, 1]).unwrap();
        match locality_renumbering(&out) {
            Err(Error::InvalidCell { cell, reason }) => {
                assert_eq!(cell, 1);
                assert_eq!(
                    reason,
                    "vertex index 3 (local vertex 1) is out of range (3 vertices)"
                );
            }
            e => panic!("{e:?}"),
        }
        let mut g = test_mesh("mesh_square.msh");
        let r = locality_renumbering(&g.mesh).unwrap();
        g.elements[0].vertices[0] = 1000;
        let tag = g.elements[0].tag;
        match r.apply_to_gmsh(&g) {
            Err(Error::InvalidArgument {
                name: "gmsh",
                reason,
            }) => {
                assert!(
                    reason.starts_with(&format!("element {tag} names vertices")),
                    "{reason}"
                )
            }
            e => panic!("{e:?}"),
        }
        g.node_tags.pop();
        assert!(r.apply_to_gmsh(&g).is_err());
    }

    /// The comparison of the module documentation: locality of Hilbert,
    /// Morton and reverse Cuthill–McKee orders on shuffled meshes (run in
    /// release: `cargo test --release -p femquad --lib compare_orders --
    /// --ignored --nocapture`).
    #[test]
    #[ignore]
    fn compare_orders() {
        /// Cells by Morton (Z-order) index of their centroids.
        fn morton_order(m: &Mesh) -> Vec<u32> {
            let (dim, k, bits) = (m.dim(), m.vertices_per_cell(), 20);
            let mut keys: Vec<(u64, u32)> = (0..m.n_cells())
                .map(|c| {
                    let mut h = 0u64;
                    let q: Vec<u32> = (0..dim)
                        .map(|d| {
                            let x: f64 = m.cell(c).iter().map(|&v| m.vertex(v as usize)[d]).sum();
                            ((x / k as f64 * f64::from(1u32 << bits)) as u32).min((1 << bits) - 1)
                        })
                        .collect();
                    for b in (0..bits).rev() {
                        for qd in &q {
                            h = (h << 1) | u64::from((qd >> b) & 1);
                        }
                    }
                    (h, c as u32)
                })
                .collect();
            keys.sort_unstable();
            keys.iter().map(|&(_, c)| c).collect()
        }
        /// Reverse Cuthill–McKee on the vertex graph (from a pseudo-peripheral
        /// vertex: the last of two breadth-first searches from a vertex of
        /// least degree; neighbours by increasing degree), then cells by
        /// (smallest, largest) new vertex.
        fn rcm(m: &Mesh) -> Renumbering {
            let nv = m.n_vertices();
            let edges = mesh_edges(m).unwrap();
            let mut adj = vec![Vec::new(); nv];
            for &[a, b] in edges.endpoints() {
                adj[a as usize].push(b);
                adj[b as usize].push(a);
            }
            let bfs = |start: usize| {
                let mut seen = vec![false; nv];
                let mut order = vec![start as u32];
                seen[start] = true;
                let mut head = 0;
                while head < order.len() {
                    let v = order[head] as usize;
                    head += 1;
                    let mut next: Vec<u32> = adj[v]
                        .iter()
                        .copied()
                        .filter(|&w| !seen[w as usize])
                        .collect();
                    next.sort_by_key(|&w| (adj[w as usize].len(), w));
                    for w in next {
                        seen[w as usize] = true;
                        order.push(w);
                    }
                }
                order
            };
            let mut start = (0..nv).min_by_key(|&v| (adj[v].len(), v)).unwrap();
            for _ in 0..2 {
                start = *bfs(start).last().unwrap() as usize;
            }
            let mut order = bfs(start);
            assert_eq!(order.len(), nv, "connected mesh");
            order.reverse();
            let new_of_old = invert(&order);
            let mut cells: Vec<(u32, u32, u32)> = (0..m.n_cells())
                .map(|c| {
                    let v = m.cell(c).iter().map(|&v| new_of_old[v as usize]);
                    (v.clone().min().unwrap(), v.max().unwrap(), c as u32)
                })
                .collect();
            cells.sort_unstable();
            let cell_old_of_new: Vec<u32> = cells.iter().map(|t| t.2).collect();
            Renumbering::from_permutations(new_of_old, invert(&cell_old_of_new)).unwrap()
        }
        let row = |name: &str, m: &Mesh, secs: f64| {
            let l = locality_metrics(m).unwrap();
            println!(
                "| {name} | {:.0} | {} | {:.0} | {:.3} | {secs:.2} s |",
                l.mean_span, l.p95_span, l.mean_jump, l.warp_sectors_per_cell
            );
        };
        let opts = jittered_shuffled(1);
        for m in [
            mesh_for_cells(2, 1 << 22, &opts).unwrap(),
            unit_cube(88, &opts).unwrap(),
        ] {
            println!(
                "{}D, {} cells, {} threads",
                m.dim(),
                m.n_cells(),
                rayon::current_num_threads()
            );
            row("shuffled", &m, 0.0);
            let t = std::time::Instant::now();
            let r = rcm(&m);
            let secs = t.elapsed().as_secs_f64();
            row("RCM", &r.apply(&m).unwrap(), secs);
            let t = std::time::Instant::now();
            let r = Renumbering::from_cell_order(&m, morton_order(&m)).unwrap();
            let secs = t.elapsed().as_secs_f64();
            row("Morton", &r.apply(&m).unwrap(), secs);
            let t = std::time::Instant::now();
            let r = locality_renumbering(&m).unwrap();
            let secs = t.elapsed().as_secs_f64();
            row("Hilbert", &r.apply(&m).unwrap(), secs);
        }
    }

    /// Timing at 2²² cells, or `2^FEMQUAD_LOG2_CELLS` (run in release:
    /// `cargo test --release -p femquad --lib timing_2_22_cells -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn timing_2_22_cells() {
        let log2 = std::env::var("FEMQUAD_LOG2_CELLS").map_or(22, |s| s.parse().unwrap());
        let m = mesh_for_cells(2, 1 << log2, &jittered_shuffled(1)).unwrap();
        for _ in 0..3 {
            let t = std::time::Instant::now();
            let r = locality_renumbering(&m).unwrap();
            let t_renumber = t.elapsed();
            let t = std::time::Instant::now();
            let new = r.apply(&m).unwrap();
            println!(
                "{} cells, {} threads: locality_renumbering {t_renumber:.2?}, apply {:.2?}",
                m.n_cells(),
                rayon::current_num_threads(),
                t.elapsed()
            );
            std::hint::black_box(new);
        }
    }
}
