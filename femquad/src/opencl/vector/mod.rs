//! Device-resident vectors: [`DeviceVector`] (`f32` or `f64` entries in a
//! device buffer) with the BLAS-1 operations of the Krylov solvers as device
//! kernels, and [`DeviceIndices`] (a `u32` index set) for the index kernels
//! of Dirichlet conditions and multigrid transfers.
//!
//! Nothing here moves an array between host and device except the explicit
//! transfers [`DeviceVector::from_host`], [`DeviceVector::upload`],
//! [`DeviceVector::to_host`], [`DeviceVector::read_into`] and the
//! transfers of a range on the device's transfer queue,
//! [`DeviceVector::read_range_after`] and
//! [`DeviceVector::write_range_after`] (counted as array bytes in
//! [`DeviceStats`](super::DeviceStats)). Elementwise
//! operations are enqueued without waiting; a reduction (`dot`, `norm2`,
//! `norm_inf`, `dots`, `first_non_finite`) waits for its result and reads
//! back only that result: one *scalar read* (a few bytes) per call.
//!
//! # Kernels
//! The kernels (template `kernels/vector.cl`, built through
//! [`Device::program`] so the device's program cache serves every vector of
//! one precision) run work-groups of [`WG`] = 256 work-items:
//!
//! * **Elementwise** (`fill`, `copy_from`, `scale`, `axpy`, `axpby`,
//!   `pointwise_mult`, `maxpy`): work-item `b` owns the `VW` entries from
//!   `VW·b` and moves them as one aligned 16-byte vector (`float4` in `f32`,
//!   `double2` in `f64`, [`vector_width`]; a `cl_mem` buffer is aligned to
//!   at least 128 bytes), so a work-group's accesses are coalesced and wide
//!   (the design notes measured 2713 GB/s for one float per work-item
//!   against 4243 GB/s for `float4` on the H200). At 2²³ entries that is
//!   8192 (f32) or 16384 (f64) work-groups of 256. FP contraction is off,
//!   so each `y + αx` rounds like the host's and elementwise results are
//!   bitwise those of `Vec<R>`.
//! * **Reductions** in two passes with a fixed order. Pass 1 runs
//!   `G = clamp(⌈⌈n/VW⌉/256⌉, 1, 1024)` work-groups ([`reduction_groups`]: a
//!   function of `n` and the precision only); work-item `t` of group `g`
//!   accumulates the blocks
//!   `g·256 + t + k·G·256`, `k = 0, 1, …` in order, then a fixed binary tree
//!   in local memory combines the group's 256 values into one partial.
//!   Pass 2, one work-group per result, sums the `G` partials the same way.
//!   Results are therefore bitwise reproducible run to run (but differ in
//!   rounding from the host's block order). Products and sums are
//!   accumulated in `double` whenever the device has fp64 — also for `f32`
//!   vectors — and in `float` only on devices without it.
//! * **Multi-dot** `w·V_j` for up to 8 vectors per launch (the kernel takes
//!   8 buffer arguments; `w` is read once for all of them), one pass-2
//!   launch for all `m` results and one read of `m` scalars. Each `w·V_j` is
//!   bitwise the single [`DeviceVector::dot`]. **Multi-axpy**
//!   `y ← y + Σ_j α_j x_j` likewise reads and writes `y` once per 8 vectors,
//!   adding the terms in order (bitwise a loop of `axpy`).
//! * **CG's fused update** ([`DeviceVector::cg_update`], `vec_cg_update`):
//!   `x ← x + αp`, `r ← r − αq` (and a Jacobi `z ← d ∘ r`) in the
//!   reduction's `G` work-groups, each block updated and then added to the
//!   partials of `r·r` (and `r·z`) exactly as the multi-dot would read it;
//!   the multi-dot's pass 2 and one read follow.
//! * **Index kernels** one work-item per index.
//!
//! # Measured
//! On an NVIDIA H100 (NVIDIA's OpenCL, 2²⁵ entries, the `measure_vector_bandwidth`
//! test of `femquad/tests/device_vector.rs`; float4 copy kernel 2926 GB/s in the
//! same process): `fill`, `copy_from`, `scale`, `axpy`, `axpby`,
//! `pointwise_mult` and `maxpy` of 8 vectors run at 96–105 % of the copy
//! bandwidth in f32 and f64, `dots` of 8 vectors at 88 % (f32) and 100 % (f64).
//! A single reduction costs its kernel plus one round trip of about
//! 40–55 µs (two launches and a blocking read: at 2²⁰ entries every reduction
//! takes that long), which is why the solvers batch their reductions
//! (`dots`) rather than call `dot` per basis vector. Writing `double4` per
//! work-item halved the bandwidth of the store-only `fill` in f64 there;
//! hence 16-byte vectors (`double2`) in f64.

