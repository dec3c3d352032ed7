// BLAS-1 kernels of femquad's DeviceVector (femquad/src/opencl/vector/).
//
// The host prepends (femquad/src/opencl/vector/program.rs):
//   #pragma OPENCL EXTENSION cl_khr_fp64 : enable   (if real or acc is double)
//   typedef float|double real;  typedef float4|double4 real4;
//   typedef double|float acc;   accumulator of reductions: double whenever
//                               the device has fp64 (f32 vectors too)
//   #define WG 256              work-group size of every kernel (a power of two)
//
// FP contraction is off: every `y + a*x` is a rounded product then a rounded
// sum, exactly as the host computes it, so elementwise results are bitwise
// those of the host implementation.
#pragma OPENCL FP_CONTRACT OFF

// ---------------------------------------------------------------------------
// Elementwise kernels. Work-item i owns the block of elements 4i..4i+3 and
// moves it with one vload4/vstore4 (16 bytes in f32, 32 in f64; consecutive
// work-items touch consecutive blocks, so the accesses of a work-group are
// coalesced); the last, partial block is done element by element.
// Launch: ceil(ceil(n/4)/WG) work-groups of WG work-items.
// ---------------------------------------------------------------------------

// y[k] = a
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_fill(__global real *restrict y, const ulong n, const real a)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        vstore4((real4)(a), 0, y + i);
    } else {
        for (ulong k = i; k < n; ++k) y[k] = a;
    }
}

// y[k] = x[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_copy(__global real *restrict y, __global const real *restrict x, const ulong n)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        vstore4(vload4(0, x + i), 0, y + i);
    } else {
        for (ulong k = i; k < n; ++k) y[k] = x[k];
    }
}

// y[k] = a * y[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_scale(__global real *restrict y, const ulong n, const real a)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        vstore4(a * vload4(0, y + i), 0, y + i);
    } else {
        for (ulong k = i; k < n; ++k) y[k] = a * y[k];
    }
}

// y[k] = y[k] + a * x[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_axpy(__global real *restrict y, __global const real *restrict x, const ulong n,
              const real a)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        vstore4(vload4(0, y + i) + a * vload4(0, x + i), 0, y + i);
    } else {
        for (ulong k = i; k < n; ++k) y[k] = y[k] + a * x[k];
    }
}

// y[k] = a * x[k] + b * y[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_axpby(__global real *restrict y, __global const real *restrict x, const ulong n,
               const real a, const real b)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        vstore4(a * vload4(0, x + i) + b * vload4(0, y + i), 0, y + i);
    } else {
        for (ulong k = i; k < n; ++k) y[k] = a * x[k] + b * y[k];
    }
}

// w[k] = x[k] * y[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_pointwise_mult(__global real *restrict w, __global const real *x,
                        __global const real *y, const ulong n)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        vstore4(vload4(0, x + i) * vload4(0, y + i), 0, w + i);
    } else {
        for (ulong k = i; k < n; ++k) w[k] = x[k] * y[k];
    }
}

// y[k] = (((y[k] + a0 x0[k]) + a1 x1[k]) + ...) for the first nv (1..8) of
// x0..x7: the order of nv successive axpy's, one pass over y. Unused x's are
// any valid buffer (never read).
#define MAXPY4(j) if (nv > j) v = v + a##j * vload4(0, x##j + i);
#define MAXPY1(j) if (nv > j) v = v + a##j * x##j[k];
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_maxpy(__global real *restrict y, const ulong n, const uint nv,
               const real a0, const real a1, const real a2, const real a3,
               const real a4, const real a5, const real a6, const real a7,
               __global const real *x0, __global const real *x1,
               __global const real *x2, __global const real *x3,
               __global const real *x4, __global const real *x5,
               __global const real *x6, __global const real *x7)
{
    const ulong i = 4 * (ulong)get_global_id(0);
    if (i + 4 <= n) {
        real4 v = vload4(0, y + i);
        MAXPY4(0) MAXPY4(1) MAXPY4(2) MAXPY4(3) MAXPY4(4) MAXPY4(5) MAXPY4(6) MAXPY4(7)
        vstore4(v, 0, y + i);
    } else {
        for (ulong k = i; k < n; ++k) {
            real v = y[k];
            MAXPY1(0) MAXPY1(1) MAXPY1(2) MAXPY1(3) MAXPY1(4) MAXPY1(5) MAXPY1(6) MAXPY1(7)
            y[k] = v;
        }
    }
}

