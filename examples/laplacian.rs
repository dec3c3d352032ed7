//! Solves the variable-coefficient Poisson problem
//!
//! ```text
//! −∇·(κ ∇u) = f  in Ω = (0,1)^d,   u = g on ∂Ω,   κ(x) = 1 + x₀²,
//! ```
//!
//! with the manufactured solution `u = Π_j cos(π x_j/2)` (so `f` and `g`
//! follow from `u`; see `examples/support/mms.rs`, where the physics is
//! written with `#[pointwise]`), on a sequence of refined meshes, and
//! prints the convergence table: the `L²` error falls like `h²` for P1 and
//! `h³` for P2.
//!
//! Every residual `F(u)_i = ∫ ∇φ_i·κ∇u − φ_i f` is evaluated by the OpenCL
//! thread-transposition kernel (PoCL on a CPU, or a GPU), or natively with
//! `--native`. The problem is linear, so the system `A u_f = b` on the free
//! (interior) dofs is solved matrix-free by conjugate gradients, with
//! `A v = J v` the exact Jacobian action of the physics, preconditioned by a
//! geometric multigrid V-cycle on the hierarchy of refined meshes (each mesh
//! of the study is a coarse mesh refined uniformly), so the iterations stay
//! bounded as the mesh is refined (`femquad::solve::DirichletProblem`,
//! `femquad::multigrid`; `--preconditioner jacobi|none` for comparison).
//!
//! ```text
//! cargo run --release --example laplacian                       # 2D P1, 5 levels, OpenCL
//! cargo run --release --example laplacian -- --dim 3 --order 2  # 3D P2
//! cargo run --release --example laplacian -- --native --vtu u.vtu
//! cargo run --release --example laplacian -- --mesh examples/meshes/lshape.msh --order 2 --refine 2
//! cargo run --release --example laplacian -- --preconditioner none   # CG without multigrid
//! ```
//!
//! Options: `--dim 2|3`, `--order 1|2`, `--levels L`, `--n0 N` (meshes of
//! `N·2^k` intervals per side), `--preconditioner mg|jacobi|none`, `--native`, `--device NAME`, `--precision
//! f64|f32`, `--mesh FILE.msh` (one solve on a Gmsh mesh), `--vtu FILE`
//! (solution, exact solution and error for ParaView), `--tol`; `--help`
//! for all.

use std::process::ExitCode;

use clap::Parser;
use femquad_examples::cli::{CG_TOLERANCE, SolveArgs, end_quietly_on_broken_pipe, run_example};
use femquad_examples::convergence::Manufactured;

/// Poisson's equation -div(k grad u) = f with k = 1 + x0^2 on the unit square
/// or cube: a convergence study with the manufactured solution
/// u = prod_j cos(pi x_j / 2).
///
/// Every residual is evaluated by femquad's OpenCL thread-transposition
/// kernel (or natively with --native); the linear system for the interior
/// dofs is solved matrix-free by conjugate gradients, preconditioned by
/// geometric multigrid on the refined meshes. Prints, for each mesh
/// of n = n0·2^k intervals per side: h, cells, dofs, CG iterations, the L2
/// error, its rate (expected 2 for P1, 3 for P2) and the seconds. With
/// --mesh, one solve on a Gmsh mesh instead; --vtu writes the finest
/// solution, the exact one and the error for ParaView.
#[derive(Parser)]
#[command(mut_arg("tol", |a| a.help(CG_TOLERANCE.help())))]
struct Args {
    #[command(flatten)]
    solve: SolveArgs,
}

/// Default `(n0, levels)`: each study takes seconds on two CPU cores (the
/// README's main job, 2D P1, runs up to 128 × 128); `--levels` goes further.
fn default_sizes(dim: usize, order: usize) -> (usize, usize) {
    match (dim, order) {
        (2, 1) => (8, 5), // 8 … 128
        (2, _) => (4, 5), // 4 … 64
        (_, 1) => (4, 3), // 4 … 16
        _ => (2, 3),      // 2 … 8
    }
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let args = Args::parse();
    match run_example(&Manufactured::laplacian(), &args.solve, default_sizes) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
