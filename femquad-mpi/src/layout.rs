//! What one rank holds of a partitioned mesh: its cells, its owned and ghost
//! vertices, and the vertices it exchanges with each neighbour. MPI-free:
//! rank 0 computes every rank's [`RankLayout`] from the global mesh and a
//! cell partition ([`layouts`]) and sends each rank its own
//! ([`RankLayout::to_words`], [`RankLayout::from_words`]).
//!
//! # Ownership rule
//! A vertex is **owned by the lowest rank among the ranks of its cells**
//! (a vertex of no cell by rank 0). Every other rank with a cell at that
//! vertex holds it as a **ghost**. So the owner of a ghost always holds the
//! vertex too, and each shared vertex has exactly one owner.
//!
//! # Local numbering
//! Owned vertices first, in increasing global index; then the ghosts,
//! ordered by (owner rank, global index). The local dof of a field with
//! `N_comp` components is `local_vertex·N_comp + c`, as femquad's global
//! one is `vertex·N_comp + c`: the owned dofs of a rank are its first
//! `n_owned·N_comp` local dofs, and [`RankLayout::global_vertices`] maps
//! every local vertex back to the serial numbering.
//!
//! # Neighbours
//! For each other rank `q` the rank shares vertices with (increasing `q`),
//! [`Neighbour::ghosts`] lists the local vertices it holds as ghosts owned
//! by `q`, and [`Neighbour::shared_owned`] the local vertices it owns that
//! `q` holds as ghosts, both in increasing global index: rank `q`'s
//! `shared_owned` towards this rank pairs entry by entry with this rank's
//! `ghosts` from `q`.

use femquad::mesh::Mesh;
use femquad::{Error, Result};

/// One rank's part of a partitioned mesh (see the [module
/// documentation](self) for the ownership rule and the local numbering).
#[derive(Clone, Debug, PartialEq)]
pub struct RankLayout {
    /// This rank.
    pub rank: usize,
    /// The number of ranks.
    pub n_ranks: usize,
    /// The spatial dimension.
    pub dim: usize,
    /// Vertices of the global mesh.
    pub n_global_vertices: usize,
    /// The global indices of this rank's cells, increasing.
    pub cells: Vec<u32>,
    /// The global index of each local vertex: owned ones first, then ghosts.
    pub global_vertices: Vec<u32>,
    /// How many of the local vertices are owned (the first ones).
    pub n_owned: usize,
    /// The owner rank of each ghost (`global_vertices[n_owned..]`).
    pub ghost_owners: Vec<u32>,
    /// Coordinates of the local vertices (`n_local × dim`).
    pub coordinates: Vec<f64>,
    /// This rank's cells in local vertex indices (`n_cells × (dim + 1)`),
    /// in the order of [`RankLayout::cells`] and with the global mesh's
    /// vertex order in each cell (so the same orientation).
    pub connectivity: Vec<u32>,
    /// The ranks this rank exchanges vertices with, increasing.
    pub neighbours: Vec<Neighbour>,
}

/// The vertices a rank exchanges with one other rank (local indices of the
/// rank holding this, both lists in increasing global index).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbour {
    /// The other rank.
    pub rank: usize,
    /// Local vertices held as ghosts and owned by [`Neighbour::rank`].
    pub ghosts: Vec<u32>,
    /// Owned local vertices that [`Neighbour::rank`] holds as ghosts.
    pub shared_owned: Vec<u32>,
}

impl RankLayout {
    /// Local vertices (owned and ghosts).
    pub fn n_local(&self) -> usize {
        self.global_vertices.len()
    }

    /// The local index of an owned vertex given by its global index, if
    /// this rank owns it.
    pub fn owned_local(&self, global: u32) -> Option<usize> {
        self.global_vertices[..self.n_owned]
            .binary_search(&global)
            .ok()
    }

    /// The local vertices of each neighbour's ghosts (in the order of
    /// [`RankLayout::neighbours`]), checked to be grouped by owner as the
    /// local numbering promises: each neighbour's ghosts consecutive, in
    /// increasing rank, together all ghosts (`n_owned..n_local`) — so a
    /// ghost block is exchanged in one transfer per neighbour.
    ///
    /// # Errors
    /// [`Error::Internal`] naming the rank and the neighbour whose ghosts
    /// are not the consecutive local vertices where they should start, or
    /// how many ghosts the neighbours own if not all.
    pub fn ghost_ranges(&self) -> Result<Vec<std::ops::Range<usize>>> {
        let mut next = self.n_owned;
        let mut ranges = Vec::with_capacity(self.neighbours.len());
        for n in &self.neighbours {
            let consecutive = n
                .ghosts
                .iter()
                .enumerate()
                .all(|(i, &l)| l as usize == next + i);
            if !consecutive {
                return Err(Error::internal(format!(
                    "rank {}: the ghosts owned by rank {} are not the consecutive local \
                     vertices from {next}",
                    self.rank, n.rank
                )));
            }
            ranges.push(next..next + n.ghosts.len());
            next += n.ghosts.len();
        }
        if next != self.n_local() {
            return Err(Error::internal(format!(
                "rank {}: the neighbours own {} of its {} ghosts",
                self.rank,
                next - self.n_owned,
                self.n_local() - self.n_owned
            )));
        }
        Ok(ranges)
    }

