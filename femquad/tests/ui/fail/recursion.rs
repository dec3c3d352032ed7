use femquad::pointwise;

#[pointwise]
fn factorial(n: i32) -> f64 {
    if n <= 1 { 1.0 } else { n as f64 * factorial(n - 1) }
}

#[pointwise(helpers(decay))]
fn decay(u: f64) -> f64 {
    0.5 * decay(u)
}

fn main() {}
