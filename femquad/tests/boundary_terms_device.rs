//! Boundary terms on the device (`kernels/facet_integrate.cl`, PoCL in
//! CI): `F(u)`, `J(u)·v` and the point-block diagonal of a form with a
//! nonlinear boundary term equal the native reference (f64 ≤ 1e-12,
//! f32 ≤ 1e-5, relative to the largest entry) in both assembly modes, and
//! the deterministic assembly is bitwise reproducible.

use std::sync::Arc;

use femquad::facet::{BoundaryTerm, FacetSet};
use femquad::opencl::Assembly;
use femquad::opencl::testing;
use femquad::physics::builtin::Laplacian;
use femquad::prelude::*;

/// `f0 = c₀ u³ + u (∇u·n) + sin(x₀) u − c₁`: reads `u`, `grad_u`, `x`, `n`
/// and constants.
#[pointwise]
fn nonlinear_boundary<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    n: &[f64; D],
    constants: &[f64; 2],
    f0: &mut [f64; 1],
) {
    let mut dn = 0.0;
    for d in 0..D {
        dn += grad_u[0][d] * n[d];
    }
    f0[0] = constants[0] * u[0] * u[0] * u[0] + u[0] * dn + x[0].sin() * u[0] - constants[1];
}

/// `f0 = (α u − g) e₀ + u₁ n`: a vector-valued (2- or 3-component) term,
/// `constants = [α, g]`.
#[pointwise]
fn vector_robin<const D: usize>(
    u: &[f64; D],
    n: &[f64; D],
    constants: &[f64; 2],
    f0: &mut [f64; D],
) {
    for d in 0..D {
        f0[d] = u[1] * n[d];
    }
    f0[0] += constants[0] * u[0] - constants[1];
}

fn mesh(dim: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 3,
    };
    Arc::new(unit_box(dim, if dim == 2 { 4 } else { 2 }, &opts).unwrap())
}

/// `f1 = 2 ∇u`, component-wise: the cell term of the vector case.
#[pointwise]
fn vector_cell<const D: usize>(grad_u: &[[f64; D]; D], f1: &mut [[f64; D]; D]) {
    for c in 0..D {
        for d in 0..D {
            f1[c][d] = 2.0 * grad_u[c][d];
        }
    }
}

/// The form on `backend`: scalar with `NonlinearBoundary` on the sides
/// `x₀ = 0` and `x₁ = 1`, or vector with `VectorRobin` there.
fn operator<R: Real + femquad::physics::EvalPrecision>(
    dim: usize,
    order: usize,
    vector: bool,
    backend: &Backend,
) -> Operator<R>
where
    NonlinearBoundary: PointwiseEval<R>,
    VectorRobin: PointwiseEval<R>,
    VectorCell: PointwiseEval<R>,
    Laplacian: PointwiseEval<R>,
{
    let m = mesh(dim);
    let set = FacetSet::boundary_where(&m, |x| x[0] < 1e-12 || x[1] > 1.0 - 1e-12).unwrap();
    let element = Element::lagrange(dim, order).unwrap();
    let form = if vector {
        let space = FunctionSpace::new(m.clone(), element, dim).unwrap();
        let term = BoundaryTerm::new(set, VectorRobin)
            .unwrap()
            .with_constants(&[2.0, 0.5])
            .unwrap();
        Form::new(space, VectorCell)
            .unwrap()
            .with_boundary(term)
            .unwrap()
    } else {
        let space = FunctionSpace::new(m.clone(), element, 1).unwrap();
        let term = BoundaryTerm::new(set, NonlinearBoundary)
            .unwrap()
            .with_constants(&[0.7, 0.2])
            .unwrap();
        Form::new(space, Laplacian)
            .unwrap()
            .with_boundary(term)
            .unwrap()
    };
    Operator::new(form, backend).unwrap()
}

fn values<R: Real>(n: usize, phase: f64) -> Vec<R> {
    (0..n)
        .map(|i| R::from_f64(0.5 + 0.4 * (1.3 * i as f64 + phase).sin()))
        .collect()
}

