//! Expressions: reals, small integers, in-bounds indices, booleans, array
//! values and helper calls.

use super::{Ctx, Gen, Var};
use crate::program::*;

/// Every math function of the subset with its number of arguments after
/// the receiver (`powi` takes an `i32`).
pub const MATH: &[(&str, usize)] = &[
    ("sqrt", 0),
    ("exp", 0),
    ("ln", 0),
    ("log10", 0),
    ("powi", 1),
    ("powf", 1),
    ("sin", 0),
    ("cos", 0),
    ("tan", 0),
    ("tanh", 0),
    ("abs", 0),
    ("min", 1),
    ("max", 1),
    ("mul_add", 2),
    ("exp2", 0),
    ("log2", 0),
    ("cbrt", 0),
    ("hypot", 1),
    ("asin", 0),
    ("acos", 0),
    ("atan", 0),
    ("atan2", 1),
    ("sinh", 0),
    ("cosh", 0),
    ("floor", 0),
    ("ceil", 0),
    ("round", 0),
    ("trunc", 0),
];

const FLOATS: &[f64] = &[
    0.0,
    0.5,
    1.0,
    2.0,
    3.0,
    0.1,
    0.25,
    0.7,
    1e-3,
    1e3,
    7.5,
    1.0 / 3.0,
    1e-12,
    123.456,
    2.5e-7,
];

const CONSTS: &[&str] = &["PI", "E", "TAU", "SQRT_2", "LN_2", "FRAC_PI_3", "LOG10_E"];

/// Whether rustc knows `e` is an `f64` (a method may be called on it).
pub(crate) fn typed(e: &Expr, vars: &[&Var]) -> bool {
    match e {
        Expr::Var(n) => vars.iter().any(|v| v.name == *n && v.ty == Ty::Real),
        Expr::Index(..) | Expr::Math { .. } | Expr::Call(..) | Expr::Const(_) => true,
        Expr::Cast(_, t) => *t == Ty::Real,
        Expr::Bin(_, a, b, true) => typed(a, vars) || typed(b, vars),
        Expr::Neg(a) => typed(a, vars),
        _ => false,
    }
}

impl Gen {
    fn float(&mut self) -> Expr {
        Expr::Float(*self.pick(FLOATS))
    }

    /// A read of a scalar of type `t`: a variable or an array element.
    pub(crate) fn read(&mut self, c: &mut Ctx, t: &Ty) -> Option<Expr> {
        let vars: Vec<Var> = c
            .visible()
            .into_iter()
            .filter(|v| v.ty.scalar() == t)
            .cloned()
            .collect();
        if vars.is_empty() {
            return None;
        }
        let v = vars[self.below(vars.len())].clone();
        Some(self.element(c, &v))
    }

    /// `v[i][j]…` down to a scalar.
    pub(crate) fn element(&mut self, c: &mut Ctx, v: &Var) -> Expr {
        let mut e = Expr::var(&v.name);
        let mut t = v.ty.clone();
        while let Ty::Arr(elem, len) = t {
            let i = self.index(c, len);
            e = e.index(i);
            t = *elem;
        }
        e
    }

    /// A real-valued expression.
    pub(crate) fn real(&mut self, c: &mut Ctx, depth: usize) -> Expr {
        if depth == 0 {
            // (Decided first: a generated read may contain a call, which
            // must not be dropped.)
            if self.chance(0.3) {
                return self.float();
            }
            return self.read(c, &Ty::Real).unwrap_or_else(|| self.float());
        }
        match self.below(100) {
            0..=9 => self.float(),
            10..=34 => self.read(c, &Ty::Real).unwrap_or_else(|| self.float()),
            35..=59 => {
                let op = *self.pick(&["+", "-", "*", "/", "+", "*", "-", "%"]);
                let a = self.real(c, depth - 1);
                let b = self.real(c, depth - 1);
                Expr::bin(op, a, b, true)
            }
            60..=63 => Expr::Neg(Box::new(self.real(c, depth - 1))),
            64..=78 => self.math(c, depth),
            79..=82 => {
                let t = if self.chance(0.5) { Ty::Usize } else { Ty::I32 };
                let i = self.int(c, &t, depth - 1);
                Expr::Cast(Box::new(i), Ty::Real)
            }
            83..=87 => {
                let cond = self.boolean(c, depth - 1);
                let t = self.value_block(c, &Ty::Real, depth - 1);
                let e = self.value_block(c, &Ty::Real, depth - 1);
                Expr::If(Box::new(cond), t, e)
            }
            88..=92 => self.effect_block(c, depth),
            93..=97 => self.call(c, true, depth).unwrap_or_else(|| self.float()),
            _ => Expr::Const(CONSTS[self.below(CONSTS.len())]),
        }
    }

