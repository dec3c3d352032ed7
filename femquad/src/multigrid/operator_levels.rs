//! Multigrid for an operator: [`OperatorLevels`] (the operator of every
//! coarser level, the states there) and [`JacobianLevels`] (their
//! Jacobians as the [`LevelOperators`] of a [`Multigrid`]).

use super::hierarchy::MeshHierarchy;
use super::levels::LevelSpaces;
use super::operators::LevelOperators;
use super::representation::{LevelRepresentation, SmallLevels, time_representations};
use super::single::{SingleLevels, matrix_free_level_error};
use super::vcycle::{Multigrid, MultigridOptions};
use crate::aux_space::AuxSpace;
use crate::backend::{Backend, Matrix, Vector};
use crate::element::Element;
use crate::linalg::FixedDofs;
use crate::operator::Operator;
use crate::quadrature::Quadrature;
use crate::seam::FusedChebyshevStep;
use crate::sparse::CsrMatrix;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// The operators of every level for the Jacobian `J(u)` of an operator:
/// level `l` is the Jacobian of level `l`'s operator at the state `u_l`
/// (the finest state injected, [`Multigrid::inject`]) — its exact action
/// ([`Operator::jacobian_action`]: matrix-free, fused on the device), its
/// point-block diagonal ([`Operator::jacobian_diagonal`]: on the device,
/// not assembled) and, for the coarsest level, its assembled matrix
/// ([`Operator::assemble_jacobian`]). A level with an assembled [`Matrix`]
/// in `matrices` applies it instead (one SpMV) and takes its point-block
/// diagonal from it.
pub struct JacobianLevels<'a, R: Real> {
    /// The operators of the levels below the finest, coarsest first.
    pub coarse: &'a mut [Operator<R>],
    /// The states of the levels below the finest, coarsest first.
    pub states: &'a [Vector<R>],
    /// The finest level's operator.
    pub finest: &'a mut Operator<R>,
    /// The finest level's state.
    pub state: &'a Vector<R>,
    /// Per level, coarsest first (finest included): the assembled Jacobian
    /// at the level's state, where the level is assembled. Empty: every
    /// level matrix-free.
    pub matrices: &'a [Option<Matrix<R>>],
}

impl<R: Real> JacobianLevels<'_, R> {
    fn level(&mut self, level: usize) -> Result<(&mut Operator<R>, &Vector<R>)> {
        let below = self.coarse.len();
        if level < below {
            Ok((&mut self.coarse[level], &self.states[level]))
        } else if level == below {
            Ok((&mut *self.finest, self.state))
        } else {
            Err(Error::arg(
                "level",
                format!("{level} is beyond the finest level {below}"),
            ))
        }
    }
}

impl<R: Real> LevelOperators<R> for JacobianLevels<'_, R> {
    fn apply(&mut self, level: usize, x: &Vector<R>, y: &mut Vector<R>) -> Result<()> {
        if let Some(Some(matrix)) = self.matrices.get(level) {
            return matrix.apply(x, y);
        }
        let (op, state) = self.level(level)?;
        op.jacobian_action(state, x, y)
    }

    fn block_diagonal(&mut self, level: usize, out: &mut Vector<R>) -> Result<()> {
        if let Some(Some(matrix)) = self.matrices.get(level) {
            return matrix.point_block_diagonal(out);
        }
        let (op, state) = self.level(level)?;
        op.jacobian_diagonal(state, out)
    }

    /// An assembled level's step: one pass over its matrix
    /// ([`Matrix::chebyshev_step`]); a matrix-free level offers none.
    fn fused_chebyshev_step(
        &mut self,
        level: usize,
        step: FusedChebyshevStep<'_, Vector<R>>,
    ) -> Result<bool> {
        match self.matrices.get(level) {
            Some(Some(matrix)) => matrix.chebyshev_step(step).map(|()| true),
            _ => Ok(false),
        }
    }

    fn assemble(&mut self, level: usize) -> Result<CsrMatrix> {
        let (op, state) = self.level(level)?;
        op.assemble_jacobian(state)
    }
}

