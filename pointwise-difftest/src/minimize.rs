//! Reduces a program with a finding to a small reproducer: greedy
//! reductions (delete a statement, keep one branch of an `if`, unroll a
//! loop to its first iteration, replace an expression by one of its
//! operands or a literal), each round building the candidates together in
//! one crate and keeping the first that still shows the same finding (same
//! kind, dimension and precision, at the same random points). Candidates
//! that do not compile are left out. A finding of a check that needs no
//! device (`crate::NATIVE_FINDINGS`) is reduced without evaluating on it.

use crate::program::*;
use crate::project::{Project, Run, base};
use crate::{Config, Outcome, build, run_args};

/// Candidates per build.
const CHUNK: usize = 48;
/// Rounds at most.
const ROUNDS: usize = 40;

/// The smallest program found that shows finding `o` of `p`.
pub fn minimize(p: &Program, o: &Outcome, cfg: &Config) -> std::io::Result<Program> {
    let project = Project::new(&base(), &format!("{}-minimize", cfg.name));
    let mut best = p.clone();
    for _ in 0..ROUNDS {
        let mut found = None;
        for chunk in candidates(&best).chunks(CHUNK) {
            let progs: Vec<Program> = chunk
                .iter()
                .enumerate()
                .map(|(k, c)| {
                    let mut c = c.clone();
                    c.id = k;
                    c.points = p.points;
                    c.physics.name = format!("p{k}");
                    c
                })
                .collect();
            let (kept, _) = build(&project, &progs, false)?;
            if kept.is_empty() {
                continue;
            }
            let ids: Vec<usize> = kept.iter().map(|k| k.id).collect();
            let limit = std::time::Duration::from_secs(cfg.device_limit);
            let mut args = run_args(cfg, Some(&ids));
            if crate::NATIVE_FINDINGS.contains(&o.verdict.as_str()) {
                args.extend(["--native-only".into(), "1".into()]);
            }
            let lines = match project.run(&args, limit, |_| {})? {
                Run::Done(lines) => lines,
                // A candidate that hangs the device shows nothing.
                Run::Hung { .. } => continue,
            };
            let hit = lines
                .iter()
                .filter_map(|l| Outcome::parse(l))
                .filter(|r| r.verdict == o.verdict && r.dim == o.dim && r.precision == o.precision)
                .map(|r| r.id)
                .min();
            if let Some(k) = hit {
                found = Some(chunk[k].clone());
                break;
            }
        }
        match found {
            Some(c) => best = c,
            None => break,
        }
    }
    Ok(best)
}

/// The programs one reduction away from `p`, larger reductions first.
pub fn candidates(p: &Program) -> Vec<Program> {
    let mut out = Vec::new();
    let blocks = count(p, &mut |_| {}, &mut |_| {});
    // Statements: delete, keep a branch, unroll a loop once.
    for b in 0..blocks.0 {
        let n = with_block(p, b, |blk| blk.stmts.len());
        for i in 0..n {
            out.push(edit_block(p, b, |blk| {
                blk.stmts.remove(i);
            }));
            let s = with_block(p, b, |blk| blk.stmts[i].clone());
            match s {
                Stmt::If { then, els, .. } => {
                    for keep in [Some(then), els].into_iter().flatten() {
                        out.push(edit_block(p, b, |blk| {
                            blk.stmts.splice(i..=i, keep.stmts.clone());
                        }));
                    }
                }
                Stmt::For { var, lo, body, .. } => {
                    let mut stmts = vec![Stmt::Let {
                        name: var,
                        mutable: false,
                        ty: None,
                        init: lo,
                    }];
                    stmts.extend(body.stmts);
                    out.push(edit_block(p, b, |blk| {
                        blk.stmts.splice(i..=i, stmts.clone());
                    }));
                }
                _ => {}
            }
        }
    }
    // Expressions: an operand, or a literal.
    for e in 0..blocks.1 {
        let node = with_expr(p, e, |x| x.clone());
        let mut subs: Vec<Expr> = Vec::new();
        let mut node2 = node.clone();
        node2.children_mut(&mut |c| {
            if let Child::Expr(x) = c {
                subs.push(x.clone());
            }
        });
        subs.extend([Expr::Float(1.0), Expr::Int(0, None), Expr::Bool(true)]);
        for s in subs {
            if s != node {
                out.push(edit_expr(p, e, |x| *x = s.clone()));
            }
        }
    }
    out
}

