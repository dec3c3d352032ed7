//! Geometric multigrid, matrix-free on the device: the preconditioner whose
//! iteration counts stay bounded as the mesh is refined.
//!
//! # Data flow
//! ```text
//! coarse mesh (generated or Gmsh) ──► MeshHierarchy (uniform refinement, tags kept)
//! MeshHierarchy + the field's space ──► LevelSpaces: P1 on every mesh (+ P2 on the finest),
//!                                        Transfers between them, fixed dofs of every level
//! operators of every level (LevelOperators: J_l·v, its point-block diagonal, the coarsest assembled)
//!     ──► Multigrid::setup: PointBlockJacobi + eigenvalue estimate ──► Chebyshev, per level
//!                           coarsest: CsrMatrix ──► faer Cholesky / LU (CoarseSolver;
//!                                     on a device, small: its dense inverse there)
//!     ──► Multigrid::apply: one V-cycle x = M⁻¹ b, the preconditioner of CG / GMRES
//! ```
//!
//! * [`MeshHierarchy`] — a coarse mesh and its uniform refinements
//!   ([`crate::mesh::refine()`]: triangles into 4, tetrahedra into 8 by Bey's
//!   rule, quality bounded), with Gmsh tags on every level.
//! * [`LevelSpaces`] — the levels' spaces: P1 on each mesh, and for a P2
//!   field P2 on the finest mesh (p-coarsening first); the fixed dofs of
//!   each level.
//! * [`Transfer`] — the nested prolongation `P` (interpolation: exact for
//!   nested spaces), its transpose (restriction) and the injection of a
//!   state; the backend's kernels ([`MultigridKernels`](crate::backend::MultigridKernels)
//!   over [`MultigridOps`](crate::seam::MultigridOps): device kernels and
//!   their native twins, bitwise equal); vector fields interleaved node-major
//!   (`dof = node·N_comp + c`).
//! * [`PointBlockJacobi`] — `D⁻¹` with `D` the `N_comp × N_comp` blocks of
//!   each node, inverted once per setup; zero on the fixed dofs in the
//!   smoothers ([`OnFixed`]).
//! * [`Chebyshev`] — the smoother: a fixed polynomial in `D⁻¹A` damping the
//!   upper part of its spectrum, whose top is estimated by a few Lanczos
//!   steps ([`estimate_eigenvalues`]).
//! * [`CoarseSolver`] — the coarsest operator assembled and factored once
//!   with faer; on a device with at most
//!   [`MultigridOptions::dense_coarse_max_dofs`] dofs its
//!   inverse is kept dense there and applied in one launch, otherwise the
//!   one place where data crosses between host and device in a cycle (two
//!   vectors of the coarsest level).
//! * [`Multigrid`] — the V-cycle and its setup, generic over the operators
//!   of the levels ([`LevelOperators`]).
//! * [`CyclePrecision`] — the V-cycle in the problem's precision, or in
//!   `f32` inside an `f64` solve (`z = P(M₃₂⁻¹ P⁻¹ r)`: a `Multigrid<f32>`
//!   inside the `Multigrid<f64>`, on the assembled levels' matrices rounded
//!   to `f32`, [`SingleLevels`]).
//! * [`OperatorLevels`] — multigrid for the Jacobian of a
//!   [`Operator`](crate::operator::Operator): its form bound on every coarser
//!   level, the state injected there, and [`JacobianLevels`], the levels'
//!   exact Jacobian actions, point-block diagonals (on the device) and the
//!   coarsest assembled Jacobian as [`LevelOperators`]. This is what
//!   [`DirichletProblem`](crate::solve::DirichletProblem) uses by default.
//!
//! Every operation works on [`Vector`](crate::backend::Vector)s: on device
//! vectors everything runs on the device (the coarse solve too, up to
//! [`MultigridOptions::dense_coarse_max_dofs`] coarse dofs) and nothing but a few scalars
//! (setup) and, above that bound, the coarse vectors are read back; on host
//! vectors the native twins compute the same.

mod block_jacobi;
mod chebyshev;
mod coarse;
mod eigen;
mod hierarchy;
mod levels;
mod operator_levels;
mod operators;
mod profile;
mod representation;
mod single;
mod transfer;
mod vcycle;

pub use block_jacobi::{OnFixed, PointBlockJacobi, fill_random};
pub use chebyshev::{Chebyshev, ChebyshevWork};
pub use coarse::CoarseSolver;
pub use eigen::{EigenEstimate, estimate_eigenvalues, estimate_eigenvalues_of};
pub use hierarchy::MeshHierarchy;
pub use levels::LevelSpaces;
pub use operator_levels::{JacobianLevels, OperatorLevels};
pub use operators::{Action, LevelAction, LevelOperators, SmoothedOperator};
pub use profile::{CycleProfile, LevelTimes};
pub use representation::{LevelRepresentation, MEASURED_APPLIES, SmallLevels};
pub use single::{CyclePrecision, SingleLevels};
pub use transfer::Transfer;
pub use vcycle::{LevelReport, Multigrid, MultigridOptions, SetupReport, smoother_setup_error};

#[cfg(test)]
mod tests;
