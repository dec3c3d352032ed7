//! Pointwise physics: the `f0` and `f1` of the weak form.
//!
//! femquad evaluates residuals of the form
//!
//! ```text
//! F(u)_i = Σ_cells ∫_cell φ_i · f0(u, ∇u, a, ∇a, x) + ∇φ_i : f1(u, ∇u, a, ∇a, x) dx
//! ```
//!
//! where `u` is the solution field (`N_comp` components), `a` the auxiliary
//! (coefficient) fields (`N_aux` components), `x` the point and `constants`
//! run-time parameters. The physics is the pair of functions `f0` (one value
//! per component) and `f1` (one vector per component), evaluated at each
//! quadrature point. Arguments follow PETSc's meaning: `u[c]`, `grad_u[c][d]`,
//! `a[k]`, `grad_a[k][d]`, `x[d]`, `constants[j]`, `n[d]` (the outward unit
//! normal: a boundary physics, whose `f0` is integrated on facets,
//! `Σ_facets ∫ φ_i · f0`), `u_t[c]` (the time derivative of `u`: a
//! transient physics, the residual of the implicit form `F(t, u, u_t) = 0`)
//! and `t` (the time); outputs `f0[c]` and `f1[c][d]`.
//!
//! Users write physics as plain Rust with [`macro@crate::pointwise`], which
//! implements [`Pointwise`] (what does not depend on the precision: the
//! description [`PointwiseInfo`] and the OpenCL C source with its hash,
//! both constants) and [`PointwiseEval<R>`] for `R = f32` and `f64` (the
//! native evaluation), and emits the same physics as OpenCL C for the GPU
//! kernel, with its derivatives (forward-mode automatic differentiation):
//! the tangent `df0`, `df1` along a direction `(du, d∇u, du_t)`
//! ([`PointwiseEval::eval_tangent`]), PETSc's pointwise Jacobians
//! `g0 = ∂f0/∂u`, `g1 = ∂f0/∂∇u`, `g2 = ∂f1/∂u`, `g3 = ∂f1/∂∇u`
//! ([`PointwiseEval::eval_jacobian`], layouts in [`crate::layout`]) and the
//! blocks with respect to `u_t`, `g0_t = ∂f0/∂u_t`, `g2_t = ∂f1/∂u_t`
//! ([`PointwiseEval::eval_jacobian_u_t`]; a time step's Jacobian
//! `σ·∂F/∂u_t + ∂F/∂u` has the blocks `g0 + σ·g0_t`, `g1`, `g2 + σ·g2_t`,
//! `g3`), natively and in OpenCL C. `n` and `t` are not differentiated. Code that takes a physics in a precision `R` takes
//! `&dyn PointwiseEval<R>` (or `P: PointwiseEval<R> + ?Sized`); one that
//! chooses the precision later holds a [`PointwiseEvalBoth`]. The built-in
//! physics live in [`builtin`].

use crate::Real;
pub use crate::error::PointwiseError;

/// Size of an array argument of pointwise physics: a fixed number or the
/// spatial dimension.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extent {
    /// A fixed number of entries.
    Fixed(usize),
    /// As many entries as the spatial dimension (vector fields such as displacement).
    Dim,
}

impl Extent {
    /// The number of entries in dimension `dim`.
    pub fn resolve(self, dim: usize) -> usize {
        match self {
            Extent::Fixed(n) => n,
            Extent::Dim => dim,
        }
    }
}

/// Which inputs a physics reads. The kernel loads and evaluates only these.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Reads {
    /// `u`, the field values.
    pub u: bool,
    /// `grad_u`, the field gradients.
    pub grad_u: bool,
    /// `a`, the auxiliary field values.
    pub a: bool,
    /// `grad_a`, the auxiliary field gradients.
    pub grad_a: bool,
    /// `x`, the coordinates of the quadrature point.
    pub x: bool,
    /// `constants`.
    pub constants: bool,
    /// `n`, the outward unit normal: a boundary physics
    /// ([`PointwiseInfo::is_boundary`]).
    pub n: bool,
    /// `u_t`, the time derivative of the field: a transient physics
    /// ([`PointwiseInfo::is_transient`]).
    pub u_t: bool,
    /// `t`, the time.
    pub t: bool,
}

