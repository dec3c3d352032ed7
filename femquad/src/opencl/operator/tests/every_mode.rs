//! `F(u)` and `J(u)·v` on the device against the native reference for every
//! physics × {atomic, deterministic} assembly × {stored, computed} geometry
//! (a full product: no physics is seen in one mode only), in f64 (≤ 1e-12
//! relative) in 2D and 3D, P1 and P2, and in f32 (≤ 1e-5) with each physics
//! in one of those, on meshes of several work-groups with a partial last
//! one; the element kernel (BK), its geometry mode alternating along the
//! cases; meshes smaller than one chunk and of exactly one.

use super::physics::{ManufacturedPoisson, ReactionSource};
use super::*;
use crate::physics::builtin::{Lame, Laplacian, NonlinearDiffusion, Poisson};

/// Every assembly mode with every geometry mode.
const ALL_MODES: [(Assembly, GeometryMode); 4] = [
    (Assembly::Atomic, GeometryMode::Stored),
    (Assembly::Atomic, GeometryMode::Computed),
    (Assembly::Deterministic, GeometryMode::Stored),
    (Assembly::Deterministic, GeometryMode::Computed),
];

/// Both global actions.
const ACTIONS: [Action; 2] = [Action::Residual, Action::JacobianAction];

/// Most work-items and bytes of local memory of the test configurations:
/// what every OpenCL device offers (a work-group of 256, 32 KiB of local
/// memory less the 1 KiB the device check keeps), so that the same
/// configurations run on PoCL and on a GPU.
const PORTABLE_THREADS: usize = 256;
const PORTABLE_LOCAL_MEM: usize = 31 << 10;

/// Small chunks — one block a batch, two batches a chunk, else three where
/// two would fill the last of the `n_cells` cells' work-groups exactly —
/// with the fewest threads per cell whose work-group fits
/// [`PORTABLE_THREADS`] and [`PORTABLE_LOCAL_MEM`]; chosen from the case
/// alone, never from the device.
fn small_config<R: Real>(
    op: &OpenClIntegrator<R>,
    variant: KernelVariant,
    geometry: GeometryMode,
    n_cells: usize,
) -> LaunchConfig {
    let case = *op.case();
    let l = case.lcm();
    (1..=l)
        .filter(|n_tc| l.is_multiple_of(*n_tc))
        .flat_map(|n_tc| {
            [2, 3].map(|n_cb| {
                LaunchConfig::new(1, n_cb)
                    .with_threads_per_cell(n_tc)
                    .with_geometry(geometry)
            })
        })
        .find(|&c| {
            let shape = KernelShape::new(&case, variant, c, op.options()).unwrap();
            shape.n_t <= PORTABLE_THREADS
                && shape.local_mem_bytes() <= PORTABLE_LOCAL_MEM
                && !n_cells.is_multiple_of(shape.chunk)
        })
        .unwrap_or_else(|| {
            panic!("{case:?} {variant:?}: no small configuration fits with a partial last group")
        })
}

/// How many work-groups a case's launches must span.
#[derive(Clone, Copy, Debug)]
enum Groups {
    /// At least two, the last one partial.
    Several,
    /// Exactly one.
    One,
}

fn check_groups(groups: Groups, n_cells: usize, chunk: usize, what: &str) {
    let n_chunks = n_cells.div_ceil(chunk);
    let ok = match groups {
        Groups::Several => n_chunks >= 2 && !n_cells.is_multiple_of(chunk),
        Groups::One => n_chunks == 1,
    };
    assert!(
        ok,
        "{what}: {n_cells} cells in chunks of {chunk} is not {groups:?} work-groups"
    );
}

/// Checks `F(u)` and `J(u)·v` of `case` in every mode, and its element
/// kernel with `element_geometry`, against the native reference. `config`
/// `None`: [`small_config`].
fn check_case<R: EvalPrecision>(
    device: &Arc<Device>,
    case: &Case,
    config: Option<LaunchConfig>,
    groups: Groups,
    element_geometry: GeometryMode,
    tol: f64,
) {
    let s = setup::<R>(case);
    let physics = case.physics;
    let mut op = operator(device, &s, physics, Assembly::Atomic);
    let n_cells = s.space.n_cells();
    let label = format!(
        "{}D P{} {} aux {} {} N_q={}",
        case.dim,
        case.order,
        physics.info().name,
        case.aux.kind(),
        R::PRECISION,
        s.disc.n_q()
    );
    for action in ACTIONS {
        let reference = native_global(&s, physics, action);
        for (assembly, geometry) in ALL_MODES {
            op.set_assembly(assembly).unwrap();
            let variant = global_variant(&op, action);
            let config = match config {
                Some(c) => c.with_geometry(geometry),
                None => small_config(&op, variant, geometry, n_cells),
            };
            let c = runnable(&op, variant, config);
            let out = device_global(&mut op, &s, action, Some(c));
            launched(&op, c);
            let chunk = op.last_run().launch().unwrap().chunk;
            let what = format!("{label} {} {} {c}", action.name(), assembly.name());
            check_groups(groups, n_cells, chunk, &what);
            let d = rel_diff(&out, &reference);
            println!(
                "{what}: {n_cells} cells in {} groups, rel diff {d:.2e}",
                n_cells.div_ceil(chunk)
            );
            assert!(d <= tol, "{what}: relative difference {d:e} > {tol:e}");
        }
    }
    let config = match config {
        Some(c) => c.with_geometry(element_geometry),
        None => small_config(&op, KernelVariant::Element, element_geometry, n_cells),
    };
    check_element_kernel(&mut op, &s, physics, config, tol);
}

