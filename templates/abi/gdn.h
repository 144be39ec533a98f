/* gdn.h: the argument struct of the gated delta-net (GDN) decode family (op "gdn_decode",
 * templates/gdn/decode.hip, descriptor runtime/op_gdn.c). Plain C, included by the kernels and by
 * the runtime and tuner. The math is ../shared/ref/gdn.md's, as Qwen3-Next / Qwen3.5 run it in
 * vLLM; one launch does a whole layer step for a batch of sequences, 1 to 8 tokens each.
 *
 * Sequence i owns tokens [query_start_loc[i], query_start_loc[i+1]) (n_i of them, 0 allowed) and
 * one slot s = state_indices[i] of every pool (conv state, ssm state, speculative log); a
 * negative s is a padded slot: nothing of that sequence is read or written. Channels of a token's
 * qkv row: q (H*dk: key head hk at hk*dk), k (H*dk), v (HV*dv): conv_dim = 2*H*dk + HV*dv. Value
 * head h reads key head h / (HV/H).
 *
 * 1. Causal conv1d update (depthwise, conv_kw taps, no bias, SiLU) on every channel c. a = 0 for
 *    plain decode (num_accepted NULL), else num_accepted[i]: the tokens of the sequence's previous
 *    speculative step that were accepted (0 after a prefill or a plain step). The history is
 *    columns a .. a+kw-2 of slot s's conv state; with E = history ++ x_0 .. x_{n-1} (x: the qkv rows)
 *        y_t[c] = rnd(silu(sum_j w[c][j] * E[t + j]))       (rnd: to the dtype, as vLLM stores it)
 *    The new conv state: plain, column u = E[n + u] for u < kw - 1 (the last kw - 1 inputs);
 *    speculative, column u = E[u] for u < kw - 1 + n (conv_len must hold kw - 1 + max tokens), so
 *    that any accepted prefix a' resumes at columns a' .. a'+kw-2. The activations are finite: a
 *    non-finite input may turn NaN the outputs of up to KT_GDN_MAX_KW - kw tokens before it as
 *    well as its own (none at kw = KT_GDN_MAX_KW, the models' 4): the kernel's conv multiplies its
 *    zero taps past kw by the inputs past a token's window.
 * 2. Per token and value head h (fp32): q, k = y's key-head slices, each L2-normalized
 *    (x * rsqrt(sum x^2 + 1e-6)), q times scale; v = y's value slice;
 *        g = -exp(A_log[h]) * softplus(a[h] + dt_bias[h])    (softplus(x) = x above 20)
 *        beta = sigmoid(b[h])
 * 3. The delta rule on the fp32 state S (dk x dv) of head h, per token:
 *        S = exp(g) S;  d = beta (v - S^T k);  S += k d^T;  o = S^T q.
 *    Plain: S is read from slot s, and the state after the last token is stored back.
 *    Speculative: the slot holds the state entering the previous step and its log (d and g of
 *    each of its tokens); the first a logged tokens are replayed onto it (k recomputed from the
 *    conv state's columns, which keep those tokens' inputs), then the n new tokens run, and the
 *    slot receives the state entering this step (after the replay) and this step's log. A step
 *    so moves one state in and one out whatever its token count (vLLM's Triton kernel stores a
 *    state per token, n + 1 states a step), and resuming after any accepted prefix is exact.
 *    The log: spec_log + s*log_slot_stride + ((h*KT_GDN_MAX_TOKENS + t)*dv + j)*2 holds {d_j, g}.
 * 4. out = rnd(o_t), or with norm_weight != NULL the gated RMSNorm of vLLM's fused kernel over the
 *    head's dv outputs: r = rnd(o_t); out = rnd(r * rsqrt(mean(r^2) + norm_eps) * w * silu(z)),
 *    fp32 between the two roundings.
 *
 * State layouts: vk = 0: S[i][j] at head base + i*dv + j ([.., K, V], fla's); vk = 1: at
 * j*dk + i (K-last). Head h of slot s starts at s*ssm_slot_stride + h*dk*dv. A variant serves one
 * layout (its VK axis). The ssm state and the log are 16-byte aligned, their strides multiples
 * of 4 floats.
 *
 * The counters are workspace the runtime binds (batch * (H + HV) words, zero before and after
 * every launch). The first batch * H: the blocks that share a key head's q/k channels count their
 * conv-state reads there, and the last to arrive writes those channels' new conv state, so none
 * reads a column another has already rewritten. The next batch * HV: where a kernel splits a
 * value head's dv columns over blocks under the gated norm, each stores its rnd(o) to out and
 * counts there, and the last to arrive applies the norm to the head's rows in out. */
#ifndef KT_ABI_GDN_H
#define KT_ABI_GDN_H

typedef struct kt_gdn_decode_args {
    const void *qkv;                /* [tokens][qkv_stride] dtype, pre-conv */
    const void *z;                  /* [tokens][z_stride] dtype, HV*dv; read only with norm_weight */
    const void *a, *b;              /* [tokens][ab_stride] dtype, HV each */
    const float *A_log, *dt_bias;   /* [HV] */
    const void *conv_weight;        /* [conv_dim][conv_kw] dtype */
    const void *norm_weight;        /* [dv] dtype, or NULL: out = rnd(o) */
    void *conv_state;               /* dtype; slot s, channel c, column u at
                                       s*conv_slot_stride + c*conv_chan_stride + u*conv_col_stride */
    float *ssm_state;               /* fp32 slots, layout above */
    float *spec_log;                /* fp32 slots, or NULL with num_accepted NULL */
    const int *query_start_loc;     /* [batch + 1] */
    const int *state_indices;       /* [batch] */
    const int *num_accepted;        /* [batch], each in 0 .. the previous step's n; NULL: plain */
    void *out;                      /* [tokens][out_stride] dtype, HV*dv */
    long long conv_slot_stride, ssm_slot_stride, log_slot_stride;
    int conv_chan_stride, conv_col_stride;
    int qkv_stride, z_stride, ab_stride, out_stride;
    int batch, num_k_heads, num_v_heads, dk, dv;
    int conv_kw;                    /* 2 .. 4 taps */
    int conv_len;                   /* columns of a conv-state slot */
    int max_tokens;                 /* the largest n_i of the call (host-side maximum), 1 .. 8 */
    int state_vk;                   /* the ssm state's layout: 0 [.., K, V], 1 K-last (the runtime
                                       picks a kernel of that layout; the kernel has it compiled in) */
    float scale;                    /* applied to q after its norm; dk^-0.5 in the models */
    float norm_eps;

    /* ---- set by the runtime's bind (runtime/op_gdn.c), not by the caller ---- */
    unsigned *counters;             /* batch * (num_k_heads + num_v_heads) words */
    int ahead;                      /* PF forms (OB > 0, PS 0): how many blocks on in the grid's
                                       order the block whose state a block prefetches is: the
                                       blocks the device holds at once (units x the blocks a unit
                                       holds, at least OB); else 0 */
} kt_gdn_decode_args;

#define KT_GDN_MAX_TOKENS 8
#define KT_GDN_MAX_KW 4

#endif
