//! Sparse matrices in compressed sparse row form, with `f64` values.

use std::sync::Arc;

use rayon::prelude::*;

use super::pattern::SparsityPattern;
use crate::error::check_len;
use crate::linalg::LinearOperator;
use crate::real::check_finite;
use crate::{Error, Result};

/// Rows per rayon task in row-parallel loops.
const ROWS_PER_TASK: usize = 1024;

/// Largest matrix (entries) that [`CsrMatrix::to_dense`] builds: 2^28
/// (2 GiB of `f64`).
const MAX_DENSE_ENTRIES: usize = 1 << 28;

/// Default relative tolerance of [`CsrMatrix::check_symmetric`] as used by
/// [`DirectSolver::cholesky`](super::DirectSolver::cholesky).
pub const SYMMETRY_TOLERANCE: f64 = 1e-10;

/// A sparse matrix `A` (`n_rows × n_cols`, `f64` values) in compressed
/// sparse row form: a shared [`SparsityPattern`] and one value per stored
/// entry, `values[k] = A[i][col_idx[k]]` for `row_ptr[i] ≤ k < row_ptr[i+1]`.
/// Entries not in the pattern are zero.
///
/// Matrices of a [`FunctionSpace`](crate::space::FunctionSpace) have its
/// dofs as rows and columns, interleaved node-major (`dof = node·N_comp +
/// comp`); they are assembled from element matrices
/// ([`CsrMatrix::assemble`], [`CsrMatrix::fill`]) into the pattern of
/// [`SparsityPattern::of_space`].
///
/// # Example
/// The P1 Laplacian on the unit square, assembled from the pointwise
/// Jacobian `g3 = I` (`f1 = ∇u`): constants are in its kernel.
/// ```
/// use femquad::discretization::{CellInputs, Discretization};
/// use femquad::native::Execution;
/// use femquad::prelude::*;
/// use femquad::sparse::{CsrMatrix, SparsityPattern, element_matrices};
///
/// # fn main() -> femquad::Result<()> {
/// let mesh = unit_square(4, &MeshOptions::default())?;
/// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1)?, 1)?;
/// let quadrature = Quadrature::default_for(&space.element())?;
/// let disc = Discretization::<f64>::new(&space, quadrature, AuxSpace::None)?;
/// let u = vec![0.0; space.n_cell_dofs()];
/// let inputs = CellInputs { u: &u, aux: &[], constants: &[], time: None };
/// let n_bt = space.n_basis();
/// let mut ke = vec![0.0; space.n_cells() * n_bt * n_bt];
/// // The pointwise Jacobian of f1 = ∇u: g3[d][d'] = ∂f1_d/∂(∇u)_d' = δ_dd'.
/// element_matrices(
///     &disc,
///     &inputs,
///     |dim, _args, _g0, _g1, _g2, g3| {
///         for d in 0..dim {
///             g3[d * dim + d] = 1.0;
///         }
///         Ok(())
///     },
///     &mut ke,
///     Execution::Parallel,
/// )?;
///
/// let pattern = SparsityPattern::of_space(&space)?;
/// let a = CsrMatrix::assemble(&pattern, &ke)?;
/// assert_eq!(a.n_rows(), 25);
/// let mut y = vec![1.0; 25];
/// a.spmv(&vec![1.0; 25], &mut y)?;
/// assert!(y.iter().all(|v| v.abs() < 1e-12));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct CsrMatrix {
    pattern: Arc<SparsityPattern>,
    values: Vec<f64>,
}

impl CsrMatrix {
    /// The matrix with all stored entries zero on `pattern`.
    pub fn zeros(pattern: &Arc<SparsityPattern>) -> CsrMatrix {
        CsrMatrix {
            values: vec![0.0; pattern.nnz()],
            pattern: Arc::clone(pattern),
        }
    }

    /// The matrix with `values` (one per stored entry of `pattern`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `values` if it does not have
    /// `pattern.nnz()` entries; [`Error::NonFinite`] if one is NaN or ±∞.
    pub fn from_parts(pattern: Arc<SparsityPattern>, values: Vec<f64>) -> Result<CsrMatrix> {
        check_len("values", &values, pattern.nnz())?;
        check_finite("values", &values)?;
        Ok(CsrMatrix { pattern, values })
    }

