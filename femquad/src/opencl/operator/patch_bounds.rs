//! Every patch index the integration kernels use — the 16-bit local node
//! indices of a patch, positions in its group's node list — lies inside
//! its group's list: checked by the kernel itself (the thread
//! transposition and the cell-parallel kernel), on PoCL (CI) or any
//! device.
//!
//! A memory checker does not see a bad patch index: the patch arrays are
//! `__local`, which PoCL carves out of one large per-thread block, so a
//! read before or after them stays inside allocated memory (valgrind's
//! memcheck reported nothing for the out-of-bounds reads of issue 19). So
//! these tests run an *instrumented* build of the production kernel: the
//! generated source with `IN_PATCH(j)` (through which every list position
//! read from the local node indices passes) replaced by a checked version
//! that counts every position outside `[0, np)` (`np` the group's list
//! length) in a guard slot appended to the node-offset buffer, launched
//! through the operator's own path (buffers, lists, local indices,
//! padding) by swapping the compiled kernel.
//!
//! The same build counts, per dof, the plain stores of the group sums
//! (atomic assembly: the dofs of owned nodes) in slots after the guard:
//! no dof is plain-stored twice, and no dof of a node with cells in two
//! groups is plain-stored at all (that store would overwrite the other
//! group's atomic additions, or be overwritten).

use std::sync::Arc;

use super::tests::fitted;
use super::*;
use crate::aux_space::AuxSpace;
use crate::element::Element;
use crate::mesh::Mesh;
use crate::mesh::generate::{MeshOptions, unit_box};
use crate::opencl::mesh_data::{Patches, group_nodes};
use crate::opencl::shape::KernelVariant;
use crate::opencl::testing::{device, options};
use crate::opencl::{DeviceVector, GeometryMode};
use crate::physics::PointwiseEval;
use crate::physics::builtin::{Lame, LameParameters, Laplacian};
use crate::quadrature::Quadrature;
use crate::rng::Rng;
use crate::seam::Integrate;

/// The patch position of `kernels/integrate.cl` and
/// `kernels/integrate_cell.cl`, as the templates define it.
const POS: &str = "#define IN_PATCH(j) (j)";
/// The same position, checked: a position outside the group's list is
/// counted in the guard slot after the node offsets (and replaced by 0, a
/// valid one).
const POS_CHECKED: &str = "#define IN_PATCH(j) pos_checked((j), np, \
     groupNodeOffsets + get_num_groups(0) + 1)";
const POS_CHECKER: &str = "
uint pos_checked(uint j, int n, __global uint *violations) {
  if (j >= (uint)n) {
    atomic_inc(violations);
    return 0;
  }
  return j;
}
";
/// The node-offset argument, made writable for the guard slot.
const OFFSETS_ARG: &str = "__global const uint *restrict groupNodeOffsets";
const KERNEL_START: &str = "__kernel __attribute__((reqd_work_group_size(N_T, 1, 1)))";
/// The plain store of a group's sum of an owned node (atomic assembly), and
/// the same store counted per dof after the guard slot.
const PLAIN_STORE: &str = "*o = fw[k];";
const PLAIN_STORE_COUNTED: &str =
    "{ *o = fw[k]; atomic_inc(groupNodeOffsets + get_num_groups(0) + 2 + (o - out)); }";

/// The instrumented source of `source` (each replaced text must occur once).
fn instrumented(source: &str) -> String {
    for text in [POS, OFFSETS_ARG, KERNEL_START, PLAIN_STORE] {
        assert_eq!(source.matches(text).count(), 1, "`{text}` in the kernel");
    }
    source
        .replace(POS, POS_CHECKED)
        .replace(PLAIN_STORE, PLAIN_STORE_COUNTED)
        .replace(OFFSETS_ARG, "__global uint *groupNodeOffsets")
        .replace(KERNEL_START, &format!("{POS_CHECKER}\n{KERNEL_START}"))
}

/// What one instrumented launch counted: list positions outside their
/// group's list, dofs plain-stored more than once, dofs of shared nodes
/// plain-stored, and plain-stored dofs.
#[derive(Debug, Default, PartialEq)]
struct Counts {
    outside: u32,
    stored_twice: usize,
    shared_stored: usize,
    stored: usize,
}

/// The [`Counts`] of the plain-store counters `stores` (per dof) of a
/// launch on `space` in chunks of `chunk` cells, with `outside` positions
/// outside their lists.
fn counts(space: &FunctionSpace, chunk: usize, outside: u32, stores: &[u32]) -> Counts {
    let mut groups = vec![(usize::MAX, 0); space.n_nodes()];
    for c in 0..space.n_cells() {
        for &nd in space.cell_nodes(c) {
            let (first, last) = &mut groups[nd as usize];
            *first = (*first).min(c / chunk);
            *last = (*last).max(c / chunk);
        }
    }
    let n_comp = space.n_comp();
    let shared = |dof: usize| groups[dof / n_comp].0 != groups[dof / n_comp].1;
    Counts {
        outside,
        stored_twice: stores.iter().filter(|&&n| n > 1).count(),
        shared_stored: (0..stores.len())
            .filter(|&d| stores[d] > 0 && shared(d))
            .count(),
        stored: stores.iter().filter(|&&n| n > 0).count(),
    }
}

