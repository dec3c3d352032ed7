//! [`DeviceIndices`], a `u32` index set on the device, and the index
//! operations of [`DeviceVector`]: set and copy at indices, gather, scatter.

use std::sync::Arc;

use opencl3::memory::Buffer;

use super::program::{Launch, index_groups};
use super::{DeviceVector, check_len, device_label};
use crate::opencl::context::{Device, Transfer};
use crate::{Error, Real, Result};

/// A set of `u32` indices on a device (e.g. the Dirichlet dofs, the free
/// dofs, a multigrid injection), for the index operations of
/// [`DeviceVector`]. What the host needs to check an operation without
/// reading the device is kept at upload: the bound `max + 1` and whether the
/// indices are distinct.
pub struct DeviceIndices {
    device: Arc<Device>,
    buffer: Buffer<u32>,
    len: usize,
    bound: usize,
    distinct: bool,
}

impl std::fmt::Debug for DeviceIndices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceIndices")
            .field("len", &self.len)
            .field("bound", &self.bound)
            .field("distinct", &self.distinct)
            .finish()
    }
}

impl DeviceIndices {
    /// Uploads `indices` (an array transfer).
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`].
    pub fn from_host(device: &Arc<Device>, indices: &[u32]) -> Result<Self> {
        let mut buffer = device.alloc::<u32>(indices.len(), "index set")?;
        device.write(&mut buffer, indices, Transfer::Vector, "index set")?;
        let bound = indices.iter().max().map_or(0, |&m| m as usize + 1);
        let mut sorted = indices.to_vec();
        sorted.sort_unstable();
        let distinct = sorted.windows(2).all(|w| w[0] != w[1]);
        Ok(DeviceIndices {
            device: device.clone(),
            buffer,
            len: indices.len(),
            bound,
            distinct,
        })
    }

    /// Number of indices.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no indices.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `max + 1` of the indices (0 if there are none): vectors indexed by
    /// them need at least this many entries.
    pub fn bound(&self) -> usize {
        self.bound
    }

    /// True if no index repeats (required by [`DeviceVector::scatter`]).
    pub fn distinct(&self) -> bool {
        self.distinct
    }

    /// The device holding the indices.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The device buffer (at least one value long).
    pub fn buffer(&self) -> &Buffer<u32> {
        &self.buffer
    }
}

impl<R: Real> DeviceVector<R> {
    /// Checks that `indices` live on this vector's device and index a
    /// vector of `len` entries.
    fn check_indices(&self, indices: &DeviceIndices, len: usize, of: &str) -> Result<()> {
        if !Arc::ptr_eq(self.device(), indices.device()) {
            return Err(Error::arg(
                "indices",
                format!(
                    "`indices` are on {} but the vector on {}",
                    device_label(indices.device()),
                    device_label(self.device())
                ),
            ));
        }
        if indices.bound() > len {
            return Err(Error::arg(
                "indices",
                format!(
                    "index {} is out of range for {of} of {len} entries",
                    indices.bound() - 1
                ),
            ));
        }
        Ok(())
    }

    /// `v[idx[k]] ← value` for every index (this vector is `v`), e.g. the
    /// Dirichlet values of constant `value`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `indices` if an index is out of
    /// range or they are on another device.
    pub fn set_at(&mut self, indices: &DeviceIndices, value: f64) -> Result<()> {
        self.check_indices(indices, self.len, "the vector")?;
        let state = self.program.lock();
        Launch::new(&state.kernels.set_at)
            .mem(&self.buffer)?
            .mem(indices.buffer())?
            .value(indices.len() as u64)?
            .value(R::from_f64(value))?
            .run(self.device(), index_groups(indices.len()), "set at indices")
    }

    /// `v[idx[k]] ← src[idx[k]]` for every index (this vector is `v`), e.g.
    /// copying the Dirichlet values into an iterate.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `src` if its length or device
    /// differ, or `indices` if an index is out of range.
    pub fn copy_at(&mut self, indices: &DeviceIndices, src: &Self) -> Result<()> {
        self.check_operand("src", src)?;
        self.check_indices(indices, self.len, "the vector")?;
        let state = self.program.lock();
        Launch::new(&state.kernels.copy_at)
            .mem(&self.buffer)?
            .mem(&src.buffer)?
            .mem(indices.buffer())?
            .value(indices.len() as u64)?
            .run(
                self.device(),
                index_groups(indices.len()),
                "copy at indices",
            )
    }

    /// Gather: `v[k] ← src[idx[k]]` (this vector is `v`, as long as
    /// `indices`; `src` any length covering them), e.g. restricting a full
    /// vector to the free dofs.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `indices` if this vector's length
    /// differs from theirs or an index is out of range for `src`, or `src` if
    /// it is on another device.
    pub fn gather(&mut self, src: &Self, indices: &DeviceIndices) -> Result<()> {
        self.check_device("src", src.device())?;
        check_len("indices", indices.len(), self.len)?;
        self.check_indices(indices, src.len, "`src`")?;
        let state = self.program.lock();
        Launch::new(&state.kernels.gather)
            .mem(&self.buffer)?
            .mem(&src.buffer)?
            .mem(indices.buffer())?
            .value(indices.len() as u64)?
            .run(self.device(), index_groups(indices.len()), "gather")
    }

    /// Scatter: `v[idx[k]] ← src[k]` (this vector is `v`; `src` as long as
    /// `indices`), e.g. extending free values into a full vector. The
    /// indices must be distinct (otherwise which write wins would depend on
    /// scheduling).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `src` if its length differs from
    /// the indices' or its device from this vector's, or `indices` if an
    /// index is out of range or repeats.
    pub fn scatter(&mut self, indices: &DeviceIndices, src: &Self) -> Result<()> {
        self.check_device("src", src.device())?;
        check_len("src", src.len, indices.len())?;
        self.check_indices(indices, self.len, "the vector")?;
        if !indices.distinct() {
            return Err(Error::arg(
                "indices",
                "a scatter needs distinct indices (some index repeats)",
            ));
        }
        let state = self.program.lock();
        Launch::new(&state.kernels.scatter)
            .mem(&self.buffer)?
            .mem(&src.buffer)?
            .mem(indices.buffer())?
            .value(indices.len() as u64)?
            .run(self.device(), index_groups(indices.len()), "scatter")
    }

    /// Scatter-add: `v[idx[k]] ← v[idx[k]] + src[from + k]` for every `k`
    /// (this vector is `v`), e.g. contributions received for some entries
    /// added to them: one launch where a gather, an addition and a scatter
    /// were three, with the same rounding (one addition per entry). The
    /// indices must be distinct.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `src` if it is shorter than
    /// `from + indices.len()` or on another device, or `indices` if an
    /// index is out of range or repeats.
    pub fn scatter_add(&mut self, indices: &DeviceIndices, src: &Self, from: usize) -> Result<()> {
        self.check_device("src", src.device())?;
        if from
            .checked_add(indices.len())
            .is_none_or(|end| end > src.len)
        {
            return Err(Error::arg(
                "src",
                format!(
                    "entries {from}..{from}+{} pass the end of a vector of {} entries",
                    indices.len(),
                    src.len
                ),
            ));
        }
        self.check_indices(indices, self.len, "the vector")?;
        if !indices.distinct() {
            return Err(Error::arg(
                "indices",
                "a scatter-add needs distinct indices (some index repeats)",
            ));
        }
        let state = self.program.lock();
        Launch::new(&state.kernels.scatter_add)
            .mem(&self.buffer)?
            .mem(&src.buffer)?
            .mem(indices.buffer())?
            .value(from as u64)?
            .value(indices.len() as u64)?
            .run(self.device(), index_groups(indices.len()), "scatter-add")
    }
}
