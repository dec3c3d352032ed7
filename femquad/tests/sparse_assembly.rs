//! Sparsity patterns, element matrices from pointwise Jacobians and their
//! assembly, against brute force, closed forms and the native operator.

use std::sync::Arc;

use std::collections::BTreeSet;

use femquad::aux_space::AuxSpace;
use femquad::backend::Backend;
use femquad::discretization::{CellInputs, Discretization};
use femquad::element::Element;
use femquad::form::Form;
use femquad::layout::elem_mat;
use femquad::mesh::Mesh;
use femquad::mesh::generate::{MeshOptions, unit_box};
use femquad::native::Execution;
use femquad::operator::Operator;
use femquad::physics::PointArgs;
use femquad::physics::builtin::{Lame, LameParameters};
use femquad::quadrature::Quadrature;
use femquad::rng::Rng;
use femquad::space::FunctionSpace;
use femquad::sparse::{CsrMatrix, SparsityPattern, assemble_into, element_matrices};
use femquad::{Error, Result};

/// Shuffled, jittered unit square or cube.
fn mesh(dim: usize, n: usize, seed: u64) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed,
    };
    unit_box(dim, n, &opts).unwrap().into()
}

fn space(m: &Arc<Mesh>, order: usize, nc: usize) -> FunctionSpace {
    FunctionSpace::new(m.clone(), Element::lagrange(m.dim(), order).unwrap(), nc).unwrap()
}

fn discretization(s: &FunctionSpace) -> Discretization<f64> {
    let q = Quadrature::default_for(&s.element()).unwrap();
    Discretization::new(s, q, AuxSpace::None).unwrap()
}

/// Element matrices of `jacobian` at `u = 0` (cell-local zeros).
fn matrices<J>(s: &FunctionSpace, jacobian: J, execution: Execution) -> Vec<f64>
where
    J: Fn(usize, &PointArgs<'_, f64>, &mut [f64], &mut [f64], &mut [f64], &mut [f64]) -> Result<()>
        + Sync,
{
    let disc = discretization(s);
    let u = vec![0.0; s.n_cell_dofs()];
    let inputs = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
        time: None,
    };
    let n_bt = s.n_basis() * s.n_comp();
    let mut ke = vec![f64::NAN; s.n_cells() * n_bt * n_bt];
    element_matrices(&disc, &inputs, jacobian, &mut ke, execution).unwrap();
    ke
}

/// `g3[c][d][c][d] = 1`: the Laplacian of every component.
fn laplacian(
    dim: usize,
    _: &PointArgs<'_, f64>,
    _: &mut [f64],
    _: &mut [f64],
    _: &mut [f64],
    g3: &mut [f64],
) -> Result<()> {
    let nc = g3.len() / (dim * dim);
    let nc = (nc as f64).sqrt() as usize;
    for c in 0..nc {
        for d in 0..dim {
            g3[((c * nc + c) * dim + d) * dim + d] = 1.0;
        }
    }
    Ok(())
}

/// `g0[c][c] = 1`: the mass matrix of every component.
fn mass(
    _: usize,
    _: &PointArgs<'_, f64>,
    g0: &mut [f64],
    _: &mut [f64],
    _: &mut [f64],
    _: &mut [f64],
) -> Result<()> {
    let nc = (g0.len() as f64).sqrt() as usize;
    for c in 0..nc {
        g0[c * nc + c] = 1.0;
    }
    Ok(())
}

/// Lamé: `g3[c][d][c'][d'] = μ(δcc'δdd' + δcd'δdc') + λ δcd δc'd'`.
fn lame_g3(dim: usize, mu: f64, lambda: f64, g3: &mut [f64]) {
    let delta = |a: usize, b: usize| if a == b { 1.0 } else { 0.0 };
    for c in 0..dim {
        for d in 0..dim {
            for c2 in 0..dim {
                for d2 in 0..dim {
                    g3[((c * dim + c2) * dim + d) * dim + d2] = mu
                        * (delta(c, c2) * delta(d, d2) + delta(c, d2) * delta(d, c2))
                        + lambda * delta(c, d) * delta(c2, d2);
                }
            }
        }
    }
}

