//! The worked example of the `#[pointwise]` user guide, and the
//! OpenCL C the guide shows for it.
#![allow(dead_code)]

use femquad::physics::{PointArgs, Pointwise, PointwiseEval, PointwiseEvalBoth};
use femquad::pointwise;

/// Diffusivity κ(u) = 1 + u²: a helper, callable from other #[pointwise] functions.
#[pointwise]
pub fn kappa(u: f64) -> f64 {
    1.0 + u * u
}

/// −∇·(κ(u) ∇u) = f, in 2D and 3D: f0 = −f, f1 = κ(u) ∇u, constants = [f].
#[pointwise(helpers(kappa))]
pub fn nonlinear_poisson<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    constants: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    let k = kappa(u[0]);
    f0[0] = -constants[0];
    for d in 0..D {
        f1[0][d] = k * grad_u[0][d];
    }
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&NonlinearPoisson];

pub fn main() {
    // The macro generated `struct NonlinearPoisson;` implementing `Pointwise`.
    let info = NonlinearPoisson.info();
    assert_eq!(info.dims, &[2, 3]);
    assert_eq!(info.flops, [1 + 2 + 2, 1 + 2 + 3]); // −f, κ, D products

    let args = PointArgs {
        u: &[2.0],
        grad_u: &[1.0, 3.0],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[4.0],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    let (mut f0, mut f1) = ([0.0], [0.0; 2]);
    NonlinearPoisson.eval(2, &args, &mut f0, &mut f1).unwrap();
    assert_eq!((f0, f1), ([-4.0], [5.0, 15.0]));

    // The kept function is plain Rust:
    let mut g = [[0.0; 3]; 1];
    nonlinear_poisson(&[0.0], &[[1.0, 2.0, 3.0]], &[0.0], &mut [0.0], &mut g);
    assert_eq!(g, [[1.0, 2.0, 3.0]]);

    let src = NonlinearPoisson.opencl_source();
    let guide = include_str!("../../../../femquad-macros/src/guide.md");
    let shown = guide
        .split("```c\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .expect("C block in the guide");
    assert!(
        src.starts_with(shown),
        "the guide shows another OpenCL source:\n{src}"
    );
    assert!(src.contains("void pw_nonlinear_poisson_jacobian("), "{src}");
}
