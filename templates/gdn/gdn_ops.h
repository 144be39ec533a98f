/* gdn_ops.h: what the GDN templates (decode.hip, prefill.hip) share, included after the prelude and
 * the ABI: the element type the recipe's dtype names, its rounding, SiLU and the gates
 * (templates/abi/gdn.h, step 2). No include guard: the host emulation includes a template once per
 * variant namespace (tests/unit/gdn_emu_variant.inc). */

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

namespace {

KT_DEV float kt_elem_f(const void *p, long long i) { return kt_to_float(kt_elem{((const unsigned short *)p)[i]}); }
KT_DEV unsigned short kt_elem_bits(float f) { return kt_from_float<kt_elem>(f).bits; }
KT_DEV float kt_rnd(float f) { return kt_to_float(kt_from_float<kt_elem>(f)); }
KT_DEV float kt_silu(float x) { return x / (1.0f + __builtin_expf(-x)); }

/* g = -exp(A_log) softplus(a + dt_bias) (softplus(x) = x above 20), beta = sigmoid(b), for value
 * head h of the token whose a/b row starts at element r */
KT_DEV void kt_gdn_gates(const void *a, const void *b, const float *A_log, const float *dt_bias, long long r, int h,
                         float &g, float &beta)
{
    const float x = kt_elem_f(a, r + h) + dt_bias[h];
    const float sp = x > 20.0f ? x : __builtin_logf(1.0f + __builtin_expf(x));
    g = -__builtin_expf(A_log[h]) * sp;
    beta = 1.0f / (1.0f + __builtin_expf(-kt_elem_f(b, r + h)));
}

} /* namespace */
