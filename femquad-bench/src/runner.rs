//! Running one case: host data, the OpenCL integrator, the correctness
//! check against the native integrator, timings and the model.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use femquad::Real;
use femquad::aux::AuxSpace;
use femquad::element::Element;
use femquad::integrate::native::{Execution, element_vectors_range};
use femquad::integrate::{CellInputs, Discretization};
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, mesh_for_cells, unit_box};
use femquad::opencl::autotune::{TuneOptions, autotune, cached_config, candidate_n_bl, tune_key};
use femquad::opencl::bandwidth::{CopyBandwidth, measure_copy, median};
use femquad::opencl::shape::default_config;
use femquad::opencl::{Device, KernelShape, LaunchConfig, OpenClIntegrator};
use femquad::perf_model::LaunchModel;
use femquad::physics::Pointwise;
use femquad::quadrature::Quadrature;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;
use rayon::prelude::*;

use super::BenchError;
use super::options::{CaseSpec, Options, Plan, Precision};
use super::progress::Progress;
use super::report::{Check, Measured, Row, table_line};

/// Relative tolerance of the check against the native integrator.
pub fn check_tolerance(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => 1e-5,
        Precision::F64 => 1e-12,
    }
}

/// Largest `N_t` of the default sweep grid (NVIDIA's work-group limit).
pub const SWEEP_MAX_THREADS: usize = 1024;

/// The mesh of one dimension and the function spaces built on it, shared
/// by all cases of that dimension.
pub struct Host {
    /// The mesh (jittered, shuffled unless `--no-shuffle`).
    pub mesh: Mesh,
    spaces: HashMap<(usize, usize), FunctionSpace>,
}

impl Host {
    /// Builds the mesh for `dim` from the options (`--refine` or `--cells`).
    pub fn build(dim: usize, opts: &Options, progress: &Progress) -> Result<Host, BenchError> {
        let mopts = MeshOptions {
            jitter: opts.jitter,
            shuffle: !opts.no_shuffle,
            seed: opts.seed,
        };
        progress.stage(&format!("{dim}D mesh: generating"));
        let t = Instant::now();
        let mesh = match opts.refine {
            Some(n) => unit_box(dim, n, &mopts)?,
            None => mesh_for_cells(dim, opts.cells, &mopts)?,
        };
        progress.stage(&format!(
            "{dim}D mesh: {} cells, {} vertices in {:.2} s",
            mesh.n_cells(),
            mesh.n_vertices(),
            t.elapsed().as_secs_f64()
        ));
        Ok(Host {
            mesh,
            spaces: HashMap::new(),
        })
    }

    /// Makes sure the space of Lagrange `order` with `n_comp` components exists.
    pub fn ensure_space(
        &mut self,
        order: usize,
        n_comp: usize,
        progress: &Progress,
    ) -> Result<(), BenchError> {
        if !self.spaces.contains_key(&(order, n_comp)) {
            let t = Instant::now();
            let element = Element::lagrange(self.mesh.dim(), order)?;
            let space = FunctionSpace::new(&self.mesh, element, n_comp)?;
            progress.stage(&format!(
                "P{order} space with {n_comp} component(s): {} dofs in {:.2} s",
                space.n_dofs(),
                t.elapsed().as_secs_f64()
            ));
            self.spaces.insert((order, n_comp), space);
        }
        Ok(())
    }

    /// A space made by [`Host::ensure_space`].
    fn space(&self, order: usize, n_comp: usize) -> Result<&FunctionSpace, BenchError> {
        self.spaces.get(&(order, n_comp)).ok_or_else(|| {
            BenchError::Usage(format!(
                "internal: P{order} space with {n_comp} components not built"
            ))
        })
    }
}

