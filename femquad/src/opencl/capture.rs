//! Launches captured for a profiler outside OpenCL: what a capture holds
//! ([`LaunchCapture`], [`CapturedArg`]) and whether any device captures now.
//! [`Device::start_capture`] starts one; the launch helper (`opencl::launch`)
//! records the arguments and reads the buffers.
//!
//! NVIDIA's Nsight Compute reads the hardware counters of CUDA launches
//! only; NVIDIA's OpenCL compiles a program to PTX, which it returns as the
//! program's binary. A capture keeps what replaying one launch through
//! CUDA's driver needs, so that the counters of femquad's own kernels — the
//! same PTX on the same data — can be read: the program binary, the kernel's
//! function name, its global and work-group sizes, and its arguments in
//! signature order — each value's bytes, each buffer's contents before the
//! launch and after it (a replay checks its result against the latter).
//! `femquad-bench`'s `ncu_capture` writes captures to files and
//! `scripts/ncu-replay.py` replays them.
//!
//! Capturing finishes the queue, reads every buffer argument before and after
//! the launch and waits for it: it is for looking at one launch, not for
//! timing a solve. While no device captures, a launch records nothing (one
//! relaxed atomic load).
//!
//! [`Device::start_capture`]: crate::opencl::Device::start_capture

use std::sync::atomic::{AtomicUsize, Ordering};

use opencl3::types::cl_mem;

/// Devices capturing now (between `Device::start_capture` and
/// `Device::take_captures`): while zero, a launch records no argument.
static CAPTURING: AtomicUsize = AtomicUsize::new(0);

/// Whether any device captures its launches now.
pub(crate) fn any_capturing() -> bool {
    CAPTURING.load(Ordering::Relaxed) > 0
}

/// A device starts capturing.
pub(crate) fn started() {
    CAPTURING.fetch_add(1, Ordering::Relaxed);
}

/// A device stops capturing.
pub(crate) fn stopped() {
    CAPTURING.fetch_sub(1, Ordering::Relaxed);
}

/// One argument of a captured launch, in the kernel's signature order.
#[derive(Clone, Debug, PartialEq)]
pub enum CapturedArg {
    /// A value argument: its bytes as passed to `clSetKernelArg`.
    Value(Vec<u8>),
    /// A buffer argument: its element type's Rust name (`"f32"`, `"u32"`,
    /// …) and its whole contents before the launch and after it.
    Buffer {
        /// The element type (`std::any::type_name`).
        element: &'static str,
        /// The contents before the launch.
        before: Vec<u8>,
        /// The contents after the launch.
        after: Vec<u8>,
    },
}

/// One launch of one kernel, as
/// [`Device::start_capture`](crate::opencl::Device::start_capture) records it.
#[derive(Clone, Debug, PartialEq)]
pub struct LaunchCapture {
    /// The kernel's function name.
    pub kernel: String,
    /// What the launch computed (the caller's description, as in errors).
    pub what: String,
    /// The binary of the kernel's program as the OpenCL driver returns it
    /// (PTX text on NVIDIA).
    pub binary: Vec<u8>,
    /// Work-items in all (one dimension).
    pub global: usize,
    /// Work-items a work-group; `None`: the runtime chose.
    pub local: Option<usize>,
    /// The arguments in signature order.
    pub args: Vec<CapturedArg>,
    /// The launch's device time (profiling start to end), nanoseconds; 0
    /// if the device reported no profiling times.
    pub nanoseconds: u64,
}

/// An argument as the launch helper records it while a device captures.
pub(crate) enum ArgRecord {
    /// A value's bytes.
    Value(Vec<u8>),
    /// A buffer and the Rust name of its element type.
    Mem(cl_mem, &'static str),
}
