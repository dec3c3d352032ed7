use femquad::pointwise;

#[pointwise]
fn unchecked(u: &[f64; 2], f0: &mut [f64; 2]) {
    for c in 0..2 {
        f0[c] = unsafe { *u.get_unchecked(c) };
    }
}

fn main() {}
