//! Command-line options of the benchmark program (clap), in the spirit of
//! PETSc's SNES ex12 that the paper ran.

use std::path::PathBuf;

use clap::Parser;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use femquad::Precision;
use femquad::mesh::size::parse_count;

use crate::BenchError;
use crate::measure::Measure;
use crate::numbering::Numbering;
use crate::spec::{CaseSpec, Coefficient, PhysicsKind, default_qdegree};

/// `--precision`: the values of [`Precision`] (listed by `--help`),
/// parsed by its `FromStr`.
pub fn precision_parser() -> impl TypedValueParser<Value = Precision> {
    PossibleValuesParser::new(Precision::ALL.map(Precision::name))
        .try_map(|s| s.parse::<Precision>())
}

/// `--n-bl` / `--n-cb`: the device default, autotuned, or a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigArg {
    /// The library's default for the device (`femquad::opencl::shape::default_config`).
    Default,
    /// From the autotune cache, else tuned now (and stored).
    Auto,
    /// This value.
    Value(usize),
}

/// Parses `default`, `auto` or a positive integer.
pub fn parse_config_arg(s: &str) -> Result<ConfigArg, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "default" | "" => Ok(ConfigArg::Default),
        "auto" => Ok(ConfigArg::Auto),
        t => match t.parse::<usize>() {
            Ok(0) => Err("must be at least 1".into()),
            Ok(n) => Ok(ConfigArg::Value(n)),
            Err(_) => Err(format!(
                "`{s}` is not `default`, `auto` or a positive integer"
            )),
        },
    }
}

/// Parses a positive integer (`0` and non-numbers are errors that name the value).
pub fn parse_positive(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("`{s}` is not a positive integer")),
    }
}

/// Parses the mesh jitter: a number in `[0, MAX_JITTER]` (the mesh
/// generator's bound, beyond which cells may invert).
pub fn parse_jitter(s: &str) -> Result<f64, String> {
    let max = femquad::mesh::generate::MAX_JITTER;
    match s.trim().parse::<f64>() {
        Ok(v) if (0.0..=max).contains(&v) => Ok(v),
        Ok(_) => Err(format!("`{s}` is outside [0, {max}]")),
        Err(_) => Err(format!("`{s}` is not a number")),
    }
}

