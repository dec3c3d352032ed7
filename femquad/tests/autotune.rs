//! Autotuning: the tuner picks the fastest candidate, stores it in the cache
//! file, and a later operator given that file, loaded, launches with it.

use std::path::PathBuf;
use std::sync::Arc;

use femquad::opencl::LaunchConfig;

/// A fresh temporary directory, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let p = std::env::temp_dir().join(format!("femquad-autotune-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
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
fn autotune_picks_stores_and_reads_back() {
    use femquad::discretization::{CellInputs, Discretization};
    use femquad::element::Element;
    use femquad::mesh::generate::{MeshOptions, unit_box};
    use femquad::opencl::autotune::{TuneOptions, autotune_element};
    use femquad::opencl::tuning_cache::{TuneKey, TuningCache};
    use femquad::opencl::{Assembly, KernelVariant, OpenClIntegrator, OpenClOperator};
    use femquad::physics::Pointwise;
    use femquad::physics::builtin::Laplacian;
    use femquad::quadrature::Quadrature;
    use femquad::rng::Rng;
    use femquad::space::FunctionSpace;

    let dir = TempDir::new("tune");
    let cache = dir.0.join("autotune.txt");
    let device = femquad::opencl::testing::device();
    let mesh = unit_box(
        2,
        30,
        &MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 2,
        },
    )
    .unwrap();
    let mesh = Arc::new(mesh);
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let disc = Discretization::<f32>::new(
        &space,
        Quadrature::simplex(2, 1).unwrap(),
        femquad::aux_space::AuxSpace::None,
    )
    .unwrap();
    let options = femquad::opencl::testing::options();
    let op = OpenClOperator::new(device.clone(), options.clone(), &space, disc).unwrap();
    let bind = |op| OpenClIntegrator::new(op, Arc::new(Laplacian), &[], Assembly::Atomic).unwrap();
    let mut integ = bind(op);
    let bound = integ.config(KernelVariant::Element).unwrap();
    let candidates = vec![LaunchConfig::new(8, 2), LaunchConfig::new(32, 1)];
    let opts = TuneOptions {
        warmup: 1,
        reps: 3,
        candidates: candidates.clone(),
        cache_file: Some(cache.clone()),
        ..TuneOptions::default()
    };

    // Before any inputs are set there are none on the device: a clear error.
    let e = autotune_element(&mut integ, &opts).unwrap_err().to_string();
    assert!(e.contains("set_cell_inputs"), "{e}");

    let n = mesh.n_cells() * 3;
    let u: Vec<f32> = Rng::new(4)
        .vec(n, -1.0, 1.0)
        .into_iter()
        .map(|x| x as f32)
        .collect();
    integ
        .set_cell_inputs(&CellInputs {
            u: &u,
            aux: &[],
            constants: &[],
            time: None,
        })
        .unwrap();
    let r = autotune_element(&mut integ, &opts).unwrap();
    // the bound configuration is unchanged
    assert_eq!(integ.config(KernelVariant::Element).unwrap(), bound);
    assert_eq!(r.trials.len(), 2);
    assert!(
        r.trials
            .iter()
            .all(|t| t.time_ns.as_ref().is_ok_and(|&ns| ns > 0.0))
    );
    assert!(candidates.contains(&r.best.config));
    let fastest = r
        .trials
        .iter()
        .map(|t| t.ns_per_cell().unwrap())
        .fold(f64::INFINITY, f64::min);
    assert_eq!(r.best.ns_per_cell().unwrap(), fastest);
    // Stored, and found again for this device and key.
    assert_eq!(r.stored.as_deref(), Some(cache.as_path()));
    assert!(r.store_error.is_none());
    // An integrator created now, given the cache file loaded again, uses the
    // tuned configuration.
    let loaded = std::sync::Arc::new(TuningCache::load(&cache).unwrap());
    let later = bind(
        OpenClOperator::new(
            device.clone(),
            options.clone().with_tuning_cache(loaded.clone()),
            &space,
            integ.discretization().clone(),
        )
        .unwrap(),
    );
    assert_eq!(later.config(KernelVariant::Element).unwrap(), r.best.config);
    let key = TuneKey::new(
        device.info(),
        integ.case(),
        KernelVariant::Element,
        Laplacian.source_hash(),
        &options,
    );
    assert_eq!(key, r.key);
    assert_eq!(loaded.get(&key).unwrap().config, r.best.config);
    assert_eq!(loaded.lookup(device.info(), &key), Some(r.best.config));
}

/// A tuned configuration on the cell-parallel kernel
/// (`LaunchConfig::cell_parallel`) of the residual goes through the cache
/// file and back: an integrator given the loaded cache binds it, launches
/// it, and its `F(u)` is the transposition's.
#[test]
fn a_tuned_cell_parallel_configuration_is_stored_and_launched() {
    use femquad::discretization::Discretization;
    use femquad::element::Element;
    use femquad::mesh::generate::{MeshOptions, unit_box};
    use femquad::opencl::autotune::{TuneOptions, autotune_residual};
    use femquad::opencl::tuning_cache::TuningCache;
    use femquad::opencl::{Assembly, DeviceVector, OpenClIntegrator, OpenClOperator};
    use femquad::physics::builtin::Laplacian;
    use femquad::quadrature::Quadrature;
    use femquad::rng::Rng;
    use femquad::seam::Integrate;
    use femquad::space::FunctionSpace;

    let dir = TempDir::new("cell");
    let cache = dir.0.join("autotune.txt");
    let device = femquad::opencl::testing::device();
    let mesh = Arc::new(unit_box(2, 20, &MeshOptions::default()).unwrap());
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let disc = Discretization::<f64>::new(
        &space,
        Quadrature::simplex(2, 1).unwrap(),
        femquad::aux_space::AuxSpace::None,
    )
    .unwrap();
    let options = femquad::opencl::testing::options();
    let bind = |options: &femquad::opencl::KernelOptions| {
        let op =
            OpenClOperator::new(device.clone(), options.clone(), &space, disc.clone()).unwrap();
        OpenClIntegrator::new(op, Arc::new(Laplacian), &[], Assembly::Atomic).unwrap()
    };
    let mut integ = bind(&options);
    let variant = integ.residual_variant();
    let default = integ.config(variant).unwrap();
    let u_host = Rng::new(5).vec(space.n_dofs(), -1.0, 1.0);
    let u = DeviceVector::<f64>::from_host(&device, &u_host).unwrap();
    let mut r = DeviceVector::<f64>::zeros(&device, space.n_dofs()).unwrap();
    integ.residual(&u, &mut r).unwrap();
    let reference = r.to_host().unwrap();

    let cell = LaunchConfig::new(32, 1)
        .with_patches(true)
        .with_cell_parallel(true);
    let opts = TuneOptions {
        warmup: 1,
        reps: 2,
        candidates: vec![cell],
        cache_file: Some(cache.clone()),
        ..TuneOptions::default()
    };
    assert_ne!(default, cell, "the tuned configuration is not the default");
    let result = autotune_residual(&mut integ, &u, &mut r, &opts).unwrap();
    assert_eq!(result.best.config, cell);
    let loaded = Arc::new(TuningCache::load(&cache).unwrap());
    let mut later = bind(&options.clone().with_tuning_cache(loaded));
    assert_eq!(later.config(variant).unwrap(), cell);
    later.residual(&u, &mut r).unwrap();
    assert_eq!(later.last_run().launch().unwrap().config, cell);
    let out = r.to_host().unwrap();
    let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let diff = out
        .iter()
        .zip(&reference)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(diff <= 1e-12 * scale, "{diff:e} vs {scale:e}");
}
