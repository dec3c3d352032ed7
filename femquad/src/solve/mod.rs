//! Solvers for the discrete problems `F(u) = 0`, matrix-free.
//!
//! Every operator here is a [`LinearOperator`](crate::linalg::LinearOperator) — any closure
//! `apply(v, out)` that computes `out = A v` qualifies — and for the
//! finite-element problems that action is the exact Jacobian action of an
//! [`Operator`](crate::operator::Operator) (or residual differences), on
//! the GPU or natively. The only matrix assembled is multigrid's coarsest
//! Jacobian, for its direct solve.
//!
//! The solvers are generic over their vectors ([`crate::vector::VectorOps`]):
//! one code path serves host vectors (`Vec<f64>`, `Vec<f32>`), device
//! vectors ([`DeviceVector`](crate::opencl::DeviceVector)) and the
//! user-facing [`Vector`](crate::backend::Vector). All vector work goes
//! through that trait, so on device vectors with a device operator only the
//! scalars of inner products and norms cross to the host: CG reads two
//! scalar results per iteration, GMRES three per Arnoldi step (CGS2), and
//! no array.
//!
//! Both report the true residual `‖b − A x‖` of the `x` they return, not
//! their recurrence's estimate of it: a claim of convergence is checked
//! against `b − A x` (one more application of `A`), and a tolerance below
//! what the vectors' precision can reach is refused with the bound.
//!
//! * [`cg`] — preconditioned conjugate gradients for symmetric positive
//!   definite operators (the Laplacian, Lamé elasticity with Dirichlet
//!   conditions).
//! * [`gmres`] — restarted, right-preconditioned GMRES for general operators
//!   (Jacobians of nonlinear physics are not symmetric).
//! * [`Jacobi`](crate::linalg::Jacobi) — the diagonal preconditioner `z = D⁻¹ r`; the
//!   preconditioner argument of the solvers takes any [`LinearOperator`](crate::linalg::LinearOperator).
//! * [`newton_krylov`] — Newton's method whose linear systems are solved by
//!   GMRES with Jacobian-vector products that are exact
//!   ([`Jacobian::Exact`], the action passed with the choice) or from
//!   residual differences, `J v ≈ (F(u + h v) − F(u))/h`
//!   ([`Jacobian::Differences`]; [`fd_step`] documents `h`).
//! * [`DirichletProblem`] — a [`Operator`](crate::operator::Operator) with
//!   some dofs fixed to given values (Dirichlet conditions), solved on the
//!   free dofs: linear problems by CG, nonlinear ones by Newton–Krylov,
//!   both preconditioned by geometric multigrid ([`Preconditioner`],
//!   [`crate::multigrid`]) unless told otherwise.
//! * [`newton_krylov_relinearized`] — Newton–Krylov with a preconditioner
//!   rebuilt for the Jacobian at every iterate ([`NewtonPreconditioner`]).
//! * [`l2_error`] / [`l2_error_cells`] — `‖u_h − u‖_{L²}` against a known
//!   function, by quadrature of a chosen degree on every cell.
//!
//! A [`DirichletProblem`] solves with vectors where its operator lives (host
//! or device), in the operator's precision, `f32` or `f64`
//! ([`crate::Real`]).

mod cg;
mod constraints;
mod dirichlet;
mod gmres;
mod krylov;
mod linear_checks;
mod newton;
mod norms;
mod preconditioner;
mod sparse_operators;

pub use cg::{CgStats, cg};
pub use dirichlet::DirichletProblem;
pub use gmres::{GmresOptions, gmres};
pub use krylov::KrylovStats;
pub use newton::{
    Jacobian, JacobianAction, JacobianProducts, NewtonOptions, NewtonPreconditioner, NewtonStats,
    fd_step, newton_krylov, newton_krylov_relinearized,
};
pub use norms::{l2_error, l2_error_cells};
pub use preconditioner::Preconditioner;
