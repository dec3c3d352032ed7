//! The one way femquad launches an OpenCL kernel ([`Launch`]): the
//! arguments set in the order of the kernel's signature, then one
//! `clEnqueueNDRangeKernel` whose failure names what was launched. Every
//! launch of the library goes through it (the test `one_launch_helper`
//! checks that no other file enqueues a kernel).
//!
//! A launch asks for an event only where its caller keeps one
//! ([`Launch::enqueue`]: a timed evaluation, a wait): on NVIDIA's OpenCL
//! an enqueue that returns an event costs the host ~12 µs on femquad's
//! profiling queue, one without ~4.5 µs (`apply_overhead`'s launch floor,
//! H100), and the small levels of a V-cycle are made of such launches.
//! Everything else is [`Launch::submit`]: the in-order queue orders it.
//!
//! While the device records a timeline ([`Device::start_trace`]), every
//! launch asks for its event and the device keeps it, named by the
//! kernel's function name ([`Device::take_trace`]); otherwise nothing is
//! kept. While it captures launches ([`Device::start_capture`]), every
//! launch records its arguments and is captured (`opencl::capture`).

use opencl3::error_codes::{
    CL_SUCCESS, ClError, DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::event::Event;
use opencl3::kernel::{CL_KERNEL_PROGRAM, Kernel};
use opencl3::memory::{Buffer, CL_MEM_SIZE, ClMem};
use opencl3::program::CL_PROGRAM_BINARIES;
use opencl3::types::{CL_BLOCKING, cl_mem, cl_program};

use super::capture::{self, ArgRecord, CapturedArg, LaunchCapture};
use super::context::Device;
use super::device::cl_error;
use crate::Result;

/// Sets the arguments of a kernel in order and enqueues it.
pub struct Launch<'k> {
    kernel: &'k Kernel,
    next: u32,
    /// The arguments as set, kept only while a device captures launches.
    recorded: Option<Vec<ArgRecord>>,
}

impl<'k> Launch<'k> {
    /// Starts setting the arguments of `kernel`.
    pub fn new(kernel: &'k Kernel) -> Self {
        Launch {
            kernel,
            next: 0,
            recorded: capture::any_capturing().then(Vec::new),
        }
    }

    /// The next argument is a buffer.
    pub fn mem<T>(mut self, buffer: &Buffer<T>) -> Result<Self> {
        let mem = buffer.get();
        if let Some(args) = self.recorded.as_mut() {
            args.push(ArgRecord::Mem(mem, std::any::type_name::<T>()));
        }
        self.set(mem)
    }

    /// The next argument is a value: its Rust type must be the kernel's
    /// (`u64` for `ulong`, `u32` for `uint`, `i32` for `int`, `R` for
    /// `real`).
    pub fn value<T: bytemuck::NoUninit>(mut self, v: T) -> Result<Self> {
        if let Some(args) = self.recorded.as_mut() {
            args.push(ArgRecord::Value(bytemuck::bytes_of(&v).to_vec()));
        }
        self.set(v)
    }

    fn set<T: Copy>(mut self, v: T) -> Result<Self> {
        // SAFETY: the callers pass arguments in the order and with the
        // types of the kernel signatures (kernels/*.cl, the generated
        // sources); `v` outlives the call, which copies it.
        unsafe { self.kernel.set_arg(self.next, &v) }.map_err(cl_error("clSetKernelArg"))?;
        self.next += 1;
        Ok(self)
    }

