use femquad::pointwise;

// Integer constants must fit their type (Rust rejects them; OpenCL would
// silently compute another value), a constant divisor must not be zero, and
// an inclusive loop cannot end at the largest `i32` (OpenCL's `int` counter
// would overflow).
#[pointwise]
fn overflow(u: &[f64; 1], f0: &mut [f64; 1]) {
    const N: i32 = 50_000;
    let a = N * N;
    let b = 3usize - 5;
    let c = 7 / (2 - 2);
    for i in 0..=2147483647 {
        f0[0] += u[0];
    }
    f0[0] = (a + c) as f64 + b as f64;
}

fn main() {}
