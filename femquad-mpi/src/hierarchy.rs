//! [`DistHierarchy`]: a distributed coarse mesh and its uniform refinements,
//! each rank refining its own cells — every level partitioned like the
//! coarse mesh (a fine cell on its parent's rank) and nested in it, without
//! repartitioning and without a global fine mesh anywhere.
//!
//! # One level of refinement
//! Each rank refines its local mesh with femquad's [`refine`] (triangles
//! into 4, tetrahedra into 8, children of local cell `c` the fine cells
//! `2^dim·c + j`): its fine local mesh is its coarse local vertices followed
//! by the midpoints of its local edges. Fine cell `2^dim·c + j` of a rank is
//! the serial refinement's fine cell `2^dim·C + j` of its global cell `C`,
//! with the same vertex order (the refinement of a cell depends on its vertex
//! order only), so global cell numbers carry over.
//!
//! # Global numbering and ownership of the fine vertices
//! * A **coarse vertex** keeps its global number, its owner and its ghosts:
//!   the ranks with a fine cell at it are the ranks with a coarse cell at it.
//! * The **midpoint of a coarse edge** `{a, b}` (global numbers) is held by
//!   the ranks with a cell containing that edge, and **owned by the lowest of
//!   them** — the layout's rule ([`crate::layout`]) applied to the fine
//!   mesh, decided from the edge's two global endpoint numbers, never from a
//!   rank's local order. The ranks learn who holds which edge from one
//!   all-gather of the edges whose endpoints are both shared (held by more
//!   than one rank): an interface's edges, not the volume's — but every
//!   rank receives every rank's, so memory and traffic grow with the total
//!   interface, not with a rank's own (an exchange with the neighbours only
//!   is the scalable replacement; not done).
//! * **Numbers**: the coarse vertices keep `0..n_c`; then each rank in turn
//!   numbers the midpoints it owns: first those other ranks hold too
//!   (increasing `(a, b)`, known to every rank from the all-gather), then
//!   its interior ones (increasing `(a, b)`). A rank thus computes every
//!   global number it holds without asking the owner. This numbering is not
//!   the serial [`MeshHierarchy`](femquad::multigrid::MeshHierarchy)'s (which
//!   numbers the midpoints by first touch in the global mesh's cell order),
//!   nor does it depend on the order of a rank's local refinement (its
//!   `edge_vertices`, used only through the global keys of their
//!   endpoints); compare by coordinates, which are the same bits.
//! * The fine [`RankLayout`] follows the layout's conventions: owned
//!   vertices first in increasing global number, then the ghosts by (owner,
//!   global number); neighbour lists in increasing global number.
//!
//! # Coarse mesh
//! Refined as distributed: distribute a mesh prepared by
//! [`prepare_for_refinement`](femquad::mesh::refine::prepare_for_refinement)
//! (a permutation of each tetrahedron's vertices; the identity on triangles)
//! for the element quality of femquad's serial hierarchies, and the same
//! levels as [`MeshHierarchy::new`](femquad::multigrid::MeshHierarchy::new).

use std::collections::BTreeMap;
use std::rc::Rc;

use femquad::mesh::refine::refine;
use femquad::{Error, Result};

use crate::comm::Ranks;
use crate::dist_mesh::DistMesh;
use crate::layout::{Neighbour, RankLayout};

/// A distributed coarse mesh and its uniform refinements (see the [module
/// documentation](self)), level 0 the coarsest.
pub struct DistHierarchy {
    meshes: Vec<Rc<DistMesh>>,
    refinements: Vec<LocalRefinement>,
}

/// How one rank's mesh of level `l + 1` comes from its mesh of level `l`.
#[derive(Clone, Debug)]
pub struct LocalRefinement {
    /// The edges of the rank's coarse local mesh (local vertices, `a < b`);
    /// edge `k`'s midpoint is the refined vertex `n_coarse_local + k`.
    pub edges: Vec<[u32; 2]>,
    /// The fine local vertex (in the fine layout's numbering) of each
    /// refined vertex: the coarse local vertices first, then the midpoints.
    pub fine_of: Vec<u32>,
}

