//! One row of results: the type behind the printed table, the CSV columns
//! and the JSON keys ([`Row`], serialized with serde; see [`crate::output`]).
//!
//! # Fields
//! CSV columns and JSON keys are the fields of [`Row`], in this order:
//!
//! | field | meaning |
//! |---|---|
//! | `mode` | `single`, `suite` or `sweep` |
//! | `measure` | `bk` (element kernel) or `bp` (global `F(u)` on the device, and a CG iteration), see [`Measure`] |
//! | `case` | case name, e.g. `2d-p1-laplacian-field-f32` |
//! | `numbering` | mesh numbering: `random`, `renumbered` (for locality) or `structured`, see [`Numbering`] |
//! | `assembly` | BP: `atomic` or `deterministic`; empty for BK |
//! | `geometry` | `stored` (`J⁻¹`, `det J` per cell) or `computed` (from the vertex coordinates in the kernel); BK: `stored` |
//! | `geometry_pick` | BP: `true` on the geometry the autotuner keeps for this numbering and assembly (its first stage: the faster of the two at the device default configuration, or at the one given), `false` on the other; empty for BK |
//! | `device`, `driver` | OpenCL device name and driver version |
//! | `dim`, `order` | dimension, Lagrange order |
//! | `physics`, `coefficient`, `precision` | `laplacian`/`elasticity`/`heat` (transient, at a bound time state), `none`/`field`/`cell`, `f32`/`f64` |
//! | `qdegree`, `n_q` | quadrature degree and points |
//! | `cells` | cells of the mesh |
//! | `cells_device` | cells integrated by the kernel (every cell) |
//! | `dofs` | global dofs of the space (nodes × components) |
//! | `n_b`, `n_comp`, `n_bt` | basis functions, components, element dofs |
//! | `n_tc`, `n_bs`, `n_bl`, `n_cb`, `n_t`, `chunk` | threads per cell, cells per block, blocks per batch, batches per chunk, threads per work-group, cells per work-group |
//! | `config` | where `(N_bl, N_cb)` came from: `default`, `fixed`, `tuned`, `cached`, `sweep`; empty if the case failed before one was chosen |
//! | `local_mem_bytes` | local memory per work-group |
//! | `prefetch`, `vector_loads` | kernel switches (`FEMQUAD_PREFETCH`, `FEMQUAD_VECTOR_LOADS`) |
//! | `cell_parallel` | the kernel: `true` the cell-parallel one (BP `--cell-parallel`), `false` the thread transposition |
//! | `status` | `ok`, `invalid` (exceeds a device limit or the mesh), `check-failed`, `error` |
//! | `note` | the reason for a status other than `ok` |
//! | `reps` | timed launches |
//! | `time_ms`, `time_ms_min`, `time_ms_max` | time of one timed operation (BK: a kernel launch; BP: one `F(u)`, from the start of its first command — zeroing `F`, or the integration — to the end of its last): median, min, max (profiling events) |
//! | `gdof_per_s` | `dofs` / median time, 10⁹/s (for both measures, as the CEED benchmarks count) |
//! | `gflops` | model flops / median time, 10⁹/s |
//! | `gb_per_s` | model (minimal) bytes / median time, 10⁹ B/s (effective bandwidth) |
//! | `copy_gb_per_s` | copy-kernel bandwidth on the same device, same process |
//! | `pct_copy` | `100 · gb_per_s / copy_gb_per_s` |
//! | `beta` | model flops / model bytes |
//! | `model_bytes`, `model_flops` | per timed operation (BK: `femquad_bench::perf_model::LaunchModel`, one launch over `cells_device` cells; BP: `femquad_bench::perf_model::ResidualModel`, each global array once) |
//! | `predicted_ms` | model bytes / copy bandwidth |
//! | `model_error` | measured / predicted − 1 |
//! | `cg_iteration_ms` | BP: median wall-clock time of one conjugate-gradient iteration with this operator, device-resident (see [`crate::cg_time`]); empty for BK or with `--cg-iterations 0` |
//! | `cg_iterations` | BP: iterations behind that median (0 if none) |
//! | `facets` | BP with `--neumann`: boundary facets of the Neumann term (the side `x₀ = 0`); 0 without |
//! | `facet_ms` | BP with `--neumann`: median device time of the facet kernels (`kernels/facet_integrate.cl`: points, scatter, and for deterministic assembly the sum) within one `F(u)`, part of `time_ms`; empty without |
//! | `facet_share` | `facet_ms / time_ms`: the boundary term's share of an `F(u)`'s time |
//! | `facet_bytes` | bytes the facet kernels move per `F(u)` (every array entry they read or write once per facet, additions into `F` twice: `femquad::opencl::timing::FacetLaunch::bytes`), beside `model_bytes` (the cells' minimal bytes) |
//! | `facet_bytes_share` | `facet_bytes / (model_bytes + facet_bytes)`: the boundary term's share of the bytes, to set beside `facet_share` |
//! | `check_rel_diff`, `check_tol` | BK: max-norm relative difference to the native integrator on the checked cells; BP: of `F` to the host assembly of the checked element vectors (all dofs); and the tolerance |
//! | `check_passed` | `true`/`false` |
//! | `build_info` | the OpenCL compiler's resource report of the kernel (NVIDIA: registers, stack frame, spills) |
//!
//! Unmeasured numbers (a configuration that was not timed or not checked)
//! are empty in CSV and `null` in JSON.
//!
//! Files written before the BP columns existed still read: a missing
//! `measure` is `bk`, `numbering` `random`, `geometry` `stored`, `dofs` 0,
//! `cg_iterations` 0, `facets` 0, the other new columns empty. The launch-shape fields
//! describe the kernel that either measure runs (for deterministic BP: the
//! integration kernel; the assembly launch has its own fixed shape).

