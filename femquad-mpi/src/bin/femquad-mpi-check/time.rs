//! Check 8: time integration over ranks. The heat equation
//! `u_t − Δu = f` with the manufactured solution `u = e^{−t}·φ(x)`,
//! `φ = 1 + x₀ + x₁/2` (harmonic: `f = −e^{−t}·φ`), `u = e^{−t}·φ` on the
//! boundary of the box at every time, advanced from `t = 0` by femquad's
//! `TimeIntegrator` on a [`DistProblem`] and serially on rank 0 on a
//! `DirichletProblem` with the same scheme, steps and preconditioner:
//!
//! * backward Euler and BDF2, 4 steps of 0.05, Jacobi-preconditioned;
//! * BDF2 preconditioned by multigrid ([`DistMultigrid`] on a
//!   [`DistHierarchy`] of two refinements in 2D, level 1 agglomerated on
//!   rank 0 by default, one in 3D; femquad's serial multigrid on the serial
//!   `MeshHierarchy`);
//! * Crank–Nicolson with adaptive steps (step doubling from 0.1 to the
//!   local error 1e-6), Jacobi: the stage's fixed values
//!   `θ·g + (1−θ)·u_n` read `u_n` on every rank's local entries;
//!
//! each: the solution at `t = 0.2` within 1e-8 (relative, max norm) of the
//! serial one, the same accepted and rejected steps, one Newton step per
//! nonlinear solve on both (the form is affine; three solves per adaptive
//! attempt), the Krylov iterations of the run within 1 of the serial ones.
//! The max nodal error to `u(0.2)` is printed (the schemes' time error: `φ`
//! is exact in P1).
//!
//! The backward-Euler run also writes its time series (`PvtuSeries`, every
//! 3rd step and the last): the `.pvd` rank 0 wrote lists steps 0, 3 and 4
//! with their times, each `.pvtu` exists and names pieces that exist.

use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

use femquad::backend::Backend;
use femquad::mesh::Mesh;
use femquad::multigrid::{MeshHierarchy, MultigridOptions};
use femquad::prelude::*;
use femquad::time::{Adaptive, RunStats, Scheme, StepControl, TimeIntegrator, TimeProblem};
use femquad_mpi::agglomerate::Agglomeration;
use femquad_mpi::output::PvtuSeries;
use femquad_mpi::problem::StepPreconditioner;
use femquad_mpi::{DistHierarchy, DistMesh, DistMultigrid, DistOperator, DistProblem, DistVector};

use crate::multigrid::{permuted, serial_order};
use crate::{rel_diff, verdict};

/// The steps: 4 of `DT`.
const DT: f64 = 0.05;
const T_END: f64 = 0.2;

/// `u_t − Δu = f`, `f = −e^{−t}·(1 + x₀ + x₁/2)`.
#[femquad::pointwise]
fn heat_mms<const D: usize>(
    u_t: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    t: f64,
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = u_t[0] + (-t).exp() * (1.0 + x[0] + 0.5 * x[1]);
    for d in 0..D {
        f1[0][d] = grad_u[0][d];
    }
}

/// The exact solution.
fn exact(t: f64, x: &[f64]) -> f64 {
    (-t).exp() * (1.0 + x[0] + 0.5 * x[1])
}

/// The Dirichlet boundary: the faces of the unit box.
fn on_boundary(x: &[f64]) -> bool {
    x.iter().any(|&c| c == 0.0 || c == 1.0)
}

fn form(s: FunctionSpace) -> Result<Form<f64>> {
    Form::new(s, HeatMms)
}

/// One run of the check: its name, scheme, steps, and multigrid or Jacobi.
struct Case {
    name: &'static str,
    scheme: Scheme,
    control: StepControl,
    multigrid: bool,
    /// Write the time series (every 3rd step and the last).
    series: bool,
}

/// What a run gives: the solution (serial numbering, on rank 0) and its
/// statistics.
struct Run {
    solution: Option<Vec<f64>>,
    /// Coordinates of the vertices of `solution` (on rank 0).
    coordinates: Option<Vec<f64>>,
    stats: RunStats,
    /// The series' directory, if written.
    series: Option<PathBuf>,
}

