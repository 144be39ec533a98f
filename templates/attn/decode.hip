/* decode.hip: paged attention for decode and speculative verify (1 to a few query rows per
 * sequence), split-KV. ABI and semantics: templates/abi/attn.h; launch geometry, the segment law
 * and the workspace: runtime/op_attn.c. The recipe's axes (decode.lua) read as
 *   D       head size the kernel is compiled for,
 *   MT      16-row M tiles: the GQA group's query heads times the sequence's query rows are the
 *           rows of one matrix (g * q <= 16 * MT), so each K/V tile is read once per kv head,
 *   BN      keys a KV tile holds,
 *   NW      warps (waves) of the block,
 *   SEGMAX  the most split-KV segments a launch may be given (the runtime's scratch ceiling;
 *           the code does not depend on it).
 *
 * Block (x, y, z) = (kv head x row block, sequence, segment): a kv head's g * q rows take
 * ceil(g * q / (16 * MT)) blocks (one when they fit; each block then reads the head's K and V,
 * the second time mostly from L2). The segment's keys stream through LDS one tile
 * at a time: the next tile's K and V are loaded into registers while the current one is worked on
 * (one LDS buffer: latency hidden without a second one, since LDS bounds co-residency on RDNA),
 * and K and V share that buffer, K first (S = Q K^T), then V stored transposed (O += P V) so both
 * products take their B operand as W[n][k] from LDS, the prelude's one matrix API. Per tile:
 *   1. K tile to LDS; S = scale * Q K^T (16x16 tiles spread over the warps), masked (the segment's
 *      end, causality of each query row, the sliding window) and soft-capped, to LDS in fp32;
 *   2. V tile to LDS (transposed) while the rows' online softmax runs: a few threads a row take the
 *      row max, rescale factor and sum; P, rounded to the element type, goes to LDS;
 *   3. each warp rescales its O accumulators and adds P V for its columns of the head.
 * With one segment the block writes out = O / l; with several it writes fp32 partials {m, l, O}
 * and kt_..._reduce merges them in a fixed order.
 *
 * The KV loop starts at the sliding window's lower bound (keys before it are never loaded), and
 * the sequence's visible range [lo, seq_len) is cut into num_segments equal spans rounded up to
 * whole tiles: a short sequence leaves trailing segments empty (they write m = -inf, l = 0). */
#include "abi/attn.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_NAME(suffix) KT_CAT(KT_KERNEL_NAME, suffix)

/* dtype: q/out element type, and the cache's element (the same, or fp8 e4m3) */
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
#define KT_ELEM_bf16_e4m3 kt_bf16
#define KT_ELEM_fp16_e4m3 kt_f16
#define KT_KV8_bf16 0
#define KT_KV8_fp16 0
#define KT_KV8_bf16_e4m3 1
#define KT_KV8_fp16_e4m3 1
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;
#define KT_KV8 KT_CAT(KT_KV8_, KT_DTYPE)

