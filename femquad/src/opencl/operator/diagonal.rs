//! The point-block diagonal of the Jacobian on the device
//! (`kernels/jacobian_diagonal.cl`): one work-item per cell, the diagonal
//! blocks of its element matrix column by column from the physics' tangent,
//! added atomically into the global blocks. For Jacobi and Chebyshev
//! smoothing; nothing is assembled.

use opencl3::kernel::Kernel;

use super::OpenClOperator;
use crate::opencl::DeviceVector;
use crate::opencl::launch::Launch;
use crate::opencl::shape::AtomicAdd;
use crate::opencl::source::{DIAGONAL_KERNEL, diagonal_source};
use crate::physics::{Pointwise, PointwiseError};
use crate::{Error, Real, Result};

/// Work-items per work-group of the diagonal kernel.
const GROUP: usize = 128;

impl<R: Real> OpenClOperator<R> {
    /// Computes `out[(node·N_comp + fc)·N_comp + gc] = J(u)[node·N_comp +
    /// fc][node·N_comp + gc]`, the point-block diagonal of the Jacobian at
    /// the global vector `u`, on the device. `out` has `n_nodes·N_comp²`
    /// entries. Enqueued like [`OpenClOperator::residual`]:
    /// [`OpenClOperator::wait_residual`] waits and returns its device time.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `u` or `out` (length, device),
    /// `constants` or `physics`, `aux` (never set); a physics without
    /// derivatives; the kernel's build or launch errors.
    pub fn jacobian_diagonal<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &DeviceVector<R>,
        constants: &[R],
        out: &mut DeviceVector<R>,
    ) -> Result<()> {
        self.disc.check_physics(physics, constants.len())?;
        crate::real::check_finite("constants", constants)?;
        let info = physics.info();
        if info.opencl_tangent_name.is_empty() {
            return Err(PointwiseError::NoDerivatives { physics: info.name }.into());
        }
        if (info.reads.a || info.reads.grad_a) && !self.aux_is_set() {
            return Err(crate::aux_space::unset_aux(info.name));
        }
        let kernel = self.diagonal_kernel(physics)?;
        self.upload_constants(constants)?;
        self.enqueue_diagonal(&kernel, u, out)
    }

    /// Builds the diagonal kernel of `physics` and uploads the stored
    /// geometry it reads (once).
    ///
    /// # Errors
    /// The kernel's build errors; device memory.
    pub(super) fn diagonal_kernel<P: Pointwise + ?Sized>(&mut self, physics: &P) -> Result<Kernel> {
        let disc = &self.disc;
        let sizes = [disc.dim(), disc.n_b(), disc.n_comp(), disc.n_q()];
        let source = diagonal_source::<R, P>(
            sizes,
            disc.aux(),
            disc.tabulation(),
            disc.quadrature(),
            physics,
            AtomicAdd::for_device(self.device.info()),
        );
        let kernel = self.device.kernel(&source, DIAGONAL_KERNEL)?;
        self.prepare_stored_geometry()?;
        Ok(kernel)
    }

    /// Enqueues the diagonal `kernel` ([`OpenClOperator::diagonal_kernel`])
    /// at `u` into `out` (`n_nodes·N_comp²` entries, checked) with the
    /// constants and aux on the device.
    pub(super) fn enqueue_diagonal(
        &mut self,
        kernel: &Kernel,
        u: &DeviceVector<R>,
        out: &mut DeviceVector<R>,
    ) -> Result<()> {
        self.check_vector("u", u)?;
        let nc = self.disc.n_comp();
        let len = self.n_nodes * nc * nc;
        if out.len() != len {
            return Err(Error::arg(
                "out",
                format!(
                    "expected {len} entries (n_nodes·N_comp²), got {}",
                    out.len()
                ),
            ));
        }
        let n_cells = self.disc.n_cells();
        let n_cells_arg = i32::try_from(n_cells)
            .map_err(|_| Error::arg("mesh", format!("{n_cells} cells exceed 2^31")))?;
        let d = &self.data;
        let (inv_j, det_j) = d.stored_geometry.as_ref().ok_or_else(|| {
            Error::internal("the diagonal kernel launched before its geometry was uploaded")
        })?;
        let aux = d.aux.as_ref().unwrap_or(&d.unused_real);
        let out = out.buffer_mut();
        let queue = self.device.live_queue()?;
        // SAFETY: `out` holds `len` values (checked above).
        let fill = unsafe {
            queue.enqueue_fill_buffer(out, &[R::ZERO], 0, len * std::mem::size_of::<R>(), &[])
        }
        .map_err(|e| {
            let bytes = len * std::mem::size_of::<R>();
            self.device
                .failure("clEnqueueFillBuffer", "Jacobian diagonal", bytes, e)
        })?;
        // Argument types and order match kernels/jacobian_diagonal.cl; the
        // kernel returns for work-items past the last cell; every node
        // index is below n_nodes and `out` holds n_nodes·N_comp² values.
        let event = Launch::new(kernel)
            .mem(u.buffer())?
            .mem(&d.cell_nodes)?
            .mem(aux)?
            .mem(inv_j)?
            .mem(det_j)?
            .mem(&d.vertices)?
            .mem(&d.constants)?
            .mem(out)?
            .value(n_cells_arg)?
            .enqueue(
                &self.device,
                n_cells.div_ceil(GROUP).max(1) * GROUP,
                Some(GROUP),
                "the Jacobian diagonal kernel",
            )?;
        self.pending = vec![fill, event];
        Ok(())
    }
}
