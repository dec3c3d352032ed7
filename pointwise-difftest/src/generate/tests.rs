//! The generator stays inside the subset: Rust's borrow rules for the
//! arguments of helper calls, checked on the generated trees (a program
//! outside them is rejected by the macro or by rustc, a false finding).

use super::Gen;
use crate::program::*;

/// How an argument borrows its root.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Borrow {
    /// `&v`, or a reference passed on by name to a `&` parameter.
    Shared,
    /// `&mut v` (not two-phase: later arguments may not even read `v`).
    Mut,
    /// A reference passed on by name to a `&mut` parameter: an implicit
    /// reborrow, two-phase (later arguments may read it).
    TwoPhase,
}

/// The variable `&v`, `&v[i]`, `&mut v[i][j]` or `v` names.
fn root(e: &Expr) -> Option<&str> {
    match e {
        Expr::Var(n) => Some(n),
        Expr::Index(a, _) => root(a),
        _ => None,
    }
}

/// The borrow a reference argument makes, if of a variable.
fn borrow_of(arg: &Expr, param: &PTy) -> Option<(Borrow, String)> {
    let PTy::Ref(mutable, _) = param else {
        return None;
    };
    match arg {
        Expr::Ref(true, inner) => root(inner).map(|r| (Borrow::Mut, r.to_string())),
        Expr::Ref(false, inner) => root(inner).map(|r| (Borrow::Shared, r.to_string())),
        Expr::Var(n) if *mutable => Some((Borrow::TwoPhase, n.clone())),
        Expr::Var(n) => Some((Borrow::Shared, n.clone())),
        _ => None,
    }
}

/// Every expression under `e` (including `e`), with the statements of its
/// blocks: visits (expression, assignment place) pairs through `f`.
fn visit(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    let mut copy = e.clone();
    copy.children_mut(&mut |c| match c {
        Child::Expr(x) => visit(x, f),
        Child::Block(b) => visit_block(b, f),
    });
}

fn visit_block(b: &Block, f: &mut dyn FnMut(&Expr)) {
    for s in &b.stmts {
        match s {
            Stmt::Let { init: e, .. } | Stmt::Const { value: e, .. } | Stmt::Expr(e) => visit(e, f),
            Stmt::Assign { place, value, .. } => {
                // A place is visited as `&mut place` (it is written).
                visit(&Expr::Ref(true, Box::new(place.clone())), f);
                visit(value, f);
            }
            Stmt::If { cond, then, els } => {
                visit(cond, f);
                visit_block(then, f);
                if let Some(e) = els {
                    visit_block(e, f);
                }
            }
            Stmt::For { body, .. } => visit_block(body, f),
        }
    }
    if let Some(t) = &b.tail {
        visit(t, f);
    }
}

/// Whether `e` reads and whether it writes variable `r` (a helper call
/// passing it by name to a `&mut` parameter writes it).
fn mentions(e: &Expr, r: &str, p: &Program) -> (bool, bool) {
    let (mut reads, mut writes) = (false, false);
    visit(e, &mut |x| match x {
        Expr::Var(n) if n == r => reads = true,
        Expr::Ref(true, inner) if root(inner) == Some(r) => writes = true,
        Expr::Call(h, args) => {
            for (a, t) in args.iter().zip(params(p, h)) {
                if matches!((a, t), (Expr::Var(n), PTy::Ref(true, _)) if n == r) {
                    writes = true;
                }
            }
        }
        _ => {}
    });
    (reads, writes)
}

fn params(p: &Program, name: &str) -> Vec<PTy> {
    p.helpers
        .iter()
        .find(|h| h.name == name)
        .map(|h| h.params.iter().map(|(_, t)| t.clone()).collect())
        .unwrap_or_default()
}

/// The first call of `p` whose arguments break Rust's borrow rules.
fn borrow_violation(p: &Program) -> Option<String> {
    let mut found = None;
    let mut check = |e: &Expr| {
        let Expr::Call(h, args) = e else { return };
        let ps = params(p, h);
        let borrows: Vec<Option<(Borrow, String)>> =
            args.iter().zip(&ps).map(|(a, t)| borrow_of(a, t)).collect();
        for (i, b) in borrows.iter().enumerate() {
            let Some((kind, r)) = b else { continue };
            for (j, later) in args.iter().enumerate().skip(i + 1) {
                let (reads, writes) = mentions(later, r, p);
                let held = matches!(&borrows[j], Some((_, s)) if s == r);
                let bad = match kind {
                    Borrow::Mut => reads || writes,
                    Borrow::Shared => {
                        writes
                            || matches!(&borrows[j], Some((k, s)) if s == r && *k != Borrow::Shared)
                    }
                    Borrow::TwoPhase => writes || held,
                };
                if bad && found.is_none() {
                    found = Some(format!(
                        "{h}: argument {} borrows `{r}` ({kind:?}), argument {} uses it",
                        i + 1,
                        j + 1
                    ));
                }
            }
        }
    };
    for h in &p.helpers {
        visit_block(&h.body, &mut check);
    }
    visit_block(&p.physics.body, &mut check);
    found
}

