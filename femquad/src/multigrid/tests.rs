//! The multigrid components on host vectors, against closed forms: the
//! transfers (the refinement's own prolongation, transposes), point-block
//! Jacobi (inverses, Dirichlet rows, singular blocks), the Chebyshev error
//! polynomial, the Lanczos eigenvalue estimate, the random fill.

use super::*;
use crate::backend::{IndexSet, Vector};
use crate::mesh::generate::{MeshOptions, unit_cube, unit_square};
use crate::mesh::refine::refine;
use crate::rng::Rng;
use crate::vector::VectorOps;
use crate::{Error, Result};

fn host(v: Vec<f64>) -> Vector<f64> {
    Vector::from(v)
}

/// The transfers of a refinement are the refinement's `prolong_p1` and
/// `restrict_p1` (bitwise), transposes of each other, and the injection
/// keeps the coarse nodes' values; for 1, 2 and 3 components.
#[test]
fn transfers_are_the_refinements_and_transposed() {
    let mut rng = Rng::new(3);
    let opts = MeshOptions {
        jitter: 0.1,
        shuffle: true,
        seed: 4,
    };
    for m in [unit_square(5, &opts).unwrap(), unit_cube(3, &opts).unwrap()] {
        let r = refine(&m).unwrap();
        let (nc_v, nf_v) = (m.n_vertices(), r.mesh().n_vertices());
        for nc in 1..=3 {
            let t = Transfer::<f64>::new(nc_v, r.edge_vertices().to_vec(), nc).unwrap();
            assert_eq!((t.n_coarse_dofs(), t.n_fine_dofs()), (nc_v * nc, nf_v * nc));
            let e = rng.vec(nc_v * nc, -1.0, 1.0);
            let f = rng.vec(nf_v * nc, -1.0, 1.0);
            let mut pe = host(vec![0.0; nf_v * nc]);
            t.prolong_add(&mut pe, &host(e.clone())).unwrap();
            assert_eq!(pe.to_host().unwrap(), r.prolong_p1(&e, nc).unwrap());
            let mut rf = host(vec![7.0; nc_v * nc]);
            t.restrict(&mut rf, &host(f.clone())).unwrap();
            assert_eq!(rf.to_host().unwrap(), r.restrict_p1(&f, nc).unwrap());
            // ⟨P e, f⟩ = ⟨e, Pᵀ f⟩
            let lhs = pe.dot(&host(f.clone())).unwrap();
            let rhs = host(e.clone()).dot(&rf).unwrap();
            assert!(
                (lhs - rhs).abs() <= 1e-12 * lhs.abs().max(1.0),
                "{lhs} {rhs}"
            );
            // prolong_add adds
            let mut twice = pe;
            t.prolong_add(&mut twice, &host(e.clone())).unwrap();
            let p = r.prolong_p1(&e, nc).unwrap();
            for (a, b) in twice.to_host().unwrap().iter().zip(&p) {
                assert_eq!(*a, b + b);
            }
            let mut inj = host(vec![0.0; nc_v * nc]);
            t.inject(&mut inj, &host(f.clone())).unwrap();
            assert_eq!(inj.to_host().unwrap(), f[..nc_v * nc]);
        }
    }
}

#[test]
fn transfer_errors_name_the_argument() {
    let e = Transfer::<f64>::new(2, vec![[0, 1], [1, 2]], 1).unwrap_err();
    assert!(e.to_string().contains("edge 1"), "{e}");
    let e = Transfer::<f64>::new(2, vec![[0, 1]], 0).unwrap_err();
    assert!(
        matches!(e, Error::InvalidArgument { name: "n_comp", .. }),
        "{e}"
    );
    let t = Transfer::<f64>::new(2, vec![[0, 1]], 2).unwrap();
    let e = t
        .prolong_add(&mut host(vec![0.0; 5]), &host(vec![0.0; 4]))
        .unwrap_err();
    assert!(
        e.to_string().contains("`fine`") && e.to_string().contains("expected 6"),
        "{e}"
    );
    let e = t
        .restrict(&mut host(vec![0.0; 3]), &host(vec![0.0; 6]))
        .unwrap_err();
    assert!(e.to_string().contains("`coarse`"), "{e}");
}

