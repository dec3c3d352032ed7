//! A helper's companion module: its OpenCL C (and its tangent's), flop
//! counts, linearity, parameter shapes and native translations.

use super::native::{native, native_name, native_variants};
use super::{Place, helper_path, private, with_segment};
use crate::ast::{ExprKind, Function};
use crate::attr::Args;
use crate::check::{Checked, Dims, Len, Res, Ty};
use crate::flops;
use crate::parse::path_text;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

pub(super) fn helper_flops_expr(
    args: &Args,
    place: Place,
    index: usize,
) -> impl Fn(usize, Option<usize>) -> TokenStream + '_ {
    move |i, variant| match variant {
        None => {
            let p = with_segment(&helper_path(&args.helpers[i], place), "FLOPS");
            quote!(#p[#index])
        }
        Some(k) => {
            let p = with_segment(&helper_path(&args.helpers[i], place), "TANGENT_FLOPS");
            quote!(#p[#k][#index])
        }
    }
}

/// The constant expression of a linearity (see [`crate::ad::Linear`]).
pub(super) fn linear_tokens(lin: &crate::ad::Linear, args: &Args, place: Place) -> TokenStream {
    let own = lin.own;
    let terms = lin.calls.iter().map(|(h, mask)| {
        let table = with_segment(&helper_path(&args.helpers[*h], place), "LINEAR");
        let m = *mask as usize;
        quote!((#table.len() > #m && #table[#m]))
    });
    quote!(#own #(&& #terms)*)
}

pub(super) fn helper(args: &Args, item: &syn::ItemFn, f: &Function, c: &Checked) -> TokenStream {
    let vis = &item.vis;
    let mod_name = &item.sig.ident;
    let rust_name = f.name.text.clone();
    let c_base = crate::names::ascii(&rust_name);
    let func = crate::lower::lower(f, c);
    let n = args.helpers.len();
    let template = crate::emit_c::helper(&func, &format!("helper fn {rust_name}"), n);
    let der = crate::ad::helper(&func);
    let private = private();
    let callees: Vec<syn::Path> = args
        .helpers
        .iter()
        .map(|h| with_segment(&helper_path(h, Place::Companion), "OPENCL"))
        .collect();
    // One ClFunction per tangent variant: its template and callees (the
    // helpers, then the tangent variants it calls).
    let tangent_opencl: Vec<TokenStream> = der
        .tangents
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let template =
                crate::emit_c::helper(t, &format!("tangent of helper fn {rust_name}"), n);
            let base = format!("{c_base}_tangent{k}");
            let refs = crate::ir::tangent_refs(t).into_iter().map(|(i, v)| {
                let p = with_segment(
                    &helper_path(&args.helpers[i], Place::Companion),
                    "OPENCL_TANGENT",
                );
                quote!(&#p[#v])
            });
            quote!(#private::ClFunction {
                rust_name: #base,
                module: ::core::module_path!(),
                template: #template,
                helpers: &[#(&#callees,)* #(#refs),*],
            })
        })
        .collect();
    let n_variants = der.tangents.len();
    let flops: Vec<TokenStream> = (0..2)
        .map(|k| flops::count(f, c, k).to_tokens(&helper_flops_expr(args, Place::Companion, k)))
        .collect();
    let tangent_flops: Vec<TokenStream> = der
        .tangents
        .iter()
        .map(|t| {
            let per_dim = (0..2).map(|k| {
                flops::count_ir(t, k).to_tokens(&helper_flops_expr(args, Place::Companion, k))
            });
            quote!([#(#per_dim),*])
        })
        .collect();
    let linear: Vec<TokenStream> = der
        .linear
        .iter()
        .map(|l| linear_tokens(l, args, Place::Companion))
        .collect();
    // Translations for both precisions and dimensions: callers of either
    // dimension find theirs (a helper without `D` gets identical copies).
    let mut translations: Vec<TokenStream> = Vec::new();
    for real in ["f64", "f32"] {
        for d in [2, 3] {
            let name = native_name(real, Some(d));
            translations.push(native(
                args,
                &func,
                Place::Companion,
                "pub ",
                real,
                Some(d),
                &name,
            ));
            let name = native_name(&format!("{real}_tangent"), Some(d));
            translations.push(native_variants(args, &der.tangents, real, d, &name));
        }
    }
    let param_lens: Vec<Vec<usize>> = c.params.iter().map(|&b| lens(&c.bindings[b].ty)).collect();
    let param_lens = param_lens.iter().map(|l| quote!(#(#l),*));
    let dim_checks = dim_checks(args, f, c, Place::Companion);
    let cycle_message = format!(
        "#[pointwise] helper `{rust_name}` calls itself through the helpers it calls: OpenCL C \
         does not allow recursion"
    );
    let span = item.sig.ident.span();
    let check = quote_spanned! {span=>
        const _: () = ::core::assert!(#private::acyclic(&OPENCL), #cycle_message);
    };
    quote! {
        #[doc(hidden)]
        #[allow(missing_docs, unused_imports, non_upper_case_globals, clippy::all)]
        #vis mod #mod_name {
            use super::*;
            /// The helper's OpenCL C source (a template) and the helpers it calls.
            pub static OPENCL: #private::ClFunction = #private::ClFunction {
                rust_name: #c_base,
                module: ::core::module_path!(),
                template: #template,
                helpers: &[#(&#callees),*],
            };
            /// The OpenCL C of its tangent variants (`crate::ad::variant`):
            /// `void (params…, tangents of the real params…, real d_ret[1])`.
            pub static OPENCL_TANGENT: [#private::ClFunction; #n_variants] = [#(#tangent_opencl),*];
            /// Flops of one call in 2D and 3D.
            pub const FLOPS: [u64; 2] = [#(#flops),*];
            /// Flops of one call of each tangent variant in 2D and 3D.
            pub const TANGENT_FLOPS: [[u64; 2]; #n_variants] = [#(#tangent_flops),*];
            /// Whether the helper is affine in its real parameters, for each
            /// pattern of them that varies (bit `k`: the `k`-th real parameter).
            pub const LINEAR: &[bool] = &[#(#linear),*];
            /// Array lengths of each parameter (`0` for the dimension `D`).
            pub const PARAMS: &[&[usize]] = &[#(&[#param_lens]),*];
            #(#translations)*
            #check
            #dim_checks
        }
    }
}

/// Array lengths of a type (`0` for `D`); empty for scalars.
fn lens(t: &Ty) -> Vec<usize> {
    let mut out = Vec::new();
    let mut t = t;
    while let Ty::Array(e, l) = t {
        out.push(match l {
            Len::Lit(n) => *n as usize,
            _ => 0,
        });
        t = e;
    }
    out
}

/// Compile-time checks that each array passed to a helper generic over `D`
/// is `D`-sized where the helper's parameter is: in OpenCL, a helper's `D`
/// is the spatial dimension `DIM`, whereas Rust would infer it from any array.
pub(super) fn dim_checks(args: &Args, f: &Function, c: &Checked, place: Place) -> TokenStream {
    let private = private();
    let fixed = match c.dims {
        Dims::Fixed(d) => d as usize,
        _ => 0,
    };
    let mut out = TokenStream::new();
    f.body.walk(&mut |e| {
        let (ExprKind::Call(_, call_args), Some(Res::Helper(h))) = (&e.kind, c.res.get(&e.id))
        else {
            return;
        };
        let helper = &args.helpers[*h];
        let params = with_segment(&helper_path(helper, place), "PARAMS");
        let name = path_text(helper).replace(' ', "");
        for (i, a) in call_args.iter().enumerate() {
            let t = c.ty(a.id);
            if !matches!(t, Ty::Array(..)) {
                continue;
            }
            let arg_lens = lens(t);
            let shown = arg_lens
                .iter()
                .map(|l| {
                    if *l == 0 {
                        "D".to_string()
                    } else {
                        l.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join("][");
            let message = format!(
                "argument {} of the #[pointwise] helper `{name}` is an array of lengths [{shown}], \
                 but the helper sizes this parameter with its dimension `D`: in OpenCL, a \
                 helper's `D` is the spatial dimension, so pass a `D`-sized array here (or give \
                 the helper a parameter of fixed length)",
                i + 1
            );
            let span = a.loc.start;
            out.extend(quote_spanned! {span=>
                const _: () = ::core::assert!(
                    #private::dim_arg_ok(#params, #i, &[#(#arg_lens),*], #fixed),
                    #message
                );
            });
        }
    });
    out
}
