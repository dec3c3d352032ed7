//! Sparse direct solvers: faer's Cholesky (`L Lᵀ`) and LU factorizations.

use std::sync::Arc;

use faer::linalg::solvers::SolveCore;
use faer::sparse::linalg::solvers::{Llt, Lu, SymbolicLlt, SymbolicLu};
use faer::sparse::linalg::{LltError, LuError};
use faer::sparse::{FaerError, SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Side};
use rayon::prelude::*;

use super::csr::{CsrMatrix, SYMMETRY_TOLERANCE};
use super::pattern::SparsityPattern;
use crate::error::check_len;
use crate::linalg::LinearOperator;
use crate::real::check_finite;
use crate::{Error, Result};

/// Columns of the identity a task of [`DirectSolver::inverse`] solves for:
/// the inverse of a coarse problem of a few thousand dofs in a few dozen
/// parallel blocks.
const INVERSE_COLUMNS: usize = 64;

/// Which factorization a [`DirectSolver`] holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factorization {
    /// `P A Pᵀ = L Lᵀ` for symmetric positive definite `A` (faer's
    /// supernodal or simplicial Cholesky after an AMD fill-reducing ordering).
    Cholesky,
    /// `P Aᵀ Q = L U` with partial pivoting, for general square `A` (faer's
    /// sparse LU after a COLAMD ordering); `A x = b` is solved as
    /// `(Aᵀ)ᵀ x = b`.
    Lu,
}

/// The faer factors.
#[derive(Clone, Debug)]
enum Factors {
    Cholesky(SymbolicLlt<usize>, Llt<usize, f64>),
    Lu(SymbolicLu<usize>, Box<Lu<usize, f64>>),
}

/// A sparse direct solver: a factorization of a square [`CsrMatrix`] `A`
/// that solves `A x = b` — the coarse-grid solve of multigrid, or a
/// reference solution.
///
/// The symbolic analysis (fill-reducing ordering, elimination tree,
/// supernodes) depends only on the pattern; it is done once by
/// [`DirectSolver::cholesky`] or [`DirectSolver::lu`], and
/// [`DirectSolver::refactor`] redoes only the numeric factorization for new
/// values on the same pattern (e.g. the next Newton step's Jacobian).
///
/// faer reads the matrix in compressed sparse *column* form; the CSR arrays
/// of `A` are the CSC arrays of `Aᵀ`, used without copying the values:
/// Cholesky factors `Aᵀ = A` (reading its lower triangle, after checking
/// that `A` is symmetric), LU factors `Aᵀ` and solves with its transpose.
/// faer runs sequentially here (its `rayon` feature is off), so results
/// are reproducible.
///
/// Dirichlet conditions: factor the matrix of
/// [`FixedDofs::eliminate`](crate::linalg::FixedDofs::eliminate), which stays
/// symmetric.
///
/// # Example
/// ```
/// use femquad::sparse::{CsrMatrix, DirectSolver};
///
/// # fn main() -> femquad::Result<()> {
/// // tridiag(−1, 2, −1), symmetric positive definite
/// let n = 5;
/// let mut entries = Vec::new();
/// for i in 0..n {
///     entries.push((i, i, 2.0));
///     if i > 0 {
///         entries.extend([(i, i - 1, -1.0), (i - 1, i, -1.0)]);
///     }
/// }
/// let a = CsrMatrix::from_triplets(n, n, &entries)?;
/// let solver = DirectSolver::cholesky(&a)?;
/// let b = [1.0, 0.0, 0.0, 0.0, 1.0];
/// let mut x = [0.0; 5];
/// solver.solve(&b, &mut x)?;
/// for xi in x {
///     assert!((xi - 1.0).abs() < 1e-14);
/// }
/// // The same matrix scaled: the symbolic analysis is reused.
/// let mut a2 = a.clone();
/// a2.values_mut().iter_mut().for_each(|v| *v *= 4.0);
/// let mut solver = solver;
/// solver.refactor(&a2)?;
/// solver.solve(&b, &mut x)?;
/// assert!((x[2] - 0.25).abs() < 1e-14);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct DirectSolver {
    pattern: Arc<SparsityPattern>,
    /// The column indices of the pattern as faer's index type.
    row_idx: Vec<usize>,
    factors: Factors,
}

impl DirectSolver {
    /// Cholesky factorization of the symmetric positive definite `a`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if it is not square, not
    /// symmetric ([`CsrMatrix::check_symmetric`] with
    /// [`SYMMETRY_TOLERANCE`], naming the entry), not positive definite (a
    /// non-positive pivot, e.g. a Laplacian without Dirichlet conditions),
    /// or numerically singular, or if faer runs out of memory or index range;
    /// [`Error::NonFinite`] for a NaN or ±∞ value.
    pub fn cholesky(a: &CsrMatrix) -> Result<DirectSolver> {
        let row_idx = check_matrix(a)?;
        check_symmetric(a)?;
        let symbolic = SymbolicLlt::try_new(csc_of(a, &row_idx), Side::Lower)
            .map_err(|e| faer_error("the symbolic Cholesky analysis", e))?;
        let numeric = llt(&symbolic, a, &row_idx)?;
        let solver = DirectSolver {
            pattern: Arc::clone(a.pattern()),
            row_idx,
            factors: Factors::Cholesky(symbolic, numeric),
        };
        solver.probe()?;
        Ok(solver)
    }

