//! Memory layouts: the one place that fixes how every array is ordered.
//!
//! Host code, the native integrator and the OpenCL kernel all index through
//! the functions (or the generated OpenCL macros, [`opencl_macros`]) below.
//!
//! | array | shape | flat index |
//! |---|---|---|
//! | global vector of a field with `N_comp` components | `[node][comp]` | `node·N_comp + comp` (interleaved, node-major) |
//! | cell-local coefficients / element vectors | `[cell][b][comp]` | `(cell·N_b + b)·N_comp + comp` |
//! | basis tabulation `φ_b(ξ_q)` | `[q][b]` | `q·N_b + b` |
//! | reference gradients `∂φ_b/∂ξ_e (ξ_q)` | `[q][b][e]` | `(q·N_b + b)·dim + e` |
//! | inverse Jacobian `J⁻¹[i][j] = ∂ξ_i/∂x_j` | `[cell][i][j]` | `cell·dim² + i·dim + j` |
//! | Jacobian determinant | `[cell]` | `cell` |
//! | cell vertex coordinates | `[cell][v][d]` | `(cell·(dim+1) + v)·dim + d` |
//! | mesh vertex coordinates | `[vertex][d]` | `vertex·dim + d` |
//! | cell → node map of a space | `[cell][b]` | `cell·N_b + b` |
//! | pointwise `∇u`, `∇a`, `f1` | `[comp][d]` | `comp·dim + d` |
//! | pointwise Jacobian `g0 = ∂f0/∂u` | `[fc][gc]` | `fc·N_comp + gc` |
//! | pointwise Jacobian `g1 = ∂f0/∂∇u` | `[fc][gc][dg]` | `(fc·N_comp + gc)·dim + dg` |
//! | pointwise Jacobian `g2 = ∂f1/∂u` | `[fc][gc][df]` | `(fc·N_comp + gc)·dim + df` |
//! | pointwise Jacobian `g3 = ∂f1/∂∇u` | `[fc][gc][df][dg]` | `((fc·N_comp + gc)·dim + df)·dim + dg` |
//!
//! In the pointwise Jacobians (PETSc's `g0`…`g3`, same meaning and
//! layout), `fc`, `df` are the output (test function) component and
//! derivative direction, `gc`, `dg` the input (trial function) component and
//! derivative direction: `g3[((fc·N_comp + gc)·dim + df)·dim + dg] =
//! ∂f1[fc][df] / ∂(∇u)[gc][dg]`.
//!
//! Within a cell, element dof `i = b·N_comp + comp`: basis function (node)
//! `b`, component `comp`; the element vector entry `i` of cell `c` is
//! `∫_c φ_b f0_comp + ∇φ_b · f1_comp`.
//!
//! Reference simplex: vertices `0`, `e_1`, …, `e_dim`; the affine map of a
//! cell is `x = X_0 + J ξ` with column `i` of `J` equal to `X_{i+1} − X_0`.
//!
//! P2 edge order (also the order of edge nodes in mesh I/O, VTK's order):
//! triangle `(0,1), (1,2), (2,0)`; tetrahedron `(0,1), (1,2), (2,0), (0,3), (1,3), (2,3)`.
//! Local P2 nodes are the `dim+1` vertices followed by the edges in this order.

/// Edges of the reference triangle, as pairs of local vertices, in P2 node order.
pub const TRIANGLE_EDGES: [[usize; 2]; 3] = [[0, 1], [1, 2], [2, 0]];

/// Edges of the reference tetrahedron, as pairs of local vertices, in P2 node order.
pub const TETRAHEDRON_EDGES: [[usize; 2]; 6] = [[0, 1], [1, 2], [2, 0], [0, 3], [1, 3], [2, 3]];

/// Edges of the reference simplex of dimension `dim` (2 or 3), in P2 node order.
///
/// Returns an empty slice for other dimensions.
pub fn simplex_edges(dim: usize) -> &'static [[usize; 2]] {
    match dim {
        2 => &TRIANGLE_EDGES,
        3 => &TETRAHEDRON_EDGES,
        _ => &[],
    }
}

