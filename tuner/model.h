/* model.h: the per-rank GEMM problems and attention geometries of a decoder model, read from its
 * Hugging Face config.json and sharded under tensor parallelism the way vLLM shards it, and the
 * canonical problem keys (`gemm bf16 n=5120 k=8704 m<=16`) the tuner measures and the runtime looks up.
 *
 * Supported: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM (dense),
 * Gemma3ForCausalLM and Gemma3ForConditionalGeneration (the language model in `text_config`;
 * dense MLP, five sliding layers in six), Qwen3NextForCausalLM (one gated full-attention layer in
 * four, the rest Gated DeltaNet; routed MoE), unquantized bf16/fp16. Anything else is refused with
 * a message naming the field and the file, because a model we cannot derive exactly would give a
 * coverage report that silently omits layers (seed 003). What a supported model runs but no op
 * family here derives (GDN layers, routed and shared experts, Gemma-style norms) is listed in
 * model_problems.not_derived with the reason, for the coverage report to show as refused.
 *
 * GEMMs are C[M][N] = A[M][K] . W[N][K]^T, M the token count. Per rank at tensor parallelism tp:
 *   qkv_proj      column-parallel: N = (gate * heads/tp + 2*kv_per_rank) * head_dim, K = hidden
 *                 (gate = 2 where q_proj also produces the output gate, Qwen3-Next; else 1)
 *   o_proj        row-parallel:    N = hidden, K = heads/tp * head_dim
 *   gate_up_proj  column-parallel: N = 2 * intermediate/tp, K = hidden
 *   down_proj     row-parallel:    N = hidden, K = intermediate/tp
 * qkv and o are called once per attention layer (full or sliding), gate_up and down once per
 * dense-MLP layer. kv_per_rank = kv_heads/tp when kv_heads >= tp, else 1 (vLLM replicates each KV
 * head on tp/kv_heads ranks). lm_head is not derived: vLLM pads its vocabulary shard, and it is not
 * one of the decoder layers' GEMMs. */
#ifndef KT_MODEL_H
#define KT_MODEL_H
#include <stddef.h>
#include "op.h"

/* The layers whose GEMMs a decoder layer runs: the attention's and the dense MLP's, then the GDN
 * layers' projections and a routed-MoE layer's router and shared expert. */
typedef enum model_layer {
    MODEL_LAYER_QKV, MODEL_LAYER_O, MODEL_LAYER_GATE_UP, MODEL_LAYER_DOWN,
    MODEL_LAYER_GDN_QKVZ, MODEL_LAYER_GDN_BA, MODEL_LAYER_GDN_OUT,
    MODEL_LAYER_ROUTER, MODEL_LAYER_SHARED_GATE_UP, MODEL_LAYER_SHARED_DOWN, MODEL_LAYER_COUNT
} model_layer;

/* "qkv", "o", "gate_up", "down", "gdn.in_proj_qkvz", "gdn.in_proj_ba", "gdn.out_proj",
 * "moe.router", "shared_expert.gate_up", "shared_expert.down". */
const char *model_layer_name(model_layer l);

/* The token mixer of one decoder layer (config.json's layer_types words). */
typedef enum model_mixer {
    MODEL_MIXER_FULL,                       /* "full_attention" */
    MODEL_MIXER_SLIDING,                    /* "sliding_attention" */
    MODEL_MIXER_LINEAR,                     /* "linear_attention": Gated DeltaNet, no KV cache */
} model_mixer;

/* Decoder layers a config may have: far above any published model, and it bounds the arrays. */
#define MODEL_MAX_LAYERS 512

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
    int text_config;         /* 1: the fields above were read from the nested text_config */
    int max_ctx;             /* max_position_embeddings (the family's default), 0 when unknown */
    int sliding_window;      /* keys a sliding layer sees; 0 when no layer slides */
    int softcap;             /* attn_logit_softcapping, 0 none */
    int attn_output_gate;    /* 1: q_proj also produces a sigmoid gate per head (Qwen3-Next) */
    int norm_plus_one;       /* 1: RMSNorm scales by (1 + weight) (GemmaRMSNorm: Gemma 3, Qwen3-Next) */
    int norms_per_layer;     /* RMSNorms a decoder layer runs on the residual stream */
    unsigned char mixer[MODEL_MAX_LAYERS];   /* model_mixer of each layer */
    /* Routed MoE (Qwen3-Next); experts == 0 for a dense model. */
    int experts, experts_per_tok, moe_intermediate, shared_intermediate;
    unsigned char moe[MODEL_MAX_LAYERS];     /* 1: the layer's MLP is the routed-expert block */
    /* Gated DeltaNet (linear_attention layers): linear_num_key_heads, linear_num_value_heads,
     * linear_key_head_dim, linear_value_head_dim, linear_conv_kernel_dim. */
    int linear_key_heads, linear_value_heads, linear_key_dim, linear_value_dim, linear_conv_kw;
} model_config;

/* One distinct GEMM shape of a rank: every layer that produces it, and how often per forward pass. */
typedef struct model_problem {
    char dtype[8];                           /* "bf16" | "fp16" */
    int n, k;
    int nlayers;
    model_layer layers[MODEL_LAYER_COUNT];   /* in forward order */
    int count;                               /* GEMM calls per forward pass: each layer's calls, summed */
} model_problem;

/* Layers a supported model runs that no op family derives: the coverage report lists each as
 * refused, so a partial derivation is never mistaken for a whole one. */
typedef struct model_not_derived {
    char layers[32];                          /* "gdn", "moe.experts", "moe.shared_expert", "norms" */
    int count;                                /* calls per forward pass (layers, or norms) */
    char reason[192];
} model_not_derived;
#define MODEL_MAX_NOT_DERIVED 6

typedef struct model_problems {
    model_config config;
    int tp;
    int heads_per_rank;
    int kv_heads_per_rank;
    int kv_replicas;                          /* ranks holding a copy of each KV head (1 when not replicated) */
    int nproblems;                            /* 0..4: layers with the same (N, K) are one problem */
    model_problem problems[MODEL_LAYER_COUNT];
    int attn_layers, linear_attn_layers, dense_mlp_layers;   /* decoder layers of each kind */
    int nattn;                                /* distinct attention geometries of a rank, in layer order */
    kt_model_attn attn[KT_MODEL_MAX_ATTN];
    int nnot_derived;
    model_not_derived not_derived[MODEL_MAX_NOT_DERIVED];
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
 * sizes, the linear layers and the attention groups above; dtype points into mp. */
void model_shape_of(const model_problems *mp, kt_model_shape *out);

#endif
