//! The generated OpenCL C: fixed signature, `(real)` literals with
//! round-trip precision, renamed identifiers, contraction off, dimension
//! guard, hashing.
#![allow(dead_code, non_snake_case, clippy::all)]

use femquad::physics::{Pointwise, PointwiseEvalBoth};
use femquad::pointwise;

#[pointwise]
pub fn literals<const D: usize>(u: &[f64; 1], f0: &mut [f64; 1]) {
    let float = 0.1;
    let int = 3;
    let N = 2.0;
    let λ = 1.0 / 3.0;
    f0[0] = float * u[0] + int as f64 + N + λ + 1e-300 + D as f64;
}

/// Same body, another constant: another source and hash.
#[pointwise]
pub fn literals_too<const D: usize>(u: &[f64; 1], f0: &mut [f64; 1]) {
    let float = 0.2;
    let int = 3;
    let N = 2.0;
    let λ = 1.0 / 3.0;
    f0[0] = float * u[0] + int as f64 + N + λ + 1e-300 + D as f64;
}

#[pointwise]
pub fn planar(x: &[f64; 2], f0: &mut [f64; 1]) {
    f0[0] = x[0] - x[1];
}

pub const PHYSICS: &[&dyn PointwiseEvalBoth] = &[&Literals, &LiteralsToo, &Planar];

pub fn main() {
    let src = Literals.opencl_source();
    let sig = "void pw_literals(const real u[], const real grad_u[][DIM], const real a[], \
               const real grad_a[][DIM], const real x[], const real constants[], const real n[], \
               const real u_t[], const real t, real f0[], real f1[][DIM])";
    assert!(src.contains(sig), "{src}");
    // literals are cast to `real`, with all the digits of the f64
    assert!(src.contains("(real)0.1"), "{src}");
    assert!(src.contains("(real)1e-300"), "{src}");
    assert!(!src.contains(" 1.0 "), "{src}");
    // C keywords, upper-case names and non-ASCII names are renamed
    assert!(src.contains("real float_1 = (real)0.1;"), "{src}");
    assert!(src.contains("const int int_1 = 3;"), "{src}");
    assert!(src.contains("pw_N"), "{src}");
    assert!(src.contains("v_u03bb"), "{src}");
    assert!(src.contains("(real)DIM"), "{src}");
    // contraction into fused multiply-adds is off, first thing
    assert!(src.starts_with("#pragma OPENCL FP_CONTRACT OFF\n"), "{src}");
    // output zeroed first
    assert!(src.contains("f0[0] = (real)0.0;"), "{src}");
    assert_ne!(Literals.source_hash(), LiteralsToo.source_hash());
    // the hash of the source (a constant: the same source every call)
    assert_eq!(Literals.source_hash(), femquad::physics::source_hash(src));
    assert!(std::ptr::eq(src, Literals.opencl_source()));

    // a physics of fixed dimension refuses other kernels
    let src = Planar.opencl_source();
    assert!(
        src.starts_with("#pragma OPENCL FP_CONTRACT OFF\n#if DIM != 2\n#error"),
        "{src}"
    );
}
