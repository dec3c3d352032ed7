use femquad::pointwise;

#[pointwise]
fn sq(v: f64) -> f64 {
    v * v
}

#[pointwise(helpers(sq, sq))]
fn squares(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = sq(u[0]);
}

fn main() {}
