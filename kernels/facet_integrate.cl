/*
 * femquad: a boundary term of a form on the device,
 *
 *   F[node(c_F, b)][comp] += sum_q w_q |F|/|F^| phi_b(xi_q) f0_comp(u_q, grad u_q, x_q, n_F; c),
 *
 * over the facets F of a facet set (each a facet of one cell c_F), in the
 * transposition style with facets as cells of one dimension less:
 *
 *   facet_points:  one work-item per facet quadrature point: gathers u (and
 *                  the direction v for TANGENT) on the facet's cell, computes
 *                  u, grad u (v, grad v) at the point with the facet
 *                  tabulation and the cell's J^{-1}, evaluates the boundary
 *                  physics (its tangent), and stores the weighted values
 *                  W_q f0(q) in pointValues[facet][q][comp];
 *   facet_scatter: one work-item per (facet, basis function b): sums
 *                  phi_b(xi_q) W_q f0(q) over the points and adds it into
 *                  out (OUTPUT_ATOMIC, atomic_add_real) or writes it into
 *                  facetVectors[facet][b][comp];
 *   facet_sum:     (deterministic assembly) one work-item per node of the
 *                  set: adds its facet-vector entries, in the fixed order of
 *                  the host's incidence list, into out — bitwise
 *                  reproducible;
 *   facet_diagonal: one work-item per facet: the diagonal blocks of the
 *                  facet's element matrix, column by column from the
 *                  tangent along (phi_b e_gc, grad phi_b e_gc), added
 *                  atomically into out[node][fc][gc] (as
 *                  kernels/jacobian_diagonal.cl adds the cells').
 *
 * Facet geometry is stored per point (x_q, W_q = w_q |F|/|F^|) and per
 * facet (n_F, the cell's J^{-1}, the local facet index `lf` selecting the rows
 * of the tabulation). The host prepends: real, DIM, N_B, N_COMP, N_FQ (points
 * per facet), N_CONSTANTS, N_CONSTANTS_ALLOC, TANGENT, OUTPUT_ATOMIC,
 * atomic_add_real (kernels/atomic_add.cl), the layout macros, the facet
 * tabulation FacetBasis[(lf N_FQ + q) N_B + b] (lf the local facet) and
 * FacetBasisDerivatives[((lf N_FQ + q) N_B + b) DIM + e], the physics and
 * FACET_PHYSICS / FACET_TANGENT (femquad/src/opencl/source.rs).
 *
 * Time state (as the cell kernels', see define_time_state in source.rs): a
 * physics that reads u_t or t gets the parameters TIME_PARAMS (timeB, the
 * global vector b; sigma; time) after the count of facet_points and
 * facet_diagonal; with READS_U_T the kernels gather b on the facet's cell
 * and pass u_t = sigma u_q + b_q and the direction du_t = sigma du (the step
 * Jacobian sigma dF/du_t + dF/du), else zeros; the physics sees TIME_T.
 */

#define FACET_PHI(lf, q, b) FacetBasis[((lf) * N_FQ + (q)) * N_B + (b)]
#define FACET_DPHI(lf, q, b, e) FacetBasisDerivatives[(((lf) * N_FQ + (q)) * N_B + (b)) * DIM + (e)]

/* grad phi_b at point q of local facet `lf`, in physical coordinates */
void facet_grad_phi(const uint lf, const int q, const real invJ[DIM * DIM], real g[N_B][DIM]) {
  for (int b = 0; b < N_B; ++b)
    for (int d = 0; d < DIM; ++d) {
      real s = (real)0;
      for (int e = 0; e < DIM; ++e) s += FACET_DPHI(lf, q, b, e) * invJ[e * DIM + d];
      g[b][d] = s;
    }
}

/* value and gradient at point q of the field with cell coefficients c */
void facet_field(const uint lf, const int q, const real c[N_B][N_COMP], const real g[N_B][DIM],
                 real val[N_COMP], real grad[N_COMP][DIM]) {
  for (int comp = 0; comp < N_COMP; ++comp) {
    real v = (real)0;
    for (int d = 0; d < DIM; ++d) grad[comp][d] = (real)0;
    for (int b = 0; b < N_B; ++b) {
      v += FACET_PHI(lf, q, b) * c[b][comp];
      for (int d = 0; d < DIM; ++d) grad[comp][d] += g[b][d] * c[b][comp];
    }
    val[comp] = v;
  }
}

#if READS_U_T
/* u_t = sigma u_q + b_q at point q of local facet `lf`, b_q from the cell
 * values bc of the time state's b (summed as u_q is, as natively) */
