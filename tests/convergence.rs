//! Method of manufactured solutions: the discrete solutions of the
//! examples' problems converge at the rates finite-element theory predicts,
//! `‖u − u_h‖_{L²} = O(h²)` for P1 and `O(h³)` for P2.
//!
//! Each test solves a problem with a known smooth solution (see
//! `examples/support/mms.rs`) on two nested meshes of the unit square or
//! cube and asserts the rate between them, `log(e_1/e_2)/log(h_1/h_2)`, to
//! within 0.1 of `order + 1`: Poisson with a variable coefficient and Lamé
//! elasticity, P1 and P2, 2D and 3D, residuals from the native integrator,
//! CG preconditioned by multigrid (the examples' default);
//! three cases run through the OpenCL kernel (PoCL in CI), one in single
//! precision; the example Gmsh meshes are solved too.

use femquad::Real;
use femquad::backend::Backend;
use femquad::mesh::gmsh::read_gmsh;
use femquad::opencl::{Device, DeviceSelector, KernelOptions};
use femquad_examples::convergence::{
    Manufactured, SolveOptions, Study, solve, solve_on, study, table_header, table_row,
};

/// Runs the study and asserts the final rate `order + 1 ± 0.1`.
fn assert_rate<R: Real>(
    problem: Manufactured,
    dim: usize,
    order: usize,
    sizes: &[usize],
    backend: Backend,
    tol: f64,
) -> Study {
    let opts = SolveOptions::new(order, backend, tol);
    let mut table = vec![table_header(false)];
    let s = study::<R>(&problem, dim, sizes, &opts, |row| {
        table.push(table_row(row))
    })
    .unwrap();
    let table = table.join("\n");
    eprintln!(
        "{} {dim}D P{order} ({}):\n{table}",
        problem.name,
        R::PRECISION.name()
    );
    let rate = s.final_rate().unwrap();
    let expected = (order + 1) as f64;
    assert!(
        (rate - expected).abs() <= 0.1,
        "{} {dim}D P{order}: L2 rate {rate:.3}, expected {expected} ± 0.1\n{table}",
        problem.name
    );
    // errors fall at every refinement
    assert!(
        s.levels.windows(2).all(|w| w[1].l2_error < w[0].l2_error),
        "{table}"
    );
    s
}

fn native() -> Backend {
    Backend::native()
}

/// The OpenCL backend on the CPU (PoCL) unless FEMQUAD_DEVICE says
/// otherwise, with the environment's kernel switches but never the autotune
/// cache (the tests launch the device default configurations).
fn opencl() -> Backend {
    let selector = match std::env::var(femquad::opencl::DEVICE_ENV) {
        Ok(s) if !s.is_empty() => DeviceSelector::parse(&s),
        _ => DeviceSelector::parse("cpu"),
    };
    Backend::OpenCl {
        device: Device::open(&selector).unwrap_or_else(|e| panic!("OpenCL device: {e}")),
        options: KernelOptions::from_env()
            .unwrap_or_else(|e| panic!("kernel options: {e}"))
            .with_tuning_cache(false),
    }
}

#[test]
fn laplacian_2d_p1() {
    assert_rate::<f64>(Manufactured::laplacian(), 2, 1, &[16, 32], native(), 1e-12);
}

#[test]
fn laplacian_2d_p2() {
    assert_rate::<f64>(Manufactured::laplacian(), 2, 2, &[8, 16], native(), 1e-12);
}

#[test]
fn laplacian_3d_p1() {
    assert_rate::<f64>(Manufactured::laplacian(), 3, 1, &[8, 16], native(), 1e-12);
}

#[test]
fn laplacian_3d_p2() {
    assert_rate::<f64>(Manufactured::laplacian(), 3, 2, &[4, 8], native(), 1e-12);
}

#[test]
fn lame_2d_p1() {
    assert_rate::<f64>(Manufactured::lame(), 2, 1, &[16, 32], native(), 1e-12);
}

#[test]
fn lame_2d_p2() {
    assert_rate::<f64>(Manufactured::lame(), 2, 2, &[8, 16], native(), 1e-12);
}

#[test]
fn lame_3d_p1() {
    assert_rate::<f64>(Manufactured::lame(), 3, 1, &[8, 16], native(), 1e-12);
}

#[test]
fn lame_3d_p2() {
    assert_rate::<f64>(Manufactured::lame(), 3, 2, &[4, 8], native(), 1e-12);
}

