//! Autotuning of the launch configuration `(N_bl, N_cb)` and its cache.
//!
//! [`autotune`] times a short list of valid configurations of an
//! [`OpenClIntegrator`] on the device (the median of a few launches each),
//! keeps the fastest *per device cell* (configurations differ in how many
//! cells fill whole chunks), sets it on the integrator and stores it in a
//! plain-text cache file. [`cached_config`] looks a configuration up again,
//! so that later runs (and [`OpenClIntegrator::config_for`], once hooked
//! in) use the tuned choice without timing anything.
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
//! # Cache file
//! `autotune.txt` in the first of `$FEMQUAD_CACHE_DIR`,
//! `$XDG_CACHE_HOME/femquad`, `$HOME/.cache/femquad` that is set
//! ([`cache_path`]). One entry per line, `KEY => VALUES`:
//!
//! ```text
//! device=NVIDIA H100 80GB HBM3 | driver=580.159.04 | kernel=5f1c… | dim=2 | n_b=3 | n_comp=1 | n_q=1 | aux=none:0 | physics=9e3a… | real=f32 => n_bl=32 n_cb=4 n_tc=1 prefetch=1 ns=241152 cells=16777216
//! ```
//!
//! The key ([`TuneKey`], its `Display`) names the device and driver, a hash
//! of the kernel variant (template and switches), the discretization sizes, the auxiliary space,
//! the physics' source hash and the precision; the values are the chosen
//! `N_bl`, `N_cb`, the median launch time in nanoseconds and the cells that
//! launch integrated. Lines starting with `#` and blank lines are comments.
//! A missing file is an empty cache; unreadable lines are skipped (and
//! counted), never fatal; a later line for the same key wins. Writes replace
//! the file atomically (temporary file and rename). Setting
//! `FEMQUAD_AUTOTUNE=off` makes [`cached_config`] ignore the cache.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::bandwidth::median;
use super::device::DeviceInfo;
use super::integrator::OpenClIntegrator;
use super::shape::{DEFAULT_N_CB, KernelShape, LaunchConfig, default_config, gcd, lcm};
use super::source::INTEGRATE_TEMPLATE;
use crate::aux_space::AuxSpace;
use crate::physics::{Fnv1a, Pointwise};
use crate::{Error, Real, Result};

/// Environment variable naming the cache directory (highest priority).
pub const CACHE_DIR_ENV: &str = "FEMQUAD_CACHE_DIR";
/// Environment variable that disables [`cached_config`] when set to `off`,
/// `0`, `false` or `no`.
pub const AUTOTUNE_ENV: &str = "FEMQUAD_AUTOTUNE";
/// File name of the cache inside the cache directory.
pub const CACHE_FILE: &str = "autotune.txt";
/// Work-group sizes (threads) the `N_bl` candidates aim at.
pub const THREAD_TARGETS: [usize; 10] = [32, 64, 96, 128, 192, 256, 384, 512, 768, 1024];
/// Warp width the candidates align work-groups to where they can.
const WARP: usize = 32;
/// Separator between the key and the values of a cache line.
const ARROW: &str = " => ";
/// Separator between key fields.
const FIELD_SEP: &str = " | ";

/// Everything a tuned configuration depends on. Its `Display` is the
/// cache key; [`FromStr`] parses it back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneKey {
    /// Device name (sanitized: no `|`, `=`, tabs or line breaks).
    pub device: String,
    /// Driver version (sanitized likewise).
    pub driver: String,
    /// FNV-1a hash of the kernel variant: the template `kernels/integrate.cl`
    /// and the switches that change the generated code (register prefetch,
    /// 16-byte vector loads, tabulation in registers; [`kernel_variant_hash`]).
    pub kernel: u64,
    /// Spatial dimension.
    pub dim: usize,
    /// Scalar basis functions per cell, `N_b`.
    pub n_b: usize,
    /// Components, `N_comp`.
    pub n_comp: usize,
    /// Quadrature points, `N_q`.
    pub n_q: usize,
    /// Auxiliary space.
    pub aux: AuxSpace,
    /// [`Pointwise::source_hash`] of the physics.
    pub physics: u64,
    /// Precision, `f32` or `f64` ([`Real::PRECISION`]).
    pub real: String,
}

