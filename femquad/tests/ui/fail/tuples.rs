use femquad::pointwise;

#[pointwise]
fn with_tuples(constants: &[f64; 2], u: &[f64; 1], f0: &mut [f64; 1]) {
    let (mu, lambda) = (constants[0], constants[1]);
    let pair = (mu, lambda);
    f0[0] = pair.0 * u[0];
}

fn main() {}
