//! The Rust items generated around the kept function.
//!
//! - physics: a unit struct implementing `femquad::physics::Pointwise`, whose
//!   `eval_f64` calls the kept function and `eval_f32` its `f32` translation
//!   (printed from the lowered program by [`crate::emit_native`], one per
//!   dimension, nested in `eval_f32`);
//! - helper: a hidden companion module with the same name as the function
//!   (modules and functions live in different namespaces, so `use a::kappa;`
//!   brings both): `OPENCL` (its C source and the helpers it calls), `FLOPS`,
//!   `PARAMS` and its translations `f32_d2`, `f32_d3`.

use crate::ast::{ExprKind, Function};
use crate::attr::Args;
use crate::check::{Checked, Dims, Extent, Kind, Len, PhysicsSig, Res, Role, Ty};
use crate::emit_native::Flavor;
use crate::flops;
use crate::ir::{Callee, Func};
use crate::parse::path_text;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::visit_mut::{self, VisitMut};

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

/// Where a twin is placed: paths to helpers are written relative to it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Next to the kept function (inside the physics impl).
    Sibling,
    /// Inside the helper's companion module (one level down).
    Companion,
}

/// A helper path as seen from `place` (the companion module glob-imports
/// its parent, so only `self::` and `super::` need adjusting).
fn helper_path(p: &syn::Path, place: Place) -> syn::Path {
    let mut p = p.clone();
    if place == Place::Companion && p.leading_colon.is_none() {
        let first = p.segments.first().map(|s| s.ident.to_string());
        match first.as_deref() {
            Some("self") => {
                p.segments[0].ident = syn::Ident::new("super", p.segments[0].ident.span());
            }
            Some("super") => {
                p.segments.insert(
                    0,
                    syn::PathSegment::from(syn::Ident::new("super", Span::call_site())),
                );
            }
            _ => {}
        }
    }
    p
}

fn with_segment(p: &syn::Path, seg: &str) -> syn::Path {
    let mut p = p.clone();
    p.segments.push(syn::PathSegment::from(syn::Ident::new(
        seg,
        Span::call_site(),
    )));
    p
}

/// The dimensions a function is instantiated for natively: `Some(d)` for
/// `D = d`, `None` when nothing depends on the dimension.
fn instances(d: &Dims) -> Vec<Option<u64>> {
    match d {
        Dims::Generic(_) => vec![Some(2), Some(3)],
        Dims::Fixed(k) => vec![Some(*k)],
        Dims::Any => vec![None],
    }
}

/// The name of a native translation: `f32_d2`, `f64_d3`, `f32_any`…
fn native_name(real: &str, dim: Option<u64>) -> String {
    match dim {
        Some(d) => format!("{real}_d{d}"),
        None => format!("{real}_any"),
    }
}

/// Names the callees of native code: helpers are called through their
/// companion module's translation for the same precision and dimension (a
/// dimension-free caller uses the 2D one, which is the same). The printed
/// name is a placeholder identifier, replaced by [`splice_callees`] with the
/// declared path, which keeps its span: if the path does not resolve,
/// rustc's error is the one it reports for the declaration.
fn native_callee(flavor: Flavor) -> impl Fn(Callee) -> String {
    move |c| {
        let (i, kind) = match c {
            Callee::Helper(i) => (i, ""),
        };
        let dim = flavor.dim.unwrap_or(2);
        format!("__pw_callee_{i}__{}{kind}_d{dim}", flavor.real)
    }
}