/// Random symmetric positive definite blocks of `nc` components.
fn spd_blocks(rng: &mut Rng, n_nodes: usize, nc: usize) -> Vec<f64> {
    let mut out = Vec::with_capacity(n_nodes * nc * nc);
    for _ in 0..n_nodes {
        let g = rng.vec(nc * nc, -1.0, 1.0);
        for i in 0..nc {
            for j in 0..nc {
                // GᵀG + I
                let s: f64 = (0..nc).map(|k| g[k * nc + i] * g[k * nc + j]).sum();
                out.push(s + if i == j { 1.0 } else { 0.0 });
            }
        }
    }
    out
}

#[test]
fn point_block_jacobi_inverts_blocks_and_fixes_rows() {
    let mut rng = Rng::new(8);
    for nc in 1..=3 {
        let n_nodes = 50;
        let blocks = spd_blocks(&mut rng, n_nodes, nc);
        let fixed: Vec<u32> = vec![0, (3 * nc + nc - 1) as u32];
        let jacobi = PointBlockJacobi::new(
            host(blocks.clone()),
            nc,
            &IndexSet::Host(fixed.clone()),
            OnFixed::Identity,
        )
        .unwrap();
        let inv = jacobi.inverse().to_host().unwrap();
        let is_fixed = |d: usize| fixed.contains(&(d as u32));
        for n in 0..n_nodes {
            // the constrained block times its inverse is the identity
            let mut b = blocks[n * nc * nc..(n + 1) * nc * nc].to_vec();
            for c in 0..nc {
                if is_fixed(n * nc + c) {
                    for j in 0..nc {
                        b[c * nc + j] = if j == c { 1.0 } else { 0.0 };
                        b[j * nc + c] = if j == c { 1.0 } else { 0.0 };
                    }
                }
            }
            for i in 0..nc {
                for j in 0..nc {
                    let s: f64 = (0..nc)
                        .map(|k| b[i * nc + k] * inv[n * nc * nc + k * nc + j])
                        .sum();
                    let want = if i == j { 1.0 } else { 0.0 };
                    assert!((s - want).abs() < 1e-12, "nc {nc} node {n}: {s}");
                }
            }
        }
        // y ← a y + b D⁻¹ r
        let r = rng.vec(n_nodes * nc, -1.0, 1.0);
        let y0 = rng.vec(n_nodes * nc, -1.0, 1.0);
        let mut y = host(y0.clone());
        jacobi.update(&mut y, 0.5, &host(r.clone()), -2.0).unwrap();
        let y = y.to_host().unwrap();
        for i in 0..n_nodes * nc {
            let (n, fc) = (i / nc, i % nc);
            let s: f64 = (0..nc)
                .map(|g| inv[n * nc * nc + fc * nc + g] * r[n * nc + g])
                .sum();
            assert!((y[i] - (0.5 * y0[i] - 2.0 * s)).abs() < 1e-14);
        }
    }
    // f32 blocks
    let blocks: Vec<f32> = vec![4.0, 1.0, 1.0, 3.0];
    let j = PointBlockJacobi::new(
        Vector::from(blocks),
        2,
        &IndexSet::Host(vec![]),
        OnFixed::Identity,
    )
    .unwrap();
    let inv = j.inverse().to_host().unwrap();
    let want = [3.0 / 11.0, -1.0 / 11.0, -1.0 / 11.0, 4.0 / 11.0];
    for (a, b) in inv.iter().zip(want) {
        assert!((f64::from(*a) - b).abs() < 1e-7);
    }
}

