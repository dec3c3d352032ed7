//! [`Matrix`]: an operator assembled into a sparse matrix where its vectors
//! live — on the host ([`HostCsr`]) or on an OpenCL device
//! ([`DeviceCsr`]), each an [`AssembledMatrix`].

use std::sync::Arc;

use super::integrator::Integrator;
use super::{Location, Vector};
use crate::opencl::DeviceCsr;
use crate::seam::{AssembledMatrix, FusedChebyshevStep};
use crate::sparse::{CsrMatrix, HostCsr, SparsityPattern};
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The Jacobian of an operator assembled at a state, on the operator's
/// backend ([`crate::operator::Operator::assemble_matrix`]): CSR on the
/// space's sparsity pattern, values in the operator's precision `R`.
/// Applied (`y = A x`, one SpMV) instead of the matrix-free action; its
/// point-block diagonal; downloaded as a host [`CsrMatrix`].
pub enum Matrix<R: Real> {
    /// On the host: assembled from the host element matrices, SpMV in `R`.
    Native(HostCsr<R>),
    /// On an OpenCL device: assembled there from the element matrices of
    /// the physics' tangent and of the form's boundary terms, SpMV kernel.
    OpenCl(Box<DeviceCsr<R>>),
}

impl<R: Real> Matrix<R> {
    /// The pattern.
    pub fn pattern(&self) -> &Arc<SparsityPattern> {
        match self {
            Matrix::Native(m) => m.pattern(),
            Matrix::OpenCl(m) => m.pattern(),
        }
    }

    /// Rows (= columns): the space's dofs.
    pub fn n_rows(&self) -> usize {
        self.pattern().n_rows()
    }

    /// Where it lives.
    pub fn location(&self) -> Location {
        match self {
            Matrix::Native(_) => Location::Host,
            Matrix::OpenCl(m) => {
                let info = m.device().info();
                Location::Device {
                    index: info.index,
                    name: info.name.clone(),
                }
            }
        }
    }

    /// `y = A x`: one SpMV where the matrix lives.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `x` or `y` for a length other than
    /// [`Matrix::n_rows`] or a vector living elsewhere than the matrix.
    pub fn apply(&self, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        self.check("x", x, self.n_rows())?;
        self.check("y", y, self.n_rows())?;
        match (self, x, y) {
            (Matrix::Native(m), Vector::Host(x), Vector::Host(y)) => m.apply(x, y),
            (Matrix::OpenCl(m), Vector::Device(x), Vector::Device(y)) => m.apply(x, y),
            _ => Err(Error::internal(
                "a matrix applied to vectors living elsewhere",
            )),
        }
    }

    /// The point-block diagonal into `out` (`n_nodes·N_comp²` entries,
    /// `out[(n·N_comp + fc)·N_comp + gc] = A[n·N_comp + fc][n·N_comp + gc]`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `out` for another length or
    /// location.
    pub fn point_block_diagonal(&self, out: &mut Vector<R>) -> Result<()> {
        let nc = self.pattern().n_comp().unwrap_or(1);
        self.check("out", out, self.n_rows() * nc)?;
        match (self, out) {
            (Matrix::Native(m), Vector::Host(out)) => AssembledMatrix::point_block_diagonal(m, out),
            (Matrix::OpenCl(m), Vector::Device(out)) => m.point_block_diagonal(out),
            _ => Err(Error::internal(
                "a matrix's diagonal into a vector living elsewhere",
            )),
        }
    }

    /// One Chebyshev step with the SpMV fused, where the matrix lives
    /// ([`AssembledMatrix::chebyshev_step`]): `w = A d`, `r ← r − w`,
    /// `d_next ← a·d + c·D⁻¹r`, `x ← x + d_next` in one pass (one launch
    /// on a device), bitwise [`Matrix::apply`] followed by the multigrid
    /// kernels' step.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming an operand of a wrong length or
    /// living elsewhere than the matrix.
    pub fn chebyshev_step(&self, o: FusedChebyshevStep<'_, Vector<R>>) -> Result<()> {
        let n = self.n_rows();
        let nc = self.pattern().n_comp().unwrap_or(1);
        self.check("inv", o.inv, n * nc)?;
        self.check("d", o.d, n)?;
        self.check("d_next", o.d_next, n)?;
        self.check("r", o.r, n)?;
        self.check("x", o.x, n)?;
        let (a, c) = (o.a, o.c);
        match (self, o.x, o.d, o.d_next, o.r, o.inv) {
            (
                Matrix::Native(m),
                Vector::Host(x),
                Vector::Host(d),
                Vector::Host(d_next),
                Vector::Host(r),
                Vector::Host(inv),
            ) => m.chebyshev_step(FusedChebyshevStep {
                x,
                d,
                d_next,
                r,
                inv,
                a,
                c,
            }),
            (
                Matrix::OpenCl(m),
                Vector::Device(x),
                Vector::Device(d),
                Vector::Device(d_next),
                Vector::Device(r),
                Vector::Device(inv),
            ) => m.chebyshev_step(FusedChebyshevStep {
                x,
                d,
                d_next,
                r,
                inv,
                a,
                c,
            }),
            _ => Err(Error::internal(
                "a matrix's Chebyshev step on vectors living elsewhere",
            )),
        }
    }

