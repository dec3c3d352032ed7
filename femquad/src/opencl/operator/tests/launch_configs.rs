//! Launch configurations: each one asked for is the one that runs (threads
//! per cell, prefetch, batch and chunk sizes), and computes the native
//! residual; the default kernel options take no configuration from a tuning
//! cache, options given one take it from the loaded cache, never the file.

use super::*;
use crate::opencl::GeometryMode;
use crate::opencl::shape::{default_config, default_geometry};
use crate::opencl::tuning_cache::{CACHE_FILE, CacheEntry, TuneKey, TuningCache};
use crate::physics::builtin::{Lame, Laplacian};

#[test]
fn launch_configurations_and_threads_per_cell() {
    let device = device();
    for (n_bl, n_cb, n_tc, prefetch) in [
        (1, 1, 1, true),
        (2, 3, 1, false),
        (5, 1, 1, true),
        (7, 4, 1, false),
        (2, 2, 2, true),
        (2, 2, 3, true),
    ] {
        for (dim, order, physics, constants) in [
            (2, 1, &Laplacian as &'static dyn PointwiseEvalBoth, vec![]),
            (
                2,
                2,
                &Lame as &'static dyn PointwiseEvalBoth,
                vec![2.0, 1.0],
            ),
            (
                3,
                1,
                &Lame as &'static dyn PointwiseEvalBoth,
                vec![2.0, 1.0],
            ),
            (3, 2, &Laplacian as &'static dyn PointwiseEvalBoth, vec![]),
        ] {
            let case = Case {
                dim,
                order,
                n: if dim == 2 { 14 } else { 4 },
                physics,
                aux: AuxSpace::None,
                constants,
                degree: 2,
            };
            let s = setup::<f64>(&case);
            let mut op = operator(&device, &s, physics, Assembly::Atomic);
            let config = LaunchConfig::new(n_bl, n_cb)
                .with_threads_per_cell(n_tc)
                .with_prefetch(prefetch);
            let what = format!("{dim}D P{order} {} {config}", physics.info().name);
            // the residual with computed geometry (atomic)
            let computed = config.with_geometry(GeometryMode::Computed);
            let c = runnable(&op, op.residual_variant(), computed);
            let out = device_global(&mut op, &s, Action::Residual, Some(c));
            launched(&op, c);
            let reference = native_global(&s, physics, Action::Residual);
            let d = rel_diff(&out, &reference);
            assert!(d <= 1e-12, "{what}: residual relative difference {d:e}");
            // the element kernel with stored geometry
            check_element_kernel(&mut op, &s, physics, config, 1e-12);
        }
    }
}

/// A directory under the system temp dir, removed on drop.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn the_tuning_cache_is_the_loaded_object_never_the_file() {
    let device = device();
    let case = Case {
        dim: 2,
        order: 1,
        n: 6,
        physics: &Laplacian,
        aux: AuxSpace::None,
        constants: vec![],
        degree: 1,
    };
    let s = setup::<f64>(&case);
    let dir =
        TempDir(std::env::temp_dir().join(format!("femquad-tuning-object-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&dir.0);
    let path = dir.0.join(CACHE_FILE);
    let new_op = |opts: &KernelOptions| {
        let op =
            OpenClOperator::new(device.clone(), opts.clone(), &s.space, s.disc.clone()).unwrap();
        OpenClIntegrator::new(op, Arc::new(Laplacian), &[], Assembly::Atomic).unwrap()
    };
    // A cache entry for exactly this device, case, kernel and physics,
    // with a configuration that is not the device default, saved and
    // loaded back.
    let op = new_op(&options());
    let variant = op.residual_variant();
    let kernel_case = *op.case();
    // a scalar field's residual: the cell-parallel kernel, its geometry
    // computed from the vertices
    let geometry = default_geometry(&kernel_case, variant);
    assert_eq!(geometry, GeometryMode::Computed);
    let default =
        default_config(&kernel_case, variant, geometry, &options(), device.info()).unwrap();
    assert!(default.cell_parallel);
    let tuned = LaunchConfig::new(1, default.n_cb + 1);
    assert_ne!(tuned, default);
    let key = TuneKey::new(
        device.info(),
        &kernel_case,
        variant,
        Laplacian.source_hash(),
        &options(),
    );
    assert_eq!(key, op.tune_key(variant));
    let entry = CacheEntry {
        config: tuned,
        time_ns: 1.0,
        cells: s.space.n_cells(),
    };
    let mut cache = TuningCache::empty(&path);
    cache.insert(&key, entry);
    cache.save().unwrap();
    let loaded = Arc::new(TuningCache::load(&path).unwrap());
    // The file goes: what the operators use is the object loaded above.
    std::fs::remove_dir_all(&dir.0).unwrap();

    let u = DeviceVector::<f64>::from_host(&device, &s.u).unwrap();
    let mut r = DeviceVector::<f64>::zeros(&device, s.space.n_dofs()).unwrap();
    for (opts, expected) in [
        // the default options: the device default, whatever a cache holds
        (options(), default),
        // options given the cache: its configuration, with no file to read
        (options().with_tuning_cache(loaded.clone()), tuned),
    ] {
        let mut op = new_op(&opts);
        assert_eq!(op.config(variant).unwrap(), expected, "{opts:?}");
        op.residual(&u, &mut r).unwrap();
        launched(&op, expected);
    }
    assert!(!path.exists());
}
