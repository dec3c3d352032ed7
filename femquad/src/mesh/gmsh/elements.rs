//! `$Elements`: the element types femquad reads, and the elements with their
//! nodes resolved to node indices.

use super::nodes::TagMap;
use super::reader::{Fault, FaultKind, Reader, Records};
use super::source::show;
use crate::{Error, Result};

/// Element types femquad reads: Gmsh type id, dimension, nodes per element.
const SUPPORTED: [(i32, usize, usize); 7] = [
    (15, 0, 1),  // 1-node point
    (1, 1, 2),   // 2-node line
    (8, 1, 3),   // 3-node line
    (2, 2, 3),   // 3-node triangle
    (9, 2, 6),   // 6-node triangle
    (4, 3, 4),   // 4-node tetrahedron
    (11, 3, 10), // 10-node tetrahedron
];

/// The most nodes of a supported element.
const MAX_NODES: usize = 10;

/// `(dimension, nodes)` of a supported element type.
fn element_info(t: i32) -> Option<(usize, usize)> {
    SUPPORTED
        .iter()
        .find(|s| s.0 == t)
        .map(|&(_, dim, nodes)| (dim, nodes))
}

/// Whether `t` is a second-order type (6-node triangle, 10-node
/// tetrahedron, 3-node line).
pub(super) fn second_order(t: i32) -> bool {
    matches!(t, 8 | 9 | 11)
}

/// Why element type `t` cannot be read.
fn unsupported_type(t: i32) -> String {
    let name = match t {
        3 => "4-node quadrangle",
        5 => "8-node hexahedron",
        6 => "6-node prism",
        7 => "5-node pyramid",
        10 => "9-node quadrangle",
        12 => "27-node hexahedron",
        13 => "18-node prism",
        14 => "14-node pyramid",
        16 => "8-node quadrangle",
        17 => "20-node hexahedron",
        18 => "15-node prism",
        19 => "13-node pyramid",
        20 => "9-node (incomplete cubic) triangle",
        21 => "10-node (cubic) triangle",
        26 => "4-node (cubic) line",
        29 => "20-node (cubic) tetrahedron",
        _ if (1..=140).contains(&t) => "",
        _ => {
            return format!(
                "unknown element type {t}; femquad reads points (15), lines (1, 8), \
                 triangles (2, 9) and tetrahedra (4, 11)"
            );
        }
    };
    let what = if name.is_empty() {
        format!("element type {t}")
    } else {
        format!("element type {t} ({name})")
    };
    format!(
        "{what} is not supported: femquad reads simplices of order 1 or 2 — points (15), \
         lines (1, 8), triangles (2, 9), tetrahedra (4, 11)"
    )
}

/// A block of elements of one type and entity.
pub(super) struct ElementBlock {
    /// Dimension of the elements and of their entity.
    pub dim: usize,
    /// Tag of the entity they belong to.
    pub entity: i32,
    /// Gmsh element type.
    pub etype: i32,
    /// Number of elements.
    pub len: usize,
}

/// The elements of `$Elements`, in file order.
pub(super) struct Elements {
    pub blocks: Vec<ElementBlock>,
    /// Gmsh tag of each element.
    pub tags: Vec<u64>,
    /// Offset of each element's record.
    pub at: Vec<usize>,
    /// The vertex nodes (the first `dim + 1` nodes) of each element, as
    /// node indices, concatenated.
    pub vertices: Vec<u32>,
}

/// Reads `$Elements`: a header `numEntityBlocks numElements minElementTag
/// maxElementTag`, then blocks of a header `entityDim entityTag elementType
/// numElementsInBlock` and elements `elementTag nodeTag…`. Every node tag
/// must be in `nodes`, and appear once per element.
pub(super) fn read<R: Reader>(rec: &mut Records<R>, nodes: &TagMap) -> Result<Elements> {
    let (head_at, counts) = rec.section_header("Element")?;
    let (n_blocks, n_elements) = counts;
    let cap = rec.capacity(n_elements, 4);
    let mut elements = Elements {
        blocks: Vec::new(),
        tags: Vec::with_capacity(cap),
        at: Vec::with_capacity(cap),
        vertices: Vec::new(),
    };
    for b in 1..=n_blocks {
        let block = || format!("element block {b} of {n_blocks}");
        let (at, (dim, entity, etype, n)) =
            rec.block_header((b, n_blocks), "Element", "elementType")?;
        let Some((edim, n_nodes)) = element_info(etype) else {
            return Err(rec.err(at, unsupported_type(etype)));
        };
        if dim != edim as i32 {
            return Err(rec.err(
                at,
                format!("element type {etype} has dimension {edim} but its block says {dim}"),
            ));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        rec.reserve(n.saturating_mul(n_nodes + 1), 0, || {
            format!("the elements of {}", block())
        })?;
        // (in ASCII, an element takes at least 2 bytes per value)
        elements
            .vertices
            .reserve(rec.capacity(n as u64, 2 * (n_nodes + 1)) * (edim + 1));
        for i in 1..=n {
            let (at, (tag, ids)) = rec
                .try_record(|r| {
                    let tag = r.size()?;
                    let mut ids = [0; MAX_NODES];
                    for id in &mut ids[..n_nodes] {
                        *id = r.size()?;
                    }
                    Ok((tag, ids))
                })
                .map_err(|f| element_fault(rec, f, (i, &block()), etype, n_nodes))?;
            let mut idx = [0u32; MAX_NODES];
            for (slot, &t) in idx.iter_mut().zip(&ids[..n_nodes]) {
                *slot = nodes.get(t).ok_or_else(|| {
                    rec.err(
                        at,
                        format!(
                            "element {tag} refers to node {t}, which is not in the $Nodes section"
                        ),
                    )
                })?;
            }
            let idx = &idx[..n_nodes];
            if let Some(j) = (1..n_nodes).find(|&j| idx[..j].contains(&idx[j])) {
                return Err(rec.err(at, format!("element {tag} lists node {} twice", ids[j])));
            }
            elements.vertices.extend_from_slice(&idx[..=edim]);
            elements.tags.push(tag);
            elements.at.push(at);
        }
        elements.blocks.push(ElementBlock {
            dim: edim,
            entity,
            etype,
            len: n,
        });
    }
    rec.end_blocks(head_at, counts, "Element", elements.tags.len())?;
    Ok(elements)
}

/// The error for fault `f` in element `i` of `block`, of type `etype` with
/// `n_nodes` nodes: in ASCII, a line with another number of node tags says
/// how many it has.
fn element_fault<R: Reader>(
    rec: &Records<R>,
    f: Fault,
    (i, block): (usize, &str),
    etype: i32,
    n_nodes: usize,
) -> Error {
    if let (FaultKind::Count, Some(line)) = (f.kind, rec.r.line()) {
        let mut tokens = line
            .split(u8::is_ascii_whitespace)
            .filter(|t| !t.is_empty());
        if let Some(tag) = tokens.next() {
            let found = tokens.count();
            if found != n_nodes {
                return rec.err(
                    f.at,
                    format!(
                        "element {} has {found} node tags; element type {etype} needs {n_nodes}",
                        show(tag)
                    ),
                );
            }
        }
    }
    rec.fault(f, || {
        format!("the tag and {n_nodes} node tags of element {i} of {block}")
    })
}
