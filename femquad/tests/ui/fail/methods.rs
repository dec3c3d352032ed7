use femquad::pointwise;

#[pointwise]
fn uses_methods<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f0: &mut [f64; 1]) {
    let s = u[0].signum();
    let n = grad_u[0].len();
    let total: f64 = grad_u[0].iter().sum();
    f0[0] = s * total + u[0].clone();
}

fn main() {}
