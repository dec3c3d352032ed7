//! The global residual `F(u)` on the device: gather, integrate and assemble
//! fused, in one launch (atomic assembly) or two (deterministic assembly).

use opencl3::event::Event;
use opencl3::memory::Buffer;

use super::{CELL_PADDING, Inputs, OpenClOperator, span_ns};
use crate::aux_space::AuxSpace;
use crate::opencl::DeviceVector;
use crate::opencl::context::Transfer;
use crate::opencl::launch::Launch;
use crate::opencl::shape::{AtomicAdd, KernelVariant, LaunchConfig, Output};
use crate::opencl::source::real_typedef;
use crate::physics::Pointwise;
use crate::{Error, Real, Result};

/// The assembly kernel template (a fixed-order sum per global dof).
const ASSEMBLE_TEMPLATE: &str = include_str!("../../../../kernels/assemble.cl");

/// How the element-vector entries are summed into the global residual.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Assembly {
    /// Each entry is added atomically into `F` by the integration kernel
    /// itself: one launch, no element vectors in memory. The order of the
    /// additions varies from run to run, so `F` may differ in the last bits
    /// between evaluations. The atomic add is the device's fastest
    /// ([`AtomicAdd::for_device`]: NVIDIA's `red.global.add` through inline
    /// PTX, else a compare-and-swap loop).
    #[default]
    Atomic,
    /// The kernel writes the element vectors; a second launch sums, for
    /// every global dof, the entries of the cells containing its node in
    /// increasing cell order (through the node → cell-slot incidence).
    /// Bitwise identical from run to run, and the same order of additions
    /// as the native assembly. Costs the element vectors' round trip to
    /// memory and the incidence.
    Deterministic,
}

impl Assembly {
    /// `atomic` or `deterministic`.
    pub fn name(self) -> &'static str {
        match self {
            Assembly::Atomic => "atomic",
            Assembly::Deterministic => "deterministic",
        }
    }
}

impl<R: Real> OpenClOperator<R> {
    /// The kernel variant of the global residual with `assembly` on this device.
    pub fn residual_variant(&self, assembly: Assembly) -> KernelVariant {
        KernelVariant::Residual(self.output(assembly))
    }

    /// The kernel variant of the Jacobian action with `assembly` on this device.
    pub fn jacobian_action_variant(&self, assembly: Assembly) -> KernelVariant {
        KernelVariant::JacobianAction(self.output(assembly))
    }

    /// How the fused kernels deliver their results with `assembly` on this
    /// device.
    fn output(&self, assembly: Assembly) -> Output {
        match assembly {
            Assembly::Atomic => Output::Atomic(AtomicAdd::for_device(self.device.info())),
            Assembly::Deterministic => Output::ElementVectors,
        }
    }

