//! Assembling the [`GmshMesh`] from what the sections hold: cells and
//! lower-dimensional elements, vertices renumbered by increasing tag,
//! reorientation, validation, physical groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::elements::{Elements, second_order};
use super::nodes::Nodes;
use super::source::Source;
use super::{GmshElement, GmshEntity, GmshMesh, GmshNumbering, GmshOptions, PhysicalGroup};
use crate::mesh::orientation::Names;
use crate::mesh::renumber::locality_renumbering;
use crate::mesh::{CellDefect, Mesh};
use crate::{Error, Result};

/// What the sections of a file hold.
pub(super) struct Parts {
    pub names: Vec<PhysicalGroup>,
    pub entities: Vec<GmshEntity>,
    pub nodes: Nodes,
    pub elements: Elements,
}

/// Assembles the mesh of the file `src` from its `parts`.
pub(super) fn build(src: &Source, parts: Parts, options: &GmshOptions) -> Result<GmshMesh> {
    let Parts {
        names,
        entities,
        nodes,
        elements,
    } = parts;
    let dim = elements
        .blocks
        .iter()
        .filter(|b| b.len > 0)
        .map(|b| b.dim)
        .max()
        .unwrap_or(0);
    if dim < 2 {
        let at = src.section("Elements").map_or(0, |s| s.header);
        return Err(src.err(
            at,
            format!(
                "the file holds no triangles or tetrahedra (highest element dimension {dim}); \
                 if the model has physical groups, Gmsh saves only their elements: add one for \
                 the domain or set Mesh.SaveAll = 1"
            ),
        ));
    }

    // cells (elements of dimension `dim`, as node indices) and the others
    let mut cell_nodes: Vec<u32> = Vec::new();
    let mut cell_tags = Vec::new();
    let mut cell_entities = Vec::new();
    let mut cell_element: Vec<usize> = Vec::new();
    let mut is_second_order = false;
    // (element index, dimension, entity, offset in `elements.vertices`)
    let mut lower: Vec<(usize, usize, i32, usize)> = Vec::new();
    let (mut e, mut v) = (0, 0);
    for block in &elements.blocks {
        let k = block.dim + 1;
        if block.dim == dim {
            cell_nodes.extend_from_slice(&elements.vertices[v..v + block.len * k]);
            cell_tags.extend_from_slice(&elements.tags[e..e + block.len]);
            cell_entities.extend(std::iter::repeat_n(block.entity, block.len));
            cell_element.extend(e..e + block.len);
            is_second_order |= block.len > 0 && second_order(block.etype);
        } else {
            lower.extend((0..block.len).map(|i| (e + i, block.dim, block.entity, v + i * k)));
        }
        e += block.len;
        v += block.len * k;
    }
    if cell_tags.len() > u32::MAX as usize {
        return Err(src.err(0, "too many cells for 32-bit indices"));
    }

    // vertices: the nodes of cells, in increasing tag order
    let n_nodes = nodes.tags.len();
    let mut used = vec![false; n_nodes];
    for &g in &cell_nodes {
        used[g as usize] = true;
    }
    let mut order: Vec<u32> = (0..n_nodes as u32).filter(|&g| used[g as usize]).collect();
    order.sort_unstable_by_key(|&g| nodes.tags[g as usize]);
    let mut new_index = vec![u32::MAX; n_nodes];
    for (v, &g) in order.iter().enumerate() {
        new_index[g as usize] = v as u32;
    }
    let vertices = vertex_coordinates(src, &nodes, &order, dim)?;
    let cells: Vec<u32> = cell_nodes.iter().map(|&g| new_index[g as usize]).collect();
    let mut mesh = Mesh::from_raw(dim, vertices, cells).map_err(|e| src.err(0, e.to_string()))?;
    // errors name the element (tag and line) of a cell, and nodes by tag
    let cell_error = |cell: usize, reason: String| {
        src.err(
            elements.at[cell_element[cell]],
            format!("element {}: {reason}", cell_tags[cell]),
        )
    };
    let reoriented = if options.reorient {
        let names = Names {
            cell: ("element", "elements"),
            cell_id: &|c| cell_tags[c],
            vertices: "nodes",
            vertex_id: &|v| nodes.tags[order[v as usize] as usize],
        };
        mesh.reorient_naming(&names).map_err(|e| match e {
            Error::InvalidCell { cell, reason } => cell_error(cell, reason),
            other => src.err(0, other.to_string()),
        })?
    } else {
        0
    };
    if let Some((cell, defect)) = mesh.first_defect(true) {
        let mut reason = defect.reason(dim, mesh.n_vertices());
        if let CellDefect::Inverted { .. } = defect {
            reason.push_str(
                "; the file lists its nodes clockwise: if the mesh, or a region of it, is \
                 written so (e.g. a surface whose normal is -z), read it with \
                 GmshOptions { reorient: true, ..Default::default() } (read_gmsh_with, or the \
                 examples' --reorient), \
                 which flips consistently flipped cells and refuses a tangled mesh",
            );
        }
        return Err(cell_error(cell, reason));
    }

    // lower-dimensional elements, on mesh vertices
    let mut lower_elements = Vec::with_capacity(lower.len());
    for (e, edim, entity, v) in lower {
        let tag = elements.tags[e];
        let mut vertices = Vec::with_capacity(edim + 1);
        for &g in &elements.vertices[v..v + edim + 1] {
            let v = new_index[g as usize];
            if v == u32::MAX {
                return Err(src.err(
                    elements.at[e],
                    format!(
                        "element {tag} (dimension {edim}) uses node {}, which is not a vertex of \
                         any {dim}D element",
                        nodes.tags[g as usize]
                    ),
                ));
            }
            vertices.push(v);
        }
        lower_elements.push(GmshElement {
            tag,
            dim: edim,
            entity,
            vertices,
        });
    }

    let in_file_order = GmshMesh {
        mesh: Arc::new(mesh),
        reoriented,
        second_order: is_second_order,
        node_tags: order.iter().map(|&g| nodes.tags[g as usize]).collect(),
        cell_tags,
        cell_entities,
        elements: lower_elements,
        physical_groups: physical_groups(names, &entities),
        entities,
    };
    match options.numbering {
        GmshNumbering::File => Ok(in_file_order),
        GmshNumbering::Locality => locality_renumbering(&in_file_order.mesh)?
            .apply_to_gmsh(&in_file_order)
            .map_err(|e| src.err(0, format!("renumbering the mesh for locality: {e}"))),
    }
}

