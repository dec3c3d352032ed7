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
//!   may lie on curved boundaries, are dropped and [`GmshMesh::second_order`]
//!   says so: the mesh is the straight-sided one, and P2 spaces place their
//!   edge nodes at edge midpoints. Cells keep the file's order.
//! * **Vertices.** Only nodes that are vertices of cells are kept, numbered
//!   `0, 1, …` in increasing Gmsh node tag (tags may be sparse and appear in
//!   any order); [`GmshMesh::node_tags`] maps back.
//! * **Orientation.** Cells with `det J < 0` (e.g. triangles of a surface
//!   whose normal is `−z`) are reoriented by swapping two vertices
//!   ([`Mesh::reorient`]) and counted in [`GmshMesh::reoriented`]; then the
//!   mesh must pass [`Mesh::validate`], so degenerate cells are errors naming
//!   the element tag and line.
//! * **Lower-dimensional elements** (points, lines, and triangles of a 3D
//!   mesh) are kept in [`GmshMesh::elements`] with their entity, so that
//!   physical groups of boundaries can be resolved to vertices
//!   ([`GmshMesh::group_vertices`]). Their nodes must be cell vertices.
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
//! `element 12 refers to node 99, which is not in the $Nodes section`. In a
//! binary file the line is reported as 0 once binary data has begun, and the
//! reason names the section and byte offset.
//!
//! # Implementation
//! The sections are parsed by the `mshio` crate (MSH 4.1). Before that, a
//! light structural pass over `$MeshFormat`, `$Nodes` and `$Elements`
//! checks the header, the record counts and the element types, records the
//! file position of every node and element (so that later errors can name
//! their line), and reads the node tags (mshio keeps them only when they
//! are sparse). In ASCII files this pass expects the layout Gmsh writes:
//! one record (block header, node tag, node coordinates, element) per line.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use super::Mesh;
use crate::{Error, Result};

/// A mesh read from a Gmsh file, with the Gmsh information needed to apply
/// boundary conditions and material data by physical group.
#[derive(Clone, Debug, PartialEq)]
pub struct GmshMesh {
    /// The simplicial mesh of the top-dimensional elements (valid,
    /// positively oriented).
    pub mesh: Mesh,
    /// Number of cells whose vertices 1 and 2 were swapped because
    /// `det J < 0` in the file's order.
    pub reoriented: usize,
    /// `true` when cells were second order (6-node triangles or 10-node
    /// tetrahedra) and only their vertex nodes were read.
    pub second_order: bool,
    /// Gmsh node tag of each mesh vertex (increasing).
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

impl GmshMesh {
    /// The physical group called `name`, if any.
    pub fn physical_group(&self, name: &str) -> Option<&PhysicalGroup> {
        self.physical_groups.iter().find(|g| g.name == name)
    }

    /// Physical tags of entity `(dim, tag)` (empty if unknown).
    pub fn physical_tags(&self, dim: usize, entity: i32) -> &[i32] {
        self.entities
            .iter()
            .find(|e| e.dim == dim && e.tag == entity)
            .map_or(&[], |e| &e.physical_tags)
    }

    /// Entity tags of dimension `group.dim` that belong to `group`.
    fn group_entities(&self, group: &PhysicalGroup) -> Vec<i32> {
        self.entities
            .iter()
            .filter(|e| e.dim == group.dim && e.physical_tags.contains(&group.tag))
            .map(|e| e.tag)
            .collect()
    }

    /// Indices of the cells in `group` (empty unless `group.dim` is the mesh
    /// dimension), increasing.
    pub fn group_cells(&self, group: &PhysicalGroup) -> Vec<u32> {
        if group.dim != self.mesh.dim() {
            return Vec::new();
        }
        let ents = self.group_entities(group);
        (0..self.mesh.n_cells() as u32)
            .filter(|&c| ents.contains(&self.cell_entities[c as usize]))
            .collect()
    }

    /// The lower-dimensional elements in `group` (e.g. the boundary lines of
    /// a physical curve), in file order.
    pub fn group_elements(&self, group: &PhysicalGroup) -> Vec<&GmshElement> {
        let ents = self.group_entities(group);
        self.elements
            .iter()
            .filter(|e| e.dim == group.dim && ents.contains(&e.entity))
            .collect()
    }

    /// The mesh vertices of the elements (or cells) in `group`, sorted and
    /// without repetition: the vertices on which to impose a Dirichlet
    /// condition given on that group.
    pub fn group_vertices(&self, group: &PhysicalGroup) -> Vec<u32> {
        let mut v: Vec<u32> = self
            .group_elements(group)
            .iter()
            .flat_map(|e| e.vertices.iter().copied())
            .collect();
        for c in self.group_cells(group) {
            v.extend_from_slice(self.mesh.cell(c as usize));
        }
        v.sort_unstable();
        v.dedup();
        v
    }
}

/// Reads a Gmsh MSH 4.1 file (ASCII or binary); see the [module docs](self)
/// for what is read and how.
///
/// Errors: [`Error::Io`] if the file cannot be read, [`Error::MeshFile`]
/// (line and reason) if it is malformed or holds elements femquad does not
/// support.
pub fn read_gmsh(path: &Path) -> Result<GmshMesh> {
    let bytes = std::fs::read(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_gmsh(&bytes, path)
}

/// Parses MSH 4.1 content held in memory, as [`read_gmsh`]; `path` only
/// names the source in error messages.
pub fn parse_gmsh(bytes: &[u8], path: &Path) -> Result<GmshMesh> {
    let mut src = Source {
        path: path.to_path_buf(),
        bytes,
        binary: false,
        binary_from: usize::MAX,
        sections: Vec::new(),
    };
    let header = parse_header(&src)?;
    src.binary = header.binary;
    scan_sections(&mut src)?;
    let names = match src.section("PhysicalNames") {
        Some(s) => parse_physical_names(&src, s)?,
        None => Vec::new(),
    };
    let nodes_sec = src
        .section("Nodes")
        .ok_or_else(|| src.err(src.bytes.len(), "the file has no $Nodes section"))?;
    let elems_sec = src
        .section("Elements")
        .ok_or_else(|| src.err(src.bytes.len(), "the file has no $Elements section"))?;
    let (nodes, elems) = if header.binary {
        let mut r = Bin {
            bytes,
            pos: 0,
            end: 0,
            little: header.little_endian,
            size_t: header.size_t,
        };
        (
            binary_nodes(&src, nodes_sec, &mut r)?,
            binary_elements(&src, elems_sec, &mut r)?,
        )
    } else {
        (
            ascii_nodes(&src, nodes_sec)?,
            ascii_elements(&src, elems_sec)?,
        )
    };

    // mshio's nom parsers must not take the process down on a file we did
    // not foresee: a panic becomes an error.
    let parsed = std::panic::catch_unwind(|| mshio::parse_msh_bytes(bytes));
    let msh = match parsed {
        Ok(Ok(msh)) => msh,
        Ok(Err(e)) => return Err(src.mshio_error(&e)),
        Err(_) => {
            return Err(src.err(0, "the MSH parser (mshio) failed unexpectedly on this file"));
        }
    };
    build(&src, &msh, &nodes, &elems, names)
}

/// A `$Name … $EndName` section: offsets into the file.
#[derive(Clone, Debug)]
struct Section {
    name: String,
    /// Offset of the `$Name` line.
    header: usize,
    /// Offset of the first content byte (after the `$Name` line).
    start: usize,
    /// Offset one past the content (the newline before `$EndName` included).
    end: usize,
}

/// The file being read, for locating errors.
struct Source<'a> {
    path: PathBuf,
    bytes: &'a [u8],
    binary: bool,
    /// In a binary file, the offset where binary data begins (line numbers
    /// after it are meaningless).
    binary_from: usize,
    sections: Vec<Section>,
}

impl Source<'_> {
    fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// 1-based line of byte `offset`.
    fn line_of(&self, offset: usize) -> usize {
        let end = offset.min(self.bytes.len());
        self.bytes[..end].iter().filter(|&&b| b == b'\n').count() + 1
    }

