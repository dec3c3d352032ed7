//! [`MultigridOps`]: the kernels of the multigrid algorithms (point-block
//! Jacobi, the transfers between nested levels, random start vectors) that
//! every backend implements on its own vectors.

use std::sync::Arc;

use crate::{Precision, Real, Result};

/// Relative pivot tolerance of the point-block inverse in `precision`:
/// `N_comp·ε`. A block whose largest available pivot is not above this
/// times its largest entry is singular (on every backend).
pub fn block_tolerance(precision: Precision, n_comp: usize) -> f64 {
    let eps = match precision {
        Precision::F32 => f64::from(f32::EPSILON),
        Precision::F64 => f64::EPSILON,
    };
    n_comp as f64 * eps
}

/// Lanes `L` that sum one row of [`MultigridOps::dense_apply`] (on a device
/// one work-group of `L` work-items a row).
pub const DENSE_LANES: usize = 256;

/// The index arrays of the transfer between a coarse level of `n_coarse`
/// nodes and the fine level whose nodes are the coarse ones followed by the
/// midpoints of `edges` (see `multigrid::Transfer` for the operators).
///
/// `incident[offsets[v]..offsets[v + 1]]` are the edges at coarse node `v`,
/// increasing: the restriction reads them. `coarse_fixed` and `fine_fixed`
/// (one byte per dof, 1 = fixed) mask the transfers: they are those of `P̃`,
/// `P` with the rows of the fixed fine dofs and the columns of the fixed
/// coarse dofs zero (all 0: `P` itself).
#[derive(Clone, Debug)]
pub struct TransferGraph {
    /// Coarse nodes.
    pub n_coarse: usize,
    /// Components per node of the fields transferred.
    pub n_comp: usize,
    /// The coarse edges whose midpoints are the new fine nodes (shared
    /// with the hierarchy and the levels that list them: not copied).
    pub edges: Arc<Vec<[u32; 2]>>,
    /// CSR offsets of the edges at each coarse node (`n_coarse + 1`).
    pub offsets: Vec<u32>,
    /// The edges at each coarse node (`2·edges.len()`).
    pub incident: Vec<u32>,
    /// Per coarse dof, 1 if fixed (`n_coarse·N_comp`).
    pub coarse_fixed: Vec<u8>,
    /// Per fine dof, 1 if fixed (`(n_coarse + n_edges)·N_comp`).
    pub fine_fixed: Vec<u8>,
}

impl TransferGraph {
    /// Dofs of the coarse level, `n_coarse·N_comp`.
    pub fn n_coarse_dofs(&self) -> usize {
        self.n_coarse * self.n_comp
    }

    /// Dofs of the fine level, `(n_coarse + n_edges)·N_comp`.
    pub fn n_fine_dofs(&self) -> usize {
        (self.n_coarse + self.edges.len()) * self.n_comp
    }
}

/// How a fused Chebyshev step ([`MultigridOps::chebyshev_step`]) updates
/// the residual `r` before it is smoothed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResidualUpdate {
    /// `r ← b` (the first step from `x = 0`).
    FromRhs,
    /// `r ← b − w`, `w = A x` (the first step from a given `x`).
    RhsMinusW,
    /// `r ← r − w`, `w = A d` (every later step).
    MinusW,
}

/// The operands of a fused Chebyshev step: the iterate `x`, the direction
/// `d`, the residual `r`, the right-hand side `b`, the last operator
/// product `w` and the point-block inverse `inv` (`[node][fc][gc]`).
/// Operands a step does not read (`w` with [`ResidualUpdate::FromRhs`], `b`
/// with [`ResidualUpdate::MinusW`]) must still be vectors of the right
/// length and place.
#[derive(Debug)]
pub struct ChebyshevOperands<'a, V> {
    /// The iterate.
    pub x: &'a mut V,
    /// The direction, `d ← a·d + c·D⁻¹r`.
    pub d: &'a mut V,
    /// The residual.
    pub r: &'a mut V,
    /// The right-hand side.
    pub b: &'a V,
    /// The operator's last product (`A x` or `A d`).
    pub w: &'a V,
    /// The point-block inverse `D⁻¹`.
    pub inv: &'a V,
}

/// The scalars of a fused Chebyshev step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChebyshevCoefficients {
    /// How `r` is updated.
    pub residual: ResidualUpdate,
    /// `a` in `d ← a·d + c·D⁻¹r` (`0`: `d = c·D⁻¹r`, whatever `d` held if
    /// finite).
    pub a: f64,
    /// `c` in `d ← a·d + c·D⁻¹r`.
    pub c: f64,
    /// `x ← d` (the first step from `x = 0`) instead of `x ← x + d`.
    pub x_from_zero: bool,
}

