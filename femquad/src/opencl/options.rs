//! Kernel options: the switches that change the generated code, and the
//! tuning cache a launch takes its configuration from when none is given.
//! They are explicit values: [`KernelOptions::default`] is reproducible (it
//! reads neither the environment nor a tuning cache, so a launch without an
//! explicit configuration takes the device default,
//! [`super::shape::default_config`]); a [`TuningCache`] is loaded once by
//! the program and passed in ([`KernelOptions::with_tuning_cache`]).
//! [`KernelOptions::from_env`] is the top-level reading of the environment
//! (what [`crate::backend::Backend::opencl_from_env`] uses), never called by the
//! library itself:
//!
//! | variable | option | [`KernelOptions::from_env`] without it |
//! |---|---|---|
//! | `FEMQUAD_PREFETCH=0` | [`KernelOptions::prefetch`] off | on |
//! | `FEMQUAD_VECTOR_LOADS=0` | [`KernelOptions::vector_loads`] off | on |
//! | `FEMQUAD_TAB_REGISTERS=0` or `1` | [`KernelOptions::tab_registers`] forced | by element size |
//! | `FEMQUAD_AUTOTUNE=off` | no [`KernelOptions::tuning_cache`] | the cache file loaded |
//! | `FEMQUAD_CACHE_DIR=DIR` | the cache file `DIR/autotune.txt` | `$XDG_CACHE_HOME/femquad`, `~/.cache/femquad` ([`default_path`]) |
//!
//! An unrecognised value is an error naming the variable, never ignored.

use std::sync::Arc;

pub use super::tuning_cache::CACHE_DIR_ENV;
use super::tuning_cache::{TuningCache, default_path};
use crate::{Error, Result};

/// Environment variable that disables register prefetching when `0`.
pub const PREFETCH_ENV: &str = "FEMQUAD_PREFETCH";
/// Environment variable that disables 16-byte vector loads when `0`.
pub const VECTOR_LOADS_ENV: &str = "FEMQUAD_VECTOR_LOADS";
/// Environment variable forcing the tabulation into registers (`1`) or
/// local memory (`0`).
pub const TAB_REGISTERS_ENV: &str = "FEMQUAD_TAB_REGISTERS";
/// Environment variable that makes [`KernelOptions::from_env`] load no
/// tuning cache when `off`, `0`, `false` or `no`.
pub const AUTOTUNE_ENV: &str = "FEMQUAD_AUTOTUNE";

/// Switches of the generated kernels and the tuning cache that launch
/// configurations are looked up in. [`Default`] is every feature on and
/// **no** tuning cache (reproducible launches: the device default
/// configuration wherever none is given).
#[derive(Clone, Debug, PartialEq)]
pub struct KernelOptions {
    /// Load the next batch into registers while the current one computes
    /// (kernel `PREFETCH`), where the launch configuration asks for it.
    pub prefetch: bool,
    /// Move batch inputs through 16-byte vectors where the batch holds a
    /// whole number of them (kernel `VEC_WIDTH > 1`).
    pub vector_loads: bool,
    /// Keep each thread's tabulation in registers (`Some(true)`), in local
    /// memory (`Some(false)`), or decide by the element size (`None`, see
    /// [`super::shape::TAB_REGISTER_REALS`]).
    pub tab_registers: Option<bool>,
    /// At most this many nodes in a work-group's patch (`P_A + P_B`, the
    /// local memory its node values take), below the capacities of
    /// [`super::shape::patch_capacity`]; `None` (the default): those
    /// capacities. A group with more distinct nodes takes the 32-bit
    /// global path, counted in
    /// [`LaunchRecord::fallback_groups`](super::LaunchRecord::fallback_groups)
    /// (tests force that path with a tiny limit).
    pub patch_node_limit: Option<usize>,
    /// The launch configurations stored by the autotuner, already loaded
    /// ([`TuningCache::load`]); `None` (the default) always takes the
    /// device default.
    pub tuning_cache: Option<Arc<TuningCache>>,
}

impl Default for KernelOptions {
    fn default() -> Self {
        KernelOptions {
            prefetch: true,
            vector_loads: true,
            tab_registers: None,
            patch_node_limit: None,
            tuning_cache: None,
        }
    }
}

/// Reads a boolean switch: unset → `None`; `0`/`off`/`false`/`no` →
/// `Some(false)`; `1`/`on`/`true`/`yes` → `Some(true)`; anything else is an
/// error naming the variable.
fn switch(name: &'static str, value: Option<String>) -> Result<Option<bool>> {
    let Some(v) = value else { return Ok(None) };
    match v.trim().to_ascii_lowercase().as_str() {
        "0" | "off" | "false" | "no" => Ok(Some(false)),
        "1" | "on" | "true" | "yes" => Ok(Some(true)),
        _ => Err(Error::arg(
            name,
            format!("environment variable {name}={v:?}: use 0/off or 1/on"),
        )),
    }
}

