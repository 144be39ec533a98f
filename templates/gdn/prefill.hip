/* prefill.hip: the gated delta-net prefill of a batch of sequences in its chunked form, three
 * launches (ABI, launch order and workspace: templates/abi/gdn_prefill.h; geometry and law:
 * runtime/op_gdn_prefill.c; the float64 form it follows step for step: runtime/gdn_chunk_ref.c).
 * The recipe's axes (prefill.lua) read as
 *   BT   the chunk (tokens): the triangular system's size, every product's k or m,
 *   VK   the ssm state's layout (0: [.., K, V]; 1: K-last),
 *   DK   key head size, DV value head size (compiled in),
 *   BV   value columns a state-pass block owns (grid.x = dv / BV),
 *   NW   warps of the state pass,
 *   PF   the state pass's inputs (w^T, kd, u^T, G_last): 0 loaded when needed; 1 a chunk ahead
 *        in registers; 2 as 1, and w^T and kd also stored to LDS ahead (two buffers), so that a
 *        chunk holds only the barriers of its key split's exchange; 3 w^T and k as the product's
 *        operand fragments, written so by _wy and loaded a chunk ahead straight into each warp's
 *        registers (no LDS for them; vn takes k's decay in kd's place), each part reloaded as soon
 *        as the chunk is done with it (one set of registers); 4 as 3, with all of the next
 *        chunk's parts loaded at the chunk's top into a second set (twice the registers).
 * _wy runs 4 warps, _out BT / 16 (a warp a 16-row tile with every output column, which the norm
 * needs). _wy does the conv and the norms of its chunk and key head, then each value head's gates,
 * A, its inverse, w and u (v's conv goes straight into u's operand: v never goes through the
 * workspace). Every product is 16 x 16 x 16 fragments (the preludes' kt_mma: C += A W^T with A
 * [m][k] and W [n][k] row-major in LDS), operands rounded to the dtype, sums in fp32 (fla's
 * chunked kernels round the same operands); the triangular inverse and the state stay fp32.
 *
 * Only the state pass is serial (a sequence's chunks in order), and it carries the least work a
 * chunk: vn = u - w S and S = e^{G_last} S + kd^T vn (kd = k e^{G_last - G}), with S in the
 * accumulators for the whole sequence. Everything else (the conv, the norms, the gates,
 * (I + A)^-1, w, u, kd, the output) is chunk-parallel in the launches around it, and _wy writes
 * w and u transposed, as the state pass's products read them. */
#include "abi/gdn_prefill.h"
#include "gdn/gdn_ops.h"
#include "arch/attn_ops.h"
#include "arch/prefill_ops.h"             /* the state held as a score tile; copy_ops.h */

