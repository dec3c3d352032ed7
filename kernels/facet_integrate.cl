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
 *                  kernels/jacobian_diagonal.cl adds the cells');
 *   facet_matrices: one work-item per facet: the facet's whole element
 *                  matrix, the same tangent columns with every row, added
 *                  into the values of a CSR matrix that holds the cells'
 *                  (OUTPUT_ATOMIC, atomic_add_real, at the positions of
 *                  the facet's cell in the map of kernels/element_matrix.cl)
 *                  or written out per facet;
 *   facet_sum_matrices: (deterministic assembly) one work-item per row of
 *                  a node of the set: adds the facet matrices' rows, in
 *                  the fixed order of facet_sum's incidence, into the CSR
 *                  values — bitwise reproducible.
 *
 * The tangent kernels share what they read of the facet's cell
 * (load_facet_cell), form at a point (facet_tangent_point) and evaluate
 * per column (b, gc) of the element matrix (facet_tangent_column).
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
 * global vector b; sigma; time) after the count of facet_points,
 * facet_diagonal and facet_matrices; with READS_U_T the kernels gather b on the facet's cell
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
/* What the tangent kernels (facet_diagonal, facet_matrices) read of a
 * facet's cell, once per facet: the local facet, J^{-1}, the normal, the
 * cell's nodes and u there (with READS_U_T, sigma and b there). */
typedef struct {
  uint lf;
  real invJ[DIM * DIM];
  real n[DIM];
  uint nodes[N_B];
  real uc[N_B][N_COMP];
#if READS_U_T
  real sigma;              /* u_t = sigma*u + b */
  real bc[N_B][N_COMP];
#endif
} FacetCell;

void load_facet_cell(const int facet,
                     __global const real *restrict u,            /* [node][comp]  */
                     __global const uint *restrict facetNodes,   /* [facet][b]    */
                     __global const uint *restrict facetLocal,   /* [facet]       */
                     __global const real *restrict invJacobians, /* [facet][e][d] */
                     __global const real *restrict normals,      /* [facet][d]    */
#if READS_U_T
                     __global const real *restrict timeB,        /* [node][comp]  */
                     const real sigma,
#endif
                     FacetCell *c)
{
  c->lf = facetLocal[facet];
  for (int k = 0; k < DIM * DIM; ++k) c->invJ[k] = invJacobians[facet * DIM * DIM + k];
  for (int d = 0; d < DIM; ++d) c->n[d] = normals[facet * DIM + d];
#if READS_U_T
  c->sigma = sigma;
#endif
  for (int b = 0; b < N_B; ++b) {
    c->nodes[b] = facetNodes[facet * N_B + b];
    for (int comp = 0; comp < N_COMP; ++comp) {
      c->uc[b][comp] = u[GLOBAL_DOF(c->nodes[b], comp, N_COMP)];
#if READS_U_T
      c->bc[b][comp] = timeB[GLOBAL_DOF(c->nodes[b], comp, N_COMP)];
#endif
    }
  }
}

/* At point q of the facet: grad phi_b (physical), x, u, grad u, u_t */
void facet_tangent_point(const int facet, const int q, const FacetCell *c,
                         __global const real *restrict points, /* [facet][q][d] */
                         real g[N_B][DIM], real x[DIM], real uq[N_COMP], real gradU[N_COMP][DIM],
                         real ut[N_COMP])
{
  facet_grad_phi(c->lf, q, c->invJ, g);
  for (int d = 0; d < DIM; ++d) x[d] = points[(facet * N_FQ + q) * DIM + d];
  facet_field(c->lf, q, c->uc, g, uq, gradU);
#if READS_U_T
  facet_u_t(c->lf, q, c->sigma, uq, c->bc, ut);
#else
  for (int comp = 0; comp < N_COMP; ++comp) ut[comp] = (real)0;
#endif
}

/* df0 at point q along the column (b, gc): the boundary tangent in the
 * direction du = phi_b e_gc, grad du = grad phi_b e_gc, du_t = sigma du
 * (zero without READS_U_T) — the step Jacobian sigma df0/du_t + df0/du —
 * at the time `time` (the kernel's TIME_T, which the physics reads by
 * that name) */
