//! The device mesh data of one space (`MeshData`): the cell → node map
//! and the vertex coordinates, uploaded when it is created; the stored
//! geometry (`J⁻¹`, `det J`), the cell coordinates, the node → cell-slot
//! incidence and the work-groups' patches (their node lists, 16-bit local
//! node indices and ownership bits, `patches`), each uploaded on first use
//! and kept.
//! Nothing here depends on a physics: every kernel of the space reads it.
//! [`super::DeviceStats`] counts every transfer.

mod patches;

use std::collections::HashMap;
use std::sync::Arc;

use opencl3::memory::Buffer;

use super::context::{Device, Transfer};
use super::shape::{GeometryMode, KernelShape};
use crate::discretization::Discretization;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

pub(crate) use patches::group_nodes;

/// Cells of padding after the last cell in every per-cell device array:
/// the largest chunk (cells per work-group) a launch may use.
pub const CELL_PADDING: usize = 16384;

/// The patches of one chunk size and capacities on the device
/// (`patches::GroupNodes`): the CSR pair `groupNodeOffsets`/`groupNodes`, the
/// 16-bit local node indices `[cell][b]` (padded), the ownership bits, and
/// how many groups are patches (the others fall back to the global path).
pub(crate) struct Patches {
    pub(crate) offsets: Buffer<u32>,
    pub(crate) nodes: Buffer<u32>,
    pub(crate) local_nodes: Buffer<u16>,
    pub(crate) owned: Buffer<u32>,
    pub(crate) patches: usize,
}

/// The mesh of one space on one device. Per-cell arrays are padded by
/// [`CELL_PADDING`] cells (node 0, `det J = 0`) so that a launch's last,
/// partial chunk needs no bounds checks.
pub(crate) struct MeshData<R> {
    device: Arc<Device>,
    /// The space (a clone shares its mesh, cell → node map and incidence:
    /// the host keeps one copy of the map, the space's).
    space: FunctionSpace,
    /// `[cell][b]`, padded with node 0.
    cell_nodes: Buffer<u32>,
    /// `[vertex][d]`.
    vertices: Buffer<R>,
    /// `J⁻¹` and `det J` per cell, padded with zeros.
    stored_geometry: Option<(Buffer<R>, Buffer<R>)>,
    /// `[cell][v][d]`, padded.
    cell_coords: Option<Buffer<R>>,
    /// Node → cell-slot incidence, `(offsets, slots)`.
    incidence: Option<(Buffer<u32>, Buffer<u32>)>,
    /// Patches per (chunk size, capacities).
    patches: HashMap<(usize, (usize, usize)), Patches>,
}

impl<R: Real> MeshData<R> {
    /// Uploads the cell → node map (padded) and the vertex coordinates of
    /// `space`'s mesh to `device`.
    ///
    /// # Errors
    /// Device allocation and transfer errors.
    pub(crate) fn new(device: Arc<Device>, space: &FunctionSpace) -> Result<Self> {
        let nodes = space.cell_nodes_all();
        let cell_nodes = upload_padded(&device, nodes, space.n_basis(), "cell → node map")?;
        let mesh = space.mesh();
        let coords: Vec<R> = mesh.vertices().iter().map(|&x| R::from_f64(x)).collect();
        let what = "vertex coordinates";
        let mut vertices = device.alloc::<R>(coords.len(), what)?;
        device.write(&mut vertices, &coords, Transfer::Geometry, what)?;
        Ok(MeshData {
            device,
            space: space.clone(),
            cell_nodes,
            vertices,
            stored_geometry: None,
            cell_coords: None,
            incidence: None,
            patches: HashMap::new(),
        })
    }

    /// The space whose mesh this is.
    pub(crate) fn space(&self) -> &FunctionSpace {
        &self.space
    }

    /// The cell → node map, `[cell][b]`, padded with node 0.
    pub(crate) fn cell_nodes(&self) -> &Buffer<u32> {
        &self.cell_nodes
    }

    /// The vertex coordinates, `[vertex][d]`.
    pub(crate) fn vertices(&self) -> &Buffer<R> {
        &self.vertices
    }

    /// `J⁻¹` and `det J` per cell, once uploaded.
    pub(crate) fn stored_geometry(&self) -> Option<(&Buffer<R>, &Buffer<R>)> {
        self.stored_geometry.as_ref().map(|(i, d)| (i, d))
    }

    /// The cell coordinates `[cell][v][d]`, once uploaded.
    pub(crate) fn cell_coords(&self) -> Option<&Buffer<R>> {
        self.cell_coords.as_ref()
    }

    /// The node → cell-slot incidence `(offsets, slots)`, once uploaded.
    pub(crate) fn incidence(&self) -> Option<(&Buffer<u32>, &Buffer<u32>)> {
        self.incidence.as_ref().map(|(o, s)| (o, s))
    }

    /// The patches of chunks of `chunk` cells with capacities `capacity`,
    /// once uploaded.
    pub(crate) fn patches(&self, chunk: usize, capacity: (usize, usize)) -> Option<&Patches> {
        self.patches.get(&(chunk, capacity))
    }

