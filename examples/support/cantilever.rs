//! A clamped 3D cantilever with a tip traction (linear elasticity), its tip
//! deflection against beam theory: the example `cantilever` and the root
//! test `tests/cantilever.rs`.
//!
//! **Geometry.** The beam `Ω = [0, L] × [0, b] × [0, b]`, `L = 10`, `b = 1`
//! (square section `b × b`, slenderness `L/b = 10`), meshed by
//! [`beam_mesh`]: `10m × m × m` cubes of side `b/m`, six tetrahedra each,
//! refined uniformly by the multigrid hierarchy.
//!
//! **Problem.** Lamé elasticity (`physics::builtin::Lame`), `E = 1000`,
//! `ν = 0.3`; clamped at `x₀ = 0` (`u = 0`, every component); on the end
//! face `x₀ = L` a constant traction `t = (0, 0, −P/b²)`, total load `P = 1`
//! (a boundary term: `f0 = −t`, [`TipTraction`]); the other sides free.
//! The weak form `∫_Ω σ(u):∇φ dx − ∫_{x₀=L} t·φ ds = 0`.
//!
//! **Theory.** The deflection of the end, `δ = −u₂` at the centre
//! `(L, b/2, b/2)` of the loaded face, against
//!
//! ```text
//! Euler–Bernoulli  δ_EB = P L³ / (3 E I),             I = b⁴/12
//! Timoshenko       δ_T  = δ_EB + P L / (κ G A),        κ = 5/6, G = E / (2(1 + ν)), A = b²
//! ```
//!
//! (here `δ_EB = 4` and `δ_T = 4.0312`: the shear term is 0.78 %). Neither
//! is exact for the 3D body (the clamp also holds the section's warping
//! and Poisson contraction; the traction is uniform, not the parabolic
//! shear of the theory): both effects are local to the ends and small at
//! `L/b = 10`. The P2 deflection settles at 4.002 (30720 tetrahedra):
//! within 0.1 % of Euler–Bernoulli and 0.8 % of Timoshenko.

use std::sync::Arc;

use femquad::facet::{BoundaryTerm, FacetSet};
use femquad::multigrid::MeshHierarchy;
use femquad::physics::builtin::{Lame, LameParameters};
use femquad::prelude::*;

/// Length `L`.
pub const LENGTH: f64 = 10.0;
/// Side `b` of the square section.
pub const SIDE: f64 = 1.0;
/// Young's modulus `E`.
pub const YOUNG: f64 = 1000.0;
/// Poisson's ratio `ν`.
pub const POISSON: f64 = 0.3;
/// Total tip load `P`.
pub const LOAD: f64 = 1.0;
/// Timoshenko's shear coefficient of a rectangular section, `κ = 5/6`.
pub const KAPPA: f64 = 5.0 / 6.0;

/// The tip traction's boundary term, `f0 = −t` with `t = (0, …, 0, −q)`:
/// `constants = [q]`, the load per area (`P/b²`), downwards along the last
/// axis.
#[pointwise]
pub fn tip_traction<const D: usize>(constants: &[f64; 1], f0: &mut [f64; D]) {
    for c in 0..D {
        f0[c] = 0.0;
    }
    f0[D - 1] = constants[0];
}

/// Euler–Bernoulli's tip deflection `δ_EB = P L³ / (3 E I)`, `I = b⁴/12`.
pub fn euler_bernoulli() -> f64 {
    let inertia = SIDE.powi(4) / 12.0;
    LOAD * LENGTH.powi(3) / (3.0 * YOUNG * inertia)
}

/// Timoshenko's tip deflection `δ_EB + P L / (κ G A)`,
/// `G = E / (2(1 + ν))`, `A = b²`.
pub fn timoshenko() -> f64 {
    let shear_modulus = YOUNG / (2.0 * (1.0 + POISSON));
    euler_bernoulli() + LOAD * LENGTH / (KAPPA * shear_modulus * SIDE * SIDE)
}

