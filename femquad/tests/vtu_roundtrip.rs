//! VTU files written by `femquad::output::Vtu` are read back by an
//! independent reader (the `vtkio` crate) with the right point and cell
//! counts, cell types, connectivity, coordinates and field values — for P1
//! and P2 in 2D and 3D, scalar and vector fields, ASCII and base64 binary.
//! (A solution written by the examples' code is checked the same way by the
//! root package's `tests/example_vtu.rs`.)

mod vtu_support;

use femquad::element::Element;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::output::{Vtu, VtuFormat};
use femquad::space::FunctionSpace;
use std::sync::Arc;
use vtu_support::{array, check_geometry, read_piece, temp_file};

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
        let mesh = Arc::new(mesh);
        for order in [1, 2] {
            let scalar =
                FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order).unwrap(), 1)
                    .unwrap();
            let vector =
                FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order).unwrap(), dim)
                    .unwrap();
            let u = scalar.interpolate(|x, o| o[0] = (3.0 * x[0]).sin() + x[1] * x[dim - 1] / 7.0);
            let v = vector.interpolate(|x, o| {
                for (c, oc) in o.iter_mut().enumerate() {
                    *oc = x[c] * 0.1 + c as f64 - 1.0 / 3.0;
                }
            });
            let cells: Vec<f64> = (0..mesh.n_cells()).map(|c| mesh.cell_volume(c)).collect();
            for format in [VtuFormat::Ascii, VtuFormat::Base64] {
                let path = temp_file(&format!("fields_{dim}d_p{order}_{format:?}.vtu"));
                let mut vtu = Vtu::new(&scalar).unwrap();
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
