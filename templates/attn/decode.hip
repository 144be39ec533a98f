/* decode.hip: paged attention for decode and speculative verify (1 to a few query rows per
 * sequence), split-KV. ABI and semantics: templates/abi/attn.h; launch geometry, the segment law
 * and the workspace: runtime/op_attn.c. The recipe's axes (decode.lua) read as
 *   D       head size the kernel is compiled for,
 *   MT      16-row M tiles: the GQA group's query heads times the sequence's query rows are the
 *           rows of one matrix (g * q <= 16 * MT), so each K/V tile is read once per kv head,
 *   BN      keys a KV tile holds,
 *   NW      warps (waves) of the block,
 *   SEGMAX  the most split-KV segments a launch may be given (the runtime's scratch ceiling;
 *           the code does not depend on it),
 *   RE      1: Q's fragments kept in registers across the KV loop (kQRegs below),
 *   KD      1: K read from the cache straight into S's B fragments, never through LDS (kKD below),
 *   ST      tiles of a ring in LDS that K and V are copied into with no registers held (kRing
 *           below); 1: no ring,
 *   PF      1 (KD 1, MT 1, 16-bit caches, NVIDIA): the next-but-one tile prefetched into L2 (below)
 *   F8      1: S = Q K^T in the target's e4m3 matrix instruction, K as an fp8 cache holds it
 *           (kF8 below; bf16 q, fp8 cache, KD 0, no ring).
 *
 * Block (x, y, z) = (kv head x row block, sequence, segment): a kv head's g * q rows take
 * ceil(g * q / (16 * MT)) blocks (one when they fit; each block then reads the head's K and V,
 * the second time mostly from L2). Decode is a stream of the cache's bytes with little arithmetic
 * on them (the seed's lesson: such kernels are bound by the instructions they issue a byte and by
 * the bytes they keep in flight), so the loop is built around the loads:
 *   - every K and V load of the next tile is issued as soon as its registers are free (K right
 *     after the current K is stored to LDS, V after the current V), so a tile's loads are in
 *     flight over a whole tile of work;
 *   - a thread loads whole 16-byte pieces of a few keys' rows (a wave reads whole rows: the loads
 *     coalesce), K and V the same keys, addressed in aligned 16-key groups (attn/kv.h): a
 *     group's block-table entry is read once a tile, a tile ahead, and a key adds only its
 *     offset in the group to the group's page base;
 *   - K and V go to LDS as the cache stores them, [key][d], with 16-byte stores: S = Q K^T takes K
 *     as B = W[n = key][k = d] (kt_load_b), O = P V takes V as a [k][n] tile (kt_load_b_kn);
 *     with KD, K skips LDS (below);
 *   - the score tiles split over every warp, along d when there are fewer tiles than warps; the
 *     partial sums meet in LDS in a fixed order in the softmax, which also masks and soft-caps.
 * Per tile: store K, issue the next K; S partials; store V, issue the next V; online softmax (a few
 * threads a row: max, rescale factor, sum; P rounded to P V's operand type into LDS); each warp
 * rescales its O accumulators and adds P V for its columns of the head. fp8 e4m3 caches are
 * converted as they are stored, K to S's type and V to f16, the type P V runs in wherever the
 * cache is fp8 (attn/dtype.h; exact: every e4m3 value is a 16-bit one; the scales are applied to
 * the scores and the output instead); where e4m3 -> f16 is one instruction (NVIDIA) the register
 * form stores K's and V's bytes raw and converts them as S and P V read them (KR, below; O's
 * columns relabelled within a 16-d group). With one segment the block writes
 * out = O / l; with several it writes fp32 partials {m, l, O} and kt_..._reduce merges them in a
 * fixed order.
 *
 * KD: a score tile's d range is contracted by one warp, so every K element is used by exactly one
 * lane pair of one warp: each warp loads its own keys x d range of K from the cache straight into
 * the prelude's direct-fragment layout (docs/templates.md: a lane reads 16-byte chunks of rows at
 * relabelled k; Q's A fragments take the same relabelling, so the product is unchanged), and K
 * never passes through LDS. It halves the tile's LDS traffic (ncu on the LDS form: the L1/shared
 * pipe the busiest unit) and two of its four barriers; an fp8 warp loads 8 bytes a chunk and
 * converts in registers. A warp owns one key tile (16 keys) x one d range for every M tile, so
 * each K fragment serves all of the block's M tiles (speculative rows cost Q fragments, not K
 * reads). Q's fragments are read from q straight into registers once.
 *
 * The ring (ST > 1, KD 0, targets with a global -> LDS copy: arch/copy_ops.h): every form above
 * keeps as many bytes in flight as its registers hold, and the H200's sweeps put every one of them
 * at ~64 KB an SM (bf16) and 32-48 KB (fp8) at ~2 us of loaded latency: 80-85% of the read
 * ceiling at batch 8. The ring copies tile j + ST - 1 while tile j is computed, holding nothing
 * in registers, so the bytes in flight are bounded by LDS instead. A 16-bit tile is used where it
 * lands (S reads K, P V reads V, from the stage), and so is an fp8 one where KR reads raw bytes;
 * elsewhere an fp8 one is converted by the thread that copied it (its own copies need no barrier)
 * into the [key][d] tile, as the register form without KR stores it. The stages rotate: the
 * barrier that opens a tile also closes the previous tile's P V, whose stage the next copy
 * overwrites.
 *
 * The KV loop starts at the sliding window's lower bound (keys before it are never loaded), and
 * the sequence's visible range [lo, seq_len) is cut into num_segments equal spans rounded up to
 * whole tiles: a short sequence leaves trailing segments empty (they write m = -inf, l = 0). */
#include "abi/attn.h"
#include "arch/attn_ops.h"
#include "arch/copy_ops.h"
#include "arch/prefill_ops.h"   /* kt_fmax; kt_pack2 on NVIDIA */

#include "attn/dtype.h"

