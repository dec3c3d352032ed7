use femquad::pointwise;

#[pointwise]
fn kappa(u: f64, scale: usize) -> f64 {
    scale as f64 * (1.0 + u * u)
}

// The call does not fit the helper: rustc says so once, on this function
// (not again on its generated f32 translation).
#[pointwise(helpers(kappa))]
fn diffusion(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = kappa(2, 2);
}

fn main() {}
