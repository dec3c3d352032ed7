/*
 * femquad: element integration by thread transposition
 * (Knepley, Rupp, Terrel, "Finite element integration with quadrature on
 * the GPU", Section 3 and Appendix), with the gather of u and the
 * assembly of F fused in.
 * (Longer than most files: one kernel template whose variants — element
 * vectors or fused gather/assembly, residual or Jacobian action, stored or
 * computed geometry, patches, prefetch — are selected by the
 * preprocessor, so that every launch reads like the paper's appendix.)
 *
 * The host prepends a prelude (see femquad/src/opencl/source.rs) that defines
 *   real            float or double (and FP_CONTRACT OFF: no fused a*b+c,
 *                   so that the kernel computes what the native code does)
 *   DIM             spatial dimension
 *   N_B             scalar basis functions per cell
 *   N_COMP          components of the field u
 *   N_Q             quadrature points per cell
 *   N_BS, N_TC      cells per block and threads per cell (below)
 *   N_BL            blocks per batch (run concurrently)
 *   N_CB            batches per chunk (run serially by one work-group)
 *   N_AUX, AUX_FIELD, AUX_CELL   auxiliary field: components, and whether it
 *                   lives in the solution's element or in P0
 *   HAS_F0, HAS_F1, READS_U, READS_GRAD_U, READS_A, READS_GRAD_A, READS_X
 *                   what the physics writes and reads: only those values are
 *                   evaluated at the quadrature points
 *   GATHER          1: u (and a P1/P2 aux field) are global vectors, read
 *                   through the cell -> node map cellNodes[cell][b];
 *                   0: they are cell-local arrays [cell][b][comp] (the
 *                   element-kernel measure, BK)
 *   GEOMETRY_COMPUTED  1: J, det J and J^{-1} are computed per cell from the
 *                   vertex coordinates, gathered through cellNodes (the first
 *                   DIM+1 nodes of a cell are its vertices);
 *                   0: J^{-1} and det J are read per cell
 *   OUTPUT_ATOMIC   1: element vector entries are added into the global
 *                   vector out[node][comp] (ATOMIC_PTX: NVIDIA's red.global.add;
 *                   else a compare-and-swap loop);
 *                   0: element vectors out[cell][b][comp] are written
 *   PATCH, P_A, P_B  1: patches: a work-group whose cells' distinct nodes
 *                   fit its capacities — at most P_A vertex nodes and P_B edge
 *                   nodes (P2) — has them listed, sorted (so vertex nodes
 *                   first), in groupNodes[groupNodeOffsets[group] ..
 *                   groupNodeOffsets[group + 1]] (from the host,
 *                   femquad/src/opencl/mesh_data/patches.rs; an empty range
 *                   for the other groups). Such a group (a patch) loads u
 *                   (v), the aux field and the vertex coordinates of its
 *                   listed nodes once into local memory, gathers from
 *                   there, and sums its element vectors there (local
 *                   atomics) before writing them into out[] once per node.
 *                   It reads its cells' nodes as 16-bit local indices,
 *                   cellLocalNodes[cell][b] = the node's position in the
 *                   list (P_A + P_B <= 65535), instead of the 32-bit global
 *                   indices cellNodes[cell][b], which only the other groups
 *                   read (the fallback: they gather from and add into
 *                   global memory; the host fills both arrays for every
 *                   cell; each group reads one of them).
 *                   OUTPUT_ATOMIC: list entry k is *owned* by its group
 *                   (bit k % 32 of owned[k / 32]) when every cell of its
 *                   node lies in this group: the group stores its sum with
 *                   a plain store; the other entries (nodes shared with
 *                   other groups) are added atomically into out[], which
 *                   the host zero-fills first
 *   TANGENT         1: the Jacobian action J(u)·v instead of F(u) (needs
 *                   GATHER): the direction v is gathered like u, and at
 *                   each quadrature point TANGENT_PHYSICS(u, grad u, a,
 *                   grad a, x, constants, dv, grad dv, df0, df1) gives the
 *                   tangent (df0, df1) = d(f0, f1)/d(u, grad u) . (v, grad v),
 *                   which replaces (f0, f1); the rest is the residual's path
 *   LOADS_U         0: the Jacobian action of an affine physics (its
 *                   tangent does not depend on u): u is neither gathered nor
 *                   interpolated, the tangent is evaluated at u = 0
 *   PREFETCH        1: load the next batch's contiguous inputs into registers
 *                   during this one
 *   VEC_WIDTH, realv  reals per 16-byte vector and its type (1, real: off);
 *   UINT_VEC_WIDTH, uintv, ushortv  the same for the 32-bit node indices
 *                   (uint4 or uint), and vectors of as many 16-bit local
 *                   node indices (ushort4 or ushort)
 *   READS_U_T, TIME_PARAMS, TIME_T  the time state u_t = sigma*u + b of
 *                   a physics that reads u_t or t (see source.rs): b is
 *                   read at the cell's nodes straight from the global
 *                   vector timeB (B_AT, below; no patch copy), u_t formed at
 *                   each quadrature point, the tangent's direction is
 *                   du_t = sigma*du
 *   TAB_REGISTERS   1: each thread keeps its tabulation in registers;
 *                   0: the tabulation is read from local memory (large elements)
 *   PHYSICS         the pointwise function, inlined above this file
 *   Basis[N_Q*N_B], BasisDerivatives[N_Q*N_B*DIM], QuadWeights[N_Q],
 *   QuadPoints[N_Q*DIM]          the tabulation, as __constant literals
 *   CELL_DOF, INV_J, TAB_PHI, TAB_DPHI, CELL_COORD, GLOBAL_DOF, CELL_NODE,
 *   VERTEX_COORD    index macros, generated from femquad/src/layout.rs (the
 *                   one definition of every layout)
 *   AFFINE_GEOMETRY J^{-1} and det J from the vertices (kernels/affine_geometry.cl)
 *   copy_patch_values, copy_patch_vertices
 *                   with PATCH, a patch's copies of its nodes' values
 *                   (kernels/patch_copy.cl)
 *
 * Threads, cells and serial steps (one consistent set, used everywhere; the
 * host computes N_BS, see femquad/src/opencl/shape.rs):
 *   N_BT  = N_B*N_COMP               element dofs per cell
 *   N_TC                             threads per cell
 *   N_BS  = L / gcd(L, N_TC),  L = LCM(N_Q, N_BT)   cells per block
 *   N_BC  = N_BL*N_BS                cells per batch
 *   N_T   = N_BC*N_TC                threads per work-group
 *   chunk = N_CB*N_BC                cells per work-group
 *   N_SQC = ceil(N_BC*N_Q / N_T)     (cell, quadrature point) items per thread
 *   N_SBC = ceil(N_BC*N_BT / N_T)    (cell, element dof) items per thread
 * A batch has N_BC*N_Q quadrature items (item = c*N_Q + q) and N_BC*N_BT
 * basis items (item = c*N_BT + i); thread t takes items t, t+N_T, t+2*N_T, ...
 * of each phase. N_T = N_BL*N_BS*N_TC is a multiple of L, so thread t always
 * meets the same quadrature point q = t % N_Q and the same element dof
 * i = t % N_BT: its tabulation is loaded once into registers. In the paper's
 * Fig. 3 terms: the quadrature phase runs N_Q threads per cell on N_T/N_Q
 * cells at a time, N_SQC times; the basis phase N_BT threads per cell on
 * N_T/N_BT cells at a time, N_SBC times. With N_TC = 1 (one thread per cell)
 * N_BS = LCM(N_Q, N_BT), N_SQC = N_Q and N_SBC = N_BT exactly; more threads
 * per cell shrink the block (for large LCMs, whose local memory would not
 * fit) and spread the basis phase over more threads.
 *
 * The launch covers ceil(nCells / chunk) work-groups: every cell is
 * integrated here. The host pads every per-cell array by at least one chunk
 * (node indices 0, det J = 0), so the contiguous loads need no bounds
 * checks; the gathers of a padding cell c >= nCells read nothing (its
 * values are zeros: GATHER_SLOT), since node 0 may be missing from the
 * group's node list. Padding cells are computed on those values and never
 * stored.
 *
 * Per batch:
 *  (1) LOAD: coalesced cooperative loads of the batch's contiguous inputs
 *      (node indices, or cell-local coefficients; J^{-1} and det J if
 *      stored; P0 aux; cell coordinates in the BK form) into local memory;
 *      and, through the node indices, the gathered values of every node
 *      slot (cell, b): u, the aux field, and (b <= DIM) the vertex
 *      coordinates; barrier;
 *  (2) GEOMETRY (GEOMETRY_COMPUTED): per cell J, det J and J^{-1} from the
 *      vertex coordinates in local memory; barrier;
 *  (3) QUADRATURE PHASE: u, grad u at (cell, q), call PHYSICS, store
 *      w*detJ*f0 and w*detJ*J^{-1} f1 in local memory; barrier (the
 *      transposition);
 *  (4) BASIS PHASE: sum over q, then write the element vector entry
 *      (coalesced) or add it into out[node][comp]; with OUTPUT_ATOMIC a
 *      barrier follows, since the basis phase reads the node indices that
 *      the next batch's load overwrites.
 *
 * With PREFETCH (the default), each thread loads its share of the *next*
 * batch's contiguous inputs from global memory into registers before the
 * phases of the current batch, and stores it to local memory at the top of
 * the next iteration, so the global loads are in flight while the batch
 * computes. The gathers go one step further: as soon as a thread holds the
 * next batch's node indices of its slots (in registers), it issues the
 * loads of their u, aux and coordinates, also into registers; so no global
 * load of a batch waits behind a barrier of that batch.
 */

