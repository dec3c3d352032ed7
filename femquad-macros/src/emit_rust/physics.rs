//! A physics' struct and its `Pointwise` implementation (info, OpenCL C of
//! the function, its tangent and its Jacobian, the source's hash) and
//! `PointwiseEval<f64>`, `PointwiseEval<f32>` (native evaluation of all
//! three).

use super::aliases::Helpers;
use super::helper::{dim_checks, helper_flops_expr, linear_tokens};
use super::native::{instances, native, native_name};
use super::{private, struct_name, template_pieces};
use crate::ast::Function;
use crate::attr::Args;
use crate::check::{Checked, Dims, Extent, PhysicsSig, Role};
use crate::flops;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};

/// `[2, 3]`, `[2]`…
fn dims_list(d: &Dims) -> Vec<usize> {
    d.list().into_iter().map(|x| x as usize).collect()
}

pub(super) fn extent_tokens(e: Extent) -> TokenStream {
    match e {
        Extent::Fixed(n) => {
            let n = n as usize;
            quote!(::femquad::physics::Extent::Fixed(#n))
        }
        Extent::Dim => quote!(::femquad::physics::Extent::Dim),
    }
}

pub(super) fn physics(
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
    let n = args.helpers.len();
    let (tangent, linear) = crate::ad::physics_tangent(&func);
    let jacobian = crate::ad::physics_jacobian(
        &func,
        sig,
        crate::ad::Blocks::U {
            reads_u: c.reads.contains(&Role::U),
            reads_grad: c.reads.contains(&Role::GradU),
        },
    );
    let jacobian_u_t = crate::ad::physics_jacobian(
        &func,
        sig,
        crate::ad::Blocks::UT {
            reads_u_t: c.reads.contains(&Role::UT),
        },
    );
    let tangent_name = format!("{c_name}_tangent");
    let jacobian_name = format!("{c_name}_jacobian");
    let jacobian_u_t_name = format!("{c_name}_jacobian_u_t");
    // The tangent variants of helpers that the derivatives call, numbered
    // after the helpers in the template's placeholders.
    let mut refs = crate::ir::tangent_refs(&tangent);
    for r in crate::ir::tangent_refs(&jacobian)
        .into_iter()
        .chain(crate::ir::tangent_refs(&jacobian_u_t))
    {
        if !refs.contains(&r) {
            refs.push(r);
        }
    }
    let template = template_pieces(&format!(
        "{}\n{}\n{}\n{}",
        crate::emit_c::physics(&func, sig, &rust_name, &c_name, fixed, n),
        crate::emit_c::physics_derivative(
            &tangent,
            &format!("tangent of fn {rust_name}"),
            &crate::emit_c::tangent_signature(&tangent_name),
            n,
            &refs
        ),
        crate::emit_c::physics_derivative(
            &jacobian,
            &format!("Jacobian of fn {rust_name}"),
            &crate::emit_c::jacobian_signature(&jacobian_name),
            n,
            &refs
        ),
        crate::emit_c::physics_derivative(
            &jacobian_u_t,
            &format!("Jacobian with respect to u_t of fn {rust_name}"),
            &crate::emit_c::jacobian_u_t_signature(&jacobian_u_t_name),
            n,
            &refs
        ),
    ));
    let helpers = Helpers::new(args, item);
    let linear = linear_tokens(&linear, &helpers);
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
    let (rn, rut, rt) = (read(Role::N), read(Role::UT), read(Role::T));
    let flops: Vec<TokenStream> = (0..2)
        .map(|k| {
            let dim = k as u64 + 2;
            let supported = c.dims.list().contains(&dim);
            if !supported {
                return quote!(0u64);
            }
            flops::count(f, c, k).to_tokens(&helper_flops_expr(&helpers, k))
        })
        .collect();
    let derivative_flops = |func: &crate::ir::Func| -> Vec<TokenStream> {
        (0..2)
            .map(|k| {
                if !c.dims.list().contains(&(k as u64 + 2)) {
                    return quote!(0u64);
                }
                flops::count_ir(func, k).to_tokens(&helper_flops_expr(&helpers, k))
            })
            .collect()
    };
    let tangent_flops = derivative_flops(&tangent);
    let jacobian_flops = derivative_flops(&jacobian);
    let callees = (0..n).map(|i| {
        let p = helpers.item(i, "OPENCL");
        quote!(&#p)
    });
    let tangent_callees = refs.iter().map(|(i, k)| {
        let p = helpers.item(*i, "OPENCL_TANGENT");
        quote!(&#p[#k])
    });
    let fn_name = &item.sig.ident;
    let generic = c.dims.generic().is_some();
    let eval64 = dispatch(
        &rust_name,
        c,
        sig,
        quote!(f64),
        Eval::Residual,
        &|d| match (generic, d) {
            (true, Some(d)) => quote!(#fn_name::<#d>),
            _ => quote!(#fn_name),
        },
    );
    let instances = instances(&c.dims);
    // The Jacobian loops over the dimension even in a dimension-free physics.
    let jacobian_instances = match c.dims {
        Dims::Any => vec![Some(2), Some(3)],
        _ => instances.clone(),
    };
    let translations =
        |func: &crate::ir::Func, what: &str, real: &'static str, dims: &[Option<u64>]| {
            let items: Vec<TokenStream> = dims
                .iter()
                .map(|&d| {
                    native(
                        &helpers,
                        func,
                        "",
                        real,
                        d,
                        &native_name(&format!("{real}{what}"), d),
                    )
                })
                .collect();
            quote!(#(#items)*)
        };
    let named = |what: &'static str, real: &'static str| {
        move |d: Option<usize>| {
            let name = format_ident!(
                "{}",
                native_name(&format!("{real}{what}"), d.map(|d| d as u64))
            );
            quote!(#name)
        }
    };
    let f32_fns = translations(&func, "", "f32", &instances);
    let eval32 = dispatch(
        &rust_name,
        c,
        sig,
        quote!(f32),
        Eval::Residual,
        &named("", "f32"),
    );
    let mut tangent_fns = Vec::new();
    let mut tangent_evals = Vec::new();
    let mut jacobian_fns = Vec::new();
    let mut jacobian_evals = Vec::new();
    let mut jacobian_u_t_fns = Vec::new();
    let mut jacobian_u_t_evals = Vec::new();
    for real in ["f64", "f32"] {
        let t: TokenStream = real.parse().expect("type");
        tangent_fns.push(translations(&tangent, "_tangent", real, &instances));
        tangent_evals.push(dispatch(
            &rust_name,
            c,
            sig,
            t.clone(),
            Eval::Tangent,
            &named("_tangent", real),
        ));
        jacobian_fns.push(translations(
            &jacobian,
            "_jacobian",
            real,
            &jacobian_instances,
        ));
        jacobian_evals.push(dispatch(
            &rust_name,
            c,
            sig,
            t.clone(),
            Eval::Jacobian,
            &named("_jacobian", real),
        ));
        jacobian_u_t_fns.push(translations(
            &jacobian_u_t,
            "_jacobian_u_t",
            real,
            &jacobian_instances,
        ));
        jacobian_u_t_evals.push(dispatch(
            &rust_name,
            c,
            sig,
            t,
            Eval::JacobianUT,
            &named("_jacobian_u_t", real),
        ));
    }
    let (tangent64_fns, tangent32_fns) = (&tangent_fns[0], &tangent_fns[1]);
    let (tangent64, tangent32) = (&tangent_evals[0], &tangent_evals[1]);
    let (jacobian64_fns, jacobian32_fns) = (&jacobian_fns[0], &jacobian_fns[1]);
    let (jacobian64, jacobian32) = (&jacobian_evals[0], &jacobian_evals[1]);
    let (jacobian_u_t64_fns, jacobian_u_t32_fns) = (&jacobian_u_t_fns[0], &jacobian_u_t_fns[1]);
    let (jacobian_u_t64, jacobian_u_t32) = (&jacobian_u_t_evals[0], &jacobian_u_t_evals[1]);
    let vis = &item.vis;
    let docs = item.attrs.iter().filter(|a| a.path().is_ident("doc"));
    let note = format!(
        " Generated by `#[pointwise]` from the function [`{rust_name}`], which it evaluates natively \
         (f64; an f32 translation for single precision) and emits as the OpenCL C function `{c_name}`."
    );
    let has_docs = item.attrs.iter().any(|a| a.path().is_ident("doc"));
    let sep = has_docs.then(|| quote!(#[doc = ""]));
    let dim_checks = dim_checks(&helpers, f, c);
    let aliases = helpers.aliases(&rust_name, 1, &[&func, &tangent, &jacobian, &jacobian_u_t]);
    quote! {
        #aliases
        #dim_checks

        #(#docs)*
        #sep
        #[doc = #note]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #vis struct #name;

        impl #name {
            /// The complete OpenCL C: assembled by rustc from the templates
            /// of the physics and of the helpers it calls.
            #[allow(long_running_const_eval)]
            const PW_OPENCL_SOURCE: &'static str = {
                const HELPERS: &[&#private::ClFunction] = &[#(#callees,)* #(#tangent_callees),*];
                const TEMPLATE: &[#private::Piece] = #template;
                const LEN: usize = #private::source_len(HELPERS, TEMPLATE);
                const BYTES: [u8; LEN] = #private::source_bytes(HELPERS, TEMPLATE);
                #private::as_str(&BYTES)
            };
            /// Its hash.
            #[allow(long_running_const_eval)]
            const PW_SOURCE_HASH: u64 = #pw::source_hash(Self::PW_OPENCL_SOURCE);
        }

        impl #pw::Pointwise for #name {
            fn info(&self) -> &'static #pw::PointwiseInfo {
                // Built once, on first use (the counts of helpers are
                // functions, see their companion modules).
                static INFO: ::std::sync::OnceLock<#pw::PointwiseInfo> =
                    ::std::sync::OnceLock::new();
                INFO.get_or_init(|| #pw::PointwiseInfo {
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
                        n: #rn,
                        u_t: #rut,
                        t: #rt,
                    },
                    flops: [#(#flops),*],
                    opencl_tangent_name: #tangent_name,
                    opencl_jacobian_name: #jacobian_name,
                    opencl_jacobian_u_t_name: #jacobian_u_t_name,
                    tangent_flops: [#(#tangent_flops),*],
                    jacobian_flops: [#(#jacobian_flops),*],
                    linear: #linear,
                })
            }

            fn opencl_source(&self) -> &'static str {
                Self::PW_OPENCL_SOURCE
            }

            fn source_hash(&self) -> u64 {
                Self::PW_SOURCE_HASH
            }
        }

        impl #pw::PointwiseEval<f64> for #name {
            #[allow(unused_variables)]
            fn eval(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f64>,
                f0: &mut [f64],
                f1: &mut [f64],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #eval64
            }

            #[allow(unused_variables)]
            fn eval_tangent(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f64>,
                dir: &#pw::Direction<'_, f64>,
                df0: &mut [f64],
                df1: &mut [f64],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                let (du, dgrad_u, du_t) = (dir.du, dir.dgrad_u, dir.du_t);
                #tangent64_fns
                #tangent64
            }

            #[allow(unused_variables)]
            fn eval_jacobian(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f64>,
                g0: &mut [f64],
                g1: &mut [f64],
                g2: &mut [f64],
                g3: &mut [f64],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #jacobian64_fns
                #jacobian64
            }

            #[allow(unused_variables)]
            fn eval_jacobian_u_t(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f64>,
                g0_t: &mut [f64],
                g2_t: &mut [f64],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #jacobian_u_t64_fns
                #jacobian_u_t64
            }
        }

        impl #pw::PointwiseEval<f32> for #name {
            #[allow(unused_variables)]
            fn eval(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f32>,
                f0: &mut [f32],
                f1: &mut [f32],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #f32_fns
                #eval32
            }

            #[allow(unused_variables)]
            fn eval_tangent(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f32>,
                dir: &#pw::Direction<'_, f32>,
                df0: &mut [f32],
                df1: &mut [f32],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                let (du, dgrad_u, du_t) = (dir.du, dir.dgrad_u, dir.du_t);
                #tangent32_fns
                #tangent32
            }

            #[allow(unused_variables)]
            fn eval_jacobian(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f32>,
                g0: &mut [f32],
                g1: &mut [f32],
                g2: &mut [f32],
                g3: &mut [f32],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #jacobian32_fns
                #jacobian32
            }

            #[allow(unused_variables)]
            fn eval_jacobian_u_t(
                &self,
                dim: usize,
                args: &#pw::PointArgs<'_, f32>,
                g0_t: &mut [f32],
                g2_t: &mut [f32],
            ) -> ::core::result::Result<(), #pw::PointwiseError> {
                #jacobian_u_t32_fns
                #jacobian_u_t32
            }
        }
    }
}

/// Which evaluation a native call serves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Eval {
    /// `f0`, `f1`.
    Residual,
    /// `df0`, `df1` along `du`, `dgrad_u`.
    Tangent,
    /// `g0` … `g3`.
    Jacobian,
    /// `g0_t`, `g2_t`.
    JacobianUT,
}

/// `match dim { 2 => …, 3 => …, d => Err(unsupported_dim) }` around calls
/// of `callee(dim)` (`None`: the dimension-free function; `per_dim`: call a
/// function per dimension even for a dimension-free physics).
fn dispatch(
    rust_name: &str,
    c: &Checked,
    sig: &PhysicsSig,
    t: TokenStream,
    eval: Eval,
    callee: &dyn Fn(Option<usize>) -> TokenStream,
) -> TokenStream {
    let private = private();
    let per_dim = matches!(eval, Eval::Jacobian | Eval::JacobianUT);
    let arms = match &c.dims {
        Dims::Any if !per_dim => {
            let body = call_with_views(rust_name, c, sig, &t, eval, &callee(None), None);
            quote!(2 | 3 => { #body })
        }
        d => {
            let arms = d.list().into_iter().map(|dim| {
                let dim = dim as usize;
                let body =
                    call_with_views(rust_name, c, sig, &t, eval, &callee(Some(dim)), Some(dim));
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

/// Views of the slices as the arrays of the native function's parameters
/// (lengths checked: wrong ones are `PointwiseError`s), then the call. The
/// normal `n` and the time derivative `u_t` (and its direction `du_t`) are
/// viewed only when the body reads them; a parameter declared but not read
/// gets zeros, whatever the slice (empty for a physics that does not read it).
fn call_with_views(
    rust_name: &str,
    c: &Checked,
    sig: &PhysicsSig,
    t: &TokenStream,
    eval: Eval,
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
    let d = dim.unwrap_or(0);
    let nc = ext(sig.n_comp);
    let zeroed = |v: TokenStream, zero: TokenStream| quote!({ let v = #v; *v = #zero; v });
    for role in &sig.params {
        let var = format_ident!("pw_{}", role.name(), span = span);
        let argname = role.name();
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
            Role::N if c.reads.contains(&Role::N) => {
                quote!(#private::array::<#t, #d>(#rust_name, #argname, args.n)?)
            }
            Role::N => quote!(&[0.0; #d]),
            Role::UT if c.reads.contains(&Role::UT) => {
                quote!(#private::array::<#t, #nc>(#rust_name, #argname, args.u_t)?)
            }
            Role::UT => quote!(&[0.0; #nc]),
            Role::T => quote!(args.t),
            Role::Constants => {
                let nk = sig.n_constants as usize;
                quote!(#private::array::<#t, #nk>(#rust_name, #argname, args.constants)?)
            }
            Role::F0 | Role::F1 if eval != Eval::Residual => continue,
            Role::F0 => zeroed(
                quote!(#private::array_mut::<#t, #nc>(#rust_name, #argname, f0)?),
                quote!([0.0; #nc]),
            ),
            Role::F1 => zeroed(
                quote!(#private::matrix_mut::<#t, #nc, #d>(#rust_name, #argname, f1)?),
                quote!([[0.0; #d]; #nc]),
            ),
        };
        lets.push(quote!(let #var = #view;));
        call_args.push(var);
    }
    match eval {
        Eval::Residual => {}
        Eval::Tangent => {
            // The direction has its full size, whatever the physics reads.
            lets.push(quote! {
                #private::check_len(#rust_name, "du", du.len(), #nc)?;
                #private::check_len(#rust_name, "dgrad_u", dgrad_u.len(), #nc * dim)?;
            });
            let declared = |r: Role| sig.params.contains(&r);
            if declared(Role::U) {
                let v = format_ident!("pw_du", span = span);
                lets.push(quote!(let #v = #private::array::<#t, #nc>(#rust_name, "du", du)?;));
                call_args.push(v);
            }
            if declared(Role::GradU) {
                let v = format_ident!("pw_dgrad_u", span = span);
                lets.push(quote!(let #v = #private::matrix::<#t, #nc, #d>(#rust_name, "dgrad_u", dgrad_u)?;));
                call_args.push(v);
            }
            if declared(Role::UT) {
                let v = format_ident!("pw_du_t", span = span);
                let view = if c.reads.contains(&Role::UT) {
                    quote!(#private::array::<#t, #nc>(#rust_name, "du_t", du_t)?)
                } else {
                    quote!(&[0.0; #nc])
                };
                lets.push(quote!(let #v: &[#t; #nc] = #view;));
                call_args.push(v);
            }
            if sig.has_f0 {
                let v = format_ident!("pw_df0", span = span);
                lets.push(
                    quote!(let #v = #private::array_mut::<#t, #nc>(#rust_name, "df0", df0)?;),
                );
                call_args.push(v);
            }
            if sig.has_f1 {
                let v = format_ident!("pw_df1", span = span);
                lets.push(
                    quote!(let #v = #private::matrix_mut::<#t, #nc, #d>(#rust_name, "df1", df1)?;),
                );
                call_args.push(v);
            }
        }
        Eval::Jacobian => {
            let n0 = nc * nc;
            let (n1, n3) = (n0 * d, n0 * d * d);
            for (g, n) in [("g0", n0), ("g1", n1), ("g2", n1), ("g3", n3)] {
                let v = format_ident!("{}", g);
                lets.push(quote!(#private::check_len(#rust_name, #g, #v.len(), #n)?;));
                call_args.push(v);
            }
        }
        Eval::JacobianUT => {
            let n0 = nc * nc;
            for (g, n) in [("g0_t", n0), ("g2_t", n0 * d)] {
                let v = format_ident!("{}", g);
                lets.push(quote!(#private::check_len(#rust_name, #g, #v.len(), #n)?;));
                call_args.push(v);
            }
        }
    }
    quote! {
        #(#lets)*
        #callee(#(#call_args),*);
        ::core::result::Result::Ok(())
    }
}
