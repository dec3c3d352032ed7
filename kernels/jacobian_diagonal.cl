/*
 * femquad: the point-block diagonal of the Jacobian J(u), without
 * assembling J. One work-item per cell; for each node slot b of the cell
 * the block
 *
 *   D[node(c, b)][fc][gc] += sum_q w_q detJ_c ( df0[fc] phi_b + df1[fc] . grad phi_b ),
 *
 * (df0, df1) = TANGENT_PHYSICS at u, grad u, a, grad a, x in the direction
 * du = phi_b e_gc, grad du = grad phi_b e_gc: the diagonal blocks (a = b)
 * of the element matrices of femquad/src/sparse/element.rs, column by
 * column, from the physics' tangent (N_COMP tangents per point and slot;
 * one 3x3 block in registers, where the pointwise Jacobians g0..g3 of 3D
 * elasticity are 144 reals). u, grad u, a, grad a, x are computed as the
 * native integrator computes them (kernels/tangent_point.cl: the cell's
 * state, the point's, the direction); an affine physics (AFFINE) is
 * differentiated at u = 0 (its tangent does not depend on u, so u is not
 * read). Each block is added into out[node][fc][gc] with atomic_add_real.
 *
 * The host prepends: real, DIM, N_B, N_COMP, N_Q, N_AUX, N_AUX_ALLOC,
 * AUX_FIELD, AUX_CELL, N_CONSTANTS, N_CONSTANTS_ALLOC, AFFINE,
 * atomic_add_real, the layout macros, the tabulation (Basis,
 * BasisDerivatives, QuadWeights, QuadPoints), the physics and
 * TANGENT_PHYSICS, READS_U_T, TIME_PARAMS, TIME_T (the time state
 * u_t = sigma*u + b of a physics that reads u_t or t) and
 * kernels/tangent_point.cl (see femquad/src/opencl/source.rs). Geometry is
 * read per cell (J^{-1}, det J).
 */

__kernel void jacobian_diagonal(__global const real *restrict u,          /* [node][comp]          */
                                __global const uint *restrict cellNodes,  /* [cell][b]             */
                                __global const real *restrict aux,        /* field: [node][k]; P0: [cell][k] */
                                __global const real *restrict jacobianInverses,     /* [cell][e][d] */
                                __global const real *restrict jacobianDeterminants, /* [cell]       */
                                __global const real *restrict coordinates, /* [vertex][d]          */
                                __constant real *constants                /* [N_CONSTANTS]         */
                                TIME_PARAMS,                              /* READS_U_T or t: b, sigma, t */
                                __global real *restrict out,              /* [node][fc][gc]        */
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

  /* Node slot by node slot: the block B_b[fc][gc] is J applied to the
   * direction phi_b e_gc (du = phi_b e_gc, grad du = grad phi_b e_gc), tested
   * with phi_b e_fc: N_COMP tangents per point, one block in registers. */
  for (int b = 0; b < N_B; ++b) {
    real block[N_COMP][N_COMP];
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc) block[fc][gc] = (real)0;
    for (int q = 0; q < N_Q; ++q) {
      real uq[N_COMP], gradU[N_COMP][DIM], uT[N_COMP], a[N_AUX_ALLOC], gradA[N_AUX_ALLOC][DIM], x[DIM];
      tangent_point(q, &c, uq, gradU, uT, a, gradA, x);
      const real phi = Basis[TAB_PHI(q, b, N_B)];
      real gradPhi[DIM];
      physical_gradient(q, b, &c, gradPhi);
      const real wdet = QuadWeights[q] * c.detJ;
      for (int gc = 0; gc < N_COMP; ++gc) {
        real du[N_COMP], gradDu[N_COMP][DIM], dUT[N_COMP], df0[N_COMP], df1[N_COMP][DIM];
        tangent_direction(gc, phi, gradPhi, &c, du, gradDu, dUT, df0, df1);
        TANGENT_PHYSICS(uq, gradU, a, gradA, x, k_c, uT, du, gradDu, dUT, df0, df1);
        for (int fc = 0; fc < N_COMP; ++fc) {
          real k = (df0[fc] * wdet) * phi;
          for (int d = 0; d < DIM; ++d) k += (df1[fc][d] * wdet) * gradPhi[d];
          block[fc][gc] += k;
        }
      }
    }
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc)
        atomic_add_real(&out[(c.nodes[b] * N_COMP + fc) * N_COMP + gc], block[fc][gc]);
  }
}
