/* wgmma.hip: C[M,N] = A[M,K] . W[N,K]^T on Hopper's warpgroup matrix instruction (sm_90a only),
 * bf16 or fp16 in and out, fp32 accumulate. ABI: templates/abi/gemm.h (SK = 1: no partials);
 * launch geometry: runtime/gemm_geometry.h, reading the recipe's axes as
 *   BM  rows of A a block owns, 64 per warpgroup (WM = BM / 16 warps, WN = 1),
 *   BN  rows of W a block owns, the instruction's N (64, 128 or 256),
 *   BK  K per pipeline stage: 32 or 64 (rows of 64 or 128 bytes, the shared-memory swizzle),
 *   ST  pipeline stages, in dynamic shared memory (kt_gemm_dynamic_shared: ST * (BM + BN) * BK * 2
 *       bytes, which the launcher provides and opts in to past 48 KiB).
 *
 * Why: mma.sync (dense.hip) reaches about a third of cuBLAS on the H200 at prefill sizes; the
 * warpgroup instruction reads both operands from shared memory itself, so the warps only move
 * data and the register file holds nothing but accumulators.
 *
 * Algorithm. Shared memory is a ring of ST stages, each the A[BM][BK] and W[BN][BK] tiles in the
 * swizzled K-major layout of arch/sm90_async.h. Every thread copies its share of a stage with
 * cp.async (zero-filling rows past M or N and k past K, so ragged shapes need no special loop;
 * element by element when a matrix is not 16-byte aligned). Per K tile t: wait for tile t's
 * copies, fence them into the async proxy, barrier; start the copies of tile t + ST - 2 into the
 * stage of tile t - 2 (every warpgroup waited for its tile t - 2 matrix work before the barrier);
 * issue BK/16 wgmmas on tile t's stage and wait only for tile t - 1's, so the matrix units always
 * have the next tile queued. The copies run ST - 2 tiles ahead under the matrix work.
 * Blocks are visited in groups of kGroupM tile rows (block id remapped, grid unchanged), so the
 * blocks resident at once share A rows and W columns in L2. The epilogue converts and stores
 * straight from the accumulators, two elements at a time where C allows it. */
#include "abi/gemm.h"
#include "arch/sm90_async.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

#define KT_THREADS (KT_WM * KT_WN * KT_WAVE)