    /// The `n_rows × n_cols` matrix with entries `(i, j, a_ij)`; repeated
    /// positions are summed, in the order given.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `entries` and the entry if an index
    /// is out of range; [`Error::NonFinite`] for a NaN or ±∞ value; those of
    /// [`SparsityPattern::from_csr`] for too many columns.
    pub fn from_triplets(
        n_rows: usize,
        n_cols: usize,
        entries: &[(usize, usize, f64)],
    ) -> Result<CsrMatrix> {
        for (k, &(i, j, v)) in entries.iter().enumerate() {
            if i >= n_rows || j >= n_cols {
                return Err(Error::arg(
                    "entries",
                    format!("entry {k} at ({i}, {j}) lies outside the {n_rows} × {n_cols} matrix"),
                ));
            }
            if !v.is_finite() {
                return Err(Error::NonFinite {
                    name: "entries",
                    index: k,
                    value: format!("{v}"),
                });
            }
        }
        let mut order: Vec<usize> = (0..entries.len()).collect();
        // Stable: repeated positions keep their input order.
        order.sort_by_key(|&k| (entries[k].0, entries[k].1));
        let mut row_ptr = vec![0usize; n_rows + 1];
        let (mut col_idx, mut values) = (Vec::new(), Vec::new());
        let mut last = None;
        for k in order {
            let (i, j, v) = entries[k];
            if last == Some((i, j)) {
                *values.last_mut().expect("a previous entry") += v;
            } else {
                row_ptr[i + 1] += 1;
                col_idx.push(j as u32);
                values.push(v);
                last = Some((i, j));
            }
        }
        for i in 0..n_rows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let pattern = SparsityPattern::from_csr(n_rows, n_cols, row_ptr, col_idx)?;
        Ok(CsrMatrix { pattern, values })
    }

    /// The shared pattern.
    pub fn pattern(&self) -> &Arc<SparsityPattern> {
        &self.pattern
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.pattern.n_rows()
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.pattern.n_cols()
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// The stored values, in pattern order.
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// The stored values, mutable (the pattern stays).
    pub fn values_mut(&mut self) -> &mut [f64] {
        &mut self.values
    }

    /// Row `i`: its columns (increasing) and values; `None` if `i ≥ n_rows`.
    pub fn row(&self, i: usize) -> Option<(&[u32], &[f64])> {
        let cols = self.pattern.row(i)?;
        let start = self.pattern.row_ptr()[i];
        Some((cols, &self.values[start..start + cols.len()]))
    }

    /// `A[i][j]` if `(i, j)` is stored; `None` if not (the entry is then
    /// zero, or out of range).
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        self.pattern.position(i, j).map(|k| self.values[k])
    }

    /// `y = A x`. Parallel over rows; each row sums its entries in column
    /// order, so the result does not depend on the thread count. NaN or ±∞
    /// in `x` propagate to `y`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` (`n_cols` entries expected) or
    /// `y` (`n_rows`).
    pub fn spmv(&self, x: &[f64], y: &mut [f64]) -> Result<()> {
        check_len("x", x, self.n_cols())?;
        check_len("y", y, self.n_rows())?;
        let (row_ptr, col_idx) = (self.pattern.row_ptr(), self.pattern.col_idx());
        y.par_iter_mut()
            .with_min_len(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(i, yi)| {
                let mut acc = 0.0;
                for k in row_ptr[i]..row_ptr[i + 1] {
                    acc += self.values[k] * x[col_idx[k] as usize];
                }
                *yi = acc;
            });
        Ok(())
    }

    /// The diagonal `A[i][i]`, `min(n_rows, n_cols)` entries (0 where not stored).
    pub fn diagonal(&self) -> Vec<f64> {
        (0..self.n_rows().min(self.n_cols()))
            .into_par_iter()
            .with_min_len(ROWS_PER_TASK)
            .map(|i| self.get(i, i).unwrap_or(0.0))
            .collect()
    }

