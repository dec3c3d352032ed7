//! AD against central differences (copied into the generated crates with
//! the runtime): the native `f64` tangent of every program against
//! Richardson-extrapolated central differences of its plain copy, the
//! copy's decisions frozen at the point (`crate::freeze`); see
//! [`ad_versus_differences`]. Called from `crate::derivatives::run`.

use crate::freeze;
use crate::paths::{Paths, on_path};
use crate::runtime::{Body, evaluate, plain, pt, widen};
use crate::tangents::{rounding_reach, shifted};
use crate::verdict;
use femquad::Real;
use femquad::opencl::probe::{Inputs, Outputs};
/// The outputs at `i` moved by `±h` along the direction.
struct Stencil {
    plus: Outputs<f64>,
    minus: Outputs<f64>,
    h: f64,
}

impl Stencil {
    /// The central difference of entry `k` (f0 entries, then f1).
    fn difference(&self, k: usize) -> f64 {
        (entry(&self.plus, k) - entry(&self.minus, k)) / (2.0 * self.h)
    }

    /// A bound on the rounding error of [`Stencil::difference`]: the two
    /// values are correctly rounded to within a few ulps each (the math
    /// functions), `8ε(|f₊| + |f₋|)/(2h)`.
    fn noise(&self, k: usize) -> f64 {
        8.0 * f64::EPSILON * (entry(&self.plus, k).abs() + entry(&self.minus, k).abs())
            / (2.0 * self.h)
    }
}

/// Entry `k` of `f0` then `f1`, all points.
fn entry(o: &Outputs<f64>, k: usize) -> f64 {
    if k < o.f0.len() {
        o.f0[k]
    } else {
        o.f1[k - o.f0.len()]
    }
}

/// The point of entry `k` (of `f0` then `f1`, all points).
fn point_of(i: &Inputs<f64>, k: usize) -> usize {
    let [n0, n1] = i.sizes.outputs();
    let all0 = n0 * i.points;
    if k < all0 { k / n0 } else { (k - all0) / n1 }
}

/// The three stencils of a Richardson extrapolation, steps `h`, `h/2`,
/// `h/4` (see [`ad_versus_differences`]).
struct Steps {
    coarse: Stencil,
    fine: Stencil,
    finer: Stencil,
}

impl Steps {
    /// The extrapolation `r = (4g − e)/3` of entry `k` from the two finer
    /// differences.
    fn extrapolation(&self, k: usize) -> f64 {
        (4.0 * self.finer.difference(k) - self.fine.difference(k)) / 3.0
    }

    /// Entry `k` where it is smooth (the three differences finite and
    /// within `10⁻⁴` plus `4ν` of each other): the extrapolation `r` and its
    /// error bound without the scale term, `4ν + |r′ − r|` (`r′ = (4e −
    /// c)/3`, the extrapolation of the coarser pair).
    fn smooth(&self, k: usize) -> Option<(f64, f64)> {
        let (c, e, g) = (
            self.coarse.difference(k),
            self.fine.difference(k),
            self.finer.difference(k),
        );
        let nu = self
            .coarse
            .noise(k)
            .max(self.fine.noise(k))
            .max(self.finer.noise(k));
        let near = |a: f64, b: f64| (a - b).abs() <= 1e-4 * b.abs() + 4.0 * nu;
        if !(c.is_finite() && e.is_finite() && g.is_finite() && near(c, e) && near(e, g)) {
            return None;
        }
        let r = self.extrapolation(k);
        Some((r, 4.0 * nu + ((4.0 * e - c) / 3.0 - r).abs()))
    }
}