    /// LU factorization (with partial pivoting) of the square `a`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if it is not square, structurally
    /// or numerically singular (a zero pivot), or if faer runs out of memory
    /// or index range; [`Error::NonFinite`] for a NaN or ±∞ value.
    pub fn lu(a: &CsrMatrix) -> Result<DirectSolver> {
        let row_idx = check_matrix(a)?;
        let symbolic = SymbolicLu::try_new(csc_of(a, &row_idx))
            .map_err(|e| faer_error("the symbolic LU analysis", e))?;
        let numeric = lu(&symbolic, a, &row_idx)?;
        let solver = DirectSolver {
            pattern: Arc::clone(a.pattern()),
            row_idx,
            factors: Factors::Lu(symbolic, Box::new(numeric)),
        };
        solver.probe()?;
        Ok(solver)
    }

    /// Factors new values `a` on the same pattern, reusing the symbolic
    /// analysis (only the numeric factorization is redone).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if its pattern differs from the
    /// factored one; the errors of [`DirectSolver::cholesky`] or
    /// [`DirectSolver::lu`]. After an error the solver keeps its previous
    /// factors.
    pub fn refactor(&mut self, a: &CsrMatrix) -> Result<()> {
        if !Arc::ptr_eq(a.pattern(), &self.pattern) && !a.pattern().same_structure(&self.pattern) {
            return Err(Error::arg(
                "a",
                "its pattern differs from the pattern of the factored matrix",
            ));
        }
        check_finite("a", a.values())?;
        let factors = match &self.factors {
            Factors::Cholesky(symbolic, _) => {
                check_symmetric(a)?;
                Factors::Cholesky(symbolic.clone(), llt(symbolic, a, &self.row_idx)?)
            }
            Factors::Lu(symbolic, _) => {
                Factors::Lu(symbolic.clone(), Box::new(lu(symbolic, a, &self.row_idx)?))
            }
        };
        let old = std::mem::replace(&mut self.factors, factors);
        if let Err(e) = self.probe() {
            self.factors = old;
            return Err(e);
        }
        Ok(())
    }

    /// Solves `A x = b`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `b` or `x` if its length is not `n`,
    /// or naming `b` if the solution overflows; [`Error::NonFinite`] for NaN
    /// or ±∞ in `b`.
    pub fn solve(&self, b: &[f64], x: &mut [f64]) -> Result<()> {
        let n = self.n();
        check_len("b", b, n)?;
        check_len("x", x, n)?;
        check_finite("b", b)?;
        self.solve_unchecked(b, x);
        match x.iter().position(|v| !v.is_finite()) {
            None => Ok(()),
            Some(i) => Err(Error::arg(
                "b",
                format!("the solution overflows: x[{i}] = {}", x[i]),
            )),
        }
    }

    /// `A⁻¹`, dense and row-major (`n²` entries, `A⁻¹[i][j]` at `i·n + j`):
    /// the solves for all `n` unit vectors (`X = A⁻¹ I`, column `j` of `X`
    /// the solution for `e_j`, each column as [`DirectSolver::solve`] gives
    /// it; blocks of 64 right-hand sides solved in parallel), transposed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if an entry is not finite.
    pub fn inverse(&self) -> Result<Vec<f64>> {
        let n = self.n();
        let mut x = vec![0.0; n * n];
        for j in 0..n {
            x[j * n + j] = 1.0;
        }
        // blocks of columns solved in parallel (the factors are shared, read only)
        x.par_chunks_mut(n * INVERSE_COLUMNS).for_each(|block| {
            let rhs = MatMut::from_column_major_slice_mut(block, n, block.len() / n);
            match &self.factors {
                Factors::Cholesky(_, f) => f.solve_in_place_with_conj(Conj::No, rhs),
                Factors::Lu(_, f) => f.solve_transpose_in_place_with_conj(Conj::No, rhs),
            }
        });
        if let Some(k) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::arg(
                "a",
                format!(
                    "its inverse overflows: entry ({}, {}) is {}",
                    k % n,
                    k / n,
                    x[k]
                ),
            ));
        }
        let mut rows = vec![0.0; n * n];
        for (j, column) in x.chunks_exact(n).enumerate() {
            for (i, v) in column.iter().enumerate() {
                rows[i * n + j] = *v;
            }
        }
        Ok(rows)
    }

    /// Number of rows (and columns) of the factored matrix.
    pub fn n(&self) -> usize {
        self.pattern.n_rows()
    }

    /// Which factorization this is.
    pub fn factorization(&self) -> Factorization {
        match self.factors {
            Factors::Cholesky(..) => Factorization::Cholesky,
            Factors::Lu(..) => Factorization::Lu,
        }
    }

    /// The pattern of the factored matrix.
    pub fn pattern(&self) -> &Arc<SparsityPattern> {
        &self.pattern
    }

    fn solve_unchecked(&self, b: &[f64], x: &mut [f64]) {
        x.copy_from_slice(b);
        let n = x.len();
        let rhs = MatMut::from_column_major_slice_mut(x, n, 1);
        match &self.factors {
            // A = Aᵀ: the factors of Aᵀ solve A x = b directly.
            Factors::Cholesky(_, f) => f.solve_in_place_with_conj(Conj::No, rhs),
            // The factors are of Aᵀ: solve with their transpose.
            Factors::Lu(_, f) => f.solve_transpose_in_place_with_conj(Conj::No, rhs),
        }
    }

    /// Detects a numerically singular factorization: a zero pivot makes
    /// every solve non-finite, so solve once with all ones.
    fn probe(&self) -> Result<()> {
        let n = self.n();
        let mut x = vec![0.0; n];
        self.solve_unchecked(&vec![1.0; n], &mut x);
        match x.iter().position(|v| !v.is_finite()) {
            None => Ok(()),
            Some(i) => Err(Error::arg(
                "a",
                format!(
                    "the matrix is numerically singular: the {:?} factorization has a zero \
                     pivot (a test solve gave x[{i}] = {})",
                    self.factorization(),
                    x[i]
                ),
            )),
        }
    }
}

