//! Physics signatures: parameters by name, any subset, generic or fixed
//! dimension, vector fields, `_` prefixes, struct names and visibility.
#![allow(dead_code)]

use femquad::physics::{Extent, PointArgs, Pointwise, PointwiseEval, PointwiseEvalBoth, Reads};
use femquad::pointwise;

/// All eleven parameters, generic over the dimension (in an order of
/// their own: parameters are recognised by name).
#[pointwise]
pub fn everything<const D: usize>(
    u: &[f64; 2],
    grad_u: &[[f64; D]; 2],
    a: &[f64; 3],
    t: f64,
    grad_a: &[[f64; D]; 3],
    x: &[f64; D],
    u_t: &[f64; 2],
    constants: &[f64; 4],
    f0: &mut [f64; 2],
    n: &[f64; D],
    f1: &mut [[f64; D]; 2],
) {
    for c in 0..2 {
        f0[c] = u[c] + a[c] * constants[c] + x[0] + n[c] * u_t[c] * t;
        for d in 0..D {
            f1[c][d] = grad_u[c][d] - grad_a[c + 1][d];
        }
    }
}

/// Only `f0`, a 3-component field, fixed to 3D by `x`.
#[pointwise(name = Source3)]
pub(crate) fn source(x: &[f64; 3], f0: &mut [f64; 3]) {
    f0[0] = x[1];
    f0[1] = x[2];
    f0[2] = x[0];
}

/// A 2D vector field (`NC` = `D` = 2, literal).
#[pointwise]
fn planar_strain(grad_u: &[[f64; 2]; 2], f1: &mut [[f64; 2]; 2]) {
    f1[0][1] = grad_u[1][0];
    f1[1][0] = grad_u[0][1];
}

/// Unused parameters with `_`, vector field with `NC` = `D`.
#[pointwise]
fn underscored<const D: usize>(
    _u: &[f64; D],
    grad_u: &[[f64; D]; D],
    _constants: &[f64; 1],
    f1: &mut [[f64; D]; D],
) {
    for c in 0..D {
        f1[c][c] = grad_u[c][c];
    }
}

/// No dimension at all: valid in 2D and 3D, `D` not needed.
#[pointwise]
fn reaction(u: &[f64; 1], a: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = a[0] * u[0] * u[0];
}

/// Compiled out: its generated items go with it.
#[cfg(any())]
#[pointwise]
fn never(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = u[0];
}

/// The struct may be used from another module.
mod physics {
    use femquad::pointwise;

    /// A documented physics in a module.
    #[pointwise]
    pub fn scaled<const D: usize>(
        grad_u: &[[f64; D]; 1],
        constants: &[f64; 1],
        f1: &mut [[f64; D]; 1],
    ) {
        for d in 0..D {
            f1[0][d] = constants[0] * grad_u[0][d];
        }
    }
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[
    &Everything,
    &Source3,
    &PlanarStrain,
    &Underscored,
    &Reaction,
    &physics::Scaled,
];

pub fn main() {
    let e = Everything.info();
    assert_eq!(
        (e.name, e.opencl_name, e.dims),
        ("everything", "pw_everything", &[2usize, 3][..])
    );
    assert_eq!(
        (e.n_comp, e.n_aux, e.n_constants),
        (Extent::Fixed(2), Extent::Fixed(3), 4)
    );
    assert!(e.has_f0 && e.has_f1);
    let all = Reads {
        u: true,
        grad_u: true,
        a: true,
        grad_a: true,
        x: true,
        constants: true,
        n: true,
        u_t: true,
        t: true,
    };
    assert_eq!(e.reads, all);
    assert!(e.is_boundary() && e.is_transient());
    // per c: f0 6 flops, f1 D subtractions
    assert_eq!(e.flops, [2 * (6 + 2), 2 * (6 + 3)]);

    let s = Source3.info();
    assert_eq!(
        (s.name, s.dims, s.n_comp),
        ("source", &[3usize][..], Extent::Fixed(3))
    );
    assert!(s.has_f0 && !s.has_f1);
    assert_eq!(
        s.reads,
        Reads {
            x: true,
            ..Reads::default()
        }
    );
    assert_eq!(s.flops, [0, 0]);
    assert!(s.supports_dim(3) && !s.supports_dim(2));

    let p = PlanarStrain.info();
    assert_eq!((p.dims, p.n_comp), (&[2usize][..], Extent::Fixed(2)));

    let u = Underscored.info();
    assert_eq!((u.n_comp, u.n_constants), (Extent::Dim, 1));
    assert_eq!(
        u.reads,
        Reads {
            grad_u: true,
            ..Reads::default()
        }
    );

    let r = Reaction.info();
    assert_eq!((r.dims, r.flops), (&[2usize, 3][..], [2, 2]));

    // Values, in both precisions and dimensions.
    let g = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let ga = [0.5; 9];
    let args = PointArgs {
        u: &[1.0, 2.0],
        grad_u: &g,
        a: &[1.0, 2.0, 3.0],
        grad_a: &ga,
        x: &[10.0, 20.0, 30.0],
        constants: &[2.0, 3.0, 4.0, 5.0],
        n: &[0.6, 0.0, 0.8],
        u_t: &[7.0, 9.0],
        t: 0.5,
    };
    let (mut f0, mut f1) = ([0.0; 2], [0.0; 6]);
    Everything.eval(3, &args, &mut f0, &mut f1).unwrap();
    assert_eq!(
        f0,
        [1.0 + 2.0 + 10.0 + 0.6 * 7.0 * 0.5, 2.0 + 6.0 + 10.0 + 0.0]
    );
    assert_eq!(f1, [0.5, 1.5, 2.5, 3.5, 4.5, 5.5]);
    // Wrong lengths are errors, not panics.
    assert!(Everything.eval(2, &args, &mut f0, &mut f1).is_err());
    assert!(Source3.eval(2, &args, &mut [0.0; 3], &mut []).is_err());

    let mut f0 = [9.0f32; 3];
    let args32 = PointArgs {
        u: &[],
        grad_u: &[],
        a: &[],
        grad_a: &[],
        x: &[1.0f32, 2.0, 3.0],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    Source3.eval(3, &args32, &mut f0, &mut []).unwrap();
    assert_eq!(f0, [2.0, 3.0, 1.0]);

    // Declared outputs start at zero; entries the body does not write stay 0.
    let mut f1 = [7.0; 4];
    let args = PointArgs {
        u: &[],
        grad_u: &[1.0, 2.0, 3.0, 4.0],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    PlanarStrain.eval(2, &args, &mut [], &mut f1).unwrap();
    assert_eq!(f1, [0.0, 3.0, 2.0, 0.0]);

    let mut f1 = [0.0; 2];
    let args = PointArgs {
        u: &[],
        grad_u: &[1.0, 2.0],
        a: &[],
        grad_a: &[],
        x: &[],
        constants: &[3.0],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    physics::Scaled.eval(2, &args, &mut [], &mut f1).unwrap();
    assert_eq!(f1, [3.0, 6.0]);

    let mut f0 = [0.0];
    let args = PointArgs {
        u: &[3.0],
        grad_u: &[],
        a: &[2.0],
        grad_a: &[],
        x: &[],
        constants: &[],
        n: &[],
        u_t: &[],
        t: 0.0,
    };
    Reaction.eval(3, &args, &mut f0, &mut []).unwrap();
    assert_eq!(f0, [18.0]);

    // The kept functions are ordinary Rust.
    let mut out = [0.0; 1];
    reaction(&[2.0], &[1.0], &mut out);
    assert_eq!(out, [4.0]);
}