/// AD against differences, entry by entry. The differences are of the plain
/// copy with its decisions frozen at the point (`crate::freeze`: branches,
/// casts, rounding functions, the quotient of `%`, `abs`, `min`, `max`), the
/// piece of the function that AD differentiates. With `c = D(h)`,
/// `e = D(h/2)`, `g = D(h/4)` those central differences and `ν` their
/// rounding noise (see [`Stencil::noise`]), an entry is **smooth** when
/// `|c − e| ≤ 10⁻⁴|e| + 4ν` and `|e − g| ≤ 10⁻⁴|g| + 4ν` (otherwise what
/// freezing does not cover lies within the stencil — `atan2`'s cut, the
/// edge of a domain where a value turns NaN — or the function is too steep
/// for the step: it is not compared); there the
/// Richardson extrapolation `r = (4g − e)/3` must match the tangent `t`:
/// `|t − r| ≤ 10⁻⁶(|r| + s) + 4ν + |r′ − r|`, with `r′ = (4e − c)/3` the
/// extrapolation of the coarser pair (their difference bounds the error of
/// `r` where a pole or a kink lies just beyond the stencil and the
/// differences converge slowly), `s` the largest `|r|` of the smooth
/// entries of the same output array at that point (a small entry next to
/// large ones is compared at their scale). The printed measure is the
/// largest `|t − r|/(10⁻⁶(|r| + s) + 4ν + |r′ − r|)` times 10⁻⁶ (at most 10⁻⁶ when
/// everything matches).
///
/// A tangent that is not finite where the differences are comes from an
/// infinite or NaN intermediate value that the function then discards,
/// e.g. `tanh(x / 0.0)`: forward mode multiplies its infinite derivative by
/// a zero tangent (see the guide's *Derivatives*). It is `ad-nonfinite`
/// (listed, not a finding) only where such an intermediate — a call with
/// a non-finite argument or result, or at a singular point of its
/// derivative (`pt::Calls::Singular`) — lies on the entry's path; anywhere
/// else it is a mismatch (a derivative rule returning NaN).
///
/// `ad-ok` needs at least [`COMPARED`] of the entries of the outputs the
/// physics has compared; fewer (the function not finite, or not smooth
/// within the stencils, at most of its points) is `ad-partial`, listed with
/// the counts.
///
/// Returns `<verdict> <measure> <detail>`.
pub(crate) fn ad_versus_differences(b: &Body, i: &Inputs<f64>, native: &Outputs<f64>) -> String {
    freeze::record();
    let base = evaluate::<f64>(plain::<f64>(b), i).ok();
    let stencils = richardson_stencils(b, i, STEP);
    let diverged = freeze::stop();
    let (Some(_), Some(steps)) = (base, stencils) else {
        return "ad-skipped 0 the function panics near the points".into();
    };
    let [n0, n1] = i.sizes.outputs();
    let all0 = n0 * i.points;
    let mut paths = Paths::new(b, i, 0x5eed_ad0c);
    let info = b.physics.info();
    // The comparison with the differences `s` (points `diverged` left
    // out), with `extra(k)` more tolerance at entry `k`, of the outputs
    // the physics has.
    let mut compare = |s: &Steps, diverged: &[usize], extra: &dyn Fn(usize) -> f64| {
        let (mut compared, mut worst, mut detail) = (0, 0.0f64, String::new());
        let (mut nonfinite, mut nonfinite_detail) = (0, String::new());
        let mut mismatched = Vec::new();
        for p in (0..i.points).filter(|p| !diverged.contains(p)) {
            for (has, what, first, n) in [
                (info.has_f0, "df0", p * n0, n0),
                (info.has_f1, "df1", all0 + p * n1, n1),
            ] {
                if !has {
                    continue;
                }
                // (entry, extrapolation, tolerance without the scale term)
                let smooth: Vec<(usize, f64, f64)> = (first..first + n)
                    .filter_map(|k| s.smooth(k).map(|(r, floor)| (k, r, floor)))
                    .collect();
                let scale = smooth.iter().map(|(_, r, _)| r.abs()).fold(0.0, f64::max);
                for &(k, r, floor) in &smooth {
                    compared += 1;
                    let t = entry(native, k);
                    if !t.is_finite() && paths.singular(k) {
                        nonfinite += 1;
                        nonfinite_detail = format!(
                            "point {p} {what}[{}]: AD {t:e} differences {r:e}",
                            k - first
                        );
                        continue;
                    }
                    let tol = 1e-6 * (r.abs() + scale) + floor + extra(k);
                    let measure = if t == r {
                        0.0
                    } else if tol > 0.0 {
                        1e-6 * (t - r).abs() / tol
                    } else {
                        f64::INFINITY
                    };
                    if measure > 1e-6 || measure.is_nan() {
                        mismatched.push(k);
                    }
                    if measure > worst || measure.is_nan() {
                        worst = if measure.is_nan() {
                            f64::INFINITY
                        } else {
                            measure
                        };
                        let why = if t.is_finite() {
                            ""
                        } else {
                            ", no non-finite or singular intermediate on its path"
                        };
                        detail = format!(
                            "point {p} {what}[{}]: AD {t:e} differences {r:e} (tolerance {tol:e}{why})",
                            k - first
                        );
                    }
                }
            }
        }
        (
            compared,
            worst,
            detail,
            nonfinite,
            nonfinite_detail,
            mismatched,
        )
    };
    let (compared, worst, detail, nonfinite, nonfinite_detail, mismatched) =
        compare(&steps, &diverged, &|_| 0.0);
    // The entries of the outputs the physics has.
    let entries = i.points * (n0 * info.has_f0 as usize + n1 * info.has_f1 as usize);
    if worst <= 1e-6 && nonfinite > 0 {
        return format!(
            "ad-nonfinite {worst:e} [nonfinite] {compared} of {entries} entries compared, \
             {nonfinite} with a non-finite tangent and a non-finite or singular intermediate \
             on its path; {nonfinite_detail}"
        );
    }
    if worst <= 1e-6 && (compared as f64) < COMPARED * entries as f64 {
        return format!(
            "ad-partial {worst:e} [partial] {compared} of {entries} entries compared (the \
             others not finite, or not smooth within the stencils); {detail}"
        );
    }
    if worst <= 1e-6 {
        return format!("ad-ok {worst:e} {compared} of {entries} entries compared; {detail}");
    }
    // Again within the rounding noise of the tangent and of the
    // differences: where the function cancels inside (`g + (f − g)` with a
    // huge `g`), both round at the scale of the terms, which the
    // differences' noise estimate (from the values) does not see.
    let tangent = rounding_reach(b, i, native, 0x0ddb_1a5e_5bad_5eed);
    let differences = differences_noise(b, i, &steps);
    let (_, again, ..) = compare(&steps, &diverged, &|k| 2.0 * (tangent[k] + differences[k]));
    if again <= 1e-6 {
        return format!(
            "ad-explained {worst:e} [tangent-noise] {compared} entries compared; {detail} \
             (within the rounding noise of the tangent and the differences: {again:e} with it)"
        );
    }
    // Again with finer steps: the function may vary on a scale far below
    // the default steps — a pole close to the point (`1/(q % 0.05)³` where
    // `q` itself varies fast) inside the default stencils, or a steep inner
    // function driving a nonlinear one (`w − tanh(w)` with `w` moving by
    // 10⁵ over them) — whose differences then see the smooth or saturated
    // rest of the function and agree among themselves.
    if let Some(h) = FINER_STEPS
        .into_iter()
        .map(|k| 2f64.powi(k))
        .find(|&h| finer_steps_match(b, i, native, &mismatched, h))
    {
        return format!(
            "ad-explained {worst:e} [fine-step] {compared} entries compared; {detail} (every \
             mismatched entry matches with the steps {h:e}, {:e}, {:e}, exact, along each \
             coordinate)",
            h / 2.0,
            h / 4.0
        );
    }
    // Last, a value absorbed by a far larger one (`u + c − c` with `c =
    // cosh(123.456)`: every small `u` is lost, the differences are 0 while
    // AD, exact in its arithmetic, gives 1): every mismatch within the
    // ulps of a math result on its entry's path, over the finest step.
    let absorbed = !mismatched.is_empty()
        && mismatched.iter().all(|&k| {
            let miss = (entry(native, k) - steps.extrapolation(k)).abs();
            // The smallest result whose rounding over the step reaches it.
            let large = miss * steps.finer.h / (8.0 * f64::EPSILON);
            miss.is_finite() && on_path(b, i, pt::Calls::AtLeast(large), 0xab50_4bed ^ k as u64)[k]
        });
    if absorbed {
        return format!(
            "ad-explained {worst:e} [absorbed] {compared} entries compared; {detail} (every \
             mismatch within 8 ulps, over the step, of a math result on its entry's path: lost \
             to its rounding in the differences)"
        );
    }
    format!("ad-mismatch {worst:e} {compared} entries compared; {detail}")
}