/// Static description of a pointwise physics, as produced by `#[pointwise]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PointwiseInfo {
    /// Name of the Rust function.
    pub name: &'static str,
    /// Name of the OpenCL C function defined by [`Pointwise::opencl_source`].
    ///
    /// Its signature is always
    /// `void NAME(const real u[], const real grad_u[][DIM], const real a[],
    /// const real grad_a[][DIM], const real x[], const real constants[],
    /// const real n[], const real u_t[], const real t, real f0[],
    /// real f1[][DIM])` (the inputs, "the nine inputs" below, in this fixed
    /// order: `n` the outward unit normal, `u_t` the time derivative of `u`,
    /// `t` the time; a kernel passes zeros for those the physics does not
    /// read); `DIM` and `real` are defined by the kernel.
    pub opencl_name: &'static str,
    /// Spatial dimensions the physics is valid in (a subset of `[2, 3]`).
    pub dims: &'static [usize],
    /// Components of the solution field, `N_comp`.
    pub n_comp: Extent,
    /// Components of the auxiliary field, `N_aux` (0 if none).
    pub n_aux: Extent,
    /// Number of run-time constants.
    pub n_constants: usize,
    /// Whether the physics writes `f0`.
    pub has_f0: bool,
    /// Whether the physics writes `f1`.
    pub has_f1: bool,
    /// Which inputs the body reads.
    pub reads: Reads,
    /// Floating-point operations of one evaluation, for dimension 2 and 3
    /// (`flops[dim - 2]`): each `+ - * / %` and negation counts one
    /// (negating a literal counts none), each math function call one
    /// (`mul_add` too), loops multiply by their trip count, an `if` counts
    /// its larger branch, and helper calls count their own flops.
    pub flops: [u64; 2],
    /// Name of the OpenCL C tangent function defined by
    /// [`Pointwise::opencl_source`] (empty when the physics provides no
    /// derivatives). Its signature is
    /// `void NAME(… the nine inputs …, const real du[],
    /// const real dgrad_u[][DIM], const real du_t[], real df0[], real df1[][DIM])`:
    /// the directional derivatives
    /// `df0 = ∂f0/∂u·du + ∂f0/∂∇u·d∇u + ∂f0/∂u_t·du_t`, `df1` likewise, at
    /// the point `(u, ∇u, u_t, …)` in the direction `(du, d∇u, du_t)` (the
    /// step Jacobian `σ·∂F/∂u_t + ∂F/∂u` applied to `v` is the tangent along
    /// `(v, ∇v, σ·v)`; a stationary use passes `du_t = 0`). It writes only `df0`, `df1` (zeroed first where the
    /// physics has `f0`, `f1`, as the physics zeroes `f0`, `f1`).
    pub opencl_tangent_name: &'static str,
    /// Name of the OpenCL C Jacobian function (empty when the physics
    /// provides no derivatives): `void NAME(… the nine inputs …, real g0[],
    /// real g1[], real g2[], real g3[])`, the pointwise Jacobians with
    /// PETSc's meaning and layout, `g0 = ∂f0/∂u`, `g1 = ∂f0/∂∇u`,
    /// `g2 = ∂f1/∂u`, `g3 = ∂f1/∂∇u`, indexed by
    /// [`crate::layout::jac_g0`] … [`crate::layout::jac_g3`]. Every entry is
    /// written (structural zeros as 0).
    pub opencl_jacobian_name: &'static str,
    /// Name of the OpenCL C Jacobian function with respect to `u_t` (empty
    /// when the physics provides no derivatives): `void NAME(… the nine
    /// inputs …, real g0_t[], real g2_t[])`, `g0_t = ∂f0/∂u_t` and
    /// `g2_t = ∂f1/∂u_t` in the layouts of `g0` and `g2`
    /// ([`crate::layout::jac_g0`], [`crate::layout::jac_g2`]): the blocks
    /// that the step Jacobian `σ·∂F/∂u_t + ∂F/∂u` adds, `σ·g0_t` to `g0`
    /// and `σ·g2_t` to `g2`. Every entry is written (all 0 when the physics
    /// does not read `u_t`).
    pub opencl_jacobian_u_t_name: &'static str,
    /// Floating-point operations of one tangent evaluation in 2D and 3D
    /// (counted as [`PointwiseInfo::flops`], on the tangent program).
    pub tangent_flops: [u64; 2],
    /// Floating-point operations of one Jacobian evaluation in 2D and 3D.
    pub jacobian_flops: [u64; 2],
    /// True when the macro proved `f0`, `f1` affine in `(u, ∇u, u_t)`: every
    /// value computed from `u`, `∇u`, `u_t` reaches them through sums, differences,
    /// products with one such factor, divisions by other values, copies and
    /// helpers affine in the same sense, and none of them decides anything —
    /// no index (of a read or a write), condition (`if`, `min`, `max`, `abs`),
    /// cast, comparison or integer argument of a helper depends on `u`, `∇u`,
    /// `u_t` (the rule in full: the user guide of `#[pointwise]`,
    /// "Linearity").
    ///
    /// The guarantee: the tangent, so `J·v`, and the pointwise Jacobians
    /// `g0 … g3`, `g0_t`, `g2_t` computed by the derivative programs are the
    /// same numbers at every `(u, ∇u, u_t)` where the evaluation stays
    /// finite (`x`, `a`, `n`, `t` and the constants fixed): what they compute
    /// does not depend on a value computed from `u`, `∇u`, `u_t`. The OpenCL Jacobian-action and
    /// Jacobian-diagonal kernels rely on it: for such a physics they evaluate
    /// the derivatives at `u = 0`, `∇u = 0` without loading `u` (kernel macro
    /// `AFFINE`). False means "not proved", not "nonlinear": a
    /// piecewise-affine body (an index or a branch chosen by `u`) is false. A
    /// hand-written [`Pointwise`] must set it only with the same guarantee.
    pub linear: bool,
}

