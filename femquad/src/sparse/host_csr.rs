//! [`HostCsr`]: a CSR matrix on the host with values in the operator's
//! precision `R` — the native side of an assembled operator
//! ([`crate::backend::Matrix`]).

use std::borrow::Cow;
use std::sync::Arc;

use rayon::prelude::*;

use super::csr::CsrMatrix;
use super::pattern::SparsityPattern;
use crate::error::check_len;
use crate::seam::{AssembledMatrix, FusedChebyshevStep};
use crate::{Error, Real, Result};

/// Rows per parallel task of the SpMV.
const ROWS_PER_TASK: usize = 1024;

/// A square matrix on a shared [`SparsityPattern`] with values in `R`, on
/// the host: `y = A x` in `R` (each row summed in column order, as
/// [`CsrMatrix::spmv`] in `f64`), its point-block diagonal, and the `f64`
/// [`CsrMatrix`] it converts to and from.
#[derive(Clone, Debug)]
pub struct HostCsr<R: Real> {
    pattern: Arc<SparsityPattern>,
    values: Vec<R>,
}

impl<R: Real> HostCsr<R> {
    /// The matrix with all stored entries zero on `pattern`.
    pub fn zeros(pattern: &Arc<SparsityPattern>) -> Self {
        HostCsr {
            pattern: pattern.clone(),
            values: vec![R::ZERO; pattern.nnz()],
        }
    }

    /// The pattern.
    pub fn pattern(&self) -> &Arc<SparsityPattern> {
        &self.pattern
    }

    /// The stored values, in the pattern's order.
    pub fn values(&self) -> &[R] {
        &self.values
    }

    /// Replaces the values by those of `a` (rounded to `R`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if its pattern is not this
    /// matrix's.
    pub fn set_values(&mut self, a: &CsrMatrix) -> Result<()> {
        if !Arc::ptr_eq(a.pattern(), &self.pattern) && !a.pattern().same_structure(&self.pattern) {
            return Err(Error::arg(
                "a",
                "its sparsity pattern is not the matrix's: assemble on the same space",
            ));
        }
        for (v, &x) in self.values.iter_mut().zip(a.values()) {
            *v = R::from_f64(x);
        }
        Ok(())
    }

    /// This matrix with its values rounded to the precision `S`
    /// ([`crate::vector::convert`]: `f64 → f32` to nearest), on the same
    /// pattern (shared, not copied).
    pub fn converted<S: Real>(&self) -> HostCsr<S> {
        let mut values = vec![S::ZERO; self.values.len()];
        // the lengths are equal: convert cannot fail
        let _ = crate::vector::convert(&self.values, &mut values);
        HostCsr {
            pattern: self.pattern.clone(),
            values,
        }
    }

    /// Sets the values to those of `a` rounded to `R`
    /// ([`crate::vector::convert`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` if its pattern is not this
    /// matrix's.
    pub fn convert_values_from<S: Real>(&mut self, a: &HostCsr<S>) -> Result<()> {
        if !Arc::ptr_eq(&a.pattern, &self.pattern) && !a.pattern.same_structure(&self.pattern) {
            return Err(Error::arg(
                "a",
                "its sparsity pattern is not the matrix's: assemble on the same space",
            ));
        }
        crate::vector::convert(&a.values, &mut self.values)
    }

    /// The `f64` matrix on the same pattern.
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming `values` for a NaN or ±∞.
    pub fn to_csr(&self) -> Result<CsrMatrix> {
        let values = self.values.iter().map(|v| v.to_f64()).collect();
        CsrMatrix::from_parts(self.pattern.clone(), values)
    }

    /// `y = A x` in `R`, parallel over rows, each row summed in column order.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` or `y` for a wrong length.
    pub fn spmv(&self, x: &[R], y: &mut [R]) -> Result<()> {
        let n = self.pattern.n_rows();
        check_len("x", x, n)?;
        check_len("y", y, n)?;
        y.par_iter_mut()
            .with_min_len(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(i, yi)| {
                *yi = self.row_sum(i, x);
            });
        Ok(())
    }

    /// `Σ_k values[k]·x[col_idx[k]]` over row `i`, in column order.
    fn row_sum(&self, i: usize, x: &[R]) -> R {
        let (row_ptr, col_idx) = (self.pattern.row_ptr(), self.pattern.col_idx());
        let mut acc = R::ZERO;
        for k in row_ptr[i]..row_ptr[i + 1] {
            acc += self.values[k] * x[col_idx[k] as usize];
        }
        acc
    }

