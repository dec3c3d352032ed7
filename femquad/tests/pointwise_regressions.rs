//! Disagreements between the native and the OpenCL evaluation of
//! `#[pointwise]` physics found by differential testing
//! (`pointwise-difftest`), each reduced to a physics and compared through
//! the device probe: f64 within 1e-12, f32 within 1e-5 (relative, per output
//! array). Cases the macro now rejects are in `tests/ui/fail`; the macro's
//! side of each fix is pinned in `femquad-macros/src/tests/regressions.rs`.
//!
//! (Longer than most files: one physics and one test per finding, each
//! kept whole so that it reads as the reproducer it was.)
#![allow(clippy::all)]

use std::sync::Arc;

use femquad::opencl::probe::{Inputs, PointSizes};
use femquad::physics::{EvalPrecision, Pointwise, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

mod pointwise_support;
use pointwise_support::{check_all, compare, native, with_probe};

// ----- evaluation order -----

/// An array assignment computes its index once, before writing the entries.
#[pointwise]
fn index_once<const D: usize>(u: &[f64; 2], f0: &mut [f64; 2], f1: &mut [[f64; D]; 2]) {
    f1[(1.0 - f1[1][0]) as usize] = [3.0 + u[0]; D];
    let rows = [[u[0], 1.0], [2.0, u[0] * u[0]]];
    let mut v = [0.0, 1.0];
    v = rows[if v[0] == 0.0 { 0 } else { 1 }];
    f0[0] = v[0];
    f0[1] = v[1];
}

/// `v[0] += 1`, returns the new `v[0]`.
#[pointwise]
fn bump(v: &mut [f64; 1]) -> f64 {
    v[0] += 1.0;
    v[0]
}

/// `[[e; N]; M]` evaluates `e` once, also when it has effects.
#[pointwise(helpers(bump))]
fn repeat_once(u: &[f64; 3], f0: &mut [f64; 3]) {
    let mut k = 0.0;
    let m = [[{
        k += 1.0;
        k
    }; 2]; 3];
    let mut v = [u[0]];
    let w = [[bump(&mut v); 2]; 3];
    f0[0] = m[2][1] + k;
    f0[1] = w[2][1] + v[0];
    f0[2] = m[0][0] * w[1][0];
}

/// Rust's order: the assigned value before the place, indices left to
/// right, helper calls left to right.
#[pointwise(helpers(bump))]
fn place_and_value_order(u: &[f64; 3], f0: &mut [f64; 3]) {
    let mut k = 0;
    f0[{
        k += 1;
        k
    }] = k as f64 + u[0];
    let m = [[u[0], u[1]], [u[2], u[0] * u[1]]];
    let mut i = 0;
    f0[2] = m[i][{
        i += 1;
        i
    }];
    let mut v = [u[2]];
    f0[0] = bump(&mut v) - bump(&mut v) * v[0];
}

// ----- floating point -----

/// `a*b - c` is never contracted into `fma` (Rust does not contract).
#[pointwise]
fn no_contraction(u: &[f64; 3], constants: &[f64; 1], f0: &mut [f64; 3]) {
    f0[0] = (u[0] * u[1] - u[2]) * constants[0];
}

/// The determinant of the 2×2 matrix `u = [a, b, c, d]`. At a nearly
/// singular matrix whose products `a·d` and `b·c` round to the same value
/// it is exactly 0; contracted into `fma(a, d, −b·c)` it would be the
/// rounding error of `a·d` (2⁻⁶⁰ in f64, 2⁻²⁴ in f32 below).
#[pointwise]
fn determinant(u: &[f64; 4], f0: &mut [f64; 4]) {
    f0[0] = u[0] * u[3] - u[1] * u[2];
}

/// Literal-only arithmetic is done in the precision of the evaluation:
/// `0.7 / 0.1` is 7.0000005 in f32 (7 when truncated), 6.999… in f64.
#[pointwise]
fn literal_arithmetic(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = (0.7 / 0.1) as i32 as f64 + u[0];
    f0[1] = ((1.0 / 3.0) * 3.0 - 1.0) * 1e8;
}

// ----- integers -----

/// `usize` is 64 bits and `i32 as usize` wraps, as in Rust (`n·n` ≈ 10¹⁰
/// does not fit 32 bits); float-to-integer casts saturate.
#[pointwise]
fn integer_width(u: &[f64; 4], f0: &mut [f64; 4]) {
    let k = -((u[0].abs() * 3.0) as i32) - 1;
    f0[0] = (k as usize) as f64;
    let n = (u[0].abs() * 0.5) as usize + 100_000;
    f0[1] = (n * n) as f64;
    f0[2] = (u[0] * 1e12) as i32 as f64;
    f0[3] = (u[0] * -1e30) as usize as f64;
}

// ----- the quadrature point `x` -----

/// A coefficient that jumps at `x₀ = 0.5`: a quadrature point on the jump
/// computed as 0.49999999999999994 on one path and 0.5 on the other changes
/// the element vector by a factor up to 100 at that point.
#[pointwise]
fn jump_at_half<const D: usize>(u: &[f64; 1], x: &[f64; D], f0: &mut [f64; 1]) {
    f0[0] = (if x[0] < 0.5 { 1.0 } else { 100.0 }) * u[0];
}

/// 1 where `x₀` is 0.5 or one of its neighbours (as computed, points whose
/// exact `x₀` is 0.5 may be one ulp off): points where any difference in
/// rounding puts `x₀` on the other side of the jump.
#[pointwise]
fn near_the_jump<const D: usize>(x: &[f64; D], f0: &mut [f64; 1]) {
    f0[0] = if (x[0] - 0.5).abs() <= 2.3e-16 {
        1.0
    } else {
        0.0
    };
}

/// The low bits of every coordinate of the quadrature point: `x·2⁴⁰ mod 1`
/// (exact) holds the last 13 bits of `x ∈ [0.5, 1)`, and 13 + k bits of
/// `x ∈ [2⁻ᵏ⁻¹, 2⁻ᵏ)`, so one ulp of `x` moves it by 2⁻¹³⁻ᵏ (2⁻¹⁹ for the
/// smallest coordinates here, ≈ 0.009), far beyond any rounding of the
/// integration.
#[pointwise]
fn point_bits<const D: usize>(x: &[f64; D], f0: &mut [f64; D]) {
    for d in 0..D {
        f0[d] = (x[d] * 1099511627776.0) % 1.0;
    }
}

// ----- linearity: piecewise bodies (#19) -----

/// Writes `∂u/∂x₀` into the component of `f1` that `u` picks: affine on each
/// piece, piecewise overall. The macro once called it `linear`, and the
/// device's J·v and diagonal kernels evaluated it at `u = 0`.
#[pointwise]
fn index_write<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0][((u[0].abs() * 2.0) as usize) % 2] = grad_u[0][0];
}

