//! The vector contract of the solvers, free of any backend.
//!
//! [`VectorOps`] is the one interface of the solvers ([`crate::solve`]) to
//! their vectors: the BLAS-1 operations of Krylov methods, fallible
//! (`Result`), with scalars as `f64`. This module implements it for host
//! vectors `Vec<R>` ([`host`](self#host-vectors)): rayon-parallel for long
//! vectors, with reductions in a fixed order. The backends implement it for
//! their own vectors (the OpenCL backend for its device vectors, every
//! operation a device kernel, a reduction reading back only its scalar
//! result), and [`crate::backend`] for the user-facing
//! [`Vector<R>`](crate::backend::Vector), which dispatches to either and
//! where combining a host and a device vector is an error
//! ([`Error::InvalidArgument`] naming the argument and both locations) —
//! never a silent transfer. This module names no backend.
//!
//! So one solver code path serves host and device vectors, and a solve on
//! device vectors moves no array between host and device: per iteration only
//! the scalars of reductions cross PCIe.
//!
//! # Host vectors
//! Operations on at least 2¹⁵ entries run in parallel on rayon's pool.
//! Reductions sum fixed blocks of [`HOST_BLOCK`] entries in order, then the
//! block sums in order, all in `f64` (also for `f32` vectors): the result
//! does not depend on the number of threads. Elementwise operations compute
//! exactly what the device kernels compute (the same roundings, no fused
//! multiply-add), so host and device agree bitwise on them; reductions agree
//! to rounding (the device sums in another fixed order).
//!
//! # Semantics shared by all implementations
//! With `x` the receiver of a reduction and `y` the receiver of an update
//! (error messages name the operands as here; `pointwise_mult`'s second
//! operand is reported as `y`):
//!
//! | operation | meaning |
//! |---|---|
//! | `copy_from(x)` | `y ← x` |
//! | `fill(c)` | `y_i ← c` |
//! | `scale(α)` | `y ← α y` |
//! | `axpy(α, x)` | `y ← y + α x` |
//! | `axpby(α, x, β)` | `y ← α x + β y` |
//! | `pointwise_mult(x, z)` | `y_i ← x_i z_i` |
//! | `maxpy(α, [x_j])` | `y ← y + Σ_j α_j x_j` (terms in order of `j`) |
//! | `dot(v)` | `x·v = Σ_i x_i v_i` |
//! | `norm2()` | `‖x‖₂ = √(x·x)` |
//! | `norm_inf()` | `‖x‖_∞ = max_i |x_i|` (0 if empty, NaN if an entry is NaN) |
//! | `dots([v_j])` | `[x·v_0, x·v_1, …]`, each bitwise `dot(v_j)` |
//! | `first_non_finite()` | the first `i` with `x_i` NaN or ±∞ |
//! | `cg_update(α, p, q, x, then)` | `x ← x + α p`, `y ← y − α q`, then [`CgFusion`] (one pass) |
//!
//! Scalars are rounded to the vector's precision `R` before use
//! (`R::from_f64`); reductions return `f64`.
//!
//! Between precisions (outside the trait, whose operands share one
//! precision): [`convert`] on the host and
//! [`Vector::convert_from`](crate::backend::Vector::convert_from) on host
//! or device vectors — `y_i ← round(x_i)`, rounded to nearest from `f64` to `f32`.

mod blocks;
mod fused;
mod host;

pub use blocks::HOST_BLOCK;
pub use fused::CgFusion;
#[cfg(test)]
pub(crate) use fused::assert_fused_is_unfused;
pub use host::convert;

use crate::{Error, Precision, Result};

/// The operations the solvers do on vectors (see the [module
/// documentation](self) for their exact meaning and for the
/// implementations).
///
/// Every operand must have the receiver's length (and location);
/// otherwise the operation returns [`Error::InvalidArgument`] naming the
/// operand. Implementations never transfer data implicitly.
pub trait VectorOps: Sized {
    /// Number of entries.
    fn len(&self) -> usize;

    /// True if the vector has no entries.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The precision of the entries (`f32` or `f64`): its machine epsilon
    /// bounds the relative accuracy a solver can reach on these vectors.
    fn precision(&self) -> Precision;

    /// A vector of zeros of the same length, precision and location.
    fn zeros_like(&self) -> Result<Self>;

