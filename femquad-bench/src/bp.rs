//! The rows of the global measures: BP, what a user gets — `F(u)` from a
//! global `u` into a global `F`, both device-resident
//! (`OpenClIntegrator`'s residual: gather, integrate and assemble in one fused
//! launch, or two with deterministic assembly) — and one conjugate-gradient
//! iteration with that operator ([`crate::cg_time`]). What is specific to
//! the operator is in [`crate::global_op`]; the rest here serves any.
//!
//! Per case and numbering, after the BK rows:
//! 1. **Reference.** The element vectors of every cell from the element
//!    kernel (those of the BK row, or a fresh evaluation with the device
//!    default configuration), checked against the native integrator on the
//!    check windows as the BK rows are, and summed on the host
//!    (`FunctionSpace::assemble`, a fixed order): `F_ref`.
//! 2. **Rows.** For each assembly (atomic, deterministic) and geometry
//!    (stored, computed), the device default configuration of that kernel
//!    (or `--n-bl`/`--n-cb`/`--n-tc`/`--no-prefetch` over it): one
//!    evaluation with the random `u` (the BK rows' `u`, global), `F`
//!    read back and compared with `F_ref` over all dofs (max-norm relative
//!    difference, tolerance [`check_tolerance_bp`]); then `--warmup` and
//!    `--reps` timed evaluations (`femquad::opencl::autotune::time_runs`, profiling
//!    events, first command's start to last command's end: for atomic
//!    assembly the zeroing of `F` and the fused kernel, for deterministic
//!    the integration and the assembly launch); the model
//!    ([`crate::perf_model::ResidualModel`], each global array once); then
//!    the CG iteration.
//! 3. **The geometry pick.** Of the two geometries of one assembly, the
//!    faster is marked (`geometry_pick`): what the autotuner's first stage
//!    keeps (`femquad::opencl::autotune`, stage 0: the default
//!    configuration with each geometry, the faster kept for the rest).

use femquad::opencl::autotune::median;
use femquad::opencl::shape::default_config;
use femquad::opencl::{Assembly, DeviceIndices, DeviceVector, LaunchConfig};
use femquad::physics::EvalPrecision;
use femquad::seam::Integrate;
use femquad::{Precision, Real};
use rayon::prelude::*;

use crate::BenchError;
use crate::case::{CaseCtx, RandomData, Work};
use crate::cg_time::cg_iteration_times;
use crate::global_op::{GlobalOp, GlobalRun, MeshSizes};
use crate::host::{Host, random_vec};
use crate::measure::{AssemblyKind, GeometryKind};
use crate::options::Plan;
use crate::physics::{TIME_SIGMA, TIME_T};
use crate::row::{ConfigSource, Mode, Row, Status, finite};
use crate::runner::Runner;
use crate::spec::check_tolerance;

/// Tolerance of the BP check (max-norm relative difference of `F` to the
/// host assembly of the element kernel's vectors): the element kernel's
/// ([`check_tolerance`]: 1e-5 in f32, 1e-12 in f64) with stored geometry.
/// With computed geometry the kernel forms `J` from the vertex coordinates
/// rounded to the working precision (unit roundoff `ε`), which perturbs
/// every Jacobian by a relative `2ε·coordinate_scale` or so
/// ([`Host::coordinate_scale`]: `max |x|` / shortest edge), while the
/// reference's `J⁻¹` was computed in `f64`; so `16 ε·coordinate_scale` is
/// added. (For 2D f32 at 2²⁴ cells that is about 4e-3: `f32` coordinates
/// resolve a cell of width 3·10⁻⁴ to about 4 digits.)
pub fn check_tolerance_bp(
    precision: Precision,
    geometry: GeometryKind,
    coordinate_scale: f64,
) -> f64 {
    let base = check_tolerance(precision);
    match geometry {
        GeometryKind::Stored => base,
        GeometryKind::Computed => {
            let eps = match precision {
                Precision::F32 => f32::EPSILON as f64 / 2.0,
                Precision::F64 => f64::EPSILON / 2.0,
            };
            base + 16.0 * eps * coordinate_scale
        }
    }
}