/// The beam `[0, L] × [0, b] × [0, b]` of `10m × m × m` cubes of side
/// `b/m`, each split into the six tetrahedra around its diagonal from the
/// lowest to the highest corner (Kuhn's; neighbours' faces match),
/// positively oriented.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `m` if it is 0; those of
/// [`Mesh::new`].
pub fn beam_mesh(m: usize) -> femquad::Result<Mesh> {
    if m == 0 {
        return Err(Error::arg(
            "m",
            "the section needs at least one cube per side: m ≥ 1",
        ));
    }
    let n = [10 * m, m, m];
    let h = [LENGTH / n[0] as f64, SIDE / m as f64, SIDE / m as f64];
    let index = |i: usize, j: usize, k: usize| (i + (n[0] + 1) * (j + (n[1] + 1) * k)) as u32;
    let mut vertices = Vec::with_capacity((n[0] + 1) * (n[1] + 1) * (n[2] + 1) * 3);
    for k in 0..=n[2] {
        for j in 0..=n[1] {
            for i in 0..=n[0] {
                vertices.extend_from_slice(&[i as f64 * h[0], j as f64 * h[1], k as f64 * h[2]]);
            }
        }
    }
    const ORDERS: [[usize; 3]; 6] = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    let mut cells = Vec::with_capacity(n[0] * n[1] * n[2] * 24);
    for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                for (parity, order) in ORDERS.iter().enumerate() {
                    // the path 000 → … → 111 adding one axis at a time
                    let mut at = [i, j, k];
                    let mut tet = [index(i, j, k); 4];
                    for (step, &axis) in order.iter().enumerate() {
                        at[axis] += 1;
                        tet[step + 1] = index(at[0], at[1], at[2]);
                    }
                    // orders 0, 3, 4 are even permutations, 1, 2, 5 odd:
                    // swapping two vertices makes the odd ones positive
                    if matches!(parity, 1 | 2 | 5) {
                        tet.swap(2, 3);
                    }
                    cells.extend_from_slice(&tet);
                }
            }
        }
    }
    Mesh::new(3, vertices, cells)
}

/// One solve of the cantilever.
#[derive(Clone, Copy, Debug)]
pub struct Deflection {
    /// `δ = −u₂(L, b/2, b/2)`.
    pub tip: f64,
    /// Tetrahedra.
    pub cells: usize,
    /// Dofs (3 per node).
    pub dofs: usize,
    /// CG iterations (multigrid-preconditioned).
    pub iterations: usize,
}

/// Solves the cantilever with Pk elements (`order`) on the beam of
/// [`beam_mesh`]`(m)` refined `refinements` times, on `backend`: CG with
/// multigrid on the refined meshes (every level with the traction on its
/// facets of the end) to the relative tolerance `tol`.
///
/// # Errors
/// Those of the mesh, the form, the operator and the solve;
/// [`Error::InvalidArgument`] naming `m` if no node lies at the centre of
/// the loaded face (`m` odd with P1 and no refinement).
pub fn solve(
    m: usize,
    refinements: usize,
    order: usize,
    backend: &Backend,
    tol: f64,
) -> femquad::Result<Deflection> {
    let hierarchy = MeshHierarchy::new(&beam_mesh(m)?, refinements)?;
    let mesh: Arc<Mesh> = hierarchy.finest().clone();
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(3, order)?, 3)?;
    let end = FacetSet::boundary_where(&mesh, |x| x[0] == LENGTH)?;
    let traction = BoundaryTerm::new(end, TipTraction)?.with_constants(&[LOAD / (SIDE * SIDE)])?;
    let lame = LameParameters::from_young_poisson(YOUNG, POISSON)?;
    let form = Form::new(space.clone(), Lame)?
        .with_constants(&lame.constants())?
        .with_boundary(traction)?;
    let op = Operator::<f64>::new(form, backend)?;
    let clamp = MeshPart::boundary_where(&mesh, |x| x[0] == 0.0)?;
    let mut problem = DirichletProblem::on_part(op, &clamp, Components::All, |_, u| u.fill(0.0))?
        .with_hierarchy(hierarchy)?;
    let (u, stats) = problem.solve_linear(tol, 500)?;
    let u = u.to_host()?;
    let centre = [LENGTH, 0.5 * SIDE, 0.5 * SIDE];
    let x = space.node_coordinates();
    let node = x
        .chunks(3)
        .position(|p| p.iter().zip(&centre).all(|(a, b)| (a - b).abs() < 1e-12))
        .ok_or_else(|| {
            Error::arg(
                "m",
                format!(
                    "no node at the centre {centre:?} of the loaded face with P{order} on \
                     the beam of m = {m} refined {refinements} time(s): take m even or refine"
                ),
            )
        })?;
    Ok(Deflection {
        tip: -u[node * 3 + 2],
        cells: mesh.n_cells(),
        dofs: space.n_dofs(),
        iterations: stats.iterations,
    })
}
