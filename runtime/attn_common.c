/* attn_common.c: the paged-attention descriptors' shared parts (attn_common.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attn_common.h"
#include "../templates/abi/attn_ref.h"
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "../tuner/half_convert.h"
#include "../tuner/random_inputs.h"

const char *const kt_attn_dtypes[KT_ATTN_NDTYPES] = {"bf16", "fp16", "bf16_e4m3", "fp16_e4m3"};

int kt_attn_kv8(int dtype) { return dtype == KT_ATTN_BF16_E4M3 || dtype == KT_ATTN_FP16_E4M3; }
int kt_attn_fp16(int dtype) { return dtype == KT_ATTN_FP16 || dtype == KT_ATTN_FP16_E4M3; }

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

/* "<op>: <message>" into err */
#define ARG_FAIL(...)                                                                              \
    do {                                                                                           \
        const int n_ = snprintf(err, errlen, "%s: ", op);                                          \
        if (n_ >= 0 && (size_t)n_ < errlen) snprintf(err + n_, errlen - (size_t)n_, __VA_ARGS__);  \
        return KT_EINVAL;                                                                          \
    } while (0)

int kt_attn_check_args(const kt_attn_args *a, const char *op, char *err, size_t errlen)
{
    if (!a) ARG_FAIL("NULL args");
    if (!a->q) ARG_FAIL("q is NULL");
    if (!a->out) ARG_FAIL("out is NULL");
    if (!a->k_cache || !a->v_cache) ARG_FAIL("%s is NULL", a->k_cache ? "v_cache" : "k_cache");
    if (!a->block_table) ARG_FAIL("block_table is NULL");
    if (!a->seq_lens) ARG_FAIL("seq_lens is NULL");
    if (!a->query_start_loc) ARG_FAIL("query_start_loc is NULL");
    if (a->num_seqs < 1) ARG_FAIL("num_seqs = %d, must be >= 1", a->num_seqs);
    if (a->num_tokens < a->num_seqs) ARG_FAIL("num_tokens = %d is below num_seqs = %d", a->num_tokens, a->num_seqs);
    if (a->num_kv_heads < 1 || a->num_heads < a->num_kv_heads || a->num_heads % a->num_kv_heads)
        ARG_FAIL("num_heads = %d is not a multiple of num_kv_heads = %d", a->num_heads, a->num_kv_heads);
    if (a->head_size < 16 || a->head_size % 16) ARG_FAIL("head_size = %d, must be a multiple of 16", a->head_size);
    if (a->block_size < 2) ARG_FAIL("block_size = %d, must be >= 2", a->block_size);
    /* the kernels divide a key by block_size as a 32-bit multiply-high, exact below this */
    if ((long long)a->max_seq_len * a->block_size >= (1LL << 32))
        ARG_FAIL("max_seq_len = %d times block_size = %d must be below 2^32", a->max_seq_len, a->block_size);
    /* and a row r of a kv head's g x max_query_len rows by g (its token, its head of the group),
     * exact while r x g < 2^32; the reduce divides a (token, head) row in 32 bits */
    const long long g = a->num_heads / a->num_kv_heads;
    if (g * g * a->max_query_len >= (1LL << 32))
        ARG_FAIL("max_query_len = %d times (num_heads / num_kv_heads = %lld) squared must be below 2^32",
                 a->max_query_len, g);
    if ((long long)a->num_tokens * a->num_heads >= (1LL << 31))
        ARG_FAIL("num_tokens = %d times num_heads = %d must be below 2^31", a->num_tokens, a->num_heads);
    if (a->max_query_len < 1 || a->max_query_len > a->num_tokens)
        ARG_FAIL("max_query_len = %d, must be in [1, num_tokens = %d]", a->max_query_len, a->num_tokens);
    if (a->max_seq_len < a->max_query_len) ARG_FAIL("max_seq_len = %d is below max_query_len = %d", a->max_seq_len, a->max_query_len);
    if ((long long)a->num_tokens > (long long)a->num_seqs * a->max_query_len)
        ARG_FAIL("num_tokens = %d is over num_seqs x max_query_len = %lld", a->num_tokens,
                 (long long)a->num_seqs * a->max_query_len);
    /* 16-byte loads of q and of the caches (out is written an element at a time) */
    if ((uintptr_t)a->q % 16) ARG_FAIL("q is not 16-byte aligned");
    if ((uintptr_t)a->k_cache % 16 || (uintptr_t)a->v_cache % 16)
        ARG_FAIL("%s is not 16-byte aligned", (uintptr_t)a->k_cache % 16 ? "k_cache" : "v_cache");
    if (a->bt_stride < ceil_div(a->max_seq_len, a->block_size))
        ARG_FAIL("bt_stride = %d holds fewer than the %lld blocks of max_seq_len = %d", a->bt_stride,
                 ceil_div(a->max_seq_len, a->block_size), a->max_seq_len);
    if (a->window < 0) ARG_FAIL("window = %d, must be >= 0 (0: none)", a->window);
    if (!(a->softcap >= 0.0f) || isinf(a->softcap)) ARG_FAIL("softcap = %g, must be finite and >= 0", (double)a->softcap);
    if (!(a->scale > 0.0f) || isinf(a->scale)) ARG_FAIL("scale = %g, must be finite and > 0", (double)a->scale);
    if (!(a->k_scale > 0.0f) || !(a->v_scale > 0.0f) || isinf(a->k_scale) || isinf(a->v_scale))
        ARG_FAIL("k_scale = %g, v_scale = %g: must be finite and > 0", (double)a->k_scale, (double)a->v_scale);
    /* 16-byte moves: 8 16-bit elements (16 fp8 ones, whose strides are checked by the kernel's
     * dtype at bind; 16 divides every stride vLLM's caches have) */
    const long long q_strides[] = {a->q_stride_tok, a->q_stride_head, a->o_stride_tok, a->o_stride_head};
    const char *q_names[] = {"q_stride_tok", "q_stride_head", "o_stride_tok", "o_stride_head"};
    for (int i = 0; i < 4; i++)
        if (q_strides[i] < 1 || q_strides[i] % 8) ARG_FAIL("%s = %lld, must be a positive multiple of 8", q_names[i], q_strides[i]);
    const long long kv_strides[] = {a->k_stride_block, a->k_stride_slot, a->k_stride_head,
                                    a->v_stride_block, a->v_stride_slot, a->v_stride_head};
    const char *kv_names[] = {"k_stride_block", "k_stride_slot", "k_stride_head", "v_stride_block", "v_stride_slot", "v_stride_head"};
    for (int i = 0; i < 6; i++)
        if (kv_strides[i] < 1 || kv_strides[i] % 16) ARG_FAIL("%s = %lld, must be a positive multiple of 16", kv_names[i], kv_strides[i]);
    /* the kernels take a page's offset as a 32 x 32 -> 64-bit product (a block of any cache vLLM
     * lays out is far smaller) */
    for (int i = 0; i < 6; i++)
        if (kv_strides[i] > INT32_MAX) ARG_FAIL("%s = %lld, must be below 2^31 elements", kv_names[i], kv_strides[i]);
    /* and a slot's offset within its block in bytes as a 32-bit product */
    for (int i = 0; i < 2; i++) {
        const long long slot = i ? a->v_stride_slot : a->k_stride_slot;
        if (slot * a->block_size * 2 > INT32_MAX)
            ARG_FAIL("%s = %lld times block_size = %d: a block's slots must span below 2^30 elements", i ? "v_stride_slot" : "k_stride_slot",
                     slot, a->block_size);
    }
    return KT_OK;
}

