/* kv.h: paged-attention template helpers: -inf, tanh, the exact e4m3 pair conversion, and the KV
 * tile's loads (global -> registers -> LDS, K and V alike as the cache stores them, [key][d]).
 * Included inside the template's anonymous namespace after it defines kt_elem, KT_KV8,
 * KT_ELEM_IS_BF16 (attn/dtype.h) and the constants kD (head size), kBN (keys a tile), kChunkElems
 * (cache elements a 16-byte load: 8, or 16 for fp8), kKeysPass (keys the block loads in one pass:
 * kThreads / (kD / kChunkElems)), kChunks (keys a thread loads a tile) and kLdK (pitch of the
 * [key][d] tile); the template includes arch/attn_ops.h (kt_e4m3x2_to_f16x2, kt_ldg16_stream) at
 * file scope (kt_e4m3x2_to_bf16x2 too). Two ways to address a thread's keys: decode's
 * (KT_KV_GROUPS: 16-key groups, one page base a group, below) and prefill's (a key's page held
 * from its lookup to its loads, its slot recomputed at each load: a register less a key, which
 * prefill, holding Q, S and O across the loop, needs more than an integer multiply; any
 * block_size). */

constexpr float kLog2e = 1.4426950408889634f;

KT_DEV float kt_neg_inf(void)
{
    union { unsigned u; float f; } x = {0xff800000u};
    return x.f;
}

KT_DEV unsigned kt_float_bits(float f)
{
    union { float f; unsigned u; } x;
    x.f = f;
    return x.u;
}
KT_DEV float kt_bits_float(unsigned u)
{
    union { unsigned u; float f; } x;
    x.u = u;
    return x.f;
}

/* tanh from 2^x (no libm on every target): 1 - 2 / (e^{2x} + 1), odd; |error| ~1e-7. */
KT_DEV float kt_tanh(float x)
{
    const float a = x < 0.0f ? -x : x;
    const float t = 1.0f - 2.0f / (kt_exp2(2.0f * kLog2e * a) + 1.0f);
    return x < 0.0f ? -t : t;
}

/* Two e4m3 cache bytes (the low 16 bits of x) as two elements of S's operand type (K) or of
 * P V's (V: f16, attn/dtype.h) in one word, exact. S's type is kt_elem, or f16 where the template
 * defines KT_S_F16 1 (decode.hip: fp8 caches on targets where e4m3 -> f16 is one instruction). */
#ifndef KT_S_F16
#define KT_S_F16 0
#endif
KT_DEV unsigned kt_kv8_pair(unsigned x)
{
#if KT_ELEM_IS_BF16 && !KT_S_F16
    return kt_e4m3x2_to_bf16x2(x);
#else
    return kt_e4m3x2_to_f16x2(x);
#endif
}
/* a word's four cache bytes (bytes 0-1 to lo, 2-3 to hi) as K's (S's type) or V's elements */
KT_DEV void kt_kv8_quad(unsigned x, unsigned &lo, unsigned &hi)
{
#if KT_ELEM_IS_BF16 && !KT_S_F16
    lo = kt_e4m3x2_to_bf16x2(x & 0xffffu);
    hi = kt_e4m3x2_to_bf16x2(x >> 16);
#else
    kt_e4m3x4_to_f16x4(x, lo, hi);
#endif
}
KT_DEV void kt_kv8_quad_pv(unsigned x, unsigned &lo, unsigned &hi) { kt_e4m3x4_to_f16x4(x, lo, hi); }

KT_DEV unsigned kt_block_magic(int block_size)
{
    return (unsigned)((0x100000000ull + (unsigned)block_size - 1) / (unsigned)block_size);
}
KT_DEV int kt_blk_of(int key, unsigned magic) { return (int)(((unsigned long long)(unsigned)key * magic) >> 32); }

/* Row r of a kv head's rows is query token r / g, head r % g of its group. g is block-uniform and r
 * small (r * g < 2^32: at most g * max_query_len rows), so the quotient is kt_blk_of's multiply-high
 * by a reciprocal made once: a signed division by a run-time g is ~20 instructions and, inside a
 * loop, is not hoisted out of it (it may trap), and the templates take r / g a row per tile
 * (masks, positions) and per element (the epilogue's addresses). */
