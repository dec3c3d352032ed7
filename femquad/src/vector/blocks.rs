//! The blocks of the host vector operations, shared by the plain
//! operations (`host.rs`) and the fused CG update (`fused.rs`), so both
//! round and reduce in the same order.

/// Entries per block of the host reductions (and per parallel task): the
/// block sums, each accumulated in order in `f64`, are added in block order,
/// so a reduction's rounding depends on the length only, not on the number
/// of threads.
pub const HOST_BLOCK: usize = 4096;

/// Entries from which host operations run on rayon's pool.
pub(super) const PARALLEL_MIN: usize = 1 << 15;
