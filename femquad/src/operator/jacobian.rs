//! The Jacobian of the operator's residual, from the physics' automatic derivatives:
//! its action `J(u)·v` (matrix-free), its point-block diagonal, and the
//! assembled matrix.
//!
//! With `(δf0, δf1)` the tangent of the pointwise physics
//! ([`PointwiseEval::eval_tangent`]) and `g0…g3` its pointwise Jacobians
//! ([`PointwiseEval::eval_jacobian`], PETSc's meaning):
//!
//! ```text
//! (J(u)·v)_i = Σ_cells ∫ φ_i · δf0 + ∇φ_i : δf1,   (δu, δ∇u) = (v, ∇v) at each point,
//! J_ij       = Σ_cells ∫ φ_i g0 φ_j + φ_i g1·∇φ_j + ∇φ_i·g2 φ_j + ∇φ_i·g3·∇φ_j.
//! ```
//!
//! The action runs where the operator runs: on the device it is the fused
//! residual kernel with tangents at the quadrature points (gather `u` and
//! `v`, scatter `J·v`); the point-block diagonal is a device kernel too.
//! The assembled matrix comes in two forms: [`CsrMatrix`], built on the
//! host in `f64` from the physics' pointwise Jacobians in the operator's
//! precision, for direct solves (multigrid's coarsest level), inspection
//! and export; and [`Matrix`], assembled where the operator evaluates (on a
//! device from the element matrices of the physics' tangent), in `R`, the
//! assembled alternative to the matrix-free action (assembled multigrid
//! levels).

use std::sync::Arc;

use super::Operator;
use crate::backend::{Execution, Matrix, Vector, host_point_diagonal};
use crate::discretization::{CellInputs, CellTime};
use crate::physics::PointArgs;
use crate::sparse::{CsrMatrix, SparsityPattern, element_matrices};
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

impl<R: Real> Operator<R> {
    /// `out = J(u)·v`, the Jacobian of `F` at `u` applied to `v`, matrix-free
    /// from the physics' tangent (exact, no difference step). `u`, `v` and
    /// `out` hold the space's `n_dofs` dofs and live where the operator does.
    /// On a device this is one fused launch (or two with
    /// [`crate::backend::Assembly::Deterministic`]) and moves no array.
    ///
    /// # Errors
    /// As [`Operator::apply`], naming `u`, `v` or `out`; a physics
    /// without derivatives ([`crate::physics::PointwiseError::NoDerivatives`]).
    ///
    /// # Example
    /// For a physics linear in `u`, `J·v = F(v) − F(0)`:
    /// ```
    /// use femquad::physics::builtin::Laplacian;
    /// use femquad::prelude::*;
    /// # fn main() -> femquad::Result<()> {
    /// let mesh = unit_square(4, &MeshOptions::default())?;
    /// let space = FunctionSpace::new(mesh.into(), Element::lagrange(2, 1)?, 1)?;
    /// let mut op = Operator::<f64>::new(Form::new(space, Laplacian)?, &Backend::native())?;
    /// let n = op.space().n_dofs();
    /// let u = op.vector_from(&vec![0.3; n])?;
    /// let v = op.vector_from(&(0..n).map(|i| (i as f64).sin()).collect::<Vec<_>>())?;
    /// let mut jv = op.vector()?;
    /// op.jacobian_action(&u, &v, &mut jv)?;
    /// let mut fv = op.vector()?;
    /// op.apply(&v, &mut fv)?;
    /// let (jv, fv) = (jv.to_host()?, fv.to_host()?);
    /// assert!(jv.iter().zip(&fv).all(|(a, b)| (a - b).abs() < 1e-12));
    /// # Ok(())
    /// # }
    /// ```
    pub fn jacobian_action(
        &mut self,
        u: &Vector<R>,
        v: &Vector<R>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.check_vectors(&[("u", u), ("v", v), ("out", &*out)])?;
        self.check_time()?;
        self.integrator.jacobian_action(u, v, out)
    }

    /// Entries of the point-block diagonal of the Jacobian:
    /// `n_nodes·N_comp²` ([`Operator::jacobian_diagonal`]).
    pub fn jacobian_diagonal_len(&self) -> usize {
        self.form.space().n_nodes() * self.form.space().n_comp() * self.form.space().n_comp()
    }