/// The part of the entries AD must be compared at for `ad-ok`.
const COMPARED: f64 = 0.9;

/// Whether each entry of `mismatched` (indices into `f0` then `f1` of all
/// points) matches AD with the steps `h`, `h/2`, `h/4` (`h` a power of two),
/// decisions frozen again at the point. The differences are taken along
/// each coordinate `c` of `u` and `∇u` in turn ([`along_coordinate`]:
/// steps that move one float by a power of two are exact) and combined
/// with the direction's components `v_c`: the tangent `t` must match
/// `Σ v_c r_c`, `r_c` the extrapolation along `c` (three differences that
/// agree, as in [`ad_versus_differences`], for every `c` with `v_c ≠ 0`),
/// within `10⁻⁶ S + E`, where `S = Σ |v_c r_c|` is the scale of the terms and
/// `E = Σ |v_c| (4ν_c + |r′_c − r_c|)` their rounding noise and
/// extrapolation error — itself at most `10⁻⁶ S` (a step so fine that the
/// differences are noise proves nothing: with an error bound of 10⁻³ a
/// constant wrong in the fourth digit would pass).
///
/// Where the default steps cross a pole the finer ones stay on one side of
/// it, where the function is what AD differentiates; where an inner
/// function is steep, they resolve the nonlinear functions it drives. Steps
/// along the direction itself would not do: `x + t·v` rounds by up to half
/// an ulp of `x`, a relative error of `ulp(x)/(2h|v|)` in the direction the
/// differences follow — `5·10⁻⁷` at `h = 10⁻¹⁰` — which the function's
/// slope carries into them. Program 504 of seed 20261123 (`1.5 % y` with
/// `y ≈ 4·10⁻⁹`: a slope of `4·10⁸` in `∇u[2][2]`, which `tanh` saturates
/// over the default stencils, its differences `10⁻³` below AD): along the
/// direction, its differences matched AD to `2.4·10⁻⁷` at best (`h` from
/// `2⁻³¹` to `2⁻³³`, the bias of the rounded direction), with the former
/// steps not at all (`10⁻⁹`: `tanh` not resolved, the three differences
/// `2·10⁻⁴` apart; `10⁻¹¹`: AD missed by `4·10⁻⁵`, the extrapolation error
/// `5·10⁻⁵`); along each coordinate, exact, to `2·10⁻¹⁵` at `h = 2⁻³⁷`
/// (`E = 1.5·10⁻¹⁰ S`).
fn finer_steps_match(
    b: &Body,
    i: &Inputs<f64>,
    native: &Outputs<f64>,
    mismatched: &[usize],
    h: f64,
) -> bool {
    let [nu, ngu, ..] = i.sizes.inputs();
    // The direction's component `c` at point `p` (`u`, then `∇u`).
    let v = |p: usize, c: usize| {
        if c < nu {
            i.du[p * nu + c]
        } else {
            i.dgrad_u[p * ngu + c - nu]
        }
    };
    freeze::record();
    let _ = evaluate::<f64>(plain::<f64>(b), i);
    let mut columns = Vec::new();
    let mut diverged = Vec::new();
    for c in 0..nu + ngu {
        let steps = along_coordinate(i, c, h).and_then(|j| richardson_stencils(b, &j, h));
        diverged.extend(freeze::stop());
        let Some(steps) = steps else {
            return false;
        };
        columns.push(steps);
    }
    mismatched.iter().all(|&k| {
        let p = point_of(i, k);
        let (mut sum, mut scale, mut error) = (0.0, 0.0, 0.0);
        for (c, steps) in columns.iter().enumerate() {
            let v = v(p, c);
            if v == 0.0 {
                continue;
            }
            let Some((r, floor)) = steps.smooth(k) else {
                return false;
            };
            sum += v * r;
            scale += (v * r).abs();
            error += v.abs() * floor;
        }
        let t = entry(native, k);
        !diverged.contains(&p)
            && t.is_finite()
            && error <= 1e-6 * scale
            && (t - sum).abs() <= 1e-6 * scale + error
    })
}

