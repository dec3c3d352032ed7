//! Tests of how a [`Device`] reports failures: an out-of-resources code
//! on a live device names what ran out, a lost context fails every later
//! call (vectors, allocations, programs) with its first cause. They live
//! beside the modules they use (`context`, `vector`), not inside either.

use std::sync::Arc;

use opencl3::error_codes::{
    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_INVALID_VALUE,
    CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, ClError,
};

use super::DeviceVector;
use super::context::*;
use crate::Error;

/// A device of its own (its own context): the tests' device
/// ([`crate::opencl::testing::device`]).
fn device() -> Arc<Device> {
    crate::opencl::testing::device()
}

#[test]
fn out_of_resources_on_a_live_device_says_what_ran_out() {
    let d = device();
    let res = || ClError(CL_OUT_OF_RESOURCES);
    // a launch: the kernel's per-work-group resources, not memory
    let e = d.failure("clEnqueueNDRangeKernel", "the integration kernel", 0, res());
    let text = e.to_string();
    assert!(
        matches!(e, Error::LaunchResources { code: -5, .. }),
        "{e:?}"
    );
    assert!(
        text.contains("could not launch the integration kernel: CL_OUT_OF_RESOURCES (-5)")
            && text.contains("fewer threads per work-group"),
        "{text}"
    );
    // a download: the call's error as it is, not "out of memory allocating"
    let e = d.failure("clEnqueueReadBuffer", "vector download", 85288, res());
    let text = e.to_string();
    assert!(matches!(e, Error::OpenCl { code: -5, .. }), "{e:?}");
    assert!(!text.contains("out of memory"), "{text}");
    // an allocation or upload: memory
    for call in ["clCreateBuffer", "clEnqueueWriteBuffer"] {
        let e = d.failure(call, "vector upload", 800, res());
        assert!(
            matches!(e, Error::OutOfDeviceMemory { bytes: 800, .. }),
            "{e:?}"
        );
    }
    let e = d.failure(
        "clCreateBuffer",
        "x",
        8,
        ClError(CL_MEM_OBJECT_ALLOCATION_FAILURE),
    );
    assert!(matches!(e, Error::OutOfDeviceMemory { .. }), "{e:?}");
    let e = d.failure("clSetKernelArg", "x", 0, ClError(CL_INVALID_VALUE));
    assert_eq!(
        e.to_string(),
        "OpenCL call `clSetKernelArg` failed: -30 (CL_INVALID_VALUE)"
    );
    // none of these lost the device
    d.check_alive().unwrap();
    let v = DeviceVector::from_host(&d, &[1.0f64, 2.0]).unwrap();
    assert_eq!(v.dot(&v).unwrap(), 5.0);
}

#[test]
fn a_lost_context_fails_every_later_call_with_its_first_cause() {
    let d = device();
    let v = DeviceVector::from_host(&d, &[1.0f64, 2.0]).unwrap();
    // the case on the H100: the build after an aborted kernel
    let e = d.failure("clBuildProgram", "program", 0, ClError(-9999));
    let text = e.to_string();
    assert!(
        matches!(
            e,
            Error::DeviceLost {
                call: "clBuildProgram",
                code: -9999,
                ..
            }
        ),
        "{e:?}"
    );
    assert!(
        text.contains("OpenCL context is no longer usable")
            && text.contains("`clBuildProgram` failed with NVIDIA: illegal memory access")
            && text.contains("restart the program"),
        "{text}"
    );
    // every later call fails at once, naming the first cause
    let later = [
        v.to_host().unwrap_err(),
        v.dot(&v).unwrap_err(),
        DeviceVector::from_host(&d, &[1.0f64]).unwrap_err(),
        d.alloc::<f64>(4, "x").map(drop).unwrap_err(),
        d.program("__kernel void k() {}").map(drop).unwrap_err(),
        d.check_alive().unwrap_err(),
        // what NVIDIA returns next: still the lost context
        d.failure("clEnqueueReadBuffer", "vector download", 85288, ClError(-5)),
    ];
    for e in later {
        assert!(
            matches!(
                e,
                Error::DeviceLost {
                    call: "clBuildProgram",
                    code: -9999,
                    ..
                }
            ),
            "{e:?}"
        );
    }
}

