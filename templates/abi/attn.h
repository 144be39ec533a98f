/* attn.h: the one argument struct every paged-attention variant takes by value (ops
 * "attn_decode" and "attn_prefill", templates/attn/, descriptor runtime/op_attn.c).
 * Plain C, included by the kernels (HIP C++/CUDA) and by the runtime and tuner (C11).
 *
 * The cache is vLLM's NHD paged layout: k_cache and v_cache each [num_blocks][block_size]
 * [num_kv_heads][head_size] with every stride passed (elements; the head_size stride is 1).
 * Sequence i owns query tokens [query_start_loc[i], query_start_loc[i+1]) of q and out, and
 * seq_lens[i] keys (the cached context and these new tokens, already written to the cache);
 * key j lives in physical block block_table[i * bt_stride + j / block_size], slot
 * j % block_size. With query_len = qsl[i+1] - qsl[i] and context = seq_lens[i] - query_len,
 * query token t (0-based) sits at position p = context + t and attends keys j <= p (causal,
 * bottom-right aligned), and only p - j < window when window > 0.
 *
 * For every query head h (kv head h / (num_heads / num_kv_heads)), per query token:
 *   s_j   = scale * sum_d q[d] * k_j[d] * k_scale        (k_scale: 1 for 16-bit caches)
 *   s_j   = softcap * tanh(s_j / softcap)                 when softcap > 0
 *   out   = sum_j e^(s_j - m) v_j[d] * v_scale / (e^(sink_h - m) + sum_j e^(s_j - m))
 * with m the row maximum; the sink term is present only when sinks != NULL (one learned logit
 * per query head, fp32). Scores, softmax and the accumulator are fp32; out is rounded to the
 * q dtype once, at the end. A row with no visible key (none in practice) writes zeros.
 * fp8 caches hold OCP e4m3fn (the "_e4m3" dtypes, on every target; gfx942's e4m3fnuz caches are
 * not served yet) and are dequantized as float(k8) * k_scale, float(v8) * v_scale.
 *
 * Split-KV: decode and prefill variants may split the visible keys into num_segments contiguous
 * segments of whole KV tiles (set by bind from the law, 1 .. the variant's SEGMAX; prefill splits
 * each block's keys, where the grid is short of the device), each writing fp32 partials into the
 * workspace, then a second launch (<kernel>_reduce) merges them in a fixed order: the result is
 * deterministic for a given segment count. The partials are [tokens][num_heads][num_segments]
 * of {m, l} followed by [tokens][num_heads][num_segments][head_size] accumulators; a smaller
 * num_segments packs into a prefix of the same allocation, so the count may change under graph
 * capture. With num_segments == 1 the main launch writes out itself and there is no reduce. */
#ifndef KT_ABI_ATTN_H
#define KT_ABI_ATTN_H

typedef struct kt_attn_args {
    const void *q;                  /* [num_tokens][num_heads][head_size] (strides below) */
    void *out;                      /* [num_tokens][num_heads][head_size] */
    const void *k_cache, *v_cache;  /* [num_blocks][block_size][num_kv_heads][head_size] */
    const int *block_table;         /* [num_seqs][bt_stride] physical block numbers */
    const int *seq_lens;            /* [num_seqs] keys of each sequence (context + new tokens) */
    const int *query_start_loc;     /* [num_seqs + 1] prefix sums of the query lengths */
    const float *sinks;             /* [num_heads] or NULL */
    long long q_stride_tok, o_stride_tok;       /* elements between tokens */
    int q_stride_head, o_stride_head;           /* elements between heads */
    long long k_stride_block, v_stride_block;   /* elements between physical blocks */
    int k_stride_slot, v_stride_slot;           /* elements between slots of a block */
    int k_stride_head, v_stride_head;           /* elements between kv heads of a slot */
    int bt_stride;                  /* ints between rows of block_table */
    int num_seqs, num_tokens;       /* sequences; query tokens (= query_start_loc[num_seqs]) */
    int num_heads, num_kv_heads, head_size, block_size;
    int max_query_len;              /* the largest query_len of the batch (host-side maximum) */
    int max_seq_len;                /* the largest seq_lens entry (host-side maximum) */
    int window;                     /* 0: none; else keys with p - j < window are visible */
    float scale;                    /* softmax scale, usually 1/sqrt(head_size) */
    float softcap;                  /* 0: off */
    float k_scale, v_scale;         /* fp8 caches' dequantization scales; 1 for 16-bit caches */

    /* ---- set by the runtime's bind (runtime/op_attn.c), not by the caller ---- */
    int num_segments;               /* split-KV segments, >= 1 (a launch's extra segment blocks exit) */
    float *partials;                /* split-KV workspace, or NULL when num_segments == 1 */
} kt_attn_args;

#endif