namespace {

constexpr int kD = KT_D;
constexpr int kM = 16 * KT_MT;                       /* rows of the block's matrix */
constexpr int kBN = KT_BN;
constexpr int kThreads = KT_NW * KT_WAVE;
constexpr int kPad = 8;                              /* 16 bytes: aligned rows, staggered banks */
constexpr int kLdQ = kD + kPad;                      /* pitch of Q, K and V rows in LDS (elements) */
constexpr int kLdK = kLdQ;                           /* the [key][d] tile's (attn/kv.h) */
constexpr int kLdP = kBN + kPad;                     /* pitch of P */
/* Pitch of the fp32 partial scores: 8 words past the tile. ncu on the KD kernels counted 31-42%
 * of all shared wavefronts as bank-conflict replays. With BN + 1 the softmax's reads (8 lanes a
 * row, 4 rows a warp) hit banks r + c: up to 4-way; the mma.sync accumulator's writes (rows g,
 * columns 2t) g + 2t: up to 4-way. With BN + 8 the reads are conflict-free and the writes 2-way
 * (rows g and g + 4 share banks). */
constexpr int kLdS = kBN + 8;
/* Cache elements one 16-byte load brings: 8 16-bit elements, or 16 fp8 ones. */
constexpr int kChunkElems = KT_KV8 ? 16 : 8;
constexpr int kPerKey = kD / kChunkElems;            /* loads a key's row takes */
constexpr int kKeysPass = kThreads / kPerKey;        /* keys the block loads in one pass */
constexpr int kChunks = kBN / kKeysPass;             /* keys a thread loads a tile (K and V each) */
constexpr int kQChunks = (kM * kD / 8 + kThreads - 1) / kThreads;
constexpr int kSTiles = KT_MT * (kBN / 16);          /* 16x16 score tiles */
/* PF (KD only): each lane also prefetches a line of the next-but-one tile into L2 (kt_kd_prefetch);
 * a variant of its own, not a runtime test, because the code costs registers under the OB caps
 * even when it does not run. */
#ifndef KT_PF
#define KT_PF 0
#endif
/* F8: the e4m3 cache's K bytes go to LDS as they are and S runs in the target's e4m3 matrix
 * instruction (arch/attn_ops.h kt_mma<kt_e4m3x2>: 32 k a 16x16 tile, loaded as 16 16-bit
 * elements), so K is never converted: the register form's K conversions (8 instructions and a
 * second 16-byte store a chunk) and half its LDS bytes go. Q meets it as two e4m3 terms a row
 * (kt_q_split): x = q / s_r with s_r a power of two, hi = e4m3(x), lo = e4m3(x - hi), hi + lo = x
 * exactly for q's 8 significant bits from 2^-9 of the row's largest, within 2^-17 of it below
 * (tests/unit/test_q_split.c); S = s_r (hi K + lo K), two instructions a k step as one 16-bit one
 * was, over half the steps. */
#ifndef KT_F8
#define KT_F8 0
#endif
constexpr bool kF8 = KT_F8 != 0;
constexpr int kSK = kF8 ? kD / 32 : kD / 16;         /* S's k steps over the head */
constexpr int kQTerms = kF8 ? 2 : 1;                 /* Q fragments a k step */
/* warps a score tile's d range splits over (a power of two dividing kSK) */
constexpr int kKSplit = KT_NW / kSTiles < 1 ? 1 : (KT_NW / kSTiles > kSK ? kSK : KT_NW / kSTiles);
constexpr int kKSteps = kSK / kKSplit;
constexpr int kOTiles = KT_MT * (kD / 16) / KT_NW;   /* output tiles a warp owns */
/* LDS bandwidth is what the first rebuilt kernel ran out of (ncu, d256 BN32 8 warps: L1/shared
 * pipe 78% busy, short scoreboard the main stall), so operands a warp reuses can stay in
 * registers (RE 1): its Q fragments when it owns one score tile's d range throughout (kQRegs;
 * P's fragments are read once a key step and M tile in kt_pv). It is an axis because the
 * registers can cost a resident block (sm_90a, d256 MT1 BN32 8 warps: 125 -> 138, one block an
 * SM instead of two), which the loads in flight need more, or nothing (MT2 at 8 warps is at one
 * block either way). KD always holds Q in registers (the recipe offers it with RE 1 only). */
constexpr bool kKD = KT_KD != 0;
/* A KD kernel over a 16-bit cache with 16-key tiles prefetches its segment's tiles 1 and 2 into L2
 * as soon as their pages are known (where the target has an L2 prefetch): its first loads
 * otherwise wait in turn, the second tile's issued only when the first has arrived, where later
 * tiles find one in flight. The H200 (bench/NOTES.md nineteenth session): BN16 NW4, the batch-8
 * picks at d256, 0.5-3% faster and no row slower past the runs' spread; with 32-key tiles level
 * to -1% at batch 8 and up to 4% slower at batch 1; over fp8 caches and 64-key tiles the addresses
 * made sm_90a variants spill. PF prefetches every tile, the first two among them. */
constexpr bool kPfStart = kKD && kt_has_l2_prefetch && !KT_KV8 && kBN == 16;
constexpr bool kPrefetch = KT_PF || kPfStart;   /* the KD loop holds the prefetches' bases */
constexpr bool kQRegs = !kKD && KT_RE != 0 && kSTiles * kKSplit <= KT_NW && kQTerms * kKSteps <= 8;
/* P V: where a warp owns the same d columns of every M tile, each V fragment it reads serves them
 * all (warp + i * NW is M tile i / kDtW, column tile warp + (i % kDtW) * NW) */
constexpr bool kVReuse = (kD / 16) % KT_NW == 0;
constexpr int kDtW = kVReuse ? (kD / 16) / KT_NW : 1;
/* KD's work split: warp w contracts key tile w % kNT over d range w / kNT (kKdSplit ranges of
 * kKdSpans direct spans), for every M tile */
constexpr int kNT = kBN / 16;
constexpr int kKdWant = KT_NW / kNT < 1 ? 1 : KT_NW / kNT;
constexpr int kKdSplit = kKdWant > kD / kt_direct_span ? kD / kt_direct_span : kKdWant;
constexpr int kKdSpans = kD / kKdSplit / kt_direct_span;
constexpr int kKdChunks = kKdSpans * kt_direct_chunks;   /* K chunks a lane holds a tile */
constexpr int kParts = kKD ? kKdSplit : kKSplit;          /* partial-score slabs */
static_assert(!kKD || (kNT * kKdSplit == KT_NW && kKdSpans * kKdSplit * kt_direct_span == kD),
              "KD: one key tile x d range a warp, every warp");
/* the ring: kST stages of K rows then V rows, each row the cache's d elements and 16 bytes (a
 * 16-bit row is then kLdQ elements, the [key][d] tile's pitch) */
constexpr int kST = KT_ST;
constexpr bool kRing = kST > 1;
constexpr int kEszKV = KT_KV8 ? 1 : 2;
constexpr int kLdR = kD * kEszKV + 16;
constexpr int kStageBytes = 2 * kBN * kLdR;
constexpr int kRingV = kBN * kLdR;                   /* V's rows in a stage, past K's */
static_assert(!kRing || (KT_ASYNC_COPY && !kKD), "a ring needs a global -> LDS copy, and KD 0");
/* the softmax: kTpr threads a row, adjacent lanes of one wave, kCpt columns each */
constexpr int kTprWant = kThreads / kM < 1 ? 1 : kThreads / kM;
constexpr int kTpr = kTprWant > KT_WAVE ? KT_WAVE : (kTprWant > kBN ? kBN : kTprWant);
constexpr int kRowsPass = kThreads / kTpr;
constexpr int kCpt = kBN / kTpr;
static_assert(kD % 16 == 0 && kBN % 16 == 0, "whole 16x16 tiles");
static_assert(kThreads % kPerKey == 0 && kKeysPass >= 1 && kBN % kKeysPass == 0, "whole keys a thread, the tile in whole passes");
static_assert((kKSplit & (kKSplit - 1)) == 0 && kKSteps * kKSplit == kSK, "the d range splits evenly");
static_assert(!kF8 || (KT_KV8 && KT_ELEM_IS_BF16 && !kKD && !kRing && KT_F8_MMA),
              "F8: a bf16 query over an fp8 cache, the register form, a target with an OCP e4m3 matrix instruction");
static_assert(kOTiles >= 1 && kOTiles * KT_NW == KT_MT * (kD / 16), "output tiles split evenly over the warps");
static_assert((kTpr & (kTpr - 1)) == 0 && kRowsPass * kTpr == kThreads && kCpt * kTpr == kBN, "a power-of-two thread group a row");

/* S's operand type (attn/kv.h's KT_S_F16): q's, but f16 for an fp8 cache where e4m3 -> f16 is one
 * instruction a pair and e4m3 -> bf16 five: Q is converted once a block as it is loaded (exact
 * within f16's range, clamped to +-65504 past it), and K's conversion a pair drops from five
 * instructions to one (the H200's fp8 d256 kernels read at half the ceiling, bound by the
 * instructions a key). KD converts its register-held Q fragments' words the same way. */
#define KT_S_F16 (KT_KV8 && KT_E4M3_F16_ONE_OP && KT_ELEM_IS_BF16 && !KT_F8)
/* KR (the register form over an fp8 cache where e4m3 -> f16 is one instruction: NVIDIA): K's bytes
 * go to LDS as the cache holds them, as F8's, and S's B fragments are read from them, a 16-key x
 * 32-d chunk in one ldmatrix (as 16-bit elements), and converted where they are used: a lane's
 * word holds d 4t..4t+3 of one key, whose two f16 pairs serve two k steps (step A the low pair,
 * step B the high one; Q's A fragments are read relabelled to match: attn/kr.h). The store side's
 * two 16-byte stores and four selects a chunk (the converted halves swapped against bank
 * conflicts) become one raw store, and K's fragment reads halve; the conversions are the same
 * count. With a ring, S and P V read the stage's raw rows where they landed (kRingDirect): no
 * register, store or barrier of a conversion pass. */
#define KT_K_RAW16 (KT_KV8 && KT_E4M3_F16_ONE_OP && !KT_F8 && !KT_KD)
#define KT_K_RAW (KT_F8 || KT_K_RAW16)   /* attn/kv.h: K's chunks stored as they are */
/* and V's: P V's B fragments read from its raw bytes (arch/attn_ops.h kt_load_v8_kn: a 16-d group's
 * even d as the first n tile, its odd d as the second), so O's columns within a 16-d group are
 * relabelled (kt_o_col) and the epilogue writes them back in place */
#define KT_V_RAW KT_K_RAW16
/* a ring's stage is the tile S and P V read (16-bit, or fp8 read raw), not copied on to sm.kv;
 * kLdT is the pitch, in 16-bit elements, of the K and V tiles they read */
constexpr bool kRingDirect = kRing && (!KT_KV8 || KT_K_RAW16);
constexpr int kLdT = kRingDirect ? kLdR / 2 : kLdQ;
static_assert(kLdR % 16 == 0, "16-byte aligned ring rows (ldmatrix, cp.async)");
#if KT_F8
typedef kt_e4m3x2 kt_s_elem;
#elif KT_S_F16
typedef kt_f16 kt_s_elem;
#else
typedef kt_elem kt_s_elem;
#endif

#define KT_KV_RING 1
#define KT_KV_GROUPS 1
#include "attn/kv.h"
#include "attn/kr.h"

/* The per-block facts every phase reads. */
struct kt_seq {
    int q0, qlen, ctx;           /* first query token, query rows, cached context before them */
    int kv_lo, kv_hi;            /* this segment's keys */
    int kvh;
    int row0;                    /* the block's first row of the kv head's g * qlen rows */
    kt_gdiv gd;                  /* row -> (token, head of the group) */
};

struct alignas(16) kt_smem {
    unsigned short q[kKD ? 8 : kM * kLdQ];   /* KD reads Q into registers from global */
    unsigned short kv[kRingDirect ? 8 : kBN * kLdQ];   /* K, then V, of the current tile (V alone with
                                                      * KD; kRingDirect: the ring's stages serve) */
    float s[kParts * kM * kLdS];       /* the score tiles' partial sums, one slab a d range */
    unsigned short p[kM * kLdP];
    float m[kM], l[kM], alpha[kM];
};
/* LDS given at launch (decode.lua's smem_bytes): kt_smem, then the ring */
constexpr int kSmemHead = ((int)sizeof(kt_smem) + 15) / 16 * 16;
constexpr int kSmemBytes = kSmemHead + (kRing ? kST * kStageBytes : 0);

/* Q rows of the block in S's operand type: row r is query token r / g of the sequence, head
 * kvh * g + r % g; rows past the sequence's query rows are zeros. */
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
            const long long off = (long long)(s.q0 + kt_row_tok(s.gd, rg)) * a.q_stride_tok + (long long)(s.kvh * g + kt_row_head(s.gd, rg)) * a.q_stride_head + col;
            v = kt_ldg16(q + off);
#if KT_S_F16
            v = kt_bf16x8_to_f16x8(v);
#endif
        }
        kt_sts16(sm.q + r * kLdQ + col, v);
    }
}

