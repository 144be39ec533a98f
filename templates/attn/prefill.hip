/* prefill.hip: causal varlen paged prefill, chunked prefill included (a sequence's new query
 * tokens attend to its cached prefix and to themselves), FlashAttention-2 style: Q, S and P in
 * registers. ABI and semantics: templates/abi/attn.h; launch geometry: runtime/op_attn_prefill.c.
 * The recipe's axes (prefill.lua) read as
 *   D   head size the kernel is compiled for,
 *   BM  rows a block owns: the GQA group folded into M, row r of a sequence's kv head is query
 *       token r / g, head kvh * g + r % g (decode's row mapping with many tokens), so a K/V tile
 *       is read once for the g heads of the group,
 *   BN  keys a KV tile holds,
 *   NW  warps (waves),
 *   WD  warps sharing a row group, each owning a d-slice of D / WD columns: warp w is slice
 *       w % WD of row group w / WD, which owns rows [(w / WD) * BM * WD / NW, ...), whole 16-row
 *       tiles. A warp holds Q's fragments and O's accumulators of its slice only, so no warp
 *       holds 16 rows x D of either (what keeps d256 out of the registers at WD 1). S is summed
 *       along d: each warp's partial scores over its slice go to an fp32 slab in LDS, and every
 *       warp of the group adds the WD slabs in slice order (decode.hip's split along d), so the
 *       group's warps hold the same scores bit for bit and run the same softmax on them, each
 *       rescaling its own O slice; one barrier a tile more than WD 1,
 *   QL  1: Q stays in LDS and its fragments are read each tile (two live at a time) instead of
 *       held for the whole loop: what lets a warp own two 16-row tiles at d128 with WD 1, so that
 *       every K and V fragment read from LDS serves 32 rows,
 *   ST  tiles of a ring in LDS (targets that copy global -> LDS without registers, 16-bit caches):
 *       1, K and V each have one tile buffer (the per-tile order below); ST > 1, ST stages of a K
 *       and a V tile, the copies of tile j + ST - 1 issued as tile j starts, so every copy has
 *       ST - 1 whole tiles of work to land behind and a tile needs one barrier (two with WD > 1).
 *       The ring costs LDS, hence resident blocks, which the sweep weighs: on the H200 it is ~1%
 *       faster for d256 prefill and slower for speculative decode's streams, which were not
 *       waiting on their copies (bench/NOTES.md, eleventh session).
 *
 * Block (x, y, z) = (kv head x row block, sequence, segment): grid.x = num_kv_heads * ceil(g *
 * max_query_len / BM) from the host's max_query_len, grid.y = num_seqs, grid.z = num_segments; a
 * shorter sequence's surplus row blocks exit at once (cheaper than a prefix-sum search over
 * query_start_loc per block, and the grid is
 * the host's to size without reading device memory). grid.x runs kv heads fastest and a
 * sequence's row blocks last-first: the last rows see the most keys, so the longest blocks of
 * every head start earliest (longest first keeps the causal triangle's tail short). Split-KV
 * (num_segments > 1): a block's visible keys are cut into num_segments runs of whole tiles, each
 * block writing its rows' (m, l) and unnormalised O into the partials as decode does
 * (templates/abi/attn.h), merged by <kernel>_reduce (attn/reduce.h); for a long context that
 * too few blocks would read (a chunk over a long prefix; speculative verify, op attn_decode, whose
 * g x q rows fill one or two blocks). A row group past the sequence's rows computes on Q's zeros,
 * masked and never written: a branch around its products cost prefill 3-7% on the H200 (its
 * scheduling, at equal registers) and saved speculative decode 8% at q 4 (bench/NOTES.md, tenth
 * session).
 *
 * The two products are held as arch/prefill_ops.h orients them: S = Q K^T on NVIDIA, S^T = K Q^T
 * on AMD (O, O^T alike), so that P goes from the score accumulators into P V's operand in
 * registers (one exchange across half-waves on gfx11). The KV loop runs from the window's start
 * for the block's first row to the causal limit of its last row (keys outside are never loaded
 * nor masked); a tile that every row of the block sees whole skips the mask, and the mask and
 * the soft cap are loops of their own behind uniform branches, so the softmax's chain is
 * branch-free. K and V each have a tile buffer ([key][d], as the cache stores them). A thread
 * copies whole 16-byte pieces of a few keys' rows, K and V the same keys, so a key's block-table
 * entry is read once a tile, a tile ahead; a key past the visible range rereads the last visible
 * one, so every load is unconditional (its score is masked, its P is 0). Where the target copies
 * global -> LDS without registers (cp.async on NVIDIA, 16-bit caches) the pieces go straight to
 * the tile; otherwise they are staged in registers and stored at the commit, fp8 e4m3 pairs
 * converted on the way (K to q's type, V to f16: attn/dtype.h). Per tile, FlashAttention-2's
 * order:
 *   1. K's tile committed (its copy was issued during the previous P V); barrier: K is in LDS and
 *      every warp is done with the previous tile's V;
 *   2. V's copy issued (the next tile's pages looked up first); S = Q K^T over the warp's
 *      d-slice (WD > 1: the slices' partials summed through the slabs, a barrier between);
 *      scaled, capped, masked, in log2 units; the online softmax per row in registers (rows.h);
 *      O rescaled (kEager: every tile; else where a row's maximum moved); P rounded to P V's type
 *      into its operand;
 *   3. V's tile committed; barrier: V is in LDS and every warp is done with K;
 *   4. the next K's copy issued, then O += P V.
 * The block writes out = O * v_scale / l, rounded once. */