/// Exponents of the coarse steps `2ᵏ` tried, finest last, where the default
/// steps do not match AD (see [`finer_steps_match`]): about 10⁻⁵, 10⁻⁷,
/// 10⁻⁹, 10⁻¹¹ and 10⁻¹³.
const FINER_STEPS: [i32; 5] = [-17, -23, -30, -37, -43];

/// `i` with the direction `e_c` at every point: coordinate `c` of `u`
/// (`c < N_comp`), else of `∇u`. `None` unless every move of that
/// coordinate by `±h`, `±h/2`, `±h/4` (`h` a power of two) is exact — it
/// is but where the move crosses into a higher binade from an odd multiple
/// of the ulp, e.g. `1 − 2⁻⁵³ + 2⁻³⁹`.
fn along_coordinate(i: &Inputs<f64>, c: usize, h: f64) -> Option<Inputs<f64>> {
    let [nu, ngu, ..] = i.sizes.inputs();
    let mut j = i.clone();
    j.du.iter_mut().chain(&mut j.dgrad_u).for_each(|v| *v = 0.0);
    let (xs, vs, n, c) = if c < nu {
        (&j.u, &mut j.du, nu, c)
    } else {
        (&j.grad_u, &mut j.dgrad_u, ngu, c - nu)
    };
    for p in 0..i.points {
        let x = xs[p * n + c];
        let exact = [-1.0, -0.5, -0.25, 0.25, 0.5, 1.0]
            .into_iter()
            .all(|m| sum_is_exact(x, m * h));
        if !exact {
            return None;
        }
        vs[p * n + c] = 1.0;
    }
    Some(j)
}

