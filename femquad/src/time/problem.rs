//! [`TimeProblem`]: what a [`TimeIntegrator`](super::TimeIntegrator) needs
//! from the problem it advances — implemented by a serial
//! [`DirichletProblem`] here, and by a problem distributed over MPI ranks
//! in `femquad-mpi` — so that one integrator serves both.

use crate::backend::Vector;
use crate::form::Form;
use crate::output::TimeSeries;
use crate::solve::{DirichletProblem, JacobianProducts, NewtonOptions, NewtonStats};
use crate::vector::VectorOps;
use crate::{Real, Result};

/// What the integrator learns of a problem's form: whether its physics, or
/// one of its boundary terms, reads `u_t` (else there is nothing to
/// integrate in time), and whether the form is affine in `(u, u_t)` (then a
/// step's system `F(t, y, σ·y + b) = 0` is linear: one Newton step with its
/// Krylov solve taken to Newton's tolerance solves it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormKind {
    /// The name of the form's physics (for messages).
    pub physics: String,
    /// The physics or a boundary term reads `u_t`.
    pub transient: bool,
    /// The physics and every boundary term are `linear` (affine).
    pub affine: bool,
}

impl FormKind {
    /// The kind of `form`.
    pub fn of<R: Real>(form: &Form<R>) -> Self {
        let info = form.physics().info();
        let boundary = form.boundary().iter().map(|t| t.physics().info());
        FormKind {
            physics: info.name.to_string(),
            transient: info.is_transient() || boundary.clone().any(|b| b.is_transient()),
            affine: info.linear && boundary.clone().all(|b| b.linear),
        }
    }
}

/// A transient problem `F(t, u, u_t) = 0` with Dirichlet conditions, as an
/// implicit time integrator advances it. With `D` the fixed dofs and `g`
/// their values, each step binds a time state `(t, σ, b)` and solves for
/// the stage value `y`
///
/// ```text
/// G(y)_f = F(t, y, σ·y + b)_f = 0,   G(y)_D = y_D − g_D
/// ```
///
/// by Newton–Krylov with the exact step Jacobian
/// `J_G = σ·∂F/∂u_t + ∂F/∂u` on the free rows (the identity's on `D`), its
/// preconditioner set up again at every Newton iterate.
///
/// Values "on the host" (`interpolate`, `set_fixed_values`,
/// `initial_vector`, `host_values`) are the problem's own dofs in its own
/// order, as `f64`: every dof of a serial problem; on MPI ranks each rank's
/// local entries (owned, then ghosts). An implementation over several
/// processes makes every method collective and its errors the same on
/// every process (the integrator calls them in the same order
/// everywhere).
pub trait TimeProblem {
    /// The vectors of the solution (where the operator lives).
    type Vector: VectorOps;
    /// What [`TimeIntegrator::with_output`](super::TimeIntegrator::with_output)
    /// records into.
    type Series;

    /// The kind of the problem's form.
    fn form_kind(&self) -> FormKind;

    /// The nodal interpolant of `g(x, out)` (`out` a node's `N_comp`
    /// values), on the host.
    fn interpolate(&self, g: &(dyn Fn(&[f64], &mut [f64]) + Sync)) -> Vec<f64>;

    /// Replaces `g`, the values of the fixed dofs, by `values` (on the
    /// host; the free entries are ignored).
    ///
    /// # Errors
    /// A wrong length or a non-finite fixed value, named.
    fn set_fixed_values(&mut self, values: &[f64]) -> Result<()>;

    /// The vector of `u0` (on the host) with its fixed entries replaced by
    /// `g`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `u0` for a wrong length.
    fn initial_vector(&self, u0: &[f64]) -> Result<Self::Vector>;

    /// `u`'s values on the host, widened to `f64`.
    ///
    /// # Errors
    /// Device errors.
    fn host_values(&self, u: &Self::Vector) -> Result<Vec<f64>>;

    /// Binds the time state of the next solves: `F` is evaluated at
    /// `(t, u, σ·u + b)`, its Jacobian is `σ·∂F/∂u_t + ∂F/∂u` (on the
    /// preconditioner's levels too).
    ///
    /// # Errors
    /// Non-finite `t`, `σ` or `b`, named.
    fn set_time(&mut self, t: f64, sigma: f64, b: &Self::Vector) -> Result<()>;

    /// Solves `G(y) = 0` (see the trait) by Newton–Krylov with `options`
    /// from `guess` (its fixed entries replaced by `g`).
    ///
    /// # Errors
    /// Those of [`crate::solve::newton_krylov`], the Jacobian's and
    /// residual's naming `physics`.
    fn solve_step(
        &mut self,
        guess: &Self::Vector,
        options: &NewtonOptions,
    ) -> Result<(Self::Vector, NewtonStats)>;

    /// The multigrid V-cycles the preconditioner has applied so far (0
    /// with another preconditioner).
    fn preconditioner_cycles(&self) -> usize;

    /// Writes `u` at step `step` and time `t` into `series`: every step the
    /// series keeps, or (`always`) this one; returns whether it wrote.
    ///
    /// # Errors
    /// The series' write errors.
    fn record(
        &self,
        series: &mut Self::Series,
        step: usize,
        t: f64,
        u: &Self::Vector,
        always: bool,
    ) -> Result<bool>;
}

/// The serial problem: its operator's form, its space's interpolant, its
/// own [`DirichletProblem::solve_nonlinear`] with exact Jacobian products,
/// its preconditioner (multigrid by default), a ParaView [`TimeSeries`].
impl<R: Real> TimeProblem for DirichletProblem<R> {
    type Vector = Vector<R>;
    type Series = TimeSeries;

    fn form_kind(&self) -> FormKind {
        FormKind::of(self.operator().form())
    }

    fn interpolate(&self, g: &(dyn Fn(&[f64], &mut [f64]) + Sync)) -> Vec<f64> {
        self.space().interpolate(g)
    }

    fn set_fixed_values(&mut self, values: &[f64]) -> Result<()> {
        DirichletProblem::set_fixed_values(self, values)
    }

    fn initial_vector(&self, u0: &[f64]) -> Result<Vector<R>> {
        crate::error::check_len("u0", u0, self.space().n_dofs())?;
        let mut start: Vec<R> = u0.iter().map(|&v| R::from_f64(v)).collect();
        for &d in self.fixed_dofs().dofs() {
            start[d as usize] = R::from_f64(self.fixed_values()[d as usize]);
        }
        self.operator().vector_from(&start)
    }

    fn host_values(&self, u: &Vector<R>) -> Result<Vec<f64>> {
        Ok(u.to_host()?.iter().map(|x| x.to_f64()).collect())
    }

    fn set_time(&mut self, t: f64, sigma: f64, b: &Vector<R>) -> Result<()> {
        DirichletProblem::set_time(self, t, sigma, b)
    }

    fn solve_step(
        &mut self,
        guess: &Vector<R>,
        options: &NewtonOptions,
    ) -> Result<(Vector<R>, NewtonStats)> {
        self.solve_nonlinear(Some(guess), JacobianProducts::Exact, options)
    }

    fn preconditioner_cycles(&self) -> usize {
        self.multigrid().map_or(0, |m| m.cycles())
    }

    fn record(
        &self,
        series: &mut TimeSeries,
        step: usize,
        t: f64,
        u: &Vector<R>,
        always: bool,
    ) -> Result<bool> {
        let values = self.host_values(u)?;
        if always {
            series.record_always(step, t, &values)?;
            Ok(true)
        } else {
            series.record(step, t, &values)
        }
    }
}
