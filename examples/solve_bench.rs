//! Solve benchmark: time to a relative residual of 1e-8 and iterations for
//! Poisson and Lamé (2D/3D, P1/P2) with the multigrid preconditioner (or
//! point-block Jacobi, or none, for comparison), every vector on the device.
//!
//! ```text
//! cargo run --release --example solve_bench -- --suite --cells 16777216 --csv solve-2e24.csv   # the GPU run
//! cargo run --release --example solve_bench -- --suite --cells 1000000 --csv solve.csv
//! cargo run --release --example solve_bench -- --dim 3 --order 2 --physics lame --cells 262144
//! cargo run --release --example solve_bench -- --suite --preconditioner mg,jacobi --cells 65536
//! cargo run --release --example solve_bench -- --mesh examples/meshes/lshape3d.msh --refine 3 --physics lame
//! cargo run --release --example solve_bench -- --heat be,bdf2 --cells 2^24 --csv heat-2e24.csv   # the GPU run
//! ```
//!
//! Each case builds a coarse unit square or cube of `n0` intervals per side
//! and refines it `L` times (`n0·2^L` intervals: the decomposition whose
//! cell count is closest to `--cells`, with a coarse mesh of at most
//! `--max-coarse-cells` cells) — or reads a Gmsh mesh (`--mesh`) and
//! refines it `--refine` times —, the residual on the finest mesh, and a
//! Dirichlet problem on the whole boundary. `--cells` (`1e6`, `16M`, `2^24`:
//! femquad's one count parser) is checked before anything is built: a mesh
//! beyond `u32` indices or this machine's memory is refused at once, with
//! the most cells that fit.
//!
//! * **poisson**: `−Δu = 1`, `u = 0` on the boundary (the built-in `Poisson`);
//! * **lame**: `−∇·σ(u) = 0` with `E = 1`, `ν = 0.3`, the boundary displaced
//!   by `g(x) = 0.1 (x₁², x₀x₁(, x₂))` (the built-in `Lame`).
//!
//! It solves once by conjugate gradients to `‖b − A x‖ ≤ 1e-8 ‖b‖`
//! (`--tol`) and reports, per case and preconditioner: the mesh (hierarchy)
//! time, the problem setup time (residuals, multigrid levels, device
//! arrays, `DirichletProblem::prepare`: the finest residual's kernels built
//! and its geometry uploaded), the preconditioner setup time (diagonals,
//! eigenvalue estimates, coarse factorization), the solve time without that
//! setup (the right-hand side `−F(u_D)` and CG), iterations, the final
//! relative residual, and the time per iteration. `--csv` writes every
//! field of [`Row`] (serde). Timing starts after the OpenCL programs are
//! built: a warm-up solve on a small mesh of the same case runs first.
//! `--first-solution` skips that warm-up and reports the time from the
//! mesh's generation to the solution on the host, program builds included
//! — or their loads from the on-disk program cache (`ProgramCache`,
//! `FEMQUAD_PROGRAM_CACHE`) when a process before it built them.
//! `--profile` prints where the V-cycles' time goes, per level and phase
//! (`MultigridOptions::profile`), and the time of CG's operations alone —
//! among them the SpMV of the Jacobian assembled on the device, beside
//! `J·v` and `F(u)` on the same mesh (to compare with cuSPARSE's SpMV of
//! that matrix). `--measure-levels` decides each level up to
//! `--assembled-max-dofs` by timing both representations at setup.
//! `--trace FILE` writes the device timeline of the first timed solve (of
//! the first case and preconditioner) as CSV — `kernel,queued_ns,start_ns,
//! end_ns` per kernel and transfer, in enqueue order (`Device::start_trace`)
//! — to see the device's time per kernel and its idle gaps between them;
//! that solve's launches then keep events, so its time is not the
//! benchmark's.
//! `--cycle-precision f64,f32` solves each case twice, the V-cycle in the
//! working precision and in f32 inside the f64 CG (`CyclePrecision`;
//! needs `--assembled-max-dofs` ≥ the finest dofs), column
//! `cycle_precision`.
//!
//! `--heat be,bdf2` adds, after each Poisson case's solve, one
//! backward-Euler and one BDF2 step of the heat equation `u_t − Δu = 1`
//! (`u = 0` on the boundary, P1/P2 as the case) on the same mesh with the
//! same preconditioner, `Δt = --dt` (1e-3), from the non-trivial state
//! `u₀ = Π_d sin(πx_d) + x₀/2`: the time integrator (`femquad::time`) runs
//! two steps and the second is reported (for BDF2 the first BDF2 step; its
//! first step is backward Euler), timed from the end of the first to the
//! end of the second with the device finished at both (`--repeat`:
//! medians), with its Newton steps, GMRES iterations and multigrid
//! V-cycles — beside the stationary Poisson solve of the same mesh in the
//! same run (`scheme` = `stationary`), the comparison of issue #23's target
//! ("a backward-Euler step no slower than the stationary Poisson solve").
//!
//! Measured on PoCL (2 CPU cores, release, f64) at about 2·10⁵ cells, CG to
//! 1e-8: multigrid 8–14 iterations in every case against 124–3703 with
//! point-block Jacobi, 2–65× faster to the tolerance (setup included).

use std::cell::RefCell;
use std::f64::consts::PI;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Instant;

use clap::Parser;
use femquad::backend::Backend;
use femquad::backend::{Matrix, Vector};
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::mesh::refine::{prepare_for_refinement, refine};
use femquad::mesh::size::{FieldSize, Footprint, MeshSize, largest, parse_count, physical_memory};
use femquad::multigrid::{
    CyclePrecision, CycleProfile, JacobianLevels, LevelOperators, LevelSpaces, MeshHierarchy,
    Multigrid, MultigridOptions, SetupReport, SmallLevels,
};
use femquad::opencl::{Device, DeviceSelector, KernelOptions, ProgramCache, TraceEntry};
use femquad::operator::Operator;
use femquad::physics::builtin::{Lame, LameParameters, Poisson};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::quadrature::Quadrature;
use femquad::solve::{DirichletProblem, NewtonOptions, Preconditioner};
use femquad::space::{Components, FunctionSpace};
use femquad::sparse::CsrMatrix;
use femquad::time::{Scheme, StepControl, TimeIntegrator};
use femquad::vector::VectorOps;
use femquad::{Error, Precision, Result};
use femquad_examples::cli::{MeshArgs, MeshFile, end_quietly_on_broken_pipe, precision_parser};
use serde::Serialize;

/// A count as `parse_count` reads it (`1e9`, `2^20`, `16M`), or `0`.
fn count_or_zero(s: &str) -> femquad::Result<usize> {
    if s.trim() == "0" {
        Ok(0)
    } else {
        parse_count(s)
    }
}

