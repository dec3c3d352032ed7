//! The small AST of the accepted subset, produced by [`crate::parse`].
//!
//! Parsing is total: syntax outside the subset becomes an
//! [`ExprKind::Unsupported`] / [`Stmt::Unsupported`] / [`Type::Unsupported`]
//! node carrying a [`Construct`], and [`crate::check`] alone decides what is
//! reported and how. Every node keeps its source location for error spans.

use proc_macro2::{Ident, Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::fmt::Display;

/// Source range of a node: the spans of its first and last tokens.
#[derive(Clone, Copy, Debug)]
pub struct Loc {
    pub start: Span,
    pub end: Span,
}

impl Loc {
    /// The location of a syn node.
    pub fn of<T: ToTokens + ?Sized>(node: &T) -> Loc {
        let mut tokens = node.to_token_stream().into_iter();
        let first = tokens.next().map(|t| t.span());
        let last = tokens.last().map(|t| t.span());
        match (first, last) {
            (Some(start), Some(end)) => Loc { start, end },
            (Some(start), None) => Loc { start, end: start },
            _ => Loc::call_site(),
        }
    }

    /// A location for generated nodes.
    pub fn call_site() -> Loc {
        Loc {
            start: Span::call_site(),
            end: Span::call_site(),
        }
    }

    /// From the first token of `a` to the last of `b`.
    pub fn join(a: Loc, b: Loc) -> Loc {
        Loc {
            start: a.start,
            end: b.end,
        }
    }

    /// An error covering this location.
    pub fn error(&self, message: impl Display) -> syn::Error {
        let tokens: TokenStream = [
            TokenTree::Ident(Ident::new("start", self.start)),
            TokenTree::Ident(Ident::new("end", self.end)),
        ]
        .into_iter()
        .collect();
        syn::Error::new_spanned(tokens, message)
    }
}

/// An identifier as written (raw identifiers without their `r#`).
#[derive(Clone, Debug)]
pub struct Name {
    pub text: String,
    pub loc: Loc,
}

/// A `#[pointwise]` function.
#[derive(Debug)]
pub struct Function {
    pub name: Name,
    pub generics: Vec<Generic>,
    pub params: Vec<Param>,
    /// `None` for `()`.
    pub ret: Option<Type>,
    pub body: Block,
    /// Signature features outside the subset (`async`, `unsafe`, `self`, …).
    pub unsupported: Vec<(Construct, Loc)>,
}

/// A generic parameter.
#[derive(Debug)]
pub enum Generic {
    /// `const NAME: TYPE`.
    Const { name: Name, ty: Type, loc: Loc },
    /// A type or lifetime parameter.
    Other(Loc),
}

/// A function parameter.
#[derive(Debug)]
pub struct Param {
    /// `None` when the pattern is not a plain identifier.
    pub name: Option<Name>,
    pub mutable: bool,
    pub ty: Type,
    pub loc: Loc,
}

/// Integer types of the subset (both are `int` in OpenCL C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntKind {
    Usize,
    I32,
}

impl IntKind {
    pub fn rust_name(self) -> &'static str {
        match self {
            IntKind::Usize => "usize",
            IntKind::I32 => "i32",
        }
    }
}

/// A type as written.
#[derive(Clone, Debug)]
pub enum Type {
    F64(Loc),
    Int(IntKind, Loc),
    Bool(Loc),
    /// `[elem; len]`
    Array {
        elem: Box<Type>,
        len: Box<Expr>,
        loc: Loc,
    },
    /// `&T` / `&mut T`
    Ref {
        mutable: bool,
        lifetime: bool,
        inner: Box<Type>,
        loc: Loc,
    },
    /// `()`
    Unit(Loc),
    /// Any other named type (`f32`, `u8`, `Vec<f64>`, user types…).
    Named {
        text: String,
        loc: Loc,
    },
    Unsupported(Construct, Loc),
}

impl Type {
    pub fn loc(&self) -> Loc {
        match self {
            Type::F64(l) | Type::Int(_, l) | Type::Bool(l) | Type::Unit(l) => *l,
            Type::Array { loc, .. } | Type::Ref { loc, .. } | Type::Named { loc, .. } => *loc,
            Type::Unsupported(_, l) => *l,
        }
    }
}

/// A block: statements and an optional tail expression (its value).
#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub tail: Option<Box<Expr>>,
    pub loc: Loc,
}

/// A statement.
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `let [mut] name[: ty] = init;` (`name` is `None` for `_`).
    Let {
        id: usize,
        name: Option<Name>,
        mutable: bool,
        ty: Option<Type>,
        init: Option<Expr>,
        loc: Loc,
    },
    /// `const NAME: TY = value;`
    Const {
        id: usize,
        name: Name,
        ty: Type,
        value: Expr,
    },
    /// An expression statement (with `;`, or a block-like expression).
    Expr(Expr),
    Unsupported(Construct, Loc),
    /// A `let` outside the subset (destructuring, `let … else`); `names` are
    /// the names it binds, so that their uses are not reported again.
    BadLet {
        construct: Construct,
        loc: Loc,
        names: Vec<Name>,
    },
}

