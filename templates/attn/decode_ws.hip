/* decode_ws.hip: paged decode and speculative verify with the keys split over the warps (op
 * attn_decode, the ABI, launch geometry, segment law and partials of decode.hip:
 * templates/abi/attn.h, runtime/op_attn.c). The recipe's axes (decode_ws.lua) read as
 *   D       head size,
 *   MT      1: one 16-row tile of rows a block (g * q rows; more take more row blocks),
 *   BN      keys a warp's tile,
 *   NW      warps: a round of the KV loop is NW tiles, warp w taking tile w,
 *   SEGMAX  the most split-KV segments a launch may be given,
 *   QL      1: Q's fragments re-read from LDS every tile (d 256: the registers go to O),
 *   ST      stages of the ring the rounds are copied into (NVIDIA: cp.async, ST - 1 rounds
 *           ahead); 1: the next round staged in registers (AMD: no global -> LDS copy).
 * Why (bench/NOTES.md, seventh session): decode.hip splits every tile's work over its warps, so
 * each tile costs three barriers, the partial scores through LDS and P through LDS; ncu put its
 * issue at twice cuDNN's for the same bytes. Here a warp runs FlashAttention-2's loop on its own
 * keys with S, P and O in registers (arch/prefill_ops.h's maps, the same on every target as
 * prefill.hip), the block meets at one barrier a round, and the warps' (m, l, O) are merged once
 * after the loop, in warp order (deterministic), as the reduce merges segments.
 * An fp8 e4m3 cache: where e4m3 -> f16 is one instruction (NVIDIA) the ring's stages hold its raw
 * bytes and S and P V convert them as they read them (KR, attn/kr.h: S in f16, O's columns
 * relabelled within a 16-d group); elsewhere the register stage converts them as it stores them
 * (attn/kv.h: K to q's type, V to f16). decode.hip's fp8 forms split a tile over the warps
 * (three barriers, the scores through LDS), this one meets once a round: on the H200 both read
 * 32/8/128 batch 8 at 32K in 148-158 us, and this one is 5% faster at 128K, the fp8 sweep's pick
 * for the longest streams (bench/NOTES.md, seventeenth session). */
#include "abi/attn.h"
#include "arch/attn_ops.h"
#include "arch/prefill_ops.h"

#include "attn/dtype.h"

namespace {

constexpr int kD = KT_D;
constexpr int kBW = KT_BN;                           /* keys a warp's tile */
constexpr int kNW = KT_NW;
constexpr int kThreads = kNW * KT_WAVE;
constexpr int kBN = kNW * kBW;                       /* keys a round (the tile kv.h loads) */
constexpr int kNT = kBW / 16;                        /* 16-key tiles a warp's tile */
constexpr int kDT = kD / 16;                         /* 16-column tiles of d */
constexpr bool kQL = KT_QL != 0;
constexpr int kST = KT_ST;
constexpr bool kRing = kST > 1;
constexpr int kPad = 8;
constexpr int kLdQ = kD + kPad;
constexpr int kLdK = kLdQ;                           /* [key][d] rows in LDS, 16-bit */
constexpr int kChunkElems = KT_KV8 ? 16 : 8;         /* cache elements a 16-byte load brings */
constexpr int kPerKey = kD / kChunkElems;
constexpr int kKeysPass = kThreads / kPerKey;
constexpr int kChunks = kBN / kKeysPass;
constexpr int kQChunks = (16 * kD / 8 + kThreads - 1) / kThreads;
static_assert(KT_MT == 1, "one 16-row tile a block");
static_assert(kD % 16 == 0 && kBW % 16 == 0, "whole 16x16 tiles");
static_assert(kThreads % kPerKey == 0 && kBN % kKeysPass == 0, "whole keys a thread, the round in whole passes");
static_assert(!kRing || KT_ASYNC_COPY, "a ring needs a global -> LDS copy");
/* KR: the stages hold the fp8 cache's raw rows (d bytes and 16: aligned, conflict-free ldmatrix
 * rows), which S and P V convert as they read them; S runs in f16 (Q converted as it is staged) */
#define KT_WS_KR (KT_KV8 && KT_E4M3_F16_ONE_OP)
#define KT_S_F16 (KT_WS_KR && KT_ELEM_IS_BF16)
#define KT_K_RAW KT_WS_KR   /* attn/kv.h's register stage, were it used with KR */
#define KT_V_RAW KT_WS_KR
#if KT_S_F16
typedef kt_f16 kt_s_elem;
#else
typedef kt_elem kt_s_elem;
#endif
/* the ring (or, ST 1, the one buffer): stages of K's round then V's, rows kLdR bytes (16-bit
 * [key][d] rows, or KR's raw ones), kLdT 16-bit elements */
constexpr int kEszKV = KT_KV8 ? 1 : 2;
constexpr int kLdR = KT_WS_KR ? kD + 16 : kLdK * 2;
constexpr int kLdT = kLdR / 2;
constexpr int kRingV = kBN * kLdR;
constexpr int kStageBytes = 2 * kRingV;
constexpr int kStages = kRing ? kST : 1;
/* LDS: Q's 16 rows, then the stages; after the loop the stages hold the warps' O (fp32) and
 * (m, l) for the merge */
constexpr int kQBytes = 16 * kLdQ * 2;
constexpr int kMergeBytes = kNW * 16 * (kD + 2) * 4;
constexpr int kRingBytes = kStages * kStageBytes > kMergeBytes ? kStages * kStageBytes : kMergeBytes;
constexpr int kSmemBytes = kQBytes + kRingBytes;
static_assert(kQBytes % 16 == 0 && kStageBytes % 16 == 0, "16-byte aligned regions");

#define KT_KV_RING 1
#define KT_KV_GROUPS 1
#include "attn/kv.h"
#include "attn/kr.h"
#include "attn/rows.h"

#include "attn/row_reduce.h"

static_assert(!KT_WS_KR || kDT % 2 == 0, "KR: whole 32-d chunks");
/* the d column (in its 16-d group) of O's accumulator element e: KR's relabelled one */
KT_DEV int kt_o_n(int lane, int e)
{
#if KT_WS_KR
    return kt_o_col_v8(lane, e);
#else
    return kt_s_n(lane, e);
#endif
}

} // namespace

