//! Tangent rules of expressions: `(e, ė)` for every real expression of the
//! subset (`ė = None`: zero, no code). The rules, conventions at kinks and
//! singular points included, are listed in the user guide (section
//! "Derivatives"); in short:
//!
//! - `a ± b`, `a·b`, `a/b`: the usual rules; `a % b` (`fmod`) is
//!   `a − n·b` with the integer `n = (a − a % b)/b`, so its tangent is
//!   `ȧ − n·ḃ`;
//! - casts to integers, comparisons, `floor`, `ceil`, `round`, `trunc`:
//!   derivative 0 (piecewise constant); `if`/`else`: the derivative of the
//!   branch taken;
//! - `abs(a)`: `−ȧ` if `a < 0`, else `ȧ` (at 0: `ȧ`); `min(a, b)`: `ḃ` if
//!   `b < a` (or `a` is NaN), else `ȧ` (ties: `ȧ`); `max(a, b)`: `ḃ` if
//!   `b > a` (or `a` is NaN), else `ȧ` (ties: `ȧ`);
//! - functions with a singular derivative (`sqrt`, `ln`, `log2`, `log10`,
//!   `cbrt`, `asin`, `acos`, `powf`, `powi`, `hypot`, `atan2`): a term
//!   `f′(a)·ȧ` is 0 when `ȧ = 0`, even where `f′(a)` is infinite (the
//!   directional derivative along a direction that does not move `a`), and
//!   ±∞ or NaN otherwise, as the derivative is.

use super::transform::Tangent;
use crate::ast::BinOp;
use crate::ir::*;
use crate::math::MathFn;

const R: Scalar = Scalar::Real;

fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::bin(op, a, b, R)
}

fn mul(a: Expr, b: Expr) -> Expr {
    bin(BinOp::Mul, a, b)
}

fn neg(a: Expr) -> Expr {
    match a {
        Expr::Real(v) => Expr::Real(-v),
        a => Expr::Neg(Box::new(a), R),
    }
}

fn math(f: &str, args: Vec<Expr>) -> Expr {
    Expr::Math(crate::math::function(f).expect("math function"), args)
}

/// `a + b` with zero terms left out.
fn sum(a: Option<Expr>, b: Option<Expr>) -> Option<Expr> {
    match (a, b) {
        (Some(a), Some(b)) => Some(bin(BinOp::Add, a, b)),
        (a, None) => a,
        (None, b) => b,
    }
}

