//! VTK XML `UnstructuredGrid` files (`.vtu`) of P1 and P2 fields.
//!
//! # Geometry
//! A [`Vtu`] is built from a [`FunctionSpace`] (and its mesh); its points
//! are the space's nodes ([`FunctionSpace::node_coordinates`], padded to
//! three coordinates with `z = 0` in 2D) and its cells the space's cells:
//!
//! | element | VTK cell type | nodes per cell |
//! |---|---|---|
//! | P1 triangle | `VTK_TRIANGLE` (5) | 3 vertices |
//! | P1 tetrahedron | `VTK_TETRA` (10) | 4 vertices |
//! | P2 triangle | `VTK_QUADRATIC_TRIANGLE` (22) | 3 vertices, edges (0,1), (1,2), (2,0) |
//! | P2 tetrahedron | `VTK_QUADRATIC_TETRA` (24) | 4 vertices, edges (0,1), (1,2), (2,0), (0,3), (1,3), (2,3) |
//!
//! femquad's local P2 node order ([`crate::layout::simplex_edges`]) is VTK's,
//! so a cell's connectivity is its node list [`FunctionSpace::cell_nodes`]
//! unchanged, and a P2 field is shown with its quadratic variation (ParaView
//! subdivides quadratic cells; raise "Nonlinear Subdivision Level" for finer
//! pictures).
//!
//! # Data
//! * **Point data**: one value per node and component, in the layout of
//!   femquad's global vectors (`[node][comp]`, interleaved): a field of the
//!   space can be written as it is. Fields with two components are padded
//!   to three (a zero `z` component) so that ParaView treats them as vectors
//!   (arrows, "Warp By Vector"); other component counts are written as
//!   given.
//! * **Cell data**: one value (or `n_comp` values) per cell.
//!
//! # Encoding ([`VtuFormat`])
//! * [`VtuFormat::Ascii`]: numbers as text (`f64` in shortest round-trip
//!   exponent form, e.g. `1.25e-3`); easy to read and diff, larger and slower.
//! * [`VtuFormat::Base64`] (VTK's inline `format="binary"`): each array is
//!   the base64 encoding of one byte stream: an 8-byte little-endian
//!   `UInt64` header holding the data's byte count, then the data in
//!   little-endian order (`byte_order="LittleEndian"`,
//!   `header_type="UInt64"`, no compression) — header and data encoded
//!   together, as VTK's own writer does for uncompressed inline data. Exact,
//!   about 1.4× the raw size.
//!
//! Coordinates and fields are `Float64`, connectivity and offsets `Int64`,
//! cell types `UInt8`. Non-finite values are refused (an error, not a file
//! that a reader may reject).

use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::real::check_finite;
use crate::space::FunctionSpace;
use crate::{Error, Result};

/// VTK cell type of a linear triangle.
pub const VTK_TRIANGLE: u8 = 5;
/// VTK cell type of a linear tetrahedron.
pub const VTK_TETRA: u8 = 10;
/// VTK cell type of a quadratic (6-node) triangle.
pub const VTK_QUADRATIC_TRIANGLE: u8 = 22;
/// VTK cell type of a quadratic (10-node) tetrahedron.
pub const VTK_QUADRATIC_TETRA: u8 = 24;

/// How arrays are encoded in the file (see the [module docs](self)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VtuFormat {
    /// Numbers as text.
    Ascii,
    /// Inline base64 of an 8-byte header and the little-endian bytes
    /// (VTK's `format="binary"`).
    #[default]
    Base64,
}

/// One named data array.
#[derive(Clone, Debug)]
struct DataArray {
    name: String,
    /// Components written per tuple (after padding).
    n_comp: usize,
    values: Vec<f64>,
}

/// An unstructured grid with point and cell data, ready to be written as
/// a `.vtu` file (see the [module docs](self)).
///
/// ```
/// use femquad::prelude::*;
///
/// let mesh = unit_square(2, &MeshOptions::default())?;
/// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 2)?, 1)?;
/// let u = space.interpolate(|x, out| out[0] = x[0] * x[1]);
/// let mut vtu = Vtu::new(&space)?;
/// vtu.add_point_field("u", 1, &u)?;
/// assert_eq!((vtu.n_points(), vtu.n_cells()), (25, 8)); // P2 nodes, quadratic triangles
/// let path = std::env::temp_dir().join(format!("femquad-doc-{}.vtu", std::process::id()));
/// vtu.write(&path, VtuFormat::Base64)?; // open it in ParaView
/// let text = std::fs::read_to_string(&path)?;
/// assert!(text.contains(r#"<Piece NumberOfPoints="25" NumberOfCells="8">"#));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Vtu {
    /// `n_points × 3` coordinates.
    points: Vec<f64>,
    /// The cells' nodes are the space's (shared, not copied).
    space: FunctionSpace,
    cell_type: u8,
    point_data: Vec<DataArray>,
    cell_data: Vec<DataArray>,
}