#[test]
fn singular_blocks_are_named() {
    // node 1 of 3: [[1, 2], [2, 4]] is singular
    let blocks = vec![2.0, 0.0, 0.0, 2.0, 1.0, 2.0, 2.0, 4.0, 1.0, 0.0, 0.0, 1.0];
    let e = PointBlockJacobi::new(
        host(blocks.clone()),
        2,
        &IndexSet::Host(vec![]),
        OnFixed::Identity,
    )
    .unwrap_err();
    let s = e.to_string();
    assert!(s.contains("node 1 (of 3)") && s.contains("singular"), "{s}");
    // fixing one component of node 1 makes it regular
    PointBlockJacobi::new(host(blocks), 2, &IndexSet::Host(vec![2]), OnFixed::Identity).unwrap();
    let mut nan = vec![1.0; 4];
    nan[3] = f64::NAN;
    let e = PointBlockJacobi::new(host(nan), 1, &IndexSet::Host(vec![]), OnFixed::Identity)
        .unwrap_err();
    assert!(e.to_string().contains("node 3"), "{e}");
    let e = PointBlockJacobi::new(
        host(vec![1.0; 5]),
        2,
        &IndexSet::Host(vec![]),
        OnFixed::Identity,
    )
    .unwrap_err();
    assert!(e.to_string().contains("whole 2×2 blocks"), "{e}");
    let e = PointBlockJacobi::new(
        host(vec![1.0; 4]),
        1,
        &IndexSet::Host(vec![4]),
        OnFixed::Identity,
    )
    .unwrap_err();
    assert!(e.to_string().contains("dof 4"), "{e}");
}

/// `T_m(t)` by the three-term recurrence.
fn chebyshev_t(m: usize, t: f64) -> f64 {
    let (mut a, mut b) = (1.0, t);
    if m == 0 {
        return a;
    }
    for _ in 1..m {
        let c = 2.0 * t * b - a;
        a = b;
        b = c;
    }
    b
}

/// On a diagonal operator each eigencomponent of the error is multiplied by
/// the scaled Chebyshev polynomial `p_m(λ) = T_m((θ − λ)/δ) / T_m(θ/δ)`,
/// from zero and from a given initial guess; `|p_m| ≤ damping()` on the
/// interval.
#[test]
fn chebyshev_error_is_the_scaled_polynomial() {
    let n = 40;
    let lambda: Vec<f64> = (0..n).map(|i| 0.02 + 2.0 * i as f64 / n as f64).collect();
    // A = diag(λ d), D = diag(d): D⁻¹A = diag(λ)
    let d: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
    let jacobi = PointBlockJacobi::new(
        host(d.clone()),
        1,
        &IndexSet::Host(vec![]),
        OnFixed::Identity,
    )
    .unwrap();
    let mut a = |x: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
        let (x, y) = (x.to_host()?, y);
        let v: Vec<f64> = (0..n).map(|i| lambda[i] * d[i] * x[i]).collect();
        *y = host(v);
        Ok(())
    };
    let mut rng = Rng::new(2);
    let exact = rng.vec(n, -1.0, 1.0);
    let b: Vec<f64> = (0..n).map(|i| lambda[i] * d[i] * exact[i]).collect();
    for (lo, hi, m) in [(0.3, 2.2, 3), (0.05, 2.1, 4), (0.5, 2.05, 1)] {
        let cheb = Chebyshev::new(lo, hi, m).unwrap();
        let (theta, delta) = (0.5 * (hi + lo), 0.5 * (hi - lo));
        let p = |l: f64| chebyshev_t(m, (theta - l) / delta) / chebyshev_t(m, theta / delta);
        for zero in [true, false] {
            let x0 = if zero {
                vec![f64::NAN; n]
            } else {
                rng.vec(n, -1.0, 1.0)
            };
            let mut x = host(x0.clone());
            let mut work = ChebyshevWork::like(&x).unwrap();
            cheb.smooth(&mut a, &jacobi, &host(b.clone()), &mut x, zero, &mut work)
                .unwrap();
            let x = x.to_host().unwrap();
            for i in 0..n {
                let e0 = exact[i] - if zero { 0.0 } else { x0[i] };
                let want = p(lambda[i]) * e0;
                assert!(
                    (exact[i] - x[i] - want).abs() < 1e-12,
                    "m {m} λ {}: error {} vs {want}",
                    lambda[i],
                    exact[i] - x[i]
                );
                if lambda[i] >= lo && lambda[i] <= hi {
                    assert!(p(lambda[i]).abs() <= cheb.damping() + 1e-14);
                }
            }
        }
    }
    assert!(Chebyshev::new(0.0, 1.0, 2).is_err());
    assert!(Chebyshev::new(1.0, 1.0, 2).is_err());
    assert!(Chebyshev::new(0.1, 1.0, 0).is_err());
}