KT_ATTN_KERNEL(KT_KERNEL_NAME, kThreads)(kt_attn_args a)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    unsigned short *const sm_q = (unsigned short *)sm_raw;
    unsigned char *const ring = sm_raw + kQBytes;
    if (!kt_dynamic_shared_fits(kSmemBytes)) return;   /* less LDS than the layout: nothing written */
    const int tid = kt_thread_id(), lane = kt_lane_id(), warp = kt_wave_id();
    const int g = a.num_heads / a.num_kv_heads;
    const kt_gdiv gd = kt_gdiv_make(g);
    const int seq = kt_block_id_y(), seg = kt_block_id_z();
    const int row_blocks = kt_grid_blocks_x() / a.num_kv_heads;
    const int kvh = kt_block_id_x() / row_blocks, row0 = kt_block_id_x() % row_blocks * 16;
    const int *bt = a.block_table + (long long)seq * a.bt_stride;
    const unsigned magic = kt_block_magic(a.block_size);
    kt_warm_table<kBN>(a, bt, magic, seg);
    const int q0 = a.query_start_loc[seq], qlen = a.query_start_loc[seq + 1] - q0;
    const int seq_len = a.seq_lens[seq], ctx = seq_len - qlen, rows = g * qlen;
    int kv_lo, kv_hi;
    kt_segment_keys<kBN>(seq_len, ctx, a.window, a.num_segments, seg, kv_lo, kv_hi);
    if (qlen <= 0 || row0 >= rows || seg >= a.num_segments) return;   /* uniform */
    const int nseg = a.num_segments;
    const int last = (row0 + 16 < rows ? row0 + 16 : rows) - 1;
    const int pos_first = ctx + kt_row_tok(gd, row0), pos_last = ctx + kt_row_tok(gd, last);
    const float neg_inf = kt_neg_inf();
    const bool capped = a.softcap > 0.0f;
    const float score_scale = a.scale * a.k_scale * (capped ? 1.0f : kLog2e);
    const float exp_scale = capped ? 1.0f : score_scale;

    /* the thread's keys and column of every round, and the round's first copy */
    const int kr = tid / kPerKey, col = (tid % kPerKey) * kChunkElems;
    const kt_kv_src ksrc = kt_kv_src_make(a.k_cache, a.k_stride_head, a.k_stride_block, a.k_stride_slot, kvh, col);
    const kt_kv_src vsrc = kt_kv_src_make(a.v_cache, a.v_stride_head, a.v_stride_block, a.v_stride_slot, kvh, col);
    const unsigned ring_lds = kt_lds_addr(ring) + kr * kLdR + col * kEszKV;
    kt_groups pages;   /* of the round whose loads are issued next */
    kt_v16 kr_[kChunks], vr_[kChunks];   /* ST 1: the next round in flight (unused with a ring) */
    if (kv_lo < kv_hi) {
        kt_find_groups(pages, bt, a.block_size, magic, kv_lo, kr, kv_hi);
        if constexpr (kRing) {
#pragma unroll
            for (int t = 0; t < kST - 1; t++) {
                kt_ring_issue(ring_lds + t * kStageBytes, ksrc, vsrc, pages, kv_lo + t * kBN, kr, kv_hi);
                kt_find_groups(pages, bt, a.block_size, magic, kv_lo + (t + 1) * kBN, kr, kv_hi);
            }
        } else {
            kt_issue(kr_, ksrc, pages, kv_lo, kr, kv_hi);
            kt_issue(vr_, vsrc, pages, kv_lo, kr, kv_hi);
            kt_find_groups(pages, bt, a.block_size, magic, kv_lo + kBN, kr, kv_hi);
        }
    }
    /* Q's 16 rows; rows past the sequence's are zeros */
    {
        const unsigned short *q = (const unsigned short *)a.q;
        constexpr int kPerRow = kD / 8;
#pragma unroll
        for (int i = 0; i < kQChunks; i++) {
            const int c = tid + i * kThreads;
            if (c >= 16 * kPerRow) break;
            const int r = c / kPerRow, qc = (c % kPerRow) * 8, rg = row0 + r;
            kt_v16 v = kt_v16_make(0u, 0u, 0u, 0u);
            if (rg < rows)
                v = kt_ldg16(q + (long long)(q0 + kt_row_tok(gd, rg)) * a.q_stride_tok + (long long)(kvh * g + kt_row_head(gd, rg)) * a.q_stride_head + qc);
#if KT_S_F16
            v = kt_bf16x8_to_f16x8(v);
#endif
            kt_sts16(sm_q + r * kLdQ + qc, v);
        }
    }
    kt_barrier();
    kt_frag_a qf[kQL ? 1 : kDT];
    if constexpr (!kQL) {
#if KT_WS_KR
#pragma unroll
        for (int kk = 0; kk < kDT; kk += 2) kt_q_kr(qf[kk], qf[kk + 1], sm_q + kk * 16, kLdQ, lane);
#else
#pragma unroll
        for (int kk = 0; kk < kDT; kk++) kt_load_a(qf[kk], sm_q + kk * 16, kLdQ, lane);
#endif
    }
    /* the lane's rows (one element of each class): running max and its share of the sum, log2
     * units; the sink's term once a block (warp 0, the first lane of a row) and only unsplit */
    const bool with_sink = a.sinks && nseg == 1;
    float m[kt_acc_elems], l[kt_acc_elems];
    kt_acc o[kDT];
