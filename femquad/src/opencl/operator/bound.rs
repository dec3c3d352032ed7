//! A form's physics bound on the device ([`OpenClIntegrator`]): its kernels
//! (the residual's, the Jacobian action's and the diagonal's) built and
//! their configurations resolved once, the mesh data, constants and
//! auxiliary field uploaded; an evaluation is then a launch only. The
//! physics' source is hashed once, when it is bound.

use std::borrow::Cow;
use std::sync::Arc;

use opencl3::kernel::Kernel;

use super::{Assembly, DeviceFacets, KernelKey, OpenClOperator};
use crate::discretization::{CellInputs, Discretization};
use crate::native::BoundaryIntegrals;
use crate::opencl::case::KernelCase;
use crate::opencl::launch::Launch;
use crate::opencl::shape::AtomicAdd;
use crate::opencl::shape::{KernelShape, KernelVariant, LaunchConfig};
use crate::opencl::source::element_matrix_source;
use crate::opencl::timing::Run;
use crate::opencl::tuning_cache::TuneKey;
use crate::opencl::{Device, DeviceVector, KernelOptions};
use crate::physics::PointwiseEval;
use crate::seam::Integrate;
use crate::{Error, Real, Result};

/// The kernels of one physics and assembly on one operator.
struct BoundKernels {
    assembly: Assembly,
    residual: KernelKey,
    /// The Jacobian action's and the diagonal's, for a physics with derivatives.
    tangent: Option<(KernelKey, Kernel)>,
    /// The element kernel's configuration; built on first use.
    element: LaunchConfig,
}

/// A form's physics bound on an OpenCL operator ([`Integrate`] for device
/// vectors): what a launch needs — kernels, launch configurations, shapes,
/// geometry — is resolved when it is bound, not per call.
///
/// Besides the global evaluations of [`Integrate`], it runs the element
/// kernel ([`OpenClIntegrator::set_cell_inputs`],
/// [`OpenClIntegrator::integrate_cells`],
/// [`OpenClIntegrator::read_element_vectors`]); every evaluation records
/// its commands ([`OpenClIntegrator::last_run`]) for timing. Benchmarks,
/// the autotuner and tests choose a kernel's launch configuration with
/// [`OpenClIntegrator::set_config`] and query its shape, source and build
/// report.
pub struct OpenClIntegrator<R: Real> {
    pub(super) op: OpenClOperator<R>,
    physics: Arc<dyn PointwiseEval<R>>,
    /// The physics' case on this discretization and its source hash.
    case: KernelCase,
    hash: u64,
    kernels: BoundKernels,
    /// The form's boundary terms on the device (`None` without any).
    facets: Option<DeviceFacets<R>>,
}

impl<R: Real> OpenClIntegrator<R> {
    /// Binds `physics` with `constants` on `op` with `assembly`: checks
    /// that the physics fits the discretization, resolves its kernels'
    /// configurations ([`OpenClIntegrator::config`]), builds the kernels of
    /// `F(u)`, `J(u)·v` and the diagonal and uploads the constants and the
    /// mesh data the kernels read.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `physics` or `constants`
    /// if they do not fit the discretization; build failures, device memory.
    pub fn new(
        mut op: OpenClOperator<R>,
        physics: Arc<dyn PointwiseEval<R>>,
        constants: &[R],
        assembly: Assembly,
    ) -> Result<Self> {
        op.discretization()
            .check_physics(&*physics, constants.len())?;
        crate::real::check_finite("constants", constants)?;
        op.upload_constants(constants)?;
        let case = KernelCase::new(op.discretization(), physics.info());
        let hash = physics.source_hash();
        let element = op.default_config(&case, hash, KernelVariant::Element)?;
        let mut bound = OpenClIntegrator {
            kernels: BoundKernels {
                assembly,
                residual: (hash, op.residual_variant(assembly), element),
                tangent: None,
                element,
            },
            op,
            physics,
            case,
            hash,
            facets: None,
        };
        bound.bind_assembly(assembly)?;
        Ok(bound)
    }

    /// The discretization.
    pub fn discretization(&self) -> &Discretization<R> {
        self.op.discretization()
    }

    /// The device.
    pub fn device(&self) -> &Arc<Device> {
        self.op.device()
    }

