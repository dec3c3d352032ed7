//! Autotuning of the launch configuration `(N_bl, N_cb, N_tc, prefetch)`.
//!
//! [`autotune`] times a short list of valid configurations of an
//! [`OpenClIntegrator`] on the device (the median of a few launches each),
//! keeps the fastest *per device cell* (configurations differ in how many
//! cells fill whole chunks) and stores it in the cache file of
//! [`super::tuning_cache`], from which every later launch without an
//! explicit configuration takes it ([`OpenClIntegrator::config_for`]).
//!
//! # Search
//! Two stages, about 15 kernel builds in all (up to three times the first
//! stage for vector fields or several quadrature points):
//! 1. `N_bl` over [`candidate_n_bl`] (work-groups of about 32 … 1024
//!    threads, aligned to 32-thread warps where the block size allows) with
//!    `N_cb` = [`DEFAULT_N_CB`], for one thread per cell, one per component
//!    (`N_tc = N_comp`, vector fields) and one per quadrature point
//!    (`N_tc = N_q`), plus the device default;
//! 2. the best of stage 1 with each `N_cb` of [`TuneOptions::n_cb`];
//! 3. the best of stage 2 without register prefetching.
//!
//! The paper (Table 2) found `N_cb` to matter little, which is why it gets
//! the second, smaller stage. Configurations that exceed the device's
//! work-group or local-memory limits, or whose chunk is larger than the
//! mesh, are skipped (and listed in [`TuneResult::trials`] with the reason).
//!
use std::path::PathBuf;

use super::bandwidth::median;
use super::case::{gcd, lcm};
use super::integrator::OpenClIntegrator;
use super::shape::{DEFAULT_N_CB, KernelShape, LaunchConfig, default_config};
use super::tuning_cache::{CacheEntry, TuneCache, TuneKey, cache_path};
use crate::physics::Pointwise;
use crate::{Error, Real, Result};

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
    /// Where to store the result: `None` for the default [`cache_path`].
    pub cache_file: Option<PathBuf>,
    /// Whether to store the result in the cache at all.
    pub store: bool,
}