    /// Enqueues `global` work-items in work-groups of `local` (`None`: the
    /// runtime chooses) on `device`'s queue without an event (the in-order
    /// queue orders it before every later command); a failure names `what`.
    ///
    /// # Errors
    /// [`crate::Error::DeviceLost`] or the launch failure naming `what`.
    pub fn submit(
        self,
        device: &Device,
        global: usize,
        local: Option<usize>,
        what: &str,
    ) -> Result<()> {
        if device.tracing() || self.recorded.is_some() {
            // the event kept in the timeline or the launch captured
            // (`enqueue` does both)
            return self.enqueue(device, global, local, what).map(drop);
        }
        let queue = device.live_queue()?;
        let local_ptr = local
            .as_ref()
            .map_or(std::ptr::null(), |l| l as *const usize);
        let failed = |code| device.failure("clEnqueueNDRangeKernel", what, 0, ClError(code));
        // The entry point opencl3 calls, from the library it loaded (the
        // device is open, so it is loaded).
        let runtime = cl3::load_library()
            .as_ref()
            .map_err(|_| failed(DLOPEN_RUNTIME_LOAD_FAILED))?;
        // The arguments are those of `enqueue` below (same safety: every
        // argument set, sizes outliving the call, buffers holding what the
        // work-items index), with no event asked for.
        match runtime.clEnqueueNDRangeKernel(
            queue.get(),
            self.kernel.get(),
            1,
            std::ptr::null(),
            &global,
            local_ptr,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        ) {
            Some(CL_SUCCESS) => {
                device.count_launch();
                Ok(())
            }
            Some(code) => Err(failed(code)),
            None => Err(failed(DLOPEN_FUNCTION_NOT_AVAILABLE)),
        }
    }

    /// Enqueues `global` work-items in work-groups of `local` (`None`: the
    /// runtime chooses) on `device`'s queue and returns the command's
    /// event, for a caller that times or waits for it ([`Launch::submit`]
    /// otherwise: an event costs the host time); a failure names `what`.
    ///
    /// # Errors
    /// [`crate::Error::DeviceLost`] or the launch failure naming `what`.
    pub fn enqueue(
        self,
        device: &Device,
        global: usize,
        local: Option<usize>,
        what: &str,
    ) -> Result<Event> {
        let captured = match self.recorded {
            Some(args) if device.capturing() => Some(capture_before(device, args, what)?),
            _ => None,
        };
        let queue = device.live_queue()?;
        let local_ptr = local
            .as_ref()
            .map_or(std::ptr::null(), |l| l as *const usize);
        // SAFETY: every argument was set (the callers set the kernel's
        // whole signature); the sizes outlive the call; the buffers the
        // kernel indexes hold what its work-items read and write (each
        // caller's invariant, stated where it builds the launch).
        let event = unsafe {
            queue.enqueue_nd_range_kernel(
                self.kernel.get(),
                1,
                std::ptr::null(),
                &global,
                local_ptr,
                &[],
            )
        }
        .map_err(|e| device.failure("clEnqueueNDRangeKernel", what, 0, e))?;
        device.count_launch();
        let kernel = self.kernel;
        device.record(
            || {
                kernel
                    .function_name()
                    .map_err(|e| device.failure("clGetKernelInfo", what, 0, e))
            },
            &event,
        )?;
        if let Some(before) = captured {
            capture_after(device, before, kernel, &event, (global, local), what)?;
        }
        Ok(event)
    }
}

