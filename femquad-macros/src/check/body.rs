//! The body: name resolution, type inference and the rules of the subset.

use super::infer::{Infer, VarKind};
use super::signature::Sig;
use super::unsupported::{self, HEAP, is_heap_name};
use super::{Binding, BindingKind, Checked, Dims, Errors, Len, Res, Role, Ty};
use crate::ast::*;
use crate::attr::Args;
use crate::math::{self, Arg, MathFn};
use crate::names::CNames;
use std::collections::{HashMap, HashSet};

pub fn check(args: &Args, f: &Function, sig: Sig, errors: &mut Errors, names: &mut CNames) -> Checked {
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
    };
    if let Some(d) = sig.dims.generic() {
        let name = Name {
            text: d.to_string(),
            loc: f.name.loc,
        };
        let b = c.bind_named(&name, Ty::Int(IntKind::Usize), BindingKind::Dim, false, Some("DIM".into()));
        let _ = b;
    }
    let mut params = Vec::new();
    for p in &sig.params {
        params.push(c.bind_named(&p.name, p.ty.clone(), p.kind, p.mutable, Some(p.c.clone())));
    }
    let ret = match &sig.kind {
        super::Kind::Helper(h) if h.returns_real => Ty::Real,
        _ => Ty::Unit,
    };
    let body_ty = c.block(&f.body);
    if c.infer.unify(&body_ty, &ret).is_err() {
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
        if !used {
            c.errors.at(
                crate::ast::Loc::of(&args.helpers[i]),
                format!("helper `{}` is declared but never called: remove it from `helpers(…)`", c.helper_texts[i]),
            );
        }
    }
    let types = c.types.iter().map(|(id, t)| (*id, c.infer.resolve(t))).collect();
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
        helpers: args.helpers.clone(),
    }
}

struct Body<'a> {
    errors: &'a mut Errors,
    names: &'a mut CNames,
    infer: Infer,
    bindings: Vec<Binding>,
    scopes: Vec<HashMap<String, usize>>,
    res: HashMap<usize, Res>,
    types: HashMap<usize, Ty>,
    trips: HashMap<usize, [u64; 2]>,
    reads: HashSet<Role>,
    helper_texts: Vec<String>,
    helper_used: Vec<bool>,
    fn_name: String,
    dims: Dims,
    /// Values of integer constants.
    const_values: HashMap<usize, i64>,
    /// Value range of loop variables, for the 2D and 3D evaluations.
    loop_ranges: HashMap<usize, [Option<(i64, i64)>; 2]>,
}

fn is_int_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int { suffix: None, .. } => true,
        ExprKind::Paren(inner) => is_int_literal(inner),
        ExprKind::Unary(UnOp::Neg, inner) => is_int_literal(inner),
        _ => false,
    }
}

fn int_literal_text(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { value, .. } => value.to_string(),
        ExprKind::Paren(inner) => int_literal_text(inner),
        ExprKind::Unary(UnOp::Neg, inner) => format!("-{}", int_literal_text(inner)),
        _ => String::new(),
    }
}

fn strip_parens(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(inner) => strip_parens(inner),
        _ => e,
    }
}

