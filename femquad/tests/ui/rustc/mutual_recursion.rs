use femquad::pointwise;

#[pointwise(helpers(odd))]
fn even(u: f64) -> f64 {
    if u < 1.0 { 1.0 } else { odd(u - 1.0) }
}

#[pointwise(helpers(even))]
fn odd(u: f64) -> f64 {
    if u < 1.0 { 0.0 } else { even(u - 1.0) }
}

// Reported once per helper, and nothing more for a physics calling them
// (their flop counts and linearity are not constants that rustc would find
// in a cycle).
#[pointwise(helpers(even))]
fn parity(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = even(u[0]);
}

fn main() {}
