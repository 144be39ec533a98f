/* op.h: the op descriptor. One kt_op per kernel family (GEMM, fused add + RMSNorm, ...), all of
 * them in one table (op_table.c), like ggml's op table. Everything after the build stage that
 * depends on a family's fields goes through its descriptor: the problem key, the parser of its
 * variants' parameters, launch geometry, workspace, the argument struct (templates/abi/<family>.h),
 * the references, the error bound, the input generator and the law. The sweep, the worker, the
 * selection chain, `kt explain`, `kt dump` and tune's coverage report are written once against it.
 * Prefix kt_op_ (descriptors), kt_problem_ / kt_variant_ (their values).
 *
 * A problem is an op, a dtype and the op's dimensions. Every op has static dimensions (part of the
 * shape: a GEMM's n and k, a norm's hidden size, an attention's window) and bucketed dimensions
 * (tokens, rows, batch, context), each with its own ascending edges: a query holds their actual
 * values, a key holds the edge that serves each. The key text is canonical, the dimensions in the
 * op's order: `<op> <dtype> <static>=<v> ... <bucketed><=<edge> ...`, e.g.
 * `gemm bf16 n=5120 k=8704 m<=16`, `rmsnorm_add bf16 hidden=4096 rows<=64`,
 * `attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=1 batch<=8 ctx<=4096`.
 * Dimensions are >= 1, except a static one marked zero_ok, which may be 0 ("none": win=0).
 * The first bucketed dimension is the problem's size (a GEMM's M, a norm's rows): it decides the
 * phase (decode_edge) and is what kt_problem_bucketed answers.
 *
 * A variant is the recipe's parameters, read once from the kernel row's params JSON by the op's
 * parameter table (kt_variant_parse): integers in the op's parameter order, a missing parameter
 * taking its fallback. Only the descriptor's functions interpret them. */
#ifndef KT_OP_H
#define KT_OP_H
#include <stddef.h>
#include <stdint.h>
#include "target.h"
#include "law.h"
#include "launch_dims.h"
#include "kernel_name.h"

#define KT_OP_MAX_DIMS 10
#define KT_OP_MAX_PARAMS 16
#define KT_OP_MAX_DTYPES 4
#define KT_OP_MAX_LAUNCHES 26
#define KT_OP_MAX_WORKSPACES 2
#define KT_OP_MAX_BUFFERS 8
#define KT_OP_NAME_LEN KT_KERNEL_NAME_MAX   /* kernel names: build/kernel_name.h */

struct kt_op;

typedef struct kt_problem {
    const struct kt_op *op;
    int dtype;                          /* index into op->dtypes */
    long long dim[KT_OP_MAX_DIMS];      /* op->dims order; bucketed ones: value (query) or edge (key) */
    int instance;                       /* 0: the op's instance of the key (its buffers' draw); 1: its
                                           second instance (kt_op.second_instance; key suffix " @<name>") */
} kt_problem;

typedef struct kt_variant {
    int p[KT_OP_MAX_PARAMS];            /* op->params order */
    int occupancy;                      /* workgroups (blocks) per compute unit the compiled kernel's
                                           resources allow, 0 unknown (kt_variant_from_row) */
    int lds_bytes;                      /* LDS a workgroup takes, static + at launch, as its row
                                           says (kt_variant_from_row); 0 unknown */
} kt_variant;

typedef struct kt_op_dim {
    const char *name;                   /* "n", "k", "m", "hidden", "rows", "ctx" */
    int bucketed;                       /* 1: keyed by the edge serving the value */
    const int *edges;                   /* bucketed: its edges, ascending (>= 1); NULL for a static one */
    int nedges;
    int zero_ok;                        /* static: 1 lets the value be 0 (key text `win=0`) */
} kt_op_dim;

typedef struct kt_op_param {
    const char *name;                   /* the recipe's axis name, "BM" */
    int fallback;                       /* value when the recipe has no such axis */
    int min;                            /* smallest valid value: a row below it cannot launch */
} kt_op_param;

/* One kernel launch of a variant: the function is the kernel's name + suffix ("" or "_reduce"). */
typedef struct kt_op_launch {
    const char *suffix;
    kt_launch_dims dims;
    int optional;                       /* 1: skipped when the code object has no such function */
    int early;                          /* 1: its kernel waits for the launch before it itself
                                           (kt_grid_dependency_wait), so it may start while that one
                                           still runs (ktb_launch_early) */
    /* Lanes (runtime/op_run.h): 0 the caller's stream; 1 a second stream of the runtime's, at a
     * higher priority, for the launches the op's time hangs on, so that lane 0's run beside them.
     * A launch follows the one before it on its own lane; `after` (1 + an earlier launch's index,
     * on the other lane; 0 none) adds one wait. Lane 1's first launch names one (it forks there).
     * Where no second stream is at hand the launches run in list order on the caller's, which
     * every plan must allow: the list is in an order that respects every wait. */
    int lane;
    int after;
    int part, parts;                    /* this launch covers part `part` of `parts` (op->bind_launch) */
} kt_op_launch;

