//! The generated programs: a physics and its helpers as a small syntax
//! tree, and its two printings — the `#[pointwise]` source under test, and
//! a plain Rust copy whose math calls go through `runtime::pt` (perturbed
//! on request, to measure how far the math library's rounding can move the
//! result; see `crate::verdict`).
//!
//! The plain copy in `f32` is written the way the macro defines single
//! precision: `f64` replaced by `f32`, each float literal rounded from its
//! `f64` value (`(0.7f64 as f32)`).
//!
//! (Longer than most files: the tree and its two printings must stay in
//! step, construct by construct, so they are kept side by side.)

use std::fmt::Write;

/// A type of the subset.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Real,
    Usize,
    I32,
    Bool,
    Arr(Box<Ty>, Len),
}

impl Ty {
    pub fn arr(elem: Ty, len: Len) -> Ty {
        Ty::Arr(Box::new(elem), len)
    }

    pub fn is_int(&self) -> bool {
        matches!(self, Ty::Usize | Ty::I32)
    }

    /// Whether a length of this type is `D`.
    pub fn uses_d(&self) -> bool {
        match self {
            Ty::Arr(e, l) => *l == Len::D || e.uses_d(),
            _ => false,
        }
    }

    /// The scalar at the bottom of an array type.
    pub fn scalar(&self) -> &Ty {
        match self {
            Ty::Arr(e, _) => e.scalar(),
            t => t,
        }
    }
}

/// An array length: a number or the dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    N(u64),
    D,
}

impl Len {
    /// The smallest value the length takes (2 for `D`).
    pub fn min(self) -> u64 {
        match self {
            Len::N(n) => n,
            Len::D => 2,
        }
    }

    /// Whether every index below `self` is valid for length `other`.
    pub fn within(self, other: Len) -> bool {
        match (self, other) {
            (Len::N(a), Len::N(b)) => a <= b,
            (Len::N(a), Len::D) => a <= 2,
            (Len::D, Len::N(b)) => b >= 3,
            (Len::D, Len::D) => true,
        }
    }
}

/// The dimensions a physics is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dims {
    /// `const D: usize`.
    Generic,
    /// Literal 2 or 3 in the array types.
    Fixed(u64),
    /// No dimension-sized array.
    Free,
}

