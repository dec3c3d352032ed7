use femquad::pointwise;

// The normal, the time derivative and the time are inputs: never written.
#[pointwise]
fn writes_inputs<const D: usize>(n: &[f64; D], u_t: &[f64; 1], t: f64, f0: &mut [f64; 1]) {
    n[0] = 1.0;
    u_t[0] = 0.0;
    t = 2.0;
    f0[0] = n[0] + u_t[0] + t;
}

// `n` has the dimension's extent.
#[pointwise]
fn normal_not_dim<const D: usize>(n: &[f64; 3], f0: &mut [f64; 1]) {
    f0[0] = n[0];
}

#[pointwise]
fn normal_of_another_dimension(x: &[f64; 2], n: &[f64; 3], f0: &mut [f64; 1]) {
    f0[0] = x[0] * n[0];
}

// `u_t` has `u`'s extent.
#[pointwise]
fn rate_of_another_extent(u: &[f64; 2], u_t: &[f64; 3], f0: &mut [f64; 2]) {
    f0[0] = u_t[0] - u[0];
}

// `t` is a scalar.
#[pointwise]
fn time_as_array(t: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = 1.0;
}

#[pointwise]
fn time_as_f32(t: f32, f0: &mut [f64; 1]) {
    f0[0] = 1.0;
}

// An unknown name lists the known ones, `n`, `u_t` and `t` among them.
#[pointwise]
fn unknown_name<const D: usize>(normal: &[f64; D], f0: &mut [f64; 1]) {
    f0[0] = 1.0;
}

fn main() {}