/// Chebyshev smoothing with `D⁻¹` zero on the fixed dofs (`OnFixed::Zero`)
/// and the *unconstrained* operator, with `b` arbitrary on the fixed dofs,
/// equals on the free dofs the smoothing of the constrained system
/// (`OnFixed::Identity`, fixed rows of `A` the identity's after every
/// product, `b_D = 0`), and leaves `x` zero on the fixed dofs: from zero and
/// from an `x` zero on them; 1 and 2 components.
#[test]
fn chebyshev_with_a_zero_inverse_on_fixed_dofs_smooths_the_free_dofs() {
    let mut rng = Rng::new(21);
    for nc in 1..=2 {
        let n_nodes = 30;
        let n = n_nodes * nc;
        // A = GᵀG + n·I, dense SPD; its point-block diagonal
        let g = rng.vec(n * n, -1.0, 1.0);
        let a: Vec<f64> = (0..n * n)
            .map(|k| {
                let (i, j) = (k / n, k % n);
                (0..n).map(|m| g[m * n + i] * g[m * n + j]).sum::<f64>()
                    + if i == j { n as f64 } else { 0.0 }
            })
            .collect();
        let blocks: Vec<f64> = (0..n_nodes * nc * nc)
            .map(|k| {
                let (node, fc, gc) = (k / (nc * nc), k / nc % nc, k % nc);
                a[(node * nc + fc) * n + node * nc + gc]
            })
            .collect();
        let fixed: Vec<u32> = (0..n as u32).filter(|d| d % 7 == 3).collect();
        let is_fixed = |i: usize| fixed.contains(&(i as u32));
        let set = IndexSet::Host(fixed.clone());
        let product = |v: &[f64]| -> Vec<f64> {
            (0..n)
                .map(|i| (0..n).map(|j| a[i * n + j] * v[j]).sum())
                .collect()
        };
        let mut constrained = |v: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
            let v = v.to_host()?;
            let mut out = product(&v);
            fixed.iter().for_each(|&d| out[d as usize] = v[d as usize]);
            *y = host(out);
            Ok(())
        };
        let mut unconstrained = |v: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
            *y = host(product(&v.to_host()?));
            Ok(())
        };
        let identity =
            PointBlockJacobi::new(host(blocks.clone()), nc, &set, OnFixed::Identity).unwrap();
        let zero = PointBlockJacobi::new(host(blocks.clone()), nc, &set, OnFixed::Zero).unwrap();
        let b = rng.vec(n, -1.0, 1.0);
        let b_masked: Vec<f64> = (0..n)
            .map(|i| if is_fixed(i) { 0.0 } else { b[i] })
            .collect();
        let cheb = Chebyshev::new(0.2, 1.5, 3).unwrap();
        for from_zero in [true, false] {
            let x0: Vec<f64> = (0..n)
                .map(|i| {
                    if is_fixed(i) {
                        0.0
                    } else {
                        rng.range(-1.0, 1.0)
                    }
                })
                .collect();
            let mut want = host(x0.clone());
            let mut work = ChebyshevWork::like(&want).unwrap();
            cheb.smooth(
                &mut constrained,
                &identity,
                &host(b_masked.clone()),
                &mut want,
                from_zero,
                &mut work,
            )
            .unwrap();
            let mut got = host(x0.clone());
            let mut work = ChebyshevWork::like(&got).unwrap();
            cheb.smooth(
                &mut unconstrained,
                &zero,
                &host(b.clone()),
                &mut got,
                from_zero,
                &mut work,
            )
            .unwrap();
            let (want, got) = (want.to_host().unwrap(), got.to_host().unwrap());
            for i in 0..n {
                if is_fixed(i) {
                    assert_eq!(got[i], 0.0, "nc {nc}: fixed dof {i}");
                } else {
                    // equal values (a sum may differ in the sign of a zero term only)
                    assert_eq!(got[i], want[i], "nc {nc}, from zero {from_zero}: dof {i}");
                }
            }
        }
        // the inverse: the Identity one with the fixed rows and columns zeroed
        let (zi, ii) = (
            zero.inverse().to_host().unwrap(),
            identity.inverse().to_host().unwrap(),
        );
        for (k, (z, i)) in zi.iter().zip(&ii).enumerate() {
            let (node, fc, gc) = (k / (nc * nc), k / nc % nc, k % nc);
            let on_fixed = is_fixed(node * nc + fc) || is_fixed(node * nc + gc);
            assert_eq!(*z, if on_fixed { 0.0 } else { *i }, "nc {nc}: entry {k}");
        }
    }
}