struct kt_gdiv { int g; unsigned magic; };
KT_DEV kt_gdiv kt_gdiv_make(int g) { return kt_gdiv{g, kt_block_magic(g)}; }
KT_DEV int kt_row_tok(const kt_gdiv &d, int r) { return kt_blk_of(r, d.magic); }
KT_DEV int kt_row_head(const kt_gdiv &d, int r) { return r - kt_blk_of(r, d.magic) * d.g; }

#ifdef KT_KV_GROUPS
/* Decode's addressing, in 16-key groups. Its tiles start at multiples of 16 keys (the window's
 * lower bound is rounded down to one; the softmax masks the keys below it) and block_size is a
 * multiple of 16 (op_attn.c's misfit), so an aligned group of 16 keys lies in one page. A
 * thread's keys of a tile, kr + i * kKeysPass (kKeysPass a power of two), fall into kGroups
 * groups fixed at compile time (kt_grp_of): per tile a group costs one block-table read, and one
 * page base per cache; a key costs its offset in the group (the same every tile: hoisted) and a
 * select for keys at or past kv_hi, which read a key of the sequence instead (their scores are
 * masked and their P is 0, and a real key's values are finite: the loads stay unconditional,
 * which AMD needs). The seventh session's ncu put decode's issue at twice cuDNN's for the same
 * bytes; the per-key page lookup, clamp, slot and two 64-bit products were the shared part. */
static_assert(16 % kKeysPass == 0 || kKeysPass % 16 == 0, "a thread's keys a power-of-two apart");
constexpr int kGroups = kKeysPass < 16 ? kChunks * kKeysPass / 16 : kChunks;
KT_DEV constexpr int kt_grp_of(int i) { return kKeysPass < 16 ? i * kKeysPass / 16 : i; }
/* tile-relative first key of the thread's group gi */
KT_DEV int kt_grp_start(int gi, int kr) { return kKeysPass < 16 ? 16 * gi : ((kr + gi * kKeysPass) & ~15); }

/* A segment's keys [kv_lo, kv_hi) of a sequence of seq_len keys, ctx of them cached before its
 * query rows: from the window's lower bound for the first row (rounded down to 16 keys, the groups'
 * start; the masks drop the keys below the window) to seq_len, cut into nseg equal spans rounded
 * up to whole tiles of kTile keys (a short sequence leaves trailing segments empty). */
template <int kTile> KT_DEV void kt_segment_keys(int seq_len, int ctx, int window, int nseg, int seg, int &kv_lo, int &kv_hi)
{
    const int lo = (window > 0 && ctx - window + 1 > 0 ? ctx - window + 1 : 0) & ~15;
    const int per = ((seq_len - lo + nseg - 1) / nseg + kTile - 1) / kTile * kTile;
    kv_lo = lo + seg * per;
    kv_hi = kv_lo + per < seq_len ? kv_lo + per : seq_len;
}

/* Before the first K / V load a block waits for seq_lens, then for its block-table entry: two
 * DRAM latencies in a row, which batch 1 and a batch 8 of 32K keys pay once a launch and do not
 * hide. So the entry of segment seg's first key is prefetched beside seq_lens' own load, its
 * bounds taken as if the sequence were the batch's longest (max_seq_len, max_query_len: exact for
 * it, and for every sequence when the lengths are equal); the table read that follows seq_lens
 * then finds the line on its way. A wrong guess prefetches a line of the sequence's own row. */
template <int kTile> KT_DEV void kt_warm_table(const kt_attn_args &a, const int *bt, unsigned magic, int seg)
{
    int lo, hi;
    kt_segment_keys<kTile>(a.max_seq_len, a.max_seq_len - a.max_query_len, a.window, a.num_segments, seg, lo, hi);
    if (lo < hi) kt_prefetch(bt + kt_blk_of(lo, magic));
}

/* the pages of a thread's groups of one tile, and where each group starts in its page */
struct kt_groups { int page[kGroups]; int slot0[kGroups]; };

/* One cache as a thread reads it: its kv head and column (base) and the strides in bytes (a
 * block's below 2^32, a slot's times block_size below 2^31: attn_common.c's checks). */
struct kt_kv_src {
    const unsigned char *base;
    unsigned sb;
    int ss;
};

