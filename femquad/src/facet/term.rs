//! [`BoundaryTerm`]: a boundary physics on a set of facets, with its
//! constants and facet rule — one boundary term of a
//! [`Form`](crate::form::Form).

use std::sync::Arc;

use crate::physics::{Pointwise, PointwiseEval};
use crate::real::check_finite;
use crate::{Error, Real, Result};

use super::{FacetQuadrature, FacetSet};

/// A boundary term `Σ_{F ∈ S} ∫_F φ_i · f0(u, ∇u, x, n; c) ds` of a form:
/// a `#[pointwise]` physics evaluated at the facet points of the set `S`,
/// with the outward unit normal `n` (PETSc's boundary residual `f0`).
///
/// The physics writes `f0` only: a physics writing `f1` is refused (PETSc's
/// boundary `f1`, `∫_F ∇φ_i · f1 ds`, is not integrated). It may read `u`,
/// `grad_u`, `x`, `constants` and `n`; it need not read `n` (a flux `g(x)`
/// or a Robin term `α u − g` is a boundary term without the normal), as in
/// PETSc. It may not read an auxiliary field (`a`, `grad_a`).
///
/// With `F(u) = 0` the weak form of `−Δu = f`:
/// * Neumann `∂u/∂n = g` on `S`: `f0 = −g`;
/// * Robin `∂u/∂n + α u = g` on `S`: `f0 = α u − g`.
///
/// In a time-dependent problem (`F(t, u, u_t) = 0`, a time state bound by
/// [`Operator::set_time`](crate::operator::Operator::set_time) or a
/// [`TimeIntegrator`](crate::time::TimeIntegrator)) a boundary term takes
/// part like the cells: it may read the time `t` (a flux `g(t, x)`: 0
/// without a time state) and `u_t`, evaluated at its facet points as
/// `u_t = σ·u + b` of the cells' time state, and its Jacobians include
/// `σ·∂f0/∂u_t`. A dynamic boundary condition `u_t + ∂u/∂n = g` on `S`
/// of `u_t − Δu = f` is `f0 = u_t − g`. A term that reads `u_t` needs a
/// time state, as a transient cell physics does.
///
/// Attach it with [`Form::with_boundary`](crate::form::Form::with_boundary),
/// which checks it against the form's space. Its constants are bound with
/// the operator ([`Operator::set_constants`](crate::operator::Operator::set_constants)
/// sets the cell physics' only): change them by building the form again.
///
/// ```
/// use femquad::facet::{BoundaryTerm, FacetSet};
/// use femquad::prelude::*;
///
/// /// Robin: `f0 = α u − g`, `constants = [α, g]`.
/// #[femquad::pointwise]
/// fn robin(u: &[f64; 1], constants: &[f64; 2], f0: &mut [f64; 1]) {
///     f0[0] = constants[0] * u[0] - constants[1];
/// }
///
/// let mesh = unit_square(4, &MeshOptions::default())?;
/// let right = FacetSet::boundary_where(&mesh, |x| x[0] == 1.0)?;
/// let term = BoundaryTerm::<f64>::new(right, Robin)?.with_constants(&[2.0, 1.0])?;
/// assert_eq!(term.constants(), &[2.0, 1.0]);
/// assert_eq!(term.set().len(), 4);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone)]
pub struct BoundaryTerm<R: Real> {
    set: FacetSet,
    physics: Arc<dyn PointwiseEval<R>>,
    constants: Vec<R>,
    /// `None`: the default rule of the form's element, chosen when the
    /// term joins a form.
    quadrature: Option<FacetQuadrature>,
}