/// Reads the component of `∇u` that `u` picks.
#[pointwise]
fn index_read<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0][0] = grad_u[0][((u[0].abs() * 2.0) as usize) % 2];
}

/// A coefficient from a table row that `u` picks (a passive copy).
#[pointwise]
fn table_row<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let table = [[1.0, 3.0], [5.0, 7.0]];
    let row = table[((u[0].abs() * 2.0) as usize) % 2];
    for d in 0..D {
        f1[0][d] = row[d % 2] * grad_u[0][d];
    }
}

/// `x` or `3x` as `k` says: affine in `x` for every `k`.
#[pointwise]
fn scaled(k: usize, x: f64) -> f64 {
    if k == 0 { x } else { 3.0 * x }
}

/// The integer argument of an affine helper, from `u` (computed in the
/// argument itself: a `let k = …` from `u` is already not affine).
#[pointwise(helpers(scaled))]
fn helper_index<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    for d in 0..D {
        f1[0][d] = scaled(((u[0].abs() * 2.0) as usize) % 2, grad_u[0][d]);
    }
}

/// #19: the device's `J(u)·v` and point-block diagonal equal the native
/// ones at a random `u` ≠ 0 (f64, 2D P2 and 3D P1, both assemblies) for
/// bodies whose outputs depend on `u` through an index or a helper's
/// integer argument; the macro does not call them `linear`. (The macro's
/// side, with branches, `min`, `max` and the rest: `control_dependence_on_
/// the_seeds_is_not_linear` in `femquad-macros/src/tests/derivatives.rs`.)
#[test]
fn piecewise_bodies_have_u_dependent_jacobians_on_the_device() {
    use femquad::opencl::Assembly;
    use femquad::prelude::*;
    let physics: [&'static dyn PointwiseEval<f64>; 4] =
        [&IndexWrite, &IndexRead, &TableRow, &HelperIndex];
    let device = with_probe(|probe| probe.device().clone());
    let backends = [
        Backend::native(),
        Backend::opencl_with(device, femquad::opencl::testing::options()),
    ];
    let max_abs = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let max_diff = |a: &[f64], b: &[f64]| {
        a.iter()
            .zip(b)
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
    };
    for p in physics {
        for (dim, order) in [(2, 2), (3, 1)] {
            let opts = MeshOptions {
                jitter: 0.15,
                shuffle: true,
                seed: 5,
            };
            let mesh = unit_box(dim, if dim == 2 { 6 } else { 3 }, &opts).unwrap();
            let mesh = Arc::new(mesh);
            let what = format!("`{}` {dim}D P{order}", p.info().name);
            let [native, device] = backends.clone().map(|b| {
                let element = Element::lagrange(dim, order).unwrap();
                let space = FunctionSpace::new(mesh.clone(), element, 1).unwrap();
                let q = Quadrature::default_for(&element).unwrap();
                let form = Form::new(space, p).and_then(|f| f.with_quadrature(q));
                Operator::<f64>::new(form.unwrap(), &b).unwrap()
            });
            let n = native.space().n_dofs();
            let u = femquad::rng::Rng::new(9).vec(n, -1.0, 1.0);
            let v = femquad::rng::Rng::new(10).vec(n, -1.0, 1.0);
            let mut results = Vec::new();
            for (mut res, assemblies) in [
                (native, vec![None]),
                (
                    device,
                    vec![Some(Assembly::Atomic), Some(Assembly::Deterministic)],
                ),
            ] {
                let (uu, vv) = (res.vector_from(&u).unwrap(), res.vector_from(&v).unwrap());
                for assembly in assemblies {
                    if let Some(a) = assembly {
                        res.set_assembly(a).unwrap();
                    }
                    let mut jv = res.vector().unwrap();
                    res.jacobian_action(&uu, &vv, &mut jv).unwrap();
                    let mut diag = res.vector().unwrap();
                    res.jacobian_diagonal(&uu, &mut diag).unwrap();
                    results.push((assembly, jv.to_host().unwrap(), diag.to_host().unwrap()));
                }
            }
            let (_, jv, diag) = &results[0];
            for (assembly, djv, ddiag) in &results[1..] {
                let d = max_diff(djv, jv);
                assert!(
                    d <= 1e-12 * max_abs(jv),
                    "{what} {assembly:?}: device J·v differs from native by {d:e} \
                         (max |J·v| {:e})",
                    max_abs(jv)
                );
                let d = max_diff(ddiag, diag);
                assert!(
                    d <= 1e-12 * max_abs(diag),
                    "{what} {assembly:?}: device diagonal differs from native by {d:e} \
                         (max |diag| {:e})",
                    max_abs(diag)
                );
            }
        }
        assert!(!p.info().linear, "`{}` is not affine", p.info().name);
    }
}

// ----- accepted by the macro, once rejected by the OpenCL compiler -----

/// 300 terms: flat in C (clang allows 256 nested parentheses).
#[pointwise]
fn long_sum(u: &[f64; 1], f0: &mut [f64; 1]) {
    let x = u[0];
    f0[0] = x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x
        + x;
}

/// Local variables named like OpenCL C types and keywords.
#[pointwise]
#[allow(non_snake_case)]
fn opencl_type_names(u: &[f64; 1], f0: &mut [f64; 1]) {
    let image1d_array_t = u[0];
    let image2d_depth_t = 2.0 * image1d_array_t;
    let image2d_array_msaa_depth_t = image2d_depth_t + 1.0;
    let queue_t = image2d_array_msaa_depth_t;
    let atomic_float = queue_t * 0.5;
    let float2x2 = atomic_float;
    let as_int = float2x2;
    let convert_float = as_int + 1.0;
    let r#typeof = convert_float;
    let complex = r#typeof;
    f0[0] = complex;
}

// ----- accepted now -----

#[pointwise]
fn dot<const D: usize>(p: &[f64; D], q: &[f64; D]) -> f64 {
    let mut s = 0.0;
    for d in 0..D {
        s += p[d] * q[d];
    }
    s
}

/// A helper's `f64` result meeting a float literal is an `f64`.
#[pointwise(helpers(dot))]
fn helper_result_method<const D: usize>(grad_u: &[[f64; D]; 1], f0: &mut [f64; 1]) {
    let g = grad_u[0];
    f0[0] = (dot(&g, &g) + 1e-12).sqrt();
}

/// A helper whose parameters are named `f0` and `f1`.
#[pointwise]
fn blend(f0: f64, f1: f64, t: f64) -> f64 {
    f0 + t * (f1 - f0)
}

/// Helpers of the same name in two modules, one calling the other.
mod first {
    use femquad::pointwise;
    #[pointwise]
    pub fn scale(v: f64) -> f64 {
        2.0 * v
    }
}

mod second {
    use femquad::pointwise;
    #[pointwise(helpers(super::first::scale))]
    pub fn scale(v: f64) -> f64 {
        3.0 * super::first::scale(v)
    }
}

#[pointwise(helpers(blend, second::scale))]
fn uses_named_helpers(u: &[f64; 2], f0: &mut [f64; 2]) {
    f0[0] = blend(u[0], u[1], 0.25) + second::scale(u[0]);
}

// ----- huge loops -----

/// Nested loops of 8·10²⁷ iterations (compiled, never run): the flop counts
/// saturate at `u64::MAX` instead of overflowing, in the macro (a constant
/// body), in the generated constant (a helper's count times the trip
/// counts) and in the counts of the derivatives.
#[pointwise(helpers(dot))]
fn huge_loops<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f0: &mut [f64; 1]) {
    for _i in 0..2000000000 {
        for _j in 0..2000000000 {
            for _k in 0..2000000000 {
                f0[0] += u[0] * u[0];
            }
        }
    }
    for _i in 0..2000000000 {
        for _j in 0..2000000000 {
            for _k in 0..2000000000 {
                f0[0] += u[0] * dot(&grad_u[0], &grad_u[0]);
            }
        }
    }
}

