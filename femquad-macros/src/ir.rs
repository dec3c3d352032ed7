//! The lowered program: what both emitters print and what automatic
//! differentiation transforms.
//!
//! [`crate::lower`] turns a checked function into a [`Func`]: a list of
//! statements over typed variables in which **every expression is pure** (no
//! assignment, no call with effects): side effects are statements, in Rust's
//! evaluation order, and any value read before a later side effect is kept
//! in a temporary first. Evaluating an [`Expr`] therefore means the same in
//! Rust and in C whatever order a compiler picks for its operands, and a
//! printer ([`crate::emit_c`], [`crate::emit_native`]) is a plain
//! translation. Array copies read and write through [`Place`]s whose indices
//! are literals or scalar variables, so a copy loop never re-evaluates an
//! index that the copy itself changes.

use crate::ast::{BinOp, IntKind};
use crate::check::{Len, Role, Ty};
use crate::math::MathFn;

/// Index of a variable in [`Func::vars`].
pub type VarId = usize;

/// What a variable is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A parameter of a physics, by role.
    Role(Role),
    /// A helper's parameter.
    Param,
    /// A user `let`, `const` or loop variable, or a temporary.
    Local,
}

/// A variable: its C/Rust name (unique in the function), type and whether
/// it is written after its declaration.
#[derive(Clone, Debug)]
pub struct Var {
    pub name: String,
    pub ty: Ty,
    pub mutable: bool,
    pub kind: VarKind,
}

/// The scalar types of the subset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Real,
    Int(IntKind),
    Bool,
}

impl Scalar {
    /// The type of a value of this scalar type.
    pub fn ty(self) -> Ty {
        match self {
            Scalar::Real => Ty::Real,
            Scalar::Int(k) => Ty::Int(k),
            Scalar::Bool => Ty::Bool,
        }
    }

    /// The scalar type of `t` (`Real` for anything else, after errors).
    pub fn of(t: &Ty) -> Scalar {
        match t {
            Ty::Int(k) => Scalar::Int(*k),
            Ty::Bool => Scalar::Bool,
            _ => Scalar::Real,
        }
    }
}

/// `var[i0][i1]…` (no index: the variable itself).
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub var: VarId,
    pub index: Vec<Expr>,
}

impl Place {
    pub fn var(var: VarId) -> Place {
        Place {
            var,
            index: Vec::new(),
        }
    }

    /// This place indexed once more.
    pub fn at(&self, i: Expr) -> Place {
        let mut p = self.clone();
        p.index.push(i);
        p
    }
}

/// A pure expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Real(f64),
    /// An integer literal; `None` when its type is inferred from a helper's
    /// parameter, which the macro does not see.
    Int(i64, Option<IntKind>),
    Bool(bool),
    /// The spatial dimension (`D`, `DIM`).
    Dim,
    /// A scalar read.
    Read(Place),
    Neg(Box<Expr>, Scalar),
    Not(Box<Expr>),
    /// A binary operator on operands of type `.3` (`Rem` on reals is `fmod`).
    Bin(BinOp, Box<Expr>, Box<Expr>, Scalar),
    /// `x as T`, from `.1` to `.2`.
    Cast(Box<Expr>, Scalar, Scalar),
    Math(&'static MathFn, Vec<Expr>),
    /// `if c { a } else { b }` / `c ? a : b`: only the branch taken is evaluated.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
}

impl Expr {
    pub fn read(var: VarId) -> Expr {
        Expr::Read(Place::var(var))
    }

    pub fn bin(op: BinOp, l: Expr, r: Expr, t: Scalar) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r), t)
    }

    /// Whether the expression is a literal (of any type).
    pub fn is_literal(&self) -> bool {
        matches!(
            self,
            Expr::Real(_) | Expr::Int(..) | Expr::Bool(_) | Expr::Dim
        )
    }

    /// Calls `f` on every place read by the expression (outer first).
    pub fn places(&self, f: &mut dyn FnMut(&Place)) {
        match self {
            Expr::Read(p) => {
                f(p);
                p.index.iter().for_each(|i| i.places(f));
            }
            Expr::Neg(x, _) | Expr::Not(x) | Expr::Cast(x, ..) => x.places(f),
            Expr::Bin(_, l, r, _) => {
                l.places(f);
                r.places(f);
            }
            Expr::Math(_, args) => args.iter().for_each(|a| a.places(f)),
            Expr::Select(c, a, b) => {
                c.places(f);
                a.places(f);
                b.places(f);
            }
            _ => {}
        }
    }
}

/// Which function a call calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    /// The `i`-th declared helper.
    Helper(usize),
    /// Variant `k` of the tangent of the `i`-th declared helper (see
    /// `crate::ad::variant`).
    HelperTangent(usize, usize),
}

