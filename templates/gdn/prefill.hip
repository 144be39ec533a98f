/* prefill.hip: the gated delta-net prefill of a batch of sequences in its chunked form, four
 * launches (ABI, launch order and workspace: templates/abi/gdn_prefill.h; geometry and law:
 * runtime/op_gdn_prefill.c; the float64 form it follows step for step: runtime/gdn_chunk_ref.c).
 * The recipe's axes (prefill.lua) read as
 *   BT   the chunk (tokens): the triangular system's size, every product's k or m,
 *   VK   the ssm state's layout (0: [.., K, V]; 1: K-last),
 *   DK   key head size, DV value head size (compiled in),
 *   BV   value columns a state-pass block owns (grid.x = dv / BV),
 *   NW   warps of the state pass,
 *   PF   1: the state pass loads a chunk's inputs (w, k, G, u) while the chunk before it computes.
 * _prep and _wy run 4 warps, _out BT / 16 (a warp a 16-row tile with every output column, which
 * the norm needs). _prep (the conv, the norms) and _wy (the gates, A, its inverse, w and u) are
 * two launches so that neither holds the other's live values (as one kernel, gfx942 spilled
 * SGPRs). Every product is 16 x 16 x 16 fragments (the preludes' kt_mma: C += A W^T with A
 * [m][k] and W [n][k] row-major in LDS), operands rounded to the dtype, sums in fp32 (fla's
 * chunked kernels round the same operands); the triangular inverse and the state stay fp32.
 *
 * Only the state pass is serial (a sequence's chunks in order), and it carries the least work a
 * chunk: vn = u - w S and S = e^{G_last} S + (k e^{G_last - G})^T vn, with S in the accumulators
 * for the whole sequence. Everything else (the conv, the norms, the gates, (I + A)^-1, w, u, the
 * output) is chunk-parallel in the launches around it. */
#include "abi/gdn_prefill.h"
#include "gdn/gdn_ops.h"
#include "arch/copy_ops.h"

