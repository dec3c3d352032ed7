//! Test physics shared by the `pointwise_*` tests: every construct of the
//! subset in one physics (with helpers of every kind), and a smooth physics
//! calling every math function (for derivative checks).
#![allow(dead_code)]

use femquad::pointwise;

/// A scalar helper.
#[pointwise]
fn sq(v: f64) -> f64 {
    v * v
}

/// A helper over arrays, generic over the dimension.
#[pointwise]
fn dot<const D: usize>(p: &[f64; D], q: &[f64; D]) -> f64 {
    let mut s = 0.0;
    for i in 0..D {
        s += p[i] * q[i];
    }
    s
}

/// A helper calling a helper.
#[pointwise(helpers(dot, sq))]
fn norm2<const D: usize>(p: &[f64; D]) -> f64 {
    sq(dot(p, p).sqrt())
}

/// A helper writing through `&mut`, with an integer and a 2-D array parameter.
#[pointwise]
fn add_scaled_row<const D: usize>(m: &mut [[f64; D]; 2], row: usize, v: &[f64; D], s: f64) {
    for d in 0..D {
        m[row][d] += s * v[d];
    }
}

/// A helper reading a 2-D array and returning from an `if` expression.
#[pointwise]
fn trace_or_zero<const D: usize>(m: &[[f64; D]; D], on: bool) -> f64 {
    if on {
        let mut t = 0.0;
        for d in 0..D {
            t += m[d][d];
        }
        t
    } else {
        0.0
    }
}

/// Every accepted construct at least once (see the rustdoc of `pointwise`).
#[allow(
    clippy::eq_op,
    clippy::nonminimal_bool,
    clippy::neg_cmp_op_on_partial_ord
)]
#[pointwise(helpers(sq, dot, norm2, add_scaled_row, trace_or_zero), name = EveryConstruct)]
pub fn every_construct<const D: usize>(
    u: &[f64; 2],
    grad_u: &[[f64; D]; 2],
    a: &[f64; 1],
    grad_a: &[[f64; D]; 1],
    x: &[f64; D],
    constants: &[f64; 3],
    f0: &mut [f64; 2],
    f1: &mut [[f64; D]; 2],
) {
    // user constants, one used as a loop bound and an array length
    const HALF: f64 = 0.5;
    const N: usize = 3;
    const SCALE: f64 = HALF * 4.0 - 1.0;
    // let, let mut, typed let, shadowing, names that are C keywords
    let float = u[0];
    let int: f64 = u[1] * SCALE;
    let acc = 0.0;
    let acc2 = acc;
    let mut acc = acc2 + float;
    let λ = constants[0];
    // arithmetic, unary minus, compound assignment
    let mut s = (float + int) * 2.0 - int / 3.0;
    s += -float;
    s -= 0.25;
    s *= 1.5;
    s /= 2.0 + float * float;
    // integer arithmetic, %, casts both ways
    let k: i32 = 7;
    let m = (k % 3 + 2 * k - 1) / 2;
    let idx = (m as usize) % 2;
    let r = m as f64 + (u[0] * 4.0) as i32 as f64;
    // float remainder
    let fr = (u[0] * 7.0) % 1.5;
    // comparisons and boolean operators
    let big = u[0] > 0.0 && u[1] >= -0.5 || !(u[0] < -0.9) && u[1] <= 0.9;
    let same = u[0] == u[0] && u[0] != u[1];
    // if as a statement, with else-if
    let mut branch = 0.0;
    if big {
        branch += 1.0;
    } else if same {
        branch -= 1.0;
    } else {
        branch = 0.5;
    }
    // if as an expression, without and with statements in the branches
    let sign = if u[1] > 0.0 { 1.0 } else { -1.0 };
    let picked = if u[0] < u[1] {
        let t = u[1] - u[0];
        t * t
    } else if big {
        let mut t = u[0];
        t *= 2.0;
        t
    } else {
        0.0
    };
    // a block expression
    let blk = {
        let t = a[0] * 2.0;
        t + 1.0
    };
    // statements inside operands: evaluation order and short circuit kept
    let mut tick = u[0];
    let spilled = tick
        + if u[1] > 0.0 {
            tick += 1.0;
            tick
        } else {
            0.0
        };
    let short = u[0] > 0.5 && {
        let t = u[1] * 2.0;
        t > 0.0
    };
    let ordered = spilled + if short { 1.0 } else { 0.0 };
    // arrays: repeat, literal, nested, copies
    let mut v = [0.0; D];
    let w = [u[0], u[1], λ];
    let mut mat = [[0.0; D]; 2];
    let g0 = grad_u[0];
    let mut sum3 = 0.0;
    for i in 0..N {
        sum3 += w[i];
    }
    // loops: 0..D, inclusive, offset, `_`, nested
    for d in 0..D {
        v[d] = x[d] + grad_a[0][d];
    }
    for _ in 0..=1 {
        acc += 0.125;
    }
    for d in 1..D {
        v[d] -= v[d - 1] * HALF;
    }
    for c in 0..2 {
        for d in 0..D {
            mat[c][d] = grad_u[c][d] * (c as f64 + 1.0) + D as f64;
        }
    }
    // math functions, method and path forms, and a constant
    let p = u[0].abs() + 0.5;
    let q = u[1] * 0.9;
    let mut fun = p.sqrt() + f64::exp(q) + p.ln() + p.log10() + p.powi(3) + p.powf(q);
    fun += q.sin() + q.cos() + q.tan() + f64::tanh(q) + q.abs() + q.min(p) + p.max(q);
    fun += q.mul_add(p, 0.25) + q.exp2() + p.log2() + q.cbrt() + p.hypot(q);
    fun += q.asin() + q.acos() + q.atan() + q.atan2(p) + q.sinh() + q.cosh();
    let steps =
        (u[0] * 4.0).floor() + (u[1] * 4.0).ceil() + (u[0] * 8.0).round() + (u[1] * 8.0).trunc();
    let circle = std::f64::consts::PI * sq(p);
    // helpers: scalar, arrays, nested helpers, &mut array, 2-D array
    let n2 = norm2(&v) + dot(&g0, x);
    add_scaled_row(&mut mat, idx, &v, HALF);
    let mut square = [[0.0; D]; D];
    for i in 0..D {
        for j in 0..D {
            square[i][j] = grad_u[i % 2][j];
        }
    }
    let tr = trace_or_zero(&square, big);
    // outputs: element and whole-row assignment, compound
    f0[0] = s + acc + r + fr + branch * sign + picked + blk + sum3 + steps + tr + ordered;
    f0[1] = fun * 1e-2 + circle - n2 * constants[1] + constants[2] / 3.0;
    f1[0] = mat[0];
    f1[1] = [0.0; D];
    for d in 0..D {
        f1[1][d] = mat[1][d] - g0[d] * a[0];
    }
    f1[1][0] += int;
}