    /// An [`Error::MeshFile`] located at byte `offset`.
    fn err(&self, offset: usize, reason: impl Into<String>) -> Error {
        let reason = reason.into();
        if self.binary && offset >= self.binary_from {
            let section = self
                .sections
                .iter()
                .find(|s| (s.start..s.end).contains(&offset))
                .map_or(String::new(), |s| format!("section ${}, ", s.name));
            Error::MeshFile {
                path: self.path.clone(),
                line: 0,
                reason: format!("{reason} (binary file: {section}byte offset {offset})"),
            }
        } else {
            Error::MeshFile {
                path: self.path.clone(),
                line: self.line_of(offset),
                reason,
            }
        }
    }

    /// Converts an mshio error: the innermost position it reports locates
    /// the line, the chain of contexts explains it.
    fn mshio_error(&self, e: &mshio::MshParserError<&[u8]>) -> Error {
        let base = self.bytes.as_ptr() as usize;
        let offset = e
            .backtrace
            .first()
            .map(|(input, _)| input.as_ptr() as usize)
            .filter(|&p| p >= base && p <= base + self.bytes.len())
            .map_or(0, |p| p - base);
        // contexts, innermost first, become "outer > … > inner"; the
        // innermost error kind says what went wrong
        let mut contexts: Vec<&str> = Vec::new();
        let mut what: Option<String> = None;
        for (_, kind) in e.filter_msh_errors() {
            match kind.context() {
                Some(c) if contexts.last() != Some(&c) => contexts.push(c),
                Some(_) => {}
                None if what.is_none() => what = Some(kind.to_string()),
                None => {}
            }
        }
        contexts.reverse();
        let what = what.unwrap_or_else(|| "unexpected content".to_string());
        let reason = if contexts.is_empty() {
            format!("cannot parse the file: {what}")
        } else {
            format!(
                "cannot parse the file: {what} (in {})",
                contexts.join(" > ")
            )
        };
        self.err(offset, reason)
    }
}

/// Shows at most 40 characters of a line in a message.
fn show(bytes: &[u8]) -> String {
    let s = String::from_utf8_lossy(bytes);
    let s = s.trim();
    if s.chars().count() > 40 {
        format!("{}…", s.chars().take(40).collect::<String>())
    } else {
        s.to_string()
    }
}

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    if from >= haystack.len() {
        return None;
    }
    haystack[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|i| i + from)
}

fn line_end(bytes: &[u8], from: usize) -> usize {
    bytes[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(bytes.len(), |i| from + i)
}

/// Splits the file into its `$Name … $EndName` sections (into
/// `src.sections`), and notes where binary data begins in a binary file.
fn scan_sections(src: &mut Source) -> Result<()> {
    let bytes = src.bytes;
    let mut pos = 0;
    loop {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos == bytes.len() {
            break;
        }
        let eol = line_end(bytes, pos);
        let line = show(&bytes[pos..eol]);
        let name = line.strip_prefix('$').unwrap_or("");
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Err(src.err(
                pos,
                format!("expected a section header such as $Nodes, found '{line}'"),
            ));
        }
        if let Some(opened) = name.strip_prefix("End") {
            return Err(src.err(pos, format!("${name} without a matching ${opened}")));
        }
        let end_tag = format!("\n$End{name}");
        let Some(nl) = find(bytes, end_tag.as_bytes(), eol) else {
            return Err(src.err(
                pos,
                format!("truncated file: section ${name} has no $End{name}"),
            ));
        };
        if let Some(prev) = src.sections.iter().find(|s| s.name == name)
            && matches!(
                name,
                "MeshFormat" | "Nodes" | "Elements" | "Entities" | "PhysicalNames"
            )
        {
            return Err(src.err(
                pos,
                format!(
                    "a second ${name} section (the first is at line {}); femquad reads one",
                    src.line_of(prev.header)
                ),
            ));
        }
        let start = (eol + 1).min(bytes.len());
        if src.binary && name != "MeshFormat" && name != "PhysicalNames" {
            src.binary_from = src.binary_from.min(start);
        }
        src.sections.push(Section {
            name: name.to_string(),
            header: pos,
            start,
            end: nl + 1,
        });
        pos = nl + end_tag.len();
        let rest_end = line_end(bytes, pos);
        if !bytes[pos..rest_end].iter().all(u8::is_ascii_whitespace) {
            return Err(src.err(pos, format!("unexpected text after $End{name}")));
        }
        pos = rest_end;
    }
    Ok(())
}

/// What `$MeshFormat` says.
struct Header {
    binary: bool,
    little_endian: bool,
    size_t: usize,
}

fn parse_header(src: &Source) -> Result<Header> {
    let bytes = src.bytes;
    if !bytes.starts_with(b"$MeshFormat") {
        let first = &bytes[..line_end(bytes, 0)];
        return Err(src.err(
            0,
            if bytes.is_empty() {
                "empty file: not a Gmsh MSH file".to_string()
            } else {
                format!(
                    "not a Gmsh MSH file: the first line must be $MeshFormat, found '{}'",
                    show(first)
                )
            },
        ));
    }
    let start = (line_end(bytes, 0) + 1).min(bytes.len());
    let eol = line_end(bytes, start);
    let line = &bytes[start..eol];
    let toks: Vec<&[u8]> = tokens(line).collect();
    let bad = || {
        src.err(
            start,
            format!(
                "invalid $MeshFormat line '{}': expected 'version file-type data-size', e.g. '4.1 0 8'",
                show(line)
            ),
        )
    };
    if toks.len() != 3 {
        return Err(bad());
    }
    let version = String::from_utf8_lossy(toks[0]).to_string();
    if version.parse::<f64>().is_err() {
        return Err(bad());
    }
    if version != "4.1" {
        return Err(src.err(
            start,
            format!(
                "MSH version {version} is not supported; re-export as 4.1 (gmsh -format msh41, \
                 or Mesh.MshFileVersion = 4.1)"
            ),
        ));
    }
    let binary = match toks[1] {
        b"0" => false,
        b"1" => true,
        t => {
            return Err(src.err(
                start,
                format!(
                    "file type '{}' is invalid: 0 for ASCII, 1 for binary",
                    show(t)
                ),
            ));
        }
    };
    let size_t = match toks[2] {
        b"8" => 8,
        b"4" => 4,
        t => {
            return Err(src.err(
                start,
                format!(
                    "data size '{}' is not supported: size_t must be 8 bytes (or 4)",
                    show(t)
                ),
            ));
        }
    };
    let mut little_endian = true;
    if binary {
        let one = bytes.get(eol + 1..eol + 5);
        little_endian = match one {
            Some(b) if u32::from_le_bytes([b[0], b[1], b[2], b[3]]) == 1 => true,
            Some(b) if u32::from_be_bytes([b[0], b[1], b[2], b[3]]) == 1 => false,
            _ => {
                return Err(src.err(
                    eol + 1,
                    "binary $MeshFormat: the integer 1 that gives the byte order is missing",
                ));
            }
        };
    }
    Ok(Header {
        binary,
        little_endian,
        size_t,
    })
}

/// Whitespace-separated tokens of a line.
fn tokens(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(u8::is_ascii_whitespace)
        .filter(|t| !t.is_empty())
}

fn parse_int<T: std::str::FromStr>(tok: &[u8]) -> Option<T> {
    std::str::from_utf8(tok).ok()?.parse().ok()
}

/// The non-blank lines of a section, with their offsets.
struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
}

