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
#include "gemm/wgmma_tile.h"

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

/* Block (x, y) of the launch -> output tile (tile_n, tile_m). Prefill walks kGroupM tile rows at a
 * time so that the blocks in flight together reuse each other's A rows and W columns in L2. */
KT_DEV void kt_tile_of_block(int &tile_m, int &tile_n)
{
    if (kSwap) { tile_m = kt_block_id_y(); tile_n = kt_block_id_x(); return; }
    kt_grouped_tile<kGroupM>(kt_block_id_y() * (int)gridDim.x + kt_block_id_x(), (int)gridDim.x, (int)gridDim.y,
                             tile_m, tile_n);
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
    const kt_copier cx = kSwap ? kt_copier_make<kRowStep, kRowBytes>(w, args.ldw, args.n - n0, w_vec, tid)
                               : kt_copier_make<kRowStep, kRowBytes>(a, args.lda, args.m - m0, a_vec, tid);
    const kt_copier cy = kSwap ? kt_copier_make<kRowStep, kRowBytes>(a, args.lda, args.m - m0, a_vec, tid)
                               : kt_copier_make<kRowStep, kRowBytes>(w, args.ldw, args.n - n0, w_vec, tid);
    const unsigned ring0 = (kt_smem_addr(ring) + 1023u) & ~1023u;   /* swizzle atoms are 1 KiB-aligned */
    const int tiles = k_len > 0 ? (k_len + KT_BK - 1) / KT_BK : 0;

    float acc[kAcc];
#pragma unroll
    for (int i = 0; i < kAcc; i++) acc[i] = 0.0f;

#pragma unroll
    for (int s = 0; s < kStages - 2; s++) {
        if (s < tiles) {
            kt_copy_tile<kXRows, kRowStep, kRowBytes>(cx, ring0 + s * kStageBytes, s * KT_BK, k_len);
            kt_copy_tile<kYRows, kRowStep, kRowBytes>(cy, ring0 + s * kStageBytes + kXBytes, s * KT_BK, k_len);
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
            kt_copy_tile<kXRows, kRowStep, kRowBytes>(cx, st, next * KT_BK, k_len);
            kt_copy_tile<kYRows, kRowStep, kRowBytes>(cy, st + kXBytes, next * KT_BK, k_len);
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

    kt_splitk_finish<kt_elem, KT_BM, KT_BN, KT_SK, KT_THREADS>(args, tile_m, tile_n, tid, last_arrival);
}
