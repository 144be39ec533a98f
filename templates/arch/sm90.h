/* sm90.h: prelude for Hopper (sm_90a), warp32, mma.sync.aligned.m16n8k16 (two per 16x16x16)
 * fed by ldmatrix. Plain CUDA (nvcc -x cu); no cuda_bf16.h/cuda_fp16.h, the PTX is written out.
 * The API is the same in every prelude (docs/templates.md); this file only says how sm_90 does it.
 * (wgmma is the faster Hopper path; it needs warpgroup tiles and is a separate prelude later.)
 *
 * Layouts (shared/ref/wmma-mma.md section 4), g = lane/4, t = lane%4:
 *   A (4 regs = 8 halves a0..a7): row g + 8*((e/2)%2), k 2t + e%2 + 8*(e/4).
 *   B of one n8 half (2 regs = b0..b3): k 2t + e%2 + 8*(e/2), n g. A 16x16 B fragment is the two
 *       n8 halves, regs {0,1} for n 0-7 and {2,3} for n 8-15.
 *   C f32 of one n8 half (c0..c3): row g + 8*(e/2), col 2t + e%2. The 16x16 accumulator is the two
 *       halves, elements 0-3 for n 0-7 and 4-7 for n 8-15.
 * ldmatrix.x4 loads four 8x8 b16 matrices; lane l gives the row address of row l%8 of matrix l/8,
 * and register j of lane l receives row l/4, columns 2*(l%4) and +1 of matrix j. Choosing the
 * matrices (A: rows 0-7|8-15 x k 0-7, then k 8-15; W[n][k]: k 0-7|8-15 for n 0-7, then n 8-15)
 * makes the registers come out as the A and B fragments above, with no transpose for W. */
#ifndef KT_ARCH_SM90_H
#define KT_ARCH_SM90_H

#ifndef KT_LAYOUT_FN
#ifdef KT_LAYOUT_ONLY
#define KT_LAYOUT_FN static constexpr inline
#else
#define KT_LAYOUT_FN static constexpr inline __host__ __device__
#endif
#endif

/* ---- layout: pure index math, compiled on the host by the layout test ---- */
static constexpr int kt_frag_lanes = 32;
static constexpr int kt_acc_elems = 8;      /* f32 accumulator elements per lane */

/* Row (of A, or n of W) and k of the 16x16 tile whose address lane gives to ldmatrix.x4. */
KT_LAYOUT_FN int kt_ldsm_a_row(int lane) { return lane % 8 + 8 * ((lane / 8) % 2); }
KT_LAYOUT_FN int kt_ldsm_a_k(int lane) { return 8 * (lane / 16); }
KT_LAYOUT_FN int kt_ldsm_b_n(int lane) { return lane % 8 + 8 * (lane / 16); }
KT_LAYOUT_FN int kt_ldsm_b_k(int lane) { return 8 * ((lane / 8) % 2); }
KT_LAYOUT_FN int kt_acc_row(int lane, int i) { return lane / 4 + 8 * ((i % 4) / 2); }
KT_LAYOUT_FN int kt_acc_col(int lane, int i) { return 2 * (lane % 4) + i % 2 + 8 * (i / 4); }

/* The mma.sync m16n8k16 operand layouts as functions (what ldmatrix above produces), g = lane/4,
 * t = lane%4: A element e of 8: row g + 8*((e/2)%2), k 2t + e%2 + 8*(e/4); B (16 columns, n-half
 * h = e/4) element e of 8: column g + 8h, k 2t + e%2 + 8*((e%4)/2). */
static constexpr int kt_frag_ab_elems = 8;
KT_LAYOUT_FN int kt_frag_a_row(int lane, int e) { return lane / 4 + 8 * ((e / 2) % 2); }
KT_LAYOUT_FN int kt_frag_a_k(int lane, int e) { return 2 * (lane % 4) + e % 2 + 8 * (e / 4); }
KT_LAYOUT_FN int kt_frag_b_n(int lane, int e) { return lane / 4 + 8 * (e / 4); }
KT_LAYOUT_FN int kt_frag_b_k(int lane, int e) { return 2 * (lane % 4) + e % 2 + 8 * ((e % 4) / 2); }

