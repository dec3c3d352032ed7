//! An opened OpenCL device: context, profiling queues (compute and
//! transfer), program cache and transfer accounting.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use bytemuck::Pod;
use opencl3::command_queue::{CL_QUEUE_PROFILING_ENABLE, CommandQueue};
use opencl3::context::Context;
use opencl3::device::Device as ClDevice;
use opencl3::error_codes::{CL_BUILD_PROGRAM_FAILURE, ClError};
pub use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::CL_BLOCKING;

use super::capture::{self, LaunchCapture};
use super::device::{DeviceInfo, DeviceSelector, cl_error, list_devices};
use super::failure::{Failure, classify, code_name};
use super::program_cache::{self, Lookup, ProgramCache};
use super::source::numbered;
use crate::{Error, Real, Result};

/// Counters of what a [`Device`] has done, for tests and reports.
///
/// Transfers are split by what they carry, so that a test can prove that an
/// operation moved no array between host and device: every host-to-device
/// write is an array (geometry, coefficients, vectors: their sum is
/// [`DeviceStats::array_bytes_written`]); reads are either arrays
/// ([`DeviceStats::array_bytes_read`]: element vectors, vector downloads) or
/// the few scalars of a reduction result ([`DeviceStats::scalar_reads`]:
/// a dot product, a norm, the `m` values of a multi-dot).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeviceStats {
    /// Programs built in this process (misses of the in-memory cache):
    /// compiled from source, or loaded from the on-disk cache
    /// (`disk_hits` of them).
    pub builds: usize,
    /// Program requests served from the cache.
    pub cache_hits: usize,
    /// Programs loaded from the on-disk [`ProgramCache`] instead of
    /// compiled (counted in `builds` too: a build of the program object).
    pub disk_hits: usize,
    /// On-disk entries found but refused (another identity, a failed
    /// checksum, or a binary the driver rejected): compiled from source
    /// and overwritten.
    pub disk_rejected: usize,
    /// Bytes of geometry (J⁻¹, det J, coordinates) written to the device.
    pub geometry_bytes: u64,
    /// Bytes of coefficients (u, aux, constants) written to the device.
    pub coefficient_bytes: u64,
    /// Bytes of vectors and index sets written to the device
    /// ([`DeviceVector`](super::vector::DeviceVector) and
    /// [`DeviceIndices`](super::vector::DeviceIndices) uploads).
    pub vector_bytes: u64,
    /// Bytes read back from the device, arrays and scalars together
    /// (`array_bytes_read + scalar_bytes_read`).
    pub read_bytes: u64,
    /// Bytes of arrays read back (element vectors, vector downloads).
    pub array_bytes_read: u64,
    /// Number of reads of reduction results (each one host–device round
    /// trip returning a few scalars).
    pub scalar_reads: u64,
    /// Bytes of those scalar reads.
    pub scalar_bytes_read: u64,
    /// Kernels enqueued (every launch of the library goes through one
    /// helper, `Launch::submit` or `Launch::enqueue`, which count it): the host cost of a
    /// sequence of small kernels is about this number times the launch
    /// latency.
    pub launches: u64,
}

impl DeviceStats {
    /// Array bytes written to the device: geometry, coefficients and vectors.
    pub fn array_bytes_written(&self) -> u64 {
        self.geometry_bytes + self.coefficient_bytes + self.vector_bytes
    }
}

/// One command of a device timeline ([`Device::start_trace`]): what it
/// was (a kernel's function name, or `read <what>` / `write <what>` for a
/// transfer) and the profiling times of its event, in nanoseconds of the
/// device's clock: queued (`CL_PROFILING_COMMAND_QUEUED`), started and
/// ended on the device. `end − start` is the command's device time; the
/// gap from one command's `end` to the next one's `start` is time the
/// device waited for the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceEntry {
    /// The kernel's function name, or the transfer.
    pub name: String,
    /// When the host enqueued it.
    pub queued: u64,
    /// When the device started it.
    pub start: u64,
    /// When the device finished it.
    pub end: u64,
}

