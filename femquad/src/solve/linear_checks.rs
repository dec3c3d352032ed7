//! What [`DirichletProblem::solve_linear`](super::DirichletProblem::solve_linear)
//! checks before conjugate gradients — an affine physics, a symmetric and
//! positive operator — and how it explains a failure of CG afterwards: in
//! terms of what the user did (the physics and its problem), not of the
//! solver's internals.

use super::cg::{OPERATOR_ADVICE, PRECONDITIONER_ADVICE};
use super::krylov::machine_epsilon;
use crate::backend::{IndexSet, MultigridKernels, Vector};
use crate::linalg::LinearOperator;
use crate::multigrid::fill_random;
use crate::physics::PointwiseInfo;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// How much larger than `ε·‖x‖‖Ay‖` the asymmetry `|x·Ay − y·Ax|` of random
/// vectors may be before the operator counts as not symmetric. For a
/// symmetric operator the two products differ only by the rounding of
/// `A x`, `A y` (at most about `ε·‖|A||y|‖` per product, a few times
/// `ε·‖Ay‖` for a random `y`) and of the reductions; an advection term with
/// a cell Péclet number `Pe` makes them differ by about `Pe` relatively.
const SYMMETRY_SLACK: f64 = 1e3;

/// The seed of the random probe vectors (fixed: every solve checks the
/// same way).
const PROBE_SEED: u64 = 0x5eed_11ea;

/// What solve_linear's conjugate gradients needs of its operator, and what
/// to do otherwise: the end of every explanation below.
const CG_NEEDS: &str = "solve_linear solves by conjugate gradients, which needs the operator — \
     the Jacobian on the free dofs — to be symmetric positive definite. For a non-symmetric \
     (e.g. advection) or indefinite problem use solve_nonlinear (Newton with GMRES: one Newton \
     step for an affine physics when NewtonOptions::linear.tol ≤ rtol), with \
     Preconditioner::Jacobi or None if multigrid fails too; \
     for a singular one (only Neumann conditions, or elasticity without enough fixed dofs to \
     stop rigid motions) fix more dofs";

/// Refuses a physics that `#[pointwise]` could not prove affine: for it
/// the Jacobian at the Dirichlet values is one linearization, and solving
/// with it is not solving `F(u) = 0`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `physics` if `info.linear` is false.
pub(crate) fn require_affine(info: &PointwiseInfo) -> Result<()> {
    if info.linear {
        return Ok(());
    }
    Err(Error::arg(
        "physics",
        format!(
            "`{}` is not (provably) affine in (u, ∇u): its PointwiseInfo::linear is false \
             (#[pointwise] could not show that f0 and f1 are affine). solve_linear solves one \
             linear system, with the Jacobian at the Dirichlet values; for a nonlinear F its \
             solution does not solve F(u) = 0. Use solve_nonlinear (Newton–Krylov), which \
             solves nonlinear and affine physics alike",
            info.name
        ),
    ))
}

/// Builds, into the device's program cache, the kernel with which
/// [`check_symmetric_positive`] fills its random vectors on `like`'s
/// device ([`fill_random`]); nothing for host vectors. For
/// [`DirichletProblem::prepare`](super::DirichletProblem::prepare): a solve
/// then builds no kernel.
///
/// # Errors
/// Those of [`MultigridKernels::like`].
pub(crate) fn prepare_probe<R: Real>(like: &Vector<R>) -> Result<()> {
    MultigridKernels::like(like, 1)?;
    Ok(())
}