impl std::fmt::Debug for DirectSolver {
    /// The factorization and the size, not the factors.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirectSolver")
            .field("factorization", &self.factorization())
            .field("n", &self.n())
            .field("nnz", &self.pattern.nnz())
            .finish_non_exhaustive()
    }
}

/// Checks that `a` is square with finite values; returns its column
/// indices as faer's index type.
fn check_matrix(a: &CsrMatrix) -> Result<Vec<usize>> {
    a.check_square("a")?;
    check_finite("a", a.values())?;
    Ok(a.pattern().col_idx().iter().map(|&j| j as usize).collect())
}

/// The error for a matrix that Cholesky cannot take as symmetric.
fn check_symmetric(a: &CsrMatrix) -> Result<()> {
    a.check_symmetric(SYMMETRY_TOLERANCE).map_err(|e| match e {
        Error::InvalidArgument { reason, .. } => Error::arg(
            "a",
            format!("Cholesky needs a symmetric matrix; this one is {reason}"),
        ),
        other => other,
    })
}

/// The CSR arrays of `a` as the CSC pattern of `Aᵀ`.
fn csc_of<'a>(a: &'a CsrMatrix, row_idx: &'a [usize]) -> SymbolicSparseColMatRef<'a, usize> {
    let n = a.n_rows();
    // The pattern's invariants (row pointers from 0 to nnz, strictly
    // increasing indices below n) are faer's: this does not panic.
    SymbolicSparseColMatRef::new_checked(n, n, a.pattern().row_ptr(), None, row_idx)
}

/// Numeric Cholesky factorization of `a` (symmetry checked by the caller).
fn llt(symbolic: &SymbolicLlt<usize>, a: &CsrMatrix, row_idx: &[usize]) -> Result<Llt<usize, f64>> {
    let mat = SparseColMatRef::new(csc_of(a, row_idx), a.values());
    Llt::try_new_with_symbolic(symbolic.clone(), mat, Side::Lower).map_err(|e| match e {
        LltError::Numeric(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot {
            index,
        }) => Error::arg(
            "a",
            format!(
                "the matrix is not positive definite: Cholesky met a non-positive pivot at \
                 elimination step {index} of {} (in the fill-reducing order); a singular \
                 operator, such as a Laplacian or elasticity without enough Dirichlet \
                 conditions, gives this",
                a.n_rows()
            ),
        ),
        LltError::Generic(e) => faer_error("the Cholesky factorization", e),
    })
}

/// Numeric LU factorization of `Aᵀ` (the CSC reading of `a`'s CSR arrays).
fn lu(symbolic: &SymbolicLu<usize>, a: &CsrMatrix, row_idx: &[usize]) -> Result<Lu<usize, f64>> {
    let mat = SparseColMatRef::new(csc_of(a, row_idx), a.values());
    Lu::try_new_with_symbolic(symbolic.clone(), mat).map_err(|e| match e {
        LuError::SymbolicSingular { index } => Error::arg(
            "a",
            format!(
                "the matrix is singular: LU found no pivot at elimination step {index} of {}",
                a.n_rows()
            ),
        ),
        LuError::Generic(e) => faer_error("the LU factorization", e),
    })
}

/// The error for faer's own failures (memory, index range).
fn faer_error(what: &str, e: FaerError) -> Error {
    let reason = match e {
        FaerError::IndexOverflow => "the factor's size overflows the index type".to_string(),
        FaerError::OutOfMemory => "out of memory".to_string(),
        other => format!("{other:?}"),
    };
    Error::arg("a", format!("{what} failed: {reason}"))
}

/// `x = A⁻¹ b` ([`DirectSolver::solve`]) on host vectors: an exact solve as
/// a preconditioner, or the coarse-grid solve of a multigrid cycle.
impl LinearOperator<Vec<f64>> for DirectSolver {
    fn apply(&mut self, b: &Vec<f64>, x: &mut Vec<f64>) -> Result<()> {
        self.solve(b, x)
    }
}