namespace {

constexpr int kBT = KT_BT, kDK = KT_DK, kDV = KT_DV, kBV = KT_BV;
constexpr int kLK = kDK + 8;                 /* row of a [.][dk] tile: 16 bytes of padding */
constexpr int kLT = kBT + 8;                 /* row of a [.][BT] tile */
constexpr int kNP = 4 * KT_WAVE;             /* _wy's threads */
constexpr int kNS = KT_NW * KT_WAVE;         /* the state pass's */
constexpr int kNO = kBT / 16 * KT_WAVE;      /* out's */
constexpr int kNC = 64;                      /* out's output columns a round (h^T and vn^T rows) */
constexpr int kMaxKW = 4;
constexpr bool kDirect = KT_PF == 3 || KT_PF == 4;   /* the state pass's operands as fragments (PF 3, 4) */
constexpr bool kTwoSets = KT_PF == 4;        /* ... the next chunk's in a second set (PF 4) */
constexpr bool kFolded = KT_PF == 5;         /* the chunk's step one product, kd folded into C and B (PF 5) */
constexpr bool kFrags = kDirect || kFolded;  /* operands stored as the state pass's fragments (w^T, k; -C) */

static_assert(kBT % 16 == 0 && kBT <= 64, "BT: 16, 32 or 64");
static_assert(kDK % 16 == 0 && kDV % kNC == 0 && kDV % kBV == 0 && kBV % 16 == 0, "16-wide tiles");

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

/* Tile t of the N (N + 1) / 2 on or below the diagonal of an N x N grid of tiles, rows i and
 * N - 1 - i dealt together (N + 1 tiles a pair), so that dealing t round the warps evens their
 * products (3/3/2/2 at N = 4) */
template <int N> KT_DEV void kt_lower_tile(int t, int &ti, int &tj)
{
    static_assert(N == 1 || N % 2 == 0, "row pairs");
    const int p = t / (N + 1), q = t % (N + 1);
    ti = q <= p ? p : N - 1 - p;
    tj = q <= p ? q : q - p - 1;
}

/* kKUnroll: k steps of a product unrolled: AMD's scheduler hoists every unrolled step's LDS loads
 * ahead of its first WMMA (64 VGPRs for dk 128), so there two at a time.
 * kRowGroup: rows of a channel loaded at once by the conv (a round trip a group): AMD holds the
 * rows' uniform offsets in SGPRs, and 16 spilled the conv's kernel on gfx1201; wave 64's masks
 * leave gfx942 too few for even 4 (34 of 128 variants excluded), so there a row at a time */
#if defined(KT_ARCH_SM90_H)
constexpr int kKUnroll = 8;
constexpr int kRowGroup = 16;
#else
constexpr int kKUnroll = 2;
constexpr int kRowGroup = KT_WAVE == 64 ? 1 : 8;
#endif

/* C[t] (16 x 16 each) += A W_t^T over K for t < NT: A at a ([m][k], lda), W_t at w + 16 t ldw
 * ([n][k], ldw), all in LDS; one strip of A's 16 rows, its fragment loaded once a k step for the NT
 * products (a tile at a time loads both operands each product) */
template <int K, int NT> KT_DEV void kt_strip_mma(kt_acc *c, const unsigned short *a, int lda, const unsigned short *w, int ldw,
                                                  int lane)
{
#pragma unroll kKUnroll
    for (int k0 = 0; k0 < K; k0 += 16) {
        kt_frag_a fa;
        kt_load_a(fa, a + k0, lda, lane);
#pragma unroll
        for (int t = 0; t < NT; t++) {
            kt_frag_b fb;
            kt_load_b(fb, w + 16 * t * ldw + k0, ldw, lane);
            kt_mma<kt_elem>(c[t], fa, fb);
        }
    }
}
/* C (16 x 16) += A W^T over K: the strip of one tile */
template <int K> KT_DEV void kt_tile_mma(kt_acc &c, const unsigned short *a, int lda, const unsigned short *w, int ldw,
                                         int lane)
{
    kt_strip_mma<K, 1>(&c, a, lda, w, ldw, lane);
}

/* PF 3-5's workspace tiles: a 16 x 16 operand tile as its lanes' fragments, lane after lane, each
 * fragment's registers as they are (512 bytes a tile on every target but gfx11, whose replicated
 * operands the recipe keeps off PF 3-5) */
constexpr int kFragTile = KT_WAVE * (int)sizeof(kt_frag_b);
static_assert(!kFrags || kFragTile == 512, "PF 3-5: a fragment tile in a dense tile's bytes");

#if defined(KT_ARCH_SM90_H) && !defined(KT_EMU_PRELUDE_H)
/* its own four registers: a struct copy of them went through memory (sm_90a's _wy spilled) */
KT_DEV void kt_frag_stg(unsigned char *p, const kt_frag_b &f) { kt_sts16(p, kt_v16_make(f.r[0], f.r[1], f.r[2], f.r[3])); }
KT_DEV void kt_frag_ldg(kt_frag_b &f, const unsigned char *p)
{
    const kt_v16 v = kt_ldg16(p);
    f.r[0] = v.x; f.r[1] = v.y; f.r[2] = v.z; f.r[3] = v.w;
}
#else
struct kt_frag_words { unsigned w[sizeof(kt_frag_b) / 4]; };   /* a fragment's registers as words */
KT_DEV void kt_frag_stg(unsigned char *p, const kt_frag_b &f)
{
    const kt_frag_words u = __builtin_bit_cast(kt_frag_words, f);
    if constexpr (sizeof(kt_frag_b) % 16 == 0) {
#pragma unroll
        for (int i = 0; i < (int)sizeof(kt_frag_b) / 16; i++)
            kt_sts16(p + 16 * i, kt_v16_make(u.w[4 * i], u.w[4 * i + 1], u.w[4 * i + 2], u.w[4 * i + 3]));
    } else {
#pragma unroll
        for (int i = 0; i < (int)sizeof(kt_frag_b) / 8; i++)
            ((unsigned long long *)p)[i] = u.w[2 * i] | (unsigned long long)u.w[2 * i + 1] << 32;
    }
}
KT_DEV void kt_frag_ldg(kt_frag_b &f, const unsigned char *p)
{
    kt_frag_words u;
    if constexpr (sizeof(kt_frag_b) % 16 == 0) {
#pragma unroll
        for (int i = 0; i < (int)sizeof(kt_frag_b) / 16; i++) {
            const kt_v16 v = kt_ldg16(p + 16 * i);
#pragma unroll
            for (int q = 0; q < 4; q++) u.w[4 * i + q] = kt_v16_word(v, q);
        }
    } else {
#pragma unroll
        for (int i = 0; i < (int)sizeof(kt_frag_b) / 8; i++) {
            const unsigned long long x = ((const unsigned long long *)p)[i];
            u.w[2 * i] = (unsigned)x;
            u.w[2 * i + 1] = (unsigned)(x >> 32);
        }
    }
    f = __builtin_bit_cast(kt_frag_b, u);
}
#endif

/* PF 3-5's fragment tiles stored 16 bytes a lane: NT accumulator tiles, each [k][n] (rows and
 * columns as the score maps give them where Score, else as the accumulator's), times scale, rounded
 * into the warp's own 16 rows of scratch (ld), read back as V's fragments (kt_load_v, as
 * kt_k_frag reads k) and stored lane after lane, tile t at dst + t x kFragTile, where the state pass
 * loads them whole (kt_frag_ldg). Scattered 2 bytes an element into their slots, a warp's store
 * touched 16 sectors for 64 bytes. */
template <int NT, bool Score>
KT_DEV void kt_frags_stg(unsigned short *scratch, int ld, const kt_acc *c, float scale, unsigned char *dst, int lane)
{
#pragma unroll
    for (int t = 0; t < NT; t++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            const int k = Score ? kt_s_q(lane, i) : kt_acc_row(lane, i), n = Score ? kt_s_n(lane, i) : kt_acc_col(lane, i);
            scratch[k * ld + 16 * t + n] = kt_bits(scale * kt_acc_get(c[t], i));
        }
    kt_wave_sync();
#pragma unroll
    for (int t = 0; t < NT; t++) {
        kt_frag_b f;
        kt_load_v(f, scratch + 16 * t, ld, lane);
        kt_frag_stg(dst + (long long)t * kFragTile + lane * (int)sizeof(kt_frag_b), f);
    }
    kt_wave_sync();   /* every lane's reads before the scratch's next writes */
}

/* rows x cols 16-bit elements of a dense global array (row length cols), a thread's share in
 * registers, 16 bytes a move: kt_tile_ldg issues them all, kt_tile_sts stores them to an LDS tile
 * (row length ld). A copy's loads all before its first store, and two tiles' loads before either's
 * stores, wait one round trip where a pair of moves at a time waited one a pair (_out's copies
 * were its chain: 20 round trips a block) */
template <int Rows, int Cols, int Threads> struct kt_tile_regs {
    static constexpr int kPer = Cols / 8, kN = Rows * kPer, kIt = (kN + Threads - 1) / Threads;
    kt_v16 v[kIt];
};
template <int Rows, int Cols, int Threads>
KT_DEV void kt_tile_ldg(kt_tile_regs<Rows, Cols, Threads> &t, const unsigned short *g, int tid)
{
    using T = kt_tile_regs<Rows, Cols, Threads>;
#pragma unroll
    for (int k = 0; k < T::kIt; k++) {
        const int e = tid + k * Threads;
        if (T::kN % Threads == 0 || e < T::kN) t.v[k] = kt_ldg16(g + (long long)(e / T::kPer) * Cols + 8 * (e % T::kPer));
    }
}
template <int Rows, int Cols, int Threads>
KT_DEV void kt_tile_sts(unsigned short *lds, int ld, const kt_tile_regs<Rows, Cols, Threads> &t, int tid)
{
    using T = kt_tile_regs<Rows, Cols, Threads>;
#pragma unroll
    for (int k = 0; k < T::kIt; k++) {
        const int e = tid + k * Threads;
        if (T::kN % Threads == 0 || e < T::kN) kt_sts16(lds + (e / T::kPer) * ld + 8 * (e % T::kPer), t.v[k]);
    }
}
/* rows x cols between the global array and an LDS tile (ToLds) or back, a pair of moves a thread
 * at a time (8 registers: the state pass's few-warp forms hold their state beside them) */
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
/* to LDS in row bands of 8 moves a thread (32 registers), each band's loads before its stores */
template <int Rows, int Cols, int Threads>
KT_DEV void kt_copy_tile_banded(unsigned short *lds, int ld, const unsigned short *g, int tid)
{
    constexpr int kBand = Rows * (Cols / 8) <= 8 * Threads ? Rows : 8 * Threads / (Cols / 8);
    static_assert(Rows % kBand == 0, "whole bands");
#pragma unroll 1
    for (int r0 = 0; r0 < Rows; r0 += kBand) {
        kt_tile_regs<kBand, Cols, Threads> t;
        kt_tile_ldg(t, g + (long long)r0 * Cols, tid);
        kt_tile_sts(lds + r0 * ld, ld, t, tid);
    }
}
/* two tiles to LDS: both tiles' loads before either's stores (one round trip) where that is at most
 * MaxMoves moves a thread (4 registers each), else each tile by bands */
template <int R1, int C1, int R2, int C2, int Threads, int MaxMoves>
KT_DEV void kt_copy_tile_pair(unsigned short *l1, int ld1, const unsigned short *g1, unsigned short *l2, int ld2,
                              const unsigned short *g2, int tid)
{
    if constexpr (kt_tile_regs<R1, C1, Threads>::kIt + kt_tile_regs<R2, C2, Threads>::kIt <= MaxMoves) {
        kt_tile_regs<R1, C1, Threads> t1;
        kt_tile_regs<R2, C2, Threads> t2;
        kt_tile_ldg(t1, g1, tid);
        kt_tile_ldg(t2, g2, tid);
        kt_tile_sts(l1, ld1, t1, tid);
        kt_tile_sts(l2, ld2, t2, tid);
    } else {
        kt_copy_tile_banded<R1, C1, Threads>(l1, ld1, g1, tid);
        kt_copy_tile_banded<R2, C2, Threads>(l2, ld2, g2, tid);
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
 * token t0, rounded (as vLLM stores them): put(r, the dtype's bits). Input p of the channel is
 * its token's qkv for p >= 0, history column kw - 1 + p before it (zero without an initial state).
 * The taps are right-aligned in a window of four, so every index is a constant. */
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
            put(r0 + r, kt_bits(kt_silu_fast(y)));
#pragma unroll
            for (int j = 0; j < kMaxKW - 1; j++) x[j] = x[j + 1];
        }
    }
}

/* kFusedPrep: _wy does the conv and the norms itself (v's conv straight into its operand, v never
 * through the workspace), one launch fewer; on wave 64 (gfx942) that kernel spilled SGPRs and at
 * BT 16 sm_90a's VGPRs, so there _prep runs first and parks v in u's place (the same rule is
 * op_gdn_prefill.c's kt_gdn_prefill_runs_prep, which the emulation's launches follow) */
constexpr bool kFusedPrep = KT_WAVE == 32 && kBT > 16;

/* eight dtype bit patterns as one 16-byte word in memory order (element e: half e % 2 of word
 * e / 2), and element e of such a word */
KT_DEV kt_v16 kt_v16_pack8(const unsigned short (&h)[8])
{
    return kt_v16_make(h[0] | (unsigned)h[1] << 16, h[2] | (unsigned)h[3] << 16, h[4] | (unsigned)h[5] << 16,
                       h[6] | (unsigned)h[7] << 16);
}
KT_DEV unsigned short kt_v16_half(kt_v16 v, int e) { return (unsigned short)(kt_v16_word(v, e / 2) >> (16 * (e % 2))); }

/* Whether the conv may take 8 channels a 16-byte load (kt_conv_rows8): the deployed kernel width,
 * qkv's rows and the weights 16-byte aligned. Uniform: the grid takes one path or the other.
 * NVIDIA only for now: beside the channel-a-thread path it falls back to, gfx1201's _wy spilled 21
 * to 28 SGPRs (the rows' uniform offsets and masks, hoisted over the value heads' loop) */
#if defined(KT_ARCH_SM90_H) || defined(KT_EMU_CONV_VEC8)   /* the emulation of sm_90's layout takes it too */
constexpr bool kConvVec8 = true;
#else
constexpr bool kConvVec8 = false;
#endif
KT_DEV bool kt_conv_vec8(const kt_gdn_prefill_args &A)
{
    return kConvVec8 && A.conv_kw == kMaxKW && A.qkv_stride % 8 == 0 && ((unsigned long long)A.qkv & 15) == 0 &&
           ((unsigned long long)A.conv_weight & 15) == 0;
}

/* The conv of channels gc .. gc + 7 (gc a multiple of 8) over chunk rows r0 .. r0 + 7, where
 * kt_conv_vec8 holds: a row's eight inputs one 16-byte load, and all eleven rows (three before r0)
 * in flight at once: one round trip, where kt_conv_rows takes a channel's rows 2 bytes a lane, a
 * group of rows a round trip. put(rr, y) takes row r0 + rr's eight outputs rounded as stored (the
 * dtype's bits; zero past the chunk's n rows, whose inputs are not loaded). */
template <class Put>
KT_DEV void kt_conv_rows8(const kt_gdn_prefill_args &A, const unsigned short *cs, int gc, int t0, int pos0, int r0,
                          int n, bool init, Put put)
{
    constexpr int kIn = 8 + kMaxKW - 1;
    const unsigned short *x0 = (const unsigned short *)A.qkv + (long long)t0 * A.qkv_stride + gc;
    const unsigned short *cw = (const unsigned short *)A.conv_weight + (long long)gc * kMaxKW;
    kt_v16 wt[kMaxKW], in[kIn];   /* weights: word m, channels 2m and 2m + 1's four taps */
#pragma unroll
    for (int m = 0; m < kMaxKW; m++) wt[m] = kt_ldg16(cw + 8 * m);
#pragma unroll
    for (int j = 0; j < kIn; j++) {
        const int r = r0 + j - (kMaxKW - 1), p = pos0 + r;   /* input j: chunk row r, token p of the sequence */
        in[j] = kt_v16_make(0, 0, 0, 0);
        if (r >= n) continue;
        if (p >= 0) {
            in[j] = kt_ldg16(x0 + (long long)p * A.qkv_stride);
        } else if (init) {   /* before the sequence: the slot's history, column kw - 1 + p */
            const unsigned short *h = cs + (long long)gc * A.conv_chan_stride + (long long)(kMaxKW - 1 + p) * A.conv_col_stride;
            unsigned short hc[8];
#pragma unroll
            for (int q = 0; q < 8; q++) hc[q] = h[q * A.conv_chan_stride];
            in[j] = kt_v16_pack8(hc);
        }
    }
#pragma unroll
    for (int rr = 0; rr < 8; rr++) {
        unsigned short y[8];
#pragma unroll
        for (int ch = 0; ch < 8; ch++) {
            float acc = 0.0f;
#pragma unroll
            for (int t = 0; t < kMaxKW; t++)
                acc += kt_to_float(kt_elem{kt_v16_half(wt[ch / 2], 4 * (ch % 2) + t)}) * kt_to_float(kt_elem{kt_v16_half(in[rr + t], ch)});
            y[ch] = r0 + rr < n ? kt_bits(kt_silu_fast(acc)) : (unsigned short)0;
        }
        put(rr, y);
    }
}

/* ---------------- the WY form's pieces (_wy) ---------------- */

struct alignas(16) kt_f4 { float x[4]; };
constexpr int kLA = kBT + 4;                 /* row of A and X (fp32): 16-byte aligned, for 4-column loads */

struct alignas(16) kt_wy_smem {
    unsigned short x[kBT][kLK];              /* q, then k, normalized */
    union {
        unsigned short t[kDK > kDV ? kDK : kDV][kLT];   /* (beta v)^T, then (beta e^G k)^T */
        struct {
            float diag[kBT / 16][16][16];    /* the diagonal blocks' inverses, column by column */
            float scratch[16][kBT];          /* the inverse's block-row products */
        } inv;
    } u;
    union {                                  /* a is dead once rounded into xb: 4 blocks an SM on sm_90, not 3 */
        float a[kBT][kLA];                   /* A, then X = (I + A)^-1 in place */
        unsigned short xb[kBT][kLT];         /* X rounded: the w/u products' A operand */
    };
    float g[kBT], beta[kBT], fw[kBT];        /* fw: beta e^G, w's row factor */
};
static_assert(__builtin_offsetof(kt_wy_smem, a) % 16 == 0, "A's rows 16-byte aligned: the inverse's 4-column loads");

/* X = (I + A)^-1 of the strictly lower-triangular A in sm.a, in place (fp32), then rounded into
 * sm.xb (a's bytes): the 16 x 16 diagonal blocks by forward substitution, a thread a (block, column) writing
 * its own column into sm.u.inv.diag (it reads back only what it wrote, and A, which stays: no
 * barrier between the rows; its column is zero above the diagonal, so each row's sum, unrolled
 * over the rows before it, adds the same terms in the same order as a substitution from the
 * diagonal), then each block row from the ones above it, X_ij = -X_ii sum_{j <= m < i} A_im X_mj.
 * Every sum is unrolled by 16, so that its loads issue together (one LDS round trip a term
 * bound the loops); a register column spilled _wy's hoisted loads on sm_90. */
KT_DEV void kt_tril_inverse(kt_wy_smem &sm, int tid)
{
    constexpr int nb = kBT / 16;
    const int b = tid / 16, o = 16 * b, s = tid % 16;
    if (tid < 16 * nb) {
        float (*d)[16] = sm.u.inv.diag[b];
#pragma unroll 1
        for (int r = 0; r < 16; r++) {
            float acc = r == s ? 1.0f : 0.0f;
#pragma unroll
            for (int m = 0; m < 15; m++) {   /* selects, not branches: wave 64's masks spilled SGPRs */
                const float t = sm.a[o + r][o + m] * d[m][s];
                acc -= m < r ? t : 0.0f;
            }
            d[r][s] = acc;
        }
    }
    kt_barrier();
    if (tid < 16 * nb)
        for (int r = 0; r < 16; r++) sm.a[o + r][o + s] = sm.u.inv.diag[b][r][s];
    kt_barrier();
    /* a thread a (row, 4 columns): A's term read once for the four, X's four columns one 16-byte
     * load (a term a column took two scalar loads: half of _wy's LDS traffic); each column's sum
     * adds the same terms in the same order as one column a thread */
#pragma unroll 1
    for (int bi = 1; bi < nb; bi++) {
        const int w = 16 * bi, q = w / 4;
        for (int e = tid; e < 16 * q; e += kNP) {
            const int r = e / q, c = 4 * (e % q);
            kt_f4 acc = {{0.0f, 0.0f, 0.0f, 0.0f}};
            for (int m0 = c / 16 * 16; m0 < w; m0 += 16)
#pragma unroll
                for (int m = 0; m < 16; m++) {
                    const float t = sm.a[w + r][m0 + m];
                    const kt_f4 x = *(const kt_f4 *)&sm.a[m0 + m][c];
#pragma unroll
                    for (int j = 0; j < 4; j++) acc.x[j] += t * x.x[j];
                }
            *(kt_f4 *)&sm.u.inv.scratch[r][c] = acc;
        }
        kt_barrier();
        for (int e = tid; e < 16 * q; e += kNP) {
            const int r = e / q, c = 4 * (e % q);
            kt_f4 acc = {{0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
            for (int m = 0; m < 16; m++) {   /* X_ii: zero past r */
                const float t = sm.a[w + r][w + m];
                const kt_f4 x = *(const kt_f4 *)&sm.u.inv.scratch[m][c];
#pragma unroll
                for (int j = 0; j < 4; j++) acc.x[j] += t * x.x[j];
            }
#pragma unroll
            for (int j = 0; j < 4; j++) acc.x[j] = -acc.x[j];
            *(kt_f4 *)&sm.a[w + r][c] = acc;
        }
        kt_barrier();
    }
    /* X rounded into xb over a's bytes, two columns a word, a band of rows at a time: each band's
     * words read by every thread before any is written; xb's rows are shorter than a's, so the
     * writes of the bands above never reach a band's a rows (no barrier between bands' writes and
     * the next band's reads). Bands, not the whole tile at once: 16 words a thread held across the
     * barrier took sm_90's _wy from 80 registers to 128 and a spill */
    constexpr int kBand = kBT > 32 ? 32 : kBT, kBandWords = kBand * kBT / 2, kPerT = (kBandWords + kNP - 1) / kNP;
    static_assert(kLT * 2 <= kLA * 4, "xb's rows within a's");
#pragma unroll 1
    for (int b0 = 0; b0 < kBT; b0 += kBand) {
        unsigned wd[kPerT];
#pragma unroll
        for (int m = 0; m < kPerT; m++) {
            const int e = tid + m * kNP, r = b0 + e / (kBT / 2), s2 = 2 * (e % (kBT / 2));
            if (kBandWords % kNP == 0 || e < kBandWords) wd[m] = kt_round2<kt_elem>(sm.a[r][s2], sm.a[r][s2 + 1]);
        }
        kt_barrier();
#pragma unroll
        for (int m = 0; m < kPerT; m++) {
            const int e = tid + m * kNP, r = b0 + e / (kBT / 2), s2 = 2 * (e % (kBT / 2));
            if (kBandWords % kNP == 0 || e < kBandWords) *(unsigned *)&sm.xb[r][s2] = wd[m];
        }
    }
    kt_barrier();
}

/* whether accumulator elements 2j and 2j + 1 hold columns n and n + 1 (n even) of one row on
 * every lane, rows and columns as Row and Col map (lane, element): then they move as one 32-bit
 * word. In the accumulators' own orientation (kColPairs: NVIDIA's mma.sync; AMD's hold a column's
 * rows) a tile's row-major stores and out's z loads pair; in the state's (kAccPairs, below) S^T's
 * and vn^T's */
template <int (*Row)(int, int), int (*Col)(int, int)> constexpr bool kt_pairs_adjacent()
{
    for (int l = 0; l < kt_frag_lanes; l++)
        for (int j = 0; j + 1 < kt_acc_elems; j += 2)
            if (Row(l, j) != Row(l, j + 1) || Col(l, j) % 2 != 0 || Col(l, j + 1) != Col(l, j) + 1)
                return false;
    return true;
}
constexpr bool kColPairs = kt_pairs_adjacent<kt_acc_row, kt_acc_col>();
constexpr bool kAccPairs = kt_pairs_adjacent<kt_s_q, kt_s_n>();   /* the state's (and the scores') orientation */
static_assert(kt_acc_elems % 2 == 0, "accumulator elements in pairs");

/* a tile in the state's (and the scores') orientation, rounded, to p[q * ld + n]: its N
 * accumulator elements from e0 (e0 and N even), or all of them */
template <int N> KT_DEV void kt_acc_store_elems(unsigned short *p, int ld, const kt_acc &c, int e0, int lane)
{
    if constexpr (kAccPairs) {
#pragma unroll
        for (int j = e0; j < e0 + N; j += 2)
            *(unsigned *)(p + kt_s_q(lane, j) * ld + kt_s_n(lane, j)) = kt_round2<kt_elem>(kt_acc_get(c, j), kt_acc_get(c, j + 1));
    } else {
#pragma unroll
        for (int i = e0; i < e0 + N; i++) p[kt_s_q(lane, i) * ld + kt_s_n(lane, i)] = kt_bits(kt_acc_get(c, i));
    }
}
KT_DEV void kt_acc_store(unsigned short *p, int ld, const kt_acc &c, int lane) { kt_acc_store_elems<kt_acc_elems>(p, ld, c, 0, lane); }

/* dst [N][BT] = (X T^T)^T = T X^T, T = sm.u.t's first N rows ([n][BT]), rounded: the state
 * pass's operands are w^T and u^T (the workspace's tiles: 4-byte aligned, even rows); Frags (PF 3, 4's
 * w^T): the state pass's fragments instead, tile (key tile, token tile) at 256 elements a tile.
 * A warp a strip of 16 rows of T by every token tile (kt_strip_mma: 5 LDS matrix loads a k step
 * at BT 64 where a tile a warp took 8) */
template <int N, bool Frags = false> KT_DEV void kt_x_product_t(kt_wy_smem &sm, unsigned short *dst, int wv, int lane)
{
    constexpr int kR = kBT / 16;
#pragma unroll 1
    for (int tj = wv; tj < N / 16; tj += 4) {
        kt_acc c[kR];
#pragma unroll
        for (int ti = 0; ti < kR; ti++) kt_acc_zero(c[ti]);
        kt_strip_mma<kBT, kR>(c, &sm.u.t[16 * tj][0], kLT, &sm.xb[0][0], kLT, lane);
        if constexpr (Frags) {   /* w^T as the state pass's fragments (PF 3, 4), staged in the strip's own rows of T */
            kt_frags_stg<kR, false>(&sm.u.t[16 * tj][0], kLT, c, 1.0f, (unsigned char *)(dst + tj * kR * 256), lane);
            continue;
        }
#pragma unroll
        for (int ti = 0; ti < kR; ti++) {
            if constexpr (kColPairs) {
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i += 2)
                    *(unsigned *)(dst + (16 * tj + kt_acc_row(lane, i)) * kBT + 16 * ti + kt_acc_col(lane, i)) =
                        kt_round2<kt_elem>(kt_acc_get(c[ti], i), kt_acc_get(c[ti], i + 1));
            } else {
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++)
                    dst[(16 * tj + kt_acc_row(lane, i)) * kBT + 16 * ti + kt_acc_col(lane, i)] = kt_bits(kt_acc_get(c[ti], i));
            }
        }
    }
}

/* PF 5: as kt_x_product_t, the strip stored for out (dst: u^T row-major [dv][BT]; where W, w
 * row-major [BT][dk], out's operand of vn = u - w S), each strip of 16 rows then folded over the
 * chunk's k with kd's decay, F = (strip e^{G_last - G}) k, 16 x dk a strip, into fold: u's B^T =
 * u^T kd row-major [dv][dk]; w's -C = -(w^T kd) as the state pass's fragments, tiles [dk/16][dk/16].
 * The strip is made in the score orientation (kt_score_mma), so that it feeds the fold as P
 * straight from its registers, as FlashAttention's scores feed P V. */
template <int N, bool W>
KT_DEV void kt_x_product_folded(kt_wy_smem &sm, unsigned short *dst, unsigned short *fold, int wv, int lane)
{
    constexpr int kR = kBT / 16, kN = kDK / 16;
    const float gl = sm.g[kBT - 1];
#pragma unroll 1
    for (int tj = wv; tj < N / 16; tj += 4) {
        kt_acc c[kR];
#pragma unroll
        for (int ti = 0; ti < kR; ti++) kt_acc_zero(c[ti]);
#pragma unroll kKUnroll
        for (int k0 = 0; k0 < kBT; k0 += 16) {
            kt_frag_a fa;
            kt_load_a(fa, &sm.u.t[16 * tj][k0], kLT, lane);
#pragma unroll
            for (int ti = 0; ti < kR; ti++) {
                kt_frag_b fb;
                kt_load_b(fb, &sm.xb[16 * ti][k0], kLT, lane);
                kt_score_mma<kt_elem>(c[ti], fa, fb);
            }
        }
        kt_frag_a p[kR];
#pragma unroll
        for (int ti = 0; ti < kR; ti++) {
            if constexpr (W) {
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++)
                    dst[(16 * ti + kt_s_n(lane, i)) * kDK + 16 * tj + kt_s_q(lane, i)] = kt_bits(kt_acc_get(c[ti], i));
            } else {
                kt_acc_store(dst + 16 * tj * kBT + 16 * ti, kBT, c[ti], lane);
            }
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++)
                kt_acc_set(c[ti], i, kt_acc_get(c[ti], i) * kt_exp_fast(gl - sm.g[16 * ti + kt_s_n(lane, i)]));
            kt_p_frag<kt_elem>(p[ti], c[ti]);
        }
        /* kR tiles of F a pass: -C's staged in the strip's own rows of T (dead once its product is done) */
#pragma unroll 1
        for (int n0 = 0; n0 < kN; n0 += kR) {
            kt_acc o[kR];
#pragma unroll
            for (int n = 0; n < kR; n++) {
                kt_acc_zero(o[n]);
#pragma unroll
                for (int ti = 0; ti < kR; ti++) {
                    kt_frag_b f;
                    kt_load_v(f, &sm.x[16 * ti][16 * (n0 + n)], kLK, lane);
                    kt_pv_mma<kt_elem>(o[n], p[ti], f);
                }
            }
            if constexpr (W) {
                kt_frags_stg<kR, true>(&sm.u.t[16 * tj][0], kLT, o, -1.0f, (unsigned char *)(fold + (tj * kN + n0) * 256), lane);
            } else {
#pragma unroll
                for (int n = 0; n < kR; n++) kt_acc_store(fold + 16 * tj * kDK + 16 * (n0 + n), kDK, o[n], lane);
            }
        }
    }
}