/// Replaces the characters the cache format uses as separators.
fn sanitize(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '|' | '=' | '\t' | '\n' | '\r' => '_',
            c => c,
        })
        .collect()
}

/// The hash that [`TuneKey::kernel`] records: the kernel template and the
/// kernel switches `prefetch`, `vector_loads` and `tab_registers` of
/// [`KernelShape`] as the environment leaves them (`FEMQUAD_PREFETCH`,
/// `FEMQUAD_VECTOR_LOADS`, `FEMQUAD_TAB_REGISTERS`), so that a configuration
/// tuned for one kernel variant is not used for another.
pub fn kernel_variant_hash(prefetch: bool, vector_loads: bool, tab_registers: bool) -> u64 {
    let mut h = Fnv1a::new();
    h.write(INTEGRATE_TEMPLATE.as_bytes());
    h.write(&[
        u8::from(prefetch),
        u8::from(vector_loads),
        u8::from(tab_registers),
    ]);
    h.finish()
}

/// The cache key of `physics` on `integrator` (its device, discretization
/// and precision).
pub fn tune_key<R: Real, P: Pointwise + ?Sized>(
    integrator: &OpenClIntegrator<R>,
    physics: &P,
) -> TuneKey {
    let disc = integrator.discretization();
    let info = integrator.device().info();
    // The kernel switches as a shape reads them (any valid configuration).
    let probe = KernelShape::new(
        disc.dim(),
        disc.n_b(),
        disc.n_comp(),
        disc.n_q(),
        disc.aux(),
        physics.info(),
        std::mem::size_of::<R>(),
        LaunchConfig::new(1, 1),
    );
    let (prefetch, vector_loads, tab_registers) = probe.map_or((true, true, true), |s| {
        (s.prefetch, s.vector_loads, s.tab_registers)
    });
    TuneKey {
        device: sanitize(&info.name),
        driver: sanitize(&info.driver),
        kernel: kernel_variant_hash(prefetch, vector_loads, tab_registers),
        dim: disc.dim(),
        n_b: disc.n_b(),
        n_comp: disc.n_comp(),
        n_q: disc.n_q(),
        aux: disc.aux(),
        physics: physics.source_hash(),
        real: R::PRECISION.name().to_string(),
    }
}

impl TuneKey {
    /// Cells per block of this discretization, `LCM(N_q, N_b·N_comp)`.
    pub fn n_bs(&self) -> usize {
        lcm(self.n_q, self.n_b * self.n_comp)
    }
}

impl fmt::Display for TuneKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "device={} | driver={} | kernel={:016x} | dim={} | n_b={} | n_comp={} | n_q={} | aux={}:{} | physics={:016x} | real={}",
            sanitize(&self.device),
            sanitize(&self.driver),
            self.kernel,
            self.dim,
            self.n_b,
            self.n_comp,
            self.n_q,
            self.aux.kind(),
            self.aux.n_comp(),
            self.physics,
            sanitize(&self.real),
        )
    }
}

impl FromStr for TuneKey {
    type Err = String;

