/* build_filter.h: the variants a model's tune needs built. A variant is kept when its op's misfit
 * admits it, at its dtype, for one of the model's problems of that op; a recipe whose ops are no op
 * family (the references: "reference:gemm") is kept whole. tune.lua hands kt_build_filter_keeps
 * and the filter to the build stage (build/pipeline.h, kt_gen_options.keep). */
#ifndef KT_BUILD_FILTER_H
#define KT_BUILD_FILTER_H
#include <stddef.h>

typedef struct kt_build_filter kt_build_filter;

/* The problems of the model at tp (the --shapes file's GEMMs when shapes is not NULL; the families
 * of the comma list only when only is not NULL), as tune derives them. 0, or 2 with err naming the
 * input at fault (*out NULL). */
int kt_build_filter_open(const char *model, int tp, const char *shapes, const char *only, kt_build_filter **out,
                         char *err, size_t errlen);

/* Nonzero when a variant of a recipe serving `ops` (comma-separated) with these params is needed. */
int kt_build_filter_keeps(const void *filter, const char *ops, const char *params_json);

void kt_build_filter_close(kt_build_filter *f);

#endif
