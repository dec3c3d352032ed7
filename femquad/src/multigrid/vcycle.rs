//! [`Multigrid`]: the V-cycle, its setup and its options.
//!
//! (Longer than most files: the type's runnable example is a complete
//! multigrid of its own — a 1D Laplacian on nested grids — about 90 lines
//! of documentation; the code itself is under 700.)

use std::time::Instant;

use super::block_jacobi::{OnFixed, PointBlockJacobi, fill_random};
use super::chebyshev::{Chebyshev, ChebyshevWork};
use super::coarse::CoarseSolver;
use super::eigen::{EigenEstimate, estimate_eigenvalues};
use super::levels::LevelSpaces;
use super::operators::{LevelAction, LevelOperators};
use super::profile::{CycleProfile, Phase, Profiler};
use super::representation::SmallLevels;
use super::single::CyclePrecision;
use super::transfer::Transfer;
use crate::backend::{IndexSet, MultigridKernels, Vector};
use crate::linalg::FixedDofs;
use crate::sparse::Factorization;
use crate::vector::VectorOps;
use crate::{Error, Precision, Real, Result};

/// Options of [`Multigrid`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MultigridOptions {
    /// Chebyshev steps `m` of each smoothing, before and after the coarse
    /// correction ([`Chebyshev`]).
    pub degree: usize,
    /// `λ_lo = lower·λ̂` with `λ̂` the estimate of `λ_max(D⁻¹A)`: the bottom
    /// of the range the smoother damps.
    pub lower: f64,
    /// `λ_hi = upper·λ̂`: a safety margin over the estimate (the Lanczos
    /// estimate lies below `λ_max`, and eigenvalues above `λ_hi` would be
    /// amplified).
    pub upper: f64,
    /// Lanczos (CG) steps of the eigenvalue estimate of each level.
    pub eigen_steps: usize,
    /// Seed of the random start vectors of the estimates (level `l` uses
    /// `seed + l`): setups are deterministic.
    pub seed: u64,
    /// Factorization of the coarsest operator: Cholesky for symmetric
    /// positive definite operators (CG), LU otherwise (GMRES, Newton).
    pub factorization: Factorization,
    /// Largest number of dofs of the coarsest level. Its operator is
    /// assembled and factored on the host, which for a big mesh costs time
    /// and memory out of proportion; above this the setup is refused (build
    /// the problem on a [`super::MeshHierarchy`] with a coarser base mesh).
    pub max_coarse_dofs: usize,
    /// The smoothed levels (every level above the coarsest, the finest
    /// included) with at most this many dofs apply their operator as an
    /// assembled sparse matrix (one SpMV, on the operator's backend: on a
    /// device assembled there, a form's boundary terms included) and take
    /// their point-block diagonal from it;
    /// the others stay matrix-free. Each new linearization reassembles the
    /// values only (the pattern is kept). Used by [`super::OperatorLevels`];
    /// a [`Multigrid`] with its own [`LevelOperators`] ignores it. `0`
    /// (the default): every level matrix-free, until measurements on the
    /// GPU say where the SpMV wins.
    pub assembled_max_dofs: usize,
    /// What the levels with at most `assembled_max_dofs` dofs do: apply the
    /// assembled matrix ([`SmallLevels::Assembled`], the default), or
    /// time one apply of each representation at the first setup and keep
    /// the faster ([`SmallLevels::Measured`]; the choice and both times in
    /// [`super::OperatorLevels::representations`] and its `Debug`).
    pub small_levels: SmallLevels,
    /// The precision of the V-cycle: the problem's ([`CyclePrecision::Working`],
    /// the default) or `f32` inside an `f64` solve
    /// ([`CyclePrecision::Single`]: `z = P(M₃₂⁻¹ P⁻¹ r)`, `P⁻¹` rounding
    /// to nearest; the math, and what it needs, in [`CyclePrecision`]).
    /// Single needs every smoothed level assembled (`assembled_max_dofs` at
    /// least the finest level's dofs): [`super::OperatorLevels`] refuses a
    /// matrix-free one, naming `cycle_precision` and `assembled_max_dofs`.
    /// On an `f32` problem Single is Working. A [`Multigrid`] with Single
    /// (of `f64`) is set up and applied with single-precision level
    /// operators ([`Multigrid::setup_single`], [`Multigrid::apply_single`]).
    pub cycle_precision: CyclePrecision,
    /// The assembled smoothed levels with at most this many dofs take each
    /// Chebyshev step after the first as one kernel with its SpMV
    /// ([`LevelOperators::fused_chebyshev_step`]: 8 launches a level instead
    /// of 10); larger levels apply the SpMV and the step apart. The fused
    /// kernel saves a launch and one pass over `A d`, but its step runs on
    /// one work-item of each row's team: on an H100 (2D P1 Poisson, f32
    /// cycle, device timeline) it took 11 µs against 13 µs for the SpMV and
    /// the step apart at 130 321 dofs, 29 against 30 µs at 519 841, but 125
    /// against 106 µs at 2 076 481 and 497 against 440 µs at 8 300 161 —
    /// where launches cost more than bytes it wins, where bytes dominate it
    /// loses. Default `2^19`.
    pub fused_step_max_dofs: usize,
    /// A coarsest level of at most this many dofs, on a device, is solved
    /// there by its dense inverse ([`CoarseSolver`]: one launch a V-cycle,
    /// nothing read back) instead of by the host factorization (the coarse
    /// right-hand side downloaded, solved, uploaded). The inverse costs `n`
    /// solves with the factorization at every setup (each linearization)
    /// and `n²` entries of device memory; the host round trip costs the
    /// device 180–230 µs of idleness a V-cycle. Measured on an H100
    /// (2D/3D P1 Poisson, 2²⁴ cells, coarsest 2116 / 1000 dofs): the
    /// inverse added 240 / 50 ms to each setup and saved about 2–3 ms of
    /// an 8–10-iteration solve — worth it when many solves share one
    /// setup (time steps with an unchanged operator), not for one solve.
    /// Default 0 (the host factorization); at most a few thousand.
    pub dense_coarse_max_dofs: usize,
    /// Time the phases of every V-cycle per level ([`Multigrid::profile`]).
    /// Each phase then waits for the device to finish its work, which
    /// removes the overlap of host and device: for finding where a cycle's
    /// time goes, not for production runs.
    pub profile: bool,
}