void facet_tangent_column(const int q, const int b, const int gc, const FacetCell *c,
                          const real g[N_B][DIM], const real x[DIM], const real uq[N_COMP],
                          const real gradU[N_COMP][DIM], const real ut[N_COMP],
                          const real k_c[N_CONSTANTS_ALLOC], const real time, real df0[N_COMP])
{
  real du[N_COMP], dgu[N_COMP][DIM], dut[N_COMP];
  for (int comp = 0; comp < N_COMP; ++comp) {
    du[comp] = comp == gc ? FACET_PHI(c->lf, q, b) : (real)0;
    for (int d = 0; d < DIM; ++d) dgu[comp][d] = comp == gc ? g[b][d] : (real)0;
#if READS_U_T
    dut[comp] = c->sigma * du[comp];
#else
    dut[comp] = (real)0;
#endif
    df0[comp] = (real)0;
  }
  FACET_TANGENT(uq, gradU, x, k_c, c->n, ut, du, dgu, dut, df0);
}

#if READS_U_T
#define LOAD_FACET_CELL(facet, c) \
  load_facet_cell(facet, u, facetNodes, facetLocal, invJacobians, normals, timeB, sigma, c)
#else
#define LOAD_FACET_CELL(facet, c) \
  load_facet_cell(facet, u, facetNodes, facetLocal, invJacobians, normals, c)
#endif

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
  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];
  FacetCell c;
  LOAD_FACET_CELL(facet, &c);
  for (int b = 0; b < N_B; ++b) {
    real block[N_COMP][N_COMP];
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc) block[fc][gc] = (real)0;
    for (int q = 0; q < N_FQ; ++q) {
      real g[N_B][DIM], x[DIM], uq[N_COMP], gradU[N_COMP][DIM], ut[N_COMP];
      facet_tangent_point(facet, q, &c, points, g, x, uq, gradU, ut);
      const real wb = weights[facet * N_FQ + q] * FACET_PHI(c.lf, q, b);
      for (int gc = 0; gc < N_COMP; ++gc) {
        real df0[N_COMP];
        facet_tangent_column(q, b, gc, &c, g, x, uq, gradU, ut, k_c, TIME_T, df0);
        for (int fc = 0; fc < N_COMP; ++fc) block[fc][gc] += wb * df0[fc];
      }
    }
    for (int fc = 0; fc < N_COMP; ++fc)
      for (int gc = 0; gc < N_COMP; ++gc)
        atomic_add_real(&out[(c.nodes[b] * N_COMP + fc) * N_COMP + gc], block[fc][gc]);
  }
}

#define N_BT (N_B * N_COMP)

/* facet_matrices: one work-item per facet: its element matrix
 *
 *   K_F[a N_COMP + fc][b N_COMP + gc] = sum_q W_q phi_a(xi_q) df0_fc(q; b, gc)
 *
 * (df0 of facet_tangent_column: facet_diagonal's tangent, every row),
 * column block by column block. Entry (a fc, b gc) belongs at
 * positions[ELEM_MAT(facetCells[facet], a, b, N_B)] + fc*rowLen + gc in the
 * CSR values — the position map of the facet's cell (the cells' map of
 * kernels/element_matrix.cl: the facet's slots are its cell's), rowLen the
 * length of row node_a*N_COMP:
 *
 *   OUTPUT_ATOMIC = 1: added there with atomic_add_real (after the cells');
 *   OUTPUT_ATOMIC = 0: written to facetMatrices[ELEM_MAT(facet, i, j, N_BT)]
 *                      for facet_sum_matrices. */
