//! How the tuning key of a kernel is made: [`TuneKey::new`] resolves the
//! kernel switches as a [`KernelShape`] does and hashes the kernel variant
//! ([`kernel_variant_hash`]). Apart from [`super::tuning_cache`] (the key's
//! format and the cache), because it needs the kernel shapes, which need the
//! kernel options, which hold the cache.

use super::case::KernelCase;
use super::device::DeviceInfo;
use super::launch_config::{KernelVariant, LaunchConfig};
use super::options::KernelOptions;
use super::shape::KernelShape;
use super::source::{AFFINE_GEOMETRY, INTEGRATE_CELL_TEMPLATE, INTEGRATE_TEMPLATE, TANGENT_POINT};
use super::tuning_cache::{TuneKey, sanitize};
use crate::physics::Fnv1a;

/// The hash that [`TuneKey::kernel`] records: the kernel templates (the
/// thread transposition and the cell-parallel kernel with the sources it
/// includes: a tuned configuration may choose either,
/// [`LaunchConfig::cell_parallel`]), the kernel variant (gathered or cell-local inputs, element vectors or atomic
/// output) and the kernel switches `prefetch`, `vector_loads` and
/// `tab_registers` of [`KernelShape`] as the [`KernelOptions`] leave them, so
/// that a configuration tuned for one kernel is not used for another.
pub fn kernel_variant_hash(
    variant: KernelVariant,
    prefetch: bool,
    vector_loads: bool,
    tab_registers: bool,
) -> u64 {
    let mut h = Fnv1a::new();
    for template in [
        INTEGRATE_TEMPLATE,
        INTEGRATE_CELL_TEMPLATE,
        TANGENT_POINT,
        AFFINE_GEOMETRY,
    ] {
        h.write(template.as_bytes());
    }
    h.write(variant.key_text().as_bytes());
    h.write(&[
        u8::from(prefetch),
        u8::from(vector_loads),
        u8::from(tab_registers),
    ]);
    h.finish()
}

impl TuneKey {
    /// The key of the kernel `variant` of `case` (whose physics has the
    /// source hash `physics_hash`) on `device`, with the kernel switches of
    /// `options`.
    pub fn new(
        device: &DeviceInfo,
        case: &KernelCase,
        variant: KernelVariant,
        physics_hash: u64,
        options: &KernelOptions,
    ) -> TuneKey {
        // The kernel switches as a shape resolves them (any valid configuration).
        let probe = KernelShape::new(case, variant, LaunchConfig::new(1, 1), options);
        let (prefetch, vector_loads, tab_registers) = probe.map_or((true, true, true), |s| {
            (s.prefetch, s.vector_loads, s.tab_registers)
        });
        TuneKey {
            device: sanitize(&device.name),
            driver: sanitize(&device.driver),
            kernel: kernel_variant_hash(variant, prefetch, vector_loads, tab_registers),
            dim: case.dim,
            n_b: case.n_b,
            n_comp: case.n_comp,
            n_q: case.n_q,
            aux: case.aux,
            physics: physics_hash,
            real: case.precision,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opencl::launch_config::Output;

    #[test]
    fn kernel_variants_hash_differently() {
        let fused = KernelVariant::Residual(Output::ElementVectors);
        let variants = [
            (KernelVariant::Element, true, true, true),
            (KernelVariant::Element, true, false, true),
            (KernelVariant::Element, false, true, true),
            (KernelVariant::Element, false, false, true),
            (KernelVariant::Element, true, true, false),
            (fused, true, true, true),
            (
                KernelVariant::JacobianAction(Output::ElementVectors),
                true,
                true,
                true,
            ),
        ]
        .map(|(k, p, v, t)| kernel_variant_hash(k, p, v, t));
        for i in 0..variants.len() {
            for j in 0..i {
                assert_ne!(variants[i], variants[j]);
            }
        }
    }
}
