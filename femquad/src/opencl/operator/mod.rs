//! The OpenCL operator of one discretization: the mesh data kept on the
//! device, the thread-transposition kernels built for each physics, and
//! their launches.
//!
//! One [`OpenClOperator`] serves two measures (named as the CEED
//! benchmarks name them):
//!
//! * **the global residual** `F(u)` ([`OpenClOperator::residual`], BP): `u`
//!   and `F` are device buffers; one launch gathers `u` through the
//!   cell → node map, integrates by thread transposition and adds each
//!   element-vector entry into `F` ([`Assembly::Atomic`]), or writes the
//!   element vectors, which a second launch sums per node in a fixed order
//!   ([`Assembly::Deterministic`], bitwise reproducible);
//! * **the element kernel** ([`OpenClOperator::element_vectors`], BK, the
//!   paper's measure): cell-local coefficients in, element vectors out.
//!
//! Every cell is integrated on the device: the launch covers
//! `⌈n_cells / chunk⌉` work-groups, and the per-cell arrays on the device are
//! padded by [`CELL_PADDING`] cells (node 0, `det J = 0`) so that the last,
//! partial chunk needs no bounds checks; its missing cells are never stored.
//!
//! Mesh data moves to the device once: the cell → node map and the vertex
//! coordinates when the operator is created, `J⁻¹`/`det J` (stored-geometry
//! configurations), the cell coordinates (element kernel with `x`) and the
//! node → cell incidence (deterministic assembly) on first use.
//! [`super::DeviceStats`] counts every transfer.

mod bound;
mod diagonal;
mod element;
mod residual;
mod windows;

use std::collections::HashMap;
use std::sync::Arc;

/// Node windows per (chunk size, capacities): the window buffer and how
/// many groups are windowed.
type WindowCache = HashMap<(usize, (usize, usize)), (Buffer<u32>, usize)>;

use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

use super::case::KernelCase;
use super::context::{Device, Transfer};
use super::launch::Launch;
use super::options::KernelOptions;
use super::shape::{GeometryMode, KernelShape, KernelVariant, LaunchConfig, default_config};
use super::source::{INTEGRATE_KERNEL, integrate_source};
use super::tuning_cache::TuneKey;
use crate::discretization::Discretization;
use crate::physics::Pointwise;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

pub use bound::OpenClIntegrator;
pub use residual::Assembly;

/// Cells of padding after the last cell in every per-cell device array:
/// the largest chunk (cells per work-group) a launch may use.
pub const CELL_PADDING: usize = 16384;

/// The global inputs of one launch: `u` (global or cell-local), the
/// direction `v` of a Jacobian action, the auxiliary field.
pub(crate) struct Inputs<'a, R> {
    pub(crate) u: &'a Buffer<R>,
    pub(crate) direction: Option<&'a Buffer<R>>,
    pub(crate) aux: Option<&'a Buffer<R>>,
}

/// A compiled kernel with its shape.
struct Compiled {
    kernel: Kernel,
    shape: KernelShape,
}

/// Key of a compiled kernel: physics source hash, variant, configuration.
type KernelKey = (u64, KernelVariant, LaunchConfig);

/// What the last launch of an [`OpenClOperator`] covered, for reports and
/// tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchRecord {
    /// Work-groups launched.
    pub work_groups: usize,
    /// Cells per work-group (the chunk).
    pub chunk: usize,
    /// Cells of the mesh; `work_groups·chunk ≥ cells` always.
    pub cells: usize,
    /// The configuration launched.
    pub config: LaunchConfig,
    /// Work-groups that used their node window (`config.window`; 0 without).
    pub windowed_groups: usize,
}

