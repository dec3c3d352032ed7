//! The distributed benchmark: weak and strong scaling of `F(u)`, `J·v`, a
//! Jacobi-CG iteration and the halo exchange, every vector on the rank's
//! OpenCL device.
//!
//! ```text
//! mpirun -np N femquad-mpi-bench --cells-per-rank 2^24 [--dim 2] [--precision f64]
//!     [--strong] [--reps 5] [--shared-device] [--partition hilbert|metis]
//!     [--baseline ONE_RANK.csv] [--solve L] [--copy-mib M] [--breakdown]
//!     [--agglomerate-max-dofs N] [--agglomerated-assembled-max-dofs N]
//!     [--agglomerated-f32] [--agglomerated-dense-coarse-max-dofs N]
//!     [--trace FILE]
//! ```
//!
//! # What it does
//! * Rank 0 generates the unit box (`femquad::mesh::unit_box`, `n` squares
//!   or cubes per side, `n` the smallest with at least the requested cells),
//!   with `N·C` cells for `--cells-per-rank C` (weak scaling), or `C` cells
//!   in all with `--strong` (strong scaling: `C` is the one-rank size).
//! * Partition `hilbert` (the default; no METIS, so fast at any size): the
//!   cells renumbered along femquad's Hilbert curve
//!   ([`Mesh::renumbered_for_locality`]) and split into `N` contiguous
//!   ranges of equal size; `metis`: METIS k-way (slow on one rank for
//!   large meshes).
//! * Each rank opens the OpenCL device of its node-local rank
//!   ([`device_for_rank`]: of the kind of femquad's default device;
//!   `--shared-device` lets ranks share it, e.g. PoCL in a smoke test).
//! * Poisson (`−Δu = 1`, P1, `u` fixed on the boundary) on every rank's
//!   device; each measurement is warmed up once, then repeated `--reps`
//!   times: MPI barrier, the operation, its device work finished, the
//!   wall-clock time of the slowest rank; the median of the repetitions.
//!
//! # Measurements (one CSV row each, printed by rank 0)
//! * `F(u)`, `J·v`: one application each, the interior cells integrated
//!   while the ghost update's messages travel ([`DistOperator`]'s
//!   "Overlap"); `F(u)` at a new state each time (as in Newton: the
//!   state's ghosts updated), `J·v` at one state (as in a Krylov solve:
//!   only `v`'s ghosts updated, the state's kept from the last one).
//! * `F(u) no overlap`, `J·v no overlap`: the same with the interior
//!   cells integrated after the ghost update
//!   ([`DistOperator::set_overlap`]`(false)`): the same arithmetic, so the
//!   difference to `F(u)`, `J·v` is what the overlap hides.
//! * `CG iteration`: Jacobi-preconditioned CG on the constrained system
//!   prepared once ([`LinearStep`]: `b`, the fixed entries, the inverse
//!   diagonal), run for 5 and for 25 iterations; the difference of the
//!   times over 20 (CG's start and final residual check cancel). A
//!   difference that is not positive (noise) is an error, not a row.
//! * `halo`: one ghost update and one ghost accumulate of a vector alone.
//! * `multigrid solve` (with `--solve L`): the coarse box of `⌈n/2^L⌉`
//!   squares or cubes per side is partitioned and distributed, each rank
//!   refines its part `L` times ([`DistHierarchy`]), and Poisson on the
//!   finest level is solved by CG preconditioned with [`DistMultigrid`]
//!   (default options: Chebyshev degree 2) from the boundary values to a
//!   relative residual of 1e-8 (`10·ε` in `f32`): the multigrid setup
//!   ([`DistMultigrid::setup`]: smoothers, the agglomerated levels' setup)
//!   and the solve together, per repetition; `multigrid solve without
//!   setup`: the solve alone, from the same repetitions. Their `cells` and
//!   `dofs` are the finest level's (at least the other rows'), their
//!   `halo_seconds` empty (not separated); the iterations, and which
//!   levels are agglomerated on rank 0 and which distributed (with their
//!   global dofs, the serial levels assembled and the serial cycle's
//!   precision), are printed in `#` lines before the table.
//!   The agglomeration: levels `0..=L_a` on rank 0 with `L_a` the finest
//!   level below the finest with at most `--agglomerate-max-dofs N`
//!   global dofs (default
//!   [`AGGLOMERATE_MAX_DOFS`](femquad_mpi::agglomerate::AGGLOMERATE_MAX_DOFS); `0`: level 0 only,
//!   its direct solve), cycled there by femquad's serial multigrid with
//!   its default options, or: `--agglomerated-assembled-max-dofs N` (its
//!   levels of at most `N` dofs assembled, SpMV), `--agglomerated-f32`
//!   (its cycle in `f32`; needs every serial level above the coarsest
//!   assembled), `--agglomerated-dense-coarse-max-dofs N` (its coarsest
//!   level's dense inverse on the device) — femquad's `solve_bench`
//!   options `--assembled-max-dofs`, `--cycle-precision single`,
//!   `--dense-coarse-max-dofs`.
//!
//! Before the table, a `#` line gives the copy bandwidth of **each rank's**
//! device (femquad-bench's float4 copy kernel,
//! [`measure_copy`]: two buffers of `--copy-mib` MiB, default 1024 as
//! femquad-bench's, at most a quarter of the device's memory; the median
//! of 20 launches after 2 warm-ups), gathered to rank 0 in rank order.
//!
//! # Breakdown (with `--breakdown`)
//! After the table, `# breakdown,…` lines (a CSV behind `# `, so the table
//! stays as it is): for each rank and each of `F(u)` with and without
//! overlap, the median over the repetitions of the rank's own wall time of
//! the application (device work finished) and of its phases, from the
//! operator's [`Timeline`](femquad_mpi::timeline::Timeline), in seconds.
//! On the device (profiling events): `download` (the shared owned
//! entries, transfer queue), `upload` (the ghost values, transfer queue),
//! `interior`, `boundary` (the two parts of the cells on the compute
//! queue, from markers: from the end of the compute command before to the
//! marker's end). On the host (wall-clock stamps, one column per
//! [`HostStep`] in its order: the time from the step before to its end):
//! `copy`, `gathers`, `interior_enqueue`, `download_wait`, `agree`,
//! `messages` (the ghost update's), `upload_enqueue`, `boundary_enqueue`,
//! `check`, `accumulate_download_wait`, `accumulate_agree`,
//! `accumulate_messages`, `sums_enqueue`, `final_agree`; then `finish`: the
//! wall time less the host steps (the wait for the device work after the
//! last). Each column is a median on its own, so the host columns and
//! `finish` add up to about `wall`, not exactly. With overlap the interior
//! part runs while the download, the messages and the upload proceed; what
//! it hides is at most `min(interior, download + messages + upload)`.
//!
//! With `--solve` too, `# multigrid breakdown,…` lines: a header and one
//! row, the slowest rank's times in seconds (medians over the repetitions
//! where repeated): the one-time construction — `distribute` (the coarse
//! mesh partitioned and distributed), `hierarchy` ([`DistHierarchy::new`]:
//! each rank refining its part), `operator` (the finest
//! [`DistOperator`]), `multigrid` ([`DistMultigrid::new`]: every
//! distributed level's operator and transfers, the agglomerated levels
//! built on rank 0) — then per solve: `setup` (all of
//! [`DistMultigrid::setup`]), `smoothers`, `agglomerated_setup` (its
//! parts: [`MultigridTimes`](femquad_mpi::multigrid::MultigridTimes)),
//! `solve`, `iterations`, and per iteration
//! from separate repetitions in which each V-cycle's device work is
//! finished before it returns: `cycle` (a V-cycle), `agglomerated` (its
//! agglomerated coarse correction: gather, serial V-cycle on rank 0,
//! scatter) and `cg` (the iteration's time less the cycle: the operator,
//! the reductions, the updates).
//!
//! Columns: `measurement, precision, ranks, cells, dofs, seconds,
//! halo_seconds, gdofs_per_s, efficiency`. `halo_seconds` is the time of
//! the halo exchanges the operation performs, from the `halo` measurement
//! (`F(u)`: an update and an accumulate; `J·v` and a CG iteration: two
//! updates, of `u` and `v`, and an accumulate) — measured alone, not what
//! remains of it in an overlapped application. `gdofs_per_s` is global
//! dofs / seconds / 1e9. `efficiency` is empty unless `--baseline` names
//! the CSV of a one-rank run: then `t₁/t_N` (weak scaling) or `t₁/(N·t_N)`
//! (`--strong`) for the row of the same measurement (not for `halo`: one
//! rank has none).

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use femquad::PointwiseEval;
use femquad::backend::Backend;
use femquad::linalg::LinearOperator;
use femquad::mesh::refine::prepare_for_refinement;
use femquad::mesh::{Mesh, MeshOptions, unit_box};
use femquad::multigrid::{CyclePrecision, MultigridOptions};
use femquad::opencl::{Device, KernelOptions, TraceEntry, list_devices};
use femquad::physics::builtin::Poisson;
use femquad::prelude::*;
use femquad_bench::bandwidth::measure_copy;
use femquad_mpi::agglomerate::{AgglomeratedLevel, Agglomeration};
use femquad_mpi::comm::{Ranks, abort_on_panic};
use femquad_mpi::device::{Sharing, device_for_rank};
use femquad_mpi::mpi::collective::CommunicatorCollectives;
use femquad_mpi::mpi::datatype::Equivalence;
use femquad_mpi::partition::metis_partition;
use femquad_mpi::solve::{Krylov, LinearStep, solve_linear_preconditioned};
use femquad_mpi::timeline::HostStep;
use femquad_mpi::{DistHierarchy, DistMesh, DistMultigrid, DistOperator, DistVector};