// ---------------------------------------------------------------------------
// Reductions, in a fixed order.
//
// Pass 1 runs G work-groups, G = clamp(ceil(ceil(n/4)/WG), 1, 1024): a
// function of n alone (never of the device's occupancy). Work-item t of group
// g accumulates the blocks b = g·WG + t, b + G·WG, b + 2·G·WG, ... in
// ascending order (the four entries of a block in order), then the group
// combines its WG values by a fixed binary tree in local memory
// (l[t] += l[t + h] for h = WG/2, WG/4, ..., 1) and work-item 0 writes the
// group's partial. Pass 2 runs one work-group per result: work-item t
// accumulates the partials t, t + WG, ... in order, then the same tree. So
// every result depends on n and the data only: bitwise reproducible run to
// run, and a multi-dot's V_jᵀw is bitwise the single dot's.
// ---------------------------------------------------------------------------

// The fixed-tree sum of the work-group's values s (all work-items call it).
inline acc group_sum(acc s, __local acc *l)
{
    const uint t = get_local_id(0);
    l[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (t < h) l[t] += l[t + h];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const acc r = l[0];
    barrier(CLK_LOCAL_MEM_FENCE); // l is reused by the next call
    return r;
}

// max that propagates NaN (a NaN anywhere makes the maximum NaN).
inline acc nan_max(acc a, acc b)
{
    return (isnan(a) || a > b) ? a : b;
}

inline acc group_max(acc s, __local acc *l)
{
    const uint t = get_local_id(0);
    l[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (t < h) l[t] = nan_max(l[t], l[t + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const acc r = l[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

inline ulong group_min(ulong s, __local ulong *l)
{
    const uint t = get_local_id(0);
    l[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (t < h) l[t] = min(l[t], l[t + h]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const ulong r = l[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

// Pass 1 of the multi-dot: for the first nv (1..8) of v0..v7, the group's
// partial of w·v_j goes to partials[(slot + j)·G + g]. w is read once for all
// nv products; products and sums in acc. The nv trees run side by side in
// one loop (rows of l), so no barrier sits in a branch; row j's tree is the
// tree of group_sum, so a multi-dot's w·v_j is bitwise the single dot's.
#define DOT4(j) if (nv > j) { const real4 v = vload4(0, v##j + i); \
    s##j += (acc)w4.s0 * (acc)v.s0; s##j += (acc)w4.s1 * (acc)v.s1; \
    s##j += (acc)w4.s2 * (acc)v.s2; s##j += (acc)w4.s3 * (acc)v.s3; }
#define DOT1(j) if (nv > j) s##j += wk * (acc)v##j[k];
#define DOT_LOCAL(j) if (nv > j) l[j * WG + t] = s##j;
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_mdot_partials(__global const real *restrict w, const ulong n, const uint nv,
                       __global const real *v0, __global const real *v1,
                       __global const real *v2, __global const real *v3,
                       __global const real *v4, __global const real *v5,
                       __global const real *v6, __global const real *v7,
                       __global acc *restrict partials, const uint slot)
{
    __local acc l[8 * WG];
    const uint G = get_num_groups(0);
    const uint t = get_local_id(0);
    acc s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0;
    const ulong blocks = (n + 3) / 4;
    for (ulong b = get_global_id(0); b < blocks; b += (ulong)G * WG) {
        const ulong i = 4 * b;
        if (i + 4 <= n) {
            const real4 w4 = vload4(0, w + i);
            DOT4(0) DOT4(1) DOT4(2) DOT4(3) DOT4(4) DOT4(5) DOT4(6) DOT4(7)
        } else {
            for (ulong k = i; k < n; ++k) {
                const acc wk = w[k];
                DOT1(0) DOT1(1) DOT1(2) DOT1(3) DOT1(4) DOT1(5) DOT1(6) DOT1(7)
            }
        }
    }
    DOT_LOCAL(0) DOT_LOCAL(1) DOT_LOCAL(2) DOT_LOCAL(3)
    DOT_LOCAL(4) DOT_LOCAL(5) DOT_LOCAL(6) DOT_LOCAL(7)
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (t < h) {
            for (uint j = 0; j < nv; ++j) l[j * WG + t] += l[j * WG + t + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t < nv) partials[(slot + t) * G + get_group_id(0)] = l[t * WG];
}

// Pass 1 of max |x_k| (NaN if any entry is NaN).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_absmax_partials(__global const real *restrict x, const ulong n,
                         __global acc *restrict partials)
{
    __local acc l[WG];
    const uint G = get_num_groups(0);
    acc m = 0;
    const ulong blocks = (n + 3) / 4;
    for (ulong b = get_global_id(0); b < blocks; b += (ulong)G * WG) {
        const ulong i = 4 * b;
        if (i + 4 <= n) {
            const real4 v = fabs(vload4(0, x + i));
            m = nan_max(m, (acc)v.s0);
            m = nan_max(m, (acc)v.s1);
            m = nan_max(m, (acc)v.s2);
            m = nan_max(m, (acc)v.s3);
        } else {
            for (ulong k = i; k < n; ++k) m = nan_max(m, (acc)fabs(x[k]));
        }
    }
    const acc r = group_max(m, l);
    if (get_local_id(0) == 0) partials[get_group_id(0)] = r;
}

// Pass 1 of the first index k with x_k NaN or ±inf (n if none).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_nonfinite_partials(__global const real *restrict x, const ulong n,
                            __global ulong *restrict partials)
{
    __local ulong l[WG];
    const uint G = get_num_groups(0);
    ulong first = n;
    const ulong blocks = (n + 3) / 4;
    // a work-item's blocks ascend: its first hit is its smallest index
    for (ulong b = get_global_id(0); b < blocks && first == n; b += (ulong)G * WG) {
        const ulong i = 4 * b;
        const ulong end = min(i + 4, n);
        for (ulong k = i; k < end; ++k) {
            if (!isfinite(x[k])) {
                first = k;
                break;
            }
        }
    }
    const ulong r = group_min(first, l);
    if (get_local_id(0) == 0) partials[get_group_id(0)] = r;
}

// Pass 2: out[j] = the fixed-order sum of partials[j·G .. j·G + G), one
// work-group per j.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_sum_final(__global const acc *restrict partials, const uint G,
                   __global acc *restrict out)
{
    __local acc l[WG];
    const uint j = get_group_id(0);
    acc s = 0;
    for (uint k = get_local_id(0); k < G; k += WG) s += partials[j * G + k];
    const acc r = group_sum(s, l);
    if (get_local_id(0) == 0) out[j] = r;
}

// Pass 2 of max |x_k| (one work-group).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_max_final(__global const acc *restrict partials, const uint G,
                   __global acc *restrict out)
{
    __local acc l[WG];
    acc m = 0;
    for (uint k = get_local_id(0); k < G; k += WG) m = nan_max(m, partials[k]);
    const acc r = group_max(m, l);
    if (get_local_id(0) == 0) out[0] = r;
}

// Pass 2 of the first non-finite index (one work-group).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_min_final(__global const ulong *restrict partials, const uint G, const ulong n,
                   __global ulong *restrict out)
{
    __local ulong l[WG];
    ulong m = n;
    for (uint k = get_local_id(0); k < G; k += WG) m = min(m, partials[k]);
    const ulong r = group_min(m, l);
    if (get_local_id(0) == 0) out[0] = r;
}

// ---------------------------------------------------------------------------
// Index kernels: one work-item per index k < m (the index reads are
// coalesced, the vector accesses are where the indices point).
// Launch: ceil(m/WG) work-groups of WG.
// ---------------------------------------------------------------------------

// v[idx[k]] = a
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_set_at(__global real *restrict v, __global const uint *restrict idx, const ulong m,
                const real a)
{
    const ulong k = get_global_id(0);
    if (k < m) v[idx[k]] = a;
}

// v[idx[k]] = src[idx[k]]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_copy_at(__global real *restrict v, __global const real *restrict src,
                 __global const uint *restrict idx, const ulong m)
{
    const ulong k = get_global_id(0);
    if (k < m) v[idx[k]] = src[idx[k]];
}

// dst[k] = src[idx[k]]  (dst has m entries)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_gather(__global real *restrict dst, __global const real *restrict src,
                __global const uint *restrict idx, const ulong m)
{
    const ulong k = get_global_id(0);
    if (k < m) dst[k] = src[idx[k]];
}

// dst[idx[k]] = src[k]  (src has m entries; the indices are distinct)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_scatter(__global real *restrict dst, __global const real *restrict src,
                 __global const uint *restrict idx, const ulong m)
{
    const ulong k = get_global_id(0);
    if (k < m) dst[idx[k]] = src[k];
}
