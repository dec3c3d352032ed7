//! The macro's linearity claim checked numerically (copied into the
//! generated crates with the runtime). `info().linear` says that the macro
//! proved `f0`, `f1` affine in `(u, ∇u)`: then the Jacobian does not depend
//! on them, and femquad's device `J·v` and diagonal kernels evaluate it at
//! `u = 0`, `∇u = 0` (issue #19: a claim made for a body whose array index
//! depends on `u` gave the device `J(0)·v` instead of `J(u)·v`). So for a
//! physics that claims it, the native Jacobian at every point must equal,
//! entry by entry, the one at the same point with `u` and `∇u` zeroed
//! (`linear-ok`); any difference is a finding (`linear-mismatch`).

use crate::runtime::Body;
use femquad::opencl::probe::Inputs;
use femquad::physics::EvalPrecision;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The native Jacobian of `b` at point `p` of `i`.
fn jacobian(b: &Body, i: &Inputs<f64>, p: usize) -> Option<[Vec<f64>; 4]> {
    let mut g = i.sizes.jacobians().map(|k| vec![f64::NAN; k]);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let [g0, g1, g2, g3] = &mut g;
        f64::physics(b.physics).eval_jacobian(i.sizes.dim, &i.point(p), g0, g1, g2, g3)
    }));
    matches!(r, Ok(Ok(()))).then_some(g)
}

/// The check of `b`'s linearity claim at the points of `i`:
/// `Some("<linear-ok|linear-mismatch> <worst> <detail>")` when the physics
/// claims it, `None` when it does not.
pub(crate) fn claim_checked(b: &Body, i: &Inputs<f64>) -> Option<String> {
    if !b.physics.info().linear {
        return None;
    }
    let mut zero = i.clone();
    zero.u.iter_mut().for_each(|x| *x = 0.0);
    zero.grad_u.iter_mut().for_each(|x| *x = 0.0);
    let (mut worst, mut detail) = (0.0f64, String::new());
    for p in 0..i.points {
        let (Some(g), Some(g0)) = (jacobian(b, i, p), jacobian(b, &zero, p)) else {
            return Some(format!(
                "linear-mismatch inf the Jacobian fails at point {p} (or there at u = 0, ∇u = 0)"
            ));
        };
        for (k, (a, z)) in g.iter().zip(&g0).enumerate() {
            for (e, (x, y)) in a.iter().zip(z).enumerate() {
                if crate::verdict::same(*x, *y) {
                    continue;
                }
                let rel = crate::verdict::relative(*x, *y);
                if rel > worst || detail.is_empty() {
                    worst = rel;
                    let (u, gu) = (i.point(p).u.to_vec(), i.point(p).grad_u.to_vec());
                    detail = format!(
                        "point {p} g{k}[{e}]: {x:e} at u = {u:?}, ∇u = {gu:?}, but {y:e} at \
                         u = 0, ∇u = 0: the physics claims to be linear (info().linear) and \
                         its Jacobian depends on u"
                    );
                }
            }
        }
    }
    Some(if detail.is_empty() {
        format!(
            "linear-ok 0 the Jacobian at each of {} points equals its value at u = 0, ∇u = 0",
            i.points
        )
    } else {
        format!("linear-mismatch {worst:e} {detail}")
    })
}
