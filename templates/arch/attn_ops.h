/* attn_ops.h: the per-target operations the attention templates need beyond the prelude API
 * (docs/templates.md), included after the target's prelude. They live here, not in the preludes,
 * because every template's cache key hashes the headers it includes (build/closure.h): a prelude
 * edit recompiles every GEMM variant, and these serve only attention.
 *
 *   kt_load_b_kn(f, t, ld, lane)  the B fragment of a 16x16 tile stored [k][n] (pitch ld), where
 *                                 kt_load_b reads one stored [n][k]: O = P V takes V as the cache
 *                                 lays it out, keys (k) by head dims (n), with no transposed store;
 *   kt_ldg16_stream(p)            a 16-byte global load of data read once (the KV stream): not
 *                                 kept in L1 (NVIDIA), non-temporal (AMD);
 *   kt_v8, kt_ldg8_stream(p),     the same for 8 bytes (8 fp8 cache elements: one direct chunk's
 *   kt_v8_word(v, i)              worth once converted), and its 32-bit words;
 *   kt_e4m3x2_to_f16x2(x)         two OCP e4m3 bytes (the low 16 bits of x, byte 0 first) as two
 *                                 f16 in one word (byte 0 in the low half), exact (every e4m3
 *                                 value, subnormals included, is an f16); kt_e4m3x4_to_f16x4(x,
 *                                 lo, hi) a whole word's four (bytes 0-1 to lo, 2-3 to hi);
 *   kt_wave_any(p)                whether p holds on any lane of the wave (uniform over it);
 *   kt_prefetch(p)                a hint that p's line is read soon (NVIDIA: into L1; AMD: the
 *                                 backend's prefetch where the target has one, else nothing);
 *                                 (kt_prefetch_l2, into L2 only: arch/copy_ops.h);
 *   kt_grid_dependency_wait()     a kernel launched early (runtime/backend.h ktb_launch_early)
 *                                 waits until the grid before it has finished and its writes are
 *                                 visible; kt_grid_launch_dependents() lets the launch after this
 *                                 kernel begin once every block has said so or exited. NVIDIA:
 *                                 griddepcontrol; AMD (no such launch: stream order): nothing;
 *   kt_mul_wide(a, b)             a 32 x 32 -> 64-bit unsigned product, one instruction where the
 *                                 compiler would otherwise multiply 64 x 64 (a loop-invariant
 *                                 operand's zero extension is out of its sight on NVPTX);
 *   kt_load_v8_kn(f, t, ld, lane) (NVIDIA, sm_89+) P V's B fragment from a raw fp8 [key][d]
 *                                 tile, 16 keys x 16 d, n tile 0 the even d and 1 the odd ones;
 *   kt_e4m3x2_to_bf16x2(x)        the same as two bf16, exact (the 254 finite codes; NaN is not
 *                                 kept on sm_90, as on AMD: a cache holds none);
 *   KT_E4M3_F16_ONE_OP            1 where e4m3 -> f16 is one instruction a pair and e4m3 -> bf16
 *                                 several (sm_89+), 0 where both are the same bit trick (AMD);
 *   KT_F8_MMA                     1 where the target's matrix instruction takes OCP e4m3 operands
 *                                 (sm_89+ mma.sync m16n8k32, gfx12's 16x16x16 fp8 WMMA); 0
 *                                 elsewhere (gfx11 has none, gfx942's takes FNUZ e4m3). Where 1:
 *   kt_mma<kt_e4m3x2>(c, a, b)    a 16x16 tile over 32 e4m3 k whose fragments were loaded as
 *                                 16-bit ones (kt_load_a, kt_load_b): each 16-bit element holds two
 *                                 k-adjacent e4m3 bytes, the lower k in the lower byte. A and B see
 *                                 the same k in the same bytes, so the sum is the product's;
 *   kt_f32x2_to_e4m3x2(lo, hi)    two floats as e4m3 bytes (lo in byte 0), rounded to nearest
 *                                 even, saturated; kt_e4m3_to_f32(x) the low byte of x, exact;
 *   KT_ATTN_KERNEL(name, threads) the kernel's declaration: KT_KERNEL's, and where the recipe's OB
 *                                 axis (KT_OB) is above 0, the register allocator told that OB
 *                                 blocks must be resident on an SM, as CUTLASS's
 *                                 kernels set `__launch_bounds__(threads, blocks)`: ptxas, left
 *                                 alone, spends registers on the tail past an occupancy step
 *                                 (launch bounds' minimum blocks; NVIDIA only).
 * The index math is KT_LAYOUT_FN, checked on the CPU by tests/unit/test_fragment_layouts.cpp (which
 * includes this file once per prelude: each branch has its own guard). */