/// The dense sum over cells, in cell order, of the element matrices.
fn dense_sum(s: &FunctionSpace, ke: &[f64]) -> Vec<f64> {
    let (n, nc, n_b) = (s.n_dofs(), s.n_comp(), s.n_basis());
    let n_bt = n_b * nc;
    let mut a = vec![0.0; n * n];
    for c in 0..s.n_cells() {
        let nodes = s.cell_nodes(c);
        for i in 0..n_bt {
            for j in 0..n_bt {
                let r = nodes[i / nc] as usize * nc + i % nc;
                let col = nodes[j / nc] as usize * nc + j % nc;
                a[r * n + col] += ke[elem_mat(c, i, j, n_bt)];
            }
        }
    }
    a
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// Inverse of a small dense matrix by Gauss–Jordan elimination.
fn inverse(n: usize, m: &[f64]) -> Vec<f64> {
    let mut a = m.to_vec();
    let mut inv: Vec<f64> = (0..n * n)
        .map(|k| if k / n == k % n { 1.0 } else { 0.0 })
        .collect();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap();
        for j in 0..n {
            a.swap(k * n + j, p * n + j);
            inv.swap(k * n + j, p * n + j);
        }
        let d = a[k * n + k];
        for j in 0..n {
            a[k * n + j] /= d;
            inv[k * n + j] /= d;
        }
        for i in (0..n).filter(|&i| i != k) {
            let f = a[i * n + k];
            for j in 0..n {
                a[i * n + j] -= f * a[k * n + j];
                inv[i * n + j] -= f * inv[k * n + j];
            }
        }
    }
    inv
}

/// Volume and barycentric gradients `G` (`(dim+1) × dim`) of a simplex, from
/// `J = [X_1 − X_0, …]`: `∇λ_k = row k−1 of J⁻¹`, `∇λ_0 = −Σ_k ∇λ_k`.
fn simplex_gradients(dim: usize, x: &[&[f64]]) -> (f64, Vec<f64>) {
    let mut j = vec![0.0; dim * dim];
    for i in 0..dim {
        for d in 0..dim {
            j[d * dim + i] = x[i + 1][d] - x[0][d];
        }
    }
    let inv = inverse(dim, &j);
    let det = if dim == 2 {
        j[0] * j[3] - j[1] * j[2]
    } else {
        j[0] * (j[4] * j[8] - j[5] * j[7]) - j[1] * (j[3] * j[8] - j[5] * j[6])
            + j[2] * (j[3] * j[7] - j[4] * j[6])
    };
    let mut g = vec![0.0; (dim + 1) * dim];
    for k in 1..=dim {
        for d in 0..dim {
            g[k * dim + d] = inv[(k - 1) * dim + d];
            g[d] -= inv[(k - 1) * dim + d];
        }
    }
    (det / if dim == 2 { 2.0 } else { 6.0 }, g)
}

#[test]
fn pattern_is_the_set_of_node_pairs_sharing_a_cell() {
    for dim in [2, 3] {
        let m = mesh(dim, 3, 5);
        for order in [1, 2] {
            for nc in [1, 2, 3] {
                let s = space(&m, order, nc);
                let mut want = vec![BTreeSet::new(); s.n_dofs()];
                for c in 0..s.n_cells() {
                    for &a in s.cell_nodes(c) {
                        for &b in s.cell_nodes(c) {
                            for fc in 0..nc {
                                for gc in 0..nc {
                                    want[a as usize * nc + fc].insert(b as usize * nc + gc);
                                }
                            }
                        }
                    }
                }
                let p = SparsityPattern::of_space(&s).unwrap();
                assert_eq!((p.n_rows(), p.n_cols()), (s.n_dofs(), s.n_dofs()));
                for (i, row) in want.iter().enumerate() {
                    let got: Vec<usize> = p.row(i).unwrap().iter().map(|&j| j as usize).collect();
                    assert_eq!(got, row.iter().copied().collect::<Vec<_>>(), "row {i}");
                }
                // Deterministic and independent of the thread count.
                let one = rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .build()
                    .unwrap();
                let q = one.install(|| SparsityPattern::of_space(&s).unwrap());
                assert!(p.same_structure(&q));
            }
        }
    }
}

