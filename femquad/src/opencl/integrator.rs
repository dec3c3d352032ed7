//! The OpenCL integrator: thread transposition on the device, remainder
//! cells natively.
//!
//! Geometry is uploaded once, when the integrator is created. Each
//! evaluation uploads only the cell-local coefficients (and aux and
//! constants), launches one work-group per full chunk of cells, integrates
//! the `n_cells mod chunk` remainder cells natively on the host while the
//! device runs, and reads the element vectors back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opencl3::event::Event;
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::Buffer;

use super::case::KernelCase;
use super::context::{Device, Transfer};
use super::device::cl_error;
use super::options::KernelOptions;
use super::shape::{KernelShape, LaunchConfig, default_config};
use super::source::{INTEGRATE_KERNEL, integrate_source};
use super::tuning_cache::{TuneKey, cached_config};
use crate::discretization::{CellInputs, Discretization};
use crate::native::{self, Execution};
use crate::physics::Pointwise;
use crate::{Error, Real, Result};

/// A compiled kernel for one physics, with its shape.
struct Compiled {
    kernel: Kernel,
    shape: KernelShape,
}

/// Key of a compiled kernel: physics source hash and launch configuration.
type KernelKey = (u64, LaunchConfig);

/// Device buffers, allocated once for all cells and reused by every evaluation.
struct Buffers<R> {
    u: Buffer<R>,
    aux: Buffer<R>,
    inv_j: Buffer<R>,
    det_j: Buffer<R>,
    coords: Option<Buffer<R>>,
    constants: Buffer<R>,
    /// Capacity of `constants`, in reals.
    constants_len: usize,
    out: Buffer<R>,
}

/// Integrates element vectors with the thread-transposition kernel.
pub struct OpenClIntegrator<R: Real> {
    device: Arc<Device>,
    disc: Discretization<R>,
    options: KernelOptions,
    /// Configurations resolved for physics (tuning cache or device default),
    /// by physics source hash.
    resolved: Mutex<HashMap<u64, LaunchConfig>>,
    kernels: HashMap<KernelKey, Compiled>,
    buffers: Buffers<R>,
    last_kernel_ns: Option<u64>,
}

impl<R: Real> OpenClIntegrator<R> {
    /// Creates an integrator for `disc` on `device` with the kernel switches
    /// `options`: allocates the device buffers and uploads the cell geometry
    /// (J⁻¹ and det J; the cell coordinates follow on first use by a physics
    /// that reads `x`).
    pub fn new(
        device: Arc<Device>,
        disc: Discretization<R>,
        options: KernelOptions,
    ) -> Result<Self> {
        device.check_precision::<R>()?;
        let g = disc.geometry();
        let n_cells = disc.n_cells();
        let mut inv_j = device.alloc::<R>(g.inv_j().len(), "inverse Jacobians")?;
        let mut det_j = device.alloc::<R>(g.det_j().len(), "Jacobian determinants")?;
        device.write(
            &mut inv_j,
            g.inv_j(),
            Transfer::Geometry,
            "inverse Jacobians",
        )?;
        device.write(
            &mut det_j,
            g.det_j(),
            Transfer::Geometry,
            "Jacobian determinants",
        )?;
        let buffers = Buffers {
            u: device.alloc::<R>(n_cells * disc.n_bt(), "coefficients")?,
            aux: device.alloc::<R>(n_cells * disc.aux_per_cell(), "auxiliary coefficients")?,
            inv_j,
            det_j,
            coords: None,
            constants: device.alloc::<R>(1, "constants")?,
            constants_len: 1,
            out: device.alloc::<R>(n_cells * disc.n_bt(), "element vectors")?,
        };
        Ok(OpenClIntegrator {
            device,
            disc,
            options,
            resolved: Mutex::new(HashMap::new()),
            kernels: HashMap::new(),
            buffers,
            last_kernel_ns: None,
        })
    }

    /// The discretization this integrator was built for.
    pub fn discretization(&self) -> &Discretization<R> {
        &self.disc
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        &self.device
    }

    /// The kernel switches.
    pub fn options(&self) -> &KernelOptions {
        &self.options
    }

    /// The kernel case of `physics` on this discretization.
    pub fn case_for<P: Pointwise + ?Sized>(&self, physics: &P) -> KernelCase {
        KernelCase::new(&self.disc, physics.info())
    }

    /// Device time of the last kernel launch in nanoseconds (profiling
    /// events), if a kernel ran.
    pub fn last_kernel_ns(&self) -> Option<u64> {
        self.last_kernel_ns
    }

    /// The launch configuration used for `physics` when none is given: the
    /// one autotuned for this device and case (see [`super::autotune`]),
    /// else the device default. Resolved once per physics and remembered.
    pub fn config_for<P: Pointwise + ?Sized>(&self, physics: &P) -> Result<LaunchConfig> {
        self.config_with_hash(physics, physics.source_hash())
    }

