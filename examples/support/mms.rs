//! Manufactured solutions of the examples and tests: an exact solution `u`,
//! the forcing `f` that makes it solve the PDE, and the physics that
//! discretizes the PDE with that forcing, written with `#[pointwise]`.
//!
//! The forcing enters the weak form as `f0 = −f(x)` (the physics reads the
//! quadrature point `x`), so the residual is
//! `F(u)_i = ∫ ∇φ_i : f1(∇u, x) − φ_i · f(x)`, and the discrete solution
//! converges to the exact one as the mesh is refined: in `L²` like `h²`
//! for P1 and `h³` for P2.
//!
//! All solutions are products of cosines `cos(k x_j + b)` with `k = π/2`,
//! smooth and nonzero on most of the boundary of the unit square or cube (so the Dirichlet data matter) and
//! defined everywhere (so any mesh, e.g. one read from Gmsh, can be used).

use femquad::physics::builtin::{LameParameters, lame_stress};
use femquad::pointwise;

/// The diffusion coefficient of the Laplacian problem, `κ(x) = 1 + x₀²`.
#[pointwise]
pub fn kappa_of_x(x0: f64) -> f64 {
    1.0 + x0 * x0
}

/// Wave number `k = π/2` of the manufactured solutions: one quarter period
/// over the unit interval, smooth enough for the error to be in its
/// asymptotic regime (`O(h^{p+1})`) from coarse meshes on.
pub const WAVE: f64 = std::f64::consts::FRAC_PI_2;

/// Exact solution of the Laplacian problem: `u(x) = Π_j cos(k x_j)`,
/// `k = π/2` ([`WAVE`]).
pub fn laplacian_exact(x: &[f64], out: &mut [f64]) {
    out[0] = x.iter().map(|&xj| (WAVE * xj).cos()).product();
}

/// Variable-coefficient Poisson problem `−∇·(κ(x) ∇u) = f` with
/// `κ = 1 + x₀²` ([`kappa_of_x`]) and `f` manufactured from
/// `u = Π_j cos(k x_j)`, `k = π/2` ([`laplacian_exact`]):
///
/// ```text
/// Δu = −D k² u,   ∂u/∂x₀ = −k sin(k x₀) Π_{j≠0} cos(k x_j),
/// f = −∇·(κ∇u) = −κ Δu − (∂κ/∂x₀)(∂u/∂x₀) = D k² κ u − 2 x₀ ∂u/∂x₀.
/// ```
///
/// Weak form: `f0 = −f(x)`, `f1 = κ(x) ∇u`. Linear in `u`; no constants.
#[pointwise(helpers(kappa_of_x))]
pub fn poisson_mms<const D: usize>(
    grad_u: &[[f64; D]; 1],
    x: &[f64; D],
    f0: &mut [f64; 1],
    f1: &mut [[f64; D]; 1],
) {
    let k = 0.5 * std::f64::consts::PI; // WAVE
    let kappa = kappa_of_x(x[0]);
    // u and the product of the cosines other than the first
    let mut u = 1.0;
    let mut rest = 1.0;
    for j in 0..D {
        let c = (k * x[j]).cos();
        u *= c;
        if j > 0 {
            rest *= c;
        }
    }
    let du0 = -k * (k * x[0]).sin() * rest;
    let f = (D as f64) * k * k * kappa * u - 2.0 * x[0] * du0;
    f0[0] = -f;
    for d in 0..D {
        f1[0][d] = kappa * grad_u[0][d];
    }
}

/// Phase of component `c` of the elasticity solution: `b_c = c/2`.
fn lame_phase(c: usize) -> f64 {
    0.5 * c as f64
}

/// Exact displacement of the elasticity problem:
/// `u_c(x) = Π_j cos(k x_j + b_c)` with `k = π/2` ([`WAVE`]) and
/// `b_c = c/2`, `c = 0..D`.
pub fn lame_exact(x: &[f64], out: &mut [f64]) {
    for (c, o) in out.iter_mut().enumerate() {
        *o = x
            .iter()
            .map(|&xj| (WAVE * xj + lame_phase(c)).cos())
            .product();
    }
}

