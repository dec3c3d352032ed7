use femquad::pointwise;

#[pointwise]
fn mixed<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let half = 1 / 2;
    for d in 0..D {
        f1[0][d] = 2 * grad_u[0][d] + d * u[0];
    }
    f1[0][0] = half;
    let i = u[0] * 2.0;
    f1[0][1] = grad_u[0][i];
}

fn main() {}
