//! What the Krylov solvers share: their statistics, the argument checks at
//! the start, and the report of a non-finite operator output.

use crate::vector::{VectorOps, check_finite};
use crate::{Error, Result};

/// What a Krylov solve did.
#[derive(Clone, Debug, PartialEq)]
pub struct KrylovStats {
    /// Iterations performed (operator applications after the initial residual).
    pub iterations: usize,
    /// Final residual norm `‖b − A x‖₂` (as tracked by the recurrence).
    pub residual_norm: f64,
    /// Final relative residual `‖b − A x‖₂ / ‖b‖₂` (0 when `b = 0`).
    pub relative_residual: f64,
    /// Residual norm before each iteration and after the last
    /// (`iterations + 1` entries).
    pub history: Vec<f64>,
}

impl KrylovStats {
    /// The statistics of `b = 0`, solved by `x = 0` without iterating.
    pub(crate) fn solved_by_zero() -> Self {
        KrylovStats {
            iterations: 0,
            residual_norm: 0.0,
            relative_residual: 0.0,
            history: vec![0.0],
        }
    }
}

/// The argument checks shared by the Krylov solvers: `x` as long as `b`,
/// both finite, `tol` positive and finite. Returns `‖b‖₂`, or `None` when
/// `b = 0`, after setting `x = 0` (the solution).
pub(crate) fn krylov_start<V: VectorOps>(b: &V, x: &mut V, tol: f64) -> Result<Option<f64>> {
    b.check_compatible("b", "x", x)?;
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::arg(
            "tol",
            format!("must be positive and finite, got {tol}"),
        ));
    }
    check_finite("b", b)?;
    check_finite("x", x)?;
    let b_norm = b.norm2()?;
    if b_norm == 0.0 {
        x.fill(0.0)?;
        return Ok(None);
    }
    Ok(Some(b_norm))
}

/// The error for a non-finite scalar `what = value` computed from the
/// vector `output` (an operator's or preconditioner's output, named
/// `name`): [`Error::NonFinite`] with the first non-finite entry of `output`
/// if it has one, else an overflow of the scalar.
///
/// The solvers check the scalars they compute anyway (a NaN or ±∞ entry
/// makes every inner product with it non-finite), so finiteness costs no
/// extra reduction per iteration; only a failure locates the entry.
pub(crate) fn non_finite_output<V: VectorOps>(
    name: &'static str,
    output: &V,
    what: &str,
    value: f64,
) -> Error {
    match check_finite(name, output) {
        Err(e) => e,
        Ok(()) => Error::arg(
            "apply",
            format!("{what} = {value} overflowed although `{name}` is finite"),
        ),
    }
}