/// Measures femquad's element kernel (BK: element vectors of a residual) on
/// an OpenCL device, in the manner of PETSc's SNES ex12 runs in Knepley,
/// Rupp and Terrel, and with --measure bp the global residual F(u) with u
/// and F on the device (BP) and one conjugate-gradient iteration.
///
/// Each case (P1/P2 Poisson or Lamé, 2D/3D, f32/f64) runs on a jittered,
/// randomly renumbered mesh of the unit square or cube (--numbering: also
/// renumbered for locality) with random data: the thread-transposition
/// kernel's element vectors are first checked against the native
/// integrator, then the kernel is timed (OpenCL profiling events, median of
/// --reps launches after --warmup). One line is printed per launch
/// configuration: kernel time, model GF/s, effective GB/s (minimal bytes /
/// time), the copy bandwidth measured in the same process, % of copy, the
/// performance model's predicted time and its error, and the check's
/// result. BP rows (atomic and deterministic assembly, stored and computed
/// geometry) are checked against the host assembly of the element vectors
/// and add GDOF/s and the time of a CG iteration. --suite runs the cases of
/// BENCHMARKS.md, --sweep the N_bl × N_cb grid of the paper's Table 2;
/// --csv and --json write every field, --plot draws SVG figures.
#[derive(Parser, Clone, Debug)]
#[command(name = "femquad-bench", version)]
pub struct Options {
    /// Spatial dimension.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub dim: u8,
    /// Lagrange order.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
    pub order: u8,
    /// Physics.
    #[arg(long, value_enum, default_value_t = PhysicsKind::Laplacian)]
    pub physics: PhysicsKind,
    /// Coefficient of the Laplacian (`none` for elasticity).
    #[arg(long, value_enum, default_value_t = Coefficient::None)]
    pub coefficient: Coefficient,
    /// Precision.
    #[arg(long, default_value = "f64", value_parser = precision_parser())]
    pub precision: Precision,
    /// Target number of cells (the smallest structured mesh with at least
    /// this many): 16777216, 2^24, 1e6, 16M (femquad's count parser,
    /// `femquad::mesh::size::parse_count`; the mesh must fit u32 indices and
    /// this machine's memory).
    #[arg(long, default_value = "2^24", value_parser = parse_count)]
    pub cells: usize,
    /// Subdivisions per side instead of --cells (2n² triangles, 6n³ tetrahedra).
    #[arg(long, value_parser = parse_positive, conflicts_with = "cells")]
    pub refine: Option<usize>,
    /// Quadrature degree [default: 1 for P1 (one point, as in the paper), 2 for P2].
    #[arg(long, value_parser = parse_positive)]
    pub qdegree: Option<usize>,
    /// Blocks per batch N_bl: `default`, `auto` (autotune cache, else tune and store) or a number.
    #[arg(long, default_value = "default", value_parser = parse_config_arg)]
    pub n_bl: ConfigArg,
    /// Batches per chunk N_cb: `default`, `auto` or a number.
    #[arg(long, default_value = "default", value_parser = parse_config_arg)]
    pub n_cb: ConfigArg,
    /// Threads per cell N_tc (with a fixed or swept configuration) [default: the device default's].
    #[arg(long, value_parser = parse_positive)]
    pub n_tc: Option<usize>,
    /// Do not prefetch the next batch into registers (with a fixed or swept configuration).
    #[arg(long)]
    pub no_prefetch: bool,
    /// BP rows: launch with patches (a work-group whose node list fits
    /// local memory gathers and sums there, `LaunchConfig::patches`), to
    /// compare with the default configuration, which has them off.
    #[arg(long)]
    pub patches: bool,
    /// BP rows: launch the cell-parallel kernel (one work-item per cell,
    /// `LaunchConfig::cell_parallel`) instead of the thread transposition,
    /// `N_tc` = 1 and no prefetch; with --patches its atomic rows sum each
    /// chunk's element vectors in local memory first (its deterministic
    /// rows have no patches).
    #[arg(long)]
    pub cell_parallel: bool,
    /// With `auto`: tune again even if the cache has an entry.
    #[arg(long)]
    pub retune: bool,
    /// With `auto`: also time the default configuration (one row each).
    #[arg(long)]
    pub with_default: bool,
    /// OpenCL device: gpu, cpu, an index or a name substring [default: $FEMQUAD_DEVICE, else a GPU, else any].
    #[arg(long)]
    pub device: Option<String>,
    /// Timed kernel launches per configuration (median, min, max reported).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub reps: u32,
    /// Untimed launches before the timed ones.
    #[arg(long, default_value_t = 5)]
    pub warmup: u32,
    /// Timed launches per candidate when autotuning (with `auto`) [default: 10].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub tune_reps: Option<u32>,
    /// Seed of mesh jitter, renumbering and random data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Jitter of interior vertices as a fraction of h (0 ..= 0.15).
    #[arg(long, default_value_t = 0.1, value_parser = parse_jitter)]
    pub jitter: f64,
    /// Mesh numberings, comma-separated, each run in turn: `random`
    /// (vertices and cells shuffled), `renumbered` (the random mesh
    /// renumbered for locality, Hilbert order), `structured` (the
    /// generator's order).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "random")]
    pub numbering: Vec<Numbering>,
    /// What to measure, comma-separated: `bk` (the element kernel), `bp`
    /// (global F(u) on the device, both assemblies and geometries, and a CG
    /// iteration).
    #[arg(long, value_enum, value_delimiter = ',', default_value = "bk")]
    pub measure: Vec<Measure>,
    /// Timed conjugate-gradient iterations per BP row (their median is
    /// reported; --warmup more run first); 0: no CG timing [default: 20].
    #[arg(long)]
    pub cg_iterations: Option<usize>,
    /// BP rows: F(u) with a Neumann boundary term (the flux g = 1 + x₁, a
    /// traction for elasticity, on the side x₀ = 0), integrated by the
    /// facet kernels after the cells; the rows report the facet kernels'
    /// time and bytes beside the cells' (columns `facets`, `facet_ms`,
    /// `facet_share`, `facet_bytes`, `facet_bytes_share`).
    #[arg(long)]
    pub neumann: bool,
    /// Size of each of the copy benchmark's two buffers in MiB (raised to
    /// half a single case's model bytes if that is larger).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub copy_mib: u64,
    /// Cells compared with the native integrator at each end and in the
    /// middle of the device range (the native remainder is compared too).
    #[arg(long, default_value_t = 4096, value_parser = parse_positive)]
    pub check_cells: usize,
    /// Write the rows as CSV to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write the rows as JSON (an array of objects) to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// No progress output on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Run the suite of cases BENCHMARKS.md reports (P1 Poisson with no, field
    /// and cell coefficient, P1 Lamé, P2 Poisson and Lamé; 2D and 3D; f32 and
    /// f64) at --cells; not with --dim/--order/--physics/--coefficient/--precision/--qdegree
    /// (the suite fixes them: select cases with --filter).
    #[arg(long, conflicts_with_all = ["sweep", "dim", "order", "physics", "coefficient", "precision", "qdegree"])]
    pub suite: bool,
    /// Only the suite cases whose name contains every comma-separated token
    /// (names like `2d-p1-laplacian-field-f32`).
    #[arg(long)]
    pub filter: Option<String>,
    /// Sweep N_bl × N_cb for the case given (the paper's Table 2), invalid
    /// combinations reported as such.
    #[arg(long)]
    pub sweep: bool,
    /// N_bl values of the sweep [default: work-groups of about 32 … 1024 threads].
    #[arg(long, value_delimiter = ',')]
    pub sweep_n_bl: Option<Vec<usize>>,
    /// N_cb values of the sweep [default: 1,2,4,8,12,16].
    #[arg(long, value_delimiter = ',')]
    pub sweep_n_cb: Option<Vec<usize>>,
    /// Write SVG figures of the BK rows to this directory (one set per
    /// numbering; BP rows are in the table, CSV and JSON only): of
    /// --from-csv files if given (nothing is run then), else of this run's
    /// rows.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// CSV files written earlier by --csv (repeatable), for --plot.
    #[arg(long, requires = "plot")]
    pub from_csv: Vec<PathBuf>,
    /// List the OpenCL devices and exit.
    #[arg(long)]
    pub list_devices: bool,
}