impl<'a> Lines<'a> {
    fn new(bytes: &'a [u8], s: &Section) -> Self {
        Lines {
            bytes,
            pos: s.start,
            end: s.end,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = (usize, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        while self.pos < self.end {
            let off = self.pos;
            let eol = line_end(&self.bytes[..self.end], off);
            self.pos = eol + 1;
            let line = &self.bytes[off..eol];
            if !line.iter().all(u8::is_ascii_whitespace) {
                return Some((off, line));
            }
        }
        None
    }
}

/// `$PhysicalNames`: lines `dim tag "name"`.
fn parse_physical_names(src: &Source, s: &Section) -> Result<Vec<PhysicalGroup>> {
    let mut lines = Lines::new(src.bytes, s);
    let Some((off, line)) = lines.next() else {
        return Err(src.err(s.header, "empty $PhysicalNames section"));
    };
    let count: usize = match tokens(line).collect::<Vec<_>>()[..] {
        [t] => parse_int(t),
        _ => None,
    }
    .ok_or_else(|| {
        src.err(
            off,
            format!(
                "$PhysicalNames: expected the number of names, found '{}'",
                show(line)
            ),
        )
    })?;
    let mut groups = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let Some((off, line)) = lines.next() else {
            return Err(src.err(
                s.end,
                format!(
                    "$PhysicalNames announces {count} names but holds {}",
                    groups.len()
                ),
            ));
        };
        let text = String::from_utf8_lossy(line);
        let (q0, q1) = (text.find('"'), text.rfind('"'));
        let parsed = match (q0, q1) {
            (Some(a), Some(b)) if b > a => {
                let head: Vec<&str> = text[..a].split_whitespace().collect();
                match head[..] {
                    [d, t] => match (d.parse::<usize>(), t.parse::<i32>()) {
                        (Ok(dim), Ok(tag)) if dim <= 3 => Some(PhysicalGroup {
                            dim,
                            tag,
                            name: text[a + 1..b].to_string(),
                        }),
                        _ => None,
                    },
                    _ => None,
                }
            }
            _ => None,
        };
        groups.push(parsed.ok_or_else(|| {
            src.err(
                off,
                format!(
                    "$PhysicalNames: expected 'dimension tag \"name\"', found '{}'",
                    show(line)
                ),
            )
        })?);
    }
    if let Some((off, _)) = lines.next() {
        return Err(src.err(
            off,
            format!("$PhysicalNames holds more than the {count} names it announces"),
        ));
    }
    Ok(groups)
}

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

/// `(dimension, nodes)` of a supported element type.
fn element_info(t: i32) -> Option<(usize, usize)> {
    SUPPORTED
        .iter()
        .find(|s| s.0 == t)
        .map(|&(_, dim, nodes)| (dim, nodes))
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

/// Node tags and file positions from the structural pass over `$Nodes`.
struct NodeLayout {
    /// Node tags in file order (all blocks).
    tags: Vec<u64>,
    /// Offset of each node's tag.
    tag_at: Vec<usize>,
    /// Offset of each node's coordinates.
    coord_at: Vec<usize>,
    /// Nodes per block.
    block_len: Vec<usize>,
}

/// Element positions and types from the structural pass over `$Elements`.
struct ElementLayout {
    /// Offset of each element (all blocks, file order).
    at: Vec<usize>,
    /// `(entity dim, type)` of each block and its element count.
    blocks: Vec<(i32, i32, usize)>,
}

/// Reads `n` integers of a header line, or explains what was expected.
fn header_ints<const N: usize>(
    src: &Source,
    off: usize,
    line: &[u8],
    what: &str,
) -> Result<[i64; N]> {
    let toks: Vec<&[u8]> = tokens(line).collect();
    let mut out = [0i64; N];
    let ok = toks.len() == N
        && toks
            .iter()
            .zip(out.iter_mut())
            .all(|(t, o)| parse_int::<i64>(t).map(|v| *o = v).is_some());
    if ok {
        Ok(out)
    } else {
        Err(src.err(
            off,
            format!("expected {N} integers ({what}), found '{}'", show(line)),
        ))
    }
}

fn count(v: i64) -> Option<usize> {
    usize::try_from(v).ok()
}

/// The next non-blank line of section `s`, or an error saying what is missing.
fn next_record<'a>(
    src: &Source,
    s: &Section,
    lines: &mut Lines<'a>,
    what: &str,
) -> Result<(usize, &'a [u8])> {
    lines
        .next()
        .ok_or_else(|| src.err(s.end, format!("${} ends early: expected {what}", s.name)))
}

fn ascii_nodes<'a>(src: &Source<'a>, s: &Section) -> Result<NodeLayout> {
    let mut lines = Lines::new(src.bytes, s);
    let next = |lines: &mut Lines<'a>, what: &str| next_record(src, s, lines, what);
    let (off, line) = next(&mut lines, "the section header")?;
    let [n_blocks, n_nodes, _, _] = header_ints::<4>(
        src,
        off,
        line,
        "numEntityBlocks numNodes minNodeTag maxNodeTag",
    )?;
    let (Some(n_blocks), Some(n_nodes)) = (count(n_blocks), count(n_nodes)) else {
        return Err(src.err(off, "negative count in the $Nodes header"));
    };
    if n_nodes == 0 {
        return Err(src.err(off, "the mesh has no nodes"));
    }
    let cap = n_nodes.min(1 << 24);
    let mut layout = NodeLayout {
        tags: Vec::with_capacity(cap),
        tag_at: Vec::with_capacity(cap),
        coord_at: Vec::with_capacity(cap),
        block_len: Vec::new(),
    };
    for b in 0..n_blocks {
        let what = format!("node block {} of {n_blocks}", b + 1);
        let (off, line) = next(&mut lines, &what)?;
        let [_, _, parametric, n] = header_ints::<4>(
            src,
            off,
            line,
            "entityDim entityTag parametric numNodesInBlock",
        )?;
        if parametric != 0 {
            return Err(src.err(
                off,
                "parametric node coordinates are not supported (save with Mesh.SaveParametric = 0)",
            ));
        }
        let n = count(n).ok_or_else(|| src.err(off, "negative node count"))?;
        for i in 0..n {
            let (off, line) = next(&mut lines, &format!("the tag of node {} of {what}", i + 1))?;
            let tag = match tokens(line).collect::<Vec<_>>()[..] {
                [t] => parse_int::<u64>(t).filter(|&t| t > 0),
                _ => None,
            }
            .ok_or_else(|| {
                src.err(
                    off,
                    format!(
                        "expected one node tag (a positive integer) in {what}, found '{}'",
                        show(line)
                    ),
                )
            })?;
            layout.tags.push(tag);
            layout.tag_at.push(off);
        }
        for i in 0..n {
            let (off, line) = next(
                &mut lines,
                &format!("the coordinates of node {} of {what}", i + 1),
            )?;
            if tokens(line).count() != 3 {
                return Err(src.err(
                    off,
                    format!(
                        "expected 3 coordinates 'x y z' for node {} of {what}, found '{}'",
                        layout.tags[layout.tags.len() - n + i],
                        show(line)
                    ),
                ));
            }
            layout.coord_at.push(off);
        }
        layout.block_len.push(n);
    }
    if let Some((off, line)) = lines.next() {
        return Err(src.err(
            off,
            format!(
                "unexpected line '{}' after the {n_blocks} node blocks the $Nodes header announces",
                show(line)
            ),
        ));
    }
    if layout.tags.len() != n_nodes {
        return Err(src.err(
            s.start,
            format!(
                "the $Nodes header announces {n_nodes} nodes but its blocks hold {}",
                layout.tags.len()
            ),
        ));
    }
    Ok(layout)
}

