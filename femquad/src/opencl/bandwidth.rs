//! The bandwidth ceiling: a device-to-device copy kernel timed with
//! profiling events.
//!
//! Each work-item copies one `float4` (16 bytes), the widest load most
//! devices coalesce; the bytes counted are those read plus those written.
//! This is the "copy bandwidth" performance figures are reported against.

use std::sync::Arc;

use opencl3::kernel::ExecuteKernel;
use opencl3::memory::Buffer;

use super::context::{Device, Transfer};
use super::device::cl_error;
use crate::{Error, Result};

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

/// Median of nanosecond timings (0 for none).
pub fn median(times_ns: &[u64]) -> f64 {
    if times_ns.is_empty() {
        return 0.0;
    }
    let mut t = times_ns.to_vec();
    t.sort_unstable();
    let n = t.len();
    if n % 2 == 1 {
        t[n / 2] as f64
    } else {
        (t[n / 2 - 1] as f64 + t[n / 2] as f64) / 2.0
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
    let mut src: Buffer<f32> = device.alloc(n, "copy source")?;
    let dst: Buffer<f32> = device.alloc(n, "copy destination")?;
    // Never time on zeros: a non-trivial pattern.
    let data: Vec<f32> = (0..n)
        .map(|i| ((i * 2_654_435_761) % 1000) as f32 * 1e-3 + 0.5)
        .collect();
    device.write(&mut src, &data, Transfer::Coefficients, "copy source")?;
    let mut times = Vec::with_capacity(repetitions);
    for k in 0..warmup + repetitions {
        let queue = device.live_queue()?;
        // SAFETY: both buffers hold n4 float4 values; one work-item each.
        let ev = unsafe {
            ExecuteKernel::new(&kernel)
                .set_arg(&src)
                .set_arg(&dst)
                .set_global_work_size(n4)
                .set_local_work_size(COPY_GROUP)
                .enqueue_nd_range(queue)
        }
        .map_err(|e| device.failure("clEnqueueNDRangeKernel", "the copy kernel", 0, e))?;
        device.wait(&ev, "the copy kernel")?;
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

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn medians() {
        assert_eq!(median(&[5, 1, 3]), 3.0);
        assert_eq!(median(&[4, 1, 3, 2]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
