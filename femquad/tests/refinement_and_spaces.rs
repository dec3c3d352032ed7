//! Uniform refinement and the P2 space of the coarse mesh number the same
//! points the same way: fine vertex `n_v + k` is the midpoint of coarse edge
//! `k`, which is P2 node `n_v + k` (multigrid's P1 → P2 and h-transfers
//! rely on it).

use femquad::element::Element;
use femquad::mesh::MeshOptions;
use femquad::mesh::generate::{unit_cube, unit_square};
use femquad::mesh::refine::refine;
use femquad::space::FunctionSpace;

#[test]
fn fine_vertices_are_the_coarse_p2_nodes() {
    let opts = |seed| MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed,
    };
    for m in [
        unit_square(6, &opts(1)).unwrap(),
        unit_cube(3, &opts(2)).unwrap(),
    ] {
        let r = refine(&m).unwrap();
        let element = Element::lagrange(m.dim(), 2).unwrap();
        let p2 = FunctionSpace::new(m.into(), element, 1).unwrap();
        assert_eq!(p2.node_coordinates(), r.mesh().vertices());
        for (k, &e) in r.edge_vertices().iter().enumerate() {
            assert_eq!(p2.edge(k), Some(e));
        }
    }
}
