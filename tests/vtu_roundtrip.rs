//! VTU files written by `femquad::output::Vtu` are read back by an
//! independent reader (the `vtkio` crate) with the right point and cell
//! counts, cell types, connectivity, coordinates and field values — for P1
//! and P2 in 2D and 3D, scalar and vector fields, ASCII and base64 binary —
//! and a solution written by the examples' code round-trips too.

use std::path::PathBuf;

use femquad::backend::Backend;
use femquad::element::Element;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::output::{Vtu, VtuFormat};
use femquad::space::FunctionSpace;
use femquad_examples::convergence::{Manufactured, SolveOptions, solve, write_vtu};
use vtkio::model::{
    Attribute, CellType, DataSet, IOBuffer, Piece, UnstructuredGridPiece, VertexNumbers,
};

/// A fresh path in Cargo's per-test temporary directory.
fn temp_file(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("vtu_roundtrip");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// Reads a `.vtu` file with vtkio and returns its one inline piece.
fn read_piece(path: &PathBuf) -> UnstructuredGridPiece {
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

fn f64s(buffer: &IOBuffer) -> Vec<f64> {
    match buffer {
        IOBuffer::F64(v) => v.clone(),
        other => panic!("expected Float64 data, got {other:?}"),
    }
}

/// The data array `name` among `attributes`: (components, values).
fn array(attributes: &[Attribute], name: &str) -> (usize, Vec<f64>) {
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

fn check_geometry(piece: &UnstructuredGridPiece, mesh: &Mesh, space: &FunctionSpace) {
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
    let coords = space.node_coordinates(mesh).unwrap();
    for (node, p) in points.chunks(3).enumerate() {
        for d in 0..3 {
            let expected = if d < dim { coords[node * dim + d] } else { 0.0 };
            assert_eq!(p[d], expected, "point {node} coordinate {d}");
        }
    }
}

#[test]
fn fields_of_p1_and_p2_spaces_round_trip_in_both_encodings() {
    for dim in [2, 3] {
        let mesh = unit_box(
            dim,
            3,
            &MeshOptions {
                jitter: 0.1,
                shuffle: true,
                seed: 7,
            },
        )
        .unwrap();
        for order in [1, 2] {
            let scalar =
                FunctionSpace::new(&mesh, Element::lagrange(dim, order).unwrap(), 1).unwrap();
            let vector =
                FunctionSpace::new(&mesh, Element::lagrange(dim, order).unwrap(), dim).unwrap();
            let u = scalar
                .interpolate(&mesh, |x, o| {
                    o[0] = (3.0 * x[0]).sin() + x[1] * x[dim - 1] / 7.0
                })
                .unwrap();
            let v = vector
                .interpolate(&mesh, |x, o| {
                    for (c, oc) in o.iter_mut().enumerate() {
                        *oc = x[c] * 0.1 + c as f64 - 1.0 / 3.0;
                    }
                })
                .unwrap();
            let cells: Vec<f64> = (0..mesh.n_cells()).map(|c| mesh.cell_volume(c)).collect();
            for format in [VtuFormat::Ascii, VtuFormat::Base64] {
                let path = temp_file(&format!("fields_{dim}d_p{order}_{format:?}.vtu"));
                let mut vtu = Vtu::new(&mesh, &scalar).unwrap();
                vtu.add_point_field("u", 1, &u)
                    .unwrap()
                    .add_point_field("displacement", dim, &v)
                    .unwrap()
                    .add_cell_field("volume", 1, &cells)
                    .unwrap();
                vtu.write(&path, format).unwrap();

                let piece = read_piece(&path);
                check_geometry(&piece, &mesh, &scalar);
                // values are exact in both encodings (shortest round-trip text or raw bytes)
                let (nc, got) = array(&piece.data.point, "u");
                assert_eq!((nc, &got), (1, &u), "{dim}D P{order} {format:?}");
                let (nc, got) = array(&piece.data.point, "displacement");
                assert_eq!(nc, 3);
                for node in 0..vector.n_nodes() {
                    for c in 0..3 {
                        let expected = if c < dim { v[node * dim + c] } else { 0.0 };
                        assert_eq!(got[node * 3 + c], expected);
                    }
                }
                let (nc, got) = array(&piece.data.cell, "volume");
                assert_eq!((nc, &got), (1, &cells));
            }
        }
    }
}

#[test]
fn a_solution_written_by_the_examples_round_trips() {
    let mesh = unit_box(2, 8, &MeshOptions::default()).unwrap();
    let problem = Manufactured::lame();
    let opts = SolveOptions::new(2, Backend::native(), 1e-10);
    let s = solve::<f64>(&problem, &mesh, &opts).unwrap();
    let path = temp_file("lame_p2.vtu");
    write_vtu(&path, &mesh, &problem, &s, VtuFormat::Base64).unwrap();

    let piece = read_piece(&path);
    check_geometry(&piece, &mesh, &s.space);
    let exact = s.space.interpolate(&mesh, problem.exact).unwrap();
    let (nc, u) = array(&piece.data.point, "u");
    let (_, u_exact) = array(&piece.data.point, "u_exact");
    let (_, error) = array(&piece.data.point, "error");
    assert_eq!(nc, 3);
    for node in 0..s.space.n_nodes() {
        for c in 0..2 {
            let k = node * 3 + c;
            assert_eq!(u[k], s.u[node * 2 + c]);
            assert_eq!(u_exact[k], exact[node * 2 + c]);
            assert_eq!(error[k], s.u[node * 2 + c] - exact[node * 2 + c]);
        }
        assert_eq!((u[node * 3 + 2], error[node * 3 + 2]), (0.0, 0.0));
    }
    // the nodal error is small (the solution converged) but not zero
    let max_err = error.iter().fold(0.0f64, |m, e| m.max(e.abs()));
    assert!(max_err > 0.0 && max_err < 1e-3, "{max_err}");
    let (_, cell_err) = array(&piece.data.cell, "l2_error");
    let l2 = cell_err.iter().map(|e| e * e).sum::<f64>().sqrt();
    assert!(
        (l2 - s.l2_error).abs() <= 1e-12 * s.l2_error,
        "{l2} vs {}",
        s.l2_error
    );
}
