//! The Jacobian of the residual from the physics' automatic derivatives,
//! through the public API: the matrix-free action `J(u)·v` equals the
//! assembled matrix times `v` and central differences of `F`, natively and
//! on the device (P1/P2, 2D/3D, scalar and vector fields, with aux); for
//! linear physics `J·v = F(v) − F(0)`; the assembled P1 Laplacian is the
//! closed-form stiffness; the point-block diagonal equals the assembled one.
//!
//! Device tests run on the device chosen by `FEMQUAD_DEVICE` (PoCL in CI).

mod operator_support;
use operator_support::operator;

use std::sync::Arc;

use femquad::opencl::testing::device;
use femquad::opencl::{Assembly, Device};
use femquad::physics::builtin::{
    Lame, LameParameters, Laplacian, LaplacianCoefficient, NonlinearDiffusion, Poisson,
};
use femquad::physics::{EvalPrecision, PointwiseEvalBoth};
use femquad::prelude::*;
use femquad::rng::Rng;

/// The tests' backend on `device` ([`femquad::opencl::testing::options`]: no
/// tuning cache).
fn opencl(device: &Arc<Device>) -> Backend {
    Backend::opencl_with(device.clone(), femquad::opencl::testing::options())
}

fn mesh(dim: usize, n: usize) -> Arc<Mesh> {
    let opts = MeshOptions {
        jitter: 0.15,
        shuffle: true,
        seed: 11,
    };
    unit_box(dim, n, &opts).unwrap().into()
}

/// The operator of `case` on the Lagrange space of `order` with `n_comp`
/// components in `mesh`'s dimension.
fn case_operator<R: EvalPrecision>(
    mesh: &Arc<Mesh>,
    order: usize,
    n_comp: usize,
    case: &Case,
    backend: &Backend,
) -> Operator<R> {
    let aux = (case.aux)(mesh.dim());
    operator(
        mesh,
        order,
        n_comp,
        aux,
        case.physics,
        &case.constants,
        backend,
    )
}

/// A test case: physics, components (per dim), aux, constants.
struct Case {
    name: &'static str,
    physics: &'static dyn PointwiseEvalBoth,
    vector: bool,
    aux: fn(usize) -> AuxSpace,
    constants: Vec<f64>,
}

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "laplacian",
            physics: &Laplacian,
            vector: false,
            aux: |_| AuxSpace::None,
            constants: vec![],
        },
        Case {
            name: "poisson",
            physics: &Poisson,
            vector: false,
            aux: |_| AuxSpace::None,
            constants: vec![2.5],
        },
        Case {
            name: "coefficient field",
            physics: &LaplacianCoefficient,
            vector: false,
            aux: |_| AuxSpace::Field { n_comp: 1 },
            constants: vec![],
        },
        Case {
            name: "coefficient P0",
            physics: &LaplacianCoefficient,
            vector: false,
            aux: |_| AuxSpace::Cell { n_comp: 1 },
            constants: vec![],
        },
        Case {
            name: "nonlinear diffusion",
            physics: &NonlinearDiffusion,
            vector: false,
            aux: |_| AuxSpace::None,
            constants: vec![],
        },
        Case {
            name: "lame",
            physics: &Lame,
            vector: true,
            aux: |_| AuxSpace::None,
            constants: LameParameters::new(1.3, 0.7).constants().to_vec(),
        },
    ]
}

/// Sets a positive random aux field when the operator has one.
fn set_aux<R: Real>(res: &mut Operator<R>, seed: u64) {
    let n = res.aux_len();
    if n > 0 {
        let a: Vec<R> = Rng::new(seed)
            .vec(n, 0.5, 2.0)
            .into_iter()
            .map(R::from_f64)
            .collect();
        res.set_aux(&a).unwrap();
    }
}

/// The larger of `a` and `b`, NaN if either is (`f64::max` would drop a
/// NaN, and a NaN entry would pass every tolerance).
fn max_or_nan(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |m, x| max_or_nan(m, x.abs()))
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .fold(0.0, |m, (x, y)| max_or_nan(m, (x - y).abs()))
}

/// J·v, the assembled J times v, and central differences of F at u.
fn three_ways(res: &mut Operator<f64>, u: &[f64], v: &[f64]) -> [Vec<f64>; 3] {
    let (uu, vv) = (res.vector_from(u).unwrap(), res.vector_from(v).unwrap());
    let mut jv = res.vector().unwrap();
    res.jacobian_action(&uu, &vv, &mut jv).unwrap();
    let a = res.assemble_jacobian(&uu).unwrap();
    let mut av = vec![0.0; v.len()];
    a.spmv(v, &mut av).unwrap();
    let h = 1e-5;
    let shifted = |s: f64| -> Vec<f64> { u.iter().zip(v).map(|(a, b)| a + s * b).collect() };
    let (mut fp, mut fm) = (res.vector().unwrap(), res.vector().unwrap());
    let (up, um) = (
        res.vector_from(&shifted(h)).unwrap(),
        res.vector_from(&shifted(-h)).unwrap(),
    );
    res.apply(&up, &mut fp).unwrap();
    res.apply(&um, &mut fm).unwrap();
    let (fp, fm) = (fp.to_host().unwrap(), fm.to_host().unwrap());
    let fd = fp
        .iter()
        .zip(&fm)
        .map(|(a, b)| (a - b) / (2.0 * h))
        .collect();
    [jv.to_host().unwrap(), av, fd]
}

