use femquad::pointwise;

#[pointwise]
fn iterate(u: &[f64; 1], f0: &mut [f64; 1]) {
    let mut v = u[0];
    while v > 1.0 {
        v = v / 2.0;
    }
    loop {
        v = v * 2.0;
    }
    f0[0] = v;
}

fn main() {}
