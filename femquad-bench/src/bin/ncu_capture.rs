//! Captures femquad's P1 Laplacian kernels on the benchmark's renumbered
//! mesh with its quadrature (one point) for Nsight Compute, which profiles
//! CUDA launches only: each launch of one `F(u)` (transposition,
//! cell-parallel, cell-parallel with patches, with stored geometry, and
//! both cell-parallel ones with the geometry computed from the vertices)
//! and of one SpMV of the assembled matrix is recorded with
//! [`Device::start_capture`] (the program's PTX, the sizes, every argument,
//! each buffer before and after) and written to a directory that
//! `scripts/ncu-replay.py` launches through CUDA's driver — the same PTX on
//! the same data — under `ncu`.
//!
//! ```sh
//! cargo run --release -p femquad-bench --bin ncu_capture -- --out DIR [--cells 2^24] [--reps 20]
//!     [--cases 2d-f32,2d-f64,3d-f64] [--kernels integrate,spmv]
//! ```
//!
//! It prints the device's float4 copy bandwidth first (the same process).
//! Cases: 2D f32, 2D f64, 3D f64 (`--cases` picks some); only the launches
//! of the kernels named by `--kernels` are written (every launch of the
//! calls is captured). Each launch goes to
//! `DIR/<case>-<config>/<k>-<kernel>/`: `program.ptx` (the program binary),
//! `launch.txt` and one file per buffer argument (`argN.bin`, its contents
//! before the launch; `argN.after.bin` where the launch changed it).
//! `launch.txt` holds one item a line:
//!
//! ```text
//! kernel <function name>
//! what <description>
//! global <work-items>
//! local <work-items a group | none>
//! nanoseconds <the captured launch's device time>
//! ms <median host time of one call, batches of 20, same configuration>
//! value <index> <hex bytes>
//! buffer <index> <element type> <argN.bin> <argN.after.bin | ->
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use femquad::opencl::{
    CapturedArg, Device, GeometryMode, KernelOptions, LaunchCapture, OpenClIntegrator,
};
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;
use femquad_bench::bandwidth::measure_copy;
use femquad_bench::host_timing::host_timed;
use femquad_bench::spec::default_qdegree;

fn io(path: &Path) -> impl Fn(std::io::Error) -> Error + '_ {
    move |e| Error::arg("--out", format!("cannot write {}: {e}", path.display()))
}

/// Writes `capture` to `dir` (see the module documentation).
fn write_capture(dir: &Path, capture: &LaunchCapture, ms: f64) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let file = |name: &str| dir.join(name);
    let ptx = file("program.ptx");
    std::fs::write(&ptx, &capture.binary).map_err(io(&ptx))?;
    let mut text = String::new();
    let _ = writeln!(text, "kernel {}", capture.kernel);
    let _ = writeln!(text, "what {}", capture.what);
    let _ = writeln!(text, "global {}", capture.global);
    match capture.local {
        Some(l) => {
            let _ = writeln!(text, "local {l}");
        }
        None => text.push_str("local none\n"),
    }
    let _ = writeln!(text, "nanoseconds {}", capture.nanoseconds);
    let _ = writeln!(text, "ms {ms}");
    for (i, arg) in capture.args.iter().enumerate() {
        match arg {
            CapturedArg::Value(bytes) => {
                let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                let _ = writeln!(text, "value {i} {hex}");
            }
            CapturedArg::Buffer {
                element,
                before,
                after,
            } => {
                let name = format!("arg{i}.bin");
                let path = file(&name);
                std::fs::write(&path, before).map_err(io(&path))?;
                let changed = if after == before {
                    "-".to_string()
                } else {
                    let name = format!("arg{i}.after.bin");
                    let path = file(&name);
                    std::fs::write(&path, after).map_err(io(&path))?;
                    name
                };
                let _ = writeln!(text, "buffer {i} {element} {name} {changed}");
            }
        }
    }
    let launch = file("launch.txt");
    std::fs::write(&launch, text).map_err(io(&launch))
}

/// Writes every launch `device` captured during `call` under
/// `out/<label>/`, with `ms` the call's median host time.
fn capture_call(
    run: &RunOptions,
    label: &str,
    ms: f64,
    call: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let (device, out) = (run.device, run.out);
    device.start_capture();
    let called = call();
    let captures = device.take_captures();
    called?;
    for (k, c) in captures.iter().enumerate() {
        if !run.kernels.contains(&c.kernel) {
            continue;
        }
        let dir = out.join(label).join(format!("{k}-{}", c.kernel));
        write_capture(&dir, c, ms)?;
        println!(
            "{label}: {} ({}), {} work-items in groups of {:?}, {:.3} ms captured, {ms:.3} ms a call \
             -> {}",
            c.kernel,
            c.what,
            c.global,
            c.local,
            c.nanoseconds as f64 * 1e-6,
            dir.display()
        );
    }
    Ok(())
}

/// What every case shares.
struct RunOptions<'a> {
    device: &'a Arc<Device>,
    out: &'a Path,
    cells: usize,
    reps: usize,
    /// The kernels whose launches are written.
    kernels: Vec<String>,
}