#[test]
fn assembly_is_the_cell_ordered_sum_bitwise() {
    let mut rng = Rng::new(3);
    for dim in [2, 3] {
        let m = mesh(dim, 2, 8);
        for (order, nc) in [(1, 1), (2, 2), (1, 3)] {
            let s = space(&m, order, nc);
            let p = SparsityPattern::of_space(&s).unwrap();
            let n_bt = s.n_basis() * nc;
            let ke = rng.vec(s.n_cells() * n_bt * n_bt, -1.0, 1.0);
            let a = CsrMatrix::assemble(&p, &ke).unwrap();
            let want = dense_sum(&s, &ke);
            assert_eq!(a.to_dense().unwrap(), want, "dim {dim} P{order} nc {nc}");
            // Re-fill on the same pattern, on one thread: the same bits.
            let mut b = CsrMatrix::zeros(&p);
            let one = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .unwrap();
            one.install(|| b.fill(&ke)).unwrap();
            assert_eq!(a.values(), b.values());
            // spmv agrees with the dense product.
            let x = rng.vec(s.n_dofs(), -1.0, 1.0);
            let mut y = vec![0.0; s.n_dofs()];
            a.spmv(&x, &mut y).unwrap();
            let n = s.n_dofs();
            for i in 0..n {
                let yi: f64 = (0..n).map(|j| want[i * n + j] * x[j]).sum();
                assert!((y[i] - yi).abs() < 1e-13, "{} vs {yi}", y[i]);
            }
        }
    }
}

#[test]
fn p1_laplacian_is_the_closed_form_stiffness() {
    for dim in [2, 3] {
        let m = mesh(dim, 3, 11);
        let s = space(&m, 1, 1);
        let ke = matrices(&s, laplacian, Execution::Parallel);
        let nv = dim + 1;
        for c in 0..s.n_cells() {
            let x: Vec<&[f64]> = m.cell(c).iter().map(|&v| m.vertex(v as usize)).collect();
            let (vol, g) = simplex_gradients(dim, &x);
            for a in 0..nv {
                for b in 0..nv {
                    let want: f64 = vol
                        * (0..dim)
                            .map(|d| g[a * dim + d] * g[b * dim + d])
                            .sum::<f64>();
                    let got = ke[elem_mat(c, a, b, nv)];
                    assert!(
                        (got - want).abs() <= 1e-12,
                        "cell {c} ({a},{b}): {got} vs {want}"
                    );
                }
            }
        }
        // Assembled: symmetric, constants in the kernel.
        let a = CsrMatrix::assemble(&SparsityPattern::of_space(&s).unwrap(), &ke).unwrap();
        a.check_symmetric(1e-13).unwrap();
        let mut y = vec![0.0; s.n_dofs()];
        a.spmv(&vec![1.0; s.n_dofs()], &mut y).unwrap();
        assert!(max_abs(&y) < 1e-13, "{}", max_abs(&y));
    }
}

/// `K v = (F(u + h v) − F(u − h v)) / (2h)` for the native Lamé operator,
/// exact up to round-off since Lamé is linear.
#[test]
fn lame_matrix_is_the_derivative_of_the_native_operator() {
    let par = LameParameters::new(1.3, 0.7);
    let mut rng = Rng::new(21);
    for dim in [2, 3] {
        let m = mesh(dim, 2, 13);
        for order in [1, 2] {
            let s = space(&m, order, dim);
            let jac = |dim: usize,
                       _: &PointArgs<'_, f64>,
                       _: &mut [f64],
                       _: &mut [f64],
                       _: &mut [f64],
                       g3: &mut [f64]|
             -> Result<()> {
                lame_g3(dim, par.mu, par.lambda, g3);
                Ok(())
            };
            let ke = matrices(&s, jac, Execution::Parallel);
            let a = CsrMatrix::assemble(&SparsityPattern::of_space(&s).unwrap(), &ke).unwrap();
            a.check_symmetric(1e-12).unwrap();

            let q = Quadrature::default_for(&s.element()).unwrap();
            let form = Form::<f64>::new(s.clone(), Lame)
                .and_then(|f| f.with_quadrature(q))
                .and_then(|f| f.with_constants(&par.constants()))
                .unwrap();
            let mut res = Operator::new(form, &Backend::Native(Execution::Parallel)).unwrap();
            let n = s.n_dofs();
            let (u, v) = (rng.vec(n, -1.0, 1.0), rng.vec(n, -1.0, 1.0));
            let h = 0.5;
            let (mut fp, mut fm) = (res.vector().unwrap(), res.vector().unwrap());
            let up: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a + h * b).collect();
            let um: Vec<f64> = u.iter().zip(&v).map(|(a, b)| a - h * b).collect();
            res.apply(&up.into(), &mut fp).unwrap();
            res.apply(&um.into(), &mut fm).unwrap();
            let (fp, fm) = (fp.to_host().unwrap(), fm.to_host().unwrap());
            let fd: Vec<f64> = fp
                .iter()
                .zip(&fm)
                .map(|(p, q)| (p - q) / (2.0 * h))
                .collect();
            let mut kv = vec![0.0; n];
            a.spmv(&v, &mut kv).unwrap();
            let err = max_abs(&kv.iter().zip(&fd).map(|(a, b)| a - b).collect::<Vec<_>>());
            let scale = max_abs(&fd);
            assert!(
                err <= 1e-12 * scale,
                "dim {dim} P{order}: {err:e} vs scale {scale:e}"
            );
            // Its point-block diagonal is the diagonal blocks of the matrix.
            let blocks = a.point_block_diagonal(dim).unwrap();
            let dense = a.to_dense().unwrap();
            for node in 0..s.n_nodes() {
                for fc in 0..dim {
                    for gc in 0..dim {
                        let (i, j) = (node * dim + fc, node * dim + gc);
                        assert_eq!(blocks[(node * dim + fc) * dim + gc], dense[i * n + j]);
                    }
                }
            }
        }
    }
}

