//! Dirichlet conditions: fix some dofs, solve for the others — on the
//! operator's backend, with every vector where the operator lives.
//!
//! (Longer than most files: its unit tests, about 150 lines, live at the
//! end, beside the private state they check.)

use super::cg::{CgStats, cg_system};
use super::constraints::Constraints;
use super::krylov::PreconditionedSystem;
use super::linear_checks::{
    check_symmetric_positive, explain_cg_failure, prepare_probe, require_affine,
};
use super::newton::{JacobianProducts, NewtonOptions, NewtonStats, NewtonSystem, newton};
use super::preconditioner::{Preconditioner, PreconditionerState};
use crate::linalg::FixedDofs;
use std::sync::Arc;

use crate::backend::{IndexSet, Matrix, Vector};
use crate::mesh::MeshPart;
use crate::multigrid::{MeshHierarchy, Multigrid};
use crate::operator::Operator;
use crate::space::{Components, FunctionSpace};
use crate::sparse::Factorization;
use crate::vector::VectorOps;
use crate::{Error, Real, Result};

/// An operator `F` ([`Operator`]) with Dirichlet conditions: the dofs in a set `D` are fixed
/// to given values `g`, and the problem is posed on the free dofs `f`:
///
/// ```text
/// find u with u_D = g_D such that F(u)_f = 0.
/// ```
///
/// The solvers work on full-length vectors (where the operator lives: on the
/// device for the OpenCL backend, so a solve moves no array between host and
/// device) and keep the fixed dofs out of the system by their rows:
///
/// ```text
/// G(u)_f = F(u)_f,   G(u)_D = u_D − g_D
/// ```
///
/// ([`DirichletProblem::constrained_residual`]). Starting from `u_D = g_D`,
/// every correction has `δu_D = 0` and `G(u)_D` stays 0, so this is
/// exactly the usual "eliminate the Dirichlet rows" of a finite-element
/// code, done without a matrix: the free block `F_f` is solved, the fixed
/// values are kept.
///
/// * A **linear** physics (`F` affine in `u`: `F(u) = A u − b`) gives
///   `A_ff v_f = −F_f(u_D)` for `u = u_D + v`, solved matrix-free by
///   conjugate gradients in [`DirichletProblem::solve_linear`] with the
///   exact action `(A v)_f = (J v)_f` ([`Operator::jacobian_action`], from
///   the physics' tangent) and `(A v)_D = v_D`. `A_ff` is symmetric
///   positive definite for the Laplacian and Lamé operators when `D`
///   contains the whole boundary (or enough of it).
/// * A **nonlinear** physics is solved by Newton–Krylov on `G`
///   ([`DirichletProblem::solve_nonlinear`]), whose Jacobian is
///   `(J_G v)_f = (J v)_f`, `(J_G v)_D = v_D`.
///
/// Vectors are [`Vector`]s of the operator's precision `R`, made with
/// [`Operator::vector`] / [`Operator::vector_from`].
///
/// # Preconditioning
/// Both solvers are preconditioned ([`Preconditioner`]), by default with
/// geometric multigrid ([`crate::multigrid`]) on the problem's
/// [`MeshHierarchy`]: one V-cycle per Krylov iteration, set up for the
/// Jacobian at the current state (once per linear solve, once per Newton
/// step), with the fixed dofs of every level derived from `D` — so the
/// iteration counts stay bounded as the mesh is refined.
/// [`DirichletProblem::on_hierarchy`] gives the problem a coarse mesh and
/// its refinements (build the operator on [`MeshHierarchy::finest`]);
/// [`DirichletProblem::on_boundary`] knows only its one mesh, whose
/// "hierarchy" has one level, so its multigrid is the direct solve of the
/// assembled operator (P1), or one P2 → P1 step above it (P2): exact, but
/// only affordable for small meshes (the coarsest level is limited to
/// [`MultigridOptions::max_coarse_dofs`](crate::multigrid::MultigridOptions)
/// dofs, with an error that says so). [`DirichletProblem::set_preconditioner`]
/// chooses point-block Jacobi or none instead, e.g. for comparisons.
///
/// # Example
/// Poisson's equation on a refined square, multigrid-preconditioned CG:
/// ```
/// use femquad::physics::builtin::Poisson;
/// use femquad::prelude::*;
///
/// # fn main() -> femquad::Result<()> {
/// let coarse = unit_square(4, &MeshOptions::default())?;
/// let hierarchy = MeshHierarchy::new(&coarse, 3)?; // 32·4³ triangles
/// let space = FunctionSpace::new(hierarchy.finest().clone(), Element::lagrange(2, 1)?, 1)?;
/// let form = Form::new(space, Poisson)?.with_constants(&[1.0])?; // −Δu = 1
/// let op = Operator::<f64>::new(form, &Backend::native())?;
/// let mut problem = DirichletProblem::on_hierarchy(op, hierarchy, |_, g| g[0] = 0.0)?;
/// let (u, stats) = problem.solve_linear(1e-8, 100)?;
/// assert!(stats.iterations <= 10);
/// assert_eq!(problem.multigrid().unwrap().report().unwrap().levels.len(), 4);
/// # let _ = u;
/// # Ok(())
/// # }
/// ```
pub struct DirichletProblem<R: Real> {
    residual: Operator<R>,
    /// The fixed dofs and `u_D` (the fixed values on fixed dofs, 0 on free
    /// dofs).
    constraints: Constraints<R>,
    evaluations: usize,
    /// Matrix-free Jacobian products `J(u)·v` made by the solves.
    jacobian_products: usize,
    /// The meshes of multigrid: the residual's mesh alone until
    /// [`DirichletProblem::with_hierarchy`] gives refinements.
    hierarchy: MeshHierarchy,
    preconditioner: Preconditioner,
    pc: PreconditionerState<R>,
}

