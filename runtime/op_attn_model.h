/* op_attn_model.h: a model's attention groups (kt_model_shape.attn, tuner/model.c) as attn_decode
 * problems, for the decode descriptor's from_model (runtime/op_attn.h's dimension order). */
#ifndef KT_OP_ATTN_MODEL_H
#define KT_OP_ATTN_MODEL_H
#include <stddef.h>
#include "op.h"

/* The most query rows per sequence tuned: 1 + up to 7 speculative tokens. */
#define KT_ATTN_MODEL_MAX_Q 8
/* The most sequences of a decode batch tuned. */
#define KT_ATTN_MODEL_MAX_BATCH 256
/* The cache block size tuned: vLLM's default. */
#define KT_ATTN_MODEL_BLOCK 16

/* The caps on the bucketed dimensions (q, batch, ctx; 0 elsewhere, 0 = none) the tuner should not
 * cross for group a: ctx is the group's max_ctx, or for a sliding group window + KT_ATTN_MODEL_MAX_Q
 * (a windowed decode of q rows never reads more keys). The problems below carry them in
 * kt_op_model_problem.limit. */
void kt_attn_model_limits(const kt_model_attn *a, long long limit[KT_OP_MAX_DIMS]);

/* One attn_decode problem per attention group of m, at most max, written to out: d, g, hkv, bs,
 * win, cap, sink from the group, the bucketed q, batch, ctx at 1; layers "attn.full" /
 * "attn.sliding", calls = the group's layers. The count, or -1 with err naming what m lacks. */
int kt_attn_model_problems(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen);

#endif
