//! Where the work runs: natively (Rust, rayon; the reference) or on an
//! OpenCL device (the thread-transposition kernels).

use std::sync::Arc;

use crate::discretization::{CellInputs, Discretization};
use crate::native::{self, Execution};
use crate::opencl::{Device, DeviceSelector, KernelOptions, OpenClIntegrator};
use crate::physics::Pointwise;
use crate::{Real, Result};

/// Which integrator evaluates element vectors.
#[derive(Clone, Debug)]
pub enum Backend {
    /// The native integrator.
    Native(Execution),
    /// The OpenCL thread-transposition kernel on a device.
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

/// An element integrator of either backend, owning its discretization.
pub enum Integrator<R: Real> {
    /// Native.
    Native {
        /// The discretization (boxed, like the OpenCL variant's).
        disc: Box<Discretization<R>>,
        /// Serial or parallel.
        execution: Execution,
    },
    /// OpenCL (boxed: it holds device buffers and a kernel cache).
    OpenCl(Box<OpenClIntegrator<R>>),
}

impl<R: Real> Integrator<R> {
    /// An integrator of `backend` for `disc`.
    pub fn new(disc: Discretization<R>, backend: &Backend) -> Result<Self> {
        Ok(match backend {
            Backend::Native(execution) => Integrator::Native {
                disc: Box::new(disc),
                execution: *execution,
            },
            Backend::OpenCl { device, options } => Integrator::OpenCl(Box::new(
                OpenClIntegrator::new(device.clone(), disc, options.clone())?,
            )),
        })
    }

    /// The discretization.
    pub fn discretization(&self) -> &Discretization<R> {
        match self {
            Integrator::Native { disc, .. } => disc,
            Integrator::OpenCl(i) => i.discretization(),
        }
    }

    /// Element vectors of all cells (see [`crate::discretization`]).
    pub fn element_vectors<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        inputs: &CellInputs<'_, R>,
        out: &mut [R],
    ) -> Result<()> {
        match self {
            Integrator::Native { disc, execution } => {
                native::element_vectors(disc, physics, inputs, out, *execution)
            }
            Integrator::OpenCl(i) => i.element_vectors(physics, inputs, out),
        }
    }
}