impl<R: Real> DirichletProblem<R> {
    /// Fixes the dofs `fixed_dofs` (any order; repetitions allowed) of the
    /// operator's space to the values `values[dof]`; `values` is a full
    /// vector (`n_dofs` entries) whose other entries are ignored.
    ///
    /// The multigrid preconditioner's hierarchy is the space's mesh alone
    /// (see [`DirichletProblem::on_boundary`]) until
    /// [`DirichletProblem::with_hierarchy`] gives it refinements.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] if `values` has the wrong length or a dof
    /// is out of range; [`Error::NonFinite`] if a fixed value is not finite;
    /// device errors.
    pub fn new(residual: Operator<R>, fixed_dofs: &[u32], values: &[f64]) -> Result<Self> {
        let constraints = Constraints::new(&residual, fixed_dofs, values)?;
        let residual_mesh = residual.space().mesh().clone();
        Ok(DirichletProblem {
            residual,
            constraints,
            evaluations: 0,
            jacobian_products: 0,
            hierarchy: MeshHierarchy::single(residual_mesh),
            preconditioner: Preconditioner::default(),
            pc: PreconditionerState::default(),
        })
    }

    /// Fixes every dof of the boundary nodes ([`FunctionSpace::boundary_dofs`])
    /// to the nodal interpolant of `g`: `g(x, out)` receives a node's
    /// coordinates and writes its `N_comp` values.
    ///
    /// # Errors
    /// Those of [`FunctionSpace::boundary_dofs`] and
    /// [`FunctionSpace::interpolate`].
    pub fn on_boundary(
        residual: Operator<R>,
        g: impl Fn(&[f64], &mut [f64]) + Sync,
    ) -> Result<Self> {
        let dofs = residual.space().boundary_dofs()?;
        let values = residual.space().interpolate(g);
        Self::new(residual, &dofs, &values)
    }

    /// Fixes the dofs of `part` (a side of the boundary, Gmsh physical
    /// groups: see [`MeshPart`]), the chosen `components`, to the nodal
    /// interpolant of `g` ([`FunctionSpace::dofs_on`]; for P2 the part's
    /// edge nodes too). Make `part` on the operator's mesh,
    /// `op.space().mesh()`. For several parts or components with
    /// different parts, chain their [`FunctionSpace::dofs_on`] and call
    /// [`DirichletProblem::new`].
    ///
    /// ```
    /// use femquad::mesh::MeshPart;
    /// use femquad::physics::builtin::Poisson;
    /// use femquad::prelude::*;
    ///
    /// # fn main() -> femquad::Result<()> {
    /// let hierarchy = MeshHierarchy::new(&unit_square(4, &MeshOptions::default())?, 2)?;
    /// let space = FunctionSpace::new(hierarchy.finest().clone(), Element::lagrange(2, 2)?, 1)?;
    /// let form = Form::new(space, Poisson)?.with_constants(&[1.0])?;
    /// let op = Operator::<f64>::new(form, &Backend::native())?;
    /// // −Δu = 1 with u = 0 on the left and right sides only
    /// let sides = MeshPart::boundary_where(op.space().mesh(), |x| x[0] == 0.0 || x[0] == 1.0)?;
    /// let mut problem = DirichletProblem::on_part(op, &sides, Components::All, |_, g| g[0] = 0.0)?
    ///     .with_hierarchy(hierarchy)?;
    /// let (u, _) = problem.solve_linear(1e-10, 100)?;
    /// // u(x) = x(1 − x)/2 whatever y: 1/8 at x = 1/2, exact for P2
    /// let x = problem.space().node_coordinates();
    /// let u = u.to_host()?;
    /// for (u, x) in u.iter().zip(x.chunks(2)) {
    ///     assert!((u - x[0] * (1.0 - x[0]) / 2.0).abs() < 1e-8);
    /// }
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    /// Those of [`FunctionSpace::dofs_on`] (e.g. `part` made on another
    /// mesh, a component out of range) and [`DirichletProblem::new`].
    pub fn on_part(
        residual: Operator<R>,
        part: &MeshPart,
        components: Components,
        g: impl Fn(&[f64], &mut [f64]) + Sync,
    ) -> Result<Self> {
        let dofs = residual.space().dofs_on(part, components)?;
        let values = residual.space().interpolate(g);
        Self::new(residual, &dofs, &values)
    }

    /// [`DirichletProblem::on_boundary`] of the finest mesh of `hierarchy`,
    /// whose levels the multigrid preconditioner uses (the default): the
    /// operator must be built on [`MeshHierarchy::finest`]. The boundary's
    /// dofs are those of `on_boundary`, found by
    /// [`MeshHierarchy::finest_boundary`] (the coarsest mesh's boundary
    /// refined, not a sort of the finest mesh's facets).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `hierarchy` if the operator is not
    /// on its finest mesh; those of [`MeshHierarchy::finest_boundary`] and
    /// [`DirichletProblem::on_part`].
    pub fn on_hierarchy(
        residual: Operator<R>,
        hierarchy: MeshHierarchy,
        g: impl Fn(&[f64], &mut [f64]) + Sync,
    ) -> Result<Self> {
        check_on_finest(&residual, &hierarchy)?;
        // the finest boundary refined from the coarsest mesh's (no sort of
        // the finest mesh's facets): the dofs of `on_boundary`
        let boundary = hierarchy.finest_boundary()?;
        Self::on_part(residual, &boundary, Components::All, g)?.with_hierarchy(hierarchy)
    }

    /// Gives the problem the meshes of its multigrid preconditioner:
    /// `hierarchy.finest()` must be the operator's mesh. The fixed dofs of
    /// the coarser levels follow from the problem's (see
    /// [`LevelSpaces::fixed_dofs`](crate::multigrid::LevelSpaces::fixed_dofs)).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `hierarchy` if the operator's space
    /// is not on its finest mesh.
    pub fn with_hierarchy(mut self, hierarchy: MeshHierarchy) -> Result<Self> {
        check_on_finest(&self.residual, &hierarchy)?;
        self.hierarchy = hierarchy;
        self.pc.clear();
        Ok(self)
    }

