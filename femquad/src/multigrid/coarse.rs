//! [`CoarseSolver`]: the exact solve on the coarsest level.

use crate::backend::Vector;
use crate::linalg::FixedDofs;
use crate::sparse::{CsrMatrix, DirectSolver, Factorization};
use crate::{Error, Real, Result};

/// The coarsest level's operator, assembled ([`CsrMatrix`], `f64`), its
/// fixed rows and columns made the identity's
/// ([`FixedDofs::eliminate_matrix`]: the constrained operator, symmetric
/// when the operator is), and factored once with faer
/// ([`DirectSolver::cholesky`] for symmetric positive definite operators,
/// [`DirectSolver::lu`] otherwise); a new linearization on the same pattern
/// only refactors numerically ([`CoarseSolver::refactor`]).
///
/// # The one transfer per cycle
/// The factorization lives on the host, so [`CoarseSolver::solve`] on
/// device vectors downloads the coarse right-hand side, solves, and uploads
/// the solution: two arrays of the coarsest level's size per V-cycle — the
/// only data that crosses between host and device in a cycle (a few
/// kilobytes for a coarse mesh of a few hundred cells; every other level
/// works on device vectors only).
#[derive(Debug)]
pub struct CoarseSolver {
    solver: DirectSolver,
    fixed: FixedDofs,
    b: Vec<f64>,
    x: Vec<f64>,
}

impl CoarseSolver {
    /// Factors `matrix` with the rows and columns of `fixed` made the
    /// identity's.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `matrix` for those of
    /// [`FixedDofs::eliminate_matrix`] (a size other than `fixed`'s) and if
    /// the factorization fails (not symmetric or not positive definite for
    /// Cholesky, singular).
    pub fn new(
        mut matrix: CsrMatrix,
        fixed: FixedDofs,
        factorization: Factorization,
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
        Ok(CoarseSolver {
            solver,
            fixed,
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
            .map_err(|e| matrix_error(e, &format!("its {f:?} factorization failed: ")))
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

    /// `x = A_c⁻¹ b` (the constrained coarse operator), in `f64` on the host:
    /// on device vectors one download of `b` and one upload of `x`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `b` or `x` for a wrong length or
    /// different places; those of [`DirectSolver::solve`].
    pub fn solve<R: Real>(&mut self, b: &Vector<R>, x: &mut Vector<R>) -> Result<()> {
        let n = self.n();
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
