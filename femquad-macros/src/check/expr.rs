//! Expressions: literals, names, operators, places and assignment, casts,
//! indexing, `if` and `for`.
//!
//! (Longer than most files: the check of each expression construct with its
//! spanned error messages, in one `match`; the statements are in `body.rs`,
//! calls in `call.rs`.)

use super::body::{
    Body, global_message, int_literal_text, is_int_literal, is_math_const, strip_parens,
};
use super::infer::VarKind;
use super::unsupported::{self, HEAP, is_heap_name};
use super::{BindingKind, Len, Res, Ty};
use crate::ast::*;
use std::collections::HashMap;

impl Body<'_> {
    pub(super) fn expr(&mut self, e: &Expr) -> Ty {
        let t = self.expr_inner(e);
        self.record(e, t)
    }

    pub(super) fn expr_inner(&mut self, e: &Expr) -> Ty {
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
                if let ExprKind::Float { value, .. } = e.kind
                    && (value.is_infinite() || value.abs() > f32::MAX as f64)
                {
                    self.errors.at(
                        e.loc,
                        "float literal out of range for f32 (the physics is also compiled in \
                         single precision): pass large values in `constants`",
                    );
                }
                self.infer.fresh(VarKind::Float)
            }
            ExprKind::Int { value, suffix } => {
                if *value > i32::MAX as u64 {
                    self.errors
                        .at(e.loc, "integer literal too large for OpenCL's `int`");
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

    pub(super) fn path(&mut self, e: &Expr, p: &Path) -> Ty {
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
            } else if crate::math::constant(&n.text).is_some() {
                self.errors.at(e.loc, math_const_message(&n.text, &n.text));
            } else if n.text == self.fn_name || self.helper_index(p).is_some() {
                self.errors.at(e.loc, "functions are not values: call it");
            } else if n.text.chars().any(|c| c.is_ascii_uppercase())
                && !n.text.chars().any(|c| c.is_ascii_lowercase())
            {
                self.errors.at(e.loc, global_message(&n.text, &n.text));
            } else {
                self.errors.at(
                    e.loc,
                    format!(
                        "cannot find `{}`: it is not a parameter, local variable or local constant",
                        n.text
                    ),
                );
            }
            return Ty::Error;
        }
        let last = p.segments.last().map(|s| s.text.as_str()).unwrap_or("");
        if crate::math::constant(last).is_some() && p.segments.iter().any(|s| s.text == "consts") {
            self.errors
                .at(e.loc, math_const_message(&p.text.replace(' ', ""), last));
        } else if p
            .segments
            .first()
            .is_some_and(|s| s.text == "f64" || s.text == "f32")
            && p.segments.len() == 2
        {
            self.errors.at(
                e.loc,
                format!(
                    "`{}` is not supported: associated constants differ between f32 and f64; \
                     pass the value in `constants` or write it as a literal",
                    p.text.replace(' ', "")
                ),
            );
        } else if p.generic_args {
            self.errors
                .at(e.loc, "generic arguments are not supported here");
        } else if is_heap_name(last) || p.segments.iter().any(|s| is_heap_name(&s.text)) {
            self.errors.at(e.loc, HEAP);
        } else {
            self.errors
                .at(e.loc, global_message(&p.text.replace(' ', ""), last));
        }
        Ty::Error
    }

    pub(super) fn unary(&mut self, op: UnOp, inner: &Expr) -> Ty {
        let t = self.expr(inner);
        if self.infer.is_error(&t) {
            return Ty::Error;
        }
        match op {
            UnOp::Neg => {
                if matches!(self.infer.shallow(&t), Ty::Int(IntKind::Usize)) {
                    self.errors.at(
                        inner.loc,
                        "cannot negate a `usize`: convert with `as i32` or `as f64` first",
                    );
                } else if !self.infer.is_numeric(&t) {
                    self.errors.at(
                        inner.loc,
                        format!("cannot negate {}", self.infer.describe(&t)),
                    );
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

    pub(super) fn binary(&mut self, e: &Expr, op: BinOp, l: &Expr, r: &Expr) -> Ty {
        let tl = self.expr(l);
        let tr = self.expr(r);
        if matches!(op, BinOp::And | BinOp::Or) {
            for (x, t) in [(l, &tl), (r, &tr)] {
                if self.infer.unify(t, &Ty::Bool).is_err() {
                    self.errors.at(
                        x.loc,
                        format!(
                            "`{}` needs `bool` operands, found {}",
                            op.symbol(),
                            self.infer.describe(t)
                        ),
                    );
                }
            }
            return Ty::Bool;
        }
        if self.infer.is_error(&tl) || self.infer.is_error(&tr) {
            return if op.is_comparison() {
                Ty::Bool
            } else {
                Ty::Error
            };
        }
        for (x, t) in [(l, &tl), (r, &tr)] {
            let bad = match self.infer.shallow(t) {
                Ty::Array(..) => Some(
                    "arithmetic and comparisons on whole arrays are not supported: loop over the entries",
                ),
                Ty::Unit => Some("this expression has no value (`()`)"),
                Ty::Bool if !matches!(op, BinOp::Eq | BinOp::Ne) => {
                    Some("`bool` values support only `==`, `!=`, `&&`, `||` and `!`")
                }
                _ => None,
            };
            if let Some(msg) = bad {
                self.errors.at(x.loc, msg);
                return if op.is_comparison() {
                    Ty::Bool
                } else {
                    Ty::Error
                };
            }
        }
        if self.infer.unify(&tl, &tr).is_err() {
            self.operand_mismatch(e, op, l, &tl, r, &tr);
            return if op.is_comparison() {
                Ty::Bool
            } else {
                Ty::Error
            };
        }
        if op.is_arithmetic() && self.infer.is_int(&tl) {
            self.constant_arithmetic(e, op, l, r, &tl);
        }
        if op.is_comparison() { Ty::Bool } else { tl }
    }

    /// Integer arithmetic on constants: division by zero is an error now;
    /// the value is recorded to be checked against its type's range once
    /// types are resolved ([`Body::check_constant_ranges`]).
    fn constant_arithmetic(&mut self, e: &Expr, op: BinOp, l: &Expr, r: &Expr, t: &Ty) {
        let mut values = [None, None];
        for (k, v) in values.iter_mut().enumerate() {
            let dim = self.dims.eval_dim(k);
            let (Some(a), Some(b)) = (self.const_int(l, dim), self.const_int(r, dim)) else {
                return;
            };
            let (a, b) = (a as i128, b as i128);
            *v = match op {
                BinOp::Add => Some(a + b),
                BinOp::Sub => Some(a - b),
                BinOp::Mul => Some(a * b),
                BinOp::Div | BinOp::Rem if b == 0 => {
                    self.errors.at(
                        r.loc,
                        "division by zero: this integer is 0 (Rust panics, OpenCL's result is \
                         undefined)",
                    );
                    return;
                }
                BinOp::Div => Some(a / b),
                BinOp::Rem => Some(a % b),
                _ => None,
            };
        }
        self.constants.push((e.loc, t.clone(), values));
    }

    /// The error for operands of different types, worded for the usual
    /// mistakes: an integer literal in float arithmetic, mixed int/float.
    pub(super) fn operand_mismatch(
        &mut self,
        e: &Expr,
        op: BinOp,
        l: &Expr,
        tl: &Ty,
        r: &Expr,
        tr: &Ty,
    ) {
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
        if (self.infer.is_int(tl) && self.infer.is_float(tr))
            || (self.infer.is_float(tl) && self.infer.is_int(tr))
        {
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
    pub(super) fn mismatch(&mut self, value: &Expr, expected: &Ty, found: &Ty, what: &str) {
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
    pub(super) fn place_root(&self, e: &Expr) -> Option<usize> {
        match &e.kind {
            ExprKind::Path(_) => match self.res.get(&e.id) {
                Some(Res::Binding(b)) => Some(*b),
                _ => None,
            },
            ExprKind::Index(base, _) | ExprKind::Paren(base) => self.place_root(base),
            _ => None,
        }
    }

    pub(super) fn is_place(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Path(_) => true,
            ExprKind::Index(base, _) | ExprKind::Paren(base) => Self::is_place(base),
            _ => false,
        }
    }

    /// Checks that the place `e` (already typed) can be written.
    pub(super) fn writable(&mut self, e: &Expr) {
        if matches!(strip_parens(e).kind, ExprKind::Unsupported(_)) {
            return;
        }
        if !Self::is_place(e) {
            self.errors
                .at(e.loc, "only variables and array elements can be assigned");
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
            BindingKind::Param(_) if whole && matches!(binding.ty, Ty::Array(..) | Ty::Error) => {
                Some(format!(
                    "cannot assign to the parameter `{}` itself: assign its entries, as in `{}[0] = …`",
                    binding.rust, binding.rust
                ))
            }
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
            BindingKind::LoopVar => Some(format!(
                "cannot assign to the loop variable `{}`",
                binding.rust
            )),
            BindingKind::Const | BindingKind::Dim => {
                Some(format!("cannot assign to the constant `{}`", binding.rust))
            }
            _ => None,
        };
        if let Some(msg) = msg {
            self.errors.at(e.loc, msg);
        }
    }

    pub(super) fn assign(&mut self, e: &Expr, place: &Expr, value: &Expr, op: Option<BinOp>) {
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
                        format!(
                            "`{}=` needs a number on the left, found {}",
                            op.symbol(),
                            self.infer.describe(&tp)
                        ),
                    );
                } else if self.infer.unify(&tp, &tv).is_err() {
                    self.operand_mismatch(e, op, place, &tp, value, &tv);
                }
            }
        }
    }

    pub(super) fn cast(&mut self, inner: &Expr, ty: &Type) -> Ty {
        let t = self.expr(inner);
        let target = match ty {
            Type::F64(_) => Ty::Real,
            Type::Int(k, _) => Ty::Int(*k),
            Type::Named { text, loc } if text == "f32" => {
                self.errors.at(
                    *loc,
                    "write `as f64`: the f32 version is generated from the f64 one",
                );
                return Ty::Error;
            }
            other => {
                self.errors
                    .at(other.loc(), "`as` converts only to `f64`, `usize` or `i32`");
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

    pub(super) fn index(&mut self, base: &Expr, index: &Expr) -> Ty {
        let tb = self.expr(base);
        let ti = self.expr(index);
        let elem = match self.infer.shallow(&tb) {
            Ty::Array(elem, len) => Some((*elem, len)),
            Ty::Error => None,
            other => {
                self.errors.at(
                    base.loc,
                    format!(
                        "only arrays can be indexed, this is {}",
                        self.infer.describe(&other)
                    ),
                );
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
                format!(
                    "array indices are `usize`, this is {}: {hint}",
                    self.infer.describe(&ti)
                ),
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
                _ => continue,
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
                let entries = if n == 1 { "entry" } else { "entries" };
                self.errors.at(
                    index.loc,
                    format!("index out of bounds: this index can be {bad}, but the array has {n} {entries}{when}"),
                );
                break;
            }
        }
        elem
    }

    pub(super) fn index_uses_dim(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Path(_) => match self.res.get(&e.id) {
                Some(Res::Binding(b)) => matches!(
                    self.bindings[*b].kind,
                    BindingKind::Dim | BindingKind::LoopVar
                ),
                _ => false,
            },
            ExprKind::Paren(x) | ExprKind::Unary(_, x) | ExprKind::Cast(x, _) => {
                self.index_uses_dim(x)
            }
            ExprKind::Binary(_, l, r) => self.index_uses_dim(l) || self.index_uses_dim(r),
            _ => false,
        }
    }

    pub(super) fn if_expr(&mut self, cond: &Expr, then: &Block, els: Option<&Expr>) -> Ty {
        let tc = self.expr(cond);
        if self.infer.unify(&tc, &Ty::Bool).is_err() {
            self.errors.at(
                cond.loc,
                format!(
                    "an `if` condition must be a `bool`, this is {}",
                    self.infer.describe(&tc)
                ),
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

    pub(super) fn for_loop(
        &mut self,
        e: &Expr,
        var: Option<&Name>,
        start: &Expr,
        end: &Expr,
        inclusive: bool,
        body: &Block,
    ) {
        let ts = self.expr(start);
        let te = self.expr(end);
        let mut t = ts.clone();
        if self.infer.unify(&ts, &te).is_err()
            || !(self.infer.is_int(&ts) || self.infer.is_error(&ts))
        {
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
        let mut bound_reported = false;
        for k in 0..2 {
            let dim = self.dims.eval_dim(k);
            match (self.const_int(start, dim), self.const_int(end, dim)) {
                (Some(lo), Some(hi)) => {
                    let (lo, hi) = (lo as i128, hi as i128);
                    let hi_incl = if inclusive { hi } else { hi - 1 };
                    trips[k] = (hi_incl - lo + 1).clamp(0, u64::MAX as i128) as u64;
                    if hi_incl >= lo {
                        ranges[k] = Some((lo as i64, hi_incl as i64));
                    }
                    // C's `i <= hi` never fails for the largest `int`.
                    if inclusive && hi >= i32::MAX as i128 && !bound_reported {
                        bound_reported = true;
                        self.errors.at(
                            end.loc,
                            format!(
                                "this loop runs to {hi}, the largest `i32`: its OpenCL counter \
                                 (`int`) would overflow after the last iteration; end the range \
                                 lower"
                            ),
                        );
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

/// The error for a math constant written other than `std::f64::consts::NAME`.
fn math_const_message(written: &str, name: &str) -> String {
    format!(
        "write `std::f64::consts::{name}` (or `core::f64::consts::{name}`): the macro \
         recognizes math constants by their full path, and `use` declarations are not visible \
         to it; `{written}` is not a parameter, local variable or local constant"
    )
}