/// Replaces the placeholders of [`native_callee`] by helper paths.
fn splice_callees(tokens: TokenStream, args: &Args, place: Place) -> TokenStream {
    use proc_macro2::{Group, TokenTree};
    tokens
        .into_iter()
        .flat_map(|t| -> Vec<TokenTree> {
            match t {
                TokenTree::Group(g) => {
                    let inner = splice_callees(g.stream(), args, place);
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
                    let path = with_segment(&helper_path(&args.helpers[i], place), name);
                    quote!(#path).into_iter().collect()
                }
                t => vec![t],
            }
        })
        .collect()
}

/// The native translation of `func` for one precision and dimension.
fn native(
    args: &Args,
    func: &Func,
    place: Place,
    vis: &str,
    real: &'static str,
    dim: Option<u64>,
    name: &str,
) -> TokenStream {
    let flavor = Flavor { real, dim };
    let src = crate::emit_native::function(func, vis, name, flavor, &native_callee(flavor));
    match src.parse() {
        Ok(tokens) => splice_callees(tokens, args, place),
        Err(e) => {
            let msg = format!("#[pointwise] internal error: invalid generated Rust ({e}):\n{src}");
            quote!(::core::compile_error!(#msg);)
        }
    }
}

/// Stand-ins for a helper's translations when it has errors: its
/// signature in `f32` with `D` replaced by 2 and 3, and no body, so that
/// callers still compile.
fn stub_translations(item: &syn::ItemFn) -> TokenStream {
    struct Rewrite(Option<String>, usize);
    impl VisitMut for Rewrite {
        fn visit_ident_mut(&mut self, i: &mut syn::Ident) {
            if i == "f64" {
                *i = syn::Ident::new("f32", i.span());
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
    let mut out = TokenStream::new();
    for d in [2usize, 3] {
        let mut sig = item.sig.clone();
        sig.generics = syn::Generics::default();
        sig.ident = format_ident!("f32_d{d}");
        Rewrite(dim.clone(), d).visit_signature_mut(&mut sig);
        for input in sig.inputs.iter_mut() {
            if let syn::FnArg::Typed(pt) = input {
                *pt.pat = syn::parse_quote!(_);
            }
        }
        out.extend(quote! {
            #[allow(warnings, clippy::all)]
            pub #sig { ::core::unreachable!() }
        });
    }
    out
}

/// Everything generated for a function that checked.
pub fn generate(args: &Args, item: &syn::ItemFn, f: &Function, c: &Checked) -> TokenStream {
    let kept = kept(item);
    let rest = match &c.kind {
        Kind::Physics(sig) => physics(args, item, f, c, sig),
        Kind::Helper(_) => helper(args, item, f, c),
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

fn helper_flops_expr(
    args: &Args,
    place: Place,
    index: usize,
) -> impl Fn(usize) -> TokenStream + '_ {
    move |i| {
        let p = with_segment(&helper_path(&args.helpers[i], place), "FLOPS");
        quote!(#p[#index])
    }
}

fn helper(args: &Args, item: &syn::ItemFn, f: &Function, c: &Checked) -> TokenStream {
    let vis = &item.vis;
    let mod_name = &item.sig.ident;
    let rust_name = f.name.text.clone();
    let c_base = crate::names::ascii(&rust_name);
    let func = crate::lower::lower(f, c);
    let template = crate::emit_c::helper(&func, &rust_name, args.helpers.len());
    let private = private();
    let callees = args
        .helpers
        .iter()
        .map(|h| with_segment(&helper_path(h, Place::Companion), "OPENCL"));
    let flops: Vec<TokenStream> = (0..2)
        .map(|k| flops::count(f, c, k).to_tokens(&helper_flops_expr(args, Place::Companion, k)))
        .collect();
    // Translations for both dimensions: callers of either dimension find
    // theirs (a helper without `D` gets two identical copies).
    let translations: Vec<TokenStream> = [2, 3]
        .into_iter()
        .map(|d| {
            let name = native_name("f32", Some(d));
            native(args, &func, Place::Companion, "pub ", "f32", Some(d), &name)
        })
        .collect();
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
            /// Flops of one call in 2D and 3D.
            pub const FLOPS: [u64; 2] = [#(#flops),*];
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
            Len::Dim => 0,
        });
        t = e;
    }
    out
}

/// Compile-time checks that each array passed to a helper generic over `D`
/// is `D`-sized where the helper's parameter is: in OpenCL, a helper's `D`
/// is the spatial dimension `DIM`, whereas Rust would infer it from any array.
fn dim_checks(args: &Args, f: &Function, c: &Checked, place: Place) -> TokenStream {
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

/// `[2, 3]`, `[2]`…
fn dims_list(d: &Dims) -> Vec<usize> {
    d.list().into_iter().map(|x| x as usize).collect()
}

fn extent_tokens(e: Extent) -> TokenStream {
    match e {
        Extent::Fixed(n) => {
            let n = n as usize;
            quote!(::femquad::physics::Extent::Fixed(#n))
        }
        Extent::Dim => quote!(::femquad::physics::Extent::Dim),
    }
}

fn physics(
    args: &Args,
    item: &syn::ItemFn,
    f: &Function,
    c: &Checked,
    sig: &PhysicsSig,
) -> TokenStream {
    let name = struct_name(args, item);
    let rust_name = f.name.text.clone();
    let c_name = format!("pw_{}", crate::names::ascii(&rust_name));
    let func = crate::lower::lower(f, c);
    let fixed = match c.dims {
        Dims::Fixed(d) => Some(d),
        _ => None,
    };
    let template = crate::emit_c::physics(&func, &rust_name, &c_name, fixed, args.helpers.len());
    let private = private();
    let pw = quote!(::femquad::physics);
    let dims = dims_list(&c.dims);
    let n_comp = extent_tokens(sig.n_comp);
    let n_aux = extent_tokens(sig.n_aux);
    let n_constants = sig.n_constants as usize;
    let (has_f0, has_f1) = (sig.has_f0, sig.has_f1);
    let read = |r: Role| c.reads.contains(&r);
    let (ru, rgu, ra, rga, rx, rk) = (
        read(Role::U),
        read(Role::GradU),
        read(Role::A),
        read(Role::GradA),
        read(Role::X),
        read(Role::Constants),
    );
    let flops: Vec<TokenStream> = (0..2)
        .map(|k| {
            let dim = k as u64 + 2;
            let supported = c.dims.list().contains(&dim);
            if !supported {
                return quote!(0u64);
            }
            flops::count(f, c, k).to_tokens(&helper_flops_expr(args, Place::Sibling, k))
        })
        .collect();
    let helpers = args.helpers.iter().map(|h| with_segment(h, "OPENCL"));
    let fn_name = &item.sig.ident;
    let generic = c.dims.generic().is_some();
    let eval64 = dispatch(&rust_name, c, sig, quote!(f64), &|d| match (generic, d) {
        (true, Some(d)) => quote!(#fn_name::<#d>),
        _ => quote!(#fn_name),
    });
    let instances = instances(&c.dims);
    let translations: Vec<TokenStream> = instances
        .iter()
        .map(|&d| {
            native(
                args,
                &func,
                Place::Sibling,
                "",
                "f32",
                d,
                &native_name("f32", d),
            )
        })
        .collect();
    let eval32 = dispatch(&rust_name, c, sig, quote!(f32), &|d| {
        let name = format_ident!("{}", native_name("f32", d.map(|d| d as u64)));
        quote!(#name)
    });
    let vis = &item.vis;
    let docs = item.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let note = format!(
        " Generated by `#[pointwise]` from the function [`{rust_name}`], which it evaluates natively \
         (f64; an f32 translation for single precision) and emits as the OpenCL C function `{c_name}`."
    );
    let has_docs = item.attrs.iter().any(|a| a.path().is_ident("doc"));
    let sep = has_docs.then(|| quote!(#[doc = ""]));
    let dim_checks = dim_checks(args, f, c, Place::Sibling);
    quote! {
        #dim_checks

        #(#docs)*
        #sep
        #[doc = #note]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #vis struct #name;

        impl #pw::Pointwise for #name {
            fn info(&self) -> &'static #pw::PointwiseInfo {
                static INFO: #pw::PointwiseInfo = #pw::PointwiseInfo {
                    name: #rust_name,
                    opencl_name: #c_name,
                    dims: &[#(#dims),*],
                    n_comp: #n_comp,
                    n_aux: #n_aux,
                    n_constants: #n_constants,
                    has_f0: #has_f0,
                    has_f1: #has_f1,
                    reads: #pw::Reads {
                        u: #ru,
                        grad_u: #rgu,
                        a: #ra,
                        grad_a: #rga,
                        x: #rx,
                        constants: #rk,
                    },
                    flops: [#(#flops),*],
                };
                &INFO
            }

            fn opencl_source(&self) -> ::std::string::String {
                #private::opencl_source(&[#(&#helpers),*], #template)
            }

            #[allow(unused_variables)]
            fn eval_f64(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f64>,
                f0: &mut [f64],
                f1: &mut [f64],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #eval64
            }

            #[allow(unused_variables)]
            fn eval_f32(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f32>,
                f0: &mut [f32],
                f1: &mut [f32],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #(#translations)*
                #eval32
            }
        }
    }
}

/// `match dim { 2 => …, 3 => …, d => Err(unsupported_dim) }` around calls
/// of `callee(dim)` (`None`: the dimension-free function).
fn dispatch(
    rust_name: &str,
    c: &Checked,
    sig: &PhysicsSig,
    t: TokenStream,
    callee: &dyn Fn(Option<usize>) -> TokenStream,
) -> TokenStream {
    let private = private();
    let arms = match &c.dims {
        Dims::Any => {
            let body = call_with_views(rust_name, sig, &t, &callee(None), None);
            quote!(2 | 3 => { #body })
        }
        d => {
            let arms = d.list().into_iter().map(|dim| {
                let dim = dim as usize;
                let body = call_with_views(rust_name, sig, &t, &callee(Some(dim)), Some(dim));
                quote!(#dim => { #body })
            });
            quote!(#(#arms)*)
        }
    };
    quote! {
        match dim {
            #arms
            other => ::core::result::Result::Err(#private::unsupported_dim(#rust_name, other)),
        }
    }
}

fn call_with_views(
    rust_name: &str,
    sig: &PhysicsSig,
    t: &TokenStream,
    callee: &TokenStream,
    dim: Option<usize>,
) -> TokenStream {
    let private = private();
    let ext = |e: Extent| -> usize {
        match e {
            Extent::Fixed(n) => n as usize,
            Extent::Dim => dim.expect("dimension"),
        }
    };
    let span = Span::mixed_site();
    let mut lets = Vec::new();
    let mut call_args = Vec::new();
    for role in &sig.params {
        let var = format_ident!("pw_{}", role.name(), span = span);
        let argname = role.name();
        let d = dim.unwrap_or(0);
        let nc = ext(sig.n_comp);
        let view = match role {
            Role::U => quote!(#private::array::<#t, #nc>(#rust_name, #argname, args.u)?),
            Role::GradU => {
                quote!(#private::matrix::<#t, #nc, #d>(#rust_name, #argname, args.grad_u)?)
            }
            Role::A => {
                let na = ext(sig.n_aux);
                quote!(#private::array::<#t, #na>(#rust_name, #argname, args.a)?)
            }
            Role::GradA => {
                let na = ext(sig.n_aux);
                quote!(#private::matrix::<#t, #na, #d>(#rust_name, #argname, args.grad_a)?)
            }
            Role::X => quote!(#private::array::<#t, #d>(#rust_name, #argname, args.x)?),
            Role::Constants => {
                let nk = sig.n_constants as usize;
                quote!(#private::array::<#t, #nk>(#rust_name, #argname, args.constants)?)
            }
            Role::F0 => quote!({
                let v = #private::array_mut::<#t, #nc>(#rust_name, #argname, f0)?;
                *v = [0.0; #nc];
                v
            }),
            Role::F1 => quote!({
                let v = #private::matrix_mut::<#t, #nc, #d>(#rust_name, #argname, f1)?;
                *v = [[0.0; #d]; #nc];
                v
            }),
        };
        lets.push(quote!(let #var = #view;));
        call_args.push(var);
    }
    quote! {
        #(#lets)*
        #callee(#(#call_args),*);
        ::core::result::Result::Ok(())
    }
}

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
    let private = private();
    let pw = quote!(::femquad::physics);
    if crate::check::is_physics(f) {
        let name = struct_name(args, item);
        if name == item.sig.ident {
            // Reported: the struct would clash with the function.
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
        quote! {
            #[doc(hidden)]
            #[allow(missing_docs, unused_imports, clippy::all)]
            #vis mod #mod_name {
                use super::*;
                pub static OPENCL: #private::ClFunction = #private::ClFunction {
                    rust_name: "",
                    module: ::core::module_path!(),
                    template: "",
                    helpers: &[],
                };
                pub const FLOPS: [u64; 2] = [0, 0];
                pub const PARAMS: &[&[usize]] = &[];
                #twin
            }
        }
    }
}
