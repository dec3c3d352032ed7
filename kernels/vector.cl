// BLAS-1 kernels of femquad's DeviceVector (femquad/src/opencl/vector/).
//
// The host prepends (femquad/src/opencl/vector/program.rs):
//   #pragma OPENCL EXTENSION cl_khr_fp64 : enable   (if real or acc is double)
//   typedef float|double real;
//   typedef float4|double2 realv;  #define VW 4|2
//                               the 16-byte vector of VW entries each
//                               work-item moves at once
//   typedef double|float acc;   accumulator of reductions: double whenever
//                               the device has fp64 (f32 vectors too)
//   #define WG 256              work-group size of every kernel (a power of two)
//   typedef double|float other; typedef double4|float2 otherv;  #define CONVERT_REALV
//                               convert_float4|convert_double2  (only if acc is
//                               double: the other precision, for vec_convert)
//
// FP contraction is off: every `y + a*x` is a rounded product then a rounded
// sum, exactly as the host computes it, so elementwise results are bitwise
// those of the host implementation.
#pragma OPENCL FP_CONTRACT OFF

// The block of VW entries at i (a multiple of VW) as one realv. Buffers are
// whole cl_mem objects, aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN (at least
// 128 bytes), so the realv accesses are aligned 16-byte transactions, as in
// the float4 copy kernel the bandwidth is measured with. (16 bytes in f64
// too: on an H100 a store-only kernel writing double4 reached half the
// bandwidth of one writing double2.)
#define LOADV(p, i) (((__global const realv *)(p))[(i) / VW])
#define STOREV(p, i, v) (((__global realv *)(p))[(i) / VW] = (v))

// s += a·b over the VW entries in order, and m = max(m, |v|), in acc.
#if VW == 4
#define DOTV(s, a, b) s += (acc)(a).s0 * (acc)(b).s0; s += (acc)(a).s1 * (acc)(b).s1; \
    s += (acc)(a).s2 * (acc)(b).s2; s += (acc)(a).s3 * (acc)(b).s3;
#define ABSMAXV(m, v) m = nan_max(m, (acc)fabs((v).s0)); m = nan_max(m, (acc)fabs((v).s1)); \
    m = nan_max(m, (acc)fabs((v).s2)); m = nan_max(m, (acc)fabs((v).s3));
#else
#define DOTV(s, a, b) s += (acc)(a).s0 * (acc)(b).s0; s += (acc)(a).s1 * (acc)(b).s1;
#define ABSMAXV(m, v) m = nan_max(m, (acc)fabs((v).s0)); m = nan_max(m, (acc)fabs((v).s1));
#endif

// ---------------------------------------------------------------------------
// Elementwise kernels. Work-item b owns the block of entries VW·b ..
// VW·b + VW − 1 and moves it as one realv (consecutive work-items touch
// consecutive blocks, so the accesses of a work-group are coalesced); the
// last, partial block is done entry by entry.
// Launch: ceil(ceil(n/VW)/WG) work-groups of WG work-items.
// ---------------------------------------------------------------------------

// y[k] = a
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_fill(__global real *restrict y, const ulong n, const real a)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(y, i, (realv)(a));
    } else {
        for (ulong k = i; k < n; ++k) y[k] = a;
    }
}

// y[k] = x[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_copy(__global real *restrict y, __global const real *restrict x, const ulong n)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(y, i, LOADV(x, i));
    } else {
        for (ulong k = i; k < n; ++k) y[k] = x[k];
    }
}

#ifdef CONVERT_REALV
// y[k] = (real) x[k], x in the other precision: rounded to nearest (ties to
// even, the default of convert_<type> to a floating type) when narrowing
// double to float, exact when widening — as Rust's `as` on the host.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_convert(__global real *restrict y, __global const other *restrict x, const ulong n)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(y, i, CONVERT_REALV(((__global const otherv *)x)[i / VW]));
    } else {
        for (ulong k = i; k < n; ++k) y[k] = (real)x[k];
    }
}
#endif

// y[k] = a * y[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_scale(__global real *restrict y, const ulong n, const real a)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(y, i, a * LOADV(y, i));
    } else {
        for (ulong k = i; k < n; ++k) y[k] = a * y[k];
    }
}

// y[k] = y[k] + a * x[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_axpy(__global real *restrict y, __global const real *restrict x, const ulong n,
              const real a)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(y, i, LOADV(y, i) + a * LOADV(x, i));
    } else {
        for (ulong k = i; k < n; ++k) y[k] = y[k] + a * x[k];
    }
}

// y[k] = a * x[k] + b * y[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_axpby(__global real *restrict y, __global const real *restrict x, const ulong n,
               const real a, const real b)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(y, i, a * LOADV(x, i) + b * LOADV(y, i));
    } else {
        for (ulong k = i; k < n; ++k) y[k] = a * x[k] + b * y[k];
    }
}

// w[k] = x[k] * y[k]
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_pointwise_mult(__global real *restrict w, __global const real *x,
                        __global const real *y, const ulong n)
{
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        STOREV(w, i, LOADV(x, i) * LOADV(y, i));
    } else {
        for (ulong k = i; k < n; ++k) w[k] = x[k] * y[k];
    }
}

