//! Every math function, as a method and through `f64::`, and the
//! constants of `std::f64::consts`.
#![allow(dead_code, clippy::all)]

use femquad::physics::{PointArgs, Pointwise, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

#[pointwise]
pub fn math(constants: &[f64; 2], f0: &mut [f64; 30]) {
    let p = constants[0].abs() + 0.5;
    let q = constants[1] * 0.9;
    f0[0] = p.sqrt();
    f0[1] = q.exp();
    f0[2] = p.ln();
    f0[3] = p.log10();
    f0[4] = q.powi(3);
    f0[5] = p.powf(q);
    f0[6] = q.sin();
    f0[7] = q.cos();
    f0[8] = q.tan();
    f0[9] = q.tanh();
    f0[10] = q.abs();
    f0[11] = p.min(q);
    f0[12] = p.max(q);
    f0[13] = p.mul_add(q, 0.5);
    f0[14] = q.exp2();
    f0[15] = p.log2();
    f0[16] = q.cbrt();
    f0[17] = p.hypot(q);
    f0[18] = q.asin();
    f0[19] = q.acos();
    f0[20] = q.atan();
    f0[21] = q.atan2(p);
    f0[22] = q.sinh();
    f0[23] = q.cosh();
    f0[24] = (q * 8.0).floor() + (q * 8.0).ceil() + (q * 8.0).round() + (q * 8.0).trunc();
    f0[25] = f64::sqrt(p) + f64::powi(q, 2) + f64::max(p, q) + f64::mul_add(p, q, 1.0);
    f0[26] = std::f64::consts::PI + core::f64::consts::E + std::f64::consts::SQRT_2;
    f0[27] = f64::ln(p) * std::f64::consts::LN_2;
    let n: i32 = 2;
    f0[28] = p.powi(n - 4);
    f0[29] = (p * q.abs()).sqrt().exp().ln();
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&Math];

pub fn main() {
    let u = [-0.3f64, 0.7];
    let mut f0 = [0.0; 30];
    let args = PointArgs {
        u: &[],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &u,
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    Math.eval(2, &args, &mut f0, &mut []).unwrap();
    let p = 0.8f64;
    let q: f64 = 0.7 * 0.9;
    let want = [
        p.sqrt(),
        q.exp(),
        p.ln(),
        p.log10(),
        q.powi(3),
        p.powf(q),
        q.sin(),
        q.cos(),
        q.tan(),
        q.tanh(),
        q.abs(),
        p.min(q),
        p.max(q),
        p.mul_add(q, 0.5),
        q.exp2(),
        p.log2(),
        q.cbrt(),
        p.hypot(q),
        q.asin(),
        q.acos(),
        q.atan(),
        q.atan2(p),
        q.sinh(),
        q.cosh(),
        (q * 8.0).floor() + (q * 8.0).ceil() + (q * 8.0).round() + (q * 8.0).trunc(),
        p.sqrt() + q * q + p + p.mul_add(q, 1.0),
        std::f64::consts::PI + std::f64::consts::E + std::f64::consts::SQRT_2,
        p.ln() * std::f64::consts::LN_2,
        p.powi(-2),
        (p * q.abs()).sqrt().exp().ln(),
    ];
    for (i, (g, w)) in f0.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-15 * w.abs().max(1.0),
            "entry {i}: {g} vs {w}"
        );
    }
    // one flop per call and per operation
    assert_eq!(Math.info().flops, [55, 55]);
}
