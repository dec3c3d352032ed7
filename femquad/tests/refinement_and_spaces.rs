//! Uniform refinement and the P2 space of the coarse mesh have the same
//! points, numbered differently: fine vertex `n_v + k` is the midpoint of
//! the refinement's edge `k` (first-touch order), which is P2 node
//! `n_v + j` for the P2 space's (sorted) number `j` of that edge. Multigrid
//! takes each transfer's edge list from its own source (the refinement's or
//! the P2 space's), so nothing relies on the two orders being one.

use std::collections::BTreeMap;

use femquad::element::Element;
use femquad::mesh::MeshOptions;
use femquad::mesh::generate::{unit_cube, unit_square};
use femquad::mesh::refine::refine;
use femquad::space::FunctionSpace;

#[test]
fn fine_vertices_are_the_coarse_p2_nodes_in_another_order() {
    let opts = |seed| MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed,
    };
    for m in [
        unit_square(6, &opts(1)).unwrap(),
        unit_cube(3, &opts(2)).unwrap(),
    ] {
        let (nv, dim) = (m.n_vertices(), m.dim());
        let r = refine(&m).unwrap();
        let element = Element::lagrange(dim, 2).unwrap();
        let p2 = FunctionSpace::new(m.into(), element, 1).unwrap();
        let nodes = p2.node_coordinates();
        let fine = r.mesh().vertices();
        assert_eq!(nodes.len(), fine.len());
        assert_eq!(nodes[..nv * dim], fine[..nv * dim]);
        let p2_edge: BTreeMap<[u32; 2], usize> = (0..p2.n_edges())
            .map(|j| (p2.edge(j).unwrap(), j))
            .collect();
        let mut seen = vec![false; p2.n_edges()];
        let mut moved = 0;
        for (k, e) in r.edge_vertices().iter().enumerate() {
            let j = p2_edge[e];
            assert!(!seen[j], "edge {e:?} twice");
            seen[j] = true;
            moved += usize::from(j != k);
            let (v, node) = (nv + k, nv + j);
            assert_eq!(
                fine[v * dim..(v + 1) * dim],
                nodes[node * dim..(node + 1) * dim],
                "fine vertex {v}, P2 node {node}"
            );
        }
        assert!(seen.iter().all(|&s| s));
        // the orders differ indeed (on a shuffled mesh, most edges move)
        assert!(2 * moved > p2.n_edges(), "{moved} of {}", p2.n_edges());
    }
}