#if defined(KT_ARCH_SM90_H) && !defined(KT_ARCH_ATTN_OPS_NV_H)
#define KT_ARCH_ATTN_OPS_NV_H
#define KT_E4M3_F16_ONE_OP 1
#if defined(KT_OB) && KT_OB > 0
#define KT_ATTN_KERNEL(name, threads) extern "C" __global__ void __launch_bounds__(threads, KT_OB) name
#else
#define KT_ATTN_KERNEL(name, threads) KT_KERNEL(name, threads)
#endif

/* ldmatrix .trans: lane l addresses row k = l % 8 + 8 * ((l / 8) % 2), column n = 8 * (l / 16) of
 * the [k][n] tile, so the four 8x8 matrices land in r[0..3] as kt_load_b leaves them from [n][k]. */
KT_LAYOUT_FN int kt_ldsm_kn_k(int lane) { return lane % 8 + 8 * ((lane / 8) % 2); }
KT_LAYOUT_FN int kt_ldsm_kn_n(int lane) { return 8 * (lane / 16); }
/* KR's relabelling (decode.hip: raw fp8 K and V read as 16-bit elements, converted at use). S: a
 * lane's ldmatrix word of a 16-key x 32-d raw chunk holds d 4t..4t+3 of one key, its low pair k
 * step A's and its high pair step B's, so Q's A fragment element e (rows g, g + 8) of step s is d
 * kt_kr_q_d(lane, e, s) of the chunk. P V: n tile 0 of a 16-d group holds the even d, tile 1 the
 * odd ones (kt_load_v8_kn), so O's accumulator element e is d kt_o_col_v8(lane, e) of the group. */
KT_LAYOUT_FN int kt_kr_q_d(int lane, int e, int s) { return 4 * (lane % 4) + 2 * s + e % 2 + 16 * (e / 4); }
KT_LAYOUT_FN int kt_o_col_v8(int lane, int e) { return 4 * (lane % 4) + 2 * (e % 2) + (e % 8) / 4; }
/* P V's byte permute (kt_load_v8_kn): byte b of the permuted word is byte kt_v8_pair_src(b) of the
 * transposed ldmatrix word (keys 2t, 2t + 1 at d 2g, then at d 2g + 1), so each 16-bit half
 * holds one d's two keys, the pair one conversion takes; kt_v8_pair_sel is prmt's selector */
KT_LAYOUT_FN int kt_v8_pair_src(int b) { return 2 * (b % 2) + b / 2; }
KT_LAYOUT_FN unsigned kt_v8_pair_sel(void)
{
    return (unsigned)(kt_v8_pair_src(0) | kt_v8_pair_src(1) << 4 | kt_v8_pair_src(2) << 8 | kt_v8_pair_src(3) << 12);
}
/* two e4m3 bytes (byte 0 first) placed as bf16 bits of the value times 2^-120 (below) */
KT_LAYOUT_FN unsigned kt_e4m3x2_bf16_bits(unsigned x)
{
    return ((x & 0x7fu) << 4) | ((x & 0x80u) << 8) | ((x & 0x7f00u) << 12) | ((x & 0x8000u) << 16);
}