impl TraceEntry {
    /// A timeline as CSV: the header `kernel,queued_ns,start_ns,end_ns`,
    /// then one line per entry in its order (a name with a comma or a
    /// quote quoted) — what `solve_bench --trace` and `femquad-mpi-bench
    /// --trace` write and `scripts/trace-summary.py` reads.
    pub fn csv(trace: &[TraceEntry]) -> String {
        let mut text = String::from("kernel,queued_ns,start_ns,end_ns\n");
        for e in trace {
            let name = if e.name.contains([',', '"']) {
                format!("\"{}\"", e.name.replace('"', "\"\""))
            } else {
                e.name.clone()
            };
            text.push_str(&format!("{name},{},{},{}\n", e.queued, e.start, e.end));
        }
        text
    }
}

/// What a host-to-device transfer carries, for [`DeviceStats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// Cell geometry.
    Geometry,
    /// Coefficients and constants.
    Coefficients,
    /// Solver vectors and index sets.
    Vector,
}

/// An opened OpenCL device with its context, two in-order profiling queues
/// (the compute queue [`Device::queue`] of every kernel and transfer, and
/// the transfer queue [`Device::transfer_queue`] for copies that run beside
/// the kernels) and a cache of built programs keyed by the hash of their full source (which
/// contains the physics, every kernel parameter and the precision).
///
/// A device whose context was lost (a kernel aborted, e.g. on an
/// out-of-bounds access: the OpenCL calls that follow fail with codes such
/// as `CL_OUT_OF_RESOURCES`) remembers it: from then on every call fails at
/// once with [`Error::DeviceLost`], naming the call that found it.
pub struct Device {
    info: DeviceInfo,
    /// The compute queue. Declared before the context, so dropped
    /// (released) before it.
    queue: CommandQueue,
    /// The transfer queue, likewise released before the context.
    transfer: CommandQueue,
    programs: Mutex<HashMap<u64, Arc<Program>>>,
    /// Build logs of successful builds (resource reports), by source hash.
    logs: Mutex<HashMap<u64, String>>,
    stats: Mutex<DeviceStats>,
    /// The call and error code that showed the context lost, once known.
    lost: OnceLock<(&'static str, i32)>,
    /// Compiled programs on disk, across processes (none unless asked for).
    program_cache: Option<ProgramCache>,
    /// The commands enqueued since [`Device::start_trace`], with their
    /// events; `None` when not tracing (no event is kept).
    trace: Mutex<Option<Vec<(String, Event)>>>,
    /// The launches captured since [`Device::start_capture`]; `None` when
    /// not capturing (`opencl::capture`).
    captures: Mutex<Option<Vec<LaunchCapture>>>,
    context: Context,
}

impl Drop for Device {
    /// Waits for every command enqueued on the device before its queue,
    /// programs and context are released: a process that returns while
    /// kernels still run would otherwise tear the OpenCL runtime down under
    /// them.
    fn drop(&mut self) {
        if self.lost.get().is_none() {
            // An error here means the context is lost: nothing to wait for.
            let _ = self.transfer.finish();
            let _ = self.queue.finish();
        }
    }
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device").field("info", &self.info).finish()
    }
}

/// Key of a program in the cache: the FNV-1a hash of its source.
fn source_key(source: &str) -> u64 {
    let mut h = crate::physics::Fnv1a::new();
    h.write(source.as_bytes());
    h.finish()
}