KT_DEV kt_kv_src kt_kv_src_make(const void *cache, long long stride_head, long long stride_block, long long stride_slot,
                                int kvh, int col)
{
    constexpr int kEsz = KT_KV8 ? 1 : 2;
    kt_kv_src c;
    c.base = (const unsigned char *)cache + ((long long)kvh * stride_head + col) * kEsz;
    c.sb = (unsigned)stride_block * kEsz;
    c.ss = (int)stride_slot * kEsz;
    return c;
}

/* the groups of tile j0 (the block-table reads); a group past the segment reads the last
 * visible key's group, a page the sequence has, so that a group's first key is always a key of
 * the sequence */
/* the page of the group at key0 and where in it the group starts; key0 past the segment's last
 * group is clamped to it */
KT_DEV void kt_find_group(int &page, int &slot0, const int *bt, int bs, unsigned magic, int key0, int kv_hi)
{
    const int last = (kv_hi - 1) & ~15, k = key0 < last ? key0 : last;
    const int blk = kt_blk_of(k, magic);
    page = bt[blk];
    slot0 = k - blk * bs;
}

KT_DEV void kt_find_groups(kt_groups &p, const int *bt, int bs, unsigned magic, int j0, int kr, int kv_hi)
{
#pragma unroll
    for (int gi = 0; gi < kGroups; gi++) kt_find_group(p.page[gi], p.slot0[gi], bt, bs, magic, j0 + kt_grp_start(gi, kr), kv_hi);
}

/* the first key of each of the thread's groups in one cache (once a tile: a key adds only its
 * offset in the group) */
KT_DEV void kt_group_bases(const unsigned char *(&b)[kGroups], const kt_kv_src &c, const kt_groups &p)
{
#pragma unroll
    for (int gi = 0; gi < kGroups; gi++) b[gi] = c.base + (kt_mul_wide((unsigned)p.page[gi], c.sb) + p.slot0[gi] * c.ss);
}

/* where key kr + i * kKeysPass of the tile is (left: the segment's keys from the tile's first);
 * one at or past the segment's end reads its group's first key instead (a 32-bit select) */
KT_DEV const unsigned char *kt_key_addr(const kt_kv_src &c, const unsigned char *const (&b)[kGroups], int i, int kr, int left)
{
    const int o = kr + i * kKeysPass;
    return b[kt_grp_of(i)] + (o < left ? (o & 15) * c.ss : 0);
}

/* The 16-byte loads of one cache (K or V) for a thread's keys of the tile at j0. Read once by the
 * kernel (KV streams): not kept in L1. */
KT_DEV void kt_issue(kt_v16 (&r)[kChunks], const kt_kv_src &c, const kt_groups &p, int j0, int kr, int kv_hi)
{
    const unsigned char *b[kGroups];
    kt_group_bases(b, c, p);
#pragma unroll
    for (int i = 0; i < kChunks; i++) r[i] = kt_ldg16_stream(kt_key_addr(c, b, i, kr, kv_hi - j0));
}
#else
/* Where a thread's keys of a tile live: key kr + i * kKeysPass of the tile (kt_key_of) sits in
 * physical block page[i], for K and V alike (one block-table read a key a tile), at slot key -
 * (key / block_size) * block_size. A key at or past kv_hi reads the last visible key (kv_hi - 1)
 * instead: its score is masked and its P is 0, and a real key's values are finite, so it adds
 * nothing, and the loads stay unconditional (on AMD a branch around a load makes the compiler
 * wait for every load in flight). key / block_size is a multiply-high by ceil(2^32 / block_size)
 * (kt_block_magic): exact while key * block_size < 2^32, which attn_common.c's argument check
 * holds (max_seq_len * block_size). */
struct kt_pages { int page[kChunks]; };


KT_DEV int kt_key_of(int j0, int kr, int i, int kv_hi)
{
    const int want = j0 + kr + i * kKeysPass;
    return want < kv_hi ? want : kv_hi - 1;
}
KT_DEV int kt_slot_of(int key, unsigned magic, int bs) { return key - kt_blk_of(key, magic) * bs; }

/* the pages of the tile at j0 (the block-table reads) */
KT_DEV void kt_find_pages(kt_pages &p, const int *bt, int bs, unsigned magic, int j0, int kr, int kv_hi)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) p.page[i] = bt[kt_blk_of(kt_key_of(j0, kr, i, kv_hi), magic)];
}

