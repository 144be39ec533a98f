/* decode.hip: one gated delta-net layer step for a batch of sequences, in one launch: the causal
 * conv1d update of the q/k/v channels, q/k L2 norms, the gates, the delta rule on the fp32 state
 * in place, the output and, optionally, the gated RMSNorm (vLLM's decode chain for Qwen3-Next /
 * Qwen3.5, fused). ABI and the exact math: templates/abi/gdn.h; launch geometry and law:
 * runtime/op_gdn.c. The recipe's axes (decode.lua) read as
 *   VK   the state layout the kernel reads and writes (0: [.., K, V]; 1: K-last),
 *   DK   the key head size, compiled in (the state's rows),
 *   DV   the value head size, compiled in (its columns),
 *   BV   value columns a block owns (grid.x = dv / BV; the gated norm needs BV = dv),
 *   NW   warps (waves) a block,
 *   KPT  state rows a thread holds (keys per thread); it holds KPT x VPT of the block's DK x BV
 *        state in registers, VPT = BV * KPT * (threads / DK)^-1... = BV / (threads * KPT / DK).
 *
 * Grid (dv / BV, HV, batch): block (vb, h, i) owns columns [vb*BV, vb*BV + BV) of value head h's
 * state for sequence i, for every token of the sequence. Decode is a state stream (64 KiB a
 * 128 x 128 head, read and written once a step whatever the token count) with a little compute
 * a token, so the block's first act is to issue its state loads; the conv, the gates and the
 * norms run while they are in flight. Threads are laid over the tile so that the state moves in
 * 16-byte pieces along its contiguous axis (columns for VK 0, rows for VK 1). Both sums over
 * the rows a token needs (S^T k and S^T q, both of the decayed state: o = S'^T q + d (k . q))
 * are reduced together, in-thread, by butterflies in the wave, then through LDS across waves:
 * one barrier a token (two with the norm).
 *
 * The conv: each block convolves the channels it reads (its key head's q and k, its own v
 * columns), a thread a channel, every token at once. The v channels are its alone, so it
 * rewrites their conv state itself; the q/k channels are shared by the blocks of every value
 * head of the key head, so each counts its reads and the last to arrive rewrites them (abi). */
#include "abi/gdn.h"
#include "gdn/gdn_ops.h"

namespace {

constexpr int kNT = KT_NW * KT_WAVE;         /* threads */
constexpr int kTI = KT_DK / KT_KPT;          /* threads along the rows (keys) */
constexpr int kTJ = kNT / kTI;               /* threads along the block's columns */
constexpr int kVPT = KT_BV / kTJ;            /* columns a thread */
constexpr int kMaxT = KT_GDN_MAX_TOKENS;
constexpr int kMaxKW = KT_GDN_MAX_KW;
constexpr int kCh = 2 * KT_DK + KT_BV;       /* channels a block convolves: q, k, its v */

static_assert(KT_DK % KT_KPT == 0 && kNT % kTI == 0, "KPT divides DK, and DK / KPT divides the threads");
static_assert(kTJ >= 1 && KT_BV % kTJ == 0 && kVPT >= 1, "the threads' columns tile BV");
static_assert(KT_DV % KT_BV == 0, "BV divides DV");
static_assert((kTI & (kTI - 1)) == 0 && (kTJ & (kTJ - 1)) == 0, "powers of two along both axes");

/* Thread t's place: VK 0 runs the columns fastest (a wave reads along a row), VK 1 the rows. */
KT_DEV int kt_ti(int t) { return KT_VK ? t % kTI : t / kTJ; }
KT_DEV int kt_tj(int t) { return KT_VK ? t / kTI : t % kTJ; }

/* The sum over rows: butterflies over the wave's lanes that share the thread's columns (xor
 * masks kShufLo .. kShufHi/2), then kParts partials through LDS. */
constexpr int kShufLo = KT_VK ? 1 : kTJ;
constexpr int kShufHi = KT_VK ? (kTI < KT_WAVE ? kTI : KT_WAVE) : KT_WAVE;
constexpr int kParts = KT_VK ? (kTI > KT_WAVE ? kTI / KT_WAVE : 1) : (kTJ < KT_WAVE ? KT_NW : kTI);
KT_DEV int kt_part(int t) { return KT_VK ? (kt_ti(t) / KT_WAVE) : (kTJ < KT_WAVE ? kt_wave_id() : kt_ti(t)); }
/* the lane that writes its wave's partial for its columns */
KT_DEV bool kt_part_writer(int t)
{
    if constexpr (KT_VK) return kTI > KT_WAVE ? kt_lane_id() == 0 : true;
    else return kTJ < KT_WAVE ? kt_lane_id() < kTJ : true;
}

struct alignas(8) kt_w2 { unsigned a, b; };

KT_DEV float kt_bits_f(unsigned u) { return __builtin_bit_cast(float, u); }
KT_DEV unsigned kt_f_bits(float f) { return __builtin_bit_cast(unsigned, f); }

/* N contiguous floats, in the widest aligned pieces the count allows (the callers keep the
 * addresses aligned to them: abi's 16-byte rule) */
template <int N> KT_DEV void kt_ld_f32(const float *p, float *d)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int k = 0; k < N / 4; k++) {
            const kt_v16 v = *(const kt_v16 *)(p + 4 * k);
#pragma unroll
            for (int e = 0; e < 4; e++) d[4 * k + e] = kt_bits_f(kt_v16_word(v, e));
        }
    } else if constexpr (N % 2 == 0) {
#pragma unroll
        for (int k = 0; k < N / 2; k++) {
            const kt_w2 v = *(const kt_w2 *)(p + 2 * k);
            d[2 * k] = kt_bits_f(v.a);
            d[2 * k + 1] = kt_bits_f(v.b);
        }
    } else {
#pragma unroll
        for (int k = 0; k < N; k++) d[k] = p[k];
    }
}

