//! The femquad benchmark (`cargo run --release -p femquad-bench -- …`):
//! element-vector integration on an OpenCL device, in the manner of PETSc's
//! SNES ex12 runs in Knepley, Rupp & Terrel — single cases, the suite of
//! BENCHMARKS.md, the `N_bl × N_cb` sweep, autotuning, CSV/JSON and figures.
//! The binary (`src/main.rs`) is a thin `main`; this library is what it
//! runs, and what the tests call.
//!
//! What is measured by default, per configuration of a case (BK, the
//! element kernel; see [`runner`]):
//! 1. a jittered, shuffled mesh of the unit square/cube (unstructured
//!    memory order; `--numbering`), a random global vector `u` in `[−1, 1)` gathered to
//!    cell-local coefficients, random positive aux values in `[0.5, 2)`
//!    ([`host`]);
//! 2. one evaluation through the element kernel (`OpenClIntegrator::integrate_cells`), compared
//!    with the native integrator on a sample of cells (the first, middle and
//!    last `--check-cells` of the device range and the native remainder;
//!    max-norm relative difference ≤ 1e-12 in f64, 1e-5 in f32; every
//!    output finite);
//! 3. `--warmup` untimed and `--reps` timed launches (`time_kernel`,
//!    profiling events) on the uploaded inputs: median, min, max;
//! 4. the model ([`perf_model::LaunchModel`]) for the cells run on
//!    the device: GF/s = flops / median, GB/s = minimal bytes / median,
//!    their ratio to the copy bandwidth measured once per process on the
//!    same device ([`bandwidth::measure_copy`], float4 copy), the predicted
//!    time bytes / copy bandwidth and the model error measured/predicted − 1.
//!
//! With `--measure bp` ([`Measure::Bp`]) each case adds the global
//! residual as a user gets it — `F(u)` with `u` and `F` on the device, for
//! atomic and deterministic assembly and stored and computed geometry —
//! checked against the host assembly of the checked element vectors, timed
//! the same way, reported against its minimal bytes
//! ([`perf_model::ResidualModel`]) with GDOF/s, and with the time of
//! one device-resident conjugate-gradient iteration ([`bp`], [`cg_time`]).
//! `--numbering` runs every case on the randomly numbered mesh, the
//! locality-renumbered one, or both ([`Numbering`]).
//!
//! A failed check or an error does not stop a suite or sweep (the row is
//! marked, see [`row`]); the program exits with an error at the end.
//!
//! Modules: [`options`] (command line), [`spec`] (cases, suite),
//! [`measure`] and [`numbering`] (what a row measures, on which mesh),
//! [`mod@run`] (what the options ask for), [`host`], [`case`], [`runner`],
//! [`bp`], [`global_op`] and [`cg_time`] (measuring; the calls into
//! `femquad::opencl` live there), [`bandwidth`] (the copy-bandwidth
//! ceiling) and [`perf_model`] (the bytes and flops a kernel must move),
//! [`physics`] (the transient case `heat` and the Neumann term of
//! `--neumann`), [`row`] (the result type), [`output`] (CSV/JSON), [`table`] (printed
//! results), [`plot`] (SVG), [`progress`] (stderr).

pub mod bandwidth;
pub mod bp;
pub mod case;
pub mod cg_time;
pub mod error;
pub mod global_op;
pub mod host;
pub mod host_timing;
pub mod measure;
pub mod numbering;
pub mod options;
pub mod output;
pub mod perf_model;
pub mod physics;
pub mod plot;
pub mod progress;
pub mod row;
pub mod run;
pub mod runner;
pub mod spec;
pub mod table;

pub use error::BenchError;
pub use measure::Measure;
pub use numbering::Numbering;
pub use options::{Options, Plan, Selection};
pub use row::Row;
pub use run::run;
pub use spec::CaseSpec;
