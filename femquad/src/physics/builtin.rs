//! Built-in physics, written with [`macro@crate::pointwise`]: the paper's
//! Poisson and Lamé residuals, and a nonlinear diffusion.
//!
//! Each function below is the physics as plain Rust; the macro generates the
//! struct next to it (`laplacian` → [`Laplacian`]) implementing
//! [`Pointwise`](super::Pointwise) (the OpenCL C version, its hash) and
//! [`PointwiseEval`](super::PointwiseEval) in both precisions (the native
//! evaluation). All are valid in 2D and 3D.

use crate::pointwise;

/// Laplacian with unit coefficient: `f1 = ∇u`, so `F(u)_i = ∫ ∇φ_i · ∇u`.
#[pointwise]
pub fn laplacian<const D: usize>(grad_u: &[[f64; D]; 1], f1: &mut [[f64; D]; 1]) {
    f1[0] = grad_u[0];
}

/// Laplacian with a variable coefficient taken from the auxiliary field:
/// `f1 = a₀ ∇u`. The coefficient may live in the solution's space (a P1/P2
/// field, interpolated at the quadrature points) or in P0 (one value per
/// cell): the integrator chooses the auxiliary space at run time; the physics
/// only sees the value `a₀` at the point.
#[pointwise]
pub fn laplacian_coefficient<const D: usize>(
    grad_u: &[[f64; D]; 1],
    a: &[f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    for d in 0..D {
        f1[0][d] = a[0] * grad_u[0][d];
    }
}

/// Poisson's equation `−Δu = f` with a constant source: `f0 = −f`,
/// `f1 = ∇u`, with `constants = [f]`.
#[pointwise]
pub fn poisson<const D: usize>(
    grad_u: &[[f64; D]; 1],
    constants: &[f64; 1],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    f0[0] = -constants[0];
    f1[0] = grad_u[0];
}

/// Lamé (linear, isotropic) elasticity:
/// `f1 = μ (∇u + ∇uᵀ) + λ (∇·u) I` with `constants = [μ, λ]` — make them
/// with [`LameParameters::constants`] rather than by hand; `u` has one
/// component per dimension (interleaved, node-major dofs).
#[pointwise(name = Lame, helpers(lame_stress))]
pub fn lame<const D: usize>(grad_u: &[[f64; D]; D], constants: &[f64; 2], f1: &mut [[f64; D]; D]) {
    lame_stress(grad_u, constants[0], constants[1], f1);
}

/// The Lamé stress `σ = μ (∇u + ∇uᵀ) + λ (∇·u) I` into `sigma`: a helper for
/// [`Lame`] and for other physics with this stress (e.g. with body forces).
#[pointwise]
pub fn lame_stress<const D: usize>(
    grad_u: &[[f64; D]; D],
    mu: f64,
    lambda: f64,
    sigma: &mut [[f64; D]; D],
) {
    let mut div = 0.0;
    for d in 0..D {
        div += grad_u[d][d];
    }
    for c in 0..D {
        for d in 0..D {
            sigma[c][d] = mu * (grad_u[c][d] + grad_u[d][c]);
        }
        sigma[c][c] += lambda * div;
    }
}

/// The diffusivity of [`NonlinearDiffusion`]: `κ(u) = 1 + u²`.
#[pointwise]
pub fn kappa(u: f64) -> f64 {
    1.0 + u * u
}

/// Nonlinear diffusion `−∇·(κ(u) ∇u) = 0` with `κ(u) = 1 + u²` ([`kappa`]):
/// `f1 = κ(u) ∇u`.
#[pointwise(helpers(kappa))]
pub fn nonlinear_diffusion<const D: usize>(
    u: &[f64; 1],
    grad_u: &[[f64; D]; 1],
    f1: &mut [[f64; D]; 1],
) {
    let k = kappa(u[0]);
    for d in 0..D {
        f1[0][d] = k * grad_u[0][d];
    }
}

/// The Lamé parameters of [`Lame`], by name: shear modulus `μ` and first
/// parameter `λ`. [`LameParameters::constants`] gives the constants array
/// in the order the physics reads it, so no caller depends on that order.
///
/// ```
/// use femquad::physics::builtin::LameParameters;
/// // steel-like: E = 200 GPa, ν = 0.3
/// let p = LameParameters::from_young_poisson(200e9, 0.3)?;
/// assert!((p.mu - 76.923e9).abs() < 1e6 && (p.lambda - 115.385e9).abs() < 1e6);
/// assert_eq!(p.constants(), [p.mu, p.lambda]);
/// # Ok::<(), femquad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LameParameters {
    /// Shear modulus `μ`.
    pub mu: f64,
    /// First Lamé parameter `λ`.
    pub lambda: f64,
}

