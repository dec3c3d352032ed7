//! The OpenCL C version of a checked function.
//!
//! The source uses the type `real` and the macro `DIM`, both defined by the
//! kernel that includes it. Float literals are written `(real)<literal>` with
//! all the digits needed to round-trip an f64. Helper functions are named at
//! run time (their names carry a hash of their source, so two helpers with the
//! same Rust name cannot clash): the source refers to the `i`-th declared
//! helper as `@@i@@` and to the function being defined as `@@self@@`;
//! `femquad::physics::__private::opencl_source` substitutes the names.
//!
//! Expressions are emitted as C expressions; Rust expressions that contain
//! statements (an `if` with statements in its branches, a block) are lowered
//! into statements before the expression that uses them, with temporaries
//! (`pw_t…`) that keep Rust's left-to-right evaluation order and the
//! short-circuit of `&&`/`||`. Arrays are copied element by element.

use crate::ast::*;
use crate::check::{Checked, Dims, Kind, Len, Res, Ty};

/// The placeholder for the `i`-th declared helper's C name.
pub fn helper_placeholder(i: usize) -> String {
    format!("@@{i}@@")
}

/// The placeholder for a helper's own C name in its definition.
pub const SELF_PLACEHOLDER: &str = "@@self@@";

/// The C source of a physics: `void NAME(const real u[], …)`.
pub fn physics(f: &Function, c: &Checked, c_name: &str) -> String {
    let Kind::Physics(sig) = &c.kind else {
        unreachable!("physics() on a helper")
    };
    let mut e = Emitter::new(c);
    let mut src = String::new();
    if let Dims::Fixed(d) = c.dims {
        src.push_str(&format!(
            "#if DIM != {d}\n#error \"{c_name} (#[pointwise] fn {}) is defined for dimension {d} only\"\n#endif\n",
            f.name.text
        ));
    }
    src.push_str(&format!("/* #[pointwise] fn {} */\n", f.name.text));
    src.push_str(&format!(
        "void {c_name}(const real u[], const real grad_u[][DIM], const real a[], \
         const real grad_a[][DIM], const real x[], const real constants[], real f0[], \
         real f1[][DIM])\n{{\n"
    ));
    e.indent = 1;
    // Declared outputs start at zero, natively and here.
    let nc = len_c(sig.n_comp.len());
    let one = nc == "1";
    if sig.has_f0 {
        if one {
            e.line("f0[0] = (real)0.0;");
        } else {
            let i = e.fresh("i");
            e.line(format!(
                "for (int {i} = 0; {i} < {nc}; ++{i}) f0[{i}] = (real)0.0;"
            ));
        }
    }
    if sig.has_f1 {
        let j = e.fresh("i");
        let inner = format!("for (int {j} = 0; {j} < DIM; ++{j}) f1[{{c}}][{j}] = (real)0.0;");
        if one {
            e.line(inner.replace("{c}", "0"));
        } else {
            let i = e.fresh("i");
            e.line(format!(
                "for (int {i} = 0; {i} < {nc}; ++{i}) {}",
                inner.replace("{c}", &i)
            ));
        }
    }
    e.unit_block_contents(&f.body);
    for l in &e.out {
        src.push_str(l);
        src.push('\n');
    }
    src.push_str("}\n");
    src
}

/// The C source of a helper, named [`SELF_PLACEHOLDER`].
pub fn helper(f: &Function, c: &Checked) -> String {
    let Kind::Helper(sig) = &c.kind else {
        unreachable!("helper() on a physics")
    };
    let mut e = Emitter::new(c);
    let params: Vec<String> = c
        .params
        .iter()
        .map(|&b| {
            let b = &c.bindings[b];
            match &b.ty {
                Ty::Array(..) => {
                    let decl = array_decl(&b.ty, &b.c);
                    if b.mutable {
                        decl
                    } else {
                        format!("const {decl}")
                    }
                }
                t if b.mutable => format!("{} {}", scalar_c(t), b.c),
                t => format!("const {} {}", scalar_c(t), b.c),
            }
        })
        .collect();
    let ret = if sig.returns_real { "real" } else { "void" };
    let mut src = format!("/* #[pointwise] helper fn {} */\n", f.name.text);
    src.push_str(&format!(
        "{ret} {SELF_PLACEHOLDER}({})\n{{\n",
        params.join(", ")
    ));
    e.indent = 1;
    if sig.returns_real {
        let v = bare(e.value_block_contents(&f.body));
        e.line(format!("return {v};"));
    } else {
        e.unit_block_contents(&f.body);
    }
    for l in &e.out {
        src.push_str(l);
        src.push('\n');
    }
    src.push_str("}\n");
    src
}