    /// The meshes of the multigrid preconditioner (the residual's mesh
    /// alone unless [`DirichletProblem::with_hierarchy`] gave refinements).
    pub fn hierarchy(&self) -> &MeshHierarchy {
        &self.hierarchy
    }

    /// Chooses the preconditioner of the next solves.
    pub fn set_preconditioner(&mut self, preconditioner: Preconditioner) {
        if preconditioner != self.preconditioner {
            self.pc.clear();
        }
        self.preconditioner = preconditioner;
    }

    /// The preconditioner of the solves.
    pub fn preconditioner(&self) -> &Preconditioner {
        &self.preconditioner
    }

    /// Does the one-time work of the solves ahead, so that it can be timed
    /// apart (the solves do it when needed): builds what the
    /// preconditioner needs before its first setup (the multigrid levels:
    /// coarse operators with their kernels, spaces, transfers and device
    /// vectors), and the device kernel of the random vectors with which
    /// [`DirichletProblem::solve_linear`] checks its operator. (The
    /// operator's own kernels were built with it.)
    ///
    /// # Errors
    /// Those of [`OperatorLevels::new`](crate::multigrid::OperatorLevels::new);
    /// device errors.
    pub fn prepare(&mut self) -> Result<()> {
        prepare_probe(self.constraints.base())?;
        self.pc.prepare(
            &self.preconditioner,
            &self.hierarchy,
            &self.residual,
            self.constraints.fixed(),
        )
    }

    /// The multigrid preconditioner, once built (by the first solve with
    /// [`Preconditioner::Multigrid`], or [`DirichletProblem::prepare`]): what
    /// its last setup found ([`Multigrid::report`]: levels, eigenvalue
    /// estimates, seconds), the V-cycles applied ([`Multigrid::cycles`]) and,
    /// with [`MultigridOptions::profile`](crate::multigrid::MultigridOptions::profile),
    /// where their time went ([`Multigrid::profile`]).
    pub fn multigrid(&self) -> Option<&Multigrid<R>> {
        self.pc.levels().map(|l| l.multigrid())
    }

    /// Seconds spent setting the preconditioner up during the last solve
    /// (all Newton steps of a nonlinear solve): the diagonals, eigenvalue
    /// estimates and coarse factorization of multigrid, or the diagonal of
    /// Jacobi.
    pub fn preconditioner_seconds(&self) -> f64 {
        self.pc.seconds
    }

    /// Sets the auxiliary field of the operator and of every multigrid level
    /// (restricted: a nodal field injected, a P0 field averaged over each
    /// coarse cell's children), as [`Operator::set_aux`] takes it. A physics
    /// that reads the field needs it on every level: set it here rather
    /// than on the operator before it is given to the problem.
    ///
    /// # Errors
    /// Those of [`Operator::set_aux`].
    pub fn set_aux(&mut self, aux: &[R]) -> Result<()> {
        self.residual.set_aux(aux)?;
        self.pc.set_aux(&self.residual, aux)
    }

    /// Sets the physics' constants of the operator and of every multigrid
    /// level, as [`Operator::set_constants`] takes them.
    ///
    /// # Errors
    /// Those of [`Operator::set_constants`].
    pub fn set_constants(&mut self, constants: &[f64]) -> Result<()> {
        self.residual.set_constants(constants)?;
        self.pc.set_constants(constants)
    }

    /// Replaces the values of the fixed dofs (the dofs stay): `values` is a
    /// full vector (`n_dofs` entries) whose free entries are ignored — a
    /// time integrator's `g(t, x)` at each step's time.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `values` for a wrong length;
    /// [`Error::NonFinite`] if a fixed value is not finite; device errors.
    pub fn set_fixed_values(&mut self, values: &[f64]) -> Result<()> {
        self.constraints.set_values(&self.residual, values)
    }

    /// Binds the operator's time state, `t` and `u_t = σ·u + b`
    /// ([`Operator::set_time`]); the multigrid levels take it at their next
    /// setup (each solve's).
    ///
    /// # Errors
    /// Those of [`Operator::set_time`].
    pub fn set_time(&mut self, t: f64, sigma: f64, b: &Vector<R>) -> Result<()> {
        self.residual.set_time(t, sigma, b)
    }

    /// The operator `F`.
    pub fn operator(&self) -> &Operator<R> {
        &self.residual
    }

    /// The solution space.
    pub fn space(&self) -> &FunctionSpace {
        self.residual.space()
    }

    /// Number of free dofs (unknowns).
    pub fn n_free(&self) -> usize {
        self.constraints.fixed().n_free()
    }

    /// The fixed dofs (increasing: [`FixedDofs::dofs`]), e.g. for the
    /// symmetric elimination of the assembled Jacobian
    /// ([`FixedDofs::eliminate`]).
    pub fn fixed_dofs(&self) -> &FixedDofs {
        self.constraints.fixed()
    }

    /// `u_D`: the fixed values on fixed dofs and 0 on free dofs (`n_dofs` entries).
    pub fn fixed_values(&self) -> &[f64] {
        self.constraints.values()
    }

    /// Evaluations of `F` performed so far.
    pub fn evaluations(&self) -> usize {
        self.evaluations
    }