/* A compiled kernel as the law sees it: its parameters, its template's law class (the recipe's
 * `law` field, else the template's file name) and its resources from the ELF. */
typedef struct kt_candidate {
    const char *name;
    const char *law_class;              /* "dense", "skinny", "swapab", "wgmma", ... */
    kt_variant v;
    int threads, regs, lds_bytes, waves_per_simd;   /* 0 when unknown */
} kt_candidate;

/* Device buffers of one verification or timing set, in the order op->buffers gives them. */
enum { KT_BUF_IN = 1, KT_BUF_OUT = 2, KT_BUF_INOUT = 3 };
typedef struct kt_op_buffer {
    const char *name;                   /* "a", "w", "c", "x", "residual", "weight" */
    int role;                           /* KT_BUF_IN | KT_BUF_OUT | KT_BUF_INOUT */
    size_t bytes;
} kt_op_buffer;

/* What a family needs of a model to derive its problems, per rank (tuner/model.c fills it from
 * config.json and vLLM's tensor-parallel sharding). */
#define KT_MODEL_MAX_LINEAR 12
typedef struct kt_model_linear {
    int n, k;                           /* C[m][n] = A[m][k] . W[n][k]^T on one rank */
    int count;                          /* calls per forward pass */
    char layers[64];                    /* "qkv", "o,down" */
} kt_model_linear;

/* One attention geometry of a rank: the decoder layers whose attention reads the KV cache the
 * same way (a model with sliding and full layers has two). Linear-attention (GDN) layers have no
 * KV cache and are never one of these: kt_model_shape.gdn holds them. */
#define KT_MODEL_MAX_ATTN 4
typedef struct kt_model_attn {
    int head_dim;
    int heads_per_rank, kv_heads_per_rank;  /* kv: kv_heads/tp, or 1 where vLLM replicates them */
    int window;                         /* sliding window in keys; 0 for full attention */
    int softcap;                        /* attn_logit_softcapping; 0 none */
    int sinks;                          /* 1: a learned sink logit per head (no supported model) */
    int layers;                         /* decoder layers of this geometry */
    int max_ctx;                        /* max_position_embeddings: the longest sequence; 0 unknown */
    char kind[16];                      /* "full" | "sliding" */
} kt_model_attn;

/* The gated delta-net (linear attention) layers of a rank: every one has the same geometry. */
typedef struct kt_model_gdn {
    int layers;                         /* 0: the model has none */
    int k_heads_per_rank, v_heads_per_rank;
    int key_dim, value_dim;             /* per head: linear_key_head_dim, linear_value_head_dim */
    int conv_kw;                        /* linear_conv_kernel_dim */
} kt_model_gdn;

typedef struct kt_model_shape {
    const char *dtype;                  /* "bf16" | "fp16" */
    int hidden, intermediate, heads, kv_heads, head_dim, layers, tp;
    int heads_per_rank, kv_heads_per_rank;
    int nlinear;                        /* the decoder's distinct linear shapes per rank */
    kt_model_linear linear[KT_MODEL_MAX_LINEAR];
    int nattn;                          /* the distinct attention geometries per rank */
    kt_model_attn attn[KT_MODEL_MAX_ATTN];
    kt_model_gdn gdn;                   /* the GDN (linear attention) layers: not attention */
    int norm_plus_one;                  /* 1: the norms scale by (1 + weight) (Gemma, Qwen3-Next),
                                         * which rmsnorm_add's x * weight is not */
} kt_model_shape;

/* One problem a family derives from a model: its static dimensions (the tuner crosses it with
 * every combination of its bucketed dimensions' edges, kt_problem_edge_combo), the layers behind
 * it and its calls per forward pass. limit[d] > 0 bounds bucketed dimension d (a model's longest
 * context): its edges above the one serving the limit are not swept. 0: every edge. */
typedef struct kt_op_model_problem {
    kt_problem p;
    char layers[64];
    int calls;
    long long limit[KT_OP_MAX_DIMS];
} kt_op_model_problem;

