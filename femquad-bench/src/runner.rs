//! Running one case on the device: the OpenCL operator, the element
//! kernel's (BK) correctness check against the native integrator, timings,
//! autotuning and the model; the global operator (BP) continues in
//! [`crate::bp`].
//!
//! This file (with [`crate::host`] for host data, [`crate::case`] for the
//! state of the case being run, and [`crate::bp`], [`crate::global_op`],
//! [`crate::cg_time`] for BP) holds the benchmark's calls into
//! `femquad::opencl` and [`crate::perf_model`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use femquad::aux_space::AuxSpace;
use femquad::discretization::{CellInputs, Discretization};
use femquad::native::BoundaryIntegrals;
use femquad::opencl::autotune::{
    TuneOptions, TuneResult, autotune_element, candidate_n_bl, median, time_runs,
};
use femquad::opencl::shape::default_config;
use femquad::opencl::tuning_cache::{CacheEntry, default_path};
use femquad::opencl::{
    Assembly, Device, DeviceSelector, GeometryMode, KernelOptions, KernelVariant, LaunchConfig,
    OpenClIntegrator, OpenClOperator,
};
use femquad::physics::EvalPrecision;
use femquad::quadrature::Quadrature;
use femquad::{Precision, Real};

use crate::BenchError;
use crate::bandwidth::{CopyBandwidth, measure_copy};
use crate::case::{CaseCtx, RandomData, Work};
use crate::global_op::{GlobalOp, GlobalRun};
use crate::host::Host;
use crate::measure::{GeometryKind, Measure};
use crate::numbering::Numbering;
use crate::options::{DEFAULT_TUNE_REPS, Options, Plan, Selection};
use crate::output::{write_csv, write_json};
use crate::perf_model::LaunchModel;
use crate::physics::neumann_term;
use crate::progress::Progress;
use crate::row::{ConfigSource, Mode, Row, Status, finite};
use crate::spec::{CaseSpec, check_tolerance};
use crate::table::table_line;

/// The OpenCL devices, one line each (`--list-devices`).
pub fn device_list() -> Result<Vec<String>, BenchError> {
    Ok(femquad::opencl::list_devices()?
        .iter()
        .map(|d| d.to_string())
        .collect())
}

/// Largest `N_t` of the default sweep grid (NVIDIA's work-group limit).
pub const SWEEP_MAX_THREADS: usize = 1024;

/// The state of one benchmark run: options, device, copy bandwidth, rows.
pub struct Runner<'a> {
    /// The options.
    pub opts: &'a Options,
    /// The measures and numberings the options select.
    pub selection: Selection,
    /// The device.
    pub device: Arc<Device>,
    /// The kernel options of the environment (switches, the autotune cache
    /// loaded once), with what this run tuned added to the cache.
    pub kernel_options: KernelOptions,
    /// Where tuned configurations are stored: the environment's autotune
    /// cache file (`None` if no cache directory is set).
    pub cache_file: Option<PathBuf>,
    /// The copy bandwidth, once measured.
    pub copy: Option<CopyBandwidth>,
    /// Progress output.
    pub progress: Progress,
    /// All rows so far.
    pub rows: Vec<Row>,
    /// Failures (check failures and errors), one line each.
    pub failures: Vec<String>,
}

impl<'a> Runner<'a> {
    /// Opens the device of `--device` (else `$FEMQUAD_DEVICE`, else a GPU
    /// first) and reads the kernel options of the environment, once.
    pub fn new(opts: &'a Options) -> Result<Self, BenchError> {
        let selector = match &opts.device {
            Some(d) => DeviceSelector::parse(d),
            None => DeviceSelector::from_env(),
        };
        let selection = opts.selection()?;
        let device = Device::open(&selector)?;
        Ok(Runner {
            opts,
            selection,
            device,
            kernel_options: KernelOptions::from_env()?,
            cache_file: default_path(|name| std::env::var(name).ok()),
            copy: None,
            progress: Progress::new(opts.quiet),
            rows: Vec::new(),
            failures: Vec::new(),
        })
    }

