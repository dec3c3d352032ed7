//! Dirichlet conditions on an assembled matrix: symmetric elimination.

use rayon::prelude::*;

use super::csr::CsrMatrix;
use crate::error::check_len;
use crate::linalg::FixedDofs;
use crate::real::check_finite;
use crate::{Error, Result};

/// Rows per rayon task.
const ROWS_PER_TASK: usize = 1024;

/// Dirichlet conditions on assembled systems: the symmetric elimination of
/// the fixed dofs (the set itself, [`FixedDofs`], is the crate's one
/// representation of fixed dofs, in [`crate::linalg`]).
impl FixedDofs {
    /// Symmetric elimination of `A u = b` with `u = g` on the fixed dofs, in
    /// place: `a` becomes `A'` and `b` becomes `b'`. `g` is a full vector
    /// (`n_dofs` entries) read on the fixed dofs only, like
    /// [`DirichletProblem::fixed_values`](crate::solve::DirichletProblem::fixed_values).
    ///
    /// # Convention
    /// The same as [`DirichletProblem`](crate::solve::DirichletProblem): the
    /// solution's entries on fixed dofs are given (`g`), and the free block
    /// is solved,
    ///
    /// ```text
    /// A_ff u_f = b_f − A_fD g,      u_D = g,
    /// ```
    ///
    /// the fixed rows of `A u = b` being dropped. (For a residual
    /// `F(u) = A u − b` this is `F(u)_f = 0`, i.e. `b = −F(0)`.) This writes
    /// it as one system of the full size that keeps the pattern and the
    /// symmetry of `A`:
    ///
    /// ```text
    /// A'_ij = A_ij        i, j free          b'_i = b_i − Σ_{j∈D} A_ij g_j   i free
    /// A'_ij = δ_ij        i or j fixed       b'_i = g_i                       i fixed
    /// ```
    ///
    /// (entries of fixed rows and columns stay in the pattern, as stored
    /// zeros, so a symbolic factorization is reused). `A'` is symmetric
    /// positive definite when `A` is symmetric and `A_ff` positive definite,
    /// e.g. a Laplacian or Lamé operator with `D` the boundary dofs.
    ///
    /// # Errors
    /// Those of [`FixedDofs::eliminate_rhs`] and
    /// [`FixedDofs::eliminate_matrix`]; on error nothing is changed.
    pub fn eliminate(&self, a: &mut CsrMatrix, b: &mut [f64], g: &[f64]) -> Result<()> {
        self.check_diagonal(a)?;
        self.eliminate_rhs(a, b, g)?;
        self.eliminate_matrix(a)
    }

    /// `b ← b'`: `b_i − Σ_{j∈D} A_ij g_j` on free rows, `g_i` on fixed rows,
    /// with `a` the matrix **before** elimination. Parallel over rows, each
    /// summing in column order (deterministic).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if it is not square of size
    /// `n_dofs`, `b` or `g` for a wrong length; [`Error::NonFinite`] for NaN
    /// or ±∞ in `b` or on a fixed entry of `g`.
    pub fn eliminate_rhs(&self, a: &CsrMatrix, b: &mut [f64], g: &[f64]) -> Result<()> {
        self.check_matrix(a)?;
        check_len("b", b, self.n_dofs())?;
        check_len("g", g, self.n_dofs())?;
        check_finite("b", b)?;
        if let Some(&d) = self.dofs().iter().find(|&&d| !g[d as usize].is_finite()) {
            return Err(Error::NonFinite {
                name: "g",
                index: d as usize,
                value: format!("{}", g[d as usize]),
            });
        }
        b.par_iter_mut()
            .with_min_len(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(i, bi)| {
                if self.is_fixed(i) {
                    *bi = g[i];
                } else {
                    let (cols, vals) = a.row(i).expect("row in range");
                    for (&j, &v) in cols.iter().zip(vals) {
                        if self.is_fixed(j as usize) {
                            *bi -= v * g[j as usize];
                        }
                    }
                }
            });
        Ok(())
    }

