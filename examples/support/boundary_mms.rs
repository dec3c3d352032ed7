//! Manufactured solutions of Poisson's equation with Neumann and Robin
//! boundary conditions (boundary terms of a form,
//! [`Form::with_boundary`]): the example `boundary_conditions` and the
//! root test `tests/boundary_conditions.rs`.
//!
//! On the unit square or cube, `−Δu = f` with the exact solution
//! `u(x) = Π_j cos(k x_j + b)` (`k = π/2`, `b = 1/2`, so that no side has
//! `∂u/∂n = 0`), `f = D k² u`. The sides `x₀ = 1` and `x₁ = 0` carry the
//! natural condition, the other sides `u = u_exact` (Dirichlet):
//!
//! ```text
//! Neumann  ∂u/∂n = g,          g = ∇u_exact·n                 boundary f0 = −g
//! Robin    ∂u/∂n + α u = g,    g = ∇u_exact·n + α u_exact     boundary f0 = α u − g
//! ```
//!
//! The weak form `F(u)_i = ∫_Ω ∇φ_i·∇u − φ_i f dx + ∫_Γ φ_i f0 ds` (the
//! cell physics [`PoissonMmsB`], the boundary physics [`NeumannMms`] or
//! [`RobinMms`], which read the outward unit normal `n`). The discrete
//! solution converges in `L²` like `h²` (P1) and `h³` (P2).

use std::sync::Arc;

use femquad::facet::{BoundaryTerm, FacetSet};
use femquad::multigrid::MeshHierarchy;
use femquad::prelude::*;
use femquad::solve::l2_error;

/// Wave number `k = π/2`.
const K: f64 = std::f64::consts::FRAC_PI_2;
/// Phase `b = 1/2`.
const B: f64 = 0.5;

/// The exact solution `u(x) = Π_j cos(k x_j + b)`.
#[pointwise]
pub fn exact_u<const D: usize>(x: &[f64; D]) -> f64 {
    let k = 0.5 * std::f64::consts::PI;
    let mut u = 1.0;
    for j in 0..D {
        u *= (k * x[j] + 0.5).cos();
    }
    u
}

/// The exact normal derivative `∇u·n`,
/// `∂u/∂x_d = −k sin(k x_d + b) Π_{j≠d} cos(k x_j + b)`.
#[pointwise]
pub fn exact_flux<const D: usize>(x: &[f64; D], n: &[f64; D]) -> f64 {
    let k = 0.5 * std::f64::consts::PI;
    let mut s = 0.0;
    for d in 0..D {
        let mut g = -k * (k * x[d] + 0.5).sin();
        for j in 0..D {
            if j != d {
                g *= (k * x[j] + 0.5).cos();
            }
        }
        s += g * n[d];
    }
    s
}

/// Cell physics of `−Δu = f`, `f = D k² u_exact`: `f0 = −f`, `f1 = ∇u`.
#[pointwise(helpers(exact_u))]
pub fn poisson_mms_b<const D: usize>(
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    let k = 0.5 * std::f64::consts::PI;
    f0[0] = -(D as f64) * k * k * exact_u(x);
    f1[0] = grad_u[0];
}

/// Neumann `∂u/∂n = g = ∇u_exact·n`: `f0 = −g`.
#[pointwise(helpers(exact_flux))]
pub fn neumann_mms<const D: usize>(x: &[f64; D], n: &[f64; D], f0: &mut [f64; 1]) {
    f0[0] = -exact_flux(x, n);
}

/// Robin `∂u/∂n + α u = g`, `g = ∇u_exact·n + α u_exact`:
/// `f0 = α u − g`, `constants = [α]`.
#[pointwise(helpers(exact_u, exact_flux))]
pub fn robin_mms<const D: usize>(
    u: &[f64; 1],
    x: &[f64; D],
    n: &[f64; D],
    constants: &[f64; 1],
    f0: &mut [f64; 1],
) {
    let alpha = constants[0];
    f0[0] = alpha * u[0] - (exact_flux(x, n) + alpha * exact_u(x));
}

/// The natural condition of a problem.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Condition {
    /// `∂u/∂n = g`.
    Neumann,
    /// `∂u/∂n + α u = g`, with `α`.
    Robin(f64),
}

/// `u_exact` at `x` (any dimension), for the Dirichlet values and the error.
pub fn exact(x: &[f64], out: &mut [f64]) {
    out[0] = x.iter().map(|&xj| (K * xj + B).cos()).product();
}

/// Whether the midpoint `x` of a boundary facet is on the natural part,
/// the sides `x₀ = 1` and `x₁ = 0`.
pub fn on_natural_part(x: &[f64]) -> bool {
    x[0] == 1.0 || x[1] == 0.0
}

/// One solve: the `L²` error, the CG iterations and the dofs.
#[derive(Clone, Copy, Debug)]
pub struct Solved {
    /// `‖u_h − u_exact‖_{L²}`.
    pub l2_error: f64,
    /// CG iterations (multigrid-preconditioned).
    pub iterations: usize,
    /// Dofs.
    pub dofs: usize,
}

/// Solves the problem with `condition` on the finest mesh of `hierarchy`
/// (the unit square or cube), Pk elements, on `backend`, CG preconditioned
/// by multigrid on the hierarchy's levels (each level integrates the
/// boundary term over its facets of the same sides) to `tol`.
pub fn solve(
    hierarchy: MeshHierarchy,
    order: usize,
    condition: Condition,
    backend: &Backend,
    tol: f64,
) -> femquad::Result<Solved> {
    let mesh: Arc<Mesh> = hierarchy.finest().clone();
    let dim = mesh.dim();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, order)?, 1)?;
    let natural = FacetSet::boundary_where(&mesh, on_natural_part)?;
    let term = match condition {
        Condition::Neumann => BoundaryTerm::new(natural, NeumannMms)?,
        Condition::Robin(alpha) => {
            BoundaryTerm::new(natural, RobinMms)?.with_constants(&[alpha])?
        }
    };
    let form = Form::new(space.clone(), PoissonMmsB)?.with_boundary(term)?;
    let op = Operator::<f64>::new(form, backend)?;
    let dirichlet = MeshPart::boundary_where(&mesh, |x| !on_natural_part(x))?;
    let mut problem = DirichletProblem::on_part(op, &dirichlet, Components::All, exact)?
        .with_hierarchy(hierarchy)?;
    let (u, stats) = problem.solve_linear(tol, 200)?;
    let u = u.to_host()?;
    Ok(Solved {
        l2_error: l2_error(&space, &u, exact, 2 * order + 3)?,
        iterations: stats.iterations,
        dofs: space.n_dofs(),
    })
}

/// The hierarchy of the unit square or cube (`dim`) of `n` intervals per
/// side refined `refinements` times.
pub fn hierarchy(dim: usize, n: usize, refinements: usize) -> femquad::Result<MeshHierarchy> {
    MeshHierarchy::new(&unit_box(dim, n, &MeshOptions::default())?, refinements)
}
