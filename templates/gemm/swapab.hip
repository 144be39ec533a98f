/* swapab.hip: C[M,N] = A[M,K] . W[N,K]^T for decode-sized M on the matrix units, one launch.
 * ABI: templates/abi/gemm.h (split-K reduced in the launch: no reduce kernel); launch geometry:
 * runtime/gemm_geometry.h, reading the recipe's axes as
 *   BM  tokens a block owns: 8 (M <= 8: the upper half of the 16-token fragment is known zero,
 *       so it costs neither loads nor registers) or a multiple of 16 (grid.y = ceil(M/BM)),
 *   BN  weight rows a block owns, a multiple of 16 (grid.x = ceil(N/BN)),
 *   WM  waves of the block; they split K between them, WN = 1,
 *   SK  K segments, one a block along grid.z; the last block to finish a tile adds the segments'
 *       slabs in order and writes C, in the same launch (no reduce kernel; templates/abi/gemm.h);
 *       0 = stream-K: a fixed grid per compute unit, each block an equal share of all tiles' K
 *       steps, split tiles finished by the last block to arrive (templates/abi/gemm.h),
 *   BK  K a wave streams per step, a multiple of the prelude's direct span.
 *
 * Why: at M <= 16 a GEMM is a weight stream. The vector-unit kernel (skinny.hip) spends BM FMAs a
 * weight element and binds on arithmetic past M ~ 4; the dense tiles stage W through LDS behind
 * barriers and split K over a second launch. Here the operands are swapped, C^T = W . A^T, so the
 * weights are the MMA's 16-row operand and the tokens its 16 columns (padding is on the token
 * side, where it costs no memory traffic), and both operands go from global memory straight into
 * fragment registers ("direct fragments": the prelude relabels k so each lane's share is whole
 * 16-byte chunks, the same relabelling for both operands, docs/templates.md). Every weight load
 * of a step is issued before any MMA, and the next step's before this step's MMAs (register double
 * buffering); waves split K, then reduce through LDS. Ragged M, N, K and unaligned rows are
 * served: a chunk that is not 16-byte loadable is read element by element. */
#include "abi/gemm.h"
#include "gemm/chunk.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

#define KT_THREADS (KT_WM * KT_WAVE)

