use femquad::pointwise;

#[pointwise]
fn heap(u: &[f64; 1], f0: &mut [f64; 1]) {
    let v: Vec<f64> = Vec::new();
    let b = Box::new(u[0]);
    let s = String::from("x");
    let w = vec![1.0, 2.0];
    f0[0] = u[0];
}

fn main() {}
