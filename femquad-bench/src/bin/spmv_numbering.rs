//! What the vertex numbering of a refined mesh costs femquad's CSR SpMV:
//! the assembled P1 Laplacian of the multigrid solve's finest mesh (the
//! unit square or cube of `n0` intervals refined `L` times, as
//! `solve_bench` builds it), applied with the vertices
//!
//! * `nested` — in the refinement's order (the coarse vertices first, then
//!   the edge midpoints level by level: what a [`MeshHierarchy`] gives;
//!   since issue #22 each level's midpoints by first touch of the coarse
//!   cells' edges, before it in the sorted edge order, which the session-12
//!   results in `benchmarks/h100-2026-11-27-s12b` measured as `nested`),
//! * `nested-touch` — nested still (each level's vertices first in the next),
//!   but each refinement's new vertices (the edge midpoints) numbered by
//!   first touch in the fine cell order (the children's vertices, where the
//!   refinement takes each coarse cell's edges in local edge order),
//! * `first-touch` — renumbered by first touch in the (unchanged) cell
//!   order, whose children of a coarse cell are contiguous,
//! * `hilbert` — [`Mesh::renumbered_for_locality`] (cells in Hilbert order,
//!   then vertices by first touch): the benchmark meshes' numbering.
//!
//! ```sh
//! cargo run --release -p femquad-bench --bin spmv_numbering -- [--reps 30]
//! ```
//!
//! Each SpMV is timed with the team size femquad picks and then with every
//! team size of the kernel (`DeviceCsr::set_lanes`), on the host clock over
//! batches of 20 calls ended by a finish (median of `--reps` batches, one
//! untimed batch first); the products are checked to be the same vector up
//! to the permutation.

use std::sync::Arc;

use femquad::backend::Matrix;
use femquad::mesh::Renumbering;
use femquad::opencl::matrix::lanes::SPMV_LANES;
use femquad::opencl::{Device, KernelOptions};
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;
use femquad_bench::bandwidth::measure_copy;
use femquad_bench::host_timing::host_timed;

/// `old[v']`: the vertex of `a` at the coordinates of vertex `v'` of `b`
/// (the same point set, exactly: both are midpoints of the same edges).
fn same_vertices(a: &Mesh, b: &Mesh) -> Result<Vec<u32>> {
    let key = |x: &[f64]| x.iter().map(|c| c.to_bits()).collect::<Vec<u64>>();
    let index: std::collections::HashMap<Vec<u64>, u32> = (0..a.n_vertices())
        .map(|v| (key(a.vertex(v)), v as u32))
        .collect();
    (0..b.n_vertices())
        .map(|v| {
            index.get(&key(b.vertex(v))).copied().ok_or_else(|| {
                femquad::Error::internal(format!(
                    "vertex {v} of the renumbered mesh is not in the nested one"
                ))
            })
        })
        .collect()
}

/// What [`spmv_time`] measured.
struct Timed {
    /// Median ms of one SpMV with the team size femquad picks.
    ms: f64,
    /// Stored entries of the matrix.
    nnz: usize,
    /// The product, indexed by the nested mesh's vertices.
    y: Vec<f64>,
    /// Median ms with each team size `(lanes, ms)`.
    by_lanes: Vec<(usize, f64)>,
}

/// Median ms of one SpMV of the assembled Laplacian on `mesh`, and the
/// product `A u` of `u_i = f(old vertex i)`.
fn spmv_time<R: Real>(backend: &Backend, mesh: Mesh, old: &[u32], reps: usize) -> Result<Timed>
where
    Laplacian: PointwiseEval<R>,
{
    let dim = mesh.dim();
    let space = FunctionSpace::new(Arc::new(mesh), Element::lagrange(dim, 1)?, 1)?;
    let mut op = Operator::<R>::new(Form::new(space, Laplacian)?, backend)?;
    let values: Vec<R> = old
        .iter()
        .map(|&i| R::from_f64(0.5 + (i as f64 * 0.37).sin()))
        .collect();
    let u = op.vector_from(&values)?;
    let mut matrix = op.assemble_matrix(&u)?;
    let mut y: Vector<R> = op.vector()?;
    let time = |matrix: &Matrix<R>, y: &mut Vector<R>| -> Result<f64> {
        host_timed(reps, y, |y| matrix.apply(&u, y))
    };
    let t = time(&matrix, &mut y)?;
    // the same SpMV with every team size of the kernel
    let mut by_lanes = Vec::new();
    for lanes in SPMV_LANES {
        let Matrix::OpenCl(csr) = &mut matrix else {
            break;
        };
        csr.set_lanes(lanes)?;
        by_lanes.push((lanes, time(&matrix, &mut y)?));
    }
    matrix.apply(&u, &mut y)?;
    let host = y.to_host()?;
    let mut by_old = vec![0.0; host.len()];
    for (new, &o) in old.iter().enumerate() {
        by_old[o as usize] = host[new].to_f64();
    }
    Ok(Timed {
        ms: t,
        nnz: matrix.pattern().nnz(),
        y: by_old,
        by_lanes,
    })
}

