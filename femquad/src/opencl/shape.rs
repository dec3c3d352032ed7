//! Cell blocking of the thread-transposition kernel: blocks, batches, chunks.
//!
//! With `N_bt = N_b·N_comp` element dofs, `N_q` quadrature points per cell
//! and `N_tc` threads per cell, one consistent set of formulas (also in
//! `kernels/integrate.cl`), with `L = LCM(N_q, N_bt)`:
//!
//! | name | value | meaning |
//! |---|---|---|
//! | `N_bs` | `L / gcd(L, N_tc)` | cells per block |
//! | `N_bl` | chosen | blocks per batch, run concurrently |
//! | `N_bc` | `N_bl·N_bs` | cells per batch |
//! | `N_t`  | `N_bc·N_tc` | threads per work-group |
//! | `N_cb` | chosen | batches per chunk, run serially |
//! | chunk  | `N_cb·N_bc` | cells per work-group |
//! | `N_sqc`| `⌈N_bc·N_q / N_t⌉ = ⌈N_q / N_tc⌉` | serial (cell, point) items per thread, quadrature phase |
//! | `N_sbc`| `⌈N_bc·N_bt / N_t⌉ = ⌈N_bt / N_tc⌉` | serial (cell, dof) items per thread, basis phase |
//!
//! `N_t` is a multiple of `L`, so each thread meets a single quadrature point
//! `t mod N_q` and a single element dof `t mod N_bt` (its tabulation stays in
//! registers). With one thread per cell (`N_tc = 1`, the default) the block is
//! `N_bs = LCM(N_q, N_bt)` cells, `N_sqc = N_q` and `N_sbc = N_bt` exactly.
//! More threads per cell shrink the block — needed when `L` cells' local
//! memory would not fit (3D P2 elasticity with 14 points: `L = 210`) — and
//! spread the basis phase of vector fields over more threads.
//!
//! The paper's prose takes `N_bs = LCM(N_b, N_q)` cells with `N_comp` threads
//! per cell, and gives `N_sqc = N_bs/N_b`, `N_sbc = N_bs/N_q`; these agree
//! with ours for scalar fields with coprime `N_b`, `N_q` (as in its examples)
//! but leave items unassigned otherwise (vector fields, `N_q > 1` with common
//! factors). Its appendix uses `N_bst = N_bt·N_q` threads per block, a common
//! multiple but not the least; ours is the least, so blocks are as small as
//! possible and `N_bl` tunes the work-group size freely.

use super::case::{KernelCase, gcd};
use super::device::DeviceInfo;
use super::options::KernelOptions;
use crate::aux_space::AuxSpace;
use crate::physics::Reads;
use crate::{Error, Precision, Result};

pub use super::launch_config::{AtomicAdd, GeometryMode, KernelVariant, LaunchConfig, Output};

/// Threads per work-group the default configuration aims at.
pub const DEFAULT_THREADS: usize = 256;
/// Default batches per chunk.
pub const DEFAULT_N_CB: usize = 4;