mod fused;
mod indices;
mod ops;
mod program;
mod reduce;

use std::ops::Range;
use std::sync::Arc;

use opencl3::memory::Buffer;

pub use indices::DeviceIndices;
pub use program::{
    BATCH, MAX_GROUPS, VECTOR_TEMPLATE, WG, reduction_groups, vector_source, vector_width,
};
pub(crate) use program::{Launch, index_groups};
use program::{VectorProgram, elementwise_groups};

use super::context::{Device, Event, Transfer};
use super::pinned::PinnedHost;
use crate::{Error, Real, Result};

/// A vector of `len` values of type `R` (`f32` or `f64`) in a buffer on an
/// OpenCL [`Device`], with its operations as device kernels (see the
/// [module documentation](self) for their design).
///
/// Scalars cross the API as `f64` and are rounded to `R` for the kernels
/// (`R::from_f64`), as the host implementation rounds them; reductions
/// return `f64`.
///
/// ```
/// use femquad::opencl::{Device, vector::DeviceVector};
/// let device = Device::from_env()?;
/// let mut y = DeviceVector::from_host(&device, &[1.0f64, 2.0, 3.0])?;
/// let x = DeviceVector::from_host(&device, &[1.0f64, 1.0, 1.0])?;
/// y.axpy(2.0, &x)?; // y ← y + 2x, on the device
/// assert_eq!(y.dot(&x)?, 12.0); // one scalar read
/// assert_eq!(y.to_host()?, vec![3.0, 4.0, 5.0]); // one array read
/// # Ok::<(), femquad::Error>(())
/// ```
pub struct DeviceVector<R: Real> {
    program: Arc<VectorProgram>,
    buffer: Buffer<R>,
    len: usize,
}

impl<R: Real> std::fmt::Debug for DeviceVector<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceVector")
            .field("precision", &R::PRECISION)
            .field("len", &self.len)
            .field("device", &self.device().info().name)
            .finish()
    }
}

/// Checks that the argument `name` has `expected` entries.
pub(crate) fn check_len(name: &'static str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {expected} entries, got {got}"),
        ))
    }
}

/// `device [index] \`name\``, for messages.
pub(crate) fn device_label(device: &Device) -> String {
    format!("device [{}] `{}`", device.info().index, device.info().name)
}

impl<R: Real> DeviceVector<R> {
    fn with_program(program: Arc<VectorProgram>, len: usize) -> Result<Self> {
        let buffer = program
            .device()
            .alloc::<R>(len, &format!("a vector of {len} {}", R::PRECISION))?;
        Ok(DeviceVector {
            program,
            buffer,
            len,
        })
    }

    /// A vector of `len` zeros on `device`.
    ///
    /// # Errors
    /// [`Error::NoFp64`] for `f64` on a device without double precision,
    /// [`Error::OutOfDeviceMemory`], and the build errors of the vector
    /// kernels.
    pub fn zeros(device: &Arc<Device>, len: usize) -> Result<Self> {
        let mut v = Self::with_program(VectorProgram::new::<R>(device)?, len)?;
        v.fill(0.0)?;
        Ok(v)
    }

    /// Uploads `values` to a new vector on `device` (an array transfer).
    ///
    /// # Errors
    /// Those of [`DeviceVector::zeros`].
    pub fn from_host(device: &Arc<Device>, values: &[R]) -> Result<Self> {
        let mut v = Self::with_program(VectorProgram::new::<R>(device)?, values.len())?;
        v.upload(values)?;
        Ok(v)
    }

