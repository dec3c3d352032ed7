//! [`PointBlockJacobi`]: the inverse of an operator's point-block diagonal,
//! on host or device vectors; and the random start vectors of the
//! eigenvalue estimates.

use crate::backend::{IndexSet, MultigridKernels, Vector};
use crate::seam::{ChebyshevCoefficients, ChebyshevOperands};
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// What the inverse of a [`PointBlockJacobi`] does on the fixed
/// (Dirichlet) dofs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnFixed {
    /// The inverse of the constrained operator's blocks, whose fixed rows
    /// and columns are the identity's: `(D⁻¹r)_d = r_d` on a fixed dof `d`.
    /// For a Krylov method on the constrained system (CG's Jacobi
    /// preconditioner).
    Identity,
    /// Those rows and columns zero: `(D⁻¹r)_d = 0`, and no free entry of
    /// `D⁻¹r` reads `r_d`. For the smoother of the free dofs
    /// ([`super::Chebyshev::smooth`]), which then keeps its update and
    /// iterate zero on the fixed dofs with the *unconstrained* operator.
    Zero,
}

/// Point-block Jacobi: for a field of `N_comp` components (dofs interleaved
/// node-major), `D` is the block-diagonal part of an operator `A` with one
/// `N_comp × N_comp` block per node,
///
/// ```text
/// D_n[fc][gc] = A[n·N_comp + fc][n·N_comp + gc],
/// ```
///
/// (for a scalar field, the diagonal), with the rows and columns of fixed
/// (Dirichlet) dofs replaced by the identity's — the diagonal blocks of the
/// constrained operator, whose fixed rows are the identity. Each block is
/// inverted once, at construction (Gauss–Jordan with partial pivoting),
/// then the fixed rows and columns of the inverse are left as the
/// identity's or zeroed ([`OnFixed`]; a block with row and column `c` the
/// identity's has an inverse with row and column `c` the identity's, so
/// zeroing them leaves the other entries the inverse of the free part).
/// [`PointBlockJacobi::update`] applies `D⁻¹` blockwise: one pass over the
/// vector, no assembly. Point-block (rather than pointwise) Jacobi keeps
/// the coupling of the components at a node, which for elasticity is as
/// strong as the diagonal.
///
/// Inversion and application are the [`MultigridKernels`] of the place the
/// vectors live ([`MultigridKernels::block_invert`],
/// [`MultigridKernels::block_update`]): device kernels on device vectors,
/// their native twins, the same operations in the same order, on host
/// vectors.
///
/// # Example
/// ```
/// use femquad::multigrid::{OnFixed, PointBlockJacobi};
/// use femquad::backend::{IndexSet, Vector};
///
/// // one node, two components: D = [[2, 1], [1, 2]], nothing fixed
/// let blocks = Vector::from(vec![2.0, 1.0, 1.0, 2.0]);
/// let fixed = IndexSet::Host(vec![]);
/// let jacobi = PointBlockJacobi::new(blocks, 2, &fixed, OnFixed::Identity)?;
/// let mut z = Vector::from(vec![0.0; 2]);
/// jacobi.apply(&Vector::from(vec![3.0, 3.0]), &mut z)?; // z = D⁻¹ r
/// assert_eq!(z.to_host()?, vec![1.0, 1.0]);
/// // the second component fixed: the identity's row, or zero
/// let fixed = IndexSet::Host(vec![1]);
/// for (on_fixed, z1) in [(OnFixed::Identity, 3.0), (OnFixed::Zero, 0.0)] {
///     let blocks = Vector::from(vec![2.0, 1.0, 1.0, 2.0]);
///     let jacobi = PointBlockJacobi::new(blocks, 2, &fixed, on_fixed)?;
///     jacobi.apply(&Vector::from(vec![3.0, 3.0]), &mut z)?;
///     assert_eq!(z.to_host()?, vec![1.5, z1]);
/// }
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Debug)]
pub struct PointBlockJacobi<R: Real> {
    inverse: Vector<R>,
    kernels: MultigridKernels<R>,
}

impl<R: Real> PointBlockJacobi<R> {
    /// Inverts the diagonal blocks `blocks` (`n_nodes·N_comp²` entries,
    /// `[node][fc][gc]`, where the vectors live; consumed) after fixing the
    /// rows of the dofs `fixed`, the inverse's fixed rows and columns as
    /// `on_fixed` says.
    ///
    /// This builds the multigrid kernels for `n_comp` where `blocks` lives
    /// ([`MultigridKernels::like`]); use [`PointBlockJacobi::with_kernels`]
    /// to share them.
    ///
    /// # Errors
    /// As [`PointBlockJacobi::with_kernels`]; those of
    /// [`MultigridKernels::like`].
    pub fn new(
        blocks: Vector<R>,
        n_comp: usize,
        fixed: &IndexSet,
        on_fixed: OnFixed,
    ) -> Result<Self> {
        let kernels = MultigridKernels::like(&blocks, n_comp)?;
        Self::with_kernels(blocks, fixed, kernels, on_fixed)
    }