    /// Prints the device, the kernel switches and the table's header.
    pub fn print_header(&self) {
        let info = self.device.info();
        self.progress.println(&format!(
            "# femquad benchmark on {} ({}, driver {}): {} CUs, {} MiB, fp64 {}",
            info.name,
            info.platform,
            info.driver,
            info.compute_units,
            info.global_mem_size >> 20,
            if info.fp64 { "yes" } else { "no" }
        ));
        let on = |b: bool| if b { "on" } else { "off" };
        let o = &self.kernel_options;
        self.progress.println(&format!(
            "# kernel switches: prefetch {}, vector loads {}; autotune cache {}",
            on(o.prefetch),
            on(o.vector_loads),
            o.tuning_cache
                .as_ref()
                .map_or("off".to_string(), |c| c.path().display().to_string())
        ));
        self.progress.println(&crate::table::table_header());
    }

    /// Measures the copy bandwidth once per run: two buffers of `--copy-mib`
    /// MiB, or of `hint_bytes / 2` if larger, at most a quarter of global
    /// memory and the largest allocation; `--warmup` + `--reps` launches.
    pub fn copy_bandwidth(&mut self, hint_bytes: f64) -> Result<CopyBandwidth, BenchError> {
        if let Some(c) = &self.copy {
            return Ok(c.clone());
        }
        let info = self.device.info();
        let cap = (info.max_mem_alloc_size.min(info.global_mem_size / 4)).max(1 << 20) as f64;
        let bytes = ((self.opts.copy_mib as f64) * 1048576.0)
            .max(hint_bytes / 2.0)
            .min(cap) as usize;
        self.progress
            .stage(&format!("copy bandwidth: 2 × {} MiB", bytes >> 20));
        let reps = self.opts.reps.max(20) as usize;
        let c = measure_copy(&self.device, bytes, self.opts.warmup as usize, reps)?;
        self.progress.println(&format!(
            "# copy bandwidth: {:.1} GB/s (float4 copy, 2 × {:.0} MiB buffers, {:.1} MB moved, median of {} launches)",
            c.gb_per_s(),
            bytes as f64 / 1048576.0,
            c.bytes as f64 * 1e-6,
            reps
        ));
        self.copy = Some(c.clone());
        Ok(c)
    }

    pub(crate) fn push(&mut self, row: Row) {
        self.progress.println(&table_line(&row));
        if row.status.is_failure() {
            let what = match row.assembly {
                Some(a) => format!(
                    "{} {} {} {}",
                    row.measure.name(),
                    row.numbering.name(),
                    a.name(),
                    row.geometry.name()
                ),
                None => format!("{} {}", row.measure.name(), row.numbering.name()),
            };
            self.failures.push(format!(
                "{} ({what}, N_bl={}, N_cb={}): {}: {}",
                row.case,
                row.n_bl,
                row.n_cb,
                row.status.name(),
                row.note
            ));
        }
        self.rows.push(row);
        self.flush();
    }

    /// Rewrites `--csv`/`--json` with the rows so far, so that a run
    /// stopped early (a time limit) leaves what it measured. Errors are
    /// reported by the final write in [`crate::run::run`].
    fn flush(&self) {
        if let Some(p) = &self.opts.csv {
            let _ = write_csv(p, &self.rows);
        }
        if let Some(p) = &self.opts.json {
            let _ = write_json(p, &self.rows);
        }
    }

    /// A row for a case that failed before any configuration ran (one per
    /// selected measure).
    pub fn push_error(
        &mut self,
        spec: &CaseSpec,
        mode: Mode,
        numbering: Numbering,
        cells: usize,
        error: &BenchError,
    ) {
        for measure in self.selection.measures.clone() {
            let info = self.device.info();
            let mut row = Row::new(spec, mode, &info.name, &info.driver);
            row.measure = measure;
            row.numbering = numbering;
            row.cells = cells;
            row.status = Status::Error;
            row.note = error.to_string().replace('\n', " ");
            self.push(row);
        }
    }

