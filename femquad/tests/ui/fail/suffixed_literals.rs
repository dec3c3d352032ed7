use femquad::pointwise;

#[pointwise]
fn precise(u: &[f64; 1], f0: &mut [f64; 1]) {
    let a = 1.5f64;
    let b = u[0] as f32;
    let c: f32 = 2.0;
    let n = 3u8;
    f0[0] = a * u[0];
}

fn main() {}
