//! Physics of the device tests beyond the built-in ones: an `f0` that
//! depends on `u` (a reaction) and on `x` (a manufactured source).

use crate::pointwise;

/// Poisson with a cubic reaction and a constant source,
/// `−Δu + k u³ + u = f`: `f0 = k u³ + u − f`, `f1 = ∇u`, with
/// `constants = [k, f]`.
#[pointwise]
pub fn reaction_source<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    constants: &[f64; 2],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = constants[0] * u[0] * u[0] * u[0] + u[0] - constants[1];
    f1[0] = grad_u[0];
}

/// Poisson with the manufactured source of `u* = Π_d sin(π x_d)`,
/// `−Δu = D π² u*`: `f0 = −D π² Π_d sin(π x_d)`, `f1 = ∇u`.
#[pointwise]
pub fn manufactured_poisson<const D: usize>(
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    let pi = std::f64::consts::PI;
    let mut product = 1.0;
    for d in 0..D {
        product *= f64::sin(pi * x[d]);
    }
    f0[0] = -(D as f64) * pi * pi * product;
    f1[0] = grad_u[0];
}
