//! The examples' command lines: nothing silent. Argument checks are tested
//! through the functions of `femquad_examples::cli`; `--help` and a closed
//! stdout pipe through the example binaries themselves (built here by the
//! cargo that runs the tests, in the same profile and target directory).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use clap::Parser;
use clap::error::ErrorKind;
use femquad::Precision;
use femquad::mesh::read_gmsh;
use femquad::mesh::size::FieldSize;
use femquad_examples::cli::{
    CG_TOLERANCE, NEWTON_TOLERANCE, SolveArgs, StudySize, check_box, check_refine, check_writable,
    run_example, study_sizes,
};
use femquad_examples::convergence::Manufactured;

/// The examples' options, as each example flattens them.
#[derive(Parser, Debug)]
struct Args {
    #[command(flatten)]
    solve: SolveArgs,
}

fn parse(args: &[&str]) -> Result<SolveArgs, clap::Error> {
    Args::try_parse_from(std::iter::once("example").chain(args.iter().copied())).map(|a| a.solve)
}

const GIB: u64 = 1 << 30;

#[test]
fn precision_is_femquads_parsed_by_from_str() {
    assert_eq!(parse(&[]).unwrap().precision, Precision::F64);
    assert_eq!(
        parse(&["--precision", "f32"]).unwrap().precision,
        Precision::F32
    );
    let e = parse(&["--precision", "half"]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidValue);
    let e = e.to_string();
    assert!(
        e.contains("'half'") && e.contains("[possible values: f32, f64]"),
        "{e}"
    );
}

#[test]
fn mesh_conflicts_with_the_options_it_fixes() {
    for other in [["--dim", "3"], ["--levels", "2"], ["--n0", "4"]] {
        let e = parse(&["--mesh", "m.msh", other[0], other[1]]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ArgumentConflict, "{e}");
        let e = e.to_string();
        assert!(e.contains("--mesh") && e.contains(other[0]), "{e}");
    }
    // the order and the precision still apply to a mesh
    let a = parse(&["--mesh", "m.msh", "--order", "2", "--precision", "f32"]).unwrap();
    assert_eq!((a.order, a.precision), (2, Precision::F32));
}

#[test]
fn levels_are_bounded_by_cell_numbering_and_memory() {
    let p1 = StudySize {
        dim: 2,
        order: 1,
        n_comp: 1,
    };
    assert_eq!(
        study_sizes(&p1, 8, 5, Some(GIB)).unwrap(),
        vec![8, 16, 32, 64, 128]
    );
    // 2·(8·2^12)² = 2.1e9 cells fit u32, 2·(8·2^13)² = 8.6e9 do not.
    assert_eq!(study_sizes(&p1, 8, 13, None).unwrap().len(), 13);
    let e = study_sizes(&p1, 8, 40, None).unwrap_err().to_string();
    assert!(
        e.starts_with("invalid argument `--levels`: --levels 40 from --n0 8"),
        "{e}"
    );
    assert!(
        e.contains("8·2^39") && e.contains("cell indices are u32"),
        "{e}"
    );
    assert!(e.contains("at most 13 levels from --n0 8 in 2D P1"), "{e}");
    // With 1 GiB of memory: 2D P1 n = 1024 needs ~0.1 GiB, n = 4096 ~2.9 GiB.
    let e = study_sizes(&p1, 8, 12, Some(GIB)).unwrap_err().to_string();
    assert!(
        e.contains("more than this machine's 1.0 GiB of memory"),
        "{e}"
    );
    let most: usize = e
        .split("at most ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    assert!(study_sizes(&p1, 8, most, Some(GIB)).is_ok());
    assert!(study_sizes(&p1, 8, most + 1, Some(GIB)).is_err());
    // 3D P2 elasticity: more dofs per cell, a lower bound.
    let lame = StudySize {
        dim: 3,
        order: 2,
        n_comp: 3,
    };
    assert!(study_sizes(&lame, 2, 8, Some(GIB)).is_err());
    // A coarsest mesh too large names --n0.
    let e = study_sizes(&lame, 2000, 1, None).unwrap_err().to_string();
    assert!(e.starts_with("invalid argument `--n0`: --n0 2000"), "{e}");
    assert!(study_sizes(&p1, 8, 0, None).is_err());
    assert!(study_sizes(&p1, 0, 3, None).is_err());
}

/// `--refine` and `--n` are bounded like `--levels`: by the cells a mesh
/// can number (u32) and a lower bound of the solve's memory, the error
/// naming the option and stating the most that fit.
#[test]
fn refine_and_n_are_bounded_like_levels() {
    let lshape = read_gmsh(examples_dir_path().join("meshes/lshape.msh")).unwrap();
    let p1 = FieldSize {
        order: 1,
        n_comp: 1,
    };
    // 384 triangles: 384·4^11 = 1.6e9 cells fit u32, 384·4^12 = 6.4e9 do not
    check_refine(&lshape.mesh, 11, p1, None).unwrap();
    let e = check_refine(&lshape.mesh, 20, p1, None)
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "invalid argument `--refine`: --refine 20: 20 refinements of 384 triangles give \
         4.222e14 triangles; at most 11 fit: 12 give 6.442e9 triangles, more than the \
         4294967295 cells a mesh can number (cell indices are u32)"
    );
    // with 1 GiB of memory: fewer, and the reason is the memory
    let e = check_refine(&lshape.mesh, 9, p1, Some(GIB))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("invalid argument `--refine`: --refine 9: "),
        "{e}"
    );
    assert!(
        e.contains("more than this machine's 1.0 GiB of memory"),
        "{e}"
    );
    let most: usize = e
        .split("at most ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    check_refine(&lshape.mesh, most, p1, Some(GIB)).unwrap();
    assert!(check_refine(&lshape.mesh, most + 1, p1, Some(GIB)).is_err());
    // --n of assembled_jacobian: 3D P2 at n = 512 needs ~170 GiB
    let p2 = StudySize {
        dim: 3,
        order: 2,
        n_comp: 1,
    };
    check_box("--n", &p2, 16, Some(GIB)).unwrap();
    let e = check_box("--n", &p2, 512, Some(GIB))
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(
            "invalid argument `--n`: --n 512: the mesh of 512 intervals per side has \
             8.053e8 tetrahedra and "
        ),
        "{e}"
    );
    let most: usize = e
        .split("at most --n ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse().ok())
        .unwrap();
    assert!(e.ends_with(&format!("at most --n {most} in 3D P2")), "{e}");
    check_box("--n", &p2, most, Some(GIB)).unwrap();
    assert!(check_box("--n", &p2, most + 1, Some(GIB)).is_err());
}

