//! Effective bandwidth of the device vector kernels against the copy
//! kernel: a GPU measurement (ignored in the test runs), beside the
//! benchmark's other measurements (it was in femquad's `device_vector` tests,
//! before the copy kernel moved into this crate).

use std::sync::Arc;

use femquad::Real;
use femquad::opencl::{Device, DeviceVector};
use femquad::rng::Rng;
use femquad_bench::bandwidth::measure_copy;

fn random<R: Real>(n: usize, seed: u64) -> Vec<R> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| R::from_f64(rng.range(-1.0, 1.0))).collect()
}

/// Effective bandwidth of the vector kernels against the copy kernel, on
/// the selected device: `FEMQUAD_DEVICE=gpu cargo test --release -p femquad-bench
/// --test vector_bandwidth -- --ignored --nocapture` (`FEMQUAD_VECTOR_N`
/// entries, default 2²⁵). Elementwise operations are enqueued 20 times and
/// timed to `clFinish`; reductions are timed call by call (each waits for
/// its scalar read: what a solver pays). Bytes are the minimal ones: every
/// vector read or written once.
#[test]
#[ignore = "measurement: run on a GPU with --ignored --nocapture"]
fn measure_vector_bandwidth() {
    use std::time::Instant;
    let device = femquad::opencl::testing::device();
    let n: usize = std::env::var("FEMQUAD_VECTOR_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 25);
    let copy = measure_copy(&device, n * 8, 3, 20).unwrap();
    println!(
        "device: {}\ncopy kernel (float4, {} MB): {:.0} GB/s",
        device.info(),
        copy.bytes / 2_000_000,
        copy.gb_per_s()
    );
    println!("| operation | precision | n | µs per call | GB/s | % of copy |");
    println!("|---|---|---|---|---|---|");
    fn run<R: Real>(device: &Arc<Device>, n: usize, copy_gbs: f64) {
        let s = R::PRECISION.size() as f64;
        let reps = 20;
        let x = DeviceVector::from_host(device, &random::<R>(n, 1)).unwrap();
        let z = DeviceVector::from_host(device, &random::<R>(n, 2)).unwrap();
        let mut y = x.zeros_like().unwrap();
        let vs: Vec<DeviceVector<R>> = (0..8)
            .map(|j| DeviceVector::from_host(device, &random::<R>(n, 10 + j)).unwrap())
            .collect();
        let refs: Vec<&DeviceVector<R>> = vs.iter().collect();
        let alphas = [0.1; 8];
        // warm-up: clocks up after the uploads, every kernel compiled
        for _ in 0..100 {
            y.axpy(0.5, &x).unwrap();
        }
        device.queue().finish().unwrap();
        let report = |name: &str, secs: f64, vectors: f64| {
            let gbs = vectors * n as f64 * s / secs * 1e-9;
            println!(
                "| {name} | {} | {n} | {:.1} | {gbs:.0} | {:.0} % |",
                R::PRECISION,
                secs * 1e6,
                100.0 * gbs / copy_gbs
            );
        };
        let mut time_enqueued =
            |name: &str, vectors: f64, f: &mut dyn FnMut(&mut DeviceVector<R>)| {
                f(&mut y); // warm-up (and compilation)
                device.queue().finish().unwrap();
                let t = Instant::now();
                for _ in 0..reps {
                    f(&mut y);
                }
                device.queue().finish().unwrap();
                report(name, t.elapsed().as_secs_f64() / reps as f64, vectors);
            };
        time_enqueued("fill", 1.0, &mut |y| y.fill(1.0).unwrap());
        time_enqueued("copy_from", 2.0, &mut |y| y.copy_from(&x).unwrap());
        time_enqueued("scale", 2.0, &mut |y| y.scale(0.5).unwrap());
        time_enqueued("axpy", 3.0, &mut |y| y.axpy(0.5, &x).unwrap());
        time_enqueued("axpby", 3.0, &mut |y| y.axpby(0.5, &x, 0.5).unwrap());
        time_enqueued("pointwise_mult", 3.0, &mut |y| {
            y.pointwise_mult(&x, &z).unwrap()
        });
        time_enqueued("maxpy (8)", 10.0, &mut |y| y.maxpy(&alphas, &refs).unwrap());
        let time_blocking = |name: &str, vectors: f64, f: &dyn Fn()| {
            f();
            let t = Instant::now();
            for _ in 0..reps {
                f();
            }
            report(name, t.elapsed().as_secs_f64() / reps as f64, vectors);
        };
        time_blocking("dot", 2.0, &|| {
            x.dot(&z).unwrap();
        });
        time_blocking("norm2", 1.0, &|| {
            x.norm2().unwrap();
        });
        time_blocking("norm_inf", 1.0, &|| {
            x.norm_inf().unwrap();
        });
        time_blocking("dots (8)", 9.0, &|| {
            x.dots(&refs).unwrap();
        });
        time_blocking("first_non_finite", 1.0, &|| {
            x.first_non_finite().unwrap();
        });
        let mut y = x.zeros_like().unwrap();
        let t = Instant::now();
        for _ in 0..reps {
            y.fill(2.0).unwrap();
        }
        device.queue().finish().unwrap();
        report(
            "fill (after the others)",
            t.elapsed().as_secs_f64() / reps as f64,
            1.0,
        );
    }
    run::<f32>(&device, n, copy.gb_per_s());
    if device.info().fp64 {
        run::<f64>(&device, n, copy.gb_per_s());
    }
}