/// `n` values uniform in `[lo, hi)`, generated in parallel (reproducible
/// for a seed and stream, independent of the thread count).
pub fn random_vec<R: Real>(n: usize, lo: f64, hi: f64, seed: u64, stream: u64) -> Vec<R> {
    const BLOCK: usize = 1 << 16;
    let mut v = vec![R::ZERO; n];
    v.par_chunks_mut(BLOCK).enumerate().for_each(|(i, chunk)| {
        let mut rng = Rng::stream(seed, (stream << 32) ^ i as u64);
        for x in chunk {
            *x = R::from_f64(rng.range(lo, hi));
        }
    });
    v
}

/// Sorted, merged, non-empty cell ranges within `0..n`.
pub fn merge_windows(mut w: Vec<Range<usize>>, n: usize) -> Vec<Range<usize>> {
    for r in &mut w {
        r.start = r.start.min(n);
        r.end = r.end.min(n);
    }
    w.retain(|r| r.start < r.end);
    w.sort_by_key(|r| r.start);
    let mut out: Vec<Range<usize>> = Vec::new();
    for r in w {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// The cells compared with the native integrator when `n_dev` of `n` cells
/// ran on the device: `k` at the start, the middle and the end of the
/// device range, and the native remainder.
pub fn check_windows(n: usize, n_dev: usize, k: usize) -> Vec<Range<usize>> {
    let mid = (n_dev / 2).saturating_sub(k / 2);
    merge_windows(
        vec![0..k, mid..mid + k, n_dev.saturating_sub(k)..n_dev, n_dev..n],
        n,
    )
}

/// The state of one benchmark run: options, device, copy bandwidth, rows.
pub struct Runner<'a> {
    /// The options.
    pub opts: &'a Options,
    /// The device.
    pub device: Arc<Device>,
    /// The copy bandwidth, once measured.
    pub copy: Option<CopyBandwidth>,
    /// Progress output.
    pub progress: Progress,
    /// All rows so far.
    pub rows: Vec<Row>,
    /// Failures (check failures and errors), one line each.
    pub failures: Vec<String>,
}

/// Everything fixed about the case being run, for making rows.
struct CaseCtx<'c> {
    spec: CaseSpec,
    mode: &'c str,
    n_cells: usize,
    dim: usize,
    n_b: usize,
    n_comp: usize,
    n_q: usize,
    aux: AuxSpace,
    physics: &'static dyn Pointwise,
}

impl CaseCtx<'_> {
    fn shape<R: Real>(&self, config: LaunchConfig) -> femquad::Result<KernelShape> {
        KernelShape::new(
            self.dim,
            self.n_b,
            self.n_comp,
            self.n_q,
            self.aux,
            self.physics.info(),
            std::mem::size_of::<R>(),
            config,
        )
    }
}

