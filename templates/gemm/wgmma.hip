/* wgmma.hip: C[M,N] = A[M,K] . W[N,K]^T on Hopper's warpgroup matrix instruction (sm_90a only),
 * bf16 or fp16 in and out, fp32 accumulate. ABI: templates/abi/gemm.h (split-K reduced in the
 * launch: no reduce kernel); launch geometry: runtime/gemm_geometry.h. Two instantiations:
 *
 *   prefill (wgmma.lua): the instruction's 64-row operand is A: BM = 64 per warpgroup (WM = BM/16
 *       warps, WN = 1), BN = the instruction's N (64, 128 or 256);
 *   swap-AB (wgmma_swapab.lua, KT_WGMMA_SWAP): C^T = W . A^T, the 64-row operand is W, for decode:
 *       BN = 64 weight rows per warpgroup (WN = BN/16 warps, WM = 1), BM = tokens = the
 *       instruction's N (8 ... 64), so a small M costs neither loads nor idle matrix rows.
 *
 *   BK  K per pipeline stage, 64 (128-byte swizzled rows);
 *   ST  pipeline stages, in dynamic shared memory (kt_gemm_dynamic_shared: ST * (BM + BN) * BK * 2
 *       bytes + 1 KiB of alignment slack, which the launcher provides, opted in past 48 KiB);
 *   SK  K segments along grid.z; the last block to finish a tile adds the segments' fp32 slabs in
 *       order and writes C (templates/abi/gemm.h).
 *
 * Why: mma.sync (dense.hip) reaches about a third of cuBLAS on the H200 at prefill sizes, and the
 * register-fed decode kernel (swapab.hip) keeps too few bytes in flight per SM (bench/NOTES.md).
 * Here the warpgroup instruction reads both operands from shared memory itself, the warps only
 * move data, and the ring keeps ST - 2 stages of copies in flight.
 *
 * Algorithm. Shared memory is a ring of ST stages, each the X[64*warpgroups][BK] and Y[N][BK]
 * tiles (X = A, Y = W for prefill; X = W, Y = A swapped) in the swizzled K-major layout of
 * arch/sm90_async.h. Every thread copies its share of a stage with cp.async (zero-filling rows
 * past M or N and k past the segment, so ragged shapes need no special loop; element by element
 * when a matrix is not 16-byte aligned). Per K tile t: wait for tile t's copies, fence them into
 * the async proxy, barrier; start the copies of tile t + ST - 2 into the stage of tile t - 2 (every
 * warpgroup waited for its tile t - 2 matrix work before the barrier); issue BK/16 wgmmas on tile
 * t's stage and wait only for tile t - 1's, so the matrix units always have the next tile queued.
 * Prefill blocks are visited in groups of kGroupM tile rows (block id remapped, grid unchanged),
 * so the blocks resident at once share A rows and W columns in L2. The epilogue converts and
 * stores straight from the accumulators. */
#include "abi/gemm.h"
#include "arch/sm90_async.h"
#include "gemm/chunk.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

#ifndef KT_WGMMA_SWAP
#define KT_WGMMA_SWAP 0
#endif
#define KT_THREADS (KT_WM * KT_WN * KT_WAVE)

