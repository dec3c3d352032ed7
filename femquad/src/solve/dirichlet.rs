//! Dirichlet conditions: fix some dofs, solve for the others.

use super::cg::{CgStats, cg};
use super::newton::{NewtonOptions, NewtonStats, newton_krylov};
use crate::error::{check_finite, check_len};
use crate::mesh::Mesh;
use crate::physics::Pointwise;
use crate::residual::Residual;
use crate::space::FunctionSpace;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// A residual `F` with Dirichlet conditions: the dofs in a set `D` are fixed
/// to given values `g`, and the problem is posed on the free dofs `f`:
///
/// ```text
/// find u_f such that  F(u)_f = 0,  where  u = g on D,  u = u_f on f.
/// ```
///
/// Write `u = u_D + E_f u_f`, with `u_D` the vector holding `g` on `D` and
/// 0 elsewhere, and `E_f` the extension of free values by zero. The
/// *free residual* is `F_f(u_f) = E_fᵀ F(u_D + E_f u_f)`
/// ([`DirichletProblem::free_residual`]); the fixed rows of `F` are simply
/// not part of the system (the usual "eliminate the Dirichlet rows" of a
/// finite-element code, done without a matrix).
///
/// * A **linear** physics (`F` affine in `u`: `F(u) = A u − b`) gives the
///   linear system `A_ff u_f = −F_f(0)`, solved matrix-free by conjugate
///   gradients in [`DirichletProblem::solve_linear`] with the action
///   `A_ff v = (F_f(s v) − F_f(0))/s`, exact for every `s ≠ 0`
///   (see there for the choice of `s`). `A_ff` is symmetric positive
///   definite for the Laplacian and Lamé operators when `D` contains the
///   whole boundary (or enough of it).
/// * A **nonlinear** physics is solved by Newton–Krylov on `F_f`
///   ([`DirichletProblem::solve_nonlinear`]).
///
/// Vectors given to and returned by the solvers are `f64`; the residual is
/// evaluated in the precision `R` of the wrapped [`Residual`] (converting on
/// the way), on its backend (native or OpenCL).
pub struct DirichletProblem<R: Real> {
    residual: Residual<R>,
    fixed: Vec<u32>,
    free: Vec<u32>,
    /// `u_D`: the fixed values on fixed dofs, 0 on free dofs.
    base: Vec<f64>,
    u_full: Vec<R>,
    r_full: Vec<R>,
    constants: Vec<R>,
    evaluations: usize,
}

impl<R: Real> DirichletProblem<R> {
    /// Fixes the dofs `fixed_dofs` (any order; repetitions allowed) of the
    /// residual's space to the values `values[dof]`; `values` is a full
    /// vector (`n_dofs` entries) whose other entries are ignored.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `values` has the wrong length or a dof
    /// is out of range; [`Error::NonFinite`] if a fixed value is not finite.
    pub fn new(residual: Residual<R>, fixed_dofs: &[u32], values: &[f64]) -> Result<Self> {
        let n = residual.space().n_dofs();
        check_len("values", values, n)?;
        let mut is_fixed = vec![false; n];
        for &d in fixed_dofs {
            let slot = is_fixed.get_mut(d as usize).ok_or_else(|| {
                Error::arg("fixed_dofs", format!("dof {d} is out of range ({n} dofs)"))
            })?;
            *slot = true;
        }
        let mut base = vec![0.0; n];
        let (mut fixed, mut free) = (Vec::new(), Vec::new());
        for (d, &f) in is_fixed.iter().enumerate() {
            if f {
                base[d] = values[d];
                fixed.push(d as u32);
            } else {
                free.push(d as u32);
            }
        }
        check_finite("values (fixed entries)", &base)?;
        Ok(DirichletProblem {
            residual,
            fixed,
            free,
            base,
            u_full: vec![R::ZERO; n],
            r_full: vec![R::ZERO; n],
            constants: Vec::new(),
            evaluations: 0,
        })
    }

