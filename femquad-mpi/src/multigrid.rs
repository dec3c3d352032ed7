//! [`DistMultigrid`]: geometric multigrid over MPI ranks — every level of a
//! [`DistHierarchy`] smoothed on each rank's cells, the coarsest gathered to
//! rank 0 and solved there with faer, the solution broadcast. The
//! preconditioner of femquad's [`cg`](femquad::solve::cg) and
//! [`gmres`](femquad::solve::gmres) on [`DistVector`]s
//! ([`solve_linear_preconditioned`](crate::solve::solve_linear_preconditioned)).
//!
//! # The cycle
//! femquad's V-cycle ([`femquad::multigrid::Multigrid`]), level by level the
//! same operations on distributed vectors; with `A_l` the Jacobian of level
//! `l` at the state injected there, its fixed (Dirichlet) rows and columns
//! the identity's:
//!
//! ```text
//! cycle(l, b):  if l = 0: gather b to rank 0, x = A_0⁻¹ b there, broadcast x
//!               x = S_l(b, 0)                 Chebyshev–Jacobi pre-smoothing
//!               b_c = P_lᵀ (b − A_l x)        restriction, fixed coarse dofs zeroed
//!               x = x + P_l cycle(l − 1, b_c) coarse correction, fixed dofs zeroed
//!               x = S_l(b, x)                 post-smoothing
//! M⁻¹ b = cycle(L, b with b_D = 0), then x_D = b_D.
//! ```
//!
//! * `S_l`: femquad's [`Chebyshev`] on each rank's local entries, with
//!   femquad's [`PointBlockJacobi`] of the level's point-block diagonal
//!   (ghosts accumulated into owners, then updated back: every rank inverts
//!   the full blocks of its ghosts too) and `A_l` the distributed
//!   [`DistOperator::jacobian_action`]; the smoother's interval
//!   `[lower·λ̂, upper·λ̂]` from femquad's Lanczos estimate
//!   ([`estimate_eigenvalues_of`]) on distributed vectors — global inner
//!   products, so every rank smooths with the same polynomial.
//! * `P_l`, `P_lᵀ`: femquad's [`Transfer`] of each rank's nested local
//!   meshes ([`LocalRefinement`]), in the refined mesh's order (a gather and
//!   a scatter to and from the fine layout's order). Prolongation updates
//!   the coarse ghosts first, then every rank interpolates all its fine
//!   vertices (owned and ghosts). Restriction applies each rank's local
//!   `Pᵀ` to the **owned** fine entries only (ghost entries zeroed first, so
//!   each fine vertex is counted once, by its owner) and accumulates the
//!   coarse ghosts' sums into their owners.
//! * `A_0⁻¹`: every rank's element matrices of the coarsest level
//!   ([`DistOperator::assemble_jacobian_entries`]) sent to rank 0, summed
//!   there into one matrix and factored by femquad's [`CoarseSolver`]
//!   (faer); each coarse solve gathers the right-hand side's owned entries to
//!   rank 0 and broadcasts the solution. Measured against agglomeration:
//!   not yet (one gathered level only).
//!
//! # Start vectors
//! The Lanczos estimate of level `l` starts from `x_i = h(coordinates of
//! i's vertex, component, seed + l)` ([`coordinate_random`]), a hash of the
//! vertex's coordinates: the same vector whatever the number of ranks and
//! the numbering, so the smoothers, and hence the iteration counts, do not
//! depend on the partition (up to rounding in the estimate).
//!
//! # Limits
//! P1 fields (as [`DistOperator`]); the options' assembled levels and
//! profiling are refused (every level is matrix-free).

use std::rc::Rc;
use std::time::Instant;

use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;

use femquad::backend::{Backend, IndexSet, MultigridKernels, Vector};
use femquad::form::Form;
use femquad::linalg::{FixedDofs, LinearOperator};
use femquad::multigrid::{
    Chebyshev, ChebyshevWork, CoarseSolver, LevelReport, MultigridOptions, OnFixed,
    PointBlockJacobi, Transfer, estimate_eigenvalues_of, smoother_setup_error,
};
use femquad::space::FunctionSpace;
use femquad::sparse::CsrMatrix;
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

