use femquad::pointwise;

fn kappa(u: f64) -> f64 {
    1.0 + u * u
}

#[pointwise]
fn diffusion<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let k = kappa(u[0]);
    let m = f64::from(2.0f32);
    for d in 0..D {
        f1[0][d] = k * m * grad_u[0][d];
    }
}

fn main() {}
