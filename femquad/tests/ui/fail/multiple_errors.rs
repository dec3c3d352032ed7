use femquad::pointwise;

// Every problem of a function is reported at once.
#[pointwise]
fn many_problems<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    let k = |v: f64| v * v;
    let mut i = 0;
    while i < D {
        f1[0][i] = 2 * grad_u[0][i];
        i += 1;
    }
    f1[0][1] = 2 * grad_u[0][1];
    println!("{}", u[0]);
    f1[0][0] = helper(u[0]);
}

fn main() {
    // The struct exists despite the errors: no further errors here.
    use femquad::physics::Pointwise;
    let _ = ManyProblems.info();
}
