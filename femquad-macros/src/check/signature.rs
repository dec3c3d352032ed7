//! Signatures: physics parameters are identified by name, helpers take
//! scalars and arrays of `f64`.

use super::{BindingKind, Dims, Errors, Extent, HelperSig, Kind, Len, PhysicsSig, Role, Ty};
use crate::ast::{ExprKind, Function, Generic, IntKind, Loc, Name, Type};
use crate::attr::Args;
use crate::names::CNames;

/// A parameter, ready to be bound in the body's outer scope.
pub struct ParamBinding {
    pub name: Name,
    pub c: String,
    pub ty: Ty,
    pub kind: BindingKind,
    pub mutable: bool,
}

/// The checked signature. Always produced (erroneous parts get
/// [`Ty::Error`]), so that the body is checked even when the signature is not.
pub struct Sig {
    pub kind: Kind,
    pub dims: Dims,
    pub params: Vec<ParamBinding>,
}

const PHYSICS_FORMS: &str = "`u: &[f64; NC]`, `grad_u: &[[f64; D]; NC]`, `a: &[f64; NA]`, \
    `grad_a: &[[f64; D]; NA]`, `x: &[f64; D]`, `constants: &[f64; NK]`, `n: &[f64; D]` (the \
    outward unit normal, boundary physics), `u_t: &[f64; NC]` (the time derivative of `u`), \
    `t: f64` (the time), `f0: &mut [f64; NC]`, `f1: &mut [[f64; D]; NC]`";

/// A length in a signature.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SLen {
    Lit(u64),
    Dim,
}

fn sig_len(e: &crate::ast::Expr, dim: Option<&str>) -> Option<SLen> {
    match &e.kind {
        ExprKind::Int { value, suffix } if suffix.as_deref().is_none_or(|s| s == "usize") => {
            Some(SLen::Lit(*value))
        }
        ExprKind::Path(p) => match (p.ident(), dim) {
            (Some(n), Some(d)) if n.text == d => Some(SLen::Dim),
            _ => None,
        },
        _ => None,
    }
}

fn len_error(dim: Option<&str>) -> String {
    match dim {
        Some(d) => format!("array length must be an integer literal or `{d}`"),
        None => "array length must be an integer literal (or `D`, after adding the generic \
                 parameter `const D: usize` to make the function valid in 2D and 3D)"
            .into(),
    }
}

fn dims_of(f: &Function, errors: &mut Errors) -> Dims {
    let mut dim = None;
    for g in &f.generics {
        match g {
            Generic::Const {
                name,
                ty: Type::Int(IntKind::Usize, _),
                loc,
            } => {
                if dim.is_some() {
                    errors.at(*loc, "only one generic parameter is supported: `const D: usize`, the spatial dimension");
                } else {
                    dim = Some(name.text.clone());
                }
            }
            Generic::Const { ty, .. } => {
                errors.at(ty.loc(), "the dimension parameter must be `const D: usize`");
            }
            Generic::Other(loc) => errors.at(
                *loc,
                "generic parameters are not supported, except `const D: usize` (the spatial \
                 dimension, 2 or 3)",
            ),
        }
    }
    match dim {
        Some(d) => Dims::Generic(d),
        None => Dims::Any,
    }
}

pub fn check(args: &Args, f: &Function, errors: &mut Errors, names: &mut CNames) -> Sig {
    for (c, loc) in &f.unsupported {
        errors.at(*loc, super::unsupported::message(c));
    }
    let dims = dims_of(f, errors);
    if super::is_physics(f) {
        physics(args, f, dims, errors)
    } else {
        helper(args, f, dims, errors, names)
    }
}

/// Group of lengths that must agree (`NC`, `NA`) or the dimension.
#[derive(Default)]
struct Agree {
    value: Option<(SLen, String)>,
}

impl Agree {
    fn add(&mut self, len: SLen, param: &str, loc: Loc, errors: &mut Errors, what: What) {
        match &self.value {
            None => self.value = Some((len, param.to_string())),
            Some((v, first)) if *v != len => errors.at(loc, what.mismatch(param, len, first, *v)),
            _ => {}
        }
    }
}

/// What a group of lengths is.
#[derive(Clone, Copy)]
enum What {
    Components,
    Aux,
    Dimension,
}

impl What {
    fn mismatch(self, param: &str, len: SLen, first: &str, v: SLen) -> String {
        let (len, v) = (show(len), show(v));
        match self {
            What::Components => format!(
                "`{param}` has {len} components, but `{first}` has {v}: the number of components \
                 NC must be the same in `u`, `grad_u`, `u_t`, `f0` and `f1`"
            ),
            What::Aux => format!(
                "`{param}` has {len} auxiliary components, but `{first}` has {v}: NA must be the \
                 same in `a` and `grad_a`"
            ),
            What::Dimension => format!(
                "`{param}` is sized for dimension {len}, but `{first}` for dimension {v}: all \
                 parameters must have the same dimension"
            ),
        }
    }
}

