//! The forward-mode transform of statements: every statement writing an
//! active variable is preceded by the statement writing its tangent.
//!
//! In *scalar* mode a tangent variable has its variable's type. In *vector*
//! mode (the Jacobian) it has one more dimension, outermost, over the seeds
//! `s`: every tangent statement then runs in a loop `for s in 0..S` and
//! every tangent place is indexed `[s]` first. Primal values that a
//! tangent reads are computed once, before that loop (primal temporaries);
//! values a tangent needs twice are kept in tangent temporaries inside it.
//!
//! A helper call `h(args)` with active arguments becomes the call of its
//! tangent `h_tangent(args, tangents of the real arguments, d_ret)` (`d_ret`
//! also when the value is discarded or the helper returns nothing), which
//! reads the values of `&mut` arrays before the call, then the call
//! itself.

use super::activity::expr_active;
use crate::ast::IntKind;
use crate::check::{Len, Ty};
use crate::ir::*;
use std::collections::HashMap;

/// Scalar (one direction) or vector (`S` seeds) mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Scalar,
    Vector(Len),
}

/// The state of one transform.
pub struct Tangent<'a> {
    /// The primal function (its variables keep their ids in `f`).
    pub src: &'a Func,
    /// The function being built.
    pub f: Func,
    pub active: Vec<bool>,
    /// The tangent variable of each active variable.
    pub dv: HashMap<VarId, VarId>,
    pub mode: Mode,
    /// The seed loop variable (vector mode).
    seed: VarId,
    /// Primal-side statements being emitted.
    pub out: Vec<Stmt>,
    /// Tangent-side temporaries of the tangent statement being built.
    pub tout: Vec<Stmt>,
    temps: usize,
}

fn usize_lit(v: u64) -> Expr {
    Expr::Int(v as i64, Some(IntKind::Usize))
}