// y[k] = (((y[k] + a0 x0[k]) + a1 x1[k]) + ...) for the first nv (1..8) of
// x0..x7: the order of nv successive axpy's, one pass over y. Unused x's are
// any valid buffer (never read).
#define MAXPYV(j) if (nv > j) v = v + a##j * LOADV(x##j, i);
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
    const ulong i = VW * (ulong)get_global_id(0);
    if (i + VW <= n) {
        realv v = LOADV(y, i);
        MAXPYV(0) MAXPYV(1) MAXPYV(2) MAXPYV(3) MAXPYV(4) MAXPYV(5) MAXPYV(6) MAXPYV(7)
        STOREV(y, i, v);
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
// Pass 1 runs G work-groups, G = clamp(ceil(ceil(n/VW)/WG), 1, 1024): a
// function of n alone (never of the device's occupancy). Work-item t of group
// g accumulates the blocks b = g·WG + t, b + G·WG, b + 2·G·WG, ... in
// ascending order (the VW entries of a block in order), then the group
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
#define DOTVJ(j) if (nv > j) { const realv v = LOADV(v##j, i); DOTV(s##j, wv, v) }
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
    const ulong blocks = (n + VW - 1) / VW;
    for (ulong b = get_global_id(0); b < blocks; b += (ulong)G * WG) {
        const ulong i = VW * b;
        if (i + VW <= n) {
            const realv wv = LOADV(w, i);
            DOTVJ(0) DOTVJ(1) DOTVJ(2) DOTVJ(3) DOTVJ(4) DOTVJ(5) DOTVJ(6) DOTVJ(7)
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
    const ulong blocks = (n + VW - 1) / VW;
    for (ulong b = get_global_id(0); b < blocks; b += (ulong)G * WG) {
        const ulong i = VW * b;
        if (i + VW <= n) {
            const realv v = LOADV(x, i);
            ABSMAXV(m, v)
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
    const ulong blocks = (n + VW - 1) / VW;
    // a work-item's blocks ascend: its first hit is its smallest index
    for (ulong b = get_global_id(0); b < blocks && first == n; b += (ulong)G * WG) {
        const ulong i = VW * b;
        const ulong end = min(i + VW, n);
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

// dst[idx[k]] = dst[idx[k]] + src[from + k]  (k < m; the indices are distinct)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_scatter_add(__global real *restrict dst, __global const real *restrict src,
                     __global const uint *restrict idx, const ulong from, const ulong m)
{
    const ulong k = get_global_id(0);
    if (k < m) dst[idx[k]] = dst[idx[k]] + src[from + k];
}

// ---------------------------------------------------------------------------
// CG's residual update fused with what it feeds (femquad/src/vector/fused.rs):
//   x[k] = x[k] + a * p[k];  r[k] = r[k] + na * q[k]          (na = −a rounded)
//   mode 2 also: z[k] = d[k] * r[k]                            (Jacobi: z = D⁻¹ r)
//   mode ≥ 1: the group partials of r·r (row 0) and, mode 2, r·z (row 1) into
//   partials[row·G + g], for vec_sum_final.
// The roundings are those of vec_axpy, vec_axpy, vec_pointwise_mult, and the
// partials are those of vec_mdot_partials with w = r, v0 = r, v1 = z (the same
// G = reduction_groups(n) groups, the same blocks in the same order, the same
// tree): the fused results are bitwise those of the unfused sequence.
// Launch: G = reduction_groups(n) work-groups of WG.
// ---------------------------------------------------------------------------
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void vec_cg_update(__global real *restrict r, __global real *restrict x,
                   __global const real *p, __global const real *q,
                   __global const real *d, __global real *restrict z,
                   const ulong n, const real a, const real na, const uint mode,
                   __global acc *restrict partials)
{
    __local acc l[2 * WG];
    const uint G = get_num_groups(0);
    const uint t = get_local_id(0);
    acc s0 = 0, s1 = 0;
    const ulong blocks = (n + VW - 1) / VW;
    for (ulong b = get_global_id(0); b < blocks; b += (ulong)G * WG) {
        const ulong i = VW * b;
        if (i + VW <= n) {
            STOREV(x, i, LOADV(x, i) + a * LOADV(p, i));
            const realv rv = LOADV(r, i) + na * LOADV(q, i);
            STOREV(r, i, rv);
            DOTV(s0, rv, rv)
            if (mode == 2) {
                const realv zv = LOADV(d, i) * rv;
                STOREV(z, i, zv);
                DOTV(s1, rv, zv)
            }
        } else {
            for (ulong k = i; k < n; ++k) {
                x[k] = x[k] + a * p[k];
                const real rk = r[k] + na * q[k];
                r[k] = rk;
                const acc wk = rk;
                s0 += wk * (acc)rk;
                if (mode == 2) {
                    const real zk = d[k] * rk;
                    z[k] = zk;
                    s1 += wk * (acc)zk;
                }
            }
        }
    }
    if (mode == 0) return; // the same for the whole launch: no barrier skipped by some
    l[t] = s0;
    l[WG + t] = s1;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint h = WG / 2; h > 0; h >>= 1) {
        if (t < h) {
            for (uint j = 0; j < mode; ++j) l[j * WG + t] += l[j * WG + t + h];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (t < mode) partials[t * G + get_group_id(0)] = l[t * WG];
}
