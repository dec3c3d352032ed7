//! The femquad benchmark: element-vector integration on an OpenCL device,
//! in the manner of PETSc's SNES ex12 runs in Knepley, Rupp & Terrel.
//!
//! ```text
//! cargo run --release --example benchmark -- --dim 2 --precision f32            # one case, 2^24 cells
//! cargo run --release --example benchmark -- --suite --csv suite.csv             # all cases of BENCHMARKS.md
//! cargo run --release --example benchmark -- --sweep --precision f32 --csv s.csv # N_bl × N_cb (Table 2)
//! cargo run --release --example benchmark -- --suite --n-bl auto --with-default  # autotuned vs default
//! cargo run --release --example benchmark -- --plot figs --from-csv suite.csv    # SVG figures (Figs. 5–6)
//! ```
//!
//! `--help` lists every option; the logic lives in `femquad_examples::bench`.

fn main() -> std::process::ExitCode {
    femquad_examples::bench::main_with_args()
}
