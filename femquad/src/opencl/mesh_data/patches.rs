//! The patches of the work-groups (kernel `PATCH`, see
//! `kernels/integrate.cl`): for every work-group's chunk of cells — the
//! `chunk` cells `g·chunk ..` that group `g` integrates, in the kernel's
//! order (`N_cb` batches of `N_bl` blocks of `N_bs` cells) — the sorted
//! list of the distinct nodes its cells touch, the cells' nodes as 16-bit
//! positions in that list, and which positions the group owns.
//!
//! * **Group node lists**, one CSR-like pair: group `g`'s nodes are
//!   `nodes[offsets[g] .. offsets[g + 1]]`, sorted, so its vertex nodes
//!   (below `n_vertices`: a space numbers its vertex nodes first) come
//!   before its edge nodes (P2). A group is a *patch* when its list fits
//!   the kernel's capacities — at most `P_A` vertex nodes and `P_B` edge
//!   nodes ([`crate::opencl::shape::KernelShape::patch`]) — else its range
//!   is empty and it gathers from (and adds into) global memory through
//!   the 32-bit cell → node map (the fallback).
//! * **Local node indices** `[cell][b]`: the position of the cell's node
//!   in its group's list; 0 for the cells of groups that are not patches
//!   (which read the global indices instead) and for the padding cells.
//! * **Ownership**, one bit per list entry (bit `k % 32` of word `k / 32`
//!   for `nodes[k]`): set when every cell of that node lies in this group.
//!   The kernel stores such a node's sum with a plain store; every other
//!   entry (a node shared with other groups) is added atomically. So a node
//!   is plain-stored by at most one group, and never when another group
//!   adds to it.

use rayon::prelude::*;

use super::CELL_PADDING;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// The patches of the groups of one chunk size and capacities ([module
/// docs](self)).
#[derive(Debug)]
pub(crate) struct GroupNodes {
    /// `[group + 1]`: group `g`'s list is `nodes[offsets[g]..offsets[g + 1]]`.
    pub(crate) offsets: Vec<u32>,
    /// The groups' node lists, one after another.
    pub(crate) nodes: Vec<u32>,
    /// `[cell][b]`, the position of the cell's node in its group's list,
    /// padded by [`CELL_PADDING`] cells of zeros.
    pub(crate) local: Vec<u16>,
    /// One bit per entry of `nodes`: owned by its group.
    pub(crate) owned: Vec<u32>,
    /// Groups whose list fits (patches); the others fall back.
    pub(crate) patches: usize,
}

#[cfg(test)]
impl GroupNodes {
    /// Group `g`'s node list (empty if it is not a patch).
    pub(crate) fn list(&self, g: usize) -> &[u32] {
        &self.nodes[self.offsets[g] as usize..self.offsets[g + 1] as usize]
    }

    /// Whether entry `k` of `nodes` is owned by its group.
    pub(crate) fn is_owned(&self, k: usize) -> bool {
        self.owned[k / 32] >> (k % 32) & 1 == 1
    }
}

/// The patches of the cells of `space` in chunks of `chunk` cells, with
/// capacities `(cap_a, cap_b)` (vertex nodes, edge nodes; their sum at
/// most 65535, the 16-bit local indices).
///
/// # Errors
/// [`Error::Internal`] if the capacities exceed 16 bits (the check of
/// [`crate::opencl::shape::KernelShape::new`] excludes it) or the node
/// lists exceed 2³² entries.
pub(crate) fn group_nodes(
    space: &FunctionSpace,
    chunk: usize,
    (cap_a, cap_b): (usize, usize),
) -> Result<GroupNodes> {
    if cap_a + cap_b > u16::MAX as usize {
        return Err(Error::internal(format!(
            "patch capacities {cap_a} + {cap_b} exceed the 16-bit local node indices"
        )));
    }
    let n_b = space.n_basis();
    let n_vertices = space.mesh().n_vertices() as u32;
    let cell_nodes = space.cell_nodes_all();
    // per group: its list (empty if it does not fit) and its cells' positions
    let groups: Vec<(Vec<u32>, Vec<u16>)> = cell_nodes
        .par_chunks(chunk * n_b)
        .map(|cells| {
            let mut list = cells.to_vec();
            list.sort_unstable();
            list.dedup();
            let n_a = list.partition_point(|&nd| nd < n_vertices);
            if n_a > cap_a || list.len() - n_a > cap_b {
                return (Vec::new(), vec![0; cells.len()]);
            }
            let local = cells
                .iter()
                .map(|nd| list.binary_search(nd).expect("a node of the group") as u16)
                .collect();
            (list, local)
        })
        .collect();
    let patches = groups.iter().filter(|(list, _)| !list.is_empty()).count();
    let mut offsets = Vec::with_capacity(groups.len() + 1);
    offsets.push(0u32);
    let mut nodes = Vec::new();
    let mut local = Vec::with_capacity(cell_nodes.len() + CELL_PADDING * n_b);
    for (list, positions) in &groups {
        nodes.extend_from_slice(list);
        offsets.push(
            u32::try_from(nodes.len())
                .map_err(|_| Error::internal("the work-groups' node lists exceed 2^32 entries"))?,
        );
        local.extend_from_slice(positions);
    }
    local.resize(cell_nodes.len() + CELL_PADDING * n_b, 0);
    let owned = ownership(space, chunk, &offsets, &nodes);
    Ok(GroupNodes {
        offsets,
        nodes,
        local,
        owned,
        patches,
    })
}

