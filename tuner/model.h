/* model.h: the per-rank GEMM problems of a dense decoder model, read from its Hugging Face
 * config.json and sharded under tensor parallelism the way vLLM shards it, and the canonical
 * problem keys (`gemm bf16 n=5120 k=8704 m<=16`) the tuner measures and the runtime looks up.
 *
 * Supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM, unquantized
 * bf16/fp16. Anything else is refused with a message naming the field and the file, because a model
 * we cannot derive exactly would give a coverage report that silently omits layers (seed 003).
 *
 * GEMMs are C[M][N] = A[M][K] . W[N][K]^T, M the token count. Per rank at tensor parallelism tp:
 *   qkv_proj      column-parallel: N = (heads/tp + 2*kv_per_rank) * head_dim, K = hidden
 *   o_proj        row-parallel:    N = hidden, K = heads/tp * head_dim
 *   gate_up_proj  column-parallel: N = 2 * intermediate/tp, K = hidden
 *   down_proj     row-parallel:    N = hidden, K = intermediate/tp
 * kv_per_rank = kv_heads/tp when kv_heads >= tp, else 1 (vLLM replicates each KV head on
 * tp/kv_heads ranks). lm_head is not derived: vLLM pads its vocabulary shard, and it is not one
 * of the decoder layers' GEMMs. */
#ifndef KT_MODEL_H
#define KT_MODEL_H
#include <stddef.h>
#include "op.h"

/* The layers whose GEMMs a decoder layer runs, in forward order. */
typedef enum model_layer {
    MODEL_LAYER_QKV, MODEL_LAYER_O, MODEL_LAYER_GATE_UP, MODEL_LAYER_DOWN, MODEL_LAYER_COUNT
} model_layer;

/* "qkv", "o", "gate_up", "down". */
const char *model_layer_name(model_layer l);

/* What config.json says, validated; no sharding applied. */
typedef struct model_config {
    char path[512];          /* the config.json that was read, for messages */
    char architecture[48];   /* the supported entry of `architectures` */
    char dtype[8];           /* "bf16" | "fp16", from torch_dtype */
    int hidden;              /* hidden_size */
    int intermediate;        /* intermediate_size */
    int heads;               /* num_attention_heads */
    int kv_heads;            /* num_key_value_heads, = heads when absent (as HF does) */
    int head_dim;            /* head_dim, else the architecture's default (see model.c) */
    int layers;              /* num_hidden_layers */
    int vocab;               /* vocab_size, 0 when absent (informational only) */
} model_config;

/* One distinct GEMM shape of a rank: every layer that produces it, and how often per forward pass. */
typedef struct model_problem {
    char dtype[8];                           /* "bf16" | "fp16" */
    int n, k;
    int nlayers;
    model_layer layers[MODEL_LAYER_COUNT];   /* in forward order */
    int count;                               /* GEMM calls per forward pass = nlayers * num_hidden_layers */
} model_problem;

typedef struct model_problems {
    model_config config;
    int tp;
    int heads_per_rank;
    int kv_heads_per_rank;
    int kv_replicas;                          /* ranks holding a copy of each KV head (1 when not replicated) */
    int nproblems;                            /* 1..4: layers with the same (N, K) are one problem */
    model_problem problems[MODEL_LAYER_COUNT];
} model_problems;

/* Read and validate `path`: a model directory (its config.json is read) or the config.json itself.
 * Returns 0, or nonzero with a message in err naming the file and the field. */
int model_config_load(const char *path, model_config *out, char *err, size_t errlen);

/* Shard a validated config over tp ranks. Refuses tp < 1 and any split vLLM would refuse. */
int model_problems_derive(const model_config *c, int tp, model_problems *out, char *err, size_t errlen);

/* model_config_load then model_problems_derive. */
int model_load(const char *path, int tp, model_problems *out, char *err, size_t errlen);

/* M buckets, part of the key schema: decode 1 2 4 8 16 32 64, prefill 128 .. 8192 (powers of two). */
int model_m_bucket_count(void);
int model_m_bucket_at(int i);              /* the i-th edge, ascending; -1 out of range */
/* The bucket serving a token count m: the smallest edge >= m; above the last edge, the last (the
 * largest prefill shape serves longer prompts chunk-wise). -1 when m < 1. */
int model_m_bucket(long m);
/* "decode" for edges <= 64, "prefill" above. */
const char *model_m_phase(int bucket);

/* Format p's key for one M bucket: `gemm bf16 n=1536 k=4096 m<=16`. Returns the key's length, or -1
 * when it does not fit in len (buf then holds a truncated, terminated prefix) or the bucket is not
 * an edge. */
int model_problem_key(const model_problem *p, int m_bucket, char *buf, size_t len);

/* What the op families need of the model, per rank (runtime/op.h's kt_model_shape): the config's
 * sizes and the linear layers above; dtype points into mp. */
void model_shape_of(const model_problems *mp, kt_model_shape *out);

#endif