    /// Runs `spec` on `host` with `plan`, adding one row per configuration
    /// of each selected measure. Errors of single configurations become
    /// rows (status `error`); errors before any configuration runs (setup,
    /// allocation, fp64) are returned.
    pub fn run_case(
        &mut self,
        host: &mut Host,
        spec: &CaseSpec,
        plan: &Plan,
        mode: Mode,
    ) -> Result<(), BenchError> {
        spec.validate()?;
        host.ensure_space(spec.order, spec.n_comp(), &self.progress)?;
        if let AuxSpace::Field { n_comp } = spec.aux() {
            host.ensure_space(spec.order, n_comp, &self.progress)?;
        }
        if self.selection.cg_iterations > 0 {
            host.ensure_boundary(spec.order, spec.n_comp())?;
        }
        match spec.precision {
            Precision::F32 => self.run_case_r::<f32>(host, spec, plan, mode),
            Precision::F64 => self.run_case_r::<f64>(host, spec, plan, mode),
        }
    }

    fn run_case_r<R: EvalPrecision>(
        &mut self,
        host: &Host,
        spec: &CaseSpec,
        plan: &Plan,
        mode: Mode,
    ) -> Result<(), BenchError> {
        let name = spec.name();
        let t = Instant::now();
        self.progress.stage(&format!("{name}: discretization"));
        let space = host.space(spec.order, spec.n_comp())?;
        let aux_space = spec.aux();
        let quad = Quadrature::simplex(spec.dim, spec.qdegree)?;
        let disc = Discretization::<R>::new(space, quad, aux_space)?;
        let n_cells = disc.n_cells();

        self.progress.stage(&format!("{name}: random data"));
        let data = RandomData::<R>::new(host, spec, n_cells, self.opts.seed)?;
        let constants: Vec<R> = spec.constants().iter().map(|&c| R::from_f64(c)).collect();
        let inputs = CellInputs {
            u: &data.u_cells,
            aux: &data.aux_cells,
            constants: &constants,
            time: data.cell_time(),
        };
        let physics = spec.pointwise();

        self.progress.stage(&format!("{name}: upload geometry"));
        let ctx = CaseCtx {
            spec: *spec,
            mode,
            numbering: host.numbering,
            n_cells,
            n_dofs: space.n_dofs(),
            dim: disc.dim(),
            n_b: disc.n_b(),
            n_comp: disc.n_comp(),
            n_q: disc.n_q(),
            aux: aux_space,
            physics,
            options: self.kernel_options.clone(),
        };
        let op = OpenClOperator::new(self.device.clone(), ctx.options.clone(), space, disc)?;
        let bound = Arc::new(R::physics(physics));
        let boundary = if self.selection.neumann {
            let term = neumann_term::<R>(space.mesh(), spec.n_comp())?;
            Some(BoundaryIntegrals::new(space, &[term])?)
        } else {
            None
        };
        let mut integ = OpenClIntegrator::new(op, bound, &constants, Assembly::default())?;
        if let Some(b) = &boundary {
            integ = integ.with_boundary(b)?;
        }
        let default = default_config(
            &ctx.case(),
            KernelVariant::Element,
            GeometryMode::Stored,
            &ctx.options,
            self.device.info(),
        )?;
        self.progress.stage(&format!(
            "{name}: set up in {:.2} s",
            t.elapsed().as_secs_f64()
        ));

        let mut out = vec![R::ZERO; data.u_cells.len()];
        let mut reference: HashMap<(usize, usize), Vec<R>> = HashMap::new();
        let mut work = Work {
            integ: &mut integ,
            inputs: &inputs,
            out: &mut out,
            out_checked: false,
            reference: &mut reference,
            boundary: boundary.as_ref(),
        };
        if self.selection.has(Measure::Bk) {
            self.run_bk(&ctx, &mut work, plan, default);
        }
        for measure in self.selection.measures.clone() {
            if let Some(g) = GlobalOp::of(measure) {
                let run = GlobalRun {
                    g,
                    plan,
                    element_default: default,
                };
                self.run_global(run, &ctx, &mut work, host, &data);
            }
        }
        Ok(())
    }