    /// A block with a real value, sometimes with a statement first.
    pub(crate) fn value_block(&mut self, c: &mut Ctx, t: &Ty, depth: usize) -> Block {
        if self.chance(0.7) || c.budget == 0 {
            return Block {
                stmts: vec![],
                tail: Some(Box::new(self.value(c, t, depth))),
            };
        }
        c.push();
        let name = self.name();
        let init = self.value(c, t, depth);
        let mut stmts = vec![Stmt::Let {
            name: name.clone(),
            mutable: false,
            ty: Some(t.clone()),
            init,
        }];
        c.add(&name, t.clone(), false);
        if c.budget > 0 && self.chance(0.5) {
            c.budget -= 1;
            stmts.extend(self.stmt(c));
        }
        let tail = self.value(c, t, depth);
        c.pop();
        Block {
            stmts,
            tail: Some(Box::new(tail)),
        }
    }

    /// `{ v += e; v }` (an effect inside an expression), or a block
    /// writing an array entry and reading another.
    fn effect_block(&mut self, c: &mut Ctx, depth: usize) -> Expr {
        let scalars: Vec<Var> = c
            .visible()
            .into_iter()
            .filter(|v| c.can_write(v) && v.ty == Ty::Real)
            .cloned()
            .collect();
        let arrays: Vec<Var> = c
            .visible()
            .into_iter()
            .filter(|v| c.can_write(v) && matches!(v.ty, Ty::Arr(..)) && *v.ty.scalar() == Ty::Real)
            .cloned()
            .collect();
        if !scalars.is_empty() && (arrays.is_empty() || self.chance(0.5)) {
            let v = scalars[self.below(scalars.len())].clone();
            let value = self.real(c, depth - 1);
            let op = *self.pick(&["+", "*", "-"]);
            return Expr::Block(Block {
                stmts: vec![Stmt::Assign {
                    place: Expr::var(&v.name),
                    op: Some(op),
                    value,
                }],
                tail: Some(Box::new(Expr::var(&v.name))),
            });
        }
        if !arrays.is_empty() {
            let v = arrays[self.below(arrays.len())].clone();
            let place = self.element(c, &v);
            let value = self.real(c, depth - 1);
            let read = self.element(c, &v);
            return Expr::Block(Block {
                stmts: vec![Stmt::Assign {
                    place,
                    op: None,
                    value,
                }],
                tail: Some(Box::new(read)),
            });
        }
        self.float()
    }

    /// A math function call, its arguments usually kept in its domain.
    fn math(&mut self, c: &mut Ctx, depth: usize) -> Expr {
        let (f, extra) = *self.pick(MATH);
        let raw = self.chance(0.25);
        let mut arg = self.real(c, depth - 1);
        if !raw {
            let abs = |x: Expr| Expr::Math {
                f: "abs",
                args: vec![x],
                method: false,
            };
            let tanh = |x: Expr| Expr::Math {
                f: "tanh",
                args: vec![x],
                method: false,
            };
            arg = match f {
                "sqrt" | "ln" | "log10" | "log2" | "powf" => {
                    Expr::bin("+", abs(arg), Expr::Float(0.5), true)
                }
                "asin" | "acos" => tanh(arg),
                "exp" | "exp2" | "sinh" | "cosh" | "tan" => {
                    Expr::bin("*", tanh(arg), Expr::Float(2.0), true)
                }
                _ => arg,
            };
        }
        let mut args = vec![arg];
        for _ in 0..extra {
            let a = if f == "powi" {
                let n = self.below(9) as u64;
                if self.chance(0.3) {
                    Expr::Neg(Box::new(Expr::Int(n % 4, None)))
                } else {
                    Expr::Int(n, None)
                }
            } else if f == "powf" && !raw {
                Expr::bin(
                    "*",
                    Expr::Math {
                        f: "tanh",
                        args: vec![self.real(c, depth - 1)],
                        method: false,
                    },
                    Expr::Float(2.0),
                    true,
                )
            } else {
                self.real(c, depth - 1)
            };
            args.push(a);
        }
        let vis = c.visible();
        let method = typed(&args[0], &vis) && self.chance(0.6);
        Expr::Math { f, args, method }
    }