/// Solve benchmark: CG to a relative residual of 1e-8 for Poisson and Lamé
/// (2D/3D, P1/P2) with geometric multigrid (or point-block Jacobi, or no
/// preconditioner), on the device; setup and solve timed apart; CSV output.
#[derive(Parser, Debug)]
struct Args {
    /// Run all 8 cases: {2D, 3D} x {P1, P2} x {poisson, lame}.
    #[arg(long, conflicts_with = "mesh")]
    suite: bool,
    /// Spatial dimension (one case; not with --suite or --mesh).
    #[arg(long, default_value_t = 2, conflicts_with_all = ["suite", "mesh"])]
    dim: usize,
    /// Lagrange order, 1 or 2 (one case; not with --suite).
    #[arg(long, default_value_t = 1, conflicts_with = "suite")]
    order: usize,
    /// poisson or lame (one case; not with --suite).
    #[arg(long, default_value = "poisson", conflicts_with = "suite")]
    physics: String,
    /// Target number of cells of the finest mesh: 16777216, 2^24, 1e6, 16M
    /// (the GPU run: 2^24); at most what u32 indices number and this
    /// machine's memory holds (more is an error that states the bound).
    #[arg(long, default_value = "2^16", value_parser = parse_count, conflicts_with = "mesh")]
    cells: usize,
    /// Largest number of cells of the coarse mesh that is refined (the
    /// default lets 2^24 cells come within 1 % in 2D, 7 % in 3D, with a
    /// coarsest level of a few thousand dofs).
    #[arg(long, default_value_t = 8192, value_parser = parse_count, conflicts_with = "mesh")]
    max_coarse_cells: usize,
    /// A Gmsh mesh instead of the unit square or cube (not with --suite,
    /// --dim, --cells, --max-coarse-cells).
    #[command(flatten)]
    gmsh: MeshArgs,
    /// Preconditioners, comma-separated: mg, jacobi, none.
    #[arg(long, default_value = "mg")]
    preconditioner: String,
    /// Relative residual of CG.
    #[arg(long, default_value = "1e-8")]
    tol: f64,
    /// Largest number of CG iterations.
    #[arg(long, default_value_t = 20_000, value_parser = parse_count)]
    max_iter: usize,
    /// Precision of residuals and vectors.
    #[arg(long, default_value = "f64", value_parser = precision_parser())]
    precision: Precision,
    /// Evaluate natively (host vectors) instead of on an OpenCL device.
    #[arg(long)]
    native: bool,
    /// OpenCL device (gpu, cpu, an index, part of a name; default FEMQUAD_DEVICE, else a GPU).
    #[arg(long)]
    device: Option<String>,
    /// Chebyshev degree of the multigrid smoother.
    #[arg(long)]
    degree: Option<usize>,
    /// Assemble every smoothed multigrid level of at most this many dofs on
    /// the device and apply it by SpMV (`MultigridOptions::assembled_max_dofs`;
    /// default 0: every level matrix-free).
    #[arg(long, default_value_t = 0, value_parser = count_or_zero)]
    assembled_max_dofs: usize,
    /// Solve a coarsest level of at most this many dofs on the device by
    /// its dense inverse (`MultigridOptions::dense_coarse_max_dofs`;
    /// default 0: the host factorization).
    #[arg(long, default_value_t = 0, value_parser = count_or_zero)]
    dense_coarse_max_dofs: usize,
    /// Decide each level of at most `--assembled-max-dofs` dofs by
    /// measurement (`SmallLevels::Measured`: one apply of each
    /// representation timed at setup, the faster kept) instead of
    /// assembling it.
    #[arg(long)]
    measure_levels: bool,
    /// Precision of the multigrid V-cycle, comma-separated for one row
    /// each (e.g. `f64,f32`): `f64` (or `working`: the problem's precision)
    /// or `f32` (or `single`: the cycle in single precision inside the
    /// f64 CG, `CyclePrecision::Single`; needs `--assembled-max-dofs` of at
    /// least the finest level's dofs). The CSV's `cycle_precision` column
    /// says which precision the cycle ran in (f32 on an f32 problem either
    /// way).
    #[arg(long, default_value = "f64")]
    cycle_precision: String,
    /// Profile the V-cycles: print, per level, the milliseconds per cycle of
    /// each phase (smoothing, residual, restriction, prolongation, coarse
    /// solve) and the time of CG outside the cycles. Every phase then waits
    /// for the device, so the solve times of a profiled run are not the
    /// benchmark's.
    #[arg(long)]
    profile: bool,
    /// Solves per case (the same problem again, preconditioner setup
    /// included); the setup and solve times reported are the medians.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,
    /// Time to first solution: no warm-up solve before the timed one, so
    /// the time from the mesh's generation to the solution on the host
    /// (`first_solution_seconds`) includes the program builds — or their
    /// loads from the on-disk program cache (`FEMQUAD_PROGRAM_CACHE`): run
    /// twice, the second process finds them there.
    #[arg(long)]
    first_solution: bool,
    /// Heat-equation steps after each Poisson case, comma-separated: be
    /// (backward Euler), bdf2 — one row each, beside the stationary solve
    /// of the same mesh (Poisson cases only).
    #[arg(long, value_name = "SCHEMES")]
    heat: Option<String>,
    /// The time step of the heat steps (`--heat`).
    #[arg(long, default_value_t = 1e-3)]
    dt: f64,
    /// Newton's relative tolerance in the heat steps (`--heat`; the time
    /// integrator's default 1e-10): `--heat-rtol 1e-8` solves each step to
    /// the stationary solve's `--tol`, for an equal-tolerance comparison.
    #[arg(long, default_value_t = 1e-10)]
    heat_rtol: f64,
    /// Write the rows to this CSV file.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the device timeline of the first timed solve to this CSV file
    /// (kernel, queued_ns, start_ns, end_ns; OpenCL only).
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
}

