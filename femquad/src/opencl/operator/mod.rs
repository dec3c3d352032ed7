//! The OpenCL operator of one discretization: the mesh data kept on the
//! device, the thread-transposition kernels built for each physics, and
//! their launches.
//!
//! An [`OpenClOperator`] holds what does not depend on a physics (the
//! device, the kernel switches, the discretization, the mesh on the
//! device); a physics is bound on it once as an [`OpenClIntegrator`],
//! which evaluates two measures (named as the CEED benchmarks name them):
//!
//! * **the global residual** `F(u)` (BP) and the Jacobian action: `u` and
//!   `F` are device buffers; one launch gathers `u` through the
//!   cell → node map, integrates by thread transposition and adds each
//!   element-vector entry into `F` ([`Assembly::Atomic`]), or writes the
//!   element vectors, which a second launch sums per node in a fixed order
//!   ([`Assembly::Deterministic`], bitwise reproducible); with patches
//!   ([`LaunchConfig::patches`]: off by default, tried by the autotuner) a work-group
//!   whose cells' distinct nodes fit its capacities is a patch: it loads
//!   the values of its sorted node list once into local memory, gathers
//!   from there through 16-bit local node indices, and (atomic assembly)
//!   sums its element vectors there and stores the nodes it owns (all
//!   their cells are its own) with plain stores, adding only the nodes it
//!   shares atomically; the deterministic assembly keeps its order (the
//!   patch only changes where the gather reads from, never a sum). Other
//!   groups take the 32-bit global path, counted per launch
//!   ([`super::LaunchRecord::fallback_groups`]);
//! * **the element kernel** ([`OpenClIntegrator::integrate_cells`], BK, the
//!   paper's measure): cell-local coefficients in, element vectors out.
//!
//! Every cell is integrated on the device: the launch covers
//! `⌈n_cells / chunk⌉` work-groups, and the per-cell arrays on the device are
//! padded by [`super::mesh_data::CELL_PADDING`] cells (node 0, `det J = 0`) so that the last,
//! partial chunk needs no bounds checks; its missing cells are never stored.
//!
//! The mesh moves to the device once ([`super::mesh_data`]: the cell → node
//! map and the vertex coordinates when the operator is created, the stored
//! geometry, cell coordinates, incidence and patches on first use);
//! the constants and the auxiliary field when they are set.
//! [`super::DeviceStats`] counts every transfer.

mod bound;
mod diagonal;
mod element;
mod facets;
mod residual;
mod time;

use std::collections::HashMap;
use std::sync::Arc;

use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::Buffer;

use super::case::KernelCase;
use super::context::{Device, Transfer};
use super::launch::Launch;
use super::mesh_data::{CELL_PADDING, MeshData};
use super::options::KernelOptions;
use super::shape::{KernelShape, KernelVariant, LaunchConfig, default_config, default_geometry};
use super::source::{INTEGRATE_KERNEL, integrate_source};
use super::timing::{LaunchRecord, Run};
use super::tuning_cache::TuneKey;
use crate::discretization::Discretization;
use crate::physics::Pointwise;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};
use time::DeviceTime;

pub use bound::OpenClIntegrator;
pub(crate) use facets::DeviceFacets;
pub use residual::Assembly;

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

/// Device buffers of the coefficients and of the element kernel's inputs
/// and outputs (the mesh's are in [`MeshData`]).
struct Coefficients<R: Real> {
    /// The auxiliary field: `[node][k]` (field) or `[cell][k]` padded (P0).
    aux: Option<Buffer<R>>,
    /// Constants, and the values last written to them.
    constants: Buffer<R>,
    constants_host: Vec<R>,
    /// Element vectors `[cell][b][comp]`, padded.
    element_vectors: Option<Buffer<R>>,
    /// Whether `element_vectors` holds the element kernel's (not a
    /// deterministic residual's).
    element_vectors_of_cells: bool,
    /// Element kernel inputs: cell-local `u` and aux, padded.
    cell_u: Option<Buffer<R>>,
    cell_aux: Option<Buffer<R>>,
    /// The bound time state (`Integrate::set_time`), and the element
    /// kernel's cell-local one (`b` padded, `σ`, `t`).
    time: Option<DeviceTime<R>>,
    cell_time: Option<(Buffer<R>, R, R)>,
    /// Stand in for arguments a kernel variant does not read.
    unused_real: Buffer<R>,
    unused_uint: Buffer<u32>,
    unused_ushort: Buffer<u16>,
}