fn check_three_ways(backend: &Backend) {
    for case in cases() {
        for dim in [2, 3] {
            for order in [1, 2] {
                let m = mesh(dim, if dim == 2 { 5 } else { 2 });
                let nc = if case.vector { dim } else { 1 };
                let mut res = case_operator::<f64>(&m, order, nc, &case, backend);
                set_aux(&mut res, 3);
                let n = res.space().n_dofs();
                let u = Rng::new(7).vec(n, -1.0, 1.0);
                let v = Rng::new(8).vec(n, -1.0, 1.0);
                let [jv, av, fd] = three_ways(&mut res, &u, &v);
                let scale = max_abs(&jv).max(1e-300);
                let what = format!("{} {dim}D P{order} on {}", case.name, backend.describe());
                assert!(max_diff(&jv, &av) <= 1e-12 * scale, "J·v vs A·v: {what}");
                assert!(
                    max_diff(&jv, &fd) <= 1e-7 * scale,
                    "J·v vs differences: {what}"
                );
            }
        }
    }
}

#[test]
fn matrix_free_action_equals_assembled_matrix_and_differences_natively() {
    check_three_ways(&Backend::native());
}

#[test]
fn matrix_free_action_equals_assembled_matrix_and_differences_on_the_device() {
    check_three_ways(&opencl(&device()));
}

#[test]
fn device_action_and_diagonal_equal_native() {
    let device = device();
    for case in cases() {
        for dim in [2, 3] {
            for order in [1, 2] {
                let m = mesh(dim, if dim == 2 { 6 } else { 3 });
                let nc = if case.vector { dim } else { 1 };
                let mut native = case_operator::<f64>(&m, order, nc, &case, &Backend::native());
                let mut dev = case_operator::<f64>(&m, order, nc, &case, &opencl(&device));
                set_aux(&mut native, 4);
                set_aux(&mut dev, 4);
                let n = native.space().n_dofs();
                let u = Rng::new(9).vec(n, -1.0, 1.0);
                let v = Rng::new(10).vec(n, -1.0, 1.0);
                let what = format!("{} {dim}D P{order}", case.name);

                let mut host_jv = native.vector().unwrap();
                let (hu, hv) = (
                    native.vector_from(&u).unwrap(),
                    native.vector_from(&v).unwrap(),
                );
                native.jacobian_action(&hu, &hv, &mut host_jv).unwrap();
                let host_jv = host_jv.to_host().unwrap();
                let (du, dv) = (dev.vector_from(&u).unwrap(), dev.vector_from(&v).unwrap());
                for assembly in [Assembly::Atomic, Assembly::Deterministic] {
                    dev.set_assembly(assembly).unwrap();
                    let mut jv = dev.vector().unwrap();
                    dev.jacobian_action(&du, &dv, &mut jv).unwrap();
                    let jv = jv.to_host().unwrap();
                    let tol = 1e-12 * max_abs(&host_jv);
                    assert!(max_diff(&jv, &host_jv) <= tol, "J·v {assembly:?}: {what}");
                }

                let len = native.jacobian_diagonal_len();
                let mut hd = Vector::host_zeros(len);
                native.jacobian_diagonal(&hu, &mut hd).unwrap();
                let hd = hd.to_host().unwrap();
                let mut dd = Vector::device_zeros(&device, len).unwrap();
                dev.jacobian_diagonal(&du, &mut dd).unwrap();
                let dd = dd.to_host().unwrap();
                assert!(max_diff(&dd, &hd) <= 1e-12 * max_abs(&hd), "diag: {what}");

                // the point-block diagonal is the assembled matrix's
                let a = native.assemble_jacobian(&hu).unwrap();
                let blocks = a.point_block_diagonal(nc).unwrap();
                assert!(
                    max_diff(&blocks, &hd) <= 1e-13 * max_abs(&hd),
                    "blocks: {what}"
                );
            }
        }
    }
}

