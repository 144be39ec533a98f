/* attn_ref.h: the argument struct of attn_decode's float64 GPU reference (templates/ref/attn_ref.hip,
 * launched by runtime/op_attn.c's ref_gpu_launch) and the arithmetic it shares with the host: the
 * (token, head) a block owns, a key's cache element, the e4m3 decode, exp and tanh in double.
 * Plain C, included by the kernel (HIP C++/CUDA), the runtime and the unit tests (C11), so the host
 * test (tests/unit/test_op_attn.c) runs the very index math and functions the kernel runs.
 *
 * The reference computes templates/abi/attn.h's formula in double over the inputs (no rounding but
 * theirs), in the order op_attn.c's ref_cpu does, into out[(token * num_heads + head) * head_size + d]
 * (ref_cpu's `ref` layout; the tokens of every sequence, query_start_loc order). It reads every
 * field of `a` the kernels read except `scale`: the softmax scale comes in double (`scale`, the
 * host's 1/sqrt(d), which the float a.scale rounds by up to 2^-25: far over the 1e-12 at which
 * `kt worker --check-reference` holds it to ref_cpu). a.out, a.num_segments, a.partials: unused. */
#ifndef KT_ABI_ATTN_REF_H
#define KT_ABI_ATTN_REF_H
#include "attn.h"

/* The functions below run on the host (tests) and in the kernel. The same definition as
 * abi/gemm.h's (guarded: either may come first); not moved to a header of its own, since editing
 * gemm.h changes every GEMM kernel's source closure and so recompiles them all. */
#ifndef KT_ABI_FN
#if defined(__CUDACC__) && !defined(__clang__)
#define KT_ABI_FN static inline __host__ __device__
#elif defined(__CUDA__) || defined(__HIP__)
#define KT_ABI_FN static inline __attribute__((host, device))
#else
#define KT_ABI_FN static inline
#endif
#endif

/* The largest head size the reference serves: its threads own head_size / KT_ATTN_REF_THREADS
 * output elements each, in registers (runtime/op_attn.c falls back to ref_cpu above it). */
#define KT_ATTN_REF_THREADS 256
#define KT_ATTN_REF_MAX_D 1024

typedef struct kt_attn_ref_args {
    kt_attn_args a;
    double *out;                    /* [num_tokens][num_heads][head_size] */
    double scale;                   /* the softmax scale, in double */
} kt_attn_ref_args;

/* What block `row` (= token * num_heads + head) computes: its sequence, kv head and visible keys
 * [lo, pos] (causal bottom-right: pos = context + the token's index in its sequence; the window
 * keeps pos - j < window). */
typedef struct kt_attn_ref_row {
    int tok, head, kvh, seq;
    int lo, pos;
} kt_attn_ref_row;

KT_ABI_FN kt_attn_ref_row kt_attn_ref_row_of(const kt_attn_args *a, long long row)
{
    kt_attn_ref_row r;
    r.tok = (int)(row / a->num_heads);
    r.head = (int)(row % a->num_heads);
    r.kvh = r.head / (a->num_heads / a->num_kv_heads);
    /* the token's sequence: the last s with query_start_loc[s] <= tok (an empty sequence shares
     * its start with the next one, which is then the last) */
    int lo = 0, hi = a->num_seqs - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (a->query_start_loc[mid] <= r.tok) lo = mid;
        else hi = mid - 1;
    }
    r.seq = lo;
    const int q0 = a->query_start_loc[lo], qlen = a->query_start_loc[lo + 1] - q0;
    r.pos = a->seq_lens[lo] - qlen + (r.tok - q0);
    r.lo = a->window > 0 && r.pos - a->window + 1 > 0 ? r.pos - a->window + 1 : 0;
    return r;
}

/* The element offset of key j's row of kv head kvh in a cache of the given strides. */
KT_ABI_FN long long kt_attn_ref_kv_offset(const kt_attn_args *a, int seq, int j, int kvh, long long stride_block,
                                          int stride_slot, int stride_head)
{
    const int blk = a->block_table[(long long)seq * a->bt_stride + j / a->block_size];
    return (long long)blk * stride_block + (long long)(j % a->block_size) * stride_slot + (long long)kvh * stride_head;
}

