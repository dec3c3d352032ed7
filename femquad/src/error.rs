//! The one error type of femquad.
//!
//! Every fallible public function returns [`Result<T>`]. Each variant names the
//! cause precisely enough to act on it: the cell, the argument, the device
//! limit, the file and line.
//!
//! [`PointwiseError`], what pointwise physics reports (re-exported as
//! [`crate::physics::PointwiseError`]), is defined here too, so that this
//! module depends on no other module of the crate.

use std::fmt;
use std::path::PathBuf;

/// Result alias used throughout femquad.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in femquad.
///
/// `Debug` prints the same message as `Display` (see the `Debug` impl), so
/// `fn main() -> femquad::Result<()>` and `unwrap()` show the cause and the
/// remedy.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A mesh cell is invalid: an index out of range, repeated vertices,
    /// negative orientation or (near-)zero volume.
    #[error("invalid mesh: cell {cell}: {reason}")]
    InvalidCell {
        /// Index of the offending cell.
        cell: usize,
        /// What is wrong with it.
        reason: String,
    },

    /// A mesh is invalid as a whole (wrong array lengths, unsupported dimension, …).
    #[error("invalid mesh: {0}")]
    InvalidMesh(String),

    /// An argument has the wrong size, range or value.
    #[error("invalid argument `{name}`: {reason}")]
    InvalidArgument {
        /// Name of the argument (as in the function's signature).
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },

    /// An input array holds NaN or ±∞.
    #[error("argument `{name}` holds a non-finite value ({value}) at index {index}")]
    NonFinite {
        /// Name of the argument.
        name: &'static str,
        /// First offending index.
        index: usize,
        /// The offending value, as text.
        value: String,
    },

    /// Pointwise physics was called with arrays of the wrong shape or an
    /// unsupported dimension.
    #[error("pointwise physics: {0}")]
    Pointwise(#[from] PointwiseError),

    /// No OpenCL runtime (ICD loader or platform) could be found.
    #[error(
        "no OpenCL runtime found ({detail}). Install one: on Debian/Ubuntu \
         `sudo apt-get install ocl-icd-libopencl1 pocl-opencl-icd` gives the PoCL CPU \
         platform; GPU vendors ship their own ICD (e.g. NVIDIA's libnvidia-opencl)"
    )]
    NoOpenClRuntime {
        /// What was tried.
        detail: String,
    },

    /// The device selection matched no device.
    #[error("no OpenCL device matches `{requested}`; available devices:\n{available}")]
    UnknownDevice {
        /// The selection that was asked for.
        requested: String,
        /// One line per available device.
        available: String,
    },

    /// The device cannot do double precision.
    #[error(
        "device `{device}` does not support double precision (cl_khr_fp64); \
         use f32 or another device"
    )]
    NoFp64 {
        /// Device name.
        device: String,
    },

    /// A launch configuration exceeds a device limit.
    #[error("device `{device}`: {what} needs {needed} but the device allows at most {limit}")]
    DeviceLimit {
        /// Device name.
        device: String,
        /// The limited quantity, e.g. "work-group size (threads)".
        what: &'static str,
        /// What the configuration needs.
        needed: usize,
        /// The device's limit.
        limit: usize,
    },

    /// The device ran out of memory while allocating or launching.
    #[error(
        "device `{device}` is out of memory allocating {bytes} bytes for {what} \
         (global memory {global_mem} bytes)"
    )]
    OutOfDeviceMemory {
        /// Device name.
        device: String,
        /// What was being allocated.
        what: String,
        /// Requested size in bytes.
        bytes: usize,
        /// The device's global memory size in bytes.
        global_mem: u64,
    },

    /// The device's OpenCL context can no longer be used: a kernel aborted
    /// (on GPUs typically an out-of-bounds memory access) and the calls that
    /// follow fail. Every later call on the device returns this error.
    #[error(
        "device `{device}`: the OpenCL context is no longer usable: `{call}` failed with \
         {name} ({code}), the sign of a kernel that aborted (e.g. on an out-of-bounds memory \
         access) or of a device failure. Every later call on this device fails with this \
         error: restart the program. If femquad's own kernels aborted, please report it \
         with the case and its launch configuration"
    )]
    DeviceLost {
        /// Device name.
        device: String,
        /// The OpenCL call that found the context lost.
        call: &'static str,
        /// Its error code.
        code: i32,
        /// The code's name.
        name: String,
    },

    /// The device could not launch a kernel for lack of per-work-group
    /// resources (registers, local memory); the context is still usable.
    #[error(
        "device `{device}` could not launch {what}: {name} ({code}): the kernel needs more \
         registers or local memory per work-group than the device provides. Choose a launch \
         configuration with fewer threads per work-group (LaunchConfig: fewer blocks per \
         batch N_bl), or let the autotuner choose one"
    )]
    LaunchResources {
        /// Device name.
        device: String,
        /// The kernel launched.
        what: String,
        /// The OpenCL error code.
        code: i32,
        /// The code's name.
        name: String,
    },

    /// A result computed from finite inputs holds NaN or ±∞: the physics
    /// produced it (the inputs are checked first, and named if at fault).
    #[error(
        "{quantity} of the physics `{physics}` is not finite at dof {dof} (node {node}, \
         component {component}): {value}. Its inputs (u, the auxiliary field, the constants) \
         are finite, so the physics returns NaN or ±∞ at a quadrature point of a cell \
         around that node: check it at that state (a division by zero, the square root or \
         logarithm of a negative number, an overflow)"
    )]
    NonFiniteResult {
        /// What was computed, e.g. "the residual F(u)".
        quantity: String,
        /// The physics' name.
        physics: &'static str,
        /// The first non-finite dof, in the numbering of `u`.
        dof: usize,
        /// Its node.
        node: usize,
        /// Its component.
        component: usize,
        /// The value found there, as text.
        value: String,
    },

    /// The OpenCL compiler rejected a generated program.
    #[error(
        "OpenCL build failed on `{device}`:\n{log}\n--- generated source ---\n{numbered_source}"
    )]
    Build {
        /// Device name.
        device: String,
        /// The compiler's build log.
        log: String,
        /// The generated source with line numbers.
        numbered_source: String,
    },

    /// An OpenCL call failed.
    #[error("OpenCL call `{call}` failed: {code} ({name})")]
    OpenCl {
        /// Which operation failed.
        call: &'static str,
        /// The OpenCL error code.
        code: i32,
        /// The symbolic name of the code.
        name: String,
    },

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },

    /// A mesh file is malformed.
    #[error("{path}:{line}: {reason}")]
    MeshFile {
        /// The file.
        path: PathBuf,
        /// 1-based line number where the problem was found (0 if unknown).
        line: usize,
        /// What is wrong.
        reason: String,
    },

    /// A broken invariant of femquad's own bookkeeping: a bug in femquad,
    /// never caused by the caller's input. `what` says which invariant.
    #[error(
        "internal error in femquad (a bug, not caused by your input): {what}. \
         Please report it with the program that triggered it"
    )]
    Internal {
        /// The invariant that failed.
        what: String,
    },

    /// An error with what femquad was doing when it happened (`context`),
    /// chained to its cause (`source`, also [`std::error::Error::source`]).
    #[error("{context}: {source}")]
    Context {
        /// What was being done, e.g. "loading the autotune cache".
        context: String,
        /// The error it met.
        source: Box<Error>,
    },

    /// Another process of a distributed (MPI) computation failed: every
    /// rank returns this error (the failing rank its own error) instead of
    /// waiting for a message that never comes. Made by `femquad-mpi`.
    #[error("rank {rank} of {n_ranks} failed: {message}")]
    RankFailed {
        /// The failing rank (the lowest, if several failed).
        rank: usize,
        /// The number of ranks.
        n_ranks: usize,
        /// That rank's error message.
        message: String,
    },

    /// An iterative solver did not converge.
    #[error(
        "{solver} did not converge in {iterations} iterations: residual {residual:e} > tolerance {tolerance:e}"
    )]
    NoConvergence {
        /// Solver name.
        solver: &'static str,
        /// Iterations performed.
        iterations: usize,
        /// Final residual norm.
        residual: f64,
        /// Requested tolerance.
        tolerance: f64,
    },
}

