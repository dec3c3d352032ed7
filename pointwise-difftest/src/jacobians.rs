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
//! Every point is compared and classified. A point beyond the tolerance
//! is tried again with the rounding noise of the native tangents
//! (`derivatives::rounding_reach`: a derivative formula that cancels
//! rounds at the scale of its terms, which neither the tangent nor
//! `|g|·|v|` shows, and `J·v` rounds them column by column): within twice
//! its norm it is explained (`tangent-noise`). On the device, a point whose
//! `J·v` is not finite where its tangent is (or the reverse) is explained
//! where the plain copy gives a math function a NaN there (`nan-fold`: the
//! two are compiled apart, PoCL may fold the NaN in one, see
//! `pt::Calls::NanArgument`), and in `f32` where every infinite entry of
//! the Jacobian is finite but beyond `f32`'s range in the `f64` Jacobian
//! (`range`: `J·v` is infinite where the tangent, each entry times a
//! direction entry below one, is not). In both, an entry not finite on one
//! side only is explained where the function's value is not finite or a
//! non-finite or singular intermediate lies on its path (`nonfinite`, see
//! `crate::paths`). The check is `jacobian-explained` /
//! `jacobian-device-explained` (listed with the kinds of its points, not
//! a finding) when every point beyond the tolerance is explained, and a
//! mismatch (a finding, with its worst unexplained point) otherwise.
//!
//! Entries not finite on both sides (an overflow, a NaN in both) match;
//! they are counted in the line. Whether such a tangent is right is
//! decided by the tangent check (native against OpenCL) and by AD against
//! differences, which require a non-finite or singular intermediate on the
//! entry's path.

use crate::paths::Paths;
use crate::runtime::Body;
use femquad::Real;
use femquad::layout::{jac_g0, jac_g1, jac_g2, jac_g3};
use femquad::opencl::probe::{Inputs, Jacobians, Outputs, Probe};
use femquad::physics::{EvalPrecision, Pointwise};
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

/// `J·v` at one point against the tangent, per output array the physics
/// has: entries not finite on both sides match (counted: whether such a
/// tangent is right is the tangent and AD checks' question); an entry
/// finite on one side only is a difference of ∞; the finite entries are
/// compared norm-wise ([`rel_norm`], the rounding noise `noise` of the
/// tangent entries, twice its norm, counting as none).
struct Point {
    /// The largest norm-wise difference of its arrays.
    d: f64,
    detail: String,
    /// Entries (`f0` then `f1`, all points) finite on one side only.
    one_sided: Vec<usize>,
    /// Entries not finite on both sides.
    both: usize,
}

/// Compares `J·v` (from `g(p)`, the four blocks at point `p`) with the
/// tangents `t(p)` at every point (see [`Point`]); `noise(p)`: the
/// rounding noise of the tangent entries at `p`, per output array.
fn points(
    physics: &dyn Pointwise,
    i: &Inputs<f64>,
    g: &dyn Fn(usize) -> [Vec<f64>; 4],
    t: &dyn Fn(usize) -> (Vec<f64>, Vec<f64>),
    eps: f64,
    noise: &dyn Fn(usize) -> (Vec<f64>, Vec<f64>),
) -> Vec<Point> {
    let (nc, dim) = (i.sizes.n_comp, i.sizes.dim);
    let [n0, n1] = i.sizes.outputs();
    let info = physics.info();
    let norm = |v: &[f64]| v.iter().map(|y| y * y).sum::<f64>().sqrt();
    (0..i.points)
        .map(|p| {
            let g = g(p);
            let (du, dgu, _) = i.direction(p);
            // Rounding noise of a tangent that cancels: a few dozen ulps of
            // the direction (its entries are at most 1).
            let floor = 64.0 * eps * norm(&du.iter().chain(dgu).copied().collect::<Vec<_>>());
            let blocks = [&g[0][..], &g[1], &g[2], &g[3]];
            let (j0, j1) = apply(blocks, du, dgu, nc, dim, false);
            let (s0, s1) = apply(blocks, du, dgu, nc, dim, true);
            let (t0, t1) = t(p);
            let (r0, r1) = noise(p);
            let mut out = Point {
                d: 0.0,
                detail: String::new(),
                one_sided: Vec::new(),
                both: 0,
            };
            for (has, what, first, jv, t, scale, r) in [
                (info.has_f0, "df0", p * n0, &j0, &t0, &s0, &r0),
                (
                    info.has_f1,
                    "df1",
                    n0 * i.points + p * n1,
                    &j1,
                    &t1,
                    &s1,
                    &r1,
                ),
            ] {
                if !has {
                    continue;
                }
                let mut finite = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for k in 0..t.len() {
                    match (jv[k].is_finite(), t[k].is_finite()) {
                        (true, true) => {
                            finite.0.push(jv[k]);
                            finite.1.push(t[k]);
                            finite.2.push(scale[k]);
                            finite.3.push(r.get(k).copied().unwrap_or(0.0));
                        }
                        (false, false) => out.both += 1,
                        _ => out.one_sided.push(first + k),
                    }
                }
                let d = if out
                    .one_sided
                    .iter()
                    .any(|&e| e >= first && e < first + t.len())
                {
                    f64::INFINITY
                } else {
                    rel_norm(
                        &finite.0,
                        &finite.1,
                        &finite.2,
                        floor.max(2.0 * norm(&finite.3)),
                    )
                };
                if d > out.d || d.is_nan() {
                    out.d = if d.is_nan() { f64::INFINITY } else { d };
                    out.detail = format!("point {p} {what}: J·v {jv:?} tangent {t:?}");
                }
            }
            out
        })
        .collect()
}

