//! The autotuner's measurement of one kernel ([`time_runs`]): device time
//! per evaluation from the profiling events of its commands.

use crate::opencl::operator::OpenClIntegrator;
use crate::{Real, Result};

/// Runs `evaluate` `n` times on `integ`, each waited for, and returns each
/// one's device time in nanoseconds ([`crate::opencl::Run::wait_ns`]: first command's
/// start to last command's end; 0 where the device reports none). The
/// measurement of the autotuner and of the benchmarks.
///
/// # Errors
/// Those of `evaluate`; the device's while waiting.
pub fn time_runs<R: Real>(
    integ: &mut OpenClIntegrator<R>,
    n: usize,
    mut evaluate: impl FnMut(&mut OpenClIntegrator<R>) -> Result<()>,
) -> Result<Vec<u64>> {
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        evaluate(integ)?;
        times.push(integ.last_run().wait_ns(integ.device())?.unwrap_or(0));
    }
    Ok(times)
}