const USAGE: &str = "usage: femquad-mpi-bench --cells-per-rank C [--dim 2|3] \
     [--precision f32|f64] [--strong] [--reps R] [--shared-device] \
     [--partition hilbert|metis] [--baseline ONE_RANK.csv] [--solve L] [--copy-mib M] \
     [--breakdown] [--agglomerate-max-dofs N] [--agglomerated-assembled-max-dofs N] \
     [--agglomerated-f32] [--agglomerated-dense-coarse-max-dofs N]  \
     (C, N: a number or 2^K)";

/// CG iterations of the two timed solves (their difference is timed).
const CG_SHORT: usize = 5;
const CG_LONG: usize = 25;

/// The command line.
struct Args {
    cells_per_rank: usize,
    dim: usize,
    precision: String,
    strong: bool,
    reps: usize,
    shared_device: bool,
    partition: String,
    baseline: Option<String>,
    /// Refinements of the multigrid solve's coarse mesh (`--solve L`).
    solve: Option<usize>,
    /// MiB of each buffer of the copy-bandwidth measurement.
    copy_mib: usize,
    /// Print the phases of `F(u)` per rank (`--breakdown`).
    breakdown: bool,
    /// The multigrid solve's agglomeration (`--agglomerate-max-dofs`,
    /// `--agglomerated-…`).
    agglomeration: Agglomeration,
    /// Where rank 0 writes its device's timeline of the first timed
    /// multigrid solve, setup excluded (`--trace FILE`).
    trace: Option<String>,
}

