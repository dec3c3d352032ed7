//! How many work-items share a row of the SpMV (`kernels/spmv.cl`): the
//! team size `L` of the CSR-vector kernel.

use crate::{Error, Result};

/// The team sizes the SpMV kernel runs with: powers of two up to a warp.
pub const SPMV_LANES: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// The team size for a matrix of `nnz` entries in `n_rows` rows: the
/// largest `L ∈` [`SPMV_LANES`] with `L ≤ nnz / n_rows` (the mean row
/// length), 1 for an empty matrix.
///
/// ```text
/// L = 2^⌊log2(max(1, nnz / n_rows))⌋, at most 32
/// ```
///
/// Every lane then has at least one entry of an average row to load, and
/// the loads of a team are one contiguous segment of the row: P1 Laplacian
/// (7 entries per row in 2D, ~15 in 3D) runs with 4 and 8 lanes, Lamé P1
/// (~14 / ~45) with 8 and 32, P2 3D Lamé (~81) with 32.
pub fn lanes_for(nnz: usize, n_rows: usize) -> usize {
    let mean = nnz.checked_div(n_rows).unwrap_or(0).max(1);
    let lanes = 1usize << mean.ilog2();
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
        assert_eq!(lanes_for(0, 0), 1);
        assert_eq!(lanes_for(0, 10), 1);
        assert_eq!(lanes_for(10, 10), 1);
        assert_eq!(lanes_for(7 * 100, 100), 4);
        assert_eq!(lanes_for(15 * 100, 100), 8);
        assert_eq!(lanes_for(16 * 100, 100), 16);
        assert_eq!(lanes_for(45 * 100, 100), 32);
        assert_eq!(lanes_for(81 * 100, 100), 32);
        assert_eq!(lanes_for(1000 * 100, 100), 32);
        for l in SPMV_LANES {
            assert!(check_lanes(l).is_ok());
        }
        for l in [0, 3, 64] {
            let e = check_lanes(l).unwrap_err().to_string();
            assert!(e.contains("lanes") && e.contains(&l.to_string()), "{e}");
        }
    }
}
