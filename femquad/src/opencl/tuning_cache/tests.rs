//! Tests of [`super`].

use super::*;
use std::time::SystemTime;

fn key() -> TuneKey {
    TuneKey {
        device: "NVIDIA H100 80GB HBM3".into(),
        driver: "580.159.04".into(),
        kernel: 0x0123_4567_89ab_cdef,
        dim: 3,
        n_b: 4,
        n_comp: 3,
        n_q: 1,
        aux: AuxSpace::Field { n_comp: 1 },
        physics: 0xfeed_beef_0000_0001,
        real: Precision::F64,
    }
}

fn device(name: &str, driver: &str, max_wg: usize) -> DeviceInfo {
    DeviceInfo {
        index: 0,
        platform: "test".into(),
        vendor: "test".into(),
        name: name.into(),
        kind: super::super::device::DeviceKind::Gpu,
        version: "OpenCL 3.0".into(),
        driver: driver.into(),
        fp64: true,
        int64_atomics: true,
        max_work_group_size: max_wg,
        local_mem_size: 48 << 10,
        global_mem_size: 80 << 30,
        max_mem_alloc_size: 20 << 30,
        compute_units: 132,
        id: std::ptr::null_mut(),
    }
}

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let p = std::env::temp_dir().join(format!(
            "femquad-autotune-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn key_formatting_and_round_trip() {
    let k = key();
    let text = k.to_string();
    assert_eq!(
        text,
        "device=NVIDIA H100 80GB HBM3 | driver=580.159.04 | kernel=0123456789abcdef | dim=3 | n_b=4 \
         | n_comp=3 | n_q=1 | aux=field:1 | physics=feedbeef00000001 | real=f64"
    );
    assert_eq!(text.parse::<TuneKey>().unwrap(), k);
    assert_eq!(k.n_bs(), 12);
    for aux in [AuxSpace::None, AuxSpace::Cell { n_comp: 2 }] {
        let k2 = TuneKey { aux, ..key() };
        assert_eq!(k2.to_string().parse::<TuneKey>().unwrap(), k2);
    }
    // Separators in device names are replaced, so the line stays parseable.
    let odd = TuneKey {
        device: "GPU | x=1\n".into(),
        ..key()
    };
    let parsed: TuneKey = odd.to_string().parse().unwrap();
    assert_eq!(parsed.device, "GPU _ x_1");
    assert!("device=x | dim=2".parse::<TuneKey>().is_err());
    assert!(
        text.replace("aux=field:1", "aux=field:0")
            .parse::<TuneKey>()
            .is_err()
    );
    assert!(text.replace("dim=3", "dim=7").parse::<TuneKey>().is_err());
}

#[test]
fn entry_formatting() {
    let e = CacheEntry {
        config: LaunchConfig::new(32, 4),
        time_ns: 241_152.4,
        cells: 1 << 24,
    };
    assert_eq!(
        e.to_string(),
        "n_bl=32 n_cb=4 n_tc=1 prefetch=1 geometry=stored patches=0 cell_parallel=0 ns=241152 \
         cells=16777216"
    );
    let back: CacheEntry = e.to_string().parse().unwrap();
    assert_eq!(back.config, e.config);
    assert_eq!(back.cells, 1 << 24);
    assert!((back.ns_per_cell() - 241_152.0 / 16_777_216.0).abs() < 1e-12);
    assert!("n_bl=0 n_cb=4".parse::<CacheEntry>().is_err());
    assert!("n_bl=3 n_cb=4 ns=NaN".parse::<CacheEntry>().is_err());
    assert!("n_bl=3".parse::<CacheEntry>().is_err());
    let computed: CacheEntry = "n_bl=8 n_cb=2 geometry=computed".parse().unwrap();
    assert_eq!(computed.config.geometry, GeometryMode::Computed);
    // the cell-parallel kernel round-trips; a line without the field is the transposition
    assert!(!computed.config.cell_parallel);
    let cell = CacheEntry {
        config: LaunchConfig::new(64, 1).with_cell_parallel(true),
        ..e
    };
    let back: CacheEntry = cell.to_string().parse().unwrap();
    assert_eq!(back.config, cell.config);
    assert!(back.config.cell_parallel && !back.config.prefetch);
    assert!(
        "n_bl=8 n_cb=2 cell_parallel=2"
            .parse::<CacheEntry>()
            .is_err()
    );
    assert!(
        "n_bl=8 n_cb=2 geometry=maybe"
            .parse::<CacheEntry>()
            .is_err()
    );
}

#[test]
fn cache_round_trip_in_temp_dir() {
    let dir = TempDir::new("roundtrip");
    let path = dir.0.join("sub").join(CACHE_FILE);
    // Missing file: empty cache, no error.
    let mut cache = TuningCache::load(&path).unwrap();
    assert!(cache.is_empty());
    let k = key();
    let k2 = TuneKey {
        real: Precision::F32,
        ..key()
    };
    cache.insert(
        &k,
        CacheEntry {
            config: LaunchConfig::new(8, 2),
            time_ns: 1000.0,
            cells: 4096,
        },
    );
    cache.insert(
        &k2,
        CacheEntry {
            config: LaunchConfig::new(16, 1),
            time_ns: 900.0,
            cells: 4096,
        },
    );
    cache.insert(
        &k,
        CacheEntry {
            config: LaunchConfig::new(24, 4),
            time_ns: 800.0,
            cells: 4608,
        },
    );
    cache.save().unwrap();
    let loaded = TuningCache::load(&path).unwrap();
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded.skipped(), 0);
    assert_eq!(loaded.get(&k).unwrap().config, LaunchConfig::new(24, 4));
    assert_eq!(loaded.get(&k2).unwrap().config, LaunchConfig::new(16, 1));
    assert_eq!(loaded.get(&TuneKey { dim: 2, ..key() }), None);

    // Lookup with device checks.
    let dev = device("NVIDIA H100 80GB HBM3", "580.159.04", 1024);
    assert_eq!(loaded.lookup(&dev, &k), Some(LaunchConfig::new(24, 4)));
    let other = device("NVIDIA H200", "580.159.04", 1024);
    assert_eq!(
        loaded.lookup(
            &other,
            &TuneKey {
                device: "NVIDIA H200".into(),
                ..key()
            }
        ),
        None
    );
    // A key of another device never matches the device asked about.
    assert_eq!(loaded.lookup(&other, &k), None);
    // Work-group limit: 24 blocks of 12 cells = 288 threads.
    let small = device("NVIDIA H100 80GB HBM3", "580.159.04", 256);
    assert_eq!(loaded.lookup(&small, &k), None);
    // Missing file: an empty cache, no lookup hit, no panic.
    let missing = TuningCache::load(dir.0.join("nope.txt")).unwrap();
    assert_eq!(missing.lookup(&dev, &k), None);
}