impl PointwiseInfo {
    /// True if the physics supports spatial dimension `dim`.
    pub fn supports_dim(&self, dim: usize) -> bool {
        self.dims.contains(&dim)
    }

    /// True if the physics reads the outward unit normal `n`: a boundary
    /// physics, integrated on facets; it cannot be a cell term of a
    /// [`crate::form::Form`].
    pub fn is_boundary(&self) -> bool {
        self.reads.n
    }

    /// True if the physics reads `u_t`, the time derivative of the field:
    /// a transient physics, `F(t, u, u_t) = 0`, solved by a time
    /// integrator (a stationary form refuses it).
    pub fn is_transient(&self) -> bool {
        self.reads.u_t
    }

    /// Flop count of one evaluation in dimension `dim` (0 if unsupported).
    pub fn flops_in(&self, dim: usize) -> u64 {
        match dim {
            2 | 3 if self.supports_dim(dim) => self.flops[dim - 2],
            _ => 0,
        }
    }
}

/// The inputs of one pointwise evaluation, as flat slices in the layouts of
/// [`crate::layout`]: `grad_u[c·dim + d]`, `grad_a[k·dim + d]`.
///
/// `n` and `u_t` are looked at only when the physics reads them
/// ([`PointwiseInfo::reads`]): pass empty slices otherwise (a physics that
/// declares them without reading them sees zeros); `t` is passed as given
/// (0 in a stationary evaluation).
#[derive(Clone, Copy, Debug)]
pub struct PointArgs<'a, R> {
    /// Field values, `N_comp` entries.
    pub u: &'a [R],
    /// Field gradients, `N_comp·dim` entries.
    pub grad_u: &'a [R],
    /// Auxiliary field values, `N_aux` entries.
    pub a: &'a [R],
    /// Auxiliary field gradients, `N_aux·dim` entries.
    pub grad_a: &'a [R],
    /// Coordinates of the point, `dim` entries.
    pub x: &'a [R],
    /// Run-time constants.
    pub constants: &'a [R],
    /// The outward unit normal at a facet point, `dim` entries when the
    /// physics reads it (a boundary physics), else empty.
    pub n: &'a [R],
    /// The time derivative of the field values, `N_comp` entries when the
    /// physics reads it (a transient physics), else empty.
    pub u_t: &'a [R],
    /// The time.
    pub t: R,
}