namespace {

constexpr int kTilesN = KT_BN / 16;                 /* 16-row weight tiles a wave multiplies */
constexpr int kTilesM = (KT_BM + 15) / 16;          /* 16-token column tiles */
constexpr int kUnroll = KT_BK / kt_direct_span;     /* spans a wave has in flight per step */
constexpr int kChunks = kt_direct_chunks;

static_assert(KT_SK >= 0, "split-K segments (0: stream-K)");
static_assert(KT_WN == 1, "swap-AB GEMM: waves split K only");
static_assert(KT_BN % 16 == 0 && (KT_BM == 8 || KT_BM % 16 == 0), "BN is whole 16-wide fragments, BM 8 or whole");
static_assert(kUnroll >= 1 && KT_BK % kt_direct_span == 0, "BK is a whole number of direct spans");

/* Where this lane reads, fixed for the whole K loop. Token rows past M read zeros (aok); weight
 * rows past N are clamped to a real row (their sums are never written), so weight loads need no
 * predicate. Whole steps address by a 32-bit element offset from the operand's (uniform) base:
 * one register a chunk instead of a 64-bit pointer, and on AMD the base+offset+immediate form of
 * the load (kt_rows_off32 says the operands are small enough); the tail rebuilds 64-bit
 * addresses from the row numbers. */
struct kt_rows {
    const unsigned short *w, *a;         /* operand bases */
    int ldw, lda;
    int wrow[kTilesN][kChunks], arow[kTilesM][kChunks];
    unsigned wofs[kTilesN][kChunks], aofs[kTilesM][kChunks];   /* row * ld + the chunk's k */
    bool aok[kTilesM][kChunks];
    int k[kChunks];
};

KT_DEV bool kt_rows_off32(const kt_gemm_args &args)
{
    return (long long)args.n * args.ldw < (1LL << 31) && (long long)args.m * args.lda < (1LL << 31);
}

/* 16 bytes at element offset ofs (+ k) of base, the offset taken as 32-bit unsigned bytes. */
KT_DEV kt_v16 kt_ldg16_at(const unsigned short *base, unsigned ofs, int k)
{
    return kt_ldg16((const char *)base + (unsigned)((ofs + (unsigned)k) * 2u));
}

template <int kSpans> using kt_weights = kt_v16[kSpans][kTilesN][kChunks];

/* A step's weight chunks, every span and tile issued before any is used: they are what must be in
 * flight. kWhole: the step lies inside K, the operand allows 16-byte loads and 32-bit offsets, so
 * each chunk is one plain load (every step but a ragged tail or an unusual operand). */
template <bool kWhole, int kSpans>
KT_DEV void kt_load_weights(kt_weights<kSpans> &wv, const kt_rows &r, int k0, int len, bool w_vec)
{
#pragma unroll
    for (int t = 0; t < kTilesN; t++)
#pragma unroll
        for (int c = 0; c < kChunks; c++) {
            if (kWhole) {
                /* one address a chunk row; the spans are immediate offsets from it */
                const unsigned short *p = (const unsigned short *)((const char *)r.w + (unsigned)((r.wofs[t][c] + (unsigned)k0) * 2u));
#pragma unroll
                for (int u = 0; u < kSpans; u++) wv[u][t][c] = kt_ldg16(p + u * kt_direct_span);
            } else {
                const unsigned short *row = r.w + (long long)r.wrow[t][c] * r.ldw;
#pragma unroll
                for (int u = 0; u < kSpans; u++)
                    wv[u][t][c] = kt_chunk(row, k0 + u * kt_direct_span + r.k[c], len, w_vec);
            }
        }
}

/* A step's MMAs over weights already loaded. Each span's token chunks are read just before its
 * MMAs: they come from L1/L2, and holding them for the whole step would take as many registers
 * as the weights. */
template <bool kWhole, int kSpans>
KT_DEV void kt_mma_step(kt_acc (&acc)[kTilesN][kTilesM], const kt_weights<kSpans> &wv, const kt_rows &r, int k0,
                        int len, bool a_vec)
{
#pragma unroll
    for (int u = 0; u < kSpans; u++) {
        kt_v16 av[kTilesM][kChunks];
#pragma unroll
        for (int c = 0; c < kChunks; c++)
#pragma unroll
            for (int t = 0; t < kTilesM; t++) {
                const int k = k0 + u * kt_direct_span;
                av[t][c] = !r.aok[t][c] ? kt_v16_make(0u, 0u, 0u, 0u)
                           : kWhole     ? kt_ldg16_at(r.a, r.aofs[t][c], k)
                                        : kt_chunk(r.a + (long long)r.arow[t][c] * r.lda, k + r.k[c], len, a_vec);
            }
#pragma unroll
        for (int s = 0; s < kt_direct_steps; s++) {
            kt_frag_b xb[kTilesM];
#pragma unroll
            for (int j = 0; j < kTilesM; j++) kt_frag_b_direct(xb[j], av[j], s);
#pragma unroll
            for (int i = 0; i < kTilesN; i++) {
                kt_frag_a wa;
                kt_frag_a_direct(wa, wv[u][i], s);
#pragma unroll
                for (int j = 0; j < kTilesM; j++) kt_mma<kt_elem>(acc[i][j], wa, xb[j]);
            }
        }
    }
}

/* The waves' sums of the tile at (n0, m0) over K [kbeg, kend): wave q's into partial[q], as
 * [token * BN + weight row]. Each wave streams every WM-th BK step from kbeg. */
KT_DEV void kt_tile_sums(float (*partial)[KT_BM * KT_BN], const kt_gemm_args &args, int n0, int m0, int kbeg,
                         int kend, bool a_vec, bool w_vec)
{
    const int lane = kt_lane_id();
    const int wave = kt_wave_id();
    const int rows_n = args.n - n0 < KT_BN ? args.n - n0 : KT_BN;
    const int rows_m = args.m - m0 < KT_BM ? args.m - m0 : KT_BM;

    kt_rows rows;
    rows.w = (const unsigned short *)args.w;
    rows.a = (const unsigned short *)args.a;
    rows.ldw = args.ldw;
    rows.lda = args.lda;
#pragma unroll
    for (int c = 0; c < kChunks; c++) {
        rows.k[c] = kt_direct_k(lane, c);
#pragma unroll
        for (int t = 0; t < kTilesN; t++) {
            const int r = t * 16 + kt_direct_row(lane, c);
            rows.wrow[t][c] = n0 + (r < rows_n ? r : rows_n - 1);
            rows.wofs[t][c] = (unsigned)rows.wrow[t][c] * (unsigned)args.ldw + (unsigned)rows.k[c];
        }
#pragma unroll
        for (int t = 0; t < kTilesM; t++) {
            const int r = t * 16 + kt_direct_row(lane, c);
            rows.aok[t][c] = (KT_BM >= 16 || r < KT_BM) && r < rows_m;   /* BM = 8: rows 8-15 fold to zero */
            rows.arow[t][c] = m0 + (rows.aok[t][c] ? r : 0);
            rows.aofs[t][c] = (unsigned)rows.arow[t][c] * (unsigned)args.lda + (unsigned)rows.k[c];
        }
    }

    kt_acc acc[kTilesN][kTilesM];
#pragma unroll
    for (int i = 0; i < kTilesN; i++)
#pragma unroll
        for (int j = 0; j < kTilesM; j++) kt_acc_zero(acc[i][j]);

    /* Whole steps, software-pipelined: the next step's weights are issued before this step's
     * MMAs, so a wave always has a step of loads in flight and a shape whose waves stream only a
     * few steps of K pays about one memory latency, not one a step. */
    const int stride = KT_WM * KT_BK;
    int k0 = kbeg + wave * KT_BK;
    if (a_vec && w_vec && kt_rows_off32(args) && k0 + KT_BK <= kend) {
        /* two buffers used in turn (no register copies): fill one while the other is multiplied */
        kt_weights<kUnroll> ping, pong;
        kt_load_weights<true, kUnroll>(ping, rows, k0, kend, true);
        for (;;) {
            bool more = k0 + stride + KT_BK <= kend;
            if (more) kt_load_weights<true, kUnroll>(pong, rows, k0 + stride, kend, true);
            kt_mma_step<true, kUnroll>(acc, ping, rows, k0, kend, true);
            k0 += stride;
            if (!more) break;
            more = k0 + stride + KT_BK <= kend;
            if (more) kt_load_weights<true, kUnroll>(ping, rows, k0 + stride, kend, true);
            kt_mma_step<true, kUnroll>(acc, pong, rows, k0, kend, true);
            k0 += stride;
            if (!more) break;
        }
    }
    /* the ragged tail, or every step when an operand cannot be read 16 bytes at a time */
    for (; k0 < kend; k0 += stride) {
        /* a span at a time: element-wise loads are many registers, and this runs once a wave */
#pragma unroll 1
        for (int u = 0; u < kUnroll && k0 + u * kt_direct_span < kend; u++) {
            kt_weights<1> wv;
            kt_load_weights<false, 1>(wv, rows, k0 + u * kt_direct_span, kend, w_vec);
            kt_mma_step<false, 1>(acc, wv, rows, k0 + u * kt_direct_span, kend, a_vec);
        }
    }

    /* accumulator element e of tile (i, j) is C^T[weight row][token] */
#pragma unroll
    for (int i = 0; i < kTilesN; i++)
#pragma unroll
        for (int j = 0; j < kTilesM; j++)
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++) {
                const int r = i * 16 + kt_acc_row(lane, e), t = j * 16 + kt_acc_col(lane, e);
                if (t < KT_BM) partial[wave][t * KT_BN + r] = kt_acc_get(acc[i][j], e);
            }
}

