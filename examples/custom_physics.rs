//! Your own physics, end to end: a nonlinear reaction–diffusion equation
//!
//! ```text
//! −∇·(κ(u) ∇u) + u³ = f  in Ω = (0,1)^d,   u = g on ∂Ω,   κ(u) = 1 + u²,
//! ```
//!
//! written as plain Rust with `#[pointwise]`, integrated by the OpenCL
//! kernel (the macro translates the function to OpenCL C), and solved by
//! Newton's method whose Jacobian-vector products `J(u)·v` are exact: the
//! macro differentiates the function (forward-mode automatic
//! differentiation) and the tangent runs in the same fused kernel. No
//! Jacobian is written by hand; `--jacobian differences` takes
//! `J v ≈ (F(u + h v) − F(u))/h` instead, for comparison. Each Newton
//! step's GMRES is preconditioned by geometric multigrid on the mesh
//! hierarchy, set up for that step's Jacobian (`--preconditioner jacobi` or
//! `none` for comparison).
//! The manufactured solution `u = exp(−|x|²)` gives `f` and `g`, so the
//! program can check itself: it prints Newton's residual history on each
//! mesh and the convergence table (`L²` error `O(h²)` for P1, `O(h³)` for P2).
//!
//! ```text
//! cargo run --release --example custom_physics
//! cargo run --release --example custom_physics -- --order 2 --dim 3
//! cargo run --release --example custom_physics -- --native --vtu u.vtu
//! cargo run --release --example custom_physics -- --jacobian differences
//! cargo run --release --example custom_physics -- --mesh examples/meshes/lshape.msh --refine 2
//! ```
//!
//! # The workflow in this file
//! 1. **Physics** ([`reaction_diffusion`]): a function of the values at one
//!    point. Parameters are recognized by name: `u`, `grad_u`, `x` (also
//!    `a`, `grad_a`, `constants`); outputs `f0` (multiplies the test
//!    function) and `f1` (multiplies its gradient), so the residual is
//!    `F(u)_i = ∫ φ_i f0 + ∇φ_i·f1`. Being generic over `const D` makes one
//!    function serve 2D and 3D. Helpers ([`kappa`]) are `#[pointwise]`
//!    functions too, listed in `helpers(…)`.
//! 2. **Discretization** ([`solve_on`]): a coarse mesh refined into a
//!    [`MeshHierarchy`]; on its finest mesh a [`FunctionSpace`] (P1/P2) →
//!    [`Form`] (space, quadrature, physics) bound into an [`Operator`] on a backend.
//! 3. **Boundary conditions and solver**: [`DirichletProblem`] fixes the
//!    boundary dofs and runs Newton–Krylov on the others, with the exact
//!    Jacobian action of the physics ([`Operator::jacobian_action`]) and a
//!    multigrid V-cycle on the hierarchy as preconditioner.
//! 4. **Checking and output**: [`l2_error`] against the exact solution,
//!    [`Vtu`] for ParaView.

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use femquad::backend::Backend;
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::Mesh;
use femquad::mesh::size::FieldSize;
use femquad::multigrid::MeshHierarchy;
use femquad::operator::Operator;
use femquad::output::{Vtu, VtuFormat};
use femquad::physics::EvalPrecision;
use femquad::quadrature::Quadrature;
use femquad::solve::{
    DirichletProblem, JacobianProducts, NewtonOptions, NewtonStats, Preconditioner, l2_error,
};
use femquad::space::FunctionSpace;
use femquad::{Precision, Result, pointwise};
use femquad_examples::cli::{NEWTON_TOLERANCE, SolveArgs, end_quietly_on_broken_pipe};
use femquad_examples::convergence::{Level, hierarchy, rate, table_header, table_row};

// ---------------------------------------------------------------------------
// 1. The physics
// ---------------------------------------------------------------------------

/// The diffusivity `κ(u) = 1 + u²`: a helper, callable from other
/// `#[pointwise]` functions (and from Rust).
#[pointwise]
pub fn kappa(u: f64) -> f64 {
    1.0 + u * u
}

