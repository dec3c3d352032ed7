//! [`Timeline`]: the device commands of one halo exchange or one
//! distributed application, in the order they were enqueued — each with
//! its queue, the recorded commands its wait list names, and its OpenCL
//! event — and the host's wall time of the halo messages. For checking the
//! order of the staging ([`Timeline::commands`]: every command carries the
//! dependency it needs) and for timing its phases ([`Timeline::phases`]).
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

/// The recorded commands and message times (see the [module
/// documentation](self)).
#[derive(Debug, Default)]
pub struct Timeline {
    /// The device of the commands (`None` before the first).
    device: Option<Arc<Device>>,
    commands: Vec<Command>,
    update_messages: f64,
    accumulate_messages: f64,
}

/// The phases of a recorded application, in seconds: device times from the
/// commands' profiling events, the messages' host wall time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Phases {
    /// Downloads of the shared owned entries (`SharedDownload`, summed).
    pub download: f64,
    /// The ghost update's messages (host wall time).
    pub exchange: f64,
    /// Uploads of the ghost values (`GhostUpload`, summed).
    pub upload: f64,
    /// The interior part: the end of `Interior` less the end of the compute
    /// command recorded before it.
    pub interior: f64,
    /// The boundary part: likewise for `Boundary`.
    pub boundary: f64,
    /// The ghost accumulate's messages (host wall time).
    pub accumulate_exchange: f64,
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

    /// Adds `seconds` of a ghost update's messages.
    pub(crate) fn add_update_messages(&mut self, seconds: f64) {
        self.update_messages += seconds;
    }

    /// Adds `seconds` of a ghost accumulate's messages.
    pub(crate) fn add_accumulate_messages(&mut self, seconds: f64) {
        self.accumulate_messages += seconds;
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
            exchange: self.update_messages,
            upload: transfers(Step::GhostUpload),
            interior: compute(Step::Interior),
            boundary: compute(Step::Boundary),
            accumulate_exchange: self.accumulate_messages,
        })
    }
}
