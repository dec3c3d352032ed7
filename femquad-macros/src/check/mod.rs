//! The one place that decides what the subset accepts.
//!
//! [`check`] validates the signature ([`signature`]) and the body ([`body`]:
//! statements; `expr`: expressions; `call`: calls), infers the type of every
//! expression ([`infer`]) and resolves every name. The wording of the errors
//! for constructs outside the subset is in [`unsupported`].
//! It reports *all* errors of the function, each spanned on the offending
//! code, and never leaves a user's mistake for rustc to find in generated
//! code. The emitters only read its result, [`Checked`].

pub mod body;
mod call;
mod expr;
pub mod infer;
pub mod signature;
pub mod unsupported;

use crate::ast::{Function, Loc};
use crate::attr::Args;
use crate::math::MathFn;
use crate::names::CNames;
use std::collections::{HashMap, HashSet};

pub use infer::{Len, Ty};

/// The inputs and outputs of a physics, identified by parameter name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    U,
    GradU,
    A,
    GradA,
    X,
    Constants,
    /// The outward unit normal (boundary physics).
    N,
    /// The time derivative of `u` (transient physics).
    UT,
    /// The time, a scalar.
    T,
    F0,
    F1,
}

impl Role {
    /// In the order of the OpenCL signature.
    pub const ALL: [Role; 11] = [
        Role::U,
        Role::GradU,
        Role::A,
        Role::GradA,
        Role::X,
        Role::Constants,
        Role::N,
        Role::UT,
        Role::T,
        Role::F0,
        Role::F1,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Role::U => "u",
            Role::GradU => "grad_u",
            Role::A => "a",
            Role::GradA => "grad_a",
            Role::X => "x",
            Role::Constants => "constants",
            Role::N => "n",
            Role::UT => "u_t",
            Role::T => "t",
            Role::F0 => "f0",
            Role::F1 => "f1",
        }
    }

    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    /// The accepted parameter type.
    pub fn form(self) -> &'static str {
        match self {
            Role::U => "&[f64; NC]",
            Role::GradU => "&[[f64; D]; NC]",
            Role::A => "&[f64; NA]",
            Role::GradA => "&[[f64; D]; NA]",
            Role::X => "&[f64; D]",
            Role::Constants => "&[f64; NK]",
            Role::N => "&[f64; D]",
            Role::UT => "&[f64; NC]",
            Role::T => "f64",
            Role::F0 => "&mut [f64; NC]",
            Role::F1 => "&mut [[f64; D]; NC]",
        }
    }

    pub fn is_output(self) -> bool {
        matches!(self, Role::F0 | Role::F1)
    }

    /// Whether the parameter is a gradient-like `[[f64; D]; N]`.
    pub fn is_matrix(self) -> bool {
        matches!(self, Role::GradU | Role::GradA | Role::F1)
    }

    /// Whether the parameter is a scalar `f64` (the time `t`).
    pub fn is_scalar(self) -> bool {
        self == Role::T
    }
}

/// Size of an array parameter of a physics (`PointwiseInfo`'s `Extent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extent {
    Fixed(u64),
    Dim,
}

impl Extent {
    pub fn len(self) -> Len {
        match self {
            Extent::Fixed(n) => Len::Lit(n),
            Extent::Dim => Len::Dim,
        }
    }
}

/// Which spatial dimensions a function is valid in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dims {
    /// `const D: usize` (the name as written): 2D and 3D.
    Generic(String),
    /// Arrays sized with a literal 2 or 3: that dimension only.
    Fixed(u64),
    /// No array depends on the dimension: 2D and 3D, no `D` in scope.
    Any,
}

impl Dims {
    pub fn list(&self) -> Vec<u64> {
        match self {
            Dims::Fixed(d) => vec![*d],
            _ => vec![2, 3],
        }
    }

    pub fn generic(&self) -> Option<&str> {
        match self {
            Dims::Generic(n) => Some(n),
            _ => None,
        }
    }

    /// The value of `D` to evaluate constants with, for flops index 0 (2D)
    /// and 1 (3D).
    pub fn eval_dim(&self, k: usize) -> Option<i64> {
        match self {
            Dims::Generic(_) => Some(k as i64 + 2),
            _ => None,
        }
    }
}

