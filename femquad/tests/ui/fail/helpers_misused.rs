use femquad::pointwise;

#[pointwise(name = Kappa)]
fn kappa(u: f64) -> f64 {
    1.0 + u * u
}

#[pointwise]
fn does_nothing(v: f64, w: &[f64; 2]) {}

#[pointwise]
fn sum<const D: usize>(v: &[f64; D]) -> f64 {
    let mut s = 0.0;
    for d in 0..D {
        s += v[d];
    }
    s
}

#[pointwise(helpers(sum, kappa))]
fn uses_sum<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let g = grad_u[0];
    let s = sum(g);
    f1[0][0] = s;
}

fn main() {}