/// One solve (a stationary solve or one heat step), one CSV row: the one
/// definition of the CSV's columns (serde, in this order) and of the
/// printed table's ([`print_row`]).
#[derive(Clone, Debug, Default, Serialize)]
struct Row {
    /// `poisson-2d-p1`, `heat-be-2d-p1`, …
    case: String,
    dim: usize,
    order: usize,
    /// poisson, lame or heat.
    physics: String,
    /// `stationary` (a linear solve by CG), or the heat step's scheme:
    /// `be` (backward Euler) or `bdf2`.
    scheme: String,
    /// The time step of a heat step (0 for a stationary solve).
    dt: f64,
    precision: String,
    /// The backend (device name or native).
    device: String,
    /// mg, jacobi or none.
    preconditioner: String,
    /// The precision the multigrid V-cycle ran in (`--cycle-precision`):
    /// f64 or f32; empty without multigrid.
    cycle_precision: String,
    /// `unit box`, or the Gmsh file (`--mesh`).
    mesh: String,
    /// Intervals per side of the coarse unit box (0 for a Gmsh mesh) and
    /// refinements.
    n0: usize,
    refinements: usize,
    cells: usize,
    dofs: usize,
    /// Multigrid levels (0 without multigrid) and the coarsest level's dofs.
    levels: usize,
    coarse_dofs: usize,
    /// Newton steps of the heat step (0 for a stationary solve).
    newton_iterations: usize,
    /// Krylov iterations: CG's of a stationary solve, GMRES's (all Newton
    /// steps) of a heat step.
    iterations: usize,
    /// Multigrid V-cycles applied by those iterations (0 without multigrid).
    vcycles: usize,
    /// Stationary: CG's final `‖b − A x‖/‖b‖`. Heat step: its Newton
    /// solve's final `‖F‖/‖F₀‖`.
    relative_residual: f64,
    /// Whether the solve met its tolerance, checked here from the numbers
    /// reported: stationary, `relative_residual ≤ --tol`; heat step, the
    /// final `‖F‖ ≤ max(rtol·‖F₀‖, 1e-12·s)` (Newton's tolerances:
    /// `rtol` = `--heat-rtol`, `s` the first step's initial `‖F‖`).
    converged: bool,
    /// Seconds: generating and refining the mesh.
    mesh_seconds: f64,
    /// Seconds: residuals, Dirichlet problem, multigrid levels and their device arrays
    /// (the sum of the three parts below and of the form's construction).
    problem_seconds: f64,
    /// Part of `problem_seconds`: the finest level's operator (spaces, kernels, mesh data and
    /// geometry on the device).
    operator_seconds: f64,
    /// Part of `problem_seconds`: the Dirichlet constraints (boundary dofs, interpolated values).
    constraints_seconds: f64,
    /// Part of `problem_seconds`: the multigrid levels (coarse spaces and operators, transfers,
    /// device vectors) and the random-vector kernel of the operator check.
    levels_seconds: f64,
    /// Solves timed (`--repeat`); the two times below are their medians.
    solves: u32,
    /// Seconds: preconditioner setup (diagonals, eigenvalue estimates, coarse factorization).
    setup_seconds: f64,
    /// Seconds: the solve without the preconditioner setup (`−F(u_D)` and
    /// CG; a heat step's Newton–GMRES).
    solve_seconds: f64,
    /// `setup_seconds + solve_seconds`: the time to compare between a heat
    /// step and the stationary solve of the same mesh.
    total_seconds: f64,
    /// `solve_seconds / iterations`.
    seconds_per_iteration: f64,
    /// Seconds from the start of the mesh's generation to the first
    /// solution on the host: mesh, problem, the first solve with its
    /// preconditioner setup, and the download of the solution.
    first_solution_seconds: f64,
    /// The breakdown of the first solution (`--first-solution`; 0 or empty
    /// otherwise): each part redone alone after the timed solve
    /// ([`Breakdown`]). Per-level columns list seconds separated by spaces.
    /// Part of `mesh_seconds`: the coarse mesh's generation.
    generation_seconds: f64,
    /// `prepare_for_refinement` and each refinement, coarse to fine.
    refinement_seconds: String,
    /// Part of `constraints_seconds`: the finest boundary (`finest_boundary`).
    boundary_seconds: f64,
    /// Part of `constraints_seconds`: its dofs (`dofs_on`).
    boundary_dofs_seconds: f64,
    /// Part of `constraints_seconds`: the boundary values (`interpolate`).
    boundary_values_seconds: f64,
    /// Part of `levels_seconds`: the levels' spaces (`LevelSpaces::new`).
    level_spaces_seconds: f64,
    /// Part of `levels_seconds`: the levels' fixed dofs (`fixed_dofs`).
    level_fixed_seconds: f64,
    /// The host transfers `Transfer::new` between levels `l` and `l + 1`.
    transfer_seconds: String,
    /// Part of `levels_seconds`: `Multigrid::new` (fixed dofs, transfers
    /// with their fixed dofs and kernels, work vectors).
    multigrid_seconds: f64,
    /// Part of `levels_seconds`: each coarser level's operator bound
    /// (`Operator::new`), coarsest first.
    coarse_operator_seconds: String,
    /// Part of the setup: the state injected into the coarser levels.
    inject_seconds: f64,
    /// Part of the setup: each smoothed level's Jacobian point-block diagonal.
    diagonal_seconds: String,
    /// Part of the setup: each smoothed level's eigenvalue estimate.
    eigen_seconds: String,
    /// Part of the setup: the coarsest Jacobian assembled.
    coarse_assembly_seconds: f64,
    /// Part of the setup: the rest (the coarse factorization, mostly).
    setup_rest_seconds: f64,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Physics {
    Poisson,
    Lame,
}

impl Physics {
    fn name(self) -> &'static str {
        match self {
            Physics::Poisson => "poisson",
            Physics::Lame => "lame",
        }
    }
}

/// `(n0, refinements)` whose finest mesh `n0·2^L` has the cell count closest
/// to `cells` with a coarse mesh of at most `max_coarse` cells (counted in
/// floating point: no overflow for any request; sizes are checked by
/// [`check_cells`]).
fn decompose(dim: usize, cells: usize, max_coarse: usize) -> Result<(usize, usize)> {
    // cells of the unit square (2n² triangles) or cube (6n³ tetrahedra)
    let count = |n: usize| MeshSize::unit_box(dim, n as f64).cells;
    let target = cells as f64;
    let mut best: Option<(f64, usize, usize)> = None;
    // coarse meshes beyond u32 cells are never wanted: n0 stops there
    for n0 in (1..).take_while(|&n0| count(n0) <= (max_coarse as f64).min(u32::MAX as f64)) {
        for l in 0..64 {
            let c = count(n0) * 2f64.powi(dim as i32 * l as i32);
            let miss = (c / target).ln().abs();
            if best.is_none_or(|b| miss < b.0 - 1e-12) {
                best = Some((miss, n0, l));
            }
            if c > 2.0 * target {
                break;
            }
        }
    }
    best.map(|(_, n0, l)| (n0, l)).ok_or_else(|| {
        Error::arg(
            "--max-coarse-cells",
            format!(
                "{max_coarse} is below the smallest coarse mesh ({} cells)",
                count(1)
            ),
        )
    })
}

/// The meshes of a case held together (the unit box of `n0` intervals and
/// its `l` refinements) and its field: what [`check_cells`] sizes.
fn case_sizes(case: &Case, n0: usize, l: usize) -> (Vec<MeshSize>, FieldSize) {
    let mut meshes = vec![MeshSize::unit_box(case.dim, n0 as f64)];
    for _ in 0..l {
        let next = meshes[meshes.len() - 1].refined();
        meshes.push(next);
    }
    (
        meshes,
        FieldSize {
            order: case.order,
            n_comp: case.n_comp(),
        },
    )
}

/// Checks `--cells` for `case` before anything is built: the hierarchy
/// `decompose` chooses, with the case's field on the finest, must fit
/// `u32` indices and `memory` ([`Footprint::too_large`]). The error names
/// `--cells` with the value, the mesh, the reason and about the most cells
/// that fit.
fn check_cells(case: &Case, cells: usize, max_coarse: usize, memory: Option<u64>) -> Result<()> {
    let why = |cells: usize| -> Result<Option<String>> {
        let (n0, l) = decompose(case.dim, cells, max_coarse)?;
        let (meshes, field) = case_sizes(case, n0, l);
        Ok(Footprint {
            meshes: &meshes,
            field: Some(field),
        }
        .too_large(memory)
        .map(|why| format!("n = {n0}·2^{l} intervals per side, has {why}")))
    };
    let Some(reason) = why(cells)? else {
        return Ok(());
    };
    let most = largest(1, cells, |c| matches!(why(c), Ok(None)));
    let most = match most {
        Some(m) => format!("about --cells {m:.2e} at most for this case", m = m as f64),
        None => "no mesh of this case fits".into(),
    };
    Err(Error::arg(
        "--cells",
        format!(
            "--cells {cells}: the {} mesh, {reason}; {most}",
            case.name()
        ),
    ))
}

fn parse_preconditioners(
    s: &str,
    degree: Option<usize>,
    profile: bool,
    assembled_max_dofs: usize,
    small_levels: SmallLevels,
    cycle_precisions: &[CyclePrecision],
    dense_coarse_max_dofs: usize,
) -> Result<Vec<(String, Preconditioner)>> {
    let mut pcs = Vec::new();
    for p in s.split(',').map(str::trim) {
        match p {
            "mg" => {
                for &cycle_precision in cycle_precisions {
                    let mut o = MultigridOptions::default();
                    if let Some(d) = degree {
                        o.degree = d;
                    }
                    o.profile = profile;
                    o.assembled_max_dofs = assembled_max_dofs;
                    o.small_levels = small_levels;
                    o.cycle_precision = cycle_precision;
                    o.dense_coarse_max_dofs = dense_coarse_max_dofs;
                    pcs.push((p.to_string(), Preconditioner::Multigrid(o)));
                }
            }
            "jacobi" => pcs.push((p.to_string(), Preconditioner::Jacobi)),
            "none" => pcs.push((p.to_string(), Preconditioner::None)),
            other => {
                return Err(Error::arg(
                    "--preconditioner",
                    format!("`{other}` is not one of mg, jacobi, none"),
                ));
            }
        }
    }
    Ok(pcs)
}