impl DistHierarchy {
    /// Collective: `coarse` and `refinements` uniform refinements of it, each
    /// rank refining its own cells.
    ///
    /// # Errors
    /// On every rank: a rank's invalid cell ([`Error::InvalidCell`] with the
    /// global index) or [`refine`]'s errors; [`Error::InvalidArgument`]
    /// naming `refinements` if the fine vertices or cells exceed 32-bit
    /// global numbers (with the level).
    pub fn new(coarse: &Rc<DistMesh>, refinements: usize) -> Result<Self> {
        let mut meshes = vec![coarse.clone()];
        let mut steps = Vec::with_capacity(refinements);
        for level in 1..=refinements {
            let ranks = Ranks::world();
            let (layout, step) = refine_layout(&ranks, meshes[level - 1].layout(), level)?;
            meshes.push(DistMesh::from_layout(ranks, layout));
            steps.push(step);
        }
        Ok(DistHierarchy {
            meshes,
            refinements: steps,
        })
    }

    /// Number of levels, `refinements + 1`.
    pub fn n_levels(&self) -> usize {
        self.meshes.len()
    }

    /// The distributed mesh of `level` (0 the coarsest).
    pub fn mesh(&self, level: usize) -> Option<&Rc<DistMesh>> {
        self.meshes.get(level)
    }

    /// The finest distributed mesh.
    pub fn finest(&self) -> &Rc<DistMesh> {
        &self.meshes[self.meshes.len() - 1]
    }

    /// This rank's refinement from `level` to `level + 1` (`None` for the
    /// finest).
    pub fn refinement(&self, level: usize) -> Option<&LocalRefinement> {
        self.refinements.get(level)
    }
}