/// The calls of `p` that pass a reference parameter on by name to a `&mut`
/// parameter (a two-phase reborrow) and read it in a later argument.
fn reborrows_read_later(p: &Program) -> usize {
    let mut n = 0;
    let mut count = |e: &Expr| {
        let Expr::Call(h, args) = e else { return };
        for (i, (a, t)) in args.iter().zip(params(p, h)).enumerate() {
            if let (Expr::Var(r), PTy::Ref(true, _)) = (a, &t)
                && args[i + 1..].iter().any(|l| mentions(l, r, p).0)
            {
                n += 1;
            }
        }
    };
    for h in &p.helpers {
        visit_block(&h.body, &mut count);
    }
    visit_block(&p.physics.body, &mut count);
    n
}

#[test]
fn helper_calls_keep_the_borrow_rules() {
    // Seed 20261123 gave, as program 150, `h(&v, { v[0] = c; v[0] }, &v)`
    // (rejected by the macro: a later argument writes a borrowed array).
    // (Program 4290 of seed 20261123 passed `&f1[0]` and, inside a later
    // argument, `&mut f1[0]` to another call.)
    let mut reborrows = 0;
    for (seed, n) in [(20261123, 5000), (7, 2000), (20260501, 2000)] {
        let mut g = Gen::new(seed);
        for i in 0..n {
            let p = g.program(i);
            if let Some(v) = borrow_violation(&p) {
                panic!("seed {seed}, program {i}: {v}\n{}", p.source());
            }
            reborrows += reborrows_read_later(&p);
        }
    }
    // `h(q, q[0])` with `q: &mut` passed on to a `&mut` parameter is
    // generated (valid Rust: the reborrow is two-phase).
    assert!(reborrows > 0);
}

#[test]
fn the_borrow_check_of_this_test_finds_violations() {
    let call = |args: Vec<Expr>| Expr::Call("h".into(), args);
    let arr = Ty::arr(Ty::Real, Len::N(1));
    let helper = Helper {
        name: "h".into(),
        generic: false,
        params: vec![
            ("a".into(), PTy::Ref(false, arr.clone())),
            ("b".into(), PTy::Scalar(Ty::Real)),
            ("c".into(), PTy::Ref(true, arr.clone())),
        ],
        ret: false,
        body: Block::default(),
        helpers: vec![],
    };
    let program = |e: Expr| {
        let mut g = Gen::new(1);
        let mut p = g.program(0);
        p.helpers = vec![helper.clone()];
        p.physics.body = Block {
            stmts: vec![Stmt::Expr(e)],
            tail: None,
        };
        p
    };
    let v = || Expr::var("v");
    let write_v = Expr::Block(Block {
        stmts: vec![Stmt::Assign {
            place: v().index(Expr::usize(0)),
            op: None,
            value: Expr::Float(1.0),
        }],
        tail: Some(Box::new(Expr::Float(0.0))),
    });
    let mut_w = Expr::Ref(true, Box::new(Expr::var("w")));
    // `h(&v, { v[0] = 1.0; 0.0 }, &mut w)`: a write while `v` is borrowed
    let bad = call(vec![
        Expr::Ref(false, Box::new(v())),
        write_v.clone(),
        mut_w.clone(),
    ]);
    assert!(borrow_violation(&program(bad)).is_some());
    // `h(&v, v[0], &mut w)`: a read is fine
    let ok = call(vec![
        Expr::Ref(false, Box::new(v())),
        v().index(Expr::usize(0)),
        mut_w,
    ]);
    assert_eq!(borrow_violation(&program(ok)), None);
    // `h(&w, v[0], &mut v)` is fine, `h(&v, 0.0, &mut v)` is not
    let ok = call(vec![
        Expr::Ref(false, Box::new(Expr::var("w"))),
        v().index(Expr::usize(0)),
        Expr::Ref(true, Box::new(v())),
    ]);
    assert_eq!(borrow_violation(&program(ok)), None);
    let bad = call(vec![
        Expr::Ref(false, Box::new(v())),
        Expr::Float(0.0),
        Expr::Ref(true, Box::new(v())),
    ]);
    assert!(borrow_violation(&program(bad)).is_some());
}