/// Device buffers of the mesh and of the last evaluation's inputs.
struct DeviceData<R> {
    /// `[cell][b]`, padded with node 0.
    cell_nodes: Buffer<u32>,
    /// `[vertex][d]`.
    vertices: Buffer<R>,
    /// `J⁻¹` and `det J` per cell, padded with zeros (stored geometry).
    stored_geometry: Option<(Buffer<R>, Buffer<R>)>,
    /// `[cell][v][d]`, padded (element kernel of a physics reading `x`).
    cell_coords: Option<Buffer<R>>,
    /// The auxiliary field: `[node][k]` (field) or `[cell][k]` padded (P0).
    aux: Option<Buffer<R>>,
    /// Constants, and the values last written to them.
    constants: Buffer<R>,
    constants_host: Vec<R>,
    /// Element vectors `[cell][b][comp]`, padded.
    element_vectors: Option<Buffer<R>>,
    /// Element kernel inputs: cell-local `u` and aux, padded.
    cell_u: Option<Buffer<R>>,
    cell_aux: Option<Buffer<R>>,
    /// Node windows per chunk size and capacities: `[group][lo_A, w_A,
    /// lo_B, w_B]` and how many groups are windowed.
    windows: WindowCache,
    /// Stand in for arguments a kernel variant does not read.
    unused_real: Buffer<R>,
    unused_uint: Buffer<u32>,
}

/// The thread-transposition kernels of one discretization on one device.
pub struct OpenClOperator<R: Real> {
    device: Arc<Device>,
    options: KernelOptions,
    disc: Discretization<R>,
    n_nodes: usize,
    n_vertices: usize,
    /// The space (a clone shares its mesh, cell → node map and incidence:
    /// the host keeps one copy of the map, the space's).
    space: FunctionSpace,
    data: DeviceData<R>,
    /// Node → cell-slot incidence, `(offsets, slots)`, for deterministic assembly.
    incidence: Option<(Buffer<u32>, Buffer<u32>)>,
    /// The deterministic sum's kernel (`kernels/assemble.cl`), built once.
    assembly_kernel: Option<Kernel>,
    kernels: HashMap<KernelKey, Compiled>,
    last_launch: Option<LaunchRecord>,
    /// Events of the last residual evaluation, for its timing.
    pending: Vec<Event>,
}

impl<R: Real> OpenClOperator<R> {
    /// The operator of `disc` (a discretization of `space`) on `device`,
    /// with the kernel switches `options`. Uploads the cell → node map and
    /// the vertex coordinates of the space's mesh.
    ///
    /// # Errors
    /// [`Error::NoFp64`] for `f64` on a device without double precision;
    /// [`Error::InvalidArgument`] naming `space` if `disc` is not a
    /// discretization of it; device allocation errors.
    pub fn new(
        device: Arc<Device>,
        options: KernelOptions,
        space: &FunctionSpace,
        disc: Discretization<R>,
    ) -> Result<Self> {
        device.check_precision::<R>()?;
        let mesh = space.mesh();
        if disc.n_cells() != space.n_cells()
            || space.n_comp() != disc.n_comp()
            || space.element() != disc.element()
        {
            return Err(Error::arg(
                "space",
                "the space and the discretization do not match: build the discretization of this space",
            ));
        }
        // The space's map, then the padding's zeros: no padded host copy.
        let nodes = space.cell_nodes_all();
        let padding = vec![0u32; CELL_PADDING * space.n_basis()];
        let mut cell_nodes = device.alloc::<u32>(nodes.len() + padding.len(), "cell → node map")?;
        device.write(
            &mut cell_nodes,
            nodes,
            Transfer::Geometry,
            "cell → node map",
        )?;
        device.write_at(
            &mut cell_nodes,
            nodes.len(),
            &padding,
            Transfer::Geometry,
            "cell → node map",
        )?;
        let coords: Vec<R> = mesh.vertices().iter().map(|&x| R::from_f64(x)).collect();
        let mut vertices = device.alloc::<R>(coords.len(), "vertex coordinates")?;
        device.write(
            &mut vertices,
            &coords,
            Transfer::Geometry,
            "vertex coordinates",
        )?;
        let data = DeviceData {
            cell_nodes,
            vertices,
            stored_geometry: None,
            cell_coords: None,
            aux: None,
            constants: device.alloc::<R>(1, "constants")?,
            constants_host: Vec::new(),
            element_vectors: None,
            cell_u: None,
            cell_aux: None,
            windows: HashMap::new(),
            unused_real: device.alloc::<R>(1, "unused argument")?,
            unused_uint: device.alloc::<u32>(4, "unused argument")?,
        };
        Ok(OpenClOperator {
            device,
            options,
            n_nodes: space.n_nodes(),
            n_vertices: mesh.n_vertices(),
            space: space.clone(),
            disc,
            data,
            incidence: None,
            assembly_kernel: None,
            kernels: HashMap::new(),
            last_launch: None,
            pending: Vec::new(),
        })
    }

