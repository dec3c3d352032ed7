//! Flop count of one evaluation, for the performance model.
//!
//! Counts saturate at `u64::MAX` (a loop of huge constant trip count is
//! not an overflow of the macro or of the generated constant).
//!
//! Rules (also in the user guide): each floating-point `+ - * / %` and
//! negation counts 1 (negating a literal counts 0, it is a constant), each
//! math function call counts 1 (`mul_add` included), comparisons, integer
//! arithmetic, casts and copies count 0. A loop multiplies its body by its
//! trip count (with `D` = 2 or 3); an `if` counts its condition plus the
//! larger of its two branches; `&&`/`||` count both sides. A helper call
//! counts the helper's own flops, read from its `flops()` function when the
//! caller's `PointwiseInfo` is built.

use crate::ast::*;
use crate::check::{Checked, Res, Ty};
use crate::ir::{Arg, Callee, Expr as IExpr, Func, Scalar, Stmt as IStmt, VarId};
use proc_macro2::TokenStream;
use quote::quote;
use std::collections::HashMap;

/// A flop count that may depend on helpers' counts.
#[derive(Clone, Debug, PartialEq)]
pub enum Flops {
    Const(u64),
    /// The flops of declared helper `i`.
    Helper(usize),
    /// The flops of variant `k` of the tangent of declared helper `i`.
    Tangent(usize, usize),
    Add(Vec<Flops>),
    Mul(u64, Box<Flops>),
    Max(Box<Flops>, Box<Flops>),
}

impl Flops {
    fn add(parts: Vec<Flops>) -> Flops {
        let mut konst: u64 = 0;
        let mut rest = Vec::new();
        for p in parts {
            match p {
                Flops::Const(n) => konst = konst.saturating_add(n),
                Flops::Add(inner) => {
                    for q in inner {
                        match q {
                            Flops::Const(n) => konst = konst.saturating_add(n),
                            q => rest.push(q),
                        }
                    }
                }
                p => rest.push(p),
            }
        }
        if rest.is_empty() {
            return Flops::Const(konst);
        }
        if konst > 0 {
            rest.push(Flops::Const(konst));
        }
        if rest.len() == 1 {
            return rest.pop().expect("one");
        }
        Flops::Add(rest)
    }

    fn mul(n: u64, f: Flops) -> Flops {
        match f {
            Flops::Const(m) => Flops::Const(n.saturating_mul(m)),
            _ if n == 0 => Flops::Const(0),
            f if n == 1 => f,
            f => Flops::Mul(n, Box::new(f)),
        }
    }

    fn max(a: Flops, b: Flops) -> Flops {
        match (a, b) {
            (Flops::Const(x), Flops::Const(y)) => Flops::Const(x.max(y)),
            (Flops::Const(0), f) | (f, Flops::Const(0)) => f,
            (a, b) => Flops::Max(Box::new(a), Box::new(b)),
        }
    }

