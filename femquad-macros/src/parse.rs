//! syn → the subset's AST ([`crate::ast`]).
//!
//! Total: nothing is rejected here. Syntax outside the subset becomes an
//! `Unsupported` node naming the construct; [`crate::check`] reports it.

use crate::ast::*;
use quote::ToTokens;
use syn::ext::IdentExt;

/// Converts a function; returns it with the number of ids handed out.
pub fn function(f: &syn::ItemFn) -> (Function, usize) {
    let mut p = Parser { next_id: 0 };
    let func = p.function(f);
    (func, p.next_id)
}

struct Parser {
    next_id: usize,
}

fn name(ident: &syn::Ident) -> Name {
    Name {
        text: ident.unraw().to_string(),
        loc: Loc::of(ident),
    }
}

/// The normalized text of a path, for comparing call sites with the paths
/// declared in `#[pointwise(helpers(…))]`.
pub fn path_text(path: &syn::Path) -> String {
    path.to_token_stream().to_string()
}

fn is_lint_attribute(attr: &syn::Attribute) -> bool {
    let path = attr.path();
    let first = path.segments.first().map(|s| s.ident.to_string());
    match first.as_deref() {
        Some("allow" | "expect" | "warn" | "deny" | "forbid" | "doc") => path.segments.len() == 1,
        Some("rustfmt" | "clippy") => true,
        _ => false,
    }
}

fn foreign_attribute(attrs: &[syn::Attribute]) -> Option<&syn::Attribute> {
    attrs.iter().find(|a| !is_lint_attribute(a))
}

