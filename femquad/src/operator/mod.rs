//! The operator of a [`Form`] bound on a backend: global residuals
//! `F(u)` of one discretized field and their Jacobians.
//!
//! ```text
//! F(u)_i = Σ_cells ∫ φ_i · f0(u, ∇u, a, ∇a, x; c) + ∇φ_i : f1(u, ∇u, a, ∇a, x; c) dx
//!        + Σ_terms Σ_{F ∈ S_t} ∫_F φ_i · f0_t(u, ∇u, x, n; c_t) ds
//! ```
//!
//! (the boundary terms of the form, [`Form::with_boundary`]: natively added
//! into the facets' cells' element vectors before assembly,
//! [`BoundaryIntegrals`]; on a device integrated after the
//! cells by `kernels/facet_integrate.cl`, one work-item per facet point,
//! then one per facet basis function, added atomically or summed per node
//! in a fixed order as the cells are).
//!
//! In libCEED's terms this is the *operator*: the space's restriction
//! (gather `E u` through the cell → node map, and its transpose, the
//! assembly `Eᵀ`), the *basis* (tabulation at the quadrature points) and
//! the *Q-function* (the `#[pointwise]` physics), composed as
//! `F(u) = Eᵀ B_ᵀ D(B E u)`.
//!
//! * **OpenCL** ([`Backend::OpenCl`]): one fused launch gathers `u` on the
//!   device, integrates by thread transposition and sums into `F` (atomic
//!   assembly), or writes element vectors that a second launch sums in a
//!   fixed order (deterministic assembly); see
//!   [`crate::opencl::OpenClIntegrator`]. Every cell is integrated on the
//!   device.
//! * **Native** ([`Backend::Native`]): gather on the host, the native
//!   integrator, assembly `Eᵀ` on the host — the reference.
//!
//! The operator reaches either through [`Integrator`], the form bound on
//! its backend ([`Backend::bind`]); it names no backend module.

use crate::aux_space::AuxSpace;
use crate::backend::{Assembly, Backend, BoundaryIntegrals, Integrator, Location, Vector};
use crate::discretization::Discretization;
use crate::error::check_len;
use crate::form::Form;
use crate::physics::PointwiseEval;
use crate::space::FunctionSpace;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

mod jacobian;
mod time;

pub use time::TimeState;

/// A [`Form`] bound on a [`Backend`]: evaluates global residuals
/// `F(u)_i = Σ_cells ∫ φ_i·f0 + ∇φ_i:f1` and the Jacobian `J(u) = ∂F/∂u`
/// of its physics with its constants.
///
/// Built once ([`Operator::new`]: the form checked, the kernels built and
/// the mesh data uploaded on a device), then applied to vectors only:
/// [`Operator::apply`], [`Operator::jacobian_action`],
/// [`Operator::jacobian_diagonal`], [`Operator::assemble_jacobian`].
/// Changing the constants or the auxiliary field is explicit
/// ([`Operator::set_constants`], [`Operator::set_aux`]), and so is the
/// time state of a transient physics ([`Operator::set_time`]: with `t` and
/// `u_t = σ·u + b` bound, `F(u)` is `F(t, u, σ·u + b)` and `J(u)` the step
/// Jacobian `σ·∂F/∂u_t + ∂F/∂u`; a physics that reads `u_t` is refused
/// without one).
///
/// Its vectors live where it computes ([`Operator::vector`],
/// [`Operator::vector_from`]): on the device for [`Backend::OpenCl`], on
/// the host for [`Backend::Native`]. The patch test of the Laplacian:
/// for a linear `u`, `F(u)_i = ∫ ∇φ_i·∇u` vanishes at interior nodes and
/// is the boundary flux `∫_∂Ω φ_i ∇u·n` at the others.
///
/// ```
/// use femquad::physics::builtin::Laplacian;
/// use femquad::prelude::*;
///
/// let mesh = unit_square(2, &MeshOptions::default())?;
/// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1)?, 1)?;
/// let form = Form::new(space, Laplacian)?;
/// let backend = Backend::opencl_from_env()?;
/// let mut op = Operator::<f64>::new(form, &backend)?;
///
/// let values = op.space().interpolate(|x, u| u[0] = x[0] + 2.0 * x[1]);
/// let u = op.vector_from(&values)?; // uploaded
/// let mut r = op.vector()?; // zeros, on the device
/// op.apply(&u, &mut r)?; // r = F(u)
/// let r = r.to_host()?;
/// assert!(r[4].abs() < 1e-14); // vertex 4 = (0.5, 0.5), the interior one
/// // at the corner (0, 0): ∇u·n = −2 below and −1 on the left, ∫φ = 1/4 on each side
/// assert!((r[0] + 0.75).abs() < 1e-14);
/// # Ok::<(), femquad::Error>(())
/// ```
pub struct Operator<R: Real> {
    form: Form<R>,
    /// The form bound on its backend, which owns the auxiliary field's
    /// values and whether they were set.
    integrator: Integrator<R>,
    /// The form's boundary terms prepared on the host (facet tabulations
    /// and geometries), shared with a native integrator; the host
    /// assembled Jacobian adds their element matrices.
    boundary: std::sync::Arc<BoundaryIntegrals<R>>,
    /// The sparsity of the assembled Jacobian, computed on first use.
    pattern: Option<std::sync::Arc<crate::sparse::SparsityPattern>>,
    /// The bound time state ([`Operator::set_time`]).
    time: Option<TimeState<R>>,
}

