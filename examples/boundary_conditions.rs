//! Poisson's equation with a Neumann and with a Robin condition on part of
//! the boundary — boundary terms of a form — and the convergence table of
//! each:
//!
//! ```text
//! −Δu = f in Ω = (0,1)^d,
//! ∂u/∂n = g            (Neumann)  or  ∂u/∂n + α u = g  (Robin, α = 2)   on x₀ = 1 and x₁ = 0,
//! u = u_exact                                                            on the other sides,
//! ```
//!
//! with the manufactured solution `u = Π_j cos(π x_j/2 + 1/2)` (`f` and
//! `g` follow from it; `examples/support/boundary_mms.rs`). The natural
//! condition enters the weak form as a boundary term, a `#[pointwise]`
//! physics that reads the outward unit normal `n` (PETSc's boundary `f0`):
//! `f0 = −∇u_exact·n` (Neumann), `f0 = α u − (∇u_exact·n + α u_exact)`
//! (Robin), on the facets of those sides (`FacetSet::boundary_where`),
//! added with `Form::with_boundary`. Residuals natively; CG with
//! multigrid, whose every level integrates the boundary term over its own
//! facets of the sides. The `L²` error falls like `h²` (P1) and `h³` (P2).
//!
//! ```text
//! cargo run --release --example boundary_conditions                  # 2D and 3D, P1 and P2
//! cargo run --release --example boundary_conditions -- --levels 5    # more refinements
//! ```

use std::process::ExitCode;

use clap::Parser;
use femquad::backend::Backend;
use femquad_examples::boundary_mms::{Condition, hierarchy, solve};

#[derive(Parser)]
#[command(about = "Poisson with Neumann and Robin conditions: errors and rates")]
struct Args {
    /// Refinements of the coarse mesh (2 intervals per side) in 2D; 3D
    /// uses one fewer.
    #[arg(long, default_value_t = 4)]
    levels: usize,
    /// CG tolerance.
    #[arg(long, default_value_t = 1e-12)]
    tol: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> femquad::Result<()> {
    for condition in [Condition::Neumann, Condition::Robin(2.0)] {
        for dim in [2, 3] {
            for order in [1, 2] {
                let levels = if dim == 2 {
                    args.levels
                } else {
                    args.levels.saturating_sub(1)
                };
                println!(
                    "\n{condition:?}, {dim}D P{order} (expected L2 rate {}):",
                    order + 1
                );
                println!(
                    "{:>8} {:>8} {:>12} {:>6} {:>4}",
                    "h", "dofs", "L2 error", "rate", "CG"
                );
                let mut previous: Option<(f64, f64)> = None;
                for r in 1..=levels.max(1) {
                    let s = solve(
                        hierarchy(dim, 2, r)?,
                        order,
                        condition,
                        &Backend::native(),
                        args.tol,
                    )?;
                    let h = 0.5f64.powi(r as i32 + 1);
                    let rate = previous
                        .map(|(h0, e0)| format!("{:.2}", (e0 / s.l2_error).ln() / (h0 / h).ln()))
                        .unwrap_or_default();
                    println!(
                        "{h:>8.4} {:>8} {:>12.3e} {rate:>6} {:>4}",
                        s.dofs, s.l2_error, s.iterations
                    );
                    previous = Some((h, s.l2_error));
                }
            }
        }
    }
    Ok(())
}
