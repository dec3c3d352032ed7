//! [`crate::ir`] → OpenCL C.
//!
//! The source uses the type `real` and the macro `DIM`, both defined by the
//! kernel that includes it. Float literals are written `(real)<literal>` with
//! all the digits needed to round-trip an f64. Helper functions are named
//! when a physics' source is assembled (at compile time; their names carry a
//! hash of their source, so two helpers with the same Rust name cannot
//! clash): the source refers to the helpers it calls through placeholders
//! `@@i@@` and to the function being defined as `@@self@@`, which
//! [`crate::emit_rust`] turns into the pieces of the template that
//! `femquad::physics::__private::source_bytes` assembles.
//!
//! Types: `f64` is `real`, `usize` is `ulong` (64 bits, as on the hosts Rust
//! runs on), `i32` is `int` (with `+ - *` and negation wrapping through
//! `uint`, as Rust's release builds do, instead of C's undefined overflow),
//! `bool` is `bool`. Float-to-integer casts saturate (`convert_int_sat`,
//! `convert_ulong_sat`: NaN gives 0), as Rust's `as` does. Parentheses are
//! written only where C's precedence needs them, so long sums stay flat.
//!
//! The walk over statements, and what the two languages print alike, is
//! [`crate::print`], shared with the Rust printer [`crate::emit_native`];
//! here is what C prints its own way.

use crate::ast::{BinOp, IntKind};
use crate::check::{Extent, Len, PhysicsSig, Role, Ty};
use crate::ir::*;
use crate::print::{Lines, P_ADD, P_AND, P_MUL, P_OR, P_PRIMARY, P_UNARY, Syntax, paren};

/// The placeholder for the `i`-th helper of a function's template.
pub fn placeholder(i: usize) -> String {
    format!("@@{i}@@")
}

/// The placeholder for a helper's own C name in its definition.
pub const SELF_PLACEHOLDER: &str = "@@self@@";

/// An f64 as a C literal with round-trip precision, cast to `real`.
pub fn real_literal(v: f64) -> String {
    format!("(real){v:?}")
}

/// The C type of a scalar.
pub fn scalar_c(s: Scalar) -> &'static str {
    match s {
        Scalar::Real => "real",
        Scalar::Int(IntKind::Usize) => "ulong",
        Scalar::Int(IntKind::I32) => "int",
        Scalar::Bool => "bool",
    }
}

fn len_c(l: Len) -> String {
    match l {
        Len::Lit(n) => n.to_string(),
        Len::Dim => "DIM".into(),
        Len::Flat => String::new(),
        Len::Poly(a, b, c) => {
            let mut terms = Vec::new();
            if a > 0 {
                terms.push(a.to_string());
            }
            match b {
                0 => {}
                1 => terms.push("DIM".into()),
                b => terms.push(format!("{b} * DIM")),
            }
            match c {
                0 => {}
                1 => terms.push("DIM * DIM".into()),
                c => terms.push(format!("{c} * DIM * DIM")),
            }
            match terms.len() {
                0 => "0".into(),
                1 => terms.pop().expect("one"),
                _ => format!("({})", terms.join(" + ")),
            }
        }
    }
}

/// `real name[3][DIM]`.
pub fn decl(t: &Ty, name: &str) -> String {
    let dims: String = lens(t).iter().map(|l| format!("[{}]", len_c(*l))).collect();
    format!("{} {name}{dims}", scalar_c(elem_scalar(t)))
}

/// The declaration of a parameter.
pub fn param_decl(v: &Var) -> String {
    match &v.ty {
        Ty::Array(..) if v.mutable => decl(&v.ty, &v.name),
        Ty::Array(..) => format!("const {}", decl(&v.ty, &v.name)),
        t if v.mutable => format!("{} {}", scalar_c(Scalar::of(t)), v.name),
        t => format!("const {} {}", scalar_c(Scalar::of(t)), v.name),
    }
}