impl<R: Real> Operator<R> {
    /// Binds `form` on `backend` (over the mesh of its space): checks
    /// that the form has what its physics reads, and on a device builds the
    /// kernels of `F(u)` and (if the physics has derivatives) of `J(u)·v`
    /// and uploads the mesh data they read (the geometry — `J⁻¹` and
    /// `det J` per cell — and for the deterministic assembly the node
    /// incidence) and the constants, so that every evaluation after costs
    /// the same.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `form` if its physics (or a
    /// boundary term's) takes constants or an auxiliary field the form
    /// lacks; device errors (no fp64 for `f64`, a build failure, memory).
    pub fn new(form: Form<R>, backend: &Backend) -> Result<Self> {
        form.check_complete()?;
        let boundary = std::sync::Arc::new(BoundaryIntegrals::new(form.space(), form.boundary())?);
        let integrator = backend.bind(&form, &boundary)?;
        Ok(Operator {
            form,
            integrator,
            boundary,
            pattern: None,
            time: None,
        })
    }

    /// The bound form.
    pub fn form(&self) -> &Form<R> {
        &self.form
    }

    /// The physics of the form.
    pub fn physics(&self) -> &dyn PointwiseEval<R> {
        self.form.physics()
    }

    /// Replaces the physics' constants (converted to `R`); the next
    /// evaluations use them.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `constants` if the physics takes
    /// another number; [`Error::NonFinite`] naming `constants` and the index
    /// of a NaN or ±∞.
    pub fn set_constants(&mut self, constants: &[f64]) -> Result<()> {
        self.form.set_constants(constants)?;
        self.integrator.set_constants(self.form.constants())
    }

    /// The solution space.
    pub fn space(&self) -> &FunctionSpace {
        self.form.space()
    }

    /// The discretization.
    pub fn discretization(&self) -> &Discretization<R> {
        self.integrator.discretization()
    }

    /// The form bound on its backend (for backend-specific queries:
    /// [`Integrator::opencl`] gives the OpenCL operator's launch records
    /// and sources).
    pub fn integrator(&mut self) -> &mut Integrator<R> {
        &mut self.integrator
    }

    /// How element vectors are summed on the device ([`Assembly`]; the
    /// default is [`Assembly::Atomic`]), with the kernels of that assembly
    /// built now; native assembly is always deterministic.
    ///
    /// # Errors
    /// Device errors (a build failure, memory).
    pub fn set_assembly(&mut self, assembly: Assembly) -> Result<()> {
        self.integrator.set_assembly(assembly)
    }

    /// Number of entries of an auxiliary vector: nodes × N_aux for a field,
    /// cells × N_aux for P0, 0 without aux.
    pub fn aux_len(&self) -> usize {
        match self.discretization().aux() {
            AuxSpace::Field { n_comp } => self.space().n_nodes() * n_comp,
            AuxSpace::Cell { n_comp } => n_comp * self.space().n_cells(),
            AuxSpace::None => 0,
        }
    }