#ifndef KT_LAYOUT_ONLY
KT_DEV kt_v16 kt_ldg16_stream(const void *p)
{
    kt_v16 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
    return v;
}

KT_DEV bool kt_wave_any(bool p) { return __any_sync(0xFFFFFFFFu, p) != 0; }
KT_DEV void kt_prefetch(const void *p) { asm volatile("prefetch.global.L1 [%0];" ::"l"(p)); }
KT_DEV void kt_grid_dependency_wait(void) { asm volatile("griddepcontrol.wait;" ::: "memory"); }
KT_DEV void kt_grid_launch_dependents(void) { asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); }

KT_DEV unsigned long long kt_mul_wide(unsigned a, unsigned b)
{
    unsigned long long r;
    asm("mul.wide.u32 %0, %1, %2;" : "=l"(r) : "r"(a), "r"(b));
    return r;
}

typedef uint2 kt_v8;
KT_DEV unsigned kt_v8_word(kt_v8 v, int i) { return i == 0 ? v.x : v.y; }
KT_DEV kt_v8 kt_ldg8_stream(const void *p)
{
    kt_v8 v;
    asm volatile("ld.global.nc.L1::no_allocate.v2.u32 {%0,%1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

KT_DEV void kt_load_b_kn(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(t + kt_ldsm_kn_k(lane) * ld + kt_ldsm_kn_n(lane));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(f.r[0]), "=r"(f.r[1]), "=r"(f.r[2]), "=r"(f.r[3])
                 : "r"(a) : "memory");
}

/* sm_89 and later convert e4m3 pairs in one instruction (the upper byte to the upper half). */
KT_DEV unsigned kt_e4m3x2_to_f16x2(unsigned x)
{
    unsigned r;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"((unsigned short)x));
    return r;
}
/* a word's two pairs, its halves taken where they lie (ptxas selects the upper half in the
 * conversion itself; x >> 16 into a 16-bit operand cost a shift a pair: ncu on the fp8 d256
 * register form, 5.8 SHF a key of its 63 instructions) */
KT_DEV void kt_e4m3x4_to_f16x4(unsigned x, unsigned &lo, unsigned &hi)
{
    asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.rn.f16x2.e4m3x2 %0, l;\n\tcvt.rn.f16x2.e4m3x2 %1, h;\n\t}"
        : "=r"(lo), "=r"(hi) : "r"(x));
}
/* V's raw fp8 [key][d] tile as P V's B fragments (decode.hip's KR, sm_89 and later): keys 0-15 x d
 * 0-15 from t (pitch ld 16-bit elements), read with one transposed ldmatrix of 16-bit elements,
 * so a lane's word h holds keys 8h + 2t and 8h + 2t + 1 at d 2g and 2g + 1; one byte permute a
 * word pairs the keys, and the two conversions give the B fragments of two n tiles: ev the even d
 * (column g is d 2g), od the odd ones (d 2g + 1) */
KT_DEV void kt_load_v8_kn(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
    const unsigned a = (unsigned)__cvta_generic_to_shared(t + (lane % 16) * ld);
    unsigned w[2];
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(w[0]), "=r"(w[1]) : "r"(a) : "memory");
#pragma unroll
    for (int h = 0; h < 2; h++) {
        unsigned p;
        asm("prmt.b32 %0, %1, 0, %2;" : "=r"(p) : "r"(w[h]), "n"(kt_v8_pair_sel()));
        kt_e4m3x4_to_f16x4(p, f.r[h], f.r[2 + h]);
    }
}
#define KT_F8_MMA 1
struct kt_e4m3x2 { unsigned short bits; };
/* m16n8k32's e4m3 A and B fragments are m16n8k16's 16-bit ones with each 16-bit element's two
 * bytes as two k-adjacent elements: the loaders serve both */