    /// Fixes every dof of the boundary nodes ([`FunctionSpace::boundary_dofs`])
    /// to the nodal interpolant of `g`: `g(x, out)` receives a node's
    /// coordinates and writes its `N_comp` values.
    ///
    /// # Errors
    /// Those of [`FunctionSpace::boundary_dofs`] and
    /// [`FunctionSpace::interpolate`] (e.g. `mesh` is not the residual's mesh).
    pub fn on_boundary(
        residual: Residual<R>,
        mesh: &Mesh,
        g: impl Fn(&[f64], &mut [f64]) + Sync,
    ) -> Result<Self> {
        let dofs = residual.space().boundary_dofs(mesh)?;
        let values = residual.space().interpolate(mesh, g)?;
        Self::new(residual, &dofs, &values)
    }

    /// The wrapped residual.
    pub fn residual(&self) -> &Residual<R> {
        &self.residual
    }

    /// The wrapped residual, mutable (e.g. to set an auxiliary field).
    pub fn residual_mut(&mut self) -> &mut Residual<R> {
        &mut self.residual
    }

    /// The solution space.
    pub fn space(&self) -> &FunctionSpace {
        self.residual.space()
    }

    /// Number of free dofs (unknowns).
    pub fn n_free(&self) -> usize {
        self.free.len()
    }

    /// The free dofs, increasing.
    pub fn free_dofs(&self) -> &[u32] {
        &self.free
    }

    /// The fixed dofs, increasing.
    pub fn fixed_dofs(&self) -> &[u32] {
        &self.fixed
    }

    /// `u_D`: the fixed values on fixed dofs and 0 on free dofs (`n_dofs` entries).
    pub fn fixed_values(&self) -> &[f64] {
        &self.base
    }

    /// Residual evaluations performed so far.
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// The full vector `u = u_D + E_f u_f` (`n_dofs` entries).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `u_free` does not have `n_free` entries.
    pub fn expand(&self, u_free: &[f64]) -> Result<Vec<f64>> {
        check_len("u_free", u_free, self.free.len())?;
        let mut u = self.base.clone();
        for (&d, &v) in self.free.iter().zip(u_free) {
            u[d as usize] = v;
        }
        Ok(u)
    }

    /// The free entries `E_fᵀ u` of a full vector `u`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `u` does not have `n_dofs` entries.
    pub fn restrict(&self, u: &[f64]) -> Result<Vec<f64>> {
        check_len("u", u, self.base.len())?;
        Ok(self.free.iter().map(|&d| u[d as usize]).collect())
    }

