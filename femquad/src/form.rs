//! The weak form of one field, bound to its physics:
//!
//! ```text
//! F(u)_i = Σ_cells ∫ φ_i · f0(u, ∇u, a, ∇a, x; c) + ∇φ_i : f1(u, ∇u, a, ∇a, x; c) dx
//!        + Σ_terms Σ_{F ∈ S_t} ∫_F φ_i · f0_t(u, ∇u, x, n; c_t) ds
//! ```
//!
//! A [`Form`] is everything that defines `F` but the mesh data a backend
//! uploads: the [`FunctionSpace`] of `u` and `φ`, the [`Quadrature`] of
//! the integrals, the [`AuxSpace`] of `a`, the pointwise physics
//! `(f0, f1)` ([`PointwiseEval`]) and its constants `c`, and its boundary
//! terms ([`BoundaryTerm`]: a boundary physics `f0_t` on a set of facets
//! `S_t`, with the outward unit normal `n`). It is checked once, when
//! built; an [`Operator`](crate::operator::Operator) binds it on a
//! backend.

use std::sync::Arc;

use crate::aux_space::AuxSpace;
use crate::facet::{BoundaryTerm, FacetSet};
use crate::physics::{Pointwise, PointwiseEval};
use crate::quadrature::Quadrature;
use crate::real::check_finite;
use crate::space::FunctionSpace;
use crate::{Error, Real, Result};

/// A weak form: space, quadrature, auxiliary-field space, physics and
/// constants, checked against each other when built.
///
/// ```
/// use femquad::physics::builtin::Poisson;
/// use femquad::prelude::*;
///
/// let mesh = std::sync::Arc::new(unit_square(4, &MeshOptions::default())?);
/// let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1)?, 1)?;
/// // −Δu = 2: Poisson's one constant is the source
/// let form = Form::<f64>::new(space, Poisson)?.with_constants(&[2.0])?;
/// assert_eq!(form.constants(), &[2.0]);
/// assert_eq!(form.physics().info().name, "poisson");
/// // the count is checked against the physics
/// let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1)?, 1)?;
/// let e = Form::<f64>::new(space, Poisson)?.with_constants(&[1.0, 2.0]).unwrap_err();
/// assert!(e.to_string().contains("takes 1 constant"));
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone)]
pub struct Form<R: Real> {
    space: FunctionSpace,
    quadrature: Quadrature,
    aux: AuxSpace,
    physics: Arc<dyn PointwiseEval<R>>,
    constants: Vec<R>,
    /// The boundary terms, in the order they were added.
    boundary: Vec<BoundaryTerm<R>>,
}