/// `--cycle-precision`: a comma-separated list of f64 (working) and f32
/// (single).
fn parse_cycle_precisions(s: &str) -> Result<Vec<CyclePrecision>> {
    s.split(',')
        .map(|p| match p.trim() {
            "f64" | "working" => Ok(CyclePrecision::Working),
            "f32" | "single" => Ok(CyclePrecision::Single),
            other => Err(Error::arg(
                "--cycle-precision",
                format!("`{other}` is not one of f64 (working), f32 (single)"),
            )),
        })
        .collect()
}

/// The precision the V-cycle of `pc` runs in on a problem in `R` (empty
/// without multigrid): Single is `f32`, Working `R`'s.
fn cycle_precision_of<R: EvalPrecision>(pc: &Preconditioner) -> String {
    match pc {
        Preconditioner::Multigrid(o) => match o.cycle_precision {
            CyclePrecision::Working => R::PRECISION.name().into(),
            CyclePrecision::Single => Precision::F32.name().into(),
        },
        Preconditioner::Jacobi | Preconditioner::None => String::new(),
    }
}

struct Case {
    dim: usize,
    order: usize,
    physics: Physics,
}

impl Case {
    /// Components of the solution: 1 (Poisson) or `dim` (Lamé).
    fn n_comp(&self) -> usize {
        match self.physics {
            Physics::Poisson => 1,
            Physics::Lame => self.dim,
        }
    }

    /// `poisson-2d-p1`, …
    fn name(&self) -> String {
        format!("{}-{}d-p{}", self.physics.name(), self.dim, self.order)
    }
}

/// The meshes of a case.
enum Meshes<'a> {
    /// The unit square or cube of `n0` intervals per side, refined `l` times.
    Box { n0: usize, l: usize },
    /// A Gmsh mesh and its refinements (`--mesh`, `--refine`), read in
    /// `seconds`.
    File { file: &'a MeshFile, seconds: f64 },
}

/// The hierarchy of a case, what it is called in the rows, and the
/// seconds it took.
struct CaseMeshes {
    hierarchy: MeshHierarchy,
    /// `unit box`, or the Gmsh file.
    name: String,
    n0: usize,
    refinements: usize,
    seconds: f64,
}

/// The options of the generated coarse meshes: shuffled (as an
/// unstructured mesh is numbered), seed 1.
fn box_options() -> MeshOptions {
    MeshOptions {
        shuffle: true,
        seed: 1,
        ..MeshOptions::default()
    }
}

/// Generates (or takes, for a Gmsh file) the hierarchy of `meshes`.
fn case_meshes(case: &Case, meshes: &Meshes) -> Result<CaseMeshes> {
    let t = Instant::now();
    Ok(match *meshes {
        Meshes::Box { n0, l } => {
            let coarse = unit_box(case.dim, n0, &box_options())?;
            let hierarchy = MeshHierarchy::new(&coarse, l)?;
            CaseMeshes {
                hierarchy,
                name: "unit box".to_string(),
                n0,
                refinements: l,
                seconds: t.elapsed().as_secs_f64(),
            }
        }
        Meshes::File { file, seconds } => CaseMeshes {
            hierarchy: file.hierarchy.clone(),
            name: file.path.display().to_string(),
            n0: 0,
            refinements: file.hierarchy.n_levels() - 1,
            seconds,
        },
    })
}

/// The V-cycles the problem's multigrid has applied so far.
fn vcycles<R: EvalPrecision>(problem: &DirichletProblem<R>) -> usize {
    problem.multigrid().map_or(0, Multigrid::cycles)
}

/// The levels and coarsest dofs of the problem's multigrid (0, 0 without).
fn levels_of<R: EvalPrecision>(
    problem: &DirichletProblem<R>,
    pc: &Preconditioner,
) -> (usize, usize) {
    match problem.multigrid().and_then(Multigrid::report) {
        Some(r) if matches!(pc, Preconditioner::Multigrid(_)) => {
            (r.levels.len(), r.levels.first().map_or(0, |l| l.dofs))
        }
        _ => (0, 0),
    }
}

/// Writes a device timeline as CSV: `kernel,queued_ns,start_ns,end_ns`,
/// one command a row in enqueue order (names quoted where they hold a
/// comma or a quote).
fn write_trace(file: &Path, trace: &[TraceEntry]) -> Result<()> {
    std::fs::write(file, TraceEntry::csv(trace))
        .map_err(|e| Error::arg("--trace", format!("cannot write {}: {e}", file.display())))?;
    println!(
        "device timeline: {} commands in {}",
        trace.len(),
        file.display()
    );
    Ok(())
}

/// Builds and solves one case on `meshes`; with `trace`, the device
/// timeline of its first solve is written there ([`write_trace`]).
fn run_case<R: EvalPrecision>(
    case: &Case,
    meshes: &Meshes,
    backend: &Backend,
    pname: &str,
    pc: &Preconditioner,
    args: &Args,
    mut trace: Option<&Path>,
) -> Result<Row> {
    let CaseMeshes {
        hierarchy,
        name: mesh,
        n0,
        refinements: l,
        seconds: mesh_seconds,
    } = case_meshes(case, meshes)?;
    let t = Instant::now();
    let n_comp = case.n_comp();
    let element = Element::lagrange(case.dim, case.order)?;
    let space = FunctionSpace::new(hierarchy.finest().clone(), element, n_comp)?;
    let quadrature = Quadrature::default_for(&element)?;
    let (cells, dofs) = (hierarchy.finest().n_cells(), space.n_dofs());
    let lame = LameParameters::from_young_poisson(1.0, 0.3)?;
    let (physics, constants): (&'static dyn PointwiseEvalBoth, Vec<f64>) = match case.physics {
        Physics::Poisson => (&Poisson, vec![1.0]),
        Physics::Lame => (&Lame, lame.constants().to_vec()),
    };
    let form = Form::new(space, R::physics(physics))?
        .with_quadrature(quadrature)?
        .with_constants(&constants)?;
    let part = Instant::now();
    let op = Operator::<R>::new(form, backend)?;
    let operator_seconds = part.elapsed().as_secs_f64();
    let g = |x: &[f64], out: &mut [f64]| match out.len() {
        1 => out[0] = 0.0,
        _ => {
            out[0] = 0.1 * x[1] * x[1];
            out[1] = 0.1 * x[0] * x[1];
            if out.len() > 2 {
                out[2] = 0.1 * x[2] * x[0];
            }
        }
    };
    let part = Instant::now();
    let mut problem = DirichletProblem::on_hierarchy(op, hierarchy, g)?;
    problem.set_preconditioner(pc.clone());
    let constraints_seconds = part.elapsed().as_secs_f64();
    let part = Instant::now();
    problem.prepare()?;
    let levels_seconds = part.elapsed().as_secs_f64();
    let problem_seconds = t.elapsed().as_secs_f64();
    // `repeat` solves of the same problem (each with its preconditioner
    // setup), the medians reported
    let (mut setups, mut solves) = (Vec::new(), Vec::new());
    let mut stats = None;
    let mut first_solution_seconds = 0.0;
    let mut first = None;
    let mut cycles = 0;
    for _ in 0..args.repeat {
        let before = vcycles(&problem);
        let traced = match (trace.take(), backend) {
            (Some(file), Backend::OpenCl { device, .. }) => {
                device.start_trace();
                Some((file, device))
            }
            _ => None,
        };
        let t = Instant::now();
        let (u, s) = problem.solve_linear(args.tol, args.max_iter)?;
        cycles = vcycles(&problem) - before;
        let total = t.elapsed().as_secs_f64();
        if let Some((file, device)) = traced {
            write_trace(file, &device.take_trace()?)?;
        }
        if first_solution_seconds == 0.0 {
            let download = Instant::now();
            let on_host = u.to_host()?;
            std::hint::black_box(&on_host);
            first_solution_seconds =
                mesh_seconds + problem_seconds + total + download.elapsed().as_secs_f64();
            first = Some(u);
        }
        setups.push(problem.preconditioner_seconds());
        solves.push(total - problem.preconditioner_seconds());
        stats = Some(s);
    }
    let stats = stats.ok_or_else(|| Error::arg("--repeat", "must be at least 1"))?;
    let last_solve = solves[solves.len() - 1];
    let (setup_seconds, solve_seconds) = (median(&mut setups), median(&mut solves));
    if let (Some(profile), Some(report)) = (
        problem.multigrid().and_then(Multigrid::profile),
        problem.multigrid().and_then(Multigrid::report),
    ) {
        print_profile(profile, report, last_solve, stats.iterations);
        print_operation_times(&mut problem)?;
    }
    let (levels, coarse_dofs) = levels_of(&problem, pc);
    let breakdown = match (&first, pc) {
        (Some(u), Preconditioner::Multigrid(_)) if args.first_solution => {
            Breakdown::measure(case, meshes, &problem, u, physics, &constants)?
        }
        _ => Breakdown::default(),
    };
    let row = Row {
        case: case.name(),
        dim: case.dim,
        order: case.order,
        physics: case.physics.name().into(),
        scheme: "stationary".into(),
        dt: 0.0,
        precision: R::PRECISION.name().into(),
        device: backend.describe(),
        preconditioner: pname.into(),
        cycle_precision: cycle_precision_of::<R>(pc),
        mesh,
        n0,
        refinements: l,
        cells,
        dofs,
        levels,
        coarse_dofs,
        newton_iterations: 0,
        iterations: stats.iterations,
        vcycles: cycles,
        relative_residual: stats.relative_residual,
        converged: stats.relative_residual <= args.tol,
        mesh_seconds,
        problem_seconds,
        operator_seconds,
        constraints_seconds,
        levels_seconds,
        solves: args.repeat,
        setup_seconds,
        solve_seconds,
        total_seconds: setup_seconds + solve_seconds,
        seconds_per_iteration: solve_seconds / stats.iterations.max(1) as f64,
        first_solution_seconds,
        ..Row::default()
    };
    Ok(breakdown.into_row(row))
}

