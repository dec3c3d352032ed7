//! Cell blocking of the thread-transposition kernel: blocks, batches, chunks.
//!
//! With `N_BT = N_b·N_comp` element dofs and `N_q` quadrature points per
//! cell, one consistent set of formulas (also in `kernels/integrate.cl`):
//!
//! | name | value | meaning |
//! |---|---|---|
//! | `N_bs` | `LCM(N_q, N_bt)` | cells per block |
//! | `N_bl` | chosen | blocks per batch, run concurrently |
//! | `N_t`  | `N_bl·N_bs` | threads per work-group |
//! | `N_bc` | `N_t` | cells per batch (one thread per cell) |
//! | `N_cb` | chosen | batches per chunk, run serially |
//! | chunk  | `N_cb·N_bc` | cells per work-group |
//! | `N_sqc`| `N_q` | serial (cell, point) items per thread in the quadrature phase |
//! | `N_sbc`| `N_bt` | serial (cell, dof) items per thread in the basis phase |
//!
//! Because `N_t` is a multiple of `LCM(N_q, N_bt)`, each thread meets a single
//! quadrature point `t mod N_q` and a single element dof `t mod N_bt`. The
//! paper's prose takes `N_bs = LCM(N_b, N_q)` cells and `N_t = N_bs·N_comp·N_bl`
//! threads, and gives `N_sqc = N_bs/N_b`, `N_sbc = N_bs/N_q`; these agree with
//! ours for scalar fields with coprime `N_b`, `N_q` (as in its examples) but
//! leave threads idle or items unassigned otherwise (vector fields, `N_q > 1`
//! with common factors). Its appendix uses `N_bst = N_bt·N_q` threads per
//! block, a common multiple but not the least; ours is the least, so blocks
//! are as small as possible and `N_bl` tunes the work-group size freely.

use crate::aux::AuxSpace;
use crate::opencl::device::DeviceInfo;
use crate::physics::PointwiseInfo;
use crate::{Error, Result};

/// Greatest common divisor.
pub fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Least common multiple (0 if either is 0).
pub fn lcm(a: usize, b: usize) -> usize {
    if a == 0 || b == 0 {
        0
    } else {
        a / gcd(a, b) * b
    }
}

/// The tunable launch parameters: blocks per batch and batches per chunk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// `N_bl`, blocks per batch (concurrent).
    pub n_bl: usize,
    /// `N_cb`, batches per chunk (serial within a work-group).
    pub n_cb: usize,
}

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
    /// Cells per block `LCM(N_q, N_bt)`.
    pub n_bs: usize,
    /// Blocks per batch.
    pub n_bl: usize,
    /// Batches per chunk.
    pub n_cb: usize,
    /// Threads per work-group = cells per batch.
    pub n_t: usize,
    /// Cells per chunk (work-group).
    pub chunk: usize,
    /// Auxiliary values per cell.
    pub aux_per_cell: usize,
    /// Whether cell vertex coordinates are loaded (physics reads `x`).
    pub reads_x: bool,
    /// Whether `f0` / `f1` are stored between the phases.
    pub has_f0: bool,
    /// See `has_f0`.
    pub has_f1: bool,
    /// Bytes of one real.
    pub real_size: usize,
    /// Whether each thread loads the next batch into registers while the
    /// current one computes (kernel `PREFETCH`). On by default; the
    /// environment variable [`PREFETCH_ENV`]`=0` turns it off (for
    /// measurements).
    pub prefetch: bool,
    /// Whether batch inputs move through 16-byte vectors where the batch
    /// holds a whole number of them (kernel `VEC_WIDTH > 1`). On by default;
    /// [`VECTOR_LOADS_ENV`]`=0` turns it off (for measurements).
    pub vector_loads: bool,
}

/// Environment variable that disables register prefetching when `0`.
pub const PREFETCH_ENV: &str = "FEMQUAD_PREFETCH";
/// Environment variable that disables 16-byte vector loads when `0`.
pub const VECTOR_LOADS_ENV: &str = "FEMQUAD_VECTOR_LOADS";

fn enabled_by_env(name: &str) -> bool {
    std::env::var(name).map(|v| v.trim() != "0").unwrap_or(true)
}

