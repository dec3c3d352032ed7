//! The body: scopes and bindings, statements, local constants and constant
//! evaluation (loop bounds, array lengths, index ranges). Expressions are
//! checked in [`super::expr`], calls in [`super::call`].

use super::infer::Infer;
use super::signature::Sig;
use super::unsupported::{self, HEAP, is_heap_name};
use super::{Binding, BindingKind, Checked, Dims, Errors, Len, Res, Role, Ty};
use crate::ast::*;
use crate::attr::Args;
use crate::math;
use crate::names::CNames;
use std::collections::{HashMap, HashSet};

pub fn check(
    args: &Args,
    f: &Function,
    sig: Sig,
    errors: &mut Errors,
    names: &mut CNames,
) -> Checked {
    let helper_texts = args.helpers.iter().map(crate::parse::path_text).collect();
    let mut c = Body {
        errors,
        names,
        infer: Infer::default(),
        bindings: Vec::new(),
        scopes: vec![HashMap::new()],
        res: HashMap::new(),
        types: HashMap::new(),
        trips: HashMap::new(),
        reads: HashSet::new(),
        helper_texts,
        helper_used: vec![false; args.helpers.len()],
        fn_name: f.name.text.clone(),
        dims: sig.dims.clone(),
        const_values: HashMap::new(),
        loop_ranges: HashMap::new(),
        constants: Vec::new(),
    };
    if let Some(d) = sig.dims.generic() {
        let name = Name {
            text: d.to_string(),
            loc: f.name.loc,
        };
        let b = c.bind_named(
            &name,
            Ty::Int(IntKind::Usize),
            BindingKind::Dim,
            false,
            Some("DIM".into()),
        );
        let _ = b;
    }
    let mut params = Vec::new();
    for p in &sig.params {
        params.push(c.bind_named(&p.name, p.ty.clone(), p.kind, p.mutable, Some(p.c.clone())));
    }
    let ret = match &sig.kind {
        super::Kind::Helper(h) if h.returns_real => Ty::Real,
        // A wrong return type is reported by the signature check.
        super::Kind::Physics(_) if f.ret.as_ref().is_some_and(|t| !matches!(t, Type::Unit(_))) => {
            Ty::Error
        }
        _ => Ty::Unit,
    };
    let body_ty = c.block(&f.body);
    let ends_with_return = matches!(
        f.body.stmts.last(),
        Some(Stmt::Expr(Expr {
            kind: ExprKind::Unsupported(Construct::Return),
            ..
        }))
    );
    if !ends_with_return && c.infer.unify(&body_ty, &ret).is_err() {
        let loc = f.body.tail.as_ref().map_or(f.body.loc, |t| t.loc);
        let msg = if ret == Ty::Real {
            format!(
                "the helper must end with its `f64` value as the final expression (without \
                 `;`), found {}",
                c.infer.describe(&body_ty)
            )
        } else {
            format!(
                "`{}` returns nothing, but its final expression is {}: end it with `;`",
                f.name.text,
                c.infer.describe(&body_ty)
            )
        };
        c.errors.at(loc, msg);
    }
    for (i, used) in c.helper_used.iter().enumerate() {
        if c.helper_texts[..i].contains(&c.helper_texts[i]) {
            c.errors.at(
                crate::ast::Loc::of(&args.helpers[i]),
                format!(
                    "helper `{}` is declared twice in `helpers(…)`: remove one",
                    c.helper_texts[i].replace(' ', "")
                ),
            );
        } else if !used {
            c.errors.at(
                crate::ast::Loc::of(&args.helpers[i]),
                format!(
                    "helper `{}` is declared but never called: remove it from `helpers(…)`",
                    c.helper_texts[i].replace(' ', "")
                ),
            );
        }
    }
    c.check_constant_ranges();
    let types = c
        .types
        .iter()
        .map(|(id, t)| (*id, c.infer.resolve(t)))
        .collect();
    let bindings = c
        .bindings
        .iter()
        .map(|b| Binding {
            ty: c.infer.resolve(&b.ty),
            ..b.clone()
        })
        .collect();
    Checked {
        kind: sig.kind,
        dims: sig.dims,
        bindings,
        params,
        res: c.res,
        types,
        trips: c.trips,
        reads: c.reads,
    }
}