/* PF 3, 4: k ([BT][dk] in x, rounded) in the state pass's fragments of its update, tile (token tile,
 * key tile) at dst + (token tile x dk / 16 + key tile) x kFragTile */
template <class Tile> KT_DEV void kt_k_frag(const Tile &x, unsigned char *dst, int wv, int lane)
{
#pragma unroll 1
    for (int tile = wv; tile < kBT / 16 * (kDK / 16); tile += 4) {
        kt_frag_b f;
        kt_load_v(f, &x[16 * (tile / (kDK / 16))][16 * (tile % (kDK / 16))], kLK, lane);
        kt_frag_stg(dst + (long long)tile * kFragTile + lane * (int)sizeof(kt_frag_b), f);
    }
}
} /* namespace */

namespace {
/* q, then k, of chunk c's key head hk: conv, L2 norm (q times scale), into the workspace (out
 * reads both); k is left in x for _wy's A and w. x is the caller's LDS array itself (a template
 * parameter, not a decayed pointer): through a generic pointer gfx942's _prep took 7 SGPRs more and
 * spilled in 11 of its 14 BT 64 forms */
template <class Tile>
KT_DEV void kt_conv_qk(const kt_gdn_prefill_args &A, const unsigned short *cs, const kt_chunk &ch, bool init, int c,
                       int hk, Tile &x, int tid, int lane, int wv)
{
    const int H = A.num_k_heads;
    const bool vec = kFusedPrep && kt_conv_vec8(A);
#pragma unroll 1
    for (int part = 0; part < 2; part++) {
        if (vec) {   /* a thread 8 channels x 8 rows, each row's eight one 16-byte store */
            for (int e = tid; e < kDK / 8 * (kBT / 8); e += kNP) {
                const int i = 8 * (e % (kDK / 8)), r0 = 8 * (e / (kDK / 8));
                kt_conv_rows8(A, cs, (part * H + hk) * kDK + i, ch.t0, ch.pos0, r0, ch.n, init,
                              [&](int rr, const unsigned short (&y)[8]) {
                                  kt_sts16(&x[r0 + rr][i], kt_v16_pack8(y));
                              });
            }
        } else {
            for (int i = tid; i < kDK; i += kNP) {
                kt_conv_rows(A, cs, (part * H + hk) * kDK + i, ch.t0, ch.pos0, ch.n, init,
                             [&](int r, unsigned short y) { x[r][i] = y; });
                for (int r = ch.n; r < kBT; r++) x[r][i] = 0;
            }
        }
        kt_barrier();
        for (int r = wv; r < ch.n; r += 4) {
            float ss = 0.0f;
            for (int i = lane; i < kDK; i += KT_WAVE) {
                const float v = kt_to_float(kt_elem{x[r][i]});
                ss += v * v;
            }
#pragma unroll
            for (int m = KT_WAVE / 2; m > 0; m >>= 1) ss += kt_shfl_xor(ss, m);
            const float rn = (part == 0 ? A.scale : 1.0f) / __builtin_sqrtf(ss + 1e-6f);
            for (int i = lane; i < kDK; i += KT_WAVE) x[r][i] = kt_bits(kt_to_float(kt_elem{x[r][i]}) * rn);
        }
        kt_barrier();
        unsigned short *dst = (unsigned short *)(part ? A.ws_k : A.ws_q) + ((long long)c * H + hk) * kBT * kDK;
        kt_copy_tile<kBT, kDK, kNP, false>(&x[0][0], kLK, dst, tid);
        kt_barrier();
    }
}
} /* namespace */

