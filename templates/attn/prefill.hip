/* prefill.hip: causal varlen paged prefill, chunked prefill included (a sequence's new query
 * tokens attend to its cached prefix and to themselves), FlashAttention-2 style. ABI and semantics:
 * templates/abi/attn.h; launch geometry: runtime/op_attn_prefill.c. The recipe's axes
 * (prefill.lua) read as
 *   D   head size the kernel is compiled for,
 *   BM  rows a block owns: the GQA group folded into M, row r of a sequence's kv head is query
 *       token r / g, head kvh * g + r % g (decode's row mapping with many tokens), so a K/V tile
 *       is read once for the g heads of the group,
 *   BN  keys a KV tile holds,
 *   NW  warps (waves),
 *   WD  warps sharing a row group, each owning a d-slice of D / WD columns: warp w is slice
 *       w % WD of row group w / WD, which owns rows [(w / WD) * BM * WD / NW, ...), whole 16-row
 *       tiles. A warp holds Q's A fragments and O's accumulators of its slice only, so no warp
 *       holds 16 rows x D of either (what keeps d256 out of the registers at WD 1), and at d128 a
 *       warp can own two 16-row tiles, reading each K / V fragment from LDS once for both. S is
 *       summed along d: each warp's partial scores over its slice go to an fp32 slab in LDS, and
 *       every warp of the group adds the WD slabs in slice order (decode.hip's split along d), so
 *       the group's warps hold the same scores bit for bit and run the same softmax on them,
 *       each rescaling its own O slice; one barrier a tile more than WD 1,
 *   SB  1: K and V each have a tile buffer, so V's stores wait only for the previous tile's P V
 *       and K's only for the previous S: two barriers a tile instead of four (steps 1 and 3
 *       below lose their leading barrier), for a second tile of LDS.
 *
 * Block (x, y) = (kv head x row block, sequence): grid.x = num_kv_heads * ceil(g * max_query_len
 * / BM) from the host's max_query_len, grid.y = num_seqs; a shorter sequence's surplus row blocks
 * exit at once (cheaper than a prefix-sum search over query_start_loc per block, and the grid is
 * the host's to size without reading device memory). A sequence's row blocks run last-first:
 * the last rows see the most keys, so the longest blocks start earliest. No split-KV in this
 * version: prefill has tokens x heads / BM blocks to fill the device with.
 *
 * Per block: Q is staged once through LDS and held in registers as A fragments for the whole KV
 * loop (the LDS it took is then the K/V and P buffers'). The KV loop runs from the window's start
 * for the block's first row to the causal limit of its last row (keys outside are never loaded
 * nor masked); a tile that every row of the block sees whole skips the mask arithmetic. K and V
 * are loaded as decode.hip does (attn/kv.h): a thread loads whole 16-byte pieces of a few keys'
 * rows, K and V the same keys, so a key's block-table entry is read once a tile, a tile ahead,
 * the division by block_size a multiply-high; a key past the visible range rereads the last
 * visible one, so every load is unconditional (the next K tile's after the last tile too). Both
 * go to LDS as the cache stores them, [key][d], with 16-byte stores; fp8 e4m3 pairs are converted
 * exactly as they are stored, K to q's type and V to f16 (P V's type with an fp8 cache:
 * attn/dtype.h). Per tile:
 *   1. K tile to LDS; the next tile's pages looked up, then the V tile's loads issued into the
 *      registers K left;
 *   2. S = Q K^T into registers (16x16 accumulators, the warp's rows x BN keys over its d-slice;
 *      K as B = W[n = key][k = d], kt_load_b; with WD > 1 the slices' partials summed through the
 *      slabs, a barrier between), scaled, capped, masked, in log2 units; the online softmax per
 *      row in registers (rows.h: the row's elements in a lane, then a butterfly over the lanes
 *      that share it); O rescaled; P rounded to P V's type to LDS, since the accumulator
 *      layout is not the A layout everywhere (with WD > 1 the group's warps hold the same P and
 *      each stores the tiles nt with nt % WD = its slice);
 *   3. V to LDS over the consumed K tile (SB 1: into its own buffer), [key][d] as K (the next K
 *      tile's loads then in flight);
 *   4. O += P V over the warp's d-slice, P's A fragments from LDS, V as a [k = key][n = d] tile
 *      (kt_load_b_kn: arch/attn_ops.h).
 * The block writes out = O * v_scale / l, rounded once. */
#include "abi/attn.h"
#include "arch/attn_ops.h"

#include "attn/dtype.h"

