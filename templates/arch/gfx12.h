/* gfx12.h: prelude for RDNA4 (gfx1200, gfx1201), wave32, v_wmma_f32_16x16x16_{bf16,f16}.
 * The API is the same in every prelude (docs/templates.md); this file only says how RDNA4 does it.
 *
 * Fragment layouts (shared/ref/wmma-mma.md section 2), i = row of A or column n of B = W[n][k]:
 *   A/B, 8 halves per lane: A[i][k] in lane i + 16*((k/4)%2), element 4*(k/8) + k%4, so lanes
 *       0-15 hold k = 0-3, 8-11 and lanes 16-31 hold k = 4-7, 12-15 (no replication on gfx12).
 *   C/D f32, 8 per lane: D[i][j] in lane 16*(i/8) + j, element i%8 (rows 0-7 in the low half-wave,
 *       rows 8-15 in the high one; gfx11 splits even/odd rows instead). */
#ifndef KT_ARCH_GFX12_H
#define KT_ARCH_GFX12_H

#ifndef KT_LAYOUT_ONLY
#define KT_WAVE 32
/* kt_barrier without the fences that drain global loads (common_amd.h) */
#define KT_AMD_BARRIER_ASM "s_wait_dscnt 0x0\n\ts_barrier_signal -1\n\ts_barrier_wait -1"
#endif
#include "common_amd.h"

/* ---- layout: pure index math, compiled on the host by the layout test ---- */
static constexpr int kt_frag_lanes = 32;
static constexpr int kt_frag_ab_elems = 8;  /* 16-bit elements of A (or B) per lane */
static constexpr int kt_frag_ab_run = 4;    /* elements that are contiguous in k: one 8-byte LDS read */
static constexpr int kt_acc_elems = 8;      /* f32 accumulator elements per lane */

KT_LAYOUT_FN int kt_frag_a_row(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_frag_a_k(int lane, int e) { return 8 * (e / 4) + 4 * (lane / 16) + e % 4; }
KT_LAYOUT_FN int kt_frag_b_n(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_frag_b_k(int lane, int e) { return 8 * (e / 4) + 4 * (lane / 16) + e % 4; }
KT_LAYOUT_FN int kt_acc_row(int lane, int i) { return i + 8 * (lane / 16); }
KT_LAYOUT_FN int kt_acc_col(int lane, int) { return lane % 16; }

/* Direct fragments (docs/templates.md): a lane already holds 8 k of one row; reading them as
 * one 16-byte chunk at k 8*(lane/16) relabels k as 8*(e/4) + 4h + e%4 -> 8h + e (h = lane/16). */
static constexpr int kt_direct_span = 16;
static constexpr int kt_direct_steps = 1;
static constexpr int kt_direct_chunks = 1;
KT_LAYOUT_FN int kt_direct_row(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_direct_k(int lane, int) { return 8 * (lane / 16); }
KT_LAYOUT_FN int kt_direct_a_src(int, int e) { return e; }
KT_LAYOUT_FN int kt_direct_b_src(int, int e) { return e; }

#ifndef KT_LAYOUT_ONLY

static_assert(kt_frag_ab_elems == 2 * kt_frag_ab_run && kt_frag_ab_run == 4, "the loaders read two 8-byte runs");

/* Raw 16-bit bits; the element type only matters to kt_mma. */
struct kt_frag_a { kt_s16x8 v; };
struct kt_frag_b { kt_s16x8 v; };
struct kt_acc { kt_f32x8 v; };

KT_DEV void kt_acc_zero(kt_acc &c) { c.v = (kt_f32x8){0, 0, 0, 0, 0, 0, 0, 0}; }
KT_DEV float kt_acc_get(const kt_acc &c, int i) { return c.v[i]; }
KT_DEV void kt_acc_set(kt_acc &c, int i, float v) { c.v[i] = v; }

/* A 16x16 tile at t (row-major, ld elements per row; rows 8-byte aligned): two 8-byte reads,
 * one per contiguous run of the layout above. */
KT_DEV kt_s16x8 kt_lds_frag16(const unsigned short *t, int ld, int r0, int k0, int r1, int k1)
{
    kt_s16x4 lo = *(const kt_s16x4 *)(t + r0 * ld + k0);
    kt_s16x4 hi = *(const kt_s16x4 *)(t + r1 * ld + k1);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7);
}
KT_DEV void kt_load_a(kt_frag_a &f, const unsigned short *t, int ld, int lane)
{
    f.v = kt_lds_frag16(t, ld, kt_frag_a_row(lane, 0), kt_frag_a_k(lane, 0),
                        kt_frag_a_row(lane, 4), kt_frag_a_k(lane, 4));
}
/* t points at W[n0][k0] of a W tile stored [n][k]: B = W^T without a transpose. */
KT_DEV void kt_load_b(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    f.v = kt_lds_frag16(t, ld, kt_frag_b_n(lane, 0), kt_frag_b_k(lane, 0),
                        kt_frag_b_n(lane, 4), kt_frag_b_k(lane, 4));
}

#include "direct_amd.h"

template <class T> KT_DEV void kt_mma(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b);
template <> KT_DEVICE void kt_mma<kt_bf16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    c.v = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32_gfx12(a.v, b.v, c.v);
}
template <> KT_DEVICE void kt_mma<kt_f16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    c.v = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(__builtin_bit_cast(kt_h16x8, a.v),
                                                          __builtin_bit_cast(kt_h16x8, b.v), c.v);
}

#endif /* KT_LAYOUT_ONLY */
#endif
