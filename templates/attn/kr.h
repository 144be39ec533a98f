/* kr.h: S = Q K^T and O = P V over an fp8 e4m3 cache's raw bytes in LDS, shared by decode.hip and
 * decode_ws.hip. Included inside the template's anonymous namespace after attn/kv.h.
 *
 * Where e4m3 -> f16 is one instruction a pair (KT_E4M3_F16_ONE_OP: NVIDIA), K's and V's tiles stay
 * as the cache holds them (rows of d bytes) and are converted where the products read them (KR):
 * S's B fragments come from a 16-key x 32-d chunk in one ldmatrix (the bytes read as 16-bit
 * elements), a lane's word holding d 4t..4t+3 of one key, whose low f16 pair serves k step A and
 * high pair step B; Q's A fragments are read relabelled to match (arch/attn_ops.h kt_kr_q_d). S runs
 * in f16 there: a bf16 Q is converted once (kt_bf16x8_to_f16x8). P V's B fragments come from V's
 * raw tile (arch/attn_ops.h kt_load_v8_kn: a 16-d group's even d as the first n tile, its odd d as
 * the second), so O's columns within a 16-d group are relabelled (kt_o_col_v8). */
#ifndef KT_ATTN_KR_H
#define KT_ATTN_KR_H

/* two bf16 as two f16 (S in f16 over a bf16 q), clamped to f16's range; NaN stays NaN */
KT_DEV unsigned kt_bf16x2_to_f16x2(unsigned w)
{
    float x[2] = {kt_bits_float(w << 16), kt_bits_float(w & 0xffff0000u)};
#pragma unroll
    for (int i = 0; i < 2; i++) x[i] = x[i] > 65504.0f ? 65504.0f : (x[i] < -65504.0f ? -65504.0f : x[i]);
    return kt_from_float<kt_f16>(x[0]).bits | (unsigned)kt_from_float<kt_f16>(x[1]).bits << 16;
}
KT_DEV kt_v16 kt_bf16x8_to_f16x8(kt_v16 v)
{
    return kt_v16_make(kt_bf16x2_to_f16x2(kt_v16_word(v, 0)), kt_bf16x2_to_f16x2(kt_v16_word(v, 1)),
                       kt_bf16x2_to_f16x2(kt_v16_word(v, 2)), kt_bf16x2_to_f16x2(kt_v16_word(v, 3)));
}

#if KT_E4M3_F16_ONE_OP
/* KR's Q fragments of one 32-d chunk (q at the M tile's row 0 and the chunk's first d, rows ld
 * elements apart): step A the pairs d 4t, 4t + 1 and 16 + 4t, 16 + 4t + 1 of rows g and g + 8 (the
 * m16n8k16 A layout's k 2t and 2t + 8, relabelled as KR's B fragments are), step B the next pairs */
KT_DEV void kt_q_kr(kt_frag_a &qa, kt_frag_a &qb, const unsigned short *q, int ld, int lane)
{
    /* rows kt_frag_a_row (g, g + 8); a lane's four contiguous d from kt_kr_q_d(lane, 0, 0), and 16 on */
    const unsigned short *r0 = q + kt_frag_a_row(lane, 0) * ld + kt_kr_q_d(lane, 0, 0), *r1 = r0 + 8 * ld;
    const uint2 a = *(const uint2 *)r0, b = *(const uint2 *)r1, c = *(const uint2 *)(r0 + 16), d = *(const uint2 *)(r1 + 16);
    qa.r[0] = a.x; qa.r[1] = b.x; qa.r[2] = c.x; qa.r[3] = d.x;
    qb.r[0] = a.y; qb.r[1] = b.y; qb.r[2] = c.y; qb.r[3] = d.y;
}
/* KR's B fragments of a 16-key x 32-d chunk of K's raw tile (kt at the chunk's first key and byte,
 * rows ld 16-bit elements apart) */
KT_DEV void kt_k_kr(kt_frag_b &fa, kt_frag_b &fb, const unsigned short *kt, int ld, int lane)
{
    kt_frag_b raw;
    kt_load_b(raw, kt, ld, lane);
#pragma unroll
    for (int j = 0; j < 4; j++) kt_e4m3x4_to_f16x4(raw.r[j], fa.r[j], fb.r[j]);
}
#endif
#endif