/// The first index of `p` that is a bare name resolving, with Rust's
/// scoping, to an array (a name shadowed by a `let` the generator did not
/// track).
fn array_used_as_index(p: &Program) -> Option<String> {
    fn block(b: &Block, scope: &mut Vec<(String, bool)>, out: &mut Option<String>) {
        let mark = scope.len();
        for s in &b.stmts {
            match s {
                Stmt::Let { name, ty, init, .. } => {
                    expr(init, scope, out);
                    let array = matches!(ty, Some(Ty::Arr(..)))
                        || matches!(init, Expr::Array(_) | Expr::Repeat(..));
                    scope.push((name.clone(), array));
                }
                Stmt::Const { name, value, .. } => {
                    expr(value, scope, out);
                    scope.push((name.clone(), false));
                }
                Stmt::Assign { place, value, .. } => {
                    expr(value, scope, out);
                    expr(place, scope, out);
                }
                Stmt::If { cond, then, els } => {
                    expr(cond, scope, out);
                    block(then, scope, out);
                    if let Some(e) = els {
                        block(e, scope, out);
                    }
                }
                Stmt::For { var, body, .. } => {
                    scope.push((var.clone(), false));
                    block(body, scope, out);
                    scope.pop();
                }
                Stmt::Expr(e) => expr(e, scope, out),
            }
        }
        if let Some(t) = &b.tail {
            expr(t, scope, out);
        }
        scope.truncate(mark);
    }
    fn expr(e: &Expr, scope: &mut Vec<(String, bool)>, out: &mut Option<String>) {
        if let Expr::Index(_, i) = e
            && let Expr::Var(n) = &**i
            && scope
                .iter()
                .rev()
                .find(|(m, _)| m == n)
                .is_some_and(|(_, a)| *a)
            && out.is_none()
        {
            *out = Some(format!("`{n}` is an array here, used as an index"));
        }
        let mut copy = e.clone();
        copy.children_mut(&mut |c| match c {
            Child::Expr(x) => expr(x, scope, out),
            Child::Block(b) => block(b, scope, out),
        });
    }
    let mut out = None;
    for h in &p.helpers {
        let mut scope: Vec<(String, bool)> = h
            .params
            .iter()
            .map(|(n, t)| (n.clone(), matches!(t, PTy::Ref(..))))
            .collect();
        block(&h.body, &mut scope, &mut out);
    }
    let mut scope: Vec<(String, bool)> = p
        .physics
        .params
        .iter()
        .map(|(r, _)| (r.name().to_string(), true))
        .collect();
    block(&p.physics.body, &mut scope, &mut out);
    out
}

#[test]
fn arrays_of_a_call_statement_shadow_in_scope() {
    // Seed 20261123 gave, as program 2281, `for global in 0..D { let mut
    // global = [[…]; 2]; h(&mut global); … f1[global][global] … }`: the
    // array a call statement declares was not in the generator's scope.
    for seed in [20261123, 7, 20260501] {
        let mut g = Gen::new(seed);
        for i in 0..3000 {
            let p = g.program(i);
            if let Some(v) = array_used_as_index(&p) {
                panic!("seed {seed}, program {i}: {v}\n{}", p.source());
            }
        }
    }
}

/// Whether an index anywhere in `b` reads `u` or `grad_u`.
fn indexed_by_u(b: &Block) -> bool {
    fn reads_u(e: &Expr) -> bool {
        let mut found = false;
        visit(e, &mut |x| {
            found |= matches!(x, Expr::Var(n) if n == "u" || n == "grad_u");
        });
        found
    }
    let mut found = false;
    visit_block(b, &mut |e| {
        if let Expr::Index(_, i) = e {
            found |= reads_u(i);
        }
    });
    found
}

#[test]
fn affine_programs_are_generated_some_indexed_by_u() {
    // Issue #19: `f1[0][((u[0].abs() * 2.0) as usize) % 2] = grad_u[0][0]`
    // was claimed linear; the campaign checks every claim, so it must see
    // such bodies (and affine ones without, which must be claimed).
    let mut g = Gen::new(20261123);
    let (mut affine, mut indexed) = (0, 0);
    for i in 0..400 {
        let p = g.program(i);
        match p.linearity {
            Linearity::Affine => {
                affine += 1;
                assert!(!indexed_by_u(&p.physics.body), "{}", p.source());
                assert!(p.helpers.is_empty());
            }
            Linearity::UIndexed => {
                indexed += 1;
                assert!(indexed_by_u(&p.physics.body), "{}", p.source());
            }
            Linearity::Random => {}
        }
    }
    assert!(
        affine >= 10 && indexed >= 10,
        "affine {affine}, indexed {indexed}"
    );
}
