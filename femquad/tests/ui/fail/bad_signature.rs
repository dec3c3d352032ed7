use femquad::pointwise;

#[pointwise]
fn wrong_names<const D: usize>(temperature: &[f64; 1], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0] = grad_u[0];
}

#[pointwise]
fn wrong_types<const D: usize>(u: &mut [f64; 1], grad_u: &[f64; D], f1: &mut [[f64; D]; 2]) {
    f1[0][0] = u[0];
}

#[pointwise]
fn wrong_dimensions<const D: usize>(x: &[f64; 3], grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) -> f64 {
    0.0
}

#[pointwise]
fn mixed_fixed_dimensions(x: &[f64; 2], grad_u: &[[f64; 3]; 1], f1: &mut [[f64; 3]; 1]) {}

#[pointwise]
fn generic_type<T>(u: &[f64; 1], f0: &mut [f64; 1]) {}

#[allow(non_snake_case)]
#[pointwise]
fn Flux<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0] = grad_u[0];
}

fn main() {}
