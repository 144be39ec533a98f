/* attn_common.h: what the paged-attention descriptors (op_attn.c: attn_decode, op_attn_prefill.c:
 * attn_prefill) share over the one ABI (templates/abi/attn.h): the dtypes, the argument checks,
 * the verification sets' value generators and block tables, the float64 reference, the error
 * measure and bound. Pure functions: no I/O, no state, no GPU. */
#ifndef KT_ATTN_COMMON_H
#define KT_ATTN_COMMON_H
#include <stddef.h>
#include <stdint.h>
#include "../templates/abi/attn.h"
#include "op.h"

/* dtype indices of every attention op: q, out and cache, or an fp8 e4m3 cache */
enum { KT_ATTN_BF16, KT_ATTN_FP16, KT_ATTN_BF16_E4M3, KT_ATTN_FP16_E4M3, KT_ATTN_NDTYPES };
extern const char *const kt_attn_dtypes[KT_ATTN_NDTYPES];
int kt_attn_kv8(int dtype);
int kt_attn_fp16(int dtype);

/* The scales the verification sets use: fp8 caches hold values of magnitude up to ~4, so a
 * k_scale below 1 keeps the scores in softmax's working range, and a v_scale != 1 shows a missed
 * multiply. 1 for 16-bit caches. */
#define KT_ATTN_VERIFY_K_SCALE 0.375f
#define KT_ATTN_VERIFY_V_SCALE 0.625f

/* The checks every attention op makes of a caller's struct (NULL or misaligned operands, head
 * counts, sizes, strides, scales): KT_OK, or KT_EINVAL with err "<op>: <the field and why>". */
int kt_attn_check_args(const kt_attn_args *a, const char *op, char *err, size_t errlen);

/* bt[batch][max_blocks]: a random permutation (fixed seed) of num_blocks cache blocks dealt out to
 * the sequences of lens[] keys, -1 past each sequence's; all -1 when out of memory. */
void kt_attn_deal_blocks(const int32_t *lens, int batch, int bs, int max_blocks, int num_blocks, uint64_t seed, int32_t *bt);
/* Random q (cache = 0) or cache contents (cache = 1: e4m3 bytes of magnitude 2^-4 .. 3.75 for an
 * fp8 dtype) of bytes, never zeros; sinks: learned logits uniform in [-2, 2). */
void kt_attn_fill_values(int dtype, int cache, void *host, size_t bytes, uint64_t *rng);
void kt_attn_fill_sinks(float *sinks, size_t n, uint64_t *rng);
double kt_attn_e4m3_value(uint8_t b);

/* One verification set as the float64 reference reads it: q [tokens][q_stride_tok] (each token's
 * g * hkv heads of d contiguous at its start), the caches [blocks][bs][hkv][d], bt
 * [batch][bt_stride]; ref comes out contiguous, [tokens][g * hkv][d]. */
typedef struct kt_attn_ref_set {
    int dtype, d, g, hkv, bs, batch, bt_stride;
    long long q_stride_tok;            /* elements between q's tokens (>= g * hkv * d) */
    long long window;                  /* 0: none */
    double softcap, scale, k_scale, v_scale;
    const uint16_t *q;
    const void *k, *v;
    const int32_t *bt, *lens, *qsl;
    const float *sinks;                /* NULL: none */
} kt_attn_ref_set;
/* ref[tokens][heads][d] in float64 as templates/abi/attn.h states it (no rounding but the
 * inputs'); NaN everywhere when out of memory. */
void kt_attn_ref_f64(const kt_attn_ref_set *s, double *ref);
/* ||out - ref|| / ||ref|| over n outputs of the dtype; NaN when one is not finite. */
double kt_attn_rel_error(int dtype, const uint16_t *out, size_t n, const double *ref);
/* P is rounded to P V's operand type (f16 with an fp8 cache, else the dtype) before P V, as
 * FlashAttention does, and the output once */
double kt_attn_error_bound(int dtype);

/* templates/ref/attn_ref.hip serves both ops (it reads only kt_attn_args): its kernel for the
 * dtype, NULL above KT_ATTN_REF_MAX_D (the worker then takes ref_cpu); and its launch, one block
 * a (token, head), row = token * heads + head, once the op's args_for filled ra_args->a. */
