//! The OpenCL thread-transposition kernel against the native integrator.
//!
//! Runs on the device chosen by `FEMQUAD_DEVICE` (default: a GPU if there is
//! one, else the CPU, e.g. PoCL in CI). Without any OpenCL platform these
//! tests fail and say what to install.

use std::sync::Arc;

use femquad::aux_space::AuxSpace;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::native::{Execution, element_vectors};
use femquad::opencl::shape::default_config;
use femquad::opencl::{
    Device, DeviceSelector, KernelCase, KernelOptions, KernelShape, LaunchConfig, OpenClIntegrator,
};
use femquad::physics::Pointwise;
use femquad::physics::builtin::{Lame, Laplacian, LaplacianCoefficient};
use femquad::quadrature::Quadrature;
use femquad::real::convert_slice;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;
use femquad::{Error, Real};

fn device() -> Arc<Device> {
    Device::open(&DeviceSelector::from_env()).unwrap_or_else(|e| {
        panic!("these tests need an OpenCL device ({e}); on Debian/Ubuntu install pocl-opencl-icd and ocl-icd-libopencl1")
    })
}

fn mesh(dim: usize, n: usize) -> Mesh {
    unit_box(
        dim,
        n,
        &MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 21,
        },
    )
    .unwrap()
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

struct Case<'a> {
    dim: usize,
    order: usize,
    n: usize,
    physics: &'a dyn Pointwise,
    aux: AuxSpace,
    constants: Vec<f64>,
    degree: usize,
    config: Option<LaunchConfig>,
}

/// Runs one case in precision `R`, returning (relative difference, cells, device cells).
fn compare<R: Real>(device: &Arc<Device>, case: &Case<'_>, tol: f64) {
    let m = mesh(case.dim, case.n);
    let n_comp = case.physics.info().n_comp.resolve(case.dim);
    let space =
        FunctionSpace::new(&m, Element::lagrange(case.dim, case.order).unwrap(), n_comp).unwrap();
    let quad = Quadrature::simplex(case.dim, case.degree).unwrap();
    let disc = Discretization::<R>::new(&m, &space, quad, case.aux).unwrap();
    let mut rng = Rng::new(case.dim as u64 * 100 + case.order as u64);
    let u: Vec<R> = convert_slice(&rng.vec(m.n_cells() * disc.n_bt(), -1.0, 1.0));
    let aux: Vec<R> = convert_slice(&rng.vec(m.n_cells() * disc.aux_per_cell(), 0.5, 2.0));
    let constants: Vec<R> = convert_slice(&case.constants);
    let inputs = CellInputs {
        u: &u,
        aux: &aux,
        constants: &constants,
    };

    let mut reference = vec![R::ZERO; u.len()];
    element_vectors(
        &disc,
        case.physics,
        &inputs,
        &mut reference,
        Execution::Parallel,
    )
    .unwrap();
    // `None` means the device default (computed here, so that an autotune
    // cache on the test machine cannot change what is tested); so does a
    // fixed configuration that exceeds this device's limits (e.g. the 48 KiB
    // of local memory of NVIDIA GPUs, against PoCL's 2 MiB).
    let kcase = KernelCase::new(&disc, case.physics.info());
    let options = KernelOptions::default();
    let fits = |c: LaunchConfig| {
        KernelShape::new(&kcase, c, &options)
            .and_then(|s| s.check_device(device.info()))
            .is_ok()
    };
    let config = case
        .config
        .filter(|&c| fits(c))
        .unwrap_or_else(|| default_config(&kcase, &options, device.info()).unwrap());
    let mut gpu = OpenClIntegrator::new(device.clone(), disc, options.clone()).unwrap();
    let shape = gpu.shape_for(case.physics, Some(config)).unwrap();
    let mut out = vec![R::from_f64(f64::NAN); u.len()];
    gpu.element_vectors_with(case.physics, &inputs, &mut out, Some(config))
        .unwrap();
    let n_dev = shape.n_chunks(m.n_cells()) * shape.chunk;
    assert!(
        n_dev > 0,
        "case must run on the device: {} cells, chunk {}",
        m.n_cells(),
        shape.chunk
    );
    let d = rel_diff(&out, &reference);
    println!(
        "{}D P{} {:<22} aux {:<5} {} N_q={:<2} N_bs={:<3} N_bl={:<3} N_cb={} N_tc={} cells {} (device {}, remainder {}): rel diff {:.2e}",
        case.dim,
        case.order,
        case.physics.info().name,
        case.aux.kind(),
        R::PRECISION.name(),
        shape.n_q,
        shape.n_bs,
        shape.n_bl,
        shape.n_cb,
        shape.n_tc,
        m.n_cells(),
        n_dev,
        m.n_cells() - n_dev,
        d
    );
    assert!(d <= tol, "relative difference {d:e} > {tol:e}");
}