#include "abi/attn.h"
#include "arch/attn_ops.h"
#include "arch/prefill_ops.h"

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
constexpr bool kQL = KT_QL != 0;
/* Where a warp holds one 16-row tile of the whole d range and reads Q's fragments from LDS (QL 1,
 * WD 1), its registers have room to work out the next copies' addresses before each tile's
 * barrier, to rescale O every tile with no branch around it and to write O a row at a time (all
 * below). Where it holds Q's fragments (QL 0: 255 registers at d256), two row tiles or a d-slice's
 * partial scores, the same spilled on sm_90a (d256 BM128 BN32 NW8 QL0: 16 bytes; d128 BM128 BN64
 * NW4 QL1: 336; d128 BM64 BN64 NW8 WD2 QL1: 16), and those keep the late addresses, the branch
 * and the element-wise epilogue. */
constexpr bool kEager = kQL && kMW == 1 && kWD == 1;
constexpr int kPad = 8;                              /* 16 bytes: aligned rows, staggered banks */
constexpr int kLdQ = kD + kPad;                      /* pitch of Q and of the K / V tiles */
constexpr int kLdK = kLdQ;
constexpr int kLdS = kBN + 4;                        /* pitch of an fp32 partial-score slab */
constexpr int kChunkElems = KT_KV8 ? 16 : 8;         /* cache elements one 16-byte load brings */
constexpr int kPerKey = kD / kChunkElems;            /* 16-byte pieces a key's row takes */
constexpr int kQChunks = (kBM * kD / 8 + kThreads - 1) / kThreads;
/* the cache's bytes are what the tile holds: copy them without registers where the target can */
constexpr bool kDirect = KT_ASYNC_COPY && !KT_KV8;
/* Threads sharing a key's row: direct copies give a thread several pieces of one key, 8 pieces
 * (128 bytes) apart, so 8 lanes copy 128 contiguous bytes a step and a thread computes one
 * address a key (its pieces are immediate offsets from it); the staged path keeps a piece a key
 * (attn/kv.h's stores lay their bank pattern out for it). */
constexpr int kTK = kDirect && kPerKey > 8 ? 8 : kPerKey;
constexpr int kPieces = kPerKey / kTK;               /* pieces a thread copies of each of its keys */
constexpr int kKeysPass = kThreads / kTK;            /* keys the block loads in one pass */
constexpr int kChunks = kBN / kKeysPass;             /* keys a thread loads a tile (K and V each) */

static_assert(kD % 16 == 0 && kBN % 16 == 0, "whole 16x16 tiles");
static_assert(KT_NW % kWD == 0 && kDT % kWD == 0, "whole warps and whole d tiles a d-slice");
static_assert(kMW >= 1 && kMW * 16 * kWR == kBM, "whole 16-row tiles a warp");
static_assert(kThreads % kTK == 0 && kPerKey % kTK == 0 && kKeysPass >= 1 && kBN % kKeysPass == 0 && kChunks >= 1,
              "whole keys a thread, the tile in whole passes");
constexpr int kST = KT_ST;
constexpr bool kRing = kST > 1;
static_assert(kST >= 1 && (!kRing || kDirect), "a ring needs a global -> LDS copy of the cache's bytes");

#include "attn/kv.h"
#include "attn/rows.h"

#include "attn/row_reduce.h"

/* LDS, in bytes (prefill.lua's smem_bytes is the same sum; the launch provides it): ST stages of a
 * K tile then a V tile, WD > 1's slabs, then Q: its own region with QL 1, else a stage over the
 * last ring stage (ST 1: V's tile) and the slabs, which no copy reaches before the loop's first
 * barrier, when every warp has read Q into registers. Every offset is a multiple of 16 (pitches of
 * 8 + 16k elements). */
