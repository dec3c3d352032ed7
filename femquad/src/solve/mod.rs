//! Solvers for the discrete problems `F(u) = 0`, matrix-free.
//!
//! femquad never assembles a matrix: every operator here is a closure
//! `apply(v, out)` that computes `out = A v`, and for the finite-element
//! problems that action is taken from residual evaluations
//! ([`crate::residual::Residual::evaluate`]) on the GPU or natively.
//!
//! * [`cg`] — conjugate gradients for symmetric positive definite
//!   operators (the Laplacian, Lamé elasticity with Dirichlet conditions).
//! * [`gmres`] — restarted GMRES for general operators (Jacobians of
//!   nonlinear physics are not symmetric).
//! * [`newton_krylov`] — Newton's method whose linear systems are solved by
//!   GMRES with Jacobian-vector products from residual differences,
//!   `J v ≈ (F(u + h v) − F(u))/h` ([`fd_step`] documents `h`).
//! * [`DirichletProblem`] — a [`Residual`](crate::residual::Residual) with
//!   some dofs fixed to given values (Dirichlet conditions), solved on the
//!   free dofs: linear problems by CG, nonlinear ones by Newton–Krylov.
//! * [`l2_error`] / [`l2_error_cells`] — `‖u_h − u‖_{L²}` against a known
//!   function, by quadrature of a chosen degree on every cell.
//!
//! Vectors are `f64` slices; the residual inside a [`DirichletProblem`] may
//! compute in `f32` or `f64` ([`crate::Real`]).

mod cg;
mod dirichlet;
mod gmres;
mod newton;
mod norms;
mod vector;

pub use cg::{CgStats, KrylovStats, cg};
pub use dirichlet::DirichletProblem;
pub use gmres::{GmresOptions, gmres};
pub use newton::{NewtonOptions, NewtonStats, fd_step, newton_krylov};
pub use norms::{l2_error, l2_error_cells};
pub use vector::{dot, norm2};
