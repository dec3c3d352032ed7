//! Disagreements and macro failures found by differential testing
//! (`pointwise-difftest`), each pinned at the macro's level: what the
//! checker now reports, and what the lowering now emits. The native versus
//! OpenCL values of the same cases are tested through the device probe in
//! `femquad/tests/pointwise_regressions.rs`.

use super::{c_source, errors, errors_with, flops_of};
use quote::quote;

// ----- evaluation order in the emitted C -----

#[test]
fn array_assignment_evaluates_its_index_once() {
    let src = c_source(quote! {
        fn p<const D: usize>(u: &[f64; 2], f1: &mut [[f64; D]; 2]) {
            f1[(1.0 - f1[1][0]) as usize] = [3.0 + u[0]; D];
        }
    });
    // the index is computed once, before the entries are written
    // the value first, then the index once, then the entries
    let value = src
        .find("const real pw_t3 = (real)3.0 + u[0];")
        .expect(&src);
    let idx = src
        .find("const ulong pw_t4 = convert_ulong_sat((real)1.0 - f1[1][0]);")
        .expect(&src);
    let fill = src.find("f1[pw_t4][pw_t5] = pw_t3;").expect(&src);
    assert!(value < idx && idx < fill, "{src}");
    let src = c_source(quote! {
        fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
            let rows = [[u[0], 1.0], [2.0, u[1]]];
            let mut v = [0.0, 1.0];
            v = rows[if v[0] == 0.0 { 0 } else { 1 }];
            f0[0] = v[0];
            f0[1] = v[1];
        }
    });
    assert!(
        src.contains("const ulong pw_t2 = v[0] == (real)0.0 ? 0 : 1;"),
        "{src}"
    );
    assert!(src.contains("v[pw_i1] = rows[pw_t2][pw_i1];"), "{src}");
}

#[test]
fn repeat_evaluates_its_value_once() {
    let src = c_source(quote! {
        fn p(u: &[f64; 1], f0: &mut [f64; 1]) {
            let mut k = 0.0;
            let m = [[{ k += 1.0; k }; 2]; 3];
            f0[0] = m[2][1] + k + u[0];
        }
    });
    assert_eq!(src.matches("k = k + (real)1.0;").count(), 1, "{src}");
}

#[test]
fn place_after_value_as_in_rust() {
    // Rust: the value `k as f64 + u[0]` (k = 0), then the place (k = 1).
    let src = c_source(quote! {
        fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
            let mut k = 0;
            f0[{ k += 1; k }] = k as f64 + u[0];
        }
    });
    let value = src.find("const real pw_t2 = (real)k + u[0];").expect(&src);
    let bump = src.find("k = k + 1;").expect(&src);
    assert!(value < bump, "{src}");
    assert!(src.contains("f0[k] = pw_t2;"), "{src}");
    // an index is read before a later index changes it
    let src = c_source(quote! {
        fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
            let m = [[u[0], u[1]], [u[1], u[0]]];
            let mut i = 0;
            f0[0] = m[i][{ i += 1; i }];
        }
    });
    assert!(src.contains("const ulong pw_t2 = i;"), "{src}");
    assert!(src.contains("f0[0] = m[pw_t2][i];"), "{src}");
}

#[test]
fn helper_calls_are_sequenced() {
    // `bump(&mut v)` twice in one expression: left to right, as statements.
    let (func, c) = super::run(
        quote!(helpers(bump)),
        quote! {
            fn p(u: &[f64; 1], f0: &mut [f64; 1]) {
                let mut v = [u[0]];
                f0[0] = bump(&mut v) - bump(&mut v) * v[0];
            }
        },
    );
    let c = c.unwrap();
    let ir = crate::lower::lower(&func, &c);
    let crate::check::Kind::Physics(sig) = &c.kind else {
        panic!("a physics")
    };
    let src = crate::emit_c::physics(&ir, sig, "p", "pw_test", None, 1);
    let first = src.find("const real pw_t1 = @@0@@(v);").expect(&src);
    let second = src.find("const real pw_t2 = @@0@@(v);").expect(&src);
    assert!(first < second, "{src}");
    assert!(src.contains("f0[0] = pw_t1 - pw_t2 * v[0];"), "{src}");
}

