//! Global edges of a simplicial mesh: one number per distinct vertex pair.
//!
//! [`mesh_edges`] finds the distinct edges `(a, b)`, `a < b`, of all cells
//! and numbers them in increasing lexicographic order of `(a, b)`: the
//! numbering depends only on the set of edges, not on the cell order, the
//! local vertex order or the thread count. It also gives, for every cell,
//! the global numbers of its edges in [`crate::layout::simplex_edges`] order
//! (the P2 node order).
//!
//! Users: the P2 function space ([`crate::space`]: node `n_vertices + k` is
//! the midpoint of edge `k`) and uniform refinement ([`mod@super::refine`]),
//! which renumbers the edges by first touch in the cell order: its new
//! vertices are the same points as the P2 edge nodes, in another order.

use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::Relaxed;

use rayon::prelude::*;

use super::Mesh;
use crate::layout::simplex_edges;
use crate::{Error, Result};

/// The distinct edges of a mesh and the cell → edge map.
///
/// Edge `k` has endpoints `endpoints()[k] = [a, b]` with `a < b`; the edges
/// are sorted: `k < l ⇔ (a_k, b_k) < (a_l, b_l)` lexicographically. Cell `c`
/// has edges `cell_edges(c)[e]`, `e` indexing
/// [`crate::layout::simplex_edges`]`(dim)`: for local edge `e = (i, j)`,
/// `endpoints()[cell_edges(c)[e]] = [min(v_i, v_j), max(v_i, v_j)]` with
/// `v = mesh.cell(c)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeshEdges {
    dim: usize,
    endpoints: Vec<[u32; 2]>,
    cell_edges: Vec<u32>,
}

impl MeshEdges {
    /// Number of distinct edges.
    pub fn n_edges(&self) -> usize {
        self.endpoints.len()
    }

    /// Edges per cell: 3 for triangles, 6 for tetrahedra.
    pub fn edges_per_cell(&self) -> usize {
        self.dim * (self.dim + 1) / 2
    }

    /// Endpoints `[a, b]`, `a < b`, of every edge, in edge order (sorted).
    pub fn endpoints(&self) -> &[[u32; 2]] {
        &self.endpoints
    }

    /// Global edge numbers of cell `c`, in [`crate::layout::simplex_edges`] order.
    ///
    /// Panics if `c ≥ n_cells` (an indexing bug in the caller).
    pub fn cell_edges(&self, c: usize) -> &[u32] {
        let ne = self.edges_per_cell();
        &self.cell_edges[c * ne..(c + 1) * ne]
    }

    /// Global edge numbers of all cells, `n_cells × edges_per_cell`.
    pub fn cell_edges_all(&self) -> &[u32] {
        &self.cell_edges
    }

    /// The number of the edge between vertices `a` and `b` (in either
    /// order), or `None` if no cell has that edge. Binary search,
    /// `O(log n_edges)`.
    pub fn find(&self, a: u32, b: u32) -> Option<u32> {
        let key = [a.min(b), a.max(b)];
        self.endpoints.binary_search(&key).ok().map(|k| k as u32)
    }

    /// The endpoint list and the cell → edge map, as
    /// [`MeshEdges::endpoints`] and [`MeshEdges::cell_edges_all`].
    pub fn into_parts(self) -> (Vec<[u32; 2]>, Vec<u32>) {
        (self.endpoints, self.cell_edges)
    }
}

