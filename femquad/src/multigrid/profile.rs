//! Profiling of the V-cycle ([`super::MultigridOptions::profile`]): the
//! wall-clock time of each phase of each level, each phase ended by
//! finishing the device queue.

use std::time::Instant;

use crate::Real;
use crate::Result;
use crate::backend::Vector;

/// Wall-clock seconds of the phases of the V-cycles on one level, summed
/// over the cycles applied since the last setup (with
/// [`MultigridOptions::profile`](super::MultigridOptions::profile)). Each phase is timed from the end of the
/// previous one to the end of its device work (the queue finished).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelTimes {
    /// Pre- and post-smoothing: the Chebyshev steps' operator applications
    /// and point-block updates.
    pub smoothing: f64,
    /// The operator product `A x` of the residual after pre-smoothing.
    pub residual: f64,
    /// Restriction `P̃ᵀ (b − A x)` to the next coarser level (the residual
    /// formed in the same pass; `P̃`: [`super::Transfer::with_fixed`]).
    pub restriction: f64,
    /// Prolongation `P̃` of the coarse correction, added.
    pub prolongation: f64,
    /// The direct solve (the coarsest level only), with its transfers
    /// between device and host.
    pub coarse_solve: f64,
}

impl LevelTimes {
    /// The sum of the phases.
    pub fn total(&self) -> f64 {
        self.smoothing + self.residual + self.restriction + self.prolongation + self.coarse_solve
    }
}

/// Where the time of the V-cycles went ([`Multigrid::profile`](super::Multigrid::profile)).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CycleProfile {
    /// V-cycles profiled.
    pub cycles: usize,
    /// Wall-clock seconds of those cycles, from the call to the end of its
    /// device work (includes the masking of the right-hand side and the
    /// fixed values, which no level's phases count).
    pub seconds: f64,
    /// One entry per level, coarsest first.
    pub levels: Vec<LevelTimes>,
}

/// The profile being taken and the end of the last phase.
#[derive(Debug)]
pub(super) struct Profiler {
    profile: CycleProfile,
    lap_start: Instant,
    cycle_start: Instant,
}

/// A phase of the cycle on one level.
#[derive(Clone, Copy, Debug)]
pub(super) enum Phase {
    Smoothing,
    Residual,
    Restriction,
    Prolongation,
    CoarseSolve,
}

impl Profiler {
    /// A profiler of `levels` levels, no cycle yet.
    pub(super) fn new(levels: usize) -> Self {
        Profiler {
            profile: CycleProfile {
                cycles: 0,
                seconds: 0.0,
                levels: vec![LevelTimes::default(); levels],
            },
            lap_start: Instant::now(),
            cycle_start: Instant::now(),
        }
    }

    /// The profile so far.
    pub(super) fn profile(&self) -> &CycleProfile {
        &self.profile
    }

    /// Starts a cycle on the right-hand side `b`: waits for the caller's
    /// pending device work (not the cycle's).
    pub(super) fn start_cycle<R: Real>(&mut self, b: &Vector<R>) -> Result<()> {
        b.finish()?;
        self.lap_start = Instant::now();
        self.cycle_start = self.lap_start;
        Ok(())
    }

    /// Ends the phase `phase` of level `l`: waits for the device work (on
    /// the queue of `v`) and adds the time since the end of the last phase.
    pub(super) fn lap<R: Real>(&mut self, l: usize, phase: Phase, v: &Vector<R>) -> Result<()> {
        v.finish()?;
        let now = Instant::now();
        let dt = (now - self.lap_start).as_secs_f64();
        self.lap_start = now;
        let t = &mut self.profile.levels[l];
        match phase {
            Phase::Smoothing => t.smoothing += dt,
            Phase::Residual => t.residual += dt,
            Phase::Restriction => t.restriction += dt,
            Phase::Prolongation => t.prolongation += dt,
            Phase::CoarseSolve => t.coarse_solve += dt,
        }
        Ok(())
    }

    /// Ends a cycle whose result is `x` (its device work finished).
    pub(super) fn end_cycle<R: Real>(&mut self, x: &Vector<R>) -> Result<()> {
        x.finish()?;
        self.profile.cycles += 1;
        self.profile.seconds += self.cycle_start.elapsed().as_secs_f64();
        Ok(())
    }
}