/// The lines of a build log that report resources (registers, stack frame,
/// spills), joined with `; ` — empty if the compiler reported none.
pub fn resource_summary(log: &str) -> String {
    log.lines()
        .filter(|l| l.contains("registers") || l.contains("spill"))
        .map(|l| l.trim().trim_start_matches("ptxas info    :").trim())
        .collect::<Vec<_>>()
        .join("; ")
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means another thread panicked while holding it;
    // the counters and the cache stay usable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Device {
    /// Opens the device chosen by `selector`, without a program cache on
    /// disk (every program compiled once per process).
    pub fn open(selector: &DeviceSelector) -> Result<Arc<Device>> {
        Self::open_with(selector, None)
    }

    /// Opens the device chosen by `selector`; its programs are kept in
    /// `program_cache` across processes, if given ([`ProgramCache`]).
    pub fn open_with(
        selector: &DeviceSelector,
        program_cache: Option<ProgramCache>,
    ) -> Result<Arc<Device>> {
        let devices = list_devices()?;
        let info = selector.pick(&devices)?.clone();
        Self::open_info(info, program_cache)
    }

    /// Opens the device chosen by the environment variable `FEMQUAD_DEVICE`
    /// (default: prefer a GPU), with the program cache the environment
    /// asks for ([`ProgramCache::from_env`]: by default on disk in
    /// femquad's cache directory; `FEMQUAD_PROGRAM_CACHE=off` switches it
    /// off). For the top level of a program.
    ///
    /// # Errors
    /// No OpenCL runtime, no device matching `FEMQUAD_DEVICE`.
    pub fn from_env() -> Result<Arc<Device>> {
        Self::open_with(&DeviceSelector::from_env(), ProgramCache::from_env()?)
    }

    /// The on-disk program cache, if the device has one.
    pub fn program_cache(&self) -> Option<&ProgramCache> {
        self.program_cache.as_ref()
    }

    fn open_info(info: DeviceInfo, program_cache: Option<ProgramCache>) -> Result<Arc<Device>> {
        let cl_device = ClDevice::new(info.id);
        let context = Context::from_device(&cl_device).map_err(cl_error("clCreateContext"))?;
        #[allow(deprecated)]
        let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(cl_error("clCreateCommandQueue"))?;
        #[allow(deprecated)]
        let transfer = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)
            .map_err(cl_error("clCreateCommandQueue"))?;
        Ok(Arc::new(Device {
            info,
            queue,
            transfer,
            programs: Mutex::new(HashMap::new()),
            logs: Mutex::new(HashMap::new()),
            stats: Mutex::new(DeviceStats::default()),
            lost: OnceLock::new(),
            program_cache,
            trace: Mutex::new(None),
            captures: Mutex::new(None),
            context,
        }))
    }

    /// The device's OpenCL context (for allocations outside this module:
    /// [`PinnedHost`](super::PinnedHost)).
    pub(crate) fn cl_context(&self) -> &Context {
        &self.context
    }

    /// The device's properties.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// Transfer and build counters so far.
    pub fn stats(&self) -> DeviceStats {
        *lock(&self.stats)
    }

    /// Starts a device timeline (dropping one under way): from now on every
    /// kernel launched through femquad's launch helper and every blocking
    /// transfer of the compute queue keeps its event, named
    /// ([`TraceEntry`]), until [`Device::take_trace`]. A launch then asks
    /// for an event, which costs the host a few µs more per launch (see
    /// `opencl::launch`): trace to see where the time goes, not to time.
    pub fn start_trace(&self) {
        *lock(&self.trace) = Some(Vec::new());
    }

    /// Whether a timeline is being recorded ([`Device::start_trace`]).
    pub fn tracing(&self) -> bool {
        lock(&self.trace).is_some()
    }

    /// Stops the timeline and returns it, in the order the commands were
    /// enqueued, once each has completed (waits for them); empty if none
    /// was started.
    ///
    /// # Errors
    /// The device's error while waiting ([`Error::DeviceLost`]); a device
    /// that reports no profiling times for a command, naming it.
    pub fn take_trace(&self) -> Result<Vec<TraceEntry>> {
        let Some(recorded) = lock(&self.trace).take() else {
            return Ok(Vec::new());
        };
        recorded
            .into_iter()
            .map(|(name, event)| {
                self.wait(&event, &name)?;
                let times = (
                    event.profiling_command_queued(),
                    event.profiling_command_start(),
                    event.profiling_command_end(),
                );
                match times {
                    (Ok(queued), Ok(start), Ok(end)) => Ok(TraceEntry {
                        name,
                        queued,
                        start,
                        end,
                    }),
                    (Err(e), _, _) | (_, Err(e), _) | (_, _, Err(e)) => {
                        Err(self.failure("clGetEventProfilingInfo", &name, 0, e))
                    }
                }
            })
            .collect()
    }

    /// Captures every launch on this device from now until
    /// [`Device::take_captures`] ([`LaunchCapture`]: the program binary, the
    /// sizes, every argument, each buffer's contents before and after). Each
    /// launch then finishes the queue and is waited for; the buffers are read
    /// whole, twice: for profiling one call, not for timing. A second call
    /// while capturing drops nothing already captured.
    pub fn start_capture(&self) {
        let mut captures = self.captures();
        if captures.is_none() {
            *captures = Some(Vec::new());
            capture::started();
        }
    }

    /// Stops capturing and returns the launches captured since
    /// [`Device::start_capture`], in launch order (empty if none was
    /// started).
    pub fn take_captures(&self) -> Vec<LaunchCapture> {
        let taken = self.captures().take();
        if taken.is_some() {
            capture::stopped();
        }
        taken.unwrap_or_default()
    }

    /// Whether this device captures its launches now.
    pub(crate) fn capturing(&self) -> bool {
        self.captures().is_some()
    }

    /// The launches captured so far, `None` when not capturing
    /// ([`Device::start_capture`]).
    pub(crate) fn captures(&self) -> MutexGuard<'_, Option<Vec<LaunchCapture>>> {
        lock(&self.captures)
    }

    /// Keeps `event` (a command `name`) in the timeline, if one is being
    /// recorded; the caller keeps its own handle.
    pub(crate) fn record(
        &self,
        name: impl FnOnce() -> Result<String>,
        event: &Event,
    ) -> Result<()> {
        let mut trace = lock(&self.trace);
        let Some(entries) = trace.as_mut() else {
            return Ok(());
        };
        let name = name()?;
        // SAFETY: `event` is a live event (borrowed); the retained handle
        // is released by the new `Event`'s drop.
        unsafe { opencl3::event::retain_event(event.get()) }
            .map_err(|e| self.failure("clRetainEvent", &name, 0, ClError(e)))?;
        entries.push((name, Event::new(event.get())));
        Ok(())
    }

    /// The device's in-order command queue (with profiling), for launching
    /// your own kernels on femquad's buffers (e.g. an operator on
    /// [`DeviceVector`](super::vector::DeviceVector)s): commands enqueued
    /// here run after, and before, femquad's own in submission order.
    pub fn queue(&self) -> &CommandQueue {
        &self.queue
    }

    /// The device's second in-order command queue (with profiling), for
    /// transfers that run while kernels run on [`Device::queue`] (e.g.
    /// femquad-mpi's halo staging: [`DeviceVector::read_range_after`] and
    /// [`DeviceVector::write_range_after`](super::vector::DeviceVector::write_range_after)).
    /// Its commands are ordered among themselves, but with the compute
    /// queue's only through events: a transfer lists the compute commands
    /// it needs in its wait list ([`Device::compute_marker`]), and the
    /// compute queue waits for a transfer through
    /// [`Device::compute_waits_for`]. Created with the compute queue,
    /// released before the context.
    ///
    /// [`DeviceVector::read_range_after`]: super::vector::DeviceVector::read_range_after
    pub fn transfer_queue(&self) -> &CommandQueue {
        &self.transfer
    }

    /// Enqueues a marker on the compute queue: its event completes when
    /// every command enqueued there before it has (`clEnqueueMarkerWithWaitList`),
    /// e.g. the gathers that staged a halo, for a transfer's wait list.
    /// The queue is flushed, so that a command on another queue can wait
    /// for the marker.
    ///
    /// # Errors
    /// [`Error::DeviceLost`], or the failure naming the call.
    pub fn compute_marker(&self) -> Result<Event> {
        let queue = self.live_queue()?;
        // SAFETY: an empty wait list.
        let event = unsafe { queue.enqueue_marker_with_wait_list(&[]) }
            .map_err(|e| self.failure("clEnqueueMarkerWithWaitList", "a compute marker", 0, e))?;
        queue
            .flush()
            .map_err(|e| self.failure("clFlush", "the compute queue", 0, e))?;
        Ok(event)
    }

    /// Enqueues a barrier on the compute queue that waits for `events`
    /// (e.g. uploads on the transfer queue): every command enqueued there
    /// after it starts once they and the commands before it have completed
    /// (`clEnqueueBarrierWithWaitList`). Returns the barrier's event.
    ///
    /// # Errors
    /// [`Error::DeviceLost`], or the failure naming the call.
    pub fn compute_waits_for(&self, events: &[&Event]) -> Result<Event> {
        let queue = self.live_queue()?;
        let list: Vec<_> = events.iter().map(|e| e.get()).collect();
        // SAFETY: the events are live (borrowed) for the call, which
        // retains what it needs.
        unsafe { queue.enqueue_barrier_with_wait_list(&list) }
            .map_err(|e| self.failure("clEnqueueBarrierWithWaitList", "a compute barrier", 0, e))
    }

    /// Checks that the device's OpenCL context is usable: not known to be
    /// lost. Every femquad call on the device checks it first.
    ///
    /// # Errors
    /// [`Error::DeviceLost`], naming the call that found the context lost.
    pub fn check_alive(&self) -> Result<()> {
        match self.lost.get() {
            None => Ok(()),
            Some(&(call, code)) => Err(self.lost_error(call, code)),
        }
    }

    /// The queue, for enqueuing femquad's commands: after
    /// [`Device::check_alive`].
    pub(crate) fn live_queue(&self) -> Result<&CommandQueue> {
        self.check_alive()?;
        Ok(&self.queue)
    }

    /// Waits for `event` (a command of `what`).
    pub(crate) fn wait(&self, event: &Event, what: &str) -> Result<()> {
        self.check_alive()?;
        event
            .wait()
            .map_err(|e| self.failure("clWaitForEvents", what, 0, e))
    }

    /// Waits for `event` (a command of `what`) and returns its profiling
    /// start and end in nanoseconds of the device's clock (both queues
    /// profile); `None` if the device reports no times for it.
    ///
    /// # Errors
    /// The device's error while waiting, naming `clWaitForEvents` and
    /// `what`.
    pub fn event_times(&self, event: &Event, what: &str) -> Result<Option<(u64, u64)>> {
        self.wait(event, what)?;
        match (
            event.profiling_command_start(),
            event.profiling_command_end(),
        ) {
            (Ok(start), Ok(end)) => Ok(Some((start, end))),
            _ => Ok(None),
        }
    }

    /// The error for a lost context, first found by `call` failing with `code`.
    fn lost_error(&self, call: &'static str, code: i32) -> Error {
        Error::DeviceLost {
            device: self.info.name.clone(),
            call,
            code,
            name: code_name(code),
        }
    }

    /// Records that `call` found the context lost (the first such call is
    /// kept) and returns the error that every later call returns.
    fn lose(&self, call: &'static str, code: i32) -> Error {
        let &(call, code) = self.lost.get_or_init(|| (call, code));
        self.lost_error(call, code)
    }

    /// Checks that the device can compute in precision `R`.
    pub fn check_precision<R: Real>(&self) -> Result<()> {
        if R::PRECISION.cl_type() == "double" && !self.info.fp64 {
            return Err(Error::NoFp64 {
                device: self.info.name.clone(),
            });
        }
        Ok(())
    }

    /// Returns the kernel `name` of the program built from `source`, building
    /// the program only if no program with the same source was built on this
    /// device before.
    pub fn kernel(&self, source: &str, name: &str) -> Result<Kernel> {
        let program = self.program(source)?;
        Kernel::create(&program, name).map_err(|e| self.failure("clCreateKernel", name, 0, e))
    }

    /// The kernel `name` of `program`, checked to run work-groups of
    /// `threads` on this device (`what` names the kernels in the error).
    ///
    /// # Errors
    /// [`Error::DeviceLimit`] if the device allows fewer threads per
    /// work-group for it; OpenCL errors of the kernel's creation.
    pub(crate) fn kernel_of(
        &self,
        program: &Program,
        name: &str,
        threads: usize,
        what: &'static str,
    ) -> Result<Kernel> {
        let k = Kernel::create(program, name)
            .map_err(|e| self.failure("clCreateKernel", name, 0, e))?;
        let limit = k
            .get_work_group_size(self.info.id)
            .map_err(|e| self.failure("clGetKernelWorkGroupInfo", name, 0, e))?;
        if limit < threads {
            return Err(Error::DeviceLimit {
                device: self.info.name.clone(),
                what,
                needed: threads,
                limit,
            });
        }
        Ok(k)
    }

    /// Returns the program built from `source`, building it only if no
    /// program with the same source was built on this device before (one
    /// request in [`DeviceStats`]: a build or a cache hit).
    pub fn program(&self, source: &str) -> Result<Arc<Program>> {
        self.check_alive()?;
        let key = source_key(source);
        let cached = lock(&self.programs).get(&key).cloned();
        let program = match cached {
            Some(p) => {
                lock(&self.stats).cache_hits += 1;
                p
            }
            None => {
                let (p, log) = self.build(source)?;
                let p = Arc::new(p);
                lock(&self.programs).insert(key, p.clone());
                lock(&self.logs).insert(key, log);
                lock(&self.stats).builds += 1;
                p
            }
        };
        Ok(program)
    }

    /// The compiler's log of the successful build of `source` on this device
    /// (on NVIDIA devices it holds the resource report of `-cl-nv-verbose`:
    /// registers, stack frame, spills), if it was built here.
    pub fn build_log(&self, source: &str) -> Option<String> {
        lock(&self.logs).get(&source_key(source)).cloned()
    }

    /// The program of `source`, from the on-disk cache if it holds it for
    /// this device, driver and options, else compiled (and stored there).
    fn build(&self, source: &str) -> Result<(Program, String)> {
        let options = if self.info.is_nvidia() {
            "-cl-std=CL1.2 -cl-nv-verbose"
        } else {
            "-cl-std=CL1.2"
        };
        let Some(cache) = &self.program_cache else {
            return self.compile(source, options);
        };
        let identity = program_cache::identity(&self.info, options, source);
        match cache.load(&identity) {
            Lookup::Hit(binary) => match self.load_binary(&binary, options) {
                Some(built) => {
                    lock(&self.stats).disk_hits += 1;
                    return Ok(built);
                }
                None => lock(&self.stats).disk_rejected += 1,
            },
            Lookup::Rejected => lock(&self.stats).disk_rejected += 1,
            Lookup::Miss => {}
        }
        let (program, log) = self.compile(source, options)?;
        let binaries = program
            .get_binaries()
            .map_err(|e| self.failure("clGetProgramInfo(CL_PROGRAM_BINARIES)", "program", 0, e))?;
        if let Some(binary) = binaries.first().filter(|b| !b.is_empty()) {
            cache.store(&identity, binary)?;
        }
        Ok((program, log))
    }

    /// The program of a cached `binary`, built with `options`; `None` if
    /// the driver refuses it (then it is compiled from source).
    fn load_binary(&self, binary: &[u8], options: &str) -> Option<(Program, String)> {
        // SAFETY: `binary` is a valid slice for the duration of the call
        // and the device list is the context's own; the driver checks the
        // binary's contents (CL_INVALID_BINARY).
        let mut program = unsafe {
            Program::create_from_binary(&self.context, self.context.devices(), &[binary])
        }
        .ok()?;
        program.build(self.context.devices(), options).ok()?;
        let log = program.get_build_log(self.info.id).unwrap_or_default();
        Some((program, log))
    }

    /// Compiles `source` with `options`.
    fn compile(&self, source: &str, options: &str) -> Result<(Program, String)> {
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| self.failure("clCreateProgramWithSource", "program", 0, e))?;
        if let Err(e) = program.build(self.context.devices(), options) {
            let log = program.get_build_log(self.info.id).unwrap_or_default();
            if e.0 == CL_BUILD_PROGRAM_FAILURE || !log.trim().is_empty() {
                return Err(Error::Build {
                    device: self.info.name.clone(),
                    log,
                    numbered_source: numbered(source),
                });
            }
            return Err(self.failure("clBuildProgram", "program", 0, e));
        }
        let log = program.get_build_log(self.info.id).unwrap_or_default();
        Ok((program, log))
    }

    /// The error for the OpenCL call `call` (on `what`, moving or allocating
    /// `bytes`) failing with `e`, by what the code says ([`classify`]):
    /// * device memory exhausted: [`Error::OutOfDeviceMemory`];
    /// * the context lost (an aborted kernel): [`Error::DeviceLost`], and
    ///   the device remembers it;
    /// * `CL_OUT_OF_RESOURCES`, which NVIDIA returns for every call after a
    ///   kernel aborted but which also means a launch or allocation beyond
    ///   the device's resources: the queue is probed (`clFinish`); if that
    ///   fails too the context is lost, else an allocation or upload is out
    ///   of memory, a launch gets [`Error::LaunchResources`] and anything
    ///   else the plain [`Error::OpenCl`];
    /// * anything else: [`Error::OpenCl`] with the code's name.
    pub(crate) fn failure(
        &self,
        call: &'static str,
        what: &str,
        bytes: usize,
        e: ClError,
    ) -> Error {
        let out_of_memory = || Error::OutOfDeviceMemory {
            device: self.info.name.clone(),
            what: what.to_string(),
            bytes,
            global_mem: self.info.global_mem_size,
        };
        let plain = || Error::OpenCl {
            call,
            code: e.0,
            name: code_name(e.0),
        };
        match classify(e.0) {
            Failure::OutOfMemory => out_of_memory(),
            Failure::Lost => self.lose(call, e.0),
            Failure::OutOfResources
                if self.lost.get().is_some() || self.queue.finish().is_err() =>
            {
                self.lose(call, e.0)
            }
            Failure::OutOfResources => match call {
                "clCreateBuffer" | "clEnqueueWriteBuffer" | "clEnqueueFillBuffer" => {
                    out_of_memory()
                }
                "clEnqueueNDRangeKernel" => Error::LaunchResources {
                    device: self.info.name.clone(),
                    what: what.to_string(),
                    code: e.0,
                    name: code_name(e.0),
                },
                _ => plain(),
            },
            Failure::Other => plain(),
        }
    }

    /// Allocates a device buffer of `len` values (at least one).
    pub(crate) fn alloc<T: Pod>(&self, len: usize, what: &str) -> Result<Buffer<T>> {
        self.check_alive()?;
        let bytes = len.max(1) * std::mem::size_of::<T>();
        if bytes as u64 > self.info.max_mem_alloc_size {
            return Err(Error::OutOfDeviceMemory {
                device: self.info.name.clone(),
                what: format!(
                    "{what} (larger than the device's largest allocation, {} bytes)",
                    self.info.max_mem_alloc_size
                ),
                bytes,
                global_mem: self.info.global_mem_size,
            });
        }
        // SAFETY: no host pointer is passed; the size is non-zero.
        unsafe {
            Buffer::<T>::create(
                &self.context,
                CL_MEM_READ_WRITE,
                len.max(1),
                std::ptr::null_mut(),
            )
        }
        .map_err(|e| self.failure("clCreateBuffer", what, bytes, e))
    }

    /// Writes `data` to the start of `buffer` (blocking).
    pub(crate) fn write<T: Pod>(
        &self,
        buffer: &mut Buffer<T>,
        data: &[T],
        kind: Transfer,
        what: &str,
    ) -> Result<()> {
        self.write_at(buffer, 0, data, kind, what)
    }

    /// Writes `data` to `buffer` from element `offset` on (blocking), e.g.
    /// an array and then its padding, without a padded host copy.
    pub(crate) fn write_at<T: Pod>(
        &self,
        buffer: &mut Buffer<T>,
        offset: usize,
        data: &[T],
        kind: Transfer,
        what: &str,
    ) -> Result<()> {
        self.check_alive()?;
        if data.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::size_of_val(data);
        // SAFETY: blocking write from a live slice into a buffer that holds
        // `offset + data.len()` values (callers allocate buffers for the
        // data they write).
        let event = unsafe {
            self.queue.enqueue_write_buffer(
                buffer,
                CL_BLOCKING,
                offset * std::mem::size_of::<T>(),
                data,
                &[],
            )
        }
        .map_err(|e| self.failure("clEnqueueWriteBuffer", what, bytes, e))?;
        self.record(|| Ok(format!("write {what}")), &event)?;
        let mut s = lock(&self.stats);
        match kind {
            Transfer::Geometry => s.geometry_bytes += bytes as u64,
            Transfer::Coefficients => s.coefficient_bytes += bytes as u64,
            Transfer::Vector => s.vector_bytes += bytes as u64,
        }
        Ok(())
    }

    /// Reads the first `data.len()` values of `buffer` into `data`
    /// (blocking): an array transfer in [`DeviceStats`].
    pub(crate) fn read<T: Pod>(
        &self,
        buffer: &Buffer<T>,
        data: &mut [T],
        what: &str,
    ) -> Result<()> {
        self.check_alive()?;
        if data.is_empty() {
            return Ok(());
        }
        let bytes = std::mem::size_of_val(data);
        // SAFETY: blocking read into a live slice from a buffer at least as
        // large (callers allocate buffers for the data they read).
        let event = unsafe {
            self.queue
                .enqueue_read_buffer(buffer, CL_BLOCKING, 0, data, &[])
        }
        .map_err(|e| self.failure("clEnqueueReadBuffer", what, bytes, e))?;
        self.record(|| Ok(format!("read {what}")), &event)?;
        self.count_read(bytes);
        Ok(())
    }

    /// A marker on the transfer queue after `list` (the event of an empty
    /// transfer).
    pub(crate) fn transfer_marker(
        &self,
        list: &[opencl3::types::cl_event],
        what: &str,
    ) -> Result<Event> {
        // SAFETY: the events are live (the callers borrow them).
        unsafe { self.transfer.enqueue_marker_with_wait_list(list) }
            .map_err(|e| self.failure("clEnqueueMarkerWithWaitList", what, 0, e))
    }

    /// Counts `bytes` of a vector written to the device (for writes
    /// enqueued directly).
    pub(crate) fn count_vector_write(&self, bytes: usize) {
        lock(&self.stats).vector_bytes += bytes as u64;
    }

    /// Counts one kernel enqueued ([`DeviceStats::launches`]).
    pub(crate) fn count_launch(&self) {
        lock(&self.stats).launches += 1;
    }

    /// Counts `bytes` of an array read back from the device (for reads
    /// enqueued directly).
    pub(crate) fn count_read(&self, bytes: usize) {
        let mut s = lock(&self.stats);
        s.read_bytes += bytes as u64;
        s.array_bytes_read += bytes as u64;
    }

    /// Reads `data.len()` values from `buffer` at element `offset`
    /// (blocking): one scalar read in [`DeviceStats`] (a reduction result,
    /// a single entry).
    pub(crate) fn read_scalars<T: Pod>(
        &self,
        buffer: &Buffer<T>,
        offset: usize,
        data: &mut [T],
        what: &str,
    ) -> Result<()> {
        self.check_alive()?;
        let bytes = std::mem::size_of_val(data);
        // SAFETY: blocking read into a live slice; callers keep
        // offset + data.len() within the buffer.
        let event = unsafe {
            self.queue.enqueue_read_buffer(
                buffer,
                CL_BLOCKING,
                offset * std::mem::size_of::<T>(),
                data,
                &[],
            )
        }
        .map_err(|e| self.failure("clEnqueueReadBuffer", what, bytes, e))?;
        self.record(|| Ok(format!("read {what}")), &event)?;
        let mut s = lock(&self.stats);
        s.read_bytes += bytes as u64;
        s.scalar_reads += 1;
        s.scalar_bytes_read += bytes as u64;
        Ok(())
    }
}
