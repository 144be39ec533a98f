/* recipe.h: evaluate a Lua recipe (templates/<family>/<name>.lua) for one target and enumerate the
 * variants that pass its constraint, each with its deterministic kernel name and the instantiation
 * source the toolchain compiles. C never holds a variant list; the recipe does.
 *
 * Recipe table fields: template, kernel (name prefix), ops, axes = { {name, {values}}, ... },
 * threads(p, t), lds_bytes(p, t) (optional), constraint(p, t) -> true | false, "reason", and
 * targets = { "sm_90a", ... } (optional): the only targets the template is written for, and
 * lds_at_launch = true (optional): lds_bytes is dynamic shared memory each launch provides.
 * law = "swapab" (optional; default: the template file's stem): how the law scores the variants,
 * written into each variant's params as "law" after the axes (not into the source or name).
 * companions = { "_prep", "_out" } (optional): the suffixes of the other kernels each code object
 * holds (launched beside the named one); the build holds them to the same spill, scratch and
 * register rules, and a code object without one of them fails.
 * A `family` field is ignored (the recipe's folder is its family).
 * `p` refuses unknown axis names and `t` unknown target fields, so a typo is an error with a line. */
#ifndef KT_RECIPE_H
#define KT_RECIPE_H
#include <stddef.h>
#include "build/target.h"
#include "build/kernel_name.h"

typedef struct gen_variant {
    char name[KT_KERNEL_NAME_MAX];   /* extern "C" kernel name, e.g. kt_gemm_dense_bf16_bm64_bn64_bk32_wm2_wn2_sk1 */
    char params_json[512];   /* {"dtype":"bf16","BM":64,...,"law":"dense"}: the axes in order, then the law */
    char *source;            /* instantiation source (owned) */
    int threads;             /* workgroup size the recipe declares */
    int lds_estimate;        /* recipe's LDS estimate in bytes, -1 if it gives none */
    int lds_dynamic;         /* with lds_at_launch: the bytes every launch must provide; else 0 */
} gen_variant;

typedef struct gen_reason_count {
    char reason[96];
    int count;
} gen_reason_count;

typedef struct gen_space {
    char recipe_path[512];
    char template_path[512];   /* the template file, beside the recipe */
    char template_rel[128];    /* its include path under the templates root, e.g. "gemm/dense.hip" */
    char templates_root[512];  /* directory holding arch/ and abi/ (the recipe's grandparent) */
    char kernel[64];
    char ops[128];             /* comma-separated ops the recipe serves */
    char law[32];              /* how the law scores the variants ("law" in params); default: the template's stem */
    char companions[96];       /* the other kernels' name suffixes, comma-separated ("" none) */
    int total;                 /* size of the axes product */
    gen_variant *variants;     /* those that passed the constraint, in enumeration order */
    int nvariants;
    gen_reason_count *rejected;/* constraint rejections counted by reason */
    int nrejected;
    int not_for_target;        /* the recipe's `targets` leave this target out: no variants, no error */
    char only_for[96];         /* those targets, comma-separated ("" when the recipe names none) */
} gen_space;

/* Enumerate recipe_path's space for target t. On error returns nonzero with a message that names
 * the recipe file and, where Lua knows it, the line. An empty space is an error, unless the recipe's `targets` leave t out (not_for_target). */
int gen_enumerate(const char *recipe_path, const kt_target *t, gen_space *out, char *err, size_t errlen);
void gen_space_free(gen_space *s);

#endif
