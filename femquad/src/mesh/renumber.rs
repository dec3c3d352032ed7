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

use super::{BLOCK, CellDefect, Mesh, bits_for};
use crate::{Error, Result};
use hilbert::hilbert_cell_order;

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
pub(super) fn permute<T: Copy + Send + Sync>(data: &[T], source: &[u32], n_comp: usize) -> Vec<T> {
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
pub(crate) fn invert(p: &[u32]) -> Vec<u32> {
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

mod hilbert;

#[cfg(test)]
mod tests;
