//! Direct solves of assembled operators with Dirichlet conditions by
//! symmetric elimination: exact reproduction of linear solutions, agreement
//! with the matrix-free Dirichlet solve, LU for nonsymmetric operators, and
//! clear errors for matrices that cannot be factored.

use std::sync::Arc;

use femquad::aux_space::AuxSpace;
use femquad::backend::Backend;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::form::Form;
use femquad::linalg::FixedDofs;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::native::Execution;
use femquad::operator::Operator;
use femquad::physics::PointArgs;
use femquad::physics::builtin::Poisson;
use femquad::quadrature::Quadrature;
use femquad::solve::DirichletProblem;
use femquad::space::FunctionSpace;
use femquad::sparse::{CsrMatrix, DirectSolver, Factorization, SparsityPattern, element_matrices};
use femquad::{Error, Result};

fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed: 7,
    };
    unit_box(dim, n, &opts).unwrap().into()
}

fn space(m: &Arc<Mesh>, order: usize, nc: usize) -> FunctionSpace {
    FunctionSpace::new(m.clone(), Element::lagrange(m.dim(), order).unwrap(), nc).unwrap()
}

/// The matrix of `jacobian` at `u = 0` on `s`.
fn assembled<J>(s: &FunctionSpace, jacobian: J) -> CsrMatrix
where
    J: Fn(usize, &PointArgs<'_, f64>, &mut [f64], &mut [f64], &mut [f64], &mut [f64]) -> Result<()>
        + Sync,
{
    let q = Quadrature::default_for(&s.element()).unwrap();
    let disc = Discretization::<f64>::new(s, q, AuxSpace::None).unwrap();
    let u = vec![0.0; s.n_cell_dofs()];
    let inputs = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
        time: None,
    };
    let n_bt = s.n_basis() * s.n_comp();
    let mut ke = vec![0.0; s.n_cells() * n_bt * n_bt];
    element_matrices(&disc, &inputs, jacobian, &mut ke, Execution::Parallel).unwrap();
    CsrMatrix::assemble(&SparsityPattern::of_space(s).unwrap(), &ke).unwrap()
}

/// Scalar Laplacian, `g3 = I`.
fn laplacian(
    dim: usize,
    _: &PointArgs<'_, f64>,
    _: &mut [f64],
    _: &mut [f64],
    _: &mut [f64],
    g3: &mut [f64],
) -> Result<()> {
    for d in 0..dim {
        g3[d * dim + d] = 1.0;
    }
    Ok(())
}

/// Scalar mass, `g0 = 1`.
fn mass(
    _: usize,
    _: &PointArgs<'_, f64>,
    g0: &mut [f64],
    _: &mut [f64],
    _: &mut [f64],
    _: &mut [f64],
) -> Result<()> {
    g0[0] = 1.0;
    Ok(())
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).fold(0.0, |m, (x, y)| m.max((x - y).abs()))
}

/// Eliminates the boundary dofs of `s` with values `g` from `A u = b` and
/// solves with `factor`; returns the full solution.
fn solve_dirichlet(
    s: &FunctionSpace,
    mut a: CsrMatrix,
    mut b: Vec<f64>,
    g: &[f64],
    factor: fn(&CsrMatrix) -> Result<DirectSolver>,
) -> Vec<f64> {
    let fixed = FixedDofs::new(s.n_dofs(), &s.boundary_dofs().unwrap()).unwrap();
    fixed.eliminate(&mut a, &mut b, g).unwrap();
    let solver = factor(&a).unwrap();
    let mut x = vec![0.0; s.n_dofs()];
    solver.solve(&b, &mut x).unwrap();
    x
}

