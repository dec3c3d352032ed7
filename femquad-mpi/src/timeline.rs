//! [`Timeline`]: the device commands of one halo exchange or one
//! distributed application, in the order they were enqueued — each with
//! its queue, the recorded commands its wait list names, and its OpenCL
//! event — and the host's wall-clock stamps of its steps ([`HostStep`]).
//! For checking the order of the staging ([`Timeline::commands`]: every
//! command carries the dependency it needs) and for timing its phases on
//! the device ([`Timeline::phases`]) and on the host
//! ([`Timeline::host_times`]).
//!
//! # A ghost update on a device
//! ```text
//! compute:  gathers ─ SharedStaged ─ (interior part ─ Interior) ─ GhostsIn ─ boundary part ─ Boundary
//!                          │                                       ↑
//! transfer:                └→ SharedDownload ─ (messages) ─ GhostUpload
//! ```
//! The downloads of the shared owned entries wait for the gathers that
//! staged them (the marker `SharedStaged`); the interior part is enqueued
//! on the compute queue right after, so it runs while the host waits for
//! the downloads and exchanges the messages; the upload of the received
//! ghost values goes to the transfer queue (after the staging, so after
//! the copy of the inputs it overwrites the ghosts of); the compute queue's
//! barrier `GhostsIn` waits for the upload, so the boundary part reads the
//! new ghosts. A ghost accumulate is the mirror image (`ResultStaged`,
//! `GhostDownload`, `SumUpload`, `SumsIn`).

use std::sync::Arc;
use std::time::Instant;

use femquad::opencl::Device;
use femquad::opencl::context::Event;
use femquad::{Error, Result};

/// What a recorded device command is (see the [module
/// documentation](self)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Compute marker: a ghost update's shared owned entries gathered into
    /// the staging vectors (and everything enqueued before).
    SharedStaged,
    /// Transfer: the download of one neighbour's staged shared entries.
    SharedDownload,
    /// Transfer: the upload of the received ghost values.
    GhostUpload,
    /// Compute barrier: waits for the ghost uploads.
    GhostsIn,
    /// Compute marker: after the interior part of an application.
    Interior,
    /// Compute marker: after the boundary part of an application.
    Boundary,
    /// Compute marker: a ghost accumulate's vector final (everything
    /// enqueued before).
    ResultStaged,
    /// Transfer: the download of the ghost entries' partial sums.
    GhostDownload,
    /// Transfer: the upload of one neighbour's sums for the owned entries.
    SumUpload,
    /// Compute barrier: waits for the sums' uploads.
    SumsIn,
}

/// A step of the host through one application or exchange, stamped with
/// the host's wall clock when it ends (`Timeline::stamp`): its time is
/// the time from the stamp before (or the timeline's start) to its own.
/// In the order the host passes them with overlap (without, the interior
/// cells are enqueued after `UploadEnqueue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostStep {
    /// The inputs copied into the operator's scratch vectors (enqueued).
    Copy,
    /// The gathers of the shared owned entries and the marker
    /// `SharedStaged` enqueued.
    Gathers,
    /// The interior cells enqueued (and the queue flushed).
    InteriorEnqueue,
    /// The downloads of the shared owned entries enqueued and waited for.
    DownloadWait,
    /// The agreement on failure before the update's messages
    /// ([`Ranks::agree`](crate::comm::Ranks::agree)).
    Agree,
    /// The ghost update's messages.
    Messages,
    /// The upload of the ghost values and the barrier `GhostsIn` enqueued.
    UploadEnqueue,
    /// The boundary cells enqueued (after the barrier on the device).
    BoundaryEnqueue,
    /// The check of the result (e.g. for NaN: a device reduction, which
    /// waits for the cells).
    Check,
    /// The marker `ResultStaged` and the download of the ghosts' partial
    /// sums enqueued and waited for.
    AccumulateDownloadWait,
    /// The agreement before the accumulate's messages.
    AccumulateAgree,
    /// The ghost accumulate's messages.
    AccumulateMessages,
    /// The uploads of the received sums, the barrier `SumsIn` and the
    /// additions enqueued.
    SumsEnqueue,
    /// The agreement at the end of the accumulate.
    FinalAgree,
}

impl HostStep {
    /// Every step, in the order of [`Timeline::host_times`].
    pub const ALL: [HostStep; 14] = [
        HostStep::Copy,
        HostStep::Gathers,
        HostStep::InteriorEnqueue,
        HostStep::DownloadWait,
        HostStep::Agree,
        HostStep::Messages,
        HostStep::UploadEnqueue,
        HostStep::BoundaryEnqueue,
        HostStep::Check,
        HostStep::AccumulateDownloadWait,
        HostStep::AccumulateAgree,
        HostStep::AccumulateMessages,
        HostStep::SumsEnqueue,
        HostStep::FinalAgree,
    ];

    /// The step's name in snake case (a column of femquad-mpi-bench's
    /// breakdown).
    pub fn name(self) -> &'static str {
        match self {
            HostStep::Copy => "copy",
            HostStep::Gathers => "gathers",
            HostStep::InteriorEnqueue => "interior_enqueue",
            HostStep::DownloadWait => "download_wait",
            HostStep::Agree => "agree",
            HostStep::Messages => "messages",
            HostStep::UploadEnqueue => "upload_enqueue",
            HostStep::BoundaryEnqueue => "boundary_enqueue",
            HostStep::Check => "check",
            HostStep::AccumulateDownloadWait => "accumulate_download_wait",
            HostStep::AccumulateAgree => "accumulate_agree",
            HostStep::AccumulateMessages => "accumulate_messages",
            HostStep::SumsEnqueue => "sums_enqueue",
            HostStep::FinalAgree => "final_agree",
        }
    }
}

