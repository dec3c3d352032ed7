//! Newton–Krylov: Newton's method with matrix-free GMRES; Jacobian-vector
//! products exact (from the physics' automatic derivatives) or from
//! residual differences.

use super::gmres::{GmresOptions, gmres_system};
use super::krylov::{PreconditionedSystem, non_finite_output};
use crate::linalg::LinearOperator;
use crate::vector::{VectorOps, check_finite};
use crate::{Error, Result};

/// A preconditioner for the linear systems of Newton's method that is
/// rebuilt for every Newton step ([`newton_krylov_relinearized`]):
/// `linearize(u)` sets it up for the Jacobian at the iterate `u`, then it
/// applies `z = M(u)⁻¹ r` like any [`LinearOperator`].
pub trait NewtonPreconditioner<V>: LinearOperator<V> {
    /// Rebuilds the preconditioner for the Jacobian at `u`.
    ///
    /// # Errors
    /// Whatever the setup reports.
    fn linearize(&mut self, u: &V) -> Result<()>;
}

/// Options of [`newton_krylov`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonOptions {
    /// Relative tolerance: converged when `‖F(u_k)‖₂ ≤ rtol·‖F(u_0)‖₂`.
    pub rtol: f64,
    /// Absolute tolerance: converged when `‖F(u_k)‖₂ ≤ atol`.
    pub atol: f64,
    /// Largest number of Newton steps.
    pub max_iter: usize,
    /// The linear solver of each step. Its `tol` is the forcing term `η`:
    /// the step `δ` satisfies `‖F + J δ‖ ≤ η ‖F‖`, so the nonlinear
    /// residual falls by about `max(η, C‖F‖)` per step: quadratically
    /// while `C‖F‖ > η`. With finite-difference products `η` must stay
    /// above their relative accuracy (about `√ε_F`, see [`fd_step`]; below
    /// it [`newton_krylov`] refuses), and GMRES checks every step's claim
    /// against the true residual of its operator.
    pub linear: GmresOptions,
    /// Relative rounding error `ε_F` of a residual evaluation: `f64::EPSILON`
    /// for residuals computed in double precision, `f32::EPSILON` in single.
    pub residual_epsilon: f64,
    /// Backtracking line search: halve the step until
    /// `‖F(u + λδ)‖ ≤ (1 − 10⁻⁴ λ)‖F(u)‖` (at most 20 halvings). Off: take
    /// full steps.
    pub line_search: bool,
}

impl Default for NewtonOptions {
    /// `rtol = 1e-10`, `atol = 1e-50`, 50 steps, GMRES with `η = 1e-6`
    /// (restart 200, 10 000 iterations), `ε_F = f64::EPSILON`, line search on.
    fn default() -> Self {
        NewtonOptions {
            rtol: 1e-10,
            atol: 1e-50,
            max_iter: 50,
            linear: GmresOptions {
                tol: 1e-6,
                max_iter: 10_000,
                restart: 200,
            },
            residual_epsilon: f64::EPSILON,
            line_search: true,
        }
    }
}

/// Where Newton–Krylov's Jacobian-vector products come from, with the
/// action itself when they are exact: the argument `jacobian` of
/// [`newton_krylov`] (a [`DirichletProblem`](super::DirichletProblem), which
/// has the action of its operator, is told the choice alone,
/// [`JacobianProducts`]).
pub enum Jacobian<'a, V> {
    /// The exact action `jacobian(u, v, jv)` setting `jv = J(u)·v` (e.g.
    /// [`crate::operator::Operator::jacobian_action`], from the physics'
    /// forward-mode derivatives): one call per product, accurate to
    /// rounding, no step to choose.
    Exact(&'a mut JacobianAction<'a, V>),
    /// The difference quotient `(F(u + h v) − F(u))/h` with `h` from
    /// [`fd_step`]: one residual evaluation per product, relative accuracy
    /// about `√ε_F`; needs no derivatives.
    Differences,
}

impl<V> Jacobian<'_, V> {
    /// Which kind of products these are.
    pub fn products(&self) -> JacobianProducts {
        match self {
            Jacobian::Exact(_) => JacobianProducts::Exact,
            Jacobian::Differences => JacobianProducts::Differences,
        }
    }
}

