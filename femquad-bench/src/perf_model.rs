//! Performance model of the thread-transposition kernels: the element
//! kernel (BK, the paper's measure) and the global residual (BP).
//!
//! Counts, per cell, the floating-point operations the kernel in
//! `kernels/integrate.cl` really executes and the fewest bytes it must move
//! (each input read once, each output written once), and predicts the
//! kernel time from a measured bandwidth. With `d` the dimension, `N_b`
//! basis functions, `N_c = N_comp`, `N_a` auxiliary components, `N_q` points
//! and `s` the size of a real:
//!
//! **Bytes per cell**
//!
//! ```text
//! s · (N_b N_c (u) + A (aux) + d² (J⁻¹) + 1 (det J) + X (coordinates) + N_b N_c (element vector)
//!      + T (time state))
//! ```
//!
//! with `A = N_b N_a` for a field, `N_a` for P0, 0 without aux,
//! `X = (d+1) d` if the physics reads `x`, else 0, and `T = N_b N_c` (the
//! cell-local `b` of `u_t = σ·u + b`) if it reads `u_t`, else 0.
//!
//! **Flops per cell** `= N_q · (Q + P) + N_b N_c N_q · (2·[f0] + 2d·[f1])`:
//! - `Q = N_c (N_b (2·[u] + 2d·[∇u]) + 2d²·[∇u])`: values and reference
//!   gradients from the coefficients (a multiply-add per basis function for
//!   the value and each of the `d` derivatives), then the map
//!   `∇u = J⁻ᵀ ∇_ξ u` (`d` outputs of `d` multiply-adds) — each only if the
//!   physics reads it (`[·]` is 1 if so, else 0); the same with `N_a` for an
//!   aux field; `3d²` for `x`;
//!   `1` for `w·det J`, `N_c` to scale `f0`, `N_c d (2d + 1)` to form
//!   `w det J · J⁻¹ f1`.
//! - `P`: the physics' own count ([`femquad::PointwiseInfo::flops`]).
//! - the basis phase: for each element dof and point, a multiply-add with
//!   `f0` and `d` with the reference-frame `f1`.
//!
//! **Algorithmic balance** `β = flops / bytes`. **Predicted time**
//! `t = max(bytes / B, flops / F)` for measured bandwidth `B` and, if given,
//! a flop rate `F`; for these kernels `β` is a few flop/byte, far below a
//! GPU's machine balance, so `t = bytes / B`.
//!
//! *Differences from the paper.* The paper (§3.3) counts the tabulation,
//! geometry and both `f0`/`f1` slots for every case and applies `J⁻¹` to the
//! test-function gradients in the basis phase (`(2 + 2d) d N_q N_bt` per
//! batch cell). Our kernel maps `f1` once per point instead, stores only the
//! `f0`/`f1` the physics has, and reads `x` only when used, so we count what
//! it executes; its byte count is the paper's `(d² + 1) + N_bt + …` per cell
//! plus the written element vector, which the paper's "memory loaded" leaves
//! out. The local-memory formula is [`femquad::opencl::KernelShape::local_mem_bytes`].
//!
//! # The global residual (BP)
//!
//! [`ResidualModel`] counts what a user's `F(u)` must move at least, with
//! `n_d` global dofs, `n_n` nodes, `n_v` vertices and `n_c` cells:
//!
//! ```text
//! s · n_d (u, read once) + s · n_d (F, written once) + 4 · N_b n_c (the cell → node map, u32)
//!   + geometry + aux + s · n_d (b of the time state, if the physics reads u_t)
//! geometry = s · d · n_v                 computed in the kernel (vertex coordinates)
//!          = s · (d² + 1) · n_c          stored (J⁻¹, det J per cell), plus s · d · n_v if x is read
//! aux      = s · N_a n_n (field) | s · N_a n_c (P0) | 0
//! ```
//!
//! Each array counted once: the gathers of `u` and of the coordinates and
//! the atomic additions into `F` may touch a value several times (once per
//! cell containing it), which only caches absorb. The flops are the element
//! kernel's plus, for computed geometry, the per-cell Jacobian, determinant
//! and inverse ([`geometry_flops`]).
//!
//! The model is the same for both assemblies (it counts what `F(u)` needs,
//! not what an implementation moves). Beyond it, an evaluation with
//! [`femquad::opencl::Assembly::Atomic`] zeroes `F` first (`s · n_d` more
//! written) and adds by read-modify-write; one with
//! [`femquad::opencl::Assembly::Deterministic`] writes and reads the element
//! vectors (`2 s · N_b N_c n_c`) and reads the node → cell-slot incidence
//! (`4 (n_n + 1) + 4 N_b n_c`). The benchmark's BP rows (`femquad-bench
//! --measure bp`, BENCHMARKS.md) report minimal bytes / measured time, so
//! this extra traffic, and the repeated gathers a cache does not absorb,
//! show as a lower fraction of the copy bandwidth.