/// Every math function, with arguments in their domains, and the
/// arithmetic operators: smooth where the test points lie (derivatives are
/// checked against differences).
#[pointwise(helpers(dot))]
pub fn every_function<const D: usize>(
    u: &[f64; 2],
    grad_u: &[[f64; D]; 2],
    a: &[f64; 1],
    constants: &[f64; 1],
    f0: &mut [f64; 2],
    f1: &mut [[f64; D]; 2],
) {
    let p = u[0] * 0.3 + 1.5; // in (1.2, 1.8)
    let q = u[1] * 0.4; // in (-0.4, 0.4)
    let g = grad_u[0];
    let r = dot(&g, &g) + 0.5;
    let mut s = p.sqrt() + q.exp() + p.ln() + p.log10() + p.log2() + q.exp2();
    s += p.powi(3) + p.powi(-2) + p.powf(q) + q.powf(2.0) + p.powf(1.5);
    s += q.sin() + q.cos() + q.tan() + q.tanh() + q.sinh() + q.cosh();
    s += q.asin() + q.acos() + q.atan() + q.atan2(p) + p.atan2(q) + p.hypot(q) + q.cbrt();
    s += (q - 0.7).abs() + p.min(2.0) + q.max(-1.0) + p.mul_add(q, r) + r.sqrt();
    s += (p * 7.0) % 1.3 + p / (q + 3.0) - q * a[0] + constants[0] / p;
    f0[0] = s;
    f0[1] = -s * q + u[0] * u[1];
    for d in 0..D {
        f1[0][d] = grad_u[0][d] * p.exp() + grad_u[1][d] / r;
        f1[1][d] = (grad_u[1][d] * q).sin() * a[0];
    }
}