use femquad::Precision;
use serde::{Deserialize, Serialize};

use crate::measure::{AssemblyKind, GeometryKind, Measure};
use crate::numbering::Numbering;
use crate::spec::{CaseSpec, Coefficient, PhysicsKind};

/// How the rows of a run were made.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// One case (no `--suite`, no `--sweep`).
    Single,
    /// A case of `--suite`.
    Suite,
    /// A configuration of `--sweep`.
    Sweep,
}

/// Where a row's launch configuration came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigSource {
    /// The device default (`femquad::opencl::shape::default_config`).
    Default,
    /// Given by `--n-bl`/`--n-cb`/`--n-tc`/`--no-prefetch`.
    Fixed,
    /// Autotuned in this run.
    Tuned,
    /// From the autotune cache.
    Cached,
    /// A point of `--sweep`.
    Sweep,
}

impl ConfigSource {
    /// The name in files and tables.
    pub fn name(self) -> &'static str {
        match self {
            ConfigSource::Default => "default",
            ConfigSource::Fixed => "fixed",
            ConfigSource::Tuned => "tuned",
            ConfigSource::Cached => "cached",
            ConfigSource::Sweep => "sweep",
        }
    }
}

/// The outcome of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Checked and timed.
    Ok,
    /// The configuration exceeds a device limit or the mesh (not run).
    Invalid,
    /// The device's results differ from the native integrator's.
    CheckFailed,
    /// An error stopped the configuration or the case (see `note`).
    Error,
}

impl Status {
    /// `ok`, `invalid`, `check-failed` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Invalid => "invalid",
            Status::CheckFailed => "check-failed",
            Status::Error => "error",
        }
    }

    /// `check-failed` or `error`: the run exits with an error at the end.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::CheckFailed | Status::Error)
    }
}

/// Serializes a value by its `Display` and reads it back by its `FromStr`
/// (for [`Precision`], which has both but no serde implementation).
mod text {
    use std::fmt::Display;
    use std::str::FromStr;

    use serde::{Deserialize, Deserializer, Serializer, de};

