//! The Hilbert curve order of cell centroids ([`super::locality_renumbering`]).

use rayon::prelude::*;

use super::{BLOCK, bits_for};
use crate::mesh::Mesh;

/// The cells in Hilbert order of their centroids (ties by old index);
/// vertex indices in range and coordinates finite.
pub(super) fn hilbert_cell_order(mesh: &Mesh) -> Vec<u32> {
    let cell_bits = bits_for(mesh.n_cells());
    let mut keys = if mesh.dim() == 2 {
        hilbert_keys::<2>(mesh, cell_bits)
    } else {
        hilbert_keys::<3>(mesh, cell_bits)
    };
    keys.par_sort_unstable();
    let mask = (1u64 << cell_bits) - 1;
    keys.into_par_iter()
        .map(|key| (key & mask) as u32)
        .collect()
}

/// The sort keys `hilbert_index(centroid) << cell_bits | c` of all cells
/// `c` of a mesh of dimension `D`, with `b = ⌊(64 − cell_bits)/D⌋` bits per
/// axis: centroids are quantized on `2^b` boxes per axis over the bounding
/// box of the vertices (its longest side, for all axes).
fn hilbert_keys<const D: usize>(mesh: &Mesh, cell_bits: u32) -> Vec<u64> {
    let bits = ((64 - cell_bits) / D as u32).min(32);
    let (lo, hi) = mesh
        .vertices()
        .par_chunks_exact(D)
        .with_min_len(BLOCK)
        .fold(
            || ([f64::INFINITY; D], [f64::NEG_INFINITY; D]),
            |(lo, hi), x| {
                (
                    std::array::from_fn(|d| lo[d].min(x[d])),
                    std::array::from_fn(|d| hi[d].max(x[d])),
                )
            },
        )
        .reduce(
            || ([f64::INFINITY; D], [f64::NEG_INFINITY; D]),
            |(a, b), (c, d)| {
                (
                    std::array::from_fn(|i| a[i].min(c[i])),
                    std::array::from_fn(|i| b[i].max(d[i])),
                )
            },
        );
    let extent = (0..D).map(|d| hi[d] - lo[d]).fold(0.0, f64::max);
    let boxes = 2f64.powi(bits as i32);
    let scale = if extent > 0.0 { boxes / extent } else { 0.0 };
    let max_q = (boxes - 1.0) as u32;
    let k = D + 1;
    mesh.cells()
        .par_chunks_exact(k)
        .with_min_len(BLOCK)
        .enumerate()
        .map(|(c, cell)| {
            let mut sum = [0.0; D];
            for &v in cell {
                for (s, x) in sum.iter_mut().zip(mesh.vertex(v as usize)) {
                    *s += x;
                }
            }
            // in [0, 2^bits]: the cast saturates, the min clamps the top
            let q = sum.map(|s| s / k as f64);
            let q: [u32; D] = std::array::from_fn(|d| (((q[d] - lo[d]) * scale) as u32).min(max_q));
            (hilbert_index(q, bits) << cell_bits) | c as u64
        })
        .collect()
}

/// Index along the Hilbert curve of the point with integer coordinates
/// `x[..dim]` (each `< 2^bits`, `dim·bits ≤ 64`) on the `2^bits`-per-axis
/// grid: Skilling's `AxestoTranspose` (undo the excess work of the
/// reflections and rotations bit by bit from the top, then Gray-encode),
/// followed by interleaving the transposed bits, most significant first,
/// `x[0]` first within each bit level. Consecutive indices are face
/// neighbours on the grid.
pub(super) fn hilbert_index<const D: usize>(mut x: [u32; D], bits: u32) -> u64 {
    let dim = D;
    // Branch-free form of Skilling's loop (the branches depend on the data
    // and would be mispredicted half of the time): `mask` is all ones where
    // bit `q` of `x[i]` is set.
    let top = 1u32 << (bits - 1);
    let mut q = top;
    while q > 1 {
        let p = q - 1;
        for i in 0..dim {
            let mask = 0u32.wrapping_sub(u32::from(x[i] & q != 0));
            // set: invert the low bits of x[0]; clear: exchange the low
            // bits of x[0] and x[i] (a no-op for i = 0)
            let t = (x[0] ^ x[i]) & p & !mask;
            x[0] ^= (p & mask) | t;
            x[i] ^= t;
        }
        q >>= 1;
    }
    for i in 1..dim {
        x[i] ^= x[i - 1];
    }
    let mut t = 0;
    let mut q = top;
    while q > 1 {
        t ^= (q - 1) & 0u32.wrapping_sub(u32::from(x[dim - 1] & q != 0));
        q >>= 1;
    }
    for xi in x.iter_mut() {
        *xi ^= t;
    }
    let mut h = 0u64;
    for b in (0..bits).rev() {
        for xi in x.iter() {
            h = (h << 1) | u64::from((xi >> b) & 1);
        }
    }
    h
}
