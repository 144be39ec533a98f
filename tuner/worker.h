/* worker.h: the sweep's GPU side (`kt worker`), one process per GPU, driven over a pipe by the
 * sweep (sweep.c). A variant that faults takes only this process down; the sweep records it as
 * `crash` and starts a new worker. Prefix wk_.
 *
 * Protocol: text lines, one message each; the sweep writes to the worker's stdin, the worker
 * answers on stdout.
 *   worker <- problem <dtype> <m> <n> <k> <cold 0|1> <seed> <rounds>
 *   worker <- variant <code_hash> <name> <bm> <bn> <bk> <wm> <wn> <sk> <st> <verify 0|1>   (one or more)
 *   worker <- control <code_hash>            (optional: time this code twice, as the noise control)
 *   worker <- run                            (verify, then time every variant that passed)
 *   worker -> ready <device_key> <l2_bytes> <compute_units> <copy_gbps> <name...>   (once, at start)
 *   worker -> begin <code_hash>              (before its verification launch: a crash is blamed on it)
 *   worker -> verified <code_hash> ok|wrong|error <rel_error|nan> <detail...>
 *   worker -> timed <code_hash> <median_us> <min_us> <max_us> <reps> <launches>
 *   worker -> control <code_hash> <median_a_us> <median_b_us>
 *   worker -> done                           (the problem is finished; send the next)
 *   worker -> fail <message>                 (the problem could not be run; the worker lives on)
 * A fault that poisons the GPU context (illegal address, launch timeout) is reported as
 * `verified <hash> crash <detail>` when the worker sees it, and the worker exits with status 3. */
#ifndef KT_WORKER_H
#define KT_WORKER_H

/* The worker loop on stdin/stdout. Returns the process exit status. */
int wk_main(const char *db_path, const char *target, int device);

/* Device test: the GPU reference kernel against a float64 CPU reference on random data at ragged
 * and model shapes, both dtypes. Prints one line per shape and a summary; returns 0 when all pass. */
int wk_check_reference(const char *db_path, const char *target, int device);

/* Norm-wise relative error bound a variant's output must meet, per dtype ("bf16" 2^-8, "fp16"
 * 2^-9: a few output roundings, far above fp32 accumulation error at LLM K, far below any
 * indexing or fragment-layout bug, which lands near 1). */
double wk_error_bound(const char *dtype);

#endif