    /// One Chebyshev step with the SpMV fused ([`FusedChebyshevStep`]),
    /// parallel over nodes: per node `n`, `w_i` of its `N_comp` rows as
    /// [`HostCsr::spmv`] sums them, then the node's updates by the
    /// operations of the native Chebyshev step (`r + (−1)·w`,
    /// `a·d + c·Σ_j inv·r`, `x + 1·d_next`) — bitwise `spmv` followed by
    /// that step; twin of `spmv_chebyshev_step` (`kernels/spmv.cl`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `pattern` if it was not built from
    /// a space, an operand for a wrong length.
    pub fn chebyshev_step(&self, o: FusedChebyshevStep<'_, Vec<R>>) -> Result<()> {
        let nc = self
            .pattern
            .n_comp()
            .ok_or_else(|| Error::arg("pattern", "was not built from a function space"))?;
        let n = self.pattern.n_rows();
        check_len("inv", o.inv, n * nc)?;
        check_len("d", o.d, n)?;
        check_len("d_next", o.d_next, n)?;
        check_len("r", o.r, n)?;
        check_len("x", o.x, n)?;
        let (a, c) = (R::from_f64(o.a), R::from_f64(o.c));
        let (minus_one, one) = (R::from_f64(-1.0), R::from_f64(1.0));
        let (d, inv) = (&o.d[..], &o.inv[..]);
        o.x.par_chunks_mut(nc)
            .zip(o.d_next.par_chunks_mut(nc))
            .zip(o.r.par_chunks_mut(nc))
            .with_min_len(ROWS_PER_TASK / nc)
            .enumerate()
            .for_each(|(node, ((x, d_next), r))| {
                for (fc, rf) in r.iter_mut().enumerate() {
                    *rf += minus_one * self.row_sum(node * nc + fc, d);
                }
                for fc in 0..nc {
                    let mut s = R::ZERO;
                    for (g, &rg) in r.iter().enumerate() {
                        s += inv[(node * nc + fc) * nc + g] * rg;
                    }
                    let i = node * nc + fc;
                    d_next[fc] = a * d[i] + c * s;
                    x[fc] += one * d_next[fc];
                }
            });
        Ok(())
    }

    /// The point-block diagonal `[node][fc][gc]` into `out`
    /// (`n_rows·N_comp` entries, 0 where not stored).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `out` for a wrong length, `pattern`
    /// if it was not built from a space.
    pub fn point_block_diagonal(&self, out: &mut [R]) -> Result<()> {
        let nc = self
            .pattern
            .n_comp()
            .ok_or_else(|| Error::arg("pattern", "was not built from a function space"))?;
        check_len("out", out, self.pattern.n_rows() * nc)?;
        out.par_chunks_mut(nc * nc)
            .enumerate()
            .for_each(|(node, block)| {
                for fc in 0..nc {
                    for gc in 0..nc {
                        let (i, j) = (node * nc + fc, node * nc + gc);
                        block[fc * nc + gc] = self
                            .pattern
                            .position(i, j)
                            .map_or(R::ZERO, |k| self.values[k]);
                    }
                }
            });
        Ok(())
    }
}

impl<R: Real> AssembledMatrix<R> for HostCsr<R> {
    type Vector = Vec<R>;

    fn apply(&self, x: &Vec<R>, y: &mut Vec<R>) -> Result<()> {
        self.spmv(x, y)
    }

    fn point_block_diagonal(&self, out: &mut Vec<R>) -> Result<()> {
        HostCsr::point_block_diagonal(self, out)
    }

    fn values_to_host(&self) -> Result<Cow<'_, [R]>> {
        Ok(Cow::Borrowed(&self.values))
    }

    fn chebyshev_step(&self, step: FusedChebyshevStep<'_, Vec<R>>) -> Result<()> {
        HostCsr::chebyshev_step(self, step)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_square};
    use crate::rng::Rng;
    use crate::space::FunctionSpace;

    /// A random matrix on the pattern of a 2-component P1 space: the SpMV
    /// and the point-block diagonal of its `f64` copy are the `f64`
    /// matrix's (bitwise: same order of additions), the `f32` copy's agree
    /// to single precision.
    #[test]
    fn host_csr_is_the_csr_matrix_in_r() {
        let mesh = unit_square(3, &MeshOptions::default()).unwrap();
        let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1).unwrap(), 2).unwrap();
        let pattern = SparsityPattern::of_space(&space).unwrap();
        let mut rng = Rng::new(5);
        let values = (0..pattern.nnz()).map(|_| rng.uniform() - 0.5).collect();
        let a = CsrMatrix::from_parts(pattern.clone(), values).unwrap();
        let n = a.n_rows();
        let x: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).cos()).collect();
        let mut y = vec![0.0; n];
        a.spmv(&x, &mut y).unwrap();
        let blocks = a.point_block_diagonal(2).unwrap();

        let mut h = HostCsr::<f64>::zeros(&pattern);
        h.set_values(&a).unwrap();
        let mut hy = vec![0.0; n];
        h.spmv(&x, &mut hy).unwrap();
        assert_eq!(hy, y);
        let mut hb = vec![0.0; n * 2];
        h.point_block_diagonal(&mut hb).unwrap();
        assert_eq!(hb, blocks);
        assert_eq!(h.to_csr().unwrap().values(), a.values());

        let mut s = HostCsr::<f32>::zeros(&pattern);
        s.set_values(&a).unwrap();
        let xs: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let mut sy = vec![0.0f32; n];
        s.spmv(&xs, &mut sy).unwrap();
        for (a, b) in sy.iter().zip(&y) {
            assert!((f64::from(*a) - b).abs() < 1e-5, "{a} {b}");
        }
        let e = h.spmv(&x[1..], &mut hy).unwrap_err();
        assert!(e.to_string().contains("`x`"), "{e}");
    }
}
