//! Solves linear (Lamé) elasticity
//!
//! ```text
//! −∇·σ(u) = f  in Ω = (0,1)^d,   u = g on ∂Ω,
//! σ(u) = μ (∇u + ∇uᵀ) + λ (∇·u) I,   μ = 1, λ = 2,
//! ```
//!
//! with the manufactured displacement `u_c = Π_j cos(π x_j/2 + c/2)`
//! (`c = 0..d`; `f` and `g` follow from it, see `examples/support/mms.rs`
//! where the physics is written with `#[pointwise]`), on a sequence of
//! refined meshes, and prints the convergence table: the `L²` error falls
//! like `h²` for P1 and `h³` for P2.
//!
//! The displacement has `d` components per node, interleaved in the global
//! vector (`dof = node·d + c`). Residuals
//! `F(u)_{i,c} = ∫ ∇φ_i·σ_c(u) − φ_i f_c` are evaluated by the OpenCL
//! thread-transposition kernel (or natively with `--native`); the linear
//! system on the interior dofs is solved matrix-free by conjugate
//! gradients with `A v = J v` the exact Jacobian action, preconditioned by
//! a geometric multigrid V-cycle (point-block Jacobi–Chebyshev smoothing of
//! the `d × d` blocks of each node) on the hierarchy of refined meshes.
//!
//! ```text
//! cargo run --release --example elasticity                        # 2D P1
//! cargo run --release --example elasticity -- --dim 3 --order 2   # 3D P2
//! cargo run --release --example elasticity -- --vtu displacement.vtu
//! ```
//!
//! In ParaView, "Warp By Vector" on the point field `u` shows the deformed
//! body. Options as for the `laplacian` example (`--help`).

use std::process::ExitCode;

use clap::Parser;
use femquad_examples::cli::{CG_TOLERANCE, SolveArgs, end_quietly_on_broken_pipe, run_example};
use femquad_examples::convergence::Manufactured;

/// Linear (Lamé) elasticity -div(sigma(u)) = f with
/// sigma = mu (grad u + grad u^T) + lambda (div u) I, mu = 1, lambda = 2, on
/// the unit square or cube: a convergence study with the manufactured
/// displacement u_c = prod_j cos(pi x_j / 2 + c/2).
///
/// The displacement has dim components per node (interleaved). Every
/// residual is evaluated by femquad's OpenCL thread-transposition kernel (or
/// natively with --native); the linear system for the interior dofs is
/// solved matrix-free by conjugate gradients, preconditioned by geometric
/// multigrid on the refined meshes. Prints, for each mesh of
/// n = n0·2^k intervals per side: h, cells, dofs, CG iterations, the L2
/// error, its rate (expected 2 for P1, 3 for P2) and the seconds. With
/// --mesh, one solve on a Gmsh mesh instead; --vtu writes the finest
/// displacement, the exact one and the error for ParaView.
#[derive(Parser)]
#[command(mut_arg("tol", |a| a.help(CG_TOLERANCE.help())))]
struct Args {
    #[command(flatten)]
    solve: SolveArgs,
}

/// Default `(n0, levels)`: each study takes seconds on two CPU cores;
/// `--levels` goes further.
fn default_sizes(dim: usize, order: usize) -> (usize, usize) {
    match (dim, order) {
        (2, 1) => (8, 4), // 8 … 64
        (2, _) => (4, 4), // 4 … 32
        (_, 1) => (4, 3), // 4 … 16
        _ => (2, 3),      // 2 … 8
    }
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let args = Args::parse();
    match run_example(&Manufactured::lame(), &args.solve, default_sizes) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
