//! The seeded generator of random `#[pointwise]` programs inside the
//! accepted subset: a physics (2D/3D generic, of fixed dimension, or
//! dimension-free; scalar or vector field; any subset of the inputs) and up
//! to three helpers (scalar and array parameters, `&mut` ones, helpers
//! calling helpers).
//!
//! Generation is typed and scoped: every expression has a type of the
//! subset, every name is in scope, every index is in bounds (a constant, a
//! loop variable whose range fits, or `… % N`), integer arithmetic stays
//! small (so that Rust never panics on overflow), and helper calls follow
//! the borrow rules. Bodies use every input, every math function, `let`,
//! `const`, `if`/`else`, `for` over constant ranges, block expressions with
//! effects inside operands, indices and places (evaluation order), array
//! literals, repeats and copies, and names that are C or OpenCL reserved
//! words. Statements are in [`stmt`], expressions in [`expr`]; bodies
//! affine in `(u, ∇u)` by construction, some with indices computed from
//! `u` (for the check of the macro's linearity claim), in [`affine`].

mod affine;
pub(crate) mod expr;
mod stmt;
#[cfg(test)]
mod tests;

use crate::program::*;
use femquad::rng::Rng;

/// A variable in scope.
#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub name: String,
    pub ty: Ty,
    /// Can be assigned (scalars) or written through (arrays).
    pub writable: bool,
    /// An array parameter of a helper (a reference: passed on by name).
    pub by_ref: bool,
    /// A loop variable's range `lo..hi`.
    pub range: Option<(u64, Len)>,
}

/// A helper that can be called.
#[derive(Clone, Debug)]
pub(crate) struct Callable {
    pub name: String,
    pub generic: bool,
    pub params: Vec<PTy>,
    pub ret: bool,
}

/// The state of one function being generated.
pub(crate) struct Ctx {
    pub dims: Dims,
    pub vars: Vec<Var>,
    marks: Vec<usize>,
    pub helpers: Vec<Callable>,
    pub used: Vec<String>,
    /// Statements left to generate.
    pub budget: usize,
    pub loops: usize,
    /// Roots not to mention (an argument passed `&mut` in the call being built).
    pub forbid: Vec<String>,
    /// Roots not to write (an argument borrowed `&`, or a `&mut` parameter
    /// passed on by name, in the call being built): the borrow is alive
    /// while the later arguments are evaluated.
    pub shared: Vec<String>,
    /// Roots no other argument of the call being built may borrow (a
    /// `&mut` parameter passed on by name: the helper may take it as
    /// `&mut`, which `#[pointwise]` cannot see, so it rejects a second
    /// borrow).
    pub held: Vec<String>,
}

impl Ctx {
    fn new(dims: Dims, helpers: Vec<Callable>, budget: usize) -> Ctx {
        Ctx {
            dims,
            vars: Vec::new(),
            marks: Vec::new(),
            helpers,
            used: Vec::new(),
            budget,
            loops: 0,
            forbid: Vec::new(),
            shared: Vec::new(),
            held: Vec::new(),
        }
    }

    pub fn push(&mut self) {
        self.marks.push(self.vars.len());
    }

    pub fn pop(&mut self) {
        let m = self.marks.pop().expect("scope");
        self.vars.truncate(m);
    }

    pub fn add(&mut self, name: &str, ty: Ty, writable: bool) {
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            writable,
            by_ref: false,
            range: None,
        });
    }

    /// Visible variables (the latest of each name), minus forbidden roots.
    pub fn visible(&self) -> Vec<&Var> {
        let mut out: Vec<&Var> = Vec::new();
        for v in self.vars.iter().rev() {
            if out.iter().any(|o| o.name == v.name) || self.forbid.contains(&v.name) {
                continue;
            }
            out.push(v);
        }
        out
    }

    /// Whether `v` may be assigned or written through here (not while a
    /// call being built borrows it).
    pub fn can_write(&self, v: &Var) -> bool {
        v.writable && !self.shared.contains(&v.name)
    }

    pub fn generic(&self) -> bool {
        self.dims == Dims::Generic
    }

    pub fn use_helper(&mut self, name: &str) {
        if !self.used.iter().any(|u| u == name) {
            self.used.push(name.to_string());
        }
    }
}

/// Generates programs from a seed.
pub struct Gen {
    pub(crate) rng: Rng,
    names: usize,
}

