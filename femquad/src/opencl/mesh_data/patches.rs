//! What a windowed work-group (a patch of cells) reads besides its node
//! window (kernel `WINDOW`, see `kernels/integrate.cl`): its cells' nodes as
//! 16-bit positions in the window, and which positions it owns.
//!
//! * **Local node indices** `[cell][b]`: the position of the cell's node
//!   `nd` in its group's window, `nd − lo_A` for a vertex node (range A) and
//!   `w_A + nd − lo_B` for an edge node (range B); 0 for the cells of
//!   groups without a window (which read the global indices instead) and
//!   for the padding cells.
//! * **Ownership** `[group][word]`, [`owned_words`] 32-bit words a group:
//!   bit `j % 32` of word `j / 32` is set when the node at window position
//!   `j` has all its cells in this group. The kernel stores such a node's
//!   sum with a plain store; every other position (a node shared with other
//!   groups, or a node of the window's ranges that none of the group's
//!   cells has) is added atomically. So a node is plain-stored by at most
//!   one group, and never when another group adds to it.

use super::CELL_PADDING;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// 32-bit ownership words per group for window capacities `(cap_a, cap_b)`
/// (the kernel's `OWNED_WORDS`).
pub(crate) fn owned_words((cap_a, cap_b): (usize, usize)) -> usize {
    (cap_a + cap_b).div_ceil(32)
}

/// The node at position `j` of the window `[lo_A, w_A, lo_B, w_B]`.
pub(crate) fn window_node(window: &[u32], j: u32) -> u32 {
    let [lo_a, w_a, lo_b, _] = [window[0], window[1], window[2], window[3]];
    if j < w_a { lo_a + j } else { lo_b + (j - w_a) }
}

/// The local node indices of the cells of `space` in chunks of `chunk`
/// cells with the node windows `windows` (`[group][lo_A, w_A, lo_B, w_B]`,
/// from [`super::node_windows`]), `[cell][b]`, padded by [`CELL_PADDING`]
/// cells of zeros.
///
/// # Errors
/// [`Error::Internal`] if a cell's node lies outside its group's window or
/// a position exceeds 16 bits (the windows and the capacity check of
/// [`crate::opencl::shape::KernelShape::new`] exclude both).
pub(crate) fn local_node_indices(
    space: &FunctionSpace,
    windows: &[u32],
    chunk: usize,
) -> Result<Vec<u16>> {
    let n_b = space.n_basis();
    let nodes = space.cell_nodes_all();
    let mut local = vec![0u16; nodes.len() + CELL_PADDING * n_b];
    for (g, (group, out)) in nodes
        .chunks(chunk * n_b)
        .zip(local.chunks_mut(chunk * n_b))
        .enumerate()
    {
        let w = &windows[4 * g..4 * g + 4];
        let [lo_a, w_a, lo_b, w_b] = [w[0], w[1], w[2], w[3]];
        if w_a == 0 {
            continue;
        }
        for (&nd, l) in group.iter().zip(out.iter_mut()) {
            let j = if nd.wrapping_sub(lo_a) < w_a {
                nd - lo_a
            } else if nd.wrapping_sub(lo_b) < w_b {
                w_a + (nd - lo_b)
            } else {
                return Err(Error::internal(format!(
                    "node {nd} lies outside the node window [{lo_a}, +{w_a}) ∪ [{lo_b}, +{w_b}) \
                     of its work-group {g}"
                )));
            };
            *l = u16::try_from(j).map_err(|_| {
                Error::internal(format!(
                    "window position {j} of work-group {g} exceeds 16 bits"
                ))
            })?;
        }
    }
    Ok(local)
}

