//! Assembled sparse matrices and a direct solver: Jacobians as matrices,
//! for the coarse-grid solve of multigrid and for export and inspection.
//!
//! # Data flow
//! ```text
//! space ──► SparsityPattern::of_space  (once per space, shared by Arc)
//! discretization + u + pointwise Jacobian g0..g3 ──► element_matrices ──► K_c  [cell][i][j]
//! K_c ──► CsrMatrix::assemble / fill  (Σ_c over the node → cell-slot incidence)
//!     ──► FixedDofs::eliminate (Dirichlet) ──► DirectSolver (faer Cholesky / LU)
//!     └─► write_matrix_market (export)
//! ```
//! In libCEED's terms, assembly computes `Eᵀ K E` with `E` the space's
//! restriction (its gather, [`FunctionSpace::gather`](crate::space::FunctionSpace::gather))
//! and `K` the block-diagonal matrix of the element matrices — the
//! operator of [`crate::operator`] linearized and assembled.
//!
//! # The matrix of a space
//! Rows and columns are the space's dofs, interleaved node-major
//! (`dof = node·N_comp + comp`). Element matrices are `[cell][i][j]`
//! ([`crate::layout::elem_mat`]) with element dofs `i = a·N_comp + fc`
//! (test function `a`) and `j = b·N_comp + gc` (trial function `b`):
//!
//! ```text
//! A[node(c,a)·N_comp + fc][node(c,b)·N_comp + gc] = Σ_c K_c[a·N_comp + fc][b·N_comp + gc],
//! K_c[i][j] = ∂E[c][i]/∂u_c[j]
//! ```
//!
//! the Jacobian of the element vectors of [`crate::discretization`], so that
//! for a physics linear in `u`, `A v = F(u + v) − F(u)`.
//!
//! # Modules
//! * [`SparsityPattern`] — CSR structure; of a space, or from arrays.
//! * [`CsrMatrix`] — values on a shared pattern: row access, `y = A x`,
//!   diagonal and point-block diagonal, dense copy, symmetry check, and
//!   Matrix Market export/import.
//! * [`element_matrices`] — `K_c` from a pointwise Jacobian (PETSc's
//!   `g0…g3`), natively; [`assemble_into`] / [`CsrMatrix::assemble`] /
//!   [`CsrMatrix::fill`] sum them.
//! * [`FixedDofs::eliminate`](crate::linalg::FixedDofs::eliminate) —
//!   Dirichlet conditions by symmetric elimination, for the fixed dofs of a
//!   [`FixedDofs`](crate::linalg::FixedDofs).
//! * [`DirectSolver`] — faer's sparse Cholesky and LU, symbolic analysis reused.
//!
//! Both a [`CsrMatrix`] (`y = A x`) and a [`DirectSolver`] (`x = A⁻¹ b`) are
//! [`LinearOperator`](crate::linalg::LinearOperator)s on `Vec<f64>` (the
//! implementations live in [`crate::solve`], which depends on this module): the
//! operator or the preconditioner of [`crate::solve::cg`] and
//! [`crate::solve::gmres`], or the coarse solve of a multigrid cycle.
//!
//! [`HostCsr`] holds a matrix's values in an operator's precision `R` (the
//! host side of [`crate::backend::Matrix`], whose device side is assembled
//! on the device: [`crate::opencl::matrix`]).
//!
//! Everything else here is `f64`, and everything is deterministic: every parallel loop sums in
//! a fixed order, independent of the thread count.

mod assemble;
mod csr;
mod direct;
mod dirichlet;
mod element;
mod host_csr;
mod matrix_market;
mod pattern;

pub use assemble::assemble_into;
pub use csr::{CsrMatrix, SYMMETRY_TOLERANCE};
pub use direct::{DirectSolver, Factorization};
pub use element::element_matrices;
pub use host_csr::HostCsr;
pub use pattern::SparsityPattern;
