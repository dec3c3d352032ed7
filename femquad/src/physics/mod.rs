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
//! `a[k]`, `grad_a[k][d]`, `x[d]`, `constants[j]`; outputs `f0[c]` and `f1[c][d]`.
//!
//! Users write physics as plain Rust with [`macro@crate::pointwise`], which
//! implements [`Pointwise`] and emits the same physics as OpenCL C for the
//! GPU kernel, with its derivatives (forward-mode automatic
//! differentiation): the tangent `df0`, `df1` along a direction
//! `(du, d∇u)` ([`Pointwise::eval_tangent_f64`]) and PETSc's pointwise
//! Jacobians `g0 = ∂f0/∂u`, `g1 = ∂f0/∂∇u`, `g2 = ∂f1/∂u`, `g3 = ∂f1/∂∇u`
//! ([`Pointwise::eval_jacobian_f64`], layouts in [`crate::layout`]), natively
//! and in OpenCL C. The built-in physics live in [`builtin`].

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
    /// real f0[], real f1[][DIM])`; `DIM` and `real` are defined by the kernel.
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
    /// `void NAME(const real u[], const real grad_u[][DIM], const real a[],
    /// const real grad_a[][DIM], const real x[], const real constants[],
    /// const real du[], const real dgrad_u[][DIM], real df0[], real df1[][DIM])`:
    /// the directional derivatives `df0 = ∂f0/∂u·du + ∂f0/∂∇u·d∇u`,
    /// `df1` likewise, at the point `(u, ∇u, …)` in the direction
    /// `(du, d∇u)`. It writes only `df0`, `df1` (zeroed first where the
    /// physics has `f0`, `f1`, as the physics zeroes `f0`, `f1`).
    pub opencl_tangent_name: &'static str,
    /// Name of the OpenCL C Jacobian function (empty when the physics
    /// provides no derivatives): `void NAME(… the six inputs …, real g0[],
    /// real g1[], real g2[], real g3[])`, the pointwise Jacobians with
    /// PETSc's meaning and layout, `g0 = ∂f0/∂u`, `g1 = ∂f0/∂∇u`,
    /// `g2 = ∂f1/∂u`, `g3 = ∂f1/∂∇u`, indexed by
    /// [`crate::layout::jac_g0`] … [`crate::layout::jac_g3`]. Every entry is
    /// written (structural zeros as 0).
    pub opencl_jacobian_name: &'static str,
    /// Floating-point operations of one tangent evaluation in 2D and 3D
    /// (counted as [`PointwiseInfo::flops`], on the tangent program).
    pub tangent_flops: [u64; 2],
    /// Floating-point operations of one Jacobian evaluation in 2D and 3D.
    pub jacobian_flops: [u64; 2],
    /// True when the macro proved `f0`, `f1` affine in `(u, ∇u)`: every value
    /// computed from `u`, `∇u` reaches them through sums, differences,
    /// products with one such factor, divisions by other values, copies and
    /// helpers affine in the same sense, and none of them decides anything —
    /// no index (of a read or a write), condition (`if`, `min`, `max`, `abs`),
    /// cast, comparison or integer argument of a helper depends on `u`, `∇u`
    /// (the rule in full: the user guide of `#[pointwise]`, "Linearity").
    ///
    /// The guarantee: the tangent, so `J·v`, and the pointwise Jacobians
    /// `g0 … g3` computed by the derivative programs are the same numbers at
    /// every `(u, ∇u)` where the evaluation stays finite (`x`, `a` and the
    /// constants fixed): what they compute does not depend on a value
    /// computed from `u`, `∇u`. The OpenCL Jacobian-action and
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
}

/// Pointwise physics: native evaluation in both precisions plus the OpenCL C
/// source of the same function, and their derivatives.
///
/// Implemented by `#[pointwise]`; implement it by hand only if you must (the
/// native and OpenCL versions then have to be kept in agreement by you; the
/// derivative methods have defaults that return
/// [`PointwiseError::NoDerivatives`], and [`PointwiseInfo`]'s derivative
/// names are then empty).
pub trait Pointwise: Send + Sync {
    /// Static description: sizes, dimensions, which outputs exist, flops.
    fn info(&self) -> &'static PointwiseInfo;

