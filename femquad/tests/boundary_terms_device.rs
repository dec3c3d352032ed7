//! Boundary terms on the device (`kernels/facet_integrate.cl`, PoCL in
//! CI): `F(u)`, `J(u)·v` and the point-block diagonal of a form with a
//! nonlinear boundary term equal the native reference (f64 ≤ 1e-12,
//! f32 ≤ 1e-5, relative to the largest entry) in both assembly modes, and
//! the deterministic assembly is bitwise reproducible. The device's
//! assembled matrix includes the boundary terms (≡ the host CSR), and
//! multigrid with assembled levels keeps the matrix-free iteration counts
//! on a Robin problem.

use std::sync::Arc;

use femquad::facet::{BoundaryTerm, FacetSet};
use femquad::linalg::FixedDofs;
use femquad::multigrid::{MultigridOptions, OperatorLevels};
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

/// `f0 = −(1 + x₀ x₁)`: a Neumann flux `∂u/∂n = g` (no `u`: its Jacobian
/// is 0).
#[pointwise]
fn neumann<const D: usize>(x: &[f64; D], f0: &mut [f64; 1]) {
    f0[0] = -(1.0 + x[0] * x[1]);
}

/// `f0 = α u − g`, `constants = [α, g]`: the Robin condition
/// `∂u/∂n + α u = g`.
#[pointwise]
fn robin(u: &[f64; 1], constants: &[f64; 2], f0: &mut [f64; 1]) {
    f0[0] = constants[0] * u[0] - constants[1];
}

/// The boundary terms of the assembled-matrix cases.
#[derive(Clone, Copy, Debug)]
enum Term {
    Neumann,
    Robin,
    /// `NonlinearBoundary` (reads `∇u`: its matrix has `∇φ_b` columns).
    Nonlinear,
    /// `VectorRobin` (couples the components).
    VectorRobin,
}

/// The Laplacian (or `VectorCell`) with `term` on the sides `x₀ = 0` and
/// `x₁ = 1` of [`mesh`], on the device.
fn term_operator(dim: usize, order: usize, term: Term, backend: &Backend) -> Operator<f64> {
    let (robin, neumann) = match term {
        Term::Nonlinear => return operator::<f64>(dim, order, false, backend),
        Term::VectorRobin => return operator::<f64>(dim, order, true, backend),
        Term::Robin => (true, false),
        Term::Neumann => (false, true),
    };
    let m = mesh(dim);
    let set = FacetSet::boundary_where(&m, |x| x[0] < 1e-12 || x[1] > 1.0 - 1e-12).unwrap();
    let space = FunctionSpace::new(m, Element::lagrange(dim, order).unwrap(), 1).unwrap();
    let mut form = Form::new(space, Laplacian).unwrap();
    if robin {
        let term = BoundaryTerm::new(set.clone(), Robin).unwrap();
        form = form
            .with_boundary(term.with_constants(&[2.0, 0.5]).unwrap())
            .unwrap();
    }
    if neumann {
        form = form
            .with_boundary(BoundaryTerm::new(set, Neumann).unwrap())
            .unwrap();
    }
    Operator::new(form, backend).unwrap()
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

/// The device's assembled matrix (`Operator::assemble_matrix`,
/// `kernels/facet_integrate.cl`'s `facet_matrices` after the cells'
/// element matrices) includes the boundary terms: in both assembly modes it
/// is the host CSR (`Operator::assemble_jacobian`, facet matrices from the
/// pointwise Jacobians) on the same pattern to 1e-12 relative, and its SpMV
/// is the matrix-free `J(u)·v` to 1e-12 — Neumann (no Jacobian), Robin,
/// a nonlinear term reading `∇u`, a vector Robin term; 2D and 3D, P1 and
/// P2.
#[test]
fn the_device_assembled_matrix_includes_boundary_terms() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for (dim, order, term) in [
        (2, 1, Term::Neumann),
        (3, 2, Term::Neumann),
        (2, 1, Term::Robin),
        (2, 2, Term::Robin),
        (3, 1, Term::Robin),
        (3, 2, Term::Robin),
        (2, 2, Term::Nonlinear),
        (3, 1, Term::Nonlinear),
        (2, 2, Term::VectorRobin),
        (3, 1, Term::VectorRobin),
    ] {
        let mut op = term_operator(dim, order, term, &device);
        let n = op.space().n_dofs();
        let u = op.vector_from(&values::<f64>(n, 0.0)).unwrap();
        let v = op.vector_from(&values::<f64>(n, 2.0)).unwrap();
        let host = op.assemble_jacobian(&u).unwrap();
        let mut jv = op.vector().unwrap();
        op.jacobian_action(&u, &v, &mut jv).unwrap();
        let jv = jv.to_host().unwrap();
        for assembly in [Assembly::Atomic, Assembly::Deterministic] {
            op.set_assembly(assembly).unwrap();
            let matrix = op.assemble_matrix(&u).unwrap();
            let a = matrix.to_host().unwrap();
            assert!(Arc::ptr_eq(a.pattern(), host.pattern()));
            let err = relative(a.values(), host.values());
            assert!(
                err <= 1e-12,
                "{dim}D P{order} {term:?} {assembly:?}: device CSR − host CSR = {err:e}"
            );
            let mut av = op.vector().unwrap();
            matrix.apply(&v, &mut av).unwrap();
            let err = relative(&av.to_host().unwrap(), &jv);
            assert!(
                err <= 1e-12,
                "{dim}D P{order} {term:?} {assembly:?}: A·v − J(u)·v = {err:e}"
            );
        }
    }
}

