use femquad::pointwise;

#[pointwise]
fn ambiguous(u: &[f64; 1], f0: &mut [f64; 1]) {
    let two = 2.0;
    f0[0] = two.sqrt() * u[0];
}

fn main() {}
