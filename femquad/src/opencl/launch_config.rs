//! What one launch of the integration kernel is: its variant (element
//! kernel or fused residual, how results are delivered) and its tunable
//! launch configuration (`N_bl`, `N_cb`, `N_tc`, prefetch, geometry,
//! patches). Plain values, shared by the kernel shapes ([`super::shape`])
//! and the tuning cache ([`super::tuning_cache`]), which stores them.

use super::device::DeviceInfo;

/// Where the kernel takes the cell geometry from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GeometryMode {
    /// `J⁻¹` and `det J` stored per cell and read by the kernel
    /// (`dim² + 1` reals per cell; the paper's element kernel).
    #[default]
    Stored,
    /// `J`, `det J` and `J⁻¹` computed per cell in the kernel from the vertex
    /// coordinates, gathered through the cell → node map (`dim` reals per
    /// vertex, about `dim/2` (2D) or `dim/6` (3D) vertices per cell, and the
    /// node indices, which the fused residual reads anyway).
    Computed,
}

impl GeometryMode {
    /// `stored` or `computed`.
    pub fn name(self) -> &'static str {
        match self {
            GeometryMode::Stored => "stored",
            GeometryMode::Computed => "computed",
        }
    }
}

/// How the kernel delivers its results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// Element vectors `[cell][b][comp]` (the element kernel; the
    /// deterministic residual sums them afterwards in a fixed order).
    ElementVectors,
    /// Each element-vector entry added atomically into the global vector
    /// `[node][comp]`.
    Atomic(AtomicAdd),
}

/// How a floating-point atomic add is done on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicAdd {
    /// NVIDIA's `red.global.add.f32/.f64`, through inline PTX (NVIDIA's
    /// OpenCL has no floating-point atomics, but its compiler takes PTX).
    Ptx,
    /// A compare-and-swap loop on the value's bits (`atomic_cmpxchg`, and
    /// `atom_cmpxchg` of `cl_khr_int64_base_atomics` for `double`): works on
    /// every OpenCL 1.2 device with those atomics, slower under contention.
    CompareExchange,
}

impl AtomicAdd {
    /// The fastest kind this device offers: [`AtomicAdd::Ptx`] on NVIDIA
    /// devices, else [`AtomicAdd::CompareExchange`].
    pub fn for_device(device: &DeviceInfo) -> AtomicAdd {
        if device.is_nvidia() {
            AtomicAdd::Ptx
        } else {
            AtomicAdd::CompareExchange
        }
    }

    /// `ptx-red` or `compare-exchange`.
    pub fn name(self) -> &'static str {
        match self {
            AtomicAdd::Ptx => "ptx-red",
            AtomicAdd::CompareExchange => "compare-exchange",
        }
    }
}

/// What a kernel reads and writes: exactly the valid cases. The element
/// kernel reads cell-local inputs and writes element vectors; the fused
/// residual and the fused Jacobian action gather their inputs through the
/// cell → node map and deliver their results as `Output` says. (A tangent
/// kernel reading cell-local inputs, or an element kernel with atomic
/// output, cannot be written.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KernelVariant {
    /// The element kernel (BK): cell-local `u` (and aux) in, element
    /// vectors `[cell][b][comp]` out.
    Element,
    /// The fused residual `F(u)` (BP): `u` (and a P1/P2 aux field) gathered
    /// from global vectors.
    Residual(Output),
    /// The fused Jacobian action `J(u)·v`: the residual's kernel with the
    /// direction `v` gathered like `u` and the physics' tangent at the
    /// quadrature points in place of `(f0, f1)`.
    JacobianAction(Output),
}

impl KernelVariant {
    /// Whether the kernel gathers its inputs from global vectors through
    /// the cell → node map (every variant but [`KernelVariant::Element`]).
    pub fn gathers(self) -> bool {
        !matches!(self, KernelVariant::Element)
    }

    /// Whether the kernel evaluates the physics' tangent (the Jacobian
    /// action).
    pub fn is_tangent(self) -> bool {
        matches!(self, KernelVariant::JacobianAction(_))
    }

    /// Where the results go.
    pub fn output(self) -> Output {
        match self {
            KernelVariant::Element => Output::ElementVectors,
            KernelVariant::Residual(o) | KernelVariant::JacobianAction(o) => o,
        }
    }

    /// The text the tuning-cache key hashes for this variant
    /// ([`super::tune_key::kernel_variant_hash`]): the fields as the
    /// struct `KernelVariant { gather, output, tangent }` that this enum
    /// replaced printed them, so that caches tuned before stay valid.
    pub fn key_text(self) -> String {
        format!(
            "KernelVariant {{ gather: {}, output: {:?}, tangent: {} }}",
            self.gathers(),
            self.output(),
            self.is_tangent()
        )
    }
}

