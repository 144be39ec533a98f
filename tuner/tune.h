/* tune.h: the entry tune.lua calls after the build stage (FFI; keep the struct in step with the
 * cdef in tune.lua). */
#ifndef KT_TUNE_H
#define KT_TUNE_H
#include <stddef.h>

typedef struct kt_tune_options {
    const char *model;       /* --modelpath: a directory with config.json, or the file */
    const char *db_path;
    const char *target;
    const char *args;        /* the command line, for the run record */
    const char *only;        /* comma list of op families (runtime/op.h's table), or NULL: all */
    const char *shapes;      /* JSON file of {"n","k"[,"dtype"]} replacing the model's shapes, or NULL */
    int tp, gpus, resume, no_device, quiet;
    double budget_min;
} kt_tune_options;

/* --target auto: the target of GPU 0 (CUDA first, then HIP) into out. 0 found; 1 no GPU (msg says
 * why; the caller picks a default); -1 a GPU no target runs (msg names it). */
int kt_target_auto(char *out, size_t len, char *msg, size_t msglen);

/* Reads and validates the model (DIR/config.json at tp, and the --shapes file when given) the way
 * kt_tune_model will, touching nothing else: tune.lua calls it before any build step or database,
 * so a refused model costs no build. 0 ok, 2 refused (err has the model loader's message). */
int kt_tune_check_model(const char *model, int tp, const char *shapes, const char *only, char *err, size_t errlen);

/* Every op family's problems of one rank of the model (or of the families in the comma list
 * only; the GEMMs of the --shapes file when shapes is not NULL), each static shape crossed with its
 * op's bucket edges, in table order: *ps malloc'd. 0, or 2 with err naming the input at fault. */
struct model_problems;
struct sweep_problem;
int kt_tune_problems(const char *model, int tp, const char *shapes, const char *only, struct model_problems *mp,
                     struct sweep_problem **ps, int *np, char *err, size_t errlen);

/* 0 ok, 1 failed (err says why), 2 bad input (err names it). */
int kt_tune_model(const kt_tune_options *o, char *err, size_t errlen);

#endif
