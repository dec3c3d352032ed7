//! `mpirun -np N femquad-mpi-check …` for N = 1, 2, 3 (oversubscribed, as
//! root where needed): distributed F(u), J·v, diag J, the Jacobi-CG and
//! Jacobi-GMRES solves, multigrid-preconditioned CG and its V-cycle,
//! Newton–Krylov and the parallel VTU output equal the serial ones, the
//! multigrid's iteration counts do not depend on the number of ranks,
//! deterministic assembly is bitwise reproducible, edge-case partitions
//! work, and a rank's failure (while building, or in an application
//! between two agreements) ends every rank with its error instead of a
//! hang. The checks themselves are in the program
//! (`src/bin/femquad-mpi-check/`); these tests read its exit code and
//! output. The last tests run the benchmark (`femquad-mpi-bench`) on a tiny
//! mesh and check its table (with and without the multigrid solve).
#![cfg(feature = "mpi")]

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a run printed and how it ended.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs the check program on `np` ranks with `args`; a run longer than
/// `limit` is killed and reported as a hang (`code` None).
fn mpirun(np: usize, args: &[&str], limit: Duration) -> Run {
    run_program(env!("CARGO_BIN_EXE_femquad-mpi-check"), np, args, limit)
}

/// Runs `program` on `np` ranks with `args` (see [`mpirun`]).
fn run_program(program: &str, np: usize, args: &[&str], limit: Duration) -> Run {
    let mut child = Command::new("mpirun")
        .args(["--oversubscribe", "-np", &np.to_string()])
        .arg(program)
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun starts (OpenMPI installed: apt-get install openmpi-bin)");
    let start = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().expect("mpirun's status") {
            break status.code();
        }
        if start.elapsed() > limit {
            child.kill().expect("kill the hung mpirun");
            child.wait().expect("reap mpirun");
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stdout = String::new();
    let mut stderr = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    Run {
        code,
        stdout,
        stderr,
    }
}

/// The run passed every check of the program; returns its output.
fn assert_passes(np: usize, args: &[&str]) -> String {
    let run = mpirun(np, args, Duration::from_secs(300));
    assert!(
        run.code == Some(0) && run.stdout.contains("all checks passed"),
        "np {np} {args:?}: exit {:?}\nstdout:\n{}\nstderr:\n{}",
        run.code,
        run.stdout,
        run.stderr
    );
    // every check printed its line, each ok (on OpenCL also the halo
    // traffic's)
    let checks = run.stdout.lines().filter(|l| l.ends_with(" ok")).count();
    let expected = if args[0].starts_with("opencl") {
        31
    } else {
        29
    };
    assert_eq!(checks, expected, "np {np} {args:?}:\n{}", run.stdout);
    run.stdout
}

/// Asserts that the run's output describes rank `rank` so (the edge case
/// was exercised).
fn assert_rank(stdout: &str, rank: usize, cells: usize, owned: usize, ghosts: usize) {
    let line = format!("rank {rank}: {cells} cells, {owned} owned vertices, {ghosts} ghosts");
    assert!(
        stdout.lines().any(|l| l == line),
        "no `{line}` in\n{stdout}"
    );
}

/// The iterations of each multigrid-preconditioned CG solve the run
/// printed (`multigrid CG, L refinements: K iterations …`), by `L`.
fn multigrid_iterations(stdout: &str) -> Vec<(usize, usize)> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("multigrid CG, "))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            (words[0].parse().unwrap(), words[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn native_metis_on_1_2_3_ranks_equals_serial() {
    let mut iterations = Vec::new();
    for np in [1, 2, 3] {
        let out = assert_passes(np, &["native", "metis"]);
        iterations.push(multigrid_iterations(&out));
    }
    // multigrid's iteration counts do not depend on the number of ranks (± 1)
    // 2 and 3 refinements with level 0 on rank 0, 3 with level 2
    assert_eq!(iterations[0].len(), 3, "{iterations:?}");
    for its in &iterations[1..] {
        for (a, b) in its.iter().zip(&iterations[0]) {
            assert_eq!(a.0, b.0);
            assert!(a.1.abs_diff(b.1) <= 1, "{iterations:?}");
        }
    }
}

/// 3D on 4³ cubes (`--n 4`): one refinement more takes 9 → 10 multigrid
/// iterations (on 3³, still pre-asymptotic, 8 → 10).
#[test]
fn native_3d_metis_on_3_ranks_equals_serial() {
    assert_passes(3, &["native", "metis", "--dim", "3", "--n", "4"]);
}

#[test]
fn opencl_metis_on_1_2_3_ranks_equals_serial() {
    for np in [1, 2, 3] {
        assert_passes(np, &["opencl", "metis"]);
    }
}

#[test]
fn deterministic_runs_on_3_ranks_are_bitwise_identical() {
    let bits = |out: &str| -> String {
        let line = out.lines().find(|l| l.starts_with("F·F bits "));
        line.expect("the F·F line").to_string()
    };
    let args = ["opencl", "metis", "--n", "24"];
    let first = assert_passes(3, &args);
    let second = assert_passes(3, &args);
    assert_eq!(bits(&first), bits(&second));
    // the overlap check compared two schedules: every rank has interior
    // cells (run during the ghost update) and boundary cells
    let parts: Vec<(usize, usize)> = first
        .lines()
        .filter_map(|l| l.strip_suffix(" boundary cells"))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[2].parse().unwrap(), w[5].parse().unwrap())
        })
        .collect();
    assert_eq!(parts.len(), 3, "{first}");
    assert!(parts.iter().all(|&(i, b)| i > 0 && b > 0), "{parts:?}");
}

