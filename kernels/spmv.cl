/*
 * femquad: kernels of a CSR matrix on the device
 * (femquad/src/opencl/matrix/): y = A x, and the point-block diagonal.
 *
 * spmv: one work-item per row ("scalar CSR"). Row i sums
 * values[k] * x[colIdx[k]] for k = rowPtr[i] .. rowPtr[i+1] - 1 in
 * increasing k (increasing column), as CsrMatrix::spmv does on the host,
 * so the result does not depend on the launch and is reproducible bitwise.
 * Chosen for simplicity: a finite-element row is short (P1: 7 entries in
 * 2D, ~15 in 3D; per component of a vector field N_COMP times more), so
 * one work-item per row keeps every thread busy without a reduction, and
 * neighbouring work-items read neighbouring rows, whose values and column
 * indices lie one row length apart (the loads of a warp touch
 * 32 consecutive rows, a few cache lines each). A few work-items per row
 * (coalesced loads within a row, a subgroup reduction) is the alternative
 * to measure against cuSPARSE where rows are long (3D P2, Lame).
 *
 * point_block_diagonal: one work-item per entry (node, fc, gc) of the
 * point-block diagonal, out[(node*N_COMP + fc)*N_COMP + gc] =
 * A[node*N_COMP + fc][node*N_COMP + gc], found by binary search in the row
 * (columns increase), 0 where not stored.
 *
 * The host prepends `real`, REAL_IS_DOUBLE and N_COMP.
 */

__kernel void spmv(__global const uint *restrict rowPtr,  /* [row + 1] */
                   __global const uint *restrict colIdx,  /* [nnz]     */
                   __global const real *restrict values,  /* [nnz]     */
                   __global const real *restrict x,       /* [col]     */
                   __global real *restrict y,             /* [row]     */
                   const int nRows)
{
  const int row = get_global_id(0);
  if (row >= nRows) return;
  const uint end = rowPtr[row + 1];
  real acc = (real)0;
  for (uint k = rowPtr[row]; k < end; ++k) acc += values[k] * x[colIdx[k]];
  y[row] = acc;
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
