//! The program the MPI tests launch (`tests/mpirun.rs`):
//!
//! ```text
//! mpirun -np N femquad-mpi-check BACKEND PARTITION [--dim D] [--n CELLS] [--fail-rank K]
//!     [--nan-rank K]
//! ```
//!
//! BACKEND `native`, `opencl` (the tests' device: `FEMQUAD_DEVICE`, else
//! femquad's default), `opencl-shared` or `opencl-exclusive` (each rank the
//! device of its node-local rank among the devices of the tests' device's
//! kind, shared round-robin or one per rank: `device_for_rank`); PARTITION `metis`, `empty-rank` (METIS over N − 1
//! ranks, the last rank without cells), `ghost-only` (the last rank gets one
//! interior cell, all of whose vertices lower ranks own) or `thin` (ranks
//! 1.. get one column of cells each: 1-cell-thick parts). Rank 0 generates
//! the unit box (`CELLS` per side) and distributes it; then on every rank
//! and serially on rank 0 (the reference):
//!
//! 1. `F(u)`, `J(u)·v`, `diag J(u)` (point blocks) and the diagonal of
//!    `J(u)` of nonlinear diffusion (scalar) and of Lamé elasticity (`D`
//!    components) at fixed pseudo-random `u`, `v`: relative max difference
//!    to the serial result ≤ 1e-12;
//! 2. deterministic assembly: `F(u)` twice, bitwise equal, and `F·F`
//!    bitwise the same on every rank (its bits printed, for comparing runs);
//!    `F(u)` and `J(u)·v` bitwise the same with the interior cells
//!    overlapping the ghost update and without
//!    (`DistOperator::set_overlap`; each rank's interior and boundary cells
//!    printed), `diag J(u)` within 1e-14 (its kernel adds atomically);
//! 3. Poisson (`−Δu = 1`, `u = x₀ + x₁/2` on the boundary) by Jacobi-CG and
//!    by Jacobi-GMRES(30) to 1e-10, each: the solution within 1e-8 (relative, max norm) of the serial one,
//!    the iteration counts within 1;
//! 4. on an OpenCL backend (every distributed vector on the rank's device):
//!    one `F(u)` moves only the halo between host and device — the bytes
//!    read and written (femquad's device statistics) are exactly
//!    `(Σ ghosts + Σ shared owned)·N_comp·8` on every rank; and its device
//!    commands (`Timeline`) are the expected ones in order, each on its
//!    queue and waiting for what it needs, with and without overlap
//!    (`staging.rs`); on every backend `J·v` and `F(u)` agree on failure 3
//!    and 4 times.
//!
//! 5. multigrid (`multigrid.rs`): Poisson by CG preconditioned with the
//!    distributed multigrid on a hierarchy refined on the ranks, against
//!    femquad's serial multigrid — the solution within 1e-8, the iterations
//!    within 1 of the serial ones and growing by at most 1 under one
//!    refinement more, one V-cycle within 1e-12 of the serial V-cycle (level
//!    0 alone on rank 0); with the small levels agglomerated onto rank 0,
//!    the solution within 1e-8, the iterations within 1 of the serial ones
//!    and of the same hierarchy's without agglomeration, the agglomerated
//!    level's vertex map by coordinates, and rank 0's failures in the
//!    serial levels returned on every rank;
//! 6. Newton–Krylov (`newton.rs`): nonlinear diffusion by femquad's
//!    `newton_krylov` on distributed vectors against the serial solve — the
//!    solution within 1e-8, the same Newton steps;
//! 7. parallel VTU (`pvtu.rs`): `.pvtu` and pieces read back, every cell
//!    once, the point values the serial file's;
//! 8. time integration (`time.rs`): a manufactured heat problem advanced by
//!    femquad's `TimeIntegrator` on a `DistProblem` (backward Euler and
//!    BDF2, Jacobi; BDF2, multigrid) against the serial integrator — the
//!    solution within 1e-8, one Newton step per time step, the Krylov
//!    iterations within 1.
//!
//! The mesh is prepared for refinement (femquad's
//! `prepare_for_refinement`, the identity in 2D) before it is partitioned,
//! as femquad's serial hierarchy prepares its coarse mesh.
//!
//! Prints one line per check; exits 0 if all pass, 1 if a check fails, 2 on
//! an error (every rank: with `--fail-rank K`, cell of rank K is inverted
//! before distribution, and every rank must exit with that error; with
//! `--nan-rank K`, instead of the checks, one `F(u)` of nonlinear diffusion
//! with `u = 10²⁰⁰` at a vertex only rank K holds, whose residual is not
//! finite on rank K alone — found after the ghost update's messages — and
//! every rank must exit with rank K's error).

