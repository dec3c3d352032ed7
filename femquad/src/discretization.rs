//! What an element integration is: the discretization (element, components,
//! quadrature, tabulation, geometry, aux space) and the element vectors it defines.
//!
//! For every cell `c` and element dof `i = b·N_comp + comp` the integrators
//! compute, with the quadrature rule `(ξ_q, w_q)`,
//!
//! ```text
//! E[c][i] = Σ_q w_q det J_c ( φ_b(ξ_q) f0_comp(q) + Σ_e ∂φ_b/∂ξ_e(ξ_q) g_comp,e(q) ),
//! g_comp,e(q) = Σ_d J⁻¹_c[e][d] f1_comp,d(q)
//! ```
//!
//! where `f0`, `f1` are the pointwise physics evaluated at
//! `u = Σ_b φ_b u_b`, `∇u = J⁻ᵀ Σ_b ∇_ξ φ_b u_b`, the same for the auxiliary
//! field, and `x = X_0 + J ξ_q`. This is the paper's
//! `Bᵀ W f0 + Σ_k D_kᵀ W f1^k` with the test-function gradient's map to
//! physical coordinates applied once per quadrature point to `f1` (giving
//! `g`) instead of once per basis function.
//!
//! Two backends share this definition and the data of a [`Discretization`]:
//! [`crate::native`] (Rust, serial or rayon-parallel) and the OpenCL
//! thread-transposition kernel.

use crate::aux_space::AuxSpace;
use crate::element::Element;
use crate::error::check_len;
use crate::geometry::Geometry;
use crate::physics::Pointwise;
use crate::quadrature::Quadrature;
use crate::real::{check_finite, convert_slice};
use crate::space::FunctionSpace;
use crate::tabulation::Tabulation;
use crate::{Error, Real, Result};

/// Everything fixed about an element integration except the physics and its
/// inputs: element, components, quadrature and tabulation, cell geometry,
/// and where the auxiliary field lives.
#[derive(Clone, Debug)]
pub struct Discretization<R: Real> {
    element: Element,
    n_comp: usize,
    quadrature: Quadrature,
    tabulation: Tabulation,
    aux: AuxSpace,
    geometry: Geometry<R>,
    // The tabulation and rule in precision R, for the native integrator.
    pub(crate) phi: Vec<R>,
    pub(crate) dphi: Vec<R>,
    pub(crate) weights: Vec<R>,
    pub(crate) points: Vec<R>,
}

impl<R: Real> Discretization<R> {
    /// Sets up integration of fields of `space` over its mesh with
    /// `quadrature` and an auxiliary field in `aux`. Computes the cell
    /// geometry and stores the cell vertex coordinates, for physics that
    /// reads `x` ([`Discretization::without_coordinates`] for the others).
    ///
    /// # Errors
    /// Those of [`Tabulation::new`] (a quadrature of another dimension) and
    /// [`Geometry::with_coordinates`] (a degenerate cell).
    pub fn new(space: &FunctionSpace, quadrature: Quadrature, aux: AuxSpace) -> Result<Self> {
        Self::build(
            space,
            quadrature,
            aux,
            Geometry::with_coordinates(space.mesh())?,
        )
    }

    /// As [`Discretization::new`] without the cell vertex coordinates
    /// (`n_cells·(dim+1)·dim` values: 1.6 GB in 3D at 2²⁴ cells in `f64`),
    /// for a physics that does not read `x`; binding one that does is then
    /// an error naming `physics`.
    ///
    /// # Errors
    /// As [`Discretization::new`].
    pub fn without_coordinates(
        space: &FunctionSpace,
        quadrature: Quadrature,
        aux: AuxSpace,
    ) -> Result<Self> {
        Self::build(space, quadrature, aux, Geometry::new(space.mesh())?)
    }

    fn build(
        space: &FunctionSpace,
        quadrature: Quadrature,
        aux: AuxSpace,
        geometry: Geometry<R>,
    ) -> Result<Self> {
        let element = space.element();
        let tabulation = Tabulation::new(&element, &quadrature)?;
        Ok(Discretization {
            element,
            n_comp: space.n_comp(),
            phi: convert_slice(tabulation.phi()),
            dphi: convert_slice(tabulation.dphi()),
            weights: convert_slice(quadrature.weights()),
            points: convert_slice(quadrature.points()),
            quadrature,
            tabulation,
            aux,
            geometry,
        })
    }