#[test]
fn laplacian_reproduces_linear_solutions() {
    for dim in [2, 3] {
        let m = mesh(dim, if dim == 2 { 6 } else { 3 });
        for order in [1, 2] {
            let s = space(&m, order, 1);
            let exact = |x: &[f64], o: &mut [f64]| {
                o[0] = 1.0 + x[0] - 2.0 * x[1] + if x.len() == 3 { 0.5 * x[2] } else { 0.0 }
            };
            let g = s.interpolate(exact);
            let a = assembled(&s, laplacian);
            let zero = vec![0.0; s.n_dofs()];
            let x = solve_dirichlet(&s, a.clone(), zero.clone(), &g, DirectSolver::cholesky);
            assert!(
                max_diff(&x, &g) <= 1e-10,
                "dim {dim} P{order}: {:e}",
                max_diff(&x, &g)
            );
            // LU gives the same solution.
            let y = solve_dirichlet(&s, a, zero, &g, DirectSolver::lu);
            assert!(max_diff(&y, &g) <= 1e-10, "LU dim {dim} P{order}");
        }
    }
}

/// Lamé with an affine displacement: constant stress, zero body force, so
/// the discrete solution is the displacement itself (vector fields, N_comp = dim).
#[test]
fn lame_reproduces_affine_displacements() {
    let (mu, lambda) = (1.0, 2.5);
    for dim in [2, 3] {
        let m = mesh(dim, if dim == 2 { 5 } else { 2 });
        for order in [1, 2] {
            let s = space(&m, order, dim);
            let jac = |dim: usize,
                       _: &PointArgs<'_, f64>,
                       _: &mut [f64],
                       _: &mut [f64],
                       _: &mut [f64],
                       g3: &mut [f64]|
             -> Result<()> {
                let delta = |a: usize, b: usize| if a == b { 1.0 } else { 0.0 };
                for c in 0..dim {
                    for c2 in 0..dim {
                        for d in 0..dim {
                            for d2 in 0..dim {
                                g3[((c * dim + c2) * dim + d) * dim + d2] = mu
                                    * (delta(c, c2) * delta(d, d2) + delta(c, d2) * delta(d, c2))
                                    + lambda * delta(c, d) * delta(c2, d2);
                            }
                        }
                    }
                }
                Ok(())
            };
            let a = assembled(&s, jac);
            let g = s.interpolate(|x, o| {
                for (c, oc) in o.iter_mut().enumerate() {
                    *oc = 0.1 * c as f64
                        + x.iter()
                            .enumerate()
                            .map(|(d, xd)| ((c + 2 * d) as f64 - 1.5) * xd)
                            .sum::<f64>();
                }
            });
            let x = solve_dirichlet(&s, a, vec![0.0; s.n_dofs()], &g, DirectSolver::cholesky);
            assert!(
                max_diff(&x, &g) <= 1e-10,
                "dim {dim} P{order}: {:e}",
                max_diff(&x, &g)
            );
        }
    }
}

/// The elimination convention is the one of `DirichletProblem`: both solve
/// Poisson with a source and curved boundary data to the same solution.
#[test]
fn elimination_agrees_with_the_matrix_free_dirichlet_solve() {
    for dim in [2, 3] {
        let m = mesh(dim, if dim == 2 { 6 } else { 3 });
        for order in [1, 2] {
            let s = space(&m, order, 1);
            let q = Quadrature::default_for(&s.element()).unwrap();
            let backend = Backend::Native(Execution::Parallel);
            let source = [3.0];
            let form = Form::<f64>::new(s.clone(), Poisson)
                .and_then(|f| f.with_quadrature(q))
                .and_then(|f| f.with_constants(&source))
                .unwrap();
            let mut res = Operator::new(form, &backend).unwrap();
            let boundary = |x: &[f64], o: &mut [f64]| o[0] = x[0] * x[0] - x[1] + 0.3 * x[0] * x[1];
            // A u = b with b = −F(0) (F(u) = A u − b is affine).
            let mut f0 = res.vector().unwrap();
            let zero = res.vector().unwrap();
            res.apply(&zero, &mut f0).unwrap();
            let f0 = f0.to_host().unwrap();
            let b: Vec<f64> = f0.iter().map(|v| -v).collect();
            let g = s.interpolate(boundary);
            let a = assembled(&s, laplacian);
            let x = solve_dirichlet(&s, a, b, &g, DirectSolver::cholesky);

            let mut problem = DirichletProblem::on_boundary(res, boundary).unwrap();
            let (u, _) = problem.solve_linear(1e-13, 2000).unwrap();
            let u = u.to_host().unwrap();
            let err = max_diff(&x, &u);
            assert!(err <= 1e-9, "dim {dim} P{order}: {err:e}");
            for &d in problem.fixed_dofs().dofs() {
                assert_eq!(x[d as usize], g[d as usize]);
            }
        }
    }
}