namespace {

constexpr int kD = KT_D;
constexpr int kM = 16 * KT_MT;                       /* rows of the block's matrix */
constexpr int kBN = KT_BN;
constexpr int kThreads = KT_NW * KT_WAVE;
constexpr int kPad = 8;                              /* 16 bytes: aligned rows, staggered banks */
constexpr int kLdQ = kD + kPad;                      /* pitch of Q and K in LDS (elements) */
constexpr int kLdV = kBN + kPad;                     /* pitch of V^T and P */
constexpr int kLdS = kBN + 1;                        /* pitch of the fp32 scores */
constexpr int kKvElems = kBN * kLdQ > kD * kLdV ? kBN * kLdQ : kD * kLdV;
/* Cache bytes one 16-byte load brings: 8 16-bit elements, or 16 fp8 ones. */
constexpr int kChunkElems = KT_KV8 ? 16 : 8;
constexpr int kChunks = kBN * kD / kChunkElems / kThreads;          /* per thread, K and V each */
constexpr int kQChunks = (kM * kD / 8 + kThreads - 1) / kThreads;
constexpr int kSTiles = KT_MT * (kBN / 16);                        /* 16x16 score tiles */
constexpr int kOTiles = KT_MT * (kD / 16) / KT_NW;                  /* output tiles a warp owns */
/* the softmax: kTpr threads a row, adjacent lanes of one wave */
constexpr int kTprWant = kThreads / kM < 1 ? 1 : kThreads / kM;
constexpr int kTpr = kTprWant > KT_WAVE ? KT_WAVE : (kTprWant > kBN ? kBN : kTprWant);
constexpr int kRowsPass = kThreads / kTpr;
constexpr float kLog2e = 1.4426950408889634f;

static_assert(kD % 16 == 0 && kBN % 16 == 0, "whole 16x16 tiles");
static_assert(kChunks >= 1 && kChunks * kThreads * kChunkElems == kBN * kD, "the KV tile splits evenly over the threads");
static_assert(kOTiles >= 1 && kOTiles * KT_NW == KT_MT * (kD / 16), "output tiles split evenly over the warps");
static_assert((kTpr & (kTpr - 1)) == 0 && kRowsPass * kTpr == kThreads, "a power-of-two thread group a row");

KT_DEV float kt_neg_inf(void)
{
    union { unsigned u; float f; } x = {0xff800000u};
    return x.f;
}

/* tanh from 2^x (no libm on every target): 1 - 2 / (e^{2x} + 1), odd; |error| ~1e-7. */
KT_DEV float kt_tanh(float x)
{
    const float a = x < 0.0f ? -x : x;
    const float t = 1.0f - 2.0f / (kt_exp2(2.0f * kLog2e * a) + 1.0f);
    return x < 0.0f ? -t : t;
}

/* One e4m3 byte as a float (exact): OCP e4m3fn (bias 7), or e4m3fnuz (bias 8) with KT_FP8_FNUZ.
 * No prelude defines it yet: gfx942's fnuz caches need their own dtype, whose verification sets
 * and reference decode fnuz too (today every target's e4m3 dtypes are OCP, as the reference is).
 * NaN codes are not expected in a cache. */
KT_DEV float kt_e4m3_to_float(unsigned b)
{
#ifdef KT_FP8_FNUZ
    constexpr unsigned kBias = 8;
#else
    constexpr unsigned kBias = 7;
#endif
    const unsigned e = (b >> 3) & 15u, m = b & 7u;
    union { unsigned u; float f; } x;
    float f;
    if (e) {
        x.u = ((e + 127u - kBias) << 23) | (m << 20);
        f = x.f;
    } else {
        f = (float)m * (1.0f / (float)(1u << (kBias + 2)));   /* subnormal: m * 2^(1 - bias - 3) */
    }
    return (b & 0x80u) ? -f : f;
}

/* Two consecutive 16-bit elements of a cache chunk (16-bit caches: word i of the 16 bytes; fp8:
 * bytes 2i, 2i+1 converted). */
KT_DEV unsigned short kt_elem_bits(kt_elem e) { return e.bits; }

struct kt_kv_regs { kt_v16 k[kChunks], v[kChunks]; };

/* The cache element j of a 16-byte chunk as the element type. */
KT_DEV unsigned short kt_chunk_elem(const kt_v16 &c, int j)
{
#if KT_KV8
    const unsigned w = kt_v16_word(c, j / 4);
    return kt_elem_bits(kt_from_float<kt_elem>(kt_e4m3_to_float((w >> (8 * (j % 4))) & 0xffu)));
#else
    const unsigned w = kt_v16_word(c, j / 2);
    return (unsigned short)(w >> (16 * (j % 2)));
#endif
}

/* The per-block facts every phase reads. */
struct kt_seq {
    int q0, qlen, ctx;           /* first query token, query rows, cached context before them */
    int kv_lo, kv_hi;            /* this segment's keys */
    int kvh;
    int row0;                    /* the block's first row of the kv head's g * qlen rows */
};

/* Issue the 16-byte global loads of K and V for the tile of keys [j0, j0 + kBN) (keys at or past
 * kv_hi read as zeros and are masked later). K chunk c: key c / (kD / kChunkElems), elements
 * (c % (kD / kChunkElems)) * kChunkElems on (a key's row read by adjacent threads, stored as rows);
 * V chunk c: key c % kBN, elements (c / kBN) * kChunkElems on (adjacent threads on adjacent keys,
 * so the transposed LDS stores of a wave land on adjacent 16-bit words). */
KT_DEV long long kt_kv_offset(const kt_attn_args &a, const int *bt, int j, int kvh, long long sb, int ss, int sh)
{
    const int blk = bt[j / a.block_size], slot = j % a.block_size;
    return (long long)blk * sb + (long long)slot * ss + (long long)kvh * sh;
}

KT_DEV void kt_load_kv(kt_kv_regs &r, const kt_attn_args &a, const kt_seq &s, const int *bt, int j0, int tid)
{
    constexpr int kPerKey = kD / kChunkElems;
    constexpr int kEsz = KT_KV8 ? 1 : 2;
    const unsigned char *kc = (const unsigned char *)a.k_cache;
    const unsigned char *vc = (const unsigned char *)a.v_cache;
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int c = tid + i * kThreads;
        const int jk = j0 + c / kPerKey, ck = (c % kPerKey) * kChunkElems;
        const int jv = j0 + c % kBN, cv = (c / kBN) * kChunkElems;
        r.k[i] = jk < s.kv_hi ? kt_ldg16(kc + (kt_kv_offset(a, bt, jk, s.kvh, a.k_stride_block, a.k_stride_slot, a.k_stride_head) + ck) * kEsz)
                              : kt_v16_make(0u, 0u, 0u, 0u);
        r.v[i] = jv < s.kv_hi ? kt_ldg16(vc + (kt_kv_offset(a, bt, jv, s.kvh, a.v_stride_block, a.v_stride_slot, a.v_stride_head) + cv) * kEsz)
                              : kt_v16_make(0u, 0u, 0u, 0u);
    }
}