impl<'a> Tangent<'a> {
    /// A transform of `src` with `active` variables; `f` starts with the
    /// primal variables (parameters and body are set by the caller).
    pub fn new(src: &'a Func, active: Vec<bool>, mode: Mode) -> Tangent<'a> {
        let mut f = Func {
            vars: src.vars.clone(),
            params: Vec::new(),
            body: Vec::new(),
            ret: None,
        };
        let seed = f.add(
            "pw_s".into(),
            Ty::Int(IntKind::Usize),
            false,
            VarKind::Local,
        );
        Tangent {
            src,
            f,
            active,
            dv: HashMap::new(),
            mode,
            seed,
            out: Vec::new(),
            tout: Vec::new(),
            temps: 0,
        }
    }

    /// The type of the tangent of a variable of type `t`.
    pub fn tangent_ty(&self, t: &Ty) -> Ty {
        match self.mode {
            Mode::Scalar => t.clone(),
            Mode::Vector(s) => Ty::array(t.clone(), s),
        }
    }

    /// Creates the tangent variables of every active variable that has none
    /// yet (named `pw_d_<name>`, declared where their variable is).
    pub fn tangent_vars(&mut self) {
        for v in 0..self.src.vars.len() {
            if self.active[v] && !self.dv.contains_key(&v) {
                let var = &self.src.vars[v];
                let ty = self.tangent_ty(&var.ty);
                let d = self.f.add(
                    format!("pw_d_{}", var.name),
                    ty,
                    var.mutable || matches!(var.ty, Ty::Array(..)),
                    VarKind::Local,
                );
                self.dv.insert(v, d);
            }
        }
    }

    fn temp(&mut self, ty: Ty, mutable: bool) -> VarId {
        self.temps += 1;
        let name = format!("pw_a{}", self.temps);
        self.f.add(name, ty, mutable, VarKind::Local)
    }

    /// A primal value kept in a temporary (before the seed loop) unless it
    /// is a literal or a read (cheap to repeat).
    pub fn keep(&mut self, e: Expr) -> Expr {
        if e.is_literal() || matches!(&e, Expr::Read(_)) {
            return e;
        }
        let t = self.temp(self.f.expr_ty(&e), false);
        self.out.push(Stmt::Let {
            var: t,
            init: Some(e),
        });
        Expr::read(t)
    }

    /// A tangent value kept in a tangent temporary (inside the seed loop)
    /// unless it is a literal or a read.
    pub fn keep_tangent(&mut self, e: Expr) -> Expr {
        if e.is_literal() || matches!(&e, Expr::Read(_)) {
            return e;
        }
        let t = self.temp(Ty::Real, false);
        self.tout.push(Stmt::Let {
            var: t,
            init: Some(e),
        });
        Expr::read(t)
    }

    /// The tangent place of a place of an active variable.
    pub fn dplace(&self, p: &Place) -> Place {
        let var = self.dv[&p.var];
        let mut index = Vec::new();
        if let Mode::Vector(_) = self.mode {
            index.push(Expr::read(self.seed));
        }
        index.extend(p.index.iter().cloned());
        Place { var, index }
    }

    /// Emits a tangent statement: its tangent temporaries and `stmts`,
    /// inside the seed loop in vector mode.
    pub fn emit_tangent(&mut self, stmts: Vec<Stmt>) {
        let mut body = std::mem::take(&mut self.tout);
        body.extend(stmts);
        match self.mode {
            Mode::Scalar => self.out.extend(body),
            Mode::Vector(s) => self.out.push(Stmt::For {
                var: self.seed,
                lo: usize_lit(0),
                hi: len_expr(s),
                inclusive: false,
                body,
            }),
        }
    }

    /// Statements writing zero into every entry of `place` (type `t`).
    pub fn zero(&mut self, place: Place, t: &Ty) -> Vec<Stmt> {
        match t {
            Ty::Array(elem, len) => {
                let i = self.temp(Ty::Int(IntKind::Usize), false);
                let body = self.zero(place.at(Expr::read(i)), elem);
                vec![Stmt::For {
                    var: i,
                    lo: usize_lit(0),
                    hi: len_expr(*len),
                    inclusive: false,
                    body,
                }]
            }
            _ => vec![Stmt::Assign {
                place,
                value: Expr::Real(0.0),
            }],
        }
    }

    // ----- statements -----

    pub fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    /// The transform of `stmts` as a separate list (a branch, a loop body).
    fn block(&mut self, stmts: &[Stmt]) -> Vec<Stmt> {
        let saved = std::mem::take(&mut self.out);
        self.stmts(stmts);
        std::mem::replace(&mut self.out, saved)
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { var, init } if self.active[*var] => {
                let dv = self.dv[var];
                let is_array = matches!(self.src.vars[*var].ty, Ty::Array(..));
                match (init, is_array) {
                    (Some(e), false) => {
                        let (p, d) = self.tan(e);
                        let d = d.unwrap_or(Expr::Real(0.0));
                        if self.mode == Mode::Scalar {
                            let mut body = std::mem::take(&mut self.tout);
                            body.push(Stmt::Let {
                                var: dv,
                                init: Some(d),
                            });
                            self.out.extend(body);
                        } else {
                            self.out.push(Stmt::Let {
                                var: dv,
                                init: None,
                            });
                            let place = Place::var(*var);
                            let dp = self.dplace(&place);
                            self.emit_tangent(vec![Stmt::Assign {
                                place: dp,
                                value: d,
                            }]);
                        }
                        self.out.push(Stmt::Let {
                            var: *var,
                            init: Some(p),
                        });
                    }
                    _ => {
                        self.out.push(Stmt::Let {
                            var: dv,
                            init: None,
                        });
                        self.out.push(s.clone());
                    }
                }
            }
            Stmt::Assign { place, value } if self.active[place.var] => {
                let (p, d) = self.tan(value);
                let dp = self.dplace(place);
                self.emit_tangent(vec![Stmt::Assign {
                    place: dp,
                    value: d.unwrap_or(Expr::Real(0.0)),
                }]);
                self.out.push(Stmt::Assign {
                    place: place.clone(),
                    value: p,
                });
            }
            Stmt::Copy { dst, src, ty } if self.active[dst.var] => {
                let ddst = self.dplace(dst);
                let t = if self.active[src.var] {
                    vec![Stmt::Copy {
                        dst: ddst,
                        src: self.dplace(src),
                        ty: ty.clone(),
                    }]
                } else {
                    self.zero(ddst, ty)
                };
                self.emit_tangent(t);
                self.out.push(s.clone());
            }
            Stmt::If { cond, then, els } => {
                let then = self.block(then);
                let els = self.block(els);
                self.out.push(Stmt::If {
                    cond: cond.clone(),
                    then,
                    els,
                });
            }
            Stmt::For {
                var,
                lo,
                hi,
                inclusive,
                body,
            } => {
                let body = self.block(body);
                self.out.push(Stmt::For {
                    var: *var,
                    lo: lo.clone(),
                    hi: hi.clone(),
                    inclusive: *inclusive,
                    body,
                });
            }
            Stmt::Call {
                callee: Callee::Helper(h),
                args,
                result,
            } => self.call(*h, args, *result),
            s => self.out.push(s.clone()),
        }
    }

