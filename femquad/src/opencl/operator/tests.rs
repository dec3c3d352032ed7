//! The operator's kernels against the native reference, on the device chosen
//! by `FEMQUAD_DEVICE` (PoCL in CI): the element kernel (BK) and the global
//! residual in both assembly modes and both geometry modes, on meshes
//! smaller than one chunk, of exactly one chunk, and with remainders.

use std::sync::Arc;

use super::*;
use crate::aux_space::AuxSpace;
use crate::element::Element;
use crate::mesh::generate::{MeshOptions, unit_box};
use crate::native::element_vectors as native_element_vectors;
use crate::opencl::{DeviceSelector, DeviceVector};
use crate::physics::builtin::{Lame, Laplacian, LaplacianCoefficient};
use crate::physics::{EvalPrecision, PointwiseEvalBoth};
use crate::quadrature::Quadrature;
use crate::real::convert_slice;
use crate::rng::Rng;

fn device() -> Arc<Device> {
    Device::open(&DeviceSelector::from_env()).unwrap_or_else(|e| {
        panic!(
            "these tests need an OpenCL device ({e}); on Debian/Ubuntu install \
             pocl-opencl-icd and ocl-icd-libopencl1"
        )
    })
}

fn mesh(dim: usize, n: usize) -> Mesh {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 21,
    };
    unit_box(dim, n, &opts).unwrap()
}

/// Max-norm relative difference `‖a − b‖∞ / ‖b‖∞`.
fn rel_diff<R: Real>(a: &[R], b: &[R]) -> f64 {
    let num = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.to_f64() - y.to_f64()).abs())
        .fold(0.0, f64::max);
    let den = b.iter().map(|y| y.to_f64().abs()).fold(0.0, f64::max);
    num / den
}

/// One physics on one mesh.
struct Case {
    dim: usize,
    order: usize,
    n: usize,
    physics: &'static dyn PointwiseEvalBoth,
    aux: AuxSpace,
    constants: Vec<f64>,
    degree: usize,
}

/// Everything both paths need for one case.
struct Setup<R: Real> {
    mesh: Mesh,
    space: FunctionSpace,
    disc: Discretization<R>,
    u: Vec<R>,
    aux: Vec<R>,
    constants: Vec<R>,
}

fn setup<R: Real>(case: &Case) -> Setup<R> {
    let mesh = mesh(case.dim, case.n);
    let n_comp = case.physics.info().n_comp.resolve(case.dim);
    let element = Element::lagrange(case.dim, case.order).unwrap();
    let space = FunctionSpace::new(&mesh, element, n_comp).unwrap();
    let quad = Quadrature::simplex(case.dim, case.degree).unwrap();
    let disc = Discretization::<R>::new(&mesh, &space, quad, case.aux).unwrap();
    let mut rng = Rng::new(case.dim as u64 * 100 + case.order as u64 + case.n as u64);
    let u = convert_slice(&rng.vec(space.n_dofs(), -1.0, 1.0));
    let aux_len = match case.aux {
        AuxSpace::None => 0,
        AuxSpace::Field { n_comp } => space.n_nodes() * n_comp,
        AuxSpace::Cell { n_comp } => mesh.n_cells() * n_comp,
    };
    let aux = convert_slice(&rng.vec(aux_len, 0.5, 2.0));
    Setup {
        constants: convert_slice(&case.constants),
        mesh,
        space,
        disc,
        u,
        aux,
    }
}

/// The native global residual: gather, native element vectors, assembly.
fn native_residual<R: EvalPrecision>(s: &Setup<R>, physics: &dyn PointwiseEvalBoth) -> Vec<R> {
    let (u, aux) = cell_inputs(s);
    let inputs = CellInputs {
        u: &u,
        aux: &aux,
        constants: &s.constants,
    };
    let mut ev = vec![R::ZERO; u.len()];
    native_element_vectors(
        &s.disc,
        R::physics(physics),
        &inputs,
        &mut ev,
        Execution::Serial,
    )
    .unwrap();
    let mut out = vec![R::ZERO; s.space.n_dofs()];
    s.space.assemble(&ev, &mut out).unwrap();
    out
}