/* ---------------- _prep (wave 64, or BT 16) ---------------- */

namespace {
/* the conv's: a [BT][dk] tile of q, then of k */
struct alignas(16) kt_conv_smem {
    unsigned short x[kBT][kLK];
};
} /* namespace */

KT_KERNEL(KT_CAT(KT_KERNEL_NAME, _prep), kNP)(kt_gdn_prefill_args A)
{
    if constexpr (kFusedPrep) return;   /* never launched there: an empty companion */
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_conv_smem &sm = *(kt_conv_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_conv_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int c = A.chunk_begin + kt_block_id_x(), hk = kt_block_id_y();   /* this launch's part */
    kt_chunk ch;
    if (c >= A.chunk_end || !kt_find_chunk(A.query_start_loc, A.batch, c, ch)) return;
    const int slot = A.state_indices[ch.seq];
    if (slot < 0) return;
    const bool init = !A.has_initial_state || A.has_initial_state[ch.seq] != 0;
    const int H = A.num_k_heads, HV = A.num_v_heads, R = HV / H;
    const unsigned short *cs = (const unsigned short *)A.conv_state + (long long)slot * A.conv_slot_stride;

    kt_conv_qk(A, cs, ch, init, c, hk, sm.x, tid, lane, wv);

    /* each value head's conv outputs, parked in u's workspace rows (row-major [BT][dv], zero past
     * the sequence) for _wy */
#pragma unroll 1
    for (int rr = 0; rr < R; rr++) {
        const int h = hk * R + rr;
        unsigned short *uh = (unsigned short *)A.ws_u + ((long long)c * HV + h) * kBT * kDV;
        for (int j = tid; j < kDV; j += kNP) {
            kt_conv_rows(A, cs, 2 * H * kDK + h * kDV + j, ch.t0, ch.pos0, ch.n, init,
                         [&](int r, unsigned short y) { uh[r * kDV + j] = y; });
            for (int r = ch.n; r < kBT; r++) uh[r * kDV + j] = 0;
        }
    }
}

/* ---------------- _wy ---------------- */

/* _wy, told of its 4 blocks an SM (sm_90's LDS holds 4): ptxas takes 128 registers; untold, the
 * 8 x 8 conv took 168 (3 blocks an SM), and PF 3's fragments 80 and a spill (AMD: no such hint).
 * fp16 spilled 8 bytes at 128 (every BT 32 and 64 form: fp16 prefill had only BT 16 left), so it
 * is told 3 */
template <class T> struct kt_wy_blocks { static constexpr int n = 4; };
template <> struct kt_wy_blocks<kt_f16> { static constexpr int n = 3; };
KT_KERNEL_MIN_BLOCKS(KT_CAT(KT_KERNEL_NAME, _wy), kNP, kt_wy_blocks<kt_elem>::n)(kt_gdn_prefill_args A)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_wy_smem &sm = *(kt_wy_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_wy_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int c = A.chunk_begin + kt_block_id_x(), hk = kt_block_id_y();   /* this launch's part */
    kt_chunk ch;
    if (c >= A.chunk_end || !kt_find_chunk(A.query_start_loc, A.batch, c, ch)) return;
    const int slot = A.state_indices[ch.seq];
    if (slot < 0) return;
    const bool init = !A.has_initial_state || A.has_initial_state[ch.seq] != 0;
    const int H = A.num_k_heads, HV = A.num_v_heads, R = HV / H;
    const unsigned short *cs = (const unsigned short *)A.conv_state + (long long)slot * A.conv_slot_stride;

    /* q and k (k stays in sm.x for A and w); unfused, _prep did them: k from the workspace */
    if constexpr (kFusedPrep)
        kt_conv_qk(A, cs, ch, init, c, hk, sm.x, tid, lane, wv);
    else
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
        /* a row's running sum, the additions in the order of one thread's loop over the rows */
        float run = 0.0f;
        if (tid < kBT) {
            /* whole on NVIDIA, its loads in flight together; by 8 on AMD (the whole unroll's
             * offsets spilled gfx942's and gfx1201's SGPRs; by 8, nvcc spilled sm_90's registers) */
#if defined(KT_ARCH_SM90_H)
#pragma unroll
#else
#pragma unroll 8
#endif
            for (int r = 0; r < kBT; r++) run += r <= tid ? sm.g[r] : 0.0f;
        }
        kt_barrier();
        if (tid < kBT) {
            sm.g[tid] = run;
            sm.fw[tid] = sm.beta[tid] * __builtin_expf(run);
            A.ws_g[ch_h * kBT + tid] = run;
        }
        kt_barrier();

        /* A = beta_r e^{G_r - G_s} k_r . k_s below the diagonal. At BT 64 (kDeal) only the tiles on
         * or below it, dealt 3/3/2/2 a warp (kt_lower_tile; the square's tiles gave warp 0 four
         * products and warp 3 one), then the blocks above zeroed, 16 bytes a store (X's zeros
         * there: the inverse rounds the whole square); below it the square's tiles, which fall
         * 1/0/1/1 at BT 32 already (dealt, fp16's _wy spilled there on sm_90a) */
        constexpr bool kDeal = kKT >= 4;
#pragma unroll 1
        for (int tile = wv; tile < (kDeal ? kKT * (kKT + 1) / 2 : kKT * kKT); tile += 4) {
            int ti = tile / kKT, tj = tile % kKT;
            if constexpr (kDeal) kt_lower_tile<kKT>(tile, ti, tj);
            kt_acc kk;
            kt_acc_zero(kk);
            if (kDeal || ti >= tj) kt_tile_mma<kDK>(kk, &sm.x[16 * ti][0], kLK, &sm.x[16 * tj][0], kLK, lane);
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                const int r = 16 * ti + kt_acc_row(lane, i), s = 16 * tj + kt_acc_col(lane, i);
                sm.a[r][s] = s < r ? sm.beta[r] * kt_exp_fast(sm.g[r] - sm.g[s]) * kt_acc_get(kk, i) : 0.0f;
            }
        }
        for (int e = tid; kDeal && e < kBT * kBT / 4; e += kNP) {
            const int r = e / (kBT / 4), c = 4 * (e % (kBT / 4));
            if (c / 16 > r / 16) *(kt_f4 *)&sm.a[r][c] = kt_f4{{0.0f, 0.0f, 0.0f, 0.0f}};
        }
        kt_barrier();
        kt_tril_inverse(sm, tid);

        /* u = X (beta v): the value head's conv straight into the transposed operand (zero past the
         * sequence); unfused, v parked in u's place by _prep */
        unsigned short *uh = (unsigned short *)A.ws_u + ch_h * kBT * kDV;
        if constexpr (kFusedPrep) {
            if (kt_conv_vec8(A)) {   /* 8 channels x 8 rows a thread, each channel's eight rows one 16-byte store */
                /* row groups fastest: a phase's eight stores (16 bytes a lane) then fall in eight
                 * bank groups (u.t's rows 8 apart share one: channels fastest met 8-way conflicts);
                 * the loads stay whole sectors (four channel groups of 8 rows a request) */
                for (int e = tid; e < kDV / 8 * (kBT / 8); e += kNP) {
                    const int j = 8 * (e / (kBT / 8)), r0 = 8 * (e % (kBT / 8));
                    unsigned short t[8][8];   /* [channel][row] */
                    kt_conv_rows8(A, cs, 2 * H * kDK + h * kDV + j, ch.t0, ch.pos0, r0, ch.n, init,
                                  [&](int rr, const unsigned short (&y)[8]) {
#pragma unroll
                                      for (int q = 0; q < 8; q++)
                                          t[q][rr] = kt_bits(kt_to_float(kt_elem{y[q]}) * sm.beta[r0 + rr]);
                                  });
#pragma unroll
                    for (int q = 0; q < 8; q++) kt_sts16(&sm.u.t[j + q][r0], kt_v16_pack8(t[q]));
                }
            } else {
                for (int j = tid; j < kDV; j += kNP) {
                    kt_conv_rows(A, cs, 2 * H * kDK + h * kDV + j, ch.t0, ch.pos0, ch.n, init,
                                 [&](int r, unsigned short y) { sm.u.t[j][r] = kt_bits(kt_to_float(kt_elem{y}) * sm.beta[r]); });
                    for (int r = ch.n; r < kBT; r++) sm.u.t[j][r] = 0;
                }
            }
        } else {
            for (int j = tid; j < kDV; j += kNP)
#pragma unroll 1
                for (int r0 = 0; r0 < kBT; r0 += kRowGroup) {
                    unsigned short in[kRowGroup];   /* a group's loads before its stores: a round trip a group */
#pragma unroll
                    for (int r = 0; r < kRowGroup; r++) in[r] = uh[(r0 + r) * kDV + j];
#pragma unroll
                    for (int r = 0; r < kRowGroup; r++)
                        sm.u.t[j][r0 + r] = kt_bits(kt_to_float(kt_elem{in[r]}) * sm.beta[r0 + r]);
                }
        }
        kt_barrier();
        /* u^T over v's place: every v read before the barrier */
        if constexpr (kFolded) kt_x_product_folded<kDV, false>(sm, uh, (unsigned short *)A.ws_b + ch_h * kDV * kDK, wv, lane);
        else kt_x_product_t<kDV>(sm, uh, wv, lane);
        kt_barrier();

        /* w = X (beta e^G k): k's rows scaled into the transposed operand, a thread 8 rows x 8 keys
         * by 16-byte loads and stores (an element a thread met 4-way bank conflicts on x's rows).
         * A row group and a key group a lane, skewed: the lanes of a phase take distinct row
         * groups (the stores' bank groups) and distinct key groups (the loads': x's rows 8 apart
         * share one, and one key group a phase met 8-way conflicts there) */
        static_assert((kDK / 8) % (kBT / 8) == 0, "key groups a whole number of row-group rounds");
        for (int e = tid; e < kBT / 8 * (kDK / 8); e += kNP) {
            constexpr int nb = kBT / 8;
            const int l = e % nb, g = e / nb;
            const int r0 = 8 * l, i0 = 8 * (g / nb * nb + (l + g) % nb);
            unsigned short t[8][8];   /* [key][row] */
#pragma unroll
            for (int rr = 0; rr < 8; rr++) {
                const kt_v16 v = *(const kt_v16 *)&sm.x[r0 + rr][i0];
                const float f = sm.fw[r0 + rr];
#pragma unroll
                for (int q = 0; q < 8; q++) t[q][rr] = kt_bits(kt_to_float(kt_elem{kt_v16_half(v, q)}) * f);
            }
#pragma unroll
            for (int q = 0; q < 8; q++) kt_sts16(&sm.u.t[i0 + q][r0], kt_v16_pack8(t[q]));
        }
        /* kd = k e^{G_last - G}: the state pass's update operand (PF 3, 4: none; k's fragments at the end) */
        unsigned short *kd = (unsigned short *)A.ws_kd + ch_h * kBT * kDK;
        for (int e = tid; !kFrags && e < kBT * kDK / 8; e += kNP) {
            const int r = e / (kDK / 8), i0 = 8 * (e % (kDK / 8));
            const float dec = __builtin_expf(sm.g[kBT - 1] - sm.g[r]);
            const kt_v16 x = *(const kt_v16 *)&sm.x[r][i0];
            unsigned wd[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const unsigned v = kt_v16_word(x, q);
                wd[q] = kt_bits(kt_to_float(kt_elem{(unsigned short)(v & 0xffffu)}) * dec) |
                        (unsigned)kt_bits(kt_to_float(kt_elem{(unsigned short)(v >> 16)}) * dec) << 16;
            }
            kt_sts16(kd + 8 * e, kt_v16_make(wd[0], wd[1], wd[2], wd[3]));
        }
        kt_barrier();
        if constexpr (kFolded)
            kt_x_product_folded<kDK, true>(sm, (unsigned short *)A.ws_w + ch_h * kDK * kBT,
                                           (unsigned short *)A.ws_c + ch_h * kDK * kDK, wv, lane);
        else
            kt_x_product_t<kDK, kDirect>(sm, (unsigned short *)A.ws_w + ch_h * kDK * kBT, wv, lane);
        kt_barrier();
    }
    /* PF 3, 4: k's fragments, the key head's (x holds k to the end; the state pass decays vn instead
     * of k: no kd) */
    if constexpr (kDirect) kt_k_frag(sm.x, (unsigned char *)A.ws_kd + ((long long)c * H + hk) * kBT * kDK * 2, wv, lane);
}

