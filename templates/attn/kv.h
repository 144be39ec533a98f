/* kv.h: paged-attention template helpers: -inf, tanh, the exact e4m3 pair conversion, and the KV
 * tile's loads (global -> registers -> LDS, K and V alike as the cache stores them, [key][d]).
 * Included inside the template's anonymous namespace after it defines kt_elem, KT_KV8,
 * KT_ELEM_IS_BF16 (attn/dtype.h) and the constants kD (head size), kBN (keys a tile), kChunkElems
 * (cache elements a 16-byte load: 8, or 16 for fp8), kKeysPass (keys the block loads in one pass:
 * kThreads / (kD / kChunkElems)), kChunks (keys a thread loads a tile) and kLdK (pitch of the
 * [key][d] tile); the template includes arch/attn_ops.h (kt_e4m3x2_to_f16x2, kt_ldg16_stream) at
 * file scope (kt_e4m3x2_to_bf16x2 too). decode.hip and prefill.hip both stream through these: a key's page is held from its
 * lookup to its loads, its slot recomputed at each load (a register less a key, which prefill,
 * holding Q, S and O across the loop, needs more than an integer multiply). */

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
 * P V's (V: f16, attn/dtype.h) in one word, exact. */
KT_DEV unsigned kt_kv8_pair(unsigned x)
{
#if KT_ELEM_IS_BF16
    return kt_e4m3x2_to_bf16x2(x);
#else
    return kt_e4m3x2_to_f16x2(x);
#endif
}
KT_DEV unsigned kt_kv8_pair_pv(unsigned x) { return kt_e4m3x2_to_f16x2(x); }

/* Where a thread's keys of a tile live: key kr + i * kKeysPass of the tile (kt_key_of) sits in
 * physical block page[i], for K and V alike (one block-table read a key a tile), at slot key -
 * (key / block_size) * block_size. A key at or past kv_hi reads the last visible key (kv_hi - 1)
 * instead: its score is masked and its P is 0, and a real key's values are finite, so it adds
 * nothing, and the loads stay unconditional (on AMD a branch around a load makes the compiler
 * wait for every load in flight). key / block_size is a multiply-high by ceil(2^32 / block_size)
 * (kt_block_magic): exact while key * block_size < 2^32, which attn_common.c's argument check
 * holds (max_seq_len * block_size). */
struct kt_pages { int page[kChunks]; };

KT_DEV unsigned kt_block_magic(int block_size)
{
    return (unsigned)((0x100000000ull + (unsigned)block_size - 1) / (unsigned)block_size);
}

KT_DEV int kt_key_of(int j0, int kr, int i, int kv_hi)
{
    const int want = j0 + kr + i * kKeysPass;
    return want < kv_hi ? want : kv_hi - 1;
}
KT_DEV int kt_blk_of(int key, unsigned magic) { return (int)(((unsigned long long)(unsigned)key * magic) >> 32); }
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

/* A thread's chunks into the [key][d] tile (pitch kLdK), 16-byte stores: K (kV false) as S's
 * operand type, which S = Q K^T takes as B = W[n = key][k = d] (kt_load_b); V as P V's, which O =
 * P V takes as a [k][n] tile (kt_load_b_kn). */
template <bool kV> KT_DEV void kt_store_rows(unsigned short *kv, const kt_v16 (&r)[kChunks], int kr, int col)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        unsigned short *dst = kv + (kr + i * kKeysPass) * kLdK + col;
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
            w[2 * j] = kV ? kt_kv8_pair_pv(x[j] & 0xffffu) : kt_kv8_pair(x[j] & 0xffffu);
            w[2 * j + 1] = kV ? kt_kv8_pair_pv(x[j] >> 16) : kt_kv8_pair(x[j] >> 16);
        }
        kt_sts16(dst + (sw ? 8 : 0), kt_v16_make(w[0], w[1], w[2], w[3]));
        kt_sts16(dst + (sw ? 0 : 8), kt_v16_make(w[4], w[5], w[6], w[7]));
#else
        kt_sts16(dst, r[i]);
#endif
    }
}

#ifdef KT_KV_RING
/* A ring's copies of tile j0 (a thread's keys and column, as kt_issue loads them) into stage
 * lds (the thread's first K row there; rows kLdR bytes apart, V's kRingV bytes past K's; a
 * template with a ring defines both and kEszKV); none past the segment (block-uniform),
 * the group closed either way so that every thread counts the same groups. */
KT_DEV void kt_ring_issue(unsigned lds, const unsigned char *kbase, const unsigned char *vbase, const kt_pages &p,
                          const kt_attn_args &a, unsigned magic, int j0, int kr, int kv_hi)
{
    if (j0 < kv_hi) {
#pragma unroll
        for (int i = 0; i < kChunks; i++) {
            const int key = kt_key_of(j0, kr, i, kv_hi), slot = kt_slot_of(key, magic, a.block_size);
            const long long page = p.page[i];
            kt_copy16_async(lds + i * kKeysPass * kLdR, kbase + (page * a.k_stride_block + (long long)slot * a.k_stride_slot) * kEszKV);
            kt_copy16_async(lds + kRingV + i * kKeysPass * kLdR, vbase + (page * a.v_stride_block + (long long)slot * a.v_stride_slot) * kEszKV);
        }
    }
    kt_copy_commit();
}

#endif
