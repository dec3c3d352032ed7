//! Statements: `let`, `const`, assignments (scalar, element, whole array,
//! compound), `if`/`else`, `for` over constant ranges and helper calls; and
//! the final statements that make every output depend on the body.

use super::expr::len_expr;
use super::{Ctx, Gen, Var};
use crate::program::*;

/// Expression depth of generated statements.
const DEPTH: usize = 3;

impl Gen {
    /// A block; with a tail of type `tail` if given.
    pub(crate) fn block(&mut self, c: &mut Ctx, tail: Option<Ty>) -> Block {
        c.push();
        let mut stmts = Vec::new();
        // Local constants first, sometimes.
        if self.chance(0.2) {
            let name = format!("K{}", self.below(100));
            if self.chance(0.5) {
                let value = Expr::bin(
                    "*",
                    Expr::Float(0.5),
                    Expr::Float(*self.pick(&[2.0, 3.0, 0.1])),
                    true,
                );
                stmts.push(Stmt::Const {
                    name: name.clone(),
                    ty: Ty::Real,
                    value,
                });
                c.add(&name, Ty::Real, false);
            } else {
                let n = 1 + self.below(3) as u64;
                stmts.push(Stmt::Const {
                    name: name.clone(),
                    ty: Ty::Usize,
                    value: Expr::bin("+", Expr::usize(n), Expr::usize(1), false),
                });
                c.add(&name, Ty::Usize, false);
                c.vars.last_mut().expect("const").range = Some((n + 1, Len::N(n + 2)));
            }
        }
        let n = 1 + self.below(4).min(c.budget);
        for _ in 0..n {
            if c.budget == 0 {
                break;
            }
            c.budget -= 1;
            stmts.extend(self.stmt(c));
        }
        let tail = tail.map(|t| Box::new(self.value(c, &t, DEPTH)));
        c.pop();
        Block { stmts, tail }
    }

    /// One statement (or a few: a call's arrays are declared before it).
    pub(crate) fn stmt(&mut self, c: &mut Ctx) -> Vec<Stmt> {
        match self.below(100) {
            0..=29 => self.let_stmt(c),
            30..=54 => self.assign(c),
            55..=64 => {
                let cond = self.boolean(c, 2);
                let then = self.block(c, None);
                let els = if self.chance(0.6) {
                    Some(self.block(c, None))
                } else {
                    None
                };
                vec![Stmt::If { cond, then, els }]
            }
            65..=79 if c.loops < 3 => self.for_loop(c),
            80..=89 => match self.call(c, false, 2) {
                Some(Expr::Block(b)) => {
                    // The call's arrays, now in this block's scope: they
                    // shadow what they are named after (a reserved word
                    // may be the name of a variable in scope).
                    for s in &b.stmts {
                        if let Stmt::Let {
                            name,
                            mutable,
                            ty: Some(ty),
                            ..
                        } = s
                        {
                            c.add(name, ty.clone(), *mutable);
                        }
                    }
                    let mut out = b.stmts;
                    out.extend(b.tail.map(|t| Stmt::Expr(*t)));
                    out
                }
                Some(call) => vec![Stmt::Expr(call)],
                None => self.let_stmt(c),
            },
            _ => self.assign(c),
        }
    }

    fn let_stmt(&mut self, c: &mut Ctx) -> Vec<Stmt> {
        let name = self.name();
        let mutable = self.chance(0.5);
        let ty = match self.below(10) {
            0..=4 => Ty::Real,
            5 => Ty::Usize,
            6 => Ty::I32,
            7 => Ty::Bool,
            _ => {
                let len = match (c.dims, self.below(3)) {
                    (Dims::Generic, 0) => Len::D,
                    (_, k) => Len::N(1 + k as u64),
                };
                if self.chance(0.3) {
                    Ty::arr(Ty::arr(Ty::Real, len), Len::N(2))
                } else {
                    Ty::arr(Ty::Real, len)
                }
            }
        };
        let init = self.value(c, &ty, DEPTH);
        // Floats (and arrays of them) are annotated, so that methods may be
        // called on them.
        let annotate = !matches!(ty, Ty::Usize | Ty::I32 | Ty::Bool) || self.chance(0.5);
        let stmt = Stmt::Let {
            name: name.clone(),
            mutable,
            ty: annotate.then(|| ty.clone()),
            init,
        };
        c.add(&name, ty, mutable);
        vec![stmt]
    }