typedef struct kt_op {
    const char *name;                   /* "gemm": the key's first word and the recipes' `ops` entry */
    const char *summary;                /* one line for listings */
    const char *const *dtypes;          /* "bf16", "fp16" */
    int ndtypes;
    const kt_op_dim *dims;
    int ndims;
    int decode_edge;                    /* the first bucketed dimension's edges <= this are the
                                           "decode" phase, larger "prefill" */
    const kt_op_param *params;
    int nparams;
    size_t args_size;                   /* sizeof the ABI struct (templates/abi/<family>.h) */

    /* ---- geometry and workspace (runtime and tuner) ---- */
    /* The launches of variant v for problem p on a device of `units` compute units, in order. */
    int (*launches)(const kt_variant *v, const kt_problem *p, int wave_size, int units,
                    kt_op_launch out[KT_OP_MAX_LAUNCHES]);
    /* Why v cannot launch p at all (grid limits, ...), or NULL; workspace is checked apart. */
    const char *(*misfit)(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len);
    int nworkspaces;                    /* named device buffers allocated at open, at their largest */
    const char *const *workspace_names; /* "split-K partials" */
    /* Bytes of workspace buffer i a launch of v on p needs (0: none). The buffer's last bytes may be
     * counters that launches leave zero: the allocator zeroes each buffer once. */
    long long (*workspace_bytes)(const kt_variant *v, const kt_problem *p, int units, int i);
    /* Bytes every workspace buffer of the family gets at least at open once the databases hold its
     * kernels, so that shapes nobody tuned can still split (0: only what selections need). */
    long long workspace_floor_bytes;
    /* Bytes of buffer i without which v cannot launch p at all, when the variant can run on less
     * than workspace_bytes (split-KV: fewer segments); NULL: workspace_bytes. */
    long long (*workspace_min_bytes)(const kt_variant *v, const kt_problem *p, int units, int i);
    /* Bytes at the start of workspace buffer i (of `bytes`) a verifier may poison. */
    long long (*workspace_poison_bytes)(int i, long long bytes);
    /* Whether the variant can run with no workspace at all (a stream with no slot). */
    int (*needs_workspace)(const kt_variant *v);
    /* The variant's split count as kt explain and ktrt_choice report it (GEMM: SK), or -1, and
     * what that number is, for kt explain (NULL: "splitk"). */
    int (*split_of)(const kt_variant *v);
    const char *split_label;

    /* ---- arguments ---- */
    /* The problem a caller's filled argument struct describes, checked (NULL operands, strides,
     * dimensions < 1): KT_OK, or KT_EINVAL with err naming the field. p arrives zeroed (libktrt's
     * one caller: its instance is 0, a call being the problem itself); the op writes op and dims. */
    int (*problem_of_args)(const void *args, kt_problem *p, char *err, size_t errlen);
    /* Sets the variant's fields of the argument struct (split sizes, segment counts, workspace
     * pointers) for a device of `units` compute units, as launches() sized the grid for it. */
    void (*bind)(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                 const long long *workspace_bytes);
    /* Sets one launch's own fields of the bound argument struct (its part of the work) before it
     * is enqueued; NULL: every launch takes the struct as bound. */
    void (*bind_launch)(void *args, const kt_op_launch *l);

    /* ---- the law ---- */
    /* The candidate the law picks for p, or -1 when none can serve it. */
    int (*law_pick)(const law_device *d, const kt_candidate *c, int n, const kt_problem *p);
    /* The tuner's pruning: keep[i] = 1 for the candidates worth timing (law_idx always kept).
     * NULL: time every candidate. Returns the number kept. */
    int (*prune)(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, int law_idx, int *keep);

    /* ---- verification (tuner, device checks) ---- */
    /* The buffers of one set for p (inputs, outputs, in-place operands), in argument order. */
    int (*buffers)(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS]);
    /* Random contents of input buffer i (never zeros), from rng. */
    void (*fill)(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng);
    /* The user fields of the argument struct over a set's device buffers. */
    void (*args_for)(void *args, const kt_problem *p, void *const *buffers);
    /* Doubles the reference writes: the op's outputs in a fixed order. */
    size_t (*ref_count)(const kt_problem *p);
    /* float64 CPU reference over the host inputs (every buffer's initial contents): into ref. */
    void (*ref_cpu)(const kt_problem *p, void *const *host, double *ref);
    /* The GPU reference kernel, for ops too large for the CPU: its name for the dtype (written
     * into buf), launch and arguments over device buffers and a device array of ref_count
     * doubles. NULL ref_gpu_name: the worker uses ref_cpu. */
    const char *(*ref_gpu_name)(const kt_problem *p, char *buf, size_t len);
    kt_launch_dims (*ref_gpu_launch)(const kt_problem *p, void *args, void *const *buffers, void *ref_out);
    /* Bytes of the argument struct ref_gpu_launch fills, when the reference kernel takes its own
     * (attn_decode's wraps kt_attn_args: templates/abi/attn_ref.h); 0: args_size. */
    size_t ref_args_size;
    /* ||out - ref|| / ||ref|| over the outputs read back to host (every buffer, after the launch);
     * NaN when an output is not finite. */
    double (*rel_error)(const kt_problem *p, void *const *host, const double *ref);
    double (*error_bound)(int dtype);
    /* Bytes a launch must move at least (compulsory traffic), for the report's bandwidth column;
     * and the flops, 0 for a memory-bound op. */
    double (*bytes_moved)(const kt_problem *p);
    double (*flops)(const kt_problem *p);
    /* 1: decode-phase problems are timed cache-cold, buffers rotated past L2 (their operands come
     * from memory in serving, as a GEMM's weights do); 0: timed warm (an op whose inputs the layer
     * before it has just written). */
    int cold_decode;
    /* The name of a second instance of every problem (its key is the problem's with " @<name>"),
     * drawn differently from the first, on which the sweep times the variants that tie on the first
     * (attention: every sequence at the bucket's length, where the first mixes lengths); NULL: none,
     * and a tie is broken by the rules alone. */
    const char *second_instance;
    /* Bucketed dimensions (bit d: dims[d]) a tuned selection must share with a query, edge for edge,
     * to serve it through libktrt's nearest-bucket step (another edge of such a dimension changes
     * the form of the best kernel, not just its size: attention decode's query rows); 0: any. */
    unsigned bucket_same_dims;
    /* Shapes at which `kt worker --check-reference` holds the GPU reference to ref_cpu (dims in
     * op->dims order), every dtype; none when the op has no GPU reference. */
    const long long (*ref_checks)[KT_OP_MAX_DIMS];
    int nref_checks;

    /* ---- problems from a model (tune --modelpath) ---- */
    /* The op's problems of one rank of the model, at most max, written to out: the count, or -1
     * with err naming what the model lacks. NULL: the op derives nothing from models. */
    int (*from_model)(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen);
} kt_op;

