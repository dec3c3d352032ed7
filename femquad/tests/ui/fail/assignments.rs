use femquad::pointwise;

#[pointwise]
fn writes_inputs<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let k = 2.0;
    k = 3.0;
    u[0] = 1.0;
    for d in 0..D {
        d = 0;
        f1[0][d] = k * grad_u[0][d];
    }
    let r = &grad_u[0];
    *f1 = [[0.0; D]; 1];
}

fn main() {}