    /// Parses the text [`TuneKey`]'s `Display` writes.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut fields: HashMap<&str, &str> = HashMap::new();
        for part in s.split(FIELD_SEP) {
            let (k, v) = part
                .split_once('=')
                .ok_or_else(|| format!("key field `{part}` has no `=`"))?;
            if fields.insert(k.trim(), v.trim()).is_some() {
                return Err(format!("key field `{}` repeated", k.trim()));
            }
        }
        let get = |k: &str| {
            fields
                .get(k)
                .copied()
                .ok_or_else(|| format!("key field `{k}` missing"))
        };
        let num = |k: &str| -> std::result::Result<usize, String> {
            get(k)?
                .parse()
                .map_err(|_| format!("key field `{k}` is not a number"))
        };
        let hex = |k: &str| -> std::result::Result<u64, String> {
            u64::from_str_radix(get(k)?, 16)
                .map_err(|_| format!("key field `{k}` is not a hex hash"))
        };
        let (aux_kind, aux_n) = get("aux")?
            .split_once(':')
            .ok_or_else(|| "key field `aux` is not KIND:N".to_string())?;
        let aux_n: usize = aux_n
            .parse()
            .map_err(|_| "key field `aux` has no component count".to_string())?;
        let aux = match (aux_kind, aux_n) {
            ("none", 0) => AuxSpace::None,
            ("field", n) if n > 0 => AuxSpace::Field { n_comp: n },
            ("cell", n) if n > 0 => AuxSpace::Cell { n_comp: n },
            _ => {
                return Err(format!(
                    "key field `aux` = `{aux_kind}:{aux_n}` is not a valid auxiliary space"
                ));
            }
        };
        let key = TuneKey {
            device: get("device")?.to_string(),
            driver: get("driver")?.to_string(),
            kernel: hex("kernel")?,
            dim: num("dim")?,
            n_b: num("n_b")?,
            n_comp: num("n_comp")?,
            n_q: num("n_q")?,
            aux,
            physics: hex("physics")?,
            real: get("real")?.to_string(),
        };
        if fields.len() != 10 {
            return Err(format!("key has {} fields, expected 10", fields.len()));
        }
        if !(2..=3).contains(&key.dim) || key.n_b == 0 || key.n_comp == 0 || key.n_q == 0 {
            return Err("key sizes out of range".into());
        }
        Ok(key)
    }
}

/// A cached choice: the configuration and what it measured.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CacheEntry {
    /// The tuned configuration.
    pub config: LaunchConfig,
    /// Median launch time in nanoseconds.
    pub time_ns: f64,
    /// Cells the timed launch integrated (full chunks).
    pub cells: usize,
}

impl CacheEntry {
    /// Nanoseconds per device cell.
    pub fn ns_per_cell(&self) -> f64 {
        self.time_ns / self.cells.max(1) as f64
    }
}

impl fmt::Display for CacheEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "n_bl={} n_cb={} n_tc={} prefetch={} ns={:.0} cells={}",
            self.config.n_bl,
            self.config.n_cb,
            self.config.n_tc,
            u8::from(self.config.prefetch),
            self.time_ns,
            self.cells
        )
    }
}

impl FromStr for CacheEntry {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut n_bl = None;
        let mut n_cb = None;
        let mut n_tc = None;
        let mut prefetch = None;
        let mut ns = None;
        let mut cells = None;
        for tok in s.split_whitespace() {
            let (k, v) = tok
                .split_once('=')
                .ok_or_else(|| format!("value `{tok}` has no `=`"))?;
            let bad = || format!("value `{tok}` is not a valid number");
            match k {
                "n_bl" => n_bl = Some(v.parse::<usize>().map_err(|_| bad())?),
                "n_cb" => n_cb = Some(v.parse::<usize>().map_err(|_| bad())?),
                "n_tc" => n_tc = Some(v.parse::<usize>().map_err(|_| bad())?),
                "prefetch" => {
                    prefetch = Some(match v {
                        "0" => false,
                        "1" => true,
                        _ => return Err(bad()),
                    })
                }
                "ns" => ns = Some(v.parse::<f64>().map_err(|_| bad())?),
                "cells" => cells = Some(v.parse::<usize>().map_err(|_| bad())?),
                _ => return Err(format!("unknown value `{k}`")),
            }
        }
        let (Some(n_bl), Some(n_cb)) = (n_bl, n_cb) else {
            return Err("n_bl and n_cb are required".into());
        };
        let n_tc = n_tc.unwrap_or(1);
        if n_bl == 0 || n_cb == 0 || n_tc == 0 {
            return Err("n_bl, n_cb and n_tc must be positive".into());
        }
        let time_ns = ns.unwrap_or(0.0);
        if !(time_ns.is_finite() && time_ns >= 0.0) {
            return Err("ns must be a finite, non-negative number".into());
        }
        Ok(CacheEntry {
            config: LaunchConfig::new(n_bl, n_cb)
                .with_threads_per_cell(n_tc)
                .with_prefetch(prefetch.unwrap_or(true)),
            time_ns,
            cells: cells.unwrap_or(0),
        })
    }
}

