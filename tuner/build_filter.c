/* build_filter.c: a model's problems as the build stage's filter (see build_filter.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "build_filter.h"
#include "model.h"
#include "op.h"
#include "sweep.h"
#include "tune.h"

struct kt_build_filter {
    sweep_problem *ps;
    int np;
};

int kt_build_filter_open(const char *model, int tp, const char *shapes, const char *only, kt_build_filter **out,
                         char *err, size_t errlen)
{
    *out = NULL;
    kt_build_filter *f = calloc(1, sizeof *f);
    model_problems *mp = malloc(sizeof *mp);   /* large: off the stack */
    if (!f || !mp) {
        free(f);
        free(mp);
        snprintf(err, errlen, "out of memory");
        return 2;
    }
    int rc = kt_tune_problems(model, tp, shapes, only, mp, &f->ps, &f->np, err, errlen);
    free(mp);
    if (rc) {
        free(f);
        return rc;
    }
    *out = f;
    return 0;
}

/* Whether some problem of op admits the variant. Misfit at one compute unit: the most permissive
 * count (a persistent grid's item bound tightens with the units), so the filter may keep a form a
 * device turns down, never drop one it could run. */
static int bf_serves(const kt_build_filter *f, const kt_op *op, const char *params_json)
{
    kt_variant v;
    char dtype[32], msg[256];
    if (kt_variant_parse(op, params_json, &v, dtype, sizeof dtype, msg, sizeof msg)) return 1;   /* built, and refused where it is read */
    for (int i = 0; i < f->np; i++) {
        const kt_problem *p = &f->ps[i].p;
        if (p->op != op || p->dtype < 0 || p->dtype >= op->ndtypes || strcmp(op->dtypes[p->dtype], dtype)) continue;
        if (!op->misfit || !op->misfit(&v, p, 1, msg, sizeof msg)) return 1;
    }
    return 0;
}

int kt_build_filter_keeps(const void *filter, const char *ops, const char *params_json)
{
    const kt_build_filter *f = filter;
    if (!f || !ops || !params_json) return 1;
    char name[64];
    int families = 0;
    for (const char *s = ops; *s;) {
        size_t n = strcspn(s, ",");
        snprintf(name, sizeof name, "%.*s", (int)(n < sizeof name ? n : sizeof name - 1), s);
        const kt_op *op = kt_op_find(name);
        if (op) {
            families++;
            if (bf_serves(f, op, params_json)) return 1;
        }
        s += n + (s[n] == ',');
    }
    return families == 0;
}

void kt_build_filter_close(kt_build_filter *f)
{
    if (!f) return;
    free(f->ps);
    free(f);
}