/// `F(u)`, `J(u)·v` and the diagonal of `op`, on the host.
fn evaluate<R: Real>(op: &mut Operator<R>) -> [Vec<R>; 3] {
    let n = op.space().n_dofs();
    let u = op.vector_from(&values::<R>(n, 0.0)).unwrap();
    let v = op.vector_from(&values::<R>(n, 2.0)).unwrap();
    let mut r = op.vector().unwrap();
    op.apply(&u, &mut r).unwrap();
    let mut jv = op.vector().unwrap();
    op.jacobian_action(&u, &v, &mut jv).unwrap();
    let len = op.jacobian_diagonal_len();
    let mut d = match op.integrator().opencl() {
        None => Vector::host_zeros(len),
        Some(bound) => Vector::device_zeros(&bound.device().clone(), len).unwrap(),
    };
    op.jacobian_diagonal(&u, &mut d).unwrap();
    [
        r.to_host().unwrap(),
        jv.to_host().unwrap(),
        d.to_host().unwrap(),
    ]
}

/// The cases `(dim, order, vector)` compared with the native reference.
const CASES_F64: [(usize, usize, bool); 4] =
    [(2, 1, false), (2, 2, false), (3, 2, false), (3, 1, true)];
const CASES_F32: [(usize, usize, bool); 2] = [(2, 2, false), (2, 1, true)];

fn compare<R: Real + femquad::physics::EvalPrecision>(cases: &[(usize, usize, bool)], tol: f64)
where
    NonlinearBoundary: PointwiseEval<R>,
    VectorRobin: PointwiseEval<R>,
    VectorCell: PointwiseEval<R>,
    Laplacian: PointwiseEval<R>,
{
    let device = Backend::opencl_with(testing::device(), testing::options());
    for &(dim, order, vector) in cases {
        let reference = evaluate(&mut operator::<R>(dim, order, vector, &Backend::native()));
        let mut gpu = operator::<R>(dim, order, vector, &device);
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            gpu.set_assembly(assembly).unwrap();
            let got = evaluate(&mut gpu);
            for (what, (a, b)) in ["F(u)", "J(u)·v", "diag J(u)"]
                .iter()
                .zip(reference.iter().zip(&got))
            {
                let scale = a
                    .iter()
                    .fold(0.0f64, |m, x| m.max(x.to_f64().abs()))
                    .max(1e-300);
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let diff = (x.to_f64() - y.to_f64()).abs() / scale;
                    assert!(
                        diff <= tol,
                        "{dim}D P{order} vector {vector} {assembly:?} {what}[{i}]: native {x} device {y} \
                         (relative {diff:e})"
                    );
                }
            }
        }
    }
}

#[test]
fn device_boundary_terms_equal_the_native_reference_in_f64() {
    compare::<f64>(&CASES_F64, 1e-12);
}

#[test]
fn device_boundary_terms_equal_the_native_reference_in_f32() {
    compare::<f32>(&CASES_F32, 1e-5);
}

#[test]
fn deterministic_boundary_assembly_is_bitwise_reproducible() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for (dim, order) in [(2, 2), (3, 1)] {
        let mut gpu = operator::<f64>(dim, order, false, &device);
        gpu.set_assembly(Assembly::Deterministic).unwrap();
        let first = evaluate(&mut gpu);
        for _ in 0..3 {
            let again = evaluate(&mut gpu);
            for k in 0..2 {
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(
                    bits(&first[k]),
                    bits(&again[k]),
                    "{dim}D P{order} output {k}"
                );
            }
        }
    }
}

/// The device's assembled matrix does not include boundary terms: it is
/// refused with what to do instead, and the host CSR includes them.
#[test]
fn the_device_assembled_matrix_refuses_boundary_terms() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    let mut gpu = operator::<f64>(2, 1, false, &device);
    let u = gpu
        .vector_from(&values::<f64>(gpu.space().n_dofs(), 0.0))
        .unwrap();
    let e = gpu.assemble_matrix(&u).unwrap_err().to_string();
    assert!(
        e.contains("it has boundary terms, which the device's assembled matrix does not include"),
        "{e}"
    );
    assert!(e.contains("Operator::assemble_jacobian"), "{e}");
    let host = gpu.assemble_jacobian(&u).unwrap();
    let mut native = operator::<f64>(2, 1, false, &Backend::native());
    let u_native = native.vector_from(&u.to_host().unwrap()).unwrap();
    let reference = native.assemble_jacobian(&u_native).unwrap();
    assert_eq!(host.values(), reference.values());
}