/// Check 8 on every rank (rank 0 compares and prints).
pub fn check(
    dist: &Rc<DistMesh>,
    serial_mesh: Option<&Arc<Mesh>>,
    backend: &Backend,
) -> Result<bool> {
    let cases = [
        Case {
            name: "backward Euler, Jacobi",
            scheme: Scheme::BackwardEuler,
            control: StepControl::Fixed(DT),
            multigrid: false,
            series: true,
        },
        Case {
            name: "BDF2, Jacobi",
            scheme: Scheme::Bdf2,
            control: StepControl::Fixed(DT),
            multigrid: false,
            series: false,
        },
        Case {
            name: "BDF2, multigrid",
            scheme: Scheme::Bdf2,
            control: StepControl::Fixed(DT),
            multigrid: true,
            series: false,
        },
        Case {
            name: "Crank–Nicolson, adaptive, Jacobi",
            scheme: Scheme::CRANK_NICOLSON,
            control: StepControl::Adaptive(Adaptive::new(2.0 * DT, 1e-6)),
            multigrid: false,
            series: false,
        },
    ];
    let mut ok = true;
    for case in &cases {
        let run = distributed(dist, backend, case)?;
        let compared = match (serial_mesh, &run.solution, &run.coordinates) {
            (Some(mesh), Some(solution), Some(coordinates)) => {
                compare(mesh, case, solution, coordinates, &run.stats)
            }
            _ => Ok(true),
        };
        ok &= dist.ranks().agree(compared)?;
        if let Some(dir) = &run.series {
            let checked = match dist.ranks().rank() {
                0 => check_series(dir),
                _ => Ok(true),
            };
            ok &= dist.ranks().agree(checked)?;
        }
    }
    Ok(ok)
}

/// The refinements of the multigrid's hierarchy: 2 in 2D (so that the
/// default agglomeration gathers level 1: the time state bound on rank 0's
/// serial levels too), 1 in 3D.
fn refinements(dim: usize) -> usize {
    if dim == 2 { 2 } else { 1 }
}

/// The run of `case` over the ranks.
fn distributed(dist: &Rc<DistMesh>, backend: &Backend, case: &Case) -> Result<Run> {
    let hierarchy = if case.multigrid {
        Some(DistHierarchy::new(dist, refinements(dist.layout().dim))?)
    } else {
        None
    };
    let mesh = hierarchy.as_ref().map_or(dist, |h| h.finest());
    let fixed = mesh.mask_where(1, on_boundary);
    let op = DistOperator::new(mesh, 1, 1, form, backend)?;
    let preconditioner = match &hierarchy {
        Some(h) => {
            let options = MultigridOptions::default();
            let agglomeration = Agglomeration::default();
            let mg = DistMultigrid::new(h, 1, form, backend, &fixed, options, agglomeration)?;
            StepPreconditioner::Multigrid(Box::new(mg))
        }
        None => StepPreconditioner::Jacobi,
    };
    let dim = mesh.layout().dim;
    let values: Vec<f64> = mesh
        .layout()
        .coordinates
        .chunks_exact(dim)
        .map(|x| exact(0.0, x))
        .collect();
    let problem = DistProblem::new(op, &fixed, &values, preconditioner)?;
    let u0 = problem.interpolate(&|x, u| u[0] = exact(0.0, x));
    let mut integrator = TimeIntegrator::new(problem, case.scheme)?
        .with_boundary_values(|t, x, g| g[0] = exact(t, x));
    let series = if case.series {
        // one directory for all ranks: rank 0's process id
        let mut id = vec![std::process::id()];
        mesh.ranks().broadcast_u32s(&mut id);
        let dir = std::env::temp_dir().join(format!("femquad-mpi-series-{}", id[0]));
        integrator = integrator.with_output(PvtuSeries::new(mesh.ranks(), &dir, "u", 3)?);
        Some(dir)
    } else {
        None
    };
    let (u, stats) = integrator.run(&u0, 0.0, T_END, case.control)?;
    let mut xs = DistVector::zeros(mesh, dim)?;
    xs.set_local_from_host(&mesh.layout().coordinates)?;
    Ok(Run {
        solution: u.gather_to_root()?,
        coordinates: xs.gather_to_root()?,
        stats,
        series,
    })
}