    /// The BK rows of the case: one per configuration of `plan`.
    fn run_bk<R: EvalPrecision>(
        &mut self,
        ctx: &CaseCtx,
        work: &mut Work<'_, R>,
        plan: &Plan,
        default: LaunchConfig,
    ) {
        let name = ctx.spec.name();
        match plan {
            Plan::Default => {
                let row = self.measure(ctx, work, default, ConfigSource::Default);
                self.push_result(ctx, default, ConfigSource::Default, row);
            }
            Plan::Fixed {
                n_bl,
                n_cb,
                n_tc,
                prefetch,
            } => {
                let c = LaunchConfig {
                    n_bl: n_bl.unwrap_or(default.n_bl),
                    n_cb: n_cb.unwrap_or(default.n_cb),
                    n_tc: n_tc.unwrap_or(default.n_tc),
                    prefetch: *prefetch,
                    geometry: default.geometry,
                    patches: default.patches,
                    cell_parallel: default.cell_parallel,
                };
                let row = self.measure(ctx, work, c, ConfigSource::Fixed);
                self.push_result(ctx, c, ConfigSource::Fixed, row);
            }
            Plan::Sweep {
                n_bl,
                n_cb,
                n_tc,
                prefetch,
            } => {
                let n_tc = n_tc.unwrap_or(default.n_tc);
                let shape =
                    match ctx.shape(KernelVariant::Element, default.with_threads_per_cell(n_tc)) {
                        Ok(s) => s,
                        Err(e) => {
                            self.push_result(ctx, default, ConfigSource::Sweep, Err(e.into()));
                            return;
                        }
                    };
                let threads_per_block = shape.n_bs * shape.n_tc;
                let n_bl = n_bl
                    .clone()
                    .unwrap_or_else(|| candidate_n_bl(threads_per_block, SWEEP_MAX_THREADS));
                let total = n_bl.len() * n_cb.len();
                self.progress.set_length(total);
                for &bl in &n_bl {
                    for &cb in n_cb {
                        let c = LaunchConfig::new(bl, cb)
                            .with_threads_per_cell(n_tc)
                            .with_prefetch(*prefetch);
                        self.progress.stage(&format!("{name}: N_bl={bl} N_cb={cb}"));
                        let row = self.measure(ctx, work, c, ConfigSource::Sweep);
                        self.push_result(ctx, c, ConfigSource::Sweep, row);
                        self.progress.inc();
                    }
                }
            }
            Plan::Auto {
                with_default,
                retune,
            } => {
                if *with_default {
                    let row = self.measure(ctx, work, default, ConfigSource::Default);
                    self.push_result(ctx, default, ConfigSource::Default, row);
                }
                let key = work.integ.tune_key(KernelVariant::Element);
                let cached = if *retune {
                    None
                } else {
                    (self.kernel_options.tuning_cache.as_ref())
                        .and_then(|c| c.lookup(self.device.info(), &key))
                };
                let (c, src) = match cached {
                    Some(c) => (c, ConfigSource::Cached),
                    None => match self.tune(ctx, work, default) {
                        Ok(c) => (c, ConfigSource::Tuned),
                        Err(e) => {
                            self.push_result(ctx, default, ConfigSource::Tuned, Err(e));
                            return;
                        }
                    },
                };
                let row = self.measure(ctx, work, c, src);
                self.push_result(ctx, c, src, row);
            }
        }
    }