impl Body<'_> {
    // ----- scopes and bindings -----

    fn bind_named(&mut self, name: &Name, ty: Ty, kind: BindingKind, mutable: bool, c: Option<String>) -> usize {
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

    fn bind_hidden(&mut self, rust: &str, ty: Ty, kind: BindingKind) -> usize {
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

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn record(&mut self, e: &Expr, t: Ty) -> Ty {
        self.types.insert(e.id, t.clone());
        t
    }

    fn eval_dims(&self) -> [Option<i64>; 2] {
        [self.dims.eval_dim(0), self.dims.eval_dim(1)]
    }

    // ----- types as written -----

    fn written_ty(&mut self, t: &Type, in_signature_of: &str) -> Ty {
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
                    self.errors.at(*loc, "write `f64`: the f32 version is generated from the f64 one");
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
                self.errors.at(*loc, "`()` is not a value type of the subset");
                Ty::Error
            }
            Type::Unsupported(c, loc) => {
                self.errors.at(*loc, unsupported::message(c));
                Ty::Error
            }
        }
    }

    /// The length of an array type or repeat expression: a constant or `D`.
    fn array_len(&mut self, e: &Expr) -> Option<Len> {
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

    /// The value of an integer constant expression (literals, local `const`s,
    /// `D` when `dim` is given, `+ - * / %`, casts).
    fn const_int(&self, e: &Expr, dim: Option<i64>) -> Option<i64> {
        self.int_range(e, dim, None).and_then(|(lo, hi)| (lo == hi).then_some(lo))
    }

    /// The range of values of an integer expression; loop variables
    /// contribute their range for evaluation `k` (0: 2D, 1: 3D).
    fn int_range(&self, e: &Expr, dim: Option<i64>, k: Option<usize>) -> Option<(i64, i64)> {
        match &e.kind {
            ExprKind::Int { value, .. } => i64::try_from(*value).ok().map(|v| (v, v)),
            ExprKind::Paren(inner) => self.int_range(inner, dim, k),
            ExprKind::Cast(inner, Type::Int(..)) => self.int_range(inner, dim, k),
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

    fn block(&mut self, b: &Block) -> Ty {
        self.scopes.push(HashMap::new());
        // Local constants are visible in their whole block, as in Rust.
        for s in &b.stmts {
            if let Stmt::Const { id, name, ty, value, .. } = s {
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
                } => self.let_stmt(*id, name.as_ref(), *mutable, ty.as_ref(), init.as_ref(), *loc),
                Stmt::Const { .. } => {}
                Stmt::Expr(e) => self.expr_stmt(e),
                Stmt::Unsupported(c, loc) => self.errors.at(*loc, unsupported::message(c)),
            }
        }
        let t = match &b.tail {
            Some(e) => self.expr(e),
            None => Ty::Unit,
        };
        self.scopes.pop();
        t
    }

    fn const_item(&mut self, id: usize, name: &Name, ty: &Type, value: &Expr) {
        let t = self.written_ty(ty, "");
        if matches!(t, Ty::Array(..)) {
            self.errors.at(ty.loc(), "local constants must be scalars (`f64`, `usize`, `i32`, `bool`)");
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
    fn const_expr_rules(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Float { .. } | ExprKind::Int { .. } | ExprKind::Bool(_) => {}
            ExprKind::Paren(x) | ExprKind::Unary(_, x) | ExprKind::Cast(x, _) => self.const_expr_rules(x),
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

    fn let_stmt(&mut self, id: usize, name: Option<&Name>, mutable: bool, ty: Option<&Type>, init: Option<&Expr>, loc: Loc) {
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
            self.errors.at(init.loc, "this expression has no value (`()`)");
        }
        self.array_value_rules(init);
        let b = match name {
            Some(name) => self.bind_named(name, t, BindingKind::Local, mutable, None),
            None => self.bind_hidden("_", t, BindingKind::Local),
        };
        self.res.insert(id, Res::Binding(b));
    }

    fn expr_stmt(&mut self, e: &Expr) {
        let t = match &e.kind {
            ExprKind::Call(p, args) if self.helper_index(p).is_some() => {
                self.call(e, p, args);
                self.record(e, Ty::Unit)
            }
            _ => self.expr(e),
        };
        let block_like = matches!(e.kind, ExprKind::If(..) | ExprKind::Block(_) | ExprKind::For { .. });
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
    fn array_value_rules(&mut self, e: &Expr) {
        if !matches!(self.infer.shallow(self.types.get(&e.id).unwrap_or(&Ty::Error)), Ty::Array(..)) {
            return;
        }
        let inner = strip_parens(e);
        match &inner.kind {
            ExprKind::Path(_) | ExprKind::Index(..) | ExprKind::Array(_) | ExprKind::Repeat(..) => {}
            _ => self.errors.at(
                e.loc,
                "array values can be taken only from a variable, an array element, an array \
                 literal `[a, b]` or `[v; N]`: assign the entries in each branch instead",
            ),
        }
    }

    // ----- expressions -----

    fn expr(&mut self, e: &Expr) -> Ty {
        let t = self.expr_inner(e);
        self.record(e, t)
    }

    fn expr_inner(&mut self, e: &Expr) -> Ty {
        match &e.kind {
            ExprKind::Float { suffix, .. } => {
                if let Some(s) = suffix {
                    self.errors.at(
                        e.loc,
                        format!(
                            "remove the suffix `{s}`: float literals must be unsuffixed (`1.0`), \
                             because the same body is compiled for f32 and f64"
                        ),
                    );
                    return Ty::Real;
                }
                self.infer.fresh(VarKind::Float)
            }
            ExprKind::Int { value, suffix } => {
                if *value > i32::MAX as u64 {
                    self.errors.at(e.loc, "integer literal too large for OpenCL's `int`");
                }
                match suffix.as_deref() {
                    None => self.infer.fresh(VarKind::Int),
                    Some("usize") => Ty::Int(IntKind::Usize),
                    Some("i32") => Ty::Int(IntKind::I32),
                    Some(s) => {
                        self.errors.at(
                            e.loc,
                            format!("integer type `{s}` is not supported: use `usize` (indices) or `i32`"),
                        );
                        Ty::Error
                    }
                }
            }
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Path(p) => self.path(e, p),
            ExprKind::Paren(inner) => self.expr(inner),
            ExprKind::Unary(op, inner) => self.unary(*op, inner),
            ExprKind::Binary(op, l, r) => self.binary(e, *op, l, r),
            ExprKind::Assign(place, value) => {
                self.assign(e, place, value, None);
                Ty::Unit
            }
            ExprKind::CompoundAssign(op, place, value) => {
                self.assign(e, place, value, Some(*op));
                Ty::Unit
            }
            ExprKind::Cast(inner, ty) => self.cast(inner, ty),
            ExprKind::Index(base, index) => self.index(base, index),
            ExprKind::Call(p, args) => self.call(e, p, args),
            ExprKind::MethodCall {
                receiver,
                method,
                args,
                turbofish,
            } => self.method(e, receiver, method, args, *turbofish),
            ExprKind::If(cond, then, els) => self.if_expr(cond, then, els.as_deref()),
            ExprKind::Block(b) => self.block(b),
            ExprKind::For {
                var,
                start,
                end,
                inclusive,
                body,
            } => {
                self.for_loop(e, var.as_ref(), start, end, *inclusive, body);
                Ty::Unit
            }
            ExprKind::Array(elems) => {
                if elems.is_empty() {
                    self.errors.at(e.loc, "empty arrays are not supported");
                    return Ty::Error;
                }
                let t = self.expr(&elems[0]);
                for x in &elems[1..] {
                    let tx = self.expr(x);
                    if self.infer.unify(&t, &tx).is_err() {
                        self.mismatch(x, &t, &tx, "this array element");
                    }
                }
                for x in elems {
                    self.array_value_rules(x);
                }
                Ty::array(t, Len::Lit(elems.len() as u64))
            }
            ExprKind::Repeat(value, len) => {
                let t = self.expr(value);
                self.array_value_rules(value);
                match self.array_len(len) {
                    Some(l) => Ty::array(t, l),
                    None => Ty::Error,
                }
            }
            ExprKind::Ref(..) => {
                self.errors.at(
                    e.loc,
                    "references (`&x`) are supported only as arguments of helper calls: copy \
                     the value (`let g = grad_u[0];`) or index the array",
                );
                Ty::Error
            }
            ExprKind::Unsupported(c) => {
                self.errors.at(e.loc, unsupported::message(c));
                Ty::Error
            }
        }
    }

    fn path(&mut self, e: &Expr, p: &Path) -> Ty {
        if let Some(v) = is_math_const(p) {
            self.res.insert(e.id, Res::MathConst(v));
            return Ty::Real;
        }
        if let Some(n) = p.ident() {
            if let Some(b) = self.lookup(&n.text) {
                self.res.insert(e.id, Res::Binding(b));
                if let BindingKind::Param(Some(role)) = self.bindings[b].kind
                    && !role.is_output()
                {
                    self.reads.insert(role);
                }
                return self.bindings[b].ty.clone();
            }
            if n.text == "D" {
                self.errors.at(
                    e.loc,
                    "`D` is not defined: add the generic parameter `const D: usize` to make the \
                     function valid in 2D and 3D",
                );
            } else if n.text == self.fn_name || self.helper_index(p).is_some() {
                self.errors.at(e.loc, "functions are not values: call it");
            } else if n.text.chars().any(|c| c.is_ascii_uppercase()) && !n.text.chars().any(|c| c.is_ascii_lowercase()) {
                self.errors.at(e.loc, global_message(&n.text));
            } else {
                self.errors.at(
                    e.loc,
                    format!("cannot find `{}`: it is not a parameter, local variable or local constant", n.text),
                );
            }
            return Ty::Error;
        }
        let last = p.segments.last().map(|s| s.text.as_str()).unwrap_or("");
        if p.segments.first().is_some_and(|s| s.text == "f64" || s.text == "f32") && p.segments.len() == 2 {
            self.errors.at(
                e.loc,
                format!(
                    "`{}` is not supported: associated constants differ between f32 and f64; \
                     pass the value in `constants` or write it as a literal",
                    p.text.replace(' ', "")
                ),
            );
        } else if p.generic_args {
            self.errors.at(e.loc, "generic arguments are not supported here");
        } else if is_heap_name(last) || p.segments.iter().any(|s| is_heap_name(&s.text)) {
            self.errors.at(e.loc, HEAP);
        } else {
            self.errors.at(e.loc, global_message(&p.text.replace(' ', "")));
        }
        Ty::Error
    }

    fn unary(&mut self, op: UnOp, inner: &Expr) -> Ty {
        let t = self.expr(inner);
        if self.infer.is_error(&t) {
            return Ty::Error;
        }
        match op {
            UnOp::Neg => {
                if matches!(self.infer.shallow(&t), Ty::Int(IntKind::Usize)) {
                    self.errors.at(inner.loc, "cannot negate a `usize`: convert with `as i32` or `as f64` first");
                } else if !self.infer.is_numeric(&t) {
                    self.errors.at(inner.loc, format!("cannot negate {}", self.infer.describe(&t)));
                    return Ty::Error;
                }
                t
            }
            UnOp::Not => {
                if self.infer.unify(&t, &Ty::Bool).is_err() {
                    self.errors.at(
                        inner.loc,
                        format!(
                            "`!` applies to `bool` only (on integers it is a bitwise not, \
                             which is not supported), found {}",
                            self.infer.describe(&t)
                        ),
                    );
                }
                Ty::Bool
            }
        }
    }

    fn binary(&mut self, e: &Expr, op: BinOp, l: &Expr, r: &Expr) -> Ty {
        let tl = self.expr(l);
        let tr = self.expr(r);
        if matches!(op, BinOp::And | BinOp::Or) {
            for (x, t) in [(l, &tl), (r, &tr)] {
                if self.infer.unify(t, &Ty::Bool).is_err() {
                    self.errors.at(
                        x.loc,
                        format!("`{}` needs `bool` operands, found {}", op.symbol(), self.infer.describe(t)),
                    );
                }
            }
            return Ty::Bool;
        }
        if self.infer.is_error(&tl) || self.infer.is_error(&tr) {
            return if op.is_comparison() { Ty::Bool } else { Ty::Error };
        }
        for (x, t) in [(l, &tl), (r, &tr)] {
            let bad = match self.infer.shallow(t) {
                Ty::Array(..) => Some("arithmetic and comparisons on whole arrays are not supported: loop over the entries"),
                Ty::Unit => Some("this expression has no value (`()`)"),
                Ty::Bool if !matches!(op, BinOp::Eq | BinOp::Ne) => {
                    Some("`bool` values support only `==`, `!=`, `&&`, `||` and `!`")
                }
                _ => None,
            };
            if let Some(msg) = bad {
                self.errors.at(x.loc, msg);
                return if op.is_comparison() { Ty::Bool } else { Ty::Error };
            }
        }
        if self.infer.unify(&tl, &tr).is_err() {
            self.operand_mismatch(e, op, l, &tl, r, &tr);
            return if op.is_comparison() { Ty::Bool } else { Ty::Error };
        }
        if op.is_comparison() { Ty::Bool } else { tl }
    }

    /// The error for operands of different types, worded for the usual
    /// mistakes: an integer literal in float arithmetic, mixed int/float.
    fn operand_mismatch(&mut self, e: &Expr, op: BinOp, l: &Expr, tl: &Ty, r: &Expr, tr: &Ty) {
        for (lit, other) in [(l, tr), (r, tl)] {
            if is_int_literal(lit) && self.infer.is_float(other) {
                let text = int_literal_text(lit);
                self.errors.at(
                    lit.loc,
                    format!(
                        "integer literal `{text}` in floating-point arithmetic: write `{text}.0` \
                         (OpenCL C would convert it silently, but integer and float arithmetic \
                         differ, e.g. `1 / 2` is 0)"
                    ),
                );
                return;
            }
        }
        if (self.infer.is_int(tl) && self.infer.is_float(tr)) || (self.infer.is_float(tl) && self.infer.is_int(tr)) {
            self.errors.at(
                e.loc,
                format!(
                    "mixed integer and floating-point operands of `{}` ({} and {}): convert the \
                     integer explicitly with `as f64` (OpenCL C would convert it implicitly, \
                     Rust does not)",
                    op.symbol(),
                    self.infer.describe(tl),
                    self.infer.describe(tr)
                ),
            );
            return;
        }
        self.errors.at(
            e.loc,
            format!(
                "operands of `{}` have different types, {} and {}: convert one with `as`",
                op.symbol(),
                self.infer.describe(tl),
                self.infer.describe(tr)
            ),
        );
    }

    /// The error for a value of the wrong type.
    fn mismatch(&mut self, value: &Expr, expected: &Ty, found: &Ty, what: &str) {
        if self.infer.is_error(expected) || self.infer.is_error(found) {
            return;
        }
        if is_int_literal(value) && self.infer.is_float(expected) {
            let text = int_literal_text(value);
            self.errors.at(
                value.loc,
                format!("integer literal `{text}` where a float is expected: write `{text}.0`"),
            );
        } else if self.infer.is_int(found) && self.infer.is_float(expected) {
            self.errors.at(
                value.loc,
                format!(
                    "{what} is {} but {} is expected: convert it with `as f64`",
                    self.infer.describe(found),
                    self.infer.describe(expected)
                ),
            );
        } else {
            self.errors.at(
                value.loc,
                format!(
                    "{what} is {} but {} is expected",
                    self.infer.describe(found),
                    self.infer.describe(expected)
                ),
            );
        }
    }

    /// The binding at the root of a place (`x`, `x[i]`, `x[i][j]`).
    fn place_root(&self, e: &Expr) -> Option<usize> {
        match &e.kind {
            ExprKind::Path(_) => match self.res.get(&e.id) {
                Some(Res::Binding(b)) => Some(*b),
                _ => None,
            },
            ExprKind::Index(base, _) | ExprKind::Paren(base) => self.place_root(base),
            _ => None,
        }
    }

    fn is_place(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Path(_) => true,
            ExprKind::Index(base, _) | ExprKind::Paren(base) => Self::is_place(base),
            _ => false,
        }
    }

    /// Checks that the place `e` (already typed) can be written.
    fn writable(&mut self, e: &Expr) {
        if !Self::is_place(e) {
            self.errors.at(e.loc, "only variables and array elements can be assigned");
            return;
        }
        let Some(b) = self.place_root(e) else { return };
        let binding = &self.bindings[b];
        let whole = matches!(strip_parens(e).kind, ExprKind::Path(_));
        let msg = match binding.kind {
            BindingKind::Param(Some(role)) if !role.is_output() => Some(format!(
                "`{}` is an input (`{}`) and cannot be assigned",
                binding.rust,
                role.form()
            )),
            BindingKind::Param(_) if whole && matches!(binding.ty, Ty::Array(..) | Ty::Error) => Some(format!(
                "cannot assign to the parameter `{}` itself: assign its entries, as in `{}[0] = …`",
                binding.rust, binding.rust
            )),
            BindingKind::Param(None) if !binding.mutable && !whole => Some(format!(
                "`{}` is read-only: declare the parameter `&mut` to write into it",
                binding.rust
            )),
            BindingKind::Param(None) if !binding.mutable => Some(format!(
                "cannot assign twice to the parameter `{}`: declare it `mut {}`",
                binding.rust, binding.rust
            )),
            BindingKind::Local if !binding.mutable => Some(format!(
                "cannot assign to `{}`: declare it with `let mut {}`",
                binding.rust, binding.rust
            )),
            BindingKind::LoopVar => Some(format!("cannot assign to the loop variable `{}`", binding.rust)),
            BindingKind::Const | BindingKind::Dim => Some(format!("cannot assign to the constant `{}`", binding.rust)),
            _ => None,
        };
        if let Some(msg) = msg {
            self.errors.at(e.loc, msg);
        }
    }

    fn assign(&mut self, e: &Expr, place: &Expr, value: &Expr, op: Option<BinOp>) {
        let tp = self.expr(place);
        let tv = self.expr(value);
        self.writable(place);
        if self.infer.is_error(&tp) || self.infer.is_error(&tv) {
            return;
        }
        match op {
            None => {
                if self.infer.unify(&tp, &tv).is_err() {
                    self.mismatch(value, &tp, &tv, "the assigned value");
                } else {
                    self.array_value_rules(value);
                }
            }
            Some(op) => {
                if !self.infer.is_numeric(&tp) {
                    self.errors.at(
                        e.loc,
                        format!("`{}=` needs a number on the left, found {}", op.symbol(), self.infer.describe(&tp)),
                    );
                } else if self.infer.unify(&tp, &tv).is_err() {
                    self.operand_mismatch(e, op, place, &tp, value, &tv);
                }
            }
        }
    }

    fn cast(&mut self, inner: &Expr, ty: &Type) -> Ty {
        let t = self.expr(inner);
        let target = match ty {
            Type::F64(_) => Ty::Real,
            Type::Int(k, _) => Ty::Int(*k),
            Type::Named { text, loc } if text == "f32" => {
                self.errors.at(*loc, "write `as f64`: the f32 version is generated from the f64 one");
                return Ty::Error;
            }
            other => {
                self.errors.at(other.loc(), "`as` converts only to `f64`, `usize` or `i32`");
                return Ty::Error;
            }
        };
        if self.infer.is_error(&t) {
            return target;
        }
        match self.infer.shallow(&t) {
            Ty::Bool => self.errors.at(
                inner.loc,
                "`bool` cannot be converted with `as` in the subset: write `if b { 1.0 } else { 0.0 }`",
            ),
            Ty::Array(..) | Ty::Unit => {
                self.errors.at(inner.loc, format!("{} cannot be converted with `as`", self.infer.describe(&t)))
            }
            _ => {}
        }
        target
    }

    fn index(&mut self, base: &Expr, index: &Expr) -> Ty {
        let tb = self.expr(base);
        let ti = self.expr(index);
        let elem = match self.infer.shallow(&tb) {
            Ty::Array(elem, len) => Some((*elem, len)),
            Ty::Error => None,
            other => {
                self.errors.at(base.loc, format!("only arrays can be indexed, this is {}", self.infer.describe(&other)));
                None
            }
        };
        if !self.infer.is_error(&ti) && self.infer.unify(&ti, &Ty::Int(IntKind::Usize)).is_err() {
            let hint = if self.infer.is_float(&ti) {
                "convert it with `as usize`"
            } else {
                "convert it with `as usize` (Rust indexes with `usize` only)"
            };
            self.errors.at(
                index.loc,
                format!("array indices are `usize`, this is {}: {hint}", self.infer.describe(&ti)),
            );
        }
        let Some((elem, len)) = elem else {
            return Ty::Error;
        };
        // Indices with a statically known range must stay in bounds (Rust
        // would panic at run time, OpenCL read out of bounds).
        for k in 0..2 {
            let dim = self.dims.eval_dim(k);
            let n = match (len, dim) {
                (Len::Lit(n), _) => n as i64,
                (Len::Dim, Some(d)) => d,
                (Len::Dim, None) => continue,
            };
            if let Some((lo, hi)) = self.int_range(index, dim, Some(k))
                && (lo < 0 || hi >= n)
            {
                let bad = if lo < 0 { lo } else { hi };
                let when = match (len, dim) {
                    (Len::Dim, Some(d)) => format!(" when D = {d}"),
                    _ => match dim {
                        Some(d) if self.index_uses_dim(index) => format!(" when D = {d}"),
                        _ => String::new(),
                    },
                };
                self.errors.at(
                    index.loc,
                    format!("index out of bounds: this index can be {bad}, but the array has {n} entries{when}"),
                );
                break;
            }
        }
        elem
    }

    fn index_uses_dim(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Path(_) => match self.res.get(&e.id) {
                Some(Res::Binding(b)) => matches!(self.bindings[*b].kind, BindingKind::Dim | BindingKind::LoopVar),
                _ => false,
            },
            ExprKind::Paren(x) | ExprKind::Unary(_, x) | ExprKind::Cast(x, _) => self.index_uses_dim(x),
            ExprKind::Binary(_, l, r) => self.index_uses_dim(l) || self.index_uses_dim(r),
            _ => false,
        }
    }

    fn helper_index(&self, p: &Path) -> Option<usize> {
        self.helper_texts.iter().position(|t| *t == p.text)
    }

    fn call(&mut self, e: &Expr, p: &Path, args: &[Expr]) -> Ty {
        // Recursion first: a function may not call itself, declared or not.
        if p.ident().is_some_and(|n| n.text == self.fn_name) || p.segments.last().is_some_and(|s| s.text == self.fn_name) && self.helper_index(p).is_some() {
            self.errors.at(
                p.loc,
                format!(
                    "recursive call of `{}`: OpenCL C does not allow recursion; use a `for` \
                     loop with a constant trip count",
                    self.fn_name
                ),
            );
            self.check_args_loosely(args);
            return Ty::Error;
        }
        if let Some(i) = self.helper_index(p) {
            self.helper_used[i] = true;
            self.res.insert(e.id, Res::Helper(i));
            for a in args {
                self.helper_arg(a);
            }
            return self.infer.fresh(VarKind::HelperRet);
        }
        if p.segments.len() == 2 && !p.leading_colon && p.segments[0].text == "f64" {
            let name = &p.segments[1].text;
            if let Some(f) = math::function(name) {
                if p.generic_args {
                    self.errors.at(p.loc, "generic arguments are not supported here");
                }
                self.res.insert(e.id, Res::Math(f));
                if args.len() != f.args.len() + 1 {
                    self.errors.at(
                        e.loc,
                        format!("`f64::{name}` takes {} argument(s), found {}", f.args.len() + 1, args.len()),
                    );
                    self.check_args_loosely(args);
                    return Ty::Real;
                }
                let t0 = self.expr(&args[0]);
                if self.infer.unify(&t0, &Ty::Real).is_err() {
                    self.mismatch(&args[0], &Ty::Real, &t0, &format!("the argument of `f64::{name}`"));
                }
                self.math_args(f, &args[1..]);
                return Ty::Real;
            }
            if name == "from" {
                self.errors.at(p.loc, "`f64::from` is not supported: convert with `as f64`");
                self.check_args_loosely(args);
                return Ty::Error;
            }
        }
        let msg = if p.segments.iter().any(|s| is_heap_name(&s.text)) {
            HEAP.to_string()
        } else {
            format!(
                "unknown function `{}`: only math functions ({}; called as `x.sqrt()` or \
                 `f64::sqrt(x)`) and #[pointwise] helpers declared with \
                 `#[pointwise(helpers({}))]` can be called",
                p.text.replace(' ', ""),
                math::function_list(),
                p.text.replace(' ', "")
            )
        };
        self.errors.at(p.loc, msg);
        self.check_args_loosely(args);
        Ty::Error
    }

    /// Checks arguments of a call that is itself an error, for their own errors.
    fn check_args_loosely(&mut self, args: &[Expr]) {
        for a in args {
            match &a.kind {
                ExprKind::Ref(_, inner) => {
                    self.expr(inner);
                }
                _ => {
                    self.expr(a);
                }
            }
        }
    }

    fn helper_arg(&mut self, a: &Expr) {
        match &a.kind {
            ExprKind::Ref(mutable, inner) => {
                let t = self.expr(inner);
                self.record(a, t.clone());
                if !Self::is_place(inner) {
                    self.errors.at(a.loc, "pass a variable or an array element by reference, as in `&grad_u[0]`");
                    return;
                }
                match self.infer.shallow(&t) {
                    Ty::Array(..) | Ty::Error => {}
                    other => {
                        self.errors.at(
                            a.loc,
                            format!(
                                "only arrays are passed by reference; pass {} by value",
                                self.infer.describe(&other)
                            ),
                        );
                        return;
                    }
                }
                if *mutable {
                    self.writable(inner);
                }
            }
            _ => {
                let t = self.expr(a);
                match self.infer.shallow(&t) {
                    Ty::Array(..) => self.errors.at(a.loc, "pass arrays by reference: `&a` (or `&mut a`)"),
                    Ty::Unit => self.errors.at(a.loc, "this expression has no value (`()`)"),
                    _ => {
                        // Helpers take floats as `f64`.
                        if self.infer.is_unresolved_float(&t) {
                            let _ = self.infer.unify(&t, &Ty::Real);
                        }
                    }
                }
            }
        }
    }

    fn math_args(&mut self, f: &'static MathFn, args: &[Expr]) {
        for (a, kind) in args.iter().zip(f.args) {
            let t = self.expr(a);
            match kind {
                Arg::Real => {
                    if self.infer.unify(&t, &Ty::Real).is_err() {
                        self.mismatch(a, &Ty::Real, &t, &format!("the argument of `{}`", f.rust));
                    }
                }
                Arg::Int => {
                    if self.infer.unify(&t, &Ty::Int(IntKind::I32)).is_err() && !self.infer.is_error(&t) {
                        self.errors.at(
                            a.loc,
                            format!(
                                "the exponent of `powi` is an `i32`, found {}: write an integer \
                                 (`2`), convert with `as i32`, or use `powf` for a real exponent",
                                self.infer.describe(&t)
                            ),
                        );
                    }
                }
            }
        }
    }

    fn method(&mut self, e: &Expr, receiver: &Expr, method: &Name, args: &[Expr], turbofish: bool) -> Ty {
        let tr = self.expr(receiver);
        let Some(f) = math::function(&method.text) else {
            let hint = match method.text.as_str() {
                "iter" | "iter_mut" | "into_iter" | "map" | "sum" | "zip" | "enumerate" | "fold" => {
                    "iterators are not supported: loop with `for i in 0..N` and index the array".to_string()
                }
                "len" => "array lengths are constants: write the number or `D`".into(),
                "clone" | "to_owned" | "copied" | "cloned" => {
                    "it is not needed: numbers and arrays are copied by assignment (`let b = a;`)".into()
                }
                "signum" => "Rust's `signum(0.0)` is 1 but OpenCL's `sign(0.0)` is 0: write it with `if`".into(),
                "recip" => "write `1.0 / x`".into(),
                "powi32" | "pow" => "use `powi` (integer exponent) or `powf`".into(),
                "to_vec" | "collect" | "push" => HEAP.into(),
                _ => format!("the supported methods are the math functions {}", math::function_list()),
            };
            self.errors.at(method.loc, format!("method `{}` is not supported: {hint}", method.text));
            self.check_args_loosely(args);
            return Ty::Error;
        };
        self.res.insert(e.id, Res::Math(f));
        if turbofish {
            self.errors.at(method.loc, "generic arguments are not supported here");
        }
        if self.infer.is_unresolved_float(&tr) {
            self.errors.at(
                receiver.loc,
                format!(
                    "the type of this float is not known yet, so `.{}()` cannot be called on it \
                     (rustc: \"ambiguous numeric type\"): write `f64::{}(…)`, or give the \
                     variable a type, as in `let x: f64 = 2.0;`",
                    f.rust, f.rust
                ),
            );
        } else if !self.infer.is_error(&tr) && self.infer.unify(&tr, &Ty::Real).is_err() {
            self.errors.at(
                receiver.loc,
                format!(
                    "math methods apply to `f64` values, this is {}: convert it with `as f64` first",
                    self.infer.describe(&tr)
                ),
            );
        }
        if args.len() != f.args.len() {
            self.errors.at(
                e.loc,
                format!("`.{}()` takes {} argument(s), found {}", f.rust, f.args.len(), args.len()),
            );
            self.check_args_loosely(args);
            return Ty::Real;
        }
        self.math_args(f, args);
        Ty::Real
    }

    fn if_expr(&mut self, cond: &Expr, then: &Block, els: Option<&Expr>) -> Ty {
        let tc = self.expr(cond);
        if self.infer.unify(&tc, &Ty::Bool).is_err() {
            self.errors.at(
                cond.loc,
                format!("an `if` condition must be a `bool`, this is {}", self.infer.describe(&tc)),
            );
        }
        let tt = self.block(then);
        let Some(els) = els else {
            if self.infer.unify(&tt, &Ty::Unit).is_err() {
                self.errors.at(
                    then.tail.as_ref().map_or(then.loc, |t| t.loc),
                    "an `if` without `else` has no value: add an `else` branch, or end this \
                     expression with `;`",
                );
            }
            return Ty::Unit;
        };
        let te = self.expr(els);
        if self.infer.unify(&tt, &te).is_err() {
            self.errors.at(
                els.loc,
                format!(
                    "`if` and `else` have different types: {} and {}",
                    self.infer.describe(&tt),
                    self.infer.describe(&te)
                ),
            );
            return Ty::Error;
        }
        if matches!(self.infer.shallow(&tt), Ty::Array(..)) {
            self.errors.at(
                els.loc,
                "an `if` producing an array is not supported: assign the array's entries in \
                 each branch",
            );
            return Ty::Error;
        }
        tt
    }

    fn for_loop(&mut self, e: &Expr, var: Option<&Name>, start: &Expr, end: &Expr, inclusive: bool, body: &Block) {
        let ts = self.expr(start);
        let te = self.expr(end);
        let mut t = ts.clone();
        if self.infer.unify(&ts, &te).is_err() || !(self.infer.is_int(&ts) || self.infer.is_error(&ts)) {
            if !self.infer.is_error(&ts) && !self.infer.is_error(&te) {
                self.errors.at(
                    Loc::join(start.loc, end.loc),
                    format!(
                        "loop bounds must be integers of the same type, found {} and {}",
                        self.infer.describe(&ts),
                        self.infer.describe(&te)
                    ),
                );
            }
            t = Ty::Error;
        }
        let mut ranges = [None, None];
        let mut trips = [0u64; 2];
        let mut constant = true;
        for k in 0..2 {
            let dim = self.dims.eval_dim(k);
            match (self.const_int(start, dim), self.const_int(end, dim)) {
                (Some(lo), Some(hi)) => {
                    let hi_incl = if inclusive { hi } else { hi - 1 };
                    trips[k] = (hi_incl - lo + 1).max(0) as u64;
                    if hi_incl >= lo {
                        ranges[k] = Some((lo, hi_incl));
                    }
                }
                _ => constant = false,
            }
        }
        if !constant && !self.infer.is_error(&t) {
            self.errors.at(
                Loc::join(start.loc, end.loc),
                "loop bounds must be constants (integer literals, `D`, local `const`s and \
                 arithmetic on them), so that every loop has a fixed trip count",
            );
        }
        self.trips.insert(e.id, trips);
        self.scopes.push(HashMap::new());
        let b = match var {
            Some(n) => self.bind_named(n, t, BindingKind::LoopVar, false, None),
            None => self.bind_hidden("i", t, BindingKind::LoopVar),
        };
        self.loop_ranges.insert(b, ranges);
        self.res.insert(e.id, Res::Binding(b));
        let tb = self.block(body);
        if self.infer.unify(&tb, &Ty::Unit).is_err() {
            self.errors.at(
                body.tail.as_ref().map_or(body.loc, |t| t.loc),
                "a loop body has no value: end this expression with `;`",
            );
        }
        self.scopes.pop();
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

fn global_message(name: &str) -> String {
    format!(
        "`{name}` is not a parameter, local variable or local constant: statics and globals \
         (module-level `static` and `const` items) are not visible to the OpenCL version; \
         declare `const {name}: f64 = …;` inside the function, or pass the value in \
         `constants`"
    )
}