/// The direction of a tangent ([`PointwiseEval::eval_tangent`]): a change
/// `(du, d∇u, du_t)` of the unknowns `(u, ∇u, u_t)` at one point, flat
/// slices in the layouts of [`PointArgs`].
///
/// The tangent is `df0 = ∂f0/∂u · du + ∂f0/∂∇u · d∇u + ∂f0/∂u_t · du_t`
/// (and `df1` likewise). A stationary Jacobian action `∂F/∂u · v` is the
/// direction `(v, ∇v, 0)`; a time step's `(σ·∂F/∂u_t + ∂F/∂u) · v` is
/// `(v, ∇v, σ·v)`.
#[derive(Clone, Copy, Debug)]
pub struct Direction<'a, R> {
    /// `du`, `N_comp` entries.
    pub du: &'a [R],
    /// `d∇u`, `N_comp·dim` entries (`dgrad_u[c·dim + d]`).
    pub dgrad_u: &'a [R],
    /// `du_t`, `N_comp` entries when the physics reads `u_t`; else not
    /// looked at (pass `&[]`).
    pub du_t: &'a [R],
}

/// Pointwise physics, what does not depend on the precision: its
/// description and its OpenCL C source. The evaluation in a precision `R`
/// is [`PointwiseEval<R>`].
///
/// Implemented by `#[pointwise]` (with [`PointwiseEval<f32>`] and
/// [`PointwiseEval<f64>`]); implement it by hand only if you must: the
/// native and OpenCL versions then have to be kept in agreement by you,
/// the derivative methods of [`PointwiseEval`] have defaults that return
/// [`PointwiseError::NoDerivatives`], and [`PointwiseInfo`]'s derivative
/// names are then empty.
///
/// # A hand-written physics
/// Its source and hash are constants, as those `#[pointwise]` generates:
/// ```
/// use femquad::physics::{
///     Direction, Extent, PointArgs, Pointwise, PointwiseEval, PointwiseError, PointwiseInfo,
///     Reads, source_hash,
/// };
///
/// /// `f0 = u²`, without derivatives.
/// struct Square;
///
/// const SOURCE: &str = "void square(const real u[], const real grad_u[][DIM], \
///     const real a[], const real grad_a[][DIM], const real x[], const real constants[], \
///     const real n[], const real u_t[], const real t, \
///     real f0[], real f1[][DIM]) { f0[0] = u[0] * u[0]; }\n";
/// const HASH: u64 = source_hash(SOURCE);
/// static INFO: PointwiseInfo = PointwiseInfo {
///     name: "square",
///     opencl_name: "square",
///     dims: &[2, 3],
///     n_comp: Extent::Fixed(1),
///     n_aux: Extent::Fixed(0),
///     n_constants: 0,
///     has_f0: true,
///     has_f1: false,
///     reads: Reads {
///         u: true, grad_u: false, a: false, grad_a: false, x: false, constants: false,
///         n: false, u_t: false, t: false,
///     },
///     flops: [1, 1],
///     opencl_tangent_name: "",
///     opencl_jacobian_name: "",
///     opencl_jacobian_u_t_name: "",
///     tangent_flops: [0, 0],
///     jacobian_flops: [0, 0],
///     linear: false,
/// };
///
/// impl Pointwise for Square {
///     fn info(&self) -> &'static PointwiseInfo {
///         &INFO
///     }
///     fn opencl_source(&self) -> &'static str {
///         SOURCE
///     }
///     fn source_hash(&self) -> u64 {
///         HASH
///     }
/// }
///
/// // One precision here; `#[pointwise]` implements both.
/// impl PointwiseEval<f64> for Square {
///     fn eval(
///         &self,
///         _dim: usize,
///         args: &PointArgs<'_, f64>,
///         f0: &mut [f64],
///         _f1: &mut [f64],
///     ) -> Result<(), PointwiseError> {
///         f0[0] = args.u[0] * args.u[0];
///         Ok(())
///     }
/// }
///
/// // A stationary cell evaluation: no normal, no `u_t`, `t` = 0.
/// let args = PointArgs {
///     u: &[3.0], grad_u: &[0.0; 2], a: &[], grad_a: &[], x: &[], constants: &[],
///     n: &[], u_t: &[], t: 0.0,
/// };
/// let mut f0 = [0.0];
/// Square.eval(2, &args, &mut f0, &mut [])?;
/// assert_eq!(f0, [9.0]);
/// let dir = Direction { du: &[1.0], dgrad_u: &[0.0; 2], du_t: &[] };
/// assert!(Square.eval_tangent(2, &args, &dir, &mut f0, &mut []).is_err());
/// # Ok::<(), PointwiseError>(())
/// ```
pub trait Pointwise: Send + Sync {
    /// Static description: sizes, dimensions, which outputs exist, flops.
    fn info(&self) -> &'static PointwiseInfo;