/* Direct fragments (docs/templates.md, "direct fragments"): a lane reads rows g and g+8 of a
 * 16-row operand at k 8t..8t+7 of a 32-wide span, one 16-byte chunk each; MMA step s takes halves
 * 4s..4s+3 of both. The relabelling of k is (s, 2t+j) -> 8t+4s+j, (s, 2t+8+j) -> 8t+4s+2+j for
 * both operands. Every fragment register is a whole 32-bit word of a chunk. */
static constexpr int kt_direct_span = 32;
static constexpr int kt_direct_steps = 2;
static constexpr int kt_direct_chunks = 2;
KT_LAYOUT_FN int kt_direct_row(int lane, int c) { return lane / 4 + 8 * c; }
KT_LAYOUT_FN int kt_direct_k(int lane, int) { return 8 * (lane % 4); }
KT_LAYOUT_FN int kt_direct_a_src(int s, int e) { return 8 * ((e / 2) % 2) + 4 * s + 2 * (e / 4) + e % 2; }
KT_LAYOUT_FN int kt_direct_b_src(int s, int e) { return 8 * (e / 4) + 4 * s + 2 * ((e % 4) / 2) + e % 2; }

/* float32 bits -> bf16 bits, round to nearest even; NaN stays NaN (quiet bit set, sign and top
 * payload kept). Bit-identical to kt_f32_to_bf16 in tuner/half_convert.h, and to the AMD
 * preludes (cvt.rn.bf16.f32 would return a canonical NaN instead). */
KT_LAYOUT_FN unsigned short kt_bf16_bits_rne(unsigned int u)
{
    return (u & 0x7FFFFFFFu) > 0x7F800000u
               ? (unsigned short)((u >> 16) | 0x0040u)
               : (unsigned short)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

#ifndef KT_LAYOUT_ONLY

#define KT_WAVE 32
#define KT_DEVICE __device__ __forceinline__
#define KT_DEV static KT_DEVICE
#define KT_SHARED __shared__
#define KT_KERNEL(name, threads) extern "C" __global__ void __launch_bounds__(threads) name
/* the same, the register allocator told that `blocks` blocks must be resident on an SM (0: as
 * KT_KERNEL); ptxas keeps the registers under that step or spills, which the build refuses */
#define KT_KERNEL_MIN_BLOCKS(name, threads, blocks) \
    extern "C" __global__ void __launch_bounds__(threads, (blocks) > 0 ? (blocks) : 1) name

/* ---- ids (1-D blocks) ---- */
KT_DEV int kt_thread_id(void) { return (int)threadIdx.x; }
KT_DEV int kt_block_id_x(void) { return (int)blockIdx.x; }
KT_DEV int kt_block_id_y(void) { return (int)blockIdx.y; }
KT_DEV int kt_block_id_z(void) { return (int)blockIdx.z; }
KT_DEV int kt_grid_blocks_x(void) { return (int)gridDim.x; }
KT_DEV int kt_grid_blocks_y(void) { return (int)gridDim.y; }
KT_DEV int kt_lane_id(void) { return (int)threadIdx.x & 31; }
KT_DEV int kt_wave_id(void) { return (int)threadIdx.x >> 5; }
KT_DEV void kt_barrier(void) { __syncthreads(); }
/* the wave's LDS writes seen by its other lanes' reads after it */
KT_DEV void kt_wave_sync(void) { __syncwarp(); }
KT_DEV float kt_shfl_xor(float v, int mask) { return __shfl_xor_sync(0xFFFFFFFFu, v, mask); }
/* 2^x, fp32 (ex2.approx: relative error below 2^-22; -inf gives +0), for softmax. */
KT_DEV float kt_exp2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

/* ---- cross-block handoff (split-K reduced in the launch, templates/abi/gemm.h): writes made
 * visible device-wide before a counter bump, and loads that read what other blocks wrote ---- */
KT_DEV void kt_fence_device(void) { __threadfence(); }
KT_DEV unsigned kt_atomic_add_device(unsigned *p, unsigned v) { return atomicAdd(p, v); }
KT_DEV float kt_load_coherent(const float *p)
{
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p) : "memory");
    return v;
}
KT_DEV unsigned short kt_load_coherent_u16(const unsigned short *p)
{
    unsigned short v;
    asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(v) : "l"(p) : "memory");
    return v;
}

/* ---- 16-bit storage types and their conversions ---- */
struct kt_bf16 { unsigned short bits; };
struct kt_f16 { unsigned short bits; };

