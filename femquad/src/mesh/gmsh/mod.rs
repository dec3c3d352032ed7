//! Reading Gmsh MSH 4.1 meshes, ASCII and binary, as Gmsh writes them.
//!
//! [`read_gmsh`] turns a `.msh` file into a [`GmshMesh`]: the simplicial
//! [`Mesh`] of its top-dimensional elements plus what is needed to apply
//! boundary conditions by physical group.
//!
//! # What is read
//! * **Dimension.** The mesh dimension is the highest element dimension in
//!   the file (2 or 3). A 2D mesh must lie in a plane `z = const` (Gmsh
//!   writes planar models with `z = 0`); `z` is dropped.
//! * **Cells.** Elements of the mesh dimension become the cells: 3-node
//!   triangles (Gmsh type 2) or 4-node tetrahedra (type 4). Second-order
//!   6-node triangles (type 9) and 10-node tetrahedra (type 11) are read by
//!   their vertex nodes (Gmsh lists them first); the mid-edge nodes, which
//!   may lie on curved boundaries, are dropped (they must still be in
//!   `$Nodes`) and [`GmshMesh::second_order`] says so: the mesh is the
//!   straight-sided one, and P2 spaces place their edge nodes at edge
//!   midpoints.
//! * **Vertices.** Only nodes that are vertices of cells are kept;
//!   [`GmshMesh::node_tags`] gives each vertex's Gmsh node tag.
//! * **Numbering.** By default cells and vertices are renumbered for
//!   locality at read time ([`GmshNumbering::Locality`]: cells in the
//!   Hilbert order of their centroids, vertices by first touch), the order
//!   the device kernels are fast on; [`GmshNumbering::File`] keeps the
//!   file's element order and numbers vertices `0, 1, …` in increasing node
//!   tag (tags may be sparse and appear in any order). Tags and physical
//!   groups follow their cells and vertices either way.
//! * **Orientation.** A cell with `det J < 0` (e.g. a triangle of a surface
//!   whose normal is `−z`) is an error naming its element tag and line,
//!   unless the file is read with [`GmshOptions::reorient`]: then cells
//!   written clockwise are flipped ([`Mesh::reorient`]: only consistently
//!   flipped cells, a tangled mesh is still an error naming the elements)
//!   and counted in [`GmshMesh::reoriented`]. The mesh must pass
//!   [`Mesh::validate`], so degenerate cells are errors naming the element
//!   tag and line.
//! * **Lower-dimensional elements** (points, lines, and triangles of a 3D
//!   mesh) are kept in [`GmshMesh::elements`] with their entity, so that
//!   physical groups of boundaries can be resolved to the dofs of a space
//!   ([`GmshMesh::part`], [`crate::space::FunctionSpace::dofs_on`]). Their
//!   nodes must be cell vertices.
//! * **Physical groups** come from `$PhysicalNames` (names) and `$Entities`
//!   (which entities belong to which groups). Note that Gmsh saves only the
//!   elements of physical groups when a model has any, unless
//!   `Mesh.SaveAll = 1`: give the domain a physical group too.
//!
//! Other element types (quadrangles, hexahedra, prisms, pyramids, higher
//! orders) are rejected with a clear message; other sections (`$Periodic`,
//! `$NodeData`, …) are skipped.
//!
//! # Errors
//! A malformed file gives [`Error::MeshFile`] with the 1-based line and the
//! reason, e.g. `MSH version 2.2 is not supported; …`, `truncated file: …`,
//! `expected 3 coordinates 'x y z' for node 9 of node block 9 of 9, found
//! '0.29 abc 0': 'abc' is not a number`, `element 12 refers to node 99,
//! which is not in the $Nodes section` (every node of an element must be in
//! `$Nodes`, and appear once in it). In a binary file the line is
//! reported as 0 once binary data has begun, and the reason names the
//! section and byte offset. No input makes the reader panic.
//!
//! # Implementation
//! The file is read once, by femquad's own reader. A scan first splits it
//! into its `$Name … $EndName` sections (so that a record cut short is told
//! apart from a file cut short). `$MeshFormat` and `$PhysicalNames` are
//! ASCII in every file; `$Entities`, `$Nodes` and `$Elements` are parsed by
//! one parser per section, written against a reader of `size_t`, `int` and
//! `double` values that is either ASCII or binary (either byte order,
//! `size_t` of 8 or 4 bytes). In ASCII files the reader expects the layout
//! Gmsh writes: one record (section header, block header, node tag, node
//! coordinates, element, entity) per line, so that an error names its line.

