//! What an OpenCL error code says about the device: the translation behind
//! [`Device`](super::Device)'s errors (`Device::failure`).
//!
//! The codes that matter are the ones a device returns when a kernel
//! aborted (on NVIDIA: an out-of-bounds access), because the OpenCL context
//! is unusable from then on and every later call fails — often with a code
//! that names something else:
//!
//! | code | meaning here |
//! |---|---|
//! | `CL_MEM_OBJECT_ALLOCATION_FAILURE` (−4) | device memory exhausted |
//! | `CL_OUT_OF_RESOURCES` (−5) | ambiguous: a launch or allocation beyond the device's resources, *or* (NVIDIA, every call after a kernel aborted) a lost context |
//! | `CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST` (−14) | a command waited for failed: a kernel aborted |
//! | −9999 (NVIDIA) | an illegal memory access in a kernel: the context is lost |

use opencl3::error_codes::{
    CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, CL_MEM_OBJECT_ALLOCATION_FAILURE,
    CL_OUT_OF_RESOURCES,
};

/// NVIDIA's code for an illegal memory access in a kernel (outside the
/// OpenCL standard's codes; its calls return it after a kernel aborted).
pub(crate) const NVIDIA_ILLEGAL_ACCESS: i32 = -9999;

/// What a failed OpenCL call's code says about the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Device memory is exhausted.
    OutOfMemory,
    /// A kernel aborted: the context is lost and every later call fails.
    Lost,
    /// `CL_OUT_OF_RESOURCES`: either a launch or allocation beyond the
    /// device's resources, or a lost context; the device tells which by
    /// whether its queue still finishes.
    OutOfResources,
    /// Any other failure of the call itself.
    Other,
}

/// What `code` says about the device.
pub(crate) fn classify(code: i32) -> Failure {
    match code {
        CL_MEM_OBJECT_ALLOCATION_FAILURE => Failure::OutOfMemory,
        CL_OUT_OF_RESOURCES => Failure::OutOfResources,
        CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST | NVIDIA_ILLEGAL_ACCESS => Failure::Lost,
        _ => Failure::Other,
    }
}

/// The symbolic name of `code` (the OpenCL name, or what a vendor's code
/// means).
pub(crate) fn code_name(code: i32) -> String {
    match code {
        NVIDIA_ILLEGAL_ACCESS => "NVIDIA: illegal memory access in a kernel".to_string(),
        _ => opencl3::error_codes::ClError(code).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_classified_by_what_they_say_about_the_device() {
        assert_eq!(classify(-4), Failure::OutOfMemory);
        assert_eq!(classify(-5), Failure::OutOfResources);
        assert_eq!(classify(-14), Failure::Lost);
        assert_eq!(classify(-9999), Failure::Lost);
        // the caller's own mistakes and other failures are not the device's state
        for code in [-6, -30, -36, -38, -48, -52, -54, -11, -9998] {
            assert_eq!(classify(code), Failure::Other, "{code}");
        }
    }

    #[test]
    fn codes_have_names() {
        assert_eq!(code_name(-5), "CL_OUT_OF_RESOURCES");
        assert_eq!(code_name(-4), "CL_MEM_OBJECT_ALLOCATION_FAILURE");
        assert_eq!(
            code_name(-14),
            "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST"
        );
        assert!(code_name(-9999).contains("illegal memory access"));
    }
}