namespace {

constexpr int kBT = KT_BT, kDK = KT_DK, kDV = KT_DV, kBV = KT_BV;
constexpr int kLK = kDK + 8;                 /* row of a [.][dk] tile: 16 bytes of padding */
constexpr int kLT = kBT + 8;                 /* row of a [.][BT] tile */
constexpr int kNP = 4 * KT_WAVE;             /* _prep's and _wy's threads */
constexpr int kNS = KT_NW * KT_WAVE;         /* the state pass's */
constexpr int kNO = kBT / 16 * KT_WAVE;      /* out's */
constexpr int kNC = 64;                      /* out's output columns a round (h^T and vn^T rows) */
constexpr int kMaxKW = 4;

static_assert(kBT % 16 == 0 && kBT <= 64, "BT: 16, 32 or 64");
static_assert(kDK % 16 == 0 && kDV % kNC == 0 && kDV % kBV == 0 && kBV % 16 == 0, "16-wide tiles");
static_assert(kDK / 16 * (kBV / 16) % KT_NW == 0, "the state's tiles split evenly over the warps");

/* lanes that hold the same accumulator rows: the xor masks below it reduce a row */
constexpr int kt_row_span()
{
    int s = 1;
    while (s < kt_frag_lanes && kt_acc_row(s, 0) == kt_acc_row(0, 0)) s *= 2;
    return s;
}
constexpr bool kt_rows_by_span()
{
    for (int l = 0; l < kt_frag_lanes; l++)
        for (int i = 0; i < kt_acc_elems; i++)
            if (kt_acc_row(l, i) != kt_acc_row(l - l % kt_row_span(), i)) return false;
    return true;
}
static_assert(kt_rows_by_span(), "a row's lanes are the low bits of the lane id");
constexpr int kRowSpan = kt_row_span();

/* kKUnroll: k steps of a product unrolled: AMD's scheduler hoists every unrolled step's LDS loads
 * ahead of its first WMMA (64 VGPRs for dk 128), so there two at a time.
 * kRowGroup: rows of a channel loaded at once by the conv and _wy's v (a round trip a group): AMD
 * holds the rows' uniform offsets in SGPRs, and 16 spilled _prep's on gfx1201; wave 64's masks
 * leave gfx942 too few for even 4 (34 of 128 variants excluded), so there a row at a time */
#if defined(KT_ARCH_SM90_H)
constexpr int kKUnroll = 8;
constexpr int kRowGroup = 16;
#else
constexpr int kKUnroll = 2;
constexpr int kRowGroup = KT_WAVE == 64 ? 1 : 8;
#endif

/* C (16 x 16) += A W^T over K: A at a ([m][k], lda), W at w ([n][k], ldw), both in LDS */
template <int K> KT_DEV void kt_tile_mma(kt_acc &c, const unsigned short *a, int lda, const unsigned short *w, int ldw,
                                         int lane)
{
#pragma unroll kKUnroll
    for (int k0 = 0; k0 < K; k0 += 16) {
        kt_frag_a fa;
        kt_frag_b fb;
        kt_load_a(fa, a + k0, lda, lane);
        kt_load_b(fb, w + k0, ldw, lane);
        kt_mma<kt_elem>(c, fa, fb);
    }
}

/* rows x cols 16-bit elements between a dense global array (row length cols) and an LDS tile
 * (row length ld), 16 bytes a move */
template <int Rows, int Cols, int Threads, bool ToLds>
KT_DEV void kt_copy_tile(unsigned short *lds, int ld, unsigned short *g, int tid)
{
    constexpr int kPer = Cols / 8;
#pragma unroll 2
    for (int e = tid; e < Rows * kPer; e += Threads) {
        const int r = e / kPer, q = e % kPer;
        if constexpr (ToLds) kt_sts16(lds + r * ld + 8 * q, kt_ldg16(g + (long long)r * Cols + 8 * q));
        else kt_sts16(g + (long long)r * Cols + 8 * q, *(const kt_v16 *)(lds + r * ld + 8 * q));
    }
}

/* Chunk c of the batch: sequence i's chunk j is c = query_start_loc[i] / BT + i + j, one-to-one
 * and below tokens / BT + batch whatever the lengths, so a block finds its own by a binary search
 * and the state pass its sequence's by arithmetic. */
struct kt_chunk { int seq, pos0, n, len, t0; };
KT_DEV bool kt_find_chunk(const int *qsl, int batch, int c, kt_chunk &ch)
{
    int lo = 0, hi = batch - 1, i = -1;
    while (lo <= hi) {
        const int mid = (lo + hi) >> 1;
        if (qsl[mid] / kBT + mid <= c) { i = mid; lo = mid + 1; }
        else hi = mid - 1;
    }
    if (i < 0) return false;
    const int t0 = qsl[i], len = qsl[i + 1] - t0, pos0 = (c - (t0 / kBT + i)) * kBT;
    if (pos0 >= len) return false;
    ch.seq = i; ch.pos0 = pos0; ch.len = len; ch.t0 = t0;
    ch.n = len - pos0 < kBT ? len - pos0 : kBT;
    return true;
}

/* Channel gc's conv outputs of rows 0 .. n-1 of the chunk at pos0 of the sequence starting at
 * token t0, rounded (as vLLM stores them): put(r, y). Input p of the channel is its token's qkv
 * for p >= 0, history column kw - 1 + p before it (zero without an initial state). The taps are
 * right-aligned in a window of four, so every index is a constant. */
template <class Put>
KT_DEV void kt_conv_rows(const kt_gdn_prefill_args &A, const unsigned short *cs, int gc, int t0, int pos0, int n,
                         bool init, Put put)
{
    const int kw = A.conv_kw;
    const unsigned short *cw = (const unsigned short *)A.conv_weight + (long long)gc * kw;
    const unsigned short *x0 = (const unsigned short *)A.qkv + (long long)t0 * A.qkv_stride + gc;
    const unsigned short *hist = cs + (long long)gc * A.conv_chan_stride;
    const long long xs = A.qkv_stride, hs = A.conv_col_stride;
    float w[kMaxKW], x[kMaxKW];
#pragma unroll
    for (int j = 0; j < kMaxKW; j++) {
        const int tap = j - (kMaxKW - kw), p = pos0 - (kMaxKW - 1) + j;
        w[j] = tap >= 0 ? kt_to_float(kt_elem{cw[tap]}) : 0.0f;
        unsigned short v = 0;
        if (j < kMaxKW - 1 && tap >= 0) v = p >= 0 ? x0[p * xs] : init ? hist[(kw - 1 + p) * hs] : (unsigned short)0;
        x[j] = kt_to_float(kt_elem{v});
    }
    /* a group's rows loaded before any is used: a round trip a group, not a row */
#pragma unroll 1
    for (int r0 = 0; r0 < n; r0 += kRowGroup) {
        unsigned short in[kRowGroup];
#pragma unroll
        for (int r = 0; r < kRowGroup; r++) in[r] = r0 + r < n ? x0[(pos0 + r0 + r) * xs] : (unsigned short)0;
#pragma unroll
        for (int r = 0; r < kRowGroup; r++) {
            if (r0 + r >= n) break;
            x[kMaxKW - 1] = kt_to_float(kt_elem{in[r]});
            float y = 0.0f;
#pragma unroll
            for (int j = 0; j < kMaxKW; j++) y += w[j] * x[j];
            put(r0 + r, kt_rnd(kt_silu(y)));
#pragma unroll
            for (int j = 0; j < kMaxKW - 1; j++) x[j] = x[j + 1];
        }
    }
}

/* ---------------- the WY form's pieces (_wy) ---------------- */

struct alignas(16) kt_wy_smem {
    unsigned short x[kBT][kLK];              /* k, normalized (from _prep) */
    union {
        unsigned short t[kDK > kDV ? kDK : kDV][kLT];   /* (beta v)^T, then (beta e^G k)^T */
        struct {
            float diag[kBT / 16][16][16];    /* the diagonal blocks' inverses, column by column */
            float scratch[16][kBT];          /* the inverse's block-row products */
        } inv;
    } u;
    float a[kBT][kBT + 1];                   /* A, then X = (I + A)^-1 in place */
    unsigned short xb[kBT][kLT];             /* X rounded: the w/u products' A operand */
    float g[kBT], beta[kBT];
};

/* X = (I + A)^-1 of the strictly lower-triangular A in sm.a, in place (fp32), then rounded into
 * sm.xb: the 16 x 16 diagonal blocks by forward substitution, a thread a (block, column) writing
 * its own column into sm.u.inv.diag (it reads back only what it wrote, and A, which stays: no
 * barrier between the rows; nothing held in registers across them, where the unrolled form kept
 * 120 LDS values live on AMD), then each block row from the ones above it:
 * X_ij = -X_ii sum_{j <= m < i} A_im X_mj. */
KT_DEV void kt_tril_inverse(kt_wy_smem &sm, int tid)
{
    constexpr int nb = kBT / 16;
    const int b = tid / 16, o = 16 * b, s = tid % 16;
    if (tid < 16 * nb) {
        float (*d)[16] = sm.u.inv.diag[b];
#pragma unroll 1
        for (int r = 0; r < 16; r++) {
            float x = r == s ? 1.0f : 0.0f;
            for (int m = s; m < r; m++) x -= sm.a[o + r][o + m] * d[m][s];
            d[r][s] = x;
        }
    }
    kt_barrier();
    if (tid < 16 * nb)
        for (int r = 0; r < 16; r++) sm.a[o + r][o + s] = sm.u.inv.diag[b][r][s];
    kt_barrier();
#pragma unroll 1
    for (int bi = 1; bi < nb; bi++) {
        const int w = 16 * bi;
        for (int e = tid; e < 16 * w; e += kNP) {
            const int r = e / w, c = e % w;
            float acc = 0.0f;
            for (int m = c / 16 * 16; m < w; m++) acc += sm.a[w + r][m] * sm.a[m][c];
            sm.u.inv.scratch[r][c] = acc;
        }
        kt_barrier();
        for (int e = tid; e < 16 * w; e += kNP) {
            const int r = e / w, c = e % w;
            float acc = 0.0f;
            for (int m = 0; m <= r; m++) acc += sm.a[w + r][w + m] * sm.u.inv.scratch[m][c];
            sm.a[w + r][c] = -acc;
        }
        kt_barrier();
    }
    for (int e = tid; e < kBT * kBT; e += kNP) sm.xb[e / kBT][e % kBT] = kt_elem_bits(sm.a[e / kBT][e % kBT]);
    kt_barrier();
}

/* dst [BT][N] = X T^T, T = sm.u.t's first N rows ([n][BT]), rounded */
template <int N> KT_DEV void kt_x_product(const kt_wy_smem &sm, unsigned short *dst, int wv, int lane)
{
    constexpr int kR = kBT / 16, kTiles = kR * (N / 16);
#pragma unroll 1
    for (int tile = wv; tile < kTiles; tile += 4) {
        const int ti = tile % kR, tj = tile / kR;
        kt_acc c;
        kt_acc_zero(c);
        kt_tile_mma<kBT>(c, &sm.xb[16 * ti][0], kLT, &sm.u.t[16 * tj][0], kLT, lane);
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            dst[(16 * ti + kt_acc_row(lane, i)) * N + 16 * tj + kt_acc_col(lane, i)] = kt_elem_bits(kt_acc_get(c, i));
    }
}

} /* namespace */