fn cases() -> Vec<Case<'static>> {
    let mut v = Vec::new();
    for dim in [2, 3] {
        for order in [1, 2] {
            // Sizes chosen so that the cell count is not a multiple of a chunk.
            let n = match (dim, order) {
                (2, 1) => 23,
                (2, _) => 13,
                (3, 1) => 7,
                _ => 6,
            };
            for degree in [1, 2 * order] {
                let physics: [(&'static dyn Pointwise, AuxSpace, Vec<f64>); 4] = [
                    (&Laplacian, AuxSpace::None, vec![]),
                    (&LaplacianCoefficient, AuxSpace::Field { n_comp: 1 }, vec![]),
                    (&LaplacianCoefficient, AuxSpace::Cell { n_comp: 1 }, vec![]),
                    (&Lame, AuxSpace::None, vec![1.3, 0.6]),
                ];
                for (physics, aux, constants) in physics {
                    // Small chunks, so that these small meshes run several
                    // work-groups and leave a remainder.
                    let config = Some(LaunchConfig::new(3, 2));
                    v.push(Case {
                        dim,
                        order,
                        n,
                        physics,
                        aux,
                        constants,
                        degree,
                        config,
                    });
                }
            }
        }
    }
    v
}

#[test]
fn opencl_matches_native_f64() {
    let device = device();
    println!("device: {}", device.info());
    for case in cases() {
        compare::<f64>(&device, &case, 1e-12);
    }
}

#[test]
fn opencl_matches_native_f32() {
    let device = device();
    for case in cases() {
        compare::<f32>(&device, &case, 1e-5);
    }
}

#[test]
fn default_configuration_on_larger_meshes() {
    let device = device();
    for (dim, n, order, physics, constants) in [
        (2, 40, 1, &Laplacian as &dyn Pointwise, vec![]),
        (3, 9, 1, &Lame as &dyn Pointwise, vec![1.0, 1.0]),
        (3, 7, 2, &Laplacian as &dyn Pointwise, vec![]),
    ] {
        let case = Case {
            dim,
            order,
            n,
            physics,
            aux: AuxSpace::None,
            constants,
            degree: 2 * order,
            config: None,
        };
        compare::<f64>(&device, &case, 1e-12);
        compare::<f32>(&device, &case, 1e-5);
    }
}

#[test]
fn launch_configurations_with_remainders() {
    let device = device();
    // (N_bl, N_cb, register prefetch)
    let configs = [
        (1, 1, true),
        (2, 3, false),
        (3, 2, true),
        (5, 1, true),
        (7, 4, false),
    ];
    for (n_bl, n_cb, prefetch) in configs {
        for (dim, order, physics, constants) in [
            (2, 1, &Laplacian as &dyn Pointwise, vec![]),
            (2, 2, &Lame as &dyn Pointwise, vec![2.0, 1.0]),
            (3, 1, &Lame as &dyn Pointwise, vec![2.0, 1.0]),
            (3, 2, &Laplacian as &dyn Pointwise, vec![]),
        ] {
            let case = Case {
                dim,
                order,
                n: if dim == 2 { 14 } else { 5 },
                physics,
                aux: AuxSpace::None,
                constants,
                degree: 2,
                config: Some(LaunchConfig::new(n_bl, n_cb).with_prefetch(prefetch)),
            };
            compare::<f64>(&device, &case, 1e-12);
        }
    }
}

#[test]
fn several_threads_per_cell() {
    // N_tc > 1 shrinks blocks (N_bs = L / gcd(L, N_tc)) and leaves partial
    // serial steps (items per thread N_q/N_tc, N_bt/N_tc not whole).
    let device = device();
    for (dim, order, physics, constants, degree, n_tc, n) in [
        (2, 1, &Laplacian as &dyn Pointwise, vec![], 1, 2, 14),
        (2, 2, &Lame as &dyn Pointwise, vec![2.0, 1.0], 2, 5, 14),
        (3, 1, &Lame as &dyn Pointwise, vec![2.0, 1.0], 2, 3, 5),
        (3, 2, &Lame as &dyn Pointwise, vec![2.0, 1.0], 2, 3, 5),
        (3, 2, &Lame as &dyn Pointwise, vec![2.0, 1.0], 4, 10, 5),
        (3, 2, &Laplacian as &dyn Pointwise, vec![], 4, 7, 5),
    ] {
        let case = Case {
            dim,
            order,
            n,
            physics,
            aux: AuxSpace::None,
            constants,
            degree,
            config: Some(LaunchConfig::new(2, 2).with_threads_per_cell(n_tc)),
        };
        compare::<f64>(&device, &case, 1e-12);
        compare::<f32>(&device, &case, 1e-5);
    }
}

