//! `F(u)` and `J(u)·v` on the device against the native reference for every
//! physics × {atomic, deterministic} assembly × {stored, computed} geometry
//! (a full product: no physics is seen in one mode only), in f64 (≤ 1e-12
//! relative) in 2D and 3D, P1 and P2, and in f32 (≤ 1e-5) with each physics
//! in one of those, on meshes of several work-groups with a partial last
//! one; the element kernel (BK), its geometry mode alternating along the
//! cases; meshes smaller than one chunk and of exactly one.
//!
//! Patch assembly: every case runs on two paths, on the shuffled mesh
//! without patches and on the same box in the generator's numbering with
//! patches ([`LaunchConfig::patches`]) and the smallest chunk
//! ([`patch_config`]) at which some groups are patches (node lists in
//! local memory, 16-bit local indices, owned nodes stored plainly, shared
//! ones added atomically) and, where the mesh has such a chunk, others do
//! not fit their capacities (the fallback through global memory); the 2D
//! meshes of one chunk are one patch (every node owned), the 3D one does
//! not fit its capacity; a tiny [`KernelOptions::patch_node_limit`] sends
//! every group of a launch with patches to the fallback.
//! In the products each (assembly, geometry) mode of a case runs one action
//! on each path, the two actions swapping paths from mode to mode and from
//! physics to physics ([`Paths::Alternating`]): every physics × element ×
//! dimension × mode is checked on both paths, with each program built once
//! (a kernel build on PoCL takes seconds, and the product's builds were most
//! of CI's time); the meshes of one chunk run every launch on both paths.

use super::physics::{ManufacturedPoisson, ReactionSource};
use super::*;
use crate::opencl::GeometryMode;
use crate::opencl::mesh_data::group_nodes;
use crate::opencl::shape::Output;
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
/// two would fill the last of the `n_cells` cells' work-groups exactly,
/// else one where those do not fit (the cell-parallel kernel's patch
/// copies of 3D P2 Lamé: blocks of 210 cells) —
/// with the fewest threads per cell whose work-group fits
/// [`PORTABLE_THREADS`] and [`PORTABLE_LOCAL_MEM`]; chosen from the case
/// alone, never from the device.
fn small_config<R: Real>(
    op: &OpenClIntegrator<R>,
    variant: KernelVariant,
    geometry: GeometryMode,
    n_cells: usize,
    patches: bool,
    kernel: Kernel,
) -> LaunchConfig {
    let case = *op.case();
    let l = case.lcm();
    (1..=l)
        .filter(|n_tc| l.is_multiple_of(*n_tc))
        .flat_map(|n_tc| {
            [2, 3, 1].map(|n_cb| {
                kernel.apply(
                    LaunchConfig::new(1, n_cb)
                        .with_threads_per_cell(n_tc)
                        .with_geometry(geometry)
                        .with_patches(patches),
                    variant,
                )
            })
        })
        .filter(|c| KernelShape::new(&case, variant, *c, op.options()).is_ok())
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

/// The configuration of [`small_config`]'s threads per cell with patches,
/// one block a batch and the fewest batches a chunk at which the mesh of
/// `space` has patches and groups whose nodes do not fit the capacities,
/// else (no such chunk) only patches, with a partial last group; chosen
/// from the case and the mesh, the device only excluding what it cannot
/// launch.
fn patch_config<R: Real>(
    op: &OpenClIntegrator<R>,
    space: &FunctionSpace,
    variant: KernelVariant,
    geometry: GeometryMode,
    kernel: Kernel,
) -> LaunchConfig {
    let n_cells = space.n_cells();
    let small = small_config(op, variant, geometry, n_cells, true, kernel);
    if !small.patches {
        // (the cell-parallel kernel's patches only sum atomic output)
        return small;
    }
    let n_tc = small.n_tc;
    let mut only_patches = None;
    for n_cb in 1..=512 {
        let c = kernel.apply(
            LaunchConfig::new(1, n_cb)
                .with_threads_per_cell(n_tc)
                .with_geometry(geometry)
                .with_patches(true),
            variant,
        );
        let Ok(shape) = op.shape(variant, c) else {
            continue;
        };
        let groups = n_cells.div_ceil(shape.chunk);
        if groups < 2 || n_cells.is_multiple_of(shape.chunk) {
            continue;
        }
        let patches = group_nodes(space, shape.chunk, shape.patch)
            .unwrap()
            .patches;
        if patches > 0 && patches < groups {
            return c;
        }
        if patches > 0 && only_patches.is_none() {
            only_patches = Some(c);
        }
    }
    only_patches.unwrap_or_else(|| panic!("{:?} {variant:?}: no chunk has a patch", op.case()))
}

/// Which kernel a global launch runs: the thread transposition
/// (`kernels/integrate.cl`) or the cell-parallel kernel
/// (`kernels/integrate_cell.cl`, [`LaunchConfig::cell_parallel`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kernel {
    Transposed,
    CellParallel,
}

