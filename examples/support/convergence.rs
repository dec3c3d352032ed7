//! Convergence studies with manufactured solutions: solve on a sequence of
//! refined meshes, measure the `L²` error, estimate the rate.
//!
//! One solve ([`solve`]) is the whole pipeline of femquad:
//!
//! 1. a [`FunctionSpace`] of P1 or P2 elements on the mesh, with as many
//!    components as the physics has;
//! 2. a [`Form`](femquad::form::Form) of that space and physics, bound into an [`Operator`](femquad::operator::Operator), with a quadrature of degree `2·order`,
//!    evaluated by the chosen backend (the OpenCL kernel, or natively);
//! 3. a [`DirichletProblem`] fixing the boundary dofs to the exact
//!    solution, solved on the free dofs by matrix-free conjugate gradients
//!    (linear physics) or Newton–Krylov (nonlinear physics), every operator
//!    application an exact Jacobian action, preconditioned by geometric
//!    multigrid on the mesh hierarchy (or as [`SolveOptions::preconditioner`]
//!    says);
//! 4. the `L²` error against the exact solution ([`l2_error_cells`]) by a
//!    quadrature of degree `2·order + 3`.
//!
//! A study ([`study`]) repeats it on the unit square or cube with `n`
//! intervals per side for each `n` given — each mesh the uniform refinement
//! of a coarse mesh of `n_c` intervals ([`hierarchy`]), whose levels the
//! multigrid uses — and reports
//! `rate = log(e_{k−1}/e_k) / log(h_{k−1}/h_k)` with `h` the longest edge
//! ([`Mesh::h_max`]).

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use femquad::Result;
use femquad::backend::Backend;
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::multigrid::{MeshHierarchy, Multigrid};
use femquad::operator::Operator;
use femquad::output::{Vtu, VtuFormat};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::quadrature::{Quadrature, default_degree};
use femquad::solve::{
    DirichletProblem, JacobianProducts, NewtonOptions, NewtonStats, Preconditioner, l2_error_cells,
};
use femquad::space::FunctionSpace;

use crate::mms::{LAME_CONSTANTS, LameMms, PoissonMms, lame_exact, laplacian_exact};

/// A problem with a known solution.
#[derive(Clone, Copy)]
pub struct Manufactured {
    /// Short name for reports.
    pub name: &'static str,
    /// The PDE and its solution, one line for reports.
    pub description: &'static str,
    /// The physics, forcing included (`f0 = −f(x)`).
    pub physics: &'static dyn PointwiseEvalBoth,
    /// Run-time constants of the physics.
    pub constants: &'static [f64],
    /// The exact solution: `exact(x, out)` writes `N_comp` values.
    pub exact: fn(&[f64], &mut [f64]),
    /// `true` if the physics is affine in `u` (solved by CG), `false` for
    /// Newton–Krylov.
    pub linear: bool,
}

impl Manufactured {
    /// `−∇·((1 + x₀²)∇u) = f`, `u = Π cos(π x_j/2)` ([`crate::mms::poisson_mms`]).
    pub fn laplacian() -> Manufactured {
        Manufactured {
            name: "laplacian",
            description: "-div((1 + x0^2) grad u) = f, u = prod_j cos(pi x_j / 2)",
            physics: &PoissonMms,
            constants: &[],
            exact: laplacian_exact,
            linear: true,
        }
    }

    /// Lamé elasticity with `μ = 1`, `λ = 2`, `u_c = Π cos(π x_j/2 + c/2)`
    /// ([`crate::mms::lame_mms`]).
    pub fn lame() -> Manufactured {
        Manufactured {
            name: "lame",
            description: "-div(mu (grad u + grad u^T) + lambda (div u) I) = f, mu = 1, lambda = 2, \
                          u_c = prod_j cos(pi x_j / 2 + c/2)",
            physics: &LameMms,
            constants: &LAME_CONSTANTS,
            exact: lame_exact,
            linear: true,
        }
    }

    /// Components of the solution in dimension `dim`.
    pub fn n_comp(&self, dim: usize) -> usize {
        self.physics.info().n_comp.resolve(dim)
    }
}

/// How to discretize and solve.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// Polynomial order, 1 or 2.
    pub order: usize,
    /// Where residuals are evaluated.
    pub backend: Backend,
    /// Relative tolerance: of CG's residual (linear problems) or of the
    /// nonlinear residual (Newton's `rtol`).
    pub tol: f64,
    /// Largest number of Krylov iterations of one linear solve.
    pub max_iter: usize,
    /// Newton's options for nonlinear problems (`rtol` is replaced by `tol`).
    pub newton: NewtonOptions,
    /// The preconditioner of the Krylov solves (default: multigrid).
    pub preconditioner: Preconditioner,
}

impl SolveOptions {
    /// Order `order` on `backend`, tolerance `tol`, 20 000 iterations at most,
    /// default Newton options, multigrid.
    pub fn new(order: usize, backend: Backend, tol: f64) -> SolveOptions {
        SolveOptions {
            order,
            backend,
            tol,
            max_iter: 20_000,
            newton: NewtonOptions::default(),
            preconditioner: Preconditioner::default(),
        }
    }
}

