//! The operator's time state: a transient physics (one that reads `u_t`)
//! is evaluated at `F(t, u, u_t)` with `u_t = σ·u + b`, which a time
//! integrator's step binds ([`Operator::set_time`]).

use super::Operator;
use crate::backend::Vector;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The time state bound on an [`Operator`]: the time `t` and the time
/// derivative as an affine function of the unknowns, `u_t = σ·u + b`.
///
/// With it bound, `F(u)` means `F(t, u, σ·u + b)` and the Jacobian
/// `J(u) = dF/du = σ·∂F/∂u_t + ∂F/∂u` is exactly the step Jacobian of an
/// implicit time integrator (backward Euler: `σ = 1/Δt`, `b = −u_n/Δt`),
/// so Newton, the Krylov solvers and multigrid solve a time step with the
/// operator's ordinary `F(u)`, `J(u)·v`, diagonal and assembled Jacobian.
#[derive(Debug)]
pub struct TimeState<R: Real> {
    /// The time `t`.
    pub t: f64,
    /// The shift `σ = ∂u_t/∂u`.
    pub sigma: f64,
    /// `b`, a vector of the operator's dofs where the operator lives.
    pub b: Vector<R>,
}

impl<R: Real> Operator<R> {
    /// Binds the time state `t`, `u_t = σ·u + b` ([`TimeState`]): the next
    /// evaluations compute `F(t, u, σ·u + b)` and the Jacobian
    /// `σ·∂F/∂u_t + ∂F/∂u` (its action, diagonal and assembled matrix).
    /// `b` is copied. A physics that reads `t` but not `u_t` sees the time
    /// too. [`crate::time::TimeIntegrator`] binds it for every step; set it
    /// yourself to evaluate a transient physics at a given `(t, u, u_t)`
    /// (`σ = 0`, `b = u_t`).
    ///
    /// # Errors
    /// [`Error::NonFinite`] naming `t` or `sigma` (also for a value not
    /// finite in the operator's precision), or `b` and the index of its
    /// first NaN or ±∞; [`Error::InvalidArgument`] naming `b` for a wrong
    /// length or location.
    pub fn set_time(&mut self, t: f64, sigma: f64, b: &Vector<R>) -> Result<()> {
        let (t_r, sigma_r) = (R::from_f64(t), R::from_f64(sigma));
        crate::real::check_finite("t", &[t_r])?;
        crate::real::check_finite("sigma", &[sigma_r])?;
        self.check_vectors(&[("b", b)])?;
        crate::vector::check_finite("b", b)?;
        self.integrator.set_time(Some((t_r, sigma_r, b)))?;
        let mut copy = b.zeros_like()?;
        copy.copy_from(b)?;
        self.time = Some(TimeState { t, sigma, b: copy });
        Ok(())
    }

    /// Unbinds the time state: the operator is stationary again (`t` = 0;
    /// a transient physics cannot be evaluated).
    ///
    /// # Errors
    /// Backend failures.
    pub fn clear_time(&mut self) -> Result<()> {
        self.integrator.set_time(None)?;
        self.time = None;
        Ok(())
    }

    /// The bound time state, if any.
    pub fn time(&self) -> Option<&TimeState<R>> {
        self.time.as_ref()
    }

    /// The error for a transient physics (the cells' or a boundary
    /// term's) evaluated without a time state.
    pub(crate) fn check_time(&self) -> Result<()> {
        if self.time.is_some() {
            return Ok(());
        }
        let boundary = self.form.boundary().iter().map(|t| t.physics().info());
        if let Some(info) = std::iter::once(self.physics().info())
            .chain(boundary)
            .find(|info| info.is_transient())
        {
            return Err(Error::arg(
                "physics",
                format!(
                    "`{}` reads `u_t`: bind a time state (Operator::set_time: t and \
                     u_t = σ·u + b) or solve it with a time integrator \
                     (femquad::time::TimeIntegrator)",
                    info.name
                ),
            ));
        }
        Ok(())
    }
}
