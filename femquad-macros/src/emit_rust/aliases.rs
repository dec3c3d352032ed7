//! How generated code names the helpers a function declares, and the error
//! for a declared helper that is not `#[pointwise]`.
//!
//! Generated code does not use the declared path (`kappa::OPENCL`): it goes
//! through a module of aliases next to it, one per declared helper:
//!
//! ```text
//! mod __pw_helpers_of_diffusion {
//!     pub(super) use super::*;
//!     pub(super) use kappa as __pw_h0;   // the helper and its companion module
//!     pub(super) use self::stand_ins::*; // `__pw_h0`: a stand-in module
//!     mod stand_ins { pub mod __pw_h0 { … } }
//! }
//! const _: () = __pw_helpers_of_diffusion::__pw_h0::Marker::IS_POINTWISE;
//! ```
//!
//! A name imported by name takes precedence over one imported by a glob.
//! When `kappa` is a `#[pointwise]` helper, `__pw_h0` is therefore its
//! companion module (see `helper`). When it is a plain `fn`, which has no
//! module of that name, `__pw_h0` is the stand-in: its `IS_POINTWISE` fails
//! to evaluate with a message, on the declaration, saying to add
//! `#[pointwise]`; its other items stand in for the companion's (the native
//! translations with the parameter types of the calls), so that nothing else
//! is reported. (Naming `kappa::OPENCL` directly, rustc reported only that
//! it cannot find a module `kappa`.) An associated constant is evaluated
//! only where it is used, so the stand-in costs nothing when the helper is
//! `#[pointwise]`.
//!
//! The aliases resolve the declared paths from the module that holds the
//! function (not from a block: helpers and the `use` declarations that name
//! them belong at module level).

use crate::attr::Args;
use crate::emit_native::Flavor;
use crate::ir::{Arg, Callee, Func, Stmt};
use crate::parse::path_text;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};

/// The helpers of one function, as its generated code names them.
#[derive(Clone)]
pub(super) struct Helpers<'a> {
    args: &'a Args,
    /// The alias module, `__pw_helpers_of_<function>`.
    module: syn::Ident,
}