#[test]
fn ranks_share_the_one_pocl_device_when_allowed_and_are_refused_otherwise() {
    assert_passes(3, &["opencl-shared", "metis"]);
    assert_passes(1, &["opencl-exclusive", "metis"]);
    // CI has one OpenCL device (PoCL): two exclusive ranks are one too many
    let run = mpirun(2, &["opencl-exclusive", "metis"], Duration::from_secs(120));
    assert_eq!(run.code, Some(2), "{}\n{}", run.stdout, run.stderr);
    // both fail; every rank reports the lowest failing rank's error
    for line in [
        "rank 0: error: invalid argument `sharing`: 2 ranks run on this node but it has 1 ",
        "rank 1: error: rank 0 of 2 failed: invalid argument `sharing`: 2 ranks run on ",
    ] {
        assert!(run.stderr.contains(line), "{}", run.stderr);
    }
    assert!(
        run.stderr
            .contains("start at most 1 ranks per node, or pass Sharing::Shared")
    );
}

#[test]
fn a_rank_without_cells_is_handled() {
    // host vectors, and device vectors (a rank with empty ones)
    for backend in ["native", "opencl"] {
        let out = assert_passes(3, &[backend, "empty-rank"]);
        assert_rank(&out, 2, 0, 0, 0);
    }
}

#[test]
fn a_rank_owning_only_ghosts_is_handled() {
    // one interior cell: its 3 vertices are owned by the lower ranks
    for backend in ["native", "opencl"] {
        let out = assert_passes(3, &[backend, "ghost-only"]);
        assert_rank(&out, 2, 1, 0, 3);
    }
}

#[test]
fn one_cell_thick_parts_are_handled() {
    // 6 × 6 squares: ranks 1 and 2 get one column (12 triangles) each;
    // rank 2's vertices are all shared, owned by ranks 0 and 1
    for backend in ["native", "opencl"] {
        let out = assert_passes(3, &[backend, "thin"]);
        assert_rank(&out, 1, 12, 7, 7);
        assert_rank(&out, 2, 12, 0, 14);
        // thin parts have no interior cell
        for q in [1, 2] {
            let line = format!("rank {q}: 0 interior cells, 12 boundary cells");
            assert!(out.lines().any(|l| l == line), "no `{line}` in\n{out}");
        }
    }
    let out = assert_passes(2, &["native", "thin"]);
    assert_rank(&out, 1, 12, 0, 14);
}