/// A number, or `B^K`.
fn parse_count(s: &str) -> Option<usize> {
    match s.split_once('^') {
        Some((b, k)) => b.parse::<usize>().ok()?.checked_pow(k.parse().ok()?),
        None => s.parse().ok(),
    }
}

fn parse() -> std::result::Result<Args, String> {
    let mut args = Args {
        cells_per_rank: 0,
        dim: 2,
        precision: "f64".into(),
        strong: false,
        reps: 5,
        shared_device: false,
        partition: "hilbert".into(),
        baseline: None,
        solve: None,
        copy_mib: 1024,
        breakdown: false,
        agglomeration: Agglomeration::default(),
        trace: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value; {USAGE}"));
        let count = |v: String| parse_count(&v).ok_or(format!("{flag}: `{v}` is not a count"));
        match flag.as_str() {
            "--cells-per-rank" => args.cells_per_rank = count(value()?)?,
            "--dim" => args.dim = count(value()?)?,
            "--reps" => args.reps = count(value()?)?,
            "--precision" => args.precision = value()?,
            "--partition" => args.partition = value()?,
            "--baseline" => args.baseline = Some(value()?),
            "--solve" => args.solve = Some(count(value()?)?),
            "--copy-mib" => args.copy_mib = count(value()?)?,
            "--strong" => args.strong = true,
            "--shared-device" => args.shared_device = true,
            "--breakdown" => args.breakdown = true,
            "--trace" => args.trace = Some(value()?),
            "--agglomerate-max-dofs" => {
                args.agglomeration.level = AgglomeratedLevel::MaxDofs(count(value()?)?);
            }
            "--agglomerated-assembled-max-dofs" => {
                args.agglomeration.options.assembled_max_dofs = count(value()?)?;
            }
            "--agglomerated-dense-coarse-max-dofs" => {
                args.agglomeration.options.dense_coarse_max_dofs = count(value()?)?;
            }
            "--agglomerated-f32" => {
                args.agglomeration.options.cycle_precision = CyclePrecision::Single;
            }
            _ => return Err(format!("unknown option {flag}; {USAGE}")),
        }
    }
    if args.cells_per_rank == 0 {
        return Err(format!(
            "--cells-per-rank is required and positive; {USAGE}"
        ));
    }
    if args.reps == 0 {
        return Err(format!("--reps must be at least 1; {USAGE}"));
    }
    if args.copy_mib == 0 {
        return Err(format!("--copy-mib must be at least 1; {USAGE}"));
    }
    Ok(args)
}

fn main() -> ExitCode {
    let Some(_universe) = femquad_mpi::mpi::initialize() else {
        eprintln!("MPI was initialised already");
        return ExitCode::from(2);
    };
    abort_on_panic();
    let ranks = Ranks::world();
    let rank = ranks.rank();
    let result = parse()
        .map_err(|e| Error::arg("command line", e))
        .and_then(|args| match args.precision.as_str() {
            "f64" => run::<f64>(ranks, &args),
            "f32" => run::<f32>(ranks, &args),
            other => Err(Error::arg(
                "--precision",
                format!("`{other}` is not f32 or f64"),
            )),
        });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // one write per line: the ranks' stderr interleave otherwise
            let line = format!("rank {rank}: error: {e}\n");
            eprint!("{line}");
            ExitCode::from(2)
        }
    }
}

/// The squares or cubes per side of the unit box with at least the cells
/// the command line asks for.
fn box_side(args: &Args, n_ranks: usize) -> usize {
    let total = if args.strong {
        args.cells_per_rank
    } else {
        args.cells_per_rank * n_ranks
    };
    // unit_box: 2n² triangles or 6n³ tetrahedra
    let (per, d) = if args.dim == 2 { (2, 2) } else { (6, 3) };
    let mut n = ((total as f64 / per as f64).powf(1.0 / d as f64))
        .floor()
        .max(1.0) as usize;
    while per * n.pow(d) < total {
        n += 1;
    }
    n
}

