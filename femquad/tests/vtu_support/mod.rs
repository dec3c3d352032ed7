//! Shared by the VTU round-trip tests (`femquad/tests/vtu_roundtrip.rs`,
//! and the examples' `tests/example_vtu.rs`, which includes this file by
//! path): the independent reader (the `vtkio` crate) and the checks of a
//! piece against the mesh and space it was written from.

use std::path::{Path, PathBuf};

use femquad::mesh::Mesh;
use femquad::space::FunctionSpace;
use vtkio::model::{
    Attribute, CellType, DataSet, IOBuffer, Piece, UnstructuredGridPiece, VertexNumbers,
};

/// A fresh path in Cargo's per-test temporary directory.
pub fn temp_file(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vtu_roundtrip");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Reads a `.vtu` file with vtkio and returns its one inline piece.
pub fn read_piece(path: &Path) -> UnstructuredGridPiece {
    let vtk = vtkio::Vtk::import(path)
        .unwrap_or_else(|e| panic!("vtkio cannot read {}: {e:?}", path.display()));
    match vtk.data {
        DataSet::UnstructuredGrid { mut pieces, .. } => {
            assert_eq!(pieces.len(), 1);
            match pieces.remove(0) {
                Piece::Inline(p) => *p,
                other => panic!("not an inline piece: {other:?}"),
            }
        }
        other => panic!("not an unstructured grid: {other:?}"),
    }
}

/// The values of a `Float64` data array.
pub fn f64s(buffer: &IOBuffer) -> Vec<f64> {
    match buffer {
        IOBuffer::F64(v) => v.clone(),
        other => panic!("expected Float64 data, got {other:?}"),
    }
}

/// The data array `name` among `attributes`: (components, values).
pub fn array(attributes: &[Attribute], name: &str) -> (usize, Vec<f64>) {
    for a in attributes {
        if let Attribute::DataArray(d) = a
            && d.name == name
        {
            return (d.num_comp(), f64s(&d.data));
        }
    }
    panic!(
        "no data array `{name}` among {:?}",
        attributes.iter().map(|a| a.name()).collect::<Vec<_>>()
    );
}

pub fn check_geometry(piece: &UnstructuredGridPiece, mesh: &Mesh, space: &FunctionSpace) {
    let dim = mesh.dim();
    let n_b = space.n_basis();
    assert_eq!(piece.num_points(), space.n_nodes());
    assert_eq!(piece.cells.num_cells(), mesh.n_cells());
    let expected_type = match (dim, space.element().order()) {
        (2, 1) => CellType::Triangle,
        (3, 1) => CellType::Tetra,
        (2, 2) => CellType::QuadraticTriangle,
        _ => CellType::QuadraticTetra,
    };
    assert!(
        piece.cells.types.iter().all(|t| *t == expected_type),
        "cell types {:?}",
        &piece.cells.types[..3]
    );
    match &piece.cells.cell_verts {
        VertexNumbers::XML {
            connectivity,
            offsets,
        } => {
            let expected: Vec<u64> = space
                .cell_nodes_all()
                .iter()
                .map(|&n| u64::from(n))
                .collect();
            assert_eq!(connectivity, &expected);
            assert_eq!(offsets.len(), mesh.n_cells());
            assert!(
                offsets
                    .iter()
                    .enumerate()
                    .all(|(c, &o)| o as usize == (c + 1) * n_b)
            );
        }
        other => panic!("unexpected vertex numbers {other:?}"),
    }
    let points = f64s(&piece.points);
    let coords = space.node_coordinates();
    for (node, p) in points.chunks(3).enumerate() {
        for d in 0..3 {
            let expected = if d < dim { coords[node * dim + d] } else { 0.0 };
            assert_eq!(p[d], expected, "point {node} coordinate {d}");
        }
    }
}
