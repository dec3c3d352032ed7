//! The operator on the device through the public API: it moves no array
//! between host and device, integrates every cell there (also on meshes
//! smaller than one chunk), equals the native operator, and reports bad
//! input by the user's names and indices; solves on device vectors give the
//! host's solutions.
//!
//! Runs on the device chosen by `FEMQUAD_DEVICE` (PoCL in CI).

mod operator_support;
use operator_support::{device_backend as backend, operator};

use std::sync::Arc;

use femquad::backend::Location;
use femquad::opencl::testing::device;
use femquad::opencl::{Assembly, Device};
use femquad::physics::PointwiseEvalBoth;
use femquad::physics::builtin::{Lame, LameParameters, Laplacian, LaplacianCoefficient, Poisson};
use femquad::prelude::*;
use femquad::rng::Rng;
use femquad::seam::Integrate;

fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 5,
    };
    unit_box(dim, n, &opts).unwrap().into()
}

/// A physics case: the physics, its components, auxiliary space and constants.
type Case = (&'static dyn PointwiseEvalBoth, usize, AuxSpace, Vec<f64>);

/// `case` bound in P`order` on `m` natively and on `device`, with the same
/// random auxiliary field, and `F(u)` of random values `u` natively: the
/// native operator, the device one, `u`, the native `F(u)` and its largest
/// magnitude. Values drawn from `rng`.
struct NativeAndDevice {
    native: Operator<f64>,
    gpu: Operator<f64>,
    values: Vec<f64>,
    reference: Vec<f64>,
    scale: f64,
}

fn native_and_device(
    m: &Arc<Mesh>,
    order: usize,
    case: &Case,
    device: &Arc<Device>,
    rng: &mut Rng,
) -> NativeAndDevice {
    let (physics, n_comp, aux, constants) = case;
    let op = |b: &Backend| operator::<f64>(m, order, *n_comp, *aux, *physics, constants, b);
    let mut native = op(&Backend::native());
    let mut gpu = op(&backend(device));
    if *aux != AuxSpace::None {
        let a = rng.vec(native.aux_len(), 0.5, 2.0);
        native.set_aux(&a).unwrap();
        gpu.set_aux(&a).unwrap();
    }
    let values = rng.vec(native.space().n_dofs(), -1.0, 1.0);
    let mut r_native = native.vector().unwrap();
    native
        .apply(&Vector::from(values.clone()), &mut r_native)
        .unwrap();
    let reference = r_native.to_host().unwrap();
    let scale = max_abs(&reference);
    NativeAndDevice {
        native,
        gpu,
        values,
        reference,
        scale,
    }
}

/// `max_i |v_i|`.
fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}

/// `max_i |x_i − y_i|`.
fn max_diff(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .zip(y)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
}

/// The operator of the Laplacian in P`order` on backend `b`.
fn laplacian(mesh: &Arc<Mesh>, order: usize, b: &Backend) -> Operator<f64> {
    operator::<f64>(mesh, order, 1, AuxSpace::None, &Laplacian, &[], b)
}

#[test]
fn an_evaluation_on_device_vectors_moves_no_array_and_covers_every_cell() {
    let device = device();
    // 2D P1 with the default configuration: 2·7² = 98 cells are fewer than
    // one chunk (hundreds of cells) — all integrated on the device.
    for n in [7, 40] {
        let m = mesh(2, n);
        let mut res = laplacian(&m, 1, &backend(&device));
        let values: Vec<f64> = Rng::new(2).vec(res.space().n_dofs(), -1.0, 1.0);
        let u = res.vector_from(&values).unwrap();
        let mut r = res.vector().unwrap();
        assert!(matches!(u.location(), Location::Device { .. }));
        // warm up (the kernels were built and the geometry uploaded by
        // Operator::new)
        res.apply(&u, &mut r).unwrap();
        let before = device.stats();
        for _ in 0..3 {
            res.apply(&u, &mut r).unwrap();
        }
        let after = device.stats();
        assert_eq!(after.array_bytes_written(), before.array_bytes_written());
        assert_eq!(after.array_bytes_read, before.array_bytes_read);
        assert_eq!(after.builds, before.builds);
        // only the checks of u and r for NaN/±∞: two scalar reads per evaluation
        assert_eq!(after.scalar_reads - before.scalar_reads, 6);
        let launch = res
            .integrator()
            .opencl()
            .unwrap()
            .last_run()
            .launch()
            .unwrap();
        assert_eq!(launch.cells, m.n_cells());
        assert!(launch.work_groups * launch.chunk >= m.n_cells());
        assert!((launch.work_groups - 1) * launch.chunk < m.n_cells());
        if n == 7 {
            assert_eq!(launch.work_groups, 1, "a mesh smaller than one chunk");
        }
        // and it is the native residual
        let mut native = laplacian(&m, 1, &Backend::native());
        let mut r_native = native.vector().unwrap();
        native.apply(&Vector::from(values), &mut r_native).unwrap();
        let (a, b) = (r.to_host().unwrap(), r_native.to_host().unwrap());
        let scale = max_abs(&b);
        let diff = max_diff(&a, &b);
        assert!(diff <= 1e-12 * scale, "{diff:e} vs {scale:e}");
    }
}