/// The mesh and its partition (rank 0), per the command line.
fn mesh_and_partition(args: &Args, n_ranks: usize) -> Result<(Mesh, Vec<u32>)> {
    let mesh = unit_box(args.dim, box_side(args, n_ranks), &MeshOptions::default())?;
    partitioned(args, mesh, n_ranks)
}

/// `mesh` and its partition per the command line.
fn partitioned(args: &Args, mesh: Mesh, n_ranks: usize) -> Result<(Mesh, Vec<u32>)> {
    match args.partition.as_str() {
        "hilbert" => {
            let (mesh, _) = mesh.renumbered_for_locality()?;
            let nc = mesh.n_cells();
            let part = (0..nc).map(|c| (c * n_ranks / nc) as u32).collect();
            Ok((mesh, part))
        }
        "metis" => {
            let part = metis_partition(&mesh, n_ranks)?;
            Ok((mesh, part))
        }
        other => Err(Error::arg(
            "--partition",
            format!("`{other}` is not hilbert or metis"),
        )),
    }
}

/// One row of the table.
struct Row {
    measurement: &'static str,
    cells: usize,
    dofs: usize,
    seconds: f64,
    /// `None`: not separated (the multigrid solve).
    halo_seconds: Option<f64>,
}

fn run<R: Real + Equivalence>(ranks: Ranks, args: &Args) -> Result<()>
where
    Poisson: PointwiseEval<R>,
{
    let n_ranks = ranks.size();
    let rank = ranks.rank();
    // the device: of the kind of femquad's default device
    let kind = femquad::opencl::DeviceSelector::from_env()
        .pick(&list_devices()?)?
        .kind;
    let sharing = if args.shared_device {
        Sharing::Shared
    } else {
        Sharing::Exclusive
    };
    let device = device_for_rank(&ranks, kind, sharing)?;
    let backend = Backend::opencl_with(device.clone(), KernelOptions::default());
    let copy = copy_bandwidth(&ranks, &device, args.copy_mib)?;
    let baseline = match (&args.baseline, rank) {
        (Some(path), 0) => Some(read_baseline(path)?),
        _ => None,
    };
    let global = if rank == 0 {
        Some(mesh_and_partition(args, n_ranks)?)
    } else {
        None
    };
    let n_cells = global.as_ref().map_or(0, |(m, _)| m.n_cells());
    let dist = DistMesh::new(ranks, global.as_ref().map(|(m, p)| (m, &p[..])))?;
    drop(global);
    let dofs = dist.layout().n_global_vertices;
    let poisson =
        |s: FunctionSpace| -> Result<Form<R>> { Form::new(s, Poisson)?.with_constants(&[1.0]) };
    let mut op = DistOperator::<R>::new(&dist, 1, 1, poisson, &backend)?;

    // u: a smooth field, fixed on the boundary of the unit box
    let dim = args.dim;
    let coords = &dist.layout().coordinates;
    let on_boundary = |x: &[f64]| x.iter().any(|&c| c == 0.0 || c == 1.0);
    let fixed: Vec<bool> = coords.chunks_exact(dim).map(on_boundary).collect();
    let field = |x: &[f64], k: f64| R::from_f64((k * x[0]).sin() + 0.5 * x[1]);
    let values: Vec<R> = coords.chunks_exact(dim).map(|x| field(x, 3.0)).collect();
    let mut u = op.vector()?;
    u.set_local_from_host(&values)?;
    let values: Vec<R> = coords.chunks_exact(dim).map(|x| field(x, 5.0)).collect();
    let mut v = op.vector()?;
    v.set_local_from_host(&values)?;
    let mut out = op.vector()?;

    let ranks = dist.ranks();
    let reps = args.reps;
    let halo_update = median_time(ranks, reps, || {
        v.ghost_update()?;
        v.local().finish()
    })?;
    let halo_accumulate = median_time(ranks, reps, || {
        out.ghost_accumulate()?;
        out.local().finish()
    })?;
    // F(u) at a new state each time, as in Newton (`local_mut` marks the
    // state as changed without touching its values: its ghosts are
    // updated); J·v at one state, as in a Krylov solve (only v's ghosts)
    let f = median_time(ranks, reps, || {
        u.local_mut();
        op.apply(&u, &mut out)?;
        out.local().finish()
    })?;
    let jv = median_time(ranks, reps, || {
        op.jacobian_action(&u, &v, &mut out)?;
        out.local().finish()
    })?;
    op.set_overlap(false);
    let f_no_overlap = median_time(ranks, reps, || {
        u.local_mut();
        op.apply(&u, &mut out)?;
        out.local().finish()
    })?;
    let jv_no_overlap = median_time(ranks, reps, || {
        op.jacobian_action(&u, &v, &mut out)?;
        out.local().finish()
    })?;
    op.set_overlap(true);
    let breakdown = if args.breakdown {
        let mut per_overlap = Vec::new();
        for overlap in [true, false] {
            op.set_overlap(overlap);
            per_overlap.push((overlap, phases(ranks, reps, &mut op, &mut u, &mut out)?));
        }
        op.set_overlap(true);
        per_overlap
    } else {
        Vec::new()
    };
    // the constrained system prepared once (b, the fixed entries, Jacobi's
    // inverse diagonal): the timed solves are femquad's CG alone
    let mut step = LinearStep::new(&mut op, &u, &fixed, true)?;
    let mut x = u.try_clone()?;
    let mut cg_run = |iterations: usize| -> Result<f64> {
        let mut performed = 0;
        let seconds = median_time(ranks, reps, || {
            let solver = Krylov::Cg {
                tol: 10.0 * R::EPSILON.to_f64(),
                max_iter: iterations,
            };
            performed = match step.solve(&mut op, &mut x, &solver, None) {
                Ok(stats) => stats.iterations,
                Err(Error::NoConvergence { iterations, .. }) => iterations,
                Err(e) => return Err(e),
            };
            x.local().finish()
        })?;
        if performed != iterations {
            return Err(Error::arg(
                "--cells-per-rank",
                format!(
                    "CG converged in {performed} iterations, before the {iterations} the \
                     benchmark times: use more cells"
                ),
            ));
        }
        Ok(seconds)
    };
    let (short, long) = (cg_run(CG_SHORT)?, cg_run(CG_LONG)?);
    let cg_iteration = (long - short) / (CG_LONG - CG_SHORT) as f64;
    if cg_iteration <= 0.0 || !cg_iteration.is_finite() {
        // the difference of two medians is noise here: no number, an error
        return Err(Error::internal(format!(
            "the CG iteration time came out as {cg_iteration:e} s ({CG_LONG} iterations \
             {long:e} s, {CG_SHORT} iterations {short:e} s): the timings are dominated by \
             noise; raise --reps"
        )));
    }

    let mut rows = vec![
        Row {
            measurement: "F(u)",
            cells: n_cells,
            dofs,
            seconds: f,
            halo_seconds: Some(halo_update + halo_accumulate),
        },
        Row {
            measurement: "J·v",
            cells: n_cells,
            dofs,
            seconds: jv,
            halo_seconds: Some(2.0 * halo_update + halo_accumulate),
        },
        Row {
            measurement: "F(u) no overlap",
            cells: n_cells,
            dofs,
            seconds: f_no_overlap,
            halo_seconds: Some(halo_update + halo_accumulate),
        },
        Row {
            measurement: "J·v no overlap",
            cells: n_cells,
            dofs,
            seconds: jv_no_overlap,
            halo_seconds: Some(2.0 * halo_update + halo_accumulate),
        },
        Row {
            measurement: "CG iteration",
            cells: n_cells,
            dofs,
            seconds: cg_iteration,
            halo_seconds: Some(2.0 * halo_update + halo_accumulate),
        },
        Row {
            measurement: "halo",
            cells: n_cells,
            dofs,
            seconds: halo_update + halo_accumulate,
            halo_seconds: Some(halo_update + halo_accumulate),
        },
    ];
    let mut multigrid_breakdown = None;
    if let Some(refinements) = args.solve {
        let run = multigrid_solve::<R>(args, refinements, &backend)?;
        if rank == 0 {
            println!(
                "# multigrid solve: {refinements} refinements, {} CG iterations",
                run.iterations
            );
            println!("{}", run.levels);
        }
        rows.extend(run.rows);
        multigrid_breakdown = run.breakdown;
    }
    if rank == 0 {
        println!(
            "# femquad-mpi-bench: {} scaling, {} ranks, device {}, partition {}",
            if args.strong { "strong" } else { "weak" },
            n_ranks,
            device_name(&device),
            args.partition
        );
        let per_rank: Vec<String> = copy
            .iter()
            .enumerate()
            .map(|(q, gb)| format!("rank {q} {gb:.1}"))
            .collect();
        println!(
            "# copy bandwidth per rank (GB/s, float4 copy, 2 × {} MiB): {}",
            args.copy_mib,
            per_rank.join(", ")
        );
        println!(
            "measurement,precision,ranks,cells,dofs,seconds,halo_seconds,gdofs_per_s,efficiency"
        );
        for row in &rows {
            // (none for the halo: one rank has no halo to compare with)
            let efficiency = baseline
                .as_ref()
                .filter(|_| row.measurement != "halo")
                .and_then(|b| b.iter().find(|(m, _)| m == row.measurement))
                .map(|(_, t1)| {
                    let e = if args.strong {
                        t1 / (n_ranks as f64 * row.seconds)
                    } else {
                        t1 / row.seconds
                    };
                    format!("{e:.3}")
                })
                .unwrap_or_default();
            println!(
                "{},{},{n_ranks},{},{},{:.6e},{},{:.4},{efficiency}",
                row.measurement,
                R::PRECISION,
                row.cells,
                row.dofs,
                row.seconds,
                row.halo_seconds
                    .map_or(String::new(), |h| format!("{h:.6e}")),
                row.dofs as f64 / row.seconds / 1e9
            );
        }
    }
    if let (0, Some((header, row))) = (rank, &multigrid_breakdown) {
        println!(
            "# multigrid breakdown: the slowest rank's times (seconds; per iteration: cycle, coarse, cg)"
        );
        println!("# multigrid breakdown,{header}");
        println!("# multigrid breakdown,{row}");
    }
    if rank == 0 && !breakdown.is_empty() {
        println!("# breakdown: per rank, F(u), medians of the repetitions (seconds)");
        let host: Vec<&str> = HostStep::ALL.iter().map(|s| s.name()).collect();
        println!(
            "# breakdown,rank,overlap,wall,download,upload,interior,boundary,{},finish",
            host.join(",")
        );
        for (overlap, per_rank) in &breakdown {
            for (q, values) in per_rank.iter().enumerate() {
                let fields: Vec<String> = values.iter().map(|x| format!("{x:.6e}")).collect();
                println!(
                    "# breakdown,{q},{},{}",
                    if *overlap { "on" } else { "off" },
                    fields.join(",")
                );
            }
        }
    }
    Ok(())
}