/// The example meshes' directory, `examples/`.
fn examples_dir_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples")
}

/// A fresh directory under the system's temporary directory.
fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("femquad-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn vtu_path_is_checked_before_solving() {
    let dir = temp_dir("vtu");
    let missing = dir.join("no-such-dir").join("u.vtu");
    let e = check_writable("--vtu", &missing).unwrap_err().to_string();
    assert!(
        e.contains("`--vtu`") && e.contains(&missing.display().to_string()),
        "{e}"
    );
    assert!(e.contains("does not exist"), "{e}");
    let e = check_writable("--vtu", &dir).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    // A writable new file: checked, and nothing left behind.
    let new = dir.join("u.vtu");
    check_writable("--vtu", &new).unwrap();
    assert!(!new.exists());
    // An existing file: checked, contents untouched.
    std::fs::write(&new, "keep").unwrap();
    check_writable("--vtu", &new).unwrap();
    assert_eq!(std::fs::read_to_string(&new).unwrap(), "keep");

    // The example reports it before any solve (none could finish this fast
    // on 2^40 cells: the levels would be refused, and the vtu check comes first).
    let m = missing.to_string_lossy().into_owned();
    let args = parse(&["--native", "--vtu", &m]).unwrap();
    let e = run_example(&Manufactured::laplacian(), &args, |_, _| (8, 40))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`--vtu`") && e.contains("does not exist"), "{e}");
    // … and then the levels, still before solving.
    let args = parse(&["--native", "--levels", "40"]).unwrap();
    let e = run_example(&Manufactured::laplacian(), &args, |_, _| (8, 5))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`--levels`: --levels 40"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tolerances_are_per_solver_and_stated() {
    let a = parse(&["--precision", "f32"]).unwrap();
    assert_eq!(a.tolerance(&NEWTON_TOLERANCE), 1e-4);
    assert_eq!(a.tolerance(&CG_TOLERANCE), 1e-5);
    let a = parse(&["--tol", "1e-8"]).unwrap();
    assert_eq!(a.tolerance(&NEWTON_TOLERANCE), 1e-8);
    let h = NEWTON_TOLERANCE.help();
    assert!(h.contains("[default: 1e-10 in f64, 1e-4 in f32]"), "{h}");
    assert!(h.contains("|F(u_k)| <= tol * |F(u_0)|"), "{h}");
    assert!(
        CG_TOLERANCE
            .help()
            .contains("[default: 1e-12 in f64, 1e-5 in f32]")
    );
}