    /// This rank's mesh: its cells over its local vertices (the owned and
    /// ghost vertices of those cells), checked by [`Mesh::new`]; `None` for
    /// a rank without cells.
    ///
    /// # Errors
    /// [`Error::InvalidCell`] naming the cell by its **global** index (an
    /// inverted or degenerate cell of the global mesh, found here).
    pub fn local_mesh(&self) -> Result<Option<Mesh>> {
        if self.cells.is_empty() {
            return Ok(None);
        }
        Mesh::new(
            self.dim,
            self.coordinates.clone(),
            self.connectivity.clone(),
        )
        .map(Some)
        .map_err(|e| match e {
            Error::InvalidCell { cell, reason } => Error::InvalidCell {
                cell: self.cells.get(cell).map_or(cell, |&g| g as usize),
                reason,
            },
            other => other,
        })
    }

    /// The layout as integers and reals, for sending it to its rank.
    pub fn to_words(&self) -> (Vec<u64>, Vec<f64>) {
        let mut w: Vec<u64> = vec![
            self.rank as u64,
            self.n_ranks as u64,
            self.dim as u64,
            self.n_global_vertices as u64,
            self.n_owned as u64,
        ];
        let list = |w: &mut Vec<u64>, xs: &[u32]| {
            w.push(xs.len() as u64);
            w.extend(xs.iter().map(|&x| x as u64));
        };
        list(&mut w, &self.cells);
        list(&mut w, &self.global_vertices);
        list(&mut w, &self.ghost_owners);
        list(&mut w, &self.connectivity);
        w.push(self.neighbours.len() as u64);
        for n in &self.neighbours {
            w.push(n.rank as u64);
            list(&mut w, &n.ghosts);
            list(&mut w, &n.shared_owned);
        }
        (w, self.coordinates.clone())
    }

    /// The layout [`RankLayout::to_words`] made.
    ///
    /// # Errors
    /// [`Error::Internal`] if the words are truncated (they did not come
    /// from [`RankLayout::to_words`]).
    pub fn from_words(words: &[u64], coordinates: Vec<f64>) -> Result<RankLayout> {
        let mut it = words.iter().copied();
        let truncated = || Error::Internal {
            what: "a rank layout message is truncated".into(),
        };
        let mut next = || it.next().ok_or_else(truncated);
        let rank = next()? as usize;
        let n_ranks = next()? as usize;
        let dim = next()? as usize;
        let n_global_vertices = next()? as usize;
        let n_owned = next()? as usize;
        let list = |next: &mut dyn FnMut() -> Result<u64>| -> Result<Vec<u32>> {
            let n = next()? as usize;
            (0..n).map(|_| next().map(|x| x as u32)).collect()
        };
        let cells = list(&mut next)?;
        let global_vertices = list(&mut next)?;
        let ghost_owners = list(&mut next)?;
        let connectivity = list(&mut next)?;
        let n_neighbours = next()? as usize;
        let mut neighbours = Vec::with_capacity(n_neighbours);
        for _ in 0..n_neighbours {
            let rank = next()? as usize;
            let ghosts = list(&mut next)?;
            let shared_owned = list(&mut next)?;
            neighbours.push(Neighbour {
                rank,
                ghosts,
                shared_owned,
            });
        }
        Ok(RankLayout {
            rank,
            n_ranks,
            dim,
            n_global_vertices,
            cells,
            global_vertices,
            n_owned,
            ghost_owners,
            coordinates,
            connectivity,
            neighbours,
        })
    }
}

