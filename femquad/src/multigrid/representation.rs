//! How a smoothed multigrid level applies its operator — matrix-free or as
//! an assembled matrix — chosen by size or by measurement
//! ([`SmallLevels`]), and what was chosen ([`LevelRepresentation`]).

use std::time::Instant;

use crate::backend::{Matrix, Vector};
use crate::operator::Operator;
use crate::vector::VectorOps;
use crate::{Real, Result};

/// Applies of each representation timed by [`SmallLevels::Measured`] (after
/// one untimed apply); the median is kept.
pub const MEASURED_APPLIES: usize = 5;

/// What a smoothed level with at most
/// [`MultigridOptions::assembled_max_dofs`](super::MultigridOptions::assembled_max_dofs)
/// dofs does with its operator (larger levels are always matrix-free, so
/// `assembled_max_dofs = 0` makes every level matrix-free).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SmallLevels {
    /// Assembled: one SpMV per apply (the default).
    #[default]
    Assembled,
    /// Measured at the first setup: the Jacobian is assembled, then one
    /// apply of each representation (`J(u)·x` matrix-free, `A x` by SpMV)
    /// is timed — wall clock from the call to the end of its device work,
    /// after one untimed apply, median of [`MEASURED_APPLIES`] — and the
    /// faster is kept for this and every later setup (a matrix-free level
    /// drops its matrix). Both times are reported
    /// ([`LevelRepresentation::measured`],
    /// [`super::OperatorLevels::representations`]).
    Measured,
}

/// How one smoothed level of [`super::OperatorLevels`] applies its
/// operator, decided at the first setup.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelRepresentation {
    /// The level (0 the coarsest).
    pub level: usize,
    /// Its dofs.
    pub dofs: usize,
    /// Whether it applies an assembled matrix (else matrix-free).
    pub assembled: bool,
    /// With [`SmallLevels::Measured`]: the seconds of one apply,
    /// `(matrix-free, assembled)` (medians); `None` where the choice was
    /// made by size alone.
    pub measured: Option<(f64, f64)>,
}

/// The median seconds of [`MEASURED_APPLIES`] calls of `apply(y)`, each
/// timed until the device work on `y` is done, after one untimed call.
fn median_seconds<R: Real>(
    y: &mut Vector<R>,
    mut apply: impl FnMut(&mut Vector<R>) -> Result<()>,
) -> Result<f64> {
    apply(y)?;
    y.finish()?;
    let mut times = Vec::with_capacity(MEASURED_APPLIES);
    for _ in 0..MEASURED_APPLIES {
        let start = Instant::now();
        apply(y)?;
        y.finish()?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    Ok(times[MEASURED_APPLIES / 2])
}

/// `(matrix-free, assembled)`: the median seconds of `J(u)·x` by `op` at
/// `state` and of `A x` by `matrix`, `x` all ones.
///
/// # Errors
/// Those of the applies.
pub(super) fn time_representations<R: Real>(
    op: &mut Operator<R>,
    state: &Vector<R>,
    matrix: &Matrix<R>,
) -> Result<(f64, f64)> {
    let mut x = state.zeros_like()?;
    x.fill(1.0)?;
    let mut y = state.zeros_like()?;
    let matrix_free = median_seconds(&mut y, |y| op.jacobian_action(state, &x, y))?;
    let assembled = median_seconds(&mut y, |y| matrix.apply(&x, y))?;
    Ok((matrix_free, assembled))
}
