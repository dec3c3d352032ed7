//! Step sizes: fixed, or adaptive by step doubling.

use crate::{Error, Result};

/// How the step size is chosen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepControl {
    /// Steps of `dt` (the last one shortened to end at `t_end`).
    Fixed(f64),
    /// Steps chosen to meet a tolerance ([`Adaptive`]).
    Adaptive(Adaptive),
}

/// Adaptive steps by step doubling, with an elementary controller.
///
/// Each attempt from `t_n` takes one step of `Δt` (`u_big`) and two of
/// `Δt/2` (`u_small`, which is kept). With `p` the scheme's order
/// ([`crate::time::Scheme::order`]) the local error of `u_small` is
/// estimated by Richardson's argument as
///
/// ```text
/// err = ‖u_small − u_big‖_∞ / (2^p − 1).
/// ```
///
/// The step is accepted when `err ≤ tol` (so `tol` bounds the local error
/// per step, in the max norm over dofs), else retried from `t_n`. Either
/// way the next `Δt` is
///
/// ```text
/// Δt ← Δt · min(grow_max, max(shrink_min, 0.9·(tol/err)^(1/(p+1))))
/// ```
///
/// clipped to `[dt_min, dt_max]` (and to end at `t_end`). A step that
/// fails with `Δt = dt_min` is an error. Each attempt costs three nonlinear
/// solves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adaptive {
    /// The first step tried.
    pub dt0: f64,
    /// The tolerance on the estimated local error of a step (max norm).
    pub tol: f64,
    /// The smallest step allowed.
    pub dt_min: f64,
    /// The largest step allowed.
    pub dt_max: f64,
    /// The largest growth of a step, ≥ 1 (5 is usual).
    pub grow_max: f64,
    /// The strongest shrinking, in (0, 1) (0.2 is usual).
    pub shrink_min: f64,
}

impl Adaptive {
    /// Steps starting at `dt0` meeting `tol`, within `[dt0·1e-6, ∞)`,
    /// growing at most 5× and shrinking at most 5× per step.
    pub fn new(dt0: f64, tol: f64) -> Self {
        Adaptive {
            dt0,
            tol,
            dt_min: dt0 * 1e-6,
            dt_max: f64::INFINITY,
            grow_max: 5.0,
            shrink_min: 0.2,
        }
    }

    /// The next step after an attempt of `dt` whose estimate was `err`, for
    /// a scheme of order `order`.
    pub(crate) fn next_dt(&self, dt: f64, err: f64, order: u32) -> f64 {
        let factor = if err == 0.0 {
            self.grow_max
        } else {
            (0.9 * (self.tol / err).powf(1.0 / (order as f64 + 1.0)))
                .clamp(self.shrink_min, self.grow_max)
        };
        (dt * factor).clamp(self.dt_min, self.dt_max)
    }
}

impl StepControl {
    /// Checks the step sizes and bounds.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `dt` (or `dt0`) if it is not a
    /// finite number > 0, `tol` likewise, `dt_min`/`dt_max` if they are not
    /// `0 < dt_min ≤ dt0 ≤ dt_max`, `grow_max` below 1, `shrink_min`
    /// outside (0, 1).
    pub fn check(&self) -> Result<()> {
        let positive = |name: &'static str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::arg(
                    name,
                    format!("must be a finite number > 0, got {v}"),
                ))
            }
        };
        match *self {
            StepControl::Fixed(dt) => positive("dt", dt),
            StepControl::Adaptive(a) => {
                positive("dt0", a.dt0)?;
                positive("tol", a.tol)?;
                positive("dt_min", a.dt_min)?;
                if !(a.dt_min <= a.dt0 && a.dt0 <= a.dt_max) {
                    return Err(Error::arg(
                        "dt_min",
                        format!(
                            "the bounds must satisfy dt_min ≤ dt0 ≤ dt_max, got {} ≤ {} ≤ {}",
                            a.dt_min, a.dt0, a.dt_max
                        ),
                    ));
                }
                if a.grow_max.is_nan() || a.grow_max < 1.0 {
                    return Err(Error::arg(
                        "grow_max",
                        format!("must be at least 1, got {}", a.grow_max),
                    ));
                }
                if !(a.shrink_min > 0.0 && a.shrink_min < 1.0) {
                    return Err(Error::arg(
                        "shrink_min",
                        format!("must be in (0, 1), got {}", a.shrink_min),
                    ));
                }
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_controller_grows_shrinks_and_keeps_its_bounds() {
        let a = Adaptive {
            dt_max: 1.0,
            ..Adaptive::new(0.1, 1e-4)
        };
        // err = tol: 0.9× for any order
        assert!((a.next_dt(0.1, 1e-4, 1) - 0.09).abs() < 1e-15);
        // err 8× tol, order 2: (1/8)^(1/3) = 1/2, times 0.9
        assert!((a.next_dt(0.1, 8e-4, 2) - 0.045).abs() < 1e-15);
        assert_eq!(a.next_dt(0.1, 0.0, 1), 0.5);
        assert_eq!(a.next_dt(0.5, 0.0, 1), 1.0); // dt_max
        assert_eq!(a.next_dt(0.1, 1.0, 1), 0.1 * 0.2); // shrink_min
    }

    #[test]
    fn bad_steps_and_bounds_are_refused_by_name() {
        for dt in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let e = StepControl::Fixed(dt).check().unwrap_err().to_string();
            assert!(e.contains("`dt`") || e.contains("dt"), "{e}");
            assert!(e.contains("must be a finite number > 0"), "{e}");
        }
        let e = StepControl::Adaptive(Adaptive::new(0.1, 0.0))
            .check()
            .unwrap_err()
            .to_string();
        assert!(e.contains("tol") && e.contains("> 0, got 0"), "{e}");
        let bad = Adaptive {
            dt_max: 0.01,
            ..Adaptive::new(0.1, 1e-3)
        };
        let e = StepControl::Adaptive(bad).check().unwrap_err().to_string();
        assert!(e.contains("dt_min ≤ dt0 ≤ dt_max"), "{e}");
        assert!(
            StepControl::Adaptive(Adaptive::new(0.1, 1e-3))
                .check()
                .is_ok()
        );
    }
}
