//! OpenCL device discovery and selection.
//!
//! [`list_devices`] enumerates every device of every platform. [`DeviceSelector::pick`]
//! picks one: by default the first GPU (then accelerator, then CPU), so a
//! machine with an NVIDIA GPU and the PoCL CPU platform runs on the GPU.
//! The choice can be forced with the environment variable
//! [`DEVICE_ENV`] (`FEMQUAD_DEVICE`) or through [`DeviceSelector`]:
//! `gpu`, `cpu`, `accelerator`, an index into [`list_devices`], or a
//! case-insensitive substring of the device name, platform name or platform
//! vendor (`pocl`, `nvidia`, `H100`).

use std::fmt;

use opencl3::device::{
    CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
    Device as ClDevice,
};
use opencl3::platform::get_platforms;
use opencl3::types::cl_device_id;

use crate::{Error, Result};

/// Environment variable that selects the device (see [`DeviceSelector::parse`]).
pub const DEVICE_ENV: &str = "FEMQUAD_DEVICE";

/// Kind of an OpenCL device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DeviceKind {
    /// A GPU (preferred).
    Gpu,
    /// An accelerator.
    Accelerator,
    /// A CPU (e.g. PoCL).
    Cpu,
    /// Anything else.
    Other,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "GPU",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Other => "other",
        })
    }
}

/// What femquad needs to know about a device.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Index in [`list_devices`].
    pub index: usize,
    /// Platform name.
    pub platform: String,
    /// Platform vendor (e.g. `The pocl project`, `NVIDIA Corporation`).
    pub vendor: String,
    /// Device name.
    pub name: String,
    /// Device kind.
    pub kind: DeviceKind,
    /// OpenCL version string of the device.
    pub version: String,
    /// Driver version.
    pub driver: String,
    /// Double precision (`cl_khr_fp64` or a non-zero double config).
    pub fp64: bool,
    /// 64-bit global atomics (`cl_khr_int64_base_atomics`), which the
    /// compare-and-swap atomic add of `double` needs.
    pub int64_atomics: bool,
    /// Maximum work-group size (threads).
    pub max_work_group_size: usize,
    /// Local memory per work-group, bytes.
    pub local_mem_size: u64,
    /// Global memory, bytes.
    pub global_mem_size: u64,
    /// Largest single allocation, bytes.
    pub max_mem_alloc_size: u64,
    /// Compute units.
    pub compute_units: u32,
    pub(crate) id: cl_device_id,
}

// SAFETY: a cl_device_id is an opaque handle that OpenCL allows to be used
// from any thread.
unsafe impl Send for DeviceInfo {}
// SAFETY: as above; the handle is never dereferenced by femquad.
unsafe impl Sync for DeviceInfo {}

impl DeviceInfo {
    /// The raw OpenCL device handle, for interoperation with other OpenCL code.
    pub fn cl_device_id(&self) -> cl_device_id {
        self.id
    }

    /// True for NVIDIA's OpenCL platform (inline PTX, `-cl-nv-verbose`).
    pub fn is_nvidia(&self) -> bool {
        self.vendor.to_lowercase().contains("nvidia")
            || self.platform.to_lowercase().contains("nvidia")
    }
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}] {} ({}, {}): {} CUs, {} MiB global, {} KiB local, work-group ≤ {}, fp64 {}",
            self.index,
            self.name,
            self.platform,
            self.kind,
            self.compute_units,
            self.global_mem_size >> 20,
            self.local_mem_size >> 10,
            self.max_work_group_size,
            if self.fp64 { "yes" } else { "no" }
        )
    }
}

pub(crate) fn cl_error(call: &'static str) -> impl Fn(opencl3::error_codes::ClError) -> Error {
    move |e| Error::OpenCl {
        call,
        code: e.0,
        name: e.to_string(),
    }
}

/// Checks that an OpenCL ICD loader can be opened.
pub fn check_runtime() -> Result<()> {
    if cl3::is_opencl_runtime_available() {
        Ok(())
    } else {
        Err(Error::NoOpenClRuntime {
            detail: "libOpenCL.so.1 could not be loaded".into(),
        })
    }
}