    /// Complete OpenCL C source defining [`PointwiseInfo::opencl_name`] (and
    /// any helper functions it calls, before it), and the derivatives
    /// [`PointwiseInfo::opencl_tangent_name`] and
    /// [`PointwiseInfo::opencl_jacobian_name`] when they are not empty. Uses
    /// the type `real` and the macro `DIM`, both defined by the kernel that
    /// includes it.
    ///
    /// A constant: `#[pointwise]` has rustc build it at compile time.
    fn opencl_source(&self) -> &'static str;

    /// [`source_hash`] of [`Pointwise::opencl_source`], the key of the
    /// physics in kernel caches: a constant, computed at compile time
    /// (`const HASH: u64 = source_hash(SOURCE);` in a hand-written
    /// implementation), so that no launch hashes the source.
    ///
    /// The source determines everything the kernels use of
    /// [`Pointwise::info`]: `#[pointwise]` writes the physics' signature
    /// (its arrays and their lengths, the dimensions) in a comment at the
    /// head of its function. Two hand-written physics with the same source
    /// must have the same info.
    fn source_hash(&self) -> u64;
}

/// The evaluation of pointwise physics in precision `R` (`f32` or `f64`):
/// `f0`, `f1`, their tangent and their pointwise Jacobians at one point.
/// `#[pointwise]` implements it for both precisions.
pub trait PointwiseEval<R: Real>: Pointwise {
    /// Evaluates `f0` (`N_comp` entries) and `f1` (`N_comp·dim` entries,
    /// `f1[c·dim + d]`) at one point. Outputs the physics does not have are
    /// left untouched.
    ///
    /// # Errors
    /// [`PointwiseError::Length`] for an argument of the wrong length,
    /// [`PointwiseError::Dimension`] for a dimension the physics is not
    /// defined in.
    fn eval(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        f0: &mut [R],
        f1: &mut [R],
    ) -> Result<(), PointwiseError>;