template <int N> KT_DEV void kt_st_f32(float *p, const float *d)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int k = 0; k < N / 4; k++)
            *(kt_v16 *)(p + 4 * k) = kt_v16_make(kt_f_bits(d[4 * k]), kt_f_bits(d[4 * k + 1]), kt_f_bits(d[4 * k + 2]),
                                                 kt_f_bits(d[4 * k + 3]));
    } else if constexpr (N % 2 == 0) {
#pragma unroll
        for (int k = 0; k < N / 2; k++) {
            kt_w2 v;
            v.a = kt_f_bits(d[2 * k]);
            v.b = kt_f_bits(d[2 * k + 1]);
            *(kt_w2 *)(p + 2 * k) = v;
        }
    } else {
#pragma unroll
        for (int k = 0; k < N; k++) p[k] = d[k];
    }
}

/* The thread's KPT x VPT piece of the head's state: element (r, c) is state row ti*KPT + r,
 * column j0 + c (j0 = the block's first column + tj*VPT), at s[r * VPT + c]. */
template <bool Store> KT_DEV void kt_state_io(float *head, int ti, int j0, float (&s)[KT_KPT * kVPT])
{
    const int i0 = ti * KT_KPT;
    if constexpr (!KT_VK) {
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            float *p = head + (i0 + r) * KT_DV + j0;
            if constexpr (Store) kt_st_f32<kVPT>(p, s + r * kVPT);
            else kt_ld_f32<kVPT>(p, s + r * kVPT);
        }
    } else {
#pragma unroll
        for (int c = 0; c < kVPT; c++) {
            float col[KT_KPT];
            float *p = head + (j0 + c) * KT_DK + i0;
            if constexpr (Store) {
#pragma unroll
                for (int r = 0; r < KT_KPT; r++) col[r] = s[r * kVPT + c];
                kt_st_f32<KT_KPT>(p, col);
            } else {
                kt_ld_f32<KT_KPT>(p, col);
#pragma unroll
                for (int r = 0; r < KT_KPT; r++) s[r * kVPT + c] = col[r];
            }
        }
    }
}

/* Input u of a channel's conv sequence E (abi): history column na + u, or token u - (kw - 1); zero
 * past the tokens. col: the channel's conv state, x: its first token's input. */
KT_DEV unsigned short kt_conv_input(const unsigned short *col, const unsigned short *x, int u, int na, int n, int kw,
                                    int col_stride, int x_stride)
{
    if (u < kw - 1) return col[(long long)(na + u) * col_stride];
    if (u - (kw - 1) < n) return x[(long long)(u - (kw - 1)) * x_stride];
    return 0;
}

/* A channel's new conv state in place (abi): plain, column u = E[n + u] for u < kw - 1;
 * speculative, column u = E[u] for u < kw - 1 + n. Each column is read (from a later column or a
 * token) before it is written, ascending. */