namespace {

constexpr int kD = KT_D;
constexpr int kBM = KT_BM;
constexpr int kBN = KT_BN;
constexpr int kThreads = KT_NW * KT_WAVE;
constexpr int kWD = KT_WD;                           /* warps sharing rows, each a d-slice */
constexpr int kWR = KT_NW / kWD;                     /* row groups */
constexpr int kMW = kBM / (16 * kWR);                /* 16-row tiles a warp owns */
constexpr int kDT = kD / 16, kNT = kBN / 16;
constexpr int kDS = kDT / kWD;                       /* 16-wide d tiles a warp owns (Q's k, O's n) */
constexpr int kPad = 8;                              /* 16 bytes: aligned rows, staggered banks */
constexpr int kLdQ = kD + kPad;                      /* pitch of the Q stage and the K / V tile */
constexpr int kLdK = kLdQ;
constexpr int kLdP = kBN + kPad;                     /* pitch of P */
constexpr int kLdS = kBN + 4;                        /* pitch of an fp32 partial-score slab */
constexpr int kChunkElems = KT_KV8 ? 16 : 8;         /* cache elements one 16-byte load brings */
constexpr int kPerKey = kD / kChunkElems;            /* loads a key's row takes */
constexpr int kKeysPass = kThreads / kPerKey;        /* keys the block loads in one pass */
constexpr int kChunks = kBN / kKeysPass;             /* keys a thread loads a tile (K and V each) */
constexpr int kQChunks = (kBM * kD / 8 + kThreads - 1) / kThreads;

static_assert(kD % 16 == 0 && kBN % 16 == 0, "whole 16x16 tiles");
static_assert(KT_NW % kWD == 0 && kDT % kWD == 0, "whole warps and whole d tiles a d-slice");
static_assert(kMW >= 1 && kMW * 16 * kWR == kBM, "whole 16-row tiles a warp");
static_assert(kThreads % kPerKey == 0 && kKeysPass >= 1 && kBN % kKeysPass == 0 && kChunks >= 1,
              "whole keys a thread, the tile in whole passes");

#include "attn/kv.h"
#include "attn/rows.h"

/* Which accumulator elements of a lane share a row, and which lane bits a row spans (rows.h),
 * as compile-time scalars (a constexpr table would not be visible to CUDA device code): element
 * i's class is kt_rep(i), 3 bits each; the loops below test them after unrolling. */
KT_LAYOUT_FN unsigned kt_make_row_reps()
{
    unsigned t = 0;
    for (int i = 0; i < kt_acc_elems; i++) t |= (unsigned)kt_rows_rep(i) << (3 * i);
    return t;
}
KT_LAYOUT_FN int kt_make_row_bits()
{
    int m = 0;
    for (int b = 1; b < kt_frag_lanes; b *= 2)
        if (kt_rows_lane_bit(b)) m |= b;
    return m;
}
static_assert(kt_acc_elems <= 8, "3 bits an element's row class");
constexpr unsigned kRepBits = kt_make_row_reps();
constexpr int kRowBits = kt_make_row_bits();
KT_DEV int kt_rep(int i) { return (int)((kRepBits >> (3 * i)) & 7u); }

KT_DEV float kt_row_max(float x)
{
#pragma unroll
    for (int b = 1; b < KT_WAVE; b *= 2)
        if (kRowBits & b) {
            const float y = kt_shfl_xor(x, b);
            x = x > y ? x : y;
        }
    return x;
}

KT_DEV float kt_row_sum(float x)
{
#pragma unroll
    for (int b = 1; b < KT_WAVE; b *= 2)
        if (kRowBits & b) x += kt_shfl_xor(x, b);
    return x;
}

/* LDS, in bytes (prefill.lua's smem_bytes is the same sum): the Q stage, then over it the K / V
 * tile ([key][d]: K then V in one buffer, or with SB 1 each its own), P (each row group its own
 * rows) and, with d split over warps, one fp32
 * slab of partial scores per d-slice. A byte array with offsets rather than a union of structs,
 * because a slab array of length 0 (kWD 1) is not C++: kWD 1 has the previous layout, byte for
 * byte. Every offset is a multiple of 16 (pitches of 8 + 16k elements). */
constexpr int kQBytes = kBM * kLdQ * 2;
constexpr int kKVBytes = kBN * kLdK * 2;
constexpr int kBufBytes = (KT_SB ? 2 : 1) * kKVBytes;   /* K's tile, and V's beside it with SB 1 */
constexpr int kPBytes = kBM * kLdP * 2;
constexpr int kSlabBytes = kWD > 1 ? kWD * kBM * kLdS * 4 : 0;
constexpr int kTileBytes = kBufBytes + kPBytes + kSlabBytes;
constexpr int kSmemBytes = kQBytes > kTileBytes ? kQBytes : kTileBytes;
static_assert(kKVBytes % 16 == 0 && kPBytes % 16 == 0, "16-byte aligned regions");

struct alignas(16) kt_smem { unsigned char raw[kSmemBytes]; };

} // namespace