impl Dims {
    pub fn list(self) -> Vec<usize> {
        match self {
            Dims::Fixed(d) => vec![d as usize],
            _ => vec![2, 3],
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A non-negative float literal.
    Float(f64),
    /// An integer literal and its suffix.
    Int(u64, Option<&'static str>),
    Bool(bool),
    Var(String),
    /// `std::f64::consts::NAME`.
    Const(&'static str),
    Index(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    /// A binary operator; `real` when its operands are `f64`.
    Bin(&'static str, Box<Expr>, Box<Expr>, bool),
    Cast(Box<Expr>, Ty),
    /// A math function: method form `args[0].f(rest)` or path form `f64::f(args)`.
    Math {
        f: &'static str,
        args: Vec<Expr>,
        method: bool,
    },
    Call(String, Vec<Expr>),
    Ref(bool, Box<Expr>),
    If(Box<Expr>, Block, Block),
    Block(Block),
    Array(Vec<Expr>),
    Repeat(Box<Expr>, Len),
}

impl Expr {
    pub fn var(name: &str) -> Expr {
        Expr::Var(name.to_string())
    }

    pub fn index(self, i: Expr) -> Expr {
        Expr::Index(Box::new(self), Box::new(i))
    }

    pub fn bin(op: &'static str, l: Expr, r: Expr, real: bool) -> Expr {
        Expr::Bin(op, Box::new(l), Box::new(r), real)
    }

    pub fn usize(v: u64) -> Expr {
        Expr::Int(v, None)
    }

    /// Calls `f` on every sub-expression and sub-block (outer first).
    pub fn children_mut(&mut self, f: &mut dyn FnMut(Child<'_>)) {
        match self {
            Expr::Index(a, b) | Expr::Bin(_, a, b, _) => {
                f(Child::Expr(a));
                f(Child::Expr(b));
            }
            Expr::Neg(a) | Expr::Not(a) | Expr::Cast(a, _) | Expr::Ref(_, a) => f(Child::Expr(a)),
            Expr::Repeat(a, _) => f(Child::Expr(a)),
            Expr::Math { args, .. } | Expr::Call(_, args) | Expr::Array(args) => {
                args.iter_mut().for_each(|a| f(Child::Expr(a)))
            }
            Expr::If(c, t, e) => {
                f(Child::Expr(c));
                f(Child::Block(t));
                f(Child::Block(e));
            }
            Expr::Block(b) => f(Child::Block(b)),
            _ => {}
        }
    }
}

/// A child of a node, for the minimizer's walks.
pub enum Child<'a> {
    Expr(&'a mut Expr),
    Block(&'a mut Block),
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let {
        name: String,
        mutable: bool,
        ty: Option<Ty>,
        init: Expr,
    },
    Const {
        name: String,
        ty: Ty,
        value: Expr,
    },
    /// `place = value` or `place op= value` (`op` is `"+"`, …).
    Assign {
        place: Expr,
        op: Option<&'static str>,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Block,
        els: Option<Block>,
    },
    For {
        var: String,
        lo: Expr,
        hi: Expr,
        inclusive: bool,
        body: Block,
    },
    Expr(Expr),
}

/// A physics parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    U,
    GradU,
    A,
    GradA,
    X,
    Constants,
    F0,
    F1,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::U => "u",
            Role::GradU => "grad_u",
            Role::A => "a",
            Role::GradA => "grad_a",
            Role::X => "x",
            Role::Constants => "constants",
            Role::F0 => "f0",
            Role::F1 => "f1",
        }
    }
}

/// A helper parameter's type.
#[derive(Clone, Debug, PartialEq)]
pub enum PTy {
    Scalar(Ty),
    /// `&[…]` or `&mut […]`.
    Ref(bool, Ty),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Helper {
    pub name: String,
    pub generic: bool,
    pub params: Vec<(String, PTy)>,
    /// Returns `f64` (the body's tail).
    pub ret: bool,
    pub body: Block,
    pub helpers: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Physics {
    pub name: String,
    pub dims: Dims,
    pub nc: Len,
    /// `None`: no auxiliary field.
    pub na: Option<Len>,
    pub nk: u64,
    /// The parameters in signature order, with their type.
    pub params: Vec<(Role, Ty)>,
    pub body: Block,
    pub helpers: Vec<String>,
}

impl Physics {
    pub fn has(&self, r: Role) -> bool {
        self.params.iter().any(|(p, _)| *p == r)
    }

    /// The dimensions the physics is valid in: both, but for a physics of
    /// fixed dimension with a dimension-sized parameter (one without is
    /// valid in both, so the macro says).
    pub fn supported_dims(&self) -> Vec<usize> {
        let sized = self.params.iter().any(|(_, t)| t.uses_d());
        match self.dims {
            Dims::Fixed(d) if sized => vec![d as usize],
            Dims::Fixed(d) => vec![d as usize, 5 - d as usize],
            _ => vec![2, 3],
        }
    }

    /// The generated struct's name.
    pub fn struct_name(&self) -> String {
        let mut s = String::new();
        for part in self.name.split('_').filter(|p| !p.is_empty()) {
            let mut c = part.chars();
            if let Some(f) = c.next() {
                s.extend(f.to_uppercase());
                s.push_str(c.as_str());
            }
        }
        s
    }
}

/// What the generator built a program's body to be, for the check of the
/// macro's linearity claim (`crate::linearity`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linearity {
    /// A random body: linear or not by chance.
    Random,
    /// Affine in `(u, ∇u)` by construction (`generate::affine`): by its
    /// guide's rule the macro must claim it linear.
    Affine,
    /// Affine but for array indices computed from `u` or `∇u`: its
    /// Jacobian changes with `u`, and the macro must not claim it linear.
    UIndexed,
}

/// One generated program.
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub id: usize,
    /// The stream of random points the runtime uses for it (the id of the
    /// program it was reduced from, for the minimizer's candidates).
    pub points: usize,
    pub helpers: Vec<Helper>,
    pub physics: Physics,
    /// What the generator built its body to be.
    pub linearity: Linearity,
}

/// How a program is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The `#[pointwise]` source.
    Pointwise,
    /// Plain Rust in `"f64"` or `"f32"`, math through `pt`.
    Plain(&'static str),
}

struct Printer {
    mode: Mode,
    /// `Some(d)` in a physics of fixed dimension `d`.
    fixed: Option<u64>,
    out: String,
    indent: usize,
    /// In the plain copy, whether decisions go through `pt` (see
    /// `crate::freeze`); not in constant items, which cannot call it.
    hooks: bool,
}

impl Printer {
    fn real(&self) -> &'static str {
        match self.mode {
            Mode::Pointwise => "f64",
            Mode::Plain(r) => r,
        }
    }

    fn len(&self, l: Len) -> String {
        match (l, self.fixed) {
            (Len::N(n), _) => n.to_string(),
            (Len::D, Some(d)) => d.to_string(),
            (Len::D, None) => "D".into(),
        }
    }

    fn ty(&self, t: &Ty) -> String {
        match t {
            Ty::Real => self.real().into(),
            Ty::Usize => "usize".into(),
            Ty::I32 => "i32".into(),
            Ty::Bool => "bool".into(),
            Ty::Arr(e, l) => format!("[{}; {}]", self.ty(e), self.len(*l)),
        }
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn float(&self, v: f64) -> String {
        let lit = format!("{v:?}");
        match self.mode {
            Mode::Plain("f32") => format!("({lit}f64 as f32)"),
            _ => lit,
        }
    }

    fn expr(&self, e: &Expr) -> String {
        match e {
            Expr::Float(v) => self.float(*v),
            Expr::Int(v, s) => format!("{v}{}", s.unwrap_or("")),
            Expr::Bool(b) => b.to_string(),
            Expr::Var(n) => n.clone(),
            Expr::Const(n) => match self.mode {
                Mode::Plain("f32") => format!("(std::f64::consts::{n} as f32)"),
                _ => format!("std::f64::consts::{n}"),
            },
            Expr::Index(a, i) => format!("{}[{}]", self.expr(a), self.expr(i)),
            Expr::Neg(x) => format!("(-{})", self.expr(x)),
            Expr::Not(x) => format!("(!{})", self.expr(x)),
            Expr::Bin(op, l, r, real) => match (self.mode, *op, real) {
                (Mode::Plain(_), "/", true) => {
                    format!("pt::div({}, {})", self.expr(l), self.expr(r))
                }
                (Mode::Plain(_), "%", true) if self.hooks => {
                    format!("pt::rem({}, {})", self.expr(l), self.expr(r))
                }
                (Mode::Plain(_), "<" | "<=" | ">" | ">=" | "==" | "!=", true) if self.hooks => {
                    format!("pt::cond(({} {op} {}))", self.expr(l), self.expr(r))
                }
                _ => format!("({} {op} {})", self.expr(l), self.expr(r)),
            },
            Expr::Cast(x, t) => {
                let cast = format!("({} as {})", self.expr(x), self.ty(t));
                match (self.mode, t) {
                    (Mode::Plain(_), Ty::I32) if self.hooks => format!("pt::int_i32({cast})"),
                    (Mode::Plain(_), Ty::Usize) if self.hooks => format!("pt::int_usize({cast})"),
                    _ => cast,
                }
            }
            Expr::Math { f, args, method } => {
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                match self.mode {
                    Mode::Plain(_) => format!("pt::{f}({})", a.join(", ")),
                    Mode::Pointwise if *method => {
                        format!("{}.{f}({})", a[0], a[1..].join(", "))
                    }
                    Mode::Pointwise => format!("f64::{f}({})", a.join(", ")),
                }
            }
            Expr::Call(h, args) => {
                let a: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                match self.mode {
                    Mode::Pointwise => format!("{h}({})", a.join(", ")),
                    Mode::Plain(r) => format!("{h}_plain_{r}({})", a.join(", ")),
                }
            }
            Expr::Ref(m, x) => format!("&{}{}", if *m { "mut " } else { "" }, self.expr(x)),
            Expr::If(c, t, e) => {
                format!(
                    "(if {} {} else {})",
                    self.expr(c),
                    self.inline_block(t),
                    self.inline_block(e)
                )
            }
            Expr::Block(b) => self.inline_block(b),
            Expr::Array(xs) => {
                let a: Vec<String> = xs.iter().map(|x| self.expr(x)).collect();
                format!("[{}]", a.join(", "))
            }
            Expr::Repeat(x, l) => format!("[{}; {}]", self.expr(x), self.len(*l)),
        }
    }

    /// A block on one line (inside expressions).
    fn inline_block(&self, b: &Block) -> String {
        let mut p = Printer {
            mode: self.mode,
            fixed: self.fixed,
            out: String::new(),
            indent: 0,
            hooks: self.hooks,
        };
        for s in &b.stmts {
            p.stmt(s);
        }
        let mut s = String::from("{ ");
        for l in p.out.lines() {
            s.push_str(l);
            s.push(' ');
        }
        if let Some(t) = &b.tail {
            s.push_str(&self.expr(t));
            s.push(' ');
        }
        s.push('}');
        s
    }

    fn block(&mut self, b: &Block) {
        self.indent += 1;
        for s in &b.stmts {
            self.stmt(s);
        }
        if let Some(t) = &b.tail {
            let t = self.expr(t);
            self.line(&t);
        }
        self.indent -= 1;
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let {
                name,
                mutable,
                ty,
                init,
            } => {
                let m = if *mutable { "mut " } else { "" };
                let t = ty
                    .as_ref()
                    .map(|t| format!(": {}", self.ty(t)))
                    .unwrap_or_default();
                let l = format!("let {m}{name}{t} = {};", self.expr(init));
                self.line(&l);
            }
            Stmt::Const { name, ty, value } => {
                let hooks = std::mem::replace(&mut self.hooks, false);
                let l = format!("const {name}: {} = {};", self.ty(ty), self.expr(value));
                self.hooks = hooks;
                self.line(&l);
            }
            // Compound division of floats (the generator divides only
            // floats) goes through `pt` in the plain copy: the value first,
            // then the place, as Rust evaluates `place /= value`.
            Stmt::Assign {
                place,
                op: Some("/"),
                value,
            } if matches!(self.mode, Mode::Plain(_)) => {
                let l = format!(
                    "{{ let pt_v = {}; pt::div_assign(&mut {}, pt_v); }}",
                    self.expr(value),
                    self.expr(place)
                );
                self.line(&l);
            }
            Stmt::Assign { place, op, value } => {
                let l = format!(
                    "{} {}= {};",
                    self.expr(place),
                    op.unwrap_or(""),
                    self.expr(value)
                );
                self.line(&l);
            }
            Stmt::If { cond, then, els } => {
                let l = format!("if {} {{", self.expr(cond));
                self.line(&l);
                self.block(then);
                match els {
                    Some(e) => {
                        self.line("} else {");
                        self.block(e);
                        self.line("}");
                    }
                    None => self.line("}"),
                }
            }
            Stmt::For {
                var,
                lo,
                hi,
                inclusive,
                body,
            } => {
                let r = if *inclusive { "..=" } else { ".." };
                let l = format!("for {var} in {}{r}{} {{", self.expr(lo), self.expr(hi));
                self.line(&l);
                self.block(body);
                self.line("}");
            }
            Stmt::Expr(e) => {
                let l = format!("{};", self.expr(e));
                self.line(&l);
            }
        }
    }
}

fn pty(p: &Printer, t: &PTy) -> String {
    match t {
        PTy::Scalar(t) => p.ty(t),
        PTy::Ref(true, t) => format!("&mut {}", p.ty(t)),
        PTy::Ref(false, t) => format!("&{}", p.ty(t)),
    }
}

impl Program {
    /// The module of this program: `#[pointwise]` helpers and physics,
    /// their plain copies in both precisions, and the adapters the
    /// runtime calls (`plain_f64`, `plain_f32`).
    pub fn module(&self) -> String {
        let mut out = String::new();
        let ph = &self.physics;
        let _ = writeln!(
            out,
            "//! Generated program {} (pointwise-difftest).",
            self.id
        );
        out.push_str(
            "#![allow(warnings, clippy::all)]\nuse femquad::pointwise;\n\
             use femquad::physics::{PointArgs, Pointwise, PointwiseError};\n\
             use crate::runtime::pt;\n\n",
        );
        for h in &self.helpers {
            out.push_str(&self.helper(h, Mode::Pointwise));
            out.push_str(&self.helper(h, Mode::Plain("f64")));
            out.push_str(&self.helper(h, Mode::Plain("f32")));
        }
        out.push_str(&self.physics_fn(Mode::Pointwise));
        out.push_str(&self.physics_fn(Mode::Plain("f64")));
        out.push_str(&self.physics_fn(Mode::Plain("f32")));
        for r in ["f64", "f32"] {
            out.push_str(&self.adapter(r));
        }
        let _ = writeln!(
            out,
            "/// The physics under test.\npub static PHYSICS: {} = {};",
            ph.struct_name(),
            ph.struct_name()
        );
        out
    }

    /// The `#[pointwise]` source of the program (helpers, then physics),
    /// as a reproducer.
    pub fn source(&self) -> String {
        let mut out = String::new();
        for h in &self.helpers {
            out.push_str(&self.helper(h, Mode::Pointwise));
        }
        out.push_str(&self.physics_fn(Mode::Pointwise));
        out
    }

    fn helper(&self, h: &Helper, mode: Mode) -> String {
        let mut p = Printer {
            mode,
            fixed: None,
            out: String::new(),
            indent: 0,
            hooks: true,
        };
        let name = match mode {
            Mode::Pointwise => h.name.clone(),
            Mode::Plain(r) => format!("{}_plain_{r}", h.name),
        };
        let attr = match mode {
            Mode::Pointwise if h.helpers.is_empty() => "#[pointwise]\n".to_string(),
            Mode::Pointwise => format!("#[pointwise(helpers({}))]\n", h.helpers.join(", ")),
            Mode::Plain(_) => String::new(),
        };
        let generic = if h.generic { "<const D: usize>" } else { "" };
        let params: Vec<String> = h
            .params
            .iter()
            .map(|(n, t)| {
                let m = matches!(t, PTy::Scalar(_)) && n.starts_with("mut ");
                let _ = m;
                format!("{n}: {}", pty(&p, t))
            })
            .collect();
        let ret = if h.ret {
            format!(" -> {}", p.real())
        } else {
            String::new()
        };
        p.out = format!(
            "{attr}pub fn {name}{generic}({}){ret} {{\n",
            params.join(", ")
        );
        p.block(&h.body);
        p.out.push_str("}\n\n");
        p.out
    }

    fn fixed(&self) -> Option<u64> {
        match self.physics.dims {
            Dims::Fixed(d) => Some(d),
            _ => None,
        }
    }

    fn physics_fn(&self, mode: Mode) -> String {
        let ph = &self.physics;
        let mut p = Printer {
            mode,
            fixed: self.fixed(),
            out: String::new(),
            indent: 0,
            hooks: true,
        };
        let name = match mode {
            Mode::Pointwise => ph.name.clone(),
            Mode::Plain(r) => format!("{}_plain_{r}", ph.name),
        };
        let attr = match mode {
            Mode::Pointwise if ph.helpers.is_empty() => "#[pointwise]\n".to_string(),
            Mode::Pointwise => format!("#[pointwise(helpers({}))]\n", ph.helpers.join(", ")),
            Mode::Plain(_) => String::new(),
        };
        let generic = if ph.dims == Dims::Generic {
            "<const D: usize>"
        } else {
            ""
        };
        let params: Vec<String> = ph
            .params
            .iter()
            .map(|(r, t)| {
                let m = if matches!(r, Role::F0 | Role::F1) {
                    "&mut "
                } else {
                    "&"
                };
                format!("{}: {m}{}", r.name(), p.ty(t))
            })
            .collect();
        p.out = format!("{attr}pub fn {name}{generic}({}) {{\n", params.join(", "));
        p.block(&ph.body);
        p.out.push_str("}\n\n");
        p.out
    }

    /// `plain_R(dim, args, f0, f1)`: the plain copy behind the same
    /// interface as `PointwiseEval::<R>::eval` (outputs declared are zeroed first).
    fn adapter(&self, r: &str) -> String {
        let ph = &self.physics;
        let mut arms = String::new();
        let dims: Vec<Option<u64>> = match ph.dims {
            Dims::Free => vec![None],
            _ => ph
                .supported_dims()
                .into_iter()
                .map(|d| Some(d as u64))
                .collect(),
        };
        for d in dims {
            let dv = d.unwrap_or(0) as usize;
            let res = |l: Len| match l {
                Len::N(n) => n as usize,
                Len::D => dv,
            };
            let nc = res(ph.nc);
            let na = ph.na.map(res).unwrap_or(0);
            let mut lets = String::new();
            let mut args = Vec::new();
            for (role, _) in &ph.params {
                let n = role.name();
                let v = match role {
                    Role::U => format!("__private::array::<{r}, {nc}>(\"p\", \"u\", args.u)?"),
                    Role::GradU => {
                        format!(
                            "__private::matrix::<{r}, {nc}, {dv}>(\"p\", \"grad_u\", args.grad_u)?"
                        )
                    }
                    Role::A => format!("__private::array::<{r}, {na}>(\"p\", \"a\", args.a)?"),
                    Role::GradA => {
                        format!(
                            "__private::matrix::<{r}, {na}, {dv}>(\"p\", \"grad_a\", args.grad_a)?"
                        )
                    }
                    Role::X => format!("__private::array::<{r}, {dv}>(\"p\", \"x\", args.x)?"),
                    Role::Constants => format!(
                        "__private::array::<{r}, {}>(\"p\", \"constants\", args.constants)?",
                        ph.nk
                    ),
                    Role::F0 => format!(
                        "{{ let v = __private::array_mut::<{r}, {nc}>(\"p\", \"f0\", f0)?; *v = [0.0; {nc}]; v }}"
                    ),
                    Role::F1 => format!(
                        "{{ let v = __private::matrix_mut::<{r}, {nc}, {dv}>(\"p\", \"f1\", f1)?; *v = [[0.0; {dv}]; {nc}]; v }}"
                    ),
                };
                let _ = writeln!(lets, "            let v_{n} = {v};");
                args.push(format!("v_{n}"));
            }
            let turbofish = match (ph.dims, d) {
                (Dims::Generic, Some(d)) => format!("::<{d}>"),
                _ => String::new(),
            };
            let pat = match d {
                Some(d) => d.to_string(),
                None => "2 | 3".into(),
            };
            let _ = write!(
                arms,
                "        {pat} => {{\n{lets}            {}_plain_{r}{turbofish}({});\n            Ok(())\n        }}\n",
                ph.name,
                args.join(", ")
            );
        }
        format!(
            "pub fn plain_{r}(dim: usize, args: &PointArgs<'_, {r}>, f0: &mut [{r}], f1: &mut [{r}]) -> Result<(), PointwiseError> {{\n\
             \x20   use femquad::physics::__private;\n    match dim {{\n{arms}        d => Err(__private::unsupported_dim(\"p\", d)),\n    }}\n}}\n\n"
        )
    }
}
