use femquad::pointwise;

// A declared helper must be a #[pointwise] function itself: a plain Rust
// function has no OpenCL version. The macro cannot see other functions; the
// error, on the declaration, says what to do.
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

mod util {
    pub fn scale(v: &mut [f64; 2], s: f64) {
        v[0] *= s;
        v[1] *= s;
    }
}

// Also by a path, with array arguments, in a helper: once, and nothing else.
#[pointwise(helpers(util::scale))]
fn scaled_sum(a: f64, b: f64) -> f64 {
    let mut v = [a, b];
    util::scale(&mut v, 2.0);
    v[0] + v[1]
}

fn main() {}
