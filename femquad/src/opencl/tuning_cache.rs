//! The autotune cache: launch configurations chosen by
//! [`super::autotune`], kept in a plain-text file, loaded **once** into a
//! [`TuningCache`] and passed in explicitly
//! ([`super::KernelOptions::with_tuning_cache`]); an operator looks up its launch
//! configurations there when none is given. Nothing on the launch path reads
//! a file or the environment: where the file is ([`default_path`]) is decided
//! at the top level of a program ([`super::KernelOptions::from_env`]).
//!
//! # Cache file
//! `autotune.txt` in the first of `$FEMQUAD_CACHE_DIR`,
//! `$XDG_CACHE_HOME/femquad`, `$HOME/.cache/femquad` that is set
//! ([`default_path`]). One entry per line, `KEY => VALUES`:
//!
//! ```text
//! device=NVIDIA H100 80GB HBM3 | driver=580.159.04 | kernel=5f1c… | dim=2 | n_b=3 | n_comp=1 | n_q=1 | aux=none:0 | physics=9e3a… | real=f32 => n_bl=32 n_cb=4 n_tc=1 prefetch=1 geometry=stored patches=0 cell_parallel=0 ns=241152 cells=16777216
//! ```
//!
//! The key ([`TuneKey`], its `Display`) names the device and driver, a hash
//! of the kernel variant (template and switches), the discretization sizes, the auxiliary space,
//! the physics' source hash and the precision; the values are the chosen
//! `N_bl`, `N_cb`, the median launch time in nanoseconds and the cells that
//! launch integrated. Lines starting with `#` and blank lines are comments.
//! A missing file is an empty cache; unreadable lines are skipped, never
//! fatal, with one warning on stderr per line each time the file is loaded
//! ([`TuningCache::load`], once per program) naming the file, the line and
//! what is wrong (the case then runs with its default configuration until
//! it is tuned again, and the next write of the file drops the line); a
//! later line for the same key wins. Writes replace the file atomically
//! (temporary file and rename).

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use super::case::lcm;
use super::device::DeviceInfo;
use super::launch_config::{GeometryMode, LaunchConfig};
use crate::aux_space::AuxSpace;
use crate::{Error, Precision, Result};

/// Environment variable naming the autotune cache directory
/// ([`default_path`]).
pub const CACHE_DIR_ENV: &str = "FEMQUAD_CACHE_DIR";
/// File name of the cache inside the cache directory.
pub const CACHE_FILE: &str = "autotune.txt";
/// Separator between the key and the values of a cache line.
const ARROW: &str = " => ";
/// Separator between key fields.
const FIELD_SEP: &str = " | ";

/// Everything a tuned configuration depends on. Its `Display` is the
/// cache key; [`FromStr`] parses it back. [`TuneKey::new`], which resolves
/// the kernel switches as a kernel shape does, is in [`super::tune_key`].
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TuneKey {
    /// Device name (sanitized: no `|`, `=`, tabs or line breaks).
    pub device: String,
    /// Driver version (sanitized likewise).
    pub driver: String,
    /// FNV-1a hash of the kernel variant: the template `kernels/integrate.cl`
    /// and the switches that change the generated code (register prefetch,
    /// 16-byte vector loads, tabulation in registers;
    /// [`super::tune_key::kernel_variant_hash`]).
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
    /// [`crate::Pointwise::source_hash`] of the physics.
    pub physics: u64,
    /// Precision.
    pub real: Precision,
}