impl Options {
    /// Parses options from arguments (the first is the program name).
    pub fn parse_from_args<I, T>(args: I) -> Result<Options, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        Options::try_parse_from(args)
    }

    /// The single case these options describe.
    pub fn case(&self) -> Result<CaseSpec, BenchError> {
        let order = usize::from(self.order);
        let spec = CaseSpec {
            dim: usize::from(self.dim),
            order,
            physics: self.physics,
            coefficient: self.coefficient,
            precision: self.precision,
            qdegree: self.qdegree.unwrap_or_else(|| default_qdegree(order)),
        };
        spec.validate()?;
        Ok(spec)
    }

    /// What `--measure`, `--numbering` and `--cg-iterations` select, checked
    /// against each other and against `--sweep`/`--n-bl auto` (BP rows time
    /// the default or given configuration with both geometries; sweeping or
    /// autotuning them is not offered).
    pub fn selection(&self) -> Result<Selection, BenchError> {
        let measures = distinct("--measure", &self.measure, |m| m.name())?;
        let numberings = distinct("--numbering", &self.numbering, |n| n.name())?;
        let bp = measures.contains(&Measure::Bp);
        if let (Some(n), false) = (self.cg_iterations, bp) {
            return Err(BenchError::Usage(format!(
                "--cg-iterations {n} applies to BP rows only: add `bp` to --measure"
            )));
        }
        if self.neumann && !bp {
            return Err(BenchError::Usage(
                "--neumann adds a boundary term to F(u), which the BP rows evaluate (the \
                 element kernel of BK has no boundary terms): add `bp` to --measure"
                    .into(),
            ));
        }
        if self.cell_parallel && !bp {
            return Err(BenchError::Usage(
                "--cell-parallel selects the kernel of the BP rows (the element kernel of BK \
                 runs on the thread transposition only): add `bp` to --measure"
                    .into(),
            ));
        }
        if bp && self.sweep {
            return Err(BenchError::Usage(
                "--sweep measures the element kernel only: use --measure bk (the default) with it"
                    .into(),
            ));
        }
        if bp && (self.n_bl == ConfigArg::Auto || self.n_cb == ConfigArg::Auto) {
            return Err(BenchError::Usage(
                "--measure bp times the default (or given) configuration with stored and computed \
                 geometry and marks the faster; `auto` is not offered with it"
                    .into(),
            ));
        }
        let mut measures = measures;
        measures.sort_unstable();
        Ok(Selection {
            measures,
            numberings,
            cg_iterations: if bp {
                self.cg_iterations.unwrap_or(DEFAULT_CG_ITERATIONS)
            } else {
                0
            },
            neumann: self.neumann,
        })
    }

    /// The launch plan of `--n-bl`/`--n-cb`/`--sweep`; an error for options
    /// that the plan would not use (`--retune` without `auto`, `--n-tc`
    /// with it, `--sweep-n-cb` without `--sweep`, `--filter` without
    /// `--suite`, …), so that nothing given is silently ignored.
    pub fn plan(&self) -> Result<Plan, BenchError> {
        let usage = |s: &str| Err(BenchError::Usage(s.into()));
        if self.filter.is_some() && !self.suite {
            return usage("--filter selects suite cases: use it with --suite");
        }
        let auto = self.n_bl == ConfigArg::Auto || self.n_cb == ConfigArg::Auto;
        if !auto && (self.retune || self.with_default || self.tune_reps.is_some()) {
            return usage(
                "--retune, --with-default and --tune-reps apply to `--n-bl auto` / `--n-cb auto`",
            );
        }
        if !self.sweep && (self.sweep_n_bl.is_some() || self.sweep_n_cb.is_some()) {
            return usage("--sweep-n-bl and --sweep-n-cb apply to --sweep");
        }
        if self.sweep {
            if auto {
                return usage("--sweep takes no `auto` configuration");
            }
            if self.n_bl != ConfigArg::Default || self.n_cb != ConfigArg::Default {
                return usage(
                    "--sweep takes N_bl and N_cb from --sweep-n-bl and --sweep-n-cb, not from --n-bl/--n-cb",
                );
            }
            let n_cb = self
                .sweep_n_cb
                .clone()
                .unwrap_or_else(|| DEFAULT_SWEEP_N_CB.to_vec());
            if n_cb.is_empty() || n_cb.contains(&0) {
                return Err(BenchError::Usage(
                    "--sweep-n-cb needs positive values".into(),
                ));
            }
            if let Some(v) = &self.sweep_n_bl
                && (v.is_empty() || v.contains(&0))
            {
                return Err(BenchError::Usage(
                    "--sweep-n-bl needs positive values".into(),
                ));
            }
            return Ok(Plan::Sweep {
                n_bl: self.sweep_n_bl.clone(),
                n_cb,
                n_tc: self.n_tc,
                prefetch: !self.no_prefetch,
            });
        }
        if auto && (self.n_tc.is_some() || self.no_prefetch) {
            return usage(
                "--n-tc and --no-prefetch fix parts of a configuration; with `auto` the autotuner chooses them",
            );
        }
        Ok(match (self.n_bl, self.n_cb) {
            (ConfigArg::Auto, _) | (_, ConfigArg::Auto) => Plan::Auto {
                with_default: self.with_default,
                retune: self.retune,
            },
            (ConfigArg::Default, ConfigArg::Default)
                if self.n_tc.is_none() && !self.no_prefetch =>
            {
                Plan::Default
            }
            (n_bl, n_cb) => Plan::Fixed {
                n_tc: self.n_tc,
                prefetch: !self.no_prefetch,
                n_bl: match n_bl {
                    ConfigArg::Value(v) => Some(v),
                    _ => None,
                },
                n_cb: match n_cb {
                    ConfigArg::Value(v) => Some(v),
                    _ => None,
                },
            },
        })
    }
}