#define N_BT        (N_B * N_COMP)
#define N_BC        (N_BL * N_BS)
#define N_T         (N_BC * N_TC)
#define QUAD_ITEMS  (N_BC * N_Q)
#define BASIS_ITEMS (N_BC * N_BT)
#define N_SQC       ((QUAD_ITEMS + N_T - 1) / N_T)
#define N_SBC       ((BASIS_ITEMS + N_T - 1) / N_T)
/* Item j of `total` items exists (constant-folded when N_T divides total). */
#define IN_RANGE(j, total) ((total) % N_T == 0 || (j) < (total))

#if AUX_FIELD
#define AUX_PER_CELL (N_B * N_AUX)
#elif AUX_CELL
#define AUX_PER_CELL N_AUX
#endif

#define NEEDS_NODES (GATHER || GEOMETRY_COMPUTED)
/* x at the quadrature points comes from the gathered vertex coordinates
 * when those are read anyway, else from the cell-local coordinates (BK). */
#define X_GATHERED (READS_X && NEEDS_NODES)
/* What is gathered per node slot (cell, b) through the node indices */
#define GATHERS_U      (GATHER && LOADS_U)
#define GATHERS_V      (GATHER && TANGENT)
#define GATHERS_AUX    (GATHER && AUX_FIELD)
#define GATHERS_COORDS (GEOMETRY_COMPUTED || X_GATHERED)
/* u (and v) at a quadrature point: for the physics, and for u_t = sigma*u + b */
#define INTERPOLATES_U (READS_U || READS_U_T)