impl Default for MultigridOptions {
    /// Degree 2, interval `[0.15, 1.1]·λ̂`, 10 Lanczos steps, seed 1,
    /// Cholesky, at most 200 000 coarse dofs, no assembled smoothed level
    /// (`assembled_max_dofs = 0`; [`SmallLevels::Assembled`] for those
    /// below it once it is raised), the cycle in the working precision,
    /// fused Chebyshev steps on assembled levels of at most `2^19` dofs,
    /// the coarse solve on the host (`dense_coarse_max_dofs = 0`), no
    /// profiling.
    ///
    /// Degree and interval minimize the operator applications to a
    /// relative residual of 1e-8 (iterations × (1 + 2·degree·4/3) in 2D)
    /// over Poisson and Lamé, P1 and P2, 2D and 3D: degree 2 with the lower
    /// end at 0.1–0.2 of `λ̂` beat degrees 3 and 4 (fewer iterations, each
    /// dearer) and lower ends of 0.3–0.5 in every case measured.
    fn default() -> Self {
        MultigridOptions {
            degree: 2,
            lower: 0.15,
            upper: 1.1,
            eigen_steps: 10,
            seed: 1,
            factorization: Factorization::Cholesky,
            max_coarse_dofs: 200_000,
            assembled_max_dofs: 0,
            small_levels: SmallLevels::Assembled,
            cycle_precision: CyclePrecision::Working,
            fused_step_max_dofs: 1 << 19,
            dense_coarse_max_dofs: 0,
            profile: false,
        }
    }
}

/// What the setup of one level found.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelReport {
    /// Dofs of the level.
    pub dofs: usize,
    /// Fixed (Dirichlet) dofs of the level.
    pub fixed: usize,
    /// The eigenvalue estimate of `D⁻¹A` (not for the coarsest level).
    pub eigen: Option<EigenEstimate>,
    /// The smoother's interval `[λ_lo, λ_hi]` (not for the coarsest level).
    pub interval: Option<(f64, f64)>,
}

/// What the last [`Multigrid::setup`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupReport {
    /// One entry per level, coarsest first.
    pub levels: Vec<LevelReport>,
    /// Factorization of the coarsest operator.
    pub factorization: Factorization,
    /// Wall-clock seconds of the setup.
    pub seconds: f64,
}

/// One level's size and fixed dofs.
#[derive(Debug)]
struct Level {
    n_dofs: usize,
    n_comp: usize,
    n_fixed: usize,
    fixed: IndexSet,
}

/// The vectors of a level above the coarsest, allocated once: the
/// smoother's work vectors, `A x` of the residual to restrict, and the
/// right-hand side and solution of its coarse correction (vectors of the
/// level below).
#[derive(Debug)]
struct Work<R: Real> {
    smoother: ChebyshevWork<R>,
    ax: Vector<R>,
    coarse_b: Vector<R>,
    coarse_x: Vector<R>,
}

/// What a successful [`Multigrid::setup`] built, complete: a cycle finds
/// every smoother and the coarse factorization.
struct Ready<R: Real> {
    /// Point-block Jacobi and Chebyshev of levels `1, 2, …` (index `l − 1`).
    smoothers: Vec<(PointBlockJacobi<R>, Chebyshev)>,
    coarse: CoarseSolver<R>,
    report: SetupReport,
    profiler: Option<Profiler>,
}

