//! [`HostBuffer`]: the host memory that MPI messages are sent from and
//! received into — plain memory for host vectors, pinned host memory
//! ([`PinnedHost`]: page-locked on NVIDIA, DMA without a staging copy) for
//! device vectors — reused from exchange to exchange, with the transfers
//! between it and a vector's entries.
//!
//! Reused, because a fresh `Vec` per transfer costs its page faults and a
//! pageable transfer the driver's staging copy: on an H100 host the device
//! sat idle 0.93 ms around each 1.2 MB pageable download and upload of the
//! agglomerated multigrid level (BENCHMARKS.md, session 13, call G).

use std::ops::Range;
use std::sync::Arc;

use femquad::backend::Vector;
use femquad::opencl::{Device, PinnedHost};
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

/// Host memory of messages: plain for host vectors, pinned ([`PinnedHost`])
/// for device vectors, which the device's transfer queue reads and writes
/// without the host waiting.
pub(crate) enum HostBuffer<R: Real> {
    /// Host vectors' staging.
    Plain(Vec<R>),
    /// Device vectors' staging.
    Pinned(PinnedHost<R>),
}

impl<R: Real> HostBuffer<R> {
    /// `len` zeros, where transfers to and from the vectors of `device`
    /// are direct: pinned memory of the device, plain memory for host
    /// vectors (`None`).
    ///
    /// # Errors
    /// The device's allocation or mapping error.
    pub(crate) fn new(device: Option<&Arc<Device>>, len: usize) -> Result<Self> {
        Ok(match device {
            None => HostBuffer::Plain(vec![R::ZERO; len]),
            Some(device) => HostBuffer::Pinned(device.pinned_host(len)?),
        })
    }

    /// The number of values.
    pub(crate) fn len(&self) -> usize {
        match self {
            HostBuffer::Plain(v) => v.len(),
            HostBuffer::Pinned(p) => p.len(),
        }
    }

    /// Waits for the device's transfers in flight that use the memory.
    ///
    /// # Errors
    /// A transfer's failure.
    pub(crate) fn wait(&mut self) -> Result<()> {
        match self {
            HostBuffer::Plain(_) => Ok(()),
            HostBuffer::Pinned(p) => p.wait(),
        }
    }

    /// The host's view, after the transfers in flight ([`HostBuffer::wait`]:
    /// no OpenCL call once waited for).
    ///
    /// # Errors
    /// Those of [`HostBuffer::wait`].
    pub(crate) fn host(&mut self) -> Result<&mut [R]> {
        match self {
            HostBuffer::Plain(v) => Ok(v),
            HostBuffer::Pinned(p) => p.host(),
        }
    }

    /// The pinned memory, for a device vector's transfers.
    ///
    /// # Errors
    /// [`Error::Internal`] for plain memory (a host vector's staging).
    pub(crate) fn pinned(&mut self) -> Result<&mut PinnedHost<R>> {
        match self {
            HostBuffer::Pinned(p) => Ok(p),
            HostBuffer::Plain(_) => Err(Error::internal(
                "a device vector's staging has no pinned host memory",
            )),
        }
    }

    /// `self[..entries.len()] ← v[entries]`, after every command enqueued
    /// on `v`'s device before (a compute-queue marker), and waited for: the
    /// host view holds the values on return. On a device one read on the
    /// transfer queue from the pinned memory.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `entries` past the end of `v` or of
    /// this buffer; [`Error::Internal`] for a buffer of the other kind than
    /// `v` (see [`HostBuffer::new`]); device errors.
    pub(crate) fn download(&mut self, v: &Vector<R>, entries: Range<usize>) -> Result<()> {
        let to = 0..entries.len();
        self.check("entries", v, &entries)?;
        match (v, self) {
            (Vector::Host(v), HostBuffer::Plain(h)) => {
                h[to].copy_from_slice(&v[entries]);
                Ok(())
            }
            (Vector::Device(d), HostBuffer::Pinned(p)) => {
                let marker = d.device().compute_marker()?;
                d.read_range_after(entries.start, p, to, &[&marker])?;
                p.wait()
            }
            _ => Err(mismatch()),
        }
    }

    /// `v[entries] ← self[..entries.len()]`: on a device one write on the
    /// transfer queue after every command enqueued on the compute queue
    /// before, followed by a compute-queue barrier that waits for it (the
    /// commands enqueued after read the new values); the host may rewrite
    /// this buffer once [`HostBuffer::host`] has waited for the write.
    ///
    /// # Errors
    /// As [`HostBuffer::download`].
    pub(crate) fn upload(&mut self, v: &mut Vector<R>, entries: Range<usize>) -> Result<()> {
        let from = 0..entries.len();
        self.check("entries", v, &entries)?;
        match (v, self) {
            (Vector::Host(v), HostBuffer::Plain(h)) => {
                v[entries].copy_from_slice(&h[from]);
                Ok(())
            }
            (Vector::Device(d), HostBuffer::Pinned(p)) => {
                let device = d.device().clone();
                let marker = device.compute_marker()?;
                let written = d.write_range_after(entries.start, p, from, &[&marker])?;
                device.compute_waits_for(&[&written]).map(drop)
            }
            _ => Err(mismatch()),
        }
    }

    /// Checks that `entries` lie in `v` and fit this buffer.
    fn check(&self, name: &'static str, v: &Vector<R>, entries: &Range<usize>) -> Result<()> {
        if entries.start <= entries.end && entries.end <= v.len() && entries.len() <= self.len() {
            Ok(())
        } else {
            Err(Error::arg(
                name,
                format!(
                    "{}..{} for a vector of {} entries and a host buffer of {}",
                    entries.start,
                    entries.end,
                    v.len(),
                    self.len()
                ),
            ))
        }
    }
}

fn mismatch() -> Error {
    Error::internal("a host vector staged in pinned memory, or a device vector in plain memory")
}
