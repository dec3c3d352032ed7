//! The Jacobian of the residual, from the physics' automatic derivatives:
//! its action `J(u)·v` (matrix-free), its point-block diagonal, and the
//! assembled matrix.
//!
//! With `(δf0, δf1)` the tangent of the pointwise physics
//! ([`Pointwise::eval_tangent_f64`]) and `g0…g3` its pointwise Jacobians
//! ([`Pointwise::eval_jacobian_f64`], PETSc's meaning):
//!
//! ```text
//! (J(u)·v)_i = Σ_cells ∫ φ_i · δf0 + ∇φ_i : δf1,   (δu, δ∇u) = (v, ∇v) at each point,
//! J_ij       = Σ_cells ∫ φ_i g0 φ_j + φ_i g1·∇φ_j + ∇φ_i·g2 φ_j + ∇φ_i·g3·∇φ_j.
//! ```
//!
//! The action runs where the residual runs: on the device it is the fused
//! residual kernel with tangents at the quadrature points (gather `u` and
//! `v`, scatter `J·v`); the point-block diagonal is a device kernel too.
//! The assembled matrix ([`CsrMatrix`]) is built on the host in `f64`, for
//! direct solves (multigrid's coarse level), inspection and export.

use std::sync::Arc;

use super::{Imp, Residual, misplaced};
use crate::discretization::CellInputs;
use crate::native::{Execution, tangent_element_vectors};
use crate::physics::{PointArgs, Pointwise};
use crate::sparse::{CsrMatrix, SparsityPattern, element_matrices};
use crate::vector::{Vector, VectorOps};
use crate::{Error, Real, Result};