/// Issue 19's intermittent SIGSEGV: a program returned while PoCL's
/// worker thread still ran a command femquad had enqueued (compiling
/// its kernel with LLVM), and `exit` destroyed LLVM's state under it.
/// Dropping the device must wait for its commands.
#[test]
fn dropping_the_device_waits_for_its_commands() {
    let d = device();
    let source = "__kernel void busy(__global float *x, const int n) {
        float s = x[get_global_id(0)];
        for (int i = 0; i < n; ++i) s = s * 0.999999f + 1.0f;
        x[get_global_id(0)] = s;
    }";
    let kernel = d.kernel(source, "busy").unwrap();
    let mut x = d.alloc::<f32>(1024, "x").unwrap();
    d.write(&mut x, &[0.0; 1024], Transfer::Vector, "x")
        .unwrap();
    // the arguments match `busy`; x holds 1024 floats
    let event = crate::opencl::launch::Launch::new(&kernel)
        .mem(&x)
        .and_then(|l| l.value(2_000_000i32))
        .and_then(|l| l.enqueue(&d, 1024, None, "busy"))
        .unwrap();
    drop((kernel, x));
    assert_eq!(Arc::strong_count(&d), 1);
    drop(d);
    // the event outlives the device: its command is complete
    let status = event.command_execution_status().unwrap();
    assert_eq!(status.0, opencl3::event::CL_COMPLETE, "{status}");
}

#[test]
fn a_failed_command_in_a_wait_loses_the_context() {
    let d = device();
    let e = d.failure(
        "clWaitForEvents",
        "the residual",
        0,
        ClError(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST),
    );
    assert!(matches!(e, Error::DeviceLost { code: -14, .. }), "{e:?}");
    assert!(matches!(d.check_alive(), Err(Error::DeviceLost { .. })));
}

/// [`Launch::submit`](crate::opencl::launch::Launch::submit) asks for no
/// event: its commands still run, in queue order (a later read sees each
/// of them), and a launch the runtime refuses is an error naming it and
/// the call, like [`Launch::enqueue`](crate::opencl::launch::Launch::enqueue)'s.
#[test]
fn a_launch_without_an_event_runs_in_order_and_names_its_failure() {
    use crate::opencl::launch::Launch;
    let d = device();
    let source = "__kernel void twice_plus(__global float *x, const float c) {
        x[get_global_id(0)] = 2.0f * x[get_global_id(0)] + c;
    }";
    let kernel = d.kernel(source, "twice_plus").unwrap();
    let mut x = d.alloc::<f32>(64, "x").unwrap();
    d.write(&mut x, &[1.0; 64], Transfer::Vector, "x").unwrap();
    // the arguments match `twice_plus`; x holds 64 floats. Not commutative:
    // only the queue's order gives ((1·2 + 1)·2 + 2)·2 + 3 = 19.
    for c in [1.0f32, 2.0, 3.0] {
        Launch::new(&kernel)
            .mem(&x)
            .and_then(|l| l.value(c))
            .and_then(|l| l.submit(&d, 64, Some(16), "twice_plus"))
            .unwrap();
    }
    let mut back = vec![0.0f32; 64];
    d.read(&x, &mut back, "x").unwrap();
    assert!(back.iter().all(|&v| v == 19.0), "{back:?}");
    // 64 work-items in groups of 48: CL_INVALID_WORK_GROUP_SIZE
    let e = Launch::new(&kernel)
        .mem(&x)
        .and_then(|l| l.value(0.0f32))
        .and_then(|l| l.submit(&d, 64, Some(48), "the twice_plus test kernel"))
        .unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("clEnqueueNDRangeKernel") && text.contains("CL_INVALID_WORK_GROUP_SIZE"),
        "{text}"
    );
    assert!(d.check_alive().is_ok());
}