impl<R: Real> Form<R> {
    /// The form of `physics` on `space`, with the element's default
    /// quadrature ([`Quadrature::default_for`]), no auxiliary field, and
    /// no constants (set them with [`Form::with_constants`] if the physics
    /// takes any).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `physics` if it is not defined in
    /// the space's dimension, has another number of components than the
    /// space, reads the normal `n` (a boundary physics,
    /// [`PointwiseInfo::is_boundary`](crate::physics::PointwiseInfo::is_boundary):
    /// it cannot be a cell term). A physics that reads `u_t` (a transient
    /// physics,
    /// [`PointwiseInfo::is_transient`](crate::physics::PointwiseInfo::is_transient))
    /// is accepted: its operator evaluates it once a time state is bound
    /// ([`crate::operator::Operator::set_time`], which a
    /// [`crate::time::TimeIntegrator`] does every step), and refuses to
    /// before.
    pub fn new<P: PointwiseEval<R> + 'static>(space: FunctionSpace, physics: P) -> Result<Self> {
        Self::shared(space, Arc::new(physics))
    }

    /// [`Form::new`] with a physics already shared (several forms of one
    /// physics, or one chosen at run time).
    ///
    /// # Errors
    /// As [`Form::new`].
    pub fn shared(space: FunctionSpace, physics: Arc<dyn PointwiseEval<R>>) -> Result<Self> {
        let quadrature = Quadrature::default_for(&space.element())?;
        check_fit(&*physics, space.dim(), space.n_comp())?;
        Ok(Form {
            space,
            quadrature,
            aux: AuxSpace::None,
            physics,
            constants: Vec::new(),
            boundary: Vec::new(),
        })
    }

    /// The form with the quadrature `quadrature` instead of the default.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `quadrature` if it is of another
    /// dimension than the space.
    pub fn with_quadrature(mut self, quadrature: Quadrature) -> Result<Self> {
        if quadrature.dim() != self.space.dim() {
            return Err(Error::arg(
                "quadrature",
                format!(
                    "it is a {}D rule but the space is {}D",
                    quadrature.dim(),
                    self.space.dim()
                ),
            ));
        }
        self.quadrature = quadrature;
        Ok(self)
    }

    /// The form with an auxiliary field in `aux` (its values are given to
    /// the operator: [`Operator::set_aux`](crate::operator::Operator::set_aux)).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` if its number of components
    /// is not the physics' `N_aux`.
    pub fn with_aux(mut self, aux: AuxSpace) -> Result<Self> {
        let info = self.physics.info();
        aux.check_against(info.n_aux.resolve(self.space.dim()), info.name)?;
        self.aux = aux;
        Ok(self)
    }

    /// The form with the constants `c` of the physics (converted to `R`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `constants` if the physics takes
    /// another number; [`Error::NonFinite`] naming `constants` and the index
    /// of a NaN or ±∞.
    pub fn with_constants(mut self, constants: &[f64]) -> Result<Self> {
        self.constants = self.checked_constants(constants)?;
        Ok(self)
    }

    /// Replaces the constants (for [`Operator::set_constants`](crate::operator::Operator::set_constants)).
    pub(crate) fn set_constants(&mut self, constants: &[f64]) -> Result<()> {
        self.constants = self.checked_constants(constants)?;
        Ok(())
    }

    /// The same form on another space of the same dimension and components
    /// (a multigrid level), with `quadrature`; boundary term `t` on the
    /// facets `boundary_sets[t]` of the level's mesh (the same surface).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] (`boundary_sets`) if there is not one set
    /// per boundary term; those of [`Form::with_boundary`].
    pub(crate) fn on(
        &self,
        space: FunctionSpace,
        quadrature: Quadrature,
        boundary_sets: Vec<FacetSet>,
    ) -> Result<Self> {
        check_fit(&*self.physics, space.dim(), space.n_comp())?;
        if boundary_sets.len() != self.boundary.len() {
            return Err(Error::internal(format!(
                "{} facet set(s) for the {} boundary term(s) of the form on another level",
                boundary_sets.len(),
                self.boundary.len()
            )));
        }
        let mut form = Form {
            space,
            quadrature,
            aux: self.aux,
            physics: self.physics.clone(),
            constants: self.constants.clone(),
            boundary: Vec::new(),
        };
        for (term, set) in self.boundary.iter().zip(boundary_sets) {
            form = form.with_boundary(term.on(set))?;
        }
        Ok(form)
    }

    /// The form with the boundary term `term` added: `term`'s physics
    /// integrated over its facets, `Σ_{F ∈ S} ∫_F φ_i f0(u, ∇u, x, n; c) ds`
    /// (PETSc's boundary residual `f0`, `n` the outward unit normal). Terms
    /// add up: several terms, on the same or other facet sets, are allowed.
    ///
    /// ```
    /// use femquad::facet::{BoundaryTerm, FacetSet};
    /// use femquad::physics::builtin::Poisson;
    /// use femquad::prelude::*;
    ///
    /// /// Neumann `∂u/∂n = g` on the right side: `f0 = −g`, `constants = [g]`.
    /// #[femquad::pointwise]
    /// fn flux(constants: &[f64; 1], f0: &mut [f64; 1]) {
    ///     f0[0] = -constants[0];
    /// }
    ///
    /// let mesh = std::sync::Arc::new(unit_square(4, &MeshOptions::default())?);
    /// let right = FacetSet::boundary_where(&mesh, |x| x[0] == 1.0)?;
    /// let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1)?, 1)?;
    /// let form = Form::<f64>::new(space, Poisson)?
    ///     .with_constants(&[0.0])?
    ///     .with_boundary(BoundaryTerm::new(right, Flux)?.with_constants(&[3.0])?)?;
    /// assert_eq!(form.boundary().len(), 1);
    /// // the set is checked against the space's mesh
    /// let other = unit_square(2, &MeshOptions::default())?;
    /// let wrong = BoundaryTerm::new(FacetSet::boundary(&other)?, Flux)?;
    /// assert!(form.with_boundary(wrong).unwrap_err().to_string().contains("make it on this mesh"));
    /// # Ok::<(), femquad::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `facets` if the term's set was made
    /// on another mesh than the space's ([`FacetSet::check_mesh`]),
    /// `physics` if the boundary physics has another number of components
    /// than the space, `quadrature` if the term's rule cannot tabulate the
    /// space's element.
    pub fn with_boundary(mut self, term: BoundaryTerm<R>) -> Result<Self> {
        term.set().check_mesh(self.space.mesh())?;
        let info = term.physics().info();
        let dim = self.space.dim();
        let physics_comp = info.n_comp.resolve(dim);
        if physics_comp != self.space.n_comp() {
            return Err(Error::arg(
                "physics",
                format!(
                    "the boundary physics `{}` has {physics_comp} component(s) in {dim}D but the \
                     space has {}",
                    info.name,
                    self.space.n_comp()
                ),
            ));
        }
        term.rule_for(&self.space.element())?;
        self.boundary.push(term);
        Ok(self)
    }

    /// The boundary terms, in the order they were added.
    pub fn boundary(&self) -> &[BoundaryTerm<R>] {
        &self.boundary
    }

    /// The space of `u` and of the test functions.
    pub fn space(&self) -> &FunctionSpace {
        &self.space
    }

    /// The quadrature of the integrals.
    pub fn quadrature(&self) -> &Quadrature {
        &self.quadrature
    }

    /// Where the auxiliary field lives.
    pub fn aux(&self) -> AuxSpace {
        self.aux
    }

    /// The pointwise physics.
    pub fn physics(&self) -> &dyn PointwiseEval<R> {
        &*self.physics
    }

    /// The physics, shared (for a backend binding it).
    pub(crate) fn shared_physics(&self) -> Arc<dyn PointwiseEval<R>> {
        Arc::clone(&self.physics)
    }

    /// The physics' constants, in `R`.
    pub fn constants(&self) -> &[R] {
        &self.constants
    }

    /// Checks that the form has what the physics reads: its auxiliary
    /// field ([`Form::with_aux`]) and its constants ([`Form::with_constants`]),
    /// before an operator is built.
    pub(crate) fn check_complete(&self) -> Result<()> {
        let info = self.physics.info();
        let n_aux = info.n_aux.resolve(self.space.dim());
        if n_aux != self.aux.n_comp() {
            return Err(Error::arg(
                "form",
                format!(
                    "`{}` reads {n_aux} auxiliary component(s), the form's auxiliary space \
                     {:?} has {}: give it with Form::with_aux",
                    info.name,
                    self.aux,
                    self.aux.n_comp()
                ),
            ));
        }
        if self.constants.len() != info.n_constants {
            return Err(Error::arg(
                "form",
                format!(
                    "`{}` takes {} constant(s), the form has {}: give them with \
                     Form::with_constants",
                    info.name,
                    info.n_constants,
                    self.constants.len()
                ),
            ));
        }
        self.boundary
            .iter()
            .try_for_each(BoundaryTerm::check_complete)
    }

    fn checked_constants(&self, constants: &[f64]) -> Result<Vec<R>> {
        let info = self.physics.info();
        if constants.len() != info.n_constants {
            return Err(Error::arg(
                "constants",
                format!(
                    "`{}` takes {} constant(s), got {}",
                    info.name,
                    info.n_constants,
                    constants.len()
                ),
            ));
        }
        check_finite("constants", constants)?;
        let converted: Vec<R> = constants.iter().map(|&c| R::from_f64(c)).collect();
        check_finite("constants (in the form's precision)", &converted)?;
        Ok(converted)
    }
}

