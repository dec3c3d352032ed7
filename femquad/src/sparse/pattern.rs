//! The sparsity pattern of a matrix: compressed sparse rows, columns sorted.

use std::sync::Arc;

use rayon::prelude::*;

use crate::space::FunctionSpace;
use crate::{Error, Result};

/// Nodes per parallel task when a pattern is built from a space.
const NODES_PER_TASK: usize = 4096;

/// The structure of a sparse matrix in compressed sparse row (CSR) form:
/// the stored entries of row `i` are the columns
/// `col_idx[row_ptr[i]..row_ptr[i+1]]`, **strictly increasing** within the
/// row, and entry `k` of a [`CsrMatrix`](super::CsrMatrix) with this pattern
/// is `A[i][col_idx[k]]` for the row `i` with `row_ptr[i] ≤ k < row_ptr[i+1]`.
///
/// A pattern is computed once (per space) and shared through an [`Arc`] by
/// all matrices on it, e.g. the Jacobians of successive Newton steps, which
/// then only re-fill their values ([`CsrMatrix::fill`](super::CsrMatrix::fill))
/// and can reuse a symbolic factorization
/// ([`DirectSolver::refactor`](super::DirectSolver::refactor)).
///
/// A pattern built by [`SparsityPattern::of_space`] also keeps the space's
/// cell → node map and node → cell-slot incidence, which assembly from
/// element matrices needs ([`super::assemble_into`]).
#[derive(Clone, Debug)]
pub struct SparsityPattern {
    n_rows: usize,
    n_cols: usize,
    row_ptr: Vec<usize>,
    col_idx: Vec<u32>,
    space: Option<SpaceMap>,
}

/// What assembly from element matrices needs of the space a pattern was
/// built from.
#[derive(Clone, Debug)]
pub(super) struct SpaceMap {
    /// Components `N_comp` of the field.
    pub(super) n_comp: usize,
    /// Basis functions per cell `N_b`.
    pub(super) n_b: usize,
    /// The cell → node map, `n_cells × N_b`.
    pub(super) cell_nodes: Vec<u32>,
    /// Node → cell-slot incidence: the slots `cell·N_b + b` of node `n` are
    /// `slots[offsets[n]..offsets[n+1]]`, increasing.
    pub(super) offsets: Vec<usize>,
    /// See `offsets`.
    pub(super) slots: Vec<u32>,
}

impl SpaceMap {
    /// Number of cells.
    pub(super) fn n_cells(&self) -> usize {
        self.cell_nodes.len() / self.n_b
    }
}

impl SparsityPattern {
    /// A pattern from its CSR arrays (`row_ptr` with `n_rows + 1` entries).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `row_ptr` if it does not start at 0,
    /// decreases, or does not end at `col_idx.len()`; naming `col_idx` with
    /// the row if a column is `≥ n_cols` or a row's columns are not strictly
    /// increasing; naming `n_cols` if it exceeds the `u32` index range.
    pub fn from_csr(
        n_rows: usize,
        n_cols: usize,
        row_ptr: Vec<usize>,
        col_idx: Vec<u32>,
    ) -> Result<Arc<SparsityPattern>> {
        if n_cols > u32::MAX as usize + 1 {
            return Err(Error::arg(
                "n_cols",
                format!("{n_cols} columns exceed the u32 index range"),
            ));
        }
        if row_ptr.len() != n_rows + 1 {
            return Err(Error::arg(
                "row_ptr",
                format!(
                    "expected n_rows + 1 = {} entries, got {}",
                    n_rows + 1,
                    row_ptr.len()
                ),
            ));
        }
        if row_ptr[0] != 0 || row_ptr[n_rows] != col_idx.len() {
            return Err(Error::arg(
                "row_ptr",
                format!(
                    "must run from 0 to col_idx.len() = {}, runs from {} to {}",
                    col_idx.len(),
                    row_ptr[0],
                    row_ptr[n_rows]
                ),
            ));
        }
        if let Some(i) = (0..n_rows).find(|&i| row_ptr[i] > row_ptr[i + 1]) {
            return Err(Error::arg(
                "row_ptr",
                format!("decreases at row {i}: {} > {}", row_ptr[i], row_ptr[i + 1]),
            ));
        }
        let bad_row = (0..n_rows).into_par_iter().find_first(|&i| {
            let cols = &col_idx[row_ptr[i]..row_ptr[i + 1]];
            cols.windows(2).any(|w| w[0] >= w[1])
                || cols.last().is_some_and(|&c| c as usize >= n_cols)
        });
        if let Some(i) = bad_row {
            return Err(Error::arg(
                "col_idx",
                format!(
                    "row {i}: columns must be strictly increasing and < n_cols = {n_cols}, got {:?}",
                    &col_idx[row_ptr[i]..row_ptr[i + 1]]
                ),
            ));
        }
        Ok(Arc::new(SparsityPattern {
            n_rows,
            n_cols,
            row_ptr,
            col_idx,
            space: None,
        }))
    }

