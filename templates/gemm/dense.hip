/* dense.hip: C[M,N] = A[M,K] . W[N,K]^T, bf16 or fp16 in and out, fp32 accumulate.
 * ABI and split-K contract: templates/abi/gemm.h; launch geometry: runtime/gemm_geometry.h.
 *
 * Instantiated by a generated source that includes the target's prelude (templates/arch/) and
 * defines KT_KERNEL_NAME, KT_DTYPE (bf16|fp16), KT_BM, KT_BN, KT_BK, KT_WM, KT_WN, KT_SK.
 *
 * Algorithm. Block (x, y, z) owns the BM x BN tile at (y*BM, x*BN) and the K segment z. Per
 * BK step it stages A[BM][BK] and W[BN][BK] in LDS, each row padded by 8 elements (16 bytes: keeps
 * every fragment read aligned, and staggers rows across banks). Each of the WM x WN waves owns a
 * (BM/WM) x (BN/WN) sub-tile held as FM x FN 16x16 fp32 accumulators in registers. The next BK
 * step's global loads are issued into registers before the current step's matrix work, so their
 * latency hides behind it with a single LDS buffer. Out-of-range rows and k are zero-filled in
 * LDS (zeros add nothing to the dot products), so ragged M, N, K need no special inner loop.
 * Global reads are 16 bytes when the matrix's base and leading dimension allow it: with no tests
 * at all for an interior tile, per 8-element chunk at the edges, and element by element for a
 * chunk that straddles an edge or a matrix that is not 16-byte aligned. SK = 1 converts and
 * stores C with bounds checks; SK > 1 stores fp32 partials, and <name>_reduce sums them in
 * segment order. */
#include "abi/gemm.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

#define KT_THREADS (KT_WM * KT_WN * KT_WAVE)

