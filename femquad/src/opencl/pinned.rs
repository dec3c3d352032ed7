//! [`PinnedHost`]: host memory that a device copies to and from directly —
//! an OpenCL buffer allocated host-visible (`CL_MEM_ALLOC_HOST_PTR`) and
//! mapped once, its mapped pointer the host's view. On NVIDIA's OpenCL that
//! memory is page-locked, so a transfer between it and a device buffer is
//! one DMA without a bounce through the driver's staging, and may run while
//! the host goes on (a non-blocking transfer); PoCL supports it as ordinary
//! memory.
//!
//! # Transfers in flight
//! The range transfers of a `DeviceVector` (`read_range_after`,
//! `write_range_after`) are non-blocking: the device reads or writes the
//! memory after they return.
//! Each records its event in the `PinnedHost`, and the host's view
//! ([`PinnedHost::host`]) first waits for every recorded transfer that has
//! not completed — one `clWaitForEvents` for all of them — so the host
//! never reads values a download has not written yet, nor overwrites
//! values an upload has not read yet. (Hence no `Deref`: a view must be
//! able to fail, with the device's error.)

use std::ops::Range;
use std::ptr::NonNull;
use std::sync::Arc;

use bytemuck::Pod;
use opencl3::error_codes::ClError;
use opencl3::event::{CL_COMPLETE, retain_event, wait_for_events};
use opencl3::memory::{
    Buffer, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE, ClMem,
};
use opencl3::types::{CL_BLOCKING, CL_NON_BLOCKING, cl_event};

use super::context::{Device, Event};
use crate::{Error, Result};

/// `len` values of host memory the device copies to and from directly (see
/// the [module documentation](self)), unmapped and released on drop.
pub struct PinnedHost<T: Pod> {
    device: Arc<Device>,
    /// The host-visible buffer; mapped for the whole life of the value.
    buffer: Buffer<T>,
    /// The mapped pointer: `len` values (at least one allocated).
    ptr: NonNull<T>,
    len: usize,
    /// The events of the transfers that read or write the memory, not yet
    /// waited for.
    pending: Vec<Event>,
}

impl<T: Pod> std::fmt::Debug for PinnedHost<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedHost")
            .field("len", &self.len)
            .field("pending", &self.pending.len())
            .finish()
    }
}