/// Geometric multigrid: a V-cycle over the levels of a [`LevelSpaces`],
/// matrix-free on every level but the coarsest, for the operators
/// [`LevelOperators`] provides, with Dirichlet rows on every level.
///
/// # The cycle
/// With `A_l` the constrained operator of level `l` (rows and columns of
/// fixed dofs the identity's), `S_l` the Chebyshev smoother ([`Chebyshev`])
/// on the point-block-Jacobi-preconditioned `D_l⁻¹A_l`
/// ([`PointBlockJacobi`]), `P_l` the prolongation from level `l − 1`
/// ([`Transfer`]) followed by zeroing the fixed dofs of level `l`, and `A_0⁻¹`
/// the direct solve ([`CoarseSolver`]), one application `x = M⁻¹ b` is
///
/// ```text
/// cycle(l, b):  if l = 0: return A_0⁻¹ b
///               x = S_l(b, 0)                 pre-smoothing from zero
///               b_c = P_lᵀ (b − A_l x)        restriction (fixed coarse dofs zeroed)
///               x = x + P_l cycle(l − 1, b_c) coarse correction
///               x = S_l(b, x)                 post-smoothing
/// M⁻¹ b = cycle(L, b with b_D = 0), then x_D = b_D.
/// ```
///
/// The same smoother before and after, `P_lᵀ` as restriction and an exact
/// coarse solve make `M⁻¹` symmetric positive definite for symmetric
/// positive definite operators: a preconditioner for CG. Each level costs
/// `2m` operator applications (`m` the degree), `2m` point-block updates and
/// two transfers — and, on device vectors, nothing crosses to the host
/// but the coarsest level's two vectors ([`CoarseSolver`]; none with its
/// dense inverse on the device, [`MultigridOptions::dense_coarse_max_dofs`]).
///
/// # The cycle without Dirichlet passes
/// The cycle computes the above on the free dofs only, with no pass that
/// imposes the fixed rows: every level keeps `x`, and the smoother's update
/// `d`, zero on its fixed dofs `D`, and nothing on a free dof reads an entry
/// on `D` of `b`, of the residual or of `w = A v`:
///
/// * the smoother's `D⁻¹` is zero on the fixed rows and columns
///   ([`OnFixed::Zero`]): `d ← a·d + c·D⁻¹r` keeps `d_D = 0` whatever `r_D`
///   holds, and `(D⁻¹r)_F` does not read `r_D`; so `x ← x + d` keeps
///   `x_D = 0`. The operator is applied *unconstrained*: for a free row,
///   `(A v)_F = A_FF v_F + A_FD v_D = A_FF v_F` as `v_D = 0` (`v` is `x` or
///   `d`) — the constrained operator's free rows; its fixed rows `(A v)_D`
///   (which the constrained operator replaces by `v_D = 0`) only ever
///   reach `r_D`, which nothing reads.
/// * restriction and prolongation are those of `P̃` ([`Transfer::with_fixed`]:
///   `P` with the fixed fine rows and fixed coarse columns zero), so
///   `b_c = P̃ᵀ (b − A x)` is zero on the fixed coarse dofs and does not read
///   the fine fixed entries of `b − A x` (one pass after the operator,
///   [`Transfer::restrict_residual`]), and `x ← x + P̃ x_c` leaves `x_D = 0`.
/// * the finest `b_D` is therefore never read: no masked copy of `b`; after
///   the cycle, `x_D = b_D`.
///
/// The free entries are those of the textbook cycle above (sums that differ
/// at most by adding a zero, of either sign); the test
/// `multigrid_launches` checks the cycle against the textbook one.
/// Per smoothed level, with `m = 2` and an assembled operator (one launch
/// per product), that is 8 kernels: 2 products (the residual's and the
/// post-smoothing's `A x`), 2 Chebyshev steps, 2 Chebyshev steps with the
/// product `A d` fused in ([`LevelOperators::fused_chebyshev_step`]), the
/// residual restriction and the prolongation; a matrix-free level has 10
/// (each step and its product apart).
///
/// # Setup
/// [`Multigrid::setup`] computes, on each level above the coarsest, the
/// point-block diagonal and its inverse, and an estimate `λ̂` of the largest
/// eigenvalue of `D⁻¹A` by [`MultigridOptions::eigen_steps`] Lanczos steps
/// from a random vector ([`estimate_eigenvalues`]); the smoother's interval
/// is `[lower·λ̂, upper·λ̂]`. The coarsest operator is assembled and factored
/// (refactored on later setups). Redo the setup whenever the operators
/// change (each Newton step).
///
/// # Example
/// A 1D Laplacian (`tridiag(−1, 2, −1)`, 2ⁿ − 1 unknowns and two fixed end
/// points) on nested grids of 3, 5, 9, 17 points; CG preconditioned by the
/// V-cycle converges in a few iterations whatever the size:
/// ```
/// use femquad::linalg::FixedDofs;
/// use femquad::multigrid::{LevelOperators, Multigrid, MultigridOptions, Transfer};
/// use femquad::sparse::CsrMatrix;
/// use femquad::backend::Vector;
/// use femquad::vector::VectorOps;
/// use femquad::Result;
///
/// /// The 1D Laplacian on grid `l` (2^(l+1) + 1 points, numbered coarse
/// /// points first, like a refined mesh).
/// struct Laplace1d {
///     // neighbours of each point, per level
///     neighbours: Vec<Vec<[usize; 2]>>,
/// }
/// impl LevelOperators<f64> for Laplace1d {
///     fn apply(&mut self, l: usize, x: &Vector<f64>, y: &mut Vector<f64>) -> Result<()> {
///         let (Vector::Host(x), Vector::Host(y)) = (x, y) else { unreachable!() };
///         for (i, &[a, b]) in self.neighbours[l].iter().enumerate() {
///             y[i] = 2.0 * x[i] - if a < x.len() { x[a] } else { 0.0 }
///                               - if b < x.len() { x[b] } else { 0.0 };
///         }
///         Ok(())
///     }
///     fn block_diagonal(&mut self, _: usize, out: &mut Vector<f64>) -> Result<()> {
///         out.fill(2.0)
///     }
///     fn assemble(&mut self, l: usize) -> Result<CsrMatrix> {
///         let mut e = Vec::new();
///         for (i, &[a, b]) in self.neighbours[l].iter().enumerate() {
///             e.push((i, i, 2.0));
///             for j in [a, b] {
///                 if j < self.neighbours[l].len() {
///                     e.push((i, j, -1.0));
///                 }
///             }
///         }
///         let n = self.neighbours[l].len();
///         CsrMatrix::from_triplets(n, n, &e)
///     }
/// }
/// # fn main() -> Result<()> {
/// // grid 0: points 0 (x=0), 1 (x=1), 2 (x=½); each refinement adds the
/// // midpoints of the intervals, numbered after the old points
/// let (mut xs, mut edges_per_level, mut neighbours) = (vec![0.0, 1.0, 0.5], vec![], vec![]);
/// for level in 0..4 {
///     let mut order: Vec<usize> = (0..xs.len()).collect();
///     order.sort_by(|&a, &b| xs[a].partial_cmp(&xs[b]).unwrap());
///     let n = xs.len();
///     let mut nb = vec![[usize::MAX; 2]; n];
///     for w in order.windows(2) {
///         nb[w[0]][1] = w[1];
///         nb[w[1]][0] = w[0];
///     }
///     neighbours.push(nb);
///     if level < 3 {
///         let edges: Vec<[u32; 2]> =
///             order.windows(2).map(|w| [w[0].min(w[1]) as u32, w[0].max(w[1]) as u32]).collect();
///         for e in &edges {
///             xs.push(0.5 * (xs[e[0] as usize] + xs[e[1] as usize]));
///         }
///         edges_per_level.push(edges);
///     }
/// }
/// let transfers = edges_per_level
///     .iter()
///     .zip(&neighbours)
///     .map(|(e, nb)| Transfer::<f64>::new(nb.len(), e.clone(), 1))
///     .collect::<Result<Vec<_>>>()?;
/// // the end points 0 and 1 are fixed on every level
/// let fixed = neighbours
///     .iter()
///     .map(|nb| FixedDofs::new(nb.len(), &[0, 1]))
///     .collect::<Result<Vec<_>>>()?;
/// let finest = Vector::from(vec![0.0; xs.len()]);
/// let mut mg = Multigrid::from_parts(transfers, &fixed, &finest, MultigridOptions::default())?;
/// let mut ops = Laplace1d { neighbours };
/// mg.setup(&mut ops)?;
/// let b = Vector::from(vec![1.0; xs.len()]);
/// let mut x = Vector::from(vec![0.0; xs.len()]);
/// mg.apply(&mut ops, &b, &mut x)?; // one V-cycle
/// // fixed rows: the identity
/// assert_eq!(x.value_at(0)?, 1.0);
/// # Ok(())
/// # }
/// ```
pub struct Multigrid<R: Real> {
    options: MultigridOptions,
    levels: Vec<Level>,
    /// The vectors of levels `1, 2, …` (index `l − 1`).
    work: Vec<Work<R>>,
    transfers: Vec<Transfer<R>>,
    kernels: MultigridKernels<R>,
    /// The coarsest level's fixed dofs, on the host (for its factorization).
    coarse_fixed: FixedDofs,
    /// The last successful setup (`None` before the first and after a
    /// failed one).
    ready: Option<Ready<R>>,
    cycles: usize,
    /// With [`CyclePrecision::Single`] and `R = f64`: the multigrid in
    /// `f32` that does the setups and cycles (this one only injects
    /// states; it has no work vectors and no setup of its own).
    single: Option<Box<SingleCycle>>,
}