/// The assembled Jacobian of a single-precision residual comes from the
/// physics' pointwise Jacobians evaluated in `f32` (`PointwiseEval<f32>`),
/// integrated in `f64`: times `v` it is the double-precision matrix-free
/// action `J(u)·v` (the tangent, another path; same mesh, state, aux and
/// constants) to `f32` rounding, and it is symmetric to `f64` rounding
/// exactly when the double-precision matrix is (Cholesky, on multigrid's
/// coarsest level, requires it), for every physics of [`cases`].
#[test]
fn single_precision_assembled_jacobian_is_the_double_action_to_rounding() {
    for case in cases() {
        for (dim, order) in [(2, 2), (3, 1)] {
            let m = mesh(dim, if dim == 2 { 4 } else { 2 });
            let nc = if case.vector { dim } else { 1 };
            let native = Backend::native();
            let mut r32 = case_operator::<f32>(&m, order, nc, &case, &native);
            let mut r64 = case_operator::<f64>(&m, order, nc, &case, &native);
            set_aux(&mut r32, 3);
            set_aux(&mut r64, 3);
            let n = r64.space().n_dofs();
            let u32: Vec<f32> = Rng::new(7)
                .vec(n, -1.0, 1.0)
                .iter()
                .map(|&x| x as f32)
                .collect();
            let u64: Vec<f64> = u32.iter().map(|&x| x as f64).collect();
            let v = Rng::new(8).vec(n, -1.0, 1.0);
            let u = r32.vector_from(&u32).unwrap();
            let a32 = r32.assemble_jacobian(&u).unwrap();
            let mut av = vec![0.0; n];
            a32.spmv(&v, &mut av).unwrap();
            let (u, vv) = (r64.vector_from(&u64).unwrap(), r64.vector_from(&v).unwrap());
            let mut jv = r64.vector().unwrap();
            r64.jacobian_action(&u, &vv, &mut jv).unwrap();
            let jv = jv.to_host().unwrap();
            let a64 = r64.assemble_jacobian(&u).unwrap();
            let symmetric = |a: &femquad::sparse::CsrMatrix| a.check_symmetric(1e-12).is_ok();
            assert_eq!(
                symmetric(&a32),
                symmetric(&a64),
                "{} {dim}D P{order}: symmetric in f32 {}, in f64 {}",
                case.name,
                symmetric(&a32),
                symmetric(&a64)
            );
            let d = max_diff(&av, &jv);
            assert!(
                d <= 1e-5 * max_abs(&jv),
                "{} {dim}D P{order}: the f32 assembled A·v differs from the f64 J·v by {d:e} \
                 (largest entry {:e})",
                case.name,
                max_abs(&jv)
            );
        }
    }
}

#[test]
fn single_precision_device_action_matches_native() {
    let device = device();
    let m = mesh(2, 8);
    let nonlinear = |backend: &Backend| {
        operator::<f32>(&m, 1, 1, AuxSpace::None, &NonlinearDiffusion, &[], backend)
    };
    let mut native = nonlinear(&Backend::native());
    let mut dev = nonlinear(&opencl(&device));
    let n = native.space().n_dofs();
    let u: Vec<f32> = Rng::new(1)
        .vec(n, -1.0, 1.0)
        .iter()
        .map(|&x| x as f32)
        .collect();
    let v: Vec<f32> = Rng::new(2)
        .vec(n, -1.0, 1.0)
        .iter()
        .map(|&x| x as f32)
        .collect();
    let run = |res: &mut Operator<f32>| -> Vec<f64> {
        let (uu, vv) = (res.vector_from(&u).unwrap(), res.vector_from(&v).unwrap());
        let mut jv = res.vector().unwrap();
        res.jacobian_action(&uu, &vv, &mut jv).unwrap();
        jv.to_host().unwrap().iter().map(|&x| x as f64).collect()
    };
    let (a, b) = (run(&mut native), run(&mut dev));
    assert!(max_diff(&a, &b) <= 1e-5 * max_abs(&a));
}

#[test]
fn for_linear_physics_the_action_is_the_residual_difference() {
    let device = device();
    for backend in [Backend::native(), opencl(&device)] {
        for (physics, k) in [
            (&Poisson as &dyn PointwiseEvalBoth, vec![3.0]),
            (&Laplacian, vec![]),
        ] {
            let m = mesh(2, 6);
            let mut res = operator::<f64>(&m, 2, 1, AuxSpace::None, physics, &k, &backend);
            let n = res.space().n_dofs();
            let u = res.vector_from(&Rng::new(5).vec(n, -1.0, 1.0)).unwrap();
            let v = res.vector_from(&Rng::new(6).vec(n, -1.0, 1.0)).unwrap();
            let mut jv = res.vector().unwrap();
            res.jacobian_action(&u, &v, &mut jv).unwrap();
            let (mut fv, mut f0) = (res.vector().unwrap(), res.vector().unwrap());
            res.apply(&v, &mut fv).unwrap();
            let zero = res.vector().unwrap();
            res.apply(&zero, &mut f0).unwrap();
            let (jv, fv, f0) = (
                jv.to_host().unwrap(),
                fv.to_host().unwrap(),
                f0.to_host().unwrap(),
            );
            let diff: Vec<f64> = fv.iter().zip(&f0).map(|(a, b)| a - b).collect();
            assert!(max_diff(&jv, &diff) <= 1e-13 * max_abs(&fv).max(max_abs(&f0)));
        }
    }
}