/* 2^k for a normal double's exponent range (-1022 <= k <= 1023), exactly, from its bits. */
KT_ABI_FN double kt_attn_ref_pow2(int k)
{
    union { unsigned long long u; double d; } x;
    x.u = (unsigned long long)(k + 1023) << 52;
    return x.d;
}

/* One e4m3 byte's value, exactly: OCP e4m3fn (bias 7) or, fnuz != 0, e4m3fnuz (bias 8), as
 * decode.hip reads the cache (NaN codes are not expected in one). */
KT_ABI_FN double kt_attn_ref_e4m3(unsigned b, int fnuz)
{
    const int bias = fnuz ? 8 : 7, e = (int)((b >> 3) & 15u), m = (int)(b & 7u);
    /* normal (1 + m/8) 2^(e - bias), subnormal (m/8) 2^(1 - bias) */
    const double f = (double)(e ? 8 + m : m) * kt_attn_ref_pow2((e ? e : 1) - bias - 3);
    return (b & 0x80u) ? -f : f;
}

/* The series below take their coefficients 1/n from a table, inv[n] = 1/n for 1 <= n <
 * KT_ATTN_REF_NINV (inv[0] = 1), that the kernel keeps in LDS and the host in an array: as literals
 * they were ~60 double constants, which the AMD compiler hoists out of the key loops into SGPR
 * pairs (CDNA has no 64-bit literal operands), spilling SGPRs on gfx942. */
#define KT_ATTN_REF_NINV 21

KT_ABI_FN double kt_attn_ref_inverse(int n) { return n > 0 ? 1.0 / (double)n : 1.0; }

/* e^x in double without libm (the kernels build with -nogpulib): x = k ln2 + r, |r| <= ln2/2, ln2
 * split Cody-Waite (ln2_hi has 32 trailing zero bits, so k * ln2_hi is exact), e^r by its Taylor
 * series to r^13 (the remainder under 1e-17 relative) in Horner form 1 + r (1 + r/2 (1 + r/3 ...)),
 * times 2^k from the exponent bits. Within ~1 ulp of libm's: with tanh's, the reference's only
 * departure from ref_cpu. */
KT_ABI_FN double kt_attn_ref_exp(double x, const double *inv)
{
    if (x != x) return x;
    if (x < -745.2) return 0.0;                 /* below half the smallest subnormal */
    if (x > 709.78) return kt_attn_ref_pow2(1023) * 2.0;   /* over the largest double: inf */
    const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
    const double t = x * 1.44269504088896338700e+00;
    const int k = (int)(t < 0.0 ? t - 0.5 : t + 0.5);
    const double r = (x - (double)k * ln2_hi) - (double)k * ln2_lo;
    double p = 1.0;
    for (int n = 13; n >= 1; n--) p = 1.0 + p * (r * inv[n]);
    if (k >= -1022) return k <= 1023 ? p * kt_attn_ref_pow2(k) : (p * 2.0) * kt_attn_ref_pow2(k - 1);
    return (p * kt_attn_ref_pow2(k + 600)) * kt_attn_ref_pow2(-600);   /* subnormal: one rounding */
}

/* tanh in double without libm, odd: 1 - 2 / (e^{2a} + 1) from a = |x| >= 0.5 (tanh >= 0.46: the
 * subtraction loses at most a bit), below it e1 / (e1 + 2) with e1 = e^{2a} - 1 by its Taylor
 * series (2a < 1: every term positive, to y^20 / 20!, the remainder under 1e-19 relative), so
 * small arguments keep their relative precision. Within a few ulp of libm's. */
KT_ABI_FN double kt_attn_ref_tanh(double x, const double *inv)
{
    const double a = x < 0.0 ? -x : x;
    double t;
    if (!(a == a)) return x;
    if (a > 22.0) t = 1.0;                       /* 1 - tanh(22) < 2^-63 */
    else if (a >= 0.5) t = 1.0 - 2.0 / (kt_attn_ref_exp(2.0 * a, inv) + 1.0);
    else {
        const double y = 2.0 * a;
        double q = 1.0;                          /* e1 = y (1 + y/2 (1 + y/3 (1 + ...))) */
        for (int n = KT_ATTN_REF_NINV - 1; n >= 2; n--) q = 1.0 + q * (y * inv[n]);
        const double e1 = y * q;
        t = e1 / (e1 + 2.0);
    }
    return x < 0.0 ? -t : t;
}

#endif
