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
        Ok(event)
    }
}