/// The kind of Jacobian-vector products, without the action: what a
/// [`DirichletProblem::solve_nonlinear`](super::DirichletProblem::solve_nonlinear)
/// is told to use (it has its operator's exact action).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JacobianProducts {
    /// Exact products ([`Jacobian::Exact`]), the default.
    #[default]
    Exact,
    /// Products from residual differences ([`Jacobian::Differences`]).
    Differences,
}

/// A Jacobian action `jacobian(u, v, jv)` setting `jv = J(u)·v`.
pub type JacobianAction<'a, V> = dyn FnMut(&V, &V, &mut V) -> Result<()> + 'a;

/// What [`newton_krylov`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct NewtonStats {
    /// Newton steps taken.
    pub iterations: usize,
    /// `‖F(u_k)‖₂` for `k = 0..=iterations`.
    pub residual_norms: Vec<f64>,
    /// GMRES iterations of each step.
    pub linear_iterations: Vec<usize>,
    /// Step length `λ` of each step (1 for a full Newton step).
    pub step_lengths: Vec<f64>,
    /// Residual evaluations in all (difference products included).
    pub residual_evaluations: usize,
    /// Exact Jacobian-vector products ([`Jacobian::Exact`]).
    pub jacobian_products: usize,
}

/// The differencing parameter of a Jacobian-vector product
/// `J(u) v ≈ (F(u + h v) − F(u))/h`:
///
/// ```text
/// h = √ε_F · (1 + ‖u‖₂) / ‖v‖₂
/// ```
///
/// (Brown and Saad, 1990; the `1 +` keeps `h` sensible at `u = 0`). The
/// error of the difference quotient is a truncation part `O(h‖v‖²‖F''‖)`
/// plus a rounding part `O(ε_F‖F‖/h)`; this `h` makes the perturbation
/// `h v` a relative change of about `√ε_F` in `u` (`√ε ≈ 1.5·10⁻⁸` in
/// double precision), which balances the two, leaving a relative error of
/// order `√ε_F` in `J v`. Returns 0 for `v = 0` (then `J v = 0`).
pub fn fd_step(epsilon: f64, u_norm: f64, v_norm: f64) -> f64 {
    if v_norm == 0.0 {
        0.0
    } else {
        epsilon.sqrt() * (1.0 + u_norm) / v_norm
    }
}

/// Halvings of the step length before the line search gives up (the last
/// length tried is `2⁻²⁰`).
const MAX_HALVINGS: usize = 20;

/// The `solver` of [`Error::NoConvergence`] when the line search fails: what
/// happened and what to do.
pub(crate) const LINE_SEARCH_FAILED: &str = "Newton (at its last step no step length 1, 1/2, …, \
     2⁻²⁰ along the Newton direction decreased ‖F‖: the direction is not one of descent. The \
     linear solve may be too inexact (lower NewtonOptions::linear.tol), the Jacobian products \
     not the derivative of the residual (compare with products from residual differences: \
     Jacobian::Differences, or JacobianProducts::Differences for a DirichletProblem), the \
     initial guess too far from a solution, or ‖F‖ already at its rounding level (raise rtol or \
     atol))";

/// Solves `F(u) = 0` by an inexact Newton method: at `u_k`, GMRES solves
/// `J(u_k) δ = −F(u_k)` to the relative tolerance `opts.linear.tol`,
/// matrix-free: each product `J(u_k) v` is `action(u_k, v, jv)`
/// (`jacobian` = [`Jacobian::Exact`]`(action)`) or the difference quotient
/// `(F(u_k + h v) − F(u_k))/h` of residual evaluations
/// ([`Jacobian::Differences`], [`fd_step`] gives `h`); then
/// `u_{k+1} = u_k + λ δ` with `λ = 1` or (line search) the first of
/// `1, 1/2, 1/4, …` that decreases `‖F‖` sufficiently.
///
/// `residual(u, r)` sets `r = F(u)`; `u` holds the initial guess on entry
/// and the solution on exit. The vectors may live on the host or on a
/// device ([`VectorOps`]); all vector work is done through it, so on device
/// vectors with a device residual no array crosses to the host. The
/// optional `preconditioner` (`z = M⁻¹ r`, e.g. a multigrid cycle for the
/// linearised operator) right-preconditions every GMRES solve. Stops when
/// `‖F(u_k)‖₂ ≤ max(atol, rtol·‖F(u_0)‖₂)`.
///
/// # Errors
/// * [`Error::NonFinite`] if `u` or a residual holds NaN or ±∞ (with its
///   index).
/// * [`Error::NoConvergence`] (`solver: "Newton"`) after `max_iter` steps;
///   also when no step length decreases `‖F‖` (the direction is not one of
///   descent), with a `solver` text that says so and lists the likely
///   causes, and `iterations` counting the failed step.
/// * [`Error::InvalidArgument`] naming `opts` for difference products with
///   a `linear.tol` below their accuracy `√ε_F` (the bound is in the
///   message).
/// * The errors of [`gmres`](super::gmres) for a linear solve, with its `opts` errors
///   (e.g. a `linear.tol` below what it attains) naming `opts` and its
///   operator's (a singular Jacobian) naming `jacobian` (or `residual`
///   for difference products); any error of `residual` or the action.
pub fn newton_krylov<V: VectorOps>(
    residual: impl FnMut(&V, &mut V) -> Result<()>,
    jacobian: Jacobian<'_, V>,
    preconditioner: Option<&mut dyn LinearOperator<V>>,
    u: &mut V,
    opts: &NewtonOptions,
) -> Result<NewtonStats> {
    let pre = match preconditioner {
        Some(p) => Pre::Fixed(p),
        None => Pre::None,
    };
    newton(
        &mut Arguments {
            residual,
            jacobian,
            preconditioner: pre,
        },
        u,
        opts,
    )
}