/// `q[0] += s`, returns `q[1]·s`: writes through `&mut`.
#[pointwise]
fn add_to_first(q: &mut [f64; 2], s: f64) -> f64 {
    q[0] += s;
    q[1] * s
}

/// Passes its `&mut` parameter on by name and reads it in a later argument:
/// a reborrow (two-phase), valid Rust that the macro once rejected.
#[pointwise(helpers(add_to_first))]
fn pass_on(q: &mut [f64; 2], s: f64) -> f64 {
    add_to_first(q, q[0] * s) + q[0]
}

#[pointwise(helpers(pass_on))]
fn reborrowed(u: &[f64; 2], f0: &mut [f64; 2]) {
    let mut v = [u[0], u[1]];
    f0[0] = pass_on(&mut v, u[1]);
    f0[1] = v[0] * v[1];
}

// ----- tests -----

/// Compares one physics with the native evaluation at points with the
/// given `u` and `constants` (other inputs random), in f64 and in f32 (from
/// the same f64 values).
fn compare_at(physics: &dyn PointwiseEvalBoth, dim: usize, points: &[(Vec<f64>, Vec<f64>)]) {
    let sizes = PointSizes::of(physics, dim);
    let mut rng = femquad::rng::Rng::new(1);
    let mut inputs = Inputs::<f64>::random(sizes, points.len(), &mut rng, -1.0, 1.0);
    let [nu, _, _, _, _, nk, ..] = sizes.inputs();
    for (p, (u, k)) in points.iter().enumerate() {
        inputs.u[p * nu..(p + 1) * nu].copy_from_slice(u);
        inputs.constants[p * nk..(p + 1) * nk].copy_from_slice(k);
    }
    fn one<R: EvalPrecision>(physics: &dyn PointwiseEvalBoth, dim: usize, inputs: &Inputs<R>) {
        with_probe(|probe| {
            let device = probe.residual(physics, dim, inputs).unwrap();
            compare(physics, dim, &device, &native(R::physics(physics), inputs));
        });
    }
    one::<f64>(physics, dim, &inputs);
    one::<f32>(physics, dim, &inputs.convert());
}