impl KernelShape {
    /// The shape for a discretization (`dim`, `n_b`, `n_comp`, `n_q`),
    /// physics and auxiliary space, with `config` and reals of `real_size` bytes.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        dim: usize,
        n_b: usize,
        n_comp: usize,
        n_q: usize,
        aux: AuxSpace,
        physics: &PointwiseInfo,
        real_size: usize,
        config: LaunchConfig,
    ) -> Result<Self> {
        if config.n_bl == 0 {
            return Err(Error::arg("n_bl", "blocks per batch must be at least 1"));
        }
        if config.n_cb == 0 {
            return Err(Error::arg("n_cb", "batches per chunk must be at least 1"));
        }
        let n_bt = n_b * n_comp;
        let n_bs = lcm(n_q, n_bt);
        let n_t = config.n_bl * n_bs;
        Ok(KernelShape {
            dim,
            n_b,
            n_comp,
            n_q,
            n_bt,
            n_bs,
            n_bl: config.n_bl,
            n_cb: config.n_cb,
            n_t,
            chunk: config.n_cb * n_t,
            aux_per_cell: aux.values_per_cell(n_b),
            reads_x: physics.reads.x,
            has_f0: physics.has_f0,
            has_f1: physics.has_f1,
            real_size,
            prefetch: enabled_by_env(PREFETCH_ENV),
            vector_loads: enabled_by_env(VECTOR_LOADS_ENV),
        })
    }

    /// Cells per batch, `N_bc = N_t`.
    pub fn n_bc(&self) -> usize {
        self.n_t
    }

    /// Local memory of one work-group in bytes: the batch's coefficients,
    /// `J⁻¹`, `det J`, aux, coordinates, and the `f0`/`f1` values at its
    /// quadrature points.
    pub fn local_mem_bytes(&self) -> usize {
        let d = self.dim;
        let per_cell_inputs = self.n_bt
            + d * d
            + 1
            + self.aux_per_cell
            + if self.reads_x { (d + 1) * d } else { 0 };
        let per_cell_points = self.n_q
            * self.n_comp
            * (usize::from(self.has_f0) + if self.has_f1 { d } else { 0 });
        self.n_bc() * (per_cell_inputs + per_cell_points) * self.real_size
    }

    /// Checks work-group size and local memory against the device.
    pub fn check_device(&self, device: &DeviceInfo) -> Result<()> {
        if self.n_t > device.max_work_group_size {
            return Err(Error::DeviceLimit {
                device: device.name.clone(),
                what: "work-group size (threads = N_bl·LCM(N_q, N_b·N_comp))",
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

    /// Number of full chunks (work-groups) for `n_cells` cells; the
    /// remaining `n_cells mod chunk` cells are integrated natively.
    pub fn n_chunks(&self, n_cells: usize) -> usize {
        n_cells / self.chunk
    }
}

/// SIMD width the default configuration aligns work-groups to (an NVIDIA
/// warp; a multiple of most other devices' widths).
pub const ALIGN_THREADS: usize = 32;

/// A valid default configuration for the device: about
/// [`DEFAULT_THREADS`] threads per work-group, a multiple of
/// [`ALIGN_THREADS`] where blocks allow (so batches start on warp
/// boundaries), fewer if the work-group or local-memory limits require, and
/// [`DEFAULT_N_CB`] batches per chunk.
#[allow(clippy::too_many_arguments)]
pub fn default_config(
    dim: usize,
    n_b: usize,
    n_comp: usize,
    n_q: usize,
    aux: AuxSpace,
    physics: &PointwiseInfo,
    real_size: usize,
    device: &DeviceInfo,
) -> Result<LaunchConfig> {
    let n_bs = lcm(n_q, n_b * n_comp);
    // Blocks per warp-aligned step, and how many steps reach DEFAULT_THREADS.
    let step = ALIGN_THREADS / gcd(ALIGN_THREADS, n_bs);
    let steps = ((DEFAULT_THREADS as f64 / (n_bs * step) as f64).round() as usize).max(1);
    // Aligned work-groups only while they stay within twice the target.
    let aligned = (1..=steps)
        .rev()
        .map(|k| k * step)
        .filter(|&n_bl| n_bl * n_bs <= 2 * DEFAULT_THREADS);
    let unaligned = std::iter::successors(Some((DEFAULT_THREADS / n_bs).max(1)), |&n| {
        (n > 1).then_some(n / 2)
    });
    let mut last_error = None;
    for n_bl in aligned.chain(unaligned) {
        let config = LaunchConfig {
            n_bl,
            n_cb: DEFAULT_N_CB,
        };
        let shape = KernelShape::new(dim, n_b, n_comp, n_q, aux, physics, real_size, config)?;
        match shape.check_device(device) {
            Ok(()) => return Ok(config),
            Err(e) => last_error = Some(e),
        }
    }
    Err(last_error.unwrap_or_else(|| Error::arg("n_bl", "no valid configuration")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::physics::builtin::{Lame, Laplacian};
    use crate::physics::Pointwise;

    #[test]
    fn lcm_and_gcd() {
        assert_eq!(lcm(1, 3), 3);
        assert_eq!(lcm(4, 6), 12);
        assert_eq!(lcm(3, 12), 12);
        assert_eq!(gcd(27, 10), 1);
    }

    #[test]
    fn shapes_for_paper_examples() {
        // 2D P1 Poisson, one point: blocks of 3 cells.
        let s = KernelShape::new(
            2, 3, 1, 1, AuxSpace::None, Laplacian.info(), 4,
            LaunchConfig { n_bl: 32, n_cb: 8 },
        )
        .unwrap();
        assert_eq!((s.n_bs, s.n_t, s.chunk), (3, 96, 768));
        // 96 cells × (3 + 4 + 1 + 2) floats
        assert_eq!(s.local_mem_bytes(), 96 * 10 * 4);
        // Vector field with N_q = 4: 2D P1 Lamé, N_bt = 6, N_bs = LCM(4, 6) = 12.
        let s = KernelShape::new(
            2, 3, 2, 4, AuxSpace::None, Lame.info(), 8,
            LaunchConfig { n_bl: 2, n_cb: 1 },
        )
        .unwrap();
        assert_eq!((s.n_bs, s.n_t), (12, 24));
        // every thread: 4 quadrature items and 6 basis items; both phases fully covered
        assert_eq!(s.n_t * s.n_q, s.n_bc() * s.n_q);
        assert_eq!(s.n_t * s.n_bt, s.n_bc() * s.n_bt);
    }

    #[test]
    fn invalid_configs_are_rejected() {
        let e = KernelShape::new(
            2, 3, 1, 1, AuxSpace::None, Laplacian.info(), 4,
            LaunchConfig { n_bl: 0, n_cb: 1 },
        )
        .unwrap_err();
        assert!(e.to_string().contains("n_bl"), "{e}");
    }
}