impl<R: Real> std::fmt::Debug for Multigrid<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Multigrid")
            .field("levels", &self.n_levels())
            .field(
                "dofs",
                &self.levels.iter().map(|l| l.n_dofs).collect::<Vec<_>>(),
            )
            .field("options", &self.options)
            .finish()
    }
}

impl<R: Real> Multigrid<R> {
    /// The multigrid of the levels `spaces`, with the fixed dofs of every
    /// level derived from the finest level's `finest_fixed`
    /// ([`LevelSpaces::fixed_dofs`]), its vectors where `like` lives (host or
    /// device; `like` is not used otherwise). Call [`Multigrid::setup`]
    /// before applying it.
    ///
    /// # Errors
    /// Those of [`Multigrid::from_parts`] and [`LevelSpaces::fixed_dofs`].
    pub fn new(
        spaces: &LevelSpaces,
        finest_fixed: &FixedDofs,
        like: &Vector<R>,
        options: MultigridOptions,
    ) -> Result<Self> {
        let fixed = spaces.fixed_dofs(finest_fixed)?;
        let transfers = (0..spaces.n_levels() - 1)
            .map(|l| spaces.transfer::<R>(l))
            .collect::<Result<Vec<_>>>()?;
        if transfers.is_empty() {
            let space = spaces
                .space(0)
                .ok_or_else(|| Error::arg("spaces", "no level"))?;
            return Self::single(space.n_nodes(), space.n_comp(), &fixed, like, options);
        }
        Self::from_parts(transfers, &fixed, like, options)
    }

    /// A multigrid of one level: the direct solve of `n_nodes·n_comp` dofs
    /// (`fixed`: the level's fixed dofs, one set).
    fn single(
        n_nodes: usize,
        n_comp: usize,
        fixed: &[FixedDofs],
        like: &Vector<R>,
        options: MultigridOptions,
    ) -> Result<Self> {
        Self::build(
            vec![(n_nodes * n_comp, n_comp)],
            Vec::new(),
            fixed,
            like,
            options,
        )
    }

    /// The multigrid of the levels joined by `transfers` (`transfers[l]`
    /// between levels `l` and `l + 1`, host transfers; uploaded here for
    /// device vectors) with the fixed dofs `fixed[l]` of every level, its
    /// vectors where `finest_like` (a vector of the finest level) lives.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `transfers` if empty or if they do
    /// not chain (a level's fine dofs differ from the next level's coarse
    /// dofs, or their `N_comp` differ), `fixed` if it has not one set per
    /// level or a set of another size than its level, `finest_like` for a length other
    /// than the finest level's, `options` if the coarsest level has more than
    /// `max_coarse_dofs` dofs; device errors.
    pub fn from_parts(
        transfers: Vec<Transfer<R>>,
        fixed: &[FixedDofs],
        finest_like: &Vector<R>,
        options: MultigridOptions,
    ) -> Result<Self> {
        let first = transfers
            .first()
            .ok_or_else(|| Error::arg("transfers", "a multigrid needs at least one transfer"))?;
        let mut sizes = vec![(first.n_coarse_dofs(), first.n_comp())];
        for (l, t) in transfers.iter().enumerate() {
            if t.n_comp() != first.n_comp() || t.n_coarse_dofs() != sizes[l].0 {
                return Err(Error::arg(
                    "transfers",
                    format!(
                        "transfer {l} starts from {} dofs of {} components, but level {l} has {} \
                         of {}",
                        t.n_coarse_dofs(),
                        t.n_comp(),
                        sizes[l].0,
                        sizes[l].1
                    ),
                ));
            }
            sizes.push((t.n_fine_dofs(), t.n_comp()));
        }
        Self::build(sizes, transfers, fixed, finest_like, options)
    }

