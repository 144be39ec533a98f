/* shapes.h: the GEMM shapes bench_gemm measures: every distinct per-rank (n, k) of every
 * <models>/<name>/config.json at each tensor parallelism, through tuner/model.h (the same
 * derivation the tuner and `kt problems` use), labelled with the models and layers behind it.
 * Prefix bsh_. */
#ifndef KT_BENCH_SHAPES_H
#define KT_BENCH_SHAPES_H
#include <stddef.h>

typedef struct bsh_shape {
    int tp, n, k;
    char models[512];       /* model folder names sharing this shape, comma-separated */
    char layers[64];        /* "qkv", "o,down", ...: the union over those models, forward order */
    int nmodels;
} bsh_shape;

typedef struct bsh_list {
    bsh_shape *v;
    int n, cap;
} bsh_list;

/* Reads every sub-folder of models_dir that holds a config.json (in name order) at each of the
 * ntp parallelisms. A model that cannot be split at some tp is skipped with a line on stderr
 * (e.g. 28 heads over tp 8); a folder without a readable models tree, or no shape at all, is an
 * error. Order: tp, then first appearance (model name order, forward layer order). */
int bsh_collect(const char *models_dir, const int *tps, int ntp, bsh_list *out, char *err, size_t errlen);
void bsh_free(bsh_list *l);

#endif
