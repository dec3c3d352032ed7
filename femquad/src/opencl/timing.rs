//! What a bound form's last evaluation enqueued ([`Run`]): its profiling
//! events, the integration launch's extent and the boundary terms' facet
//! launches ([`FacetLaunch`]), turned into device time by [`Run::wait_ns`]
//! and [`Run::facet_ns`]. For benchmarks, the autotuner and tests; an
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

/// One launch of a boundary term's facet kernel
/// (`kernels/facet_integrate.cl`) in an evaluation.
pub struct FacetLaunch {
    /// The kernel: `facet_points`, `facet_scatter`, `facet_sum` or
    /// `facet_diagonal`.
    pub kernel: &'static str,
    /// The boundary term, its index in the form's terms.
    pub term: usize,
    /// Facets of the term's set.
    pub facets: usize,
    /// Bytes the launch must move: every array entry it reads or writes
    /// counted once per facet (a node shared by facets once per facet),
    /// an atomic addition or an addition into `out` twice (read and write).
    pub bytes: usize,
    pub(crate) event: Event,
}

impl FacetLaunch {
    /// Waits for the launch and returns its device time in nanoseconds
    /// (profiling); `None` if the device reports no times.
    ///
    /// # Errors
    /// The device's error while waiting (named with the kernel).
    pub fn wait_ns(&self, device: &Device) -> Result<Option<u64>> {
        device.wait(&self.event, self.kernel)?;
        match (
            self.event.profiling_command_start(),
            self.event.profiling_command_end(),
        ) {
            (Ok(start), Ok(end)) => Ok(Some(end.saturating_sub(start))),
            _ => Ok(None),
        }
    }
}

impl std::fmt::Debug for FacetLaunch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FacetLaunch")
            .field("kernel", &self.kernel)
            .field("term", &self.term)
            .field("facets", &self.facets)
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The commands of one evaluation, in queue order (`F(u)`: zeroing `r` and
/// the integration, or the integration and the deterministic sum; the
/// diagonal: zeroing and its kernel; the element kernel: its launch), the
/// integration kernel's launch (`None` for the diagonal), and after them
/// the facet kernels' launches of the form's boundary terms (`F(u)`,
/// `J(u)·v`, the diagonal; none without boundary terms).
#[derive(Default)]
pub struct Run {
    pub(crate) events: Vec<Event>,
    pub(crate) launch: Option<LaunchRecord>,
    pub(crate) facets: Vec<FacetLaunch>,
}

impl Run {
    /// What the integration kernel's launch covered (`None` before the
    /// first evaluation, and for the diagonal's kernel).
    pub fn launch(&self) -> Option<LaunchRecord> {
        self.launch
    }

    /// The facet kernels' launches of the evaluation, in queue order (after
    /// the cells' commands; empty without boundary terms).
    pub fn facet_launches(&self) -> &[FacetLaunch] {
        &self.facets
    }

    /// Waits for the evaluation and returns the device time of its facet
    /// launches in nanoseconds, summed: the boundary terms' part of
    /// [`Run::wait_ns`]. `Some(0)` without boundary terms; `None` if the
    /// device reports no times.
    ///
    /// # Errors
    /// The device's error while waiting (named with the kernel).
    pub fn facet_ns(&self, device: &Device) -> Result<Option<u64>> {
        let mut total = 0;
        for launch in &self.facets {
            match launch.wait_ns(device)? {
                Some(ns) => total += ns,
                None => return Ok(None),
            }
        }
        Ok(Some(total))
    }

    /// Waits for the evaluation and returns its device time in
    /// nanoseconds, from the start of its first command to the end of its
    /// last, the facet launches included (profiling); `None` before the
    /// first evaluation or if the device reports no times.
    ///
    /// # Errors
    /// The device's error while waiting (named with the evaluation).
    pub fn wait_ns(&self, device: &Device) -> Result<Option<u64>> {
        let last = self.facets.last().map(|f| &f.event);
        let (Some(first), Some(last)) = (self.events.first(), last.or(self.events.last())) else {
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