/// The placeholder callee names of a template: helper `i` is `@@i@@`, the
/// tangent variants it calls follow, in the order of `refs`
/// ([`tangent_refs`]).
pub fn template_callee(n_helpers: usize, refs: Vec<(usize, usize)>) -> impl Fn(Callee) -> String {
    move |c| match c {
        Callee::Helper(i) => placeholder(i),
        Callee::HelperTangent(i, k) => {
            let at = refs
                .iter()
                .position(|r| *r == (i, k))
                .expect("tangent variant");
            placeholder(n_helpers + at)
        }
    }
}

/// The template of a helper: `real @@self@@(params) { … }`; `what`
/// describes it in the comment (`helper fn kappa`, `tangent of helper fn
/// kappa`).
pub fn helper(func: &Func, what: &str, n_helpers: usize) -> String {
    let params: Vec<String> = func
        .params
        .iter()
        .map(|&p| param_decl(&func.vars[p]))
        .collect();
    let ret = if func.ret.is_some() { "real" } else { "void" };
    format!(
        "/* #[pointwise] {what} */\n{ret} {SELF_PLACEHOLDER}({})\n{{\n{}}}\n",
        params.join(", "),
        body(func, &template_callee(n_helpers, tangent_refs(func)))
    )
}

/// The inputs of every physics function and its derivatives, in the fixed
/// order of [`Role::ALL`]: `n` is the outward unit normal (boundary
/// physics), `u_t` the time derivative of `u`, `t` the time.
const INPUTS: &str = "const real u[], const real grad_u[][DIM], const real a[], \
    const real grad_a[][DIM], const real x[], const real constants[], const real n[], \
    const real u_t[], const real t";

/// The fixed signature of a physics' tangent function.
pub fn tangent_signature(c_name: &str) -> String {
    format!(
        "void {c_name}({INPUTS}, const real du[], const real dgrad_u[][DIM], \
         const real du_t[], real df0[], real df1[][DIM])"
    )
}

/// The fixed signature of a physics' Jacobian function.
pub fn jacobian_signature(c_name: &str) -> String {
    format!("void {c_name}({INPUTS}, real g0[], real g1[], real g2[], real g3[])")
}

/// The fixed signature of a physics' Jacobian with respect to `u_t`.
pub fn jacobian_u_t_signature(c_name: &str) -> String {
    format!("void {c_name}({INPUTS}, real g0_t[], real g2_t[])")
}

/// A derivative of a physics: `/* what */ signature { body }`; `refs`:
/// the tangent variants of the physics' template, in placeholder order.
pub fn physics_derivative(
    func: &Func,
    what: &str,
    signature: &str,
    n_helpers: usize,
    refs: &[(usize, usize)],
) -> String {
    format!(
        "/* #[pointwise] {what} */\n{signature}\n{{\n{}}}\n",
        body(func, &template_callee(n_helpers, refs.to_vec()))
    )
}

/// The fixed signature of a physics function named `c_name`.
pub fn physics_signature(c_name: &str) -> String {
    format!("void {c_name}({INPUTS}, real f0[], real f1[][DIM])")
}

