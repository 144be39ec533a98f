/* kv.h: paged-attention template helpers: -inf, tanh, the e4m3 conversion, and the KV tile's
 * 16-byte chunks (global -> registers -> LDS, K as rows, V transposed). Included inside the
 * template's anonymous namespace after it defines kt_elem, KT_KV8 and the constants kD (head
 * size), kBN (keys a tile), kThreads, kChunkElems (cache elements a 16-byte chunk: 8, or 16 for
 * fp8), kChunks (chunks a thread of one K or V tile), kLdK (pitch of the K tile) and kLdV (pitch
 * of V^T). The arithmetic is decode.hip's; decode.hip keeps its own copy for now because moving
 * it here changed its compiled code (register allocation on gfx1201 and sm_90a, same arithmetic),
 * which would orphan the H200 decode sweep keyed on code hashes: fold it in with the next decode
 * sweep. */

constexpr float kLog2e = 1.4426950408889634f;

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

/* One e4m3 byte as a float (exact): OCP e4m3fn (bias 7), or e4m3fnuz (bias 8) where the target's
 * fp8 is that one (KT_FP8_FNUZ, gfx942). NaN codes are not expected in a cache. */
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

KT_DEV unsigned short kt_elem_bits(kt_elem e) { return e.bits; }

/* The cache element j of a 16-byte chunk as the element type (16-bit caches: half j of the 16
 * bytes; fp8: byte j converted, exactly). */
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

KT_DEV long long kt_kv_offset(const kt_attn_args &a, const int *bt, int j, int kvh, long long sb, int ss, int sh)
{
    const int blk = bt[j / a.block_size], slot = j % a.block_size;
    return (long long)blk * sb + (long long)slot * ss + (long long)kvh * sh;
}

/* Chunk c of the tile of keys [j0, j0 + kBN) (keys at or past kv_hi read as zeros and are masked
 * later). K chunk c: key c / (kD / kChunkElems), elements (c % (kD / kChunkElems)) * kChunkElems on
 * (a key's row read by adjacent threads, stored as rows); V chunk c: key c % kBN, elements
 * (c / kBN) * kChunkElems on (adjacent threads on adjacent keys, so the transposed LDS stores of a
 * wave land on adjacent 16-bit words). */
KT_DEV kt_v16 kt_k_chunk(const kt_attn_args &a, const int *bt, int j0, int kv_hi, int kvh, int c)
{
    constexpr int kPerKey = kD / kChunkElems;
    constexpr int kEsz = KT_KV8 ? 1 : 2;
    const int jk = j0 + c / kPerKey, ck = (c % kPerKey) * kChunkElems;
    return jk < kv_hi ? kt_ldg16((const unsigned char *)a.k_cache +
                                 (kt_kv_offset(a, bt, jk, kvh, a.k_stride_block, a.k_stride_slot, a.k_stride_head) + ck) * kEsz)
                      : kt_v16_make(0u, 0u, 0u, 0u);
}

KT_DEV kt_v16 kt_v_chunk(const kt_attn_args &a, const int *bt, int j0, int kv_hi, int kvh, int c)
{
    constexpr int kEsz = KT_KV8 ? 1 : 2;
    const int jv = j0 + c % kBN, cv = (c / kBN) * kChunkElems;
    return jv < kv_hi ? kt_ldg16((const unsigned char *)a.v_cache +
                                 (kt_kv_offset(a, bt, jv, kvh, a.v_stride_block, a.v_stride_slot, a.v_stride_head) + cv) * kEsz)
                      : kt_v16_make(0u, 0u, 0u, 0u);
}

/* K tile rows [key][d] (pitch kLdK): the B operand of S = Q K^T as W[n = key][k = d]. */
KT_DEV void kt_store_k(unsigned short *kv, const kt_v16 (&r)[kChunks], int tid)
{
    constexpr int kPerKey = kD / kChunkElems;
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int c = tid + i * kThreads;
        unsigned short *dst = kv + (c / kPerKey) * kLdK + (c % kPerKey) * kChunkElems;
#if KT_KV8
        unsigned w[8];
#pragma unroll
        for (int j = 0; j < 8; j++) w[j] = kt_chunk_elem(r[i], 2 * j) | ((unsigned)kt_chunk_elem(r[i], 2 * j + 1) << 16);
        kt_sts16(dst, kt_v16_make(w[0], w[1], w[2], w[3]));
        kt_sts16(dst + 8, kt_v16_make(w[4], w[5], w[6], w[7]));
#else
        kt_sts16(dst, r[i]);
#endif
    }
}

/* V tile transposed, [d][key] (pitch kLdV): the B operand of O = P V as W[n = d][k = key]. */
KT_DEV void kt_store_vt(unsigned short *kv, const kt_v16 (&r)[kChunks], int tid)
{
#pragma unroll
    for (int i = 0; i < kChunks; i++) {
        const int c = tid + i * kThreads;
        const int key = c % kBN, col = (c / kBN) * kChunkElems;
#pragma unroll
        for (int j = 0; j < kChunkElems; j++) kv[(col + j) * kLdV + key] = kt_chunk_elem(r[i], j);
    }
}