/// Serializes platform discovery: some ICD loaders and platforms (seen
/// with PoCL) report no devices to one of two threads enumerating at once.
static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// All devices of all platforms, in platform order.
pub fn list_devices() -> Result<Vec<DeviceInfo>> {
    check_runtime()?;
    let _guard = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let platforms = get_platforms().map_err(|e| Error::NoOpenClRuntime {
        detail: format!("clGetPlatformIDs failed: {e}"),
    })?;
    let mut out = Vec::new();
    for platform in platforms {
        let pname = platform.name().unwrap_or_else(|_| "?".into());
        let pvendor = platform.vendor().unwrap_or_default();
        // A platform without devices answers CL_DEVICE_NOT_FOUND: skip it.
        let Ok(ids) = platform.get_devices(CL_DEVICE_TYPE_ALL) else {
            continue;
        };
        for id in ids {
            let d = ClDevice::new(id);
            let ty = d.dev_type().map_err(cl_error("clGetDeviceInfo(TYPE)"))?;
            let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
                DeviceKind::Gpu
            } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
                DeviceKind::Accelerator
            } else if ty & CL_DEVICE_TYPE_CPU != 0 {
                DeviceKind::Cpu
            } else {
                DeviceKind::Other
            };
            let extensions = d.extensions().unwrap_or_default();
            let fp64 = extensions.contains("cl_khr_fp64")
                || d.double_fp_config().map(|c| c != 0).unwrap_or(false);
            out.push(DeviceInfo {
                index: out.len(),
                platform: pname.clone(),
                vendor: pvendor.clone(),
                name: d.name().unwrap_or_else(|_| "?".into()).trim().to_string(),
                kind,
                version: d.version().unwrap_or_default(),
                driver: d.driver_version().unwrap_or_default(),
                fp64,
                int64_atomics: extensions.contains("cl_khr_int64_base_atomics"),
                max_work_group_size: d
                    .max_work_group_size()
                    .map_err(cl_error("clGetDeviceInfo(MAX_WORK_GROUP_SIZE)"))?,
                local_mem_size: d
                    .local_mem_size()
                    .map_err(cl_error("clGetDeviceInfo(LOCAL_MEM_SIZE)"))?,
                global_mem_size: d
                    .global_mem_size()
                    .map_err(cl_error("clGetDeviceInfo(GLOBAL_MEM_SIZE)"))?,
                max_mem_alloc_size: d
                    .max_mem_alloc_size()
                    .map_err(cl_error("clGetDeviceInfo(MAX_MEM_ALLOC_SIZE)"))?,
                compute_units: d.max_compute_units().unwrap_or(1),
                id,
            });
        }
    }
    if out.is_empty() {
        return Err(Error::NoOpenClRuntime {
            detail: "the ICD loader found no OpenCL device on any platform".into(),
        });
    }
    Ok(out)
}

/// How to choose a device.
///
/// ```
/// use femquad::opencl::{DeviceKind, list_devices};
/// use femquad::prelude::*;
///
/// // what FEMQUAD_DEVICE may hold
/// assert_eq!(DeviceSelector::parse("gpu"), DeviceSelector::Kind(DeviceKind::Gpu));
/// assert_eq!(DeviceSelector::parse("1"), DeviceSelector::Index(1));
/// assert_eq!(DeviceSelector::parse("pocl"), DeviceSelector::Name("pocl".into()));
/// assert_eq!(DeviceSelector::parse(""), DeviceSelector::Auto);
/// // the choice among the devices present
/// let devices = list_devices()?;
/// let chosen = DeviceSelector::from_env().pick(&devices)?;
/// assert_eq!(devices[chosen.index].name, chosen.name);
/// assert!(DeviceSelector::Index(devices.len()).pick(&devices).is_err());
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DeviceSelector {
    /// GPU first, then accelerator, then CPU, then anything (first of each kind).
    #[default]
    Auto,
    /// The first device of this kind.
    Kind(DeviceKind),
    /// The device with this index in [`list_devices`].
    Index(usize),
    /// The first device whose device name, platform name or platform vendor
    /// contains this text (case-insensitive).
    Name(String),
}