/* K tile rows [key][d] (pitch kLdQ): the B operand of S = Q K^T as W[n = key][k = d]. */
KT_DEV void kt_store_k(unsigned short *kv, const kt_kv_regs &r, int tid)
{
    constexpr int kPerKey = kD / kChunkElems;
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int c = tid + i * kThreads;
        unsigned short *dst = kv + (c / kPerKey) * kLdQ + (c % kPerKey) * kChunkElems;
#if KT_KV8
        unsigned w[8];
#pragma unroll
        for (int j = 0; j < 8; j++) w[j] = kt_chunk_elem(r.k[i], 2 * j) | ((unsigned)kt_chunk_elem(r.k[i], 2 * j + 1) << 16);
        kt_sts16(dst, kt_v16_make(w[0], w[1], w[2], w[3]));
        kt_sts16(dst + 8, kt_v16_make(w[4], w[5], w[6], w[7]));
#else
        kt_sts16(dst, r.k[i]);
#endif
    }
}

/* V tile transposed, [d][key] (pitch kLdV): the B operand of O = P V as W[n = d][k = key]. */
KT_DEV void kt_store_vt(unsigned short *kv, const kt_kv_regs &r, int tid)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int c = tid + i * kThreads;
        const int key = c % kBN, col = (c / kBN) * kChunkElems;
#pragma unroll
        for (int j = 0; j < kChunkElems; j++) kv[(col + j) * kLdV + key] = kt_chunk_elem(r.v[i], j);
    }
}

struct alignas(16) kt_smem {
    unsigned short q[kM * kLdQ];
    unsigned short kv[kKvElems];
    float s[kM * kLdS];
    unsigned short p[kM * kLdV];
    float m[kM], l[kM], alpha[kM];
};

/* Q rows of the block: row r is query token r / g of the sequence, head kvh * g + r % g; rows
 * past the sequence's query rows are zeros. */
KT_DEV void kt_load_q(kt_smem &sm, const kt_attn_args &a, const kt_seq &s, int g, int tid)
{
    const unsigned short *q = (const unsigned short *)a.q;
    constexpr int kPerRow = kD / 8;
#pragma unroll
    for (int i = 0; i < kQChunks; i++) {
        const int c = tid + i * kThreads;
        if (c >= kM * kPerRow) break;
        const int r = c / kPerRow, col = (c % kPerRow) * 8;
        const int rg = s.row0 + r;
        kt_v16 v = kt_v16_make(0u, 0u, 0u, 0u);
        if (rg < g * s.qlen) {
            const long long off = (long long)(s.q0 + rg / g) * a.q_stride_tok + (long long)(s.kvh * g + rg % g) * a.q_stride_head + col;
            v = kt_ldg16(q + off);
        }
        kt_sts16(sm.q + r * kLdQ + col, v);
    }
}

} // namespace