/// The coordinates of nodes `order` (`dim` per node), which must be finite;
/// a 2D mesh must lie in a plane `z = const`, and `z` is dropped.
fn vertex_coordinates(src: &Source, nodes: &Nodes, order: &[u32], dim: usize) -> Result<Vec<f64>> {
    let xyz = |g: u32| nodes.xyz[g as usize];
    for &g in order {
        let p = xyz(g);
        if let Some(d) = p.iter().position(|x| !x.is_finite()) {
            return Err(src.err(
                nodes.xyz_at[g as usize],
                format!(
                    "node {} has a non-finite coordinate ({} = {})",
                    nodes.tags[g as usize],
                    ["x", "y", "z"][d],
                    p[d]
                ),
            ));
        }
    }
    if dim == 3 {
        return Ok(order.iter().flat_map(|&g| xyz(g)).collect());
    }
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for &g in order {
        let p = xyz(g);
        for d in 0..2 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]);
    let Some(&g0) = order.first() else {
        return Ok(Vec::new());
    };
    let z0 = xyz(g0)[2];
    let mut vertices = Vec::with_capacity(2 * order.len());
    for &g in order {
        let z = xyz(g)[2];
        if (z - z0).abs() > 1e-12 * extent.max(z0.abs()) {
            return Err(src.err(
                nodes.xyz_at[g as usize],
                format!(
                    "node {} has z = {z} but node {} has z = {z0}: a 2D mesh must lie in a \
                     plane z = const",
                    nodes.tags[g as usize], nodes.tags[g0 as usize]
                ),
            ));
        }
        vertices.extend_from_slice(&xyz(g)[..2]);
    }
    Ok(vertices)
}

/// Physical groups sorted by `(dim, tag)`: those of `$PhysicalNames` and
/// those the entities refer to (unnamed).
fn physical_groups(names: Vec<PhysicalGroup>, entities: &[GmshEntity]) -> Vec<PhysicalGroup> {
    let mut groups: BTreeMap<(usize, i32), String> = BTreeMap::new();
    for g in names {
        groups.insert((g.dim, g.tag), g.name);
    }
    for e in entities {
        for &t in &e.physical_tags {
            groups.entry((e.dim, t)).or_default();
        }
    }
    groups
        .into_iter()
        .map(|((dim, tag), name)| PhysicalGroup { dim, tag, name })
        .collect()
}