/// The rounding noise of the native tangents `native` of `b` at `i`
/// (`derivatives::rounding_reach`) at each point, per output array.
fn noise_of<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
    native: &Outputs<R>,
) -> Vec<(Vec<f64>, Vec<f64>)> {
    let r = crate::tangents::rounding_reach(b, i, native, 0x2545_f491_4f6c_dd1d);
    let [n0, n1] = i.sizes.outputs();
    let all0 = n0 * i.points;
    (0..i.points)
        .map(|p| {
            (
                r[p * n0..(p + 1) * n0].to_vec(),
                r[all0 + p * n1..all0 + (p + 1) * n1].to_vec(),
            )
        })
        .collect()
}

/// No rounding noise.
fn silent(_: usize) -> (Vec<f64>, Vec<f64>) {
    (Vec::new(), Vec::new())
}

/// The line of a Jacobian check (`jacobian` or `jacobian-device`) from
/// its points (`first`, compared with `tol`) and the explanation of each
/// point beyond `tol` (`why(p)`: `Some(kind)` or `None`): `ok` when every
/// point is within `tol`, `explained` (`[kinds]`, listed) when each point
/// beyond it has an explanation, `mismatch` (the worst unexplained point)
/// otherwise.
fn line(
    check: &str,
    first: &[Point],
    tol: f64,
    why: &mut dyn FnMut(usize) -> Option<&'static str>,
) -> String {
    let both: usize = first.iter().map(|p| p.both).sum();
    let matched = if both > 0 {
        format!(" ({both} entries not finite in both)")
    } else {
        String::new()
    };
    fn worst<'p>(ps: impl Iterator<Item = &'p Point>) -> Option<&'p Point> {
        ps.fold(None, |w: Option<&Point>, p| match w {
            Some(w) if w.d >= p.d => Some(w),
            _ => Some(p),
        })
    }
    let failing: Vec<usize> = (0..first.len()).filter(|&p| first[p].d > tol).collect();
    if failing.is_empty() {
        let w = worst(first.iter());
        let (d, detail) = w.map(|w| (w.d, w.detail.as_str())).unwrap_or((0.0, ""));
        return format!("{check}-ok {d:e} {detail}{matched}");
    }
    let mut kinds: Vec<&'static str> = Vec::new();
    let mut unexplained = Vec::new();
    for &p in &failing {
        match why(p) {
            Some(k) => {
                if !kinds.contains(&k) {
                    kinds.push(k);
                }
            }
            None => unexplained.push(p),
        }
    }
    if !unexplained.is_empty() {
        let w = worst(unexplained.iter().map(|&p| &first[p])).expect("a point");
        return format!("{check}-mismatch {:e} {}{matched}", w.d, w.detail);
    }
    kinds.sort();
    let w = worst(failing.iter().map(|&p| &first[p])).expect("a point");
    format!(
        "{check}-explained {:e} [{}] {} ({} of {} points explained){matched}",
        w.d,
        kinds.join("+"),
        w.detail,
        failing.len(),
        first.len()
    )
}

/// Whether every entry of `point` finite on one side only is at an entry
/// whose function value is not finite, or on whose path a non-finite or
/// singular intermediate lies (`nonfinite`: see `crate::paths`).
fn nonfinite_explained<R: Real>(point: &Point, paths: &mut Paths<'_, R>) -> bool {
    !point.one_sided.is_empty()
        && point
            .one_sided
            .iter()
            .all(|&e| !paths.finite(e) || paths.singular(e))
}