/// The deterministic assembly of a matrix with boundary terms gives the
/// same bits every time: a second matrix, a refill after assembling at
/// another state, and a fresh operator (its buffers, maps and incidence
/// made anew).
#[test]
fn deterministic_matrix_assembly_with_boundary_terms_is_bitwise_reproducible() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    let bits = |m: &femquad::backend::Matrix<f64>| -> Vec<u64> {
        let a = m.to_host().unwrap();
        a.values().iter().map(|x| x.to_bits()).collect()
    };
    for (dim, order, term) in [(2, 2, Term::Nonlinear), (3, 1, Term::VectorRobin)] {
        let assembled = |op: &mut Operator<f64>| {
            op.set_assembly(Assembly::Deterministic).unwrap();
            let n = op.space().n_dofs();
            let u = op.vector_from(&values::<f64>(n, 0.0)).unwrap();
            (op.assemble_matrix(&u).unwrap(), u)
        };
        let mut op = term_operator(dim, order, term, &device);
        let (first, u) = assembled(&mut op);
        let same = |a: &femquad::backend::Matrix<f64>, what: &str| {
            assert!(bits(&first) == bits(a), "{dim}D P{order} {term:?}: {what}");
        };
        let (mut second, _) = assembled(&mut op);
        same(&second, "a second matrix");
        let other = op
            .vector_from(&values::<f64>(op.space().n_dofs(), 1.0))
            .unwrap();
        op.reassemble_matrix(&other, &mut second).unwrap();
        op.reassemble_matrix(&u, &mut second).unwrap();
        same(&second, "a refill at another state and back");
        let (fresh, _) = assembled(&mut term_operator(dim, order, term, &device));
        same(&fresh, "a fresh operator");
    }
}

/// `−Δu = 1` with the Robin condition `∂u/∂n + 2u = 0.5` on the whole
/// boundary (no Dirichlet dofs: a level whose Jacobian lacked the Robin
/// term would be the singular Neumann Laplacian), P`order` on the
/// `refinements`-fold refinement of [`unit_box`]`(dim, 2)`, on the device.
fn robin_operator(
    dim: usize,
    order: usize,
    refinements: usize,
    device: &Backend,
) -> (MeshHierarchy, Operator<f64>) {
    let coarse = unit_box(dim, 2, &MeshOptions::default()).unwrap();
    let h = MeshHierarchy::new(&coarse, refinements).unwrap();
    let mesh = h.finest().clone();
    let set = FacetSet::boundary(&mesh).unwrap();
    let space = FunctionSpace::new(mesh, Element::lagrange(dim, order).unwrap(), 1).unwrap();
    let term = BoundaryTerm::new(set, Robin)
        .unwrap()
        .with_constants(&[2.0, 0.5])
        .unwrap();
    let form = Form::new(space, femquad::physics::builtin::Poisson)
        .unwrap()
        .with_constants(&[1.0])
        .unwrap()
        .with_boundary(term)
        .unwrap();
    (h, Operator::new(form, device).unwrap())
}