/// `∫φ_i` of P1/P2 Lagrange functions on a simplex of volume `vol`.
fn integral_of_basis(dim: usize, order: usize, b: usize, vol: f64) -> f64 {
    match (dim, order, b <= dim) {
        (_, 1, _) => vol / (dim + 1) as f64,
        (2, 2, true) => 0.0,
        (2, 2, false) => vol / 3.0,
        (3, 2, true) => -vol / 20.0,
        (3, 2, false) => vol / 5.0,
        _ => unreachable!(),
    }
}

#[test]
fn mass_matrix_is_spd_with_row_sums_the_basis_integrals() {
    let mut rng = Rng::new(8);
    for dim in [2, 3] {
        let m = mesh(dim, 2, 17);
        for order in [1, 2] {
            let s = space(&m, order, 1);
            let ke = matrices(&s, mass, Execution::Parallel);
            let a = CsrMatrix::assemble(&SparsityPattern::of_space(&s).unwrap(), &ke).unwrap();
            a.check_symmetric(1e-13).unwrap();
            // Row sums = ∫φ_i, from the closed forms per cell.
            let mut want = vec![0.0; s.n_dofs()];
            for c in 0..s.n_cells() {
                let x: Vec<&[f64]> = m.cell(c).iter().map(|&v| m.vertex(v as usize)).collect();
                let (vol, _) = simplex_gradients(dim, &x);
                for (b, &node) in s.cell_nodes(c).iter().enumerate() {
                    want[node as usize] += integral_of_basis(dim, order, b, vol);
                }
            }
            let mut sums = vec![0.0; s.n_dofs()];
            a.spmv(&vec![1.0; s.n_dofs()], &mut sums).unwrap();
            for (i, (got, w)) in sums.iter().zip(&want).enumerate() {
                assert!(
                    (got - w).abs() < 1e-14,
                    "dim {dim} P{order} row {i}: {got} vs {w}"
                );
            }
            // Positive: vᵀ M v > 0 for random v, and the diagonal is positive.
            for _ in 0..5 {
                let v = rng.vec(s.n_dofs(), -1.0, 1.0);
                let mut mv = vec![0.0; s.n_dofs()];
                a.spmv(&v, &mut mv).unwrap();
                assert!(v.iter().zip(&mv).map(|(a, b)| a * b).sum::<f64>() > 0.0);
            }
            assert!(a.diagonal().iter().all(|&d| d > 0.0));
            // A vector field's mass matrix is the scalar one per component.
            let s2 = space(&m, order, 2);
            let ke2 = matrices(&s2, mass, Execution::Serial);
            let a2 = CsrMatrix::assemble(&SparsityPattern::of_space(&s2).unwrap(), &ke2).unwrap();
            for i in 0..s.n_dofs() {
                let (cols, vals) = a.row(i).unwrap();
                for (&j, &v) in cols.iter().zip(vals) {
                    let j = j as usize;
                    for c in 0..2 {
                        assert_eq!(a2.get(2 * i + c, 2 * j + c), Some(v));
                        assert_eq!(a2.get(2 * i + c, 2 * j + 1 - c), Some(0.0));
                    }
                }
            }
        }
    }
}

