//! The OpenCL backend: device selection, the thread-transposition kernel
//! (template in `kernels/integrate.cl`), its blocking parameters, program
//! cache and launches.

pub mod autotune;
pub mod bandwidth;
pub mod case;
pub mod context;
pub mod device;
pub mod integrator;
pub mod options;
pub mod probe;
pub mod shape;
pub mod source;
pub mod tuning_cache;

pub use case::KernelCase;
pub use context::{Device, DeviceStats};
pub use device::{DEVICE_ENV, DeviceInfo, DeviceKind, DeviceSelector, list_devices};
pub use integrator::OpenClIntegrator;
pub use options::KernelOptions;
pub use shape::{KernelShape, LaunchConfig};