use std::path::Path;
use std::sync::Arc;

use super::Mesh;
use crate::{Error, Result};

mod ascii;
mod binary;
mod build;
mod consistency;
mod elements;
mod entities;
mod groups;
mod header;
mod nodes;
mod reader;
mod renumbered;
mod source;
#[cfg(test)]
mod tests;

use ascii::Ascii;
use binary::Binary;
use build::Parts;
use reader::{Reader, Records};
use source::{Section, Source};

/// A mesh read from a Gmsh file, with the Gmsh information needed to apply
/// boundary conditions and material data by physical group.
///
/// The unit square as two triangles, with its bottom side (a line) in the
/// physical group `bottom`:
///
/// ```
/// use femquad::mesh::parse_gmsh;
///
/// let msh = "$MeshFormat\n4.1 0 8\n$EndMeshFormat
/// $PhysicalNames\n1\n1 1 \"bottom\"\n$EndPhysicalNames
/// $Entities\n0 1 1 0\n1 0 0 0 1 0 0 1 1 0\n1 0 0 0 1 1 0 0 0\n$EndEntities
/// $Nodes\n1 4 1 4\n2 1 0 4\n1\n2\n3\n4\n0 0 0\n1 0 0\n1 1 0\n0 1 0\n$EndNodes
/// $Elements\n2 3 1 3\n1 1 1 1\n1 1 2\n2 1 2 2\n2 1 2 3\n3 1 3 4\n$EndElements\n";
/// let g = parse_gmsh(msh.as_bytes(), "square.msh")?;
/// assert_eq!((g.mesh.n_vertices(), g.mesh.n_cells()), (4, 2));
/// assert_eq!(g.elements.len(), 1); // the boundary line
/// // vertices and cells are renumbered for locality (GmshOptions::numbering);
/// // the file's node and element tags follow them
/// let node_tags = |vertices: &[u32]| -> Vec<u64> {
///     let mut t: Vec<u64> = vertices.iter().map(|&v| g.node_tags[v as usize]).collect();
///     t.sort();
///     t
/// };
/// let mut cells = g.cell_tags.clone();
/// cells.sort();
/// assert_eq!(cells, vec![2, 3]);
/// let bottom = g.physical_group("bottom").unwrap();
/// assert_eq!(node_tags(&g.group_vertices(bottom)), vec![1, 2]);
/// // where to impose u = g: the group's part, its vertices and edges
/// let part = g.part(&["bottom"])?;
/// assert_eq!(node_tags(part.vertices()), vec![1, 2]);
/// assert_eq!(part.edges().len(), 1);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GmshMesh {
    /// The simplicial mesh of the top-dimensional elements (valid,
    /// positively oriented), shared: a [`FunctionSpace`](crate::space::FunctionSpace)
    /// on it holds a clone of this `Arc` (`FunctionSpace::new(gmsh.mesh.clone(), …)`
    /// copies no mesh data).
    pub mesh: Arc<Mesh>,
    /// Number of cells whose vertices 1 and 2 were swapped because
    /// `det J < 0` in the file's order (only with [`GmshOptions::reorient`];
    /// otherwise such a cell is an error).
    pub reoriented: usize,
    /// `true` when cells were second order (6-node triangles or 10-node
    /// tetrahedra) and only their vertex nodes were read.
    pub second_order: bool,
    /// Gmsh node tag of each mesh vertex (increasing with
    /// [`GmshNumbering::File`]; in the locality order by default).
    pub node_tags: Vec<u64>,
    /// Gmsh element tag of each cell.
    pub cell_tags: Vec<u64>,
    /// Gmsh entity tag (of dimension `mesh.dim()`) of each cell: the
    /// geometric surface or volume the cell belongs to.
    pub cell_entities: Vec<i32>,
    /// Elements of lower dimension than the mesh (points, boundary lines,
    /// boundary triangles), in file order.
    pub elements: Vec<GmshElement>,
    /// The geometric entities of `$Entities` with their physical tags
    /// (empty if the file has no `$Entities` section).
    pub entities: Vec<GmshEntity>,
    /// Physical groups, sorted by `(dim, tag)`: those named in
    /// `$PhysicalNames` and those referred to by entities.
    pub physical_groups: Vec<PhysicalGroup>,
}