/// Timed launches per autotuning candidate unless `--tune-reps` says otherwise.
pub const DEFAULT_TUNE_REPS: u32 = 10;

/// The `N_cb` values of a sweep unless `--sweep-n-cb` says otherwise.
pub const DEFAULT_SWEEP_N_CB: [usize; 6] = [1, 2, 4, 8, 12, 16];

/// Timed CG iterations per BP row unless `--cg-iterations` says otherwise.
pub const DEFAULT_CG_ITERATIONS: usize = 20;

/// `values` if no value repeats, else an error naming the option and the
/// value (by `name`).
fn distinct<T: Copy + PartialEq>(
    option: &str,
    values: &[T],
    name: impl Fn(T) -> &'static str,
) -> Result<Vec<T>, BenchError> {
    for (k, &v) in values.iter().enumerate() {
        if values[..k].contains(&v) {
            return Err(BenchError::Usage(format!(
                "{option} lists `{}` twice",
                name(v)
            )));
        }
    }
    Ok(values.to_vec())
}

/// The measures and numberings a run covers ([`Options::selection`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The measures, BK before BP.
    pub measures: Vec<Measure>,
    /// The numberings, in the order given.
    pub numberings: Vec<Numbering>,
    /// Timed CG iterations per BP row (0: none, and always 0 without BP).
    pub cg_iterations: usize,
    /// Whether the BP rows' `F(u)` has the Neumann term (`--neumann`).
    pub neumann: bool,
}

