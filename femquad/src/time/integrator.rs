//! [`TimeIntegrator`]: the steps, their Dirichlet values, the adaptive
//! loop, progress and output.

use super::adaptive::{Adaptive, StepControl};
use super::problem::TimeProblem;
use super::scheme::Scheme;
use crate::solve::NewtonOptions;
use crate::vector::VectorOps;
use crate::{Error, Result};

/// Dirichlet values depending on time: `g(t, x, out)`.
type BoundaryValues = Box<dyn Fn(f64, &[f64], &mut [f64]) + Sync>;

/// A progress callback.
type Progress<V> = Box<dyn FnMut(&StepReport<'_, V>)>;

/// What the progress callback learns after each accepted step.
#[derive(Debug)]
pub struct StepReport<'a, V> {
    /// The number of accepted steps so far (1 after the first).
    pub step: usize,
    /// The time reached.
    pub t: f64,
    /// The size of the step that reached it.
    pub dt: f64,
    /// Newton steps of the step's nonlinear solves (all of them, three per
    /// adaptive attempt).
    pub newton_iterations: usize,
    /// Krylov iterations of those Newton steps.
    pub linear_iterations: usize,
    /// Multigrid V-cycles those Krylov iterations applied (0 with another
    /// preconditioner).
    pub multigrid_cycles: usize,
    /// `‖F‖₂` of the constrained residual before and after the step's
    /// (last) Newton solve: the residual reduction the step reached.
    pub residual_norms: (f64, f64),
    /// The estimated local error of the step (adaptive steps only).
    pub error_estimate: Option<f64>,
    /// Attempts rejected before this step was accepted (adaptive only).
    pub rejected: usize,
    /// The solution at `t` (where the problem's vectors live).
    pub u: &'a V,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    /// Accepted steps.
    pub steps: usize,
    /// Rejected attempts (adaptive).
    pub rejected: usize,
    /// Newton steps in all.
    pub newton_iterations: usize,
    /// Krylov iterations in all.
    pub linear_iterations: usize,
    /// Multigrid V-cycles in all (0 with another preconditioner).
    pub multigrid_cycles: usize,
    /// The accepted step sizes, in order.
    pub step_sizes: Vec<f64>,
    /// The largest error estimate of an accepted step (adaptive).
    pub max_error_estimate: Option<f64>,
}

/// The implicit time integration of a transient problem `P`: a serial
/// [`DirichletProblem`](crate::solve::DirichletProblem), or any other
/// [`TimeProblem`] (e.g. one distributed over MPI ranks by `femquad-mpi`),
/// with the same steps (see [the module](super)).
///
/// ```
/// use femquad::prelude::*;
/// use femquad::time::{Scheme, StepControl, TimeIntegrator};
///
/// /// The heat equation u_t − Δu = 0.
/// #[femquad::pointwise]
/// fn heat<const D: usize>(
///     u_t: &[f64; 1],
///     grad_u: &[[f64; D]; 1],
///     f0: &mut [f64; 1],
///     f1: &mut [[f64; D]; 1],
/// ) {
///     f0[0] = u_t[0];
///     for d in 0..D {
///         f1[0][d] = grad_u[0][d];
///     }
/// }
///
/// # fn main() -> femquad::Result<()> {
/// let mesh = unit_square(4, &MeshOptions::default())?;
/// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1)?, 1)?;
/// let op = Operator::<f64>::new(Form::new(space, Heat)?, &Backend::native())?;
/// let problem = DirichletProblem::on_boundary(op, |_, g| g[0] = 0.0)?;
/// let mut integrator = TimeIntegrator::new(problem, Scheme::Bdf2)?;
/// let u0 = integrator.problem().space().interpolate(|x, u| {
///     u[0] = (std::f64::consts::PI * x[0]).sin() * (std::f64::consts::PI * x[1]).sin()
/// });
/// let (u, stats) = integrator.run(&u0, 0.0, 0.1, StepControl::Fixed(0.01))?;
/// assert_eq!(stats.steps, 10);
/// // the mode decays like exp(−2π² t): 0.139 at t = 0.1 (coarse mesh)
/// let centre = u.to_host()?.iter().cloned().fold(0.0, f64::max);
/// assert!((centre - (-2.0 * std::f64::consts::PI.powi(2) * 0.1).exp()).abs() < 0.05);
/// # Ok(())
/// # }
/// ```
pub struct TimeIntegrator<P: TimeProblem> {
    problem: P,
    scheme: Scheme,
    newton: NewtonOptions,
    boundary: Option<BoundaryValues>,
    progress: Option<Progress<P::Vector>>,
    output: Option<P::Series>,
    /// The form is affine in `u` and `u_t` (its physics and every boundary
    /// term `linear`): each step's Newton solve needs one Krylov solve.
    affine: bool,
    /// `‖F‖` at the start of the run's first step with a nonzero residual:
    /// the scale of this problem's residuals (see [`TimeIntegrator::new`]).
    residual_scale: Option<f64>,
}