constexpr int kQBytes = kBM * kLdQ * 2;
constexpr int kKVBytes = kBN * kLdK * 2;
constexpr int kStageBytes = 2 * kKVBytes;            /* a stage: K's tile, then V's */
constexpr int kSlabBytes = kWD > 1 ? kWD * kBM * kLdS * 4 : 0;
constexpr int kSlabOffset = kST * kStageBytes;
constexpr int kQOffset = kQL ? kSlabOffset + kSlabBytes : (kRing ? (kST - 1) * kStageBytes : kKVBytes);
constexpr int kQOverlap = kSlabOffset + kSlabBytes - kQOffset;   /* QL 0: the region Q shares */
constexpr int kSmemBytes = kQL ? kQOffset + kQBytes : kQOffset + (kQBytes > kQOverlap ? kQBytes : kQOverlap);
static_assert(kKVBytes % 16 == 0 && kQBytes % 16 == 0 && kSlabBytes % 16 == 0, "16-byte aligned regions");

/* A thread's share of one cache's tile in flight: the registers it is staged in, or none. */
struct kt_stage { kt_v16 r[kDirect ? 1 : kChunks]; };

/* Where a thread's keys of the tile at j0 lie in one cache (K or V), whose pages p holds; base
 * points at the thread's kv head and column. A page's offset is a 32 x 32 -> 64-bit multiply:
 * attn_common.c holds the block strides under 2^31 elements. Computed apart from the copies so
 * that the loop works them out before its barrier: after it, every warp at once issued ~100
 * instructions of addresses while the tensor pipe waited (the H200's SASS of d256, ring form). */
struct kt_srcs { const unsigned char *p[kChunks]; };

KT_DEV void kt_stage_srcs(kt_srcs &s, const unsigned char *base, const kt_pages &p, int bs, unsigned magic, int j0, int kr,
                          int kv_hi, int stride_block, int stride_slot)
{
    constexpr long long kEsz = KT_KV8 ? 1 : 2;
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int key = kt_key_of(j0, kr, i, kv_hi), slot = kt_slot_of(key, magic, bs);
        s.p[i] = base + ((long long)p.page[i] * stride_block + slot * stride_slot) * kEsz;
    }
}

/* The copies of one cache's tile from its sources, lds the thread's first piece of the LDS tile
 * (direct copies). Read once by the kernel (KV streams): not kept in L1. */
KT_DEV void kt_stage_issue(kt_stage &st, unsigned lds, const kt_srcs &s)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        if (kDirect) {
#pragma unroll
            for (int j = 0; j < kPieces; j++)
                kt_copy16_async(lds + (i * kKeysPass * kLdK + j * kTK * kChunkElems) * 2, s.p[i] + j * kTK * 16);
        } else {
            st.r[kDirect ? 0 : i] = kt_ldg16_stream(s.p[i]);
        }
    }
    if (kDirect) kt_copy_commit();
}

/* The thread's pieces of the tile are in LDS once this returns (the barrier after it makes the
 * whole tile visible). */
template <bool kV> KT_DEV void kt_stage_commit(const kt_stage &st, unsigned short *tile, int kr, int col)
{
    if (kDirect) {
        kt_copy_wait();
    } else {
        kt_v16 r[kChunks];
#pragma unroll
        for (int i = 0; i < kChunks; i++) r[i] = st.r[kDirect ? 0 : i];
        kt_store_rows<kV>(tile, r, kr, col);
    }
}

/* The keys [kv_lo, kv_hi) of segment seg of a row block whose first and last rows sit at positions
 * pos_first and pos_last: the first row's window start to the last row's causal limit, cut into
 * nseg runs of whole tiles (only the last can end past its keys, at the causal limit, which the
 * mask holds); a segment past the keys is empty and writes l = 0. */
KT_DEV void kt_rows_keys(int pos_first, int pos_last, int window, int nseg, int seg, int &kv_lo, int &kv_hi)
{
    const int vis_lo = window > 0 && pos_first - window + 1 > 0 ? pos_first - window + 1 : 0;
    const int vis_hi = pos_last + 1;
    const int per = ((vis_hi - vis_lo + nseg - 1) / nseg + kBN - 1) / kBN * kBN;
    kv_lo = vis_lo + seg * per < vis_hi ? vis_lo + seg * per : vis_hi;
    kv_hi = kv_lo + per < vis_hi ? kv_lo + per : vis_hi;
}

/* 1 where, in every lane, accumulator element e + 1 holds element e's row at the next column and e's
 * column is even (an aligned pair of the output row) */
KT_LAYOUT_FN bool kt_pair_at(int e)
{
    if (e + 1 >= kt_acc_elems) return false;
    for (int l = 0; l < kt_frag_lanes; l++)
        if (kt_s_q(l, e + 1) != kt_s_q(l, e) || kt_s_n(l, e + 1) != kt_s_n(l, e) + 1 || kt_s_n(l, e) % 2 != 0) return false;
    return true;
}

} // namespace