void kt_attn_deal_blocks(const int32_t *lens, int batch, int bs, int max_blocks, int num_blocks, uint64_t seed, int32_t *bt)
{
    int32_t *perm = malloc((size_t)num_blocks * sizeof *perm);
    if (!perm) { memset(bt, 0xff, (size_t)batch * max_blocks * sizeof *bt); return; }
    for (int i = 0; i < num_blocks; i++) perm[i] = i;
    uint64_t s = seed;
    for (int i = num_blocks - 1; i > 0; i--) {
        const int j = (int)(kt_rand_splitmix64(&s) % (uint64_t)(i + 1));
        const int32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    int next = 0;
    for (int i = 0; i < batch; i++) {
        const int nb = (int)ceil_div(lens[i], bs);
        for (int b = 0; b < max_blocks; b++) bt[(size_t)i * max_blocks + b] = b < nb ? perm[next++] : -1;
    }
    free(perm);
}

/* An e4m3 byte of magnitude 2^-4 .. 3.75 (exponent field 3..8): never zero, never NaN. */
static uint8_t attn_rand_e4m3(uint64_t *rng)
{
    const uint64_t r = kt_rand_splitmix64(rng);
    return (uint8_t)(((r & 1) << 7) | ((3 + (r >> 1) % 6) << 3) | ((r >> 8) & 7));
}

double kt_attn_e4m3_value(uint8_t b)
{
    const int e = (b >> 3) & 15, m = b & 7;
    const double f = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return (b & 0x80) ? -f : f;
}

void kt_attn_fill_values(int dtype, int cache, void *host, size_t bytes, uint64_t *rng)
{
    if (cache && kt_attn_kv8(dtype))
        for (size_t j = 0; j < bytes; j++) ((uint8_t *)host)[j] = attn_rand_e4m3(rng);
    else
        for (size_t j = 0; j < bytes / 2; j++) ((uint16_t *)host)[j] = kt_rand_input(kt_attn_fp16(dtype), rng);
}

void kt_attn_fill_sinks(float *sinks, size_t n, uint64_t *rng)
{
    for (size_t j = 0; j < n; j++) sinks[j] = (float)((double)(kt_rand_splitmix64(rng) >> 11) * 0x1p-53 * 4.0 - 2.0);
}

static double attn_q_val(int dtype, uint16_t h) { return kt_attn_fp16(dtype) ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }

static double attn_kv_val(int dtype, const void *cache, size_t i)
{
    if (kt_attn_kv8(dtype)) return kt_attn_e4m3_value(((const uint8_t *)cache)[i]);
    return attn_q_val(dtype, ((const uint16_t *)cache)[i]);
}

void kt_attn_ref_f64(const kt_attn_ref_set *r, double *ref)
{
    const int d = r->d, g = r->g, hkv = r->hkv, heads = g * hkv;
    int max_len = 1;
    for (int sq = 0; sq < r->batch; sq++) max_len = r->lens[sq] > max_len ? r->lens[sq] : max_len;
    double *s = malloc((size_t)max_len * sizeof *s);
    double *acc = malloc((size_t)d * sizeof *acc);
    if (!s || !acc) {
        free(s); free(acc);
        for (size_t i = 0; i < (size_t)r->qsl[r->batch] * heads * d; i++) ref[i] = NAN;
        return;
    }
    for (int sq = 0; sq < r->batch; sq++) {
        const int qlen = r->qsl[sq + 1] - r->qsl[sq], len = r->lens[sq], ctx = len - qlen;
        for (int t = 0; t < qlen; t++) {
            const int pos = ctx + t, tok = r->qsl[sq] + t;
            const int lo = r->window > 0 && pos - r->window + 1 > 0 ? (int)(pos - r->window + 1) : 0;
            for (int h = 0; h < heads; h++) {
                const int kvh = h / g;
                const uint16_t *qv = r->q + (size_t)tok * (size_t)r->q_stride_tok + (size_t)h * d;
                double mx = r->sinks ? (double)r->sinks[h] : -INFINITY;
                for (int j = lo; j <= pos; j++) {
                    const size_t base = (((size_t)r->bt[(size_t)sq * r->bt_stride + j / r->bs] * r->bs + j % r->bs) * hkv + kvh) * d;
                    double dot = 0.0;
                    for (int e = 0; e < d; e++) dot += attn_q_val(r->dtype, qv[e]) * attn_kv_val(r->dtype, r->k, base + e);
                    double v = dot * r->k_scale * r->scale;
                    if (r->softcap > 0.0) v = r->softcap * tanh(v / r->softcap);
                    s[j - lo] = v;
                    if (v > mx) mx = v;
                }
                double l = r->sinks ? exp((double)r->sinks[h] - mx) : 0.0;
                for (int e = 0; e < d; e++) acc[e] = 0.0;
                for (int j = lo; j <= pos; j++) {
                    const double w = exp(s[j - lo] - mx);
                    l += w;
                    const size_t base = (((size_t)r->bt[(size_t)sq * r->bt_stride + j / r->bs] * r->bs + j % r->bs) * hkv + kvh) * d;
                    for (int e = 0; e < d; e++) acc[e] += w * attn_kv_val(r->dtype, r->v, base + e) * r->v_scale;
                }
                double *o = ref + ((size_t)tok * heads + h) * d;
                for (int e = 0; e < d; e++) o[e] = l > 0.0 ? acc[e] / l : 0.0;
            }
        }
    }
    free(s);
    free(acc);
}

double kt_attn_rel_error(int dtype, const uint16_t *out, size_t n, const double *ref)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double v = attn_q_val(dtype, out[i]);
        if (!isfinite(v)) return NAN;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* ~2^-9 (bf16) / 2^-11 (fp16) relative an element from P's and the output's rounding, a norm error
 * near a third of that. 2^-7 and 2^-9 leave ~4x margin over it; a dropped tile, a wrong mask or a
 * misrouted head is O(1). */
double kt_attn_error_bound(int dtype) { return kt_attn_fp16(dtype) ? 0x1p-9 : 0x1p-7; }

int kt_attn_problem_of_args(const kt_op *op, const void *args, kt_problem *p, char *err, size_t errlen)
{
    const kt_attn_args *a = args;
    if (!p) { snprintf(err, errlen, "%s: NULL problem", op->name); return KT_EINVAL; }
    const int rc = kt_attn_check_args(a, op->name, err, errlen);
    if (rc != KT_OK) return rc;
    p->op = op;
    for (int i = 0; i < KT_OP_MAX_DIMS; i++) p->dim[i] = 0;
    p->dim[KT_ATTN_DIM_D] = a->head_size;
    p->dim[KT_ATTN_DIM_G] = a->num_heads / a->num_kv_heads;
    p->dim[KT_ATTN_DIM_HKV] = a->num_kv_heads;
    p->dim[KT_ATTN_DIM_BS] = a->block_size;
    p->dim[KT_ATTN_DIM_WIN] = a->window;
    /* the key's cap is an integer, as the models set it; any soft-cap at all is keyed non-zero */
    p->dim[KT_ATTN_DIM_CAP] = a->softcap > 0.0f ? (lroundf(a->softcap) > 0 ? lroundf(a->softcap) : 1) : 0;
    p->dim[KT_ATTN_DIM_SINK] = a->sinks != NULL;
    p->dim[KT_ATTN_DIM_ROWS] = a->max_query_len;
    p->dim[KT_ATTN_DIM_BATCH] = a->num_seqs;
    /* a windowed layer reads at most window + rows - 1 keys a sequence whatever its length: the
     * key (and what tune swept for it, kt_attn_model_limits) is that */
    p->dim[KT_ATTN_DIM_CTX] = a->window > 0 && (long long)a->window + a->max_query_len - 1 < a->max_seq_len
                                  ? (long long)a->window + a->max_query_len - 1 : a->max_seq_len;
    return KT_OK;
}

int kt_attn_set_buffers(const kt_problem *p, int tokens, long long q_stride_tok, int num_blocks, int bt_stride,
                        kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const long long *x = p->dim;
    const size_t d = (size_t)x[KT_ATTN_DIM_D], heads = (size_t)(x[KT_ATTN_DIM_G] * x[KT_ATTN_DIM_HKV]);
    const size_t batch = (size_t)x[KT_ATTN_DIM_BATCH];
    const size_t cache = (size_t)num_blocks * (size_t)x[KT_ATTN_DIM_BS] * (size_t)x[KT_ATTN_DIM_HKV] * d *
                         (kt_attn_kv8(p->dtype) ? 1 : 2);
    out[KT_ATTN_B_Q] = (kt_op_buffer){"q", KT_BUF_IN, (size_t)tokens * (size_t)q_stride_tok * 2};
    out[KT_ATTN_B_OUT] = (kt_op_buffer){"out", KT_BUF_OUT, (size_t)tokens * heads * d * 2};
    out[KT_ATTN_B_K] = (kt_op_buffer){"k_cache", KT_BUF_IN, cache};
    out[KT_ATTN_B_V] = (kt_op_buffer){"v_cache", KT_BUF_IN, cache};
    out[KT_ATTN_B_BT] = (kt_op_buffer){"block_table", KT_BUF_IN, batch * (size_t)bt_stride * 4};
    out[KT_ATTN_B_LENS] = (kt_op_buffer){"seq_lens", KT_BUF_IN, batch * 4};
    out[KT_ATTN_B_QSL] = (kt_op_buffer){"query_start_loc", KT_BUF_IN, (batch + 1) * 4};
    out[KT_ATTN_B_SINKS] = (kt_op_buffer){"sinks", KT_BUF_IN, heads * 4};
    return KT_ATTN_B_COUNT;
}

void kt_attn_set_args(kt_attn_args *a, const kt_problem *p, void *const *buffers, int tokens, int bt_stride,
                      int max_seq_len, long long q_stride_tok)
{
    const long long *x = p->dim;
    const int d = (int)x[KT_ATTN_DIM_D], hkv = (int)x[KT_ATTN_DIM_HKV], heads = (int)(x[KT_ATTN_DIM_G] * hkv);
    const int bs = (int)x[KT_ATTN_DIM_BS], kv8 = kt_attn_kv8(p->dtype);
    memset(a, 0, sizeof *a);
    a->q = buffers[KT_ATTN_B_Q];
    a->out = buffers[KT_ATTN_B_OUT];
    a->k_cache = buffers[KT_ATTN_B_K];
    a->v_cache = buffers[KT_ATTN_B_V];
    a->block_table = buffers[KT_ATTN_B_BT];
    a->seq_lens = buffers[KT_ATTN_B_LENS];
    a->query_start_loc = buffers[KT_ATTN_B_QSL];
    a->sinks = x[KT_ATTN_DIM_SINK] ? buffers[KT_ATTN_B_SINKS] : NULL;
    a->q_stride_tok = q_stride_tok;
    a->o_stride_tok = (long long)heads * d;
    a->q_stride_head = a->o_stride_head = d;
    a->k_stride_block = a->v_stride_block = (long long)bs * hkv * d;
    a->k_stride_slot = a->v_stride_slot = hkv * d;
    a->k_stride_head = a->v_stride_head = d;
    a->bt_stride = bt_stride;
    a->num_seqs = (int)x[KT_ATTN_DIM_BATCH];
    a->num_tokens = tokens;
    a->num_heads = heads;
    a->num_kv_heads = hkv;
    a->head_size = d;
    a->block_size = bs;
    a->max_query_len = (int)x[KT_ATTN_DIM_ROWS];
    a->max_seq_len = max_seq_len;
    a->window = (int)x[KT_ATTN_DIM_WIN];
    a->scale = (float)(1.0 / sqrt((double)d));
    a->softcap = (float)x[KT_ATTN_DIM_CAP];
    a->k_scale = kv8 ? KT_ATTN_VERIFY_K_SCALE : 1.0f;
    a->v_scale = kv8 ? KT_ATTN_VERIFY_V_SCALE : 1.0f;
}

void kt_attn_ref_cpu(const kt_problem *p, int bt_stride, long long q_stride_tok, void *const *host, double *ref)
{
    const int kv8 = kt_attn_kv8(p->dtype);
    const long long *x = p->dim;
    const kt_attn_ref_set r = {
        .dtype = p->dtype, .d = (int)x[KT_ATTN_DIM_D], .g = (int)x[KT_ATTN_DIM_G], .hkv = (int)x[KT_ATTN_DIM_HKV],
        .bs = (int)x[KT_ATTN_DIM_BS], .batch = (int)x[KT_ATTN_DIM_BATCH], .bt_stride = bt_stride,
        .q_stride_tok = q_stride_tok,
        .window = x[KT_ATTN_DIM_WIN], .softcap = (double)x[KT_ATTN_DIM_CAP], .scale = 1.0 / sqrt((double)x[KT_ATTN_DIM_D]),
        .k_scale = kv8 ? KT_ATTN_VERIFY_K_SCALE : 1.0, .v_scale = kv8 ? KT_ATTN_VERIFY_V_SCALE : 1.0,
        .q = host[KT_ATTN_B_Q], .k = host[KT_ATTN_B_K], .v = host[KT_ATTN_B_V], .bt = host[KT_ATTN_B_BT],
        .lens = host[KT_ATTN_B_LENS], .qsl = host[KT_ATTN_B_QSL], .sinks = x[KT_ATTN_DIM_SINK] ? host[KT_ATTN_B_SINKS] : NULL,
    };
    kt_attn_ref_f64(&r, ref);
}

const char *kt_attn_ref_gpu_name(const kt_problem *p, char *buf, size_t len)
{
    if (p->dim[KT_ATTN_DIM_D] > KT_ATTN_REF_MAX_D) return NULL;
    snprintf(buf, len, "kt_attn_ref_%s", kt_attn_dtypes[p->dtype]);
    return buf;
}

/* the scale in double, as ref_cpu takes it; one segment (the reference reads no partials) */
kt_launch_dims kt_attn_ref_gpu_dims(void *ra_args, long long tokens, long long heads, void *ref_out)
{
    kt_attn_ref_args *ra = ra_args;
    ra->a.num_segments = 1;
    ra->a.partials = NULL;
    ra->out = ref_out;
    ra->scale = 1.0 / sqrt((double)ra->a.head_size);
    kt_launch_dims d = {{(unsigned)(tokens * heads), 1, 1}, {KT_ATTN_REF_THREADS, 1, 1}, 0};
    return d;
}

/* ---- split-KV ---- */

#define ATTN_REDUCE_THREADS 256
#define ATTN_REDUCE_COLS_MIN 32

kt_launch_dims kt_attn_reduce_launch(long long rows, long long d, int units)
{
    const long long most = (d + ATTN_REDUCE_COLS_MIN - 1) / ATTN_REDUCE_COLS_MIN;
    long long s = (d + ATTN_REDUCE_THREADS - 1) / ATTN_REDUCE_THREADS;
    while (s < most && rows * s < 2LL * (units > 0 ? units : 1)) s *= 2;
    return (kt_launch_dims){{(unsigned)rows, (unsigned)s, 1}, {ATTN_REDUCE_THREADS, 1, 1}, 0};
}

long long kt_attn_partial_bytes(long long heads, long long d) { return heads * (d + 2) * (long long)sizeof(float); }

void kt_attn_bind_split(kt_attn_args *a, long long want, void *const *workspace, const long long *workspace_bytes)
{
    long long segs = want > 1 ? want : 1;
    const long long per_pair = kt_attn_partial_bytes(a->num_heads, a->head_size);
    const long long have = workspace && workspace[0] ? workspace_bytes[0] : 0;
    while (segs > 1 && (long long)a->num_tokens * segs * per_pair > have) segs /= 2;
    a->num_segments = (int)segs;
    a->partials = segs > 1 ? (float *)workspace[0] : NULL;
}
