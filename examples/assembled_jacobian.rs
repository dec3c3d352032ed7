//! The Jacobian as a sparse matrix: assemble it from the physics' automatic
//! derivatives, solve with a sparse direct solver (faer's Cholesky), and
//! check the result against the matrix-free solve.
//!
//! The problem is `−∇·(a(x)∇u) = 1` on the unit square or cube (or a Gmsh
//! mesh, `--mesh`, refined `--refine` times) with `u = 0` on the boundary and the coefficient field `a(x) = 1 + x₀²` (an auxiliary
//! field read by the physics, written here with `#[pointwise]`). Its
//! residual is affine in `u`, so its Jacobian `A` is the stiffness matrix
//! and `u = A⁻¹ b` with `b = −F(0)`:
//!
//! 1. `Operator::assemble_jacobian` builds `A` (CSR; the sparsity from the
//!    space, the values from the pointwise Jacobians `g0…g3` that
//!    `#[pointwise]` derives);
//! 2. `FixedDofs::eliminate` imposes `u = 0` on the boundary symmetrically;
//! 3. `DirectSolver::cholesky` factors and solves (faer);
//! 4. `DirichletProblem::solve_linear` solves the same problem matrix-free
//!    (CG with the exact Jacobian action), on the device unless `--native`;
//!    the two solutions agree to the CG tolerance.
//!
//! ```text
//! cargo run --release --example assembled_jacobian
//! cargo run --release --example assembled_jacobian -- --dim 3 --order 2 --n 8
//! cargo run --release --example assembled_jacobian -- --matrix-market a.mtx
//! cargo run --release --example assembled_jacobian -- --mesh examples/meshes/lshape.msh --order 2
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::Parser;
use femquad::mesh::size::{FieldSize, physical_memory};
use femquad::prelude::*;
use femquad::sparse::DirectSolver;
use femquad_examples::cli::{MeshArgs, StudySize, check_box, end_quietly_on_broken_pipe};

/// `−∇·(a∇u) = 1`: `f0 = −1`, `f1 = a ∇u`.
#[pointwise]
pub fn diffusion_with_source<const D: usize>(
    grad_u: &[[f64; D]; 1],
    a: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = -1.0;
    for d in 0..D {
        f1[0][d] = a[0] * grad_u[0][d];
    }
}

/// Assembles the Jacobian of -div(a grad u) = 1 (u = 0 on the boundary,
/// a = 1 + x0^2) from the physics' automatic derivatives, solves it with
/// faer's sparse Cholesky factorization, and compares with the matrix-free
/// conjugate-gradient solve.
#[derive(Parser)]
struct Args {
    /// Spatial dimension: 2 (unit square) or 3 (unit cube).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3), conflicts_with = "mesh")]
    dim: u8,
    /// Polynomial order of the Lagrange elements: 1 or 2.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    order: u8,
    /// Intervals per side of the mesh (1 to 512, and a mesh that fits this
    /// machine's memory: more is an error that states the bound).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u16).range(1..=512), conflicts_with = "mesh")]
    n: u16,
    /// A Gmsh mesh instead of the unit square or cube (not with --dim, --n).
    #[command(flatten)]
    gmsh: MeshArgs,
    /// Solve matrix-free with the native integrator instead of OpenCL.
    #[arg(long)]
    native: bool,
    /// Relative residual to which the matrix-free CG solves; the two
    /// solutions must then agree to 1e-8 relative (max norm).
    #[arg(long, default_value = "1e-12")]
    tol: f64,
    /// Also write the assembled (unconstrained) matrix in Matrix Market format.
    #[arg(long, value_name = "FILE")]
    matrix_market: Option<PathBuf>,
}

