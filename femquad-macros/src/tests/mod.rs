//! Tests of the whole pipeline on token streams (no femquad needed): what
//! `check` accepts and reports, and what the emitters write.

use crate::check::{self, Checked};
use crate::{emit_c, flops, lower, parse};
use proc_macro2::TokenStream;
use quote::quote;

mod derivatives;
mod regressions;

fn run(attr: TokenStream, f: TokenStream) -> (crate::ast::Function, Result<Checked, Vec<String>>) {
    let item: syn::ItemFn = syn::parse2(f).expect("a function");
    let (args, e) = crate::attr::parse(attr);
    assert!(e.is_none());
    let (func, _) = parse::function(&item);
    let checked =
        check::check(&args, &func).map_err(|e| e.into_iter().map(|e| e.to_string()).collect());
    (func, checked)
}

fn errors(f: TokenStream) -> Vec<String> {
    errors_with(quote!(), f)
}

fn errors_with(attr: TokenStream, f: TokenStream) -> Vec<String> {
    match run(attr, f).1 {
        Ok(_) => Vec::new(),
        Err(e) => e,
    }
}

fn c_source(f: TokenStream) -> String {
    let (func, c) = run(quote!(), f);
    let c = c.unwrap_or_else(|e| panic!("{e:?}"));
    let ir = lower::lower(&func, &c);
    match c.kind {
        check::Kind::Physics(sig) => emit_c::physics(&ir, &sig, "p", "pw_test", None, 0),
        check::Kind::Helper(_) => emit_c::helper(&ir, "helper fn h", 0),
    }
}

