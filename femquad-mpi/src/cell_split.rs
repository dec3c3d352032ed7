//! [`CellSplit`]: a rank's cells split into *interior* cells, whose
//! vertices no other rank holds, and *boundary* cells, which touch a
//! **shared** vertex (a ghost, or an owned vertex that another rank holds
//! as a ghost); the interior cells split once more into an *early* and a
//! *late* part. MPI-free: computed once from the rank's [`RankLayout`].
//!
//! The split is what lets a distributed operator overlap its halo exchanges
//! with computation: the interior cells read and write no shared vertex, so
//! the early ones can be integrated while the ghost values are still in
//! flight, and the late ones while the boundary cells' sums travel to their
//! owners (the ghost accumulate); only the boundary cells need the ghosts
//! (see [`DistOperator`](crate::DistOperator)'s "Overlap").
//!
//! # The late part
//! On a rank with neighbours, the last `⌊n_I / LATE_DIVISOR⌋` of its `n_I`
//! interior cells (in local cell order, so their vertices are few and
//! close together: [`LATE_DIVISOR`]); none on a rank without neighbours
//! (it has no accumulate to hide) or with fewer than `LATE_DIVISOR`
//! interior cells.

use femquad::Result;
use femquad::mesh::Mesh;

use crate::layout::RankLayout;

/// The late part takes `1/LATE_DIVISOR` of a rank's interior cells (see
/// the [module documentation](self#the-late-part)): enough work to cover
/// the accumulate's round trip (downloads, host messages, uploads: tenths
/// of a millisecond) at the sizes that matter (millions of cells a rank),
/// little enough that its gathers and additions over its own vertices
/// (which the early part, bound over all local vertices, needs not) cost
/// little.
pub const LATE_DIVISOR: usize = 4;

/// A rank's cells in three parts (local cell indices, each list
/// increasing; every cell in exactly one): see the [module
/// documentation](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellSplit {
    /// Interior cells (no shared vertex) integrated during the ghost
    /// update: all of them but the late ones.
    pub early: Vec<u32>,
    /// Interior cells integrated during the ghost accumulate: the last
    /// `⌊n_I / LATE_DIVISOR⌋` interior cells on a rank with neighbours,
    /// else none.
    pub late: Vec<u32>,
    /// Cells with at least one shared vertex.
    pub boundary: Vec<u32>,
    /// The local vertices of the boundary cells, increasing (all ghosts
    /// among them: every ghost is a vertex of a boundary cell).
    pub boundary_vertices: Vec<u32>,
    /// The local vertices of the late cells, increasing (none shared).
    pub late_vertices: Vec<u32>,
}

impl CellSplit {
    /// The split of `layout`'s cells.
    pub fn new(layout: &RankLayout) -> CellSplit {
        let shared = shared_vertices(layout);
        let nv = layout.dim + 1;
        let (mut interior, mut boundary) = (Vec::new(), Vec::new());
        for (c, cell) in layout.connectivity.chunks_exact(nv).enumerate() {
            if cell.iter().any(|&v| shared[v as usize]) {
                boundary.push(c as u32);
            } else {
                interior.push(c as u32);
            }
        }
        let n_late = if layout.neighbours.is_empty() {
            0
        } else {
            interior.len() / LATE_DIVISOR
        };
        let late = interior.split_off(interior.len() - n_late);
        CellSplit {
            boundary_vertices: vertices_of(layout, &boundary),
            late_vertices: vertices_of(layout, &late),
            early: interior,
            late,
            boundary,
        }
    }

    /// The early interior cells over **all** the rank's local vertices (the
    /// same numbering as the rank's vectors; vertices of no early cell
    /// unused), `None` without early cells.
    ///
    /// # Errors
    /// Those of [`Mesh::from_raw`] (the cells are the rank's, validated by
    /// [`RankLayout::local_mesh`]).
    pub fn early_mesh(&self, layout: &RankLayout) -> Result<Option<Mesh>> {
        if self.early.is_empty() {
            return Ok(None);
        }
        let cells = cells_of(layout, &self.early, |v| v);
        Mesh::from_raw(layout.dim, layout.coordinates.clone(), cells).map(Some)
    }

    /// The boundary cells over their own vertices only, numbered as in
    /// [`CellSplit::boundary_vertices`] (vertex `k` of this mesh is local
    /// vertex `boundary_vertices[k]`), `None` without boundary cells.
    ///
    /// # Errors
    /// As [`CellSplit::early_mesh`].
    pub fn boundary_mesh(&self, layout: &RankLayout) -> Result<Option<Mesh>> {
        compact_mesh(layout, &self.boundary, &self.boundary_vertices)
    }

    /// The late cells over their own vertices only, numbered as in
    /// [`CellSplit::late_vertices`], `None` without late cells.
    ///
    /// # Errors
    /// As [`CellSplit::early_mesh`].
    pub fn late_mesh(&self, layout: &RankLayout) -> Result<Option<Mesh>> {
        compact_mesh(layout, &self.late, &self.late_vertices)
    }
}