/* b of u_t = sigma*u + b at node slot b_ of cell c_ of the batch: from the
 * global vector through the cell's global node (a patch's cells hold
 * local indices into its node list); cell-local [cell][b][comp] in the
 * element kernel (!GATHER). */
#if READS_U_T
#if !GATHER
#define B_AT(c_, b_, comp) timeB[CELL_DOF(cell0 + (c_), b_, comp, N_B, N_COMP)]
#elif PATCH
#define B_AT(c_, b_, comp)                                                                           \
  timeB[GLOBAL_DOF(patch ? groupNodes[first + lnodes_l[CELL_NODE(c_, b_, N_B)]] : nodes_l[CELL_NODE(c_, b_, N_B)], \
                   comp, N_COMP)]
#else
#define B_AT(c_, b_, comp) timeB[GLOBAL_DOF(nodes_l[CELL_NODE(c_, b_, N_B)], comp, N_COMP)]
#endif
#endif

/* Where a gathered value comes from: the group's patch in local memory
 * when it is one (nd is then the node's 16-bit local index, its position
 * in the group's node list), else global memory (nd is the global node).
 * IN_PATCH(j) marks every position j of a patch array that comes from a
 * local index: the kernel's own index checker
 * (femquad/src/opencl/operator/patch_bounds.rs) replaces it by a checked
 * version. */
#if PATCH
#define IN_PATCH(j) (j)
#define U_AT(nd, comp) (patch ? uw[IN_PATCH(nd) * N_COMP + (comp)] : u[GLOBAL_DOF(nd, comp, N_COMP)])
#define V_AT(nd, comp) (patch ? vw[IN_PATCH(nd) * N_COMP + (comp)] : direction[GLOBAL_DOF(nd, comp, N_COMP)])
#define AUX_AT(nd, k)  (patch ? aw[IN_PATCH(nd) * N_AUX + (k)] : aux[GLOBAL_DOF(nd, k, N_AUX)])
#define X_AT(nd, d)    (patch ? xw[IN_PATCH(nd) * DIM + (d)] : coordinates[VERTEX_COORD(nd, d, DIM)])
#else
#define U_AT(nd, comp) u[GLOBAL_DOF(nd, comp, N_COMP)]
#define V_AT(nd, comp) direction[GLOBAL_DOF(nd, comp, N_COMP)]
#define AUX_AT(nd, k)  aux[GLOBAL_DOF(nd, k, N_AUX)]
#define X_AT(nd, d)    coordinates[VERTEX_COORD(nd, d, DIM)]
#endif

/* The contiguous batch inputs, as X(type, vector type, vector width, local
 * array, global array, values per cell). Thread t moves entries t, t+N_T, ...
 * of the batch. The node indices: 32-bit global ones, and with PATCH the
 * 16-bit local ones in vectors of as many (so that a thread's own node
 * slots are the same either way); a patch moves the local ones
 * only, the others the global ones only. */
#if NEEDS_NODES
#define NODES_INPUT(X) X(uint, uintv, UINT_VEC_WIDTH, nodes_l, cellNodes, N_B)
#else
#define NODES_INPUT(X)
#endif
#if NEEDS_NODES && PATCH
#define LOCAL_NODES_INPUT(X) X(ushort, ushortv, UINT_VEC_WIDTH, lnodes_l, cellLocalNodes, N_B)
#define MOVE_NODE_INDICES(X) \
  if (patch) {               \
    LOCAL_NODES_INPUT(X)     \
  } else {                   \
    NODES_INPUT(X)           \
  }
#else
#define LOCAL_NODES_INPUT(X)
#define MOVE_NODE_INDICES(X) NODES_INPUT(X)
#endif
#if GATHER
#define U_INPUT(X)
#else
#define U_INPUT(X) X(real, realv, VEC_WIDTH, u_i, u, N_BT)
#endif
#if GEOMETRY_COMPUTED
#define GEOMETRY_INPUT(X)
#else
#define GEOMETRY_INPUT(X)                                             \
  X(real, realv, VEC_WIDTH, invJ_i, jacobianInverses, DIM * DIM)      \
  X(real, realv, VEC_WIDTH, detJ_i, jacobianDeterminants, 1)
#endif
#if AUX_CELL || (AUX_FIELD && !GATHER)
#define AUX_INPUT(X) X(real, realv, VEC_WIDTH, a_i, aux, AUX_PER_CELL)
#else
#define AUX_INPUT(X)
#endif
#if READS_X && !NEEDS_NODES
#define X_INPUT(X) X(real, realv, VEC_WIDTH, x_i, coordinates, (DIM + 1) * DIM)
#else
#define X_INPUT(X)
#endif
#define CELL_INPUTS(X) U_INPUT(X) GEOMETRY_INPUT(X) AUX_INPUT(X) X_INPUT(X)
/* Declares every batch input (D: DECLARE_LOCAL or DECLARE_REGISTERS), and
 * moves those this group reads (M: LOAD_TO_LOCAL, LOAD_TO_REGISTERS or
 * STORE_REGISTERS) */
#define DECLARE_BATCH_INPUTS(D) NODES_INPUT(D) LOCAL_NODES_INPUT(D) CELL_INPUTS(D)
#define MOVE_BATCH_INPUTS(M)    MOVE_NODE_INDICES(M) CELL_INPUTS(M)

/* Moves of a batch input go through vectors of W values (16 bytes) when the
 * batch holds a whole number of them (then every batch starts 16-byte
 * aligned), else through single values. */
