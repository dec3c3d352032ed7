//! The Laplacian and elasticity examples over MPI ranks: a convergence
//! study with a manufactured solution, every solve distributed.
//!
//! ```text
//! mpirun -np 4 target/release/examples/mpi_convergence [--physics laplacian|lame]
//!     [--dim 2|3] [--levels L] [--coarse N] [--opencl] [--shared-device]
//! ```
//! (build: `cargo build --release -p femquad-mpi --features mpi --example mpi_convergence`).
//!
//! The problems are the serial examples' (`examples/laplacian.rs`,
//! `examples/elasticity.rs`; `femquad_examples::convergence::Manufactured`):
//! `−∇·((1 + x₀²)∇u) = f` with `u = Π cos(π x_j/2)`, and Lamé elasticity
//! with `μ = 1`, `λ = 2`, `u_c = Π cos(π x_j/2 + c/2)`, `u` fixed to the
//! exact solution on the boundary of the unit square or cube.
//!
//! Rank 0 makes the coarse mesh (`N` intervals a side) and its METIS
//! partition; every rank refines its own cells `k = 1..=L` times
//! ([`DistHierarchy`]), so each level is partitioned and nested without
//! repartitioning. On each level: the P1 form bound on every rank's cells
//! ([`DistOperator`]), CG to `1e-10` preconditioned by the distributed
//! multigrid V-cycle ([`DistMultigrid`]: Chebyshev–Jacobi smoothing per
//! rank, the small levels agglomerated onto rank 0 and cycled there by
//! femquad's serial multigrid, the default `Agglomeration`), then the
//! `L²` error — each rank's cells' squared errors, summed in rank order.
//! Rank 0 prints the table: the error falls like `h²` (rate 2.00), the
//! iteration counts stay bounded, and neither depends on the number of
//! ranks.

use std::process::ExitCode;
use std::rc::Rc;

use femquad::Result;
use femquad::backend::Backend;
use femquad::form::Form;
use femquad::mesh::refine::prepare_for_refinement;
use femquad::mesh::{MeshOptions, unit_box};
use femquad::multigrid::MultigridOptions;
use femquad::opencl::{DeviceSelector, KernelOptions, list_devices};
use femquad::quadrature::Quadrature;
use femquad::solve::l2_error_cells;
use femquad::space::FunctionSpace;
use femquad_examples::convergence::Manufactured;
use femquad_mpi::agglomerate::Agglomeration;
use femquad_mpi::comm::{Ranks, abort_on_panic};
use femquad_mpi::device::{Sharing, device_for_rank};
use femquad_mpi::partition::metis_partition;
use femquad_mpi::solve::{Krylov, solve_linear_preconditioned};
use femquad_mpi::{DistHierarchy, DistMesh, DistMultigrid, DistOperator};

const USAGE: &str = "usage: mpi_convergence [--physics laplacian|lame] [--dim 2|3] \
                     [--levels L] [--coarse N] [--opencl] [--shared-device]";

/// The command line.
struct Args {
    problem: Manufactured,
    dim: usize,
    levels: usize,
    coarse: usize,
    opencl: bool,
    shared_device: bool,
}

fn parse() -> std::result::Result<Args, String> {
    let mut args = Args {
        problem: Manufactured::laplacian(),
        dim: 2,
        levels: 4,
        coarse: 4,
        opencl: false,
        shared_device: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value; {USAGE}"));
        let number = |v: String| {
            v.parse::<usize>()
                .map_err(|_| format!("{flag}: `{v}` is not a number; {USAGE}"))
        };
        match flag.as_str() {
            "--physics" => {
                args.problem = match value()?.as_str() {
                    "laplacian" => Manufactured::laplacian(),
                    "lame" | "elasticity" => Manufactured::lame(),
                    other => return Err(format!("unknown physics `{other}`; {USAGE}")),
                }
            }
            "--dim" => args.dim = number(value()?)?,
            "--levels" => args.levels = number(value()?)?,
            "--coarse" => args.coarse = number(value()?)?,
            "--opencl" => args.opencl = true,
            "--shared-device" => args.shared_device = true,
            _ => return Err(format!("unknown option {flag}; {USAGE}")),
        }
    }
    if !(2..=3).contains(&args.dim) || args.levels == 0 || args.coarse == 0 {
        return Err(format!(
            "--dim is 2 or 3, --levels and --coarse at least 1; {USAGE}"
        ));
    }
    Ok(args)
}

fn main() -> ExitCode {
    let Some(_universe) = femquad_mpi::mpi::initialize() else {
        eprintln!("MPI was initialised already");
        return ExitCode::from(2);
    };
    abort_on_panic();
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let ranks = Ranks::world();
    let rank = ranks.rank();
    match run(ranks, &args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // one write per line: the ranks' stderr interleave otherwise
            let line = format!("rank {rank}: error: {e}\n");
            eprint!("{line}");
            ExitCode::from(2)
        }
    }
}