KT_DEV void kt_conv_shift(unsigned short *col, const unsigned short *x, int na, int n, int kw, bool spec,
                          int col_stride, int x_stride)
{
    const int ncol = spec ? kw - 1 + n : kw - 1;
    const int from = spec ? 0 : n;
#pragma unroll 1
    for (int u = 0; u < ncol; u++)
        col[(long long)u * col_stride] = kt_conv_input(col, x, from + u, na, n, kw, col_stride, x_stride);
}

/* what the block's threads share */
struct kt_gdn_smem {
    float y[kMaxT][kCh];           /* conv outputs of the step's tokens: q | k | the block's v */
    float yr[kMaxT][KT_DK];        /* k of the logged tokens replayed (speculative) */
    float nq[kMaxT], nk[kMaxT], kq[kMaxT], nkr[kMaxT];   /* q's norm * scale, k's norm, k.q */
    float g[kMaxT], beta[kMaxT];
    float red[2][2][kParts > 1 ? kParts : 1][KT_BV];     /* row sums: parity, {S^T k, S^T q} */
    float nrm[2][KT_NW];           /* the gated norm's sum of squares */
    int writer;                    /* this block rewrites the q/k conv state */
};

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, kNT)(kt_gdn_decode_args args)
{
    KT_SHARED kt_gdn_smem sm;

    const int t = kt_thread_id();
    const int vb = kt_block_id_x(), h = kt_block_id_y(), seq = kt_block_id_z();
    const int t0 = args.query_start_loc[seq];
    const int n = args.query_start_loc[seq + 1] - t0;
    const int slot = args.state_indices[seq];
    if (n <= 0 || n > kMaxT || slot < 0) return;   /* uniform over the sequence's blocks */
    const int acc = args.num_accepted ? args.num_accepted[seq] : 0;
    const int na = acc < 0 ? 0 : acc > kMaxT ? kMaxT : acc;   /* logged tokens replayed */
    const bool spec = args.num_accepted != nullptr;

    const int H = args.num_k_heads, HV = args.num_v_heads, kw = args.conv_kw;
    constexpr int dv = KT_DV;   /* compiled in: the state's row offsets are immediates */
    const int hk = h / (HV / H);
    const int ti = kt_ti(t), tj = kt_tj(t);
    const int j0 = vb * KT_BV + tj * kVPT;

    /* ---- the state's loads first: the stream the step is made of ---- */
    float *head = args.ssm_state + (long long)slot * args.ssm_slot_stride + (long long)h * KT_DK * dv;
    float s[KT_KPT * kVPT];
    kt_state_io<false>(head, ti, j0, s);

    /* ---- the conv: a thread a channel, every token (and the replayed ones' k) at once ---- */
    const unsigned short *cw = (const unsigned short *)args.conv_weight;
    unsigned short *cs = (unsigned short *)args.conv_state + (long long)slot * args.conv_slot_stride;
    const unsigned short *xq = (const unsigned short *)args.qkv + (long long)t0 * args.qkv_stride;
    for (int c = t; c < kCh; c += kNT) {
        const int gc = c < KT_DK ? hk * KT_DK + c
                       : c < 2 * KT_DK ? (H + hk) * KT_DK + (c - KT_DK)
                                       : 2 * H * KT_DK + h * dv + vb * KT_BV + (c - 2 * KT_DK);
        const unsigned short *col = cs + (long long)gc * args.conv_chan_stride;
        const unsigned short *xc = xq + gc;
        float w[kMaxKW];
#pragma unroll
        for (int j = 0; j < kMaxKW; j++) w[j] = j < kw ? kt_to_float(kt_elem{cw[(long long)gc * kw + j]}) : 0.0f;
        /* token tt reads E[tt .. tt+kw-1]; E is history columns na .. na+kw-2, then the tokens. The
         * conv is a sliver of the step: loads straight from L1 keep its registers few. */
#pragma unroll 1
        for (int tt = 0; tt < n; tt++) {
            float y = 0.0f;
#pragma unroll
            for (int j = 0; j < kMaxKW; j++)
                if (j < kw)
                    y += w[j] * kt_to_float(kt_elem{kt_conv_input(col, xc, tt + j, na, n, kw, args.conv_col_stride, args.qkv_stride)});
            sm.y[tt][c] = kt_rnd(kt_silu(y));
        }
        if (c >= KT_DK && c < 2 * KT_DK) {
            /* the replayed tokens' k: their inputs are columns 0 .. na+kw-2 */
#pragma unroll 1
            for (int tt = 0; tt < na; tt++) {
                float y = 0.0f;
#pragma unroll
                for (int j = 0; j < kMaxKW; j++)
                    if (j < kw) y += w[j] * kt_to_float(kt_elem{col[(long long)(tt + j) * args.conv_col_stride]});
                sm.yr[tt][c - KT_DK] = kt_rnd(kt_silu(y));
            }
        }
        if (c >= 2 * KT_DK)   /* the block's own v channels: their new conv state */
            kt_conv_shift(cs + (long long)gc * args.conv_chan_stride, xc, na, n, kw, spec, args.conv_col_stride, args.qkv_stride);
    }
    if (t < n) kt_gdn_gates(args.a, args.b, args.A_log, args.dt_bias, (long long)(t0 + t) * args.ab_stride, h, sm.g[t], sm.beta[t]);
    kt_barrier();

    /* ---- who rewrites the q/k conv state; the norms a token ---- */
    if (t == 0) {
        const int readers = (HV / H) * (dv / KT_BV);
        int last = 1;
        if (readers > 1) {
            /* no fence first: this block's reads of those columns were used (their values are in
             * LDS) before the barrier above, so they are done, and the count publishes no write */
            unsigned *cnt = args.counters + (long long)seq * H + hk;
            last = kt_atomic_add_device(cnt, 1u) == (unsigned)(readers - 1);
            if (last) *cnt = 0u;   /* every other reader has counted: the word is ours */
        }
        sm.writer = last;
    }
    for (int tt = kt_wave_id(); tt < n + na; tt += KT_NW) {
        const bool rep = tt >= n;
        const int u = rep ? tt - n : tt;
        float sq = 0.0f, sk = 0.0f, qk = 0.0f;
        for (int i = kt_lane_id(); i < KT_DK; i += KT_WAVE) {
            const float kv = rep ? sm.yr[u][i] : sm.y[u][KT_DK + i];
            const float qv = rep ? 0.0f : sm.y[u][i];
            sq += qv * qv;
            sk += kv * kv;
            qk += qv * kv;
        }
#pragma unroll
        for (int m = KT_WAVE / 2; m > 0; m >>= 1) {
            sq += kt_shfl_xor(sq, m);
            sk += kt_shfl_xor(sk, m);
            qk += kt_shfl_xor(qk, m);
        }
        if (kt_lane_id() == 0) {
            const float rk = 1.0f / __builtin_sqrtf(sk + 1e-6f);
            if (rep) {
                sm.nkr[u] = rk;
            } else {
                const float rq = args.scale / __builtin_sqrtf(sq + 1e-6f);
                sm.nq[u] = rq;
                sm.nk[u] = rk;
                sm.kq[u] = qk * rq * rk;
            }
        }
    }
    kt_barrier();

    if (sm.writer) {   /* the last reader: the q/k channels' new conv state */
        for (int c = t; c < 2 * KT_DK; c += kNT) {
            const int gc = c < KT_DK ? hk * KT_DK + c : (H + hk) * KT_DK + (c - KT_DK);
            kt_conv_shift(cs + (long long)gc * args.conv_chan_stride, xq + gc, na, n, kw, spec, args.conv_col_stride,
                          args.qkv_stride);
        }
    }

    /* ---- speculative: replay the accepted logged tokens, then store the entering state ---- */
    float *log = spec ? args.spec_log + (long long)slot * args.log_slot_stride + (long long)h * kMaxT * dv * 2 : nullptr;
    if (spec) {
        for (int u = 0; u < na; u++) {
            float d[kVPT], dec[kVPT];   /* each column's own log entry: {d, g} */
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                float pr[2];
                kt_ld_f32<2>(log + ((long long)u * dv + j0 + c) * 2, pr);
                d[c] = pr[0];
                dec[c] = __builtin_expf(pr[1]);
            }
#pragma unroll
            for (int r = 0; r < KT_KPT; r++) {
                const float k = sm.yr[u][ti * KT_KPT + r] * sm.nkr[u];
#pragma unroll
                for (int c = 0; c < kVPT; c++) s[r * kVPT + c] = s[r * kVPT + c] * dec[c] + k * d[c];
            }
        }
        kt_state_io<true>(head, ti, j0, s);
    }

    /* ---- the step's tokens ---- */
    const bool rep_thread = ti == 0;   /* one thread a column set writes out and the log */
    unsigned short *out = (unsigned short *)args.out;
    for (int tt = 0; tt < n; tt++) {
        const float dec = __builtin_expf(sm.g[tt]);
        float pk[kVPT], pq[kVPT];
#pragma unroll
        for (int c = 0; c < kVPT; c++) { pk[c] = 0.0f; pq[c] = 0.0f; }
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            const int i = ti * KT_KPT + r;
            const float k = sm.y[tt][KT_DK + i] * sm.nk[tt];
            const float q = sm.y[tt][i] * sm.nq[tt];
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                const float v = s[r * kVPT + c] * dec;
                s[r * kVPT + c] = v;
                pk[c] += v * k;
                pq[c] += v * q;
            }
        }
