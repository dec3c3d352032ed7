//! What the Krylov solvers share: the system they iterate on (operator and
//! preconditioner as one object), their statistics, the argument checks at
//! the start, the true residual `b − A x` that every convergence claim is
//! checked against, and the report of a non-finite operator output.

use crate::linalg::LinearOperator;
use crate::vector::{VectorOps, check_finite};
use crate::{Error, Precision, Result};

/// A linear system's operator `A` and preconditioner `M⁻¹` as one object:
/// what the iterations of [`cg`](super::cg) and [`gmres`](super::gmres) call.
/// Their public forms take the two as separate [`LinearOperator`]s
/// ([`Separate`]); a solver whose operator and preconditioner share state
/// (a [`DirichletProblem`](super::DirichletProblem)'s operator computes
/// `A v` and serves every multigrid cycle) implements it once on that state,
/// so nothing is borrowed twice.
pub(crate) trait PreconditionedSystem<V> {
    /// `y = A x`.
    fn apply(&mut self, x: &V, y: &mut V) -> Result<()>;
    /// Whether there is a preconditioner (without one, `M = I` and the
    /// solvers skip `M⁻¹`).
    fn is_preconditioned(&self) -> bool;
    /// `z = M⁻¹ r` (`z = r` without a preconditioner).
    fn precondition(&mut self, r: &V, z: &mut V) -> Result<()>;
    /// `Some(d)` if `M⁻¹` is the diagonal scaling `z = d ∘ r`, which the
    /// solver may then fuse into its updates (`precondition` stays
    /// equivalent); `None` by default.
    fn diagonal_scaling(&self) -> Option<&V> {
        None
    }
}

/// A [`PreconditionedSystem`] of an operator and an optional preconditioner
/// given apart: the arguments of [`cg`](super::cg) and [`gmres`](super::gmres).
pub(crate) struct Separate<'a, 'p, A: ?Sized, V> {
    pub(crate) a: &'a mut A,
    pub(crate) preconditioner: Option<&'p mut dyn LinearOperator<V>>,
}

impl<A, V> PreconditionedSystem<V> for Separate<'_, '_, A, V>
where
    A: LinearOperator<V> + ?Sized,
    V: VectorOps,
{
    fn apply(&mut self, x: &V, y: &mut V) -> Result<()> {
        self.a.apply(x, y)
    }

    fn is_preconditioned(&self) -> bool {
        self.preconditioner.is_some()
    }

    fn precondition(&mut self, r: &V, z: &mut V) -> Result<()> {
        match &mut self.preconditioner {
            Some(m) => m.apply(r, z),
            None => z.copy_from(r),
        }
    }

    fn diagonal_scaling(&self) -> Option<&V> {
        self.preconditioner.as_ref()?.diagonal_scaling()
    }
}

/// What a Krylov solve did.
#[derive(Clone, Debug, PartialEq)]
pub struct KrylovStats {
    /// Iterations performed (operator applications of the iteration; the
    /// residuals `b − A x` computed to start, restart or verify are not
    /// counted).
    pub iterations: usize,
    /// Final residual norm `‖b − A x‖₂`, computed from the returned `x`
    /// (the true residual, not the recurrence's estimate).
    pub residual_norm: f64,
    /// Final relative residual `‖b − A x‖₂ / ‖b‖₂` (0 when `b = 0`), from
    /// the true residual like [`KrylovStats::residual_norm`].
    pub relative_residual: f64,
    /// Residual norm before each iteration and after the last
    /// (`iterations + 1` entries): the recurrence's estimate, except where
    /// the true residual was computed (the start, every restart, and the
    /// last entry, which is [`KrylovStats::residual_norm`]).
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

/// A solver's relative tolerance, with the argument it came in (`tol` of
/// [`super::cg`], `opts` of [`super::gmres`]) and its name there, for the
/// errors about it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Tol {
    /// The tolerance.
    pub value: f64,
    /// The solver's argument that holds it.
    pub arg: &'static str,
    /// What the user calls it (`tol`, `GmresOptions::tol`).
    pub label: &'static str,
}

/// The machine epsilon `ε` of a precision: `b − A x` cannot be computed to
/// a relative accuracy better than `ε`.
pub(crate) fn machine_epsilon(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => f64::from(f32::EPSILON),
        Precision::F64 => f64::EPSILON,
    }
}