/// A solved problem.
pub struct Solution {
    /// The solution space.
    pub space: FunctionSpace,
    /// The solution, a global vector of `space`.
    pub u: Vec<f64>,
    /// Krylov iterations (CG, or GMRES summed over Newton steps).
    pub krylov_iterations: usize,
    /// Newton's statistics (nonlinear problems).
    pub newton: Option<NewtonStats>,
    /// Residual evaluations.
    pub evaluations: usize,
    /// `∫_c |u_h − u|²` per cell.
    pub cell_errors: Vec<f64>,
    /// `‖u_h − u‖_{L²}`.
    pub l2_error: f64,
    /// Wall-clock seconds of the solve (setup included, error excluded).
    pub seconds: f64,
    /// Multigrid levels (0 without multigrid).
    pub levels: usize,
}

/// Solves `problem` on `mesh` alone (a hierarchy of one level: with
/// multigrid, the coarse solve is the whole problem) — see [`solve_on`].
pub fn solve<R: EvalPrecision>(
    problem: &Manufactured,
    mesh: &Arc<Mesh>,
    opts: &SolveOptions,
) -> Result<Solution> {
    solve_on::<R>(problem, MeshHierarchy::single(mesh.clone()), opts)
}

/// Solves `problem` on the finest mesh of `hierarchy` with Dirichlet
/// conditions from the exact solution on every boundary node, residuals in
/// precision `R`, the multigrid (if chosen) on the hierarchy's levels, and
/// measures the `L²` error (see the [module docs](self)).
pub fn solve_on<R: EvalPrecision>(
    problem: &Manufactured,
    hierarchy: MeshHierarchy,
    opts: &SolveOptions,
) -> Result<Solution> {
    let t0 = Instant::now();
    let dim = hierarchy.finest().dim();
    let element = Element::lagrange(dim, opts.order)?;
    let space = FunctionSpace::new(hierarchy.finest().clone(), element, problem.n_comp(dim))?;
    let quadrature = Quadrature::simplex(dim, default_degree(opts.order))?;
    let form = Form::new(space.clone(), R::physics(problem.physics))?
        .with_quadrature(quadrature)?
        .with_constants(problem.constants)?;
    let op = Operator::<R>::new(form, &opts.backend)?;
    let mut dirichlet = DirichletProblem::on_hierarchy(op, hierarchy, problem.exact)?;
    dirichlet.set_preconditioner(opts.preconditioner.clone());
    let (u, krylov_iterations, newton) = if problem.linear {
        let (u, stats) = dirichlet.solve_linear(opts.tol, opts.max_iter)?;
        (u, stats.iterations, None)
    } else {
        let mut newton = opts.newton;
        newton.rtol = opts.tol;
        newton.linear.max_iter = opts.max_iter;
        let (u, stats) = dirichlet.solve_nonlinear(None, JacobianProducts::Exact, &newton)?;
        (u, stats.linear_iterations.iter().sum(), Some(stats))
    };
    let seconds = t0.elapsed().as_secs_f64();
    // the solution is downloaded once, for the error and the output
    let u: Vec<f64> = u.to_host()?.iter().map(|v| v.to_f64()).collect();
    let cell_errors = l2_error_cells(&space, &u, problem.exact, 2 * opts.order + 3)?;
    Ok(Solution {
        l2_error: cell_errors.iter().sum::<f64>().sqrt(),
        cell_errors,
        evaluations: dirichlet.evaluations(),
        levels: dirichlet
            .multigrid()
            .and_then(Multigrid::report)
            .map_or(0, |r| r.levels.len()),
        space,
        u,
        krylov_iterations,
        newton,
        seconds,
    })
}

/// The hierarchy whose finest mesh is the unit square or cube (`dim`) of
/// `n` intervals per side: a coarse mesh of `n_c` intervals (`n` halved
/// while it stays even and at least 2; vertex numbering and cell order
/// shuffled with `seed`) refined `log₂(n/n_c)` times.
pub fn hierarchy(dim: usize, n: usize, seed: u64) -> Result<MeshHierarchy> {
    let mut coarse = n;
    let mut refinements = 0;
    while coarse.is_multiple_of(2) && coarse / 2 >= 2 {
        coarse /= 2;
        refinements += 1;
    }
    let mesh = unit_box(
        dim,
        coarse,
        &MeshOptions {
            jitter: 0.0,
            shuffle: true,
            seed,
        },
    )?;
    MeshHierarchy::new(&mesh, refinements)
}

/// One row of a convergence table.
#[derive(Clone, Debug, PartialEq)]
pub struct Level {
    /// Intervals per side (0 for a mesh read from a file).
    pub n: usize,
    /// Longest edge.
    pub h: f64,
    /// Cells.
    pub cells: usize,
    /// Dofs (all, boundary ones included).
    pub dofs: usize,
    /// Krylov iterations.
    pub iterations: usize,
    /// Newton steps (nonlinear problems).
    pub newton_steps: Option<usize>,
    /// `‖u_h − u‖_{L²}`.
    pub l2_error: f64,
    /// Rate against the previous level.
    pub rate: Option<f64>,
    /// Seconds of the solve.
    pub seconds: f64,
}