/// `cells` of `layout` over their vertices `vertices` (increasing, exactly
/// those of the cells): vertex `k` of the mesh is local vertex
/// `vertices[k]`; `None` without cells.
fn compact_mesh(layout: &RankLayout, cells: &[u32], vertices: &[u32]) -> Result<Option<Mesh>> {
    if cells.is_empty() {
        return Ok(None);
    }
    let mut compact = vec![u32::MAX; layout.n_local()];
    for (k, &v) in vertices.iter().enumerate() {
        compact[v as usize] = k as u32;
    }
    let connectivity = cells_of(layout, cells, |v| compact[v as usize]);
    let d = layout.dim;
    let coordinates = vertices
        .iter()
        .flat_map(|&v| layout.coordinates[v as usize * d..(v as usize + 1) * d].to_vec())
        .collect();
    Mesh::from_raw(d, coordinates, connectivity).map(Some)
}

/// The local vertices of `cells` (local indices into `layout`'s cells),
/// increasing.
fn vertices_of(layout: &RankLayout, cells: &[u32]) -> Vec<u32> {
    let mut used = vec![false; layout.n_local()];
    for v in cells_of(layout, cells, |v| v) {
        used[v as usize] = true;
    }
    (0..layout.n_local() as u32)
        .filter(|&v| used[v as usize])
        .collect()
}

/// Whether each local vertex of `layout` is shared: a ghost, or owned and
/// held as a ghost by a neighbour.
pub fn shared_vertices(layout: &RankLayout) -> Vec<bool> {
    let mut shared: Vec<bool> = (0..layout.n_local()).map(|l| l >= layout.n_owned).collect();
    for n in &layout.neighbours {
        for &l in &n.shared_owned {
            shared[l as usize] = true;
        }
    }
    shared
}

