//! What a bound form's last evaluation enqueued ([`Run`]): its profiling
//! events and the integration launch's extent, turned into device time by
//! [`Run::wait_ns`]. For benchmarks, the autotuner and tests; an
//! evaluation only records its events (no wait, no query).

use opencl3::event::Event;

use super::context::Device;
use super::launch_config::LaunchConfig;
use crate::Result;

/// What one launch of the integration kernel covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchRecord {
    /// Work-groups launched.
    pub work_groups: usize,
    /// Cells per work-group (the chunk).
    pub chunk: usize,
    /// Cells of the mesh; `work_groups·chunk ≥ cells` always.
    pub cells: usize,
    /// The configuration launched.
    pub config: LaunchConfig,
    /// Work-groups that ran as patches (`config.patches`; 0 without):
    /// their node lists fit the kernel's capacities.
    pub patch_groups: usize,
    /// Work-groups of a launch with patches whose node lists did not fit
    /// (more distinct nodes than the capacities of
    /// [`patch_capacity`](super::shape::patch_capacity), or than
    /// [`KernelOptions::patch_node_limit`](super::KernelOptions::patch_node_limit)):
    /// they gathered through the 32-bit node map and added into global
    /// memory atomically. 0 without patches.
    pub fallback_groups: usize,
}

/// The commands of one evaluation, in queue order (`F(u)`: zeroing `r` and
/// the integration, or the integration and the deterministic sum; the
/// diagonal: zeroing and its kernel; the element kernel: its launch), and
/// the integration kernel's launch (`None` for the diagonal).
#[derive(Default)]
pub struct Run {
    pub(crate) events: Vec<Event>,
    pub(crate) launch: Option<LaunchRecord>,
}

impl Run {
    /// What the integration kernel's launch covered (`None` before the
    /// first evaluation, and for the diagonal's kernel).
    pub fn launch(&self) -> Option<LaunchRecord> {
        self.launch
    }

    /// Waits for the evaluation and returns its device time in
    /// nanoseconds, from the start of its first command to the end of its
    /// last (profiling); `None` before the first evaluation or if the
    /// device reports no times.
    ///
    /// # Errors
    /// The device's error while waiting (named with the evaluation).
    pub fn wait_ns(&self, device: &Device) -> Result<Option<u64>> {
        let (Some(first), Some(last)) = (self.events.first(), self.events.last()) else {
            return Ok(None);
        };
        device.wait(last, "the evaluation")?;
        let (Ok(start), Ok(end)) = (
            first.profiling_command_start(),
            last.profiling_command_end(),
        ) else {
            return Ok(None);
        };
        Ok(Some(end.saturating_sub(start)))
    }
}