    /// [`OpenClIntegrator::config_for`], given `physics.source_hash()`.
    fn config_with_hash<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        hash: u64,
    ) -> Result<LaunchConfig> {
        let mut resolved = self.resolved.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = resolved.get(&hash) {
            return Ok(*c);
        }
        let case = self.case_for(physics);
        let info = self.device.info();
        let key = TuneKey::new(info, &case, hash, &self.options);
        let config = match cached_config(info, &key, &self.options) {
            Some(c) => c,
            None => default_config(&case, &self.options, info)?,
        };
        resolved.insert(hash, config);
        Ok(config)
    }

    /// The kernel shape of `physics` launched with `config` (`None`:
    /// [`OpenClIntegrator::config_for`]), checked against the device.
    pub fn shape_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        config: Option<LaunchConfig>,
    ) -> Result<KernelShape> {
        let config = match config {
            Some(c) => c,
            None => self.config_for(physics)?,
        };
        let shape = KernelShape::new(&self.case_for(physics), config, &self.options)?;
        shape.check_device(self.device.info())?;
        Ok(shape)
    }

    /// The compiler's resource report for the kernel of `physics` (NVIDIA:
    /// registers, stack frame, spills; see
    /// [`super::context::resource_summary`]), empty if the kernel was not
    /// built yet or the compiler reports nothing.
    pub fn resources_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        config: Option<LaunchConfig>,
    ) -> Result<String> {
        let source = self.source_for(physics, config)?;
        Ok(self
            .device
            .build_log(&source)
            .map(|log| super::context::resource_summary(&log))
            .unwrap_or_default())
    }

    /// The generated OpenCL source for `physics` launched with `config`
    /// (`None`: [`OpenClIntegrator::config_for`]), for inspection.
    pub fn source_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        config: Option<LaunchConfig>,
    ) -> Result<String> {
        let shape = self.shape_for(physics, config)?;
        Ok(integrate_source::<R, P>(
            &shape,
            self.disc.aux(),
            self.disc.tabulation(),
            self.disc.quadrature(),
            physics,
        ))
    }

    /// Compiles the kernel for `physics` launched with `config` (`None`:
    /// [`OpenClIntegrator::config_for`]) on first use (the device's program
    /// cache may already hold the program) and returns its key in
    /// `self.kernels`.
    fn compile<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        config: Option<LaunchConfig>,
    ) -> Result<KernelKey> {
        let hash = physics.source_hash();
        let config = match config {
            Some(c) => c,
            None => self.config_with_hash(physics, hash)?,
        };
        let key = (hash, config);
        if !self.kernels.contains_key(&key) {
            let shape = self.shape_for(physics, Some(config))?;
            let source = self.source_for(physics, Some(config))?;
            let kernel = self.device.kernel(&source, INTEGRATE_KERNEL)?;
            self.kernels.insert(key, Compiled { kernel, shape });
        }
        Ok(key)
    }

    fn compiled(&self, key: &KernelKey) -> Result<&Compiled> {
        self.kernels
            .get(key)
            .ok_or_else(|| Error::arg("physics", "kernel cache lookup failed"))
    }

    /// Uploads what `shape` needs beyond the geometry: the cell coordinates
    /// (once), and this evaluation's coefficients, aux and constants for the
    /// first `n_dev` cells.
    fn upload(
        &mut self,
        shape: &KernelShape,
        inputs: &CellInputs<'_, R>,
        n_dev: usize,
    ) -> Result<()> {
        let device = &self.device;
        let b = &mut self.buffers;
        if shape.reads_x && b.coords.is_none() {
            let coords = self.disc.geometry().coords().ok_or_else(|| {
                Error::arg(
                    "physics",
                    "reads x but the discretization stores no cell coordinates",
                )
            })?;
            let mut buf = device.alloc::<R>(coords.len(), "cell coordinates")?;
            device.write(&mut buf, coords, Transfer::Geometry, "cell coordinates")?;
            b.coords = Some(buf);
        }
        let n_bt = self.disc.n_bt();
        let aux_pc = self.disc.aux_per_cell();
        device.write(
            &mut b.u,
            &inputs.u[..n_dev * n_bt],
            Transfer::Coefficients,
            "coefficients",
        )?;
        device.write(
            &mut b.aux,
            &inputs.aux[..n_dev * aux_pc],
            Transfer::Coefficients,
            "auxiliary coefficients",
        )?;
        if !inputs.constants.is_empty() {
            // Grown only when a physics with more constants comes along.
            if inputs.constants.len() > b.constants_len {
                b.constants = device.alloc::<R>(inputs.constants.len(), "constants")?;
                b.constants_len = inputs.constants.len();
            }
            device.write(
                &mut b.constants,
                inputs.constants,
                Transfer::Coefficients,
                "constants",
            )?;
        }
        Ok(())
    }

    /// Element vectors of all cells into `out` (`n_cells·N_bt` entries,
    /// [`crate::layout::cell_dof`]). Full chunks run on the device; the
    /// remaining cells (fewer than a chunk) natively, overlapped with the
    /// kernel. The launch configuration is [`OpenClIntegrator::config_for`].
    pub fn element_vectors<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        inputs: &CellInputs<'_, R>,
        out: &mut [R],
    ) -> Result<()> {
        self.element_vectors_with(physics, inputs, out, None)
    }

    /// [`OpenClIntegrator::element_vectors`] launched with `config`
    /// (`None`: [`OpenClIntegrator::config_for`]).
    pub fn element_vectors_with<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        inputs: &CellInputs<'_, R>,
        out: &mut [R],
        config: Option<LaunchConfig>,
    ) -> Result<()> {
        let n_cells = self.disc.n_cells();
        self.disc.check_physics(physics, inputs.constants.len())?;
        self.disc.check_inputs(inputs, n_cells, out)?;
        let key = self.compile(physics, config)?;
        let shape = self.compiled(&key)?.shape;
        let n_chunks = shape.n_chunks(n_cells);
        let n_dev = n_chunks * shape.chunk;
        self.last_kernel_ns = None;
        if n_chunks == 0 {
            // Fewer cells than one chunk: all native.
            return native::element_vectors(&self.disc, physics, inputs, out, Execution::Parallel);
        }
        self.upload(&shape, inputs, n_dev)?;

        let n_bt = self.disc.n_bt();
        let aux_pc = self.disc.aux_per_cell();
        let (out_dev, out_rest) = out.split_at_mut(n_dev * n_bt);
        let compiled = self.compiled(&key)?;
        let kernel_event = launch(&self.device, compiled, &self.buffers, n_chunks)?;
        // SAFETY: `out_dev` stays borrowed until the queue is finished below,
        // on every path.
        let read = unsafe { self.device.read_async(&self.buffers.out, out_dev) };
        // Submit now, so the device works while the host integrates the remainder.
        let flushed = self.device.queue().flush().map_err(cl_error("clFlush"));
        let remainder = if read.is_ok() && n_dev < n_cells {
            let rest = CellInputs {
                u: &inputs.u[n_dev * n_bt..],
                aux: &inputs.aux[n_dev * aux_pc..],
                constants: inputs.constants,
            };
            native::element_vectors_range(
                &self.disc,
                physics,
                &rest,
                n_dev..n_cells,
                out_rest,
                Execution::Parallel,
            )
        } else {
            Ok(())
        };
        let finished = self.device.queue().finish().map_err(cl_error("clFinish"));
        read?;
        flushed?;
        finished?;
        remainder?;
        self.last_kernel_ns = kernel_time_ns(&kernel_event);
        Ok(())
    }

    /// Launches the kernel for `physics` with `config` `repetitions` times
    /// on the inputs already on the device (from the last [`element_vectors`]
    /// call) and returns each launch's device time in nanoseconds (profiling
    /// events). For benchmarks and the autotuner.
    ///
    /// [`element_vectors`]: OpenClIntegrator::element_vectors
    pub fn time_kernel<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        config: LaunchConfig,
        repetitions: usize,
    ) -> Result<Vec<u64>> {
        let n_cells = self.disc.n_cells();
        let key = self.compile(physics, Some(config))?;
        let compiled = self.compiled(&key)?;
        let n_chunks = compiled.shape.n_chunks(n_cells);
        if n_chunks == 0 {
            return Err(Error::arg(
                "physics",
                format!(
                    "{n_cells} cells are fewer than one chunk ({}): nothing runs on the device",
                    compiled.shape.chunk
                ),
            ));
        }
        let mut times = Vec::with_capacity(repetitions);
        for _ in 0..repetitions {
            let ev = launch(&self.device, compiled, &self.buffers, n_chunks)?;
            ev.wait().map_err(cl_error("clWaitForEvents"))?;
            times.push(kernel_time_ns(&ev).unwrap_or(0));
        }
        Ok(times)
    }
}