/// The configuration `config` of the kernel, or with `None` the device's
/// default on the thread transposition (whose patch positions this
/// instruments) without prefetch and with computed geometry, patches on,
/// its `N_bl` fitted to the device's limits ([`fitted`]).
fn with_patches(
    op: &OpenClIntegrator<f64>,
    variant: KernelVariant,
    config: Option<LaunchConfig>,
) -> LaunchConfig {
    let config = match config {
        Some(c) => c,
        None => op
            .config(variant)
            .unwrap()
            .with_cell_parallel(false)
            .with_prefetch(false)
            .with_geometry(GeometryMode::Computed),
    }
    .with_patches(true);
    fitted(op, variant, config)
}

/// Runs the kernel `variant` of `physics` with `config` (see
/// [`with_patches`]) on `mesh`, instrumented, through the operator's launch
/// path; returns what it counted and the launch record.
fn violations(
    device: &Arc<Device>,
    mesh: &Arc<Mesh>,
    order: usize,
    run: &Evaluation<'_>,
    config: Option<LaunchConfig>,
) -> (Counts, LaunchRecord) {
    let physics = run.physics;
    let dim = mesh.dim();
    let n_comp = physics.info().n_comp.resolve(dim);
    let element = Element::lagrange(dim, order).unwrap();
    let space = FunctionSpace::new(mesh.clone(), element, n_comp).unwrap();
    let quadrature = Quadrature::default_for(&element).unwrap();
    let disc = Discretization::<f64>::new(&space, quadrature, AuxSpace::None).unwrap();
    let op = OpenClOperator::new(device.clone(), options(), &space, disc).unwrap();
    let mut op = OpenClIntegrator::new(op, Arc::new(physics), run.constants, run.assembly).unwrap();
    let variant: KernelVariant = if run.tangent {
        op.jacobian_action_variant()
    } else {
        op.residual_variant()
    };
    let config = with_patches(&op, variant, config);
    // the production kernel and patches, then the instrumented kernel and a
    // node-offset buffer with the guard slot in their place
    op.set_config(variant, config).unwrap();
    let shape = op.shape(variant, config).unwrap();
    assert_ne!(shape.patch, (0, 0), "{config}: patches on");
    let source = op.source(variant, config).unwrap();
    let kernel = device
        .kernel(&instrumented(&source), INTEGRATE_KERNEL)
        .unwrap();
    let compiled = (op.op.kernels.iter_mut())
        .find(|(key, _)| key.1 == variant && key.2 == config)
        .unwrap()
        .1;
    compiled.kernel = kernel;
    let p = group_nodes(&space, shape.chunk, shape.patch).unwrap();
    // the offsets, the guard slot, then a plain-store counter per dof
    let mut offsets = p.offsets.clone();
    let guard = offsets.len();
    offsets.resize(guard + 1 + space.n_dofs(), 0);
    let upload = |data: &[u32]| {
        let mut buffer = device.alloc::<u32>(data.len().max(1), "patches").unwrap();
        device
            .write(&mut buffer, data, Transfer::Geometry, "patches")
            .unwrap();
        buffer
    };
    let mut local_nodes = device.alloc::<u16>(p.local.len(), "local nodes").unwrap();
    device
        .write(
            &mut local_nodes,
            &p.local,
            Transfer::Geometry,
            "local nodes",
        )
        .unwrap();
    let patches = Patches {
        offsets: upload(&offsets),
        nodes: upload(&p.nodes),
        local_nodes,
        owned: upload(&p.owned),
        patches: p.patches,
    };
    op.op
        .mesh
        .replace_patches(shape.chunk, shape.patch, patches);

    let n = space.n_dofs();
    let mut rng = Rng::new(n as u64);
    let u = DeviceVector::from_host(device, &rng.vec(n, -1.0, 1.0)).unwrap();
    let v = DeviceVector::from_host(device, &rng.vec(n, -1.0, 1.0)).unwrap();
    let mut out = DeviceVector::<f64>::zeros(device, n).unwrap();
    if run.tangent {
        op.jacobian_action(&u, &v, &mut out)
    } else {
        op.residual(&u, &mut out)
    }
    .unwrap();
    op.last_run().wait_ns(device).unwrap();
    let launch = op.last_run().launch().unwrap();
    let buffer = &op
        .op
        .mesh
        .patches(shape.chunk, shape.patch)
        .unwrap()
        .offsets;
    let mut back = vec![0u32; offsets.len()];
    device.read(buffer, &mut back, "patches").unwrap();
    (
        counts(&space, shape.chunk, back[guard], &back[guard + 1..]),
        launch,
    )
}