/// [`newton_krylov`] with a preconditioner rebuilt at every Newton step for
/// the Jacobian at the current iterate: `preconditioner.linearize(u_k)` runs
/// before each step's GMRES solve (e.g. a multigrid cycle set up for
/// `J(u_k)`: new point-block diagonals, eigenvalue estimates, coarse
/// factorization), then it right-preconditions that solve.
///
/// # Errors
/// Those of [`newton_krylov`] and of `preconditioner.linearize`.
pub fn newton_krylov_relinearized<V: VectorOps>(
    residual: impl FnMut(&V, &mut V) -> Result<()>,
    jacobian: Jacobian<'_, V>,
    preconditioner: &mut dyn NewtonPreconditioner<V>,
    u: &mut V,
    opts: &NewtonOptions,
) -> Result<NewtonStats> {
    newton(
        &mut Arguments {
            residual,
            jacobian,
            preconditioner: Pre::Relinearized(preconditioner),
        },
        u,
        opts,
    )
}

/// What Newton's method works with, as one object: the residual, the
/// Jacobian-vector products and the preconditioner of the linear solves.
/// [`newton_krylov`] and [`newton_krylov_relinearized`] make one of their
/// arguments ([`Arguments`]); a [`DirichletProblem`](super::DirichletProblem)
/// implements it once on its operator and preconditioner, which all three
/// use.
pub(crate) trait NewtonSystem<V> {
    /// `r = F(u)`.
    fn residual(&mut self, u: &V, r: &mut V) -> Result<()>;
    /// The kind of Jacobian-vector products.
    fn products(&self) -> JacobianProducts;
    /// `jv = J(u)·v` by the exact action, or `None` for products from
    /// residual differences ([`JacobianProducts::Differences`]).
    fn exact_product(&mut self, u: &V, v: &V, jv: &mut V) -> Option<Result<()>>;
    /// Sets the preconditioner up for the Jacobian at `u`, before the
    /// linear solve of a Newton step (nothing for a fixed one).
    fn linearize(&mut self, u: &V) -> Result<()>;
    /// Whether the linear solves are preconditioned.
    fn is_preconditioned(&self) -> bool;
    /// `z = M⁻¹ r` (`z = r` without a preconditioner).
    fn precondition(&mut self, r: &V, z: &mut V) -> Result<()>;
}