/// Newton's absolute tolerance of a step, relative to the residual scale.
const ATOL_OF_SCALE: f64 = 1e-12;

/// The state between steps: `u_n` at `t_n`, and for BDF2 the previous
/// value with the previous step's size.
struct History<V> {
    t: f64,
    u: V,
    prev: Option<(V, f64)>,
}

/// One accepted step: its size, error estimate (adaptive), rejected
/// attempts and iterations.
struct Attempt {
    dt: f64,
    estimate: Option<f64>,
    rejected: usize,
    newton: usize,
    linear: usize,
    cycles: usize,
    residual_norms: (f64, f64),
}

/// One step's result: `u_{n+1}`, the iterations it took and its Newton
/// solve's first and last residual norms.
struct Stepped<V> {
    u: V,
    newton: usize,
    linear: usize,
    cycles: usize,
    residual_norms: (f64, f64),
}

impl<P: TimeProblem> TimeIntegrator<P> {
    /// Integrates `problem` (its operator's physics, or one of its form's
    /// boundary terms — a dynamic boundary condition —, reads `u_t`) with
    /// `scheme`. Each step's Newton solve has [`NewtonOptions::default`]
    /// (`rtol = 1e-10`), with the absolute tolerance raised to `1e-12·s`,
    /// `s` the initial residual norm of the run's first step: near a steady
    /// state a step starts at a residual close to rounding, which a
    /// relative tolerance alone would ask to reduce below rounding. For an
    /// affine form (the physics and every boundary term `linear`, e.g. the
    /// heat equation) a step's system is linear: its Krylov solve is taken
    /// to the Newton tolerance (`η = min(η, rtol)`), so that one Newton step
    /// (one Krylov solve, one preconditioner setup) solves it.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `physics` if neither it nor a
    /// boundary term reads `u_t` (a stationary form: there is no time
    /// derivative to discretize), `theta` outside (0, 1].
    pub fn new(problem: P, scheme: Scheme) -> Result<Self> {
        scheme.check()?;
        let kind = problem.form_kind();
        if !kind.transient {
            return Err(Error::arg(
                "physics",
                format!(
                    "`{}` does not read `u_t` (nor does a boundary term): it is stationary, \
                     F(u) = 0 has no time derivative for a time integrator to discretize; write \
                     the time derivative into the physics (an argument `u_t`, e.g. \
                     f0 = u_t − …) or solve it with DirichletProblem::solve_linear / \
                     solve_nonlinear",
                    kind.physics
                ),
            ));
        }
        Ok(TimeIntegrator {
            problem,
            scheme,
            newton: NewtonOptions::default(),
            boundary: None,
            progress: None,
            output: None,
            affine: kind.affine,
            residual_scale: None,
        })
    }

    /// Newton's options of every step (its GMRES's included; the absolute
    /// tolerance is still raised to `1e-12·s`, and for an affine form the
    /// GMRES tolerance lowered to `rtol`, see [`TimeIntegrator::new`]).
    pub fn with_newton(mut self, options: NewtonOptions) -> Self {
        self.newton = options;
        self
    }

    /// Dirichlet values that depend on time: at each step the problem's
    /// fixed dofs take the nodal interpolant of `g(t, x, out)` at the
    /// step's end time (`out` a node's `N_comp` values).
    pub fn with_boundary_values(
        mut self,
        g: impl Fn(f64, &[f64], &mut [f64]) + Sync + 'static,
    ) -> Self {
        self.boundary = Some(Box::new(g));
        self
    }

