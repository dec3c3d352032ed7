//! Linearity: whether the outputs of a function are affine in its seeds
//! (`u`, `∇u`, `u_t` of a physics; the active real parameters of a helper). This
//! is the one place that decides it, on the primal program and its
//! activity ([`super::activity`]).
//!
//! An active value (one that may depend on the seeds) may reach the outputs
//! only through affine operations: `+`, `−`, negation, a product with at
//! most one active factor, a division by a passive value, `mul_add` with at
//! most one active factor among its first two arguments, a copy, or a
//! helper call that is affine in its active arguments (recorded in
//! [`Linear::calls`], looked up in the helper's table when the crate is
//! compiled). Any other operation on an active value (a math function,
//! `%`, a cast) is not affine, and neither is any *control dependence* on
//! the seeds: an active value in a condition (`if`, an `if` expression, a
//! `min`/`max`/`abs` branch), in the index of a read or of a write, in a
//! loop bound or in an integer or boolean argument of a helper. Such a
//! function is piecewise: its derivative depends on the point even where
//! every piece is affine, so the kernels must not evaluate it at `u = 0`
//! (see `PointwiseInfo::linear`).

use super::Linear;
use super::activity::{expr_active, reads_active};
use crate::check::Ty;
use crate::ir::*;

/// The linearity of `func` when `active` variables carry derivatives.
pub fn linear(func: &Func, active: &[bool]) -> Linear {
    let mut c = Check {
        func,
        active,
        affine: true,
        calls: Vec::new(),
    };
    c.stmts(&func.body);
    if let Some(r) = &func.ret {
        c.value(r);
    }
    let mut calls = c.calls;
    calls.sort();
    calls.dedup();
    Linear {
        own: c.affine,
        calls,
    }
}

/// The walk: `affine` turns false at the first construct that is not.
struct Check<'a> {
    func: &'a Func,
    active: &'a [bool],
    affine: bool,
    calls: Vec<(usize, u64)>,
}

impl Check<'_> {
    fn act(&self, e: &Expr) -> bool {
        expr_active(e, self.active)
    }

    /// An expression that decides control or an address (a condition, an
    /// index, a loop bound, an integer or boolean value): it must not read
    /// an active variable.
    fn control(&mut self, e: &Expr) {
        if reads_active(e, self.active) {
            self.affine = false;
        }
    }

    fn place(&mut self, p: &Place) {
        for i in &p.index {
            self.control(i);
        }
    }

    fn require(&mut self, affine: bool) {
        self.affine &= affine;
    }

    /// A real value: affine in the active values it reads.
    fn value(&mut self, e: &Expr) {
        match e {
            Expr::Read(p) => self.place(p),
            Expr::Neg(x, Scalar::Real) => self.value(x),
            Expr::Bin(op, a, b, Scalar::Real) if op.is_arithmetic() => {
                use crate::ast::BinOp::*;
                self.value(a);
                self.value(b);
                let (da, db) = (self.act(a), self.act(b));
                self.require(match op {
                    Add | Sub => true,
                    Mul => !(da && db),
                    Div => !db,
                    _ => !(da || db),
                });
            }
            Expr::Select(c, a, b) => {
                self.control(c);
                self.value(a);
                self.value(b);
            }
            Expr::Math(f, args) => {
                args.iter().for_each(|a| self.value(a));
                let affine = if f.rust == "mul_add" {
                    !(self.act(&args[0]) && self.act(&args[1]))
                } else {
                    !args.iter().any(|a| self.act(a))
                };
                self.require(affine);
            }
            // Literals, integers, booleans, comparisons, casts.
            e => self.control(e),
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { init, .. } => {
                if let Some(e) = init {
                    self.value(e);
                }
            }
            Stmt::Assign { place, value } => {
                self.place(place);
                self.value(value);
            }
            Stmt::Copy { dst, src, .. } => {
                self.place(dst);
                self.place(src);
            }
            Stmt::If { cond, then, els } => {
                self.control(cond);
                self.stmts(then);
                self.stmts(els);
            }
            Stmt::For { lo, hi, body, .. } => {
                self.control(lo);
                self.control(hi);
                self.stmts(body);
            }
            Stmt::Call { callee, args, .. } => self.call(*callee, args),
        }
    }

    /// A helper call: its real arguments are values (bit `k` of the mask:
    /// the `k`-th real argument is active), the others control.
    fn call(&mut self, callee: Callee, args: &[Arg]) {
        let mut mask = 0u64;
        let mut k = 0;
        for a in args {
            let active = match a {
                Arg::Value(e) if self.func.expr_ty(e) == Ty::Real => {
                    self.value(e);
                    self.act(e)
                }
                Arg::Value(e) => {
                    self.control(e);
                    continue;
                }
                Arg::Array { place, .. } => {
                    self.place(place);
                    self.active[place.var]
                }
            };
            mask |= (active as u64) << k.min(63);
            k += 1;
        }
        if mask != 0
            && let Callee::Helper(h) = callee
        {
            self.calls.push((h, mask));
        }
    }
}
