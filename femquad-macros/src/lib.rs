//! The `#[pointwise]` attribute of femquad; use it as `femquad::pointwise`
//! (its documentation is the user guide).
//!
//! The crate is a small compiler, one module per stage: `parse` (syn → the
//! subset's AST in `ast`) → `check` (the one module deciding what is
//! accepted: name resolution, type inference, every error with its span) →
//! `lower` (the checked AST → `ir`, a program of pure expressions and
//! statements in Rust's evaluation order) → the printers `emit_c` (OpenCL C)
//! and `emit_native` (Rust, for the `f32` translation), assembled by
//! `emit_rust` (the kept function, the `Pointwise` impl or a helper's
//! companion module); `flops` counts for the performance model, `math` holds
//! the table of math functions and `names` the generated identifiers.

mod ad;
mod ast;
mod attr;
mod check;
mod emit_c;
mod emit_native;
mod emit_rust;
mod flops;
mod ir;
mod lower;
mod math;
mod names;
mod parse;
mod print;
#[cfg(test)]
mod tests;

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;

#[doc = include_str!("guide.md")]
#[proc_macro_attribute]
pub fn pointwise(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand(attr.into(), item.into()).into()
}

/// The whole expansion, on `proc_macro2` tokens (testable outside rustc).
fn expand(attr: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let item_fn: syn::ItemFn = match syn::parse2(item.clone()) {
        Ok(f) => f,
        Err(_) => {
            let e = syn::Error::new_spanned(
                &item,
                "#[pointwise] applies to functions: a physics `fn name(…, f1: &mut [[f64; D]; NC])` \
                 or a helper",
            );
            let e = e.to_compile_error();
            return quote!(#e #item);
        }
    };
    let (args, attr_error) = attr::parse(attr);
    let (func, _) = parse::function(&item_fn);
    let checked = check::check(&args, &func);
    match (attr_error, checked) {
        (None, Ok(c)) => emit_rust::generate(&args, &item_fn, &func, &c),
        (a, c) => {
            let mut errors = a;
            if let Err(e) = c {
                match &mut errors {
                    Some(all) => all.combine(e),
                    None => errors = Some(e),
                }
            }
            let errors = errors.map(|e| e.to_compile_error());
            let stub = emit_rust::stub(&args, &item_fn, &func);
            quote!(#errors #stub)
        }
    }
}
