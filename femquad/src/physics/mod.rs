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
//! GPU kernel. The built-in physics live in [`builtin`].

use std::fmt;

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
/// source of the same function.
///
/// Implemented by `#[pointwise]`; implement it by hand only if you must (the
/// native and OpenCL versions then have to be kept in agreement by you).
pub trait Pointwise: Send + Sync {
    /// Static description: sizes, dimensions, which outputs exist, flops.
    fn info(&self) -> &'static PointwiseInfo;

    /// Complete OpenCL C source defining [`PointwiseInfo::opencl_name`] (and
    /// any helper functions it calls, before it). Uses the type `real` and
    /// the macro `DIM`, both defined by the kernel that includes it.
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
}

/// A pointwise evaluation received arguments it cannot use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PointwiseError {
    /// An argument slice has the wrong length.
    Length {
        /// Physics name.
        physics: &'static str,
        /// Argument name (`u`, `grad_u`, `f1`, …).
        argument: &'static str,
        /// Entries expected.
        expected: usize,
        /// Entries received.
        got: usize,
    },
    /// The physics does not support this spatial dimension.
    Dimension {
        /// Physics name.
        physics: &'static str,
        /// The dimension asked for.
        dim: usize,
    },
}

impl fmt::Display for PointwiseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PointwiseError::Length {
                physics,
                argument,
                expected,
                got,
            } => write!(
                f,
                "`{physics}`: argument `{argument}` has {got} entries, expected {expected}"
            ),
            PointwiseError::Dimension { physics, dim } => {
                write!(f, "`{physics}` does not support dimension {dim}")
            }
        }
    }
}

impl std::error::Error for PointwiseError {}

/// 64-bit FNV-1a hash, used for kernel cache keys (stable across runs and platforms).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub struct Fnv1a(u64);

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
pub mod __private {
    use super::PointwiseError;