    /// A small integer of type `t` (`Usize` or `I32`): its arithmetic
    /// cannot overflow.
    pub(crate) fn int(&mut self, c: &mut Ctx, t: &Ty, depth: usize) -> Expr {
        let suffix = |g: &mut Gen| {
            if g.chance(0.2) {
                Some(if *t == Ty::Usize { "usize" } else { "i32" })
            } else {
                None
            }
        };
        let lit = |g: &mut Gen| Expr::Int(g.below(5) as u64, suffix(g));
        if depth == 0 {
            return lit(self);
        }
        match self.below(10) {
            0 | 1 => lit(self),
            2 | 3 => {
                let vars: Vec<Var> = c
                    .visible()
                    .into_iter()
                    .filter(|v| v.ty == *t)
                    .cloned()
                    .collect();
                if vars.is_empty() {
                    lit(self)
                } else {
                    Expr::var(&vars[self.below(vars.len())].name)
                }
            }
            4 if *t == Ty::Usize && c.generic() => Expr::var("D"),
            4 | 5 => {
                let op = if *t == Ty::I32 {
                    *self.pick(&["+", "-", "*"])
                } else {
                    *self.pick(&["+", "*"])
                };
                let a = self.int(c, t, depth.min(2) - 1);
                let b = self.int(c, t, depth.min(2) - 1);
                Expr::bin(op, a, b, false)
            }
            6 => {
                let a = self.int(c, t, depth - 1);
                let n = 1 + self.below(6) as u64;
                Expr::bin(["%", "/"][self.below(2)], a, Expr::Int(n, None), false)
            }
            _ => {
                // A cast of a real, brought back to a small value.
                let r = self.real(c, depth - 1);
                let big = Expr::Cast(Box::new(r), t.clone());
                Expr::bin("%", big, Expr::Int(1 + self.below(7) as u64, None), false)
            }
        }
    }

    /// An index valid for an array of length `len`.
    pub(crate) fn index(&mut self, c: &mut Ctx, len: Len) -> Expr {
        let n = len_expr(c.dims, len);
        let modulo = |e: Expr| Expr::bin("%", e, n.clone(), false);
        match self.below(10) {
            0..=2 => Expr::usize(self.below(len.min() as usize) as u64),
            3..=5 => {
                let loops: Vec<Var> = c
                    .visible()
                    .into_iter()
                    .filter(|v| v.ty == Ty::Usize && v.range.is_some_and(|(_, hi)| hi.within(len)))
                    .cloned()
                    .collect();
                if loops.is_empty() {
                    Expr::usize(0)
                } else {
                    Expr::var(&loops[self.below(loops.len())].name)
                }
            }
            6 => {
                let r = self.real(c, 1);
                modulo(Expr::Cast(Box::new(r), Ty::Usize))
            }
            7 => {
                let i = self.int(c, &Ty::I32, 1);
                modulo(Expr::Cast(Box::new(i), Ty::Usize))
            }
            8 => {
                // An effect inside the index (evaluation order).
                let counters: Vec<Var> = c
                    .visible()
                    .into_iter()
                    .filter(|v| c.can_write(v) && v.ty == Ty::Usize)
                    .cloned()
                    .collect();
                match counters.first() {
                    Some(k) => modulo(Expr::Block(Block {
                        stmts: vec![Stmt::Assign {
                            place: Expr::var(&k.name),
                            op: Some("+"),
                            value: Expr::usize(1),
                        }],
                        tail: Some(Box::new(Expr::var(&k.name))),
                    })),
                    None => Expr::usize(0),
                }
            }
            _ => {
                let i = self.int(c, &Ty::Usize, 2);
                modulo(i)
            }
        }
    }

