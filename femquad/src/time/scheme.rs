//! The implicit one-step and two-step formulas: what one step binds on the
//! operator (`t`, `u_t = σ·y + b`), which values the step's unknown `y`
//! takes on the fixed dofs, and how `u_{n+1}` follows from `y`.

use crate::{Error, Result};

/// An implicit time-stepping scheme for `F(t, u, u_t) = 0`.
///
/// Each step solves one nonlinear system `F(t_s, y, σ·y + b) = 0` for a
/// stage value `y` (Newton–Krylov, with the exact step Jacobian
/// `σ·∂F/∂u_t + ∂F/∂u`):
///
/// | scheme | `t_s` | `σ` | `b` | `u_{n+1}` | order |
/// |---|---|---|---|---|---|
/// | backward Euler | `t_n + Δt` | `1/Δt` | `−u_n/Δt` | `y` | 1 |
/// | θ-method | `t_n + θΔt` | `1/(θΔt)` | `−u_n/(θΔt)` | `(y − (1−θ)·u_n)/θ` | 2 at θ = ½, else 1 |
/// | BDF2 | `t_n + Δt` | `(1+2ω)/((1+ω)Δt)` | `(−(1+ω)·u_n + ω²/(1+ω)·u_{n−1})/Δt` | `y` | 2 |
///
/// The θ-method is PETSc's `TSTHETA` form: `F` at the stage
/// `y = θ·u_{n+1} + (1−θ)·u_n`, `t_n + θΔt`, with `u_t = (u_{n+1} − u_n)/Δt`.
/// θ = 1 is backward Euler; θ = ½ is the implicit midpoint rule, the
/// one-stage form of Crank–Nicolson (the same steps for `F` affine in
/// `(u, u_t)` with data constant in time; second order in general).
/// θ < ½ is not A-stable.
///
/// BDF2 has variable-step coefficients, `ω = Δt_n/Δt_{n−1}` the ratio of
/// the step to the previous one (zero-stable for `ω < 1 + √2`); its first
/// step, without a previous value, is a backward Euler step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scheme {
    /// Backward (implicit) Euler, first order, L-stable.
    BackwardEuler,
    /// The θ-method, `0 < θ ≤ 1`; `Theta(0.5)` is Crank–Nicolson.
    Theta(f64),
    /// The two-step backward differentiation formula, second order,
    /// variable step.
    Bdf2,
}

impl Scheme {
    /// Crank–Nicolson: the θ-method at θ = ½.
    pub const CRANK_NICOLSON: Scheme = Scheme::Theta(0.5);

    /// Checks the scheme's parameter.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `theta` outside `(0, 1]`.
    pub fn check(self) -> Result<()> {
        if let Scheme::Theta(theta) = self
            && !(theta > 0.0 && theta <= 1.0)
        {
            return Err(Error::arg(
                "theta",
                format!("must be in (0, 1] (1: backward Euler, 1/2: Crank–Nicolson), got {theta}"),
            ));
        }
        Ok(())
    }

    /// The order of accuracy of a step: with `history` (a previous value
    /// for BDF2).
    pub fn order(self, history: bool) -> u32 {
        match self {
            Scheme::BackwardEuler => 1,
            Scheme::Theta(0.5) => 2,
            Scheme::Theta(_) => 1,
            Scheme::Bdf2 if history => 2,
            Scheme::Bdf2 => 1,
        }
    }

    /// The coefficients of one step of size `dt` from `t_n`, with
    /// `dt_prev` the previous step's size when there is a previous value
    /// (BDF2).
    pub(crate) fn coefficients(self, t_n: f64, dt: f64, dt_prev: Option<f64>) -> Coefficients {
        match (self, dt_prev) {
            (Scheme::Theta(theta), _) => Coefficients {
                t_stage: t_n + theta * dt,
                sigma: 1.0 / (theta * dt),
                b_n: -1.0 / (theta * dt),
                b_prev: 0.0,
                theta,
            },
            (Scheme::Bdf2, Some(dt_prev)) => {
                let w = dt / dt_prev;
                Coefficients {
                    t_stage: t_n + dt,
                    sigma: (1.0 + 2.0 * w) / ((1.0 + w) * dt),
                    b_n: -(1.0 + w) / dt,
                    b_prev: w * w / ((1.0 + w) * dt),
                    theta: 1.0,
                }
            }
            (Scheme::BackwardEuler | Scheme::Bdf2, _) => Coefficients {
                t_stage: t_n + dt,
                sigma: 1.0 / dt,
                b_n: -1.0 / dt,
                b_prev: 0.0,
                theta: 1.0,
            },
        }
    }
}

/// One step's formula: `u_t = σ·y + b_n·u_n + b_prev·u_{n−1}` at
/// `t_stage`, and `u_{n+1} = (y − (1−θ)·u_n)/θ`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Coefficients {
    pub t_stage: f64,
    pub sigma: f64,
    pub b_n: f64,
    pub b_prev: f64,
    pub theta: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The formulas differentiate quadratics exactly (BDF2, any ratio) and
    /// lines (backward Euler), and the θ stage is `θ·u_{n+1} + (1−θ)·u_n`.
    #[test]
    fn coefficients_are_exact_for_polynomials_of_their_order() {
        let u = |t: f64| 1.0 + 2.0 * t - 3.0 * t * t;
        let du = |t: f64| 2.0 - 6.0 * t;
        let (t_n, dt, dt_prev) = (0.7, 0.3, 0.2);
        let c = Scheme::Bdf2.coefficients(t_n, dt, Some(dt_prev));
        let y = u(t_n + dt);
        let u_t = c.sigma * y + c.b_n * u(t_n) + c.b_prev * u(t_n - dt_prev);
        assert!((u_t - du(t_n + dt)).abs() < 1e-12, "{u_t}");
        let line = |t: f64| 1.0 + 2.0 * t;
        let c = Scheme::BackwardEuler.coefficients(t_n, dt, None);
        let u_t = c.sigma * line(t_n + dt) + c.b_n * line(t_n);
        assert!((u_t - 2.0).abs() < 1e-12);
        let c = Scheme::Theta(0.25).coefficients(t_n, dt, None);
        let y = 0.25 * line(t_n + dt) + 0.75 * line(t_n);
        assert!((c.sigma * y + c.b_n * line(t_n) - 2.0).abs() < 1e-12);
        assert!((c.t_stage - (t_n + 0.25 * dt)).abs() < 1e-15);
        assert!(((y - (1.0 - c.theta) * line(t_n)) / c.theta - line(t_n + dt)).abs() < 1e-12);
    }

    #[test]
    fn theta_outside_zero_one_is_refused() {
        for theta in [0.0, -0.5, 1.5, f64::NAN] {
            let e = Scheme::Theta(theta).check().unwrap_err().to_string();
            assert!(
                e.contains("theta") && e.contains("must be in (0, 1]"),
                "{e}"
            );
        }
        assert!(Scheme::Theta(1.0).check().is_ok());
        assert!(Scheme::CRANK_NICOLSON.check().is_ok());
    }
}