use crate::comm::Ranks;
use crate::hierarchy::{DistHierarchy, LocalRefinement};
use crate::operator::DistOperator;
use crate::vector::DistVector;

/// Message tag of the coarse matrix's entries sent to rank 0.
const TAG_COARSE: i32 = 20;

/// Geometric multigrid over the levels of a [`DistHierarchy`] (see the
/// [module documentation](self)): a [`LinearOperator`] on the finest
/// level's [`DistVector`]s after [`DistMultigrid::setup`].
pub struct DistMultigrid<R: Real> {
    options: MultigridOptions,
    /// Coarsest first.
    levels: Vec<Level<R>>,
    /// `transfers[l]` between levels `l` and `l + 1`.
    transfers: Vec<LevelTransfer<R>>,
    coarse: CoarseLevel,
    /// The finest right-hand side with its fixed entries zeroed.
    masked_b: DistVector<R>,
    ready: bool,
    /// V-cycles applied so far.
    cycles: usize,
    times: MultigridTimes,
}

/// Host wall times of a [`DistMultigrid`] on this rank, in seconds
/// ([`DistMultigrid::times`]), for explaining a solve's time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MultigridTimes {
    /// The last [`DistMultigrid::setup`] less its coarse factorization:
    /// the state injected to every level, each level's point-block
    /// diagonal, Jacobi and eigenvalue estimate (the smoothers).
    pub smoothers: f64,
    /// The last setup's coarse factorization: the coarsest Jacobian
    /// assembled, gathered to rank 0 and factored there.
    pub coarse_factorization: f64,
    /// The coarse solves since the last setup, summed: each from the
    /// device work before it finished (which its gather would wait for
    /// anyway) to the solution's upload — the gather of the right-hand
    /// side to rank 0, the solve there, the broadcast and the upload.
    pub coarse_solves: f64,
}

/// One level: its operator, state, fixed entries, and (above the coarsest,
/// after a setup) smoother and work vectors.
struct Level<R: Real> {
    op: DistOperator<R>,
    state: DistVector<R>,
    /// The fixed local entries (owned and ghosts).
    fixed: IndexSet,
    report: LevelReport,
    smoother: Option<(PointBlockJacobi<R>, Chebyshev)>,
    /// Above the coarsest.
    work: Option<Work<R>>,
}

/// The vectors of a level above the coarsest.
struct Work<R: Real> {
    smoother: ChebyshevWork<R>,
    residual: DistVector<R>,
    /// The action's input and output inside the smoother.
    action_in: DistVector<R>,
    action_out: DistVector<R>,
    /// Of the level below.
    coarse_b: DistVector<R>,
    coarse_x: DistVector<R>,
}

/// The transfer between one rank's nested local meshes.
struct LevelTransfer<R: Real> {
    /// In the refined mesh's order (coarse local vertices, then midpoints).
    transfer: Transfer<R>,
    /// Fine layout entry of each refined entry.
    fine_of: IndexSet,
    /// Fine layout entry of each coarse local entry (the injection).
    inject: IndexSet,
    /// The refined entries of fine ghost vertices.
    ghosts: IndexSet,
    /// A fine vector in the refined order.
    scratch: Vector<R>,
}

/// The coarsest level's direct solve, on rank 0.
struct CoarseLevel {
    /// Rank 0: the coarsest level's fixed dofs (global numbering).
    fixed: Option<FixedDofs>,
    /// Rank 0, after a setup: on the host (the gathered vectors), in `f64`.
    solver: Option<CoarseSolver<f64>>,
}

