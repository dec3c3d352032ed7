/*
 * femquad: kernels of a CSR matrix on the device
 * (femquad/src/opencl/matrix/): y = A x, and the point-block diagonal.
 *
 * Columns by node. The pattern is node-major (SparsityPattern::of_space):
 * the N_COMP rows i = n·N_COMP + fc of node n all hold, for every
 * neighbour node m of n (increasing), the N_COMP columns m·N_COMP + gc,
 * gc = 0 … N_COMP − 1. So the device keeps the node columns
 * (SparsityPattern::node_columns): the neighbours of node n are
 * nodeCol[nodePtr[n] … nodePtr[n+1]), and entry k of row i (k counted
 * from rowPtr[i]) has the column
 *
 *   col(i, k) = nodeCol[nodePtr[n] + k / N_COMP]·N_COMP + k % N_COMP.
 *
 * Why: the scalar column array repeats each node column N_COMP² times;
 * reading it cost 4 bytes per stored entry next to the value's 4 (f32) or
 * 8 (f64), the node columns cost 4 / N_COMP² (and the N_COMP rows of a
 * node read the same ones, neighbouring teams, from cache). With
 * N_COMP = 1 they are the scalar columns.
 *
 * spmv: "CSR-vector" — a team of `lanes` consecutive work-items per row
 * (lanes a power of two, 1 ≤ lanes ≤ 32, chosen on the host from the mean
 * row length: femquad/src/opencl/matrix/lanes.rs). Lane j of row i sums
 * values[rowPtr[i] + k] * x[col(i, k)] for k = j, j + lanes,
 * j + 2·lanes, … in increasing k; the team's partial sums are then added
 * by a tree in local memory (step s = lanes/2, lanes/4, …, 1: lane j < s
 * adds lane j + s's partial to its own). The order of every addition
 * depends on the row and `lanes` only, never on the launch or the timing:
 * two applies give the same bits. With lanes = 1 it is the
 * row-per-work-item kernel (one lane sums the row in column order, as
 * CsrMatrix::spmv does on the host).
 *
 * Why teams: the values of a row are contiguous, so the `lanes`
 * work-items of a team load neighbouring words and a warp's load covers
 * 32 / lanes whole row segments, which are themselves contiguous (rows
 * follow each other): every cache line read is used whole, and each
 * nonzero costs its value once (plus its share of a node column and the
 * gathered x[col], from cache on a locality-numbered mesh). One work-item
 * per row instead strides a warp's load by the row length (27–81 entries
 * for Lamé), touching 32 lines per load, and the lines are evicted before
 * the next entries of the row are read.
 *
 * Work-groups of SPMV_GROUP work-items (the host's GROUP in
 * femquad/src/opencl/matrix/mod.rs), SPMV_GROUP / lanes rows each.
 *
 * spmv_chebyshev_step: a Chebyshev step with its SpMV fused (see below).
 *
 * point_block_diagonal: one work-item per entry (node, fc, gc) of the
 * point-block diagonal, out[(node*N_COMP + fc)*N_COMP + gc] =
 * A[node*N_COMP + fc][node*N_COMP + gc]: the node's own position j among
 * its node columns by binary search (they increase), then entry
 * j·N_COMP + gc of the row; 0 where not stored.
 *
 * The host prepends `real`, REAL_IS_DOUBLE, N_COMP and
 * kernels/chebyshev_update.cl.
 */

#define SPMV_GROUP 128

/* The team's sum of row i = n·N_COMP + fc: Σ_k values[rowPtr[i] + k] *
 * x[col(i, k)] over the row, lane j summing k = j, j + lanes, … in
 * increasing k, then the tree in `partial` (this work-item's slot lid).
 * Lane 0 returns the row's sum. Every work-item of the group calls it (it
 * holds barriers), those of a row past the matrix with active = 0 (no
 * loads). */
real team_row_sum(__global const uint *restrict rowPtr,
                  __global const uint *restrict nodePtr,
                  __global const uint *restrict nodeCol,
                  __global const real *restrict values,
                  __global const real *restrict x, const size_t n,
                  const uint fc, const int active, const int lanes,
                  const int lane, const int lid, __local real *partial)
{
  real acc = (real)0;
  if (active) {
    const size_t i = n * N_COMP + fc;
    const uint start = rowPtr[i], len = rowPtr[i + 1] - start;
    /* node_ptr is row_ptr for one component: no second load */
    const uint cols = N_COMP == 1 ? start : nodePtr[n];
    for (uint k = (uint)lane; k < len; k += (uint)lanes)
      acc += values[start + k] *
             x[nodeCol[cols + k / N_COMP] * N_COMP + k % N_COMP];
  }
  /* lanes is the same for every work-item: the barriers below are reached
   * by the whole group or by none of it */
  if (lanes > 1) {
    partial[lid] = acc;
    for (int s = lanes / 2; s > 0; s /= 2) {
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lane < s) partial[lid] += partial[lid + s];
    }
    acc = partial[lid];
  }
  return acc;
}