    /// Views a slice as a fixed-size array.
    #[inline]
    pub fn array<'a, T, const N: usize>(
        physics: &'static str,
        argument: &'static str,
        s: &'a [T],
    ) -> Result<&'a [T; N], PointwiseError> {
        s.try_into().map_err(|_| PointwiseError::Length {
            physics,
            argument,
            expected: N,
            got: s.len(),
        })
    }

    /// Views a mutable slice as a fixed-size array.
    #[inline]
    pub fn array_mut<'a, T, const N: usize>(
        physics: &'static str,
        argument: &'static str,
        s: &'a mut [T],
    ) -> Result<&'a mut [T; N], PointwiseError> {
        let got = s.len();
        s.try_into().map_err(|_| PointwiseError::Length {
            physics,
            argument,
            expected: N,
            got,
        })
    }

    /// Views a row-major slice as an `R × C` array of arrays.
    #[inline]
    pub fn matrix<'a, T, const R: usize, const C: usize>(
        physics: &'static str,
        argument: &'static str,
        s: &'a [T],
    ) -> Result<&'a [[T; C]; R], PointwiseError> {
        let err = PointwiseError::Length {
            physics,
            argument,
            expected: R * C,
            got: s.len(),
        };
        let (rows, rest) = s.as_chunks::<C>();
        if !rest.is_empty() {
            return Err(err);
        }
        rows.try_into().map_err(|_| err)
    }

    /// Views a mutable row-major slice as an `R × C` array of arrays.
    #[inline]
    pub fn matrix_mut<'a, T, const R: usize, const C: usize>(
        physics: &'static str,
        argument: &'static str,
        s: &'a mut [T],
    ) -> Result<&'a mut [[T; C]; R], PointwiseError> {
        let err = PointwiseError::Length {
            physics,
            argument,
            expected: R * C,
            got: s.len(),
        };
        let (rows, rest) = s.as_chunks_mut::<C>();
        if !rest.is_empty() {
            return Err(err);
        }
        rows.try_into().map_err(|_| err)
    }

    /// The error for an unsupported dimension.
    pub fn unsupported_dim(physics: &'static str, dim: usize) -> PointwiseError {
        PointwiseError::Dimension { physics, dim }
    }

    /// The OpenCL C of a `#[pointwise]` helper function, as a template:
    /// `@@self@@` stands for its own name and `@@i@@` for the name of the
    /// `i`-th helper it calls. Names are given by [`opencl_source`]:
    /// `pw_<rust name>_<hash of the source>`, so that helpers with the same
    /// Rust name in different modules do not clash.
    #[derive(Debug)]
    pub struct ClFunction {
        /// The function's Rust name (ASCII).
        pub rust_name: &'static str,
        /// The C source template.
        pub template: &'static str,
        /// The helpers it calls, in the order of the `@@i@@` placeholders.
        pub helpers: &'static [&'static ClFunction],
    }

    /// Whether an array argument of lengths `arg` (`0`: the caller's `D`)
    /// fits parameter `i` of a helper with parameter lengths `params` (`0`:
    /// the helper's `D`): where the helper uses its `D`, the caller must
    /// pass a `D`-sized array (or, in a physics of fixed dimension `fixed`,
    /// an array of that length), because in OpenCL every `D` is `DIM`.
    /// Shapes Rust rejects anyway (other lengths, arity) are not judged here.
    pub const fn dim_arg_ok(params: &[&[usize]], i: usize, arg: &[usize], fixed: usize) -> bool {
        if i >= params.len() || params[i].len() != arg.len() {
            return true;
        }
        let p = params[i];
        let mut j = 0;
        while j < p.len() {
            if p[j] == 0 && arg[j] != 0 && (fixed == 0 || arg[j] != fixed) {
                return false;
            }
            j += 1;
        }
        true
    }

    /// Longest chain of helper calls.
    const MAX_DEPTH: usize = 64;

    /// False if `f` calls itself through its helpers (or the chain of calls
    /// is deeper than 64). Evaluated at compile time by every helper.
    pub const fn acyclic(f: &ClFunction) -> bool {
        visit(f, [f; MAX_DEPTH], 1)
    }

    const fn visit<'a>(
        f: &'a ClFunction,
        mut path: [&'a ClFunction; MAX_DEPTH],
        depth: usize,
    ) -> bool {
        let mut i = 0;
        while i < f.helpers.len() {
            let h = f.helpers[i];
            let mut j = 0;
            while j < depth {
                if same(path[j], h) {
                    return false;
                }
                j += 1;
            }
            if depth == MAX_DEPTH {
                return false;
            }
            path[depth] = h;
            if !visit(h, path, depth + 1) {
                return false;
            }
            i += 1;
        }
        true
    }

    const fn same(a: &ClFunction, b: &ClFunction) -> bool {
        str_eq(a.rust_name, b.rust_name)
            && str_eq(a.template, b.template)
            && a.helpers.len() == b.helpers.len()
    }

    const fn str_eq(a: &str, b: &str) -> bool {
        let (a, b) = (a.as_bytes(), b.as_bytes());
        if a.len() != b.len() {
            return false;
        }
        let mut i = 0;
        while i < a.len() {
            if a[i] != b[i] {
                return false;
            }
            i += 1;
        }
        true
    }

    fn substitute(template: &str, names: &[String]) -> String {
        let mut s = template.to_string();
        for (i, n) in names.iter().enumerate() {
            s = s.replace(&format!("@@{i}@@"), n);
        }
        s
    }

    /// Names `f` (and, first, the helpers it calls), appending each
    /// definition once to `defs`, callees before callers.
    fn resolve(f: &ClFunction, defs: &mut Vec<(String, String)>, depth: usize) -> String {
        let callees: Vec<String> = if depth < MAX_DEPTH {
            f.helpers
                .iter()
                .map(|h| resolve(h, defs, depth + 1))
                .collect()
        } else {
            Vec::new()
        };
        let body = substitute(f.template, &callees);
        let mut h = super::Fnv1a::new();
        h.write(body.as_bytes());
        let name = format!("pw_{}_{:016x}", f.rust_name, h.finish());
        if !defs.iter().any(|(n, _)| *n == name) {
            let source = body.replace("@@self@@", &name);
            defs.push((name.clone(), source));
        }
        name
    }

    /// The complete OpenCL C of a physics: the definitions of its helpers
    /// (each once, callees first), then `own` with `@@i@@` replaced by the
    /// name of `helpers[i]`.
    pub fn opencl_source(helpers: &[&ClFunction], own: &str) -> String {
        let mut defs = Vec::new();
        let names: Vec<String> = helpers.iter().map(|h| resolve(h, &mut defs, 1)).collect();
        let mut out = String::new();
        for (_, source) in &defs {
            out.push_str(source);
            out.push('\n');
        }
        out.push_str(&substitute(own, &names));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::__private::*;
    use super::*;

    #[test]
    fn array_views_check_lengths() {
        let v = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let m: &[[f64; 3]; 2] = matrix("p", "grad_u", &v).unwrap();
        assert_eq!(m[1][0], 4.0);
        assert!(matrix::<f64, 3, 3>("p", "grad_u", &v).is_err());
        let e = array::<f64, 4>("p", "u", &v).unwrap_err();
        assert_eq!(e.to_string(), "`p`: argument `u` has 6 entries, expected 4");
        let mut w = [0.0; 4];
        let m: &mut [[f64; 2]; 2] = matrix_mut("p", "f1", &mut w).unwrap();
        m[1][1] = 7.0;
        assert_eq!(w[3], 7.0);
    }

    static LEAF: ClFunction = ClFunction {
        rust_name: "leaf",
        template: "real @@self@@(real v) { return v; }\n",
        helpers: &[],
    };
    static MID: ClFunction = ClFunction {
        rust_name: "mid",
        template: "real @@self@@(real v) { return @@0@@(v) + @@1@@(v); }\n",
        helpers: &[&LEAF, &LEAF],
    };
    static LOOP_A: ClFunction = ClFunction {
        rust_name: "a",
        template: "real @@self@@(real v) { return @@0@@(v); }\n",
        helpers: &[&LOOP_B],
    };
    static LOOP_B: ClFunction = ClFunction {
        rust_name: "b",
        template: "real @@self@@(real v) { return @@0@@(v) * v; }\n",
        helpers: &[&LOOP_A],
    };

    #[test]
    fn helper_sources_are_named_and_deduplicated() {
        let src = opencl_source(&[&MID, &LEAF], "void f() { @@0@@(1.0); @@1@@(2.0); }\n");
        // leaf once, then mid, then the physics
        assert_eq!(src.matches("real pw_leaf_").count(), 1, "{src}");
        let leaf = src.find("real pw_leaf_").unwrap();
        let mid = src.find("real pw_mid_").unwrap();
        assert!(leaf < mid);
        assert!(!src.contains("@@"), "{src}");
        let leaf_name = &src[leaf + 5..leaf + 5 + "pw_leaf_".len() + 16];
        assert!(src.contains(&format!("{leaf_name}(2.0)")), "{src}");
        assert!(acyclic(&MID));
        assert!(!acyclic(&LOOP_A));
        assert!(!acyclic(&LOOP_B));
    }

    #[test]
    fn helper_dimension_arguments() {
        let params: &[&[usize]] = &[&[], &[0], &[2, 0]];
        assert!(dim_arg_ok(params, 1, &[0], 0));
        assert!(!dim_arg_ok(params, 1, &[2], 0));
        assert!(dim_arg_ok(params, 1, &[2], 2));
        assert!(!dim_arg_ok(params, 1, &[3], 2));
        assert!(dim_arg_ok(params, 2, &[2, 0], 0));
        assert!(dim_arg_ok(params, 0, &[], 0));
        assert!(dim_arg_ok(params, 7, &[1], 0));
    }

    #[test]
    fn fnv1a_known_values() {
        let mut h = Fnv1a::new();
        h.write(b"a");
        assert_eq!(h.finish(), 0xaf63_dc4c_8601_ec8c);
    }
}
pub mod builtin;