fn ascii_elements<'a>(src: &Source<'a>, s: &Section) -> Result<ElementLayout> {
    let mut lines = Lines::new(src.bytes, s);
    let next = |lines: &mut Lines<'a>, what: &str| next_record(src, s, lines, what);
    let (off, line) = next(&mut lines, "the section header")?;
    let [n_blocks, n_elements, _, _] = header_ints::<4>(
        src,
        off,
        line,
        "numEntityBlocks numElements minElementTag maxElementTag",
    )?;
    let (Some(n_blocks), Some(n_elements)) = (count(n_blocks), count(n_elements)) else {
        return Err(src.err(off, "negative count in the $Elements header"));
    };
    if n_elements == 0 {
        return Err(src.err(off, "the mesh has no elements"));
    }
    let mut layout = ElementLayout {
        at: Vec::with_capacity(n_elements.min(1 << 24)),
        blocks: Vec::new(),
    };
    for b in 0..n_blocks {
        let what = format!("element block {} of {n_blocks}", b + 1);
        let (off, line) = next(&mut lines, &what)?;
        let [dim, _, etype, n] = header_ints::<4>(
            src,
            off,
            line,
            "entityDim entityTag elementType numElementsInBlock",
        )?;
        let etype = etype as i32;
        let Some((edim, nodes)) = element_info(etype) else {
            return Err(src.err(off, unsupported_type(etype)));
        };
        if dim != edim as i64 {
            return Err(src.err(
                off,
                format!("element type {etype} has dimension {edim} but its block says {dim}"),
            ));
        }
        let n = count(n).ok_or_else(|| src.err(off, "negative element count"))?;
        for i in 0..n {
            let (off, line) = next(&mut lines, &format!("element {} of {what}", i + 1))?;
            let found = tokens(line).count();
            if found != nodes + 1 {
                let tag = tokens(line).next().map(show).unwrap_or_default();
                return Err(src.err(
                    off,
                    format!(
                        "element {tag} has {} node tags; element type {etype} needs {nodes}",
                        found.saturating_sub(1)
                    ),
                ));
            }
            layout.at.push(off);
        }
        layout.blocks.push((dim as i32, etype, n));
    }
    if let Some((off, line)) = lines.next() {
        return Err(src.err(
            off,
            format!(
                "unexpected line '{}' after the {n_blocks} element blocks the $Elements header \
                 announces",
                show(line)
            ),
        ));
    }
    if layout.at.len() != n_elements {
        return Err(src.err(
            s.start,
            format!(
                "the $Elements header announces {n_elements} elements but its blocks hold {}",
                layout.at.len()
            ),
        ));
    }
    Ok(layout)
}

/// A cursor over the binary data of a section.
struct Bin<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    little: bool,
    size_t: usize,
}

impl Bin<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let stop = self.pos.checked_add(n).filter(|&e| e <= self.end)?;
        let s = &self.bytes[self.pos..stop];
        self.pos = stop;
        Some(s)
    }

    fn int(&mut self) -> Option<i32> {
        let little = self.little;
        let b: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(if little {
            i32::from_le_bytes(b)
        } else {
            i32::from_be_bytes(b)
        })
    }

    fn size(&mut self) -> Option<u64> {
        let (little, n) = (self.little, self.size_t);
        let b = self.take(n)?;
        Some(if n == 4 {
            let b: [u8; 4] = b.try_into().ok()?;
            u64::from(if little {
                u32::from_le_bytes(b)
            } else {
                u32::from_be_bytes(b)
            })
        } else {
            let b: [u8; 8] = b.try_into().ok()?;
            if little {
                u64::from_le_bytes(b)
            } else {
                u64::from_be_bytes(b)
            }
        })
    }

    /// Skips `items × size` bytes.
    fn skip(&mut self, items: usize, size: usize) -> Option<()> {
        self.take(items.checked_mul(size)?).map(|_| ())
    }

    fn start(&mut self, s: &Section) {
        self.pos = s.start;
        self.end = s.end;
    }

    /// The bytes after the data must be whitespace.
    fn finish(&self) -> bool {
        self.bytes[self.pos..self.end]
            .iter()
            .all(u8::is_ascii_whitespace)
    }
}

fn truncated(src: &Source, s: &Section, at: usize, what: &str) -> Error {
    src.err(
        at,
        format!("truncated binary ${} section: {what} is missing", s.name),
    )
}