void facet_u_t(const uint lf, const int q, const real sigma, const real uq[N_COMP],
               const real bc[N_B][N_COMP], real ut[N_COMP]) {
  for (int comp = 0; comp < N_COMP; ++comp) {
    real bq = (real)0;
    for (int b = 0; b < N_B; ++b) bq += FACET_PHI(lf, q, b) * bc[b][comp];
    ut[comp] = sigma * uq[comp] + bq;
  }
}
#endif

__kernel void facet_points(__global const real *restrict u,            /* [node][comp]         */
                           __global const real *restrict v,            /* [node][comp] (TANGENT) */
                           __global const uint *restrict facetNodes,   /* [facet][b]           */
                           __global const uint *restrict facetLocal,   /* [facet]              */
                           __global const real *restrict invJacobians, /* [facet][e][d]        */
                           __global const real *restrict normals,      /* [facet][d]           */
                           __global const real *restrict points,       /* [facet][q][d]        */
                           __global const real *restrict weights,      /* [facet][q]           */
                           __constant real *constants,                 /* [N_CONSTANTS]        */
                           __global real *restrict pointValues,        /* [facet][q][comp]     */
                           const int nPoints TIME_PARAMS)
{
  const int p = get_global_id(0);
  if (p >= nPoints) return;
  const int facet = p / N_FQ, q = p % N_FQ;
  const uint lf = facetLocal[facet];

  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];
  real invJ[DIM * DIM];
  for (int k = 0; k < DIM * DIM; ++k) invJ[k] = invJacobians[facet * DIM * DIM + k];
  real n[DIM], x[DIM];
  for (int d = 0; d < DIM; ++d) {
    n[d] = normals[facet * DIM + d];
    x[d] = points[p * DIM + d];
  }
  real uc[N_B][N_COMP];
#if TANGENT
  real vc[N_B][N_COMP];
#endif
#if READS_U_T
  real bc[N_B][N_COMP];
#endif
  for (int b = 0; b < N_B; ++b) {
    const uint node = facetNodes[facet * N_B + b];
    for (int comp = 0; comp < N_COMP; ++comp) {
      uc[b][comp] = u[GLOBAL_DOF(node, comp, N_COMP)];
#if TANGENT
      vc[b][comp] = v[GLOBAL_DOF(node, comp, N_COMP)];
#endif
#if READS_U_T
      bc[b][comp] = timeB[GLOBAL_DOF(node, comp, N_COMP)];
#endif
    }
  }
  real g[N_B][DIM];
  facet_grad_phi(lf, q, invJ, g);
  real uq[N_COMP], gradU[N_COMP][DIM], f0[N_COMP], ut[N_COMP];
  facet_field(lf, q, uc, g, uq, gradU);
  for (int comp = 0; comp < N_COMP; ++comp) f0[comp] = (real)0;
#if READS_U_T
  facet_u_t(lf, q, sigma, uq, bc, ut);
#else
  for (int comp = 0; comp < N_COMP; ++comp) ut[comp] = (real)0;
#endif
#if TANGENT
  real vq[N_COMP], gradV[N_COMP][DIM], dut[N_COMP];
  facet_field(lf, q, vc, g, vq, gradV);
  for (int comp = 0; comp < N_COMP; ++comp)
#if READS_U_T
    dut[comp] = sigma * vq[comp];
#else
    dut[comp] = (real)0;
#endif
  FACET_TANGENT(uq, gradU, x, k_c, n, ut, vq, gradV, dut, f0);
#else
  FACET_PHYSICS(uq, gradU, x, k_c, n, ut, f0);
#endif
  const real w = weights[p];
  for (int comp = 0; comp < N_COMP; ++comp) pointValues[p * N_COMP + comp] = w * f0[comp];
}

__kernel void facet_scatter(__global const real *restrict pointValues, /* [facet][q][comp]     */
                            __global const uint *restrict facetNodes,  /* [facet][b]           */
                            __global const uint *restrict facetLocal,  /* [facet]              */
                            __global real *restrict out,   /* OUTPUT_ATOMIC: [node][comp]; else [facet][b][comp] */
                            const int nFacetBasis)
{
  const int i = get_global_id(0);
  if (i >= nFacetBasis) return;
  const int facet = i / N_B, b = i % N_B;
  const uint lf = facetLocal[facet];
  for (int comp = 0; comp < N_COMP; ++comp) {
    real s = (real)0;
    for (int q = 0; q < N_FQ; ++q)
      s += FACET_PHI(lf, q, b) * pointValues[(facet * N_FQ + q) * N_COMP + comp];
#if OUTPUT_ATOMIC
    atomic_add_real(&out[GLOBAL_DOF(facetNodes[i], comp, N_COMP)], s);
#else
    out[i * N_COMP + comp] = s;
#endif
  }
}