impl<'a> Helpers<'a> {
    pub(super) fn new(args: &'a Args, item: &syn::ItemFn) -> Helpers<'a> {
        let name = syn::ext::IdentExt::unraw(&item.sig.ident);
        Helpers {
            args,
            module: format_ident!("__pw_helpers_of_{}", name),
        }
    }

    /// The `i`-th helper's companion item `name`:
    /// `__pw_helpers_of_f::__pw_h<i>::<name>`, spanned like the declaration.
    pub(super) fn item(&self, i: usize, name: &str) -> TokenStream {
        let span = self.span(i);
        let module = syn::Ident::new(&self.module.to_string(), span);
        let alias = format_ident!("__pw_h{}", i, span = span);
        let name = syn::Ident::new(name, span);
        quote_spanned!(span=> #module::#alias::#name)
    }

    /// The path the `i`-th helper is declared by.
    pub(super) fn declared(&self, i: usize) -> &'a syn::Path {
        &self.args.helpers[i]
    }

    fn span(&self, i: usize) -> Span {
        let p = &self.args.helpers[i];
        p.segments
            .last()
            .map_or(Span::call_site(), |s| s.ident.span())
    }

    /// The alias module of a function `caller` whose generated code lies
    /// `depth` modules below the module holding it (1 for a physics, 2
    /// inside a helper's companion module), the stand-ins built from the
    /// helper calls in `funcs` (the programs translated natively), and the
    /// checks that every helper is `#[pointwise]`.
    pub(super) fn aliases(&self, caller: &str, depth: usize, funcs: &[&Func]) -> TokenStream {
        if self.args.helpers.is_empty() {
            return TokenStream::new();
        }
        let module = &self.module;
        let mut uses = Vec::new();
        let mut stand_ins = Vec::new();
        let mut checks = Vec::new();
        for (i, declared) in self.args.helpers.iter().enumerate() {
            let span = self.span(i);
            let alias = format_ident!("__pw_h{}", i, span = span);
            let path = climb(declared, depth);
            uses.push(quote!(pub(super) use #path as #alias;));
            let name = path_text(declared).replace(' ', "");
            let last = declared
                .segments
                .last()
                .map_or(name.clone(), |s| s.ident.to_string());
            let message = format!(
                "`{name}` in `helpers(…)` of `{caller}` is not a #[pointwise] function: add \
                 `#[pointwise]` to `fn {last}` (a plain Rust function has no OpenCL version and \
                 no derivatives)"
            );
            let natives = stand_in_natives(i, funcs);
            stand_ins.push(stand_in(&alias, span, &message, natives));
            let check = self.item(i, "Marker");
            checks.push(quote_spanned!(span=> const _: () = #check::IS_POINTWISE;));
        }
        quote! {
            #[doc(hidden)]
            #[allow(unused_imports, dead_code, non_snake_case, clippy::all)]
            mod #module {
                // As visible as what it re-exports (a private helper).
                pub(super) use super::*;
                #(#uses)*
                pub(super) use self::stand_ins::*;
                mod stand_ins {
                    #(#stand_ins)*
                }
            }
            #(#checks)*
        }
    }
}

/// A declared path as seen from `depth` modules below the declaring one:
/// `self::` and `super::` climb `depth` levels more; other paths resolve
/// through the glob imports of the modules in between (`use super::*`) or
/// are absolute.
fn climb(p: &syn::Path, depth: usize) -> syn::Path {
    let mut p = p.clone();
    if p.leading_colon.is_some() {
        return p;
    }
    let up = || syn::PathSegment::from(syn::Ident::new("super", Span::call_site()));
    match p.segments.first().map(|s| s.ident.to_string()).as_deref() {
        Some("self") => {
            p.segments[0].ident = syn::Ident::new("super", p.segments[0].ident.span());
            for _ in 1..depth {
                p.segments.insert(0, up());
            }
        }
        Some("super") => {
            for _ in 0..depth {
                p.segments.insert(0, up());
            }
        }
        _ => {}
    }
    p
}

/// The stand-in for the companion module of a helper that is not
/// `#[pointwise]`.
fn stand_in(alias: &syn::Ident, span: Span, message: &str, natives: TokenStream) -> TokenStream {
    let fail = quote_spanned!(span=> ::core::panic!(#message));
    let items = unusable_companion_items();
    quote! {
        pub mod #alias {
            pub struct Marker;
            impl Marker {
                pub const IS_POINTWISE: () = #fail;
            }
            #items
            #natives
        }
    }
}

/// The items of a helper's companion module that its callers' generated
/// code names, with the right types and nothing in them: for a stand-in,
/// and for a helper with errors (see `stub`).
pub(super) fn unusable_companion_items() -> TokenStream {
    let private = super::private();
    let variants = 1usize << crate::ad::MAX_SPECIALIZED;
    let nothing = quote! {
        #private::ClFunction { rust_name: "", module: "", template: "", helpers: &[] }
    };
    quote! {
        pub static OPENCL: #private::ClFunction = #nothing;
        pub static OPENCL_TANGENT: [#private::ClFunction; #variants] =
            [const { #nothing }; #variants];
        pub fn flops() -> [u64; 2] {
            [0; 2]
        }
        pub fn tangent_flops() -> [[u64; 2]; #variants] {
            [[0; 2]; #variants]
        }
        pub fn linear() -> [bool; 0] {
            []
        }
        pub const PARAMS: &[&[usize]] = &[];
    }
}

/// Stand-ins for the native translations of helper `i` (value and tangent,
/// both precisions, 2D and 3D) with the parameter types of its calls in
/// `funcs`; none if it is not called.
fn stand_in_natives(i: usize, funcs: &[&Func]) -> TokenStream {
    let mut value = None;
    let mut tangent = None;
    for f in funcs {
        for s in &f.body {
            s.walk(&mut |s| match s {
                Stmt::Call {
                    callee: Callee::Helper(h),
                    args,
                    ..
                } if *h == i && value.is_none() => value = Some((*f, args.clone())),
                Stmt::Call {
                    callee: Callee::HelperTangent(h, _),
                    args,
                    ..
                } if *h == i && tangent.is_none() => tangent = Some((*f, args.clone())),
                _ => {}
            });
        }
    }
    let mut out = String::new();
    for real in ["f32", "f64"] {
        for dim in [2, 3] {
            let flavor = Flavor {
                real,
                dim: Some(dim),
            };
            if let Some((f, args)) = &value {
                let params = stand_in_params(f, args, flavor);
                out.push_str(&format!(
                    "pub fn {real}_d{dim}({params}) -> {real} {{ ::core::unreachable!() }}\n"
                ));
            }
            if let Some((f, args)) = &tangent {
                let params = stand_in_params(f, args, flavor);
                out.push_str(&format!(
                    "pub fn {real}_tangent_d{dim}<const MASK: usize>({params}) \
                     {{ ::core::unreachable!() }}\n"
                ));
            }
        }
    }
    out.parse().expect("stand-in natives")
}

/// `_: f32, _: &mut [f32; 2], …`: the types of the arguments of a call.
fn stand_in_params(f: &Func, args: &[Arg], flavor: Flavor) -> String {
    args.iter()
        .map(|a| match a {
            Arg::Value(e) => format!("_: {}", flavor.ty(&f.expr_ty(e))),
            Arg::Array { place, mutable } => {
                let m = if *mutable { "mut " } else { "" };
                format!("_: &{m}{}", flavor.ty(&f.place_ty(place)))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}