    /// An assignment to a writable scalar, element or array.
    fn assign(&mut self, c: &mut Ctx) -> Vec<Stmt> {
        let targets: Vec<Var> = c
            .visible()
            .into_iter()
            .filter(|v| c.can_write(v) && (*v.ty.scalar() == Ty::Real || v.ty.is_int()))
            .cloned()
            .collect();
        if targets.is_empty() {
            return self.let_stmt(c);
        }
        let v = targets[self.below(targets.len())].clone();
        if v.ty.is_int() {
            // Integers only grow by one: no overflow.
            return vec![Stmt::Assign {
                place: Expr::var(&v.name),
                op: Some("+"),
                value: Expr::Int(1, None),
            }];
        }
        // A whole row or array, sometimes.
        if let Ty::Arr(elem, len) = &v.ty
            && self.chance(0.2)
        {
            let (place, t) = match (&**elem, v.by_ref) {
                (Ty::Arr(..), _) => (
                    Expr::var(&v.name).index(self.index(c, *len)),
                    (**elem).clone(),
                ),
                (_, false) => (Expr::var(&v.name), v.ty.clone()),
                _ => (Expr::var(&v.name).index(self.index(c, *len)), Ty::Real),
            };
            let value = self.value(c, &t, DEPTH);
            return vec![Stmt::Assign {
                place,
                op: None,
                value,
            }];
        }
        let place = if matches!(v.ty, Ty::Arr(..)) {
            self.element(c, &v)
        } else {
            Expr::var(&v.name)
        };
        let op = match self.below(6) {
            0 => Some("+"),
            1 => Some("-"),
            2 => Some("*"),
            3 => Some("/"),
            _ => None,
        };
        let value = self.real(c, DEPTH);
        vec![Stmt::Assign { place, op, value }]
    }

    fn for_loop(&mut self, c: &mut Ctx) -> Vec<Stmt> {
        let var = self.name();
        let consts: Vec<Var> = c
            .visible()
            .into_iter()
            .filter(|v| {
                v.ty == Ty::Usize && v.range.is_some() && !v.writable && v.name.starts_with('K')
            })
            .cloned()
            .collect();
        let (lo, hi, inclusive, range) = match self.below(6) {
            0 if c.generic() => (Expr::usize(0), len_expr(c.dims, Len::D), false, (0, Len::D)),
            1 if c.generic() => (Expr::usize(1), len_expr(c.dims, Len::D), false, (1, Len::D)),
            2 => (Expr::usize(0), Expr::usize(1), true, (0, Len::N(2))),
            3 if !consts.is_empty() => {
                let k = &consts[0];
                let n = k.range.expect("const").0;
                (Expr::usize(0), Expr::var(&k.name), false, (0, Len::N(n)))
            }
            4 => {
                // An `i32` loop: its variable is not an index.
                let n = 1 + self.below(3) as u64;
                let body = self.loop_body(c, &var, Ty::I32, None);
                return vec![Stmt::For {
                    var,
                    lo: Expr::Int(0, Some("i32")),
                    hi: Expr::Int(n, None),
                    inclusive: false,
                    body,
                }];
            }
            _ => {
                let n = 2 + self.below(2) as u64;
                (Expr::usize(0), Expr::usize(n), false, (0, Len::N(n)))
            }
        };
        let body = self.loop_body(c, &var, Ty::Usize, Some(range));
        vec![Stmt::For {
            var,
            lo,
            hi,
            inclusive,
            body,
        }]
    }

    fn loop_body(&mut self, c: &mut Ctx, var: &str, t: Ty, range: Option<(u64, Len)>) -> Block {
        c.push();
        c.add(var, t, false);
        c.vars.last_mut().expect("loop variable").range = range;
        c.loops += 1;
        let b = self.block(c, None);
        c.loops -= 1;
        c.pop();
        b
    }

    /// `f0[c] += …`, `f1[c][d] += …`: every output entry reads the body's
    /// variables at the end.
    pub(crate) fn finals(&mut self, c: &mut Ctx, params: &[(Role, Ty)]) -> Vec<Stmt> {
        let mut out = Vec::new();
        for (r, t) in params {
            if !matches!(r, Role::F0 | Role::F1) {
                continue;
            }
            let v = Var {
                name: r.name().to_string(),
                ty: t.clone(),
                writable: true,
                by_ref: true,
                range: None,
            };
            for _ in 0..2 {
                let place = self.element(c, &v);
                let value = self.real(c, 2);
                out.push(Stmt::Assign {
                    place,
                    op: Some("+"),
                    value,
                });
            }
        }
        out
    }
}
