//! criterion benchmarks of the native (CPU) integrator: element vectors of
//! P1/P2 Laplacian and Lamé in 2D and 3D, serial and rayon-parallel, on a
//! few thousand cells of a jittered, shuffled mesh (the cell count is the
//! throughput unit, so criterion reports cells per second).
//!
//! `cargo bench -p femquad --bench native` (add `-- --quick` for a short run).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use femquad::Real;
use femquad::aux_space::AuxSpace;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::mesh::generate::{MeshOptions, mesh_for_cells};
use femquad::native::{Execution, element_vectors};
use femquad::physics::PointwiseEvalBoth;
use femquad::physics::builtin::{Lame, Laplacian};
use femquad::quadrature::Quadrature;
use femquad::real::convert_slice;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;

/// Target cell count of every case.
const CELLS: usize = 4096;

/// Quadrature degree as in the benchmark program: one point for P1 (the
/// paper's setting), degree 2 for P2 (exact for the constant-coefficient
/// stiffness).
fn qdegree(order: usize) -> usize {
    if order == 1 { 1 } else { 2 }
}

struct Setup<R: Real> {
    disc: Discretization<R>,
    u: Vec<R>,
    constants: Vec<R>,
    out: Vec<R>,
}

fn setup<R: Real>(
    dim: usize,
    order: usize,
    physics: &dyn PointwiseEvalBoth,
    constants: &[f64],
) -> Setup<R> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 7,
    };
    let mesh = mesh_for_cells(dim, CELLS, &opts).expect("mesh");
    let mesh = Arc::new(mesh);
    let n_comp = physics.info().n_comp.resolve(dim);
    let space = FunctionSpace::new(
        mesh.clone(),
        Element::lagrange(dim, order).expect("element"),
        n_comp,
    )
    .expect("space");
    let quad = Quadrature::simplex(dim, qdegree(order)).expect("quadrature");
    let disc = Discretization::<R>::new(&space, quad, AuxSpace::None).expect("discretization");
    let n = disc.n_cells() * disc.n_bt();
    Setup {
        u: convert_slice(&Rng::new(1).vec(n, -1.0, 1.0)),
        out: vec![R::ZERO; n],
        constants: convert_slice(constants),
        disc,
    }
}

fn bench_native(c: &mut Criterion) {
    let mut group = c.benchmark_group("native_element_vectors");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    let cases: [(&str, &dyn PointwiseEvalBoth, &[f64]); 2] =
        [("laplacian", &Laplacian, &[]), ("lame", &Lame, &[1.0, 0.5])];
    for dim in [2, 3] {
        for order in [1, 2] {
            for (name, physics, constants) in cases {
                let mut s = setup::<f64>(dim, order, physics, constants);
                group.throughput(Throughput::Elements(s.disc.n_cells() as u64));
                for (exec, label) in [
                    (Execution::Serial, "serial"),
                    (Execution::Parallel, "parallel"),
                ] {
                    let id = BenchmarkId::new(format!("{dim}d_p{order}_{name}_f64"), label);
                    group.bench_function(id, |b| {
                        b.iter(|| {
                            let inputs = CellInputs {
                                u: &s.u,
                                aux: &[],
                                constants: &s.constants,
                                time: None,
                            };
                            element_vectors(&s.disc, physics, &inputs, &mut s.out, exec)
                                .expect("integrate");
                            black_box(&s.out);
                        })
                    });
                }
            }
        }
    }
    // One single-precision case for comparison.
    let mut s = setup::<f32>(3, 1, &Lame, &[1.0, 0.5]);
    group.throughput(Throughput::Elements(s.disc.n_cells() as u64));
    group.bench_function(BenchmarkId::new("3d_p1_lame_f32", "parallel"), |b| {
        b.iter(|| {
            let inputs = CellInputs {
                u: &s.u,
                aux: &[],
                constants: &s.constants,
                time: None,
            };
            element_vectors(&s.disc, &Lame, &inputs, &mut s.out, Execution::Parallel)
                .expect("integrate");
            black_box(&s.out);
        })
    });
    group.finish();
}

criterion_group!(benches, bench_native);
criterion_main!(benches);
