use femquad::pointwise;

#[pointwise]
fn loops<const D: usize>(u: &[f64; 3], grad_u: &[[f64; D]; 3], f1: &mut [[f64; D]; 3]) {
    let n = 3;
    for c in 0..n {
        for d in 0..D {
            if d > c {
                break;
            }
            f1[c][d] = grad_u[c][d];
        }
    }
    for c in 0..3 {
        for d in c..D {
            f1[c][d] += u[c];
        }
    }
    for v in grad_u[0].iter() {
        f1[0][0] += *v;
    }
}

fn main() {}