/// A lower-dimensional Gmsh element (point, line, or triangle of a 3D mesh).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GmshElement {
    /// Gmsh element tag.
    pub tag: u64,
    /// Dimension: 0 point, 1 line, 2 triangle.
    pub dim: usize,
    /// Tag of the geometric entity (of dimension `dim`) it belongs to.
    pub entity: i32,
    /// Its vertices as mesh vertex indices (`dim + 1` of them; mid-edge
    /// nodes of second-order elements are dropped), in Gmsh's order.
    pub vertices: Vec<u32>,
}

/// A geometric entity of the Gmsh model (point, curve, surface, volume).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GmshEntity {
    /// Dimension, 0 to 3.
    pub dim: usize,
    /// Entity tag (unique per dimension).
    pub tag: i32,
    /// Tags of the physical groups (of the same dimension) it belongs to.
    pub physical_tags: Vec<i32>,
}

/// A Gmsh physical group: a named set of entities of one dimension.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhysicalGroup {
    /// Dimension of its entities.
    pub dim: usize,
    /// Physical tag (unique per dimension).
    pub tag: i32,
    /// Name from `$PhysicalNames`; empty if the group has none.
    pub name: String,
}

/// How a Gmsh file is read: what [`read_gmsh_with`] may change.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GmshOptions {
    /// Flip cells written clockwise (`det J < 0` in the file's vertex
    /// order, e.g. the triangles of a surface whose normal is `−z`) by
    /// [`Mesh::reorient`], which flips only consistently flipped cells and
    /// refuses a tangled mesh; the count is [`GmshMesh::reoriented`].
    /// Default `false`: such a cell is an error that names it and says to
    /// set this.
    pub reorient: bool,
    /// How cells and vertices are numbered; by default for locality
    /// ([`GmshNumbering::Locality`]), the numbering the device kernels are
    /// fast on.
    pub numbering: GmshNumbering,
}

/// The numbering of a read mesh's cells and vertices.
///
/// Gmsh numbers nodes and elements in the order it generated them, which
/// scatters a cell's vertices across memory; the integration kernels gather
/// them per cell, so on a device that order costs bandwidth (BENCHMARKS.md,
/// the `random` against the `renumbered` rows). Either way the file's
/// identities are kept: [`GmshMesh::node_tags`] gives each vertex's Gmsh
/// node tag, [`GmshMesh::cell_tags`] each cell's element tag, and physical
/// groups resolve to the same vertices and cells.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GmshNumbering {
    /// Cells in the Hilbert order of their centroids, vertices in the order
    /// the cells first touch them ([`crate::mesh::renumber`]): what
    /// [`Mesh::renumbered_for_locality`] gives, done at read time. `node_tags`
    /// is then not increasing.
    #[default]
    Locality,
    /// Cells in the file's element order, vertices in increasing node tag.
    File,
}

/// Reads a Gmsh MSH 4.1 file (ASCII or binary); see the [module docs](self)
/// for what is read and how. A cell written clockwise is an error:
/// [`read_gmsh_with`] and [`GmshOptions::reorient`] flip such cells.
///
/// Errors: [`Error::Io`] if the file cannot be read, [`Error::MeshFile`]
/// (line and reason) if it is malformed or holds elements femquad does not
/// support, or a cell is invalid (degenerate, or negatively oriented).
///
/// ```
/// use femquad::prelude::*;
///
/// // one triangle, nodes with tags 1 to 3 in one block of surface 1
/// let msh = "$MeshFormat\n4.1 0 8\n$EndMeshFormat
/// $Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n2 0 0\n0 1 0\n$EndNodes
/// $Elements\n1 1 1 1\n2 1 2 1\n1 1 2 3\n$EndElements\n";
/// let path = std::env::temp_dir().join(format!("femquad-doc-{}.msh", std::process::id()));
/// std::fs::write(&path, msh)?;
/// let g = read_gmsh(&path)?;
/// std::fs::remove_file(&path)?;
/// assert_eq!((g.mesh.dim(), g.mesh.n_cells()), (2, 1)); // z = 0 dropped
/// assert_eq!(g.mesh.cell_volume(0), 1.0);
/// assert!(read_gmsh(std::env::temp_dir().join("no such file.msh")).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_gmsh(path: impl AsRef<Path>) -> Result<GmshMesh> {
    read_gmsh_with(path, &GmshOptions::default())
}

