//! The derivative programs (`crate::ad`) at the macro's level: what the
//! tangent and Jacobian look like in C, linearity, specialization of helper
//! tangents, dead code left out, generated names clear of the user's.

use super::run;
use crate::check::{Kind, Role};
use crate::{ad, emit_c, lower};
use proc_macro2::TokenStream;
use quote::quote;

/// `(tangent C, Jacobian C, linear)` of a physics.
fn derivatives(attr: TokenStream, f: TokenStream) -> (String, String, ad::Linear) {
    let (func, c) = run(attr, f);
    let c = c.unwrap_or_else(|e| panic!("{e:?}"));
    let ir = lower::lower(&func, &c);
    let Kind::Physics(sig) = &c.kind else {
        panic!("a physics")
    };
    let (t, lin) = ad::physics_tangent(&ir);
    let j = ad::physics_jacobian(
        &ir,
        sig,
        ad::Blocks::U {
            reads_u: c.reads.contains(&Role::U),
            reads_grad: c.reads.contains(&Role::GradU),
        },
    );
    let refs = crate::ir::tangent_refs(&t);
    let tc = emit_c::physics_derivative(&t, "t", &emit_c::tangent_signature("pw_t"), 8, &refs);
    let jc = emit_c::physics_derivative(&j, "j", &emit_c::jacobian_signature("pw_j"), 8, &refs);
    (tc, jc, lin)
}

/// The C of the Jacobian with respect to `u_t` of a physics.
fn jacobian_u_t(f: TokenStream) -> String {
    let (func, c) = run(quote!(), f);
    let c = c.unwrap_or_else(|e| panic!("{e:?}"));
    let ir = lower::lower(&func, &c);
    let Kind::Physics(sig) = &c.kind else {
        panic!("a physics")
    };
    let reads_u_t = c.reads.contains(&Role::UT);
    let j = ad::physics_jacobian(&ir, sig, ad::Blocks::UT { reads_u_t });
    emit_c::physics_derivative(&j, "j", &emit_c::jacobian_u_t_signature("pw_jt"), 0, &[])
}

/// `u_t` is a seed like `u` (its direction `du_t` is a parameter of the
/// tangent); `n` and `t` are inputs, not differentiated.
#[test]
fn u_t_is_differentiated_and_n_and_t_are_not() {
    let physics = quote! {
        fn p<const D: usize>(u: &[f64; 1], u_t: &[f64; 1], n: &[f64; D], t: f64, f0: &mut [f64; 1]) {
            f0[0] = u_t[0] * u_t[0] * n[0] + t * u[0];
        }
    };
    let (t, j, lin) = derivatives(quote!(), physics.clone());
    assert!(
        t.contains("const real du[], const real dgrad_u[][DIM], const real du_t[], real df0[]"),
        "{t}"
    );
    assert!(
        t.contains("df0[0] = (du_t[0] * u_t[0] + u_t[0] * du_t[0]) * n[0] + t * du[0];"),
        "{t}"
    );
    assert!(!lin.own);
    // g0 = ∂f0/∂u = t; the u_t blocks are in their own function
    assert!(j.contains("g0["), "{j}");
    assert!(!j.contains("du_t"), "{j}");
    let jt = jacobian_u_t(physics);
    assert!(jt.contains("real g0_t[], real g2_t[])"), "{jt}");
    // one seed, u_t[0]: ∂f0/∂u_t = 2 u_t n₀ (the term t·u is not in it);
    // no f1: g2_t = 0
    assert!(
        jt.contains(
            "pw_d_f0[pw_s][0] = (pw_du[pw_s][0] * u_t[0] + u_t[0] * pw_du[pw_s][0]) * n[0];"
        ),
        "{jt}"
    );
    assert!(
        jt.contains("g0_t[pw_fc + pw_gc] = pw_d_f0[pw_gc][pw_fc];"),
        "{jt}"
    );
    assert!(
        jt.contains("g2_t[(pw_fc + pw_gc) * DIM + pw_df] = (real)0.0;"),
        "{jt}"
    );
}

