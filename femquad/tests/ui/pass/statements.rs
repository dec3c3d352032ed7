//! Statements: `let` (plain, `mut`, typed, `_`, shadowing), assignment and
//! compound assignment, `if`/`else` as statement and expression, blocks,
//! local constants.
#![allow(dead_code, unused_assignments, clippy::all)]

use femquad::physics::{PointArgs, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

#[pointwise]
pub fn statements(constants: &[f64; 3], f0: &mut [f64; 8]) {
    const TWO: f64 = 2.0;
    const COUNT: usize = 3;
    const HALF_COUNT: i32 = COUNT as i32 / 2;
    const ON: bool = true;
    let a = constants[0];
    let b: f64 = constants[1];
    let mut c = a + b;
    let _ = c * 2.0;
    c += 1.0;
    c -= 0.5;
    c *= TWO;
    c /= 4.0;
    let mut n: i32 = 7;
    n %= 4;
    n += HALF_COUNT;
    let mut fm = constants[2] * 10.0;
    fm %= 3.0;
    let a = a * 10.0;
    f0[0] = c;
    f0[1] = n as f64;
    f0[2] = fm;
    f0[3] = a;
    if constants[0] > 0.0 {
        f0[4] = 1.0;
    } else if constants[0] < -0.5 {
        f0[4] = -1.0;
    } else {
        f0[4] = 0.0;
    }
    if ON {
        f0[5] = COUNT as f64;
    }
    f0[6] = if constants[1] > 0.0 {
        constants[1]
    } else {
        -constants[1]
    };
    f0[7] = {
        let t = constants[2] + 1.0;
        let s = if t > 1.0 {
            let mut w = t;
            w *= t;
            w
        } else if t > 0.5 {
            t
        } else {
            0.0
        };
        s + t
    };
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&Statements];

fn eval(u: [f64; 3]) -> [f64; 8] {
    let mut f0 = [0.0; 8];
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
    Statements.eval(2, &args, &mut f0, &mut []).unwrap();
    let mut f32s = [0.0f32; 8];
    let u32s = u.map(|v| v as f32);
    let args = PointArgs {
        u: &[],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &u32s,
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    Statements.eval(3, &args, &mut f32s, &mut []).unwrap();
    for (x, y) in f0.iter().zip(f32s) {
        assert!(
            (x - y as f64).abs() < 1e-5 * (1.0 + x.abs()),
            "{f0:?} {f32s:?}"
        );
    }
    f0
}

pub fn main() {
    let f = eval([0.5, 0.25, 0.3]);
    let c = ((0.75 + 1.0 - 0.5) * 2.0) / 4.0;
    assert_eq!(f[0], c);
    assert_eq!(f[1], 4.0); // 7 % 4 + 1
    assert!((f[2] - (3.0f64 % 3.0)).abs() < 1e-12);
    assert_eq!(f[3], 5.0);
    assert_eq!(f[4], 1.0);
    assert_eq!(f[5], 3.0);
    assert_eq!(f[6], 0.25);
    assert!((f[7] - (1.3 * 1.3 + 1.3)).abs() < 1e-12);
    let f = eval([-0.75, -0.25, -0.3]);
    assert_eq!(f[4], -1.0);
    assert_eq!(f[6], 0.25);
    assert!((f[7] - (0.7 + 0.7)).abs() < 1e-12);
    let f = eval([-0.25, 0.0, -0.8]);
    assert_eq!(f[4], 0.0);
    assert!((f[7] - 0.2).abs() < 1e-12);
}