/// Geometric multigrid for the Jacobian of an operator on the finest mesh of
/// a [`MeshHierarchy`]: the [`LevelSpaces`], a [`Operator`] on every
/// coarser level (same backend and precision; P1 with the finest
/// quadrature when the field is P1, the default P1 quadrature below a P2
/// field), the states of those levels, and the [`Multigrid`] itself.
///
/// [`OperatorLevels::setup`] linearizes every level at a finest-level state
/// `u` (injected into the coarser levels) and sets the cycle up;
/// [`OperatorLevels::apply`] applies one V-cycle. The finest operator is
/// the caller's (passed to both), so a solver can use it for its own
/// operator between cycles.
pub struct OperatorLevels<R: Real> {
    spaces: LevelSpaces,
    coarse: Vec<Operator<R>>,
    states: Vec<Vector<R>>,
    /// The finest time state's `b` injected into the coarser levels
    /// (coarsest first), when the finest operator has one.
    time_b: Vec<Vector<R>>,
    multigrid: Multigrid<R>,
    /// Per level, coarsest first (finest included): the assembled Jacobian
    /// of a level with at most [`MultigridOptions::assembled_max_dofs`]
    /// dofs above the coarsest, assembled at the first setup and refilled
    /// at each later one (pattern kept).
    matrices: Vec<Option<Matrix<R>>>,
    /// With the cycle in `f32` ([`Multigrid::runs_in_single`]): per level,
    /// coarsest first, the `f32` copy of `matrices[l]` (sharing its
    /// pattern, and on a device its row pointers and column indices),
    /// refilled at every setup; empty otherwise.
    single_matrices: Vec<Option<Matrix<f32>>>,
    /// Per level, coarsest first: how it applies its operator, decided at
    /// the first setup (`None` for the coarsest and before).
    representations: Vec<Option<LevelRepresentation>>,
    /// Whether the coarse operators have their auxiliary fields.
    aux_set: bool,
}

impl<R: Real> OperatorLevels<R> {
    /// The levels of `finest` (an operator on `hierarchy.finest()`, on
    /// `backend`) with the finest fixed dofs `fixed`.
    ///
    /// # Errors
    /// Those of [`LevelSpaces::new`], [`Operator::new`] and
    /// [`Multigrid::new`].
    pub fn new(
        hierarchy: &MeshHierarchy,
        finest: &Operator<R>,
        backend: &Backend,
        fixed: &FixedDofs,
        options: MultigridOptions,
    ) -> Result<Self> {
        let spaces = LevelSpaces::new(hierarchy, finest.space())?;
        let like = finest.vector()?;
        let multigrid = Multigrid::new(&spaces, fixed, &like, options)?;
        let finest_disc = finest.discretization();
        let aux = finest_disc.aux();
        let n_levels = spaces.n_levels();
        let mut coarse = Vec::with_capacity(n_levels - 1);
        let mut states = Vec::with_capacity(n_levels - 1);
        // per boundary term, its set on every hierarchy mesh
        let boundary_sets = finest
            .form()
            .boundary()
            .iter()
            .map(|t| hierarchy.coarsened_facet_sets(t.set()))
            .collect::<Result<Vec<_>>>()?;
        for l in 0..n_levels - 1 {
            let space = spaces
                .space(l)
                .ok_or_else(|| Error::internal(format!("no space for multigrid level {l}")))?;
            let quadrature = if space.element() == finest.space().element() {
                finest_disc.quadrature().clone()
            } else {
                Quadrature::default_for(&Element::lagrange(space.dim(), 1)?)?
            };
            let mesh_level = spaces
                .mesh_level(l)
                .ok_or_else(|| Error::internal(format!("no mesh for multigrid level {l}")))?;
            let sets = boundary_sets
                .iter()
                .map(|s| s[mesh_level].clone())
                .collect();
            let form = finest.form().on(space.clone(), quadrature, sets)?;
            let r = Operator::new(form, backend)?;
            states.push(r.vector()?);
            coarse.push(r);
        }
        let time_b = states
            .iter()
            .map(|s| s.zeros_like())
            .collect::<Result<_>>()?;
        Ok(OperatorLevels {
            spaces,
            coarse,
            states,
            time_b,
            multigrid,
            matrices: (0..n_levels).map(|_| None).collect(),
            single_matrices: Vec::new(),
            representations: vec![None; n_levels],
            aux_set: aux == AuxSpace::None,
        })
    }

