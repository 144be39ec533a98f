/* gdn_inputs.c: the GDN verification sets' shared parameter buffer (gdn_inputs.h). */
#include "gdn_inputs.h"
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