/// Every size of one kernel configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelShape {
    /// Spatial dimension.
    pub dim: usize,
    /// Scalar basis functions per cell.
    pub n_b: usize,
    /// Components of u.
    pub n_comp: usize,
    /// Quadrature points.
    pub n_q: usize,
    /// Element dofs `N_b·N_comp`.
    pub n_bt: usize,
    /// Threads per cell `N_tc`.
    pub n_tc: usize,
    /// Cells per block `LCM(N_q, N_bt) / gcd(LCM, N_tc)`.
    pub n_bs: usize,
    /// Blocks per batch.
    pub n_bl: usize,
    /// Batches per chunk.
    pub n_cb: usize,
    /// Cells per batch `N_bl·N_bs`.
    pub n_bc: usize,
    /// Threads per work-group `N_bc·N_tc`.
    pub n_t: usize,
    /// Cells per chunk (work-group).
    pub chunk: usize,
    /// Auxiliary values per cell.
    pub aux_per_cell: usize,
    /// Where the auxiliary field lives.
    pub aux: AuxSpace,
    /// Which point values the physics reads (only those are evaluated).
    pub reads: Reads,
    /// Whether cell vertex coordinates are loaded (physics reads `x`).
    pub reads_x: bool,
    /// Whether `f0` / `f1` are stored between the phases.
    pub has_f0: bool,
    /// See `has_f0`.
    pub has_f1: bool,
    /// Whether the physics is affine in `(u, ∇u)` (`PointwiseInfo::linear`):
    /// its tangent, so the Jacobian action, does not depend on `u`.
    pub linear: bool,
    /// Precision of the reals.
    pub precision: Precision,
    /// What the kernel reads and writes.
    pub variant: KernelVariant,
    /// Stored or computed geometry.
    pub geometry: GeometryMode,
    /// Patch capacities `(P_A, P_B)`: the vertex nodes and (P2) edge nodes
    /// a work-group's node list may hold to be a patch ([`patch_capacity`],
    /// capped by [`KernelOptions::patch_node_limit`]); `(0, 0)` without
    /// patches.
    pub patch: (usize, usize),
    /// Whether each thread loads the next batch into registers while the
    /// current one computes (kernel `PREFETCH`): as the configuration says,
    /// unless [`KernelOptions::prefetch`] is off.
    pub prefetch: bool,
    /// Whether batch inputs move through 16-byte vectors where the batch
    /// holds a whole number of them (kernel `VEC_WIDTH > 1`):
    /// [`KernelOptions::vector_loads`].
    pub vector_loads: bool,
    /// Whether each thread keeps its tabulation (`φ`, `∇̂φ` at its point and
    /// of its basis function) in registers (kernel `TAB_REGISTERS`), or reads
    /// it from local memory. Registers unless the element is large
    /// ([`TAB_REGISTER_REALS`]), or as [`KernelOptions::tab_registers`] forces.
    pub tab_registers: bool,
    /// The cell-parallel kernel ([`LaunchConfig::cell_parallel`]): one
    /// work-item per cell, `kernels/integrate_cell.cl`.
    pub cell_parallel: bool,
}

/// Most reals of per-thread tabulation, `(N_b + N_q)·(dim + 1)`, kept in
/// registers; larger tabulations (3D P2 with high-degree rules) are read
/// from local memory so that they do not crowd out the registers. Measured
/// on an H200 (BENCHMARKS.md), 3D P2 with 4 points (56 reals) runs faster
/// with registers, hence the bound.
pub const TAB_REGISTER_REALS: usize = 64;
impl KernelShape {
    /// The shape of the kernel `variant` of `case` launched with `config`,
    /// with the kernel switches of `options`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `n_bl`, `n_cb` or `n_tc` if it is 0,
    /// or `patches` if the element kernel asks for patches or if the
    /// patches of a chunk this large would hold more than
    /// [`MAX_PATCH_NODES`] nodes (the 16-bit local node indices).
    pub fn new(
        case: &KernelCase,
        variant: KernelVariant,
        config: LaunchConfig,
        options: &KernelOptions,
    ) -> Result<Self> {
        if config.n_bl == 0 {
            return Err(Error::arg("n_bl", "blocks per batch must be at least 1"));
        }
        if config.n_cb == 0 {
            return Err(Error::arg("n_cb", "batches per chunk must be at least 1"));
        }
        if config.n_tc == 0 {
            return Err(Error::arg("n_tc", "threads per cell must be at least 1"));
        }
        if config.patches && !variant.gathers() {
            return Err(Error::arg(
                "patches",
                "patches hold the gathered nodes of a work-group, but the element kernel \
                 reads cell-local inputs: launch it with `patches: false` \
                 (LaunchConfig::with_patches)",
            ));
        }
        if config.cell_parallel {
            check_cell_parallel(variant, config)?;
        }
        let l = case.lcm();
        let n_bs = l / gcd(l, config.n_tc);
        let n_bc = config.n_bl * n_bs;
        let n_t = n_bc * config.n_tc;
        let physics = case.physics;
        let chunk = config.n_cb * n_bc;
        let patch = if config.patches {
            let (p_a, p_b) = patch_capacity(case, chunk);
            match options.patch_node_limit {
                Some(limit) => (p_a.min(limit), p_b.min(limit.saturating_sub(p_a))),
                None => (p_a, p_b),
            }
        } else {
            (0, 0)
        };
        if patch.0 + patch.1 > MAX_PATCH_NODES {
            return Err(Error::arg(
                "patches",
                format!(
                    "patches of chunks of {chunk} cells hold {} + {} nodes, more than the \
                     {MAX_PATCH_NODES} that 16-bit local node indices address: choose fewer \
                     cells per work-group (n_cb, n_bl) or launch without patches",
                    patch.0, patch.1
                ),
            ));
        }
        Ok(KernelShape {
            dim: case.dim,
            n_b: case.n_b,
            n_comp: case.n_comp,
            n_q: case.n_q,
            n_bt: case.n_bt(),
            n_tc: config.n_tc,
            n_bs,
            n_bl: config.n_bl,
            n_cb: config.n_cb,
            n_bc,
            n_t,
            chunk,
            aux_per_cell: case.aux_per_cell(),
            aux: case.aux,
            reads: physics.reads,
            reads_x: physics.reads.x,
            has_f0: physics.has_f0,
            has_f1: physics.has_f1,
            linear: physics.linear,
            precision: case.precision,
            variant,
            geometry: config.geometry,
            patch,
            prefetch: config.prefetch && options.prefetch,
            vector_loads: options.vector_loads,
            tab_registers: options
                .tab_registers
                .unwrap_or((case.n_b + case.n_q) * (case.dim + 1) <= TAB_REGISTER_REALS),
            cell_parallel: config.cell_parallel,
        })
    }