/// Replaces the characters the cache format uses as separators.
pub(super) fn sanitize(s: &str) -> String {
    s.trim()
        .chars()
        .map(|c| match c {
            '|' | '=' | '\t' | '\n' | '\r' => '_',
            c => c,
        })
        .collect()
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
            self.real,
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
            real: get("real")?
                .parse()
                .map_err(|_| "key field `real` is not f32 or f64".to_string())?,
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
            "n_bl={} n_cb={} n_tc={} prefetch={} geometry={} patches={} cell_parallel={} ns={:.0} cells={}",
            self.config.n_bl,
            self.config.n_cb,
            self.config.n_tc,
            u8::from(self.config.prefetch),
            self.config.geometry.name(),
            u8::from(self.config.patches),
            u8::from(self.config.cell_parallel),
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
        let mut geometry = None;
        let mut patches = None;
        let mut cell_parallel = None;
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
                "geometry" => {
                    geometry = Some(match v {
                        "stored" => GeometryMode::Stored,
                        "computed" => GeometryMode::Computed,
                        _ => return Err(bad()),
                    })
                }
                "patches" => {
                    patches = Some(match v {
                        "0" => false,
                        "1" => true,
                        _ => return Err(bad()),
                    })
                }
                "cell_parallel" => {
                    cell_parallel = Some(match v {
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
        let config = LaunchConfig::new(n_bl, n_cb)
            .with_threads_per_cell(n_tc)
            .with_prefetch(prefetch.unwrap_or(true))
            .with_geometry(geometry.unwrap_or_default())
            .with_patches(patches.unwrap_or(false));
        Ok(CacheEntry {
            // as stored (a line before `cell_parallel` existed: the transposition)
            config: LaunchConfig {
                cell_parallel: cell_parallel.unwrap_or(false),
                ..config
            },
            time_ns,
            cells: cells.unwrap_or(0),
        })
    }
}

/// A line of a cache file that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedLine {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// The contents of a cache file, loaded once ([`TuningCache::load`]) and
/// shared by the operators that use it (an `Arc<TuningCache>` in their
/// [`super::KernelOptions`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TuningCache {
    path: PathBuf,
    /// Entries in file order, keyed by the key text.
    entries: Vec<(String, CacheEntry)>,
    /// Lines that could not be parsed when loading.
    skipped: Vec<SkippedLine>,
}

impl TuningCache {
    /// An empty cache that [`TuningCache::save`] will write to `path`.
    pub fn empty(path: impl Into<PathBuf>) -> Self {
        TuningCache {
            path: path.into(),
            ..TuningCache::default()
        }
    }

    /// Reads `path`. A missing file gives an empty cache; lines that are
    /// not `KEY => VALUES` with a valid key and values are skipped
    /// ([`TuningCache::skipped_lines`]), each with a warning on stderr
    /// ([`skipped_line_warning`]).
    ///
    /// # Errors
    /// [`Error::Io`] naming the file if it exists but cannot be read.
    pub fn load(path: impl Into<PathBuf>) -> Result<Self> {
        let path = path.into();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(TuningCache::empty(path));
            }
            Err(source) => return Err(Error::Io { path, source }),
        };
        let text = String::from_utf8_lossy(&bytes);
        let mut cache = TuningCache::empty(path);
        for (k, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match parse_line(line) {
                Ok((key, entry)) => cache.put(key, entry),
                Err(reason) => {
                    let skipped = SkippedLine {
                        line: k + 1,
                        reason,
                    };
                    eprintln!("{}", skipped_line_warning(&cache.path, &skipped));
                    cache.skipped.push(skipped);
                }
            }
        }
        Ok(cache)
    }

    /// The file this cache was loaded from / saves to.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of lines skipped as unreadable when loading.
    pub fn skipped(&self) -> usize {
        self.skipped.len()
    }

    /// The lines skipped as unreadable when loading, in file order.
    pub fn skipped_lines(&self) -> &[SkippedLine] {
        &self.skipped
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

    /// The tuned configuration for `key`, if there is one that fits
    /// `device`: the key's device name and driver match it and the
    /// work-group (`N_bl·N_bs` threads) is within its limit. `None` (never
    /// an error) otherwise: the launch then takes the device default.
    pub fn lookup(&self, device: &DeviceInfo, key: &TuneKey) -> Option<LaunchConfig> {
        if key.device != sanitize(&device.name) || key.driver != sanitize(&device.driver) {
            return None;
        }
        let entry = self.get(key)?;
        let threads = entry.config.n_bl.checked_mul(key.n_bs())?;
        (threads <= device.max_work_group_size).then_some(entry.config)
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
            "# femquad autotune cache: KEY => n_bl n_cb, median launch ns, device cells (see femquad::opencl::tuning_cache)\n",
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

/// Parses `KEY => VALUES`, checking that the key is a valid [`TuneKey`];
/// else says what is wrong.
fn parse_line(line: &str) -> std::result::Result<(String, CacheEntry), String> {
    let (k, v) = line
        .rsplit_once(ARROW)
        .ok_or_else(|| format!("no `{}` between a key and values", ARROW.trim()))?;
    let key: TuneKey = k.trim().parse()?;
    let entry: CacheEntry = v.trim().parse()?;
    Ok((key.to_string(), entry))
}

/// The warning for the unreadable line `skipped` of the cache file `path`.
pub fn skipped_line_warning(path: &Path, skipped: &SkippedLine) -> String {
    format!(
        "femquad: warning: {}:{}: autotune cache entry skipped ({}); its case runs with the \
         default launch configuration until it is tuned again, and the next write of the \
         cache drops this line",
        path.display(),
        skipped.line,
        skipped.reason
    )
}

/// The default cache file, with the environment variables looked up by
/// `var` (at the top level of a program: [`super::KernelOptions::from_env`] passes
/// `std::env::var`): `autotune.txt` in `$FEMQUAD_CACHE_DIR`, else in
/// `$XDG_CACHE_HOME/femquad`, else in `$HOME/.cache/femquad`; `None` if
/// none of them is set (non-empty).
pub fn default_path(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    Some(cache_dir(var)?.join(CACHE_FILE))
}

/// femquad's cache directory (with the variables looked up by `var`):
/// `$FEMQUAD_CACHE_DIR`, else `$XDG_CACHE_HOME/femquad`, else
/// `$HOME/.cache/femquad`; `None` if none of them is set (non-empty).
pub(crate) fn cache_dir(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let var = |name: &str| {
        var(name)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    var(CACHE_DIR_ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("femquad")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("femquad")))
}

#[cfg(test)]
mod tests;
