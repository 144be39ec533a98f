/* gdn_inputs.h: what the two GDN descriptors' verification sets share (op_gdn.c, op_gdn_prefill.c):
 * the layer's parameters in one buffer, drawn and bound the same way. Pure: no I/O, no GPU.
 * Prefix kt_gdn_inputs_. */
#ifndef KT_GDN_INPUTS_H
#define KT_GDN_INPUTS_H
#include <stdint.h>

/* Uniform in [lo, hi) from rng. */
double kt_gdn_inputs_uniform(uint64_t *rng, double lo, double hi);

/* Bytes of the parameter buffer: A_log and dt_bias (fp32, hv each), then the conv weight
 * ([conv_dim][kw]) and the norm weight ([dv]), 16-bit. */
long long kt_gdn_inputs_param_bytes(long long hv, long long conv_dim, long long kw, long long dv);

/* Fills it: A_log in [-3, -1) and dt_bias in [-1, 1) (the state decays 5 to 50% a token: old state
 * and new tokens both weigh in the output), the conv weight in [-0.6, 0.6), the norm weight 1 +- 1/2,
 * rounded to bf16, or fp16 when fp16 is 1. */
void kt_gdn_inputs_fill_params(void *host, long long hv, long long conv_dim, long long kw, long long dv, int fp16,
                               uint64_t *rng);

/* Pointers into it (the norm weight NULL without the norm). */
void kt_gdn_inputs_bind_params(const void *buf, long long hv, long long conv_dim, long long kw, int norm,
                               const float **A_log, const float **dt_bias, const void **conv_weight,
                               const void **norm_weight);

#endif
