//! What is emitted for a function with errors.

use super::aliases::unusable_companion_items;
use super::native::stub_translations;
use super::{kept_allows, struct_name, with_cfg};
use crate::ast::Function;
use crate::attr::Args;
use proc_macro2::TokenStream;
use quote::quote;

/// What is emitted when the function has errors: the function with its body
/// replaced (so that rustc does not report the same mistakes again) and
/// stand-ins for the generated items (so that code using them does not
/// cascade into more errors).
pub fn stub(args: &Args, item: &syn::ItemFn, f: &Function) -> TokenStream {
    let mut kept = item.clone();
    kept.block = syn::parse_quote!({ ::core::unreachable!() });
    let allows = kept_allows();
    let kept = quote!(#allows #[allow(unused_variables, unused_mut)] #kept);
    let rest = stub_items(args, item, f);
    let rest = with_cfg(item, rest);
    quote!(#kept #rest)
}

fn stub_items(args: &Args, item: &syn::ItemFn, f: &Function) -> TokenStream {
    let pw = quote!(::femquad::physics);
    if crate::check::is_physics(f) {
        let name = struct_name(args, item);
        if name == item.sig.ident
            || crate::names::shadowed_prelude_name(&name.to_string()).is_some()
        {
            // Reported: the struct would clash with the function, or shadow
            // a prelude name (the code around keeps its meaning).
            return TokenStream::new();
        }
        let vis = &item.vis;
        quote! {
            #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
            #vis struct #name;
            #[allow(unused_variables)]
            impl #pw::Pointwise for #name {
                fn info(&self) -> &'static #pw::PointwiseInfo { ::core::unreachable!() }
                fn opencl_source(&self) -> ::std::string::String { ::core::unreachable!() }
                fn eval_f64(&self, dim: usize, args: &#pw::PointArgs<'_, f64>, f0: &mut [f64], f1: &mut [f64])
                    -> ::core::result::Result<(), #pw::PointwiseError> { ::core::unreachable!() }
                fn eval_f32(&self, dim: usize, args: &#pw::PointArgs<'_, f32>, f0: &mut [f32], f1: &mut [f32])
                    -> ::core::result::Result<(), #pw::PointwiseError> { ::core::unreachable!() }
            }
        }
    } else {
        let vis = &item.vis;
        let mod_name = &item.sig.ident;
        let twin = stub_translations(item);
        let items = unusable_companion_items();
        quote! {
            #[doc(hidden)]
            #[allow(missing_docs, unused_imports, clippy::all)]
            #vis mod #mod_name {
                use super::*;
                #items
                pub struct Marker;
                impl Marker {
                    pub const IS_POINTWISE: () = ();
                }
                #twin
            }
        }
    }
}