    /// A boolean.
    pub(crate) fn boolean(&mut self, c: &mut Ctx, depth: usize) -> Expr {
        if depth == 0 {
            return Expr::Bool(self.chance(0.5));
        }
        match self.below(10) {
            0..=4 => {
                let op = *self.pick(&["<", "<=", ">", ">=", "==", "!="]);
                let a = self.real(c, depth - 1);
                let b = self.real(c, depth - 1);
                Expr::bin(op, a, b, true)
            }
            5 => {
                let t = if self.chance(0.5) { Ty::Usize } else { Ty::I32 };
                let op = *self.pick(&["<", "==", ">="]);
                let a = self.int(c, &t, depth - 1);
                let b = self.int(c, &t, depth - 1);
                Expr::bin(op, a, b, false)
            }
            6 | 7 => {
                let op = *self.pick(&["&&", "||"]);
                let a = self.boolean(c, depth - 1);
                let b = self.boolean(c, depth - 1);
                Expr::bin(op, a, b, false)
            }
            8 => Expr::Not(Box::new(self.boolean(c, depth - 1))),
            _ => {
                let bools: Vec<Var> = c
                    .visible()
                    .into_iter()
                    .filter(|v| v.ty == Ty::Bool)
                    .cloned()
                    .collect();
                match bools.first() {
                    Some(b) => Expr::var(&b.name),
                    None => Expr::Bool(true),
                }
            }
        }
    }

    /// A value of any type of the subset.
    pub(crate) fn value(&mut self, c: &mut Ctx, t: &Ty, depth: usize) -> Expr {
        match t {
            Ty::Real => self.real(c, depth),
            Ty::Usize | Ty::I32 => self.int(c, t, depth),
            Ty::Bool => self.boolean(c, depth),
            Ty::Arr(..) => self.array(c, t, depth),
        }
    }

    /// An array value of type `t`: a repeat, a literal, or a copy of a
    /// variable or an element of type `t`.
    pub(crate) fn array(&mut self, c: &mut Ctx, t: &Ty, depth: usize) -> Expr {
        let Ty::Arr(elem, len) = t else {
            return self.value(c, t, depth);
        };
        if self.chance(0.3) {
            // Copies of whole variables (not parameters: those are references).
            let sources: Vec<(Var, usize)> = c
                .visible()
                .into_iter()
                .filter_map(|v| {
                    let mut u = v.ty.clone();
                    let mut k = 0;
                    loop {
                        if u == *t && !(k == 0 && v.by_ref) {
                            return Some((v.clone(), k));
                        }
                        match u {
                            Ty::Arr(e, _) => {
                                u = *e;
                                k += 1;
                            }
                            _ => return None,
                        }
                    }
                })
                .collect();
            if !sources.is_empty() {
                let (v, k) = sources[self.below(sources.len())].clone();
                let mut e = Expr::var(&v.name);
                let mut u = v.ty.clone();
                for _ in 0..k {
                    let Ty::Arr(inner, l) = u else { break };
                    e = e.index(self.index(c, l));
                    u = *inner;
                }
                return e;
            }
        }
        match len {
            Len::N(n) if *n <= 4 && self.chance(0.4) => Expr::Array(
                (0..*n)
                    .map(|_| self.value(c, elem, depth.saturating_sub(1)))
                    .collect(),
            ),
            _ => Expr::Repeat(Box::new(self.value(c, elem, depth.saturating_sub(1))), *len),
        }
    }

