//! Type inference over {f64, usize, i32, bool, (), arrays}: union–find over
//! type variables, mirroring how rustc infers unsuffixed literals.
//!
//! An unsuffixed float literal is a *float variable*: it becomes `f64` when
//! it meets an `f64` (binary operator, assignment, argument…). rustc refuses
//! to call a method such as `sqrt` on a variable still unresolved at that
//! point, so the checker asks [`Infer::is_unresolved_float`] before method
//! calls and reports it in the subset's words instead.

use crate::ast::IntKind;
use std::fmt;

/// Length of an array type: a number or the dimension `D`; in programs
/// generated for derivatives (`crate::ad`) also an unsized flat array and
/// the number of seeds of a Jacobian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    Lit(u64),
    Dim,
    /// An unsized array (C `real g[]`, Rust `[f64]`).
    Flat,
    /// `a + b·D + c·D²` (the seeds of a Jacobian).
    Poly(u64, u64, u64),
}

impl Len {
    /// The length in dimension `dim` (`None` for [`Len::Flat`]).
    pub fn value(self, dim: u64) -> Option<u64> {
        match self {
            Len::Lit(n) => Some(n),
            Len::Dim => Some(dim),
            Len::Flat => None,
            Len::Poly(a, b, c) => Some(a + b * dim + c * dim * dim),
        }
    }
}

/// A type of the subset.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Real,
    Int(IntKind),
    Bool,
    Unit,
    Array(Box<Ty>, Len),
    Var(u32),
    /// After an error: unifies with everything, so one mistake is reported once.
    Error,
}

impl Ty {
    pub fn array(elem: Ty, len: Len) -> Ty {
        Ty::Array(Box::new(elem), len)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// An unsuffixed float literal (or what it flowed into).
    Float,
    /// An unsuffixed integer literal.
    Int,
    /// The result of a helper call: `f64` or `()`.
    HelperRet,
}

#[derive(Clone, Debug)]
enum Var {
    Link(u32),
    Unbound(VarKind),
    Bound(Ty),
}

#[derive(Default)]
pub struct Infer {
    vars: Vec<Var>,
}

impl Infer {
    pub fn fresh(&mut self, kind: VarKind) -> Ty {
        self.vars.push(Var::Unbound(kind));
        Ty::Var(self.vars.len() as u32 - 1)
    }

    fn root(&self, mut v: u32) -> u32 {
        while let Var::Link(next) = self.vars[v as usize] {
            v = next;
        }
        v
    }

    /// Follows variables bound to types; an unbound variable is returned as is.
    pub fn shallow(&self, t: &Ty) -> Ty {
        match t {
            Ty::Var(v) => {
                let r = self.root(*v);
                match &self.vars[r as usize] {
                    Var::Bound(t) => self.shallow(t),
                    _ => Ty::Var(r),
                }
            }
            t => t.clone(),
        }
    }

    /// The kind of an unbound variable.
    pub fn var_kind(&self, t: &Ty) -> Option<VarKind> {
        match self.shallow(t) {
            Ty::Var(r) => match self.vars[r as usize] {
                Var::Unbound(k) => Some(k),
                _ => None,
            },
            _ => None,
        }
    }

    pub fn is_unresolved_float(&self, t: &Ty) -> bool {
        self.var_kind(t) == Some(VarKind::Float)
    }

    pub fn is_float(&self, t: &Ty) -> bool {
        matches!(self.shallow(t), Ty::Real) || self.is_unresolved_float(t)
    }

    pub fn is_int(&self, t: &Ty) -> bool {
        matches!(self.shallow(t), Ty::Int(_)) || self.var_kind(t) == Some(VarKind::Int)
    }

    pub fn is_numeric(&self, t: &Ty) -> bool {
        self.is_float(t) || self.is_int(t) || self.var_kind(t) == Some(VarKind::HelperRet)
    }

    pub fn is_error(&self, t: &Ty) -> bool {
        matches!(self.shallow(t), Ty::Error)
    }

    fn bind(&mut self, v: u32, t: Ty) {
        self.vars[v as usize] = Var::Bound(t);
    }