/// Both kernels.
const KERNELS: [Kernel; 2] = [Kernel::Transposed, Kernel::CellParallel];

impl Kernel {
    /// `config` on this kernel for `variant`: the cell-parallel one with one
    /// work-item per cell and patches only where its output is atomic
    /// (they sum it in local memory).
    fn apply(self, config: LaunchConfig, variant: KernelVariant) -> LaunchConfig {
        match self {
            Kernel::Transposed => config,
            Kernel::CellParallel => LaunchConfig {
                n_tc: 1,
                patches: config.patches && variant.output() != Output::ElementVectors,
                ..config
            }
            .with_cell_parallel(true),
        }
    }
}

/// How many work-groups a case's launches must span.
#[derive(Clone, Copy, Debug, PartialEq)]
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

/// The work-groups of the launches with patches: patches and those that
/// gathered from global memory (their nodes did not fit the capacities).
#[derive(Default, Debug)]
struct PatchGroups {
    patches: usize,
    fallback: usize,
}

/// Which global launches of a case run on which path: without patches on
/// the shuffled mesh (`plain`), with them on the mesh numbered for
/// locality (`patched`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Paths {
    /// Both actions in every mode on both paths.
    Both,
    /// Each (action, mode) on one path: action `a` in mode `m` (indices
    /// into [`ACTIONS`] and [`ALL_MODES`]) runs with patches where
    /// `a + m + parity` is even, else plain; so every mode runs one action
    /// on each path, and the case of the other parity swaps them.
    Alternating(usize),
}

impl Paths {
    /// Whether action `a` runs in mode `m` on the path `patched`.
    fn runs(self, a: usize, m: usize, patched: bool) -> bool {
        match self {
            Paths::Both => true,
            Paths::Alternating(parity) => (a + m + parity).is_multiple_of(2) == patched,
        }
    }
}

/// Checks `F(u)` and `J(u)·v` of `case` in every mode — on the shuffled
/// mesh, and with patches on the mesh numbered for locality, as
/// `paths` divides them — and its element kernel with `element_geometry`,
/// against the native reference. `config` `None`: [`small_config`]. Adds
/// the groups of the launches with patches to `patches`.
#[allow(clippy::too_many_arguments)]
fn check_case<R: EvalPrecision>(
    device: &Arc<Device>,
    case: &Case,
    config: Option<LaunchConfig>,
    groups: Groups,
    paths: Paths,
    element_geometry: GeometryMode,
    tol: f64,
    patches: &mut PatchGroups,
) {
    let s = setup::<R>(case);
    let mut op = check_global(device, case, &s, config, groups, paths, tol, patches, false);
    let n_cells = s.space.n_cells();
    let element_config = match config {
        Some(c) => c.with_geometry(element_geometry),
        None => small_config(
            &op,
            KernelVariant::Element,
            element_geometry,
            n_cells,
            false,
            Kernel::Transposed,
        ),
    };
    check_element_kernel(&mut op, &s, case.physics, element_config, tol);
    let s = setup_on::<R>(case, patch_mesh(case.dim, case.n));
    check_global(
        device,
        case,
        &s,
        config_patches(config),
        groups,
        paths,
        tol,
        patches,
        true,
    );
}