/// A Chebyshev step with the operator's product fused in, one pass over
/// the rows of an assembled matrix `A` ([`super::AssembledMatrix::chebyshev_step`]):
///
/// ```text
/// w = A d,   r ← r − w,   d_next ← a·d + c·D⁻¹r,   x ← x + d_next
/// ```
///
/// (the step [`MultigridOps::chebyshev_step`] makes with
/// [`ResidualUpdate::MinusW`] after `w = A d`), each entry by the
/// operations of that unfused sequence. The new direction goes to
/// `d_next`, not `d`, which the other rows' products still read; the
/// caller swaps the two.
#[derive(Debug)]
pub struct FusedChebyshevStep<'a, V> {
    /// The iterate.
    pub x: &'a mut V,
    /// The direction, read (`A d` and `a·d`).
    pub d: &'a V,
    /// The new direction, written.
    pub d_next: &'a mut V,
    /// The residual, `r ← r − A d`.
    pub r: &'a mut V,
    /// The point-block inverse `D⁻¹` (`[node][fc][gc]`).
    pub inv: &'a V,
    /// `a` in `d_next = a·d + c·D⁻¹r`.
    pub a: f64,
    /// `c` in `d_next = a·d + c·D⁻¹r`.
    pub c: f64,
}

/// The multigrid kernels of one backend, for fields of
/// [`MultigridOps::n_comp`] components per node (dofs interleaved
/// node-major, `dof = node·N_comp + c`) in precision `R`.
///
/// Every implementation computes each output entry by the same operations
/// in the same order (the native one is the reference; the device kernels
/// are its twins, FP contraction off), so the transfers, the block update
/// and the random fill agree bitwise across backends, and the block
/// inverse to rounding. Implementations check lengths and return
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) naming the
/// operand; they never transfer between host and device.
pub trait MultigridOps<R: Real> {
    /// The backend's vector of `R`.
    type Vector;
    /// The backend's index set (dofs).
    type Indices;
    /// A [`TransferGraph`] in the backend's memory.
    type Transfer;

    /// Components per node.
    fn n_comp(&self) -> usize;

    /// The rows and columns of the dofs `fixed` in the diagonal blocks
    /// `blocks` (`[node][fc][gc]`, `N_comp²` entries a node) set to those
    /// of `diagonal·I` (1: the identity's, 0: zero).
    fn block_fix(
        &self,
        blocks: &mut Self::Vector,
        fixed: &Self::Indices,
        diagonal: f64,
    ) -> Result<()>;

    /// `inv ← D⁻¹` blockwise (Gauss–Jordan with partial pivoting); a block
    /// whose largest available pivot is not above `N_comp·ε` times its
    /// largest entry ([`block_tolerance`]), or that is not finite, becomes
    /// all NaN.
    fn block_invert(&self, inv: &mut Self::Vector, blocks: &Self::Vector) -> Result<()>;

    /// `y ← a·y + b·D⁻¹r`, `D⁻¹` given by its blocks `inv`.
    fn block_update(
        &self,
        y: &mut Self::Vector,
        a: f64,
        inv: &Self::Vector,
        r: &Self::Vector,
        b: f64,
    ) -> Result<()>;

    /// One Chebyshev smoothing step fused into one pass over the nodes:
    ///
    /// ```text
    /// r ← b | b − w | r − w      (coefficients.residual)
    /// d ← a·d + c·D⁻¹r
    /// x ← d | x + d              (coefficients.x_from_zero)
    /// ```
    ///
    /// each entry by the operations, in the order, of the unfused sequence
    /// (`copy`, `axpy(−1, w)`, [`MultigridOps::block_update`],
    /// `axpy(1, d)`), so the result is bitwise that sequence's.
    fn chebyshev_step(
        &self,
        operands: ChebyshevOperands<'_, Self::Vector>,
        coefficients: ChebyshevCoefficients,
    ) -> Result<()>;

    /// `y ← A x` for a dense `n × n` matrix `A` stored row-major in `a`
    /// (`n²` entries, `n = x.len()`), e.g. the inverse of the coarsest
    /// operator. Each row's `Σ_j a_ij x_j` is taken by `L` =
    /// [`DENSE_LANES`] lanes: lane `l` sums `a_ij·x_j` for `j = l, l + L, …`
    /// in order, then the partial sums `p` are added in a tree
    /// (`p_l ← p_l + p_{l+h}` for `l < h`, `h = L/2, L/4, …, 1`), so every
    /// backend rounds alike.
    fn dense_apply(&self, y: &mut Self::Vector, a: &Self::Vector, x: &Self::Vector) -> Result<()>;

    /// `x[i]` uniform in `[−1, 1)` from `seed` and `i` (the same numbers on
    /// every backend).
    fn fill_random(&self, x: &mut Self::Vector, seed: u64) -> Result<()>;

    /// `graph` in the backend's memory (for fields of this `N_comp`).
    fn transfer(&self, graph: &Arc<TransferGraph>) -> Result<Self::Transfer>;

    /// `fine ← fine + P̃ coarse` (`P̃`: see [`TransferGraph`]).
    fn prolong_add(
        &self,
        t: &Self::Transfer,
        fine: &mut Self::Vector,
        coarse: &Self::Vector,
    ) -> Result<()>;

    /// `coarse ← P̃ᵀ f` with `f = b`, or `f = b − w` given `w` (a residual
    /// `b − A x` restricted in the same pass as its `w = A x`), each entry
    /// of `f` computed as `b + (−1)·w`.
    fn restrict(
        &self,
        t: &Self::Transfer,
        coarse: &mut Self::Vector,
        b: &Self::Vector,
        w: Option<&Self::Vector>,
    ) -> Result<()>;

    /// `coarse ← I fine` (the coarse nodes' values).
    fn inject(
        &self,
        t: &Self::Transfer,
        coarse: &mut Self::Vector,
        fine: &Self::Vector,
    ) -> Result<()>;
}
