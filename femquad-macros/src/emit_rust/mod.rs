//! The Rust items generated around the kept function.
//!
//! - physics: a unit struct implementing `femquad::physics::Pointwise`, whose
//!   `eval_f64` calls the kept function and `eval_f32` its `f32` translation
//!   (printed from the lowered program by [`crate::emit_native`], one per
//!   dimension, nested in `eval_f32`);
//! - helper: a hidden companion module with the same name as the function
//!   (modules and functions live in different namespaces, so `use a::kappa;`
//!   brings both): `OPENCL` (its C source and the helpers it calls),
//!   `flops()`, `linear()`, `PARAMS` and its translations `f32_d2`, `f32_d3`;
//! - both: the aliases through which their code names the helpers they
//!   declare ([`aliases`]).

mod aliases;
mod helper;
mod native;
mod physics;
mod stub;

use crate::ast::Function;
use crate::attr::Args;
use crate::check::{Checked, Kind};
use proc_macro2::TokenStream;
use quote::quote;

pub use stub::stub;

const PRIVATE: &str = "::femquad::physics::__private";

fn private() -> TokenStream {
    PRIVATE.parse().expect("path")
}

/// Lints that the subset's idioms trip (index loops are the only loops;
/// a physics may take all eight arguments).
fn kept_allows() -> TokenStream {
    quote!(#[allow(clippy::needless_range_loop, clippy::too_many_arguments)])
}

/// The kept function, unchanged but for lint allowances.
fn kept(item: &syn::ItemFn) -> TokenStream {
    let allows = kept_allows();
    quote!(#allows #item)
}

/// The struct name of a physics.
pub fn struct_name(args: &Args, f: &syn::ItemFn) -> syn::Ident {
    match &args.name {
        Some(n) => n.clone(),
        None => syn::Ident::new(
            &crate::names::camel_case(&f.sig.ident.to_string()),
            f.sig.ident.span(),
        ),
    }
}

/// Everything generated for a function that checked.
pub fn generate(args: &Args, item: &syn::ItemFn, f: &Function, c: &Checked) -> TokenStream {
    let kept = kept(item);
    let rest = match &c.kind {
        Kind::Physics(sig) => physics::physics(args, item, f, c, sig),
        Kind::Helper(_) => helper::helper(args, item, f, c),
    };
    let rest = with_cfg(item, rest);
    quote!(#kept #rest)
}

/// Gives every generated item the function's `#[cfg]` attributes, so that
/// they exist exactly when the function does.
fn with_cfg(item: &syn::ItemFn, generated: TokenStream) -> TokenStream {
    let cfgs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("cfg"))
        .collect();
    if cfgs.is_empty() {
        return generated;
    }
    let Ok(file) = syn::parse2::<syn::File>(generated.clone()) else {
        return generated;
    };
    let items = file.items.into_iter().map(|mut it| {
        let attrs = match &mut it {
            syn::Item::Struct(s) => Some(&mut s.attrs),
            syn::Item::Impl(i) => Some(&mut i.attrs),
            syn::Item::Const(c) => Some(&mut c.attrs),
            syn::Item::Mod(m) => Some(&mut m.attrs),
            _ => None,
        };
        if let Some(attrs) = attrs {
            attrs.extend(cfgs.iter().map(|a| (*a).clone()));
        }
        it
    });
    quote!(#(#items)*)
}