/// `config` with patches, if given.
fn config_patches(config: Option<LaunchConfig>) -> Option<LaunchConfig> {
    config.map(|c| c.with_patches(true))
}

/// Checks `F(u)` and `J(u)·v` of `case` on the setup `s` in the modes that
/// `paths` gives the path `patched` against the native reference, with
/// patches if `patched` (adding the groups to `patches`); returns the
/// operator.
#[allow(clippy::too_many_arguments)]
fn check_global<R: EvalPrecision>(
    device: &Arc<Device>,
    case: &Case,
    s: &Setup<R>,
    config: Option<LaunchConfig>,
    groups: Groups,
    paths: Paths,
    tol: f64,
    patches: &mut PatchGroups,
    patched: bool,
) -> OpenClIntegrator<R> {
    let physics = case.physics;
    let mut op = operator(device, s, physics, Assembly::Atomic);
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
    for (a, action) in ACTIONS.into_iter().enumerate() {
        let reference = native_global(s, physics, action);
        for (m, (assembly, geometry)) in ALL_MODES.into_iter().enumerate() {
            if !paths.runs(a, m, patched) {
                continue;
            }
            op.set_assembly(assembly).unwrap();
            let variant = global_variant(&op, action);
            for kernel in KERNELS {
                let config = match config {
                    Some(c) => kernel.apply(c.with_geometry(geometry), variant),
                    None if patched => patch_config(&op, &s.space, variant, geometry, kernel),
                    None => small_config(&op, variant, geometry, n_cells, false, kernel),
                };
                let c = runnable(&op, variant, config);
                let out = device_global(&mut op, s, action, Some(c));
                launched(&op, c);
                let launch = op.last_run().launch().unwrap();
                let what = format!("{label} {} {} {c}", action.name(), assembly.name());
                check_groups(groups, n_cells, launch.chunk, &what);
                let d = rel_diff(&out, &reference);
                println!(
                    "{what}: {n_cells} cells in {} groups ({} patches, {} fallback), rel diff {d:.2e}",
                    launch.work_groups, launch.patch_groups, launch.fallback_groups
                );
                assert!(d <= tol, "{what}: relative difference {d:e} > {tol:e}");
                assert_eq!(
                    launch.patch_groups + launch.fallback_groups,
                    if c.patches { launch.work_groups } else { 0 },
                    "{what}: every group of a launch with patches is a patch or falls back"
                );
                assert_eq!(
                    c.patches,
                    patched && (kernel == Kernel::Transposed || assembly == Assembly::Atomic),
                    "{what}"
                );
                if c.patches {
                    if groups == Groups::Several {
                        assert!(launch.patch_groups > 0, "{what}: no patch");
                    }
                    patches.patches += launch.patch_groups;
                    patches.fallback += launch.fallback_groups;
                }
            }
        }
    }
    op
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

/// The product in precision `R` over the cases `select` takes.
fn check_cases<R: EvalPrecision>(tol: f64, select: impl Fn(&ProductCase) -> bool) {
    let device = device();
    println!("device: {}", device.info());
    let mut patches = PatchGroups::default();
    for c in cases() {
        if select(&c) {
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
                Paths::Alternating(c.physics),
                element_geometry,
                tol,
                &mut patches,
            );
        }
    }
    // both kinds of work-groups ran in the launches with patches
    let stats = device.stats();
    println!(
        "{patches:?}; programs built: {} (cache hits {})",
        stats.builds, stats.cache_hits
    );
    assert!(patches.patches > 0 && patches.fallback > 0, "{patches:?}");
}