/// Every rank's layout for the cell partition `cell_rank` (the rank of each
/// cell of `mesh`) over `n_ranks` ranks, by the [ownership rule](self). A
/// rank may get no cells (it then holds nothing).
///
/// # Errors
/// [`Error::InvalidArgument`] naming `partition` if it does not hold one
/// rank per cell or names a rank `≥ n_ranks`, `n_ranks` if it is 0.
pub fn layouts(mesh: &Mesh, cell_rank: &[u32], n_ranks: usize) -> Result<Vec<RankLayout>> {
    if n_ranks == 0 {
        return Err(Error::arg("n_ranks", "must be at least 1"));
    }
    if cell_rank.len() != mesh.n_cells() {
        return Err(Error::arg(
            "partition",
            format!(
                "expected one rank per cell ({} cells), got {} entries",
                mesh.n_cells(),
                cell_rank.len()
            ),
        ));
    }
    if let Some((cell, &r)) = cell_rank
        .iter()
        .enumerate()
        .find(|&(_, &r)| r as usize >= n_ranks)
    {
        return Err(Error::arg(
            "partition",
            format!("cell {cell} is given rank {r}, but there are only {n_ranks} ranks"),
        ));
    }
    let nv = mesh.n_vertices();
    let dim = mesh.dim();
    // the owner: the lowest rank of the vertex's cells (rank 0 for none)
    let mut owner = vec![u32::MAX; nv];
    for (c, &r) in cell_rank.iter().enumerate() {
        for &v in mesh.cell(c) {
            owner[v as usize] = owner[v as usize].min(r);
        }
    }
    for o in &mut owner {
        if *o == u32::MAX {
            *o = 0;
        }
    }
    let mut result = Vec::with_capacity(n_ranks);
    for rank in 0..n_ranks {
        let r = rank as u32;
        let cells: Vec<u32> = (0..mesh.n_cells() as u32)
            .filter(|&c| cell_rank[c as usize] == r)
            .collect();
        let mut used = vec![false; nv];
        for &c in &cells {
            for &v in mesh.cell(c as usize) {
                used[v as usize] = true;
            }
        }
        let owned: Vec<u32> = (0..nv as u32).filter(|&v| owner[v as usize] == r).collect();
        let mut ghosts: Vec<u32> = (0..nv as u32)
            .filter(|&v| used[v as usize] && owner[v as usize] != r)
            .collect();
        ghosts.sort_by_key(|&v| (owner[v as usize], v));
        let n_owned = owned.len();
        let ghost_owners = ghosts.iter().map(|&v| owner[v as usize]).collect();
        let global_vertices: Vec<u32> = owned.into_iter().chain(ghosts).collect();
        let mut local = vec![u32::MAX; nv];
        for (l, &g) in global_vertices.iter().enumerate() {
            local[g as usize] = l as u32;
        }
        let coordinates = global_vertices
            .iter()
            .flat_map(|&g| mesh.vertex(g as usize).iter().copied())
            .collect();
        let connectivity = cells
            .iter()
            .flat_map(|&c| mesh.cell(c as usize).iter().map(|&v| local[v as usize]))
            .collect();
        result.push((
            RankLayout {
                rank,
                n_ranks,
                dim,
                n_global_vertices: nv,
                cells,
                global_vertices,
                n_owned,
                ghost_owners,
                coordinates,
                connectivity,
                neighbours: Vec::new(),
            },
            local,
        ));
    }
    // neighbours: rank r's ghosts owned by q pair with q's shared_owned towards r
    for r in 0..n_ranks {
        let (layout, _) = &result[r];
        let ghosts: Vec<(usize, u32, u32)> = (layout.n_owned..layout.n_local())
            .map(|l| {
                (
                    layout.ghost_owners[l - layout.n_owned] as usize,
                    l as u32,
                    layout.global_vertices[l],
                )
            })
            .collect();
        for (q, l, g) in ghosts {
            let lq = result[q].1[g as usize];
            neighbour(&mut result[r].0, q).ghosts.push(l);
            neighbour(&mut result[q].0, r).shared_owned.push(lq);
        }
    }
    Ok(result.into_iter().map(|(l, _)| l).collect())
}

/// The entry of `layout` for neighbour `q`, made if absent (kept sorted).
fn neighbour(layout: &mut RankLayout, q: usize) -> &mut Neighbour {
    let at = match layout.neighbours.binary_search_by_key(&q, |n| n.rank) {
        Ok(at) => at,
        Err(at) => {
            layout.neighbours.insert(
                at,
                Neighbour {
                    rank: q,
                    ghosts: Vec::new(),
                    shared_owned: Vec::new(),
                },
            );
            at
        }
    };
    &mut layout.neighbours[at]
}

#[cfg(test)]
mod tests {
    use super::*;
    use femquad::mesh::{MeshOptions, unit_square};

    /// A 2 × 2 square (9 vertices, 8 triangles) split into a left and a
    /// right half by cell centroid.
    fn halves() -> (Mesh, Vec<u32>) {
        let mesh = unit_square(2, &MeshOptions::default()).unwrap();
        let part = (0..mesh.n_cells())
            .map(|c| {
                let x: f64 = mesh
                    .cell(c)
                    .iter()
                    .map(|&v| mesh.vertex(v as usize)[0])
                    .sum();
                u32::from(x / 3.0 > 0.5)
            })
            .collect();
        (mesh, part)
    }