#pragma unroll
    for (int i = 0; i < kt_acc_elems; i++) {
        const int rg = row0 + kt_s_q(lane, i);
        const bool sink = with_sink && warp == 0 && rg < rows;
        m[i] = sink ? a.sinks[kvh * g + kt_row_head(gd, rg)] * kLog2e : neg_inf;
        l[i] = sink && (lane & kRowBits) == 0 ? 1.0f : 0.0f;
    }
#pragma unroll
    for (int dt = 0; dt < kDT; dt++) kt_acc_zero(o[dt]);

    int use = 0, fill = kST - 1;
    for (int j0 = kv_lo; j0 < kv_hi; j0 += kBN) {
        if constexpr (kRing) {
            kt_copy_wait_pending<kRing ? kST - 2 : 0>();
            kt_barrier();   /* the round in LDS; every warp done with stage fill (the last round's) */
            kt_ring_issue(ring_lds + fill * kStageBytes, ksrc, vsrc, pages, j0 + (kST - 1) * kBN, kr, kv_hi);
            kt_find_groups(pages, bt, a.block_size, magic, j0 + kST * kBN, kr, kv_hi);
        } else {
            kt_barrier();   /* every warp done with the buffer */
            kt_store_rows<false>((unsigned short *)ring, kr_, kr, col);
            kt_store_rows<true>((unsigned short *)(ring + kRingV), vr_, kr, col);
            kt_barrier();
            /* the next round in flight over this one's work (past the segment it rereads the
             * last key: no branch around the loads) */
            kt_issue(kr_, ksrc, pages, j0 + kBN, kr, kv_hi);
            kt_issue(vr_, vsrc, pages, j0 + kBN, kr, kv_hi);
            kt_find_groups(pages, bt, a.block_size, magic, j0 + 2 * kBN, kr, kv_hi);
        }
        const unsigned char *stage = ring + use * kStageBytes;
        const unsigned short *kt = (const unsigned short *)stage + warp * kBW * kLdT;
        const unsigned short *vt = (const unsigned short *)(stage + kRingV) + warp * kBW * kLdT;
        use = use + 1 == kStages ? 0 : use + 1;
        fill = fill + 1 == kStages ? 0 : fill + 1;
        const int jw = j0 + warp * kBW;   /* the warp's keys (warp-uniform) */
        if (jw >= kv_hi) continue;

        kt_acc s[kNT];
#pragma unroll
        for (int nt = 0; nt < kNT; nt++) kt_acc_zero(s[nt]);
#if KT_WS_KR
        /* a 32-d chunk a step: two k steps' B fragments from one ldmatrix of raw bytes */
#pragma unroll
        for (int kk = 0; kk < kDT; kk += 2) {
            kt_frag_a qa, qb;
            if (kQL) {
                kt_q_kr(qa, qb, sm_q + kk * 16, kLdQ, lane);
            } else {
                qa = qf[kQL ? 0 : kk];
                qb = qf[kQL ? 0 : kk + 1];
            }
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) {
                kt_frag_b fa, fb;
                kt_k_kr(fa, fb, kt + nt * 16 * kLdT + kk * 8, kLdT, lane);
                kt_score_mma<kt_s_elem>(s[nt], qa, fa);
                kt_score_mma<kt_s_elem>(s[nt], qb, fb);
            }
        }