#define VEC_FITS(n, W)       ((W) > 1 && (N_BC * (n)) % (W) == 0)
#define N_VEC(n, W)          ((N_BC * (n)) / (W))
#define VEC_PER_THREAD(n, W) ((N_VEC(n, W) + N_T - 1) / N_T)
#define PER_THREAD(n)        ((N_BC * (n) + N_T - 1) / N_T)

#define DECLARE_LOCAL(T, TV, W, l, g, n) __local T l[N_BC * (n)] __attribute__((aligned(16)));
#define LOAD_TO_LOCAL(T, TV, W, l, g, n)                                           \
  if (VEC_FITS(n, W)) {                                                            \
    __global const TV *src = (__global const TV *)(g + cell0 * (n));               \
    __local TV *dst = (__local TV *)l;                                             \
    for (int k = 0; k < VEC_PER_THREAD(n, W); ++k) {                               \
      const int v = t + k * N_T;                                                   \
      if (IN_RANGE(v, N_VEC(n, W))) dst[v] = src[v];                               \
    }                                                                              \
  } else {                                                                         \
    for (int k = 0; k < PER_THREAD(n); ++k) {                                      \
      const int j = t + k * N_T;                                                   \
      if (IN_RANGE(j, N_BC * (n))) l[j] = g[cell0 * (n) + j];                      \
    }                                                                              \
  }
#define DECLARE_REGISTERS(T, TV, W, l, g, n) TV l##_v[VEC_PER_THREAD(n, W)]; T l##_r[PER_THREAD(n)];
#define LOAD_TO_REGISTERS(T, TV, W, l, g, n)                                       \
  if (VEC_FITS(n, W)) {                                                            \
    __global const TV *src = (__global const TV *)(g + next0 * (n));               \
    for (int k = 0; k < VEC_PER_THREAD(n, W); ++k) {                               \
      const int v = t + k * N_T;                                                   \
      if (IN_RANGE(v, N_VEC(n, W))) l##_v[k] = src[v];                             \
    }                                                                              \
  } else {                                                                         \
    for (int k = 0; k < PER_THREAD(n); ++k) {                                      \
      const int j = t + k * N_T;                                                   \
      if (IN_RANGE(j, N_BC * (n))) l##_r[k] = g[next0 * (n) + j];                  \
    }                                                                              \
  }
#define STORE_REGISTERS(T, TV, W, l, g, n)                                         \
  if (VEC_FITS(n, W)) {                                                            \
    __local TV *dst = (__local TV *)l;                                             \
    for (int k = 0; k < VEC_PER_THREAD(n, W); ++k) {                               \
      const int v = t + k * N_T;                                                   \
      if (IN_RANGE(v, N_VEC(n, W))) dst[v] = l##_v[k];                             \
    }                                                                              \
  } else {                                                                         \
    for (int k = 0; k < PER_THREAD(n); ++k) {                                      \
      const int j = t + k * N_T;                                                   \
      if (IN_RANGE(j, N_BC * (n))) l[j] = l##_r[k];                                \
    }                                                                              \
  }

#if NEEDS_NODES
/* The node slots j = c*N_B + b of a batch that thread t moves: those of its
 * node-index loads (vectors of UINT_VEC_WIDTH slots, or single slots). */
#define NODE_VEC     VEC_FITS(N_B, UINT_VEC_WIDTH)
#define OWN_SLOTS    (NODE_VEC ? VEC_PER_THREAD(N_B, UINT_VEC_WIDTH) * UINT_VEC_WIDTH : PER_THREAD(N_B))
#define OWN_SLOT(s)  (NODE_VEC ? (t + ((s) / UINT_VEC_WIDTH) * N_T) * UINT_VEC_WIDTH + (s) % UINT_VEC_WIDTH \
                               : t + (s) * N_T)
#define OWN_SLOT_EXISTS(s) (NODE_VEC ? IN_RANGE(t + ((s) / UINT_VEC_WIDTH) * N_T, N_VEC(N_B, UINT_VEC_WIDTH)) \
                                     : IN_RANGE(t + (s) * N_T, N_BC * N_B))
/* The gathered values of one slot: u, aux and (vertex slots) coordinates */
#define DECLARE_GATHERED(g)                        \
  real g##_u[OWN_SLOTS][N_COMP];                   \
  real g##_v[GATHERS_V ? OWN_SLOTS : 1][N_COMP];   \
  real g##_a[OWN_SLOTS][N_AUX_ALLOC];              \
  real g##_x[OWN_SLOTS][DIM];
/* Loads them for the slot of node `nd` into slot s of g (or sets them to
 * zero), and stores slot s of g into the batch's local arrays */
#if GATHERS_U
#define GATHER_U(g, s, nd) \
  for (int comp = 0; comp < N_COMP; ++comp) g##_u[s][comp] = U_AT(nd, comp);
#define ZERO_U(g, s) \
  for (int comp = 0; comp < N_COMP; ++comp) g##_u[s][comp] = (real)0;
#define STORE_U(g, s, c, b) \
  for (int comp = 0; comp < N_COMP; ++comp) u_i[CELL_DOF(c, b, comp, N_B, N_COMP)] = g##_u[s][comp];
#else
#define GATHER_U(g, s, nd)
#define ZERO_U(g, s)
#define STORE_U(g, s, c, b)
#endif
#if GATHERS_V
#define GATHER_V(g, s, nd) \
  for (int comp = 0; comp < N_COMP; ++comp) g##_v[s][comp] = V_AT(nd, comp);
#define ZERO_V(g, s) \
  for (int comp = 0; comp < N_COMP; ++comp) g##_v[s][comp] = (real)0;
#define STORE_V(g, s, c, b) \
  for (int comp = 0; comp < N_COMP; ++comp) v_i[CELL_DOF(c, b, comp, N_B, N_COMP)] = g##_v[s][comp];