/* ---------------- _prep ---------------- */

namespace {
/* the conv's: a [BT][dk] tile of q, then of k */
struct alignas(16) kt_conv_smem {
    unsigned short x[kBT][kLK];
};
} /* namespace */

KT_KERNEL(KT_CAT(KT_KERNEL_NAME, _prep), kNP)(kt_gdn_prefill_args A)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_conv_smem &sm = *(kt_conv_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_conv_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int c = kt_block_id_x(), hk = kt_block_id_y();
    kt_chunk ch;
    if (!kt_find_chunk(A.query_start_loc, A.batch, c, ch)) return;
    const int slot = A.state_indices[ch.seq];
    if (slot < 0) return;
    const bool init = !A.has_initial_state || A.has_initial_state[ch.seq] != 0;
    const int H = A.num_k_heads, HV = A.num_v_heads, R = HV / H;
    const unsigned short *cs = (const unsigned short *)A.conv_state + (long long)slot * A.conv_slot_stride;

    /* q, then k: conv, L2 norm (q times scale), into the workspace */
#pragma unroll 1
    for (int part = 0; part < 2; part++) {
        for (int i = tid; i < kDK; i += kNP) {
            kt_conv_rows(A, cs, (part * H + hk) * kDK + i, ch.t0, ch.pos0, ch.n, init,
                         [&](int r, float y) { sm.x[r][i] = kt_elem_bits(y); });
            for (int r = ch.n; r < kBT; r++) sm.x[r][i] = 0;
        }
        kt_barrier();
        for (int r = wv; r < ch.n; r += 4) {
            float ss = 0.0f;
            for (int i = lane; i < kDK; i += KT_WAVE) {
                const float v = kt_to_float(kt_elem{sm.x[r][i]});
                ss += v * v;
            }
#pragma unroll
            for (int m = KT_WAVE / 2; m > 0; m >>= 1) ss += kt_shfl_xor(ss, m);
            const float rn = (part == 0 ? A.scale : 1.0f) / __builtin_sqrtf(ss + 1e-6f);
            for (int i = lane; i < kDK; i += KT_WAVE) sm.x[r][i] = kt_elem_bits(kt_to_float(kt_elem{sm.x[r][i]}) * rn);
        }
        kt_barrier();
        unsigned short *dst = (unsigned short *)(part ? A.ws_k : A.ws_q) + ((long long)c * H + hk) * kBT * kDK;
        kt_copy_tile<kBT, kDK, kNP, false>(&sm.x[0][0], kLK, dst, tid);
        kt_barrier();
    }

    /* each value head's conv outputs, parked in u's workspace rows (row-major [BT][dv], zero past
     * the sequence) for _wy */
#pragma unroll 1
    for (int rr = 0; rr < R; rr++) {
        const int h = hk * R + rr;
        unsigned short *uh = (unsigned short *)A.ws_u + ((long long)c * HV + h) * kBT * kDV;
        for (int j = tid; j < kDV; j += kNP) {
            kt_conv_rows(A, cs, 2 * H * kDK + h * kDV + j, ch.t0, ch.pos0, ch.n, init,
                         [&](int r, float y) { uh[r * kDV + j] = kt_elem_bits(y); });
            for (int r = ch.n; r < kBT; r++) uh[r * kDV + j] = 0;
        }
    }
}

