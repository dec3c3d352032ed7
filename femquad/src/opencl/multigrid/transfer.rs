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
/// node). See `multigrid::Transfer` for the operators.
pub struct DeviceTransfer {
    pub(super) device: Arc<Device>,
    pub(super) edges: Buffer<u32>,
    pub(super) offsets: Buffer<u32>,
    pub(super) incident: Buffer<u32>,
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
    /// Uploads `graph`'s index arrays to `device` (three array transfers).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `offsets` or `incident` if their
    /// lengths do not fit `graph`'s nodes and edges;
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
        let upload = |data: &[u32], what: &'static str| -> Result<Buffer<u32>> {
            let mut b = device.alloc::<u32>(data.len(), what)?;
            device.write(&mut b, data, Upload::Vector, what)?;
            Ok(b)
        };
        Ok(DeviceTransfer {
            device: device.clone(),
            edges: upload(
                bytemuck::cast_slice(&graph.edges),
                "multigrid transfer edges",
            )?,
            offsets: upload(&graph.offsets, "multigrid transfer offsets")?,
            incident: upload(&graph.incident, "multigrid transfer incidence")?,
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
