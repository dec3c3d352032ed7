//! The vector kernels of one device and precision (the template
//! `kernels/vector.cl`), the scratch buffers of the reductions and the
//! launch helper.

use std::sync::{Arc, Mutex, MutexGuard};

use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

use crate::opencl::context::Device;
use crate::{Error, Precision, Real, Result};

/// The template of the vector kernels.
pub const VECTOR_TEMPLATE: &str = include_str!("../../../../kernels/vector.cl");

/// Work-group size of every vector kernel.
pub const WG: usize = 256;

/// Vectors per launch of the multi-dot and multi-axpy kernels.
pub const BATCH: usize = 8;

/// Largest number of work-groups of a reduction's first pass.
pub const MAX_GROUPS: usize = 1024;

/// Entries `VW` a work-item moves at once: a 16-byte vector (`float4` in
/// `f32`, `double2` in `f64`).
pub fn vector_width(precision: Precision) -> usize {
    16 / precision.size()
}

/// Work-groups of an elementwise kernel over `n` entries of `precision`: one
/// work-item per block of `VW` entries.
pub fn elementwise_groups(n: usize, precision: Precision) -> usize {
    n.div_ceil(vector_width(precision)).div_ceil(WG)
}

/// Work-groups of an index kernel over `m` indices: one work-item each.
pub fn index_groups(m: usize) -> usize {
    m.div_ceil(WG)
}

/// Work-groups `G` of the first pass of a reduction over `n > 0` entries of
/// `precision`: `clamp(⌈⌈n/VW⌉/WG⌉, 1, MAX_GROUPS)`, a function of `n`
/// (and the precision) alone, so the reduction order (and the rounded
/// result) never depends on the device's occupancy. At 2²³ entries this is
/// 1024 groups of 256 work-items (about one full wave of 2048 threads on
/// each of an H200's 132 SMs), each work-item reading 8 (f32) or 16 (f64)
/// blocks of 16 bytes.
pub fn reduction_groups(n: usize, precision: Precision) -> usize {
    elementwise_groups(n, precision).clamp(1, MAX_GROUPS)
}

/// The OpenCL source for vectors of `precision`, accumulating reductions in
/// `double` if `acc_double` (else `float`).
pub fn vector_source(precision: Precision, acc_double: bool) -> String {
    let real = precision.cl_type();
    let acc = if acc_double { "double" } else { "float" };
    let fp64 = if real == "double" || acc_double {
        "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    } else {
        ""
    };
    let vw = vector_width(precision);
    // the other precision, for vec_convert (only where double exists)
    let convert = if acc_double {
        let other = match precision {
            Precision::F32 => Precision::F64,
            Precision::F64 => Precision::F32,
        }
        .cl_type();
        format!(
            "typedef {other} other;\ntypedef {other}{vw} otherv;\n\
             #define CONVERT_REALV convert_{real}{vw}\n"
        )
    } else {
        String::new()
    };
    format!(
        "{fp64}typedef {real} real;\ntypedef {real}{vw} realv;\n#define VW {vw}\n\
         typedef {acc} acc;\n#define WG {WG}\n{convert}\n{VECTOR_TEMPLATE}"
    )
}

/// The kernels of `kernels/vector.cl`.
pub struct Kernels {
    pub fill: Kernel,
    pub copy: Kernel,
    pub scale: Kernel,
    pub axpy: Kernel,
    pub axpby: Kernel,
    pub pointwise_mult: Kernel,
    pub maxpy: Kernel,
    pub cg_update: Kernel,
    pub mdot_partials: Kernel,
    pub absmax_partials: Kernel,
    pub nonfinite_partials: Kernel,
    pub sum_final: Kernel,
    pub max_final: Kernel,
    pub min_final: Kernel,
    pub set_at: Kernel,
    pub copy_at: Kernel,
    pub gather: Kernel,
    pub scatter: Kernel,
    pub scatter_add: Kernel,
    /// `vec_convert` from the other precision (only on devices with fp64).
    pub convert: Option<Kernel>,
}

/// What the vector operations of one device and precision share: the
/// kernels, and the scratch buffers of the reductions. Kernel arguments are
/// state of the kernel object, so launches hold the lock from the first
/// argument to the enqueue (and reductions until their result is read).
pub struct VectorProgram {
    device: Arc<Device>,
    /// Reductions accumulate in `double` (else `float`).
    acc_double: bool,
    state: Mutex<State>,
}

/// The mutable part of a [`VectorProgram`].
pub struct State {
    pub kernels: Kernels,
    /// Partials of a reduction's first pass, bytes.
    partials: Option<Buffer<u8>>,
    partials_bytes: usize,
    /// Results of the second pass, bytes.
    results: Option<Buffer<u8>>,
    results_bytes: usize,
}

