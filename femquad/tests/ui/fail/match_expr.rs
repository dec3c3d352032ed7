use femquad::pointwise;

#[pointwise]
fn piecewise(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = match u[0] > 0.0 {
        true => u[0],
        false => 0.0,
    };
}

fn main() {}