KT_ATTN_KERNEL(KT_KERNEL_NAME, kThreads)(kt_attn_args a)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    unsigned short *const sm_k = (unsigned short *)sm_raw;   /* stage 0's tiles; a ring's next stages follow */
    unsigned short *const sm_v = (unsigned short *)(sm_raw + kKVBytes);
    float *const sm_s = (float *)(sm_raw + kSlabOffset);
    unsigned short *const sm_q = (unsigned short *)(sm_raw + kQOffset);
    /* a launch that provides less LDS than the layout needs writes nothing (the check fails) */
    if (!kt_dynamic_shared_fits(kSmemBytes)) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), warp = kt_wave_id();
    const int g = a.num_heads / a.num_kv_heads;
    const kt_gdiv gd = kt_gdiv_make(g);
    const int seq = kt_block_id_y(), seg = kt_block_id_z(), nseg = a.num_segments;
    /* kv head fastest, then row blocks last-first: the blocks that see the most keys, of every
     * head, start first (head-major order left one head's longest blocks for the end) */
    const int row_blocks = kt_grid_blocks_x() / a.num_kv_heads;   /* blocks sharing a kv head */
    const int kvh = kt_block_id_x() % a.num_kv_heads;
    const int row0 = (row_blocks - 1 - kt_block_id_x() / a.num_kv_heads) * kBM;
    const int *bt = a.block_table + (long long)seq * a.bt_stride;
    const unsigned magic = kt_block_magic(a.block_size);
    {
        /* the first tile's table line, prefetched beside seq_lens' load as if the sequence were the
         * batch's longest (decode.hip's kt_warm_table: the speculative rows' streams pay the
         * chain seq_lens -> block table -> cache once a launch) */
        const int rows_g = g * a.max_query_len, ctx_g = a.max_seq_len - a.max_query_len;
        if (row0 < rows_g) {
            const int last_g = (row0 + kBM < rows_g ? row0 + kBM : rows_g) - 1;
            int lo_g, hi_g;
            kt_rows_keys(ctx_g + kt_row_tok(gd, row0), ctx_g + kt_row_tok(gd, last_g), a.window, nseg, seg, lo_g, hi_g);
            if (lo_g < hi_g) kt_prefetch(bt + kt_blk_of(lo_g, magic));
        }
    }
    const int q0 = a.query_start_loc[seq];
    const int qlen = a.query_start_loc[seq + 1] - q0;
    const int rows = g * qlen;
    const int ctx = a.seq_lens[seq] - qlen;
    /* a shorter sequence's surplus block, a segment past the launch's count (uniform) */
    if (qlen <= 0 || row0 >= rows || seg >= nseg) return;
    const int last = (row0 + kBM < rows ? row0 + kBM : rows) - 1;
    const int pos_first = ctx + kt_row_tok(gd, row0), pos_last = ctx + kt_row_tok(gd, last);
    int kv_lo, kv_hi;
    kt_rows_keys(pos_first, pos_last, a.window, nseg, seg, kv_lo, kv_hi);
    /* the warp's first row in the block and first d column (its d-slice: Q's k, O's n) */
    const int wd = warp % kWD, wrow = (warp / kWD) * kMW * 16, dcol = wd * kDS * 16;
    const float neg_inf = kt_neg_inf();
    const bool capped = a.softcap > 0.0f;
    /* scores in log2 units; with a cap, the cap applies to the natural-log score first, and the
     * capped scores are already in log2 units (exp_scale 1) */
    const float score_scale = a.scale * a.k_scale * (capped ? 1.0f : kLog2e);
    const float exp_scale = capped ? 1.0f : score_scale;

    /* the thread's keys and column of every tile; the first K tile's copy flies while Q is staged */
    const int kr = tid / kTK, col = (tid % kTK) * kChunkElems;
    constexpr long long kEsz = KT_KV8 ? 1 : 2;
    const unsigned char *kbase = (const unsigned char *)a.k_cache + ((long long)kvh * a.k_stride_head + col) * kEsz;
    const unsigned char *vbase = (const unsigned char *)a.v_cache + ((long long)kvh * a.v_stride_head + col) * kEsz;
    kt_stage kst, vst;
    kt_srcs ksrc, vsrc;   /* of the next copies */
    kt_pages pages;   /* ST 1: of the tile being loaded, its K issued, its V next; a ring: of the next
                       * copies' tile */
    const unsigned k_lds = kt_lds_addr(sm_k + kr * kLdK + col), v_lds = kt_lds_addr(sm_v + kr * kLdK + col);
    const int k_sb = (int)a.k_stride_block, v_sb = (int)a.v_stride_block;
    if (kv_lo < kv_hi) {
        kt_find_pages(pages, bt, a.block_size, magic, kv_lo, kr, kv_hi);
        if constexpr (kRing) {
            /* the first ST - 1 tiles, K and V, a group each; then the pages of the tile after */
#pragma unroll
            for (int t = 0; t < kST - 1; t++) {
                kt_stage_srcs(ksrc, kbase, pages, a.block_size, magic, kv_lo + t * kBN, kr, kv_hi, k_sb, a.k_stride_slot);
                kt_stage_srcs(vsrc, vbase, pages, a.block_size, magic, kv_lo + t * kBN, kr, kv_hi, v_sb, a.v_stride_slot);
                kt_stage_issue(kst, k_lds + t * kStageBytes, ksrc);
                kt_stage_issue(vst, v_lds + t * kStageBytes, vsrc);
                kt_find_pages(pages, bt, a.block_size, magic, kv_lo + (t + 1) * kBN, kr, kv_hi);
            }
        } else {
            kt_stage_srcs(ksrc, kbase, pages, a.block_size, magic, kv_lo, kr, kv_hi, k_sb, a.k_stride_slot);
            kt_stage_issue(kst, k_lds, ksrc);
        }
    }

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
                v = kt_ldg16(q + (long long)(q0 + kt_row_tok(gd, rg)) * a.q_stride_tok + (long long)(kvh * g + kt_row_head(gd, rg)) * a.q_stride_head + col);
            kt_sts16(sm_q + r * kLdQ + col, v);
        }
    }
    kt_barrier();
    /* QL 0: Q's fragments held for the whole loop (the stage is V's and the slabs' after the
     * loop's first barrier); QL 1 reads them from LDS each tile */
    kt_frag_a qf[kQL ? 1 : kMW][kQL ? 1 : kDS];
    if (!kQL) {
#pragma unroll
        for (int mt = 0; mt < kMW; mt++)
#pragma unroll
            for (int kk = 0; kk < kDS; kk++)
                kt_load_a(qf[kQL ? 0 : mt][kQL ? 0 : kk], sm_q + (wrow + mt * 16) * kLdQ + dcol + kk * 16, kLdQ, lane);
    }

    /* per row (one element index of each class, rows.h): running max and sum in log2 units */
    float m[kMW][kt_acc_elems], l[kMW][kt_acc_elems];
    kt_acc o[kMW][kDS];
