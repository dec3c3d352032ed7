use femquad::pointwise;
use femquad::prelude::*;

// The struct `Residual` would shadow the prelude's `Residual` (a glob `use`
// gives way to a local item without a warning): rejected, on the name.
#[pointwise]
fn residual(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = u[0];
}

// Rust's prelude likewise, also when the name is chosen.
#[pointwise(name = Vec)]
fn source(f0: &mut [f64; 1]) {
    f0[0] = 1.0;
}

#[pointwise]
fn clone<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0] = grad_u[0];
}

fn main() {
    // No struct is generated in their place: the prelude's names keep their
    // meaning, and nothing else is reported.
    let _: Option<Residual<f64>> = None;
    let _: Vec<u8> = Vec::new();
}