#[test]
fn corrupt_lines_are_ignored() {
    let dir = TempDir::new("corrupt");
    let path = dir.0.join(CACHE_FILE);
    let good = format!("{} => n_bl=12 n_cb=8 ns=5 cells=10", key());
    let text = format!(
        "# comment\n\ngarbage line\n{k} => n_bl=x n_cb=1\n{k} => n_bl=3\ndevice=a | dim=2 => n_bl=1 n_cb=1\n{good}\n\u{0}\u{ff}binary\n{k} => n_bl=4 n_cb=1 extra=1\n",
        k = key()
    );
    std::fs::write(&path, text).unwrap();
    let cache = TuningCache::load(&path).unwrap();
    assert_eq!(cache.len(), 1);
    assert_eq!(cache.skipped(), 6);
    assert_eq!(cache.get(&key()).unwrap().config, LaunchConfig::new(12, 8));
    // Invalid UTF-8 does not fail the load either.
    std::fs::write(&path, [0xff, 0xfe, b'\n', 0x80]).unwrap();
    let cache = TuningCache::load(&path).unwrap();
    assert!(cache.is_empty());
    assert_eq!(cache.skipped(), 2);
    // A directory where the file should be: an error naming the path, no panic.
    let e = TuningCache::load(&dir.0).unwrap_err().to_string();
    assert!(e.contains(&dir.0.display().to_string()), "{e}");
    // Saving into a path under a file fails with the path named.
    let blocked = TuningCache::empty(path.join("x").join(CACHE_FILE));
    let e = blocked.save().unwrap_err().to_string();
    assert!(
        e.contains(CACHE_FILE) || e.contains("autotune.txt/x"),
        "{e}"
    );
}