    /// The kernel switches.
    pub fn options(&self) -> &KernelOptions {
        self.op.options()
    }

    /// Number of global nodes of the space.
    pub fn n_nodes(&self) -> usize {
        self.op.n_nodes()
    }

    /// Number of mesh vertices.
    pub fn n_vertices(&self) -> usize {
        self.op.n_vertices()
    }

    /// The physics' kernel case on this discretization.
    pub fn case(&self) -> &KernelCase {
        &self.case
    }

    /// The key of the kernel `variant` in a tuning cache
    /// ([`crate::opencl::TuningCache`]).
    pub fn tune_key(&self, variant: KernelVariant) -> TuneKey {
        let info = self.device().info();
        TuneKey::new(info, &self.case, variant, self.hash, self.options())
    }

    /// How element vectors are summed.
    pub fn assembly(&self) -> Assembly {
        self.kernels.assembly
    }

    /// The kernel variant of `F(u)` with the bound assembly on this device.
    pub fn residual_variant(&self) -> KernelVariant {
        self.kernels.residual.1
    }

    /// The kernel variant of `J(u)·v` with the bound assembly on this device.
    pub fn jacobian_action_variant(&self) -> KernelVariant {
        self.op.jacobian_action_variant(self.kernels.assembly)
    }

    /// Sums element vectors by `assembly` from now on, with its kernels
    /// built now (in their default configurations).
    ///
    /// # Errors
    /// Build failures, device memory.
    pub fn set_assembly(&mut self, assembly: Assembly) -> Result<()> {
        if assembly != self.kernels.assembly {
            self.bind_assembly(assembly)?;
        }
        Ok(())
    }

    /// The launch configuration bound for the kernel `variant`: the
    /// default ([`KernelOptions::tuning_cache`]'s entry for this device and
    /// case, else the device default with stored geometry), resolved when
    /// bound, or the one last given to [`OpenClIntegrator::set_config`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `variant` if it is not one of the
    /// bound kernels' (the element kernel, and `F(u)` and — with
    /// derivatives — `J(u)·v` with the bound assembly).
    pub fn config(&self, variant: KernelVariant) -> Result<LaunchConfig> {
        let k = &self.kernels;
        if variant == KernelVariant::Element {
            return Ok(k.element);
        }
        match &k.tangent {
            Some((key, _)) if key.1 == variant => Ok(key.2),
            _ if k.residual.1 == variant => Ok(k.residual.2),
            _ => Err(self.unbound(variant)),
        }
    }

    /// Launches the kernel `variant` with `config` from now on (built now).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `variant` as
    /// [`OpenClIntegrator::config`]; the errors of
    /// [`OpenClIntegrator::shape`] (a configuration the device cannot
    /// launch, named); build failures, device memory.
    pub fn set_config(&mut self, variant: KernelVariant, config: LaunchConfig) -> Result<()> {
        self.config(variant)?;
        let key = self.compile(variant, config)?;
        let k = &mut self.kernels;
        if variant == KernelVariant::Element {
            k.element = config;
        } else if let Some((tangent, _)) = k.tangent.as_mut().filter(|(t, _)| t.1 == variant) {
            *tangent = key;
        } else {
            k.residual = key;
        }
        Ok(())
    }

    /// The shape of the kernel `variant` launched with `config`, checked
    /// against the device.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the configuration's parameter
    /// (`n_cb`, …) or [`Error::DeviceLimit`] if the device cannot launch it.
    pub fn shape(&self, variant: KernelVariant, config: LaunchConfig) -> Result<KernelShape> {
        self.op.shape(&self.case, variant, config)
    }

    /// The generated OpenCL source of the kernel `variant` launched with
    /// `config`.
    ///
    /// # Errors
    /// Those of [`OpenClIntegrator::shape`].
    pub fn source(&self, variant: KernelVariant, config: LaunchConfig) -> Result<String> {
        let shape = self.shape(variant, config)?;
        Ok(self.op.source(&*self.physics, &shape))
    }

    /// The compiler's resource report for the kernel `variant` launched
    /// with `config` (NVIDIA: registers, stack frame, spills; see
    /// [`crate::opencl::context::resource_summary`]), empty if it was not
    /// built yet or the compiler reports nothing.
    ///
    /// # Errors
    /// Those of [`OpenClIntegrator::shape`].
    pub fn resources(&self, variant: KernelVariant, config: LaunchConfig) -> Result<String> {
        let source = self.source(variant, config)?;
        Ok(self
            .device()
            .build_log(&source)
            .map(|log| crate::opencl::context::resource_summary(&log))
            .unwrap_or_default())
    }