/// Per-level seconds as one CSV field, separated by spaces.
fn seconds_list(v: &[f64]) -> String {
    v.iter()
        .map(|s| format!("{s:.4}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where the host time of the first solution goes (`--first-solution`):
/// each part redone alone after the timed solve, on the same backend, in
/// seconds — the coarse mesh's generation and each refinement, the
/// boundary constraints, the multigrid levels' spaces, fixed dofs,
/// transfers and operators, and the preconditioner setup at the first
/// solution (injection, diagonals, eigenvalue estimates, coarse assembly,
/// the rest: the factorization). Device work is finished after each part,
/// so a part is charged its own device time. The levels are all
/// matrix-free here (`--assembled-max-dofs` is not replayed).
#[derive(Debug, Default)]
struct Breakdown {
    generation: f64,
    refinements: Vec<f64>,
    boundary: f64,
    boundary_dofs: f64,
    boundary_values: f64,
    level_spaces: f64,
    level_fixed: f64,
    transfers: Vec<f64>,
    multigrid: f64,
    coarse_operators: Vec<f64>,
    inject: f64,
    diagonals: Vec<f64>,
    eigen: Vec<f64>,
    coarse_assembly: f64,
    setup_rest: f64,
}

/// The Jacobian levels of a [`Multigrid::setup`], timed: each call
/// finishes its device work, and the time between calls is charged to the
/// level whose eigenvalues are being estimated (its Lanczos vector
/// operations).
struct TimedLevels<'a, R: EvalPrecision> {
    ops: JacobianLevels<'a, R>,
    /// The level being set up, and the end of the last call.
    level: usize,
    mark: Instant,
    diagonals: Vec<f64>,
    eigen: Vec<f64>,
    assembly: f64,
}

impl<R: EvalPrecision> TimedLevels<'_, R> {
    /// Charges the time since the last call to the current level's estimate.
    fn lap(&mut self) -> Instant {
        let now = Instant::now();
        self.eigen[self.level] += (now - self.mark).as_secs_f64();
        now
    }
}

impl<R: EvalPrecision> LevelOperators<R> for TimedLevels<'_, R> {
    fn apply(&mut self, level: usize, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        let t = self.lap();
        self.ops.apply(level, x, y)?;
        y.finish()?;
        self.eigen[level] += t.elapsed().as_secs_f64();
        self.mark = Instant::now();
        Ok(())
    }

    fn block_diagonal(&mut self, level: usize, out: &mut Vector<R>) -> Result<()> {
        self.lap();
        let t = Instant::now();
        self.ops.block_diagonal(level, out)?;
        out.finish()?;
        self.diagonals[level] += t.elapsed().as_secs_f64();
        self.level = level;
        self.mark = Instant::now();
        Ok(())
    }

    fn assemble(&mut self, level: usize) -> Result<CsrMatrix> {
        self.lap();
        let t = Instant::now();
        let a = self.ops.assemble(level)?;
        self.assembly += t.elapsed().as_secs_f64();
        self.mark = Instant::now();
        Ok(a)
    }
}

impl Breakdown {
    /// Redoes the parts of `problem`'s first solution (`u`) alone.
    fn measure<R: EvalPrecision>(
        case: &Case,
        meshes: &Meshes,
        problem: &DirichletProblem<R>,
        u: &Vector<R>,
        physics: &'static dyn PointwiseEvalBoth,
        constants: &[f64],
    ) -> Result<Self> {
        let mut b = Breakdown::default();
        let lap = |t: &mut Instant| {
            let s = t.elapsed().as_secs_f64();
            *t = Instant::now();
            s
        };
        if let Meshes::Box { n0, l } = *meshes {
            let mut t = Instant::now();
            let coarse = unit_box(case.dim, n0, &box_options())?;
            b.generation = lap(&mut t);
            let mut mesh = prepare_for_refinement(&coarse)?;
            b.refinements.push(lap(&mut t));
            for _ in 0..l {
                mesh = refine(&mesh)?.into_mesh();
                b.refinements.push(lap(&mut t));
            }
        }
        let hierarchy = problem.hierarchy();
        let space = problem.space();
        let mut t = Instant::now();
        let boundary = hierarchy.finest_boundary()?;
        b.boundary = lap(&mut t);
        let dofs = space.dofs_on(&boundary, Components::All)?;
        b.boundary_dofs = lap(&mut t);
        std::hint::black_box((dofs, space.interpolate(|_, out| out.fill(0.0))));
        b.boundary_values = lap(&mut t);
        let spaces = LevelSpaces::new(hierarchy, space)?;
        b.level_spaces = lap(&mut t);
        let fixed = problem.fixed_dofs();
        std::hint::black_box(spaces.fixed_dofs(fixed)?);
        b.level_fixed = lap(&mut t);
        for l in 0..spaces.n_levels() - 1 {
            std::hint::black_box(spaces.transfer::<R>(l)?);
            b.transfers.push(lap(&mut t));
        }
        let options = problem
            .multigrid()
            .map(|m| *m.options())
            .ok_or_else(|| Error::internal("the multigrid was not built"))?;
        let mut multigrid = Multigrid::new(&spaces, fixed, u, options)?;
        u.finish()?;
        b.multigrid = lap(&mut t);
        let finest = problem.operator();
        let backend = finest.backend();
        let (mut coarse, mut states) = (Vec::new(), Vec::new());
        for l in 0..spaces.n_levels() - 1 {
            let space = spaces
                .space(l)
                .ok_or_else(|| Error::internal(format!("no level {l}")))?;
            let quadrature = if space.element() == finest.space().element() {
                finest.discretization().quadrature().clone()
            } else {
                Quadrature::default_for(&Element::lagrange(space.dim(), 1)?)?
            };
            let form = Form::new(space.clone(), R::physics(physics))?
                .with_quadrature(quadrature)?
                .with_constants(constants)?;
            let op = Operator::<R>::new(form, &backend)?;
            states.push(op.vector()?);
            u.finish()?;
            coarse.push(op);
            b.coarse_operators.push(lap(&mut t));
        }
        multigrid.inject(u, &mut states)?;
        u.finish()?;
        b.inject = lap(&mut t);
        let mut op = Operator::new(finest.form().clone(), &backend)?;
        let n_levels = spaces.n_levels();
        let mut timed = TimedLevels {
            ops: JacobianLevels {
                coarse: &mut coarse,
                states: &states,
                finest: &mut op,
                state: u,
                matrices: &[],
            },
            level: 0,
            mark: Instant::now(),
            diagonals: vec![0.0; n_levels],
            eigen: vec![0.0; n_levels],
            assembly: 0.0,
        };
        let t = Instant::now();
        multigrid.setup(&mut timed)?;
        let setup = t.elapsed().as_secs_f64();
        timed.lap();
        b.diagonals = timed.diagonals[1..].to_vec();
        b.eigen = timed.eigen[1..].to_vec();
        b.coarse_assembly = timed.assembly;
        b.setup_rest = setup
            - b.diagonals.iter().sum::<f64>()
            - b.eigen.iter().sum::<f64>()
            - b.coarse_assembly;
        Ok(b)
    }