/// The ownership masks of the groups of `chunk` cells of `space` with the
/// node windows `windows` and capacities `capacity`: [`owned_words`] words
/// per group, the bits of the positions whose node has every cell in that
/// group (none for a group without a window).
pub(crate) fn owned_positions(
    space: &FunctionSpace,
    windows: &[u32],
    chunk: usize,
    capacity: (usize, usize),
) -> Vec<u32> {
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
    let words = owned_words(capacity);
    let mut owned = vec![0u32; windows.len() / 4 * words];
    for (g, (w, mask)) in windows
        .chunks(4)
        .zip(owned.chunks_mut(words.max(1)))
        .enumerate()
    {
        for j in 0..w[1] + w[3] {
            let nd = window_node(w, j) as usize;
            if groups[nd] == (g as u32, g as u32) {
                mask[j as usize / 32] |= 1 << (j % 32);
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
    use crate::opencl::mesh_data::node_windows;

    /// A jittered unit square or cube of `n` cells a side in its
    /// generated (row by row) numbering, or (`renumber`) numbered for
    /// locality.
    fn mesh(dim: usize, n: usize, renumber: bool) -> Arc<crate::mesh::Mesh> {
        let opts = MeshOptions {
            jitter: 0.1,
            shuffle: false,
            seed: 22,
        };
        let mesh = unit_box(dim, n, &opts).unwrap();
        if renumber {
            Arc::new(mesh.renumbered_for_locality().unwrap().0)
        } else {
            Arc::new(mesh)
        }
    }

    /// Meshes, chunk sizes and window capacities (those of
    /// `shape::window_capacity`) where some groups are windowed and some
    /// not, and one chunk of the whole mesh.
    fn cases() -> Vec<(Arc<crate::mesh::Mesh>, usize, &'static [usize])> {
        let mut v = Vec::new();
        for renumber in [false, true] {
            v.push((mesh(2, 12, renumber), 1, &[24usize, 48, 1000][..]));
            v.push((mesh(2, 12, renumber), 2, &[24, 48, 1000][..]));
            v.push((mesh(3, 4, renumber), 1, &[96, 192, 1000][..]));
            v.push((mesh(3, 4, renumber), 2, &[96, 192, 1000][..]));
        }
        v
    }

    fn capacity(dim: usize, order: usize, chunk: usize) -> (usize, usize) {
        let w_a = if dim == 2 { chunk } else { chunk.div_ceil(2) };
        (w_a, if order == 2 { 2 * chunk } else { 0 })
    }

    /// Every local index of a windowed group's cell names that cell's node
    /// (through its window) and lies inside the window; groups without a
    /// window and padding cells have zeros.
    #[test]
    fn local_indices_name_their_nodes_inside_the_window() {
        let (mut checked, mut fallback) = (0, 0);
        for (mesh, order, chunks) in cases() {
            let dim = mesh.dim();
            let element = Element::lagrange(dim, order).unwrap();
            let space = FunctionSpace::new(mesh.clone(), element, 1).unwrap();
            let n_b = space.n_basis();
            {
                for &chunk in chunks {
                    let capacity = capacity(dim, order, chunk);
                    let (w, windowed) = node_windows(&space, mesh.n_vertices(), chunk, capacity);
                    fallback += w.len() / 4 - windowed;
                    let local = local_node_indices(&space, &w, chunk).unwrap();
                    assert_eq!(local.len(), (space.n_cells() + CELL_PADDING) * n_b);
                    for c in 0..space.n_cells() {
                        let g = c / chunk;
                        let win = &w[4 * g..4 * g + 4];
                        for (b, &nd) in space.cell_nodes(c).iter().enumerate() {
                            let j = local[c * n_b + b];
                            if win[1] == 0 {
                                assert_eq!(j, 0);
                                continue;
                            }
                            assert!(u32::from(j) < win[1] + win[3], "cell {c} b {b}");
                            assert_eq!(window_node(win, j.into()), nd, "cell {c} b {b}");
                            checked += 1;
                        }
                    }
                    assert!(local[space.n_cells() * n_b..].iter().all(|&j| j == 0));
                }
            }
        }
        assert!(checked > 1000 && fallback > 10, "{checked} {fallback}");
    }

    /// A node is plain-stored (owned) by at most one group, by a group
    /// that has it among its cells' nodes, and only if no other group has
    /// it; both owned and shared nodes occur. With one group every node is
    /// owned.
    #[test]
    fn a_node_is_owned_by_the_one_group_of_all_its_cells() {
        let (mut owned_seen, mut shared_seen) = (0, 0);
        for (mesh, order, chunks) in cases() {
            let dim = mesh.dim();
            {
                let element = Element::lagrange(dim, order).unwrap();
                let space = FunctionSpace::new(mesh.clone(), element, 1).unwrap();
                for &chunk in chunks {
                    let capacity = capacity(dim, order, chunk);
                    let (w, _) = node_windows(&space, mesh.n_vertices(), chunk, capacity);
                    let owned = owned_positions(&space, &w, chunk, capacity);
                    let words = owned_words(capacity);
                    let groups = w.len() / 4;
                    assert_eq!(owned.len(), groups * words);
                    // the groups of each node's cells
                    let mut cell_groups = vec![Vec::new(); space.n_nodes()];
                    for c in 0..space.n_cells() {
                        for &nd in space.cell_nodes(c) {
                            cell_groups[nd as usize].push(c / chunk);
                        }
                    }
                    let mut owners = vec![Vec::new(); space.n_nodes()];
                    for g in 0..groups {
                        let win = &w[4 * g..4 * g + 4];
                        for j in 0..words * 32 {
                            if owned[g * words + j / 32] >> (j % 32) & 1 == 1 {
                                assert!((j as u32) < win[1] + win[3], "group {g} position {j}");
                                owners[window_node(win, j as u32) as usize].push(g);
                            }
                        }
                    }
                    for (nd, owner) in owners.iter().enumerate() {
                        let cells = &cell_groups[nd];
                        let alone = cells.iter().all(|&g| g == cells[0]);
                        let windowed = w[4 * cells[0] + 1] > 0;
                        match owner[..] {
                            [] => {
                                assert!(!alone || !windowed, "node {nd}: unowned");
                                shared_seen += usize::from(!alone);
                            }
                            [g] => {
                                assert!(alone && g == cells[0], "node {nd} owned by {g}");
                                owned_seen += 1;
                            }
                            _ => panic!("node {nd} owned by groups {owner:?}"),
                        }
                    }
                    if groups == 1 {
                        assert!(owners.iter().all(|o| o.len() == 1), "one group owns all");
                    }
                }
            }
        }
        assert!(
            owned_seen > 100 && shared_seen > 100,
            "{owned_seen} {shared_seen}"
        );
    }
}