/// Index of component `comp` of node `node` in a global vector.
#[inline]
pub fn global_dof(node: usize, comp: usize, n_comp: usize) -> usize {
    node * n_comp + comp
}

/// Index of element dof (basis `b`, component `comp`) of `cell` in a
/// cell-local coefficient array or element-vector array.
#[inline]
pub fn cell_dof(cell: usize, b: usize, comp: usize, n_b: usize, n_comp: usize) -> usize {
    (cell * n_b + b) * n_comp + comp
}

/// Index of `φ_b(ξ_q)` in a basis tabulation.
#[inline]
pub fn tab_phi(q: usize, b: usize, n_b: usize) -> usize {
    q * n_b + b
}

/// Index of `∂φ_b/∂ξ_e (ξ_q)` in a reference-gradient tabulation.
#[inline]
pub fn tab_dphi(q: usize, b: usize, e: usize, n_b: usize, dim: usize) -> usize {
    (q * n_b + b) * dim + e
}

/// Index of `J⁻¹[i][j]` of `cell`.
#[inline]
pub fn inv_j(cell: usize, i: usize, j: usize, dim: usize) -> usize {
    (cell * dim + i) * dim + j
}

/// Index of coordinate `d` of local vertex `v` of `cell` in the cell-coordinates array.
#[inline]
pub fn cell_coord(cell: usize, v: usize, d: usize, dim: usize) -> usize {
    (cell * (dim + 1) + v) * dim + d
}

/// Index of coordinate `d` of mesh vertex `v` in the vertex-coordinates array.
#[inline]
pub fn vertex_coord(v: usize, d: usize, dim: usize) -> usize {
    v * dim + d
}

/// Index of the global node of local basis function `b` of `cell` in a
/// space's cell → node map.
#[inline]
pub fn cell_node(cell: usize, b: usize, n_b: usize) -> usize {
    cell * n_b + b
}

/// Index of `g[comp][d]` in a pointwise gradient or flux array (`∇u`, `∇a`, `f1`).
#[inline]
pub fn point_grad(comp: usize, d: usize, dim: usize) -> usize {
    comp * dim + d
}

/// Index of `g0[fc][gc] = ∂f0_fc/∂u_gc` in a pointwise Jacobian.
#[inline]
pub fn jac_g0(fc: usize, gc: usize, n_comp: usize) -> usize {
    fc * n_comp + gc
}

/// Index of `g1[fc][gc][dg] = ∂f0_fc/∂(∇u)_gc,dg` in a pointwise Jacobian.
#[inline]
pub fn jac_g1(fc: usize, gc: usize, dg: usize, n_comp: usize, dim: usize) -> usize {
    (fc * n_comp + gc) * dim + dg
}

/// Index of `g2[fc][gc][df] = ∂f1_fc,df/∂u_gc` in a pointwise Jacobian.
#[inline]
pub fn jac_g2(fc: usize, gc: usize, df: usize, n_comp: usize, dim: usize) -> usize {
    (fc * n_comp + gc) * dim + df
}

/// Index of `g3[fc][gc][df][dg] = ∂f1_fc,df/∂(∇u)_gc,dg` in a pointwise Jacobian.
#[inline]
pub fn jac_g3(fc: usize, gc: usize, df: usize, dg: usize, n_comp: usize, dim: usize) -> usize {
    ((fc * n_comp + gc) * dim + df) * dim + dg
}

