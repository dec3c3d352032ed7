//! The device and kernel options of femquad's own tests, chosen in one
//! place: the unit tests, the integration tests of `femquad` and of the
//! workspace root, and the benchmark crate's tests all take them from here
//! (an OpenCL backend for a test is `Backend::opencl_with(device(),
//! options())`). A tool, not femquad's API: compiled for femquad's unit
//! tests and with the `devtools` feature (which those crates' tests turn
//! on); a program chooses its device and options itself
//! (`Backend::opencl_with`, or `Backend::opencl_from_env` at its top level).
//!
//! It lives in `opencl` because the backend's own unit tests use it: a
//! top-level module would make `opencl` and it depend on each other.
//!
//! # The policy
//! * **Device**: the one `FEMQUAD_DEVICE` names, else femquad's default
//!   choice (a GPU if there is one, else the first device:
//!   [`DeviceSelector::from_env`]); PoCL's CPU device in CI.
//! * **Kernel options**: [`KernelOptions::default`]: every kernel feature
//!   on and **no tuning cache**, so every launch without an explicit
//!   configuration takes the device default. Nothing here reads a tuning
//!   cache (`~/.cache/femquad`, `$XDG_CACHE_HOME`, `$FEMQUAD_CACHE_DIR`) or
//!   the kernel switches of the environment: a test's launches are the same
//!   on every machine. A test of a kernel switch or of the tuning cache
//!   builds its options explicitly.
//! * **No device**: the tests fail, never skip, saying how to install PoCL.

use std::sync::Arc;

use super::context::Device;
use super::device::DeviceSelector;
use super::options::KernelOptions;

/// The device selection of the tests: `FEMQUAD_DEVICE`, else femquad's
/// default choice.
pub fn selector() -> DeviceSelector {
    DeviceSelector::from_env()
}

/// Opens the tests' device (a context of its own on each call).
///
/// # Panics
/// Without an OpenCL device, saying how to install PoCL: the tests that
/// call it need one.
pub fn device() -> Arc<Device> {
    Device::open(&selector()).unwrap_or_else(|e| {
        panic!(
            "these tests need an OpenCL device ({e}); on Debian/Ubuntu install \
             pocl-opencl-icd and ocl-icd-libopencl1 (scripts/ensure-opencl.sh does)"
        )
    })
}

/// The kernel options of the tests: [`KernelOptions::default`] (no tuning
/// cache, nothing from the environment).
pub fn options() -> KernelOptions {
    KernelOptions::default()
}