mod multigrid;
mod newton;
mod pvtu;
mod staging;
mod time;

use std::process::ExitCode;
use std::sync::Arc;

use femquad::backend::{Assembly, Backend, Vector};
use femquad::linalg::Jacobi;
use femquad::mesh::refine::prepare_for_refinement;
use femquad::mesh::{Mesh, MeshOptions, MeshPart, unit_box};
use femquad::physics::builtin::{Lame, NonlinearDiffusion, Poisson};
use femquad::prelude::*;
use femquad::solve::{GmresOptions, cg, gmres};
use femquad_mpi::cell_split::CellSplit;
use femquad_mpi::comm::{Ranks, abort_on_panic};
use femquad_mpi::device::{Sharing, device_for_rank};
use femquad_mpi::partition::metis_partition;
use femquad_mpi::solve::{Krylov, solve_linear};
use femquad_mpi::{DistMesh, DistOperator, DistVector};

/// The command line.
struct Args {
    backend: String,
    partition: String,
    dim: usize,
    n: usize,
    fail_rank: Option<usize>,
    nan_rank: Option<usize>,
}

fn parse() -> std::result::Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let usage = "usage: femquad-mpi-check native|opencl|opencl-shared|opencl-exclusive metis|empty-rank|ghost-only|thin \
                 [--dim D] [--n CELLS] [--fail-rank K] [--nan-rank K]";
    let backend = it.next().ok_or(usage)?;
    let partition = it.next().ok_or(usage)?;
    let mut args = Args {
        backend,
        partition,
        dim: 2,
        n: 6,
        fail_rank: None,
        nan_rank: None,
    };
    while let Some(flag) = it.next() {
        let value: usize = it
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{flag} needs a number; {usage}"))?;
        match flag.as_str() {
            "--dim" => args.dim = value,
            "--n" => args.n = value,
            "--fail-rank" => args.fail_rank = Some(value),
            "--nan-rank" => args.nan_rank = Some(value),
            _ => return Err(format!("unknown option {flag}; {usage}")),
        }
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
        Ok(true) => {
            if rank == 0 {
                println!("all checks passed");
            }
            ExitCode::SUCCESS
        }
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            // one write per line: the ranks' stderr interleave otherwise
            let line = format!("rank {rank}: error: {e}\n");
            eprint!("{line}");
            ExitCode::from(2)
        }
    }
}

/// The rank of each cell for the partition named on the command line.
fn partition(mesh: &Mesh, kind: &str, n_ranks: usize, n: usize) -> Result<Vec<u32>> {
    let centroid_x = |c: usize| -> f64 {
        let cell = mesh.cell(c);
        cell.iter()
            .map(|&v| mesh.vertex(v as usize)[0])
            .sum::<f64>()
            / cell.len() as f64
    };
    match kind {
        "metis" => metis_partition(mesh, n_ranks),
        "empty-rank" => metis_partition(mesh, n_ranks.saturating_sub(1).max(1)),
        "ghost-only" => {
            let mut part = metis_partition(mesh, n_ranks.saturating_sub(1).max(1))?;
            // a cell none of whose vertices is a corner of the box: every
            // vertex is in other cells too, of lower ranks
            let mut uses = vec![0u32; mesh.n_vertices()];
            for &v in mesh.cells() {
                uses[v as usize] += 1;
            }
            let interior = (0..mesh.n_cells())
                .find(|&c| mesh.cell(c).iter().all(|&v| uses[v as usize] >= 3))
                .ok_or_else(|| Error::arg("n", "the mesh has no interior cell"))?;
            part[interior] = (n_ranks - 1) as u32;
            Ok(part)
        }
        "thin" => Ok((0..mesh.n_cells())
            .map(|c| {
                let column = (centroid_x(c) * n as f64).floor() as usize;
                // ranks 1.. one column each, from the middle; rank 0 the rest
                let r = (column + 1).saturating_sub(n / 2);
                if (1..n_ranks).contains(&r) {
                    r as u32
                } else {
                    0
                }
            })
            .collect()),
        other => Err(Error::arg(
            "partition",
            format!("unknown partition `{other}` (metis, empty-rank, ghost-only, thin)"),
        )),
    }
}

