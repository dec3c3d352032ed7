use femquad::pointwise;

#[pointwise]
fn clipped(u: &[f64; 1], f0: &mut [f64; 1]) {
    if u[0] < 0.0 {
        return;
    }
    f0[0] = u[0];
}

#[pointwise]
fn kappa(u: f64) -> f64 {
    if u < 0.0 {
        return 1.0;
    }
    return 1.0 + u * u;
}

fn main() {}
