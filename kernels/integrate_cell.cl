/*
 * femquad: the fused residual F(u) and Jacobian action J(u)·v, one
 * work-item per cell (LaunchConfig::cell_parallel): the cell-parallel
 * variant of kernels/integrate.cl for elements with few quadrature points
 * (P1: one to four), where the thread transposition's local-memory phases
 * and barriers cost more than they save (BENCHMARKS.md, p1_floor).
 *
 * Work-item t of work-group `chunk` integrates cells
 *   cell = (chunk*N_CB + batch)*N_BC + t,   batch = 0 .. N_CB-1
 * (N_TC = 1, so N_T = N_BC: a chunk covers the same N_CB*N_BC cells as the
 * transposed kernel's, and the patch lists of those chunks serve both):
 *  - the cell's state (kernels/tangent_point.cl's TangentCell: u at its
 *    nodes unless AFFINE, b of the time state, the aux field or P0 value,
 *    the vertex coordinates, J^{-1} and det J read or, GEOMETRY_COMPUTED,
 *    computed from the vertices), and with TANGENT the direction v at its
 *    nodes: through the 32-bit node map (load_tangent_cell), or with PATCH,
 *    in a work-group whose chunk's node list fits its capacities
 *    (femquad/src/opencl/mesh_data/patches.rs: groupNodes[
 *    groupNodeOffsets[chunk] .. groupNodeOffsets[chunk + 1]]), from the
 *    group's copies of its nodes' values in local memory — u, v, b, the
 *    aux field, the vertex coordinates, each read once a group through the
 *    list — at the cell's 16-bit list positions cellLocalNodes
 *    (load_patch_cell): a patch's cells read no 32-bit node index;
 *  - for each quadrature point q, u, grad u, u_t, a, grad a, x
 *    (tangent_point) and with TANGENT dv, grad dv, du_t = sigma*dv; then
 *    PHYSICS (TANGENT_PHYSICS) gives f0, f1, and the element vector
 *      r[b][comp] += phi_b(q) w_q detJ f0[comp]
 *                  + sum_e dphi_b/dxi_e(q) (w_q detJ sum_d J^{-1}[e][d] f1[comp][d])
 *    in registers, summed over q in the order of integrate.cl's basis phase;
 *  - OUTPUT_ATOMIC: r added into out[node][comp]; a patch sums its
 *    element vectors in local memory (local_add_real) and writes each
 *    listed node once: a plain store where it owns the node, an atomic
 *    add where other groups add too; the other groups add each entry
 *    atomically (global memory);
 *  - else the element vector is written to out[cell][b][comp] for the
 *    deterministic summation pass.
 * Cells cell >= nCells (the partial last chunk) compute nothing.
 *
 * The host prepends the prelude of integrate.cl (femquad/src/opencl/
 * source.rs: sizes, READS_*, TANGENT, GEOMETRY_COMPUTED, OUTPUT_ATOMIC,
 * PATCH, P_A, P_B, the time state, atomic_add_real and local_add_real, the
 * layout macros, the tabulation, the physics, PHYSICS and TANGENT_PHYSICS),
 * AFFINE = !LOADS_U (the Jacobian action of an affine physics: u is not
 * read, its tangent is evaluated at u = 0), kernels/affine_geometry.cl,
 * kernels/tangent_point.cl and with PATCH kernels/patch_copy.cl. The kernel's
 * parameters are integrate.cl's.
 */

#define N_BC (N_BL * N_BS)
#define N_T  (N_BC * N_TC)
#if N_TC != 1
#error "the cell-parallel kernel runs one work-item per cell (N_TC = 1)"
#endif
#if PATCH && !OUTPUT_ATOMIC
#error "the cell-parallel kernel uses patches only to sum atomic output"
#endif

#if PATCH
/* Whether entry k of groupNodes is owned by its group (the ownership bits) */
#define OWNED(k) ((owned[(k) / 32] >> ((k) % 32)) & 1u)

/* What a patch copies of its nodes into local memory: u (unless AFFINE),
 * b of the time state, the aux field, v (TANGENT), and the vertex
 * coordinates where the geometry or the physics reads them (the other
 * arrays are one entry, never read) */
#define PATCH_U (!AFFINE)
#define PATCH_B (READS_U_T && !AFFINE)
#define PATCH_X (GEOMETRY_COMPUTED || READS_X)
#define PATCH_REALS(used, per_node) ((used) ? (P_A + P_B) * (per_node) : 1)

/* A position j in the group's node list read from cellLocalNodes: the
 * kernel's own index checker (femquad/src/opencl/operator/patch_bounds.rs)
 * replaces it by a checked version */
#define IN_PATCH(j) (j)

/* A patch cell's state, as load_tangent_cell forms it, from the group's
 * copies: k[b] is the position of the cell's node b in the group's list
 * (c->nodes holds these positions) */