pub(super) struct Body<'a> {
    pub(super) errors: &'a mut Errors,
    pub(super) names: &'a mut CNames,
    pub(super) infer: Infer,
    pub(super) bindings: Vec<Binding>,
    pub(super) scopes: Vec<HashMap<String, usize>>,
    pub(super) res: HashMap<usize, Res>,
    pub(super) types: HashMap<usize, Ty>,
    pub(super) trips: HashMap<usize, [u64; 2]>,
    pub(super) reads: HashSet<Role>,
    pub(super) helper_texts: Vec<String>,
    pub(super) helper_used: Vec<bool>,
    pub(super) fn_name: String,
    pub(super) dims: Dims,
    /// Values of integer constants.
    pub(super) const_values: HashMap<usize, i64>,
    /// Value range of loop variables, for the 2D and 3D evaluations.
    pub(super) loop_ranges: HashMap<usize, [Option<(i64, i64)>; 2]>,
    /// Integer arithmetic on constants: its location, type and value (in
    /// 2D and 3D), checked once types are resolved.
    pub(super) constants: Vec<(Loc, Ty, [Option<i128>; 2])>,
}

pub(super) fn is_int_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { suffix: None, .. } => true,
        ExprKind::Paren(inner) => is_int_literal(inner),
        ExprKind::Unary(UnOp::Neg, inner) => is_int_literal(inner),
        _ => false,
    }
}

pub(super) fn int_literal_text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { value, .. } => value.to_string(),
        ExprKind::Paren(inner) => int_literal_text(inner),
        ExprKind::Unary(UnOp::Neg, inner) => format!("-{}", int_literal_text(inner)),
        _ => String::new(),
    }
}

pub(super) fn strip_parens(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(inner) => strip_parens(inner),
        _ => e,
    }
}