    /// Spatial dimension.
    pub fn dim(&self) -> usize {
        self.element.dim()
    }
    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.geometry.n_cells()
    }
    /// The scalar element (P1/P2).
    pub fn element(&self) -> Element {
        self.element
    }
    /// Basis functions per component, `N_b`.
    pub fn n_b(&self) -> usize {
        self.element.n_basis()
    }
    /// Components of the solution, `N_comp`.
    pub fn n_comp(&self) -> usize {
        self.n_comp
    }
    /// Element dofs, `N_bt = N_b·N_comp` (entries of an element vector).
    pub fn n_bt(&self) -> usize {
        self.n_b() * self.n_comp
    }
    /// Quadrature points, `N_q`.
    pub fn n_q(&self) -> usize {
        self.quadrature.n_points()
    }
    /// The quadrature rule.
    pub fn quadrature(&self) -> &Quadrature {
        &self.quadrature
    }
    /// The basis tabulation at the quadrature points (f64).
    pub fn tabulation(&self) -> &Tabulation {
        &self.tabulation
    }
    /// Where the auxiliary field lives.
    pub fn aux(&self) -> AuxSpace {
        self.aux
    }
    /// Cell geometry.
    pub fn geometry(&self) -> &Geometry<R> {
        &self.geometry
    }
    /// Auxiliary values per cell in the cell-local aux array.
    pub fn aux_per_cell(&self) -> usize {
        self.aux.values_per_cell(self.n_b())
    }

    /// Checks that `physics` fits this discretization: dimension, components,
    /// auxiliary components and number of constants.
    pub fn check_physics<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        n_constants: usize,
    ) -> Result<()> {
        let info = physics.info();
        let dim = self.dim();
        crate::form::check_fit(physics, dim, self.n_comp)?;
        self.aux.check_against(info.n_aux.resolve(dim), info.name)?;
        if n_constants != info.n_constants {
            return Err(Error::arg(
                "constants",
                format!(
                    "`{}` takes {} constant(s), got {n_constants}",
                    info.name, info.n_constants
                ),
            ));
        }
        Ok(())
    }

    /// Checks the sizes (and finiteness) of cell-local inputs and an
    /// element-vector output for `n_cells` cells.
    pub fn check_inputs(
        &self,
        inputs: &CellInputs<'_, R>,
        n_cells: usize,
        out: &[R],
    ) -> Result<()> {
        check_len("u", inputs.u, n_cells * self.n_bt())?;
        check_len("aux", inputs.aux, n_cells * self.aux_per_cell())?;
        check_len("element_vectors", out, n_cells * self.n_bt())?;
        check_finite("u", inputs.u)?;
        check_finite("aux", inputs.aux)?;
        check_finite("constants", inputs.constants)?;
        check_time(inputs.time.as_ref(), n_cells * self.n_bt())
    }
}

/// Checks a cell-local time state: `b` of `len` entries, `t`, `σ` and `b`
/// finite.
pub(crate) fn check_time<R: Real>(time: Option<&CellTime<'_, R>>, len: usize) -> Result<()> {
    let Some(time) = time else { return Ok(()) };
    check_len("b", time.b, len)?;
    check_finite("t", &[time.t])?;
    check_finite("sigma", &[time.sigma])?;
    check_finite("b", time.b)
}

/// The cell-local inputs of one residual evaluation.
#[derive(Clone, Copy, Debug)]
pub struct CellInputs<'a, R> {
    /// Solution coefficients, `n_cells × N_b × N_comp` ([`crate::layout::cell_dof`]).
    pub u: &'a [R],
    /// Auxiliary coefficients, `n_cells × N_b × N_aux` (field) or
    /// `n_cells × N_aux` (P0); empty if there is no auxiliary field.
    pub aux: &'a [R],
    /// Run-time constants of the physics.
    pub constants: &'a [R],
    /// The time state of a transient evaluation ([`CellTime`]: `t`,
    /// `u_t = σ·u + b`); `None` for a stationary one (`t` = 0, no `u_t`).
    pub time: Option<CellTime<'a, R>>,
}

/// The time state of a transient evaluation, cell-local: the time `t` and
/// the time derivative as an affine function of the unknowns,
/// `u_t = σ·u + b`, which a time integrator's step binds (backward Euler:
/// `σ = 1/Δt`, `b = −u_n/Δt`). At a quadrature point
/// `u_t(x_q) = σ·u(x_q) + b(x_q)`; the tangent's direction in `u_t` is
/// `σ·δu`, so the Jacobian is the step Jacobian `σ·∂F/∂u_t + ∂F/∂u`.
#[derive(Clone, Copy, Debug)]
pub struct CellTime<'a, R> {
    /// The time `t`.
    pub t: R,
    /// The shift `σ = ∂u_t/∂u`.
    pub sigma: R,
    /// `b`, cell-local like `u` (`n_cells × N_b × N_comp`).
    pub b: &'a [R],
}