// ---- the example binaries ----------------------------------------------

/// The directory of the example binaries, built once by the cargo that runs
/// this test, into its target directory and profile (`current_exe` is
/// `<target>/<profile>/deps/cli-<hash>`).
fn examples_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let profile_dir = exe.parent().and_then(Path::parent).unwrap().to_path_buf();
        let target_dir = profile_dir.parent().unwrap();
        let mut cargo = Command::new(env!("CARGO"));
        cargo
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--quiet", "-p", "femquad-examples"])
            .args(["--example", "laplacian", "--example", "elasticity"])
            .args([
                "--example",
                "custom_physics",
                "--example",
                "assembled_jacobian",
            ])
            .args(["--example", "solve_bench", "--target-dir"])
            .arg(target_dir);
        if profile_dir.file_name().is_some_and(|n| n == "release") {
            cargo.arg("--release");
        }
        let status = cargo.status().unwrap();
        assert!(status.success(), "building the examples: {status}");
        profile_dir.join("examples")
    })
}

/// A command running the built example `name`, with the autotune cache off
/// (`FEMQUAD_AUTOTUNE=off`): its launches take the device default
/// configurations, whatever the machine's `~/.cache/femquad` holds.
fn example_command(name: &str) -> Command {
    let mut command = Command::new(examples_dir().join(name));
    command.env("FEMQUAD_AUTOTUNE", "off");
    command
}

