//! The femquad benchmark: element-vector integration on an OpenCL device,
//! in the manner of PETSc's SNES ex12 runs in Knepley, Rupp & Terrel.
//!
//! ```text
//! cargo run --release -p femquad-bench -- --dim 2 --precision f32            # one case, 2^24 cells
//! cargo run --release -p femquad-bench -- --suite --csv suite.csv             # all cases of BENCHMARKS.md
//! cargo run --release -p femquad-bench -- --sweep --precision f32 --csv s.csv # N_bl × N_cb (Table 2)
//! cargo run --release -p femquad-bench -- --suite --n-bl auto --with-default  # autotuned vs default
//! cargo run --release -p femquad-bench -- --plot figs --from-csv suite.csv    # SVG figures (Figs. 5–6)
//! cargo run --release -p femquad-bench -- --suite --measure bk,bp --numbering random,renumbered  # + global F(u), CG
//! ```
//!
//! `--help` lists every option; the logic lives in the `femquad_bench` library.

use std::process::ExitCode;

use clap::Parser;
use femquad_bench::{Options, run};

/// Printing into a closed pipe (`femquad-bench … | head -1`) ends the
/// program silently, as it does other Unix tools, instead of a panic
/// "failed printing to stdout": the Rust runtime ignores `SIGPIPE`, this
/// restores the default action (terminate). Call first in `main`.
fn end_quietly_on_broken_pipe() {
    #[cfg(unix)]
    // SAFETY: called first in `main`, before any other thread exists;
    // setting a signal's action to its default installs no handler.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let opts = Options::parse();
    match run(&opts) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("femquad-bench: error: {e}");
            ExitCode::FAILURE
        }
    }
}