/// Collective: for each rank, in rank order, the medians over `reps`
/// repetitions (after one warm-up, each from an MPI barrier) of its wall
/// time of `F(u)` at a new state (device work finished), of the device phases of its
/// [`Timeline`](femquad_mpi::timeline::Timeline) (download, upload,
/// interior, boundary), of its host steps ([`HostStep::ALL`]) and of the
/// wall time less the host steps.
fn phases<R: Real + Equivalence>(
    ranks: &Ranks,
    reps: usize,
    op: &mut DistOperator<R>,
    u: &mut DistVector<R>,
    out: &mut DistVector<R>,
) -> Result<Vec<Vec<f64>>> {
    const FIELDS: usize = 6 + HostStep::ALL.len();
    op.apply(u, out)?;
    let mut samples: Vec<Vec<f64>> = (0..FIELDS).map(|_| Vec::with_capacity(reps)).collect();
    for _ in 0..reps {
        u.local_mut();
        ranks.comm().barrier();
        let start = Instant::now();
        op.apply(u, out)?;
        let finished = out.local().finish();
        let wall = start.elapsed().as_secs_f64();
        let p = ranks.agree(finished.and_then(|()| op.timeline().phases()))?;
        let host = op.timeline().host_times();
        let finish = wall - host.iter().sum::<f64>();
        let mut values = vec![wall, p.download, p.upload, p.interior, p.boundary];
        values.extend(host);
        values.push(finish);
        for (s, v) in samples.iter_mut().zip(values) {
            s.push(v);
        }
    }
    let medians: Vec<f64> = samples
        .iter_mut()
        .map(|s| {
            s.sort_by(f64::total_cmp);
            s[s.len() / 2]
        })
        .collect();
    Ok(ranks
        .all_gather_f64s(&medians)
        .chunks_exact(FIELDS)
        .map(<[f64]>::to_vec)
        .collect())
}

