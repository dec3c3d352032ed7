//! The math functions and constants the subset accepts, and their OpenCL C
//! names. One table serves the checker, both emitters and the user guide.

/// Kind of an argument of a math function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    Real,
    /// An `i32` (the exponent of `powi`).
    Int,
}

/// A math function, callable as a method (`x.sqrt()`) or through the
/// `f64::` path (`f64::sqrt(x)`).
#[derive(Debug, PartialEq)]
pub struct MathFn {
    /// Rust method name.
    pub rust: &'static str,
    /// OpenCL C built-in.
    pub c: &'static str,
    /// Arguments after the receiver.
    pub args: &'static [Arg],
}

const R: Arg = Arg::Real;

/// Every supported math function. Each maps to an OpenCL built-in with the
/// same meaning (`min`/`max` → `fmin`/`fmax` ignore a NaN operand in both).
pub const FUNCTIONS: &[MathFn] = &[
    MathFn {
        rust: "sqrt",
        c: "sqrt",
        args: &[],
    },
    MathFn {
        rust: "exp",
        c: "exp",
        args: &[],
    },
    MathFn {
        rust: "ln",
        c: "log",
        args: &[],
    },
    MathFn {
        rust: "log10",
        c: "log10",
        args: &[],
    },
    MathFn {
        rust: "powi",
        c: "pown",
        args: &[Arg::Int],
    },
    MathFn {
        rust: "powf",
        c: "pow",
        args: &[R],
    },
    MathFn {
        rust: "sin",
        c: "sin",
        args: &[],
    },
    MathFn {
        rust: "cos",
        c: "cos",
        args: &[],
    },
    MathFn {
        rust: "tan",
        c: "tan",
        args: &[],
    },
    MathFn {
        rust: "tanh",
        c: "tanh",
        args: &[],
    },
    MathFn {
        rust: "abs",
        c: "fabs",
        args: &[],
    },
    MathFn {
        rust: "min",
        c: "fmin",
        args: &[R],
    },
    MathFn {
        rust: "max",
        c: "fmax",
        args: &[R],
    },
    MathFn {
        rust: "mul_add",
        c: "fma",
        args: &[R, R],
    },
    MathFn {
        rust: "exp2",
        c: "exp2",
        args: &[],
    },
    MathFn {
        rust: "log2",
        c: "log2",
        args: &[],
    },
    MathFn {
        rust: "cbrt",
        c: "cbrt",
        args: &[],
    },
    MathFn {
        rust: "hypot",
        c: "hypot",
        args: &[R],
    },
    MathFn {
        rust: "asin",
        c: "asin",
        args: &[],
    },
    MathFn {
        rust: "acos",
        c: "acos",
        args: &[],
    },
    MathFn {
        rust: "atan",
        c: "atan",
        args: &[],
    },
    MathFn {
        rust: "atan2",
        c: "atan2",
        args: &[R],
    },
    MathFn {
        rust: "sinh",
        c: "sinh",
        args: &[],
    },
    MathFn {
        rust: "cosh",
        c: "cosh",
        args: &[],
    },
    MathFn {
        rust: "floor",
        c: "floor",
        args: &[],
    },
    MathFn {
        rust: "ceil",
        c: "ceil",
        args: &[],
    },
    MathFn {
        rust: "round",
        c: "round",
        args: &[],
    },
    MathFn {
        rust: "trunc",
        c: "trunc",
        args: &[],
    },
];

/// The math function named `name`.
pub fn function(name: &str) -> Option<&'static MathFn> {
    FUNCTIONS.iter().find(|f| f.rust == name)
}

/// Comma-separated names of the math functions, for messages.
pub fn function_list() -> String {
    FUNCTIONS
        .iter()
        .map(|f| f.rust)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The constants of `std::f64::consts` (also through `core::`), emitted in
/// OpenCL as `(real)` literals.
pub const CONSTANTS: &[(&str, f64)] = {
    use std::f64::consts::*;
    &[
        ("PI", PI),
        ("TAU", TAU),
        ("E", E),
        ("FRAC_PI_2", FRAC_PI_2),
        ("FRAC_PI_3", FRAC_PI_3),
        ("FRAC_PI_4", FRAC_PI_4),
        ("FRAC_PI_6", FRAC_PI_6),
        ("FRAC_PI_8", FRAC_PI_8),
        ("FRAC_1_PI", FRAC_1_PI),
        ("FRAC_2_PI", FRAC_2_PI),
        ("FRAC_2_SQRT_PI", FRAC_2_SQRT_PI),
        ("SQRT_2", SQRT_2),
        ("FRAC_1_SQRT_2", FRAC_1_SQRT_2),
        ("LN_2", LN_2),
        ("LN_10", LN_10),
        ("LOG2_E", LOG2_E),
        ("LOG10_E", LOG10_E),
        ("LOG2_10", LOG2_10),
        ("LOG10_2", LOG10_2),
    ]
};

/// The value of `std::f64::consts::NAME`.
pub fn constant(name: &str) -> Option<f64> {
    CONSTANTS.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_round_to_the_f32_constants() {
        // The OpenCL source writes `(real)<f64 value>`; in single precision
        // that must equal Rust's `std::f32::consts` value used by the twin.
        use std::f32::consts as c32;
        let f32s = [
            c32::PI,
            c32::TAU,
            c32::E,
            c32::FRAC_PI_2,
            c32::FRAC_PI_3,
            c32::FRAC_PI_4,
            c32::FRAC_PI_6,
            c32::FRAC_PI_8,
            c32::FRAC_1_PI,
            c32::FRAC_2_PI,
            c32::FRAC_2_SQRT_PI,
            c32::SQRT_2,
            c32::FRAC_1_SQRT_2,
            c32::LN_2,
            c32::LN_10,
            c32::LOG2_E,
            c32::LOG10_E,
            c32::LOG2_10,
            c32::LOG10_2,
        ];
        assert_eq!(f32s.len(), CONSTANTS.len());
        for ((name, v64), v32) in CONSTANTS.iter().zip(f32s) {
            assert_eq!(*v64 as f32, v32, "{name}");
        }
    }

    #[test]
    fn lookups() {
        assert_eq!(function("ln").unwrap().c, "log");
        assert_eq!(function("mul_add").unwrap().args.len(), 2);
        assert!(function("signum").is_none());
        assert_eq!(constant("PI"), Some(std::f64::consts::PI));
        assert!(function_list().starts_with("sqrt, exp, ln"));
    }
}