#[test]
fn both_assembly_modes_equal_native_for_every_physics() {
    let device = device();
    let lame = LameParameters::new(1.5, 0.8).constants();
    for dim in [2, 3] {
        let m = mesh(dim, if dim == 2 { 9 } else { 3 });
        for order in [1, 2] {
            let cases: [Case; 5] = [
                (&Laplacian, 1, AuxSpace::None, vec![]),
                (&Poisson, 1, AuxSpace::None, vec![2.0]),
                (
                    &LaplacianCoefficient,
                    1,
                    AuxSpace::Field { n_comp: 1 },
                    vec![],
                ),
                (
                    &LaplacianCoefficient,
                    1,
                    AuxSpace::Cell { n_comp: 1 },
                    vec![],
                ),
                (&Lame, dim, AuxSpace::None, lame.to_vec()),
            ];
            for case in cases {
                let (physics, _, aux, _) = &case;
                let NativeAndDevice {
                    mut gpu,
                    values,
                    reference,
                    scale,
                    ..
                } = native_and_device(&m, order, &case, &device, &mut Rng::new(3));
                let u = gpu.vector_from(&values).unwrap();
                for assembly in [Assembly::Atomic, Assembly::Deterministic] {
                    gpu.set_assembly(assembly).unwrap();
                    let mut r = gpu.vector().unwrap();
                    gpu.apply(&u, &mut r).unwrap();
                    let diff = max_diff(&r.to_host().unwrap(), &reference);
                    assert!(
                        diff <= 1e-12 * scale,
                        "{dim}D P{order} {} {aux:?} {}: {diff:e}",
                        physics.info().name,
                        assembly.name()
                    );
                }
            }
        }
    }
}

#[test]
fn bad_input_names_the_users_argument_and_index() {
    let device = device();
    let m = mesh(2, 4);
    for b in [Backend::native(), backend(&device)] {
        let mut res = laplacian(&m, 1, &b);
        let n = res.space().n_dofs();
        let mut values = vec![0.5; n];
        values[7] = f64::NAN;
        let u = res.vector_from(&values).unwrap();
        let mut r = res.vector().unwrap();
        let e = res.apply(&u, &mut r).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("`u`") && text.contains("index 7"), "{text}");

        let u = res.vector_from(&vec![0.5; n]).unwrap();
        let mut short = match res.location() {
            Location::Host => Vector::host_zeros(n - 1),
            Location::Device { .. } => Vector::device_zeros(&device, n - 1).unwrap(),
        };
        let text = res.apply(&u, &mut short).unwrap_err().to_string();
        assert!(
            text.contains("`r`") && text.contains(&format!("{n}")),
            "{text}"
        );

        // a vector of the other location is an error, never a silent transfer
        let mut elsewhere = match res.location() {
            Location::Host => Vector::device_zeros(&device, n).unwrap(),
            Location::Device { .. } => Vector::host_zeros(n),
        };
        let text = res.apply(&u, &mut elsewhere).unwrap_err().to_string();
        assert!(text.contains("`r`") && text.contains("lives on"), "{text}");

        // an aux field the physics reads must have been set
        let field = AuxSpace::Field { n_comp: 1 };
        let mut coef = operator::<f64>(&m, 1, 1, field, &LaplacianCoefficient, &[], &b);
        let u = coef.vector_from(&vec![0.5; n]).unwrap();
        let mut r = coef.vector().unwrap();
        let text = coef.apply(&u, &mut r).unwrap_err().to_string();
        assert!(
            text.contains("`aux`") && text.contains("never set"),
            "{text}"
        );
        coef.set_aux(&vec![1.0; n]).unwrap();
        coef.apply(&u, &mut r).unwrap();
    }
}