fn show(l: SLen) -> String {
    match l {
        SLen::Lit(n) => n.to_string(),
        SLen::Dim => "D".into(),
    }
}

fn physics(args: &Args, f: &Function, mut dims: Dims, errors: &mut Errors) -> Sig {
    let dim_name = dims.generic().map(str::to_string);
    let dim_name = dim_name.as_deref();
    let mut roles: Vec<Option<Role>> = Vec::new();
    let mut shapes: Vec<Option<(SLen, Option<SLen>)>> = Vec::new();
    let mut nc = Agree::default();
    let mut na = Agree::default();
    let mut dim = Agree::default();
    let mut nk = None;
    for p in &f.params {
        let Some(name) = &p.name else {
            errors.at(
                p.loc,
                format!("physics parameters must be plain names, one of {PHYSICS_FORMS}"),
            );
            roles.push(None);
            shapes.push(None);
            continue;
        };
        let role = Role::from_name(name.text.trim_start_matches('_'));
        let Some(role) = role else {
            errors.at(
                name.loc,
                format!(
                    "unknown parameter `{}`: physics parameters are identified by name: \
                     {PHYSICS_FORMS} (a leading `_` is allowed; NC, NA, NK are integer \
                     literals or `D`); a function with a `&mut` parameter `f0` or `f1` and no \
                     result is a physics: to write a helper, rename that parameter",
                    name.text
                ),
            );
            roles.push(None);
            shapes.push(None);
            continue;
        };
        if roles.contains(&Some(role)) {
            errors.at(
                name.loc,
                format!("parameter `{}` is declared twice", role.name()),
            );
        }
        if p.mutable {
            errors.at(
                name.loc,
                format!("remove `mut`: write `{}: {}`", name.text, role.form()),
            );
        }
        roles.push(Some(role));
        if role.is_scalar() {
            // `t: f64`: a scalar (its "shape" `[1]` marks it valid).
            if matches!(p.ty, Type::F64(_)) {
                shapes.push(Some((SLen::Lit(1), None)));
            } else {
                errors.at(
                    p.ty.loc(),
                    format!(
                        "`{}` (the time) must have type `f64`: it is a scalar, passed by value",
                        name.text
                    ),
                );
                shapes.push(None);
            }
            continue;
        }
        let shape = physics_shape(&p.ty, role, dim_name);
        let Some((outer, inner)) = shape else {
            errors.at(
                p.ty.loc(),
                format!(
                    "`{}` must have type `{}` (NC: number of components, NA: number of \
                     auxiliary fields, NK: number of constants, each an integer literal or \
                     `D`; D: the dimension, `D` or a literal 2 or 3)",
                    name.text,
                    role.form()
                ),
            );
            shapes.push(None);
            continue;
        };
        shapes.push(Some((outer, inner)));
        let loc = p.ty.loc();
        let mut dim_at = |l: SLen, errors: &mut Errors| match l {
            SLen::Lit(2 | 3) if dim_name.is_none() => {
                dim.add(l, &name.text, loc, errors, What::Dimension);
            }
            SLen::Lit(_) if dim_name.is_some() => errors.at(
                loc,
                format!(
                    "this physics is generic over the dimension: write `{}` for the dimension",
                    dim_name.unwrap_or("D")
                ),
            ),
            SLen::Lit(k) => errors.at(loc, format!("the dimension is 2 or 3, not {k}")),
            SLen::Dim => dim.add(l, &name.text, loc, errors, What::Dimension),
        };
        match role {
            Role::X | Role::N => dim_at(outer, errors),
            Role::Constants => match outer {
                SLen::Lit(n) if n > 0 => nk = Some(n),
                _ => errors.at(
                    loc,
                    "the number of constants must be a positive integer literal",
                ),
            },
            _ => {
                let group = if matches!(role, Role::A | Role::GradA) {
                    &mut na
                } else {
                    &mut nc
                };
                let what = if matches!(role, Role::A | Role::GradA) {
                    What::Aux
                } else {
                    What::Components
                };
                if outer == SLen::Lit(0) {
                    errors.at(loc, "the number of components must be positive");
                }
                group.add(outer, &name.text, loc, errors, what);
                if let Some(inner) = inner {
                    dim_at(inner, errors);
                }
            }
        }
    }
    if let (None, Some((SLen::Lit(k), _))) = (dim_name, &dim.value) {
        dims = Dims::Fixed(*k);
    }
    if let Some(t) = &f.ret
        && !matches!(t, Type::Unit(_))
    {
        errors.at(
            t.loc(),
            "a physics returns nothing: it writes its results into `f0` and `f1`",
        );
    }
    let struct_name = match &args.name {
        Some(n) => n.to_string(),
        None => crate::names::camel_case(&f.name.text),
    };
    if let Some(shadowed) = crate::names::shadowed_prelude_name(&struct_name) {
        let given = match &args.name {
            Some(_) => format!("`#[pointwise(name = {struct_name})]` names the generated struct"),
            None => format!("the generated struct would be named `{struct_name}`"),
        };
        errors.at(
            f.name.loc,
            format!(
                "{given}, which would silently shadow {shadowed} in this module (a local item \
                 takes precedence over a glob `use` and over the prelude): rename the function, \
                 or choose another struct name with `#[pointwise(name = …)]`"
            ),
        );
    }
    if struct_name == f.name.text {
        errors.at(
            f.name.loc,
            format!(
                "the generated struct would be named `{struct_name}` like the function: name the \
                 function in snake_case, or choose the struct's name with \
                 `#[pointwise(name = …)]`"
            ),
        );
    }
    let extent = |a: &Agree| match a.value {
        Some((SLen::Lit(n), _)) => Extent::Fixed(n),
        Some((SLen::Dim, _)) => Extent::Dim,
        None => Extent::Fixed(0),
    };
    let n_comp = extent(&nc);
    let n_aux = extent(&na);
    let dim_len = match &dims {
        Dims::Fixed(k) => Len::Lit(*k),
        _ => Len::Dim,
    };
    let mut params = Vec::new();
    let mut sig_roles = Vec::new();
    for ((p, role), shape) in f.params.iter().zip(&roles).zip(&shapes) {
        let (Some(name), Some(role)) = (&p.name, role) else {
            continue;
        };
        // Each parameter keeps its own declared length (a disagreement is
        // reported once, above, not again at every index).
        let own = |l: &SLen| match l {
            SLen::Lit(n) => Len::Lit(*n),
            SLen::Dim => Len::Dim,
        };
        let count = match (role, shape) {
            (Role::X | Role::N, _) => dim_len,
            (Role::Constants, _) => Len::Lit(nk.unwrap_or(0)),
            (_, Some((outer, _))) => own(outer),
            (Role::A | Role::GradA, None) => n_aux.len(),
            (_, None) => n_comp.len(),
        };
        let ty = match shape {
            None => Ty::Error,
            Some(_) if role.is_scalar() => Ty::Real,
            Some(_) if role.is_matrix() => Ty::array(Ty::array(Ty::Real, dim_len), count),
            Some(_) => Ty::array(Ty::Real, count),
        };
        sig_roles.push(*role);
        params.push(ParamBinding {
            name: name.clone(),
            c: role.name().to_string(),
            ty,
            kind: BindingKind::Param(Some(*role)),
            mutable: role.is_output(),
        });
    }
    let sig = PhysicsSig {
        has_f0: sig_roles.contains(&Role::F0),
        has_f1: sig_roles.contains(&Role::F1),
        params: sig_roles,
        n_comp,
        n_aux,
        n_constants: nk.unwrap_or(0),
    };
    Sig {
        kind: Kind::Physics(sig),
        dims,
        params,
    }
}