impl<R: Real> BoundaryTerm<R> {
    /// `physics` on the facets of `set`, with no constants (set them with
    /// [`BoundaryTerm::with_constants`] if the physics takes any) and the
    /// default facet rule of the form's element
    /// ([`FacetQuadrature::default_for`]: degree `2k` for `Pk`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `facets` if `set` is empty (its
    /// predicate or groups selected no facet), or `physics` if it is not
    /// defined in the set's dimension, writes `f1` or reads an auxiliary
    /// field.
    pub fn new<P: PointwiseEval<R> + 'static>(set: FacetSet, physics: P) -> Result<Self> {
        Self::shared(set, Arc::new(physics))
    }

    /// [`BoundaryTerm::new`] with a physics already shared.
    ///
    /// # Errors
    /// As [`BoundaryTerm::new`].
    pub fn shared(set: FacetSet, physics: Arc<dyn PointwiseEval<R>>) -> Result<Self> {
        if set.is_empty() {
            return Err(Error::arg(
                "facets",
                format!(
                    "the facet set of the boundary term `{}` is empty: its predicate or groups \
                     selected no boundary facet of the mesh",
                    physics.info().name
                ),
            ));
        }
        check_boundary_physics(&*physics, set.dim())?;
        Ok(BoundaryTerm {
            set,
            physics,
            constants: Vec::new(),
            quadrature: None,
        })
    }

    /// The term with the constants `c` of its physics (converted to `R`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `constants` if the physics takes
    /// another number; [`Error::NonFinite`] naming `constants` and the index
    /// of a NaN or ±∞.
    pub fn with_constants(mut self, constants: &[f64]) -> Result<Self> {
        let info = self.physics.info();
        if constants.len() != info.n_constants {
            return Err(Error::arg(
                "constants",
                format!(
                    "the boundary physics `{}` takes {} constant(s), got {}",
                    info.name,
                    info.n_constants,
                    constants.len()
                ),
            ));
        }
        check_finite("constants", constants)?;
        let converted: Vec<R> = constants.iter().map(|&c| R::from_f64(c)).collect();
        check_finite("constants (in the form's precision)", &converted)?;
        self.constants = converted;
        Ok(self)
    }

    /// The term with the facet rule `quadrature` instead of the element's
    /// default.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `quadrature` if it is for cells of
    /// another dimension than the set's.
    pub fn with_quadrature(mut self, quadrature: FacetQuadrature) -> Result<Self> {
        if quadrature.dim() != self.set.dim() {
            return Err(Error::arg(
                "quadrature",
                format!(
                    "the facet rule is for {}D cells but the facet set is on a {}D mesh",
                    quadrature.dim(),
                    self.set.dim()
                ),
            ));
        }
        self.quadrature = Some(quadrature);
        Ok(self)
    }

    /// The facets integrated over.
    pub fn set(&self) -> &FacetSet {
        &self.set
    }

    /// The boundary physics.
    pub fn physics(&self) -> &dyn PointwiseEval<R> {
        &*self.physics
    }

    /// The physics, shared (for a device binding it).
    pub(crate) fn shared_physics(&self) -> Arc<dyn PointwiseEval<R>> {
        Arc::clone(&self.physics)
    }

    /// The physics' constants, in `R`.
    pub fn constants(&self) -> &[R] {
        &self.constants
    }

    /// The facet rule given by [`BoundaryTerm::with_quadrature`], if any
    /// (else the form's element default is used).
    pub fn quadrature(&self) -> Option<&FacetQuadrature> {
        self.quadrature.as_ref()
    }

    /// The same term on the facets `set` (a multigrid level's set of the
    /// same surface).
    pub(crate) fn on(&self, set: FacetSet) -> Self {
        BoundaryTerm {
            set,
            physics: Arc::clone(&self.physics),
            constants: self.constants.clone(),
            quadrature: self.quadrature.clone(),
        }
    }

    /// The rule the term integrates with on a space of `element`.
    pub(crate) fn rule_for(&self, element: &crate::element::Element) -> Result<FacetQuadrature> {
        match &self.quadrature {
            Some(q) => Ok(q.clone()),
            None => FacetQuadrature::default_for(element),
        }
    }

    /// Checks that the term has the constants its physics takes.
    pub(crate) fn check_complete(&self) -> Result<()> {
        let info = self.physics.info();
        if self.constants.len() != info.n_constants {
            return Err(Error::arg(
                "form",
                format!(
                    "the boundary physics `{}` takes {} constant(s), its term has {}: give them \
                     with BoundaryTerm::with_constants",
                    info.name,
                    info.n_constants,
                    self.constants.len()
                ),
            ));
        }
        Ok(())
    }
}

impl<R: Real> std::fmt::Debug for BoundaryTerm<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundaryTerm")
            .field("physics", &self.physics.info().name)
            .field("facets", &self.set.len())
            .field("constants", &self.constants)
            .field(
                "quadrature_degree",
                &self.quadrature.as_ref().map(|q| q.degree()),
            )
            .finish()
    }
}

/// Checks that `physics` can be a boundary term on facets of a `dim`-D mesh:
/// defined in `dim`, writes no `f1`, reads no auxiliary field.
fn check_boundary_physics<P: Pointwise + ?Sized>(physics: &P, dim: usize) -> Result<()> {
    let info = physics.info();
    let refuse = |why: String| Err(Error::arg("physics", format!("`{}` {why}", info.name)));
    if !info.supports_dim(dim) {
        return refuse(format!(
            "supports dimension(s) {:?}, not the facet set's {dim}",
            info.dims
        ));
    }
    if info.has_f1 {
        return refuse(
            "writes f1: a boundary term integrates f0 only (PETSc's boundary residual \
             ∫_F φ_i f0 ds); write the boundary flux in f0"
                .to_string(),
        );
    }
    if info.reads.a || info.reads.grad_a {
        return refuse(
            "reads an auxiliary field (`a` or `grad_a`): boundary terms do not evaluate \
             auxiliary fields; pass the data through `x` and `constants`"
                .to_string(),
        );
    }
    Ok(())
}