#define KT_MMA_M16N8K32_E4M3(c, a, b0, b1)                                                        \
    asm("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "                                    \
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                                   \
        : "+f"((c)[0]), "+f"((c)[1]), "+f"((c)[2]), "+f"((c)[3])                                  \
        : "r"((a)[0]), "r"((a)[1]), "r"((a)[2]), "r"((a)[3]), "r"(b0), "r"(b1))
template <> KT_DEVICE void kt_mma<kt_e4m3x2>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    KT_MMA_M16N8K32_E4M3(c.v, a.r, b.r[0], b.r[1]);
    KT_MMA_M16N8K32_E4M3(c.v + 4, a.r, b.r[2], b.r[3]);
}
KT_DEV unsigned kt_f32x2_to_e4m3x2(float lo, float hi)
{
    unsigned short r;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(hi), "f"(lo));   /* the first to the upper byte */
    return r;
}
KT_DEV float kt_e4m3_to_f32(unsigned x) { return kt_to_float(kt_f16{(unsigned short)kt_e4m3x2_to_f16x2(x & 0xffu)}); }

/* e4m3 -> bf16: the seven magnitude bits of each byte at bf16's exponent-low and mantissa-high
 * bits, the sign at bf16's: the value times 2^-120 (biases 7 and 127; a subnormal stays one), so
 * one bf16x2 multiply by 2^120 finishes both halves (about five instructions a pair, where cvt
 * to f16 and on through f32 takes seven). */
KT_DEV unsigned kt_e4m3x2_to_bf16x2(unsigned x)
{
    unsigned r;
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(kt_e4m3x2_bf16_bits(x)), "r"(0x7b807b80u));
    return r;
}
#endif

#elif !defined(KT_ARCH_SM90_H) && !defined(KT_ARCH_ATTN_OPS_AMD_H)
#define KT_ARCH_ATTN_OPS_AMD_H
#define KT_E4M3_F16_ONE_OP 0
/* OB is not offered on AMD (gen/recipe.c t.occupancy_fits: LLVM's allocator aims at an occupancy itself) */
#if defined(KT_OB) && KT_OB > 0
#error "OB above 0 on an AMD target: gen offers it on NVIDIA only"
#endif
#define KT_ATTN_KERNEL(name, threads) KT_KERNEL(name, threads)

/* The seven magnitude bits of each byte placed at f16's exponent-low and mantissa-high bits, the
 * sign at f16's: the value times 2^-8 (e4m3's bias 7 against f16's 15; an e4m3 subnormal becomes
 * an f16 subnormal with the same factor), so one packed multiply by 256 finishes both halves.
 * gfx12's v_cvt_pk_f32_fp8 is OCP too, but gfx942's is fnuz and gfx11 has none: one exact path. */
KT_LAYOUT_FN unsigned kt_e4m3x2_f16_bits(unsigned x)
{
    return ((x & 0x7fu) << 7) | ((x & 0x80u) << 8) | ((x & 0x7f00u) << 15) | ((x & 0x8000u) << 16);
}

#ifndef KT_LAYOUT_ONLY
KT_DEV kt_v16 kt_ldg16_stream(const void *p) { return __builtin_nontemporal_load((const kt_v16 *)p); }
/* a butterfly of the prelude's shuffle: the ballot builtins are not in every clang that builds
 * for AMD here (hipcc's for gfx90a has no __builtin_amdgcn_ballot_w64) */
