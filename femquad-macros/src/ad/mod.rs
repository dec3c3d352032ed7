//! Forward-mode automatic differentiation of the lowered program
//! ([`crate::ir`]): the derivatives are programs of the same IR, printed by
//! the same printers as the function itself (OpenCL C by `emit_c`, Rust by
//! `emit_native`), so the native and OpenCL derivatives come from one
//! differentiated tree.
//!
//! - [`physics_tangent`]: `df0`, `df1`, the directional derivatives of
//!   `f0`, `f1` along `(du, d∇u, du_t)` — every real statement is preceded by
//!   its tangent ([`transform`], rules in [`rules`]), only for variables
//!   that depend on `u`, `∇u` ([`activity`]);
//! - [`physics_jacobian`]: PETSc's `g0 … g3`, by the same transform in
//!   vector mode: one tangent per seed (each component of `u` and of `∇u`
//!   the physics reads), the primal computed once, then scattered into the
//!   four blocks; and, seeded with `u_t` instead, `g0_t = ∂f0/∂u_t`,
//!   `g2_t = ∂f1/∂u_t` ([`Blocks`]);
//! - [`helper`]: a helper's tangent, `h_tangent(params…, tangents of its
//!   real params…, d_ret)`, called by its callers' derivatives, and its
//!   linearity for every pattern of active arguments.
//!
//! Integers and booleans are passive; a helper's `&mut` array is read by
//! its tangent before the call and written after.

pub mod activity;
mod linearity;
mod prune;
mod rules;
mod transform;

use crate::check::{Extent, Len, PhysicsSig, Role, Ty};
use crate::ir::*;
use transform::{Mode, Tangent};

/// When the function is affine in the seeds (see [`linearity`]): `own`
/// (nothing in the function itself is not affine) and, for each helper call
/// with active arguments, that helper's linearity for that pattern (bit `k`
/// of the mask: the `k`-th real argument is active).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Linear {
    pub own: bool,
    pub calls: Vec<(usize, u64)>,
}

fn role_var(f: &Func, r: Role) -> Option<VarId> {
    f.params
        .iter()
        .copied()
        .find(|&v| f.vars[v].kind == VarKind::Role(r))
}

/// The most real parameters for which a helper's linearity is tabulated
/// (2^6 patterns); beyond, it is not (and its callers are not linear).
pub const MAX_LINEAR_PARAMS: usize = 6;

/// The most real parameters for which a helper's tangent is specialized
/// to the pattern of active arguments of a call (2^4 variants); beyond,
/// every call uses the tangent with all of them active (zeros passed).
pub const MAX_SPECIALIZED: usize = 4;

/// The tangent variant a call with `p` real arguments, active as in
/// `mask` (bit `k`: argument `k`), uses: `mask` itself (variant 0, no
/// argument active, is never called and holds the all-active tangent), or 0
/// (the all-active tangent) beyond [`MAX_SPECIALIZED`].
pub fn variant(p: usize, mask: u64) -> usize {
    if p <= MAX_SPECIALIZED {
        mask as usize
    } else {
        0
    }
}

/// A helper's derivatives.
pub struct HelperDerivatives {
    /// Its tangents, by [`variant`]; all have the same parameters (every
    /// real parameter has a tangent), the tangents of inactive ones unread.
    pub tangents: Vec<Func>,
    /// Linearity per pattern of active real parameters (empty beyond
    /// [`MAX_LINEAR_PARAMS`]).
    pub linear: Vec<Linear>,
}

