/* gemm_geometry.h: launch geometry of a dense GEMM variant, written once and used by the tuner,
 * the runtime and the device checks. A variant is (dtype, BM, BN, BK, WM, WN, SK[, ST]); see
 * templates/abi/gemm.h for the argument struct and the split-K contract. */
#ifndef KT_GEMM_GEOMETRY_H
#define KT_GEMM_GEOMETRY_H

#include "../templates/abi/gemm.h"
#include "launch_dims.h"

typedef struct kt_gemm_variant {
    int bm, bn, bk;      /* workgroup tile */
    int wm, wn;          /* waves along M and N */
    int splitk;          /* K segments (grid.z); 1 = no partials, no reduce; 0 = stream-K
                            (two blocks a compute unit, templates/abi/gemm.h) */
    int stages;          /* ST axis: > 0 when the template keeps that many stages of the A and W
                            tiles in dynamic shared memory; 0 = static shared memory only */
} kt_gemm_variant;


/* Dynamic shared memory of a staged variant: ST stages of A[BM][BK] and W[BN][BK], 16-bit, and
 * 1 KiB over, so the kernel can start its ring on a 1024-byte boundary (the largest swizzle atom)
 * wherever the launch places it. The recipe's lds_bytes (lds_at_launch) is this same figure. */
#define KT_GEMM_STAGE_ALIGN 1024
static inline unsigned kt_gemm_dynamic_shared(const kt_gemm_variant *v)
{
    return v->stages > 0 ? (unsigned)(v->stages * (v->bm + v->bn) * v->bk * 2 + KT_GEMM_STAGE_ALIGN) : 0u;
}

/* Stream-K blocks on a device of `units` compute units: KT_GEMM_STREAMK_PER_UNIT each, within the
 * tile counters. Two, not one: measured on the H200 (bench/NOTES.md, run I), one 8-wave block an
 * SM streamed weights 7-25% slower than two co-resident blocks, which cover each other's load
 * latency at piece boundaries; the recipe admits only stream-K blocks small enough for two. */
#define KT_GEMM_STREAMK_PER_UNIT 2
static inline int kt_gemm_streamk_blocks(int units)
{
    long long b = (long long)KT_GEMM_STREAMK_PER_UNIT * (units < 1 ? 1 : units);
    return b > KT_GEMM_TILE_COUNTERS ? KT_GEMM_TILE_COUNTERS : (int)b;
}

/* Whether a launch of the variant needs the split-K workspace (slabs and tile counters). */
static inline int kt_gemm_uses_workspace(const kt_gemm_variant *v) { return v->splitk != 1; }

/* Main kernel: one workgroup per BM x BN output tile per K segment; stream-K: a fixed number per
 * compute unit of the device (`units`, as the device reports them). */
static inline kt_launch_dims kt_gemm_main_dims(const kt_gemm_variant *v, int m, int n, int wave_size, int units)
{
    kt_launch_dims d;
    d.grid[0] = (unsigned)((n + v->bn - 1) / v->bn);
    d.grid[1] = (unsigned)((m + v->bm - 1) / v->bm);
    d.grid[2] = (unsigned)v->splitk;
    if (v->splitk == 0) {
        d.grid[0] = (unsigned)kt_gemm_streamk_blocks(units);
        d.grid[1] = d.grid[2] = 1;
    }
    d.block[0] = (unsigned)(v->wm * v->wn * wave_size);
    d.block[1] = 1;
    d.block[2] = 1;
    d.shared = kt_gemm_dynamic_shared(v);
    return d;
}

/* Reduce kernel (<name>_reduce, only when splitk > 1): one thread per output element,
 * KT_GEMM_REDUCE_THREADS per block. */
#define KT_GEMM_REDUCE_THREADS 256
static inline kt_launch_dims kt_gemm_reduce_dims(int m, int n)
{
    long long total = (long long)m * n;
    kt_launch_dims d;
    d.grid[0] = (unsigned)((total + KT_GEMM_REDUCE_THREADS - 1) / KT_GEMM_REDUCE_THREADS);
    d.grid[1] = 1;
    d.grid[2] = 1;
    d.block[0] = KT_GEMM_REDUCE_THREADS;
    d.block[1] = 1;
    d.block[2] = 1;
    d.shared = 0;
    return d;
}

/* fp32-sized elements of split-K workspace a launch needs: the slabs and the tile counters
 * (templates/abi/gemm.h), which sit in the workspace's last KT_GEMM_TILE_COUNTERS words. */
static inline long long kt_gemm_partials_needed(const kt_gemm_variant *v, int m, int n, int units)
{
    if (v->splitk == 0)
        return 2LL * kt_gemm_streamk_blocks(units) * v->bm * v->bn + KT_GEMM_TILE_COUNTERS;
    return v->splitk > 1 ? (long long)v->splitk * m * n + KT_GEMM_TILE_COUNTERS : 0;
}

/* Bytes at the start of a workspace of `elems` elements that slabs may use (and a verifier may
 * poison); the rest are the tile counters, which must stay zero between launches. */
static inline long long kt_gemm_slab_bytes(long long elems)
{
    return elems > KT_GEMM_TILE_COUNTERS ? (elems - KT_GEMM_TILE_COUNTERS) * 4 : 0;
}

#endif