#else
#define GATHER_V(g, s, nd)
#define ZERO_V(g, s)
#define STORE_V(g, s, c, b)
#endif
#if GATHERS_AUX
#define GATHER_AUX(g, s, nd) \
  for (int k = 0; k < N_AUX; ++k) g##_a[s][k] = AUX_AT(nd, k);
#define ZERO_AUX(g, s) \
  for (int k = 0; k < N_AUX; ++k) g##_a[s][k] = (real)0;
#define STORE_AUX(g, s, c, b) \
  for (int k = 0; k < N_AUX; ++k) a_i[CELL_DOF(c, b, k, N_B, N_AUX)] = g##_a[s][k];
#else
#define GATHER_AUX(g, s, nd)
#define ZERO_AUX(g, s)
#define STORE_AUX(g, s, c, b)
#endif
#if GATHERS_COORDS
#define GATHER_X(g, s, slot, nd) \
  if ((slot) % N_B <= DIM)       \
    for (int d = 0; d < DIM; ++d) g##_x[s][d] = X_AT(nd, d);
#define ZERO_X(g, s) \
  for (int d = 0; d < DIM; ++d) g##_x[s][d] = (real)0;
#define STORE_X(g, s, c, b) \
  if ((b) <= DIM)           \
    for (int d = 0; d < DIM; ++d) x_i[CELL_COORD(c, b, d, DIM)] = g##_x[s][d];
#else
#define GATHER_X(g, s, slot, nd)
#define ZERO_X(g, s)
#define STORE_X(g, s, c, b)
#endif
/* Node index of own slot s among the next batch's prefetched node indices
 * (registers): a vector component selected by value, never by a pointer
 * cast into the vector (that breaks C's aliasing rules; PoCL then read
 * stale indices). */