fn kernel_time_ns(ev: &Event) -> Option<u64> {
    let start = ev.profiling_command_start().ok()?;
    let end = ev.profiling_command_end().ok()?;
    Some(end.saturating_sub(start))
}

/// Enqueues one launch of `n_chunks` work-groups.
fn launch<R: Real>(
    device: &Device,
    compiled: &Compiled,
    b: &Buffers<R>,
    n_chunks: usize,
) -> Result<Event> {
    // A kernel that does not read x still takes a (never read) buffer there.
    let coords = b.coords.as_ref().unwrap_or(&b.det_j);
    let n_t = compiled.shape.n_t;
    // SAFETY: argument types and order match the kernel signature in
    // kernels/integrate.cl; the buffers hold at least n_chunks·chunk cells.
    unsafe {
        ExecuteKernel::new(&compiled.kernel)
            .set_arg(&b.u)
            .set_arg(&b.aux)
            .set_arg(&b.inv_j)
            .set_arg(&b.det_j)
            .set_arg(coords)
            .set_arg(&b.constants)
            .set_arg(&b.out)
            .set_global_work_size(n_chunks * n_t)
            .set_local_work_size(n_t)
            .enqueue_nd_range(device.queue())
    }
    .map_err(|e| device.memory_error("clEnqueueNDRangeKernel", "kernel launch", 0, e))
}