/// The exact solution `u(x) = exp(−|x|²)`, for Dirichlet data and errors.
pub fn exact(x: &[f64], out: &mut [f64]) {
    out[0] = (-x.iter().map(|v| v * v).sum::<f64>()).exp();
}

/// `−∇·(κ(u)∇u) + u³ = f` in weak form: `f1 = κ(u) ∇u`, `f0 = u³ − f(x)`,
/// with `f` manufactured from `u_e = exp(−|x|²)`:
///
/// ```text
/// ∇u_e = −2x u_e,  |∇u_e|² = 4|x|² u_e²,  Δu_e = (4|x|² − 2D) u_e,
/// f = −κ(u_e) Δu_e − κ'(u_e) |∇u_e|² + u_e³,   κ'(u) = 2u.
/// ```
///
/// The macro generates `ReactionDiffusion`, a unit struct implementing
/// `femquad::Pointwise` (the OpenCL C) and `femquad::PointwiseEval<R>` for
/// `R = f32` and `f64` (the native evaluation).
#[pointwise(helpers(kappa))]
pub fn reaction_diffusion<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    // the forcing, from the exact solution at x
    let mut r2 = 0.0;
    for d in 0..D {
        r2 += x[d] * x[d];
    }
    let ue = (-r2).exp();
    let laplacian = (4.0 * r2 - 2.0 * (D as f64)) * ue;
    let grad2 = 4.0 * r2 * ue * ue;
    let f = -kappa(ue) * laplacian - 2.0 * ue * grad2 + ue * ue * ue;
    // the equation
    f0[0] = u[0] * u[0] * u[0] - f;
    let k = kappa(u[0]);
    for d in 0..D {
        f1[0][d] = k * grad_u[0][d];
    }
}

// ---------------------------------------------------------------------------
// 2–4. Discretize, solve, check
// ---------------------------------------------------------------------------

/// A solution on one mesh.
pub struct Solved {
    /// The P1/P2 space.
    pub space: FunctionSpace,
    /// The solution (one value per node).
    pub u: Vec<f64>,
    /// What Newton did.
    pub newton: NewtonStats,
    /// `‖u_h − u‖_{L²}`.
    pub l2_error: f64,
    /// Seconds of the solve.
    pub seconds: f64,
}

/// Solves the problem on `mesh` alone with P`order` elements (see
/// [`solve_on`]; one mesh: the multigrid is a direct solve there).
pub fn solve<R: EvalPrecision>(
    mesh: &Arc<Mesh>,
    order: usize,
    backend: &Backend,
    rtol: f64,
    jacobian: JacobianProducts,
) -> Result<Solved> {
    let h = MeshHierarchy::single(mesh.clone());
    solve_on::<R>(h, order, backend, rtol, jacobian, Preconditioner::default())
}

/// Solves the problem on the finest mesh of `hierarchy` with P`order`
/// elements, residuals in precision `R` on `backend`, Newton to the
/// relative residual `rtol` with Jacobian products `jacobian`, each GMRES
/// solve preconditioned by `preconditioner` (multigrid on the hierarchy's
/// levels by default, rebuilt at every Newton step).
pub fn solve_on<R: EvalPrecision>(
    hierarchy: MeshHierarchy,
    order: usize,
    backend: &Backend,
    rtol: f64,
    jacobian: JacobianProducts,
    preconditioner: Preconditioner,
) -> Result<Solved> {
    let t0 = std::time::Instant::now();
    let mesh = hierarchy.finest();
    let dim = mesh.dim();
    // the space of P1 or P2 elements, one component, on the finest mesh (shared)
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order)?, 1)?;
    // residual evaluation: quadrature of degree 2·order, OpenCL or native
    let quadrature = Quadrature::simplex(dim, 2 * order)?;
    // the physics evaluating in `R` (`ReactionDiffusion` implements both
    // precisions), bound with the space and quadrature into the form
    let form =
        Form::new(space.clone(), R::physics(&ReactionDiffusion))?.with_quadrature(quadrature)?;
    let op = Operator::<R>::new(form, backend)?;
    // u = g on the boundary; Newton–Krylov for the interior values, the
    // multigrid on the hierarchy's levels
    let mut problem = DirichletProblem::on_hierarchy(op, hierarchy, exact)?;
    problem.set_preconditioner(preconditioner);
    let mut newton = NewtonOptions {
        rtol,
        ..NewtonOptions::default()
    };
    if jacobian == JacobianProducts::Differences {
        // difference products are accurate to about √ε of the residual's
        // precision (1.5e-8 in f64, 3.5e-4 in f32): each GMRES solve is
        // asked for no more than 10 times that
        let reachable = 10.0 * R::EPSILON.to_f64().sqrt();
        newton.linear.tol = newton.linear.tol.max(reachable);
    }
    let (u, stats) = problem.solve_nonlinear(None, jacobian, &newton)?;
    let seconds = t0.elapsed().as_secs_f64();
    // download the solution (it lives where the residual does) and check it
    // against the exact solution
    let u: Vec<f64> = u.to_host()?.iter().map(|v| v.to_f64()).collect();
    let l2_error = l2_error(&space, &u, exact, 2 * order + 3)?;
    Ok(Solved {
        space,
        u,
        newton: stats,
        l2_error,
        seconds,
    })
}

