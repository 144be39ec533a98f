/* sweep.h: measure every problem of a model on the card and write selections (DESIGN.md "Winners",
 * "Measurement protocol"). Prefix sweep_.
 *
 * Per problem: the law's pick and the pruned candidates (plan.h); a coarse pass (verify each
 * variant once, then time every verified variant interleaved, with an identical-code control);
 * a fine pass over the finalists and the law's pick; a tiebreak pass when the winner is inside
 * the noise floor; then the selection, with the law's regret. Each verification is committed as
 * it arrives and each pass as it completes, keyed by the code object's hash, so a re-run (or
 * --resume after kill -9) measures only what is missing. The GPU work runs in `kt worker`
 * processes, one per GPU; a worker that dies or hangs is replaced and the variant it was on is
 * recorded as crash or timeout. Without a device, every problem gets the law's pick, marked so. */
#ifndef KT_SWEEP_H
#define KT_SWEEP_H
#include <stddef.h>
#include "op.h"

typedef struct sweep_problem {
    char key[128];           /* 'gemm bf16 n=1536 k=4096 m<=16' (kt_problem_key of p) */
    kt_problem p;            /* any op of the table; its bucketed dimension is the edge */
    char layers[64];         /* 'qkv', 'o,down', ... */
    int calls;               /* calls per forward pass */
} sweep_problem;

typedef struct sweep_options {
    const char *db_path, *target, *model, *args;
    int tp;
    int gpus;                /* workers, one per GPU ordinal 0..gpus-1; 0 = 1 */
    int resume;              /* continue the newest unfinished run of this model/tp/device */
    int no_device;           /* 1: do not look for a GPU (law selections) */
    double budget_min;       /* stop starting problems after this many minutes; 0 = no limit */
    int quiet;
} sweep_options;

typedef struct sweep_outcome {
    char mode[8];            /* 'sweep' | 'law' */
    char device_key[96];
    char device_name[256];
    char no_device_reason[512];
    long long run_id;
    int measured, by_law, failed, unmeasured;   /* problems, by how their selection was made */
    double noise_floor;      /* median control spread of this run's passes (NaN: none) */
    double copy_gbps;        /* measured device copy bandwidth (0: not measured) */
    int compute_units;
} sweep_outcome;

int sweep_run(const sweep_options *o, const sweep_problem *problems, int nproblems, sweep_outcome *out,
              char *err, size_t errlen);

/* CUs/SMs of the usual card of a target, for law picks made without a device (gfx1201: the
 * RX 9070 XT's 64; sm_90a: the H100/H200 SXM's 132). 0 when unknown. */
int sweep_default_compute_units(const char *target);

#endif