#[test]
fn second_evaluation_builds_nothing_and_uploads_no_geometry() {
    let device = Device::open(&DeviceSelector::from_env()).unwrap();
    let m = mesh(2, 16);
    let space = FunctionSpace::new(&m, Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let disc = Discretization::<f64>::new(
        &m,
        &space,
        Quadrature::simplex(2, 2).unwrap(),
        AuxSpace::None,
    )
    .unwrap();
    let n = m.n_cells() * disc.n_bt();
    let before_new = device.stats();
    let four_two = Some(LaunchConfig::new(4, 2));
    let mut gpu = OpenClIntegrator::new(device.clone(), disc, KernelOptions::default()).unwrap();
    let after_new = device.stats();
    let geometry = (m.n_cells() * (4 + 1) * 8) as u64;
    assert_eq!(
        after_new.geometry_bytes - before_new.geometry_bytes,
        geometry
    );

    let u = Rng::new(1).vec(n, -1.0, 1.0);
    let mut out = vec![0.0; n];
    let inputs = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
    };
    gpu.element_vectors_with(&Laplacian, &inputs, &mut out, four_two)
        .unwrap();
    let first = device.stats();
    assert_eq!(first.geometry_bytes, after_new.geometry_bytes);
    let first_out = out.clone();

    gpu.element_vectors_with(&Laplacian, &inputs, &mut out, four_two)
        .unwrap();
    let second = device.stats();
    assert_eq!(
        second.builds, first.builds,
        "the second evaluation rebuilt the program"
    );
    assert_eq!(
        second.geometry_bytes, first.geometry_bytes,
        "geometry was uploaded again"
    );
    assert!(
        second.coefficient_bytes > first.coefficient_bytes,
        "coefficients must move"
    );
    assert_eq!(out, first_out);

    // A second integrator with the same kernel reuses the device's program.
    let disc2 = gpu.discretization().clone();
    let mut gpu2 = OpenClIntegrator::new(device.clone(), disc2, KernelOptions::default()).unwrap();
    gpu2.element_vectors_with(&Laplacian, &inputs, &mut out, four_two)
        .unwrap();
    let third = device.stats();
    assert_eq!(third.builds, second.builds);
    assert_eq!(third.cache_hits, second.cache_hits + 1);
}

#[test]
fn bad_configurations_and_inputs_are_named() {
    let device = device();
    let m = mesh(2, 8);
    let space = FunctionSpace::new(&m, Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let disc = Discretization::<f64>::new(
        &m,
        &space,
        Quadrature::simplex(2, 1).unwrap(),
        AuxSpace::None,
    )
    .unwrap();
    let n = m.n_cells() * disc.n_bt();
    let too_many = device.info().max_work_group_size; // N_t = N_bl·3 > limit
    let mut gpu = OpenClIntegrator::new(device.clone(), disc, KernelOptions::default()).unwrap();
    let u = vec![0.5; n];
    let mut out = vec![0.0; n];
    let inputs = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
    };
    match gpu.element_vectors_with(
        &Laplacian,
        &inputs,
        &mut out,
        Some(LaunchConfig::new(too_many, 1)),
    ) {
        Err(Error::DeviceLimit { what, needed, .. }) => {
            assert!(what.contains("work-group size"));
            assert_eq!(needed, 3 * too_many);
        }
        other => panic!("expected a work-group limit error, got {other:?}"),
    }
    let e = gpu
        .element_vectors_with(&Laplacian, &inputs, &mut out, Some(LaunchConfig::new(0, 1)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("n_bl"), "{e}");
    let mut bad = u.clone();
    bad[17] = f64::NAN;
    let e = gpu
        .element_vectors(
            &Laplacian,
            &CellInputs {
                u: &bad,
                aux: &[],
                constants: &[],
            },
            &mut out,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("`u`") && e.contains("17"), "{e}");
    let e = gpu
        .element_vectors(
            &Laplacian,
            &CellInputs {
                u: &u[1..],
                aux: &[],
                constants: &[],
            },
            &mut out,
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("`u`"), "{e}");
    let e = gpu
        .element_vectors(&Lame, &inputs, &mut out)
        .unwrap_err()
        .to_string();
    assert!(e.contains("component"), "{e}");
}
