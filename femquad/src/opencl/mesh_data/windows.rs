//! Node windows of the work-groups (kernel `WINDOW`, see
//! `kernels/integrate.cl`): for every chunk of cells, the index ranges its
//! nodes lie in — vertex nodes `[lo_A, lo_A + w_A)` and (P2) edge nodes
//! `[lo_B, lo_B + w_B)` — when both fit the kernel's capacities, else
//! `(0, 0, 0, 0)` (that group gathers from global memory). On a mesh
//! numbered for locality (`crate::mesh::renumber`) a chunk's nodes are
//! nearly contiguous, so nearly every group is windowed.

use rayon::prelude::*;

use crate::space::FunctionSpace;

/// `[lo_A, w_A, lo_B, w_B]` per chunk of `chunk` cells of `space`, with
/// capacities `(cap_a, cap_b)`; vertex nodes are those below `n_vertices`
/// (a space numbers its vertex nodes first). Also returns how many chunks
/// are windowed.
pub(crate) fn node_windows(
    space: &FunctionSpace,
    n_vertices: usize,
    chunk: usize,
    (cap_a, cap_b): (usize, usize),
) -> (Vec<u32>, usize) {
    let n_b = space.n_basis();
    let nodes = space.cell_nodes_all();
    let windows: Vec<[u32; 4]> = nodes
        .par_chunks(chunk * n_b)
        .map(|group| {
            let (mut a, mut b) = ((u32::MAX, 0u32), (u32::MAX, 0u32));
            for &nd in group {
                let range = if (nd as usize) < n_vertices {
                    &mut a
                } else {
                    &mut b
                };
                range.0 = range.0.min(nd);
                range.1 = range.1.max(nd);
            }
            let width = |(lo, hi): (u32, u32)| if lo > hi { 0 } else { (hi - lo + 1) as usize };
            let (wa, wb) = (width(a), width(b));
            if wa > 0 && wa <= cap_a && wb <= cap_b {
                let lo_b = if wb > 0 { b.0 } else { 0 };
                [a.0, wa as u32, lo_b, wb as u32]
            } else {
                [0; 4]
            }
        })
        .collect();
    let windowed = windows.iter().filter(|w| w[1] > 0).count();
    (windows.into_iter().flatten().collect(), windowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_square};

    #[test]
    fn windows_cover_every_node_of_their_group() {
        let mesh = std::sync::Arc::new(unit_square(12, &MeshOptions::default()).unwrap());
        for order in [1, 2] {
            let space =
                FunctionSpace::new(mesh.clone(), Element::lagrange(2, order).unwrap(), 1).unwrap();
            let chunk = 40;
            let (w, windowed) = node_windows(&space, mesh.n_vertices(), chunk, (200, 400));
            let groups = mesh.n_cells().div_ceil(chunk);
            assert_eq!(w.len(), 4 * groups);
            assert!(windowed > 0);
            for g in 0..groups {
                let [lo_a, wa, lo_b, wb] = [w[4 * g], w[4 * g + 1], w[4 * g + 2], w[4 * g + 3]];
                if wa == 0 {
                    continue;
                }
                for c in g * chunk..((g + 1) * chunk).min(mesh.n_cells()) {
                    for &nd in space.cell_nodes(c) {
                        let in_a = nd >= lo_a && nd < lo_a + wa;
                        let in_b = nd >= lo_b && nd < lo_b + wb;
                        assert!(in_a ^ in_b, "node {nd} of cell {c}");
                        assert_eq!(in_a, (nd as usize) < mesh.n_vertices());
                    }
                }
            }
            // capacities too small: no window
            let (w, windowed) = node_windows(&space, mesh.n_vertices(), chunk, (2, 2));
            assert_eq!(windowed, 0);
            assert!(w.iter().all(|&x| x == 0));
        }
    }
}