    /// Matrix-free Jacobian products `J(u)·v` the solves have made so far:
    /// the Krylov solvers' operator and the linear checks' probes. Where
    /// [`DirichletProblem::solve_linear`]'s multigrid assembled the finest
    /// level ([`MultigridOptions::assembled_max_dofs`](crate::multigrid::MultigridOptions::assembled_max_dofs)),
    /// CG applies that matrix instead (one SpMV, not counted here), and so
    /// does each Newton step's GMRES of [`DirichletProblem::solve_nonlinear`]
    /// (and of the time steps) with exact products: the levels are
    /// assembled at the step's iterate.
    pub fn jacobian_products(&self) -> usize {
        self.jacobian_products
    }

    /// `r = G(u)`: `F(u)` on the free dofs, `u − g` on the fixed ones (see
    /// the [type documentation](Self)). `u` and `r` live where the
    /// operator does.
    ///
    /// # Errors
    /// Those of [`Operator::apply`].
    pub fn constrained_residual(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        crate::vector::check_finite("u", u)?;
        self.constrained(u, r)
    }

    /// [`DirichletProblem::constrained_residual`] without the scan of `u`.
    fn constrained(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        constrained_residual(
            &mut self.residual,
            &self.constraints,
            &mut self.evaluations,
            u,
            r,
        )
    }

    /// Solves a **linear** problem (`physics` affine in `u` and `∇u`, with
    /// a symmetric positive definite `A_ff`) by conjugate gradients to the
    /// relative residual `tol` ([`cg`](super::cg)), and returns the full
    /// solution (`n_dofs` entries, where the operator lives) with the CG
    /// statistics (their residual is the true `‖b − A v‖`).
    ///
    /// With `u = u_D + v`: the right-hand side is `b = −F(u_D)` with
    /// `b_D = 0` (one evaluation), and the operator `(A v)_f = (J v)_f`,
    /// `(A v)_D = v_D`, with `J v` the exact Jacobian action
    /// ([`Operator::jacobian_action`]; for affine `F` the Jacobian is `A` at
    /// every `u`), one tangent evaluation per CG iteration. CG is
    /// preconditioned by the problem's [`Preconditioner`] (multigrid by
    /// default), set up once for the Jacobian at `u_D`
    /// ([`DirichletProblem::preconditioner_seconds`] reports the time).
    /// Where that multigrid assembled its finest level
    /// ([`MultigridOptions::assembled_max_dofs`](crate::multigrid::MultigridOptions::assembled_max_dofs),
    /// chosen by measurement with
    /// [`SmallLevels::Measured`](crate::multigrid::SmallLevels::Measured)),
    /// CG applies that matrix — the same `J`, one SpMV — instead of the
    /// tangent evaluation ([`DirichletProblem::jacobian_products`] counts
    /// the matrix-free products).
    ///
    /// Before solving it checks what CG needs: that `#[pointwise]` proved
    /// the physics and every boundary term's physics affine
    /// ([`PointwiseInfo::linear`](crate::physics::PointwiseInfo::linear)),
    /// and, on two random vectors `x`, `y` zero on the fixed dofs, that
    /// `x·Ay = y·Ax` to rounding (symmetric) and `x·Ax > 0` (positive): two
    /// more products of the operator CG applies (after the preconditioner's
    /// setup, so two SpMVs where it assembled the finest level; an error
    /// of these checks comes before one of the setup).
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] naming `physics` if it (or a boundary
    ///   term's physics) is not provably
    ///   affine (solve it with [`DirichletProblem::solve_nonlinear`]), if its
    ///   Jacobian on the free dofs is not symmetric or not positive definite
    ///   (found by the random vectors, by CG, or by the multigrid setup: an
    ///   advection term, an indefinite or a singular problem), each with
    ///   what to do.
    /// * Those of [`cg`](super::cg) (notably [`Error::NoConvergence`], and `tol` out
    ///   of reach of the operator's precision), of the preconditioner's setup
    ///   ([`Preconditioner`]), and of [`Operator::apply`] and
    ///   [`Operator::jacobian_action`].
    pub fn solve_linear(&mut self, tol: f64, max_iter: usize) -> Result<(Vector<R>, CgStats)> {
        let info = self.residual.physics().info();
        require_affine(info)?;
        // the boundary terms' physics too: one linear system solves F = 0
        // only if every term of F is affine
        for term in self.residual.form().boundary() {
            require_affine(term.physics().info())?;
        }
        self.pc.reset_timer();
        let mut f0 = self.residual.vector()?;
        let DirichletProblem {
            residual,
            constraints,
            evaluations,
            jacobian_products,
            hierarchy,
            preconditioner,
            pc,
        } = self;
        let (base, fixed_set) = (constraints.base(), constraints.set());
        // F(u_D), then b = −F(u_D) with b_D = 0
        residual.apply_unchecked(base, &mut f0)?;
        *evaluations += 1;
        let mut b = f0.zeros_like()?;
        b.axpy(-1.0, &f0)?;
        b.set_at(fixed_set, 0.0)?;
        let mut v = f0.zeros_like()?;
        // the preconditioner, for the Jacobian at u_D (for affine F, at any u)
        let factorization = match preconditioner {
            Preconditioner::Multigrid(o) => o.factorization,
            _ => Factorization::Cholesky,
        };
        let setup = pc.setup(
            preconditioner,
            hierarchy,
            residual,
            constraints,
            base,
            factorization,
        );
        // the checks on the operator CG will apply (the finest level's
        // matrix if the setup assembled one: one SpMV a product), before the
        // setup's error, if any: a non-symmetric or indefinite operator is
        // named as such even where it made the setup fail
        let matrix = match setup {
            Ok(()) => pc.finest_matrix(),
            Err(_) => None,
        };
        let mut apply = |v: &Vector<R>, av: &mut Vector<R>| -> Result<()> {
            constrained_jacobian(residual, matrix, fixed_set, jacobian_products, base, v, av)
        };
        check_symmetric_positive(info.name, &mut apply, &b, fixed_set)?;
        setup?;
        let mut system = LinearSystem {
            residual,
            fixed: fixed_set,
            jacobian_products,
            state: base,
            choice: preconditioner,
            pc,
        };
        let stats = cg_system(&mut system, &b, &mut v, tol, max_iter)
            .map_err(|e| explain_cg_failure(e, info.name))?;
        // u = u_D + v
        v.axpy(1.0, base)?;
        Ok((v, stats))
    }

    /// Solves a (possibly) **nonlinear** problem `G(u) = 0` by
    /// [`newton_krylov`](super::newton_krylov) from the initial guess `u0` (`None`: `u = u_D`;
    /// its fixed entries are replaced by `g`) and returns the full solution
    /// with Newton's statistics. GMRES's products `J_G(u)·v` are `products`:
    /// exact ([`JacobianProducts::Exact`], from
    /// [`Operator::jacobian_action`]; the usual choice) or from residual
    /// differences. [`NewtonOptions::residual_epsilon`] is at least the
    /// machine epsilon of `R`. Every step's GMRES is right-preconditioned by
    /// the problem's [`Preconditioner`], rebuilt for the Jacobian at that
    /// step's iterate (as in
    /// [`newton_krylov_relinearized`](super::newton_krylov_relinearized);
    /// multigrid's coarsest Jacobian is factored by LU, as Jacobians of
    /// nonlinear physics are in general not symmetric).
    ///
    /// # Errors
    /// Those of [`newton_krylov`](super::newton_krylov) and
    /// [`Operator::apply`], those about
    /// its Jacobian (singular in a GMRES solve, non-finite pointwise
    /// Jacobians) naming `physics`; [`Error::InvalidArgument`] if `u0` has
    /// the wrong length or location.
    pub fn solve_nonlinear(
        &mut self,
        u0: Option<&Vector<R>>,
        products: JacobianProducts,
        opts: &NewtonOptions,
    ) -> Result<(Vector<R>, NewtonStats)> {
        let name = self.residual.physics().info().name;
        let mut u = self.residual.vector()?;
        match u0 {
            Some(u0) => {
                u.check_compatible("u", "u0", u0)?;
                u.copy_from(u0)?;
                u.copy_at(self.constraints.set(), self.constraints.base())?;
            }
            None => u.copy_from(self.constraints.base())?,
        }
        let opts = NewtonOptions {
            residual_epsilon: opts.residual_epsilon.max(R::EPSILON.to_f64()),
            ..*opts
        };
        self.pc.reset_timer();
        let DirichletProblem {
            residual,
            constraints,
            evaluations,
            jacobian_products,
            hierarchy,
            preconditioner,
            pc,
        } = self;
        let mut system = NonlinearSystem {
            state: u.zeros_like()?,
            residual,
            constraints,
            evaluations,
            jacobian_products,
            hierarchy,
            choice: preconditioner,
            pc,
            products,
            linearized: false,
        };
        let stats = newton(&mut system, &mut u, &opts).map_err(|e| match e {
            // the Jacobian products and residual are the physics'
            Error::InvalidArgument {
                name: "jacobian" | "residual",
                reason,
            } => Error::arg("physics", format!("Newton–Krylov on `{name}`: {reason}")),
            other => other,
        })?;
        Ok((u, stats))
    }
}

