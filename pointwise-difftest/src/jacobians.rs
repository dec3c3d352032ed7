//! The Jacobian checks of the runtime (copied into the generated crates
//! with it): PETSc's `g0 … g3`, applied to the direction of the points,
//! must give the tangent.
//!
//! - **native** (`f64`; `jacobian-ok`, `jacobian-mismatch`): the native
//!   Jacobian against the native tangent, norm-wise relative 10⁻¹⁰ per
//!   output array;
//! - **OpenCL** (`f64` and `f32`; `jacobian-device-ok`,
//!   `jacobian-device-mismatch`, `jacobian-build-failure`): the OpenCL
//!   Jacobian against the OpenCL tangent, norm-wise relative 10⁻¹⁰ (`f64`)
//!   and 10⁻³ (`f32`: `J·v` sums the products in another order than the
//!   tangent; both relative to the larger of the tangent and the sums of
//!   `|g|·|v|`, where a tangent cancels to a few ulps, and not beyond 64
//!   ulps of the direction, the rounding noise of a tangent that cancels
//!   in another order than the Jacobian's entries). With the
//!   native-versus-OpenCL tangent check, this ties the
//!   OpenCL Jacobian to the native derivatives without a reach of its own.
//!
//! A check that fails is tried again with the rounding noise of the native
//! tangents (`derivatives::rounding_reach`: a derivative formula that
//! cancels rounds at the scale of its terms, which neither the tangent nor
//! `|g|·|v|` shows, and `J·v` rounds them column by column): a difference
//! within twice its norm is `jacobian-explained` /
//! `jacobian-device-explained` (`[tangent-noise]`, listed, not a finding).
//! An `f32` OpenCL Jacobian whose infinite entries are all finite but beyond
//! `f32`'s range in the `f64` Jacobian is explained too (`[range]`: `J·v`
//! is infinite where the tangent, each entry times a direction entry below
//! one, is not).
//! An OpenCL Jacobian that is not finite (or a tangent that is, against a
//! finite Jacobian) at a point where the plain copy gives a math function
//! a NaN is explained too (`[nan-fold]`: the two are compiled apart, PoCL
//! may fold the NaN in one, see `pt::set_poison`).
//!
//! Arrays with a non-finite tangent entry (an overflow, a NaN) are not
//! compared.

use crate::runtime::Body;
use femquad::Real;
use femquad::layout::{jac_g0, jac_g1, jac_g2, jac_g3};
use femquad::opencl::probe::{Inputs, Jacobians, Outputs, Probe};
use femquad::physics::{EvalPrecision, Pointwise, PointwiseEval};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// `(J·v)₀, (J·v)₁` at one point: the blocks `g` applied to `(du, d∇u)`;
/// with `abs`, the same sums of `|g|·|v|` (the scale of the products).
fn apply(
    g: [&[f64]; 4],
    du: &[f64],
    dgu: &[f64],
    nc: usize,
    dim: usize,
    abs: bool,
) -> (Vec<f64>, Vec<f64>) {
    let m = |a: f64, b: f64| if abs { (a * b).abs() } else { a * b };
    let mut f0 = vec![0.0; nc];
    let mut f1 = vec![0.0; nc * dim];
    for fc in 0..nc {
        for gc in 0..nc {
            f0[fc] += m(g[0][jac_g0(fc, gc, nc)], du[gc]);
            for e in 0..dim {
                f0[fc] += m(g[1][jac_g1(fc, gc, e, nc, dim)], dgu[gc * dim + e]);
                f1[fc * dim + e] += m(g[2][jac_g2(fc, gc, e, nc, dim)], du[gc]);
                for f in 0..dim {
                    f1[fc * dim + e] += m(g[3][jac_g3(fc, gc, e, f, nc, dim)], dgu[gc * dim + f]);
                }
            }
        }
    }
    (f0, f1)
}