/// The tunable launch parameters: blocks per batch, batches per chunk,
/// threads per cell, whether the next batch is prefetched into registers,
/// and where the geometry comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// `N_bl`, blocks per batch (concurrent).
    pub n_bl: usize,
    /// `N_cb`, batches per chunk (serial within a work-group).
    pub n_cb: usize,
    /// `N_tc`, threads per cell (1 unless blocks would be too large).
    pub n_tc: usize,
    /// Prefetch the next batch into registers while this one computes
    /// (kernel `PREFETCH`); costs registers per thread, so large vector P2
    /// cases may run faster without.
    pub prefetch: bool,
    /// Stored or computed geometry.
    pub geometry: GeometryMode,
    /// Patch-local assembly (kernels that gather through the node map):
    /// a work-group whose cells' distinct nodes fit its capacities
    /// ([`super::shape::patch_capacity`]) is a patch: it reads its cells'
    /// nodes as 16-bit positions in its sorted node list, loads their
    /// values once into local memory, sums its part of `F` there, and
    /// writes the nodes only its cells have with plain stores, the others
    /// atomically (see `kernels/integrate.cl` and
    /// `kernels/integrate_cell.cl`). Other work-groups gather
    /// through the 32-bit node map (counted in
    /// [`LaunchRecord::fallback_groups`](super::LaunchRecord::fallback_groups)).
    /// Meant for meshes whose work-groups' cells are compact (numbered for
    /// locality); off in [`super::shape::default_config`] (the patch lists
    /// cost the operator's setup, see there), tried by the autotuner.
    pub patches: bool,
    /// The cell-parallel kernel (`kernels/integrate_cell.cl`) instead of
    /// the thread transposition (`kernels/integrate.cl`), for the fused
    /// residual and Jacobian action: one work-item per cell (`N_tc = 1`, a
    /// work-group of `N_bl·N_bs` work-items runs `N_cb` cells each, so a
    /// chunk is the same `N_cb·N_bl·N_bs` cells), which gathers its
    /// nodes' values, computes `u`, `∇u`, the physics and the element
    /// vector `r[N_b][N_comp]` in registers, and adds it into `F` — with
    /// `patches`, summed first in local memory over the chunk's node list
    /// where that fits (then one store or atomic per listed node), else one
    /// global atomic per entry — or writes it per cell (deterministic
    /// assembly). No register prefetch (`prefetch` must be off,
    /// [`LaunchConfig::with_cell_parallel`] switches it off), no element
    /// kernel, patches only with atomic output.
    ///
    /// Why: for P1, with one to four quadrature points a cell, the
    /// transposition's local-memory phases and barriers cost more than
    /// they save. Measured on an H100 with `femquad-bench/src/bin/p1_floor.rs`
    /// (the P1 Laplacian residual on the renumbered 2²⁴-cell mesh, #22,
    /// session 11), the simplest such kernel
    /// with chunk-local sums (its `shared` variant, the design of this one)
    /// takes 0.239 / 0.412 / 0.748 ms (2D f32 / 2D f64 / 3D f64) where the
    /// transposed kernel takes 0.433 / 0.663 / 0.981 ms at its best
    /// autotuned configuration and 0.53 / 1.07 / 1.04 ms at its default.
    /// Through femquad (`femquad-bench --measure bp --cell-parallel`, the
    /// same session) this kernel took 0.27 / 0.41 / 0.68 ms with patches
    /// for those cases, 1.2–2.2× faster than the transposition on every
    /// case measured (P1/P2, Laplacian and Lamé, 2D/3D); without patches
    /// faster for scalar fields, slower for 3D Lamé. The default of
    /// [`super::shape::default_config`] for the residual and the Jacobian
    /// action of a scalar field, without patches (see there); tried by the
    /// autotuner with and without.
    pub cell_parallel: bool,
}

impl LaunchConfig {
    /// `N_bl` blocks per batch, `N_cb` batches per chunk, one thread per
    /// cell, prefetching, stored geometry, no patches.
    pub fn new(n_bl: usize, n_cb: usize) -> Self {
        LaunchConfig {
            n_bl,
            n_cb,
            n_tc: 1,
            prefetch: true,
            geometry: GeometryMode::Stored,
            patches: false,
            cell_parallel: false,
        }
    }

    /// The same on the cell-parallel kernel ([`LaunchConfig::cell_parallel`],
    /// which has no register prefetch: `prefetch` is switched off with it)
    /// or on the thread transposition (`prefetch` as it was).
    pub fn with_cell_parallel(self, cell_parallel: bool) -> Self {
        LaunchConfig {
            cell_parallel,
            prefetch: self.prefetch && !cell_parallel,
            ..self
        }
    }

    /// The same with patches on or off.
    pub fn with_patches(self, patches: bool) -> Self {
        LaunchConfig { patches, ..self }
    }

    /// The same with the geometry taken from `geometry`.
    pub fn with_geometry(self, geometry: GeometryMode) -> Self {
        LaunchConfig { geometry, ..self }
    }

    /// The same with prefetching on or off.
    pub fn with_prefetch(self, prefetch: bool) -> Self {
        LaunchConfig { prefetch, ..self }
    }

    /// The same with `n_tc` threads per cell.
    pub fn with_threads_per_cell(self, n_tc: usize) -> Self {
        LaunchConfig { n_tc, ..self }
    }
}

impl std::fmt::Display for LaunchConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "N_bl={} N_cb={}", self.n_bl, self.n_cb)?;
        if self.n_tc != 1 {
            write!(f, " N_tc={}", self.n_tc)?;
        }
        if !self.prefetch && !self.cell_parallel {
            write!(f, " no-prefetch")?;
        }
        if self.geometry != GeometryMode::Stored {
            write!(f, " geometry={}", self.geometry.name())?;
        }
        if self.patches {
            write!(f, " patches")?;
        }
        if self.cell_parallel {
            write!(f, " cell-parallel")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tuning key hashes the text the replaced struct printed, so a
    /// cache tuned before the enum finds its entries: the exact strings.
    #[test]
    fn key_texts_are_those_of_the_replaced_struct() {
        assert_eq!(
            KernelVariant::Element.key_text(),
            "KernelVariant { gather: false, output: ElementVectors, tangent: false }"
        );
        assert_eq!(
            KernelVariant::Residual(Output::Atomic(AtomicAdd::Ptx)).key_text(),
            "KernelVariant { gather: true, output: Atomic(Ptx), tangent: false }"
        );
        assert_eq!(
            KernelVariant::JacobianAction(Output::ElementVectors).key_text(),
            "KernelVariant { gather: true, output: ElementVectors, tangent: true }"
        );
    }
}