    pub fn serialize<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(value)
    }

    pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
    where
        T: FromStr,
        T::Err: Display,
        D: Deserializer<'de>,
    {
        String::deserialize(d)?.parse().map_err(de::Error::custom)
    }
}

/// One measured (or rejected) configuration of one case: a line of the
/// table, a CSV record, a JSON object. The fields are the columns, in
/// order (see the [module documentation](self)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// `single`, `suite` or `sweep`.
    pub mode: Mode,
    /// What is measured.
    #[serde(default)]
    pub measure: Measure,
    /// Case name ([`CaseSpec::name`]).
    pub case: String,
    /// Mesh numbering.
    #[serde(default)]
    pub numbering: Numbering,
    /// Assembly of the global operator (BP only).
    #[serde(default)]
    pub assembly: Option<AssemblyKind>,
    /// Where the kernel takes the geometry from.
    #[serde(default)]
    pub geometry: GeometryKind,
    /// BP: whether the autotuner keeps this row's geometry.
    #[serde(default)]
    pub geometry_pick: Option<bool>,
    /// Device name.
    pub device: String,
    /// Driver version.
    pub driver: String,
    /// Dimension.
    pub dim: usize,
    /// Lagrange order.
    pub order: usize,
    /// Physics.
    pub physics: PhysicsKind,
    /// Coefficient of the Laplacian.
    pub coefficient: Coefficient,
    /// Precision (`f32` or `f64`).
    #[serde(with = "text")]
    pub precision: Precision,
    /// Quadrature degree.
    pub qdegree: usize,
    /// Quadrature points.
    pub n_q: usize,
    /// Cells of the mesh.
    pub cells: usize,
    /// Cells integrated on the device.
    pub cells_device: usize,
    /// Global dofs of the space.
    #[serde(default)]
    pub dofs: usize,
    /// Basis functions.
    pub n_b: usize,
    /// Components.
    pub n_comp: usize,
    /// Element dofs.
    pub n_bt: usize,
    /// Threads per cell.
    pub n_tc: usize,
    /// Cells per block.
    pub n_bs: usize,
    /// Blocks per batch.
    pub n_bl: usize,
    /// Batches per chunk.
    pub n_cb: usize,
    /// Threads per work-group.
    pub n_t: usize,
    /// Cells per chunk.
    pub chunk: usize,
    /// Origin of the configuration (`None`: the case failed before one was chosen).
    pub config: Option<ConfigSource>,
    /// Local memory per work-group, bytes.
    pub local_mem_bytes: usize,
    /// Register prefetch of the next batch (kernel switch), if known.
    pub prefetch: Option<bool>,
    /// 16-byte vector loads (kernel switch), if known.
    pub vector_loads: Option<bool>,
    /// The cell-parallel kernel (`LaunchConfig::cell_parallel`) rather than
    /// the thread transposition, if known (absent from files written before).
    #[serde(default)]
    pub cell_parallel: Option<bool>,
    /// Outcome.
    pub status: Status,
    /// Reason for a status other than `ok`.
    pub note: String,
    /// Timed launches.
    pub reps: usize,
    /// Median time, ms.
    pub time_ms: Option<f64>,
    /// Fastest, ms.
    pub time_ms_min: Option<f64>,
    /// Slowest, ms.
    pub time_ms_max: Option<f64>,
    /// Global dofs per second, 10⁹/s.
    #[serde(default)]
    pub gdof_per_s: Option<f64>,
    /// Model flop rate, GF/s.
    pub gflops: Option<f64>,
    /// Effective bandwidth, GB/s.
    pub gb_per_s: Option<f64>,
    /// Copy bandwidth, GB/s.
    pub copy_gb_per_s: Option<f64>,
    /// Percent of copy bandwidth.
    pub pct_copy: Option<f64>,
    /// Algorithmic balance, flop/byte.
    pub beta: Option<f64>,
    /// Model bytes of the timed operation.
    pub model_bytes: Option<f64>,
    /// Model flops of the timed operation.
    pub model_flops: Option<f64>,
    /// Predicted time, ms.
    pub predicted_ms: Option<f64>,
    /// Measured / predicted − 1.
    pub model_error: Option<f64>,
    /// BP: median time of one CG iteration, ms.
    #[serde(default)]
    pub cg_iteration_ms: Option<f64>,
    /// BP: CG iterations timed.
    #[serde(default)]
    pub cg_iterations: usize,
    /// BP with `--neumann`: boundary facets of the Neumann term.
    #[serde(default)]
    pub facets: usize,
    /// BP with `--neumann`: median time of the facet kernels in one `F(u)`, ms.
    #[serde(default)]
    pub facet_ms: Option<f64>,
    /// `facet_ms / time_ms`.
    #[serde(default)]
    pub facet_share: Option<f64>,
    /// Bytes the facet kernels move per `F(u)`.
    #[serde(default)]
    pub facet_bytes: Option<f64>,
    /// `facet_bytes / (model_bytes + facet_bytes)`.
    #[serde(default)]
    pub facet_bytes_share: Option<f64>,
    /// Max-norm relative difference to the native integrator.
    pub check_rel_diff: Option<f64>,
    /// Tolerance of the check.
    pub check_tol: Option<f64>,
    /// `check_rel_diff <= check_tol` and every output finite.
    pub check_passed: Option<bool>,
    /// The compiler's resource report (NVIDIA: registers, spills), if any.
    pub build_info: String,
}