/// Rank 0: the backward-Euler run's series in `dir` (see the module
/// documentation), printed; the directory removed.
fn check_series(dir: &Path) -> Result<bool> {
    let read = |path: &Path| {
        std::fs::read_to_string(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })
    };
    let pvd = read(&dir.join("u.pvd"))?;
    let field = |line: &str, key: &str| -> Option<String> {
        let start = line.find(&format!("{key}=\""))? + key.len() + 2;
        let end = start + line[start..].find('"')?;
        Some(line[start..end].to_string())
    };
    let listed: Vec<(f64, String)> = pvd
        .lines()
        .filter(|l| l.trim_start().starts_with("<DataSet"))
        .filter_map(|l| Some((field(l, "timestep")?.parse().ok()?, field(l, "file")?)))
        .collect();
    let expected = [(0usize, 0.0), (3, 3.0 * DT), (4, T_END)];
    let mut pass = listed.len() == expected.len();
    let mut pieces = 0;
    for ((t, file), (step, te)) in listed.iter().zip(expected) {
        pass &= *file == format!("u_{step:06}.pvtu") && (t - te).abs() <= 1e-12;
        let pvtu = dir.join(file);
        let sources: Vec<String> = match read(&pvtu) {
            Ok(text) => text.lines().filter_map(|l| field(l, "Source")).collect(),
            Err(_) => Vec::new(),
        };
        pass &= !sources.is_empty() && sources.iter().all(|p| dir.join(p).exists());
        pieces += sources.len();
    }
    std::fs::remove_dir_all(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    println!(
        "time series over the ranks: the .pvd lists {listed:?} (steps 0, 3 and the last), \
         {pieces} pieces found {}",
        verdict(pass)
    );
    Ok(pass)
}

/// Rank 0: the serial run of `case` against the distributed one, printed.
fn compare(
    mesh: &Arc<Mesh>,
    case: &Case,
    solution: &[f64],
    coordinates: &[f64],
    stats: &RunStats,
) -> Result<bool> {
    let dim = mesh.dim();
    let hierarchy = if case.multigrid {
        Some(MeshHierarchy::new(mesh, refinements(dim))?)
    } else {
        None
    };
    let fine = hierarchy.as_ref().map_or(mesh, |h| h.finest()).clone();
    let space = FunctionSpace::new(fine.clone(), Element::lagrange(dim, 1)?, 1)?;
    let op = Operator::<f64>::new(form(space)?, &Backend::native())?;
    let fixed: Vec<u32> = (0..fine.n_vertices() as u32)
        .filter(|&v| on_boundary(fine.vertex(v as usize)))
        .collect();
    let values = op.space().interpolate(|x, g| g[0] = exact(0.0, x));
    let mut problem = DirichletProblem::new(op, &fixed, &values)?;
    match hierarchy {
        Some(h) => problem = problem.with_hierarchy(h)?,
        None => problem.set_preconditioner(Preconditioner::Jacobi),
    }
    let u0 = problem.space().interpolate(|x, u| u[0] = exact(0.0, x));
    let mut integrator = TimeIntegrator::new(problem, case.scheme)?
        .with_boundary_values(|t, x, g| g[0] = exact(t, x));
    let (u, serial) = integrator.run(&u0, 0.0, T_END, case.control)?;
    let order = serial_order(coordinates, fine.vertices(), dim)?;
    let u = u.to_host()?;
    let err = rel_diff(&permuted(solution, &order), &u);
    let exact_end = integrator
        .problem()
        .space()
        .interpolate(|x, e| e[0] = exact(T_END, x));
    let time_error = rel_diff(&u, &exact_end);
    // one Newton step per nonlinear solve: one solve per fixed step, three
    // per adaptive attempt
    let solves = |s: &RunStats| match case.control {
        StepControl::Fixed(_) => s.steps,
        StepControl::Adaptive(_) => 3 * (s.steps + s.rejected),
    };
    let pass = err <= 1e-8
        && stats.steps == serial.steps
        && stats.rejected == serial.rejected
        && stats.newton_iterations == solves(stats)
        && serial.newton_iterations == solves(&serial)
        && stats.linear_iterations.abs_diff(serial.linear_iterations) <= 1;
    println!(
        "time integration, {}: {} steps ({} rejected), {} Newton steps, {} Krylov iterations \
         (serial {}, {}, {}, {}), relative difference {err:.3e}, error to the exact solution \
         {time_error:.3e} {}",
        case.name,
        stats.steps,
        stats.rejected,
        stats.newton_iterations,
        stats.linear_iterations,
        serial.steps,
        serial.rejected,
        serial.newton_iterations,
        serial.linear_iterations,
        verdict(pass)
    );
    Ok(pass)
}