/// `log(e_coarse/e_fine) / log(h_coarse/h_fine)`.
pub fn rate(e_coarse: f64, e_fine: f64, h_coarse: f64, h_fine: f64) -> f64 {
    (e_coarse / e_fine).ln() / (h_coarse / h_fine).ln()
}

/// The row of a solved mesh.
pub fn level(n: usize, mesh: &Mesh, s: &Solution, previous: Option<&Level>) -> Level {
    let h = mesh.h_max();
    Level {
        n,
        h,
        cells: mesh.n_cells(),
        dofs: s.space.n_dofs(),
        iterations: s.krylov_iterations,
        newton_steps: s.newton.as_ref().map(|n| n.iterations),
        l2_error: s.l2_error,
        rate: previous.map(|p| rate(p.l2_error, s.l2_error, p.h, h)),
        seconds: s.seconds,
    }
}

/// The result of a study: its rows, and the finest mesh with its solution.
pub struct Study {
    /// One row per mesh, coarse to fine.
    pub levels: Vec<Level>,
    /// The finest mesh.
    pub mesh: Arc<Mesh>,
    /// The hierarchy whose finest mesh it is.
    pub hierarchy: MeshHierarchy,
    /// The solution on it.
    pub solution: Solution,
}

impl Study {
    /// The rate between the last two levels, if there are two.
    pub fn final_rate(&self) -> Option<f64> {
        self.levels.last().and_then(|l| l.rate)
    }
}

/// Solves `problem` on the unit square or cube (`dim`) for every `n` in
/// `sizes` ([`hierarchy`]: nested uniform refinements, which convergence
/// rates need; vertex numbering and cell order shuffled, geometry
/// structured) and calls `report` with each row as soon as it is done.
pub fn study<R: EvalPrecision>(
    problem: &Manufactured,
    dim: usize,
    sizes: &[usize],
    opts: &SolveOptions,
    mut report: impl FnMut(&Level),
) -> Result<Study> {
    let mut levels: Vec<Level> = Vec::new();
    let mut finest = None;
    for &n in sizes {
        // Shuffled numbering exercises unstructured memory access.
        let h = hierarchy(dim, n, n as u64)?;
        let (mesh, keep) = (h.finest().clone(), h.clone());
        let s = solve_on::<R>(problem, h, opts)?;
        let row = level(n, &mesh, &s, levels.last());
        report(&row);
        levels.push(row);
        finest = Some((mesh, keep, s));
    }
    let (mesh, hierarchy, solution) =
        finest.ok_or_else(|| femquad::Error::arg("sizes", "no mesh size given"))?;
    Ok(Study {
        levels,
        mesh,
        hierarchy,
        solution,
    })
}

/// Header of the table printed by [`table_row`].
pub fn table_header(nonlinear: bool) -> String {
    let its = if nonlinear { "newton/gmres" } else { "cg its" };
    format!(
        "{:>5} {:>10} {:>9} {:>9} {:>12} {:>12} {:>6} {:>8}",
        "n", "h", "cells", "dofs", its, "L2 error", "rate", "time/s"
    )
}

/// One line of the convergence table.
pub fn table_row(l: &Level) -> String {
    let its = match l.newton_steps {
        Some(k) => format!("{k}/{}", l.iterations),
        None => l.iterations.to_string(),
    };
    let rate = l.rate.map_or("-".to_string(), |r| format!("{r:.2}"));
    let n = if l.n == 0 {
        "-".to_string()
    } else {
        l.n.to_string()
    };
    format!(
        "{n:>5} {:>10.4e} {:>9} {:>9} {its:>12} {:>12.4e} {rate:>6} {:>8.2}",
        l.h, l.cells, l.dofs, l.l2_error, l.seconds
    )
}

/// Writes a solution to a VTU file: point fields `u` (the solution),
/// `u_exact` (the exact solution at the nodes) and `error` (`u_h − u` at
/// the nodes), and the cell field `l2_error` (`(∫_c |u_h − u|²)^{1/2}`).
pub fn write_vtu(
    path: &Path,
    problem: &Manufactured,
    s: &Solution,
    format: VtuFormat,
) -> Result<()> {
    let nc = s.space.n_comp();
    let exact = s.space.interpolate(problem.exact);
    let error: Vec<f64> = s.u.iter().zip(&exact).map(|(a, b)| a - b).collect();
    let cell: Vec<f64> = s.cell_errors.iter().map(|e| e.sqrt()).collect();
    let mut vtu = Vtu::new(&s.space)?;
    vtu.add_point_field("u", nc, &s.u)?
        .add_point_field("u_exact", nc, &exact)?
        .add_point_field("error", nc, &error)?
        .add_cell_field("l2_error", 1, &cell)?;
    vtu.write(path, format)
}