/// The tangents and the linearity table of a helper.
pub fn helper(primal: &Func) -> HelperDerivatives {
    let reals: Vec<VarId> = primal
        .params
        .iter()
        .copied()
        .filter(|&p| activity::real(primal, p))
        .collect();
    let seeds = |mask: u64| -> Vec<VarId> {
        reals
            .iter()
            .enumerate()
            .filter(|(k, _)| mask >> k & 1 == 1)
            .map(|(_, v)| *v)
            .collect()
    };
    let all = (1u64 << reals.len().min(63)) - 1;
    let full = helper_tangent(primal, &reals);
    let tangents = if reals.len() <= MAX_SPECIALIZED {
        let mut v = vec![full];
        for mask in 1..=all {
            v.push(helper_tangent(primal, &seeds(mask)));
        }
        v
    } else {
        vec![full]
    };
    let linear = if reals.len() <= MAX_LINEAR_PARAMS {
        (0..=all)
            .map(|mask| linearity::linear(primal, &activity::active(primal, &seeds(mask))))
            .collect()
    } else {
        Vec::new()
    };
    HelperDerivatives { tangents, linear }
}

/// The tangent of a helper when `seeds` (real parameters) are active.
fn helper_tangent(primal: &Func, seeds: &[VarId]) -> Func {
    let active = activity::active(primal, seeds);
    let mut t = Tangent::new(primal, active, Mode::Scalar);
    let mut entry = Vec::new();
    // Primal parameters; a `&mut` array is read-only here, copied.
    for &p in &primal.params {
        let v = primal.vars[p].clone();
        if matches!(v.ty, Ty::Array(..)) && v.mutable {
            let input = t.f.add(
                format!("pw_in_{}", v.name),
                v.ty.clone(),
                false,
                VarKind::Param,
            );
            t.f.params.push(input);
            t.f.vars[p].kind = VarKind::Local;
            entry.push(Stmt::Let { var: p, init: None });
            entry.push(Stmt::Copy {
                dst: Place::var(p),
                src: Place::var(input),
                ty: v.ty.clone(),
            });
        } else {
            t.f.params.push(p);
        }
    }
    // A tangent for every real parameter (the signature does not depend on
    // which are active).
    for &p in &primal.params {
        if !activity::real(primal, p) {
            continue;
        }
        let v = primal.vars[p].clone();
        let mutable = v.mutable;
        let d = t.f.add(
            format!("pw_d_{}", v.name),
            v.ty.clone(),
            mutable,
            VarKind::Param,
        );
        t.f.params.push(d);
        t.dv.insert(p, d);
    }
    // The tangent of the value, a parameter even when the helper returns
    // nothing: a caller may not know (a call statement discards the value),
    // so every call passes one.
    let dret = t.f.add(
        "pw_d_ret".into(),
        Ty::array(Ty::Real, Len::Lit(1)),
        true,
        VarKind::Param,
    );
    t.f.params.push(dret);
    t.tangent_vars();
    t.out.extend(entry);
    t.stmts(&primal.body);
    if let Some(r) = &primal.ret {
        let (_, d) = t.tan(r);
        t.emit_tangent(vec![Stmt::Assign {
            place: Place::var(dret).at(Expr::Int(0, Some(crate::ast::IntKind::Usize))),
            value: d.unwrap_or(Expr::Real(0.0)),
        }]);
    }
    let mut f = t.f;
    f.body = t.out;
    prune::prune(&mut f);
    f
}

/// The input roles of a physics, in the order of its parameters.
fn inputs(primal: &Func) -> Vec<VarId> {
    primal
        .params
        .iter()
        .copied()
        .filter(|&v| !matches!(primal.vars[v].kind, VarKind::Role(Role::F0 | Role::F1)))
        .collect()
}