/* ---------------- _wy ---------------- */

KT_KERNEL(KT_CAT(KT_KERNEL_NAME, _wy), kNP)(kt_gdn_prefill_args A)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_wy_smem &sm = *(kt_wy_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_wy_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int c = kt_block_id_x(), hk = kt_block_id_y();
    kt_chunk ch;
    if (!kt_find_chunk(A.query_start_loc, A.batch, c, ch) || A.state_indices[ch.seq] < 0) return;
    const int H = A.num_k_heads, HV = A.num_v_heads, R = HV / H;
    kt_copy_tile<kBT, kDK, kNP, true>(&sm.x[0][0], kLK, (unsigned short *)A.ws_k + ((long long)c * H + hk) * kBT * kDK, tid);

    /* K K^T is recomputed a value head (a third of the products here) rather than held in
     * registers across the heads' loop: on AMD those accumulators spilled SGPRs */
    constexpr int kKT = kBT / 16;
#pragma unroll 1
    for (int rr = 0; rr < R; rr++) {
        const int h = hk * R + rr;
        const long long ch_h = (long long)c * HV + h;
        /* the gates (rows past the sequence: no decay, no write) and G, the chunk's running sum of
         * g, which the state pass and out read back */
        if (tid < kBT) {
            float g = 0.0f, be = 0.0f;
            if (tid < ch.n)
                kt_gdn_gates(A.a, A.b, A.A_log, A.dt_bias, (long long)(ch.t0 + ch.pos0 + tid) * A.ab_stride, h, g, be);
            sm.g[tid] = g;
            sm.beta[tid] = be;
        }
        kt_barrier();
        if (tid == 0) {
            float run = 0.0f;
            for (int r = 0; r < kBT; r++) sm.g[r] = run += sm.g[r];
        }
        kt_barrier();
        if (tid < kBT) A.ws_g[ch_h * kBT + tid] = sm.g[tid];

        /* A = beta_r e^{G_r - G_s} k_r . k_s below the diagonal */
#pragma unroll 1
        for (int tile = wv; tile < kKT * kKT; tile += 4) {
            const int ti = tile / kKT, tj = tile % kKT;
            kt_acc kk;
            kt_acc_zero(kk);
            if (ti >= tj) kt_tile_mma<kDK>(kk, &sm.x[16 * ti][0], kLK, &sm.x[16 * tj][0], kLK, lane);
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                const int r = 16 * ti + kt_acc_row(lane, i), s = 16 * tj + kt_acc_col(lane, i);
                sm.a[r][s] = s < r ? sm.beta[r] * __builtin_expf(sm.g[r] - sm.g[s]) * kt_acc_get(kk, i) : 0.0f;
            }
        }
        kt_barrier();
        kt_tril_inverse(sm, tid);

        /* u = X (beta v): v (parked in u's place by _prep) into the transposed operand */
        unsigned short *uh = (unsigned short *)A.ws_u + ch_h * kBT * kDV;
        for (int j = tid; j < kDV; j += kNP)
#pragma unroll 1
            for (int r0 = 0; r0 < kBT; r0 += kRowGroup) {
                unsigned short in[kRowGroup];   /* a group's loads before its stores: a round trip a group */
#pragma unroll
                for (int r = 0; r < kRowGroup; r++) in[r] = uh[(r0 + r) * kDV + j];
#pragma unroll
                for (int r = 0; r < kRowGroup; r++)
                    sm.u.t[j][r0 + r] = kt_elem_bits(kt_to_float(kt_elem{in[r]}) * sm.beta[r0 + r]);
            }
        kt_barrier();
        kt_x_product<kDV>(sm, uh, wv, lane);
        kt_barrier();

        /* w = X (beta e^G k) */
        for (int e = tid; e < kBT * kDK; e += kNP) {
            const int r = e % kBT, i = e / kBT;
            sm.u.t[i][r] = kt_elem_bits(kt_to_float(kt_elem{sm.x[r][i]}) * sm.beta[r] * __builtin_expf(sm.g[r]));
        }
        kt_barrier();
        kt_x_product<kDK>(sm, (unsigned short *)A.ws_w + ch_h * kBT * kDK, wv, lane);
        kt_barrier();
    }
}