/// The arrays of a physics as the comment at the head of its C function
/// shows them, `grad_u: [1][D], t: scalar, f1: [1][D]` (`D`: the dimension): with the
/// dimensions it is defined for and its body, they determine everything the
/// kernels use of the physics' info (its sizes, which inputs it reads,
/// which outputs it writes, its linearity), so that its source (whose hash
/// keys the kernel caches) does.
pub fn signature_comment(sig: &PhysicsSig) -> String {
    let extent = |e: Extent| match e {
        Extent::Fixed(n) => format!("[{n}]"),
        Extent::Dim => "[D]".into(),
    };
    sig.params
        .iter()
        .map(|&role| {
            let lens = match role {
                Role::U | Role::F0 => extent(sig.n_comp),
                Role::GradU | Role::F1 => format!("{}[D]", extent(sig.n_comp)),
                Role::A => extent(sig.n_aux),
                Role::GradA => format!("{}[D]", extent(sig.n_aux)),
                Role::X | Role::N => "[D]".into(),
                Role::UT => extent(sig.n_comp),
                Role::T => "scalar".into(),
                Role::Constants => format!("[{}]", sig.n_constants),
            };
            format!("{}: {lens}", role.name())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The source of a physics (a template if it calls helpers); `fixed_dim`:
/// the only dimension it is defined for, if any.
pub fn physics(
    func: &Func,
    sig: &PhysicsSig,
    rust_name: &str,
    c_name: &str,
    fixed_dim: Option<u64>,
    n_helpers: usize,
) -> String {
    let mut src = String::new();
    if let Some(d) = fixed_dim {
        src.push_str(&format!(
            "#if DIM != {d}\n#error \"{c_name} (#[pointwise] fn {rust_name}) is defined for \
             dimension {d} only\"\n#endif\n"
        ));
    }
    src.push_str(&format!(
        "/* #[pointwise] fn {rust_name}({}) */\n{}\n{{\n{}}}\n",
        signature_comment(sig),
        physics_signature(c_name),
        body(func, &template_callee(n_helpers, tangent_refs(func)))
    ));
    src
}

/// Prints the body of `func` (without braces), one level indented; `callee`
/// names the functions it calls.
pub fn body(func: &Func, callee: &dyn Fn(Callee) -> String) -> String {
    let mut p = Printer::new(func, callee, 1);
    p.stmts(&func.body);
    if let Some(r) = &func.ret {
        let r = p.expr(r).0;
        p.line(&format!("return {r};"));
    }
    p.lines.into_string()
}

struct Printer<'a> {
    func: &'a Func,
    callee: &'a dyn Fn(Callee) -> String,
    lines: Lines,
    loops: usize,
}

// C's precedence levels besides those it shares with Rust
// ([`crate::print`]): `?:` and its two levels of comparison.
const P_SELECT: u8 = 3;
const P_EQ: u8 = 9;
const P_REL: u8 = 10;

/// The precedence of `op` in C. Like [`crate::emit_native`]'s table but not
/// shared with it: C ranks `==`, `!=` below `<`, `<=`, `>`, `>=` (and has
/// `?:`), Rust puts every comparison on one level that does not chain.
fn prec(op: BinOp) -> u8 {
    match op {
        BinOp::Or => P_OR,
        BinOp::And => P_AND,
        BinOp::Eq | BinOp::Ne => P_EQ,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => P_REL,
        BinOp::Add | BinOp::Sub => P_ADD,
        BinOp::Mul | BinOp::Div | BinOp::Rem => P_MUL,
    }
}

/// Whether an integer expression is a compile-time constant (its
/// overflow, if any, was rejected by the checker).
fn constant(e: &Expr) -> bool {
    match e {
        Expr::Int(..) | Expr::Dim => true,
        Expr::Bin(_, a, b, _) => constant(a) && constant(b),
        Expr::Neg(x, _) => constant(x),
        _ => false,
    }
}

impl<'a> Printer<'a> {
    fn new(func: &'a Func, callee: &'a dyn Fn(Callee) -> String, indent: usize) -> Self {
        Printer {
            func,
            callee,
            lines: Lines::new(indent),
            loops: 0,
        }
    }

    fn fresh_loop(&mut self) -> String {
        self.loops += 1;
        format!("pw_i{}", self.loops)
    }
}

impl Syntax for Printer<'_> {
    fn lines(&mut self) -> &mut Lines {
        &mut self.lines
    }

    fn var_name(&self, v: VarId) -> String {
        self.func.vars[v].name.clone()
    }

    fn callee(&self, c: Callee) -> String {
        (self.callee)(c)
    }

    fn condition(&mut self, cond: &Expr) -> String {
        format!("({})", self.expr(cond).0)
    }

    fn declare(&mut self, var: VarId, init: &Option<Expr>) {
        let v = &self.func.vars[var];
        match (&v.ty, init) {
            (t @ Ty::Array(..), _) => {
                let d = decl(t, &v.name);
                self.line(&format!("{d};"));
            }
            (t, Some(e)) => {
                let q = if v.mutable { "" } else { "const " };
                let (t, name) = (scalar_c(Scalar::of(t)), v.name.clone());
                let e = self.expr(e).0;
                self.line(&format!("{q}{t} {name} = {e};"));
            }
            (t, None) => {
                let d = format!("{} {};", scalar_c(Scalar::of(t)), v.name);
                self.line(&d);
            }
        }
    }

    fn copy(&mut self, dst: &Place, src: &Place, ty: &Ty) {
        let (d, s) = (self.place(dst), self.place(src));
        let mut loops = String::new();
        let mut idx = String::new();
        for l in lens(ty) {
            let i = self.fresh_loop();
            loops.push_str(&format!(
                "for (int {i} = 0; {i} < {n}; ++{i}) ",
                n = len_c(l)
            ));
            idx.push_str(&format!("[{i}]"));
        }
        self.line(&format!("{loops}{d}{idx} = {s}{idx};"));
    }

    fn for_head(&mut self, var: VarId, lo: &Expr, hi: &Expr, inclusive: bool) -> String {
        let v = &self.func.vars[var];
        let (t, i) = (scalar_c(Scalar::of(&v.ty)), v.name.clone());
        let (lo, hi) = (self.expr(lo).0, self.expr(hi).0);
        let cmp = if inclusive { "<=" } else { "<" };
        format!("for ({t} {i} = {lo}; {i} {cmp} {hi}; ++{i})")
    }

    fn call_into(&mut self, result: VarId, call: &str) -> String {
        let r = &self.func.vars[result];
        let q = if r.mutable { "" } else { "const " };
        let t = scalar_c(Scalar::of(&r.ty));
        format!("{q}{t} {} = {call};", r.name)
    }

    fn arg(&mut self, a: &Arg) -> String {
        match a {
            Arg::Value(e) => self.expr(e).0,
            Arg::Array { place, mutable } => {
                let p = self.place(place);
                match self.func.place_ty(place) {
                    // `real (*)[N]` does not convert implicitly to `const real (*)[N]`.
                    Ty::Array(elem, _) if !mutable && matches!(*elem, Ty::Array(..)) => {
                        format!("(__private const {})({p})", decl(&elem, "(*)"))
                    }
                    _ => p,
                }
            }
        }
    }

    /// The C text of `e` and its precedence.
    fn expr(&mut self, e: &Expr) -> (String, u8) {
        match e {
            Expr::Real(v) => (real_literal(*v), P_UNARY),
            Expr::Int(v, _) if *v < 0 => (format!("({v})"), P_PRIMARY),
            Expr::Int(v, _) => (v.to_string(), P_PRIMARY),
            Expr::Bool(b) => (b.to_string(), P_PRIMARY),
            Expr::Dim => ("DIM".into(), P_PRIMARY),
            Expr::Read(p) => (self.place(p), P_PRIMARY),
            Expr::Neg(x, Scalar::Int(IntKind::I32)) if !constant(x) => {
                let x = paren(self.expr(x), P_UNARY);
                (format!("(int)(0u - (uint){x})"), P_UNARY)
            }
            Expr::Neg(x, _) => {
                let x = self.expr(x);
                let x = if x.0.starts_with('-') {
                    format!("({})", x.0)
                } else {
                    paren(x, P_UNARY)
                };
                (format!("-{x}"), P_UNARY)
            }
            Expr::Not(x) => self.not(x),
            Expr::Bin(BinOp::Rem, a, b, Scalar::Real) => {
                let (a, b) = (self.expr(a).0, self.expr(b).0);
                (format!("fmod({a}, {b})"), P_PRIMARY)
            }
            Expr::Bin(
                op @ (BinOp::Add | BinOp::Sub | BinOp::Mul),
                a,
                b,
                Scalar::Int(IntKind::I32),
            ) if !(constant(a) && constant(b)) => {
                let a = paren(self.expr(a), P_UNARY);
                let b = paren(self.expr(b), P_UNARY);
                let op = op.symbol();
                (format!("(int)((uint){a} {op} (uint){b})"), P_UNARY)
            }
            Expr::Bin(op, a, b, _) => {
                let p = prec(*op);
                // Comparisons and `&&` inside `||` are parenthesized for
                // legibility (C would not need it).
                let min_left = match p {
                    P_EQ | P_REL => P_REL + 1,
                    P_OR => P_AND + 1,
                    _ => p,
                };
                self.binary(op.symbol(), a, b, p, min_left)
            }
            Expr::Cast(x, from, to) => match (from, to) {
                (Scalar::Real, Scalar::Int(IntKind::I32)) => {
                    (format!("convert_int_sat({})", self.expr(x).0), P_PRIMARY)
                }
                (Scalar::Real, Scalar::Int(IntKind::Usize)) => {
                    (format!("convert_ulong_sat({})", self.expr(x).0), P_PRIMARY)
                }
                _ => {
                    let x = paren(self.expr(x), P_UNARY);
                    (format!("({}){x}", scalar_c(*to)), P_UNARY)
                }
            },
            Expr::Math(f, args) => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a).0).collect();
                (format!("{}({})", f.c, args.join(", ")), P_PRIMARY)
            }
            Expr::Select(c, a, b) => {
                let c = paren(self.expr(c), P_SELECT + 1);
                let a = paren(self.expr(a), P_SELECT + 1);
                let b = paren(self.expr(b), P_SELECT + 1);
                (format!("{c} ? {a} : {b}"), P_SELECT)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_round_trip() {
        assert_eq!(real_literal(0.1), "(real)0.1");
        assert_eq!(real_literal(1.0 / 3.0), "(real)0.3333333333333333");
        assert_eq!(real_literal(-2.5e-300), "(real)-2.5e-300");
        assert_eq!(real_literal(1e16), "(real)1e16");
        for v in [0.1, 1.0 / 3.0, 6.02214076e23, 5e-324] {
            let text = real_literal(v);
            assert_eq!(text[6..].parse::<f64>().unwrap(), v);
        }
    }

    fn print(e: &Expr) -> String {
        let func = Func {
            vars: vec![Var {
                name: "x".into(),
                ty: Ty::Real,
                mutable: false,
                kind: VarKind::Local,
            }],
            params: vec![],
            body: vec![],
            ret: None,
        };
        Printer::new(&func, &|_| String::new(), 0).expr(e).0
    }

    #[test]
    fn parentheses_follow_precedence() {
        let x = || Expr::read(0);
        let r = Scalar::Real;
        // a long left-associated sum stays flat (clang limits nesting to 256)
        let mut sum = x();
        for _ in 0..300 {
            sum = Expr::bin(BinOp::Add, sum, x(), r);
        }
        let s = print(&sum);
        assert!(!s.contains('('), "{}", &s[..40]);
        // right-nested and mixed operators keep theirs
        let e = Expr::bin(
            BinOp::Sub,
            x(),
            Expr::bin(BinOp::Add, x(), Expr::bin(BinOp::Mul, x(), x(), r), r),
            r,
        );
        assert_eq!(print(&e), "x - (x + x * x)");
        let neg = Expr::Neg(Box::new(Expr::Real(-1.0)), r);
        assert_eq!(print(&neg), "-(real)-1.0");
        let cmp = Expr::bin(
            BinOp::Eq,
            Expr::bin(BinOp::Lt, x(), x(), r),
            Expr::Bool(true),
            Scalar::Bool,
        );
        assert_eq!(print(&cmp), "(x < x) == true");
    }
}