#[test]
fn a_bad_cell_on_one_rank_ends_every_rank_with_the_error() {
    for (np, k) in [(2, 1), (3, 2), (3, 0)] {
        let k_str = k.to_string();
        let run = mpirun(
            np,
            &["native", "metis", "--fail-rank", &k_str],
            Duration::from_secs(120),
        );
        assert!(
            run.code.is_some(),
            "np {np}, rank {k} failing: the ranks hung"
        );
        assert_ne!(run.code, Some(0), "np {np}: {}", run.stdout);
        // rank k reports its invalid cell; every other rank names rank k
        let own = format!("rank {k}: error: invalid mesh: cell ");
        assert!(run.stderr.contains(&own), "np {np}:\n{}", run.stderr);
        assert!(run.stderr.contains("negatively oriented"), "{}", run.stderr);
        for q in (0..np).filter(|&q| q != k) {
            let other = format!("rank {q}: error: rank {k} of {np} failed: invalid mesh: cell ");
            assert!(
                run.stderr.contains(&other),
                "np {np}, rank {q}:\n{}",
                run.stderr
            );
        }
    }
}

#[test]
fn a_non_finite_residual_on_one_rank_ends_every_rank_with_the_error() {
    // found after the ghost update's messages, between two agreements
    for backend in ["native", "opencl"] {
        for (np, k) in [(2, 1), (3, 0)] {
            let k_str = k.to_string();
            let run = mpirun(
                np,
                &[backend, "metis", "--nan-rank", &k_str],
                Duration::from_secs(120),
            );
            assert!(
                run.code.is_some(),
                "{backend}, np {np}, rank {k} failing: the ranks hung"
            );
            assert_eq!(run.code, Some(2), "{}\n{}", run.stdout, run.stderr);
            assert!(
                run.stdout.contains("u = 1e200 at vertex "),
                "{}",
                run.stdout
            );
            let what =
                "the residual F(u) of the physics `nonlinear_diffusion` is not finite at dof ";
            let own = format!("rank {k}: error: {what}");
            assert!(
                run.stderr.contains(&own),
                "{backend}, np {np}:\n{}",
                run.stderr
            );
            for q in (0..np).filter(|&q| q != k) {
                let other = format!("rank {q}: error: rank {k} of {np} failed: {what}");
                assert!(
                    run.stderr.contains(&other),
                    "{backend}, np {np}, rank {q}:\n{}",
                    run.stderr
                );
            }
        }
    }
}