KT_DEV bool kt_wave_any(bool p)
{
    float x = p ? 1.0f : 0.0f;
#pragma unroll
    for (int b = 1; b < KT_WAVE; b *= 2) {
        const float y = kt_shfl_xor(x, b);
        x = x > y ? x : y;
    }
    return x != 0.0f;
}
/* gfx12's global prefetch where the backend has one; elsewhere nothing */
KT_DEV void kt_prefetch(const void *p) { __builtin_prefetch(p); }
KT_DEV void kt_grid_dependency_wait(void) {}
KT_DEV void kt_grid_launch_dependents(void) {}
/* v_mad_u64_u32 from the zero extensions */
KT_DEV unsigned long long kt_mul_wide(unsigned a, unsigned b) { return (unsigned long long)a * b; }
typedef unsigned kt_v8 __attribute__((ext_vector_type(2)));
KT_DEV unsigned kt_v8_word(kt_v8 v, int i) { return v[i]; }
KT_DEV kt_v8 kt_ldg8_stream(const void *p) { return __builtin_nontemporal_load((const kt_v8 *)p); }

/* fragment element e of lane sits at (kt_frag_b_k, kt_frag_b_n) of the [k][n] tile */
KT_DEV void kt_load_b_kn(kt_frag_b &f, const unsigned short *t, int ld, int lane)
{
#pragma unroll
    for (int e = 0; e < kt_frag_ab_elems; e++) f.v[e] = (short)t[kt_frag_b_k(lane, e) * ld + kt_frag_b_n(lane, e)];
}

/* f16 denormals are preserved in HIP kernels, so the multiply is exact for every code. */
typedef _Float16 kt_h16x2 __attribute__((ext_vector_type(2)));
KT_DEV unsigned kt_e4m3x2_to_f16x2(unsigned x)
{
    const kt_h16x2 two_pow8 = {(_Float16)256.0f, (_Float16)256.0f};
    return __builtin_bit_cast(unsigned, __builtin_bit_cast(kt_h16x2, kt_e4m3x2_f16_bits(x)) * two_pow8);
}
KT_DEV void kt_e4m3x4_to_f16x4(unsigned x, unsigned &lo, unsigned &hi)
{
    lo = kt_e4m3x2_to_f16x2(x & 0xffffu);
    hi = kt_e4m3x2_to_f16x2(x >> 16);
}
/* through f16 and f32 (no bf16 arithmetic on gfx12): the top half of each float is the bf16 */
KT_DEV unsigned kt_e4m3x2_to_bf16x2(unsigned x)
{
    const unsigned h = kt_e4m3x2_to_f16x2(x);
    const unsigned lo = __builtin_bit_cast(unsigned, kt_to_float(kt_f16{(unsigned short)(h & 0xffffu)})) >> 16;
    const unsigned hi = __builtin_bit_cast(unsigned, kt_to_float(kt_f16{(unsigned short)(h >> 16)})) & 0xffff0000u;
    return lo | hi;
}

#ifdef KT_ARCH_GFX12_H
#define KT_F8_MMA 1
struct kt_e4m3x2 { unsigned short bits; };
typedef int kt_i32x4 __attribute__((ext_vector_type(4)));
/* gfx12's fp8 WMMA is 16x16x16: a lane's eight 16-bit elements are 16 e4m3 k, the first four
 * (its first 8 bytes) one instruction's k, the last four the next's, for A and B alike */
template <> KT_DEVICE void kt_mma<kt_e4m3x2>(kt_acc &c, const kt_frag_a &a, const kt_frag_b &b)
{
    const kt_i32x4 x = __builtin_bit_cast(kt_i32x4, a.v), y = __builtin_bit_cast(kt_i32x4, b.v);
    c.v = __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(x.xy, y.xy, c.v);
    c.v = __builtin_amdgcn_wmma_f32_16x16x16_fp8_fp8_w32_gfx12(x.zw, y.zw, c.v);
}
KT_DEV unsigned kt_f32x2_to_e4m3x2(float lo, float hi) { return (unsigned)__builtin_amdgcn_cvt_pk_fp8_f32(lo, hi, 0, false) & 0xffffu; }
KT_DEV float kt_e4m3_to_f32(unsigned x) { return __builtin_amdgcn_cvt_f32_fp8((int)x, 0); }
#else
#define KT_F8_MMA 0
#endif
#endif

#endif
