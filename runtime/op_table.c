/* op_table.c: every op family ktune knows, in one table (runtime/op.h). Adding a family is adding
 * its descriptor file and one line here. */
#include <string.h>
#include "op.h"
#include "op_gemm.h"
#include "op_rmsnorm.h"
#include "op_attn.h"
#include "op_attn_prefill.h"
#include "op_gdn.h"
#include "op_gdn_prefill.h"

static const kt_op *const kt_ops[] = {
    &kt_op_gemm,
    &kt_op_rmsnorm_add,
    &kt_op_attn_decode,
    &kt_op_attn_prefill,
    &kt_op_gdn_decode,
    &kt_op_gdn_prefill,
};
#define KT_NOPS ((int)(sizeof kt_ops / sizeof kt_ops[0]))

int kt_op_count(void) { return KT_NOPS; }

const kt_op *kt_op_at(int i) { return i >= 0 && i < KT_NOPS ? kt_ops[i] : NULL; }

const kt_op *kt_op_find(const char *name)
{
    for (int i = 0; name && i < KT_NOPS; i++)
        if (strcmp(kt_ops[i]->name, name) == 0) return kt_ops[i];
    return NULL;
}

int kt_ops_has(const char *ops, const char *op)
{
    if (!ops || !op || !*op) return 0;
    size_t n = strlen(op);
    for (const char *s = ops; *s;) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len == n && strncmp(s, op, n) == 0) return 1;
        if (!e) break;
        s = e + 1;
    }
    return 0;
}
