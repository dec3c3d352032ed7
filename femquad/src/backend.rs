//! Where the work runs: natively (Rust, rayon; the reference) or on an
//! OpenCL device (the thread-transposition kernels).

use std::sync::Arc;

use crate::Result;
use crate::native::Execution;
use crate::opencl::{Device, DeviceSelector, KernelOptions};

/// Where residuals (and the vectors of a solve) are computed.
///
/// ```
/// use femquad::prelude::*;
///
/// let native = Backend::native();
/// assert_eq!(native.describe(), "native (parallel)");
/// // the device that FEMQUAD_DEVICE names; by default a GPU if there is one
/// let device = Backend::opencl(&DeviceSelector::from_env())?;
/// assert!(device.describe().starts_with("OpenCL: "));
/// assert!(matches!(device, Backend::OpenCl { .. }));
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub enum Backend {
    /// Natively: Rust on the CPU, serial or rayon-parallel; the reference.
    Native(Execution),
    /// On an OpenCL device: the fused thread-transposition kernels, with
    /// every vector of a solve in device memory.
    OpenCl {
        /// The opened device.
        device: Arc<Device>,
        /// Kernel switches and the use of the autotune cache.
        options: KernelOptions,
    },
}

impl Backend {
    /// The OpenCL backend on the device chosen by `selector`, with the
    /// kernel options of the environment ([`KernelOptions::from_env`], read
    /// here once).
    ///
    /// # Errors
    /// No OpenCL runtime, no device matching `selector`, or an environment
    /// switch with an invalid value.
    pub fn opencl(selector: &DeviceSelector) -> Result<Backend> {
        Ok(Backend::OpenCl {
            device: Device::open(selector)?,
            options: KernelOptions::from_env()?,
        })
    }

    /// Parallel native integration.
    pub fn native() -> Backend {
        Backend::Native(Execution::Parallel)
    }

    /// A one-line description for reports: `native (parallel)` or the
    /// device name.
    pub fn describe(&self) -> String {
        match self {
            Backend::Native(e) => format!("native ({e:?})").to_lowercase(),
            Backend::OpenCl { device, .. } => {
                let i = device.info();
                format!("OpenCL: {} ({})", i.name, i.platform)
            }
        }
    }
}