impl Row {
    /// A row of `spec` with what the case alone determines; measure BK on
    /// the random numbering with stored geometry, sizes of the launch 0,
    /// nothing measured, status `ok`, no configuration yet.
    pub fn new(spec: &CaseSpec, mode: Mode, device: &str, driver: &str) -> Row {
        Row {
            mode,
            measure: Measure::Bk,
            case: spec.name(),
            numbering: Numbering::Random,
            assembly: None,
            geometry: GeometryKind::Stored,
            geometry_pick: None,
            device: device.to_string(),
            driver: driver.to_string(),
            dim: spec.dim,
            order: spec.order,
            physics: spec.physics,
            coefficient: spec.coefficient,
            precision: spec.precision,
            qdegree: spec.qdegree,
            n_q: 0,
            cells: 0,
            cells_device: 0,
            dofs: 0,
            n_b: 0,
            n_comp: spec.n_comp(),
            n_bt: 0,
            n_tc: 0,
            n_bs: 0,
            n_bl: 0,
            n_cb: 0,
            n_t: 0,
            chunk: 0,
            config: None,
            local_mem_bytes: 0,
            prefetch: None,
            vector_loads: None,
            cell_parallel: None,
            status: Status::Ok,
            note: String::new(),
            reps: 0,
            time_ms: None,
            time_ms_min: None,
            time_ms_max: None,
            gdof_per_s: None,
            gflops: None,
            gb_per_s: None,
            copy_gb_per_s: None,
            pct_copy: None,
            beta: None,
            model_bytes: None,
            model_flops: None,
            predicted_ms: None,
            model_error: None,
            cg_iteration_ms: None,
            cg_iterations: 0,
            facets: 0,
            facet_ms: None,
            facet_share: None,
            facet_bytes: None,
            facet_bytes_share: None,
            check_rel_diff: None,
            check_tol: None,
            check_passed: None,
            build_info: String::new(),
        }
    }

    /// True if the row was timed (its measured fields are set).
    pub fn is_measured(&self) -> bool {
        self.time_ms.is_some()
    }

    /// The configuration's name for tables (`-` if none was chosen).
    pub fn config_name(&self) -> &'static str {
        self.config.map_or("-", ConfigSource::name)
    }
}

/// `Some(v)` for a finite `v`: what is stored in a row's number fields
/// (a NaN or infinity would be `NaN`/`inf` in CSV but `null` in JSON).
pub fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}