KT_KERNEL(KT_KERNEL_NAME, kThreads)(kt_attn_args a)
{
    KT_SHARED kt_smem sm;
    const int tid = kt_thread_id(), lane = kt_lane_id(), warp = kt_wave_id();
    const int g = a.num_heads / a.num_kv_heads;
    const int seq = kt_block_id_y(), seg = kt_block_id_z();
    kt_seq s;
    const int row_blocks = kt_grid_blocks_x() / a.num_kv_heads;   /* blocks sharing a kv head */
    s.kvh = kt_block_id_x() / row_blocks;
    s.row0 = kt_block_id_x() % row_blocks * kM;
    s.q0 = a.query_start_loc[seq];
    s.qlen = a.query_start_loc[seq + 1] - s.q0;
    const int seq_len = a.seq_lens[seq];
    s.ctx = seq_len - s.qlen;
    /* the visible keys of the whole block: from the first row's window start to the last row */
    const int lo = a.window > 0 && s.ctx - a.window + 1 > 0 ? s.ctx - a.window + 1 : 0;
    const int span = seq_len - lo;
    const int per = ((span + a.num_segments - 1) / a.num_segments + kBN - 1) / kBN * kBN;
    s.kv_lo = lo + seg * per;
    s.kv_hi = s.kv_lo + per < seq_len ? s.kv_lo + per : seq_len;
    const int *bt = a.block_table + (long long)seq * a.bt_stride;
    const bool with_sink = a.sinks && a.num_segments == 1;   /* split: the reduce adds the sink */
    const float score_scale = a.scale * a.k_scale;
    const float neg_inf = kt_neg_inf();

    /* no rows here, or a segment past the bound count (uniform over the block) */
    if (s.qlen <= 0 || s.row0 >= g * s.qlen || seg >= a.num_segments) return;
    kt_load_q(sm, a, s, g, tid);
    for (int r = tid; r < kM; r += kThreads) {
        const int h = s.kvh * g + (s.row0 + r) % g;
        sm.m[r] = with_sink ? a.sinks[h] * kLog2e : neg_inf;    /* m and s are kept in log2 units */
        sm.l[r] = with_sink ? 1.0f : 0.0f;
    }

    kt_acc o[kOTiles];
#pragma unroll
    for (int i = 0; i < kOTiles; i++) kt_acc_zero(o[i]);

    kt_kv_regs regs;
    if (s.kv_lo < s.kv_hi) kt_load_kv(regs, a, s, bt, s.kv_lo, tid);
    for (int j0 = s.kv_lo; j0 < s.kv_hi; j0 += kBN) {
        kt_barrier();                 /* the previous tile's P V is done with the buffer */
        kt_store_k(sm.kv, regs, tid);
        kt_barrier();

        /* 1. scores */
        for (int t = warp; t < kSTiles; t += KT_NW) {
            const int mt = t / (kBN / 16), nt = t % (kBN / 16);
            kt_acc acc;
            kt_acc_zero(acc);
#pragma unroll
            for (int kk = 0; kk < kD / 16; kk++) {
                kt_frag_a fa;
                kt_frag_b fb;
                kt_load_a(fa, sm.q + mt * 16 * kLdQ + kk * 16, kLdQ, lane);
                kt_load_b(fb, sm.kv + nt * 16 * kLdQ + kk * 16, kLdQ, lane);
                kt_mma<kt_elem>(acc, fa, fb);
            }
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                const int r = mt * 16 + kt_acc_row(lane, i), c = nt * 16 + kt_acc_col(lane, i);
                const int rg = s.row0 + r, j = j0 + c, pos = s.ctx + rg / g;
                float v = kt_acc_get(acc, i) * score_scale;
                if (a.softcap > 0.0f) v = a.softcap * kt_tanh(v / a.softcap);
                const bool seen = rg < g * s.qlen && j < s.kv_hi && j <= pos && (a.window <= 0 || pos - j < a.window);
                sm.s[r * kLdS + c] = seen ? v * kLog2e : neg_inf;
            }
        }
        kt_barrier();

        /* 2. V to LDS (the K tile is consumed) and the online softmax */
        kt_store_vt(sm.kv, regs, tid);
        if (j0 + kBN < s.kv_hi) kt_load_kv(regs, a, s, bt, j0 + kBN, tid);   /* in flight over 2 and 3 */
        for (int r0 = 0; r0 < kM; r0 += kRowsPass) {
            /* threads past the last row (kTpr clipped to the tile or the wave) mirror it and
             * write nothing: every lane takes part in the shuffles */
            const bool live = r0 + tid / kTpr < kM;
            const int r = live ? r0 + tid / kTpr : kM - 1, sub = tid % kTpr;
            float mx = neg_inf;
            for (int c = sub; c < kBN; c += kTpr) mx = mx > sm.s[r * kLdS + c] ? mx : sm.s[r * kLdS + c];
#pragma unroll
            for (int w = kTpr / 2; w >= 1; w /= 2) {
                const float o2 = kt_shfl_xor(mx, w);
                mx = mx > o2 ? mx : o2;
            }
            const float m_old = sm.m[r];
            const float m_new = m_old > mx ? m_old : mx;
            const float base = m_new == neg_inf ? 0.0f : m_new;   /* a row with nothing seen yet */
            float sum = 0.0f;
            for (int c = sub; c < kBN; c += kTpr) {
                const float pv = kt_exp2(sm.s[r * kLdS + c] - base);
                sum += pv;
                if (live) sm.p[r * kLdV + c] = kt_elem_bits(kt_from_float<kt_elem>(pv));
            }
#pragma unroll
            for (int w = kTpr / 2; w >= 1; w /= 2) sum += kt_shfl_xor(sum, w);
            if (live && sub == 0) {
                const float al = kt_exp2(m_old - base);
                sm.alpha[r] = al;
                sm.l[r] = sm.l[r] * al + sum;
                sm.m[r] = m_new;
            }
        }
        kt_barrier();

        /* 3. O = O * alpha + P V */
#pragma unroll
        for (int i = 0; i < kOTiles; i++) {
            const int t = warp + i * KT_NW;
            const int mt = t / (kD / 16), dt = t % (kD / 16);
            kt_acc &acc = o[i];
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++) {
                const float al = sm.alpha[mt * 16 + kt_acc_row(lane, e)];
                kt_acc_set(acc, e, kt_acc_get(acc, e) * al);
            }
#pragma unroll
            for (int kk = 0; kk < kBN / 16; kk++) {
                kt_frag_a fa;
                kt_frag_b fb;
                kt_load_a(fa, sm.p + mt * 16 * kLdV + kk * 16, kLdV, lane);
                kt_load_b(fb, sm.kv + dt * 16 * kLdV + kk * 16, kLdV, lane);
                kt_mma<kt_elem>(acc, fa, fb);
            }
        }
    }
    kt_barrier();   /* the last tile's row statistics */

    /* write: out = O / l (one segment), or the partials */
    const int nseg = a.num_segments;
    const long long rows_total = (long long)a.num_tokens * a.num_heads;
    float *ml = a.partials;
    float *acc_part = a.partials ? a.partials + 2 * rows_total * nseg : (float *)0;
    for (int r = tid; r < kM && nseg > 1; r += kThreads) {
        const int rg = s.row0 + r;
        if (rg >= g * s.qlen) continue;
        const long long row = (long long)(s.q0 + rg / g) * a.num_heads + s.kvh * g + rg % g;
        ml[(row * nseg + seg) * 2] = sm.m[r];
        ml[(row * nseg + seg) * 2 + 1] = sm.l[r];
    }
