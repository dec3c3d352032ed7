//! [`DistMultigrid`]: geometric multigrid over MPI ranks — the levels of a
//! [`DistHierarchy`] above the agglomerated level `L_a` smoothed on each
//! rank's cells, levels `0..=L_a` gathered onto rank 0 and cycled there by
//! femquad's serial multigrid ([`crate::agglomerate`]). The
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
//! cycle(l, b):  if l = L_a: gather b to rank 0, x = M_a⁻¹ b there, scatter x
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
//! * `M_a⁻¹`: one V-cycle of femquad's serial multigrid
//!   ([`OperatorLevels`]) on levels `0..=L_a`, rebuilt on rank 0 from the
//!   gathered coarse mesh ([`crate::agglomerate`]: the mesh, the vertex
//!   map, the serial options of [`Agglomeration`]); the right-hand side's
//!   owned entries gathered to rank 0, every rank's local entries of the
//!   result scattered back. `L_a` = [`Agglomeration::level`], by default
//!   the finest level below the finest with at most
//!   [`AGGLOMERATE_MAX_DOFS`](crate::agglomerate::AGGLOMERATE_MAX_DOFS)
//!   global dofs; with `L_a = 0` the serial multigrid is the coarsest
//!   level's direct solve (femquad's
//!   [`CoarseSolver`](femquad::multigrid::CoarseSolver), faer), the one
//!   gathered level of this crate before agglomeration. Why: each
//!   distributed level costs about six halo exchanges a cycle (smoothing
//!   steps, residual, transfers), each a device → host → MPI → device
//!   round trip of ~0.25 ms on an H100 host, while a small level's own work
//!   takes microseconds; rank 0's one device cycles the small levels
//!   without any (PETSc's telescope and GAMG, hypre and MFEM agglomerate
//!   alike). The agglomerated level that is fastest at a given size is
//!   measured by `femquad-mpi-bench --solve L --agglomerate-max-dofs N`:
//!   on 4 H100s at 2²⁴ cells a rank (BENCHMARKS.md, session 14) the solve
//!   took 161 ms with `L_a = 0` (`--solve 6`) and 137 ms with `--solve 8`,
//!   the default `L_a` and the dense coarse solve on rank 0 (its serial
//!   part, with pinned, reused host memory for its gather and scatter,
//!   1.5–2.0 ms a cycle); on one rank 86 ms with `L_a = 0`, 98 ms with the
//!   default.
//!
//! # Start vectors
//! The Lanczos estimate of level `l` starts from `x_i = h(coordinates of
//! i's vertex, component, seed + l)` ([`coordinate_random`]), a hash of the
//! vertex's coordinates: the same vector whatever the number of ranks and
//! the numbering, so the smoothers, and hence the iteration counts, do not
//! depend on the partition (up to rounding in the estimate).
//!
//! # Limits
//! P1 fields (as [`DistOperator`]); the distributed levels take the
//! smoother's options only (every distributed level is matrix-free, in the
//! working precision), the serial levels' options take all of femquad's. The seeds of the start
//! vectors differ: the distributed levels' hash coordinates (below), the
//! serial levels' are femquad's (of the serial numbering: the same for
//! every partition).

use std::rc::Rc;
use std::time::Instant;

use mpi::datatype::Equivalence;

use femquad::backend::{Backend, IndexSet, MultigridKernels, Vector};
use femquad::form::Form;
use femquad::linalg::LinearOperator;
use femquad::multigrid::{
    Chebyshev, ChebyshevWork, LevelReport, MeshHierarchy, MultigridOptions, OnFixed,
    OperatorLevels, PointBlockJacobi, Transfer, estimate_eigenvalues_of, smoother_setup_error,
};
use femquad::space::FunctionSpace;
use femquad::vector::VectorOps;
use femquad::{Error, Real, Result};

use crate::agglomerate::{Agglomerated, Agglomeration};
use crate::comm::Ranks;
use crate::hierarchy::{DistHierarchy, LocalRefinement};
use crate::operator::DistOperator;
use crate::vector::DistVector;

