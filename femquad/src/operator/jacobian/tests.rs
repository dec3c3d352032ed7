//! The assembled Jacobian on the device (`Operator::assemble_matrix`,
//! `crate::opencl::matrix`) against the host assembly
//! (`Operator::assemble_jacobian`) and the matrix-free action, on PoCL.

use std::sync::Arc;

use crate::aux_space::AuxSpace;
use crate::backend::{Assembly, Backend, Matrix, Vector};
use crate::element::Element;
use crate::form::Form;
use crate::mesh::Mesh;
use crate::mesh::generate::{MeshOptions, unit_cube, unit_square};
use crate::operator::Operator;
use crate::physics::PointwiseEval;
use crate::physics::builtin::{Lame, Laplacian, LaplacianCoefficient, NonlinearDiffusion};
use crate::rng::Rng;
use crate::space::FunctionSpace;
use crate::sparse::CsrMatrix;
use crate::vector::VectorOps;
use crate::{Error, Real};

/// The tests' OpenCL backend.
fn device() -> Backend {
    let [_, device] = Backend::for_tests();
    device
}

/// A jittered, shuffled mesh: cells and nodes in no particular order.
fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 7,
    };
    match dim {
        2 => unit_square(n, &opts),
        _ => unit_cube(n, &opts),
    }
    .unwrap()
    .into()
}

/// A named case: the operator built on `backend`, and a state `u`.
struct Case<R: Real> {
    name: &'static str,
    op: Operator<R>,
    u: Vec<R>,
}