fn help_of(example: &str) -> String {
    let out = example_command(example).arg("--help").output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn each_example_describes_itself_in_help() {
    for (example, about) in [
        ("laplacian", "Poisson's equation -div(k grad u) = f"),
        ("elasticity", "Linear (Lamé) elasticity -div(sigma(u)) = f"),
        (
            "custom_physics",
            "Nonlinear reaction-diffusion -div((1 + u^2) grad u) + u^3 = f",
        ),
    ] {
        let help = help_of(example);
        assert!(help.starts_with(about), "{example}: {help}");
        assert!(help.contains("Prints, for each mesh"), "{example}: {help}");
        assert!(
            !help.contains(env!("CARGO_PKG_DESCRIPTION")),
            "{example} shows the package description: {help}"
        );
        assert!(help.contains("[possible values: f32, f64]"), "{example}");
    }
    let help = help_of("custom_physics");
    assert!(
        help.contains(
            "[default: 1e-10 in f64, 1e-4 in f32]: Newton stops when |F(u_k)| <= tol * |F(u_0)|"
        ),
        "{help}"
    );
    assert!(
        help_of("laplacian").contains("[default: 1e-12 in f64, 1e-5 in f32]: conjugate gradients")
    );
    // The two examples outside the convergence studies: description,
    // tolerance option, default.
    for (example, about, tol, default) in [
        (
            "assembled_jacobian",
            "Assembles the Jacobian of -div(a grad u) = 1",
            "Relative residual to which the matrix-free CG solves",
            "[default: 1e-12]",
        ),
        (
            "solve_bench",
            "Solve benchmark: CG to a relative residual of 1e-8",
            "Relative residual of CG",
            "[default: 1e-8]",
        ),
    ] {
        let help = help_of(example);
        assert!(help.starts_with(about), "{help}");
        assert!(help.contains(tol) && help.contains(default), "{help}");
        assert!(
            !help.contains(env!("CARGO_PKG_DESCRIPTION")),
            "{example} shows the package description"
        );
    }
}

/// Every example takes `--mesh` (with `--refine` and `--reorient`)
/// through the shared options: `assembled_jacobian` and `solve_bench` solve
/// on a Gmsh mesh too, and the options the mesh fixes conflict with it.
#[test]
fn every_example_takes_a_gmsh_mesh() {
    for example in [
        "laplacian",
        "elasticity",
        "custom_physics",
        "assembled_jacobian",
        "solve_bench",
    ] {
        let help = help_of(example);
        for option in ["--mesh <FILE>", "--refine <REFINE>", "--reorient"] {
            assert!(help.contains(option), "{example} lacks {option}: {help}");
        }
    }
    let lshape = examples_dir_path().join("meshes/lshape.msh");
    let run = |example: &str, args: &[&str]| {
        let out = example_command(example)
            .arg("--mesh")
            .arg(&lshape)
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        (out.status.success(), text)
    };
    let (ok, out) = run("assembled_jacobian", &["--native", "--order", "2"]);
    assert!(ok, "{out}");
    assert!(
        out.contains("lshape.msh: 2D, 384 cells, 225 vertices"),
        "{out}"
    );
    assert!(out.contains("relative"), "{out}");
    let (ok, out) = run(
        "solve_bench",
        &["--native", "--refine", "1", "--physics", "lame"],
    );
    assert!(ok, "{out}");
    assert!(out.contains("lame-2d-p1"), "{out}");
    // 384·4 = 1536 cells: the refined Gmsh mesh, not a unit box
    assert!(out.contains(" 1536 "), "{out}");
    for (example, fixed) in [
        ("assembled_jacobian", "--n"),
        ("solve_bench", "--cells"),
        ("solve_bench", "--suite"),
    ] {
        let args: &[&str] = if fixed == "--suite" {
            &[fixed]
        } else {
            &[fixed, "64"]
        };
        let (ok, out) = run(example, args);
        assert!(
            !ok && out.contains("cannot be used with"),
            "{example} {fixed}: {out}"
        );
    }
}

/// Sizes a command line asks for are refused at once, stating the bound,
/// where they would run for minutes and be killed for want of memory:
/// `--cells 1e12` (parsed by femquad's count parser), `--refine 20`.
#[test]
fn sizes_beyond_the_bound_are_refused_at_once() {
    let lshape = examples_dir_path().join("meshes/lshape.msh");
    let lshape = lshape.to_str().unwrap();
    for (example, args, reason) in [
        (
            "solve_bench",
            &["--native", "--cells", "1e12"][..],
            "error: invalid argument `--cells`: --cells 1000000000000: the poisson-2d-p1 mesh, \
             n = ",
        ),
        (
            "solve_bench",
            &["--native", "--dim", "3", "--cells", "2^40"],
            "error: invalid argument `--cells`: --cells 1099511627776: the poisson-3d-p1 mesh, \
             n = ",
        ),
        (
            "laplacian",
            &["--native", "--mesh", lshape, "--refine", "20"],
            "error: invalid argument `--refine`: --refine 20: 20 refinements of 384 triangles \
             give 4.222e14 triangles; at most ",
        ),
        (
            "solve_bench",
            &["--native", "--mesh", lshape, "--refine", "20"],
            "error: invalid argument `--refine`: --refine 20: 20 refinements of 384 triangles \
             give 4.222e14 triangles; at most ",
        ),
    ] {
        let out = example_command(example).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{example} {args:?}");
        assert!(err.starts_with(reason), "{example} {args:?}: {err}");
        assert!(
            err.contains("at most") && (err.contains("u32") || err.contains("GiB of memory")),
            "{err}"
        );
    }
    // the count parser's own errors, through clap, for every count option
    for option in ["--cells", "--max-iter", "--assembled-max-dofs"] {
        let out = example_command("solve_bench")
            .args([option, "1e6x"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("'1e6x'") && err.contains("is not a count (write e.g. 16777216, 2^24"),
            "{option}: {err}"
        );
    }
}

/// solve_bench's count options read counts as `--cells` does (`1e9`,
/// `2^10`), `--assembled-max-dofs` 0 too.
#[test]
fn solve_bench_counts_share_one_parser() {
    for (max_iter, assembled) in [("1e3", "1e9"), ("2^10", "0")] {
        let out = example_command("solve_bench")
            .args(["--native", "--cells", "2^8", "--max-iter", max_iter])
            .args(["--assembled-max-dofs", assembled])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && text.contains("poisson-2d-p1"),
            "{max_iter} {assembled}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn assembled_jacobian_rejects_a_tolerance_too_loose_to_compare() {
    let out = example_command("assembled_jacobian")
        .args(["--native", "--n", "2", "--tol", "1e-6"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--tol") && err.contains("1e-6"), "{err}");
}

/// `laplacian | head -1`, at its most abrupt: the reading end of stdout is
/// closed before the example prints anything. It ends quietly: no panic
/// ("failed printing to stdout"), ended by SIGPIPE as Unix tools are.
#[cfg(unix)]
#[test]
fn closed_stdout_pipe_ends_an_example_quietly() {
    use std::os::unix::process::ExitStatusExt;
    let mut child = example_command("laplacian")
        .args(["--native", "--levels", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.is_empty(), "stderr: {stderr}");
    assert!(
        out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
        "{:?}",
        out.status
    );
}