    /// A helper call; `Some` with a value when `value` (a helper returning
    /// `f64`), arrays it needs written into fresh variables inside a block.
    pub(crate) fn call(&mut self, c: &mut Ctx, value: bool, depth: usize) -> Option<Expr> {
        let options: Vec<usize> = (0..c.helpers.len())
            .filter(|&i| !value || c.helpers[i].ret)
            .collect();
        if options.is_empty() || depth == 0 {
            return None;
        }
        let h = c.helpers[options[self.below(options.len())]].clone();
        let mut pre: Vec<Stmt> = Vec::new();
        let mut args: Vec<Option<Expr>> = vec![None; h.params.len()];
        let (forbid_before, shared_before, held_before) =
            (c.forbid.len(), c.shared.len(), c.held.len());
        // `&mut` arguments first: their roots are then kept out of the others.
        for (k, p) in h.params.iter().enumerate() {
            let PTy::Ref(true, t) = p else { continue };
            let places: Vec<Var> = c
                .visible()
                .into_iter()
                .filter(|v| {
                    c.can_write(v) && (v.ty == *t || matches!(&v.ty, Ty::Arr(e, _) if **e == *t))
                })
                .cloned()
                .collect();
            let arg = if !places.is_empty() && self.chance(0.7) {
                let v = places[self.below(places.len())].clone();
                if v.ty == *t && v.by_ref {
                    // Passed on by name: an implicit reborrow, two-phase in
                    // Rust, so later arguments may read it (not write it).
                    c.shared.push(v.name.clone());
                    c.held.push(v.name.clone());
                    Expr::var(&v.name)
                } else if v.ty == *t {
                    c.forbid.push(v.name.clone());
                    Expr::Ref(true, Box::new(Expr::var(&v.name)))
                } else {
                    let Ty::Arr(_, l) = v.ty else { unreachable!() };
                    let i = self.index(c, l);
                    c.forbid.push(v.name.clone());
                    Expr::Ref(true, Box::new(Expr::var(&v.name).index(i)))
                }
            } else {
                let name = self.name();
                let init = self.array(c, t, 1);
                pre.push(Stmt::Let {
                    name: name.clone(),
                    mutable: true,
                    ty: Some(t.clone()),
                    init,
                });
                c.forbid.push(name.clone());
                Expr::Ref(true, Box::new(Expr::var(&name)))
            };
            args[k] = Some(arg);
        }
        for (k, p) in h.params.iter().enumerate() {
            if args[k].is_some() {
                continue;
            }
            let arg = match p {
                PTy::Scalar(t) => self.value(c, t, depth.saturating_sub(1)),
                PTy::Ref(_, t) => {
                    // An array parameter passed on by name (a reference already).
                    let by_name: Vec<Var> = c
                        .visible()
                        .into_iter()
                        .filter(|v| {
                            v.by_ref
                                && v.ty == *t
                                && !c.held.contains(&v.name)
                                && !(v.writable && c.shared.contains(&v.name))
                        })
                        .cloned()
                        .collect();
                    if !by_name.is_empty() && self.chance(0.3) {
                        let v = by_name[self.below(by_name.len())].clone();
                        if v.writable {
                            c.held.push(v.name.clone());
                        }
                        Expr::var(&v.name)
                    } else {
                        let v = self.array(c, t, depth.saturating_sub(1));
                        let arg = Expr::Ref(false, Box::new(v));
                        match borrowed_root(&arg) {
                            // Not a second borrow of what may be `&mut`: a
                            // temporary array instead.
                            Some(r) if c.held.iter().any(|h| h == r) => {
                                let Ty::Arr(e, l) = t else { unreachable!() };
                                let x = self.value(c, e, 0);
                                Expr::Ref(false, Box::new(Expr::Repeat(Box::new(x), *l)))
                            }
                            _ => arg,
                        }
                    }
                }
            };
            // Borrowed until the call: later arguments may read it, not write it.
            if let (PTy::Ref(..), Some(root)) = (p, borrowed_root(&arg)) {
                c.shared.push(root.to_string());
            }
            args[k] = Some(arg);
        }
        c.forbid.truncate(forbid_before);
        c.shared.truncate(shared_before);
        c.held.truncate(held_before);
        c.use_helper(&h.name);
        let call = Expr::Call(
            h.name.clone(),
            args.into_iter().map(Option::unwrap).collect(),
        );
        if pre.is_empty() {
            Some(call)
        } else {
            Some(Expr::Block(Block {
                stmts: pre,
                tail: Some(Box::new(call)),
            }))
        }
    }
}

/// The variable a reference argument borrows: `v` of `&v`, `&v[i][j]` or
/// of a reference `v` passed on by name; `None` for a temporary (`&[x; 2]`).
fn borrowed_root(arg: &Expr) -> Option<&str> {
    let mut e = match arg {
        Expr::Ref(_, inner) => &**inner,
        Expr::Var(n) => return Some(n),
        _ => return None,
    };
    loop {
        match e {
            Expr::Var(n) => return Some(n),
            Expr::Index(a, _) => e = a,
            _ => return None,
        }
    }
}

/// The length as an index expression: a literal, or `D` (a literal in a
/// physics of fixed dimension).
pub(crate) fn len_expr(dims: Dims, l: Len) -> Expr {
    match (l, dims) {
        (Len::N(n), _) => Expr::usize(n),
        (Len::D, Dims::Fixed(d)) => Expr::usize(d),
        (Len::D, _) => Expr::var("D"),
    }
}