/// Writes the solution and its nodal error to a VTU file.
pub fn write_vtu(path: &std::path::Path, s: &Solved, format: VtuFormat) -> Result<()> {
    let u_exact = s.space.interpolate(exact);
    let error: Vec<f64> = s.u.iter().zip(&u_exact).map(|(a, b)| a - b).collect();
    let mut vtu = Vtu::new(&s.space)?;
    vtu.add_point_field("u", 1, &s.u)?
        .add_point_field("error", 1, &error)?;
    vtu.write(path, format)
}

/// Nonlinear reaction-diffusion -div((1 + u^2) grad u) + u^3 = f on the unit
/// square or cube, physics written by you with #[pointwise]: a convergence
/// study with the manufactured solution u = exp(-|x|^2).
///
/// The #[pointwise] function is translated to OpenCL C and integrated by
/// femquad's thread-transposition kernel (or natively with --native); the
/// interior dofs are found by Newton's method with GMRES, exact
/// Jacobian-vector products from the macro's automatic differentiation of
/// the physics (no Jacobian written by hand), each GMRES solve
/// preconditioned by geometric multigrid. Prints, for each mesh of n = n0·2^k intervals per side: h, cells,
/// dofs, Newton steps and GMRES iterations, the L2 error, its rate (expected
/// 2 for P1, 3 for P2) and the seconds, then Newton's residual history. With
/// --mesh, one solve on a Gmsh mesh instead; --vtu writes the finest
/// solution and its error for ParaView.
#[derive(Parser)]
#[command(mut_arg("tol", |a| a.help(NEWTON_TOLERANCE.help())))]
struct Args {
    #[command(flatten)]
    solve: SolveArgs,
    /// Jacobian-vector products of Newton's linear solves: `exact` (the
    /// macro's derivatives of the physics) or `differences` of residuals.
    #[arg(long, value_parser = ["exact", "differences"], default_value = "exact")]
    jacobian: String,
}

fn newton_line(s: &Solved) -> String {
    let norms: Vec<String> = s
        .newton
        .residual_norms
        .iter()
        .map(|r| format!("{r:.1e}"))
        .collect();
    format!(
        "    Newton |F|: {}  ({} residual evaluations, {} exact J·v)",
        norms.join(" -> "),
        s.newton.residual_evaluations,
        s.newton.jacobian_products
    )
}

/// Default `(n0, levels)`: seconds on two CPU cores; `--levels` goes further.
fn default_sizes(dim: usize, order: usize) -> (usize, usize) {
    match (dim, order) {
        (2, 1) => (8, 4), // 8 … 64
        (2, _) => (4, 4), // 4 … 32
        (_, 1) => (4, 3), // 4 … 16
        _ => (2, 3),      // 2 … 8
    }
}