    /// The directional derivatives of `f0` and `f1` at the point `args` in
    /// the direction `dir` = `(du, d∇u, du_t)` ([`Direction`]):
    /// `df0 = ∂f0/∂u · du + ∂f0/∂∇u · d∇u + ∂f0/∂u_t · du_t` (`N_comp`
    /// entries) and `df1` likewise (`N_comp·dim` entries,
    /// `df1[c·dim + d]`). For the step Jacobian `σ·∂F/∂u_t + ∂F/∂u`
    /// applied to `v`, pass `du = v`, `du_t = σ·v`. The auxiliary fields,
    /// coordinates, normal, time and constants are inputs, not unknowns.
    /// Outputs the physics does not have are left untouched.
    ///
    /// `#[pointwise]` implements it by forward-mode automatic
    /// differentiation; a hand-written implementation without derivatives
    /// returns [`PointwiseError::NoDerivatives`].
    ///
    /// # Errors
    /// As [`PointwiseEval::eval`] (naming `du`, `dgrad_u`, `du_t`, `df0`,
    /// `df1` too); [`PointwiseError::NoDerivatives`].
    fn eval_tangent(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        dir: &Direction<'_, R>,
        df0: &mut [R],
        df1: &mut [R],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, dir, df0, df1);
        Err(PointwiseError::NoDerivatives {
            physics: self.info().name,
        })
    }

    /// The pointwise Jacobians at `args`, PETSc's `g0 = ∂f0/∂u`
    /// (`N_comp²` entries), `g1 = ∂f0/∂∇u`, `g2 = ∂f1/∂u` (`N_comp²·dim`
    /// each) and `g3 = ∂f1/∂∇u` (`N_comp²·dim²`), in the layouts of
    /// [`crate::layout::jac_g0`] … [`crate::layout::jac_g3`]. Every entry is
    /// written; entries that are structurally zero (an output the physics
    /// does not have, an input it does not read) are 0.
    ///
    /// # Errors
    /// As [`PointwiseEval::eval`] (naming `g0` … `g3` too);
    /// [`PointwiseError::NoDerivatives`].
    fn eval_jacobian(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        g0: &mut [R],
        g1: &mut [R],
        g2: &mut [R],
        g3: &mut [R],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, g0, g1, g2, g3);
        Err(PointwiseError::NoDerivatives {
            physics: self.info().name,
        })
    }

    /// The pointwise Jacobians with respect to `u_t` at `args`:
    /// `g0_t = ∂f0/∂u_t` (`N_comp²` entries, laid out as `g0`,
    /// [`crate::layout::jac_g0`]) and `g2_t = ∂f1/∂u_t` (`N_comp²·dim`, as
    /// `g2`, [`crate::layout::jac_g2`]). The step Jacobian
    /// `σ·∂F/∂u_t + ∂F/∂u` has the pointwise Jacobians `g0 + σ·g0_t`,
    /// `g1`, `g2 + σ·g2_t`, `g3`. Every entry is written: all 0 when the
    /// physics does not read `u_t`.
    ///
    /// # Errors
    /// As [`PointwiseEval::eval`] (naming `g0_t`, `g2_t` too);
    /// [`PointwiseError::NoDerivatives`].
    fn eval_jacobian_u_t(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        g0_t: &mut [R],
        g2_t: &mut [R],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, g0_t, g2_t);
        Err(PointwiseError::NoDerivatives {
            physics: self.info().name,
        })
    }
}

/// A physics held by reference is the physics: `Form::new(space, &PHYSICS)`
/// with a `static`, or `R::physics(p)` of a `&'static dyn PointwiseEvalBoth`
/// chosen at run time ([`EvalPrecision::physics`]).
impl<P: Pointwise + ?Sized> Pointwise for &P {
    fn info(&self) -> &'static PointwiseInfo {
        (**self).info()
    }
    fn opencl_source(&self) -> &'static str {
        (**self).opencl_source()
    }
    fn source_hash(&self) -> u64 {
        (**self).source_hash()
    }
}

impl<R: Real, P: PointwiseEval<R> + ?Sized> PointwiseEval<R> for &P {
    fn eval(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        f0: &mut [R],
        f1: &mut [R],
    ) -> Result<(), PointwiseError> {
        (**self).eval(dim, args, f0, f1)
    }
    fn eval_tangent(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        dir: &Direction<'_, R>,
        df0: &mut [R],
        df1: &mut [R],
    ) -> Result<(), PointwiseError> {
        (**self).eval_tangent(dim, args, dir, df0, df1)
    }
    fn eval_jacobian(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        g0: &mut [R],
        g1: &mut [R],
        g2: &mut [R],
        g3: &mut [R],
    ) -> Result<(), PointwiseError> {
        (**self).eval_jacobian(dim, args, g0, g1, g2, g3)
    }
    fn eval_jacobian_u_t(
        &self,
        dim: usize,
        args: &PointArgs<'_, R>,
        g0_t: &mut [R],
        g2_t: &mut [R],
    ) -> Result<(), PointwiseError> {
        (**self).eval_jacobian_u_t(dim, args, g0_t, g2_t)
    }
}

/// Pointwise physics that evaluates in both precisions: every
/// `#[pointwise]` physics. Where the physics is chosen at run time and the
/// precision is not yet (a list of cases, a benchmark), hold it as
/// `&dyn PointwiseEvalBoth`: it coerces to `&dyn PointwiseEval<f32>` and to
/// `&dyn PointwiseEval<f64>`, and [`EvalPrecision::physics`] picks one in
/// code generic over the precision.
pub trait PointwiseEvalBoth: PointwiseEval<f32> + PointwiseEval<f64> {}

impl<P: PointwiseEval<f32> + PointwiseEval<f64> + ?Sized> PointwiseEvalBoth for P {}

