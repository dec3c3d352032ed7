//! Boundary facets of a mesh: the facets (edges in 2D, triangles in 3D)
//! that belong to exactly one cell, found by a parallel sort of packed facet
//! keys, and the boundary vertices.

use rayon::prelude::*;

use super::{BLOCK, Mesh, bits_for, first_index_defect};
use crate::{Error, Result};

/// Local facets of a triangle: facet `i` is the edge opposite local vertex
/// `i`, listed so that the cell lies to its left (for a positively oriented
/// triangle the outward normal of the edge `(a, b)` is `(b − a)` rotated
/// clockwise by 90°).
pub const TRIANGLE_FACETS: [[usize; 2]; 3] = [[1, 2], [2, 0], [0, 1]];

/// Local facets of a tetrahedron: facet `i` is the triangle opposite local
/// vertex `i`, listed so that `(b − a) × (c − a)` points out of a positively
/// oriented tetrahedron.
pub const TETRAHEDRON_FACETS: [[usize; 3]; 4] = [[1, 2, 3], [0, 3, 2], [0, 1, 3], [0, 2, 1]];

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

impl Mesh {
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
    pub(super) fn boundary_keys(&self) -> Result<Vec<[u32; 3]>> {
        let (dim, k, nv, nc) = (
            self.dim,
            self.vertices_per_cell(),
            self.n_vertices(),
            self.n_cells(),
        );
        let bad = first_index_defect(&self.cells, k, nv);
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
pub(super) fn sorted_facet(dim: usize, cell: &[u32], i: usize) -> [u32; 3] {
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
pub(super) struct FacetPacking {
    dim: usize,
    /// Bits per vertex index.
    b: u32,
    /// Partition bits.
    p: u32,
}

impl FacetPacking {
    pub(super) fn new(dim: usize, nv: usize) -> Result<Self> {
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

    pub(super) fn parts(&self) -> usize {
        1 << self.p
    }

    #[inline]
    pub(super) fn part(&self, f: &[u32; 3]) -> usize {
        (f[0] >> (self.b - self.p)) as usize
    }

    #[inline]
    pub(super) fn key(&self, f: &[u32; 3]) -> u64 {
        let low = u128::from(f[0]) & ((1u128 << (self.b - self.p)) - 1);
        let mut key = low;
        for &v in &f[1..self.dim] {
            key = (key << self.b) | u128::from(v);
        }
        key as u64
    }

    pub(super) fn unpack(&self, part: usize, key: u64) -> [u32; 3] {
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
}