/// The `g1` and `g2` terms are adjoint: `∫ φ_a g1[fc][gc]·∇φ_b` and
/// `∫ ∇φ_a·g2[fc][gc] φ_b` with `g2[gc][fc] = g1[fc][gc]` give transposed
/// matrices (two components, coefficients that differ per entry, so a
/// transposed index would show).
#[test]
fn g1_and_g2_terms_are_transposes() {
    for dim in [2, 3] {
        let m = mesh(dim, 2, 6);
        for order in [1, 2] {
            let s = space(&m, order, 2);
            let nc = 2;
            let coef = |fc: usize, gc: usize, d: usize| 1.0 + (fc * 7 + gc * 3 + d) as f64 * 0.25;
            let with_g1 = |dim: usize,
                           _: &PointArgs<'_, f64>,
                           _: &mut [f64],
                           g1: &mut [f64],
                           _: &mut [f64],
                           _: &mut [f64]|
             -> Result<()> {
                for fc in 0..nc {
                    for gc in 0..nc {
                        for d in 0..dim {
                            g1[(fc * nc + gc) * dim + d] = coef(fc, gc, d);
                        }
                    }
                }
                Ok(())
            };
            let with_g2 = |dim: usize,
                           _: &PointArgs<'_, f64>,
                           _: &mut [f64],
                           _: &mut [f64],
                           g2: &mut [f64],
                           _: &mut [f64]|
             -> Result<()> {
                for fc in 0..nc {
                    for gc in 0..nc {
                        for d in 0..dim {
                            g2[(gc * nc + fc) * dim + d] = coef(fc, gc, d);
                        }
                    }
                }
                Ok(())
            };
            let p = SparsityPattern::of_space(&s).unwrap();
            let a1 = CsrMatrix::assemble(&p, &matrices(&s, with_g1, Execution::Parallel))
                .unwrap()
                .to_dense()
                .unwrap();
            let a2 = CsrMatrix::assemble(&p, &matrices(&s, with_g2, Execution::Parallel))
                .unwrap()
                .to_dense()
                .unwrap();
            let n = s.n_dofs();
            let scale = max_abs(&a1);
            let mut asym = 0.0f64;
            for i in 0..n {
                for j in 0..n {
                    assert!((a1[i * n + j] - a2[j * n + i]).abs() <= 1e-14 * scale);
                    asym = asym.max((a1[i * n + j] - a1[j * n + i]).abs());
                }
            }
            assert!(asym > 0.1 * scale, "the test needs a nonsymmetric a1");
        }
    }
}

#[test]
fn serial_and_parallel_element_matrices_are_bit_identical() {
    let m = mesh(3, 3, 2);
    let s = space(&m, 2, 3);
    let jac = |dim: usize,
               args: &PointArgs<'_, f64>,
               g0: &mut [f64],
               g1: &mut [f64],
               g2: &mut [f64],
               g3: &mut [f64]|
     -> Result<()> {
        // Every term, depending on x.
        let x = args.x[0] + 2.0 * args.x[1] - args.x[dim - 1];
        for (k, g) in g0.iter_mut().enumerate() {
            *g = x + k as f64;
        }
        for (k, g) in g1.iter_mut().enumerate() {
            *g = x * 0.5 - k as f64;
        }
        for (k, g) in g2.iter_mut().enumerate() {
            *g = (k as f64).sin() * x;
        }
        for (k, g) in g3.iter_mut().enumerate() {
            *g = (k as f64).cos() + x;
        }
        Ok(())
    };
    let a = matrices(&s, jac, Execution::Serial);
    let b = matrices(&s, jac, Execution::Parallel);
    assert_eq!(a, b);
    assert!(a.iter().all(|v| v.is_finite()));
}