/// Checks that `residual` is built on the finest mesh of `hierarchy`
/// (the same `Arc`, compared by pointer).
///
/// # Errors
/// [`Error::InvalidArgument`] naming `hierarchy` if it is not.
fn check_on_finest<R: Real>(residual: &Operator<R>, hierarchy: &MeshHierarchy) -> Result<()> {
    if !Arc::ptr_eq(residual.space().mesh(), hierarchy.finest()) {
        return Err(Error::arg(
            "hierarchy",
            "its finest mesh is not the operator's mesh: build the operator's space on \
             `hierarchy.finest().clone()` (the same `Arc<Mesh>`; a copy of the mesh, even an \
             equal one, is another mesh)",
        ));
    }
    Ok(())
}

/// `r = G(u)` (see [`DirichletProblem`]): `F(u)` on the free dofs, counted
/// in `evaluations`, and `u − g` on the fixed ones.
fn constrained_residual<R: Real>(
    residual: &mut Operator<R>,
    constraints: &Constraints<R>,
    evaluations: &mut usize,
    u: &Vector<R>,
    r: &mut Vector<R>,
) -> Result<()> {
    residual.apply_unchecked(u, r)?;
    *evaluations += 1;
    // r_D = u_D − g_D; g is zero off D, so the axpy changes only D.
    r.copy_at(constraints.set(), u)?;
    r.axpy(-1.0, constraints.base())
}

/// `jv = J_G(u)·v`: the Jacobian action of `F` on the free dofs, `v` on the
/// fixed ones (the identity's rows) — by `matrix`, the Jacobian at `u`
/// assembled (the finest multigrid level's, one SpMV), if given, else
/// matrix-free, counted in `products`.
fn constrained_jacobian<R: Real>(
    residual: &mut Operator<R>,
    matrix: Option<&Matrix<R>>,
    fixed: &IndexSet,
    products: &mut usize,
    u: &Vector<R>,
    v: &Vector<R>,
    jv: &mut Vector<R>,
) -> Result<()> {
    match matrix {
        Some(matrix) => matrix.apply(v, jv)?,
        None => {
            residual.jacobian_action(u, v, jv)?;
            *products += 1;
        }
    }
    jv.copy_at(fixed, v)
}

/// What CG iterates with in [`DirichletProblem::solve_linear`]: the
/// constrained Jacobian at `state` and the problem's preconditioner for it,
/// both computed by the one operator — the disjoint parts of the problem
/// they need, borrowed once.
struct LinearSystem<'a, R: Real> {
    residual: &'a mut Operator<R>,
    fixed: &'a IndexSet,
    jacobian_products: &'a mut usize,
    state: &'a Vector<R>,
    choice: &'a Preconditioner,
    pc: &'a mut PreconditionerState<R>,
}

