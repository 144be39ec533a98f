/* worker.h: the sweep's GPU side (`kt worker`), one process per GPU, driven over a pipe by the
 * sweep (sweep.c). A variant that faults takes only this process down; the sweep records it as
 * `crash` and starts a new worker. Prefix wk_.
 *
 * Protocol: text lines, one message each; the sweep writes to the worker's stdin, the worker
 * answers on stdout.
 *   worker <- problem <cold 0|1> <seed> <rounds> <problem key>   (any op of runtime/op.h's table)
 *   worker <- variant <code_hash> <verify 0|1> <name>   (one or more; the kernel is the database's
 *             row of that code hash serving the key's op, its parameters read by the op's
 *             descriptor; the name is for messages)
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

/* Device test: every op's GPU reference kernel against its float64 CPU reference on random data at
 * the op's check shapes (op->ref_checks: ragged and model shapes), every dtype. Prints one line per shape and a summary; returns 0 when all pass. */
int wk_check_reference(const char *db_path, const char *target, int device);

#endif
