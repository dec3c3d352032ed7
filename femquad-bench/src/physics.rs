//! The benchmark's own physics: the transient case `heat` (the kernels'
//! time path) and the Neumann term of `--neumann` (the facet kernels).
//!
//! * [`Heat`]: `f0 = u_t + t·u`, `f1 = ∇u` — the heat equation's residual
//!   with a reaction `t·u`, so that it reads `u`, `∇u`, `u_t` and `t`: the
//!   element kernel (BK) and `F(u)` (BP) evaluate it with the time state
//!   [`TIME_T`], `u_t = σ·u + b` ([`TIME_SIGMA`], the shift of a
//!   backward-Euler step of `Δt = 10⁻³`, and a random `b`) bound, through
//!   the kernels' `READS_U_T`/`TIME_PARAMS` path, and are checked against the
//!   native integrator at the same state.
//! * [`NeumannFlux`] (scalar) and [`NeumannTraction`] (vector, `D`
//!   components): `f0 = −g e₀` with `g = 1 + x₁`, the weak form of the flux
//!   `∂u/∂n = g` (traction `σ(u)·n = g e₀`) on the side `x₀ = 0` of the unit
//!   square or cube ([`neumann_term`]).

use femquad::Result;
use femquad::facet::{BoundaryTerm, FacetSet};
use femquad::mesh::Mesh;
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};

/// The time `t` of the heat cases' time state.
pub const TIME_T: f64 = 0.5;

/// The shift `σ` of the heat cases' time state (`1/Δt`, `Δt = 10⁻³`).
pub const TIME_SIGMA: f64 = 1000.0;

/// `f0 = u_t + t·u`, `f1 = ∇u`: the transient benchmark physics `heat`.
#[femquad::pointwise]
pub fn heat<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    u_t: &[f64; 1],
    t: f64,
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = u_t[0] + t * u[0];
    for d in 0..D {
        f1[0][d] = grad_u[0][d];
    }
}

/// `f0 = −(1 + x₁)`: the Neumann flux `∂u/∂n = 1 + x₁` of a scalar field.
#[femquad::pointwise]
pub fn neumann_flux<const D: usize>(x: &[f64; D], f0: &mut [f64; 1]) {
    f0[0] = -(1.0 + x[1]);
}

/// `f0 = −(1 + x₁) e₀`: the traction `(1 + x₁) e₀` on a vector field.
#[femquad::pointwise]
pub fn neumann_traction<const D: usize>(x: &[f64; D], f0: &mut [f64; D]) {
    for d in 0..D {
        f0[d] = 0.0;
    }
    f0[0] = -(1.0 + x[1]);
}

/// The Neumann term of `--neumann` on `mesh` for a field of `n_comp`
/// components: [`NeumannFlux`] (one component) or [`NeumannTraction`] on
/// the boundary facets whose midpoints lie on `x₀ = 0`.
///
/// # Errors
/// Those of [`FacetSet::boundary_where`] and [`BoundaryTerm::new`].
pub fn neumann_term<R: EvalPrecision>(mesh: &Mesh, n_comp: usize) -> Result<BoundaryTerm<R>> {
    let side = FacetSet::boundary_where(mesh, |x| x[0] <= 1e-12)?;
    let physics: &'static dyn PointwiseEvalBoth = if n_comp == 1 {
        &NeumannFlux
    } else {
        &NeumannTraction
    };
    BoundaryTerm::new(side, R::physics(physics))
}

/// The transient benchmark physics, as the cases hold their physics.
pub fn heat_physics() -> &'static dyn PointwiseEvalBoth {
    &Heat
}