/// The benchmark's CSV rows (after the comment and the header), as fields.
fn bench_rows(stdout: &str) -> Vec<Vec<String>> {
    let mut lines = stdout.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(
        lines.next(),
        Some("measurement,precision,ranks,cells,dofs,seconds,halo_seconds,gdofs_per_s,efficiency"),
        "{stdout}"
    );
    lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn the_benchmark_runs_on_2_ranks_and_scales_against_its_one_rank_baseline() {
    let bench = env!("CARGO_BIN_EXE_femquad-mpi-bench");
    let limit = Duration::from_secs(300);
    let common = [
        "--cells-per-rank",
        "2^12",
        "--reps",
        "3",
        "--shared-device",
        "--copy-mib",
        "1",
    ];
    let one = run_program(bench, 1, &common, limit);
    assert_eq!(one.code, Some(0), "{}\n{}", one.stdout, one.stderr);
    let baseline =
        std::env::temp_dir().join(format!("femquad-mpi-bench-{}.csv", std::process::id()));
    std::fs::write(&baseline, &one.stdout).unwrap();
    let mut args = common.to_vec();
    let path = baseline.to_str().unwrap();
    args.extend(["--baseline", path, "--breakdown"]);
    let two = run_program(bench, 2, &args, limit);
    std::fs::remove_file(&baseline).unwrap();
    assert_eq!(two.code, Some(0), "{}\n{}", two.stdout, two.stderr);
    // every rank's copy bandwidth, in rank order
    for (run, ranks) in [(&one, 1), (&two, 2)] {
        let line = run
            .stdout
            .lines()
            .find_map(|l| {
                l.strip_prefix("# copy bandwidth per rank (GB/s, float4 copy, 2 × 1 MiB): ")
            })
            .unwrap_or_else(|| panic!("no copy bandwidth line in\n{}", run.stdout));
        let values: Vec<&str> = line.split(", ").collect();
        assert_eq!(values.len(), ranks, "{line}");
        for (q, v) in values.iter().enumerate() {
            let gb: f64 = v
                .strip_prefix(&format!("rank {q} "))
                .unwrap_or_else(|| panic!("{line}"))
                .parse()
                .unwrap();
            assert!(gb > 0.0 && gb.is_finite(), "{line}");
        }
    }
    check_breakdown(&two.stdout);
    let (one, two) = (bench_rows(&one.stdout), bench_rows(&two.stdout));
    let names = [
        "F(u)",
        "J·v",
        "F(u) no overlap",
        "J·v no overlap",
        "CG iteration",
        "halo",
    ];
    for (rows, ranks, n) in [(&one, 1, 46usize), (&two, 2, 64)] {
        // the unit square of n × n squares: 2n² ≥ 2^12·ranks cells
        assert_eq!(rows.len(), names.len(), "{rows:?}");
        for (row, name) in rows.iter().zip(names) {
            let number = |i: usize| -> f64 { row[i].parse().unwrap() };
            assert_eq!(row[0], name);
            assert_eq!(row[1], "f64");
            assert_eq!(row[2], ranks.to_string());
            assert_eq!(row[3], (2 * n * n).to_string(), "{row:?}");
            assert_eq!(row[4], ((n + 1) * (n + 1)).to_string(), "{row:?}");
            let (seconds, halo) = (number(5), number(6));
            assert!(seconds > 0.0 && seconds.is_finite(), "{row:?}");
            assert!(halo >= 0.0 && halo.is_finite(), "{row:?}");
            let gdofs = number(4) / seconds / 1e9;
            assert!((number(7) - gdofs).abs() <= 1e-4 + 1e-3 * gdofs, "{row:?}");
        }
    }
    // weak-scaling efficiency t₁/t₂ of each measurement but the halo's
    for (r1, r2) in one.iter().zip(&two) {
        if r2[0] == "halo" {
            assert_eq!(r2[8], "", "{r2:?}");
            continue;
        }
        let t1: f64 = r1[5].parse().unwrap();
        let t2: f64 = r2[5].parse().unwrap();
        let efficiency: f64 = r2[8].parse().unwrap();
        assert!(
            (efficiency - t1 / t2).abs() <= 1e-3 * (1.0 + t1 / t2),
            "{r1:?} {r2:?}"
        );
    }
}

/// The `--breakdown` lines of a 2-rank run: each rank with and without
/// overlap, every device phase and host step a finite time, the wall time,
/// the parts of the cells and the messages positive, each host step and
/// the rest (`finish`) within the wall time, and the transfers where the
/// ranks have them — rank 0 owns every shared vertex (the lowest rank
/// owns), so it downloads shared entries and uploads no ghost, rank 1 the
/// reverse.
fn check_breakdown(stdout: &str) {
    const HOST: [&str; 14] = [
        "copy",
        "gathers",
        "interior_enqueue",
        "download_wait",
        "agree",
        "messages",
        "upload_enqueue",
        "boundary_enqueue",
        "check",
        "accumulate_download_wait",
        "accumulate_agree",
        "accumulate_messages",
        "sums_enqueue",
        "final_agree",
    ];
    let lines: Vec<Vec<&str>> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# breakdown,"))
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(
        lines.first().map(|l| l.join(",")),
        Some(format!(
            "rank,overlap,wall,download,upload,interior,boundary,{},finish",
            HOST.join(",")
        )),
        "{stdout}"
    );
    let rows = &lines[1..];
    assert_eq!(rows.len(), 4, "{stdout}");
    for (row, (rank, overlap)) in
        rows.iter()
            .zip([("0", "on"), ("1", "on"), ("0", "off"), ("1", "off")])
    {
        assert_eq!((row[0], row[1]), (rank, overlap), "{row:?}");
        let t: Vec<f64> = row[2..].iter().map(|x| x.parse().unwrap()).collect();
        assert_eq!(t.len(), 5 + HOST.len() + 1, "{row:?}");
        let [wall, download, upload, interior, boundary] = t[..5] else {
            panic!("{row:?}");
        };
        let host = &t[5..5 + HOST.len()];
        let finish = t[5 + HOST.len()];
        let step = |name: &str| host[HOST.iter().position(|&h| h == name).unwrap()];
        assert!(t[..5].iter().all(|x| x.is_finite() && *x >= 0.0), "{row:?}");
        assert!(host.iter().all(|x| x.is_finite() && *x >= 0.0), "{row:?}");
        // per repetition every host step lies within the wall time, and
        // `finish` is the rest: so their medians too (order statistics
        // keep a pointwise order)
        assert!(finish.is_finite() && finish >= 0.0, "{row:?}");
        assert!(host.iter().all(|&h| h <= wall), "{row:?}");
        assert!(wall > 0.0 && interior > 0.0 && boundary > 0.0, "{row:?}");
        assert!(
            step("messages") > 0.0 && step("accumulate_messages") > 0.0,
            "{row:?}"
        );
        assert!(interior + boundary < wall, "{row:?}");
        if rank == "0" {
            assert!(download > 0.0 && upload == 0.0, "{row:?}");
        } else {
            assert!(download == 0.0 && upload > 0.0, "{row:?}");
        }
    }
}

#[test]
fn the_benchmark_times_the_multigrid_solve_on_2_ranks() {
    let bench = env!("CARGO_BIN_EXE_femquad-mpi-bench");
    let args = [
        "--cells-per-rank",
        "2^11",
        "--reps",
        "2",
        "--shared-device",
        "--solve",
        "2",
        "--copy-mib",
        "1",
        "--breakdown",
        "--agglomerated-assembled-max-dofs",
        "2^20",
        "--agglomerated-f32",
    ];
    let run = run_program(bench, 2, &args, Duration::from_secs(300));
    assert_eq!(run.code, Some(0), "{}\n{}", run.stdout, run.stderr);
    // 2·2^11 cells: the 46 × 46 box; its coarse box ⌈46/4⌉ = 12, refined twice: 48 × 48;
    // levels of 13², 25², 49² vertices: the default agglomerates 0 and 1, level 1
    // assembled for the f32 cycle
    let levels = "# multigrid levels: 0..=1 agglomerated on rank 0 (dofs 169 625; serial levels \
                  assembled [1], cycle Single, dense coarse solve up to 0 dofs; \
                  --agglomerate-max-dofs 262144), 2..=2 distributed (dofs 2401)";
    assert!(
        run.stdout.lines().any(|l| l == levels),
        "no `{levels}` in\n{}",
        run.stdout
    );
    let line = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("# multigrid solve: 2 refinements, "))
        .unwrap_or_else(|| panic!("no iterations line in\n{}", run.stdout));
    let iterations: usize = line.split_whitespace().next().unwrap().parse().unwrap();
    assert!((1..=15).contains(&iterations), "{line}");
    let rows = bench_rows(&run.stdout);
    assert_eq!(rows.len(), 8, "{rows:?}");
    let mut seconds = Vec::new();
    for (row, name) in rows[6..]
        .iter()
        .zip(["multigrid solve", "multigrid solve without setup"])
    {
        assert_eq!(row[0], name);
        assert_eq!(row[3], (2 * 48 * 48).to_string(), "{row:?}");
        assert_eq!(row[4], (49 * 49).to_string(), "{row:?}");
        let s: f64 = row[5].parse().unwrap();
        assert!(s > 0.0 && s.is_finite(), "{row:?}");
        assert_eq!(row[6], "", "{row:?}");
        seconds.push(s);
    }
    // the solve alone takes less than the setup and the solve
    assert!(seconds[1] < seconds[0], "{rows:?}");
    check_multigrid_breakdown(&run.stdout, iterations, seconds[1]);
}