namespace {

constexpr int kFM = KT_BM / (16 * KT_WM);   /* 16x16 fragments per wave along M */
constexpr int kFN = KT_BN / (16 * KT_WN);   /* ... along N */
constexpr int kLd = KT_BK + 8;              /* LDS row pitch in elements */
constexpr int kChunksPerRow = KT_BK / 8;    /* 16-byte chunks per tile row */
constexpr int kAIters = (KT_BM * kChunksPerRow + KT_THREADS - 1) / KT_THREADS;   /* chunks a thread */
constexpr int kWIters = (KT_BN * kChunksPerRow + KT_THREADS - 1) / KT_THREADS;

static_assert(KT_BM % (16 * KT_WM) == 0 && KT_BN % (16 * KT_WN) == 0, "tile not divisible by waves");
static_assert(KT_BK % 16 == 0, "BK must be a multiple of 16");
static_assert(KT_SK >= 1, "SK >= 1");

/* Staging of one tile (kRows x BK) of a row-major matrix: global -> registers (kIters 16-byte
 * chunks per thread) -> LDS. Chunk c is row c / (BK/8), k offset 8 * (c % (BK/8)). */
template <int kRows>
KT_DEV bool kt_chunk_live(int c)
{
    return (kRows * kChunksPerRow) % KT_THREADS == 0 || c < kRows * kChunksPerRow;
}

/* Rows [0, kRows) x k [k0, k0+BK) of the tile at g; rows >= rows and k >= k_len read as 0.
 * A thread's chunks share one column and sit kRowStep rows apart, so every address is one
 * per-thread pointer plus a wave-uniform offset: no per-chunk 64-bit pointers stay live. */
template <int kRows, int kIters>
KT_DEV void kt_stage_load(kt_v16 (&r)[kIters], const unsigned short *g, int ld, bool vec_ok,
                          int rows, int k0, int k_len, int tid)
{
    constexpr int kRowStep = KT_THREADS / kChunksPerRow;
    static_assert(KT_THREADS % kChunksPerRow == 0, "chunks of a thread share a column");
    const int row0 = tid / kChunksPerRow;
    const int k = k0 + (tid % kChunksPerRow) * 8;
    const unsigned short *p0 = g + (long long)row0 * ld + k;
    if (vec_ok && rows >= kRows && k0 + KT_BK <= k_len) {   /* interior tile: no per-chunk tests */
#pragma unroll
        for (int it = 0; it < kIters; it++)
            if (kt_chunk_live<kRows>(tid + it * KT_THREADS)) r[it] = kt_ldg16(p0 + (long long)(it * kRowStep) * ld);
        return;
    }
#pragma unroll
    for (int it = 0; it < kIters; it++) {
        if (!kt_chunk_live<kRows>(tid + it * KT_THREADS)) continue;
        const int row = row0 + it * kRowStep;
        const unsigned short *p = p0 + (long long)(it * kRowStep) * ld;
        if (row < rows && vec_ok && k + 8 <= k_len) {
            r[it] = kt_ldg16(p);
        } else {
            unsigned w[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                unsigned lo = (row < rows && k + 2 * j < k_len) ? p[2 * j] : 0u;
                unsigned hi = (row < rows && k + 2 * j + 1 < k_len) ? p[2 * j + 1] : 0u;
                w[j] = lo | (hi << 16);
            }
            r[it] = kt_v16_make(w[0], w[1], w[2], w[3]);
        }
    }
}

template <int kRows, int kIters>
KT_DEV void kt_stage_store(const kt_v16 (&r)[kIters], unsigned short *lds, int tid)
{
#pragma unroll
    for (int it = 0; it < kIters; it++) {
        const int c = tid + it * KT_THREADS;
        if (!kt_chunk_live<kRows>(c)) continue;
        kt_sts16(lds + (c / kChunksPerRow) * kLd + (c % kChunksPerRow) * 8, r[it]);
    }
}

/* 16-byte global reads need the base 16-byte aligned and every row start too (ld % 8 == 0). */
KT_DEV bool kt_vec16_ok(const void *p, int ld)
{
    return ((long long)p & 15) == 0 && (ld & 7) == 0;
}

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_THREADS)(kt_gemm_args args)
{
    alignas(16) KT_SHARED unsigned short lds_a[KT_BM * kLd];
    alignas(16) KT_SHARED unsigned short lds_w[KT_BN * kLd];

    const int tid = kt_thread_id();
    const int lane = kt_lane_id();
    const int wave = kt_wave_id();
    const int wave_m = (wave / KT_WN) * (kFM * 16);   /* wave's sub-tile origin in the block tile */
    const int wave_n = (wave % KT_WN) * (kFN * 16);
    const int m0 = kt_block_id_y() * KT_BM;
    const int n0 = kt_block_id_x() * KT_BN;
    const int z = KT_SK > 1 ? kt_block_id_z() : 0;

    /* This segment's K range [k_begin, k_begin + k_len); empty (k_len <= 0) when K is short and z
     * is high: then it stores zeros, which the reduce needs (every slab is summed). */
    const int k_begin = KT_SK > 1 ? z * args.k_per_split : 0;
    const int k_len = KT_SK > 1 ? (args.k - k_begin < args.k_per_split ? args.k - k_begin : args.k_per_split)
                                : args.k;

    /* The block's A and W rows from column k_begin; the loop below only sees offsets from here.
     * k_begin is a multiple of BK (so of 8): the 16-byte alignment test holds for the original. */
    const unsigned short *ga = (const unsigned short *)args.a + (long long)m0 * args.lda + k_begin;
    const unsigned short *gw = (const unsigned short *)args.w + (long long)n0 * args.ldw + k_begin;
    const bool a_vec = kt_vec16_ok(args.a, args.lda);
    const bool w_vec = kt_vec16_ok(args.w, args.ldw);
    const int a_rows = args.m - m0, w_rows = args.n - n0;

    kt_acc acc[kFM][kFN];
#pragma unroll
    for (int i = 0; i < kFM; i++)
#pragma unroll
        for (int j = 0; j < kFN; j++) kt_acc_zero(acc[i][j]);

    kt_v16 ra[kAIters], rw[kWIters];
    if (k_len > 0) {
        kt_stage_load<KT_BM>(ra, ga, args.lda, a_vec, a_rows, 0, k_len, tid);
        kt_stage_load<KT_BN>(rw, gw, args.ldw, w_vec, w_rows, 0, k_len, tid);
    }

    for (int k0 = 0; k0 < k_len; k0 += KT_BK) {
        kt_stage_store<KT_BM>(ra, lds_a, tid);
        kt_stage_store<KT_BN>(rw, lds_w, tid);
        kt_barrier();
        if (k0 + KT_BK < k_len) {   /* prefetch the next step; lands while the matrix cores work */
            kt_stage_load<KT_BM>(ra, ga, args.lda, a_vec, a_rows, k0 + KT_BK, k_len, tid);
            kt_stage_load<KT_BN>(rw, gw, args.ldw, w_vec, w_rows, k0 + KT_BK, k_len, tid);
        }
#pragma unroll
        for (int kk = 0; kk < KT_BK; kk += 16) {
            kt_frag_a fa[kFM];
            kt_frag_b fb[kFN];
#pragma unroll
            for (int i = 0; i < kFM; i++) kt_load_a(fa[i], lds_a + (wave_m + 16 * i) * kLd + kk, kLd, lane);
#pragma unroll
            for (int j = 0; j < kFN; j++) kt_load_b(fb[j], lds_w + (wave_n + 16 * j) * kLd + kk, kLd, lane);
#pragma unroll
            for (int i = 0; i < kFM; i++)
#pragma unroll
                for (int j = 0; j < kFN; j++) kt_mma<kt_elem>(acc[i][j], fa[i], fb[j]);
        }
        kt_barrier();   /* everyone is done reading LDS before the next store overwrites it */
    }

    /* Epilogue: every accumulator element knows its (row, col) from the prelude's layout. */
    kt_elem *const c = (kt_elem *)args.c;
    float *const part = KT_SK > 1 ? args.partials + (long long)z * args.m * args.n : 0;
    const int row0 = m0 + wave_m, col0 = n0 + wave_n;
#pragma unroll
    for (int i = 0; i < kFM; i++)
#pragma unroll
        for (int j = 0; j < kFN; j++)
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++) {
                const int row = row0 + 16 * i + kt_acc_row(lane, e);
                const int col = col0 + 16 * j + kt_acc_col(lane, e);
                if (row >= args.m || col >= args.n) continue;
                const float v = kt_acc_get(acc[i][j], e);
                if (KT_SK == 1)
                    c[(long long)row * args.ldc + col] = kt_from_float<kt_elem>(v);
                else
                    part[(long long)row * args.n + col] = v;
            }
}

#if KT_SK > 1
/* Split-K finish: one thread per C element (256 per block: KT_GEMM_REDUCE_THREADS in
 * runtime/gemm_geometry.h), slabs summed in order z = 0..SK-1 so the result does
 * not depend on scheduling. Starts from slab 0 itself, not from +0.0, so a -0.0 sum survives. */
KT_KERNEL(KT_CAT(KT_KERNEL_NAME, _reduce), 256)(kt_gemm_args args)
{
    const long long slab = (long long)args.m * (long long)args.n;
    const long long idx = (long long)kt_block_id_x() * 256 + (long long)kt_thread_id();
    if (idx >= slab) return;
    float s = args.partials[idx];
#pragma unroll
    for (int z = 1; z < KT_SK; z++) s += args.partials[(long long)z * slab + idx];
    const long long row = idx / (long long)args.n, col = idx % (long long)args.n;
    ((kt_elem *)args.c)[row * (long long)args.ldc + col] = kt_from_float<kt_elem>(s);
}
#endif
