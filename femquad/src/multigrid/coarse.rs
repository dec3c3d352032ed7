//! [`CoarseSolver`]: the exact solve on the coarsest level.

use crate::backend::{Location, MultigridKernels, Vector};
use crate::linalg::FixedDofs;
use crate::sparse::{CsrMatrix, DirectSolver, Factorization};
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The coarsest level's operator, assembled ([`CsrMatrix`], `f64`), its
/// fixed rows and columns made the identity's
/// ([`FixedDofs::eliminate_matrix`]: the constrained operator `A_c`,
/// symmetric when the operator is), and factored once with faer
/// ([`DirectSolver::cholesky`] for symmetric positive definite operators,
/// [`DirectSolver::lu`] otherwise); a new linearization on the same pattern
/// only refactors numerically ([`CoarseSolver::refactor`]).
///
/// # Where the solve runs
/// * Multigrid kernels on a device and at most
///   [`MultigridOptions::dense_coarse_max_dofs`](super::MultigridOptions::dense_coarse_max_dofs)
///   dofs: at each (re)factorization `A_c⁻¹` is computed from the
///   factorization ([`DirectSolver::inverse`], `f64`), rounded to `R` and
///   kept on the device, dense and row-major; [`CoarseSolver::solve`] is
///   `x = A_c⁻¹ b`, one launch ([`MultigridKernels::dense_apply`]), and
///   nothing crosses between host and device. It agrees with the host solve
///   to rounding (the inverse's entries rounded to `R`, the product summed
///   in `R`). A fixed dof's row of `A_c⁻¹` is the identity's, as is its
///   row of `A_c`, so `x_D = b_D` exactly as in the host solve.
/// * Otherwise (host kernels, where the sparse triangular solves cost far
///   less than the `n²` of a dense product, or more dofs): the
///   factorization on the host; on device vectors [`CoarseSolver::solve`]
///   downloads the coarse right-hand side, solves in `f64`, and uploads the
///   solution — two arrays of the coarsest level's size per V-cycle.
///
/// [`CoarseSolver::dense_on_device`] says which.
#[derive(Debug)]
pub struct CoarseSolver<R: Real> {
    solver: DirectSolver,
    fixed: FixedDofs,
    /// The kernels and `A_c⁻¹` (row-major, `n²` entries) on their device,
    /// if the solve applies the dense inverse there.
    dense: Option<(MultigridKernels<R>, Vector<R>)>,
    b: Vec<f64>,
    x: Vec<f64>,
}

impl<R: Real> CoarseSolver<R> {
    /// Factors `matrix` with the rows and columns of `fixed` made the
    /// identity's, for vectors where `kernels` work (on a device with at
    /// most `dense_max_dofs` dofs (the multigrid's
    /// [`MultigridOptions::dense_coarse_max_dofs`](super::MultigridOptions::dense_coarse_max_dofs))
    /// the dense inverse uploaded there).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `matrix` for those of
    /// [`FixedDofs::eliminate_matrix`] (a size other than `fixed`'s) and if
    /// the factorization fails (not symmetric or not positive definite for
    /// Cholesky, singular, an inverse that overflows); device errors.
    pub fn new(
        mut matrix: CsrMatrix,
        fixed: FixedDofs,
        factorization: Factorization,
        kernels: &MultigridKernels<R>,
        dense_max_dofs: usize,
    ) -> Result<Self> {
        fixed
            .eliminate_matrix(&mut matrix)
            .map_err(|e| matrix_error(e, ""))?;
        let solver = match factorization {
            Factorization::Cholesky => DirectSolver::cholesky(&matrix),
            Factorization::Lu => DirectSolver::lu(&matrix),
        }
        .map_err(|e| matrix_error(e, &format!("its {factorization:?} factorization failed: ")))?;
        let n = matrix.n_rows();
        let dense = match kernels.location() {
            Location::Device { .. } if n <= dense_max_dofs => {
                let inverse = dense_inverse(&solver, kernels)?;
                Some((kernels.clone(), inverse))
            }
            _ => None,
        };
        Ok(CoarseSolver {
            solver,
            fixed,
            dense,
            b: vec![0.0; n],
            x: vec![0.0; n],
        })
    }