namespace {

constexpr bool kSwap = KT_WGMMA_SWAP != 0;
constexpr int kXRows = kSwap ? KT_BN : KT_BM;               /* the 64-row operand's rows a block */
constexpr int kYRows = kSwap ? KT_BM : KT_BN;               /* the instruction's N */
constexpr int kRowBytes = KT_BK * 2;                        /* one tile row: the swizzle width */
constexpr int kChunksPerRow = KT_BK / 8;
constexpr int kXBytes = kXRows * kRowBytes;
constexpr int kStageBytes = (kXRows + kYRows) * kRowBytes;
constexpr int kStages = KT_ST;
constexpr int kRowStep = KT_THREADS / kChunksPerRow;        /* rows between a thread's chunks */
constexpr int kAcc = kYRows / 2;                            /* fp32 accumulators a thread */
constexpr int kGroupM = 8;

static_assert(kXRows % 64 == 0 && KT_THREADS == 2 * kXRows, "one warpgroup per 64 rows of X");
static_assert(kSwap ? KT_WM == 1 : KT_WN == 1, "warps along the 64-row operand only");
static_assert(kYRows % 8 == 0 && kYRows <= 256, "N of the instruction");
static_assert(KT_BK == 64, "128-byte swizzled rows");
static_assert(kStages >= 3, "a stage copied, one in the matrix units, one queued behind it");
static_assert(kRowStep % 8 == 0, "a thread's rows share a swizzle phase");

/* One matrix's share of a stage for this thread: rows row0 + i * kRowStep of the tile's kRows,
 * k chunk kc8..kc8+7. */
struct kt_copier {
    const unsigned short *src;   /* element (row0, kc8) of the block's rows, segment start */
    const unsigned short *safe;  /* a valid address to name when nothing is read */
    long long step;              /* elements between the thread's rows: kRowStep * ld */
    int row0, kc8, rows;         /* first row (block-relative), its k, valid rows of the block */
    unsigned dst;                /* swizzled byte offset of (row0, kc8) in the tile */
    bool vec;
};

KT_DEV kt_copier kt_copier_make(const unsigned short *base, int ld, int rows, bool vec, int tid)
{
    kt_copier c;
    c.row0 = tid / kChunksPerRow;
    c.kc8 = (tid % kChunksPerRow) * 8;
    c.src = base + (long long)c.row0 * ld + c.kc8;
    c.safe = base;
    c.step = (long long)kRowStep * ld;
    c.rows = rows;
    c.dst = kt_swz_offset(c.row0, c.kc8 / 8, kRowBytes);
    c.vec = vec;
    return c;
}

/* The thread's chunks of a kRows-row tile at K offset k0 (of the segment's k_len) into the tile at
 * shared address tile: rows past c.rows and k past k_len are zeros. */
template <int kRows>
KT_DEV void kt_copy_tile(const kt_copier &c, unsigned tile, int k0, int k_len)
{
    constexpr int kIters = (kRows + kRowStep - 1) / kRowStep;
    const int left = k_len - k0 - c.kc8;                     /* elements of the chunk inside K */
    const int bytes = left >= 8 ? 16 : left > 0 ? 2 * left : 0;
#pragma unroll
    for (int i = 0; i < kIters; i++) {
        const int row = c.row0 + i * kRowStep;
        if (kRows % kRowStep != 0 && row >= kRows) break;   /* a tile shorter than the threads */
        const bool live = row < c.rows;
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

/* Block (x, y) of the launch -> output tile (tile_n, tile_m). Prefill walks kGroupM tile rows at a
 * time so that the blocks in flight together reuse each other's A rows and W columns in L2. */
KT_DEV void kt_tile_of_block(int &tile_m, int &tile_n)
{
    if (kSwap) { tile_m = kt_block_id_y(); tile_n = kt_block_id_x(); return; }
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
    KT_SHARED bool last_arrival;

    const int tid = kt_thread_id();
    const int lane = kt_lane_id();
    const int warpgroup = tid / 128;
    const int warp = kt_wave_id() % 4;
    int tile_m, tile_n;
    kt_tile_of_block(tile_m, tile_n);
    const int m0 = tile_m * KT_BM, n0 = tile_n * KT_BN;
    const int z = KT_SK > 1 ? kt_block_id_z() : 0;

    /* This segment's K range [k_begin, k_begin + k_len); empty when K is short and z is high: then
     * its slab is zeros, which the reduction needs (every slab is summed). k_begin is a multiple
     * of BK, so of 8: 16-byte alignment of the segment start follows from the matrix's. */
    const int k_begin = KT_SK > 1 ? z * args.k_per_split : 0;
    const int k_len = KT_SK > 1 ? (args.k - k_begin < args.k_per_split ? args.k - k_begin : args.k_per_split)
                                : args.k;
    const unsigned short *a = (const unsigned short *)args.a + (long long)m0 * args.lda + k_begin;
    const unsigned short *w = (const unsigned short *)args.w + (long long)n0 * args.ldw + k_begin;
    const bool a_vec = kt_vec16_ok(args.a, args.lda), w_vec = kt_vec16_ok(args.w, args.ldw);
    const kt_copier cx = kSwap ? kt_copier_make(w, args.ldw, args.n - n0, w_vec, tid)
                               : kt_copier_make(a, args.lda, args.m - m0, a_vec, tid);
    const kt_copier cy = kSwap ? kt_copier_make(a, args.lda, args.m - m0, a_vec, tid)
                               : kt_copier_make(w, args.ldw, args.n - n0, w_vec, tid);
    const unsigned ring0 = (kt_smem_addr(ring) + 1023u) & ~1023u;   /* swizzle atoms are 1 KiB-aligned */
    const int tiles = k_len > 0 ? (k_len + KT_BK - 1) / KT_BK : 0;

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; i++) acc[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < kStages - 2; s++) {
        if (s < tiles) {
            kt_copy_tile<kXRows>(cx, ring0 + s * kStageBytes, s * KT_BK, k_len);
            kt_copy_tile<kYRows>(cy, ring0 + s * kStageBytes + kXBytes, s * KT_BK, k_len);
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
            kt_copy_tile<kXRows>(cx, st, next * KT_BK, k_len);
            kt_copy_tile<kYRows>(cy, st + kXBytes, next * KT_BK, k_len);
        }
        kt_cp_async_commit();              /* (empty past the end: keeps the group count uniform) */

        const unsigned st = ring0 + (t % kStages) * kStageBytes;
        const unsigned x_tile = st + warpgroup * 64 * kRowBytes, y_tile = st + kXBytes;
        kt_wgmma_fence_acc(acc);
        kt_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < KT_BK; kk += 16)
            kt_wgmma_op<kt_elem, kYRows>::run(acc, kt_wgmma_desc(x_tile + kk * 2, kRowBytes),
                                               kt_wgmma_desc(y_tile + kk * 2, kRowBytes));
        kt_wgmma_commit();
        kt_wgmma_wait<1>();                /* tile t - 1's are done; tile t's stay queued */
    }
    kt_wgmma_wait<0>();
    kt_wgmma_fence_acc(acc);

    /* acc[4j + 2h + e] is D[xr][yc], xr = 16 warp + lane/4 + 8h of the warpgroup's 64 X rows and
     * yc = 8j + 2 (lane % 4) + e; D is C (prefill) or C^T (swap-AB). */
    const int xr0 = warpgroup * 64 + 16 * warp + lane / 4, yc0 = 2 * (lane % 4);
    kt_elem *const c = (kt_elem *)args.c;
    float *const slab = KT_SK > 1 ? args.partials + (long long)z * args.m * args.n : 0;
    const bool pair = !kSwap && KT_SK == 1 && ((long long)args.c & 3) == 0 && (args.ldc & 1) == 0;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int j = 0; j < kYRows / 8; j++) {
            const int xr = xr0 + 8 * h, yc = yc0 + 8 * j;
            const int row = kSwap ? m0 + yc : m0 + xr, col = kSwap ? n0 + xr : n0 + yc;
            const float v0 = acc[4 * j + 2 * h], v1 = acc[4 * j + 2 * h + 1];
            /* the pair e = 0, 1 is two columns of C (prefill) or two rows (swap-AB) */
            const int row1 = kSwap ? row + 1 : row, col1 = kSwap ? col : col + 1;
            if (KT_SK > 1) {
                if (row < args.m && col < args.n) slab[(long long)row * args.n + col] = v0;
                if (row1 < args.m && col1 < args.n) slab[(long long)row1 * args.n + col1] = v1;
            } else if (pair && row < args.m && col + 1 < args.n) {
                *(unsigned *)(c + (long long)row * args.ldc + col) =
                    (unsigned)kt_from_float<kt_elem>(v0).bits | ((unsigned)kt_from_float<kt_elem>(v1).bits << 16);
            } else {
                if (row < args.m && col < args.n) c[(long long)row * args.ldc + col] = kt_from_float<kt_elem>(v0);
                if (row1 < args.m && col1 < args.n) c[(long long)row1 * args.ldc + col1] = kt_from_float<kt_elem>(v1);
            }
        }
    if (KT_SK == 1) return;

