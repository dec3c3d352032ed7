//! Patches (`LaunchConfig::with_patches(true)`) and the padding cells of
//! the last work-group: a padding cell (index ≥ the mesh's cells) has node
//! index 0, which may be missing from that group's node list; its gathers
//! must never go through the patch (issue 19: the two-range node windows
//! that patches replaced read up to 10 407 doubles before their local
//! array, or one slot past it for P1).
//!
//! The residual `F(u)` and the Jacobian action with patches on, on many mesh sizes
//! (so that the last group is partial in many ways), 2D and 3D, P1 and P2,
//! both assemblies, several launch configurations (prefetch on and off,
//! stored and computed geometry), against the native integrator.
//!
//! The out-of-bounds read itself is invisible in the values (padding cells
//! are never stored): `minimal_case_of_the_issue` is the case to run under
//! a memory checker (`valgrind --tool=memcheck`, PoCL runs kernels on the
//! host), see the test's comment.
//!
//! Runs on the device chosen by `FEMQUAD_DEVICE` (PoCL in CI).

mod operator_support;
use operator_support::operator;

use std::sync::Arc;

use femquad::opencl::testing;
use femquad::opencl::{Assembly, Device, GeometryMode, LaunchConfig};
use femquad::physics::PointwiseEvalBoth;
use femquad::physics::builtin::{Lame, LameParameters, Laplacian, LaplacianCoefficient};
use femquad::prelude::*;
use femquad::rng::Rng;
use femquad::seam::Integrate;
use testing::device;

/// Largest absolute difference of `a` and `b`, and the largest `|b_i|`.
fn max_diff(a: &[f64], b: &[f64]) -> (f64, f64) {
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    (diff, b.iter().fold(0.0f64, |m, v| m.max(v.abs())))
}

/// What the launches of one mesh covered.
#[derive(Default)]
struct Coverage {
    /// Launches.
    launches: usize,
    /// Launches with at least one patch.
    patched: usize,
    /// Launches whose last group had padding cells.
    padded: usize,
}

/// The configurations tried with patches, from the device default `base`:
/// it, it without prefetch and with computed geometry (the gathers go
/// through local memory, and the coordinates are gathered too), 16
/// blocks of one batch (the issue's case), and those 16 blocks on the
/// cell-parallel kernel (`LaunchConfig::cell_parallel`), whose patches sum
/// `atomic` output only (with element vectors it has none), and 2 blocks
/// and 1 block on the cell-parallel kernel: the configurations that fit 3D
/// P2 on a device of 1024 work-items and 48 KiB of local memory a group
/// (an H100 or H200: there the transposition's patches of 3D P2 need
/// 99–199 KB, and 8 cell-parallel blocks of Lamé, 1680 cells, 1680
/// work-items and 101 KB; 2 blocks of Lamé's J·v, 420 cells, 50 KB since
/// a patch copies the direction `v` too, 1 block 25 KB).
fn configs(default: LaunchConfig, atomic: bool) -> [LaunchConfig; 6] {
    // the transposition in the default's shape (the default is the
    // cell-parallel kernel for a scalar field)
    let base = LaunchConfig {
        cell_parallel: false,
        ..default
    }
    .with_prefetch(true);
    [
        LaunchConfig::new(2, 1)
            .with_patches(atomic)
            .with_cell_parallel(true),
        base.with_patches(true),
        base.with_patches(true)
            .with_prefetch(false)
            .with_geometry(GeometryMode::Computed),
        LaunchConfig::new(16, 1).with_patches(true),
        LaunchConfig::new(16, 1)
            .with_patches(atomic)
            .with_cell_parallel(true),
        LaunchConfig::new(1, 1)
            .with_patches(atomic)
            .with_cell_parallel(true),
    ]
}