/// One bit per entry of `nodes` (the lists of the groups of `chunk` cells
/// of `space`, `offsets` their CSR offsets): set where every cell of the
/// entry's node lies in the entry's group.
fn ownership(space: &FunctionSpace, chunk: usize, offsets: &[u32], nodes: &[u32]) -> Vec<u32> {
    let n_b = space.n_basis();
    // the first and last group among each node's cells
    let mut groups = vec![(u32::MAX, 0u32); space.n_nodes()];
    for (g, cells) in space.cell_nodes_all().chunks(chunk * n_b).enumerate() {
        let g = g as u32;
        for &nd in cells {
            let (first, last) = &mut groups[nd as usize];
            *first = (*first).min(g);
            *last = (*last).max(g);
        }
    }
    let mut owned = vec![0u32; nodes.len().div_ceil(32)];
    for (g, range) in offsets.windows(2).enumerate() {
        for k in range[0] as usize..range[1] as usize {
            if groups[nodes[k] as usize] == (g as u32, g as u32) {
                owned[k / 32] |= 1 << (k % 32);
            }
        }
    }
    owned
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_box};

    /// A jittered unit square or cube of `n` cells a side in its
    /// generated (row by row) numbering, shuffled, or (`renumber`)
    /// numbered for locality.
    fn mesh(dim: usize, n: usize, shuffle: bool, renumber: bool) -> Arc<crate::mesh::Mesh> {
        let opts = MeshOptions {
            jitter: 0.1,
            shuffle,
            seed: 22,
        };
        let mesh = unit_box(dim, n, &opts).unwrap();
        if renumber {
            Arc::new(mesh.renumbered_for_locality().unwrap().0)
        } else {
            Arc::new(mesh)
        }
    }

    /// Spaces (P1, P2), chunk sizes and capacities (those of
    /// `shape::patch_capacity`) where some groups are patches and some
    /// not, and one chunk of the whole mesh.
    fn cases() -> Vec<(FunctionSpace, usize, (usize, usize))> {
        let mut v = Vec::new();
        for (shuffle, renumber) in [(false, false), (true, false), (true, true)] {
            for (dim, n) in [(2, 12), (3, 4)] {
                let mesh = mesh(dim, n, shuffle, renumber);
                for order in [1, 2] {
                    let element = Element::lagrange(dim, order).unwrap();
                    let space = FunctionSpace::new(mesh.clone(), element, 1).unwrap();
                    for chunk in [24, 48, space.n_cells()] {
                        let cap_a = if dim == 2 { chunk } else { chunk.div_ceil(2) };
                        let cap_b = if order == 2 { 2 * chunk } else { 0 };
                        v.push((space.clone(), chunk, (cap_a / 2, cap_b / 2)));
                        v.push((space.clone(), chunk, (cap_a, cap_b)));
                    }
                }
            }
        }
        v
    }

    /// A patch's list is exactly its cells' distinct nodes, sorted, within
    /// the capacities; every local index of its cells names the cell's node
    /// through the list; a group whose nodes exceed a capacity has no list
    /// and zeros; so do the padding cells. Both kinds of groups occur.
    #[test]
    fn lists_hold_exactly_their_groups_nodes_and_local_indices_name_them() {
        let (mut checked, mut fallback) = (0, 0);
        for (space, chunk, (cap_a, cap_b)) in cases() {
            let p = group_nodes(&space, chunk, (cap_a, cap_b)).unwrap();
            let n_b = space.n_basis();
            let n_vertices = space.mesh().n_vertices() as u32;
            let groups = space.n_cells().div_ceil(chunk);
            assert_eq!(p.offsets.len(), groups + 1);
            assert_eq!(p.local.len(), (space.n_cells() + CELL_PADDING) * n_b);
            let mut patches = 0;
            for g in 0..groups {
                let cells = g * chunk..((g + 1) * chunk).min(space.n_cells());
                let mut expected: Vec<u32> = cells
                    .clone()
                    .flat_map(|c| space.cell_nodes(c).to_vec())
                    .collect();
                expected.sort_unstable();
                expected.dedup();
                let n_a = expected.iter().filter(|&&nd| nd < n_vertices).count();
                let fits = n_a <= cap_a && expected.len() - n_a <= cap_b;
                let list = p.list(g);
                if !fits {
                    assert!(list.is_empty(), "group {g}: a list beyond the capacities");
                    for c in cells {
                        assert!(p.local[c * n_b..(c + 1) * n_b].iter().all(|&j| j == 0));
                    }
                    fallback += 1;
                    continue;
                }
                patches += 1;
                assert_eq!(list, &expected[..], "group {g}");
                for c in cells {
                    for (b, &nd) in space.cell_nodes(c).iter().enumerate() {
                        let j = p.local[c * n_b + b] as usize;
                        assert!(j < list.len(), "cell {c} b {b}");
                        assert_eq!(list[j], nd, "cell {c} b {b}");
                        checked += 1;
                    }
                }
            }
            assert_eq!(p.patches, patches);
            assert!(p.local[space.n_cells() * n_b..].iter().all(|&j| j == 0));
        }
        assert!(checked > 1000 && fallback > 10, "{checked} {fallback}");
    }

    /// A node is plain-stored (owned) by at most one group, a group whose
    /// list has it, and only if no other group has cells with it; both
    /// owned and shared nodes occur. With one group every node is owned.
    #[test]
    fn a_node_is_owned_by_the_one_group_of_all_its_cells() {
        let (mut owned_seen, mut shared_seen) = (0, 0);
        for (space, chunk, capacity) in cases() {
            let p = group_nodes(&space, chunk, capacity).unwrap();
            let groups = p.offsets.len() - 1;
            assert_eq!(p.owned.len(), p.nodes.len().div_ceil(32));
            // the groups of each node's cells
            let mut cell_groups = vec![Vec::new(); space.n_nodes()];
            for c in 0..space.n_cells() {
                for &nd in space.cell_nodes(c) {
                    cell_groups[nd as usize].push(c / chunk);
                }
            }
            let mut owners = vec![Vec::new(); space.n_nodes()];
            for g in 0..groups {
                for k in p.offsets[g] as usize..p.offsets[g + 1] as usize {
                    if p.is_owned(k) {
                        owners[p.nodes[k] as usize].push(g);
                    }
                }
            }
            // no bit beyond the lists
            for k in p.nodes.len()..p.owned.len() * 32 {
                assert!(!p.is_owned(k), "bit {k} beyond the lists");
            }
            for (nd, owner) in owners.iter().enumerate() {
                let cells = &cell_groups[nd];
                let alone = cells.iter().all(|&g| g == cells[0]);
                let patch = !p.list(cells[0]).is_empty();
                match owner[..] {
                    [] => {
                        assert!(!alone || !patch, "node {nd}: unowned");
                        shared_seen += usize::from(!alone);
                    }
                    [g] => {
                        assert!(alone && g == cells[0], "node {nd} owned by {g}");
                        owned_seen += 1;
                    }
                    _ => panic!("node {nd} owned by groups {owner:?}"),
                }
            }
            if groups == 1 && p.patches == 1 {
                assert!(owners.iter().all(|o| o.len() == 1), "one group owns all");
            }
        }
        assert!(
            owned_seen > 100 && shared_seen > 100,
            "{owned_seen} {shared_seen}"
        );
    }
}