#pragma unroll
    for (int i = 0; i < kOTiles; i++) {
        const int t = warp + i * KT_NW;
        const int mt = t / (kD / 16), dt = t % (kD / 16);
#pragma unroll
        for (int e = 0; e < kt_acc_elems; e++) {
            const int r = mt * 16 + kt_acc_row(lane, e), d = dt * 16 + kt_acc_col(lane, e);
            const int rg = s.row0 + r;
            if (rg >= g * s.qlen) continue;
            const int tok = s.q0 + rg / g, h = s.kvh * g + rg % g;
            const float v = kt_acc_get(o[i], e) * a.v_scale;
            if (nseg > 1) {
                acc_part[(((long long)tok * a.num_heads + h) * nseg + seg) * kD + d] = v;
            } else {
                const float l = sm.l[r];
                const kt_elem out = kt_from_float<kt_elem>(l > 0.0f ? v / l : 0.0f);
                ((unsigned short *)a.out)[(long long)tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
            }
        }
    }
}

/* The split-KV merge: one block per (token, query head), cooperative. The seed's lesson: a reduce
 * whose every thread walks the whole segment list, a dependent L2 round trip a segment, cost more
 * than the attention itself at batch 1 (the first H200 run: ~30 us of 34 at 64 segments). Here
 * the threads share the segments: each reads its segments' (m, l) at once, the block takes the
 * maximum and the weights w_s = 2^(m_s - M) once (into LDS) and L = sum l_s w_s, then every thread
 * sums its columns over the segments in four independent chains. The order of every sum is fixed
 * by the segment count, so the result is deterministic. m is in log2 units (the main kernel's). */