__kernel __attribute__((reqd_work_group_size(SPMV_GROUP, 1, 1)))
void spmv(__global const uint *restrict rowPtr,  /* [row + 1]    */
          __global const uint *restrict nodePtr, /* [node + 1]   */
          __global const uint *restrict nodeCol, /* [node pairs] */
          __global const real *restrict values,  /* [nnz]        */
          __global const real *restrict x,       /* [col]        */
          __global real *restrict y,             /* [row]        */
          const int nRows,
          const int lanes)                       /* 1, 2, 4, …, 32 */
{
  __local real partial[SPMV_GROUP];
  const int lid = get_local_id(0);
  const int lane = lid & (lanes - 1);
  const size_t row = get_global_id(0) / (size_t)lanes;
  const int active = row < (size_t)nRows;
  const real acc =
      team_row_sum(rowPtr, nodePtr, nodeCol, values, x, row / N_COMP,
                   (uint)(row % N_COMP), active, lanes, lane, lid, partial);
  if (lane == 0 && active) y[row] = acc;
}

__kernel void point_block_diagonal(__global const uint *restrict rowPtr,
                                   __global const uint *restrict nodePtr,
                                   __global const uint *restrict nodeCol,
                                   __global const real *restrict values,
                                   __global real *restrict out, /* [node][fc][gc] */
                                   const int nEntries)
{
  const int e = get_global_id(0);
  if (e >= nEntries) return;
  const uint node = (uint)e / (N_COMP * N_COMP);
  const uint fc = (uint)e / N_COMP % N_COMP, gc = (uint)e % N_COMP;
  const uint first = nodePtr[node];
  uint lo = first, hi = nodePtr[node + 1];
  real v = (real)0;
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    const uint m = nodeCol[mid];
    if (m == node) {
      v = values[rowPtr[node * N_COMP + fc] + (mid - first) * N_COMP + gc];
      break;
    }
    if (m < node) lo = mid + 1;
    else hi = mid;
  }
  out[e] = v;
}

/* The step's residual as mg_chebyshev_step's (kernels/multigrid.cl), FP
 * contraction off like it, and its update by the same function,
 * chebyshev_node_update (kernels/chebyshev_update.cl, prepended by the
 * host), so the step is bitwise its own. */
#pragma OPENCL FP_CONTRACT OFF

/* One Chebyshev step of the smoother (femquad/src/multigrid/chebyshev.rs)
 * with its SpMV fused: a team of `lanes` work-items per node n (the SpMV's
 * structure), which sums the node's N_COMP rows of w = A d one after the
 * other (team_row_sum, the spmv kernel's order: the same bits), then lane 0
 * updates the node's entries i = n·N_COMP + fc by the operations of
 * mg_chebyshev_step with residual = r − w, x ← x + d:
 *   r[i]     = r[i] + (−1)·w[i]
 *   dNext[i] = a·d[i] + c·Σ_j inv[n][fc][j] r[n·N_COMP + j]
 *   x[i]     = x[i] + 1·dNext[i]
 * (the last two by chebyshev_node_update). The new direction goes to dNext, not d: other teams still read d in this
 * launch (the host swaps the two afterwards). */
__kernel __attribute__((reqd_work_group_size(SPMV_GROUP, 1, 1)))
void spmv_chebyshev_step(__global const uint *restrict rowPtr,
                         __global const uint *restrict nodePtr,
                         __global const uint *restrict nodeCol,
                         __global const real *restrict values,
                         __global const real *restrict d,     /* [dof] */
                         __global real *restrict dNext,       /* [dof] */
                         __global real *restrict r,           /* [dof] */
                         __global real *restrict x,           /* [dof] */
                         __global const real *restrict inv,   /* [node][fc][gc] */
                         const int nNodes, const int lanes, const real a,
                         const real c)
{
  __local real partial[SPMV_GROUP];
  const int lid = get_local_id(0);
  const int lane = lid & (lanes - 1);
  const size_t n = get_global_id(0) / (size_t)lanes;
  const int active = n < (size_t)nNodes;
  real rn[N_COMP];
  for (uint fc = 0; fc < N_COMP; ++fc) {
    const size_t i = n * N_COMP + fc;
    const real w = team_row_sum(rowPtr, nodePtr, nodeCol, values, d, n, fc,
                                active, lanes, lane, lid, partial);
    if (lane == 0 && active) rn[fc] = r[i] + (real)(-1) * w;
    /* every lane has read its tree's slots before they are written again */
    if (lanes > 1) barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane != 0 || !active) return;
  for (uint fc = 0; fc < N_COMP; ++fc) r[n * N_COMP + fc] = rn[fc];
  chebyshev_node_update(n, N_COMP, rn, inv, d, dNext, x, a, c, 0);
}