/// [`read_gmsh`] with `options`, e.g. to flip cells written clockwise:
///
/// ```no_run
/// use femquad::mesh::{GmshOptions, read_gmsh_with};
///
/// let options = GmshOptions { reorient: true, ..GmshOptions::default() };
/// let g = read_gmsh_with("plate.msh", &options)?;
/// println!("{} cells flipped", g.reoriented);
/// # Ok::<(), femquad::Error>(())
/// ```
///
/// Errors: those of [`read_gmsh`]; with `reorient`, a tangled mesh
/// ([`Mesh::reorient`]) is an [`Error::MeshFile`] naming the elements.
pub fn read_gmsh_with(path: impl AsRef<Path>, options: &GmshOptions) -> Result<GmshMesh> {
    let path = path.as_ref();
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_gmsh_with(&bytes, path, options)
}

/// Parses MSH 4.1 content held in memory, as [`read_gmsh`]; `path` only
/// names the source in error messages.
///
/// ```
/// use femquad::Error;
/// use femquad::mesh::parse_gmsh;
///
/// let msh = "$MeshFormat\n4.1 0 8\n$EndMeshFormat
/// $Nodes\n1 3 1 3\n2 1 0 3\n1\n2\n3\n0 0 0\n1 0 0\n0 1 0\n$EndNodes
/// $Elements\n1 1 1 1\n2 1 2 1\n1 1 2 3\n$EndElements\n";
/// let g = parse_gmsh(msh.as_bytes(), "triangle.msh")?;
/// assert_eq!(g.mesh.vertices(), &[0.0, 0.0, 1.0, 0.0, 0.0, 1.0]);
/// assert_eq!((g.node_tags.clone(), g.cell_tags.clone()), (vec![1, 2, 3], vec![1]));
/// // errors name the source and the line
/// let old = msh.replace("4.1 0 8", "2.2 0 8");
/// match parse_gmsh(old.as_bytes(), "old.msh") {
///     Err(Error::MeshFile { line, .. }) => assert_eq!(line, 2),
///     other => panic!("{other:?}"),
/// }
/// # Ok::<(), femquad::Error>(())
/// ```
pub fn parse_gmsh(bytes: &[u8], path: impl AsRef<Path>) -> Result<GmshMesh> {
    parse_gmsh_with(bytes, path, &GmshOptions::default())
}

/// [`parse_gmsh`] with `options`, as [`read_gmsh_with`].
pub fn parse_gmsh_with(
    bytes: &[u8],
    path: impl AsRef<Path>,
    options: &GmshOptions,
) -> Result<GmshMesh> {
    let mut src = Source::new(path.as_ref(), bytes);
    let format = header::mesh_format(&src)?;
    src.scan(format.binary)?;
    let names = match src.section("PhysicalNames") {
        Some(s) => header::physical_names(&src, s)?,
        None => Vec::new(),
    };
    let parts = if format.binary {
        read_sections(&src, names, |s| Binary::new(bytes, s, &format))?
    } else {
        read_sections(&src, names, |s| Ascii::new(bytes, s))?
    };
    build::build(&src, parts, options)
}

/// Reads `$Entities`, `$Nodes` and `$Elements` of `src` with the readers
/// that `reader` makes (ASCII or binary).
fn read_sections<R: Reader>(
    src: &Source,
    names: Vec<PhysicalGroup>,
    reader: impl Fn(&Section) -> R,
) -> Result<Parts> {
    let records = |s| Records::new(src, s, reader(s));
    let nodes_section = src.require("Nodes")?;
    let elements_section = src.require("Elements")?;
    let entities = match src.section("Entities") {
        Some(s) => entities::read(&mut records(s))?,
        None => Vec::new(),
    };
    let nodes = nodes::read(&mut records(nodes_section))?;
    let tag_map = nodes::TagMap::new(src, &nodes)?;
    let elements = elements::read(&mut records(elements_section), &tag_map)?;
    Ok(Parts {
        names,
        entities,
        nodes,
        elements,
    })
}
