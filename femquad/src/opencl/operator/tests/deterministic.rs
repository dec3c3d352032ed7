//! The deterministic assembly is what `kernels/assemble.cl` promises: every
//! dof of `F` is, bit for bit, the sum of the device's own element-vector
//! entries of that dof's node, added from 0 in increasing cell order (the
//! native assembly's order) — on meshes of many work-groups, under two
//! launch configurations, in f32 and f64. Atomic assembly fails this (the
//! element vectors stay unwritten), and so does any other order of the sum
//! (the meshes are checked to be ones where the order changes the bits).
//! The same holds with patches on the meshes numbered for locality
//! (patches gather from their node lists in local memory through 16-bit
//! local node indices), and there the result is bitwise the one of the
//! same configuration without patches: bitwise reproducible across launch
//! configurations, with and without patches. The cell-parallel kernel
//! ([`LaunchConfig::cell_parallel`]) writes element vectors that sum to
//! bitwise the thread transposition's `F` on the same chunks and geometry.

use super::*;
use crate::layout::{cell_dof, global_dof};
use crate::opencl::GeometryMode;
use crate::physics::builtin::{Lame, Laplacian};

/// `Σ` of the element-vector entries `ev` of every dof's node, from 0, in
/// increasing cell order (decreasing with `reverse`), in the precision `R`.
fn host_sum<R: Real>(space: &FunctionSpace, ev: &[R], reverse: bool) -> Vec<R> {
    let (n_b, nc) = (space.n_basis(), space.n_comp());
    let mut cells: Vec<usize> = (0..space.n_cells()).collect();
    if reverse {
        cells.reverse();
    }
    let mut out = vec![R::ZERO; space.n_dofs()];
    for c in cells {
        for (b, &node) in space.cell_nodes(c).iter().enumerate() {
            for comp in 0..nc {
                out[global_dof(node as usize, comp, nc)] += ev[cell_dof(c, b, comp, n_b, nc)];
            }
        }
    }
    out
}

/// The dofs where `a` and `b` differ in their bits.
fn bitwise_differences<R: Real>(a: &[R], b: &[R]) -> Vec<usize> {
    (0..a.len())
        .filter(|&i| bytemuck::bytes_of(&a[i]) != bytemuck::bytes_of(&b[i]))
        .collect()
}

/// The deterministic `F(u)` of `case` under the small configuration and
/// under the device default — with patches (`patched`) on the mesh
/// numbered for locality, else on the shuffled mesh — against the host sum
/// of the element vectors that the same launch left on the device, and
/// with patches against the same configuration without.
fn check<R: EvalPrecision>(device: &Arc<Device>, case: &Case, patched: bool) {
    let s = if patched {
        setup_on::<R>(case, patch_mesh(case.dim, case.n))
    } else {
        setup::<R>(case)
    };
    let physics = case.physics;
    let mut op = operator(device, &s, physics, Assembly::Deterministic);
    let variant = op.residual_variant();
    // (with patches, chunks of 48 batches: 1152 cells in 2D P2, 384 in 3D
    // P1, large enough for the rows of these meshes to fit their capacities)
    let n_cb = if patched { 48 } else { 1 };
    let small = LaunchConfig::new(2, n_cb).with_geometry(GeometryMode::Computed);
    // the device default on the thread transposition
    let default = op
        .config(variant)
        .unwrap()
        .with_cell_parallel(false)
        .with_prefetch(true);
    // the cell-parallel kernel (whose patches only sum atomic output) on the
    // small configuration's chunks
    let cell = small.with_cell_parallel(true);
    let n_cells = s.space.n_cells();
    let mut small_f = None;
    let configs = [small, default].map(|c| c.with_patches(patched));
    for config in [configs[0], configs[1], cell] {
        let c = runnable(&op, variant, fitted(&op, variant, config));
        let f = device_global(&mut op, &s, Action::Residual, Some(c));
        launched(&op, c);
        if config == configs[0] {
            small_f = Some(f.clone());
        }
        let groups = n_cells.div_ceil(op.last_run().launch().unwrap().chunk);
        let what = format!(
            "{}D P{} {} {} {c}, {n_cells} cells in {groups} work-groups",
            case.dim,
            case.order,
            physics.info().name,
            R::PRECISION
        );
        assert!(groups >= 4, "{what}: too few work-groups");
        let patches = op.last_run().launch().unwrap().patch_groups;
        assert_eq!(patches > 0, c.patches, "{what}: {patches} patches");
        // The launch wrote every cell's element vector (NaN before).
        let ev = device_element_vectors(&op, n_cells);
        let unwritten = ev.iter().filter(|x| x.to_f64().is_nan()).count();
        assert_eq!(
            unwritten, 0,
            "{what}: {unwritten} element-vector entries were not written by the integration"
        );
        let forward = host_sum(&s.space, &ev, false);
        let differ = bitwise_differences(&f, &forward);
        if let Some(&dof) = differ.first() {
            panic!(
                "{what}: F differs from the increasing-cell-order sum of the device's element \
                 vectors in {} of {} dofs; first dof {dof}: F = {:e}, sum = {:e}",
                differ.len(),
                f.len(),
                f[dof].to_f64(),
                forward[dof].to_f64()
            );
        }
        // The test has power: on this mesh the order of the additions shows.
        let reordered = bitwise_differences(&f, &host_sum(&s.space, &ev, true)).len();
        println!(
            "{what}: bitwise the cell-order sum; the reversed sum differs in {reordered} dofs"
        );
        assert!(
            reordered > 0,
            "{what}: the reversed sum is bitwise the same: the check would not see the order"
        );
        // Bitwise reproducible across the kernels: the cell-parallel kernel
        // integrates each cell in the transposition's order of operations.
        if config == cell {
            let transposed: &Vec<R> = small_f.as_ref().expect("the small configuration ran first");
            let differ = bitwise_differences(&f, transposed);
            if let Some(&dof) = differ.first() {
                panic!(
                    "{what}: F differs from the thread transposition's ({}) in {} of {} dofs; \
                     first dof {dof}: {:e} against {:e}",
                    configs[0],
                    differ.len(),
                    f.len(),
                    f[dof].to_f64(),
                    transposed[dof].to_f64()
                );
            }
        }
        if c.patches {
            let c = runnable(&op, variant, c.with_patches(false));
            let plain = device_global(&mut op, &s, Action::Residual, Some(c));
            let differ = bitwise_differences(&f, &plain);
            assert!(
                differ.is_empty(),
                "{what}: F differs from the launch without patches in {} dofs",
                differ.len()
            );
        }
    }
}

#[test]
fn deterministic_assembly_is_the_cell_order_sum_of_the_device_element_vectors() {
    let device = device();
    // a vector P2 field in 2D: 5000 cells; the default chunk of 1152 cells
    // (an H100, PoCL) makes 5 work-groups, the small one 209
    let lame = Case {
        dim: 2,
        order: 2,
        n: 50,
        physics: &Lame,
        aux: AuxSpace::None,
        constants: vec![1.0, 2.0],
        degree: 4,
    };
    // P1 in 3D, about 24 cells a vertex: 6000 cells
    let laplacian = Case {
        dim: 3,
        order: 1,
        n: 10,
        physics: &Laplacian,
        aux: AuxSpace::None,
        constants: vec![],
        degree: 1,
    };
    for case in [&lame, &laplacian] {
        for patched in [false, true] {
            check::<f32>(&device, case, patched);
            check::<f64>(&device, case, patched);
        }
    }
}
