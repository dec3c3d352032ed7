use femquad::pointwise;

#[pointwise]
fn norm2(v: &[f64; 2]) -> f64 {
    v[0] * v[0] + v[1] * v[1]
}

// An array of the wrong length: rustc says so once, on this function (not
// again on its f32 translation, its tangent or its Jacobian).
#[pointwise(helpers(norm2))]
fn energy(u: &[f64; 3], f0: &mut [f64; 3]) {
    f0[0] = norm2(&[u[0], u[1], u[2]]);
}

fn main() {}