#[test]
fn dirichlet_solves_on_device_vectors_equal_the_host_solves() {
    let device = device();
    for (dim, order, n) in [(2, 1, 12), (2, 2, 6), (3, 1, 4)] {
        let m = mesh(dim, n);
        let g = |x: &[f64], o: &mut [f64]| o[0] = x.iter().map(|v| v * v).sum::<f64>();
        let solve = |b: &Backend| {
            let source = [-2.0 * dim as f64];
            let res = operator::<f64>(&m, order, 1, AuxSpace::None, &Poisson, &source, b);
            let mut p = DirichletProblem::on_boundary(res, g).unwrap();
            let (u, stats) = p.solve_linear(1e-11, 2000).unwrap();
            (u, stats)
        };
        let (u_host, s_host) = solve(&Backend::native());
        let (u_dev, s_dev) = solve(&backend(&device));
        assert!(matches!(u_dev.location(), Location::Device { .. }));
        let (a, b) = (u_host.to_host().unwrap(), u_dev.to_host().unwrap());
        let diff = max_diff(&a, &b);
        assert!(diff < 1e-9, "{dim}D P{order}: {diff:e}");
        assert!(
            s_host.iterations.abs_diff(s_dev.iterations) <= 2,
            "{s_host:?} {s_dev:?}"
        );
        // the solution of −Δu = −2·dim with u = |x|² on the boundary is |x|²,
        // reproduced exactly by P2
        if order == 2 {
            let exact = FunctionSpace::new(m.clone(), Element::lagrange(dim, 2).unwrap(), 1)
                .unwrap()
                .interpolate(g);
            let err = max_diff(&b, &exact);
            assert!(err < 1e-9, "{err:e}");
        }
    }
}

#[test]
fn node_windows_on_a_renumbered_mesh_equal_native() {
    let device = device();
    let lame = LameParameters::new(1.5, 0.8).constants();
    for dim in [2, 3] {
        let (m, _) = mesh(dim, if dim == 2 { 40 } else { 8 })
            .renumbered_for_locality()
            .unwrap();
        let m = Arc::new(m);
        for order in [1, 2] {
            let cases: [Case; 2] = [
                (
                    &LaplacianCoefficient,
                    1,
                    AuxSpace::Field { n_comp: 1 },
                    vec![],
                ),
                (&Lame, dim, AuxSpace::None, lame.to_vec()),
            ];
            for case in cases {
                let (physics, _, _, _) = &case;
                let physics = *physics;
                let mut rng = Rng::new(13);
                let NativeAndDevice {
                    mut native,
                    mut gpu,
                    values,
                    reference,
                    scale,
                } = native_and_device(&m, order, &case, &device, &mut rng);
                let u_host = Vector::from(values.clone());
                // and J(u)·v (both physics are affine: the kernel reads v only)
                let dir = rng.vec(native.space().n_dofs(), -1.0, 1.0);
                let mut jv_native = native.vector().unwrap();
                native
                    .jacobian_action(&u_host, &Vector::from(dir.clone()), &mut jv_native)
                    .unwrap();
                let jv_reference = jv_native.to_host().unwrap();
                let jv_scale = max_abs(&jv_reference);
                let u = gpu.vector_from(&values).unwrap();
                let v = gpu.vector_from(&dir).unwrap();
                let mut r = gpu.vector().unwrap();
                let op = gpu.integrator().opencl().unwrap();
                for assembly in [Assembly::Atomic, Assembly::Deterministic] {
                    op.set_assembly(assembly).unwrap();
                    let variant = op.residual_variant();
                    let base = op.config(variant).unwrap();
                    for patches in [true, false] {
                        let config = base.with_patches(patches);
                        // patches need local memory: skip where they do not fit
                        // (the error says so: DeviceLimit)
                        if let Err(e) = op.shape(variant, config) {
                            assert!(patches && e.to_string().contains("local memory"), "{e}");
                            continue;
                        }
                        op.set_config(variant, config).unwrap();
                        let (ud, rd) = (u.as_device().unwrap(), r.as_device_mut().unwrap());
                        op.residual(ud, rd).unwrap();
                        let launch = op.last_run().launch().unwrap();
                        let what = format!(
                            "{dim}D P{order} {} {} patches={patches}: {launch:?}",
                            physics.info().name,
                            assembly.name()
                        );
                        if patches && order == 1 {
                            // the patch path runs: at least one group fits
                            // (how many depends on the device's chunk size)
                            assert!(launch.patch_groups >= 1, "{what}");
                        } else if !patches {
                            assert_eq!(
                                (launch.patch_groups, launch.fallback_groups),
                                (0, 0),
                                "{what}"
                            );
                        }
                        let out = r.to_host().unwrap();
                        let diff = max_diff(&out, &reference);
                        assert!(diff <= 1e-12 * scale, "{what}: {diff:e}");
                        let tangent = op.jacobian_action_variant();
                        let config = op.config(tangent).unwrap().with_patches(patches);
                        if op.shape(tangent, config).is_err() {
                            continue;
                        }
                        op.set_config(tangent, config).unwrap();
                        let (ud, vd) = (u.as_device().unwrap(), v.as_device().unwrap());
                        op.jacobian_action(ud, vd, r.as_device_mut().unwrap())
                            .unwrap();
                        let out = r.to_host().unwrap();
                        let diff = max_diff(&out, &jv_reference);
                        assert!(diff <= 1e-12 * jv_scale, "J·v, {what}: {diff:e}");
                    }
                }
            }
        }
    }
}
