//! Autotuning of the launch configuration `(N_bl, N_cb, N_tc, prefetch,
//! geometry, patches, cell_parallel)`.
//!
//! [`autotune`] times a short list of valid configurations of one kernel of
//! an [`OpenClIntegrator`] on the device (the median of a few launches
//! each), keeps the fastest, and stores it in a cache file of
//! [`super::tuning_cache`]; a form bound with options holding that cache,
//! loaded again ([`super::TuningCache::load`]), takes it as its default
//! configuration ([`OpenClIntegrator::config`]).
//! [`autotune_element`] tunes the element kernel (BK), [`autotune_residual`]
//! the fused global residual (BP).
//!
//! # Search
//! About 25–30 kernel builds in all:
//! 0. (residual only) the device default configuration with stored and
//!    with computed geometry (patches where they fit): the faster
//!    geometry and its patch setting are kept for the rest;
//! 1. `N_bl` over [`candidate_n_bl`] (work-groups of about 32 … 1024
//!    threads, aligned to 32-thread warps where the block size allows) with
//!    `N_cb` = [`DEFAULT_N_CB`], for one thread per cell, one per component
//!    (`N_tc = N_comp`, vector fields) and one per quadrature point
//!    (`N_tc = N_q`), plus the device default;
//! 2. the best of stage 1 with each `N_cb` of [`TuneOptions::n_cb`];
//! 3. the best of stage 2 without register prefetching;
//! 4. (residual only) the best so far with patches switched the other
//!    way (patch against plain gather: patches pay off where a
//!    work-group's cells are compact, a mesh numbered for locality);
//! 5. (residual only) the cell-parallel kernel
//!    ([`LaunchConfig::cell_parallel`], one work-item per cell) at the
//!    geometry of stage 0, with work-groups of about 128–512 cells,
//!    `N_cb` ∈ {1, 4}, with and without patches (chunk-local sums) where
//!    the output is atomic.
//!
//! The paper (Table 2) found `N_cb` to matter little, which is why it gets
//! the second, smaller stage. Configurations that exceed the device's
//! work-group or local-memory limits are skipped (and listed in
//! [`TuneResult::trials`] with the reason). Every configuration integrates
//! every cell, so times compare directly.

use std::path::PathBuf;

use super::case::{gcd, lcm};
use super::operator::OpenClIntegrator;
use super::shape::{
    DEFAULT_N_CB, GeometryMode, KernelShape, KernelVariant, LaunchConfig, default_config,
};
use super::tuning_cache::{CacheEntry, TuneKey, TuningCache};
use super::vector::DeviceVector;
use crate::seam::Integrate;
use crate::{Error, Real, Result};

mod measure;

// The measurement is a tool (the benchmarks time with it), public only with
// the `devtools` feature.
#[cfg(feature = "devtools")]
pub use measure::time_runs;
#[cfg(not(feature = "devtools"))]
use measure::time_runs;

