//! [`Preconditioner`]: how a [`super::DirichletProblem`] preconditions its
//! linear systems, and the state behind it.

use std::time::Instant;

use super::constraints::Constraints;
use crate::backend::{Matrix, Vector};
use crate::linalg::FixedDofs;
use crate::multigrid::{
    MeshHierarchy, MultigridOptions, OnFixed, OperatorLevels, PointBlockJacobi,
};
use crate::operator::Operator;
use crate::sparse::Factorization;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The preconditioner of the Krylov solves of a
/// [`DirichletProblem`](super::DirichletProblem) (CG for
/// [`solve_linear`](super::DirichletProblem::solve_linear), GMRES in every
/// Newton step of [`solve_nonlinear`](super::DirichletProblem::solve_nonlinear)),
/// always for the Jacobian at the current state (rebuilt every Newton step).
#[derive(Clone, Debug, PartialEq)]
pub enum Preconditioner {
    /// Geometric multigrid, one V-cycle per application
    /// ([`crate::multigrid`]): Chebyshev smoothing with point-block Jacobi on
    /// every level of the problem's [`MeshHierarchy`], the coarsest level
    /// assembled and factored (Cholesky for `solve_linear` unless the
    /// options say LU; LU for the Jacobians of `solve_nonlinear`). Iteration
    /// counts stay bounded under refinement. The default.
    Multigrid(MultigridOptions),
    /// Point-block Jacobi: `D⁻¹` with `D` the `N_comp × N_comp` diagonal
    /// blocks of the Jacobian ([`PointBlockJacobi`]; for a scalar field the
    /// diagonal). Cheap to set up and apply; iterations grow like `1/h`.
    Jacobi,
    /// No preconditioner.
    None,
}

impl Default for Preconditioner {
    /// Multigrid with the default options.
    fn default() -> Self {
        Preconditioner::Multigrid(MultigridOptions::default())
    }
}

impl Preconditioner {
    /// A short name: `multigrid`, `jacobi` or `none`.
    pub fn name(&self) -> &'static str {
        match self {
            Preconditioner::Multigrid(_) => "multigrid",
            Preconditioner::Jacobi => "jacobi",
            Preconditioner::None => "none",
        }
    }
}

/// What a problem's preconditioner holds between applications.
#[derive(Default)]
pub(crate) struct PreconditionerState<R: Real> {
    /// The multigrid levels (built on first use, kept across solves).
    levels: Option<OperatorLevels<R>>,
    /// The auxiliary field to give the levels when they are built.
    pending_aux: Option<Vec<R>>,
    /// Point-block Jacobi of the current linearization.
    jacobi: Option<PointBlockJacobi<R>>,
    /// Seconds of setups since the last [`PreconditionerState::reset_timer`].
    pub seconds: f64,
}

impl<R: Real> PreconditionerState<R> {
    pub(crate) fn reset_timer(&mut self) {
        self.seconds = 0.0;
    }

    /// The multigrid levels, if built.
    pub(crate) fn levels(&self) -> Option<&OperatorLevels<R>> {
        self.levels.as_ref()
    }

    /// Forgets everything built for another hierarchy or options.
    pub(crate) fn clear(&mut self) {
        self.levels = None;
        self.jacobi = None;
    }