    /// The multigrid of levels of `sizes` (dofs, `N_comp`; coarsest
    /// first); see [`Multigrid::from_parts`].
    fn build(
        sizes: Vec<(usize, usize)>,
        transfers: Vec<Transfer<R>>,
        fixed: &[FixedDofs],
        finest_like: &Vector<R>,
        options: MultigridOptions,
    ) -> Result<Self> {
        let n_levels = sizes.len();
        if fixed.len() != n_levels {
            return Err(Error::arg(
                "fixed",
                format!("{} sets for {n_levels} levels", fixed.len()),
            ));
        }
        let (finest, n_comp) = sizes[n_levels - 1];
        if finest_like.len() != finest {
            return Err(Error::arg(
                "finest_like",
                format!(
                    "has {} entries, the finest level {finest}",
                    finest_like.len()
                ),
            ));
        }
        if sizes[0].0 > options.max_coarse_dofs {
            return Err(Error::arg(
                "options",
                format!(
                    "the coarsest multigrid level has {} dofs, more than max_coarse_dofs = {}: its \
                     operator is assembled and factored on the host. Build the problem on a \
                     MeshHierarchy of a coarser mesh (refined to this one), raise \
                     max_coarse_dofs, or use another preconditioner",
                    sizes[0].0, options.max_coarse_dofs
                ),
            ));
        }
        let single = if options.cycle_precision == CyclePrecision::Single
            && R::PRECISION == Precision::F64
        {
            let s = SingleCycle::new(sizes.clone(), &transfers, fixed, finest_like, options)?;
            Some(Box::new(s))
        } else {
            None
        };
        let kernels = MultigridKernels::like(finest_like, n_comp)?;
        let zeros = |n: usize| -> Result<Vector<R>> {
            Ok(match finest_like {
                Vector::Host(_) => Vector::host_zeros(n),
                Vector::Device(d) => Vector::device_zeros(d.device(), n)?,
            })
        };
        let mut levels = Vec::with_capacity(n_levels);
        let mut work = Vec::with_capacity(n_levels - 1);
        for (l, &(n_dofs, nc)) in sizes.iter().enumerate() {
            if fixed[l].n_dofs() != n_dofs {
                return Err(Error::arg(
                    "fixed",
                    format!(
                        "the fixed dofs of level {l} are of a system of {} dofs, the level has \
                         {n_dofs}",
                        fixed[l].n_dofs()
                    ),
                ));
            }
            let like = zeros(n_dofs)?;
            if l > 0 && single.is_none() {
                let below = sizes[l - 1].0;
                work.push(Work {
                    smoother: ChebyshevWork::like(&like)?,
                    ax: like.zeros_like()?,
                    coarse_b: zeros(below)?,
                    coarse_x: zeros(below)?,
                });
            }
            levels.push(Level {
                n_dofs,
                n_comp: nc,
                n_fixed: fixed[l].dofs().len(),
                fixed: IndexSet::located_like(&like, fixed[l].dofs())?,
            });
        }
        // between the free dofs (the sizes of the sets checked above)
        let transfers = transfers
            .into_iter()
            .enumerate()
            .map(|(l, t)| {
                t.with_fixed(&fixed[l], &fixed[l + 1])?
                    .with_kernels(&kernels)
            })
            .collect::<Result<_>>()?;
        Ok(Multigrid {
            options,
            levels,
            work,
            transfers,
            kernels,
            coarse_fixed: fixed[0].clone(),
            ready: None,
            cycles: 0,
            single,
        })
    }

    /// Number of levels (1: only the direct solve).
    pub fn n_levels(&self) -> usize {
        self.levels.len()
    }

    /// Dofs of `level`.
    pub fn n_dofs(&self, level: usize) -> Option<usize> {
        self.levels.get(level).map(|l| l.n_dofs)
    }

    /// The options.
    pub fn options(&self) -> &MultigridOptions {
        &self.options
    }

    /// Sets the coarse factorization (e.g. LU for a Newton step's
    /// nonsymmetric Jacobian); takes effect at the next setup.
    pub fn set_factorization(&mut self, factorization: Factorization) {
        self.options.factorization = factorization;
        if let Some(s) = &mut self.single {
            s.multigrid.set_factorization(factorization);
        }
    }

    /// Whether the cycle runs in `f32` inside this `f64` multigrid
    /// ([`CyclePrecision::Single`]; set up and applied with
    /// [`Multigrid::setup_single`] and [`Multigrid::apply_single`]).
    pub fn runs_in_single(&self) -> bool {
        self.single.is_some()
    }

    /// What the last setup found (`None` before the first, and after a
    /// failed one).
    /// With the cycle in `f32`, that multigrid's report.
    pub fn report(&self) -> Option<&SetupReport> {
        match &self.single {
            Some(s) => s.multigrid.report(),
            None => self.ready.as_ref().map(|r| &r.report),
        }
    }

    /// V-cycles applied so far.
    pub fn cycles(&self) -> usize {
        match &self.single {
            Some(s) => s.multigrid.cycles(),
            None => self.cycles,
        }
    }

    /// Where the time of the V-cycles since the last setup went, per level
    /// and phase, when [`MultigridOptions::profile`] is set (`None`
    /// otherwise, and before the first setup).
    pub fn profile(&self) -> Option<&CycleProfile> {
        if let Some(s) = &self.single {
            return s.multigrid.profile();
        }
        self.ready
            .as_ref()
            .and_then(|r| r.profiler.as_ref())
            .map(Profiler::profile)
    }

    /// Injects a finest-level state `fine` into every coarser level:
    /// `states[l] = I states[l + 1]` (the first dofs, [`Transfer::inject`]),
    /// `states` one vector per level below the finest, coarsest first.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `states` for a wrong count or
    /// length; those of [`Transfer::inject`].
    pub fn inject(&self, fine: &Vector<R>, states: &mut [Vector<R>]) -> Result<()> {
        let below = self.levels.len() - 1;
        if states.len() != below {
            return Err(Error::arg(
                "states",
                format!(
                    "{} vectors for {below} levels below the finest",
                    states.len()
                ),
            ));
        }
        for l in (0..below).rev() {
            let (head, tail) = states.split_at_mut(l + 1);
            let src = if l + 1 == below { fine } else { &tail[0] };
            self.transfers[l].inject(&mut head[l], src)?;
        }
        Ok(())
    }