    /// A constant Rust expression for the count; `helper_flops(i, k)`
    /// names the count of helper `i` (of its tangent variant `k` if `Some`).
    pub fn to_tokens(
        &self,
        helper_flops: &dyn Fn(usize, Option<usize>) -> TokenStream,
    ) -> TokenStream {
        match self {
            Flops::Const(n) => quote!(#n),
            Flops::Helper(i) => helper_flops(*i, None),
            Flops::Tangent(i, k) => helper_flops(*i, Some(*k)),
            Flops::Add(parts) => {
                let parts = parts.iter().map(|p| p.to_tokens(helper_flops));
                quote!({ let s = 0u64; #(let s = u64::saturating_add(s, #parts);)* s })
            }
            Flops::Mul(n, f) => {
                let f = f.to_tokens(helper_flops);
                quote!(u64::saturating_mul(#n, #f))
            }
            Flops::Max(a, b) => {
                let (a, b) = (a.to_tokens(helper_flops), b.to_tokens(helper_flops));
                quote!({
                    let a: u64 = #a;
                    let b: u64 = #b;
                    if a > b { a } else { b }
                })
            }
        }
    }
}

/// Flops of the body for evaluation `k` (0: 2D, 1: 3D).
pub fn count(f: &Function, c: &Checked, k: usize) -> Flops {
    Counter { c, k }.block(&f.body)
}

/// Flops of a lowered function (the derivatives), with the same rules:
/// real `+ - * / %` and negation 1, a math function 1, an `if` or a
/// selection its condition and its larger branch, a loop its trip count
/// (with `D` = 2 or 3) times its body, a helper call the helper's (or its
/// tangent's) count.
pub fn count_ir(func: &Func, k: usize) -> Flops {
    let mut consts = HashMap::new();
    for s in &func.body {
        s.walk(&mut |s| {
            if let IStmt::Let { var, init: Some(e) } = s
                && matches!(func.vars[*var].ty, Ty::Int(_))
                && !func.vars[*var].mutable
            {
                consts.insert(*var, e.clone());
            }
        });
    }
    let dim = k as i64 + 2;
    IrCounter { consts, dim }.stmts(&func.body)
}

struct IrCounter {
    consts: HashMap<VarId, IExpr>,
    dim: i64,
}

impl IrCounter {
    fn value(&self, e: &IExpr) -> Option<i64> {
        match e {
            IExpr::Int(v, _) => Some(*v),
            IExpr::Dim => Some(self.dim),
            IExpr::Read(p) if p.index.is_empty() => self.value(self.consts.get(&p.var)?),
            IExpr::Cast(x, Scalar::Int(_), Scalar::Int(_)) => self.value(x),
            IExpr::Bin(op, a, b, Scalar::Int(_)) => {
                let (a, b) = (self.value(a)?, self.value(b)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::Div => a.checked_div(b),
                    BinOp::Rem => a.checked_rem(b),
                    _ => None,
                }
            }
            _ => None,
        }
    }

    fn stmts(&self, ss: &[IStmt]) -> Flops {
        Flops::add(ss.iter().map(|s| self.stmt(s)).collect())
    }

    fn stmt(&self, s: &IStmt) -> Flops {
        match s {
            IStmt::Let { init: Some(e), .. } => self.expr(e),
            IStmt::Let { .. } | IStmt::Copy { .. } => Flops::Const(0),
            IStmt::Assign { value, .. } => self.expr(value),
            IStmt::If { cond, then, els } => Flops::add(vec![
                self.expr(cond),
                Flops::max(self.stmts(then), self.stmts(els)),
            ]),
            IStmt::For {
                lo,
                hi,
                inclusive,
                body,
                ..
            } => {
                let trips = match (self.value(lo), self.value(hi)) {
                    (Some(lo), Some(hi)) => (hi - lo + i64::from(*inclusive)).max(0) as u64,
                    _ => 0,
                };
                Flops::mul(trips, self.stmts(body))
            }
            IStmt::Call { callee, args, .. } => {
                let own = match callee {
                    Callee::Helper(i) => Flops::Helper(*i),
                    Callee::HelperTangent(i, k) => Flops::Tangent(*i, *k),
                };
                let mut parts = vec![own];
                for a in args {
                    if let Arg::Value(e) = a {
                        parts.push(self.expr(e));
                    }
                }
                Flops::add(parts)
            }
        }
    }

    fn expr(&self, e: &IExpr) -> Flops {
        match e {
            IExpr::Neg(x, t) => Flops::add(vec![
                Flops::Const(u64::from(*t == Scalar::Real)),
                self.expr(x),
            ]),
            IExpr::Not(x) | IExpr::Cast(x, ..) => self.expr(x),
            IExpr::Bin(op, a, b, t) => Flops::add(vec![
                Flops::Const(u64::from(op.is_arithmetic() && *t == Scalar::Real)),
                self.expr(a),
                self.expr(b),
            ]),
            IExpr::Math(_, args) => {
                let mut parts = vec![Flops::Const(1)];
                parts.extend(args.iter().map(|a| self.expr(a)));
                Flops::add(parts)
            }
            IExpr::Select(c, a, b) => {
                Flops::add(vec![self.expr(c), Flops::max(self.expr(a), self.expr(b))])
            }
            _ => Flops::Const(0),
        }
    }
}

struct Counter<'a> {
    c: &'a Checked,
    k: usize,
}

impl Counter<'_> {
    fn block(&self, b: &Block) -> Flops {
        let mut parts = Vec::new();
        for s in &b.stmts {
            match s {
                Stmt::Let { init: Some(e), .. } | Stmt::Expr(e) => parts.push(self.expr(e)),
                _ => {}
            }
        }
        if let Some(t) = &b.tail {
            parts.push(self.expr(t));
        }
        Flops::add(parts)
    }

    fn is_real(&self, e: &Expr) -> bool {
        matches!(self.c.ty(e.id), Ty::Real)
    }

    fn all(&self, es: &[Expr]) -> Flops {
        Flops::add(es.iter().map(|e| self.expr(e)).collect())
    }

    fn expr(&self, e: &Expr) -> Flops {
        match &e.kind {
            ExprKind::Float { .. }
            | ExprKind::Int { .. }
            | ExprKind::Bool(_)
            | ExprKind::Path(_) => Flops::Const(0),
            ExprKind::Unsupported(_) => Flops::Const(0),
            ExprKind::Paren(x) | ExprKind::Cast(x, _) | ExprKind::Ref(_, x) => self.expr(x),
            ExprKind::Unary(op, x) => {
                let literal = matches!(x.kind, ExprKind::Float { .. });
                let own = u64::from(*op == UnOp::Neg && self.is_real(e) && !literal);
                Flops::add(vec![Flops::Const(own), self.expr(x)])
            }
            ExprKind::Binary(op, l, r) => {
                let own = u64::from(op.is_arithmetic() && self.is_real(e));
                Flops::add(vec![Flops::Const(own), self.expr(l), self.expr(r)])
            }
            ExprKind::Assign(p, v) => Flops::add(vec![self.expr(p), self.expr(v)]),
            ExprKind::CompoundAssign(_, p, v) => {
                let own = u64::from(self.is_real(p));
                Flops::add(vec![Flops::Const(own), self.expr(p), self.expr(v)])
            }
            ExprKind::Index(b, i) => Flops::add(vec![self.expr(b), self.expr(i)]),
            ExprKind::Call(_, args) => {
                let own = match self.c.res.get(&e.id) {
                    Some(Res::Math(_)) => Flops::Const(1),
                    Some(Res::Helper(i)) => Flops::Helper(*i),
                    _ => Flops::Const(0),
                };
                Flops::add(vec![own, self.all(args)])
            }
            ExprKind::MethodCall { receiver, args, .. } => {
                Flops::add(vec![Flops::Const(1), self.expr(receiver), self.all(args)])
            }
            ExprKind::If(cond, then, els) => {
                let t = self.block(then);
                let e = els.as_ref().map_or(Flops::Const(0), |x| self.expr(x));
                Flops::add(vec![self.expr(cond), Flops::max(t, e)])
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::For { body, .. } => {
                let trips = self.c.trips.get(&e.id).map_or(0, |t| t[self.k]);
                Flops::mul(trips, self.block(body))
            }
            ExprKind::Array(es) => self.all(es),
            ExprKind::Repeat(x, _) => self.expr(x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn algebra_folds_constants() {
        let f = Flops::add(vec![Flops::Const(2), Flops::mul(3, Flops::Const(4))]);
        assert_eq!(f, Flops::Const(14));
        let g = Flops::add(vec![Flops::Const(1), Flops::mul(2, Flops::Helper(0))]);
        assert_eq!(
            g,
            Flops::Add(vec![
                Flops::Mul(2, Box::new(Flops::Helper(0))),
                Flops::Const(1)
            ])
        );
        assert_eq!(
            Flops::max(Flops::Const(3), Flops::Const(5)),
            Flops::Const(5)
        );
        let t = g.to_tokens(&|_, _| quote!(h::flops()[0])).to_string();
        assert!(t.contains("h :: flops () [0]"), "{t}");
    }
}
