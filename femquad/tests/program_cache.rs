//! The on-disk program cache: a second process (here: a second device
//! context) loads every program from disk instead of compiling it, and
//! computes bitwise what the compiled programs compute; entries that are
//! corrupt are refused, compiled again and overwritten.

use std::path::{Path, PathBuf};

use femquad::opencl::testing::{options, selector};
use femquad::opencl::{Device, DeviceStats, ProgramCache};
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;

/// `F(u)` of a P2 Laplacian on a fresh device whose programs are kept in
/// `dir`, with the device's counters after it.
fn residual_on_a_fresh_device(dir: &Path) -> (Vec<f64>, DeviceStats) {
    let device = Device::open_with(&selector(), Some(ProgramCache::new(dir))).unwrap();
    let backend = Backend::opencl_with(device.clone(), options());
    let mesh = unit_square(3, &MeshOptions::default()).unwrap();
    let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let mut op = Operator::<f64>::new(Form::new(space, Laplacian).unwrap(), &backend).unwrap();
    let values = op
        .space()
        .interpolate(|x, u| u[0] = (3.0 * x[0]).sin() + x[1] * x[1]);
    let u = op.vector_from(&values).unwrap();
    let mut r = op.vector().unwrap();
    op.apply(&u, &mut r).unwrap();
    (r.to_host().unwrap(), device.stats())
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn a_second_process_loads_every_program_from_disk_and_computes_the_same() {
    let dir = std::env::temp_dir().join(format!("femquad-program-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);

    let (compiled, first) = residual_on_a_fresh_device(&dir);
    assert!(first.builds > 0, "{first:?}");
    assert_eq!((first.disk_hits, first.disk_rejected), (0, 0), "{first:?}");
    let stored = entries(&dir);
    assert_eq!(
        stored.len(),
        first.builds,
        "one entry per program: {stored:?}"
    );

    let (loaded, second) = residual_on_a_fresh_device(&dir);
    assert_eq!(second.builds, first.builds, "{second:?}");
    assert_eq!(second.disk_hits, second.builds, "{second:?}");
    assert_eq!(second.disk_rejected, 0, "{second:?}");
    assert!(
        compiled
            .iter()
            .zip(&loaded)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "F(u) from cached programs differs from the compiled ones"
    );
    assert!(compiled.iter().any(|v| *v != 0.0));

    // every entry corrupted (its last byte flipped): refused, compiled
    // again, overwritten
    for file in &stored {
        let mut bytes = std::fs::read(file).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0x5a;
        std::fs::write(file, &bytes).unwrap();
    }
    let (rebuilt, third) = residual_on_a_fresh_device(&dir);
    assert_eq!(third.disk_rejected, first.builds, "{third:?}");
    assert_eq!(third.disk_hits, 0, "{third:?}");
    assert_eq!(rebuilt, compiled);
    let (_, fourth) = residual_on_a_fresh_device(&dir);
    assert_eq!(
        (fourth.disk_hits, fourth.disk_rejected),
        (first.builds, 0),
        "the rebuilt entries were stored: {fourth:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
