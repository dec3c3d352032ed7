//! Floating-point precision: one concept, [`Precision`], and the scalar
//! types that have it, [`Real`] (`f32` and `f64`).
//!
//! Every array that crosses to the device is a slice of `R: Real`, so the same
//! code path serves single and double precision, chosen by the type the
//! caller instantiates; code that decides at run time (a command-line
//! option, a benchmark case) holds a [`Precision`] and dispatches once. On
//! the OpenCL side the kernel sees `typedef float real;` or
//! `typedef double real;` ([`Precision::cl_type`]).

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub, SubAssign};
use std::str::FromStr;

/// Floating-point precision of a computation: single (`f32`, OpenCL
/// `float`) or double (`f64`, OpenCL `double`, which needs the device
/// extension `cl_khr_fp64`).
///
/// Parsed from and displayed as `"f32"` / `"f64"`:
/// ```
/// use femquad::Precision;
/// let p: Precision = "f32".parse()?;
/// assert_eq!((p, p.to_string(), p.size(), p.cl_type()), (Precision::F32, "f32".into(), 4, "float"));
/// assert_eq!(<f64 as femquad::Real>::PRECISION, Precision::F64);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precision {
    /// Single precision, 4 bytes.
    F32,
    /// Double precision, 8 bytes.
    F64,
}

impl Precision {
    /// Both precisions, single first.
    pub const ALL: [Precision; 2] = [Precision::F32, Precision::F64];

    /// The name used in reports, options and cache keys: `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// The OpenCL C type: `"float"` or `"double"`.
    pub fn cl_type(self) -> &'static str {
        match self {
            Precision::F32 => "float",
            Precision::F64 => "double",
        }
    }

    /// Bytes of one value.
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Precision {
    type Err = crate::Error;

    /// Parses `f32`/`single`/`float` or `f64`/`double` (case-insensitive).
    fn from_str(s: &str) -> Result<Self, crate::Error> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "single" | "float" => Ok(Precision::F32),
            "f64" | "double" => Ok(Precision::F64),
            _ => Err(crate::Error::arg(
                "precision",
                format!("`{s}` is not a precision: use f32 or f64"),
            )),
        }
    }
}

/// A floating-point scalar the integrators compute in: `f32` or `f64`.
///
/// `Pod` makes slices of it castable to bytes for device transfers. The
/// arithmetic bounds are what the native integrator needs; the associated
/// items are what the OpenCL code generator needs. It knows nothing of
/// physics: a physics evaluates in `R` through
/// [`crate::physics::PointwiseEval<R>`].
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
    /// The precision of this type (its name, OpenCL type and size).
    const PRECISION: Precision;
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
}

macro_rules! impl_real {
    ($t:ty, $p:expr) => {
        impl Real for $t {
            const PRECISION: Precision = $p;
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
        }
    };
}

impl_real!(f32, Precision::F32);
impl_real!(f64, Precision::F64);

/// Converts a slice of `f64` to `R`.
#[doc(hidden)]
pub fn convert_slice<R: Real>(values: &[f64]) -> Vec<R> {
    values.iter().map(|&v| R::from_f64(v)).collect()
}

/// Returns the index of the first entry that is NaN or infinite, if any.
pub(crate) fn first_non_finite<R: Real>(values: &[R]) -> Option<usize> {
    values.iter().position(|v| !v.is_finite())
}

/// Checks that every entry of `values` is finite.
pub(crate) fn check_finite<R: Real>(name: &'static str, values: &[R]) -> crate::Result<()> {
    match first_non_finite(values) {
        None => Ok(()),
        Some(index) => Err(crate::Error::NonFinite {
            name,
            index,
            value: format!("{}", values[index]),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opencl_type_names() {
        assert_eq!(<f32 as Real>::PRECISION.cl_type(), "float");
        assert_eq!(<f64 as Real>::PRECISION.cl_type(), "double");
        assert_eq!(<f32 as Real>::PRECISION.name(), "f32");
        assert_eq!(<f64 as Real>::PRECISION.size(), 8);
        for p in Precision::ALL {
            assert_eq!(p.to_string().parse::<Precision>().unwrap(), p);
        }
        let e = "f16".parse::<Precision>().unwrap_err().to_string();
        assert!(e.contains("`f16`") && e.contains("f32 or f64"), "{e}");
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
