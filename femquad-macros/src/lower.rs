//! Checked AST → [`crate::ir`]: side effects become statements in Rust's
//! evaluation order, expressions become pure.
//!
//! Rust evaluates operands left to right, the value of an assignment before
//! its place, an index after the array it indexes, and `[x; N]` once. The
//! lowering keeps that order with one rule: an operand is lowered into its
//! own list of statements; when a later operand needs statements (a block,
//! an `if` with statements, a helper call), every earlier operand whose
//! value could change is first stored in a temporary. Helper calls are
//! always statements (a helper may write through `&mut`), and array copies
//! get indices that are literals or variables (see [`Lower::stabilize`]).
//!
//! (Longer than most files: one lowering per construct of the subset, all
//! bound by the one ordering rule above; split, the rule would be spread
//! over several files.)

use crate::ast::{self, BinOp, Block, ExprKind, Function, Stmt as AStmt, UnOp};
use crate::check::{BindingKind, Checked, Kind, Len, Res, Role, Ty};
use crate::ir::*;
use std::collections::HashMap;

/// Lowers a checked function.
pub fn lower(f: &Function, c: &Checked) -> Func {
    let mut l = Lower {
        c,
        func: Func {
            vars: Vec::new(),
            params: Vec::new(),
            body: Vec::new(),
            ret: None,
        },
        out: Vec::new(),
        vars: HashMap::new(),
        temps: 0,
    };
    for &b in &c.params {
        let v = l.var(b);
        l.func.params.push(v);
    }
    match &c.kind {
        Kind::Physics(sig) => {
            // Declared outputs start at zero.
            for role in [Role::F0, Role::F1] {
                let has = if role == Role::F0 {
                    sig.has_f0
                } else {
                    sig.has_f1
                };
                let p = l
                    .func
                    .params
                    .iter()
                    .copied()
                    .find(|&v| l.func.vars[v].kind == VarKind::Role(role));
                if let (true, Some(v)) = (has, p) {
                    let ty = l.func.vars[v].ty.clone();
                    l.fill(Place::var(v), &ty, ConstArray::Scalar(Expr::Real(0.0)));
                }
            }
            l.unit_block(&f.body);
        }
        Kind::Helper(h) => {
            if h.returns_real {
                let v = l.value_block(&f.body);
                l.func.ret = Some(v);
            } else {
                l.unit_block(&f.body);
            }
        }
    }
    l.func.body = std::mem::take(&mut l.out);
    l.func
}

struct Lower<'a> {
    c: &'a Checked,
    func: Func,
    out: Vec<Stmt>,
    /// IR variable of each checker binding.
    vars: HashMap<usize, VarId>,
    temps: usize,
}

/// An argument being lowered.
enum Lowered {
    Value(Expr),
    Array(Place, bool),
}

fn strip(e: &ast::Expr) -> &ast::Expr {
    match &e.kind {
        ExprKind::Paren(inner) => strip(inner),
        _ => e,
    }
}

/// An array value whose entries are all literals: filled in place.
fn constant_array(e: &ast::Expr) -> bool {
    match &strip(e).kind {
        ExprKind::Array(xs) => xs.iter().all(constant_array),
        ExprKind::Repeat(x, _) => constant_array(x),
        ExprKind::Float { .. } | ExprKind::Int { .. } | ExprKind::Bool(_) => true,
        ExprKind::Unary(UnOp::Neg, x) => matches!(strip(x).kind, ExprKind::Float { .. }),
        _ => false,
    }
}