    /// Uploads the cell-local inputs of the element kernel (`u`:
    /// `n_cells·N_bt` values, [`crate::layout::cell_dof`]; `aux`:
    /// `n_cells` times the auxiliary values per cell), kept until the next
    /// call. The kernel evaluates with the bound constants (the form's,
    /// changed only by [`Operator::set_constants`](crate::operator::Operator::set_constants)):
    /// `inputs.constants` must equal them.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `u` or `aux` (length) or
    /// `constants` (not the bound ones), [`Error::NonFinite`] with the
    /// index; device memory.
    pub fn set_cell_inputs(&mut self, inputs: &CellInputs<'_, R>) -> Result<()> {
        self.op.check_bound_constants(inputs.constants)?;
        self.op.set_cell_inputs(inputs)
    }

    /// Enqueues the element kernel (BK: element vectors of every cell from
    /// the cell-local inputs on the device, the paper's measure of the
    /// kernel alone) in the bound element configuration.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `inputs` if
    /// [`OpenClIntegrator::set_cell_inputs`] was not called; the kernel's
    /// build (on first use) and launch errors.
    pub fn integrate_cells(&mut self) -> Result<()> {
        let key = self.compile(KernelVariant::Element, self.kernels.element)?;
        self.op.enqueue_element(&key)
    }

    /// Reads the element vectors of the last
    /// [`OpenClIntegrator::integrate_cells`] into `out` (`n_cells·N_bt`
    /// entries, [`crate::layout::cell_dof`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `out` (length, or no element
    /// kernel run since the last deterministic residual); device errors.
    pub fn read_element_vectors(&self, out: &mut [R]) -> Result<()> {
        self.op.read_element_vectors(out)
    }

    /// What the last evaluation enqueued (its events, for
    /// [`Run::wait_ns`], the integration launch's extent, and the boundary
    /// terms' facet launches, [`Run::facet_launches`] and [`Run::facet_ns`]).
    pub fn last_run(&self) -> &Run {
        &self.op.last
    }

    /// Builds the kernel `variant` of the bound physics with `config`.
    fn compile(&mut self, variant: KernelVariant, config: LaunchConfig) -> Result<KernelKey> {
        let bound = (&self.case, self.hash);
        self.op.compile(&*self.physics, bound, variant, config)
    }

    /// Builds the kernels of `F(u)` and, for a physics with derivatives,
    /// of `J(u)·v` and the diagonal with `assembly`, in their default
    /// configurations, and what they read (geometry, patches; for the
    /// deterministic sum the incidence and its kernel).
    fn bind_assembly(&mut self, assembly: Assembly) -> Result<()> {
        let default = |s: &Self, variant| s.op.default_config(&s.case, s.hash, variant);
        let variant = self.op.residual_variant(assembly);
        let residual = self.compile(variant, default(self, variant)?)?;
        let tangent = if self.physics.info().opencl_tangent_name.is_empty() {
            None
        } else {
            let variant = self.op.jacobian_action_variant(assembly);
            let action = self.compile(variant, default(self, variant)?)?;
            Some((action, self.op.diagonal_kernel(&*self.physics)?))
        };
        if assembly == Assembly::Deterministic {
            self.op.prepare_deterministic()?;
        }
        let element = self.kernels.element;
        self.kernels = BoundKernels {
            assembly,
            residual,
            tangent,
            element,
        };
        Ok(())
    }

