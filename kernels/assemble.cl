/*
 * femquad: deterministic assembly of element vectors into a global vector.
 *
 * The host prepends `real`, REAL_IS_DOUBLE and N_COMP (components per node).
 * For every global dof = node*N_COMP + comp (one work-item each):
 *   out[dof] = sum over the cell slots s = cell*N_B + b of `node`, in
 *              increasing s (increasing cell), of elemVec[s*N_COMP + comp]
 * through the node -> cell-slot incidence in CSR form (offsets[node] ..
 * offsets[node+1] into slots). The order of the additions is fixed, so the
 * result is bitwise the same on every run, and it is the order of the
 * native assembly (femquad/src/space.rs).
 */
__kernel void assemble(__global const real *restrict elemVec,  /* [cell][b][comp] */
                       __global const uint *restrict offsets,  /* [node + 1]      */
                       __global const uint *restrict slots,    /* [slot]          */
                       __global real *restrict out,            /* [node][comp]    */
                       const int nDofs)
{
  const int dof = get_global_id(0);
  if (dof >= nDofs) return;
  const uint node = (uint)dof / N_COMP, comp = (uint)dof % N_COMP;
  real acc = (real)0;
  const uint end = offsets[node + 1];
  for (uint k = offsets[node]; k < end; ++k) acc += elemVec[slots[k] * N_COMP + comp];
  out[dof] = acc;
}
