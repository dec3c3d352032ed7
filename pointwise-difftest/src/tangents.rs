//! The native tangents of a program and their rounding noise (copied into
//! the generated crates with the runtime): what both the native-versus-OpenCL
//! tangent checks (`crate::derivatives`) and AD versus differences
//! (`crate::differences`) measure against.

use crate::runtime::Body;
use crate::verdict;
use femquad::Real;
use femquad::opencl::probe::{Inputs, Outputs};
use femquad::physics::{Direction, EvalPrecision};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Trials of [`rounding_reach`], and the ulps each input moves at most: as
/// far as OpenCL's bounds let a math result move (16 for `powf`), so that a
/// derivative formula that amplifies its arguments' rounding (`1/r²` of a
/// residue `r = x % y` with a tiny `y`, where a few ulps of `x` move `r`
/// by a part in a thousand) is measured at the scale the libraries move it.
pub(crate) const NUDGE_TRIALS: u64 = 16;
const NUDGE_ULPS: u64 = 16;

/// `x` moved by `n` ulps of its precision.
fn nudge<R: Real>(x: R, n: i64) -> R {
    use crate::pt::F;
    match R::PRECISION {
        femquad::Precision::F64 => R::from_f64(x.to_f64().nudge(n)),
        femquad::Precision::F32 => R::from_f64((x.to_f64() as f32).nudge(n) as f64),
    }
}

/// The rounding noise of the native tangents, entry by entry (`f0` then
/// `f1`, all points): the largest finite change of `t(v′)/s` from `t(v)`
/// over [`NUDGE_TRIALS`] trials in which every input and the direction
/// move by a random number of ulps (at most [`NUDGE_ULPS`]) and the
/// direction `v′` is then scaled by a random `s` in `[0.5, 2)` (the
/// tangent is linear in it: what changes is rounding). A derivative
/// formula that cancels where the function does not (`2f·(0.1/f)` is 0.2
/// to the ulp, its tangent `0.2f′/f − 0.2f·f′/f²` keeps the rounding of
/// terms of size `f′/f`; `f − (g + f)` keeps that of `g + f`) turns the
/// few-ulp differences of the two libraries' math results into differences
/// this large, which perturbing the plain copy's math results (a
/// difference of the function) cannot show; it is also the rounding noise
/// of a Jacobian applied to the direction against the tangent
/// (`crate::jacobians`), whose columns round at other scales. An input
/// within a few ulps of a decision moves the tangent as far as the
/// decision does.
pub(crate) fn rounding_reach<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
    base: &Outputs<R>,
    seed: u64,
) -> Vec<f64> {
    let all =
        |o: &Outputs<R>| -> Vec<f64> { o.f0.iter().chain(&o.f1).map(|x| x.to_f64()).collect() };
    let base = all(base);
    let mut r = vec![0.0f64; base.len()];
    let mut state = seed | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..NUDGE_TRIALS {
        let mut j = nudged(i, next());
        let scale = 0.5 + 1.5 * (next() >> 11) as f64 / (1u64 << 53) as f64;
        for x in j.du.iter_mut().chain(j.dgrad_u.iter_mut()) {
            *x = R::from_f64(x.to_f64() * scale);
        }
        let Ok(t) = native_tangents(b, &j) else {
            continue;
        };
        for (k, (x, y)) in all(&t).iter().zip(&base).enumerate() {
            let d = verdict::distance(*x / scale, *y);
            if d.is_finite() {
                r[k] = r[k].max(d);
            }
        }
    }
    r
}

/// `i` with every input and the direction moved by a random number of
/// ulps, at most [`NUDGE_ULPS`] (`seed` ≠ 0 draws them).
pub(crate) fn nudged<R: Real>(i: &Inputs<R>, seed: u64) -> Inputs<R> {
    let mut state = seed | 1;
    let mut j = i.clone();
    for v in [
        &mut j.u,
        &mut j.grad_u,
        &mut j.a,
        &mut j.grad_a,
        &mut j.x,
        &mut j.constants,
        &mut j.du,
        &mut j.dgrad_u,
    ] {
        for x in v.iter_mut() {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *x = nudge(
                *x,
                (state % (2 * NUDGE_ULPS + 1)) as i64 - NUDGE_ULPS as i64,
            );
        }
    }
    j
}

/// The native tangents at every point.
pub(crate) fn native_tangents<R: EvalPrecision>(
    b: &Body,
    i: &Inputs<R>,
) -> Result<Outputs<R>, String> {
    let per_point = i.sizes.outputs();
    let mut out = Outputs {
        per_point,
        f0: vec![R::ZERO; per_point[0] * i.points],
        f1: vec![R::ZERO; per_point[1] * i.points],
    };
    for p in 0..i.points {
        let (n0, n1) = (per_point[0], per_point[1]);
        let (f0, f1) = (
            &mut out.f0[p * n0..(p + 1) * n0],
            &mut out.f1[p * n1..(p + 1) * n1],
        );
        let (du, dgu, dut) = i.direction(p);
        match catch_unwind(AssertUnwindSafe(|| {
            let dir = Direction {
                du,
                dgrad_u: dgu,
                du_t: dut,
            };
            R::physics(b.physics).eval_tangent(i.sizes.dim, &i.point(p), &dir, f0, f1)
        })) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(e.to_string()),
            Err(_) => return Err(format!("panic at point {p}")),
        }
    }
    Ok(out)
}

/// The inputs moved by `t` along their direction.
pub(crate) fn shifted<R: Real>(i: &Inputs<R>, t: f64) -> Inputs<R> {
    let mut j = i.clone();
    let mv = |v: &mut Vec<R>, d: &[R]| {
        for (x, d) in v.iter_mut().zip(d) {
            *x = R::from_f64(x.to_f64() + t * d.to_f64());
        }
    };
    mv(&mut j.u, &i.du);
    mv(&mut j.grad_u, &i.dgrad_u);
    j
}