impl VectorProgram {
    /// Builds (or takes from the device's program cache) the vector kernels
    /// for `R` on `device`.
    ///
    /// # Errors
    /// [`Error::NoFp64`] for `f64` on a device without double precision;
    /// [`Error::DeviceLimit`] if the device cannot run work-groups of
    /// [`WG`]; the build errors of [`Device::program`].
    pub fn new<R: Real>(device: &Arc<Device>) -> Result<Arc<Self>> {
        device.check_precision::<R>()?;
        let acc_double = device.info().fp64;
        let program = device.program(&vector_source(R::PRECISION, acc_double))?;
        let make = |name: &str| {
            device.kernel_of(
                &program,
                name,
                WG,
                "work-group size of the vector kernels (threads)",
            )
        };
        let kernels = Kernels {
            fill: make("vec_fill")?,
            copy: make("vec_copy")?,
            scale: make("vec_scale")?,
            axpy: make("vec_axpy")?,
            axpby: make("vec_axpby")?,
            pointwise_mult: make("vec_pointwise_mult")?,
            maxpy: make("vec_maxpy")?,
            cg_update: make("vec_cg_update")?,
            mdot_partials: make("vec_mdot_partials")?,
            absmax_partials: make("vec_absmax_partials")?,
            nonfinite_partials: make("vec_nonfinite_partials")?,
            sum_final: make("vec_sum_final")?,
            max_final: make("vec_max_final")?,
            min_final: make("vec_min_final")?,
            set_at: make("vec_set_at")?,
            copy_at: make("vec_copy_at")?,
            gather: make("vec_gather")?,
            scatter: make("vec_scatter")?,
            scatter_add: make("vec_scatter_add")?,
            convert: if acc_double {
                Some(make("vec_convert")?)
            } else {
                None
            },
        };
        Ok(Arc::new(VectorProgram {
            device: device.clone(),
            acc_double,
            state: Mutex::new(State {
                kernels,
                partials: None,
                partials_bytes: 0,
                results: None,
                results_bytes: 0,
            }),
        }))
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// Bytes of one accumulator value (8 for `double`, 4 for `float`).
    pub fn acc_size(&self) -> usize {
        if self.acc_double { 8 } else { 4 }
    }

    /// Converts accumulator values read back as bytes to `f64`.
    pub fn decode_acc(&self, bytes: &[u8]) -> Vec<f64> {
        if self.acc_double {
            bytes
                .chunks_exact(8)
                .map(|c| f64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
                .collect()
        } else {
            bytes
                .chunks_exact(4)
                .map(|c| f64::from(f32::from_ne_bytes(c.try_into().unwrap_or([0; 4]))))
                .collect()
        }
    }

    /// Locks the kernels and scratch buffers.
    pub fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another thread panicked while holding
        // it; kernels and buffers stay valid.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    /// Grows the scratch buffers to at least `partial_bytes` and
    /// `result_bytes` (they are kept for the next reduction).
    pub fn reserve(
        &mut self,
        device: &Device,
        partial_bytes: usize,
        result_bytes: usize,
    ) -> Result<()> {
        if self.partials.is_none() || self.partials_bytes < partial_bytes {
            let bytes = partial_bytes.max(MAX_GROUPS * BATCH * 8);
            self.partials = Some(device.alloc::<u8>(bytes, "reduction partials")?);
            self.partials_bytes = bytes;
        }
        if self.results.is_none() || self.results_bytes < result_bytes {
            let bytes = result_bytes.max(BATCH * 8);
            self.results = Some(device.alloc::<u8>(bytes, "reduction results")?);
            self.results_bytes = bytes;
        }
        Ok(())
    }

    /// The kernels and the scratch buffers (partials, results) after
    /// [`State::reserve`].
    pub fn parts(&self) -> Result<(&Kernels, &Buffer<u8>, &Buffer<u8>)> {
        match (&self.partials, &self.results) {
            (Some(p), Some(r)) => Ok((&self.kernels, p, r)),
            _ => Err(Error::internal(
                "the reduction's scratch buffers were used before State::reserve",
            )),
        }
    }
}

pub use crate::opencl::launch::Launch;

impl Launch<'_> {
    /// Enqueues `groups` work-groups of [`WG`] work-items (nothing if 0),
    /// without an event ([`Launch::submit`]): the in-order queue orders
    /// everything that follows.
    ///
    /// # Errors
    /// The launch failure naming `what`.
    pub fn run(self, device: &Device, groups: usize, what: &str) -> Result<()> {
        if groups == 0 {
            return Ok(());
        }
        self.submit(device, groups * WG, Some(WG), what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_depend_on_the_length_only() {
        let (f32, f64) = (Precision::F32, Precision::F64);
        assert_eq!(elementwise_groups(0, f32), 0);
        assert_eq!(elementwise_groups(1, f64), 1);
        assert_eq!(elementwise_groups(4 * WG, f32), 1);
        assert_eq!(elementwise_groups(4 * WG, f64), 2);
        assert_eq!(elementwise_groups(4 * WG + 1, f32), 2);
        assert_eq!(reduction_groups(1, f32), 1);
        assert_eq!(reduction_groups(1 << 23, f64), MAX_GROUPS);
        assert_eq!(reduction_groups(5 * 4 * WG, f32), 5);
        assert_eq!(index_groups(257), 2);
    }

    #[test]
    fn source_declares_the_types() {
        let s = vector_source(Precision::F32, true);
        assert!(s.starts_with("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"));
        assert!(s.contains("typedef float real;") && s.contains("typedef double acc;"));
        let s = vector_source(Precision::F32, false);
        assert!(s.starts_with("typedef float real;") && s.contains("typedef float acc;"));
        assert!(
            !s.contains("#define CONVERT_REALV convert"),
            "no double for vec_convert: {s}"
        );
        let s = vector_source(Precision::F32, true);
        assert!(s.contains("typedef double4 otherv;\n#define CONVERT_REALV convert_float4\n"));
        let s = vector_source(Precision::F64, true);
        assert!(s.contains("typedef double2 realv;\n#define VW 2\n"), "{s}");
        assert!(s.contains("typedef float2 otherv;\n#define CONVERT_REALV convert_double2\n"));
        assert!(
            vector_source(Precision::F32, true).contains("typedef float4 realv;\n#define VW 4\n")
        );
    }
}