fn run(ranks: Ranks, args: &Args) -> Result<bool> {
    let n_ranks = ranks.size();
    let rank = ranks.rank();
    let backend = match args.backend.as_str() {
        "native" => Backend::native(),
        "opencl" => Backend::opencl_with(
            femquad::opencl::testing::device(),
            femquad::opencl::testing::options(),
        ),
        "opencl-shared" | "opencl-exclusive" => {
            // one device per node-local rank, among the devices of the kind
            // the tests' device has
            let devices = femquad::opencl::list_devices()?;
            let kind = femquad::opencl::testing::selector().pick(&devices)?.kind;
            let sharing = if args.backend == "opencl-shared" {
                Sharing::Shared
            } else {
                Sharing::Exclusive
            };
            let device = device_for_rank(&ranks, kind, sharing)?;
            Backend::opencl_with(device, femquad::opencl::testing::options())
        }
        other => return Err(Error::arg("backend", format!("unknown backend `{other}`"))),
    };
    // rank 0: the mesh and its partition (and the inverted cell, if asked)
    let global = if rank == 0 {
        let mesh = prepare_for_refinement(&unit_box(args.dim, args.n, &MeshOptions::default())?)?;
        let part = partition(&mesh, &args.partition, n_ranks, args.n)?;
        let mesh = match args.fail_rank {
            Some(k) => {
                let c = part.iter().position(|&r| r as usize == k).ok_or_else(|| {
                    Error::arg("--fail-rank", format!("rank {k} has no cell to invert"))
                })?;
                let mut cells = mesh.cells().to_vec();
                cells.swap(c * (args.dim + 1), c * (args.dim + 1) + 1);
                Mesh::from_raw(args.dim, mesh.vertices().to_vec(), cells)?
            }
            None => mesh,
        };
        Some((mesh, part))
    } else {
        None
    };
    let dist = DistMesh::new(ranks, global.as_ref().map(|(m, p)| (m, &p[..])))?;
    let l = dist.layout();
    let counts = [
        l.cells.len() as u64,
        l.n_owned as u64,
        (l.n_local() - l.n_owned) as u64,
    ]
    .map(|x| dist.ranks().all_gather_u64(x));
    if rank == 0 {
        println!(
            "{n_ranks} ranks, partition {}, {} vertices",
            args.partition, l.n_global_vertices
        );
        let [cells, owned, ghosts] = &counts;
        for (q, ((c, o), g)) in cells.iter().zip(owned).zip(ghosts).enumerate() {
            println!("rank {q}: {c} cells, {o} owned vertices, {g} ghosts");
        }
    }
    if let Some(k) = args.nan_rank {
        return staging::non_finite_on_rank(&dist, k, &backend);
    }
    let mut ok = true;
    let dim = args.dim;
    let nv = dist.layout().n_global_vertices;
    let serial_mesh = global.map(|(m, _)| Arc::new(m));

    // 1. F, J·v, diag J against the serial operator
    let cases: [(&str, usize); 2] = [("nonlinear diffusion", 1), ("Lamé", dim)];
    for (name, nc) in cases {
        let make = move |space: FunctionSpace| -> Result<Form<f64>> {
            if nc == 1 {
                Form::new(space, NonlinearDiffusion)
            } else {
                Form::new(space, Lame)?.with_constants(&[1.0, 2.0])
            }
        };
        let u: Vec<f64> = (0..nv * nc).map(|i| (0.7 * i as f64).sin()).collect();
        let v: Vec<f64> = (0..nv * nc).map(|i| (1.3 * i as f64 + 0.2).cos()).collect();
        let mut op = DistOperator::new(&dist, 1, nc, make, &backend)?;
        // ghost entries stale: the operator must update them itself
        let mut du = place(
            stale_ghosts(DistVector::from_global(&dist, nc, &u)?)?,
            &backend,
        )?;
        let dv = place(
            stale_ghosts(DistVector::from_global(&dist, nc, &v)?)?,
            &backend,
        )?;
        let mut f = op.vector()?;
        op.apply(&du, &mut f)?;
        let mut jv = op.vector()?;
        op.jacobian_action(&du, &dv, &mut jv)?;
        let mut diag = op.vector_with(nc * nc)?;
        op.jacobian_diagonal(&du, &mut diag)?;
        let diagonal = op.diagonal(&du)?;
        let gathered = [
            f.gather_to_root()?,
            jv.gather_to_root()?,
            diag.gather_to_root()?,
            diagonal.gather_to_root()?,
        ];
        if let (1, Backend::OpenCl { device, .. }) = (nc, &backend) {
            ok &= halo_traffic(&mut op, &mut du, &mut f, device)?;
            ok &= staging::order(&mut op, &mut du, &mut f)?;
        }
        if nc == 1 {
            ok &= staging::agreements(&mut op, &mut du, &dv, &mut jv)?;
        }
        if let Some(mesh) = &serial_mesh {
            let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, nc)?;
            let mut sop = Operator::new(make(space)?, &backend)?;
            let (su, sv) = (sop.vector_from(&u)?, sop.vector_from(&v)?);
            let mut sf = sop.vector()?;
            sop.apply(&su, &mut sf)?;
            let mut sjv = sop.vector()?;
            sop.jacobian_action(&su, &sv, &mut sjv)?;
            let len = sop.jacobian_diagonal_len();
            let mut sd = sop.integrator().zeros(len)?;
            sop.jacobian_diagonal(&su, &mut sd)?;
            let sd = sd.to_host()?;
            // the diagonal: entry c·nc + c of each point block
            let sdiagonal: Vec<f64> = (0..nv * nc)
                .map(|i| sd[(i / nc) * nc * nc + (i % nc) * (nc + 1)])
                .collect();
            let serial = [sf.to_host()?, sjv.to_host()?, sd, sdiagonal];
            for ((what, d), s) in ["F(u)", "J(u)v", "diag J(u)", "diagonal of J(u)"]
                .iter()
                .zip(&gathered)
                .zip(&serial)
            {
                let d = d.as_ref().ok_or_else(|| Error::Internal {
                    what: "no gather".into(),
                })?;
                let err = rel_diff(d, s);
                let pass = err <= 1e-12;
                ok &= pass;
                println!(
                    "{name} {what}: relative difference {err:.3e} {}",
                    verdict(pass)
                );
            }
        }
    }

    // 2. deterministic assembly: bitwise the same twice
    {
        let u: Vec<f64> = (0..nv).map(|i| (0.3 * i as f64).sin()).collect();
        let mut op =
            DistOperator::new(&dist, 1, 1, |s| Form::new(s, NonlinearDiffusion), &backend)?;
        op.set_assembly(Assembly::Deterministic)?;
        let du = place(DistVector::from_global(&dist, 1, &u)?, &backend)?;
        ok &= overlap_is_bitwise_neutral(&mut op, &u, &backend)?;
        let (mut f1, mut f2) = (op.vector()?, op.vector()?);
        op.apply(&du, &mut f1)?;
        op.apply(&du, &mut f2)?;
        let dot1 = f1.dot(&f1)?;
        let dot2 = f2.dot(&f2)?;
        // every rank got the same bits of F·F and of 20 more products F·w_k
        let mut dots = vec![dot1.to_bits()];
        for k in 1..=20 {
            let w: Vec<f64> = (0..nv)
                .map(|i| (k as f64 * 0.37 * i as f64).cos())
                .collect();
            let w = place(DistVector::from_global(&dist, 1, &w)?, &backend)?;
            dots.push(f1.dot(&w)?.to_bits());
        }
        let n_dots = dots.len();
        let dots: Vec<u64> = dots
            .iter()
            .flat_map(|&d| dist.ranks().all_gather_u64(d))
            .collect();
        let dots_agree = dots
            .chunks_exact(n_ranks)
            .all(|c| c.iter().all(|&d| d == c[0]));
        if let (Some(a), Some(b)) = (f1.gather_to_root()?, f2.gather_to_root()?) {
            let pass = a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits())
                && dot1.to_bits() == dot2.to_bits()
                && dots_agree;
            ok &= pass;
            // the bits, for comparing runs (tests/mpirun.rs)
            let all_bits: Vec<String> = dots
                .iter()
                .step_by(n_ranks)
                .map(|d| format!("{d:016x}"))
                .collect();
            debug_assert_eq!(all_bits.len(), n_dots);
            println!("F·F bits {}", all_bits.join(" "));
            println!(
                "deterministic F(u) and F·F: bitwise identical twice and on every rank {}",
                verdict(pass)
            );
        }
    }

    // 3. Poisson by Jacobi-CG and Jacobi-GMRES, against the serial solves
    {
        let tol = 1e-10;
        let g = |x: &[f64]| x[0] + 0.5 * x[1];
        let poisson = |s: FunctionSpace| -> Result<Form<f64>> {
            Form::new(s, Poisson)?.with_constants(&[1.0])
        };
        let mut fixed_dofs = Vec::new();
        if let Some(mesh) = &serial_mesh {
            let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, 1)?;
            fixed_dofs = space.dofs_on(&MeshPart::boundary(mesh)?, Components::All)?;
        }
        dist.ranks().broadcast_u32s(&mut fixed_dofs);
        let fixed = dist.local_mask(&fixed_dofs, 1)?;
        let mut op = DistOperator::new(&dist, 1, 1, poisson, &backend)?;
        let mut u0 = op.vector()?;
        let coords = dist.layout().coordinates.clone();
        let values: Vec<f64> = fixed
            .iter()
            .zip(coords.chunks_exact(dim))
            .map(|(&f, xv)| if f { g(xv) } else { 0.0 })
            .collect();
        u0.set_local_from_host(&values)?;
        let solvers = [
            (
                "CG",
                Krylov::Cg {
                    tol,
                    max_iter: 1000,
                },
            ),
            (
                "GMRES",
                Krylov::Gmres(GmresOptions {
                    tol,
                    max_iter: 1000,
                    restart: 30,
                }),
            ),
        ];
        for (name, solver) in &solvers {
            let mut u = u0.try_clone()?;
            let stats = solve_linear(&mut op, &mut u, &fixed, solver)?;
            let solution = u.gather_to_root()?;
            if let (Some(mesh), Some(solution)) = (&serial_mesh, solution) {
                let (serial, serial_its) = serial_poisson(mesh, &fixed_dofs, g, solver)?;
                let err = rel_diff(&solution, &serial);
                let its_ok = stats.iterations.abs_diff(serial_its) <= 1;
                let pass = err <= 1e-8 && its_ok;
                ok &= pass;
                println!(
                    "Poisson {name}: {} iterations (serial {serial_its}), relative difference \
                     {err:.3e} {}",
                    stats.iterations,
                    verdict(pass)
                );
            }
        }
    }
    // 5.–8. multigrid, Newton–Krylov, parallel VTU, time integration
    let refinements = if dim == 2 { 2 } else { 1 };
    ok &= multigrid::check(&dist, serial_mesh.as_ref(), &backend, refinements)?;
    ok &= newton::check(&dist, serial_mesh.as_ref(), &backend)?;
    ok &= pvtu::check(&dist, serial_mesh.as_ref(), &backend)?;
    ok &= time::check(&dist, serial_mesh.as_ref(), &backend)?;
    // every rank exits alike
    let all_ok = dist.ranks().all_gather_u64(u64::from(ok));
    Ok(all_ok.iter().all(|&o| o == 1))
}