/// Multigrid with assembled levels (`MultigridOptions::assembled_max_dofs`:
/// every smoothed level's Jacobian assembled on the device, its boundary
/// terms included) on the Robin problem of [`robin_operator`]: one V-cycle
/// equals the matrix-free one to 1e-10 (every level has its facets, the
/// coarse ones those of its own mesh), and CG needs the matrix-free
/// iterations ± 1, at most 12 (a hierarchy whose coarse levels lost the
/// Robin term needs about 20), and finds the same solution — 2D P1 and
/// P2, 3D P1.
#[test]
fn multigrid_with_assembled_levels_on_a_robin_problem_keeps_the_iteration_counts() {
    let backend = Backend::opencl_with(testing::device(), testing::options());
    for (dim, order, refinements) in [(2, 1, 3), (2, 2, 2), (3, 1, 2)] {
        let mut cycles = Vec::new();
        let mut solves = Vec::new();
        for assembled_max_dofs in [0, usize::MAX] {
            let options = MultigridOptions {
                assembled_max_dofs,
                ..MultigridOptions::default()
            };
            let (h, mut op) = robin_operator(dim, order, refinements, &backend);
            let n = op.space().n_dofs();
            let none = FixedDofs::new(n, &[]).unwrap();
            let mut levels = OperatorLevels::new(&h, &op, &backend, &none, options).unwrap();
            let u = op.vector().unwrap();
            levels.setup(&mut op, &u).unwrap();
            let n_levels = levels.spaces().n_levels();
            let expected: Vec<usize> = if assembled_max_dofs == 0 {
                Vec::new()
            } else {
                (1..n_levels).collect()
            };
            assert_eq!(levels.assembled_levels(), expected, "{dim}D P{order}");
            let b = op.vector_from(&values::<f64>(n, 3.0)).unwrap();
            let mut x = op.vector().unwrap();
            levels.apply(&mut op, &u, &b, &mut x).unwrap();
            cycles.push(x.to_host().unwrap());

            let mut p = DirichletProblem::new(op, &[], &vec![0.0; n])
                .unwrap()
                .with_hierarchy(h)
                .unwrap();
            p.set_preconditioner(Preconditioner::Multigrid(options));
            let (u, stats) = p.solve_linear(1e-8, 500).unwrap();
            solves.push((stats.iterations, u.to_host().unwrap()));
        }
        let err = relative(&cycles[1], &cycles[0]);
        assert!(
            err <= 1e-10,
            "{dim}D P{order}: V-cycle assembled − free = {err:e}"
        );
        let ((free, u_free), (assembled, u_assembled)) = (&solves[0], &solves[1]);
        eprintln!("{dim}D P{order} Robin: CG iterations matrix-free {free}, assembled {assembled}");
        assert!(free.abs_diff(*assembled) <= 1, "{free} vs {assembled}");
        // observed 7, 8, 7; coarse levels without the Robin term (singular
        // Neumann Laplacians) take 21 to 25
        assert!(*free <= 12, "{dim}D P{order}: {free} iterations");
        let err = relative(u_assembled, u_free);
        assert!(err <= 1e-6, "{dim}D P{order}: solutions differ by {err:e}");
    }
}