/* F8: the row scales a thread's softmax rows take (rows r0 + tid / kTpr, r0 a multiple of kRowsPass) */
constexpr int kQsr = kF8 ? (kM + kRowsPass - 1) / kRowsPass : 1;

/* F8: Q's rows (bf16 in LDS, kt_load_q's) rewritten as two e4m3 planes, hi at byte 0 of a row and
 * lo at byte kD + 16 (both 16-byte aligned, inside the row's 2 kD + 16 bytes), x = q / s_r with
 * s_r = 2^(E - 7), E the exponent of the row's largest |q| (x's largest in [128, 256), under e4m3's
 * 448). A row's kTpr threads (the softmax's) read their columns, agree on the largest, and write
 * after a barrier (the planes overlap the row they read); each keeps s_r for its softmax rows. */
#if KT_F8
KT_DEV void kt_q_split(kt_smem &sm, float (&qsr)[kQsr], int tid)
{
    constexpr int kPer = kD / kTpr;                  /* columns a thread takes, an even count */
    static_assert(kPer % 2 == 0 && kPer * kTpr == kD, "whole pairs a thread");
    kt_barrier();   /* Q in LDS */
#pragma unroll
    for (int r0 = 0, pass = 0; r0 < kM; r0 += kRowsPass, pass++) {
        const bool live = r0 + tid / kTpr < kM;
        const int r = live ? r0 + tid / kTpr : kM - 1, c0 = (tid % kTpr) * kPer;
        unsigned short *row = sm.q + r * kLdQ;
        float x[kPer], amax = 0.0f;
#pragma unroll
        for (int u = 0; u < kPer; u++) {
            x[u] = kt_to_float(kt_bf16{row[c0 + u]});
            amax = kt_fmax(amax, x[u] < 0.0f ? -x[u] : x[u]);
        }
#pragma unroll
        for (int w = kTpr / 2; w >= 1; w /= 2) amax = kt_fmax(amax, kt_shfl_xor(amax, w));
        /* 2^(E - 7) and its inverse from amax's exponent field (a zero row: 1); E - 7 > -127 for
         * every normal bf16, and 7 - E < 128 for every one from 2^-120 up */
        const int e = (int)((kt_float_bits(amax) >> 23) & 0xffu);
        const bool zero = amax == 0.0f || e <= 7;
        const float s = zero ? 1.0f : kt_bits_float((unsigned)(e - 7) << 23);
        const float inv = zero ? 1.0f : kt_bits_float((unsigned)(254 - e + 7) << 23);
        qsr[pass] = s;
        unsigned short hi[kPer / 2], lo[kPer / 2];
#pragma unroll
        for (int j = 0; j < kPer / 2; j++) {
            const float a0 = x[2 * j] * inv, a1 = x[2 * j + 1] * inv;
            const unsigned h = kt_f32x2_to_e4m3x2(a0, a1);
            hi[j] = (unsigned short)h;
            lo[j] = (unsigned short)kt_f32x2_to_e4m3x2(a0 - kt_e4m3_to_f32(h & 0xffu), a1 - kt_e4m3_to_f32(h >> 8));
        }
        kt_barrier();   /* every thread has read its rows of this pass */
        if (live) {
#pragma unroll
            for (int j = 0; j < kPer / 2; j++) {
                row[c0 / 2 + j] = hi[j];
                row[kD / 2 + 8 + c0 / 2 + j] = lo[j];
            }
        }
    }
}
#endif