fn run(ranks: Ranks, args: &Args) -> Result<()> {
    let (n_ranks, rank) = (ranks.size(), ranks.rank());
    let backend = if args.opencl {
        let kind = DeviceSelector::from_env().pick(&list_devices()?)?.kind;
        let sharing = if args.shared_device {
            Sharing::Shared
        } else {
            Sharing::Exclusive
        };
        Backend::opencl_with(
            device_for_rank(&ranks, kind, sharing)?,
            KernelOptions::default(),
        )
    } else {
        Backend::native()
    };
    let problem = args.problem;
    let (dim, n_comp) = (
        args.dim,
        if problem.name == "laplacian" {
            1
        } else {
            args.dim
        },
    );
    let global = if rank == 0 {
        let mesh = prepare_for_refinement(&unit_box(dim, args.coarse, &MeshOptions::default())?)?;
        let part = metis_partition(&mesh, n_ranks)?;
        Some((mesh, part))
    } else {
        None
    };
    let coarse = DistMesh::new(ranks, global.as_ref().map(|(m, p)| (m, &p[..])))?;
    if rank == 0 {
        println!(
            "{} on {n_ranks} ranks, {dim}D P1, {}",
            problem.description,
            backend_name(&backend)
        );
        println!(
            "{:>6} {:>10} {:>10} {:>5} {:>14} {:>6}",
            "level", "cells", "dofs", "its", "L2 error", "rate"
        );
    }
    let make_form = move |space: FunctionSpace| -> Result<Form<f64>> {
        Form::new(space, problem.physics)?
            .with_quadrature(Quadrature::simplex(dim, 2)?)?
            .with_constants(problem.constants)
    };
    let mut previous: Option<f64> = None;
    for level in 1..=args.levels {
        let hierarchy = DistHierarchy::new(&coarse, level)?;
        let (its, error, cells, dofs) = solve(&hierarchy, n_comp, &make_form, &backend, problem)?;
        if rank == 0 {
            // h halves with every level
            let rate = previous.map_or(String::new(), |e| format!("{:.2}", (e / error).log2()));
            println!("{level:>6} {cells:>10} {dofs:>10} {its:>5} {error:>14.6e} {rate:>6}");
        }
        previous = Some(error);
    }
    Ok(())
}

fn backend_name(backend: &Backend) -> String {
    match backend {
        Backend::Native(_) => "native".to_string(),
        Backend::OpenCl { device, .. } => format!("OpenCL: {}", device.info().name),
    }
}

/// One level: the multigrid-preconditioned CG solve and its `L²` error;
/// returns (iterations, error, global cells, global dofs).
fn solve(
    hierarchy: &DistHierarchy,
    n_comp: usize,
    make_form: &(impl Fn(FunctionSpace) -> Result<Form<f64>> + Copy),
    backend: &Backend,
    problem: Manufactured,
) -> Result<(usize, f64, usize, usize)> {
    let fine: &Rc<DistMesh> = hierarchy.finest();
    let layout = fine.layout();
    let dim = layout.dim;
    let on_boundary = |x: &[f64]| x.iter().any(|&c| c == 0.0 || c == 1.0);
    let fixed = fine.mask_where(n_comp, on_boundary);
    let mut op = DistOperator::new(fine, 1, n_comp, *make_form, backend)?;
    // the exact solution at the fixed dofs, 0 elsewhere
    let mut values = vec![0.0; layout.n_local() * n_comp];
    let mut exact = vec![0.0; n_comp];
    for (node, x) in layout.coordinates.chunks_exact(dim).enumerate() {
        (problem.exact)(x, &mut exact);
        for c in 0..n_comp {
            if fixed[node * n_comp + c] {
                values[node * n_comp + c] = exact[c];
            }
        }
    }
    let mut u = op.vector()?;
    u.set_local_from_host(&values)?;
    let mut mg = DistMultigrid::new(
        hierarchy,
        n_comp,
        *make_form,
        backend,
        &fixed,
        MultigridOptions::default(),
        Agglomeration::default(),
    )?;
    mg.setup(&u)?;
    let solver = Krylov::Cg {
        tol: 1e-10,
        max_iter: 500,
    };
    let stats = solve_linear_preconditioned(&mut op, &mut u, &fixed, &solver, &mut mg)?;
    // each rank's cells' squared errors (ghost values current), summed in rank order
    u.ghost_update()?;
    let local = u.local_to_host()?;
    let squared = match op.space() {
        Some(space) => l2_error_cells(space, &local, problem.exact, 5)?
            .iter()
            .sum(),
        None => 0.0,
    };
    let ranks = fine.ranks();
    let error = ranks.all_gather_f64(squared).iter().sum::<f64>().sqrt();
    let cells = ranks
        .all_gather_u64(layout.cells.len() as u64)
        .iter()
        .sum::<u64>() as usize;
    Ok((
        stats.iterations,
        error,
        cells,
        layout.n_global_vertices * n_comp,
    ))
}