impl Tangent<'_> {
    /// `(e, ė)`: the primal expression (its subexpressions possibly moved
    /// into primal temporaries) and its tangent.
    pub fn tan(&mut self, e: &Expr) -> (Expr, Option<Expr>) {
        match e {
            Expr::Read(p) if self.active[p.var] => (e.clone(), Some(Expr::Read(self.dplace(p)))),
            Expr::Neg(x, R) => {
                let (p, d) = self.tan(x);
                (neg(p), d.map(neg))
            }
            Expr::Bin(op @ (BinOp::Add | BinOp::Sub), a, b, R) => {
                let (pa, da) = self.tan(a);
                let (pb, db) = self.tan(b);
                let db = if *op == BinOp::Sub { db.map(neg) } else { db };
                (bin(*op, pa, pb), sum(da, db))
            }
            Expr::Bin(BinOp::Mul, a, b, R) => {
                let (pa, da) = self.tan(a);
                let (pb, db) = self.tan(b);
                let pa = if db.is_some() { self.keep(pa) } else { pa };
                let pb = if da.is_some() { self.keep(pb) } else { pb };
                let d = sum(
                    da.map(|d| mul(d, pb.clone())),
                    db.map(|d| mul(pa.clone(), d)),
                );
                (mul(pa, pb), d)
            }
            Expr::Bin(BinOp::Div, a, b, R) => {
                let (pa, da) = self.tan(a);
                let (pb, db) = self.tan(b);
                match (da, db) {
                    (None, None) => (bin(BinOp::Div, pa, pb), None),
                    (Some(da), None) => {
                        let pb = self.keep(pb);
                        let d = bin(BinOp::Div, da, pb.clone());
                        (bin(BinOp::Div, pa, pb), Some(d))
                    }
                    (da, Some(db)) => {
                        let pb = self.keep(pb);
                        let q = self.keep(bin(BinOp::Div, pa, pb.clone()));
                        let num = match da {
                            Some(da) => bin(BinOp::Sub, da, mul(q.clone(), db)),
                            None => neg(mul(q.clone(), db)),
                        };
                        (q, Some(bin(BinOp::Div, num, pb)))
                    }
                }
            }
            Expr::Bin(BinOp::Rem, a, b, R) => {
                let (pa, da) = self.tan(a);
                let (pb, db) = self.tan(b);
                if da.is_none() && db.is_none() {
                    return (bin(BinOp::Rem, pa, pb), None);
                }
                let Some(db) = db else {
                    return (bin(BinOp::Rem, pa, pb), da);
                };
                // fmod(a, b) = a − n·b with the integer n = (a − fmod(a, b))/b
                // (exactly the n fmod used, where trunc(a/b) may be one off
                // when a/b rounds up to an integer).
                let (pa, pb) = (self.keep(pa), self.keep(pb));
                let r = self.keep(bin(BinOp::Rem, pa.clone(), pb.clone()));
                let n = bin(BinOp::Div, bin(BinOp::Sub, pa, r.clone()), pb);
                (r, sum(da, Some(neg(mul(n, db)))))
            }
            Expr::Select(c, a, b) => {
                let (pa, da) = self.tan(a);
                let (pb, db) = self.tan(b);
                if da.is_none() && db.is_none() {
                    return (Expr::Select(c.clone(), Box::new(pa), Box::new(pb)), None);
                }
                let c = self.keep((**c).clone());
                let zero = || Expr::Real(0.0);
                let d = Expr::Select(
                    Box::new(c.clone()),
                    Box::new(da.unwrap_or_else(zero)),
                    Box::new(db.unwrap_or_else(zero)),
                );
                (
                    Expr::Select(Box::new(c), Box::new(pa), Box::new(pb)),
                    Some(d),
                )
            }
            Expr::Math(f, args) => self.math(f, args),
            e => {
                // Integers, booleans, casts: passive (piecewise constant in
                // any active value they read).
                (e.clone(), None)
            }
        }
    }

    /// `coef · ȧ`, 0 when `ȧ = 0` (even if `coef` is infinite).
    fn term(&mut self, coef: Expr, d: Expr) -> Expr {
        let d = self.keep_tangent(d);
        Expr::Select(
            Box::new(Expr::bin(BinOp::Eq, d.clone(), Expr::Real(0.0), R)),
            Box::new(Expr::Real(0.0)),
            Box::new(mul(coef, d)),
        )
    }

    fn math(&mut self, f: &'static MathFn, args: &[Expr]) -> (Expr, Option<Expr>) {
        let tans: Vec<(Expr, Option<Expr>)> = args.iter().map(|a| self.tan(a)).collect();
        if tans.iter().all(|(_, d)| d.is_none()) {
            let ps = tans.into_iter().map(|(p, _)| p).collect();
            return (Expr::Math(f, ps), None);
        }
        let ps: Vec<Expr> = tans.iter().map(|(p, _)| self.keep(p.clone())).collect();
        let ds: Vec<Option<Expr>> = tans.into_iter().map(|(_, d)| d).collect();
        let a = ps[0].clone();
        let da = ds[0].clone();
        let one = || Expr::Real(1.0);
        // The primal result, kept when the tangent reads it.
        let result = |t: &mut Self| t.keep(Expr::Math(f, ps.clone()));
        let d = match f.rust {
            "sqrt" => {
                let r = result(self);
                let c = bin(BinOp::Div, Expr::Real(0.5), r.clone());
                let d = da.map(|d| self.term(c, d));
                return (r, d);
            }
            "exp" => {
                let r = result(self);
                let d = da.map(|d| mul(r.clone(), d));
                return (r, d);
            }
            "exp2" => {
                let r = result(self);
                let c = mul(r.clone(), Expr::Real(std::f64::consts::LN_2));
                return (r, da.map(|d| mul(c, d)));
            }
            "ln" => {
                let c = bin(BinOp::Div, one(), a);
                da.map(|d| self.term(c, d))
            }
            "log2" | "log10" => {
                let k = if f.rust == "log2" {
                    std::f64::consts::LN_2
                } else {
                    std::f64::consts::LN_10
                };
                let c = bin(BinOp::Div, one(), mul(a, Expr::Real(k)));
                da.map(|d| self.term(c, d))
            }
            "sin" => da.map(|d| mul(math("cos", vec![a]), d)),
            "cos" => da.map(|d| mul(neg(math("sin", vec![a])), d)),
            "tan" => {
                let r = result(self);
                let c = bin(BinOp::Add, one(), mul(r.clone(), r.clone()));
                return (r, da.map(|d| mul(c, d)));
            }
            "tanh" => {
                let r = result(self);
                let c = bin(BinOp::Sub, one(), mul(r.clone(), r.clone()));
                return (r, da.map(|d| mul(c, d)));
            }
            "sinh" => da.map(|d| mul(math("cosh", vec![a]), d)),
            "cosh" => da.map(|d| mul(math("sinh", vec![a]), d)),
            "asin" | "acos" => {
                let s = math("sqrt", vec![bin(BinOp::Sub, one(), mul(a.clone(), a))]);
                let c = bin(BinOp::Div, one(), s);
                let c = if f.rust == "acos" { neg(c) } else { c };
                da.map(|d| self.term(c, d))
            }
            "atan" => da.map(|d| bin(BinOp::Div, d, bin(BinOp::Add, one(), mul(a.clone(), a)))),
            "cbrt" => {
                let r = result(self);
                let c = bin(
                    BinOp::Div,
                    one(),
                    mul(Expr::Real(3.0), mul(r.clone(), r.clone())),
                );
                let d = da.map(|d| self.term(c, d));
                return (r, d);
            }
            "abs" => da.map(|d| {
                let negative = Expr::bin(BinOp::Lt, a, Expr::Real(0.0), R);
                Expr::Select(Box::new(negative), Box::new(neg(d.clone())), Box::new(d))
            }),
            "min" | "max" => {
                let b = ps[1].clone();
                let cmp = if f.rust == "min" {
                    BinOp::Lt
                } else {
                    BinOp::Gt
                };
                // `b` is returned when it is strictly smaller (larger) or `a` is NaN.
                let take_b = Expr::bin(
                    BinOp::Or,
                    Expr::bin(cmp, b.clone(), a.clone(), R),
                    Expr::bin(BinOp::Ne, a.clone(), a, R),
                    Scalar::Bool,
                );
                let take_b = self.keep(take_b);
                let zero = || Expr::Real(0.0);
                Some(Expr::Select(
                    Box::new(take_b),
                    Box::new(ds[1].clone().unwrap_or_else(zero)),
                    Box::new(da.unwrap_or_else(zero)),
                ))
            }
            "mul_add" => {
                let (b, c) = (ps[1].clone(), ps[2].clone());
                let _ = c;
                let t1 = da.map(|d| mul(d, b));
                let t2 = ds[1].clone().map(|d| mul(a, d));
                sum(sum(t1, t2), ds[2].clone())
            }
            "powi" => {
                // n·a^(n−1)·ȧ, 0 for n = 0 (also at a = 0).
                let n = ps[1].clone();
                let nm1 = Expr::bin(
                    BinOp::Sub,
                    n.clone(),
                    Expr::Int(1, Some(crate::ast::IntKind::I32)),
                    Scalar::Int(crate::ast::IntKind::I32),
                );
                let c = mul(
                    Expr::Cast(
                        Box::new(n.clone()),
                        Scalar::Int(crate::ast::IntKind::I32),
                        R,
                    ),
                    math("powi", vec![a, nm1]),
                );
                let is_zero = Expr::bin(
                    BinOp::Eq,
                    n,
                    Expr::Int(0, Some(crate::ast::IntKind::I32)),
                    Scalar::Int(crate::ast::IntKind::I32),
                );
                da.map(|d| {
                    let t = self.term(c, d);
                    Expr::Select(Box::new(is_zero), Box::new(Expr::Real(0.0)), Box::new(t))
                })
            }
            "powf" => {
                let b = ps[1].clone();
                let r = result(self);
                // b·a^(b−1)·ȧ + a^b·ln(a)·ḃ
                let t1 = match da {
                    Some(d) => {
                        let c = mul(
                            b.clone(),
                            math("powf", vec![a.clone(), bin(BinOp::Sub, b, one())]),
                        );
                        Some(self.term(c, d))
                    }
                    None => None,
                };
                let t2 = match ds[1].clone() {
                    Some(d) => {
                        let c = mul(r.clone(), math("ln", vec![a]));
                        Some(self.term(c, d))
                    }
                    None => None,
                };
                return (r, sum(t1, t2));
            }
            "hypot" => {
                // (a·ȧ + b·ḃ)/r
                let b = ps[1].clone();
                let r = result(self);
                let t1 = da.map(|d| self.term(bin(BinOp::Div, a, r.clone()), d));
                let t2 = ds[1]
                    .clone()
                    .map(|d| self.term(bin(BinOp::Div, b, r.clone()), d));
                return (r, sum(t1, t2));
            }
            "atan2" => {
                // atan2(y, x): (x·ẏ − y·ẋ)/(x² + y²)
                let x = ps[1].clone();
                let y = a;
                let q = self.keep(bin(
                    BinOp::Add,
                    mul(x.clone(), x.clone()),
                    mul(y.clone(), y.clone()),
                ));
                let t1 = da.map(|d| self.term(bin(BinOp::Div, x, q.clone()), d));
                let t2 = ds[1]
                    .clone()
                    .map(|d| self.term(neg(bin(BinOp::Div, y, q)), d));
                sum(t1, t2)
            }
            // floor, ceil, round, trunc: piecewise constant.
            _ => None,
        };
        (Expr::Math(f, ps), d)
    }
}
