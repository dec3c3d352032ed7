//! The benchmark program's logic (`examples/benchmark.rs` is a thin `main`):
//! single cases, the suite, the `N_bl × N_cb` sweep, autotuning and figures.
//!
//! What is measured, per configuration of a case (see [`case`]):
//! 1. a jittered, shuffled mesh of the unit square/cube (unstructured memory
//!    order), a random global vector `u` in `[−1, 1)` gathered to cell-local
//!    coefficients, random positive aux values in `[0.5, 2)`;
//! 2. one evaluation through `OpenClIntegrator::element_vectors`, compared
//!    with the native integrator on a sample of cells (the first, middle and
//!    last `--check-cells` of the device range and the native remainder;
//!    max-norm relative difference ≤ 1e-12 in f64, 1e-5 in f32; every
//!    output finite);
//! 3. `--warmup` untimed and `--reps` timed launches (`time_kernel`,
//!    profiling events) on the uploaded inputs: median, min, max;
//! 4. the model ([`femquad::perf_model::LaunchModel`]) for the cells run on
//!    the device: GF/s = flops / median, GB/s = minimal bytes / median,
//!    their ratio to the copy bandwidth measured once per process on the
//!    same device (`bandwidth::measure_copy`, float4 copy), the predicted
//!    time bytes / copy bandwidth and the model error measured/predicted − 1.
//!
//! A failed check or an error does not stop a suite or sweep (the row is
//! marked, see [`report`]); the program exits with an error at the end.

pub mod case;
pub mod options;
pub mod plot;
pub mod progress;
pub mod report;

use std::fmt;
use std::path::{Path, PathBuf};

use femquad::opencl::list_devices;

pub use case::{Host, Runner};
pub use options::{CaseSpec, Options, Plan};
pub use report::Row;

/// Errors of the benchmark program.
#[derive(Debug)]
pub enum BenchError {
    /// An error of femquad (device, mesh, kernel build, …).
    Femquad(femquad::Error),
    /// Bad options.
    Usage(String),
    /// A file could not be read or written.
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A CSV file is malformed.
    Csv {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A figure could not be drawn.
    Plot(String),
    /// Some cases failed their correctness check or hit an error.
    Failed(Vec<String>),
}

impl BenchError {
    /// An I/O error on `path`.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        BenchError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::Femquad(e) => write!(f, "{e}"),
            BenchError::Usage(s) => write!(f, "{s}"),
            BenchError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            BenchError::Csv { path, line, reason } => {
                write!(f, "{}:{line}: {reason}", path.display())
            }
            BenchError::Plot(s) => write!(f, "drawing a figure: {s}"),
            BenchError::Failed(list) => {
                write!(f, "{} configuration(s) failed:", list.len())?;
                for l in list {
                    write!(f, "\n  {l}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for BenchError {}

impl From<femquad::Error> for BenchError {
    fn from(e: femquad::Error) -> Self {
        BenchError::Femquad(e)
    }
}

/// Runs what `opts` asks for and returns the rows (measured, or read for
/// `--plot --from-csv`). Writes `--csv`/`--json`/`--plot` outputs even when
/// some configurations failed, then returns [`BenchError::Failed`].
pub fn run(opts: &Options) -> Result<Vec<Row>, BenchError> {
    if opts.list_devices {
        for d in list_devices()? {
            println!("{d}");
        }
        return Ok(Vec::new());
    }
    if let Some(dir) = &opts.plot
        && !opts.from_csv.is_empty()
    {
        let mut rows = Vec::new();
        for f in &opts.from_csv {
            rows.extend(report::read_csv(f)?);
        }
        let files = plot::plot_rows(&rows, dir)?;
        for f in files {
            println!("wrote {}", f.display());
        }
        return Ok(rows);
    }

    let plan = if opts.suite {
        suite_plan(opts)?
    } else {
        opts.plan()?
    };
    let mut runner = Runner::new(opts)?;
    {
        let info = runner.device.info();
        runner.progress.println(&format!(
            "# femquad benchmark on {} ({}, driver {}): {} CUs, {} MiB, fp64 {}",
            info.name,
            info.platform,
            info.driver,
            info.compute_units,
            info.global_mem_size >> 20,
            if info.fp64 { "yes" } else { "no" }
        ));
        let switch = |name: &str| {
            let on = std::env::var(name).map(|v| v.trim() != "0").unwrap_or(true);
            format!("{name}={}", if on { "on" } else { "off" })
        };
        runner.progress.println(&format!(
            "# kernel switches: {}, {}",
            switch(femquad::opencl::shape::PREFETCH_ENV),
            switch(femquad::opencl::shape::VECTOR_LOADS_ENV)
        ));
        runner.progress.println(&report::table_header());
    }

    if opts.suite {
        let specs: Vec<CaseSpec> = options::suite_cases()
            .into_iter()
            .filter(|c| options::matches_filter(&c.name(), opts.filter.as_deref()))
            .collect();
        if specs.is_empty() {
            return Err(BenchError::Usage(format!(
                "--filter {:?} matches no suite case",
                opts.filter
            )));
        }
        runner.progress.set_length(specs.len());
        for dim in [2, 3] {
            let of_dim: Vec<&CaseSpec> = specs.iter().filter(|c| c.dim == dim).collect();
            if of_dim.is_empty() {
                continue;
            }
            let mut host = match Host::build(dim, opts, &runner.progress) {
                Ok(h) => h,
                Err(e) => {
                    for spec in of_dim {
                        runner.push_error(spec, "suite", 0, &e);
                        runner.progress.inc();
                    }
                    continue;
                }
            };
            for spec in of_dim {
                if let Err(e) = runner.run_case(&mut host, spec, &plan, "suite") {
                    let n = host.mesh.n_cells();
                    runner.push_error(spec, "suite", n, &e);
                }
                runner.progress.inc();
            }
        }
    } else {
        let spec = opts.case()?;
        let mode = if opts.sweep { "sweep" } else { "single" };
        let mut host = Host::build(spec.dim, opts, &runner.progress)?;
        runner.run_case(&mut host, &spec, &plan, mode)?;
    }
    runner.progress.finish();

    let rows = std::mem::take(&mut runner.rows);
    if opts.sweep {
        println!();
        print!("{}", report::sweep_table(&rows));
    }
    if let Some(p) = &opts.csv {
        report::write_file(p, &report::to_csv(&rows))?;
    }
    if let Some(p) = &opts.json {
        report::write_file(p, &report::to_json(&rows))?;
    }
    if let Some(dir) = &opts.plot {
        for f in plot::plot_rows(&rows, dir)? {
            println!("wrote {}", f.display());
        }
    }
    if !runner.failures.is_empty() {
        return Err(BenchError::Failed(std::mem::take(&mut runner.failures)));
    }
    Ok(rows)
}

/// The plan of the suite: `--n-bl`/`--n-cb` as for one case (no sweep).
fn suite_plan(opts: &Options) -> Result<Plan, BenchError> {
    let mut o = opts.clone();
    o.sweep = false;
    o.plan()
}

/// `main` of the example: parses the arguments, runs, reports errors.
pub fn main_with_args() -> std::process::ExitCode {
    use clap::Parser;
    let opts = Options::parse();
    match run(&opts) {
        Ok(_) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("benchmark: error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
