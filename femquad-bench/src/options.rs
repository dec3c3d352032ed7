//! Command-line options of the benchmark program (clap), in the spirit of
//! PETSc's SNES ex12 that the paper ran.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};
use femquad::aux::AuxSpace;
use femquad::opencl::LaunchConfig;
use femquad::physics::Pointwise;
use femquad::physics::builtin::{Lame, Laplacian, LaplacianCoefficient};

use super::BenchError;

/// The physics of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum PhysicsKind {
    /// Poisson: `f1 = ∇u` (with a coefficient `f1 = a ∇u`).
    #[value(alias = "poisson")]
    Laplacian,
    /// Lamé (linear elasticity): `f1 = μ(∇u + ∇uᵀ) + λ (∇·u) I`, `u` a vector field.
    #[value(alias = "lame")]
    Elasticity,
}

impl PhysicsKind {
    /// `laplacian` or `elasticity`.
    pub fn name(self) -> &'static str {
        match self {
            PhysicsKind::Laplacian => "laplacian",
            PhysicsKind::Elasticity => "elasticity",
        }
    }
}

/// Where the variable coefficient of the Laplacian lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Coefficient {
    /// Constant coefficient 1.
    None,
    /// A P1/P2 field in the solution's space (`a` interpolated at the points).
    Field,
    /// One value per cell (P0).
    Cell,
}

impl Coefficient {
    /// `none`, `field` or `cell`.
    pub fn name(self) -> &'static str {
        match self {
            Coefficient::None => "none",
            Coefficient::Field => "field",
            Coefficient::Cell => "cell",
        }
    }
}

/// Floating-point precision of a case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, ValueEnum)]
pub enum Precision {
    /// Single precision.
    F32,
    /// Double precision.
    F64,
}

impl Precision {
    /// `f32` or `f64`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
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

/// Parses a count: `16777216`, `2^24`, `1e6`, `16M` (10⁶), `4k` (10³), `1G` (10⁹).
pub fn parse_count(s: &str) -> Result<usize, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("`{s}` is not a count (examples: 16777216, 2^24, 1e6, 16M)");
    let value: f64 = if let Some((b, e)) = t.split_once('^') {
        let b: f64 = b.parse().map_err(|_| bad())?;
        let e: i32 = e.parse().map_err(|_| bad())?;
        b.powi(e)
    } else if let Some(stripped) = t.strip_suffix(['k', 'K']) {
        stripped.parse::<f64>().map_err(|_| bad())? * 1e3
    } else if let Some(stripped) = t.strip_suffix(['m', 'M']) {
        stripped.parse::<f64>().map_err(|_| bad())? * 1e6
    } else if let Some(stripped) = t.strip_suffix(['g', 'G']) {
        stripped.parse::<f64>().map_err(|_| bad())? * 1e9
    } else if let Ok(n) = t.parse::<usize>() {
        return if n == 0 {
            Err("must be at least 1".into())
        } else {
            Ok(n)
        };
    } else {
        t.parse::<f64>().map_err(|_| bad())?
    };
    if !(1.0..=1e12).contains(&value) || value.fract() != 0.0 {
        return Err(bad());
    }
    Ok(value as usize)
}

/// Default quadrature degree for Lagrange order `order`: 1 (one point, the
/// paper's P1 setting, exact for the constant-coefficient P1 stiffness) for
/// P1; `2(order−1)` for higher orders, the lowest degree that integrates
/// the constant-coefficient stiffness `∫∇φ_a·∇φ_b` (and the Lamé operator)
/// exactly on affine cells — degree 2 for P2: 3 points in 2D, 4 in 3D.
pub fn default_qdegree(order: usize) -> usize {
    if order <= 1 { 1 } else { 2 * (order - 1) }
}