    /// A helper call: its tangent's call (if an argument is active), then
    /// the call.
    fn call(&mut self, h: usize, args: &[Arg], result: Option<VarId>) {
        let real_args: Vec<(usize, bool)> = args
            .iter()
            .enumerate()
            .filter_map(|(k, a)| match a {
                Arg::Value(e) if self.f.expr_ty(e) == Ty::Real => {
                    Some((k, expr_active(e, &self.active)))
                }
                Arg::Array { place, .. } => Some((k, self.active[place.var])),
                _ => None,
            })
            .collect();
        if !real_args.iter().any(|(_, a)| *a) {
            // The value does not vary here, but its variable may later (a
            // `let mut` that an active value is added to): its tangent is 0.
            if let Some(r) = result.filter(|r| self.active[*r]) {
                self.out.push(Stmt::Let {
                    var: self.dv[&r],
                    init: None,
                });
                let dp = self.dplace(&Place::var(r));
                self.emit_tangent(vec![Stmt::Assign {
                    place: dp,
                    value: Expr::Real(0.0),
                }]);
            }
            self.out.push(Stmt::Call {
                callee: Callee::Helper(h),
                args: args.to_vec(),
                result,
            });
            return;
        }
        let activity: Vec<bool> = real_args.iter().map(|(_, a)| *a).collect();
        let mask = activity
            .iter()
            .enumerate()
            .map(|(k, a)| (*a as u64) << k.min(63))
            .sum();
        let variant = super::variant(real_args.len(), mask);
        // The primal arguments, arrays read-only (the tangent copies them).
        let mut targs: Vec<Arg> = args
            .iter()
            .map(|a| match a {
                Arg::Value(e) => Arg::Value(e.clone()),
                Arg::Array { place, .. } => Arg::Array {
                    place: place.clone(),
                    mutable: false,
                },
            })
            .collect();
        for (k, active) in &real_args {
            let t = match &args[*k] {
                Arg::Value(e) => {
                    let (_, d) = self.tan(e);
                    Arg::Value(d.unwrap_or(Expr::Real(0.0)))
                }
                Arg::Array { place, mutable } if *active => Arg::Array {
                    place: self.dplace(place),
                    mutable: *mutable,
                },
                Arg::Array { place, .. } => {
                    // A zero tangent for a passive array.
                    let ty = self.f.place_ty(place);
                    let z = self.temp(ty.clone(), false);
                    self.out.push(Stmt::Let { var: z, init: None });
                    let zs = self.zero(Place::var(z), &ty);
                    self.out.extend(zs);
                    Arg::Array {
                        place: Place::var(z),
                        mutable: false,
                    }
                }
            };
            targs.push(t);
        }
        let mut after = Vec::new();
        let mut before = Vec::new();
        let dret = self.temp(Ty::array(Ty::Real, Len::Lit(1)), true);
        before.push(Stmt::Let {
            var: dret,
            init: None,
        });
        targs.push(Arg::Array {
            place: Place::var(dret),
            mutable: true,
        });
        if let Some(r) = result {
            let dr = self.dv[&r];
            self.out.push(Stmt::Let {
                var: dr,
                init: None,
            });
            after.push(Stmt::Assign {
                place: self.dplace(&Place::var(r)),
                value: Expr::Read(Place::var(dret).at(usize_lit(0))),
            });
        }
        before.push(Stmt::Call {
            callee: Callee::HelperTangent(h, variant),
            args: targs,
            result: None,
        });
        before.extend(after);
        self.emit_tangent(before);
        self.out.push(Stmt::Call {
            callee: Callee::Helper(h),
            args: args.to_vec(),
            result,
        });
    }
}