    #[test]
    fn shared_vertices_are_owned_by_the_lowest_rank_and_ghosts_pair_up() {
        let (mesh, part) = halves();
        let ls = layouts(&mesh, &part, 2).unwrap();
        // rank 0: x ≤ 0.5 — 6 vertices, all owned (the middle column is
        // shared and goes to the lower rank); rank 1: the 3 vertices at
        // x = 1 owned, the middle column's 3 as ghosts
        let xs = |l: &RankLayout, range: std::ops::Range<usize>| -> Vec<f64> {
            range
                .map(|i| mesh.vertex(l.global_vertices[i] as usize)[0])
                .collect()
        };
        assert_eq!(ls[0].n_owned, 6);
        assert_eq!(ls[0].n_local(), 6);
        assert!(xs(&ls[0], 0..6).iter().all(|&x| x <= 0.5));
        assert_eq!(ls[1].n_owned, 3);
        assert_eq!(xs(&ls[1], 0..3), vec![1.0; 3]);
        assert_eq!(xs(&ls[1], 3..6), vec![0.5; 3]);
        assert_eq!(ls[1].ghost_owners, vec![0; 3]);
        // the pairing: rank 0's shared_owned towards 1 and rank 1's ghosts
        // from 0 name the same global vertices in the same order
        let g = |l: &RankLayout, ids: &[u32]| -> Vec<u32> {
            ids.iter().map(|&i| l.global_vertices[i as usize]).collect()
        };
        let (n0, n1) = (&ls[0].neighbours[0], &ls[1].neighbours[0]);
        assert_eq!((n0.rank, n1.rank), (1, 0));
        assert_eq!(g(&ls[0], &n0.shared_owned), g(&ls[1], &n1.ghosts));
        assert_eq!(g(&ls[0], &n0.shared_owned).len(), 3);
        assert!(n0.ghosts.is_empty() && n1.shared_owned.is_empty());
        // the local meshes have the global cells' volume
        let v: f64 = ls
            .iter()
            .map(|l| l.local_mesh().unwrap().unwrap().total_volume())
            .sum();
        assert!((v - 1.0).abs() < 1e-14);
    }

    /// The layouts' ghosts are grouped by owner; a layout whose ghosts are
    /// not (a neighbour's out of order, or one not owned by any neighbour)
    /// is refused naming the rank, the neighbour and where its ghosts
    /// should start, or the count.
    #[test]
    fn ghosts_not_grouped_by_owner_are_refused() {
        let (mesh, part) = halves();
        let ls = layouts(&mesh, &part, 2).unwrap();
        assert_eq!(ls[0].ghost_ranges().unwrap(), vec![6..6]);
        assert_eq!(ls[1].ghost_ranges().unwrap(), vec![3..6]);
        let mut shuffled = ls[1].clone();
        shuffled.neighbours[0].ghosts.swap(0, 2);
        let e = shuffled.ghost_ranges().unwrap_err().to_string();
        assert!(
            e.contains(
                "rank 1: the ghosts owned by rank 0 are not the consecutive local vertices from 3"
            ),
            "{e}"
        );
        let mut orphan = ls[1].clone();
        orphan.neighbours[0].ghosts.pop();
        let e = orphan.ghost_ranges().unwrap_err().to_string();
        assert!(
            e.contains("rank 1: the neighbours own 2 of its 3 ghosts"),
            "{e}"
        );
    }

    #[test]
    fn a_rank_without_cells_holds_nothing_and_words_round_trip() {
        let (mesh, part) = halves();
        let ls = layouts(&mesh, &part, 3).unwrap();
        assert!(ls[2].cells.is_empty() && ls[2].n_local() == 0);
        assert!(ls[2].local_mesh().unwrap().is_none());
        for l in &ls {
            let (w, x) = l.to_words();
            assert_eq!(&RankLayout::from_words(&w, x).unwrap(), l);
        }
        let (w, x) = ls[1].to_words();
        let e = RankLayout::from_words(&w[..w.len() - 1], x).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn a_bad_partition_is_refused_naming_the_cell() {
        let (mesh, mut part) = halves();
        part[5] = 2;
        let e = layouts(&mesh, &part, 2).unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid argument `partition`: cell 5 is given rank 2, but there are only 2 ranks"
        );
        let e = layouts(&mesh, &part[..3], 2).unwrap_err();
        assert!(
            e.to_string()
                .contains("expected one rank per cell (8 cells), got 3")
        );
    }

    #[test]
    fn an_inverted_cell_is_named_by_its_global_index() {
        let (mesh, part) = halves();
        let mut ls = layouts(&mesh, &part, 2).unwrap();
        ls[1].connectivity.swap(3, 4); // the rank's second cell
        let global = ls[1].cells[1];
        match ls[1].local_mesh().unwrap_err() {
            Error::InvalidCell { cell, .. } => assert_eq!(cell, global as usize),
            e => panic!("{e}"),
        }
    }
}