impl KernelOptions {
    /// The same options with launch configurations looked up in `cache`
    /// (loaded once by the caller, shared by every operator given it).
    pub fn with_tuning_cache(self, cache: Arc<TuningCache>) -> Self {
        KernelOptions {
            tuning_cache: Some(cache),
            ..self
        }
    }

    /// The options as the environment sets them (table in the module doc),
    /// for the top level of a program: the kernel switches, and the tuning
    /// cache loaded from its file ([`default_path`]) unless
    /// `FEMQUAD_AUTOTUNE` turns it off.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the variable if a switch has a
    /// value other than `0/off/false/no` or `1/on/true/yes`;
    /// [`Error::Context`] over [`Error::Io`] naming the cache file if it
    /// exists but cannot be read.
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`KernelOptions::from_env`] with the variables looked up by `var`.
    ///
    /// # Errors
    /// Those of [`KernelOptions::from_env`].
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let d = KernelOptions::default();
        let tuning_cache = match switch(AUTOTUNE_ENV, var(AUTOTUNE_ENV))? {
            Some(false) => None,
            Some(true) | None => match default_path(&var) {
                Some(path) => Some(Arc::new(TuningCache::load(path).map_err(|e| {
                    e.context(format!(
                        "loading the autotune cache ({AUTOTUNE_ENV}=off ignores it)"
                    ))
                })?)),
                None => None,
            },
        };
        Ok(KernelOptions {
            prefetch: switch(PREFETCH_ENV, var(PREFETCH_ENV))?.unwrap_or(d.prefetch),
            vector_loads: switch(VECTOR_LOADS_ENV, var(VECTOR_LOADS_ENV))?
                .unwrap_or(d.vector_loads),
            tab_registers: switch(TAB_REGISTERS_ENV, var(TAB_REGISTERS_ENV))?,
            patch_node_limit: d.patch_node_limit,
            tuning_cache,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opencl::tuning_cache::CACHE_FILE;

    fn vars(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn environment_is_parsed_once_and_strictly() {
        // the default reads no cache, and neither does an environment that
        // names no cache directory
        assert!(KernelOptions::default().tuning_cache.is_none());
        assert_eq!(
            KernelOptions::from_vars(vars(vec![])).unwrap(),
            KernelOptions::default()
        );
        let o = KernelOptions::from_vars(vars(vec![
            (PREFETCH_ENV, "0".into()),
            (VECTOR_LOADS_ENV, "off".into()),
            (TAB_REGISTERS_ENV, "1".into()),
            (AUTOTUNE_ENV, "off".into()),
            (CACHE_DIR_ENV, "/nonexistent/femquad".into()),
        ]))
        .unwrap();
        assert!(!o.prefetch && !o.vector_loads && o.tuning_cache.is_none());
        assert_eq!(o.tab_registers, Some(true));
        let e = KernelOptions::from_vars(vars(vec![(PREFETCH_ENV, "maybe".into())]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid argument `FEMQUAD_PREFETCH`: environment variable \
             FEMQUAD_PREFETCH=\"maybe\": use 0/off or 1/on"
        );
    }

    #[test]
    fn the_environment_loads_the_tuning_cache_once_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("femquad-options-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let home = dir.join("home");
        let file = home.join(".cache").join("femquad").join(CACHE_FILE);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "# empty\n").unwrap();
        // HOME locates the file; the options hold it, loaded
        let o = KernelOptions::from_vars(vars(vec![("HOME", home.display().to_string())])).unwrap();
        let cache = o.tuning_cache.expect("the cache under HOME");
        assert_eq!(cache.path(), file.as_path());
        assert!(cache.is_empty());
        // FEMQUAD_CACHE_DIR comes first; a directory where the file should
        // be is an error naming the file and the way out, not a silent
        // fallback to the device defaults
        let blocked = dir.join("blocked");
        std::fs::create_dir_all(blocked.join(CACHE_FILE)).unwrap();
        let e = KernelOptions::from_vars(vars(vec![
            ("HOME", home.display().to_string()),
            (CACHE_DIR_ENV, blocked.display().to_string()),
        ]))
        .unwrap_err();
        assert!(
            matches!(&e, Error::Context { source, .. } if matches!(**source, Error::Io { .. }))
        );
        let text = e.to_string();
        assert!(
            text.starts_with("loading the autotune cache (FEMQUAD_AUTOTUNE=off ignores it): ")
                && text.contains(&blocked.join(CACHE_FILE).display().to_string()),
            "{text}"
        );
        // ... which FEMQUAD_AUTOTUNE=off avoids: nothing is read
        let o = KernelOptions::from_vars(vars(vec![
            (CACHE_DIR_ENV, blocked.display().to_string()),
            (AUTOTUNE_ENV, "off".into()),
        ]))
        .unwrap();
        assert!(o.tuning_cache.is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
