/* gfx11.h: prelude for RDNA3 (gfx1100), wave32, v_wmma_f32_16x16x16_{bf16,f16}.
 * The API is the same in every prelude (docs/templates.md); this file only says how RDNA3 does it.
 *
 * Fragment layouts (shared/ref/wmma-mma.md section 1), i = row of A or column n of B = W[n][k]:
 *   A/B, 16 halves per lane, REPLICATED: lane i and lane i+16 both hold the whole row A[i][0..15]
 *       (element k). The hardware reads one copy; feeding the halves different data is wrong.
 *   C/D f32, 8 per lane: D[i][j] in lane 16*(i%2) + j, element i/2 (even rows in lanes 0-15, odd
 *       rows in lanes 16-31; gfx12 splits rows 0-7 / 8-15 instead). */
#ifndef KT_ARCH_GFX11_H
#define KT_ARCH_GFX11_H

#ifndef KT_LAYOUT_ONLY
#define KT_WAVE 32
/* kt_barrier without the fences that drain global loads (common_amd.h) */
#define KT_AMD_BARRIER_ASM "s_waitcnt lgkmcnt(0)\n\ts_barrier"
#endif
#include "common_amd.h"

/* ---- layout: pure index math, compiled on the host by the layout test ---- */
static constexpr int kt_frag_lanes = 32;
static constexpr int kt_frag_ab_elems = 16; /* 16-bit elements of A (or B) per lane */
static constexpr int kt_frag_ab_run = 8;    /* elements contiguous in k: one 16-byte LDS read */
static constexpr int kt_acc_elems = 8;      /* f32 accumulator elements per lane */

KT_LAYOUT_FN int kt_frag_a_row(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_frag_a_k(int, int e) { return e; }
KT_LAYOUT_FN int kt_frag_b_n(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_frag_b_k(int, int e) { return e; }
KT_LAYOUT_FN int kt_acc_row(int lane, int i) { return 2 * i + lane / 16; }
KT_LAYOUT_FN int kt_acc_col(int lane, int) { return lane % 16; }

/* Direct fragments (docs/templates.md): a lane holds a whole 16-k row (replicated across the
 * half-waves), so it reads it as two 16-byte chunks and k is not relabelled. */
static constexpr int kt_direct_span = 16;
static constexpr int kt_direct_steps = 1;
static constexpr int kt_direct_chunks = 2;
KT_LAYOUT_FN int kt_direct_row(int lane, int) { return lane % 16; }
KT_LAYOUT_FN int kt_direct_k(int, int c) { return 8 * c; }
KT_LAYOUT_FN int kt_direct_a_src(int, int e) { return e; }
KT_LAYOUT_FN int kt_direct_b_src(int, int e) { return e; }

#ifndef KT_LAYOUT_ONLY

static_assert(kt_frag_ab_elems == 2 * kt_frag_ab_run && kt_frag_ab_run == 8, "the loaders read two 16-byte runs");

/* Raw 16-bit bits; the element type only matters to kt_mma. */
struct kt_frag_a { kt_s16x16 v; };
struct kt_frag_b { kt_s16x16 v; };
struct kt_acc { kt_f32x8 v; };

KT_DEV void kt_acc_zero(kt_acc &c) { c.v = (kt_f32x8){0, 0, 0, 0, 0, 0, 0, 0}; }
KT_DEV float kt_acc_get(const kt_acc &c, int i) { return c.v[i]; }
KT_DEV void kt_acc_set(kt_acc &c, int i, float v) { c.v[i] = v; }

/* A 16x16 tile at t (row-major, ld elements per row; rows 16-byte aligned): two 16-byte reads,
 * one per contiguous run of the layout above. */
KT_DEV kt_s16x16 kt_lds_frag32(const unsigned short *t, int ld, int r0, int k0, int r1, int k1)
{
    kt_s16x8 lo = *(const kt_s16x8 *)(t + r0 * ld + k0);
    kt_s16x8 hi = *(const kt_s16x8 *)(t + r1 * ld + k1);
    return __builtin_shufflevector(lo, hi, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}
KT_DEV void kt_load_a(kt_frag_a &f, const unsigned short *t, int ld, int lane)
{
    f.v = kt_lds_frag32(t, ld, kt_frag_a_row(lane, 0), kt_frag_a_k(lane, 0),
                        kt_frag_a_row(lane, 8), kt_frag_a_k(lane, 8));
}
/* t points at W[n0][k0] of a W tile stored [n][k]: B = W^T without a transpose. */
KT_DEV void kt_load_b(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    f.v = kt_lds_frag32(t, ld, kt_frag_b_n(lane, 0), kt_frag_b_k(lane, 0),
                        kt_frag_b_n(lane, 8), kt_frag_b_k(lane, 8));
}

#include "direct_amd.h"

template <class T> KT_DEV void kt_mma(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b);
template <> KT_DEVICE void kt_mma<kt_bf16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    c.v = __builtin_amdgcn_wmma_f32_16x16x16_bf16_w32(a.v, b.v, c.v);
}
template <> KT_DEVICE void kt_mma<kt_f16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    c.v = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(__builtin_bit_cast(kt_h16x16, a.v),
                                                     __builtin_bit_cast(kt_h16x16, b.v), c.v);
}

#endif /* KT_LAYOUT_ONLY */
#endif