/// Numbers the distinct edges of `mesh`; see [`MeshEdges`] for the order.
///
/// The cell edges are grouped by their smaller vertex with a parallel sort
/// of packed keys (`bucket_sort`, payload `b << 32 | slot` with slot
/// `cell·edges_per_cell + local edge`); within a vertex's bucket, equal
/// larger vertices `b` are one edge. Numbering the buckets in vertex order
/// and the edges within a bucket in `b` order gives the lexicographic order
/// of `(a, b)`. `O(E log E)` work for `E = n_cells·edges_per_cell` cell
/// edges, parallel, deterministic; no hashing, no binary search; 8 bytes per
/// cell edge of temporary memory.
///
/// Errors: [`Error::InvalidCell`] for the first cell with a vertex index out
/// of range or a repeated vertex; [`Error::InvalidArgument`] (`mesh`) if the
/// mesh has `2³²` cell edges or more.
pub fn mesh_edges(mesh: &Mesh) -> Result<MeshEdges> {
    let (dim, nv) = (mesh.dim(), mesh.n_vertices());
    let k = mesh.vertices_per_cell();
    let bad = super::first_index_defect(mesh.cells(), k, nv);
    if let Some((cell, d)) = bad {
        return Err(Error::InvalidCell {
            cell,
            reason: d.reason(dim, nv),
        });
    }
    let (endpoints, cell_edges) = number_edges(mesh.cells(), dim, nv)?;
    Ok(MeshEdges {
        dim,
        endpoints,
        cell_edges,
    })
}

/// The edge numbering of [`mesh_edges`] on raw connectivity whose indices
/// are known to be in range: the sorted endpoints and the cell → edge map.
fn number_edges(cells: &[u32], dim: usize, n_vertices: usize) -> Result<(Vec<[u32; 2]>, Vec<u32>)> {
    let edges = simplex_edges(dim);
    let (nv, ne) = (dim + 1, edges.len());
    let n_cells = cells.len() / nv;
    let n_slots = n_cells * ne;
    if n_slots > u32::MAX as usize {
        return Err(Error::arg(
            "mesh",
            format!(
                "{n_cells} cells have more than 2^32 cell edges; edge numbering supports fewer"
            ),
        ));
    }
    let ends = |s: usize| {
        let (c, e) = (s / ne, s % ne);
        let [i, j] = edges[e];
        let (a, b) = (cells[c * nv + i], cells[c * nv + j]);
        (a.min(b), a.max(b))
    };
    let (offsets, entries) = bucket_sort(
        n_vertices,
        n_slots,
        |s| ends(s).0 as usize,
        |s| ((ends(s).1 as u64) << 32) | s as u64,
    );
    // Distinct edges per bucket, then the first edge number of each bucket.
    let distinct: Vec<usize> = (0..n_vertices)
        .into_par_iter()
        .map(|v| {
            let bucket = &entries[offsets[v]..offsets[v + 1]];
            bucket.chunk_by(|x, y| x >> 32 == y >> 32).count()
        })
        .collect();
    let mut first = Vec::with_capacity(n_vertices + 1);
    first.push(0usize);
    let mut total = 0;
    for d in distinct {
        total += d;
        first.push(total);
    }
    let n_edges = total;
    // Every slot belongs to exactly one run of one bucket, so each entry of
    // `cell_edges` is stored once; atomics only make the scattered stores
    // from several threads safe (relaxed, no contention).
    let cell_edges: Vec<AtomicU32> = (0..n_slots)
        .into_par_iter()
        .map(|_| AtomicU32::new(0))
        .collect();
    let mut endpoints = vec![[0u32; 2]; n_edges];
    bucket_blocks(&first, &mut endpoints)
        .into_par_iter()
        .for_each(|(b0, b1, block)| {
            for v in b0..b1 {
                let bucket = &entries[offsets[v]..offsets[v + 1]];
                for (k, run) in bucket.chunk_by(|x, y| x >> 32 == y >> 32).enumerate() {
                    let id = first[v] + k;
                    block[id - first[b0]] = [v as u32, (run[0] >> 32) as u32];
                    for &x in run {
                        cell_edges[(x & 0xffff_ffff) as usize].store(id as u32, Relaxed);
                    }
                }
            }
        });
    let cell_edges = cell_edges
        .into_par_iter()
        .map(AtomicU32::into_inner)
        .collect();
    Ok((endpoints, cell_edges))
}

