/* prefill_ops.h: how each target holds FlashAttention's two products in registers, so that P goes
 * from the score accumulators into the P V operand without LDS (prefill.hip; included after the
 * prelude and arch/attn_ops.h). Per target a score tile is either S = Q K^T (NVIDIA: mma.sync's
 * accumulator layout is its A layout, element for element) or S^T = K Q^T (AMD: every AMD
 * accumulator holds one column a lane, which is where a B operand wants one row, so S^T read as
 * P^T feeds O^T = V^T P^T). O shares S's orientation, so one pair of maps serves both:
 *   kt_s_q(lane, i)        the query (row of S, of O) accumulator element i of a lane holds,
 *   kt_s_n(lane, i)        its key (S) or head-dim column (O);
 *   kt_p_src_lane/elem     where P operand element e of a lane comes from: a score element of the
 *                          same lane, except on gfx11, whose operands are replicated over the
 *                          half-waves and whose accumulators split even and odd rows between
 *                          them (one exchange across the halves);
 *   kt_pv_key(lane, e)     the key P operand element e holds; gfx12's A/B layout interleaves k in
 *                          fours where its accumulator runs rows in eights, so the register-for-
 *                          register P holds keys in another order, and V's operand is read in
 *                          that order (the product sums over the same 16 keys);
 * and on the device
 *   kt_score_mma<T>(s, q, k)  s += the score tile of Q's A fragment (kt_load_a of [q][d]) and K's
 *                          B fragment (kt_load_b of [key][d]),
 *   kt_p_frag<T>(p, s)     the P operand from a tile of probabilities in the score layout,
 *                          rounded to T,
 *   kt_load_v(f, t, ld, lane)  V's operand of 16 keys x 16 columns of a [key][d] tile,
 *   kt_pv_mma<T>(o, p, v)  o += that tile's share of P V, in the output orientation;
 *   and arch/copy_ops.h's LDS at launch and global -> LDS copies;
 *   kt_fmax(a, b)          the larger, one instruction (a select on a compare is two);
 *   kt_round2<T>(lo, hi)   two floats rounded to T in one word, lo in the low half (one
 *                          instruction on NVIDIA).
 * The maps are KT_LAYOUT_FN, checked on the CPU by tests/unit/test_fragment_layouts.cpp against
 * a product emulated from the preludes' operand layouts. No include guard: that test includes it
 * once per prelude namespace. */

#if defined(KT_ARCH_SM90_H)
KT_LAYOUT_FN int kt_s_q(int lane, int i) { return kt_acc_row(lane, i); }
KT_LAYOUT_FN int kt_s_n(int lane, int i) { return kt_acc_col(lane, i); }
KT_LAYOUT_FN int kt_p_src_lane(int lane, int) { return lane; }
KT_LAYOUT_FN int kt_p_src_elem(int, int e) { return e; }
#else
KT_LAYOUT_FN int kt_s_q(int lane, int i) { return kt_acc_col(lane, i); }
KT_LAYOUT_FN int kt_s_n(int lane, int i) { return kt_acc_row(lane, i); }
/* gfx11, told apart by its layout (its operands carry twice the accumulator's elements): P
 * element e (key e) of query lane % 16 has key parity e % 2, which sits in half-wave e % 2, as
 * element e / 2 */
static constexpr bool kt_ab_replicated = kt_frag_ab_elems == 2 * kt_acc_elems;
KT_LAYOUT_FN int kt_p_src_lane(int lane, int e) { return kt_ab_replicated ? lane % 16 + 16 * (e % 2) : lane; }
KT_LAYOUT_FN int kt_p_src_elem(int, int e) { return kt_ab_replicated ? e / 2 : e; }
#endif
KT_LAYOUT_FN int kt_pv_key(int lane, int e) { return kt_s_n(kt_p_src_lane(lane, e), kt_p_src_elem(lane, e)); }

/* the operations (tests/unit/emu_prelude.h has its own: the host emulation runs them per the
 * maps above, in the emulated target's orientation) */
#if !defined(KT_LAYOUT_ONLY) && !defined(KT_EMU_PRELUDE_H)
#include "arch/copy_ops.h"
#if defined(KT_ARCH_SM90_H)
KT_DEV float kt_fmax(float a, float b)
{
    float r;
    asm("max.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

template <class T> KT_DEV void kt_score_mma(kt_acc &s, const kt_frag_a &q, const kt_frag_b &k) { kt_mma<T>(s, q, k); }
template <class T> KT_DEV void kt_pv_mma(kt_acc &o, const kt_frag_a &p, const kt_frag_b &v) { kt_mma<T>(o, p, v); }
KT_DEV void kt_load_v(kt_frag_b &f, const unsigned short *t, int ld, int lane) { kt_load_b_kn(f, t, ld, lane); }

/* register j of the A fragment holds elements 2j (low half) and 2j + 1: one paired convert each
 * (round to nearest even, as kt_from_float; P is finite) */
KT_DEV unsigned kt_pack2(kt_bf16, float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
KT_DEV unsigned kt_pack2(kt_f16, float lo, float hi)
{
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}
template <class T> KT_DEV void kt_p_frag(kt_frag_a &p, const kt_acc &s)
{
#pragma unroll
    for (int j = 0; j < 4; j++) p.r[j] = kt_pack2(T{}, s.v[2 * j], s.v[2 * j + 1]);
}
template <class T> KT_DEV unsigned kt_round2(float lo, float hi) { return kt_pack2(T{}, lo, hi); }
#else
KT_DEV float kt_fmax(float a, float b) { return __builtin_fmaxf(a, b); }
template <class T> KT_DEV unsigned kt_round2(float lo, float hi)
{
    return kt_from_float<T>(lo).bits | (unsigned)kt_from_float<T>(hi).bits << 16;
}

template <class T> KT_DEV void kt_score_mma(kt_acc &s, const kt_frag_a &q, const kt_frag_b &k)
{
    kt_mma<T>(s, kt_frag_a{k.v}, kt_frag_b{q.v});
}
template <class T> KT_DEV void kt_pv_mma(kt_acc &o, const kt_frag_a &p, const kt_frag_b &v)
{
    kt_mma<T>(o, kt_frag_a{v.v}, kt_frag_b{p.v});
}
/* V^T's A operand: row = head-dim column lane % 16, k slot e holding key kt_pv_key */
KT_DEV void kt_load_v(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
#pragma unroll
    for (int e = 0; e < kt_frag_ab_elems; e++) f.v[e] = (short)t[kt_pv_key(lane, e) * ld + kt_frag_a_row(lane, e)];
}
template <class T> KT_DEV void kt_p_frag(kt_frag_a &p, const kt_acc &s)
{
    float other[kt_acc_elems];   /* gfx11: the other half-wave's elements (dead code elsewhere) */
    const bool lower = kt_lane_id() < 16;
    if (kt_ab_replicated) {
#pragma unroll
        for (int i = 0; i < kt_acc_elems; i++) other[i] = kt_shfl_xor(kt_acc_get(s, i), 16);
    }
#pragma unroll
    for (int e = 0; e < kt_frag_ab_elems; e++) {
        const float x = !kt_ab_replicated ? kt_acc_get(s, e)
                        : (e % 2 == 0) == lower ? kt_acc_get(s, e / 2) : other[e / 2];
        p.v[e] = (short)kt_from_float<T>(x).bits;
    }
}
#endif
#endif