/// The `# multigrid breakdown` lines of a 2-rank run: every time finite
/// and positive, the iterations those of the solve, the solve the row's
/// `without setup`, each part of the setup shorter than the setup, and a
/// V-cycle longer than its agglomerated coarse correction.
fn check_multigrid_breakdown(stdout: &str, iterations: usize, solve: f64) {
    let lines: Vec<Vec<&str>> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("# multigrid breakdown,"))
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    let names = [
        "ranks",
        "distribute",
        "hierarchy",
        "operator",
        "multigrid",
        "setup",
        "smoothers",
        "agglomerated_setup",
        "solve",
        "iterations",
        "cycle",
        "agglomerated",
        "cg",
    ];
    assert_eq!(lines[0], names, "{stdout}");
    let row = &lines[1];
    assert_eq!(row.len(), names.len(), "{row:?}");
    let value = |name: &str| -> f64 {
        row[names.iter().position(|&n| n == name).unwrap()]
            .parse()
            .unwrap()
    };
    assert_eq!(row[0], "2", "{row:?}");
    assert_eq!(value("iterations"), iterations as f64, "{row:?}");
    for name in &names[1..] {
        let t = value(name);
        assert!(t > 0.0 && t.is_finite(), "{name}: {row:?}");
    }
    assert!(
        (value("solve") - solve).abs() <= 1e-6 * solve,
        "{row:?} {solve}"
    );
    // per repetition and rank each part of the setup lies within it, and
    // the coarse solves within the cycles: so the slowest ranks' medians
    // too (maxima and order statistics keep a pointwise order)
    assert!(value("smoothers") < value("setup"), "{row:?}");
    assert!(value("agglomerated_setup") < value("setup"), "{row:?}");
    assert!(value("agglomerated") < value("cycle"), "{row:?}");
}