impl Body<'_> {
    // ----- scopes and bindings -----

    pub(super) fn bind_named(
        &mut self,
        name: &Name,
        ty: Ty,
        kind: BindingKind,
        mutable: bool,
        c: Option<String>,
    ) -> usize {
        let c = c.unwrap_or_else(|| self.names.fresh(&name.text));
        self.bindings.push(Binding {
            rust: name.text.clone(),
            c,
            ty,
            mutable,
            kind,
        });
        let id = self.bindings.len() - 1;
        self.scopes
            .last_mut()
            .expect("scope")
            .insert(name.text.clone(), id);
        id
    }

    pub(super) fn bind_hidden(&mut self, rust: &str, ty: Ty, kind: BindingKind) -> usize {
        let c = self.names.fresh(rust);
        self.bindings.push(Binding {
            rust: rust.into(),
            c,
            ty,
            mutable: false,
            kind,
        });
        self.bindings.len() - 1
    }

    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    pub(super) fn record(&mut self, e: &Expr, t: Ty) -> Ty {
        self.types.insert(e.id, t.clone());
        t
    }

    // ----- types as written -----

    pub(super) fn written_ty(&mut self, t: &Type, in_signature_of: &str) -> Ty {
        match t {
            Type::F64(_) => Ty::Real,
            Type::Int(k, _) => Ty::Int(*k),
            Type::Bool(_) => Ty::Bool,
            Type::Array { elem, len, .. } => {
                let e = self.written_ty(elem, in_signature_of);
                match self.array_len(len) {
                    Some(l) => Ty::array(e, l),
                    None => Ty::Error,
                }
            }
            Type::Named { text, loc } => {
                let last = text.rsplit("::").next().unwrap_or("");
                if text == "f32" {
                    self.errors.at(
                        *loc,
                        "write `f64`: the f32 version is generated from the f64 one",
                    );
                } else if is_heap_name(last) {
                    self.errors.at(*loc, HEAP);
                } else {
                    self.errors.at(
                        *loc,
                        format!(
                            "type `{text}` is not supported{in_signature_of}: the types of the \
                             subset are `f64`, `usize`, `i32`, `bool` and fixed-size arrays `[T; N]`"
                        ),
                    );
                }
                Ty::Error
            }
            Type::Ref { loc, .. } => {
                self.errors.at(
                    *loc,
                    "references are supported only as parameters and as arguments of helper \
                     calls (`&a`, `&mut a`): copy the value (`let g = grad_u[0];`) or index \
                     the array",
                );
                Ty::Error
            }
            Type::Unit(loc) => {
                self.errors
                    .at(*loc, "`()` is not a value type of the subset");
                Ty::Error
            }
            Type::Unsupported(c, loc) => {
                self.errors.at(*loc, unsupported::message(c));
                Ty::Error
            }
        }
    }

    /// The length of an array type or repeat expression: a constant or `D`.
    pub(super) fn array_len(&mut self, e: &Expr) -> Option<Len> {
        let t = self.expr(e);
        if let Some(p) = match &strip_parens(e).kind {
            ExprKind::Path(p) => Some(p),
            _ => None,
        } && let Some(b) = self.res.get(&strip_parens(e).id)
            && let Res::Binding(b) = b
            && self.bindings[*b].kind == BindingKind::Dim
        {
            let _ = p;
            return Some(Len::Dim);
        }
        if self.infer.unify(&t, &Ty::Int(IntKind::Usize)).is_err() {
            self.errors.at(e.loc, "an array length must be a `usize`");
            return None;
        }
        match self.const_int(e, None) {
            Some(n) if n >= 1 => Some(Len::Lit(n as u64)),
            Some(_) => {
                self.errors.at(e.loc, "array lengths must be positive");
                None
            }
            None => {
                self.errors.at(
                    e.loc,
                    "an array length must be an integer literal, a local `const` or `D` \
                     (expressions of `D` cannot be array lengths in Rust)",
                );
                None
            }
        }
    }

    // ----- constants -----

    /// Integer constants must fit their type: `i32`, or `usize` (64 bits,
    /// `ulong` in OpenCL). Rust rejects an overflowing constant; OpenCL
    /// would compute something else without a word.
    pub(super) fn check_constant_ranges(&mut self) {
        for (loc, t, values) in std::mem::take(&mut self.constants) {
            let (name, lo, hi) = match self.infer.resolve(&t) {
                Ty::Int(IntKind::Usize) => ("usize", 0, u64::MAX as i128),
                _ => ("i32", i32::MIN as i128, i32::MAX as i128),
            };
            for (k, v) in values.iter().enumerate() {
                let Some(v) = v else { continue };
                if (lo..=hi).contains(v) {
                    continue;
                }
                let when = match self.dims.eval_dim(k) {
                    Some(d) if values[0] != values[1] => format!(" when D = {d}"),
                    _ => String::new(),
                };
                self.errors.at(
                    loc,
                    format!(
                        "integer overflow: this constant is {v}{when}, outside the range of \
                         `{name}` (Rust rejects it; OpenCL would silently compute another value)"
                    ),
                );
                break;
            }
        }
    }

    /// The value of an integer constant expression (literals, local `const`s,
    /// `D` when `dim` is given, `+ - * / %`, casts).
    pub(super) fn const_int(&self, e: &Expr, dim: Option<i64>) -> Option<i64> {
        self.int_range(e, dim, None)
            .and_then(|(lo, hi)| (lo == hi).then_some(lo))
    }

    /// The range of values of an integer expression; loop variables
    /// contribute their range for evaluation `k` (0: 2D, 1: 3D).
    pub(super) fn int_range(
        &self,
        e: &Expr,
        dim: Option<i64>,
        k: Option<usize>,
    ) -> Option<(i64, i64)> {
        match &e.kind {
            ExprKind::Int { value, .. } => i64::try_from(*value).ok().map(|v| (v, v)),
            ExprKind::Paren(inner) => self.int_range(inner, dim, k),
            // A cast keeps the range only where it does not wrap (a negative
            // `i32` as `usize` is huge, a large `usize` as `i32` wraps):
            // otherwise the value is not tracked.
            ExprKind::Cast(inner, Type::Int(kind, _)) => {
                let (lo, hi) = self.int_range(inner, dim, k)?;
                let fits = match kind {
                    IntKind::Usize => lo >= 0,
                    IntKind::I32 => lo >= i32::MIN as i64 && hi <= i32::MAX as i64,
                };
                fits.then_some((lo, hi))
            }
            ExprKind::Path(_) => {
                let Res::Binding(b) = *self.res.get(&e.id)? else {
                    return None;
                };
                match self.bindings[b].kind {
                    BindingKind::Dim => dim.map(|d| (d, d)),
                    BindingKind::Const => self.const_values.get(&b).map(|v| (*v, *v)),
                    BindingKind::LoopVar => self.loop_ranges.get(&b)?[k?],
                    _ => None,
                }
            }
            ExprKind::Unary(UnOp::Neg, inner) => {
                let (lo, hi) = self.int_range(inner, dim, k)?;
                Some((hi.checked_neg()?, lo.checked_neg()?))
            }
            ExprKind::Binary(op, l, r) => {
                let (a, b) = (self.int_range(l, dim, k)?, self.int_range(r, dim, k)?);
                match op {
                    BinOp::Add => Some((a.0.checked_add(b.0)?, a.1.checked_add(b.1)?)),
                    BinOp::Sub => Some((a.0.checked_sub(b.1)?, a.1.checked_sub(b.0)?)),
                    BinOp::Mul => {
                        let p = [
                            a.0.checked_mul(b.0)?,
                            a.0.checked_mul(b.1)?,
                            a.1.checked_mul(b.0)?,
                            a.1.checked_mul(b.1)?,
                        ];
                        Some((*p.iter().min()?, *p.iter().max()?))
                    }
                    BinOp::Div | BinOp::Rem if a.0 == a.1 && b.0 == b.1 => {
                        let v = if *op == BinOp::Div {
                            a.0.checked_div(b.0)?
                        } else {
                            a.0.checked_rem(b.0)?
                        };
                        Some((v, v))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    // ----- blocks and statements -----

    pub(super) fn block(&mut self, b: &Block) -> Ty {
        self.scopes.push(HashMap::new());
        // Local constants are visible in their whole block, as in Rust.
        for s in &b.stmts {
            if let Stmt::Const {
                id,
                name,
                ty,
                value,
                ..
            } = s
            {
                self.const_item(*id, name, ty, value);
            }
        }
        for s in &b.stmts {
            match s {
                Stmt::Let {
                    id,
                    name,
                    mutable,
                    ty,
                    init,
                    loc,
                } => self.let_stmt(
                    *id,
                    name.as_ref(),
                    *mutable,
                    ty.as_ref(),
                    init.as_ref(),
                    *loc,
                ),
                Stmt::Const { .. } => {}
                Stmt::Expr(e) => self.expr_stmt(e),
                Stmt::Unsupported(c, loc) => self.errors.at(*loc, unsupported::message(c)),
                Stmt::BadLet {
                    construct,
                    loc,
                    names,
                } => {
                    self.errors.at(*loc, unsupported::message(construct));
                    for n in names {
                        self.bind_named(n, Ty::Error, BindingKind::Local, true, None);
                    }
                }
            }
        }
        let t = match &b.tail {
            Some(e) => self.expr(e),
            None => Ty::Unit,
        };
        self.scopes.pop();
        t
    }

    pub(super) fn const_item(&mut self, id: usize, name: &Name, ty: &Type, value: &Expr) {
        let t = self.written_ty(ty, "");
        if matches!(t, Ty::Array(..)) {
            self.errors.at(
                ty.loc(),
                "local constants must be scalars (`f64`, `usize`, `i32`, `bool`)",
            );
        }
        self.const_expr_rules(value);
        let v = self.expr(value);
        if self.infer.unify(&t, &v).is_err() {
            self.mismatch(value, &t, &v, &format!("the value of `{}`", name.text));
        }
        let b = self.bind_named(name, t.clone(), BindingKind::Const, false, None);
        self.res.insert(id, Res::Binding(b));
        if matches!(t, Ty::Int(_))
            && let Some(v) = self.const_int(value, None)
        {
            self.const_values.insert(b, v);
        }
    }

    /// A `const` value is built from literals, other constants, arithmetic
    /// and casts (as Rust requires; `D` cannot appear in a `const`).
    pub(super) fn const_expr_rules(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Float { .. } | ExprKind::Int { .. } | ExprKind::Bool(_) => {}
            ExprKind::Paren(x) | ExprKind::Unary(_, x) | ExprKind::Cast(x, _) => {
                self.const_expr_rules(x)
            }
            ExprKind::Binary(_, l, r) => {
                self.const_expr_rules(l);
                self.const_expr_rules(r);
            }
            ExprKind::Path(p) => {
                let ok = p
                    .ident()
                    .and_then(|n| self.lookup(&n.text))
                    .is_some_and(|b| self.bindings[b].kind == BindingKind::Const)
                    || is_math_const(p).is_some();
                if !ok && p.ident().is_some_and(|n| self.lookup(&n.text).is_some()) {
                    self.errors.at(
                        e.loc,
                        "a `const` value can use only literals and other constants (not \
                         variables, parameters or `D`)",
                    );
                }
            }
            ExprKind::Unsupported(_) => {}
            _ => self.errors.at(
                e.loc,
                "a `const` value must be built from literals, other constants, `+ - * / %` \
                 and `as` casts",
            ),
        }
    }

    pub(super) fn let_stmt(
        &mut self,
        id: usize,
        name: Option<&Name>,
        mutable: bool,
        ty: Option<&Type>,
        init: Option<&Expr>,
        loc: Loc,
    ) {
        let declared = ty.map(|t| self.written_ty(t, ""));
        let Some(init) = init else {
            self.errors.at(loc, "give the variable its value where it is declared: `let x = …;` (a `let` without a value is not supported)");
            if let Some(name) = name {
                let t = declared.unwrap_or(Ty::Error);
                let b = self.bind_named(name, t, BindingKind::Local, true, None);
                self.res.insert(id, Res::Binding(b));
            }
            return;
        };
        let t = self.expr(init);
        let t = match declared {
            Some(d) => {
                if self.infer.unify(&d, &t).is_err() {
                    self.mismatch(init, &d, &t, "this value");
                }
                d
            }
            None => t,
        };
        if matches!(self.infer.shallow(&t), Ty::Unit) {
            self.errors
                .at(init.loc, "this expression has no value (`()`)");
        }
        self.array_value_rules(init);
        let b = match name {
            Some(name) => self.bind_named(name, t, BindingKind::Local, mutable, None),
            None => self.bind_hidden("_", t, BindingKind::Local),
        };
        self.res.insert(id, Res::Binding(b));
    }

    pub(super) fn expr_stmt(&mut self, e: &Expr) {
        let t = match &e.kind {
            ExprKind::Call(p, args) if self.helper_index(p).is_some() => {
                self.call(e, p, args);
                self.record(e, Ty::Unit)
            }
            _ => self.expr(e),
        };
        let block_like = matches!(
            e.kind,
            ExprKind::If(..) | ExprKind::Block(_) | ExprKind::For { .. }
        );
        if block_like && self.infer.unify(&t, &Ty::Unit).is_err() {
            self.errors.at(
                e.loc,
                format!(
                    "this block-like expression produces {} but is used as a statement: end \
                     it with `;` or use its value",
                    self.infer.describe(&t)
                ),
            );
        }
    }

    /// Array values can be stored (`let`, assignment, array literal
    /// element) only when they are a place, an array literal or a repeat.
    pub(super) fn array_value_rules(&mut self, e: &Expr) {
        if !matches!(
            self.infer
                .shallow(self.types.get(&e.id).unwrap_or(&Ty::Error)),
            Ty::Array(..)
        ) {
            return;
        }
        let inner = strip_parens(e);
        match &inner.kind {
            ExprKind::Path(_) | ExprKind::Index(..) | ExprKind::Array(_) | ExprKind::Repeat(..) => {
            }
            _ => self.errors.at(
                e.loc,
                "array values can be taken only from a variable, an array element, an array \
                 literal `[a, b]` or `[v; N]`: assign the entries in each branch instead",
            ),
        }
    }
}

/// `std::f64::consts::NAME` (or `core::`).
pub fn is_math_const(p: &Path) -> Option<f64> {
    match p.segments.as_slice() {
        [root, f, consts, name]
            if !p.generic_args
                && (root.text == "std" || root.text == "core")
                && f.text == "f64"
                && consts.text == "consts" =>
        {
            math::constant(&name.text)
        }
        _ => None,
    }
}

pub(super) fn global_message(path: &str, name: &str) -> String {
    format!(
        "`{path}` is not a parameter, local variable or local constant: statics and globals \
         (module-level `static` and `const` items) are not visible to the OpenCL version; \
         declare `const {name}: f64 = …;` inside the function, or pass the value in \
         `constants`"
    )
}