    /// Calls `progress` after every accepted step.
    pub fn with_progress(
        mut self,
        progress: impl FnMut(&StepReport<'_, P::Vector>) + 'static,
    ) -> Self {
        self.progress = Some(Box::new(progress));
        self
    }

    /// Records the initial value, every accepted step that `series` keeps
    /// and the last one into `series` ([`TimeProblem::record`]; for a
    /// [`DirichletProblem`](crate::solve::DirichletProblem) a
    /// [`TimeSeries`](crate::output::TimeSeries), which keeps every k-th).
    pub fn with_output(mut self, series: P::Series) -> Self {
        self.output = Some(series);
        self
    }

    /// The series given to [`TimeIntegrator::with_output`].
    pub fn output(&self) -> Option<&P::Series> {
        self.output.as_ref()
    }

    /// The problem.
    pub fn problem(&self) -> &P {
        &self.problem
    }

    /// The problem, e.g. to set its constants or auxiliary field between
    /// runs.
    pub fn problem_mut(&mut self) -> &mut P {
        &mut self.problem
    }

    /// Integrates from `u0` (the dofs' values at `t0`, `f64`, on the host
    /// as [`TimeProblem`] says: on MPI ranks each rank's local entries; its
    /// fixed dofs are replaced by the Dirichlet values at `t0`) to `t_end`,
    /// and returns `u(t_end)` where the operator lives, with the run's
    /// statistics.
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] naming `t0`/`t_end` if they are not
    ///   finite or `t_end < t0`, those of [`StepControl::check`] (`dt` ≤ 0
    ///   or not finite, …), `u0` for a wrong length, `dt_min` when an
    ///   adaptive step fails at the smallest step allowed.
    /// * Those of each step's [`TimeProblem::solve_step`] (a Newton failure
    ///   names the step's time), of the output's writes.
    pub fn run(
        &mut self,
        u0: &[f64],
        t0: f64,
        t_end: f64,
        control: StepControl,
    ) -> Result<(P::Vector, RunStats)> {
        for (name, v) in [("t0", t0), ("t_end", t_end)] {
            if !v.is_finite() {
                return Err(Error::arg(name, format!("must be finite, got {v}")));
            }
        }
        if t_end < t0 {
            return Err(Error::arg(
                "t_end",
                format!("{t_end} is before t0 = {t0}: integrate forward in time"),
            ));
        }
        control.check()?;
        if let Some(g) = self.boundary_values(t0) {
            self.problem.set_fixed_values(&g)?;
        }
        let mut history = History {
            t: t0,
            u: self.problem.initial_vector(u0)?,
            prev: None,
        };
        if let Some(series) = &mut self.output {
            self.problem.record(series, 0, t0, &history.u, true)?;
        }
        let mut stats = RunStats::default();
        self.residual_scale = None;
        // the span is covered when what is left is below rounding of t
        let done = |t: f64| t_end - t <= 1e-12 * t_end.abs().max(1.0);
        let mut dt = match control {
            StepControl::Fixed(dt) => dt,
            StepControl::Adaptive(a) => a.dt0,
        };
        while !done(history.t) {
            let h = dt.min(t_end - history.t);
            let attempt = match control {
                StepControl::Fixed(_) => {
                    let s = self.step(&history, h)?;
                    let old = std::mem::replace(&mut history.u, s.u);
                    history.prev = Some((old, h));
                    history.t += h;
                    Attempt {
                        dt: h,
                        estimate: None,
                        rejected: 0,
                        newton: s.newton,
                        linear: s.linear,
                        cycles: s.cycles,
                        residual_norms: s.residual_norms,
                    }
                }
                StepControl::Adaptive(a) => self.adaptive_step(&mut history, &mut dt, &a, t_end)?,
            };
            stats.steps += 1;
            stats.rejected += attempt.rejected;
            stats.newton_iterations += attempt.newton;
            stats.linear_iterations += attempt.linear;
            stats.multigrid_cycles += attempt.cycles;
            stats.step_sizes.push(attempt.dt);
            if let Some(e) = attempt.estimate {
                stats.max_error_estimate = Some(stats.max_error_estimate.unwrap_or(0.0).max(e));
            }
            if let Some(series) = &mut self.output {
                let (step, t, u) = (stats.steps, history.t, &history.u);
                let written = self.problem.record(series, step, t, u, false)?;
                if done(t) && !written {
                    self.problem.record(series, step, t, u, true)?;
                }
            }
            if let Some(progress) = &mut self.progress {
                progress(&StepReport {
                    step: stats.steps,
                    t: history.t,
                    dt: attempt.dt,
                    newton_iterations: attempt.newton,
                    linear_iterations: attempt.linear,
                    multigrid_cycles: attempt.cycles,
                    residual_norms: attempt.residual_norms,
                    error_estimate: attempt.estimate,
                    rejected: attempt.rejected,
                    u: &history.u,
                });
            }
        }
        Ok((history.u, stats))
    }

