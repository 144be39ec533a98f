/* rmsnorm_add.hip: vLLM's fused_add_rms_norm, in place: residual = x + residual, then
 * x = rmsnorm(residual) * weight. ABI and rounding points: templates/abi/rmsnorm.h; launch
 * geometry and law: runtime/op_rmsnorm.c. The recipe's axes (rmsnorm_add.lua) read as
 *   RB  rows a block owns; its TH threads split into RB groups of G = TH/RB threads, one a row,
 *   VW  elements a load (8: one 16-byte load, 4: one 8-byte load),
 *   TH  threads of the block,
 *   UN  VW-element packs a thread keeps in registers between the two halves of the work.
 *
 * A row is a memory stream: read x, residual and weight, write residual and x, 10 bytes an
 * element, and one reduction in the middle. Thread g of a row's group owns packs g, g + G,
 * g + 2G, ... (consecutive threads on consecutive 16 bytes: every load is coalesced). Its first
 * UN packs are loaded at once (x, residual and weight: 3*UN loads in flight before any
 * arithmetic), summed, rounded, stored to residual and kept, rounded, in registers. A row longer
 * than the variant's register capacity G*VW*UN streams through a loop instead, which stores the
 * residual and later reads it back (two passes, the second hitting L2), holding nothing: the
 * two paths' registers do not add up. The sum of
 * squares is reduced by butterfly shuffles inside a wave and, when a row spans several waves,
 * through LDS: every thread of the row then adds the row's wave partials itself in the same
 * order, so one barrier suffices and all of them hold the same scale. The second half
 * normalizes (the held packs without touching memory but for the weight already in registers),
 * rounds as vLLM does and stores x.
 *
 * Any hidden and stride are served: when hidden and x_stride are multiples of VW and the three
 * pointers VW*2-byte aligned (a grid-uniform test), packs of VW elements; otherwise the same
 * code with packs of one element. Rows past `rows` in the last block take part in the barrier
 * with nothing to do. */
#include "abi/rmsnorm.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

