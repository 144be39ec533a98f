/* gdn_ops.h: what the GDN templates (decode.hip, prefill.hip) share, included after the prelude and
 * the ABI: the element type the recipe's dtype names, its rounding, the targets' fast exp, rsqrt,
 * log2, reciprocal and SiLU, the gates (templates/abi/gdn.h, step 2), and a hand-off's count and
 * fence. No include guard: the host emulation includes a template once per variant namespace
 * (tests/unit/gdn_emu_variant.inc). */

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

namespace {

KT_DEV float kt_elem_f(const void *p, long long i) { return kt_to_float(kt_elem{((const unsigned short *)p)[i]}); }
KT_DEV unsigned short kt_elem_bits(float f) { return kt_from_float<kt_elem>(f).bits; }

/* a value rounded to the dtype (round to nearest even): one conversion on NVIDIA (the pair form,
 * as arch/prefill_ops.h's kt_round2: the single one moved prefill's _wy over its 128 registers),
 * where the prelude's kt_elem_bits rounds in software as AMD must (six instructions) */
#if defined(KT_ARCH_SM90_H) && !defined(KT_EMU_PRELUDE_H)
KT_DEV unsigned short kt_bits_of(kt_bf16, float x)
{
    unsigned r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(0.0f), "f"(x));
    return (unsigned short)(r & 0xffffu);
}
KT_DEV unsigned short kt_bits_of(kt_f16, float x)
{
    unsigned r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(0.0f), "f"(x));
    return (unsigned short)(r & 0xffffu);
}
KT_DEV unsigned short kt_bits(float x) { return kt_bits_of(kt_elem{}, x); }
#else
KT_DEV unsigned short kt_bits(float x) { return kt_elem_bits(x); }
#endif
KT_DEV float kt_rnd(float x) { return kt_to_float(kt_elem{kt_bits(x)}); }

/* e^x for decays and the gates: the target's 2^x approximation (relative error near 2^-22) */
KT_DEV float kt_exp_fast(float x) { return kt_exp2(1.44269504088896341f * x); }

/* One unary approximation a target: the emulation's libm form, NVIDIA's PTX instruction, AMD's
 * builtin (defined once: this header is included once a variant namespace in the emulation) */
#ifndef KT_GDN_FAST_UNARY
#if defined(KT_EMU_PRELUDE_H)
#define KT_GDN_FAST_UNARY(name, emu, ptx, amd) KT_DEV float name(float x) { return emu; }
#elif defined(KT_ARCH_SM90_H)
#define KT_GDN_FAST_UNARY(name, emu, ptx, amd) \
    KT_DEV float name(float x) { float y; asm(ptx " %0, %1;" : "=f"(y) : "f"(x)); return y; }
#else
#define KT_GDN_FAST_UNARY(name, emu, ptx, amd) KT_DEV float name(float x) { return amd(x); }
#endif
#endif

/* 1 / sqrt(x), x > 0, for the L2 and RMS norms (NVIDIA rsqrt.approx, relative error near 2^-22;
 * AMD v_rsq_f32, 1 ulp), where an IEEE square root and division cost a few dozen dependent
 * instructions on the decode step's one-token path; log2(x), x > 0 (lg2.approx; AMD llvm.log2,
 * v_log_f32 where the argument is normal: __builtin_amdgcn_logf is not in hipcc 5.2's clang 15) */
KT_GDN_FAST_UNARY(kt_rsqrt_fast, 1.0f / sqrtf(x), "rsqrt.approx.ftz.f32", __builtin_amdgcn_rsqf)
KT_GDN_FAST_UNARY(kt_log2_fast, log2f(x), "lg2.approx.ftz.f32", __builtin_log2f)

/* 1 / x: the target's approximation */
KT_DEV float kt_rcp_fast(float x)
{
#if defined(KT_EMU_PRELUDE_H)
    return 1.0f / x;
#elif defined(KT_ARCH_SM90_H)
    return __fdividef(1.0f, x);
#else
    return __builtin_amdgcn_rcpf(x);
#endif
}

/* A count taken by one thread whose answer is read later: *p + 1 at device scope, relaxed,
 * returning the old value. NVIDIA: atom.inc, which ptxas does not aggregate over the warp (an add,
 * atomicAdd's or the PTX's own, it does, broadcasting the old value by a shuffle right after the
 * atomic: the warp waited the round trip where the count was taken). */
KT_DEV unsigned kt_count_relaxed(unsigned *p)
{
#if defined(KT_ARCH_SM90_H) && !defined(KT_EMU_PRELUDE_H)
    unsigned old;
    asm volatile("atom.relaxed.gpu.global.inc.u32 %0, [%1], %2;" : "=r"(old) : "l"(p), "r"(0xffffffffu));
    return old;
#else
    return kt_atomic_add_device(p, 1u);
#endif
}

/* The fence a hand-off needs on either side (the writer's before its count, the reader's after
 * it): NVIDIA acq_rel at device scope (__threadfence is the sequentially consistent one); AMD and
 * the emulation the prelude's */
KT_DEV void kt_fence_acq_rel(void)
{
#if defined(KT_ARCH_SM90_H) && !defined(KT_EMU_PRELUDE_H)
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
#else
    kt_fence_device();
#endif
}

/* SiLU where its result is rounded to the dtype next (the conv's outputs, out's gate): the
 * target's 2^x and reciprocal approximations (relative error near 2^-22, far below the rounding),
 * where x / (1 + e^-x) costs an IEEE division and expf's range reduction, most of the conv's
 * instructions */
KT_DEV float kt_silu_fast(float x)
{
    const float d = 1.0f + kt_exp2(-1.44269504088896341f * x);
#if defined(KT_EMU_PRELUDE_H)
    return x / d;
#elif defined(KT_ARCH_SM90_H)
    return __fdividef(x, d);
#else
    return x * __builtin_amdgcn_rcpf(d);
#endif
}

/* The gates of value head h from its inputs as loaded, raw (decode issues them beside its other
 * loads and converts them after): g = -exp(A_log) softplus(a + dt_bias) (softplus(x) = x above
 * 20), beta = sigmoid(b), by the targets' exp2 / log2 / reciprocal approximations (a decode step's
 * one-token path waited on IEEE log and exp); kt_gdn_gates, of the token whose a/b row starts at
 * element r */
struct kt_gdn_gate_in { unsigned short a, b; float A_log, dt_bias; };
KT_DEV void kt_gdn_gates_of(const kt_gdn_gate_in &in, float &g, float &beta)
{
    const float x = kt_to_float(kt_elem{in.a}) + in.dt_bias;
    const float sp = x > 20.0f ? x : 0.69314718055994531f * kt_log2_fast(1.0f + kt_exp_fast(x));
    g = -kt_exp_fast(in.A_log) * sp;
    beta = kt_rcp_fast(1.0f + kt_exp_fast(-kt_to_float(kt_elem{in.b})));
}
KT_DEV void kt_gdn_gates(const void *a, const void *b, const float *A_log, const float *dt_bias, long long r, int h,
                         float &g, float &beta)
{
    const kt_gdn_gate_in in{((const unsigned short *)a)[r + h], ((const unsigned short *)b)[r + h], A_log[h], dt_bias[h]};
    kt_gdn_gates_of(in, g, beta);
}

} /* namespace */
