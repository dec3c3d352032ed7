//! Newton–Krylov on the nonlinear physics of `examples/custom_physics.rs`
//! (`−∇·((1 + u²)∇u) + u³ = f`, written with `#[pointwise]`), using that
//! file's own code: Newton converges quadratically with exact
//! Jacobian-vector products (the macro's derivatives) and with residual
//! differences, the exact products need fewer residual evaluations, the
//! residual drops below the tolerance, the discrete solutions converge at
//! the finite-element rates, and the OpenCL kernel gives the native solution.

#[allow(dead_code)]
#[path = "../examples/custom_physics.rs"]
mod custom_physics;

use custom_physics::{ReactionDiffusion, exact, solve, solve_on};
use femquad::backend::Backend;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::opencl::testing;
use femquad::physics::Pointwise;
use femquad::solve::{JacobianProducts, NewtonOptions, Preconditioner};

const EXACT: JacobianProducts = JacobianProducts::Exact;

fn mesh(dim: usize, n: usize) -> std::sync::Arc<femquad::mesh::Mesh> {
    unit_box(
        dim,
        n,
        &MeshOptions {
            shuffle: true,
            seed: 11,
            ..MeshOptions::default()
        },
    )
    .unwrap()
    .into()
}

#[test]
fn newton_converges_quadratically_to_the_tolerance() {
    let eta = NewtonOptions::default().linear.tol;
    for (dim, order, n, products) in [
        (2, 1, 16, EXACT),
        (2, 2, 8, EXACT),
        (3, 1, 6, EXACT),
        (2, 1, 16, JacobianProducts::Differences),
    ] {
        let m = mesh(dim, n);
        let s = solve::<f64>(&m, order, &Backend::native(), 1e-10, products).unwrap();
        let r = &s.newton.residual_norms;
        eprintln!(
            "{dim}D P{order}: |F| = {r:?}, GMRES {:?}",
            s.newton.linear_iterations
        );
        // converged: below the relative tolerance, in a few steps
        assert!(*r.last().unwrap() <= 1e-10 * r[0], "{r:?}");
        assert!(s.newton.iterations <= 8, "{r:?}");
        // quadratic: the order estimate q_k = ln(r_{k+1}/r_k)/ln(r_k/r_{k−1})
        // is about 2 while the step is limited by Newton (not by the linear
        // tolerance η, which caps a step's reduction at about η)
        let mut quadratic_steps = 0;
        for k in 1..r.len() - 1 {
            let (prev, this) = (r[k] / r[k - 1], r[k + 1] / r[k]);
            if prev < 0.5 && this > 100.0 * eta {
                let q = this.ln() / prev.ln();
                assert!(
                    q >= 1.8,
                    "{dim}D P{order} step {k}: convergence order {q:.2}, |F| = {r:?}"
                );
                quadratic_steps += 1;
            }
        }
        assert!(
            quadratic_steps >= 2,
            "{dim}D P{order}: too few Newton steps to judge: {r:?}"
        );
        // full steps once close
        assert_eq!(*s.newton.step_lengths.last().unwrap(), 1.0);
        assert!(s.l2_error < 1e-2, "{}", s.l2_error);
    }
}

#[test]
fn exact_products_need_fewer_residual_evaluations() {
    let m = mesh(2, 16);
    // without preconditioner: GMRES iterations, hence products, dominate
    let run = |p| {
        let h = femquad::multigrid::MeshHierarchy::single(m.clone());
        solve_on::<f64>(h, 1, &Backend::native(), 1e-10, p, Preconditioner::None).unwrap()
    };
    let (exact, differences) = (run(EXACT), run(JacobianProducts::Differences));
    eprintln!(
        "exact: {} residuals + {} J·v, {} Newton steps; differences: {} residuals, {} steps",
        exact.newton.residual_evaluations,
        exact.newton.jacobian_products,
        exact.newton.iterations,
        differences.newton.residual_evaluations,
        differences.newton.iterations
    );
    // exact: one residual per Newton step and line-search trial; differences:
    // one more per GMRES iteration
    let halvings: usize = exact
        .newton
        .step_lengths
        .iter()
        .map(|l| (-l.log2()).round() as usize)
        .sum();
    assert_eq!(
        exact.newton.residual_evaluations,
        1 + exact.newton.iterations + halvings
    );
    assert!(exact.newton.jacobian_products >= exact.newton.linear_iterations.iter().sum());
    assert!(differences.newton.residual_evaluations > 3 * exact.newton.residual_evaluations);
    assert!(exact.newton.iterations <= differences.newton.iterations);
    let diff = exact
        .u
        .iter()
        .zip(&differences.u)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff < 1e-8, "{diff}");
}