#[test]
fn long_sums_are_flat() {
    let terms: Vec<_> = (0..300).map(|_| quote!(u[0])).collect();
    let src = c_source(quote! {
        fn p(u: &[f64; 1], f0: &mut [f64; 1]) { f0[0] = #(#terms)+*; }
    });
    assert!(!src.contains("(u[0]"), "{}", &src[..300]);
}

// ----- integers -----

#[test]
fn integer_types_and_casts_match_rust() {
    let src = c_source(quote! {
        fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
            let k: i32 = -3;
            let big = k as usize;
            let s = (u[0] * 1e10) as i32;
            let w = k * s + 7;
            f0[0] = big as f64 + w as f64 + (u[1] * 10.0) as usize as f64;
        }
    });
    assert!(src.contains("const ulong big = (ulong)k;"), "{src}");
    assert!(
        src.contains("const int s = convert_int_sat(u[0] * (real)10000000000.0);"),
        "{src}"
    );
    assert!(
        src.contains("(int)((uint)(int)((uint)k * (uint)s) + (uint)7)"),
        "{src}"
    );
    assert!(
        src.contains("convert_ulong_sat(u[1] * (real)10.0)"),
        "{src}"
    );
}

#[test]
fn integer_constants_that_overflow_are_errors() {
    let e = errors(quote! {
        fn p(u: &[f64; 1], f0: &mut [f64; 1]) {
            const N: i32 = 50_000;
            let a = 50_000 * 50_000;
            let b = N * N;
            let c = 3usize - 5;
            let d = 7 / (2 - 2);
            f0[0] = u[0];
        }
    });
    assert_eq!(e.len(), 4, "{e:#?}");
    assert!(e[0].starts_with("division by zero"), "{e:?}");
    assert!(
        e[1].starts_with(
            "integer overflow: this constant is 2500000000, outside the range of `i32`"
        ),
        "{e:?}"
    );
    assert!(e[2].contains("2500000000"), "{e:?}");
    assert!(
        e[3].contains("is -2, outside the range of `usize`"),
        "{e:?}"
    );
    // a negative `i32` cast to `usize` is huge, not negative: no error here
    assert!(
        errors(quote! {
            fn p(u: &[f64; 2], f0: &mut [f64; 2]) { f0[((2 - 3i32) as usize) % 2] = u[0]; }
        })
        .is_empty()
    );
    // usize is 64-bit (`ulong` in OpenCL): no overflow here
    assert!(errors(quote! {
        fn p(u: &[f64; 1], f0: &mut [f64; 1]) { let a = 50_000usize * 50_000; f0[0] = a as f64 * u[0]; }
    }).is_empty());
}

#[test]
fn loops_to_the_largest_int_are_errors() {
    let e = errors(quote! {
        fn p(u: &[f64; 1], f0: &mut [f64; 1]) {
            for i in 0..=2147483647 { f0[0] += u[0]; }
        }
    });
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("its OpenCL counter (`int`) would overflow"),
        "{e:?}"
    );
}

#[test]
fn huge_nested_loops_do_not_overflow_the_flop_count() {
    let f = flops_of(
        quote!(),
        quote! {
            fn p(u: &[f64; 1], f0: &mut [f64; 1]) {
                for i in 0..2000000000 { for j in 0..2000000000 { for k in 0..2000000000 {
                    f0[0] += u[0];
                } } }
            }
        },
    );
    assert_eq!(f, [format!("{}u64", u64::MAX), format!("{}u64", u64::MAX)]);
}

// ----- messages -----

#[test]
fn helper_results_are_f64_for_methods() {
    let e = errors_with(
        quote!(helpers(dot)),
        quote! {
            fn p<const D: usize>(grad_u: &[[f64; D]; 1], f0: &mut [f64; 1]) {
                let g = grad_u[0];
                f0[0] = (dot(&g, &g) + 1e-12).sqrt();
            }
        },
    );
    assert!(e.is_empty(), "{e:?}");
}

#[test]
fn helpers_may_name_parameters_f0_and_f1() {
    let e = errors(quote! {
        fn blend(f0: f64, f1: f64, t: f64) -> f64 { f0 + t * (f1 - f0) }
    });
    assert!(e.is_empty(), "{e:?}");
    let e = errors(quote! {
        fn combine(f0: &mut [f64; 2], s: f64) -> f64 { f0[0] *= s; f0[1] }
    });
    assert!(e.is_empty(), "{e:?}");
    // a `&mut f0` and no result: a physics, and the message says how to write a helper
    let e = errors(quote! { fn scale(f0: &mut [f64; 2], s: f64) { f0[0] *= s; } });
    assert!(
        e[0].contains("to write a helper, rename that parameter"),
        "{e:?}"
    );
}