impl fmt::Debug for Error {
    /// The message of [`Display`](fmt::Display), remedy included: this is
    /// what a `main` returning [`Result`] prints on failure (`Error: …`),
    /// and what `unwrap()` and `{:?}` show — a derived `Debug` would print
    /// the variant's fields and drop the text around them (the apt hint of
    /// [`Error::NoOpenClRuntime`], the meaning of a `NoConvergence`'s
    /// numbers). Match on the variant to read the structured fields.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl Error {
    /// This error with `context` (what was being done) chained in front:
    /// an [`Error::Context`] whose source is `self`.
    pub fn context(self, context: impl Into<String>) -> Self {
        Error::Context {
            context: context.into(),
            source: Box::new(self),
        }
    }

    /// Shorthand for [`Error::Internal`]: the invariant `what` of femquad's
    /// own bookkeeping failed.
    pub fn internal(what: impl Into<String>) -> Self {
        Error::Internal { what: what.into() }
    }

    /// Shorthand for [`Error::InvalidArgument`].
    pub fn arg(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidArgument {
            name,
            reason: reason.into(),
        }
    }
}

/// A pointwise evaluation received arguments it cannot use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PointwiseError {
    /// An argument slice has the wrong length.
    Length {
        /// Physics name.
        physics: &'static str,
        /// Argument name (`u`, `grad_u`, `f1`, …).
        argument: &'static str,
        /// Entries expected.
        expected: usize,
        /// Entries received.
        got: usize,
    },
    /// The physics does not support this spatial dimension.
    Dimension {
        /// Physics name.
        physics: &'static str,
        /// The dimension asked for.
        dim: usize,
    },
    /// The physics provides no derivatives (a hand-written `Pointwise`
    /// implementation that does not implement them).
    NoDerivatives {
        /// Physics name.
        physics: &'static str,
    },
}

