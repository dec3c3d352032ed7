//! How many work-items share a row of the SpMV (`kernels/spmv.cl`): the
//! team size `L` of the CSR-vector kernel.

use crate::{Error, Result};

/// The team sizes the SpMV kernel runs with: powers of two up to a warp.
pub const SPMV_LANES: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// The team size for a matrix of `nnz` entries of `value_bytes` bytes each
/// (4 for `f32`, 8 for `f64`) in `n_rows` rows: the largest `L ∈`
/// [`SPMV_LANES`] whose lanes each get at least 16 bytes of an average
/// row's values, 1 for an empty matrix or rows shorter than that.
///
/// ```text
/// B = ⌊nnz·value_bytes / n_rows⌋            bytes of values in a mean row
/// L = 2^⌊log2(max(1, ⌊B / 16⌋))⌋, at most 32
/// ```
///
/// The rule counts the values only: they are what a row reads from memory
/// per entry; its columns are node columns, `N_comp²` times fewer than
/// the entries and shared by the node's `N_comp` rows
/// ([`crate::opencl::matrix`]'s "Bytes moved per stored entry"; for a
/// scalar field, as in the measurements below, one per entry).
///
/// Why 16 bytes a lane: every lane then issues two to four independent
/// loads of values (and their columns) before the team's reduction, and
/// the reduction has fewer steps. Measured on an H100 (session 12,
/// `femquad-bench/src/bin/spmv_numbering.rs`; the solve's 2²⁴-cell P1
/// Laplacian, ms for `L` = 1, 2, 4, 8): 2D `f32` (27 B a row) 0.262,
/// 0.287, 0.343, 0.484 → `L = 1`; 2D `f64` (55 B) 1.017, 0.443, 0.462,
/// 0.570 → 2; 3D `f32` (59 B) 0.803, 0.200, 0.200, 0.234 → 2; 3D `f64`
/// (118 B) 1.883, 0.336, 0.291, 0.307 → 4. The rule before (`L` = the mean
/// row length rounded down, 4 and 8 for these) was 4–31 % slower.
/// Lamé P1 (~14 / ~45 entries a row in 2D / 3D) gets 2 / 8 in `f32` and 4 /
/// 16 in `f64`, P2 3D Lamé (~81) 16 / 32.
pub fn lanes_for(nnz: usize, n_rows: usize, value_bytes: usize) -> usize {
    let row_bytes = (nnz.saturating_mul(value_bytes))
        .checked_div(n_rows)
        .unwrap_or(0);
    let lanes = 1usize << (row_bytes / 16).max(1).ilog2();
    lanes.min(SPMV_LANES[SPMV_LANES.len() - 1])
}

/// Checks a team size asked for by the caller.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `lanes` if it is not one of
/// [`SPMV_LANES`].
pub fn check_lanes(lanes: usize) -> Result<()> {
    if SPMV_LANES.contains(&lanes) {
        Ok(())
    } else {
        Err(Error::arg(
            "lanes",
            format!(
                "{lanes} work-items per row is not one the SpMV kernel runs with: \
                 pick one of {SPMV_LANES:?}"
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chooser against the mean row lengths of the finite-element
    /// matrices it is meant for, and the edges.
    #[test]
    fn lanes_follow_the_mean_row_length() {
        assert_eq!(lanes_for(0, 0, 8), 1);
        assert_eq!(lanes_for(0, 10, 8), 1);
        assert_eq!(lanes_for(10, 10, 8), 1);
        // the solve's P1 Laplacians (the measurements in the docs)
        assert_eq!(lanes_for(58_078_081, 8_300_161, 4), 1);
        assert_eq!(lanes_for(58_078_081, 8_300_161, 8), 2);
        assert_eq!(lanes_for(45_226_513, 3_048_625, 4), 2);
        assert_eq!(lanes_for(45_226_513, 3_048_625, 8), 4);
        // Lamé P1 2D / 3D, P2 3D Lamé, and a row longer than 32 lanes need
        assert_eq!(lanes_for(14 * 100, 100, 4), 2);
        assert_eq!(lanes_for(14 * 100, 100, 8), 4);
        assert_eq!(lanes_for(45 * 100, 100, 4), 8);
        assert_eq!(lanes_for(45 * 100, 100, 8), 16);
        assert_eq!(lanes_for(81 * 100, 100, 4), 16);
        assert_eq!(lanes_for(81 * 100, 100, 8), 32);
        assert_eq!(lanes_for(1000 * 100, 100, 8), 32);
        // no overflow for any count
        assert_eq!(lanes_for(usize::MAX, 1, 8), 32);
        for l in SPMV_LANES {
            assert!(check_lanes(l).is_ok());
        }
        for l in [0, 3, 64] {
            let e = check_lanes(l).unwrap_err().to_string();
            assert!(e.contains("lanes") && e.contains(&l.to_string()), "{e}");
        }
    }
}