    /// Complete OpenCL C source defining [`PointwiseInfo::opencl_name`] (and
    /// any helper functions it calls, before it), and the derivatives
    /// [`PointwiseInfo::opencl_tangent_name`] and
    /// [`PointwiseInfo::opencl_jacobian_name`] when they are not empty. Uses
    /// the type `real` and the macro `DIM`, both defined by the kernel that
    /// includes it.
    fn opencl_source(&self) -> String;

    /// Hash of [`Pointwise::opencl_source`] and the metadata, for kernel caching.
    fn source_hash(&self) -> u64 {
        let info = self.info();
        let mut h = Fnv1a::new();
        h.write(self.opencl_source().as_bytes());
        h.write(info.opencl_name.as_bytes());
        h.write(format!("{:?}", info).as_bytes());
        h.finish()
    }

    /// Evaluates `f0` (`N_comp` entries) and `f1` (`N_comp·dim` entries,
    /// `f1[c·dim + d]`) in double precision at one point. Outputs the
    /// physics does not have are left untouched.
    fn eval_f64(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        f0: &mut [f64],
        f1: &mut [f64],
    ) -> Result<(), PointwiseError>;

    /// As [`Pointwise::eval_f64`], in single precision.
    fn eval_f32(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        f0: &mut [f32],
        f1: &mut [f32],
    ) -> Result<(), PointwiseError>;

    /// The directional derivatives of `f0` and `f1` at the point `args` in
    /// the direction `(du, d∇u)`:
    /// `df0 = ∂f0/∂u · du + ∂f0/∂∇u · d∇u` (`N_comp` entries) and `df1`
    /// likewise (`N_comp·dim` entries, `df1[c·dim + d]`); `du` has `N_comp`
    /// entries, `dgrad_u` `N_comp·dim` (`dgrad_u[c·dim + d]`). The auxiliary
    /// fields, coordinates and constants are inputs, not unknowns. Outputs
    /// the physics does not have are left untouched.
    ///
    /// `#[pointwise]` implements it by forward-mode automatic
    /// differentiation; a hand-written implementation without derivatives
    /// returns [`PointwiseError::NoDerivatives`].
    fn eval_tangent_f64(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        du: &[f64],
        dgrad_u: &[f64],
        df0: &mut [f64],
        df1: &mut [f64],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, du, dgrad_u, df0, df1);
        Err(PointwiseError::NoDerivatives {
            physics: self.info().name,
        })
    }

    /// As [`Pointwise::eval_tangent_f64`], in single precision.
    fn eval_tangent_f32(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        du: &[f32],
        dgrad_u: &[f32],
        df0: &mut [f32],
        df1: &mut [f32],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, du, dgrad_u, df0, df1);
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
    fn eval_jacobian_f64(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        g0: &mut [f64],
        g1: &mut [f64],
        g2: &mut [f64],
        g3: &mut [f64],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, g0, g1, g2, g3);
        Err(PointwiseError::NoDerivatives {
            physics: self.info().name,
        })
    }

    /// As [`Pointwise::eval_jacobian_f64`], in single precision.
    fn eval_jacobian_f32(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        g0: &mut [f32],
        g1: &mut [f32],
        g2: &mut [f32],
        g3: &mut [f32],
    ) -> Result<(), PointwiseError> {
        let _ = (dim, args, g0, g1, g2, g3);
        Err(PointwiseError::NoDerivatives {
            physics: self.info().name,
        })
    }
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
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    /// The hash of everything written so far.
    pub fn finish(&self) -> u64 {
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
#[path = "private.rs"]
pub mod __private;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_known_values() {
        let mut h = Fnv1a::new();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
pub mod builtin;
