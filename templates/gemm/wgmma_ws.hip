/* wgmma_ws.hip: C[M,N] = A[M,K] . W[N,K]^T on Hopper's warpgroup matrix instruction (sm_90a
 * only), warp-specialized: one warpgroup copies, two compute. bf16 or fp16 in and out, fp32
 * accumulate. ABI: templates/abi/gemm.h (split-K reduced in the launch); launch geometry:
 * runtime/gemm_geometry.h. Two instantiations, as wgmma.hip: prefill (wgmma_ws.lua, below) and
 * swap-AB for decode (wgmma_ws_swapab.lua, KT_WGMMA_SWAP: C^T = W . A^T, the weights the 64-row
 * operand, BN = 64 per computing warpgroup with WN = 4 + BN/16 warps, WM = 1, BM = tokens = the
 * instruction's N). Prefill axes:
 *
 *   BM  tile rows: 128 or 256, split between the two computing warpgroups (64 or 128 rows each,
 *       one m64 instruction per 64 rows);
 *   BN  tile columns, the instruction's N (128, 144, 192, 224 or 256: the odd sizes cut N = 1152,
 *       1536, 3584 or 4608 into whole tiles, more of them or in one wave);
 *   BK  K per stage, 64 (128-byte swizzled rows);
 *   WM  12 warps: warpgroup 0 copies, warpgroups 1 and 2 compute; WN = 1;
 *   ST  stages in dynamic shared memory (kt_gemm_dynamic_shared), opted in past 48 KiB;
 *   SK  K segments along grid.z, reduced in the launch by the tile's last block.
 *
 * Why: wgmma.hip, where every warp both copies and computes, keeps the H200's matrix units busy
 * only ~53% of the time (bench/NOTES.md, 2026-11-30): every K tile ends in a barrier all warps
 * join, so the copies of one warp delay the matrix work of all, and the copies run only ST - 2
 * tiles ahead. Here the copying warpgroup runs up to ST tiles ahead of the matrix work, and the
 * two sides meet only at per-stage mbarriers. The copying warps' instruction count is what bounds
 * this design (four warps issue every copy), hence the predicate-free interior path.
 *
 * Algorithm. A ring of ST stages, each A[BM][BK] and W[BN][BK] in the swizzled K-major layout of
 * arch/sm90_async.h, and two mbarriers per stage: full (128 arrivals: the copying threads' cp.async
 * completions) and empty (8 arrivals: one a computing warp once its matrix work on the stage is
 * done). Copier, K tile t into stage s = t % ST: wait until the stage is empty (its tile t - ST
 * consumed), issue the cp.asyncs (a tile inside the matrices without predicates; an edge tile
 * zero-filling past M, N and the segment's K), let the hardware arrive on full[s] when they land.
 * Computers, K tile t: wait on full[s], fence the stage into the async proxy, issue BK/16
 * (x rows/64) wgmmas, wait for tile t - 1's and mark its stage empty, so one tile is always
 * queued in the matrix units. The epilogue converts and stores straight from
 * the accumulators. Blocks visit tiles in groups of 8 tile rows for L2 reuse, as wgmma.hip. */
#include "abi/gemm.h"
#include "arch/sm90_async.h"
#include "gemm/chunk.h"
#include "gemm/wgmma_tile.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

#define KT_THREADS (KT_WM * KT_WN * KT_WAVE)
#ifndef KT_WGMMA_SWAP
#define KT_WGMMA_SWAP 0
#endif

