/* cdna.h: prelude for CDNA3 (gfx942) and CDNA2 (gfx90a), wave64,
 * v_mfma_f32_16x16x16_f16 and v_mfma_f32_16x16x16_bf16 (the "_1k" bf16 form, gfx90a and later).
 * The API is the same in every prelude (docs/templates.md); this file only says how CDNA does it.
 *
 * Fragment layouts (shared/ref/wmma-mma.md section 3, 16x16x16: E = 4 elements per lane),
 * i = row of A or column n of B = W[n][k]:
 *   A/B, 4 halves per lane: A[i][k] in lane i + 16*(k/4), element k%4.
 *   C/D f32, 4 per lane: D[i][j] in lane 16*(i/4) + j, element i%4.
 * The accumulators may be allocated in AGPRs; the compiler decides and inserts the hazard nops. */
#ifndef KT_ARCH_CDNA_H
#define KT_ARCH_CDNA_H

#ifndef KT_LAYOUT_ONLY
#define KT_WAVE 64
#endif
#include "common_amd.h"

/* ---- layout: pure index math, compiled on the host by the layout test ---- */
static constexpr int kt_frag_lanes = 64;
static constexpr int kt_frag_ab_elems = 4;  /* 16-bit elements of A (or B) per lane */
static constexpr int kt_frag_ab_run = 4;    /* all four contiguous in k: one 8-byte LDS read */
static constexpr int kt_acc_elems = 4;      /* f32 accumulator elements per lane */

KT_LAYOUT_FN int kt_frag_a_row(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_frag_a_k(int lane, int e) { return 4 * (lane / 16) + e; }
KT_LAYOUT_FN int kt_frag_b_n(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_frag_b_k(int lane, int e) { return 4 * (lane / 16) + e; }
KT_LAYOUT_FN int kt_acc_row(int lane, int i) { return 4 * (lane / 16) + i; }
KT_LAYOUT_FN int kt_acc_col(int lane, int) { return lane % 16; }

/* Direct fragments (docs/templates.md): two MFMA steps of 4 k each come from one 16-byte chunk at
 * k 8*(lane/16) of a 32-wide span; k is relabelled (s, 4q + e) -> 8q + 4s + e (q = lane/16). */
static constexpr int kt_direct_span = 32;
static constexpr int kt_direct_steps = 2;
static constexpr int kt_direct_chunks = 1;
KT_LAYOUT_FN int kt_direct_row(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_direct_k(int lane, int) { return 8 * (lane / 16); }
KT_LAYOUT_FN int kt_direct_a_src(int s, int e) { return 4 * s + e; }
KT_LAYOUT_FN int kt_direct_b_src(int s, int e) { return 4 * s + e; }

#ifndef KT_LAYOUT_ONLY

static_assert(kt_frag_ab_elems == kt_frag_ab_run && kt_frag_ab_run == 4, "the loaders read one 8-byte run");

/* Raw 16-bit bits; the element type only matters to kt_mma. */
struct kt_frag_a { kt_s16x4 v; };
struct kt_frag_b { kt_s16x4 v; };
struct kt_acc { kt_f32x4 v; };

KT_DEV void kt_acc_zero(kt_acc &c) { c.v = (kt_f32x4){0, 0, 0, 0}; }
KT_DEV float kt_acc_get(const kt_acc &c, int i) { return c.v[i]; }
KT_DEV void kt_acc_set(kt_acc &c, int i, float v) { c.v[i] = v; }

/* A 16x16 tile at t (row-major, ld elements per row; rows 8-byte aligned): one 8-byte read. */
KT_DEV void kt_load_a(kt_frag_a &f, const unsigned short *t, int ld, int lane)
{
    f.v = *(const kt_s16x4 *)(t + kt_frag_a_row(lane, 0) * ld + kt_frag_a_k(lane, 0));
}
/* t points at W[n0][k0] of a W tile stored [n][k]: B = W^T without a transpose. */
KT_DEV void kt_load_b(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    f.v = *(const kt_s16x4 *)(t + kt_frag_b_n(lane, 0) * ld + kt_frag_b_k(lane, 0));
}

#include "direct_amd.h"

template <class T> KT_DEV void kt_mma(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b);
template <> KT_DEVICE void kt_mma<kt_bf16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    c.v = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a.v, b.v, c.v, 0, 0, 0);
}
template <> KT_DEVICE void kt_mma<kt_f16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    c.v = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(kt_h16x4, a.v),
                                                __builtin_bit_cast(kt_h16x4, b.v), c.v, 0, 0, 0);
}

#endif /* KT_LAYOUT_ONLY */
#endif
