//! Shared by the tests of the multigrid's level kernels on assembled
//! operators (fused_chebyshev, coarse_dense): the P1 Jacobians of Poisson
//! and Lamé in 2D and 3D.

use femquad::Real;
use femquad::backend::{Backend, Matrix};
use femquad::element::Element;
use femquad::form::Form;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::operator::Operator;
use femquad::physics::builtin::{Lame, LameParameters, Poisson};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::quadrature::Quadrature;
use femquad::space::FunctionSpace;

/// The P1 Jacobian in `dim` = 2 or 3 dimensions of Poisson (`lame`
/// false) or Lamé (`N_comp = dim`) at 0 assembled on `backend`, a 17 × 17
/// or 5 × 5 × 5 jittered, shuffled mesh; with its operator (for vectors)
/// and the boundary dofs.
pub fn assembled<R: EvalPrecision>(
    dim: usize,
    lame: bool,
    backend: &Backend,
) -> (Operator<R>, Matrix<R>, Vec<u32>) {
    let mesh = unit_box(
        dim,
        if dim == 2 { 17 } else { 5 },
        &MeshOptions {
            jitter: 0.1,
            shuffle: true,
            seed: 9,
        },
    )
    .unwrap();
    let element = Element::lagrange(dim, 1).unwrap();
    let (physics, constants, nc): (&'static dyn PointwiseEvalBoth, Vec<f64>, usize) = if lame {
        let p = LameParameters::from_young_poisson(1.0, 0.3).unwrap();
        (&Lame, p.constants().to_vec(), dim)
    } else {
        (&Poisson, vec![1.0], 1)
    };
    let space = FunctionSpace::new(mesh.into(), element, nc).unwrap();
    let form = Form::new(space, R::physics(physics))
        .and_then(|f| f.with_quadrature(Quadrature::default_for(&element).unwrap()))
        .and_then(|f| f.with_constants(&constants))
        .unwrap();
    let mut op = Operator::new(form, backend).unwrap();
    let fixed = op.space().boundary_dofs().unwrap();
    let zero = op.vector().unwrap();
    let matrix = op.assemble_matrix(&zero).unwrap();
    (op, matrix, fixed)
}

/// `max |a − b| / max |b|`, in `f64`.
pub fn relative_difference<A: Real, B: Real>(a: &[A], b: &[B]) -> f64 {
    let diff = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.to_f64() - y.to_f64()).abs())
        .fold(0.0, f64::max);
    let scale = b.iter().map(|y| y.to_f64().abs()).fold(0.0, f64::max);
    diff / scale
}
