/*
 * femquad: the cell and point state of the tangent kernels
 * (kernels/jacobian_diagonal.cl, kernels/element_matrix.cl), one work-item
 * per cell, and of the cell-parallel residual (kernels/integrate_cell.cl).
 * The tangent kernels evaluate the physics' tangent column by column at every
 * quadrature point; what they read of the cell and what they form at a
 * point is here, once:
 *
 *   load_tangent_cell   the cell's nodes, u at its nodes (not for an affine
 *                       physics), b of the time state u_t = sigma*u + b,
 *                       the auxiliary field (nodes), the vertex
 *                       coordinates, then load_cell_data;
 *   load_cell_data      what a cell holds of its own: the auxiliary value
 *                       (P0), J^{-1} and det J (read, or with
 *                       GEOMETRY_COMPUTED computed from the vertices:
 *                       AFFINE_GEOMETRY, kernels/affine_geometry.cl);
 *   tangent_point       u, grad u, u_t, a, grad a and x at quadrature point
 *                       q, as the native integrator computes them (an
 *                       affine physics is differentiated at u = 0, u_t = 0:
 *                       its tangent does not depend on them);
 *   interpolate_nodal   a field at the nodes -> value and gradient at q;
 *   physical_gradient   grad phi_s = sum_e dphi_s/dxi_e J^{-1}[e][d];
 *   tangent_direction   the direction du = phi e_gc, grad du = grad phi e_gc,
 *                       du_t = sigma*du, and zeroed df0, df1.
 *
 * The host prepends (femquad/src/opencl/source.rs): real, DIM, N_B, N_COMP,
 * N_Q, N_AUX, N_AUX_ALLOC, AUX_FIELD, AUX_CELL, AFFINE, READS_U_T, the
 * layout macros and the tabulation (Basis, BasisDerivatives, QuadPoints).
 */

typedef struct {
  uint nodes[N_B];
#if !AFFINE
  real uc[N_B][N_COMP];    /* u at the nodes */
#endif
#if READS_U_T
  real sigma;              /* u_t = sigma*u + b */
#if !AFFINE
  real bc[N_B][N_COMP];    /* b at the nodes */
#endif
#endif
#if AUX_FIELD
  real ac[N_B][N_AUX_ALLOC];
#elif AUX_CELL
  real ac[N_AUX_ALLOC];
#endif
  real invJ[DIM * DIM];
  real detJ;
  real xv[DIM + 1][DIM];   /* vertex coordinates */
} TangentCell;

/* What a cell holds of its own, after its vertex coordinates c->xv: the
 * aux value (AUX_CELL), J^{-1} and det J (read, or with GEOMETRY_COMPUTED
 * computed from the vertices) */
void load_cell_data(const int cell,
                    __global const real *restrict aux,                  /* P0: [cell][k] */
                    __global const real *restrict jacobianInverses,     /* [cell][e][d]  */
                    __global const real *restrict jacobianDeterminants, /* [cell]        */
                    TangentCell *c)
{
#if AUX_CELL
  for (int k = 0; k < N_AUX; ++k) c->ac[k] = aux[cell * N_AUX + k];
#endif
#if GEOMETRY_COMPUTED
  /* J[d][e] = X_{e+1}[d] - X_0[d], det J, J^{-1} (kernels/affine_geometry.cl) */
  real m[DIM * DIM];
  for (int e = 0; e < DIM; ++e)
    for (int d = 0; d < DIM; ++d) m[d * DIM + e] = c->xv[e + 1][d] - c->xv[0][d];
  AFFINE_GEOMETRY(m, c->invJ, c->detJ);
#else
  for (int k = 0; k < DIM * DIM; ++k) c->invJ[k] = jacobianInverses[INV_J(cell, 0, 0, DIM) + k];
  c->detJ = jacobianDeterminants[cell];
#endif
}

void load_tangent_cell(const int cell,
                       __global const real *restrict u,          /* [node][comp]          */
                       __global const uint *restrict cellNodes,  /* [cell][b]             */
                       __global const real *restrict aux,        /* field: [node][k]; P0: [cell][k] */
                       __global const real *restrict jacobianInverses,     /* [cell][e][d] */
                       __global const real *restrict jacobianDeterminants, /* [cell]       */
                       __global const real *restrict coordinates, /* [vertex][d]          */
#if READS_U_T
                       __global const real *restrict timeB,      /* [node][comp]          */
                       const real sigma,
#endif
                       TangentCell *c)
{
  for (int b = 0; b < N_B; ++b) {
    c->nodes[b] = cellNodes[CELL_NODE(cell, b, N_B)];
#if !AFFINE
    for (int comp = 0; comp < N_COMP; ++comp) c->uc[b][comp] = u[GLOBAL_DOF(c->nodes[b], comp, N_COMP)];
#endif
  }
#if READS_U_T
  c->sigma = sigma;
#if !AFFINE
  for (int b = 0; b < N_B; ++b)
    for (int comp = 0; comp < N_COMP; ++comp) c->bc[b][comp] = timeB[GLOBAL_DOF(c->nodes[b], comp, N_COMP)];
#endif
#endif
#if AUX_FIELD
  for (int b = 0; b < N_B; ++b)
    for (int k = 0; k < N_AUX; ++k) c->ac[b][k] = aux[GLOBAL_DOF(c->nodes[b], k, N_AUX)];
#endif
  for (int v = 0; v <= DIM; ++v)
    for (int d = 0; d < DIM; ++d) c->xv[v][d] = coordinates[VERTEX_COORD(c->nodes[v], d, DIM)];
  load_cell_data(cell, aux, jacobianInverses, jacobianDeterminants, c);
}