    /// The point-block diagonal of `J(u)`: for every node `n` the
    /// `N_comp × N_comp` block `out[(n·N_comp + fc)·N_comp + gc] =
    /// J[n·N_comp + fc][n·N_comp + gc]` (for a scalar field, the diagonal),
    /// without assembling the matrix: `n_nodes·N_comp²` entries
    /// ([`Operator::jacobian_diagonal_len`]), where the operator lives. On a
    /// device one launch, natively the same computation
    /// ([`crate::native::diagonal_blocks`], through the integrator): each diagonal block of each
    /// element matrix, column by column, from the physics' tangent. Then
    /// `out` is checked for NaN and ±∞ (on a device one reduction and one
    /// scalar read).
    ///
    /// # Errors
    /// * As [`Operator::apply`] before the computation, naming `u` or
    ///   `out`; a physics without derivatives.
    /// * [`Error::NonFiniteResult`] naming the first node (and its dof) whose
    ///   diagonal block holds NaN or ±∞, and the block entry `[fc][gc]`,
    ///   when the physics' derivatives are not finite at `u` — as
    ///   [`Operator::assemble_jacobian`] reports them;
    ///   [`Error::NonFinite`] naming `u` and its index instead if `u` holds
    ///   NaN or ±∞.
    pub fn jacobian_diagonal(&mut self, u: &Vector<R>, out: &mut Vector<R>) -> Result<()> {
        self.jacobian_diagonal_unchecked(u, out)?;
        self.check_diagonal(u, out)
    }