    /// The discretization.
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

    /// What the last launch covered (`None` before the first).
    pub fn last_launch(&self) -> Option<LaunchRecord> {
        self.last_launch
    }

    /// The kernel case of `physics` on this discretization.
    pub fn case_for<P: Pointwise + ?Sized>(&self, physics: &P) -> KernelCase {
        KernelCase::new(&self.disc, physics.info())
    }

    /// The launch configuration of the kernel `variant` of `physics` when
    /// none is given: the one autotuned for this device and case (see
    /// [`super::autotune`]) if the options hold a tuning cache
    /// ([`KernelOptions::tuning_cache`], none by default) with an entry
    /// for it, else the
    /// device default with stored geometry
    /// (on the H200, stored `J⁻¹`/`det J` beat geometry computed from
    /// gathered vertices in every measured case, BENCHMARKS.md; the
    /// autotuner tries both). Resolved on each call: a bound form
    /// ([`OpenClIntegrator`]) resolves its kernels' configurations once,
    /// when it is bound.
    pub fn config_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        variant: KernelVariant,
    ) -> Result<LaunchConfig> {
        let hash = physics.source_hash();
        let case = self.case_for(physics);
        let info = self.device.info();
        let key = TuneKey::new(info, &case, variant, hash, &self.options);
        let tuned = (self.options.tuning_cache.as_ref()).and_then(|c| c.lookup(info, &key));
        match tuned {
            Some(c) => Ok(c),
            None => default_config(&case, variant, GeometryMode::Stored, &self.options, info),
        }
    }

    /// The shape of the kernel `variant` of `physics` launched with `config`
    /// (`None`: [`OpenClOperator::config_for`]), checked against the device.
    pub fn shape_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        variant: KernelVariant,
        config: Option<LaunchConfig>,
    ) -> Result<KernelShape> {
        let config = match config {
            Some(c) => c,
            None => self.config_for(physics, variant)?,
        };
        let shape = KernelShape::new(&self.case_for(physics), variant, config, &self.options)?;
        shape.check_device(self.device.info())?;
        if shape.chunk > CELL_PADDING {
            return Err(Error::arg(
                "n_cb",
                format!(
                    "a chunk of {} cells (N_cb·N_bl·N_bs) exceeds the {CELL_PADDING} cells of \
                     padding: choose fewer batches per chunk",
                    shape.chunk
                ),
            ));
        }
        Ok(shape)
    }

    /// The generated OpenCL source of the kernel `variant` of `physics`
    /// launched with `config` (`None`: [`OpenClOperator::config_for`]).
    pub fn source_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        variant: KernelVariant,
        config: Option<LaunchConfig>,
    ) -> Result<String> {
        let shape = self.shape_for(physics, variant, config)?;
        Ok(integrate_source::<R, P>(
            &shape,
            self.disc.aux(),
            self.disc.tabulation(),
            self.disc.quadrature(),
            physics,
        ))
    }

    /// The compiler's resource report for that kernel (NVIDIA: registers,
    /// stack frame, spills; see [`super::context::resource_summary`]), empty
    /// if it was not built yet or the compiler reports nothing.
    pub fn resources_for<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        variant: KernelVariant,
        config: Option<LaunchConfig>,
    ) -> Result<String> {
        let source = self.source_for(physics, variant, config)?;
        Ok(self
            .device
            .build_log(&source)
            .map(|log| super::context::resource_summary(&log))
            .unwrap_or_default())
    }

    /// Builds (on first use; the device's program cache may already hold the
    /// program) the kernel `variant` of `physics` with `config` (`None`:
    /// [`OpenClOperator::config_for`]) and returns its key.
    fn compile<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        variant: KernelVariant,
        config: Option<LaunchConfig>,
    ) -> Result<KernelKey> {
        let config = match config {
            Some(c) => c,
            None => self.config_for(physics, variant)?,
        };
        let key = (physics.source_hash(), variant, config);
        if !self.kernels.contains_key(&key) {
            let shape = self.shape_for(physics, variant, Some(config))?;
            let source = self.source_for(physics, variant, Some(config))?;
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

    /// Computes and uploads the node windows of chunks of `chunk` cells with
    /// capacities `capacity`, once.
    fn prepare_windows(&mut self, chunk: usize, capacity: (usize, usize)) -> Result<()> {
        if self.data.windows.contains_key(&(chunk, capacity)) {
            return Ok(());
        }
        let (w, windowed) = windows::node_windows(&self.space, self.n_vertices, chunk, capacity);
        let mut buffer = self.device.alloc::<u32>(w.len().max(4), "node windows")?;
        self.device
            .write(&mut buffer, &w, Transfer::Geometry, "node windows")?;
        self.data
            .windows
            .insert((chunk, capacity), (buffer, windowed));
        Ok(())
    }

    /// Uploads `J⁻¹` and `det J` per cell (padded with zeros), once.
    fn prepare_stored_geometry(&mut self) -> Result<()> {
        if self.data.stored_geometry.is_some() {
            return Ok(());
        }
        let padded = self.disc.n_cells() + CELL_PADDING;
        let dim = self.disc.dim();
        let g = self.disc.geometry();
        let mut inv = g.inv_j().to_vec();
        inv.resize(padded * dim * dim, R::ZERO);
        let mut det = g.det_j().to_vec();
        det.resize(padded, R::ZERO);
        let mut inv_buf = self.device.alloc::<R>(inv.len(), "inverse Jacobians")?;
        let mut det_buf = self.device.alloc::<R>(det.len(), "Jacobian determinants")?;
        let what = "inverse Jacobians";
        self.device
            .write(&mut inv_buf, &inv, Transfer::Geometry, what)?;
        let what = "Jacobian determinants";
        self.device
            .write(&mut det_buf, &det, Transfer::Geometry, what)?;
        self.data.stored_geometry = Some((inv_buf, det_buf));
        Ok(())
    }

    /// Uploads what `shape` reads of the mesh beyond the node map and the
    /// vertices, once: `J⁻¹`/`det J` (stored geometry) and the cell
    /// coordinates (element kernel of a physics reading `x`).
    fn prepare_geometry(&mut self, shape: &KernelShape) -> Result<()> {
        let padded = self.disc.n_cells() + CELL_PADDING;
        let dim = self.disc.dim();
        if shape.geometry == GeometryMode::Stored {
            self.prepare_stored_geometry()?;
        }
        if shape.reads_x && !shape.reads_nodes() && self.data.cell_coords.is_none() {
            let coords = self.disc.geometry().coords().ok_or_else(|| {
                Error::arg(
                    "physics",
                    "reads x but the discretization stores no cell coordinates",
                )
            })?;
            let mut c = coords.to_vec();
            c.resize(padded * (dim + 1) * dim, R::ZERO);
            let mut buf = self.device.alloc::<R>(c.len(), "cell coordinates")?;
            self.device
                .write(&mut buf, &c, Transfer::Geometry, "cell coordinates")?;
            self.data.cell_coords = Some(buf);
        }
        Ok(())
    }

    /// Writes `constants` to the device unless they equal the last values
    /// written (so an evaluation with unchanged constants moves no data).
    fn upload_constants(&mut self, constants: &[R]) -> Result<()> {
        if constants.is_empty() || constants == self.data.constants_host.as_slice() {
            return Ok(());
        }
        if constants.len() > self.data.constants_host.len() {
            self.data.constants = self.device.alloc::<R>(constants.len(), "constants")?;
        }
        self.device.write(
            &mut self.data.constants,
            constants,
            Transfer::Coefficients,
            "constants",
        )?;
        self.data.constants_host = constants.to_vec();
        Ok(())
    }

    /// A buffer of `len` values for element vectors (allocated on first use).
    fn element_vectors_buffer(&mut self) -> Result<&Buffer<R>> {
        if self.data.element_vectors.is_none() {
            let len = (self.disc.n_cells() + CELL_PADDING) * self.disc.n_bt();
            self.data.element_vectors = Some(self.device.alloc::<R>(len, "element vectors")?);
        }
        Ok(self.data.element_vectors.as_ref().expect("allocated above"))
    }

    /// Enqueues one launch of the kernel `key` over all cells, with
    /// `inputs` and `out` as given; records it.
    fn launch(
        &mut self,
        key: &KernelKey,
        inputs: &Inputs<'_, R>,
        out: &Buffer<R>,
    ) -> Result<Event> {
        let n_cells = self.disc.n_cells();
        let shape = self.compiled(key)?.shape;
        if shape.window != (0, 0) {
            self.prepare_windows(shape.chunk, shape.window)?;
        }
        let compiled = self.compiled(key)?;
        let d = &self.data;
        let (windows, windowed_groups) = match d.windows.get(&(shape.chunk, shape.window)) {
            Some((buffer, windowed)) if shape.window != (0, 0) => (buffer, *windowed),
            _ => (&d.unused_uint, 0),
        };
        let (inv_j, det_j) = match &d.stored_geometry {
            Some((i, j)) => (i, j),
            None => (&d.unused_real, &d.unused_real),
        };
        let coordinates = if shape.reads_nodes() {
            &d.vertices
        } else {
            d.cell_coords.as_ref().unwrap_or(&d.unused_real)
        };
        let aux = inputs.aux.unwrap_or(&d.unused_real);
        let direction = inputs.direction.unwrap_or(&d.unused_real);
        let work_groups = shape.n_chunks(n_cells);
        let n_cells_arg = i32::try_from(n_cells)
            .map_err(|_| Error::arg("mesh", format!("{n_cells} cells exceed 2^31")))?;
        if work_groups == 0 {
            return Err(Error::arg("mesh", "the mesh has no cells"));
        }
        // Argument types and order match the kernel signature in
        // kernels/integrate.cl; every per-cell buffer holds at least
        // work_groups·chunk cells (CELL_PADDING ≥ chunk, checked in
        // shape_for), global vectors hold every node's values.
        let event = Launch::new(&compiled.kernel)
            .mem(inputs.u)?
            .mem(direction)?
            .mem(&d.cell_nodes)?
            .mem(aux)?
            .mem(inv_j)?
            .mem(det_j)?
            .mem(coordinates)?
            .mem(&d.constants)?
            .mem(out)?
            .mem(windows)?
            .value(n_cells_arg)?
            .enqueue(
                &self.device,
                work_groups * shape.n_t,
                Some(shape.n_t),
                "the integration kernel",
            )?;
        self.last_launch = Some(LaunchRecord {
            work_groups,
            chunk: shape.chunk,
            cells: n_cells,
            config: shape.config(),
            windowed_groups,
        });
        Ok(event)
    }

    /// Number of global nodes of the space.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }

    /// Number of mesh vertices.
    pub fn n_vertices(&self) -> usize {
        self.n_vertices
    }
}

/// Device time of a finished event in nanoseconds (profiling), if known.
pub(crate) fn event_ns(ev: &Event) -> Option<u64> {
    let start = ev.profiling_command_start().ok()?;
    let end = ev.profiling_command_end().ok()?;
    Some(end.saturating_sub(start))
}

/// Nanoseconds from the start of `first` to the end of `last` (profiling).
pub(crate) fn span_ns(first: &Event, last: &Event) -> Option<u64> {
    let start = first.profiling_command_start().ok()?;
    let end = last.profiling_command_end().ok()?;
    Some(end.saturating_sub(start))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod window_bounds;