KT_KERNEL(KT_KERNEL_NAME, kThreads)(kt_attn_args a)
{
    KT_SHARED kt_smem sm;
    unsigned short *const sm_q = (unsigned short *)sm.raw;
    unsigned short *const sm_k = (unsigned short *)sm.raw;
    unsigned short *const sm_v = (unsigned short *)(sm.raw + (KT_SB ? kKVBytes : 0));
    unsigned short *const sm_p = (unsigned short *)(sm.raw + kBufBytes);
    float *const sm_s = (float *)(sm.raw + kBufBytes + kPBytes);
    const int tid = kt_thread_id(), lane = kt_lane_id(), warp = kt_wave_id();
    const int g = a.num_heads / a.num_kv_heads;
    const int seq = kt_block_id_y();
    const int row_blocks = kt_grid_blocks_x() / a.num_kv_heads;   /* blocks sharing a kv head */
    const int kvh = kt_block_id_x() / row_blocks;
    const int row0 = (row_blocks - 1 - kt_block_id_x() % row_blocks) * kBM;   /* last rows first */
    const int q0 = a.query_start_loc[seq];
    const int qlen = a.query_start_loc[seq + 1] - q0;
    const int rows = g * qlen;
    const int ctx = a.seq_lens[seq] - qlen;
    if (qlen <= 0 || row0 >= rows) return;   /* a shorter sequence's surplus block (uniform) */
    const int last = (row0 + kBM < rows ? row0 + kBM : rows) - 1;
    const int pos_first = ctx + row0 / g, pos_last = ctx + last / g;
    /* the keys any row of the block sees: the first row's window start to the last row's causal
     * limit (<= seq_len) */
    const int kv_lo = a.window > 0 && pos_first - a.window + 1 > 0 ? pos_first - a.window + 1 : 0;
    const int kv_hi = pos_last + 1;
    const int *bt = a.block_table + (long long)seq * a.bt_stride;
    /* the warp's first row in the block and first d column (its d-slice: Q's k, O's n) */
    const int wd = warp % kWD, wrow = (warp / kWD) * kMW * 16, dcol = wd * kDS * 16;
    const float neg_inf = kt_neg_inf();
    const bool capped = a.softcap > 0.0f;
    /* scores in log2 units; with a cap, the cap applies to the natural-log score first */
    const float score_scale = a.scale * a.k_scale * (capped ? 1.0f : kLog2e);

    /* the thread's keys and column of every tile; the first K tile's loads fly while Q is staged */
    const int kr = tid / kPerKey, col = (tid % kPerKey) * kChunkElems;
    constexpr long long kEsz = KT_KV8 ? 1 : 2;
    const unsigned char *kbase = (const unsigned char *)a.k_cache + ((long long)kvh * a.k_stride_head + col) * kEsz;
    const unsigned char *vbase = (const unsigned char *)a.v_cache + ((long long)kvh * a.v_stride_head + col) * kEsz;
    const unsigned magic = kt_block_magic(a.block_size);
    kt_v16 kvr[kChunks];
    kt_pages pages;   /* of the tile being loaded: its K issued, its V next */
    kt_find_pages(pages, bt, a.block_size, magic, kv_lo, kr, kv_hi);
    kt_issue(kvr, kbase, pages, a.block_size, magic, kv_lo, kr, kv_hi, a.k_stride_block, a.k_stride_slot);

    {
        const unsigned short *q = (const unsigned short *)a.q;
        constexpr int kPerRow = kD / 8;
#pragma unroll
        for (int i = 0; i < kQChunks; i++) {
            const int c = tid + i * kThreads;
            if (c >= kBM * kPerRow) break;
            const int r = c / kPerRow, col = (c % kPerRow) * 8, rg = row0 + r;
            kt_v16 v = kt_v16_make(0u, 0u, 0u, 0u);
            if (rg < rows)
                v = kt_ldg16(q + (long long)(q0 + rg / g) * a.q_stride_tok + (long long)(kvh * g + rg % g) * a.q_stride_head + col);
            kt_sts16(sm_q + r * kLdQ + col, v);
        }
    }
    kt_barrier();
    kt_frag_a qf[kMW][kDS];
#pragma unroll
    for (int mt = 0; mt < kMW; mt++)
#pragma unroll
        for (int kk = 0; kk < kDS; kk++) kt_load_a(qf[mt][kk], sm_q + (wrow + mt * 16) * kLdQ + dcol + kk * 16, kLdQ, lane);

    /* per row (one element index of each class, rows.h): its position (-1: a row past the
     * sequence's, which sees nothing), running max and sum in log2 units */
    int rpos[kMW][kt_acc_elems];
    float m[kMW][kt_acc_elems], l[kMW][kt_acc_elems];
    kt_acc o[kMW][kDS];
#pragma unroll
    for (int mt = 0; mt < kMW; mt++) {
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            const int rg = row0 + wrow + mt * 16 + kt_acc_row(lane, i);
            rpos[mt][i] = rg < rows ? ctx + rg / g : -1;
            const bool sink = a.sinks && rg < rows;
            m[mt][i] = sink ? a.sinks[kvh * g + rg % g] * kLog2e : neg_inf;
            l[mt][i] = sink ? 1.0f : 0.0f;
        }
#pragma unroll
        for (int dt = 0; dt < kDS; dt++) kt_acc_zero(o[mt][dt]);
    }

    kt_barrier();                     /* every warp's Q fragments are read: the stage is K's */
    for (int j0 = kv_lo; j0 < kv_hi; j0 += kBN) {
        /* one buffer: the previous tile's P V must be done with it. With SB 1, K's buffer was last
         * read by the previous S, before the previous barrier */
        if (!KT_SB && j0 > kv_lo) kt_barrier();
        kt_store_rows<false>(sm_k, kvr, kr, col);
        {
            /* the next tile's pages first (AMD counts loads in order: waiting for them must not
             * wait for V), then this tile's V into the registers K left */
            kt_pages next;
            kt_find_pages(next, bt, a.block_size, magic, j0 + kBN, kr, kv_hi);
            kt_issue(kvr, vbase, pages, a.block_size, magic, j0, kr, kv_hi, a.v_stride_block, a.v_stride_slot);
            pages = next;
        }
        kt_barrier();

        /* 2. scores: every warp its rows against the whole tile, over its d-slice */
        kt_acc s[kMW][kNT];
#pragma unroll
        for (int mt = 0; mt < kMW; mt++)
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) kt_acc_zero(s[mt][nt]);
#pragma unroll
        for (int nt = 0; nt < kNT; nt++)
