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

/* The layer fields both GDN argument structs carry, by the same names (templates/abi/gdn.h,
 * gdn_prefill.h): KT_GDN_LAYER_VIEW(args) takes them from either. */
typedef struct kt_gdn_layer_view {
    const void *qkv, *z, *a, *b, *A_log, *dt_bias, *conv_weight, *norm_weight, *conv_state, *ssm_state,
        *query_start_loc, *state_indices, *out;
    long long ssm_slot_stride;
    int conv_chan_stride, conv_col_stride, qkv_stride, z_stride, ab_stride, out_stride;
    int batch, num_k_heads, num_v_heads, dk, dv, conv_kw, state_vk;
    float scale, norm_eps;
} kt_gdn_layer_view;
#define KT_GDN_LAYER_VIEW(x)                                                                                  \
    ((kt_gdn_layer_view){(x)->qkv, (x)->z, (x)->a, (x)->b, (x)->A_log, (x)->dt_bias, (x)->conv_weight,         \
                         (x)->norm_weight, (x)->conv_state, (x)->ssm_state, (x)->query_start_loc,              \
                         (x)->state_indices, (x)->out, (x)->ssm_slot_stride, (x)->conv_chan_stride,            \
                         (x)->conv_col_stride, (x)->qkv_stride, (x)->z_stride, (x)->ab_stride, (x)->out_stride, \
                         (x)->batch, (x)->num_k_heads, (x)->num_v_heads, (x)->dk, (x)->dv, (x)->conv_kw,        \
                         (x)->state_vk, (x)->scale, (x)->norm_eps})

/* The checks both ops make of those fields: 0, or -1 with err naming the field ("<op>: <field> ..."):
 * operands not NULL (z with the norm), sizes >= 1, value heads a multiple of key heads, 2 to 4 conv
 * taps, strides that hold a row, the state layout 0 or 1, scale finite and > 0, norm_eps >= 0. */
int kt_gdn_inputs_check(const char *op, const kt_gdn_layer_view *v, char *err, size_t errlen);

/* The state layout a model's GDN problems take (a property of the serving vLLM, not of the model's
 * config): KT_GDN_STATE `k-last` (the default: [HV, V, K], vLLM since PR #33291) -> 1, `kv`
 * ([HV, K, V], earlier vLLM and fla) -> 0; anything else -1 with err naming the variable. */
int kt_gdn_inputs_model_vk(const char *op, char *err, size_t errlen);

#endif
