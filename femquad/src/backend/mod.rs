//! Where the work runs: natively (Rust, rayon; the reference) or on an
//! OpenCL device (the thread-transposition kernels).
//!
//! This is the one module that names every backend. It holds the run-time
//! choice [`Backend`], the user-facing [`Vector<R>`] (host or device values,
//! with their [`Location`]) and [`IndexSet`] (indices kept where the vectors
//! they index live), and the dispatching types over the implementations of
//! the [`crate::seam`] traits: the [`Integrator`] of a bound form
//! ([`crate::seam::Integrate`]), the assembled [`Matrix`] of an operator
//! ([`crate::seam::AssembledMatrix`]) and the [`MultigridKernels`] (with their
//! [`TransferKernels`]) of the multigrid algorithms
//! ([`crate::seam::MultigridOps`]). Each of their
//! operations is one `match` over the backends; combining values that live
//! in different places is an
//! [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the
//! argument and both locations, never a silent transfer. [`Execution`] and
//! [`Assembly`] are re-exported for the algorithms (`operator`, `multigrid`,
//! `solve`, `vector`), which name no backend module; they go through these
//! types.

mod index_set;
mod integrator;
mod matrix;
mod multigrid_kernels;
mod vector;

pub use index_set::IndexSet;
pub use vector::{Location, Vector};

use std::sync::Arc;

use crate::Result;
use crate::opencl::{Device, KernelOptions};

/// The boundary terms of a form prepared on the host, which every backend
/// binds ([`Backend::bind`]).
pub use crate::native::BoundaryIntegrals;
pub use crate::native::Execution;
pub use crate::opencl::Assembly;
pub use integrator::Integrator;
pub(crate) use integrator::host_point_diagonal;
pub use matrix::Matrix;
pub use multigrid_kernels::{MultigridKernels, TransferKernels};

/// Where residuals (and the vectors of a solve) are computed.
///
/// ```
/// use femquad::opencl::{Device, KernelOptions};
/// use femquad::prelude::*;
///
/// let native = Backend::native();
/// assert_eq!(native.describe(), "native (parallel)");
/// // explicit: this device, these kernel options (no tuning cache)
/// let device = Device::open(&DeviceSelector::parse("cpu"))?;
/// let explicit = Backend::opencl_with(device, KernelOptions::default());
/// assert!(explicit.describe().starts_with("OpenCL: "));
/// // at the top level of a program: the device FEMQUAD_DEVICE names (by
/// // default a GPU if there is one) and the options of the environment
/// let from_env = Backend::opencl_from_env()?;
/// assert!(matches!(from_env, Backend::OpenCl { .. }));
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
        /// Kernel switches and the tuning cache (if any).
        options: KernelOptions,
    },
}

impl Backend {
    /// The backends a crate-internal test runs on: native, then the tests'
    /// OpenCL device and options ([`crate::opencl::testing`]'s one policy).
    #[cfg(test)]
    pub(crate) fn for_tests() -> [Backend; 2] {
        use crate::opencl::testing;
        [
            Backend::native(),
            Backend::opencl_with(testing::device(), testing::options()),
        ]
    }

    /// The OpenCL backend on `device` with the kernel switches and tuning
    /// cache of `options`: nothing is read from the environment or from
    /// files.
    pub fn opencl_with(device: Arc<Device>, options: KernelOptions) -> Backend {
        Backend::OpenCl { device, options }
    }

    /// The OpenCL backend as the environment sets it, for the top level of
    /// a program: the device `FEMQUAD_DEVICE` names ([`Device::from_env`])
    /// and [`KernelOptions::from_env`] (kernel switches, the autotune cache
    /// loaded once). Library code never calls it; it takes a [`Backend`].
    ///
    /// # Errors
    /// No OpenCL runtime, no device matching `FEMQUAD_DEVICE`, an
    /// environment switch with an invalid value, or an autotune cache file
    /// that exists but cannot be read.
    pub fn opencl_from_env() -> Result<Backend> {
        Ok(Backend::opencl_with(
            Device::from_env()?,
            KernelOptions::from_env()?,
        ))
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
