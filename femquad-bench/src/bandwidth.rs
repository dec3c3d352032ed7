//! The bandwidth ceiling: a device-to-device copy kernel timed with
//! profiling events.
//!
//! Each work-item copies one `float4` (16 bytes), the widest load most
//! devices coalesce; the bytes counted are those read plus those written.
//! This is the "copy bandwidth" performance figures are reported against.
//! A benchmark tool, built on femquad's public device API (it was
//! `femquad::opencl::bandwidth`).

use std::sync::Arc;

use femquad::opencl::autotune::median;
use femquad::opencl::{Device, DeviceVector};
use femquad::{Error, Result};
use opencl3::error_codes::ClError;
use opencl3::kernel::ExecuteKernel;

/// `e`, the failure of the OpenCL call `call`, as femquad's error.
fn cl_error(call: &'static str) -> impl Fn(ClError) -> Error {
    move |e| Error::OpenCl {
        call,
        code: e.0,
        name: e.to_string(),
    }
}

const COPY_SOURCE: &str = "__kernel void copy4(__global const float4 *restrict src, __global float4 *restrict dst)\n\
{\n    const size_t i = get_global_id(0);\n    dst[i] = src[i];\n}\n";

/// Work-group size of the copy kernel.
const COPY_GROUP: usize = 256;

/// Result of a copy-bandwidth measurement.
#[derive(Clone, Debug)]
pub struct CopyBandwidth {
    /// Bytes moved per copy (read + written).
    pub bytes: u64,
    /// Kernel times of the timed launches, nanoseconds.
    pub times_ns: Vec<u64>,
}

impl CopyBandwidth {
    /// Median kernel time in seconds.
    pub fn median_s(&self) -> f64 {
        median(&self.times_ns) * 1e-9
    }
    /// Bandwidth in bytes per second from the median time.
    pub fn bytes_per_s(&self) -> f64 {
        self.bytes as f64 / self.median_s()
    }
    /// Bandwidth in GB/s (10⁹ bytes per second) from the median time.
    pub fn gb_per_s(&self) -> f64 {
        self.bytes_per_s() * 1e-9
    }
}

/// Measures the copy bandwidth with a buffer of `bytes` bytes (rounded to
/// whole work-groups of float4): `warmup` untimed launches, then
/// `repetitions` timed ones.
pub fn measure_copy(
    device: &Arc<Device>,
    bytes: usize,
    warmup: usize,
    repetitions: usize,
) -> Result<CopyBandwidth> {
    if repetitions == 0 {
        return Err(Error::arg("repetitions", "at least one timed launch"));
    }
    let group_bytes = COPY_GROUP * 16;
    let n4 = (bytes / group_bytes).max(1) * COPY_GROUP;
    let n = n4 * 4;
    let kernel = device.kernel(COPY_SOURCE, "copy4")?;
    // Never time on zeros: a non-trivial pattern.
    let data: Vec<f32> = (0..n)
        .map(|i| ((i * 2_654_435_761) % 1000) as f32 * 1e-3 + 0.5)
        .collect();
    let src = DeviceVector::from_host(device, &data)?;
    let dst = DeviceVector::<f32>::zeros(device, n)?;
    let mut times = Vec::with_capacity(repetitions);
    for k in 0..warmup + repetitions {
        device.check_alive()?;
        // SAFETY: both buffers hold n4 float4 values; one work-item each.
        let ev = unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(src.buffer())
                .set_arg(dst.buffer())
                .set_global_work_size(n4)
                .set_local_work_size(COPY_GROUP)
                .enqueue_nd_range(device.queue())
        }
        .map_err(cl_error("clEnqueueNDRangeKernel"))?;
        ev.wait().map_err(cl_error("clWaitForEvents"))?;
        if k >= warmup {
            let start = ev
                .profiling_command_start()
                .map_err(cl_error("clGetEventProfilingInfo"))?;
            let end = ev
                .profiling_command_end()
                .map_err(cl_error("clGetEventProfilingInfo"))?;
            times.push(end.saturating_sub(start));
        }
    }
    Ok(CopyBandwidth {
        bytes: 2 * (n as u64) * 4,
        times_ns: times,
    })
}
