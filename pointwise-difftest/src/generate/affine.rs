//! Bodies affine in `(u, ∇u)` by construction (issue #19): sums,
//! differences and negations of dependent values, products of one
//! dependent value with independent ones (literals, `std::f64::consts`,
//! reads of `a`, `∇a`, `x`, `constants`, math functions of those),
//! quotients by independent values, `mul_add` with one dependent factor,
//! `if`/`else` on independent conditions, copies into locals, compound
//! assignments and `for` loops over constant ranges. By its guide's rule
//! the macro proves such a body linear (`info().linear`). Some bodies also
//! index arrays — reads of `u`, `∇u` and writes to `f0`, `f1` — with an
//! index computed from `u` or `∇u` (`f1[0][((u[0].abs() * 2.0) as usize) %
//! 2] = …`): only piecewise affine, their Jacobian changes with `u`, and
//! the macro must not claim them linear. The campaign checks every claim
//! numerically (`crate::linearity`).

use super::Gen;
use super::expr::{len_expr, typed};
use crate::program::*;

/// The state of an affine body being generated.
struct Affine {
    dims: Dims,
    nc: Len,
    na: Len,
    nk: u64,
    params: Vec<(Role, Ty)>,
    /// Dependent scalar locals in scope: (name, mutable).
    locals: Vec<(String, bool)>,
    /// Loop variables in scope, with the length of their range.
    loops: Vec<(String, Len)>,
    /// Whether indices may depend on `u`, `∇u`.
    indexed: bool,
    /// Whether one does.
    u_indexed: bool,
    /// Statements left to generate.
    budget: usize,
}

impl Affine {
    fn has(&self, r: Role) -> bool {
        self.params.iter().any(|(p, _)| *p == r)
    }
}

/// Constants of `std::f64::consts` used as independent values.
const CONSTS: [&str; 4] = ["PI", "E", "SQRT_2", "LN_2"];

/// Independent factors, all non-zero.
const FACTORS: &[f64] = &[0.5, 2.0, 3.0, 0.1, 0.25, 1.5, 7.5];

impl Gen {
    /// An affine physics (see the module documentation); with `indexed`,
    /// some of its indices may depend on `u`, `∇u`. Returns it with
    /// whether one does.
    pub(crate) fn affine_physics(
        &mut self,
        name: &str,
        dims: Dims,
        indexed: bool,
    ) -> (Physics, bool) {
        let nc = self.len(dims);
        let na = self.len(dims);
        let nk = 1 + self.below(3) as u64;
        let d = Len::D;
        let free = dims == Dims::Free;
        let mut params = vec![(Role::U, Ty::arr(Ty::Real, nc))];
        if !free && self.chance(0.8) {
            params.push((Role::GradU, Ty::arr(Ty::arr(Ty::Real, d), nc)));
        }
        if self.chance(0.5) {
            params.push((Role::A, Ty::arr(Ty::Real, na)));
            if !free && self.chance(0.3) {
                params.push((Role::GradA, Ty::arr(Ty::arr(Ty::Real, d), na)));
            }
        }
        if !free && self.chance(0.5) {
            params.push((Role::X, Ty::arr(Ty::Real, d)));
        }
        if self.chance(0.4) {
            params.push((Role::Constants, Ty::arr(Ty::Real, Len::N(nk))));
        }
        let has_f1 = !free && self.chance(0.7);
        if !has_f1 || self.chance(0.6) {
            params.push((Role::F0, Ty::arr(Ty::Real, nc)));
        }
        if has_f1 {
            params.push((Role::F1, Ty::arr(Ty::arr(Ty::Real, d), nc)));
        }
        let mut s = Affine {
            dims,
            nc,
            na,
            nk,
            params: params.clone(),
            locals: Vec::new(),
            loops: Vec::new(),
            indexed,
            u_indexed: false,
            budget: 3 + self.below(6),
        };
        let mut stmts = Vec::new();
        while s.budget > 0 {
            s.budget -= 1;
            stmts.extend(self.affine_stmt(&mut s));
        }
        // Every output reads the body at the end.
        for role in [Role::F0, Role::F1] {
            if s.has(role) {
                for _ in 0..2 {
                    let place = self.output(&mut s, role);
                    let value = self.lin(&mut s, 1);
                    stmts.push(Stmt::Assign {
                        place,
                        op: Some("+"),
                        value,
                    });
                }
            }
        }
        let physics = Physics {
            name: name.to_string(),
            dims,
            nc,
            na: (s.has(Role::A) || s.has(Role::GradA)).then_some(na),
            nk: if s.has(Role::Constants) { nk } else { 0 },
            params,
            body: Block { stmts, tail: None },
            helpers: Vec::new(),
        };
        (physics, s.u_indexed)
    }