/// The cell-local `u` and aux of a setup.
fn cell_inputs<R: Real>(s: &Setup<R>) -> (Vec<R>, Vec<R>) {
    let mut u = vec![R::ZERO; s.space.n_cell_dofs()];
    s.space.gather(&s.u, &mut u).unwrap();
    let aux = match s.disc.aux() {
        AuxSpace::Field { n_comp } => {
            let aux_space = FunctionSpace::new(&s.mesh, s.space.element(), n_comp).unwrap();
            let mut cells = vec![R::ZERO; s.mesh.n_cells() * s.disc.aux_per_cell()];
            aux_space.gather(&s.aux, &mut cells).unwrap();
            cells
        }
        _ => s.aux.clone(),
    };
    (u, aux)
}

/// The device residual with `assembly` and `config`.
fn device_residual<R: Real>(
    device: &Arc<Device>,
    s: &Setup<R>,
    physics: &dyn Pointwise,
    assembly: Assembly,
    config: Option<LaunchConfig>,
) -> (Vec<R>, OpenClOperator<R>) {
    let options = KernelOptions::default();
    let mut op =
        OpenClOperator::new(device.clone(), options, &s.mesh, &s.space, s.disc.clone()).unwrap();
    if !s.aux.is_empty() {
        op.set_aux(&s.aux).unwrap();
    }
    let n = s.space.n_dofs();
    let u = DeviceVector::<R>::from_host(device, &s.u).unwrap();
    let mut r = DeviceVector::<R>::zeros(device, n).unwrap();
    op.residual(physics, &u, &s.constants, &mut r, assembly, config)
        .unwrap();
    let mut out = vec![R::from_f64(f64::NAN); n];
    r.read_into(&mut out).unwrap();
    (out, op)
}

/// Checks that the last launch covered every cell with no extra work-group.
fn covers_every_cell<R: Real>(op: &OpenClOperator<R>) -> LaunchRecord {
    let rec = op.last_launch().unwrap();
    assert!(rec.work_groups * rec.chunk >= rec.cells, "{rec:?}");
    assert!((rec.work_groups - 1) * rec.chunk < rec.cells, "{rec:?}");
    rec
}

/// A configuration of `n_bl`, `n_cb` that fits the device, else the default.
fn fitting<R: Real>(
    device: &Arc<Device>,
    s: &Setup<R>,
    physics: &dyn Pointwise,
    variant: KernelVariant,
    config: LaunchConfig,
) -> LaunchConfig {
    let case = KernelCase::new(&s.disc, physics.info());
    let options = KernelOptions::default();
    let fits = KernelShape::new(&case, variant, config, &options)
        .and_then(|sh| sh.check_device(device.info()))
        .is_ok();
    if fits {
        config
    } else {
        default_config(&case, variant, config.geometry, &options, device.info()).unwrap()
    }
}

/// Every assembly mode with every geometry mode.
const ALL_MODES: [(Assembly, GeometryMode); 4] = [
    (Assembly::Atomic, GeometryMode::Stored),
    (Assembly::Atomic, GeometryMode::Computed),
    (Assembly::Deterministic, GeometryMode::Stored),
    (Assembly::Deterministic, GeometryMode::Computed),
];

