use femquad::pointwise;

#[pointwise]
fn with_closure<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let scale = |v: f64| 2.0 * v;
    for d in 0..D {
        f1[0][d] = scale(grad_u[0][d]);
    }
}

fn main() {}