    /// The pattern of the matrices of `space` (`n_dofs × n_dofs`, dofs
    /// interleaved node-major, `dof = node·N_comp + comp`): dof `i` of node
    /// `n` couples with dof `j` of node `m`, for every pair of components,
    /// exactly when `n` and `m` are nodes of a common cell. The diagonal is
    /// always stored (also for a node in no cell).
    ///
    /// All `N_comp` rows of a node have the same columns: for each
    /// neighbouring node `m` in increasing order, `m·N_comp + 0, …,
    /// m·N_comp + N_comp − 1`.
    ///
    /// # Algorithm
    /// Through the space's node → cell-slot incidence (a parallel sort of the
    /// `n_cells·N_b` cell slots, built once per space): the neighbours of
    /// node `n` are the nodes of the cells containing it, sorted and
    /// deduplicated. Parallel over blocks of nodes, concatenated in node
    /// order — deterministic. Work `O(n_cells·N_b²·log)` plus `O(nnz)` to
    /// expand nodes to dofs; memory `nnz` column indices (4 bytes each),
    /// `n_dofs + 1` row pointers, and a copy of the cell → node map and the
    /// incidence (for assembly).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `space` if `n_dofs` exceeds the
    /// `u32` range or the cell slots do not fit 32-bit indices.
    pub fn of_space(space: &FunctionSpace) -> Result<Arc<SparsityPattern>> {
        let n_dofs = space.n_dofs();
        if n_dofs > u32::MAX as usize + 1 {
            return Err(Error::arg(
                "space",
                format!("{n_dofs} dofs exceed the u32 column index range"),
            ));
        }
        let (offsets, slots) = space.node_incidence()?;
        let (n_b, nc, n_nodes) = (space.n_basis(), space.n_comp(), space.n_nodes());
        let cell_nodes = space.cell_nodes_all();

        // Per block of nodes: the neighbour count of each node and the
        // dof columns of the block's rows, in row order.
        let blocks: Vec<(Vec<usize>, Vec<u32>)> = (0..n_nodes.div_ceil(NODES_PER_TASK))
            .into_par_iter()
            .map(|blk| {
                let nodes = blk * NODES_PER_TASK..((blk + 1) * NODES_PER_TASK).min(n_nodes);
                let mut counts = Vec::with_capacity(nodes.len());
                let mut cols = Vec::new();
                let mut adj: Vec<u32> = Vec::new();
                for n in nodes {
                    adj.clear();
                    adj.push(n as u32);
                    for &s in &slots[offsets[n]..offsets[n + 1]] {
                        let c = s as usize / n_b;
                        adj.extend_from_slice(&cell_nodes[c * n_b..(c + 1) * n_b]);
                    }
                    adj.sort_unstable();
                    adj.dedup();
                    counts.push(adj.len());
                    for _fc in 0..nc {
                        for &m in &adj {
                            for gc in 0..nc {
                                cols.push((m as usize * nc + gc) as u32);
                            }
                        }
                    }
                }
                (counts, cols)
            })
            .collect();

        let mut row_ptr = Vec::with_capacity(n_dofs + 1);
        row_ptr.push(0usize);
        let mut nnz = 0;
        for &len in blocks.iter().flat_map(|(counts, _)| counts) {
            for _fc in 0..nc {
                nnz += len * nc;
                row_ptr.push(nnz);
            }
        }
        let mut col_idx = Vec::with_capacity(nnz);
        for (_, cols) in &blocks {
            col_idx.extend_from_slice(cols);
        }
        drop(blocks);
        Ok(Arc::new(SparsityPattern {
            n_rows: n_dofs,
            n_cols: n_dofs,
            row_ptr,
            col_idx,
            space: Some(SpaceMap {
                n_comp: nc,
                n_b,
                cell_nodes: cell_nodes.to_vec(),
                offsets: offsets.to_vec(),
                slots: slots.to_vec(),
            }),
        }))
    }

    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.n_rows
    }

    /// Number of columns.
    pub fn n_cols(&self) -> usize {
        self.n_cols
    }

    /// Number of stored entries.
    pub fn nnz(&self) -> usize {
        self.col_idx.len()
    }

    /// Row pointers, `n_rows + 1` entries.
    pub fn row_ptr(&self) -> &[usize] {
        &self.row_ptr
    }

    /// Column indices of all stored entries, row after row.
    pub fn col_idx(&self) -> &[u32] {
        &self.col_idx
    }

    /// The (strictly increasing) columns of row `i`; `None` if `i ≥ n_rows`.
    pub fn row(&self, i: usize) -> Option<&[u32]> {
        (i < self.n_rows).then(|| &self.col_idx[self.row_ptr[i]..self.row_ptr[i + 1]])
    }

    /// Position `k` (into `col_idx` and a matrix's values) of entry `(i, j)`;
    /// `None` if it is not stored. `O(log(row length))`.
    pub fn position(&self, i: usize, j: usize) -> Option<usize> {
        let cols = self.row(i)?;
        let j = u32::try_from(j).ok()?;
        cols.binary_search(&j).ok().map(|k| self.row_ptr[i] + k)
    }

    /// Whether both patterns have the same dimensions and entries.
    pub fn same_structure(&self, other: &SparsityPattern) -> bool {
        self.n_rows == other.n_rows
            && self.n_cols == other.n_cols
            && self.row_ptr == other.row_ptr
            && self.col_idx == other.col_idx
    }

    /// Components `N_comp` of the field, if built by [`SparsityPattern::of_space`].
    pub fn n_comp(&self) -> Option<usize> {
        self.space.as_ref().map(|s| s.n_comp)
    }

    /// Entries of the element-matrix array that assembly into this pattern
    /// takes, `n_cells·N_bt²` with `N_bt = N_b·N_comp`; `None` unless built by
    /// [`SparsityPattern::of_space`].
    pub fn element_matrices_len(&self) -> Option<usize> {
        self.space.as_ref().map(|s| {
            let n_bt = s.n_b * s.n_comp;
            s.n_cells() * n_bt * n_bt
        })
    }

    /// For every cell `c` and pair of its node slots `(a, b)`, at
    /// `(c·N_b + a)·N_b + b`, the position (into `col_idx` and a matrix's
    /// values) of the entry `(node(c,a)·N_comp, node(c,b)·N_comp)`. Every
    /// row of a node has the same columns, so entry `(fc, gc)` of the node
    /// pair is `fc` row lengths and `gc` entries further: the map from
    /// element-matrix entries to matrix positions that device assembly
    /// uploads once ([`crate::opencl::matrix`]). Parallel over cells.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `pattern` if it was not built by
    /// [`SparsityPattern::of_space`] or a position exceeds `u32`.
    pub fn node_pair_positions(&self) -> Result<Vec<u32>> {
        let space = self.space_map()?;
        if u32::try_from(self.nnz()).is_err() {
            return Err(Error::arg(
                "pattern",
                format!("{} stored entries exceed u32 positions", self.nnz()),
            ));
        }
        let (n_b, nc) = (space.n_b, space.n_comp);
        let mut out = vec![0u32; space.n_cells() * n_b * n_b];
        out.par_chunks_mut(n_b * n_b)
            .zip(space.cell_nodes.par_chunks(n_b))
            .try_for_each(|(positions, nodes)| {
                for (a, &na) in nodes.iter().enumerate() {
                    for (b, &nb) in nodes.iter().enumerate() {
                        let (i, j) = (na as usize * nc, nb as usize * nc);
                        let k = self.position(i, j).ok_or_else(|| {
                            Error::arg(
                                "pattern",
                                format!("entry ({i}, {j}) of a cell is not in the pattern"),
                            )
                        })?;
                        positions[a * n_b + b] = k as u32;
                    }
                }
                Ok::<(), Error>(())
            })?;
        Ok(out)
    }

    /// The node-level structure of the pattern: `(node_ptr, node_col)`,
    /// the neighbour nodes of node `n` being
    /// `node_col[node_ptr[n]..node_ptr[n+1]]` (increasing), such that every
    /// row `i = n·N_comp + fc` of node `n` holds exactly the columns
    ///
    /// ```text
    /// col(i, k) = node_col[node_ptr[n] + k / N_comp]·N_comp + k % N_comp
    /// for k = 0 … (row length − 1)
    /// ```
    ///
    /// — the node-major layout of [`SparsityPattern::of_space`], stored
    /// with `N_comp²` times fewer column indices (the device SpMV reads
    /// these, [`crate::opencl::matrix`]). `N_comp` is the space's, 1 for a
    /// pattern not built from a space, for which this is `(row_ptr,
    /// col_idx)`. Parallel over nodes.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming `pattern` if it is not node-major
    /// with its `N_comp`: rows or columns not a multiple of `N_comp`, a row
    /// whose length is not, a group of `N_comp` entries that are not the
    /// components `0 … N_comp − 1` of one node, or rows of a node with
    /// different columns — the row and the cause named.
    pub fn node_columns(&self) -> Result<(Vec<usize>, Vec<u32>)> {
        let nc = self.n_comp().unwrap_or(1);
        if nc == 1 {
            return Ok((self.row_ptr.clone(), self.col_idx.clone()));
        }
        if !self.n_rows.is_multiple_of(nc) || !self.n_cols.is_multiple_of(nc) {
            return Err(Error::arg(
                "pattern",
                format!(
                    "is {} × {}, not node-major with N_comp = {nc}: the dimensions are not \
                     multiples of N_comp",
                    self.n_rows, self.n_cols
                ),
            ));
        }
        let n_nodes = self.n_rows / nc;
        let bad = (0..n_nodes)
            .into_par_iter()
            .find_map_first(|n| self.node_major_error(n, nc));
        if let Some(cause) = bad {
            return Err(Error::arg(
                "pattern",
                format!("is not node-major with N_comp = {nc}: {cause}"),
            ));
        }
        let mut node_ptr = Vec::with_capacity(n_nodes + 1);
        node_ptr.push(0);
        let mut node_col = Vec::with_capacity(self.nnz() / (nc * nc));
        for n in 0..n_nodes {
            let row = &self.col_idx[self.row_ptr[n * nc]..self.row_ptr[n * nc + 1]];
            node_col.extend(row.iter().step_by(nc).map(|&c| c / nc as u32));
            node_ptr.push(node_col.len());
        }
        Ok((node_ptr, node_col))
    }

    /// Why the `nc` rows of node `n` are not node-major (see
    /// [`SparsityPattern::node_columns`]), `None` if they are.
    fn node_major_error(&self, n: usize, nc: usize) -> Option<String> {
        let i = n * nc;
        let first = &self.col_idx[self.row_ptr[i]..self.row_ptr[i + 1]];
        if !first.len().is_multiple_of(nc) {
            return Some(format!(
                "row {i} has {} entries, not a multiple of N_comp",
                first.len()
            ));
        }
        for (j, group) in first.chunks(nc).enumerate() {
            let base = group[0];
            if !(base as usize).is_multiple_of(nc)
                || group.iter().zip(base..).any(|(&c, want)| c != want)
            {
                return Some(format!(
                    "row {i}: entries {}..{} are the columns {group:?}, not the components of \
                     one node",
                    j * nc,
                    (j + 1) * nc
                ));
            }
        }
        (i + 1..i + nc)
            .find(|&r| self.col_idx[self.row_ptr[r]..self.row_ptr[r + 1]] != *first)
            .map(|r| format!("rows {i} and {r} of node {n} have different columns"))
    }

    /// The node → cell-slot incidence of the space (the slots
    /// `cell·N_b + b` of node `n` are `slots[offsets[n]..offsets[n+1]]`,
    /// increasing), if built by [`SparsityPattern::of_space`].
    pub fn node_incidence(&self) -> Option<(&[usize], &[u32])> {
        self.space
            .as_ref()
            .map(|s| (s.offsets.as_slice(), s.slots.as_slice()))
    }

    /// The space part, or the error for a pattern that has none.
    pub(super) fn space_map(&self) -> Result<&SpaceMap> {
        self.space.as_ref().ok_or_else(|| {
            Error::arg(
                "pattern",
                "was not built from a function space (SparsityPattern::of_space), \
                 so it cannot assemble element matrices",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::element::Element;
    use crate::mesh::Mesh;

    fn two_triangles() -> Arc<Mesh> {
        Mesh::from_raw(
            2,
            vec![0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],
            vec![0, 1, 2, 0, 2, 3],
        )
        .unwrap()
        .into()
    }

    #[test]
    fn two_triangles_p1_scalar_and_vector() {
        let m = two_triangles();
        let s = FunctionSpace::new(m.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let p = SparsityPattern::of_space(&s).unwrap();
        // Nodes 0 and 2 see everything, 1 misses 3, 3 misses 1.
        assert_eq!(p.row_ptr(), &[0, 4, 7, 11, 14]);
        assert_eq!(p.col_idx(), &[0, 1, 2, 3, 0, 1, 2, 0, 1, 2, 3, 0, 2, 3]);
        assert_eq!(p.position(1, 2), Some(6));
        assert_eq!(p.position(1, 3), None);
        assert_eq!(p.position(4, 0), None);
        assert_eq!(p.element_matrices_len(), Some(2 * 9));

        let s2 = FunctionSpace::new(m.clone(), Element::lagrange(2, 1).unwrap(), 2).unwrap();
        let p2 = SparsityPattern::of_space(&s2).unwrap();
        assert_eq!((p2.n_rows(), p2.nnz()), (8, 4 * 14));
        // Both rows of node 1: dofs of nodes 0, 1, 2.
        assert_eq!(p2.row(2).unwrap(), &[0, 1, 2, 3, 4, 5]);
        assert_eq!(p2.row(3).unwrap(), &[0, 1, 2, 3, 4, 5]);
        assert_eq!(p2.n_comp(), Some(2));
        assert_eq!(p2.element_matrices_len(), Some(2 * 36));
    }

    /// Every row's columns from the node columns by
    /// `node_col[node_ptr[n] + k / N_comp]·N_comp + k % N_comp`.
    fn expand(node_ptr: &[usize], node_col: &[u32], nc: usize) -> Vec<u32> {
        let mut cols = Vec::new();
        for n in 0..node_ptr.len() - 1 {
            let nodes = &node_col[node_ptr[n]..node_ptr[n + 1]];
            for _fc in 0..nc {
                cols.extend(
                    (0..nodes.len() * nc).map(|k| nodes[k / nc] * nc as u32 + (k % nc) as u32),
                );
            }
        }
        cols
    }

    /// The node columns of scalar (they are the CSR arrays), 2D and 3D
    /// vector patterns expand to every row's columns; each way of not being
    /// node-major is refused, naming the row and the cause.
    #[test]
    fn node_columns_expand_to_the_rows() {
        let m = two_triangles();
        let s = FunctionSpace::new(m.clone(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let p = SparsityPattern::of_space(&s).unwrap();
        let (node_ptr, node_col) = p.node_columns().unwrap();
        assert_eq!(
            (node_ptr.as_slice(), node_col.as_slice()),
            (p.row_ptr(), p.col_idx())
        );

        let s2 = FunctionSpace::new(m, Element::lagrange(2, 1).unwrap(), 2).unwrap();
        let p2 = SparsityPattern::of_space(&s2).unwrap();
        let (node_ptr, node_col) = p2.node_columns().unwrap();
        assert_eq!(
            (node_ptr.as_slice(), node_col.as_slice()),
            (p.row_ptr(), p.col_idx())
        );
        assert_eq!(expand(&node_ptr, &node_col, 2), p2.col_idx());

        let cube = crate::mesh::generate::unit_cube(2, &Default::default()).unwrap();
        let s3 = FunctionSpace::new(cube.into(), Element::lagrange(3, 1).unwrap(), 3).unwrap();
        let p3 = SparsityPattern::of_space(&s3).unwrap();
        let (node_ptr, node_col) = p3.node_columns().unwrap();
        assert_eq!(node_ptr.len(), s3.n_nodes() + 1);
        assert_eq!(node_col.len() * 9, p3.nnz());
        assert_eq!(expand(&node_ptr, &node_col, 3), p3.col_idx());

        let refused = |q: SparsityPattern, cause: &str| match q.node_columns() {
            Err(Error::InvalidArgument { name, reason }) => {
                assert_eq!(name, "pattern");
                assert!(reason.contains(cause), "{reason}");
            }
            other => panic!("expected an error, got {other:?}"),
        };
        let mut q = (*p2).clone();
        q.n_cols = 7;
        refused(q, "not multiples of N_comp");
        let mut q = (*p2).clone();
        q.row_ptr[1] = 7;
        refused(q, "row 0 has 7 entries");
        let mut q = (*p2).clone();
        q.col_idx[3] = 4;
        refused(q, "row 0: entries 2..4 are the columns [2, 4]");
        let mut q = (*p2).clone();
        q.col_idx[1] = 2;
        refused(q, "row 0: entries 0..2 are the columns [0, 2]");
        let mut q = (*p2).clone();
        let row3 = q.row_ptr[3];
        q.col_idx[row3 + 5] = 7;
        refused(q, "rows 2 and 3 of node 1 have different columns");
    }

    #[test]
    fn isolated_node_keeps_its_diagonal() {
        // Vertex 3 is in no cell.
        let m = Mesh::from_raw(
            2,
            vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 5.0, 5.0],
            vec![0, 1, 2],
        )
        .unwrap();
        let s = FunctionSpace::new(m.into(), Element::lagrange(2, 1).unwrap(), 1).unwrap();
        let p = SparsityPattern::of_space(&s).unwrap();
        assert_eq!(p.row(3).unwrap(), &[3]);
        assert_eq!(p.nnz(), 10);
    }

    #[test]
    fn from_csr_checks_its_input() {
        let ok = SparsityPattern::from_csr(2, 3, vec![0, 2, 3], vec![0, 2, 1]).unwrap();
        assert_eq!(ok.row(0).unwrap(), &[0, 2]);
        assert!(ok.n_comp().is_none() && ok.space_map().is_err());
        let err = |r: Result<Arc<SparsityPattern>>| match r {
            Err(Error::InvalidArgument { name, .. }) => name,
            other => panic!("expected an error, got {other:?}"),
        };
        assert_eq!(
            err(SparsityPattern::from_csr(2, 3, vec![0, 2], vec![0, 2])),
            "row_ptr"
        );
        assert_eq!(
            err(SparsityPattern::from_csr(
                2,
                3,
                vec![1, 2, 3],
                vec![0, 2, 1]
            )),
            "row_ptr"
        );
        assert_eq!(
            err(SparsityPattern::from_csr(
                2,
                3,
                vec![0, 3, 2],
                vec![0, 2, 1]
            )),
            "row_ptr"
        );
        assert_eq!(
            err(SparsityPattern::from_csr(
                2,
                3,
                vec![0, 2, 3],
                vec![2, 0, 1]
            )),
            "col_idx"
        );
        assert_eq!(
            err(SparsityPattern::from_csr(
                2,
                3,
                vec![0, 2, 3],
                vec![0, 0, 1]
            )),
            "col_idx"
        );
        assert_eq!(
            err(SparsityPattern::from_csr(
                2,
                3,
                vec![0, 2, 3],
                vec![0, 3, 1]
            )),
            "col_idx"
        );
    }
}