/// The precisions pointwise physics evaluate in, `f32` and `f64`, for code
/// generic over the precision that holds a [`PointwiseEvalBoth`]:
/// `R::physics(p)` is `p` evaluating in `R`. ([`Real`] itself knows
/// nothing of physics.)
///
/// ```
/// use femquad::physics::builtin::Poisson;
/// use femquad::physics::{EvalPrecision, PointArgs, PointwiseEvalBoth};
/// fn source_term<R: EvalPrecision>(p: &dyn PointwiseEvalBoth) -> R {
///     let args = PointArgs { u: &[], grad_u: &[R::ZERO; 2], a: &[], grad_a: &[], x: &[],
///                            constants: &[R::from_f64(3.0)], n: &[], u_t: &[], t: R::ZERO };
///     let (mut f0, mut f1) = ([R::ZERO], [R::ZERO; 2]);
///     R::physics(p).eval(2, &args, &mut f0, &mut f1).unwrap();
///     f0[0]
/// }
/// assert_eq!((source_term::<f32>(&Poisson), source_term::<f64>(&Poisson)), (-3.0, -3.0));
/// ```
pub trait EvalPrecision: Real {
    /// `physics` evaluating in this precision.
    fn physics(physics: &dyn PointwiseEvalBoth) -> &dyn PointwiseEval<Self>;
}

impl EvalPrecision for f32 {
    fn physics(physics: &dyn PointwiseEvalBoth) -> &dyn PointwiseEval<f32> {
        physics
    }
}

impl EvalPrecision for f64 {
    fn physics(physics: &dyn PointwiseEvalBoth) -> &dyn PointwiseEval<f64> {
        physics
    }
}

/// The FNV-1a hash of an OpenCL source: what [`Pointwise::source_hash`]
/// returns. A `const fn`, so that the hash of a constant source is a
/// constant.
pub const fn source_hash(source: &str) -> u64 {
    let mut h = Fnv1a::new();
    h.write(source.as_bytes());
    h.finish()
}

/// 64-bit FNV-1a hash, used for kernel cache keys (stable across runs and platforms).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fnv1a(u64);

impl Fnv1a {
    /// A hasher in its initial state.
    pub const fn new() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }
    /// Feeds bytes.
    pub const fn write(&mut self, bytes: &[u8]) {
        let mut i = 0;
        while i < bytes.len() {
            self.0 ^= bytes[i] as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
            i += 1;
        }
    }
    /// The hash of everything written so far.
    pub const fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv1a {
    fn default() -> Self {
        Self::new()
    }
}

/// Support code called by the items `#[pointwise]` generates. Not for direct use.
#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_known_values() {
        let mut h = Fnv1a::new();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
        const A: u64 = source_hash("a");
        assert_eq!(A, 0xaf63_dc4c_8601_ec8c);
    }

    /// A physics written with the macro here (besides the built-ins).
    #[crate::pointwise(helpers(builtin::kappa))]
    fn scaled_kappa(u: &[f64; 1], constants: &[f64; 1], f0: &mut [f64; 1]) {
        f0[0] = constants[0] * builtin::kappa(u[0]);
    }

    /// The hash of `source`, computed here at run time.
    fn hashed(source: &str) -> u64 {
        let mut h = Fnv1a::new();
        h.write(source.as_bytes());
        h.finish()
    }

    #[test]
    fn source_hashes_are_the_hashes_of_the_sources_computed_once() {
        for p in [
            &builtin::Laplacian as &dyn Pointwise,
            &builtin::Lame,
            &builtin::NonlinearDiffusion,
            &ScaledKappa,
        ] {
            let name = p.info().name;
            let source = p.opencl_source();
            assert_eq!(p.source_hash(), hashed(source), "{name}");
            // The same constant every call: nothing is built or allocated.
            assert!(std::ptr::eq(source, p.opencl_source()), "{name}");
        }
        // A helper's definition is in the source, so it is hashed too.
        let source = ScaledKappa.opencl_source();
        assert!(source.contains("real pw_kappa_"), "{source}");
        assert_ne!(ScaledKappa.source_hash(), builtin::Laplacian.source_hash());
    }
}
pub mod builtin;