namespace {

constexpr int kGroup = KT_TH / KT_RB;                               /* threads a row */
constexpr int kLanes = kGroup < KT_WAVE ? kGroup : KT_WAVE;         /* of them in one wave */
constexpr int kWavesRow = kGroup > KT_WAVE ? kGroup / KT_WAVE : 1;  /* waves a row spans */

static_assert(KT_TH % KT_RB == 0 && (kGroup & (kGroup - 1)) == 0, "TH/RB threads a row, a power of two");
static_assert(kGroup <= KT_WAVE || kGroup % KT_WAVE == 0, "a row's group is whole waves or part of one");
static_assert(KT_VW == 8 || KT_VW == 4, "VW is 8 (16-byte loads) or 4 (8-byte loads)");
static_assert(KT_UN >= 1, "at least one pack a thread in registers");

/* V 16-bit elements, two a 32-bit word (V = 1: the low half of one word). */
template <int V> struct kt_pack { unsigned w[V > 1 ? V / 2 : 1]; };

template <int V> KT_DEV kt_pack<V> kt_pack_zero()
{
    kt_pack<V> p;
#pragma unroll
    for (int i = 0; i < (V > 1 ? V / 2 : 1); i++) p.w[i] = 0u;
    return p;
}

/* 8 bytes as two 32-bit words: a 64-bit integer would be packed with bfi.b64, which ptxas of
 * CUDA 13.0 miscompiles here (fp16 VW=4 on the H200 stored words 0, 1, 1, 0); both compilers
 * turn an aligned pair into one 8-byte move (st.global.v2.u32, global_store_b64). */
struct alignas(8) kt_w2 { unsigned a, b; };

/* Plain (coherent) loads: x and residual are written by this kernel. */
template <int V> KT_DEV kt_pack<V> kt_pack_load(const unsigned short *p)
{
    kt_pack<V> r;
    if constexpr (V == 8) {
        const kt_v16 v = *(const kt_v16 *)p;
        r.w[0] = v.x; r.w[1] = v.y; r.w[2] = v.z; r.w[3] = v.w;
    } else if constexpr (V == 4) {
        const kt_w2 u = *(const kt_w2 *)p;
        r.w[0] = u.a; r.w[1] = u.b;
    } else {
        r.w[0] = *p;
    }
    return r;
}

/* The weight is read-only for the kernel's lifetime: the prelude's read-only load. */
template <int V> KT_DEV kt_pack<V> kt_pack_load_ro(const unsigned short *p)
{
    if constexpr (V == 8) {
        const kt_v16 v = kt_ldg16(p);
        kt_pack<V> r;
        r.w[0] = v.x; r.w[1] = v.y; r.w[2] = v.z; r.w[3] = v.w;
        return r;
    } else {
        return kt_pack_load<V>(p);
    }
}

template <int V> KT_DEV void kt_pack_store(unsigned short *p, const kt_pack<V> &r)
{
    if constexpr (V == 8) {
        *(kt_v16 *)p = kt_v16_make(r.w[0], r.w[1], r.w[2], r.w[3]);
    } else if constexpr (V == 4) {
        kt_w2 u;
        u.a = r.w[0]; u.b = r.w[1];
        *(kt_w2 *)p = u;
    } else {
        *p = (unsigned short)r.w[0];
    }
}

template <int V> KT_DEV float kt_pack_get(const kt_pack<V> &p, int e)
{
    return kt_to_float(kt_elem{(unsigned short)(p.w[e / 2] >> (16 * (e % 2)))});
}

/* bits into element e of p, whose element e is zero */
template <int V> KT_DEV void kt_pack_put(kt_pack<V> &p, int e, unsigned short bits)
{
    p.w[e / 2] |= (unsigned)bits << (16 * (e % 2));
}

KT_DEV unsigned short kt_round(float f) { return kt_from_float<kt_elem>(f).bits; }

/* residual = rnd(x + residual) over one pack, stored; returns the rounded pack and adds its
 * squares (of the rounded values, in fp32) to ss. */
template <int V> KT_DEV kt_pack<V> kt_add_pack(const kt_pack<V> &xv, const kt_pack<V> &rv, float &ss)
{
    kt_pack<V> z = kt_pack_zero<V>();
#pragma unroll
    for (int e = 0; e < V; e++) {
        const unsigned short b = kt_round(kt_pack_get<V>(xv, e) + kt_pack_get<V>(rv, e));
        const float f = kt_to_float(kt_elem{b});
        ss += f * f;
        kt_pack_put<V>(z, e, b);
    }
    return z;
}

/* x = rnd(rnd(z * s) * w) over one pack */
template <int V> KT_DEV kt_pack<V> kt_norm_pack(const kt_pack<V> &z, const kt_pack<V> &wv, float s)
{
    kt_pack<V> o = kt_pack_zero<V>();
#pragma unroll
    for (int e = 0; e < V; e++) {
        const float n = kt_to_float(kt_elem{kt_round(kt_pack_get<V>(z, e) * s)});
        kt_pack_put<V>(o, e, kt_round(n * kt_pack_get<V>(wv, e)));
    }
    return o;
}

/* One row (or none: live false) of the group, in packs of V elements. A row of at most G*H packs
 * is read once and held; a longer one streams through twice, holding nothing (so the held path's
 * registers are not added to the loop's). Which of the two is grid-uniform. */
template <int V, int H>
KT_DEV void kt_row(unsigned short *__restrict__ xr, unsigned short *__restrict__ rr,
                   const unsigned short *__restrict__ wr, int hidden, float eps, bool live,
                   int g, int sub, float *part)
{
    const int nrow = hidden / V;
    const int npack = live ? nrow : 0;
    const bool held = nrow <= H * kGroup;

    float ss = 0.0f;
    kt_pack<V> z[H], wv[H];
    if (held) {
        /* ---- first half: every pack's loads first, then their sums ---- */
        kt_pack<V> xv[H], rv[H];
#pragma unroll
        for (int j = 0; j < H; j++) {
            const int i = g + j * kGroup;
            if (i < npack) {
                xv[j] = kt_pack_load<V>(xr + (long long)i * V);
                rv[j] = kt_pack_load<V>(rr + (long long)i * V);
                wv[j] = kt_pack_load_ro<V>(wr + (long long)i * V);
            } else {
                xv[j] = kt_pack_zero<V>(); rv[j] = kt_pack_zero<V>(); wv[j] = kt_pack_zero<V>();
            }
        }
#pragma unroll
        for (int j = 0; j < H; j++) {
            const int i = g + j * kGroup;
            z[j] = kt_add_pack<V>(xv[j], rv[j], ss);
            if (i < npack) kt_pack_store<V>(rr + (long long)i * V, z[j]);
        }
    } else {
        /* a row longer than the registers hold: the residual is stored now and read back below */
#pragma unroll 1
        for (int i = g; i < npack; i += kGroup) {
            const kt_pack<V> zz = kt_add_pack<V>(kt_pack_load<V>(xr + (long long)i * V),
                                                 kt_pack_load<V>(rr + (long long)i * V), ss);
            kt_pack_store<V>(rr + (long long)i * V, zz);
        }
    }

    /* ---- the row's sum of squares ---- */
#pragma unroll
    for (int o = kLanes / 2; o > 0; o >>= 1) ss += kt_shfl_xor(ss, o);
    if constexpr (kWavesRow > 1) {
        if (kt_lane_id() == 0) part[kt_wave_id()] = ss;
        kt_barrier();
        ss = 0.0f;
#pragma unroll
        for (int q = 0; q < kWavesRow; q++) ss += part[sub * kWavesRow + q];
    }
    const float s = 1.0f / __builtin_sqrtf(ss / (float)hidden + eps);

    /* ---- second half: normalize, weigh, store x ---- */
    if (held) {
#pragma unroll
        for (int j = 0; j < H; j++) {
            const int i = g + j * kGroup;
            if (i < npack) kt_pack_store<V>(xr + (long long)i * V, kt_norm_pack<V>(z[j], wv[j], s));
        }
    } else {
#pragma unroll 1
        for (int i = g; i < npack; i += kGroup) {
            const kt_pack<V> zz = kt_pack_load<V>(rr + (long long)i * V);
            kt_pack_store<V>(xr + (long long)i * V, kt_norm_pack<V>(zz, kt_pack_load_ro<V>(wr + (long long)i * V), s));
        }
    }
}

KT_DEV bool kt_aligned(const void *p, int bytes) { return ((unsigned long long)p & (unsigned long long)(bytes - 1)) == 0; }

} /* namespace */