impl<'a> Runner<'a> {
    /// Opens the device of `--device` (else `$FEMQUAD_DEVICE`, else a GPU first).
    pub fn new(opts: &'a Options) -> Result<Self, BenchError> {
        let selector = match &opts.device {
            Some(d) => femquad::opencl::DeviceSelector::parse(d),
            None => femquad::opencl::DeviceSelector::from_env(),
        };
        let device = Device::open(&selector)?;
        Ok(Runner {
            opts,
            device,
            copy: None,
            progress: Progress::new(opts.quiet),
            rows: Vec::new(),
            failures: Vec::new(),
        })
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

    fn push(&mut self, row: Row) {
        self.progress.println(&table_line(&row));
        if row.status == "check-failed" || row.status == "error" {
            self.failures.push(format!(
                "{} (N_bl={}, N_cb={}): {}: {}",
                row.case, row.n_bl, row.n_cb, row.status, row.note
            ));
        }
        self.rows.push(row);
        self.flush();
    }

    /// Rewrites `--csv`/`--json` with the rows so far, so that a run
    /// stopped early (a time limit) leaves what it measured. Errors are
    /// reported by the final write in [`super::run`].
    fn flush(&self) {
        if let Some(p) = &self.opts.csv {
            let _ = super::report::write_file(p, &super::report::to_csv(&self.rows));
        }
        if let Some(p) = &self.opts.json {
            let _ = super::report::write_file(p, &super::report::to_json(&self.rows));
        }
    }

    /// A row for a case that failed before any configuration ran.
    pub fn push_error(&mut self, spec: &CaseSpec, mode: &str, cells: usize, error: &BenchError) {
        let info = self.device.info();
        let row = Row {
            mode: mode.into(),
            case: spec.name(),
            device: info.name.clone(),
            driver: info.driver.clone(),
            dim: spec.dim,
            order: spec.order,
            physics: spec.physics.name().into(),
            coefficient: spec.coefficient.name().into(),
            precision: spec.precision.name().into(),
            qdegree: spec.qdegree,
            cells,
            n_comp: spec.n_comp(),
            config: "-".into(),
            status: "error".into(),
            note: error.to_string().replace('\n', " "),
            ..Row::default()
        };
        self.push(row);
    }

    /// Runs `spec` on `host` with `plan`, adding one row per configuration.
    /// Errors of single configurations become rows (status `error`); errors
    /// before any configuration runs (setup, allocation, fp64) are returned.
    pub fn run_case(
        &mut self,
        host: &mut Host,
        spec: &CaseSpec,
        plan: &Plan,
        mode: &str,
    ) -> Result<(), BenchError> {
        spec.validate()?;
        host.ensure_space(spec.order, spec.n_comp(), &self.progress)?;
        if let AuxSpace::Field { n_comp } = spec.aux() {
            host.ensure_space(spec.order, n_comp, &self.progress)?;
        }
        match spec.precision {
            Precision::F32 => self.run_case_r::<f32>(host, spec, plan, mode),
            Precision::F64 => self.run_case_r::<f64>(host, spec, plan, mode),
        }
    }

    fn run_case_r<R: Real>(
        &mut self,
        host: &Host,
        spec: &CaseSpec,
        plan: &Plan,
        mode: &str,
    ) -> Result<(), BenchError> {
        let name = spec.name();
        let t = Instant::now();
        self.progress.stage(&format!("{name}: discretization"));
        let mesh = &host.mesh;
        let space = host.space(spec.order, spec.n_comp())?;
        let aux_space = spec.aux();
        let quad = Quadrature::simplex(spec.dim, spec.qdegree)?;
        let disc = Discretization::<R>::new(mesh, space, quad, aux_space)?;
        let n_cells = disc.n_cells();
        let seed = self.opts.seed;

        self.progress.stage(&format!("{name}: random data"));
        let u = {
            let global = random_vec::<R>(space.n_dofs(), -1.0, 1.0, seed, 1);
            let mut local = vec![R::ZERO; space.n_cell_dofs()];
            space.gather(&global, &mut local)?;
            local
        };
        let aux: Vec<R> = match aux_space {
            AuxSpace::None => Vec::new(),
            AuxSpace::Field { n_comp } => {
                let aspace = host.space(spec.order, n_comp)?;
                let global = random_vec::<R>(aspace.n_dofs(), 0.5, 2.0, seed, 2);
                let mut local = vec![R::ZERO; aspace.n_cell_dofs()];
                aspace.gather(&global, &mut local)?;
                local
            }
            AuxSpace::Cell { n_comp } => random_vec::<R>(n_cells * n_comp, 0.5, 2.0, seed, 3),
        };
        let constants: Vec<R> = spec.constants().iter().map(|&c| R::from_f64(c)).collect();
        let inputs = CellInputs {
            u: &u,
            aux: &aux,
            constants: &constants,
        };
        let physics = spec.pointwise();

        self.progress.stage(&format!("{name}: upload geometry"));
        let ctx = CaseCtx {
            spec: *spec,
            mode,
            n_cells,
            dim: disc.dim(),
            n_b: disc.n_b(),
            n_comp: disc.n_comp(),
            n_q: disc.n_q(),
            aux: aux_space,
            physics,
        };
        let mut integ = OpenClIntegrator::new(self.device.clone(), disc, None)?;
        let default = default_config(
            ctx.dim,
            ctx.n_b,
            ctx.n_comp,
            ctx.n_q,
            ctx.aux,
            physics.info(),
            std::mem::size_of::<R>(),
            self.device.info(),
        )?;
        self.progress.stage(&format!(
            "{name}: set up in {:.2} s",
            t.elapsed().as_secs_f64()
        ));

        let mut out = vec![R::ZERO; u.len()];
        let mut reference: HashMap<(usize, usize), Vec<R>> = HashMap::new();
        let mut work = Work {
            integ: &mut integ,
            inputs: &inputs,
            out: &mut out,
            reference: &mut reference,
        };

        match plan {
            Plan::Default => {
                let row = self.measure(&ctx, &mut work, default, "default");
                self.push_result::<R>(&ctx, default, "default", row);
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
                };
                let row = self.measure(&ctx, &mut work, c, "fixed");
                self.push_result::<R>(&ctx, c, "fixed", row);
            }
            Plan::Sweep {
                n_bl,
                n_cb,
                n_tc,
                prefetch,
            } => {
                let n_tc = n_tc.unwrap_or(default.n_tc);
                let shape = ctx.shape::<R>(default.with_threads_per_cell(n_tc))?;
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
                        let row = self.measure(&ctx, &mut work, c, "sweep");
                        self.push_result::<R>(&ctx, c, "sweep", row);
                        self.progress.inc();
                    }
                }
            }
            Plan::Auto {
                with_default,
                retune,
            } => {
                if *with_default {
                    let row = self.measure(&ctx, &mut work, default, "default");
                    self.push_result::<R>(&ctx, default, "default", row);
                }
                let key = tune_key(&*work.integ, physics);
                let cached = if *retune {
                    None
                } else {
                    cached_config(self.device.info(), &key)
                };
                let (c, src) = match cached {
                    Some(c) => (c, "cached"),
                    None => match self.tune(&ctx, &mut work, default) {
                        Ok(c) => (c, "tuned"),
                        Err(e) => {
                            let row = Err(e);
                            self.push_result::<R>(&ctx, default, "tuned", row);
                            return Ok(());
                        }
                    },
                };
                let row = self.measure(&ctx, &mut work, c, src);
                self.push_result::<R>(&ctx, c, src, row);
            }
        }
        Ok(())
    }

    /// Autotunes (after an evaluation with `default` if none ran yet).
    fn tune<R: Real>(
        &mut self,
        ctx: &CaseCtx<'_>,
        work: &mut Work<'_, R>,
        default: LaunchConfig,
    ) -> Result<LaunchConfig, BenchError> {
        let name = ctx.spec.name();
        if work.integ.last_kernel_ns().is_none() {
            work.integ.set_config(Some(default));
            work.integ
                .element_vectors(ctx.physics, work.inputs, work.out)?;
        }
        self.progress.stage(&format!("{name}: autotuning"));
        let t = Instant::now();
        let opts = TuneOptions {
            warmup: 2,
            reps: self.opts.tune_reps as usize,
            ..TuneOptions::default()
        };
        let r = autotune(work.integ, ctx.physics, &opts)?;
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
            eprintln!("benchmark: warning: {e}");
        }
        Ok(r.best.config)
    }

    /// Adds the row of `config` (or an error row).
    fn push_result<R: Real>(
        &mut self,
        ctx: &CaseCtx<'_>,
        config: LaunchConfig,
        src: &str,
        row: Result<Row, BenchError>,
    ) {
        let row = match row {
            Ok(r) => r,
            Err(e) => {
                let mut r = self.base_row::<R>(ctx, config, src);
                r.status = "error".into();
                r.note = e.to_string().replace('\n', " ");
                r
            }
        };
        self.push(row);
    }

    /// A row with everything known before measuring.
    fn base_row<R: Real>(&self, ctx: &CaseCtx<'_>, config: LaunchConfig, src: &str) -> Row {
        let info = self.device.info();
        let shape = ctx.shape::<R>(config).ok();
        let spec = &ctx.spec;
        let n_bt = ctx.n_b * ctx.n_comp;
        Row {
            mode: ctx.mode.into(),
            case: spec.name(),
            device: info.name.clone(),
            driver: info.driver.clone(),
            dim: spec.dim,
            order: spec.order,
            physics: spec.physics.name().into(),
            coefficient: spec.coefficient.name().into(),
            precision: spec.precision.name().into(),
            qdegree: spec.qdegree,
            n_q: ctx.n_q,
            cells: ctx.n_cells,
            cells_device: shape.map_or(0, |s| s.n_chunks(ctx.n_cells) * s.chunk),
            n_b: ctx.n_b,
            n_comp: ctx.n_comp,
            n_bt,
            n_tc: config.n_tc,
            n_bs: shape.map_or(0, |s| s.n_bs),
            n_bl: config.n_bl,
            n_cb: config.n_cb,
            n_t: shape.map_or(0, |s| s.n_t),
            chunk: shape.map_or(0, |s| s.chunk),
            config: src.into(),
            local_mem_bytes: shape.map_or(0, |s| s.local_mem_bytes()),
            prefetch: shape.map(|s| s.prefetch),
            vector_loads: shape.map(|s| s.vector_loads),
            status: "ok".into(),
            note: String::new(),
            build_info: String::new(),
            reps: 0,
            m: None,
            check: None,
        }
    }

    /// Evaluates with `config`, checks against the native integrator and
    /// times the kernel.
    fn measure<R: Real>(
        &mut self,
        ctx: &CaseCtx<'_>,
        work: &mut Work<'_, R>,
        config: LaunchConfig,
        src: &str,
    ) -> Result<Row, BenchError> {
        let mut row = self.base_row::<R>(ctx, config, src);
        let shape = ctx.shape::<R>(config)?;
        if let Err(e) = shape.check_device(self.device.info()) {
            row.status = "invalid".into();
            row.note = e.to_string();
            return Ok(row);
        }
        let n_dev = shape.n_chunks(ctx.n_cells) * shape.chunk;
        if n_dev == 0 {
            row.status = "invalid".into();
            row.note = format!(
                "a chunk of {} cells exceeds the mesh ({} cells)",
                shape.chunk, ctx.n_cells
            );
            return Ok(row);
        }
        let name = ctx.spec.name();
        self.progress.stage(&format!(
            "{name}: N_bl={} N_cb={}: evaluate and check",
            config.n_bl, config.n_cb
        ));
        work.integ.set_config(Some(config));
        work.integ
            .element_vectors(ctx.physics, work.inputs, work.out)?;
        row.build_info = work.integ.resources_for(ctx.physics)?;
        let tol = check_tolerance(ctx.spec.precision);
        let check = work.check(ctx, n_dev, self.opts.check_cells, tol)?;
        row.check = Some(check);
        if !check.passed {
            row.status = "check-failed".into();
            row.note = format!(
                "OpenCL and native element vectors differ: relative difference {:.3e} > {:.0e}{}",
                check.rel_diff,
                tol,
                if check.rel_diff.is_finite() {
                    ""
                } else {
                    " (non-finite values)"
                }
            );
            return Ok(row);
        }
        let model = LaunchModel::new(&shape, ctx.aux, ctx.physics.info(), n_dev);
        let copy = self.copy_bandwidth(if ctx.mode == "single" {
            model.bytes
        } else {
            0.0
        })?;
        self.progress.stage(&format!(
            "{name}: N_bl={} N_cb={}: timing",
            config.n_bl, config.n_cb
        ));
        if self.opts.warmup > 0 {
            work.integ
                .time_kernel(ctx.physics, self.opts.warmup as usize)?;
        }
        let times = work
            .integ
            .time_kernel(ctx.physics, self.opts.reps as usize)?;
        let t_med = median(&times) * 1e-9;
        let t_min = times.iter().copied().min().unwrap_or(0) as f64 * 1e-9;
        let t_max = times.iter().copied().max().unwrap_or(0) as f64 * 1e-9;
        if t_med.is_nan() || t_med <= 0.0 {
            return Err(BenchError::Usage(format!(
                "{name}: the device reported a kernel time of 0 (profiling unavailable?)"
            )));
        }
        let predicted = model.predicted_s(copy.bytes_per_s(), None);
        let gb = model.bytes / t_med * 1e-9;
        row.reps = times.len();
        row.m = Some(Measured {
            time_ms: t_med * 1e3,
            time_ms_min: t_min * 1e3,
            time_ms_max: t_max * 1e3,
            gflops: model.flops / t_med * 1e-9,
            gb_per_s: gb,
            copy_gb_per_s: copy.gb_per_s(),
            pct_copy: 100.0 * gb / copy.gb_per_s(),
            beta: model.beta(),
            model_bytes: model.bytes,
            model_flops: model.flops,
            predicted_ms: predicted * 1e3,
            model_error: t_med / predicted - 1.0,
        });
        Ok(row)
    }
}