#[test]
fn nonlinear_solutions_converge_at_the_fe_rates() {
    for (dim, order, sizes) in [(2, 1, [8, 16]), (2, 2, [4, 8]), (3, 2, [2, 4])] {
        let e: Vec<(f64, f64)> = sizes
            .iter()
            .map(|&n| {
                let m = mesh(dim, n);
                let s = solve::<f64>(&m, order, &Backend::native(), 1e-10, EXACT).unwrap();
                (m.h_max(), s.l2_error)
            })
            .collect();
        let rate = (e[0].1 / e[1].1).ln() / (e[0].0 / e[1].0).ln();
        eprintln!("{dim}D P{order}: errors {e:?}, rate {rate:.3}");
        let expected = (order + 1) as f64;
        assert!(
            (rate - expected).abs() <= 0.1,
            "{dim}D P{order}: rate {rate}, expected {expected}"
        );
    }
}

/// Single precision with difference products (`custom_physics --precision
/// f32 --jacobian differences`): the products are accurate to about
/// `√ε_f32 ≈ 3.5e-4`, a GMRES tolerance below that is refused, so the example
/// asks each GMRES solve for 10 `√ε`; Newton still reaches the f32
/// tolerance 1e-4 quickly, with the accuracy of the exact products' solve.
#[test]
fn f32_newton_with_difference_products_reaches_the_tolerance() {
    let m = mesh(2, 16);
    let run = |products| solve::<f32>(&m, 1, &Backend::native(), 1e-4, products).unwrap();
    let (differences, exact) = (run(JacobianProducts::Differences), run(EXACT));
    let r = &differences.newton.residual_norms;
    eprintln!("f32, differences: |F| = {r:?}");
    assert!(*r.last().unwrap() <= 1e-4 * r[0], "{r:?}");
    assert!(differences.newton.iterations <= 6, "{r:?}");
    assert!(
        (differences.l2_error - exact.l2_error).abs() <= 1e-2 * exact.l2_error,
        "L2 errors: differences {:e}, exact {:e}",
        differences.l2_error,
        exact.l2_error
    );
}

#[test]
fn opencl_newton_matches_native() {
    // the tests' device and options (femquad::opencl::testing: no tuning cache)
    let device = Backend::opencl_with(testing::device(), testing::options());
    let m = mesh(2, 16);
    let cl = solve::<f64>(&m, 2, &device, 1e-10, EXACT).unwrap();
    let nat = solve::<f64>(&m, 2, &Backend::native(), 1e-10, EXACT).unwrap();
    let diff =
        cl.u.iter()
            .zip(&nat.u)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
    assert!(
        diff < 1e-8,
        "OpenCL and native Newton solutions differ by {diff}"
    );
    assert_eq!(cl.newton.iterations, nat.newton.iterations);
    assert!(*cl.newton.residual_norms.last().unwrap() <= 1e-10 * cl.newton.residual_norms[0]);
    // the nodal interpolant of the exact solution is close
    let ue = cl.space.interpolate(exact);
    let max =
        cl.u.iter()
            .zip(&ue)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
    assert!(max < 1e-4, "{max}");
}

#[test]
fn the_physics_reads_what_it_uses() {
    let info = ReactionDiffusion.info();
    assert!(info.has_f0 && info.has_f1);
    assert!(info.reads.u && info.reads.grad_u && info.reads.x);
    assert!(!info.reads.a && !info.reads.constants);
    assert_eq!(info.dims, &[2, 3]);
    assert!(ReactionDiffusion.opencl_source().contains("exp("));
}

/// Newton–Krylov with the multigrid rebuilt at every Newton step on the
/// refinement hierarchy (the example's default): few GMRES iterations per
/// step, bounded under refinement, and the solution of the unpreconditioned
/// solve.
#[test]
fn multigrid_preconditioned_newton_on_a_hierarchy() {
    use femquad_examples::convergence::hierarchy;
    let mut rows = Vec::new();
    for n in [8, 16, 32] {
        let run = |pc| {
            solve_on::<f64>(
                hierarchy(2, n, 3).unwrap(),
                1,
                &Backend::native(),
                1e-10,
                EXACT,
                pc,
            )
            .unwrap()
        };
        let (mg, none) = (run(Preconditioner::default()), run(Preconditioner::None));
        let diff =
            mg.u.iter()
                .zip(&none.u)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff < 1e-8, "n = {n}: {diff:e}");
        rows.push((
            n,
            mg.newton.linear_iterations.clone(),
            none.newton.linear_iterations.clone(),
        ));
    }
    eprintln!("GMRES iterations per Newton step (n, multigrid, none): {rows:?}");
    for (_, mg, _) in &rows {
        assert!(mg.iter().all(|&i| i <= 10), "{rows:?}");
    }
}