use femquad::aux_space::AuxSpace;
use femquad::opencl::{GeometryMode, KernelShape};
use femquad::physics::PointwiseInfo;

/// Model quantities of one kernel launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaunchModel {
    /// Cells integrated by the launch.
    pub cells: usize,
    /// Minimal bytes moved.
    pub bytes: f64,
    /// Floating-point operations executed.
    pub flops: f64,
    /// Local memory per work-group, bytes.
    pub local_mem_bytes: usize,
}

impl LaunchModel {
    /// The model for `cells` cells of `shape` with auxiliary space `aux` and
    /// `physics`.
    pub fn new(shape: &KernelShape, aux: AuxSpace, physics: &PointwiseInfo, cells: usize) -> Self {
        LaunchModel {
            cells,
            bytes: bytes_per_cell(shape) as f64 * cells as f64,
            flops: flops_per_cell(shape, aux, physics) as f64 * cells as f64,
            local_mem_bytes: shape.local_mem_bytes(),
        }
    }

    /// Algorithmic balance β in flop/byte.
    pub fn beta(&self) -> f64 {
        self.flops / self.bytes
    }

    /// Predicted kernel time in seconds for bandwidth `bytes_per_s` and,
    /// optionally, a flop rate `flops_per_s`.
    pub fn predicted_s(&self, bytes_per_s: f64, flops_per_s: Option<f64>) -> f64 {
        let t_mem = self.bytes / bytes_per_s;
        match flops_per_s {
            Some(f) if f > 0.0 => t_mem.max(self.flops / f),
            _ => t_mem,
        }
    }
}

/// Minimal bytes per cell (see the module documentation).
pub fn bytes_per_cell(shape: &KernelShape) -> usize {
    let d = shape.dim;
    let reals = 2 * shape.n_bt
        + shape.aux_per_cell
        + d * d
        + 1
        + if shape.reads_x { (d + 1) * d } else { 0 }
        + if shape.reads.u_t { shape.n_bt } else { 0 };
    reals * shape.precision.size()
}

/// Flops per cell (see the module documentation).
pub fn flops_per_cell(shape: &KernelShape, aux: AuxSpace, physics: &PointwiseInfo) -> u64 {
    let d = shape.dim as u64;
    let (n_b, n_c, n_q) = (shape.n_b as u64, shape.n_comp as u64, shape.n_q as u64);
    // Values (a multiply-add per basis function) and gradients (d of them,
    // then the d×d map), each only if the physics reads it.
    let field = |n: u64, value: bool, grad: bool| {
        let value = if value { 2 } else { 0 };
        let grad = if grad { 2 * d } else { 0 };
        n * (n_b * (value + grad) + d * grad)
    };
    let r = shape.reads;
    let mut per_point = field(n_c, r.u, r.grad_u) + 1;
    if let AuxSpace::Field { n_comp } = aux {
        per_point += field(n_comp as u64, r.a, r.grad_a);
    }
    if shape.reads_x {
        per_point += 3 * d * d;
    }
    if shape.has_f0 {
        per_point += n_c;
    }
    if shape.has_f1 {
        per_point += n_c * d * (2 * d + 1);
    }
    per_point += physics.flops_in(shape.dim);
    let basis =
        n_b * n_c * n_q * (if shape.has_f0 { 2 } else { 0 } + if shape.has_f1 { 2 * d } else { 0 });
    n_q * per_point + basis
}

/// Flops of one cell's `J`, `det J` and `J⁻¹` computed from its vertex
/// coordinates, as `kernels/integrate.cl` does: in 2D `4` (J) `+ 3` (det)
/// `+ 1` (1/det) `+ 4` (inverse) `= 12`; in 3D `9 + 9` (cofactors) `+ 5`
/// (det) `+ 1 + 21` (inverse) `= 45`.
pub fn geometry_flops(dim: usize) -> u64 {
    if dim == 2 { 12 } else { 45 }
}

/// Model of one global residual evaluation `F(u)` (BP), see the
/// [module documentation](self#the-global-residual-bp).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ResidualModel {
    /// Minimal bytes moved.
    pub bytes: f64,
    /// Floating-point operations executed.
    pub flops: f64,
}