void load_patch_cell(const int cell, const uint k[N_B],
                     __local const real *uw,   /* PATCH_U: [position][comp] */
                     __local const real *bw,   /* PATCH_B: [position][comp] */
                     __local const real *aw,   /* AUX_FIELD: [position][k]  */
                     __local const real *xw,   /* PATCH_X: [position][d], the vertex nodes */
                     __global const real *restrict aux,                  /* P0: [cell][k] */
                     __global const real *restrict jacobianInverses,     /* [cell][e][d]  */
                     __global const real *restrict jacobianDeterminants, /* [cell]        */
#if READS_U_T
                     const real sigma,
#endif
                     TangentCell *c)
{
  for (int b = 0; b < N_B; ++b) {
    c->nodes[b] = k[b];
#if PATCH_U
    for (int comp = 0; comp < N_COMP; ++comp) c->uc[b][comp] = uw[k[b] * N_COMP + comp];
#endif
  }
#if READS_U_T
  c->sigma = sigma;
#if PATCH_B
  for (int b = 0; b < N_B; ++b)
    for (int comp = 0; comp < N_COMP; ++comp) c->bc[b][comp] = bw[k[b] * N_COMP + comp];
#endif
#endif
#if AUX_FIELD
  for (int b = 0; b < N_B; ++b)
    for (int j = 0; j < N_AUX; ++j) c->ac[b][j] = aw[k[b] * N_AUX + j];
#endif
  for (int v = 0; v <= DIM; ++v)
    for (int d = 0; d < DIM; ++d)
#if PATCH_X
      c->xv[v][d] = xw[k[v] * DIM + d];
#else
      c->xv[v][d] = (real)0; /* read by neither the geometry nor the physics */
#endif
  load_cell_data(cell, aux, jacobianInverses, jacobianDeterminants, c);
}

/* The direction at the cell's node nd (a list position in a patch) */
#define V_AT(nd, comp) (patch ? vw[(nd) * N_COMP + (comp)] : direction[GLOBAL_DOF(nd, comp, N_COMP)])
#else
#define V_AT(nd, comp) direction[GLOBAL_DOF(nd, comp, N_COMP)]
#endif