/* The 16-byte loads of one cache (K or V) for a thread's keys of the tile at j0, whose pages p
 * holds; base already points at the thread's kv head and column. Read once by the kernel (KV
 * streams): not kept in L1. */
KT_DEV void kt_issue(kt_v16 (&r)[kChunks], const unsigned char *base, const kt_pages &p, int bs, unsigned magic, int j0, int kr, int kv_hi,
                     long long stride_block, int stride_slot)
{
    constexpr long long kEsz = KT_KV8 ? 1 : 2;
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int key = kt_key_of(j0, kr, i, kv_hi), slot = kt_slot_of(key, magic, bs);
        r[i] = kt_ldg16_stream(base + ((long long)p.page[i] * stride_block + (long long)slot * stride_slot) * kEsz);
    }
}
#endif

/* A thread's chunks into the [key][d] tile (pitch kLdK), 16-byte stores: K (kV false) as S's
 * operand type, which S = Q K^T takes as B = W[n = key][k = d] (kt_load_b); V as P V's, which
 * O = P V takes as a [k][n] tile (kt_load_b_kn). Where the template defines KT_K_RAW / KT_V_RAW
 * 1, K's / V's fp8 bytes go unconverted, for readers that convert them (decode.hip's F8 and
 * KR: kt_k_kr, kt_load_v8_kn). */
#ifndef KT_K_RAW
#define KT_K_RAW 0
#endif
#ifndef KT_V_RAW
#define KT_V_RAW 0
#endif
template <bool kV> KT_DEV void kt_store_rows(unsigned short *kv, const kt_v16 (&r)[kChunks], int kr, int col)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        unsigned short *dst = kv + (kr + i * kKeysPass) * kLdK + col;
        if constexpr ((!kV && KT_K_RAW) || (kV && KT_V_RAW)) {
            /* the fp8 bytes as the cache holds them, a row d bytes: chunk col at byte col */
            kt_sts16(kv + (kr + i * kKeysPass) * kLdK + col / 2, r[i]);
            continue;
        }
#if KT_KV8
        /* A lane's 32 converted bytes are two 16-byte stores 32 bytes from its neighbours': the
         * 8 lanes of one store phase would hit 4 bank groups twice. Odd groups of 4 lanes store
         * their second half first (its source words picked before conversion, 4 selects), so
         * each phase covers all 8 groups once. */
        const bool sw = ((col / 64) & 1) != 0;
        const unsigned x[4] = {kt_v16_word(r[i], sw ? 2 : 0), kt_v16_word(r[i], sw ? 3 : 1),
                               kt_v16_word(r[i], sw ? 0 : 2), kt_v16_word(r[i], sw ? 1 : 3)};
        unsigned w[8];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            if (kV) kt_kv8_quad_pv(x[j], w[2 * j], w[2 * j + 1]);
            else kt_kv8_quad(x[j], w[2 * j], w[2 * j + 1]);
        }
        kt_sts16(dst + (sw ? 8 : 0), kt_v16_make(w[0], w[1], w[2], w[3]));
        kt_sts16(dst + (sw ? 0 : 8), kt_v16_make(w[4], w[5], w[6], w[7]));
#else
        kt_sts16(dst, r[i]);
#endif
    }
}

#if defined(KT_KV_RING) && defined(KT_KV_GROUPS)
/* A ring's copies of tile j0 (a thread's keys and column, as kt_issue loads them) into stage
 * lds (the thread's first K row there; rows kLdR bytes apart, V's kRingV bytes past K's; a
 * template with a ring defines both); none past the segment (block-uniform), the group closed
 * either way so that every thread counts the same groups. */
KT_DEV void kt_ring_issue(unsigned lds, const kt_kv_src &k, const kt_kv_src &v, const kt_groups &p, int j0, int kr, int kv_hi)
{
    if (j0 < kv_hi) {
        const int left = kv_hi - j0;
        const unsigned char *bk[kGroups], *bv[kGroups];
        kt_group_bases(bk, k, p);
        kt_group_bases(bv, v, p);
#pragma unroll
        for (int i = 0; i < kChunks; i++) {
            kt_copy16_async(lds + i * kKeysPass * kLdR, kt_key_addr(k, bk, i, kr, left));
            kt_copy16_async(lds + kRingV + i * kKeysPass * kLdR, kt_key_addr(v, bv, i, kr, left));
        }
    }
    kt_copy_commit();
}
#endif