/// The Lanczos estimate of `λ_max(D⁻¹A)` approaches the largest eigenvalue
/// from below, is exact once the Krylov space is exhausted, and an
/// indefinite operator is reported.
#[test]
fn eigenvalue_estimates() {
    let n = 200;
    // D⁻¹A = diag(λ) with λ_i = (i + 1)/n (1D Laplacian-like spread), D ≠ I
    let lambda: Vec<f64> = (0..n)
        .map(|i| ((i + 1) as f64 / n as f64).powi(2))
        .collect();
    let d: Vec<f64> = (0..n).map(|i| 2.0 + (i % 5) as f64).collect();
    let jacobi = PointBlockJacobi::new(
        host(d.clone()),
        1,
        &IndexSet::Host(vec![]),
        OnFixed::Identity,
    )
    .unwrap();
    let mut a = |x: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
        let x = x.to_host()?;
        *y = host((0..n).map(|i| lambda[i] * d[i] * x[i]).collect());
        Ok(())
    };
    let mut b = host(vec![0.0; n]);
    fill_random(&mut b, 7, None).unwrap();
    let est = estimate_eigenvalues(&mut a, &jacobi, &b, 10).unwrap();
    assert_eq!(est.steps, 10);
    assert!(est.max <= 1.0 + 1e-12 && est.max > 0.9, "{est:?}");
    assert!(est.min >= lambda[0] - 1e-12, "{est:?}");
    // three distinct eigenvalues: exact after three steps
    let mut a3 = |x: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
        let x = x.to_host()?;
        *y = host(
            (0..n)
                .map(|i| [1.0, 2.0, 5.0][i % 3] * d[i] * x[i])
                .collect(),
        );
        Ok(())
    };
    let est = estimate_eigenvalues(&mut a3, &jacobi, &b, 10).unwrap();
    assert!(est.steps <= 4, "{est:?}");
    assert!(
        (est.max - 5.0).abs() < 1e-9 && (est.min - 1.0).abs() < 1e-9,
        "{est:?}"
    );
    let mut neg = |x: &Vector<f64>, y: &mut Vector<f64>| -> Result<()> {
        y.copy_from(x)?;
        y.scale(-1.0)
    };
    let e = estimate_eigenvalues(&mut neg, &jacobi, &b, 5).unwrap_err();
    assert!(e.to_string().contains("not positive definite"), "{e}");
}

#[test]
fn random_fill_is_deterministic_and_uniform() {
    let mut a = host(vec![0.0; 10_000]);
    let mut b = host(vec![0.0; 10_000]);
    fill_random(&mut a, 3, None).unwrap();
    fill_random(&mut b, 3, None).unwrap();
    let (a, b) = (a.to_host().unwrap(), b.to_host().unwrap());
    assert_eq!(a, b);
    assert!(a.iter().all(|v| (-1.0..1.0).contains(v)));
    let mean = a.iter().sum::<f64>() / a.len() as f64;
    assert!(mean.abs() < 0.03, "{mean}");
    let mut c = host(vec![0.0; 10]);
    fill_random(&mut c, 4, None).unwrap();
    assert_ne!(c.to_host().unwrap(), a[..10]);
    // the same numbers in f32, exactly
    let mut s = Vector::<f32>::host_zeros(100);
    fill_random(&mut s, 3, None).unwrap();
    for (x, y) in s.to_host().unwrap().iter().zip(&a) {
        assert_eq!(f64::from(*x), *y);
    }
}