/// An argument of a call.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    /// A scalar, by value.
    Value(Expr),
    /// An array, by reference.
    Array { place: Place, mutable: bool },
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// Declares a variable: a scalar with its value (or assigned later on
    /// every path, `None`), an array without one.
    Let { var: VarId, init: Option<Expr> },
    /// `place = value` (scalar).
    Assign { place: Place, value: Expr },
    /// `dst = src` for arrays of type `ty`, entry by entry.
    Copy { dst: Place, src: Place, ty: Ty },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    /// `for var in lo..hi` (`..=` if `inclusive`); `lo`, `hi` are constants.
    For {
        var: VarId,
        lo: Expr,
        hi: Expr,
        inclusive: bool,
        body: Vec<Stmt>,
    },
    /// A call; `result` declares a variable holding the returned value.
    Call {
        callee: Callee,
        args: Vec<Arg>,
        result: Option<VarId>,
    },
}

impl Stmt {
    /// Calls `f` on this statement and every statement nested in it.
    pub fn walk(&self, f: &mut dyn FnMut(&Stmt)) {
        f(self);
        match self {
            Stmt::If { then, els, .. } => {
                then.iter().for_each(|s| s.walk(f));
                els.iter().for_each(|s| s.walk(f));
            }
            Stmt::For { body, .. } => body.iter().for_each(|s| s.walk(f)),
            _ => {}
        }
    }
}

/// The distinct tangent variants `(helper, variant)` a function calls, in
/// order of first call.
pub fn tangent_refs(func: &Func) -> Vec<(usize, usize)> {
    let mut refs = Vec::new();
    for s in &func.body {
        s.walk(&mut |s| {
            if let Stmt::Call {
                callee: Callee::HelperTangent(i, k),
                ..
            } = s
                && !refs.contains(&(*i, *k))
            {
                refs.push((*i, *k));
            }
        });
    }
    refs
}

/// A lowered function.
#[derive(Clone, Debug)]
pub struct Func {
    pub vars: Vec<Var>,
    /// The parameters, in order.
    pub params: Vec<VarId>,
    pub body: Vec<Stmt>,
    /// A helper's value.
    pub ret: Option<Expr>,
}

impl Func {
    /// Adds a variable.
    pub fn add(&mut self, name: String, ty: Ty, mutable: bool, kind: VarKind) -> VarId {
        self.vars.push(Var {
            name,
            ty,
            mutable,
            kind,
        });
        self.vars.len() - 1
    }

    /// The type of a pure expression.
    pub fn expr_ty(&self, e: &Expr) -> Ty {
        match e {
            Expr::Real(_) | Expr::Math(..) => Ty::Real,
            Expr::Int(_, k) => Ty::Int(k.unwrap_or(IntKind::I32)),
            Expr::Bool(_) | Expr::Not(_) => Ty::Bool,
            Expr::Dim => Ty::Int(IntKind::Usize),
            Expr::Read(p) => self.place_ty(p),
            Expr::Bin(op, ..) if op.is_comparison() || matches!(op, BinOp::And | BinOp::Or) => {
                Ty::Bool
            }
            Expr::Neg(_, s) | Expr::Bin(_, _, _, s) | Expr::Cast(_, _, s) => s.ty(),
            Expr::Select(_, a, _) => self.expr_ty(a),
        }
    }

    /// The type of a place: its variable's type with one array level
    /// removed per index.
    pub fn place_ty(&self, p: &Place) -> Ty {
        let mut t = self.vars[p.var].ty.clone();
        for _ in &p.index {
            t = match t {
                Ty::Array(e, _) => *e,
                other => other,
            };
        }
        t
    }
}

/// A length as a `usize` expression (`a + b·D + c·D²` for [`Len::Poly`];
/// a flat array has no length: 0).
pub fn len_expr(l: Len) -> Expr {
    let u = |v: u64| Expr::Int(v as i64, Some(IntKind::Usize));
    let t = Scalar::Int(IntKind::Usize);
    match l {
        Len::Lit(n) => u(n),
        Len::Dim => Expr::Dim,
        Len::Flat => u(0),
        Len::Poly(a, b, c) => {
            let mut terms = Vec::new();
            if a > 0 {
                terms.push(u(a));
            }
            if b > 0 {
                let d = if b == 1 {
                    Expr::Dim
                } else {
                    Expr::bin(BinOp::Mul, u(b), Expr::Dim, t)
                };
                terms.push(d);
            }
            if c > 0 {
                let dd = Expr::bin(BinOp::Mul, Expr::Dim, Expr::Dim, t);
                terms.push(if c == 1 {
                    dd
                } else {
                    Expr::bin(BinOp::Mul, u(c), dd, t)
                });
            }
            let mut it = terms.into_iter();
            let first = it.next().unwrap_or(u(0));
            it.fold(first, |acc, x| Expr::bin(BinOp::Add, acc, x, t))
        }
    }
}

/// The entries of an array type, outermost first (`[[f64; D]; 2]` → `[2, D]`).
pub fn lens(t: &Ty) -> Vec<Len> {
    let mut out = Vec::new();
    let mut t = t;
    while let Ty::Array(e, l) = t {
        out.push(*l);
        t = e;
    }
    out
}

/// The scalar type at the bottom of an array type.
pub fn elem_scalar(t: &Ty) -> Scalar {
    let mut t = t;
    while let Ty::Array(e, _) = t {
        t = e;
    }
    Scalar::of(t)
}
