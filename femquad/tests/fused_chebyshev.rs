//! The Chebyshev step with the SpMV fused in (`spmv_chebyshev_step` on the
//! device, `HostCsr::chebyshev_step` natively) is bitwise the unfused
//! sequence it replaces on that side — the matrix's `apply`, then the
//! multigrid kernels' step — on the assembled P1 Jacobians of 2D Poisson
//! (`N_comp = 1`), 2D Lamé (`N_comp = 2`) and 3D Lamé (`N_comp = 3`), for
//! every SpMV team size on the device; the matrix's `apply` there is the
//! host CSR product (`Operator::assemble_jacobian`'s, to rounding: the
//! device reads the columns by node); and whole smoothings with and
//! without the fused steps give the same bits.
//!
//! Runs on the tests' device and options ([`femquad::opencl::testing`]; PoCL in CI).

mod level_support;

use level_support::{assembled, relative_difference};

use femquad::backend::{Backend, IndexSet, Matrix, Vector};
use femquad::multigrid::{Chebyshev, ChebyshevWork, OnFixed, PointBlockJacobi, SmoothedOperator};
use femquad::opencl::matrix::lanes::SPMV_LANES;
use femquad::opencl::testing;
use femquad::physics::EvalPrecision;
use femquad::rng::Rng;
use femquad::seam::{ChebyshevCoefficients, FusedChebyshevStep, ResidualUpdate};
use femquad::vector::VectorOps;
use femquad::{Real, Result};

fn random<R: Real>(n: usize, seed: u64) -> Vec<R> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| R::from_f64(rng.range(-1.0, 1.0))).collect()
}

/// The first entry where `a` and `b` differ in their bits.
fn first_difference<R: Real>(a: &Vector<R>, b: &Vector<R>) -> Option<usize> {
    let (a, b) = (a.to_host().unwrap(), b.to_host().unwrap());
    a.iter()
        .zip(&b)
        .position(|(x, y)| x.to_f64().to_bits() != y.to_f64().to_bits())
}

/// `values` where `like` lives.
fn like<R: Real>(like: &Vector<R>, values: &[R]) -> Vector<R> {
    match like {
        Vector::Host(_) => Vector::from(values.to_vec()),
        Vector::Device(d) => Vector::from(values.to_vec()).to_device(d.device()).unwrap(),
    }
}

/// The smoother's `D⁻¹` of `matrix` (zero on the dofs `fixed`).
fn jacobi<R: Real>(
    matrix: &Matrix<R>,
    nc: usize,
    fixed: &[u32],
    at: &Vector<R>,
) -> PointBlockJacobi<R> {
    let mut blocks = like(at, &vec![R::ZERO; matrix.n_rows() * nc]);
    matrix.point_block_diagonal(&mut blocks).unwrap();
    let fixed = IndexSet::located_like(at, fixed).unwrap();
    PointBlockJacobi::new(blocks, nc, &fixed, OnFixed::Zero).unwrap()
}

/// The operator of a level that offers the fused step: its matrix.
struct Fused<'m, R: Real>(&'m Matrix<R>);

impl<R: Real> SmoothedOperator<R> for Fused<'_, R> {
    fn apply(&mut self, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        self.0.apply(x, y)
    }
    fn fused_chebyshev_step(&mut self, step: FusedChebyshevStep<'_, Vector<R>>) -> Result<bool> {
        self.0.chebyshev_step(step).map(|()| true)
    }
}

