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
//! kept.

use opencl3::error_codes::{
    CL_SUCCESS, ClError, DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem};

use super::context::Device;
use super::device::cl_error;
use crate::Result;

/// Sets the arguments of a kernel in order and enqueues it.
pub struct Launch<'k> {
    kernel: &'k Kernel,
    next: u32,
}

impl<'k> Launch<'k> {
    /// Starts setting the arguments of `kernel`.
    pub fn new(kernel: &'k Kernel) -> Self {
        Launch { kernel, next: 0 }
    }

    /// The next argument is a buffer.
    pub fn mem<T>(self, buffer: &Buffer<T>) -> Result<Self> {
        self.value(buffer.get())
    }

    /// The next argument is a value: its Rust type must be the kernel's
    /// (`u64` for `ulong`, `u32` for `uint`, `i32` for `int`, `R` for
    /// `real`).
    pub fn value<T: Copy>(mut self, v: T) -> Result<Self> {
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
        if device.tracing() {
            // the event kept in the timeline (`enqueue` records it)
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
        Ok(event)
    }
}

#[cfg(test)]
mod tests {
    use super::{Buffer, Launch};
    use crate::opencl::context::Transfer;
    use crate::opencl::testing::device;

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