/* ---------------- the state pass ---------------- */

namespace {
struct alignas(16) kt_state_smem {
    unsigned short st[kBV][kLK];             /* S^T rounded: vn's W operand, and h */
    unsigned short w[kBT][kLK];              /* the chunk's w */
    unsigned short kd[kDK][kLT];             /* (k e^{G_last - G})^T */
    unsigned short vn[kBV][kLT];             /* vn^T */
    float g[kBT];
};
constexpr int kSC = kBV / 16, kSper = kDK / 16 * kSC / KT_NW;
constexpr int kVT = kBT / 16 * kSC, kVper = (kVT + KT_NW - 1) / KT_NW;

/* S element i of a warp's tile m: row (key) and column (value, within the block) */
KT_DEV int kt_s_row(int wv, int m, int lane, int i) { return 16 * ((wv + KT_NW * m) / kSC) + kt_acc_row(lane, i); }
KT_DEV int kt_s_col(int wv, int m, int lane, int i) { return 16 * ((wv + KT_NW * m) % kSC) + kt_acc_col(lane, i); }
KT_DEV long long kt_s_at(int row, int col) { return KT_VK ? (long long)col * kDK + row : (long long)row * kDV + col; }

constexpr int kWPieces = kBT * kDK / 8;      /* 16-byte pieces of a chunk's w (and of its k) */
constexpr int kWPer = (kWPieces + kNS - 1) / kNS;

/* A chunk's inputs to the state pass, in registers: w and k in 16-byte pieces (w's piece e, at 8e
 * of the dense [BT][dk] tile, is thread e % threads'; k's piece e is row e % BT's, keys 8 (e / BT)
 * on, so that a wave's transposed stores into kd fall on consecutive rows of one key: one bank
 * a lane pair, where w's order put 16 lanes on one bank), G (a row a thread), and u at the vn
 * tiles' accumulator elements. Loaded at the top of the chunk (PF 0), or a chunk ahead (PF 1). */
struct kt_state_in {
    kt_v16 w[kWPer], k[kWPer];
    float g;
    unsigned short u[kVper][kt_acc_elems];
};

KT_DEV void kt_state_load(kt_state_in &in, const kt_gdn_prefill_args &A, long long ch_h, long long ch_k, int vb, int tid,
                          int wv, int lane)
{
    const unsigned short *w = (const unsigned short *)A.ws_w + ch_h * kBT * kDK;
    const unsigned short *k = (const unsigned short *)A.ws_k + ch_k * kBT * kDK;
#pragma unroll
    for (int m = 0; m < kWPer; m++) {
        const int e = tid + m * kNS;
        if (kWPieces % kNS == 0 || e < kWPieces) {
            in.w[m] = kt_ldg16(w + 8 * e);
            in.k[m] = kt_ldg16(k + (e % kBT) * kDK + 8 * (e / kBT));
        }
    }
    in.g = tid < kBT ? A.ws_g[ch_h * kBT + tid] : 0.0f;
    const unsigned short *uc = (const unsigned short *)A.ws_u + ch_h * kBT * kDV + vb * kBV;
#pragma unroll
    for (int m = 0; m < kVper; m++) {
        const int tile = wv + KT_NW * m;
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            in.u[m][i] = tile < kVT ? uc[(long long)(16 * (tile / kSC) + kt_acc_row(lane, i)) * kDV + 16 * (tile % kSC) +
                                         kt_acc_col(lane, i)]
                                    : (unsigned short)0;
    }
}
} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, kNS)(kt_gdn_prefill_args A)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_state_smem &sm = *(kt_state_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_state_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int vb = kt_block_id_x(), h = kt_block_id_y(), seq = kt_block_id_z();
    const int t0 = A.query_start_loc[seq], len = A.query_start_loc[seq + 1] - t0;
    const int slot = A.state_indices[seq];
    if (len <= 0 || slot < 0) return;
    const bool init = !A.has_initial_state || A.has_initial_state[seq] != 0;
    const int H = A.num_k_heads, HV = A.num_v_heads, hk = h / (HV / H);
    const int nc = (len + kBT - 1) / kBT, c0 = t0 / kBT + seq;

    float *head = A.ssm_state + (long long)slot * A.ssm_slot_stride + (long long)h * kDK * kDV + vb * kBV * (KT_VK ? kDK : 1);
    kt_acc s[kSper];
#pragma unroll
    for (int m = 0; m < kSper; m++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            kt_acc_set(s[m], i, init ? head[kt_s_at(kt_s_row(wv, m, lane, i), kt_s_col(wv, m, lane, i))] : 0.0f);

    kt_state_in in;
    if (KT_PF) kt_state_load(in, A, (long long)c0 * HV + h, (long long)c0 * H + hk, vb, tid, wv, lane);
#pragma unroll 1
    for (int j = 0; j < nc; j++) {
        const long long ch_h = (long long)(c0 + j) * HV + h;
        if (!KT_PF) kt_state_load(in, A, ch_h, (long long)(c0 + j) * H + hk, vb, tid, wv, lane);
#pragma unroll
        for (int m = 0; m < kSper; m++)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++)
                sm.st[kt_s_col(wv, m, lane, i)][kt_s_row(wv, m, lane, i)] = kt_elem_bits(kt_acc_get(s[m], i));
#pragma unroll
        for (int m = 0; m < kWPer; m++) {
            const int e = tid + m * kNS;
            if (kWPieces % kNS == 0 || e < kWPieces) kt_sts16(&sm.w[e / (kDK / 8)][8 * (e % (kDK / 8))], in.w[m]);
        }
        if (tid < kBT) sm.g[tid] = in.g;
        kt_barrier();

        /* (k e^{G_last - G})^T from the registers' pieces (8 keys of one row each) */
        const float gl = sm.g[kBT - 1];
#pragma unroll
        for (int m = 0; m < kWPer; m++) {
            const int e = tid + m * kNS;
            if (!(kWPieces % kNS == 0 || e < kWPieces)) continue;
            const int r = e % kBT, i0 = 8 * (e / kBT);
            const float dec = __builtin_expf(gl - sm.g[r]);
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const unsigned wd = kt_v16_word(in.k[m], q);
                sm.kd[i0 + 2 * q][r] = kt_elem_bits(kt_to_float(kt_elem{(unsigned short)(wd & 0xffffu)}) * dec);
                sm.kd[i0 + 2 * q + 1][r] = kt_elem_bits(kt_to_float(kt_elem{(unsigned short)(wd >> 16)}) * dec);
            }
        }
        kt_copy_tile<kBV, kDK, kNS, false>(&sm.st[0][0], kLK, (unsigned short *)A.ws_h + (ch_h * kDV + vb * kBV) * kDK, tid);
        unsigned short u[kVper][kt_acc_elems];
#pragma unroll
        for (int m = 0; m < kVper; m++)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) u[m][i] = in.u[m][i];
        /* PF: the next chunk's inputs in flight behind this chunk's two products */
        if (KT_PF && j + 1 < nc)
            kt_state_load(in, A, ch_h + HV, (long long)(c0 + j + 1) * H + hk, vb, tid, wv, lane);

        /* vn = u - w S */
