//! Calls: helpers (declared with `helpers(…)`), math functions (methods and
//! `f64::` paths), and everything else that looks like a call.

use super::body::{Body, strip_parens};
use super::infer::VarKind;
use super::unsupported::{HEAP, is_heap_name};
use super::{BindingKind, Res, Ty};
use crate::ast::*;
use crate::math::{self, Arg, MathFn};

impl Body<'_> {
    pub(super) fn helper_index(&self, p: &Path) -> Option<usize> {
        self.helper_texts.iter().position(|t| *t == p.text)
    }

    pub(super) fn call(&mut self, e: &Expr, p: &Path, args: &[Expr]) -> Ty {
        // Recursion first: a function may not call itself, declared or not.
        let declared = self.helper_index(p);
        if let Some(i) = declared {
            self.helper_used[i] = true;
        }
        // Only `name(…)` and `self::name(…)` are known to be the function
        // itself: `other::name` may be a helper of the same name elsewhere
        // (recursion through paths is caught when the crate is compiled).
        let own = match p.segments.as_slice() {
            [n] => !p.leading_colon && n.text == self.fn_name,
            [s, n] => !p.leading_colon && s.text == "self" && n.text == self.fn_name,
            _ => false,
        };
        if own {
            self.errors.at(
                p.loc,
                format!(
                    "recursive call of `{}`: OpenCL C does not allow recursion; use a `for` \
                     loop with a constant trip count",
                    self.fn_name
                ),
            );
            self.check_args_loosely(args);
            return Ty::Error;
        }
        if let Some(i) = self.helper_index(p) {
            self.helper_used[i] = true;
            self.res.insert(e.id, Res::Helper(i));
            for a in args {
                self.helper_arg(a);
            }
            self.borrows(args);
            return self.infer.fresh(VarKind::HelperRet);
        }
        if p.segments.len() == 2 && !p.leading_colon && p.segments[0].text == "f64" {
            let name = &p.segments[1].text;
            if let Some(f) = math::function(name) {
                if p.generic_args {
                    self.errors
                        .at(p.loc, "generic arguments are not supported here");
                }
                self.res.insert(e.id, Res::Math(f));
                if args.len() != f.args.len() + 1 {
                    self.errors.at(
                        e.loc,
                        format!(
                            "`f64::{name}` takes {} argument(s), found {}",
                            f.args.len() + 1,
                            args.len()
                        ),
                    );
                    self.check_args_loosely(args);
                    return Ty::Real;
                }
                let t0 = self.expr(&args[0]);
                if self.infer.unify(&t0, &Ty::Real).is_err() {
                    self.mismatch(
                        &args[0],
                        &Ty::Real,
                        &t0,
                        &format!("the argument of `f64::{name}`"),
                    );
                }
                self.math_args(f, &args[1..]);
                return Ty::Real;
            }
            if name == "from" {
                self.errors
                    .at(p.loc, "`f64::from` is not supported: convert with `as f64`");
                self.check_args_loosely(args);
                return Ty::Error;
            }
        }
        if p.segments.iter().any(|s| is_heap_name(&s.text)) {
            self.errors.at(p.loc, HEAP);
            return Ty::Error;
        }
        if let Some(n) = p.ident()
            && let Some(b) = self.lookup(&n.text)
        {
            // A name bound to something already reported (a closure…) is
            // not reported again.
            if !self.infer.is_error(&self.bindings[b].ty) {
                self.errors
                    .at(p.loc, format!("`{}` is a variable, not a function", n.text));
            }
            self.check_args_loosely(args);
            return Ty::Error;
        }
        let msg = {
            format!(
                "unknown function `{}`: only math functions ({}; called as `x.sqrt()` or \
                 `f64::sqrt(x)`) and #[pointwise] helpers declared with \
                 `#[pointwise(helpers({}))]` can be called",
                p.text.replace(' ', ""),
                math::function_list(),
                p.text.replace(' ', "")
            )
        };
        self.errors.at(p.loc, msg);
        self.check_args_loosely(args);
        Ty::Error
    }

    /// Rust's borrow rules for the arguments of one call, checked here so
    /// that rustc never reports them (twice, on the function and its
    /// translation): an array passed `&mut` may not appear in a later
    /// argument nor be borrowed by an earlier one, and an array passed `&`
    /// may not be written by a later argument. A `&mut` reference passed on
    /// by name (`h(q, q[0])`) is reborrowed — `&*q` or, where the helper
    /// takes `&mut`, a two-phase `&mut *q` — so later arguments may read it
    /// but not write it; since the macro does not see which the helper
    /// takes, no other argument may borrow it as well (`h(q, q)`), nor pass
    /// it on by name inside a later argument (`h(q, g(q))`).
    pub(super) fn borrows(&mut self, args: &[Expr]) {
        #[derive(Clone, Copy, PartialEq)]
        enum How {
            Shared,
            Mut,
            Reborrow,
        }
        // (argument, root binding, how) of each array passed by reference.
        let mut borrowed = Vec::new();
        for (i, a) in args.iter().enumerate() {
            let (inner, how) = match &a.kind {
                ExprKind::Ref(true, inner) => (&**inner, How::Mut),
                ExprKind::Ref(false, inner) => (&**inner, How::Shared),
                _ => (a, How::Shared),
            };
            if !matches!(
                self.types.get(&a.id).map(|t| self.infer.shallow(t)),
                Some(Ty::Array(..))
            ) {
                continue;
            }
            if let Some(b) = self.place_root(strip_parens(inner)) {
                let by_name = !matches!(a.kind, ExprKind::Ref(..));
                let how = if by_name && self.bindings[b].mutable {
                    How::Reborrow
                } else {
                    how
                };
                borrowed.push((i, b, how));
            }
        }
        for &(i, b, how) in &borrowed {
            let name = self.bindings[b].rust.clone();
            // A reference of an earlier argument is still alive.
            if how != How::Shared
                && let Some(&(j, ..)) = borrowed.iter().find(|(j, c, _)| *j < i && *c == b)
            {
                let msg = if how == How::Mut {
                    format!(
                        "`{name}` is already borrowed by argument {} of this call, so it cannot \
                         be passed as `&mut` (Rust's borrow rules)",
                        j + 1
                    )
                } else {
                    format!(
                        "`{name}` is already borrowed by argument {} of this call, so it cannot \
                         be passed on by name: the helper may take it as `&mut` (Rust's borrow \
                         rules)",
                        j + 1
                    )
                };
                self.errors.at(args[i].loc, msg);
            }
            // Later arguments are evaluated while the borrow is alive.
            for (k, other) in args.iter().enumerate().skip(i + 1) {
                let (uses, writes) = self.mentions(other, b);
                let held = borrowed
                    .iter()
                    .any(|&(k2, c, h)| k2 == k && c == b && h == How::Shared);
                let msg = match how {
                    How::Mut if uses => format!(
                        "`{name}` is passed as `&mut` in argument {} of this call, so a later \
                         argument cannot use it (Rust's borrow rules)",
                        i + 1
                    ),
                    How::Shared if writes => format!(
                        "`{name}` is borrowed by argument {} of this call, so a later argument \
                         cannot write it (Rust's borrow rules)",
                        i + 1
                    ),
                    How::Reborrow if writes => format!(
                        "`{name}` is passed on by name in argument {} of this call, so a later \
                         argument cannot write it nor pass it on by name (Rust's borrow rules; \
                         the helper may take it as `&mut`)",
                        i + 1
                    ),
                    How::Reborrow if held => format!(
                        "`{name}` is passed on by name in argument {} of this call, which the \
                         helper may take as `&mut`, so a later argument cannot borrow it as well \
                         (Rust's borrow rules)",
                        i + 1
                    ),
                    _ => continue,
                };
                self.errors.at(other.loc, msg);
            }
        }
    }

    /// Whether `e` reads binding `b`, and whether it writes it (assignment,
    /// `&mut`, or — for a `&mut` reference — passing it on by name to a
    /// helper, which may take it as `&mut`).
    fn mentions(&self, e: &Expr, b: usize) -> (bool, bool) {
        let (mut uses, mut writes) = (false, false);
        let is_b = |x: &Expr| {
            matches!(&x.kind, ExprKind::Path(_))
                && matches!(self.res.get(&x.id), Some(Res::Binding(y)) if *y == b)
        };
        e.walk(&mut |x| match &x.kind {
            ExprKind::Path(_) => uses |= is_b(x),
            ExprKind::Assign(p, _) | ExprKind::CompoundAssign(_, p, _) | ExprKind::Ref(true, p) => {
                writes |= self.place_root(strip_parens(p)) == Some(b)
            }
            ExprKind::Call(_, args) => {
                writes |= self.bindings[b].mutable && args.iter().any(|a| is_b(strip_parens(a)))
            }
            _ => {}
        });
        (uses, writes)
    }

    /// Checks arguments of a call that is itself an error, for their own errors.
    pub(super) fn check_args_loosely(&mut self, args: &[Expr]) {
        for a in args {
            match &a.kind {
                ExprKind::Ref(_, inner) => {
                    self.expr(inner);
                }
                _ => {
                    self.expr(a);
                }
            }
        }
    }

    pub(super) fn helper_arg(&mut self, a: &Expr) {
        match &a.kind {
            ExprKind::Ref(mutable, inner) => {
                let t = self.expr(inner);
                self.record(a, t.clone());
                let literal = matches!(
                    strip_parens(inner).kind,
                    ExprKind::Array(_) | ExprKind::Repeat(..)
                );
                if literal && !*mutable {
                    // `&[a, b]`: a temporary array.
                    return;
                }
                if !Self::is_place(inner) {
                    self.errors.at(a.loc, "pass a variable, an array element or an array literal by reference, as in `&grad_u[0]`");
                    return;
                }
                match self.infer.shallow(&t) {
                    Ty::Array(..) | Ty::Error => {}
                    other => {
                        self.errors.at(
                            a.loc,
                            format!(
                                "only arrays are passed by reference; pass {} by value",
                                self.infer.describe(&other)
                            ),
                        );
                        return;
                    }
                }
                if *mutable {
                    self.writable(inner);
                }
            }
            _ => {
                let t = self.expr(a);
                // Array parameters are references already (`dot(p, q)`).
                let is_ref_param = matches!(strip_parens(a).kind, ExprKind::Path(_))
                    && self
                        .place_root(strip_parens(a))
                        .is_some_and(|b| matches!(self.bindings[b].kind, BindingKind::Param(_)));
                match self.infer.shallow(&t) {
                    Ty::Array(..) if is_ref_param => {}
                    Ty::Array(..) => self
                        .errors
                        .at(a.loc, "pass arrays by reference: `&a` (or `&mut a`)"),
                    Ty::Unit => self.errors.at(a.loc, "this expression has no value (`()`)"),
                    _ => {
                        // Helpers take floats as `f64`.
                        if self.infer.is_unresolved_float(&t) {
                            let _ = self.infer.unify(&t, &Ty::Real);
                        }
                    }
                }
            }
        }
    }

    pub(super) fn math_args(&mut self, f: &'static MathFn, args: &[Expr]) {
        for (a, kind) in args.iter().zip(f.args) {
            let t = self.expr(a);
            match kind {
                Arg::Real => {
                    if self.infer.unify(&t, &Ty::Real).is_err() {
                        self.mismatch(a, &Ty::Real, &t, &format!("the argument of `{}`", f.rust));
                    }
                }
                Arg::Int => {
                    if self.infer.unify(&t, &Ty::Int(IntKind::I32)).is_err()
                        && !self.infer.is_error(&t)
                    {
                        self.errors.at(
                            a.loc,
                            format!(
                                "the exponent of `powi` is an `i32`, found {}: write an integer \
                                 (`2`), convert with `as i32`, or use `powf` for a real exponent",
                                self.infer.describe(&t)
                            ),
                        );
                    }
                }
            }
        }
    }

    pub(super) fn method(
        &mut self,
        e: &Expr,
        receiver: &Expr,
        method: &Name,
        args: &[Expr],
        turbofish: bool,
    ) -> Ty {
        let tr = self.expr(receiver);
        let Some(f) = math::function(&method.text) else {
            if self.infer.is_error(&tr) {
                self.check_args_loosely(args);
                return Ty::Error;
            }
            let hint = match method.text.as_str() {
                "iter" | "iter_mut" | "into_iter" | "map" | "sum" | "zip" | "enumerate" | "fold" => {
                    "iterators are not part of the subset; loop with `for i in 0..N` and index the array".to_string()
                }
                "len" => "array lengths are constants: write the number or `D`".into(),
                "clone" | "to_owned" | "copied" | "cloned" => {
                    "numbers and arrays are copied by assignment (`let b = a;`)".into()
                }
                "signum" => "Rust's `signum(0.0)` is 1 but OpenCL's `sign(0.0)` is 0: write it with `if`".into(),
                "recip" => "write `1.0 / x`".into(),
                "powi32" | "pow" => "use `powi` (integer exponent) or `powf`".into(),
                "to_vec" | "collect" | "push" => HEAP.into(),
                _ => format!("the supported methods are the math functions {}", math::function_list()),
            };
            self.errors.at(
                method.loc,
                format!("method `{}` is not supported: {hint}", method.text),
            );
            self.check_args_loosely(args);
            return Ty::Error;
        };
        self.res.insert(e.id, Res::Math(f));
        if turbofish {
            self.errors
                .at(method.loc, "generic arguments are not supported here");
        }
        if self.infer.is_unresolved_float(&tr) {
            self.errors.at(
                receiver.loc,
                format!(
                    "the type of this float is not known yet, so `.{}()` cannot be called on it \
                     (rustc: \"ambiguous numeric type\"): write `f64::{}(…)`, or give the \
                     variable a type, as in `let x: f64 = 2.0;`",
                    f.rust, f.rust
                ),
            );
        } else if !self.infer.is_error(&tr) && self.infer.unify(&tr, &Ty::Real).is_err() {
            self.errors.at(
                receiver.loc,
                format!(
                    "math methods apply to `f64` values, this is {}: convert it with `as f64` first",
                    self.infer.describe(&tr)
                ),
            );
        }
        if args.len() != f.args.len() {
            self.errors.at(
                e.loc,
                format!(
                    "`.{}()` takes {} argument(s), found {}",
                    f.rust,
                    f.args.len(),
                    args.len()
                ),
            );
            self.check_args_loosely(args);
            return Ty::Real;
        }
        self.math_args(f, args);
        Ty::Real
    }
}