    /// Uploads what a kernel of `shape` reads beyond the node map and the
    /// vertices, once each: `J⁻¹`/`det J` (stored geometry), the cell
    /// coordinates (a kernel reading `x` without gathering nodes, from
    /// `disc`) and its patches.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `physics` if it reads `x` and
    /// `disc` stores no cell coordinates; device memory.
    pub(crate) fn prepare_for(
        &mut self,
        shape: &KernelShape,
        disc: &Discretization<R>,
    ) -> Result<()> {
        if shape.geometry == GeometryMode::Stored {
            self.prepare_stored_geometry(disc)?;
        }
        if shape.reads_x && !shape.reads_nodes() && self.cell_coords.is_none() {
            let coords = disc.geometry().coords().ok_or_else(|| {
                Error::arg(
                    "physics",
                    "reads x but the discretization stores no cell coordinates",
                )
            })?;
            let dim = disc.dim();
            let per_cell = (dim + 1) * dim;
            let buf = upload_padded(&self.device, coords, per_cell, "cell coordinates")?;
            self.cell_coords = Some(buf);
        }
        if shape.patch != (0, 0) {
            self.prepare_patches(shape.chunk, shape.patch)?;
        }
        Ok(())
    }

    /// Uploads `J⁻¹` and `det J` per cell of `disc` (padded with zeros),
    /// once.
    ///
    /// # Errors
    /// Device memory.
    pub(crate) fn prepare_stored_geometry(&mut self, disc: &Discretization<R>) -> Result<()> {
        if self.stored_geometry.is_some() {
            return Ok(());
        }
        let dim = disc.dim();
        let g = disc.geometry();
        let inv = upload_padded(&self.device, g.inv_j(), dim * dim, "inverse Jacobians")?;
        let det = upload_padded(&self.device, g.det_j(), 1, "Jacobian determinants")?;
        self.stored_geometry = Some((inv, det));
        Ok(())
    }

    /// Uploads the node → cell-slot incidence (deterministic assembly),
    /// once.
    ///
    /// # Errors
    /// Those of [`FunctionSpace::node_incidence`]; device memory.
    pub(crate) fn prepare_incidence(&mut self) -> Result<()> {
        if self.incidence.is_some() {
            return Ok(());
        }
        let (offsets, slots) = self.space.node_incidence()?;
        let offsets: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
        let what = "node incidence";
        let mut o = self.device.alloc::<u32>(offsets.len(), what)?;
        let mut s = self.device.alloc::<u32>(slots.len(), what)?;
        self.device
            .write(&mut o, &offsets, Transfer::Geometry, what)?;
        self.device.write(&mut s, slots, Transfer::Geometry, what)?;
        self.incidence = Some((o, s));
        Ok(())
    }

    /// Computes and uploads the patches of chunks of `chunk` cells with
    /// capacities `capacity` (node lists, local node indices, ownership
    /// bits), once.
    ///
    /// # Errors
    /// Those of [`group_nodes`] (our bug); device memory.
    fn prepare_patches(&mut self, chunk: usize, capacity: (usize, usize)) -> Result<()> {
        if self.patches.contains_key(&(chunk, capacity)) {
            return Ok(());
        }
        let p = group_nodes(&self.space, chunk, capacity)?;
        let patches = Patches {
            offsets: self.upload(&p.offsets, "patch node offsets")?,
            nodes: self.upload(&p.nodes, "patch node lists")?,
            local_nodes: self.upload(&p.local, "local node indices")?,
            owned: self.upload(&p.owned, "patch node ownership")?,
            patches: p.patches,
        };
        self.patches.insert((chunk, capacity), patches);
        Ok(())
    }

    /// A new device buffer holding `data` (at least one value).
    fn upload<T: bytemuck::Pod>(&self, data: &[T], what: &str) -> Result<Buffer<T>> {
        let mut buffer = self.device.alloc::<T>(data.len().max(1), what)?;
        self.device
            .write(&mut buffer, data, Transfer::Geometry, what)?;
        Ok(buffer)
    }

    /// Puts `patches` in place of the patches of chunks of `chunk` cells
    /// with capacities `capacity` (tests: an instrumented buffer).
    #[cfg(test)]
    pub(crate) fn replace_patches(
        &mut self,
        chunk: usize,
        capacity: (usize, usize),
        patches: Patches,
    ) {
        self.patches.insert((chunk, capacity), patches);
    }
}

/// A new device buffer holding the per-cell array `data` (`per_cell`
/// values per cell) followed by [`CELL_PADDING`] cells of zeros: the
/// array, then the padding, written apart (no padded host copy).
///
/// # Errors
/// Device allocation and transfer errors.
fn upload_padded<T: bytemuck::Pod>(
    device: &Device,
    data: &[T],
    per_cell: usize,
    what: &str,
) -> Result<Buffer<T>> {
    let padding = vec![T::zeroed(); CELL_PADDING * per_cell];
    let mut buffer = device.alloc::<T>(data.len() + padding.len(), what)?;
    device.write(&mut buffer, data, Transfer::Geometry, what)?;
    device.write_at(&mut buffer, data.len(), &padding, Transfer::Geometry, what)?;
    Ok(buffer)
}