/// The 1D Laplacian `tridiag(−1, 2, −1)` on two nested grids: 3 points
/// (x = 0, 1, ½) and 5 (the midpoints ¼, ¾ appended), ends fixed; the fine
/// level's diagonal blocks are 0 (singular) when `singular`.
struct TwoGrids {
    neighbours: [Vec<[usize; 2]>; 2],
    singular: bool,
}

impl TwoGrids {
    fn new() -> Self {
        const NONE: usize = usize::MAX;
        TwoGrids {
            neighbours: [
                vec![[NONE, 2], [2, NONE], [0, 1]],
                vec![[NONE, 3], [4, NONE], [3, 4], [0, 2], [2, 1]],
            ],
            singular: false,
        }
    }
}

impl LevelOperators<f64> for TwoGrids {
    fn apply(&mut self, l: usize, x: &Vector<f64>, y: &mut Vector<f64>) -> Result<()> {
        let (x, mut out) = (x.to_host()?, vec![0.0; x.len()]);
        for (i, &[a, b]) in self.neighbours[l].iter().enumerate() {
            out[i] = 2.0 * x[i] - x.get(a).unwrap_or(&0.0) - x.get(b).unwrap_or(&0.0);
        }
        *y = Vector::from(out);
        Ok(())
    }

    fn block_diagonal(&mut self, _: usize, out: &mut Vector<f64>) -> Result<()> {
        out.fill(if self.singular { 0.0 } else { 2.0 })
    }

    fn assemble(&mut self, l: usize) -> Result<crate::sparse::CsrMatrix> {
        let n = self.neighbours[l].len();
        let mut e = Vec::new();
        for (i, nb) in self.neighbours[l].iter().enumerate() {
            e.push((i, i, 2.0));
            e.extend(nb.iter().filter(|&&j| j < n).map(|&j| (i, j, -1.0)));
        }
        crate::sparse::CsrMatrix::from_triplets(n, n, &e)
    }
}

/// A multigrid applies only after a successful setup (a failed one leaves
/// none to apply), and a new coarse factorization takes effect at the next
/// setup: until then the cycle is the last setup's, bitwise.
#[test]
fn a_cycle_is_the_last_successful_setups() {
    use crate::sparse::Factorization;
    let transfer = Transfer::<f64>::new(3, vec![[0, 2], [1, 2]], 1).unwrap();
    let fixed = [
        crate::linalg::FixedDofs::new(3, &[0, 1]).unwrap(),
        crate::linalg::FixedDofs::new(5, &[0, 1]).unwrap(),
    ];
    let finest = host(vec![0.0; 5]);
    let mut mg =
        Multigrid::from_parts(vec![transfer], &fixed, &finest, MultigridOptions::default())
            .unwrap();
    let mut ops = TwoGrids::new();
    let b = host(vec![0.0, 0.0, 1.0, 1.0, 1.0]);
    let mut x = host(vec![0.0; 5]);
    let before = "applied without a successful Multigrid::setup";
    let e = mg.apply(&mut ops, &b, &mut x).unwrap_err().to_string();
    assert!(e.contains("`multigrid`") && e.contains(before), "{e}");

    mg.setup(&mut ops).unwrap();
    mg.apply(&mut ops, &b, &mut x).unwrap();
    let cholesky = x.to_host().unwrap();
    assert_eq!(mg.report().unwrap().factorization, Factorization::Cholesky);
    // the cycle solves the constrained system to a few digits: A x ≈ b on the free dofs
    let mut ax = host(vec![0.0; 5]);
    ops.apply(1, &x, &mut ax).unwrap();
    let ax = ax.to_host().unwrap();
    for i in 2..5 {
        assert!((ax[i] - 1.0).abs() < 0.5, "{ax:?}");
    }

    mg.set_factorization(Factorization::Lu);
    mg.apply(&mut ops, &b, &mut x).unwrap();
    assert_eq!(x.to_host().unwrap(), cholesky);
    assert_eq!(mg.report().unwrap().factorization, Factorization::Cholesky);
    mg.setup(&mut ops).unwrap();
    assert_eq!(mg.report().unwrap().factorization, Factorization::Lu);
    mg.apply(&mut ops, &b, &mut x).unwrap();
    for (lu, ch) in x.to_host().unwrap().iter().zip(&cholesky) {
        assert!((lu - ch).abs() <= 1e-14 * ch.abs().max(1.0), "{lu} {ch}");
    }

    ops.singular = true;
    let e = mg.setup(&mut ops).unwrap_err().to_string();
    assert!(e.contains("`ops`") && e.contains("singular"), "{e}");
    assert!(mg.report().is_none());
    let e = mg.apply(&mut ops, &b, &mut x).unwrap_err().to_string();
    assert!(e.contains(before), "{e}");
}