fn run<R: EvalPrecision>(args: &SolveArgs, jacobian: JacobianProducts) -> Result<()> {
    // sizes (or the mesh) before the backend: a bad --levels or --refine
    // is reported at once
    let field = FieldSize {
        order: args.order,
        n_comp: 1,
    };
    let file = args.gmsh.load(|_| field)?;
    let sizes = match file {
        Some(_) => Vec::new(),
        None => args.sizes(default_sizes(args.dim, args.order), 1)?,
    };
    let backend = args.backend()?;
    let rtol = args.tolerance(&NEWTON_TOLERANCE);
    println!("femquad custom physics: -div((1 + u^2) grad u) + u^3 = f, u = exp(-|x|^2)");
    println!(
        "P{} elements, residuals in {} by {}",
        args.order,
        R::PRECISION.name(),
        backend.describe()
    );
    let products = match jacobian {
        JacobianProducts::Exact => "exact J v from the physics' derivatives",
        JacobianProducts::Differences => "J v from residual differences",
    };
    let preconditioner = args.preconditioner()?;
    println!(
        "solver: Newton-Krylov (GMRES, {products}, preconditioner: {}), relative tolerance \
         {rtol:.0e}",
        preconditioner.name()
    );
    let format = if args.ascii {
        VtuFormat::Ascii
    } else {
        VtuFormat::Base64
    };
    if let Some(file) = file {
        println!("{}\n", file.describe());
        let mesh = file.hierarchy.finest().clone();
        let s = solve_on::<R>(
            file.hierarchy,
            args.order,
            &backend,
            rtol,
            jacobian,
            preconditioner,
        )?;
        println!("{}", table_header(true));
        println!("{}", table_row(&row(0, &mesh, &s, None)));
        println!("{}", newton_line(&s));
        if let Some(out) = &args.vtu {
            write_vtu(out, &s, format)?;
            println!("\nwrote {}", out.display());
        }
        return Ok(());
    }
    println!(
        "unit {}, n = {sizes:?}\n",
        if args.dim == 2 { "square" } else { "cube" }
    );
    println!("{}", table_header(true));
    let mut rows: Vec<Level> = Vec::new();
    let mut last = None;
    for n in sizes {
        // the unit box of n intervals as a refined coarse mesh (multigrid's levels)
        let h = hierarchy(args.dim, n, n as u64)?;
        let mesh = h.finest().clone();
        let s = solve_on::<R>(
            h,
            args.order,
            &backend,
            rtol,
            jacobian,
            preconditioner.clone(),
        )?;
        let r = row(n, &mesh, &s, rows.last());
        println!("{}", table_row(&r));
        println!("{}", newton_line(&s));
        rows.push(r);
        last = Some((mesh, s));
    }
    if let Some(r) = rows.last().and_then(|r| r.rate) {
        println!(
            "\nL2 rate over the last two refinements: {r:.2} (expected {} for P{})",
            args.order + 1,
            args.order
        );
    }
    if let (Some(out), Some((_, s))) = (&args.vtu, &last) {
        write_vtu(out, s, format)?;
        println!("wrote {}", out.display());
    }
    Ok(())
}

/// The table row of a solve.
fn row(n: usize, mesh: &Mesh, s: &Solved, previous: Option<&Level>) -> Level {
    let h = mesh.h_max();
    Level {
        n,
        h,
        cells: mesh.n_cells(),
        dofs: s.space.n_dofs(),
        iterations: s.newton.linear_iterations.iter().sum(),
        newton_steps: Some(s.newton.iterations),
        l2_error: s.l2_error,
        rate: previous.map(|p| rate(p.l2_error, s.l2_error, p.h, h)),
        seconds: s.seconds,
    }
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let all = Args::parse();
    let args = all.solve;
    let jacobian = match all.jacobian.as_str() {
        "differences" => JacobianProducts::Differences,
        _ => JacobianProducts::Exact,
    };
    let result = args.validate().and_then(|()| match args.precision {
        Precision::F64 => run::<f64>(&args, jacobian),
        Precision::F32 => run::<f32>(&args, jacobian),
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