/// Norm-wise difference of `a` from `b` relative to the larger of `‖b‖`
/// and `‖scale‖` (∞ where both are 0 and `a ≠ b`); 0 when the difference
/// is at most `floor`.
pub fn rel_norm(a: &[f64], b: &[f64], scale: &[f64], floor: f64) -> f64 {
    let d: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let norm = |v: &[f64]| v.iter().map(|y| y * y).sum::<f64>().sqrt();
    let n = norm(b).max(norm(scale));
    if d <= floor {
        0.0
    } else if n == 0.0 {
        f64::INFINITY
    } else {
        d / n
    }
}

/// The rounding noise of the tangents at each point, per output array
/// (`f0`, `f1`): see `derivatives::rounding_reach`.
type Noise<'a> = &'a dyn Fn(usize) -> (Vec<f64>, Vec<f64>);

/// The largest norm-wise difference of `J·v` (from `g(p)`, the four blocks
/// at point `p`) from the tangents `t0(p)`, `t1(p)`, with its detail line;
/// with `noise`, a difference within twice the norm of the tangent's
/// rounding noise counts as none.
fn worst_of(
    physics: &dyn Pointwise,
    i: &Inputs<f64>,
    dim: usize,
    g: &dyn Fn(usize) -> [Vec<f64>; 4],
    t: &dyn Fn(usize) -> (Vec<f64>, Vec<f64>),
    eps: f64,
    noise: Option<Noise<'_>>,
) -> (f64, String, usize) {
    let nc = i.sizes.n_comp;
    let info = physics.info();
    let (mut worst, mut detail, mut at) = (0.0f64, String::new(), 0);
    for p in 0..i.points {
        let g = g(p);
        let (du, dgu) = i.direction(p);
        // Rounding noise of a tangent that cancels: a few dozen ulps of
        // the direction (its entries are at most 1).
        let norm_v = du.iter().chain(dgu).map(|x| x * x).sum::<f64>().sqrt();
        let floor = 64.0 * eps * norm_v;
        let blocks = [&g[0][..], &g[1], &g[2], &g[3]];
        let (j0, j1) = apply(blocks, du, dgu, nc, dim, false);
        let (s0, s1) = apply(blocks, du, dgu, nc, dim, true);
        let (t0, t1) = t(p);
        let (r0, r1) = noise.map(|n| n(p)).unwrap_or_default();
        let norm = |v: &[f64]| v.iter().map(|y| y * y).sum::<f64>().sqrt();
        for (has, what, jv, t, scale, r) in [
            (info.has_f0, "df0", &j0, &t0, &s0, &r0),
            (info.has_f1, "df1", &j1, &t1, &s1, &r1),
        ] {
            if !has || t.iter().any(|x| !x.is_finite()) {
                continue;
            }
            let d = rel_norm(jv, t, scale, floor.max(2.0 * norm(r)));
            if d > worst || d.is_nan() {
                worst = if d.is_nan() { f64::INFINITY } else { d };
                detail = format!("point {p} {what}: J·v {jv:?} tangent {t:?}");
                at = p;
            }
        }
    }
    (worst, detail, at)
}