#pragma unroll
    for (int mt = 0; mt < kMW; mt++) {
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) {
            const int rg = row0 + wrow + mt * 16 + kt_s_q(lane, i);
            const bool sink = a.sinks && rg < rows && nseg == 1;   /* split: the reduce adds it */
            m[mt][i] = sink ? a.sinks[kvh * g + kt_row_head(gd, rg)] * kLog2e : neg_inf;
            /* the sink's term, once a row: in the first of the lanes that share it */
            l[mt][i] = sink && (lane & kRowBits) == 0 ? 1.0f : 0.0f;
        }
#pragma unroll
        for (int dt = 0; dt < kDS; dt++) kt_acc_zero(o[mt][dt]);
    }

    int use = 0, fill = kST - 1;   /* a ring's stages: this tile's, and the copy's issued in it */
    for (int j0 = kv_lo; j0 < kv_hi; j0 += kBN) {
        const unsigned short *const kt_tile = sm_k + use * (kStageBytes / 2), *const vt_tile = sm_v + use * (kStageBytes / 2);
        if constexpr (kRing) {
            /* this thread's copies of the tile, then everyone's; every warp is done with the
             * previous tile, whose stage the copy of tile j0 + ST - 1 now fills (QL 0: the last
             * stage held Q until this barrier of the first tile) */
            /* kEager: the next copies' sources (their pages were read a tile ago) and the pages
             * after, before the barrier: past it only the copies; else each cache's addresses
             * right before its copies, after the barrier */
            const int jn = j0 + (kST - 1) * kBN;
            if constexpr (kEager) {
                kt_stage_srcs(ksrc, kbase, pages, a.block_size, magic, jn, kr, kv_hi, k_sb, a.k_stride_slot);
                kt_stage_srcs(vsrc, vbase, pages, a.block_size, magic, jn, kr, kv_hi, v_sb, a.v_stride_slot);
                kt_find_pages(pages, bt, a.block_size, magic, jn + kBN, kr, kv_hi);
            }
            kt_copy_wait_pending<kRing ? 2 * (kST - 2) : 0>();
            kt_barrier();
            if constexpr (!kEager) kt_stage_srcs(ksrc, kbase, pages, a.block_size, magic, jn, kr, kv_hi, k_sb, a.k_stride_slot);
            kt_stage_issue(kst, k_lds + fill * kStageBytes, ksrc);
            if constexpr (!kEager) kt_stage_srcs(vsrc, vbase, pages, a.block_size, magic, jn, kr, kv_hi, v_sb, a.v_stride_slot);
            kt_stage_issue(vst, v_lds + fill * kStageBytes, vsrc);
            if constexpr (!kEager) kt_find_pages(pages, bt, a.block_size, magic, jn + kBN, kr, kv_hi);
        } else {
            /* 1. K in LDS; every warp is done with the previous V (and QL 0's Q stage) */
            kt_stage_commit<false>(kst, sm_k, kr, col);
            if constexpr (kEager) kt_stage_srcs(vsrc, vbase, pages, a.block_size, magic, j0, kr, kv_hi, v_sb, a.v_stride_slot);
            kt_barrier();
            /* 2. V's copy (its sources before the barrier as the ring's, kEager only): the next
             * tile's pages first (AMD counts loads in order: waiting for them must not wait for V) */
            if constexpr (!kEager) kt_stage_srcs(vsrc, vbase, pages, a.block_size, magic, j0, kr, kv_hi, v_sb, a.v_stride_slot);
            kt_find_pages(pages, bt, a.block_size, magic, j0 + kBN, kr, kv_hi);
            kt_stage_issue(vst, v_lds, vsrc);
        }

        /* scores: every warp its rows against the whole tile, over its d-slice */
        kt_acc s[kMW][kNT];
#pragma unroll
        for (int mt = 0; mt < kMW; mt++)
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) kt_acc_zero(s[mt][nt]);
#pragma unroll
        for (int kk = 0; kk < kDS; kk++) {
            kt_frag_a qt[kMW];
#pragma unroll
            for (int mt = 0; mt < kMW; mt++) {
                if (kQL) kt_load_a(qt[mt], sm_q + (wrow + mt * 16) * kLdQ + dcol + kk * 16, kLdQ, lane);
                else qt[mt] = qf[kQL ? 0 : mt][kQL ? 0 : kk];
            }
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) {
                kt_frag_b fb;
                kt_load_b(fb, kt_tile + nt * 16 * kLdK + dcol + kk * 16, kLdK, lane);
#pragma unroll
                for (int mt = 0; mt < kMW; mt++) kt_score_mma<kt_elem>(s[mt][nt], qt[mt], fb);
            }
        }
        if (kWD > 1) {
            /* the d-slices' partial sums meet in LDS; every warp of a row group adds the slabs in
             * slice order, so the group's warps hold the same scores, bit for bit, and their
             * softmax statistics agree (each rescales its own O slice by them). The slabs were
             * last read before the previous tile's second barrier. */
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++) {
                        const int r = wrow + mt * 16 + kt_s_q(lane, i), c = nt * 16 + kt_s_n(lane, i);
                        sm_s[(wd * kBM + r) * kLdS + c] = kt_acc_get(s[mt][nt], i);
                    }
            kt_barrier();
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++) {
                        const int r = wrow + mt * 16 + kt_s_q(lane, i), c = nt * 16 + kt_s_n(lane, i);
                        float t = sm_s[r * kLdS + c];
#pragma unroll
                        for (int ds = 1; ds < kWD; ds++) t += sm_s[(ds * kBM + r) * kLdS + c];
                        kt_acc_set(s[mt][nt], i, t);
                    }
        }
        /* the cap and the mask are loops of their own behind uniform branches (a branch per
         * element would cut the softmax's chain into blocks the scheduler cannot interleave).
         * Uncapped scores stay raw: the scale (> 0) is folded into the exponent's fma, and a raw
         * maximum scaled is the scaled maximum */
        if (capped) {
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++)
                        kt_acc_set(s[mt][nt], i, a.softcap * kt_tanh(kt_acc_get(s[mt][nt], i) * score_scale / a.softcap) * kLog2e);
        }
        /* a tile every row of the warp sees whole needs no mask (warp-uniform) */
        const bool whole = row0 + wrow + kMW * 16 <= rows && j0 + kBN - 1 <= pos_first &&
                           (a.window <= 0 || pos_last - j0 < a.window);
        if (!whole) {
            /* a row's position (-1: a row past the sequence's, which sees nothing), recomputed
             * here rather than held across the loop: only the diagonal's tiles pay for it */
            int rpos[kMW][kt_acc_elems];
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++) {
                    const int rg = row0 + wrow + mt * 16 + kt_s_q(lane, i);
                    rpos[mt][i] = kt_rep(i) == i && rg < rows ? ctx + kt_row_tok(gd, rg) : -1;
                }