    /// [`Operator::jacobian_diagonal`] without the scan of `out` for NaN
    /// and ±∞: on a device it only enqueues the launch and returns without
    /// waiting (see [`Operator::apply_unchecked`]); check with
    /// [`Operator::check_diagonal`].
    ///
    /// # Errors
    /// Those of [`Operator::jacobian_diagonal`] but the non-finite ones.
    pub fn jacobian_diagonal_unchecked(
        &mut self,
        u: &Vector<R>,
        out: &mut Vector<R>,
    ) -> Result<()> {
        self.check_vectors(&[("u", u)])?;
        self.check_time()?;
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
                    "lives on {} but the operator evaluates on {}",
                    out.location(),
                    self.location()
                ),
            ));
        }
        self.integrator.jacobian_diagonal(u, out)
    }

    /// The cell-local values (`[cell][b][k]`) of the global host values `u`.
    fn cell_values(&self, u: &[R]) -> Result<Vec<R>> {
        let mut u_cells = vec![R::ZERO; self.form.space().n_cell_dofs()];
        self.form.space().gather(u, &mut u_cells)?;
        Ok(u_cells)
    }

    /// The inputs of a host integration at the cell-local values `u_cells`:
    /// with the integrator's cell-local auxiliary field `aux`
    /// ([`crate::backend::Integrator::cell_aux`]), the form's constants and
    /// the bound time state with its `b` cell-local (`b_cells`, from
    /// [`Operator::cell_time_b`]).
    fn cell_inputs<'a>(
        &'a self,
        u_cells: &'a [R],
        aux: &'a [R],
        b_cells: &'a [R],
    ) -> CellInputs<'a, R> {
        CellInputs {
            u: u_cells,
            aux,
            constants: self.form.constants(),
            time: self.time.as_ref().map(|time| CellTime {
                t: R::from_f64(time.t),
                sigma: R::from_f64(time.sigma),
                b: b_cells,
            }),
        }
    }

    /// The bound time state's `b` cell-local on the host (empty without
    /// one).
    fn cell_time_b(&self) -> Result<Vec<R>> {
        match &self.time {
            Some(time) => self.cell_values(&time.b.to_host()?),
            None => Ok(Vec::new()),
        }
    }

    /// The point-block diagonal of `J(u)` ([`Operator::jacobian_diagonal`])
    /// computed on the host for the global values `u` and the cell-local
    /// auxiliary field `aux`, NaN and ±∞ kept.
    fn native_diagonal(&self, u: &[R], aux: &[R]) -> Result<Vec<R>> {
        let u_cells = self.cell_values(u)?;
        let b_cells = self.cell_time_b()?;
        let inputs = self.cell_inputs(&u_cells, aux, &b_cells);
        host_point_diagonal(
            self.form.space(),
            self.discretization(),
            self.physics(),
            &self.boundary,
            &inputs,
        )
    }

    /// The check [`Operator::jacobian_diagonal`] ends with, of a
    /// point-block diagonal `out` of `J(u)` (`N_comp²` entries per node, in
    /// this space's node-major numbering): `Ok` if every entry is finite.
    ///
    /// # Errors
    /// For the first NaN or ±∞ of `out`: [`Error::NonFinite`] naming `u`
    /// if `u` holds one, else [`Error::NonFiniteResult`] naming the node,
    /// its dof and the entry.
    pub fn check_diagonal(&self, u: &Vector<R>, out: &Vector<R>) -> Result<()> {
        let Some(i) = out.first_non_finite()? else {
            return Ok(());
        };
        crate::vector::check_finite("u", u)?;
        let nc = self.form.space().n_comp();
        let (node, fc, gc) = (i / (nc * nc), i / nc % nc, i % nc);
        Err(Error::NonFiniteResult {
            quantity: format!("entry [{fc}][{gc}] of the diagonal block of the Jacobian J(u)"),
            physics: self.physics().info().name,
            dof: node * nc + fc,
            node,
            component: fc,
            value: out.value_at(i)?.to_string(),
        })
    }

    /// The Jacobian `J(u)` assembled into a sparse matrix (`f64`, on the
    /// host; rows and columns the space's dofs) from the physics' pointwise
    /// Jacobians in the operator's precision `R`, integrated in `f64`
    /// ([`element_matrices`]). The sparsity is computed on
    /// the first call and shared by later ones (re-filled per Newton step).
    /// A device-resident `u` is downloaded once.
    ///
    /// # Errors
    /// * As [`Operator::apply`], naming `u` (and the index in `u` of a
    ///   NaN or ±∞); a physics without derivatives.
    /// * [`Error::NonFiniteResult`] when the physics' derivatives are not
    ///   finite at `u`, naming the first node (and its dof) whose diagonal
    ///   block is NaN or ±∞ — the error of [`Operator::jacobian_diagonal`].
    pub fn assemble_jacobian(&mut self, u: &Vector<R>) -> Result<CsrMatrix> {
        self.check_vectors(&[("u", u)])?;
        self.check_time()?;
        let aux = self.integrator.cell_aux()?;
        let u = u.to_host()?;
        crate::real::check_finite("u", &u)?;
        let matrices = match self.element_matrices(&u, &aux) {
            Ok(m) => m,
            Err(e) => {
                // a non-finite Jacobian: named as jacobian_diagonal names it
                let diagonal = Vector::Host(self.native_diagonal(&u, &aux)?);
                self.check_diagonal(&Vector::Host(u), &diagonal)?;
                return Err(e);
            }
        };
        let pattern = self.pattern()?;
        CsrMatrix::assemble(&pattern, &matrices)
    }

    /// The sparsity pattern of the space's matrices, computed on first use
    /// and shared by every matrix assembled after.
    fn pattern(&mut self) -> Result<Arc<SparsityPattern>> {
        match &self.pattern {
            Some(p) => Ok(Arc::clone(p)),
            None => {
                let p = SparsityPattern::of_space(self.form.space())?;
                self.pattern = Some(Arc::clone(&p));
                Ok(p)
            }
        }
    }

    /// The Jacobian `J(u)` assembled where the operator evaluates, as a
    /// [`Matrix`] in the operator's precision `R`: the assembled
    /// alternative to the matrix-free [`Operator::jacobian_action`]
    /// (`A·x` is one SpMV, [`Matrix::apply`]).
    ///
    /// * On a device, assembled there: each cell's element matrix
    ///   `K_c[i][j] = ∂E_c[i]/∂u_c[j]` computed from the physics' tangent
    ///   (column by column) and summed into the CSR values through a map
    ///   built once from the sparsity pattern, atomically or
    ///   deterministically as the operator's [`Operator::set_assembly`] says
    ///   ([`crate::opencl::matrix`]), then each boundary facet's element
    ///   matrix `K_F[i][j] = ∂E_F[i]/∂u_c[j]` (the boundary tangent, with
    ///   `σ·∂f0/∂u_t` at a bound time state) at its cell's positions; `u`
    ///   is not downloaded.
    /// * Natively, the values of [`Operator::assemble_jacobian`] rounded to `R`.
    ///
    /// The pattern ([`crate::sparse::SparsityPattern::of_space`]) is the one
    /// [`Operator::assemble_jacobian`] uses, computed once per operator;
    /// [`Operator::reassemble_matrix`] refills the values at a new state.
    ///
    /// # Errors
    /// Those of [`Operator::reassemble_matrix`]; device memory and kernel
    /// builds.
    pub fn assemble_matrix(&mut self, u: &Vector<R>) -> Result<Matrix<R>> {
        self.check_vectors(&[("u", u)])?;
        let pattern = self.pattern()?;
        let mut matrix = self.integrator.new_matrix(&pattern)?;
        self.reassemble_matrix(u, &mut matrix)?;
        Ok(matrix)
    }

    /// Refills the values of `matrix` (from [`Operator::assemble_matrix`]
    /// on this operator) with `J(u)`; its pattern and, on a device, its
    /// position map are reused.
    ///
    /// # Errors
    /// * As [`Operator::apply`], naming `u`; a physics without derivatives;
    ///   `aux` if the physics reads an auxiliary field that was never set.
    /// * [`Error::InvalidArgument`] naming `matrix` if it was not assembled
    ///   on this operator's space or lives elsewhere than the operator.
    /// * [`Error::NonFiniteResult`] naming the first row (dof) whose entry
    ///   is NaN or ±∞, when the physics' derivatives are not finite at `u`
    ///   (natively, the error of [`Operator::assemble_jacobian`]);
    ///   [`Error::NonFinite`] naming `u` instead if `u` holds NaN or ±∞.
    pub fn reassemble_matrix(&mut self, u: &Vector<R>, matrix: &mut Matrix<R>) -> Result<()> {
        self.check_vectors(&[("u", u)])?;
        self.check_time()?;
        let pattern = self.pattern()?;
        if !Arc::ptr_eq(matrix.pattern(), &pattern) && !matrix.pattern().same_structure(&pattern) {
            return Err(Error::arg(
                "matrix",
                format!(
                    "its pattern ({} rows, {} entries) is not this operator's ({} rows, {} \
                     entries): assemble it with this operator's Operator::assemble_matrix",
                    matrix.n_rows(),
                    matrix.pattern().nnz(),
                    pattern.n_rows(),
                    pattern.nnz()
                ),
            ));
        }
        if let Some(host) = matrix.host_mut() {
            let a = self.assemble_jacobian(u)?;
            return host.set_values(&a);
        }
        self.integrator.assemble_matrix(u, matrix)?;
        let Some(k) = matrix.first_non_finite()? else {
            return Ok(());
        };
        crate::vector::check_finite("u", u)?;
        let row = pattern.row_ptr().partition_point(|&start| start <= k) - 1;
        let col = pattern.col_idx()[k] as usize;
        let nc = self.form.space().n_comp();
        Err(Error::NonFiniteResult {
            quantity: format!("entry ({row}, {col}) of the assembled Jacobian J(u)"),
            physics: self.physics().info().name,
            dof: row,
            node: row / nc,
            component: row % nc,
            value: matrix.value_at(k)?.to_string(),
        })
    }

    /// Element matrices `[cell][i][j]` of `J(u)` for the global host values
    /// `u` and the cell-local auxiliary field `aux`, from the physics'
    /// pointwise Jacobians in `R`, integrated in `f64`, with the boundary
    /// terms' facet matrices added to their cells'. With a time state
    /// bound and a physics reading `u_t`, `J = σ·∂F/∂u_t + ∂F/∂u`: the
    /// pointwise Jacobians `g0 + σ·g0_t`, `g1`, `g2 + σ·g2_t`, `g3`.
    fn element_matrices(&self, u: &[R], aux: &[R]) -> Result<Vec<f64>> {
        let physics = self.physics();
        let disc = self.discretization();
        let u_cells = self.cell_values(u)?;
        let b_cells = self.cell_time_b()?;
        let inputs = self.cell_inputs(&u_cells, aux, &b_cells);
        let sigma = match &self.time {
            Some(time) if physics.info().reads.u_t => Some(R::from_f64(time.sigma)),
            _ => None,
        };
        let n_bt = disc.n_bt();
        let mut out = vec![0.0; disc.n_cells() * n_bt * n_bt];
        element_matrices(
            disc,
            &inputs,
            |dim: usize,
             args: &PointArgs<'_, R>,
             g0: &mut [R],
             g1: &mut [R],
             g2: &mut [R],
             g3: &mut [R]| {
                physics.eval_jacobian(dim, args, g0, g1, g2, g3)?;
                if let Some(sigma) = sigma {
                    let (mut g0_t, mut g2_t) = (vec![R::ZERO; g0.len()], vec![R::ZERO; g2.len()]);
                    physics.eval_jacobian_u_t(dim, args, &mut g0_t, &mut g2_t)?;
                    for (g, gt) in g0.iter_mut().zip(&g0_t).chain(g2.iter_mut().zip(&g2_t)) {
                        *g += sigma * *gt;
                    }
                }
                Ok(())
            },
            &mut out,
            Execution::Parallel,
        )?;
        self.boundary
            .add_element_matrices(&u_cells, inputs.time.as_ref(), &mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
