use femquad::pointwise;

#[pointwise]
fn sum<const D: usize>(v: &[f64; D]) -> f64 {
    let mut s = 0.0;
    for d in 0..D {
        s += v[d];
    }
    s
}

// In 3D, Rust would infer the helper's `D` = 2 from `constants`, while the
// OpenCL helper loops to `DIM` = 3: rejected at compile time.
#[pointwise(helpers(sum))]
fn uses_sum<const D: usize>(grad_u: &[[f64; D]; 1], constants: &[f64; 2], f1: &mut [[f64; D]; 1]) {
    let s = sum(&grad_u[0]) + sum(constants);
    for d in 0..D {
        f1[0][d] = s;
    }
}

fn main() {}