    /// The levels' spaces.
    pub fn spaces(&self) -> &LevelSpaces {
        &self.spaces
    }

    /// The multigrid (its report, options, cycle count).
    pub fn multigrid(&self) -> &Multigrid<R> {
        &self.multigrid
    }

    /// The multigrid, mutable (e.g. its coarse factorization).
    pub fn multigrid_mut(&mut self) -> &mut Multigrid<R> {
        &mut self.multigrid
    }

    /// Sets the auxiliary field of every coarser level from the finest
    /// level's values `aux` (as [`Operator::set_aux`] takes them): a nodal
    /// field by injection (the first nodes of each level), a P0 field by the
    /// mean over each coarse cell's children (`2^dim` per refinement; the
    /// same cells on the P2 → P1 step).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` for a wrong length or a
    /// form without auxiliary field; those of [`Operator::set_aux`].
    pub fn set_aux(&mut self, finest: &Operator<R>, aux: &[R]) -> Result<()> {
        let kind = finest.discretization().aux();
        if aux.len() != finest.aux_len() {
            return Err(Error::arg(
                "aux",
                format!(
                    "expected {} entries (the finest level's), got {}",
                    finest.aux_len(),
                    aux.len()
                ),
            ));
        }
        let mut values = aux.to_vec();
        let mut fine_cells = finest.space().n_cells();
        for l in (0..self.coarse.len()).rev() {
            let r = &mut self.coarse[l];
            let coarse_values: Vec<R> = match kind {
                AuxSpace::None => {
                    return Err(Error::arg(
                        "aux",
                        "the form has no auxiliary field (AuxSpace::None)",
                    ));
                }
                AuxSpace::Field { .. } => values[..r.aux_len()].to_vec(),
                AuxSpace::Cell { n_comp } => {
                    let cells = r.space().n_cells();
                    let children = fine_cells / cells.max(1);
                    let mut out = vec![R::ZERO; cells * n_comp];
                    for c in 0..cells {
                        for k in 0..n_comp {
                            let mut s = R::ZERO;
                            for j in 0..children {
                                s += values[(c * children + j) * n_comp + k];
                            }
                            out[c * n_comp + k] = s / R::from_f64(children as f64);
                        }
                    }
                    out
                }
            };
            r.set_aux(&coarse_values)?;
            fine_cells = r.space().n_cells();
            values = coarse_values;
        }
        self.aux_set = true;
        Ok(())
    }

    /// Sets the physics' constants of every coarser level (the finest
    /// operator's are the caller's).
    ///
    /// # Errors
    /// Those of [`Operator::set_constants`].
    pub fn set_constants(&mut self, constants: &[f64]) -> Result<()> {
        for op in &mut self.coarse {
            op.set_constants(constants)?;
        }
        Ok(())
    }