/* ---------------- the state pass ---------------- */

/* A warp owns S^T's rows of 16 value columns (vt) over its share of the keys (ks): the state is
 * held as FlashAttention holds its scores (arch/prefill_ops.h), so both of the chunk's products
 * take it, or vn, as the P operand straight from the accumulators:
 *   vn^T = u^T - S^T w^T      (P = S^T over the keys, V = w^T [key][token] in LDS),
 *   S^T = e^{G_last} S^T + vn^T kd   (P = vn^T over the tokens, V = kd [token][key] in LDS).
 * The state never goes through LDS; a chunk's LDS is its two operands, shared by the block's
 * warps. Where KS = NW / (BV / 16) warps split a value tile's keys, their partial vn^T meet in
 * LDS reduce-scattered: token tile tt is warp tt % KS's, which sums the partials in split order,
 * subtracts from u, stores vn (for out) and publishes the tile as the update's P operand (each
 * lane its own fragment) for the others. The loop is bound by its warps' instruction count (one
 * warp a scheduler), so what it holds across a chunk is kept as loaded (u as its 32-bit words,
 * unpacked where used: an unpack beside the load waits on it).
 * PF 2 stores a chunk's w^T and kd to their LDS buffer kAhead chunks before the chunk computes,
 * right after a barrier each warp reaches only once done with that buffer's previous chunk: the
 * partials' barrier where warps split keys (a chunk's two barriers, not four), else the chunk's
 * closing one (one, not two).
 * PF 3 and 4 take w^T and k as the products' own fragments from the workspace, a warp its key slice,
 * a chunk ahead in registers (PF 4: in a second set): no LDS but the exchange's, no barrier but its
 * two (none without a key split); kd's decay e^{G_last - G} moves onto vn's P operand (vn^T kd = (vn e^{G_last - G})^T k),
 * vn itself stored as it is for out. */
