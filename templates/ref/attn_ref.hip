/* attn_ref.hip: the float64 GPU reference of paged attention (ops attn_decode and attn_prefill). The tuner
 * verifies every variant against it at the problem's real shape (ref_cpu, the same arithmetic on
 * the CPU, would take minutes at batch 256 x 128K keys); `kt worker --check-reference` holds it to
 * ref_cpu. ABI and shared arithmetic: templates/abi/attn_ref.h; launch: runtime/attn_common.c
 * (kt_attn_ref_gpu_dims, for attn_decode's and attn_prefill's sets alike).
 *
 * Block = one (query token, query head), row = token * num_heads + head of the grid's x; 256
 * threads. It follows ref_cpu step for step, so the two differ only by exp/tanh's last bits:
 *   q -> LDS in double once;
 *   pass 1: thread t scores keys lo + t, lo + t + 256, ... (its own dot product, d sequential
 *           exact products: bf16/fp16/e4m3 products fit a double's 53 bits, so the sum is ref_cpu's
 *           bit for bit) and keeps their maximum; a tree in LDS takes the block's, then the sink;
 *   pass 2: per chunk of 256 keys each thread scores its key again (the same bits), writes
 *           w = e^(s - m) and the key's V row offset to LDS; then every thread walks the chunk in
 *           key order, adding w to l and w * v[d] * v_scale to the output elements it owns
 *           (d = t, t + 256, ...): the sums run in ref_cpu's order.
 * Scores are recomputed rather than stored (128K doubles a row would not fit LDS; the reference
 * has no workspace). Per key a thread reads K in 16-byte loads when the cache is 16-byte aligned
 * (it is for every verification set), else element by element.
 * Cost (an estimate, not yet measured): at batch 256 x 16 heads x 128K keys x d 256, ~7e11 FP64
 * operations and conversions (the dot twice, the V sum once) at the H200's ~1.7e13/s, plus 40 GB
 * (L2 sharing K/V among a kv head's query heads) to 600 GB (none) of cache reads: 0.1-0.3 s, where
 * ref_cpu takes minutes. */
#include "abi/attn_ref.h"
#include "attn/dtype.h"              /* kt_elem and KT_KV8 from the dtype axis, as the kernels */

namespace {

constexpr int kThreads = KT_ATTN_REF_THREADS;
constexpr int kMaxD = KT_ATTN_REF_MAX_D;
constexpr int kOwn = kMaxD / kThreads;              /* output elements a thread owns, at most */
constexpr int kEsz = KT_KV8 ? 1 : 2;                /* cache bytes an element */
constexpr int kPerWord = 4 / kEsz;                  /* cache elements a 32-bit word */
#ifdef KT_FP8_FNUZ
constexpr int kFnuz = 1;
#else
constexpr int kFnuz = 0;
#endif

static_assert(kOwn * kThreads == kMaxD, "the head splits evenly over the threads");

/* cache element bits (an e4m3 byte, or 16-bit bits) as a double, exactly */
KT_DEV double kt_ref_kv(unsigned bits)
{
#if KT_KV8
    return kt_attn_ref_e4m3(bits & 0xffu, kFnuz);
#else
    kt_elem e;
    e.bits = (unsigned short)bits;
    return (double)kt_to_float(e);
#endif
}

KT_DEV double kt_ref_kv_at(const unsigned char *row, int e)
{
#if KT_KV8
    return kt_ref_kv(row[e]);
#else
    return kt_ref_kv(((const unsigned short *)row)[e]);
#endif
}

struct kt_ref_smem {
    double q[kMaxD];
    double red[kThreads];
    double w[kThreads];
    long long voff[kThreads];
    double inv[KT_ATTN_REF_NINV];                   /* the series' 1/n (abi/attn_ref.h) */
};

/* Key j's score: scale * k_scale * (q . k_j), soft-capped; ref_cpu's expression, in its order. */
KT_DEV double kt_ref_score(const kt_attn_ref_args &ra, const kt_attn_ref_row &r, const double *q, const double *inv,
                           int j, bool vec, double ks, double cap)
{
    const kt_attn_args &a = ra.a;
    const long long off = kt_attn_ref_kv_offset(&a, r.seq, j, r.kvh, a.k_stride_block, a.k_stride_slot, a.k_stride_head);
    const unsigned char *row = (const unsigned char *)a.k_cache + off * kEsz;
    const int d = a.head_size;
    double dot = 0.0;
    if (vec) {
        for (int c = 0; c < d; c += 16 / kEsz) {
            const kt_v16 v = kt_ldg16(row + c * kEsz);
#pragma unroll
            for (int w = 0; w < 4; w++) {
                const unsigned x = kt_v16_word(v, w);
#pragma unroll
                for (int b = 0; b < kPerWord; b++) dot += q[c + w * kPerWord + b] * kt_ref_kv(x >> (8 * kEsz * b));
            }
        }
    } else {
        for (int e = 0; e < d; e++) dot += q[e] * kt_ref_kv_at(row, e);
    }
    double v = dot * ks * ra.scale;
    if (cap > 0.0) v = cap * kt_attn_ref_tanh(v / cap, inv);
    return v;
}

} // namespace