/// The tangent of a physics: parameters (its inputs in order, then `du`,
/// `dgrad_u`, `du_t` if it declares `u`, `grad_u`, `u_t`, then `df0`,
/// `df1` if it has them), and whether it is affine in `(u, ∇u, u_t)`.
/// The normal `n`, the time `t`, `x`, `a`, `∇a` and the constants are
/// inactive (not differentiated).
pub fn physics_tangent(primal: &Func) -> (Func, Linear) {
    let (u, gu) = (role_var(primal, Role::U), role_var(primal, Role::GradU));
    let ut = role_var(primal, Role::UT);
    let (f0, f1) = (role_var(primal, Role::F0), role_var(primal, Role::F1));
    // The outputs are always active: their tangents are zeroed and written.
    let seeds: Vec<VarId> = [u, gu, ut, f0, f1].into_iter().flatten().collect();
    let active = activity::active(primal, &seeds);
    let lin = linearity::linear(primal, &active);
    let mut t = Tangent::new(primal, active, Mode::Scalar);
    t.f.params = inputs(primal);
    for (v, name, out) in [
        (u, "du", false),
        (gu, "dgrad_u", false),
        (ut, "du_t", false),
        (f0, "df0", true),
        (f1, "df1", true),
    ] {
        if let Some(v) = v {
            let d =
                t.f.add(name.into(), primal.vars[v].ty.clone(), out, VarKind::Param);
            t.f.params.push(d);
            t.dv.insert(v, d);
        }
    }
    t.tangent_vars();
    for v in [f0, f1].into_iter().flatten() {
        t.f.vars[v].kind = VarKind::Local;
        t.out.push(Stmt::Let { var: v, init: None });
    }
    t.stmts(&primal.body);
    let mut f = t.f;
    f.body = t.out;
    prune::prune(&mut f);
    (f, lin)
}

fn usize_lit(v: u64) -> Expr {
    Expr::Int(v as i64, Some(crate::ast::IntKind::Usize))
}

/// `a + b` on `usize`, `0 + b` written `b`.
fn uadd(a: Expr, b: Expr) -> Expr {
    match a {
        Expr::Int(0, _) => b,
        a => Expr::bin(
            crate::ast::BinOp::Add,
            a,
            b,
            Scalar::Int(crate::ast::IntKind::Usize),
        ),
    }
}

/// `a · b` on `usize`, `1 · b`, `a · 1` written `b`, `a`.
fn umul(a: Expr, b: Expr) -> Expr {
    match (a, b) {
        (Expr::Int(1, _), x) | (x, Expr::Int(1, _)) => x,
        (a, b) => Expr::bin(
            crate::ast::BinOp::Mul,
            a,
            b,
            Scalar::Int(crate::ast::IntKind::Usize),
        ),
    }
}

/// Which pointwise Jacobians a Jacobian program computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Blocks {
    /// PETSc's `g0 = ∂f0/∂u`, `g1 = ∂f0/∂∇u`, `g2 = ∂f1/∂u`,
    /// `g3 = ∂f1/∂∇u`; the blocks of an input the body does not read are 0.
    U { reads_u: bool, reads_grad: bool },
    /// `g0_t = ∂f0/∂u_t`, `g2_t = ∂f1/∂u_t` (laid out as `g0`, `g2`): the
    /// blocks the step Jacobian `σ·∂F/∂u_t + ∂F/∂u` adds; 0 if the body
    /// does not read `u_t`.
    UT { reads_u_t: bool },
}