constexpr int kReduceThreads = 64;
constexpr int kReduceCols = (kD + kReduceThreads - 1) / kReduceThreads;
constexpr int kReduceWaves = kReduceThreads / KT_WAVE > 0 ? kReduceThreads / KT_WAVE : 1;

/* max (op 0) or sum (op 1) over the block; every thread gets the result */
template <int kOp> KT_DEV float kt_block_reduce(float v, float *scratch, int tid)
{
#pragma unroll
    for (int w = KT_WAVE / 2; w >= 1; w /= 2) {
        const float o = kt_shfl_xor(v, w);
        v = kOp == 0 ? (v > o ? v : o) : v + o;
    }
    if constexpr (kReduceWaves > 1) {
        if (tid % KT_WAVE == 0) scratch[tid / KT_WAVE] = v;
        kt_barrier();
        v = scratch[0];
#pragma unroll
        for (int i = 1; i < kReduceWaves; i++) v = kOp == 0 ? (v > scratch[i] ? v : scratch[i]) : v + scratch[i];
        kt_barrier();   /* the scratch is reused by the next reduction */
    }
    return v;
}

KT_KERNEL(KT_NAME(_reduce), kReduceThreads)(kt_attn_args a)
{
    KT_SHARED float w[KT_SEGMAX];
    KT_SHARED float scratch[kReduceWaves];
    const int tid = kt_thread_id();
    const long long row = kt_block_id_x();            /* token * num_heads + head */
    /* uniform over the block: one segment wrote out itself; bind never gives more than SEGMAX */
    if (row >= (long long)a.num_tokens * a.num_heads || a.num_segments <= 1 || !a.partials ||
        a.num_segments > KT_SEGMAX)
        return;
    const int nseg = a.num_segments, h = (int)(row % a.num_heads);
    const long long tok = row / a.num_heads;
    const float *ml = a.partials + row * nseg * 2;
    const float *acc = a.partials + 2LL * a.num_tokens * a.num_heads * nseg + row * nseg * kD;
    const float sink = a.sinks ? a.sinks[h] * kLog2e : kt_neg_inf();
    /* an empty segment has l = 0 (and m = -inf): weight 0 */
    float mx = sink;
    for (int sg = tid; sg < nseg; sg += kReduceThreads)
        if (ml[2 * sg + 1] > 0.0f && ml[2 * sg] > mx) mx = ml[2 * sg];
    mx = kt_block_reduce<0>(mx, scratch, tid);
    float l = 0.0f;
    for (int sg = tid; sg < nseg; sg += kReduceThreads) {
        const float ls = ml[2 * sg + 1];
        const float ws = ls > 0.0f ? kt_exp2(ml[2 * sg] - mx) : 0.0f;
        w[sg] = ws;
        l += ls * ws;
    }
    l = kt_block_reduce<1>(l, scratch, tid) + (a.sinks ? kt_exp2(sink - mx) : 0.0f);
    kt_barrier();   /* the weights */
#pragma unroll
    for (int c = 0; c < kReduceCols; c++) {
        const int d = tid + c * kReduceThreads;
        if (d >= kD) continue;
        float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        int sg = 0;
        for (; sg + 4 <= nseg; sg += 4) {
#pragma unroll
            for (int u = 0; u < 4; u++) part[u] += acc[(long long)(sg + u) * kD + d] * w[sg + u];
        }
        for (; sg < nseg; sg++) part[0] += acc[(long long)sg * kD + d] * w[sg];
        const float sum = (part[0] + part[1]) + (part[2] + part[3]);
        const kt_elem out = kt_from_float<kt_elem>(l > 0.0f ? sum / l : 0.0f);
        ((unsigned short *)a.out)[tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
    }
}