__kernel void facet_sum(__global const real *restrict facetVectors, /* [facet][b][comp]        */
                        __global const uint *restrict nodes,        /* the set's nodes          */
                        __global const uint *restrict offsets,      /* [k]..[k+1]: node k's slots */
                        __global const uint *restrict slots,        /* facet * N_B + b, sorted  */
                        __global real *restrict out,                /* [node][comp]             */
                        const int nNodes)
{
  const int k = get_global_id(0);
  if (k >= nNodes) return;
  const uint node = nodes[k];
  for (int comp = 0; comp < N_COMP; ++comp) {
    real s = (real)0;
    for (uint j = offsets[k]; j < offsets[k + 1]; ++j) s += facetVectors[slots[j] * N_COMP + comp];
    out[GLOBAL_DOF(node, comp, N_COMP)] += s;
  }
}

#if TANGENT
__kernel void facet_diagonal(__global const real *restrict u,            /* [node][comp]      */
                             __global const uint *restrict facetNodes,   /* [facet][b]        */
                             __global const uint *restrict facetLocal,   /* [facet]           */
                             __global const real *restrict invJacobians, /* [facet][e][d]     */
                             __global const real *restrict normals,      /* [facet][d]        */
                             __global const real *restrict points,       /* [facet][q][d]     */
                             __global const real *restrict weights,      /* [facet][q]        */
                             __constant real *constants,                 /* [N_CONSTANTS]     */
                             __global real *restrict out,                /* [node][fc][gc]    */
                             const int nFacets TIME_PARAMS)
{
  const int facet = get_global_id(0);
  if (facet >= nFacets) return;
  const uint lf = facetLocal[facet];
  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];
  real invJ[DIM * DIM];
  for (int k = 0; k < DIM * DIM; ++k) invJ[k] = invJacobians[facet * DIM * DIM + k];
  real n[DIM];
  for (int d = 0; d < DIM; ++d) n[d] = normals[facet * DIM + d];
  uint nodes[N_B];
  real uc[N_B][N_COMP];
#if READS_U_T
  real bc[N_B][N_COMP];
#endif
  for (int b = 0; b < N_B; ++b) {
    nodes[b] = facetNodes[facet * N_B + b];
    for (int comp = 0; comp < N_COMP; ++comp) {
      uc[b][comp] = u[GLOBAL_DOF(nodes[b], comp, N_COMP)];
#if READS_U_T
      bc[b][comp] = timeB[GLOBAL_DOF(nodes[b], comp, N_COMP)];
#endif
    }
  }
  for (int b = 0; b < N_B; ++b) {
    real block[N_COMP][N_COMP];
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc) block[fc][gc] = (real)0;
    for (int q = 0; q < N_FQ; ++q) {
      real g[N_B][DIM], x[DIM];
      facet_grad_phi(lf, q, invJ, g);
      for (int d = 0; d < DIM; ++d) x[d] = points[(facet * N_FQ + q) * DIM + d];
      real uq[N_COMP], gradU[N_COMP][DIM], ut[N_COMP];
      facet_field(lf, q, uc, g, uq, gradU);
#if READS_U_T
      facet_u_t(lf, q, sigma, uq, bc, ut);
#else
      for (int comp = 0; comp < N_COMP; ++comp) ut[comp] = (real)0;
#endif
      const real wb = weights[facet * N_FQ + q] * FACET_PHI(lf, q, b);
      for (int gc = 0; gc < N_COMP; ++gc) {
        real du[N_COMP], dgu[N_COMP][DIM], dut[N_COMP], df0[N_COMP];
        for (int comp = 0; comp < N_COMP; ++comp) {
          du[comp] = comp == gc ? FACET_PHI(lf, q, b) : (real)0;
          for (int d = 0; d < DIM; ++d) dgu[comp][d] = comp == gc ? g[b][d] : (real)0;
#if READS_U_T
          dut[comp] = sigma * du[comp];
#else
          dut[comp] = (real)0;
#endif
          df0[comp] = (real)0;
        }
        FACET_TANGENT(uq, gradU, x, k_c, n, ut, du, dgu, dut, df0);
        for (int fc = 0; fc < N_COMP; ++fc) block[fc][gc] += wb * df0[fc];
      }
    }
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc)
        atomic_add_real(&out[(nodes[b] * N_COMP + fc) * N_COMP + gc], block[fc][gc]);
  }
}
#endif