/// Finite-element integration benchmark on an OpenCL device.
///
/// Builds a jittered, shuffled mesh of the unit square or cube (unstructured
/// memory order), random coefficients, and evaluates the element vectors of
/// the residual with femquad's thread-transposition kernel: checks them
/// against the native integrator, then times the kernel (OpenCL profiling
/// events, median of --reps launches) and reports model flop rate, effective
/// bandwidth (model bytes / time) and its fraction of a copy kernel's
/// bandwidth measured in the same process.
#[derive(Parser, Clone, Debug)]
#[command(name = "benchmark", version, about, long_about = None)]
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
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,
    /// Target number of cells (the smallest structured mesh with at least
    /// this many): 16777216, 2^24, 1e6, 16M.
    #[arg(long, default_value = "2^24", value_parser = parse_count)]
    pub cells: usize,
    /// Subdivisions per side instead of --cells (2n² triangles, 6n³ tetrahedra).
    #[arg(long)]
    pub refine: Option<usize>,
    /// Quadrature degree [default: 1 for P1 (one point, as in the paper), 2 for P2].
    #[arg(long)]
    pub qdegree: Option<usize>,
    /// Blocks per batch N_bl: `default`, `auto` (autotune cache, else tune and store) or a number.
    #[arg(long, default_value = "default", value_parser = parse_config_arg)]
    pub n_bl: ConfigArg,
    /// Batches per chunk N_cb: `default`, `auto` or a number.
    #[arg(long, default_value = "default", value_parser = parse_config_arg)]
    pub n_cb: ConfigArg,
    /// Threads per cell N_tc (with a fixed or swept configuration) [default: the device default's].
    #[arg(long)]
    pub n_tc: Option<usize>,
    /// Do not prefetch the next batch into registers (with a fixed or swept configuration).
    #[arg(long)]
    pub no_prefetch: bool,
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
    /// Timed launches per candidate when autotuning.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..))]
    pub tune_reps: u32,
    /// Seed of mesh jitter, renumbering and random data.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Jitter of interior vertices as a fraction of h (0 ..= 0.15).
    #[arg(long, default_value_t = 0.1)]
    pub jitter: f64,
    /// Keep the structured numbering of cells and vertices (default: shuffled).
    #[arg(long)]
    pub no_shuffle: bool,
    /// Size of each of the copy benchmark's two buffers in MiB (raised to
    /// half a single case's model bytes if that is larger).
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub copy_mib: u64,
    /// Cells compared with the native integrator at each end and in the
    /// middle of the device range (the native remainder is compared too).
    #[arg(long, default_value_t = 4096)]
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
    /// f64) at --cells; --dim/--order/--physics/--coefficient/--precision are ignored.
    #[arg(long, conflicts_with = "sweep")]
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
    /// N_cb values of the sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,12,16")]
    pub sweep_n_cb: Vec<usize>,
    /// Write SVG figures to this directory: of --from-csv files if given
    /// (nothing is run then), else of this run's rows.
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

    /// The launch plan of `--n-bl`/`--n-cb`/`--sweep`.
    pub fn plan(&self) -> Result<Plan, BenchError> {
        if self.sweep {
            if self.n_bl == ConfigArg::Auto || self.n_cb == ConfigArg::Auto {
                return Err(BenchError::Usage(
                    "--sweep takes no `auto` configuration".into(),
                ));
            }
            if self.sweep_n_cb.is_empty() || self.sweep_n_cb.contains(&0) {
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
                n_cb: self.sweep_n_cb.clone(),
                n_tc: self.n_tc,
                prefetch: !self.no_prefetch,
            });
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

/// One benchmark case: discretization, physics and precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CaseSpec {
    /// Spatial dimension (2 or 3).
    pub dim: usize,
    /// Lagrange order (1 or 2).
    pub order: usize,
    /// Physics.
    pub physics: PhysicsKind,
    /// Coefficient (Laplacian only).
    pub coefficient: Coefficient,
    /// Precision.
    pub precision: Precision,
    /// Quadrature degree.
    pub qdegree: usize,
}

/// Lamé constants `[μ, λ]` of the elasticity cases.
pub const LAME_CONSTANTS: [f64; 2] = [1.0, 0.5];

impl CaseSpec {
    /// Checks the combination.
    pub fn validate(&self) -> Result<(), BenchError> {
        if !(2..=3).contains(&self.dim) || !(1..=2).contains(&self.order) {
            return Err(BenchError::Usage(format!(
                "dimension {} / order {} not supported (2|3, 1|2)",
                self.dim, self.order
            )));
        }
        if self.physics == PhysicsKind::Elasticity && self.coefficient != Coefficient::None {
            return Err(BenchError::Usage(
                "--coefficient applies to the Laplacian only; use `none` with elasticity".into(),
            ));
        }
        if self.qdegree == 0 {
            return Err(BenchError::Usage("--qdegree must be at least 1".into()));
        }
        Ok(())
    }