#pragma unroll
            for (int kk = 0; kk < kDS; kk++) {
                kt_frag_b fb;
                kt_load_b(fb, sm_k + nt * 16 * kLdK + dcol + kk * 16, kLdK, lane);
#pragma unroll
                for (int mt = 0; mt < kMW; mt++) kt_mma<kt_elem>(s[mt][nt], qf[mt][kk], fb);
            }
        if (kWD > 1) {
            /* the d-slices' partial sums meet in LDS; every warp of a row group adds the slabs in
             * slice order, so the group's warps hold the same scores, bit for bit, and their
             * softmax statistics agree (each rescales its own O slice by them) */
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++) {
                        const int r = wrow + mt * 16 + kt_acc_row(lane, i), c = nt * 16 + kt_acc_col(lane, i);
                        sm_s[(wd * kBM + r) * kLdS + c] = kt_acc_get(s[mt][nt], i);
                    }
            kt_barrier();
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++) {
                        const int r = wrow + mt * 16 + kt_acc_row(lane, i), c = nt * 16 + kt_acc_col(lane, i);
                        float t = sm_s[r * kLdS + c];
#pragma unroll
                        for (int ds = 1; ds < kWD; ds++) t += sm_s[(ds * kBM + r) * kLdS + c];
                        kt_acc_set(s[mt][nt], i, t);
                    }
        }
        /* a tile every row of the block sees whole needs no mask (uniform over the block) */
        const bool whole = row0 + kBM <= rows && j0 + kBN - 1 <= pos_first && (a.window <= 0 || pos_last - j0 < a.window);
#pragma unroll
        for (int mt = 0; mt < kMW; mt++)
