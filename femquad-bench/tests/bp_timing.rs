//! Device time of `F(u)`, `J(u)·v` and `diag(J)` at a benchmark size: a GPU
//! measurement, ignored in the test runs (it was in femquad's operator unit
//! tests, before the copy kernel moved into this crate).

use std::sync::Arc;

use femquad::aux_space::AuxSpace;
use femquad::discretization::Discretization;
use femquad::element::Element;
use femquad::mesh::generate::{MeshOptions, mesh_for_cells};
use femquad::opencl::autotune::{median, time_runs};
use femquad::opencl::testing::{device, options};
use femquad::opencl::{Assembly, Device, DeviceVector, GeometryMode, LaunchConfig};
use femquad::opencl::{OpenClIntegrator, OpenClOperator};
use femquad::physics::builtin::{Lame, Laplacian};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::quadrature::Quadrature;
use femquad::real::convert_slice;
use femquad::rng::Rng;
use femquad::seam::Integrate;
use femquad::space::FunctionSpace;
use femquad_bench::bandwidth::measure_copy;

/// Device time of `F(u)` at a benchmark size, every assembly and geometry
/// mode, randomly numbered and structured mesh: an early measurement before
/// the benchmark's BP mode. `FEMQUAD_BP_CELLS` sets the size (default 2^24).
#[test]
#[ignore = "a GPU measurement: cargo test --release -p femquad-bench --test bp_timing -- --ignored --nocapture"]
fn bp_timing() {
    let device = device();
    let cells: usize = std::env::var("FEMQUAD_BP_CELLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1 << 24);
    let copy = measure_copy(&device, 1 << 30, 3, 20).unwrap();
    println!(
        "device {}: copy {:.0} GB/s",
        device.info().name,
        copy.gb_per_s()
    );
    fn run<R: EvalPrecision>(
        device: &Arc<Device>,
        dim: usize,
        cells: usize,
        shuffle: bool,
        physics: &'static dyn PointwiseEvalBoth,
        constants: &[f64],
        copy_gbs: f64,
    ) {
        let opts = MeshOptions {
            jitter: 0.1,
            shuffle,
            seed: 3,
        };
        let mesh = mesh_for_cells(dim, cells, &opts).unwrap();
        // shuffle = false: the randomly numbered mesh renumbered for locality
        let mesh = if shuffle {
            mesh
        } else {
            mesh_for_cells(
                dim,
                cells,
                &MeshOptions {
                    shuffle: true,
                    ..opts
                },
            )
            .unwrap()
            .renumbered_for_locality()
            .unwrap()
            .0
        };
        let n_comp = physics.info().n_comp.resolve(dim);
        let mesh = Arc::new(mesh);
        let space =
            FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1).unwrap(), n_comp).unwrap();
        let disc =
            Discretization::<R>::new(&space, Quadrature::simplex(dim, 1).unwrap(), AuxSpace::None)
                .unwrap();
        let op = OpenClOperator::new(device.clone(), options(), &space, disc).unwrap();
        let consts: Vec<R> = convert_slice(constants);
        let bound = Arc::new(R::physics(physics));
        let mut op = OpenClIntegrator::new(op, bound, &consts, Assembly::Atomic).unwrap();
        let n = space.n_dofs();
        let u_host: Vec<R> = convert_slice(&Rng::new(1).vec(n, -1.0, 1.0));
        let u = DeviceVector::<R>::from_host(device, &u_host).unwrap();
        let mut r = DeviceVector::<R>::zeros(device, n).unwrap();
        let s = R::PRECISION.size();
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            op.set_assembly(assembly).unwrap();
            let variant = op.residual_variant();
            let base = op.config(variant).unwrap();
            for geometry in [GeometryMode::Computed, GeometryMode::Stored] {
                for (n_bl, prefetch, patches) in [
                    (base.n_bl, true, true),
                    (base.n_bl, true, false),
                    ((base.n_bl / 2).max(1), true, base.patches),
                    (base.n_bl, false, base.patches),
                ] {
                    let c = LaunchConfig {
                        n_bl,
                        prefetch,
                        patches,
                        ..base
                    }
                    .with_geometry(geometry);
                    if op.shape(variant, c).is_err() {
                        continue;
                    }
                    op.set_config(variant, c).unwrap();
                    time_runs(&mut op, 3, |op| op.residual(&u, &mut r)).unwrap();
                    let times = time_runs(&mut op, 20, |op| op.residual(&u, &mut r)).unwrap();
                    let t = median(&times) * 1e-9;
                    let nv = mesh.n_vertices();
                    let nc = mesh.n_cells();
                    let geo = match geometry {
                        GeometryMode::Computed => nv * dim * s,
                        GeometryMode::Stored => nc * (dim * dim + 1) * s,
                    };
                    let bytes = (2 * n * s + nc * (dim + 1) * 4 + geo) as f64;
                    let patched = op.last_run().launch().map_or(0, |l| l.patch_groups);
                    println!(
                        "{dim}D P1 {:<10} {} {:<8} {} {:<13} {c} [{patched} patches]: {:8.3} ms  {:6.0} GB/s min-bytes ({:5.1} % copy)",
                        physics.info().name,
                        R::PRECISION,
                        if shuffle { "random" } else { "hilbert" },
                        assembly.name(),
                        geometry.name(),
                        t * 1e3,
                        bytes / t * 1e-9,
                        100.0 * bytes / t * 1e-9 / copy_gbs
                    );
                }
            }
        }
        // J(u)·v (default configuration, atomic) and diag(J) against one F(u)
        op.set_assembly(Assembly::Atomic).unwrap();
        let v =
            DeviceVector::<R>::from_host(device, &convert_slice(&Rng::new(2).vec(n, -1.0, 1.0)))
                .unwrap();
        // 23 evaluations, the first 3 a warm-up
        type Evaluate<'a, R> = dyn FnMut(&mut OpenClIntegrator<R>) -> femquad::Result<()> + 'a;
        let time = |op: &mut OpenClIntegrator<R>, what: &mut Evaluate<'_, R>| {
            median(&time_runs(op, 23, what).unwrap()[3..]) * 1e-9
        };
        let t_f = time(&mut op, &mut |op| op.residual(&u, &mut r));
        let t_jv = time(&mut op, &mut |op| op.jacobian_action(&u, &v, &mut r));
        let nc2 = n_comp * n_comp;
        let mut d = DeviceVector::<R>::zeros(device, space.n_nodes() * nc2).unwrap();
        let t_diag = time(&mut op, &mut |op| op.jacobian_diagonal(&u, &mut d));
        let (nv, ncl) = (mesh.n_vertices(), mesh.n_cells());
        let conn = ncl * (dim + 1) * 4;
        // v and J·v, and u unless the physics is affine (its tangent does not read u)
        let vectors = if physics.info().linear { 2 } else { 3 };
        let jv_bytes = (vectors * n * s + conn + nv * dim * s) as f64;
        let diag_bytes =
            (n * s + space.n_nodes() * nc2 * s + conn + ncl * (dim * dim + 1) * s) as f64;
        println!(
            "{dim}D P1 {:<10} {} {:<8} F(u) {:8.3} ms | J·v {:8.3} ms {:6.0} GB/s ({:5.1} % copy) | diag(J) {:8.3} ms = {:.2}× F(u), {:6.0} GB/s",
            physics.info().name,
            R::PRECISION,
            if shuffle { "random" } else { "hilbert" },
            t_f * 1e3,
            t_jv * 1e3,
            jv_bytes / t_jv * 1e-9,
            100.0 * jv_bytes / t_jv * 1e-9 / copy_gbs,
            t_diag * 1e3,
            t_diag / t_f,
            diag_bytes / t_diag * 1e-9,
        );
    }
    let g = copy.gb_per_s();
    for shuffle in [false, true] {
        run::<f32>(&device, 2, cells, shuffle, &Laplacian, &[], g);
        run::<f64>(&device, 2, cells, shuffle, &Laplacian, &[], g);
        run::<f64>(&device, 3, cells, shuffle, &Laplacian, &[], g);
        run::<f64>(&device, 2, cells, shuffle, &Lame, &[1.0, 2.0], g);
        run::<f64>(&device, 3, cells, shuffle, &Lame, &[1.0, 2.0], g);
    }
}
