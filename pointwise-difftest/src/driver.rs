//! The driver of a generated crate (copied into it with the runtime): its
//! entry point, which opens the device and runs, batch by batch, for each
//! dimension and precision, the residual checks (`crate::runtime`) and the
//! derivative checks (`crate::derivatives`) — kept apart from the runtime,
//! which every check uses, so that no module depends on its dependents.

use crate::residuals::residuals;
use crate::runtime::{Body, Settings};
use femquad::opencl::DeviceSelector;
use femquad::opencl::probe::{Inputs, PointSizes, Probe};
use femquad::physics::EvalPrecision;
use femquad::rng::Rng;

/// The entry point of a generated crate.
pub fn main(bodies: &[Body]) {
    let settings = Settings::from_args();
    let bodies: Vec<&Body> = bodies
        .iter()
        .filter(|b| settings.only.as_ref().is_none_or(|o| o.contains(&b.id)))
        .collect();
    // Native panics are caught and reported; keep their messages short.
    std::panic::set_hook(Box::new(|_| {}));
    let probe = match Probe::open(&DeviceSelector::from_env()) {
        Ok(p) => p,
        Err(e) => {
            println!("fatal no OpenCL device: {e}");
            std::process::exit(2);
        }
    };
    // The device the verdicts were reached on (the explained differences
    // are those of its math library).
    let info = probe.device().info();
    println!("opencl {}: {} ({})", info.vendor, info.name, info.driver);
    for dim in [2, 3] {
        let here: Vec<&Body> = bodies
            .iter()
            .copied()
            .filter(|b| b.physics.info().supports_dim(dim))
            .collect();
        for chunk in here.chunks(settings.batch.max(1)) {
            run::<f64>(&probe, chunk, dim, &settings);
            run::<f32>(&probe, chunk, dim, &settings);
        }
    }
    println!("done");
}

/// The residual and derivative checks of one batch in precision `R`.
fn run<R: EvalPrecision>(probe: &Probe, bodies: &[&Body], dim: usize, s: &Settings) {
    let inputs: Vec<Inputs<R>> = bodies
        .iter()
        .map(|b| {
            let mut rng = Rng::stream(s.seed, (b.points * 4 + dim) as u64);
            let sizes = PointSizes::of(b.physics, dim);
            Inputs::<f64>::random(sizes, s.points, &mut rng, -1.0, 1.0)
                .with_direction(&mut rng, -1.0, 1.0)
                .convert()
        })
        .collect();
    if s.native_only {
        if R::PRECISION == femquad::Precision::F64 {
            for (b, i) in bodies.iter().zip(&inputs) {
                crate::derivatives::native_checks(b, &i.convert());
            }
        }
        return;
    }
    residuals::<R>(probe, bodies, &inputs, dim, s);
    crate::derivatives::run::<R>(probe, bodies, &inputs, dim, s);
}