/// Whether `a + b` is a float (its rounding error, by Knuth's two-sum, is
/// zero).
fn sum_is_exact(a: f64, b: f64) -> bool {
    let s = a + b;
    let b_ = s - a;
    let a_ = s - b_;
    s.is_finite() && (a - a_) + (b - b_) == 0.0
}

/// The default coarse step of the differences (then `h/2`, `h/4`).
const STEP: f64 = 1e-3;

/// The central differences of the plain copy of `b` at `i` with steps `h`,
/// `h/2` and `h/4`, its decisions replayed (`crate::freeze`, recorded by
/// the caller); `None` where it panics.
fn richardson_stencils<R: Real>(b: &Body, i: &Inputs<R>, h: f64) -> Option<Steps> {
    let eval = |j: &Inputs<R>| evaluate::<R>(plain::<R>(b), j).ok().map(|o| widen(&o));
    let stencil = |h: f64| -> Option<Stencil> {
        Some(Stencil {
            plus: eval(&shifted(i, h))?,
            minus: eval(&shifted(i, -h))?,
            h,
        })
    };
    freeze::replay();
    let s = (stencil(h), stencil(h / 2.0), stencil(h / 4.0));
    Some(Steps {
        coarse: s.0?,
        fine: s.1?,
        finer: s.2?,
    })
}

/// How far the extrapolation `(4g − e)/3` of [`ad_versus_differences`]
/// moves, entry by entry, when its steps are scaled by a random factor in
/// `[0.5, 2)` and the math results are perturbed (`pt`), decisions
/// replayed: the rounding noise of the differences where the function
/// cancels inside (`g + (f − g)` with a huge `g` keeps `f` to the ulps of
/// `g`, a different error at each point of each stencil).
fn differences_noise(b: &Body, i: &Inputs<f64>, s: &Steps) -> Vec<f64> {
    let n = s.finer.plus.f0.len() + s.finer.plus.f1.len();
    let mut out = vec![0.0f64; n];
    for t in 1..=8u64 {
        let seed = 0x5851_f42d_4c95_7f2d_u64.wrapping_mul(t) | 1;
        let scale = 0.5 + 1.5 * (seed >> 11) as f64 / (1u64 << 53) as f64;
        pt::set(seed);
        let trial = richardson_stencils(b, i, STEP * scale);
        freeze::stop();
        pt::set(0);
        let Some(trial) = trial else { continue };
        for (k, o) in out.iter_mut().enumerate() {
            let d = verdict::distance(trial.extrapolation(k), s.extrapolation(k));
            if d.is_finite() {
                *o = o.max(d);
            }
        }
    }
    out
}
