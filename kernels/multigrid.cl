// Multigrid kernels of femquad (femquad/src/opencl/multigrid/): the nested
// transfers between levels, the point-block Jacobi of the Chebyshev
// smoother, and a deterministic pseudo-random fill (eigenvalue estimates).
//
// The host prepends (femquad/src/opencl/multigrid/mod.rs):
//   #pragma OPENCL EXTENSION cl_khr_fp64 : enable   (if real is double)
//   typedef float|double real;
//   #define WG 256              work-group size of every kernel
//   #define NC N                components per node (N_comp) of the blocks
//   #define BLOCK_TOL t         relative pivot tolerance of the block inverse
//
// Fields are interleaved node-major: dof = node·NC + c. Every kernel has one
// work-item (mg_dense_apply: one work-group) per output entry and writes
// only that entry, so no kernel needs atomics and each result is computed
// by the same operations, in the same order, as its native twin in
// femquad/src/native/multigrid.rs (FP contraction off): device and host
// results are bitwise equal wherever the operations are additions and
// multiplications (transfers, dense product); divisions (the block inverse)
// are correctly rounded in double precision, within the OpenCL ulp bounds in
// single precision.
// Launch: ceil(n/WG) work-groups of WG, n the number of outputs
// (mg_dense_apply: n work-groups).
#pragma OPENCL FP_CONTRACT OFF

// ---------------------------------------------------------------------------
// Transfers between nested P1 levels (and P1 → P2 on one mesh). Fine node v
// < n_cn is coarse node v; fine node n_cn + k is the midpoint of the coarse
// edge k = (edges[2k], edges[2k+1]).
// ---------------------------------------------------------------------------

// The transfers are those of P̃: P with the rows of the fixed fine dofs and
// the columns of the fixed coarse dofs zero (coarse_fixed, fine_fixed: one
// byte per dof, 1 = fixed; all 0 for the plain P).

// fine += P̃ coarse: fine[i] += coarse[i] (i < n_cn·NC), fine[(n_cn + k)·NC + c]
// += ½(coarse[a·NC + c] + coarse[b·NC + c]); a fixed fine entry is left as it
// is, a fixed coarse entry is read as 0.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_prolong_add(__global real *restrict fine, __global const real *restrict coarse,
                    __global const uint *restrict edges,
                    __global const uchar *restrict coarse_fixed,
                    __global const uchar *restrict fine_fixed, const ulong n_coarse_dofs,
                    const ulong n_fine_dofs)
{
    const ulong i = get_global_id(0);
    if (i >= n_fine_dofs || fine_fixed[i]) return;
    if (i < n_coarse_dofs) {
        fine[i] = fine[i] + (coarse_fixed[i] ? (real)0 : coarse[i]);
        return;
    }
    const ulong j = i - n_coarse_dofs;
    const ulong k = j / NC;
    const uint c = (uint)(j - k * NC);
    const ulong a = edges[2 * k] * NC + c, b = edges[2 * k + 1] * NC + c;
    const real ca = coarse_fixed[a] ? (real)0 : coarse[a];
    const real cb = coarse_fixed[b] ? (real)0 : coarse[b];
    fine[i] = fine[i] + (real)0.5 * (ca + cb);
}