    /// `row` with the breakdown's columns.
    fn into_row(self, row: Row) -> Row {
        Row {
            generation_seconds: self.generation,
            refinement_seconds: seconds_list(&self.refinements),
            boundary_seconds: self.boundary,
            boundary_dofs_seconds: self.boundary_dofs,
            boundary_values_seconds: self.boundary_values,
            level_spaces_seconds: self.level_spaces,
            level_fixed_seconds: self.level_fixed,
            transfer_seconds: seconds_list(&self.transfers),
            multigrid_seconds: self.multigrid,
            coarse_operator_seconds: seconds_list(&self.coarse_operators),
            inject_seconds: self.inject,
            diagonal_seconds: seconds_list(&self.diagonals),
            eigen_seconds: seconds_list(&self.eigen),
            coarse_assembly_seconds: self.coarse_assembly,
            setup_rest_seconds: self.setup_rest,
            ..row
        }
    }
}

/// The heat equation `u_t − Δu = 1`: `f0 = u_t − 1`, `f1 = ∇u`.
#[femquad::pointwise]
fn heat<const D: usize>(
    u_t: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = u_t[0] - 1.0;
    for d in 0..D {
        f1[0][d] = grad_u[0][d];
    }
}

/// A heat step's scheme (`--heat`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum HeatScheme {
    BackwardEuler,
    Bdf2,
}

impl HeatScheme {
    /// `be` or `bdf2`.
    fn name(self) -> &'static str {
        match self {
            HeatScheme::BackwardEuler => "be",
            HeatScheme::Bdf2 => "bdf2",
        }
    }

    fn scheme(self) -> Scheme {
        match self {
            HeatScheme::BackwardEuler => Scheme::BackwardEuler,
            HeatScheme::Bdf2 => Scheme::Bdf2,
        }
    }
}

/// The schemes of `--heat` (comma-separated `be`, `bdf2`).
fn parse_heat(s: &str) -> Result<Vec<HeatScheme>> {
    s.split(',')
        .map(|p| match p.trim() {
            "be" => Ok(HeatScheme::BackwardEuler),
            "bdf2" => Ok(HeatScheme::Bdf2),
            other => Err(Error::arg(
                "--heat",
                format!("`{other}` is not be or bdf2 (write e.g. --heat be,bdf2)"),
            )),
        })
        .collect()
}

/// What the time integrator reported after one step, with the time at
/// which the device had finished it.
struct StepRecord {
    at: Instant,
    /// The device's finish after the step (its error, if any).
    finished: Result<()>,
    newton: usize,
    linear: usize,
    cycles: usize,
    residual_norms: (f64, f64),
}

/// One heat step of `scheme` on the mesh of `case` (P1/P2 as the case,
/// one component): two steps from `u₀` by the time integrator, the second
/// reported (see the module's documentation); `--repeat` runs, medians.
fn run_heat_case<R: EvalPrecision>(
    case: &Case,
    meshes: &Meshes,
    backend: &Backend,
    (pname, pc): (&str, &Preconditioner),
    scheme: HeatScheme,
    args: &Args,
) -> Result<Row> {
    let CaseMeshes {
        hierarchy,
        name: mesh,
        n0,
        refinements: l,
        seconds: mesh_seconds,
    } = case_meshes(case, meshes)?;
    let t = Instant::now();
    let element = Element::lagrange(case.dim, case.order)?;
    let space = FunctionSpace::new(hierarchy.finest().clone(), element, 1)?;
    let (cells, dofs) = (hierarchy.finest().n_cells(), space.n_dofs());
    let heat: &'static dyn PointwiseEvalBoth = &Heat;
    let form =
        Form::new(space, R::physics(heat))?.with_quadrature(Quadrature::default_for(&element)?)?;
    let part = Instant::now();
    let op = Operator::<R>::new(form, backend)?;
    let operator_seconds = part.elapsed().as_secs_f64();
    let part = Instant::now();
    let mut problem = DirichletProblem::on_hierarchy(op, hierarchy, |_, g| g[0] = 0.0)?;
    problem.set_preconditioner(pc.clone());
    let constraints_seconds = part.elapsed().as_secs_f64();
    let part = Instant::now();
    problem.prepare()?;
    let levels_seconds = part.elapsed().as_secs_f64();
    let problem_seconds = t.elapsed().as_secs_f64();
    let u0 = problem.space().interpolate(|x, u| {
        u[0] = x.iter().map(|&v| (PI * v).sin()).product::<f64>() + 0.5 * x[0];
    });
    let records: Rc<RefCell<Vec<StepRecord>>> = Rc::default();
    let sink = Rc::clone(&records);
    let newton = NewtonOptions {
        rtol: args.heat_rtol,
        ..NewtonOptions::default()
    };
    let mut integrator = TimeIntegrator::new(problem, scheme.scheme())?
        .with_newton(newton)
        .with_progress(move |s| {
            let finished = s.u.finish();
            sink.borrow_mut().push(StepRecord {
                at: Instant::now(),
                finished,
                newton: s.newton_iterations,
                linear: s.linear_iterations,
                cycles: s.multigrid_cycles,
                residual_norms: s.residual_norms,
            });
        });
    let dt = args.dt;
    let (mut setups, mut solves, mut reported) = (Vec::new(), Vec::new(), None);
    let mut first_solution_seconds = 0.0;
    for _ in 0..args.repeat {
        records.borrow_mut().clear();
        let start = Instant::now();
        let (u, _) = integrator.run(&u0, 0.0, 2.0 * dt, StepControl::Fixed(dt))?;
        let steps = std::mem::take(&mut *records.borrow_mut());
        let [first, second] = <[StepRecord; 2]>::try_from(steps).map_err(|s| {
            Error::arg(
                "--dt",
                format!("the heat run from 0 to 2·dt took {} steps, not 2", s.len()),
            )
        })?;
        let StepRecord {
            at: first_at,
            finished,
            residual_norms: (scale, _),
            ..
        } = first;
        finished?;
        let StepRecord {
            at: second_at,
            finished,
            newton,
            linear,
            cycles,
            residual_norms,
        } = second;
        finished?;
        let step = second_at.duration_since(first_at).as_secs_f64();
        if first_solution_seconds == 0.0 {
            let download = Instant::now();
            std::hint::black_box(u.to_host()?);
            first_solution_seconds = mesh_seconds
                + problem_seconds
                + second_at.duration_since(start).as_secs_f64()
                + download.elapsed().as_secs_f64();
        }
        let setup = integrator.problem().preconditioner_seconds();
        setups.push(setup);
        solves.push(step - setup);
        reported = Some((scale, newton, linear, cycles, residual_norms));
    }
    let (scale, newton, linear, cycles, (initial, last)) =
        reported.ok_or_else(|| Error::arg("--repeat", "must be at least 1"))?;
    let (setup_seconds, solve_seconds) = (median(&mut setups), median(&mut solves));
    let (levels, coarse_dofs) = levels_of(integrator.problem(), pc);
    Ok(Row {
        case: format!("heat-{}-{}d-p{}", scheme.name(), case.dim, case.order),
        dim: case.dim,
        order: case.order,
        physics: "heat".into(),
        scheme: scheme.name().into(),
        dt,
        precision: R::PRECISION.name().into(),
        device: backend.describe(),
        preconditioner: pname.into(),
        cycle_precision: cycle_precision_of::<R>(pc),
        mesh,
        n0,
        refinements: l,
        cells,
        dofs,
        levels,
        coarse_dofs,
        newton_iterations: newton,
        iterations: linear,
        vcycles: cycles,
        relative_residual: if initial > 0.0 { last / initial } else { 0.0 },
        converged: last <= (args.heat_rtol * initial).max(1e-12 * scale),
        mesh_seconds,
        problem_seconds,
        operator_seconds,
        constraints_seconds,
        levels_seconds,
        solves: args.repeat,
        setup_seconds,
        solve_seconds,
        total_seconds: setup_seconds + solve_seconds,
        seconds_per_iteration: solve_seconds / linear.max(1) as f64,
        first_solution_seconds,
        ..Row::default()
    })
}