/* ---- KD: K straight into direct fragments ---- */
#if KT_KV8
typedef kt_v8 kt_kd_chunk;                 /* 8 cache bytes, converted at use: half the registers */
KT_DEV kt_kd_chunk kt_kd_load(const unsigned char *p) { return kt_ldg8_stream(p); }
KT_DEV kt_v16 kt_kd_elems(kt_kd_chunk c)
{
    const unsigned x = kt_v8_word(c, 0), y = kt_v8_word(c, 1);
    return kt_v16_make(kt_kv8_pair(x & 0xffffu), kt_kv8_pair(x >> 16), kt_kv8_pair(y & 0xffffu), kt_kv8_pair(y >> 16));
}
#else
typedef kt_v16 kt_kd_chunk;
KT_DEV kt_kd_chunk kt_kd_load(const unsigned char *p) { return kt_ldg16_stream(p); }
KT_DEV kt_v16 kt_kd_elems(kt_kd_chunk c) { return c; }
#endif

/* The lane's K rows of its key tile nt (rows kt_direct_row(lane, c) of the 16): one 16-key group
 * (kv.h), its page held from lookup to load as kt_groups holds V's. */
struct kt_kgroup { int page, slot0; };

KT_DEV void kt_kd_find(kt_kgroup &p, const int *bt, int bs, unsigned magic, int j0, int nt, int kv_hi)
{
    kt_find_group(p.page, p.slot0, bt, bs, magic, j0 + nt * 16, kv_hi);
}

/* chunk sp * kt_direct_chunks + c: row c's k (relabelled) kt_direct_k(lane, c) of span sp of the
 * warp's d range, where k's column points; rows at or past kv_hi read the group's first key */
KT_DEV void kt_kd_issue(kt_kd_chunk (&r)[kKdChunks], const kt_kv_src &k, const kt_kgroup &p, int j0, int nt, int lane, int kv_hi)
{
    constexpr int kEsz = KT_KV8 ? 1 : 2;
    const int left = kv_hi - j0 - nt * 16;
    const unsigned char *grp = k.base + (kt_mul_wide((unsigned)p.page, k.sb) + p.slot0 * k.ss);
#pragma unroll
    for (int c = 0; c < kt_direct_chunks; c++) {
        const int row = kt_direct_row(lane, c);
        const unsigned char *at = grp + (row < left ? row : 0) * k.ss;   /* kv.h's clamp */
#pragma unroll
        for (int sp = 0; sp < kKdSpans; sp++)
            r[sp * kt_direct_chunks + c] = kt_kd_load(at + (sp * kt_direct_span + kt_direct_k(lane, c)) * kEsz);
    }
}

/* PF: the 128-byte lines of key group nt of the tile at j0 (16 keys, K and V rows) into L2,
 * shared by the kKdSplit warps of that group, a line a lane where the rows have lines enough: the
 * loads of that tile, a tile later, then find it in L2, so that a block has two tiles of DRAM
 * reads in flight, not one. Keys past kv_hi are skipped. head_k and head_v point at the kv head's
 * row 0 column 0 of page 0; k gives the strides (K's and V's are the same: attn_common.c). */
constexpr int kRowLines = kD * (KT_KV8 ? 1 : 2) / 128 > 0 ? kD * (KT_KV8 ? 1 : 2) / 128 : 1;
constexpr int kGroupLines = 2 * 16 * kRowLines;
KT_DEV void kt_kd_prefetch(const unsigned char *head_k, const unsigned char *head_v, const kt_kv_src &k, const kt_kgroup &p,
                           int j0, int nt, int part, int lane, int kv_hi)
{
#pragma unroll
    for (int x0 = 0; x0 < kGroupLines; x0 += 32 * kKdSplit) {
        const int x = x0 + part * 32 + lane, key = x / kRowLines % 16;
        if (x < kGroupLines && j0 + nt * 16 + key < kv_hi) {
            const unsigned char *h = x < kGroupLines / 2 ? head_k : head_v;
            kt_prefetch_l2(h + kt_mul_wide((unsigned)p.page, k.sb) + (p.slot0 + key) * k.ss + x % kRowLines * 128);
        }
    }
}

/* Q's A fragments of every M tile over the warp's d range (from d0), relabelled as K's: fragment
 * (mt * kKdSpans + sp) * kt_direct_steps + step. Rows past the sequence's are zeros. */
KT_DEV void kt_load_q_direct(kt_frag_a (&qf)[KT_MT * kKdSpans * kt_direct_steps], const kt_attn_args &a, const kt_seq &s,
                             int g, int d0, int lane)
{
    const unsigned short *q = (const unsigned short *)a.q;
#pragma unroll
    for (int mt = 0; mt < KT_MT; mt++) {
#pragma unroll
        for (int sp = 0; sp < kKdSpans; sp++) {
            kt_v16 ch[kt_direct_chunks];
#pragma unroll
            for (int c = 0; c < kt_direct_chunks; c++) {
                const int rg = s.row0 + mt * 16 + kt_direct_row(lane, c);
                const int d = d0 + sp * kt_direct_span + kt_direct_k(lane, c);
                ch[c] = kt_v16_make(0u, 0u, 0u, 0u);
                if (rg < g * s.qlen)
                    ch[c] = kt_ldg16(q + (long long)(s.q0 + kt_row_tok(s.gd, rg)) * a.q_stride_tok + (long long)(s.kvh * g + kt_row_head(s.gd, rg)) * a.q_stride_head + d);
#if KT_S_F16
                ch[c] = kt_bf16x8_to_f16x8(ch[c]);
#endif
            }
#pragma unroll
            for (int st = 0; st < kt_direct_steps; st++) kt_frag_a_direct(qf[(mt * kKdSpans + sp) * kt_direct_steps + st], ch, st);
        }
    }
}

/* ---- the tile's softmax and P V, shared by both forms ---- */

/* kCpt adjacent floats of a score slab, and kCpt adjacent 16-bit P elements, as whole vectors
 * where kCpt allows (the runs are aligned: pitches of 8 + 8k elements, starts at multiples of
 * kCpt). */
