//! A solution written by the examples' code (`write_vtu` of
//! `examples/support/convergence.rs`) is read back by an independent reader
//! (the `vtkio` crate): the geometry of its space, the fields `u`, `u_exact`
//! and `error`, and the cell field `l2_error`. The writer itself,
//! `femquad::output::Vtu`, is tested in `femquad/tests/vtu_roundtrip.rs`,
//! whose reader and checks this test shares.

#[path = "../femquad/tests/vtu_support/mod.rs"]
mod vtu_support;

use femquad::backend::Backend;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::output::VtuFormat;
use femquad_examples::convergence::{Manufactured, SolveOptions, solve, write_vtu};
use vtu_support::{array, check_geometry, read_piece, temp_file};

#[test]
fn a_solution_written_by_the_examples_round_trips() {
    let mesh = std::sync::Arc::new(unit_box(2, 8, &MeshOptions::default()).unwrap());
    let problem = Manufactured::lame();
    let opts = SolveOptions::new(2, Backend::native(), 1e-10);
    let s = solve::<f64>(&problem, &mesh, &opts).unwrap();
    let path = temp_file("lame_p2.vtu");
    write_vtu(&path, &problem, &s, VtuFormat::Base64).unwrap();

    let piece = read_piece(&path);
    check_geometry(&piece, &mesh, &s.space);
    let exact = s.space.interpolate(problem.exact);
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