    /// Sets the auxiliary field: global nodal values (`[node][k]`) for a
    /// field, `[cell][k]` for P0. Kept until the next call; a physics that
    /// reads the field cannot be evaluated before it is set.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` for a wrong length or a
    /// discretization without aux; [`Error::NonFinite`] with the index in `aux`.
    pub fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        self.integrator.set_aux(aux)
    }

    /// The backend this operator evaluates on (the same device and kernel
    /// options, or the same native execution), e.g. to build the operators
    /// of coarser multigrid levels alike.
    pub fn backend(&self) -> Backend {
        self.integrator.backend()
    }

    /// Where the operator's vectors live: the host (native backend) or
    /// its device (OpenCL backend).
    pub fn location(&self) -> Location {
        self.integrator.location()
    }

    /// A vector of the space's `n_dofs` dofs, all zero, where this
    /// operator's vectors live ([`Operator::location`]).
    ///
    /// # Errors
    /// Device allocation errors.
    pub fn vector(&self) -> Result<Vector<R>> {
        self.integrator.zeros(self.space().n_dofs())
    }

    /// A vector holding `values` (`n_dofs` entries, interleaved node-major:
    /// dof `node·N_comp + comp`), where this operator's vectors live (an
    /// upload on a device).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `values` for a wrong length;
    /// device errors.
    pub fn vector_from(&self, values: &[R]) -> Result<Vector<R>> {
        check_len("values", values, self.space().n_dofs())?;
        self.integrator.from_host(values)
    }

    /// `r = F(u)` for the global vector `u`. `u` and `r` hold the space's
    /// `n_dofs` dofs and live where the operator does ([`Operator::vector`]);
    /// on a device nothing moves between host and device but the checks
    /// below (of `u` before, of `r` after: one reduction and one scalar
    /// read each).
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] naming `u` or `r` if its length is not
    ///   the space's `n_dofs` or it lives elsewhere than the operator, `aux`
    ///   if the physics reads an auxiliary field that was never set,
    ///   `physics` if it reads `u_t` and no time state is bound
    ///   ([`Operator::set_time`]).
    /// * [`Error::NonFinite`] naming `u` and the index **in `u`** of its
    ///   first NaN or ±∞.
    /// * [`Error::NonFiniteResult`] naming the first dof of `r` (in the
    ///   numbering of `u`), its node and component, if `r` holds NaN or ±∞:
    ///   the physics produced it from finite inputs.
    pub fn apply(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        crate::vector::check_finite("u", u)?;
        self.apply_unchecked(u, r)?;
        self.check_residual(r)
    }

    /// [`Operator::apply`] without the scans of `u` and `r` for NaN and
    /// ±∞ (each costs a reduction and a scalar read on a device): on a
    /// device it only enqueues the launches and returns without waiting.
    /// For solvers, which detect non-finite values through the reductions
    /// they do anyway, and for callers that keep the host busy meanwhile
    /// (femquad-mpi's halo exchange), then check with
    /// [`Operator::check_residual`].
    ///
    /// # Errors
    /// Those of [`Operator::apply`] but the non-finite ones.
    pub fn apply_unchecked(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        self.check_vectors(&[("u", u), ("r", &*r)])?;
        self.check_time()?;
        self.integrator.residual(u, r)
    }

    /// The check [`Operator::apply`] ends with, of a residual `r` in this
    /// space's node-major numbering (dof `node·N_comp + c`): `Ok` if every
    /// entry is finite (one reduction and one scalar read on a device).
    ///
    /// # Errors
    /// [`Error::NonFiniteResult`] naming the first dof of `r` holding NaN
    /// or ±∞, its node and component, and this operator's physics.
    pub fn check_residual(&self, r: &Vector<R>) -> Result<()> {
        match r.first_non_finite()? {
            None => Ok(()),
            Some(dof) => {
                let nc = self.space().n_comp();
                Err(Error::NonFiniteResult {
                    quantity: "the residual F(u)".to_string(),
                    physics: self.physics().info().name,
                    dof,
                    node: dof / nc,
                    component: dof % nc,
                    value: r.value_at(dof)?.to_string(),
                })
            }
        }
    }

    /// Checks that each named vector holds the space's `n_dofs` entries and
    /// lives where the operator evaluates.
    fn check_vectors(&self, vectors: &[(&'static str, &Vector<R>)]) -> Result<()> {
        let n = self.space().n_dofs();
        let location = self.location();
        for &(name, v) in vectors {
            if v.len() != n {
                return Err(Error::arg(
                    name,
                    format!("expected {n} entries (the space's dofs), got {}", v.len()),
                ));
            }
            if v.location() != location {
                return Err(Error::arg(
                    name,
                    format!(
                        "lives on {} but the operator evaluates on {location}: make it \
                         with Operator::vector or Operator::vector_from",
                        v.location()
                    ),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod facet_tests;
#[cfg(test)]
mod tests;