namespace {
constexpr int kVW = kBV / 16;                /* value tiles a block */
constexpr int kKS = KT_NW / kVW;             /* warps splitting a value tile's keys */
constexpr int kKT = kDK / 16 / (kKS > 0 ? kKS : 1);   /* key tiles a warp */
constexpr int kTT = kBT / 16;                /* token tiles a chunk */
static_assert(KT_NW % kVW == 0 && kKS >= 1 && (kDK / 16) % kKS == 0,
              "NW: a multiple of BV / 16 whose key split divides dk / 16");
/* The exchange's unit: kGrp accumulator elements of a token tile, summed by one warp (unit % KS's):
 * 4 (one 16-byte partial a lane) where a lane's P elements are its accumulator's own, rounded in
 * place (kt_p_frag), so that an owner can write its unit's share of the P fragment; at BT 64, KS 8
 * every warp sums one unit, where whole tiles left half the warps idle and the others two units'
 * loads and sums on the chunk's chain. A whole tile where P takes other lanes' elements (gfx11's
 * replicated operands), where a tile is 4 elements a lane (wave 64), or where one warp sums it all. */
constexpr bool kt_p_in_place()
{
    for (int l = 0; l < kt_frag_lanes; l++)
        for (int e = 0; e < kt_frag_ab_elems; e++)
            if (kt_p_src_lane(l, e) != l || kt_p_src_elem(l, e) != e) return false;
    return kt_frag_ab_elems == kt_acc_elems;
}
constexpr int kGrp = kKS > 1 && kt_p_in_place() && kt_acc_elems % 4 == 0 ? 4 : kt_acc_elems;
constexpr int kGroups = kt_acc_elems / kGrp; /* units a token tile */
constexpr int kUnits = kTT * kGroups;
constexpr int kOwn = (kUnits + kKS - 1) / kKS;   /* units a warp owns, at most */
static_assert(kGrp % 4 == 0 && (kGroups == 1 || kGrp == 4), "a unit whole 16-byte partials; 4 elements where units split tiles");
/* PF 4's chunks in pairs, the two sets' roles swapped (no copy of the next set, ~40 register moves
 * a chunk at KS 8), where a set holds at most 4 fragments of each operand: with 8 (KS 2 at BT 32)
 * the body's two copies spilled on sm_90a */
constexpr bool kPairs = kTwoSets && kKT * kTT <= 4;
constexpr bool kStaged = KT_PF == 2;         /* w^T and kd stored to LDS ahead */
constexpr int kBufs = kStaged ? 2 : 1;
constexpr int kAhead = kKS > 1 ? 1 : 2;      /* chunks the store runs ahead (PF 2) */

struct kt_state_smem {                       /* aligned as its members (gfx11's fragments: 32 bytes) */
    unsigned short wt[kBufs][kFrags ? 1 : kDK][kLT];   /* w^T (PF 3-5: in registers; a row, never used) */
    unsigned short kd[kBufs][kFrags ? 1 : kBT][kLK];   /* k e^{G_last - G} */
    kt_f4 red[kKS > 1 && !kFolded ? KT_NW : 1][kFolded ? 1 : kTT][kt_acc_elems / 4][KT_WAVE];   /* partial vn^T, 4 a lane at a time */
    /* vn^T as P, each lane's fragment; PF 5: S^T as P, every key tile, two buffers (buffer b's key tile kt at b x dk/16 + kt) */
    kt_frag_a pv[kKS > 1 ? kVW : 1][kFolded ? 2 * (kDK / 16) : kTT][KT_WAVE];
};

/* the ssm state's element (key, value column) in the head (VK) */
KT_DEV long long kt_s_at(int key, int v) { return KT_VK ? (long long)v * kDK + key : (long long)key * kDV + v; }


/* the 16-bit elements p[q * ld + n] at N of a tile's accumulator places from element e0, two a
 * word (element e0 + 2j low) */
template <int N> struct kt_words { unsigned w[N / 2]; };
using kt_acc_words = kt_words<kt_acc_elems>;
using kt_unit_words = kt_words<kGrp>;
template <int N> KT_DEV void kt_words_load(kt_words<N> &d, const unsigned short *p, int ld, int e0, int lane)
{
#pragma unroll
    for (int j = 0; j < N; j += 2) {
        const int e = e0 + j;
        if constexpr (kAccPairs)
            d.w[j / 2] = *(const unsigned *)(p + kt_s_q(lane, e) * ld + kt_s_n(lane, e));
        else
            d.w[j / 2] = p[kt_s_q(lane, e) * ld + kt_s_n(lane, e)] | (unsigned)p[kt_s_q(lane, e + 1) * ld + kt_s_n(lane, e + 1)] << 16;
    }
}
KT_DEV void kt_acc_load(kt_acc_words &d, const unsigned short *p, int ld, int lane) { kt_words_load(d, p, ld, 0, lane); }
template <int N> KT_DEV float kt_acc_word_f(const kt_words<N> &d, int i)
{
    return kt_to_float(kt_elem{(unsigned short)(i % 2 ? d.w[i / 2] >> 16 : d.w[i / 2] & 0xffffu)});
}

constexpr int kPieces = kDK * kBT / 8;       /* 16-byte pieces of a chunk's w^T (and of its kd) */
constexpr int kPer = (kPieces + kNS - 1) / kNS;

/* A chunk's inputs, in registers (PF 1: loaded a chunk ahead): w^T and kd in 16-byte pieces
 * (piece e of each dense tile is thread e % threads'), u^T of the warp's own token tiles, G_last. */
struct kt_state_in {
    kt_v16 wt[kPer], kd[kPer];
    kt_unit_words u[kOwn];
    float gl;
};

KT_DEV void kt_state_u(kt_unit_words (&u)[kOwn], float &gl, const kt_gdn_prefill_args &A, long long ch_h, int v0, int ks,
                       int lane)
{
    const unsigned short *uc = (const unsigned short *)A.ws_u + ch_h * kDV * kBT + (long long)v0 * kBT;
    /* unit ks + KS o into u[o]: one load a word, never predicated off beside the others (loads
     * predicated by owner into one register waited on each other: a memory latency a chunk) */
#pragma unroll
    for (int o = 0; o < kOwn; o++) {
        const int un = ks + kKS * o;
        if (kUnits % kKS == 0 || un < kUnits) kt_words_load(u[o], uc + 16 * (un / kGroups), kBT, kGrp * (un % kGroups), lane);
    }
    gl = A.ws_g[ch_h * kBT + kBT - 1];
}

KT_DEV void kt_state_tiles(kt_state_in &in, const kt_gdn_prefill_args &A, long long ch_h, int tid)
{
    const unsigned short *wt = (const unsigned short *)A.ws_w + ch_h * kDK * kBT + 8 * tid;
    const unsigned short *kd = (const unsigned short *)A.ws_kd + ch_h * kBT * kDK + 8 * tid;
#pragma unroll
    for (int m = 0; m < kPer; m++) {
        if (kPieces % kNS == 0 || tid + m * kNS < kPieces) {
            in.wt[m] = kt_ldg16(wt + 8 * m * kNS);
            in.kd[m] = kt_ldg16(kd + 8 * m * kNS);
        }
    }
}

KT_DEV void kt_state_load(kt_state_in &in, const kt_gdn_prefill_args &A, long long ch_h, int v0, int ks, int tid,
                          int lane)
{
    kt_state_tiles(in, A, ch_h, tid);
    kt_state_u(in.u, in.gl, A, ch_h, v0, ks, lane);
}

/* the tiles held in registers to LDS buffer b */
KT_DEV void kt_state_stage(kt_state_smem &sm, int b, const kt_state_in &in, int tid)
{
#pragma unroll
    for (int m = 0; m < kPer; m++) {
        const int e = tid + m * kNS;
        if (kPieces % kNS == 0 || e < kPieces) {
            kt_sts16(&sm.wt[b][e / (kBT / 8)][8 * (e % (kBT / 8))], in.wt[m]);
            kt_sts16(&sm.kd[b][e / (kDK / 8)][8 * (e % (kDK / 8))], in.kd[m]);
        }
    }
}

/* PF 3, 4: a chunk's inputs in registers, a chunk ahead: the warp's w^T fragments (its key tiles x
 * the token tiles), k's (token tiles x its key tiles), u^T of its own token tiles, G_last, and G
 * at each accumulator place of those tiles (the decay of vn's P) */
struct kt_state_frags {
    kt_frag_b w[kKT][kTT], k[kTT][kKT];
    kt_unit_words u[kOwn];
    float gl, g[kOwn][kGrp];
};
/* PF 3: each part reloaded for the next chunk as soon as this chunk is done with it (one set of
 * registers). PF 4: all of the next chunk's parts loaded at the chunk's top into a second set,
 * copied into the first at its end. Why PF 4: a target may count its global loads in flight on one
 * scoreboard, a use waiting for all of them, so PF 3's first use after a reload (k's, at the
 * chunk's end) waits a whole memory latency each chunk (sm_90a: 31% of the state pass's stall
 * samples on one register move, s29); PF 4's copy waits on loads a chunk old. */
KT_DEV void kt_state_frags_w(kt_state_frags &in, const kt_gdn_prefill_args &A, long long ch_h, int key0, int lane)
{
    const unsigned char *wf = (const unsigned char *)A.ws_w + ch_h * kDK * kBT * 2 + lane * (int)sizeof(kt_frag_b);
#pragma unroll
    for (int m = 0; m < kKT; m++)
#pragma unroll
        for (int tt = 0; tt < kTT; tt++) kt_frag_ldg(in.w[m][tt], wf + (long long)((key0 / 16 + m) * kTT + tt) * kFragTile);
}
KT_DEV void kt_state_frags_k(kt_state_frags &in, const kt_gdn_prefill_args &A, long long ch_k, int key0, int lane)
{
    const unsigned char *kf = (const unsigned char *)A.ws_kd + ch_k * kBT * kDK * 2 + lane * (int)sizeof(kt_frag_b);
#pragma unroll
    for (int tt = 0; tt < kTT; tt++)
#pragma unroll
        for (int m = 0; m < kKT; m++) kt_frag_ldg(in.k[tt][m], kf + (long long)(tt * (kDK / 16) + key0 / 16 + m) * kFragTile);
}
KT_DEV void kt_state_frags_u(kt_state_frags &in, const kt_gdn_prefill_args &A, long long ch_h, int v0, int ks, int lane)
{
    kt_state_u(in.u, in.gl, A, ch_h, v0, ks, lane);
    const float *g = A.ws_g + ch_h * kBT;
#pragma unroll
    for (int o = 0; o < kOwn; o++) {
        const int un = ks + kKS * o;
#pragma unroll
        for (int i = 0; i < kGrp; i++)
            if (kUnits % kKS == 0 || un < kUnits) in.g[o][i] = g[16 * (un / kGroups) + kt_s_n(lane, kGrp * (un % kGroups) + i)];
    }
}

/* PF 5: a chunk's inputs, a chunk ahead in a second set: -C's fragments (every key tile by the warp's
 * own), B^T at its own tiles, G_last */
struct kt_folded_in {
    kt_frag_b c[kDK / 16][kKT];
    kt_acc_words b[kKT];
    float gl;
};
KT_DEV void kt_folded_load(kt_folded_in &in, const kt_gdn_prefill_args &A, long long ch_h, int v0, int key0, int lane)
{
    const unsigned char *cf = (const unsigned char *)A.ws_c + ch_h * kDK * kDK * 2 + lane * (int)sizeof(kt_frag_b);
#pragma unroll
    for (int kt = 0; kt < kDK / 16; kt++)
#pragma unroll
        for (int m = 0; m < kKT; m++) kt_frag_ldg(in.c[kt][m], cf + (long long)(kt * (kDK / 16) + key0 / 16 + m) * kFragTile);
    const unsigned short *bt = (const unsigned short *)A.ws_b + ch_h * kDV * kDK + (long long)v0 * kDK + key0;
#pragma unroll
    for (int m = 0; m < kKT; m++) kt_acc_load(in.b[m], bt + 16 * m, kDK, lane);
    in.gl = A.ws_g[ch_h * kBT + kBT - 1];
}

/* a product over dk / 16 key tiles as kSums interleaved sums (a chain of dk / 16 / kSums products,
 * not dk / 16), added pairwise into d */
constexpr int kSums = 4;
KT_DEV void kt_sum_parts(kt_acc &d, kt_acc (&part)[kSums])
{
#pragma unroll
    for (int w = 1; w < kSums; w *= 2)
#pragma unroll
        for (int q = 0; q + w < kSums; q += 2 * w)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(part[q], i, kt_acc_get(part[q], i) + kt_acc_get(part[q + w], i));
    d = part[0];
}
/* PF 5's chunks: S^T <- e^{G_last} S^T + B^T + S^T (-C), one product over every key, so a chunk's
 * chain is one exchange (each warp's P fragments of its own key tiles to LDS, one barrier, every key
 * tile's back) and dk / 16 products in kSums sums. vn is out's to make, from h (stored here) and w.
 * The exchange's buffers alternate by chunk: a warp writes buffer j & 1 only after the barrier of
 * chunk j - 1, which every warp passes only after its reads of chunk j - 2's. */
KT_DEV void kt_state_folded(kt_state_smem &sm, kt_acc (&s)[kKT], const kt_gdn_prefill_args &A, int h, int c0, int nc,
                            int v0, int key0, int vt, int lane)
{
    const int HV = A.num_v_heads;
    kt_folded_in din, dnx;
    kt_folded_load(din, A, (long long)c0 * HV + h, v0, key0, lane);
#pragma unroll 1
    for (int j = 0; j < nc; j++) {
        const long long ch_h = (long long)(c0 + j) * HV + h;
        if (j + 1 < nc) kt_folded_load(dnx, A, ch_h + HV, v0, key0, lane);
        const float dl = __builtin_expf(din.gl);
        unsigned short *hh = (unsigned short *)A.ws_h + ch_h * kDV * kDK + (long long)v0 * kDK + key0;
#pragma unroll
        for (int m = 0; m < kKT; m++) kt_acc_store(hh + 16 * m, kDK, s[m], lane);
        kt_frag_a p[kDK / 16];
        if constexpr (kKS > 1) {
            const int b = (j & 1) * (kDK / 16);
#pragma unroll
            for (int m = 0; m < kKT; m++) {
                kt_frag_a own;
                kt_p_frag<kt_elem>(own, s[m]);
                sm.pv[vt][b + key0 / 16 + m][lane] = own;
            }
            kt_barrier();
#pragma unroll
            for (int kt = 0; kt < kDK / 16; kt++) p[kt] = sm.pv[vt][b + kt][lane];
        } else {
#pragma unroll
            for (int m = 0; m < kKT; m++) kt_p_frag<kt_elem>(p[m], s[m]);
        }
#pragma unroll
        for (int m = 0; m < kKT; m++) {
            kt_acc part[kSums];   /* part[0] is s[m]'s own */
#pragma unroll
            for (int q = 1; q < kSums; q++) kt_acc_zero(part[q]);
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(part[0], i, kt_acc_get(s[m], i) * dl + kt_acc_word_f(din.b[m], i));
#pragma unroll
            for (int kt = 0; kt < kDK / 16; kt++) kt_pv_mma<kt_elem>(part[kt % kSums], p[kt], din.c[kt][m]);
            kt_sum_parts(s[m], part);
        }
        if (j + 1 < nc) din = dnx;
    }
}

/* PF 2, in chunk j after the barrier that frees chunk j + kAhead's buffer: the tiles in registers
 * (that chunk's) to it, and the next chunk's tiles in flight */
KT_DEV void kt_state_stage_next(kt_state_smem &sm, kt_state_in &in, const kt_gdn_prefill_args &A, long long ch_h,
                                int j, int nc, int tid)
{
    if (j + kAhead >= nc) return;
    kt_state_stage(sm, (j + kAhead) & 1, in, tid);
    if (j + kAhead + 1 < nc) kt_state_tiles(in, A, ch_h + (long long)(kAhead + 1) * A.num_v_heads, tid);
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
    /* the sequence's chunks within this launch's part: from the slot's state where the sequence
     * began in a part before (which left it there), into the slot where it goes on in the next */
    const int first = t0 / kBT + seq, all = (len + kBT - 1) / kBT;
    const int jb = A.chunk_begin > first ? A.chunk_begin - first : 0;
    const int je = A.chunk_end - first < all ? A.chunk_end - first : all;
    if (jb >= je) return;
    const bool init = jb > 0 || !A.has_initial_state || A.has_initial_state[seq] != 0;
    const int HV = A.num_v_heads;
    const int nc = je - jb, c0 = first + jb;
    const int vt = wv % kVW, ks = wv / kVW;
    const int v0 = vb * kBV + 16 * vt, key0 = 16 * kKT * ks;   /* the warp's first value column and key */

    float *head = A.ssm_state + (long long)slot * A.ssm_slot_stride + (long long)h * kDK * kDV;
    kt_acc s[kKT];   /* S^T: rows v0 + q, keys key0 + 16 m + n */
#pragma unroll
    for (int m = 0; m < kKT; m++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            kt_acc_set(s[m], i, init ? head[kt_s_at(key0 + 16 * m + kt_s_n(lane, i), v0 + kt_s_q(lane, i))] : 0.0f);

    /* PF >= 1: the next chunk's inputs in flight in registers, refilled as soon as they are
     * stored (PF 2: the tiles kAhead + 1 chunks on; u^T and G_last a chunk on in un, gn) */
    if constexpr (kFolded) kt_state_folded(sm, s, A, h, c0, nc, v0, key0, vt, lane);
    kt_state_in in;
    kt_state_frags din, dnx;   /* PF 3, 4: this chunk's; PF 4: the next chunk's, in flight */
    kt_unit_words un[kOwn];
    float gn = 0.0f;
    const long long hkv = h / (HV / A.num_k_heads);   /* the key head (PF 3 and 4's k) */
    if constexpr (kDirect) {
        kt_state_frags_w(din, A, (long long)c0 * HV + h, key0, lane);
        kt_state_frags_k(din, A, (long long)c0 * A.num_k_heads + hkv, key0, lane);
        kt_state_frags_u(din, A, (long long)c0 * HV + h, v0, ks, lane);
    } else if constexpr (kStaged) {
        for (int j = 0; j < kAhead && j < nc; j++) {   /* the buffers before the first chunk */
            kt_state_tiles(in, A, (long long)(c0 + j) * HV + h, tid);
            kt_state_stage(sm, j, in, tid);
        }
        if (kAhead < nc) kt_state_tiles(in, A, (long long)(c0 + kAhead) * HV + h, tid);
        kt_state_u(un, gn, A, (long long)c0 * HV + h, v0, ks, lane);
        kt_barrier();
    } else if constexpr (KT_PF && !kFolded) {
        kt_state_load(in, A, (long long)c0 * HV + h, v0, ks, tid, lane);
    }
    /* chunk j with this chunk's fragments in din and (PF 4) the next chunk's loaded into dnx, then
     * copied into din at its end; where a set is small (kPairs), chunks in pairs with the sets'
     * roles swapped instead, and no copy */
    auto chunk = [&](int j, kt_state_frags &din, kt_state_frags &dnx) {
        const int buf = kStaged ? j & 1 : 0;
        const long long ch_h = (long long)(c0 + j) * HV + h;
        kt_unit_words u[kOwn];
        float gl;
        if constexpr (kDirect) {
            if (kTwoSets && j + 1 < nc) {
                kt_state_frags_w(dnx, A, ch_h + HV, key0, lane);
                kt_state_frags_k(dnx, A, (long long)(c0 + j + 1) * A.num_k_heads + hkv, key0, lane);
                kt_state_frags_u(dnx, A, ch_h + HV, v0, ks, lane);
            }
#pragma unroll
            for (int o = 0; o < kOwn; o++) u[o] = din.u[o];
            gl = din.gl;
            /* kd's decay e^{G_last - G} on vn's P, in place of G, at the chunk's top rather than
             * between the exchange's barriers: timed the same (s38), 7 registers fewer on sm_90a */
#pragma unroll
            for (int o = 0; o < kOwn; o++)
#pragma unroll
                for (int i = 0; i < kGrp; i++) din.g[o][i] = kt_exp_fast(gl - din.g[o][i]);
        } else if constexpr (kStaged) {
#pragma unroll
            for (int o = 0; o < kOwn; o++) u[o] = un[o];
            gl = gn;
            if (j + 1 < nc) kt_state_u(un, gn, A, ch_h + HV, v0, ks, lane);
        } else if constexpr (KT_PF) {
            kt_state_stage(sm, 0, in, tid);
#pragma unroll
            for (int o = 0; o < kOwn; o++) u[o] = in.u[o];
            gl = in.gl;
            /* the next chunk's inputs in flight behind this chunk's products */
            if (j + 1 < nc) kt_state_load(in, A, ch_h + HV, v0, ks, tid, lane);
        } else {
            kt_copy_tile<kDK, kBT, kNS, true>(&sm.wt[0][0][0], kLT, (unsigned short *)A.ws_w + ch_h * kDK * kBT, tid);
            kt_copy_tile<kBT, kDK, kNS, true>(&sm.kd[0][0][0], kLK, (unsigned short *)A.ws_kd + ch_h * kBT * kDK, tid);
            kt_state_u(u, gl, A, ch_h, v0, ks, lane);
        }
        const float dl = __builtin_expf(gl);   /* e^{G_last}, before the chain's barriers */
        /* h, the state entering the chunk (rounded: the product's operand too), for out */
        unsigned short *hh = (unsigned short *)A.ws_h + ch_h * kDV * kDK + (long long)v0 * kDK + key0;
#pragma unroll
        for (int m = 0; m < kKT; m++) kt_acc_store(hh + 16 * m, kDK, s[m], lane);
        if constexpr (!kStaged && !kDirect) kt_barrier();

        /* S^T w^T over the warp's keys */
        kt_acc vn[kTT];
#pragma unroll
        for (int tt = 0; tt < kTT; tt++) kt_acc_zero(vn[tt]);
#pragma unroll
        for (int m = 0; m < kKT; m++) {
            kt_frag_a p;
            kt_p_frag<kt_elem>(p, s[m]);
#pragma unroll
            for (int tt = 0; tt < kTT; tt++) {
                kt_frag_b f;
                if constexpr (kDirect) f = din.w[m][tt];
                else kt_load_v(f, &sm.wt[buf][key0 + 16 * m][16 * tt], kLT, lane);
                kt_pv_mma<kt_elem>(vn[tt], p, f);
            }
        }
        if constexpr (kDirect && !kTwoSets)   /* w^T's registers free: the next chunk's in flight */
            if (j + 1 < nc) kt_state_frags_w(din, A, ch_h + HV, key0, lane);
        if constexpr (kKS > 1) {   /* the partials of the units other warps own */
#pragma unroll
            for (int un = 0; un < kUnits; un++) {
                if (un % kKS == ks) continue;
#pragma unroll
                for (int f = 0; f < kGrp / 4; f++) {
                    const int tt = un / kGroups, e0 = kGrp * (un % kGroups) + 4 * f;
                    kt_f4 x;
#pragma unroll
                    for (int e = 0; e < 4; e++) x.x[e] = kt_acc_get(vn[tt], e0 + e);
                    sm.red[wv][tt][e0 / 4][lane] = x;
                }
            }
            kt_barrier();
            if constexpr (kStaged) kt_state_stage_next(sm, in, A, ch_h, j, nc, tid);
        }
        /* the warp's own units: the partials summed in split order, vn = u - them, out's copy, and
         * the update's operand (its share of the P fragment shared where other warps need it) */
        unsigned short *vo = (unsigned short *)A.ws_vn + ch_h * kDV * kBT + (long long)v0 * kBT;
        kt_frag_a pv[kTT];
#pragma unroll
        for (int un = 0; un < kUnits; un++) {   /* every index static: a register array indexed by the warp spills */
            if (un % kKS != ks) continue;
            const int o = un / kKS, tt = un / kGroups, e0 = kGrp * (un % kGroups);
            kt_acc a = vn[tt];
            if constexpr (kKS > 1) {
#pragma unroll
                for (int f = e0 / 4; f < (e0 + kGrp) / 4; f++) {
                    kt_f4 x[kKS];
#pragma unroll
                    for (int q = 0; q < kKS; q++)
                        if (q != ks) x[q] = sm.red[vt + kVW * q][tt][f][lane];
#pragma unroll
                    for (int e = 0; e < 4; e++) {
                        float sum = ks == 0 ? kt_acc_get(vn[tt], 4 * f + e) : x[0].x[e];
#pragma unroll
                        for (int q = 1; q < kKS; q++) sum += q == ks ? kt_acc_get(vn[tt], 4 * f + e) : x[q].x[e];
                        kt_acc_set(a, 4 * f + e, sum);
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < kGrp; i++) kt_acc_set(a, e0 + i, kt_acc_word_f(u[o], i) - kt_acc_get(a, e0 + i));
            kt_acc_store_elems<kGrp>(vo + 16 * tt, kBT, a, e0, lane);
            if constexpr (kDirect) {   /* kd's decay, on vn's P */
#pragma unroll
                for (int i = 0; i < kGrp; i++) kt_acc_set(a, e0 + i, kt_acc_get(a, e0 + i) * din.g[o][i]);
            }
            if constexpr (kGroups == 1) {
                kt_p_frag<kt_elem>(pv[tt], a);
                if constexpr (kKS > 1) sm.pv[vt][tt][lane] = pv[tt];
            } else {   /* P's elements e0 .. e0 + 3 are these, rounded (kGrp's condition): one 8-byte store */
                const unsigned lo = kt_round2<kt_elem>(kt_acc_get(a, e0), kt_acc_get(a, e0 + 1)),
                               hi = kt_round2<kt_elem>(kt_acc_get(a, e0 + 2), kt_acc_get(a, e0 + 3));
                *(unsigned long long *)((unsigned char *)&sm.pv[vt][tt][lane] + 2 * e0) = lo | (unsigned long long)hi << 32;
            }
        }
        if constexpr (kDirect && !kTwoSets)   /* u's and G's registers free: the next chunk's in flight */
            if (j + 1 < nc) kt_state_frags_u(din, A, ch_h + HV, v0, ks, lane);
        if constexpr (kKS > 1) {
            kt_barrier();
#pragma unroll
            for (int tt = 0; tt < kTT; tt++)   /* where units split tiles, every tile from LDS */
                if (kGroups > 1 || tt % kKS != ks) pv[tt] = sm.pv[vt][tt][lane];
        }

        /* S^T = e^{G_last} S^T + vn^T kd */
#pragma unroll
        for (int m = 0; m < kKT; m++)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(s[m], i, kt_acc_get(s[m], i) * dl);
#pragma unroll
        for (int tt = 0; tt < kTT; tt++) {
#pragma unroll
            for (int m = 0; m < kKT; m++) {
                kt_frag_b f;
                if constexpr (kDirect) f = din.k[tt][m];
                else kt_load_v(f, &sm.kd[buf][16 * tt][key0 + 16 * m], kLK, lane);
                kt_pv_mma<kt_elem>(s[m], pv[tt], f);
            }
        }
        if constexpr (kDirect && !kTwoSets)
            if (j + 1 < nc) kt_state_frags_k(din, A, (long long)(c0 + j + 1) * A.num_k_heads + hkv, key0, lane);
        if constexpr (!kDirect && (!kStaged || kKS == 1)) kt_barrier();
        if constexpr (kTwoSets && !kPairs)
            if (j + 1 < nc) din = dnx;
        if constexpr (kStaged && kKS == 1) kt_state_stage_next(sm, in, A, ch_h, j, nc, tid);
    };
    if constexpr (kPairs) {
#pragma unroll 1
        for (int j = 0; j < nc; j += 2) {
            chunk(j, din, dnx);
            if (j + 1 < nc) chunk(j + 1, dnx, din);
        }
    } else {
#pragma unroll 1
        for (int j = 0; !kFolded && j < nc; j++) chunk(j, din, dnx);   /* PF 5: kt_state_folded ran them */
    }
#pragma unroll
    for (int m = 0; m < kKT; m++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            head[kt_s_at(key0 + 16 * m + kt_s_n(lane, i), v0 + kt_s_q(lane, i))] = kt_acc_get(s[m], i);
}

/* ---------------- out ---------------- */

namespace {
struct alignas(16) kt_out_smem {
    unsigned short q[kBT][kLK];
    unsigned short kh[kBT > kNC ? kBT : kNC][kLK];   /* k, then a round's h^T rows */
    unsigned short p[kBT][kLT];              /* (q k^T) decay, causal, rounded */
    unsigned short vn[kNC][kLT];             /* a round's vn^T rows (PF 5: u^T's, then vn^T's in place) */
    float g[kBT];
    unsigned short w[kFolded ? kBT : 1][kLK];   /* PF 5: w, for vn = u - w S */
};
} /* namespace */

KT_KERNEL(KT_CAT(KT_KERNEL_NAME, _out), kNO)(kt_gdn_prefill_args A)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_out_smem &sm = *(kt_out_smem *)sm_raw;
    if (!kt_dynamic_shared_fits(sizeof(kt_out_smem))) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), wv = kt_wave_id();
    const int c = A.chunk_begin + kt_block_id_x(), h = kt_block_id_y();   /* this launch's part */
    kt_chunk ch;
    if (c >= A.chunk_end || !kt_find_chunk(A.query_start_loc, A.batch, c, ch)) return;
    const int slot = A.state_indices[ch.seq];
    if (slot < 0) return;
    const int H = A.num_k_heads, HV = A.num_v_heads, R = HV / H, hk = h / R;
    const long long ch_h = (long long)c * HV + h, ch_k = (long long)c * H + hk;

    /* q's and k's loads together (16 moves a thread at most, before any accumulator is live) */
    kt_copy_tile_pair<kBT, kDK, kBT, kDK, kNO, 16>(&sm.q[0][0], kLK, (const unsigned short *)A.ws_q + ch_k * kBT * kDK,
                                                   &sm.kh[0][0], kLK, (const unsigned short *)A.ws_k + ch_k * kBT * kDK, tid);
    if constexpr (kFolded) kt_copy_tile<kBT, kDK, kNO, true>(&sm.w[0][0], kLK, (unsigned short *)A.ws_w + ch_h * kBT * kDK, tid);
    for (int r = tid; r < kBT; r += kNO) sm.g[r] = A.ws_g[ch_h * kBT + r];
    kt_barrier();

    /* P = (q k^T) e^{G_r - G_s}, s <= r: the tiles on or below the diagonal dealt as _wy deals
     * A's (a warp's own row strip took it 1 to 4 products at BT 64), the blocks above zeroed */
#pragma unroll 1
    for (int tile = wv; tile < kTT * (kTT + 1) / 2; tile += kTT) {
        int ti, tj;
        kt_lower_tile<kTT>(tile, ti, tj);
        kt_acc a;
        kt_acc_zero(a);
        kt_tile_mma<kDK>(a, &sm.q[16 * ti][0], kLK, &sm.kh[16 * tj][0], kLK, lane);
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            const int r = 16 * ti + kt_acc_row(lane, i), s = 16 * tj + kt_acc_col(lane, i);
            sm.p[r][s] = kt_bits(s <= r ? kt_acc_get(a, i) * kt_exp_fast(sm.g[r] - sm.g[s]) : 0.0f);
        }
    }
    for (int e = tid; e < kBT * kBT / 8; e += kNO) {   /* 8 elements a store */
        const int r = e / (kBT / 8), c = 8 * (e % (kBT / 8));
        if (c / 16 > r / 16) kt_sts16(&sm.p[r][c], kt_v16_make(0u, 0u, 0u, 0u));
    }
    kt_barrier();
    const int r0 = 16 * wv;

    /* o = e^{G_r} q h + P vn, kNC columns a round */
    kt_acc o[kDV / 16];
#pragma unroll
    for (int cg = 0; cg < kDV / kNC; cg++) {
        /* the round's h^T and vn^T rows together where 12 moves a thread hold them (BT 64; o's
         * accumulators are live beside them) */
        kt_copy_tile_pair<kNC, kDK, kNC, kBT, kNO, 12>(
            &sm.kh[0][0], kLK, (const unsigned short *)A.ws_h + (ch_h * kDV + cg * kNC) * kDK, &sm.vn[0][0], kLT,
            (const unsigned short *)(kFolded ? A.ws_u : A.ws_vn) + (ch_h * kDV + cg * kNC) * kBT, tid);
        kt_barrier();
        if constexpr (kFolded) {   /* vn^T = u^T - h w^T in place, a strip of 16 value rows a warp at a time */
#pragma unroll 1
            for (int vs = wv; vs < kNC / 16; vs += kBT / 16)
#pragma unroll
                for (int t = 0; t < kBT / 16; t++) {
                    kt_acc a;
                    kt_acc_zero(a);
                    kt_tile_mma<kDK>(a, &sm.kh[16 * vs][0], kLK, &sm.w[16 * t][0], kLK, lane);
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++) {
                        unsigned short &x = sm.vn[16 * vs + kt_acc_row(lane, i)][16 * t + kt_acc_col(lane, i)];
                        x = kt_bits(kt_to_float(kt_elem{x}) - kt_acc_get(a, i));
                    }
                }
            kt_barrier();
        }
#pragma unroll
        for (int tj = 0; tj < kNC / 16; tj++) {
            kt_acc &a = o[cg * (kNC / 16) + tj];
            kt_acc_zero(a);
            kt_tile_mma<kDK>(a, &sm.q[r0][0], kLK, &sm.kh[16 * tj][0], kLK, lane);
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) kt_acc_set(a, i, kt_acc_get(a, i) * kt_exp_fast(sm.g[r0 + kt_acc_row(lane, i)]));
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
     * behind it: out may alias z for all the compiler knows); two columns a word where the
     * layout pairs them and the call's z and out are 4-byte aligned with even strides */
    const bool words = kColPairs && (reinterpret_cast<unsigned long long>(A.out) & 3) == 0 && A.out_stride % 2 == 0 &&
                       (!A.norm_weight || ((reinterpret_cast<unsigned long long>(A.z) & 3) == 0 && A.z_stride % 2 == 0));
    if (A.norm_weight) {
        const unsigned short *z = (const unsigned short *)A.z + (long long)h * kDV;
#pragma unroll
        for (int t = 0; t < kDV / 16; t++)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i += 2) {
                float zv[2];
                long long at[2];
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int r = r0 + kt_acc_row(lane, i + e);
                    at[e] = (ch.t0 + ch.pos0 + (r < ch.n ? r : 0)) * (long long)A.z_stride + 16 * t + kt_acc_col(lane, i + e);
                }
                if (kColPairs && words) {
                    const unsigned w = *(const unsigned *)(z + at[0]);
                    zv[0] = kt_to_float(kt_elem{(unsigned short)(w & 0xffffu)});
                    zv[1] = kt_to_float(kt_elem{(unsigned short)(w >> 16)});
                } else {
                    zv[0] = kt_to_float(kt_elem{z[at[0]]});
                    zv[1] = kt_to_float(kt_elem{z[at[1]]});
                }
#pragma unroll
                for (int e = 0; e < 2; e++)
                    kt_acc_set(o[t], i + e, kt_acc_get(o[t], i + e) * rstd[i + e] *
                                                kt_elem_f(A.norm_weight, 16 * t + kt_acc_col(lane, i + e)) * kt_silu_fast(zv[e]));
            }
    }
    unsigned short *out = (unsigned short *)A.out + (long long)h * kDV;
#pragma unroll
    for (int t = 0; t < kDV / 16; t++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i += 2) {
            if (kColPairs && words) {
                const int r = r0 + kt_acc_row(lane, i);
                if (r < ch.n)
                    *(unsigned *)(out + (ch.t0 + ch.pos0 + r) * (long long)A.out_stride + 16 * t + kt_acc_col(lane, i)) =
                        kt_round2<kt_elem>(kt_acc_get(o[t], i), kt_acc_get(o[t], i + 1));
            } else {
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const int r = r0 + kt_acc_row(lane, i + e);
                    if (r < ch.n)
                        out[(ch.t0 + ch.pos0 + r) * (long long)A.out_stride + 16 * t + kt_acc_col(lane, i + e)] =
                            kt_bits(kt_acc_get(o[t], i + e));
                }
            }
        }

    /* the sequence's last chunk: its conv state, after _wy has read the old one. The v channels
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