/// The preconditioner of Newton's linear solves.
enum Pre<'a, V> {
    None,
    Fixed(&'a mut dyn LinearOperator<V>),
    Relinearized(&'a mut dyn NewtonPreconditioner<V>),
}

/// The [`NewtonSystem`] of the arguments of [`newton_krylov`] and
/// [`newton_krylov_relinearized`].
struct Arguments<'j, 'p, F, V> {
    residual: F,
    jacobian: Jacobian<'j, V>,
    preconditioner: Pre<'p, V>,
}

impl<F, V> NewtonSystem<V> for Arguments<'_, '_, F, V>
where
    F: FnMut(&V, &mut V) -> Result<()>,
    V: VectorOps,
{
    fn residual(&mut self, u: &V, r: &mut V) -> Result<()> {
        (self.residual)(u, r)
    }

    fn products(&self) -> JacobianProducts {
        self.jacobian.products()
    }

    fn exact_product(&mut self, u: &V, v: &V, jv: &mut V) -> Option<Result<()>> {
        match &mut self.jacobian {
            Jacobian::Exact(action) => Some(action(u, v, jv)),
            Jacobian::Differences => None,
        }
    }

    fn linearize(&mut self, u: &V) -> Result<()> {
        match &mut self.preconditioner {
            Pre::Relinearized(p) => p.linearize(u),
            Pre::None | Pre::Fixed(_) => Ok(()),
        }
    }

    fn is_preconditioned(&self) -> bool {
        !matches!(self.preconditioner, Pre::None)
    }

    fn precondition(&mut self, r: &V, z: &mut V) -> Result<()> {
        match &mut self.preconditioner {
            Pre::None => z.copy_from(r),
            Pre::Fixed(p) => p.apply(r, z),
            Pre::Relinearized(p) => p.apply(r, z),
        }
    }
}

/// The linear system of one Newton step at `u`, `J(u) δ = −F(u)` (with
/// `f = F(u)`): `J(u)·v` exact or the difference quotient
/// `(F(u + h v) − F(u))/h`, preconditioned as the [`NewtonSystem`] says;
/// counts residual evaluations and exact products.
struct Step<'a, S: ?Sized, V> {
    system: &'a mut S,
    u: &'a V,
    f: &'a V,
    u_norm: f64,
    epsilon: f64,
    perturbed: &'a mut V,
    evaluations: &'a mut usize,
    exact_products: &'a mut usize,
}

impl<S, V> PreconditionedSystem<V> for Step<'_, S, V>
where
    S: NewtonSystem<V> + ?Sized,
    V: VectorOps,
{
    fn apply(&mut self, v: &V, jv: &mut V) -> Result<()> {
        if let Some(result) = self.system.exact_product(self.u, v, jv) {
            *self.exact_products += 1;
            return result;
        }
        let h = fd_step(self.epsilon, self.u_norm, v.norm2()?);
        if h == 0.0 {
            return jv.fill(0.0);
        }
        self.perturbed.copy_from(self.u)?;
        self.perturbed.axpy(h, v)?;
        self.system.residual(&*self.perturbed, jv)?;
        *self.evaluations += 1;
        // jv = (F(u + h v) − F(u))/h
        jv.axpby(-1.0 / h, self.f, 1.0 / h)
    }

    fn is_preconditioned(&self) -> bool {
        self.system.is_preconditioned()
    }

    fn precondition(&mut self, r: &V, z: &mut V) -> Result<()> {
        self.system.precondition(r, z)
    }
}

