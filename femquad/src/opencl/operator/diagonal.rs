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
use crate::opencl::timing::Run;
use crate::physics::{Pointwise, Reads};
use crate::{Error, Real, Result};

/// Work-items per work-group of the diagonal kernel.
const GROUP: usize = 128;

impl<R: Real> OpenClOperator<R> {
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
        self.mesh.prepare_stored_geometry(&self.disc)?;
        Ok(kernel)
    }

    /// Enqueues `out[(node·N_comp + fc)·N_comp + gc] = J(u)[node·N_comp +
    /// fc][node·N_comp + gc]`, the point-block diagonal of the Jacobian at
    /// the global vector `u`, with the diagonal `kernel`
    /// ([`OpenClOperator::diagonal_kernel`]) and the constants and aux on
    /// the device. `out` has `n_nodes·N_comp²` entries (checked).
    pub(super) fn enqueue_diagonal(
        &mut self,
        kernel: &Kernel,
        reads: Reads,
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
        let (d, m) = (&self.data, &self.mesh);
        let (inv_j, det_j) = m.stored_geometry().ok_or_else(|| {
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
        let launch = Launch::new(kernel)
            .mem(u.buffer())?
            .mem(m.cell_nodes())?
            .mem(aux)?
            .mem(inv_j)?
            .mem(det_j)?
            .mem(m.vertices())?
            .mem(&d.constants)?;
        let event = self
            .push_time(launch, reads, self.time_args())?
            .mem(out)?
            .value(n_cells_arg)?
            .enqueue(
                &self.device,
                n_cells.div_ceil(GROUP).max(1) * GROUP,
                Some(GROUP),
                "the Jacobian diagonal kernel",
            )?;
        self.last = Run {
            events: vec![fill, event],
            launch: None,
            facets: Vec::new(),
        };
        Ok(())
    }
}