impl<R: Real> PreconditionedSystem<Vector<R>> for LinearSystem<'_, R> {
    /// `J_G·v`, by the finest multigrid level's assembled Jacobian where
    /// there is one (set up at this system's state: the same operator, one
    /// SpMV), else matrix-free.
    fn apply(&mut self, v: &Vector<R>, av: &mut Vector<R>) -> Result<()> {
        constrained_jacobian(
            self.residual,
            self.pc.finest_matrix(),
            self.fixed,
            self.jacobian_products,
            self.state,
            v,
            av,
        )
    }

    fn is_preconditioned(&self) -> bool {
        *self.choice != Preconditioner::None
    }

    fn precondition(&mut self, r: &Vector<R>, z: &mut Vector<R>) -> Result<()> {
        self.pc.apply(self.choice, self.residual, self.state, r, z)
    }
}

/// What Newton works with in [`DirichletProblem::solve_nonlinear`]: the
/// constrained residual `G`, its Jacobian products (`products`) and the
/// problem's preconditioner, set up at every Newton iterate (its copy
/// `state`) — all computed by the one operator, from the disjoint parts of
/// the problem, borrowed once.
struct NonlinearSystem<'a, R: Real> {
    residual: &'a mut Operator<R>,
    constraints: &'a Constraints<R>,
    evaluations: &'a mut usize,
    jacobian_products: &'a mut usize,
    hierarchy: &'a MeshHierarchy,
    choice: &'a Preconditioner,
    pc: &'a mut PreconditionerState<R>,
    products: JacobianProducts,
    state: Vector<R>,
    /// Whether the preconditioner was set up at the iterate of the coming
    /// products: set by `linearize`, cleared by every residual evaluation
    /// (Newton evaluates `F` only at trial and new iterates, after the
    /// Krylov solve of the current one).
    linearized: bool,
}