/// Newton–Krylov on `system` (see [`newton_krylov`], whose errors these
/// are).
pub(crate) fn newton<V: VectorOps>(
    system: &mut (impl NewtonSystem<V> + ?Sized),
    u: &mut V,
    opts: &NewtonOptions,
) -> Result<NewtonStats> {
    let products = system.products();
    if products == JacobianProducts::Differences {
        let accuracy = opts.residual_epsilon.sqrt();
        if opts.linear.tol < accuracy {
            return Err(Error::arg(
                "opts",
                format!(
                    "NewtonOptions::linear.tol = {:e} is below the relative accuracy of \
                     Jacobian-vector products from residual differences, about √ε_F = \
                     {accuracy:e} (ε_F = NewtonOptions::residual_epsilon = {:e}): GMRES cannot \
                     reach or check it with them. Choose linear.tol ≥ {accuracy:e}, or exact \
                     products (Jacobian::Exact; JacobianProducts::Exact for a DirichletProblem)",
                    opts.linear.tol, opts.residual_epsilon
                ),
            ));
        }
    }
    check_finite("u", u)?;
    let mut f = u.zeros_like()?;
    system.residual(u, &mut f)?;
    let mut evaluations = 1;
    let mut f_norm = residual_norm(&f)?;
    let target = opts.atol.max(opts.rtol * f_norm);
    let mut stats = NewtonStats {
        iterations: 0,
        residual_norms: vec![f_norm],
        linear_iterations: Vec::new(),
        step_lengths: Vec::new(),
        residual_evaluations: 0,
        jacobian_products: 0,
    };
    let mut rhs = u.zeros_like()?;
    let mut delta = u.zeros_like()?;
    let mut perturbed = u.zeros_like()?;
    let mut f_try = u.zeros_like()?;
    let mut u_try = u.zeros_like()?;
    while f_norm > target {
        if stats.iterations == opts.max_iter {
            return Err(Error::NoConvergence {
                solver: "Newton",
                iterations: stats.iterations,
                residual: f_norm,
                tolerance: target,
            });
        }
        // J δ = −F, with J v exact or ≈ (F(u + h v) − F(u))/h
        rhs.copy_from(&f)?;
        rhs.scale(-1.0)?;
        delta.fill(0.0)?;
        let u_norm = u.norm2()?;
        system.linearize(u)?;
        let mut step = Step {
            system: &mut *system,
            u: &*u,
            f: &f,
            u_norm,
            epsilon: opts.residual_epsilon,
            perturbed: &mut perturbed,
            evaluations: &mut evaluations,
            exact_products: &mut stats.jacobian_products,
        };
        let linear = gmres_system(&mut step, &rhs, &mut delta, &opts.linear)
            .map_err(|e| linear_solve_error(e, stats.iterations + 1, products))?;
        stats.linear_iterations.push(linear.iterations);
        // line search on ‖F‖
        let mut lambda = 1.0;
        let mut halvings = 0;
        loop {
            u_try.copy_from(u)?;
            u_try.axpy(lambda, &delta)?;
            system.residual(&u_try, &mut f_try)?;
            evaluations += 1;
            let try_norm = residual_norm(&f_try)?;
            if !opts.line_search || try_norm <= (1.0 - 1e-4 * lambda) * f_norm {
                std::mem::swap(u, &mut u_try);
                std::mem::swap(&mut f, &mut f_try);
                f_norm = try_norm;
                break;
            }
            halvings += 1;
            if halvings > MAX_HALVINGS {
                return Err(Error::NoConvergence {
                    solver: LINE_SEARCH_FAILED,
                    // the Newton steps tried, the failed one included
                    iterations: stats.iterations + 1,
                    residual: f_norm,
                    tolerance: target,
                });
            }
            lambda *= 0.5;
        }
        stats.step_lengths.push(lambda);
        stats.iterations += 1;
        stats.residual_norms.push(f_norm);
    }
    stats.residual_evaluations = evaluations;
    Ok(stats)
}

/// Says that an argument error of GMRES is about Newton's linear solve of
/// step `step`: its tolerance is `opts.linear.tol`, its operator the
/// Jacobian (from `jacobian`, or from differences of `residual`).
fn linear_solve_error(e: Error, step: usize, products: JacobianProducts) -> Error {
    match e {
        Error::InvalidArgument {
            name: "opts",
            reason,
        } => Error::arg(
            "opts",
            format!("NewtonOptions::linear, in the GMRES solve of Newton step {step}: {reason}"),
        ),
        Error::InvalidArgument { name: "a", reason } => {
            let arg = match products {
                JacobianProducts::Exact => "jacobian",
                JacobianProducts::Differences => "residual",
            };
            Error::arg(
                arg,
                format!("the Jacobian at Newton step {step}, in its GMRES solve: {reason}"),
            )
        }
        other => other,
    }
}