/// `F(u)` of `LaplacianCoefficient` (u and an aux field gathered) and
/// `J(u)·v` of Lamé (v gathered) on the device with patches, in the
/// [`configs`] that fit the device and both assemblies, against native.
fn check_mesh(device: &Arc<Device>, mesh: &Arc<Mesh>, order: usize, cov: &mut Coverage) {
    let dim = mesh.dim();
    let backend = Backend::opencl_with(device.clone(), testing::options());
    let lame = LameParameters::new(1.5, 0.8).constants().to_vec();
    // (physics, components, aux, constants), and whether J(u)·v is checked
    let cases = [
        (
            (&LaplacianCoefficient as &dyn PointwiseEvalBoth, 1),
            (AuxSpace::Field { n_comp: 1 }, vec![]),
            false,
        ),
        ((&Lame, dim), (AuxSpace::None, lame), true),
    ];
    for ((physics, n_comp), (aux, constants), tangent) in cases {
        let op = |b: &Backend| operator::<f64>(mesh, order, n_comp, aux, physics, &constants, b);
        let mut native = op(&Backend::native());
        let mut gpu = op(&backend);
        let mut rng = Rng::new(7 + mesh.n_cells() as u64);
        if aux != AuxSpace::None {
            let a = rng.vec(native.aux_len(), 0.5, 2.0);
            native.set_aux(&a).unwrap();
            gpu.set_aux(&a).unwrap();
        }
        let n = native.space().n_dofs();
        let (u_values, v_values) = (rng.vec(n, -1.0, 1.0), rng.vec(n, -1.0, 1.0));
        let (u_host, v_host) = (
            Vector::from(u_values.clone()),
            Vector::from(v_values.clone()),
        );
        let mut reference = native.vector().unwrap();
        if tangent {
            native
                .jacobian_action(&u_host, &v_host, &mut reference)
                .unwrap();
        } else {
            native.apply(&u_host, &mut reference).unwrap();
        }
        let reference = reference.to_host().unwrap();
        let u = gpu.vector_from(&u_values).unwrap();
        let v = gpu.vector_from(&v_values).unwrap();
        let mut out = gpu.vector().unwrap();
        let op = gpu.integrator().opencl().unwrap();
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            op.set_assembly(assembly).unwrap();
            let variant = if tangent {
                op.jacobian_action_variant()
            } else {
                op.residual_variant()
            };
            let launches = cov.launches;
            let atomic = assembly == Assembly::Atomic;
            for config in configs(op.config(variant).unwrap(), atomic) {
                let what = format!(
                    "{dim}D P{order}, {} cells, {} {}, {config}",
                    mesh.n_cells(),
                    physics.info().name,
                    assembly.name()
                );
                // 3D P2's larger configurations exceed a device limit: PoCL's
                // local memory (Lamé), NVIDIA's 1024 work-items a group (N_bl =
                // 16 at N_bs·N_tc = 70); any other refusal is a failure
                if let Err(e) = op.shape(variant, config) {
                    assert!(matches!(e, Error::DeviceLimit { .. }), "{what}: {e}");
                    continue;
                }
                cov.launches += 1;
                op.set_config(variant, config)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let (ud, od) = (u.as_device().unwrap(), out.as_device_mut().unwrap());
                if tangent {
                    op.jacobian_action(ud, v.as_device().unwrap(), od)
                } else {
                    op.residual(ud, od)
                }
                .unwrap_or_else(|e| panic!("{what}: {e}"));
                let launch = op.last_run().launch().unwrap();
                cov.patched += usize::from(launch.patch_groups > 0);
                cov.padded += usize::from(launch.work_groups * launch.chunk > launch.cells);
                let (diff, scale) = max_diff(&out.to_host().unwrap(), &reference);
                assert!(
                    diff <= 1e-12 * scale,
                    "{what}: {launch:?}: {diff:e} vs {scale:e}"
                );
            }
            let what = format!(
                "{dim}D P{order} {} {}",
                physics.info().name,
                assembly.name()
            );
            assert!(cov.launches > launches, "{what}: no configuration fits");
        }
    }
}

#[test]
fn patches_with_padding_equal_native_on_many_meshes() {
    let device = device();
    let sizes: [(usize, &[usize]); 2] = [(2, &[3, 5, 8, 11, 16, 23]), (3, &[2, 3, 4, 5])];
    for (dim, ns) in sizes {
        for order in [1, 2] {
            let mut cov = Coverage::default();
            for &n in ns {
                let jitter = MeshOptions {
                    jitter: 0.1,
                    seed: n as u64,
                    ..MeshOptions::default()
                };
                let mesh = unit_box(dim, n, &jitter).unwrap();
                let mesh = Arc::new(mesh);
                check_mesh(&device, &mesh, order, &mut cov);
            }
            // the cases above ran the patch path, with padding in the last group
            let what = format!("{dim}D P{order}: {} launches", cov.launches);
            assert!(cov.patched > 0 && cov.padded > 0, "{what}");
        }
    }
}

/// The minimal case of issue 19: `unit_square(16)` (512 cells), P2
/// Laplacian, `LaunchConfig::new(16, 1).with_patches(true)`, atomic assembly:
/// 6 groups of 96 cells, the last with 64 padding cells (the two-range
/// windows that patches replaced had [255, 289) + [1024, 1089) there,
/// where `WIN(0)` was −990; its node list lacks node 0 likewise).
///
/// Before the fix, under valgrind (PoCL runs the kernel on the host):
/// ```text
/// valgrind --tool=memcheck --error-exitcode=99 \
///     target/debug/deps/window_padding-… --exact minimal_case_of_the_issue
/// ```
#[test]
fn minimal_case_of_the_issue() {
    let backend = Backend::opencl_with(testing::device(), testing::options());
    let mesh: Arc<Mesh> = unit_square(16, &MeshOptions::default()).unwrap().into();
    let laplacian = |b: &Backend| operator::<f64>(&mesh, 2, 1, AuxSpace::None, &Laplacian, &[], b);
    let mut gpu = laplacian(&backend);
    let mut native = laplacian(&Backend::native());
    let values = Rng::new(3).vec(native.space().n_dofs(), -1.0, 1.0);
    let mut reference = native.vector().unwrap();
    native
        .apply(&Vector::from(values.clone()), &mut reference)
        .unwrap();
    let u = gpu.vector_from(&values).unwrap();
    let mut r = gpu.vector().unwrap();
    let op = gpu.integrator().opencl().unwrap();
    let config = LaunchConfig::new(16, 1).with_patches(true);
    op.set_config(op.residual_variant(), config).unwrap();
    let (ud, rd) = (u.as_device().unwrap(), r.as_device_mut().unwrap());
    op.residual(ud, rd).unwrap();
    let launch = op.last_run().launch().unwrap();
    assert_eq!(
        (launch.work_groups, launch.chunk, launch.cells),
        (6, 96, 512)
    );
    // every group is a patch, the last one with padding among them
    assert_eq!(
        (launch.patch_groups, launch.fallback_groups),
        (6, 0),
        "{launch:?}"
    );
    let (diff, scale) = max_diff(&r.to_host().unwrap(), &reference.to_host().unwrap());
    assert!(diff <= 1e-12 * scale, "{diff:e} vs {scale:e}");
}