impl<R: Real + Equivalence> DistMultigrid<R> {
    /// Collective: the multigrid of `hierarchy` for the P1 field of `n_comp`
    /// components whose form `make_form` makes on a level's space, bound on
    /// `backend` on every level; `finest_fixed` marks the fixed (Dirichlet)
    /// local entries of the finest level (a coarser level's vertex is fixed
    /// where it is on the finer level, as in femquad's
    /// [`LevelSpaces::fixed_dofs`](femquad::multigrid::LevelSpaces::fixed_dofs)).
    /// Call [`DistMultigrid::setup`] before applying it.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `finest_fixed` for
    /// another length than the finest level's local entries, `hierarchy` for
    /// a single level (nothing to smooth: use a direct or Jacobi solve),
    /// `options` for assembled levels or profiling (not distributed) or a
    /// coarsest level above `max_coarse_dofs`; those of
    /// [`DistOperator::new`] on every level.
    pub fn new(
        hierarchy: &DistHierarchy,
        n_comp: usize,
        make_form: impl Fn(FunctionSpace) -> Result<Form<R>>,
        backend: &Backend,
        finest_fixed: &[bool],
        options: MultigridOptions,
    ) -> Result<Self> {
        let finest = hierarchy.finest();
        let ranks = finest.ranks();
        let n_finest = finest.layout().n_local() * n_comp;
        let checked = if finest_fixed.len() != n_finest {
            Err(Error::arg(
                "finest_fixed",
                format!(
                    "expected one flag per local entry of the finest level ({n_finest}), got {}",
                    finest_fixed.len()
                ),
            ))
        } else if hierarchy.n_levels() < 2 {
            Err(Error::arg(
                "hierarchy",
                "a multigrid needs at least two levels (refine the coarse mesh once or more)",
            ))
        } else if options.assembled_max_dofs != 0 || options.profile {
            Err(Error::arg(
                "options",
                "assembled_max_dofs and profile are not available over MPI ranks (every \
                 distributed level is matrix-free and unprofiled): leave them at their defaults",
            ))
        } else {
            Ok(())
        };
        ranks.agree(checked)?;
        let n_coarse_global = hierarchy
            .mesh(0)
            .map_or(0, |m| m.layout().n_global_vertices)
            * n_comp;
        if n_coarse_global > options.max_coarse_dofs {
            return Err(Error::arg(
                "options",
                format!(
                    "the coarsest level has {n_coarse_global} dofs, more than max_coarse_dofs = \
                     {}: it is gathered and factored on rank 0. Distribute a coarser mesh and \
                     refine it more, or raise max_coarse_dofs",
                    options.max_coarse_dofs
                ),
            ));
        }
        // fixed masks, finest to coarsest: a coarse vertex is fixed where
        // its fine vertex is
        let n_levels = hierarchy.n_levels();
        let mut masks = vec![finest_fixed.to_vec()];
        for l in (0..n_levels - 1).rev() {
            let refinement = refinement(hierarchy, l)?;
            let n_lc = level_mesh(hierarchy, l)?.layout().n_local();
            let finer = &masks[masks.len() - 1];
            let mask: Vec<bool> = refinement.fine_of[..n_lc]
                .iter()
                .flat_map(|&f| (0..n_comp).map(move |c| f as usize * n_comp + c))
                .map(|e| finer[e])
                .collect();
            masks.push(mask);
        }
        masks.reverse();
        let mut levels = Vec::with_capacity(n_levels);
        for (l, mask) in masks.iter().enumerate() {
            let mesh = level_mesh(hierarchy, l)?;
            let op = DistOperator::new(mesh, 1, n_comp, &make_form, backend)?;
            let state = op.vector()?;
            let entries: Vec<u32> = (0..mask.len() as u32)
                .filter(|&i| mask[i as usize])
                .collect();
            let fixed = ranks.agree(state.index_set(&entries))?;
            let n_owned = mesh.layout().n_owned * n_comp;
            let owned_fixed = entries.iter().filter(|&&i| (i as usize) < n_owned).count();
            let n_fixed: u64 = ranks.all_gather_u64(owned_fixed as u64).iter().sum();
            let work = if l > 0 {
                let below: &Level<R> = &levels[l - 1];
                let like = state.local();
                Some(Work {
                    smoother: ranks.agree(ChebyshevWork::like(like))?,
                    residual: op.vector()?,
                    action_in: op.vector()?,
                    action_out: op.vector()?,
                    coarse_b: below.op.vector()?,
                    coarse_x: below.op.vector()?,
                })
            } else {
                None
            };
            levels.push(Level {
                report: LevelReport {
                    dofs: mesh.layout().n_global_vertices * n_comp,
                    fixed: n_fixed as usize,
                    eigen: None,
                    interval: None,
                },
                op,
                state,
                fixed,
                smoother: None,
                work,
            });
        }
        let transfers = (0..n_levels - 1)
            .map(|l| {
                let refinement = refinement(hierarchy, l)?;
                let n_lc = level_mesh(hierarchy, l)?.layout().n_local();
                let fine = &levels[l + 1];
                let n_fine_owned = fine.op.mesh().layout().n_owned;
                ranks.agree(LevelTransfer::new(
                    refinement,
                    n_lc,
                    n_fine_owned,
                    n_comp,
                    fine.state.local(),
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        // the coarsest level's fixed dofs, on rank 0
        let coarse = &levels[0];
        let mut flags = coarse.op.vector()?;
        let ones: Vec<R> = masks[0]
            .iter()
            .map(|&f| if f { R::ONE } else { R::ZERO })
            .collect();
        ranks.agree(flags.set_local_from_host(&ones))?;
        let fixed = match flags.gather_to_root()? {
            Some(flags) => {
                let dofs: Vec<u32> = (0..flags.len() as u32)
                    .filter(|&i| flags[i as usize] != R::ZERO)
                    .collect();
                Some(FixedDofs::new(flags.len(), &dofs))
            }
            None => None,
        };
        let fixed = ranks.agree(fixed.transpose())?;
        let masked_b = levels[n_levels - 1].op.vector()?;
        Ok(DistMultigrid {
            options,
            levels,
            transfers,
            coarse: CoarseLevel {
                fixed,
                solver: None,
            },
            masked_b,
            ready: false,
            cycles: 0,
            times: MultigridTimes::default(),
        })
    }

    /// Number of levels.
    pub fn n_levels(&self) -> usize {
        self.levels.len()
    }

    /// The options.
    pub fn options(&self) -> &MultigridOptions {
        &self.options
    }

    /// What the last setup found per level, coarsest first (global dofs,
    /// fixed dofs, eigenvalue estimate and smoother interval; the same on
    /// every rank).
    pub fn report(&self) -> Vec<LevelReport> {
        self.levels.iter().map(|l| l.report.clone()).collect()
    }

    /// The V-cycles applied so far (every [`LinearOperator::apply`]).
    pub fn cycles(&self) -> usize {
        self.cycles
    }

    /// This rank's host times of the last setup and of the coarse solves
    /// since ([`MultigridTimes`]).
    pub fn times(&self) -> MultigridTimes {
        self.times
    }

    /// Collective: binds the time state `t`, `u_t = σ·u + b` on every
    /// level's operator ([`DistOperator::set_time`]), `b` injected into the
    /// coarser levels as the state is (their vertices' values), so that each
    /// level's Jacobian is its step Jacobian `σ·∂F/∂u_t + ∂F/∂u` (as
    /// femquad's serial multigrid levels take the finest operator's time
    /// state). The cycle needs a [`DistMultigrid::setup`] afterwards.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `b` for a vector of
    /// another mesh than the finest level's; those of
    /// [`DistOperator::set_time`].
    pub fn set_time(&mut self, t: f64, sigma: f64, b: &DistVector<R>) -> Result<()> {
        self.ready = false;
        let ranks = Ranks::world();
        let n = self.levels.len();
        ranks.agree(
            self.levels[n - 1]
                .state
                .check_compatible("finest state", "b", b),
        )?;
        // the injection reads ghost entries too: make them current
        let mut level_b = b.try_clone()?;
        level_b.ghost_update()?;
        for l in (0..n).rev() {
            if l + 1 < n {
                let mut coarse = self.levels[l].op.vector()?;
                let injected = coarse
                    .local_mut()
                    .gather(level_b.local(), &self.transfers[l].inject);
                ranks.agree(injected)?;
                level_b = coarse;
            }
            self.levels[l].op.set_time(t, sigma, &level_b)?;
        }
        Ok(())
    }

    /// The finest level's operator (its form bound on the finest mesh).
    pub fn finest_operator(&mut self) -> &mut DistOperator<R> {
        let finest = self.levels.len() - 1;
        &mut self.levels[finest].op
    }

    /// Collective: linearizes every level at the finest state `u` (injected
    /// into the coarser levels: their vertices' values) and sets the cycle
    /// up — point-block Jacobi and the Chebyshev interval of every level
    /// above the coarsest, the coarsest Jacobian gathered and factored on
    /// rank 0 (refactored numerically on later setups).
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `u` for a vector of
    /// another mesh than the finest level's; naming `ops` (with the level)
    /// for a singular point-block diagonal, an operator that is not positive
    /// definite in the eigenvalue estimate, or a coarsest Jacobian that
    /// cannot be factored; naming `fixed` for a level whose dofs are all
    /// fixed; those of the operators.
    pub fn setup(&mut self, u: &DistVector<R>) -> Result<()> {
        self.ready = false;
        self.times = MultigridTimes::default();
        let start = Instant::now();
        let n = self.levels.len();
        let ranks = Ranks::world();
        ranks.agree(
            self.levels[n - 1]
                .state
                .check_compatible("finest state", "u", u),
        )?;
        self.levels[n - 1].state.copy_from(u)?;
        for l in (0..n - 1).rev() {
            let (head, tail) = self.levels.split_at_mut(l + 1);
            let injected = head[l]
                .state
                .local_mut()
                .gather(tail[0].state.local(), &self.transfers[l].inject);
            ranks.agree(injected)?;
        }
        let opts = self.options;
        for (l, level) in self.levels.iter_mut().enumerate().skip(1) {
            let nc = level.op.n_comp();
            let mut blocks = level.op.vector_with(nc * nc)?;
            level.op.jacobian_diagonal(&level.state, &mut blocks)?;
            blocks.ghost_update()?;
            let kernels = ranks.agree(MultigridKernels::like(level.state.local(), nc))?;
            let jacobi = ranks
                .agree(PointBlockJacobi::with_kernels(
                    blocks.into_local(),
                    &level.fixed,
                    kernels,
                    // this cycle constrains its operator (copy_at after each product)
                    OnFixed::Identity,
                ))
                .map_err(|e| smoother_setup_error(e, l))?;
            let mut start = level.op.vector()?;
            let layout = level.op.mesh().layout();
            let dim = layout.dim;
            let seed = opts.seed.wrapping_add(l as u64);
            let values: Vec<R> = layout
                .coordinates
                .chunks_exact(dim.max(1))
                .flat_map(|x| (0..nc).map(move |c| R::from_f64(coordinate_random(x, c, seed))))
                .collect();
            ranks.agree(start.set_local_from_host(&values))?;
            ranks.agree(start.local_mut().set_at(&level.fixed, 0.0))?;
            let Level {
                op, state, fixed, ..
            } = level;
            let mut a = |v: &DistVector<R>, y: &mut DistVector<R>| -> Result<()> {
                op.jacobian_action(state, v, y)?;
                Ranks::world().agree(y.local_mut().copy_at(fixed, v.local()))
            };
            let mut precondition = |r: &DistVector<R>, z: &mut DistVector<R>| -> Result<()> {
                Ranks::world().agree(jacobi.apply(r.local(), z.local_mut()))
            };
            let eigen =
                estimate_eigenvalues_of(&mut a, &mut precondition, &start, opts.eigen_steps)
                    .map_err(|e| smoother_setup_error(e, l))?;
            let chebyshev =
                Chebyshev::new(opts.lower * eigen.max, opts.upper * eigen.max, opts.degree)
                    .map_err(|e| {
                        Error::arg("options", format!("the smoother of level {l}: {e}"))
                    })?;
            level.report.eigen = Some(eigen);
            level.report.interval = Some(chebyshev.interval());
            level.smoother = Some((jacobi, chebyshev));
        }
        let smoothed = Instant::now();
        self.setup_coarse(&ranks)?;
        self.times.smoothers = (smoothed - start).as_secs_f64();
        self.times.coarse_factorization = smoothed.elapsed().as_secs_f64();
        self.ready = true;
        Ok(())
    }

    /// Gathers the coarsest Jacobian to rank 0 and factors it there.
    fn setup_coarse(&mut self, ranks: &Ranks) -> Result<()> {
        let level = &mut self.levels[0];
        let entries = level.op.assemble_jacobian_entries(&level.state)?;
        let comm = ranks.comm();
        let n = level.report.dofs;
        if ranks.rank() != 0 {
            let root = comm.process_at_rank(0);
            let index: Vec<u64> = entries
                .iter()
                .flat_map(|&(i, j, _)| [i as u64, j as u64])
                .collect();
            let values: Vec<f64> = entries.iter().map(|e| e.2).collect();
            root.send_with_tag(&index[..], TAG_COARSE);
            root.send_with_tag(&values[..], TAG_COARSE);
            return ranks.agree(Ok(()));
        }
        let mut all = entries;
        for q in 1..ranks.size() {
            let from = comm.process_at_rank(q as i32);
            let (index, _) = from.receive_vec_with_tag::<u64>(TAG_COARSE);
            let (values, _) = from.receive_vec_with_tag::<f64>(TAG_COARSE);
            all.extend(
                index
                    .chunks_exact(2)
                    .zip(values)
                    .map(|(ij, v)| (ij[0] as usize, ij[1] as usize, v)),
            );
        }
        let factored = (|| {
            let matrix = CsrMatrix::from_triplets(n, n, &all)?;
            let factorization = self.options.factorization;
            match self.coarse.solver.take() {
                Some(mut c) if c.factorization() == factorization && c.same_pattern(&matrix) => {
                    c.refactor(matrix)?;
                    Ok(c)
                }
                _ => {
                    let fixed = self
                        .coarse
                        .fixed
                        .clone()
                        .ok_or_else(|| Error::internal("rank 0 has no coarse fixed dofs"))?;
                    CoarseSolver::new(matrix, fixed, factorization, &MultigridKernels::host(1)?, 0)
                }
            }
        })()
        .map_err(coarse_error);
        self.coarse.solver = Some(ranks.agree(factored)?);
        Ok(())
    }
}

impl<R: Real + Equivalence> LinearOperator<DistVector<R>> for DistMultigrid<R> {
    /// One V-cycle `x = M⁻¹ b` (collective).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `multigrid` before a successful
    /// [`DistMultigrid::setup`], `b` or `x` for vectors of another mesh than
    /// the finest level's; those of the operators and the coarse solve.
    fn apply(&mut self, b: &DistVector<R>, x: &mut DistVector<R>) -> Result<()> {
        let ranks = Ranks::world();
        if !self.ready {
            return Err(Error::arg(
                "multigrid",
                "applied without a successful DistMultigrid::setup (the smoothers and the \
                 coarse factorization come from the linearized operators)",
            ));
        }
        ranks.agree(self.masked_b.check_compatible("finest vectors", "b", b))?;
        ranks.agree(self.masked_b.check_compatible("finest vectors", "x", x))?;
        let finest = self.levels.len() - 1;
        self.masked_b.copy_from(b)?;
        let fixed = &self.levels[finest].fixed;
        ranks.agree(self.masked_b.local_mut().set_at(fixed, 0.0))?;
        cycle(
            &ranks,
            &mut self.levels,
            &mut self.transfers,
            &mut self.coarse,
            &self.masked_b,
            x,
            &mut self.times.coarse_solves,
        )?;
        let fixed = &self.levels[finest].fixed;
        ranks.agree(x.local_mut().copy_at(fixed, b.local()))?;
        self.cycles += 1;
        Ok(())
    }
}

/// `x = cycle(l, b)` with `l` the last of `levels` (see the [module
/// documentation](self)).
fn cycle<R: Real + Equivalence>(
    ranks: &Ranks,
    levels: &mut [Level<R>],
    transfers: &mut [LevelTransfer<R>],
    coarse: &mut CoarseLevel,
    b: &DistVector<R>,
    x: &mut DistVector<R>,
    coarse_seconds: &mut f64,
) -> Result<()> {
    let Some((level, below)) = levels.split_last_mut() else {
        return Err(Error::internal("a multigrid cycle without levels"));
    };
    let Some((transfer, transfers_below)) = transfers.split_last_mut() else {
        // the gather waits for the device work before it anyway: finished
        // first, so that the time is the coarse solve's own
        ranks.agree(b.local().finish())?;
        let start = Instant::now();
        let solved = coarse.solve(ranks, b, x);
        *coarse_seconds += start.elapsed().as_secs_f64();
        return solved;
    };
    let Level {
        op,
        state,
        fixed,
        smoother: Some((jacobi, chebyshev)),
        work: Some(w),
        ..
    } = level
    else {
        return Err(Error::internal("a multigrid level without its smoother"));
    };
    let below_fixed = &below[below.len() - 1].fixed;
    // pre-smoothing from zero, then the residual
    let smoothed = {
        let mut a = local_action(op, state, fixed, &mut w.action_in, &mut w.action_out);
        chebyshev.smooth(
            &mut a,
            jacobi,
            b.local(),
            x.local_mut(),
            true,
            &mut w.smoother,
        )
    };
    ranks.agree(smoothed)?;
    op.jacobian_action(state, x, &mut w.residual)?;
    ranks.agree(w.residual.local_mut().copy_at(fixed, x.local()))?;
    w.residual.axpby(1.0, b, -1.0)?;
    // coarse correction
    transfer.restrict(ranks, &mut w.coarse_b, &w.residual)?;
    ranks.agree(w.coarse_b.local_mut().set_at(below_fixed, 0.0))?;
    cycle(
        ranks,
        below,
        transfers_below,
        coarse,
        &w.coarse_b,
        &mut w.coarse_x,
        coarse_seconds,
    )?;
    transfer.prolong_add(ranks, x, &mut w.coarse_x)?;
    ranks.agree(x.local_mut().set_at(fixed, 0.0))?;
    // post-smoothing
    let smoothed = {
        let mut a = local_action(op, state, fixed, &mut w.action_in, &mut w.action_out);
        chebyshev.smooth(
            &mut a,
            jacobi,
            b.local(),
            x.local_mut(),
            false,
            &mut w.smoother,
        )
    };
    ranks.agree(smoothed)
}

/// The constrained distributed Jacobian of a level as an action on its
/// local entries (for femquad's [`Chebyshev::smooth`]): `y = A v` with the
/// fixed rows the identity's, through the DistVectors `v_in`, `y_out`.
fn local_action<'a, R: Real + Equivalence>(
    op: &'a mut DistOperator<R>,
    state: &'a DistVector<R>,
    fixed: &'a IndexSet,
    v_in: &'a mut DistVector<R>,
    y_out: &'a mut DistVector<R>,
) -> impl FnMut(&Vector<R>, &mut Vector<R>) -> Result<()> + 'a {
    move |v, y| {
        let ranks = Ranks::world();
        ranks.agree(v_in.local_mut().copy_from(v))?;
        op.jacobian_action(state, v_in, y_out)?;
        ranks.agree(
            y.copy_from(y_out.local())
                .and_then(|()| y.copy_at(fixed, v)),
        )
    }
}

impl<R: Real + Equivalence> LevelTransfer<R> {
    /// The transfer of `refinement` (`n_lc` coarse local vertices; the fine
    /// layout owns its first `n_fine_owned` vertices) for `n_comp`
    /// components, where `fine_like` (a fine local vector) lives.
    fn new(
        refinement: &LocalRefinement,
        n_lc: usize,
        n_fine_owned: usize,
        n_comp: usize,
        fine_like: &Vector<R>,
    ) -> Result<Self> {
        let entries = |nodes: &[u32]| -> Vec<u32> {
            nodes
                .iter()
                .flat_map(|&f| (0..n_comp as u32).map(move |c| f * n_comp as u32 + c))
                .collect()
        };
        let fine_of = entries(&refinement.fine_of);
        let ghosts: Vec<u32> = (0..fine_of.len() as u32)
            .filter(|&i| fine_of[i as usize] as usize >= n_fine_owned * n_comp)
            .collect();
        let kernels = MultigridKernels::like(fine_like, n_comp)?;
        let transfer =
            Transfer::new(n_lc, refinement.edges.clone(), n_comp)?.with_kernels(&kernels)?;
        Ok(LevelTransfer {
            transfer,
            inject: IndexSet::located_like(fine_like, &fine_of[..n_lc * n_comp])?,
            ghosts: IndexSet::located_like(fine_like, &ghosts)?,
            scratch: fine_like.zeros_like()?,
            fine_of: IndexSet::located_like(fine_like, &fine_of)?,
        })
    }

    /// `fine ← fine + P coarse` on every local fine entry (coarse ghosts
    /// updated first).
    fn prolong_add(
        &mut self,
        ranks: &Ranks,
        fine: &mut DistVector<R>,
        coarse: &mut DistVector<R>,
    ) -> Result<()> {
        coarse.ghost_update()?;
        let s = &mut self.scratch;
        let done = s
            .gather(fine.local(), &self.fine_of)
            .and_then(|()| self.transfer.prolong_add(s, coarse.local()))
            .and_then(|()| fine.local_mut().scatter(&self.fine_of, s));
        ranks.agree(done)
    }

    /// `coarse ← Pᵀ fine` over all ranks: each rank's local `Pᵀ` of its
    /// owned fine entries, then the coarse ghosts' sums added to their
    /// owners.
    fn restrict(
        &mut self,
        ranks: &Ranks,
        coarse: &mut DistVector<R>,
        fine: &DistVector<R>,
    ) -> Result<()> {
        let s = &mut self.scratch;
        let done = s
            .gather(fine.local(), &self.fine_of)
            .and_then(|()| s.set_at(&self.ghosts, 0.0))
            .and_then(|()| self.transfer.restrict(coarse.local_mut(), s));
        ranks.agree(done)?;
        coarse.ghost_accumulate()
    }
}

impl CoarseLevel {
    /// `x = A_0⁻¹ b`: `b`'s owned entries gathered to rank 0, solved there,
    /// the solution broadcast and every rank's local entries (ghosts too)
    /// taken from it.
    fn solve<R: Real + Equivalence>(
        &mut self,
        ranks: &Ranks,
        b: &DistVector<R>,
        x: &mut DistVector<R>,
    ) -> Result<()> {
        let gathered = b.gather_to_root()?;
        let mut solution: Vec<f64> = Vec::new();
        let solved = match (gathered, self.solver.as_mut()) {
            (Some(b), Some(solver)) => {
                let mut xs = Vector::host_zeros(b.len());
                let b = Vector::Host(b.iter().map(|v| v.to_f64()).collect());
                solver.solve(&b, &mut xs).and_then(|()| {
                    solution = xs.to_host()?;
                    Ok(())
                })
            }
            (Some(_), None) => Err(Error::internal("rank 0 has no coarse factorization")),
            (None, _) => Ok(()),
        };
        ranks.agree(solved)?;
        ranks.broadcast_f64s(&mut solution);
        let k = x.per_node();
        let layout = x.mesh().layout();
        let local: Vec<R> = layout
            .global_vertices
            .iter()
            .flat_map(|&g| (0..k).map(move |c| g as usize * k + c))
            .map(|i| R::from_f64(solution[i]))
            .collect();
        ranks.agree(x.set_local_from_host(&local))
    }
}

/// `x_i ∈ [−1, 1)` for component `component` of the vertex at `x`: 24 bits
/// of SplitMix64 of the coordinates' bits, the component and `seed` — the
/// start vectors of the distributed eigenvalue estimates, the same on every
/// rank holding the vertex and for every partition and numbering.
pub fn coordinate_random(x: &[f64], component: usize, seed: u64) -> f64 {
    let mut h = seed ^ 0x9e37_79b9_7f4a_7c15;
    for &xi in x {
        h = splitmix64(h ^ xi.to_bits());
    }
    h = splitmix64(h ^ component as u64);
    // 24 bits: exact in f32 and f64
    ((h >> 40) as f64) / (1u64 << 23) as f64 - 1.0
}

/// SplitMix64's output function of `state + φ`.
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The mesh of level `l` of `hierarchy`.
fn level_mesh(hierarchy: &DistHierarchy, l: usize) -> Result<&Rc<crate::DistMesh>> {
    hierarchy
        .mesh(l)
        .ok_or_else(|| Error::internal(format!("no level {l} in the hierarchy")))
}

/// The refinement from level `l` of `hierarchy`.
fn refinement(hierarchy: &DistHierarchy, l: usize) -> Result<&LocalRefinement> {
    hierarchy
        .refinement(l)
        .ok_or_else(|| Error::internal(format!("no refinement from level {l}")))
}

/// An error of the coarse factorization as the setup's: about the coarsest
/// operator.
fn coarse_error(e: Error) -> Error {
    match e {
        Error::InvalidArgument {
            name: "matrix",
            reason,
        } => Error::arg(
            "ops",
            format!("the operator of the coarsest multigrid level (level 0, on rank 0): {reason}"),
        ),
        other => other,
    }
}