/// Identifiers that are reserved in C or OpenCL C (or close to generated
/// names), valid in Rust: the macro must rename them.
const SPECIAL_NAMES: &[&str] = &[
    "float",
    "int",
    "half",
    "double2",
    "uint",
    "ulong",
    "size_t",
    "bool2",
    "image2d_t",
    "image1d_array_t",
    "image2d_depth_t",
    "sampler_t",
    "queue_t",
    "atomic_int",
    "kernel",
    "global",
    "local",
    "private",
    "constant",
    "read_only",
    "restrict",
    "inline",
    "signed",
    "vec_step",
    "complex",
    "real",
    "fmod",
    "pown",
    "convert_int",
    "as_float",
    "pw_t1",
    "_t",
    "DIM",
    "NC",
    "r#typeof",
    "λ",
    "float2x2",
    "sqrt_1",
];

impl Gen {
    pub fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            names: 0,
        }
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.rng.uniform() < p
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.rng.below(items.len())]
    }

    pub(crate) fn below(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    /// A fresh local name (sometimes a reserved-looking one).
    pub(crate) fn name(&mut self) -> String {
        self.names += 1;
        if self.chance(0.15) {
            let n = self.pick(SPECIAL_NAMES).to_string();
            // Rust's lints would warn about some; the crate allows warnings.
            return n;
        }
        format!("v{}", self.names)
    }

    /// Program number `id`: one in eight affine in `(u, ∇u)` by
    /// construction, half of those with array indices computed from `u`
    /// or `∇u` (see `affine`); the others random.
    pub fn program(&mut self, id: usize) -> Program {
        self.names = 0;
        let dims = match self.below(10) {
            0 => Dims::Fixed(2),
            1 => Dims::Fixed(3),
            2 => Dims::Free,
            _ => Dims::Generic,
        };
        if self.below(8) == 0 {
            let indexed = self.chance(0.5);
            let (physics, u_indexed) = self.affine_physics(&format!("p{id}"), dims, indexed);
            return Program {
                id,
                points: id,
                helpers: Vec::new(),
                physics,
                linearity: if u_indexed {
                    Linearity::UIndexed
                } else {
                    Linearity::Affine
                },
            };
        }
        let n_helpers = self.below(4);
        let mut helpers: Vec<Helper> = Vec::new();
        for j in 0..n_helpers {
            let callable: Vec<Callable> = helpers.iter().map(callable).collect();
            helpers.push(self.helper(&format!("p{id}_h{j}"), callable));
        }
        let callable: Vec<Callable> = helpers
            .iter()
            .map(callable)
            .filter(|h| !h.generic || dims == Dims::Generic)
            .collect();
        let physics = self.physics(&format!("p{id}"), dims, callable);
        // Only the helpers the physics reaches are kept.
        let mut keep: Vec<String> = physics.helpers.clone();
        let mut i = 0;
        while i < keep.len() {
            if let Some(h) = helpers.iter().find(|h| h.name == keep[i]) {
                for c in &h.helpers {
                    if !keep.contains(c) {
                        keep.push(c.clone());
                    }
                }
            }
            i += 1;
        }
        helpers.retain(|h| keep.contains(&h.name));
        Program {
            id,
            points: id,
            helpers,
            physics,
            linearity: Linearity::Random,
        }
    }

    fn len(&mut self, dims: Dims) -> Len {
        match (dims, self.below(5)) {
            (Dims::Generic, 0 | 1) => Len::D,
            (Dims::Fixed(d), 0) => Len::N(d),
            (_, k) => Len::N(1 + (k as u64) % 3),
        }
    }

    fn physics(&mut self, name: &str, dims: Dims, helpers: Vec<Callable>) -> Physics {
        let nc = self.len(dims);
        let na = if self.chance(0.5) {
            Some(self.len(dims))
        } else {
            None
        };
        let nk = self.below(4) as u64;
        // Dimension-sized arrays: `D`, printed as the literal in a physics
        // of fixed dimension.
        let d = Len::D;
        let free = dims == Dims::Free;
        let mut params = Vec::new();
        let mut want = |g: &mut Gen, r: Role, p: f64, ty: Ty| {
            if g.chance(p) {
                params.push((r, ty));
            }
        };
        want(self, Role::U, 0.8, Ty::arr(Ty::Real, nc));
        if !free {
            want(self, Role::GradU, 0.7, Ty::arr(Ty::arr(Ty::Real, d), nc));
        }
        if let Some(na) = na {
            want(self, Role::A, 0.7, Ty::arr(Ty::Real, na));
            if !free {
                want(self, Role::GradA, 0.5, Ty::arr(Ty::arr(Ty::Real, d), na));
            }
        }
        if !free {
            want(self, Role::X, 0.5, Ty::arr(Ty::Real, d));
        }
        if nk > 0 {
            want(self, Role::Constants, 0.7, Ty::arr(Ty::Real, Len::N(nk)));
        }
        let has_f1 = !free && self.chance(0.7);
        let has_f0 = !has_f1 || self.chance(0.6);
        if has_f0 {
            params.push((Role::F0, Ty::arr(Ty::Real, nc)));
        }
        if has_f1 {
            params.push((Role::F1, Ty::arr(Ty::arr(Ty::Real, d), nc)));
        }
        // Without `u`/`f0`/`f1` carrying NC, a dimension-free physics would
        // have no component count: it always has `f0`.
        if self.chance(0.3) {
            let n = params.len();
            for i in (1..n).rev() {
                let j = self.below(i + 1);
                params.swap(i, j);
            }
        }
        let mut c = Ctx::new(dims, helpers, 6 + self.below(14));
        for (r, t) in &params {
            let out = matches!(r, Role::F0 | Role::F1);
            c.add(r.name(), t.clone(), out);
            // A reference: passed on to helpers by name, never copied whole.
            c.vars.last_mut().expect("parameter").by_ref = true;
        }
        let mut body = self.block(&mut c, None);
        // Make every output depend on what was computed.
        let finals = self.finals(&mut c, &params);
        body.stmts.extend(finals);
        Physics {
            name: name.to_string(),
            dims,
            nc,
            na: if params
                .iter()
                .any(|(r, _)| matches!(r, Role::A | Role::GradA))
            {
                na
            } else {
                None
            },
            nk: if params.iter().any(|(r, _)| *r == Role::Constants) {
                nk
            } else {
                0
            },
            params,
            body,
            helpers: c.used,
        }
    }

    fn helper(&mut self, name: &str, helpers: Vec<Callable>) -> Helper {
        let generic = self.chance(0.5);
        let dims = if generic { Dims::Generic } else { Dims::Free };
        let n = 1 + self.below(4);
        let mut params = Vec::new();
        let mut uses_d = false;
        for k in 0..n {
            let t = match self.below(7) {
                0 => PTy::Scalar(Ty::Usize),
                1 => PTy::Scalar(Ty::I32),
                2 => PTy::Scalar(Ty::Bool),
                3 | 4 => PTy::Scalar(Ty::Real),
                r => {
                    let len = self.len(dims);
                    let ty = if self.chance(0.3) {
                        Ty::arr(Ty::arr(Ty::Real, self.len(dims)), len)
                    } else {
                        Ty::arr(Ty::Real, len)
                    };
                    PTy::Ref(r == 6, ty)
                }
            };
            if let PTy::Ref(_, t) = &t {
                uses_d |= t.uses_d();
            }
            params.push((format!("q{k}"), t));
        }
        let has_out = params.iter().any(|(_, t)| matches!(t, PTy::Ref(true, _)));
        let ret = !has_out || self.chance(0.5);
        let generic = generic && uses_d;
        let dims = if generic { Dims::Generic } else { Dims::Free };
        let helpers: Vec<Callable> = helpers
            .into_iter()
            .filter(|h| !h.generic || generic)
            .collect();
        let mut c = Ctx::new(dims, helpers, 3 + self.below(8));
        for (n, t) in &params {
            match t {
                PTy::Scalar(t) => c.add(n, t.clone(), false),
                PTy::Ref(m, t) => {
                    c.add(n, t.clone(), *m);
                    c.vars.last_mut().expect("param").by_ref = true;
                }
            }
        }
        let body = self.block(&mut c, if ret { Some(Ty::Real) } else { None });
        Helper {
            name: name.to_string(),
            generic,
            params,
            ret,
            body,
            helpers: c.used,
        }
    }
}

fn callable(h: &Helper) -> Callable {
    Callable {
        name: h.name.clone(),
        generic: h.generic,
        params: h.params.iter().map(|(_, t)| t.clone()).collect(),
        ret: h.ret,
    }
}
pub use expr::MATH;