    /// `r_f = F_f(u_f) = E_fᵀ F(u_D + E_f u_f)` with `constants` (converted
    /// to `R`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for wrong lengths; the errors of
    /// [`Residual::evaluate`].
    pub fn free_residual<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        constants: &[f64],
        u_free: &[f64],
        r_free: &mut [f64],
    ) -> Result<()> {
        check_len("u_free", u_free, self.free.len())?;
        check_len("r_free", r_free, self.free.len())?;
        self.set_constants(constants);
        self.eval(physics, u_free, 1.0, r_free)
    }

    fn set_constants(&mut self, constants: &[f64]) {
        self.constants.clear();
        self.constants
            .extend(constants.iter().map(|&c| R::from_f64(c)));
    }

    /// `r_f = E_fᵀ F(u_D + s E_f u_f)` with the constants already set.
    fn eval<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u_free: &[f64],
        s: f64,
        r_free: &mut [f64],
    ) -> Result<()> {
        for (u, &b) in self.u_full.iter_mut().zip(&self.base) {
            *u = R::from_f64(b);
        }
        for (&d, &v) in self.free.iter().zip(u_free) {
            self.u_full[d as usize] = R::from_f64(s * v);
        }
        self.residual
            .evaluate(physics, &self.u_full, &self.constants, &mut self.r_full)?;
        self.evaluations += 1;
        for (r, &d) in r_free.iter_mut().zip(&self.free) {
            *r = self.r_full[d as usize].to_f64();
        }
        Ok(())
    }

    /// Solves a **linear** problem (`physics` affine in `u` and `∇u`, with
    /// a symmetric positive definite `A_ff`) by conjugate gradients to the
    /// relative residual `tol` ([`cg`]), and returns the full solution
    /// (`n_dofs` entries) with the CG statistics.
    ///
    /// The right-hand side is `b_f = −F_f(0)` (one evaluation) and the
    /// operator `A_ff v = (F_f(s v) − F_f(0))/s`, one evaluation per CG
    /// iteration. For affine `F` this is exact for any `s ≠ 0`; in floating
    /// point the difference cancels `F_f(0)`, whose rounding error
    /// (`ε‖F_f(0)‖`) would dominate `‖A_ff v‖` once CG's directions are
    /// small. So `s` is the power of two that makes `‖s v‖_∞ ≈ 2¹⁰·max(1,
    /// ‖u_D‖_∞)`: then `s A_ff v` dominates `F_f(0)` and the product keeps
    /// the relative accuracy of a plain matrix-vector product (a power of
    /// two scales without rounding).
    ///
    /// # Errors
    /// Those of [`cg`] (notably [`Error::NoConvergence`], and
    /// [`Error::InvalidArgument`] if the operator is not positive definite)
    /// and of [`Residual::evaluate`].
    pub fn solve_linear<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        constants: &[f64],
        tol: f64,
        max_iter: usize,
    ) -> Result<(Vec<f64>, CgStats)> {
        self.set_constants(constants);
        let n = self.free.len();
        let zero = vec![0.0; n];
        let mut f0 = vec![0.0; n];
        self.eval(physics, &zero, 1.0, &mut f0)?;
        let b: Vec<f64> = f0.iter().map(|v| -v).collect();
        let scale = 1024.0 * self.base.norm_inf()?.max(1.0);
        let mut x = vec![0.0; n];
        let stats = {
            let mut apply = |v: &Vec<f64>, av: &mut Vec<f64>| -> Result<()> {
                let vn = v.norm_inf()?;
                if vn == 0.0 {
                    return av.fill(0.0);
                }
                let s = (scale / vn).log2().round().exp2();
                self.eval(physics, v, s, av)?;
                for (a, f) in av.iter_mut().zip(&f0) {
                    *a = (*a - f) / s;
                }
                Ok(())
            };
            cg(&mut apply, None, &b, &mut x, tol, max_iter)?
        };
        Ok((self.expand(&x)?, stats))
    }

    /// Solves a (possibly) **nonlinear** problem `F_f(u_f) = 0` by
    /// [`newton_krylov`] from the initial free values `u0_free` (`None`: zero,
    /// i.e. `u = u_D`) and returns the full solution with Newton's
    /// statistics. [`NewtonOptions::residual_epsilon`] is set to the
    /// machine epsilon of `R`.
    ///
    /// # Errors
    /// Those of [`newton_krylov`] and [`Residual::evaluate`];
    /// [`Error::InvalidArgument`] if `u0_free` has the wrong length.
    pub fn solve_nonlinear<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        constants: &[f64],
        u0_free: Option<&[f64]>,
        opts: &NewtonOptions,
    ) -> Result<(Vec<f64>, NewtonStats)> {
        self.set_constants(constants);
        let mut u = match u0_free {
            Some(u0) => {
                check_len("u0_free", u0, self.free.len())?;
                u0.to_vec()
            }
            None => vec![0.0; self.free.len()],
        };
        let opts = NewtonOptions {
            residual_epsilon: opts.residual_epsilon.max(R::EPSILON.to_f64()),
            ..*opts
        };
        let stats = newton_krylov(
            |v: &Vec<f64>, r: &mut Vec<f64>| self.eval(physics, v, 1.0, r),
            None,
            &mut u,
            &opts,
        )?;
        Ok((self.expand(&u)?, stats))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aux_space::AuxSpace;
    use crate::backend::Backend;
    use crate::element::Element;
    use crate::mesh::generate::{MeshOptions, unit_square};
    use crate::physics::builtin::{Laplacian, NonlinearDiffusion, Poisson};
    use crate::quadrature::Quadrature;

    fn setup(n: usize, order: usize) -> (Mesh, Residual<f64>) {
        let mesh = unit_square(
            n,
            &MeshOptions {
                jitter: 0.1,
                shuffle: true,
                seed: 3,
            },
        )
        .unwrap();
        let space = FunctionSpace::new(&mesh, Element::lagrange(2, order).unwrap(), 1).unwrap();
        let q = Quadrature::simplex(2, 2 * order).unwrap();
        let r = Residual::new(&mesh, space, q, AuxSpace::None, &Backend::native()).unwrap();
        (mesh, r)
    }

    #[test]
    fn reproduces_linear_and_quadratic_harmonic_functions() {
        // u = 1 + 2x − y is harmonic and in P1: P1 reproduces it exactly;
        // u = x² − y² is harmonic and in P2.
        let g1 = |x: &[f64], o: &mut [f64]| o[0] = 1.0 + 2.0 * x[0] - x[1];
        let g2 = |x: &[f64], o: &mut [f64]| o[0] = x[0] * x[0] - x[1] * x[1];
        for (order, g) in [(1, &g1 as &(dyn Fn(&[f64], &mut [f64]) + Sync)), (2, &g2)] {
            let (mesh, r) = setup(6, order);
            let mut p = DirichletProblem::on_boundary(r, &mesh, g).unwrap();
            assert!(p.n_free() > 0 && !p.fixed_dofs().is_empty());
            let (u, stats) = p.solve_linear(&Laplacian, &[], 1e-13, 500).unwrap();
            let exact = p.space().interpolate(&mesh, g).unwrap();
            let err = u
                .iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-11, "P{order}: max error {err}, {stats:?}");
            // one evaluation for F_f(0), one per iteration (A·0 costs none)
            assert_eq!(p.evaluations(), stats.iterations + 1);
        }
    }

    #[test]
    fn free_residual_vanishes_at_the_solution_and_expand_restrict_invert() {
        let (mesh, r) = setup(5, 2);
        let mut p = DirichletProblem::on_boundary(r, &mesh, |x, o| o[0] = x[0]).unwrap();
        let (u, _) = p.solve_linear(&Poisson, &[3.0], 1e-12, 500).unwrap();
        let uf = p.restrict(&u).unwrap();
        assert_eq!(p.expand(&uf).unwrap(), u);
        let mut rf = vec![0.0; p.n_free()];
        p.free_residual(&Poisson, &[3.0], &uf, &mut rf).unwrap();
        let rn = rf.norm2().unwrap();
        let mut r0 = vec![0.0; p.n_free()];
        p.free_residual(&Poisson, &[3.0], &vec![0.0; p.n_free()], &mut r0)
            .unwrap();
        assert!(rn < 1e-10 * r0.norm2().unwrap(), "{rn}");
        // fixed values are kept
        for &d in p.fixed_dofs() {
            assert_eq!(u[d as usize], p.fixed_values()[d as usize]);
        }
    }

    #[test]
    fn nonlinear_solve_matches_the_exact_transform() {
        // −∇·((1+u²)∇u) = ΔK(u) with the Kirchhoff transform K(u) = u + u³/3,
        // so u = K⁻¹(1 + x) solves the equation exactly (K(u) is harmonic).
        // It is not a polynomial: P2 approximates it; Newton must converge
        // and the nodal values must be close.
        let (mesh, r) = setup(8, 2);
        let k_inv = |k: f64| {
            // solve u + u³/3 = k by Newton
            let mut u = k;
            for _ in 0..50 {
                u -= (u + u * u * u / 3.0 - k) / (1.0 + u * u);
            }
            u
        };
        let g = move |x: &[f64], o: &mut [f64]| o[0] = k_inv(1.0 + x[0]);
        let mut p = DirichletProblem::on_boundary(r, &mesh, g).unwrap();
        let (u, stats) = p
            .solve_nonlinear(&NonlinearDiffusion, &[], None, &NewtonOptions::default())
            .unwrap();
        assert!(stats.iterations <= 8, "{stats:?}");
        let exact = p.space().interpolate(&mesh, g).unwrap();
        let err = u
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(err < 1e-3, "max nodal error {err}");
    }

    #[test]
    fn bad_input_is_an_error() {
        let (_, r) = setup(2, 1);
        let n = r.space().n_dofs();
        let e = DirichletProblem::new(r, &[n as u32], &vec![0.0; n])
            .err()
            .unwrap();
        assert!(e.to_string().contains("out of range"), "{e}");
        let (_, r) = setup(2, 1);
        let mut v = vec![0.0; n];
        v[0] = f64::NAN;
        assert!(DirichletProblem::new(r, &[0], &v).is_err());
        let (_, r) = setup(2, 1);
        let mut p = DirichletProblem::new(r, &[0], &vec![0.0; n]).unwrap();
        assert!(p.expand(&[1.0]).is_err());
        assert!(
            p.free_residual(&Laplacian, &[], &[0.0], &mut [0.0])
                .is_err()
        );
    }
}
