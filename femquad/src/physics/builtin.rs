//! Built-in physics: the paper's Poisson and Lamé residuals.
//!
//! These are hand-written implementations of [`Pointwise`]; they are
//! replaced by `#[pointwise]` versions once the macro is available.

use super::__private::{array, matrix, matrix_mut, unsupported_dim};
use super::{Extent, PointArgs, Pointwise, PointwiseError, PointwiseInfo, Reads};

/// Laplacian with unit coefficient: `f1 = ∇u`, so `F(u)_i = ∫ ∇φ_i · ∇u`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Laplacian;

/// Laplacian with a variable coefficient taken from the auxiliary field:
/// `f1 = a₀ ∇u`. The coefficient may live in the solution's space or in P0.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaplacianCoefficient;

/// Lamé (linear, isotropic) elasticity: `f1 = μ (∇u + ∇uᵀ) + λ (∇·u) I`
/// with `constants = [μ, λ]`; `u` has one component per dimension.
#[derive(Clone, Copy, Debug, Default)]
pub struct Lame;

static LAPLACIAN_INFO: PointwiseInfo = PointwiseInfo {
    name: "laplacian",
    opencl_name: "laplacian",
    dims: &[2, 3],
    n_comp: Extent::Fixed(1),
    n_aux: Extent::Fixed(0),
    n_constants: 0,
    has_f0: false,
    has_f1: true,
    reads: Reads {
        u: false,
        grad_u: true,
        a: false,
        grad_a: false,
        x: false,
        constants: false,
    },
    flops: [0, 0],
};

static LAPLACIAN_COEFFICIENT_INFO: PointwiseInfo = PointwiseInfo {
    name: "laplacian_coefficient",
    opencl_name: "laplacian_coefficient",
    dims: &[2, 3],
    n_comp: Extent::Fixed(1),
    n_aux: Extent::Fixed(1),
    n_constants: 0,
    has_f0: false,
    has_f1: true,
    reads: Reads {
        u: false,
        grad_u: true,
        a: true,
        grad_a: false,
        x: false,
        constants: false,
    },
    flops: [2, 3],
};

static LAME_INFO: PointwiseInfo = PointwiseInfo {
    name: "lame",
    opencl_name: "lame",
    dims: &[2, 3],
    n_comp: Extent::Dim,
    n_aux: Extent::Fixed(0),
    n_constants: 2,
    has_f0: false,
    has_f1: true,
    reads: Reads {
        u: false,
        grad_u: true,
        a: false,
        grad_a: false,
        x: false,
        constants: true,
    },
    // divergence: D-1 adds; per (c, d): add + mul = 2·D²; diagonal: mul + add = 2·D
    flops: [(1 + 2 * 4 + 2 * 2) as u64, (2 + 2 * 9 + 2 * 3) as u64],
};

fn laplacian_dim<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0] = grad_u[0];
}

fn laplacian_dim_f32<const D: usize>(grad_u: &[[f32; D]; 1], f1: &mut [[f32; D]; 1]) {
    f1[0] = grad_u[0];
}

macro_rules! dispatch_dim {
    ($name:expr, $dim:expr, $body2:expr, $body3:expr) => {
        match $dim {
            2 => $body2,
            3 => $body3,
            d => Err(unsupported_dim($name, d)),
        }
    };
}

macro_rules! impl_laplacian {
    ($t:ty, $f:ident, $dim:expr, $args:expr, $f1:expr) => {{
        fn run<const D: usize>(a: &PointArgs<'_, $t>, f1: &mut [$t]) -> Result<(), PointwiseError> {
            let g = matrix::<$t, 1, D>("laplacian", "grad_u", a.grad_u)?;
            let out = matrix_mut::<$t, 1, D>("laplacian", "f1", f1)?;
            $f::<D>(g, out);
            Ok(())
        }
        dispatch_dim!("laplacian", $dim, run::<2>($args, $f1), run::<3>($args, $f1))
    }};
}

impl Pointwise for Laplacian {
    fn info(&self) -> &'static PointwiseInfo {
        &LAPLACIAN_INFO
    }
    fn opencl_source(&self) -> String {
        "void laplacian(const real u[], const real grad_u[][DIM], const real a[],\n\
         \x20               const real grad_a[][DIM], const real x[], const real constants[],\n\
         \x20               real f0[], real f1[][DIM])\n\
         {\n\
         \x20   for (int d = 0; d < DIM; ++d) f1[0][d] = grad_u[0][d];\n\
         }\n"
            .to_string()
    }
    fn eval_f64(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        _f0: &mut [f64],
        f1: &mut [f64],
    ) -> Result<(), PointwiseError> {
        impl_laplacian!(f64, laplacian_dim, dim, args, f1)
    }
    fn eval_f32(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        _f0: &mut [f32],
        f1: &mut [f32],
    ) -> Result<(), PointwiseError> {
        impl_laplacian!(f32, laplacian_dim_f32, dim, args, f1)
    }
}