/// Checks the residual in the given modes and the element kernel of `case`
/// against the native reference.
fn check_case<R: EvalPrecision>(
    device: &Arc<Device>,
    case: &Case,
    config: LaunchConfig,
    modes: &[(Assembly, GeometryMode)],
    tol: f64,
) {
    let s = setup::<R>(case);
    let physics = case.physics;
    let reference = native_residual(&s, physics);
    for &(assembly, geometry) in modes {
        {
            let probe = OpenClOperator::new(
                device.clone(),
                KernelOptions::default(),
                &s.mesh,
                &s.space,
                s.disc.clone(),
            )
            .unwrap();
            let variant = probe.residual_variant(assembly);
            let c = fitting(device, &s, physics, variant, config.with_geometry(geometry));
            let (out, op) = device_residual(device, &s, physics, assembly, Some(c));
            let rec = covers_every_cell(&op);
            let d = rel_diff(&out, &reference);
            println!(
                "{}D P{} {:<22} aux {:<5} {} N_q={:<2} {c} {} cells {} in {} groups: residual rel diff {d:.2e}",
                case.dim,
                case.order,
                physics.info().name,
                case.aux.kind(),
                R::PRECISION,
                s.disc.n_q(),
                assembly.name(),
                rec.cells,
                rec.work_groups,
            );
            assert!(
                d <= tol,
                "{} {c}: relative difference {d:e} > {tol:e}",
                assembly.name()
            );
        }
    }
    // The element kernel (BK) against the native element vectors.
    let (ev_u, ev_aux) = cell_inputs(&s);
    let inputs = CellInputs {
        u: &ev_u,
        aux: &ev_aux,
        constants: &s.constants,
    };
    let mut reference = vec![R::ZERO; ev_u.len()];
    native_element_vectors(
        &s.disc,
        R::physics(physics),
        &inputs,
        &mut reference,
        Execution::Serial,
    )
    .unwrap();
    let mut op = OpenClOperator::new(
        device.clone(),
        KernelOptions::default(),
        &s.mesh,
        &s.space,
        s.disc.clone(),
    )
    .unwrap();
    let c = fitting(device, &s, physics, KernelVariant::ELEMENT, config);
    let mut out = vec![R::from_f64(f64::NAN); ev_u.len()];
    op.element_vectors(physics, &inputs, &mut out, Some(c))
        .unwrap();
    covers_every_cell(&op);
    let d = rel_diff(&out, &reference);
    assert!(
        d <= tol,
        "element kernel {c}: relative difference {d:e} > {tol:e}"
    );
}

use crate::discretization::CellInputs;
use crate::native::Execution;
use crate::opencl::KernelCase;
use crate::opencl::shape::default_config;

fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for dim in [2, 3] {
        for order in [1, 2] {
            // Cell counts that are not a multiple of a chunk.
            let n = match (dim, order) {
                (2, 1) => 23,
                (2, _) => 13,
                (3, 1) => 7,
                _ => 5,
            };
            for degree in [1, 2 * order] {
                let physics: [(&'static dyn PointwiseEvalBoth, AuxSpace, Vec<f64>); 4] = [
                    (&Laplacian, AuxSpace::None, vec![]),
                    (&LaplacianCoefficient, AuxSpace::Field { n_comp: 1 }, vec![]),
                    (&LaplacianCoefficient, AuxSpace::Cell { n_comp: 1 }, vec![]),
                    (&Lame, AuxSpace::None, vec![1.3, 0.6]),
                ];
                for (physics, aux, constants) in physics {
                    v.push(Case {
                        dim,
                        order,
                        n,
                        physics,
                        aux,
                        constants,
                        degree,
                    });
                }
            }
        }
    }
    v
}

/// Runs every case in one of the four residual modes (in turn, so that
/// each mode meets every dimension, order and physics), and in all four for
/// every fourth case.
fn check_cases<R: EvalPrecision>(tol: f64) {
    let device = device();
    println!("device: {}", device.info());
    for (k, case) in cases().iter().enumerate() {
        let modes = if k % 4 == 0 {
            &ALL_MODES[..]
        } else {
            &ALL_MODES[k % 4..k % 4 + 1]
        };
        // Small chunks: several work-groups and a partial last one.
        check_case::<R>(&device, case, LaunchConfig::new(3, 2), modes, tol);
    }
}

#[test]
fn device_matches_native_f64() {
    check_cases::<f64>(1e-12);
}

#[test]
fn device_matches_native_f32() {
    check_cases::<f32>(1e-5);
}