/// On `backend`, for Poisson and Lamé in 2D and Lamé in 3D (and every
/// SpMV team size on a device): `apply` against the host CSR product (to
/// `tol`, relative to its largest entry), one fused step against `apply` +
/// the step, then degree-4 smoothings from zero and from a random `x` with
/// the fused steps against those through the plain action — every vector
/// bitwise equal.
fn fused_equals_unfused<R: EvalPrecision>(backend: &Backend, tol: f64) {
    for (dim, lame) in [(2, false), (2, true), (3, true)] {
        let (mut op, mut matrix, fixed) = assembled::<R>(dim, lame, backend);
        let nc = op.space().n_comp();
        let n = op.space().n_dofs();
        let at = op.vector().unwrap();
        let host = op.assemble_jacobian(&at).unwrap();
        let lanes: Vec<usize> = match &matrix {
            Matrix::Native(_) => vec![0],
            Matrix::OpenCl(_) => SPMV_LANES.to_vec(),
        };
        let [x0, d0, r0, b] = [40, 41, 42, 43].map(|seed| random::<R>(n, seed));
        for l in lanes {
            if let Matrix::OpenCl(m) = &mut matrix {
                m.set_lanes(l).unwrap();
            }
            let jacobi = jacobi(&matrix, nc, &fixed, &at);
            let case = format!(
                "{dim}D {} on {}, lanes {l}",
                if lame { "Lamé" } else { "Poisson" },
                at.location()
            );
            let (a, c) = (0.375, -1.25);
            // unfused: w = A d, then the step
            let (mut xs, mut ds, mut rs) = (like(&at, &x0), like(&at, &d0), like(&at, &r0));
            let mut w = like(&at, &vec![R::ZERO; n]);
            matrix.apply(&ds, &mut w).unwrap();
            let mut expected = vec![0.0; n];
            let d0_f64: Vec<f64> = d0.iter().map(|v| v.to_f64()).collect();
            host.spmv(&d0_f64, &mut expected).unwrap();
            let err = relative_difference(&w.to_host().unwrap(), &expected);
            assert!(err <= tol, "{case}: A d − host A d = {err:e}");
            let k = ChebyshevCoefficients {
                residual: ResidualUpdate::MinusW,
                a,
                c,
                x_from_zero: false,
            };
            jacobi
                .chebyshev_step(&mut xs, &mut ds, &mut rs, (&like(&at, &b), &w), k)
                .unwrap();
            // fused
            let (mut xf, df, mut rf) = (like(&at, &x0), like(&at, &d0), like(&at, &r0));
            let mut d_next = like(&at, &vec![R::ZERO; n]);
            matrix
                .chebyshev_step(FusedChebyshevStep {
                    x: &mut xf,
                    d: &df,
                    d_next: &mut d_next,
                    r: &mut rf,
                    inv: jacobi.inverse(),
                    a,
                    c,
                })
                .unwrap();
            for (name, fused, unfused) in [("x", &xf, &xs), ("d", &d_next, &ds), ("r", &rf, &rs)] {
                let first = first_difference(fused, unfused);
                assert!(first.is_none(), "{case}: {name} first differs at {first:?}");
            }
            // whole smoothings
            let cheb = Chebyshev::new(0.3, 2.0, 4).unwrap();
            let bv = like(&at, &b);
            for zero in [true, false] {
                let mut plain = |v: &Vector<R>, y: &mut Vector<R>| matrix.apply(v, y);
                let mut xs = like(&at, &x0);
                let mut work = ChebyshevWork::like(&at).unwrap();
                cheb.smooth(&mut plain, &jacobi, &bv, &mut xs, zero, &mut work)
                    .unwrap();
                let mut xf = like(&at, &x0);
                let mut work = ChebyshevWork::like(&at).unwrap();
                cheb.smooth(&mut Fused(&matrix), &jacobi, &bv, &mut xf, zero, &mut work)
                    .unwrap();
                let first = first_difference(&xf, &xs);
                assert!(
                    first.is_none(),
                    "{case}, smoothing from zero {zero}: x first differs at {first:?}"
                );
                let moved = xf.to_host().unwrap().iter().zip(&x0).any(|(a, b)| a != b);
                assert!(moved, "{case}: the smoothing changed nothing");
            }
        }
    }
}

#[test]
fn the_fused_chebyshev_step_is_the_spmv_and_the_step_bitwise() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for backend in [Backend::native(), device] {
        fused_equals_unfused::<f64>(&backend, 1e-12);
        fused_equals_unfused::<f32>(&backend, 1e-5);
    }
}

/// A fused step given an operand of the wrong length is refused naming it.
#[test]
fn a_fused_step_names_a_wrong_operand() {
    let device = Backend::opencl_with(testing::device(), testing::options());
    for backend in [Backend::native(), device] {
        let (op, matrix, fixed) = assembled::<f64>(2, true, &backend);
        let at = op.vector().unwrap();
        let n = op.space().n_dofs();
        let jacobi = jacobi(&matrix, 2, &fixed, &at);
        let [mut x, d, mut r] = [0, 1, 2].map(|_| at.zeros_like().unwrap());
        let mut short = like(&at, &vec![0.0; n - 1]);
        let e = matrix
            .chebyshev_step(FusedChebyshevStep {
                x: &mut x,
                d: &d,
                d_next: &mut short,
                r: &mut r,
                inv: jacobi.inverse(),
                a: 1.0,
                c: 1.0,
            })
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`d_next`") && e.contains(&format!("expected {n}")),
            "{e}"
        );
    }
}