    /// Autotunes (after an evaluation with `default` if none ran yet).
    fn tune<R: Real>(
        &mut self,
        ctx: &CaseCtx,
        work: &mut Work<'_, R>,
        default: LaunchConfig,
    ) -> Result<LaunchConfig, BenchError> {
        let name = ctx.spec.name();
        if work.integ.last_run().launch().is_none() {
            work.out_checked = false;
            work.element_vectors(default)?;
        }
        self.progress.stage(&format!("{name}: autotuning"));
        let t = Instant::now();
        let opts = TuneOptions {
            warmup: 2,
            reps: self.opts.tune_reps.unwrap_or(DEFAULT_TUNE_REPS) as usize,
            cache_file: self.cache_file.clone(),
            ..TuneOptions::default()
        };
        let r = autotune_element(work.integ, &opts)?;
        self.remember(&r);
        let per_cell =
            |ns: Option<f64>| ns.map_or("-".to_string(), |v| format!("{:.4} ns/cell", v));
        self.progress.note(&format!(
            "# {name}: tuned N_bl={} N_cb={} ({}) vs default N_bl={} N_cb={} ({}); {} candidates in {:.1} s{}",
            r.best.config.n_bl,
            r.best.config.n_cb,
            per_cell(r.best.ns_per_cell()),
            default.n_bl,
            default.n_cb,
            per_cell(r.default.as_ref().and_then(|d| d.ns_per_cell())),
            r.trials.len(),
            t.elapsed().as_secs_f64(),
            r.stored.as_ref().map_or(String::new(), |p| format!("; stored in {}", p.display()))
        ));
        if let Some(e) = &r.store_error {
            eprintln!("femquad-bench: warning: {e}");
        }
        Ok(r.best.config)
    }

    /// Adds the tuned configuration of `r` to the run's autotune cache
    /// (if it reads one), so that later cases with the same key take it
    /// from there, as they would from the file in a later run.
    fn remember(&mut self, r: &TuneResult) {
        if let Some(cache) = &self.kernel_options.tuning_cache {
            let mut cache = (**cache).clone();
            let entry = CacheEntry {
                config: r.best.config,
                time_ns: r.best.time_ns.clone().unwrap_or(0.0),
                cells: r.best.cells,
            };
            cache.insert(&r.key, entry);
            self.kernel_options.tuning_cache = Some(Arc::new(cache));
        }
    }

    /// Adds the row of `config` (or an error row).
    fn push_result(
        &mut self,
        ctx: &CaseCtx,
        config: LaunchConfig,
        src: ConfigSource,
        row: Result<Row, BenchError>,
    ) {
        let row = match row {
            Ok(r) => r,
            Err(e) => {
                let mut r = self.base_row(ctx, KernelVariant::Element, config, src);
                r.status = Status::Error;
                r.note = e.to_string().replace('\n', " ");
                r
            }
        };
        self.push(row);
    }

    /// A row with everything known before measuring the kernel `variant`
    /// with `config` (measure BK; the caller sets another measure).
    pub(crate) fn base_row(
        &self,
        ctx: &CaseCtx,
        variant: KernelVariant,
        config: LaunchConfig,
        src: ConfigSource,
    ) -> Row {
        let info = self.device.info();
        let shape = ctx.shape(variant, config).ok();
        let mut row = Row::new(&ctx.spec, ctx.mode, &info.name, &info.driver);
        row.numbering = ctx.numbering;
        row.geometry = match config.geometry {
            GeometryMode::Stored => GeometryKind::Stored,
            GeometryMode::Computed => GeometryKind::Computed,
        };
        row.n_q = ctx.n_q;
        row.cells = ctx.n_cells;
        row.cells_device = ctx.n_cells;
        row.dofs = ctx.n_dofs;
        row.n_b = ctx.n_b;
        row.n_comp = ctx.n_comp;
        row.n_bt = ctx.n_b * ctx.n_comp;
        row.n_tc = config.n_tc;
        row.n_bs = shape.map_or(0, |s| s.n_bs);
        row.n_bl = config.n_bl;
        row.n_cb = config.n_cb;
        row.n_t = shape.map_or(0, |s| s.n_t);
        row.chunk = shape.map_or(0, |s| s.chunk);
        row.config = Some(src);
        row.local_mem_bytes = shape.map_or(0, |s| s.local_mem_bytes());
        row.prefetch = shape.map(|s| s.prefetch);
        row.vector_loads = shape.map(|s| s.vector_loads);
        row.cell_parallel = shape.map(|s| s.cell_parallel);
        row
    }

