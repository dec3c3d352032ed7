//! The multigrid kernels on a device (template `kernels/multigrid.cl`):
//! [`MultigridKernels`], this backend's [`MultigridOps`] (point-block
//! Jacobi, the random fill, and the transfers between nested levels on a
//! [`DeviceTransfer`], a transfer graph uploaded once), each operation one
//! launch. The algorithms are in [`crate::multigrid`]; the native twins on
//! host vectors in [`crate::native::multigrid`].
//!
//! Every kernel runs one work-item per output entry (`mg_dense_apply`, the
//! dense product of the coarse solve: one work-group per row), in
//! work-groups of [`super::vector::WG`] = 256, writes only its own entry (no
//! atomics) and computes it by the operations of the native twin in the same
//! order (FP contraction off), so device and host agree bitwise on the
//! transfers and the dense product.
//! Fields are interleaved node-major (`dof = node·N_comp + c`); `N_comp` is a
//! compile-time constant of the program (`#define NC`), so one program is
//! built per device, precision and `N_comp` (and cached by
//! [`Device::program`]).
//!
//! [`MultigridOps`]: crate::seam::MultigridOps

mod ops;
mod transfer;

use std::marker::PhantomData;
use std::sync::{Arc, Mutex, MutexGuard};

use opencl3::kernel::Kernel;

pub use transfer::DeviceTransfer;

use super::context::Device;
use super::source::CHEBYSHEV_UPDATE;
use super::vector::WG;
use crate::seam::{DENSE_LANES, block_tolerance};

// `mg_dense_apply` sums a row in work-groups of WG lanes, the native twin in
// DENSE_LANES: the same order only if they are equal.
const _: () = assert!(DENSE_LANES == WG);
use crate::{Error, Precision, Real, Result};

/// The template of the multigrid kernels.
pub const MULTIGRID_TEMPLATE: &str = include_str!("../../../../kernels/multigrid.cl");

/// The OpenCL source of the multigrid kernels for `precision` and `n_comp`
/// components per node.
pub fn multigrid_source(precision: Precision, n_comp: usize) -> String {
    let real = precision.cl_type();
    let (fp64, suffix) = match precision {
        Precision::F64 => ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n", ""),
        Precision::F32 => ("", "f"),
    };
    let tol = block_tolerance(precision, n_comp);
    format!(
        "{fp64}typedef {real} real;\n#define WG {WG}\n#define NC {n_comp}\n\
         #define BLOCK_TOL {tol:e}{suffix}\n\n{CHEBYSHEV_UPDATE}\n{MULTIGRID_TEMPLATE}"
    )
}

/// The kernels of `kernels/multigrid.cl`.
pub(crate) struct Kernels {
    pub prolong_add: Kernel,
    pub restrict: Kernel,
    pub inject: Kernel,
    pub block_fix: Kernel,
    pub block_invert: Kernel,
    pub block_update: Kernel,
    pub chebyshev_step: Kernel,
    pub dense_apply: Kernel,
    pub fill_random: Kernel,
}

/// The multigrid kernels of one device, precision `R` and number of
/// components per node. Kernel arguments are state of the kernel objects, so
/// a launch holds the lock from its first argument to its enqueue; launches
/// go to [`Device::queue`], ordered with every other femquad operation.
pub struct MultigridKernels<R: Real> {
    device: Arc<Device>,
    n_comp: usize,
    kernels: Mutex<Kernels>,
    _real: PhantomData<R>,
}

impl<R: Real> std::fmt::Debug for MultigridKernels<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultigridKernels")
            .field("device", &self.device.info().name)
            .field("precision", &R::PRECISION)
            .field("n_comp", &self.n_comp)
            .finish()
    }
}

impl<R: Real> MultigridKernels<R> {
    /// Builds (or takes from the device's program cache) the kernels for
    /// fields of `n_comp` components in precision `R`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0;
    /// [`Error::NoFp64`] for `f64` on a device without double precision;
    /// [`Error::DeviceLimit`] if the device cannot run work-groups of 256;
    /// the build errors of [`Device::program`].
    pub fn new(device: &Arc<Device>, n_comp: usize) -> Result<Arc<Self>> {
        if n_comp == 0 {
            return Err(Error::arg("n_comp", "a field has at least one component"));
        }
        device.check_precision::<R>()?;
        let program = device.program(&multigrid_source(R::PRECISION, n_comp))?;
        let make = |name: &str| {
            device.kernel_of(
                &program,
                name,
                WG,
                "work-group size of the multigrid kernels (threads)",
            )
        };
        let kernels = Kernels {
            prolong_add: make("mg_prolong_add")?,
            restrict: make("mg_restrict")?,
            inject: make("mg_inject")?,
            block_fix: make("mg_block_fix")?,
            block_invert: make("mg_block_invert")?,
            block_update: make("mg_block_update")?,
            chebyshev_step: make("mg_chebyshev_step")?,
            dense_apply: make("mg_dense_apply")?,
            fill_random: make("mg_fill_random")?,
        };
        Ok(Arc::new(MultigridKernels {
            device: device.clone(),
            n_comp,
            kernels: Mutex::new(kernels),
            _real: PhantomData,
        }))
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Components per node.
    pub fn n_comp(&self) -> usize {
        self.n_comp
    }

    /// Locks the kernels.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Kernels> {
        // A poisoned lock only means another thread panicked while holding
        // it; the kernels stay valid.
        self.kernels.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_defines_the_constants() {
        let s = multigrid_source(Precision::F32, 3);
        assert!(s.starts_with("typedef float real;\n#define WG 256\n#define NC 3\n"));
        assert!(
            s.contains("#define BLOCK_TOL 3.5762786865234375e-7f\n"),
            "{s}"
        );
        let s = multigrid_source(Precision::F64, 1);
        assert!(s.starts_with("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"));
        assert!(
            s.contains("#define BLOCK_TOL 2.220446049250313e-16\n"),
            "{s}"
        );
        assert_eq!(block_tolerance(Precision::F64, 2), 2.0 * f64::EPSILON);
    }
}