/* ---- the table (op_table.c) ---- */
int kt_op_count(void);
const kt_op *kt_op_at(int i);
const kt_op *kt_op_find(const char *name);                 /* NULL when unknown */
/* 1 when the comma-separated ops text (a kernel row's `ops`) names op exactly. */
int kt_ops_has(const char *ops, const char *op);

/* ---- values (op.c) ---- */
int kt_op_dtype_index(const kt_op *op, const char *dtype);  /* -1 unknown */
/* The first bucketed dimension's index in dims (the problem's size: M, rows), -1 when none. */
int kt_op_bucketed_dim(const kt_op *op);
/* 1 when a selection tuned at tuned's buckets may serve a query keyed key (its edges) through the
 * nearest-bucket step: they agree on every dimension of op->bucket_same_dims. */
int kt_op_bucket_serves(const kt_op *op, const kt_problem *tuned, const kt_problem *key);
/* The edge of bucketed dimension d serving value v (the smallest edge >= v; above the last, the
 * last); -1 when v < 1 or d is not a bucketed dimension of op. */
long long kt_op_bucket(const kt_op *op, int d, long long v);
int kt_op_is_edge(const kt_op *op, int d, long long v);   /* 1 when v is an edge of bucketed dim d */
/* The edges of bucketed dimension d a sweep covers under limit (0: no limit): a prefix of its
 * edges, up to and including the one serving limit. 0 when d is not bucketed. */
int kt_op_edges_kept(const kt_op *op, int d, long long limit);
/* How many combinations of kept edges (one edge per bucketed dimension) there are under the
 * limits (NULL: none): the product of kt_op_edges_kept; 1 for an op with no bucketed dimension. */
long long kt_op_edge_combos(const kt_op *op, const long long *limit);
/* Combination i (0 <= i < kt_op_edge_combos) of shape: shape's op, dtype and static dimensions,
 * each bucketed dimension set to one of its kept edges, in key order (the last bucketed dimension
 * varies fastest). 0, or -1 when i is out of range. */
int kt_problem_edge_combo(const kt_problem *shape, const long long *limit, long long i, kt_problem *out);
/* p with every bucketed dimension snapped to the edge serving it (a query's key problem); a
 * bucketed value < 1 becomes -1. */
kt_problem kt_problem_snapped(const kt_problem *p);
/* 1 when a and b have the same op, dtype and every dimension. */
int kt_problem_equal(const kt_problem *a, const kt_problem *b);
const char *kt_problem_phase(const kt_problem *p);          /* "decode" | "prefill" */
/* The key of p with every bucketed dimension snapped to its edge. Length, or -1 (does not fit, a
 * dimension below its minimum). */