    /// One accepted adaptive step from `history` (advanced in place), with
    /// the step tried `dt` updated by the controller ([`Adaptive`]).
    fn adaptive_step(
        &mut self,
        history: &mut History<P::Vector>,
        dt: &mut f64,
        a: &Adaptive,
        t_end: f64,
    ) -> Result<Attempt> {
        let (mut rejected, mut newton, mut linear, mut cycles) = (0, 0, 0, 0);
        loop {
            let h = dt.min(t_end - history.t);
            let order = self.scheme.order(history.prev.is_some());
            let big = self.step(history, h)?;
            let half = self.step(history, h / 2.0)?;
            let mid = History {
                t: history.t + h / 2.0,
                u: half.u,
                prev: Some((copy(&history.u)?, h / 2.0)),
            };
            let small = self.step(&mid, h / 2.0)?;
            newton += big.newton + half.newton + small.newton;
            linear += big.linear + half.linear + small.linear;
            cycles += big.cycles + half.cycles + small.cycles;
            let mut diff = copy(&small.u)?;
            diff.axpy(-1.0, &big.u)?;
            let err = diff.norm_inf()? / (2f64.powi(order as i32) - 1.0);
            *dt = a.next_dt(h, err, order);
            if err <= a.tol {
                // the last half step's history: u at t + h/2, step h/2
                history.prev = Some((mid.u, h / 2.0));
                history.u = small.u;
                history.t += h;
                return Ok(Attempt {
                    dt: h,
                    estimate: Some(err),
                    rejected,
                    newton,
                    linear,
                    cycles,
                    residual_norms: small.residual_norms,
                });
            }
            if h <= a.dt_min {
                return Err(Error::arg(
                    "dt_min",
                    format!(
                        "the adaptive step failed at t = {} with the smallest step allowed, {h} \
                         (estimated error {err:e} > tol {:e}): lower dt_min, raise tol, or look \
                         for a blow-up of the solution",
                        history.t, a.tol
                    ),
                ));
            }
            rejected += 1;
        }
    }

    /// The nodal interpolant of the time-dependent Dirichlet values at `t`.
    fn boundary_values(&self, t: f64) -> Option<Vec<f64>> {
        let g = self.boundary.as_ref()?;
        Some(self.problem.interpolate(&|x, out| g(t, x, out)))
    }

    /// One step of size `dt` from `history`.
    fn step(&mut self, history: &History<P::Vector>, dt: f64) -> Result<Stepped<P::Vector>> {
        let c = self
            .scheme
            .coefficients(history.t, dt, history.prev.as_ref().map(|(_, h)| *h));
        // u_t = σ·y + b, b = b_n·u_n + b_prev·u_{n−1}
        let mut b = history.u.zeros_like()?;
        b.axpy(c.b_n, &history.u)?;
        if c.b_prev != 0.0
            && let Some((prev, _)) = &history.prev
        {
            b.axpy(c.b_prev, prev)?;
        }
        // the stage's fixed values: θ·g(t_{n+1}) + (1−θ)·u_n
        if let Some(g) = self.boundary_values(history.t + dt) {
            let values = if c.theta == 1.0 {
                g
            } else {
                let u_n = self.problem.host_values(&history.u)?;
                g.iter()
                    .zip(&u_n)
                    .map(|(g, u)| c.theta * g + (1.0 - c.theta) * u)
                    .collect()
            };
            self.problem.set_fixed_values(&values)?;
        }
        self.problem.set_time(c.t_stage, c.sigma, &b)?;
        let mut options = NewtonOptions {
            atol: self
                .newton
                .atol
                .max(ATOL_OF_SCALE * self.residual_scale.unwrap_or(0.0)),
            ..self.newton
        };
        if self.affine {
            // F(u + δ) = F(u) + J δ: a Krylov solve to rtol ends the Newton solve
            options.linear.tol = options.linear.tol.min(options.rtol);
        }
        let cycles_before = self.problem.preconditioner_cycles();
        let (y, newton) = self
            .problem
            .solve_step(&history.u, &options)
            .map_err(|e| match e {
                Error::InvalidArgument { name, reason } => Error::arg(
                    name,
                    format!(
                        "in the time step from t = {} (Δt = {dt}): {reason}",
                        history.t
                    ),
                ),
                other => other,
            })?;
        let norms = &newton.residual_norms;
        let residual_norms = match (norms.first(), norms.last()) {
            (Some(&first), Some(&last)) => (first, last),
            _ => return Err(Error::internal("a Newton solve without residual norms")),
        };
        if self.residual_scale.is_none() && residual_norms.0 > 0.0 {
            self.residual_scale = Some(residual_norms.0);
        }
        let mut u = y;
        if c.theta != 1.0 {
            // u_{n+1} = (y − (1−θ)·u_n)/θ
            u.axpby(-(1.0 - c.theta) / c.theta, &history.u, 1.0 / c.theta)?;
        }
        Ok(Stepped {
            u,
            newton: newton.iterations,
            linear: newton.linear_iterations.iter().sum(),
            cycles: self
                .problem
                .preconditioner_cycles()
                .checked_sub(cycles_before)
                .ok_or_else(|| {
                    Error::internal("the multigrid's V-cycle count went down during a time step")
                })?,
            residual_norms,
        })
    }
}

/// A copy of `v`, where it lives.
fn copy<V: VectorOps>(v: &V) -> Result<V> {
    let mut c = v.zeros_like()?;
    c.copy_from(v)?;
    Ok(c)
}