/// The queue a command went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queue {
    /// [`Device::queue`](femquad::opencl::Device::queue): kernels.
    Compute,
    /// [`Device::transfer_queue`](femquad::opencl::Device::transfer_queue).
    Transfer,
}

/// One recorded device command.
#[derive(Debug)]
pub struct Command {
    /// What it is.
    pub step: Step,
    /// Where it was enqueued.
    pub queue: Queue,
    /// The recorded commands its wait list named, in its order.
    pub waits: Vec<Step>,
    event: Event,
}

/// The recorded commands and host stamps (see the [module
/// documentation](self)).
#[derive(Debug)]
pub struct Timeline {
    /// The device of the commands (`None` before the first).
    device: Option<Arc<Device>>,
    commands: Vec<Command>,
    /// When the timeline was made: the start of the first host step.
    start: Instant,
    /// The host steps in the order they ended, with their ends.
    stamps: Vec<(HostStep, Instant)>,
}

impl Default for Timeline {
    /// An empty timeline starting now.
    fn default() -> Self {
        Timeline {
            device: None,
            commands: Vec::new(),
            start: Instant::now(),
            stamps: Vec::new(),
        }
    }
}

/// The device phases of a recorded application, in seconds, from the
/// commands' profiling events (the host's steps, the messages among them:
/// [`Timeline::host_times`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Downloads of the shared owned entries (`SharedDownload`, summed).
    pub download: f64,
    /// Uploads of the ghost values (`GhostUpload`, summed).
    pub upload: f64,
    /// The interior part: the end of `Interior` less the end of the compute
    /// command recorded before it.
    pub interior: f64,
    /// The boundary part: likewise for `Boundary`.
    pub boundary: f64,
}

impl Timeline {
    /// Enqueues a command `step` on `device`'s `queue` by `enqueue`, which
    /// gets the events of the recorded commands `waits` (indices returned
    /// by earlier calls) as its wait list, and records it; returns its
    /// index.
    ///
    /// # Errors
    /// `enqueue`'s.
    pub(crate) fn enqueue(
        &mut self,
        device: &Arc<Device>,
        step: Step,
        queue: Queue,
        waits: &[usize],
        enqueue: impl FnOnce(&[&Event]) -> Result<Event>,
    ) -> Result<usize> {
        let after: Vec<&Event> = waits.iter().map(|&i| &self.commands[i].event).collect();
        let event = enqueue(&after)?;
        let waits = waits.iter().map(|&i| self.commands[i].step).collect();
        self.device.get_or_insert_with(|| device.clone());
        self.commands.push(Command {
            step,
            queue,
            waits,
            event,
        });
        Ok(self.commands.len() - 1)
    }

    /// Stamps the end of the host step `step` with the wall clock now.
    pub(crate) fn stamp(&mut self, step: HostStep) {
        self.stamps.push((step, Instant::now()));
    }

    /// The host's wall time of each step of [`HostStep::ALL`], in that
    /// order, in seconds: the sum over its stamps of the time from the
    /// stamp before (the timeline's start for the first); 0 for a step
    /// without a stamp. Their sum is the time from the timeline's start to
    /// its last stamp.
    pub fn host_times(&self) -> Vec<f64> {
        let mut times = vec![0.0; HostStep::ALL.len()];
        let mut previous = self.start;
        for &(step, at) in &self.stamps {
            if let Some(i) = HostStep::ALL.iter().position(|&s| s == step) {
                times[i] += at.duration_since(previous).as_secs_f64();
            }
            previous = at;
        }
        times
    }

    /// The recorded commands, in the order they were enqueued (none for
    /// host vectors).
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// The phases (see [`Phases`]; 0 for a phase without commands). Waits
    /// for every recorded command.
    ///
    /// # Errors
    /// A command's failure (naming `clWaitForEvents`); [`Error::Internal`]
    /// if the device reports no profiling times.
    pub fn phases(&self) -> Result<Phases> {
        let mut times = Vec::with_capacity(self.commands.len());
        if let Some(device) = &self.device {
            for c in &self.commands {
                let what = format!("{:?}", c.step);
                let t = device.event_times(&c.event, &what)?.ok_or_else(|| {
                    Error::internal(format!("the device reports no profiling times for {what}"))
                })?;
                times.push(t);
            }
        }
        let seconds = |ns: u64| ns as f64 * 1e-9;
        let transfers = |step: Step| -> f64 {
            self.commands
                .iter()
                .zip(&times)
                .filter(|(c, _)| c.step == step)
                .fold(0.0, |sum, (_, &(s, e))| sum + seconds(e.saturating_sub(s)))
        };
        // a compute marker's phase: from the end of the compute command
        // before it to its own end
        let compute = |step: Step| -> f64 {
            let mut previous = None;
            for (c, &(_, end)) in self.commands.iter().zip(&times) {
                if c.queue != Queue::Compute {
                    continue;
                }
                if c.step == step {
                    return previous.map_or(0.0, |p: u64| seconds(end.saturating_sub(p)));
                }
                previous = Some(end);
            }
            0.0
        };
        Ok(Phases {
            download: transfers(Step::SharedDownload),
            upload: transfers(Step::GhostUpload),
            interior: compute(Step::Interior),
            boundary: compute(Step::Boundary),
        })
    }
}