/// Prints the breakdown columns of a first solution's row ([`Breakdown`]).
fn print_breakdown(row: &Row) {
    println!(
        "breakdown, each part redone alone (s):\n  mesh: generation {:.3}, preparation and \
         refinements {}\n  constraints: boundary {:.3}, its dofs {:.3}, values {:.3}\n  levels: \
         spaces {:.3}, fixed dofs {:.3}, transfers {}, Multigrid::new {:.3}, coarser operators \
         {}\n  setup: inject {:.3}, diagonals {}, eigenvalue estimates {}, coarse assembly \
         {:.3}, rest (factorization) {:.3}",
        row.generation_seconds,
        row.refinement_seconds,
        row.boundary_seconds,
        row.boundary_dofs_seconds,
        row.boundary_values_seconds,
        row.level_spaces_seconds,
        row.level_fixed_seconds,
        row.transfer_seconds,
        row.multigrid_seconds,
        row.coarse_operator_seconds,
        row.inject_seconds,
        row.diagonal_seconds,
        row.eigen_seconds,
        row.coarse_assembly_seconds,
        row.setup_rest_seconds
    );
}

/// The header of the printed table (the columns of [`print_row`]).
fn print_header() {
    println!(
        "{:<17} {:>7} {:>9} {:>10} {:>6} {:>6} {:>5} {:>6} {:>8} {:>9} {:>9} {:>9} {:>9} {:>10}",
        "case",
        "pc",
        "cells",
        "dofs",
        "levels",
        "newton",
        "its",
        "vcyc",
        "rel.res",
        "mesh/s",
        "problem/s",
        "setup/s",
        "solve/s",
        "s/it"
    );
}

/// One line of the printed table.
fn print_row(row: &Row) {
    println!(
        "{:<17} {:>7} {:>9} {:>10} {:>6} {:>6} {:>5} {:>6} {:>8.1e} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>10.3e}{}",
        row.case,
        if row.cycle_precision.is_empty() {
            row.preconditioner.clone()
        } else {
            format!("{}-{}", row.preconditioner, row.cycle_precision)
        },
        row.cells,
        row.dofs,
        row.levels,
        row.newton_iterations,
        row.iterations,
        row.vcycles,
        row.relative_residual,
        row.mesh_seconds,
        row.problem_seconds,
        row.setup_seconds,
        row.solve_seconds,
        row.seconds_per_iteration,
        if row.converged { "" } else { "  NOT CONVERGED" }
    );
}

/// The median of `v` (not empty).
fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

/// The V-cycle profile of one solve: ms per cycle by level and phase.
fn print_profile(profile: &CycleProfile, report: &SetupReport, solve: f64, iterations: usize) {
    let per = |s: f64| 1e3 * s / profile.cycles.max(1) as f64;
    println!(
        "V-cycle profile: {} cycles, {:.3} ms per cycle; CG outside the cycles {:.3} ms per \
         iteration ({iterations} iterations)",
        profile.cycles,
        per(profile.seconds),
        1e3 * (solve - profile.seconds) / iterations.max(1) as f64
    );
    println!(
        "{:>5} {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "level", "dofs", "smooth", "residual", "restrict", "prolong", "coarse", "total"
    );
    for (l, (t, r)) in profile.levels.iter().zip(&report.levels).enumerate() {
        println!(
            "{l:>5} {:>11} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>10.3}",
            r.dofs,
            per(t.smoothing),
            per(t.residual),
            per(t.restriction),
            per(t.prolongation),
            per(t.coarse_solve),
            per(t.total())
        );
    }
}

/// The milliseconds of the operations of one CG iteration, each alone
/// (median of 11, the device finished before and after each).
fn print_operation_times<R: EvalPrecision>(problem: &mut DirichletProblem<R>) -> Result<()> {
    let n = problem.operator().space().n_dofs();
    let u = problem.operator().vector_from(
        &(0..n)
            .map(|i| R::from_f64((i % 7) as f64 * 0.1))
            .collect::<Vec<_>>(),
    )?;
    let v = problem.operator().vector_from(
        &(0..n)
            .map(|i| R::from_f64((i % 5) as f64 * 0.3 - 0.5))
            .collect::<Vec<_>>(),
    )?;
    let mut w = v.zeros_like()?;
    let time = |f: &mut dyn FnMut() -> Result<()>| -> Result<f64> {
        let mut t = Vec::new();
        for _ in 0..11 {
            v.finish()?;
            let s = Instant::now();
            f()?;
            v.finish()?;
            t.push(1e3 * s.elapsed().as_secs_f64());
        }
        t.sort_by(f64::total_cmp);
        Ok(t[5])
    };
    // an operator of its own, bound to the problem's form on its backend
    let mut op = Operator::new(
        problem.operator().form().clone(),
        &problem.operator().backend(),
    )?;
    let jv = time(&mut || op.jacobian_action(&u, &v, &mut w))?;
    let f = time(&mut || op.apply(&u, &mut w))?;
    // the Jacobian at u assembled where the operator evaluates (on a device
    // by its element matrices), applied by SpMV: the figure to set beside
    // J·v, F(u) and a vendor SpMV of the same matrix
    let a = op.assemble_matrix(&u)?;
    let spmv = time(&mut || a.apply(&v, &mut w))?;
    let lanes = match &a {
        Matrix::OpenCl(d) => format!("{} lanes per row", d.lanes()),
        Matrix::Native(_) => "host".to_string(),
    };
    println!(
        "assembled J: {} rows, {} nonzeros ({:.1} per row), SpMV {spmv:.3} ms ({lanes})",
        a.n_rows(),
        a.pattern().nnz(),
        a.pattern().nnz() as f64 / a.n_rows().max(1) as f64
    );
    let dot = time(&mut || v.dot(&u).map(|_| ()))?;
    let dots = time(&mut || v.dots(&[&v, &u]).map(|_| ()))?;
    let axpy = time(&mut || w.axpy(0.5, &v))?;
    println!(
        "operations alone, ms: J·v {jv:.3}, F(u) {f:.3}, dot {dot:.3}, dots(2) {dots:.3}, axpy \
         {axpy:.3}"
    );
    Ok(())
}