/// Max-norm relative difference `max|a − b| / max|b|` (the absolute one if
/// `b` is zero); infinite if `a` holds a NaN or ±∞.
pub fn relative_difference<R: Real>(a: &[R], b: &[R]) -> f64 {
    let (num, den) = a
        .par_iter()
        .zip(b)
        .map(|(x, y)| {
            let (x, y) = (x.to_f64(), y.to_f64());
            if x.is_finite() {
                ((x - y).abs(), y.abs())
            } else {
                (f64::INFINITY, y.abs())
            }
        })
        .reduce(|| (0.0, 0.0), |p, q| (p.0.max(q.0), p.1.max(q.1)));
    if den > 0.0 { num / den } else { num }
}

/// Marks `geometry_pick` on the timed rows of one assembly: `true` on the
/// fastest (least median time), `false` on the others.
pub fn mark_geometry_pick(rows: &mut [Row]) {
    let best = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.time_ms.map(|t| (i, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    if let Some(best) = best {
        for (i, r) in rows.iter_mut().enumerate() {
            if r.is_measured() {
                r.geometry_pick = Some(i == best);
            }
        }
    }
}

/// What the rows of one global operator share in a case: the device
/// vectors and the reference.
struct GlobalState<R: Real> {
    /// The random global `u`, on the device.
    u: DeviceVector<R>,
    /// The output of the last application.
    out: DeviceVector<R>,
    /// The host reference of the output ([`GlobalOp::reference`]).
    reference: Vec<R>,
    /// The CG problem: the boundary dofs (Dirichlet) and a random
    /// right-hand side, zero on them; `None` without CG timing.
    cg: Option<(DeviceIndices, DeviceVector<R>)>,
}

/// One global row's choice: assembly, geometry, configuration and where
/// the configuration came from (`None`: none was chosen).
#[derive(Clone, Copy)]
struct Pick {
    assembly: AssemblyKind,
    geometry: GeometryKind,
    config: LaunchConfig,
    src: Option<ConfigSource>,
}

impl Runner<'_> {
    /// The rows of the global operator `run.g` in a case (see the [module
    /// documentation](self)): one per assembly and geometry. Errors become
    /// rows.
    pub(crate) fn run_global<R: EvalPrecision>(
        &mut self,
        run: GlobalRun<'_>,
        ctx: &CaseCtx,
        work: &mut Work<'_, R>,
        host: &Host,
        data: &RandomData<R>,
    ) {
        let GlobalRun {
            g,
            plan,
            element_default,
        } = run;
        let unchosen = |assembly, geometry| Pick {
            assembly,
            geometry,
            config: element_default,
            src: None,
        };
        let mut state = match self.global_state(g, ctx, work, host, data, element_default) {
            Ok(s) => s,
            Err(e) => {
                for assembly in AssemblyKind::ALL {
                    for geometry in GeometryKind::ALL {
                        let mut row = self.global_row(g, ctx, unchosen(assembly, geometry));
                        row.status = match e {
                            BenchError::Check(_) => Status::CheckFailed,
                            _ => Status::Error,
                        };
                        row.note = e.to_string().replace('\n', " ");
                        self.push(row);
                    }
                }
                return;
            }
        };
        for assembly in AssemblyKind::ALL {
            let mut rows = Vec::with_capacity(GeometryKind::ALL.len());
            for geometry in GeometryKind::ALL {
                let row = match self.global_config(g, ctx, assembly, geometry, plan) {
                    Ok((config, src)) => {
                        let pick = Pick {
                            assembly,
                            geometry,
                            config,
                            src: Some(src),
                        };
                        self.measure_global(g, ctx, work, host, &mut state, pick)
                            .unwrap_or_else(|e| {
                                let mut r = self.global_row(g, ctx, pick);
                                r.status = Status::Error;
                                r.note = e.to_string().replace('\n', " ");
                                r
                            })
                    }
                    Err(e) => {
                        let mut r = self.global_row(g, ctx, unchosen(assembly, geometry));
                        r.status = Status::Error;
                        r.note = e.to_string().replace('\n', " ");
                        r
                    }
                };
                rows.push(row);
            }
            mark_geometry_pick(&mut rows);
            for row in rows {
                self.push(row);
            }
        }
    }

    /// A row of `g` with what is known before measuring.
    fn global_row(&self, g: GlobalOp, ctx: &CaseCtx, pick: Pick) -> Row {
        let variant = g.variant(self.device.info(), pick.assembly.assembly());
        let config = pick.config.with_geometry(pick.geometry.mode());
        let src = pick.src.unwrap_or(ConfigSource::Default);
        let mut row = self.base_row(ctx, variant, config, src);
        row.config = pick.src;
        row.measure = g.measure();
        row.assembly = Some(pick.assembly);
        row
    }

    /// The reference, the device vectors and the CG problem of `g` in a case.
    fn global_state<R: EvalPrecision>(
        &mut self,
        g: GlobalOp,
        ctx: &CaseCtx,
        work: &mut Work<'_, R>,
        host: &Host,
        data: &RandomData<R>,
        element_default: LaunchConfig,
    ) -> Result<GlobalState<R>, BenchError> {
        let name = ctx.spec.name();
        if !work.out_checked {
            self.progress
                .stage(&format!("{name}: {} reference: element kernel", g.name()));
            work.element_vectors(element_default)?;
            let tol = check_tolerance(ctx.spec.precision);
            let d = work.check(ctx, ctx.n_cells, self.opts.check_cells)?;
            // a NaN difference fails too
            if d.is_nan() || d > tol {
                return Err(BenchError::Check(format!(
                    "the element vectors behind the {} reference differ from the native \
                     integrator's: relative difference {d:.3e} > {tol:.0e}",
                    g.name()
                )));
            }
            work.out_checked = true;
        }
        self.progress
            .stage(&format!("{name}: {} reference", g.name()));
        let space = host.space(ctx.spec.order, ctx.spec.n_comp())?;
        let reference = match work.boundary {
            None => g.reference(space, work.out)?,
            // the boundary terms' facet vectors added natively
            Some(boundary) => {
                let mut vectors = work.out.clone();
                boundary.add_residual(&data.u_cells, data.cell_time().as_ref(), &mut vectors)?;
                g.reference(space, &vectors)?
            }
        };
        if !data.aux.is_empty() {
            work.integ.set_aux(&data.aux)?;
        }
        if !data.time_b.is_empty() {
            let b = DeviceVector::from_host(&self.device, &data.time_b)?;
            let (t, sigma) = (R::from_f64(TIME_T), R::from_f64(TIME_SIGMA));
            work.integ.set_time(Some((t, sigma, &b)))?;
        }
        let u = DeviceVector::from_host(&self.device, &data.u)?;
        let out = DeviceVector::zeros(&self.device, space.n_dofs())?;
        let cg = if self.selection.cg_iterations > 0 {
            let dofs = host.boundary_dofs(ctx.spec.order, ctx.spec.n_comp())?;
            let fixed = DeviceIndices::from_host(&self.device, &dofs)?;
            let rhs: Vec<R> = random_vec(space.n_dofs(), -1.0, 1.0, self.opts.seed, 4);
            let mut rhs = DeviceVector::from_host(&self.device, &rhs)?;
            rhs.set_at(&fixed, 0.0)?;
            Some((fixed, rhs))
        } else {
            None
        };
        Ok(GlobalState {
            u,
            out,
            reference,
            cg,
        })
    }

    /// The configuration of `g`'s kernel with `assembly` and `geometry`:
    /// the device default, or the values `plan` fixes over it.
    fn global_config(
        &self,
        g: GlobalOp,
        ctx: &CaseCtx,
        assembly: AssemblyKind,
        geometry: GeometryKind,
        plan: &Plan,
    ) -> Result<(LaunchConfig, ConfigSource), BenchError> {
        let variant = g.variant(self.device.info(), assembly.assembly());
        let mut default = default_config(
            &ctx.case(),
            variant,
            geometry.mode(),
            &ctx.options,
            self.device.info(),
        )?;
        if self.opts.patches {
            default.patches = true;
        }
        if self.opts.cell_parallel {
            // one work-item per cell; its patches sum atomic output only
            default = LaunchConfig {
                n_tc: 1,
                patches: default.patches && assembly.assembly() == Assembly::Atomic,
                ..default
            }
            .with_cell_parallel(true);
        }
        match plan {
            Plan::Default => Ok((default, ConfigSource::Default)),
            Plan::Fixed {
                n_bl,
                n_cb,
                n_tc,
                prefetch,
            } => Ok((
                LaunchConfig {
                    n_bl: n_bl.unwrap_or(default.n_bl),
                    n_cb: n_cb.unwrap_or(default.n_cb),
                    n_tc: n_tc.unwrap_or(default.n_tc),
                    prefetch: *prefetch && !default.cell_parallel,
                    geometry: geometry.mode(),
                    patches: default.patches,
                    cell_parallel: default.cell_parallel,
                },
                ConfigSource::Fixed,
            )),
            Plan::Auto { .. } | Plan::Sweep { .. } => Err(BenchError::Usage(format!(
                "{} rows take the default or a fixed configuration (Options::selection \
                 refuses `auto` and --sweep with --measure {})",
                g.measure().name(),
                g.measure().name()
            ))),
        }
    }

    /// Applies `g` once with `pick`'s configuration (whose geometry it
    /// has), checks the output against the reference, times it and one CG
    /// iteration.
    fn measure_global<R: EvalPrecision>(
        &mut self,
        g: GlobalOp,
        ctx: &CaseCtx,
        work: &mut Work<'_, R>,
        host: &Host,
        state: &mut GlobalState<R>,
        pick: Pick,
    ) -> Result<Row, BenchError> {
        let Pick {
            assembly,
            geometry,
            config,
            ..
        } = pick;
        let mut row = self.global_row(g, ctx, pick);
        let variant = g.variant(self.device.info(), assembly.assembly());
        let shape = ctx.shape(variant, config)?;
        if let Err(e) = work.integ.shape(variant, config) {
            row.status = Status::Invalid;
            row.note = e.to_string();
            return Ok(row);
        }
        work.integ.set_assembly(assembly.assembly())?;
        work.integ.set_config(variant, config)?;
        let label = format!(
            "{} {} {} {} {} N_bl={} N_cb={}{}",
            ctx.spec.name(),
            g.measure().name(),
            ctx.numbering.name(),
            assembly.name(),
            geometry.name(),
            config.n_bl,
            config.n_cb,
            if config.cell_parallel {
                " cell-parallel"
            } else {
                ""
            }
        );
        self.progress.stage(&format!("{label}: evaluate and check"));
        let u = &state.u;
        g.apply(work.integ, u, &mut state.out)?;
        let out = state.out.to_host()?;
        let facet_launches = work.integ.last_run().facet_launches();
        let facet_bytes: usize = facet_launches.iter().map(|l| l.bytes).sum();
        if let Some(boundary) = work.boundary {
            row.facets = boundary.n_facets();
        }
        row.build_info = work.integ.resources(variant, config)?;
        if let Some(launch) = work.integ.last_run().launch() {
            row.note = format!(
                "patches: {} of {} work-groups (fallback {})",
                launch.patch_groups, launch.work_groups, launch.fallback_groups
            );
        }
        let tol = check_tolerance_bp(ctx.spec.precision, geometry, host.coordinate_scale);
        let rel_diff = relative_difference(&out, &state.reference);
        let passed = rel_diff <= tol;
        row.check_rel_diff = finite(rel_diff);
        row.check_tol = Some(tol);
        row.check_passed = Some(passed);
        if !passed {
            row.status = Status::CheckFailed;
            row.note = format!(
                "{} on the device and its host reference differ: relative difference \
                 {rel_diff:.3e} > {tol:.1e}{}",
                g.name(),
                if rel_diff.is_finite() {
                    ""
                } else {
                    " (non-finite values)"
                }
            );
            return Ok(row);
        }

        let sizes = MeshSizes {
            cells: ctx.n_cells,
            nodes: work.integ.n_nodes(),
            vertices: work.integ.n_vertices(),
        };
        let (bytes, flops) = g.model(&shape, ctx.aux, ctx.physics.info(), sizes);
        let copy = self.copy_bandwidth(if ctx.mode == Mode::Single { bytes } else { 0.0 })?;
        self.progress.stage(&format!("{label}: timing"));
        let out = &mut state.out;
        if self.opts.warmup > 0 {
            let n = self.opts.warmup as usize;
            g.time(work.integ, u, out, n)?;
        }
        let n = self.opts.reps as usize;
        let timed = g.time(work.integ, u, out, n)?;
        let times: Vec<u64> = timed.iter().map(|t| t.total_ns).collect();
        let med_ns = median(&times);
        let t_med = med_ns * 1e-9;
        if t_med.is_nan() || t_med <= 0.0 {
            return Err(BenchError::Usage(format!(
                "{label}: the device reported a time of 0 (profiling unavailable?)"
            )));
        }
        let predicted = bytes / copy.bytes_per_s();
        let gb = bytes / t_med * 1e-9;
        row.reps = times.len();
        row.time_ms = finite(med_ns / 1e6);
        row.time_ms_min = finite(times.iter().copied().min().unwrap_or(0) as f64 / 1e6);
        row.time_ms_max = finite(times.iter().copied().max().unwrap_or(0) as f64 / 1e6);
        row.gdof_per_s = finite(ctx.n_dofs as f64 / t_med * 1e-9);
        row.gflops = finite(flops / t_med * 1e-9);
        row.gb_per_s = finite(gb);
        row.copy_gb_per_s = finite(copy.gb_per_s());
        row.pct_copy = finite(100.0 * gb / copy.gb_per_s());
        row.beta = finite(flops / bytes);
        row.model_bytes = finite(bytes);
        row.model_flops = finite(flops);
        row.predicted_ms = finite(predicted * 1e3);
        row.model_error = finite(t_med / predicted - 1.0);
        if work.boundary.is_some() {
            let facet_ns: Vec<u64> = timed.iter().map(|t| t.facet_ns).collect();
            let facet_med = median(&facet_ns);
            row.facet_ms = finite(facet_med / 1e6);
            row.facet_share = finite(facet_med / med_ns);
            row.facet_bytes = Some(facet_bytes as f64);
            row.facet_bytes_share = finite(facet_bytes as f64 / (bytes + facet_bytes as f64));
        }

        if let Some((fixed, rhs)) = &state.cg {
            self.progress.stage(&format!("{label}: CG iterations"));
            let op = &mut *work.integ;
            // A v = F(v) on the free dofs, (A v)_D = v_D
            let apply = |v: &DeviceVector<R>, av: &mut DeviceVector<R>| {
                g.apply(op, v, av)?;
                av.copy_at(fixed, v)
            };
            let warmup = self.opts.warmup as usize;
            match cg_iteration_times(apply, rhs, warmup, self.selection.cg_iterations) {
                Ok(t) => {
                    row.cg_iterations = t.len();
                    row.cg_iteration_ms = finite(median_s(&t) * 1e3);
                }
                Err(e) => {
                    row.status = Status::Error;
                    row.note = format!("CG iteration timing: {e}").replace('\n', " ");
                }
            }
        }
        Ok(row)
    }
}

/// Median of times in seconds (0 for none).
pub fn median_s(times: &[f64]) -> f64 {
    if times.is_empty() {
        return 0.0;
    }
    let mut t = times.to_vec();
    t.sort_unstable_by(f64::total_cmp);
    let n = t.len();
    if n % 2 == 1 {
        t[n / 2]
    } else {
        (t[n / 2 - 1] + t[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Measure;
    use crate::spec::suite_cases;

    #[test]
    fn tolerances() {
        assert_eq!(
            check_tolerance_bp(Precision::F64, GeometryKind::Stored, 1e4),
            1e-12
        );
        let t = check_tolerance_bp(Precision::F32, GeometryKind::Computed, 2896.0 / 0.8);
        assert!(t > 3e-3 && t < 4e-3, "{t}");
        let t = check_tolerance_bp(Precision::F64, GeometryKind::Computed, 100.0);
        assert!((t - (1e-12 + 16.0 * 100.0 * f64::EPSILON / 2.0)).abs() < 1e-20);
    }

    #[test]
    fn differences() {
        let b = [1.0f64, -4.0, 2.0];
        assert_eq!(relative_difference(&[1.0, -4.0, 2.0], &b), 0.0);
        assert_eq!(relative_difference(&[1.0, -3.0, 2.0], &b), 0.25);
        assert_eq!(
            relative_difference(&[f32::NAN, -4.0, 2.0], &[1.0f32, -4.0, 2.0]),
            f64::INFINITY
        );
        assert_eq!(relative_difference(&[0.5f64], &[0.0]), 0.5);
        assert_eq!(median_s(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median_s(&[4.0, 1.0]), 2.5);
        assert_eq!(median_s(&[]), 0.0);
    }

    #[test]
    fn the_faster_geometry_is_picked() {
        let spec = suite_cases()[0];
        let mut rows: Vec<Row> = [Some(0.7), Some(0.5), None]
            .into_iter()
            .map(|t| {
                let mut r = Row::new(&spec, Mode::Suite, "GPU", "1");
                r.measure = Measure::Bp;
                r.time_ms = t;
                r
            })
            .collect();
        mark_geometry_pick(&mut rows);
        let picks: Vec<Option<bool>> = rows.iter().map(|r| r.geometry_pick).collect();
        assert_eq!(picks, vec![Some(false), Some(true), None]);
        let mut none: Vec<Row> = vec![Row::new(&spec, Mode::Suite, "GPU", "1")];
        mark_geometry_pick(&mut none);
        assert_eq!(none[0].geometry_pick, None);
    }
}