/// The Jacobian of a physics: parameters (its inputs in order, then the
/// blocks, flat: `g0`, `g1`, `g2`, `g3`, or `g0_t`, `g2_t`). Seeds: each
/// component of `u` (or of `u_t`) if read, then each `(c, d)` of `∇u` if
/// read, `s = [N_c] + c·D + d`.
pub fn physics_jacobian(primal: &Func, sig: &PhysicsSig, blocks: Blocks) -> Func {
    let (u, gu) = match blocks {
        Blocks::U {
            reads_u,
            reads_grad,
        } => (
            role_var(primal, Role::U).filter(|_| reads_u),
            role_var(primal, Role::GradU).filter(|_| reads_grad),
        ),
        Blocks::UT { reads_u_t } => (role_var(primal, Role::UT).filter(|_| reads_u_t), None),
    };
    let (f0, f1) = (role_var(primal, Role::F0), role_var(primal, Role::F1));
    let nc = match sig.n_comp {
        Extent::Fixed(n) => Len::Lit(n),
        Extent::Dim => Len::Dim,
    };
    let (a, b, c) = match nc {
        Len::Lit(n) => (
            if u.is_some() { n } else { 0 },
            if gu.is_some() { n } else { 0 },
            0,
        ),
        _ => (0, u.is_some() as u64, gu.is_some() as u64),
    };
    let seeds = Len::Poly(a, b, c);
    let any = u.is_some() || gu.is_some();
    let seed_vars: Vec<VarId> = [u, gu, f0, f1].into_iter().flatten().collect();
    let active = if any {
        activity::active(primal, &seed_vars)
    } else {
        vec![false; primal.vars.len()]
    };
    let mut t = Tangent::new(primal, active, Mode::Vector(seeds));
    t.f.params = inputs(primal);
    let names: &[&str] = match blocks {
        Blocks::U { .. } => &["g0", "g1", "g2", "g3"],
        Blocks::UT { .. } => &["g0_t", "g2_t"],
    };
    let g: Vec<VarId> = names
        .iter()
        .map(|name| {
            let v = t.f.add(
                name.to_string(),
                Ty::array(Ty::Real, Len::Flat),
                true,
                VarKind::Param,
            );
            t.f.params.push(v);
            v
        })
        .collect();
    let ncx = len_expr(nc);
    let u_seeds = if u.is_some() {
        ncx.clone()
    } else {
        usize_lit(0)
    };
    let dim = Expr::Dim;
    let mut body = Vec::new();
    if any {
        // Seeds: identity directions.
        let mut seeded = Vec::new();
        for (v, name) in [(u, "pw_du"), (gu, "pw_dgrad_u")] {
            let Some(v) = v else { continue };
            let ty = t.tangent_ty(&primal.vars[v].ty);
            let d = t.f.add(name.into(), ty, true, VarKind::Local);
            t.dv.insert(v, d);
            seeded.push((v, d));
        }
        t.tangent_vars();
        for v in [f0, f1].into_iter().flatten() {
            t.f.vars[v].kind = VarKind::Local;
            t.out.push(Stmt::Let { var: v, init: None });
            let d = t.dv[&v];
            t.out.push(Stmt::Let { var: d, init: None });
        }
        for (v, d) in seeded {
            t.out.push(Stmt::Let { var: d, init: None });
            let s = t.f.add(
                "pw_s".into(),
                Ty::Int(crate::ast::IntKind::Usize),
                false,
                VarKind::Local,
            );
            let comp = t.f.add(
                "pw_c".into(),
                Ty::Int(crate::ast::IntKind::Usize),
                false,
                VarKind::Local,
            );
            let dd = t.f.add(
                "pw_e".into(),
                Ty::Int(crate::ast::IntKind::Usize),
                false,
                VarKind::Local,
            );
            let one_if = |cond: Expr| {
                Expr::Select(
                    Box::new(cond),
                    Box::new(Expr::Real(1.0)),
                    Box::new(Expr::Real(0.0)),
                )
            };
            let eq = |a: Expr, b: Expr| {
                Expr::bin(
                    crate::ast::BinOp::Eq,
                    a,
                    b,
                    Scalar::Int(crate::ast::IntKind::Usize),
                )
            };
            let inner = if Some(v) == u {
                vec![Stmt::Assign {
                    place: Place::var(d).at(Expr::read(s)).at(Expr::read(comp)),
                    value: one_if(eq(Expr::read(s), Expr::read(comp))),
                }]
            } else {
                let index = uadd(
                    u_seeds.clone(),
                    uadd(umul(Expr::read(comp), dim.clone()), Expr::read(dd)),
                );
                vec![Stmt::For {
                    var: dd,
                    lo: usize_lit(0),
                    hi: Expr::Dim,
                    inclusive: false,
                    body: vec![Stmt::Assign {
                        place: Place::var(d)
                            .at(Expr::read(s))
                            .at(Expr::read(comp))
                            .at(Expr::read(dd)),
                        value: one_if(eq(Expr::read(s), index)),
                    }],
                }]
            };
            t.out.push(Stmt::For {
                var: s,
                lo: usize_lit(0),
                hi: len_expr(seeds),
                inclusive: false,
                body: vec![Stmt::For {
                    var: comp,
                    lo: usize_lit(0),
                    hi: ncx.clone(),
                    inclusive: false,
                    body: inner,
                }],
            });
        }
        t.stmts(&primal.body);
        body = std::mem::take(&mut t.out);
    }
    // Scatter into g0 … g3 (zeros where structurally zero).
    let new = |t: &mut Tangent<'_>, name: &str| {
        t.f.add(
            name.into(),
            Ty::Int(crate::ast::IntKind::Usize),
            false,
            VarKind::Local,
        )
    };
    let (fc, gc, df, dg) = (
        new(&mut t, "pw_fc"),
        new(&mut t, "pw_gc"),
        new(&mut t, "pw_df"),
        new(&mut t, "pw_dg"),
    );
    let r = Expr::read;
    let row = uadd(umul(r(fc), ncx.clone()), r(gc));
    let grad_seed = uadd(u_seeds.clone(), uadd(umul(r(gc), dim.clone()), r(dg)));
    let entry = |dv: Option<VarId>, seed: Expr, deriv: Option<VarId>| -> Expr {
        match dv {
            Some(d) => {
                let mut p = Place::var(d).at(seed).at(r(fc));
                if let Some(df) = deriv {
                    p = p.at(r(df));
                }
                Expr::Read(p)
            }
            None => Expr::Real(0.0),
        }
    };
    let d0 = f0.and_then(|v| t.dv.get(&v).copied());
    let d1 = f1.and_then(|v| t.dv.get(&v).copied());
    let g0 = |g: VarId| Stmt::Assign {
        place: Place::var(g).at(row.clone()),
        value: entry(d0.filter(|_| u.is_some()), r(gc), None),
    };
    let g1 = |g: VarId| Stmt::Assign {
        place: Place::var(g).at(uadd(umul(row.clone(), dim.clone()), r(dg))),
        value: entry(d0.filter(|_| gu.is_some()), grad_seed.clone(), None),
    };
    let g2 = |g: VarId| Stmt::Assign {
        place: Place::var(g).at(uadd(umul(row.clone(), dim.clone()), r(df))),
        value: entry(d1.filter(|_| u.is_some()), r(gc), Some(df)),
    };
    let g3 = |g: VarId| Stmt::Assign {
        place: Place::var(g).at(uadd(
            umul(uadd(umul(row.clone(), dim.clone()), r(df)), dim.clone()),
            r(dg),
        )),
        value: entry(d1.filter(|_| gu.is_some()), grad_seed.clone(), Some(df)),
    };
    let for_ = |var: VarId, hi: Expr, body: Vec<Stmt>| Stmt::For {
        var,
        lo: usize_lit(0),
        hi,
        inclusive: false,
        body,
    };
    let per_entry = match blocks {
        Blocks::U { .. } => vec![
            g0(g[0]),
            for_(dg, Expr::Dim, vec![g1(g[1])]),
            for_(
                df,
                Expr::Dim,
                vec![g2(g[2]), for_(dg, Expr::Dim, vec![g3(g[3])])],
            ),
        ],
        Blocks::UT { .. } => vec![g0(g[0]), for_(df, Expr::Dim, vec![g2(g[1])])],
    };
    body.push(for_(
        fc,
        ncx.clone(),
        vec![for_(gc, ncx.clone(), per_entry)],
    ));
    let mut f = t.f;
    f.body = body;
    prune::prune(&mut f);
    f
}
