//! Host time per operator application: how long one `F(u)` (and one
//! `J(u)·v`) call keeps the host busy before it returns, on a mesh small
//! enough that the device work does not dominate (the issue #21 measure:
//! no source regeneration or hashing per call).
//!
//! ```sh
//! cargo run --release -p femquad-bench --bin apply_overhead -- [--cells 4096] [--calls 2000]
//! ```
//! Prints, per physics (2D P1 Laplacian, 3D P1 Lamé) and precision, the
//! median and the 10 %/90 % quantiles of the host microseconds per call
//! (`F(u)` as `Operator::apply` gives it, with its scan of `u` for NaN — one
//! reduction and a scalar read; `J(u)·v` with no read-back at all),
//! with the device queue drained every 50 calls (so enqueues never block
//! on a full queue) outside the timed region.

use std::time::Instant;

use femquad::physics::builtin::{Lame, Laplacian};
use femquad::prelude::*;

fn quantiles(mut t: Vec<f64>) -> (f64, f64, f64) {
    t.sort_by(f64::total_cmp);
    let q = |p: f64| t[((t.len() - 1) as f64 * p).round() as usize];
    (q(0.1), q(0.5), q(0.9))
}

fn measure<R: Real, P: PointwiseEval<R> + 'static>(
    dim: usize,
    cells: usize,
    physics: P,
    constants: &[f64],
    calls: usize,
) -> femquad::Result<()> {
    let mesh = if dim == 2 {
        let n = ((cells as f64 / 2.0).sqrt().ceil() as usize).max(1);
        unit_square(n, &MeshOptions::default())?
    } else {
        let n = ((cells as f64 / 6.0).cbrt().ceil() as usize).max(1);
        unit_cube(n, &MeshOptions::default())?
    };
    let mesh = std::sync::Arc::new(mesh);
    let element = Element::lagrange(dim, 1)?;
    let n_comp = physics.info().n_comp.resolve(dim);
    let space = FunctionSpace::new(mesh.clone(), element, n_comp)?;
    let backend = Backend::opencl_from_env()?;
    let form = Form::new(space, physics)?.with_constants(constants)?;
    let mut op = Operator::<R>::new(form, &backend)?;
    let n = op.space().n_dofs();
    let values: Vec<R> = (0..n)
        .map(|i| R::from_f64((i as f64 * 0.37).sin()))
        .collect();
    let u = op.vector_from(&values)?;
    let v = op.vector_from(&values)?;
    let mut r = op.vector()?;
    for (what, jacobian) in [("F(u)", false), ("J(u)v", true)] {
        let mut times = Vec::with_capacity(calls);
        for k in 0..calls + 50 {
            if k % 50 == 0 {
                r.norm2()?; // drains the queue, outside the timed call
            }
            let t0 = Instant::now();
            if jacobian {
                op.jacobian_action(&u, &v, &mut r)?;
            } else {
                op.apply(&u, &mut r)?;
            }
            let dt = t0.elapsed().as_secs_f64() * 1e6;
            if k >= 50 {
                times.push(dt);
            }
        }
        let (lo, med, hi) = quantiles(times);
        println!(
            "{dim}D {:<18} {:<4} {what:<6} {:>7} cells  host µs/call: median {med:7.2}  (10% {lo:6.2}, 90% {hi:6.2})",
            op.physics().info().name,
            R::PRECISION.name(),
            mesh.n_cells()
        );
    }
    Ok(())
}

fn main() -> femquad::Result<()> {
    let mut cells = 4096usize;
    let mut calls = 2000usize;
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = || -> femquad::Result<usize> {
            args.get(i + 1)
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| femquad::Error::arg("args", format!("{} needs a number", args[i])))
        };
        match args[i].as_str() {
            "--cells" => cells = value()?,
            "--calls" => calls = value()?,
            a => return Err(femquad::Error::arg("args", format!("unknown argument {a}"))),
        }
        i += 2;
    }
    let lame = [1.0, 1.0];
    measure::<f64, _>(2, cells, Laplacian, &[], calls)?;
    measure::<f32, _>(2, cells, Laplacian, &[], calls)?;
    measure::<f64, _>(3, cells, Lame, &lame, calls)?;
    Ok(())
}