/// Lamé elasticity `−∇·σ(u) = f`, `σ = μ(∇u + ∇uᵀ) + λ(∇·u) I`, with `f`
/// manufactured from `u_c = ψ_c = Π_j cos(k x_j + b_c)` ([`lame_exact`]);
/// `constants = [μ, λ]`. With `C_j = cos(k x_j + b_c)`, `S_j = sin(…)`:
///
/// ```text
/// −∇·σ = −μ Δu − (μ + λ) ∇(∇·u),   Δψ_c = −D k² ψ_c,
/// ∂_i(∇·u) = Σ_c ∂_i∂_c ψ_c,  ∂_i∂_c ψ_c = −k² ψ_c (i = c),  k² S_i S_c Π_{j≠i,c} C_j (i ≠ c),
/// f_i = D k² μ ψ_i − (μ + λ) Σ_c ∂_i∂_c ψ_c.
/// ```
///
/// Weak form: `f0 = −f(x)`, `f1 = σ(∇u)`. Linear in `u`.
#[pointwise(name = LameMms, helpers(lame_stress))]
pub fn lame_mms<const D: usize>(
    grad_u: &[[f64; D]; D],
    x: &[f64; D],
    constants: &[f64; 2],
    f0: &mut [f64; D],
    f1: &mut [[f64; D]; D],
) {
    let k = 0.5 * std::f64::consts::PI; // WAVE
    let mu = constants[0];
    let lambda = constants[1];
    lame_stress(grad_u, mu, lambda, f1);
    // cos and sin of k x_j + b_c, and ψ_c
    let mut cs = [[0.0; D]; D];
    let mut sn = [[0.0; D]; D];
    let mut psi = [0.0; D];
    for c in 0..D {
        let b = 0.5 * (c as f64);
        psi[c] = 1.0;
        for j in 0..D {
            cs[c][j] = (k * x[j] + b).cos();
            sn[c][j] = (k * x[j] + b).sin();
            psi[c] *= cs[c][j];
        }
    }
    // f_i = D k² μ ψ_i − (μ + λ) Σ_c ∂_i∂_c ψ_c
    for i in 0..D {
        let mut grad_div = -k * k * psi[i];
        for c in 0..D {
            if c != i {
                let mut h = k * k * sn[c][i] * sn[c][c];
                for j in 0..D {
                    if j != i && j != c {
                        h *= cs[c][j];
                    }
                }
                grad_div += h;
            }
        }
        let f = (D as f64) * k * k * mu * psi[i] - (mu + lambda) * grad_div;
        f0[i] = -f;
    }
}

/// Lamé parameters of the elasticity examples and tests: `μ = 1`, `λ = 2`.
pub const LAME: LameParameters = LameParameters::new(1.0, 2.0);

/// The constants of [`LameMms`] for [`LAME`].
pub const LAME_CONSTANTS: [f64; 2] = LAME.constants();

#[cfg(test)]
mod tests {
    use super::*;
    use femquad::physics::{PointArgs, PointwiseEval};

    /// `−∇·(flux)` by central differences of the exact solution's flux,
    /// compared with the physics' `f = −f0`.
    fn check_forcing(
        physics: &dyn PointwiseEval<f64>,
        dim: usize,
        exact: fn(&[f64], &mut [f64]),
        constants: &[f64],
    ) {
        let nc = physics.info().n_comp.resolve(dim);
        let grad = |x: &[f64]| -> Vec<f64> {
            // ∇u by central differences, layout [c][d]
            let h = 1e-5;
            let mut g = vec![0.0; nc * dim];
            for d in 0..dim {
                let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
                xp[d] += h;
                xm[d] -= h;
                let (mut up, mut um) = (vec![0.0; nc], vec![0.0; nc]);
                exact(&xp, &mut up);
                exact(&xm, &mut um);
                for c in 0..nc {
                    g[c * dim + d] = (up[c] - um[c]) / (2.0 * h);
                }
            }
            g
        };
        let flux = |x: &[f64]| -> (Vec<f64>, Vec<f64>) {
            let g = grad(x);
            let (mut f0, mut f1) = (vec![0.0; nc], vec![0.0; nc * dim]);
            let args = PointArgs {
                u: &[],
                grad_u: &g,
                a: &[],
                grad_a: &[],
                x,
                constants,
                n: &[],
                u_t: &[],
                t: 0.0,
            };
            physics.eval(dim, &args, &mut f0, &mut f1).unwrap();
            (f0, f1)
        };
        for x in [[0.3, 0.7, 0.2], [0.9, 0.1, 0.55], [0.5, 0.25, 0.8]] {
            let x = &x[..dim];
            let (f0, _) = flux(x);
            let h = 1e-3;
            for (c, f0c) in f0.iter().enumerate() {
                // −Σ_d ∂_d f1[c][d]
                let mut div = 0.0;
                for d in 0..dim {
                    let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
                    xp[d] += h;
                    xm[d] -= h;
                    div += (flux(&xp).1[c * dim + d] - flux(&xm).1[c * dim + d]) / (2.0 * h);
                }
                let f_fd = -div;
                let f = -f0c;
                assert!(
                    (f - f_fd).abs() < 1e-4 * (1.0 + f.abs()),
                    "{dim}D comp {c} at {x:?}: f = {f}, by differences {f_fd}"
                );
            }
        }
    }

    #[test]
    fn forcings_match_the_exact_solutions() {
        for dim in [2, 3] {
            check_forcing(&PoissonMms, dim, laplacian_exact, &[]);
            check_forcing(&LameMms, dim, lame_exact, &LAME_CONSTANTS);
        }
    }
}