namespace {

constexpr int kWarpgroups = KT_BM / 64;
constexpr int kRowBytes = KT_BK * 2;                        /* one tile row: the swizzle width */
constexpr int kChunksPerRow = KT_BK / 8;
constexpr int kABytes = KT_BM * kRowBytes, kWBytes = KT_BN * kRowBytes;
constexpr int kStageBytes = kABytes + kWBytes;
constexpr int kStages = KT_ST;
constexpr int kRowStep = KT_THREADS / kChunksPerRow;        /* rows between a thread's chunks */
constexpr int kAIters = KT_BM / kRowStep, kWIters = KT_BN / kRowStep;
constexpr int kAcc = KT_BN / 2;                             /* fp32 accumulators a thread */
constexpr int kGroupM = 8;

static_assert(KT_BM % 64 == 0 && KT_WM == KT_BM / 16 && KT_WN == 1, "one warpgroup per 64 rows");
static_assert(KT_BN == 64 || KT_BN == 128 || KT_BN == 256, "BN is a wgmma N this file instantiates");
static_assert(KT_BK == 32 || KT_BK == 64, "BK: 64- or 128-byte swizzled rows");
static_assert(KT_SK == 1, "no split-K");
static_assert(kStages >= 3, "a stage copied, one in the matrix units, one queued behind it");
static_assert(KT_BM % kRowStep == 0 && KT_BN % kRowStep == 0 && kRowStep % 8 == 0,
              "a thread's chunks share a column and a swizzle phase");

/* One matrix's share of a stage for this thread: rows row0 + i * kRowStep, k chunk kc8..kc8+7. */
struct kt_copier {
    const unsigned short *src;   /* element (row0, kc8) of the block's rows */
    const unsigned short *safe;  /* a valid address to name when nothing is read */
    long long step;              /* elements between the thread's rows: kRowStep * ld */
    int row0, kc8, rows;         /* first row (block-relative), its k, valid rows of the block */
    unsigned dst;                /* swizzled byte offset of (row0, kc8) in the tile */
    bool vec;
};

KT_DEV kt_copier kt_copier_make(const unsigned short *base, int ld, int rows, int tid)
{
    kt_copier c;
    c.row0 = tid / kChunksPerRow;
    c.kc8 = (tid % kChunksPerRow) * 8;
    c.src = base + (long long)c.row0 * ld + c.kc8;
    c.safe = base;
    c.step = (long long)kRowStep * ld;
    c.rows = rows;
    c.dst = kt_swz_offset(c.row0, c.kc8 / 8, kRowBytes);
    c.vec = ((long long)base & 15) == 0 && (ld & 7) == 0;
    return c;
}

/* The thread's kIters chunks at K offset k0 into the tile at shared address tile: rows past
 * c.rows and k past k_len are zeros. */
template <int kIters>
KT_DEV void kt_copy_tile(const kt_copier &c, unsigned tile, int k0, int k_len)
{
    const int left = k_len - k0 - c.kc8;                     /* elements of the chunk inside K */
    const int bytes = left >= 8 ? 16 : left > 0 ? 2 * left : 0;
#pragma unroll
    for (int i = 0; i < kIters; i++) {
        const bool live = c.row0 + i * kRowStep < c.rows;
        const unsigned short *p = c.src + k0 + i * c.step;
        const unsigned dst = tile + c.dst + (unsigned)(i * kRowStep * kRowBytes);
        if (c.vec) {
            kt_cp_async16(dst, live && bytes ? p : c.safe, live ? bytes : 0);
        } else {
            unsigned w[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned lo = live && 2 * j < left ? p[2 * j] : 0u;
                const unsigned hi = live && 2 * j + 1 < left ? p[2 * j + 1] : 0u;
                w[j] = lo | (hi << 16);
            }
            kt_sts16_addr(dst, kt_v16_make(w[0], w[1], w[2], w[3]));
        }
    }
}

/* Block (x, y) of the launch -> output tile (tile_n, tile_m), walking kGroupM tile rows at a time
 * so that the blocks in flight together reuse each other's A rows and W columns in L2. */
KT_DEV void kt_tile_of_block(int &tile_m, int &tile_n)
{
    const int tiles_n = (int)gridDim.x, tiles_m = (int)gridDim.y;
    const int id = kt_block_id_y() * tiles_n + kt_block_id_x();
    const int group = id / (kGroupM * tiles_n);
    const int first = group * kGroupM;
    const int rows = tiles_m - first < kGroupM ? tiles_m - first : kGroupM;
    const int in = id - group * kGroupM * tiles_n;
    tile_m = first + in % rows;
    tile_n = in / rows;
}

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_THREADS)(kt_gemm_args args)
{
    extern __shared__ __align__(16) unsigned char ring[];   /* kStages * kStageBytes + 1 KiB, at launch */

    const int tid = kt_thread_id();
    const int lane = kt_lane_id();
    const int warpgroup = tid / 128;
    const int warp = kt_wave_id() % 4;
    int tile_m, tile_n;
    kt_tile_of_block(tile_m, tile_n);
    const int m0 = tile_m * KT_BM, n0 = tile_n * KT_BN;

    const kt_copier ca = kt_copier_make((const unsigned short *)args.a + (long long)m0 * args.lda, args.lda,
                                        args.m - m0, tid);
    const kt_copier cw = kt_copier_make((const unsigned short *)args.w + (long long)n0 * args.ldw, args.ldw,
                                        args.n - n0, tid);
    const unsigned ring0 = (kt_smem_addr(ring) + 1023u) & ~1023u;   /* swizzle atoms are 1 KiB-aligned */
    const int k_len = args.k;
    const int tiles = (k_len + KT_BK - 1) / KT_BK;

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; i++) acc[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < kStages - 2; s++) {
        if (s < tiles) {
            kt_copy_tile<kAIters>(ca, ring0 + s * kStageBytes, s * KT_BK, k_len);
            kt_copy_tile<kWIters>(cw, ring0 + s * kStageBytes + kABytes, s * KT_BK, k_len);
        }
        kt_cp_async_commit();
    }

    for (int t = 0; t < tiles; t++) {
        kt_cp_async_wait<kStages - 3>();   /* this thread's copies of tile t have landed */
        kt_fence_proxy_async();
        kt_barrier();                      /* everyone's have; tile t - 2's stage is free */
        const int next = t + kStages - 2;
        if (next < tiles) {
            const unsigned st = ring0 + (next % kStages) * kStageBytes;
            kt_copy_tile<kAIters>(ca, st, next * KT_BK, k_len);
            kt_copy_tile<kWIters>(cw, st + kABytes, next * KT_BK, k_len);
        }
        kt_cp_async_commit();              /* (empty past the end: keeps the group count uniform) */

        const unsigned st = ring0 + (t % kStages) * kStageBytes;
        const unsigned a_tile = st + warpgroup * 64 * kRowBytes, w_tile = st + kABytes;
        kt_wgmma_fence_acc(acc);
        kt_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KT_BK; kk += 16)
            kt_wgmma_op<kt_elem, KT_BN>::run(acc, kt_wgmma_desc(a_tile + kk * 2, kRowBytes),
                                              kt_wgmma_desc(w_tile + kk * 2, kRowBytes));
        kt_wgmma_commit();
        kt_wgmma_wait<1>();                /* tile t - 1's are done; tile t's stay queued */
    }
    kt_wgmma_wait<0>();
    kt_wgmma_fence_acc(acc);

    /* Epilogue: d[4j + 2h + e] is row 16 * warp + lane / 4 + 8h, column 8j + 2 (lane % 4) + e of
     * the warpgroup's 64 x BN tile. */
    kt_elem *const c = (kt_elem *)args.c;
    const bool pair = ((long long)args.c & 3) == 0 && (args.ldc & 1) == 0;
    const int row_base = m0 + warpgroup * 64 + 16 * warp + lane / 4;
    const int col_base = n0 + 2 * (lane % 4);
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int row = row_base + 8 * h;
        if (row >= args.m) continue;
        kt_elem *const crow = c + (long long)row * args.ldc;
#pragma unroll
        for (int j = 0; j < KT_BN / 8; j++) {
            const int col = col_base + 8 * j;
            const kt_elem lo = kt_from_float<kt_elem>(acc[4 * j + 2 * h]);
            const kt_elem hi = kt_from_float<kt_elem>(acc[4 * j + 2 * h + 1]);
            if (pair && col + 1 < args.n) {
                *(unsigned *)(crow + col) = (unsigned)lo.bits | ((unsigned)hi.bits << 16);
            } else {
                if (col < args.n) crow[col] = lo;
                if (col + 1 < args.n) crow[col + 1] = hi;
            }
        }
    }
}