impl<R: Real> NewtonSystem<Vector<R>> for NonlinearSystem<'_, R> {
    fn residual(&mut self, u: &Vector<R>, r: &mut Vector<R>) -> Result<()> {
        self.linearized = false;
        constrained_residual(self.residual, self.constraints, self.evaluations, u, r)
    }

    fn products(&self) -> JacobianProducts {
        self.products
    }

    fn exact_product(
        &mut self,
        u: &Vector<R>,
        v: &Vector<R>,
        jv: &mut Vector<R>,
    ) -> Option<Result<()>> {
        match self.products {
            // the finest multigrid level assembled at this iterate (if
            // any): the same Jacobian, one SpMV
            JacobianProducts::Exact => Some(constrained_jacobian(
                self.residual,
                self.pc.finest_matrix().filter(|_| self.linearized),
                self.constraints.set(),
                self.jacobian_products,
                u,
                v,
                jv,
            )),
            JacobianProducts::Differences => None,
        }
    }

    fn linearize(&mut self, u: &Vector<R>) -> Result<()> {
        if !self.is_preconditioned() {
            return Ok(());
        }
        self.state.copy_from(u)?;
        // the Jacobian of a nonlinear physics is in general not symmetric
        self.pc.setup(
            self.choice,
            self.hierarchy,
            self.residual,
            self.constraints,
            &self.state,
            Factorization::Lu,
        )?;
        self.linearized = true;
        Ok(())
    }

    fn is_preconditioned(&self) -> bool {
        *self.choice != Preconditioner::None
    }

    fn precondition(&mut self, r: &Vector<R>, z: &mut Vector<R>) -> Result<()> {
        self.pc.apply(self.choice, self.residual, &self.state, r, z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Backend;
    use crate::element::Element;
    use crate::form::Form;
    use crate::mesh::generate::{MeshOptions, unit_square};
    use crate::physics::PointwiseEval;
    use crate::physics::builtin::{Laplacian, NonlinearDiffusion, Poisson};
    use crate::quadrature::Quadrature;

    fn setup<P: PointwiseEval<f64> + 'static>(
        n: usize,
        order: usize,
        physics: P,
        constants: &[f64],
    ) -> Operator<f64> {
        let mesh = unit_square(
            n,
            &MeshOptions {
                jitter: 0.1,
                shuffle: true,
                seed: 3,
            },
        )
        .unwrap();
        let space =
            FunctionSpace::new(mesh.into(), Element::lagrange(2, order).unwrap(), 1).unwrap();
        let q = Quadrature::simplex(2, 2 * order).unwrap();
        let form = Form::new(space, physics)
            .and_then(|f| f.with_quadrature(q))
            .and_then(|f| f.with_constants(constants))
            .unwrap();
        Operator::new(form, &Backend::native()).unwrap()
    }

    #[test]
    fn reproduces_linear_and_quadratic_harmonic_functions() {
        // u = 1 + 2x − y is harmonic and in P1: P1 reproduces it exactly;
        // u = x² − y² is harmonic and in P2.
        let g1 = |x: &[f64], o: &mut [f64]| o[0] = 1.0 + 2.0 * x[0] - x[1];
        let g2 = |x: &[f64], o: &mut [f64]| o[0] = x[0] * x[0] - x[1] * x[1];
        for (order, g) in [(1, &g1 as &(dyn Fn(&[f64], &mut [f64]) + Sync)), (2, &g2)] {
            for pc in [
                Preconditioner::default(),
                Preconditioner::Jacobi,
                Preconditioner::None,
            ] {
                let r = setup(6, order, Laplacian, &[]);
                let mut p = DirichletProblem::on_boundary(r, g).unwrap();
                p.set_preconditioner(pc.clone());
                assert!(p.n_free() > 0 && !p.fixed_dofs().dofs().is_empty());
                let (u, stats) = p.solve_linear(1e-13, 500).unwrap();
                let exact = p.space().interpolate(g);
                let err = u
                    .to_host()
                    .unwrap()
                    .iter()
                    .zip(&exact)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(err < 1e-11, "P{order} {pc:?}: max error {err}, {stats:?}");
                // one evaluation for F(u_D); the products are Jacobian actions
                assert_eq!(p.evaluations(), 1);
                match pc {
                    // one mesh: the multigrid's coarsest level is the problem
                    // (P1: an exact solve, one iteration), or one P2 → P1 step
                    Preconditioner::Multigrid(_) => {
                        assert!(stats.iterations <= [1, 15][order - 1], "{stats:?}");
                        let report = p.multigrid().and_then(Multigrid::report).unwrap();
                        assert_eq!(report.levels.len(), order);
                    }
                    _ => assert!(stats.iterations > 10, "{stats:?}"),
                }
            }
        }
    }

    #[test]
    fn constrained_residual_vanishes_at_the_solution_and_fixed_values_are_kept() {
        let r = setup(5, 2, Poisson, &[3.0]);
        let mut p = DirichletProblem::on_boundary(r, |x, o| o[0] = x[0]).unwrap();
        let (u, _) = p.solve_linear(1e-12, 500).unwrap();
        let mut r_sol = p.operator().vector().unwrap();
        p.constrained_residual(&u, &mut r_sol).unwrap();
        // at u_D (zero free values) the residual is the right-hand side
        let base = p.operator().vector_from(p.fixed_values()).unwrap();
        let mut r0 = p.operator().vector().unwrap();
        p.constrained_residual(&base, &mut r0).unwrap();
        let (rn, r0n) = (r_sol.norm2().unwrap(), r0.norm2().unwrap());
        assert!(rn < 1e-10 * r0n, "{rn} vs {r0n}");
        // fixed values are kept, and the fixed rows of G vanish at them
        let uh = u.to_host().unwrap();
        let rh = r0.to_host().unwrap();
        for &d in p.fixed_dofs().dofs() {
            assert_eq!(uh[d as usize], p.fixed_values()[d as usize]);
            assert_eq!(rh[d as usize], 0.0);
        }
    }

    #[test]
    fn nonlinear_solve_matches_the_exact_transform() {
        // −∇·((1+u²)∇u) = ΔK(u) with the Kirchhoff transform K(u) = u + u³/3,
        // so u = K⁻¹(1 + x) solves the equation exactly (K(u) is harmonic).
        // It is not a polynomial: P2 approximates it; Newton must converge
        // and the nodal values must be close.
        let r = setup(8, 2, NonlinearDiffusion, &[]);
        let k_inv = |k: f64| {
            // solve u + u³/3 = k by Newton
            let mut u = k;
            for _ in 0..50 {
                u -= (u + u * u * u / 3.0 - k) / (1.0 + u * u);
            }
            u
        };
        let g = move |x: &[f64], o: &mut [f64]| o[0] = k_inv(1.0 + x[0]);
        let mut p = DirichletProblem::on_boundary(r, g).unwrap();
        let exact = p.space().interpolate(g);
        // the products asked for are the products used: exact ones count
        // Jacobian actions and one residual per step and line-search trial;
        // differences, no action and one more residual per GMRES iteration
        let mut solutions = Vec::new();
        for products in [JacobianProducts::Exact, JacobianProducts::Differences] {
            let cycles = |p: &DirichletProblem<f64>| p.multigrid().map_or(0, Multigrid::cycles);
            let (before, cycles_before) = (p.evaluations(), cycles(&p));
            let (u, stats) = p
                .solve_nonlinear(None, products, &NewtonOptions::default())
                .unwrap();
            assert!(stats.iterations <= 8, "{products:?}: {stats:?}");
            let gmres: usize = stats.linear_iterations.iter().sum();
            match products {
                JacobianProducts::Exact => {
                    assert!(stats.jacobian_products >= gmres, "{stats:?}");
                    let halvings: usize = stats
                        .step_lengths
                        .iter()
                        .map(|l| (-l.log2()).round() as usize)
                        .sum();
                    assert_eq!(
                        stats.residual_evaluations,
                        1 + stats.iterations + halvings,
                        "{stats:?}"
                    );
                }
                JacobianProducts::Differences => {
                    assert_eq!(stats.jacobian_products, 0, "{stats:?}");
                    assert!(stats.residual_evaluations > gmres, "{stats:?}");
                }
            }
            assert_eq!(p.evaluations() - before, stats.residual_evaluations);
            // every GMRES iteration is preconditioned by a V-cycle
            assert!(cycles(&p) - cycles_before >= gmres, "{stats:?}");
            solutions.push(u.to_host().unwrap());
        }
        let u = &solutions[0];
        let err = u
            .iter()
            .zip(&exact)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let diff = u
            .iter()
            .zip(&solutions[1])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(
            diff < 1e-6,
            "exact and difference products differ by {diff}"
        );
        assert!(err < 1e-3, "max nodal error {err}");
    }

    /// A residual that does not depend on `u`: its Jacobian is zero.
    #[crate::pointwise]
    fn free_of_u<const D: usize>(x: &[f64; D], f0: &mut [f64; 1]) {
        f0[0] = 1.0 + x[0];
    }

    /// A singular Jacobian met by Newton's GMRES is reported as the
    /// physics' (the argument the user passed), not as an error of a
    /// `jacobian` argument that solve_nonlinear makes itself.
    #[test]
    fn a_singular_jacobian_in_newton_names_the_physics() {
        let r = setup(3, 1, FreeOfU, &[]);
        let mut p = DirichletProblem::on_boundary(r, |_, g| g[0] = 0.0).unwrap();
        p.set_preconditioner(Preconditioner::None);
        let e = p
            .solve_nonlinear(None, JacobianProducts::Exact, &NewtonOptions::default())
            .unwrap_err();
        let text = e.to_string();
        assert!(
            matches!(
                e,
                Error::InvalidArgument {
                    name: "physics",
                    ..
                }
            ) && text.contains(
                "Newton–Krylov on `free_of_u`: the Jacobian at Newton step 1, in its GMRES \
                     solve: the operator is singular"
            ),
            "{text}"
        );
    }

    /// `set_constants` reaches every multigrid level: Lamé with `μ`, `λ`
    /// scaled by 100 scales `A` and `b = −A u_D` alike, so CG (with the
    /// multigrid built for the first solve, every level's Jacobian scaled
    /// too) takes the same iterations to the same solution. Coarse levels
    /// left at the old constants would make the V-cycle a worse
    /// preconditioner, not a scaled one.
    #[test]
    fn set_constants_reaches_every_multigrid_level() {
        use crate::multigrid::MeshHierarchy;
        use crate::physics::builtin::Lame;
        let coarse = unit_square(2, &MeshOptions::default()).unwrap();
        let hierarchy = MeshHierarchy::new(&coarse, 2).unwrap();
        let space = FunctionSpace::new(
            hierarchy.finest().clone(),
            Element::lagrange(2, 1).unwrap(),
            2,
        )
        .unwrap();
        let form = Form::new(space, Lame)
            .and_then(|f| f.with_constants(&[1.0, 1.0]))
            .unwrap();
        let op = Operator::<f64>::new(form, &Backend::native()).unwrap();
        let g = |x: &[f64], o: &mut [f64]| {
            o[0] = 0.1 * x[1] * x[1];
            o[1] = 0.1 * x[0] * x[1];
        };
        let mut p = DirichletProblem::on_hierarchy(op, hierarchy, g).unwrap();
        let (u1, s1) = p.solve_linear(1e-10, 200).unwrap();
        let report = p.multigrid().and_then(Multigrid::report).unwrap();
        assert_eq!(report.levels.len(), 3);
        p.set_constants(&[100.0, 100.0]).unwrap();
        let (u2, s2) = p.solve_linear(1e-10, 200).unwrap();
        assert_eq!(s1.iterations, s2.iterations, "{s1:?} {s2:?}");
        let (u1, u2) = (u1.to_host().unwrap(), u2.to_host().unwrap());
        let diff = u1
            .iter()
            .zip(&u2)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff < 1e-12, "{diff}");
    }

    /// The constraints keep the fixed dofs increasing and once each, `u_D`
    /// their values and 0 elsewhere, and the constrained residual
    /// `r_D = u_D − g_D` reads them where the operator lives.
    #[test]
    fn constraints_are_sorted_unique_with_their_values() {
        let r = setup(2, 1, Laplacian, &[]);
        let n = r.space().n_dofs();
        let values: Vec<f64> = (0..n).map(|i| 10.0 + i as f64).collect();
        let mut p = DirichletProblem::new(r, &[5, 1, 5, 3, 1], &values).unwrap();
        assert_eq!(p.fixed_dofs().dofs(), &[1, 3, 5]);
        assert_eq!(p.n_free(), n - 3);
        let mut expected = vec![0.0; n];
        for d in [1, 3, 5] {
            expected[d] = values[d];
        }
        assert_eq!(p.fixed_values(), expected.as_slice());
        // at u = 0: r_d = 0 − g_d on the fixed dofs
        let zero = p.operator().vector().unwrap();
        let mut out = p.operator().vector().unwrap();
        p.constrained_residual(&zero, &mut out).unwrap();
        let out = out.to_host().unwrap();
        for d in [1, 3, 5] {
            assert_eq!(out[d], -values[d], "dof {d}");
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let r = setup(2, 1, Laplacian, &[]);
        let n = r.space().n_dofs();
        let e = DirichletProblem::new(r, &[n as u32], &vec![0.0; n])
            .err()
            .unwrap();
        assert!(e.to_string().contains("out of range"), "{e}");
        let r = setup(2, 1, Laplacian, &[]);
        let mut v = vec![0.0; n];
        v[0] = f64::NAN;
        assert!(DirichletProblem::new(r, &[0], &v).is_err());
        // the first non-finite value of a fixed dof is named, by dof order;
        // the values of free dofs are not read
        let mut v = vec![1.0; n];
        v[0] = f64::NAN;
        v[2] = f64::INFINITY;
        v[5] = f64::NAN;
        let r = setup(2, 1, Laplacian, &[]);
        let e = DirichletProblem::new(r, &[5, 1, 2], &v).err().unwrap();
        assert!(
            matches!(
                e,
                Error::NonFinite {
                    name: "values (fixed entries)",
                    index: 2,
                    ..
                }
            ),
            "{e:?}"
        );
        v[2] = 2.0;
        v[5] = 5.0;
        let r = setup(2, 1, Laplacian, &[]);
        let p = DirichletProblem::new(r, &[5, 1, 2], &v).unwrap();
        let base = p.constraints.values();
        let want: Vec<f64> = (0..n)
            .map(|d| if [1, 2, 5].contains(&d) { v[d] } else { 0.0 })
            .collect();
        assert_eq!(base, want);
        let r = setup(2, 1, Laplacian, &[]);
        let mut p = DirichletProblem::new(r, &[0], &vec![0.0; n]).unwrap();
        let short = Vector::from(vec![0.0; 1]);
        let mut out = p.operator().vector().unwrap();
        let e = p
            .constrained_residual(&short, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`u`"), "{e}");
        let mut bad = vec![0.0; n];
        bad[3] = f64::INFINITY;
        let bad = Vector::from(bad);
        let e = p
            .constrained_residual(&bad, &mut out)
            .unwrap_err()
            .to_string();
        assert!(e.contains("`u`") && e.contains("index 3"), "{e}");
    }
}
