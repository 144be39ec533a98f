/* compile.h: run compile jobs in parallel (one process per job step, `parallel` at once),
 * capturing each job's compiler output in its log file, with progress and ETA on stderr. */
#ifndef KT_COMPILE_H
#define KT_COMPILE_H
#include "toolchain.h"

typedef struct build_job {
    const char *label;          /* shown in progress lines */
    kt_compile_steps steps;
    char log[1400];             /* stdout+stderr of every step */
    int status;                 /* after build_run_jobs: 0 ok, else the failing step's exit code (-1: not started) */
    int killed;                 /* 1: the failing step's process died of a signal (not an exit code) */
    double seconds;             /* wall time of the job */
} build_job;

/* Run all jobs; returns the number that failed. `quiet` suppresses the progress line. */
int build_run_jobs(build_job *jobs, int njobs, int parallel, int quiet);

/* Cores available to this process (the default -j). */
int build_default_parallelism(void);

#endif
