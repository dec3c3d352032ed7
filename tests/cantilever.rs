//! The clamped cantilever with a tip traction (`examples/cantilever.rs`,
//! `examples/support/cantilever.rs`), small and native: the beam
//! `[0, 10] × [0, 1] × [0, 1]` of `20 × 2 × 2` cubes (480 tetrahedra).
//!
//! * P2 (3075 dofs): the tip deflection within 2 % of Euler–Bernoulli
//!   (`δ_EB = 4`) and of Timoshenko (`δ_T = 4.0312`) — the example's finest
//!   P2 mesh (30720 tetrahedra) is within 0.1 % and 0.8 %, this coarse one
//!   within 0.4 % and 1.2 %.
//! * P1 on the same mesh is far too stiff (shear locking of linear
//!   tetrahedra in bending: half the deflection) and approaches the theory
//!   from below on refinement.

use femquad::backend::Backend;
use femquad_examples::cantilever::{LENGTH, SIDE, beam_mesh, euler_bernoulli, solve, timoshenko};

#[test]
fn beam_theory() {
    assert_eq!(euler_bernoulli(), 4.0);
    // 4 + P L / (κ G A) = 4 + 10 / (5/6 · 1000/2.6)
    assert!((timoshenko() - (4.0 + 10.0 * 2.6 * 6.0 / 5000.0)).abs() < 1e-14);
}

#[test]
fn the_beam_mesh_fills_the_beam() {
    let mesh = beam_mesh(2).unwrap();
    assert_eq!((mesh.n_cells(), mesh.n_vertices()), (480, 21 * 3 * 3));
    assert!((mesh.total_volume() - LENGTH * SIDE * SIDE).abs() < 1e-12);
    assert!((0..mesh.n_cells()).all(|c| mesh.det_j(c) > 0.0));
    assert!(beam_mesh(0).is_err());
}

#[test]
fn p2_tip_deflection_is_within_2_percent_of_beam_theory() {
    let d = solve(2, 0, 2, &Backend::native(), 1e-9).unwrap();
    assert_eq!((d.cells, d.dofs), (480, 3075));
    for (theory, name) in [
        (euler_bernoulli(), "Euler–Bernoulli"),
        (timoshenko(), "Timoshenko"),
    ] {
        let error = d.tip / theory - 1.0;
        assert!(
            error.abs() < 0.02,
            "P2: δ = {} vs {name} {theory}: {error:+.4}",
            d.tip
        );
    }
}

#[test]
fn p1_is_too_stiff_and_converges_from_below() {
    let coarse = solve(2, 0, 1, &Backend::native(), 1e-9).unwrap();
    let fine = solve(2, 1, 1, &Backend::native(), 1e-9).unwrap();
    let theory = euler_bernoulli();
    assert!(
        0.0 < coarse.tip && coarse.tip < fine.tip && fine.tip < theory,
        "P1: δ = {} then {} (theory {theory})",
        coarse.tip,
        fine.tip
    );
    assert!(coarse.tip < 0.6 * theory, "P1 coarse: δ = {}", coarse.tip);
}
