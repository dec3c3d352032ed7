//! Helper functions: scalar and array parameters, `&mut` arrays, helpers
//! calling helpers, helpers in other modules (by path and through `use`),
//! generic over the dimension; their f32 twins serve `PointwiseEval<f32>`.
#![allow(dead_code, clippy::all)]

use femquad::physics::{PointArgs, Pointwise, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

pub mod util {
    use femquad::pointwise;

    /// κ(u) = 1 + u²
    #[pointwise]
    pub fn kappa(u: f64) -> f64 {
        1.0 + u * u
    }

    #[pointwise]
    pub fn dot<const D: usize>(p: &[f64; D], q: &[f64; D]) -> f64 {
        let mut s = 0.0;
        for d in 0..D {
            s += p[d] * q[d];
        }
        s
    }

    /// Calls two helpers of this module, one of them through `self::`.
    #[pointwise(helpers(kappa, self::dot))]
    pub fn energy<const D: usize>(u: f64, g: &[f64; D]) -> f64 {
        0.5 * kappa(u) * self::dot(g, g)
    }

    /// Writes through `&mut`; an integer parameter.
    #[pointwise]
    pub fn axpy<const D: usize>(y: &mut [[f64; D]; 2], row: usize, a: f64, x: &[f64; D]) {
        for d in 0..D {
            y[row][d] += a * x[d];
        }
    }
}

use util::axpy;

/// A helper of fixed length, called with an array literal.
#[pointwise]
fn sum3(v: &[f64; 3]) -> f64 {
    v[0] + v[1] + v[2]
}

/// A helper whose value comes from an `if`, with a `bool` parameter.
#[pointwise(helpers(util::kappa))]
fn clipped(v: f64, on: bool) -> f64 {
    if on && v > 0.0 { util::kappa(v) } else { 0.0 }
}

#[pointwise(helpers(util::energy, util::dot, util::kappa, axpy, sum3, clipped))]
pub fn with_helpers<const D: usize>(
    a: &[f64; 1],
    grad_u: &[[f64; D]; 2],
    f0: &mut [f64; 2],
    f1: &mut [[f64; D]; 2],
) {
    let e = util::energy(a[0], &grad_u[0]);
    f0[0] = e + util::dot(&grad_u[0], &grad_u[1]);
    // an `if` with a helper call in each branch: counted as the larger
    let pick = if a[0] > 0.0 {
        util::kappa(a[0])
    } else {
        sum3(&[a[0], 1.0, 2.0])
    };
    f0[1] = sum3(&[a[0], e, 1.0]) + clipped(a[0], true) + clipped(a[0], false) + pick;
    f1[1] = grad_u[1];
    axpy(f1, 0, a[0], &grad_u[1]);
    axpy(f1, 1, 2.0, &grad_u[0]);
}

/// Scales `q[0]` by `s`, returns `q[1]·s`: writes through `&mut`.
#[pointwise]
fn scale_first(q: &mut [f64; 2], s: f64) -> f64 {
    q[0] *= s;
    q[1] * s
}

/// A `&mut` parameter passed on by name and read by a later argument (a
/// two-phase reborrow in Rust: `q[0]` is read before the call).
#[pointwise(helpers(scale_first))]
fn pass_on(q: &mut [f64; 2], s: f64) -> f64 {
    scale_first(q, q[0] * s) + q[0]
}

#[pointwise(helpers(pass_on))]
pub fn reborrows(u: &[f64; 2], f0: &mut [f64; 2]) {
    let mut v = [u[0], u[1]];
    f0[0] = pass_on(&mut v, u[1]);
    f0[1] = v[0] * v[1];
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&WithHelpers, &Reborrows];

pub fn main() {
    let g = [1.0, 2.0, 3.0, 4.0];
    let args = PointArgs {
        u: &[],
        grad_u: &g,
        a: &[2.0],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    let (mut f0, mut f1) = ([0.0; 2], [0.0; 4]);
    WithHelpers.eval(2, &args, &mut f0, &mut f1).unwrap();
    let e = 0.5 * 5.0 * 5.0;
    assert_eq!(f0, [e + 11.0, 2.0 + e + 1.0 + 5.0 + 5.0]);
    assert_eq!(f1, [6.0, 8.0, 5.0, 8.0]);

    let g32 = [1.0f32, 2.0, 3.0, 4.0];
    let args = PointArgs {
        u: &[],
        grad_u: &g32,
        a: &[2.0f32],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    let (mut f0, mut f1) = ([0.0f32; 2], [0.0f32; 4]);
    WithHelpers.eval(2, &args, &mut f0, &mut f1).unwrap();
    assert_eq!(f0, [12.5 + 11.0, 2.0 + 12.5 + 1.0 + 5.0 + 5.0]);
    assert_eq!(f1, [6.0, 8.0, 5.0, 8.0]);

    // The helpers stay ordinary Rust functions.
    assert_eq!(util::kappa(3.0), 10.0);
    assert_eq!(util::dot(&[1.0, 2.0, 3.0], &[1.0, 1.0, 1.0]), 6.0);

    // Flops include the helpers': energy = 2 + κ 2 + dot 2·D; f0[0]: 1 + dot;
    // f0[1]: sum3 2 + 3 + clipped 2 (twice); pick max(κ 2, sum3 2);
    // axpy 2·D (twice).
    let flops = WithHelpers.info().flops;
    assert_eq!(flops[0], (4 + 4) + (1 + 4) + (2 + 3 + 2 * 2) + 2 + 2 * 4);
    assert_eq!(flops[1], (4 + 6) + (1 + 6) + (2 + 3 + 2 * 2) + 2 + 2 * 6);

    // The OpenCL source defines each helper once, callees first.
    let src = WithHelpers.opencl_source();
    let pos = |needle: &str| {
        src.find(needle)
            .unwrap_or_else(|| panic!("{needle} missing in\n{src}"))
    };
    assert_eq!(src.matches("real pw_kappa_").count(), 1, "{src}");
    assert_eq!(src.matches("real pw_dot_").count(), 1, "{src}");
    assert!(pos("real pw_kappa_") < pos("real pw_energy_"));
    assert!(pos("real pw_dot_") < pos("real pw_energy_"));
    assert!(pos("void pw_axpy_") < pos("void pw_with_helpers("));
    assert!(!src.contains("@@"));
}
