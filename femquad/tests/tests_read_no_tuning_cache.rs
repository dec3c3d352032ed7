//! The tests' device and options ([`femquad::opencl::testing`]) read no autotune
//! cache: a child process that opens the tests' backend and launches a
//! residual with no explicit configuration, with `HOME`, `XDG_CACHE_HOME`
//! and `FEMQUAD_CACHE_DIR` all pointing at directories holding a corrupt
//! `autotune.txt`, prints none of the warnings that loading that file
//! prints (and the parent first shows that loading it does print them).

use std::path::{Path, PathBuf};
use std::process::Command;

use femquad::opencl::KernelOptions;
use femquad::opencl::options::{AUTOTUNE_ENV, CACHE_DIR_ENV};
use femquad::opencl::testing;
use femquad::opencl::tuning_cache::CACHE_FILE;
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;

/// Set in the environment of the child process.
const CHILD_ENV: &str = "FEMQUAD_NO_TUNING_CACHE_CHILD";

/// What a load of the corrupt cache prints for each of its lines.
const WARNING: &str = "autotune cache entry skipped";

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes a corrupt cache file into `dir`.
fn corrupt_cache(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join(CACHE_FILE),
        "garbage line\ndevice=x | dim=2 => n_bl=1 n_cb=1\n",
    )
    .unwrap();
}

/// The child: the tests' backend, an operator launched with the
/// configuration the options choose.
#[test]
fn child() {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    assert!(testing::options().tuning_cache.is_none());
    let backend = Backend::opencl_with(testing::device(), testing::options());
    let mesh = unit_square(4, &MeshOptions::default()).unwrap();
    let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let form = Form::<f64>::new(space, Laplacian).unwrap();
    let mut op = Operator::new(form, &backend).unwrap();
    let values = op.space().interpolate(|x, u| u[0] = x[0]);
    let u = op.vector_from(&values).unwrap();
    let mut r = op.vector().unwrap();
    op.apply(&u, &mut r).unwrap();
}

#[test]
fn the_tests_options_read_no_tuning_cache_from_the_home() {
    let root = TempDir(
        std::env::temp_dir().join(format!("femquad-no-tuning-cache-{}", std::process::id())),
    );
    let home = root.0.join("home");
    let xdg = root.0.join("xdg");
    let explicit = root.0.join("explicit");
    corrupt_cache(&home.join(".cache").join("femquad"));
    corrupt_cache(&xdg.join("femquad"));
    corrupt_cache(&explicit);
    let vars = [
        ("HOME", home.clone()),
        ("XDG_CACHE_HOME", xdg.clone()),
        (CACHE_DIR_ENV, explicit.clone()),
    ];

    // The fixture is seen when read: a program's options load it and skip
    // its lines (each with a warning).
    let from_env = KernelOptions::from_vars(|name| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.display().to_string())
    })
    .unwrap();
    let loaded = from_env.tuning_cache.expect("the environment's cache");
    assert_eq!(loaded.skipped(), 2);

    // The tests' options, in that environment, do not read it.
    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args(["--exact", "child", "--nocapture", "--test-threads", "1"])
        .env(CHILD_ENV, "1")
        .env_remove(AUTOTUNE_ENV);
    for (k, v) in &vars {
        child.env(k, v);
    }
    let out = child.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "{stdout}\n{stderr}"
    );
    assert!(
        !stderr.contains(WARNING) && !stdout.contains(WARNING),
        "the tests' options read an autotune cache:\n{stderr}"
    );
}