    /// The bound form with the boundary terms `boundary` on the device
    /// (`kernels/facet_integrate.cl`): added into `F(u)`, `J(u)·v` and the
    /// point-block diagonal after the cells, at the bound time state, their
    /// launches recorded in [`OpenClIntegrator::last_run`]
    /// ([`Run::facet_launches`](crate::opencl::timing::Run::facet_launches),
    /// [`Run::facet_ns`](crate::opencl::timing::Run::facet_ns)). An
    /// [`Operator`](crate::operator::Operator) binds a form's terms so;
    /// this is for code that binds an integrator itself (the benchmark).
    /// Without terms the integrator is returned as it is.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `boundary` if it was prepared for a
    /// space of other sizes than this integrator's, `facets` if a term's
    /// set is of another mesh; device errors (memory, uploads);
    /// [`Error::InvalidArgument`] (`mesh`) if an index exceeds the device's
    /// 32-bit indices.
    pub fn with_boundary(mut self, boundary: &BoundaryIntegrals<R>) -> Result<Self> {
        if boundary.is_empty() {
            return Ok(self);
        }
        let space = self.op.mesh.space();
        let sizes = [space.dim(), space.n_basis(), space.n_comp()];
        if boundary.sizes() != sizes {
            return Err(Error::arg(
                "boundary",
                format!(
                    "its terms were prepared for a space of [dim, N_b, N_comp] = {:?}, this \
                     integrator's is {sizes:?}: prepare them on the integrator's space \
                     (BoundaryIntegrals::new)",
                    boundary.sizes()
                ),
            ));
        }
        for t in boundary.terms() {
            t.term.set().check_mesh(space.mesh())?;
        }
        let facets = DeviceFacets::new(self.device(), space, boundary)?;
        self.facets = Some(facets);
        Ok(self)
    }

    /// Whether the bound form has boundary terms (integrated by
    /// `kernels/facet_integrate.cl` after the cell kernels).
    pub fn has_boundary_terms(&self) -> bool {
        self.facets.is_some()
    }

    /// The error of a kernel variant that is not bound.
    fn unbound(&self, variant: KernelVariant) -> Error {
        Error::arg(
            "variant",
            format!(
                "{variant:?} is not a kernel of this bound form (its element kernel, F(u){} \
                 with the {} assembly): set the assembly first",
                if self.kernels.tangent.is_some() {
                    " and J(u)·v"
                } else {
                    ""
                },
                self.kernels.assembly.name()
            ),
        )
    }

    /// Checks that an auxiliary field the physics reads was set (else its
    /// buffer would be a 1-value stand-in): the one check of the device
    /// evaluations.
    fn check_aux(&self) -> Result<()> {
        crate::aux_space::check_set(self.physics.info(), self.op.aux_is_set())
    }

    /// The tangent kernels, or the error of a physics without derivatives.
    fn tangent(&self) -> Result<&(KernelKey, Kernel)> {
        self.kernels
            .tangent
            .as_ref()
            .ok_or_else(|| no_derivatives(&*self.physics))
    }
}

/// For the assembled matrix on the device ([`crate::opencl::matrix`]):
/// the per-cell kernels of the bound physics' Jacobian.
impl<R: Real> OpenClIntegrator<R> {
    /// The source of the element matrices of the bound physics' Jacobian
    /// (`kernels/element_matrix.cl`): summed atomically into CSR values if
    /// `atomic`, else written per cell.
    ///
    /// # Errors
    /// A physics without derivatives.
    pub(crate) fn element_matrix_source(&self, atomic: bool) -> Result<String> {
        self.tangent()?;
        let disc = self.discretization();
        let sizes = [disc.dim(), disc.n_b(), disc.n_comp(), disc.n_q()];
        let atomic = atomic.then(|| AtomicAdd::for_device(self.device().info()));
        Ok(element_matrix_source::<R, _>(
            sizes,
            disc.aux(),
            disc.tabulation(),
            disc.quadrature(),
            &*self.physics,
            atomic,
        ))
    }

