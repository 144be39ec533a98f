/* pipeline.h: the first half of ktune for one recipe and one target: enumerate the recipe's
 * variants, compile what the cache lacks (in parallel), read each code object back, and store
 * every kernel in the database. Interrupting it loses nothing: finished code objects are in the
 * cache and the next run stores them without recompiling. */
#ifndef KT_PIPELINE_H
#define KT_PIPELINE_H
#include <stdio.h>
#include "target.h"

typedef struct kt_gen_options {
    const char *recipe;
    const char *db_path;
    const char *cache_dir;     /* compile cache; default: <project>/out/cache (KT_CACHE overrides) */
    const char *extra_flags;   /* appended to the compiler flags; part of the fingerprint */
    int jobs;                  /* parallel compiles; <= 0: cores */
    int quiet;                 /* no progress line */
    int sample;                /* > 0: build only this many of the admitted variants, evenly spaced in
                                  the recipe's order (a test's sample); nothing is retired then */
    /* NULL, or which admitted variants to build (a model's: tuner/build_filter.h): keep(keep_ctx,
     * the recipe's ops comma-separated, the variant's params JSON) nonzero to build it. The others
     * are counted (unused), not built, and stay as they are in the database: still admitted, so
     * only kernels the recipe no longer admits are retired */
    int (*keep)(const void *keep_ctx, const char *ops, const char *params_json);
    const void *keep_ctx;
} kt_gen_options;

#define KT_GEN_MAX_REASONS 16
#define KT_GEN_MAX_WAVES 65

typedef struct kt_gen_summary {
    char target[16];
    char compiler[600];        /* kind, path and first version line */
    char fingerprint[65];
    int space;                 /* size of the recipe's axes product */
    int variants;              /* passed the recipe's constraint and the keep filter (built) */
    int rejected;              /* failed it (reasons below) */
    int compiled, cached, failed, excluded, ok;
    struct { char reason[128]; int count; } rejected_by[KT_GEN_MAX_REASONS], excluded_by[KT_GEN_MAX_REASONS];
    int nrejected_by, nexcluded_by;
    int waves_hist[KT_GEN_MAX_WAVES]; /* ok kernels by waves/SIMD (AMD) or warps/SM (NVIDIA); last bin = more */
    char first_failure[512];   /* the first failed variant and its first error line */
    double seconds;
    int retired;               /* stored kernels of this recipe it no longer admits, now excluded */
    int unused;                /* admitted variants the keep filter left out (no problem of the run) */
    int interrupted;           /* compiles killed by a signal: neither cached nor stored (rerun) */
    char only_for[96];         /* set when the recipe's targets leave this one out: nothing ran */
} kt_gen_summary;

/* Run the pipeline for target t. Returns 0 when it ran (variants may still have failed: see the
 * summary), nonzero with err when it could not (bad recipe, no compiler, database refused). */
int pipeline_gen(const kt_gen_options *o, const kt_target *t, kt_gen_summary *sum, char *err, size_t errlen);

/* Print a summary for a person. */
void pipeline_print_summary(FILE *f, const kt_gen_summary *s);

/* The FFI entry (tune.lua): run target `target_name` and print its summary to stdout.
 * Returns 0, 1 when the run could not happen or some compiles were killed by a signal (message in
 * err), 2 for an unknown target. */
int pipeline_gen_and_print(const kt_gen_options *o, const char *target_name, char *err, size_t errlen);

#endif
