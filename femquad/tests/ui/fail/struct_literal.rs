use femquad::pointwise;

struct Material {
    mu: f64,
}

#[pointwise]
fn with_struct(constants: &[f64; 1], u: &[f64; 1], f0: &mut [f64; 1]) {
    let m = Material { mu: constants[0] };
    f0[0] = m.mu * u[0];
}

fn main() {}
