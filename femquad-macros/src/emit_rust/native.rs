//! The native translations (Rust printed from the lowered program by
//! [`crate::emit_native`]), their callee names and stand-ins.

use super::aliases::Helpers;
use crate::check::Dims;
use crate::emit_native::Flavor;
use crate::ir::{Callee, Func};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::visit_mut::{self, VisitMut};

/// The dimensions a function is instantiated for natively: `Some(d)` for
/// `D = d`, `None` when nothing depends on the dimension.
pub(super) fn instances(d: &Dims) -> Vec<Option<u64>> {
    match d {
        Dims::Generic(_) => vec![Some(2), Some(3)],
        Dims::Fixed(k) => vec![Some(*k)],
        Dims::Any => vec![None],
    }
}

/// The name of a native translation: `f32_d2`, `f64_d3`, `f32_any`…
pub(super) fn native_name(real: &str, dim: Option<u64>) -> String {
    match dim {
        Some(d) => format!("{real}_d{d}"),
        None => format!("{real}_any"),
    }
}

/// Names the callees of native code: helpers are called through their
/// companion module's translation for the same precision and dimension (a
/// dimension-free caller uses the 2D one, which is the same). The printed
/// name is a placeholder identifier, replaced by [`splice_callees`] with the
/// helper's alias (spanned like its declaration).
fn native_callee(flavor: Flavor) -> impl Fn(Callee) -> String {
    move |c| {
        let dim = flavor.dim.unwrap_or(2);
        match c {
            Callee::Helper(i) => format!("__pw_callee_{i}__{}_d{dim}", flavor.real),
            Callee::HelperTangent(i, k) => {
                format!("__pw_callee_{i}__{}_tangent_d{dim}::<{k}>", flavor.real)
            }
        }
    }
}

/// Replaces the placeholders of [`native_callee`] by helper paths.
fn splice_callees(tokens: TokenStream, helpers: &Helpers) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .flat_map(|t| -> Vec<TokenTree> {
            match t {
                TokenTree::Group(g) => {
                    let inner = splice_callees(g.stream(), helpers);
                    let mut ng = Group::new(g.delimiter(), inner);
                    ng.set_span(g.span());
                    vec![TokenTree::Group(ng)]
                }
                TokenTree::Ident(id) => {
                    let text = id.to_string();
                    let Some(rest) = text.strip_prefix("__pw_callee_") else {
                        return vec![TokenTree::Ident(id)];
                    };
                    let (i, name) = rest.split_once("__").expect("placeholder");
                    let i: usize = i.parse().expect("helper index");
                    helpers.item(i, name).into_iter().collect()
                }
                t => vec![t],
            }
        })
        .collect()
}

/// The native translation of `func` for one precision and dimension.
pub(super) fn native(
    helpers: &Helpers,
    func: &Func,
    vis: &str,
    real: &'static str,
    dim: Option<u64>,
    name: &str,
) -> TokenStream {
    let flavor = Flavor { real, dim };
    let src = crate::emit_native::function(func, vis, name, flavor, &native_callee(flavor));
    match src.parse() {
        Ok(tokens) => splice_callees(tokens, helpers),
        Err(e) => {
            let msg = format!("#[pointwise] internal error: invalid generated Rust ({e}):\n{src}");
            quote!(::core::compile_error!(#msg);)
        }
    }
}

/// The native translations of a helper's tangent variants (see
/// [`crate::emit_native::variants`]).
pub(super) fn native_variants(
    helpers: &Helpers,
    funcs: &[Func],
    real: &'static str,
    dim: u64,
    name: &str,
) -> TokenStream {
    let flavor = Flavor {
        real,
        dim: Some(dim),
    };
    let src = crate::emit_native::variants(funcs, "pub ", name, flavor, &native_callee(flavor));
    match src.parse() {
        Ok(tokens) => splice_callees(tokens, helpers),
        Err(e) => {
            let msg = format!("#[pointwise] internal error: invalid generated Rust ({e}):\n{src}");
            quote!(::core::compile_error!(#msg);)
        }
    }
}

/// Stand-ins for a helper's translations when it has errors: its
/// signature with `f64` as the precision and `D` replaced by 2 and 3, and
/// the signature its tangent would have (the primal parameters, `&mut`
/// ones read-only, then one tangent per parameter whose type holds `f64`,
/// then `&mut [f64; 1]`, the tangent of its value); no body. Callers still
/// compile.
pub(super) fn stub_translations(item: &syn::ItemFn) -> TokenStream {
    struct Rewrite(Option<String>, usize, &'static str);
    impl VisitMut for Rewrite {
        fn visit_ident_mut(&mut self, i: &mut syn::Ident) {
            if i == "f64" {
                *i = syn::Ident::new(self.2, i.span());
            }
        }
        fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
            if let syn::Expr::Path(p) = e
                && p.path.is_ident(self.0.as_deref().unwrap_or("\u{0}"))
            {
                let n = self.1;
                *e = syn::parse_quote!(#n);
                return;
            }
            visit_mut::visit_expr_mut(self, e);
        }
    }
    let dim = item.sig.generics.params.iter().find_map(|g| match g {
        syn::GenericParam::Const(c) => Some(c.ident.to_string()),
        _ => None,
    });
    let holds_real = |t: &syn::Type| quote!(#t).to_string().contains("f64");
    let mut out = TokenStream::new();
    for real in ["f64", "f32"] {
        for d in [2usize, 3] {
            let mut sig = item.sig.clone();
            sig.generics = syn::Generics::default();
            sig.ident = format_ident!("{real}_d{d}");
            let mut tangent_params: Vec<syn::Type> = Vec::new();
            let mut primal_params: Vec<syn::Type> = Vec::new();
            for input in sig.inputs.iter() {
                if let syn::FnArg::Typed(pt) = input {
                    let t = (*pt.ty).clone();
                    let read_only = match &t {
                        syn::Type::Reference(r) => {
                            let mut r = r.clone();
                            r.mutability = None;
                            syn::Type::Reference(r)
                        }
                        t => t.clone(),
                    };
                    primal_params.push(read_only);
                    if holds_real(&t) {
                        tangent_params.push(t);
                    }
                }
            }
            tangent_params.push(syn::parse_quote!(&mut [f64; 1]));
            let mut tsig: syn::Signature = syn::parse_quote!(fn tangent());
            tsig.ident = format_ident!("{real}_tangent_d{d}");
            for t in primal_params.into_iter().chain(tangent_params) {
                tsig.inputs.push(syn::parse_quote!(_: #t));
            }
            for s in [&mut sig, &mut tsig] {
                Rewrite(dim.clone(), d, real).visit_signature_mut(s);
                for input in s.inputs.iter_mut() {
                    if let syn::FnArg::Typed(pt) = input {
                        *pt.pat = syn::parse_quote!(_);
                    }
                }
                out.extend(quote! {
                    #[allow(warnings, clippy::all)]
                    pub #s { ::core::unreachable!() }
                });
            }
        }
    }
    out
}