/// The contents of a cache file.
#[derive(Clone, Debug, Default)]
pub struct TuneCache {
    path: PathBuf,
    /// Entries in file order, keyed by the key text.
    entries: Vec<(String, CacheEntry)>,
    /// Lines that could not be parsed when loading.
    skipped: usize,
}

impl TuneCache {
    /// An empty cache that [`TuneCache::save`] will write to `path`.
    pub fn empty(path: impl Into<PathBuf>) -> Self {
        TuneCache {
            path: path.into(),
            ..TuneCache::default()
        }
    }

    /// Reads `path`. A missing file gives an empty cache; lines that are
    /// not `KEY => VALUES` with a valid key and values are skipped
    /// ([`TuneCache::skipped`]).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file if it exists but cannot be read.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TuneCache::empty(path));
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut cache = TuneCache::empty(path);
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Some((key, entry)) => cache.put(key, entry),
                None => cache.skipped += 1,
            }
        }
        Ok(cache)
    }

    /// The file this cache was loaded from / saves to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines skipped as unreadable when loading.
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if there are no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry for `key`.
    pub fn get(&self, key: &TuneKey) -> Option<CacheEntry> {
        let k = key.to_string();
        self.entries
            .iter()
            .find(|(ek, _)| *ek == k)
            .map(|(_, e)| *e)
    }

    /// Sets the entry for `key` (replacing an older one).
    pub fn insert(&mut self, key: &TuneKey, entry: CacheEntry) {
        self.put(key.to_string(), entry);
    }

    fn put(&mut self, key: String, entry: CacheEntry) {
        match self.entries.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = entry,
            None => self.entries.push((key, entry)),
        }
    }

    /// Writes the cache to its file (creating the directory), through a
    /// temporary file renamed over the old one.
    ///
    /// # Errors
    /// [`Error::Io`] naming the directory or file that could not be written.
    pub fn save(&self) -> Result<()> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        if let Some(dir) = self.path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
        }
        let mut text = String::from(
            "# femquad autotune cache: KEY => n_bl n_cb, median launch ns, device cells (see femquad::opencl::autotune)\n",
        );
        for (k, e) in &self.entries {
            text.push_str(k);
            text.push_str(ARROW);
            text.push_str(&e.to_string());
            text.push('\n');
        }
        let mut tmp = self.path.clone().into_os_string();
        tmp.push(format!(".tmp{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, text).map_err(io(&tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(&self.path)(e)
        })
    }
}

/// Parses `KEY => VALUES`, checking that the key is a valid [`TuneKey`].
fn parse_line(line: &str) -> Option<(String, CacheEntry)> {
    let (k, v) = line.rsplit_once(ARROW)?;
    let key: TuneKey = k.trim().parse().ok()?;
    let entry: CacheEntry = v.trim().parse().ok()?;
    Some((key.to_string(), entry))
}

/// The default cache file: `autotune.txt` in `$FEMQUAD_CACHE_DIR`, else in
/// `$XDG_CACHE_HOME/femquad`, else in `$HOME/.cache/femquad`; `None` if
/// none of these variables is set (non-empty).
pub fn cache_path() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let dir = var(CACHE_DIR_ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("femquad")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("femquad")))?;
    Some(dir.join(CACHE_FILE))
}

/// The parsed cache of one file, reused while its size and modification
/// time stay the same.
type Memo = Option<(PathBuf, Option<SystemTime>, u64, Arc<TuneCache>)>;

fn memo() -> &'static Mutex<Memo> {
    static MEMO: OnceLock<Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(|| Mutex::new(None))
}

