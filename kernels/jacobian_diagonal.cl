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
 * native integrator computes them; an affine physics (AFFINE) is
 * differentiated at u = 0 (its tangent does not depend on u, so u is not
 * read). Each block is added into out[node][fc][gc] with atomic_add_real.
 *
 * The host prepends: real, DIM, N_B, N_COMP, N_Q, N_AUX, N_AUX_ALLOC,
 * AUX_FIELD, AUX_CELL, N_CONSTANTS, N_CONSTANTS_ALLOC, AFFINE,
 * atomic_add_real, the layout macros, the tabulation (Basis,
 * BasisDerivatives, QuadWeights, QuadPoints), the physics and
 * TANGENT_PHYSICS, READS_U_T, TIME_PARAMS, TIME_T (the time state
 * u_t = sigma*u + b of a physics that reads u_t or t: b read at the cell's
 * nodes from timeB, u_t formed at each point, the direction du_t =
 * sigma*du) (see femquad/src/opencl/source.rs). Geometry is read per
 * cell (J^{-1}, det J).
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

  /* The cell's nodes, coefficients, geometry and vertices */
  uint nodes[N_B];
  real uc[N_B][N_COMP];
  for (int b = 0; b < N_B; ++b) {
    nodes[b] = cellNodes[CELL_NODE(cell, b, N_B)];
#if !AFFINE
    for (int comp = 0; comp < N_COMP; ++comp) uc[b][comp] = u[GLOBAL_DOF(nodes[b], comp, N_COMP)];
#endif
  }
#if READS_U_T && !AFFINE
  /* b of the time state u_t = sigma*u + b at the cell's nodes */
  real bc[N_B][N_COMP];
  for (int b = 0; b < N_B; ++b)
    for (int comp = 0; comp < N_COMP; ++comp) bc[b][comp] = timeB[GLOBAL_DOF(nodes[b], comp, N_COMP)];
#endif
#if AUX_FIELD
  real ac[N_B][N_AUX_ALLOC];
  for (int b = 0; b < N_B; ++b)
    for (int k = 0; k < N_AUX; ++k) ac[b][k] = aux[GLOBAL_DOF(nodes[b], k, N_AUX)];
#endif
  real invJ[DIM * DIM];
  for (int k = 0; k < DIM * DIM; ++k) invJ[k] = jacobianInverses[INV_J(cell, 0, 0, DIM) + k];
  const real detJ = jacobianDeterminants[cell];
  real xv[DIM + 1][DIM];
  for (int v = 0; v <= DIM; ++v)
    for (int d = 0; d < DIM; ++d) xv[v][d] = coordinates[VERTEX_COORD(nodes[v], d, DIM)];

  /* Node slot by node slot: the block B_b[fc][gc] is J applied to the
   * direction phi_b e_gc (du = phi_b e_gc, grad du = grad phi_b e_gc), tested
   * with phi_b e_fc: N_COMP tangents per point, one block in registers. */
  for (int b = 0; b < N_B; ++b) {
    real block[N_COMP][N_COMP];
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc) block[fc][gc] = (real)0;
    for (int q = 0; q < N_Q; ++q) {
      /* u, grad u (and a, grad a) at the point, as natively; not for an
       * affine physics, whose tangent is the same at every u */
      real uq[N_COMP], gradU[N_COMP][DIM];
      for (int comp = 0; comp < N_COMP; ++comp) {
        real val = (real)0, ref[DIM];
        for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
#if !AFFINE
        for (int bb = 0; bb < N_B; ++bb) {
          val += Basis[TAB_PHI(q, bb, N_B)] * uc[bb][comp];
          for (int e = 0; e < DIM; ++e) ref[e] += BasisDerivatives[TAB_DPHI(q, bb, e, N_B, DIM)] * uc[bb][comp];
        }
#endif
        uq[comp] = val;
        for (int d = 0; d < DIM; ++d) {
          real g = (real)0;
          for (int e = 0; e < DIM; ++e) g += ref[e] * invJ[INV_J(0, e, d, DIM)];
          gradU[comp][d] = g;
        }
      }
      /* u_t = sigma*u + b as natively (an affine physics' tangent does not
       * depend on it: zeros, like u) */
      real uT[N_COMP];
      for (int comp = 0; comp < N_COMP; ++comp) {
        real bq = (real)0;
#if READS_U_T && !AFFINE
        for (int bb = 0; bb < N_B; ++bb) bq += Basis[TAB_PHI(q, bb, N_B)] * bc[bb][comp];
        uT[comp] = sigma * uq[comp] + bq;
#else
        uT[comp] = bq;
#endif
      }
      real a[N_AUX_ALLOC], gradA[N_AUX_ALLOC][DIM];
      for (int k = 0; k < N_AUX_ALLOC; ++k) {
        a[k] = (real)0;
        for (int d = 0; d < DIM; ++d) gradA[k][d] = (real)0;
      }
#if AUX_FIELD
      for (int k = 0; k < N_AUX; ++k) {
        real val = (real)0, ref[DIM];
        for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
        for (int bb = 0; bb < N_B; ++bb) {
          val += Basis[TAB_PHI(q, bb, N_B)] * ac[bb][k];
          for (int e = 0; e < DIM; ++e) ref[e] += BasisDerivatives[TAB_DPHI(q, bb, e, N_B, DIM)] * ac[bb][k];
        }
        a[k] = val;
        for (int d = 0; d < DIM; ++d) {
          real g = (real)0;
          for (int e = 0; e < DIM; ++e) g += ref[e] * invJ[INV_J(0, e, d, DIM)];
          gradA[k][d] = g;
        }
      }
#elif AUX_CELL
      for (int k = 0; k < N_AUX; ++k) a[k] = aux[cell * N_AUX + k];
#endif
      /* x = X_0 + sum_e xi_e (X_{e+1} - X_0) */
      real x[DIM];
      for (int d = 0; d < DIM; ++d) {
        real xd = xv[0][d];
        for (int e = 0; e < DIM; ++e) xd += QuadPoints[q * DIM + e] * (xv[e + 1][d] - xv[0][d]);
        x[d] = xd;
      }
      /* phi_b and its physical gradient sum_e dphi_b/dxi_e J^{-1}[e][d] */
      const real phi = Basis[TAB_PHI(q, b, N_B)];
      real gradPhi[DIM];
      for (int d = 0; d < DIM; ++d) {
        real g = (real)0;
        for (int e = 0; e < DIM; ++e) g += BasisDerivatives[TAB_DPHI(q, b, e, N_B, DIM)] * invJ[INV_J(0, e, d, DIM)];
        gradPhi[d] = g;
      }
      const real wdet = QuadWeights[q] * detJ;
      for (int gc = 0; gc < N_COMP; ++gc) {
        real du[N_COMP], gradDu[N_COMP][DIM], dUT[N_COMP], df0[N_COMP], df1[N_COMP][DIM];
        for (int comp = 0; comp < N_COMP; ++comp) {
          du[comp] = comp == gc ? phi : (real)0;
#if READS_U_T
          dUT[comp] = sigma * du[comp]; /* the direction of u_t = sigma*u + b */
#else
          dUT[comp] = (real)0;
#endif
          df0[comp] = (real)0;
          for (int d = 0; d < DIM; ++d) {
            gradDu[comp][d] = comp == gc ? gradPhi[d] : (real)0;
            df1[comp][d] = (real)0;
          }
        }
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
        atomic_add_real(&out[(nodes[b] * N_COMP + fc) * N_COMP + gc], block[fc][gc]);
  }
}
