//! `$Nodes`: node tags and coordinates, and the map from tags to nodes.

use std::collections::HashMap;

use super::reader::{Reader, Records};
use super::source::Source;
use crate::Result;

/// The nodes of `$Nodes`, in file order.
pub(super) struct Nodes {
    /// Gmsh tag of each node.
    pub tags: Vec<u64>,
    /// Coordinates of each node.
    pub xyz: Vec<[f64; 3]>,
    /// Offset of each node's tag record.
    pub tag_at: Vec<usize>,
    /// Offset of each node's coordinate record.
    pub xyz_at: Vec<usize>,
}

/// Reads `$Nodes`: a header `numEntityBlocks numNodes minNodeTag
/// maxNodeTag`, then blocks of a header `entityDim entityTag parametric
/// numNodesInBlock`, the block's node tags and its coordinates `x y z`.
pub(super) fn read<R: Reader>(rec: &mut Records<R>) -> Result<Nodes> {
    let (head_at, counts) = rec.section_header("Node")?;
    let (n_blocks, n_nodes) = counts;
    let cap = rec.capacity(n_nodes, 8);
    let mut nodes = Nodes {
        tags: Vec::with_capacity(cap),
        xyz: Vec::with_capacity(cap),
        tag_at: Vec::with_capacity(cap),
        xyz_at: Vec::with_capacity(cap),
    };
    for b in 1..=n_blocks {
        let block = || format!("node block {b} of {n_blocks}");
        let (at, (_, _, parametric, n)) = rec.block_header((b, n_blocks), "Node", "parametric")?;
        if parametric != 0 {
            return Err(rec.err(
                at,
                "parametric node coordinates are not supported (save with Mesh.SaveParametric = 0)",
            ));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        rec.reserve(n, 0, || format!("the node tags of {}", block()))?;
        let first = nodes.tags.len();
        let tag_what = || format!("one node tag (a positive integer) in {}", block());
        for _ in 0..n {
            let (at, tag) = rec.record(tag_what, |r| r.size())?;
            if tag == 0 {
                return Err(rec.reject(at, &tag_what(), tag));
            }
            nodes.tags.push(tag);
            nodes.tag_at.push(at);
        }
        rec.reserve(0, 3 * n, || format!("the coordinates of {}", block()))?;
        for &tag in &nodes.tags[first..] {
            let (at, p) = rec.record(
                || format!("3 coordinates 'x y z' for node {tag} of {}", block()),
                |r| Ok([r.float()?, r.float()?, r.float()?]),
            )?;
            nodes.xyz.push(p);
            nodes.xyz_at.push(at);
        }
    }
    rec.end_blocks(head_at, counts, "Node", nodes.tags.len())?;
    Ok(nodes)
}

/// Maps Gmsh node tags to node indices (file order).
pub(super) enum TagMap {
    /// Tags in a range not much wider than their number: a table.
    Dense { min: u64, index: Vec<u32> },
    /// Sparse tags.
    Sparse(HashMap<u64, u32>),
}

impl TagMap {
    /// The map of `nodes`; a tag defined twice is an error.
    pub fn new(src: &Source, nodes: &Nodes) -> Result<TagMap> {
        let tags = &nodes.tags;
        if tags.len() >= u32::MAX as usize {
            return Err(src.err(0, "too many nodes for 32-bit indices"));
        }
        let duplicate = |i: usize, first: u32| {
            src.err(
                nodes.tag_at[i],
                format!(
                    "duplicate node tag {} (first defined at {})",
                    tags[i],
                    src.place(nodes.tag_at[first as usize])
                ),
            )
        };
        let min = tags.iter().copied().min().unwrap_or(1);
        let max = tags.iter().copied().max().unwrap_or(1);
        if max - min <= 4 * tags.len() as u64 + 1024 {
            let mut index = vec![u32::MAX; (max - min + 1) as usize];
            for (i, &t) in tags.iter().enumerate() {
                let slot = &mut index[(t - min) as usize];
                if *slot != u32::MAX {
                    return Err(duplicate(i, *slot));
                }
                *slot = i as u32;
            }
            Ok(TagMap::Dense { min, index })
        } else {
            let mut map = HashMap::with_capacity(tags.len());
            for (i, &t) in tags.iter().enumerate() {
                if let Some(&first) = map.get(&t) {
                    return Err(duplicate(i, first));
                }
                map.insert(t, i as u32);
            }
            Ok(TagMap::Sparse(map))
        }
    }

    /// The index of the node tagged `tag`.
    pub fn get(&self, tag: u64) -> Option<u32> {
        match self {
            TagMap::Dense { min, index } => tag
                .checked_sub(*min)
                .and_then(|i| index.get(usize::try_from(i).ok()?))
                .copied()
                .filter(|&i| i != u32::MAX),
            TagMap::Sparse(map) => map.get(&tag).copied(),
        }
    }
}
