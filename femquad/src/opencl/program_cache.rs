//! [`ProgramCache`]: compiled OpenCL programs kept on disk across
//! processes, so that a program's kernels are compiled from source once per
//! device, driver and source, not once per process.
//!
//! An entry is the binary the OpenCL compiler returned
//! (`CL_PROGRAM_BINARIES`: PTX on NVIDIA, PoCL's own format on PoCL), keyed
//! by everything the binary depends on: the platform, the device, the
//! driver version, the build options and the program source. Its file
//! `<key>.bin` holds a header line naming the identity it was built for and
//! a checksum of the binary, so an entry that does not match (a hash
//! collision, a truncated or corrupt file) is never loaded: it is rebuilt
//! from source and overwritten, and counted
//! ([`DeviceStats::disk_rejected`](super::DeviceStats::disk_rejected)). A
//! cached binary is the compiler's output for the same source and options
//! on the same driver, so what the kernels compute does not depend on the
//! cache. Entries are written to a temporary file and renamed, so
//! processes sharing the directory never read a partial entry.
//!
//! Where the cache lives is decided at the top level of a program
//! ([`ProgramCache::from_env`], used by
//! [`Device::from_env`](super::Device::from_env)): a device opened with
//! [`Device::open`](super::Device::open) — every test — has none.

use std::path::{Path, PathBuf};

use crate::physics::Fnv1a;
use crate::{Error, Result};

use super::device::DeviceInfo;
use super::tuning_cache::cache_dir;

/// The environment variable that switches the program cache off (`off`)
/// or names its directory.
pub const PROGRAM_CACHE_ENV: &str = "FEMQUAD_PROGRAM_CACHE";

/// First bytes of an entry, with the format's version.
const MAGIC: &[u8] = b"femquad program binary 1\n";

/// A directory of compiled OpenCL programs ([module docs](self)).
///
/// ```
/// use femquad::opencl::ProgramCache;
/// let dir = std::env::temp_dir().join("femquad-doc-program-cache");
/// let cache = ProgramCache::new(&dir);
/// assert_eq!(cache.dir(), dir.as_path());
/// // switched off, or placed, by the environment
/// assert!(ProgramCache::from_vars(|v| (v == "FEMQUAD_PROGRAM_CACHE").then(|| "off".into()))?.is_none());
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProgramCache {
    dir: PathBuf,
}

/// What the cache had for one program.
#[derive(Debug)]
pub(crate) enum Lookup {
    /// A binary built for exactly this identity.
    Hit(Vec<u8>),
    /// No entry.
    Miss,
    /// An entry that is not this identity's or fails its checksum.
    Rejected,
}

impl ProgramCache {
    /// A cache in `dir` (created when the first entry is written).
    pub fn new(dir: impl AsRef<Path>) -> Self {
        ProgramCache {
            dir: dir.as_ref().to_path_buf(),
        }
    }

    /// The cache the environment asks for: none if `FEMQUAD_PROGRAM_CACHE`
    /// is `off`; the directory it names otherwise if set; else `programs`
    /// in femquad's cache directory (`$FEMQUAD_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/femquad`, else `$HOME/.cache/femquad`); none if
    /// none of these is set.
    ///
    /// # Errors
    /// None at present (the signature leaves room for a checked value).
    pub fn from_env() -> Result<Option<Self>> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`ProgramCache::from_env`] with the variables looked up by `var`.
    ///
    /// # Errors
    /// As [`ProgramCache::from_env`].
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>> {
        let set = var(PROGRAM_CACHE_ENV).filter(|v| !v.trim().is_empty());
        Ok(match set.as_deref().map(str::trim) {
            Some("off") => None,
            Some(dir) => Some(ProgramCache::new(dir)),
            None => cache_dir(&var).map(|d| ProgramCache::new(d.join("programs"))),
        })
    }

    /// The directory of the entries.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the program with `identity`.
    fn path(&self, identity: &str) -> PathBuf {
        let mut h = Fnv1a::new();
        h.write(identity.as_bytes());
        self.dir.join(format!("{:016x}.bin", h.finish()))
    }

    /// The binary stored for `identity` ([`identity`]).
    pub(crate) fn load(&self, identity: &str) -> Lookup {
        match std::fs::read(self.path(identity)) {
            Ok(bytes) => match parse(&bytes, identity) {
                Some(binary) => Lookup::Hit(binary.to_vec()),
                None => Lookup::Rejected,
            },
            Err(_) => Lookup::Miss,
        }
    }

    /// Stores `binary` as the program of `identity`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the program cache if the entry
    /// cannot be written (the file, the reason, and how to move or switch
    /// off the cache).
    pub(crate) fn store(&self, identity: &str, binary: &[u8]) -> Result<()> {
        let path = self.path(identity);
        let fail = |what: &str, e: std::io::Error| {
            Error::arg(
                "program cache",
                format!(
                    "cannot {what} {}: {e} (set {PROGRAM_CACHE_ENV} to another directory, or \
                     to `off`)",
                    path.display()
                ),
            )
        };
        std::fs::create_dir_all(&self.dir).map_err(|e| fail("create the directory of", e))?;
        let mut bytes = Vec::with_capacity(MAGIC.len() + identity.len() + binary.len() + 64);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(header(identity, binary).as_bytes());
        bytes.extend_from_slice(binary);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, &bytes).map_err(|e| fail("write", e))?;
        std::fs::rename(&tmp, &path).map_err(|e| fail("rename a new entry to", e))
    }
}