impl Lower<'_> {
    // ----- variables -----

    /// The IR variable of checker binding `b`.
    fn var(&mut self, b: usize) -> VarId {
        if let Some(v) = self.vars.get(&b) {
            return *v;
        }
        let binding = &self.c.bindings[b];
        let kind = match binding.kind {
            BindingKind::Param(Some(role)) => VarKind::Role(role),
            BindingKind::Param(None) => VarKind::Param,
            _ => VarKind::Local,
        };
        let v = self
            .func
            .add(binding.c.clone(), binding.ty.clone(), binding.mutable, kind);
        self.vars.insert(b, v);
        v
    }

    fn binding_var(&mut self, id: usize) -> Option<VarId> {
        match self.c.res.get(&id) {
            Some(Res::Binding(b)) => Some(self.var(*b)),
            _ => None,
        }
    }

    /// A fresh temporary (names starting with `pw_` are never the user's).
    fn temp(&mut self, ty: Ty, mutable: bool) -> VarId {
        self.temps += 1;
        let name = format!("pw_t{}", self.temps);
        self.func.add(name, ty, mutable, VarKind::Local)
    }

    fn ty(&self, e: &ast::Expr) -> Ty {
        self.c.ty(e.id).clone()
    }

    fn emit(&mut self, s: Stmt) {
        self.out.push(s);
    }

    /// Runs `f` with an empty statement list; returns the statements it emitted.
    fn capture<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> (Vec<Stmt>, R) {
        let saved = std::mem::take(&mut self.out);
        let r = f(self);
        (std::mem::replace(&mut self.out, saved), r)
    }

    // ----- stability and spills -----

    /// Whether `e` has the same value after any statement of the function:
    /// it reads only variables that are never assigned (and literals).
    fn stable(&self, e: &Expr) -> bool {
        let mut ok = true;
        e.places(&mut |p| ok &= !self.func.vars[p.var].mutable);
        ok
    }

    /// `e`, or a temporary holding its current value.
    fn spill(&mut self, e: Expr) -> Expr {
        if self.stable(&e) {
            return e;
        }
        let t = self.temp(self.func.expr_ty(&e), false);
        self.emit(Stmt::Let {
            var: t,
            init: Some(e),
        });
        Expr::read(t)
    }

    /// Indices that a copy loop cannot change: literals and variables stay,
    /// anything else is computed once into a temporary.
    fn stabilize(&mut self, mut p: Place) -> Place {
        for i in p.index.iter_mut() {
            let simple = i.is_literal()
                || matches!(i, Expr::Read(q) if q.index.is_empty() && !matches!(self.func.vars[q.var].ty, Ty::Array(..)));
            if !simple {
                let t = self.temp(self.func.expr_ty(i), false);
                let v = std::mem::replace(i, Expr::read(t));
                self.emit(Stmt::Let {
                    var: t,
                    init: Some(v),
                });
            }
        }
        p
    }

    /// Stores the current value of array place `src` in a temporary.
    fn snapshot(&mut self, src: Place) -> Place {
        let ty = self.func.place_ty(&src);
        let t = self.temp(ty.clone(), false);
        self.emit(Stmt::Let { var: t, init: None });
        let src = self.stabilize(src);
        self.emit(Stmt::Copy {
            dst: Place::var(t),
            src,
            ty,
        });
        Place::var(t)
    }

    /// Lowers `exprs` left to right (see the module documentation).
    fn ordered(&mut self, exprs: &[&ast::Expr]) -> Vec<Expr> {
        let mut done: Vec<Expr> = Vec::new();
        for x in exprs {
            let (pre, v) = self.capture(|s| s.value(x));
            if !pre.is_empty() {
                for d in done.iter_mut() {
                    *d = self.spill(d.clone());
                }
                self.out.extend(pre);
            }
            done.push(v);
        }
        done
    }

    // ----- blocks and statements -----

    fn stmts(&mut self, b: &Block) {
        // Local constants are visible in the whole block, as in Rust.
        for s in &b.stmts {
            if let AStmt::Const { id, value, .. } = s {
                let v = self.value(value);
                if let Some(var) = self.binding_var(*id) {
                    self.emit(Stmt::Let { var, init: Some(v) });
                }
            }
        }
        for s in &b.stmts {
            match s {
                AStmt::Let {
                    id,
                    init: Some(init),
                    ..
                } => self.let_stmt(*id, init),
                AStmt::Expr(e) => self.effect(e),
                _ => {}
            }
        }
    }

    fn unit_block(&mut self, b: &Block) {
        self.stmts(b);
        if let Some(t) = &b.tail {
            self.effect(t);
        }
    }

    fn value_block(&mut self, b: &Block) -> Expr {
        self.stmts(b);
        match &b.tail {
            Some(t) => self.value(t),
            None => Expr::Int(0, None),
        }
    }

    fn let_stmt(&mut self, id: usize, init: &ast::Expr) {
        let Some(var) = self.binding_var(id) else {
            self.value(init);
            return;
        };
        let ty = self.func.vars[var].ty.clone();
        if matches!(ty, Ty::Array(..)) {
            // Declared first, then filled (its initializer cannot see it).
            self.emit(Stmt::Let { var, init: None });
            self.store(Place::var(var), &ty, init);
        } else if let ExprKind::Call(_, args) = &strip(init).kind
            && matches!(self.c.res.get(&strip(init).id), Some(Res::Helper(_)))
        {
            // `let k = helper(…);`: the call declares `k`.
            self.call(strip(init), args, Some(var));
        } else {
            let v = self.value(init);
            self.emit(Stmt::Let { var, init: Some(v) });
        }
    }

    /// Lowers an expression evaluated for its effects only.
    fn effect(&mut self, e: &ast::Expr) {
        match &e.kind {
            ExprKind::Assign(place, value) => {
                if let t @ Ty::Array(..) = self.ty(place) {
                    self.assign_array(place, &t, value);
                } else {
                    let v = self.value(value);
                    let (pre, p) = self.capture(|s| s.place(place));
                    let v = if pre.is_empty() { v } else { self.spill(v) };
                    self.out.extend(pre);
                    self.emit(Stmt::Assign { place: p, value: v });
                }
            }
            ExprKind::CompoundAssign(op, place, value) => {
                // Primitive operands: the value first, then the place.
                let v = self.value(value);
                let (pre, p) = self.capture(|s| s.place(place));
                let v = if pre.is_empty() { v } else { self.spill(v) };
                self.out.extend(pre);
                let t = Scalar::of(&self.ty(place));
                let value = Expr::bin(*op, Expr::Read(p.clone()), v, t);
                self.emit(Stmt::Assign { place: p, value });
            }
            ExprKind::For {
                start,
                end,
                inclusive,
                body,
                ..
            } => {
                let lo = self.value(start);
                let hi = self.value(end);
                let var = match self.binding_var(e.id) {
                    Some(v) => v,
                    None => self.temp(Ty::Int(ast::IntKind::Usize), false),
                };
                let (body, ()) = self.capture(|s| s.unit_block(body));
                self.emit(Stmt::For {
                    var,
                    lo,
                    hi,
                    inclusive: *inclusive,
                    body,
                });
            }
            ExprKind::If(cond, then, els) => {
                let cond = self.value(cond);
                let (then, ()) = self.capture(|s| s.unit_block(then));
                let (els, ()) = match els {
                    Some(x) => self.capture(|s| s.effect(x)),
                    None => (Vec::new(), ()),
                };
                self.emit(Stmt::If { cond, then, els });
            }
            ExprKind::Block(b) => self.unit_block(b),
            ExprKind::Paren(inner) => self.effect(inner),
            ExprKind::Call(_, args) if matches!(self.c.res.get(&e.id), Some(Res::Helper(_))) => {
                self.call(e, args, None);
            }
            _ => {
                self.value(e);
            }
        }
    }

    // ----- arrays -----

    /// Writes the array value `value` (of type `ty`) into `dst`, which
    /// `value` does not read (a fresh variable or temporary).
    fn store(&mut self, dst: Place, ty: &Ty, value: &ast::Expr) {
        let v = strip(value);
        match &v.kind {
            _ if constant_array(v) => self.fill(dst, ty, v_expr_const(v)),
            ExprKind::Array(elems) => {
                let Ty::Array(elem, _) = ty else { return };
                for (i, x) in elems.iter().enumerate() {
                    let d = dst.at(Expr::Int(i as i64, Some(ast::IntKind::Usize)));
                    if matches!(**elem, Ty::Array(..)) {
                        self.store(d, elem, x);
                    } else {
                        let x = self.value(x);
                        self.emit(Stmt::Assign { place: d, value: x });
                    }
                }
            }
            ExprKind::Repeat(x, _) => {
                let Ty::Array(elem, len) = ty else { return };
                // `[x; N]` evaluates `x` once.
                if matches!(**elem, Ty::Array(..)) {
                    let t = self.temp((**elem).clone(), false);
                    self.emit(Stmt::Let { var: t, init: None });
                    self.store(Place::var(t), elem, x);
                    self.each(*len, |s, i| {
                        s.emit(Stmt::Copy {
                            dst: dst.at(i),
                            src: Place::var(t),
                            ty: (**elem).clone(),
                        })
                    });
                } else {
                    let x = self.value(x);
                    let x = if x.is_literal() {
                        x
                    } else {
                        self.spill_always(x)
                    };
                    self.each(*len, |s, i| {
                        s.emit(Stmt::Assign {
                            place: dst.at(i),
                            value: x.clone(),
                        })
                    });
                }
            }
            ExprKind::Block(b) => {
                self.stmts(b);
                if let Some(t) = &b.tail {
                    self.store(dst, ty, t);
                }
            }
            _ => {
                let src = self.array_place(v);
                let src = self.stabilize(src);
                self.emit(Stmt::Copy {
                    dst,
                    src,
                    ty: ty.clone(),
                });
            }
        }
    }

    /// A temporary holding `e` (even if `e` is stable: used where `e` is
    /// read in a loop that may write what `e` reads).
    fn spill_always(&mut self, e: Expr) -> Expr {
        let t = self.temp(self.func.expr_ty(&e), false);
        self.emit(Stmt::Let {
            var: t,
            init: Some(e),
        });
        Expr::read(t)
    }

    /// `for i in 0..len { f(i) }` with a fresh loop variable.
    fn each(&mut self, len: Len, f: impl FnOnce(&mut Self, Expr)) {
        if len == Len::Lit(1) {
            return f(self, Expr::Int(0, Some(ast::IntKind::Usize)));
        }
        let i = self.temp(Ty::Int(ast::IntKind::Usize), false);
        let hi = len_expr(len);
        let (body, ()) = self.capture(|s| f(s, Expr::read(i)));
        self.emit(Stmt::For {
            var: i,
            lo: Expr::Int(0, Some(ast::IntKind::Usize)),
            hi,
            inclusive: false,
            body,
        });
    }

    /// Fills `dst` (type `ty`) with a constant array value or scalar `c`.
    fn fill(&mut self, dst: Place, ty: &Ty, c: ConstArray) {
        match (ty, c) {
            (Ty::Array(elem, len), ConstArray::Repeat(x)) => {
                let elem = (**elem).clone();
                self.each(*len, |s, i| s.fill(dst.at(i), &elem, *x));
            }
            (Ty::Array(elem, _), ConstArray::List(xs)) => {
                for (i, x) in xs.into_iter().enumerate() {
                    let d = dst.at(Expr::Int(i as i64, Some(ast::IntKind::Usize)));
                    self.fill(d, elem, x);
                }
            }
            (Ty::Array(elem, len), ConstArray::Scalar(x)) => {
                let elem = (**elem).clone();
                self.each(*len, |s, i| s.fill(dst.at(i), &elem, ConstArray::Scalar(x)));
            }
            (t, ConstArray::Scalar(x)) => {
                // An integer literal takes the type of the entry it fills.
                let value = match (x, t) {
                    (Expr::Int(v, None), Ty::Int(k)) => Expr::Int(v, Some(*k)),
                    (x, _) => x,
                };
                self.emit(Stmt::Assign { place: dst, value })
            }
            _ => {}
        }
    }

    /// `place = value` for arrays.
    fn assign_array(&mut self, place: &ast::Expr, ty: &Ty, value: &ast::Expr) {
        let v = strip(value);
        if constant_array(v) {
            let p = self.place(place);
            let p = self.stabilize(p);
            self.fill(p, ty, v_expr_const(v));
            return;
        }
        if let (ExprKind::Repeat(x, _), Ty::Array(elem, len)) = (&v.kind, ty)
            && !matches!(**elem, Ty::Array(..))
        {
            // `[x; N]`: `x` once, then the place, then the entries.
            let x = self.value(x);
            let x = if x.is_literal() {
                x
            } else {
                self.spill_always(x)
            };
            let p = self.place(place);
            let p = self.stabilize(p);
            self.each(*len, |s, i| {
                s.emit(Stmt::Assign {
                    place: p.at(i),
                    value: x.clone(),
                })
            });
            return;
        }
        let src = match &v.kind {
            ExprKind::Array(_) | ExprKind::Repeat(..) | ExprKind::Block(_) => {
                // Built first: the value may read the destination.
                let t = self.temp(ty.clone(), false);
                let (pre, ()) = self.capture(|s| s.store(Place::var(t), ty, v));
                self.emit(Stmt::Let { var: t, init: None });
                self.out.extend(pre);
                Place::var(t)
            }
            _ => self.array_place(v),
        };
        let (pre, p) = self.capture(|s| s.place(place));
        // The value is copied before the place's side effects, as in Rust.
        let src = if pre.is_empty() {
            src
        } else {
            self.snapshot(src)
        };
        self.out.extend(pre);
        let p = self.stabilize(p);
        let src = self.stabilize(src);
        self.emit(Stmt::Copy {
            dst: p,
            src,
            ty: ty.clone(),
        });
    }

    /// The place of an array-valued expression (a variable, an element, or
    /// a literal stored in a temporary).
    fn array_place(&mut self, e: &ast::Expr) -> Place {
        let e = strip(e);
        match &e.kind {
            ExprKind::Path(_) | ExprKind::Index(..) => self.place(e),
            ExprKind::Block(b) => {
                self.stmts(b);
                match &b.tail {
                    Some(t) => self.array_place(t),
                    None => Place::var(0),
                }
            }
            _ => {
                let ty = self.ty(e);
                let t = self.temp(ty.clone(), false);
                let (pre, ()) = self.capture(|s| s.store(Place::var(t), &ty, e));
                self.emit(Stmt::Let { var: t, init: None });
                self.out.extend(pre);
                Place::var(t)
            }
        }
    }

    /// The place `e` denotes: its array (evaluated first), then its
    /// indices, left to right.
    fn place(&mut self, e: &ast::Expr) -> Place {
        let mut indices = Vec::new();
        let mut cur = strip(e);
        while let ExprKind::Index(base, index) = &cur.kind {
            indices.push(&**index);
            cur = strip(base);
        }
        indices.reverse();
        let mut root = match &cur.kind {
            ExprKind::Path(_) => match self.binding_var(cur.id) {
                Some(v) => Place::var(v),
                None => Place::var(0),
            },
            _ => self.array_place(cur),
        };
        let mut done: Vec<Expr> = Vec::new();
        for x in indices {
            let (pre, v) = self.capture(|s| s.value(x));
            if !pre.is_empty() {
                for d in done.iter_mut() {
                    *d = self.spill(d.clone());
                }
                self.out.extend(pre);
            }
            done.push(v);
        }
        root.index.extend(done);
        root
    }

    // ----- values -----

    /// Lowers an expression with a scalar value (or `()`).
    fn value(&mut self, e: &ast::Expr) -> Expr {
        match &e.kind {
            ExprKind::Float { value, .. } => Expr::Real(*value),
            ExprKind::Int { value, .. } => {
                let k = match self.ty(e) {
                    Ty::Int(k) => Some(k),
                    _ => None,
                };
                Expr::Int(*value as i64, k)
            }
            ExprKind::Bool(b) => Expr::Bool(*b),
            ExprKind::Path(_) => match self.c.res.get(&e.id) {
                Some(Res::MathConst(v)) => Expr::Real(*v),
                Some(Res::Binding(b)) if self.c.bindings[*b].kind == BindingKind::Dim => Expr::Dim,
                Some(Res::Binding(b)) => Expr::read(self.var(*b)),
                _ => Expr::Int(0, None),
            },
            ExprKind::Paren(inner) => self.value(inner),
            ExprKind::Unary(UnOp::Neg, inner) => match &strip(inner).kind {
                ExprKind::Float { value, .. } => Expr::Real(-value),
                _ => {
                    let t = Scalar::of(&self.ty(e));
                    Expr::Neg(Box::new(self.value(inner)), t)
                }
            },
            ExprKind::Unary(UnOp::Not, inner) => Expr::Not(Box::new(self.value(inner))),
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => self.short_circuit(*op, l, r),
            ExprKind::Binary(op, l, r) => {
                let t = Scalar::of(&self.ty(l));
                let mut vs = self.ordered(&[l, r]);
                let b = vs.pop().expect("two");
                let a = vs.pop().expect("two");
                Expr::bin(*op, a, b, t)
            }
            ExprKind::Cast(inner, _) => {
                let from = Scalar::of(&self.ty(inner));
                let to = Scalar::of(&self.ty(e));
                let v = self.value(inner);
                if from == to {
                    v
                } else {
                    Expr::Cast(Box::new(v), from, to)
                }
            }
            ExprKind::Index(..) => Expr::Read(self.place(e)),
            ExprKind::Call(_, args) => match self.c.res.get(&e.id) {
                Some(Res::Math(f)) => {
                    let args: Vec<&ast::Expr> = args.iter().collect();
                    Expr::Math(f, self.ordered(&args))
                }
                Some(Res::Helper(_)) => {
                    let t = self.temp(Ty::Real, false);
                    self.call(e, args, Some(t));
                    Expr::read(t)
                }
                _ => Expr::Int(0, None),
            },
            ExprKind::MethodCall { receiver, args, .. } => {
                let Some(Res::Math(f)) = self.c.res.get(&e.id) else {
                    return Expr::Int(0, None);
                };
                let mut all = vec![&**receiver];
                all.extend(args.iter());
                Expr::Math(f, self.ordered(&all))
            }
            ExprKind::If(cond, then, els) => self.if_value(e, cond, then, els.as_deref()),
            ExprKind::Block(b) => self.value_block(b),
            ExprKind::Assign(..) | ExprKind::CompoundAssign(..) | ExprKind::For { .. } => {
                self.effect(e);
                Expr::Int(0, None)
            }
            ExprKind::Ref(_, inner) => self.value(inner),
            ExprKind::Array(_) | ExprKind::Repeat(..) | ExprKind::Unsupported(_) => {
                Expr::Int(0, None)
            }
        }
    }

    fn short_circuit(&mut self, op: BinOp, l: &ast::Expr, r: &ast::Expr) -> Expr {
        let a = self.value(l);
        let (pre, b) = self.capture(|s| s.value(r));
        if pre.is_empty() {
            return Expr::bin(op, a, b, Scalar::Bool);
        }
        // The right side's statements run only if needed.
        let t = self.temp(Ty::Bool, true);
        self.emit(Stmt::Let {
            var: t,
            init: Some(a),
        });
        let test = match op {
            BinOp::And => Expr::read(t),
            _ => Expr::Not(Box::new(Expr::read(t))),
        };
        let mut then = pre;
        then.push(Stmt::Assign {
            place: Place::var(t),
            value: b,
        });
        self.emit(Stmt::If {
            cond: test,
            then,
            els: Vec::new(),
        });
        Expr::read(t)
    }

    fn if_value(
        &mut self,
        e: &ast::Expr,
        cond: &ast::Expr,
        then: &Block,
        els: Option<&ast::Expr>,
    ) -> Expr {
        let c = self.value(cond);
        let (then_pre, tv) = self.capture(|s| s.value_block(then));
        let (else_pre, ev) = match els {
            Some(x) => self.capture(|s| s.value(x)),
            None => (Vec::new(), Expr::Int(0, None)),
        };
        if then_pre.is_empty() && else_pre.is_empty() {
            return Expr::Select(Box::new(c), Box::new(tv), Box::new(ev));
        }
        let t = self.temp(self.ty(e), false);
        self.emit(Stmt::Let { var: t, init: None });
        let mut then = then_pre;
        then.push(Stmt::Assign {
            place: Place::var(t),
            value: tv,
        });
        let mut els = else_pre;
        els.push(Stmt::Assign {
            place: Place::var(t),
            value: ev,
        });
        self.emit(Stmt::If { cond: c, then, els });
        Expr::read(t)
    }

    /// A helper call: arguments left to right, then the call, as a
    /// statement declaring `result` (if any) with the returned value.
    fn call(&mut self, e: &ast::Expr, args: &[ast::Expr], result: Option<VarId>) {
        let Some(Res::Helper(h)) = self.c.res.get(&e.id).copied() else {
            return;
        };
        let mut done: Vec<Lowered> = Vec::new();
        for a in args {
            let (pre, v) = self.capture(|s| s.arg(a));
            if !pre.is_empty() {
                for d in done.iter_mut() {
                    match d {
                        Lowered::Value(x) => *x = self.spill(x.clone()),
                        Lowered::Array(p, _) => *p = self.stabilize_unstable(p.clone()),
                    }
                }
                self.out.extend(pre);
            }
            done.push(v);
        }
        // A `&mut` argument borrows its array until the call, and the
        // emitted `&mut` is no two-phase borrow: later arguments (which may
        // read a reference passed on by name, `h(q, q[0])`, two-phase in
        // Rust) are evaluated before it, into temporaries — the same values.
        if let Some(m) = done
            .iter()
            .position(|d| matches!(d, Lowered::Array(_, true)))
        {
            for d in done.iter_mut().skip(m + 1) {
                match d {
                    Lowered::Value(x) => *x = self.spill(x.clone()),
                    Lowered::Array(p, _) => *p = self.stabilize_unstable(p.clone()),
                }
            }
        }
        let args = done
            .into_iter()
            .map(|d| match d {
                Lowered::Value(x) => Arg::Value(x),
                Lowered::Array(place, mutable) => Arg::Array { place, mutable },
            })
            .collect();
        self.emit(Stmt::Call {
            callee: Callee::Helper(h),
            args,
            result,
        });
    }

    /// Spills the indices of `p` whose value could change.
    fn stabilize_unstable(&mut self, mut p: Place) -> Place {
        for i in p.index.iter_mut() {
            *i = self.spill(i.clone());
        }
        p
    }

    fn arg(&mut self, a: &ast::Expr) -> Lowered {
        match &a.kind {
            ExprKind::Ref(mutable, inner) => {
                let literal =
                    matches!(strip(inner).kind, ExprKind::Array(_) | ExprKind::Repeat(..));
                if literal {
                    Lowered::Array(self.array_place(inner), false)
                } else {
                    Lowered::Array(self.place(inner), *mutable)
                }
            }
            // An array parameter passed by name (it is a reference already).
            _ if matches!(self.ty(a), Ty::Array(..)) => {
                let p = self.place(a);
                let mutable = self.func.vars[p.var].mutable;
                Lowered::Array(p, mutable)
            }
            _ => Lowered::Value(self.value(a)),
        }
    }
}

/// A constant array value.
enum ConstArray {
    Scalar(Expr),
    List(Vec<ConstArray>),
    Repeat(Box<ConstArray>),
}

fn v_expr_const(e: &ast::Expr) -> ConstArray {
    let e = strip(e);
    match &e.kind {
        ExprKind::Array(xs) => ConstArray::List(xs.iter().map(v_expr_const).collect()),
        ExprKind::Repeat(x, _) => ConstArray::Repeat(Box::new(v_expr_const(x))),
        ExprKind::Float { value, .. } => ConstArray::Scalar(Expr::Real(*value)),
        ExprKind::Int { value, .. } => ConstArray::Scalar(Expr::Int(*value as i64, None)),
        ExprKind::Bool(b) => ConstArray::Scalar(Expr::Bool(*b)),
        ExprKind::Unary(UnOp::Neg, x) => match &strip(x).kind {
            ExprKind::Float { value, .. } => ConstArray::Scalar(Expr::Real(-value)),
            _ => ConstArray::Scalar(Expr::Real(0.0)),
        },
        _ => ConstArray::Scalar(Expr::Real(0.0)),
    }
}