    /// The launch configuration of this shape.
    pub fn config(&self) -> LaunchConfig {
        LaunchConfig {
            n_bl: self.n_bl,
            n_cb: self.n_cb,
            n_tc: self.n_tc,
            prefetch: self.prefetch,
            geometry: self.geometry,
            patches: self.patch != (0, 0),
            cell_parallel: self.cell_parallel,
        }
    }

    /// Whether the kernel reads the cell → node map (to gather `u`, or the
    /// vertex coordinates of computed geometry).
    pub fn reads_nodes(&self) -> bool {
        self.variant.gathers() || self.geometry == GeometryMode::Computed
    }

    /// Whether the kernel loads `u`: always, but for the Jacobian action of
    /// an affine physics ([`KernelShape::linear`]), whose tangent is the
    /// same at every `u` (the kernel then evaluates it at `u = 0`, `∇u = 0`
    /// and reads only the direction `v`).
    pub fn loads_u(&self) -> bool {
        !(self.variant.is_tangent() && self.linear)
    }

    /// Local memory of one work-group in bytes: the batch's node indices,
    /// coefficients, `J⁻¹`, `det J`, aux, coordinates, and the `f0`/`f1`
    /// values at its quadrature points.
    pub fn local_mem_bytes(&self) -> usize {
        if self.cell_parallel {
            // only a patch's copies and sums
            return self.patch_reals() * self.precision.size();
        }
        let d = self.dim;
        let direction = if self.variant.is_tangent() {
            self.n_bt
        } else {
            0
        };
        let u = if self.loads_u() { self.n_bt } else { 0 };
        let per_cell_reals = u
            + direction
            + d * d
            + 1
            + self.aux_per_cell
            + if self.reads_x { (d + 1) * d } else { 0 };
        let per_cell_points =
            self.n_q * self.n_comp * (usize::from(self.has_f0) + if self.has_f1 { d } else { 0 });
        let tabulation = if self.tab_registers {
            0
        } else {
            self.n_q * self.n_b * (d + 1)
        };
        let (p_a, p_b) = self.patch;
        // 32-bit global node indices, and 16-bit local ones with patches
        let index_bytes = if p_a + p_b > 0 { 4 + 2 } else { 4 };
        let node_bytes = if self.reads_nodes() {
            self.n_bc * self.n_b * index_bytes
        } else {
            0
        };
        (self.n_bc * (per_cell_reals + per_cell_points) + tabulation + self.patch_reals())
            * self.precision.size()
            + node_bytes
    }

    /// Reals of a patch in local memory (none without patches): per node
    /// of its list (`P_A + P_B` entries) `u` (unless the kernel evaluates
    /// at `u = 0`), the direction `v`, the aux field, the group's sums
    /// (atomic output) and — the cell-parallel kernel — `b` of the time
    /// state `u_t = σu + b`; per vertex node (`P_A`) the coordinates where
    /// the geometry is computed or the physics reads `x`.
    fn patch_reals(&self) -> usize {
        let (p_a, p_b) = self.patch;
        let aux_field = match self.aux {
            AuxSpace::Field { n_comp } if self.reads.a || self.reads.grad_a => n_comp,
            _ => 0,
        };
        let atomic = usize::from(matches!(self.variant.output(), Output::Atomic(_)));
        let coords = if self.geometry == GeometryMode::Computed || self.reads_x {
            p_a * self.dim
        } else {
            0
        };
        let tangent = usize::from(self.variant.is_tangent());
        let u = usize::from(self.loads_u());
        let time_b = usize::from(self.cell_parallel && self.reads.u_t && self.loads_u());
        (p_a + p_b) * (self.n_comp * (u + tangent + atomic + time_b) + aux_field) + coords
    }

