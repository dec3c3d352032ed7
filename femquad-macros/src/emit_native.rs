//! [`crate::ir`] → Rust source: the native translations (the `f32` version of
//! a function, and the derivatives) from the same program as the OpenCL C.
//!
//! Each function is printed for one precision and one dimension (`D`
//! replaced by 2 or 3), so the result has no generics. Every literal is
//! typed: a float literal is its `f64` value, converted with `as f32` in
//! single precision — the double rounding that OpenCL's `(real)0.1` does,
//! so that both sides start from the same `f32` constant. Helpers are called
//! through `__private::arg` (see its documentation): when the user's call
//! does not fit the helper, rustc reports it once, on the user's function,
//! not again here. Math functions are called in path form, `f32::sqrt(x)`.
//!
//! The walk over statements, and what the two languages print alike, is
//! [`crate::print`], shared with the OpenCL C printer [`crate::emit_c`];
//! here is what Rust prints its own way.

use crate::ast::{BinOp, IntKind};
use crate::check::{Len, Ty};
use crate::ir::*;
use crate::print::{Lines, P_ADD, P_AND, P_MUL, P_OR, P_PRIMARY, P_UNARY, Syntax, paren};

/// The precision and dimension a function is printed for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Flavor {
    /// `"f32"` or `"f64"`.
    pub real: &'static str,
    /// The value of `D` (`None`: the function does not use it).
    pub dim: Option<u64>,
}

const PRIVATE: &str = "::femquad::physics::__private";

/// Rust's keywords: a name from a raw identifier (`r#type`) is printed raw.
const KEYWORDS: &[&str] = &[
    "as", "break", "const", "continue", "crate", "else", "enum", "extern", "false", "fn", "for",
    "if", "impl", "in", "let", "loop", "match", "mod", "move", "mut", "pub", "ref", "return",
    "self", "Self", "static", "struct", "super", "trait", "true", "type", "unsafe", "use", "where",
    "while", "async", "await", "dyn", "abstract", "become", "box", "do", "final", "macro",
    "override", "priv", "typeof", "unsized", "virtual", "yield", "try", "gen",
];

fn ident(name: &str) -> String {
    if KEYWORDS.contains(&name) {
        format!("r#{name}")
    } else {
        name.to_string()
    }
}

impl Flavor {
    fn scalar(&self, s: Scalar) -> &'static str {
        match s {
            Scalar::Real => self.real,
            Scalar::Int(IntKind::Usize) => "usize",
            Scalar::Int(IntKind::I32) => "i32",
            Scalar::Bool => "bool",
        }
    }

    fn len(&self, l: Len) -> String {
        match (l, self.dim) {
            (Len::Lit(n), _) => n.to_string(),
            (Len::Dim, None) => "D".into(),
            (l, d) => l.value(d.unwrap_or(0)).unwrap_or(0).to_string(),
        }
    }

    /// The Rust type of `t`.
    pub fn ty(&self, t: &Ty) -> String {
        match t {
            Ty::Array(e, Len::Flat) => format!("[{}]", self.ty(e)),
            Ty::Array(e, l) => format!("[{}; {}]", self.ty(e), self.len(*l)),
            t => self.scalar(Scalar::of(t)).into(),
        }
    }

    /// A zero value of type `t` (arrays are initialized in Rust).
    fn zero(&self, t: &Ty) -> String {
        match t {
            Ty::Array(e, l) => format!("[{}; {}]", self.zero(e), self.len(*l)),
            Ty::Bool => "false".into(),
            Ty::Int(k) => format!("0{}", k.rust_name()),
            _ => self.literal(0.0),
        }
    }

    /// A float literal in this precision.
    pub fn literal(&self, v: f64) -> String {
        let lit = if v.is_sign_negative() {
            format!("(-{:?}f64)", -v)
        } else {
            format!("{v:?}f64")
        };
        if self.real == "f64" {
            lit
        } else {
            format!("({lit} as {})", self.real)
        }
    }
}