int kt_problem_key(const kt_problem *p, char *buf, size_t len);
/* The bucketed part of p's key ("m<=16", "q<=1 batch<=8 ctx<=4096"; "" when none), snapped, for
 * messages. Length, or -1 when it does not fit. */
int kt_problem_bucket_text(const kt_problem *p, char *buf, size_t len);
/* Parses a key text: KT_OK-style 0, or -1 with a message naming the word at fault. The bucketed
 * values read are edges (each checked against its dimension's). */
int kt_problem_parse(const char *key, kt_problem *p, char *err, size_t errlen);
/* The same for a key of op (its first word must be op's name), the op given rather than looked up
 * in the table: kt_problem_parse finds the op, then reads the rest here. */
int kt_op_parse_key(const kt_op *op, const char *key, kt_problem *p, char *err, size_t errlen);
/* Checks a query: every dimension >= 1 (0 allowed where zero_ok) and within an int. 0, or -1
 * with the dimension named. */
int kt_problem_check(const kt_problem *p, char *err, size_t errlen);
/* The smallest value dimension d of op admits: 0 for a zero_ok one, else 1. */
int kt_op_dim_min(const kt_op *op, int d);
/* The same static shape (op, dtype, every static dimension). */
int kt_problem_same_shape(const kt_problem *a, const kt_problem *b);
long long kt_problem_bucketed(const kt_problem *p);         /* the first bucketed value, 1 when none */

/* Reads a flat JSON object of numbers and strings (a kernel row's params) into v by op's
 * parameter table: a missing parameter takes its fallback (one whose fallback is below its minimum
 * is required). 0, or -1 (bad JSON, a missing required parameter, a value below its minimum, a
 * non-integer) with a message. The "dtype" entry, when present and dtype_out is not
 * NULL, is copied there. */
int kt_variant_parse(const kt_op *op, const char *json, kt_variant *v, char *dtype_out, size_t dtype_len,
                     char *err, size_t errlen);
/* The string member `name` of a params object into out: 1 found, 0 not, -1 bad JSON. */
int kt_params_text(const char *json, const char *name, char *out, size_t len);
/* A kernel's law class (kt_candidate.law_class): its recipe's `law` in params, else the stem of
 * its template's file name ("gemm/swapab.hip" -> "swapab"). */
void kt_law_class(const char *params, const char *template_path, char *out, size_t len);
/* The value of a named parameter; 0 when the op has no such parameter. */
int kt_variant_get(const kt_op *op, const kt_variant *v, const char *param);

/* The lexicographic pick every footprint law makes: among the candidates misfit admits, the one
 * whose key (nkeys values, the larger the better, compared in order) is greatest, the first on
 * ties; -1 when none (and for nkeys outside 1 .. KT_OP_LEX_MAX_KEYS). */
#define KT_OP_LEX_MAX_KEYS 24
typedef const char *(*kt_op_misfit_fn)(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len);
typedef void (*kt_op_law_key_fn)(const law_device *d, const kt_candidate *c, const kt_problem *p, long long *key);
int kt_op_lex_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, kt_op_misfit_fn misfit,
                   kt_op_law_key_fn key_of, int nkeys);

/* A kernel row's resources as the database stores them (build/analyze.c wrote them): 0 unknown. */
typedef struct kt_row_resources {
    int threads;                        /* threads per workgroup (the recipe's) */
    int waves_per_simd;                 /* resident waves per SIMD (AMD) or warps per SM (NVIDIA) */
    int regs;                           /* registers per thread */
    int lds_bytes;                      /* LDS / shared memory per workgroup, static + at launch */
} kt_row_resources;
/* Workgroups (blocks) per compute unit those resources allow on target t, as the device counts
 * compute units (an SM; an AMD CU, half an RDNA WGP); 0 when unknown (no target, no occupancy).
 * See op.c for how it follows build/occupancy.c. */
int kt_row_occupancy(const kt_target *t, const kt_row_resources *r);
/* The variant of a kernel row: kt_variant_parse of its params, then its occupancy from its
 * resources on its target (NULL target: occupancy 0). The one place a kernel row becomes a
 * kt_variant (libktrt's catalog, the sweep, the worker). Returns as kt_variant_parse. */
int kt_variant_from_row(const kt_op *op, const kt_target *t, const char *params, const kt_row_resources *r,
                        kt_variant *v, char *dtype_out, size_t dtype_len, char *err, size_t errlen);

#endif