fn binary_nodes(src: &Source, s: &Section, r: &mut Bin) -> Result<NodeLayout> {
    r.start(s);
    let t = |r: &Bin, what: &str| truncated(src, s, r.pos, what);
    let mut head = [0u64; 4];
    for h in &mut head {
        *h = r.size().ok_or_else(|| t(r, "the section header"))?;
    }
    let [n_blocks, n_nodes, _, _] = head.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    if n_nodes == 0 {
        return Err(src.err(s.start, "the mesh has no nodes"));
    }
    let cap = n_nodes.min(1 << 24);
    let mut layout = NodeLayout {
        tags: Vec::with_capacity(cap),
        tag_at: Vec::with_capacity(cap),
        coord_at: Vec::with_capacity(cap),
        block_len: Vec::new(),
    };
    for b in 0..n_blocks {
        let what = format!("node block {} of {n_blocks}", b + 1);
        let at = r.pos;
        let (_dim, _tag, parametric) = (
            r.int().ok_or_else(|| t(r, &what))?,
            r.int().ok_or_else(|| t(r, &what))?,
            r.int().ok_or_else(|| t(r, &what))?,
        );
        let n = r.size().ok_or_else(|| t(r, &what))?;
        if parametric != 0 {
            return Err(src.err(
                at,
                "parametric node coordinates are not supported (save with Mesh.SaveParametric = 0)",
            ));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let tags_at = r.pos;
        r.skip(n, r.size_t)
            .ok_or_else(|| t(r, &format!("the node tags of {what}")))?;
        let coords_at = r.pos;
        r.skip(n, 24)
            .ok_or_else(|| t(r, &format!("the coordinates of {what}")))?;
        let mut tr = Bin { pos: tags_at, ..*r };
        for i in 0..n {
            let at = tr.pos;
            let tag = tr.size().ok_or_else(|| t(r, &what))?;
            if tag == 0 {
                return Err(src.err(at, format!("node tag 0 in {what} (tags start at 1)")));
            }
            layout.tags.push(tag);
            layout.tag_at.push(at);
            layout.coord_at.push(coords_at + 24 * i);
        }
        layout.block_len.push(n);
    }
    if !r.finish() {
        return Err(src.err(
            r.pos,
            format!("unexpected data after the {n_blocks} node blocks the $Nodes header announces"),
        ));
    }
    if layout.tags.len() != n_nodes {
        return Err(src.err(
            s.start,
            format!(
                "the $Nodes header announces {n_nodes} nodes but its blocks hold {}",
                layout.tags.len()
            ),
        ));
    }
    Ok(layout)
}

fn binary_elements(src: &Source, s: &Section, r: &mut Bin) -> Result<ElementLayout> {
    r.start(s);
    let t = |r: &Bin, what: &str| truncated(src, s, r.pos, what);
    let mut head = [0u64; 4];
    for h in &mut head {
        *h = r.size().ok_or_else(|| t(r, "the section header"))?;
    }
    let [n_blocks, n_elements, _, _] = head.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    if n_elements == 0 {
        return Err(src.err(s.start, "the mesh has no elements"));
    }
    let mut layout = ElementLayout {
        at: Vec::with_capacity(n_elements.min(1 << 24)),
        blocks: Vec::new(),
    };
    for b in 0..n_blocks {
        let what = format!("element block {} of {n_blocks}", b + 1);
        let at = r.pos;
        let dim = r.int().ok_or_else(|| t(r, &what))?;
        let _tag = r.int().ok_or_else(|| t(r, &what))?;
        let etype = r.int().ok_or_else(|| t(r, &what))?;
        let n = r.size().ok_or_else(|| t(r, &what))?;
        let Some((edim, nodes)) = element_info(etype) else {
            return Err(src.err(at, unsupported_type(etype)));
        };
        if dim as i64 != edim as i64 {
            return Err(src.err(
                at,
                format!("element type {etype} has dimension {edim} but its block says {dim}"),
            ));
        }
        let n = usize::try_from(n).unwrap_or(usize::MAX);
        let stride = (nodes + 1) * r.size_t;
        let first = r.pos;
        r.skip(n, stride)
            .ok_or_else(|| t(r, &format!("the elements of {what}")))?;
        layout.at.extend((0..n).map(|i| first + i * stride));
        layout.blocks.push((dim, etype, n));
    }
    if !r.finish() {
        return Err(src.err(
            r.pos,
            format!(
                "unexpected data after the {n_blocks} element blocks the $Elements header announces"
            ),
        ));
    }
    if layout.at.len() != n_elements {
        return Err(src.err(
            s.start,
            format!(
                "the $Elements header announces {n_elements} elements but its blocks hold {}",
                layout.at.len()
            ),
        ));
    }
    Ok(layout)
}

/// Maps Gmsh node tags to node indices in file order.
enum TagMap {
    Dense { min: u64, index: Vec<u32> },
    Sparse(HashMap<u64, u32>),
}

impl TagMap {
    fn new(src: &Source, nodes: &NodeLayout) -> Result<TagMap> {
        let tags = &nodes.tags;
        if tags.len() >= u32::MAX as usize {
            return Err(src.err(0, "too many nodes for 32-bit indices"));
        }
        let min = tags.iter().copied().min().unwrap_or(1);
        let max = tags.iter().copied().max().unwrap_or(1);
        let duplicate = |i: usize, first: u32| {
            src.err(
                nodes.tag_at[i],
                format!(
                    "duplicate node tag {} (first defined at line {})",
                    tags[i],
                    src.line_of(nodes.tag_at[first as usize])
                ),
            )
        };
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

    fn get(&self, tag: u64) -> Option<u32> {
        match self {
            TagMap::Dense { min, index } => tag
                .checked_sub(*min)
                .and_then(|i| index.get(i as usize))
                .copied()
                .filter(|&i| i != u32::MAX),
            TagMap::Sparse(map) => map.get(&tag).copied(),
        }
    }
}

/// Assembles the [`GmshMesh`] from mshio's data and the structural layout.
fn build(
    src: &Source,
    msh: &mshio::MshFile<u64, i32, f64>,
    nodes: &NodeLayout,
    elems: &ElementLayout,
    names: Vec<PhysicalGroup>,
) -> Result<GmshMesh> {
    let inconsistent = || {
        src.err(
            0,
            "internal error: the MSH parser and femquad's structural pass disagree on this file",
        )
    };
    // coordinates in file order
    let node_blocks = msh.data.nodes.as_ref().ok_or_else(inconsistent)?;
    if node_blocks.node_blocks.len() != nodes.block_len.len() {
        return Err(inconsistent());
    }
    let mut xyz: Vec<[f64; 3]> = Vec::with_capacity(nodes.tags.len());
    for (block, &n) in node_blocks.node_blocks.iter().zip(&nodes.block_len) {
        if block.nodes.len() != n {
            return Err(inconsistent());
        }
        xyz.extend(block.nodes.iter().map(|p| [p.x, p.y, p.z]));
    }
    let tag_map = TagMap::new(src, nodes)?;

    let blocks = &msh
        .data
        .elements
        .as_ref()
        .ok_or_else(inconsistent)?
        .element_blocks;
    if blocks.len() != elems.blocks.len() {
        return Err(inconsistent());
    }
    let dim = elems
        .blocks
        .iter()
        .filter(|b| b.2 > 0)
        .map(|b| b.0 as usize)
        .max()
        .unwrap_or(0);
    if dim < 2 {
        let s = src.section("Elements").map_or(0, |s| s.header);
        return Err(src.err(
            s,
            format!(
                "the file holds no triangles or tetrahedra (highest element dimension {dim}); \
                 if the model has physical groups, Gmsh saves only their elements: add one for \
                 the domain or set Mesh.SaveAll = 1"
            ),
        ));
    }

    // top-dimensional elements: cells as node indices in file order
    let k = dim + 1;
    let mut cell_nodes: Vec<u32> = Vec::new();
    let mut cell_tags = Vec::new();
    let mut cell_entities = Vec::new();
    let mut cell_element: Vec<usize> = Vec::new();
    let mut second_order = false;
    let mut lower: Vec<(usize, usize, i32, u64, Vec<u32>)> = Vec::new();
    let mut e0 = 0;
    for (block, &(bdim, etype, n)) in blocks.iter().zip(&elems.blocks) {
        if block.elements.len() != n || block.element_type as i32 != etype {
            return Err(inconsistent());
        }
        let bdim = bdim as usize;
        for (i, el) in block.elements.iter().enumerate() {
            let at = elems.at[e0 + i];
            let mut idx = [0u32; 4];
            for (slot, &t) in idx.iter_mut().zip(&el.nodes[..bdim + 1]) {
                *slot = tag_map.get(t).ok_or_else(|| {
                    src.err(
                        at,
                        format!(
                            "element {} refers to node {t}, which is not in the $Nodes section",
                            el.element_tag
                        ),
                    )
                })?;
            }
            for (j, &t) in el.nodes.iter().enumerate() {
                if el.nodes[..j].contains(&t) {
                    return Err(src.err(
                        at,
                        format!("element {} lists node {t} twice", el.element_tag),
                    ));
                }
            }
            if bdim == dim {
                cell_nodes.extend_from_slice(&idx[..k]);
                cell_tags.push(el.element_tag);
                cell_entities.push(block.entity_tag);
                cell_element.push(e0 + i);
            } else {
                lower.push((
                    e0 + i,
                    bdim,
                    block.entity_tag,
                    el.element_tag,
                    idx[..bdim + 1].to_vec(),
                ));
            }
        }
        if bdim == dim && (etype == 9 || etype == 11) {
            second_order = true;
        }
        e0 += n;
    }
    if cell_tags.len() > u32::MAX as usize {
        return Err(src.err(0, "too many cells for 32-bit indices"));
    }

    // vertices: the nodes of cells, in increasing tag order
    let mut used = vec![false; nodes.tags.len()];
    for &g in &cell_nodes {
        used[g as usize] = true;
    }
    let mut order: Vec<u32> = (0..nodes.tags.len() as u32)
        .filter(|&g| used[g as usize])
        .collect();
    order.sort_unstable_by_key(|&g| nodes.tags[g as usize]);
    let mut new_index = vec![u32::MAX; nodes.tags.len()];
    for (v, &g) in order.iter().enumerate() {
        new_index[g as usize] = v as u32;
    }
    for &g in &order {
        let p = xyz[g as usize];
        if let Some(d) = p.iter().position(|x| !x.is_finite()) {
            return Err(src.err(
                nodes.coord_at[g as usize],
                format!(
                    "node {} has a non-finite coordinate ({} = {})",
                    nodes.tags[g as usize],
                    ["x", "y", "z"][d],
                    p[d]
                ),
            ));
        }
    }
    let mut vertices = Vec::with_capacity(order.len() * dim);
    if dim == 2 {
        // a 2D mesh must lie in a plane z = const
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for &g in &order {
            let p = xyz[g as usize];
            for d in 0..2 {
                lo[d] = lo[d].min(p[d]);
                hi[d] = hi[d].max(p[d]);
            }
        }
        let extent = (hi[0] - lo[0]).max(hi[1] - lo[1]);
        let g0 = order[0] as usize;
        let z0 = xyz[g0][2];
        for &g in &order {
            let z = xyz[g as usize][2];
            if (z - z0).abs() > 1e-12 * extent.max(z0.abs()) {
                return Err(src.err(
                    nodes.coord_at[g as usize],
                    format!(
                        "node {} has z = {z} but node {} has z = {z0}: a 2D mesh must lie in a \
                         plane z = const",
                        nodes.tags[g as usize], nodes.tags[g0]
                    ),
                ));
            }
            vertices.extend_from_slice(&xyz[g as usize][..2]);
        }
    } else {
        for &g in &order {
            vertices.extend_from_slice(&xyz[g as usize]);
        }
    }
    let cells: Vec<u32> = cell_nodes.iter().map(|&g| new_index[g as usize]).collect();
    let mut mesh = Mesh::from_raw(dim, vertices, cells).map_err(|e| src.err(0, e.to_string()))?;
    let reoriented = mesh.reorient();
    if let Err(e) = mesh.validate() {
        return Err(match e {
            Error::InvalidCell { cell, reason } => src.err(
                elems.at[cell_element[cell]],
                format!("element {}: {reason}", cell_tags[cell]),
            ),
            other => other,
        });
    }

    let mut elements = Vec::with_capacity(lower.len());
    for (e, edim, entity, tag, idx) in lower {
        let mut vertices = Vec::with_capacity(idx.len());
        for g in idx {
            let v = new_index[g as usize];
            if v == u32::MAX {
                return Err(src.err(
                    elems.at[e],
                    format!(
                        "element {tag} (dimension {edim}) uses node {}, which is not a vertex of \
                         any {dim}D element",
                        nodes.tags[g as usize]
                    ),
                ));
            }
            vertices.push(v);
        }
        elements.push(GmshElement {
            tag,
            dim: edim,
            entity,
            vertices,
        });
    }

    // entities and physical groups
    let mut entities = Vec::new();
    if let Some(ents) = &msh.data.entities {
        let mut add = |dim: usize, tag: i32, phys: &[i32]| {
            entities.push(GmshEntity {
                dim,
                tag,
                physical_tags: phys.to_vec(),
            })
        };
        ents.points
            .iter()
            .for_each(|e| add(0, e.tag, &e.physical_tags));
        ents.curves
            .iter()
            .for_each(|e| add(1, e.tag, &e.physical_tags));
        ents.surfaces
            .iter()
            .for_each(|e| add(2, e.tag, &e.physical_tags));
        ents.volumes
            .iter()
            .for_each(|e| add(3, e.tag, &e.physical_tags));
    }
    let mut groups: BTreeMap<(usize, i32), String> = BTreeMap::new();
    for g in names {
        groups.insert((g.dim, g.tag), g.name);
    }
    for e in &entities {
        for &t in &e.physical_tags {
            groups.entry((e.dim, t)).or_default();
        }
    }
    let physical_groups = groups
        .into_iter()
        .map(|((dim, tag), name)| PhysicalGroup { dim, tag, name })
        .collect();

    Ok(GmshMesh {
        mesh,
        reoriented,
        second_order,
        node_tags: order.iter().map(|&g| nodes.tags[g as usize]).collect(),
        cell_tags,
        cell_entities,
        elements,
        entities,
        physical_groups,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `femquad/tests/data`.
    fn data(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name)
    }

    fn read(name: &str) -> GmshMesh {
        read_gmsh(&data(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    fn text(name: &str) -> String {
        std::fs::read_to_string(data(name)).unwrap()
    }

    /// Parses `content` and returns the (line, reason) of the error.
    fn error(content: impl AsRef<[u8]>) -> (usize, String) {
        match parse_gmsh(content.as_ref(), Path::new("bad.msh")) {
            Err(Error::MeshFile { path, line, reason }) => {
                assert_eq!(path, Path::new("bad.msh"));
                (line, reason)
            }
            Err(other) => panic!("expected MeshFile, got {other}"),
            Ok(_) => panic!("expected an error"),
        }
    }

    /// `mesh_square.msh` with 1-based line `n` replaced.
    fn square_with_line(n: usize, new: &str) -> String {
        let mut lines: Vec<String> = text("mesh_square.msh").lines().map(String::from).collect();
        lines[n - 1] = new.to_string();
        lines.join("\n") + "\n"
    }

    fn line_of(content: &str, needle: &str) -> usize {
        content
            .lines()
            .position(|l| l.trim_end() == needle)
            .unwrap_or_else(|| panic!("no line {needle:?}"))
            + 1
    }

    #[test]
    fn square_with_boundary_lines_and_groups() {
        let g = read("mesh_square.msh");
        let m = &g.mesh;
        assert_eq!((m.dim(), m.n_vertices(), m.n_cells()), (2, 12, 14));
        assert_eq!(g.reoriented, 0);
        assert!(!g.second_order);
        assert_eq!(g.node_tags, (1..=12).collect::<Vec<u64>>());
        assert_eq!(g.cell_tags, (10..=23).collect::<Vec<u64>>());
        assert!(g.cell_entities.iter().all(|&e| e == 1));
        assert!((m.total_volume() - 1.0).abs() < 1e-14);
        // node 5 is (0.5, 0) up to Gmsh's rounding
        assert!((m.vertex(4)[0] - 0.5).abs() < 1e-11 && m.vertex(4)[1] == 0.0);
        // element 10 is "6 3 11"
        assert_eq!(m.cell(0), &[5, 2, 10]);
        let names: Vec<_> = g
            .physical_groups
            .iter()
            .map(|p| (p.dim, p.tag, p.name.as_str()))
            .collect();
        assert_eq!(
            names,
            vec![
                (0, 5, "origin"),
                (1, 1, "bottom"),
                (1, 2, "rest"),
                (2, 3, "domain")
            ]
        );
        // 1 point + 8 boundary lines
        assert_eq!(g.elements.len(), 9);
        assert_eq!(g.elements.iter().filter(|e| e.dim == 1).count(), 8);
        assert_eq!(
            g.elements[0],
            GmshElement {
                tag: 1,
                dim: 0,
                entity: 1,
                vertices: vec![0]
            }
        );
        let bottom = g.physical_group("bottom").unwrap();
        assert_eq!(g.group_elements(bottom).len(), 2);
        let bv = g.group_vertices(bottom);
        assert_eq!(bv, vec![0, 1, 4]);
        assert!(bv.iter().all(|&v| m.vertex(v as usize)[1] == 0.0));
        let rest = g.group_vertices(g.physical_group("rest").unwrap());
        assert_eq!(rest.len(), 7);
        assert_eq!(
            g.group_vertices(g.physical_group("origin").unwrap()),
            vec![0]
        );
        let domain = g.physical_group("domain").unwrap();
        assert_eq!(g.group_cells(domain), (0..14).collect::<Vec<u32>>());
        assert_eq!(g.group_vertices(domain).len(), 12);
        assert_eq!(g.physical_tags(1, 2), &[2]);
        // the Gmsh boundary lines are the mesh's boundary facets
        let mut facets: Vec<[u32; 2]> = m
            .boundary_facets()
            .unwrap()
            .iter()
            .map(|f| {
                let mut e = [f.vertices[0], f.vertices[1]];
                e.sort();
                e
            })
            .collect();
        let mut lines: Vec<[u32; 2]> = g
            .elements
            .iter()
            .filter(|e| e.dim == 1)
            .map(|e| {
                let mut v = [e.vertices[0], e.vertices[1]];
                v.sort();
                v
            })
            .collect();
        facets.sort();
        lines.sort();
        assert_eq!(facets, lines);
    }

    /// The cells of a mesh as sorted lists of vertex positions rounded to
    /// 1e-12, sorted: a numbering-independent fingerprint of the geometry.
    fn cell_points(m: &Mesh) -> Vec<Vec<Vec<i64>>> {
        let mut cells: Vec<Vec<Vec<i64>>> = (0..m.n_cells())
            .map(|c| {
                let mut p: Vec<Vec<i64>> = m
                    .cell(c)
                    .iter()
                    .map(|&v| {
                        m.vertex(v as usize)
                            .iter()
                            .map(|x| (x * 1e12).round() as i64)
                            .collect()
                    })
                    .collect();
                p.sort();
                p
            })
            .collect();
        cells.sort();
        cells
    }

    #[test]
    fn binary_equals_ascii() {
        // Gmsh writes ASCII coordinates with 16 digits, so they may differ from
        // the binary doubles in the last bit; everything else is identical
        for (ascii, binary) in [
            ("mesh_square.msh", "mesh_square_binary.msh"),
            ("mesh_cube.msh", "mesh_cube_binary.msh"),
        ] {
            let a = read(ascii);
            let b = read(binary);
            assert_eq!(a.mesh.cells(), b.mesh.cells());
            let (va, vb) = (a.mesh.vertices(), b.mesh.vertices());
            assert_eq!(va.len(), vb.len());
            assert!(va.iter().zip(vb).all(|(x, y)| (x - y).abs() <= 1e-15));
            assert_eq!(
                (&a.node_tags, &a.cell_tags, &a.cell_entities, &a.elements),
                (&b.node_tags, &b.cell_tags, &b.cell_entities, &b.elements)
            );
            assert_eq!(
                (&a.entities, &a.physical_groups, a.reoriented),
                (&b.entities, &b.physical_groups, b.reoriented)
            );
        }
    }

    #[test]
    fn clockwise_triangles_are_reoriented_and_counted() {
        let g = read("mesh_square_clockwise.msh");
        assert_eq!(g.reoriented, 14);
        let m = &g.mesh;
        assert!((0..m.n_cells()).all(|c| m.det_j(c) > 0.0));
        assert!((m.total_volume() - 1.0).abs() < 1e-14);
        // same triangles as the counterclockwise file, vertices 1 and 2 swapped back
        assert_eq!(g.mesh, read("mesh_square.msh").mesh);
    }

    #[test]
    fn tetrahedra_with_boundary_triangles() {
        let g = read("mesh_cube.msh");
        let m = &g.mesh;
        assert_eq!(m.dim(), 3);
        assert_eq!(m.n_vertices(), 14);
        assert_eq!(m.n_cells(), 24);
        assert!((m.total_volume() - 1.0).abs() < 1e-14);
        let tris: Vec<&GmshElement> = g.elements.iter().filter(|e| e.dim == 2).collect();
        assert_eq!(tris.len(), m.boundary_facets().unwrap().len());
        let bottom = g.physical_group("bottom").unwrap();
        assert_eq!(bottom.dim, 2);
        let bv = g.group_vertices(bottom);
        assert_eq!(bv.len(), 5);
        assert!(bv.iter().all(|&v| m.vertex(v as usize)[2] == 0.0));
        let sides = g.group_vertices(g.physical_group("sides and top").unwrap());
        assert_eq!(sides.len(), 13);
        let solid = g.physical_group("solid").unwrap();
        assert_eq!(g.group_cells(solid).len(), 24);
        // the boundary mask agrees with the union of the boundary groups
        let mask = m.boundary_vertices().unwrap();
        let mut union = bv.clone();
        union.extend(sides);
        union.sort();
        union.dedup();
        let from_mask: Vec<u32> = (0..m.n_vertices() as u32)
            .filter(|&v| mask[v as usize])
            .collect();
        assert_eq!(union, from_mask);
    }

    #[test]
    fn second_order_elements_are_read_by_their_vertices() {
        let g = read("mesh_cube_p2_binary.msh");
        assert!(g.second_order);
        // the same straight-sided mesh as the first-order file (Gmsh numbers
        // the nodes differently once it has added the edge nodes)
        let p1 = read("mesh_cube_binary.msh");
        assert_eq!(g.mesh.n_vertices(), p1.mesh.n_vertices());
        assert_eq!(cell_points(&g.mesh), cell_points(&p1.mesh));
        assert!(g.node_tags.windows(2).all(|w| w[0] < w[1]));
        let d = read("mesh_disk_p2.msh");
        assert!(d.second_order);
        assert_eq!(d.mesh.n_cells(), 14);
        assert_eq!(d.mesh.n_vertices(), 12);
        // the vertices of the circle group lie on the unit circle
        let circle = d.group_vertices(d.physical_group("circle").unwrap());
        assert_eq!(circle.len(), 8);
        for v in circle {
            let p = d.mesh.vertex(v as usize);
            assert!((p[0].hypot(p[1]) - 1.0).abs() < 1e-12);
        }
        // the inscribed polygon's area is below π
        let area = d.mesh.total_volume();
        assert!(area < std::f64::consts::PI && area > 2.5, "{area}");
    }

    #[test]
    fn sparse_and_unordered_node_tags() {
        // every node tag times 10 (sparse), in the node section and elements
        let src = text("mesh_square.msh");
        let lines: Vec<&str> = src.lines().collect();
        let times10 = |t: &str| (t.parse::<u64>().unwrap() * 10).to_string();
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let nodes = line_of(&src, "$Nodes"); // 1-based = 0-based index of its header
        out[nodes] = "9 12 10 120".to_string();
        let mut i = nodes + 1;
        while lines[i] != "$EndNodes" {
            let n: usize = lines[i].split_whitespace().nth(3).unwrap().parse().unwrap();
            for l in &mut out[i + 1..i + 1 + n] {
                *l = times10(l.trim());
            }
            i += 1 + 2 * n;
        }
        let elements = line_of(&src, "$Elements");
        let mut i = elements + 1;
        while lines[i] != "$EndElements" {
            let n: usize = lines[i].split_whitespace().nth(3).unwrap().parse().unwrap();
            for l in &mut out[i + 1..i + 1 + n] {
                let t: Vec<&str> = l.split_whitespace().collect();
                let mut v = vec![t[0].to_string()];
                v.extend(t[1..].iter().map(|x| times10(x)));
                *l = v.join(" ");
            }
            i += 1 + n;
        }
        let content = out.join("\n") + "\n";
        let g = parse_gmsh(content.as_bytes(), Path::new("sparse.msh")).unwrap();
        let plain = read("mesh_square.msh");
        assert_eq!(g.mesh, plain.mesh);
        assert_eq!(g.node_tags, (1..=12).map(|t| t * 10).collect::<Vec<u64>>());

        // dense tags out of order: swap the tag lines of nodes 9 and 10, so
        // that tag 10 comes first: vertex 8 (tag 9) gets the second coordinates
        let l9 = line_of(&src, "9");
        let content = square_with_line(l9, "10");
        let content = {
            let mut lines: Vec<&str> = content.lines().collect();
            lines[l9] = "9";
            lines.join("\n") + "\n"
        };
        let g = parse_gmsh(content.as_bytes(), Path::new("swapped.msh")).unwrap();
        let (a, b) = (plain.mesh.vertex(8), plain.mesh.vertex(9));
        assert_eq!(g.mesh.vertex(8), b);
        assert_eq!(g.mesh.vertex(9), a);
    }

    #[test]
    fn planar_2d_mesh_at_z_const_and_non_planar_is_rejected() {
        let src = text("mesh_square.msh");
        // the whole square at z = 2: every 3-token line of $Nodes is a coordinate line
        let (start, end) = (line_of(&src, "$Nodes"), line_of(&src, "$EndNodes"));
        let lifted: String = src
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let t: Vec<&str> = l.split_whitespace().collect();
                if i + 1 > start && i + 1 < end && t.len() == 3 {
                    format!("{} {} 2\n", t[0], t[1])
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let g = parse_gmsh(lifted.as_bytes(), Path::new("z2.msh")).unwrap();
        assert_eq!(g.mesh, read("mesh_square.msh").mesh);
        // one node off the plane
        let n = line_of(&src, "0.3749999999995795 0.3750000000004207 0");
        let (line, reason) = error(square_with_line(
            n,
            "0.3749999999995795 0.3750000000004207 0.1",
        ));
        assert_eq!(line, n);
        assert_eq!(
            reason,
            "node 10 has z = 0.1 but node 1 has z = 0: a 2D mesh must lie in a plane z = const"
        );
    }

    #[test]
    fn wrong_version_is_rejected() {
        let (line, reason) = error(square_with_line(2, "2.2 0 8"));
        assert_eq!(line, 2);
        assert_eq!(
            reason,
            "MSH version 2.2 is not supported; re-export as 4.1 (gmsh -format msh41, or \
             Mesh.MshFileVersion = 4.1)"
        );
        let (line, reason) = error(square_with_line(2, "4.1 2 8"));
        assert_eq!(line, 2);
        assert_eq!(
            reason,
            "file type '2' is invalid: 0 for ASCII, 1 for binary"
        );
        let (line, reason) = error(square_with_line(2, "4.1 0"));
        assert_eq!(line, 2);
        assert!(
            reason.starts_with("invalid $MeshFormat line '4.1 0'"),
            "{reason}"
        );
    }

    #[test]
    fn not_an_msh_file() {
        let (line, reason) = error("hello\nworld\n");
        assert_eq!(line, 1);
        assert_eq!(
            reason,
            "not a Gmsh MSH file: the first line must be $MeshFormat, found 'hello'"
        );
        assert_eq!(error("").1, "empty file: not a Gmsh MSH file");
        match read_gmsh(Path::new("/nonexistent/mesh.msh")) {
            Err(Error::Io { path, .. }) => assert_eq!(path, Path::new("/nonexistent/mesh.msh")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn truncated_files() {
        let src = text("mesh_square.msh");
        let elements = line_of(&src, "$Elements");
        // cut in the middle of the elements
        let cut: String = src
            .lines()
            .take(elements + 10)
            .collect::<Vec<_>>()
            .join("\n");
        let (line, reason) = error(&cut);
        assert_eq!(line, elements);
        assert_eq!(
            reason,
            "truncated file: section $Elements has no $EndElements"
        );
        // a binary file cut in its $Nodes data
        let bin = std::fs::read(data("mesh_square_binary.msh")).unwrap();
        let nodes = find(&bin, b"$Nodes\n", 0).unwrap();
        let (line, reason) = error(&bin[..nodes + 100]);
        assert_eq!(line, 0);
        assert!(
            reason.starts_with("truncated file: section $Nodes has no $EndNodes"),
            "{reason}"
        );
        // a binary $Elements section whose data is short, though $EndElements is there
        let el = find(&bin, b"$Elements\n", 0).unwrap() + 10;
        let end = find(&bin, b"\n$EndElements", 0).unwrap();
        let mut short = bin[..el + 200].to_vec();
        short.extend_from_slice(&bin[end..]);
        let (line, reason) = error(&short);
        assert_eq!(line, 0);
        assert!(
            reason.starts_with("truncated binary $Elements section: the elements of element block"),
            "{reason}"
        );
        assert!(
            reason.contains("(binary file: section $Elements, byte offset"),
            "{reason}"
        );
    }

    #[test]
    fn unknown_and_unsupported_element_types() {
        let src = text("mesh_square.msh");
        let block = line_of(&src, "2 1 2 14");
        let (line, reason) = error(square_with_line(block, "2 1 200 14"));
        assert_eq!(line, block);
        assert!(reason.starts_with("unknown element type 200;"), "{reason}");
        let (line, reason) = error(square_with_line(block, "2 1 99 14"));
        assert_eq!(line, block);
        assert!(
            reason.starts_with("element type 99 is not supported"),
            "{reason}"
        );
        let (line, reason) = error(square_with_line(block, "2 1 3 14"));
        assert_eq!(line, block);
        assert!(
            reason.starts_with("element type 3 (4-node quadrangle) is not supported"),
            "{reason}"
        );
        let (line, reason) = error(square_with_line(block, "1 1 2 14"));
        assert_eq!(line, block);
        assert_eq!(
            reason,
            "element type 2 has dimension 2 but its block says 1"
        );
    }

    #[test]
    fn element_referring_to_a_missing_node() {
        let src = text("mesh_square.msh");
        let n = line_of(&src, "15 2 6 12");
        let (line, reason) = error(square_with_line(n, "15 2 6 99"));
        assert_eq!(line, n);
        assert_eq!(
            reason,
            "element 15 refers to node 99, which is not in the $Nodes section"
        );
        let (line, reason) = error(square_with_line(n, "15 2 6 6"));
        assert_eq!(line, n);
        assert_eq!(reason, "element 15 lists node 6 twice");
        // a boundary line whose node is in $Nodes but in no triangle
        let nodes = line_of(&src, "$Nodes");
        let mut c = square_with_line(nodes + 1, "10 13 1 13");
        c = c.replace("$EndNodes", "2 1 0 1\n13\n0.5 0.5 0\n$EndNodes");
        let l = line_of(&c, "2 1 5");
        let c = {
            let mut lines: Vec<&str> = c.lines().collect();
            lines[l - 1] = "2 1 13";
            lines.join("\n") + "\n"
        };
        let (line, reason) = error(&c);
        assert_eq!(line, l);
        assert_eq!(
            reason,
            "element 2 (dimension 1) uses node 13, which is not a vertex of any 2D element"
        );
    }

    #[test]
    fn malformed_records_name_their_line() {
        let src = text("mesh_square.msh");
        // an element line with a node tag missing
        let n = line_of(&src, "18 6 11 12");
        let (line, reason) = error(square_with_line(n, "18 6 11"));
        assert_eq!(line, n);
        assert_eq!(reason, "element 18 has 2 node tags; element type 2 needs 3");
        // a coordinate line with two numbers
        let c = line_of(&src, "0.2937500000004588 0.7062500000004164 0");
        let (line, reason) = error(square_with_line(c, "0.2937500000004588 0.7062500000004164"));
        assert_eq!(line, c);
        assert_eq!(
            reason,
            "expected 3 coordinates 'x y z' for node 9 of node block 9 of 9, found \
             '0.2937500000004588 0.7062500000004164'"
        );
        // a non-numeric coordinate: found by mshio, located by its position
        let (line, reason) = error(square_with_line(c, "0.29375 abc 0"));
        assert_eq!(line, c);
        assert!(reason.starts_with("cannot parse the file:"), "{reason}");
        assert!(reason.contains("node"), "{reason}");
        // a node tag 0 / not a number
        let t = line_of(&src, "9");
        let (line, reason) = error(square_with_line(t, "0"));
        assert_eq!(line, t);
        assert_eq!(
            reason,
            "expected one node tag (a positive integer) in node block 9 of 9, found '0'"
        );
        // a duplicate node tag
        let (line, reason) = error(square_with_line(t, "3"));
        assert_eq!(line, t);
        let first = line_of(&src, "3");
        assert_eq!(
            reason,
            format!("duplicate node tag 3 (first defined at line {first})")
        );
        // the header announces more elements than there are
        let e = line_of(&src, "$Elements");
        let (line, reason) = error(square_with_line(e + 1, "6 24 1 24"));
        assert_eq!(line, e + 1);
        assert_eq!(
            reason,
            "the $Elements header announces 24 elements but its blocks hold 23"
        );
        // an extra element line
        let end = line_of(&src, "$EndElements");
        let (line, reason) = error(square_with_line(end, "24 7 9 11\n$EndElements"));
        assert_eq!(line, end);
        assert!(
            reason.starts_with("unexpected line '24 7 9 11'"),
            "{reason}"
        );
        // garbage between sections
        let (line, reason) = error(src.replace("$EndEntities\n", "$EndEntities\nxyz\n"));
        assert_eq!(line, line_of(&src, "$EndEntities") + 1);
        assert_eq!(
            reason,
            "expected a section header such as $Nodes, found 'xyz'"
        );
        // no elements
        let (_, reason) = error(src.replace(
            &src[src.find("$Elements").unwrap()..],
            "$Elements\n0 0 0 0\n$EndElements\n",
        ));
        assert_eq!(reason, "the mesh has no elements");
        // physical names
        let p = line_of(&src, "1 1 \"bottom\"");
        let (line, reason) = error(square_with_line(p, "1 bottom"));
        assert_eq!(line, p);
        assert_eq!(
            reason,
            "$PhysicalNames: expected 'dimension tag \"name\"', found '1 bottom'"
        );
    }

    #[test]
    fn only_lines_is_an_error_with_a_hint() {
        let src = text("mesh_square.msh");
        // drop the triangle block: 5 blocks, 9 elements
        let e = line_of(&src, "$Elements");
        let tri = line_of(&src, "2 1 2 14");
        let mut lines: Vec<&str> = src.lines().collect();
        lines.drain(tri - 1..tri + 14);
        lines[e] = "5 9 1 9";
        let (line, reason) = error(lines.join("\n") + "\n");
        assert_eq!(line, e);
        assert!(
            reason.starts_with(
                "the file holds no triangles or tetrahedra (highest element dimension 1)"
            ),
            "{reason}"
        );
    }

    #[test]
    fn empty_triangle_block_does_not_make_a_2d_mesh() {
        let src = text("mesh_square.msh");
        let e = line_of(&src, "$Elements");
        let tri = line_of(&src, "2 1 2 14");
        let mut lines: Vec<&str> = src.lines().collect();
        lines.drain(tri..tri + 14);
        lines[tri - 1] = "2 1 2 0";
        lines[e] = "6 9 1 9";
        let (line, reason) = error(lines.join("\n") + "\n");
        assert_eq!(line, e);
        assert!(reason.contains("(highest element dimension 1)"), "{reason}");
    }

    #[test]
    fn degenerate_cell_names_the_element() {
        // move node 10 (inside the square) onto the line through nodes 1 and 5 (y = 0):
        // elements 12 = (1, 5, 10) becomes flat
        let src = text("mesh_square.msh");
        let n = line_of(&src, "0.3749999999995795 0.3750000000004207 0");
        let c = square_with_line(n, "0.25 0 0");
        let (line, reason) = error(&c);
        let el = line_of(&src, "12 1 5 10");
        assert_eq!(line, el);
        assert!(
            reason.starts_with("element 12: degenerate (det J = 0"),
            "{reason}"
        );
    }

    #[test]
    fn error_display_has_path_line_reason() {
        let e = parse_gmsh(
            square_with_line(2, "2.2 0 8").as_bytes(),
            Path::new("m.msh"),
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("m.msh:2: MSH version 2.2 is not supported"),
            "{e}"
        );
    }
}
