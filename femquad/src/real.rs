//! Floating-point precision: [`Real`] is implemented by `f32` and `f64`.
//!
//! Every array that crosses to the device is a slice of `R: Real`, so the same
//! code path serves single and double precision, chosen at run time by the
//! type the caller instantiates. On the OpenCL side the kernel sees
//! `typedef float real;` or `typedef double real;` ([`Real::CL_TYPE`]).

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};

use crate::physics::{PointArgs, Pointwise, PointwiseError};

/// A floating-point scalar the integrators compute in: `f32` or `f64`.
///
/// `Pod` makes slices of it castable to bytes for device transfers. The
/// arithmetic bounds are what the native integrator needs; the associated
/// items are what the OpenCL code generator needs.
pub trait Real:
    bytemuck::Pod
    + Copy
    + Default
    + Debug
    + Display
    + PartialOrd
    + Send
    + Sync
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + Sum
    + 'static
{
    /// The OpenCL C type: `"float"` or `"double"`.
    const CL_TYPE: &'static str;
    /// Human-readable precision name used in messages and reports: `"f32"` or `"f64"`.
    const NAME: &'static str;
    /// Machine epsilon of the type.
    const EPSILON: Self;
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;

    /// Converts from `f64`, rounding to nearest for `f32`.
    fn from_f64(x: f64) -> Self;
    /// Widens (or copies) to `f64`.
    fn to_f64(self) -> f64;
    /// True unless NaN or ±∞.
    fn is_finite(self) -> bool;
    /// Absolute value.
    fn abs(self) -> Self;

    /// Evaluates pointwise physics in this precision (dispatches to
    /// [`Pointwise::eval_f32`] or [`Pointwise::eval_f64`]).
    fn eval_pointwise<P: Pointwise + ?Sized>(
        physics: &P,
        dim: usize,
        args: &PointArgs<'_, Self>,
        f0: &mut [Self],
        f1: &mut [Self],
    ) -> Result<(), PointwiseError>;
}

macro_rules! impl_real {
    ($t:ty, $cl:literal, $eval:ident) => {
        impl Real for $t {
            const CL_TYPE: &'static str = $cl;
            const NAME: &'static str = stringify!($t);
            const EPSILON: Self = <$t>::EPSILON;
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;

            #[inline]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline]
            fn eval_pointwise<P: Pointwise + ?Sized>(
                physics: &P,
                dim: usize,
                args: &PointArgs<'_, Self>,
                f0: &mut [Self],
                f1: &mut [Self],
            ) -> Result<(), PointwiseError> {
                physics.$eval(dim, args, f0, f1)
            }
        }
    };
}

impl_real!(f32, "float", eval_f32);
impl_real!(f64, "double", eval_f64);

/// Converts a slice of `f64` to `R`.
pub fn convert_slice<R: Real>(values: &[f64]) -> Vec<R> {
    values.iter().map(|&v| R::from_f64(v)).collect()
}

/// Returns the index of the first entry that is NaN or infinite, if any.
pub fn first_non_finite<R: Real>(values: &[R]) -> Option<usize> {
    values.iter().position(|v| !v.is_finite())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencl_type_names() {
        assert_eq!(<f32 as Real>::CL_TYPE, "float");
        assert_eq!(<f64 as Real>::CL_TYPE, "double");
        assert_eq!(<f32 as Real>::NAME, "f32");
    }

    #[test]
    fn conversions_round_trip() {
        let v = convert_slice::<f32>(&[0.1, -2.5]);
        assert_eq!(v, vec![0.1f32, -2.5f32]);
        assert_eq!(f64::from_f64(0.1).to_f64(), 0.1);
        assert_eq!(first_non_finite(&[1.0, f64::NAN, 2.0]), Some(1));
        assert_eq!(first_non_finite(&[1.0f32, 2.0]), None);
    }
}