/// The parameter list of `func`: `name: &[f32; 2], k: usize, …`.
pub fn params(func: &Func, flavor: Flavor) -> String {
    func.params
        .iter()
        .map(|&p| {
            let v = &func.vars[p];
            let name = ident(&v.name);
            match &v.ty {
                t @ Ty::Array(..) if v.mutable => format!("{name}: &mut {}", flavor.ty(t)),
                t @ Ty::Array(..) => format!("{name}: &{}", flavor.ty(t)),
                t if v.mutable => format!("mut {name}: {}", flavor.ty(t)),
                t => format!("{name}: {}", flavor.ty(t)),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `fn name(params) [-> real] { body }`, with the lints the translation
/// may trip allowed.
pub fn function(
    func: &Func,
    vis: &str,
    name: &str,
    flavor: Flavor,
    callee: &dyn Fn(Callee) -> String,
) -> String {
    let ret = if func.ret.is_some() {
        format!(" -> {}", flavor.real)
    } else {
        String::new()
    };
    let mut p = Printer::new(func, flavor, callee, 1);
    p.stmts(&func.body);
    if let Some(r) = &func.ret {
        let r = p.expr(r).0;
        p.line(&r);
    }
    format!(
        "#[allow(warnings, clippy::all, arithmetic_overflow, unconditional_panic)]\n\
         #[inline]\n{vis}fn {name}({}){ret} {{\n{}}}\n",
        params(func, flavor),
        p.lines.into_string()
    )
}

/// A helper tangent's variants as one function generic over the variant:
/// `fn name<const MASK: usize>(params) { match MASK { k => { … }, …, _ => { all active } } }`
/// (the variants share their parameters; rustc compiles the arms a caller
/// uses).
pub fn variants(
    funcs: &[Func],
    vis: &str,
    name: &str,
    flavor: Flavor,
    callee: &dyn Fn(Callee) -> String,
) -> String {
    let arm = |func: &Func| {
        let mut p = Printer::new(func, flavor, callee, 3);
        p.stmts(&func.body);
        p.lines.into_string()
    };
    let mut arms = String::new();
    for (k, func) in funcs.iter().enumerate().skip(1) {
        arms.push_str(&format!("        {k} => {{\n{}        }}\n", arm(func)));
    }
    arms.push_str(&format!("        _ => {{\n{}        }}\n", arm(&funcs[0])));
    format!(
        "#[allow(warnings, clippy::all, arithmetic_overflow, unconditional_panic)]\n\
         #[inline]\n{vis}fn {name}<const MASK: usize>({}) {{\n    match MASK {{\n{arms}    }}\n}}\n",
        params(&funcs[0], flavor),
    )
}

struct Printer<'a> {
    func: &'a Func,
    flavor: Flavor,
    callee: &'a dyn Fn(Callee) -> String,
    lines: Lines,
}

// Rust's level of comparisons (which do not chain), besides the levels it
// shares with C ([`crate::print`]).
const P_CMP: u8 = 9;

/// The precedence of `op` in Rust. Like [`crate::emit_c`]'s table but not
/// shared with it: Rust puts every comparison on one level that does not
/// chain, C ranks `==`, `!=` below `<`, `<=`, `>`, `>=`.
fn prec(op: BinOp) -> u8 {
    match op {
        BinOp::Or => P_OR,
        BinOp::And => P_AND,
        BinOp::Add | BinOp::Sub => P_ADD,
        BinOp::Mul | BinOp::Div | BinOp::Rem => P_MUL,
        _ => P_CMP,
    }
}

impl<'a> Printer<'a> {
    fn new(
        func: &'a Func,
        flavor: Flavor,
        callee: &'a dyn Fn(Callee) -> String,
        indent: usize,
    ) -> Self {
        Printer {
            func,
            flavor,
            callee,
            lines: Lines::new(indent),
        }
    }

    /// A place as an array value: a whole array parameter is a reference,
    /// dereferenced here.
    fn array(&mut self, p: &Place) -> String {
        let v = &self.func.vars[p.var];
        if p.index.is_empty() && matches!(v.kind, VarKind::Role(_) | VarKind::Param) {
            format!("(*{})", ident(&v.name))
        } else {
            self.place(p)
        }
    }
}

impl Syntax for Printer<'_> {
    fn lines(&mut self) -> &mut Lines {
        &mut self.lines
    }

    fn var_name(&self, v: VarId) -> String {
        ident(&self.func.vars[v].name)
    }

    fn callee(&self, c: Callee) -> String {
        (self.callee)(c)
    }

    fn condition(&mut self, cond: &Expr) -> String {
        self.expr(cond).0
    }

    fn declare(&mut self, var: VarId, init: &Option<Expr>) {
        let v = &self.func.vars[var];
        let name = ident(&v.name);
        let t = self.flavor.ty(&v.ty);
        let m = if v.mutable { "mut " } else { "" };
        match (&v.ty, init) {
            (ty @ Ty::Array(..), _) => {
                let z = self.flavor.zero(ty);
                self.line(&format!("let mut {name}: {t} = {z};"));
            }
            (_, Some(e)) => {
                let e = self.expr(e).0;
                self.line(&format!("let {m}{name}: {t} = {e};"));
            }
            (_, None) => self.line(&format!("let {m}{name}: {t};")),
        }
    }

    fn copy(&mut self, dst: &Place, src: &Place, _ty: &Ty) {
        let (d, s) = (self.array(dst), self.array(src));
        self.line(&format!("{d} = {s};"));
    }

    fn for_head(&mut self, var: VarId, lo: &Expr, hi: &Expr, inclusive: bool) -> String {
        let i = ident(&self.func.vars[var].name);
        let (lo, hi) = (self.expr(lo), self.expr(hi));
        let (lo, hi) = (paren(lo, P_UNARY), paren(hi, P_UNARY));
        let range = if inclusive { "..=" } else { ".." };
        format!("for {i} in {lo}{range}{hi}")
    }

    fn call_into(&mut self, result: VarId, call: &str) -> String {
        let r = &self.func.vars[result];
        let (name, t) = (ident(&r.name), self.flavor.ty(&r.ty));
        let m = if r.mutable { "mut " } else { "" };
        format!("let {m}{name}: {t} = {PRIVATE}::arg({call});")
    }

    fn arg(&mut self, a: &Arg) -> String {
        let v = match a {
            Arg::Value(e) => self.expr(e).0,
            Arg::Array { place, mutable } => {
                let m = if *mutable { "&mut " } else { "&" };
                format!("{m}{}", self.array(place))
            }
        };
        format!("{PRIVATE}::arg({v})")
    }

    /// The Rust text of `e` and its precedence.
    fn expr(&mut self, e: &Expr) -> (String, u8) {
        match e {
            Expr::Real(v) => (self.flavor.literal(*v), P_PRIMARY),
            Expr::Int(v, k) => {
                let s = match k {
                    Some(k) => format!("{v}{}", k.rust_name()),
                    None => v.to_string(),
                };
                if *v < 0 {
                    (format!("({s})"), P_PRIMARY)
                } else {
                    (s, P_PRIMARY)
                }
            }
            Expr::Bool(b) => (b.to_string(), P_PRIMARY),
            Expr::Dim => match self.flavor.dim {
                Some(d) => (format!("{d}usize"), P_PRIMARY),
                None => ("D".into(), P_PRIMARY),
            },
            Expr::Read(p) => (self.place(p), P_PRIMARY),
            Expr::Neg(x, _) => {
                let x = paren(self.expr(x), P_UNARY);
                (format!("-{x}"), P_UNARY)
            }
            Expr::Not(x) => self.not(x),
            Expr::Bin(op, a, b, _) => {
                let p = prec(*op);
                // Comparisons do not chain in Rust; `&&` in `||` for legibility.
                let min_left = match p {
                    P_CMP => P_CMP + 1,
                    P_OR => P_AND + 1,
                    _ => p,
                };
                self.binary(op.symbol(), a, b, p, min_left)
            }
            Expr::Cast(x, _, to) => {
                let x = paren(self.expr(x), P_UNARY);
                (format!("({x} as {})", self.flavor.scalar(*to)), P_PRIMARY)
            }
            Expr::Math(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a).0).collect();
                let r = self.flavor.real;
                (format!("{r}::{}({})", f.rust, args.join(", ")), P_PRIMARY)
            }
            Expr::Select(c, a, b) => {
                let (c, a, b) = (self.expr(c).0, self.expr(a).0, self.expr(b).0);
                (format!("(if {c} {{ {a} }} else {{ {b} }})"), P_PRIMARY)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_typed() {
        let f32 = Flavor {
            real: "f32",
            dim: None,
        };
        let f64 = Flavor {
            real: "f64",
            dim: Some(2),
        };
        assert_eq!(f32.literal(0.7), "(0.7f64 as f32)");
        assert_eq!(f64.literal(-2.5e-300), "(-2.5e-300f64)");
        assert_eq!(f64.literal(1e16), "1e16f64");
        let t = Ty::array(Ty::array(Ty::Real, Len::Dim), Len::Lit(3));
        assert_eq!(f64.ty(&t), "[[f64; 2]; 3]");
        assert_eq!(f32.zero(&Ty::array(Ty::Bool, Len::Lit(2))), "[false; 2]");
        assert_eq!(ident("type"), "r#type");
    }
}
