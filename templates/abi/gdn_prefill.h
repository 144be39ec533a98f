/* gdn_prefill.h: the argument struct of the gated delta-net prefill (op "gdn_prefill",
 * templates/gdn/prefill.hip, descriptor runtime/op_gdn_prefill.c): a batch of sequences of any
 * lengths (vLLM's varlen form, query_start_loc), each through the whole layer: the causal conv1d
 * over the sequence with its cached history, the gates, the delta rule in its chunked form, the
 * output and optionally the gated RMSNorm. The per-token math, its rounding points and the pools
 * are templates/abi/gdn.h's (the decode step's); what differs is listed here.
 *
 * Sequence i owns tokens [query_start_loc[i], query_start_loc[i+1]) and slot s = state_indices[i]
 * of the conv and ssm pools (negative: nothing of it is read or written). With has_initial_state
 * NULL or has_initial_state[i] != 0 the slot's conv history (columns 0 .. kw-2, oldest first) and
 * fp32 state enter the sequence; else both enter as zeros. Afterwards the slot holds the state after
 * the last token and the conv state's columns 0 .. kw-2 the last kw - 1 inputs of the sequence
 * (older history where the sequence is shorter): a decode step after it reads num_accepted 0.
 *
 * The chunked form (../shared/ref/gdn.md): a sequence is cut into chunks of BT tokens (the
 * variant's), the last one partial. Three launches, in order (four on wave-64 targets and at BT 16):
 *  (prep   (grid: chunks x key heads; wave 64, BT 16)   conv, q/k norms: q, k and each value head's
 *          conv outputs (in u's place) into the workspace; elsewhere wy does this itself;)
 *   wy     (grid: chunks x key heads)   conv, q/k norms (q and k into the workspace), then for
 *          every value head its conv, the gates, G (the chunk's running sum of g), A, the
 *          triangular (I + A)^-1, w and u;
 *   state  (grid: dv / BV x value heads x sequences)   the only serial loop, over a sequence's
 *          chunks: the state entering each chunk (h) and the chunk's corrected values (vn) into the
 *          workspace, the final state into the slot;
 *   out    (grid: chunks x value heads)  o = e^G q h + ((q k^T) decay, causal) vn, the norm, the new
 *          conv state (the sequence's last chunk; after wy has read the old one).
 * Chunks are numbered over the whole batch, sequence after sequence; the grid's chunk count is an
 * upper bound (tokens / BT + batch) and a block past the batch's real chunks returns. Where the
 * state pass leaves compute units idle (few sequences) the runtime cuts the chunks into parts:
 * wy part after part, the state pass of part j (on a second stream, ahead) as soon as wy's part j
 * is done, beside wy's later parts, then out of part j beside the state pass of part j + 1; a
 * part's state pass starts from the slot's state where the sequence began before it and leaves the
 * state it reached there.
 *
 * Workspace (bound by the runtime, op_gdn_prefill.c's layout, `chunks` = the bound above):
 *   q, k    [chunks][H][BT][dk] dtype   normalized (q scaled)
 *   w       [chunks][HV][dk][BT] dtype   transposed (the state pass's operand; PF 3, 4: its fragments,
 *                                        512-byte tiles [dk / 16][BT / 16], lane-major)
 *   u       [chunks][HV][dv][BT] dtype   transposed (wave 64: prep parks v there as [BT][dv])
 *   vn      [chunks][HV][dv][BT] dtype   transposed (the output's operand)
 *   h       [chunks][HV][dv][dk] dtype   the state entering the chunk, transposed
 *   kd      [chunks][HV][BT][dk] dtype   k e^{G_last - G} (the state update's operand; PF 3, 4: k's
 *                                        fragments instead, [chunks][H] tiles [BT / 16][dk / 16])
 *   g       [chunks][HV][BT] fp32        the chunk's running sum of g
 * PF 5 folds kd into the chunk's step, S^T <- e^{G_last} S^T + B^T - S^T C, and out makes vn from h:
 * w row-major [chunks][HV][BT][dk] (out's operand), no vn or kd region, two more:
 *   c       [chunks][HV][dk][dk] dtype   -C = -(w^T kd), the state pass's fragments, tiles [dk/16][dk/16]
 *   b       [chunks][HV][dv][dk] dtype   B^T = u^T kd, row-major */
#ifndef KT_ABI_GDN_PREFILL_H
#define KT_ABI_GDN_PREFILL_H

typedef struct kt_gdn_prefill_args {
    const void *qkv;                /* [tokens][qkv_stride] dtype, pre-conv: q | k | v channels */
    const void *z;                  /* [tokens][z_stride] dtype; read only with norm_weight */
    const void *a, *b;              /* [tokens][ab_stride] dtype, HV each */
    const float *A_log, *dt_bias;   /* [HV] */
    const void *conv_weight;        /* [conv_dim][conv_kw] dtype */
    const void *norm_weight;        /* [dv] dtype, or NULL */
    void *conv_state;               /* as kt_gdn_decode_args */
    float *ssm_state;               /* as kt_gdn_decode_args; the layout is the variant's (VK) */
    const int *query_start_loc;     /* [batch + 1] */
    const int *state_indices;       /* [batch] */
    const int *has_initial_state;   /* [batch], or NULL: every sequence continues its slot */
    void *out;                      /* [tokens][out_stride] dtype, HV*dv */
    long long conv_slot_stride, ssm_slot_stride;
    int conv_chan_stride, conv_col_stride;
    int qkv_stride, z_stride, ab_stride, out_stride;
    int batch, num_k_heads, num_v_heads, dk, dv;
    int conv_kw;                    /* 2 .. 4 */
    int tokens;                     /* query_start_loc[batch], as the host knows it */
    int state_vk;
    float scale, norm_eps;

    /* ---- set by the runtime's bind (runtime/op_gdn_prefill.c), not by the caller ---- */
    int chunks;                     /* the grid's chunk bound */
    int chunk_begin, chunk_end;     /* the chunks [begin, end) this launch covers (the plan's
                                       parts: prep and wy a part at a time, the state pass over a
                                       part while out runs the part before beside it); all of them
                                       where there are no parts */
    void *ws_q, *ws_k, *ws_w, *ws_u, *ws_vn, *ws_h, *ws_kd;
    float *ws_g;
    void *ws_c, *ws_b;              /* PF 5's folded operands (below); NULL elsewhere */
} kt_gdn_prefill_args;

#endif
