/* skinny.hip: C[M,N] = A[M,K] . W[N,K]^T for decode-sized M, on the vector units, one launch.
 * ABI: templates/abi/gemm.h (SK is always 1: no partials, no reduce kernel); launch geometry:
 * runtime/gemm_geometry.h, reading the recipe's axes as
 *   BM  token rows a block owns (1..16; grid.y = ceil(M/BM), so any M is served),
 *   BN  weight rows a block owns (grid.x = ceil(N/BN)),
 *   WM  waves of the block; they split K between them, WN = 1,
 *   BK  K elements a wave streams per step: 8 per lane (one 16-byte load) times the unroll.
 *
 * Why a second GEMM template: at M <= 16 the dense template's MMA tiles spend most of the work
 * on padding rows and stage W through LDS behind barriers, so the loads in flight per SM, which
 * set the bandwidth of a weight-streaming kernel, stay low. Here every lane issues BN x unroll
 * independent 16-byte weight loads straight into registers before it does any arithmetic, A is
 * read through the read-only cache (it is small and every block reads the same rows), products
 * are summed in fp32 per lane, then across the wave by butterfly shuffles, then across the waves
 * of the block through LDS. Each weight element costs BM FMAs: past M ~ 8 the vector units, not
 * memory, bind on NVIDIA, and the sweep then prefers the dense template. Ragged M, N, K and
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

constexpr int kChunk = 8;                                   /* elements a lane loads at once */
constexpr int kUnroll = KT_BK / (kChunk * KT_WAVE);         /* chunks a lane has in flight per row */
constexpr int kStride = KT_WM * KT_WAVE * kChunk;           /* K between a lane's consecutive chunks */

static_assert(KT_SK == 1, "skinny GEMM does not split K across blocks");
static_assert(KT_WN == 1, "skinny GEMM: waves split K only");
static_assert(kUnroll >= 1 && KT_BK % (kChunk * KT_WAVE) == 0, "BK is 8 elements a lane times the unroll");

KT_DEV float kt_lo(unsigned u) { return kt_to_float(kt_elem{(unsigned short)(u & 0xFFFFu)}); }
KT_DEV float kt_hi(unsigned u) { return kt_to_float(kt_elem{(unsigned short)(u >> 16)}); }

KT_DEV void kt_unpack(kt_v16 v, float (&f)[kChunk])
{
    f[0] = kt_lo(v.x); f[1] = kt_hi(v.x);
    f[2] = kt_lo(v.y); f[3] = kt_hi(v.y);
    f[4] = kt_lo(v.z); f[5] = kt_hi(v.z);
    f[6] = kt_lo(v.w); f[7] = kt_hi(v.w);
}

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_THREADS)(kt_gemm_args args)
{
    KT_SHARED float partial[KT_WM][KT_BM * KT_BN];

    const int lane = kt_lane_id();
    const int wave = kt_wave_id();
    const int n0 = kt_block_id_x() * KT_BN;
    const int m0 = kt_block_id_y() * KT_BM;
    const int rows_n = args.n - n0 < KT_BN ? args.n - n0 : KT_BN;
    const int rows_m = args.m - m0 < KT_BM ? args.m - m0 : KT_BM;
    const unsigned short *a = (const unsigned short *)args.a + (long long)m0 * args.lda;
    const unsigned short *w = (const unsigned short *)args.w + (long long)n0 * args.ldw;
    const bool a_vec = kt_vec16_ok(args.a, args.lda);
    const bool w_vec = kt_vec16_ok(args.w, args.ldw);

    float acc[KT_BM][KT_BN];
#pragma unroll
    for (int i = 0; i < KT_BM; i++)
#pragma unroll
        for (int j = 0; j < KT_BN; j++) acc[i][j] = 0.0f;

    for (int k0 = (wave * KT_WAVE + lane) * kChunk; k0 < args.k; k0 += kStride * kUnroll) {
        /* every weight load of the step first: they are what must be in flight */
        kt_v16 wv[kUnroll][KT_BN];
#pragma unroll
        for (int u = 0; u < kUnroll; u++)
#pragma unroll
            for (int j = 0; j < KT_BN; j++)
                wv[u][j] = j < rows_n ? kt_chunk(w + (long long)j * args.ldw, k0 + u * kStride, args.k, w_vec)
                                      : kt_v16_make(0u, 0u, 0u, 0u);
#pragma unroll
        for (int u = 0; u < kUnroll; u++) {
            /* this chunk's A rows, all issued before any of them is used: one L1 round trip a
             * chunk instead of one a row */
            kt_v16 av[KT_BM];
#pragma unroll
            for (int i = 0; i < KT_BM; i++)
                av[i] = i < rows_m ? kt_chunk(a + (long long)i * args.lda, k0 + u * kStride, args.k, a_vec)
                                   : kt_v16_make(0u, 0u, 0u, 0u);
            float wf[KT_BN][kChunk];
#pragma unroll
            for (int j = 0; j < KT_BN; j++) kt_unpack(wv[u][j], wf[j]);
#pragma unroll
            for (int i = 0; i < KT_BM; i++) {
                float af[kChunk];
                kt_unpack(av[i], af);
#pragma unroll
                for (int j = 0; j < KT_BN; j++)
#pragma unroll
                    for (int e = 0; e < kChunk; e++) acc[i][j] += af[e] * wf[j][e];
            }
        }
    }

    /* across the wave, then across the waves */
#pragma unroll
    for (int i = 0; i < KT_BM; i++)
#pragma unroll
        for (int j = 0; j < KT_BN; j++) {
            float v = acc[i][j];
#pragma unroll
            for (int o = KT_WAVE / 2; o > 0; o >>= 1) v += kt_shfl_xor(v, o);
            if (lane == 0) partial[wave][i * KT_BN + j] = v;
        }
    kt_barrier();
    kt_elem *const c = (kt_elem *)args.c;
    for (int t = kt_thread_id(); t < KT_BM * KT_BN; t += KT_THREADS) {
        const int i = t / KT_BN, j = t % KT_BN;
        if (i >= rows_m || j >= rows_n) continue;
        float s = 0.0f;
#pragma unroll
        for (int q = 0; q < KT_WM; q++) s += partial[q][t];
        c[(long long)(m0 + i) * args.ldc + n0 + j] = kt_from_float<kt_elem>(s);
    }
}