#[test]
fn math_constants_name_the_supported_path() {
    let e = errors(quote! {
        fn p(u: &[f64; 1], f0: &mut [f64; 1]) {
            f0[0] = f64::consts::PI * u[0] + PI + consts::E;
        }
    });
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e[0].starts_with("write `std::f64::consts::PI`"), "{e:?}");
    assert!(
        e[0].contains("`f64::consts::PI` is not a parameter"),
        "{e:?}"
    );
    assert!(e[1].starts_with("write `std::f64::consts::PI`"), "{e:?}");
    assert!(e[2].starts_with("write `std::f64::consts::E`"), "{e:?}");
}

#[test]
fn same_name_helpers_in_two_modules_are_not_recursion() {
    let e = errors_with(
        quote!(helpers(super::a::kappa)),
        quote! { fn kappa(u: f64) -> f64 { 2.0 * super::a::kappa(u) } },
    );
    assert!(e.is_empty(), "{e:?}");
    let e = errors_with(
        quote!(helpers(self::kappa)),
        quote! { fn kappa(u: f64) -> f64 { 2.0 * self::kappa(u) } },
    );
    assert!(e[0].starts_with("recursive call of `kappa`"), "{e:?}");
}

#[test]
fn helpers_declared_twice() {
    let e = errors_with(
        quote!(helpers(sq, sq)),
        quote! { fn p(u: &[f64; 1], f0: &mut [f64; 1]) { f0[0] = sq(u[0]); } },
    );
    assert_eq!(
        e,
        ["helper `sq` is declared twice in `helpers(…)`: remove one"]
    );
}

#[test]
fn borrow_conflicts_in_helper_calls_are_errors() {
    let e = errors_with(
        quote!(helpers(h, g)),
        quote! {
            fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
                let mut v = [u[0], u[1]];
                h(&mut v, v[0]);
                h(&mut v, g(&v));
                g2(v[0], &mut v);
            }
        },
    );
    assert_eq!(e.len(), 3, "{e:#?}");
    assert!(
        e[0].starts_with(
            "`v` is passed as `&mut` in argument 1 of this call, so a later argument cannot use it"
        ),
        "{e:?}"
    );
    assert!(e[1].starts_with("`v` is passed as `&mut`"), "{e:?}");
    assert!(e[2].starts_with("unknown function `g2`"), "{e:?}");
    let ok = errors_with(
        quote!(helpers(h)),
        quote! {
            fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
                let mut v = [u[0], u[1]];
                h(v[0], &mut v);
                f0[0] = v[0];
            }
        },
    );
    assert!(ok.is_empty(), "{ok:?}");
}

#[test]
fn a_mut_reference_passed_on_by_name_may_be_read_by_later_arguments() {
    // Rust reborrows `q` (`&*q`, or a two-phase `&mut *q` where `h` takes
    // `&mut`): `h(q, q[1])` is valid Rust, which the macro rejected as a
    // `&mut` borrow used by a later argument.
    let ok = errors_with(
        quote!(helpers(h)),
        quote! {
            fn g(q: &mut [f64; 2], s: f64) -> f64 {
                h(q, q[1] * s)
            }
        },
    );
    assert!(ok.is_empty(), "{ok:?}");
    // Writing it in a later argument, passing it on by name inside a later
    // argument, borrowing it again (the helper may take it as `&mut`) are
    // errors; so is passing it on by name after an earlier borrow.
    let e = errors_with(
        quote!(helpers(h, k, h2, h3, h4)),
        quote! {
            fn g(q: &mut [[f64; 2]; 2], s: f64) -> f64 {
                h(q, { q[0][0] = s; q[0][0] });
                h(q, k(q));
                h2(q, q);
                h3(q, &q[1]);
                h4(&q[1], q)
            }
        },
    );
    assert_eq!(e.len(), 5, "{e:#?}");
    let later_write = "`q` is passed on by name in argument 1 of this call, so a later argument \
                       cannot write it";
    assert!(e[0].starts_with(later_write), "{e:?}");
    assert!(e[1].starts_with(later_write), "{e:?}");
    let again = "`q` is already borrowed by argument 1 of this call, so it cannot be passed on \
                 by name: the helper may take it as `&mut`";
    assert!(e[2].starts_with(again), "{e:?}");
    assert!(
        e[3].contains("which the helper may take as `&mut`, so a later argument cannot borrow it"),
        "{e:?}"
    );
    assert!(e[4].starts_with(again), "{e:?}");
}
