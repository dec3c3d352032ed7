//! Fixed-size arrays (repeat, literal, nested, copies, whole-row
//! assignment) and `for` loops with constant bounds.
#![allow(dead_code, clippy::all)]

use femquad::physics::{PointArgs, Pointwise, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

#[pointwise]
pub fn arrays_and_loops<const D: usize>(
    grad_u: &[[f64; D]; 2],
    x: &[f64; D],
    f0: &mut [f64; 2],
    f1: &mut [[f64; D]; 2],
) {
    const N: usize = 4;
    let mut m = [[0.0; D]; 2];
    let weights = [1.0, 2.0, 3.0, 4.0];
    let nested = [[1.0, 2.0], [3.0, 4.0]];
    let mut acc = [0.0; N];
    for i in 0..N {
        acc[i] = weights[i] * nested[i % 2][i / 2];
    }
    // inclusive and offset ranges, `_`
    let mut s = 0.0;
    for i in 0..=3 {
        s += acc[i];
    }
    for _ in 1..3 {
        s *= 0.5;
    }
    for c in 0..2 {
        for d in 0..D {
            m[c][d] = grad_u[c][d] * x[d];
        }
    }
    // copy a row, assign whole rows (copy, literal, repeat)
    let row = m[1];
    let mut swapped = m;
    swapped[1] = m[0];
    swapped[0] = row;
    let mut pair = [row[0], row[1]];
    // reads the destination: built in a temporary first
    pair = [pair[1], pair[0]];
    f1[0] = swapped[0];
    f1[1] = [D as f64; D];
    for d in 2..D {
        f1[1][d] = row[d];
    }
    m = [[1.0; D]; 2];
    f0[0] = s + m[1][0] + pair[0];
    f0[1] = swapped[1][D - 1];
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&ArraysAndLoops];

pub fn main() {
    let g = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let x = [1.0, 10.0, 100.0];
    let args = PointArgs {
        u: &[],
        grad_u: &g,
        a: &[],
        grad_a: &[],
        x: &x,
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    let (mut f0, mut f1) = ([0.0; 2], [0.0; 6]);
    ArraysAndLoops.eval(3, &args, &mut f0, &mut f1).unwrap();
    // acc = [1·1, 2·3, 3·2, 4·4] = [1, 6, 6, 16], s = 29 / 4;
    // m = [[1, 20, 300], [4, 50, 600]], pair = [50, 4]
    assert_eq!(f0, [29.0 / 4.0 + 1.0 + 50.0, 300.0]);
    assert_eq!(f1, [4.0, 50.0, 600.0, 3.0, 3.0, 600.0]);

    let g32 = [1.0f32, 2.0, 3.0, 4.0];
    let x32 = [1.0f32, 10.0];
    let args32 = PointArgs {
        u: &[],
        grad_u: &g32,
        a: &[],
        grad_a: &[],
        x: &x32,
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    let (mut f0, mut f1) = ([0.0f32; 2], [0.0f32; 4]);
    ArraysAndLoops.eval(2, &args32, &mut f0, &mut f1).unwrap();
    // m = [[1, 20], [3, 40]], pair = [40, 3]
    assert_eq!(f0, [29.0 / 4.0 + 1.0 + 40.0, 20.0]);
    assert_eq!(f1, [3.0, 40.0, 2.0, 2.0]);
    // 4 + 4 + 2 products and sums, 2·D products, 2 sums
    assert_eq!(ArraysAndLoops.info().flops, [12 + 4, 12 + 6]);
}