// coarse = P̃ᵀ f with f = b (minus_w = 0) or f = b − w (minus_w = 1, w = A x:
// the residual restricted in the same pass), f read as 0 on fixed fine dofs:
// coarse[v·NC + c] = f[v·NC + c] + Σ_k ½ f[(n_cn + k)·NC + c] over the edges k
// at v in increasing order (offsets/incident: the CSR lists of the edges at
// each coarse node), 0 for a fixed coarse dof.
inline real mg_fine_value(__global const real *restrict b, __global const real *restrict w,
                          __global const uchar *restrict fine_fixed, const ulong j,
                          const uint minus_w)
{
    if (fine_fixed[j]) return (real)0;
    return minus_w ? b[j] + (real)(-1) * w[j] : b[j];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_restrict(__global real *restrict coarse, __global const real *restrict b,
                 __global const real *restrict w, __global const uint *restrict offsets,
                 __global const uint *restrict incident,
                 __global const uchar *restrict coarse_fixed,
                 __global const uchar *restrict fine_fixed, const ulong n_coarse_dofs,
                 const uint minus_w)
{
    const ulong i = get_global_id(0);
    if (i >= n_coarse_dofs) return;
    if (coarse_fixed[i]) {
        coarse[i] = (real)0;
        return;
    }
    const ulong v = i / NC;
    const uint c = (uint)(i - v * NC);
    real s = mg_fine_value(b, w, fine_fixed, i, minus_w);
    const uint end = offsets[v + 1];
    for (uint p = offsets[v]; p < end; ++p) {
        const ulong k = incident[p];
        s = s + (real)0.5 * mg_fine_value(b, w, fine_fixed, n_coarse_dofs + k * NC + c, minus_w);
    }
    coarse[i] = s;
}

// coarse[i] = fine[i], i < n_coarse_dofs: the coarse nodes are the first fine
// nodes, so a state is injected by its prefix.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_inject(__global real *restrict coarse, __global const real *restrict fine,
               const ulong n_coarse_dofs)
{
    const ulong i = get_global_id(0);
    if (i < n_coarse_dofs) coarse[i] = fine[i];
}

// ---------------------------------------------------------------------------
// Point-block Jacobi: blocks B_n[fc][gc] at (n·NC + fc)·NC + gc.
// ---------------------------------------------------------------------------

// Dirichlet rows of the blocks: for each fixed dof d = n·NC + c, row c and
// column c of B_n become those of diagonal·I (1: the identity's, 0: zero).
// (Work-items of one node write the entries they share with the same value.)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_block_fix(__global real *restrict blocks, __global const uint *restrict fixed,
                  const ulong m, const real diagonal)
{
    const ulong k = get_global_id(0);
    if (k >= m) return;
    const ulong d = fixed[k];
    const ulong n = d / NC;
    const uint c = (uint)(d - n * NC);
    __global real *b = blocks + n * NC * NC;
    for (uint j = 0; j < NC; ++j) {
        b[c * NC + j] = (j == c) ? diagonal : (real)0;
        b[j * NC + c] = (j == c) ? diagonal : (real)0;
    }
}

// inv[n] = B_n⁻¹ by Gauss–Jordan elimination with partial pivoting (the
// first row of largest |pivot|). A block whose pivot is not above
// BLOCK_TOL·max|B_n| (singular, or not finite) gets NaN in every entry, for
// the host to report the node.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_block_invert(__global real *restrict inv, __global const real *restrict blocks,
                     const ulong n_nodes)
{
    const ulong n = get_global_id(0);
    if (n >= n_nodes) return;
    real a[NC][NC], v[NC][NC];
    real scale = (real)0;
    for (uint i = 0; i < NC; ++i) {
        for (uint j = 0; j < NC; ++j) {
            a[i][j] = blocks[(n * NC + i) * NC + j];
            v[i][j] = (i == j) ? (real)1 : (real)0;
            scale = fmax(scale, fabs(a[i][j]));
        }
    }
    bool ok = isfinite(scale);
    for (uint col = 0; col < NC && ok; ++col) {
        uint p = col;
        real m = fabs(a[col][col]);
        for (uint r = col + 1; r < NC; ++r) {
            if (fabs(a[r][col]) > m) {
                m = fabs(a[r][col]);
                p = r;
            }
        }
        if (!(m > (real)BLOCK_TOL * scale)) {
            ok = false;
            break;
        }
        if (p != col) {
            for (uint j = 0; j < NC; ++j) {
                real t = a[p][j]; a[p][j] = a[col][j]; a[col][j] = t;
                t = v[p][j]; v[p][j] = v[col][j]; v[col][j] = t;
            }
        }
        const real piv = a[col][col];
        for (uint j = 0; j < NC; ++j) {
            a[col][j] = a[col][j] / piv;
            v[col][j] = v[col][j] / piv;
        }
        for (uint r = 0; r < NC; ++r) {
            if (r == col) continue;
            const real f = a[r][col];
            for (uint j = 0; j < NC; ++j) {
                a[r][j] = a[r][j] - f * a[col][j];
                v[r][j] = v[r][j] - f * v[col][j];
            }
        }
    }
    for (uint i = 0; i < NC; ++i)
        for (uint j = 0; j < NC; ++j)
            inv[(n * NC + i) * NC + j] = ok ? v[i][j] : (real)NAN;
}

