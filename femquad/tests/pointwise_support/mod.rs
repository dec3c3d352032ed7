//! Shared by the `pointwise_*` tests: the device probe (opened once per test
//! binary, used by one test at a time), native evaluation at the probe's
//! points, and the comparison of the two.
#![allow(dead_code)]

pub mod physics;

use femquad::opencl::DeviceSelector;
use femquad::opencl::probe::{Inputs, Outputs, PointSizes, Probe};
use femquad::physics::{EvalPrecision, Pointwise, PointwiseEval, PointwiseEvalBoth};
use femquad::rng::Rng;
use femquad::{Precision, Real};
use std::sync::{Mutex, OnceLock};

/// Points per physics.
pub const POINTS: usize = 257;

/// Runs `f` with the probe of the tests, one test at a time (the OpenCL
/// runtime is initialised once: concurrent first use is not reliable). The
/// device is femquad's own choice (`FEMQUAD_DEVICE`, else a GPU, else the
/// CPU — PoCL in CI). Fails (not skips) without an OpenCL platform.
pub fn with_probe<T>(f: impl FnOnce(&Probe) -> T) -> T {
    static PROBE: OnceLock<Probe> = OnceLock::new();
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let probe = PROBE.get_or_init(|| {
        Probe::open(&DeviceSelector::from_env()).unwrap_or_else(|e| {
            panic!(
                "{e}\nthe #[pointwise] tests need an OpenCL platform; install PoCL \
                 (Debian/Ubuntu: `apt-get install pocl-opencl-icd`), as CI does"
            )
        })
    });
    assert!(
        probe.device().info().fp64,
        "the OpenCL device has no fp64 support; PoCL's CPU device has"
    );
    f(probe)
}

/// `f0`, `f1` of the native evaluation at every point of `inputs`.
pub fn native<R: Real>(physics: &dyn PointwiseEval<R>, inputs: &Inputs<R>) -> Outputs<R> {
    let per_point = inputs.sizes.outputs();
    let mut out = Outputs {
        per_point,
        f0: vec![R::ZERO; per_point[0] * inputs.points],
        f1: vec![R::ZERO; per_point[1] * inputs.points],
    };
    for p in 0..inputs.points {
        let (n0, n1) = (per_point[0], per_point[1]);
        physics
            .eval(
                inputs.sizes.dim,
                &inputs.point(p),
                &mut out.f0[p * n0..(p + 1) * n0],
                &mut out.f1[p * n1..(p + 1) * n1],
            )
            .expect("native evaluation");
    }
    out
}

/// Relative difference of two output arrays, norm-wise.
pub fn rel_diff(got: &[f64], want: &[f64]) -> f64 {
    let diff: f64 = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w) * (g - w))
        .sum::<f64>()
        .sqrt();
    let norm: f64 = want.iter().map(|w| w * w).sum::<f64>().sqrt();
    if norm == 0.0 { diff } else { diff / norm }
}

/// Tolerance of native-versus-OpenCL comparisons.
pub fn tolerance<R: Real>() -> f64 {
    match R::PRECISION {
        Precision::F64 => 1e-12,
        Precision::F32 => 1e-5,
    }
}

/// Compares device and native outputs of `physics` point by point; returns
/// the largest relative difference.
pub fn compare<R: Real>(
    physics: &dyn Pointwise,
    dim: usize,
    device: &Outputs<R>,
    native: &Outputs<R>,
) -> f64 {
    let info = physics.info();
    let wide = |v: &[R]| v.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
    let tol = tolerance::<R>();
    let mut worst: f64 = 0.0;
    for p in 0..device.f0.len() / device.per_point[0].max(1) {
        for (what, has, got, want) in [
            ("f0", info.has_f0, device.f0(p), native.f0(p)),
            ("f1", info.has_f1, device.f1(p), native.f1(p)),
        ] {
            let (got, want) = (wide(got), wide(want));
            if !has {
                assert!(
                    got.iter().all(|v| *v == 0.0),
                    "{what} written though absent"
                );
                continue;
            }
            assert!(
                want.iter().all(|v| v.is_finite()),
                "{}: non-finite native {what} {want:?}",
                info.name
            );
            let d = rel_diff(&got, &want);
            assert!(
                d <= tol,
                "`{}` {} {dim}D point {p}: {what} differs by {d:e} (tolerance {tol:e})\n\
                 OpenCL {got:?}\nnative {want:?}",
                info.name,
                R::PRECISION
            );
            worst = worst.max(d);
        }
    }
    worst
}

/// Random inputs of `physics` in dimension `dim` (`POINTS` points in
/// [-1, 1)), in precision `R`.
pub fn random_inputs<R: Real>(physics: &dyn Pointwise, dim: usize, seed: u64) -> Inputs<R> {
    let mut rng = Rng::new(seed);
    Inputs::<f64>::random(PointSizes::of(physics, dim), POINTS, &mut rng, -1.0, 1.0).convert()
}

fn check_precision<R: EvalPrecision>(
    probe: &Probe,
    physics: &[&dyn PointwiseEvalBoth],
    dim: usize,
    seed: u64,
) {
    let inputs: Vec<Inputs<R>> = physics
        .iter()
        .enumerate()
        .map(|(i, p)| random_inputs(*p, dim, seed + 1000 * i as u64 + dim as u64))
        .collect();
    let items: Vec<(&dyn Pointwise, &Inputs<R>)> = physics
        .iter()
        .map(|&p| p as &dyn Pointwise)
        .zip(inputs.iter())
        .collect();
    let device = probe
        .residuals(dim, &items)
        .unwrap_or_else(|e| panic!("{} {dim}D: {e}", R::PRECISION));
    for ((p, inputs), device) in physics.iter().zip(&inputs).zip(&device) {
        let worst = compare(*p, dim, device, &native(R::physics(*p), inputs));
        println!(
            "{:24} {dim}D {}: largest relative difference {worst:.2e}",
            p.info().name,
            R::PRECISION
        );
    }
}

/// Checks every physics of `physics` in every dimension it supports and
/// both precisions, in one probe program per dimension and precision.
pub fn check_all(physics: &[&dyn PointwiseEvalBoth], seed: u64) {
    with_probe(|probe| {
        for dim in [2, 3] {
            let these: Vec<&dyn PointwiseEvalBoth> = physics
                .iter()
                .copied()
                .filter(|p| p.info().supports_dim(dim))
                .collect();
            if these.is_empty() {
                continue;
            }
            check_precision::<f64>(probe, &these, dim, seed);
            check_precision::<f32>(probe, &these, dim, seed);
        }
    });
}

/// [`check_all`] for one physics.
pub fn check_physics(physics: &dyn PointwiseEvalBoth, seed: u64) {
    check_all(&[physics], seed);
}