    /// Name used in reports and for `--filter`: `2d-p1-laplacian-field-f32`.
    pub fn name(&self) -> String {
        format!(
            "{}d-p{}-{}-{}-{}",
            self.dim,
            self.order,
            self.physics.name(),
            self.coefficient.name(),
            self.precision.name()
        )
    }

    /// The physics object.
    pub fn pointwise(&self) -> &'static dyn Pointwise {
        match (self.physics, self.coefficient) {
            (PhysicsKind::Elasticity, _) => &Lame,
            (PhysicsKind::Laplacian, Coefficient::None) => &Laplacian,
            (PhysicsKind::Laplacian, _) => &LaplacianCoefficient,
        }
    }

    /// The auxiliary space of the coefficient.
    pub fn aux(&self) -> AuxSpace {
        match self.coefficient {
            Coefficient::None => AuxSpace::None,
            Coefficient::Field => AuxSpace::Field { n_comp: 1 },
            Coefficient::Cell => AuxSpace::Cell { n_comp: 1 },
        }
    }

    /// The physics' run-time constants.
    pub fn constants(&self) -> Vec<f64> {
        match self.physics {
            PhysicsKind::Elasticity => LAME_CONSTANTS.to_vec(),
            PhysicsKind::Laplacian => Vec::new(),
        }
    }

    /// Components of the solution.
    pub fn n_comp(&self) -> usize {
        match self.physics {
            PhysicsKind::Elasticity => self.dim,
            PhysicsKind::Laplacian => 1,
        }
    }
}

/// The suite: P1 Poisson (no coefficient, field, cell), P1 Lamé, P2
/// Poisson, P2 Lamé; each in 2D and 3D, f32 and f64 (24 cases), ordered by
/// dimension (one mesh per dimension), then order.
pub fn suite_cases() -> Vec<CaseSpec> {
    let mut v = Vec::new();
    for dim in [2, 3] {
        for (order, physics, coefficient) in [
            (1, PhysicsKind::Laplacian, Coefficient::None),
            (1, PhysicsKind::Laplacian, Coefficient::Field),
            (1, PhysicsKind::Laplacian, Coefficient::Cell),
            (1, PhysicsKind::Elasticity, Coefficient::None),
            (2, PhysicsKind::Laplacian, Coefficient::None),
            (2, PhysicsKind::Elasticity, Coefficient::None),
        ] {
            for precision in [Precision::F32, Precision::F64] {
                v.push(CaseSpec {
                    dim,
                    order,
                    physics,
                    coefficient,
                    precision,
                    qdegree: default_qdegree(order),
                });
            }
        }
    }
    v
}

/// True if `name` contains every comma-separated token of `filter`.
pub fn matches_filter(name: &str, filter: Option<&str>) -> bool {
    filter.is_none_or(|f| {
        f.split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .all(|t| name.contains(t))
    })
}

/// `LaunchConfig` shorthand.
pub fn config(n_bl: usize, n_cb: usize) -> LaunchConfig {
    LaunchConfig::new(n_bl, n_cb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("2^24").unwrap(), 1 << 24);
        assert_eq!(parse_count("16777216").unwrap(), 16_777_216);
        assert_eq!(parse_count("1e6").unwrap(), 1_000_000);
        assert_eq!(parse_count("16M").unwrap(), 16_000_000);
        assert_eq!(parse_count("4k").unwrap(), 4000);
        assert!(parse_count("0").is_err());
        assert!(parse_count("2^x").is_err());
        assert!(parse_count("1.5").is_err());
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
    fn suite_and_names() {
        let s = suite_cases();
        assert_eq!(s.len(), 24);
        assert_eq!(s[0].name(), "2d-p1-laplacian-none-f32");
        assert!(s.iter().all(|c| c.validate().is_ok()));
        assert_eq!(default_qdegree(1), 1);
        assert_eq!(default_qdegree(2), 2);
        let n = s
            .iter()
            .filter(|c| matches_filter(&c.name(), Some("3d,p1,f64")))
            .count();
        assert_eq!(n, 4);
        assert!(matches_filter("x", None));
    }
}