macro_rules! impl_laplacian_coefficient {
    ($t:ty, $args:expr, $dim:expr, $f1:expr) => {{
        fn run<const D: usize>(a: &PointArgs<'_, $t>, f1: &mut [$t]) -> Result<(), PointwiseError> {
            let name = "laplacian_coefficient";
            let g = matrix::<$t, 1, D>(name, "grad_u", a.grad_u)?;
            let k = array::<$t, 1>(name, "a", a.a)?;
            let out = matrix_mut::<$t, 1, D>(name, "f1", f1)?;
            for d in 0..D {
                out[0][d] = k[0] * g[0][d];
            }
            Ok(())
        }
        dispatch_dim!("laplacian_coefficient", $dim, run::<2>($args, $f1), run::<3>($args, $f1))
    }};
}

impl Pointwise for LaplacianCoefficient {
    fn info(&self) -> &'static PointwiseInfo {
        &LAPLACIAN_COEFFICIENT_INFO
    }
    fn opencl_source(&self) -> String {
        "void laplacian_coefficient(const real u[], const real grad_u[][DIM], const real a[],\n\
         \x20               const real grad_a[][DIM], const real x[], const real constants[],\n\
         \x20               real f0[], real f1[][DIM])\n\
         {\n\
         \x20   for (int d = 0; d < DIM; ++d) f1[0][d] = a[0] * grad_u[0][d];\n\
         }\n"
            .to_string()
    }
    fn eval_f64(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        _f0: &mut [f64],
        f1: &mut [f64],
    ) -> Result<(), PointwiseError> {
        impl_laplacian_coefficient!(f64, args, dim, f1)
    }
    fn eval_f32(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        _f0: &mut [f32],
        f1: &mut [f32],
    ) -> Result<(), PointwiseError> {
        impl_laplacian_coefficient!(f32, args, dim, f1)
    }
}

macro_rules! impl_lame {
    ($t:ty, $args:expr, $dim:expr, $f1:expr) => {{
        fn run<const D: usize>(a: &PointArgs<'_, $t>, f1: &mut [$t]) -> Result<(), PointwiseError> {
            let name = "lame";
            let g = matrix::<$t, D, D>(name, "grad_u", a.grad_u)?;
            let k = array::<$t, 2>(name, "constants", a.constants)?;
            let out = matrix_mut::<$t, D, D>(name, "f1", f1)?;
            let (mu, lambda) = (k[0], k[1]);
            let mut div = 0.0;
            for d in 0..D {
                div += g[d][d];
            }
            for c in 0..D {
                for d in 0..D {
                    out[c][d] = mu * (g[c][d] + g[d][c]);
                }
                out[c][c] += lambda * div;
            }
            Ok(())
        }
        dispatch_dim!("lame", $dim, run::<2>($args, $f1), run::<3>($args, $f1))
    }};
}

impl Pointwise for Lame {
    fn info(&self) -> &'static PointwiseInfo {
        &LAME_INFO
    }
    fn opencl_source(&self) -> String {
        "void lame(const real u[], const real grad_u[][DIM], const real a[],\n\
         \x20          const real grad_a[][DIM], const real x[], const real constants[],\n\
         \x20          real f0[], real f1[][DIM])\n\
         {\n\
         \x20   const real mu = constants[0];\n\
         \x20   const real lambda = constants[1];\n\
         \x20   real div = (real)0.0;\n\
         \x20   for (int d = 0; d < DIM; ++d) div += grad_u[d][d];\n\
         \x20   for (int c = 0; c < DIM; ++c) {\n\
         \x20       for (int d = 0; d < DIM; ++d) f1[c][d] = mu * (grad_u[c][d] + grad_u[d][c]);\n\
         \x20       f1[c][c] += lambda * div;\n\
         \x20   }\n\
         }\n"
            .to_string()
    }
    fn eval_f64(
        &self,
        dim: usize,
        args: &PointArgs<'_, f64>,
        _f0: &mut [f64],
        f1: &mut [f64],
    ) -> Result<(), PointwiseError> {
        impl_lame!(f64, args, dim, f1)
    }
    fn eval_f32(
        &self,
        dim: usize,
        args: &PointArgs<'_, f32>,
        _f0: &mut [f32],
        f1: &mut [f32],
    ) -> Result<(), PointwiseError> {
        impl_lame!(f32, args, dim, f1)
    }
}