    fn affine_stmt(&mut self, s: &mut Affine) -> Vec<Stmt> {
        let mutable: Vec<String> = s
            .locals
            .iter()
            .filter(|(_, m)| *m)
            .map(|(n, _)| n.clone())
            .collect();
        match self.below(100) {
            0..=29 => {
                let name = self.name();
                let mutable = self.chance(0.5);
                let init = self.lin(s, 2);
                // (A shadowed local is out of reach.)
                s.locals.retain(|(n, _)| *n != name);
                s.locals.push((name.clone(), mutable));
                vec![Stmt::Let {
                    name,
                    mutable,
                    ty: Some(Ty::Real),
                    init,
                }]
            }
            65..=74 if !mutable.is_empty() => {
                let v = mutable[self.below(mutable.len())].clone();
                let (op, value) = match self.below(4) {
                    0 => ("+", self.lin(s, 2)),
                    1 => ("-", self.lin(s, 2)),
                    2 => ("*", self.indep(s, 1)),
                    _ => ("/", self.nonzero(s)),
                };
                vec![Stmt::Assign {
                    place: Expr::var(&v),
                    op: Some(op),
                    value,
                }]
            }
            75..=84 if s.loops.len() < 2 => {
                let var = self.name();
                let (hi, len) = if s.dims == Dims::Generic && self.chance(0.6) {
                    (len_expr(s.dims, Len::D), Len::D)
                } else {
                    let n = 1 + self.below(3) as u64;
                    (Expr::usize(n), Len::N(n))
                };
                let saved = s.locals.clone();
                s.locals.retain(|(n, _)| *n != var);
                s.loops.push((var.clone(), len));
                let body = self.affine_block(s);
                s.loops.pop();
                s.locals = saved;
                vec![Stmt::For {
                    var,
                    lo: Expr::usize(0),
                    hi,
                    inclusive: false,
                    body,
                }]
            }
            85..=99 => {
                let cond = self.condition(s);
                let then = self.affine_block(s);
                let els = self.chance(0.6).then(|| self.affine_block(s));
                vec![Stmt::If { cond, then, els }]
            }
            _ => {
                let role = if s.has(Role::F0) && (!s.has(Role::F1) || self.chance(0.5)) {
                    Role::F0
                } else {
                    Role::F1
                };
                let place = self.output(s, role);
                let op = *self.pick(&[None, Some("+"), Some("-")]);
                let value = self.lin(s, 2);
                vec![Stmt::Assign { place, op, value }]
            }
        }
    }

    /// One or two statements in a scope of their own.
    fn affine_block(&mut self, s: &mut Affine) -> Block {
        let saved = s.locals.clone();
        let mut stmts = Vec::new();
        for _ in 0..1 + self.below(2) {
            if s.budget == 0 {
                break;
            }
            s.budget -= 1;
            stmts.extend(self.affine_stmt(s));
        }
        s.locals = saved;
        Block { stmts, tail: None }
    }

    /// An entry of `f0` or `f1`.
    fn output(&mut self, s: &mut Affine, role: Role) -> Expr {
        let nc = s.nc;
        let e = Expr::var(role.name()).index(self.affine_index(s, nc));
        match role {
            Role::F1 => e.index(self.affine_index(s, Len::D)),
            _ => e,
        }
    }

    /// An index for an array of length `len`: a literal, a loop variable,
    /// one computed from `x`, or (`s.indexed`) one computed from `u`, `∇u`.
    fn affine_index(&mut self, s: &mut Affine, len: Len) -> Expr {
        let n = len_expr(s.dims, len);
        if s.indexed && self.chance(0.4) {
            s.u_indexed = true;
            let r = self.dependent_read(s, false);
            let v = if self.chance(0.5) {
                Expr::bin(
                    "*",
                    Expr::Math {
                        f: "abs",
                        args: vec![r],
                        method: true,
                    },
                    Expr::Float(2.0),
                    true,
                )
            } else {
                Expr::bin("+", r, Expr::Float(1.0), true)
            };
            return Expr::bin("%", Expr::Cast(Box::new(v), Ty::Usize), n, false);
        }
        self.independent_index(s, len)
    }

    /// An index that does not depend on `u`, `∇u`.
    fn independent_index(&mut self, s: &mut Affine, len: Len) -> Expr {
        let n = len_expr(s.dims, len);
        let loops: Vec<String> = s
            .loops
            .iter()
            .filter(|(_, l)| l.within(len))
            .map(|(v, _)| v.clone())
            .collect();
        if !loops.is_empty() && self.chance(0.5) {
            return Expr::var(&loops[self.below(loops.len())]);
        }
        if s.has(Role::X) && self.chance(0.15) {
            let x = Expr::var("x").index(Expr::usize(0));
            let v = Expr::bin(
                "*",
                Expr::Math {
                    f: "abs",
                    args: vec![x],
                    method: true,
                },
                Expr::Float(3.0),
                true,
            );
            return Expr::bin("%", Expr::Cast(Box::new(v), Ty::Usize), n, false);
        }
        Expr::usize(self.below(len.min() as usize) as u64)
    }