    /// A launch of a per-cell `kernel` of the bound physics' Jacobian at
    /// `u`, its first arguments set as `kernels/jacobian_diagonal.cl` and
    /// `kernels/element_matrix.cl` take them: `u`, the cell → node map, the
    /// auxiliary field, `J⁻¹`, `det J`, the vertex coordinates, the
    /// constants. The stored geometry was uploaded when the physics' tangent
    /// kernels were bound.
    ///
    /// # Errors
    /// A physics without derivatives; `aux` if the physics reads a field
    /// that was never set; `u` of a wrong length or on another device.
    pub(crate) fn cell_launch<'k>(
        &'k self,
        kernel: &'k Kernel,
        u: &DeviceVector<R>,
    ) -> Result<Launch<'k>> {
        self.tangent()?;
        self.check_aux()?;
        self.op.check_vector("u", u)?;
        let (d, m) = (&self.op.data, &self.op.mesh);
        let (inv_j, det_j) = m.stored_geometry().ok_or_else(|| {
            Error::internal("a Jacobian kernel launched before its geometry was uploaded")
        })?;
        let launch = Launch::new(kernel)
            .mem(u.buffer())?
            .mem(m.cell_nodes())?
            .mem(d.aux.as_ref().unwrap_or(&d.unused_real))?
            .mem(inv_j)?
            .mem(det_j)?
            .mem(m.vertices())?
            .mem(&d.constants)?;
        let reads = self.physics.info().reads;
        self.op.push_time(launch, reads, self.op.time_args())
    }

    /// Adds the bound boundary terms' element matrices of `J(u)` (at the
    /// bound time state: `σ·∂f0/∂u_t + ∂f0/∂u`) into `values`, the values
    /// of a CSR matrix of the form's space that hold the cells' (enqueued
    /// before), by `assembly`, through the matrix's cell position map
    /// `positions` and `row_ptr` ([`DeviceFacets::add_matrices`]); nothing
    /// without boundary terms.
    ///
    /// # Errors
    /// Those of [`DeviceFacets::add_matrices`].
    pub(crate) fn add_facet_matrices(
        &mut self,
        u: &DeviceVector<R>,
        positions: &opencl3::memory::Buffer<u32>,
        row_ptr: &opencl3::memory::Buffer<u32>,
        values: &mut DeviceVector<R>,
        assembly: Assembly,
    ) -> Result<()> {
        let time = self.op.time_args();
        match &mut self.facets {
            Some(f) => f.add_matrices(u, positions, row_ptr, values, assembly, time),
            None => Ok(()),
        }
    }
}

/// The error of a Jacobian asked of `physics`, which has no derivatives.
fn no_derivatives<R: Real>(physics: &dyn PointwiseEval<R>) -> Error {
    crate::physics::PointwiseError::NoDerivatives {
        physics: physics.info().name,
    }
    .into()
}

impl<R: Real> Integrate<R> for OpenClIntegrator<R> {
    type Vector = DeviceVector<R>;

    fn residual(&mut self, u: &DeviceVector<R>, r: &mut DeviceVector<R>) -> Result<()> {
        self.check_aux()?;
        let (key, assembly) = (self.kernels.residual, self.kernels.assembly);
        self.op.enqueue_global(&key, u, None, r, assembly)?;
        if let Some(f) = &mut self.facets {
            self.op.last.facets = f.add(u, None, r, assembly, self.op.time_args())?;
        }
        Ok(())
    }

    fn jacobian_action(
        &mut self,
        u: &DeviceVector<R>,
        v: &DeviceVector<R>,
        out: &mut DeviceVector<R>,
    ) -> Result<()> {
        let key = self.tangent()?.0;
        self.check_aux()?;
        let assembly = self.kernels.assembly;
        self.op.enqueue_global(&key, u, Some(v), out, assembly)?;
        if let Some(f) = &mut self.facets {
            self.op.last.facets = f.add(u, Some(v), out, assembly, self.op.time_args())?;
        }
        Ok(())
    }

    fn jacobian_diagonal(&mut self, u: &DeviceVector<R>, out: &mut DeviceVector<R>) -> Result<()> {
        let Some((_, kernel)) = &self.kernels.tangent else {
            return Err(no_derivatives(&*self.physics));
        };
        self.check_aux()?;
        self.op
            .enqueue_diagonal(kernel, self.physics.info().reads, u, out)?;
        if let Some(f) = &mut self.facets {
            self.op.last.facets = f.add_diagonal(u, out, self.op.time_args())?;
        }
        Ok(())
    }

    fn set_time(&mut self, time: Option<(R, R, &DeviceVector<R>)>) -> Result<()> {
        self.op.set_time(time)
    }

    fn set_constants(&mut self, constants: &[R]) -> Result<()> {
        self.op.upload_constants(constants)
    }

    fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        self.op.set_aux(aux)
    }

    fn cell_aux(&self) -> Result<Cow<'_, [R]>> {
        self.check_aux()?;
        let disc = self.discretization();
        let cells = match self.op.cell_aux()? {
            Some(cells) => cells,
            None => vec![R::ZERO; disc.n_cells() * disc.aux_per_cell()],
        };
        Ok(Cow::Owned(cells))
    }
}
