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
//! counts the helper's own flops, read from its `FLOPS` constant when the
//! caller's `PointwiseInfo` is built.

use crate::ast::*;
use crate::check::{Checked, Res, Ty};
use proc_macro2::TokenStream;
use quote::quote;

/// A flop count that may depend on helpers' counts.
#[derive(Clone, Debug, PartialEq)]
pub enum Flops {
    Const(u64),
    /// The flops of declared helper `i`.
    Helper(usize),
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

    /// A constant Rust expression for the count; `helper_flops(i)` names the
    /// helper's count.
    pub fn to_tokens(&self, helper_flops: &dyn Fn(usize) -> TokenStream) -> TokenStream {
        match self {
            Flops::Const(n) => quote!(#n),
            Flops::Helper(i) => helper_flops(*i),
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
        let t = g.to_tokens(&|_| quote!(h::FLOPS[0])).to_string();
        assert!(t.contains("h :: FLOPS [0]"), "{t}");
    }
}