impl DeviceSelector {
    /// Parses `auto`, `gpu`, `cpu`, `accelerator`, a number (index) or any
    /// other text (name substring).
    pub fn parse(text: &str) -> Self {
        let t = text.trim();
        match t.to_ascii_lowercase().as_str() {
            "" | "auto" | "default" => DeviceSelector::Auto,
            "gpu" => DeviceSelector::Kind(DeviceKind::Gpu),
            "cpu" => DeviceSelector::Kind(DeviceKind::Cpu),
            "accelerator" => DeviceSelector::Kind(DeviceKind::Accelerator),
            _ => match t.parse::<usize>() {
                Ok(i) => DeviceSelector::Index(i),
                Err(_) => DeviceSelector::Name(t.to_string()),
            },
        }
    }

    /// The selector from [`DEVICE_ENV`], or [`DeviceSelector::Auto`] if unset.
    pub fn from_env() -> Self {
        std::env::var(DEVICE_ENV)
            .map(|v| Self::parse(&v))
            .unwrap_or_default()
    }

    /// Picks a device from `devices`.
    pub fn pick<'a>(&self, devices: &'a [DeviceInfo]) -> Result<&'a DeviceInfo> {
        let found = match self {
            DeviceSelector::Auto => [
                DeviceKind::Gpu,
                DeviceKind::Accelerator,
                DeviceKind::Cpu,
                DeviceKind::Other,
            ]
            .iter()
            .find_map(|k| devices.iter().find(|d| d.kind == *k)),
            DeviceSelector::Kind(k) => devices.iter().find(|d| d.kind == *k),
            DeviceSelector::Index(i) => devices.get(*i),
            DeviceSelector::Name(n) => {
                let n = n.to_lowercase();
                devices.iter().find(|d| {
                    [&d.name, &d.platform, &d.vendor]
                        .iter()
                        .any(|s| s.to_lowercase().contains(&n))
                })
            }
        };
        found.ok_or_else(|| Error::UnknownDevice {
            requested: format!("{self}"),
            available: devices
                .iter()
                .map(|d| format!("  {d}"))
                .collect::<Vec<_>>()
                .join("\n"),
        })
    }
}

impl fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSelector::Auto => f.write_str("auto"),
            DeviceSelector::Kind(k) => write!(f, "{k}"),
            DeviceSelector::Index(i) => write!(f, "{i}"),
            DeviceSelector::Name(n) => f.write_str(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(index: usize, platform: &str, name: &str, kind: DeviceKind) -> DeviceInfo {
        DeviceInfo {
            index,
            platform: platform.into(),
            vendor: if platform.starts_with("Portable") {
                "The pocl project"
            } else {
                "NVIDIA Corporation"
            }
            .into(),
            name: name.into(),
            kind,
            version: String::new(),
            driver: String::new(),
            fp64: true,
            int64_atomics: true,
            max_work_group_size: 1024,
            local_mem_size: 48 << 10,
            global_mem_size: 1 << 30,
            max_mem_alloc_size: 1 << 28,
            compute_units: 1,
            id: std::ptr::null_mut(),
        }
    }

    #[test]
    fn selection_prefers_gpu_and_honours_requests() {
        let devs = vec![
            fake(0, "Portable Computing Language", "cpu-x86", DeviceKind::Cpu),
            fake(1, "NVIDIA CUDA", "NVIDIA H100", DeviceKind::Gpu),
        ];
        assert_eq!(DeviceSelector::Auto.pick(&devs).unwrap().index, 1);
        assert_eq!(DeviceSelector::parse("cpu").pick(&devs).unwrap().index, 0);
        assert_eq!(DeviceSelector::parse("0").pick(&devs).unwrap().index, 0);
        assert_eq!(DeviceSelector::parse("pocl").pick(&devs).unwrap().index, 0);
        assert_eq!(
            DeviceSelector::parse("Portable").pick(&devs).unwrap().index,
            0
        );
        assert_eq!(DeviceSelector::parse("h100").pick(&devs).unwrap().index, 1);
        let err = DeviceSelector::parse("amd")
            .pick(&devs)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no OpenCL device matches `amd`"), "{err}");
        assert!(err.contains("NVIDIA H100"), "{err}");
        assert!(DeviceSelector::parse("7").pick(&devs).is_err());
    }
}