impl LameParameters {
    /// `μ` and `λ` given directly.
    pub const fn new(mu: f64, lambda: f64) -> Self {
        LameParameters { mu, lambda }
    }

    /// From Young's modulus `E` and Poisson's ratio `ν`:
    /// `μ = E / (2(1 + ν))`, `λ = E ν / ((1 + ν)(1 − 2ν))`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidArgument`] naming `nu` unless `−1 < ν < 1/2`
    /// (the range of a stable isotropic material), or `e` unless `E > 0`.
    pub fn from_young_poisson(e: f64, nu: f64) -> crate::Result<Self> {
        if !(e > 0.0 && e.is_finite()) {
            return Err(crate::Error::arg(
                "e",
                format!("Young's modulus must be positive and finite, got {e}"),
            ));
        }
        if !(nu > -1.0 && nu < 0.5) {
            return Err(crate::Error::arg(
                "nu",
                format!("Poisson's ratio must lie in (-1, 1/2), got {nu}"),
            ));
        }
        Ok(LameParameters {
            mu: e / (2.0 * (1.0 + nu)),
            lambda: e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
        })
    }

    /// The constants of [`Lame`] (and of [`lame_stress`]-based physics
    /// taking `constants = [μ, λ]`): `[μ, λ]`.
    pub const fn constants(&self) -> [f64; 2] {
        [self.mu, self.lambda]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::{Extent, PointArgs, Pointwise, PointwiseError, PointwiseEval};

    fn args<'a>(grad_u: &'a [f64], u: &'a [f64], a: &'a [f64], k: &'a [f64]) -> PointArgs<'a, f64> {
        PointArgs {
            u,
            grad_u,
            a,
            grad_a: &[],
            x: &[],
            constants: k,
            n: &[],
            u_t: &[],
            t: 0.0,
        }
    }

    #[test]
    fn metadata() {
        let l = Laplacian.info();
        assert_eq!((l.name, l.opencl_name), ("laplacian", "pw_laplacian"));
        assert_eq!(l.dims, &[2, 3]);
        assert_eq!(
            (l.n_comp, l.n_aux, l.n_constants),
            (Extent::Fixed(1), Extent::Fixed(0), 0)
        );
        assert!(l.has_f1 && !l.has_f0);
        assert!(l.reads.grad_u && !l.reads.u && !l.reads.constants);
        assert_eq!(l.flops, [0, 0]);
        assert_eq!(LaplacianCoefficient.info().flops, [2, 3]);
        assert!(LaplacianCoefficient.info().reads.a);
        let m = Lame.info();
        assert_eq!((m.n_comp, m.n_constants), (Extent::Dim, 2));
        // div: D adds; per component: D·(add + mul) + (mul + add)
        assert_eq!(m.flops, [2 + 2 * (2 * 2 + 2), 3 + 3 * (2 * 3 + 2)]);
        // κ: 2, product: D
        assert_eq!(NonlinearDiffusion.info().flops, [4, 5]);
        assert_eq!(Poisson.info().flops, [1, 1]);
        assert!(Poisson.info().has_f0);
    }

    #[test]
    fn lame_values() {
        let g = [1.0, 2.0, 3.0, 4.0];
        let mut f1 = [0.0; 4];
        Lame.eval(2, &args(&g, &[], &[], &[1.5, 2.0]), &mut [], &mut f1)
            .unwrap();
        // μ(∇u+∇uᵀ) + λ tr I with tr = 5
        assert_eq!(
            f1,
            [1.5 * 2.0 + 10.0, 1.5 * 5.0, 1.5 * 5.0, 1.5 * 8.0 + 10.0]
        );
        let mut f1 = [0.0f32; 9];
        let g: Vec<f32> = (0..9).map(|i| i as f32).collect();
        Lame.eval(
            3,
            &PointArgs {
                u: &[],
                grad_u: &g,
                a: &[],
                grad_a: &[],
                x: &[],
                constants: &[1.0, 0.0],
                n: &[],
                u_t: &[],
                t: 0.0,
            },
            &mut [],
            &mut f1,
        )
        .unwrap();
        assert_eq!(f1[1], 1.0 + 3.0);
    }

    #[test]
    fn coefficient_and_nonlinear_values() {
        let mut f1 = [0.0; 3];
        LaplacianCoefficient
            .eval(
                3,
                &args(&[1.0, -2.0, 0.5], &[], &[4.0], &[]),
                &mut [],
                &mut f1,
            )
            .unwrap();
        assert_eq!(f1, [4.0, -8.0, 2.0]);
        let mut f1 = [0.0; 2];
        NonlinearDiffusion
            .eval(2, &args(&[1.0, 3.0], &[2.0], &[], &[]), &mut [], &mut f1)
            .unwrap();
        assert_eq!(f1, [5.0, 15.0]);
        let mut f0 = [7.0];
        let mut f1 = [0.0; 2];
        Poisson
            .eval(2, &args(&[1.0, 3.0], &[], &[], &[2.5]), &mut f0, &mut f1)
            .unwrap();
        assert_eq!((f0, f1), ([-2.5], [1.0, 3.0]));
    }

    #[test]
    fn bad_arguments_are_errors() {
        let mut f1 = [0.0; 2];
        let e = Laplacian
            .eval(2, &args(&[1.0], &[], &[], &[]), &mut [], &mut f1)
            .unwrap_err();
        assert_eq!(
            e,
            PointwiseError::Length {
                physics: "laplacian",
                argument: "grad_u",
                expected: 2,
                got: 1
            }
        );
        let e = Laplacian
            .eval(4, &args(&[1.0; 4], &[], &[], &[]), &mut [], &mut [0.0; 4])
            .unwrap_err();
        assert_eq!(
            e,
            PointwiseError::Dimension {
                physics: "laplacian",
                dim: 4
            }
        );
        let e = Lame
            .eval(
                2,
                &args(&[1.0; 4], &[], &[], &[1.0]),
                &mut [],
                &mut [0.0; 4],
            )
            .unwrap_err();
        assert!(e.to_string().contains("constants"), "{e}");
    }

    #[test]
    fn opencl_sources_define_the_named_function() {
        for p in [
            &Laplacian as &dyn Pointwise,
            &LaplacianCoefficient,
            &Lame,
            &NonlinearDiffusion,
            &Poisson,
        ] {
            let src = p.opencl_source();
            let name = p.info().opencl_name;
            assert!(
                src.contains(&format!(
                    "void {name}(const real u[], const real grad_u[][DIM]"
                )),
                "{src}"
            );
            assert!(!src.contains("@@"), "{src}");
        }
        let src = NonlinearDiffusion.opencl_source();
        assert!(
            src.find("real pw_kappa_").unwrap() < src.find("void pw_nonlinear_diffusion").unwrap()
        );
        assert_ne!(Laplacian.source_hash(), LaplacianCoefficient.source_hash());
    }
}
