//! The OpenCL backend: device selection, the thread-transposition kernel
//! (template in `kernels/integrate.cl`), its blocking parameters, program
//! cache and launches; device-resident vectors ([`vector`]); the multigrid
//! kernels ([`multigrid`]: transfers, point-block Jacobi); assembled
//! matrices on the device ([`matrix`]: element matrices summed into CSR,
//! SpMV).

pub mod autotune;
pub mod capture;
pub mod case;
pub mod context;
pub mod device;
mod failure;
pub(crate) mod launch;
pub mod launch_config;
pub mod matrix;
pub mod mesh_data;
pub mod multigrid;
pub mod operator;
pub mod options;
pub mod pinned;
#[cfg(feature = "devtools")]
pub mod probe;
pub mod program_cache;
pub mod shape;
pub(crate) mod source;
#[cfg(any(test, feature = "devtools"))]
pub mod testing;
pub mod timing;
pub mod tune_key;
pub mod tuning_cache;
pub mod vector;

#[cfg(test)]
mod tests;

pub use capture::{CapturedArg, LaunchCapture};
pub use case::KernelCase;
pub use context::{Device, DeviceStats, TraceEntry};
pub use device::{DEVICE_ENV, DeviceInfo, DeviceKind, DeviceSelector, list_devices};
pub use launch_config::{AtomicAdd, GeometryMode, KernelVariant, LaunchConfig, Output};
pub use matrix::DeviceCsr;
pub use operator::{Assembly, OpenClIntegrator, OpenClOperator};
pub use options::KernelOptions;
pub use pinned::PinnedHost;
pub use program_cache::ProgramCache;
pub use shape::KernelShape;
pub use timing::{FacetLaunch, LaunchRecord, Run};
pub use tuning_cache::TuningCache;
pub use vector::{DeviceIndices, DeviceVector};