/* grad phi_s at point q: sum_e dphi_s/dxi_e J^{-1}[e][d] */
void physical_gradient(const int q, const int s, const TangentCell *c, real gradPhi[DIM])
{
  for (int d = 0; d < DIM; ++d) {
    real g = (real)0;
    for (int e = 0; e < DIM; ++e) g += BasisDerivatives[TAB_DPHI(q, s, e, N_B, DIM)] * c->invJ[INV_J(0, e, d, DIM)];
    gradPhi[d] = g;
  }
}

/* A field given at the cell's nodes, coef[b][comp], at point q:
 * val[comp] = sum_b phi_b coef[b][comp] and
 * grad[comp][d] = sum_e (sum_b dphi_b/dxi_e coef[b][comp]) J^{-1}[e][d],
 * in the native integrator's order (u here, the direction v in
 * kernels/integrate_cell.cl) */
void interpolate_nodal(const int q, const real coef[N_B][N_COMP], const TangentCell *c,
                       real val[N_COMP], real grad[N_COMP][DIM])
{
  for (int comp = 0; comp < N_COMP; ++comp) {
    real v = (real)0, ref[DIM];
    for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
    for (int bb = 0; bb < N_B; ++bb) {
      v += Basis[TAB_PHI(q, bb, N_B)] * coef[bb][comp];
      for (int e = 0; e < DIM; ++e) ref[e] += BasisDerivatives[TAB_DPHI(q, bb, e, N_B, DIM)] * coef[bb][comp];
    }
    val[comp] = v;
    for (int d = 0; d < DIM; ++d) {
      real g = (real)0;
      for (int e = 0; e < DIM; ++e) g += ref[e] * c->invJ[INV_J(0, e, d, DIM)];
      grad[comp][d] = g;
    }
  }
}

void tangent_point(const int q, const TangentCell *c, real uq[N_COMP], real gradU[N_COMP][DIM],
                   real uT[N_COMP], real a[N_AUX_ALLOC], real gradA[N_AUX_ALLOC][DIM], real x[DIM])
{
  /* u, grad u (zeros for an affine physics) */
#if !AFFINE
  interpolate_nodal(q, c->uc, c, uq, gradU);
#else
  for (int comp = 0; comp < N_COMP; ++comp) {
    uq[comp] = (real)0;
    for (int d = 0; d < DIM; ++d) gradU[comp][d] = (real)0;
  }
#endif
  /* u_t = sigma*u + b (zeros for an affine physics, like u) */
  for (int comp = 0; comp < N_COMP; ++comp) {
    real bq = (real)0;
#if READS_U_T && !AFFINE
    for (int bb = 0; bb < N_B; ++bb) bq += Basis[TAB_PHI(q, bb, N_B)] * c->bc[bb][comp];
    uT[comp] = c->sigma * uq[comp] + bq;
#else
    uT[comp] = bq;
#endif
  }
  /* a, grad a */
  for (int k = 0; k < N_AUX_ALLOC; ++k) {
    a[k] = (real)0;
    for (int d = 0; d < DIM; ++d) gradA[k][d] = (real)0;
  }
#if AUX_FIELD
  for (int k = 0; k < N_AUX; ++k) {
    real val = (real)0, ref[DIM];
    for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
    for (int bb = 0; bb < N_B; ++bb) {
      val += Basis[TAB_PHI(q, bb, N_B)] * c->ac[bb][k];
      for (int e = 0; e < DIM; ++e) ref[e] += BasisDerivatives[TAB_DPHI(q, bb, e, N_B, DIM)] * c->ac[bb][k];
    }
    a[k] = val;
    for (int d = 0; d < DIM; ++d) {
      real g = (real)0;
      for (int e = 0; e < DIM; ++e) g += ref[e] * c->invJ[INV_J(0, e, d, DIM)];
      gradA[k][d] = g;
    }
  }
#elif AUX_CELL
  for (int k = 0; k < N_AUX; ++k) a[k] = c->ac[k];
#endif
  /* x = X_0 + sum_e xi_e (X_{e+1} - X_0) */
  for (int d = 0; d < DIM; ++d) {
    real xd = c->xv[0][d];
    for (int e = 0; e < DIM; ++e) xd += QuadPoints[q * DIM + e] * (c->xv[e + 1][d] - c->xv[0][d]);
    x[d] = xd;
  }
}

/* The direction du = phi e_gc, grad du = gradPhi e_gc, du_t = sigma*du (zeros
 * for a physics that does not read u_t), and df0 = df1 = 0 */
void tangent_direction(const int gc, const real phi, const real gradPhi[DIM], const TangentCell *c,
                       real du[N_COMP], real gradDu[N_COMP][DIM], real dUT[N_COMP],
                       real df0[N_COMP], real df1[N_COMP][DIM])
{
  for (int comp = 0; comp < N_COMP; ++comp) {
    du[comp] = comp == gc ? phi : (real)0;
#if READS_U_T
    dUT[comp] = c->sigma * du[comp];
#else
    dUT[comp] = (real)0;
#endif
    df0[comp] = (real)0;
    for (int d = 0; d < DIM; ++d) {
      gradDu[comp][d] = comp == gc ? gradPhi[d] : (real)0;
      df1[comp][d] = (real)0;
    }
  }
}