    /// Checks work-group size and local memory against the device.
    pub fn check_device(&self, device: &DeviceInfo) -> Result<()> {
        if self.n_t > device.max_work_group_size {
            return Err(Error::DeviceLimit {
                device: device.name.clone(),
                what: "work-group size (threads N_t = N_bl·N_bs·N_tc)",
                needed: self.n_t,
                limit: device.max_work_group_size,
            });
        }
        // Leave 1 KiB for the implementation's own use of local memory.
        let limit = (device.local_mem_size as usize).saturating_sub(1024);
        if self.local_mem_bytes() > limit {
            return Err(Error::DeviceLimit {
                device: device.name.clone(),
                what: "local memory per work-group (bytes)",
                needed: self.local_mem_bytes(),
                limit,
            });
        }
        Ok(())
    }

    /// Number of work-groups (chunks) that cover `n_cells` cells: the last
    /// one may be partial (its missing cells are padding, never stored).
    pub fn n_chunks(&self, n_cells: usize) -> usize {
        n_cells.div_ceil(self.chunk)
    }
}

/// `Ok` if the cell-parallel kernel ([`LaunchConfig::cell_parallel`]) can
/// run `variant` with `config`.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `cell_parallel` for the element kernel
/// (cell-local inputs: the thread transposition only), `n_tc` for more than
/// one thread per cell, `prefetch` if it is on (the kernel has none), and
/// `patches` with element-vector output (its patches only sum atomic output).
fn check_cell_parallel(variant: KernelVariant, config: LaunchConfig) -> Result<()> {
    if !variant.gathers() {
        return Err(Error::arg(
            "cell_parallel",
            "the cell-parallel kernel computes the fused residual and Jacobian action; the \
             element kernel runs on the thread transposition: launch it with \
             `cell_parallel: false` (LaunchConfig::with_cell_parallel)",
        ));
    }
    if config.n_tc != 1 {
        return Err(Error::arg(
            "n_tc",
            format!(
                "the cell-parallel kernel runs one work-item per cell, not {}: launch it with \
                 `n_tc: 1` (LaunchConfig::with_threads_per_cell)",
                config.n_tc
            ),
        ));
    }
    if config.prefetch {
        return Err(Error::arg(
            "prefetch",
            "the cell-parallel kernel has no register prefetch: launch it with \
             `prefetch: false` (LaunchConfig::with_cell_parallel switches it off)",
        ));
    }
    if config.patches && variant.output() == Output::ElementVectors {
        return Err(Error::arg(
            "patches",
            "the cell-parallel kernel uses patches to sum its atomic output in local memory; \
             with element vectors (deterministic assembly) launch it with `patches: false`",
        ));
    }
    Ok(())
}

/// Most nodes a patch may hold (`P_A + P_B`): its positions are the
/// kernel's 16-bit local node indices (`ushort`).
pub const MAX_PATCH_NODES: usize = u16::MAX as usize;

/// SIMD width the default configuration aligns work-groups to (an NVIDIA
/// warp; a multiple of most other devices' widths).
pub const ALIGN_THREADS: usize = 32;

/// Patch capacities `(P_A, P_B)` for chunks of `chunk` cells: vertex
/// nodes `P_A` — a compact group of cells has about `chunk/2` distinct
/// vertices in 2D and `chunk/5` in 3D plus its boundary layer, so `chunk`
/// (2D) and `chunk/2` (3D) leave room — and for P2 the edge nodes,
/// `P_B = 2·chunk` (about 1.5 edges per triangle and 1.2 per tetrahedron,
/// plus the layer). A group whose nodes do not fit is no patch: it gathers
/// through the 32-bit node map (counted in
/// [`LaunchRecord::fallback_groups`](super::LaunchRecord::fallback_groups)).
pub fn patch_capacity(case: &KernelCase, chunk: usize) -> (usize, usize) {
    let w_a = if case.dim == 2 {
        chunk
    } else {
        chunk.div_ceil(2)
    };
    let w_b = if case.n_b > case.dim + 1 {
        2 * chunk
    } else {
        0
    };
    (w_a, w_b)
}