    /// A vector of zeros of the same length on the same device (sharing the
    /// kernels: no program request).
    pub fn zeros_like(&self) -> Result<Self> {
        let mut v = Self::with_program(self.program.clone(), self.len)?;
        v.fill(0.0)?;
        Ok(v)
    }

    /// Overwrites the vector with `values` (an array transfer, blocking).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `values` does not have `len` entries.
    pub fn upload(&mut self, values: &[R]) -> Result<()> {
        check_len("values", values.len(), self.len)?;
        let device = self.program.device().clone();
        device.write(&mut self.buffer, values, Transfer::Vector, "vector upload")
    }

    /// Downloads the vector (an array transfer; waits for every operation
    /// enqueued before).
    pub fn to_host(&self) -> Result<Vec<R>> {
        let mut out = vec![R::ZERO; self.len];
        self.read_into(&mut out)?;
        Ok(out)
    }

    /// Downloads the vector into `out` (an array transfer).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `out` does not have `len` entries.
    pub fn read_into(&self, out: &mut [R]) -> Result<()> {
        check_len("out", out.len(), self.len)?;
        self.device().read(&self.buffer, out, "vector download")
    }

    /// Reads the entries `offset..offset + to.len()` into the values `to`
    /// of the pinned host memory `out` on the device's transfer queue
    /// ([`Device::transfer_queue`]), after the commands of `after` — not
    /// after the compute queue's commands unless `after` holds them
    /// ([`Device::compute_marker`]). Non-blocking: returns the read's
    /// event at once; the read is recorded in `out`, whose host view
    /// ([`PinnedHost::host`]) waits for it (an array transfer; a DMA from
    /// page-locked memory on NVIDIA).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `out` if a range passes the end of
    /// the vector or of `out`, or `out` is another device's; the read's
    /// failure, naming `clEnqueueReadBuffer`.
    pub fn read_range_after(
        &self,
        offset: usize,
        out: &mut PinnedHost<R>,
        to: Range<usize>,
        after: &[&Event],
    ) -> Result<Event> {
        self.check_range("out", offset, to.len())?;
        self.device().transfer_read(
            &self.buffer,
            offset,
            ("out", out, to),
            after,
            "vector range download",
        )
    }

    /// Writes the values `from` of the pinned host memory `values` to the
    /// entries `offset..offset + from.len()` on the device's transfer
    /// queue, after the commands of `after`. Non-blocking: the write is
    /// recorded in `values`, whose host view ([`PinnedHost::host`]) waits
    /// for it before the host may overwrite them; the device's entries are
    /// written once the returned event completes: a kernel on the compute
    /// queue that reads them must wait for it
    /// ([`Device::compute_waits_for`]). An array transfer.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `values` if a range passes the end
    /// of the vector or of `values`, or `values` is another device's; the
    /// write's failure, naming `clEnqueueWriteBuffer`.
    pub fn write_range_after(
        &mut self,
        offset: usize,
        values: &mut PinnedHost<R>,
        from: Range<usize>,
        after: &[&Event],
    ) -> Result<Event> {
        self.check_range("values", offset, from.len())?;
        let device = self.program.device().clone();
        device.transfer_write(
            &mut self.buffer,
            offset,
            ("values", values, from),
            after,
            "vector range upload",
        )
    }

    /// Checks that the `len` entries from `offset` are the vector's.
    fn check_range(&self, name: &'static str, offset: usize, len: usize) -> Result<()> {
        if offset.checked_add(len).is_some_and(|end| end <= self.len) {
            Ok(())
        } else {
            Err(Error::arg(
                name,
                format!(
                    "entries {offset}..{offset}+{len} pass the end of a vector of {} entries",
                    self.len
                ),
            ))
        }
    }