/// A path expression such as `x`, `D`, `f64::sqrt` or `std::f64::consts::PI`.
#[derive(Clone, Debug)]
pub struct Path {
    pub leading_colon: bool,
    pub segments: Vec<Name>,
    /// Generic arguments (`::<…>`) anywhere in the path.
    pub generic_args: bool,
    pub loc: Loc,
    /// The path's tokens, to compare with declared helper paths.
    pub text: String,
}

impl Path {
    /// The single identifier of a one-segment path.
    pub fn ident(&self) -> Option<&Name> {
        match self.segments.as_slice() {
            [one] if !self.leading_colon && !self.generic_args => Some(one),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&&",
            BinOp::Or => "||",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
        }
    }

    pub fn is_arithmetic(self) -> bool {
        matches!(
            self,
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
        )
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

/// An expression; `id` indexes the checker's side tables.
#[derive(Clone, Debug)]
pub struct Expr {
    pub id: usize,
    pub kind: ExprKind,
    pub loc: Loc,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    /// A float literal: its value, and its suffix if any (`1.0f64`).
    Float {
        value: f64,
        suffix: Option<String>,
    },
    /// An integer literal: its value, and its suffix if any (`3usize`).
    Int {
        value: u64,
        suffix: Option<String>,
    },
    Bool(bool),
    Path(Path),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Assign(Box<Expr>, Box<Expr>),
    /// `place op= value` (`op` is arithmetic).
    CompoundAssign(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, Type),
    Index(Box<Expr>, Box<Expr>),
    Call(Path, Vec<Expr>),
    MethodCall {
        receiver: Box<Expr>,
        method: Name,
        args: Vec<Expr>,
        turbofish: bool,
    },
    /// `if cond { then } [else els]`; `els` is a block expression or another `if`.
    If(Box<Expr>, Block, Option<Box<Expr>>),
    Block(Block),
    /// `for var in start..end { body }` (`..=` if `inclusive`); `var` is
    /// `None` for `_`.
    For {
        var: Option<Name>,
        start: Box<Expr>,
        end: Box<Expr>,
        inclusive: bool,
        body: Block,
    },
    Array(Vec<Expr>),
    Repeat(Box<Expr>, Box<Expr>),
    /// `&e` / `&mut e`.
    Ref(bool, Box<Expr>),
    Paren(Box<Expr>),
    Unsupported(Construct),
}

/// Syntax outside the subset. [`crate::check::unsupported`] words the errors.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Construct {
    Closure,
    While,
    Loop,
    Match,
    /// A macro invocation, with its name.
    Macro(String),
    StructLiteral,
    Tuple,
    FieldAccess,
    Unsafe,
    Return,
    Break,
    Continue,
    Async,
    Await,
    TryOperator,
    LetCondition,
    /// A range outside `for i in a..b`, or a range form other than `a..b`, `a..=b`.
    Range,
    /// A `for` loop whose iterator is not a range.
    ForIterator,
    /// A `for` loop pattern other than an identifier or `_`.
    ForPattern,
    Deref,
    /// A bitwise or shift operator, with its symbol.
    BitOp(String),
    Label,
    LetElse,
    /// A `let` pattern other than `x`, `mut x`, `_`.
    Pattern,
    /// An item other than `const` inside the body: `fn`, `struct`, `use`, …
    NestedItem(String),
    Static,
    /// An attribute other than lint attributes (`#[allow]`, …) inside the body.
    Attribute,
    /// Slices, pointers, `impl Trait`, `dyn Trait`, function pointers, `_`…
    OtherType(String),
    /// Expressions syn reports as verbatim, `const {}`, `yield`, `_`, raw addresses.
    OtherExpr(String),
    // Signature-level constructs.
    ConstFn,
    AsyncFn,
    UnsafeFn,
    ExternFn,
    Variadic,
    Receiver,
    WhereClause,
}

impl Block {
    /// Calls `f` on every expression of the block, outer ones first.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        for s in &self.stmts {
            match s {
                Stmt::Let { init: Some(e), .. } | Stmt::Const { value: e, .. } | Stmt::Expr(e) => {
                    e.walk(f)
                }
                _ => {}
            }
        }
        if let Some(t) = &self.tail {
            t.walk(f);
        }
    }
}

impl Expr {
    /// Calls `f` on this expression and every expression inside it.
    pub fn walk(&self, f: &mut dyn FnMut(&Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Unary(_, x)
            | ExprKind::Paren(x)
            | ExprKind::Cast(x, _)
            | ExprKind::Ref(_, x) => x.walk(f),
            ExprKind::Binary(_, l, r)
            | ExprKind::Assign(l, r)
            | ExprKind::CompoundAssign(_, l, r)
            | ExprKind::Index(l, r)
            | ExprKind::Repeat(l, r) => {
                l.walk(f);
                r.walk(f);
            }
            ExprKind::Call(_, args) | ExprKind::Array(args) => args.iter().for_each(|a| a.walk(f)),
            ExprKind::MethodCall { receiver, args, .. } => {
                receiver.walk(f);
                args.iter().for_each(|a| a.walk(f));
            }
            ExprKind::If(c, then, els) => {
                c.walk(f);
                then.walk(f);
                if let Some(e) = els {
                    e.walk(f);
                }
            }
            ExprKind::Block(b) => b.walk(f),
            ExprKind::For {
                start, end, body, ..
            } => {
                start.walk(f);
                end.walk(f);
                body.walk(f);
            }
            _ => {}
        }
    }
}