// y[i] = a·y[i] + b·(D⁻¹ r)[i] with (D⁻¹ r)[n·NC + i] = Σ_j inv[n][i][j] r[n·NC + j]
// (j in order). With a = 0, y = b·D⁻¹r (whatever y held, if finite).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_block_update(__global real *restrict y, __global const real *restrict inv,
                     __global const real *restrict r, const ulong n_dofs, const real a,
                     const real b)
{
    const ulong i = get_global_id(0);
    if (i >= n_dofs) return;
    const ulong n = i / NC;
    const uint fc = (uint)(i - n * NC);
    real s = (real)0;
    for (uint j = 0; j < NC; ++j) s = s + inv[(n * NC + fc) * NC + j] * r[n * NC + j];
    y[i] = a * y[i] + b * s;
}

// y = A x for a dense n × n matrix a, row-major (the inverse of the coarsest
// operator). One work-group of WG lanes per row i (launch: n work-groups):
// lane l sums a[i][j]·x[j] for j = l, l + WG, … in order, then the partial
// sums are added in a tree p[l] += p[l + h], h = WG/2, …, 1 (the native
// twin's order, DENSE_LANES = WG).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_dense_apply(__global real *restrict y, __global const real *restrict a,
                    __global const real *restrict x, const ulong n)
{
    __local real p[WG];
    const ulong i = get_group_id(0);
    const uint l = (uint)get_local_id(0);
    __global const real *row = a + i * n;
    real s = (real)0;
    for (ulong j = l; j < n; j += WG) s = s + row[j] * x[j];
    p[l] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (l < h) p[l] = p[l] + p[l + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) y[i] = p[0];
}

// One Chebyshev smoothing step fused, one work-item per node n (its N_comp
// dofs i = n·NC + j), each entry by the operations of the unfused sequence:
//   r[i] = b[i] | b[i] + (−1)·w[i] | r[i] + (−1)·w[i]   (residual 0 | 1 | 2)
//   d[i] = a·d[i] + c·Σ_j inv[n][fc][j] r[n·NC + j]
//   x[i] = d[i] | x[i] + 1·d[i]                          (x_from_zero 1 | 0)
// (the last two by chebyshev_node_update, kernels/chebyshev_update.cl)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_chebyshev_step(__global real *restrict x, __global real *restrict d,
                       __global real *restrict r, __global const real *restrict b,
                       __global const real *restrict w, __global const real *restrict inv,
                       const ulong n_nodes, const real a, const real c, const uint residual,
                       const uint x_from_zero)
{
    const ulong n = get_global_id(0);
    if (n >= n_nodes) return;
    real rn[NC];
    for (uint j = 0; j < NC; ++j) {
        const ulong i = n * NC + j;
        rn[j] = residual == 0 ? b[i]
              : residual == 1 ? b[i] + (real)(-1) * w[i]
                              : r[i] + (real)(-1) * w[i];
        r[i] = rn[j];
    }
    chebyshev_node_update(n, NC, rn, inv, d, d, x, a, c, x_from_zero);
}

// ---------------------------------------------------------------------------
// x[i] = uniform in [−1, 1): 24 bits of SplitMix64's output for seed + i
// (exact in float and double), the same numbers on every device and on the host.
// ---------------------------------------------------------------------------
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mg_fill_random(__global real *restrict x, const ulong n, const ulong seed)
{
    const ulong i = get_global_id(0);
    if (i >= n) return;
    ulong z = seed + (i + 1) * 0x9e3779b97f4a7c15UL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
    z = z ^ (z >> 31);
    const int k = (int)(z >> 40); // 0 .. 2^24 − 1
    x[i] = (real)(2 * k - 16777216) * (real)5.9604644775390625e-8f;
}
