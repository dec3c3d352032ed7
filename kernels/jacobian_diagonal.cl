/*
 * femquad: the point-block diagonal of the Jacobian J(u), without
 * assembling J. One work-item per cell:
 *
 *   D[node(c, b)][fc][gc] += sum_q w_q detJ_c ( v0 phi_b + v1 . grad phi_b ),
 *   v0     = phi_b g0[fc][gc] + sum_df grad phi_b[df] g2[fc][gc][df],
 *   v1[dg] = phi_b g1[fc][gc][dg] + sum_df grad phi_b[df] g3[fc][gc][df][dg],
 *
 * the diagonal blocks (a = b) of the element matrices of
 * femquad/src/sparse/element.rs, in the same order of operations, with the
 * pointwise Jacobians g0..g3 (PETSc's meaning; layouts JAC_G0..JAC_G3 of
 * femquad/src/layout.rs) from JACOBIAN_PHYSICS at u, grad u, a, grad a, x
 * computed as the native integrator computes them. Each cell's blocks are
 * added into out[node][fc][gc] with atomic_add_real.
 *
 * The host prepends: real, DIM, N_B, N_COMP, N_Q, N_AUX, N_AUX_ALLOC,
 * AUX_FIELD, AUX_CELL, N_CONSTANTS, N_CONSTANTS_ALLOC, atomic_add_real, the
 * layout macros, the tabulation (Basis, BasisDerivatives, QuadWeights,
 * QuadPoints), the physics and JACOBIAN_PHYSICS (see
 * femquad/src/opencl/source.rs). Geometry is read per cell (J^{-1}, det J).
 */

__kernel void jacobian_diagonal(__global const real *restrict u,          /* [node][comp]          */
                                __global const uint *restrict cellNodes,  /* [cell][b]             */
                                __global const real *restrict aux,        /* field: [node][k]; P0: [cell][k] */
                                __global const real *restrict jacobianInverses,     /* [cell][e][d] */
                                __global const real *restrict jacobianDeterminants, /* [cell]       */
                                __global const real *restrict coordinates, /* [vertex][d]          */
                                __constant real *constants,               /* [N_CONSTANTS]         */
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
    for (int comp = 0; comp < N_COMP; ++comp) uc[b][comp] = u[GLOBAL_DOF(nodes[b], comp, N_COMP)];
  }
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

  real blocks[N_B][N_COMP][N_COMP];
  for (int b = 0; b < N_B; ++b)
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc) blocks[b][fc][gc] = (real)0;

  for (int q = 0; q < N_Q; ++q) {
    /* Physical basis gradients grad phi_b[d] = sum_e dphi_b/dxi_e J^{-1}[e][d] */
    real gradPhi[N_B][DIM];
    for (int b = 0; b < N_B; ++b)
      for (int d = 0; d < DIM; ++d) {
        real g = (real)0;
        for (int e = 0; e < DIM; ++e) g += BasisDerivatives[TAB_DPHI(q, b, e, N_B, DIM)] * invJ[INV_J(0, e, d, DIM)];
        gradPhi[b][d] = g;
      }

    /* u, grad u (and a, grad a) at the point, as natively */
    real uq[N_COMP], gradU[N_COMP][DIM];
    for (int comp = 0; comp < N_COMP; ++comp) {
      real val = (real)0, ref[DIM];
      for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
      for (int b = 0; b < N_B; ++b) {
        val += Basis[TAB_PHI(q, b, N_B)] * uc[b][comp];
        for (int e = 0; e < DIM; ++e) ref[e] += BasisDerivatives[TAB_DPHI(q, b, e, N_B, DIM)] * uc[b][comp];
      }
      uq[comp] = val;
      for (int d = 0; d < DIM; ++d) {
        real g = (real)0;
        for (int e = 0; e < DIM; ++e) g += ref[e] * invJ[INV_J(0, e, d, DIM)];
        gradU[comp][d] = g;
      }
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
      for (int b = 0; b < N_B; ++b) {
        val += Basis[TAB_PHI(q, b, N_B)] * ac[b][k];
        for (int e = 0; e < DIM; ++e) ref[e] += BasisDerivatives[TAB_DPHI(q, b, e, N_B, DIM)] * ac[b][k];
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

    real g0[N_COMP * N_COMP], g1[N_COMP * N_COMP * DIM], g2[N_COMP * N_COMP * DIM],
        g3[N_COMP * N_COMP * DIM * DIM];
    JACOBIAN_PHYSICS(uq, gradU, a, gradA, x, k_c, g0, g1, g2, g3);

    const real wdet = QuadWeights[q] * detJ;
    for (int b = 0; b < N_B; ++b) {
      const real phi = Basis[TAB_PHI(q, b, N_B)];
      for (int fc = 0; fc < N_COMP; ++fc)
        for (int gc = 0; gc < N_COMP; ++gc) {
          real v0 = phi * g0[JAC_G0(fc, gc, N_COMP)];
          for (int df = 0; df < DIM; ++df) v0 += gradPhi[b][df] * g2[JAC_G2(fc, gc, df, N_COMP, DIM)];
          real k = (v0 * wdet) * phi;
          for (int dg = 0; dg < DIM; ++dg) {
            real v1 = phi * g1[JAC_G1(fc, gc, dg, N_COMP, DIM)];
            for (int df = 0; df < DIM; ++df) v1 += gradPhi[b][df] * g3[JAC_G3(fc, gc, df, dg, N_COMP, DIM)];
            k += (v1 * wdet) * gradPhi[b][dg];
          }
          blocks[b][fc][gc] += k;
        }
    }
  }

  for (int b = 0; b < N_B; ++b)
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc)
        atomic_add_real(&out[(nodes[b] * N_COMP + fc) * N_COMP + gc], blocks[b][fc][gc]);
}