#pragma unroll
            for (int mt = 0; mt < kMW; mt++)
#pragma unroll
                for (int nt = 0; nt < kNT; nt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++) {
                        const int p = rpos[mt][kt_rep(i)], j = j0 + nt * 16 + kt_s_n(lane, i);
                        const bool seen = j <= p && (a.window <= 0 || p - j < a.window);
                        kt_acc_set(s[mt][nt], i, seen ? kt_acc_get(s[mt][nt], i) : neg_inf);
                    }
        }

        /* the online softmax, a row's elements of the lane first, then across its lanes; P into
         * P V's operand as it is made */
        kt_frag_a pf[kMW][kNT];
        bool moved = false;
#pragma unroll
        for (int mt = 0; mt < kMW; mt++) {
            float base[kt_acc_elems], alpha[kt_acc_elems], sum[kt_acc_elems];
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                if (kt_rep(i) != i) continue;
                float mx = neg_inf;
#pragma unroll
                for (int nt = 0; nt < kNT; nt++) mx = kt_fmax(mx, kt_class_reduce<true>(s[mt][nt], i));
                mx = kt_row_max(mx) * exp_scale;
                const float m_new = kt_fmax(m[mt][i], mx);
                base[i] = m_new == neg_inf ? 0.0f : m_new;   /* a row with nothing seen yet */
                alpha[i] = kt_exp2(m[mt][i] - base[i]);
                moved = moved || m_new != m[mt][i];
                m[mt][i] = m_new;
                sum[i] = 0.0f;
            }