    /// Linearizes every level at the finest state `u` and sets the cycle up
    /// ([`Multigrid::setup`]; with the cycle in `f32`,
    /// [`Multigrid::setup_single`] on the assembled levels' matrices
    /// rounded to `f32`, [`Matrix::converted`]).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `aux` if the physics reads an
    /// auxiliary field the coarse levels were not given
    /// ([`OperatorLevels::set_aux`]); naming `physics` for what
    /// [`Multigrid::setup`] finds about the levels' operators (the Jacobians
    /// of `physics`: a singular diagonal block, not positive definite, a
    /// coarsest Jacobian that cannot be factored); naming
    /// `cycle_precision` for [`CyclePrecision::Single`](super::CyclePrecision::Single)
    /// with a matrix-free smoothed level (raise `assembled_max_dofs`); the
    /// other errors of [`Multigrid::inject`] and [`Multigrid::setup`].
    pub fn setup(&mut self, finest: &mut Operator<R>, u: &Vector<R>) -> Result<()> {
        let physics = finest.physics().info();
        let reads = physics.reads;
        if (reads.a || reads.grad_a) && !self.aux_set {
            return Err(Error::arg(
                "aux",
                format!(
                    "the physics `{}` reads the auxiliary field, which the coarse multigrid levels \
                     were not given: set it with DirichletProblem::set_aux (or \
                     OperatorLevels::set_aux), which restricts it to every level",
                    physics.name
                ),
            ));
        }
        self.multigrid.inject(u, &mut self.states)?;
        self.set_time(finest)?;
        self.assemble_levels(finest, u)?;
        if self.multigrid.runs_in_single() {
            self.convert_matrices()?;
        }
        let mut ops = JacobianLevels {
            coarse: &mut self.coarse,
            states: &self.states,
            finest,
            state: u,
            matrices: &self.matrices,
        };
        let result = if self.multigrid.runs_in_single() {
            self.multigrid.setup_single(&mut SingleLevels {
                matrices: &self.single_matrices,
                working: &mut ops,
            })
        } else {
            self.multigrid.setup(&mut ops)
        };
        result.map_err(|e| match e {
            Error::InvalidArgument {
                name: "ops",
                reason,
            } => Error::arg(
                "physics",
                format!(
                    "multigrid for the Jacobian of `{}`: {reason}. Multigrid needs the \
                     Jacobian positive definite on every level (its Chebyshev smoother) and \
                     the coarsest one nonsingular (symmetric too for the Cholesky factorization \
                     of DirichletProblem::solve_linear): for a non-symmetric problem use \
                     DirichletProblem::solve_nonlinear (GMRES), for an indefinite one \
                     Preconditioner::Jacobi or None, for a singular one fix more dofs",
                    physics.name
                ),
            ),
            other => other,
        })
    }

    /// Gives every coarser level the finest operator's time state (its `b`
    /// injected as the state is: `u_t = σ·u + b` on every level, so each
    /// level's Jacobian is its step Jacobian `σ·∂F/∂u_t + ∂F/∂u`), or none.
    fn set_time(&mut self, finest: &Operator<R>) -> Result<()> {
        let Some(time) = finest.time() else {
            return self.coarse.iter_mut().try_for_each(|op| op.clear_time());
        };
        self.multigrid.inject(&time.b, &mut self.time_b)?;
        for (op, b) in self.coarse.iter_mut().zip(&self.time_b) {
            op.set_time(time.t, time.sigma, b)?;
        }
        Ok(())
    }

    /// One V-cycle `x = M⁻¹ b` for the Jacobian at the state of the last
    /// setup (`u`, the same vector as given to it).
    ///
    /// # Errors
    /// Those of [`Multigrid::apply`].
    pub fn apply(
        &mut self,
        finest: &mut Operator<R>,
        u: &Vector<R>,
        b: &Vector<R>,
        x: &mut Vector<R>,
    ) -> Result<()> {
        let mut ops = JacobianLevels {
            coarse: &mut self.coarse,
            states: &self.states,
            finest,
            state: u,
            matrices: &self.matrices,
        };
        if self.multigrid.runs_in_single() {
            let mut single = SingleLevels {
                matrices: &self.single_matrices,
                working: &mut ops,
            };
            return self.multigrid.apply_single(&mut single, b, x);
        }
        self.multigrid.apply(&mut ops, b, x)
    }