KT_DEV void kt_slab_read(float (&v)[kCpt], const float *p)
{
    if constexpr (kCpt % 4 == 0) {
#pragma unroll
        for (int u = 0; u < kCpt; u += 4) {
            const kt_v16 x = *(const kt_v16 *)(p + u);
#pragma unroll
            for (int k = 0; k < 4; k++) v[u + k] = kt_bits_float(kt_v16_word(x, k));
        }
    } else {
#pragma unroll
        for (int u = 0; u < kCpt; u++) v[u] = p[u];
    }
}
KT_DEV void kt_p_write(unsigned short *p, const float (&v)[kCpt])
{
    if constexpr (kCpt % 8 == 0) {
#pragma unroll
        for (int u = 0; u < kCpt; u += 8)
            kt_sts16(p + u, kt_v16_make(kt_round2<kt_pv_elem>(v[u], v[u + 1]), kt_round2<kt_pv_elem>(v[u + 2], v[u + 3]),
                                         kt_round2<kt_pv_elem>(v[u + 4], v[u + 5]), kt_round2<kt_pv_elem>(v[u + 6], v[u + 7])));
    } else if constexpr (kCpt % 2 == 0) {
#pragma unroll
        for (int u = 0; u < kCpt; u += 2) *(unsigned *)(p + u) = kt_round2<kt_pv_elem>(v[u], v[u + 1]);
    } else {
#pragma unroll
        for (int u = 0; u < kCpt; u++) p[u] = kt_from_float<kt_pv_elem>(v[u]).bits;
    }
}

/* The online softmax of tile j0 from the slabs (summed in a fixed order). A thread owns kCpt
 * adjacent columns of a row, so its slab reads and P stores are whole vectors (a row's kTpr
 * threads read one contiguous run: no bank conflict); a tile that every row of the block sees whole
 * (block-uniform) skips the masks. The softmax sits between the tile's two barriers, on the chain
 * every warp waits for. Threads past the last row (kTpr clipped to the tile or the wave) mirror it
 * and write nothing: every lane takes part in the shuffles. */
KT_DEV void kt_softmax(kt_smem &sm, const kt_attn_args &a, const kt_seq &s, int g, int j0, float score_scale,
                       const float (&qsr)[kQsr], int tid)
{
    const float neg_inf = kt_neg_inf();
    const bool capped = a.softcap > 0.0f;
    /* scores in log2 units; with a cap, the cap applies to the natural-log score first */
    const float sc = capped ? score_scale : score_scale * kLog2e;
    const int rows = g * s.qlen;
    const int pos_first = s.ctx + kt_row_tok(s.gd, s.row0);
    const int pos_last = s.ctx + kt_row_tok(s.gd, (s.row0 + kM < rows ? s.row0 + kM : rows) - 1);
    /* rows past the sequence's (Q zeros) may score unmasked: nothing of theirs is written */
    const bool whole = j0 + kBN <= s.kv_hi && j0 + kBN - 1 <= pos_first && (a.window <= 0 || pos_last - j0 < a.window);
    for (int r0 = 0; r0 < kM; r0 += kRowsPass) {
        const bool live = r0 + tid / kTpr < kM;
        const int r = live ? r0 + tid / kTpr : kM - 1, c0 = (tid % kTpr) * kCpt;
        const int rg = s.row0 + r, pos = s.ctx + kt_row_tok(s.gd, rg);
        const float scr = kF8 ? sc * qsr[r0 / kRowsPass] : sc;   /* F8: the row's Q scale */
        const bool row_ok = rg < rows;
        float v[kCpt];
        kt_slab_read(v, sm.s + r * kLdS + c0);
#pragma unroll
        for (int part = 1; part < kParts; part++) {
            float w[kCpt];
            kt_slab_read(w, sm.s + (part * kM + r) * kLdS + c0);
#pragma unroll
            for (int u = 0; u < kCpt; u++) v[u] += w[u];
        }
        float mx = neg_inf;
#pragma unroll
        for (int u = 0; u < kCpt; u++) {
            float x = v[u] * scr;
            if (capped) x = a.softcap * kt_tanh(x / a.softcap) * kLog2e;
            if (!whole) {
                const int j = j0 + c0 + u;
                const bool seen = row_ok && j < s.kv_hi && j <= pos && (a.window <= 0 || pos - j < a.window);
                x = seen ? x : neg_inf;
            }
            v[u] = x;
            mx = kt_fmax(mx, x);
        }
#pragma unroll
        for (int w = kTpr / 2; w >= 1; w /= 2) mx = kt_fmax(mx, kt_shfl_xor(mx, w));
        const float m_old = sm.m[r];
        const float m_new = kt_fmax(m_old, mx);
        const float base = m_new == neg_inf ? 0.0f : m_new;   /* a row with nothing seen yet */
        float sum = 0.0f;
#pragma unroll
        for (int u = 0; u < kCpt; u++) {
            v[u] = kt_exp2(v[u] - base);
            sum += v[u];
        }
        if (live) kt_p_write(sm.p + r * kLdP + c0, v);   /* rounded to P V's type there */
#pragma unroll
        for (int w = kTpr / 2; w >= 1; w /= 2) sum += kt_shfl_xor(sum, w);
        if (live && c0 == 0) {
            const float al = kt_exp2(m_old - base);
            sm.alpha[r] = al;
            sm.l[r] = sm.l[r] * al + sum;
            sm.m[r] = m_new;
        }
    }
}

/* P V's B fragment of 16-key step kk and 16-d group dt of V's [key][d] tile at vt (pitch kLdT) */
KT_DEV void kt_load_v_tile(kt_frag_b &fb, const unsigned short *vt, int kk, int dt, int lane)
{
#if KT_V_RAW
    kt_load_v8_kn(fb, vt + kk * 16 * kLdT + dt * 8, kLdT, lane);
#else
    kt_load_b_kn(fb, vt + kk * 16 * kLdT + dt * 16, kLdT, lane);
#endif
}
/* the d column (in its 16-d group) of O's accumulator element e (KT_V_RAW: n tile 0 the even d) */
KT_DEV int kt_o_col(int lane, int e)
{
#if KT_V_RAW
    return kt_o_col_v8(lane, e);
#else
    return kt_acc_col(lane, e);
#endif
}

/* O = O * alpha + P V over the warp's output tiles (P and V in LDS; V's [key][d] tile at vt, pitch
 * kLdT). */