#pragma unroll
        for (int m = 0; m < kVper; m++) {
            const int tile = wv + KT_NW * m;
            if (tile >= kVT) continue;
            const int ti = tile / kSC, tj = tile % kSC;
            kt_acc c;
            kt_acc_zero(c);
            kt_tile_mma<kDK>(c, &sm.w[16 * ti][0], kLK, &sm.st[16 * tj][0], kLK, lane);
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                const int r = 16 * ti + kt_acc_row(lane, i), col = 16 * tj + kt_acc_col(lane, i);
                sm.vn[col][r] = kt_elem_bits(kt_to_float(kt_elem{u[m][i]}) - kt_acc_get(c, i));
            }
        }
        kt_barrier();
        kt_copy_tile<kBV, kBT, kNS, false>(&sm.vn[0][0], kLT, (unsigned short *)A.ws_vn + (ch_h * kDV + vb * kBV) * kBT, tid);

        /* S = e^{G_last} S + (k e^{G_last - G})^T vn */
        const float dl = __builtin_expf(gl);
#pragma unroll
        for (int m = 0; m < kSper; m++) {
            const int tile = wv + KT_NW * m;
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(s[m], i, kt_acc_get(s[m], i) * dl);
            kt_tile_mma<kBT>(s[m], &sm.kd[16 * (tile / kSC)][0], kLT, &sm.vn[16 * (tile % kSC)][0], kLT, lane);
        }
        kt_barrier();
    }