#pragma unroll
            for (int nt = 0; nt < kNT; nt++) {
#pragma unroll
                for (int e = 0; e < kt_acc_elems; e++)
                    kt_acc_set(s[mt][nt], e, kt_exp2(kt_acc_get(s[mt][nt], e) * exp_scale - base[kt_rep(e)]));
#pragma unroll
                for (int i = 0; i < kt_acc_elems; i++)
                    if (kt_rep(i) == i) sum[i] += kt_class_reduce<false>(s[mt][nt], i);
                kt_p_frag<kt_pv_elem>(pf[mt][nt], s[mt][nt]);
            }
            /* each lane keeps its own share of a row's sum (alpha is the row's, the same in every
             * lane of it); the lanes meet once, after the loop */
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++)
                if (kt_rep(i) == i) l[mt][i] = l[mt][i] * alpha[i] + sum[i];
            /* O's rescale: kEager every tile, unconditionally (a vote and a branch around it cut
             * the tile into blocks, and P V's products cannot be scheduled into the softmax's
             * chain: the H200's SASS of d256, the tensor pipe idle over each softmax; the
             * multiplies have the FMA pipe to themselves); else only where some row of the warp
             * moved its maximum (past the first tiles, rarely; alpha is 1 elsewhere). moved is
             * the row tile's own. */
            if (kEager || kt_wave_any(moved)) {
#pragma unroll
                for (int dt = 0; dt < kDS; dt++)
#pragma unroll
                    for (int e = 0; e < kt_acc_elems; e++) kt_acc_set(o[mt][dt], e, kt_acc_get(o[mt][dt], e) * alpha[kt_rep(e)]);
            }
            moved = false;
        }

        if constexpr (!kRing) {
            /* 3. V in LDS; every warp is done with K (and the slabs) */
            kt_stage_commit<true>(vst, sm_v, kr, col);
            if constexpr (kEager) kt_stage_srcs(ksrc, kbase, pages, a.block_size, magic, j0 + kBN, kr, kv_hi, k_sb, a.k_stride_slot);
            kt_barrier();
            if constexpr (!kEager) kt_stage_srcs(ksrc, kbase, pages, a.block_size, magic, j0 + kBN, kr, kv_hi, k_sb, a.k_stride_slot);
            /* 4. the next K's copy in flight over P V (after the last tile too: it rereads the
             * last visible key, and no branch waits on it) */
            kt_stage_issue(kst, k_lds, ksrc);
        }
#pragma unroll
        for (int kk = 0; kk < kNT; kk++)
#pragma unroll
            for (int dt = 0; dt < kDS; dt++) {
                kt_frag_b fb;
                kt_load_v(fb, vt_tile + kk * 16 * kLdK + dcol + dt * 16, kLdK, lane);
#pragma unroll
                for (int mt = 0; mt < kMW; mt++) kt_pv_mma<kt_pv_elem>(o[mt][dt], pf[mt][kk], fb);
            }
        if constexpr (kRing) {
            use = use + 1 == kST ? 0 : use + 1;
            fill = fill + 1 == kST ? 0 : fill + 1;
        }
    }
    kt_copy_wait();   /* the copies issued past the last tile land before the block's LDS is gone */
    kt_grid_launch_dependents();   /* past the keys: a split's reduce may start its launch (as decode.hip) */

    /* unsplit: out = O * v_scale / l, rounded once; a row that saw nothing writes zeros. Split:
     * the segment's (m, l) and O * v_scale into the partials, which the reduce merges */