impl Device {
    /// `len` zeros of host memory this device copies to and from directly
    /// ([`PinnedHost`]): a buffer allocated `CL_MEM_ALLOC_HOST_PTR` and
    /// mapped for reading and writing (a blocking map on the transfer
    /// queue), once.
    ///
    /// # Errors
    /// [`Error::OutOfDeviceMemory`] naming the pinned host memory if the
    /// allocation fails; the map's failure naming `clEnqueueMapBuffer`;
    /// [`Error::DeviceLost`].
    pub fn pinned_host<T: Pod>(self: &Arc<Self>, len: usize) -> Result<PinnedHost<T>> {
        const WHAT: &str = "pinned host memory (CL_MEM_ALLOC_HOST_PTR)";
        self.check_alive()?;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        // SAFETY: no host pointer is passed; the size is non-zero.
        let buffer = unsafe {
            Buffer::<T>::create(
                self.cl_context(),
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                len.max(1),
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| self.failure("clCreateBuffer", WHAT, bytes, e))?;
        let mut mapped = std::ptr::null_mut();
        // SAFETY: a blocking map of the whole live buffer; the pointer is
        // written by the call.
        unsafe {
            self.transfer_queue().enqueue_map_buffer(
                &buffer,
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                bytes,
                &mut mapped,
                &[],
            )
        }
        .map_err(|e| self.failure("clEnqueueMapBuffer", WHAT, bytes, e))?;
        let ptr = NonNull::new(mapped.cast::<T>()).ok_or_else(|| {
            Error::internal("clEnqueueMapBuffer returned a null pointer for pinned host memory")
        })?;
        if !(ptr.as_ptr() as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(Error::internal(
                "clEnqueueMapBuffer returned a pointer not aligned for the pinned values",
            ));
        }
        let mut pinned = PinnedHost {
            device: self.clone(),
            buffer,
            ptr,
            len,
            pending: Vec::new(),
        };
        pinned.host()?.fill(T::zeroed());
        Ok(pinned)
    }
}

/// The range transfers between device buffers and pinned memory, on the
/// transfer queue ([`Device::transfer_queue`]), for the range transfers
/// of a `DeviceVector`.
impl Device {
    /// Reads `to.len()` values of `buffer` from element `offset` into the
    /// values `to` of the pinned host memory `data` on the transfer queue,
    /// after the commands of `after` — non-blocking: the read is recorded
    /// in `data` ([`PinnedHost::host`] waits for it). An array transfer in
    /// [`DeviceStats`](super::DeviceStats). Returns the read's event.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `name` for a range `to` past the
    /// end of `data`; [`Error::InvalidArgument`] if `data` is another
    /// device's; the read's failure naming `clEnqueueReadBuffer`.
    pub(crate) fn transfer_read<T: Pod>(
        &self,
        buffer: &Buffer<T>,
        offset: usize,
        (name, data, to): (&'static str, &mut PinnedHost<T>, Range<usize>),
        after: &[&Event],
        what: &str,
    ) -> Result<Event> {
        self.check_alive()?;
        self.check_pinned(name, data)?;
        let list: Vec<_> = after.iter().map(|e| e.get()).collect();
        let host = data.transfer_slice(name, to)?;
        let bytes = std::mem::size_of_val(host);
        if host.is_empty() {
            return self.transfer_marker(&list, what);
        }
        // SAFETY: a non-blocking read into pinned memory that lives as long
        // as `data`, recorded in `data` below, so that the host reads it
        // only after waiting for the read (and `data`'s drop waits for it);
        // callers keep offset + len within the buffer; the events are live.
        let event = unsafe {
            self.transfer_queue().enqueue_read_buffer(
                buffer,
                CL_NON_BLOCKING,
                offset * std::mem::size_of::<T>(),
                host,
                &list,
            )
        }
        .map_err(|e| self.failure("clEnqueueReadBuffer", what, bytes, e))?;
        data.in_flight(&event)?;
        self.count_read(bytes);
        Ok(event)
    }

    /// Writes the values `from` of the pinned host memory `data` to
    /// `buffer` from element `offset` on the transfer queue, after the
    /// commands of `after` — non-blocking: the write is recorded in `data`
    /// ([`PinnedHost::host`] waits for it before the host may overwrite
    /// the values), and commands on the compute queue that read the
    /// device's copy must wait for the returned event
    /// ([`Device::compute_waits_for`]). A vector transfer in
    /// [`DeviceStats`](super::DeviceStats).
    ///
    /// # Errors
    /// As [`Device::transfer_read`], naming `clEnqueueWriteBuffer`.
    pub(crate) fn transfer_write<T: Pod>(
        &self,
        buffer: &mut Buffer<T>,
        offset: usize,
        (name, data, from): (&'static str, &mut PinnedHost<T>, Range<usize>),
        after: &[&Event],
        what: &str,
    ) -> Result<Event> {
        self.check_alive()?;
        self.check_pinned(name, data)?;
        let list: Vec<_> = after.iter().map(|e| e.get()).collect();
        let host = data.transfer_slice(name, from)?;
        let bytes = std::mem::size_of_val(host);
        if host.is_empty() {
            return self.transfer_marker(&list, what);
        }
        // SAFETY: a non-blocking write from pinned memory that lives as
        // long as `data`, recorded in `data` below, so that the host
        // overwrites it only after waiting for the write; callers keep
        // offset + len within the buffer; the events are live.
        let event = unsafe {
            self.transfer_queue().enqueue_write_buffer(
                buffer,
                CL_NON_BLOCKING,
                offset * std::mem::size_of::<T>(),
                host,
                &list,
            )
        }
        .map_err(|e| self.failure("clEnqueueWriteBuffer", what, bytes, e))?;
        data.in_flight(&event)?;
        self.count_vector_write(bytes);
        Ok(event)
    }

    /// Checks that the pinned memory `data` is this device's (its
    /// context's).
    fn check_pinned<T: Pod>(&self, name: &'static str, data: &PinnedHost<T>) -> Result<()> {
        if std::ptr::eq(data.device().as_ref(), self) {
            Ok(())
        } else {
            Err(Error::arg(
                name,
                format!(
                    "is pinned host memory of the device {}, the transfer is on {}",
                    data.device().info().name,
                    self.info().name
                ),
            ))
        }
    }
}

impl<T: Pod> PinnedHost<T> {
    /// The number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device whose transfers use this memory.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Waits for every transfer in flight that uses this memory (one
    /// `clWaitForEvents` for those not complete yet; no OpenCL call if none
    /// was recorded since the last wait).
    ///
    /// # Errors
    /// A transfer's failure, naming `clWaitForEvents`.
    pub fn wait(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let open: Vec<cl_event> = self
            .pending
            .iter()
            .filter(|e| {
                !e.command_execution_status()
                    .is_ok_and(|s| s.0 == CL_COMPLETE)
            })
            .map(|e| e.get())
            .collect();
        if !open.is_empty() {
            self.device.check_alive()?;
            wait_for_events(&open).map_err(|e| {
                self.device
                    .failure("clWaitForEvents", "pinned host transfers", 0, ClError(e))
            })?;
        }
        self.pending.clear();
        Ok(())
    }

    /// The host's view of the values, once every transfer in flight that
    /// uses them is complete ([`PinnedHost::wait`]).
    ///
    /// # Errors
    /// Those of [`PinnedHost::wait`].
    pub fn host(&mut self) -> Result<&mut [T]> {
        self.wait()?;
        // SAFETY: the mapped pointer holds `len` initialised values (zeroed
        // at creation; Pod) for the life of `self`; no transfer uses them
        // (waited for), and none can start while the view borrows `self`.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) })
    }

    /// The values `range` for a transfer to or from the device, which the
    /// caller records with [`PinnedHost::in_flight`] at once; the host must
    /// not read or write them until waited for.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `name` for a range past the end.
    pub(crate) fn transfer_slice(
        &mut self,
        name: &'static str,
        range: std::ops::Range<usize>,
    ) -> Result<&mut [T]> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::arg(
                name,
                format!(
                    "values {}..{} pass the end of pinned host memory of {} values",
                    range.start, range.end, self.len
                ),
            ));
        }
        // SAFETY: `range` lies within the `len` mapped values (checked);
        // the slice lives for the borrow of `self`.
        Ok(unsafe {
            std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(range.start), range.len())
        })
    }

    /// Records a transfer in flight that uses the memory (its event).
    pub(crate) fn in_flight(&mut self, event: &Event) -> Result<()> {
        let copy = event.get();
        // SAFETY: retaining a live event (borrowed) once; the `Event` made
        // from it releases that reference on drop.
        unsafe { retain_event(copy) }.map_err(|e| {
            self.device
                .failure("clRetainEvent", "pinned host transfers", 0, ClError(e))
        })?;
        self.pending.push(Event::new(copy));
        Ok(())
    }
}

impl<T: Pod> Drop for PinnedHost<T> {
    /// Waits for the transfers in flight (errors ignored: the context is
    /// lost then, and nothing runs any more), then unmaps the memory (on
    /// the transfer queue, waited for); the buffer is released after.
    fn drop(&mut self) {
        if self.device.check_alive().is_err() {
            return;
        }
        let _ = self.wait();
        // SAFETY: the pointer is the buffer's mapping, unmapped once here.
        let unmapped = unsafe {
            self.device.transfer_queue().enqueue_unmap_mem_object(
                self.buffer.get(),
                self.ptr.as_ptr().cast(),
                &[],
            )
        };
        if let Ok(event) = unmapped {
            let _ = event.wait();
        }
    }
}
