//! Poisson's equation with Neumann and Robin conditions on part of the
//! boundary (boundary terms of a form), manufactured solutions
//! (`examples/support/boundary_mms.rs`): the `L²` error falls like `h²`
//! (P1) and `h³` (P2), 2D and 3D, and multigrid-preconditioned CG needs a
//! bounded number of iterations as the mesh is refined (each multigrid
//! level integrates the boundary term over its own facets of the sides).
//!
//! Native backend, small meshes: the rate is measured between the last two
//! of a few refinements of a coarse unit square or cube of 2 intervals.

use femquad::backend::Backend;
use femquad::opencl::testing;
use femquad_examples::boundary_mms::{Condition, hierarchy, solve};

/// The rate between the last two of `refinements` (coarse to fine) of the
/// coarse mesh of 2 intervals, asserted `order + 1 ± 0.1`; returns the CG
/// iteration counts of every refinement.
fn assert_rate(
    dim: usize,
    order: usize,
    condition: Condition,
    refinements: &[usize],
) -> Vec<usize> {
    let mut rows = Vec::new();
    for &r in refinements {
        let s = solve(
            hierarchy(dim, 2, r).unwrap(),
            order,
            condition,
            &Backend::native(),
            1e-12,
        )
        .unwrap();
        let h = 0.5f64.powi(r as i32 + 1);
        rows.push((h, s));
    }
    let table: Vec<String> = rows
        .iter()
        .map(|(h, s)| {
            format!(
                "h = {h:.4}  dofs {:6}  L2 {:.3e}  CG {}",
                s.dofs, s.l2_error, s.iterations
            )
        })
        .collect();
    let table = table.join("\n");
    eprintln!("{condition:?} {dim}D P{order}\n{table}");
    let n = rows.len();
    let ((h1, s1), (h2, s2)) = (&rows[n - 2], &rows[n - 1]);
    let rate = (s1.l2_error / s2.l2_error).ln() / (h1 / h2).ln();
    let expected = (order + 1) as f64;
    assert!(
        (rate - expected).abs() <= 0.1,
        "{condition:?} {dim}D P{order}: L2 rate {rate:.3}, expected {expected} ± 0.1\n{table}"
    );
    rows.iter().map(|(_, s)| s.iterations).collect()
}

#[test]
fn neumann_2d_p1_and_p2() {
    assert_rate(2, 1, Condition::Neumann, &[3, 4]);
    assert_rate(2, 2, Condition::Neumann, &[2, 3]);
}

#[test]
fn robin_2d_p1_and_p2() {
    assert_rate(2, 1, Condition::Robin(2.0), &[3, 4]);
    assert_rate(2, 2, Condition::Robin(2.0), &[2, 3]);
}

#[test]
fn neumann_3d_p1_and_p2() {
    assert_rate(3, 1, Condition::Neumann, &[2, 3]);
    assert_rate(3, 2, Condition::Neumann, &[1, 2]);
}

#[test]
fn robin_3d_p1_and_p2() {
    assert_rate(3, 1, Condition::Robin(2.0), &[2, 3]);
    assert_rate(3, 2, Condition::Robin(2.0), &[1, 2]);
}

/// Multigrid with Neumann and Robin parts: on 1, 2 and 3 refinements the
/// CG iteration counts stay within a band of 2, at most 10 (8 or 9 with
/// every level's boundary term; a coarse level without it needs up to 12).
#[test]
fn multigrid_iterations_stay_bounded_with_neumann_and_robin_parts() {
    for condition in [Condition::Neumann, Condition::Robin(2.0)] {
        for order in [1, 2] {
            let counts: Vec<usize> = (1..=3)
                .map(|r| {
                    solve(
                        hierarchy(2, 2, r).unwrap(),
                        order,
                        condition,
                        &Backend::native(),
                        1e-10,
                    )
                    .unwrap()
                    .iterations
                })
                .collect();
            eprintln!("{condition:?} P{order}: CG iterations {counts:?}");
            let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
            assert!(
                hi - lo <= 2 && *hi <= 10,
                "{condition:?} P{order}: CG iterations {counts:?} on 1, 2, 3 refinements"
            );
        }
    }
}

/// The Robin problem solved on the device (PoCL in CI: the boundary
/// kernels in F(u), J·v and the multigrid levels' diagonals) has the native
/// solution's error and iterations.
#[test]
fn robin_on_the_device_matches_the_native_solve() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for order in [1, 2] {
        let native = solve(
            hierarchy(2, 2, 2).unwrap(),
            order,
            Condition::Robin(2.0),
            &Backend::native(),
            1e-10,
        )
        .unwrap();
        let gpu = solve(
            hierarchy(2, 2, 2).unwrap(),
            order,
            Condition::Robin(2.0),
            &device,
            1e-10,
        )
        .unwrap();
        assert!(
            (native.l2_error - gpu.l2_error).abs() <= 1e-9 * native.l2_error,
            "P{order}: L2 error native {} device {}",
            native.l2_error,
            gpu.l2_error
        );
        assert!(
            native.iterations.abs_diff(gpu.iterations) <= 1,
            "P{order}: CG iterations native {} device {}",
            native.iterations,
            gpu.iterations
        );
    }
}