#pragma unroll
    for (int mt = 0; mt < kMW; mt++)
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            if (kt_rep(i) == i) l[mt][i] = kt_row_sum(l[mt][i]);
    if (nseg > 1) {
        float *const acc = a.partials + 2LL * a.num_tokens * a.num_heads * nseg;
#pragma unroll
        for (int mt = 0; mt < kMW; mt++)
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++) {
                const int rg = row0 + wrow + mt * 16 + kt_s_q(lane, e);
                if (rg >= rows) continue;
                const long long pr = ((long long)(q0 + kt_row_tok(gd, rg)) * a.num_heads + kvh * g + kt_row_head(gd, rg)) * nseg + seg;
                if (kt_rep(e) == e && (lane & kRowBits) == 0 && wd == 0) {
                    a.partials[pr * 2] = m[mt][e];
                    a.partials[pr * 2 + 1] = l[mt][e];
                }
#pragma unroll
                for (int dt = 0; dt < kDS; dt++)
                    acc[pr * kD + dcol + dt * 16 + kt_s_n(lane, e)] = kt_acc_get(o[mt][dt], e) * a.v_scale;
            }
        return;
    }
    if constexpr (kEager) {
        /* kEager: a row's address once (two rows a lane on NVIDIA, not one an element), and where
         * element e + 1 is element e's row at the next, odd column (kt_pair_at: NVIDIA's, CDNA's
         * and gfx12's accumulators) the two rounded together and stored as one word, when out and
         * its strides keep words aligned (uniform). An element at a time, the epilogue issued
         * ~3,200 instructions a warp at d256 on the H200, ~6% of a 4K-token block's. The eager
         * form is built for AMD alike (compiled, not timed there). */
        const bool words = (((unsigned long long)a.out & 3) | (a.o_stride_tok & 1) | (a.o_stride_head & 1)) == 0;
#pragma unroll
        for (int mt = 0; mt < kMW; mt++)
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) {
                /* row class i: its address and scale once, then its elements (one row live at a time) */
                if (kt_rep(i) != i) continue;
                const int rg = row0 + wrow + mt * 16 + kt_s_q(lane, i);
                if (rg >= rows) continue;
                unsigned short *const rp = (unsigned short *)a.out + (long long)(q0 + kt_row_tok(gd, rg)) * a.o_stride_tok +
                                           (long long)(kvh * g + kt_row_head(gd, rg)) * a.o_stride_head;
                const float inv = l[mt][i] > 0.0f ? a.v_scale / l[mt][i] : 0.0f;
#pragma unroll
                for (int dt = 0; dt < kDS; dt++)
#pragma unroll
                    for (int e = 0; e < kt_acc_elems; e++) {
                        if (kt_rep(e) != i) continue;
                        const int d = dcol + dt * 16 + kt_s_n(lane, e);
                        const float v = kt_acc_get(o[mt][dt], e) * inv;
                        if (kt_pair_at(e)) {
                            const float w = kt_acc_get(o[mt][dt], (e + 1) % kt_acc_elems) * inv;
                            if (words) {
                                *(unsigned *)(rp + d) = kt_round2<kt_elem>(v, w);
                                continue;
                            }
                        }
                        if (e > 0 && kt_pair_at(e - 1) && words) continue;   /* stored with e - 1 */
                        rp[d] = kt_from_float<kt_elem>(v).bits;
                    }
            }
    } else {
        /* an element at a time: the row-at-a-time form above spills at the lane's 255 registers
         * (sm_90a d128 BM128 BN64 NW4 QL1: 8 bytes) */
#pragma unroll
        for (int mt = 0; mt < kMW; mt++) {
            float inv[kt_acc_elems];
#pragma unroll
            for (int i = 0; i < kt_acc_elems; i++) inv[i] = l[mt][kt_rep(i)] > 0.0f ? a.v_scale / l[mt][kt_rep(i)] : 0.0f;
#pragma unroll
            for (int dt = 0; dt < kDS; dt++)
#pragma unroll
                for (int e = 0; e < kt_acc_elems; e++) {
                    const int rg = row0 + wrow + mt * 16 + kt_s_q(lane, e), d = dcol + dt * 16 + kt_s_n(lane, e);
                    if (rg >= rows) continue;
                    const int tok = q0 + kt_row_tok(gd, rg), h = kvh * g + kt_row_head(gd, rg);
                    const kt_elem out = kt_from_float<kt_elem>(kt_acc_get(o[mt][dt], e) * inv[e]);
                    ((unsigned short *)a.out)[(long long)tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
                }
        }
    }
}

#include "attn/reduce.h"