#else
#pragma unroll
        for (int kk = 0; kk < kDT; kk++) {
            kt_frag_a qt;
            if (kQL) kt_load_a(qt, sm_q + kk * 16, kLdQ, lane);
            else qt = qf[kQL ? 0 : kk];
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) {
                kt_frag_b fb;
                kt_load_b(fb, kt + nt * 16 * kLdT + kk * 16, kLdT, lane);
                kt_score_mma<kt_s_elem>(s[nt], qt, fb);
            }
        }
#endif
        if (capped) {
#pragma unroll
            for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++)
                    kt_acc_set(s[nt], i, a.softcap * kt_tanh(kt_acc_get(s[nt], i) * score_scale / a.softcap) * kLog2e);
        }
        /* a tile every row sees whole needs no mask (warp-uniform) */
        const bool whole = row0 + 16 <= rows && jw + kBW <= kv_hi && jw + kBW - 1 <= pos_first &&
                           (a.window <= 0 || pos_last - jw < a.window);
        if (!whole) {
            int rpos[kt_acc_elems];
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                const int rg = row0 + kt_s_q(lane, i);
                rpos[i] = kt_rep(i) == i && rg < rows ? ctx + kt_row_tok(gd, rg) : -1;
            }
#pragma unroll
            for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++) {
                    const int p = rpos[kt_rep(i)], j = jw + nt * 16 + kt_s_n(lane, i);
                    const bool seen = j < kv_hi && j <= p && (a.window <= 0 || p - j < a.window);
                    kt_acc_set(s[nt], i, seen ? kt_acc_get(s[nt], i) : neg_inf);
                }
        }
        kt_frag_a pf[kNT];
        bool moved = false;
        float base[kt_acc_elems], alpha[kt_acc_elems], sum[kt_acc_elems];
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            if (kt_rep(i) != i) continue;
            float mx = neg_inf;
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) mx = kt_fmax(mx, kt_class_reduce<true>(s[nt], i));
            mx = kt_row_max(mx) * exp_scale;
            const float m_new = kt_fmax(m[i], mx);
            base[i] = m_new == neg_inf ? 0.0f : m_new;
            alpha[i] = kt_exp2(m[i] - base[i]);
            moved = moved || m_new != m[i];
            m[i] = m_new;
            sum[i] = 0.0f;
        }
