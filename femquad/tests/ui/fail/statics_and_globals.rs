use femquad::pointwise;

static GRAVITY: f64 = 9.81;
const DENSITY: f64 = 1000.0;

#[pointwise]
fn weight(u: &[f64; 1], f0: &mut [f64; 1]) {
    static mut CALLS: f64 = 0.0;
    f0[0] = GRAVITY * DENSITY * u[0] + crate::DENSITY;
}

fn main() {}