impl<R: Real> Residual<R> {
    /// `out = J(u)·v`, the Jacobian of `F` at `u` applied to `v`, matrix-free
    /// from the physics' tangent (exact, no difference step). `u`, `v` and
    /// `out` hold the space's `n_dofs` dofs and live where the residual does.
    /// On a device this is one fused launch (or two with
    /// [`crate::opencl::Assembly::Deterministic`]) and moves no array.
    ///
    /// # Errors
    /// As [`Residual::evaluate`], naming `u`, `v` or `out`; a physics
    /// without derivatives ([`crate::physics::PointwiseError::NoDerivatives`]).
    ///
    /// # Example
    /// For a physics linear in `u`, `J·v = F(v) − F(0)`:
    /// ```
    /// use femquad::physics::builtin::Laplacian;
    /// use femquad::prelude::*;
    /// # fn main() -> femquad::Result<()> {
    /// let mesh = unit_square(4, &MeshOptions::default())?;
    /// let element = Element::lagrange(2, 1)?;
    /// let space = FunctionSpace::new(&mesh, element, 1)?;
    /// let quadrature = Quadrature::default_for(&element)?;
    /// let mut residual =
    ///     Residual::<f64>::new(&mesh, space, quadrature, AuxSpace::None, &Backend::native())?;
    /// let n = residual.space().n_dofs();
    /// let u = residual.vector_from(&vec![0.3; n])?;
    /// let v = residual.vector_from(&(0..n).map(|i| (i as f64).sin()).collect::<Vec<_>>())?;
    /// let mut jv = residual.vector()?;
    /// residual.jacobian_action(&Laplacian, &u, &v, &[], &mut jv)?;
    /// let mut fv = residual.vector()?;
    /// residual.evaluate(&Laplacian, &v, &[], &mut fv)?;
    /// let (jv, fv) = (jv.to_host()?, fv.to_host()?);
    /// assert!(jv.iter().zip(&fv).all(|(a, b)| (a - b).abs() < 1e-12));
    /// # Ok(())
    /// # }
    /// ```
    pub fn jacobian_action<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &Vector<R>,
        v: &Vector<R>,
        constants: &[R],
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.check_vectors(&[("u", u), ("v", v), ("out", &*out)])?;
        self.check_call(physics, constants)?;
        match (&mut self.imp, u, v, out) {
            (Imp::Native(nat), Vector::Host(u), Vector::Host(v), Vector::Host(out)) => {
                self.space.gather(u, &mut nat.u_cells)?;
                nat.v_cells.resize(nat.u_cells.len(), R::ZERO);
                self.space.gather(v, &mut nat.v_cells)?;
                let inputs = CellInputs {
                    u: &nat.u_cells,
                    aux: &self.aux_cells,
                    constants,
                };
                tangent_element_vectors(
                    &nat.disc,
                    physics,
                    &inputs,
                    &nat.v_cells,
                    &mut nat.element_vectors,
                    nat.execution,
                )?;
                self.space.assemble(&nat.element_vectors, out)
            }
            (Imp::OpenCl(dev), Vector::Device(u), Vector::Device(v), Vector::Device(out)) => dev
                .op
                .jacobian_action(physics, u, v, constants, out, dev.assembly, None),
            _ => Err(misplaced()),
        }
    }

    /// Entries of the point-block diagonal of the Jacobian:
    /// `n_nodes·N_comp²` ([`Residual::jacobian_diagonal`]).
    pub fn jacobian_diagonal_len(&self) -> usize {
        self.space.n_nodes() * self.space.n_comp() * self.space.n_comp()
    }

    /// The point-block diagonal of `J(u)`: for every node `n` the
    /// `N_comp × N_comp` block `out[(n·N_comp + fc)·N_comp + gc] =
    /// J[n·N_comp + fc][n·N_comp + gc]` (for a scalar field, the diagonal),
    /// without assembling the matrix: `n_nodes·N_comp²` entries
    /// ([`Residual::jacobian_diagonal_len`]), where the residual lives. On a
    /// device, one launch; natively, from the element matrices.
    ///
    /// # Errors
    /// As [`Residual::evaluate`], naming `u` or `out`; a physics without
    /// derivatives.
    pub fn jacobian_diagonal<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &Vector<R>,
        constants: &[R],
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.check_vectors(&[("u", u)])?;
        let len = self.jacobian_diagonal_len();
        if out.len() != len {
            return Err(Error::arg(
                "out",
                format!(
                    "expected {len} entries (n_nodes·N_comp², the point-block diagonal), got {}",
                    out.len()
                ),
            ));
        }
        if out.location() != self.location() {
            return Err(Error::arg(
                "out",
                format!(
                    "lives on {} but the residual evaluates on {}",
                    out.location(),
                    self.location()
                ),
            ));
        }
        self.check_call(physics, constants)?;
        match (&mut self.imp, u, out) {
            (Imp::Native(_), Vector::Host(u), Vector::Host(out)) => {
                let matrices = self.element_matrices(physics, u, constants)?;
                let blocks = point_blocks(&self.space, &matrices);
                for (o, b) in out.iter_mut().zip(blocks) {
                    *o = R::from_f64(b);
                }
                Ok(())
            }
            (Imp::OpenCl(dev), Vector::Device(u), Vector::Device(out)) => {
                dev.op.jacobian_diagonal(physics, u, constants, out)
            }
            _ => Err(misplaced()),
        }
    }

    /// The Jacobian `J(u)` assembled into a sparse matrix (`f64`, on the
    /// host; rows and columns the space's dofs). The sparsity is computed on
    /// the first call and shared by later ones (re-filled per Newton step).
    /// A device-resident `u` is downloaded once.
    ///
    /// # Errors
    /// As [`Residual::evaluate`], naming `u`; a physics without derivatives.
    pub fn assemble_jacobian<P: Pointwise + ?Sized>(
        &mut self,
        physics: &P,
        u: &Vector<R>,
        constants: &[R],
    ) -> Result<CsrMatrix> {
        self.check_vectors(&[("u", u)])?;
        self.check_call(physics, constants)?;
        let u = u.to_host()?;
        let matrices = self.element_matrices(physics, &u, constants)?;
        let pattern = match &self.pattern {
            Some(p) => Arc::clone(p),
            None => {
                let p = SparsityPattern::of_space(&self.space)?;
                self.pattern = Some(Arc::clone(&p));
                p
            }
        };
        CsrMatrix::assemble(&pattern, &matrices)
    }

    /// Element matrices `[cell][i][j]` of `J(u)` in `f64` for the global
    /// host values `u`, from the physics' pointwise Jacobians.
    fn element_matrices<P: Pointwise + ?Sized>(
        &self,
        physics: &P,
        u: &[R],
        constants: &[R],
    ) -> Result<Vec<f64>> {
        let disc = self.discretization().to_f64();
        let mut u_cells = vec![R::ZERO; self.space.n_cell_dofs()];
        self.space.gather(u, &mut u_cells)?;
        let widen = |v: &[R]| v.iter().map(|x| x.to_f64()).collect::<Vec<f64>>();
        let (u_cells, aux, constants) = (widen(&u_cells), widen(&self.aux_cells), widen(constants));
        let inputs = CellInputs {
            u: &u_cells,
            aux: &aux,
            constants: &constants,
        };
        let n_bt = disc.n_bt();
        let mut out = vec![0.0; disc.n_cells() * n_bt * n_bt];
        element_matrices(
            &disc,
            &inputs,
            |dim: usize,
             args: &PointArgs<'_, f64>,
             g0: &mut [f64],
             g1: &mut [f64],
             g2: &mut [f64],
             g3: &mut [f64]| {
                Ok(physics.eval_jacobian_f64(dim, args, g0, g1, g2, g3)?)
            },
            &mut out,
            Execution::Parallel,
        )?;
        Ok(out)
    }
}

/// The point-block diagonal `[node][fc][gc]` summed from element matrices
/// `[cell][i][j]`, in increasing cell order.
fn point_blocks(space: &crate::space::FunctionSpace, matrices: &[f64]) -> Vec<f64> {
    let (n_b, nc) = (space.n_basis(), space.n_comp());
    let n_bt = n_b * nc;
    let mut out = vec![0.0; space.n_nodes() * nc * nc];
    for (c, ke) in matrices.chunks(n_bt * n_bt).enumerate() {
        for (a, &node) in space.cell_nodes(c).iter().enumerate() {
            for fc in 0..nc {
                for gc in 0..nc {
                    out[(node as usize * nc + fc) * nc + gc] +=
                        ke[(a * nc + fc) * n_bt + a * nc + gc];
                }
            }
        }
    }
    out
}
