//! Activity analysis: which variables carry derivatives.
//!
//! A variable is *active* when its value may depend on the seeds (`u`,
//! `∇u` or `u_t` in a physics — one of them, or `u_t` alone for the
//! Jacobian with respect to `u_t`; never `n` or `t` — every real parameter
//! in a helper). Only real
//! variables (scalars and arrays of reals) can be active; integers and
//! booleans are passive, including those computed from active reals (a
//! cast or a comparison has derivative zero where it is differentiable).
//! The analysis is flow-insensitive (a variable is active for the whole
//! function) and iterates to a fixed point; every write to an active
//! variable then writes its tangent, so a tangent is always defined where
//! its variable is.

use crate::ir::*;

/// Whether the real value of `e` may depend on an active variable.
pub fn expr_active(e: &Expr, active: &[bool]) -> bool {
    match e {
        Expr::Read(p) => active[p.var],
        Expr::Neg(x, Scalar::Real) => expr_active(x, active),
        Expr::Bin(op, a, b, Scalar::Real) if op.is_arithmetic() => {
            expr_active(a, active) || expr_active(b, active)
        }
        Expr::Math(_, args) => args.iter().any(|a| expr_active(a, active)),
        Expr::Select(_, a, b) => expr_active(a, active) || expr_active(b, active),
        _ => false,
    }
}

/// Whether `e` (of any type) reads an active variable: a condition, index
/// or integer that depends on the seeds.
pub fn reads_active(e: &Expr, active: &[bool]) -> bool {
    let mut any = false;
    e.places(&mut |p| any |= active[p.var]);
    any
}

/// Whether a variable can be active (it holds reals).
pub fn real(func: &Func, v: VarId) -> bool {
    elem_scalar(&func.vars[v].ty) == Scalar::Real
}

/// The active variables of `func` when `seeds` are active.
pub fn active(func: &Func, seeds: &[VarId]) -> Vec<bool> {
    let mut active = vec![false; func.vars.len()];
    for &s in seeds {
        active[s] = true;
    }
    loop {
        let mut changed = false;
        let mut mark = |v: VarId, active: &mut Vec<bool>| {
            if !active[v] && real(func, v) {
                active[v] = true;
                changed = true;
            }
        };
        for s in &func.body {
            s.walk(&mut |s| match s {
                Stmt::Let { var, init: Some(e) } if expr_active(e, &active) => {
                    mark(*var, &mut active)
                }
                Stmt::Assign { place, value } if expr_active(value, &active) => {
                    mark(place.var, &mut active)
                }
                Stmt::Copy { dst, src, .. } if active[src.var] => mark(dst.var, &mut active),
                Stmt::Call { args, result, .. } => {
                    let inputs = args.iter().any(|a| match a {
                        Arg::Value(e) => expr_active(e, &active),
                        Arg::Array { place, .. } => active[place.var],
                    });
                    if inputs {
                        if let Some(r) = result {
                            mark(*r, &mut active);
                        }
                        for a in args {
                            if let Arg::Array {
                                place,
                                mutable: true,
                            } = a
                            {
                                mark(place.var, &mut active);
                            }
                        }
                    }
                }
                _ => {}
            });
        }
        if !changed {
            return active;
        }
    }
}