fn run<R: EvalPrecision>(args: &Args) -> Result<Vec<Row>> {
    if !(args.tol > 0.0 && args.tol < 1.0) {
        return Err(Error::arg(
            "--tol",
            format!("must lie in (0, 1), got {}", args.tol),
        ));
    }
    let heat = match &args.heat {
        Some(list) => parse_heat(list)?,
        None => Vec::new(),
    };
    if !heat.is_empty() {
        if !(args.dt > 0.0 && args.dt.is_finite()) {
            return Err(Error::arg(
                "--dt",
                format!("must be positive and finite, got {}", args.dt),
            ));
        }
        if !(args.heat_rtol > 0.0 && args.heat_rtol < 1.0) {
            return Err(Error::arg(
                "--heat-rtol",
                format!("must lie in (0, 1), got {}", args.heat_rtol),
            ));
        }
        if !args.suite && args.physics != "poisson" {
            return Err(Error::arg(
                "--heat",
                format!(
                    "the heat steps are scalar, beside a Poisson solve: use --physics poisson \
                     (or --suite, whose Poisson cases get them), not `{}`",
                    args.physics
                ),
            ));
        }
    }
    let pcs = parse_preconditioners(
        &args.preconditioner,
        args.degree,
        args.profile,
        args.assembled_max_dofs,
        if args.measure_levels {
            SmallLevels::Measured
        } else {
            SmallLevels::Assembled
        },
        &parse_cycle_precisions(&args.cycle_precision)?,
        args.dense_coarse_max_dofs,
    )?;
    let mut cases: Vec<Case> = if args.suite {
        let mut c = Vec::new();
        for physics in [Physics::Poisson, Physics::Lame] {
            for dim in [2, 3] {
                for order in [1, 2] {
                    c.push(Case {
                        dim,
                        order,
                        physics,
                    });
                }
            }
        }
        c
    } else {
        if !(args.dim == 2 || args.dim == 3) {
            return Err(Error::arg(
                "--dim",
                format!("must be 2 or 3, got {}", args.dim),
            ));
        }
        if !(args.order == 1 || args.order == 2) {
            return Err(Error::arg(
                "--order",
                format!("must be 1 or 2, got {}", args.order),
            ));
        }
        let physics = match args.physics.as_str() {
            "poisson" => Physics::Poisson,
            "lame" => Physics::Lame,
            other => {
                return Err(Error::arg(
                    "--physics",
                    format!("`{other}` is not poisson or lame"),
                ));
            }
        };
        vec![Case {
            dim: args.dim,
            order: args.order,
            physics,
        }]
    };
    // the meshes before the backend: a bad --cells or --refine is reported at once
    let t = Instant::now();
    let file = args.gmsh.load(|dim| {
        let case = Case { dim, ..cases[0] };
        FieldSize {
            order: case.order,
            n_comp: case.n_comp(),
        }
    })?;
    let seconds = t.elapsed().as_secs_f64();
    let mut meshes = Vec::new();
    match &file {
        Some(file) => {
            cases[0].dim = file.gmsh.mesh.dim();
            meshes.push(Meshes::File { file, seconds });
        }
        None => {
            let memory = physical_memory();
            for case in &cases {
                check_cells(case, args.cells, args.max_coarse_cells, memory)?;
                let (n0, l) = decompose(case.dim, args.cells, args.max_coarse_cells)?;
                meshes.push(Meshes::Box { n0, l });
            }
        }
    }
    let backend = if args.native {
        if args.trace.is_some() {
            return Err(Error::arg(
                "--trace",
                "is the timeline of an OpenCL device: not with --native",
            ));
        }
        Backend::native()
    } else {
        let selector = match &args.device {
            Some(d) => DeviceSelector::parse(d),
            None => DeviceSelector::from_env(),
        };
        let device = Device::open_with(&selector, ProgramCache::from_env()?)?;
        Backend::opencl_with(device, KernelOptions::from_env()?)
    };
    println!(
        "femquad solve benchmark: CG to relative residual {:e}, {} on {}",
        args.tol,
        R::PRECISION.name(),
        backend.describe()
    );
    if let Some(file) = &file {
        println!("{}", file.describe());
    }
    print_header();
    let mut rows = Vec::new();
    // the first timed solve's timeline, if asked for
    let mut trace = args.trace.as_deref();
    for (case, meshes) in cases.iter().zip(&meshes) {
        for (pname, pc) in &pcs {
            // warm-up (program builds, autotune cache) on a small refined mesh
            // of the case, so that every kernel the timed run uses is built
            if !args.first_solution {
                let (n0, l) = decompose(case.dim, 4096, 64)?;
                run_case::<R>(
                    case,
                    &Meshes::Box { n0, l },
                    &backend,
                    pname,
                    pc,
                    args,
                    None,
                )?;
            }
            let row = run_case::<R>(case, meshes, &backend, pname, pc, args, trace.take())?;
            print_row(&row);
            if args.first_solution {
                let programs = match &backend {
                    Backend::OpenCl { device, .. } => {
                        let st = device.stats();
                        format!(
                            "; programs: {} built in this process, {} of them loaded from the \
                             on-disk cache{}",
                            st.builds,
                            st.disk_hits,
                            device
                                .program_cache()
                                .map_or(" (off)".to_string(), |c| format!(
                                    " ({})",
                                    c.dir().display()
                                ))
                        )
                    }
                    Backend::Native(_) => String::new(),
                };
                println!(
                    "time to first solution: {:.3} s (mesh {:.3} s, problem {:.3} s = operator \
                     {:.3} s + constraints {:.3} s + levels {:.3} s + form, first solve with its \
                     setup and the download){programs}",
                    row.first_solution_seconds,
                    row.mesh_seconds,
                    row.problem_seconds,
                    row.operator_seconds,
                    row.constraints_seconds,
                    row.levels_seconds
                );
                print_breakdown(&row);
            }
            rows.push(row);
            if case.physics != Physics::Poisson {
                continue;
            }
            for &scheme in &heat {
                let pc = (pname.as_str(), pc);
                if !args.first_solution {
                    let (n0, l) = decompose(case.dim, 4096, 64)?;
                    let small = Meshes::Box { n0, l };
                    run_heat_case::<R>(case, &small, &backend, pc, scheme, args)?;
                }
                let row = run_heat_case::<R>(case, meshes, &backend, pc, scheme, args)?;
                print_row(&row);
                rows.push(row);
            }
        }
    }
    Ok(rows)
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let args = Args::parse();
    let result = match args.precision {
        Precision::F64 => run::<f64>(&args),
        Precision::F32 => run::<f32>(&args),
    };
    let rows = match result {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Some(path) = &args.csv {
        let write = || -> std::result::Result<(), Box<dyn std::error::Error>> {
            let mut w = csv::Writer::from_path(path)?;
            for r in &rows {
                w.serialize(r)?;
            }
            w.flush()?;
            Ok(())
        };
        if let Err(e) = write() {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote {}", path.display());
    }
    ExitCode::SUCCESS
}