#[test]
fn array_assignments_evaluate_indices_once() {
    check_all(&[&IndexOnce], 41);
    let mut f0 = [0.0; 2];
    let mut f1 = [0.0; 4];
    let args = femquad::physics::PointArgs {
        u: &[0.5, 0.0],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    IndexOnce.eval(2, &args, &mut f0, &mut f1).unwrap();
    // f1[1] = [3.5; 2] (index 1 computed once), v = rows[0]
    assert_eq!((f0, f1), ([0.5, 1.0], [0.0, 0.0, 3.5, 3.5]));
}

#[test]
fn repeats_evaluate_their_value_once() {
    check_all(&[&RepeatOnce], 43);
}

#[test]
fn place_value_and_call_order_follow_rust() {
    check_all(&[&PlaceAndValueOrder], 47);
}

#[test]
fn products_are_not_contracted() {
    // u0·u1 rounds to u2 exactly, so u0·u1 − u2 is 0 unless fused (then
    // it is the rounding error, 2⁻⁶⁰ in f64 and 2⁻²⁴ in f32), scaled up.
    let a64 = 1.0 + 2f64.powi(-30);
    let a32 = (1.0 + 2f32.powi(-12)) as f64;
    let points = vec![
        (vec![a64, a64, a64 * a64], vec![1e18]),
        (
            vec![a32, a32, ((a32 as f32) * (a32 as f32)) as f64],
            vec![1e10],
        ),
    ];
    compare_at(&NoContraction, 2, &points);
    with_probe(|probe| {
        let sizes = PointSizes::of(&NoContraction, 2);
        let mut i = Inputs::<f32>::random(sizes, 1, &mut femquad::rng::Rng::new(2), 0.0, 1.0);
        i.u.copy_from_slice(&[a32 as f32, a32 as f32, (a32 as f32) * (a32 as f32)]);
        i.constants[0] = 1e10;
        let out = probe.residual(&NoContraction, 2, &i).unwrap();
        assert_eq!(
            out.f0, [0.0; 3],
            "a fused multiply-add in the OpenCL source"
        );
    });
}

/// The determinant and its tangent at `a = b = c = d = 1 + ε` (ε = 2⁻³⁰
/// in f64, 2⁻¹² in f32) along `(ȧ, ḃ, ċ, ḋ) = (a, a, 0, 0)`: both are
/// `a·a − a·a`, exactly 0 in Rust and in OpenCL without contraction.
fn nearly_singular_determinant<R: EvalPrecision>(eps: f64) {
    let a = R::from_f64(1.0 + eps);
    let sizes = PointSizes::of(&Determinant, 2);
    let mut rng = femquad::rng::Rng::new(3);
    let mut i = Inputs::<f64>::random(sizes, 1, &mut rng, 0.0, 1.0)
        .with_direction(&mut rng, 0.0, 1.0)
        .convert::<R>();
    i.u.copy_from_slice(&[a; 4]);
    i.du.copy_from_slice(&[a, a, R::ZERO, R::ZERO]);
    let mut native = [R::from_f64(1.0); 4];
    R::physics(&Determinant)
        .eval(2, &i.point(0), &mut native, &mut [])
        .unwrap();
    assert_eq!(native[0].to_f64(), 0.0, "{}", R::PRECISION);
    with_probe(|probe| {
        let f = probe.residual(&Determinant, 2, &i).unwrap();
        assert_eq!(
            f.f0[0].to_f64(),
            0.0,
            "{}: a fused multiply-add in the physics",
            R::PRECISION
        );
        let t = probe.tangents(2, &[(&Determinant, &i)]).unwrap();
        assert_eq!(
            t[0].f0[0].to_f64(),
            0.0,
            "{}: a fused multiply-add in the tangent",
            R::PRECISION
        );
    });
}

#[test]
fn nearly_singular_determinants_are_not_contracted() {
    nearly_singular_determinant::<f64>(2f64.powi(-30));
    nearly_singular_determinant::<f32>(2f64.powi(-12));
}

#[test]
fn literal_arithmetic_is_in_the_evaluation_precision() {
    check_all(&[&LiteralArithmetic], 53);
    let mut f0 = [0.0f32; 2];
    let args = femquad::physics::PointArgs {
        u: &[0.0f32; 2],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    LiteralArithmetic.eval(2, &args, &mut f0, &mut []).unwrap();
    assert_eq!(f0[0], 7.0);
    let mut g0 = [0.0f64; 2];
    let args64 = femquad::physics::PointArgs {
        u: &[0.0; 2],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    LiteralArithmetic
        .eval(2, &args64, &mut g0, &mut [])
        .unwrap();
    assert_eq!(g0[0], 6.0);
}

#[test]
fn integers_have_rusts_width() {
    check_all(&[&IntegerWidth], 59);
}

#[test]
fn sources_the_opencl_compiler_once_rejected_now_build() {
    check_all(&[&LongSum, &OpenclTypeNames], 61);
}

#[test]
fn cases_once_rejected_by_the_macro_agree() {
    check_all(&[&HelperResultMethod, &UsesNamedHelpers, &Reborrowed], 67);
    // The values Rust gives: `q[0]` is read before the helper writes it.
    let mut f0 = [0.0; 2];
    let args = femquad::physics::PointArgs {
        u: &[2.0, 3.0],
        grad_u: &[0.0; 4],
        a: &[],
        grad_a: &[],
        x: &[0.0; 2],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    Reborrowed.eval(2, &args, &mut f0, &mut []).unwrap();
    // pass_on: add_to_first(v, 2·3) makes v = [8, 3] and returns 3·6 = 18;
    // + v[0] = 26.
    assert_eq!(f0, [26.0, 24.0]);
}

/// Element vectors of `physics` (`n_comp` components, P1, the degree-4
/// rule: 14 Keast points in 3D, 6 Dunavant points in 2D) on `mesh` for a
/// random `u`, natively and by the device's element kernel, in f64.
fn element_vectors_both(
    mesh: &Arc<femquad::mesh::Mesh>,
    physics: &'static dyn PointwiseEval<f64>,
    n_comp: usize,
) -> (Vec<f64>, Vec<f64>, usize) {
    use femquad::aux_space::AuxSpace;
    use femquad::discretization::{CellInputs, Discretization};
    use femquad::element::Element;
    use femquad::opencl::{Assembly, OpenClIntegrator, OpenClOperator};
    use femquad::quadrature::Quadrature;
    use femquad::space::FunctionSpace;
    let dim = mesh.dim();
    let space =
        FunctionSpace::new(mesh.clone(), Element::lagrange(dim, 1).unwrap(), n_comp).unwrap();
    let quad = Quadrature::simplex(dim, 4).unwrap();
    assert_eq!(quad.n_points(), if dim == 3 { 14 } else { 6 });
    let disc = Discretization::<f64>::new(&space, quad, AuxSpace::None).unwrap();
    let u = femquad::rng::Rng::new(7).vec(space.n_cell_dofs(), 0.5, 1.5);
    let inputs = CellInputs {
        u: &u,
        aux: &[],
        constants: &[],
        time: None,
    };
    let mut native = vec![0.0; u.len()];
    femquad::native::element_vectors(
        &disc,
        physics,
        &inputs,
        &mut native,
        femquad::native::Execution::Serial,
    )
    .unwrap();
    let device = with_probe(|probe| probe.device().clone());
    let op = OpenClOperator::new(
        device,
        femquad::opencl::testing::options(),
        &space,
        disc.clone(),
    )
    .unwrap();
    let physics = std::sync::Arc::new(physics);
    let mut op = OpenClIntegrator::new(op, physics, &[], Assembly::Atomic).unwrap();
    let mut gpu = vec![0.0; u.len()];
    op.set_cell_inputs(&inputs).unwrap();
    op.integrate_cells().unwrap();
    op.read_element_vectors(&mut gpu).unwrap();
    (native, gpu, disc.n_bt())
}

/// The residual `F(u)` of `physics` (P2, the default degree-4 rule: 14
/// points in 3D) for a random `u`, natively and on the device, in f64.
fn residuals_both(
    mesh: &std::sync::Arc<femquad::mesh::Mesh>,
    physics: &'static dyn PointwiseEval<f64>,
) -> (Vec<f64>, Vec<f64>) {
    use femquad::prelude::*;
    let device = with_probe(|probe| probe.device().clone());
    let backends = [
        Backend::native(),
        Backend::opencl_with(device, femquad::opencl::testing::options()),
    ];
    let [native, gpu] = backends.map(|b| {
        let element = Element::lagrange(mesh.dim(), 2).unwrap();
        let space = FunctionSpace::new(mesh.clone(), element, 1).unwrap();
        let q = Quadrature::default_for(&element).unwrap();
        let form = Form::new(space, physics).and_then(|f| f.with_quadrature(q));
        let mut res = Operator::new(form.unwrap(), &b).unwrap();
        let values = femquad::rng::Rng::new(8).vec(res.space().n_dofs(), 0.5, 1.5);
        let u = res.vector_from(&values).unwrap();
        let mut r = res.vector().unwrap();
        res.apply(&u, &mut r).unwrap();
        r.to_host().unwrap()
    });
    (native, gpu)
}

/// Unjittered unit boxes whose cells have quadrature points at `x₀ = 0.5`
/// (`n` odd: the 14-point rule's orbit `(a, a, b, b)`, `a + b = 1/2`, puts
/// points in the middle of cells with two vertices on each side), in the
/// grid's vertex order and shuffled.
fn meshes_with_points_on_half(dim: usize) -> Vec<Arc<femquad::mesh::Mesh>> {
    use femquad::mesh::generate::{MeshOptions, unit_box};
    let mut meshes = Vec::new();
    for n in [1, 3, 5] {
        for shuffle in [false, true] {
            let opts = MeshOptions {
                jitter: 0.0,
                shuffle,
                seed: 11,
            };
            meshes.push(Arc::new(unit_box(dim, n, &opts).unwrap()));
        }
    }
    meshes
}

/// Issue #10: the kernel computed the quadrature point `x` differently
/// from the native integrator (0.49999999999999994 where native gives 0.5),
/// and `if x[0] < 0.5 { 1.0 } else { 100.0 }` changed element vectors by
/// 7–15 % (3D, 14-point rule). Both compute
/// `x = X_0 + Σ_e ξ_e (X_{e+1} − X_0)`, in this order, without contraction.
#[test]
fn quadrature_points_are_the_same_numbers_on_the_device() {
    for dim in [3, 2] {
        for mesh in meshes_with_points_on_half(dim) {
            let what = format!("{dim}D, {} cells", mesh.n_cells());
            // the bits of x at every point: equal
            let (native, gpu, n_bt) = element_vectors_both(&mesh, &PointBits, dim);
            for (c, (n, g)) in native.chunks(n_bt).zip(gpu.chunks(n_bt)).enumerate() {
                let d = pointwise_support::rel_diff(g, n);
                assert!(
                    d <= 1e-12,
                    "{what}, cell {c}: the low bits of x differ ({d:e})\nOpenCL {g:?}\nnative {n:?}"
                );
            }
            if dim == 2 {
                continue;
            }
            // native points on the jump: the next check is not vacuous
            let (on, _, n_bt) = element_vectors_both(&mesh, &NearTheJump, 1);
            let cells = on.chunks(n_bt).filter(|e| e.iter().any(|v| *v != 0.0));
            let cells = cells.count();
            println!("{what}: {cells} cells with points at |x₀ − 0.5| ≤ 2.3e-16");
            assert!(cells > 0, "{what}: no point at x₀ = 0.5");
            // a coefficient that jumps there
            let (native, gpu, n_bt) = element_vectors_both(&mesh, &JumpAtHalf, 1);
            for (c, (n, g)) in native.chunks(n_bt).zip(gpu.chunks(n_bt)).enumerate() {
                let d = pointwise_support::rel_diff(g, n);
                assert!(
                    d <= 1e-12,
                    "{what}, cell {c}: element vectors differ by {d:e}\nOpenCL {g:?}\nnative {n:?}"
                );
            }
            // and the residual through the public API (the fused kernel)
            let (native, gpu) = residuals_both(&mesh, &JumpAtHalf);
            let d = pointwise_support::rel_diff(&gpu, &native);
            assert!(d <= 1e-12, "{what}: residuals differ by {d:e}");
        }
    }
}

#[test]
fn flop_counts_of_huge_loops_saturate() {
    let info = HugeLoops.info();
    assert_eq!(info.flops, [u64::MAX; 2]);
    assert_eq!(info.tangent_flops, [u64::MAX; 2]);
    assert_eq!(info.jacobian_flops, [u64::MAX; 2]);
}
