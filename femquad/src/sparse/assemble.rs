//! Assembly of element matrices into a sparse matrix of a space.

use std::sync::Arc;

use rayon::prelude::*;

use super::csr::CsrMatrix;
use super::pattern::{SpaceMap, SparsityPattern};
use crate::error::check_len;
use crate::layout::elem_mat;
use crate::real::check_finite;
use crate::{Error, Result};

/// Nodes per parallel task of assembly.
const NODES_PER_TASK: usize = 2048;

/// Assembles element matrices into the values of a matrix on `pattern`:
///
/// ```text
/// A[node(c,a)·N_comp + fc][node(c,b)·N_comp + gc] = Σ_c K_c[a·N_comp + fc][b·N_comp + gc]
/// ```
///
/// (`values` is overwritten). `element_matrices` holds `K_c` for every cell
/// `c` of the space of `pattern`, `[cell][i][j]` ([`crate::layout::elem_mat`]: `i = a·N_comp + fc`, `j = b·N_comp + gc`).
///
/// # Determinism
/// Parallel over nodes, i.e. over blocks of `N_comp` rows, which are
/// contiguous in `values`. Each node visits its cell slots through the
/// node → cell-slot incidence in increasing cell order, so every entry is
/// the sum of its cell contributions in increasing cell order, starting
/// from 0: the result is bitwise the same for any thread count, and equal
/// to a serial loop over cells. Work `O(n_cells·N_b²·(N_comp² + log))`
/// (a binary search per pair of nodes of a cell), no extra memory.
///
/// # Errors
/// [`Error::InvalidArgument`] naming `pattern` if it was not built by
/// [`SparsityPattern::of_space`], naming `element_matrices` or `values` for
/// a wrong length; [`Error::NonFinite`] with the index of the first NaN or
/// ±∞ in `element_matrices`.
pub fn assemble_into(
    pattern: &SparsityPattern,
    element_matrices: &[f64],
    values: &mut [f64],
) -> Result<()> {
    let space = pattern.space_map()?;
    let expected = pattern.element_matrices_len().expect("a space pattern");
    check_len("element_matrices", element_matrices, expected)?;
    check_len("values", values, pattern.nnz())?;
    check_finite("element_matrices", element_matrices)?;
    let n_nodes = space.offsets.len() - 1;
    let nc = space.n_comp;
    let row_ptr = pattern.row_ptr();
    let node_start = |n: usize| row_ptr[n * nc];
    node_blocks(n_nodes, node_start, values)
        .into_par_iter()
        .try_for_each(|(nodes, block)| {
            let base = node_start(nodes.start);
            for n in nodes {
                let rows = &mut block[node_start(n) - base..node_start(n + 1) - base];
                assemble_node(pattern, space, element_matrices, n, rows)?;
            }
            Ok(())
        })
}

/// Fills the `N_comp` rows of node `n` (their values, `rows`).
fn assemble_node(
    pattern: &SparsityPattern,
    space: &SpaceMap,
    element_matrices: &[f64],
    n: usize,
    rows: &mut [f64],
) -> Result<()> {
    let (nc, n_b) = (space.n_comp, space.n_b);
    let n_bt = n_b * nc;
    // All rows of the node share the columns of its first row.
    let first_row = n * nc;
    let cols = pattern.row(first_row).expect("node row in range");
    let row_len = cols.len();
    rows.fill(0.0);
    for &s in &space.slots[space.offsets[n]..space.offsets[n + 1]] {
        let (c, a) = (s as usize / n_b, s as usize % n_b);
        let nodes = &space.cell_nodes[c * n_b..(c + 1) * n_b];
        for (b, &m) in nodes.iter().enumerate() {
            let p = cols
                .binary_search(&(m * nc as u32))
                .map_err(|_| not_in_pattern(first_row, m as usize * nc))?;
            for fc in 0..nc {
                let row = &mut rows[fc * row_len + p..fc * row_len + p + nc];
                let k0 = elem_mat(c, a * nc + fc, b * nc, n_bt);
                for (r, &k) in row.iter_mut().zip(&element_matrices[k0..k0 + nc]) {
                    *r += k;
                }
            }
        }
    }
    Ok(())
}

/// The error for an element-matrix entry the pattern does not hold (only
/// possible if a pattern's space part and its CSR arrays disagree).
fn not_in_pattern(i: usize, j: usize) -> Error {
    Error::arg(
        "pattern",
        format!("entry ({i}, {j}) of an element matrix is not in the pattern"),
    )
}

/// Splits `values` into disjoint blocks of whole nodes for parallel work:
/// `(nodes, values of their rows)`; node `n`'s rows start at `node_start(n)`.
fn node_blocks(
    n_nodes: usize,
    node_start: impl Fn(usize) -> usize,
    mut values: &mut [f64],
) -> Vec<(std::ops::Range<usize>, &mut [f64])> {
    let mut out = Vec::with_capacity(n_nodes / NODES_PER_TASK + 1);
    let mut n0 = 0;
    while n0 < n_nodes {
        let n1 = (n0 + NODES_PER_TASK).min(n_nodes);
        let (head, tail) =
            std::mem::take(&mut values).split_at_mut(node_start(n1) - node_start(n0));
        out.push((n0..n1, head));
        values = tail;
        n0 = n1;
    }
    out
}

impl CsrMatrix {
    /// The matrix assembled from `element_matrices` on `pattern` (a pattern of
    /// [`SparsityPattern::of_space`]); see [`assemble_into`].
    ///
    /// # Errors
    /// Those of [`assemble_into`].
    pub fn assemble(pattern: &Arc<SparsityPattern>, element_matrices: &[f64]) -> Result<CsrMatrix> {
        let mut a = CsrMatrix::zeros(pattern);
        a.fill(element_matrices)?;
        Ok(a)
    }

    /// Re-assembles the values from new `element_matrices` on the same
    /// pattern (no allocation); see [`assemble_into`].
    ///
    /// # Errors
    /// Those of [`assemble_into`]; the values are unspecified after an error.
    pub fn fill(&mut self, element_matrices: &[f64]) -> Result<()> {
        let pattern = Arc::clone(self.pattern());
        assemble_into(&pattern, element_matrices, self.values_mut())
    }
}
