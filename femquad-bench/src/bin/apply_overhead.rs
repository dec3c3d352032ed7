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
//!
//! Then the launch floor: chains of `--calls` dependent launches of a
//! vector kernel on 1024 entries (device work negligible), each chain timed
//! from its first enqueue to the queue's finish, as µs per launch — through
//! femquad's `DeviceVector::axpby`, and through raw `opencl3` launches of a
//! kernel with the same body on femquad's profiling queue and on a queue
//! without profiling. What a V-cycle's small levels cost per launch.

use std::time::Instant;

use femquad::opencl::{Device, DeviceVector};
use femquad::physics::builtin::{Lame, Laplacian};
use femquad::prelude::*;
use opencl3::command_queue::CommandQueue;
use opencl3::context::Context;
use opencl3::memory::ClMem;

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

const AXPBY: &str = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n\
__kernel void axpby(__global double *y, __global const double *x, ulong n, double a, double b)\n\
{ const size_t i = get_global_id(0); if (i < n) y[i] = a * x[i] + b * y[i]; }\n";

/// `(wall µs per launch, host µs per enqueue)` of `calls` launches by
/// `launch`, after a drained queue, until `finish` returns.
fn chain(
    calls: usize,
    mut launch: impl FnMut() -> femquad::Result<()>,
    finish: impl Fn() -> femquad::Result<()>,
) -> femquad::Result<(f64, f64)> {
    for _ in 0..50 {
        launch()?;
    }
    finish()?;
    let mut walls = Vec::new();
    let mut hosts = Vec::new();
    for _ in 0..5 {
        let t0 = Instant::now();
        for _ in 0..calls {
            launch()?;
        }
        let enqueued = t0.elapsed().as_secs_f64();
        finish()?;
        let wall = t0.elapsed().as_secs_f64();
        walls.push(wall * 1e6 / calls as f64);
        hosts.push(enqueued * 1e6 / calls as f64);
    }
    Ok((quantiles(walls).1, quantiles(hosts).1))
}

fn cl(call: &'static str) -> impl Fn(opencl3::error_codes::ClError) -> femquad::Error {
    move |e| femquad::Error::OpenCl {
        call,
        code: e.0,
        name: e.to_string(),
    }
}

/// The launch floor (see the module documentation).
fn launch_floor(calls: usize) -> femquad::Result<()> {
    let device = Device::from_env()?;
    let n = 1024usize;
    let values: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let mut y = DeviceVector::from_host(&device, &values)?;
    let x = DeviceVector::from_host(&device, &values)?;
    let finish = || device.queue().finish().map_err(cl("clFinish"));
    let report = |what: &str, (wall, host): (f64, f64)| {
        println!("launch floor  {what:<44} µs/launch: wall {wall:7.2}  host enqueue {host:7.2}");
    };
    report(
        "femquad DeviceVector::axpby",
        chain(calls, || y.axpby(0.5, &x, 0.5), finish)?,
    );
    let kernel = device.kernel(AXPBY, "axpby")?;
    let global = n;
    let local = 256usize;
    let set_args = || -> femquad::Result<()> {
        // SAFETY: the arguments match the kernel's signature; the buffers
        // hold n doubles.
        unsafe {
            kernel
                .set_arg(0, &y.buffer().get())
                .map_err(cl("clSetKernelArg"))?;
            kernel
                .set_arg(1, &x.buffer().get())
                .map_err(cl("clSetKernelArg"))?;
            kernel
                .set_arg(2, &(n as u64))
                .map_err(cl("clSetKernelArg"))?;
            kernel.set_arg(3, &0.5f64).map_err(cl("clSetKernelArg"))?;
            kernel.set_arg(4, &0.5f64).map_err(cl("clSetKernelArg"))?;
        }
        Ok(())
    };
    set_args()?;
    let raw = |queue: &CommandQueue| -> femquad::Result<()> {
        // SAFETY: every argument is set; the sizes outlive the call.
        unsafe {
            queue.enqueue_nd_range_kernel(kernel.get(), 1, std::ptr::null(), &global, &local, &[])
        }
        .map(drop)
        .map_err(cl("clEnqueueNDRangeKernel"))
    };
    report(
        "raw opencl3, args set once, profiling queue",
        chain(calls, || raw(device.queue()), finish)?,
    );
    report(
        "raw opencl3, 5 args set per launch, profiling",
        chain(
            calls,
            || set_args().and_then(|()| raw(device.queue())),
            finish,
        )?,
    );
    // A queue without profiling on the same context and device.
    let ctx = device
        .queue()
        .context()
        .map_err(cl("clGetCommandQueueInfo"))?;
    let dev = device
        .queue()
        .device()
        .map_err(cl("clGetCommandQueueInfo"))?;
    let context = std::mem::ManuallyDrop::new(Context::new(ctx, &[dev]));
    // SAFETY: `dev` belongs to `ctx` (both from femquad's queue).
    let plain = unsafe { CommandQueue::create_with_properties(&context, dev, 0, 0) }
        .map_err(cl("clCreateCommandQueueWithProperties"))?;
    let finish_plain = || plain.finish().map_err(cl("clFinish"));
    report(
        "raw opencl3, args set once, no profiling",
        chain(calls, || raw(&plain), finish_plain)?,
    );
    // clEnqueueNDRangeKernel asked for no event (a null event pointer).
    let runtime = cl3::load_library()
        .as_ref()
        .map_err(|e| femquad::Error::arg("OpenCL", format!("{e:?}")))?;
    let no_event = |queue: &CommandQueue| -> femquad::Result<()> {
        // SAFETY: every argument is set; the sizes outlive the call.
        let status = runtime.clEnqueueNDRangeKernel(
            queue.get(),
            kernel.get(),
            1,
            std::ptr::null(),
            &global,
            &local,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        );
        match status {
            Some(0) => Ok(()),
            s => Err(femquad::Error::arg(
                "clEnqueueNDRangeKernel",
                format!("{s:?}"),
            )),
        }
    };
    report(
        "raw, no event, profiling queue",
        chain(calls, || no_event(device.queue()), finish)?,
    );
    report(
        "raw, no event, no profiling",
        chain(calls, || no_event(&plain), finish_plain)?,
    );
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
    launch_floor(calls)?;
    Ok(())
}
