//! Tests of [`super`]: the dofs of boundary parts and Gmsh groups are the
//! nodes that lie there — edge nodes of P2 included — for chosen components.

use std::sync::Arc;

use super::*;
use crate::element::Element;
use crate::mesh::{MeshOptions, read_gmsh, unit_box};

/// The nodes of `space` whose coordinates satisfy `on`, increasing.
fn nodes_where(space: &FunctionSpace, on: impl Fn(&[f64]) -> bool) -> Vec<u32> {
    let d = space.dim();
    let x = space.node_coordinates();
    (0..space.n_nodes() as u32)
        .filter(|&n| on(&x[n as usize * d..][..d]))
        .collect()
}

/// A side of the unit square or cube chosen by facet midpoints: its dofs
/// are those of the nodes on it (P2 edge midpoints included), for all
/// components or the chosen ones.
#[test]
fn a_side_fixes_the_dofs_of_its_nodes() {
    for dim in [2, 3] {
        let mesh = Arc::new(unit_box(dim, 3, &MeshOptions::default()).unwrap());
        let left = MeshPart::boundary_where(&mesh, |x| x[0] == 0.0).unwrap();
        let right = MeshPart::boundary_where(&mesh, |x| x[0] == 1.0).unwrap();
        for order in [1, 2] {
            let element = Element::lagrange(dim, order).unwrap();
            let space = FunctionSpace::new(mesh.clone(), element, 3).unwrap();
            let want = nodes_where(&space, |x| x[0] == 0.0);
            // (n+1)^(dim−1) vertices, (2n+1)^(dim−1) nodes for P2
            assert_eq!(want.len(), (order * 3 + 1).pow(dim as u32 - 1));
            assert_eq!(space.nodes_on(&left).unwrap(), want, "{dim}D P{order}");
            let far = nodes_where(&space, |x| x[0] == 1.0);
            assert_eq!(space.nodes_on(&right).unwrap(), far, "{dim}D P{order}");
            let all: Vec<u32> = want
                .iter()
                .flat_map(|&n| (0..3).map(move |c| 3 * n + c))
                .collect();
            assert_eq!(space.dofs_on(&left, Components::All).unwrap(), all);
            let some: Vec<u32> = want.iter().flat_map(|&n| [3 * n, 3 * n + 2]).collect();
            // any order, repetitions allowed
            let chosen = space.dofs_on(&left, Components::Only(&[2, 0, 2])).unwrap();
            assert_eq!(chosen, some, "{dim}D P{order}");
            // the whole boundary: every node on a side of the box
            let on_box = |x: &[f64]| x.iter().any(|&c| c == 0.0 || c == 1.0);
            let boundary = nodes_where(&space, on_box);
            assert_eq!(space.boundary_nodes().unwrap(), boundary);
            let everything = MeshPart::boundary_where(&mesh, |_| true).unwrap();
            assert_eq!(everything, MeshPart::boundary(&mesh).unwrap());
        }
    }
}

/// The groups of a Gmsh file: `bottom` (y = 0) and `rest` (the other
/// three sides) fix the nodes on them — for P2 the edge midpoints too,
/// which `group_vertices` does not give — and together the boundary's.
#[test]
fn gmsh_groups_fix_the_nodes_on_their_edges() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mesh_square.msh");
    let g = read_gmsh(path).unwrap();
    let mesh = &g.mesh;
    let bottom = g.part(&["bottom"]).unwrap();
    // Gmsh nodes 1, 2 and 5 (vertex numbers renumbered for locality)
    let mut tags: Vec<u64> = bottom
        .vertices()
        .iter()
        .map(|&v| g.node_tags[v as usize])
        .collect();
    tags.sort_unstable();
    assert_eq!(tags, [1, 2, 5]);
    for order in [1, 2] {
        let space =
            FunctionSpace::new(mesh.clone(), Element::lagrange(2, order).unwrap(), 2).unwrap();
        let want = nodes_where(&space, |x| x[1].abs() < 1e-12);
        assert_eq!(want.len(), [3, 5][order - 1]);
        assert_eq!(space.nodes_on(&bottom).unwrap(), want, "P{order}");
        let vertices = g.group_vertices(g.physical_group("bottom").unwrap());
        assert_eq!(vertices.len(), 3, "group_vertices gives vertices only");
        // bottom and rest are the whole boundary, in one part or two
        let both = g.part(&["bottom", "rest"]).unwrap();
        let boundary = space.boundary_dofs().unwrap();
        assert_eq!(space.dofs_on(&both, Components::All).unwrap(), boundary);
        let mut two: Vec<u32> = [bottom.clone(), g.part(&["rest"]).unwrap()]
            .iter()
            .flat_map(|p| space.dofs_on(p, Components::All).unwrap())
            .collect();
        two.sort_unstable();
        two.dedup();
        assert_eq!(two, boundary);
        // the domain group: every node
        let domain = g.part(&["domain"]).unwrap();
        let every: Vec<u32> = (0..space.n_nodes() as u32).collect();
        assert_eq!(space.nodes_on(&domain).unwrap(), every);
    }
}

/// Bad input: an unknown group lists the known ones; components out of
/// range or none; a part of another mesh.
#[test]
fn bad_input_is_an_error_that_says_what_to_do() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/mesh_square.msh");
    let g = read_gmsh(path).unwrap();
    let e = g.part(&["bottom", "hole"]).unwrap_err().to_string();
    assert_eq!(
        e,
        "invalid argument `names`: no physical group `hole` in this mesh; its groups: `origin` \
         (0D, tag 5), `bottom` (1D, tag 1), `rest` (1D, tag 2), `domain` (2D, tag 3)"
    );
    assert_eq!(
        g.part(&[]).unwrap_err().to_string(),
        "invalid argument `names`: lists no physical group: name at least one"
    );
    let space = FunctionSpace::new(g.mesh.clone(), Element::lagrange(2, 2).unwrap(), 2).unwrap();
    let bottom = g.part(&["bottom"]).unwrap();
    assert_eq!(
        space
            .dofs_on(&bottom, Components::Only(&[0, 2]))
            .unwrap_err()
            .to_string(),
        "invalid argument `components`: component 2 is out of range: the field has 2 (0..2)"
    );
    assert_eq!(
        space
            .dofs_on(&bottom, Components::Only(&[]))
            .unwrap_err()
            .to_string(),
        "invalid argument `components`: lists no component: give Components::All or at least \
         one component"
    );
    let other = unit_box(2, 3, &MeshOptions::default()).unwrap();
    let part = MeshPart::boundary(&other).unwrap();
    assert_eq!(
        space.nodes_on(&part).unwrap_err().to_string(),
        "invalid argument `part`: it was made on a mesh of 16 vertices and 18 cells, the \
         space's mesh has 12 and 14: make the part on the mesh of the space (for a hierarchy, \
         its finest mesh)"
    );
}