/// The thread-transposition kernels of one discretization on one device.
pub struct OpenClOperator<R: Real> {
    device: Arc<Device>,
    options: KernelOptions,
    disc: Discretization<R>,
    n_nodes: usize,
    /// The mesh on the device.
    mesh: MeshData<R>,
    data: Coefficients<R>,
    /// The deterministic sum's kernel (`kernels/assemble.cl`), built once.
    assembly_kernel: Option<Kernel>,
    kernels: HashMap<KernelKey, Compiled>,
    /// What the last evaluation enqueued.
    last: Run,
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
        if disc.n_cells() != space.n_cells()
            || space.n_comp() != disc.n_comp()
            || space.element() != disc.element()
        {
            return Err(Error::arg(
                "space",
                "the space and the discretization do not match: build the discretization of this space",
            ));
        }
        let mesh = MeshData::new(device.clone(), space)?;
        let data = Coefficients {
            aux: None,
            constants: device.alloc::<R>(1, "constants")?,
            constants_host: Vec::new(),
            element_vectors: None,
            element_vectors_of_cells: false,
            cell_u: None,
            cell_aux: None,
            time: None,
            cell_time: None,
            unused_real: device.alloc::<R>(1, "unused argument")?,
            unused_uint: device.alloc::<u32>(4, "unused argument")?,
            unused_ushort: device.alloc::<u16>(4, "unused argument")?,
        };
        Ok(OpenClOperator {
            device,
            options,
            n_nodes: space.n_nodes(),
            mesh,
            disc,
            data,
            assembly_kernel: None,
            kernels: HashMap::new(),
            last: Run::default(),
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

    /// The default launch configuration of the kernel `variant` of the
    /// physics whose source hashes to `hash` in `case`: the one autotuned
    /// for this device and case (see [`super::autotune`]) if the options
    /// hold a tuning cache ([`KernelOptions::tuning_cache`], none by
    /// default) with an entry for it, else the device default with the
    /// geometry of [`default_geometry`] (computed for the cell-parallel
    /// kernel of a scalar field, stored for the transposition; the
    /// autotuner tries both). A bound form resolves it once, when bound.
    fn default_config(
        &self,
        case: &KernelCase,
        hash: u64,
        variant: KernelVariant,
    ) -> Result<LaunchConfig> {
        let info = self.device.info();
        let key = TuneKey::new(info, case, variant, hash, &self.options);
        let tuned = (self.options.tuning_cache.as_ref()).and_then(|c| c.lookup(info, &key));
        match tuned {
            Some(c) => Ok(c),
            None => default_config(
                case,
                variant,
                default_geometry(case, variant),
                &self.options,
                info,
            ),
        }
    }

    /// The shape of the kernel `variant` in `case` launched with `config`,
    /// checked against the device and the cell padding.
    fn shape(
        &self,
        case: &KernelCase,
        variant: KernelVariant,
        config: LaunchConfig,
    ) -> Result<KernelShape> {
        let shape = KernelShape::new(case, variant, config, &self.options)?;
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

    /// The generated OpenCL source of `physics`' kernel of `shape`.
    fn source<P: Pointwise + ?Sized>(&self, physics: &P, shape: &KernelShape) -> String {
        integrate_source::<R, P>(
            shape,
            self.disc.aux(),
            self.disc.tabulation(),
            self.disc.quadrature(),
            physics,
        )
    }

    /// Builds (on first use; the device's program cache may already hold the
    /// program) the kernel `variant` of `physics` (source hash `hash`, in
    /// `case`) with `config`, uploads the mesh data it reads and returns
    /// its key.
    fn compile<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        (case, hash): (&KernelCase, u64),
        variant: KernelVariant,
        config: LaunchConfig,
    ) -> Result<KernelKey> {
        let key = (hash, variant, config);
        if !self.kernels.contains_key(&key) {
            let shape = self.shape(case, variant, config)?;
            let source = self.source(physics, &shape);
            let kernel = self.device.kernel(&source, INTEGRATE_KERNEL)?;
            self.kernels.insert(key, Compiled { kernel, shape });
        }
        let shape = self.compiled(&key)?.shape;
        self.mesh.prepare_for(&shape, &self.disc)?;
        Ok(key)
    }

    fn compiled(&self, key: &KernelKey) -> Result<&Compiled> {
        self.kernels
            .get(key)
            .ok_or_else(|| Error::internal("a kernel launched before it was built"))
    }

    /// `Ok` if `constants` are the ones on the device.
    fn check_bound_constants(&self, constants: &[R]) -> Result<()> {
        if constants == self.data.constants_host.as_slice() {
            return Ok(());
        }
        Err(Error::arg(
            "constants",
            format!(
                "the kernels evaluate with the bound constants {:?}, not {:?}: bind a form \
                 with these (Form::with_constants) or change them with \
                 Operator::set_constants",
                self.data.constants_host, constants
            ),
        ))
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

    /// Enqueues one launch of the kernel `key` (built by
    /// [`OpenClOperator::compile`], which uploaded the mesh data it reads)
    /// over all cells, with `inputs` and `out` as given; returns its event
    /// and what it covered.
    fn launch(
        &mut self,
        key: &KernelKey,
        inputs: &Inputs<'_, R>,
        out: &Buffer<R>,
    ) -> Result<(Event, LaunchRecord)> {
        let n_cells = self.disc.n_cells();
        let compiled = self.compiled(key)?;
        let shape = compiled.shape;
        let (d, m) = (&self.data, &self.mesh);
        let (offsets, group_nodes, local_nodes, owned, patch_groups) =
            match m.patches(shape.chunk, shape.patch) {
                Some(p) if shape.patch != (0, 0) => {
                    (&p.offsets, &p.nodes, &p.local_nodes, &p.owned, p.patches)
                }
                _ => (
                    &d.unused_uint,
                    &d.unused_uint,
                    &d.unused_ushort,
                    &d.unused_uint,
                    0,
                ),
            };
        let (inv_j, det_j) = m
            .stored_geometry()
            .unwrap_or((&d.unused_real, &d.unused_real));
        let coordinates = if shape.reads_nodes() {
            m.vertices()
        } else {
            m.cell_coords().unwrap_or(&d.unused_real)
        };
        let aux = inputs.aux.unwrap_or(&d.unused_real);
        // the time state: global, or the element kernel's cell-local one
        let time = if shape.variant.gathers() {
            self.time_args()
        } else {
            self.cell_time_args()
        };
        let direction = inputs.direction.unwrap_or(&d.unused_real);
        let work_groups = shape.n_chunks(n_cells);
        let n_cells_arg = i32::try_from(n_cells)
            .map_err(|_| Error::arg("mesh", format!("{n_cells} cells exceed 2^31")))?;
        let n_vertices = u32::try_from(m.space().mesh().n_vertices())
            .map_err(|_| Error::arg("mesh", "its vertices exceed the 32-bit node indices"))?;
        if work_groups == 0 {
            return Err(Error::arg("mesh", "the mesh has no cells"));
        }
        // Argument types and order match the kernel signature in
        // kernels/integrate.cl; every per-cell buffer holds at least
        // work_groups·chunk cells (CELL_PADDING ≥ chunk, checked in
        // OpenClOperator::shape), global vectors hold every node's values.
        let launch = Launch::new(&compiled.kernel)
            .mem(inputs.u)?
            .mem(direction)?
            .mem(m.cell_nodes())?
            .mem(aux)?
            .mem(inv_j)?
            .mem(det_j)?
            .mem(coordinates)?
            .mem(&d.constants)?;
        let event = self
            .push_time(launch, shape.reads, time)?
            .mem(out)?
            .mem(offsets)?
            .mem(group_nodes)?
            .mem(local_nodes)?
            .mem(owned)?
            .value(n_cells_arg)?
            .value(n_vertices)?
            .enqueue(
                &self.device,
                work_groups * shape.n_t,
                Some(shape.n_t),
                "the integration kernel",
            )?;
        let record = LaunchRecord {
            work_groups,
            chunk: shape.chunk,
            cells: n_cells,
            config: shape.config(),
            patch_groups,
            fallback_groups: if shape.patch == (0, 0) {
                0
            } else {
                work_groups - patch_groups
            },
        };
        Ok((event, record))
    }

    /// Number of global nodes of the space.
    pub fn n_nodes(&self) -> usize {
        self.n_nodes
    }

    /// Number of mesh vertices.
    pub fn n_vertices(&self) -> usize {
        self.mesh.space().mesh().n_vertices()
    }
}

#[cfg(test)]
mod patch_bounds;
#[cfg(test)]
mod tests;