/// The serial solve of [`solve_linear`]'s problem with femquad's own solver on
/// the native backend: the reference solution and its iteration count.
fn serial_poisson(
    mesh: &Arc<Mesh>,
    fixed_dofs: &[u32],
    g: impl Fn(&[f64]) -> f64,
    solver: &Krylov,
) -> Result<(Vec<f64>, usize)> {
    let dim = mesh.dim();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, 1)?;
    let form = Form::new(space, Poisson)?.with_constants(&[1.0])?;
    let mut op = Operator::<f64>::new(form, &Backend::native())?;
    let n = op.space().n_dofs();
    let mut is_fixed = vec![false; n];
    for &d in fixed_dofs {
        is_fixed[d as usize] = true;
    }
    let u0: Vec<f64> = (0..n)
        .map(|i| if is_fixed[i] { g(mesh.vertex(i)) } else { 0.0 })
        .collect();
    let u = Vector::from(u0.clone());
    let b = serial_rhs(&mut op, &u, &is_fixed)?;
    let mut d = op.vector()?;
    op.jacobian_diagonal(&u, &mut d)?;
    let inv: Vec<f64> = d
        .to_host()?
        .iter()
        .zip(&is_fixed)
        .map(|(&x, &f)| if f { 1.0 } else { 1.0 / x })
        .collect();
    let mut a = |v: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
        serial_constrained_action(&mut op, &u, &is_fixed, v, y)
    };
    let mut jacobi = Jacobi::new(Vector::from(inv));
    let mut delta = Vector::from(vec![0.0; n]);
    let b = Vector::from(b);
    let stats = match solver {
        &Krylov::Cg { tol, max_iter } => {
            cg(&mut a, Some(&mut jacobi), &b, &mut delta, tol, max_iter)?
        }
        Krylov::Gmres(opts) => gmres(&mut a, Some(&mut jacobi), &b, &mut delta, opts)?,
    };
    let solution = u0
        .iter()
        .zip(delta.to_host()?)
        .map(|(a, b)| a + b)
        .collect();
    Ok((solution, stats.iterations))
}

