/*
 * femquad: the element matrices of the Jacobian J(u), summed into the
 * values of a CSR matrix on the device (femquad/src/opencl/matrix/).
 *
 * element_matrices: one work-item per cell. For each trial node slot b and
 * component gc, the column j = b*N_COMP + gc of the element matrix
 *
 *   K[a*N_COMP + fc][j] = sum_q w_q detJ_c ( df0[fc] phi_a + df1[fc] . grad phi_a ),
 *
 * (df0, df1) = TANGENT_PHYSICS at u, grad u, a, grad a, x in the direction
 * du = phi_b e_gc, grad du = grad phi_b e_gc: the element matrices of
 * femquad/src/sparse/element.rs (K[i][j] = dE[i]/du_c[j]) from the
 * physics' tangent, as kernels/jacobian_diagonal.cl computes their diagonal
 * blocks (one N_BT x N_COMP block of columns in registers; the point values
 * recomputed per trial slot as there, by the same kernels/tangent_point.cl).
 * An affine physics (AFFINE) is differentiated at u = 0.
 *
 * Where the entry goes: positions[ELEM_MAT(cell, a, b, N_B)] is the CSR
 * position of (node_a*N_COMP, node_b*N_COMP); every row of a node has the
 * same columns (SparsityPattern::of_space), so entry (fc, gc) of the node
 * pair is at positions[..] + fc*rowLen + gc with rowLen the length of row
 * node_a*N_COMP (from rowPtr).
 *
 *   OUTPUT_ATOMIC = 1: each entry is added into values with atomic_add_real
 *                      (values zeroed before).
 *   OUTPUT_ATOMIC = 0: each entry is written to elemMat[ELEM_MAT(cell, i, j,
 *                      N_BT)]; sum_element_matrices then sums them per row.
 *
 * sum_element_matrices (OUTPUT_ATOMIC = 0): one work-item per row
 * r = node*N_COMP + fc. The row is zeroed, then for each cell slot
 * s = cell*N_B + a of the node in increasing cell order (the node -> cell
 * slot incidence offsets/slots, as kernels/assemble.cl) the row fc of the
 * slot's element matrix is added at its positions: every value is the sum
 * of its cell contributions in increasing cell order, the order of
 * femquad/src/sparse/assemble.rs, bitwise the same on every run.
 *
 * The host prepends: real, DIM, N_B, N_COMP, N_Q, N_AUX, N_AUX_ALLOC,
 * AUX_FIELD, AUX_CELL, N_CONSTANTS, N_CONSTANTS_ALLOC, AFFINE,
 * OUTPUT_ATOMIC, atomic_add_real, the layout macros, the tabulation
 * (Basis, BasisDerivatives, QuadWeights, QuadPoints), the physics and
 * TANGENT_PHYSICS, READS_U_T, TIME_PARAMS, TIME_T (the time state
 * u_t = sigma*u + b of a physics that reads u_t or t) and
 * kernels/tangent_point.cl (femquad/src/opencl/source.rs). Geometry is
 * read per cell (J^{-1}, det J).
 */

#define N_BT (N_B * N_COMP)