#[test]
fn meshes_smaller_than_and_exactly_one_chunk() {
    let device = device();
    // 2D P1 Laplacian, one point: N_bs = 3 cells, N_bl = 4, N_cb = 2 → 24 cells a chunk.
    let config = LaunchConfig::new(4, 2);
    for (n, cells) in [(1, 2), (2, 8), (3, 18)] {
        let case = Case {
            dim: 2,
            order: 1,
            n,
            physics: &Laplacian,
            aux: AuxSpace::None,
            constants: vec![],
            degree: 1,
        };
        let s = setup::<f64>(&case);
        assert_eq!(s.mesh.n_cells(), cells);
        check_case::<f64>(&device, &case, config, &ALL_MODES, 1e-12);
    }
    // Exactly one chunk: 24 cells = a 2D mesh cannot; 3D P1 (N_bs = 4) with
    // N_bl = 6, N_cb = 2 is 48 cells = the 6 Kuhn tetrahedra of 2³ cubes.
    let case = Case {
        dim: 3,
        order: 1,
        n: 2,
        physics: &Laplacian,
        aux: AuxSpace::None,
        constants: vec![],
        degree: 1,
    };
    let s = setup::<f64>(&case);
    assert_eq!(s.mesh.n_cells(), 48);
    let (_, op) = device_residual(
        &device,
        &s,
        &Laplacian,
        Assembly::Atomic,
        Some(LaunchConfig::new(12, 1)),
    );
    let rec = covers_every_cell(&op);
    assert_eq!((rec.work_groups, rec.chunk), (1, 48));
    check_case::<f64>(&device, &case, LaunchConfig::new(12, 1), &ALL_MODES, 1e-12);
}

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
            let config = LaunchConfig::new(n_bl, n_cb)
                .with_threads_per_cell(n_tc)
                .with_prefetch(prefetch);
            let modes = [(Assembly::Atomic, GeometryMode::Computed)];
            check_case::<f64>(&device, &case, config, &modes, 1e-12);
        }
    }
}

#[test]
fn deterministic_assembly_is_bitwise_reproducible() {
    let device = device();
    let case = Case {
        dim: 2,
        order: 2,
        n: 12,
        physics: &Lame,
        aux: AuxSpace::None,
        constants: vec![1.0, 2.0],
        degree: 4,
    };
    let s = setup::<f32>(&case);
    let (first, mut op) = device_residual(&device, &s, &Lame, Assembly::Deterministic, None);
    let n = s.space.n_dofs();
    let u = DeviceVector::<f32>::from_host(&device, &s.u).unwrap();
    let mut r = DeviceVector::<f32>::zeros(&device, n).unwrap();
    for _ in 0..5 {
        op.residual(
            &Lame,
            &u,
            &s.constants,
            &mut r,
            Assembly::Deterministic,
            None,
        )
        .unwrap();
        let mut again = vec![0.0f32; n];
        r.read_into(&mut again).unwrap();
        assert!(
            again
                .iter()
                .zip(&first)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "deterministic assembly changed between evaluations"
        );
    }
}

#[test]
fn an_unset_aux_field_is_an_error() {
    let device = device();
    let case = Case {
        dim: 2,
        order: 1,
        n: 4,
        physics: &LaplacianCoefficient,
        aux: AuxSpace::Field { n_comp: 1 },
        constants: vec![],
        degree: 2,
    };
    let s = setup::<f64>(&case);
    let mut op = OpenClOperator::new(
        device.clone(),
        KernelOptions::default(),
        &s.mesh,
        &s.space,
        s.disc.clone(),
    )
    .unwrap();
    let n = s.space.n_dofs();
    let u = DeviceVector::<f64>::zeros(&device, n).unwrap();
    let mut r = DeviceVector::<f64>::zeros(&device, n).unwrap();
    let e = op
        .residual(
            &LaplacianCoefficient,
            &u,
            &[],
            &mut r,
            Assembly::Atomic,
            None,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("`aux`") && e.contains("never set"), "{e}");
}