/// `setup_with_starts` given `setup`'s random start vectors sets the cycle
/// up bitwise as `setup` does; other start vectors give another estimate
/// and cycle, and the given vectors' fixed dofs are zeroed first.
#[test]
fn setup_with_starts_reproduces_setup_and_uses_the_given_vectors() {
    let fixed = [
        crate::linalg::FixedDofs::new(3, &[0, 1]).unwrap(),
        crate::linalg::FixedDofs::new(5, &[0, 1]).unwrap(),
    ];
    let make = || {
        let transfer = Transfer::<f64>::new(3, vec![[0, 2], [1, 2]], 1).unwrap();
        let finest = host(vec![0.0; 5]);
        Multigrid::from_parts(vec![transfer], &fixed, &finest, MultigridOptions::default()).unwrap()
    };
    let mut ops = TwoGrids::new();
    let b = host(vec![0.3, -0.2, 1.0, 0.5, -1.5]);
    let cycle = |mg: &mut Multigrid<f64>, ops: &mut TwoGrids| {
        let mut x = host(vec![0.0; 5]);
        mg.apply(ops, &b, &mut x).unwrap();
        x.to_host().unwrap()
    };
    let mut plain = make();
    plain.setup(&mut ops).unwrap();
    let seed = plain.options().seed;
    let mut given = make();
    given
        .setup_with_starts(&mut ops, &mut |l, x| {
            fill_random(x, seed.wrapping_add(l as u64), None)
        })
        .unwrap();
    assert_eq!(
        given.report().unwrap().levels,
        plain.report().unwrap().levels
    );
    assert_eq!(cycle(&mut given, &mut ops), cycle(&mut plain, &mut ops));
    // another start vector (huge on the fixed dofs, which must be ignored):
    // the Lanczos estimate from e_3 + e_4 differs from the random one's
    let mut other = make();
    other
        .setup_with_starts(&mut ops, &mut |_, x| {
            *x = host(vec![1e300, -1e300, 0.0, 1.0, 1.0]);
            Ok(())
        })
        .unwrap();
    let eigen = |mg: &Multigrid<f64>| mg.report().unwrap().levels[1].eigen.unwrap();
    assert!(eigen(&other).max.is_finite());
    assert_ne!(eigen(&other), eigen(&plain));
    let e = make()
        .setup_with_starts(&mut ops, &mut |_, _| Err(Error::arg("start", "refused")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("`start`"), "{e}");
}

/// The fixed dofs of a multigrid are one set per level, each of its level's
/// size: a wrong count or size is refused, naming `fixed`, the level and
/// both sizes.
#[test]
fn fixed_dofs_of_another_size_than_their_level_are_refused() {
    use crate::linalg::FixedDofs;
    let transfer = || Transfer::<f64>::new(3, vec![[0, 2], [1, 2]], 1).unwrap();
    let finest = host(vec![0.0; 5]);
    let options = MultigridOptions::default();
    let fixed = |sizes: &[usize]| -> Vec<FixedDofs> {
        sizes
            .iter()
            .map(|&n| FixedDofs::new(n, &[0, 1]).unwrap())
            .collect()
    };
    let refused = |fixed: &[FixedDofs]| {
        Multigrid::from_parts(vec![transfer()], fixed, &finest, options)
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(&fixed(&[3, 4])),
        "invalid argument `fixed`: the fixed dofs of level 1 are of a system of 4 dofs, the \
         level has 5"
    );
    assert_eq!(
        refused(&fixed(&[5])),
        "invalid argument `fixed`: 1 sets for 2 levels"
    );
    Multigrid::from_parts(vec![transfer()], &fixed(&[3, 5]), &finest, options).unwrap();
}