    /// Sets the cycle up for the current operators `ops` (see the [type
    /// documentation](Self)): point-block diagonals and their inverses,
    /// eigenvalue estimates and smoothers, the coarse factorization (a
    /// numeric refactorization when the coarsest operator keeps its pattern
    /// and the factorization its kind).
    ///
    /// # Errors
    /// * [`Error::InvalidArgument`] naming `ops` (with the level) if a
    ///   level's operator has a singular point-block diagonal
    ///   ([`PointBlockJacobi`], with the node), is not positive definite in
    ///   the eigenvalue estimate, or the coarsest one is assembled with the
    ///   wrong size or cannot be factored ([`CoarseSolver`]: not symmetric
    ///   or not positive definite for Cholesky, singular); naming `options`
    ///   for an invalid smoother option; naming `fixed` for a level whose
    ///   dofs are all fixed.
    /// * Those of `ops`.
    pub fn setup(&mut self, ops: &mut dyn LevelOperators<R>) -> Result<()> {
        let kernels = self.kernels.clone();
        let seed = self.options.seed;
        self.setup_with_starts(ops, &mut |l, start| {
            fill_random(start, seed.wrapping_add(l as u64), Some(&kernels))
        })
    }

    /// [`Multigrid::setup`] with the start vectors of the eigenvalue
    /// estimates given: `start(l, x)` fills `x` (a vector of level `l`,
    /// where the multigrid's vectors live; its fixed dofs are zeroed after)
    /// in place of the random vector of seed `seed + l`. For reproducing an
    /// estimate made elsewhere — e.g. the distributed multigrid of
    /// femquad-mpi, whose start vectors depend on the vertex coordinates
    /// rather than on a numbering, compared with this one.
    ///
    /// # Errors
    /// As [`Multigrid::setup`]; those of `start`.
    pub fn setup_with_starts(
        &mut self,
        ops: &mut dyn LevelOperators<R>,
        start: &mut dyn FnMut(usize, &mut Vector<R>) -> Result<()>,
    ) -> Result<()> {
        if self.single.is_some() {
            return Err(single_only("setup", "Multigrid::setup_single"));
        }
        let t0 = Instant::now();
        // a failed setup leaves no cycle to apply; the last factorization is
        // kept only to be refactored
        let previous = self.ready.take().map(|r| r.coarse);
        let opts = self.options;
        let mut reports = Vec::with_capacity(self.levels.len());
        reports.push(LevelReport {
            dofs: self.levels[0].n_dofs,
            fixed: self.levels[0].n_fixed,
            eigen: None,
            interval: None,
        });
        let mut smoothers = Vec::with_capacity(self.work.len());
        for (i, (level, work)) in self.levels[1..].iter().zip(&self.work).enumerate() {
            let l = i + 1;
            let nc = level.n_comp;
            let like = &work.ax;
            let mut blocks = zeros_of_len(like, level.n_dofs * nc)?;
            ops.block_diagonal(l, &mut blocks)?;
            let jacobi = PointBlockJacobi::with_kernels(
                blocks,
                &level.fixed,
                self.kernels.clone(),
                OnFixed::Zero,
            )
            .map_err(|e| smoother_setup_error(e, l))?;
            let mut b = like.zeros_like()?;
            start(l, &mut b)?;
            b.set_at(&level.fixed, 0.0)?;
            // the free block of D⁻¹A: with D⁻¹ zero on the fixed dofs every
            // Lanczos vector p = D⁻¹r + βp is zero there, so the fixed rows
            // of A p only reach r_D, which D⁻¹ does not read, and contribute
            // only r_D·0 to the inner products
            let mut a = |v: &Vector<R>, y: &mut Vector<R>| ops.apply(l, v, y);
            let eigen = estimate_eigenvalues(&mut a, &jacobi, &b, opts.eigen_steps)
                .map_err(|e| smoother_setup_error(e, l))?;
            let chebyshev =
                Chebyshev::new(opts.lower * eigen.max, opts.upper * eigen.max, opts.degree)
                    .map_err(|e| match e {
                        Error::InvalidArgument { name, reason } => Error::arg(
                            "options",
                            format!("the smoother of level {l}: `{name}` {reason}"),
                        ),
                        other => other,
                    })?;
            reports.push(LevelReport {
                dofs: level.n_dofs,
                fixed: level.n_fixed,
                eigen: Some(eigen),
                interval: Some(chebyshev.interval()),
            });
            smoothers.push((jacobi, chebyshev));
        }
        let matrix = ops.assemble(0)?;
        if matrix.n_rows() != self.levels[0].n_dofs || matrix.n_cols() != self.levels[0].n_dofs {
            return Err(Error::arg(
                "ops",
                format!(
                    "the coarsest operator (assemble(0)) is {} × {}, the level has {} dofs",
                    matrix.n_rows(),
                    matrix.n_cols(),
                    self.levels[0].n_dofs
                ),
            ));
        }
        let coarse = match previous {
            // the next linearization on the same pattern: numeric refactorization only
            Some(mut c) if c.factorization() == opts.factorization && c.same_pattern(&matrix) => {
                c.refactor(matrix).map_err(coarse_error)?;
                c
            }
            _ => CoarseSolver::new(
                matrix,
                self.coarse_fixed.clone(),
                opts.factorization,
                &self.kernels,
                opts.dense_coarse_max_dofs,
            )
            .map_err(coarse_error)?,
        };
        self.ready = Some(Ready {
            smoothers,
            coarse,
            report: SetupReport {
                levels: reports,
                factorization: opts.factorization,
                seconds: t0.elapsed().as_secs_f64(),
            },
            profiler: opts.profile.then(|| Profiler::new(self.levels.len())),
        });
        Ok(())
    }