/// Checks the operator `a` of a linear solve on random vectors `x`, `y`
/// (zero on the fixed dofs `fixed`, where `a` is the identity):
///
/// ```text
/// symmetric:  |x·Ay − y·Ax| ≤ 10³ ε (‖x‖‖Ay‖ + ‖y‖‖Ax‖)/2     (ε of the vectors' precision)
/// positive:   x·Ax > 0  and  y·Ay > 0
/// ```
///
/// A symmetric operator passes whatever its rounding; a non-symmetric one
/// (advection–diffusion) fails unless its skew part is below about
/// `10³ ε` of it; an indefinite one fails when a random vector finds a
/// direction of non-positive energy (CG reports the others). Costs two
/// applications of `a` and four reductions; on device vectors no array
/// crosses to the host.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `physics` (called `name`) if a check
/// fails, with the numbers and what to do; those of `a`.
pub(crate) fn check_symmetric_positive<R: Real>(
    name: &str,
    a: &mut (impl LinearOperator<Vector<R>> + ?Sized),
    like: &Vector<R>,
    fixed: &IndexSet,
) -> Result<()> {
    let mut x = like.zeros_like()?;
    let mut y = like.zeros_like()?;
    fill_random(&mut x, PROBE_SEED, None)?;
    fill_random(&mut y, PROBE_SEED.wrapping_add(1), None)?;
    x.set_at(fixed, 0.0)?;
    y.set_at(fixed, 0.0)?;
    let (mut ax, mut ay) = (like.zeros_like()?, like.zeros_like()?);
    a.apply(&x, &mut ax)?;
    a.apply(&y, &mut ay)?;
    // one value per vector (the contract of `dots`)
    let d = x.dots(&[&ay, &ax, &x])?;
    let (x_ay, x_ax, xx) = (d[0], d[1], d[2]);
    let d = y.dots(&[&ax, &ay, &y])?;
    let (y_ax, y_ay, yy) = (d[0], d[1], d[2]);
    let (ax_ax, ay_ay) = (ax.dot(&ax)?, ay.dot(&ay)?);
    if xx == 0.0 || yy == 0.0 {
        // every dof is fixed: nothing to solve for, nothing to check
        return Ok(());
    }
    let scale = 0.5 * ((xx * ay_ay).sqrt() + (yy * ax_ax).sqrt());
    let allowed = SYMMETRY_SLACK * machine_epsilon(like.precision());
    let asymmetry = (x_ay - y_ax).abs() / scale;
    // a NaN (a non-finite operator output) fails the checks
    if asymmetry.is_nan() || asymmetry > allowed {
        return Err(Error::arg(
            "physics",
            format!(
                "the Jacobian of `{name}` on the free dofs is not symmetric: for random vectors \
                 x and y, x·Ay = {x_ay:e} but y·Ax = {y_ax:e}, a relative difference of \
                 {asymmetry:e} where rounding allows {allowed:e}. {CG_NEEDS}"
            ),
        ));
    }
    for (energy, v) in [(x_ax, "x"), (y_ay, "y")] {
        if energy.is_nan() || energy <= 0.0 {
            return Err(Error::arg(
                "physics",
                format!(
                    "the Jacobian of `{name}` on the free dofs is not positive definite: \
                     {v}·A{v} = {energy:e} for a random {v} (check the signs: −Δu is f1 = ∇u, \
                     a source f is f0 = −f). {CG_NEEDS}"
                ),
            ));
        }
    }
    Ok(())
}

/// A failure of conjugate gradients or of its preconditioner's setup in
/// solve_linear, explained: CG's operator `a` and `preconditioner` (not
/// positive definite) are the Jacobian of the physics `name`, and what to do
/// follows. Other errors pass unchanged.
pub(crate) fn explain_cg_failure(e: Error, name: &str) -> Error {
    match e {
        Error::InvalidArgument {
            name: "a" | "preconditioner",
            reason,
        } => {
            // what CG found, without its generic advice (CG_NEEDS says it
            // for this problem)
            let found = reason
                .strip_suffix(OPERATOR_ADVICE)
                .or_else(|| reason.strip_suffix(PRECONDITIONER_ADVICE))
                .unwrap_or(&reason);
            Error::arg(
                "physics",
                format!("conjugate gradients on the Jacobian of `{name}`: {found}. {CG_NEEDS}"),
            )
        }
        other => other,
    }
}
