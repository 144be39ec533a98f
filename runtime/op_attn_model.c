/* op_attn_model.c: attention groups -> attn_decode problems (op_attn_model.h). */
#include "op_attn_model.h"
#include "op_attn.h"
#include <stdio.h>
#include <string.h>

/* attn_decode's ten dimensions must fit a kt_problem. */
_Static_assert(KT_ATTN_NDIMS <= KT_OP_MAX_DIMS, "KT_OP_MAX_DIMS is below attn_decode's dimensions");

void kt_attn_model_limits(const kt_model_attn *a, long long limit[KT_OP_MAX_DIMS])
{
    memset(limit, 0, KT_OP_MAX_DIMS * sizeof limit[0]);
    long long ctx = a->max_ctx;
    /* q rows of a windowed decode see at most window + q - 1 distinct keys. */
    if (a->window > 0 && (ctx == 0 || a->window + KT_ATTN_MODEL_MAX_Q < ctx)) ctx = a->window + KT_ATTN_MODEL_MAX_Q;
    limit[KT_ATTN_D_Q] = KT_ATTN_MODEL_MAX_Q;
    limit[KT_ATTN_D_BATCH] = KT_ATTN_MODEL_MAX_BATCH;
    limit[KT_ATTN_D_CTX] = ctx;
}

/* One group's problem, or -1 when its heads do not make a whole GQA group. */
static int attn_problem(const kt_op *op, int dtype, const kt_model_attn *a, kt_op_model_problem *o, char *err,
                        size_t errlen)
{
    if (a->head_dim < 1 || a->kv_heads_per_rank < 1 || a->heads_per_rank < a->kv_heads_per_rank ||
        a->heads_per_rank % a->kv_heads_per_rank)
        return snprintf(err, errlen, "%s: attention group %s: %d q heads over %d kv heads (head_dim %d) per rank",
                        op->name, a->kind, a->heads_per_rank, a->kv_heads_per_rank, a->head_dim), -1;
    memset(o, 0, sizeof *o);
    o->p.op = op;
    o->p.dtype = dtype;
    long long *d = o->p.dim;
    d[KT_ATTN_D_D] = a->head_dim;
    d[KT_ATTN_D_G] = a->heads_per_rank / a->kv_heads_per_rank;
    d[KT_ATTN_D_HKV] = a->kv_heads_per_rank;
    d[KT_ATTN_D_BS] = KT_ATTN_MODEL_BLOCK;
    d[KT_ATTN_D_WIN] = a->window;
    d[KT_ATTN_D_CAP] = a->softcap;
    d[KT_ATTN_D_SINK] = a->sinks ? 1 : 0;
    d[KT_ATTN_D_Q] = d[KT_ATTN_D_BATCH] = d[KT_ATTN_D_CTX] = 1;
    kt_attn_model_limits(a, o->limit);
    snprintf(o->layers, sizeof o->layers, "attn.%s", a->kind);
    o->calls = a->layers;
    return 0;
}

int kt_attn_model_problems(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen)
{
    const kt_op *op = &kt_op_attn_decode;
    /* The model's dtype is the q, out and cache dtype; an fp8 cache is a serving choice, not a model fact. */
    int dt = kt_op_dtype_index(op, m->dtype);
    if (dt < 0) return snprintf(err, errlen, "%s: dtype '%s' (bf16 or fp16)", op->name, m->dtype ? m->dtype : "?"), -1;
    int n = 0;
    for (int i = 0; i < m->nattn && n < max; i++, n++)
        if (attn_problem(op, dt, &m->attn[i], &out[n], err, errlen)) return -1;
    return n;
}
