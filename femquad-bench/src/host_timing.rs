//! Host-clock timing of femquad calls for the crate's small binaries
//! (`p1_floor`, `spmv_numbering`, `ncu_capture`): batches of calls ended by
//! a finish, so that a call's launch cost is included, as a user sees it.

use std::time::Instant;

use femquad::backend::Vector;
use femquad::{Real, Result};

/// The median of `times` (the upper one of an even count); `times` must
/// not be empty.
pub fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Median milliseconds of one call of `call(y)` over `reps` (at least one)
/// batches of 20 calls, each batch ended by `y.finish()`, after one untimed
/// batch.
///
/// # Errors
/// The first error of `call` or of a finish.
pub fn host_timed<R: Real>(
    reps: usize,
    y: &mut Vector<R>,
    mut call: impl FnMut(&mut Vector<R>) -> Result<()>,
) -> Result<f64> {
    let mut times = Vec::new();
    for k in 0..reps.max(1) + 1 {
        y.finish()?;
        let t = Instant::now();
        for _ in 0..20 {
            call(y)?;
        }
        y.finish()?;
        if k > 0 {
            times.push(t.elapsed().as_secs_f64() * 1e3 / 20.0);
        }
    }
    Ok(median(times))
}
