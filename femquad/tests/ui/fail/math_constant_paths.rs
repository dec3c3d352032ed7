use femquad::pointwise;
use std::f64::consts::PI;

// Math constants are recognized by their full path only.
#[pointwise]
fn circle(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = f64::consts::PI * u[0] * u[0] + PI;
}

fn main() {}