/// A physics signature.
#[derive(Debug)]
pub struct PhysicsSig {
    /// The role of each parameter, in the user's order.
    pub params: Vec<Role>,
    pub n_comp: Extent,
    /// `Fixed(0)` when neither `a` nor `grad_a` is declared.
    pub n_aux: Extent,
    pub n_constants: u64,
    pub has_f0: bool,
    pub has_f1: bool,
}

/// A helper signature.
#[derive(Debug)]
pub struct HelperSig {
    pub returns_real: bool,
}

#[derive(Debug)]
pub enum Kind {
    Physics(PhysicsSig),
    Helper(HelperSig),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindingKind {
    /// A parameter (its role for physics parameters).
    Param(Option<Role>),
    Local,
    LoopVar,
    Const,
    /// The const generic dimension.
    Dim,
}

/// A named value: parameter, local, loop variable or constant.
#[derive(Clone, Debug)]
pub struct Binding {
    pub rust: String,
    pub c: String,
    pub ty: Ty,
    pub mutable: bool,
    pub kind: BindingKind,
}

/// What a path or call refers to.
#[derive(Clone, Copy, Debug)]
pub enum Res {
    Binding(usize),
    Math(&'static MathFn),
    MathConst(f64),
    /// Index into the declared helpers.
    Helper(usize),
}

/// The checked function: everything the emitters need.
pub struct Checked {
    pub kind: Kind,
    pub dims: Dims,
    pub bindings: Vec<Binding>,
    /// Binding of each parameter, in the user's order.
    pub params: Vec<usize>,
    /// Resolutions by expression/statement id (paths, calls, `let`, `const`, `for`).
    pub res: HashMap<usize, Res>,
    /// Final type of every expression, by id.
    pub types: HashMap<usize, Ty>,
    /// Trip count of every `for` loop, by id, in 2D and 3D.
    pub trips: HashMap<usize, [u64; 2]>,
    /// The physics inputs the body reads.
    pub reads: HashSet<Role>,
}

impl Checked {
    pub fn ty(&self, id: usize) -> &Ty {
        self.types.get(&id).unwrap_or(&Ty::Error)
    }
}

/// Collected errors.
#[derive(Default)]
pub struct Errors(Vec<syn::Error>);

impl Errors {
    pub fn at(&mut self, loc: Loc, message: impl std::fmt::Display) {
        self.0.push(loc.error(message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// All errors as one (`syn::Error::combine`).
    pub fn combined(self) -> Option<syn::Error> {
        let mut it = self.0.into_iter();
        let mut first = it.next()?;
        for e in it {
            first.combine(e);
        }
        Some(first)
    }
}

/// Checks a function against the subset. On failure, the error holds every
/// problem found.
pub fn check(args: &Args, f: &Function) -> Result<Checked, syn::Error> {
    let mut errors = Errors::default();
    let mut names = CNames::default();
    if is_physics(f) {
        // The fixed C signatures' parameter names (of the physics, its
        // tangent and its Jacobian).
        for role in Role::ALL {
            names.reserve(role.name());
        }
        for name in [
            "du", "dgrad_u", "du_t", "df0", "df1", "g0", "g1", "g2", "g3", "g0_t", "g2_t",
        ] {
            names.reserve(name);
        }
    }
    let sig = signature::check(args, f, &mut errors, &mut names);
    let checked = body::check(args, f, sig, &mut errors, &mut names);
    match errors.combined() {
        Some(e) => Err(e),
        None => Ok(checked),
    }
}

/// Whether a function is a physics rather than a helper: it has an output
/// parameter `f0` or `f1` (a leading `_` is allowed) of a `&mut` type, and
/// either returns nothing or has only physics parameters (then its result
/// is reported as an error). Decided from the signature as written, so that
/// errors in the types do not change the classification. A helper may
/// name its parameters `f0` and `f1`: by value, or returning a value with
/// another parameter.
pub fn is_physics(f: &Function) -> bool {
    let role = |p: &crate::ast::Param| {
        p.name
            .as_ref()
            .and_then(|n| Role::from_name(n.text.trim_start_matches('_')))
    };
    let returns = f
        .ret
        .as_ref()
        .is_some_and(|t| !matches!(t, crate::ast::Type::Unit(_)));
    let output = f.params.iter().any(|p| {
        matches!(role(p), Some(Role::F0 | Role::F1))
            && matches!(p.ty, crate::ast::Type::Ref { mutable: true, .. })
    });
    output && (!returns || f.params.iter().all(|p| role(p).is_some()))
}
