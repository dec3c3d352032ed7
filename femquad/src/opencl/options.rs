//! Kernel options: the switches that change the generated code or how a
//! launch configuration is chosen, read from the environment **once**
//! ([`KernelOptions::from_env`], when a backend is opened) and passed on
//! explicitly from there.
//!
//! [`KernelOptions::default`] is reproducible: it reads neither the
//! environment nor the autotune cache, so a launch without an explicit
//! configuration takes the device default ([`super::shape::default_config`])
//! whatever a developer's `~/.cache/femquad/autotune.txt` holds. The cache
//! is an opt-in: [`KernelOptions::from_env`] (what [`crate::Backend::opencl`]
//! uses) turns it on unless `FEMQUAD_AUTOTUNE=off`, and
//! [`KernelOptions::with_tuning_cache`] sets it explicitly.
//!
//! | variable | option | [`KernelOptions::from_env`] without it |
//! |---|---|---|
//! | `FEMQUAD_PREFETCH=0` | [`KernelOptions::prefetch`] off | on |
//! | `FEMQUAD_VECTOR_LOADS=0` | [`KernelOptions::vector_loads`] off | on |
//! | `FEMQUAD_TAB_REGISTERS=0` or `1` | [`KernelOptions::tab_registers`] forced | by element size |
//! | `FEMQUAD_AUTOTUNE=off` | [`KernelOptions::use_tuning_cache`] off | on |
//! | `FEMQUAD_CACHE_DIR=DIR` | [`KernelOptions::cache_dir`] | `$XDG_CACHE_HOME/femquad`, `~/.cache/femquad` |
//!
//! An unrecognised value is an error naming the variable, never ignored.

use std::path::PathBuf;

use crate::{Error, Result};

/// Environment variable that disables register prefetching when `0`.
pub const PREFETCH_ENV: &str = "FEMQUAD_PREFETCH";
/// Environment variable that disables 16-byte vector loads when `0`.
pub const VECTOR_LOADS_ENV: &str = "FEMQUAD_VECTOR_LOADS";
/// Environment variable forcing the tabulation into registers (`1`) or
/// local memory (`0`).
pub const TAB_REGISTERS_ENV: &str = "FEMQUAD_TAB_REGISTERS";
/// Environment variable that makes launches ignore the autotune cache when
/// `off`, `0`, `false` or `no`.
pub const AUTOTUNE_ENV: &str = "FEMQUAD_AUTOTUNE";
/// Environment variable naming the autotune cache directory.
pub const CACHE_DIR_ENV: &str = "FEMQUAD_CACHE_DIR";

/// Switches of the generated kernels and of the choice of launch
/// configuration. [`Default`] is every feature on and the tuning cache
/// **not** read (reproducible launches: the device default configuration
/// wherever none is given); [`KernelOptions::from_env`] opts in to the cache.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
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
    /// Use the launch configurations stored by the autotuner
    /// ([`super::tuning_cache`]); `false` (the default) always takes the
    /// device default.
    pub use_tuning_cache: bool,
    /// Directory of the autotune cache file; `None` for the default
    /// ([`super::tuning_cache::default_cache_dir`]).
    pub cache_dir: Option<PathBuf>,
}

impl Default for KernelOptions {
    fn default() -> Self {
        KernelOptions {
            prefetch: true,
            vector_loads: true,
            tab_registers: None,
            use_tuning_cache: false,
            cache_dir: None,
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
    /// The same options with the autotune cache read (`true`) or not.
    pub fn with_tuning_cache(self, use_tuning_cache: bool) -> Self {
        KernelOptions {
            use_tuning_cache,
            ..self
        }
    }

    /// The options as the environment sets them (table in the module doc):
    /// the tuning cache on unless `FEMQUAD_AUTOTUNE` turns it off.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the variable if a switch has a
    /// value other than `0/off/false/no` or `1/on/true/yes`.
    pub fn from_env() -> Result<Self> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`KernelOptions::from_env`] with the variables looked up by `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let d = KernelOptions::default();
        Ok(KernelOptions {
            prefetch: switch(PREFETCH_ENV, var(PREFETCH_ENV))?.unwrap_or(d.prefetch),
            vector_loads: switch(VECTOR_LOADS_ENV, var(VECTOR_LOADS_ENV))?
                .unwrap_or(d.vector_loads),
            tab_registers: switch(TAB_REGISTERS_ENV, var(TAB_REGISTERS_ENV))?,
            use_tuning_cache: switch(AUTOTUNE_ENV, var(AUTOTUNE_ENV))?.unwrap_or(true),
            cache_dir: var(CACHE_DIR_ENV)
                .filter(|s| !s.trim().is_empty())
                .map(PathBuf::from),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_is_parsed_once_and_strictly() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        // the default reads no cache; the environment opts in unless told off
        assert!(!KernelOptions::default().use_tuning_cache);
        assert_eq!(
            KernelOptions::from_vars(vars(&[])).unwrap(),
            KernelOptions::default().with_tuning_cache(true)
        );
        let o = KernelOptions::from_vars(vars(&[
            (PREFETCH_ENV, "0"),
            (VECTOR_LOADS_ENV, "off"),
            (TAB_REGISTERS_ENV, "1"),
            (AUTOTUNE_ENV, "off"),
            (CACHE_DIR_ENV, "/tmp/fq"),
        ]))
        .unwrap();
        assert!(!o.prefetch && !o.vector_loads && !o.use_tuning_cache);
        assert_eq!(o.tab_registers, Some(true));
        assert_eq!(o.cache_dir, Some(PathBuf::from("/tmp/fq")));
        let e = KernelOptions::from_vars(vars(&[(PREFETCH_ENV, "maybe")]))
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "invalid argument `FEMQUAD_PREFETCH`: environment variable \
             FEMQUAD_PREFETCH=\"maybe\": use 0/off or 1/on"
        );
    }
}