/// The README's main job (2D P1 Laplacian) through the OpenCL kernel, and
/// the same solution as the native integrator gives.
#[test]
fn laplacian_2d_p1_opencl_matches_native() {
    let cl = assert_rate::<f64>(Manufactured::laplacian(), 2, 1, &[16, 32], opencl(), 1e-12);
    let opts = SolveOptions::new(1, native(), 1e-12);
    let nat = solve_on::<f64>(&Manufactured::laplacian(), cl.hierarchy.clone(), &opts).unwrap();
    let diff = cl
        .solution
        .u
        .iter()
        .zip(&nat.u)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    assert!(diff < 1e-9, "OpenCL and native solutions differ by {diff}");
    assert!((cl.solution.l2_error - nat.l2_error).abs() < 1e-9 * nat.l2_error);
    assert!(
        cl.solution
            .krylov_iterations
            .abs_diff(nat.krylov_iterations)
            <= 2
    );
}

/// A vector field with several quadrature points (N_comp = 3, N_q = 14)
/// through the OpenCL kernel.
#[test]
fn lame_3d_p2_opencl() {
    assert_rate::<f64>(Manufactured::lame(), 3, 2, &[4, 8], opencl(), 1e-12);
}

/// Single precision: residuals in f32 on the device; P1 errors (~1e-3 on
/// these meshes) are far above f32 rounding, so the rate is still 2.
#[test]
fn laplacian_2d_p1_opencl_f32() {
    let s = assert_rate::<f32>(Manufactured::laplacian(), 2, 1, &[8, 16], opencl(), 1e-5);
    assert!(s.levels[1].l2_error < 1e-3);
}

/// The example Gmsh meshes (`examples/meshes`) solve with the accuracy of
/// meshes of their size: the errors are those of the unit-box meshes of
/// similar `h` within a factor of a few.
#[test]
fn example_gmsh_meshes_solve() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/meshes/");
    for (file, problem, order, bound) in [
        ("lshape.msh", Manufactured::laplacian(), 1, 3e-3),
        ("lshape.msh", Manufactured::laplacian(), 2, 5e-5),
        ("lshape.msh", Manufactured::lame(), 2, 5e-5),
        ("lshape3d.msh", Manufactured::lame(), 1, 2e-2),
        ("lshape3d.msh", Manufactured::laplacian(), 2, 5e-4),
    ] {
        let gmsh = read_gmsh(std::path::Path::new(&format!("{dir}{file}"))).unwrap();
        assert_eq!(gmsh.reoriented, 0, "{file}");
        let opts = SolveOptions::new(order, native(), 1e-12);
        let s = solve::<f64>(&problem, &gmsh.mesh, &opts).unwrap();
        eprintln!(
            "{file} {} P{order}: L2 error {:.3e}, {} CG iterations",
            problem.name, s.l2_error, s.krylov_iterations
        );
        assert!(
            s.l2_error < bound && s.l2_error > 0.0,
            "{file} {} P{order}: {}",
            problem.name,
            s.l2_error
        );
    }
}

/// Multigrid changes the iterations, not the solution: the multigrid-
/// preconditioned solutions of the examples' problems equal the
/// unpreconditioned ones to the tolerance (so the rates above are those of
/// the discretization), with far fewer CG iterations.
#[test]
fn multigrid_solutions_equal_unpreconditioned_ones() {
    use femquad::solve::Preconditioner;
    use femquad_examples::convergence::hierarchy;
    for (problem, dim, order, n) in [
        (Manufactured::laplacian(), 2, 1, 32),
        (Manufactured::laplacian(), 3, 2, 4),
        (Manufactured::lame(), 2, 2, 16),
        (Manufactured::lame(), 3, 1, 8),
    ] {
        let mut out = Vec::new();
        for pc in [Preconditioner::default(), Preconditioner::None] {
            let mut opts = SolveOptions::new(order, native(), 1e-12);
            opts.preconditioner = pc;
            let h = hierarchy(dim, n, 5).unwrap();
            out.push(solve_on::<f64>(&problem, h, &opts).unwrap());
        }
        let (mg, none) = (&out[0], &out[1]);
        let scale = none.u.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let diff =
            mg.u.iter()
                .zip(&none.u)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        eprintln!(
            "{} {dim}D P{order} n={n}: {} multigrid levels, CG {} vs {} iterations, |Δu| = {diff:e}",
            problem.name, mg.levels, mg.krylov_iterations, none.krylov_iterations
        );
        assert!(diff <= 1e-9 * scale, "{diff:e}");
        let de = (mg.l2_error - none.l2_error).abs() / none.l2_error;
        assert!(de <= 1e-6, "L2 errors differ by {de:e} relative");
        assert!(mg.levels >= 3 && 3 * mg.krylov_iterations < none.krylov_iterations);
    }
}