impl<R: Real> std::fmt::Debug for Form<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Form")
            .field("physics", &self.physics.info().name)
            .field("element", &self.space.element())
            .field("n_comp", &self.space.n_comp())
            .field("n_dofs", &self.space.n_dofs())
            .field("quadrature_points", &self.quadrature.n_points())
            .field("aux", &self.aux)
            .field("constants", &self.constants)
            .field("boundary", &self.boundary)
            .finish()
    }
}

/// Checks that `physics` is defined in dimension `dim`, has `n_comp`
/// components there, and is a cell physics: it does not read the normal `n`
/// (a boundary physics). A physics reading `u_t` fits; it is evaluated
/// with a bound time state (`Operator::set_time`, the time integrators).
pub(crate) fn check_fit<P: Pointwise + ?Sized>(
    physics: &P,
    dim: usize,
    n_comp: usize,
) -> Result<()> {
    let info = physics.info();
    if !info.supports_dim(dim) {
        return Err(Error::arg(
            "physics",
            format!(
                "`{}` supports dimension(s) {:?}, not {dim}",
                info.name, info.dims
            ),
        ));
    }
    let physics_comp = info.n_comp.resolve(dim);
    if physics_comp != n_comp {
        return Err(Error::arg(
            "physics",
            format!(
                "`{}` has {physics_comp} component(s) in {dim}D but the space has {n_comp}",
                info.name
            ),
        ));
    }
    if info.is_boundary() {
        return Err(Error::arg(
            "physics",
            format!(
                "`{}` reads the normal `n`: it is a boundary physics, evaluated on facets, and \
                 cannot be the cell physics of a form; write the cell terms in a physics \
                 without `n`",
                info.name
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_square};
    use crate::physics::Pointwise;
    use crate::physics::builtin::{Lame, Laplacian, LaplacianCoefficient, Poisson};

    fn scalar_space() -> FunctionSpace {
        let mesh = unit_square(2, &MeshOptions::default()).unwrap();
        FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap()
    }

    /// `f0 = u + x₂`: 3D only.
    #[crate::pointwise]
    fn only_3d(u: &[f64; 1], x: &[f64; 3], f0: &mut [f64; 1]) {
        f0[0] = u[0] + x[2];
    }

    fn message<T>(r: Result<T>) -> (String, &'static str) {
        match r {
            Err(Error::InvalidArgument { name, reason }) => (reason, name),
            Err(e) => panic!("not an argument error: {e}"),
            Ok(_) => panic!("accepted"),
        }
    }

    #[test]
    fn the_physics_is_checked_against_the_space_when_the_form_is_built() {
        let (e, name) = message(Form::<f64>::new(scalar_space(), Lame));
        assert_eq!(name, "physics");
        assert!(
            e.contains("`lame` has 2 component(s) in 2D but the space has 1"),
            "{e}"
        );
        let (e, name) = message(Form::<f64>::new(scalar_space(), Only3d));
        assert_eq!(name, "physics");
        assert!(e.contains("supports dimension(s) [3], not 2"), "{e}");
        assert!(Form::<f64>::new(scalar_space(), Laplacian).is_ok());
    }

    /// `f0 = u·n₀`: a boundary physics.
    #[crate::pointwise]
    fn robin_like(u: &[f64; 1], n: &[f64; 2], f0: &mut [f64; 1]) {
        f0[0] = u[0] * n[0];
    }

    /// `f0 = u_t - t`: a transient physics (reads `t` too).
    #[crate::pointwise]
    fn rate(u_t: &[f64; 1], t: f64, f0: &mut [f64; 1]) {
        f0[0] = u_t[0] - t;
    }

    /// `f0 = t`: reads the time, neither `n` nor `u_t`; declares `u_t`
    /// without reading it.
    #[crate::pointwise]
    fn time_source(_u_t: &[f64; 1], t: f64, f0: &mut [f64; 1]) {
        f0[0] = t;
    }

    #[test]
    fn a_boundary_physics_is_refused_as_a_cell_physics_a_transient_one_is_not() {
        let (e, name) = message(Form::<f64>::new(scalar_space(), RobinLike));
        assert_eq!(name, "physics");
        assert!(
            e.contains("`robin_like` reads the normal `n`: it is a boundary physics"),
            "{e}"
        );
        // A transient physics is a form; its operator wants a time state.
        assert!(Form::<f64>::new(scalar_space(), Rate).is_ok());
        // Reading `t` alone, or declaring `u_t` without reading it, is neither.
        assert!(!TimeSource.info().is_transient() && TimeSource.info().reads.t);
        assert!(Form::<f64>::new(scalar_space(), TimeSource).is_ok());
    }

    #[test]
    fn constants_are_counted_converted_and_finite() {
        let form = Form::<f32>::new(scalar_space(), Poisson).unwrap();
        let (e, name) = message(form.clone().with_constants(&[]));
        assert_eq!(name, "constants");
        assert!(e.contains("`poisson` takes 1 constant(s), got 0"), "{e}");
        let e = form.clone().with_constants(&[f64::NAN]).unwrap_err();
        assert!(matches!(e, Error::NonFinite { .. }), "{e}");
        // finite in f64, not in the form's f32
        let e = form.clone().with_constants(&[1e300]).unwrap_err();
        assert!(e.to_string().contains("in the form's precision"), "{e}");
        let form = form.with_constants(&[0.1]).unwrap();
        assert_eq!(form.constants(), &[0.1f32]);
    }

    #[test]
    fn a_form_lacking_what_its_physics_reads_is_incomplete() {
        // constants not given
        let form = Form::<f64>::new(scalar_space(), Poisson).unwrap();
        let (e, name) = message(form.check_complete());
        assert_eq!(name, "form");
        assert!(e.contains("takes 1 constant(s), the form has 0"), "{e}");
        assert!(
            form.with_constants(&[1.0])
                .unwrap()
                .check_complete()
                .is_ok()
        );
        // the auxiliary field not given, then given with the wrong components
        let form = Form::<f64>::new(scalar_space(), LaplacianCoefficient).unwrap();
        let (e, name) = message(form.check_complete());
        assert_eq!(name, "form");
        assert!(e.contains("reads 1 auxiliary component(s)"), "{e}");
        let (e, name) = message(form.clone().with_aux(AuxSpace::Cell { n_comp: 2 }));
        assert_eq!(name, "aux");
        assert!(e.contains("reads 1 auxiliary"), "{e}");
        let form = form.with_aux(AuxSpace::Cell { n_comp: 1 }).unwrap();
        assert!(form.check_complete().is_ok());
        // a quadrature of another dimension
        let q3 = Quadrature::simplex(3, 2).unwrap();
        let (e, name) = message(form.with_quadrature(q3));
        assert_eq!(name, "quadrature");
        assert!(e.contains("3D rule but the space is 2D"), "{e}");
    }
}