/// Loads `path` through a per-process memo (the file is re-read only when
/// its size or modification time change). `None` if it cannot be read.
fn load_memoized(path: &Path) -> Option<Arc<TuneCache>> {
    let meta = std::fs::metadata(path).ok()?;
    let (mtime, len) = (meta.modified().ok(), meta.len());
    let mut guard = memo().lock().unwrap_or_else(|p| p.into_inner());
    if let Some((p, t, l, cache)) = guard.as_ref()
        && p == path
        && *t == mtime
        && *l == len
        && mtime.is_some()
    {
        return Some(cache.clone());
    }
    let cache = Arc::new(TuneCache::load(path).ok()?);
    *guard = Some((path.to_path_buf(), mtime, len, cache.clone()));
    Some(cache)
}

fn cache_disabled() -> bool {
    std::env::var(AUTOTUNE_ENV)
        .map(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "off" | "0" | "false" | "no"
            )
        })
        .unwrap_or(false)
}

/// The tuned configuration for `key` from the default cache file
/// ([`cache_path`]), if there is one that fits `device`: the key's device
/// name and driver match it and the work-group (`N_bl·N_bs` threads) is
/// within its limit. `None` (never an error or panic) if the cache is
/// disabled (`FEMQUAD_AUTOTUNE=off`), missing, unreadable or has no entry.
pub fn cached_config(device: &DeviceInfo, key: &TuneKey) -> Option<LaunchConfig> {
    if cache_disabled() {
        return None;
    }
    cached_config_in(&cache_path()?, device, key)
}

/// As [`cached_config`], from the cache file `path` (and regardless of
/// `FEMQUAD_AUTOTUNE`).
pub fn cached_config_in(path: &Path, device: &DeviceInfo, key: &TuneKey) -> Option<LaunchConfig> {
    if key.device != sanitize(&device.name) || key.driver != sanitize(&device.driver) {
        return None;
    }
    let entry = load_memoized(path)?.get(key)?;
    let threads = entry.config.n_bl.checked_mul(key.n_bs())?;
    (threads <= device.max_work_group_size).then_some(entry.config)
}

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
    /// The fastest configuration (now set on the integrator).
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

