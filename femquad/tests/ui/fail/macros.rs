use femquad::pointwise;

#[pointwise]
fn noisy(u: &[f64; 1], f0: &mut [f64; 1]) {
    println!("u = {}", u[0]);
    assert!(u[0] > 0.0);
    f0[0] = u[0];
}

fn main() {}