#pragma unroll
            for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++) {
                    float v = kt_acc_get(s[mt][nt], i) * score_scale;
                    if (capped) v = a.softcap * kt_tanh(v / a.softcap) * kLog2e;
                    if (!whole) {
                        const int p = rpos[mt][kt_rep(i)], j = j0 + nt * 16 + kt_acc_col(lane, i);
                        if (!(j <= p && (a.window <= 0 || p - j < a.window))) v = neg_inf;
                    }
                    kt_acc_set(s[mt][nt], i, v);
                }

        /* the online softmax, a row's elements of the lane first, then across its lanes */
#pragma unroll
        for (int mt = 0; mt < kMW; mt++) {
            float base[kt_acc_elems], alpha[kt_acc_elems], sum[kt_acc_elems];
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                if (kt_rep(i) != i) continue;
                float mx = neg_inf;
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int e = 0; e < kt_acc_elems; e++)
                        if (kt_rep(e) == i) mx = mx > kt_acc_get(s[mt][nt], e) ? mx : kt_acc_get(s[mt][nt], e);
                mx = kt_row_max(mx);
                const float m_new = m[mt][i] > mx ? m[mt][i] : mx;
                base[i] = m_new == neg_inf ? 0.0f : m_new;   /* a row with nothing seen yet */
                alpha[i] = kt_exp2(m[mt][i] - base[i]);
                m[mt][i] = m_new;
                sum[i] = 0.0f;
            }
#pragma unroll
            for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                for (int e = 0; e < kt_acc_elems; e++) {
                    const float pv = kt_exp2(kt_acc_get(s[mt][nt], e) - base[kt_rep(e)]);
                    sum[kt_rep(e)] += pv;
                    const int r = wrow + mt * 16 + kt_acc_row(lane, e), c = nt * 16 + kt_acc_col(lane, e);
                    /* the row group's warps hold the same P: each stores its share of the tiles */
                    if (kWD == 1 || nt % kWD == wd) sm_p[r * kLdP + c] = kt_from_float<kt_pv_elem>(pv).bits;
                }
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++)
                if (kt_rep(i) == i) l[mt][i] = l[mt][i] * alpha[i] + kt_row_sum(sum[i]);
#pragma unroll
            for (int dt = 0; dt < kDS; dt++)
#pragma unroll
                for (int e = 0; e < kt_acc_elems; e++) kt_acc_set(o[mt][dt], e, kt_acc_get(o[mt][dt], e) * alpha[kt_rep(e)]);
        }
        /* one buffer: every warp is done with K before V overwrites it. With SB 1, V's buffer was
         * last read by the previous P V, before this tile's first barrier */
        if (!KT_SB) kt_barrier();

        /* 3. V to LDS; the next K tile's loads in flight over P V (after the last tile too: they
         * reread the last visible key, and no branch waits on them) */
        kt_store_rows<true>(sm_v, kvr, kr, col);
        kt_issue(kvr, kbase, pages, a.block_size, magic, j0 + kBN, kr, kv_hi, a.k_stride_block, a.k_stride_slot);
        kt_barrier();                 /* V and P are in LDS; every warp is done with K and the slabs */

        /* 4. O += P V */
#pragma unroll
        for (int kk = 0; kk < kNT; kk++) {
            kt_frag_a pa[kMW];
#pragma unroll
            for (int mt = 0; mt < kMW; mt++) kt_load_a(pa[mt], sm_p + (wrow + mt * 16) * kLdP + kk * 16, kLdP, lane);
#pragma unroll
            for (int dt = 0; dt < kDS; dt++) {
                kt_frag_b fb;
                kt_load_b_kn(fb, sm_v + kk * 16 * kLdK + dcol + dt * 16, kLdK, lane);
#pragma unroll
                for (int mt = 0; mt < kMW; mt++) kt_mma<kt_pv_elem>(o[mt][dt], pa[mt], fb);
            }
        }
    }

    /* out = O * v_scale / l, rounded once; a row that saw nothing writes zeros */
#pragma unroll
    for (int mt = 0; mt < kMW; mt++) {
        float inv[kt_acc_elems];
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) inv[i] = l[mt][kt_rep(i)] > 0.0f ? a.v_scale / l[mt][kt_rep(i)] : 0.0f;
#pragma unroll
        for (int dt = 0; dt < kDS; dt++)
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++) {
                const int rg = row0 + wrow + mt * 16 + kt_acc_row(lane, e), d = dcol + dt * 16 + kt_acc_col(lane, e);
                if (rg >= rows) continue;
                const int tok = q0 + rg / g, h = kvh * g + rg % g;
                const kt_elem out = kt_from_float<kt_elem>(kt_acc_get(o[mt][dt], e) * inv[e]);
                ((unsigned short *)a.out)[(long long)tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
            }
    }
}