    /// One V-cycle: `x = M⁻¹ b` (see the [type documentation](Self)); `b`
    /// and `x` are finest-level vectors where the multigrid's vectors live.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `multigrid` before
    /// [`Multigrid::setup`], `b` or `x` for a wrong length or place; those of
    /// `ops` and of the coarse solve.
    pub fn apply(
        &mut self,
        ops: &mut dyn LevelOperators<R>,
        b: &Vector<R>,
        x: &mut Vector<R>,
    ) -> Result<()> {
        if self.single.is_some() {
            return Err(single_only("applied", "Multigrid::apply_single"));
        }
        let Some(ready) = self.ready.as_mut() else {
            return Err(Error::arg(
                "multigrid",
                "applied without a successful Multigrid::setup (the smoothers and the coarse \
                 factorization come from the operators)",
            ));
        };
        let finest = self.levels.len() - 1;
        let n = self.levels[finest].n_dofs;
        for (name, len) in [("b", b.len()), ("x", x.len())] {
            if len != n {
                return Err(Error::arg(
                    name,
                    format!("expected {n} entries (the finest level's), got {len}"),
                ));
            }
        }
        self.cycles += 1;
        if let Some(p) = ready.profiler.as_mut() {
            p.start_cycle(b)?;
        }
        let mut cycle = Cycle {
            transfers: &self.transfers,
            ready,
            fused_step_max_dofs: self.options.fused_step_max_dofs,
        };
        let result = if finest == 0 {
            cycle.run(ops, &mut self.work, b, x)
        } else {
            // b_D is not read (see "The cycle without Dirichlet passes")
            cycle
                .run(ops, &mut self.work, b, x)
                .and_then(|()| x.copy_at(&self.levels[finest].fixed, b))
        };
        if let Some(p) = cycle.ready.profiler.as_mut() {
            p.end_cycle(x)?;
        }
        result
    }
}

impl<R: Real> Multigrid<R> {
    /// [`Multigrid::setup`] of a multigrid whose cycle runs in `f32`
    /// ([`Multigrid::runs_in_single`]), for the levels' operators in `f32`
    /// `ops` (the coarsest assembled in `f64`, as always): the `f32`
    /// multigrid's point-block Jacobi, eigenvalue estimates (seed
    /// `seed + l`, as in `f64`) and smoothers, and the coarse factorization.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `cycle_precision` if the cycle runs
    /// in the working precision (set it up with [`Multigrid::setup`]);
    /// those of [`Multigrid::setup`].
    pub fn setup_single(&mut self, ops: &mut dyn LevelOperators<f32>) -> Result<()> {
        match &mut self.single {
            Some(s) => s.multigrid.setup(ops),
            None => Err(working_only("set up", "Multigrid::setup")),
        }
    }

    /// One V-cycle in `f32` of a multigrid whose cycle runs in `f32`:
    /// `x = P(M₃₂⁻¹ P⁻¹ b)` ([`CyclePrecision`]: `b` rounded to `f32`, the
    /// cycle [`Multigrid::apply`] of the `f32` multigrid on the `f32`
    /// operators `ops`, its result widened), then `x_D = b_D` exactly on
    /// the finest fixed dofs (the constrained rows the identity's, in the
    /// working precision).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `cycle_precision` if the cycle runs
    /// in the working precision (apply it with [`Multigrid::apply`]), `b`
    /// or `x` for a wrong length or place; those of [`Multigrid::apply`].
    pub fn apply_single(
        &mut self,
        ops: &mut dyn LevelOperators<f32>,
        b: &Vector<R>,
        x: &mut Vector<R>,
    ) -> Result<()> {
        let Some(single) = self.single.as_mut() else {
            return Err(working_only("applied", "Multigrid::apply"));
        };
        let finest = &self.levels[self.levels.len() - 1];
        for (name, len) in [("b", b.len()), ("x", x.len())] {
            if len != finest.n_dofs {
                return Err(Error::arg(
                    name,
                    format!(
                        "expected {} entries (the finest level's), got {len}",
                        finest.n_dofs
                    ),
                ));
            }
        }
        x.check_compatible("x", "b", b)?;
        single.apply(ops, b, x)?;
        x.copy_at(&finest.fixed, b)
    }
}

/// The error of a working-precision call on a multigrid whose cycle runs
/// in `f32`: it was `what` where `instead` applies.
fn single_only(what: &str, instead: &str) -> Error {
    Error::arg(
        "cycle_precision",
        format!(
            "CyclePrecision::Single: this multigrid's cycle runs in f32 and is {what} with \
             single-precision level operators ({instead}; OperatorLevels does so), not with \
             operators in the working precision"
        ),
    )
}

/// The error of a single-precision call on a multigrid whose cycle runs in
/// the working precision.
fn working_only(what: &str, instead: &str) -> Error {
    Error::arg(
        "cycle_precision",
        format!(
            "this multigrid's cycle runs in the working precision (CyclePrecision::Working, or \
             an f32 multigrid): it is {what} with {instead}"
        ),
    )
}

/// The `f32` multigrid a [`Multigrid<R>`](Multigrid) with
/// [`CyclePrecision::Single`] (and `R = f64`) runs its cycles on, and the
/// finest level's `f32` right-hand side and solution.
struct SingleCycle {
    multigrid: Multigrid<f32>,
    b: Vector<f32>,
    x: Vector<f32>,
}

impl SingleCycle {
    /// The `f32` multigrid of the levels of `sizes` (dofs and `N_comp`,
    /// coarsest first) joined by `transfers` (host transfers of any
    /// precision, converted) with the fixed dofs `fixed`, its vectors where
    /// `finest_like` lives.
    ///
    /// # Errors
    /// Those of building the multigrid.
    fn new<R: Real>(
        sizes: Vec<(usize, usize)>,
        transfers: &[Transfer<R>],
        fixed: &[FixedDofs],
        finest_like: &Vector<R>,
        options: MultigridOptions,
    ) -> Result<Self> {
        let n = finest_like.len();
        let zeros = || -> Result<Vector<f32>> {
            Ok(match finest_like {
                Vector::Host(_) => Vector::host_zeros(n),
                Vector::Device(d) => Vector::device_zeros(d.device(), n)?,
            })
        };
        let (b, x) = (zeros()?, zeros()?);
        let transfers = transfers
            .iter()
            .map(Transfer::in_precision::<f32>)
            .collect::<Result<Vec<_>>>()?;
        let multigrid = Multigrid::build(sizes, transfers, fixed, &b, options)?;
        Ok(SingleCycle { multigrid, b, x })
    }