/// Device time of `F(u)` at a benchmark size, every assembly and geometry
/// mode, randomly numbered and structured mesh: an early measurement before
/// the benchmark's BP mode. `FEMQUAD_BP_CELLS` sets the size (default 2^24).
#[test]
#[ignore = "a GPU measurement: cargo test --release -p femquad --lib bp_timing -- --ignored --nocapture"]
fn bp_timing() {
    use crate::opencl::bandwidth::{measure_copy, median};
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
    fn run<R: Real>(
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
        let mesh = crate::mesh::generate::mesh_for_cells(dim, cells, &opts).unwrap();
        // shuffle = false: the randomly numbered mesh renumbered for locality
        let mesh = if shuffle {
            mesh
        } else {
            crate::mesh::generate::mesh_for_cells(
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
        let space = FunctionSpace::new(&mesh, Element::lagrange(dim, 1).unwrap(), n_comp).unwrap();
        let disc = Discretization::<R>::new(
            &mesh,
            &space,
            Quadrature::simplex(dim, 1).unwrap(),
            AuxSpace::None,
        )
        .unwrap();
        let mut op = OpenClOperator::new(
            device.clone(),
            KernelOptions::default(),
            &mesh,
            &space,
            disc,
        )
        .unwrap();
        let n = space.n_dofs();
        let u_host: Vec<R> = convert_slice(&Rng::new(1).vec(n, -1.0, 1.0));
        let u = DeviceVector::<R>::from_host(device, &u_host).unwrap();
        let mut r = DeviceVector::<R>::zeros(device, n).unwrap();
        let consts: Vec<R> = convert_slice(constants);
        let s = R::PRECISION.size();
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            for geometry in [GeometryMode::Computed, GeometryMode::Stored] {
                let variant = op.residual_variant(assembly);
                let base = op.config_for(physics, variant).unwrap();
                for (n_bl, prefetch, window) in [
                    (base.n_bl, true, true),
                    (base.n_bl, true, false),
                    ((base.n_bl / 2).max(1), true, base.window),
                    (base.n_bl, false, base.window),
                ] {
                    let c = LaunchConfig {
                        n_bl,
                        prefetch,
                        window,
                        ..base
                    }
                    .with_geometry(geometry);
                    if op.shape_for(physics, variant, Some(c)).is_err() {
                        continue;
                    }
                    op.time_residual(physics, &u, &consts, &mut r, assembly, c, 3)
                        .unwrap();
                    let t = median(
                        &op.time_residual(physics, &u, &consts, &mut r, assembly, c, 20)
                            .unwrap(),
                    ) * 1e-9;
                    let nv = mesh.n_vertices();
                    let nc = mesh.n_cells();
                    let geo = match geometry {
                        GeometryMode::Computed => nv * dim * s,
                        GeometryMode::Stored => nc * (dim * dim + 1) * s,
                    };
                    let bytes = (2 * n * s + nc * (dim + 1) * 4 + geo) as f64;
                    let windowed = op.last_launch().map_or(0, |l| l.windowed_groups);
                    println!(
                        "{dim}D P1 {:<10} {} {:<8} {} {:<13} {c} [{windowed} windowed]: {:8.3} ms  {:6.0} GB/s min-bytes ({:5.1} % copy)",
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
        let v =
            DeviceVector::<R>::from_host(device, &convert_slice(&Rng::new(2).vec(n, -1.0, 1.0)))
                .unwrap();
        let time = |op: &mut OpenClOperator<R>, what: &mut dyn FnMut(&mut OpenClOperator<R>)| {
            let mut times = Vec::new();
            for k in 0..23 {
                what(op);
                let ns = op.wait_residual().unwrap().unwrap_or(0);
                if k >= 3 {
                    times.push(ns);
                }
            }
            median(&times) * 1e-9
        };
        let t_f = time(&mut op, &mut |op| {
            op.residual(physics, &u, &consts, &mut r, Assembly::Atomic, None)
                .unwrap()
        });
        let t_jv = time(&mut op, &mut |op| {
            op.jacobian_action(physics, &u, &v, &consts, &mut r, Assembly::Atomic, None)
                .unwrap()
        });
        let nc2 = n_comp * n_comp;
        let mut d = DeviceVector::<R>::zeros(device, space.n_nodes() * nc2).unwrap();
        let t_diag = time(&mut op, &mut |op| {
            op.jacobian_diagonal(physics, &u, &consts, &mut d).unwrap()
        });
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