/// The physics of the product, with their aux spaces and constants: the
/// Laplacian, Poisson with a constant source, with a cubic reaction and a
/// source (`f0` depends on `u`), with a manufactured source (`f0` depends
/// on `x`), a coefficient field in the solution's element and in P0, a
/// nonlinear diffusion (`f1` depends on `u`), Lamé (a vector field).
fn physics() -> Vec<(&'static dyn PointwiseEvalBoth, AuxSpace, Vec<f64>)> {
    vec![
        (&Laplacian, AuxSpace::None, vec![]),
        (&Poisson, AuxSpace::None, vec![2.5]),
        (&ReactionSource, AuxSpace::None, vec![0.7, 1.5]),
        (&ManufacturedPoisson, AuxSpace::None, vec![]),
        (&LaplacianCoefficient, AuxSpace::Field { n_comp: 1 }, vec![]),
        (&LaplacianCoefficient, AuxSpace::Cell { n_comp: 1 }, vec![]),
        (&NonlinearDiffusion, AuxSpace::None, vec![]),
        (&Lame, AuxSpace::None, vec![1.3, 0.6]),
    ]
}

/// One case of the product: every physics (index `physics`) in 2D and 3D,
/// P1 and P2 (the (dimension, order) pair `pair`).
struct ProductCase {
    physics: usize,
    pair: usize,
    case: Case,
}

/// Every physics in 2D and 3D, P1 and P2. The quadrature is the one-point
/// rule (degree 1) or the rule of degree `2·order`, alternating along the
/// physics and the (dimension, order) pairs: each physics meets each rule
/// in two of its four pairs.
fn cases() -> Vec<ProductCase> {
    let pairs = [(2, 1, 23), (2, 2, 13), (3, 1, 7), (3, 2, 5)];
    let mut v = Vec::new();
    for (pair, (dim, order, n)) in pairs.into_iter().enumerate() {
        for (k, (physics, aux, constants)) in physics().into_iter().enumerate() {
            // (3D P2 Lamé, the largest kernel, gets its 14 points)
            let degree = if (k + dim + order) % 2 == 1 {
                1
            } else {
                2 * order
            };
            let case = Case {
                dim,
                order,
                n,
                physics,
                aux,
                constants,
                degree,
            };
            v.push(ProductCase {
                physics: k,
                pair,
                case,
            });
        }
    }
    v
}

/// The product in precision `R`, every case (`all_pairs`) or each physics
/// in one (dimension, order) pair, in turn (a quarter of the kernel builds).
fn check_cases<R: EvalPrecision>(tol: f64, all_pairs: bool) {
    let device = device();
    println!("device: {}", device.info());
    for c in cases() {
        if all_pairs || c.physics % 4 == c.pair {
            // the element kernel's geometry alternates like the quadrature
            let element_geometry = if (c.physics + c.pair) % 2 == 0 {
                GeometryMode::Stored
            } else {
                GeometryMode::Computed
            };
            check_case::<R>(
                &device,
                &c.case,
                None,
                Groups::Several,
                element_geometry,
                tol,
            );
        }
    }
}

/// Every physics × assembly × geometry × action, in every dimension and
/// order.
#[test]
fn device_matches_native_f64() {
    check_cases::<f64>(1e-12, true);
}

/// Every physics × assembly × geometry × action, each physics in one
/// dimension and order.
#[test]
fn device_matches_native_f32() {
    check_cases::<f32>(1e-5, false);
}

#[test]
fn meshes_smaller_than_and_exactly_one_chunk() {
    let device = device();
    let laplacian = |dim, n| Case {
        dim,
        order: 1,
        n,
        physics: &Laplacian,
        aux: AuxSpace::None,
        constants: vec![],
        degree: 1,
    };
    // 2D P1 Laplacian, one point: N_bs = 3 cells, N_bl = 4, N_cb = 2 → 24
    // cells a chunk; meshes of 2, 8 and 18 cells (the element kernel with
    // either geometry).
    let config = LaunchConfig::new(4, 2);
    for (n, cells, geometry) in [
        (1, 2, GeometryMode::Stored),
        (2, 8, GeometryMode::Computed),
        (3, 18, GeometryMode::Stored),
    ] {
        let case = laplacian(2, n);
        assert_eq!(setup::<f64>(&case).space.n_cells(), cells);
        check_case::<f64>(&device, &case, Some(config), Groups::One, geometry, 1e-12);
    }
    // Exactly one chunk: 24 cells = a 2D mesh cannot; 3D P1 (N_bs = 4) with
    // N_bl = 12, N_cb = 1 is 48 cells = the 6 Kuhn tetrahedra of 2³ cubes.
    let case = laplacian(3, 2);
    let s = setup::<f64>(&case);
    assert_eq!(s.space.n_cells(), 48);
    let config = LaunchConfig::new(12, 1);
    let op = operator(&device, &s, &Laplacian, Assembly::Atomic);
    let shape = op.shape(op.residual_variant(), config).unwrap();
    assert_eq!(shape.chunk, 48);
    let geometry = GeometryMode::Computed;
    check_case::<f64>(&device, &case, Some(config), Groups::One, geometry, 1e-12);
}