/// Every physics × assembly × geometry on both paths (the action
/// alternating), in 2D P1 and 3D P2 (with the next test: every dimension
/// and order, split in two so that two test threads share the builds).
#[test]
fn device_matches_native_f64_2d_p1_3d_p2() {
    check_cases::<f64>(1e-12, |c| c.pair == 0 || c.pair == 3);
}

/// The same in 2D P2 and 3D P1.
#[test]
fn device_matches_native_f64_2d_p2_3d_p1() {
    check_cases::<f64>(1e-12, |c| c.pair == 1 || c.pair == 2);
}

/// Every physics × assembly × geometry on both paths (the action
/// alternating), each physics in one dimension and order.
#[test]
fn device_matches_native_f32() {
    // a quarter of the kernel builds
    check_cases::<f32>(1e-5, |c| c.physics % 4 == c.pair);
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
        let mut patch = PatchGroups::default();
        check_case::<f64>(
            &device,
            &case,
            Some(config),
            Groups::One,
            Paths::Both,
            geometry,
            1e-12,
            &mut patch,
        );
        // one patch (every node owned), in each of the 12 launches with
        // patches (8 transposed, 4 cell-parallel: atomic output)
        assert_eq!((patch.patches, patch.fallback), (12, 0), "{n}: {patch:?}");
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
    let mut patch = PatchGroups::default();
    check_case::<f64>(
        &device,
        &case,
        Some(config),
        Groups::One,
        Paths::Both,
        geometry,
        1e-12,
        &mut patch,
    );
    // its 27 vertices do not fit a 3D patch of 48 cells (24 vertex nodes):
    // the one group gathers from global memory (and the cell-parallel
    // kernel adds into it), in each of the 12 launches with patches
    assert_eq!((patch.patches, patch.fallback), (0, 12), "{patch:?}");
}

/// A tiny [`KernelOptions::patch_node_limit`] (4 nodes, fewer than any
/// group has): every group of a launch with patches takes the fallback
/// through global memory, counted, and the result is still the native one
/// — 2D P2 Lamé (a vector field with edge nodes) on the mesh numbered for
/// locality, `F(u)` and `J(u)·v` in every mode.
#[test]
fn groups_beyond_the_patch_node_limit_fall_back() {
    let device = device();
    let case = Case {
        dim: 2,
        order: 2,
        n: 6,
        physics: &Lame,
        aux: AuxSpace::None,
        constants: vec![1.3, 0.6],
        degree: 2,
    };
    let s = setup_on::<f64>(&case, patch_mesh(case.dim, case.n));
    let limited = KernelOptions {
        patch_node_limit: Some(4),
        ..options()
    };
    let op = OpenClOperator::new(device.clone(), limited, &s.space, s.disc.clone()).unwrap();
    let physics = Arc::new(f64::physics(&Lame));
    let mut op = OpenClIntegrator::new(op, physics, &s.constants, Assembly::Atomic).unwrap();
    for action in ACTIONS {
        let reference = native_global(&s, &Lame, action);
        for (assembly, geometry) in ALL_MODES {
            op.set_assembly(assembly).unwrap();
            let variant = global_variant(&op, action);
            let config = LaunchConfig::new(1, 2)
                .with_geometry(geometry)
                .with_patches(true);
            let c = runnable(&op, variant, config);
            let out = device_global(&mut op, &s, action, Some(c));
            launched(&op, c);
            let launch = op.last_run().launch().unwrap();
            let what = format!("{} {} {c}", action.name(), assembly.name());
            assert!(launch.work_groups >= 2, "{what}: {launch:?}");
            assert_eq!(
                (launch.patch_groups, launch.fallback_groups),
                (0, launch.work_groups),
                "{what}: every group falls back"
            );
            let d = rel_diff(&out, &reference);
            assert!(d <= 1e-12, "{what}: relative difference {d:e} > 1e-12");
        }
    }
}