    /// Makes `a` and `b` the same type; `Err` if they cannot be.
    pub fn unify(&mut self, a: &Ty, b: &Ty) -> Result<(), ()> {
        let (a, b) = (self.shallow(a), self.shallow(b));
        match (&a, &b) {
            (Ty::Error, _) | (_, Ty::Error) => Ok(()),
            (Ty::Var(x), Ty::Var(y)) if x == y => Ok(()),
            (Ty::Var(x), Ty::Var(y)) => {
                let kx = self.var_kind(&a).expect("unbound");
                let ky = self.var_kind(&b).expect("unbound");
                use VarKind::*;
                match (kx, ky) {
                    (k1, k2) if k1 == k2 => {
                        self.vars[*x as usize] = Var::Link(*y);
                        Ok(())
                    }
                    // A helper's result meeting a float: the helper returns
                    // `f64` (the only float it can return), so both are `f64`.
                    (HelperRet, Float) | (Float, HelperRet) => {
                        self.bind(*x, Ty::Real);
                        self.bind(*y, Ty::Real);
                        Ok(())
                    }
                    _ => Err(()),
                }
            }
            (Ty::Var(v), t) | (t, Ty::Var(v)) => {
                let kind = self.var_kind(&Ty::Var(*v)).expect("unbound");
                let ok = match kind {
                    VarKind::Float => matches!(t, Ty::Real),
                    VarKind::Int => matches!(t, Ty::Int(_)),
                    VarKind::HelperRet => matches!(t, Ty::Real | Ty::Unit),
                };
                if ok {
                    self.bind(*v, t.clone());
                    Ok(())
                } else {
                    Err(())
                }
            }
            (Ty::Array(e1, l1), Ty::Array(e2, l2)) => {
                if l1 != l2 {
                    return Err(());
                }
                self.unify(e1, e2)
            }
            (x, y) if x == y => Ok(()),
            _ => Err(()),
        }
    }

    /// The final type: variables replaced by their binding or by rustc's
    /// defaults (`f64` for floats, `i32` for integers, `f64` for helper results).
    pub fn resolve(&self, t: &Ty) -> Ty {
        match self.shallow(t) {
            Ty::Var(r) => match self.vars[r as usize] {
                Var::Unbound(VarKind::Int) => Ty::Int(IntKind::I32),
                _ => Ty::Real,
            },
            Ty::Array(e, l) => Ty::Array(Box::new(self.resolve(&e)), l),
            t => t,
        }
    }

    /// A description for error messages.
    pub fn describe(&self, t: &Ty) -> String {
        match self.shallow(t) {
            Ty::Var(_) => match self.var_kind(t) {
                Some(VarKind::Float) => "a float".into(),
                Some(VarKind::Int) => "an integer".into(),
                _ => "a helper's result".into(),
            },
            Ty::Real => "`f64`".into(),
            Ty::Int(k) => format!("`{}`", k.rust_name()),
            Ty::Bool => "`bool`".into(),
            Ty::Unit => "`()`".into(),
            t @ Ty::Array(..) => format!("`{}`", self.display(&t)),
            Ty::Error => "an erroneous value".into(),
        }
    }

    fn display(&self, t: &Ty) -> String {
        match self.shallow(t) {
            Ty::Array(e, l) => format!("[{}; {}]", self.display(&e), l),
            Ty::Var(_) => match self.var_kind(t) {
                Some(VarKind::Int) => "{integer}".into(),
                _ => "f64".into(),
            },
            Ty::Real => "f64".into(),
            Ty::Int(k) => k.rust_name().into(),
            Ty::Bool => "bool".into(),
            Ty::Unit => "()".into(),
            Ty::Error => "_".into(),
        }
    }
}

impl fmt::Display for Len {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Len::Lit(n) => write!(f, "{n}"),
            Len::Dim => write!(f, "D"),
            Len::Flat => write!(f, "_"),
            Len::Poly(a, b, c) => write!(f, "{a} + {b}·D + {c}·D²"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_resolve_through_chains() {
        let mut inf = Infer::default();
        let h = inf.fresh(VarKind::Float);
        let k = inf.fresh(VarKind::Float);
        inf.unify(&h, &k).unwrap();
        assert!(inf.is_unresolved_float(&h));
        inf.unify(&k, &Ty::Real).unwrap();
        assert!(!inf.is_unresolved_float(&h));
        assert_eq!(inf.resolve(&h), Ty::Real);
    }

    #[test]
    fn mixing_kinds_fails_and_defaults_apply() {
        let mut inf = Infer::default();
        let f = inf.fresh(VarKind::Float);
        let i = inf.fresh(VarKind::Int);
        assert!(inf.unify(&f, &i).is_err());
        assert!(inf.unify(&i, &Ty::Real).is_err());
        assert_eq!(inf.resolve(&i), Ty::Int(IntKind::I32));
        let r = inf.fresh(VarKind::HelperRet);
        inf.unify(&r, &f).unwrap();
        // a helper's result is `f64` as soon as it meets a float
        assert!(!inf.is_unresolved_float(&r) && !inf.is_unresolved_float(&f));
        assert_eq!(inf.shallow(&f), Ty::Real);
        let a = Ty::array(inf.fresh(VarKind::Float), Len::Dim);
        assert!(inf.unify(&a, &Ty::array(Ty::Real, Len::Lit(2))).is_err());
        inf.unify(&a, &Ty::array(Ty::Real, Len::Dim)).unwrap();
        assert_eq!(inf.describe(&a), "`[f64; D]`");
    }
}
