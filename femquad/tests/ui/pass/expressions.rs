//! Expressions: arithmetic, unary minus, `%`, comparisons, `&& || !`,
//! casts, literal forms.
#![allow(dead_code, clippy::all)]

use femquad::physics::{PointArgs, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

#[pointwise]
pub fn expressions(constants: &[f64; 2], f0: &mut [f64; 10]) {
    let a = constants[0];
    let b = constants[1];
    f0[0] = a + b * 2.0 - a / 4.0;
    f0[1] = -a - -b;
    f0[2] = (a * 3.0) % 2.0;
    let i: i32 = -7;
    let j = 3;
    f0[3] = (i % j) as f64 + (i / j) as f64;
    let k: usize = 10;
    f0[4] = (k % 4 + k / 3) as f64;
    let lt = a < b;
    let ge = a >= b;
    let both = lt && !ge || a == b && a != 0.0;
    f0[5] = if both { 1.0 } else { 0.0 };
    f0[6] = if a <= b || b > 1.0 { 1.0 } else { 0.0 };
    // casts: float → int truncates toward zero
    f0[7] = (a * 10.0) as i32 as f64 + (b * 10.0) as usize as f64;
    f0[8] = 1_000.5 + 1e-3 + 2.5e2 + 0x10 as f64;
    f0[9] = (j as usize + k) as f64;
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&Expressions];

pub fn main() {
    let mut f0 = [0.0; 10];
    let args = PointArgs {
        u: &[],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[0.35, 0.8],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    Expressions.eval(2, &args, &mut f0, &mut []).unwrap();
    let (a, b) = (0.35f64, 0.8f64);
    assert_eq!(f0[0], a + b * 2.0 - a / 4.0);
    assert_eq!(f0[1], -a + b);
    assert_eq!(f0[2], (a * 3.0) % 2.0);
    assert_eq!(f0[3], -1.0 + -2.0);
    assert_eq!(f0[4], 2.0 + 3.0);
    assert_eq!(f0[5], 1.0);
    assert_eq!(f0[6], 1.0);
    assert_eq!(f0[7], 3.0 + 8.0);
    assert_eq!(f0[8], 1000.5 + 0.001 + 250.0 + 16.0);
    assert_eq!(f0[9], 13.0);
}