impl Vtu {
    /// The grid of `space` on its mesh: its nodes as points and its cells
    /// as linear (P1) or quadratic (P2) VTK cells.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `space` for an element VTK has no
    /// cell for.
    pub fn new(space: &FunctionSpace) -> Result<Vtu> {
        let dim = space.dim();
        let coords = space.node_coordinates();
        let mut points = Vec::with_capacity(space.n_nodes() * 3);
        for p in coords.chunks(dim) {
            points.extend_from_slice(p);
            points.extend(std::iter::repeat_n(0.0, 3 - dim));
        }
        let cell_type = match (dim, space.element().order()) {
            (2, 1) => VTK_TRIANGLE,
            (3, 1) => VTK_TETRA,
            (2, 2) => VTK_QUADRATIC_TRIANGLE,
            (3, 2) => VTK_QUADRATIC_TETRA,
            (d, o) => {
                return Err(Error::arg("space", format!("no VTK cell for P{o} in {d}D")));
            }
        };
        Ok(Vtu {
            points,
            space: space.clone(),
            cell_type,
            point_data: Vec::new(),
            cell_data: Vec::new(),
        })
    }

    /// Number of points (the space's nodes).
    pub fn n_points(&self) -> usize {
        self.points.len() / 3
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.space.n_cells()
    }

    /// The VTK cell type of every cell (5, 10, 22 or 24).
    pub fn cell_type(&self) -> u8 {
        self.cell_type
    }

    /// Adds a point field `name` with `n_comp` components per point:
    /// `values[point·n_comp + comp]` (`n_points·n_comp` entries, the layout
    /// of a global vector of a space with `n_comp` components). Two
    /// components are padded to three.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for an empty or repeated name, `n_comp = 0`
    /// or a wrong length; [`Error::NonFinite`] for NaN or ±∞.
    pub fn add_point_field(
        &mut self,
        name: &str,
        n_comp: usize,
        values: &[f64],
    ) -> Result<&mut Self> {
        let array = make_array(
            name,
            n_comp,
            values,
            self.n_points(),
            "points",
            &self.point_data,
        )?;
        self.point_data.push(array);
        Ok(self)
    }

    /// Adds a cell field `name` with `n_comp` components per cell:
    /// `values[cell·n_comp + comp]`. Two components are padded to three.
    ///
    /// # Errors
    /// As [`Vtu::add_point_field`].
    pub fn add_cell_field(
        &mut self,
        name: &str,
        n_comp: usize,
        values: &[f64],
    ) -> Result<&mut Self> {
        let array = make_array(
            name,
            n_comp,
            values,
            self.n_cells(),
            "cells",
            &self.cell_data,
        )?;
        self.cell_data.push(array);
        Ok(self)
    }

    /// Writes the grid to `path` (conventionally ending in `.vtu`).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file if it cannot be created or written.
    pub fn write(&self, path: impl AsRef<Path>, format: VtuFormat) -> Result<()> {
        let path = path.as_ref();
        let io = |source| Error::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut w = BufWriter::new(File::create(path).map_err(io)?);
        self.write_to(&mut w, format).map_err(io)?;
        w.flush().map_err(io)
    }