#[test]
fn assembled_p1_laplacian_is_the_closed_form_stiffness() {
    // K_c = |c| G Gᵀ with G the rows of the physical gradients of the P1
    // basis: ∇φ_0 = −Σ_i ∇φ_i, ∇φ_{i+1} = J⁻ᵀ e_i.
    for dim in [2, 3] {
        let m = mesh(dim, 3);
        let native = Backend::native();
        let mut res = operator::<f64>(&m, 1, 1, AuxSpace::None, &Laplacian, &[], &native);
        let n = res.space().n_dofs();
        let u = res.vector().unwrap();
        let a = res.assemble_jacobian(&u).unwrap();
        let mut dense = vec![0.0; n * n];
        for c in 0..m.n_cells() {
            let cell = m.cell(c);
            let x0 = m.vertex(cell[0] as usize).to_vec();
            // J[d][i] = X_{i+1}[d] − X_0[d]
            let mut j = vec![0.0; dim * dim];
            for i in 0..dim {
                let xi = m.vertex(cell[i + 1] as usize);
                for d in 0..dim {
                    j[d * dim + i] = xi[d] - x0[d];
                }
            }
            let (det, inv) = invert(&j, dim);
            let volume = det / if dim == 2 { 2.0 } else { 6.0 };
            // grads[b][d]: ∇φ_{i+1}[d] = J⁻¹[i][d]
            let mut grads = vec![vec![0.0; dim]; dim + 1];
            for i in 0..dim {
                for d in 0..dim {
                    grads[i + 1][d] = inv[i * dim + d];
                    grads[0][d] -= inv[i * dim + d];
                }
            }
            for (a_, &na) in cell.iter().enumerate() {
                for (b_, &nb) in cell.iter().enumerate() {
                    let dot: f64 = (0..dim).map(|d| grads[a_][d] * grads[b_][d]).sum();
                    dense[na as usize * n + nb as usize] += volume * dot;
                }
            }
        }
        let assembled = a.to_dense().unwrap();
        assert!(
            max_diff(&assembled, &dense) <= 1e-12 * max_abs(&dense),
            "{dim}D"
        );
    }
}

/// Determinant and inverse of a 2×2 or 3×3 row-major matrix.
fn invert(j: &[f64], dim: usize) -> (f64, Vec<f64>) {
    if dim == 2 {
        let det = j[0] * j[3] - j[1] * j[2];
        (det, vec![j[3] / det, -j[1] / det, -j[2] / det, j[0] / det])
    } else {
        let c = |r: usize, s: usize| j[r * 3 + s];
        let cof = |r: usize, s: usize| {
            let (r1, r2) = ((r + 1) % 3, (r + 2) % 3);
            let (s1, s2) = ((s + 1) % 3, (s + 2) % 3);
            c(r1, s1) * c(r2, s2) - c(r1, s2) * c(r2, s1)
        };
        let det: f64 = (0..3).map(|s| c(0, s) * cof(0, s)).sum();
        let mut inv = vec![0.0; 9];
        for r in 0..3 {
            for s in 0..3 {
                inv[s * 3 + r] = cof(r, s) / det;
            }
        }
        (det, inv)
    }
}

#[test]
fn bad_input_names_the_argument() {
    let m = mesh(2, 3);
    for backend in [Backend::native(), opencl(&device())] {
        let mut res = operator::<f64>(&m, 1, 1, AuxSpace::None, &Laplacian, &[], &backend);
        let n = res.space().n_dofs();
        let u = res.vector().unwrap();
        // vectors of the wrong length where the operator's vectors live
        let zeros = |len: usize| match &backend {
            Backend::Native(_) => Vector::host_zeros(len),
            Backend::OpenCl { device, .. } => Vector::device_zeros(device, len).unwrap(),
        };
        let short = zeros(n - 1);
        let mut out = res.vector().unwrap();
        let err = res
            .jacobian_action(&u, &short, &mut out)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "invalid argument `v`: expected {n} entries (the space's dofs), got {}",
                n - 1
            ),
            "{}",
            backend.describe()
        );
        let mut diag = zeros(n + 1);
        let err = res
            .jacobian_diagonal(&u, &mut diag)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "invalid argument `out`: expected {n} entries (n_nodes·N_comp², the point-block \
                 diagonal), got {}",
                n + 1
            ),
            "{}",
            backend.describe()
        );
    }
}