/// The evaluation [`violations`] instruments: the physics and its constants, the
/// assembly, and `F(u)` or (`tangent`) `J(u)·v`.
struct Evaluation<'a> {
    physics: &'static dyn PointwiseEval<f64>,
    constants: &'a [f64],
    assembly: Assembly,
    tangent: bool,
}

/// Issue 19's case: `unit_square(16)`, P2 Laplacian, 16 blocks per batch,
/// patches on, atomic assembly: the last of 6 groups has 64 padding cells
/// and a node list without node 0.
#[test]
fn the_minimal_case_indexes_inside_its_patches() {
    let device = device();
    let mesh = Arc::new(unit_box(2, 16, &MeshOptions::default()).unwrap());
    let config = LaunchConfig::new(16, 1).with_patches(true);
    let run = Evaluation {
        physics: &Laplacian,
        constants: &[],
        assembly: Assembly::Atomic,
        tangent: false,
    };
    let (counts, launch) = violations(&device, &mesh, 2, &run, Some(config));
    // 6 groups, the last with 64 padding cells; they are patches
    assert_eq!(
        (launch.work_groups, launch.chunk, launch.cells),
        (6, 96, 512)
    );
    assert_eq!(
        (launch.patch_groups, launch.fallback_groups),
        (6, 0),
        "{launch:?}"
    );
    assert_eq!(counts.outside, 0, "patch indices outside the node list");
    assert_eq!(
        (counts.stored_twice, counts.shared_stored),
        (0, 0),
        "plain stores: {counts:?}"
    );
    assert!(
        counts.stored > 0,
        "no owned node was plain-stored: {counts:?}"
    );
}

/// Many meshes (partial last groups of many sizes), 2D and 3D, P1 and P2,
/// residual and Jacobian action, both assemblies, prefetch on and off,
/// stored and computed geometry; the thread transposition and the
/// cell-parallel kernel (atomic assembly: its patches sum atomic output).
#[test]
fn every_patch_index_is_inside_its_node_list() {
    let device = device();
    let lame = LameParameters::new(1.5, 0.8).constants().to_vec();
    // 16 blocks of one batch (the issue's), the device default without
    // prefetch, with computed geometry (coordinates gathered too), and the
    // cell-parallel kernel with computed geometry
    let cell = LaunchConfig::new(16, 1)
        .with_cell_parallel(true)
        .with_geometry(GeometryMode::Computed);
    let configs = [Some(LaunchConfig::new(16, 1)), None, Some(cell)];
    let sizes: [(usize, &[usize]); 2] = [(2, &[5, 16, 21]), (3, &[3, 5])];
    // launches, those with patches and padding cells, plain stores
    let (mut launches, mut covered, mut covered_cell, mut stored) = (0, 0, 0, 0);
    for (dim, ns) in sizes {
        for &n in ns {
            let mesh = Arc::new(unit_box(dim, n, &MeshOptions::default()).unwrap());
            for order in [1, 2] {
                for assembly in [Assembly::Atomic, Assembly::Deterministic] {
                    for config in configs {
                        if config.is_some_and(|c| c.cell_parallel)
                            && assembly == Assembly::Deterministic
                        {
                            continue;
                        }
                        let cases: [(&'static dyn PointwiseEval<f64>, &[f64], bool); 2] =
                            [(&Laplacian, &[], false), (&Lame, &lame, true)];
                        for (physics, constants, tangent) in cases {
                            let run = Evaluation {
                                physics,
                                constants,
                                assembly,
                                tangent,
                            };
                            let (counts, launch) = violations(&device, &mesh, order, &run, config);
                            let what = format!(
                                "{dim}D n={n} P{order} {} {} {}",
                                physics.info().name,
                                assembly.name(),
                                launch.config
                            );
                            assert_eq!(
                                counts.outside, 0,
                                "{what}: patch indices outside the node list"
                            );
                            assert_eq!(
                                (counts.stored_twice, counts.shared_stored),
                                (0, 0),
                                "{what}: plain stores {counts:?}"
                            );
                            stored += counts.stored;
                            launches += 1;
                            let padded = launch.patch_groups > 0
                                && launch.work_groups * launch.chunk > launch.cells;
                            covered += usize::from(padded);
                            covered_cell += usize::from(padded && launch.config.cell_parallel);
                        }
                    }
                }
            }
        }
    }
    assert!(
        covered >= 20,
        "{covered} of {launches} launches had padded patches"
    );
    assert!(
        covered_cell >= 10,
        "{covered_cell} cell-parallel launches had padded patches"
    );
    assert!(stored > 1000, "{stored} dofs plain-stored");
}