const char *kt_attn_ref_gpu_name(const kt_problem *p, char *buf, size_t len);
kt_launch_dims kt_attn_ref_gpu_dims(void *ra_args, long long tokens, long long heads, void *ref_out);

/* Both attention ops order their dimensions d g hkv bs win cap sink, then the bucketed query rows
 * (decode's q, prefill's qlen: max_query_len), batch, ctx (max_seq_len); and their verification
 * buffers q out k_cache v_cache block_table seq_lens query_start_loc sinks. */
enum { KT_ATTN_DIM_D, KT_ATTN_DIM_G, KT_ATTN_DIM_HKV, KT_ATTN_DIM_BS, KT_ATTN_DIM_WIN, KT_ATTN_DIM_CAP,
       KT_ATTN_DIM_SINK, KT_ATTN_DIM_ROWS, KT_ATTN_DIM_BATCH, KT_ATTN_DIM_CTX };
/* The static dimensions both keys begin with, in that order, as kt_op_dim initialisers (win, cap
 * and sink may be 0); each op appends its rows, batch and ctx buckets. */
#define KT_ATTN_STATIC_DIMS                                                                        \
    {"d", 0, NULL, 0, 0}, {"g", 0, NULL, 0, 0}, {"hkv", 0, NULL, 0, 0}, {"bs", 0, NULL, 0, 0},    \
    {"win", 0, NULL, 0, 1}, {"cap", 0, NULL, 0, 1}, {"sink", 0, NULL, 0, 1}
enum { KT_ATTN_B_Q, KT_ATTN_B_OUT, KT_ATTN_B_K, KT_ATTN_B_V, KT_ATTN_B_BT, KT_ATTN_B_LENS, KT_ATTN_B_QSL,
       KT_ATTN_B_SINKS, KT_ATTN_B_COUNT };

/* kt_attn_check_args (messages prefixed by op's name), then p = the problem the struct describes. */
int kt_attn_problem_of_args(const kt_op *op, const void *args, kt_problem *p, char *err, size_t errlen);

/* The buffers of a verification set of p, in the order above, for the shape kt_attn_set_args
 * describes (num_blocks cache blocks); KT_ATTN_B_COUNT. */
int kt_attn_set_buffers(const kt_problem *p, int tokens, long long q_stride_tok, int num_blocks, int bt_stride,
                        kt_op_buffer out[KT_OP_MAX_BUFFERS]);

/* The struct of a verification set of p (buffers in the order above): caches of bs-slot blocks
 * [blocks][bs][hkv][d] (K and V alike), bt bt_stride ints a row, q's tokens q_stride_tok elements
 * apart (heads x d contiguous at each), out contiguous, tokens query rows in all, max_seq_len the
 * longest sequence's keys; scale 1/sqrt(d), the verification k/v scales; num_segments 0 and no
 * partials (bind's to set). */
void kt_attn_set_args(kt_attn_args *a, const kt_problem *p, void *const *buffers, int tokens, int bt_stride,
                      int max_seq_len, long long q_stride_tok);

/* The float64 reference over a verification set's host buffers (the order above), the cache's
 * block table bt_stride ints a row, q's tokens q_stride_tok elements apart: what both ops'
 * ref_cpu are. */
void kt_attn_ref_cpu(const kt_problem *p, int bt_stride, long long q_stride_tok, void *const *host, double *ref);

/* Split-KV, as both ops run it (templates/attn/reduce.h merges the partials). The reduce's launch
 * for rows (token, head) pairs of head size d on a device of `units` compute units: a block (row,
 * column slice) of 256 threads, the slices doubled from ceil(d / 256) while rows x slices stay
 * under two blocks a unit, to at most d / 32 (each slice recomputes the row's statistics). */
kt_launch_dims kt_attn_reduce_launch(long long rows, long long d, int units);
/* Bytes of partials a (token, segment) pair takes over heads heads of size d: {m, l} and d
 * accumulators, fp32 each. */
long long kt_attn_partial_bytes(long long heads, long long d);
/* bind's split fields: want segments (>= 1), halved while the caller's workspace (NULL or
 * workspace_bytes[0] bytes) holds fewer than a->num_tokens x segments pairs; one segment has no
 * partials. */
void kt_attn_bind_split(kt_attn_args *a, long long want, void *const *workspace, const long long *workspace_bytes);


#endif
