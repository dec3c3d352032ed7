//! A helper's companion module: its OpenCL C (and its tangent's), flop
//! counts, linearity, parameter shapes and native translations.

use super::aliases::Helpers;
use super::native::{native, native_name, native_variants};
use super::private;
use crate::ast::{ExprKind, Function};
use crate::attr::Args;
use crate::check::{Checked, Dims, Len, Res, Ty};
use crate::flops;
use crate::parse::path_text;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

/// The flops of a helper call (`variant`: of that tangent variant) in
/// dimension `2 + index`, as an expression.
pub(super) fn helper_flops_expr<'a>(
    helpers: &'a Helpers,
    index: usize,
) -> impl Fn(usize, Option<usize>) -> TokenStream + 'a {
    move |i, variant| match variant {
        None => {
            let p = helpers.item(i, "flops");
            quote!(#p()[#index])
        }
        Some(k) => {
            let p = helpers.item(i, "tangent_flops");
            quote!(#p()[#k][#index])
        }
    }
}

/// The expression of a linearity (see [`crate::ad::Linear`]).
pub(super) fn linear_tokens(lin: &crate::ad::Linear, helpers: &Helpers) -> TokenStream {
    let own = lin.own;
    let terms = lin.calls.iter().map(|(h, mask)| {
        let table = helpers.item(*h, "linear");
        let m = *mask as usize;
        quote!(#table().get(#m) == ::core::option::Option::Some(&true))
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
    let helpers = Helpers::new(args, item);
    let callees: Vec<TokenStream> = (0..n).map(|i| helpers.item(i, "OPENCL")).collect();
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
                let p = helpers.item(i, "OPENCL_TANGENT");
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
        .map(|k| flops::count(f, c, k).to_tokens(&helper_flops_expr(&helpers, k)))
        .collect();
    let tangent_flops: Vec<TokenStream> = der
        .tangents
        .iter()
        .map(|t| {
            let per_dim =
                (0..2).map(|k| flops::count_ir(t, k).to_tokens(&helper_flops_expr(&helpers, k)));
            quote!([#(#per_dim),*])
        })
        .collect();
    let linear: Vec<TokenStream> = der
        .linear
        .iter()
        .map(|l| linear_tokens(l, &helpers))
        .collect();
    let n_linear = linear.len();
    // Translations for both precisions and dimensions: callers of either
    // dimension find theirs (a helper without `D` gets identical copies).
    let mut translations: Vec<TokenStream> = Vec::new();
    for real in ["f64", "f32"] {
        for d in [2, 3] {
            let name = native_name(real, Some(d));
            translations.push(native(&helpers, &func, "pub ", real, Some(d), &name));
            let name = native_name(&format!("{real}_tangent"), Some(d));
            translations.push(native_variants(&helpers, &der.tangents, real, d, &name));
        }
    }
    let param_lens: Vec<Vec<usize>> = c.params.iter().map(|&b| lens(&c.bindings[b].ty)).collect();
    let param_lens = param_lens.iter().map(|l| quote!(#(#l),*));
    let dim_checks = dim_checks(&helpers, f, c);
    let mut programs = vec![&func];
    programs.extend(&der.tangents);
    let aliases = helpers.aliases(&rust_name, 2, &programs);
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
            // Flops and linearity are functions, not constants: computed
            // from those of the helpers it calls, constants would make
            // recursion through helpers a cycle that rustc reports in its
            // own terms; `#check` reports it instead.
            /// Flops of one call in 2D and 3D.
            pub fn flops() -> [u64; 2] {
                [#(#flops),*]
            }
            /// Flops of one call of each tangent variant in 2D and 3D.
            pub fn tangent_flops() -> [[u64; 2]; #n_variants] {
                [#(#tangent_flops),*]
            }
            /// Whether the helper is affine in its real parameters, for each
            /// pattern of them that varies (bit `k`: the `k`-th real parameter).
            pub fn linear() -> [bool; #n_linear] {
                [#(#linear),*]
            }
            /// Array lengths of each parameter (`0` for the dimension `D`).
            pub const PARAMS: &[&[usize]] = &[#(&[#param_lens]),*];
            /// What callers check: this is a `#[pointwise]` helper.
            pub struct Marker;
            impl Marker {
                pub const IS_POINTWISE: () = ();
            }
            #(#translations)*
            #aliases
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
pub(super) fn dim_checks(helpers: &Helpers, f: &Function, c: &Checked) -> TokenStream {
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
        let params = helpers.item(*h, "PARAMS");
        let name = path_text(helpers.declared(*h)).replace(' ', "");
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