#pragma unroll
    for (int m = 0; m < kSper; m++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            head[kt_s_at(kt_s_row(wv, m, lane, i), kt_s_col(wv, m, lane, i))] = kt_acc_get(s[m], i);
}

/* ---------------- out ---------------- */

namespace {
struct alignas(16) kt_out_smem {
    unsigned short q[kBT][kLK];
    unsigned short kh[kBT > kNC ? kBT : kNC][kLK];   /* k, then a round's h^T rows */
    unsigned short p[kBT][kLT];              /* (q k^T) decay, causal, rounded */
    unsigned short vn[kNC][kLT];             /* a round's vn^T rows */
    float g[kBT];
};
} /* namespace */

KT_KERNEL(KT_CAT(KT_KERNEL_NAME, _out), kNO)(kt_gdn_prefill_args A)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_out_smem &sm = *(kt_out_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_out_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int c = kt_block_id_x(), h = kt_block_id_y();
    kt_chunk ch;
    if (!kt_find_chunk(A.query_start_loc, A.batch, c, ch)) return;
    const int slot = A.state_indices[ch.seq];
    if (slot < 0) return;
    const int H = A.num_k_heads, HV = A.num_v_heads, R = HV / H, hk = h / R;
    const long long ch_h = (long long)c * HV + h, ch_k = (long long)c * H + hk;

    kt_copy_tile<kBT, kDK, kNO, true>(&sm.q[0][0], kLK, (unsigned short *)A.ws_q + ch_k * kBT * kDK, tid);
    kt_copy_tile<kBT, kDK, kNO, true>(&sm.kh[0][0], kLK, (unsigned short *)A.ws_k + ch_k * kBT * kDK, tid);
    for (int r = tid; r < kBT; r += kNO) sm.g[r] = A.ws_g[ch_h * kBT + r];
    kt_barrier();

    /* P = (q k^T) e^{G_r - G_s}, s <= r: the warp's 16 rows */
    const int r0 = 16 * wv;
#pragma unroll
    for (int tj = 0; tj < kBT / 16; tj++) {
        kt_acc a;
        kt_acc_zero(a);
        if (tj <= wv) kt_tile_mma<kDK>(a, &sm.q[r0][0], kLK, &sm.kh[16 * tj][0], kLK, lane);
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            const int r = r0 + kt_acc_row(lane, i), s = 16 * tj + kt_acc_col(lane, i);
            sm.p[r][s] = kt_elem_bits(s <= r ? kt_acc_get(a, i) * __builtin_expf(sm.g[r] - sm.g[s]) : 0.0f);
        }
    }
    kt_barrier();

    /* o = e^{G_r} q h + P vn, kNC columns a round */
    kt_acc o[kDV / 16];