/// The mutable state of the case being run.
struct Work<'w, R: Real> {
    integ: &'w mut OpenClIntegrator<R>,
    inputs: &'w CellInputs<'w, R>,
    out: &'w mut Vec<R>,
    reference: &'w mut HashMap<(usize, usize), Vec<R>>,
}

impl<R: Real> Work<'_, R> {
    /// Compares `out` with native element vectors on the check windows.
    fn check(
        &mut self,
        ctx: &CaseCtx<'_>,
        n_dev: usize,
        k: usize,
        tol: f64,
    ) -> Result<Check, BenchError> {
        let n_bt = ctx.n_b * ctx.n_comp;
        let apc = ctx.aux.values_per_cell(ctx.n_b);
        let finite = self.out.par_iter().all(|x| x.is_finite());
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for w in check_windows(ctx.n_cells, n_dev, k.max(1)) {
            let key = (w.start, w.end);
            if !self.reference.contains_key(&key) {
                let sub = CellInputs {
                    u: &self.inputs.u[w.start * n_bt..w.end * n_bt],
                    aux: &self.inputs.aux[w.start * apc..w.end * apc],
                    constants: self.inputs.constants,
                };
                let mut r = vec![R::ZERO; w.len() * n_bt];
                element_vectors_range(
                    self.integ.discretization(),
                    ctx.physics,
                    &sub,
                    w.clone(),
                    &mut r,
                    Execution::Parallel,
                )?;
                self.reference.insert(key, r);
            }
            let reference = &self.reference[&key];
            for (a, b) in self.out[w.start * n_bt..w.end * n_bt].iter().zip(reference) {
                num = num.max((a.to_f64() - b.to_f64()).abs());
                den = den.max(b.to_f64().abs());
            }
        }
        let rel_diff = if den > 0.0 { num / den } else { num };
        let rel_diff = if finite { rel_diff } else { f64::INFINITY };
        Ok(Check {
            rel_diff,
            tol,
            passed: finite && rel_diff <= tol,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows() {
        assert_eq!(check_windows(100, 96, 10), vec![0..10, 43..53, 86..100]);
        assert_eq!(check_windows(100, 96, 60), vec![0..100]);
        assert_eq!(check_windows(10, 0, 4), vec![0..10]);
        assert_eq!(
            merge_windows(vec![5..7, 0..2, 1..3, 9..20], 10),
            vec![0..3, 5..7, 9..10]
        );
    }

    #[test]
    fn random_values() {
        let a = random_vec::<f64>(200_000, 0.5, 2.0, 3, 1);
        let b = random_vec::<f64>(200_000, 0.5, 2.0, 3, 1);
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| (0.5..2.0).contains(&x)));
        let mean = a.iter().sum::<f64>() / a.len() as f64;
        assert!((mean - 1.25).abs() < 0.01, "{mean}");
        assert_ne!(a, random_vec::<f64>(200_000, 0.5, 2.0, 3, 2));
    }
}