/// `(outer length, inner length)` of a physics parameter of the right form.
fn physics_shape(ty: &Type, role: Role, dim: Option<&str>) -> Option<(SLen, Option<SLen>)> {
    let Type::Ref {
        mutable,
        lifetime: false,
        inner,
        ..
    } = ty
    else {
        return None;
    };
    if *mutable != role.is_output() {
        return None;
    }
    let Type::Array { elem, len, .. } = &**inner else {
        return None;
    };
    let outer = sig_len(len, dim)?;
    match (&**elem, role.is_matrix()) {
        (Type::F64(_), false) => Some((outer, None)),
        (Type::Array { elem, len, .. }, true) if matches!(**elem, Type::F64(_)) => {
            Some((outer, Some(sig_len(len, dim)?)))
        }
        _ => None,
    }
}

const HELPER_FORMS: &str = "`f64`, `usize`, `i32`, `bool`, or a reference to an array of \
    `f64` (`&[f64; N]`, `&mut [f64; N]`, `&[[f64; N]; M]`; lengths are integer literals or `D`)";

fn helper(args: &Args, f: &Function, dims: Dims, errors: &mut Errors, names: &mut CNames) -> Sig {
    let dim = dims.generic().map(str::to_string);
    let dim = dim.as_deref();
    if let Some(n) = &args.name {
        errors.at(
            Loc::of(n),
            format!(
                "`name = …` names the physics struct, but `{}` is a helper (it has no `f0` or \
                 `f1` parameter): helpers generate no struct",
                f.name.text
            ),
        );
    }
    let mut params = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let mut uses_dim = false;
    let mut has_out = false;
    for p in &f.params {
        let Some(name) = &p.name else {
            errors.at(
                p.loc,
                "helper parameters must be plain names, as in `k: f64`",
            );
            continue;
        };
        if seen.contains(&name.text) {
            errors.at(
                name.loc,
                format!("parameter `{}` is declared twice", name.text),
            );
        }
        seen.push(name.text.clone());
        let (ty, mutable) = match &p.ty {
            Type::F64(_) => (Ty::Real, p.mutable),
            Type::Int(k, _) => (Ty::Int(*k), p.mutable),
            Type::Bool(_) => (Ty::Bool, p.mutable),
            Type::Ref {
                mutable,
                lifetime,
                inner,
                loc,
            } => {
                if *lifetime {
                    errors.at(*loc, "remove the lifetime: write `&[f64; N]`");
                }
                match helper_array(inner, dim, errors) {
                    Some((ty, d)) => {
                        uses_dim |= d;
                        has_out |= *mutable;
                        (ty, *mutable)
                    }
                    None => {
                        errors.at(
                            inner.loc(),
                            format!(
                                "a helper parameter passed by reference must be an array of \
                                 `f64`; the accepted parameter types are {HELPER_FORMS}"
                            ),
                        );
                        (Ty::Error, *mutable)
                    }
                }
            }
            Type::Array { loc, .. } => {
                errors.at(
                    *loc,
                    "pass arrays by reference: `&[f64; N]` (or `&mut [f64; N]` to write into it)",
                );
                (Ty::Error, false)
            }
            Type::Named { text, loc } if text == "f32" => {
                errors.at(
                    *loc,
                    "write `f64`: the f32 version is generated from the f64 one",
                );
                (Ty::Error, false)
            }
            Type::Named { text, loc }
                if super::unsupported::is_heap_name(text.rsplit("::").next().unwrap_or("")) =>
            {
                errors.at(*loc, super::unsupported::HEAP);
                (Ty::Error, false)
            }
            Type::Unsupported(c, loc) => {
                errors.at(*loc, super::unsupported::message(c));
                (Ty::Error, false)
            }
            other => {
                errors.at(
                    other.loc(),
                    format!("unsupported parameter type: the accepted types are {HELPER_FORMS}"),
                );
                (Ty::Error, false)
            }
        };
        params.push(ParamBinding {
            name: name.clone(),
            c: names.fresh(&name.text),
            ty,
            kind: BindingKind::Param(None),
            mutable,
        });
    }
    let returns_real = match &f.ret {
        None | Some(Type::Unit(_)) => false,
        Some(Type::F64(_)) => true,
        Some(Type::Named { text, loc }) if text == "f32" => {
            errors.at(
                *loc,
                "write `f64`: the f32 version is generated from the f64 one",
            );
            true
        }
        Some(t) => {
            errors.at(t.loc(), "a helper returns `f64` or nothing");
            true
        }
    };
    if let Some(d) = dim
        && !uses_dim
    {
        errors.at(
            f.name.loc,
            format!(
                "the dimension `{d}` of a helper is inferred from its array arguments: use \
                 `{d}` in the length of an array parameter, or remove `const {d}: usize`"
            ),
        );
    }
    if !returns_real && !has_out && errors.is_empty() {
        errors.at(
            f.name.loc,
            format!(
                "`{}` has no effect: a helper returns `f64` or writes into a `&mut [f64; N]` \
                 parameter; a physics has an `f0: &mut [f64; NC]` or \
                 `f1: &mut [[f64; D]; NC]` output",
                f.name.text
            ),
        );
    }
    Sig {
        kind: Kind::Helper(HelperSig { returns_real }),
        dims,
        params,
    }
}

/// An array of f64 (possibly nested) in a helper signature; `.1` tells
/// whether a length is the dimension.
fn helper_array(t: &Type, dim: Option<&str>, errors: &mut Errors) -> Option<(Ty, bool)> {
    let Type::Array { elem, len, .. } = t else {
        return None;
    };
    let l = match sig_len(len, dim) {
        Some(SLen::Lit(n)) => Len::Lit(n),
        Some(SLen::Dim) => Len::Dim,
        None => {
            errors.at(len.loc, len_error(dim));
            Len::Lit(0)
        }
    };
    let (inner, d) = match &**elem {
        Type::F64(_) => (Ty::Real, false),
        e @ Type::Array { .. } => helper_array(e, dim, errors)?,
        _ => return None,
    };
    Some((Ty::array(inner, l), d || l == Len::Dim))
}
