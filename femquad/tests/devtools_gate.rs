//! femquad's tools — the device probe of pointwise physics, the tests'
//! device choice, the seeded generator of test data and the benchmarks'
//! timing helper — are not library API: each is public only with the
//! `devtools` feature (off by default), which femquad-bench,
//! pointwise-difftest and the tests turn on. A default build
//! (`cargo build -p femquad`, `cargo doc -p femquad`) has none of them in
//! its public surface; the library's own uses of `rng` (mesh jitter) and
//! of `time_runs` (the autotuner) stay crate-private.

use std::path::Path;

/// The attributes that keep a declaration out of the default public surface.
const GATES: [&str; 2] = [
    r#"#[cfg(feature = "devtools")]"#,
    r#"#[cfg(any(test, feature = "devtools"))]"#,
];

/// Each tool's public declaration, by file (relative to `femquad/`).
const TOOLS: [(&str, &str); 4] = [
    ("src/lib.rs", "pub mod rng;"),
    ("src/opencl/mod.rs", "pub mod probe;"),
    ("src/opencl/mod.rs", "pub mod testing;"),
    ("src/opencl/autotune/mod.rs", "pub use measure::time_runs;"),
];

fn read(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_tool_is_public_only_with_the_devtools_feature() {
    for (file, declaration) in TOOLS {
        let text = read(file);
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let at: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i] == declaration)
            .collect();
        assert_eq!(
            at.len(),
            1,
            "{file}: `{declaration}` declared {} times",
            at.len()
        );
        let attribute = if at[0] == 0 { "" } else { lines[at[0] - 1] };
        assert!(
            GATES.contains(&attribute),
            "{file}: `{declaration}` is public without the devtools feature \
             (the line before it is `{attribute}`)"
        );
    }
}

#[test]
fn the_devtools_feature_is_off_by_default() {
    let manifest = read("Cargo.toml");
    let features = manifest
        .split("\n[features]\n")
        .nth(1)
        .expect("femquad/Cargo.toml has a [features] table");
    let table = features.split("\n[").next().unwrap_or_default();
    assert!(
        table.lines().any(|l| l.trim() == "devtools = []"),
        "[features] declares no `devtools = []`:\n{table}"
    );
    let default = table
        .lines()
        .find(|l| l.trim_start().starts_with("default"));
    assert!(
        default.is_none_or(|l| !l.contains("devtools")),
        "devtools is a default feature: {default:?}"
    );
}