#pragma unroll
        for (int m = kShufLo; m < kShufHi; m <<= 1) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                pk[c] += kt_shfl_xor(pk[c], m);
                pq[c] += kt_shfl_xor(pq[c], m);
            }
        }
        if constexpr (kParts > 1) {
            const int par = tt & 1;
            if (kt_part_writer(t)) {
#pragma unroll
                for (int c = 0; c < kVPT; c++) {
                    sm.red[par][0][kt_part(t)][tj * kVPT + c] = pk[c];
                    sm.red[par][1][kt_part(t)][tj * kVPT + c] = pq[c];
                }
            }
            kt_barrier();
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                float a0 = 0.0f, a1 = 0.0f;
#pragma unroll
                for (int q = 0; q < kParts; q++) {
                    a0 += sm.red[par][0][q][tj * kVPT + c];
                    a1 += sm.red[par][1][q][tj * kVPT + c];
                }
                pk[c] = a0;
                pq[c] = a1;
            }
        }
        /* d = beta (v - S^T k); S += k d^T; o = S'^T q + d (k . q) */
        const float beta = sm.beta[tt];
        float d[kVPT], o[kVPT];
#pragma unroll
        for (int c = 0; c < kVPT; c++) {
            d[c] = beta * (sm.y[tt][2 * KT_DK + tj * kVPT + c] - pk[c]);
            o[c] = pq[c] + d[c] * sm.kq[tt];
        }
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            const float k = sm.y[tt][KT_DK + ti * KT_KPT + r] * sm.nk[tt];
#pragma unroll
            for (int c = 0; c < kVPT; c++) s[r * kVPT + c] += k * d[c];
        }
        const long long orow = (long long)(t0 + tt) * args.out_stride + (long long)h * dv;
        if (args.norm_weight) {   /* grid-uniform; the recipe and the runtime keep it to BV = dv */
            float ss = 0.0f;
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                o[c] = kt_rnd(o[c]);
                ss += rep_thread ? o[c] * o[c] : 0.0f;
            }