/// Geometric multigrid over the levels of a [`DistHierarchy`] (see the
/// [module documentation](self)): a [`LinearOperator`] on the finest
/// level's [`DistVector`]s after [`DistMultigrid::setup`].
pub struct DistMultigrid<R: Real> {
    options: MultigridOptions,
    /// The distributed levels `L_a..=L`, coarsest first (`levels[0]` is
    /// `L_a`: its vectors and state, not smoothed).
    levels: Vec<Level<R>>,
    /// `transfers[i]` between levels `L_a + i` and `L_a + i + 1`.
    transfers: Vec<LevelTransfer<R>>,
    /// Levels `0..=L_a` on rank 0.
    agglomerated: Agglomerated<R>,
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
    /// The last [`DistMultigrid::setup`] less its agglomerated part: the
    /// state injected to every distributed level, each smoothed level's
    /// point-block diagonal, Jacobi and eigenvalue estimate (the
    /// smoothers).
    pub smoothers: f64,
    /// The last setup's agglomerated part: level `L_a`'s state gathered to
    /// rank 0 and the serial levels set up there (smoothers, the coarse
    /// factorization), their reports sent back (on the other ranks: the
    /// wait for rank 0).
    pub agglomerated_setup: f64,
    /// The agglomerated coarse corrections since the last setup, summed:
    /// each from the device work before it finished (which its gather
    /// would wait for anyway) to the result's upload — the gather of the
    /// right-hand side to rank 0, the serial V-cycle there, the scatter
    /// and the upload.
    pub agglomerated_cycles: f64,
}

/// One distributed level: its operator, state, fixed entries, and (above
/// `L_a`, after a setup) smoother and work vectors.
struct Level<R: Real> {
    op: DistOperator<R>,
    state: DistVector<R>,
    /// The fixed local entries (owned and ghosts).
    fixed: IndexSet,
    report: LevelReport,
    smoother: Option<(PointBlockJacobi<R>, Chebyshev)>,
    /// Above `L_a`.
    work: Option<Work<R>>,
}