/// `x` with every ghost entry replaced by a wrong value (12345).
fn stale_ghosts(mut x: DistVector<f64>) -> Result<DistVector<f64>> {
    let mut values = x.local_to_host()?;
    for g in &mut values[x.n_owned()..] {
        *g = 12345.0;
    }
    x.set_local_from_host(&values)?;
    Ok(x)
}

/// `x` where `backend`'s vectors live (uploaded for an OpenCL backend).
pub(crate) fn place(x: DistVector<f64>, backend: &Backend) -> Result<DistVector<f64>> {
    match backend {
        Backend::OpenCl { device, .. } => x.to_device(device),
        Backend::Native(_) => Ok(x),
    }
}

/// Check 2's second part: `F(u)`, `J(u)·v` (`v = 1 + u²`, `u` the global
/// values `u`) and the point-block diagonal with the interior cells
/// overlapping the ghost update and without: `F(u)` and `J(u)·v` bitwise
/// equal on every rank (the operator's assembly deterministic; the inputs'
/// ghost entries stale, so both schedules must update them), the diagonal
/// within 1e-14 (relative, max norm): its kernel adds atomically under
/// either assembly, so its last bits vary from one evaluation to the next
/// even on one schedule. Prints each rank's interior and boundary cells.
fn overlap_is_bitwise_neutral(
    op: &mut DistOperator<f64>,
    u: &[f64],
    backend: &Backend,
) -> Result<bool> {
    let mesh = op.mesh().clone();
    let ranks = mesh.ranks();
    let split = CellSplit::new(mesh.layout());
    let interior = ranks.all_gather_u64(split.interior.len() as u64);
    let boundary = ranks.all_gather_u64(split.boundary.len() as u64);
    let v: Vec<f64> = u.iter().map(|x| 1.0 + x * x).collect();
    let stale = |x: &[f64]| {
        place(
            stale_ghosts(DistVector::from_global(&mesh, 1, x)?)?,
            backend,
        )
    };
    let (u, v) = (stale(u)?, stale(&v)?);
    let (u, v) = (&u, &v);
    let mut bits = Vec::new();
    let mut diagonals = Vec::new();
    for overlap in [true, false] {
        op.set_overlap(overlap);
        let (mut f, mut jv, mut d) = (op.vector()?, op.vector()?, op.vector_with(1)?);
        op.apply(u, &mut f)?;
        op.jacobian_action(u, v, &mut jv)?;
        op.jacobian_diagonal(u, &mut d)?;
        let mut local = Vec::new();
        for x in [&f, &jv] {
            local.extend(
                x.local_to_host()?[..x.n_owned()]
                    .iter()
                    .map(|y| y.to_bits()),
            );
        }
        bits.push(local);
        diagonals.push(d.local_to_host()?[..d.n_owned()].to_vec());
    }
    op.set_overlap(true);
    let close = rel_diff(&diagonals[0], &diagonals[1]) <= 1e-14;
    let same = ranks.all_gather_u64(u64::from(bits[0] == bits[1] && close));
    let pass = same.iter().all(|&s| s == 1);
    if ranks.rank() == 0 {
        for (q, (i, b)) in interior.iter().zip(&boundary).enumerate() {
            println!("rank {q}: {i} interior cells, {b} boundary cells");
        }
        println!(
            "deterministic F(u), J(u)v with and without overlap: bitwise identical on every \
             rank, diag J(u) (atomic) within 1e-14 {}",
            verdict(pass)
        );
    }
    Ok(pass)
}