KT_DEV void kt_pv(const kt_smem &sm, const unsigned short *vt, kt_acc (&o)[kOTiles], int warp, int lane)
{
    /* Past the first tiles a row's maximum seldom moves: alpha is 1 for every row the warp holds
     * and the rescale is skipped (a wave-uniform branch on the chain after the barrier). */
    bool moved = false;
#pragma unroll
    for (int i = 0; i < kOTiles; i++) {
        const int mt = (warp + i * KT_NW) / (kD / 16);
#pragma unroll
        for (int e = 0; e < kt_acc_elems; e++) moved |= sm.alpha[mt * 16 + kt_acc_row(lane, e)] != 1.0f;
    }
    if (kt_wave_any(moved)) {
#pragma unroll
        for (int i = 0; i < kOTiles; i++) {
            const int mt = (warp + i * KT_NW) / (kD / 16);
#pragma unroll
            for (int e = 0; e < kt_acc_elems; e++) {
                const float al = sm.alpha[mt * 16 + kt_acc_row(lane, e)];
                kt_acc_set(o[i], e, kt_acc_get(o[i], e) * al);
            }
        }
    }
    if constexpr (kVReuse) {
        /* each accumulator still adds its key steps in order: the same sums as one tile at a time */
#pragma unroll
        for (int kk = 0; kk < kBN / 16; kk++) {
            kt_frag_a pf[KT_MT];
#pragma unroll
            for (int mt = 0; mt < KT_MT; mt++) kt_load_a(pf[mt], sm.p + mt * 16 * kLdP + kk * 16, kLdP, lane);
#pragma unroll
            for (int j = 0; j < kDtW; j++) {
                kt_frag_b fb;
                kt_load_v_tile(fb, vt, kk, warp + j * KT_NW, lane);
#pragma unroll
                for (int mt = 0; mt < KT_MT; mt++) kt_mma<kt_pv_elem>(o[mt * kDtW + j], pf[mt], fb);
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < kOTiles; i++) {
            const int t = warp + i * KT_NW;
            const int mt = t / (kD / 16), dt = t % (kD / 16);
#pragma unroll
            for (int kk = 0; kk < kBN / 16; kk++) {
                kt_frag_a pf;
                kt_load_a(pf, sm.p + mt * 16 * kLdP + kk * 16, kLdP, lane);
                kt_frag_b fb;
                kt_load_v_tile(fb, vt, kk, dt, lane);
                kt_mma<kt_pv_elem>(o[i], pf, fb);
            }
        }
    }
}

/* ---- the LDS forms (KD 0): S from K's [key][d] tile ---- */

static_assert(!KT_K_RAW16 || kKSteps % 2 == 0, "KR: whole 32-d chunks a warp's d range");


/* With kQRegs a warp's score tile (warp % kSTiles) and d range (warp / kSTiles) are fixed: its Q
 * fragments, read once (after Q's barrier). */
/* F8: Q's lo plane, kD + 16 bytes into a row (kt_q_split) */
constexpr int kQLo = kD / 2 + 8;

KT_DEV void kt_q_regs(kt_frag_a (&qf)[kQRegs ? kQTerms * kKSteps : 1], const kt_smem &sm, int warp, int lane)
{
    if constexpr (kQRegs) {
        kt_barrier();   /* Q in LDS */
        const int st0 = warp % kSTiles, part0 = warp / kSTiles;
        if (warp < kSTiles * kKSplit) {
#if KT_K_RAW16
#pragma unroll
            for (int k = 0; k < kKSteps; k += 2)
                kt_q_kr(qf[k], qf[k + 1], sm.q + st0 / (kBN / 16) * 16 * kLdQ + (part0 * kKSteps + k) * 16, kLdQ, lane);
#else
#pragma unroll
            for (int k = 0; k < kKSteps; k++)
#pragma unroll
                for (int h = 0; h < kQTerms; h++)
                    kt_load_a(qf[kQTerms * k + h], sm.q + st0 / (kBN / 16) * 16 * kLdQ + (part0 * kKSteps + k) * 16 + h * kQLo, kLdQ, lane);
#endif
        }
    }
}

/* S's partial sums of a tile into the slabs, K's [key][d] tile at kt (pitch kLdT): score tile
 * t % kSTiles over d range t / kSTiles */
KT_DEV void kt_scores(kt_smem &sm, const unsigned short *kt, const kt_frag_a (&qf)[kQRegs ? kQTerms * kKSteps : 1], int warp, int lane)
{
    const int st0 = warp % kSTiles, part0 = warp / kSTiles;
    for (int t = warp; t < kSTiles * kKSplit; t += KT_NW) {
        const int st = kQRegs ? st0 : t % kSTiles, part = kQRegs ? part0 : t / kSTiles;
        const int mt = st / (kBN / 16), nt = st % (kBN / 16);
        kt_acc acc;
        kt_acc_zero(acc);
#if KT_K_RAW16
#pragma unroll
        for (int k = 0; k < kKSteps; k += 2) {
            const int kk = part * kKSteps + k;   /* the chunk's first 16-d step: byte 16 kk of a raw row */
            kt_frag_b fa, fb;
            kt_k_kr(fa, fb, kt + nt * 16 * kLdT + kk * 8, kLdT, lane);
            kt_frag_a qa, qb;
            if constexpr (kQRegs) {
                qa = qf[k];
                qb = qf[k + 1];
            } else {
                kt_q_kr(qa, qb, sm.q + mt * 16 * kLdQ + kk * 16, kLdQ, lane);
            }
            kt_mma<kt_s_elem>(acc, qa, fa);
            kt_mma<kt_s_elem>(acc, qb, fb);
        }
#else
#pragma unroll
        for (int k = 0; k < kKSteps; k++) {
            const int kk = part * kKSteps + k;
            kt_frag_b fb;
            kt_load_b(fb, kt + nt * 16 * kLdT + kk * 16, kLdT, lane);
#pragma unroll
            for (int h = 0; h < kQTerms; h++) {
                if constexpr (kQRegs) {
                    kt_mma<kt_s_elem>(acc, qf[kQTerms * k + h], fb);
                } else {
                    kt_frag_a fa;
                    kt_load_a(fa, sm.q + mt * 16 * kLdQ + kk * 16 + h * kQLo, kLdQ, lane);
                    kt_mma<kt_s_elem>(acc, fa, fb);
                }
            }
        }
#endif
        float *slab = sm.s + part * kM * kLdS;
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++)
            slab[(mt * 16 + kt_acc_row(lane, i)) * kLdS + nt * 16 + kt_acc_col(lane, i)] = kt_acc_get(acc, i);
    }
}

/* an fp8 ring stage's rows (K's or V's) a thread copied, back to registers for conversion */
KT_DEV void kt_ring_rows(kt_v16 (&r)[kChunks], const unsigned char *rows, int kr, int col)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) r[i] = *(const kt_v16 *)(rows + (kr + i * kKeysPass) * kLdR + col * kEszKV);
}

} // namespace

