//! `solve_bench --heat be,bdf2` at a small size, natively and on the
//! OpenCL device of the tests (PoCL in CI; `FEMQUAD_DEVICE` as the example
//! reads it): the program path of the heat-step rows runs, and the CSV rows
//! it writes are sane — one stationary Poisson row and one row per scheme on
//! the same mesh, each converged with Newton steps, GMRES iterations and
//! multigrid V-cycles counted.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `solve_bench`, built by the cargo that runs this test into its target
/// directory and profile (`current_exe` is `<target>/<profile>/deps/…`).
fn solve_bench() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
    let target_dir = profile_dir.parent().unwrap();
    let mut cargo = Command::new(env!("CARGO"));
    cargo
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["build", "--quiet", "-p", "femquad-examples"])
        .args(["--example", "solve_bench", "--target-dir"])
        .arg(target_dir);
    if profile_dir.file_name().is_some_and(|n| n == "release") {
        cargo.arg("--release");
    }
    let status = cargo.status().unwrap();
    assert!(status.success(), "building solve_bench: {status}");
    profile_dir.join("examples").join("solve_bench")
}

/// Runs `solve_bench` with `args` and the heat steps of both schemes on
/// about 512 cells, and returns the CSV's rows as header → value maps.
fn heat_rows(exe: &Path, tag: &str, args: &[&str]) -> Vec<Vec<(String, String)>> {
    let csv = std::env::temp_dir().join(format!(
        "femquad-solve-bench-heat-{tag}-{}.csv",
        std::process::id()
    ));
    let out = Command::new(exe)
        .env("FEMQUAD_AUTOTUNE", "off")
        .args(args)
        .args([
            "--heat",
            "be,bdf2",
            "--cells",
            "512",
            "--max-coarse-cells",
            "32",
            "--csv",
        ])
        .arg(&csv)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{tag}: {stdout}\n{stderr}");
    eprintln!("{tag}:\n{stdout}");
    let mut reader = csv::Reader::from_path(&csv).unwrap();
    let headers: Vec<String> = reader
        .headers()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    let rows = reader
        .records()
        .map(|r| {
            headers
                .iter()
                .cloned()
                .zip(r.unwrap().iter().map(str::to_string))
                .collect()
        })
        .collect();
    let _ = std::fs::remove_file(&csv);
    rows
}

fn field<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    row.iter()
        .find(|(h, _)| h == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no column `{name}` in {row:?}"))
}

fn number(row: &[(String, String)], name: &str) -> f64 {
    field(row, name)
        .parse()
        .unwrap_or_else(|e| panic!("`{name}` = {:?}: {e}", field(row, name)))
}

/// `rtol`: the heat steps' Newton tolerance (`--heat-rtol`, 1e-10 by
/// default).
fn check(rows: &[Vec<(String, String)>], tag: &str, rtol: f64) {
    let schemes: Vec<&str> = rows.iter().map(|r| field(r, "scheme")).collect();
    assert_eq!(schemes, ["stationary", "be", "bdf2"], "{tag}");
    for row in rows {
        let scheme = field(row, "scheme");
        let what = format!("{tag} {scheme}");
        // the same mesh and space for all three
        for name in ["cells", "dofs", "levels"] {
            assert_eq!(field(row, name), field(&rows[0], name), "{what}: {name}");
        }
        assert!(number(row, "cells") > 200.0, "{what}");
        assert_eq!(field(row, "converged"), "true", "{what}");
        assert!(
            number(row, "iterations") >= 1.0,
            "{what}: Krylov iterations"
        );
        assert!(number(row, "vcycles") >= 1.0, "{what}: V-cycles");
        assert!(number(row, "total_seconds") > 0.0, "{what}");
        let rel = number(row, "relative_residual");
        if scheme == "stationary" {
            assert_eq!(field(row, "physics"), "poisson", "{what}");
            assert_eq!(number(row, "newton_iterations"), 0.0, "{what}");
            assert_eq!(number(row, "dt"), 0.0, "{what}");
            assert!(rel <= 1e-8, "{what}: relative residual {rel}");
        } else {
            assert_eq!(field(row, "physics"), "heat", "{what}");
            assert_eq!(number(row, "dt"), 1e-3, "{what}");
            // a linear step: one Newton step, perhaps a second to confirm
            let newton = number(row, "newton_iterations");
            assert!(
                (1.0..=3.0).contains(&newton),
                "{what}: {newton} Newton steps"
            );
            assert!(rel > 0.0 && rel <= rtol, "{what}: relative residual {rel}");
            if rtol > 1e-10 {
                // solved to the looser tolerance, not the default's
                assert!(rel > 1e-10, "{what}: relative residual {rel} (rtol {rtol})");
            }
            // the mass-dominated step needs no more Krylov iterations than
            // Newton steps times a small bound
            let its = number(row, "iterations");
            assert!(its <= 20.0 * newton, "{what}: {its} Krylov iterations");
        }
    }
}

#[test]
fn solve_bench_heat_steps_run_natively_and_on_the_device() {
    let exe = solve_bench();
    check(&heat_rows(&exe, "native", &["--native"]), "native", 1e-10);
    let device = std::env::var("FEMQUAD_DEVICE").unwrap_or_else(|_| "cpu".into());
    check(
        &heat_rows(&exe, "opencl", &["--device", &device]),
        "opencl",
        1e-10,
    );
    // the stationary solve's tolerance for the steps too
    let args = ["--native", "--heat-rtol", "1e-6"];
    check(
        &heat_rows(&exe, "native-1e-6", &args),
        "native --heat-rtol 1e-6",
        1e-6,
    );
}

#[test]
fn solve_bench_heat_refuses_bad_arguments() {
    let exe = solve_bench();
    for (args, want) in [
        (
            &["--native", "--heat", "cn"][..],
            "error: invalid argument `--heat`: `cn` is not be or bdf2",
        ),
        (
            &["--native", "--heat", "be", "--dt", "0"][..],
            "error: invalid argument `--dt`: must be positive and finite, got 0",
        ),
        (
            &["--native", "--heat", "be", "--heat-rtol", "0"][..],
            "error: invalid argument `--heat-rtol`: must lie in (0, 1), got 0",
        ),
        (
            &["--native", "--heat", "be", "--physics", "lame"][..],
            "error: invalid argument `--heat`: the heat steps are scalar",
        ),
    ] {
        let out = Command::new(&exe).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.starts_with(want), "{args:?}: {err}");
    }
}
