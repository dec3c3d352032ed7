use femquad::pointwise;

#[pointwise]
fn add_to(v: &mut [f64; 2], s: f64) -> f64 {
    v[0] += s;
    v[1]
}

#[pointwise]
fn first(v: &[f64; 2]) -> f64 {
    v[0]
}

// Rust's borrow rules, checked by the macro.
#[pointwise(helpers(add_to, first))]
fn conflicts(u: &[f64; 2], f0: &mut [f64; 2]) {
    let mut v = [u[0], u[1]];
    f0[0] = add_to(&mut v, v[0]);
    f0[1] = add_to(&mut v, first(&v));
}

fn main() {}
