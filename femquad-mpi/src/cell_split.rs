//! [`CellSplit`]: a rank's cells split into *interior* cells, whose
//! vertices no other rank holds, and *boundary* cells, which touch a
//! **shared** vertex (a ghost, or an owned vertex that another rank holds
//! as a ghost). MPI-free: computed once from the rank's [`RankLayout`].
//!
//! The split is what lets a distributed operator overlap its halo exchange
//! with computation: the interior cells read and write no shared vertex, so
//! they can be integrated while the ghost values are still in flight; only
//! the boundary cells need them (see
//! [`DistOperator`](crate::DistOperator)'s "Overlap").

use femquad::Result;
use femquad::mesh::Mesh;

use crate::layout::RankLayout;

/// A rank's cells in two parts (local cell indices, each list increasing;
/// every cell in exactly one): see the [module documentation](self).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellSplit {
    /// Cells with no shared vertex.
    pub interior: Vec<u32>,
    /// Cells with at least one shared vertex.
    pub boundary: Vec<u32>,
    /// The local vertices of the boundary cells, increasing (all ghosts
    /// among them: every ghost is a vertex of a boundary cell).
    pub boundary_vertices: Vec<u32>,
}

impl CellSplit {
    /// The split of `layout`'s cells.
    pub fn new(layout: &RankLayout) -> CellSplit {
        let shared = shared_vertices(layout);
        let nv = layout.dim + 1;
        let (mut interior, mut boundary) = (Vec::new(), Vec::new());
        let mut in_boundary = vec![false; layout.n_local()];
        for (c, cell) in layout.connectivity.chunks_exact(nv).enumerate() {
            if cell.iter().any(|&v| shared[v as usize]) {
                boundary.push(c as u32);
                for &v in cell {
                    in_boundary[v as usize] = true;
                }
            } else {
                interior.push(c as u32);
            }
        }
        let boundary_vertices = (0..layout.n_local() as u32)
            .filter(|&v| in_boundary[v as usize])
            .collect();
        CellSplit {
            interior,
            boundary,
            boundary_vertices,
        }
    }

    /// The interior cells over **all** the rank's local vertices (the same
    /// numbering as the rank's vectors; vertices of no interior cell
    /// unused), `None` without interior cells.
    ///
    /// # Errors
    /// Those of [`Mesh::from_raw`] (the cells are the rank's, validated by
    /// [`RankLayout::local_mesh`]).
    pub fn interior_mesh(&self, layout: &RankLayout) -> Result<Option<Mesh>> {
        if self.interior.is_empty() {
            return Ok(None);
        }
        let cells = cells_of(layout, &self.interior, |v| v);
        Mesh::from_raw(layout.dim, layout.coordinates.clone(), cells).map(Some)
    }

    /// The boundary cells over their own vertices only, numbered as in
    /// [`CellSplit::boundary_vertices`] (vertex `k` of this mesh is local
    /// vertex `boundary_vertices[k]`), `None` without boundary cells.
    ///
    /// # Errors
    /// As [`CellSplit::interior_mesh`].
    pub fn boundary_mesh(&self, layout: &RankLayout) -> Result<Option<Mesh>> {
        if self.boundary.is_empty() {
            return Ok(None);
        }
        let mut compact = vec![u32::MAX; layout.n_local()];
        for (k, &v) in self.boundary_vertices.iter().enumerate() {
            compact[v as usize] = k as u32;
        }
        let cells = cells_of(layout, &self.boundary, |v| compact[v as usize]);
        let d = layout.dim;
        let coordinates = self
            .boundary_vertices
            .iter()
            .flat_map(|&v| layout.coordinates[v as usize * d..(v as usize + 1) * d].to_vec())
            .collect();
        Mesh::from_raw(d, coordinates, cells).map(Some)
    }
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
    /// part, boundary cells exactly those with a vertex in cells of two or
    /// more ranks (decided on the global mesh), the boundary vertices those
    /// of the boundary cells, and the part meshes the rank's cells.
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
            let mut all: Vec<u32> = s.interior.iter().chain(&s.boundary).copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..l.cells.len() as u32).collect::<Vec<_>>());
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
            }
            let mut used: Vec<u32> = s
                .boundary
                .iter()
                .flat_map(|&c| {
                    let at = c as usize * (l.dim + 1);
                    l.connectivity[at..at + l.dim + 1].to_vec()
                })
                .collect();
            used.sort_unstable();
            used.dedup();
            assert_eq!(s.boundary_vertices, used);
            // the parts' meshes: their cells' global vertices are the rank's cells'
            let global_cells = |m: &Mesh, to_local: &dyn Fn(u32) -> u32| -> Vec<Vec<u32>> {
                (0..m.n_cells())
                    .map(|c| {
                        m.cell(c)
                            .iter()
                            .map(|&v| l.global_vertices[to_local(v) as usize])
                            .collect()
                    })
                    .collect()
            };
            let expect = |cells: &[u32]| -> Vec<Vec<u32>> {
                cells
                    .iter()
                    .map(|&c| mesh.cell(l.cells[c as usize] as usize).to_vec())
                    .collect()
            };
            if let Some(m) = s.interior_mesh(&l).unwrap() {
                assert_eq!(global_cells(&m, &|v| v), expect(&s.interior));
                assert_eq!(m.n_vertices(), l.n_local());
            } else {
                assert!(s.interior.is_empty());
            }
            if let Some(m) = s.boundary_mesh(&l).unwrap() {
                let bv = s.boundary_vertices.clone();
                assert_eq!(global_cells(&m, &|v| bv[v as usize]), expect(&s.boundary));
                for (k, &v) in s.boundary_vertices.iter().enumerate() {
                    assert_eq!(
                        m.vertex(k),
                        &l.coordinates[v as usize * 2..v as usize * 2 + 2]
                    );
                }
            } else {
                assert!(s.boundary.is_empty());
            }
            splits.push(s);
        }
        splits
    }

    /// A 9 × 9 square in three vertical strips (by cell centroid): the
    /// middle rank owns none of its shared vertices' left column (rank 0
    /// does) but owns its right one (rank 2 holds it as ghosts), so both
    /// kinds of shared vertex make boundary cells.
    #[test]
    fn boundary_cells_are_exactly_those_touching_shared_vertices() {
        let mesh = unit_square(9, &MeshOptions::default()).unwrap();
        let part: Vec<u32> = (0..mesh.n_cells())
            .map(|c| {
                let x: f64 = mesh
                    .cell(c)
                    .iter()
                    .map(|&v| mesh.vertex(v as usize)[0])
                    .sum::<f64>()
                    / 3.0;
                (x * 3.0).floor() as u32
            })
            .collect();
        let splits = check_split(&mesh, &part, 3);
        // each strip is 3 squares wide: interior cells exist on every rank,
        // boundary cells on both sides of the middle strip
        assert!(splits.iter().all(|s| !s.interior.is_empty()));
        let middle = &splits[1];
        assert!(middle.boundary.len() > splits[0].boundary.len());
        // one rank: no shared vertex, every cell interior
        let one = check_split(&mesh, &vec![0; mesh.n_cells()], 1);
        assert!(one[0].boundary.is_empty() && one[0].boundary_vertices.is_empty());
        // one cell per rank on 3 ranks of a 1 × 1 square's 2 cells (+ an empty rank)
        let tiny = unit_square(1, &MeshOptions::default()).unwrap();
        let s = check_split(&tiny, &[0, 1], 3);
        assert!(s[0].interior.is_empty() && s[1].interior.is_empty());
        assert!(s[2].interior.is_empty() && s[2].boundary.is_empty());
    }
}
