//! [`DeviceTransfer`]: prolongation, restriction and injection between two
//! nested levels, on the device.

use std::sync::Arc;

use opencl3::memory::Buffer;

use super::MultigridKernels;
use crate::opencl::context::Transfer as Upload;
use crate::opencl::vector::{DeviceVector, Launch, index_groups};
use crate::{Error, Real, Result};

/// The transfer between a coarse level of `n_coarse` nodes and a fine level
/// whose nodes are the coarse ones followed by one midpoint per coarse edge
/// (uniform refinement, or P1 → P2 on one mesh), uploaded once: the edge
/// endpoints (`2·n_edges` indices) and, for the restriction, the edges at
/// each coarse node in CSR form (`n_coarse + 1` offsets, `2·n_edges` edge
/// numbers, increasing per node). See [`crate::multigrid::Transfer`] for the
/// operators and their native twins.
pub struct DeviceTransfer<R: Real> {
    kernels: Arc<MultigridKernels<R>>,
    edges: Buffer<u32>,
    offsets: Buffer<u32>,
    incident: Buffer<u32>,
    n_coarse: usize,
    n_edges: usize,
}

impl<R: Real> std::fmt::Debug for DeviceTransfer<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTransfer")
            .field("n_coarse", &self.n_coarse)
            .field("n_edges", &self.n_edges)
            .field("n_comp", &self.kernels.n_comp())
            .finish()
    }
}

impl<R: Real> DeviceTransfer<R> {
    /// Uploads the transfer's index arrays (three array transfers).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `edges`, `offsets` or `incident` if
    /// their lengths do not fit `n_coarse` nodes and `edges.len()` edges;
    /// [`Error::OutOfDeviceMemory`].
    pub fn new(
        kernels: &Arc<MultigridKernels<R>>,
        n_coarse: usize,
        edges: &[[u32; 2]],
        offsets: &[u32],
        incident: &[u32],
    ) -> Result<Self> {
        let n_edges = edges.len();
        if offsets.len() != n_coarse + 1 {
            return Err(Error::arg(
                "offsets",
                format!(
                    "{} entries for {n_coarse} coarse nodes (expected {})",
                    offsets.len(),
                    n_coarse + 1
                ),
            ));
        }
        if incident.len() != 2 * n_edges {
            return Err(Error::arg(
                "incident",
                format!(
                    "{} entries for {n_edges} edges (expected {})",
                    incident.len(),
                    2 * n_edges
                ),
            ));
        }
        let device = kernels.device();
        let flat: &[u32] = bytemuck::cast_slice(edges);
        let mut e = device.alloc::<u32>(flat.len(), "multigrid transfer edges")?;
        device.write(&mut e, flat, Upload::Vector, "multigrid transfer edges")?;
        let mut o = device.alloc::<u32>(offsets.len(), "multigrid transfer offsets")?;
        device.write(
            &mut o,
            offsets,
            Upload::Vector,
            "multigrid transfer offsets",
        )?;
        let mut i = device.alloc::<u32>(incident.len(), "multigrid transfer incidence")?;
        device.write(
            &mut i,
            incident,
            Upload::Vector,
            "multigrid transfer incidence",
        )?;
        Ok(DeviceTransfer {
            kernels: kernels.clone(),
            edges: e,
            offsets: o,
            incident: i,
            n_coarse,
            n_edges,
        })
    }

    fn n_comp(&self) -> usize {
        self.kernels.n_comp()
    }

    /// Dofs of the coarse level.
    pub fn n_coarse_dofs(&self) -> usize {
        self.n_coarse * self.n_comp()
    }

    /// Dofs of the fine level.
    pub fn n_fine_dofs(&self) -> usize {
        (self.n_coarse + self.n_edges) * self.n_comp()
    }

    fn check(&self, name: &'static str, v: &DeviceVector<R>, want: usize) -> Result<()> {
        if !Arc::ptr_eq(v.device(), self.kernels.device()) {
            return Err(Error::arg(
                name,
                "lives on another device than the transfer's index arrays",
            ));
        }
        if v.len() != want {
            return Err(Error::arg(
                name,
                format!("expected {want} entries, got {}", v.len()),
            ));
        }
        Ok(())
    }

    /// `fine ← fine + P coarse` (one launch).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `fine` or `coarse` for a wrong
    /// length or device.
    pub fn prolong_add(&self, fine: &mut DeviceVector<R>, coarse: &DeviceVector<R>) -> Result<()> {
        self.check("fine", fine, self.n_fine_dofs())?;
        self.check("coarse", coarse, self.n_coarse_dofs())?;
        let k = self.kernels.lock();
        Launch::new(&k.prolong_add)
            .mem(fine.buffer())?
            .mem(coarse.buffer())?
            .mem(&self.edges)?
            .value(self.n_coarse_dofs() as u64)?
            .value(self.n_fine_dofs() as u64)?
            .run(
                self.kernels.device(),
                index_groups(self.n_fine_dofs()),
                "multigrid prolongation",
            )
    }

    /// `coarse ← Pᵀ fine` (one launch).
    ///
    /// # Errors
    /// As [`DeviceTransfer::prolong_add`].
    pub fn restrict(&self, coarse: &mut DeviceVector<R>, fine: &DeviceVector<R>) -> Result<()> {
        self.check("coarse", coarse, self.n_coarse_dofs())?;
        self.check("fine", fine, self.n_fine_dofs())?;
        let k = self.kernels.lock();
        Launch::new(&k.restrict)
            .mem(coarse.buffer())?
            .mem(fine.buffer())?
            .mem(&self.offsets)?
            .mem(&self.incident)?
            .value(self.n_coarse_dofs() as u64)?
            .run(
                self.kernels.device(),
                index_groups(self.n_coarse_dofs()),
                "multigrid restriction",
            )
    }

    /// `coarse ← fine[..n_coarse_dofs]`: injection of a state (one launch).
    ///
    /// # Errors
    /// As [`DeviceTransfer::prolong_add`].
    pub fn inject(&self, coarse: &mut DeviceVector<R>, fine: &DeviceVector<R>) -> Result<()> {
        self.check("coarse", coarse, self.n_coarse_dofs())?;
        self.check("fine", fine, self.n_fine_dofs())?;
        let k = self.kernels.lock();
        Launch::new(&k.inject)
            .mem(coarse.buffer())?
            .mem(fine.buffer())?
            .value(self.n_coarse_dofs() as u64)?
            .run(
                self.kernels.device(),
                index_groups(self.n_coarse_dofs()),
                "multigrid injection",
            )
    }
}
