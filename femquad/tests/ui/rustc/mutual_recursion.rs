use femquad::pointwise;

#[pointwise(helpers(odd))]
fn even(u: f64) -> f64 {
    if u < 1.0 { 1.0 } else { odd(u - 1.0) }
}

#[pointwise(helpers(even))]
fn odd(u: f64) -> f64 {
    if u < 1.0 { 0.0 } else { even(u - 1.0) }
}

fn main() {}
