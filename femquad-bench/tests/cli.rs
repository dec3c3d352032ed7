//! The benchmark binary's command line: its own `--help`, errors that name
//! the value, and a closed stdout pipe ending it quietly.

use std::process::{Command, Output, Stdio};

/// The benchmark program, which reads the environment as any program does,
/// with the autotune cache off (`FEMQUAD_AUTOTUNE=off`): what it prints
/// does not depend on the cache in the machine's home.
fn bench_command() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_femquad-bench"));
    command.env("FEMQUAD_AUTOTUNE", "off");
    command
}

fn bench(args: &[&str]) -> Output {
    bench_command().args(args).output().unwrap()
}

#[test]
fn help_describes_the_benchmark() {
    let out = bench(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        help.starts_with("Measures femquad's element kernel (BK: element vectors of a residual)"),
        "{help}"
    );
    assert!(
        help.contains("One line is printed per launch configuration"),
        "{help}"
    );
    assert!(help.contains("Usage: femquad-bench [OPTIONS]"), "{help}");
    assert!(help.contains("[possible values: f32, f64]"), "{help}");
    assert!(!help.contains(env!("CARGO_PKG_DESCRIPTION")), "{help}");
}

#[test]
fn filter_error_prints_the_value() {
    // Checked before any device is opened or mesh built.
    let out = bench(&["--suite", "--filter", "xyz", "--quiet"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.starts_with("femquad-bench: error: --filter \"xyz\" matches no suite case"),
        "{stderr}"
    );
    assert!(!stderr.contains("Some("), "{stderr}");
    assert!(out.stdout.is_empty());
}

#[test]
fn measure_and_numbering_errors_name_the_value() {
    // clap: an unknown value, listed with the possible ones
    let out = bench(&["--measure", "bk,bq"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("invalid value 'bq' for '--measure")
            && stderr.contains("[possible values: bk, bp]"),
        "{stderr}"
    );
    let out = bench(&["--numbering", "hilbert"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("invalid value 'hilbert' for '--numbering")
            && stderr.contains("random, renumbered, structured"),
        "{stderr}"
    );
    // checked before any device is opened or mesh built
    for (args, expected) in [
        (
            &["--numbering", "random,renumbered,random"][..],
            "femquad-bench: error: --numbering lists `random` twice",
        ),
        (
            &["--measure", "bp", "--sweep"][..],
            "femquad-bench: error: --sweep measures the element kernel only",
        ),
        (
            &["--cg-iterations", "10"][..],
            "femquad-bench: error: --cg-iterations 10 applies to BP rows only",
        ),
    ] {
        let out = bench(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn suite_refuses_the_options_it_fixes() {
    let out = bench(&["--suite", "--precision", "f32"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("'--suite' cannot be used with '--precision <PRECISION>'"),
        "{stderr}"
    );
}

#[test]
fn from_csv_errors_name_the_file() {
    let out = bench(&["--plot", "figs", "--from-csv", "no-such-file.csv"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no-such-file.csv"), "{stderr}");
}

/// `femquad-bench … | head -1` at its most abrupt: the reading end of
/// stdout is closed before the program prints. It ends quietly (no panic
/// "failed printing to stdout"), ended by SIGPIPE as Unix tools are. Runs
/// on the default OpenCL device (PoCL in CI): the first line printed is
/// the device's.
#[cfg(unix)]
#[test]
fn closed_stdout_pipe_ends_it_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = bench_command()
        .args([
            "--refine",
            "4",
            "--reps",
            "1",
            "--warmup",
            "0",
            "--copy-mib",
            "1",
        ])
        .args(["--quiet"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?}",
        out.status
    );
}