impl Parser {
    fn id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id - 1
    }

    fn function(&mut self, f: &syn::ItemFn) -> Function {
        let sig = &f.sig;
        let mut unsupported = Vec::new();
        if let Some(t) = &sig.constness {
            unsupported.push((Construct::ConstFn, Loc::of(t)));
        }
        if let Some(t) = &sig.asyncness {
            unsupported.push((Construct::AsyncFn, Loc::of(t)));
        }
        if let Some(t) = &sig.unsafety {
            unsupported.push((Construct::UnsafeFn, Loc::of(t)));
        }
        if let Some(t) = &sig.abi {
            unsupported.push((Construct::ExternFn, Loc::of(t)));
        }
        if let Some(t) = &sig.variadic {
            unsupported.push((Construct::Variadic, Loc::of(t)));
        }
        if let Some(w) = &sig.generics.where_clause {
            unsupported.push((Construct::WhereClause, Loc::of(w)));
        }
        let generics = sig
            .generics
            .params
            .iter()
            .map(|g| match g {
                syn::GenericParam::Const(c) => Generic::Const {
                    name: name(&c.ident),
                    ty: self.ty(&c.ty),
                    loc: Loc::of(c),
                },
                other => Generic::Other(Loc::of(other)),
            })
            .collect();
        let mut params = Vec::new();
        for input in &sig.inputs {
            match input {
                syn::FnArg::Receiver(r) => unsupported.push((Construct::Receiver, Loc::of(r))),
                syn::FnArg::Typed(pt) => {
                    let (pname, mutable) = match &*pt.pat {
                        syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                            (Some(name(&pi.ident)), pi.mutability.is_some())
                        }
                        _ => (None, false),
                    };
                    params.push(Param {
                        name: pname,
                        mutable,
                        ty: self.ty(&pt.ty),
                        loc: Loc::of(pt),
                    });
                }
            }
        }
        let ret = match &sig.output {
            syn::ReturnType::Default => None,
            syn::ReturnType::Type(_, t) => Some(self.ty(t)),
        };
        Function {
            name: name(&sig.ident),
            generics,
            params,
            ret,
            body: self.block(&f.block),
            unsupported,
        }
    }

    fn ty(&mut self, t: &syn::Type) -> Type {
        let loc = Loc::of(t);
        match t {
            syn::Type::Path(tp) if tp.qself.is_none() => {
                let p = &tp.path;
                if p.segments.len() == 1
                    && p.leading_colon.is_none()
                    && p.segments[0].arguments.is_none()
                {
                    match p.segments[0].ident.to_string().as_str() {
                        "f64" => return Type::F64(loc),
                        "usize" => return Type::Int(IntKind::Usize, loc),
                        "i32" => return Type::Int(IntKind::I32, loc),
                        "bool" => return Type::Bool(loc),
                        _ => {}
                    }
                }
                let text = p
                    .segments
                    .iter()
                    .map(|s| s.ident.to_string())
                    .collect::<Vec<_>>()
                    .join("::");
                Type::Named { text, loc }
            }
            syn::Type::Path(_) => {
                Type::Unsupported(Construct::OtherType("a qualified path type".into()), loc)
            }
            syn::Type::Array(a) => Type::Array {
                elem: Box::new(self.ty(&a.elem)),
                len: Box::new(self.expr(&a.len)),
                loc,
            },
            syn::Type::Reference(r) => Type::Ref {
                mutable: r.mutability.is_some(),
                lifetime: r.lifetime.is_some(),
                inner: Box::new(self.ty(&r.elem)),
                loc,
            },
            syn::Type::Tuple(tt) if tt.elems.is_empty() => Type::Unit(loc),
            syn::Type::Tuple(_) => Type::Unsupported(Construct::Tuple, loc),
            syn::Type::Paren(p) => self.ty(&p.elem),
            syn::Type::Group(g) => self.ty(&g.elem),
            syn::Type::Slice(_) => {
                Type::Unsupported(Construct::OtherType("slice `[T]`".into()), loc)
            }
            syn::Type::Ptr(_) => Type::Unsupported(Construct::OtherType("raw pointer".into()), loc),
            syn::Type::ImplTrait(_) => {
                Type::Unsupported(Construct::OtherType("`impl Trait`".into()), loc)
            }
            syn::Type::TraitObject(_) => {
                Type::Unsupported(Construct::OtherType("`dyn Trait`".into()), loc)
            }
            syn::Type::BareFn(_) => {
                Type::Unsupported(Construct::OtherType("function pointer".into()), loc)
            }
            syn::Type::Infer(_) => {
                Type::Unsupported(Construct::OtherType("inferred type `_`".into()), loc)
            }
            syn::Type::Never(_) => {
                Type::Unsupported(Construct::OtherType("never type `!`".into()), loc)
            }
            syn::Type::Macro(m) => Type::Unsupported(Construct::Macro(macro_name(&m.mac)), loc),
            _ => Type::Unsupported(Construct::OtherType("this type".into()), loc),
        }
    }

    fn block(&mut self, b: &syn::Block) -> Block {
        let mut stmts = Vec::new();
        let mut tail = None;
        let n = b.stmts.len();
        for (i, s) in b.stmts.iter().enumerate() {
            match s {
                syn::Stmt::Expr(e, None) if i + 1 == n => tail = Some(Box::new(self.expr(e))),
                _ => stmts.push(self.stmt(s)),
            }
        }
        Block {
            stmts,
            tail,
            loc: Loc::of(b),
        }
    }

    fn stmt(&mut self, s: &syn::Stmt) -> Stmt {
        let loc = Loc::of(s);
        match s {
            syn::Stmt::Local(l) => {
                if let Some(a) = foreign_attribute(&l.attrs) {
                    return Stmt::Unsupported(Construct::Attribute, Loc::of(a));
                }
                let mut names = Vec::new();
                pat_names(&l.pat, &mut names);
                if let Some(init) = &l.init
                    && let Some((_, diverge)) = &init.diverge
                {
                    return Stmt::BadLet {
                        construct: Construct::LetElse,
                        loc: Loc::of(diverge),
                        names,
                    };
                }
                let (pat, ty) = match &l.pat {
                    syn::Pat::Type(pt) => (&*pt.pat, Some(self.ty(&pt.ty))),
                    p => (p, None),
                };
                let (name, mutable) = match pat {
                    syn::Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => {
                        (Some(name(&pi.ident)), pi.mutability.is_some())
                    }
                    syn::Pat::Wild(_) => (None, false),
                    syn::Pat::Tuple(_) | syn::Pat::TupleStruct(_) => {
                        return Stmt::BadLet {
                            construct: Construct::Tuple,
                            loc: Loc::of(pat),
                            names,
                        };
                    }
                    other => {
                        return Stmt::BadLet {
                            construct: Construct::Pattern,
                            loc: Loc::of(other),
                            names,
                        };
                    }
                };
                let init = l.init.as_ref().map(|i| self.expr(&i.expr));
                Stmt::Let {
                    id: self.id(),
                    name,
                    mutable,
                    ty,
                    init,
                    loc,
                }
            }
            syn::Stmt::Item(item) => self.item(item, loc),
            syn::Stmt::Expr(e, _) => Stmt::Expr(self.expr(e)),
            syn::Stmt::Macro(m) => Stmt::Unsupported(Construct::Macro(macro_name(&m.mac)), loc),
        }
    }

    fn item(&mut self, item: &syn::Item, loc: Loc) -> Stmt {
        let kind = match item {
            syn::Item::Const(c) => {
                if let Some(a) = foreign_attribute(&c.attrs) {
                    return Stmt::Unsupported(Construct::Attribute, Loc::of(a));
                }
                if !c.generics.params.is_empty() {
                    return Stmt::Unsupported(Construct::NestedItem("generic `const`".into()), loc);
                }
                return Stmt::Const {
                    id: self.id(),
                    name: name(&c.ident),
                    ty: self.ty(&c.ty),
                    value: self.expr(&c.expr),
                };
            }
            syn::Item::Static(_) => return Stmt::Unsupported(Construct::Static, loc),
            syn::Item::Macro(m) => {
                return Stmt::Unsupported(Construct::Macro(macro_name(&m.mac)), loc);
            }
            syn::Item::Fn(_) => "fn",
            syn::Item::Struct(_) => "struct",
            syn::Item::Enum(_) => "enum",
            syn::Item::Union(_) => "union",
            syn::Item::Use(_) => "use",
            syn::Item::Impl(_) => "impl",
            syn::Item::Mod(_) => "mod",
            syn::Item::Trait(_) | syn::Item::TraitAlias(_) => "trait",
            syn::Item::Type(_) => "type",
            syn::Item::ExternCrate(_) => "extern crate",
            syn::Item::ForeignMod(_) => "extern block",
            _ => "item",
        };
        Stmt::Unsupported(Construct::NestedItem(kind.into()), loc)
    }

    fn boxed(&mut self, e: &syn::Expr) -> Box<Expr> {
        Box::new(self.expr(e))
    }

    fn path(&mut self, p: &syn::Path) -> Path {
        Path {
            leading_colon: p.leading_colon.is_some(),
            segments: p.segments.iter().map(|s| name(&s.ident)).collect(),
            generic_args: p.segments.iter().any(|s| !s.arguments.is_none()),
            loc: Loc::of(p),
            text: path_text(p),
        }
    }

    fn expr(&mut self, e: &syn::Expr) -> Expr {
        use syn::Expr as E;
        let loc = Loc::of(e);
        let kind = match e {
            E::Lit(l) => lit(&l.lit),
            E::Path(p) if p.qself.is_none() => ExprKind::Path(self.path(&p.path)),
            E::Path(_) => ExprKind::Unsupported(Construct::OtherExpr(
                "a qualified path `<T as Trait>::…`".into(),
            )),
            E::Unary(u) => match u.op {
                syn::UnOp::Neg(_) => ExprKind::Unary(UnOp::Neg, self.boxed(&u.expr)),
                syn::UnOp::Not(_) => ExprKind::Unary(UnOp::Not, self.boxed(&u.expr)),
                _ => ExprKind::Unsupported(Construct::Deref),
            },
            E::Binary(b) => self.binary(b),
            E::Assign(a) => ExprKind::Assign(self.boxed(&a.left), self.boxed(&a.right)),
            E::Cast(c) => ExprKind::Cast(self.boxed(&c.expr), self.ty(&c.ty)),
            E::Index(i) => ExprKind::Index(self.boxed(&i.expr), self.boxed(&i.index)),
            E::Call(c) => match &*c.func {
                E::Path(p) if p.qself.is_none() => ExprKind::Call(
                    self.path(&p.path),
                    c.args.iter().map(|a| self.expr(a)).collect(),
                ),
                _ => ExprKind::Unsupported(Construct::OtherExpr(
                    "a call of a computed function value".into(),
                )),
            },
            E::MethodCall(m) => ExprKind::MethodCall {
                receiver: self.boxed(&m.receiver),
                method: name(&m.method),
                args: m.args.iter().map(|a| self.expr(a)).collect(),
                turbofish: m.turbofish.is_some(),
            },
            E::If(i) => {
                if let E::Let(_) = &*i.cond {
                    ExprKind::Unsupported(Construct::LetCondition)
                } else {
                    let els = i.else_branch.as_ref().map(|(_, e)| self.boxed(e));
                    ExprKind::If(self.boxed(&i.cond), self.block(&i.then_branch), els)
                }
            }
            E::Block(b) if b.label.is_some() => ExprKind::Unsupported(Construct::Label),
            E::Block(b) => ExprKind::Block(self.block(&b.block)),
            E::ForLoop(f) => self.for_loop(f),
            E::Array(a) => ExprKind::Array(a.elems.iter().map(|x| self.expr(x)).collect()),
            E::Repeat(r) => ExprKind::Repeat(self.boxed(&r.expr), self.boxed(&r.len)),
            E::Reference(r) => ExprKind::Ref(r.mutability.is_some(), self.boxed(&r.expr)),
            E::Paren(p) => ExprKind::Paren(self.boxed(&p.expr)),
            E::Group(g) => return self.expr(&g.expr),
            E::Closure(_) => ExprKind::Unsupported(Construct::Closure),
            E::While(_) => ExprKind::Unsupported(Construct::While),
            E::Loop(_) => ExprKind::Unsupported(Construct::Loop),
            E::Match(_) => ExprKind::Unsupported(Construct::Match),
            E::Macro(m) => ExprKind::Unsupported(Construct::Macro(macro_name(&m.mac))),
            E::Struct(_) => ExprKind::Unsupported(Construct::StructLiteral),
            E::Tuple(_) => ExprKind::Unsupported(Construct::Tuple),
            E::Field(_) => ExprKind::Unsupported(Construct::FieldAccess),
            E::Unsafe(_) => ExprKind::Unsupported(Construct::Unsafe),
            E::Return(_) => ExprKind::Unsupported(Construct::Return),
            E::Break(_) => ExprKind::Unsupported(Construct::Break),
            E::Continue(_) => ExprKind::Unsupported(Construct::Continue),
            E::Async(_) => ExprKind::Unsupported(Construct::Async),
            E::Await(_) => ExprKind::Unsupported(Construct::Await),
            E::Try(_) => ExprKind::Unsupported(Construct::TryOperator),
            E::Let(_) => ExprKind::Unsupported(Construct::LetCondition),
            E::Range(_) => ExprKind::Unsupported(Construct::Range),
            E::TryBlock(_) => ExprKind::Unsupported(Construct::OtherExpr("a `try` block".into())),
            E::Yield(_) => ExprKind::Unsupported(Construct::OtherExpr("`yield`".into())),
            E::Const(_) => ExprKind::Unsupported(Construct::OtherExpr("a `const` block".into())),
            E::Infer(_) => ExprKind::Unsupported(Construct::OtherExpr("`_`".into())),
            E::RawAddr(_) => {
                ExprKind::Unsupported(Construct::OtherExpr("a raw address `&raw`".into()))
            }
            _ => ExprKind::Unsupported(Construct::OtherExpr("this expression".into())),
        };
        Expr {
            id: self.id(),
            kind,
            loc,
        }
    }

    fn binary(&mut self, b: &syn::ExprBinary) -> ExprKind {
        use syn::BinOp as B;
        let plain = |op| Some((op, false));
        let compound = |op| Some((op, true));
        let op = match b.op {
            B::Add(_) => plain(BinOp::Add),
            B::Sub(_) => plain(BinOp::Sub),
            B::Mul(_) => plain(BinOp::Mul),
            B::Div(_) => plain(BinOp::Div),
            B::Rem(_) => plain(BinOp::Rem),
            B::And(_) => plain(BinOp::And),
            B::Or(_) => plain(BinOp::Or),
            B::Eq(_) => plain(BinOp::Eq),
            B::Ne(_) => plain(BinOp::Ne),
            B::Lt(_) => plain(BinOp::Lt),
            B::Le(_) => plain(BinOp::Le),
            B::Gt(_) => plain(BinOp::Gt),
            B::Ge(_) => plain(BinOp::Ge),
            B::AddAssign(_) => compound(BinOp::Add),
            B::SubAssign(_) => compound(BinOp::Sub),
            B::MulAssign(_) => compound(BinOp::Mul),
            B::DivAssign(_) => compound(BinOp::Div),
            B::RemAssign(_) => compound(BinOp::Rem),
            _ => None,
        };
        match op {
            Some((op, false)) => ExprKind::Binary(op, self.boxed(&b.left), self.boxed(&b.right)),
            Some((op, true)) => {
                ExprKind::CompoundAssign(op, self.boxed(&b.left), self.boxed(&b.right))
            }
            None => ExprKind::Unsupported(Construct::BitOp(b.op.to_token_stream().to_string())),
        }
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop) -> ExprKind {
        if f.label.is_some() {
            return ExprKind::Unsupported(Construct::Label);
        }
        let var = match &*f.pat {
            syn::Pat::Ident(pi)
                if pi.by_ref.is_none() && pi.subpat.is_none() && pi.mutability.is_none() =>
            {
                Some(name(&pi.ident))
            }
            syn::Pat::Wild(_) => None,
            _ => return ExprKind::Unsupported(Construct::ForPattern),
        };
        let mut iter = &*f.expr;
        while let syn::Expr::Paren(p) = iter {
            iter = &p.expr;
        }
        match iter {
            syn::Expr::Range(r) => match (&r.start, &r.end) {
                (Some(s), Some(e)) => ExprKind::For {
                    var,
                    start: self.boxed(s),
                    end: self.boxed(e),
                    inclusive: matches!(r.limits, syn::RangeLimits::Closed(_)),
                    body: self.block(&f.body),
                },
                _ => ExprKind::Unsupported(Construct::Range),
            },
            _ => ExprKind::Unsupported(Construct::ForIterator),
        }
    }
}