/// Check 4: one `F(u)` on device vectors at a new state moves exactly the halo between
/// host and device on every rank (`u`'s ghost update, `r`'s ghost
/// accumulate: each reads and writes `(Σ ghosts + Σ shared owned)·8`
/// bytes in total), counted by femquad's device statistics.
fn halo_traffic(
    op: &mut DistOperator<f64>,
    u: &mut DistVector<f64>,
    r: &mut DistVector<f64>,
    device: &Arc<femquad::opencl::Device>,
) -> Result<bool> {
    let mesh = op.mesh().clone();
    let layout = mesh.layout();
    let halo: usize = layout
        .neighbours
        .iter()
        .map(|n| n.ghosts.len() + n.shared_owned.len())
        .sum();
    let expected = (halo * size_of::<f64>()) as u64;
    // a state the operator has not seen (the same values, a new version):
    // its ghosts are updated
    u.scale(1.0)?;
    let before = device.stats();
    op.apply(u, r)?;
    let after = device.stats();
    let read = after.array_bytes_read - before.array_bytes_read;
    let written = after.array_bytes_written() - before.array_bytes_written();
    let ranks = mesh.ranks();
    let pass = ranks.all_gather_u64(u64::from(read == expected && written == expected));
    let reads = ranks.all_gather_u64(read);
    let writes = ranks.all_gather_u64(written);
    let expect = ranks.all_gather_u64(expected);
    let local = ranks.all_gather_u64((layout.n_local() * size_of::<f64>()) as u64);
    let pass = pass.iter().all(|&p| p == 1);
    if ranks.rank() == 0 {
        println!(
            "halo traffic of F(u) per rank: read {reads:?}, written {writes:?} bytes, halo \
             {expect:?}, local vectors {local:?} bytes {}",
            verdict(pass)
        );
    }
    Ok(pass)
}

