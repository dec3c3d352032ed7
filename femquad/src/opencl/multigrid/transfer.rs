//! [`DeviceTransfer`]: the index arrays of a transfer between two nested
//! levels in device memory; the launches are [`MultigridOps`]'s
//! prolongation, restriction and injection (in `ops.rs`).
//!
//! [`MultigridOps`]: crate::seam::MultigridOps

use std::sync::Arc;

use opencl3::memory::Buffer;

use crate::opencl::context::{Device, Transfer as Upload};
use crate::seam::TransferGraph;
use crate::{Error, Result};

/// A [`TransferGraph`] uploaded once: the edge endpoints (`2·n_edges`
/// indices) and, for the restriction, the edges at each coarse node in CSR
/// form (`n_coarse + 1` offsets, `2·n_edges` edge numbers, increasing per
/// node), and the masks of the fixed coarse and fine dofs (a byte per dof).
/// See `multigrid::Transfer` for the operators.
pub struct DeviceTransfer {
    pub(super) device: Arc<Device>,
    pub(super) edges: Buffer<u32>,
    pub(super) offsets: Buffer<u32>,
    pub(super) incident: Buffer<u32>,
    pub(super) coarse_fixed: Buffer<u8>,
    pub(super) fine_fixed: Buffer<u8>,
    pub(super) n_coarse: usize,
    pub(super) n_edges: usize,
    pub(super) n_comp: usize,
}

impl std::fmt::Debug for DeviceTransfer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceTransfer")
            .field("n_coarse", &self.n_coarse)
            .field("n_edges", &self.n_edges)
            .field("n_comp", &self.n_comp)
            .finish()
    }
}

impl DeviceTransfer {
    /// Uploads `graph`'s index arrays and masks to `device` (five array
    /// transfers).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `offsets`, `incident`,
    /// `coarse_fixed` or `fine_fixed` if their lengths do not fit `graph`'s
    /// nodes, edges and dofs;
    /// [`Error::OutOfDeviceMemory`].
    pub(super) fn new(device: &Arc<Device>, graph: &TransferGraph) -> Result<Self> {
        let n_edges = graph.edges.len();
        let n_coarse = graph.n_coarse;
        if graph.offsets.len() != n_coarse + 1 {
            return Err(Error::arg(
                "offsets",
                format!(
                    "{} entries for {n_coarse} coarse nodes (expected {})",
                    graph.offsets.len(),
                    n_coarse + 1
                ),
            ));
        }
        if graph.incident.len() != 2 * n_edges {
            return Err(Error::arg(
                "incident",
                format!(
                    "{} entries for {n_edges} edges (expected {})",
                    graph.incident.len(),
                    2 * n_edges
                ),
            ));
        }
        for (name, len, want) in [
            (
                "coarse_fixed",
                graph.coarse_fixed.len(),
                graph.n_coarse_dofs(),
            ),
            ("fine_fixed", graph.fine_fixed.len(), graph.n_fine_dofs()),
        ] {
            if len != want {
                return Err(Error::arg(name, format!("{len} entries for {want} dofs")));
            }
        }
        fn upload<T: bytemuck::Pod>(
            device: &Device,
            data: &[T],
            what: &'static str,
        ) -> Result<Buffer<T>> {
            let mut b = device.alloc::<T>(data.len(), what)?;
            device.write(&mut b, data, Upload::Vector, what)?;
            Ok(b)
        }
        Ok(DeviceTransfer {
            device: device.clone(),
            edges: upload(
                device,
                bytemuck::cast_slice(&graph.edges),
                "multigrid transfer edges",
            )?,
            offsets: upload(device, &graph.offsets, "multigrid transfer offsets")?,
            incident: upload(device, &graph.incident, "multigrid transfer incidence")?,
            coarse_fixed: upload(device, &graph.coarse_fixed, "multigrid coarse fixed dofs")?,
            fine_fixed: upload(device, &graph.fine_fixed, "multigrid fine fixed dofs")?,
            n_coarse,
            n_edges,
            n_comp: graph.n_comp,
        })
    }

    /// Dofs of the coarse level.
    pub fn n_coarse_dofs(&self) -> usize {
        self.n_coarse * self.n_comp
    }

    /// Dofs of the fine level.
    pub fn n_fine_dofs(&self) -> usize {
        (self.n_coarse + self.n_edges) * self.n_comp
    }
}