KT_KERNEL(KT_KERNEL_NAME, KT_TH)(kt_rmsnorm_add_args args)
{
    KT_SHARED float part[KT_RB * kWavesRow];

    const int t = kt_thread_id();
    const int sub = t / kGroup;                 /* row of the block */
    const int g = t % kGroup;                   /* thread of the row */
    const long long row = (long long)kt_block_id_x() * KT_RB + sub;
    const bool live = row < args.rows;
    const long long r = live ? row : 0;         /* dead rows address row 0 and touch nothing */
    unsigned short *const xr = (unsigned short *)args.x + r * args.x_stride;
    unsigned short *const rr = (unsigned short *)args.residual + r * args.hidden;
    const unsigned short *const wr = (const unsigned short *)args.weight;

    /* grid-uniform: every block takes the same branch, so the barrier inside is reached by all */
    const bool vec = args.hidden % KT_VW == 0 && args.x_stride % KT_VW == 0 &&
                     kt_aligned(args.x, 2 * KT_VW) && kt_aligned(args.residual, 2 * KT_VW) &&
                     kt_aligned(args.weight, 2 * KT_VW);
    if (vec)
        kt_row<KT_VW, KT_UN>(xr, rr, wr, args.hidden, args.eps, live, g, sub, part);
    else
        kt_row<1, KT_UN>(xr, rr, wr, args.hidden, args.eps, live, g, sub, part);
}