__kernel void facet_matrices(__global const real *restrict u,            /* [node][comp]   */
                             __global const uint *restrict facetNodes,   /* [facet][b]     */
                             __global const uint *restrict facetLocal,   /* [facet]        */
                             __global const real *restrict invJacobians, /* [facet][e][d]  */
                             __global const real *restrict normals,      /* [facet][d]     */
                             __global const real *restrict points,       /* [facet][q][d]  */
                             __global const real *restrict weights,      /* [facet][q]     */
                             __constant real *constants,                 /* [N_CONSTANTS]  */
                             __global const uint *restrict facetCells,   /* [facet]        */
                             __global const uint *restrict positions,    /* [cell][a][b]   */
                             __global const uint *restrict rowPtr,       /* [row + 1]      */
                             __global real *restrict out,    /* atomic: values [nnz]; else [facet][i][j] */
                             const int nFacets TIME_PARAMS)
{
  const int facet = get_global_id(0);
  if (facet >= nFacets) return;
  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];
  FacetCell c;
  LOAD_FACET_CELL(facet, &c);
  for (int b = 0; b < N_B; ++b) {
    real block[N_BT][N_COMP];
    for (int i = 0; i < N_BT; ++i)
      for (int gc = 0; gc < N_COMP; ++gc) block[i][gc] = (real)0;
    for (int q = 0; q < N_FQ; ++q) {
      real g[N_B][DIM], x[DIM], uq[N_COMP], gradU[N_COMP][DIM], ut[N_COMP];
      facet_tangent_point(facet, q, &c, points, g, x, uq, gradU, ut);
      const real w = weights[facet * N_FQ + q];
      for (int gc = 0; gc < N_COMP; ++gc) {
        real df0[N_COMP];
        facet_tangent_column(q, b, gc, &c, g, x, uq, gradU, ut, k_c, TIME_T, df0);
        for (int a = 0; a < N_B; ++a) {
          const real wa = w * FACET_PHI(c.lf, q, a);
          for (int fc = 0; fc < N_COMP; ++fc) block[a * N_COMP + fc][gc] += wa * df0[fc];
        }
      }
    }
    for (int a = 0; a < N_B; ++a) {
#if OUTPUT_ATOMIC
      const uint row = c.nodes[a] * N_COMP;
      const uint rowLen = rowPtr[row + 1] - rowPtr[row];
      const uint p = positions[ELEM_MAT(facetCells[facet], a, b, N_B)];
#endif
      for (int fc = 0; fc < N_COMP; ++fc)
        for (int gc = 0; gc < N_COMP; ++gc) {
#if OUTPUT_ATOMIC
          atomic_add_real(&out[p + fc * rowLen + gc], block[a * N_COMP + fc][gc]);
#else
          out[ELEM_MAT(facet, a * N_COMP + fc, b * N_COMP + gc, N_BT)] = block[a * N_COMP + fc][gc];
#endif
        }
    }
  }
}

/* facet_sum_matrices (deterministic assembly): one work-item per row
 * r = node*N_COMP + fc of a node of the set (k = r / N_COMP): for each of
 * the node's slots facet*N_B + a in the fixed order of facet_sum's
 * incidence, row fc of slot a of the facet matrix is added into the
 * values (holding the cells' sum) at its positions — bitwise the same on
 * every run. */
__kernel void facet_sum_matrices(__global const real *restrict facetMatrices, /* [facet][i][j] */
                                 __global const uint *restrict nodes,     /* the set's nodes     */
                                 __global const uint *restrict offsets,   /* [k]..[k+1]: slots   */
                                 __global const uint *restrict slots,     /* facet * N_B + a     */
                                 __global const uint *restrict facetCells, /* [facet]            */
                                 __global const uint *restrict positions, /* [cell][a][b]        */
                                 __global const uint *restrict rowPtr,    /* [row + 1]           */
                                 __global real *restrict values,          /* [nnz]               */
                                 const int nRows)
{
  const int r = get_global_id(0);
  if (r >= nRows) return;
  const int k = r / N_COMP, fc = r % N_COMP;
  const uint row = nodes[k] * N_COMP + fc;
  /* the node's first row holds the positions; this row is fc rows further */
  const uint rowLen = rowPtr[row + 1] - rowPtr[row], shift = fc * rowLen;
  for (uint t = offsets[k]; t < offsets[k + 1]; ++t) {
    const uint facet = slots[t] / N_B, a = slots[t] % N_B, cell = facetCells[facet];
    for (int b = 0; b < N_B; ++b) {
      const uint p = positions[ELEM_MAT(cell, a, b, N_B)] + shift;
      for (int gc = 0; gc < N_COMP; ++gc)
        values[p + gc] += facetMatrices[ELEM_MAT(facet, a * N_COMP + fc, b * N_COMP + gc, N_BT)];
    }
  }
}
#endif