#if UINT_VEC_WIDTH > 1
#define UINT_COMPONENT(v, k) ((k) == 0 ? (v).s0 : (k) == 1 ? (v).s1 : (k) == 2 ? (v).s2 : (v).s3)
#else
#define UINT_COMPONENT(v, k) (v)
#endif
#define PREFETCHED(l, s) \
  (NODE_VEC ? UINT_COMPONENT(l##_v[(s) / UINT_VEC_WIDTH], (s) % UINT_VEC_WIDTH) : l##_r[s])
/* The node of own slot s among the next batch's prefetched indices, and of
 * node slot `slot` of the batch in local memory: its local index in a
 * patch, else its global index */
#if PATCH
#define PREFETCHED_NODE(s) (patch ? (uint)PREFETCHED(lnodes_l, s) : PREFETCHED(nodes_l, s))
#define NODE_OF_SLOT(slot) (patch ? (uint)lnodes_l[slot] : nodes_l[slot])
#else
#define PREFETCHED_NODE(s) PREFETCHED(nodes_l, s)
#define NODE_OF_SLOT(slot) nodes_l[slot]
#endif
/* Own slot s, the node slot `slot` of the batch whose first cell is
 * `first`, with node `nd` (NODE_OF_SLOT): its values are gathered if its
 * cell exists. A padding cell (cell >= nCells, node indices 0) gathers
 * nothing and gets zeros: its global node 0 need not lie in this group's
 * patch (whose list holds the group's cells' nodes only). */
#define GATHER_SLOT(g, s, slot, nd, first)                                                      \
  {                                                                                             \
    if ((first) + (slot) / N_B < nCells) {                                                      \
      GATHER_U(g, s, nd) GATHER_V(g, s, nd) GATHER_AUX(g, s, nd) GATHER_X(g, s, slot, nd)        \
    } else {                                                                                    \
      ZERO_U(g, s) ZERO_V(g, s) ZERO_AUX(g, s) ZERO_X(g, s)                                     \
    }                                                                                           \
  }
#define STORE_SLOT(g, s, slot)                                          \
  {                                                                     \
    const int c_ = (slot) / N_B, b_ = (slot) % N_B;                     \
    STORE_U(g, s, c_, b_) STORE_V(g, s, c_, b_) STORE_AUX(g, s, c_, b_) STORE_X(g, s, c_, b_) \
  }
#endif

/* atomic_add_real(p, v): *p += v atomically in global memory, and
 * local_add_real(p, v) in local memory, from kernels/atomic_add.cl, which
 * the host prepends when OUTPUT_ATOMIC */

#if OUTPUT_ATOMIC && PATCH
/* Whether entry k of groupNodes is owned by its group (the ownership bits) */
#define OWNED(k) ((owned[(k) / 32] >> ((k) % 32)) & 1u)
#endif

__kernel __attribute__((reqd_work_group_size(N_T, 1, 1)))
void integrate(__global const real *restrict u,          /* GATHER: [node][comp]; else [cell][b][comp] */
               __global const real *restrict direction,  /* TANGENT: v, [node][comp]                  */
               __global const uint *restrict cellNodes,  /* [cell][b]                                  */
               __global const real *restrict aux,        /* field: [node][k] (GATHER) or [cell][b][k]; P0: [cell][k] */
               __global const real *restrict jacobianInverses,     /* [cell][e][d]  */
               __global const real *restrict jacobianDeterminants, /* [cell]        */
               __global const real *restrict coordinates, /* NEEDS_NODES: [vertex][d]; else [cell][v][d] */
               __constant real *constants                /* [N_CONSTANTS]                             */
               TIME_PARAMS,                              /* READS_U_T or t: b, sigma, t               */
               __global real *restrict out,              /* OUTPUT_ATOMIC: [node][comp]; else [cell][b][comp] */
               __global const uint *restrict groupNodeOffsets, /* PATCH: [group + 1], into groupNodes */
               __global const uint *restrict groupNodes, /* PATCH: the groups' sorted node lists      */
               __global const ushort *restrict cellLocalNodes, /* PATCH: [cell][b], list positions    */
               __global const uint *restrict owned,      /* PATCH && OUTPUT_ATOMIC: a bit per list entry */
               const int nCells,
               const uint nVertices)                     /* vertex nodes: those below nVertices        */
{
  const int t     = get_local_id(0);
  const int chunk = get_group_id(0);

#if PATCH
  /* This group's node list; if it is a patch, the values of its nodes,
   * loaded once (u, v, aux, vertex coordinates), and its share of F,
   * summed here and written into out[] at the end */
  const uint first = groupNodeOffsets[chunk];
  const int np = groupNodeOffsets[chunk + 1] - first;
  const int patch = np > 0; /* the same for the whole group */
#if GATHERS_U
  __local real uw[(P_A + P_B) * N_COMP];
#endif
#if GATHERS_V
  __local real vw[(P_A + P_B) * N_COMP];
#endif
#if GATHERS_AUX
  __local real aw[(P_A + P_B) * N_AUX];
#endif
#if GATHERS_COORDS
  __local real xw[P_A * DIM]; /* the vertex nodes, first in the list */
#endif
#if OUTPUT_ATOMIC
  __local real fw[(P_A + P_B) * N_COMP];
#endif
  if (patch) {
#if GATHERS_U || GATHERS_V || OUTPUT_ATOMIC
    for (int k = t; k < np * N_COMP; k += N_T) {
      const uint nd = groupNodes[first + k / N_COMP];
#if GATHERS_U
      uw[k] = u[GLOBAL_DOF(nd, k % N_COMP, N_COMP)];
#endif
#if GATHERS_V
      vw[k] = direction[GLOBAL_DOF(nd, k % N_COMP, N_COMP)];
#endif
#if OUTPUT_ATOMIC
      fw[k] = (real)0;
#endif
    }
#endif
#if GATHERS_AUX
    copy_patch_values(aw, aux, N_AUX, groupNodes + first, np);
#endif
#if GATHERS_COORDS
    copy_patch_vertices(xw, coordinates, groupNodes + first, np, nVertices);
#endif
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif

  /* Local memory: the batch's inputs, and the values at quadrature points */
  DECLARE_BATCH_INPUTS(DECLARE_LOCAL)
#if GATHERS_U
  __local real u_i[N_BC * N_BT];
#endif
#if GATHERS_V
  __local real v_i[N_BC * N_BT];
#endif
#if GATHERS_AUX
  __local real a_i[N_BC * AUX_PER_CELL];
#endif
#if GEOMETRY_COMPUTED
  __local real invJ_i[N_BC * DIM * DIM], detJ_i[N_BC];
#endif
#if GATHERS_COORDS
  __local real x_i[N_BC * (DIM + 1) * DIM];
#endif
#if HAS_F0
  __local real f_0[N_BC * N_Q * N_COMP];
#endif
#if HAS_F1
  __local real f_1[N_BC * N_Q * N_COMP * DIM];
#endif

  /* Constants of the physics, in private memory */
  real k_c[N_CONSTANTS_ALLOC];
  for (int j = 0; j < N_CONSTANTS; ++j) k_c[j] = constants[j];

  /* This thread's quadrature point (quadrature phase) and element dof
   * i = b*N_COMP + comp (basis phase) */
  const int q      = t % N_Q;
  const real w     = QuadWeights[q];
  const int i_b    = t % N_BT;
  const int b_t    = i_b / N_COMP;
  const int comp_t = i_b % N_COMP;
#if TAB_REGISTERS
  /* Its tabulation, in registers for the whole launch */
  real phi_i[N_B], phiDer_i[N_B * DIM];
  for (int b = 0; b < N_B; ++b) {
    phi_i[b] = Basis[TAB_PHI(q, b, N_B)];
    for (int e = 0; e < DIM; ++e) phiDer_i[b * DIM + e] = BasisDerivatives[TAB_DPHI(q, b, e, N_B, DIM)];
  }
  real phi_b[N_Q], phiDer_b[N_Q * DIM];
  for (int p = 0; p < N_Q; ++p) {
    phi_b[p] = Basis[TAB_PHI(p, b_t, N_B)];
    for (int e = 0; e < DIM; ++e) phiDer_b[p * DIM + e] = BasisDerivatives[TAB_DPHI(p, b_t, e, N_B, DIM)];
  }
#define PHI_Q(b)        phi_i[b]
#define PHIDER_Q(b, e)  phiDer_i[(b) * DIM + (e)]
#define PHI_B(p)        phi_b[p]
#define PHIDER_B(p, e)  phiDer_b[(p) * DIM + (e)]
#else
  /* Large elements: the tabulation in local memory (registers would spill);
   * the first barrier of the batch loop publishes it */
  __local real phi_l[N_Q * N_B], phiDer_l[N_Q * N_B * DIM];
  for (int j = t; j < N_Q * N_B; j += N_T) phi_l[j] = Basis[j];
  for (int j = t; j < N_Q * N_B * DIM; j += N_T) phiDer_l[j] = BasisDerivatives[j];
#define PHI_Q(b)        phi_l[TAB_PHI(q, b, N_B)]
#define PHIDER_Q(b, e)  phiDer_l[TAB_DPHI(q, b, e, N_B, DIM)]
#define PHI_B(p)        phi_l[TAB_PHI(p, b_t, N_B)]
#define PHIDER_B(p, e)  phiDer_l[TAB_DPHI(p, b_t, e, N_B, DIM)]
#endif

#if NEEDS_NODES
  DECLARE_GATHERED(nx)
#endif
#if PREFETCH
  DECLARE_BATCH_INPUTS(DECLARE_REGISTERS)
  {
    const long next0 = (long)chunk * N_CB * N_BC;
    MOVE_BATCH_INPUTS(LOAD_TO_REGISTERS)
#if NEEDS_NODES
    for (int s = 0; s < OWN_SLOTS; ++s)
      if (OWN_SLOT_EXISTS(s)) {
        const uint nd = PREFETCHED_NODE(s);
        GATHER_SLOT(nx, s, OWN_SLOT(s), nd, next0)
      }
#endif
  }
#endif

  for (int batch = 0; batch < N_CB; ++batch) {
    const long cell0 = ((long)chunk * N_CB + batch) * N_BC;

    /* ==== LOAD: coalesced, N_T threads over contiguous ranges; gathers ==== */
#if PREFETCH
    MOVE_BATCH_INPUTS(STORE_REGISTERS)
#if NEEDS_NODES
    for (int s = 0; s < OWN_SLOTS; ++s)
      if (OWN_SLOT_EXISTS(s)) STORE_SLOT(nx, s, OWN_SLOT(s))
#endif
    if (batch + 1 < N_CB) {
      const long next0 = cell0 + N_BC;
      MOVE_BATCH_INPUTS(LOAD_TO_REGISTERS)
#if NEEDS_NODES
      for (int s = 0; s < OWN_SLOTS; ++s)
        if (OWN_SLOT_EXISTS(s)) {
          const uint nd = PREFETCHED_NODE(s);
          GATHER_SLOT(nx, s, OWN_SLOT(s), nd, next0)
        }
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    MOVE_BATCH_INPUTS(LOAD_TO_LOCAL)
    barrier(CLK_LOCAL_MEM_FENCE);
#if NEEDS_NODES
    for (int s = 0; s < OWN_SLOTS; ++s)
      if (OWN_SLOT_EXISTS(s)) {
        const int slot = OWN_SLOT(s);
        GATHER_SLOT(nx, s, slot, NODE_OF_SLOT(slot), cell0)
        STORE_SLOT(nx, s, slot)
      }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#endif

#if GEOMETRY_COMPUTED
    /* ==== GEOMETRY: per cell J[d][e] = X_{e+1}[d] - X_0[d], its
     * determinant and inverse (AFFINE_GEOMETRY: the formulas of femquad/src/geometry.rs) ==== */
    for (int c = t; c < N_BC; c += N_T) {
      real m[DIM * DIM];
      for (int e = 0; e < DIM; ++e)
        for (int d = 0; d < DIM; ++d)
          m[d * DIM + e] = x_i[CELL_COORD(c, e + 1, d, DIM)] - x_i[CELL_COORD(c, 0, d, DIM)];
      __local real *inv = &invJ_i[INV_J(c, 0, 0, DIM)];
      real det;
      AFFINE_GEOMETRY(m, inv, det);
      if (cell0 + c >= nCells) {
        /* padding: a degenerate cell; make it contribute nothing */
        det = (real)0;
        for (int k = 0; k < DIM * DIM; ++k) inv[k] = (real)0;
      }
      detJ_i[c] = det;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#endif

    /* ==== QUADRATURE PHASE: map coefficients to values at quadrature points ==== */
    for (int s = 0; s < N_SQC; ++s) {
      const int item = t + s * N_T;       /* = c*N_Q + q */
      if (!IN_RANGE(item, QUAD_ITEMS)) break;
      const int c = item / N_Q;           /* cell within the batch */
      __local const real *invJ = &invJ_i[INV_J(c, 0, 0, DIM)];
      real u[N_COMP], gradU[N_COMP][DIM];
#if !LOADS_U
      /* the Jacobian action of an affine physics: its tangent is the same
       * at every u, evaluated at u = 0, grad u = 0 */
      for (int comp = 0; comp < N_COMP; ++comp) {
        u[comp] = (real)0;
        for (int d = 0; d < DIM; ++d) gradU[comp][d] = (real)0;
      }
#else
      for (int comp = 0; comp < N_COMP; ++comp) {
        real val = (real)0, ref[DIM];
        for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
        for (int b = 0; b < N_B; ++b) {
          const real coef = u_i[CELL_DOF(c, b, comp, N_B, N_COMP)];
#if INTERPOLATES_U
          val += coef * PHI_Q(b);
#endif
#if READS_GRAD_U
          for (int e = 0; e < DIM; ++e) ref[e] += coef * PHIDER_Q(b, e);
#endif
        }
        u[comp] = val;
#if READS_GRAD_U
        for (int d = 0; d < DIM; ++d) {
          real g = (real)0;
          for (int e = 0; e < DIM; ++e) g += ref[e] * invJ[INV_J(0, e, d, DIM)];
          gradU[comp][d] = g;
        }
#endif
      }
#endif
      real a[N_AUX_ALLOC], gradA[N_AUX_ALLOC][DIM];
#if AUX_FIELD
      for (int k = 0; k < N_AUX; ++k) {
        real val = (real)0, ref[DIM];
        for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
        for (int b = 0; b < N_B; ++b) {
          const real coef = a_i[CELL_DOF(c, b, k, N_B, N_AUX)];
#if READS_A
          val += coef * PHI_Q(b);
#endif
#if READS_GRAD_A
          for (int e = 0; e < DIM; ++e) ref[e] += coef * PHIDER_Q(b, e);
#endif
        }
        a[k] = val;
#if READS_GRAD_A
        for (int d = 0; d < DIM; ++d) {
          real g = (real)0;
          for (int e = 0; e < DIM; ++e) g += ref[e] * invJ[INV_J(0, e, d, DIM)];
          gradA[k][d] = g;
        }
#endif
      }
#elif AUX_CELL
      for (int k = 0; k < N_AUX; ++k) {
        a[k] = a_i[c * AUX_PER_CELL + k];
        for (int d = 0; d < DIM; ++d) gradA[k][d] = (real)0;
      }
#endif
      real x[DIM];
#if READS_X
      /* x = X_0 + sum_e xi_e (X_{e+1} - X_0), in this order (as natively) */
      for (int d = 0; d < DIM; ++d) {
        const real x0 = x_i[CELL_COORD(c, 0, d, DIM)];
        real xd = x0;
        for (int e = 0; e < DIM; ++e) xd += QuadPoints[q * DIM + e] * (x_i[CELL_COORD(c, e + 1, d, DIM)] - x0);
        x[d] = xd;
      }
#endif
      /* u_t = sigma*u + b, b interpolated as natively (zeros if not read) */
      real uT[N_COMP];
      for (int comp = 0; comp < N_COMP; ++comp) {
        real bq = (real)0;
#if READS_U_T
        for (int b = 0; b < N_B; ++b) bq += B_AT(c, b, comp) * PHI_Q(b);
        uT[comp] = sigma * u[comp] + bq;
#else
        uT[comp] = bq;
#endif
      }
      real f0[N_COMP], f1[N_COMP][DIM];
      for (int comp = 0; comp < N_COMP; ++comp) {
        f0[comp] = (real)0;
        for (int d = 0; d < DIM; ++d) f1[comp][d] = (real)0;
      }
#if TANGENT
      /* the direction's value and gradient at the point, as u's */
      real du[N_COMP], gradDu[N_COMP][DIM];
      for (int comp = 0; comp < N_COMP; ++comp) {
        real val = (real)0, ref[DIM];
        for (int e = 0; e < DIM; ++e) ref[e] = (real)0;
        for (int b = 0; b < N_B; ++b) {
          const real coef = v_i[CELL_DOF(c, b, comp, N_B, N_COMP)];
#if INTERPOLATES_U
          val += coef * PHI_Q(b);
#endif
#if READS_GRAD_U
          for (int e = 0; e < DIM; ++e) ref[e] += coef * PHIDER_Q(b, e);
#endif
        }
        du[comp] = val;
        for (int d = 0; d < DIM; ++d) {
          real g = (real)0;
#if READS_GRAD_U
          for (int e = 0; e < DIM; ++e) g += ref[e] * invJ[INV_J(0, e, d, DIM)];
#endif
          gradDu[comp][d] = g;
        }
      }
      /* the direction of u_t: du_t = sigma*du */
      real dUT[N_COMP];
      for (int comp = 0; comp < N_COMP; ++comp)
#if READS_U_T
        dUT[comp] = sigma * du[comp];
#else
        dUT[comp] = (real)0;
#endif
      TANGENT_PHYSICS(u, gradU, a, gradA, x, k_c, uT, du, gradDu, dUT, f0, f1);
#else
      PHYSICS(u, gradU, a, gradA, x, k_c, uT, f0, f1);
#endif

      /* Scale by w*detJ; map f1 to the reference frame: g = J^{-1} f1 */
      const real wdetJ = w * detJ_i[c];
      const int cq = c * N_Q + q;
      for (int comp = 0; comp < N_COMP; ++comp) {
#if HAS_F0
        f_0[cq * N_COMP + comp] = f0[comp] * wdetJ;
#endif
#if HAS_F1
        for (int e = 0; e < DIM; ++e) {
          real g = (real)0;
          for (int d = 0; d < DIM; ++d) g += invJ[INV_J(0, e, d, DIM)] * f1[comp][d];
          f_1[(cq * N_COMP + comp) * DIM + e] = g * wdetJ;
        }
#endif
      }
    }

    /* ==== TRANSPOSE THREADS ==== */
    barrier(CLK_LOCAL_MEM_FENCE);

    /* ==== BASIS PHASE: map values at quadrature points to coefficients ==== */
    for (int s = 0; s < N_SBC; ++s) {
      const int item = t + s * N_T;       /* = c*N_BT + i_b */
      if (!IN_RANGE(item, BASIS_ITEMS)) break;
      const int c = item / N_BT;          /* cell within the batch */
      real e_i = (real)0;
      for (int p = 0; p < N_Q; ++p) {
        const int cq = c * N_Q + p;
#if HAS_F0
        e_i += PHI_B(p) * f_0[cq * N_COMP + comp_t];
#endif
#if HAS_F1
        for (int e = 0; e < DIM; ++e) e_i += PHIDER_B(p, e) * f_1[(cq * N_COMP + comp_t) * DIM + e];
#endif
      }
#if OUTPUT_ATOMIC
      if (cell0 + c < nCells) {
        const int slot = CELL_NODE(c, b_t, N_B);
#if PATCH
        if (patch)
          local_add_real(&fw[IN_PATCH(lnodes_l[slot]) * N_COMP + comp_t], e_i);
        else
#endif
          atomic_add_real(&out[GLOBAL_DOF(nodes_l[slot], comp_t, N_COMP)], e_i);
      }
#else
      /* consecutive threads write consecutive entries (padding included) */
      out[cell0 * N_BT + item] = e_i;
#endif
    }
#if OUTPUT_ATOMIC
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
  }
#if PATCH && OUTPUT_ATOMIC
  /* The group's sums, once per listed node: stored where the group owns
   * the node, added atomically where other groups add too */
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