    /// Builds the multigrid levels if `choice` is multigrid and they are
    /// missing.
    pub(crate) fn prepare(
        &mut self,
        choice: &Preconditioner,
        hierarchy: &MeshHierarchy,
        residual: &Operator<R>,
        fixed: &FixedDofs,
    ) -> Result<()> {
        match choice {
            Preconditioner::Multigrid(options) => {
                self.multigrid(options, hierarchy, residual, fixed)?;
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The multigrid levels, built with `options` if missing.
    fn multigrid(
        &mut self,
        options: &MultigridOptions,
        hierarchy: &MeshHierarchy,
        residual: &Operator<R>,
        fixed: &FixedDofs,
    ) -> Result<&mut OperatorLevels<R>> {
        let levels = match self.levels.take() {
            Some(levels) => levels,
            None => {
                let mut levels =
                    OperatorLevels::new(hierarchy, residual, &residual.backend(), fixed, *options)?;
                if let Some(aux) = &self.pending_aux {
                    levels.set_aux(residual, aux)?;
                }
                levels
            }
        };
        Ok(self.levels.insert(levels))
    }

    /// Remembers the auxiliary field for the coarse levels (and gives it
    /// to them if they exist).
    pub(crate) fn set_aux(&mut self, residual: &Operator<R>, aux: &[R]) -> Result<()> {
        if let Some(levels) = &mut self.levels {
            levels.set_aux(residual, aux)?;
        }
        self.pending_aux = Some(aux.to_vec());
        Ok(())
    }

    /// Gives the coarse levels, if built, the physics' new constants (they
    /// are built with the operator's current ones otherwise).
    pub(crate) fn set_constants(&mut self, constants: &[f64]) -> Result<()> {
        if let Some(levels) = &mut self.levels {
            levels.set_constants(constants)?;
        }
        Ok(())
    }

    /// Sets the preconditioner up for the Jacobian of `residual` at `u`,
    /// with the rows of the `constraints`' fixed dofs the identity's.
    pub(crate) fn setup(
        &mut self,
        choice: &Preconditioner,
        hierarchy: &MeshHierarchy,
        residual: &mut Operator<R>,
        constraints: &Constraints<R>,
        u: &Vector<R>,
        factorization: Factorization,
    ) -> Result<()> {
        let t0 = Instant::now();
        match choice {
            Preconditioner::None => {}
            Preconditioner::Jacobi => {
                let n = residual.jacobian_diagonal_len();
                let mut blocks = match u {
                    Vector::Host(_) => Vector::host_zeros(n),
                    Vector::Device(d) => Vector::device_zeros(d.device(), n)?,
                };
                residual.jacobian_diagonal(u, &mut blocks)?;
                let nc = residual.space().n_comp();
                let jacobi =
                    PointBlockJacobi::new(blocks, nc, constraints.set(), OnFixed::Identity)
                        .map_err(|e| match e {
                            Error::InvalidArgument {
                                name: "blocks",
                                reason,
                            } => Error::arg(
                                "physics",
                                format!(
                                    "point-block Jacobi for the Jacobian of `{}`: {reason}. Choose \
                             Preconditioner::None, or multigrid",
                                    residual.physics().info().name
                                ),
                            ),
                            other => other,
                        })?;
                self.jacobi = Some(jacobi);
            }
            Preconditioner::Multigrid(options) => {
                let levels = self.multigrid(options, hierarchy, residual, constraints.fixed())?;
                levels.multigrid_mut().set_factorization(factorization);
                levels.setup(residual, u)?;
            }
        }
        self.seconds += t0.elapsed().as_secs_f64();
        Ok(())
    }

    /// The finest multigrid level's assembled Jacobian at the state of the
    /// last setup, if the multigrid assembled it
    /// ([`OperatorLevels::finest_matrix`]).
    pub(crate) fn finest_matrix(&self) -> Option<&Matrix<R>> {
        self.levels.as_ref()?.finest_matrix()
    }

    /// `z = M⁻¹ r` for the last setup (at the state `u`).
    pub(crate) fn apply(
        &mut self,
        choice: &Preconditioner,
        residual: &mut Operator<R>,
        u: &Vector<R>,
        r: &Vector<R>,
        z: &mut Vector<R>,
    ) -> Result<()> {
        let missing = || Error::internal("the preconditioner was applied before its setup");
        match choice {
            Preconditioner::None => z.copy_from(r),
            Preconditioner::Jacobi => self.jacobi.as_ref().ok_or_else(missing)?.apply(r, z),
            Preconditioner::Multigrid(_) => self
                .levels
                .as_mut()
                .ok_or_else(missing)?
                .apply(residual, u, r, z),
        }
    }
}