/// The operator's OpenCL integrator (the operator is built on a device).
fn on_device<R: Real>(op: &mut Operator<R>) -> Result<&mut OpenClIntegrator<R>> {
    op.integrator()
        .opencl()
        .ok_or_else(|| Error::internal("the operator is not on an OpenCL device"))
}

fn run<R: Real>(run: &RunOptions, dim: usize) -> Result<()>
where
    Laplacian: PointwiseEval<R>,
{
    let (device, cells, reps) = (run.device, run.cells, run.reps);
    let opts = MeshOptions {
        shuffle: true,
        ..MeshOptions::default()
    };
    let (mesh, _) = femquad::mesh::mesh_for_cells(dim, cells, &opts)?.renumbered_for_locality()?;
    let mesh = Arc::new(mesh);
    let case = format!("{dim}d-{}", R::PRECISION.name());
    let backend = Backend::opencl_with(device.clone(), KernelOptions::from_env()?);
    let space = FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1)?, 1)?;
    // the benchmark's rule (one point for P1: exact for the Laplacian), so
    // that these launches are the BP rows' `F(u)` and not the default
    // rule's (three / four points)
    let quadrature = Quadrature::simplex(dim, default_qdegree(1))?;
    let form = Form::new(space, Laplacian)?.with_quadrature(quadrature)?;
    let mut op = Operator::<R>::new(form, &backend)?;
    let n = op.space().n_dofs();
    let values: Vec<R> = (0..n)
        .map(|i| R::from_f64(0.5 + (i as f64 * 0.37).sin()))
        .collect();
    let u = op.vector_from(&values)?;
    let mut f = op.vector()?;
    println!(
        "# {case}: {} cells, {n} dofs on {}",
        mesh.n_cells(),
        device.info().name
    );

    let integ = on_device(&mut op)?;
    let variant = integ.residual_variant();
    // every configuration names its geometry: the default's follows the
    // kernel (`femquad::opencl::shape::default_geometry`)
    let default = integ.config(variant)?.with_geometry(GeometryMode::Stored);
    let configs = [
        (
            "transposition",
            default.with_cell_parallel(false).with_prefetch(true),
        ),
        ("cell-parallel", default.with_cell_parallel(true)),
        (
            "cell-parallel-patches",
            default.with_cell_parallel(true).with_patches(true),
        ),
        (
            "cell-parallel-computed",
            default
                .with_cell_parallel(true)
                .with_geometry(GeometryMode::Computed),
        ),
        (
            "cell-parallel-patches-computed",
            default
                .with_cell_parallel(true)
                .with_patches(true)
                .with_geometry(GeometryMode::Computed),
        ),
    ];
    for (name, config) in configs {
        on_device(&mut op)?.set_config(variant, config)?;
        println!("# {case}-{name}: {config}");
        let ms = host_timed(reps, &mut f, |f| op.apply(&u, f))?;
        capture_call(run, &format!("{case}-{name}"), ms, || op.apply(&u, &mut f))?;
    }

    let matrix = op.assemble_matrix(&u)?;
    let ms = host_timed(reps, &mut f, |y| matrix.apply(&u, y))?;
    capture_call(run, &format!("{case}-spmv"), ms, || {
        matrix.apply(&u, &mut f)
    })?;
    Ok(())
}

fn main() -> Result<()> {
    let mut cells = 1usize << 24;
    let mut reps = 20usize;
    let mut out: Option<PathBuf> = None;
    let mut cases = "2d-f32,2d-f64,3d-f64".to_string();
    let mut kernels = "integrate,spmv".to_string();
    let args: Vec<String> = std::env::args().collect();
    let mut i = 1;
    while i < args.len() {
        let value = args
            .get(i + 1)
            .ok_or_else(|| Error::arg("args", format!("{} needs a value", args[i])))?;
        match args[i].as_str() {
            "--cells" => cells = femquad::mesh::size::parse_count(value)?,
            "--reps" => reps = femquad::mesh::size::parse_count(value)?.max(1),
            "--out" => out = Some(PathBuf::from(value)),
            "--cases" => cases = value.clone(),
            "--kernels" => kernels = value.clone(),
            a => return Err(Error::arg("args", format!("unknown argument {a}"))),
        }
        i += 2;
    }
    let out = out.ok_or_else(|| Error::arg("--out", "the directory to write to is required"))?;
    let device = Device::from_env()?;
    let copy = measure_copy(&device, 1 << 30, 3, 20)?;
    println!(
        "# ncu_capture on {}, copy bandwidth {:.1} GB/s (femquad-bench float4 copy, same process)",
        device.info().name,
        copy.gb_per_s()
    );
    let options = RunOptions {
        device: &device,
        out: &out,
        cells,
        reps,
        kernels: kernels.split(',').map(str::to_string).collect(),
    };
    for case in cases.split(',') {
        match case {
            "2d-f32" => run::<f32>(&options, 2)?,
            "2d-f64" => run::<f64>(&options, 2)?,
            "3d-f64" => run::<f64>(&options, 3)?,
            c => {
                return Err(Error::arg(
                    "--cases",
                    format!("unknown case {c} (2d-f32, 2d-f64, 3d-f64)"),
                ));
            }
        }
    }
    Ok(())
}