/// The hierarchy's finest mesh with each refinement's midpoints renumbered
/// by first touch in the fine cell order (the coarse vertices kept first).
fn nested_touch(coarse: &Mesh, levels: usize) -> Result<Mesh> {
    let mut mesh = femquad::mesh::refine::prepare_for_refinement(coarse)?;
    for _ in 0..levels {
        let n_c = mesh.n_vertices();
        let fine = femquad::mesh::refine::refine(&mesh)?.into_mesh();
        let mut new_of_old: Vec<u32> = (0..fine.n_vertices() as u32).collect();
        let mut next = n_c as u32;
        let mut seen = vec![false; fine.n_vertices()];
        for &v in fine.cells() {
            let v = v as usize;
            if v >= n_c && !seen[v] {
                seen[v] = true;
                new_of_old[v] = next;
                next += 1;
            }
        }
        let cells = (0..fine.n_cells() as u32).collect();
        mesh = Renumbering::from_permutations(new_of_old, cells)?.apply(&fine)?;
    }
    Ok(mesh)
}

fn run<R: Real>(backend: &Backend, dim: usize, n0: usize, levels: usize, reps: usize) -> Result<()>
where
    Laplacian: PointwiseEval<R>,
{
    let coarse = unit_box(dim, n0, &MeshOptions::default())?;
    let nested = MeshHierarchy::new(&coarse, levels)?
        .finest()
        .as_ref()
        .clone();
    let n = nested.n_vertices();
    let identity: Vec<u32> = (0..n as u32).collect();
    let local = nested_touch(&coarse, levels)?;
    // the same mesh: local vertex v' is nested vertex old[v'] (equal coordinates)
    let local_old = same_vertices(&nested, &local)?;
    // vertices by first touch in the refinement's cell order
    let touch = Renumbering::from_cell_order(&nested, (0..nested.n_cells() as u32).collect())?;
    let touched = touch.apply(&nested)?;
    let touched_old = touch.vertex_old_of_new().to_vec();
    let (hilbert, r) = nested.renumbered_for_locality()?;
    let hilbert_old = r.vertex_old_of_new().to_vec();
    let cells = nested.n_cells();
    let label = format!("{dim}D {}", R::PRECISION.name());
    let mut reference: Option<Vec<f64>> = None;
    for (name, mesh, old) in [
        ("nested", nested, &identity),
        ("nested-touch", local, &local_old),
        ("first-touch", touched, &touched_old),
        ("hilbert", hilbert, &hilbert_old),
    ] {
        let Timed {
            ms: t,
            nnz,
            y,
            by_lanes,
        } = spmv_time::<R>(backend, mesh, old, reps)?;
        let diff = reference.as_ref().map_or(0.0, |r| {
            let scale = r.iter().fold(0f64, |m, v| m.max(v.abs()));
            r.iter()
                .zip(&y)
                .fold(0f64, |m, (a, b)| m.max((a - b).abs()))
                / scale
        });
        reference.get_or_insert(y);
        let bytes = nnz * (R::PRECISION.size() + 4) + (n + 1) * 4 + 2 * n * R::PRECISION.size();
        println!(
            "spmv_numbering {label} {name}: {cells} cells, {n} dofs, {nnz} nonzeros: {t:.3} ms, \
             {:.0} GB/s (minimal bytes), |y - y_nested|/|y| {diff:.1e}",
            bytes as f64 / t * 1e-6
        );
        let sweep: Vec<String> = by_lanes
            .iter()
            .map(|(l, t)| format!("{l}: {t:.3}"))
            .collect();
        println!(
            "spmv_numbering {label} {name} lanes (ms): {}",
            sweep.join(", ")
        );
    }
    Ok(())
}

fn main() -> Result<()> {
    let mut reps = 30usize;
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 3 && args[1] == "--reps" {
        reps = femquad::mesh::size::parse_count(&args[2])?.max(1);
    } else if args.len() != 1 {
        return Err(femquad::Error::arg(
            "args",
            "usage: spmv_numbering [--reps N]",
        ));
    }
    let device = Device::from_env()?;
    let copy = measure_copy(&device, 1 << 30, 3, 20)?;
    println!(
        "# spmv_numbering on {}, copy bandwidth {:.1} GB/s (float4 copy, same process)",
        device.info().name,
        copy.gb_per_s()
    );
    let backend = Backend::opencl_with(device.clone(), KernelOptions::from_env()?);
    // solve_bench's 2^24-cell meshes: 2·(45·2^6)² triangles, 6·(9·2^4)³ tetrahedra
    run::<f32>(&backend, 2, 45, 6, reps)?;
    run::<f64>(&backend, 2, 45, 6, reps)?;
    run::<f32>(&backend, 3, 9, 4, reps)?;
    run::<f64>(&backend, 3, 9, 4, reps)?;
    Ok(())
}