/// What [`multigrid_solve`] measured.
struct MultigridRun {
    /// `multigrid solve` and `multigrid solve without setup`.
    rows: Vec<Row>,
    /// The CG iterations of the solve.
    iterations: usize,
    /// With `--breakdown`: the `# multigrid breakdown` header and row.
    breakdown: Option<(String, String)>,
    /// The `# multigrid levels` line (rank 0's).
    levels: String,
}

/// Writes a device timeline ([`Device::take_trace`]) as CSV
/// ([`TraceEntry::csv`], for `scripts/trace-summary.py`).
fn write_trace(file: &str, trace: &[TraceEntry]) -> Result<()> {
    std::fs::write(file, TraceEntry::csv(trace))
        .map_err(|e| Error::arg("--trace", format!("cannot write {file}: {e}")))
}

/// The `multigrid solve` rows, with and without setup (see the module
/// documentation), its CG iterations and, with `--breakdown`, the
/// `# multigrid breakdown` header and row: a coarse box refined
/// `refinements` times on the ranks.
fn multigrid_solve<R: Real + Equivalence>(
    args: &Args,
    refinements: usize,
    backend: &Backend,
) -> Result<MultigridRun>
where
    Poisson: PointwiseEval<R>,
{
    let ranks = Ranks::world();
    let n_ranks = ranks.size();
    let clock = Instant::now();
    let global = if ranks.rank() == 0 {
        let side = box_side(args, n_ranks).div_ceil(1 << refinements);
        let coarse = unit_box(args.dim, side, &MeshOptions::default())?;
        Some(partitioned(
            args,
            prepare_for_refinement(&coarse)?,
            n_ranks,
        )?)
    } else {
        None
    };
    let coarse = DistMesh::new(ranks, global.as_ref().map(|(m, p)| (m, &p[..])))?;
    let distributed = clock.elapsed().as_secs_f64();
    let coarse_cells = coarse
        .ranks()
        .all_gather_u64(coarse.layout().cells.len() as u64);
    let cells = coarse_cells.iter().sum::<u64>() as usize * (1 << (args.dim * refinements));
    let clock = Instant::now();
    let hierarchy = DistHierarchy::new(&coarse, refinements)?;
    let refined = clock.elapsed().as_secs_f64();
    let fine = hierarchy.finest();
    let dim = args.dim;
    let poisson =
        |s: FunctionSpace| -> Result<Form<R>> { Form::new(s, Poisson)?.with_constants(&[1.0]) };
    let fixed = fine.mask_where(1, |x| x.iter().any(|&c| c == 0.0 || c == 1.0));
    let values: Vec<R> = fine
        .layout()
        .coordinates
        .chunks_exact(dim)
        .zip(&fixed)
        .map(|(x, &f)| {
            R::from_f64(if f {
                (3.0 * x[0]).sin() + 0.5 * x[1]
            } else {
                0.0
            })
        })
        .collect();
    let clock = Instant::now();
    let mut op = DistOperator::<R>::new(fine, 1, 1, poisson, backend)?;
    let bound = clock.elapsed().as_secs_f64();
    let mut u = op.vector()?;
    u.set_local_from_host(&values)?;
    let options = MultigridOptions::default();
    let clock = Instant::now();
    let mut mg = DistMultigrid::new(
        &hierarchy,
        1,
        poisson,
        backend,
        &fixed,
        options,
        args.agglomeration,
    )?;
    let made = clock.elapsed().as_secs_f64();
    let ranks = fine.ranks();
    let solver = Krylov::Cg {
        tol: 1e-8f64.max(10.0 * R::EPSILON.to_f64()),
        max_iter: 200,
    };
    // per repetition, the slowest rank's: setup + solve, solve, setup,
    // smoothers, coarse factorization
    let mut iterations = 0;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); 5];
    for rep in 0..=args.reps {
        let mut x = u.try_clone()?;
        ranks.comm().barrier();
        let start = Instant::now();
        mg.setup(&x)?;
        x.local().finish()?;
        let set_up = start.elapsed().as_secs_f64();
        let traced = match (&args.trace, backend) {
            (Some(file), Backend::OpenCl { device, .. }) if rep == 1 && ranks.rank() == 0 => {
                device.start_trace();
                Some((file, device))
            }
            _ => None,
        };
        iterations =
            solve_linear_preconditioned(&mut op, &mut x, &fixed, &solver, &mut mg)?.iterations;
        x.local().finish()?;
        let total = start.elapsed().as_secs_f64();
        if let Some((file, device)) = traced {
            write_trace(file, &device.take_trace()?)?;
        }
        let times = mg.times();
        let local = [
            total,
            total - set_up,
            set_up,
            times.smoothers,
            times.agglomerated_setup,
        ];
        let slowest = slowest_of(ranks, &local);
        if rep > 0 {
            for (s, t) in samples.iter_mut().zip(slowest) {
                s.push(t);
            }
        }
    }
    let medians: Vec<f64> = samples.iter_mut().map(|s| median(s)).collect();
    let row = |measurement, seconds| Row {
        measurement,
        cells,
        dofs: fine.layout().n_global_vertices,
        seconds,
        halo_seconds: None,
    };
    let rows = vec![
        row("multigrid solve", medians[0]),
        row("multigrid solve without setup", medians[1]),
    ];
    let levels = levels_line(&hierarchy, &mg, args);
    if !args.breakdown {
        return Ok(MultigridRun {
            rows,
            iterations,
            breakdown: None,
            levels,
        });
    }
    // per iteration: each V-cycle's device work finished before it returns
    let mut per_iteration: Vec<Vec<f64>> = vec![Vec::new(); 3];
    for rep in 0..=args.reps {
        let mut x = u.try_clone()?;
        mg.setup(&x)?;
        x.local().finish()?;
        let mut cycles = 0.0;
        let mut timed = |b: &DistVector<R>, z: &mut DistVector<R>| -> Result<()> {
            let start = Instant::now();
            mg.apply(b, z)?;
            let finished = z.local().finish();
            cycles += start.elapsed().as_secs_f64();
            ranks.agree(finished)
        };
        ranks.comm().barrier();
        let start = Instant::now();
        let n = solve_linear_preconditioned(&mut op, &mut x, &fixed, &solver, &mut timed)?
            .iterations
            .max(1) as f64;
        x.local().finish()?;
        let solve = start.elapsed().as_secs_f64();
        let agglomerated = mg.times().agglomerated_cycles;
        let local = [cycles / n, agglomerated / n, (solve - cycles) / n];
        let slowest = slowest_of(ranks, &local);
        if rep > 0 {
            for (s, t) in per_iteration.iter_mut().zip(slowest) {
                s.push(t);
            }
        }
    }
    let per_iteration: Vec<f64> = per_iteration.iter_mut().map(|s| median(s)).collect();
    let once = slowest_of(ranks, &[distributed, refined, bound, made]);
    let header = "ranks,distribute,hierarchy,operator,multigrid,setup,smoothers,\
                  agglomerated_setup,solve,iterations,cycle,agglomerated,cg"
        .to_string();
    let mut fields = vec![ranks.size().to_string()];
    fields.extend(once.iter().map(|t| format!("{t:.6e}")));
    fields.extend(
        [medians[2], medians[3], medians[4], medians[1]]
            .iter()
            .map(|t| format!("{t:.6e}")),
    );
    fields.push(iterations.to_string());
    fields.extend(per_iteration.iter().map(|t| format!("{t:.6e}")));
    Ok(MultigridRun {
        rows,
        iterations,
        breakdown: Some((header, fields.join(","))),
        levels,
    })
}

