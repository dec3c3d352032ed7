//! Dead-code elimination for derivative programs: a tangent needs the
//! primal values its tangents read, not the primal outputs themselves (the
//! tangent of a linear physics needs no primal value at all).
//!
//! A backward liveness analysis over the structured statements: the
//! outputs (mutable array parameters) are live throughout; a statement is
//! kept when it writes a variable live after it; a declaration, or an
//! assignment to a whole scalar, ends the liveness of its variable (an
//! element write does not: arrays are tracked as wholes); a loop body is
//! analysed until its live set is stable. Conservative: a kept statement is
//! never wrong, only possibly unnecessary.

use crate::check::Ty;
use crate::ir::*;

/// Removes from `f` the statements whose results nothing reads.
pub fn prune(f: &mut Func) {
    let mut outputs = vec![false; f.vars.len()];
    for &p in &f.params {
        if f.vars[p].mutable && matches!(f.vars[p].ty, Ty::Array(..)) {
            outputs[p] = true;
        }
    }
    let mut live = outputs.clone();
    if let Some(r) = &f.ret {
        r.places(&mut |p| live[p.var] = true);
    }
    let body = std::mem::take(&mut f.body);
    let p = Pruner { outputs };
    f.body = p.stmts(body, &mut live);
}

struct Pruner {
    outputs: Vec<bool>,
}

fn read(e: &Expr, live: &mut [bool]) {
    e.places(&mut |p| live[p.var] = true);
}

fn read_place(p: &Place, live: &mut [bool]) {
    live[p.var] = true;
    p.index.iter().for_each(|i| read(i, live));
}

impl Pruner {
    /// Keeps the statements of `stmts` needed for `live` (the variables
    /// live after them); leaves in `live` those live before them.
    fn stmts(&self, stmts: Vec<Stmt>, live: &mut Vec<bool>) -> Vec<Stmt> {
        let mut kept = Vec::new();
        for s in stmts.into_iter().rev() {
            if let Some(s) = self.stmt(s, live) {
                kept.push(s);
            }
            for (v, o) in self.outputs.iter().enumerate() {
                live[v] |= *o;
            }
        }
        kept.reverse();
        kept
    }

    fn stmt(&self, s: Stmt, live: &mut Vec<bool>) -> Option<Stmt> {
        match s {
            Stmt::Let { var, init } => {
                if !live[var] {
                    return None;
                }
                live[var] = false;
                if let Some(e) = &init {
                    read(e, live);
                }
                Some(Stmt::Let { var, init })
            }
            Stmt::Assign { place, value } => {
                if !live[place.var] {
                    return None;
                }
                place.index.iter().for_each(|i| read(i, live));
                read(&value, live);
                Some(Stmt::Assign { place, value })
            }
            Stmt::Copy { dst, src, ty } => {
                if !live[dst.var] {
                    return None;
                }
                dst.index.iter().for_each(|i| read(i, live));
                read_place(&src, live);
                Some(Stmt::Copy { dst, src, ty })
            }
            Stmt::Call {
                callee,
                args,
                result,
            } => {
                let writes = result.is_some_and(|r| live[r])
                    || args.iter().any(
                        |a| matches!(a, Arg::Array { place, mutable: true } if live[place.var]),
                    );
                if !writes {
                    return None;
                }
                for a in &args {
                    match a {
                        Arg::Value(e) => read(e, live),
                        Arg::Array { place, .. } => read_place(place, live),
                    }
                }
                Some(Stmt::Call {
                    callee,
                    args,
                    result,
                })
            }
            Stmt::If { cond, then, els } => {
                let mut lt = live.clone();
                let then = self.stmts(then, &mut lt);
                let mut le = live.clone();
                let els = self.stmts(els, &mut le);
                if then.is_empty() && els.is_empty() {
                    return None;
                }
                for v in 0..live.len() {
                    live[v] = lt[v] || le[v];
                }
                read(&cond, live);
                Some(Stmt::If { cond, then, els })
            }
            Stmt::For {
                var,
                lo,
                hi,
                inclusive,
                body,
            } => {
                // Live at the end of the body: after the loop, or at the
                // start of the next iteration; iterate to a fixed point.
                let mut out = live.clone();
                let mut kept;
                loop {
                    let mut l = out.clone();
                    kept = self.stmts(body.clone(), &mut l);
                    let next: Vec<bool> = out.iter().zip(&l).map(|(a, b)| *a || *b).collect();
                    if next == out {
                        out = next;
                        break;
                    }
                    out = next;
                }
                if kept.is_empty() {
                    return None;
                }
                *live = out;
                read(&lo, live);
                read(&hi, live);
                Some(Stmt::For {
                    var,
                    lo,
                    hi,
                    inclusive,
                    body: kept,
                })
            }
        }
    }
}