    /// A read of `u` or `∇u`; its indices may depend on them when
    /// `indexed` (and `s.indexed`).
    fn dependent_read(&mut self, s: &mut Affine, indexed: bool) -> Expr {
        let index = |g: &mut Gen, s: &mut Affine, len: Len| {
            if indexed {
                g.affine_index(s, len)
            } else {
                g.independent_index(s, len)
            }
        };
        let nc = s.nc;
        if s.has(Role::GradU) && self.chance(0.5) {
            let c = index(self, s, nc);
            let d = index(self, s, Len::D);
            Expr::var("grad_u").index(c).index(d)
        } else {
            let c = index(self, s, nc);
            Expr::var("u").index(c)
        }
    }

    /// A value affine in `(u, ∇u)`.
    fn lin(&mut self, s: &mut Affine, depth: usize) -> Expr {
        if depth == 0 || self.chance(0.3) {
            return match self.below(100) {
                0..=59 => self.dependent_read(s, true),
                60..=84 if !s.locals.is_empty() => {
                    Expr::var(&s.locals[self.below(s.locals.len())].0.clone())
                }
                _ => self.indep(s, 1),
            };
        }
        let d = depth - 1;
        match self.below(9) {
            0 | 1 => Expr::bin("+", self.lin(s, d), self.lin(s, d), true),
            2 => Expr::bin("-", self.lin(s, d), self.lin(s, d), true),
            3 => Expr::Neg(Box::new(self.lin(s, d))),
            4 => Expr::bin("*", self.lin(s, d), self.indep(s, d), true),
            5 => Expr::bin("*", self.indep(s, d), self.lin(s, d), true),
            6 => Expr::bin("/", self.lin(s, d), self.nonzero(s), true),
            7 => {
                let args = if self.chance(0.5) {
                    vec![self.lin(s, d), self.indep(s, d), self.lin(s, d)]
                } else {
                    vec![self.indep(s, d), self.lin(s, d), self.indep(s, d)]
                };
                let method = typed(&args[0], &[]) && self.chance(0.5);
                Expr::Math {
                    f: "mul_add",
                    args,
                    method,
                }
            }
            _ => {
                let cond = self.condition(s);
                let then = Block {
                    stmts: vec![],
                    tail: Some(Box::new(self.lin(s, d))),
                };
                let els = Block {
                    stmts: vec![],
                    tail: Some(Box::new(self.lin(s, d))),
                };
                Expr::If(Box::new(cond), then, els)
            }
        }
    }

    /// A value that does not depend on `u`, `∇u`.
    fn indep(&mut self, s: &mut Affine, depth: usize) -> Expr {
        if depth == 0 || self.chance(0.4) {
            let reads: Vec<Role> = [Role::A, Role::GradA, Role::X, Role::Constants]
                .into_iter()
                .filter(|r| s.has(*r))
                .collect();
            return match self.below(100) {
                0..=49 if !reads.is_empty() => {
                    let r = reads[self.below(reads.len())];
                    let e = Expr::var(r.name());
                    let (na, nk) = (s.na, s.nk);
                    match r {
                        Role::A => e.index(self.independent_index(s, na)),
                        Role::GradA => {
                            let c = self.independent_index(s, na);
                            e.index(c).index(self.independent_index(s, Len::D))
                        }
                        Role::X => e.index(self.independent_index(s, Len::D)),
                        _ => e.index(self.independent_index(s, Len::N(nk))),
                    }
                }
                0..=84 => Expr::Float(*self.pick(FACTORS)),
                _ => Expr::Const(CONSTS[self.below(CONSTS.len())]),
            };
        }
        let d = depth - 1;
        match self.below(4) {
            0 => {
                let f = *self.pick(&["sin", "cos", "exp", "tanh", "atan", "abs"]);
                let x = self.indep(s, d);
                let method = typed(&x, &[]) && self.chance(0.5);
                Expr::Math {
                    f,
                    args: vec![x],
                    method,
                }
            }
            1 => Expr::bin("*", self.indep(s, d), self.indep(s, d), true),
            2 => Expr::bin("+", self.indep(s, d), self.indep(s, d), true),
            _ => {
                let x = self.nonzero(s);
                Expr::Math {
                    f: "sqrt",
                    args: vec![x],
                    method: false,
                }
            }
        }
    }

    /// An independent value that is not zero: `|v| + 0.5`, or a factor.
    fn nonzero(&mut self, s: &mut Affine) -> Expr {
        if self.chance(0.5) {
            return Expr::Float(*self.pick(FACTORS));
        }
        let v = self.indep(s, 1);
        Expr::bin(
            "+",
            Expr::Math {
                f: "abs",
                args: vec![v],
                method: false,
            },
            Expr::Float(0.5),
            true,
        )
    }

    /// A comparison of independent values.
    fn condition(&mut self, s: &mut Affine) -> Expr {
        let op = *self.pick(&["<", ">", "<="]);
        Expr::bin(op, self.indep(s, 1), self.indep(s, 1), true)
    }
}