/// Advection–diffusion `−εΔu + β·∇u = s` (`f0 = β·∇u − s`, `f1 = ε∇u`, so
/// `g1 = β`, `g3 = ε I`): nonsymmetric; LU reproduces a linear solution,
/// Cholesky refuses the matrix.
#[test]
fn lu_solves_advection_diffusion() {
    let eps = 0.05;
    let beta = [1.0, -0.5, 0.25];
    for dim in [2, 3] {
        let m = mesh(dim, if dim == 2 { 6 } else { 3 });
        for order in [1, 2] {
            let s = space(&m, order, 1);
            let grad = [1.0, -2.0, 0.5];
            let exact = |x: &[f64], o: &mut [f64]| {
                o[0] = 0.5 + x.iter().zip(&grad).map(|(a, b)| a * b).sum::<f64>()
            };
            let source: f64 = (0..dim).map(|d| beta[d] * grad[d]).sum();
            let jac = |dim: usize,
                       _: &PointArgs<'_, f64>,
                       _: &mut [f64],
                       g1: &mut [f64],
                       _: &mut [f64],
                       g3: &mut [f64]|
             -> Result<()> {
                for d in 0..dim {
                    g1[d] = beta[d];
                    g3[d * dim + d] = eps;
                }
                Ok(())
            };
            let a = assembled(&s, jac);
            let msg = DirectSolver::cholesky(&a).unwrap_err().to_string();
            assert!(msg.contains("Cholesky needs a symmetric matrix"), "{msg}");
            // b_i = ∫ φ_i s = s (M 1)_i.
            let mut b = vec![0.0; s.n_dofs()];
            assembled(&s, mass)
                .spmv(&vec![source; s.n_dofs()], &mut b)
                .unwrap();
            let g = s.interpolate(exact);
            let x = solve_dirichlet(&s, a, b, &g, DirectSolver::lu);
            assert!(
                max_diff(&x, &g) <= 1e-10,
                "dim {dim} P{order}: {:e}",
                max_diff(&x, &g)
            );
        }
    }
}

#[test]
fn refactor_reuses_the_symbolic_analysis() {
    let m = mesh(2, 6);
    let s = space(&m, 2, 1);
    let stiffness = assembled(&s, laplacian);
    let mass_m = assembled(&s, mass);
    // A = K + M (SPD without conditions) and then K + 10 M.
    let shifted = |k: f64| {
        let mut a = stiffness.clone();
        for (v, mv) in a.values_mut().iter_mut().zip(mass_m.values()) {
            *v += k * mv;
        }
        a
    };
    let b: Vec<f64> = (0..s.n_dofs()).map(|i| (i as f64 * 0.37).sin()).collect();
    let check = |solver: &DirectSolver, a: &CsrMatrix| {
        let mut x = vec![0.0; s.n_dofs()];
        solver.solve(&b, &mut x).unwrap();
        let mut ax = vec![0.0; s.n_dofs()];
        a.spmv(&x, &mut ax).unwrap();
        assert!(max_diff(&ax, &b) <= 1e-10, "{:e}", max_diff(&ax, &b));
    };
    for factor in [DirectSolver::cholesky, DirectSolver::lu] {
        let a1 = shifted(1.0);
        let mut solver = factor(&a1).unwrap();
        check(&solver, &a1);
        let a10 = shifted(10.0);
        solver.refactor(&a10).unwrap();
        check(&solver, &a10);
        // Another pattern is refused, and the old factors are kept.
        let other = assembled(&space(&m, 1, 1), laplacian);
        let msg = solver.refactor(&other).unwrap_err().to_string();
        assert!(msg.contains("pattern differs"), "{msg}");
        check(&solver, &a10);
        // So is a matrix that fails to factor.
        let mut zeros = a10.clone();
        zeros.values_mut().fill(0.0);
        assert!(solver.refactor(&zeros).is_err());
        check(&solver, &a10);
    }
    let solver = DirectSolver::lu(&shifted(1.0)).unwrap();
    assert_eq!(
        (solver.factorization(), solver.n()),
        (Factorization::Lu, s.n_dofs())
    );
}