KT_ATTN_KERNEL(KT_KERNEL_NAME, kThreads)(kt_attn_args a)
{
    KT_DYNAMIC_SHARED(unsigned char, sm_raw);
    kt_smem &sm = *(kt_smem *)sm_raw;
    /* a launch that gave less LDS than the recipe's figure writes nothing (uniform) */
    if (!kt_dynamic_shared_fits(kSmemBytes)) return;
    const int tid = kt_thread_id(), lane = kt_lane_id(), warp = kt_wave_id();
    const int g = a.num_heads / a.num_kv_heads;
    const int seq = kt_block_id_y(), seg = kt_block_id_z();
    kt_seq s;
    s.gd = kt_gdiv_make(g);
    const int row_blocks = kt_grid_blocks_x() / a.num_kv_heads;   /* blocks sharing a kv head */
    s.kvh = kt_block_id_x() / row_blocks;
    s.row0 = kt_block_id_x() % row_blocks * kM;
    const int *bt = a.block_table + (long long)seq * a.bt_stride;
    const unsigned magic = kt_block_magic(a.block_size);
    kt_warm_table<kBN>(a, bt, magic, seg);
    s.q0 = a.query_start_loc[seq];
    s.qlen = a.query_start_loc[seq + 1] - s.q0;
    const int seq_len = a.seq_lens[seq];
    s.ctx = seq_len - s.qlen;
    /* the visible keys of the whole block: from the first row's window start to the last row */
    kt_segment_keys<kBN>(seq_len, s.ctx, a.window, a.num_segments, seg, s.kv_lo, s.kv_hi);
    const bool with_sink = a.sinks && a.num_segments == 1;   /* split: the reduce adds the sink */
    const float score_scale = a.scale * a.k_scale;
    const float neg_inf = kt_neg_inf();
    float qsr[kQsr];   /* F8: Q's row scales (kt_q_split); 1 elsewhere */
#pragma unroll
    for (int i = 0; i < kQsr; i++) qsr[i] = 1.0f;

    /* no rows here, or a segment past the bound count (uniform over the block) */
    if (s.qlen <= 0 || s.row0 >= g * s.qlen || seg >= a.num_segments) return;
    for (int r = tid; r < kM; r += kThreads) {
        const int h = s.kvh * g + kt_row_head(s.gd, s.row0 + r);
        sm.m[r] = with_sink ? a.sinks[h] * kLog2e : neg_inf;    /* m and s are kept in log2 units */
        sm.l[r] = with_sink ? 1.0f : 0.0f;
    }

    kt_acc o[kOTiles];
#pragma unroll
    for (int i = 0; i < kOTiles; i++) kt_acc_zero(o[i]);

    /* the thread's V keys (and, without KD, K keys) and column of every tile */
    const int kr = tid / kPerKey, col = (tid % kPerKey) * kChunkElems;
    const kt_kv_src vsrc = kt_kv_src_make(a.v_cache, a.v_stride_head, a.v_stride_block, a.v_stride_slot, s.kvh, col);
    kt_v16 vr_[kChunks];

    if constexpr (kKD) {
        /* the warp's key tile and d range, its Q fragments, its K base */
        const int nt = warp % kNT, d0 = warp / kNT * (kD / kKdSplit);
        float *slab = sm.s + warp / kNT * kM * kLdS;
        kt_frag_a qf[KT_MT * kKdSpans * kt_direct_steps];
        kt_load_q_direct(qf, a, s, g, d0, lane);
        const kt_kv_src ksrc = kt_kv_src_make(a.k_cache, a.k_stride_head, a.k_stride_block, a.k_stride_slot, s.kvh, d0);
        /* the kv head's row 0 of page 0 in each cache, for the prefetches (PF's, the start's) */
        const unsigned char *head_k = kPrefetch ? (const unsigned char *)a.k_cache + (long long)s.kvh * a.k_stride_head * (KT_KV8 ? 1 : 2) : nullptr;
        const unsigned char *head_v = kPrefetch ? (const unsigned char *)a.v_cache + (long long)s.kvh * a.v_stride_head * (KT_KV8 ? 1 : 2) : nullptr;
        kt_kd_chunk kd[kKdChunks];
        /* The block-table reads run two tiles ahead of the loads they address: a read queues
         * behind the loads in flight, so one tile ahead it arrives as late as they do (the H200:
         * 32/8/128 batch 8 32K, BN64, 340 -> 282 us; d256 unchanged). The loop steps two tiles
         * so that each page set is named at compile time: tile u of a step issues the next tile
         * with page set u, then looks up the pages set u issues with next, two tiles on. */
        kt_kgroup kp[2];
        kt_groups pg[2];
        if (s.kv_lo < s.kv_hi) {
            kt_kd_find(kp[0], bt, a.block_size, magic, s.kv_lo, nt, s.kv_hi);
            kt_find_groups(pg[0], bt, a.block_size, magic, s.kv_lo, kr, s.kv_hi);
            kt_kd_issue(kd, ksrc, kp[0], s.kv_lo, nt, lane, s.kv_hi);
            kt_issue(vr_, vsrc, pg[0], s.kv_lo, kr, s.kv_hi);
#pragma unroll
            for (int u = 0; u < 2; u++) {
                kt_kd_find(kp[u], bt, a.block_size, magic, s.kv_lo + (1 + u) * kBN, nt, s.kv_hi);
                kt_find_groups(pg[u], bt, a.block_size, magic, s.kv_lo + (1 + u) * kBN, kr, s.kv_hi);
            }
            if constexpr (kPrefetch) kt_kd_prefetch(head_k, head_v, ksrc, kp[0], s.kv_lo + kBN, nt, warp / kNT, lane, s.kv_hi);
            if constexpr (!KT_PF && kPfStart) kt_kd_prefetch(head_k, head_v, ksrc, kp[1], s.kv_lo + 2 * kBN, nt, warp / kNT, lane, s.kv_hi);
        }
        /* Per tile, two barriers: S needs only registers and its slab (the previous softmax read
         * the slabs before the previous barrier), so it overlaps other warps' P V; the next K is
         * issued as soon as S has consumed K's registers, the next V once V is in LDS. The test
         * for a last, odd tile is uniform over the block. */
        for (int j00 = s.kv_lo; j00 < s.kv_hi; j00 += 2 * kBN) {
#pragma unroll
            for (int u = 0; u < 2; u++) {
                const int j0 = j00 + u * kBN;
                if (u > 0 && j0 >= s.kv_hi) break;
                kt_acc acc[KT_MT];
#pragma unroll
                for (int mt = 0; mt < KT_MT; mt++) kt_acc_zero(acc[mt]);
#pragma unroll
                for (int sp = 0; sp < kKdSpans; sp++) {
                    kt_v16 ch[kt_direct_chunks];
#pragma unroll
                    for (int c = 0; c < kt_direct_chunks; c++) ch[c] = kt_kd_elems(kd[sp * kt_direct_chunks + c]);
#pragma unroll
                    for (int st = 0; st < kt_direct_steps; st++) {
                        kt_frag_b fb;
                        kt_frag_b_direct(fb, ch, st);
#pragma unroll
                        for (int mt = 0; mt < KT_MT; mt++) kt_mma<kt_s_elem>(acc[mt], qf[(mt * kKdSpans + sp) * kt_direct_steps + st], fb);
                    }
                }
                kt_kd_issue(kd, ksrc, kp[u], j0 + kBN, nt, lane, s.kv_hi);
                if constexpr (KT_PF) kt_kd_prefetch(head_k, head_v, ksrc, kp[1 - u], j0 + 2 * kBN, nt, warp / kNT, lane, s.kv_hi);
                kt_kd_find(kp[u], bt, a.block_size, magic, j0 + 3 * kBN, nt, s.kv_hi);
#pragma unroll
                for (int mt = 0; mt < KT_MT; mt++)
#pragma unroll
                    for (int i = 0; i < kt_acc_elems; i++)
                        slab[(mt * 16 + kt_acc_row(lane, i)) * kLdS + nt * 16 + kt_acc_col(lane, i)] = kt_acc_get(acc[mt], i);
                kt_barrier();   /* the slabs are whole; the previous P V is done with V and P */

                kt_store_rows<true>(sm.kv, vr_, kr, col);
                kt_issue(vr_, vsrc, pg[u], j0 + kBN, kr, s.kv_hi);
                kt_find_groups(pg[u], bt, a.block_size, magic, j0 + 3 * kBN, kr, s.kv_hi);
                kt_softmax(sm, a, s, g, j0, score_scale, qsr, tid);
                kt_barrier();   /* V, P and alpha */
                kt_pv(sm, sm.kv, o, warp, lane);
            }
        }
    } else if constexpr (kRing) {
        const kt_kv_src ksrc = kt_kv_src_make(a.k_cache, a.k_stride_head, a.k_stride_block, a.k_stride_slot, s.kvh, col);
        unsigned char *const ring = sm_raw + kSmemHead;
        const unsigned ring_lds = kt_lds_addr(ring) + kr * kLdR + col * kEszKV;   /* the thread's first K row */
        kt_groups pages;   /* of the tile whose copies are issued next */
        if (s.kv_lo < s.kv_hi) {
            kt_find_groups(pages, bt, a.block_size, magic, s.kv_lo, kr, s.kv_hi);
#pragma unroll
            for (int t = 0; t < kST - 1; t++) {
                kt_ring_issue(ring_lds + t * kStageBytes, ksrc, vsrc, pages, s.kv_lo + t * kBN, kr, s.kv_hi);
                kt_find_groups(pages, bt, a.block_size, magic, s.kv_lo + (t + 1) * kBN, kr, s.kv_hi);
            }
        }
        kt_load_q(sm, a, s, g, tid);   /* after the first copies: its loads wait beside theirs */
        kt_frag_a qf[kQRegs ? kQTerms * kKSteps : 1];
        kt_q_regs(qf, sm, warp, lane);
        int use = 0, fill = kST - 1;   /* the stages of this tile and of the copy issued in it */
        for (int j0 = s.kv_lo; j0 < s.kv_hi; j0 += kBN) {
            kt_copy_wait_pending<kRing ? kST - 2 : 0>();   /* this thread's copies of tile j0 */
            kt_barrier();   /* everyone's; and the previous tile's P V is done with stage fill and P */
            kt_ring_issue(ring_lds + fill * kStageBytes, ksrc, vsrc, pages, j0 + (kST - 1) * kBN, kr, s.kv_hi);
            kt_find_groups(pages, bt, a.block_size, magic, j0 + kST * kBN, kr, s.kv_hi);
            const unsigned char *stage = ring + use * kStageBytes;
            const unsigned short *kt = (const unsigned short *)stage;
            const unsigned short *vt = (const unsigned short *)(stage + kBN * kLdR);
            if constexpr (!kRingDirect) {
                kt_ring_rows(vr_, stage, kr, col);
                kt_store_rows<false>(sm.kv, vr_, kr, col);
                kt_barrier();
                kt = sm.kv;
            }
            kt_scores(sm, kt, qf, warp, lane);
            kt_barrier();
            if constexpr (!kRingDirect) {
                kt_ring_rows(vr_, stage + kBN * kLdR, kr, col);
                kt_store_rows<true>(sm.kv, vr_, kr, col);
                vt = sm.kv;
            }
            kt_softmax(sm, a, s, g, j0, score_scale, qsr, tid);
            kt_barrier();
            kt_pv(sm, vt, o, warp, lane);
            use = use + 1 == kST ? 0 : use + 1;
            fill = fill + 1 == kST ? 0 : fill + 1;
        }
        kt_copy_wait();   /* none is issued past the segment; kept so that no copy outlives the block */
    } else {
        const kt_kv_src ksrc = kt_kv_src_make(a.k_cache, a.k_stride_head, a.k_stride_block, a.k_stride_slot, s.kvh, col);
        kt_v16 kr_[kChunks];
        kt_groups pages;   /* of the tile whose loads are issued next */
        if (s.kv_lo < s.kv_hi) {
            kt_find_groups(pages, bt, a.block_size, magic, s.kv_lo, kr, s.kv_hi);
            kt_issue(kr_, ksrc, pages, s.kv_lo, kr, s.kv_hi);
            kt_issue(vr_, vsrc, pages, s.kv_lo, kr, s.kv_hi);
            kt_find_groups(pages, bt, a.block_size, magic, s.kv_lo + kBN, kr, s.kv_hi);
        }
        kt_load_q(sm, a, s, g, tid);   /* after the first loads: its loads wait beside theirs */
#if KT_F8
        kt_q_split(sm, qsr, tid);   /* (the e4m3 conversions exist only where F8 does) */
#endif
        kt_frag_a qf[kQRegs ? kQTerms * kKSteps : 1];
        kt_q_regs(qf, sm, warp, lane);
        for (int j0 = s.kv_lo; j0 < s.kv_hi; j0 += kBN) {
            /* The next tile's loads are issued even after the last tile (they reread the segment's
             * last key): no branch around them, which on AMD would wait for every load in flight. */
            kt_barrier();                 /* the previous tile's P V is done with the buffer and P */
            kt_store_rows<false>(sm.kv, kr_, kr, col);
            kt_issue(kr_, ksrc, pages, j0 + kBN, kr, s.kv_hi);
            kt_barrier();

            /* 1. partial scores */
            kt_scores(sm, sm.kv, qf, warp, lane);
            kt_barrier();

            /* 2. V to LDS (the K tile is consumed), the next V in flight; the pages of the tile
             * after next are looked up first (AMD counts loads in order: waiting for them must not
             * wait for V); then the online softmax */
            kt_store_rows<true>(sm.kv, vr_, kr, col);
            {
                kt_groups after;
                kt_find_groups(after, bt, a.block_size, magic, j0 + 2 * kBN, kr, s.kv_hi);
                kt_issue(vr_, vsrc, pages, j0 + kBN, kr, s.kv_hi);
                pages = after;
            }
            kt_softmax(sm, a, s, g, j0, score_scale, qsr, tid);
            kt_barrier();

            /* 3. O = O * alpha + P V */
            kt_pv(sm, sm.kv, o, warp, lane);
        }
    }
    kt_barrier();   /* the last tile's row statistics */
    /* The reduce may start its launch once every block is past its keys (attn/reduce.h). Let at
     * the blocks' start instead, its blocks took slots beside the stream's and batch 1 32K lost
     * 2.4%; here it gained 4.2%, and at exit nothing (H200, bench/NOTES.md, thirteenth session). */
    kt_grid_launch_dependents();

    /* write: out = O / l (one segment), or the partials */
    const int nseg = a.num_segments;
    const long long rows_total = (long long)a.num_tokens * a.num_heads;
    float *ml = a.partials;
    float *acc_part = a.partials ? a.partials + 2 * rows_total * nseg : (float *)0;
    for (int r = tid; r < kM && nseg > 1; r += kThreads) {
        const int rg = s.row0 + r;
        if (rg >= g * s.qlen) continue;
        const long long row = (long long)(s.q0 + kt_row_tok(s.gd, rg)) * a.num_heads + s.kvh * g + kt_row_head(s.gd, rg);
        ml[(row * nseg + seg) * 2] = sm.m[r];
        ml[(row * nseg + seg) * 2 + 1] = sm.l[r];
    }
#pragma unroll
    for (int i = 0; i < kOTiles; i++) {
        const int t = warp + i * KT_NW;
        const int mt = t / (kD / 16), dt = t % (kD / 16);
#pragma unroll
        for (int e = 0; e < kt_acc_elems; e++) {
            const int r = mt * 16 + kt_acc_row(lane, e), d = dt * 16 + kt_o_col(lane, e);
            const int rg = s.row0 + r;
            if (rg >= g * s.qlen) continue;
            const int tok = s.q0 + kt_row_tok(s.gd, rg), h = s.kvh * g + kt_row_head(s.gd, rg);
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

#include "attn/reduce.h"
