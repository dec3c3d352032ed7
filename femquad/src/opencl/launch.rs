//! The one way femquad launches an OpenCL kernel ([`Launch`]): the
//! arguments set in the order of the kernel's signature, then one
//! `clEnqueueNDRangeKernel` whose failure names what was launched. Every
//! launch of the library goes through it (the test `one_launch_helper`
//! checks that no other file enqueues a kernel).

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
    /// runtime chooses) on `device`'s queue and returns the command's
    /// event; a failure names `what`.
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