KT_KERNEL(KT_KERNEL_NAME, kThreads)(kt_attn_ref_args ra)
{
    KT_SHARED kt_ref_smem sm;
    const kt_attn_args &a = ra.a;
    const int tid = kt_thread_id();
    const long long row = kt_block_id_x();
    if (row >= (long long)a.num_tokens * a.num_heads) return;
    const int d = a.head_size;
    if (d > kMaxD) return;                            /* the host never launches it so */
    const kt_attn_ref_row r = kt_attn_ref_row_of(&a, row);
    const double ks = (double)a.k_scale, vs = (double)a.v_scale, cap = (double)a.softcap;
    /* 16-byte K loads: every key row starts 16-byte aligned (d is a multiple of 16) */
    const bool vec = ((unsigned long long)a.k_cache % 16 == 0) && (a.k_stride_block * kEsz) % 16 == 0 &&
                     ((long long)a.k_stride_slot * kEsz) % 16 == 0 && ((long long)a.k_stride_head * kEsz) % 16 == 0;

    const unsigned short *q = (const unsigned short *)a.q + (long long)r.tok * a.q_stride_tok + (long long)r.head * a.q_stride_head;
    for (int e = tid; e < d; e += kThreads) {
        kt_elem x;
        x.bits = q[e];
        sm.q[e] = (double)kt_to_float(x);
    }
    if (tid < KT_ATTN_REF_NINV) sm.inv[tid] = kt_attn_ref_inverse(tid);
    kt_barrier();

    /* pass 1: the row maximum, with the sink's logit */
    double mx = -kt_attn_ref_pow2(1023) * 2.0;        /* -inf */
    for (int j = r.lo + tid; j <= r.pos; j += kThreads) {
        const double s = kt_ref_score(ra, r, sm.q, sm.inv, j, vec, ks, cap);
        mx = s > mx ? s : mx;
    }
    sm.red[tid] = mx;
    kt_barrier();
    for (int half = kThreads / 2; half >= 1; half /= 2) {
        if (tid < half && sm.red[tid + half] > sm.red[tid]) sm.red[tid] = sm.red[tid + half];
        kt_barrier();
    }
    mx = sm.red[0];
    if (a.sinks && (double)a.sinks[r.head] > mx) mx = (double)a.sinks[r.head];

    /* pass 2: l and the weighted V sum, keys in order */
    double l = a.sinks ? kt_attn_ref_exp((double)a.sinks[r.head] - mx, sm.inv) : 0.0;
    double acc[kOwn];
#pragma unroll
    for (int i = 0; i < kOwn; i++) acc[i] = 0.0;
    const unsigned char *vc = (const unsigned char *)a.v_cache;
    for (int c0 = r.lo; c0 <= r.pos; c0 += kThreads) {
        const int j = c0 + tid;
        if (j <= r.pos) {
            sm.w[tid] = kt_attn_ref_exp(kt_ref_score(ra, r, sm.q, sm.inv, j, vec, ks, cap) - mx, sm.inv);
            sm.voff[tid] = kt_attn_ref_kv_offset(&a, r.seq, j, r.kvh, a.v_stride_block, a.v_stride_slot, a.v_stride_head);
        }
        kt_barrier();
        const int n = r.pos - c0 + 1 < kThreads ? r.pos - c0 + 1 : kThreads;
        for (int i = 0; i < n; i++) {
            const double w = sm.w[i];
            const unsigned char *vrow = vc + sm.voff[i] * kEsz;
            l += w;
#pragma unroll
            for (int k = 0; k < kOwn; k++) {
                const int e = tid + k * kThreads;
                if (e < d) acc[k] += w * kt_ref_kv_at(vrow, e) * vs;
            }
        }
        kt_barrier();                                 /* the chunk's w and offsets are consumed */
    }
    double *out = ra.out + row * d;
#pragma unroll
    for (int k = 0; k < kOwn; k++) {
        const int e = tid + k * kThreads;
        if (e < d) out[e] = l > 0.0 ? acc[k] / l : 0.0;
    }
}