/// The vectors of a level above `L_a`.
struct Work<R: Real> {
    smoother: ChebyshevWork<R>,
    residual: DistVector<R>,
    /// The action's output inside the smoother.
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

impl<R: Real + Equivalence> DistMultigrid<R> {
    /// Collective: the multigrid of `hierarchy` for the P1 field of `n_comp`
    /// components whose form `make_form` makes on a level's space, bound on
    /// `backend` on every distributed level and on rank 0's serial levels;
    /// `finest_fixed` marks the fixed (Dirichlet) local entries of the
    /// finest level (a coarser level's vertex is fixed where it is on the
    /// finer level, as in femquad's
    /// [`LevelSpaces::fixed_dofs`](femquad::multigrid::LevelSpaces::fixed_dofs));
    /// `options` the distributed levels' smoothers, `agglomeration` the
    /// agglomerated level `L_a` and the serial multigrid's options on
    /// levels `0..=L_a` (see the [module documentation](self)). Call
    /// [`DistMultigrid::setup`] before applying it.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `finest_fixed` for
    /// another length than the finest level's local entries, `hierarchy` for
    /// a single level (nothing to smooth: use a direct or Jacobi solve),
    /// `options` for another option than the smoother's (degree, interval,
    /// eigenvalue steps, seed) off its default (assembled levels,
    /// profiling, the `f32` cycle, the coarse solve's options: the serial
    /// levels' — [`Agglomeration::options`] — not the distributed ones'),
    /// `agglomeration` for a level at or above the finest; those of
    /// [`DistOperator::new`] on every distributed level; those of the
    /// agglomerated levels on rank 0 (the serial multigrid's, e.g. its
    /// `options` for a coarsest level above `max_coarse_dofs`, and a
    /// gathered mesh that does not refine to the distributed level `L_a`,
    /// naming `hierarchy`).
    pub fn new(
        hierarchy: &DistHierarchy,
        n_comp: usize,
        make_form: impl Fn(FunctionSpace) -> Result<Form<R>>,
        backend: &Backend,
        finest_fixed: &[bool],
        options: MultigridOptions,
        agglomeration: Agglomeration,
    ) -> Result<Self> {
        let finest = hierarchy.finest();
        let ranks = finest.ranks();
        let n_finest = finest.layout().n_local() * n_comp;
        let n_levels = hierarchy.n_levels();
        let dofs: Vec<usize> = (0..n_levels)
            .filter_map(|l| hierarchy.mesh(l))
            .map(|m| m.layout().n_global_vertices * n_comp)
            .collect();
        let checked = if finest_fixed.len() != n_finest {
            Err(Error::arg(
                "finest_fixed",
                format!(
                    "expected one flag per local entry of the finest level ({n_finest}), got {}",
                    finest_fixed.len()
                ),
            ))
        } else if n_levels < 2 {
            Err(Error::arg(
                "hierarchy",
                "a multigrid needs at least two levels (refine the coarse mesh once or more)",
            ))
        } else if options != smoother_options(&options) {
            Err(Error::arg(
                "options",
                "only the smoother's options (degree, lower, upper, eigen_steps, seed) apply to \
                 the distributed levels (matrix-free, unprofiled, in the working precision, \
                 without a coarse solve of their own): leave the others at their defaults and \
                 set them for the agglomerated levels in Agglomeration::options",
            ))
        } else {
            agglomeration.level.choose(&dofs)
        };
        let agglomerated_level = ranks.agree(checked)?;
        // fixed masks, finest to L_a: a coarse vertex is fixed where its
        // fine vertex is
        let mut masks = vec![finest_fixed.to_vec()];
        for l in (agglomerated_level..n_levels - 1).rev() {
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
        let agglomerated = Agglomerated::new(
            hierarchy,
            agglomerated_level,
            n_comp,
            &make_form,
            backend,
            &masks[0],
            agglomeration.options,
        )?;
        let mut levels: Vec<Level<R>> = Vec::with_capacity(masks.len());
        for (i, mask) in masks.iter().enumerate() {
            let mesh = level_mesh(hierarchy, agglomerated_level + i)?;
            let op = DistOperator::new(mesh, 1, n_comp, &make_form, backend)?;
            let state = op.vector()?;
            let entries: Vec<u32> = (0..mask.len() as u32)
                .filter(|&i| mask[i as usize])
                .collect();
            let fixed = ranks.agree(state.index_set(&entries))?;
            let n_owned = mesh.layout().n_owned * n_comp;
            let owned_fixed = entries.iter().filter(|&&i| (i as usize) < n_owned).count();
            let n_fixed: u64 = ranks.all_gather_u64(owned_fixed as u64).iter().sum();
            let work = if i > 0 {
                let below = &levels[i - 1];
                let like = state.local();
                Some(Work {
                    smoother: ranks.agree(ChebyshevWork::like(like))?,
                    residual: op.vector()?,
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
        let transfers = (agglomerated_level..n_levels - 1)
            .map(|l| {
                let refinement = refinement(hierarchy, l)?;
                let n_lc = level_mesh(hierarchy, l)?.layout().n_local();
                let fine = &levels[l + 1 - agglomerated_level];
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
        let masked_b = levels[levels.len() - 1].op.vector()?;
        Ok(DistMultigrid {
            options,
            levels,
            transfers,
            agglomerated,
            masked_b,
            ready: false,
            cycles: 0,
            times: MultigridTimes::default(),
        })
    }

    /// Number of levels (agglomerated and distributed).
    pub fn n_levels(&self) -> usize {
        self.agglomerated.level() + self.levels.len()
    }

    /// The agglomerated level `L_a`: levels `0..=L_a` run on rank 0,
    /// `L_a + 1..n_levels()` over the ranks.
    pub fn agglomerated_level(&self) -> usize {
        self.agglomerated.level()
    }

    /// Rank 0: femquad's serial multigrid of levels `0..=L_a` (which levels
    /// it assembled, its setup report); `None` on the other ranks.
    pub fn agglomerated(&self) -> Option<&OperatorLevels<R>> {
        self.agglomerated.levels()
    }

    /// Rank 0: the serial hierarchy of levels `0..=L_a` and, for each
    /// global vertex of the distributed level `L_a`, the vertex of the
    /// serial mesh `L_a` it is (matched by coordinates); `None` on the
    /// other ranks.
    pub fn agglomerated_vertices(&self) -> Option<(&MeshHierarchy, &[u32])> {
        self.agglomerated.vertex_map()
    }

    /// The options of the distributed levels.
    pub fn options(&self) -> &MultigridOptions {
        &self.options
    }

    /// What the last setup found per level, coarsest first (global dofs,
    /// fixed dofs, eigenvalue estimate and smoother interval; the same on
    /// every rank): the serial levels `0..=L_a` (after a setup; before the
    /// first, none), then the distributed levels above.
    pub fn report(&self) -> Vec<LevelReport> {
        let serial = self.agglomerated.report().iter().cloned();
        serial
            .chain(self.levels[1..].iter().map(|l| l.report.clone()))
            .collect()
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
    /// smoothed level's operator ([`DistOperator::set_time`]) and on rank
    /// 0's serial mesh `L_a`, `b` injected into the coarser levels as the
    /// state is (their vertices' values), so that each level's Jacobian is
    /// its step Jacobian `σ·∂F/∂u_t + ∂F/∂u` (as femquad's serial multigrid
    /// levels take the finest operator's time state, which the serial
    /// levels below `L_a` do). The cycle needs a [`DistMultigrid::setup`]
    /// afterwards.
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `b` for a vector of
    /// another mesh than the finest level's; those of
    /// [`DistOperator::set_time`] and, on rank 0, femquad's
    /// `Operator::set_time`.
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
            if l > 0 {
                self.levels[l].op.set_time(t, sigma, &level_b)?;
            }
        }
        // level L_a's operator is not applied: its serial twin is
        self.agglomerated.set_time(&ranks, t, sigma, &level_b)
    }

    /// The finest level's operator (its form bound on the finest mesh).
    pub fn finest_operator(&mut self) -> &mut DistOperator<R> {
        let finest = self.levels.len() - 1;
        &mut self.levels[finest].op
    }

    /// Collective: linearizes every level at the finest state `u` (injected
    /// into the coarser levels: their vertices' values) and sets the cycle
    /// up — point-block Jacobi and the Chebyshev interval of every
    /// distributed level above `L_a`; level `L_a`'s state gathered to rank
    /// 0 and the serial levels `0..=L_a` set up there
    /// ([`OperatorLevels::setup`]: their smoothers, the coarsest Jacobian
    /// factored, refactored numerically on later setups).
    ///
    /// # Errors
    /// On every rank: [`Error::InvalidArgument`] naming `u` for a vector of
    /// another mesh than the finest level's; naming `ops` (with the level)
    /// for a distributed level's singular point-block diagonal or an
    /// operator that is not positive definite in the eigenvalue estimate;
    /// naming `fixed` for a level whose dofs are all fixed; those of the
    /// operators; rank 0's errors of [`OperatorLevels::setup`] (naming
    /// `physics` for what the serial levels find, `cycle_precision` for an
    /// `f32` cycle with a matrix-free serial level, …).
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
        let agglomerated_level = self.agglomerated.level();
        for (i, level) in self.levels.iter_mut().enumerate().skip(1) {
            let l = agglomerated_level + i;
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
        self.agglomerated.setup(&ranks, &self.levels[0].state)?;
        self.times.smoothers = (smoothed - start).as_secs_f64();
        self.times.agglomerated_setup = smoothed.elapsed().as_secs_f64();
        self.ready = true;
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
            &mut self.agglomerated,
            &self.masked_b,
            x,
            &mut self.times.agglomerated_cycles,
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
    agglomerated: &mut Agglomerated<R>,
    b: &DistVector<R>,
    x: &mut DistVector<R>,
    agglomerated_seconds: &mut f64,
) -> Result<()> {
    let Some((level, below)) = levels.split_last_mut() else {
        return Err(Error::internal("a multigrid cycle without levels"));
    };
    let Some((transfer, transfers_below)) = transfers.split_last_mut() else {
        // the gather waits for the device work before it anyway: finished
        // first, so that the time is the coarse solve's own
        ranks.agree(b.local().finish())?;
        let start = Instant::now();
        let solved = agglomerated.solve(ranks, b, x);
        *agglomerated_seconds += start.elapsed().as_secs_f64();
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
        let mut a = local_action(op, state, fixed, &mut w.action_out);
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
        agglomerated,
        &w.coarse_b,
        &mut w.coarse_x,
        agglomerated_seconds,
    )?;
    transfer.prolong_add(ranks, x, &mut w.coarse_x)?;
    ranks.agree(x.local_mut().set_at(fixed, 0.0))?;
    // post-smoothing
    let smoothed = {
        let mut a = local_action(op, state, fixed, &mut w.action_out);
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
/// fixed rows the identity's. The result is computed in the DistVector
/// `y_out` and then traded with `y` (their buffers swapped, no copy).
fn local_action<'a, R: Real + Equivalence>(
    op: &'a mut DistOperator<R>,
    state: &'a DistVector<R>,
    fixed: &'a IndexSet,
    y_out: &'a mut DistVector<R>,
) -> impl FnMut(&Vector<R>, &mut Vector<R>) -> Result<()> + 'a {
    move |v, y| {
        let ranks = Ranks::world();
        op.jacobian_action_local(state, v, y_out)?;
        let traded = y_out
            .local()
            .check_compatible("the level's entries", "y", y)
            .map(|()| std::mem::swap(y, y_out.local_mut()));
        ranks.agree(traded.and_then(|()| y.copy_at(fixed, v)))
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

/// `options`' smoother (degree, interval, eigenvalue steps, seed) with
/// femquad's defaults for the rest: what the distributed levels use.
fn smoother_options(options: &MultigridOptions) -> MultigridOptions {
    MultigridOptions {
        degree: options.degree,
        lower: options.lower,
        upper: options.upper,
        eigen_steps: options.eigen_steps,
        seed: options.seed,
        ..MultigridOptions::default()
    }
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