    /// Evaluates with `config`, checks against the native integrator and
    /// times the kernel.
    fn measure<R: EvalPrecision>(
        &mut self,
        ctx: &CaseCtx,
        work: &mut Work<'_, R>,
        config: LaunchConfig,
        src: ConfigSource,
    ) -> Result<Row, BenchError> {
        let mut row = self.base_row(ctx, KernelVariant::Element, config, src);
        let shape = ctx.shape(KernelVariant::Element, config)?;
        if let Err(e) = shape.check_device(self.device.info()) {
            row.status = Status::Invalid;
            row.note = e.to_string();
            return Ok(row);
        }
        // every cell runs on the device
        let n_dev = ctx.n_cells;
        let name = ctx.spec.name();
        self.progress.stage(&format!(
            "{name}: N_bl={} N_cb={}: evaluate and check",
            config.n_bl, config.n_cb
        ));
        work.out_checked = false;
        work.element_vectors(config)?;
        row.build_info = work.integ.resources(KernelVariant::Element, config)?;
        let tol = check_tolerance(ctx.spec.precision);
        let rel_diff = work.check(ctx, n_dev, self.opts.check_cells)?;
        let passed = rel_diff <= tol;
        row.check_rel_diff = finite(rel_diff);
        row.check_tol = Some(tol);
        row.check_passed = Some(passed);
        if !passed {
            row.status = Status::CheckFailed;
            row.note = format!(
                "OpenCL and native element vectors differ: relative difference {rel_diff:.3e} > {tol:.0e}{}",
                if rel_diff.is_finite() {
                    ""
                } else {
                    " (non-finite values)"
                }
            );
            return Ok(row);
        }
        work.out_checked = true;
        let model = LaunchModel::new(&shape, ctx.aux, ctx.physics.info(), n_dev);
        let copy = self.copy_bandwidth(if ctx.mode == Mode::Single {
            model.bytes
        } else {
            0.0
        })?;
        self.progress.stage(&format!(
            "{name}: N_bl={} N_cb={}: timing",
            config.n_bl, config.n_cb
        ));
        let integrate = OpenClIntegrator::integrate_cells;
        if self.opts.warmup > 0 {
            time_runs(work.integ, self.opts.warmup as usize, integrate)?;
        }
        let times = time_runs(work.integ, self.opts.reps as usize, integrate)?;
        // nanoseconds from the profiling events; ms = ns / 10⁶ exactly rounded
        let med_ns = median(&times);
        let min_ns = times.iter().copied().min().unwrap_or(0) as f64;
        let max_ns = times.iter().copied().max().unwrap_or(0) as f64;
        let t_med = med_ns * 1e-9;
        if t_med.is_nan() || t_med <= 0.0 {
            return Err(BenchError::Usage(format!(
                "{name}: the device reported a kernel time of 0 (profiling unavailable?)"
            )));
        }
        let predicted = model.predicted_s(copy.bytes_per_s(), None);
        let gb = model.bytes / t_med * 1e-9;
        row.reps = times.len();
        row.time_ms = finite(med_ns / 1e6);
        row.time_ms_min = finite(min_ns / 1e6);
        row.time_ms_max = finite(max_ns / 1e6);
        row.gdof_per_s = finite(ctx.n_dofs as f64 / t_med * 1e-9);
        row.gflops = finite(model.flops / t_med * 1e-9);
        row.gb_per_s = finite(gb);
        row.copy_gb_per_s = finite(copy.gb_per_s());
        row.pct_copy = finite(100.0 * gb / copy.gb_per_s());
        row.beta = finite(model.beta());
        row.model_bytes = finite(model.bytes);
        row.model_flops = finite(model.flops);
        row.predicted_ms = finite(predicted * 1e3);
        row.model_error = finite(t_med / predicted - 1.0);
        Ok(row)
    }
}