    /// For the cycle in `f32`: rounds every smoothed level's assembled
    /// matrix to `f32` (the first time a copy sharing its pattern, after
    /// that its values only, one conversion kernel on a device).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `cycle_precision` for a smoothed
    /// level left matrix-free (more than `assembled_max_dofs` dofs, or
    /// slower assembled with [`SmallLevels::Measured`]); those of
    /// [`Matrix::converted`].
    fn convert_matrices(&mut self) -> Result<()> {
        let n_levels = self.matrices.len();
        self.single_matrices.resize_with(n_levels, || None);
        for l in 1..n_levels {
            let Some(matrix) = &self.matrices[l] else {
                return Err(matrix_free_level_error(l, self.multigrid.n_dofs(l)));
            };
            match &mut self.single_matrices[l] {
                Some(single) => single.convert_values_from(matrix)?,
                none => *none = Some(matrix.converted()?),
            }
        }
        Ok(())
    }

    /// The finest level's assembled Jacobian (at the state of the last
    /// setup), if the finest level is assembled ([`Self::assembled_levels`]):
    /// what a Krylov solver at that same state can apply instead of the
    /// matrix-free `J(u)·v` — the same operator, one SpMV.
    pub fn finest_matrix(&self) -> Option<&Matrix<R>> {
        self.matrices.last()?.as_ref()
    }

    /// Which levels are assembled: those above the coarsest with at most
    /// [`MultigridOptions::assembled_max_dofs`] dofs (with
    /// [`SmallLevels::Measured`], those of them where the SpMV was faster).
    pub fn assembled_levels(&self) -> Vec<usize> {
        (0..self.matrices.len())
            .filter(|&l| self.matrices[l].is_some())
            .collect()
    }

    /// How every smoothed level applies its operator (coarsest first;
    /// empty before the first setup): assembled or matrix-free, and with
    /// [`SmallLevels::Measured`] the times that decided it.
    pub fn representations(&self) -> Vec<LevelRepresentation> {
        self.representations.iter().flatten().cloned().collect()
    }

    /// At the first setup, decides how every level above the coarsest
    /// applies its operator: matrix-free above
    /// [`MultigridOptions::assembled_max_dofs`] dofs; at or below it
    /// assembled, or with [`SmallLevels::Measured`] whichever of the two
    /// applied faster. At later setups refills the assembled levels'
    /// matrices at their states (values only, the pattern kept).
    fn assemble_levels(&mut self, finest: &mut Operator<R>, u: &Vector<R>) -> Result<()> {
        let options = self.multigrid.options();
        let (max, small) = (options.assembled_max_dofs, options.small_levels);
        let n_levels = self.matrices.len();
        for l in 1..n_levels {
            let (op, state) = if l + 1 == n_levels {
                (&mut *finest, u)
            } else {
                (&mut self.coarse[l], &self.states[l])
            };
            if let Some(matrix) = &mut self.matrices[l] {
                op.reassemble_matrix(state, matrix)?;
                continue;
            }
            if self.representations[l].is_some() {
                continue; // decided matrix-free
            }
            let dofs = op.space().n_dofs();
            let (matrix, measured) = if dofs > max {
                (None, None)
            } else {
                let matrix = op.assemble_matrix(state)?;
                match small {
                    SmallLevels::Assembled => (Some(matrix), None),
                    SmallLevels::Measured => {
                        let (free, assembled) = time_representations(op, state, &matrix)?;
                        (
                            (assembled < free).then_some(matrix),
                            Some((free, assembled)),
                        )
                    }
                }
            };
            self.representations[l] = Some(LevelRepresentation {
                level: l,
                dofs,
                assembled: matrix.is_some(),
                measured,
            });
            self.matrices[l] = matrix;
        }
        Ok(())
    }
}

impl<R: Real> std::fmt::Debug for OperatorLevels<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OperatorLevels")
            .field("multigrid", &self.multigrid)
            .field("representations", &self.representations())
            .finish()
    }
}