impl Selection {
    /// Whether `measure` is selected.
    pub fn has(&self, measure: Measure) -> bool {
        self.measures.contains(&measure)
    }
}

/// How the launch configurations of a case are chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// The device default.
    Default,
    /// Given values; the other from the device default
    /// (`N_cb` = `femquad::opencl::shape::DEFAULT_N_CB`).
    Fixed {
        /// `N_bl`, if given.
        n_bl: Option<usize>,
        /// `N_cb`, if given.
        n_cb: Option<usize>,
        /// `N_tc`, if given.
        n_tc: Option<usize>,
        /// Register prefetching.
        prefetch: bool,
    },
    /// Autotuned (cached or tuned now), optionally also the default.
    Auto {
        /// Also time the default configuration.
        with_default: bool,
        /// Tune even if cached.
        retune: bool,
    },
    /// The grid `N_bl × N_cb` (`None`: the default `N_bl` candidates).
    Sweep {
        /// `N_bl` values.
        n_bl: Option<Vec<usize>>,
        /// `N_cb` values.
        n_cb: Vec<usize>,
        /// `N_tc` (default: the device default's).
        n_tc: Option<usize>,
        /// Register prefetching.
        prefetch: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--cells` is femquad's count parser (its cases are tested there):
    /// the forms parse, and a bad value is clap's error with the parser's
    /// reason.
    #[test]
    fn cells_are_parsed_by_femquads_count_parser() {
        let cells = |v: &str| Options::parse_from_args(["b", "--cells", v]).map(|o| o.cells);
        assert_eq!(cells("2^24").unwrap(), 1 << 24);
        assert_eq!(cells("1e6").unwrap(), 1_000_000);
        assert_eq!(cells("16M").unwrap(), 16_000_000);
        assert_eq!(Options::parse_from_args(["b"]).unwrap().cells, 1 << 24);
        let e = cells("1.5").unwrap_err().to_string();
        assert!(
            e.contains("'1.5'") && e.contains("is not a whole number"),
            "{e}"
        );
    }

    #[test]
    fn positive_numbers_and_jitter() {
        assert_eq!(parse_positive("12").unwrap(), 12);
        assert_eq!(parse_positive("0").unwrap_err(), "must be at least 1");
        assert_eq!(
            parse_positive("x").unwrap_err(),
            "`x` is not a positive integer"
        );
        assert_eq!(parse_jitter("0.05").unwrap(), 0.05);
        assert_eq!(
            parse_jitter("0.5").unwrap_err(),
            "`0.5` is outside [0, 0.15]"
        );
        assert_eq!(
            parse_jitter("NaN").unwrap_err(),
            "`NaN` is outside [0, 0.15]"
        );
        for args in [
            &["b", "--refine", "0"][..],
            &["b", "--check-cells", "0"],
            &["b", "--n-tc", "0"],
            &["b", "--qdegree", "0"],
            &["b", "--jitter", "0.2"],
        ] {
            let e = Options::parse_from_args(args).unwrap_err().to_string();
            assert!(e.contains(&format!("'{}'", args[2])), "{args:?}: {e}");
        }
    }

    #[test]
    fn config_args_and_plans() {
        assert_eq!(parse_config_arg("auto").unwrap(), ConfigArg::Auto);
        assert_eq!(parse_config_arg("12").unwrap(), ConfigArg::Value(12));
        assert!(parse_config_arg("0").is_err());
        let o = Options::parse_from_args(["b", "--n-bl", "32"]).unwrap();
        assert_eq!(
            o.plan().unwrap(),
            Plan::Fixed {
                n_bl: Some(32),
                n_cb: None,
                n_tc: None,
                prefetch: true
            }
        );
        let o = Options::parse_from_args(["b", "--n-bl", "auto", "--with-default"]).unwrap();
        assert_eq!(
            o.plan().unwrap(),
            Plan::Auto {
                with_default: true,
                retune: false
            }
        );
        let o = Options::parse_from_args(["b", "--sweep", "--sweep-n-cb", "1,4"]).unwrap();
        assert_eq!(
            o.plan().unwrap(),
            Plan::Sweep {
                n_bl: None,
                n_cb: vec![1, 4],
                n_tc: None,
                prefetch: true
            }
        );
        assert!(Options::parse_from_args(["b", "--suite", "--sweep"]).is_err());
        assert!(Options::parse_from_args(["b", "--dim", "4"]).is_err());
        let o =
            Options::parse_from_args(["b", "--physics", "lame", "--coefficient", "field"]).unwrap();
        assert!(o.case().is_err());
    }

    #[test]
    fn measures_and_numberings() {
        let o = Options::parse_from_args(["b"]).unwrap();
        let s = o.selection().unwrap();
        assert_eq!(s.measures, vec![Measure::Bk]);
        assert_eq!(s.numberings, vec![Numbering::Random]);
        assert_eq!(s.cg_iterations, 0);
        let o = Options::parse_from_args([
            "b",
            "--measure",
            "bp,bk",
            "--numbering",
            "renumbered,random",
        ])
        .unwrap();
        let s = o.selection().unwrap();
        assert_eq!(s.measures, vec![Measure::Bk, Measure::Bp]);
        assert_eq!(s.numberings, vec![Numbering::Renumbered, Numbering::Random]);
        assert_eq!(s.cg_iterations, DEFAULT_CG_ITERATIONS);
        assert!(s.has(Measure::Bp));
        let o = Options::parse_from_args(["b", "--measure", "bp", "--cg-iterations", "0"]).unwrap();
        assert_eq!(o.selection().unwrap().cg_iterations, 0);

        let err = |args: &[&str]| {
            let all = std::iter::once("b").chain(args.iter().copied());
            Options::parse_from_args(all)
                .unwrap()
                .selection()
                .unwrap_err()
                .to_string()
        };
        assert_eq!(err(&["--measure", "bk,bk"]), "--measure lists `bk` twice");
        assert_eq!(
            err(&["--numbering", "random,renumbered,random"]),
            "--numbering lists `random` twice"
        );
        let e = err(&["--cg-iterations", "5"]);
        assert!(
            e.starts_with("--cg-iterations 5 applies to BP rows only"),
            "{e}"
        );
        let e = err(&["--measure", "bp", "--sweep"]);
        assert!(
            e.starts_with("--sweep measures the element kernel only"),
            "{e}"
        );
        let e = err(&["--measure", "bk,bp", "--n-bl", "auto"]);
        assert!(e.contains("`auto` is not offered"), "{e}");
        // the cell-parallel kernel is a BP kernel
        let e = err(&["--cell-parallel"]);
        assert!(
            e.starts_with("--cell-parallel selects the kernel of the BP rows"),
            "{e}"
        );
        let o = Options::parse_from_args(["b", "--measure", "bp", "--cell-parallel"]).unwrap();
        assert!(o.cell_parallel && o.selection().is_ok());
        // bad values are clap errors that name the value
        let e = Options::parse_from_args(["b", "--measure", "bq"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'bq'") && e.contains("bk, bp"), "{e}");
        let e = Options::parse_from_args(["b", "--numbering", "hilbert"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("'hilbert'"), "{e}");
        let e = Options::parse_from_args(["b", "--cg-iterations", "-1"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("-1"), "{e}");
    }

    #[test]
    fn options_the_plan_would_ignore_are_errors() {
        let err = |args: &[&str]| {
            let all = std::iter::once("b").chain(args.iter().copied());
            Options::parse_from_args(all)
                .unwrap()
                .plan()
                .unwrap_err()
                .to_string()
        };
        assert!(err(&["--retune"]).starts_with("--retune, --with-default and --tune-reps apply"));
        assert!(err(&["--tune-reps", "3"]).starts_with("--retune, --with-default"));
        assert!(err(&["--n-bl", "auto", "--n-tc", "2"]).starts_with("--n-tc and --no-prefetch"));
        assert!(err(&["--sweep-n-cb", "2"]).starts_with("--sweep-n-bl and --sweep-n-cb apply"));
        assert!(err(&["--sweep", "--n-bl", "32"]).starts_with("--sweep takes N_bl and N_cb from"));
        assert!(err(&["--filter", "2d"]).starts_with("--filter selects suite cases"));
        let e = Options::parse_from_args(["b", "--cells", "1000", "--refine", "4"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("cannot be used with"), "{e}");
        let o = Options::parse_from_args(["b", "--n-bl", "auto", "--tune-reps", "3", "--retune"])
            .unwrap();
        assert!(matches!(o.plan().unwrap(), Plan::Auto { retune: true, .. }));
        let o = Options::parse_from_args(["b", "--sweep"]).unwrap();
        match o.plan().unwrap() {
            Plan::Sweep { n_cb, .. } => assert_eq!(n_cb, DEFAULT_SWEEP_N_CB),
            p => panic!("{p:?}"),
        }
    }

    #[test]
    fn precision_through_from_str() {
        let o = Options::parse_from_args(["b", "--precision", "f32"]).unwrap();
        assert_eq!(o.precision, Precision::F32);
        assert_eq!(
            Options::parse_from_args(["b"]).unwrap().precision,
            Precision::F64
        );
        let e = Options::parse_from_args(["b", "--precision", "f16"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("f16") && e.contains("f32, f64"), "{e}");
        let o = Options::parse_from_args(["b", "--suite", "--precision", "f32"]);
        assert!(o.is_err(), "--suite fixes the precision");
    }
}