namespace {

constexpr bool kSwap = KT_WGMMA_SWAP != 0;
constexpr int kXRows = kSwap ? KT_BN : KT_BM;               /* the 64-row operand's rows a block */
constexpr int kYRows = kSwap ? KT_BM : KT_BN;               /* the instruction's N */
constexpr int kComputers = kSwap ? KT_WN / 4 - 1 : 2;      /* computing warpgroups */
constexpr int kCopyThreads = 128;                            /* the copying warpgroup */
constexpr int kRowBytes = KT_BK * 2;                         /* one tile row: the swizzle width */
constexpr int kRowStep = kCopyThreads / (KT_BK / 8);         /* rows between a copier's chunks */
constexpr int kXBytes = kXRows * kRowBytes;
constexpr int kStageBytes = (KT_BM + KT_BN) * kRowBytes;
constexpr int kStages = KT_ST;
constexpr int kRowsPerComputer = kXRows / kComputers;
constexpr int kM64 = kRowsPerComputer / 64;                  /* m64 instructions per k16 step */
constexpr int kAcc = kYRows / 2;                             /* fp32 accumulators per m64, a thread */
constexpr int kGroupM = 8;

static_assert(kComputers >= 1 && KT_THREADS == kCopyThreads * (1 + kComputers) && (kSwap ? KT_WM == 1 : KT_WN == 1),
              "one copying warpgroup, the computing ones along the 64-row operand");
static_assert(kSwap || kComputers == 2, "two computing warpgroups (prefill)");
static_assert(kRowsPerComputer % 64 == 0, "whole m64 instructions per computing warpgroup");
static_assert(kYRows % 8 == 0 && kYRows <= 256, "N of the instruction");
static_assert(KT_BK == 64, "128-byte swizzled rows");
static_assert(kStages >= 2, "a stage copied while another is consumed");
static_assert(kRowStep % 8 == 0, "a copier's rows share a swizzle phase");

/* The copying warpgroup's loop: K tile t into stage t % ST once the stage is empty (tile t - ST
 * consumed); the hardware arrives on full[s] when this thread's copies have landed. kVec: every
 * row is 16-byte aligned, all cp.async (the branch taken once, not per chunk), and tiles wholly
 * inside the matrices without predicates; else element by element through registers, and the
 * arrival waits for them. */
template <bool kVec>
KT_DEV void kt_ws_copy_loop(kt_copier cx, kt_copier cy, unsigned ring0, unsigned full0, unsigned empty0,
                            int tiles, int k_len)
{
    cx.vec = cy.vec = kVec;
    const bool x_whole = cx.rows >= kXRows, y_whole = cy.rows >= kYRows;   /* inside M, N */
    const bool whole_rows = x_whole && y_whole;
    for (int t = 0; t < tiles; t++) {
        const int s = t % kStages;
        if (t >= kStages) kt_mbar_wait(empty0 + 8 * s, (unsigned)(t / kStages - 1) & 1u);
        const unsigned st = ring0 + s * kStageBytes;
        if constexpr (kSwap) {
            /* decode: the weights are whole tiles though the few token rows rarely are */
            const bool k_whole = (t + 1) * KT_BK <= k_len;
            if (kVec && x_whole && k_whole) kt_copy_tile_whole<kXRows, kRowStep, kRowBytes>(cx, st, t * KT_BK);
            else kt_copy_tile<kXRows, kRowStep, kRowBytes, kVec ? 32 : 1>(cx, st, t * KT_BK, k_len);
            if (kVec && y_whole && k_whole) kt_copy_tile_whole<kYRows, kRowStep, kRowBytes>(cy, st + kXBytes, t * KT_BK);
            else kt_copy_tile<kYRows, kRowStep, kRowBytes, kVec ? 32 : 1>(cy, st + kXBytes, t * KT_BK, k_len);
        } else if (kVec && whole_rows && (t + 1) * KT_BK <= k_len) {
            kt_copy_tile_whole<kXRows, kRowStep, kRowBytes>(cx, st, t * KT_BK);
            kt_copy_tile_whole<kYRows, kRowStep, kRowBytes>(cy, st + kXBytes, t * KT_BK);
        } else {
            kt_copy_tile<kXRows, kRowStep, kRowBytes, kVec ? 32 : 1>(cx, st, t * KT_BK, k_len);
            kt_copy_tile<kYRows, kRowStep, kRowBytes, kVec ? 32 : 1>(cy, st + kXBytes, t * KT_BK, k_len);
        }
        if (kVec) {
            kt_mbar_arrive_cp_async(full0 + 8 * s);
        } else {
            kt_mbar_arrive(full0 + 8 * s);
        }
    }
    kt_cp_async_wait<0>();
}

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_THREADS)(kt_gemm_args args)
{
    extern __shared__ __align__(16) unsigned char ring[];   /* kStages * kStageBytes + 1 KiB, at launch */
    KT_SHARED __align__(8) unsigned long long full[kStages], empty[kStages];
    KT_SHARED bool last_arrival;

    const int tid = kt_thread_id();
    const int warpgroup = tid / 128;
    int tile_m, tile_n;
    if constexpr (kSwap) {
        tile_m = kt_block_id_y();
        tile_n = kt_block_id_x();
    } else {
        kt_grouped_tile<kGroupM>(kt_block_id_y() * (int)gridDim.x + kt_block_id_x(), (int)gridDim.x, (int)gridDim.y,
                                 tile_m, tile_n);
    }
    const int m0 = tile_m * KT_BM, n0 = tile_n * KT_BN;
    const int z = KT_SK > 1 ? kt_block_id_z() : 0;

    /* This segment's K range [k_begin, k_begin + k_len); empty when K is short and z is high: then
     * its slab is zeros, which the reduction needs (every slab is summed). */
    const int k_begin = KT_SK > 1 ? z * args.k_per_split : 0;
    const int k_len = KT_SK > 1 ? (args.k - k_begin < args.k_per_split ? args.k - k_begin : args.k_per_split)
                                : args.k;
    const int tiles = k_len > 0 ? (k_len + KT_BK - 1) / KT_BK : 0;
    const unsigned ring0 = (kt_smem_addr(ring) + 1023u) & ~1023u;   /* swizzle atoms are 1 KiB-aligned */
    const unsigned full0 = kt_smem_addr(full), empty0 = kt_smem_addr(empty);

    if (tid == 0)
        for (int s = 0; s < kStages; s++) {
            kt_mbar_init(full0 + 8 * s, kCopyThreads);
            kt_mbar_init(empty0 + 8 * s, kComputers * 4);
        }
    kt_barrier();

    if (warpgroup == 0) {
        const unsigned short *a = (const unsigned short *)args.a + (long long)m0 * args.lda + k_begin;
        const unsigned short *w = (const unsigned short *)args.w + (long long)n0 * args.ldw + k_begin;
        const bool vec = kt_vec16_ok(args.a, args.lda) && kt_vec16_ok(args.w, args.ldw);
        const kt_copier ca = kt_copier_make<kRowStep, kRowBytes>(a, args.lda, args.m - m0, vec, tid);
        const kt_copier cw = kt_copier_make<kRowStep, kRowBytes>(w, args.ldw, args.n - n0, vec, tid);
        const kt_copier &cx = kSwap ? cw : ca, &cy = kSwap ? ca : cw;
        if (vec) kt_ws_copy_loop<true>(cx, cy, ring0, full0, empty0, tiles, k_len);
        else kt_ws_copy_loop<false>(cx, cy, ring0, full0, empty0, tiles, k_len);
    } else {
        const int g = warpgroup - 1, warp = kt_wave_id() % 4, lane = kt_lane_id();
        float acc[kM64][kAcc];
#pragma unroll
        for (int r = 0; r < kM64; r++)
#pragma unroll
            for (int i = 0; i < kAcc; i++) acc[r][i] = 0.0f;

        for (int t = 0; t < tiles; t++) {
            const int s = t % kStages;
            kt_mbar_wait(full0 + 8 * s, (unsigned)(t / kStages) & 1u);
            kt_fence_proxy_async();        /* the copies, seen through the barrier, to the async proxy */
            const unsigned st = ring0 + s * kStageBytes;
            const unsigned x_tile = st + g * kRowsPerComputer * kRowBytes, y_tile = st + kXBytes;
#pragma unroll
            for (int r = 0; r < kM64; r++) kt_wgmma_fence_acc(acc[r]);
            kt_wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < KT_BK; kk += 16)
#pragma unroll
                for (int r = 0; r < kM64; r++)
                    kt_wgmma_op<kt_elem, kYRows>::run(acc[r], kt_wgmma_desc(x_tile + r * 64 * kRowBytes + kk * 2, kRowBytes),
                                                      kt_wgmma_desc(y_tile + kk * 2, kRowBytes));
            kt_wgmma_commit();
            kt_wgmma_wait<1>();            /* tile t - 1's are done; tile t's stay queued */
            if (t > 0 && lane == 0) kt_mbar_arrive(empty0 + 8 * ((t - 1) % kStages));
        }
        kt_wgmma_wait<0>();
#pragma unroll
        for (int r = 0; r < kM64; r++) kt_wgmma_fence_acc(acc[r]);

        /* acc[r][4j + 2h + e] is D[xr][yc], xr = 64 (kM64 g + r) + 16 warp + lane/4 + 8h of the X
         * rows, yc = 8j + 2 (lane % 4) + e (the instruction's accumulator layout); D is C (prefill)
         * or C^T (swap-AB: e = 0, 1 are two tokens, two rows of C). */
        kt_elem *const c = (kt_elem *)args.c;
        float *const slab = KT_SK > 1 ? args.partials + (long long)z * args.m * args.n : 0;
        if constexpr (kSwap) {
#pragma unroll
            for (int r = 0; r < kM64; r++)
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int j = 0; j < kYRows / 8; j++)
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int col = n0 + 64 * (kM64 * g + r) + 16 * warp + lane / 4 + 8 * h;
                            const int row = m0 + 8 * j + 2 * (lane % 4) + e;
                            const float v = acc[r][4 * j + 2 * h + e];
                            if (row >= args.m || col >= args.n) continue;
                            if (KT_SK > 1) slab[(long long)row * args.n + col] = v;
                            else c[(long long)row * args.ldc + col] = kt_from_float<kt_elem>(v);
                        }
        } else {
        const bool pair = KT_SK == 1 && ((long long)args.c & 3) == 0 && (args.ldc & 1) == 0;
#pragma unroll
        for (int r = 0; r < kM64; r++)
#pragma unroll
            for (int h = 0; h < 2; h++)
#pragma unroll
                for (int j = 0; j < KT_BN / 8; j++) {
                    const int row = m0 + 64 * (kM64 * g + r) + 16 * warp + lane / 4 + 8 * h;
                    const int col = n0 + 8 * j + 2 * (lane % 4);
                    const float v0 = acc[r][4 * j + 2 * h], v1 = acc[r][4 * j + 2 * h + 1];
                    if (row >= args.m) continue;
                    if (KT_SK > 1) {
                        if (col < args.n) slab[(long long)row * args.n + col] = v0;
                        if (col + 1 < args.n) slab[(long long)row * args.n + col + 1] = v1;
                    } else if (pair && col + 1 < args.n) {
                        *(unsigned *)(c + (long long)row * args.ldc + col) =
                            (unsigned)kt_from_float<kt_elem>(v0).bits | ((unsigned)kt_from_float<kt_elem>(v1).bits << 16);
                    } else {
                        if (col < args.n) c[(long long)row * args.ldc + col] = kt_from_float<kt_elem>(v0);
                        if (col + 1 < args.n) c[(long long)row * args.ldc + col + 1] = kt_from_float<kt_elem>(v1);
                    }
                }
        }
    }
    if (KT_SK == 1) return;

    kt_splitk_finish<kt_elem, KT_BM, KT_BN, KT_SK, KT_THREADS>(args, tile_m, tile_n, tid, last_arrival);
}
