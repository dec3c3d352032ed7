//! Support code called by the items `#[pointwise]` generates: array views
//! of `PointArgs` slices, the OpenCL source of a physics assembled at
//! compile time from helper templates (`source`), compile-time checks,
//! and the argument conversion of generated helper calls (`Arg`). Not for
//! direct use.

mod source;

use super::PointwiseError;
use std::any::Any;

pub use source::{FP_CONTRACT_OFF, MAX_DEFINITIONS, as_str, source_bytes, source_len};

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

/// Checks that a slice argument has `expected` entries.
#[inline]
pub fn check_len(
    physics: &'static str,
    argument: &'static str,
    got: usize,
    expected: usize,
) -> Result<(), PointwiseError> {
    if got == expected {
        Ok(())
    } else {
        Err(PointwiseError::Length {
            physics,
            argument,
            expected,
            got,
        })
    }
}

/// The error for an unsupported dimension.
pub fn unsupported_dim(physics: &'static str, dim: usize) -> PointwiseError {
    PointwiseError::Dimension { physics, dim }
}

/// A piece of the OpenCL C template of a `#[pointwise]` function.
#[derive(Clone, Copy, Debug)]
pub enum Piece {
    /// C text.
    Text(&'static str),
    /// The C name of the `i`-th helper the function calls.
    Helper(usize),
    /// The function's own C name (in a helper's definition).
    Own,
}

/// The OpenCL C of a `#[pointwise]` helper function, as a template: its
/// own name and those of the helpers it calls are given when a physics'
/// source is assembled ([`source_bytes`]): `pw_<rust name>_<hash of its
/// definition>`, so that helpers with the same Rust name in different
/// modules do not clash.
#[derive(Debug)]
pub struct ClFunction {
    /// The function's Rust name (ASCII).
    pub rust_name: &'static str,
    /// `module_path!()` of its companion module: with `rust_name`, what
    /// identifies the helper (two helpers of one name in two modules differ).
    pub module: &'static str,
    /// The C source template.
    pub template: &'static [Piece],
    /// The helpers it calls, in the order of [`Piece::Helper`]'s indices.
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

const fn visit<'a>(f: &'a ClFunction, mut path: [&'a ClFunction; MAX_DEPTH], depth: usize) -> bool {
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
    str_eq(a.rust_name, b.rust_name) && str_eq(a.module, b.module)
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

/// Converts an argument of a helper call in generated native code to the
/// helper's parameter type.
///
/// The macro does not see a helper's signature, only the call. When the
/// user's call fits the helper (the only case in which the crate compiles),
/// argument and parameter have the same type up to an integer literal's
/// inferred type, and `arg` is the identity (or `as` between integer types,
/// for a literal that rustc would have typed from the parameter). When they
/// do not fit, rustc reports the mismatch once, on the user's function; the
/// generated translation still type-checks through `arg` instead of
/// reporting it a second time with types the user never wrote. The
/// mismatched conversions are therefore never executed.
pub trait Arg<T> {
    /// The argument as the parameter's type.
    fn arg(self) -> T;
}

/// [`Arg::arg`] as a function, so that both types are inferred.
#[inline(always)]
pub fn arg<T: Arg<U>, U>(t: T) -> U {
    t.arg()
}

macro_rules! numeric_args {
    ($($from:ty),*) => { $( numeric_args!(@to $from; f32, f64, usize, i32); )* };
    (@to $from:ty; $($to:ty),*) => { $(
        impl Arg<$to> for $from {
            #[inline(always)]
            fn arg(self) -> $to { self as $to }
        }
    )* };
}
numeric_args!(f32, f64, usize, i32);

macro_rules! unfit_args {
    ($($from:ty => $($to:ty),*;)*) => { $( $(
        impl Arg<$to> for $from {
            fn arg(self) -> $to { unreachable!("#[pointwise]: a helper call that rustc rejects") }
        }
    )* )* };
}
unfit_args! {
    bool => f32, f64, usize, i32;
    f32 => bool;
    f64 => bool;
    usize => bool;
    i32 => bool;
    () => f32, f64, usize, i32, bool;
}

impl Arg<bool> for bool {
    #[inline(always)]
    fn arg(self) -> bool {
        self
    }
}

impl<'a, T: Any, U: Any> Arg<&'a U> for &'a T {
    #[inline(always)]
    fn arg(self) -> &'a U {
        (self as &dyn Any)
            .downcast_ref()
            .expect("#[pointwise]: a helper call that rustc rejects")
    }
}

impl<'a, T: Any, U: Any> Arg<&'a U> for &'a mut T {
    #[inline(always)]
    fn arg(self) -> &'a U {
        (self as &dyn Any)
            .downcast_ref()
            .expect("#[pointwise]: a helper call that rustc rejects")
    }
}

impl<'a, T: Any, U: Any> Arg<&'a mut U> for &'a mut T {
    #[inline(always)]
    fn arg(self) -> &'a mut U {
        (self as &mut dyn Any)
            .downcast_mut()
            .expect("#[pointwise]: a helper call that rustc rejects")
    }
}

impl<'a, T: ?Sized, U> Arg<&'a mut U> for &'a T {
    fn arg(self) -> &'a mut U {
        unreachable!("#[pointwise]: a helper call that rustc rejects")
    }
}

macro_rules! ref_scalar_args {
    ($($s:ty),*) => { $(
        impl<'a, T: ?Sized> Arg<$s> for &'a T {
            fn arg(self) -> $s { unreachable!("#[pointwise]: a helper call that rustc rejects") }
        }
        impl<'a, T: ?Sized> Arg<$s> for &'a mut T {
            fn arg(self) -> $s { unreachable!("#[pointwise]: a helper call that rustc rejects") }
        }
        impl<'a, U> Arg<&'a U> for $s {
            fn arg(self) -> &'a U { unreachable!("#[pointwise]: a helper call that rustc rejects") }
        }
        impl<'a, U> Arg<&'a mut U> for $s {
            fn arg(self) -> &'a mut U { unreachable!("#[pointwise]: a helper call that rustc rejects") }
        }
    )* };
}
ref_scalar_args!(f32, f64, usize, i32, bool);

#[cfg(test)]
mod tests {
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

    use Piece::{Helper, Own, Text};

    static LEAF: ClFunction = ClFunction {
        rust_name: "leaf",
        module: "m",
        template: &[Text("real "), Own, Text("(real v) { return v; }\n")],
        helpers: &[],
    };
    static LOOP_A: ClFunction = ClFunction {
        rust_name: "a",
        module: "m",
        template: &[Helper(0)],
        helpers: &[&LOOP_B],
    };
    static LOOP_B: ClFunction = ClFunction {
        rust_name: "b",
        module: "m",
        template: &[Helper(0)],
        helpers: &[&LOOP_A],
    };

    #[test]
    fn helpers_calling_themselves_are_found() {
        assert!(acyclic(&LEAF));
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
}