/// Collective: the fine layout of this rank's refined cells and how its
/// vertices come from the coarse ones (`level`: the fine level, for errors).
fn refine_layout(
    ranks: &Ranks,
    coarse: &RankLayout,
    level: usize,
) -> Result<(RankLayout, LocalRefinement)> {
    let refined = ranks.agree((|| match coarse.local_mesh()? {
        Some(mesh) => refine(&mesh).map(Some),
        None => Ok(None),
    })())?;
    let n_lc = coarse.n_local();
    let global = &coarse.global_vertices;
    let edges: Vec<[u32; 2]> = refined
        .as_ref()
        .map_or_else(Vec::new, |r| r.edge_vertices().to_vec());
    let key = |e: &[u32; 2]| -> (u32, u32) {
        let (a, b) = (global[e[0] as usize], global[e[1] as usize]);
        (a.min(b), a.max(b))
    };
    // the vertices other ranks hold too: ghosts, and owned ones a neighbour
    // holds as ghosts
    let mut shared = vec![false; n_lc];
    shared[coarse.n_owned..].fill(true);
    for n in &coarse.neighbours {
        for &l in &n.shared_owned {
            shared[l as usize] = true;
        }
    }
    let candidates: Vec<u32> = edges
        .iter()
        .filter(|e| shared[e[0] as usize] && shared[e[1] as usize])
        .flat_map(|e| {
            let (a, b) = key(e);
            [a, b]
        })
        .collect();
    // the ranks holding each interface edge (increasing), if more than one
    let mut holders: BTreeMap<(u32, u32), Vec<u32>> = BTreeMap::new();
    for (q, list) in ranks
        .all_gather_u32s_varcount(&candidates)
        .iter()
        .enumerate()
    {
        for pair in list.chunks_exact(2) {
            holders
                .entry((pair[0], pair[1]))
                .or_default()
                .push(q as u32);
        }
    }
    holders.retain(|_, h| h.len() > 1);
    // per rank: the shared midpoints it owns, increasing (BTreeMap order)
    let n_ranks = coarse.n_ranks;
    let rank = coarse.rank;
    let mut shared_owned_of: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_ranks];
    for (&k, h) in &holders {
        shared_owned_of[h[0] as usize].push(k);
    }
    let mut interior: Vec<(u32, u32)> = edges
        .iter()
        .map(key)
        .filter(|k| !holders.contains_key(k))
        .collect();
    interior.sort_unstable();
    let interior_counts = ranks.all_gather_u64(interior.len() as u64);
    let mut offsets = Vec::with_capacity(n_ranks);
    let mut next = coarse.n_global_vertices as u64;
    for (q, owned) in shared_owned_of.iter().enumerate() {
        offsets.push(next);
        next += owned.len() as u64 + interior_counts[q];
    }
    let too_many = |what: &str, n: u64| {
        Error::arg(
            "refinements",
            format!(
                "level {level} of the distributed hierarchy has {n} {what}, more than 32-bit \
                 global numbers hold: refine less"
            ),
        )
    };
    if next > u32::MAX as u64 {
        return Err(too_many("vertices", next));
    }
    let n_global_vertices = next as usize;
    // (owner, global number) of every refined vertex: coarse ones, midpoints
    let vertices = ranks.agree((|| -> Result<Vec<(u32, u32)>> {
        let mut vertices: Vec<(u32, u32)> = (0..n_lc)
            .map(|l| {
                let owner = if l < coarse.n_owned {
                    rank as u32
                } else {
                    coarse.ghost_owners[l - coarse.n_owned]
                };
                (owner, global[l])
            })
            .collect();
        let unlisted = || Error::internal("a refined edge is missing from its owner's list");
        for e in &edges {
            let k = key(e);
            let (owner, at) = match holders.get(&k) {
                Some(h) => {
                    let q = h[0] as usize;
                    let at = shared_owned_of[q]
                        .binary_search(&k)
                        .map_err(|_| unlisted())?;
                    (q, offsets[q] + at as u64)
                }
                None => {
                    let at = interior.binary_search(&k).map_err(|_| unlisted())?;
                    (
                        rank,
                        offsets[rank] + (shared_owned_of[rank].len() + at) as u64,
                    )
                }
            };
            vertices.push((owner as u32, at as u32));
        }
        Ok(vertices)
    })())?;
    // the fine local order: owned by global number, then ghosts by (owner, number)
    let mut order: Vec<usize> = (0..vertices.len()).collect();
    order.sort_unstable_by_key(|&i| {
        let (owner, g) = vertices[i];
        if owner as usize == rank {
            (0, 0, g)
        } else {
            (1, owner, g)
        }
    });
    let mut fine_of = vec![0u32; vertices.len()];
    for (l, &i) in order.iter().enumerate() {
        fine_of[i] = l as u32;
    }
    let n_owned = vertices.iter().filter(|v| v.0 as usize == rank).count();
    let global_vertices: Vec<u32> = order.iter().map(|&i| vertices[i].1).collect();
    let ghost_owners: Vec<u32> = order[n_owned..].iter().map(|&i| vertices[i].0).collect();
    // neighbours: ghosts by owner; owned vertices other ranks hold
    let mut neighbours: BTreeMap<usize, Neighbour> = BTreeMap::new();
    fn entry(neighbours: &mut BTreeMap<usize, Neighbour>, q: usize) -> &mut Neighbour {
        neighbours.entry(q).or_insert_with(|| Neighbour {
            rank: q,
            ghosts: Vec::new(),
            shared_owned: Vec::new(),
        })
    }
    for (l, &owner) in (n_owned..).zip(&ghost_owners) {
        entry(&mut neighbours, owner as usize).ghosts.push(l as u32);
    }
    for n in &coarse.neighbours {
        let list = &mut entry(&mut neighbours, n.rank).shared_owned;
        list.extend(n.shared_owned.iter().map(|&l| fine_of[l as usize]));
    }
    for (k, e) in edges.iter().enumerate() {
        if let Some(h) = holders.get(&key(e))
            && h[0] as usize == rank
        {
            for &q in &h[1..] {
                let list = &mut entry(&mut neighbours, q as usize).shared_owned;
                list.push(fine_of[n_lc + k]);
            }
        }
    }
    let neighbours: Vec<Neighbour> = neighbours
        .into_values()
        .map(|mut n| {
            n.shared_owned
                .sort_unstable_by_key(|&l| global_vertices[l as usize]);
            n
        })
        .filter(|n| !(n.ghosts.is_empty() && n.shared_owned.is_empty()))
        .collect();
    // coordinates, cells and their global numbers
    let dim = coarse.dim;
    let mut coordinates = vec![0.0; vertices.len() * dim];
    let mut connectivity = Vec::new();
    let mut cells = Vec::new();
    if let Some(r) = &refined {
        let mesh = r.mesh();
        for (i, &l) in fine_of.iter().enumerate() {
            coordinates[l as usize * dim..(l as usize + 1) * dim].copy_from_slice(mesh.vertex(i));
        }
        connectivity = mesh.cells().iter().map(|&v| fine_of[v as usize]).collect();
        let children = r.children_per_cell() as u64;
        cells = coarse
            .cells
            .iter()
            .flat_map(|&c| (0..children).map(move |j| c as u64 * children + j))
            .collect();
    }
    let most = cells.iter().copied().max().unwrap_or(0);
    let most = ranks.all_gather_u64(most).into_iter().max().unwrap_or(0);
    if most > u32::MAX as u64 {
        return Err(too_many("cells", most + 1));
    }
    let cells: Vec<u32> = cells.into_iter().map(|c| c as u32).collect();
    let layout = RankLayout {
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
    };
    Ok((layout, LocalRefinement { edges, fine_of }))
}