/// The `# multigrid levels` line: which levels of `hierarchy` `mg`
/// agglomerates on rank 0 and which it distributes, with their global
/// dofs, the serial levels assembled (rank 0's, after a setup) and the
/// serial cycle's precision.
fn levels_line<R: Real + Equivalence>(
    hierarchy: &DistHierarchy,
    mg: &DistMultigrid<R>,
    args: &Args,
) -> String {
    let dofs: Vec<String> = (0..hierarchy.n_levels())
        .filter_map(|l| hierarchy.mesh(l))
        .map(|m| m.layout().n_global_vertices.to_string())
        .collect();
    let la = mg.agglomerated_level();
    let assembled = mg
        .agglomerated()
        .map_or_else(Vec::new, |levels| levels.assembled_levels());
    let options = args.agglomeration.options;
    format!(
        "# multigrid levels: 0..={la} agglomerated on rank 0 (dofs {}; serial levels assembled \
         {assembled:?}, cycle {:?}, dense coarse solve up to {} dofs; --agglomerate-max-dofs \
         {}), {}..={} distributed (dofs {})",
        dofs[..=la].join(" "),
        options.cycle_precision,
        options.dense_coarse_max_dofs,
        match args.agglomeration.level {
            AgglomeratedLevel::MaxDofs(n) => n.to_string(),
            AgglomeratedLevel::Level(l) => format!("(level {l})"),
        },
        la + 1,
        dofs.len() - 1,
        dofs[la + 1..].join(" ")
    )
}