#[test]
fn linearity_treats_u_t_like_u() {
    let lin = |body: TokenStream| {
        derivatives(
            quote!(),
            quote! {
                fn p<const D: usize>(u: &[f64; 1], u_t: &[f64; 1], n: &[f64; D], t: f64, f0: &mut [f64; 1]) { #body }
            },
        )
        .2
        .own
    };
    // affine in (u, u_t), whatever it does with n and t
    assert!(lin(quote! { f0[0] = u_t[0] * n[0].sin() + t * t * u[0]; }));
    assert!(!lin(quote! { f0[0] = u_t[0] * u[0]; }));
    assert!(!lin(quote! { f0[0] = u_t[0].exp(); }));
    assert!(!lin(
        quote! { f0[0] = if u_t[0] > 0.0 { u[0] } else { 0.0 }; }
    ));
}

#[test]
fn tangent_of_a_product_and_a_function() {
    let (t, _, lin) = derivatives(
        quote!(),
        quote! {
            fn p(u: &[f64; 1], f0: &mut [f64; 1]) { f0[0] = u[0] * u[0] + u[0].sin(); }
        },
    );
    assert!(
        t.contains("df0[0] = du[0] * u[0] + u[0] * du[0] + cos(u[0]) * du[0];"),
        "{t}"
    );
    // the primal value is not needed by the tangent: left out
    assert!(!t.contains("f0[0] = u[0] * u[0]"), "{t}");
    assert!(!lin.own);
}

#[test]
fn singular_derivatives_are_zero_along_directions_that_do_not_move_them() {
    let (t, _, _) = derivatives(
        quote!(),
        quote! { fn p(u: &[f64; 1], f0: &mut [f64; 1]) { f0[0] = u[0].sqrt(); } },
    );
    // d sqrt(a) = 0.5/sqrt(a)·da, 0 when da = 0 (even at a = 0)
    assert!(t.contains("const real pw_a1 = sqrt(u[0]);"), "{t}");
    assert!(
        t.contains("du[0] == (real)0.0 ? (real)0.0 : (real)0.5 / pw_a1 * du[0]"),
        "{t}"
    );
}

#[test]
fn linearity_is_proved_for_affine_bodies_only() {
    let lin = |body: TokenStream| {
        derivatives(
            quote!(),
            quote! {
                fn p<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], constants: &[f64; 1], f0: &mut [f64; 1]) { #body }
            },
        )
        .2
        .own
    };
    assert!(lin(
        quote! { f0[0] = 2.0 * u[0] - grad_u[0][0] / constants[0] + constants[0].sin(); }
    ));
    assert!(lin(
        quote! { let mut s = 0.0; for d in 0..D { s += grad_u[0][d] * 3.0; } f0[0] = s; }
    ));
    assert!(!lin(quote! { f0[0] = u[0] * grad_u[0][0]; }));
    assert!(!lin(quote! { f0[0] = 1.0 / u[0]; }));
    assert!(!lin(quote! { f0[0] = u[0].abs(); }));
    assert!(!lin(
        quote! { f0[0] = if u[0] > 0.0 { u[0] } else { 0.0 }; }
    ));
    assert!(!lin(quote! { f0[0] = (u[0] as usize) as f64; }));
}