/// `‖F‖₂` of a residual output, or the non-finite entry that spoils it.
fn residual_norm<V: VectorOps>(f: &V) -> Result<f64> {
    let norm = f.norm2()?;
    if norm.is_finite() {
        Ok(norm)
    } else {
        Err(non_finite_output(
            "residual",
            "F(u) (residual output)",
            f,
            "‖F(u)‖",
            norm,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `F(u)_i = u_i³ + Σ_j A_ij u_j − b_i` with `A = tridiag(−1, 3, −1)`.
    fn cubic(b: Vec<f64>) -> impl FnMut(&Vec<f64>, &mut Vec<f64>) -> Result<()> {
        move |u: &Vec<f64>, r: &mut Vec<f64>| {
            let n = u.len();
            for i in 0..n {
                let left = if i > 0 { u[i - 1] } else { 0.0 };
                let right = if i + 1 < n { u[i + 1] } else { 0.0 };
                r[i] = u[i].powi(3) + 3.0 * u[i] - left - right - b[i];
            }
            Ok(())
        }
    }

    /// The exact Jacobian action of [`cubic`]: `J v = 3u²v + A v`.
    #[allow(clippy::ptr_arg)] // an operator on `Vec<f64>` vectors takes `&Vec<f64>`
    fn cubic_jacobian(u: &Vec<f64>, v: &Vec<f64>, jv: &mut Vec<f64>) -> Result<()> {
        let n = u.len();
        for i in 0..n {
            let left = if i > 0 { v[i - 1] } else { 0.0 };
            let right = if i + 1 < n { v[i + 1] } else { 0.0 };
            jv[i] = 3.0 * u[i] * u[i] * v[i] + 3.0 * v[i] - left - right;
        }
        Ok(())
    }

    #[test]
    fn converges_quadratically_on_a_cubic_system() {
        for products in [JacobianProducts::Exact, JacobianProducts::Differences] {
            check_cubic(products);
        }
    }

    fn check_cubic(products: JacobianProducts) -> NewtonStats {
        let n = 30;
        let u_exact: Vec<f64> = (0..n).map(|i| 1.0 + (i as f64 * 0.2).sin()).collect();
        let mut b = vec![0.0; n];
        cubic(vec![0.0; n])(&u_exact, &mut b).unwrap();
        let mut u = vec![0.0; n];
        let opts = NewtonOptions {
            rtol: 1e-12,
            linear: GmresOptions {
                // difference products: relative error ≈ 2·10⁻⁷ here (≈ 17 √ε)
                tol: match products {
                    JacobianProducts::Exact => 1e-9,
                    JacobianProducts::Differences => 1e-6,
                },
                ..GmresOptions::default()
            },
            ..NewtonOptions::default()
        };
        let mut action = cubic_jacobian;
        let jacobian = match products {
            JacobianProducts::Exact => Jacobian::Exact(&mut action),
            JacobianProducts::Differences => Jacobian::Differences,
        };
        let stats = newton_krylov(cubic(b), jacobian, None, &mut u, &opts).unwrap();
        let r = &stats.residual_norms;
        assert!(r.last().unwrap() <= &(1e-12 * r[0]), "{stats:?}");
        assert!(stats.iterations <= 10, "{stats:?}");
        // quadratic: once ‖F‖ is small, the next one is O(‖F‖²)
        for k in 1..r.len() - 1 {
            if r[k] < 1e-1 && r[k] > 1e-6 {
                assert!(r[k + 1] <= 10.0 * r[k] * r[k], "step {k}: {r:?}");
            }
        }
        for (a, b) in u.iter().zip(&u_exact) {
            assert!((a - b).abs() < 1e-9);
        }
        match products {
            // one residual per step and per line-search trial, one product per GMRES iteration
            JacobianProducts::Exact => {
                let halvings: usize = stats
                    .step_lengths
                    .iter()
                    .map(|l| (-l.log2()).round() as usize)
                    .sum();
                assert_eq!(
                    stats.residual_evaluations,
                    1 + stats.iterations + halvings,
                    "{stats:?}"
                );
                let gmres: usize = stats.linear_iterations.iter().sum();
                assert!(stats.jacobian_products >= gmres, "{stats:?}");
            }
            JacobianProducts::Differences => {
                assert!(
                    stats.residual_evaluations > 2 * stats.iterations,
                    "{stats:?}"
                );
                assert_eq!(stats.jacobian_products, 0);
            }
        }
        stats
    }

    /// A line search that finds no decrease says why and what to do, and
    /// counts the failed step (it said "did not converge in 0 iterations").
    /// Here the Jacobian products have the wrong sign: the Newton direction
    /// is one of ascent.
    #[test]
    fn a_failed_line_search_says_what_to_do() {
        let n = 10;
        let mut wrong_sign = |u: &Vec<f64>, v: &Vec<f64>, jv: &mut Vec<f64>| -> Result<()> {
            cubic_jacobian(u, v, jv)?;
            jv.iter_mut().for_each(|x| *x = -*x);
            Ok(())
        };
        let e = newton_krylov(
            cubic(vec![1.0; n]),
            Jacobian::Exact(&mut wrong_sign),
            None,
            &mut vec![0.0; n],
            &NewtonOptions::default(),
        )
        .unwrap_err();
        match &e {
            Error::NoConvergence {
                solver, iterations, ..
            } => {
                assert_eq!(*solver, LINE_SEARCH_FAILED);
                assert_eq!(*iterations, 1);
            }
            other => panic!("{other}"),
        }
        let text = e.to_string();
        assert!(
            text.starts_with("Newton (at its last step no step length 1, 1/2, …, 2⁻²⁰")
                && text.contains("lower NewtonOptions::linear.tol")
                && text.contains("compare with products from residual differences")
                && text.contains("did not converge in 1 iterations"),
            "{text}"
        );
    }

    /// With difference products a linear tolerance below their accuracy
    /// `√ε_F` is refused before any work, with the bound (in f64 and with
    /// the `ε_F` of f32 residuals), and one at the bound is accepted.
    #[test]
    fn a_linear_tolerance_below_the_difference_accuracy_is_refused() {
        for (epsilon, tol, bound) in [
            (f64::EPSILON, 1e-9, "1.4901161193847656e-8"),
            (f64::from(f32::EPSILON), 1e-6, "3.4526698300124393e-4"),
        ] {
            let opts = NewtonOptions {
                linear: GmresOptions {
                    tol,
                    ..GmresOptions::default()
                },
                residual_epsilon: epsilon,
                ..NewtonOptions::default()
            };
            let mut u = vec![0.0; 5];
            let e = newton_krylov(
                cubic(vec![1.0; 5]),
                Jacobian::Differences,
                None,
                &mut u,
                &opts,
            )
            .unwrap_err();
            let text = e.to_string();
            assert!(
                matches!(e, Error::InvalidArgument { name: "opts", .. }),
                "{text}"
            );
            assert!(
                text.contains(&format!(
                    "NewtonOptions::linear.tol = {tol:e} is below the relative accuracy of \
                     Jacobian-vector products from residual differences, about √ε_F = {bound}"
                )) && text.contains(&format!("Choose linear.tol ≥ {bound}")),
                "{text}"
            );
            // nothing was done: u is the initial guess
            assert_eq!(u, vec![0.0; 5]);
            let at_bound = NewtonOptions {
                linear: GmresOptions {
                    tol: epsilon.sqrt(),
                    ..opts.linear
                },
                ..opts
            };
            newton_krylov(
                cubic(vec![1.0; 5]),
                Jacobian::Differences,
                None,
                &mut u,
                &at_bound,
            )
            .unwrap();
        }
    }

    /// A tolerance GMRES cannot attain in a Newton step is reported as
    /// Newton's `opts.linear.tol`, with the step.
    #[test]
    fn a_linear_tolerance_out_of_reach_names_the_newton_option() {
        let opts = NewtonOptions {
            linear: GmresOptions {
                tol: 1e-20,
                ..GmresOptions::default()
            },
            ..NewtonOptions::default()
        };
        let mut action = cubic_jacobian;
        let e = newton_krylov(
            cubic(vec![1.0; 5]),
            Jacobian::Exact(&mut action),
            None,
            &mut vec![0.0; 5],
            &opts,
        )
        .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(e, Error::InvalidArgument { name: "opts", .. }),
            "{text}"
        );
        assert!(
            text.contains(
                "NewtonOptions::linear, in the GMRES solve of Newton step 1: GmresOptions::tol = \
                 1e-20 is below the machine epsilon"
            ),
            "{text}"
        );
    }

    #[test]
    fn fd_step_scales_with_u_and_v() {
        let h = fd_step(f64::EPSILON, 0.0, 1.0);
        assert!((h - f64::EPSILON.sqrt()).abs() < 1e-24);
        assert_eq!(fd_step(f64::EPSILON, 3.0, 2.0), 2.0 * f64::EPSILON.sqrt());
        assert_eq!(fd_step(f64::EPSILON, 3.0, 0.0), 0.0);
    }

    #[test]
    fn reports_failure() {
        // F(u) = u² + 1 has no real root
        let f = |u: &Vec<f64>, r: &mut Vec<f64>| {
            r[0] = u[0] * u[0] + 1.0;
            Ok(())
        };
        let mut u = vec![0.5];
        let e = newton_krylov(
            f,
            Jacobian::Differences,
            None,
            &mut u,
            &NewtonOptions {
                max_iter: 5,
                ..NewtonOptions::default()
            },
        )
        .unwrap_err();
        assert!(matches!(e, Error::NoConvergence { .. }), "{e}");
        let bad = |_: &Vec<f64>, r: &mut Vec<f64>| {
            r[0] = f64::NAN;
            Ok(())
        };
        let e = newton_krylov(
            bad,
            Jacobian::Differences,
            None,
            &mut vec![0.0],
            &NewtonOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(e, Error::NonFinite { index: 0, .. }), "{e}");
        assert!(e.to_string().contains("F(u) (residual output)"), "{e}");
    }
}