/// Groups the items `0..n_items` by `bucket(i) < n_buckets`: returns CSR
/// `offsets` (`n_buckets + 1`) and the `payload(i)` of the items of bucket
/// `b` in `entries[offsets[b]..offsets[b+1]]`, sorted ascending within each
/// bucket. Both `n_items` and `n_buckets` must fit in `u32` (callers check).
///
/// The keys `bucket(i) << 32 | i` are sorted in parallel (rayon's pdqsort),
/// which reads and writes memory in long runs; a parallel counting sort with
/// atomic cursors was measured 3× slower (on 2 cores, 24M items), as its
/// locked scattered writes cannot overlap their cache misses. Then each key
/// is replaced by its payload and each (short) bucket sorted. `O(n log n)`
/// work, deterministic, 8 bytes per item of memory.
pub(crate) fn bucket_sort(
    n_buckets: usize,
    n_items: usize,
    bucket: impl Fn(usize) -> usize + Sync,
    payload: impl Fn(usize) -> u64 + Sync,
) -> (Vec<usize>, Vec<u64>) {
    let mut entries: Vec<u64> = (0..n_items)
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| ((bucket(i) as u64) << 32) | i as u64)
        .collect();
    entries.par_sort_unstable();
    let offsets = sorted_offsets(&entries, n_buckets, OFFSET_BLOCK);
    entries
        .par_iter_mut()
        .with_min_len(4096)
        .for_each(|k| *k = payload((*k & 0xffff_ffff) as usize));
    bucket_blocks(&offsets, &mut entries)
        .into_par_iter()
        .for_each(|(b0, b1, block)| {
            for b in b0..b1 {
                block[offsets[b] - offsets[b0]..offsets[b + 1] - offsets[b0]].sort_unstable();
            }
        });
    (offsets, entries)
}

/// Buckets per task of [`sorted_offsets`].
const OFFSET_BLOCK: usize = 1 << 14;

/// The CSR offsets of keys sorted by bucket (`key >> 32`, every bucket
/// `< n_buckets`): `offsets[b]` is the number of keys of buckets `< b`
/// (`n_buckets + 1` entries, the last `keys.len()`) — the prefix sum of the
/// bucket counts, found in parallel over blocks of `block` buckets: each
/// block finds its first key by binary search, then walks its own keys.
/// `O(n_keys + n_buckets)` work, the same offsets as the serial count.
fn sorted_offsets(keys: &[u64], n_buckets: usize, block: usize) -> Vec<usize> {
    let bucket = |k: u64| (k >> 32) as usize;
    let mut offsets = vec![0usize; n_buckets + 1];
    offsets
        .par_chunks_mut(block)
        .enumerate()
        .for_each(|(i, out)| {
            let b0 = i * block;
            let mut e = keys.partition_point(|&k| bucket(k) < b0);
            for (b, o) in (b0..).zip(out) {
                while e < keys.len() && bucket(keys[e]) < b {
                    e += 1;
                }
                *o = e;
            }
        });
    offsets
}