#[test]
fn a_skipped_line_is_named_by_file_line_and_reason() {
    let dir = TempDir::new("warn");
    let path = dir.0.join(CACHE_FILE);
    let bad = format!("{} => n_bl=x n_cb=1", key());
    let good = format!("{} => n_bl=12 n_cb=8", key());
    std::fs::write(&path, format!("# comment\n\n{bad}\n{good}\n")).unwrap();
    let cache = TuningCache::load(&path).unwrap();
    assert_eq!(cache.len(), 1);
    let skipped = cache.skipped_lines();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].line, 3);
    assert!(skipped[0].reason.contains("`n_bl=x`"), "{:?}", skipped[0]);
    let warning = skipped_line_warning(&path, &skipped[0]);
    assert!(
        warning.contains(&format!("{}:3:", path.display()))
            && warning.contains("n_bl=x")
            && warning.contains("default launch configuration"),
        "{warning}"
    );
}

/// Set for the child process of `a_skipped_line_is_reported_once_per_load`:
/// the cache file it reads.
const WARN_CHILD_ENV: &str = "FEMQUAD_TUNING_CACHE_WARN_CHILD";

/// The child: loads the cache file once, then looks a key up three times
/// (what every launch does), which reads nothing and reports nothing.
#[test]
fn warn_child() {
    let Some(path) = std::env::var_os(WARN_CHILD_ENV) else {
        return;
    };
    let dev = device("NVIDIA H100 80GB HBM3", "580.159.04", 1024);
    let cache = TuningCache::load(PathBuf::from(path)).unwrap();
    for _ in 0..3 {
        assert_eq!(cache.lookup(&dev, &key()), Some(LaunchConfig::new(12, 8)));
    }
}

#[test]
fn a_skipped_line_is_reported_once_per_load_on_stderr() {
    let dir = TempDir::new("warn-once");
    let path = dir.0.join(CACHE_FILE);
    let text = format!("{k} => n_bl=12 n_cb=8\n{k} => n_bl=3\ngarbage\n", k = key());
    std::fs::write(&path, text).unwrap();
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "opencl::tuning_cache::tests::warn_child",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(WARN_CHILD_ENV, &path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("femquad: warning:"))
        .collect();
    let at = |line: usize| format!("{}:{line}: autotune cache entry skipped", path.display());
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(
        warnings[0].contains(&at(2)) && warnings[0].contains("n_cb"),
        "{stderr}"
    );
    assert!(
        warnings[1].contains(&at(3)) && warnings[1].contains("`=>`"),
        "{stderr}"
    );
}

#[test]
fn the_default_path_follows_the_variables_given() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    };
    let file = |d: &str| Some(PathBuf::from(d).join(CACHE_FILE));
    assert_eq!(default_path(vars(&[])), None);
    assert_eq!(
        default_path(vars(&[("HOME", "/h")])),
        file("/h/.cache/femquad")
    );
    assert_eq!(
        default_path(vars(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")])),
        file("/x/femquad")
    );
    assert_eq!(
        default_path(vars(&[
            ("HOME", "/h"),
            ("XDG_CACHE_HOME", "/x"),
            (CACHE_DIR_ENV, "/c")
        ])),
        file("/c")
    );
    // empty values count as unset
    assert_eq!(
        default_path(vars(&[("HOME", "/h"), ("XDG_CACHE_HOME", " ")])),
        file("/h/.cache/femquad")
    );
}