/// Number of blocks and expressions of `p`, calling `fb`, `fe` on each.
fn count(p: &Program, fb: &mut dyn FnMut(&Block), fe: &mut dyn FnMut(&Expr)) -> (usize, usize) {
    let mut q = p.clone();
    let mut n = (0, 0);
    walk_program(
        &mut q,
        &mut |b| {
            fb(b);
            n.0 += 1;
        },
        &mut |e| {
            fe(e);
            n.1 += 1;
        },
    );
    n
}

fn with_block<T>(p: &Program, k: usize, f: impl FnOnce(&Block) -> T) -> T {
    let mut q = p.clone();
    let mut i = 0;
    let mut out = None;
    let mut f = Some(f);
    walk_program(
        &mut q,
        &mut |b| {
            if i == k
                && let Some(f) = f.take()
            {
                out = Some(f(b));
            }
            i += 1;
        },
        &mut |_| {},
    );
    out.expect("block")
}

fn with_expr<T>(p: &Program, k: usize, f: impl FnOnce(&Expr) -> T) -> T {
    let mut q = p.clone();
    let mut i = 0;
    let mut out = None;
    let mut f = Some(f);
    walk_program(&mut q, &mut |_| {}, &mut |e| {
        if i == k
            && let Some(f) = f.take()
        {
            out = Some(f(e));
        }
        i += 1;
    });
    out.expect("expression")
}

fn edit_block(p: &Program, k: usize, f: impl FnOnce(&mut Block)) -> Program {
    let mut q = p.clone();
    let mut i = 0;
    let mut f = Some(f);
    walk_program(
        &mut q,
        &mut |b| {
            if i == k
                && let Some(f) = f.take()
            {
                f(b);
            }
            i += 1;
        },
        &mut |_| {},
    );
    q
}

fn edit_expr(p: &Program, k: usize, f: impl FnOnce(&mut Expr)) -> Program {
    let mut q = p.clone();
    let mut i = 0;
    let mut f = Some(f);
    walk_program(&mut q, &mut |_| {}, &mut |e| {
        if i == k
            && let Some(f) = f.take()
        {
            f(e);
        }
        i += 1;
    });
    q
}

/// Visits every block and expression of the program (pre-order). An
/// edited node is visited before its children, which are then those of
/// the edited node.
fn walk_program(p: &mut Program, fb: &mut dyn FnMut(&mut Block), fe: &mut dyn FnMut(&mut Expr)) {
    for h in &mut p.helpers {
        walk_block(&mut h.body, fb, fe);
    }
    walk_block(&mut p.physics.body, fb, fe);
}

fn walk_block(b: &mut Block, fb: &mut dyn FnMut(&mut Block), fe: &mut dyn FnMut(&mut Expr)) {
    fb(b);
    for s in &mut b.stmts {
        match s {
            Stmt::Let { init: e, .. } | Stmt::Const { value: e, .. } | Stmt::Expr(e) => {
                walk_expr(e, fb, fe)
            }
            Stmt::Assign { place, value, .. } => {
                walk_expr(place, fb, fe);
                walk_expr(value, fb, fe);
            }
            Stmt::If { cond, then, els } => {
                walk_expr(cond, fb, fe);
                walk_block(then, fb, fe);
                if let Some(e) = els {
                    walk_block(e, fb, fe);
                }
            }
            Stmt::For { body, .. } => walk_block(body, fb, fe),
        }
    }
    if let Some(t) = &mut b.tail {
        walk_expr(t, fb, fe);
    }
}

fn walk_expr(e: &mut Expr, fb: &mut dyn FnMut(&mut Block), fe: &mut dyn FnMut(&mut Expr)) {
    fe(e);
    e.children_mut(&mut |c| match c {
        Child::Expr(x) => walk_expr(x, fb, fe),
        Child::Block(b) => walk_block(b, fb, fe),
    });
}