impl Default for TuneOptions {
    /// 2 warm-up and 10 timed launches per candidate; `N_cb ∈ {1, 2, 4, 8,
    /// 16}`; two-stage search; store in the default cache file.
    fn default() -> Self {
        TuneOptions {
            warmup: 2,
            reps: 10,
            n_cb: vec![1, 2, 4, 8, 16],
            candidates: Vec::new(),
            cache_file: None,
            store: true,
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
    /// Cells in full chunks (run on the device).
    pub cells: usize,
    /// Median launch time in nanoseconds, or why the candidate was skipped.
    pub time_ns: std::result::Result<f64, String>,
}

impl Trial {
    /// Nanoseconds per device cell, if timed.
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

/// The trial with the least time per device cell.
fn best_of(trials: &[Trial]) -> Option<Trial> {
    trials
        .iter()
        .filter_map(|t| t.ns_per_cell().map(|ns| (ns, t)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, t)| t.clone())
}

/// Tunes `(N_bl, N_cb, N_tc, prefetch)` for `physics` on `integrator` (see
/// the [module documentation](self)) and, if `opts.store`, records the
/// fastest configuration in the cache, where later launches find it. The
/// integrator itself is not changed.
///
/// **Call it after one [`OpenClIntegrator::element_vectors`] evaluation with
/// `physics`**: the candidates are timed with
/// [`OpenClIntegrator::time_kernel`] on the inputs that evaluation left on
/// the device. (Candidates with smaller chunks than that evaluation's also
/// read the few cells of its native remainder, which were not uploaded; that
/// changes no timing measurably.)
///
/// # Errors
/// [`Error::InvalidArgument`] if no evaluation ran a kernel yet, if
/// `opts.reps == 0`, or if no candidate is valid on the device or fits the
/// mesh; the errors of kernel builds and launches. A failure to store the
/// result is not an error ([`TuneResult::store_error`]).
pub fn autotune<R: Real, P: Pointwise + ?Sized>(
    integrator: &mut OpenClIntegrator<R>,
    physics: &P,
    opts: &TuneOptions,
) -> Result<TuneResult> {
    if integrator.last_kernel_ns().is_none() {
        return Err(Error::arg(
            "integrator",
            "autotune times the kernel on the inputs of the last evaluation: call element_vectors \
             (on a mesh of at least one chunk) first",
        ));
    }
    if opts.reps == 0 {
        return Err(Error::arg(
            "reps",
            "at least one timed launch per candidate",
        ));
    }
    let case = integrator.case_for(physics);
    let options = integrator.options().clone();
    let info = integrator.device().info().clone();
    let key = TuneKey::new(&info, &case, physics.source_hash(), &options);
    let n_cells = integrator.discretization().n_cells();
    let shape_of = |config: LaunchConfig| KernelShape::new(&case, config, &options);
    let default = default_config(&case, &options, &info).ok();

    let mut trials: Vec<Trial> = Vec::new();
    let run = |integrator: &mut OpenClIntegrator<R>,
               trials: &mut Vec<Trial>,
               config: LaunchConfig|
     -> Result<()> {
        if trials.iter().any(|t| t.config == config) {
            return Ok(());
        }
        let shape = shape_of(config)?;
        let cells = shape.n_chunks(n_cells) * shape.chunk;
        let skip = if let Err(e) = shape.check_device(&info) {
            Some(e.to_string())
        } else if cells == 0 {
            Some(format!(
                "chunk of {} cells is larger than the mesh ({n_cells} cells)",
                shape.chunk
            ))
        } else {
            None
        };
        let time_ns = match skip {
            Some(reason) => Err(reason),
            None => {
                if opts.warmup > 0 {
                    integrator.time_kernel(physics, config, opts.warmup)?;
                }
                Ok(median(&integrator.time_kernel(physics, config, opts.reps)?))
            }
        };
        trials.push(Trial {
            config,
            n_t: shape.n_t,
            cells,
            time_ns,
        });
        Ok(())
    };

    if opts.candidates.is_empty() {
        let l = case.lcm();
        let (n_comp, n_q) = (case.n_comp, case.n_q);
        if let Some(d) = default {
            run(integrator, &mut trials, d)?;
        }
        // Threads per cell: one, one per component, one per quadrature
        // point, and the default's.
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
            // N_bl counts blocks of N_bs·N_tc threads.
            let threads_per_block = l / gcd(l, n_tc) * n_tc;
            for n_bl in candidate_n_bl(threads_per_block, info.max_work_group_size) {
                let config = LaunchConfig::new(n_bl, DEFAULT_N_CB).with_threads_per_cell(n_tc);
                run(integrator, &mut trials, config)?;
            }
        }
        if let Some(stage1) = best_of(&trials) {
            for &n_cb in &opts.n_cb {
                if n_cb > 0 {
                    let config = LaunchConfig {
                        n_cb,
                        ..stage1.config
                    };
                    run(integrator, &mut trials, config)?;
                }
            }
        }
        // Stage 3: the best so far without register prefetching.
        if let Some(stage2) = best_of(&trials) {
            run(integrator, &mut trials, stage2.config.with_prefetch(false))?;
        }
    } else {
        for &c in &opts.candidates {
            run(integrator, &mut trials, c)?;
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
    if opts.store {
        match opts.cache_file.clone().or_else(|| cache_path(&options)) {
            None => {
                store_error = Some(format!(
                    "no cache directory: set {}, XDG_CACHE_HOME or HOME",
                    super::options::CACHE_DIR_ENV
                ))
            }
            Some(path) => {
                let entry = CacheEntry {
                    config: best.config,
                    time_ns: best.time_ns.clone().unwrap_or(0.0),
                    cells: best.cells,
                };
                let result = TuneCache::load(&path).and_then(|mut cache| {
                    cache.insert(&key, entry);
                    cache.save()
                });
                match result {
                    Ok(()) => stored = Some(path),
                    Err(e) => {
                        store_error = Some(format!("could not update the autotune cache: {e}"))
                    }
                }
            }
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