/// The example `name`, built by `cargo test` (all targets) beside this
/// test, in `target/<profile>/examples/`; a binary older than its source
/// (`cargo test --test mpirun` alone builds no example) fails the test.
fn example(name: &str) -> String {
    let deps = std::env::current_exe().expect("the test's path");
    let dir = deps
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let binary = dir.join("examples").join(name);
    let source = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(format!("{name}.rs"));
    let modified = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    assert!(
        modified(&binary) >= modified(&source),
        "{} is missing or older than {}: run the crate's tests with its examples \
         (`cargo test -p femquad-mpi --features mpi`, not `--test mpirun` alone)",
        binary.display(),
        source.display()
    );
    binary.display().to_string()
}

/// The table rows of `mpi_convergence`: (level, cells, dofs, its, error).
fn convergence_rows(stdout: &str) -> Vec<(usize, usize, usize, usize, f64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let level = f.first()?.parse().ok()?;
            Some((
                level,
                f[1].parse().ok()?,
                f[2].parse().ok()?,
                f[3].parse().ok()?,
                f[4].parse().ok()?,
            ))
        })
        .collect()
}

/// The Laplacian and elasticity examples over ranks: the `L²` errors fall
/// like `h²` and are those of one rank (to the solver tolerance), the
/// multigrid iterations equal one rank's (± 1).
#[test]
fn the_convergence_example_converges_at_rate_two_on_1_and_3_ranks() {
    for physics in ["laplacian", "lame"] {
        let args = ["--physics", physics, "--levels", "3"];
        let tables: Vec<_> = [1, 3]
            .map(|np| {
                let run = run_program(
                    &example("mpi_convergence"),
                    np,
                    &args,
                    Duration::from_secs(300),
                );
                assert_eq!(
                    run.code,
                    Some(0),
                    "np {np} {physics}: stdout:\n{}\nstderr:\n{}",
                    run.stdout,
                    run.stderr
                );
                let rows = convergence_rows(&run.stdout);
                assert_eq!(rows.len(), 3, "np {np} {physics}:\n{}", run.stdout);
                rows
            })
            .into();
        let (one, three) = (&tables[0], &tables[1]);
        for (a, b) in one.iter().zip(three) {
            assert_eq!(
                (a.0, a.1, a.2),
                (b.0, b.1, b.2),
                "{physics}: {one:?} vs {three:?}"
            );
            assert!(
                a.3.abs_diff(b.3) <= 1,
                "{physics} iterations: {one:?} vs {three:?}"
            );
            assert!(
                (a.4 - b.4).abs() <= 1e-5 * a.4,
                "{physics} errors: {one:?} vs {three:?}"
            );
        }
        for w in three.windows(2) {
            let rate = (w[0].4 / w[1].4).log2();
            assert!(
                (rate - 2.0).abs() < 0.1,
                "{physics}: rate {rate:.3} in {three:?}"
            );
        }
    }
}