    /// Sets the auxiliary field from its global values: `[node][k]` for a
    /// field in the solution's element, `[cell][k]` for P0. Uploaded once;
    /// kept until the next call.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` if the length is not
    /// `n_nodes·N_aux` (field) or `n_cells·N_aux` (P0), or the discretization
    /// has no auxiliary field; [`Error::NonFinite`] with the index in `aux`.
    pub fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        let (len, padded) = match self.disc.aux() {
            AuxSpace::None => {
                return Err(Error::arg(
                    "aux",
                    "the discretization has no auxiliary field (AuxSpace::None)",
                ));
            }
            AuxSpace::Field { n_comp } => (self.n_nodes * n_comp, self.n_nodes * n_comp),
            AuxSpace::Cell { n_comp } => (
                self.disc.n_cells() * n_comp,
                (self.disc.n_cells() + CELL_PADDING) * n_comp,
            ),
        };
        crate::error::check_len("aux", aux, len)?;
        crate::real::check_finite("aux", aux)?;
        let mut values = aux.to_vec();
        values.resize(padded, R::ZERO);
        if self.data.aux.is_none() {
            self.data.aux = Some(self.device.alloc::<R>(padded, "auxiliary field")?);
        }
        let buf = self.data.aux.as_mut().expect("allocated above");
        self.device
            .write(buf, &values, Transfer::Coefficients, "auxiliary field")
    }

    /// Whether [`OpenClOperator::set_aux`] was called.
    pub fn aux_is_set(&self) -> bool {
        self.data.aux.is_some()
    }

    /// Enqueues `r = F(u)` for the global vectors `u` and `r` (`n_nodes·N_comp`
    /// values each, [`crate::layout::global_dof`]) on the device, with
    /// `constants`, summed by `assembly`, launched with `config` (`None`:
    /// [`OpenClOperator::config_for`]). Nothing is read back: the queue is in
    /// order, so later device work sees `r`; [`OpenClOperator::wait_residual`]
    /// waits and returns the device time.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `u` or `r` (length, device),
    /// `constants` or `physics` (not fitting the discretization), or `aux`
    /// (an auxiliary field the physics reads that was never set); the
    /// kernel's build or launch errors.
    pub fn residual<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &DeviceVector<R>,
        constants: &[R],
        r: &mut DeviceVector<R>,
        assembly: Assembly,
        config: Option<LaunchConfig>,
    ) -> Result<()> {
        self.check_vector("r", r)?;
        self.integrate_global(physics, u, None, constants, r, assembly, config)
    }

    /// Enqueues `out = J(u)·v`, the Jacobian action from the physics'
    /// tangent ([`crate::physics::PointwiseInfo::opencl_tangent_name`]):
    /// the residual's fused path with the direction `v` gathered too and
    /// the tangent `(δf0, δf1)` at the quadrature points in place of
    /// `(f0, f1)`. Arguments and errors as [`OpenClOperator::residual`]
    /// (naming `v` and `out`); a physics without derivatives is an error.
    #[allow(clippy::too_many_arguments)]
    pub fn jacobian_action<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &DeviceVector<R>,
        v: &DeviceVector<R>,
        constants: &[R],
        out: &mut DeviceVector<R>,
        assembly: Assembly,
        config: Option<LaunchConfig>,
    ) -> Result<()> {
        self.check_vector("out", out)?;
        self.integrate_global(physics, u, Some(v), constants, out, assembly, config)
    }

    /// Builds the kernels of `F(u)` and, if `physics` has derivatives, of
    /// `J(u)·v` with `assembly` (default configurations) and uploads what
    /// they read of the mesh (geometry, for the deterministic assembly the
    /// incidence and the element-vector buffer): the work the first
    /// evaluation would otherwise do.
    ///
    /// # Errors
    /// Those of [`OpenClOperator::residual`] before the launch (a physics
    /// that does not fit the discretization, a build failure, device memory).
    pub fn prepare<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        assembly: Assembly,
    ) -> Result<()> {
        let mut variants = vec![self.residual_variant(assembly)];
        if !physics.info().opencl_tangent_name.is_empty() {
            variants.push(self.jacobian_action_variant(assembly));
        }
        for variant in variants {
            let key = self.compile(physics, variant, None)?;
            let shape = self.compiled(&key)?.shape;
            self.prepare_geometry(&shape)?;
            if shape.window != (0, 0) {
                self.prepare_windows(shape.chunk, shape.window)?;
            }
        }
        if assembly == Assembly::Deterministic {
            self.prepare_incidence()?;
            self.element_vectors_buffer()?;
            self.prepare_assembly_kernel()?;
        }
        Ok(())
    }

    /// `out = F(u)` (`direction` `None`) or `out = J(u)·direction`.
    #[allow(clippy::too_many_arguments)]
    fn integrate_global<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &DeviceVector<R>,
        direction: Option<&DeviceVector<R>>,
        constants: &[R],
        r: &mut DeviceVector<R>,
        assembly: Assembly,
        config: Option<LaunchConfig>,
    ) -> Result<()> {
        self.check_vector("u", u)?;
        if let Some(v) = direction {
            self.check_vector("v", v)?;
            if physics.info().opencl_tangent_name.is_empty() {
                return Err(crate::physics::PointwiseError::NoDerivatives {
                    physics: physics.info().name,
                }
                .into());
            }
        }
        self.disc.check_physics(physics, constants.len())?;
        crate::real::check_finite("constants", constants)?;
        let info = physics.info();
        if (info.reads.a || info.reads.grad_a) && !self.aux_is_set() {
            return Err(crate::aux_space::unset_aux(info.name));
        }
        let variant = match direction {
            None => self.residual_variant(assembly),
            Some(_) => self.jacobian_action_variant(assembly),
        };
        let key = self.compile(physics, variant, config)?;
        let shape = self.compiled(&key)?.shape;
        self.prepare_geometry(&shape)?;
        self.upload_constants(constants)?;
        self.enqueue_global(&key, u, direction, r, assembly)
    }

    /// Enqueues `out = F(u)` (`direction` `None`) or `out = J(u)·direction`
    /// with the compiled kernel `key` (whose geometry was prepared) and the
    /// constants on the device, summed by `assembly`: the launch alone,
    /// after the checks of `u`, `direction` and `r` against the space and
    /// the device.
    pub(super) fn enqueue_global(
        &mut self,
        key: &super::KernelKey,
        u: &DeviceVector<R>,
        direction: Option<&DeviceVector<R>>,
        r: &mut DeviceVector<R>,
        assembly: Assembly,
    ) -> Result<()> {
        self.check_vector("u", u)?;
        if let Some(v) = direction {
            self.check_vector("v", v)?;
        }
        self.check_vector("r", r)?;
        let aux = self.data.aux.take();
        let inputs = Inputs {
            u: u.buffer(),
            direction: direction.map(|v| v.buffer()),
            aux: aux.as_ref(),
        };
        let r = r.buffer_mut();
        let result = match assembly {
            Assembly::Atomic => self.residual_atomic(key, &inputs, r),
            Assembly::Deterministic => self.residual_deterministic(key, &inputs, r),
        };
        self.data.aux = aux;
        self.pending = result?;
        Ok(())
    }

    fn residual_atomic(
        &mut self,
        key: &super::KernelKey,
        inputs: &Inputs<'_, R>,
        r: &mut Buffer<R>,
    ) -> Result<Vec<Event>> {
        let len = self.n_nodes * self.disc.n_comp();
        let queue = self.device.live_queue()?;
        // SAFETY: `r` holds `len` values (checked by the caller).
        let fill = unsafe {
            queue.enqueue_fill_buffer(r, &[R::ZERO], 0, len * std::mem::size_of::<R>(), &[])
        }
        .map_err(|e| {
            let bytes = len * std::mem::size_of::<R>();
            self.device
                .failure("clEnqueueFillBuffer", "the residual", bytes, e)
        })?;
        let kernel = self.launch(key, inputs, r)?;
        Ok(vec![fill, kernel])
    }

    fn residual_deterministic(
        &mut self,
        key: &super::KernelKey,
        inputs: &Inputs<'_, R>,
        r: &mut Buffer<R>,
    ) -> Result<Vec<Event>> {
        self.prepare_incidence()?;
        self.element_vectors_buffer()?;
        let ev = self.data.element_vectors.take().expect("allocated above");
        let integrate = self.launch(key, inputs, &ev);
        self.data.element_vectors = Some(ev);
        let integrate = integrate?;
        let assemble = self.launch_assembly(r)?;
        Ok(vec![integrate, assemble])
    }

    /// Uploads the node → cell-slot incidence, once.
    fn prepare_incidence(&mut self) -> Result<()> {
        if self.incidence.is_some() {
            return Ok(());
        }
        let (offsets, slots) = self.space.node_incidence()?;
        let offsets: Vec<u32> = offsets.iter().map(|&o| o as u32).collect();
        let mut o = self.device.alloc::<u32>(offsets.len(), "node incidence")?;
        let mut s = self.device.alloc::<u32>(slots.len(), "node incidence")?;
        self.device
            .write(&mut o, &offsets, Transfer::Geometry, "node incidence")?;
        self.device
            .write(&mut s, slots, Transfer::Geometry, "node incidence")?;
        self.incidence = Some((o, s));
        Ok(())
    }

    /// Builds the assembly kernel, once.
    fn prepare_assembly_kernel(&mut self) -> Result<()> {
        if self.assembly_kernel.is_some() {
            return Ok(());
        }
        let source = format!(
            "{}#define N_COMP {}\n{}",
            real_typedef::<R>(),
            self.disc.n_comp(),
            ASSEMBLE_TEMPLATE
        );
        self.assembly_kernel = Some(self.device.kernel(&source, "assemble")?);
        Ok(())
    }

    /// Enqueues `r[dof] = Σ element-vector entries of dof`, in increasing
    /// cell order.
    fn launch_assembly(&mut self, r: &mut Buffer<R>) -> Result<Event> {
        self.prepare_assembly_kernel()?;
        let n_dofs = self.n_nodes * self.disc.n_comp();
        let n_dofs_arg = i32::try_from(n_dofs)
            .map_err(|_| Error::arg("space", format!("{n_dofs} dofs exceed 2^31")))?;
        let (Some(kernel), Some((offsets, slots)), Some(ev)) = (
            &self.assembly_kernel,
            &self.incidence,
            &self.data.element_vectors,
        ) else {
            return Err(Error::internal(
                "the deterministic sum launched before its kernel, incidence or element \
                 vectors were prepared",
            ));
        };
        const GROUP: usize = 256;
        // Argument types and order match kernels/assemble.cl; the
        // incidence covers every node, `r` holds n_dofs values.
        Launch::new(kernel)
            .mem(ev)?
            .mem(offsets)?
            .mem(slots)?
            .mem(r)?
            .value(n_dofs_arg)?
            .enqueue(
                &self.device,
                n_dofs.div_ceil(GROUP).max(1) * GROUP,
                Some(GROUP),
                "the assembly kernel",
            )
    }

    /// Checks that `v` (the argument `name`) is a global vector of this
    /// operator's space on its device.
    pub(super) fn check_vector(&self, name: &'static str, v: &DeviceVector<R>) -> Result<()> {
        let n = self.n_nodes * self.disc.n_comp();
        if v.len() != n {
            return Err(Error::arg(
                name,
                format!("expected {n} entries (the space's dofs), got {}", v.len()),
            ));
        }
        if !std::sync::Arc::ptr_eq(v.device(), &self.device) {
            return Err(Error::arg(
                name,
                format!(
                    "lives on device `{}`, not on the operator's `{}`",
                    v.device().info().name,
                    self.device.info().name
                ),
            ));
        }
        Ok(())
    }

    /// Waits for the last [`OpenClOperator::residual`] and returns its
    /// device time in nanoseconds, from the start of its first command
    /// (zeroing `r`, or the integration) to the end of its last (the
    /// integration, or the assembly).
    pub fn wait_residual(&mut self) -> Result<Option<u64>> {
        let events = std::mem::take(&mut self.pending);
        let (Some(first), Some(last)) = (events.first(), events.last()) else {
            return Ok(None);
        };
        self.device.wait(last, "the residual")?;
        Ok(span_ns(first, last))
    }

    /// Times `repetitions` residual evaluations `r = F(u)` (each waited
    /// for), returning each one's device time in nanoseconds. For benchmarks
    /// and the autotuner.
    #[allow(clippy::too_many_arguments)]
    pub fn time_residual<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &DeviceVector<R>,
        constants: &[R],
        r: &mut DeviceVector<R>,
        assembly: Assembly,
        config: LaunchConfig,
        repetitions: usize,
    ) -> Result<Vec<u64>> {
        let mut times = Vec::with_capacity(repetitions);
        for _ in 0..repetitions {
            self.residual(physics, u, constants, r, assembly, Some(config))?;
            times.push(self.wait_residual()?.unwrap_or(0));
        }
        Ok(times)
    }
}