/// Whether the device default of the kernel `variant` of `case` is the
/// cell-parallel kernel ([`default_config`]): the residual and the Jacobian
/// action of a scalar field.
fn cell_parallel_by_default(case: &KernelCase, variant: KernelVariant) -> bool {
    variant.gathers() && case.n_comp == 1
}

/// The geometry of the device default configuration of the kernel
/// `variant` of `case`: computed from the vertices (`J`, `det J`, `J⁻¹` in
/// registers, [`GeometryMode::Computed`]) where the default is the
/// cell-parallel kernel (a scalar field's residual and Jacobian action),
/// stored `J⁻¹`/`det J` ([`GeometryMode::Stored`]) for the thread
/// transposition (the element kernel, vector fields).
///
/// Why, measured on an H200 (BENCHMARKS.md, "#22, session 16", `F(u)`,
/// 2²⁴ cells, renumbered mesh, default launch configurations): for every
/// scalar case of the suite the cell-parallel kernel is faster with the
/// geometry computed — by 2–16 % with atomic output (2D P1 f32 0.346 →
/// 0.319 ms, 2D P1 f64 0.496 → 0.428, 3D P1 f64 0.784 → 0.683, 2D / 3D P2
/// f64 1.017 → 0.958 / 1.927 → 1.867) and by 0–25 % with deterministic
/// output (3D P2: equal) — as its streams of `J⁻¹` and `det J` (3D f64: 80
/// bytes a cell, 80 % of its bytes) outweigh the vertex gathers; the
/// transposition is slower with it for the vector cases (Lamé P1 and P2: by
/// up to 65 %; 3D P1 Lamé f32 with atomic output 1.5 % faster).
pub fn default_geometry(case: &KernelCase, variant: KernelVariant) -> GeometryMode {
    if cell_parallel_by_default(case, variant) {
        GeometryMode::Computed
    } else {
        GeometryMode::Stored
    }
}