    /// Reads the entry `index` (one scalar read: meant for diagnostics, such
    /// as reporting the value at [`DeviceVector::first_non_finite`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `index ≥ len`.
    pub fn get(&self, index: usize) -> Result<R> {
        if index >= self.len {
            return Err(Error::arg(
                "index",
                format!(
                    "{index} is out of range for a vector of {} entries",
                    self.len
                ),
            ));
        }
        let mut v = [R::ZERO];
        self.device()
            .read_scalars(&self.buffer, index, &mut v, "vector entry")?;
        Ok(v[0])
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the vector has no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device holding the vector.
    pub fn device(&self) -> &Arc<Device> {
        self.program.device()
    }

    /// The device buffer (at least one value long, also for `len = 0`), for
    /// your own kernels, e.g. an operator applied on the device. Enqueue them
    /// on [`Device::queue`] so they are ordered with femquad's.
    pub fn buffer(&self) -> &Buffer<R> {
        &self.buffer
    }

    /// The device buffer, for kernels that write the vector.
    pub fn buffer_mut(&mut self) -> &mut Buffer<R> {
        &mut self.buffer
    }

    /// Checks that the argument `name` lives on this vector's device.
    fn check_device(&self, name: &'static str, other: &Arc<Device>) -> Result<()> {
        if Arc::ptr_eq(self.device(), other) {
            Ok(())
        } else {
            Err(Error::arg(
                name,
                format!(
                    "`{name}` is on {} but the vector it is combined with is on {} \
                     (a different device or context; transfer explicitly through the host)",
                    device_label(other),
                    device_label(self.device())
                ),
            ))
        }
    }

    /// Checks an operand: same device and length.
    fn check_operand(&self, name: &'static str, x: &Self) -> Result<()> {
        self.check_device(name, x.device())?;
        check_len(name, x.len, self.len)
    }

    /// Launches an elementwise kernel over this vector's entries.
    fn elementwise(
        &self,
        what: &str,
        set: impl FnOnce(&program::Kernels) -> Result<Launch<'_>>,
    ) -> Result<()> {
        let state = self.program.lock();
        set(&state.kernels)?.run(
            self.device(),
            elementwise_groups(self.len, R::PRECISION),
            what,
        )
    }

    /// `y ← x` (this vector is `y`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` if its length or device differ.
    pub fn copy_from(&mut self, x: &Self) -> Result<()> {
        self.check_operand("x", x)?;
        let n = self.len as u64;
        self.elementwise("vector copy", |k| {
            Launch::new(&k.copy)
                .mem(&self.buffer)?
                .mem(&x.buffer)?
                .value(n)
        })
    }

    /// `y_i ← round_R(x_i)` from a vector `x` of either precision (this
    /// vector is `y`): from `f64` to `f32` rounded to nearest, ties to even
    /// (`convert_float4`, the default rounding of OpenCL's conversions to a
    /// floating type; a value beyond `f32::MAX` becomes ±∞, one below the
    /// smallest subnormal ±0), from `f32` to `f64` exact, within one
    /// precision a copy. One elementwise launch (`vec_convert` of this
    /// vector's precision, or `vec_copy`); bitwise what Rust's `as` gives,
    /// and so the host's [`convert`](crate::vector::convert).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` if its length or device
    /// differ; [`Error::NoFp64`] for two precisions on a device without
    /// double precision (there is no `f64` vector there).
    pub fn convert_from<S: Real>(&mut self, x: &DeviceVector<S>) -> Result<()> {
        self.check_device("x", x.device())?;
        check_len("x", x.len, self.len)?;
        let n = self.len as u64;
        let same = S::PRECISION == R::PRECISION;
        let state = self.program.lock();
        let kernel = match (&state.kernels.convert, same) {
            (_, true) => &state.kernels.copy,
            (Some(k), false) => k,
            (None, false) => {
                return Err(Error::NoFp64 {
                    device: self.device().info().name.clone(),
                });
            }
        };
        Launch::new(kernel)
            .mem(&self.buffer)?
            .mem(&x.buffer)?
            .value(n)?
            .run(
                self.device(),
                elementwise_groups(self.len, R::PRECISION),
                "vector precision conversion",
            )
    }

    /// `y_i ← value` for every `i`.
    pub fn fill(&mut self, value: f64) -> Result<()> {
        let n = self.len as u64;
        let a = R::from_f64(value);
        self.elementwise("vector fill", |k| {
            Launch::new(&k.fill).mem(&self.buffer)?.value(n)?.value(a)
        })
    }

    /// `y ← α y`.
    pub fn scale(&mut self, alpha: f64) -> Result<()> {
        let n = self.len as u64;
        let a = R::from_f64(alpha);
        self.elementwise("vector scale", |k| {
            Launch::new(&k.scale).mem(&self.buffer)?.value(n)?.value(a)
        })
    }

    /// `y ← y + α x`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` if its length or device differ.
    pub fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()> {
        self.check_operand("x", x)?;
        let n = self.len as u64;
        let a = R::from_f64(alpha);
        self.elementwise("vector axpy", |k| {
            Launch::new(&k.axpy)
                .mem(&self.buffer)?
                .mem(&x.buffer)?
                .value(n)?
                .value(a)
        })
    }

    /// `y ← α x + β y`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` if its length or device differ.
    pub fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()> {
        self.check_operand("x", x)?;
        let n = self.len as u64;
        let (a, b) = (R::from_f64(alpha), R::from_f64(beta));
        self.elementwise("vector axpby", |k| {
            Launch::new(&k.axpby)
                .mem(&self.buffer)?
                .mem(&x.buffer)?
                .value(n)?
                .value(a)?
                .value(b)
        })
    }

    /// `w_i ← x_i y_i` (this vector is `w`; `x` and `y` may be the same
    /// vector). A Jacobi preconditioner is `z ← D⁻¹ ∘ r`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` or `y` if a length or device
    /// differs.
    pub fn pointwise_mult(&mut self, x: &Self, y: &Self) -> Result<()> {
        self.check_operand("x", x)?;
        self.check_operand("y", y)?;
        let n = self.len as u64;
        self.elementwise("vector pointwise_mult", |k| {
            Launch::new(&k.pointwise_mult)
                .mem(&self.buffer)?
                .mem(&x.buffer)?
                .mem(&y.buffer)?
                .value(n)
        })
    }

    /// Multi-axpy `y ← y + Σ_j α_j x_j`, the terms added in order of `j`
    /// (bitwise the loop of [`DeviceVector::axpy`]), reading and writing `y`
    /// once per [`BATCH`] vectors.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `alphas` if it is not as long as
    /// `xs`, or `xs` if a vector's length or device differ (the message names
    /// its position).
    pub fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()> {
        check_len("alphas", alphas.len(), xs.len())?;
        for (j, x) in xs.iter().enumerate() {
            self.check_operand("xs", x)
                .map_err(|e| prefix_position(e, "xs", j))?;
        }
        let n = self.len as u64;
        for (a_batch, x_batch) in alphas.chunks(BATCH).zip(xs.chunks(BATCH)) {
            let nv = x_batch.len() as u32;
            self.elementwise("vector maxpy", |k| {
                let mut l = Launch::new(&k.maxpy)
                    .mem(&self.buffer)?
                    .value(n)?
                    .value(nv)?;
                for j in 0..BATCH {
                    l = l.value(R::from_f64(a_batch.get(j).copied().unwrap_or(0.0)))?;
                }
                for j in 0..BATCH {
                    l = l.mem(&x_batch.get(j).unwrap_or(&x_batch[0]).buffer)?;
                }
                Ok(l)
            })?;
        }
        Ok(())
    }
}

/// Adds "`name[j]`: " to the reason of an [`Error::InvalidArgument`].
pub(crate) fn prefix_position(e: Error, name: &'static str, j: usize) -> Error {
    match e {
        Error::InvalidArgument { reason, .. } => Error::arg(name, format!("{name}[{j}]: {reason}")),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `busy` iterates `s ← 0.999999·s + 1` `n` times on each entry (a
    /// kernel that runs a while before the transfers that wait for it).
    const BUSY: &str = "__kernel void busy(__global float *x, const int n) {
        float s = x[get_global_id(0)];
        for (int i = 0; i < n; ++i) s = s * 0.999999f + 1.0f;
        x[get_global_id(0)] = s;
    }";

    /// The range transfers move the entries they name, after the events
    /// they are given (a download after a kernel, a kernel's read after an
    /// upload). PoCL orders commands on one buffer across queues by itself,
    /// so there a missing event cannot show; femquad-mpi checks its wait
    /// lists through its recorded `Timeline`.
    #[test]
    fn range_transfers_on_the_transfer_queue_move_their_entries_after_their_events() {
        let d = crate::opencl::testing::device();
        let mut y = DeviceVector::<f32>::zeros(&d, 256).unwrap();
        let kernel = d.kernel(BUSY, "busy").unwrap();
        // the arguments match `busy`; y holds 256 floats
        Launch::new(&kernel)
            .mem(y.buffer())
            .and_then(|l| l.value(2_000_000i32))
            .and_then(|l| l.enqueue(&d, 256, None, "busy"))
            .unwrap();
        // the download waits for the kernel through the compute marker;
        // non-blocking: the pinned memory's host view waits for it
        let marker = d.compute_marker().unwrap();
        let mut out = d.pinned_host::<f32>(6).unwrap();
        y.read_range_after(100, &mut out, 1..5, &[&marker]).unwrap();
        let got = out.host().unwrap().to_vec();
        assert_eq!(got[0], 0.0);
        assert_eq!(got[5], 0.0);
        assert!(
            got[1..5].iter().all(|&x| x > 1000.0 && x == got[1]),
            "{got:?}"
        );
        // an upload from the pinned memory, and the compute queue waiting
        // for it
        out.host().unwrap()[..2].copy_from_slice(&[7.0, 8.0]);
        let upload = y.write_range_after(3, &mut out, 0..2, &[]).unwrap();
        d.compute_waits_for(&[&upload]).unwrap();
        let host = y.to_host().unwrap();
        assert_eq!(&host[3..5], &[7.0, 8.0]);
        assert_eq!(host[2], got[1]);
        // an empty range: an event all the same
        let empty = y.read_range_after(256, &mut out, 0..0, &[&upload]).unwrap();
        empty.wait().unwrap();
        // ranges past the end of the vector or the pinned memory are
        // refused, naming the argument
        let e = y.read_range_after(254, &mut out, 0..4, &[]).unwrap_err();
        assert!(
            e.to_string().contains("`out`") && e.to_string().contains("pass the end"),
            "{e}"
        );
        let e = y.read_range_after(0, &mut out, 4..8, &[]).unwrap_err();
        assert!(
            e.to_string().contains("`out`") && e.to_string().contains("pinned host memory of 6"),
            "{e}"
        );
        let e = y
            .write_range_after(usize::MAX, &mut out, 0..1, &[])
            .unwrap_err();
        assert!(e.to_string().contains("`values`"), "{e}");
    }

    /// Pinned memory starts zeroed; a download into it and an upload from
    /// it move the values between device vectors of its own device, the
    /// host view seeing the download once done (waited for); another
    /// device's pinned memory is refused, naming the argument and both
    /// devices.
    #[test]
    fn pinned_host_memory_round_trips_through_a_device_vector_and_is_refused_elsewhere() {
        let d = crate::opencl::testing::device();
        let mut pinned = d.pinned_host::<f64>(5).unwrap();
        assert_eq!(pinned.len(), 5);
        assert_eq!(pinned.host().unwrap(), &[0.0; 5]);
        let x = DeviceVector::<f64>::from_host(&d, &[1.0, 2.0, 3.0, 4.0]).unwrap();
        x.read_range_after(1, &mut pinned, 2..5, &[]).unwrap();
        assert_eq!(pinned.host().unwrap(), &[0.0, 0.0, 2.0, 3.0, 4.0]);
        pinned.host().unwrap()[0] = -1.5;
        let mut y = DeviceVector::<f64>::zeros(&d, 3).unwrap();
        // the transfer queue writes after the compute queue's commands only
        // if told so: after y's zero fill
        let filled = d.compute_marker().unwrap();
        let upload = y
            .write_range_after(0, &mut pinned, 0..3, &[&filled])
            .unwrap();
        d.compute_waits_for(&[&upload]).unwrap();
        assert_eq!(y.to_host().unwrap(), vec![-1.5, 0.0, 2.0]);
        // pinned memory of another context (its own device) is refused
        let other = crate::opencl::testing::device();
        let mut elsewhere = other.pinned_host::<f64>(2).unwrap();
        let e = x
            .read_range_after(0, &mut elsewhere, 0..2, &[])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`out`") && e.contains("is pinned host memory of the device"),
            "{e}"
        );
        let empty = d.pinned_host::<f32>(0).unwrap();
        assert!(empty.is_empty());
    }
}
