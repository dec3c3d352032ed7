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
