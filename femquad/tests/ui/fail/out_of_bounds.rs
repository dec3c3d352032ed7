use femquad::pointwise;

#[pointwise]
fn shifted<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    for d in 0..D {
        f1[0][d] = grad_u[0][d + 1];
    }
    f1[0][2] = grad_u[1][0];
}

fn main() {}
