//! The default numbering of a read file: for locality, with every tag and
//! physical group following its vertices and cells.

use super::*;
use crate::mesh::renumber::{locality_metrics, locality_renumbering};

/// The Gmsh tags of `vertices` of `g`, sorted.
fn tags(g: &GmshMesh, vertices: &[u32]) -> Vec<u64> {
    let mut t: Vec<u64> = vertices.iter().map(|&v| g.node_tags[v as usize]).collect();
    t.sort_unstable();
    t
}

#[test]
fn files_are_renumbered_for_locality_with_tags_and_groups_following() {
    for name in ["mesh_square.msh", "mesh_cube.msh", "mesh_disk_p2.msh"] {
        let file = read(name);
        let g = read_gmsh(data(name)).unwrap();
        let expected = locality_renumbering(&file.mesh)
            .unwrap()
            .apply_to_gmsh(&file)
            .unwrap();
        assert_eq!(
            g, expected,
            "{name}: the default is the locality renumbering"
        );
        assert_ne!(g.node_tags, file.node_tags, "{name}: the numbering changed");
        // each vertex keeps its coordinates under its Gmsh node tag
        let at = |m: &GmshMesh, tag: u64| m.node_tags.iter().position(|&t| t == tag).unwrap();
        for &tag in &g.node_tags {
            let (v, w) = (at(&g, tag), at(&file, tag));
            assert_eq!(g.mesh.vertex(v), file.mesh.vertex(w), "{name}: node {tag}");
        }
        // each cell keeps its element tag, entity and the tags of its vertices
        for (c, &tag) in g.cell_tags.iter().enumerate() {
            let d = file.cell_tags.iter().position(|&t| t == tag).unwrap();
            assert_eq!(g.cell_entities[c], file.cell_entities[d]);
            assert_eq!(
                g.mesh
                    .cell(c)
                    .iter()
                    .map(|&v| g.node_tags[v as usize])
                    .collect::<Vec<_>>(),
                file.mesh
                    .cell(d)
                    .iter()
                    .map(|&v| file.node_tags[v as usize])
                    .collect::<Vec<_>>(),
                "{name}: element {tag}"
            );
        }
        // physical groups resolve to the same nodes and elements
        assert_eq!(g.physical_groups, file.physical_groups);
        for group in &file.physical_groups {
            assert_eq!(
                tags(&g, &g.group_vertices(group)),
                tags(&file, &file.group_vertices(group)),
                "{name}: group {group:?}"
            );
            let cells = |m: &GmshMesh| {
                let mut t: Vec<u64> = m
                    .group_cells(group)
                    .iter()
                    .map(|&c| m.cell_tags[c as usize])
                    .collect();
                t.sort_unstable();
                t
            };
            assert_eq!(cells(&g), cells(&file), "{name}: group {group:?}");
        }
    }
}

#[test]
fn the_locality_numbering_gathers_from_fewer_sectors_than_gmsh_s() {
    // Gmsh numbers the nodes of a disk in generation order (boundary
    // first, then the interior front by front)
    let file = read("mesh_disk_p2.msh");
    let g = read_gmsh(data("mesh_disk_p2.msh")).unwrap();
    let (before, after) = (
        locality_metrics(&file.mesh).unwrap(),
        locality_metrics(&g.mesh).unwrap(),
    );
    assert!(
        after.mean_span < before.mean_span,
        "mean span of a cell's vertex numbers: {} in the file's numbering, {} renumbered",
        before.mean_span,
        after.mean_span
    );
}

#[test]
fn gmsh_physical_groups_survive_renumbering() {
    for name in [
        "mesh_square.msh",
        "mesh_square_binary.msh",
        "mesh_cube.msh",
        "mesh_cube_binary.msh",
        "mesh_disk_p2.msh",
    ] {
        let g = read(name);
        let r = locality_renumbering(&g.mesh).unwrap();
        let h = r.apply_to_gmsh(&g).unwrap();
        assert_eq!(*h.mesh, r.apply(&g.mesh).unwrap());
        assert!(!g.physical_groups.is_empty(), "{name}");
        for group in &g.physical_groups {
            let mut want: Vec<u32> = g
                .group_vertices(group)
                .iter()
                .map(|&v| r.vertex_new_of_old()[v as usize])
                .collect();
            want.sort_unstable();
            assert_eq!(h.group_vertices(group), want, "{name}: {group:?}");
            let mut want: Vec<u32> = g
                .group_cells(group)
                .iter()
                .map(|&c| r.cell_new_of_old()[c as usize])
                .collect();
            want.sort_unstable();
            assert_eq!(h.group_cells(group), want, "{name}: {group:?}");
        }
        for v in 0..g.mesh.n_vertices() {
            let nv = r.vertex_new_of_old()[v] as usize;
            assert_eq!(h.node_tags[nv], g.node_tags[v]);
            assert_eq!(h.mesh.vertex(nv), g.mesh.vertex(v));
        }
        for c in 0..g.mesh.n_cells() {
            let nc = r.cell_new_of_old()[c] as usize;
            assert_eq!(h.cell_tags[nc], g.cell_tags[c]);
            assert_eq!(h.cell_entities[nc], g.cell_entities[c]);
        }
        for (a, b) in g.elements.iter().zip(&h.elements) {
            assert_eq!((a.tag, a.dim, a.entity), (b.tag, b.dim, b.entity));
            let mapped: Vec<u32> = a
                .vertices
                .iter()
                .map(|&v| r.vertex_new_of_old()[v as usize])
                .collect();
            assert_eq!(b.vertices, mapped);
        }
    }
}

#[test]
fn renumbering_a_gmsh_mesh_checks_its_parts() {
    let mut g = read("mesh_square.msh");
    let r = locality_renumbering(&g.mesh).unwrap();
    g.elements[0].vertices[0] = 1000;
    let tag = g.elements[0].tag;
    match r.apply_to_gmsh(&g) {
        Err(Error::InvalidArgument {
            name: "gmsh",
            reason,
        }) => {
            assert!(
                reason
                    == format!(
                        "element {tag}: vertex 1000 is out of range ({} vertices)",
                        g.mesh.n_vertices()
                    ),
                "{reason}"
            )
        }
        e => panic!("{e:?}"),
    }
    g.node_tags.pop();
    assert!(r.apply_to_gmsh(&g).is_err());
}