fn run(args: &Args) -> Result<()> {
    if !(args.tol > 0.0 && args.tol <= 1e-9) {
        return Err(Error::arg(
            "--tol",
            format!(
                "must lie in (0, 1e-9] for the solutions to agree to 1e-8, got {:e}",
                args.tol
            ),
        ));
    }
    // the mesh (and its size checked) before the backend
    let order = args.order as usize;
    let field = FieldSize { order, n_comp: 1 };
    let (hierarchy, domain) = match args.gmsh.load(|_| field)? {
        Some(file) => {
            let domain = file.describe();
            (file.hierarchy, domain)
        }
        None => {
            let (dim, n) = (args.dim as usize, args.n as usize);
            let size = StudySize {
                dim,
                order,
                n_comp: 1,
            };
            check_box("--n", &size, n, physical_memory())?;
            let mesh = unit_box(dim, n, &MeshOptions::default())?;
            let name = if dim == 2 { "square" } else { "cube" };
            (
                MeshHierarchy::single(mesh.into()),
                format!("the unit {name}"),
            )
        }
    };
    let mesh = hierarchy.finest().clone();
    let dim = mesh.dim();
    let element = Element::lagrange(dim, order)?;
    let space = FunctionSpace::new(mesh.clone(), element, 1)?;
    let quadrature = Quadrature::default_for(&element)?;
    let backend = if args.native {
        Backend::native()
    } else {
        Backend::opencl_from_env()?
    };
    let aux = AuxSpace::Field { n_comp: 1 };
    let form = Form::new(space.clone(), DiffusionWithSource)?
        .with_quadrature(quadrature)?
        .with_aux(aux)?;
    let mut op = Operator::<f64>::new(form, &backend)?;
    let coefficient = space.interpolate(|x, a| a[0] = 1.0 + x[0] * x[0]);
    op.set_aux(&coefficient)?;
    println!(
        "-div((1 + x0^2) grad u) = 1 on {domain}, P{} ({} cells, {} dofs), matrix-free on {}",
        args.order,
        mesh.n_cells(),
        space.n_dofs(),
        backend.describe()
    );

    // 1. the Jacobian at u = 0 (any u: the problem is linear), and b = −F(0)
    let t = Instant::now();
    let zero = op.vector()?;
    let mut a = op.assemble_jacobian(&zero)?;
    let mut f0 = op.vector()?;
    op.apply(&zero, &mut f0)?;
    let mut b: Vec<f64> = f0.to_host()?.iter().map(|v| -v).collect();
    println!(
        "assembled A: {} x {}, {} nonzeros, in {:.3} s",
        a.n_rows(),
        a.n_cols(),
        a.nnz(),
        t.elapsed().as_secs_f64()
    );
    if let Some(path) = &args.matrix_market {
        a.write_matrix_market(path)?;
        println!("wrote {}", path.display());
    }
    // the same matrix as the physics' own Jacobian? A·1 is F's response to
    // a constant, which a pure diffusion does not feel
    let ones = vec![1.0; a.n_cols()];
    let mut a1 = vec![0.0; a.n_rows()];
    a.spmv(&ones, &mut a1)?;
    let row_sums = a1.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    println!("max |row sum| of A (a pure diffusion): {row_sums:.1e}");

    // 2–3. u = 0 on the boundary, then faer's sparse Cholesky
    let mut problem = DirichletProblem::on_hierarchy(op, hierarchy, |_x, g| g[0] = 0.0)?;
    // the coefficient on every multigrid level too (P2 has a P1 level, a
    // refined Gmsh mesh its coarser meshes)
    problem.set_aux(&coefficient)?;
    problem
        .fixed_dofs()
        .eliminate(&mut a, &mut b, problem.fixed_values())?;
    let t = Instant::now();
    let cholesky = DirectSolver::cholesky(&a)?;
    let mut u_direct = vec![0.0; b.len()];
    cholesky.solve(&b, &mut u_direct)?;
    println!(
        "direct solve (faer Cholesky): {:.3} s",
        t.elapsed().as_secs_f64()
    );

    // 4. the matrix-free solve
    let t = Instant::now();
    let tol = args.tol;
    let (u, stats) = problem.solve_linear(tol, 10_000)?;
    let u = u.to_host()?;
    println!(
        "matrix-free CG: {} iterations to {tol:.0e}, {:.3} s",
        stats.iterations,
        t.elapsed().as_secs_f64()
    );
    let scale = u_direct.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = u
        .iter()
        .zip(&u_direct)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    println!(
        "max |u_direct - u_matrix_free| = {diff:.2e} (max |u| = {scale:.4}), relative {:.1e}",
        diff / scale
    );
    if diff > 1e-8 * scale {
        return Err(Error::arg(
            "solutions",
            format!("the direct and matrix-free solutions differ by {diff:e}"),
        ));
    }
    Ok(())
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