/// The native Jacobian against the native tangents `native` (`f64`).
pub fn native_versus_tangent(b: &Body, i: &Inputs<f64>, native: &Outputs<f64>, dim: usize) {
    let id = b.id;
    let n = i.sizes.jacobians();
    let mut blocks: Vec<[Vec<f64>; 4]> = Vec::new();
    for p in 0..i.points {
        let mut g = n.map(|k| vec![f64::NAN; k]);
        let r = catch_unwind(AssertUnwindSafe(|| {
            let [g0, g1, g2, g3] = &mut g;
            PointwiseEval::<f64>::eval_jacobian(b.physics, dim, &i.point(p), g0, g1, g2, g3)
        }));
        if !matches!(r, Ok(Ok(()))) {
            println!("result {id} {dim} f64 jacobian-mismatch inf the Jacobian fails at point {p}");
            return;
        }
        blocks.push(g);
    }
    let t = |p: usize| (native.f0(p).to_vec(), native.f1(p).to_vec());
    let g = |p: usize| blocks[p].clone();
    let (worst, detail, _) = worst_of(b.physics, i, dim, &g, &t, f64::EPSILON, None);
    if worst <= 1e-10 {
        println!("result {id} {dim} f64 jacobian-ok {worst:e} {detail}");
        return;
    }
    let (v, worst, detail) = with_noise(b, i, native, 1e-10, (worst, detail), &|noise| {
        worst_of(b.physics, i, dim, &g, &t, f64::EPSILON, Some(noise))
    });
    println!("result {id} {dim} f64 jacobian-{v} {worst:e} {detail}");
}

/// A check that failed (`first`) again, with the rounding noise of the
/// native tangents at `i` (`derivatives::rounding_reach`): `explained`
/// (the detail tagged `[tangent-noise]`) when it then passes within `tol`,
/// else `mismatch` with the first result.
fn with_noise<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
    native: &Outputs<R>,
    tol: f64,
    first: (f64, String),
    check: &dyn Fn(Noise<'_>) -> (f64, String, usize),
) -> (&'static str, f64, String) {
    let r = crate::derivatives::rounding_reach(b, i, native, 0x2545_f491_4f6c_dd1d);
    let [n0, n1] = i.sizes.outputs();
    let all0 = n0 * i.points;
    let noise = |p: usize| {
        (
            r[p * n0..(p + 1) * n0].to_vec(),
            r[all0 + p * n1..all0 + (p + 1) * n1].to_vec(),
        )
    };
    let (worst, ..) = check(&noise);
    if worst <= tol {
        (
            "explained",
            first.0,
            format!(
                "[tangent-noise] {} (within the rounding noise of the tangent: {worst:e} with it)",
                first.1
            ),
        )
    } else {
        ("mismatch", first.0, first.1)
    }
}

/// The OpenCL Jacobians of `bodies` at `inputs`, one program per batch,
/// split until the programs that do not build are alone (as
/// `runtime::device`).
fn device<R: Real>(
    probe: &Probe,
    bodies: &[&Body],
    inputs: &[Inputs<R>],
    dim: usize,
) -> Vec<Result<Jacobians<R>, String>> {
    crate::runtime::announce(bodies, dim, R::PRECISION, "jacobian");
    let items: Vec<(&dyn Pointwise, &Inputs<R>)> = bodies
        .iter()
        .map(|b| b.physics as &dyn Pointwise)
        .zip(inputs.iter())
        .collect();
    match probe.jacobians(dim, &items) {
        Ok(out) => out.into_iter().map(Ok).collect(),
        Err(e) if bodies.len() == 1 => vec![Err(e.to_string())],
        Err(_) => {
            let h = bodies.len() / 2;
            let mut out = device(probe, &bodies[..h], &inputs[..h], dim);
            out.extend(device(probe, &bodies[h..], &inputs[h..], dim));
            out
        }
    }
}

/// Whether the `f32` Jacobian `g` at point `p` is infinite only where the
/// native `f64` Jacobian is finite and beyond `f32`'s range, down to 2⁻⁴ of
/// `f32::MAX` (a product of entries near the end of the range overflows in
/// `f32` on its way): `J·v` is then infinite while the tangent, the entries
/// times a direction of entries below one, is finite in both precisions.
fn overflows_f32(b: &Body, i: &Inputs<f64>, dim: usize, g: &[Vec<f64>; 4], p: usize) -> bool {
    let mut wide = i.sizes.jacobians().map(|k| vec![f64::NAN; k]);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let [g0, g1, g2, g3] = &mut wide;
        PointwiseEval::<f64>::eval_jacobian(b.physics, dim, &i.point(p), g0, g1, g2, g3)
    }));
    if !matches!(r, Ok(Ok(()))) {
        return false;
    }
    let limit = f32::MAX as f64 / 16.0;
    let pairs = || g.iter().flatten().zip(wide.iter().flatten());
    pairs().any(|(x, _)| x.is_infinite())
        && pairs().filter(|(x, _)| !x.is_finite()).all(|(x, w)| {
            x.is_infinite() && w.is_finite() && w.abs() >= limit && x.signum() == w.signum()
        })
}