    /// `a ← A'`: the entries of fixed rows and columns set to zero, the
    /// diagonal of fixed rows to one (the pattern is kept).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if it is not square of size
    /// `n_dofs`, or if the diagonal entry of a fixed row is not in its
    /// pattern (naming the row).
    pub fn eliminate_matrix(&self, a: &mut CsrMatrix) -> Result<()> {
        self.check_diagonal(a)?;
        let pattern = a.pattern().clone();
        let (row_ptr, col_idx) = (pattern.row_ptr(), pattern.col_idx());
        let values = a.values_mut();
        // Rows are contiguous in `values`: split it row by row in blocks.
        let mut blocks = Vec::new();
        let mut rest = values;
        let n = self.n_dofs();
        let mut i0 = 0;
        while i0 < n {
            let i1 = (i0 + ROWS_PER_TASK).min(n);
            let (head, tail) = rest.split_at_mut(row_ptr[i1] - row_ptr[i0]);
            blocks.push((i0..i1, head));
            rest = tail;
            i0 = i1;
        }
        blocks.into_par_iter().for_each(|(rows, block)| {
            let base = row_ptr[rows.start];
            for i in rows {
                for k in row_ptr[i]..row_ptr[i + 1] {
                    let j = col_idx[k] as usize;
                    if self.is_fixed(i) || self.is_fixed(j) {
                        block[k - base] = if i == j { 1.0 } else { 0.0 };
                    }
                }
            }
        });
        Ok(())
    }

    /// The error for a matrix of another size or without the diagonal
    /// entry of a fixed row.
    fn check_diagonal(&self, a: &CsrMatrix) -> Result<()> {
        self.check_matrix(a)?;
        match self
            .dofs()
            .iter()
            .find(|&&d| a.pattern().position(d as usize, d as usize).is_none())
        {
            None => Ok(()),
            Some(d) => Err(Error::arg(
                "a",
                format!("fixed row {d} has no diagonal entry in the pattern"),
            )),
        }
    }

    /// The error for a matrix of another size.
    fn check_matrix(&self, a: &CsrMatrix) -> Result<()> {
        let n = self.n_dofs();
        if a.n_rows() == n && a.n_cols() == n {
            Ok(())
        } else {
            Err(Error::arg(
                "a",
                format!(
                    "expected a {n} × {n} matrix (the dofs of the fixed set), got {} × {}",
                    a.n_rows(),
                    a.n_cols()
                ),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// tridiag(−1, 2, −1) of size 4.
    fn laplace_1d() -> CsrMatrix {
        let mut e = Vec::new();
        for i in 0..4 {
            e.push((i, i, 2.0));
            if i > 0 {
                e.push((i, i - 1, -1.0));
                e.push((i - 1, i, -1.0));
            }
        }
        CsrMatrix::from_triplets(4, 4, &e).unwrap()
    }

    #[test]
    fn elimination_keeps_symmetry_and_moves_columns_to_the_rhs() {
        let mut a = laplace_1d();
        let fixed = FixedDofs::new(4, &[3, 0, 3]).unwrap();
        let mut b = vec![1.0, 1.0, 1.0, 1.0];
        let g = vec![10.0, f64::NAN, f64::NAN, 20.0]; // free entries are not read
        fixed.eliminate(&mut a, &mut b, &g).unwrap();
        assert_eq!(
            a.to_dense().unwrap(),
            vec![
                1.0, 0.0, 0.0, 0.0, //
                0.0, 2.0, -1.0, 0.0, //
                0.0, -1.0, 2.0, 0.0, //
                0.0, 0.0, 0.0, 1.0,
            ]
        );
        assert_eq!(b, vec![10.0, 11.0, 21.0, 20.0]);
        assert_eq!(a.nnz(), 10);
    }

    #[test]
    fn bad_input_is_named() {
        let fixed = FixedDofs::new(4, &[1]).unwrap();
        let mut a = laplace_1d();
        let mut b = vec![0.0; 4];
        assert!(fixed.eliminate(&mut a, &mut b[..3], &[0.0; 4]).is_err());
        assert!(matches!(
            fixed.eliminate(&mut a, &mut b, &[0.0, f64::INFINITY, 0.0, 0.0]),
            Err(Error::NonFinite {
                name: "g",
                index: 1,
                ..
            })
        ));
        assert_eq!(a.to_dense().unwrap(), laplace_1d().to_dense().unwrap());
        let mut small = CsrMatrix::from_triplets(3, 3, &[(0, 0, 1.0)]).unwrap();
        assert!(fixed.eliminate_matrix(&mut small).is_err());
        let mut no_diag = CsrMatrix::from_triplets(4, 4, &[(1, 0, 1.0)]).unwrap();
        let msg = fixed
            .eliminate_matrix(&mut no_diag)
            .unwrap_err()
            .to_string();
        assert!(msg.contains("fixed row 1 has no diagonal"), "{msg}");
    }
}
