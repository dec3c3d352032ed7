/*
 * femquad: kernels of a CSR matrix on the device
 * (femquad/src/opencl/matrix/): y = A x, and the point-block diagonal.
 *
 * spmv: "CSR-vector" — a team of `lanes` consecutive work-items per row
 * (lanes a power of two, 1 ≤ lanes ≤ 32, chosen on the host from the mean
 * row length: femquad/src/opencl/matrix/lanes.rs). Lane j of row i sums
 * values[k] * x[colIdx[k]] for k = rowPtr[i] + j, + 2·lanes, … in
 * increasing k; the team's partial sums are then added by a tree in local
 * memory (step s = lanes/2, lanes/4, …, 1: lane j < s adds lane j + s's
 * partial to its own). The order of every addition depends on the row and
 * `lanes` only, never on the launch or the timing: two applies give the
 * same bits. With lanes = 1 it is the row-per-work-item kernel (one lane
 * sums the row in column order, as CsrMatrix::spmv does on the host).
 *
 * Why: the values and column indices of a row are contiguous, so the
 * `lanes` work-items of a team load neighbouring words and a warp's load
 * covers 32 / lanes whole row segments, which are themselves contiguous
 * (rows follow each other): every cache line read is used whole, and each
 * nonzero costs its value and its column index once (plus the gathered
 * x[col], from cache on a locality-numbered mesh). One work-item per row
 * instead strides a warp's load by the row length (27–81 entries for
 * Lamé), touching 32 lines per load, and the lines are evicted before the
 * next entries of the row are read.
 *
 * Work-groups of SPMV_GROUP work-items (the host's GROUP in
 * femquad/src/opencl/matrix/mod.rs), SPMV_GROUP / lanes rows each.
 *
 * point_block_diagonal: one work-item per entry (node, fc, gc) of the
 * point-block diagonal, out[(node*N_COMP + fc)*N_COMP + gc] =
 * A[node*N_COMP + fc][node*N_COMP + gc], found by binary search in the row
 * (columns increase), 0 where not stored.
 *
 * The host prepends `real`, REAL_IS_DOUBLE and N_COMP.
 */

#define SPMV_GROUP 128

__kernel __attribute__((reqd_work_group_size(SPMV_GROUP, 1, 1)))
void spmv(__global const uint *restrict rowPtr,  /* [row + 1] */
          __global const uint *restrict colIdx,  /* [nnz]     */
          __global const real *restrict values,  /* [nnz]     */
          __global const real *restrict x,       /* [col]     */
          __global real *restrict y,             /* [row]     */
          const int nRows,
          const int lanes)                       /* 1, 2, 4, …, 32 */
{
  __local real partial[SPMV_GROUP];
  const int lid = get_local_id(0);
  const int lane = lid & (lanes - 1);
  const size_t row = get_global_id(0) / (size_t)lanes;
  real acc = (real)0;
  if (row < (size_t)nRows) {
    const uint end = rowPtr[row + 1];
    for (uint k = rowPtr[row] + (uint)lane; k < end; k += (uint)lanes)
      acc += values[k] * x[colIdx[k]];
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
  if (lane == 0 && row < (size_t)nRows) y[row] = acc;
}

__kernel void point_block_diagonal(__global const uint *restrict rowPtr,
                                   __global const uint *restrict colIdx,
                                   __global const real *restrict values,
                                   __global real *restrict out, /* [node][fc][gc] */
                                   const int nEntries)
{
  const int e = get_global_id(0);
  if (e >= nEntries) return;
  const uint node = (uint)e / (N_COMP * N_COMP);
  const uint fc = (uint)e / N_COMP % N_COMP, gc = (uint)e % N_COMP;
  const uint row = node * N_COMP + fc, col = node * N_COMP + gc;
  uint lo = rowPtr[row], hi = rowPtr[row + 1];
  real v = (real)0;
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    const uint c = colIdx[mid];
    if (c == col) {
      v = values[mid];
      break;
    }
    if (c < col) lo = mid + 1;
    else hi = mid;
  }
  out[e] = v;
}