#[test]
fn matrices_that_cannot_be_factored_are_named() {
    // Singular: [[1, 2], [2, 4]].
    let singular =
        CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 2.0), (1, 0, 2.0), (1, 1, 4.0)])
            .unwrap();
    let msg = DirectSolver::cholesky(&singular).unwrap_err().to_string();
    assert!(msg.contains("not positive definite"), "{msg}");
    let msg = DirectSolver::lu(&singular).unwrap_err().to_string();
    assert!(msg.contains("singular"), "{msg}");
    // A zero row is structurally singular.
    let zero_row = CsrMatrix::from_triplets(2, 2, &[(0, 0, 1.0), (0, 1, 2.0)]).unwrap();
    let msg = DirectSolver::lu(&zero_row).unwrap_err().to_string();
    assert!(msg.contains("singular"), "{msg}");

    // Symmetric but indefinite: the negated Dirichlet Laplacian.
    let m = mesh(2, 4);
    let s = space(&m, 1, 1);
    let mut a = assembled(&s, laplacian);
    let fixed = FixedDofs::new(s.n_dofs(), &s.boundary_dofs().unwrap()).unwrap();
    fixed.eliminate_matrix(&mut a).unwrap();
    DirectSolver::cholesky(&a).unwrap();
    a.values_mut().iter_mut().for_each(|v| *v = -*v);
    let msg = DirectSolver::cholesky(&a).unwrap_err().to_string();
    assert!(msg.contains("not positive definite"), "{msg}");
    // The negated matrix is fine for LU.
    let lu = DirectSolver::lu(&a).unwrap();

    // Bad arguments.
    let rect = CsrMatrix::from_triplets(2, 3, &[(0, 0, 1.0)]).unwrap();
    for r in [DirectSolver::cholesky(&rect), DirectSolver::lu(&rect)] {
        assert!(matches!(r, Err(Error::InvalidArgument { name: "a", .. })));
    }
    let mut nan = a.clone();
    nan.values_mut()[3] = f64::NAN;
    assert!(matches!(
        DirectSolver::lu(&nan),
        Err(Error::NonFinite {
            name: "a",
            index: 3,
            ..
        })
    ));
    let n = s.n_dofs();
    let mut x = vec![0.0; n];
    assert!(matches!(
        lu.solve(&vec![0.0; n - 1], &mut x),
        Err(Error::InvalidArgument { name: "b", .. })
    ));
    assert!(matches!(
        lu.solve(&vec![0.0; n], &mut x[1..]),
        Err(Error::InvalidArgument { name: "x", .. })
    ));
    let mut b = vec![0.0; n];
    b[2] = f64::INFINITY;
    assert!(matches!(
        lu.solve(&b, &mut x),
        Err(Error::NonFinite {
            name: "b",
            index: 2,
            ..
        })
    ));
}

#[test]
fn empty_system_is_solved() {
    let a = CsrMatrix::from_triplets(0, 0, &[]).unwrap();
    for factor in [DirectSolver::cholesky, DirectSolver::lu] {
        let solver = factor(&a).unwrap();
        solver.solve(&[], &mut []).unwrap();
        assert_eq!(solver.n(), 0);
    }
}