/// Control dependence on `(u, ∇u)` makes a body piecewise, so not provably
/// affine, even where every piece is (#19: `linear` was true for an index
/// computed from `u`, and the device evaluated J(0)·v).
#[test]
fn control_dependence_on_the_seeds_is_not_linear() {
    let lin = |attr: TokenStream, body: TokenStream| {
        derivatives(
            attr,
            quote! {
                fn p<const D: usize>(u: &[f64; 1], grad_u: &[[f64; D]; 1], constants: &[f64; 1], f0: &mut [f64; 1], f1: &mut [[f64; D]; 1]) { #body }
            },
        )
        .2
    };
    let own = |body: TokenStream| lin(quote!(), body).own;
    // the two bodies of #19: an index computed from `u`, written and read
    assert!(!own(
        quote! { f1[0][((u[0].abs() * 2.0) as usize) % 2] = grad_u[0][0]; }
    ));
    assert!(!own(
        quote! { f1[0][0] = grad_u[0][((u[0].abs() * 2.0) as usize) % 2]; }
    ));
    // the index of a passive array written or copied, of a whole row
    assert!(!own(quote! {
        let mut v = [0.0; 2];
        v[(u[0].abs() as usize) % 2] = 1.0;
        f0[0] = v[0] * grad_u[0][0];
    }));
    assert!(!own(quote! {
        let rows = [[1.0, 2.0], [3.0, 4.0]];
        let r = rows[(u[0].abs() as usize) % 2];
        f0[0] = r[0] * grad_u[0][0];
    }));
    assert!(!own(
        quote! { f1[0] = grad_u[((u[0].abs() * 2.0) as usize) % 1]; }
    ));
    // an integer or a boolean computed from `u`, in a condition or a value
    assert!(!own(quote! {
        let k = u[0] as i32;
        f0[0] = if k > 0 { grad_u[0][0] } else { 2.0 * grad_u[0][0] };
    }));
    assert!(!own(quote! {
        let positive = grad_u[0][0] > 0.0;
        if positive { f0[0] = u[0]; }
    }));
    assert!(!own(
        quote! { f0[0] = (if u[0] > 0.0 { 1.0 } else { 2.0 }) * grad_u[0][0]; }
    ));
    // branch choices of min, max, abs; fmod; rounding
    assert!(!own(quote! { f0[0] = u[0].max(grad_u[0][0]); }));
    assert!(!own(quote! { f0[0] = u[0].min(0.0); }));
    assert!(!own(quote! { f0[0] = u[0] % 1.0; }));
    assert!(!own(quote! { f0[0] = u[0].floor(); }));
    // an integer argument of a helper, even one affine in its real ones
    let with_helper = lin(
        quote!(helpers(h)),
        quote! { f0[0] = h((u[0].abs() as usize) % 2, grad_u[0][0]); },
    );
    assert!(!with_helper.own, "{with_helper:?}");
    // passive indices and conditions keep an affine body affine
    assert!(own(quote! {
        let k = constants[0].abs() as usize % D;
        f0[0] = grad_u[0][k] + if constants[0] > 0.0 { u[0] } else { -u[0] };
        for d in 0..D { f1[0][d] = grad_u[0][D - 1 - d]; }
    }));
    let affine_call = lin(quote!(helpers(h)), quote! { f0[0] = h(1, grad_u[0][0]); });
    assert!(
        affine_call.own && affine_call.calls == [(0, 0b1)],
        "{affine_call:?}"
    );
}

#[test]
fn jacobian_seeds_only_the_inputs_read() {
    let (_, j, _) = derivatives(
        quote!(),
        quote! {
            fn p<const D: usize>(u: &[f64; 2], grad_u: &[[f64; D]; 2], f1: &mut [[f64; D]; 2]) {
                for d in 0..D { f1[0][d] = grad_u[1][d] * 2.0; }
            }
        },
    );
    // 2·D seeds (∇u only), no `du`
    assert!(j.contains("real pw_dgrad_u[2 * DIM][2][DIM];"), "{j}");
    assert!(!j.contains("pw_du"), "{j}");
    // g0, g1, g2 are structurally zero
    assert!(j.contains("g0[pw_fc * 2 + pw_gc] = (real)0.0;"), "{j}");
    assert!(
        j.contains("g2[(pw_fc * 2 + pw_gc) * DIM + pw_df] = (real)0.0;"),
        "{j}"
    );
}

#[test]
fn helper_tangents_are_specialized_to_the_active_arguments() {
    let (func, c) = run(
        quote!(),
        quote! { fn h(a: f64, b: f64, out: &mut [f64; 2]) -> f64 { out[0] = a * b; a + b } },
    );
    let ir = lower::lower(&func, &c.unwrap());
    let d = ad::helper(&ir);
    // three real parameters: 2³ variants, variant 0 all active
    assert_eq!(d.tangents.len(), 8);
    let v1 = emit_c::helper(&d.tangents[1], "t", 0);
    // only `a` varies: d(a·b) = da·b, d(a + b) = da
    assert!(v1.contains("pw_d_out[0] = pw_d_a * b;"), "{v1}");
    assert!(v1.contains("pw_d_ret[0] = pw_d_a;"), "{v1}");
    let all = emit_c::helper(&d.tangents[0], "t", 0);
    assert!(
        all.contains("pw_d_out[0] = pw_d_a * b + a * pw_d_b;"),
        "{all}"
    );
    // linear in `a` alone (mask 1), not in `a` and `b` together (mask 3)
    assert!(d.linear[1].own && !d.linear[3].own);
}

#[test]
fn generated_names_are_clear_of_the_users() {
    let (t, _, _) = derivatives(
        quote!(),
        quote! {
            fn p(u: &[f64; 1], f0: &mut [f64; 1]) { let du = u[0] * 2.0; let df0 = du * du; f0[0] = df0; }
        },
    );
    assert!(t.contains("const real du_1 = u[0] * (real)2.0;"), "{t}");
    assert!(t.contains("df0_1"), "{t}");
    assert!(t.contains("df0[0] = pw_d_df0_1;"), "{t}");
}