/// The argument checks shared by the Krylov solvers: `x` as long as `b`,
/// both finite, `tol` finite and at least the machine epsilon `ε` of the
/// vectors' precision (below it `‖b − A x‖ ≤ tol·‖b‖` can be neither
/// reached nor verified: computing `A x` alone rounds by about `ε·‖b‖`).
/// Returns `‖b‖₂`, or `None` when `b = 0`, after setting `x = 0` (the
/// solution). Errors about the tolerance name `tol.arg` and call the value
/// `tol.label`.
pub(crate) fn krylov_start<V: VectorOps>(b: &V, x: &mut V, tol: Tol) -> Result<Option<f64>> {
    b.check_compatible("b", "x", x)?;
    let Tol { value, arg, label } = tol;
    let tol = value;
    if !(tol.is_finite() && tol > 0.0) {
        return Err(Error::arg(
            arg,
            format!("{label} must be positive and finite, got {tol}"),
        ));
    }
    let precision = b.precision();
    let eps = machine_epsilon(precision);
    if tol < eps {
        let f64_hint = match precision {
            Precision::F32 => ", or solve in f64",
            Precision::F64 => "",
        };
        return Err(Error::arg(
            arg,
            format!(
                "{label} = {tol:e} is below the machine epsilon of the vectors' precision ({precision}: \
                 ε = {eps:e}): the residual b − A x cannot be computed to that relative \
                 accuracy, so no solve can reach or check it. Choose {label} ≥ {eps:e} (the \
                 attainable relative residual is about ε times the condition number of A){f64_hint}"
            ),
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

/// Sets `r = b − A x` (with `ax` as scratch for `A x`): the true residual
/// of `x`. Its norm is left to the caller, which may fuse that reduction
/// with others; [`checked_norm`] checks it.
///
/// # Errors
/// Those of `a` and of the vector operations.
pub(crate) fn true_residual<V: VectorOps>(
    a: &mut (impl PreconditionedSystem<V> + ?Sized),
    b: &V,
    x: &V,
    ax: &mut V,
    r: &mut V,
) -> Result<()> {
    a.apply(x, ax)?;
    r.copy_from(ax)?;
    r.axpby(1.0, b, -1.0)
}

/// `√rr` for `rr = r·r` of a true residual `r = b − A x` computed from
/// `ax = A x`, or the error locating a non-finite entry of `A x`.
pub(crate) fn checked_norm<V: VectorOps>(rr: f64, ax: &V) -> Result<f64> {
    if rr.is_finite() {
        Ok(rr.sqrt())
    } else {
        Err(non_finite_output(
            "a",
            "A x (operator output)",
            ax,
            "‖b − A x‖²",
            rr,
        ))
    }
}

/// Guards a Krylov solver against a tolerance below what it can attain:
/// the recurrences (CG's updated residual, GMRES's least-squares estimate)
/// drift from the true residual `b − A x` by rounding, and can claim any
/// tolerance. Each claim is checked against the true residual; when a claim
/// turns out false the solver restarts from the true residual, and when the
/// next claim is false too with a true residual not at least
/// [`STAGNATION`] below the previous false claim's, the true residual has
/// stagnated at what the solve can attain: the tolerance is out of reach.
pub(crate) struct AttainableCheck {
    solver: &'static str,
    b_norm: f64,
    tol: Tol,
    /// The true residual norm of the last false claim.
    last_false: Option<f64>,
}

/// A false claim whose true residual is above this fraction of the
/// previous false claim's made no progress: the true residual stagnates.
pub(crate) const STAGNATION: f64 = 0.9;

impl AttainableCheck {
    /// For a solve to the tolerance `tol` of `b` of norm `b_norm`.
    pub(crate) fn new(solver: &'static str, b_norm: f64, tol: Tol) -> Self {
        AttainableCheck {
            solver,
            b_norm,
            tol,
            last_false: None,
        }
    }

    /// A new cycle starts from the true residual norm `true_norm`, above the
    /// tolerance; `claimed` says whether the cycle that ended claimed
    /// convergence (a false claim). A false claim whose true residual is
    /// above [`STAGNATION`] times the previous false claim's is
    /// [`Error::InvalidArgument`] naming the tolerance's argument, with the
    /// relative residual attained.
    pub(crate) fn restart(
        &mut self,
        claimed: bool,
        true_norm: f64,
        iterations: usize,
    ) -> Result<()> {
        if !claimed {
            return Ok(());
        }
        if let Some(previous) = self.last_false
            && true_norm > STAGNATION * previous
        {
            let attained = true_norm / self.b_norm;
            let Tol { value, arg, label } = self.tol;
            return Err(Error::arg(
                arg,
                format!(
                    "{label} = {value:e} is below the accuracy {} attains for this operator in \
                     this precision: its recurrence claims convergence, but the true relative \
                     residual ‖b − A x‖/‖b‖ stays at {attained:e} after {iterations} iterations \
                     and restarts from the true residual (the rounding of A x, or the error of \
                     an approximate operator such as difference products, limits it). Choose \
                     {label} above {attained:e}, or compute the operator and vectors in higher \
                     precision",
                    self.solver
                ),
            ));
        }
        self.last_false = Some(true_norm);
        Ok(())
    }
}

/// The error for a non-finite scalar `what = value` computed from the
/// vector `output` (the output, named `name`, of the solver's argument
/// `arg`: its operator `a`, its `preconditioner`, a `residual`):
/// [`Error::NonFinite`] with the first non-finite entry of `output` if it
/// has one, else [`Error::InvalidArgument`] naming `arg`: the scalar
/// overflowed.
///
/// The solvers check the scalars they compute anyway (a NaN or ±∞ entry
/// makes every inner product with it non-finite), so finiteness costs no
/// extra reduction per iteration; only a failure locates the entry.
pub(crate) fn non_finite_output<V: VectorOps>(
    arg: &'static str,
    name: &'static str,
    output: &V,
    what: &str,
    value: f64,
) -> Error {
    match check_finite(name, output) {
        Err(e) => e,
        Ok(()) => Error::arg(
            arg,
            format!(
                "{what} = {value} overflowed although `{name}` is finite: its entries are too \
                 large for the precision (scale the problem)"
            ),
        ),
    }
}