/// Collective: the largest of each of `local` over the ranks.
fn slowest_of(ranks: &Ranks, local: &[f64]) -> Vec<f64> {
    let all = ranks.all_gather_f64s(local);
    (0..local.len())
        .map(|i| {
            all.chunks_exact(local.len())
                .map(|r| r[i])
                .fold(0.0f64, f64::max)
        })
        .collect()
}

/// The median of `samples` (sorted in place; the upper one of two).
fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The median over `reps` repetitions (after one warm-up) of the slowest
/// rank's wall-clock time of `op`, which finishes its device work; every
/// repetition starts at an MPI barrier.
fn median_time(ranks: &Ranks, reps: usize, mut op: impl FnMut() -> Result<()>) -> Result<f64> {
    op()?;
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        ranks.comm().barrier();
        let start = Instant::now();
        op()?;
        let local = start.elapsed().as_secs_f64();
        let slowest = ranks
            .all_gather_f64(local)
            .into_iter()
            .fold(0.0f64, f64::max);
        times.push(slowest);
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

/// `(measurement, seconds)` of each row of a one-rank run's CSV.
fn read_baseline(path: &str) -> Result<Vec<(String, f64)>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::arg(
            "--baseline",
            format!("cannot read `{path}`: {e} (give the CSV a one-rank run printed)"),
        )
    })?;
    let mut rows = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split(',').collect();
        if fields.first() == Some(&"measurement") {
            continue;
        }
        let bad = || {
            Error::arg(
                "--baseline",
                format!("`{path}`: the line `{line}` is not a row of femquad-mpi-bench"),
            )
        };
        if fields.len() < 6 {
            return Err(bad());
        }
        if fields[2] != "1" {
            return Err(Error::arg(
                "--baseline",
                format!("`{path}` is a run on {} ranks, not on one", fields[2]),
            ));
        }
        let seconds: f64 = fields[5].parse().map_err(|_| bad())?;
        rows.push((fields[0].to_string(), seconds));
    }
    Ok(rows)
}

/// Collective: the copy bandwidth (GB/s) of every rank's `device`, in rank
/// order: femquad-bench's float4 copy with two buffers of `mib` MiB (at
/// most a quarter of the device's memory and its largest allocation), the
/// median of 20 launches after 2 warm-ups.
///
/// # Errors
/// A rank's device error, on every rank.
fn copy_bandwidth(ranks: &Ranks, device: &Arc<Device>, mib: usize) -> Result<Vec<f64>> {
    let info = device.info();
    let cap = info
        .max_mem_alloc_size
        .min(info.global_mem_size / 4)
        .max(1 << 20);
    let bytes = (mib as u64).saturating_mul(1 << 20).min(cap) as usize;
    let measured = measure_copy(device, bytes, 2, 20).map(|c| c.gb_per_s());
    let gb_per_s = ranks.agree(measured)?;
    Ok(ranks.all_gather_f64(gb_per_s))
}

/// The device's name, for the table's header.
fn device_name(device: &Arc<Device>) -> String {
    device.info().name.clone()
}