/// The points at which the plain copy of `b` gives a math function a NaN.
fn nan_points<R: Real>(b: &Body, i: &Inputs<R>) -> Vec<usize> {
    crate::runtime::pt::set(0);
    crate::runtime::pt::nan_points();
    let _ = crate::runtime::evaluate::<R>(crate::runtime::plain::<R>(b), i);
    crate::runtime::pt::nan_points()
}

/// The OpenCL Jacobians of `bodies` against their OpenCL tangents
/// `tangents` (`None` where the tangent did not build).
pub fn device_versus_tangent<R: EvalPrecision>(
    probe: &Probe,
    bodies: &[&Body],
    inputs: &[Inputs<R>],
    tangents: &[Option<Outputs<f64>>],
    dim: usize,
) {
    let prec = R::PRECISION;
    let tol = match prec {
        femquad::Precision::F64 => 1e-10,
        femquad::Precision::F32 => 1e-3,
    };
    let jacobians = device(probe, bodies, inputs, dim);
    for (((b, i), t), j) in bodies.iter().zip(inputs).zip(tangents).zip(jacobians) {
        let id = b.id;
        let j = match j {
            Ok(j) => j,
            Err(e) => {
                let first = e.lines().take(12).collect::<Vec<_>>().join(" | ");
                println!("result {id} {dim} {prec} jacobian-build-failure 0 {first}");
                continue;
            }
        };
        let Some(t) = t else { continue };
        let i64: Inputs<f64> = i.convert();
        let wide = |v: &[R]| v.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        let g = |p: usize| [0, 1, 2, 3].map(|k| wide(j.g(k, p)));
        let tp = |p: usize| (t.f0(p).to_vec(), t.f1(p).to_vec());
        let eps = match prec {
            femquad::Precision::F64 => f64::EPSILON,
            femquad::Precision::F32 => f32::EPSILON as f64,
        };
        let (worst, detail, at) = worst_of(b.physics, &i64, dim, &g, &tp, eps, None);
        if worst <= tol {
            println!("result {id} {dim} {prec} jacobian-device-ok {worst:e} {detail}");
            continue;
        }
        if worst.is_infinite() && nan_points(b, i).contains(&at) {
            // The Jacobian and the tangent are compiled apart: PoCL may
            // fold a NaN argument of a math function in one and not in the
            // other (`pt::set_poison`).
            println!(
                "result {id} {dim} {prec} jacobian-device-explained {worst:e} [nan-fold] {detail} \
                 (the plain copy gives a math function a NaN at this point)"
            );
            continue;
        }
        if worst.is_infinite()
            && prec == femquad::Precision::F32
            && overflows_f32(b, &i64, dim, &g(at), at)
        {
            println!(
                "result {id} {dim} {prec} jacobian-device-explained {worst:e} [range] {detail} \
                 (every infinite entry of the float Jacobian is beyond float's range in double)"
            );
            continue;
        }
        let Ok(native) = crate::derivatives::native_tangents(b, i) else {
            println!("result {id} {dim} {prec} jacobian-device-mismatch {worst:e} {detail}");
            continue;
        };
        let (v, worst, detail) = with_noise(b, i, &native, tol, (worst, detail), &|noise| {
            worst_of(b.physics, &i64, dim, &g, &tp, eps, Some(noise))
        });
        println!("result {id} {dim} {prec} jacobian-device-{v} {worst:e} {detail}");
    }
}