#pragma unroll
        for (int nt = 0; nt < kNT; nt++) {
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++)
                kt_acc_set(s[nt], e, kt_exp2(kt_acc_get(s[nt], e) * exp_scale - base[kt_rep(e)]));
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++)
                if (kt_rep(i) == i) sum[i] += kt_class_reduce<false>(s[nt], i);
            kt_p_frag<kt_pv_elem>(pf[nt], s[nt]);
        }
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            if (kt_rep(i) == i) l[i] = l[i] * alpha[i] + sum[i];
        if (kt_wave_any(moved)) {
#pragma unroll
            for (int dt = 0; dt < kDT; dt++)
#pragma unroll
                for (int e = 0; e < kt_acc_elems; e++) kt_acc_set(o[dt], e, kt_acc_get(o[dt], e) * alpha[kt_rep(e)]);
        }
#pragma unroll
        for (int kk = 0; kk < kNT; kk++)
#pragma unroll
            for (int dt = 0; dt < kDT; dt++) {
                kt_frag_b fb;
#if KT_WS_KR
                kt_load_v8_kn(fb, vt + kk * 16 * kLdT + dt * 8, kLdT, lane);
#else
                kt_load_v(fb, vt + kk * 16 * kLdT + dt * 16, kLdT, lane);
#endif
                kt_pv_mma<kt_pv_elem>(o[dt], pf[kk], fb);
            }
    }
    kt_copy_wait();
    kt_barrier();   /* every warp done with the stages: they hold the merge now */
    kt_grid_launch_dependents();   /* past the keys: the reduce may start its launch (as decode.hip) */

    /* the warps' (m, l) and O into LDS: O [warp][row][d] fp32, then m, l [warp][row] */
    float *const mo = (float *)ring;
    float *const mm = mo + kNW * 16 * kD, *const ml = mm + kNW * 16;
#pragma unroll
    for (int i = 0; i < kt_acc_elems; i++) {
        if (kt_rep(i) != i) continue;
        const float lr = kt_row_sum(l[i]);
        if ((lane & kRowBits) == 0) {
            mm[warp * 16 + kt_s_q(lane, i)] = m[i];
            ml[warp * 16 + kt_s_q(lane, i)] = lr;
        }
    }
#pragma unroll
    for (int dt = 0; dt < kDT; dt++)
#pragma unroll
        for (int e = 0; e < kt_acc_elems; e++)
            mo[(warp * 16 + kt_s_q(lane, e)) * kD + dt * 16 + kt_o_n(lane, e)] = kt_acc_get(o[dt], e);
    kt_barrier();

    /* each thread its (row, column) elements: the warps' weights 2^(m_w - M), in warp order */
    float *ml_part = a.partials;
    float *acc_part = a.partials ? a.partials + 2LL * a.num_tokens * a.num_heads * nseg : (float *)0;
    for (int c = tid; c < 16 * kD; c += kThreads) {
        const int r = c / kD, d = c % kD, rg = row0 + r;
        if (rg >= rows) continue;
        float mx = neg_inf;
#pragma unroll
        for (int w = 0; w < kNW; w++) mx = kt_fmax(mx, mm[w * 16 + r]);
        float lsum = 0.0f, acc = 0.0f;
#pragma unroll
        for (int w = 0; w < kNW; w++) {
            const float wt = mx == neg_inf || mm[w * 16 + r] == neg_inf ? 0.0f : kt_exp2(mm[w * 16 + r] - mx);
            lsum += ml[w * 16 + r] * wt;
            acc += mo[(w * 16 + r) * kD + d] * wt;
        }
        const int tok = q0 + kt_row_tok(gd, rg), h = kvh * g + kt_row_head(gd, rg);
        const long long row = (long long)tok * a.num_heads + h;
        if (nseg > 1) {
            if (d == 0) {
                ml_part[(row * nseg + seg) * 2] = mx;
                ml_part[(row * nseg + seg) * 2 + 1] = lsum;
            }
            acc_part[(row * nseg + seg) * kD + d] = acc * a.v_scale;
        } else {
            const kt_elem out = kt_from_float<kt_elem>(lsum > 0.0f ? acc * a.v_scale / lsum : 0.0f);
            ((unsigned short *)a.out)[(long long)tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
        }
    }
}

#include "attn/reduce.h"