/// Tunes `(N_bl, N_cb)` for `physics` on `integrator` (see the
/// [module documentation](self)), sets the fastest configuration on the
/// integrator and, if `opts.store`, records it in the cache.
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
    let key = tune_key(integrator, physics);
    let disc = integrator.discretization();
    let info = integrator.device().info().clone();
    let (dim, n_b, n_comp, n_q, aux) = (
        disc.dim(),
        disc.n_b(),
        disc.n_comp(),
        disc.n_q(),
        disc.aux(),
    );
    let n_cells = disc.n_cells();
    let real_size = std::mem::size_of::<R>();
    let shape_of = |config: LaunchConfig| {
        KernelShape::new(
            dim,
            n_b,
            n_comp,
            n_q,
            aux,
            physics.info(),
            real_size,
            config,
        )
    };
    let default = default_config(dim, n_b, n_comp, n_q, aux, physics.info(), real_size, &info).ok();

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
                integrator.set_config(Some(config));
                if opts.warmup > 0 {
                    integrator.time_kernel(physics, opts.warmup)?;
                }
                Ok(median(&integrator.time_kernel(physics, opts.reps)?))
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
        let l = lcm(n_q, n_b * n_comp);
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
    integrator.set_config(Some(best.config));
    let default_trial = default.and_then(|d| {
        trials
            .iter()
            .find(|t| t.config == d && t.time_ns.is_ok())
            .cloned()
    });

    let (mut stored, mut store_error) = (None, None);
    if opts.store {
        match opts.cache_file.clone().or_else(cache_path) {
            None => {
                store_error = Some(format!(
                    "no cache directory: set {CACHE_DIR_ENV}, XDG_CACHE_HOME or HOME"
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

    fn key() -> TuneKey {
        TuneKey {
            device: "NVIDIA H100 80GB HBM3".into(),
            driver: "580.159.04".into(),
            kernel: 0x0123_4567_89ab_cdef,
            dim: 3,
            n_b: 4,
            n_comp: 3,
            n_q: 1,
            aux: AuxSpace::Field { n_comp: 1 },
            physics: 0xfeed_beef_0000_0001,
            real: "f64".into(),
        }
    }

    fn device(name: &str, driver: &str, max_wg: usize) -> DeviceInfo {
        DeviceInfo {
            index: 0,
            platform: "test".into(),
            vendor: "test".into(),
            name: name.into(),
            kind: super::super::device::DeviceKind::Gpu,
            version: "OpenCL 3.0".into(),
            driver: driver.into(),
            fp64: true,
            max_work_group_size: max_wg,
            local_mem_size: 48 << 10,
            global_mem_size: 80 << 30,
            max_mem_alloc_size: 20 << 30,
            compute_units: 132,
            id: std::ptr::null_mut(),
        }
    }

    /// A fresh directory under the system temp dir, removed on drop.
    struct TempDir(PathBuf);
    impl TempDir {
        fn new(tag: &str) -> Self {
            let nanos = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            let p = std::env::temp_dir().join(format!(
                "femquad-autotune-{tag}-{}-{nanos}",
                std::process::id()
            ));
            std::fs::create_dir_all(&p).unwrap();
            TempDir(p)
        }
    }
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn key_formatting_and_round_trip() {
        let k = key();
        let text = k.to_string();
        assert_eq!(
            text,
            "device=NVIDIA H100 80GB HBM3 | driver=580.159.04 | kernel=0123456789abcdef | dim=3 | n_b=4 \
             | n_comp=3 | n_q=1 | aux=field:1 | physics=feedbeef00000001 | real=f64"
        );
        assert_eq!(text.parse::<TuneKey>().unwrap(), k);
        assert_eq!(k.n_bs(), 12);
        // Kernel variants hash differently.
        let variants = [
            (true, true, true),
            (true, false, true),
            (false, true, true),
            (false, false, true),
            (true, true, false),
        ]
        .map(|(p, v, t)| kernel_variant_hash(p, v, t));
        for i in 0..variants.len() {
            for j in 0..i {
                assert_ne!(variants[i], variants[j]);
            }
        }
        for aux in [AuxSpace::None, AuxSpace::Cell { n_comp: 2 }] {
            let k2 = TuneKey { aux, ..key() };
            assert_eq!(k2.to_string().parse::<TuneKey>().unwrap(), k2);
        }
        // Separators in device names are replaced, so the line stays parseable.
        let odd = TuneKey {
            device: "GPU | x=1\n".into(),
            ..key()
        };
        let parsed: TuneKey = odd.to_string().parse().unwrap();
        assert_eq!(parsed.device, "GPU _ x_1");
        assert!("device=x | dim=2".parse::<TuneKey>().is_err());
        assert!(
            text.replace("aux=field:1", "aux=field:0")
                .parse::<TuneKey>()
                .is_err()
        );
        assert!(text.replace("dim=3", "dim=7").parse::<TuneKey>().is_err());
    }

    #[test]
    fn entry_formatting() {
        let e = CacheEntry {
            config: LaunchConfig::new(32, 4),
            time_ns: 241_152.4,
            cells: 1 << 24,
        };
        assert_eq!(
            e.to_string(),
            "n_bl=32 n_cb=4 n_tc=1 prefetch=1 ns=241152 cells=16777216"
        );
        let back: CacheEntry = e.to_string().parse().unwrap();
        assert_eq!(back.config, e.config);
        assert_eq!(back.cells, 1 << 24);
        assert!((back.ns_per_cell() - 241_152.0 / 16_777_216.0).abs() < 1e-12);
        assert!("n_bl=0 n_cb=4".parse::<CacheEntry>().is_err());
        assert!("n_bl=3 n_cb=4 ns=NaN".parse::<CacheEntry>().is_err());
        assert!("n_bl=3".parse::<CacheEntry>().is_err());
    }

    #[test]
    fn cache_round_trip_in_temp_dir() {
        let dir = TempDir::new("roundtrip");
        let path = dir.0.join("sub").join(CACHE_FILE);
        // Missing file: empty cache, no error.
        let mut cache = TuneCache::load(&path).unwrap();
        assert!(cache.is_empty());
        let k = key();
        let k2 = TuneKey {
            real: "f32".into(),
            ..key()
        };
        cache.insert(
            &k,
            CacheEntry {
                config: LaunchConfig::new(8, 2),
                time_ns: 1000.0,
                cells: 4096,
            },
        );
        cache.insert(
            &k2,
            CacheEntry {
                config: LaunchConfig::new(16, 1),
                time_ns: 900.0,
                cells: 4096,
            },
        );
        cache.insert(
            &k,
            CacheEntry {
                config: LaunchConfig::new(24, 4),
                time_ns: 800.0,
                cells: 4608,
            },
        );
        cache.save().unwrap();
        let loaded = TuneCache::load(&path).unwrap();
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded.skipped(), 0);
        assert_eq!(loaded.get(&k).unwrap().config, LaunchConfig::new(24, 4));
        assert_eq!(loaded.get(&k2).unwrap().config, LaunchConfig::new(16, 1));
        assert_eq!(loaded.get(&TuneKey { dim: 2, ..key() }), None);

        // Lookup with device checks.
        let dev = device("NVIDIA H100 80GB HBM3", "580.159.04", 1024);
        assert_eq!(
            cached_config_in(&path, &dev, &k),
            Some(LaunchConfig::new(24, 4))
        );
        let other = device("NVIDIA H200", "580.159.04", 1024);
        assert_eq!(
            cached_config_in(
                &path,
                &other,
                &TuneKey {
                    device: "NVIDIA H200".into(),
                    ..key()
                }
            ),
            None
        );
        // A key of another device never matches the device asked about.
        assert_eq!(cached_config_in(&path, &other, &k), None);
        // Work-group limit: 24 blocks of 12 cells = 288 threads.
        let small = device("NVIDIA H100 80GB HBM3", "580.159.04", 256);
        assert_eq!(cached_config_in(&path, &small, &k), None);
        // Missing file: None, no panic.
        assert_eq!(cached_config_in(&dir.0.join("nope.txt"), &dev, &k), None);
    }

    #[test]
    fn corrupt_lines_are_ignored() {
        let dir = TempDir::new("corrupt");
        let path = dir.0.join(CACHE_FILE);
        let good = format!("{} => n_bl=12 n_cb=8 ns=5 cells=10", key());
        let text = format!(
            "# comment\n\ngarbage line\n{k} => n_bl=x n_cb=1\n{k} => n_bl=3\ndevice=a | dim=2 => n_bl=1 n_cb=1\n{good}\n\u{0}\u{ff}binary\n{k} => n_bl=4 n_cb=1 extra=1\n",
            k = key()
        );
        std::fs::write(&path, text).unwrap();
        let cache = TuneCache::load(&path).unwrap();
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.skipped(), 6);
        assert_eq!(cache.get(&key()).unwrap().config, LaunchConfig::new(12, 8));
        // Invalid UTF-8 does not fail the load either.
        std::fs::write(&path, [0xff, 0xfe, b'\n', 0x80]).unwrap();
        let cache = TuneCache::load(&path).unwrap();
        assert!(cache.is_empty());
        assert_eq!(cache.skipped(), 2);
        // A directory where the file should be: an error naming the path, no panic.
        let e = TuneCache::load(&dir.0).unwrap_err().to_string();
        assert!(e.contains(&dir.0.display().to_string()), "{e}");
        let dev = device("NVIDIA H100 80GB HBM3", "580.159.04", 1024);
        assert_eq!(cached_config_in(&dir.0, &dev, &key()), None);
        // Saving into a path under a file fails with the path named.
        let blocked = TuneCache::empty(path.join("x").join(CACHE_FILE));
        let e = blocked.save().unwrap_err().to_string();
        assert!(
            e.contains(CACHE_FILE) || e.contains("autotune.txt/x"),
            "{e}"
        );
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
