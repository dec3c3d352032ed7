//! What lies on an output entry's path (copied into the generated crates
//! with the runtime): the plain copy evaluated with a class of calls
//! replaced by arbitrary values (`pt::replace`), and for non-finite or
//! singular calls also by NaN (`pt::replace_by_nan`: an exact zero masks
//! them from every finite value, `0 / (u / 0)`); an entry that changes
//! depends on such a call. Several explanations of a difference need one:
//! a non-finite tangent needs a non-finite or singular intermediate on its
//! entry's path (`pt::Calls::Singular`), an `f32` tangent amplified by a
//! derivative formula a saturating function (`pt::Calls::Saturating`), a
//! difference of AD from central differences absorbed by a large value
//! that value (`pt::Calls::AtLeast`).

use crate::runtime::{Body, evaluate, plain, pt, widen};
use femquad::Real;
use femquad::opencl::probe::{Inputs, Outputs};

/// Six evaluations of the plain copy of `b` at `inputs` in which the
/// calls `calls` selects return arbitrary values (`pt::replace`, drawn
/// from `seed`). With `pt::Calls::NanArgument`: an entry they change
/// depends on a math function of a NaN, which PoCL may fold to anything
/// where its compiler knows the NaN.
pub(crate) fn replaced_trials<R: Real>(
    b: &Body,
    inputs: &Inputs<R>,
    calls: pt::Calls,
    seed: u64,
) -> Vec<Outputs<f64>> {
    pt::set(0);
    let trials = (1..=6u64)
        .filter_map(|t| {
            pt::replace(calls, seed.wrapping_mul(0x2545_f491).wrapping_add(t));
            let r = evaluate::<R>(plain::<R>(b), inputs).ok();
            pt::replace(pt::Calls::None, 0);
            r.map(|r| widen(&r))
        })
        .collect();
    pt::nan_points();
    trials
}

/// Which entries (`f0` then `f1`, all points) of the plain copy of `b` at
/// `inputs` lie on the path of a call that `calls` selects: those that
/// change in one of the [`replaced_trials`] or, for
/// `pt::Calls::Singular`, when those calls return NaN (a non-finite
/// intermediate whose value an exact zero masks, `0 / (u / 0)` or
/// `0·tanh(u / 0)`, still makes forward mode's derivative `0·∞`). All
/// `false` where the plain copy fails at `inputs` (no entry is then known
/// to lie on such a path).
pub(crate) fn on_path<R: Real>(
    b: &Body,
    inputs: &Inputs<R>,
    calls: pt::Calls,
    seed: u64,
) -> Vec<bool> {
    let [n0, n1] = inputs.sizes.outputs();
    let mut on = vec![false; (n0 + n1) * inputs.points];
    pt::set(0);
    let Ok(base) = evaluate::<R>(plain::<R>(b), inputs) else {
        return on;
    };
    let base = flat(&widen(&base));
    let mut trials = replaced_trials(b, inputs, calls, seed);
    if calls == pt::Calls::Singular {
        pt::replace_by_nan(calls);
        let r = evaluate::<R>(plain::<R>(b), inputs).ok();
        pt::replace(pt::Calls::None, 0);
        pt::nan_points();
        trials.extend(r.map(|r| widen(&r)));
    }
    for t in trials {
        for ((o, x), y) in on.iter_mut().zip(flat(&t)).zip(&base) {
            *o |= !crate::verdict::same(x, *y);
        }
    }
    on
}

/// The entries of `f0` then `f1`, all points.
pub(crate) fn flat(o: &Outputs<f64>) -> Vec<f64> {
    o.f0.iter().chain(&o.f1).copied().collect()
}

/// The plain copy's view of the output entries of a program at its
/// points (`f0` then `f1`, all points), each part computed when first
/// asked.
pub(crate) struct Paths<'a, R: Real> {
    b: &'a Body,
    i: &'a Inputs<R>,
    seed: u64,
    values: Option<Vec<f64>>,
    singular: Option<Vec<bool>>,
    saturating: Option<Vec<bool>>,
}

impl<'a, R: Real> Paths<'a, R> {
    pub(crate) fn new(b: &'a Body, i: &'a Inputs<R>, seed: u64) -> Self {
        Paths {
            b,
            i,
            seed,
            values: None,
            singular: None,
            saturating: None,
        }
    }

    /// Whether the function's value at entry `e` is finite (false where
    /// the plain copy fails).
    pub(crate) fn finite(&mut self, e: usize) -> bool {
        let (b, i) = (self.b, self.i);
        self.values
            .get_or_insert_with(|| {
                pt::set(0);
                evaluate::<R>(plain::<R>(b), i)
                    .map(|o| flat(&widen(&o)))
                    .unwrap_or_default()
            })
            .get(e)
            .is_some_and(|v| v.is_finite())
    }

    /// Whether a call with a non-finite argument or result, or at a
    /// singular point of its derivative (`pt::Calls::Singular`), lies on
    /// entry `e`'s path.
    pub(crate) fn singular(&mut self, e: usize) -> bool {
        let (b, i, seed) = (self.b, self.i, self.seed);
        self.singular
            .get_or_insert_with(|| on_path(b, i, pt::Calls::Singular, seed ^ 0x5191_ca1e))[e]
    }

    /// Whether a saturating function (`pt::Calls::Saturating`) lies on
    /// entry `e`'s path.
    pub(crate) fn saturating(&mut self, e: usize) -> bool {
        let (b, i, seed) = (self.b, self.i, self.seed);
        self.saturating
            .get_or_insert_with(|| on_path(b, i, pt::Calls::Saturating, seed ^ 0x5a70_7a7e))[e]
    }
}
