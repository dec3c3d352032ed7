//! The time of one conjugate-gradient iteration with the global operator,
//! everything device-resident.
//!
//! # Method
//! The problem is the case's own operator with homogeneous Dirichlet
//! conditions on every boundary dof: `A v = F(v)` on the free dofs and
//! `(A v)_D = v_D` — the suite's physics (Poisson with or without a
//! coefficient, Lamé) are linear and have no source term, so `F(v)` *is*
//! the matrix-vector product, and `A` is symmetric positive definite. The
//! right-hand side is random in `[−1, 1)` with `b_D = 0`, the initial guess
//! 0. The library's [`cg`] (unpreconditioned) runs on
//! [`DeviceVector`]s with the operator (made in [`crate::bp`])
//!
//! ```text
//! apply(v, Av):  Av = F(v)  (the bound form's residual, the BP row's assembly and configuration)
//!                Av_D = v_D (DeviceVector::copy_at over the boundary dofs)
//! ```
//!
//! and a tolerance it cannot reach in so few iterations (the machine
//! epsilon of the precision, the smallest `cg` accepts), for
//! `warmup + iterations + 1` iterations (it ends with `NoConvergence`, as
//! intended). The operator
//! records the host's wall clock when it is called; CG calls it once per
//! iteration, and between two calls lies exactly one iteration: the
//! operator application, the reduction `p·Ap` (read back), two `axpy`, the
//! reduction `r·r` (read back) and the `axpby` of the new direction (which
//! the next call's time includes, as the previous call's did). The times of
//! iterations `warmup + 1 … warmup + iterations` are returned; the row
//! reports their median. Wall clock, not profiling events: an iteration's
//! cost includes the two scalar round trips to the host and the launch
//! latencies between its kernels, which is what a solve pays.
//!
//! A solver for an affine physics with a source
//! (`DirichletProblem::solve_linear`) takes `A v` as a residual difference
//! and costs one more reduction and three more vector updates per
//! iteration; this is the cost of CG with the operator itself.

use std::time::Instant;

use femquad::opencl::DeviceVector;
use femquad::solve::cg;
use femquad::{Error, Real};

use crate::BenchError;

/// Runs CG as described in the [module documentation](self) with the
/// operator `apply(v, Av)` (which must set `Av = A v` including
/// `(A v)_D = v_D`), the right-hand side `rhs` (zero on the Dirichlet dofs),
/// and returns the wall-clock seconds of `iterations` iterations after
/// `warmup`.
///
/// # Errors
/// Those of `apply` and the vector operations, of [`cg`] other than not
/// converging (e.g. an operator that is not positive definite), and
/// [`BenchError::Usage`] if CG converged before the iterations to time (a
/// problem too small for the count asked).
pub fn cg_iteration_times<R: Real>(
    mut apply: impl FnMut(&DeviceVector<R>, &mut DeviceVector<R>) -> femquad::Result<()>,
    rhs: &DeviceVector<R>,
    warmup: usize,
    iterations: usize,
) -> Result<Vec<f64>, BenchError> {
    let max_iter = warmup + iterations + 1;
    let mut x = rhs.zeros_like()?;
    // calls[0]: r₀ = b − A x₀; calls[k]: the operator of iteration k
    let mut calls: Vec<Instant> = Vec::with_capacity(max_iter + 1);
    let result = {
        let mut timed = |v: &DeviceVector<R>, av: &mut DeviceVector<R>| -> femquad::Result<()> {
            calls.push(Instant::now());
            apply(v, av)
        };
        cg(&mut timed, None, rhs, &mut x, R::EPSILON.to_f64(), max_iter)
    };
    match result {
        Err(Error::NoConvergence { .. }) => {}
        Ok(stats) => {
            return Err(BenchError::Usage(format!(
                "CG converged in {} iterations, before the {max_iter} to time \
                 ({warmup} warm-up + {iterations} + 1): use a larger mesh or fewer \
                 --cg-iterations",
                stats.iterations
            )));
        }
        Err(e) => return Err(e.into()),
    }
    let times = iteration_times(&calls, warmup, iterations);
    if times.len() < iterations {
        return Err(BenchError::Usage(format!(
            "CG called its operator {} times, expected {}",
            calls.len(),
            max_iter + 1
        )));
    }
    Ok(times)
}

/// The seconds between consecutive operator calls of iterations
/// `warmup + 1 … warmup + iterations` (`calls[0]` is the initial residual's).
pub fn iteration_times(calls: &[Instant], warmup: usize, iterations: usize) -> Vec<f64> {
    calls
        .windows(2)
        .skip(1 + warmup)
        .take(iterations)
        .map(|w| (w[1] - w[0]).as_secs_f64())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn intervals_skip_the_start_and_the_warmup() {
        let t0 = Instant::now();
        // call k at k² ms: intervals (2k+1) ms
        let calls: Vec<Instant> = (0..8u64)
            .map(|k| t0 + Duration::from_millis(k * k))
            .collect();
        let ms: Vec<f64> = iteration_times(&calls, 2, 3)
            .iter()
            .map(|s| (s * 1e3).round())
            .collect();
        // iterations 3, 4, 5: calls 3→4, 4→5, 5→6
        assert_eq!(ms, vec![7.0, 9.0, 11.0]);
        assert_eq!(iteration_times(&calls, 5, 10).len(), 1);
    }
}