__kernel void element_matrices(__global const real *restrict u,          /* [node][comp]          */
                               __global const uint *restrict cellNodes,  /* [cell][b]             */
                               __global const real *restrict aux,        /* field: [node][k]; P0: [cell][k] */
                               __global const real *restrict jacobianInverses,     /* [cell][e][d] */
                               __global const real *restrict jacobianDeterminants, /* [cell]       */
                               __global const real *restrict coordinates, /* [vertex][d]          */
                               __constant real *constants                /* [N_CONSTANTS]         */
                               TIME_PARAMS,                              /* READS_U_T or t: b, sigma, t */
                               __global const uint *restrict positions,  /* [cell][a][b]          */
                               __global const uint *restrict rowPtr,     /* [row + 1]             */
                               __global real *restrict out,              /* atomic: values [nnz]; else [cell][i][j] */
                               const int nCells)
{
  const int cell = get_global_id(0);
  if (cell >= nCells) return;

  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];

  TangentCell c;
  load_tangent_cell(cell, u, cellNodes, aux, jacobianInverses, jacobianDeterminants, coordinates,
#if READS_U_T
                    timeB, sigma,
#endif
                    &c);

  /* Trial slot by trial slot: the columns b*N_COMP .. b*N_COMP + N_COMP - 1 */
  for (int b = 0; b < N_B; ++b) {
    real block[N_BT][N_COMP];
    for (int i = 0; i < N_BT; ++i)
      for (int gc = 0; gc < N_COMP; ++gc) block[i][gc] = (real)0;
    for (int q = 0; q < N_Q; ++q) {
      real uq[N_COMP], gradU[N_COMP][DIM], uT[N_COMP], a[N_AUX_ALLOC], gradA[N_AUX_ALLOC][DIM], x[DIM];
      tangent_point(q, &c, uq, gradU, uT, a, gradA, x);
      /* phi and grad phi of every slot (test functions s, trial function b) */
      real phi[N_B], gradPhi[N_B][DIM];
      for (int s = 0; s < N_B; ++s) {
        phi[s] = Basis[TAB_PHI(q, s, N_B)];
        physical_gradient(q, s, &c, gradPhi[s]);
      }
      const real wdet = QuadWeights[q] * c.detJ;
      for (int gc = 0; gc < N_COMP; ++gc) {
        real du[N_COMP], gradDu[N_COMP][DIM], dUT[N_COMP], df0[N_COMP], df1[N_COMP][DIM];
        tangent_direction(gc, phi[b], gradPhi[b], &c, du, gradDu, dUT, df0, df1);
        TANGENT_PHYSICS(uq, gradU, a, gradA, x, k_c, uT, du, gradDu, dUT, df0, df1);
        for (int fc = 0; fc < N_COMP; ++fc) {
          const real f0 = df0[fc] * wdet;
          real f1[DIM];
          for (int d = 0; d < DIM; ++d) f1[d] = df1[fc][d] * wdet;
          for (int s = 0; s < N_B; ++s) {
            real k = f0 * phi[s];
            for (int d = 0; d < DIM; ++d) k += f1[d] * gradPhi[s][d];
            block[s * N_COMP + fc][gc] += k;
          }
        }
      }
    }
    for (int s = 0; s < N_B; ++s) {
#if OUTPUT_ATOMIC
      const uint row = c.nodes[s] * N_COMP;
      const uint rowLen = rowPtr[row + 1] - rowPtr[row];
      const uint p = positions[ELEM_MAT(cell, s, b, N_B)];
#endif
      for (int fc = 0; fc < N_COMP; ++fc)
        for (int gc = 0; gc < N_COMP; ++gc) {
#if OUTPUT_ATOMIC
          atomic_add_real(&out[p + fc * rowLen + gc], block[s * N_COMP + fc][gc]);
#else
          out[ELEM_MAT(cell, s * N_COMP + fc, b * N_COMP + gc, N_BT)] = block[s * N_COMP + fc][gc];
#endif
        }
    }
  }
}

#if !OUTPUT_ATOMIC
__kernel void sum_element_matrices(__global const real *restrict elemMat,  /* [cell][i][j]   */
                                   __global const uint *restrict offsets,  /* [node + 1]     */
                                   __global const uint *restrict slots,    /* [slot]         */
                                   __global const uint *restrict positions, /* [cell][a][b]  */
                                   __global const uint *restrict rowPtr,   /* [row + 1]      */
                                   __global real *restrict values,         /* [nnz]          */
                                   const int nRows)
{
  const int row = get_global_id(0);
  if (row >= nRows) return;
  const uint node = (uint)row / N_COMP, fc = (uint)row % N_COMP;
  const uint start = rowPtr[row], rowLen = rowPtr[row + 1] - start;
  for (uint k = start; k < start + rowLen; ++k) values[k] = (real)0;
  /* the node's first row holds the positions; this row is fc rows further */
  const uint shift = fc * rowLen;
  const uint end = offsets[node + 1];
  for (uint t = offsets[node]; t < end; ++t) {
    const uint cell = slots[t] / N_B, a = slots[t] % N_B;
    for (int b = 0; b < N_B; ++b) {
      const uint p = positions[ELEM_MAT(cell, a, b, N_B)] + shift;
      for (int gc = 0; gc < N_COMP; ++gc)
        values[p + gc] += elemMat[ELEM_MAT(cell, a * N_COMP + fc, b * N_COMP + gc, N_BT)];
    }
  }
}
#endif