/// `max |a − b| / max |b|`.
/// The right-hand side of `solve_linear`'s system, serially: `b_F = −F(u)_F`,
/// `b_D = 0` (`is_fixed` marks `D`).
pub(crate) fn serial_rhs(
    op: &mut Operator<f64>,
    u: &Vector<f64>,
    is_fixed: &[bool],
) -> Result<Vec<f64>> {
    let mut r = op.vector()?;
    op.apply(u, &mut r)?;
    Ok(r.to_host()?
        .iter()
        .zip(is_fixed)
        .map(|(&x, &f)| if f { 0.0 } else { -x })
        .collect())
}

/// `y = A v` of `solve_linear`'s constrained system, serially: `J(u)` applied
/// to `v` with `v_D = 0` at the free dofs, `v_D` at the fixed ones.
pub(crate) fn serial_constrained_action(
    op: &mut Operator<f64>,
    u: &Vector<f64>,
    is_fixed: &[bool],
    v: &Vector<f64>,
    y: &mut Vector<f64>,
) -> Result<()> {
    let vh = v.to_host()?;
    let free: Vec<f64> = vh
        .iter()
        .zip(is_fixed)
        .map(|(&x, &f)| if f { 0.0 } else { x })
        .collect();
    op.jacobian_action(u, &Vector::from(free), y)?;
    let mut yh = y.to_host()?;
    for (i, &f) in is_fixed.iter().enumerate() {
        if f {
            yh[i] = vh[i];
        }
    }
    *y = Vector::from(yh);
    Ok(())
}

pub(crate) fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    if a.len() != b.len() {
        return f64::INFINITY;
    }
    let scale = b
        .iter()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

pub(crate) fn verdict(pass: bool) -> &'static str {
    if pass { "ok" } else { "FAILED" }
}