    /// Refactors for new values of the operator (same pattern, e.g. the next
    /// Newton step), reusing the symbolic analysis.
    ///
    /// # Errors
    /// Those of [`FixedDofs::eliminate_matrix`] and
    /// [`DirectSolver::refactor`], naming `matrix`.
    pub fn refactor(&mut self, mut matrix: CsrMatrix) -> Result<()> {
        self.fixed
            .eliminate_matrix(&mut matrix)
            .map_err(|e| matrix_error(e, ""))?;
        let f = self.solver.factorization();
        self.solver
            .refactor(&matrix)
            .map_err(|e| matrix_error(e, &format!("its {f:?} factorization failed: ")))?;
        if let Some((kernels, inverse)) = &mut self.dense {
            *inverse = dense_inverse(&self.solver, kernels)?;
        }
        Ok(())
    }

    /// Whether [`CoarseSolver::solve`] applies the dense inverse on the
    /// device (one launch, no transfer) rather than the factorization on
    /// the host (see the [type documentation](Self)).
    pub fn dense_on_device(&self) -> bool {
        self.dense.is_some()
    }

    /// Whether `matrix` has the pattern of the factored matrix (so
    /// [`CoarseSolver::refactor`] applies).
    pub fn same_pattern(&self, matrix: &CsrMatrix) -> bool {
        std::sync::Arc::ptr_eq(matrix.pattern(), self.solver.pattern())
            || matrix.pattern().same_structure(self.solver.pattern())
    }

    /// Unknowns of the coarse level.
    pub fn n(&self) -> usize {
        self.solver.n()
    }

    /// Which factorization is used.
    pub fn factorization(&self) -> Factorization {
        self.solver.factorization()
    }

    /// `x = A_c⁻¹ b` (the constrained coarse operator): with the dense
    /// inverse one product on the device, else in `f64` on the host (on
    /// device vectors one download of `b` and one upload of `x`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `b` or `x` for a wrong length or
    /// a place other than the kernels' (dense inverse); those of
    /// [`DirectSolver::solve`].
    pub fn solve(&mut self, b: &Vector<R>, x: &mut Vector<R>) -> Result<()> {
        let n = self.n();
        if let Some((kernels, inverse)) = &self.dense {
            check("b", b.len(), n)?;
            check("x", x.len(), n)?;
            return kernels.dense_apply(x, inverse, b).map_err(|e| match e {
                Error::InvalidArgument { name: "y", reason } => Error::arg("x", reason),
                Error::InvalidArgument { name: "x", reason } => Error::arg("b", reason),
                other => other,
            });
        }
        match b {
            Vector::Host(b) => {
                check("b", b.len(), n)?;
                for (o, v) in self.b.iter_mut().zip(b) {
                    *o = v.to_f64();
                }
            }
            Vector::Device(d) => {
                check("b", d.len(), n)?;
                let host = d.to_host()?;
                for (o, v) in self.b.iter_mut().zip(&host) {
                    *o = v.to_f64();
                }
            }
        }
        self.solver.solve(&self.b, &mut self.x)?;
        let values: Vec<R> = self.x.iter().map(|&v| R::from_f64(v)).collect();
        match x {
            Vector::Host(x) => {
                check("x", x.len(), n)?;
                x.copy_from_slice(&values);
                Ok(())
            }
            Vector::Device(d) => {
                check("x", d.len(), n)?;
                d.upload(&values)
            }
        }
    }
}

/// `A_c⁻¹` of the factorization `solver`, rounded to `R`, where `kernels`
/// are.
fn dense_inverse<R: Real>(
    solver: &DirectSolver,
    kernels: &MultigridKernels<R>,
) -> Result<Vector<R>> {
    let inverse = solver
        .inverse()
        .map_err(|e| matrix_error(e, "the dense inverse of its factorization: "))?;
    kernels.vector_of(inverse.into_iter().map(R::from_f64).collect())
}

fn check(name: &'static str, got: usize, want: usize) -> Result<()> {
    if got == want {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {want} entries (the coarse level's), got {got}"),
        ))
    }
}

/// An error about the matrix from [`FixedDofs::eliminate_matrix`] or the
/// factorization ([`DirectSolver`]), which name it `a`, as one about the
/// `matrix` given to [`CoarseSolver::new`] or [`CoarseSolver::refactor`]:
/// `what` (e.g. the factorization that failed) before the reason.
fn matrix_error(e: Error, what: &str) -> Error {
    match e {
        Error::InvalidArgument { name: "a", reason } => {
            Error::arg("matrix", format!("{what}{reason}"))
        }
        other => other,
    }
}