    /// This matrix with its values rounded to the precision `S`, where it
    /// lives, on the same pattern: on a device sharing the row pointers and
    /// column indices ([`DeviceCsr::converted`]: the copy costs
    /// `nnz·sizeof(S)` bytes), on the host sharing the pattern
    /// ([`HostCsr::converted`]). `f64 → f32` rounds to nearest
    /// ([`Vector::convert_from`]), bitwise alike on host and device. Refill
    /// it after a reassembly with [`Matrix::convert_values_from`].
    ///
    /// # Errors
    /// Those of [`DeviceCsr::converted`].
    pub fn converted<S: Real>(&self) -> Result<Matrix<S>> {
        Ok(match self {
            Matrix::Native(m) => Matrix::Native(m.converted()),
            Matrix::OpenCl(m) => Matrix::OpenCl(Box::new(m.converted()?)),
        })
    }

    /// Sets the values to those of `a` (a matrix on the same pattern in the
    /// same place, e.g. the one this was [converted](Matrix::converted)
    /// from) rounded to `R`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `a` for another pattern or place.
    pub fn convert_values_from<S: Real>(&mut self, a: &Matrix<S>) -> Result<()> {
        match (self, a) {
            (Matrix::Native(m), Matrix::Native(a)) => m.convert_values_from(a),
            (Matrix::OpenCl(m), Matrix::OpenCl(a)) => m.convert_values_from(a),
            (m, a) => Err(Error::arg(
                "a",
                format!(
                    "lives on {} but the matrix on {}",
                    a.location(),
                    m.location()
                ),
            )),
        }
    }

    /// The matrix on the host, `f64` (a download on a device).
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming `values` for a NaN or ±∞; device errors.
    pub fn to_host(&self) -> Result<CsrMatrix> {
        match self {
            Matrix::Native(m) => m.to_csr(),
            Matrix::OpenCl(m) => m.to_host(),
        }
    }

    /// The position of the first NaN or ±∞ value, if any (on a device one
    /// reduction and a scalar read).
    ///
    /// # Errors
    /// Device errors.
    pub fn first_non_finite(&self) -> Result<Option<usize>> {
        match self {
            Matrix::Native(m) => Ok(crate::real::first_non_finite(m.values())),
            Matrix::OpenCl(m) => m.values().first_non_finite(),
        }
    }

    /// The stored value at position `k` (a scalar read on a device).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `k` beyond the stored entries;
    /// device errors.
    pub fn value_at(&self, k: usize) -> Result<R> {
        let nnz = self.pattern().nnz();
        if k >= nnz {
            return Err(Error::arg(
                "k",
                format!("{k} is beyond the {nnz} stored entries"),
            ));
        }
        match self {
            Matrix::Native(m) => Ok(m.values()[k]),
            Matrix::OpenCl(m) => m.values().get(k),
        }
    }

    /// The host matrix, to fill from a host assembly; `None` on a device.
    pub(crate) fn host_mut(&mut self) -> Option<&mut HostCsr<R>> {
        match self {
            Matrix::Native(m) => Some(m),
            Matrix::OpenCl(_) => None,
        }
    }

    /// Checks a vector argument's length and location.
    fn check(&self, name: &'static str, v: &Vector<R>, len: usize) -> Result<()> {
        if v.len() != len {
            return Err(Error::arg(
                name,
                format!(
                    "expected {len} entries (the matrix has {} rows), got {}",
                    self.n_rows(),
                    v.len()
                ),
            ));
        }
        let location = self.location();
        if v.location() != location {
            return Err(Error::arg(
                name,
                format!(
                    "lives on {} but the matrix lives on {location}",
                    v.location()
                ),
            ));
        }
        Ok(())
    }
}

impl<R: Real> std::fmt::Debug for Matrix<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matrix")
            .field("location", &self.location())
            .field("rows", &self.n_rows())
            .field("nnz", &self.pattern().nnz())
            .finish()
    }
}

impl<R: Real> Integrator<R> {
    /// A matrix of zeros on `pattern` where the integrator's vectors live
    /// (on a device: the pattern uploaded, the CSR kernels built).
    ///
    /// # Errors
    /// Those of [`DeviceCsr::new`].
    pub fn new_matrix(&self, pattern: &Arc<SparsityPattern>) -> Result<Matrix<R>> {
        Ok(match self {
            Integrator::Native(_) => Matrix::Native(HostCsr::zeros(pattern)),
            Integrator::OpenCl(d) => Matrix::OpenCl(Box::new(DeviceCsr::new(d.device(), pattern)?)),
        })
    }

    /// Assembles the Jacobian at `u` into the device matrix `matrix` with
    /// the bound assembly ([`DeviceCsr::assemble`]); a host matrix is
    /// filled by the caller from the host assembly.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `matrix` if it or `u` does not
    /// live on the integrator's device; those of [`DeviceCsr::assemble`].
    pub fn assemble_matrix(&mut self, u: &Vector<R>, matrix: &mut Matrix<R>) -> Result<()> {
        match (self, u, matrix) {
            (Integrator::OpenCl(d), Vector::Device(u), Matrix::OpenCl(m)) => {
                let assembly = d.assembly();
                m.assemble(d, u, assembly)
            }
            _ => Err(Error::arg(
                "matrix",
                "does not live where the operator evaluates: make it with \
                 Operator::assemble_matrix",
            )),
        }
    }
}
