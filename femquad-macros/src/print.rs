//! What the two printers of a lowered program share: [`crate::emit_c`]
//! (OpenCL C) and [`crate::emit_native`] (Rust) print the same statements
//! with the same structure — indented lines, blocks, `if … else if … else`
//! chains, assignments, calls — and place parentheses by the same rule.
//! What differs between the languages (declarations, loops, array copies,
//! the result of a call, every expression) each printer says through
//! [`Syntax`].

use crate::check::Ty;
use crate::ir::{Arg, Callee, Expr, Place, Stmt, VarId};

// Precedence levels both languages share (higher binds tighter); C and
// Rust differ only in their comparisons (and C's `?:`), which each printer
// defines.
pub const P_OR: u8 = 4;
pub const P_AND: u8 = 5;
pub const P_ADD: u8 = 12;
pub const P_MUL: u8 = 13;
pub const P_UNARY: u8 = 14;
pub const P_PRIMARY: u8 = 16;

/// `s.0` (an expression of precedence `s.1`), parenthesized if it binds
/// less tightly than `min`.
pub fn paren(s: (String, u8), min: u8) -> String {
    if s.1 < min { format!("({})", s.0) } else { s.0 }
}

/// Printed lines at an indentation of four spaces per level.
pub struct Lines {
    out: String,
    indent: usize,
}

impl Lines {
    /// No lines yet; the first at `indent` levels.
    pub fn new(indent: usize) -> Lines {
        Lines {
            out: String::new(),
            indent,
        }
    }

    /// The text printed.
    pub fn into_string(self) -> String {
        self.out
    }
}

/// A printer of one language: what it prints its own way. The statement
/// walk is the provided methods.
pub trait Syntax {
    /// Where it prints.
    fn lines(&mut self) -> &mut Lines;
    /// The text of an expression and its precedence.
    fn expr(&mut self, e: &Expr) -> (String, u8);
    /// The name of a variable in this language.
    fn var_name(&self, v: VarId) -> String;
    /// The text of a call argument.
    fn arg(&mut self, a: &Arg) -> String;
    /// The name a call uses for a helper.
    fn callee(&self, c: Callee) -> String;
    /// The condition of an `if` as the keyword takes it (`(c)` in C).
    fn condition(&mut self, cond: &Expr) -> String;
    /// The declaration of `var`, initialized with `init`.
    fn declare(&mut self, var: VarId, init: &Option<Expr>);
    /// The copy of the array at `src` into `dst`, of type `ty`.
    fn copy(&mut self, dst: &Place, src: &Place, ty: &Ty);
    /// The head of a `for` loop, without its `{`.
    fn for_head(&mut self, var: VarId, lo: &Expr, hi: &Expr, inclusive: bool) -> String;
    /// The statement declaring `result` as the value of `call`.
    fn call_into(&mut self, result: VarId, call: &str) -> String;

    /// The text of a place (`v[i][j]`).
    fn place(&mut self, p: &Place) -> String {
        let mut s = self.var_name(p.var);
        for i in &p.index {
            let i = self.expr(i).0;
            s.push_str(&format!("[{i}]"));
        }
        s
    }

    /// Prints one line at the current indentation.
    fn line(&mut self, s: &str) {
        let lines = self.lines();
        for _ in 0..lines.indent {
            lines.out.push_str("    ");
        }
        lines.out.push_str(s);
        lines.out.push('\n');
    }

    /// Prints `stmts`, one after the other.
    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    /// Prints `stmts` one level deeper.
    fn block(&mut self, stmts: &[Stmt]) {
        self.lines().indent += 1;
        self.stmts(stmts);
        self.lines().indent -= 1;
    }

    /// Prints one statement.
    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { var, init } => self.declare(*var, init),
            Stmt::Assign { place, value } => {
                let p = self.place(place);
                let v = self.expr(value).0;
                self.line(&format!("{p} = {v};"));
            }
            Stmt::Copy { dst, src, ty } => self.copy(dst, src, ty),
            Stmt::If { cond, then, els } => self.if_chain(cond, then, els, false),
            Stmt::For {
                var,
                lo,
                hi,
                inclusive,
                body,
            } => {
                let head = self.for_head(*var, lo, hi, *inclusive);
                self.line(&format!("{head} {{"));
                self.block(body);
                self.line("}");
            }
            Stmt::Call {
                callee,
                args,
                result,
            } => {
                let args: Vec<String> = args.iter().map(|a| self.arg(a)).collect();
                let call = format!("{}({})", self.callee(*callee), args.join(", "));
                let line = match result {
                    Some(r) => self.call_into(*r, &call),
                    None => format!("{call};"),
                };
                self.line(&line);
            }
        }
    }

    /// `if c { … } else if … else { … }`: an `else` holding one `if` only
    /// continues the chain.
    fn if_chain(&mut self, cond: &Expr, then: &[Stmt], els: &[Stmt], else_if: bool) {
        let c = self.condition(cond);
        let kw = if else_if { "} else if" } else { "if" };
        self.line(&format!("{kw} {c} {{"));
        self.block(then);
        match els {
            [] => self.line("}"),
            [Stmt::If { cond, then, els }] => self.if_chain(cond, then, els, true),
            _ => {
                self.line("} else {");
                self.block(els);
                self.line("}");
            }
        }
    }

    /// `a op b` with the operands parenthesized where `op`, of precedence
    /// `p`, needs: the left operand binds at least as `min_left`, the right
    /// one more tightly than `op` (operators associate to the left).
    fn binary(&mut self, op: &str, a: &Expr, b: &Expr, p: u8, min_left: u8) -> (String, u8) {
        let a = paren(self.expr(a), min_left);
        let b = paren(self.expr(b), min_left.max(p + 1));
        (format!("{a} {op} {b}"), p)
    }

    /// `!x`.
    fn not(&mut self, x: &Expr) -> (String, u8) {
        let x = paren(self.expr(x), P_UNARY);
        (format!("!{x}"), P_UNARY)
    }
}
