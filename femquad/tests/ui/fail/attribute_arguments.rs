use femquad::pointwise;

#[pointwise(nmae = Foo, helper(kappa))]
fn misspelled(u: &[f64; 1], f0: &mut [f64; 1]) {
    f0[0] = u[0];
}

#[pointwise]
struct NotAFunction;

fn main() {}
