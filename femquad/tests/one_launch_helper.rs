//! Every kernel launch of the library goes through one helper,
//! `femquad/src/opencl/launch.rs` (`Launch`): no other source file sets
//! kernel arguments with opencl3's `ExecuteKernel` or enqueues a kernel
//! itself (`enqueue_nd_range…`).

use std::path::{Path, PathBuf};

/// The files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The files of `src` other than `helper` that name one of `forbidden`,
/// with the line.
fn launches_outside(src: &Path, helper: &Path, forbidden: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut found = Vec::new();
    for file in files.iter().filter(|f| f.as_path() != helper) {
        let text = std::fs::read_to_string(file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if forbidden.iter().any(|f| line.contains(f)) {
                found.push(format!("{}:{}: {}", file.display(), i + 1, line.trim()));
            }
        }
    }
    found
}

const FORBIDDEN: [&str; 2] = ["ExecuteKernel", "enqueue_nd_range"];

#[test]
fn only_the_launch_helper_enqueues_kernels() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let helper = src.join("opencl/launch.rs");
    assert!(
        std::fs::read_to_string(&helper)
            .unwrap()
            .contains("enqueue_nd_range_kernel"),
        "the helper itself enqueues"
    );
    let found = launches_outside(&src, &helper, &FORBIDDEN);
    assert!(
        found.is_empty(),
        "kernel launches outside opencl/launch.rs (use opencl::launch::Launch):\n{}",
        found.join("\n")
    );
}