    /// `x = P(M₃₂⁻¹ P⁻¹ b)`: `b` rounded to `f32`, one `f32` V-cycle, its
    /// result widened into `x` (two conversion kernels on a device).
    ///
    /// # Errors
    /// Those of [`Vector::convert_from`] and [`Multigrid::apply`].
    fn apply<R: Real>(
        &mut self,
        ops: &mut dyn LevelOperators<f32>,
        b: &Vector<R>,
        x: &mut Vector<R>,
    ) -> Result<()> {
        self.b.convert_from(b)?;
        self.multigrid.apply(ops, &self.b, &mut self.x)?;
        x.convert_from(&self.x)
    }
}

/// A set-up multigrid as one V-cycle reads it (borrowed apart from the
/// level vectors it writes).
struct Cycle<'a, R: Real> {
    transfers: &'a [Transfer<R>],
    ready: &'a mut Ready<R>,
    /// [`MultigridOptions::fused_step_max_dofs`].
    fused_step_max_dofs: usize,
}

impl<R: Real> Cycle<'_, R> {
    /// Ends the phase `phase` of level `l` when profiling ([`Profiler::lap`]).
    fn lap(&mut self, l: usize, phase: Phase, v: &Vector<R>) -> Result<()> {
        match self.ready.profiler.as_mut() {
            Some(p) => p.lap(l, phase, v),
            None => Ok(()),
        }
    }

    /// `x = cycle(l, b)` on the free dofs of level `l` (`x` zero on its
    /// fixed dofs, `b` not read there), with `work` the vectors of levels
    /// `1..=l` (none: `l = 0`, the direct solve, of `b` zero on the fixed
    /// dofs).
    fn run(
        &mut self,
        ops: &mut dyn LevelOperators<R>,
        work: &mut [Work<R>],
        b: &Vector<R>,
        x: &mut Vector<R>,
    ) -> Result<()> {
        let Some((w, below)) = work.split_last_mut() else {
            self.ready.coarse.solve(b, x)?;
            return self.lap(0, Phase::CoarseSolve, x);
        };
        let l = below.len() + 1;
        let transfers = self.transfers;
        let transfer = &transfers[l - 1];
        // the unconstrained operator: D⁻¹ zero on the fixed dofs keeps them
        // out of the smoothing (see the type documentation)
        // pre-smoothing from zero, then the residual
        let (jacobi, chebyshev) = &self.ready.smoothers[l - 1];
        let mut a = LevelAction {
            ops: &mut *ops,
            level: l,
            fuse: x.len() <= self.fused_step_max_dofs,
        };
        chebyshev.smooth(&mut a, jacobi, b, x, true, &mut w.smoother)?;
        self.lap(l, Phase::Smoothing, x)?;
        ops.apply(l, x, &mut w.ax)?;
        self.lap(l, Phase::Residual, x)?;
        // coarse correction: b_c = P̃ᵀ (b − A x)
        transfer.restrict_residual(&mut w.coarse_b, b, &w.ax)?;
        self.lap(l, Phase::Restriction, &w.coarse_b)?;
        self.run(ops, below, &w.coarse_b, &mut w.coarse_x)?;
        transfer.prolong_add(x, &w.coarse_x)?;
        self.lap(l, Phase::Prolongation, x)?;
        // post-smoothing
        let (jacobi, chebyshev) = &self.ready.smoothers[l - 1];
        let mut a = LevelAction {
            ops: &mut *ops,
            level: l,
            fuse: x.len() <= self.fused_step_max_dofs,
        };
        chebyshev.smooth(&mut a, jacobi, b, x, false, &mut w.smoother)?;
        self.lap(l, Phase::Smoothing, x)
    }
}

/// A zero vector of `n` entries where `like` lives.
fn zeros_of_len<R: Real>(like: &Vector<R>, n: usize) -> Result<Vector<R>> {
    Ok(match like {
        Vector::Host(_) => Vector::host_zeros(n),
        Vector::Device(d) => Vector::device_zeros(d.device(), n)?,
    })
}

/// An error of the smoother setup of level `l` as [`Multigrid::setup`]'s:
/// what its point-block diagonal ([`PointBlockJacobi`]) or eigenvalue
/// estimate ([`estimate_eigenvalues`]) found about the level's operator is
/// about `ops`; the estimate's start vector is zero only when every dof of
/// the level is fixed. Public for multigrids built of these pieces
/// elsewhere (femquad-mpi's), so that they report as this one does.
pub fn smoother_setup_error(e: Error, l: usize) -> Error {
    match e {
        Error::InvalidArgument {
            name: "blocks" | "a" | "jacobi",
            reason,
        } => Error::arg(
            "ops",
            format!("the operator of multigrid level {l}: {reason}"),
        ),
        Error::InvalidArgument { name: "b", .. } => Error::arg(
            "fixed",
            format!("every dof of multigrid level {l} is fixed: there is nothing to smooth"),
        ),
        Error::InvalidArgument {
            name: "steps",
            reason,
        } => Error::arg(
            "options",
            format!("MultigridOptions::eigen_steps: {reason}"),
        ),
        Error::InvalidArgument { name, reason } => {
            Error::arg(name, format!("multigrid level {l}: {reason}"))
        }
        other => other,
    }
}

/// An error of the coarse factorization ([`CoarseSolver`], naming its
/// `matrix`) as [`Multigrid::setup`]'s: about the coarsest operator of `ops`.
fn coarse_error(e: Error) -> Error {
    match e {
        Error::InvalidArgument {
            name: "matrix",
            reason,
        } => Error::arg(
            "ops",
            format!("the operator of the coarsest multigrid level (level 0): {reason}"),
        ),
        other => other,
    }
}