__kernel __attribute__((reqd_work_group_size(N_T, 1, 1)))
void integrate(__global const real *restrict u,          /* [node][comp]                              */
               __global const real *restrict direction,  /* TANGENT: v, [node][comp]                  */
               __global const uint *restrict cellNodes,  /* [cell][b]                                  */
               __global const real *restrict aux,        /* field: [node][k]; P0: [cell][k]           */
               __global const real *restrict jacobianInverses,     /* !GEOMETRY_COMPUTED: [cell][e][d] */
               __global const real *restrict jacobianDeterminants, /* !GEOMETRY_COMPUTED: [cell]       */
               __global const real *restrict coordinates, /* [vertex][d]                               */
               __constant real *constants                /* [N_CONSTANTS]                             */
               TIME_PARAMS,                              /* READS_U_T or t: b, sigma, t               */
               __global real *restrict out,              /* OUTPUT_ATOMIC: [node][comp]; else [cell][b][comp] */
               __global const uint *restrict groupNodeOffsets, /* PATCH: [group + 1], into groupNodes */
               __global const uint *restrict groupNodes, /* PATCH: the groups' sorted node lists      */
               __global const ushort *restrict cellLocalNodes, /* PATCH: [cell][b], list positions    */
               __global const uint *restrict owned,      /* PATCH: a bit per list entry               */
               const int nCells,
               const uint nVertices)
{
  const int t     = get_local_id(0);
  const int chunk = get_group_id(0);

#if PATCH
  /* This group's node list; if it is a patch, the values of its nodes,
   * copied once, and its share of F, summed here */
  const uint first = groupNodeOffsets[chunk];
  const int np = groupNodeOffsets[chunk + 1] - first;
  const int patch = np > 0; /* the same for the whole group */
  __local real fw[(P_A + P_B) * N_COMP];
  __local real uw[PATCH_REALS(PATCH_U, N_COMP)];
  __local real vw[PATCH_REALS(TANGENT, N_COMP)];
  __local real bw[PATCH_REALS(PATCH_B, N_COMP)];
  __local real aw[PATCH_REALS(AUX_FIELD, N_AUX)];
  __local real xw[PATCH_X ? P_A * DIM : 1]; /* the vertex nodes, first in the list */
  if (patch) {
    for (int k = t; k < np * N_COMP; k += N_T) {
      const uint dof = GLOBAL_DOF(groupNodes[first + k / N_COMP], k % N_COMP, N_COMP);
      fw[k] = (real)0;
#if PATCH_U
      uw[k] = u[dof];
#endif
#if TANGENT
      vw[k] = direction[dof];
#endif
#if PATCH_B
      bw[k] = timeB[dof];
#endif
    }
#if AUX_FIELD
    copy_patch_values(aw, aux, N_AUX, groupNodes + first, np);
#endif
#if PATCH_X
    copy_patch_vertices(xw, coordinates, groupNodes + first, np, nVertices);
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif

  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];

  for (int batch = 0; batch < N_CB; ++batch) {
    const int cell = (chunk * N_CB + batch) * N_BC + t;
    if (cell >= nCells) break;

    TangentCell c;
#if PATCH
    if (patch) {
      uint k[N_B];
      for (int b = 0; b < N_B; ++b) k[b] = IN_PATCH(cellLocalNodes[CELL_NODE(cell, b, N_B)]);
      load_patch_cell(cell, k, uw, bw, aw, xw, aux, jacobianInverses, jacobianDeterminants,
#if READS_U_T
                      sigma,
#endif
                      &c);
    } else
#endif
      load_tangent_cell(cell, u, cellNodes, aux, jacobianInverses, jacobianDeterminants, coordinates,
#if READS_U_T
                        timeB, sigma,
#endif
                        &c);
#if TANGENT
    real vc[N_B][N_COMP];
    for (int b = 0; b < N_B; ++b)
      for (int comp = 0; comp < N_COMP; ++comp) vc[b][comp] = V_AT(c.nodes[b], comp);
#endif

    real r[N_B][N_COMP];
    for (int b = 0; b < N_B; ++b)
      for (int comp = 0; comp < N_COMP; ++comp) r[b][comp] = (real)0;

    for (int q = 0; q < N_Q; ++q) {
      real uq[N_COMP], gradU[N_COMP][DIM], uT[N_COMP], a[N_AUX_ALLOC], gradA[N_AUX_ALLOC][DIM], x[DIM];
      tangent_point(q, &c, uq, gradU, uT, a, gradA, x);
      real f0[N_COMP], f1[N_COMP][DIM];
      for (int comp = 0; comp < N_COMP; ++comp) {
        f0[comp] = (real)0;
        for (int d = 0; d < DIM; ++d) f1[comp][d] = (real)0;
      }
#if TANGENT
      /* the direction's value and gradient at the point, as u's; du_t = sigma*du */
      real du[N_COMP], gradDu[N_COMP][DIM], dUT[N_COMP];
      interpolate_nodal(q, (const real(*)[N_COMP])vc, &c, du, gradDu);
      for (int comp = 0; comp < N_COMP; ++comp)
#if READS_U_T
        dUT[comp] = sigma * du[comp];
#else
        dUT[comp] = (real)0;
#endif
      TANGENT_PHYSICS(uq, gradU, a, gradA, x, k_c, uT, du, gradDu, dUT, f0, f1);
#else
      PHYSICS(uq, gradU, a, gradA, x, k_c, uT, f0, f1);
#endif
      /* w*detJ*f0 and w*detJ*J^{-1} f1, tested with phi_b and dphi_b */
      const real wdetJ = QuadWeights[q] * c.detJ;
      for (int comp = 0; comp < N_COMP; ++comp) {
        const real f0w = f0[comp] * wdetJ;
        real g[DIM];
        for (int e = 0; e < DIM; ++e) {
          real ge = (real)0;
          for (int d = 0; d < DIM; ++d) ge += c.invJ[INV_J(0, e, d, DIM)] * f1[comp][d];
          g[e] = ge * wdetJ;
        }
        for (int b = 0; b < N_B; ++b) {
#if HAS_F0
          r[b][comp] += Basis[TAB_PHI(q, b, N_B)] * f0w;
#endif
#if HAS_F1
          for (int e = 0; e < DIM; ++e) r[b][comp] += BasisDerivatives[TAB_DPHI(q, b, e, N_B, DIM)] * g[e];
#endif
        }
      }
    }

#if OUTPUT_ATOMIC
#if PATCH
    if (patch) {
      for (int b = 0; b < N_B; ++b)
        for (int comp = 0; comp < N_COMP; ++comp) local_add_real(&fw[c.nodes[b] * N_COMP + comp], r[b][comp]);
    } else
#endif
      for (int b = 0; b < N_B; ++b)
        for (int comp = 0; comp < N_COMP; ++comp)
          atomic_add_real(&out[GLOBAL_DOF(c.nodes[b], comp, N_COMP)], r[b][comp]);
#else
    for (int b = 0; b < N_B; ++b)
      for (int comp = 0; comp < N_COMP; ++comp) out[CELL_DOF(cell, b, comp, N_B, N_COMP)] = r[b][comp];
#endif
  }

#if PATCH
  /* The group's sums, once per listed node: stored where the group owns
   * the node, added atomically where other groups add too */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (patch)
    for (int k = t; k < np * N_COMP; k += N_T) {
      const uint e = first + k / N_COMP;
      __global real *o = &out[GLOBAL_DOF(groupNodes[e], k % N_COMP, N_COMP)];
      if (OWNED(e))
        *o = fw[k];
      else
        atomic_add_real(o, fw[k]);
    }
#endif
}