/// Work-group sizes (threads) the `N_bl` candidates aim at.
pub const THREAD_TARGETS: [usize; 10] = [32, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
/// Warp width the candidates align work-groups to where they can.
const WARP: usize = 32;

/// Blocks-per-batch candidates for blocks of `n_bs` threads: for each work-group
/// size in [`THREAD_TARGETS`], the nearest multiple of `LCM(32, N_bs)`
/// threads if that is not larger than the target (whole warps), else the
/// nearest multiple of `N_bs`; at most `max_threads` threads; sorted,
/// without repeats.
pub fn candidate_n_bl(n_bs: usize, max_threads: usize) -> Vec<usize> {
    if n_bs == 0 {
        return Vec::new();
    }
    let aligned = lcm(WARP, n_bs);
    let mut out: Vec<usize> = THREAD_TARGETS
        .iter()
        .filter_map(|&t| {
            let n_t = if aligned <= t {
                let mut k = ((t as f64 / aligned as f64).round() as usize).max(1);
                while k > 1 && k * aligned > max_threads {
                    k -= 1;
                }
                k * aligned
            } else {
                ((t as f64 / n_bs as f64).round() as usize).max(1) * n_bs
            };
            (n_t <= max_threads).then_some(n_t / n_bs)
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Median of nanosecond timings (0 for none): the statistic the autotuner
/// compares candidates by (and the benchmark reports).
pub fn median(times_ns: &[u64]) -> f64 {
    if times_ns.is_empty() {
        return 0.0;
    }
    let mut t = times_ns.to_vec();
    t.sort_unstable();
    let n = t.len();
    if n % 2 == 1 {
        t[n / 2] as f64
    } else {
        (t[n / 2 - 1] as f64 + t[n / 2] as f64) / 2.0
    }
}

/// Options of [`autotune`].
#[derive(Clone, Debug)]
pub struct TuneOptions {
    /// Untimed launches before each candidate's timed ones.
    pub warmup: usize,
    /// Timed launches per candidate (the median counts).
    pub reps: usize,
    /// `N_cb` values tried in the second stage.
    pub n_cb: Vec<usize>,
    /// Explicit candidates instead of the two-stage search (empty: search).
    pub candidates: Vec<LaunchConfig>,
    /// The cache file to store the result in (read, updated and written
    /// back); `None` stores nothing. A program's usual file is
    /// [`super::tuning_cache::default_path`].
    pub cache_file: Option<PathBuf>,
}

impl Default for TuneOptions {
    /// 2 warm-up and 10 timed launches per candidate; `N_cb ∈ {1, 2, 4, 8,
    /// 16}`; two-stage search; store nothing.
    fn default() -> Self {
        TuneOptions {
            warmup: 2,
            reps: 10,
            n_cb: vec![1, 2, 4, 8, 16],
            candidates: Vec::new(),
            cache_file: None,
        }
    }
}

/// One candidate of a tuning run.
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// The configuration.
    pub config: LaunchConfig,
    /// Threads per work-group.
    pub n_t: usize,
    /// Cells integrated per launch (all of the mesh).
    pub cells: usize,
    /// Median launch time in nanoseconds, or why the candidate was skipped.
    pub time_ns: std::result::Result<f64, String>,
}

impl Trial {
    /// Nanoseconds per cell, if timed.
    pub fn ns_per_cell(&self) -> Option<f64> {
        self.time_ns
            .as_ref()
            .ok()
            .map(|t| t / self.cells.max(1) as f64)
    }
}

/// What [`autotune`] found.
#[derive(Clone, Debug)]
pub struct TuneResult {
    /// The cache key.
    pub key: TuneKey,
    /// The fastest configuration.
    pub best: Trial,
    /// The device default configuration's trial, if it was valid.
    pub default: Option<Trial>,
    /// Every candidate, in the order tried.
    pub trials: Vec<Trial>,
    /// The cache file written, if storing succeeded.
    pub stored: Option<PathBuf>,
    /// Why storing failed (the message names the file), if it did. Tuning
    /// itself still succeeded.
    pub store_error: Option<String>,
}

/// The trial with the least time per cell.
fn best_of(trials: &[Trial]) -> Option<Trial> {
    trials
        .iter()
        .filter_map(|t| t.ns_per_cell().map(|ns| (ns, t)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t.clone())
}

/// Tunes the element kernel (BK) of the form bound as `integ` with
/// [`autotune`].
///
/// **Call it after [`OpenClIntegrator::set_cell_inputs`]**: the candidates
/// are timed with [`OpenClIntegrator::integrate_cells`] on the inputs on the
/// device.
///
/// # Errors
/// Those of [`autotune`]; [`Error::InvalidArgument`] naming `inputs` if no
/// cell inputs were set.
pub fn autotune_element<R: Real>(
    integ: &mut OpenClIntegrator<R>,
    opts: &TuneOptions,
) -> Result<TuneResult> {
    autotune(
        integ,
        KernelVariant::Element,
        |integ, n| time_runs(integ, n, OpenClIntegrator::integrate_cells),
        opts,
    )
}

/// Tunes the global residual `r = F(u)` (BP) of the form bound as `integ`,
/// with its assembly, with [`autotune`], timing `r = F(u)` on the device
/// vectors `u` and `r` (`r` is overwritten).
///
/// # Errors
/// Those of [`autotune`] and of the residual evaluation.
pub fn autotune_residual<R: Real>(
    integ: &mut OpenClIntegrator<R>,
    u: &DeviceVector<R>,
    r: &mut DeviceVector<R>,
    opts: &TuneOptions,
) -> Result<TuneResult> {
    let variant = integ.residual_variant();
    autotune(
        integ,
        variant,
        |integ, n| time_runs(integ, n, |i| i.residual(u, r)),
        opts,
    )
}

/// Tunes the launch configuration of the kernel `variant` of the form bound
/// as `integ` (see the [module documentation](self)) and records the
/// fastest configuration in the cache file `opts.cache_file`.
/// `time(integ, n)` evaluates `n` times with the kernel in the
/// configuration set ([`OpenClIntegrator::set_config`]) and returns each
/// evaluation's device time in nanoseconds. The bound configuration is
/// restored afterwards.
///
/// # Errors
/// [`Error::InvalidArgument`] if `opts.reps == 0` or no candidate is valid
/// on the device, naming `variant` if it is not one of the bound kernels';
/// the errors of `time` (kernel builds and launches). A failure to store
/// the result is not an error ([`TuneResult::store_error`]).
pub fn autotune<R: Real>(
    integ: &mut OpenClIntegrator<R>,
    variant: KernelVariant,
    mut time: impl FnMut(&mut OpenClIntegrator<R>, usize) -> Result<Vec<u64>>,
    opts: &TuneOptions,
) -> Result<TuneResult> {
    let bound = integ.config(variant)?;
    let result = search(integ, variant, &mut time, opts);
    integ.set_config(variant, bound)?;
    result
}

/// The search of [`autotune`], leaving the last candidate set.
fn search<R: Real>(
    op: &mut OpenClIntegrator<R>,
    variant: KernelVariant,
    time: &mut impl FnMut(&mut OpenClIntegrator<R>, usize) -> Result<Vec<u64>>,
    opts: &TuneOptions,
) -> Result<TuneResult> {
    if opts.reps == 0 {
        return Err(Error::arg(
            "reps",
            "at least one timed launch per candidate",
        ));
    }
    let case = *op.case();
    let options = op.options().clone();
    let info = op.device().info().clone();
    let key = op.tune_key(variant);
    let n_cells = op.discretization().n_cells();
    let shape_of = |config: LaunchConfig| KernelShape::new(&case, variant, config, &options);

    let mut trials: Vec<Trial> = Vec::new();
    let mut run = |op: &mut OpenClIntegrator<R>,
                   trials: &mut Vec<Trial>,
                   config: LaunchConfig|
     -> Result<()> {
        if trials.iter().any(|t| t.config == config) {
            return Ok(());
        }
        let shape = shape_of(config)?;
        let time_ns = match op.shape(variant, config) {
            Err(e) => Err(e.to_string()),
            Ok(_) => {
                op.set_config(variant, config)?;
                if opts.warmup > 0 {
                    time(op, opts.warmup)?;
                }
                Ok(median(&time(op, opts.reps)?))
            }
        };
        trials.push(Trial {
            config,
            n_t: shape.n_t,
            cells: n_cells,
            time_ns,
        });
        Ok(())
    };

    let mut default = None;
    if opts.candidates.is_empty() {
        // Stage 0: the geometry (the residual reads the node map anyway, so
        // computed geometry is a real alternative there).
        let geometries: &[GeometryMode] = if variant.gathers() {
            &[GeometryMode::Computed, GeometryMode::Stored]
        } else {
            &[GeometryMode::Stored]
        };
        for &g in geometries {
            if let Ok(d) = default_config(&case, variant, g, &options, &info) {
                default.get_or_insert(d);
                run(op, &mut trials, d)?;
            }
        }
        let geometry = best_of(&trials).map_or(geometries[0], |t| t.config.geometry);
        let patches = best_of(&trials).is_some_and(|t| t.config.patches);
        // Stage 1: N_bl for each N_tc.
        let l = case.lcm();
        let (n_comp, n_q) = (case.n_comp, case.n_q);
        let mut tcs = vec![1];
        for n_tc in [n_comp, n_q] {
            if n_tc > 1 && !tcs.contains(&n_tc) {
                tcs.push(n_tc);
            }
        }
        if let Some(d) = default
            && !tcs.contains(&d.n_tc)
        {
            tcs.push(d.n_tc);
        }
        for n_tc in tcs {
            let threads_per_block = l / gcd(l, n_tc) * n_tc;
            for n_bl in candidate_n_bl(threads_per_block, info.max_work_group_size) {
                let config = LaunchConfig::new(n_bl, DEFAULT_N_CB)
                    .with_threads_per_cell(n_tc)
                    .with_geometry(geometry)
                    .with_patches(patches);
                run(op, &mut trials, config)?;
            }
        }
        // Stage 2: N_cb.
        if let Some(stage1) = best_of(&trials) {
            for &n_cb in &opts.n_cb {
                if n_cb > 0 {
                    let config = LaunchConfig {
                        n_cb,
                        ..stage1.config
                    };
                    run(op, &mut trials, config)?;
                }
            }
        }
        // Stage 3: prefetching.
        if let Some(stage2) = best_of(&trials) {
            run(op, &mut trials, stage2.config.with_prefetch(false))?;
        }
        // Stage 4: patches (gathering kernels), the other way.
        if variant.gathers()
            && let Some(stage3) = best_of(&trials)
        {
            run(
                op,
                &mut trials,
                stage3.config.with_patches(!stage3.config.patches),
            )?;
        }
        // Stage 5: the cell-parallel kernel (gathering kernels), one
        // work-item per cell, at the geometry found, with work-groups of
        // about 128, 256 and 512 cells, one and four batches a chunk, and
        // patches (chunk-local sums) where the output is atomic, else none.
        if variant.gathers() {
            let l = case.lcm();
            let patch_settings: &[bool] =
                if variant.output() == super::shape::Output::ElementVectors {
                    &[false]
                } else {
                    &[true, false]
                };
            let n_bls = candidate_n_bl(l, info.max_work_group_size);
            let mut chosen: Vec<usize> = [128, 256, 512]
                .iter()
                .filter_map(|&target: &usize| {
                    n_bls
                        .iter()
                        .copied()
                        .min_by_key(|n| (n * l).abs_diff(target))
                })
                .collect();
            chosen.dedup();
            for n_bl in chosen {
                for n_cb in [1, 4] {
                    for &p in patch_settings {
                        let config = LaunchConfig::new(n_bl, n_cb)
                            .with_geometry(geometry)
                            .with_patches(p)
                            .with_cell_parallel(true);
                        run(op, &mut trials, config)?;
                    }
                }
            }
        }
    } else {
        for &c in &opts.candidates {
            run(op, &mut trials, c)?;
        }
    }

    let Some(best) = best_of(&trials) else {
        let reasons: Vec<String> = trials
            .iter()
            .map(|t| {
                format!(
                    "{}: {}",
                    t.config,
                    t.time_ns.as_ref().err().map(String::as_str).unwrap_or("?")
                )
            })
            .collect();
        return Err(Error::arg(
            "candidates",
            format!(
                "no valid launch configuration to tune: {}",
                reasons.join("; ")
            ),
        ));
    };
    let default_trial = default.and_then(|d| {
        trials
            .iter()
            .find(|t| t.config == d && t.time_ns.is_ok())
            .cloned()
    });

    let (mut stored, mut store_error) = (None, None);
    if let Some(path) = &opts.cache_file {
        let entry = CacheEntry {
            config: best.config,
            time_ns: best.time_ns.clone().unwrap_or(0.0),
            cells: best.cells,
        };
        let result = TuningCache::load(path).and_then(|mut cache| {
            cache.insert(&key, entry);
            cache.save()
        });
        match result {
            Ok(()) => stored = Some(path.clone()),
            Err(e) => store_error = Some(format!("could not update the autotune cache: {e}")),
        }
    }
    Ok(TuneResult {
        key,
        best,
        default: default_trial,
        trials,
        stored,
        store_error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(&[5, 1, 3]), 3.0);
        assert_eq!(median(&[4, 1, 3, 2]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn n_bl_candidates() {
        // 2D P1 Poisson, N_bs = 3: warps of 96 threads where possible.
        let c = candidate_n_bl(3, 1024);
        let threads: Vec<usize> = c.iter().map(|n| n * 3).collect();
        assert_eq!(threads, vec![33, 63, 96, 192, 288, 384, 480, 768, 960]);
        // 3D P1 Poisson, N_bs = 4: every target is a multiple of 32.
        assert_eq!(
            candidate_n_bl(4, 1024),
            vec![8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
        );
        // Limits cut the list.
        assert_eq!(candidate_n_bl(4, 256), vec![8, 16, 24, 32, 48, 64]);
        // 3D P2 Lamé, N_bs = 60.
        assert_eq!(candidate_n_bl(60, 1024), vec![1, 2, 3, 4, 6, 8, 16]);
        assert!(candidate_n_bl(0, 1024).is_empty());
        assert!(candidate_n_bl(2048, 1024).is_empty());
    }
}