/// Splits `data` (grouped by the CSR `offsets`) into disjoint blocks of
/// whole buckets, for parallel work: `(first bucket, end bucket, slice)`.
pub(crate) fn bucket_blocks<'a, T>(
    offsets: &[usize],
    mut data: &'a mut [T],
) -> Vec<(usize, usize, &'a mut [T])> {
    const BLOCK: usize = 4096;
    let n = offsets.len() - 1;
    let mut out = Vec::with_capacity(n / BLOCK + 1);
    let mut b0 = 0;
    while b0 < n {
        let b1 = (b0 + BLOCK).min(n);
        let (head, tail) = std::mem::take(&mut data).split_at_mut(offsets[b1] - offsets[b0]);
        out.push((b0, b1, head));
        data = tail;
        b0 = b1;
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::mesh::generate::{MeshOptions, unit_cube, unit_square};

    #[test]
    fn two_triangles() {
        let m = Mesh::new(
            2,
            vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
            vec![0, 1, 2, 0, 2, 3],
        )
        .unwrap();
        let e = mesh_edges(&m).unwrap();
        assert_eq!(e.endpoints(), &[[0, 1], [0, 2], [0, 3], [1, 2], [2, 3]]);
        // local edges (0,1), (1,2), (2,0)
        assert_eq!(e.cell_edges(0), &[0, 3, 1]);
        assert_eq!(e.cell_edges(1), &[1, 4, 2]);
        assert_eq!(e.find(2, 0), Some(1));
        assert_eq!(e.find(1, 3), None);
        assert_eq!(e.edges_per_cell(), 3);
    }

    /// Against a map from sorted vertex pairs, on shuffled meshes.
    #[test]
    fn matches_a_map_of_vertex_pairs() {
        let opts = MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 5,
        };
        for m in [unit_square(7, &opts).unwrap(), unit_cube(3, &opts).unwrap()] {
            let e = mesh_edges(&m).unwrap();
            let mut pairs = BTreeMap::new();
            for c in 0..m.n_cells() {
                let cell = m.cell(c);
                for &[i, j] in simplex_edges(m.dim()) {
                    pairs.insert([cell[i].min(cell[j]), cell[i].max(cell[j])], ());
                }
            }
            let want: Vec<[u32; 2]> = pairs.into_keys().collect();
            assert_eq!(e.endpoints(), &want[..]);
            for c in 0..m.n_cells() {
                let cell = m.cell(c);
                for (l, &[i, j]) in simplex_edges(m.dim()).iter().enumerate() {
                    let k = e.cell_edges(c)[l] as usize;
                    assert_eq!(
                        e.endpoints()[k],
                        [cell[i].min(cell[j]), cell[i].max(cell[j])]
                    );
                }
            }
            // Euler: square n=7 has 3n² + 2n edges; cube n=3 has
            // 3(n+1)²n + 3n²(n+1) + n³ (axes, face diagonals, body diagonals)
            let n_edges = if m.dim() == 2 {
                3 * 49 + 14
            } else {
                3 * 16 * 3 + 3 * 9 * 4 + 27
            };
            assert_eq!(e.n_edges(), n_edges);
        }
    }

    /// The parallel offsets of sorted keys ([`sorted_offsets`]) are the
    /// prefix sums of the serial bucket counts, with blocks of a few
    /// buckets (many tasks), empty buckets (leading, inner, trailing) and
    /// a bucket longer than a block.
    #[test]
    fn sorted_offsets_are_the_serial_prefix_sums() {
        let mut rng = crate::rng::Rng::new(7);
        let n_buckets = 1000;
        let mut keys: Vec<u64> = (0..5000u64)
            .map(|i| {
                // buckets 3..990 with gaps, and a long run in bucket 500
                let b = if i % 7 == 0 {
                    500
                } else {
                    3 + rng.below(987) as u64
                };
                let b = if b % 11 == 0 { b + 1 } else { b };
                (b << 32) | i
            })
            .collect();
        keys.sort_unstable();
        let mut serial = vec![0usize; n_buckets + 1];
        for &k in &keys {
            serial[(k >> 32) as usize + 1] += 1;
        }
        for b in 0..n_buckets {
            serial[b + 1] += serial[b];
        }
        for block in [1, 3, 64, 4096] {
            assert_eq!(
                sorted_offsets(&keys, n_buckets, block),
                serial,
                "block {block}"
            );
        }
        assert_eq!(sorted_offsets(&[], 5, 2), vec![0; 6]);
    }

    #[test]
    fn rejects_bad_indices() {
        let m = Mesh::from_raw(2, vec![0.0; 6], vec![0, 1, 2, 0, 1, 5]).unwrap();
        match mesh_edges(&m) {
            Err(Error::InvalidCell { cell, reason }) => {
                assert_eq!(cell, 1);
                assert_eq!(
                    reason,
                    "vertex index 5 (local vertex 2) is out of range (3 vertices)"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