    /// Writes the grid as VTU XML to `w`.
    ///
    /// # Errors
    /// The writer's I/O errors.
    pub fn write_to(&self, w: &mut impl Write, format: VtuFormat) -> std::io::Result<()> {
        let enc = match format {
            VtuFormat::Ascii => "ascii",
            VtuFormat::Base64 => "binary",
        };
        writeln!(w, r#"<?xml version="1.0"?>"#)?;
        writeln!(
            w,
            r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
        )?;
        writeln!(w, "  <UnstructuredGrid>")?;
        writeln!(
            w,
            r#"    <Piece NumberOfPoints="{}" NumberOfCells="{}">"#,
            self.n_points(),
            self.n_cells()
        )?;
        for (tag, arrays) in [
            ("PointData", &self.point_data),
            ("CellData", &self.cell_data),
        ] {
            if arrays.is_empty() {
                continue;
            }
            write!(w, "      <{tag}")?;
            if let Some(s) = arrays.iter().find(|a| a.n_comp == 1) {
                write!(w, r#" Scalars="{}""#, escape(&s.name))?;
            }
            if let Some(v) = arrays.iter().find(|a| a.n_comp == 3) {
                write!(w, r#" Vectors="{}""#, escape(&v.name))?;
            }
            writeln!(w, ">")?;
            for a in arrays {
                write!(
                    w,
                    r#"        <DataArray type="Float64" Name="{}" NumberOfComponents="{}" format="{enc}">"#,
                    escape(&a.name),
                    a.n_comp
                )?;
                write_f64(w, &a.values, a.n_comp, format)?;
                writeln!(w, "</DataArray>")?;
            }
            writeln!(w, "      </{tag}>")?;
        }
        writeln!(w, "      <Points>")?;
        write!(
            w,
            r#"        <DataArray type="Float64" Name="Points" NumberOfComponents="3" format="{enc}">"#
        )?;
        write_f64(w, &self.points, 3, format)?;
        writeln!(w, "</DataArray>")?;
        writeln!(w, "      </Points>")?;
        writeln!(w, "      <Cells>")?;
        let k = self.space.n_basis();
        let connectivity: Vec<i64> = (self.space.cell_nodes_all().iter())
            .map(|&n| i64::from(n))
            .collect();
        let offsets: Vec<i64> = (1..=self.n_cells()).map(|c| (c * k) as i64).collect();
        let types = vec![self.cell_type; self.n_cells()];
        write!(
            w,
            r#"        <DataArray type="Int64" Name="connectivity" format="{enc}">"#
        )?;
        write_i64(w, &connectivity, k, format)?;
        writeln!(w, "</DataArray>")?;
        write!(
            w,
            r#"        <DataArray type="Int64" Name="offsets" format="{enc}">"#
        )?;
        write_i64(w, &offsets, 16, format)?;
        writeln!(w, "</DataArray>")?;
        write!(
            w,
            r#"        <DataArray type="UInt8" Name="types" format="{enc}">"#
        )?;
        match format {
            VtuFormat::Ascii => write_text(w, &types, 32, |s, v| write!(s, "{v}"))?,
            VtuFormat::Base64 => write_base64(w, &types)?,
        }
        writeln!(w, "</DataArray>")?;
        writeln!(w, "      </Cells>")?;
        writeln!(w, "    </Piece>")?;
        writeln!(w, "  </UnstructuredGrid>")?;
        writeln!(w, "</VTKFile>")
    }
}

/// Checks a field and pads two components to three.
fn make_array(
    name: &str,
    n_comp: usize,
    values: &[f64],
    n_items: usize,
    items: &str,
    existing: &[DataArray],
) -> Result<DataArray> {
    if name.trim().is_empty() {
        return Err(Error::arg("name", "a field needs a non-empty name"));
    }
    if existing.iter().any(|a| a.name == name) {
        return Err(Error::arg(
            "name",
            format!("a field named `{name}` was already added"),
        ));
    }
    if n_comp == 0 {
        return Err(Error::arg("n_comp", "a field needs at least one component"));
    }
    if values.len() != n_items * n_comp {
        return Err(Error::arg(
            "values",
            format!(
                "field `{name}`: expected {n_items} {items} × {n_comp} component(s) = {} values, got {}",
                n_items * n_comp,
                values.len()
            ),
        ));
    }
    check_finite("values", values)?;
    let values = if n_comp == 2 {
        values.chunks(2).flat_map(|v| [v[0], v[1], 0.0]).collect()
    } else {
        values.to_vec()
    };
    Ok(DataArray {
        name: name.to_string(),
        n_comp: if n_comp == 2 { 3 } else { n_comp },
        values,
    })
}

/// Escapes the five XML special characters for an attribute value.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

fn write_f64(
    w: &mut impl Write,
    values: &[f64],
    per_line: usize,
    format: VtuFormat,
) -> std::io::Result<()> {
    match format {
        VtuFormat::Ascii => write_text(w, values, per_line, |s, v| write!(s, "{v:e}")),
        VtuFormat::Base64 => {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            write_base64(w, &bytes)
        }
    }
}

fn write_i64(
    w: &mut impl Write,
    values: &[i64],
    per_line: usize,
    format: VtuFormat,
) -> std::io::Result<()> {
    match format {
        VtuFormat::Ascii => write_text(w, values, per_line, |s, v| write!(s, "{v}")),
        VtuFormat::Base64 => {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
            write_base64(w, &bytes)
        }
    }
}

/// Values as text, `per_line` to a line, on lines of their own.
fn write_text<T: Copy>(
    w: &mut impl Write,
    values: &[T],
    per_line: usize,
    fmt: impl Fn(&mut String, T) -> std::fmt::Result,
) -> std::io::Result<()> {
    let mut line = String::new();
    writeln!(w)?;
    for chunk in values.chunks(per_line.max(1)) {
        line.clear();
        line.push_str("          ");
        for (i, &v) in chunk.iter().enumerate() {
            if i > 0 {
                line.push(' ');
            }
            fmt(&mut line, v).map_err(std::io::Error::other)?;
        }
        writeln!(w, "{line}")?;
    }
    write!(w, "        ")
}

/// VTK's inline binary: base64 of the `UInt64` byte count followed by `data`.
fn write_base64(w: &mut impl Write, data: &[u8]) -> std::io::Result<()> {
    let mut stream = Vec::with_capacity(8 + data.len());
    stream.extend_from_slice(&(data.len() as u64).to_le_bytes());
    stream.extend_from_slice(data);
    w.write_all(base64(&stream).as_bytes())
}

/// Standard base64 (RFC 4648 alphabet, `=` padding, no line breaks).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_box};

    #[test]
    fn base64_known_vectors() {
        // RFC 4648 § 10
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(raw.as_bytes()), enc);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    fn grid(dim: usize, order: usize) -> FunctionSpace {
        let mesh = unit_box(dim, 2, &MeshOptions::default()).unwrap();
        FunctionSpace::new(mesh.into(), Element::lagrange(dim, order).unwrap(), 1).unwrap()
    }

    #[test]
    fn ascii_file_has_the_counts_types_and_values() {
        let space = grid(2, 2);
        let mut vtu = Vtu::new(&space).unwrap();
        assert_eq!(
            (vtu.n_points(), vtu.n_cells(), vtu.cell_type()),
            (25, 8, 22)
        );
        let u: Vec<f64> = (0..25).map(|i| i as f64 * 0.5).collect();
        let v: Vec<f64> = (0..50).map(|i| -(i as f64)).collect();
        vtu.add_point_field("u", 1, &u).unwrap();
        vtu.add_point_field("a<b", 2, &v).unwrap();
        vtu.add_cell_field("id", 1, &[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
            .unwrap();
        let mut out = Vec::new();
        vtu.write_to(&mut out, VtuFormat::Ascii).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(r#"<Piece NumberOfPoints="25" NumberOfCells="8">"#),
            "{text}"
        );
        assert!(
            text.contains(r#"Name="a&lt;b" NumberOfComponents="3""#),
            "{text}"
        );
        assert!(
            text.contains(r#"<PointData Scalars="u" Vectors="a&lt;b">"#),
            "{text}"
        );
        // second point of the vector field: (−2, −3, 0)
        assert!(text.contains("-2e0 -3e0 0e0"), "{text}");
        assert!(text.contains("1.2e1"), "{text}"); // u at point 24
        // types: eight 22s; offsets end at 48
        assert!(text.contains("22 22 22 22 22 22 22 22"), "{text}");
        assert!(text.contains(" 48\n"), "{text}");
        // connectivity of cell 0 = its six nodes
        let first: Vec<String> = space.cell_nodes(0).iter().map(|n| n.to_string()).collect();
        assert!(text.contains(&first.join(" ")), "{text}");
    }

    #[test]
    fn base64_arrays_decode_to_header_and_data() {
        let space = grid(3, 1);
        let vtu = Vtu::new(&space).unwrap();
        assert_eq!(
            (vtu.n_points(), vtu.n_cells(), vtu.cell_type()),
            (27, 48, VTK_TETRA)
        );
        let mut out = Vec::new();
        vtu.write_to(&mut out, VtuFormat::Base64).unwrap();
        let text = String::from_utf8(out).unwrap();
        // the types array: header 48 (u64 LE) + 48 bytes of 10
        let mut stream = 48u64.to_le_bytes().to_vec();
        stream.extend(std::iter::repeat_n(10u8, 48));
        assert!(text.contains(&format!(
            r#"Name="types" format="binary">{}</DataArray>"#,
            base64(&stream)
        )));
    }

    #[test]
    fn bad_fields_are_errors() {
        let space = grid(2, 1);
        let mut vtu = Vtu::new(&space).unwrap();
        assert!(vtu.add_point_field("u", 1, &[0.0; 8]).is_err());
        assert!(vtu.add_point_field("", 1, &[0.0; 9]).is_err());
        assert!(vtu.add_point_field("u", 0, &[]).is_err());
        let mut nan = [0.0; 9];
        nan[4] = f64::NAN;
        assert!(matches!(
            vtu.add_point_field("u", 1, &nan).unwrap_err(),
            Error::NonFinite { index: 4, .. }
        ));
        vtu.add_point_field("u", 1, &[0.0; 9]).unwrap();
        assert!(vtu.add_point_field("u", 1, &[0.0; 9]).is_err());
        assert!(vtu.add_cell_field("c", 1, &[0.0; 9]).is_err());
        let e = vtu
            .write("/nonexistent-dir/x.vtu", VtuFormat::Ascii)
            .unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent-dir/x.vtu: "), "{e}");
    }
}