#pragma unroll
    for (int cg = 0; cg < kDV / kNC; cg++) {
        kt_copy_tile<kNC, kDK, kNO, true>(&sm.kh[0][0], kLK, (unsigned short *)A.ws_h + (ch_h * kDV + cg * kNC) * kDK, tid);
        kt_copy_tile<kNC, kBT, kNO, true>(&sm.vn[0][0], kLT, (unsigned short *)A.ws_vn + (ch_h * kDV + cg * kNC) * kBT, tid);
        kt_barrier();
#pragma unroll
        for (int tj = 0; tj < kNC / 16; tj++) {
            kt_acc &a = o[cg * (kNC / 16) + tj];
            kt_acc_zero(a);
            kt_tile_mma<kDK>(a, &sm.q[r0][0], kLK, &sm.kh[16 * tj][0], kLK, lane);
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(a, i, kt_acc_get(a, i) * __builtin_expf(sm.g[r0 + kt_acc_row(lane, i)]));
            kt_tile_mma<kBT>(a, &sm.p[r0][0], kLT, &sm.vn[16 * tj][0], kLT, lane);
        }
        kt_barrier();
    }

    /* rounded; with the norm, a row's sum of squares over its lanes (xor masks below the span)
     * and over the lane's elements of the same row */
    float rstd[kt_acc_elems];
#pragma unroll
    for (int i = 0; i < kt_acc_elems; i++) rstd[i] = 1.0f;
#pragma unroll
    for (int t = 0; t < kDV / 16; t++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(o[t], i, kt_rnd(kt_acc_get(o[t], i)));
    if (A.norm_weight) {
        float ss[kt_acc_elems];
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            ss[i] = 0.0f;
#pragma unroll
            for (int t = 0; t < kDV / 16; t++) ss[i] += kt_acc_get(o[t], i) * kt_acc_get(o[t], i);
#pragma unroll
            for (int m = 1; m < kRowSpan; m <<= 1) ss[i] += kt_shfl_xor(ss[i], m);
        }
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            float tot = 0.0f;
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++)
                if (kt_acc_row(lane, e) == kt_acc_row(lane, i)) tot += ss[e];
            rstd[i] = 1.0f / __builtin_sqrtf(tot / (float)kDV + A.norm_eps);
        }
    }
    /* the gate's loads all before the first store (a store between them would hold each load
     * behind it: out may alias z for all the compiler knows) */
    if (A.norm_weight) {
#pragma unroll
        for (int t = 0; t < kDV / 16; t++)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                const int r = r0 + kt_acc_row(lane, i), j = 16 * t + kt_acc_col(lane, i);
                const long long tok = ch.t0 + ch.pos0 + (r < ch.n ? r : 0);
                kt_acc_set(o[t], i, kt_acc_get(o[t], i) * rstd[i] * kt_elem_f(A.norm_weight, j) *
                                        kt_silu(kt_elem_f(A.z, tok * A.z_stride + (long long)h * kDV + j)));
            }
    }
    unsigned short *out = (unsigned short *)A.out;
#pragma unroll
    for (int t = 0; t < kDV / 16; t++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            const int r = r0 + kt_acc_row(lane, i), j = 16 * t + kt_acc_col(lane, i);
            if (r >= ch.n) continue;
            out[(ch.t0 + ch.pos0 + r) * (long long)A.out_stride + (long long)h * kDV + j] = kt_elem_bits(kt_acc_get(o[t], i));
        }

    /* the sequence's last chunk: its conv state, after prep has read the old one. The v channels
     * are the head's; the key head's q/k channels its first value head's. Ascending columns: each
     * reads a later one (or a token) before it is written. */
    if (ch.pos0 + ch.n == ch.len) {
        const bool init = !A.has_initial_state || A.has_initial_state[ch.seq] != 0;
        unsigned short *cs = (unsigned short *)A.conv_state + (long long)slot * A.conv_slot_stride;
        const int kw = A.conv_kw, nch = kDV + (h % R == 0 ? 2 * kDK : 0);
        for (int e = tid; e < nch; e += kNO) {
            const int gc = e < kDV ? 2 * H * kDK + h * kDV + e : e - kDV < kDK ? hk * kDK + (e - kDV) : (H + hk) * kDK + (e - kDV - kDK);
            unsigned short *col = cs + (long long)gc * A.conv_chan_stride;
            for (int u = 0; u < kw - 1; u++) {
                const int p = ch.len - (kw - 1) + u;
                const unsigned short v = p >= 0 ? ((const unsigned short *)A.qkv)[(long long)(ch.t0 + p) * A.qkv_stride + gc]
                                         : init ? col[(long long)(ch.len + u) * A.conv_col_stride] : (unsigned short)0;
                col[(long long)u * A.conv_col_stride] = v;
            }
        }
    }
}