    /// The point-block diagonal of a matrix of an `n_comp`-component field
    /// (dofs interleaved node-major): for each node `n` the
    /// `N_comp × N_comp` block `B_n[fc][gc] = A[n·N_comp + fc][n·N_comp + gc]`,
    /// stored `[node][fc][gc]` (`(n·N_comp + fc)·N_comp + gc`), 0 where not
    /// stored. The blocks of point-block Jacobi smoothing.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_comp` if it is 0 or does not
    /// divide `n_rows`, or naming `self` if the matrix is not square.
    pub fn point_block_diagonal(&self, n_comp: usize) -> Result<Vec<f64>> {
        self.check_square("self")?;
        if n_comp == 0 || !self.n_rows().is_multiple_of(n_comp) {
            return Err(Error::arg(
                "n_comp",
                format!("{n_comp} does not divide the {} rows", self.n_rows()),
            ));
        }
        let mut blocks = vec![0.0; self.n_rows() * n_comp];
        blocks
            .par_chunks_mut(n_comp * n_comp)
            .with_min_len(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(n, block)| {
                for fc in 0..n_comp {
                    for gc in 0..n_comp {
                        let (i, j) = (n * n_comp + fc, n * n_comp + gc);
                        block[fc * n_comp + gc] = self.get(i, j).unwrap_or(0.0);
                    }
                }
            });
        Ok(blocks)
    }

    /// The dense matrix, row-major (`A[i][j]` at `i·n_cols + j`): for tests
    /// and inspection of small matrices.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `self` if it has more than 2^28 entries.
    pub fn to_dense(&self) -> Result<Vec<f64>> {
        let (n, m) = (self.n_rows(), self.n_cols());
        match n.checked_mul(m) {
            Some(len) if len <= MAX_DENSE_ENTRIES => {
                let mut dense = vec![0.0; len];
                for i in 0..n {
                    let (cols, vals) = self.row(i).expect("row in range");
                    for (&j, &v) in cols.iter().zip(vals) {
                        dense[i * m + j as usize] = v;
                    }
                }
                Ok(dense)
            }
            _ => Err(Error::arg(
                "self",
                format!("a dense {n} × {m} matrix is too large (at most 2^28 entries)"),
            )),
        }
    }

    /// Checks that the matrix is symmetric: square, the pattern symmetric,
    /// and for every stored `(i, j)`
    /// `|A_ij − A_ji| ≤ rel_tol · max(|A_ij|, |A_ji|, √|A_ii·A_jj|)`.
    /// Assembled symmetric operators differ from exact symmetry by
    /// round-off only; [`SYMMETRY_TOLERANCE`] is the default.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `self` and the first offending
    /// entry (in row order).
    pub fn check_symmetric(&self, rel_tol: f64) -> Result<()> {
        self.check_square("self")?;
        let diag = self.diagonal();
        let p = &self.pattern;
        let bad = (0..self.n_rows()).into_par_iter().find_map_first(|i| {
            let (cols, vals) = self.row(i).expect("row in range");
            for (&j, &a_ij) in cols.iter().zip(vals) {
                let j = j as usize;
                let Some(k) = p.position(j, i) else {
                    return Some(format!("entry ({i}, {j}) is stored but ({j}, {i}) is not"));
                };
                let a_ji = self.values[k];
                let scale = a_ij.abs().max(a_ji.abs()).max((diag[i] * diag[j]).abs().sqrt());
                if (a_ij - a_ji).abs() > rel_tol * scale {
                    return Some(format!(
                        "A[{i}][{j}] = {a_ij:e} but A[{j}][{i}] = {a_ji:e} (relative tolerance {rel_tol:e})"
                    ));
                }
            }
            None
        });
        match bad {
            None => Ok(()),
            Some(reason) => Err(Error::arg("self", format!("not symmetric: {reason}"))),
        }
    }

    /// The error (naming the argument `name`) for a matrix that is not square.
    pub(super) fn check_square(&self, name: &'static str) -> Result<()> {
        if self.n_rows() == self.n_cols() {
            Ok(())
        } else {
            Err(Error::arg(
                name,
                format!(
                    "a square matrix is needed, got {} × {}",
                    self.n_rows(),
                    self.n_cols()
                ),
            ))
        }
    }
}