#pragma unroll
            for (int m = KT_WAVE / 2; m > 0; m >>= 1) ss += kt_shfl_xor(ss, m);
            if (kt_lane_id() == 0) sm.nrm[tt & 1][kt_wave_id()] = ss;
            kt_barrier();
            ss = 0.0f;
#pragma unroll
            for (int w = 0; w < KT_NW; w++) ss += sm.nrm[tt & 1][w];
            const float rstd = 1.0f / __builtin_sqrtf(ss / (float)dv + args.norm_eps);
            if (rep_thread) {
                const long long zr = (long long)(t0 + tt) * args.z_stride + (long long)h * dv;
#pragma unroll
                for (int c = 0; c < kVPT; c++) {
                    const int j = j0 + c;
                    const float y = o[c] * rstd * kt_elem_f(args.norm_weight, j) * kt_silu(kt_elem_f(args.z, zr + j));
                    out[orow + j] = kt_from_float<kt_elem>(y).bits;
                }
            }
        } else if (rep_thread) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) out[orow + j0 + c] = kt_from_float<kt_elem>(o[c]).bits;
        }
        if (spec && rep_thread) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                float pr[2] = {d[c], sm.g[tt]};
                kt_st_f32<2>(log + ((long long)tt * dv + j0 + c) * 2, pr);
            }
        }
    }
    if (!spec) kt_state_io<true>(head, ti, j0, s);
}