/// The native Jacobian against the native tangents `native` (`f64`):
/// `<verdict> <worst> <detail>`.
pub fn native_versus_tangent(b: &Body, i: &Inputs<f64>, native: &Outputs<f64>) -> String {
    let dim = i.sizes.dim;
    let n = i.sizes.jacobians();
    let mut blocks: Vec<[Vec<f64>; 4]> = Vec::new();
    for p in 0..i.points {
        let mut g = n.map(|k| vec![f64::NAN; k]);
        let r = catch_unwind(AssertUnwindSafe(|| {
            let [g0, g1, g2, g3] = &mut g;
            f64::physics(b.physics).eval_jacobian(dim, &i.point(p), g0, g1, g2, g3)
        }));
        if !matches!(r, Ok(Ok(()))) {
            return format!("jacobian-mismatch inf the Jacobian fails at point {p}");
        }
        blocks.push(g);
    }
    let t = |p: usize| (native.f0(p).to_vec(), native.f1(p).to_vec());
    let g = |p: usize| blocks[p].clone();
    let first = points(b.physics, i, &g, &t, f64::EPSILON, &silent);
    let mut noise: Option<Vec<Point>> = None;
    let mut paths = Paths::new(b, i, 0x1ac0_b1a5);
    line("jacobian", &first, TOL_F64, &mut |p| {
        let again = noise.get_or_insert_with(|| {
            let r = noise_of(b, i, native);
            points(b.physics, i, &g, &t, f64::EPSILON, &|p| r[p].clone())
        });
        if again[p].d <= TOL_F64 {
            Some("tangent-noise")
        } else if nonfinite_explained(&first[p], &mut paths) {
            Some("nonfinite")
        } else {
            None
        }
    })
}

/// Norm-wise tolerance of `J·v` against the tangent in `f64`.
const TOL_F64: f64 = 1e-10;

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
fn overflows_f32(b: &Body, i: &Inputs<f64>, g: &[Vec<f64>; 4], p: usize) -> bool {
    let mut wide = i.sizes.jacobians().map(|k| vec![f64::NAN; k]);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let [g0, g1, g2, g3] = &mut wide;
        f64::physics(b.physics).eval_jacobian(i.sizes.dim, &i.point(p), g0, g1, g2, g3)
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
/// `tangents` (`None` where the tangent did not build); prints a line for
/// each.
pub fn device_versus_tangent<R: EvalPrecision>(
    probe: &Probe,
    bodies: &[&Body],
    inputs: &[Inputs<R>],
    tangents: &[Option<Outputs<f64>>],
    dim: usize,
) {
    let prec = R::PRECISION;
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
        let wide = |v: &[R]| v.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        let g = |p: usize| [0, 1, 2, 3].map(|k| wide(j.g(k, p)));
        let line = device_compared(b, i, &g, t);
        println!("result {id} {dim} {prec} {line}");
    }
}

/// The OpenCL Jacobian `g(p)` of `b` at `i` against the OpenCL tangents
/// `t`, every point classified (see the module documentation):
/// `<verdict> <worst> <detail>`.
pub(crate) fn device_compared<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
    g: &dyn Fn(usize) -> [Vec<f64>; 4],
    t: &Outputs<f64>,
) -> String {
    let prec = R::PRECISION;
    let (tol, eps) = match prec {
        femquad::Precision::F64 => (TOL_F64, f64::EPSILON),
        femquad::Precision::F32 => (1e-3, f32::EPSILON as f64),
    };
    let i64: Inputs<f64> = i.convert();
    let tp = |p: usize| (t.f0(p).to_vec(), t.f1(p).to_vec());
    let first = points(b.physics, &i64, g, &tp, eps, &silent);
    let mut nan_at: Option<Vec<usize>> = None;
    let mut noise: Option<Option<Vec<Point>>> = None;
    let mut paths = Paths::new(b, i, 0xde71_ce5a);
    line("jacobian-device", &first, tol, &mut |p| {
        let infinite = first[p].d.is_infinite();
        if infinite && nan_at.get_or_insert_with(|| nan_points(b, i)).contains(&p) {
            // The Jacobian and the tangent are compiled apart: PoCL may
            // fold a NaN argument of a math function in one and not in the
            // other (`pt::Calls::NanArgument`).
            return Some("nan-fold");
        }
        if infinite && prec == femquad::Precision::F32 && overflows_f32(b, &i64, &g(p), p) {
            return Some("range");
        }
        let again = noise.get_or_insert_with(|| {
            let native = crate::tangents::native_tangents(b, i).ok()?;
            let r = noise_of(b, i, &native);
            Some(points(b.physics, &i64, g, &tp, eps, &|p| r[p].clone()))
        });
        if again.as_ref().is_some_and(|a| a[p].d <= tol) {
            Some("tangent-noise")
        } else if nonfinite_explained(&first[p], &mut paths) {
            Some("nonfinite")
        } else {
            None
        }
    })
}
