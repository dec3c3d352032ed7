//! criterion benchmarks of the setup path: structured mesh generation
//! (jittered and shuffled, ~10⁵–10⁶ cells), function spaces (P2 edge
//! numbering), cell geometry (`J⁻¹`, `det J`), gather `E u` and assembly
//! `Eᵀ e`, and the mesh operations: locality renumbering and uniform
//! refinement (throughput in cells per second).
//!
//! `cargo bench -p femquad --bench mesh` (add `-- --quick` for a short run).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use femquad::element::Element;
use femquad::geometry::Geometry;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_cube, unit_square};
use femquad::mesh::refine::refine;
use femquad::mesh::renumber::locality_renumbering;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;

/// 2·500² = 500 000 triangles.
const N_2D: usize = 500;
/// 6·44³ = 511 104 tetrahedra.
const N_3D: usize = 44;

fn shuffled() -> MeshOptions {
    MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 3,
    }
}

fn meshes() -> [(&'static str, Arc<Mesh>); 2] {
    [
        (
            "square",
            unit_square(N_2D, &shuffled()).expect("mesh").into(),
        ),
        ("cube", unit_cube(N_3D, &shuffled()).expect("mesh").into()),
    ]
}

fn bench_generate(c: &mut Criterion) {
    let mut group = c.benchmark_group("mesh_generate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for (opts, label) in [
        (MeshOptions::default(), "plain"),
        (shuffled(), "jitter_shuffle"),
    ] {
        group.throughput(Throughput::Elements((2 * N_2D * N_2D) as u64));
        group.bench_function(BenchmarkId::new("unit_square_500", label), |b| {
            b.iter(|| black_box(unit_square(N_2D, &opts).expect("mesh")))
        });
        group.throughput(Throughput::Elements((6 * N_3D * N_3D * N_3D) as u64));
        group.bench_function(BenchmarkId::new("unit_cube_44", label), |b| {
            b.iter(|| black_box(unit_cube(N_3D, &opts).expect("mesh")))
        });
    }
    group.finish();
}

fn bench_setup(c: &mut Criterion) {
    let mut group = c.benchmark_group("setup");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for (name, mesh) in meshes() {
        let dim = mesh.dim();
        group.throughput(Throughput::Elements(mesh.n_cells() as u64));
        group.bench_function(BenchmarkId::new("geometry_f64", name), |b| {
            b.iter(|| black_box(Geometry::<f64>::new(&mesh).expect("geometry")))
        });
        group.bench_function(BenchmarkId::new("geometry_f32", name), |b| {
            b.iter(|| black_box(Geometry::<f32>::new(&mesh).expect("geometry")))
        });
        for order in [1, 2] {
            let element = Element::lagrange(dim, order).expect("element");
            group.bench_function(BenchmarkId::new(format!("space_p{order}"), name), |b| {
                b.iter(|| black_box(FunctionSpace::new(mesh.clone(), element, 1).expect("space")))
            });
            for n_comp in [1, dim] {
                let space = FunctionSpace::new(mesh.clone(), element, n_comp).expect("space");
                let global = Rng::new(5).vec(space.n_dofs(), -1.0, 1.0);
                let mut local = vec![0.0; space.n_cell_dofs()];
                let id = format!("p{order}_ncomp{n_comp}");
                group.bench_function(BenchmarkId::new(format!("gather_{id}"), name), |b| {
                    b.iter(|| {
                        space.gather(&global, &mut local).expect("gather");
                        black_box(&local);
                    })
                });
                let mut assembled = vec![0.0; space.n_dofs()];
                // First call builds the node→cell incidence used by parallel assembly.
                space.assemble(&local, &mut assembled).expect("assemble");
                group.bench_function(BenchmarkId::new(format!("assemble_{id}"), name), |b| {
                    b.iter(|| {
                        space.assemble(&local, &mut assembled).expect("assemble");
                        black_box(&assembled);
                    })
                });
            }
        }
    }
    group.finish();
}

fn bench_mesh_ops(c: &mut Criterion) {
    let mut group = c.benchmark_group("mesh_ops");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500));
    for (name, mesh) in meshes() {
        group.throughput(Throughput::Elements(mesh.n_cells() as u64));
        group.bench_function(BenchmarkId::new("locality_renumbering", name), |b| {
            b.iter(|| black_box(locality_renumbering(&mesh).expect("renumbering")))
        });
        let renumbering = locality_renumbering(&mesh).expect("renumbering");
        group.bench_function(BenchmarkId::new("renumbering_apply", name), |b| {
            b.iter(|| black_box(renumbering.apply(&mesh).expect("apply")))
        });
        // refinement of the renumbered mesh (as a hierarchy would use it)
        let local = renumbering.apply(&mesh).expect("apply");
        group.bench_function(BenchmarkId::new("refine", name), |b| {
            b.iter(|| black_box(refine(&local).expect("refine")))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_generate, bench_setup, bench_mesh_ops);
criterion_main!(benches);