fn len_c(l: Len) -> String {
    match l {
        Len::Lit(n) => n.to_string(),
        Len::Dim => "DIM".into(),
    }
}

fn scalar_c(t: &Ty) -> &'static str {
    match t {
        Ty::Int(_) => "int",
        Ty::Bool => "bool",
        _ => "real",
    }
}

/// `real name[3][DIM]`.
fn array_decl(t: &Ty, name: &str) -> String {
    let mut dims = String::new();
    let mut t = t;
    while let Ty::Array(e, l) = t {
        dims.push_str(&format!("[{}]", len_c(*l)));
        t = e;
    }
    format!("{} {name}{dims}", scalar_c(t))
}

/// `s` without the parentheses around all of it, for contexts that delimit
/// an expression anyway (`x = …;`, arguments, indices, conditions).
fn bare(s: String) -> String {
    let b = s.as_bytes();
    if b.first() != Some(&b'(') || b.last() != Some(&b')') {
        return s;
    }
    let mut depth = 0;
    for (i, c) in b.iter().enumerate() {
        match c {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 && i + 1 < b.len() {
                    return s;
                }
            }
            _ => {}
        }
    }
    s[1..s.len() - 1].to_string()
}

/// Call arguments, without redundant parentheses.
fn args_list(values: Vec<String>) -> String {
    values.into_iter().map(bare).collect::<Vec<_>>().join(", ")
}

/// An f64 as a C literal with round-trip precision, cast to `real`.
pub fn real_literal(v: f64) -> String {
    format!("(real){v:?}")
}

struct Emitter<'a> {
    c: &'a Checked,
    out: Vec<String>,
    indent: usize,
    tmp: usize,
}

fn strip_parens(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Paren(inner) => strip_parens(inner),
        _ => e,
    }
}

impl<'a> Emitter<'a> {
    fn new(c: &'a Checked) -> Self {
        Emitter {
            c,
            out: Vec::new(),
            indent: 0,
            tmp: 0,
        }
    }

    fn line(&mut self, s: impl AsRef<str>) {
        self.out
            .push(format!("{}{}", "    ".repeat(self.indent), s.as_ref()));
    }

    /// A temporary name; user names never start with `pw_` (see `names`).
    fn fresh(&mut self, base: &str) -> String {
        self.tmp += 1;
        format!("pw_{base}{}", self.tmp)
    }

    /// Runs `f` with an empty output one level deeper; returns its lines.
    fn capture<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> (Vec<String>, R) {
        let saved = std::mem::take(&mut self.out);
        self.indent += 1;
        let r = f(self);
        self.indent -= 1;
        (std::mem::replace(&mut self.out, saved), r)
    }

    /// Like [`Self::capture`], at the same level.
    fn capture_flat<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> (Vec<String>, R) {
        let saved = std::mem::take(&mut self.out);
        let r = f(self);
        (std::mem::replace(&mut self.out, saved), r)
    }