KT_DEV float kt_to_float(kt_bf16 h) { return __uint_as_float((unsigned)h.bits << 16); }
KT_DEV float kt_to_float(kt_f16 h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
template <class T> KT_DEV T kt_from_float(float f);
template <> KT_DEVICE kt_bf16 kt_from_float<kt_bf16>(float f) { return kt_bf16{kt_bf16_bits_rne(__float_as_uint(f))}; }
/* cvt.rn: round to nearest even, subnormals kept (no .ftz), overflow to inf. */
template <> KT_DEVICE kt_f16 kt_from_float<kt_f16>(float f)
{
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return kt_f16{h};
}

/* ---- 16-byte moves (global <-> registers <-> shared); callers guarantee 16-byte alignment.
 * A and W are read-only for the kernel's lifetime, so the non-coherent path is fine. ---- */
typedef uint4 kt_v16;
KT_DEV kt_v16 kt_v16_make(unsigned a, unsigned b, unsigned c, unsigned d) { return make_uint4(a, b, c, d); }
KT_DEV kt_v16 kt_ldg16(const void *p) { return __ldg((const uint4 *)p); }
KT_DEV void kt_sts16(void *p, kt_v16 v) { *(uint4 *)p = v; }

/* ---- 16x16x16 fragments ---- */
struct kt_frag_a { unsigned r[4]; };
struct kt_frag_b { unsigned r[4]; };
struct kt_acc { float v[8]; };

KT_DEV void kt_acc_zero(kt_acc &c)
{
#pragma unroll
    for (int i = 0; i < 8; i++) c.v[i] = 0.0f;
}
KT_DEV float kt_acc_get(const kt_acc &c, int i) { return c.v[i]; }
KT_DEV void kt_acc_set(kt_acc &c, int i, float v) { c.v[i] = v; }

KT_DEV void kt_ldsm_x4(unsigned (&r)[4], const unsigned short *p)
{
    unsigned a = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a) : "memory");
}
/* A 16x16 tile at t (row-major, ld elements per row; rows 16-byte aligned for ldmatrix). */
KT_DEV void kt_load_a(kt_frag_a &f, const unsigned short *t, int ld, int lane)
{
    kt_ldsm_x4(f.r, t + kt_ldsm_a_row(lane) * ld + kt_ldsm_a_k(lane));
}
/* t points at W[n0][k0] of a W tile stored [n][k]: B = W^T without a transpose. */
KT_DEV void kt_load_b(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    kt_ldsm_x4(f.r, t + kt_ldsm_b_n(lane) * ld + kt_ldsm_b_k(lane));
}

/* Direct fragments from the lane's chunks (layout above); s is a compile-time step after unrolling. */
KT_DEV unsigned kt_v16_word(kt_v16 v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }
KT_DEV void kt_frag_a_direct(kt_frag_a &f, const kt_v16 (&v)[kt_direct_chunks], int s)
{
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = kt_direct_a_src(s, 2 * r);
        f.r[r] = kt_v16_word(v[i / 8], (i % 8) / 2);
    }
}
KT_DEV void kt_frag_b_direct(kt_frag_b &f, const kt_v16 (&v)[kt_direct_chunks], int s)
{
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const int i = kt_direct_b_src(s, 2 * r);
        f.r[r] = kt_v16_word(v[i / 8], (i % 8) / 2);
    }
}

#define KT_MMA_M16N8K16(ty, c, a, b0, b1)                                                         \
    asm("mma.sync.aligned.m16n8k16.row.col.f32." ty "." ty ".f32 "                                \
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                                   \
        : "+f"((c)[0]), "+f"((c)[1]), "+f"((c)[2]), "+f"((c)[3])                                  \
        : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"(b0), "r"(b1))

template <class T> KT_DEV void kt_mma(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b);
template <> KT_DEVICE void kt_mma<kt_bf16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    KT_MMA_M16N8K16("bf16", c.v, a.r, b.r[0], b.r[1]);
    KT_MMA_M16N8K16("bf16", c.v + 4, a.r, b.r[2], b.r[3]);
}
template <> KT_DEVICE void kt_mma<kt_f16>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    KT_MMA_M16N8K16("f16", c.v, a.r, b.r[0], b.r[1]);
    KT_MMA_M16N8K16("f16", c.v + 4, a.r, b.r[2], b.r[3]);
}

#endif /* KT_LAYOUT_ONLY */
#endif