impl fmt::Display for PointwiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointwiseError::Length {
                physics,
                argument,
                expected,
                got,
            } => write!(
                f,
                "`{physics}`: argument `{argument}` has {got} entries, expected {expected}"
            ),
            PointwiseError::Dimension { physics, dim } => {
                write!(f, "`{physics}` does not support dimension {dim}")
            }
            PointwiseError::NoDerivatives { physics } => write!(
                f,
                "`{physics}` provides no derivatives: write it with #[pointwise]"
            ),
        }
    }
}

impl std::error::Error for PointwiseError {}

/// Checks that `values` has `expected` entries.
pub(crate) fn check_len<T>(name: &'static str, values: &[T], expected: usize) -> Result<()> {
    if values.len() == expected {
        Ok(())
    } else {
        Err(Error::arg(
            name,
            format!("expected {expected} entries, got {}", values.len()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `Debug` is the `Display` message, remedy included, for every kind
    /// of field: the text of `fn main() -> femquad::Result<()>` on failure.
    #[test]
    fn debug_prints_the_message_with_its_remedy() {
        let cases = [
            Error::NoOpenClRuntime {
                detail: "libOpenCL.so.1 not found".into(),
            },
            Error::NoConvergence {
                solver: "GMRES",
                iterations: 7,
                residual: 0.5,
                tolerance: 1e-8,
            },
            Error::arg("tol", "must be positive"),
            Error::NonFinite {
                name: "u",
                index: 3,
                value: "NaN".into(),
            },
            Error::Pointwise(PointwiseError::Dimension {
                physics: "lame",
                dim: 4,
            }),
        ];
        for e in &cases {
            assert_eq!(format!("{e:?}"), e.to_string());
            assert_eq!(format!("{e:#?}"), e.to_string());
        }
        let debug = format!("{:?}", cases[0]);
        assert!(
            debug.contains("libOpenCL.so.1 not found")
                && debug.contains("sudo apt-get install ocl-icd-libopencl1 pocl-opencl-icd"),
            "{debug}"
        );
        assert_eq!(
            format!("{:?}", cases[1]),
            "GMRES did not converge in 7 iterations: residual 5e-1 > tolerance 1e-8"
        );
        // a bug of femquad's says so, asks for a report and names the invariant
        assert_eq!(
            Error::internal("the coarse vectors are in use").to_string(),
            "internal error in femquad (a bug, not caused by your input): the coarse \
             vectors are in use. Please report it with the program that triggered it"
        );
        // context is chained in front of its cause, which stays reachable
        let chained = Error::arg("tol", "must be positive").context("the outer solve");
        assert_eq!(
            chained.to_string(),
            "the outer solve: invalid argument `tol`: must be positive"
        );
        let source = std::error::Error::source(&chained).map(|s| s.to_string());
        assert_eq!(
            source.as_deref(),
            Some("invalid argument `tol`: must be positive")
        );
        // what `fn main() -> femquad::Result<()>` prints on failure: `Error: {:?}`
        fn main_like() -> Result<()> {
            Err(Error::arg("mesh", "no cells"))
        }
        assert_eq!(
            format!("Error: {:?}", main_like().unwrap_err()),
            "Error: invalid argument `mesh`: no cells"
        );
    }
}