/// Laplacian P1/P2 in 2D/3D, Lamé P1 2D and 3D and P2 3D, nonlinear diffusion at
/// a non-zero state, a P0 and a nodal coefficient (aux).
fn cases<R: Real>(backend: &Backend) -> Vec<Case<R>>
where
    Laplacian: PointwiseEval<R>,
    Lame: PointwiseEval<R>,
    NonlinearDiffusion: PointwiseEval<R>,
    LaplacianCoefficient: PointwiseEval<R>,
{
    let mut rng = Rng::new(3);
    let mut out = Vec::new();
    let mut push = |name, space: FunctionSpace, form: Form<R>, aux: Option<Vec<R>>| {
        let mut op = Operator::new(form, backend).unwrap();
        if let Some(aux) = aux {
            op.set_aux(&aux).unwrap();
        }
        let u = (0..space.n_dofs())
            .map(|_| R::from_f64(rng.uniform() - 0.3))
            .collect();
        out.push(Case { name, op, u });
    };
    for (name, dim, n, p) in [
        ("laplacian P1 2D", 2, 4, 1),
        ("laplacian P2 2D", 2, 3, 2),
        ("laplacian P1 3D", 3, 2, 1),
        ("laplacian P2 3D", 3, 1, 2),
    ] {
        let space =
            FunctionSpace::new(mesh(dim, n), Element::lagrange(dim, p).unwrap(), 1).unwrap();
        push(
            name,
            space.clone(),
            Form::new(space, Laplacian).unwrap(),
            None,
        );
    }
    for (name, dim, n, p) in [
        ("lamé P1 2D", 2, 3, 1),
        ("lamé P1 3D", 3, 2, 1),
        ("lamé P2 3D", 3, 1, 2),
    ] {
        let space =
            FunctionSpace::new(mesh(dim, n), Element::lagrange(dim, p).unwrap(), dim).unwrap();
        let form = Form::new(space.clone(), Lame)
            .and_then(|f| f.with_constants(&[1.0, 2.5]))
            .unwrap();
        push(name, space, form, None);
    }
    let space = FunctionSpace::new(mesh(2, 3), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let form = Form::new(space.clone(), NonlinearDiffusion).unwrap();
    push("nonlinear diffusion P2 2D", space, form, None);
    let space = FunctionSpace::new(mesh(3, 2), Element::lagrange(3, 1).unwrap(), 1).unwrap();
    let form = Form::new(space.clone(), LaplacianCoefficient)
        .and_then(|f| f.with_aux(AuxSpace::Cell { n_comp: 1 }))
        .unwrap();
    let aux = (0..space.n_cells())
        .map(|c| R::from_f64(1.0 + (c % 5) as f64))
        .collect();
    push("P0 coefficient P1 3D", space, form, Some(aux));
    let space = FunctionSpace::new(mesh(2, 3), Element::lagrange(2, 2).unwrap(), 1).unwrap();
    let form = Form::new(space.clone(), LaplacianCoefficient)
        .and_then(|f| f.with_aux(AuxSpace::Field { n_comp: 1 }))
        .unwrap();
    let aux = (0..space.n_nodes())
        .map(|i| R::from_f64(1.0 + (i % 3) as f64))
        .collect();
    push("nodal coefficient P2 2D", space, form, Some(aux));
    out
}

/// `max |a − b| / max |b|`.
fn relative(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let diff = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    diff / scale.max(f64::MIN_POSITIVE)
}

fn to_f64<R: Real>(v: &[R]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// For every case and both assembly modes: the device matrix has the host
/// assembly's pattern and values (to `tol`), and its SpMV is the
/// matrix-free `J(u)·v` (to `tol`).
fn device_matrix_is_the_host_assembly<R: Real>(tol: f64)
where
    Laplacian: PointwiseEval<R>,
    Lame: PointwiseEval<R>,
    NonlinearDiffusion: PointwiseEval<R>,
    LaplacianCoefficient: PointwiseEval<R>,
{
    let backend = device();
    for mut case in cases::<R>(&backend) {
        let op = &mut case.op;
        let u = op.vector_from(&case.u).unwrap();
        let host = op.assemble_jacobian(&u).unwrap();
        let n = op.space().n_dofs();
        let v: Vec<R> = (0..n)
            .map(|i| R::from_f64((0.7 * i as f64).sin()))
            .collect();
        let v = op.vector_from(&v).unwrap();
        let mut jv = op.vector().unwrap();
        op.jacobian_action(&u, &v, &mut jv).unwrap();
        let jv = to_f64(&jv.to_host().unwrap());
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            op.set_assembly(assembly).unwrap();
            let matrix = op.assemble_matrix(&u).unwrap();
            assert!(matches!(matrix, Matrix::OpenCl(_)), "{}", case.name);
            let a = matrix.to_host().unwrap();
            assert!(
                Arc::ptr_eq(a.pattern(), host.pattern()),
                "{}: the pattern is the operator's",
                case.name
            );
            let err = relative(a.values(), host.values());
            assert!(
                err <= tol,
                "{} {assembly:?}: values differ by {err:e}",
                case.name
            );
            let mut av = op.vector().unwrap();
            matrix.apply(&v, &mut av).unwrap();
            let err = relative(&to_f64(&av.to_host().unwrap()), &jv);
            assert!(
                err <= tol,
                "{} {assembly:?}: A·v − J·v = {err:e}",
                case.name
            );
        }
        spmv_is_the_host_product(case.name, op, &u, &v, &host, tol);
    }
}

/// The device matrix's `A·v` (the SpMV with the team size it chose; every
/// team size is checked on matrices of very unequal rows in
/// `opencl::matrix::tests` and on Lamé in `tests/fused_chebyshev.rs`) is
/// the host CSR product of the same matrix (to `tol`), and two applies
/// give the same bits.
fn spmv_is_the_host_product<R: Real>(
    name: &str,
    op: &mut Operator<R>,
    u: &Vector<R>,
    v: &Vector<R>,
    host: &CsrMatrix,
    tol: f64,
) {
    let mut expected = vec![0.0; host.n_rows()];
    host.spmv(&to_f64(&v.to_host().unwrap()), &mut expected)
        .unwrap();
    let matrix = op.assemble_matrix(u).unwrap();
    let mut av = op.vector().unwrap();
    matrix.apply(v, &mut av).unwrap();
    let first = av.to_host().unwrap();
    let err = relative(&to_f64(&first), &expected);
    assert!(err <= tol, "{name}: A·v − host A·v = {err:e}");
    matrix.apply(v, &mut av).unwrap();
    let bits = |x: &[R]| x.iter().map(|r| r.to_f64().to_bits()).collect::<Vec<_>>();
    assert_eq!(
        bits(&first),
        bits(&av.to_host().unwrap()),
        "{name}: two applies differ"
    );
}

#[test]
fn device_assembly_is_the_host_assembly_f64() {
    device_matrix_is_the_host_assembly::<f64>(1e-12);
}

#[test]
fn device_assembly_is_the_host_assembly_f32() {
    device_matrix_is_the_host_assembly::<f32>(1e-5);
}

/// The deterministic assembly gives the same bits on every run (a fresh
/// matrix, and a refill after assembling at another state); the atomic one
/// agrees with it to rounding. The point-block diagonal of the matrix is
/// the operator's.
#[test]
fn deterministic_assembly_is_reproducible_and_refills_reuse_the_pattern() {
    let backend = device();
    let space = FunctionSpace::new(mesh(3, 2), Element::lagrange(3, 1).unwrap(), 3).unwrap();
    let form = Form::<f64>::new(space.clone(), Lame)
        .and_then(|f| f.with_constants(&[1.0, 2.5]))
        .unwrap();
    let mut op = Operator::new(form, &backend).unwrap();
    op.set_assembly(Assembly::Deterministic).unwrap();
    let u = op.vector().unwrap();
    let first = op.assemble_matrix(&u).unwrap();
    let bits = |m: &Matrix<f64>| -> Vec<u64> {
        m.to_host()
            .unwrap()
            .values()
            .iter()
            .map(|v| v.to_bits())
            .collect()
    };
    let mut second = op.assemble_matrix(&u).unwrap();
    assert_eq!(bits(&first), bits(&second));
    // a refill at another state, then back: the same bits again
    let other = op.vector_from(&vec![0.5; space.n_dofs()]).unwrap();
    op.reassemble_matrix(&other, &mut second).unwrap();
    op.reassemble_matrix(&u, &mut second).unwrap();
    assert_eq!(bits(&first), bits(&second));
    assert!(Arc::ptr_eq(first.pattern(), second.pattern()));

    let len = op.jacobian_diagonal_len();
    let mut diagonal = op.integrator().zeros(len).unwrap();
    first.point_block_diagonal(&mut diagonal).unwrap();
    let mut expected = diagonal.zeros_like().unwrap();
    op.jacobian_diagonal(&u, &mut expected).unwrap();
    let (d, e) = (diagonal.to_host().unwrap(), expected.to_host().unwrap());
    assert!(relative(&d, &e) <= 1e-12, "{:e}", relative(&d, &e));
}

/// A nonlinear physics: reassembling at a new state gives the matrix
/// assembled there, not the old one.
#[test]
fn a_refill_linearizes_at_the_new_state() {
    let backend = device();
    let space = FunctionSpace::new(mesh(2, 3), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let mut op = Operator::<f64>::new(
        Form::new(space.clone(), NonlinearDiffusion).unwrap(),
        &backend,
    )
    .unwrap();
    let zero = op.vector().unwrap();
    let mut m = op.assemble_matrix(&zero).unwrap();
    let u = op.vector_from(&vec![0.8; space.n_dofs()]).unwrap();
    op.reassemble_matrix(&u, &mut m).unwrap();
    let host = op.assemble_jacobian(&u).unwrap();
    let err = relative(m.to_host().unwrap().values(), host.values());
    assert!(err <= 1e-12, "{err:e}");
    // at u = 0.8, κ = 1.64 scales the Laplacian part: not the matrix at 0
    let at_zero = op.assemble_jacobian(&zero).unwrap();
    assert!(relative(m.to_host().unwrap().values(), at_zero.values()) > 0.1);
}

/// Wrong vectors, a matrix of another operator, a physics reading an aux
/// field never set: refused, naming the argument.
#[test]
fn bad_input_is_named() {
    let backend = device();
    let space = FunctionSpace::new(mesh(2, 2), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let mut op =
        Operator::<f64>::new(Form::new(space.clone(), Laplacian).unwrap(), &backend).unwrap();
    let u = op.vector().unwrap();
    let m = op.assemble_matrix(&u).unwrap();
    let name = |e: Error| match e {
        Error::InvalidArgument { name, reason } => (name, reason),
        other => panic!("expected an invalid argument, got {other}"),
    };
    let short = op.integrator().zeros(3).unwrap();
    let mut y = op.vector().unwrap();
    let (n, reason) = name(m.apply(&short, &mut y).unwrap_err());
    assert_eq!(n, "x", "{reason}");
    assert!(reason.contains("expected 9 entries"), "{reason}");
    let mut host_y = Vector::Host(vec![0.0; 9]);
    let (n, reason) = name(m.apply(&u, &mut host_y).unwrap_err());
    assert_eq!(n, "y");
    assert!(reason.contains("lives on the host"), "{reason}");

    // a matrix of another space
    let other_space = FunctionSpace::new(mesh(2, 3), Element::lagrange(2, 1).unwrap(), 1).unwrap();
    let mut other =
        Operator::<f64>::new(Form::new(other_space, Laplacian).unwrap(), &backend).unwrap();
    let mut m2 = other.assemble_matrix(&other.vector().unwrap()).unwrap();
    let (n, reason) = name(op.reassemble_matrix(&u, &mut m2).unwrap_err());
    assert_eq!(n, "matrix", "{reason}");

    // the aux field never set
    let form = Form::<f64>::new(space, LaplacianCoefficient)
        .and_then(|f| f.with_aux(AuxSpace::Cell { n_comp: 1 }))
        .unwrap();
    let mut op = Operator::new(form, &backend).unwrap();
    let Err(e) = op.assemble_matrix(&u) else {
        panic!("a matrix of a physics whose aux field was never set");
    };
    let (n, reason) = name(e);
    assert_eq!(n, "aux", "{reason}");
}

/// A hand-written physics (`f0 = u²`): no derivatives.
struct Squared;

static SQUARED: crate::physics::PointwiseInfo = crate::physics::PointwiseInfo {
    name: "squared",
    opencl_name: "squared",
    dims: &[2, 3],
    n_comp: crate::physics::Extent::Fixed(1),
    n_aux: crate::physics::Extent::Fixed(0),
    n_constants: 0,
    has_f0: true,
    has_f1: false,
    reads: crate::physics::Reads {
        u: true,
        grad_u: false,
        a: false,
        grad_a: false,
        x: false,
        constants: false,
        n: false,
        u_t: false,
        t: false,
    },
    flops: [1, 1],
    opencl_tangent_name: "",
    opencl_jacobian_name: "",
    opencl_jacobian_u_t_name: "",
    tangent_flops: [0, 0],
    jacobian_flops: [0, 0],
    linear: false,
};

const SQUARED_SOURCE: &str = "void squared(const real u[], const real grad_u[][DIM], \
    const real a[], const real grad_a[][DIM], const real x[], const real constants[], \
    const real n[], const real u_t[], const real t, \
    real f0[], real f1[][DIM]) { f0[0] = u[0] * u[0]; }\n";

impl crate::physics::Pointwise for Squared {
    fn info(&self) -> &'static crate::physics::PointwiseInfo {
        &SQUARED
    }
    fn opencl_source(&self) -> &'static str {
        SQUARED_SOURCE
    }
    fn source_hash(&self) -> u64 {
        const HASH: u64 = crate::physics::source_hash(SQUARED_SOURCE);
        HASH
    }
}

impl PointwiseEval<f64> for Squared {
    fn eval(
        &self,
        _: usize,
        a: &crate::physics::PointArgs<'_, f64>,
        f0: &mut [f64],
        _: &mut [f64],
    ) -> Result<(), crate::physics::PointwiseError> {
        f0[0] = a.u[0] * a.u[0];
        Ok(())
    }
}

/// A physics without derivatives has no assembled matrix, on either
/// backend: the error names the physics and says how to get derivatives.
#[test]
fn a_physics_without_derivatives_is_refused() {
    for backend in Backend::for_tests() {
        let space = FunctionSpace::new(mesh(2, 2), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let mut op = Operator::<f64>::new(Form::new(space, Squared).unwrap(), &backend).unwrap();
        let u = op.vector().unwrap();
        let Err(e) = op.assemble_matrix(&u) else {
            panic!(
                "{}: a matrix of a physics without derivatives",
                backend.describe()
            );
        };
        assert!(
            e.to_string()
                .contains("`squared` provides no derivatives: write it with #[pointwise]"),
            "{}: {e}",
            backend.describe()
        );
    }
}
