//! Tests of the Gmsh reader, on the files of `femquad/tests/data` and on
//! variants of them: what is read (`reading`), the error for each kind of
//! malformed file (`errors`), no panic on any input (`robustness`), and
//! files written by a small MSH writer (`writer`: byte orders, `size_t`
//! sizes, a million-cell file for timing).

use std::path::{Path, PathBuf};

use super::source::find;
use super::{
    GmshElement, GmshEntity, GmshMesh, GmshNumbering, GmshOptions, PhysicalGroup, parse_gmsh,
    parse_gmsh_with, read_gmsh, read_gmsh_with,
};
use crate::Error;
use crate::mesh::Mesh;

mod errors;
mod numbering;
mod reading;
mod robustness;
mod writer;

/// A file of `femquad/tests/data`.
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A file of `femquad/tests/data` in the file's numbering (the reader's
/// tests check the file's order; `numbering.rs` the default locality
/// numbering).
fn read(name: &str) -> GmshMesh {
    read_gmsh_with(data(name), &file_order()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The options that keep the file's numbering.
fn file_order() -> GmshOptions {
    GmshOptions {
        numbering: GmshNumbering::File,
        ..GmshOptions::default()
    }
}

/// A file of `femquad/tests/data` read with reorientation (for the one
/// written clockwise).
fn read_reoriented(name: &str) -> GmshMesh {
    read_gmsh_with(
        data(name),
        &GmshOptions {
            reorient: true,
            ..GmshOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
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

/// 1-based line of the first line of `content` that is `needle`.
fn line_of(content: &str, needle: &str) -> usize {
    content
        .lines()
        .position(|l| l.trim_end() == needle)
        .unwrap_or_else(|| panic!("no line {needle:?}"))
        + 1
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