    /* Split-K in the launch (templates/abi/gemm.h): the block that arrives last at the tile's
     * counter adds the slabs in segment order and writes C. */
    kt_fence_device();
    kt_barrier();
    const int gx = (args.n + KT_BN - 1) / KT_BN, gy = (args.m + KT_BM - 1) / KT_BM;
    const int ntiles = gx * gy, word = (tile_m * gx + tile_n) % KT_GEMM_TILE_COUNTERS;
    unsigned *const counters = (unsigned *)(args.partials + args.partials_elems) - KT_GEMM_TILE_COUNTERS;
    if (tid == 0) {
        /* tiles share a counter only past KT_GEMM_TILE_COUNTERS of them; its last block reduces all */
        const unsigned sharing = (unsigned)((ntiles - 1 - word) / KT_GEMM_TILE_COUNTERS + 1);
        last_arrival = kt_atomic_add_device(&counters[word], 1u) + 1u == sharing * KT_SK;
    }
    kt_barrier();
    if (!last_arrival) return;
    kt_fence_device();
    const long long mn = (long long)args.m * args.n;
    for (int tile = word; tile < ntiles; tile += KT_GEMM_TILE_COUNTERS) {
        const int bn0 = (tile % gx) * KT_BN, bm0 = (tile / gx) * KT_BM;
        const int rn = args.n - bn0 < KT_BN ? args.n - bn0 : KT_BN;
        const int rm = args.m - bm0 < KT_BM ? args.m - bm0 : KT_BM;
        for (int x = tid; x < KT_BM * KT_BN; x += KT_THREADS) {
            const int r = x / KT_BN, cc = x % KT_BN;
            if (r >= rm || cc >= rn) continue;
            const long long at = (long long)(bm0 + r) * args.n + bn0 + cc;
            float s = kt_load_coherent(args.partials + at);   /* from slab 0 itself: -0.0 survives */
#pragma unroll
            for (int q = 1; q < KT_SK; q++) s += kt_load_coherent(args.partials + q * mn + at);
            c[(long long)(bm0 + r) * args.ldc + bn0 + cc] = kt_from_float<kt_elem>(s);
        }
    }
    if (tid == 0) counters[word] = 0u;   /* as the next launch expects it */
}