/// The facet kernels' launches are in the evaluation's launch records
/// (`OpenClIntegrator::last_run`): `F(u)`, `J(u)·v` and the diagonal each
/// list theirs after the cells', with the term, its facets and the bytes
/// each must move (counted here from the sizes: per facet, the cell's
/// values of `u` (and `v`), its node indices and local facet, the facet's
/// `J⁻¹`, normal, points and weights, the point values, the values added
/// into `out` twice), and their device times within the evaluation's; a
/// form without boundary terms records none.
#[test]
fn facet_launches_are_recorded() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    let (dim, order) = (2, 1);
    let mut op = operator::<f64>(dim, order, false, &device);
    let term = &op.form().boundary()[0];
    let nf = term.set().len();
    let element = Element::lagrange(dim, order).unwrap();
    let nq = femquad::facet::FacetQuadrature::default_for(&element)
        .unwrap()
        .n_points();
    let (nb, nc, real, index) = (3, 1, 8, 4);
    let mut cell_nodes: Vec<u32> = term
        .set()
        .facets()
        .iter()
        .flat_map(|f| op.space().cell_nodes(f.cell as usize).to_vec())
        .collect();
    cell_nodes.sort_unstable();
    cell_nodes.dedup();
    let n_sum = cell_nodes.len();
    let cell_values = nf * nb * nc * real;
    let indices = nf * (nb + 1) * index;
    let geometry = nf * (dim * dim + dim + nq * dim + nq) * real;
    let points = nf * nq * nc * real;
    let n = op.space().n_dofs();
    let u = op.vector_from(&values::<f64>(n, 0.0)).unwrap();
    let v = op.vector_from(&values::<f64>(n, 2.0)).unwrap();
    let mut r = op.vector().unwrap();

    let check = |op: &mut Operator<f64>, want: &[(&str, usize)]| {
        let bound = op.integrator().opencl().unwrap();
        let device = bound.device().clone();
        let run = bound.last_run();
        let got: Vec<(&str, usize)> = run
            .facet_launches()
            .iter()
            .map(|l| (l.kernel, l.bytes))
            .collect();
        assert_eq!(got, want);
        assert!(
            run.facet_launches()
                .iter()
                .all(|l| l.term == 0 && l.facets == nf)
        );
        let total = run.wait_ns(&device).unwrap().unwrap();
        let facets = run.facet_ns(&device).unwrap().unwrap();
        assert!(0 < facets && facets <= total, "{facets} of {total} ns");
    };
    op.apply(&u, &mut r).unwrap();
    let scatter_atomic = points + indices + 2 * cell_values;
    let points_residual = cell_values + indices + geometry + points;
    check(
        &mut op,
        &[
            ("facet_points", points_residual),
            ("facet_scatter", scatter_atomic),
        ],
    );
    op.jacobian_action(&u, &v, &mut r).unwrap();
    check(
        &mut op,
        &[
            ("facet_points", points_residual + cell_values),
            ("facet_scatter", scatter_atomic),
        ],
    );
    let mut d = op.vector().unwrap();
    op.jacobian_diagonal(&u, &mut d).unwrap();
    check(
        &mut op,
        &[(
            "facet_diagonal",
            cell_values + indices + geometry + 2 * nf * nb * nc * nc * real,
        )],
    );
    op.set_assembly(Assembly::Deterministic).unwrap();
    op.apply(&u, &mut r).unwrap();
    check(
        &mut op,
        &[
            ("facet_points", points_residual),
            ("facet_scatter", points + indices + cell_values),
            (
                "facet_sum",
                cell_values + (2 * n_sum + 1 + nf * nb) * index + 2 * n_sum * nc * real,
            ),
        ],
    );

    // no boundary terms, no facet launches
    let space = op.space().clone();
    let mut plain = Operator::<f64>::new(Form::new(space, Laplacian).unwrap(), &device).unwrap();
    plain.apply(&u, &mut r).unwrap();
    let bound = plain.integrator().opencl().unwrap();
    let device = bound.device().clone();
    assert!(bound.last_run().facet_launches().is_empty());
    assert_eq!(bound.last_run().facet_ns(&device).unwrap(), Some(0));
}