/// A valid default configuration of the kernel `variant` of `case` with
/// `geometry` ([`default_geometry`] is the operator's), for the device: one thread per
/// cell if possible (else the fewest threads per cell whose blocks fit),
/// about [`DEFAULT_THREADS`] threads per work-group, a multiple of
/// [`ALIGN_THREADS`] where blocks allow (so batches start on warp
/// boundaries), fewer if the work-group or local-memory limits require,
/// [`DEFAULT_N_CB`] batches per chunk, and no patches
/// ([`LaunchConfig::patches`]); for the residual and the Jacobian action
/// of a scalar field (`N_comp = 1`) the cell-parallel kernel
/// ([`LaunchConfig::cell_parallel`], one work-item per cell, `N_tc = 1`),
/// else (the element kernel, vector fields) the thread transposition.
///
/// Why, measured on an H100 (BENCHMARKS.md, "#22 and #24, session 11";
/// F(u), 2²⁴ cells, renumbered mesh, f64 unless said, atomic output, the
/// faster geometry of each), the cell-parallel kernel without patches
/// against the transposition: 0.36 / 0.49 / 0.79 ms against 0.43 / 0.66 /
/// 0.98 (2D P1 Laplacian f32 / f64, 3D P1), 1.10 / 2.07 against 1.99 /
/// 4.54 (2D / 3D P2 Laplacian); deterministic output 0.36 / 0.55 / 0.93
/// against 0.50 / 0.83 / 1.28 (P1) — but for Lamé 1.22 / 2.74 against
/// 1.28 / 1.55 (2D / 3D P1: a work-item's registers hold every component).
/// With patches it is faster still for P1 (0.27 / 0.42 / 0.68), but the
/// patch lists cost the operator's setup (`solve_bench --first-solution`
/// at 2²⁴ cells: 0.27–0.47 s → 0.83–1.04 s with them), so patches are what
/// the autotuner (stage 5) and an explicit configuration choose, not the
/// default.
///
/// # Errors
/// The device limit that no configuration meets.
pub fn default_config(
    case: &KernelCase,
    variant: KernelVariant,
    geometry: GeometryMode,
    options: &KernelOptions,
    device: &DeviceInfo,
) -> Result<LaunchConfig> {
    let l = case.lcm();
    let mut last_error = None;
    // Threads per cell: the divisors of L, smallest first (each keeps L
    // threads per block and divides the cells per block by itself).
    for n_tc in (1..=l).filter(|&d| l.is_multiple_of(d)) {
        let threads_per_block = l; // N_bs·N_tc with N_bs = L / N_tc
        // Blocks per warp-aligned step, and how many steps reach DEFAULT_THREADS.
        let step = ALIGN_THREADS / gcd(ALIGN_THREADS, threads_per_block);
        let steps =
            ((DEFAULT_THREADS as f64 / (threads_per_block * step) as f64).round() as usize).max(1);
        // Aligned work-groups only while they stay within twice the target.
        let aligned = (1..=steps)
            .rev()
            .map(|k| k * step)
            .filter(|&n_bl| n_bl * threads_per_block <= 2 * DEFAULT_THREADS);
        let unaligned =
            std::iter::successors(Some((DEFAULT_THREADS / threads_per_block).max(1)), |&n| {
                (n > 1).then_some(n / 2)
            });
        for n_bl in aligned.chain(unaligned) {
            let config = LaunchConfig::new(n_bl, DEFAULT_N_CB)
                .with_threads_per_cell(n_tc)
                .with_geometry(geometry)
                .with_patches(false);
            let shape = KernelShape::new(case, variant, config, options)?;
            match shape.check_device(device) {
                Ok(()) if cell_parallel_by_default(case, variant) => {
                    // N_bl·N_bs cells a work-group, one work-item each: no
                    // more work-items and no more local memory than the
                    // transposition that fits
                    let cell = LaunchConfig { n_tc: 1, ..config }.with_cell_parallel(true);
                    KernelShape::new(case, variant, cell, options)?.check_device(device)?;
                    return Ok(cell);
                }
                Ok(()) => return Ok(config),
                Err(e) => last_error = Some(e),
            }
        }
    }
    Err(last_error.unwrap_or_else(|| Error::arg("n_bl", "no valid configuration")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aux_space::AuxSpace;
    use crate::physics::Pointwise;
    use crate::physics::builtin::{Lame, Laplacian, NonlinearDiffusion};

    /// A case of `dim`, `n_b`, `n_comp`, `n_q` with no aux field.
    pub(crate) fn case(
        dim: usize,
        n_b: usize,
        n_comp: usize,
        n_q: usize,
        physics: &'static crate::physics::PointwiseInfo,
        precision: Precision,
    ) -> KernelCase {
        KernelCase {
            dim,
            n_b,
            n_comp,
            n_q,
            aux: AuxSpace::None,
            physics,
            precision,
        }
    }

    #[test]
    fn shapes_for_paper_examples() {
        let options = KernelOptions::default();
        // 2D P1 Poisson, one point: blocks of 3 cells.
        let c = case(2, 3, 1, 1, Laplacian.info(), Precision::F32);
        let s = KernelShape::new(
            &c,
            KernelVariant::Element,
            LaunchConfig::new(32, 8),
            &options,
        )
        .unwrap();
        assert_eq!((s.n_bs, s.n_t, s.chunk), (3, 96, 768));
        // 96 cells × (3 + 4 + 1 + 2) floats
        assert_eq!(s.local_mem_bytes(), 96 * 10 * 4);
        // Vector field with N_q = 4: 2D P1 Lamé, N_bt = 6, N_bs = LCM(4, 6) = 12.
        let c = case(2, 3, 2, 4, Lame.info(), Precision::F64);
        let s = KernelShape::new(
            &c,
            KernelVariant::Element,
            LaunchConfig::new(2, 1),
            &options,
        )
        .unwrap();
        assert_eq!((s.n_bs, s.n_t), (12, 24));
        // every thread: 4 quadrature items and 6 basis items; both phases fully covered
        assert_eq!(s.n_t * s.n_q, s.n_bc * s.n_q);
        assert_eq!(s.n_t * s.n_bt, s.n_bc * s.n_bt);
    }

    /// The default geometry follows the default kernel: computed for the
    /// cell-parallel kernel (a scalar field's residual and Jacobian action,
    /// either output), stored for the transposition (the element kernel,
    /// a vector field).
    #[test]
    fn the_default_geometry_is_computed_for_the_cell_parallel_kernel() {
        let atomic = Output::Atomic(AtomicAdd::CompareExchange);
        let scalar = case(3, 4, 1, 1, Laplacian.info(), Precision::F64);
        let vector = case(3, 4, 3, 1, Lame.info(), Precision::F64);
        for variant in [
            KernelVariant::Residual(atomic),
            KernelVariant::JacobianAction(atomic),
            KernelVariant::Residual(Output::ElementVectors),
        ] {
            assert_eq!(default_geometry(&scalar, variant), GeometryMode::Computed);
            assert_eq!(default_geometry(&vector, variant), GeometryMode::Stored);
        }
        assert_eq!(
            default_geometry(&scalar, KernelVariant::Element),
            GeometryMode::Stored
        );
    }

    #[test]
    fn options_switch_kernel_features() {
        let c = case(2, 3, 1, 1, Laplacian.info(), Precision::F32);
        let config = LaunchConfig::new(4, 2);
        let on = KernelShape::new(
            &c,
            KernelVariant::Element,
            config,
            &KernelOptions::default(),
        )
        .unwrap();
        assert!(on.prefetch && on.vector_loads && on.tab_registers);
        let off = KernelOptions {
            prefetch: false,
            vector_loads: false,
            tab_registers: Some(false),
            ..KernelOptions::default()
        };
        let s = KernelShape::new(&c, KernelVariant::Element, config, &off).unwrap();
        assert!(!s.prefetch && !s.vector_loads && !s.tab_registers);
        // prefetch needs both the configuration and the option
        let s = KernelShape::new(
            &c,
            KernelVariant::Element,
            config.with_prefetch(false),
            &KernelOptions::default(),
        );
        assert!(!s.unwrap().prefetch);
    }

    #[test]
    fn tabulation_leaves_registers_only_for_large_elements() {
        let options = KernelOptions::default();
        let shape = |n_q| {
            let c = case(3, 10, 1, n_q, Laplacian.info(), Precision::F64);
            KernelShape::new(
                &c,
                KernelVariant::Element,
                LaunchConfig::new(1, 1),
                &options,
            )
            .unwrap()
        };
        assert!(
            shape(4).tab_registers,
            "3D P2, 4 points: (10 + 4)·4 = 56 reals"
        );
        assert!(
            !shape(14).tab_registers,
            "3D P2, 14 points: (10 + 14)·4 = 96 reals"
        );
        // The local copy of the tabulation is counted: 14·10·4 reals.
        let s = shape(14);
        let without = KernelShape {
            tab_registers: true,
            ..s
        };
        assert_eq!(
            s.local_mem_bytes() - without.local_mem_bytes(),
            14 * 10 * 4 * 8
        );
    }

    #[test]
    fn invalid_configs_are_rejected() {
        let c = case(2, 3, 1, 1, Laplacian.info(), Precision::F32);
        let options = KernelOptions::default();
        for (config, name) in [
            (LaunchConfig::new(0, 1), "n_bl"),
            (LaunchConfig::new(1, 0), "n_cb"),
            (LaunchConfig::new(1, 1).with_threads_per_cell(0), "n_tc"),
        ] {
            let e = KernelShape::new(&c, KernelVariant::Element, config, &options).unwrap_err();
            assert!(e.to_string().contains(name), "{e}");
        }
    }

    /// Patches exist only for kernels that gather: asking the element
    /// kernel for them is an error naming `patches` (it was dropped
    /// silently), while the fused kernels get a patch; a
    /// [`KernelOptions::patch_node_limit`] caps the capacities.
    #[test]
    fn patches_without_gather_are_an_error() {
        let c = case(2, 3, 1, 1, Laplacian.info(), Precision::F32);
        let options = KernelOptions::default();
        let config = LaunchConfig::new(4, 1).with_patches(true);
        let e = KernelShape::new(&c, KernelVariant::Element, config, &options).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { name, .. } if *name == "patches"),
            "{e}"
        );
        assert!(e.to_string().contains("with_patches"), "{e}");
        for variant in [
            KernelVariant::Residual(Output::ElementVectors),
            KernelVariant::JacobianAction(Output::Atomic(AtomicAdd::CompareExchange)),
        ] {
            let s = KernelShape::new(&c, variant, config, &options).unwrap();
            assert_eq!(s.patch, patch_capacity(&c, s.chunk), "{variant:?}");
            assert!(s.config().patches);
            let limited = KernelOptions {
                patch_node_limit: Some(5),
                ..KernelOptions::default()
            };
            let s = KernelShape::new(&c, variant, config, &limited).unwrap();
            assert_eq!(s.patch, (5, 0), "{variant:?}");
        }
    }

    /// The cell-parallel kernel runs the gathering kernels with one
    /// work-item per cell, no prefetch, and patches only with atomic
    /// output: anything else is an error naming the setting; a valid one
    /// is a work-group of `N_bl·N_bs` work-items over the transposition's
    /// chunk, whose local memory is a patch's copies and sums alone.
    #[test]
    fn cell_parallel_refuses_what_it_does_not_run() {
        let c = case(2, 3, 1, 1, Laplacian.info(), Precision::F32);
        let options = KernelOptions::default();
        let atomic = KernelVariant::Residual(Output::Atomic(AtomicAdd::CompareExchange));
        let elements = KernelVariant::JacobianAction(Output::ElementVectors);
        let cell = LaunchConfig::new(4, 2).with_cell_parallel(true);
        assert!(!cell.prefetch);
        for (variant, config, name) in [
            (KernelVariant::Element, cell, "cell_parallel"),
            (atomic, cell.with_threads_per_cell(3), "n_tc"),
            (atomic, cell.with_prefetch(true), "prefetch"),
            (elements, cell.with_patches(true), "patches"),
        ] {
            let e = KernelShape::new(&c, variant, config, &options).unwrap_err();
            assert!(
                matches!(&e, Error::InvalidArgument { name: n, .. } if *n == name),
                "{variant:?} {config}: {e}"
            );
        }
        let s = KernelShape::new(&c, atomic, cell.with_patches(true), &options).unwrap();
        assert!(s.cell_parallel);
        assert_eq!((s.n_t, s.chunk), (12, 24));
        assert_eq!(s.config(), cell.with_patches(true));
        // a patch's copy of u and its sums; with computed geometry its
        // vertices' coordinates; for J·v the direction as well
        assert_eq!(s.local_mem_bytes(), (s.patch.0 + s.patch.1) * 2 * 4);
        let computed = cell
            .with_patches(true)
            .with_geometry(GeometryMode::Computed);
        let s = KernelShape::new(&c, atomic, computed, &options).unwrap();
        assert_eq!(
            s.local_mem_bytes(),
            ((s.patch.0 + s.patch.1) * 2 + s.patch.0 * 2) * 4
        );
        let tangent = KernelVariant::JacobianAction(Output::Atomic(AtomicAdd::CompareExchange));
        let nonlinear = case(2, 3, 1, 1, NonlinearDiffusion.info(), Precision::F32);
        let s = KernelShape::new(&nonlinear, tangent, computed, &options).unwrap();
        assert_eq!(
            s.local_mem_bytes(),
            ((s.patch.0 + s.patch.1) * 3 + s.patch.0 * 2) * 4
        );
        let s = KernelShape::new(&c, elements, cell, &options).unwrap();
        assert_eq!(s.local_mem_bytes(), 0);
    }

    /// Patches whose positions would not fit the 16-bit local node indices
    /// are refused, naming `patches`; the largest chunk that fits is
    /// accepted.
    #[test]
    fn patches_beyond_16_bit_local_indices_are_an_error() {
        // 2D P1, one point: N_bs = 3, P_A = chunk, P_B = 0
        let c = case(2, 3, 1, 1, Laplacian.info(), Precision::F32);
        let options = KernelOptions::default();
        let variant = KernelVariant::Residual(Output::Atomic(AtomicAdd::CompareExchange));
        // 3 · 21845 = 65535 cells: a patch of 65535 nodes fits
        let fits = LaunchConfig::new(21845, 1).with_patches(true);
        let s = KernelShape::new(&c, variant, fits, &options).unwrap();
        assert_eq!(s.patch, (MAX_PATCH_NODES, 0));
        // 65538 cells do not
        let config = LaunchConfig::new(21846, 1).with_patches(true);
        let e = KernelShape::new(&c, variant, config, &options).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument { name, .. } if *name == "patches"),
            "{e}"
        );
        assert!(e.to_string().contains("16-bit"), "{e}");
        // without patches the same chunk is no error here
        KernelShape::new(&c, variant, config.with_patches(false), &options).unwrap();
    }
}