    /// Checks that `other` (the operand named `name`) can be combined with
    /// this vector (named `own`): the same length and location. The solvers
    /// check their arguments so before the first operator application.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `name` (and, for different places,
    /// both locations).
    fn check_compatible(&self, own: &str, name: &'static str, other: &Self) -> Result<()>;

    /// `y ← x`.
    fn copy_from(&mut self, x: &Self) -> Result<()>;

    /// `y_i ← value` for all `i`.
    fn fill(&mut self, value: f64) -> Result<()>;

    /// `y ← α y`.
    fn scale(&mut self, alpha: f64) -> Result<()>;

    /// `y ← y + α x`.
    fn axpy(&mut self, alpha: f64, x: &Self) -> Result<()>;

    /// `y ← α x + β y`.
    fn axpby(&mut self, alpha: f64, x: &Self, beta: f64) -> Result<()>;

    /// `y_i ← x_i z_i` (e.g. a Jacobi preconditioner `D⁻¹ ∘ r`).
    fn pointwise_mult(&mut self, x: &Self, z: &Self) -> Result<()>;

    /// Inner product `x·y = Σ_i x_i y_i`.
    fn dot(&self, y: &Self) -> Result<f64>;

    /// Euclidean norm `‖x‖₂`.
    fn norm2(&self) -> Result<f64>;

    /// Max norm `‖x‖_∞` (0 if empty, NaN if an entry is NaN).
    fn norm_inf(&self) -> Result<f64>;

    /// Multi-dot `[x·v_0, …, x·v_{m−1}]` in one pass over `x` (one round
    /// trip on a device); each value is bitwise [`VectorOps::dot`].
    fn dots(&self, vs: &[&Self]) -> Result<Vec<f64>>;

    /// Multi-axpy `y ← y + Σ_j α_j x_j`, the terms added in order of `j`
    /// (bitwise a loop of [`VectorOps::axpy`]).
    fn maxpy(&mut self, alphas: &[f64], xs: &[&Self]) -> Result<()>;

    /// Conjugate gradients' residual update fused with the reductions it
    /// feeds, in one pass over the vectors (this vector is the residual
    /// `r`):
    ///
    /// ```text
    /// x ← x + α p;  r ← r − α q;  then  —  |  r·r  |  z ← d ∘ r, (r·r, r·z)
    /// ```
    ///
    /// as [`CgFusion`] says (`None` for [`CgFusion::Update`], else
    /// `Some((r·r, r·z))`, `r·z = r·r` for [`CgFusion::Norm`]). Every
    /// value is bitwise that of the unfused sequence in [`CgFusion`]'s
    /// table on the same vectors (the same roundings, the reductions in
    /// the same order); on a device one launch (and one reduction pass and
    /// one scalar read when it reduces) instead of three to four launches.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `p`, `q`, `x`, `inverse_diagonal`
    /// or `z` for a length (or location) other than this vector's.
    fn cg_update(
        &mut self,
        alpha: f64,
        p: &Self,
        q: &Self,
        x: &mut Self,
        then: CgFusion<'_, Self>,
    ) -> Result<Option<(f64, f64)>>;

    /// The first index whose entry is NaN or ±∞, if any.
    fn first_non_finite(&self) -> Result<Option<usize>>;

    /// The entry at `index`, as `f64` (one scalar read on a device; meant
    /// for diagnostics, not for loops).
    fn value_at(&self, index: usize) -> Result<f64>;
}

/// Checks that every entry of `v` is finite: otherwise
/// [`Error::NonFinite`] naming `name`, the first offending index and its
/// value (on a device: one reduction and, on failure, one more scalar read).
pub fn check_finite<V: VectorOps>(name: &'static str, v: &V) -> Result<()> {
    match v.first_non_finite()? {
        None => Ok(()),
        Some(index) => Err(Error::NonFinite {
            name,
            index,
            value: format!("{}", v.value_at(index)?),
        }),
    }
}

/// Checks that the operand `name` has `expected` entries.
pub(crate) fn check_len(name: &'static str, got: usize, expected: usize) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {expected} entries, got {got}"),
        ))
    }
}

/// Checks that the operand `name` has as many entries (`got`) as the vector
/// `own` (`expected`).
pub(crate) fn check_len_of(
    own: &str,
    name: &'static str,
    got: usize,
    expected: usize,
) -> Result<()> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {expected} entries (as `{own}`), got {got}"),
        ))
    }
}
