/* gdn_inputs.c: the GDN verification sets' shared parameter buffer (gdn_inputs.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "gdn_inputs.h"
#include "kt_env.h"
#include "../templates/abi/gdn.h"       /* KT_GDN_MAX_KW */
#include "../tuner/half_convert.h"
#include "../tuner/random_inputs.h"

double kt_gdn_inputs_uniform(uint64_t *rng, double lo, double hi)
{
    return lo + (hi - lo) * (double)(kt_rand_splitmix64(rng) >> 11) * 0x1p-53;
}

static uint16_t inputs_round(int fp16, double x) { return fp16 ? kt_f32_to_f16((float)x) : kt_f32_to_bf16((float)x); }

long long kt_gdn_inputs_param_bytes(long long hv, long long conv_dim, long long kw, long long dv)
{
    return 8 * hv + 2 * (conv_dim * kw + dv);
}

void kt_gdn_inputs_fill_params(void *host, long long hv, long long conv_dim, long long kw, long long dv, int fp16,
                               uint64_t *rng)
{
    float *f = host;
    for (long long h = 0; h < hv; h++) {
        f[h] = (float)kt_gdn_inputs_uniform(rng, -3.0, -1.0);
        f[hv + h] = (float)kt_gdn_inputs_uniform(rng, -1.0, 1.0);
    }
    uint16_t *w = (uint16_t *)(f + 2 * hv);
    const long long nw = conv_dim * kw;
    for (long long j = 0; j < nw; j++) w[j] = inputs_round(fp16, kt_gdn_inputs_uniform(rng, -0.6, 0.6));
    for (long long j = 0; j < dv; j++) w[nw + j] = inputs_round(fp16, kt_gdn_inputs_uniform(rng, 0.5, 1.5));
}

void kt_gdn_inputs_bind_params(const void *buf, long long hv, long long conv_dim, long long kw, int norm,
                               const float **A_log, const float **dt_bias, const void **conv_weight,
                               const void **norm_weight)
{
    const float *f = buf;
    *A_log = f;
    *dt_bias = f + hv;
    *conv_weight = f + 2 * hv;
    *norm_weight = norm ? (const void *)((const uint16_t *)(f + 2 * hv) + conv_dim * kw) : NULL;
}

#define NEED(field) \
    do { if (!v->field) return snprintf(err, errlen, "%s: " #field " is NULL", op), -1; } while (0)
#define AT_LEAST(field, min)                                                                           \
    do {                                                                                               \
        if (v->field < (min))                                                                          \
            return snprintf(err, errlen, "%s: " #field " = %lld, must be >= %lld", op, (long long)v->field, \
                            (long long)(min)), -1;                                                     \
    } while (0)

int kt_gdn_inputs_check(const char *op, const kt_gdn_layer_view *v, char *err, size_t errlen)
{
    NEED(qkv); NEED(a); NEED(b); NEED(A_log); NEED(dt_bias); NEED(conv_weight); NEED(conv_state);
    NEED(ssm_state); NEED(query_start_loc); NEED(state_indices); NEED(out);
    if (v->norm_weight && !v->z) return snprintf(err, errlen, "%s: z is NULL with norm_weight set", op), -1;
    AT_LEAST(batch, 1); AT_LEAST(num_k_heads, 1); AT_LEAST(num_v_heads, 1); AT_LEAST(dk, 1); AT_LEAST(dv, 1);
    if (v->num_v_heads % v->num_k_heads)
        return snprintf(err, errlen, "%s: num_v_heads = %d is not a multiple of num_k_heads = %d", op, v->num_v_heads,
                        v->num_k_heads), -1;
    if (v->conv_kw < 2 || v->conv_kw > KT_GDN_MAX_KW)
        return snprintf(err, errlen, "%s: conv_kw = %d, must be 2 to %d", op, v->conv_kw, KT_GDN_MAX_KW), -1;
    const long long cdim = 2LL * v->num_k_heads * v->dk + (long long)v->num_v_heads * v->dv;
    if (v->qkv_stride < cdim)
        return snprintf(err, errlen, "%s: qkv_stride = %d is less than conv_dim = %lld", op, v->qkv_stride, cdim), -1;
    AT_LEAST(ab_stride, v->num_v_heads);
    AT_LEAST(out_stride, (long long)v->num_v_heads * v->dv);
    if (v->norm_weight) AT_LEAST(z_stride, (long long)v->num_v_heads * v->dv);
    AT_LEAST(conv_chan_stride, 1); AT_LEAST(conv_col_stride, 1);
    AT_LEAST(ssm_slot_stride, (long long)v->num_v_heads * v->dk * v->dv);
    if (v->state_vk != 0 && v->state_vk != 1)
        return snprintf(err, errlen, "%s: state_vk = %d, must be 0 ([.., K, V]) or 1 (K-last)", op, v->state_vk), -1;
    if (!(v->scale > 0.0f) || isinf(v->scale))
        return snprintf(err, errlen, "%s: scale = %g, must be finite and > 0", op, (double)v->scale), -1;
    if (v->norm_weight && (!(v->norm_eps >= 0.0f) || isinf(v->norm_eps)))
        return snprintf(err, errlen, "%s: norm_eps = %g, must be finite and >= 0", op, (double)v->norm_eps), -1;
    return 0;
}

int kt_gdn_inputs_model_vk(const char *op, char *err, size_t errlen)
{
    const char *v = kt_env_get("KT_GDN_STATE");
    if (!v || !*v || !strcmp(v, "k-last")) return 1;
    if (!strcmp(v, "kv")) return 0;
    snprintf(err, errlen, "%s: KT_GDN_STATE = '%s': `k-last` ([HV, V, K], vLLM since #33291) or `kv` ([HV, K, V])", op, v);
    return -1;
}
