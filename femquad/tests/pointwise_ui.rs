//! What users see of `#[pointwise]`:
//!
//! - `tests/ui/pass`: accepted code, compiled into this test as modules and
//!   run (each `main` asserts the values it computes);
//! - `tests/ui/fail`: rejected code, with the reviewed error messages in the
//!   `.stderr` files (trybuild). These are the macro's own messages;
//! - `tests/ui/rustc`: rejected code whose errors are rustc's own text or
//!   framing (a helper call that does not fit, a helper's `D`, a helper that
//!   is not `#[pointwise]`, recursion through helpers), which changes
//!   between rustc releases. Their `.stderr` files are compared only under
//!   the release they were reviewed with ([`REVIEWED_RUSTC`]); under another
//!   one this test says, on the terminal, that it did not compare them.
//!
//! Regenerate the `.stderr` files with `TRYBUILD=overwrite cargo test -p
//! femquad --test pointwise_ui` and review every change (after moving to a
//! new rustc: update [`REVIEWED_RUSTC`] with the `tests/ui/rustc` files).
//!
//! Time: trybuild compiles the cases as a crate of its own in
//! `target/tests/trybuild`, so femquad and every dependency are compiled
//! there again. With compile-fail cases only it runs `cargo check`: no
//! code generation for them (which `cargo build`, needed to run accepted
//! code, took most of the time for).

use std::io::Write;

#[path = "ui/pass/arrays_and_loops.rs"]
mod pass_arrays_and_loops;
#[path = "ui/pass/expressions.rs"]
mod pass_expressions;
#[path = "ui/pass/guide.rs"]
mod pass_guide;
#[path = "ui/pass/helpers.rs"]
mod pass_helpers;
#[path = "ui/pass/math.rs"]
mod pass_math;
#[path = "ui/pass/opencl_source.rs"]
mod pass_opencl_source;
#[path = "ui/pass/signatures.rs"]
mod pass_signatures;
#[path = "ui/pass/statements.rs"]
mod pass_statements;

/// The rustc release the `.stderr` files of `tests/ui/rustc` were reviewed
/// with (CI's).
const REVIEWED_RUSTC: &str = "1.95.0";

#[test]
fn accepted_code_compiles_and_computes_the_expected_values() {
    pass_arrays_and_loops::main();
    pass_expressions::main();
    pass_guide::main();
    pass_helpers::main();
    pass_math::main();
    pass_opencl_source::main();
    pass_signatures::main();
    pass_statements::main();
}

#[test]
fn rejected_code_reports_the_reviewed_errors() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    let release = rustc_release();
    if release.as_deref() == Some(REVIEWED_RUSTC) {
        t.compile_fail("tests/ui/rustc/*.rs");
    } else {
        // Straight to the terminal: cargo test shows it for a passing test.
        let _ = writeln!(
            std::io::stderr(),
            "\nNOTE pointwise_ui: tests/ui/rustc/*.rs NOT COMPARED: their .stderr files are \
             rustc's own messages as rustc {REVIEWED_RUSTC} writes them, and this is rustc {}. \
             Compare them under rustc {REVIEWED_RUSTC}, or regenerate and review them for this \
             release (see tests/pointwise_ui.rs).\n",
            release.as_deref().unwrap_or("of unknown version"),
        );
    }
}

/// The release of the rustc that trybuild's cargo runs (`1.95.0`,
/// `1.97.0-nightly`): the same `rustc` on the same `PATH`, with the same
/// `RUSTUP_TOOLCHAIN`, as this test's environment gives it.
fn rustc_release() -> Option<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(1).map(str::to_owned)
}