/// The names a pattern binds.
fn pat_names(p: &syn::Pat, out: &mut Vec<Name>) {
    use syn::Pat as P;
    match p {
        P::Ident(pi) => {
            out.push(name(&pi.ident));
            if let Some((_, sub)) = &pi.subpat {
                pat_names(sub, out);
            }
        }
        P::Tuple(t) => t.elems.iter().for_each(|e| pat_names(e, out)),
        P::TupleStruct(t) => t.elems.iter().for_each(|e| pat_names(e, out)),
        P::Struct(s) => s.fields.iter().for_each(|f| pat_names(&f.pat, out)),
        P::Slice(s) => s.elems.iter().for_each(|e| pat_names(e, out)),
        P::Reference(r) => pat_names(&r.pat, out),
        P::Type(t) => pat_names(&t.pat, out),
        P::Paren(p) => pat_names(&p.pat, out),
        P::Or(o) => o.cases.iter().for_each(|c| pat_names(c, out)),
        _ => {}
    }
}

fn macro_name(m: &syn::Macro) -> String {
    m.path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default()
}

fn lit(l: &syn::Lit) -> ExprKind {
    let suffix = |s: &str| (!s.is_empty()).then(|| s.to_string());
    match l {
        syn::Lit::Float(f) => match f.base10_parse::<f64>() {
            Ok(value) => ExprKind::Float {
                value,
                suffix: suffix(f.suffix()),
            },
            Err(_) => ExprKind::Unsupported(Construct::OtherExpr("this float literal".into())),
        },
        // `2f64` is an integer literal for syn, a float for Rust.
        syn::Lit::Int(i) if matches!(i.suffix(), "f32" | "f64") => match i.base10_parse::<u64>() {
            Ok(v) => ExprKind::Float {
                value: v as f64,
                suffix: suffix(i.suffix()),
            },
            Err(_) => ExprKind::Unsupported(Construct::OtherExpr("this float literal".into())),
        },
        syn::Lit::Int(i) => match i.base10_parse::<u64>() {
            Ok(value) => ExprKind::Int {
                value,
                suffix: suffix(i.suffix()),
            },
            Err(_) => {
                ExprKind::Unsupported(Construct::OtherExpr("an integer literal this large".into()))
            }
        },
        syn::Lit::Bool(b) => ExprKind::Bool(b.value),
        syn::Lit::Str(_) | syn::Lit::ByteStr(_) | syn::Lit::CStr(_) => {
            ExprKind::Unsupported(Construct::OtherExpr("a string literal".into()))
        }
        syn::Lit::Char(_) | syn::Lit::Byte(_) => {
            ExprKind::Unsupported(Construct::OtherExpr("a character literal".into()))
        }
        _ => ExprKind::Unsupported(Construct::OtherExpr("this literal".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(f: syn::ItemFn) -> Function {
        function(&f).0
    }

    #[test]
    fn tail_and_statements_are_separated() {
        let f = parse(syn::parse_quote! {
            fn k(u: f64) -> f64 { let a = 1.0; a * u }
        });
        assert_eq!(f.body.stmts.len(), 1);
        assert!(matches!(
            f.body.tail.as_deref().map(|e| &e.kind),
            Some(ExprKind::Binary(BinOp::Mul, _, _))
        ));
        assert!(matches!(f.ret, Some(Type::F64(_))));
    }

    #[test]
    fn unsupported_syntax_becomes_constructs() {
        let f = parse(syn::parse_quote! {
            fn k() {
                let c = |x: f64| x;
                while true {}
                let (a, b) = (1.0, 2.0);
                println!("x");
                let y = x & 1;
            }
        });
        let s = &f.body.stmts;
        let Stmt::Let { init: Some(c), .. } = &s[0] else {
            panic!()
        };
        assert!(matches!(c.kind, ExprKind::Unsupported(Construct::Closure)));
        let Stmt::Expr(w) = &s[1] else { panic!() };
        assert!(matches!(w.kind, ExprKind::Unsupported(Construct::While)));
        assert!(
            matches!(&s[2], Stmt::BadLet { construct: Construct::Tuple, names, .. } if names.len() == 2)
        );
        assert!(matches!(&s[3], Stmt::Unsupported(Construct::Macro(m), _) if m == "println"));
        let Stmt::Let { init: Some(b), .. } = &s[4] else {
            panic!()
        };
        assert!(matches!(&b.kind, ExprKind::Unsupported(Construct::BitOp(op)) if op == "&"));
    }

    #[test]
    fn for_loops_over_ranges() {
        let f = parse(syn::parse_quote! {
            fn k<const D: usize>() { for i in 0..=D { } for _ in (1..3) {} for x in v.iter() {} }
        });
        let Stmt::Expr(e) = &f.body.stmts[0] else {
            panic!()
        };
        assert!(
            matches!(&e.kind, ExprKind::For { inclusive: true, var: Some(v), .. } if v.text == "i")
        );
        let Stmt::Expr(e) = &f.body.stmts[1] else {
            panic!()
        };
        assert!(matches!(
            &e.kind,
            ExprKind::For {
                inclusive: false,
                var: None,
                ..
            }
        ));
        let e = f.body.tail.as_deref().unwrap();
        assert!(matches!(
            e.kind,
            ExprKind::Unsupported(Construct::ForIterator)
        ));
        assert!(matches!(f.generics[0], Generic::Const { .. }));
    }

    #[test]
    fn literals_keep_values_and_suffixes() {
        let f =
            parse(syn::parse_quote! { fn k() { let a = 1.5e-3; let b = 2f64; let c = 7usize; } });
        let vals: Vec<_> = f
            .body
            .stmts
            .iter()
            .map(|s| match s {
                Stmt::Let { init: Some(e), .. } => e.kind.clone(),
                _ => panic!(),
            })
            .collect();
        assert!(matches!(&vals[0], ExprKind::Float { value, suffix: None } if *value == 1.5e-3));
        assert!(
            matches!(&vals[1], ExprKind::Float { value, suffix: Some(s) } if *value == 2.0 && s == "f64")
        );
        assert!(matches!(&vals[2], ExprKind::Int { value: 7, suffix: Some(s) } if s == "usize"));
    }
}
