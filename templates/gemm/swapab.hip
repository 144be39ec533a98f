/* swapab.hip: C[M,N] = A[M,K] . W[N,K]^T for decode-sized M on the matrix units, one launch.
 * ABI: templates/abi/gemm.h (SK is always 1: no partials, no reduce kernel); launch geometry:
 * runtime/gemm_geometry.h, reading the recipe's axes as
 *   BM  tokens a block owns: 8 (M <= 8: the upper half of the 16-token fragment is known zero,
 *       so it costs neither loads nor registers) or a multiple of 16 (grid.y = ceil(M/BM)),
 *   BN  weight rows a block owns, a multiple of 16 (grid.x = ceil(N/BN)),
 *   WM  waves of the block; they split K between them, WN = 1,
 *   BK  K a wave streams per step, a multiple of the prelude's direct span.
 *
 * Why: at M <= 16 a GEMM is a weight stream. The vector-unit kernel (skinny.hip) spends BM FMAs a
 * weight element and binds on arithmetic past M ~ 4; the dense tiles stage W through LDS behind
 * barriers and split K over a second launch. Here the operands are swapped, C^T = W . A^T, so the
 * weights are the MMA's 16-row operand and the tokens its 16 columns (padding is on the token
 * side, where it costs no memory traffic), and both operands go from global memory straight into
 * fragment registers ("direct fragments": the prelude relabels k so each lane's share is whole
 * 16-byte chunks, the same relabelling for both operands, docs/templates.md). Every weight load
 * of a step is issued before any MMA; waves split K, then reduce through LDS. Ragged M, N, K and
 * unaligned rows are served: a chunk that is not 16-byte loadable is read element by element. */
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

static_assert(KT_SK == 1, "swap-AB GEMM does not split K across blocks");
static_assert(KT_WN == 1, "swap-AB GEMM: waves split K only");
static_assert(KT_BN % 16 == 0 && (KT_BM == 8 || KT_BM % 16 == 0), "BN is whole 16-wide fragments, BM 8 or whole");
static_assert(kUnroll >= 1 && KT_BK % kt_direct_span == 0, "BK is a whole number of direct spans");

/* One step: the weight chunks of every span and tile are all issued before any MMA (they are
 * what must be in flight); each span's token chunks are read just before its MMAs (they come
 * from L1/L2, and holding them for the whole step would take as many registers as the weights).
 * kWhole: the step lies inside K and both operands allow 16-byte loads (every step but a ragged
 * tail or unaligned operands), so each chunk is one plain load. Token rows past M read zeros;
 * weight rows past N were clamped to a real row by the caller (their sums are never written). */
template <bool kWhole>
KT_DEV void kt_step(kt_acc (&acc)[kTilesN][kTilesM], const unsigned short *const (&wrow)[kTilesN][kChunks],
                    const unsigned short *const (&arow)[kTilesM][kChunks], const bool (&aok)[kTilesM][kChunks],
                    const int (&wk)[kChunks], int k0, int len, bool w_vec, bool a_vec)
{
    kt_v16 wv[kUnroll][kTilesN][kChunks];
#pragma unroll
    for (int u = 0; u < kUnroll; u++)
#pragma unroll
        for (int c = 0; c < kChunks; c++) {
            const int k = k0 + u * kt_direct_span + wk[c];
#pragma unroll
            for (int t = 0; t < kTilesN; t++)
                wv[u][t][c] = kWhole ? kt_ldg16(wrow[t][c] + k) : kt_chunk(wrow[t][c], k, len, w_vec);
        }
#pragma unroll
    for (int u = 0; u < kUnroll; u++) {
        kt_v16 av[kTilesM][kChunks];
#pragma unroll
        for (int c = 0; c < kChunks; c++) {
            const int k = k0 + u * kt_direct_span + wk[c];
#pragma unroll
            for (int t = 0; t < kTilesM; t++)
                av[t][c] = !aok[t][c] ? kt_v16_make(0u, 0u, 0u, 0u)
                           : kWhole   ? kt_ldg16(arow[t][c] + k)
                                      : kt_chunk(arow[t][c], k, len, a_vec);
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

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_THREADS)(kt_gemm_args args)
{
    /* [wave][token * BN + weight row]: the waves' partial sums, added in wave order */
    KT_SHARED float partial[KT_WM][KT_BM * KT_BN];

    const int lane = kt_lane_id();
    const int wave = kt_wave_id();
    const int n0 = kt_block_id_x() * KT_BN;
    const int m0 = kt_block_id_y() * KT_BM;
    const int rows_n = args.n - n0 < KT_BN ? args.n - n0 : KT_BN;
    const int rows_m = args.m - m0 < KT_BM ? args.m - m0 : KT_BM;
    const bool a_vec = kt_vec16_ok(args.a, args.lda);
    const bool w_vec = kt_vec16_ok(args.w, args.ldw);

    /* The rows this lane reads, fixed for the whole K loop. */
    const unsigned short *wrow[kTilesN][kChunks];
    const unsigned short *arow[kTilesM][kChunks];
    bool aok[kTilesM][kChunks];
    int wk[kChunks];
#pragma unroll
    for (int c = 0; c < kChunks; c++) {
        wk[c] = kt_direct_k(lane, c);
#pragma unroll
        for (int t = 0; t < kTilesN; t++) {
            const int r = t * 16 + kt_direct_row(lane, c);
            wrow[t][c] = (const unsigned short *)args.w + (long long)(n0 + (r < rows_n ? r : rows_n - 1)) * args.ldw;
        }
#pragma unroll
        for (int t = 0; t < kTilesM; t++) {
            const int r = t * 16 + kt_direct_row(lane, c);
            aok[t][c] = (KT_BM >= 16 || r < KT_BM) && r < rows_m;   /* BM = 8: rows 8-15 fold to zero */
            arow[t][c] = (const unsigned short *)args.a + (long long)(m0 + (aok[t][c] ? r : 0)) * args.lda;
        }
    }

    kt_acc acc[kTilesN][kTilesM];
#pragma unroll
    for (int i = 0; i < kTilesN; i++)
#pragma unroll
        for (int j = 0; j < kTilesM; j++) kt_acc_zero(acc[i][j]);

    const bool vec = a_vec && w_vec;
    int k0 = wave * KT_BK;
    for (; vec && k0 + KT_BK <= args.k; k0 += KT_WM * KT_BK)
        kt_step<true>(acc, wrow, arow, aok, wk, k0, args.k, w_vec, a_vec);
    /* the ragged tail, or every step when an operand cannot be read 16 bytes at a time */
    for (; k0 < args.k; k0 += KT_WM * KT_BK)
        kt_step<false>(acc, wrow, arow, aok, wk, k0, args.k, w_vec, a_vec);

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
    kt_barrier();
    kt_elem *const c = (kt_elem *)args.c;
    for (int x = kt_thread_id(); x < KT_BM * KT_BN; x += KT_THREADS) {
        const int t = x / KT_BN, r = x % KT_BN;
        if (t >= rows_m || r >= rows_n) continue;
        float s = 0.0f;
#pragma unroll
        for (int q = 0; q < KT_WM; q++) s += partial[q][x];
        c[(long long)(m0 + t) * args.ldc + n0 + r] = kt_from_float<kt_elem>(s);
    }
}