/// The connectivity of `cells` (local indices into `layout`'s cells), each
/// vertex renamed by `vertex`.
fn cells_of(layout: &RankLayout, cells: &[u32], vertex: impl Fn(u32) -> u32) -> Vec<u32> {
    let nv = layout.dim + 1;
    cells
        .iter()
        .flat_map(|&c| {
            let at = c as usize * nv;
            layout.connectivity[at..at + nv].iter().map(|&v| vertex(v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::layouts;
    use femquad::mesh::{MeshOptions, unit_square};

    /// For every rank of `layouts(mesh, part)`: every cell in exactly one
    /// part; boundary cells exactly those with a vertex in cells of two or
    /// more ranks (decided on the global mesh), so early ∪ late the
    /// interior cells; the late cells the last `⌊n_I / LATE_DIVISOR⌋`
    /// interior ones on a rank with neighbours (none otherwise), every early
    /// cell before every late one; each part's vertices those of its cells;
    /// and the part meshes the rank's cells.
    fn check_split(mesh: &Mesh, part: &[u32], n_ranks: usize) -> Vec<CellSplit> {
        // the ranks of each global vertex's cells
        let mut ranks_at = vec![Vec::<u32>::new(); mesh.n_vertices()];
        for (c, &r) in part.iter().enumerate() {
            for &v in mesh.cell(c) {
                if !ranks_at[v as usize].contains(&r) {
                    ranks_at[v as usize].push(r);
                }
            }
        }
        let mut splits = Vec::new();
        for l in layouts(mesh, part, n_ranks).unwrap() {
            let s = CellSplit::new(&l);
            let mut all: Vec<u32> = [&s.early, &s.late, &s.boundary]
                .into_iter()
                .flatten()
                .copied()
                .collect();
            all.sort_unstable();
            assert_eq!(all, (0..l.cells.len() as u32).collect::<Vec<_>>());
            let mut interior = Vec::new();
            for (c, &g) in l.cells.iter().enumerate() {
                let touches = mesh
                    .cell(g as usize)
                    .iter()
                    .any(|&v| ranks_at[v as usize].len() > 1);
                assert_eq!(
                    s.boundary.binary_search(&(c as u32)).is_ok(),
                    touches,
                    "rank {} cell {c} (global {g})",
                    l.rank
                );
                if !touches {
                    interior.push(c as u32);
                }
            }
            let n_late = if l.neighbours.is_empty() {
                0
            } else {
                interior.len() / LATE_DIVISOR
            };
            let (early, late) = interior.split_at(interior.len() - n_late);
            assert_eq!(
                (&s.early[..], &s.late[..]),
                (early, late),
                "rank {}",
                l.rank
            );
            // each compact part: its vertices those of its cells, its mesh
            // the rank's cells over them
            for (cells, vertices, m) in [
                (
                    &s.boundary,
                    &s.boundary_vertices,
                    s.boundary_mesh(&l).unwrap(),
                ),
                (&s.late, &s.late_vertices, s.late_mesh(&l).unwrap()),
            ] {
                let mut used: Vec<u32> = cells
                    .iter()
                    .flat_map(|&c| {
                        let at = c as usize * (l.dim + 1);
                        l.connectivity[at..at + l.dim + 1].to_vec()
                    })
                    .collect();
                used.sort_unstable();
                used.dedup();
                assert_eq!(vertices, &used);
                let Some(m) = m else {
                    assert!(cells.is_empty());
                    continue;
                };
                assert_eq!(
                    global_cells(&l, &m, &|v| vertices[v as usize]),
                    expect(mesh, &l, cells)
                );
                for (k, &v) in vertices.iter().enumerate() {
                    assert_eq!(
                        m.vertex(k),
                        &l.coordinates[v as usize * 2..v as usize * 2 + 2]
                    );
                }
            }
            // no late vertex is shared
            let shared = shared_vertices(&l);
            assert!(s.late_vertices.iter().all(|&v| !shared[v as usize]));
            if let Some(m) = s.early_mesh(&l).unwrap() {
                assert_eq!(global_cells(&l, &m, &|v| v), expect(mesh, &l, &s.early));
                assert_eq!(m.n_vertices(), l.n_local());
            } else {
                assert!(s.early.is_empty());
            }
            splits.push(s);
        }
        splits
    }

    /// The cells of the part mesh `m` by their global vertices, its vertex
    /// `v` being local vertex `to_local(v)` of `l`.
    fn global_cells(l: &RankLayout, m: &Mesh, to_local: &dyn Fn(u32) -> u32) -> Vec<Vec<u32>> {
        (0..m.n_cells())
            .map(|c| {
                m.cell(c)
                    .iter()
                    .map(|&v| l.global_vertices[to_local(v) as usize])
                    .collect()
            })
            .collect()
    }

    /// The global mesh's cells of `l`'s local cells `cells`.
    fn expect(mesh: &Mesh, l: &RankLayout, cells: &[u32]) -> Vec<Vec<u32>> {
        cells
            .iter()
            .map(|&c| mesh.cell(l.cells[c as usize] as usize).to_vec())
            .collect()
    }

    /// The unit square of `n × n` squares in `strips` vertical strips (by
    /// cell centroid).
    fn strips(n: usize, strips: usize) -> (Mesh, Vec<u32>) {
        let mesh = unit_square(n, &MeshOptions::default()).unwrap();
        let part = (0..mesh.n_cells())
            .map(|c| {
                let x: f64 = mesh
                    .cell(c)
                    .iter()
                    .map(|&v| mesh.vertex(v as usize)[0])
                    .sum::<f64>()
                    / 3.0;
                (x * strips as f64).floor() as u32
            })
            .collect();
        (mesh, part)
    }

    /// A 9 × 9 square in three vertical strips: the middle rank owns none
    /// of its shared vertices' left column (rank 0 does) but owns its right
    /// one (rank 2 holds it as ghosts), so both kinds of shared vertex make
    /// boundary cells.
    #[test]
    fn boundary_cells_are_exactly_those_touching_shared_vertices() {
        let (mesh, part) = strips(9, 3);
        let splits = check_split(&mesh, &part, 3);
        // each strip is 3 squares wide: interior cells exist on every rank,
        // boundary cells on both sides of the middle strip
        assert!(splits.iter().all(|s| !s.early.is_empty()));
        let middle = &splits[1];
        assert!(middle.boundary.len() > splits[0].boundary.len());
        // one rank: no shared vertex, every cell interior, none late
        let one = check_split(&mesh, &vec![0; mesh.n_cells()], 1);
        assert!(one[0].boundary.is_empty() && one[0].boundary_vertices.is_empty());
        assert!(one[0].late.is_empty() && one[0].early.len() == mesh.n_cells());
        // one cell per rank on 3 ranks of a 1 × 1 square's 2 cells (+ an empty rank)
        let tiny = unit_square(1, &MeshOptions::default()).unwrap();
        let s = check_split(&tiny, &[0, 1], 3);
        assert!(s[0].early.is_empty() && s[1].early.is_empty());
        assert!(s[2].early.is_empty() && s[2].boundary.is_empty());
        assert!(s.iter().all(|s| s.late.is_empty()));
    }

    /// On ranks with neighbours and enough interior cells the late part is
    /// a non-empty quarter of them, apart from the early ones.
    #[test]
    fn the_late_part_is_a_quarter_of_the_interior_cells_where_ranks_have_neighbours() {
        let (mesh, part) = strips(16, 2);
        for s in check_split(&mesh, &part, 2) {
            let interior = s.early.len() + s.late.len();
            assert!(interior >= 2 * LATE_DIVISOR, "{s:?}");
            assert_eq!(s.late.len(), interior / LATE_DIVISOR);
            assert!(!s.late.is_empty() && !s.late_vertices.is_empty());
            assert!(s.early.iter().all(|e| !s.late.contains(e)));
        }
    }
}
