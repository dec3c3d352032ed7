//! Time integration of transient problems `F(t, u, u_t) = 0` (PETSc's
//! implicit form: a `#[pointwise]` physics that reads `u_t`, and `t` if
//! its data depend on time).
//!
//! A [`TimeIntegrator`] advances a [`DirichletProblem`] whose operator's
//! physics is transient, with an implicit [`Scheme`] (backward Euler, the
//! θ-method with Crank–Nicolson at θ = ½, variable-step BDF2). Each step
//! binds the operator's time state `t`, `u_t = σ·y + b`
//! ([`Operator::set_time`](crate::operator::Operator::set_time)) and solves
//! `F(t, y, σ·y + b) = 0` by Newton–Krylov
//! ([`DirichletProblem::solve_nonlinear`]) with the exact step Jacobian
//! `σ·∂F/∂u_t + ∂F/∂u` (both parts from the macro's automatic
//! differentiation), preconditioned by the problem's multigrid, whose levels
//! take the same time state.
//!
//! The integrator is generic over its problem: what it needs (the form's
//! kind, Dirichlet values, the time state, one step's Newton–Krylov solve,
//! output) is the trait [`TimeProblem`], which a [`DirichletProblem`]
//! implements, and `femquad-mpi` implements for a problem distributed over
//! MPI ranks — the same steps on either.
//!
//! * Fixed steps ([`StepControl::Fixed`]) or adaptive ones
//!   ([`StepControl::Adaptive`], [`Adaptive`]: step doubling, documented
//!   there).
//! * Dirichlet values `g(t, x)` ([`TimeIntegrator::with_boundary_values`]),
//!   imposed at each step's time; otherwise the problem's fixed values
//!   hold at all times.
//! * Progress: a callback receives a [`StepReport`] after every accepted
//!   step ([`TimeIntegrator::with_progress`]); a ParaView series
//!   ([`TimeSeries`]) records every k-th step
//!   ([`TimeIntegrator::with_output`]).

mod adaptive;
mod integrator;
mod problem;
mod scheme;

pub use adaptive::{Adaptive, StepControl};
pub use integrator::{RunStats, StepReport, TimeIntegrator};
pub use problem::{FormKind, TimeProblem};
pub use scheme::Scheme;

#[cfg(doc)]
use crate::output::TimeSeries;
#[cfg(doc)]
use crate::solve::DirichletProblem;