/// `y = A x` ([`CsrMatrix::spmv`]) on host vectors: an assembled matrix as
/// the operator of [`crate::solve::cg`] or [`crate::solve::gmres`].
impl LinearOperator<Vec<f64>> for CsrMatrix {
    fn apply(&mut self, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<()> {
        self.spmv(x, y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [[4, -1, 0], [-1, 4, 2], [0, 0, 3]] with a stored zero at (2, 1).
    fn small() -> CsrMatrix {
        CsrMatrix::from_triplets(
            3,
            3,
            &[
                (0, 0, 4.0),
                (1, 0, -1.0),
                (0, 1, -1.0),
                (1, 1, 3.0),
                (1, 2, 2.0),
                (2, 2, 3.0),
                (1, 1, 1.0),
                (2, 1, 0.0),
            ],
        )
        .unwrap()
    }

    #[test]
    fn triplets_sum_repeats_and_sort() {
        let a = small();
        assert_eq!(a.pattern().row_ptr(), &[0, 2, 5, 7]);
        assert_eq!(a.pattern().col_idx(), &[0, 1, 0, 1, 2, 1, 2]);
        assert_eq!(a.values(), &[4.0, -1.0, -1.0, 4.0, 2.0, 0.0, 3.0]);
        assert_eq!(a.get(1, 1), Some(4.0));
        assert_eq!(a.get(0, 2), None);
        assert_eq!(a.row(2).unwrap(), (&[1u32, 2][..], &[0.0, 3.0][..]));
        assert!(a.row(3).is_none());
        assert_eq!(
            a.to_dense().unwrap(),
            vec![4.0, -1.0, 0.0, -1.0, 4.0, 2.0, 0.0, 0.0, 3.0]
        );
        assert_eq!(a.diagonal(), vec![4.0, 4.0, 3.0]);
    }

    #[test]
    fn spmv_matches_dense_product() {
        let a = small();
        let x = [1.0, -2.0, 0.5];
        let mut y = [9.0; 3];
        a.spmv(&x, &mut y).unwrap();
        assert_eq!(y, [6.0, -8.0, 1.5]);
        assert!(a.spmv(&x[..2], &mut y).is_err());
        assert!(a.spmv(&x, &mut y[..2]).is_err());
    }

    #[test]
    fn point_blocks() {
        // 4 dofs = 2 nodes × 2 components.
        let mut e = Vec::new();
        for i in 0..4 {
            for j in 0..4 {
                e.push((i, j, (10 * i + j) as f64));
            }
        }
        let a = CsrMatrix::from_triplets(4, 4, &e).unwrap();
        assert_eq!(
            a.point_block_diagonal(2).unwrap(),
            vec![0.0, 1.0, 10.0, 11.0, 22.0, 23.0, 32.0, 33.0]
        );
        assert_eq!(
            a.point_block_diagonal(1).unwrap(),
            vec![0.0, 11.0, 22.0, 33.0]
        );
        assert!(a.point_block_diagonal(3).is_err());
        assert!(a.point_block_diagonal(0).is_err());
    }

    #[test]
    fn symmetry_check_names_the_entry() {
        let a = small();
        let msg = a.check_symmetric(1e-12).unwrap_err().to_string();
        assert!(
            msg.contains("(1, 2) is stored but (2, 1)") || msg.contains("A[1][2]"),
            "{msg}"
        );
        let s = CsrMatrix::from_triplets(
            2,
            2,
            &[(0, 0, 2.0), (0, 1, 1.0), (1, 0, 1.0 + 1e-13), (1, 1, 2.0)],
        )
        .unwrap();
        s.check_symmetric(SYMMETRY_TOLERANCE).unwrap();
        let msg = s.check_symmetric(1e-15).unwrap_err().to_string();
        assert!(msg.contains("A[0][1] = 1e0"), "{msg}");
    }

    #[test]
    fn bad_input_is_named() {
        assert!(matches!(
            CsrMatrix::from_triplets(2, 2, &[(2, 0, 1.0)]),
            Err(Error::InvalidArgument {
                name: "entries",
                ..
            })
        ));
        assert!(matches!(
            CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (1, 1, f64::NAN)]),
            Err(Error::NonFinite {
                name: "entries",
                index: 1,
                ..
            })
        ));
        let p = small().pattern().clone();
        assert!(CsrMatrix::from_parts(p.clone(), vec![0.0; 6]).is_err());
        let z = CsrMatrix::zeros(&p);
        assert_eq!((z.nnz(), z.values().iter().sum::<f64>()), (7, 0.0));
        let rect = CsrMatrix::from_triplets(2, 3, &[(0, 2, 1.0)]).unwrap();
        assert!(rect.point_block_diagonal(1).is_err());
        assert!(rect.check_symmetric(0.0).is_err());
        assert_eq!(rect.diagonal(), vec![0.0, 0.0]);
    }
}