#[test]
fn bad_input_is_named() {
    let m = mesh(2, 2, 1);
    let s = space(&m, 1, 1);
    let disc = discretization(&s);
    let u = vec![0.0; s.n_cell_dofs()];
    let ok = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
        time: None,
    };
    let n = s.n_cells() * 9;
    let mut ke = vec![0.0; n];
    let name = |r: Result<()>| match r {
        Err(Error::InvalidArgument { name, reason }) => (name, reason),
        other => panic!("expected an invalid argument, got {other:?}"),
    };
    let e = element_matrices(&disc, &ok, laplacian, &mut ke[1..], Execution::Parallel);
    assert_eq!(name(e).0, "element_matrices");
    let short = CellInputs { u: &u[1..], ..ok };
    assert_eq!(
        name(element_matrices(
            &disc,
            &short,
            laplacian,
            &mut ke,
            Execution::Serial
        ))
        .0,
        "u"
    );
    let mut bad_u = u.clone();
    bad_u[4] = f64::NAN;
    let nan = CellInputs { u: &bad_u, ..ok };
    assert!(matches!(
        element_matrices(&disc, &nan, laplacian, &mut ke, Execution::Serial),
        Err(Error::NonFinite {
            name: "u",
            index: 4,
            ..
        })
    ));
    // A Jacobian that returns NaN is named with the cell and the point.
    let nan_jac = |_: usize,
                   args: &PointArgs<'_, f64>,
                   g0: &mut [f64],
                   _: &mut [f64],
                   _: &mut [f64],
                   _: &mut [f64]|
     -> Result<()> {
        g0[0] = if args.x[0] > 0.5 { f64::NAN } else { 1.0 };
        Ok(())
    };
    let (n, reason) = name(element_matrices(
        &disc,
        &ok,
        nan_jac,
        &mut ke,
        Execution::Serial,
    ));
    assert_eq!(n, "jacobian");
    assert!(
        reason.contains("g0[0] = NaN at quadrature point"),
        "{reason}"
    );
    // Errors of the Jacobian propagate.
    let failing = |_: usize,
                   _: &PointArgs<'_, f64>,
                   _: &mut [f64],
                   _: &mut [f64],
                   _: &mut [f64],
                   _: &mut [f64]|
     -> Result<()> { Err(Error::arg("physics", "no Jacobian")) };
    assert_eq!(
        name(element_matrices(
            &disc,
            &ok,
            failing,
            &mut ke,
            Execution::Parallel
        ))
        .0,
        "physics"
    );

    // Assembly: lengths, non-finite values, a pattern without a space.
    let p = SparsityPattern::of_space(&s).unwrap();
    let mut values = vec![0.0; p.nnz()];
    assert_eq!(
        name(assemble_into(&p, &ke[1..], &mut values)).0,
        "element_matrices"
    );
    assert_eq!(name(assemble_into(&p, &ke, &mut values[1..])).0, "values");
    let mut bad = ke.clone();
    bad[7] = f64::INFINITY;
    assert!(matches!(
        assemble_into(&p, &bad, &mut values),
        Err(Error::NonFinite {
            name: "element_matrices",
            index: 7,
            ..
        })
    ));
    let plain = SparsityPattern::from_csr(1, 1, vec![0, 1], vec![0]).unwrap();
    let (n, reason) = name(assemble_into(&plain, &[], &mut [0.0]));
    assert_eq!(n, "pattern");
    assert!(reason.contains("SparsityPattern::of_space"), "{reason}");
}

#[test]
fn matrix_market_round_trip_of_an_assembled_matrix() {
    let m = mesh(3, 2, 4);
    let s = space(&m, 2, 3);
    let jac = |dim: usize,
               _: &PointArgs<'_, f64>,
               _: &mut [f64],
               _: &mut [f64],
               _: &mut [f64],
               g3: &mut [f64]|
     -> Result<()> {
        lame_g3(dim, 1.0 / 3.0, 0.1, g3);
        Ok(())
    };
    let ke = matrices(&s, jac, Execution::Parallel);
    let a = CsrMatrix::assemble(&SparsityPattern::of_space(&s).unwrap(), &ke).unwrap();
    let path = std::env::temp_dir().join(format!("femquad-sparse-{}.mtx", std::process::id()));
    a.write_matrix_market(&path).unwrap();
    let b = CsrMatrix::read_matrix_market(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(a.pattern().same_structure(b.pattern()));
    let bits = |m: &CsrMatrix| m.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
}
