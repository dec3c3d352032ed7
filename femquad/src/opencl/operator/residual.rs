//! The global residual `F(u)` on the device: gather, integrate and assemble
//! fused, in one launch (atomic assembly) or two (deterministic assembly).

use opencl3::event::Event;
use opencl3::memory::Buffer;

use super::{CELL_PADDING, Inputs, OpenClOperator};
use crate::aux_space::AuxSpace;
use crate::opencl::context::Transfer;
use crate::opencl::launch::Launch;
use crate::opencl::shape::{AtomicAdd, KernelVariant, Output};
use crate::opencl::source::real_typedef;
use crate::opencl::timing::Run;
use crate::opencl::{DeviceInfo, DeviceVector};
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

    /// How the fused kernels deliver their results with this assembly on
    /// the device `info`.
    pub fn output(self, info: &DeviceInfo) -> Output {
        match self {
            Assembly::Atomic => Output::Atomic(AtomicAdd::for_device(info)),
            Assembly::Deterministic => Output::ElementVectors,
        }
    }
}

impl<R: Real> OpenClOperator<R> {
    /// The kernel variant of the global residual with `assembly` on this device.
    pub(super) fn residual_variant(&self, assembly: Assembly) -> KernelVariant {
        KernelVariant::Residual(assembly.output(self.device.info()))
    }

    /// The kernel variant of the Jacobian action with `assembly` on this device.
    pub(super) fn jacobian_action_variant(&self, assembly: Assembly) -> KernelVariant {
        KernelVariant::JacobianAction(assembly.output(self.device.info()))
    }

    /// Sets the auxiliary field from its global values: `[node][k]` for a
    /// field in the solution's element, `[cell][k]` for P0. Uploaded once;
    /// kept until the next call. Values that fail the check change
    /// nothing; a failed upload leaves the field unset.
    ///
    /// # Errors
    /// Those of [`crate::aux_space::check_values`]; device memory.
    pub(super) fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        let (n_nodes, n_cells) = (self.n_nodes, self.disc.n_cells());
        crate::aux_space::check_values(self.disc.aux(), aux, n_nodes, n_cells)?;
        let padded = match self.disc.aux() {
            AuxSpace::Cell { n_comp } => (n_cells + CELL_PADDING) * n_comp,
            _ => aux.len(),
        };
        let mut values = aux.to_vec();
        values.resize(padded, R::ZERO);
        let mut buf = match self.data.aux.take() {
            Some(b) => b,
            None => self.device.alloc::<R>(padded, "auxiliary field")?,
        };
        self.device
            .write(&mut buf, &values, Transfer::Coefficients, "auxiliary field")?;
        self.data.aux = Some(buf);
        Ok(())
    }

    /// Whether the auxiliary field holds values set by
    /// [`OpenClOperator::set_aux`].
    pub(super) fn aux_is_set(&self) -> bool {
        self.data.aux.is_some()
    }

    /// The auxiliary field cell-local on the host (`[cell][b][k]` for a
    /// field, `[cell][k]` for P0), downloaded from the device and gathered
    /// through the space's cell → node map; `None` if it was never set.
    ///
    /// # Errors
    /// Device errors (the download).
    pub(super) fn cell_aux(&self) -> Result<Option<Vec<R>>> {
        let Some(buf) = &self.data.aux else {
            return Ok(None);
        };
        let space = self.mesh.space();
        let what = "auxiliary field";
        let cells = match self.disc.aux() {
            AuxSpace::None => Vec::new(),
            AuxSpace::Cell { n_comp } => {
                let mut cells = vec![R::ZERO; space.n_cells() * n_comp];
                self.device.read(buf, &mut cells, what)?;
                cells
            }
            AuxSpace::Field { n_comp } => {
                let mut global = vec![R::ZERO; space.n_nodes() * n_comp];
                self.device.read(buf, &mut global, what)?;
                let aux_space = space.with_n_comp(n_comp)?;
                let mut cells = vec![R::ZERO; aux_space.n_cell_dofs()];
                aux_space.gather(&global, &mut cells)?;
                cells
            }
        };
        Ok(Some(cells))
    }

    /// Builds what the deterministic sum needs (the incidence, the
    /// element-vector buffer, its kernel), once.
    ///
    /// # Errors
    /// Build failures, device memory.
    pub(super) fn prepare_deterministic(&mut self) -> Result<()> {
        self.mesh.prepare_incidence()?;
        self.element_vectors_buffer()?;
        self.prepare_assembly_kernel()
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
        self.last = result?;
        Ok(())
    }

    fn residual_atomic(
        &mut self,
        key: &super::KernelKey,
        inputs: &Inputs<'_, R>,
        r: &mut Buffer<R>,
    ) -> Result<Run> {
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
        let (kernel, launch) = self.launch(key, inputs, r)?;
        Ok(Run {
            events: vec![fill, kernel],
            launch: Some(launch),
            facets: Vec::new(),
        })
    }

    fn residual_deterministic(
        &mut self,
        key: &super::KernelKey,
        inputs: &Inputs<'_, R>,
        r: &mut Buffer<R>,
    ) -> Result<Run> {
        let Some(ev) = self.data.element_vectors.take() else {
            return Err(missing_deterministic());
        };
        let integrate = self.launch(key, inputs, &ev);
        self.data.element_vectors = Some(ev);
        self.data.element_vectors_of_cells = false;
        let (integrate, launch) = integrate?;
        let assemble = self.launch_assembly(r)?;
        Ok(Run {
            events: vec![integrate, assemble],
            launch: Some(launch),
            facets: Vec::new(),
        })
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
        let n_dofs = self.n_nodes * self.disc.n_comp();
        let n_dofs_arg = i32::try_from(n_dofs)
            .map_err(|_| Error::arg("space", format!("{n_dofs} dofs exceed 2^31")))?;
        let (Some(kernel), Some((offsets, slots)), Some(ev)) = (
            &self.assembly_kernel,
            self.mesh.incidence(),
            &self.data.element_vectors,
        ) else {
            return Err(missing_deterministic());
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
}

/// The error of a deterministic sum launched before
/// [`OpenClOperator::prepare_deterministic`] (our bug).
fn missing_deterministic() -> Error {
    Error::internal(
        "the deterministic sum launched before its kernel, incidence or element vectors \
         were prepared",
    )
}