    /// As [`PointBlockJacobi::new`], with the kernels given (their
    /// `N_comp` is the field's).
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] naming `blocks` if its length is not a
    ///   whole number of blocks, `blocks` or `fixed` if it lives elsewhere
    ///   than `kernels`, `fixed` for a dof out of range.
    /// * [`Error::InvalidArgument`] naming `blocks` and the node whose block
    ///   is singular (its largest available pivot not above `N_comp·ε` times
    ///   its largest entry) or holds NaN or ±∞.
    pub fn with_kernels(
        mut blocks: Vector<R>,
        fixed: &IndexSet,
        kernels: MultigridKernels<R>,
        on_fixed: OnFixed,
    ) -> Result<Self> {
        let n_comp = kernels.n_comp();
        let nc2 = n_comp * n_comp;
        if !blocks.len().is_multiple_of(nc2) {
            return Err(Error::arg(
                "blocks",
                format!(
                    "{} entries are not whole {n_comp}×{n_comp} blocks",
                    blocks.len()
                ),
            ));
        }
        let n_nodes = blocks.len() / nc2;
        let mut inverse = blocks.zeros_like()?;
        kernels.block_fix(&mut blocks, fixed, 1.0)?;
        kernels.block_invert(&mut inverse, &blocks)?;
        if let Some(i) = inverse.first_non_finite()? {
            let node = i / nc2;
            let original: Vec<f64> = (0..nc2)
                .map(|j| blocks.value_at(node * nc2 + j))
                .collect::<Result<_>>()?;
            return Err(Error::arg(
                "blocks",
                format!(
                    "the diagonal block of node {node} (of {n_nodes}) is singular or not finite: \
                     {original:?} (row-major, {n_comp}×{n_comp}); point-block Jacobi needs \
                     invertible blocks"
                ),
            ));
        }
        if on_fixed == OnFixed::Zero {
            kernels.block_fix(&mut inverse, fixed, 0.0)?;
        }
        Ok(PointBlockJacobi { inverse, kernels })
    }

    /// Components per node.
    pub fn n_comp(&self) -> usize {
        self.kernels.n_comp()
    }

    /// The inverse blocks `D_n⁻¹`, `[node][fc][gc]`.
    pub fn inverse(&self) -> &Vector<R> {
        &self.inverse
    }

    /// Dofs of the vectors it applies to.
    pub fn n_dofs(&self) -> usize {
        self.inverse.len() / self.n_comp()
    }

    /// `y ← a·y + b·D⁻¹r` in one pass (`a = 0`: `y = b·D⁻¹r`, whatever `y`
    /// held if finite).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `r` or `y` for a wrong length or
    /// a place other than the blocks'.
    pub fn update(&self, y: &mut Vector<R>, a: f64, r: &Vector<R>, b: f64) -> Result<()> {
        let n = self.n_dofs();
        for (name, len) in [("r", r.len()), ("y", y.len())] {
            if len != n {
                return Err(Error::arg(name, format!("expected {n} entries, got {len}")));
            }
        }
        self.kernels.block_update(y, a, &self.inverse, r, b)
    }

    /// One Chebyshev smoothing step with this `D⁻¹`, fused into one pass
    /// (`r ← b | b − w | r − w`, `d ← a·d + c·D⁻¹r`, `x ← d | x + d`;
    /// [`crate::seam::MultigridOps::chebyshev_step`]): bitwise the unfused
    /// sequence of copies, `axpy`s and [`PointBlockJacobi::update`].
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming an operand of a wrong length or
    /// place.
    pub fn chebyshev_step(
        &self,
        x: &mut Vector<R>,
        d: &mut Vector<R>,
        r: &mut Vector<R>,
        (b, w): (&Vector<R>, &Vector<R>),
        coefficients: ChebyshevCoefficients,
    ) -> Result<()> {
        let inv = &self.inverse;
        self.kernels
            .chebyshev_step(ChebyshevOperands { x, d, r, b, w, inv }, coefficients)
    }

    /// `z = D⁻¹ r`.
    ///
    /// # Errors
    /// As [`PointBlockJacobi::update`].
    pub fn apply(&self, r: &Vector<R>, z: &mut Vector<R>) -> Result<()> {
        self.update(z, 0.0, r, 1.0)
    }
}

/// `x[i]` uniform in `[−1, 1)`: 24 bits of SplitMix64's output for
/// `seed + (i + 1)·φ` (φ = `0x9e3779b97f4a7c15`), exact in `f32` and `f64`
/// — on a device vector by a kernel, so no array is uploaded, and the same
/// numbers on the host and on every device. The start vectors of the
/// eigenvalue estimates.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `x` if it lives elsewhere than
/// `kernels`; without `kernels`, those of building them where `x` lives
/// ([`MultigridKernels::like`], one component).
pub fn fill_random<R: Real>(
    x: &mut Vector<R>,
    seed: u64,
    kernels: Option<&MultigridKernels<R>>,
) -> Result<()> {
    match kernels {
        Some(k) => k.fill_random(x, seed),
        None => MultigridKernels::like(x, 1)?.fill_random(x, seed),
    }
}