fn flops_of(attr: TokenStream, f: TokenStream) -> [String; 2] {
    let (func, c) = run(attr, f);
    let c = c.unwrap();
    [0, 1].map(|k| {
        flops::count(&func, &c, k)
            .to_tokens(&|i, _| quote!(h #i))
            .to_string()
    })
}

#[test]
fn all_errors_of_a_function_are_reported() {
    let e = errors(quote! {
        fn p<const D: usize>(u: &[f64; 1], f0: &mut [f64; 1]) {
            let c = |x: f64| x;
            while true {}
            let y = 2 * u[0];
            let z = foo(u[0]);
            f0[0] = u[0].signum();
        }
    });
    assert_eq!(e.len(), 5, "{e:#?}");
    assert!(e[0].starts_with("closures are not supported"));
    assert!(e[1].starts_with("`while` loops are not supported"));
    assert!(e[2].starts_with("integer literal `2` in floating-point arithmetic: write `2.0`"));
    assert!(e[3].starts_with("unknown function `foo`"));
    assert!(e[4].starts_with("method `signum` is not supported"));
}

#[test]
fn float_literals_get_their_type_as_in_rustc() {
    // unresolved at the method call: rejected, as rustc would
    let e = errors(
        quote! { fn p(u: &[f64; 1], f0: &mut [f64; 1]) { let h = 2.0; f0[0] = h.sqrt() + u[0]; } },
    );
    assert_eq!(e.len(), 1);
    assert!(
        e[0].contains("the type of this float is not known yet"),
        "{e:?}"
    );
    // resolved through an operation with an f64, a compound assignment, an
    // annotation or `f64::` before the call: accepted
    for body in [
        quote! { let h = 2.0; let z = u[0] * h; f0[0] = h.sqrt() + z; },
        quote! { let mut s = 0.0; s += u[0]; f0[0] = s.sqrt(); },
        quote! { let h: f64 = 2.0; f0[0] = h.sqrt(); },
        quote! { let h = 2.0; f0[0] = f64::sqrt(h) + h.sqrt(); },
        quote! { let s = [0.5, u[0]]; f0[0] = s[0].sqrt(); },
    ] {
        let e = errors(quote! { fn p(u: &[f64; 1], f0: &mut [f64; 1]) { #body } });
        assert!(e.is_empty(), "{body}: {e:?}");
    }
}

#[test]
fn integer_types_follow_rust() {
    let e =
        errors(quote! { fn p(u: &[f64; 2], f0: &mut [f64; 2]) { let k: i32 = 1; f0[0] = u[k]; } });
    assert!(
        e[0].starts_with("array indices are `usize`, this is `i32`"),
        "{e:?}"
    );
    let e = errors(
        quote! { fn p(u: &[f64; 2], f0: &mut [f64; 2]) { let k = 1; f0[k] = u[0].powi(k); } },
    );
    assert!(
        e[0].contains("the exponent of `powi` is an `i32`, found `usize`"),
        "{e:?}"
    );
    let e =
        errors(quote! { fn p(u: &[f64; 2], f0: &mut [f64; 2]) { let k = 1; f0[0] = u[0] * k; } });
    assert!(
        e[0].starts_with("mixed integer and floating-point operands of `*`"),
        "{e:?}"
    );
}

#[test]
fn bounds_are_checked_per_dimension() {
    let e = errors(quote! {
        fn p<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
            for d in 0..3 { f1[0][d] = grad_u[0][d]; }
        }
    });
    assert_eq!(e.len(), 2, "{e:?}");
    assert!(
        e[0].ends_with("the array has 2 entries when D = 2"),
        "{e:?}"
    );
    let ok = errors(quote! {
        fn p<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
            for d in 1..D { f1[0][d - 1] = grad_u[0][D - d]; }
        }
    });
    assert!(ok.is_empty(), "{ok:?}");
}

#[test]
fn signatures_are_checked() {
    let e = errors(quote! { fn p(q: &[f64; 1], f0: &mut [f64; 2], f1: &mut [[f64; 2]; 1]) {} });
    assert!(e[0].starts_with("unknown parameter `q`"), "{e:?}");
    assert!(
        e[1].starts_with("`f1` has 1 components, but `f0` has 2"),
        "{e:?}"
    );
    let e = errors(quote! { fn h(v: &f64) -> f64 { 1.0 } });
    assert!(
        e[0].starts_with("a helper parameter passed by reference must be an array"),
        "{e:?}"
    );
    let e = errors_with(quote!(helpers(k)), quote! { fn h(v: f64) -> f64 { v } });
    assert_eq!(
        e,
        ["helper `k` is declared but never called: remove it from `helpers(…)`"]
    );
}

#[test]
fn evaluation_order_is_kept_in_c() {
    let src = c_source(quote! {
        fn p(u: &[f64; 2], f0: &mut [f64; 2]) {
            let mut tick = u[0];
            let spilled = tick + if u[1] > 0.0 { tick += 1.0; tick } else { 0.0 };
            let short = u[0] > 0.5 && { let t = u[1] * 2.0; t > 0.0 };
            f0[0] = spilled;
            f0[1] = if short { 1.0 } else { 0.0 };
        }
    });
    // `tick` is read before the branch increments it
    let spill = src.find("const real pw_t").expect(&src);
    assert!(
        spill < src.find("tick = tick + (real)1.0;").unwrap(),
        "{src}"
    );
    // the right side of `&&` runs only if the left side holds
    assert!(src.contains("bool pw_t"), "{src}");
    assert!(src.contains("if (pw_t"), "{src}");
}

#[test]
fn array_assignments_in_c() {
    let src = c_source(quote! {
        fn p<const D: usize>(grad_u: &[[f64; D]; 2], f1: &mut [[f64; D]; 2]) {
            let mut pair = [grad_u[0][0], grad_u[1][0]];
            pair = [pair[1], pair[0]];
            f1[0] = grad_u[1];
            f1[1] = [pair[0]; D];
        }
    });
    assert!(src.contains("real pair[2];\n"), "{src}");
    // the swap reads `pair`: built in a temporary first
    assert!(
        src.contains("pw_t3[0] = pair[1];\n    pw_t3[1] = pair[0];\n    for (int pw_i1 = 0; pw_i1 < 2; ++pw_i1) pair[pw_i1] = pw_t3[pw_i1];"),
        "{src}"
    );
    assert!(src.contains("f1[0][pw_i2] = grad_u[1][pw_i2];"), "{src}");
    // `[pair[0]; D]`: the value once, then the entries
    assert!(src.contains("const real pw_t4 = pair[0];"), "{src}");
    assert!(src.contains("f1[1][pw_t5] = pw_t4;"), "{src}");
}

#[test]
fn the_physics_comment_shows_its_arrays() {
    let src = c_source(quote! {
        fn p<const D: usize>(
            u: &[f64; 2], grad_a: &[[f64; D]; 3], x: &[f64; D], constants: &[f64; 4],
            f1: &mut [[f64; D]; 2],
        ) { f1[0][0] = u[0] * grad_a[2][0] * x[0] * constants[3]; }
    });
    assert!(
        src.contains(
            "/* #[pointwise] fn p(u: [2], grad_a: [3][D], x: [D], constants: [4], f1: [2][D]) */"
        ),
        "{src}"
    );
}

#[test]
fn templates_become_pieces() {
    let pieces = crate::emit_rust::template_pieces("real @@self@@(real v) { return @@12@@(v); }");
    let p = "::femquad::physics::__private::Piece";
    let want = format!(
        "& [{p}::Text(\"real \"), {p}::Own, {p}::Text(\"(real v) {{ return \"), \
         {p}::Helper(12usize), {p}::Text(\"(v); }}\")]"
    );
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    assert_eq!(squeeze(&pieces.to_string()), squeeze(&want));
}

#[test]
fn helpers_are_templates() {
    let src = c_source(quote! {
        fn h<const D: usize>(m: &mut [[f64; D]; 2], k: usize, s: f64) { m[k][0] *= s; }
    });
    assert!(
        src.contains("void @@self@@(real m[2][DIM], const ulong k, const real s)"),
        "{src}"
    );
    let (func, c) = run(
        quote!(helpers(a::g)),
        quote! { fn h(v: f64) -> f64 { a::g(v) + 1.0 } },
    );
    let src = emit_c::helper(&lower::lower(&func, &c.unwrap()), "helper fn h", 1);
    assert!(
        src.contains("const real pw_t1 = @@0@@(v);\n    return pw_t1 + (real)1.0;"),
        "{src}"
    );
}

#[test]
fn flops_follow_the_documented_rules() {
    // loop of D × (mul + add), plus an if counted as its larger branch
    let f = flops_of(
        quote!(),
        quote! {
            fn p<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], f0: &mut [f64; 1]) {
                let mut s = 0.0;
                for d in 0..D { s += grad_u[0][d] * grad_u[0][d]; }
                f0[0] = if u[0] > 0.0 { s.sqrt() * 2.0 } else { -s };
            }
        },
    );
    assert_eq!(f, ["6u64", "8u64"]);
    let f = flops_of(
        quote!(helpers(k)),
        quote! { fn p(u: &[f64; 1], f0: &mut [f64; 1]) { f0[0] = k(u[0]) * -1.0; } },
    );
    assert_eq!(
        f[0],
        "{ let s = 0u64 ; let s = u64 :: saturating_add (s , h 0usize) ; let s = u64 :: saturating_add (s , 1u64) ; s }"
    );
}

#[test]
fn failed_functions_expand_to_errors_and_stand_ins() {
    let out = crate::expand(
        quote!(),
        quote! { fn p(u: &[f64; 1], f0: &mut [f64; 1]) { f0[0] = 2 * u[0]; } },
    )
    .to_string();
    assert!(out.contains("compile_error"), "{out}");
    assert!(out.contains("struct P"), "{out}");
    assert!(out.contains("unreachable"), "{out}");
    let out =
        crate::expand(quote!(), quote! { pub fn k(u: f64) -> f64 { 1.0 + u * u } }).to_string();
    assert!(!out.contains("compile_error"), "{out}");
    assert!(out.contains("pub mod k"), "{out}");
    assert!(out.contains("fn f32_d2 (u : f32) -> f32"), "{out}");
    let out = crate::expand(quote!(name = Foo), quote! { struct S; }).to_string();
    assert!(out.contains("applies to functions"), "{out}");
}

/// `n`, `u_t` and `t`: inputs with checked extents (`D`, `u`'s, a scalar).
#[test]
fn normal_time_derivative_and_time_are_checked_inputs() {
    let one = |f: TokenStream| {
        let e = errors(f);
        assert_eq!(e.len(), 1, "{e:?}");
        e[0].clone()
    };
    let e = one(quote! {
        fn p<const D: usize>(n: &[f64; D], f0: &mut [f64; 1]) { n[0] = 1.0; f0[0] = n[0]; }
    });
    assert_eq!(e, "`n` is an input (`&[f64; D]`) and cannot be assigned");
    let e =
        one(quote! { fn p(u_t: &[f64; 1], f0: &mut [f64; 1]) { u_t[0] = 1.0; f0[0] = u_t[0]; } });
    assert_eq!(e, "`u_t` is an input (`&[f64; NC]`) and cannot be assigned");
    let e = one(quote! { fn p(t: f64, f0: &mut [f64; 1]) { t = 1.0; f0[0] = t; } });
    assert_eq!(e, "`t` is an input (`f64`) and cannot be assigned");
    let e = one(quote! { fn p<const D: usize>(n: &[f64; 3], f0: &mut [f64; 1]) { f0[0] = n[0]; } });
    assert_eq!(
        e,
        "this physics is generic over the dimension: write `D` for the dimension"
    );
    let e = one(
        quote! { fn p(x: &[f64; 2], n: &[f64; 3], f0: &mut [f64; 1]) { f0[0] = n[0] * x[0]; } },
    );
    assert_eq!(
        e,
        "`n` is sized for dimension 3, but `x` for dimension 2: all parameters must have the \
         same dimension"
    );
    let e = one(
        quote! { fn p(u: &[f64; 2], u_t: &[f64; 3], f0: &mut [f64; 2]) { f0[0] = u_t[0] - u[0]; } },
    );
    assert_eq!(
        e,
        "`u_t` has 3 components, but `u` has 2: the number of components NC must be the same \
         in `u`, `grad_u`, `u_t`, `f0` and `f1`"
    );
    for ty in [quote!(&[f64; 1]), quote!(f32), quote!(&f64)] {
        let e = one(quote! { fn p(t: #ty, f0: &mut [f64; 1]) { f0[0] = 1.0; } });
        assert_eq!(
            e,
            "`t` (the time) must have type `f64`: it is a scalar, passed by value"
        );
    }
    let e =
        one(quote! { fn p<const D: usize>(normal: &[f64; D], f0: &mut [f64; 1]) { f0[0] = 1.0; } });
    for listed in ["`n: &[f64; D]`", "`u_t: &[f64; NC]`", "`t: f64`"] {
        assert!(e.contains(listed), "{e}");
    }
    // all three accepted, in any order, `t` by value
    let (_, c) = run(
        quote!(),
        quote! {
            fn p<const D: usize>(t: f64, f0: &mut [f64; 1], u_t: &[f64; 1], n: &[f64; D]) {
                f0[0] = t * u_t[0] * n[0];
            }
        },
    );
    let c = c.unwrap_or_else(|e| panic!("{e:?}"));
    for role in [check::Role::N, check::Role::UT, check::Role::T] {
        assert!(c.reads.contains(&role), "{role:?}");
    }
}