/// OpenCL C macros with the same index formulas as the functions of this
/// module, for the kernel templates. Each takes its sizes as arguments.
/// `femquad/tests/layout_macros.rs` evaluates every one of them on the
/// device and compares it with the function of the same name.
pub fn opencl_macros() -> &'static str {
    "#define CELL_DOF(cell, b, comp, n_b, n_comp) ((((cell) * (n_b)) + (b)) * (n_comp) + (comp))\n\
     #define TAB_PHI(q, b, n_b) ((q) * (n_b) + (b))\n\
     #define TAB_DPHI(q, b, e, n_b, dim) ((((q) * (n_b)) + (b)) * (dim) + (e))\n\
     #define INV_J(cell, i, j, dim) ((((cell) * (dim)) + (i)) * (dim) + (j))\n\
     #define CELL_COORD(cell, v, d, dim) ((((cell) * ((dim) + 1)) + (v)) * (dim) + (d))\n\
     #define GLOBAL_DOF(node, comp, n_comp) ((node) * (n_comp) + (comp))\n\
     #define VERTEX_COORD(v, d, dim) ((v) * (dim) + (d))\n\
     #define CELL_NODE(cell, b, n_b) ((cell) * (n_b) + (b))\n\
     #define JAC_G0(fc, gc, n_comp) ((fc) * (n_comp) + (gc))\n\
     #define JAC_G1(fc, gc, dg, n_comp, dim) (((fc) * (n_comp) + (gc)) * (dim) + (dg))\n\
     #define JAC_G2(fc, gc, df, n_comp, dim) (((fc) * (n_comp) + (gc)) * (dim) + (df))\n\
     #define JAC_G3(fc, gc, df, dg, n_comp, dim) ((((fc) * (n_comp) + (gc)) * (dim) + (df)) * (dim) + (dg))\n\
     #define ELEM_MAT(cell, i, j, n_bt) ((((cell) * (n_bt)) + (i)) * (n_bt) + (j))\n"
}

/// Index of `K[i][j]` of `cell` in an element-matrix array `[cell][i][j]`:
/// row `i = a·N_comp + fc` (test function `a`, component `fc`), column
/// `j = b·N_comp + gc` (trial function `b`, component `gc`), `n_bt = N_b·N_comp`.
#[inline]
pub fn elem_mat(cell: usize, i: usize, j: usize, n_bt: usize) -> usize {
    (cell * n_bt + i) * n_bt + j
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_dofs_are_node_major_interleaved() {
        // cell 2 of a 3-node, 2-component field: entries 12..18
        assert_eq!(cell_dof(2, 0, 0, 3, 2), 12);
        assert_eq!(cell_dof(2, 0, 1, 3, 2), 13);
        assert_eq!(cell_dof(2, 1, 0, 3, 2), 14);
        assert_eq!(cell_dof(2, 2, 1, 3, 2), 17);
        assert_eq!(global_dof(5, 1, 2), 11);
    }

    #[test]
    fn tabulation_and_geometry_indices() {
        assert_eq!(tab_phi(2, 1, 4), 9);
        assert_eq!(tab_dphi(1, 2, 1, 4, 3), (4 + 2) * 3 + 1);
        assert_eq!(inv_j(3, 1, 0, 2), 14);
        assert_eq!(cell_coord(1, 2, 1, 3), (4 + 2) * 3 + 1);
        assert_eq!(point_grad(1, 2, 3), 5);
        assert_eq!(vertex_coord(4, 2, 3), 14);
        assert_eq!(cell_node(3, 1, 4), 13);
    }

    #[test]
    fn jacobian_blocks_follow_petsc() {
        // 2 components in 3D: g0 is 2×2, g1 and g2 2×2×3, g3 2×2×3×3
        let (nc, dim) = (2, 3);
        assert_eq!(jac_g0(1, 0, nc), 2);
        assert_eq!(jac_g1(1, 0, 2, nc, dim), 8);
        assert_eq!(jac_g2(0, 1, 2, nc, dim), 5);
        assert_eq!(jac_g3(1, 1, 2, 0, nc, dim), 33);
        // every index of g3 once, in order
        let mut next = 0;
        for fc in 0..nc {
            for gc in 0..nc {
                for df in 0..dim {
                    for dg in 0..dim {
                        assert_eq!(jac_g3(fc, gc, df, dg, nc, dim), next);
                        next += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn edge_tables_cover_each_vertex_pair_once() {
        for dim in [2, 3] {
            let mut pairs: Vec<_> = simplex_edges(dim)
                .iter()
                .map(|&[a, b]| (a.min(b), a.max(b)))
                .collect();
            pairs.sort();
            pairs.dedup();
            assert_eq!(pairs.len(), dim * (dim + 1) / 2);
        }
    }
}