/* Element x of the tile: the waves' sums added in wave order. */
KT_DEV float kt_waves_sum(const float (*partial)[KT_BM * KT_BN], int x)
{
    float s = 0.0f;
#pragma unroll
    for (int q = 0; q < KT_WM; q++) s += partial[q][x];
    return s;
}

#if KT_SK == 0
/* Stream-K (templates/abi/gemm.h): the block's share of the T * U steps, a tile piece at a time. */
KT_DEV void kt_stream_k(float (*partial)[KT_BM * KT_BN], int *last_arrival, const kt_gemm_args &args, bool a_vec,
                        bool w_vec)
{
    kt_elem *const c = (kt_elem *)args.c;
    const int gx = (args.n + KT_BN - 1) / KT_BN, gy = (args.m + KT_BM - 1) / KT_BM;
    const int steps = (args.k + KT_BK - 1) / KT_BK;
    const long long total = (long long)gx * gy * steps;
    const int blocks = kt_gemm_streamk_working(total, kt_grid_blocks_x()), b = kt_block_id_x();
    if (b >= blocks) return;   /* more blocks than steps: a piece of every tile must have its block */
    unsigned *const counters = (unsigned *)(args.partials + args.partials_elems) - KT_GEMM_TILE_COUNTERS;
    const long long end = kt_gemm_streamk_start(total, blocks, b + 1);
    for (long long u = kt_gemm_streamk_start(total, blocks, b); u < end;) {
        const int tile = (int)(u / steps);
        const long long first = (long long)tile * steps;
        const int s0 = (int)(u - first), s1 = end - first < steps ? (int)(end - first) : steps;
        const int n0 = (tile % gx) * KT_BN, m0 = (tile / gx) * KT_BM;
        const int rows_n = args.n - n0 < KT_BN ? args.n - n0 : KT_BN;
        const int rows_m = args.m - m0 < KT_BM ? args.m - m0 : KT_BM;
        const int kend = s1 * KT_BK < args.k ? s1 * KT_BK : args.k;
        kt_tile_sums(partial, args, n0, m0, s0 * KT_BK, kend, a_vec, w_vec);
        kt_barrier();
        const int c0 = kt_gemm_streamk_owner(total, blocks, first);
        const int c1 = kt_gemm_streamk_owner(total, blocks, first + steps - 1);
        if (c0 == c1) {   /* the whole tile is this block's */
            for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) {
                const int t = x / KT_BN, r = x % KT_BN;
                if (t < rows_m && r < rows_n)
                    c[(long long)(m0 + t) * args.ldc + n0 + r] = kt_from_float<kt_elem>(kt_waves_sum(partial, x));
            }
        } else {
            /* this block's piece to its slab; the last of the tile's c1 - c0 + 1 blocks adds them */
            float *const slab = args.partials + (long long)kt_gemm_streamk_slab(total, blocks, b, c0, first) * (KT_BM * KT_BN);
            for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) slab[x] = kt_waves_sum(partial, x);
            kt_fence_device();
            kt_barrier();
            if (kt_thread_id() == 0)
                *last_arrival = kt_atomic_add_device(&counters[c0], 1u) + 1u == (unsigned)(c1 - c0 + 1);
            kt_barrier();
            if (*last_arrival) {
                kt_fence_device();
                for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) {
                    const int t = x / KT_BN, r = x % KT_BN;
                    if (t >= rows_m || r >= rows_n) continue;
                    float s = 0.0f;
                    for (int q = c0; q <= c1; q++)
                        s += kt_load_coherent(args.partials +
                                              (long long)kt_gemm_streamk_slab(total, blocks, q, c0, first) * (KT_BM * KT_BN) + x);
                    c[(long long)(m0 + t) * args.ldc + n0 + r] = kt_from_float<kt_elem>(s);
                }
                if (kt_thread_id() == 0) counters[c0] = 0u;   /* as the next launch expects it */
            }
        }
        kt_barrier();   /* partial is rewritten by the next piece */
        u = first + s1;
    }
}
#endif

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_THREADS)(kt_gemm_args args)
{
    /* [wave][token * BN + weight row]: the waves' partial sums, added in wave order */
    KT_SHARED float partial[KT_WM][KT_BM * KT_BN];
    KT_SHARED int last_arrival;   /* split-K: this block reduces its tile's segments */

    const bool a_vec = kt_vec16_ok(args.a, args.lda);
    const bool w_vec = kt_vec16_ok(args.w, args.ldw);
#if KT_SK == 0
    kt_stream_k(partial, &last_arrival, args, a_vec, w_vec);
#else
    const int n0 = kt_block_id_x() * KT_BN;
    const int m0 = kt_block_id_y() * KT_BM;
    const int rows_n = args.n - n0 < KT_BN ? args.n - n0 : KT_BN;
    const int rows_m = args.m - m0 < KT_BM ? args.m - m0 : KT_BM;
    /* the block streams its K segment (the whole of K when SK = 1) */
    const int kbeg = KT_SK > 1 ? kt_block_id_z() * args.k_per_split : 0;
    const int kend = KT_SK > 1 && kbeg + args.k_per_split < args.k ? kbeg + args.k_per_split : args.k;
    kt_tile_sums(partial, args, n0, m0, kbeg, kend, a_vec, w_vec);
    kt_barrier();
    kt_elem *const c = (kt_elem *)args.c;
    if (KT_SK == 1) {
        for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) {
            const int t = x / KT_BN, r = x % KT_BN;
            if (t >= rows_m || r >= rows_n) continue;
            c[(long long)(m0 + t) * args.ldc + n0 + r] = kt_from_float<kt_elem>(kt_waves_sum(partial, x));
        }
        return;
    }

    /* Split-K in the launch (templates/abi/gemm.h): this segment's sums to its slab, then the
     * block that arrives last at the tile's counter adds the slabs in segment order and writes C. */
    const long long mn = (long long)args.m * args.n;
    float *const slab = args.partials + kt_block_id_z() * mn;
    for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) {
        const int t = x / KT_BN, r = x % KT_BN;
        if (t >= rows_m || r >= rows_n) continue;
        slab[(long long)(m0 + t) * args.n + n0 + r] = kt_waves_sum(partial, x);
    }
    kt_fence_device();
    kt_barrier();
    const int gx = (args.n + KT_BN - 1) / KT_BN, gy = (args.m + KT_BM - 1) / KT_BM;
    const int tiles = gx * gy, word = (kt_block_id_y() * gx + kt_block_id_x()) % KT_GEMM_TILE_COUNTERS;
    unsigned *const counters = (unsigned *)(args.partials + args.partials_elems) - KT_GEMM_TILE_COUNTERS;
    if (kt_thread_id() == 0) {
        /* tiles share a counter only past KT_GEMM_TILE_COUNTERS of them; its last block reduces all */
        const unsigned sharing = (unsigned)((tiles - 1 - word) / KT_GEMM_TILE_COUNTERS + 1);
        last_arrival = kt_atomic_add_device(&counters[word], 1u) + 1u == sharing * KT_SK;
    }
    kt_barrier();
    if (!last_arrival) return;
    kt_fence_device();
    for (int tile = word; tile < tiles; tile += KT_GEMM_TILE_COUNTERS) {
        const int bn0 = (tile % gx) * KT_BN, bm0 = (tile / gx) * KT_BM;
        const int rn = args.n - bn0 < KT_BN ? args.n - bn0 : KT_BN;
        const int rm = args.m - bm0 < KT_BM ? args.m - bm0 : KT_BM;
        for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) {
            const int t = x / KT_BN, r = x % KT_BN;
            if (t >= rm || r >= rn) continue;
            const long long at = (long long)(bm0 + t) * args.n + bn0 + r;
            float s = 0.0f;
#pragma unroll
            for (int z = 0; z < KT_SK; z++) s += kt_load_coherent(args.partials + z * mn + at);
            c[(long long)(bm0 + t) * args.ldc + bn0 + r] = kt_from_float<kt_elem>(s);
        }
    }
    if (kt_thread_id() == 0) counters[word] = 0u;   /* as the next launch expects it */
#endif
}