    fn ty(&self, e: &Expr) -> &'a Ty {
        self.c.ty(e.id)
    }

    fn binding_c(&self, id: usize) -> &'a str {
        match self.c.res.get(&id) {
            Some(Res::Binding(b)) => &self.c.bindings[*b].c,
            _ => "pw_unresolved",
        }
    }

    /// Stores a scalar value in a temporary (to fix evaluation order).
    fn spill(&mut self, value: String, t: &Ty) -> String {
        if value.parse::<f64>().is_ok() || value.starts_with("(real)") && !value.contains(' ') {
            return value;
        }
        let name = self.fresh("t");
        self.line(format!("const {} {name} = {};", scalar_c(t), bare(value)));
        name
    }

    // ----- blocks and statements -----

    fn consts_first(&mut self, b: &Block) {
        for s in &b.stmts {
            if let Stmt::Const { id, value, .. } = s {
                let name = self.binding_c(*id);
                let t = self
                    .c
                    .binding(*id)
                    .map(|b| b.ty.clone())
                    .unwrap_or(Ty::Real);
                let v = bare(self.expr(value));
                self.line(format!("const {} {name} = {v};", scalar_c(&t)));
            }
        }
    }

    fn stmts(&mut self, b: &Block) {
        self.consts_first(b);
        for s in &b.stmts {
            match s {
                Stmt::Let {
                    id,
                    init: Some(init),
                    ..
                } => self.let_stmt(*id, init),
                Stmt::Expr(e) => self.stmt_expr(e),
                _ => {}
            }
        }
    }

    /// A block whose value is `()`, without braces.
    fn unit_block_contents(&mut self, b: &Block) {
        self.stmts(b);
        if let Some(t) = &b.tail {
            self.stmt_expr(t);
        }
    }

    /// A block with a value, without braces; returns the value.
    fn value_block_contents(&mut self, b: &Block) -> String {
        self.stmts(b);
        match &b.tail {
            Some(t) => self.expr(t),
            None => "0".into(),
        }
    }

    /// `{ … }` around a unit block's contents.
    fn braced_unit_block(&mut self, b: &Block) -> Vec<String> {
        self.capture(|s| s.unit_block_contents(b)).0
    }

    fn let_stmt(&mut self, id: usize, init: &Expr) {
        let Some(b) = self.c.binding(id) else { return };
        match &b.ty {
            t @ Ty::Array(..) => {
                self.line(format!("{};", array_decl(t, &b.c)));
                self.assign_array(b.c.clone(), t, init, true);
            }
            t => {
                let v = bare(self.expr(init));
                let q = if b.mutable { "" } else { "const " };
                self.line(format!("{q}{} {} = {v};", scalar_c(t), b.c));
            }
        }
    }

    fn stmt_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Assign(place, value) => {
                if let t @ Ty::Array(..) = self.ty(place) {
                    self.assign_array_stmt(place, t, value);
                } else {
                    let v = bare(self.expr(value));
                    let p = self.expr(place);
                    self.line(format!("{p} = {v};"));
                }
            }
            ExprKind::CompoundAssign(op, place, value) => {
                let v = bare(self.expr(value));
                let p = self.expr(place);
                if *op == BinOp::Rem && *self.ty(place) == Ty::Real {
                    self.line(format!("{p} = fmod({p}, {v});"));
                } else {
                    self.line(format!("{p} {}= {v};", op.symbol()));
                }
            }
            ExprKind::For {
                start,
                end,
                inclusive,
                body,
                ..
            } => {
                let i = self.binding_c(e.id).to_string();
                let lo = self.expr(start);
                let hi = self.expr(end);
                let cmp = if *inclusive { "<=" } else { "<" };
                let inner = self.braced_unit_block(body);
                self.line(format!("for (int {i} = {lo}; {i} {cmp} {hi}; ++{i}) {{"));
                self.out.extend(inner);
                self.line("}");
            }
            ExprKind::If(..) if *self.ty(e) == Ty::Unit => self.if_stmt(e, false),
            ExprKind::Block(b) if *self.ty(e) == Ty::Unit => {
                let inner = self.braced_unit_block(b);
                self.line("{");
                self.out.extend(inner);
                self.line("}");
            }
            ExprKind::Paren(inner) => self.stmt_expr(inner),
            ExprKind::Call(_, args) if matches!(self.c.res.get(&e.id), Some(Res::Helper(_))) => {
                let call = self.helper_call(e, args);
                self.line(format!("{call};"));
            }
            _ => {
                let v = self.expr(e);
                self.line(format!("(void)({v});"));
            }
        }
    }

    /// `if` as a statement (`else_if`: emitting the `if` of an `else if`).
    fn if_stmt(&mut self, e: &Expr, else_if: bool) {
        let ExprKind::If(cond, then, els) = &e.kind else {
            return;
        };
        let c = bare(self.expr(cond));
        let then_lines = self.braced_unit_block(then);
        let kw = if else_if { "} else if" } else { "if" };
        self.line(format!("{kw} ({c}) {{"));
        self.out.extend(then_lines);
        match els.as_deref().map(strip_parens) {
            None => self.line("}"),
            Some(
                x @ Expr {
                    kind: ExprKind::If(cond2, ..),
                    ..
                },
            ) => {
                // `else if`: flat when its condition needs no statements.
                let (pre, _) = self.capture_flat(|s| s.expr(cond2));
                if pre.is_empty() {
                    self.if_stmt(x, true);
                } else {
                    self.line("} else {");
                    let (inner, _) = self.capture(|s| s.if_stmt(x, false));
                    self.out.extend(inner);
                    self.line("}");
                }
            }
            Some(x) => {
                self.line("} else {");
                let inner = match &x.kind {
                    ExprKind::Block(b) => self.braced_unit_block(b),
                    _ => self.capture(|s| s.stmt_expr(x)).0,
                };
                self.out.extend(inner);
                self.line("}");
            }
        }
    }

    // ----- arrays -----

    fn assign_array_stmt(&mut self, place: &Expr, t: &Ty, value: &Expr) {
        let v = strip_parens(value);
        if matches!(v.kind, ExprKind::Array(_)) {
            // The literal may read the destination: build it first.
            let tmp = self.fresh("a");
            self.line(format!("{};", array_decl(t, &tmp)));
            self.assign_array(tmp.clone(), t, value, true);
            let p = self.expr(place);
            self.copy_array(&p, &tmp, t);
        } else {
            let p = self.expr(place);
            self.assign_array(p, t, value, false);
        }
    }

    /// Stores the array value `value` of type `t` into `dst`.
    fn assign_array(&mut self, dst: String, t: &Ty, value: &Expr, _fresh: bool) {
        let Ty::Array(elem, len) = t else {
            let v = self.expr(value);
            self.line(format!("{dst} = {v};"));
            return;
        };
        let v = strip_parens(value);
        match &v.kind {
            ExprKind::Array(elems) => {
                for (i, x) in elems.iter().enumerate() {
                    self.assign_array(format!("{dst}[{i}]"), elem, x, true);
                }
            }
            ExprKind::Repeat(x, _) => {
                let i = self.fresh("i");
                let n = len_c(*len);
                if matches!(**elem, Ty::Array(..)) {
                    let (inner, _) =
                        self.capture(|s| s.assign_array(format!("{dst}[{i}]"), elem, x, true));
                    self.line(format!("for (int {i} = 0; {i} < {n}; ++{i}) {{"));
                    self.out.extend(inner);
                    self.line("}");
                } else {
                    let x = self.expr(x);
                    let x = self.spill(x, elem);
                    self.line(format!(
                        "for (int {i} = 0; {i} < {n}; ++{i}) {dst}[{i}] = {x};"
                    ));
                }
            }
            _ => {
                let src = self.expr(value);
                self.copy_array(&dst, &src, t);
            }
        }
    }

    fn copy_array(&mut self, dst: &str, src: &str, t: &Ty) {
        let mut idx = String::new();
        let mut loops = Vec::new();
        let mut t = t;
        while let Ty::Array(e, l) = t {
            let i = self.fresh("i");
            loops.push(format!(
                "for (int {i} = 0; {i} < {n}; ++{i})",
                n = len_c(*l)
            ));
            idx.push_str(&format!("[{i}]"));
            t = e;
        }
        self.line(format!("{} {dst}{idx} = {src}{idx};", loops.join(" ")));
    }

    // ----- expressions -----

    /// Evaluates `exprs` left to right; if a later one needs statements,
    /// the earlier values are stored first.
    fn ordered(&mut self, exprs: &[&Expr]) -> Vec<String> {
        let mut done: Vec<(String, &Ty)> = Vec::new();
        for x in exprs {
            let (pre, v) = self.capture_flat(|s| s.operand(x));
            if !pre.is_empty() {
                for (d, t) in done.iter_mut() {
                    if !matches!(t, Ty::Array(..)) {
                        *d = self.spill(d.clone(), t);
                    }
                }
                self.out.extend(pre);
            }
            done.push((v, self.ty(x)));
        }
        done.into_iter().map(|(v, _)| v).collect()
    }

    /// An expression or, for `&place`, the place (arrays are passed as pointers).
    fn operand(&mut self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Ref(mutable, inner) => {
                let p = self.expr(inner);
                match self.ty(inner) {
                    // `real (*)[N]` does not convert implicitly to `const real (*)[N]`.
                    Ty::Array(elem, _) if !mutable && matches!(**elem, Ty::Array(..)) => {
                        let decl = array_decl(elem, "(*)");
                        format!("(__private const {decl})({p})")
                    }
                    _ => p,
                }
            }
            _ => self.expr(e),
        }
    }

    fn expr(&mut self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Float { value, .. } => real_literal(*value),
            ExprKind::Int { value, .. } => value.to_string(),
            ExprKind::Bool(b) => b.to_string(),
            ExprKind::Path(_) => match self.c.res.get(&e.id) {
                Some(Res::MathConst(v)) => real_literal(*v),
                Some(Res::Binding(b)) => self.c.bindings[*b].c.clone(),
                _ => "pw_unresolved".into(),
            },
            ExprKind::Paren(inner) => self.expr(inner),
            ExprKind::Unary(UnOp::Neg, inner) => match &inner.kind {
                ExprKind::Float { value, .. } => real_literal(-value),
                _ => format!("(-{})", self.expr(inner)),
            },
            ExprKind::Unary(UnOp::Not, inner) => format!("(!{})", self.expr(inner)),
            ExprKind::Binary(op, l, r) => self.binary(e, *op, l, r),
            ExprKind::Cast(inner, target) => {
                let v = self.expr(inner);
                let from_real = *self.ty(inner) == Ty::Real;
                if from_real && matches!(target, Type::Int(IntKind::Usize, _)) {
                    // Rust's `as usize` maps negative floats (and NaN) to 0.
                    format!("((int)fmax({v}, (real)0.0))")
                } else {
                    format!("(({})({v}))", scalar_c(self.ty(e)))
                }
            }
            ExprKind::Index(base, index) => {
                let b = self.expr(base);
                let i = bare(self.expr(index));
                format!("{b}[{i}]")
            }
            ExprKind::Call(_, args) => match self.c.res.get(&e.id) {
                Some(Res::Math(f)) => {
                    let args: Vec<&Expr> = args.iter().collect();
                    let vs = self.ordered(&args);
                    format!("{}({})", f.c, args_list(vs))
                }
                _ => self.helper_call(e, args),
            },
            ExprKind::MethodCall { receiver, args, .. } => {
                let Some(Res::Math(f)) = self.c.res.get(&e.id) else {
                    return "pw_unresolved".into();
                };
                let mut all = vec![&**receiver];
                all.extend(args.iter());
                let vs = self.ordered(&all);
                format!("{}({})", f.c, args_list(vs))
            }
            ExprKind::If(cond, then, els) => self.if_value(e, cond, then, els.as_deref()),
            ExprKind::Block(b) => self.value_block_contents(b),
            ExprKind::Array(_) | ExprKind::Repeat(..) => {
                let t = self.ty(e);
                let tmp = self.fresh("a");
                self.line(format!("{};", array_decl(t, &tmp)));
                self.assign_array(tmp.clone(), t, e, true);
                tmp
            }
            ExprKind::Assign(..) | ExprKind::CompoundAssign(..) | ExprKind::For { .. } => {
                self.stmt_expr(e);
                "0".into()
            }
            ExprKind::Ref(_, inner) => self.expr(inner),
            ExprKind::Unsupported(_) => "pw_unsupported".into(),
        }
    }

    fn helper_call(&mut self, e: &Expr, args: &[Expr]) -> String {
        let Some(Res::Helper(i)) = self.c.res.get(&e.id) else {
            return "pw_unresolved".into();
        };
        let args: Vec<&Expr> = args.iter().collect();
        let vs = self.ordered(&args);
        format!("{}({})", helper_placeholder(*i), args_list(vs))
    }

    fn binary(&mut self, e: &Expr, op: BinOp, l: &Expr, r: &Expr) -> String {
        if matches!(op, BinOp::And | BinOp::Or) {
            let a = self.expr(l);
            let (pre, b) = self.capture(|s| s.expr(r));
            if pre.is_empty() {
                return format!("({a} {} {b})", op.symbol());
            }
            // Keep the short circuit: the right side's statements run only if needed.
            let t = self.fresh("t");
            self.line(format!("bool {t} = {a};"));
            let test = if op == BinOp::And {
                t.clone()
            } else {
                format!("!{t}")
            };
            self.line(format!("if ({test}) {{"));
            self.out.extend(pre);
            self.line(format!("    {t} = {b};"));
            self.line("}");
            return t;
        }
        let vs = self.ordered(&[l, r]);
        if op == BinOp::Rem && *self.ty(e) == Ty::Real {
            return format!("fmod({}, {})", vs[0], vs[1]);
        }
        format!("({} {} {})", vs[0], op.symbol(), vs[1])
    }

    fn if_value(&mut self, e: &Expr, cond: &Expr, then: &Block, els: Option<&Expr>) -> String {
        let c = self.expr(cond);
        let (then_pre, tv) = self.capture(|s| s.value_block_contents(then));
        let tv = bare(tv);
        let (else_pre, ev) = match els {
            Some(x) => self.capture(|s| s.expr(x)),
            None => (Vec::new(), "0".into()),
        };
        if then_pre.is_empty() && else_pre.is_empty() {
            return format!("({c} ? {tv} : {ev})");
        }
        let t = self.fresh("t");
        let ty = self.ty(e);
        let ev = bare(ev);
        let c = bare(c);
        self.line(format!("{} {t};", scalar_c(ty)));
        self.line(format!("if ({c}) {{"));
        self.out.extend(then_pre);
        self.line(format!("    {t} = {tv};"));
        self.line("} else {");
        self.out.extend(else_pre);
        self.line(format!("    {t} = {ev};"));
        self.line("}");
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bare_strips_only_enclosing_parentheses() {
        assert_eq!(bare("(a + b)".into()), "a + b");
        assert_eq!(bare("(a) + (b)".into()), "(a) + (b)");
        assert_eq!(bare("((real)(i))".into()), "(real)(i)");
        assert_eq!(bare("x".into()), "x");
    }

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
}