/// An argument of a captured launch as read before it ran: a buffer's with
/// its contents.
enum BeforeArg {
    Value(Vec<u8>),
    Buffer(cl_mem, &'static str, Vec<u8>),
}

/// Before a launch on a capturing device: finishes the queue and reads every
/// buffer argument.
fn capture_before(device: &Device, args: Vec<ArgRecord>, what: &str) -> Result<Vec<BeforeArg>> {
    device
        .live_queue()?
        .finish()
        .map_err(|e| device.failure("clFinish", what, 0, e))?;
    args.into_iter()
        .map(|a| {
            Ok(match a {
                ArgRecord::Value(bytes) => BeforeArg::Value(bytes),
                ArgRecord::Mem(mem, element) => {
                    BeforeArg::Buffer(mem, element, read_whole(device, mem, what)?)
                }
            })
        })
        .collect()
}

/// After the launch (`event`) of `kernel` with `(global, local)` work-items:
/// waits for it, reads the buffers again and keeps the capture on `device`.
fn capture_after(
    device: &Device,
    before: Vec<BeforeArg>,
    kernel: &Kernel,
    event: &Event,
    (global, local): (usize, Option<usize>),
    what: &str,
) -> Result<()> {
    let (start, end) = device.event_times(event, what)?.unwrap_or((0, 0));
    let name = kernel
        .function_name()
        .map_err(|e| device.failure("clGetKernelInfo", what, 0, e))?;
    let program = cl3::kernel::get_kernel_info(kernel.get(), CL_KERNEL_PROGRAM)
        .map_err(|e| device.failure("clGetKernelInfo", what, 0, ClError(e)))?;
    let program = isize::from(program) as cl_program;
    let binaries: Vec<Vec<u8>> = cl3::program::get_program_info(program, CL_PROGRAM_BINARIES)
        .map_err(|e| device.failure("clGetProgramInfo", what, 0, ClError(e)))?
        .into();
    let args = before
        .into_iter()
        .map(|a| {
            Ok(match a {
                BeforeArg::Value(bytes) => CapturedArg::Value(bytes),
                BeforeArg::Buffer(mem, element, before) => CapturedArg::Buffer {
                    element,
                    before,
                    after: read_whole(device, mem, what)?,
                },
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let capture = LaunchCapture {
        kernel: name,
        what: what.to_string(),
        binary: binaries.into_iter().next().unwrap_or_default(),
        global,
        local,
        args,
        nanoseconds: end.saturating_sub(start),
    };
    if let Some(captures) = device.captures().as_mut() {
        captures.push(capture);
    }
    Ok(())
}

/// The whole contents of the buffer `mem` (a blocking read on the compute
/// queue).
fn read_whole(device: &Device, mem: cl_mem, what: &str) -> Result<Vec<u8>> {
    let size = cl3::memory::get_mem_object_info(mem, CL_MEM_SIZE)
        .map_err(|e| device.failure("clGetMemObjectInfo", what, 0, ClError(e)))?;
    let size = usize::from(size);
    let mut bytes = vec![0u8; size];
    // SAFETY: `mem` is a buffer argument of the launch being captured (alive
    // while its `Launch` borrows it) of `size` bytes; `bytes` holds `size`
    // bytes and outlives the blocking read.
    let event = unsafe {
        cl3::command_queue::enqueue_read_buffer(
            device.live_queue()?.get(),
            mem,
            CL_BLOCKING,
            0,
            size,
            bytes.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
        )
    }
    .map_err(|e| device.failure("clEnqueueReadBuffer", what, size, ClError(e)))?;
    // the read has completed (blocking); the event's handle is ours
    drop(Event::new(event));
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::{Buffer, Launch};
    use crate::opencl::context::Transfer;
    use crate::opencl::testing::device;

    fn bytes<T: bytemuck::NoUninit>(v: &[T]) -> Vec<u8> {
        bytemuck::cast_slice(v).to_vec()
    }

    /// The CSV of a timeline: the header, one line per entry in order, a
    /// name with a comma or a quote quoted (its quotes doubled).
    #[test]
    fn a_trace_as_csv_quotes_what_needs_it() {
        use crate::opencl::TraceEntry;
        let entry = |name: &str, t: u64| TraceEntry {
            name: name.into(),
            queued: t,
            start: t + 1,
            end: t + 5,
        };
        let trace = [
            entry("spmv", 10),
            entry("read a, b", 20),
            entry("say \"x\"", 30),
        ];
        assert_eq!(
            TraceEntry::csv(&trace),
            "kernel,queued_ns,start_ns,end_ns\nspmv,10,11,15\n\"read a, b\",20,21,25\n\
             \"say \"\"x\"\"\",30,31,35\n"
        );
        assert_eq!(TraceEntry::csv(&[]), "kernel,queued_ns,start_ns,end_ns\n");
    }

    /// A captured launch keeps the kernel's name, the description, the
    /// sizes, the program binary, each value's bytes and each buffer's
    /// contents before and after, in signature order; launches before
    /// `start_capture` and after `take_captures` are not captured.
    #[test]
    fn a_capture_keeps_the_sizes_arguments_and_buffers_before_and_after() {
        let d = device();
        let source = "__kernel void axpb(__global float *x, __global const uint *b, const float a,
                                         const uint n) {
              const uint i = get_global_id(0);
              if (i < n) x[i] = a * x[i] + (float)b[i];
            }";
        let k = d.kernel(source, "axpb").unwrap();
        let x0: Vec<f32> = (0..64).map(|i| 0.5 + i as f32).collect();
        let b: Vec<u32> = (0..64).map(|i| 3 * i).collect();
        let mut x = d.alloc::<f32>(64, "x").unwrap();
        let mut bb = d.alloc::<u32>(64, "b").unwrap();
        d.write(&mut x, &x0, Transfer::Vector, "x").unwrap();
        d.write(&mut bb, &b, Transfer::Vector, "b").unwrap();
        // the arguments match `axpb`'s signature; x and b hold 64 values
        let run = || {
            Launch::new(&k)
                .mem(&x)
                .and_then(|l| l.mem(&bb))
                .and_then(|l| l.value(2.0f32))
                .and_then(|l| l.value(60u32))
                .and_then(|l| l.submit(&d, 64, Some(32), "x = 2x + b"))
                .unwrap();
        };
        run();
        assert_eq!(d.take_captures(), vec![]);
        d.start_capture();
        run();
        let captures = d.take_captures();
        run();
        assert_eq!(d.take_captures(), vec![]);

        // one launch: x = 2x + b on the first 60 entries
        let step = |x: &[f32]| -> Vec<f32> {
            (0..64)
                .map(|i| {
                    if i < 60 {
                        2.0 * x[i] + b[i] as f32
                    } else {
                        x[i]
                    }
                })
                .collect()
        };
        let once = step(&x0);
        let twice = step(&once);
        assert_eq!(captures.len(), 1);
        let c = &captures[0];
        assert_eq!(
            (c.kernel.as_str(), c.what.as_str(), c.global, c.local),
            ("axpb", "x = 2x + b", 64, Some(32))
        );
        assert!(!c.binary.is_empty());
        assert_eq!(
            c.args,
            vec![
                super::CapturedArg::Buffer {
                    element: "f32",
                    before: bytes(&once),
                    after: bytes(&twice),
                },
                super::CapturedArg::Buffer {
                    element: "u32",
                    before: bytes(&b),
                    after: bytes(&b),
                },
                super::CapturedArg::Value(bytes(&[2.0f32])),
                super::CapturedArg::Value(bytes(&[60u32])),
            ]
        );
    }

    /// A timeline names the launches (both helpers) and the transfers in
    /// the order they were enqueued, each with `queued ≤ start ≤ end` and
    /// the starts increasing (an in-order queue); without
    /// `start_trace`, and after `take_trace`, it is empty.
    #[test]
    fn a_trace_names_the_commands_in_order_with_their_times() {
        let d = device();
        let source = "__kernel void add_one(__global float *x) { x[get_global_id(0)] += 1.0f; }
            __kernel void twice(__global float *x) { x[get_global_id(0)] *= 2.0f; }";
        let (one, two) = (
            d.kernel(source, "add_one").unwrap(),
            d.kernel(source, "twice").unwrap(),
        );
        let mut x = d.alloc::<f32>(256, "x").unwrap();
        // the arguments match `add_one` and `twice`; x holds 256 floats
        let run = |k, x: &Buffer<f32>| {
            Launch::new(k)
                .mem(x)
                .and_then(|l| l.submit(&d, 256, None, "a test kernel"))
                .unwrap();
        };
        run(&one, &x);
        assert!(!d.tracing());
        assert_eq!(d.take_trace().unwrap(), vec![]);
        d.start_trace();
        assert!(d.tracing());
        d.write(&mut x, &[1.0; 256], Transfer::Vector, "x").unwrap();
        run(&one, &x);
        run(&two, &x);
        let kept = Launch::new(&one)
            .mem(&x)
            .and_then(|l| l.enqueue(&d, 256, None, "a test kernel"))
            .unwrap();
        run(&two, &x);
        let mut back = vec![0.0f32; 256];
        d.read(&x, &mut back, "x back").unwrap();
        assert!(back.iter().all(|&v| v == 10.0), "{back:?}"); // ((1+1)·2+1)·2
        let trace = d.take_trace().unwrap();
        let names: Vec<&str> = trace.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "write x",
                "add_one",
                "twice",
                "add_one",
                "twice",
                "read x back"
            ]
        );
        for e in &trace {
            assert!(e.queued <= e.start && e.start <= e.end, "{e:?}");
        }
        for p in trace.windows(2) {
            assert!(p[0].start <= p[1].start, "{p:?}");
        }
        // the caller's event is still its own
        assert!(d.event_times(&kept, "add_one").unwrap().is_some());
        // stopped: nothing more is recorded
        assert!(!d.tracing());
        run(&two, &x);
        assert_eq!(d.take_trace().unwrap(), vec![]);
    }
}