impl ResidualModel {
    /// The model of `F(u)` with the kernel `shape` (which gives the
    /// dimension, element, components, precision, physics reads and
    /// geometry mode) on a mesh of `n_cells` cells, `n_vertices` vertices,
    /// and a space of `n_nodes` nodes.
    pub fn new(
        shape: &KernelShape,
        aux: AuxSpace,
        physics: &PointwiseInfo,
        n_cells: usize,
        n_nodes: usize,
        n_vertices: usize,
    ) -> Self {
        let (d, s) = (shape.dim as f64, shape.precision.size() as f64);
        let (n_c, n_n, n_v) = (n_cells as f64, n_nodes as f64, n_vertices as f64);
        let dofs = n_n * shape.n_comp as f64;
        let connectivity = 4.0 * shape.n_b as f64 * n_c;
        let coordinates = s * d * n_v;
        let geometry = match shape.geometry {
            GeometryMode::Computed => coordinates,
            GeometryMode::Stored => {
                s * (d * d + 1.0) * n_c + if shape.reads_x { coordinates } else { 0.0 }
            }
        };
        let aux_bytes = match aux {
            AuxSpace::None => 0.0,
            AuxSpace::Field { n_comp } => s * n_comp as f64 * n_n,
            AuxSpace::Cell { n_comp } => s * n_comp as f64 * n_c,
        };
        let mut per_cell = flops_per_cell(shape, aux, physics);
        if shape.geometry == GeometryMode::Computed {
            per_cell += geometry_flops(shape.dim);
        }
        let time_b = if shape.reads.u_t { s * dofs } else { 0.0 };
        ResidualModel {
            bytes: 2.0 * s * dofs + connectivity + geometry + aux_bytes + time_b,
            flops: per_cell as f64 * n_c,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use femquad::Precision;
    use femquad::opencl::{KernelCase, KernelOptions, KernelVariant, LaunchConfig};
    use femquad::physics::Pointwise;
    use femquad::physics::builtin::{Lame, Laplacian, LaplacianCoefficient};

    fn shape(
        dim: usize,
        n_b: usize,
        n_comp: usize,
        n_q: usize,
        aux: AuxSpace,
        p: &'static PointwiseInfo,
        s: usize,
    ) -> KernelShape {
        let case = KernelCase {
            dim,
            n_b,
            n_comp,
            n_q,
            aux,
            physics: p,
            precision: if s == 4 {
                Precision::F32
            } else {
                Precision::F64
            },
        };
        KernelShape::new(
            &case,
            KernelVariant::Element,
            LaunchConfig::new(4, 2),
            &KernelOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn residual_bytes_count_each_array_once() {
        let info = Laplacian.info();
        let stored = shape(2, 3, 1, 1, AuxSpace::None, info, 4);
        let computed = KernelShape {
            geometry: GeometryMode::Computed,
            ..stored
        };
        // 2 cells, 4 vertices = 4 nodes: u, F 4·4 each, map 2·3·4
        let m = ResidualModel::new(&stored, AuxSpace::None, info, 2, 4, 4);
        assert_eq!(m.bytes, (32 + 24 + 2 * 5 * 4) as f64);
        let m = ResidualModel::new(&computed, AuxSpace::None, info, 2, 4, 4);
        assert_eq!(m.bytes, (32 + 24 + 4 * 2 * 4) as f64);
        assert_eq!(
            m.flops,
            2.0 * (flops_per_cell(&computed, AuxSpace::None, info) + 12) as f64
        );
        let field = ResidualModel::new(&computed, AuxSpace::Field { n_comp: 1 }, info, 2, 4, 4);
        assert_eq!(field.bytes - m.bytes, 16.0);
        let p0 = ResidualModel::new(&computed, AuxSpace::Cell { n_comp: 2 }, info, 2, 4, 4);
        assert_eq!(p0.bytes - m.bytes, 16.0);
    }

    #[test]
    fn poisson_2d_p1_counts() {
        let info = Laplacian.info();
        let s = shape(2, 3, 1, 1, AuxSpace::None, info, 4);
        // u 3 + J⁻¹ 4 + det 1 + out 3 = 11 floats
        assert_eq!(bytes_per_cell(&s), 44);
        // The Laplacian reads only ∇u: Q = 1·(3·4 + 2·4) = 20, +1 (w det J),
        // f1 map 1·2·5 = 10, physics 0; basis 3·1·1·4 = 12 → 43
        assert_eq!(flops_per_cell(&s, AuxSpace::None, info), 43);
        let m = LaunchModel::new(&s, AuxSpace::None, info, 1000);
        assert!((m.beta() - 43.0 / 44.0).abs() < 1e-12);
        assert!((m.predicted_s(44e3, None) - 1.0).abs() < 1e-12);
        assert!((m.predicted_s(44e3, Some(43.0)) - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn coefficient_and_vector_counts() {
        let info = LaplacianCoefficient.info();
        let aux = AuxSpace::Field { n_comp: 1 };
        let s = shape(3, 4, 1, 1, aux, info, 8);
        // u 4 + aux 4 + J⁻¹ 9 + det 1 + out 4 = 22 doubles
        assert_eq!(bytes_per_cell(&s), 176);
        let lame = Lame.info();
        let s = shape(3, 4, 3, 1, AuxSpace::None, lame, 8);
        assert_eq!(bytes_per_cell(&s), (24 + 10) * 8);
        // Lamé reads only ∇u. Per point: 3·(4·6 + 3·6) + 1 + 3·3·7 + physics;
        // basis 12·6
        let expected = 3 * (4 * 6 + 3 * 6) + 1 + 63 + lame.flops[1] + 12 * 6;
        assert_eq!(flops_per_cell(&s, AuxSpace::None, lame), expected);
    }
}
