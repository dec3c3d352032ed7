use femquad::pointwise;

// A declared helper must be a #[pointwise] function itself: a plain Rust
// function has no OpenCL version. The macro cannot see other functions, so
// this one is reported by rustc, on the declaration.
fn kappa(u: f64) -> f64 {
    1.0 + u * u
}

#[pointwise(helpers(kappa))]
fn diffusion<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let k = kappa(u[0]);
    for d in 0..D {
        f1[0][d] = k * grad_u[0][d];
    }
}

fn main() {}