/// Everything a compiled program depends on besides its source's meaning:
/// platform, vendor, device, OpenCL version, driver, build options, and
/// the source itself (hashed).
pub(crate) fn identity(info: &DeviceInfo, options: &str, source: &str) -> String {
    let mut h = Fnv1a::new();
    h.write(source.as_bytes());
    format!(
        "platform={} | vendor={} | device={} | version={} | driver={} | options={} | \
         source={:016x} ({} bytes)",
        info.platform,
        info.vendor,
        info.name,
        info.version,
        info.driver,
        options,
        h.finish(),
        source.len()
    )
}

/// The header line of an entry: its identity, the binary's length and
/// checksum.
fn header(identity: &str, binary: &[u8]) -> String {
    let mut h = Fnv1a::new();
    h.write(binary);
    format!(
        "{} | binary={} bytes {:016x}\n",
        identity.replace('\n', " "),
        binary.len(),
        h.finish()
    )
}

/// The binary of an entry if it is `identity`'s and intact.
fn parse<'a>(bytes: &'a [u8], identity: &str) -> Option<&'a [u8]> {
    let rest = bytes.strip_prefix(MAGIC)?;
    let end = rest.iter().position(|&b| b == b'\n')?;
    let (line, binary) = (&rest[..=end], &rest[end + 1..]);
    (line == header(identity, binary).as_bytes()).then_some(binary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "femquad-program-cache-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn entries_round_trip_and_are_refused_when_they_do_not_match() {
        let cache = ProgramCache::new(scratch("round-trip"));
        let id = "platform=p | device=d | source=1";
        assert!(matches!(cache.load(id), Lookup::Miss));
        cache.store(id, b"\x00binary\nwith newlines").unwrap();
        match cache.load(id) {
            Lookup::Hit(b) => assert_eq!(b, b"\x00binary\nwith newlines"),
            other => panic!("{other:?}"),
        }
        // a corrupt binary (one byte changed) is rejected, not loaded
        let path = cache.path(id);
        let mut bytes = std::fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(cache.load(id), Lookup::Rejected));
        // a truncated entry too
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert!(matches!(cache.load(id), Lookup::Rejected));
        // an entry of another identity in this file (a hash collision)
        cache.store(id, b"mine").unwrap();
        let other = std::fs::read(&path).unwrap();
        let forged = String::from_utf8_lossy(&other).replace("device=d", "device=e");
        std::fs::write(&path, forged.as_bytes()).unwrap();
        assert!(matches!(cache.load(id), Lookup::Rejected));
        std::fs::remove_dir_all(cache.dir()).unwrap();
    }

    #[test]
    fn the_environment_places_or_switches_off_the_cache() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            ProgramCache::from_vars(vars(&[("FEMQUAD_PROGRAM_CACHE", "off"), ("HOME", "/h")]))
                .unwrap(),
            None
        );
        assert_eq!(
            ProgramCache::from_vars(vars(&[("FEMQUAD_PROGRAM_CACHE", "/p"), ("HOME", "/h")]))
                .unwrap(),
            Some(ProgramCache::new("/p"))
        );
        assert_eq!(
            ProgramCache::from_vars(vars(&[("HOME", "/h")])).unwrap(),
            Some(ProgramCache::new("/h/.cache/femquad/programs"))
        );
        assert_eq!(
            ProgramCache::from_vars(vars(&[("FEMQUAD_CACHE_DIR", "/c"), ("HOME", "/h")])).unwrap(),
            Some(ProgramCache::new("/c/programs"))
        );
        assert_eq!(ProgramCache::from_vars(vars(&[])).unwrap(), None);
    }
}
