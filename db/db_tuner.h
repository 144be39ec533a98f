/* db_tuner.h: the tuner's rows (schema v2): devices, runs, problems, passes, measurements,
 * selections. Written as each result arrives, so an interrupted sweep loses at most the pass in
 * flight. Doubles that are NaN are stored as NULL; ids of 0 mean NULL. */
#ifndef KT_DB_TUNER_H
#define KT_DB_TUNER_H
#include <stddef.h>
#include "db.h"
#include "kernel_name.h"

typedef struct db_device_row {
    const char *key, *target, *arch, *name;
    int compute_units, pci_device_id;
    long long l2_bytes;
} db_device_row;
int db_device_put(kt_db *db, const db_device_row *r, char *err, size_t errlen);

typedef struct db_run_row {
    const char *device_key, *target, *mode, *model, *args;
    int tp, gpus;
} db_run_row;
int db_run_begin(kt_db *db, const db_run_row *r, long long *run_id, char *err, size_t errlen);
/* The newest run with status 'running' for this device/target/model/tp: 1 found, 0 not, -1 error. */
int db_run_find_unfinished(kt_db *db, const db_run_row *r, long long *run_id, char *err, size_t errlen);
int db_run_finish(kt_db *db, long long run_id, const char *status, double noise_floor, const char *note,
                  char *err, size_t errlen);

int db_problem_put(kt_db *db, const char *key, const char *op, const char *dtype, const char *phase, char *err,
                   size_t errlen);
int db_run_problem_put(kt_db *db, long long run_id, const char *problem_key, const char *layers, int calls,
                       char *err, size_t errlen);

/* A compiled, valid kernel of a target as the tuner sees it: its parameters stay the recipe's JSON,
 * read by the op's descriptor (runtime/op.h), never here. */
typedef struct db_candidate {
    char name[KT_KERNEL_NAME_MAX];
    char code_hash[72];
    char params[512];        /* the kernel row's params JSON */
    char template_path[128]; /* e.g. "gemm/dense.hip" */
    int threads, regs, lds_bytes, waves_per_simd;
} db_candidate;
/* Kernels with status 'ok' and code whose ops list names op and whose params say this dtype,
 * ordered by name. *out is malloc'd (free it). */
int db_candidates(kt_db *db, const char *target, const char *op, const char *dtype,
                  db_candidate **out, int *count, char *err, size_t errlen);
/* The ok kernel of target with this code hash that serves op: 1 found (out filled), 0 not, -1 error. */
int db_kernel_by_hash(kt_db *db, const char *target, const char *code_hash, const char *op, db_candidate *out,
                      char *err, size_t errlen);
/* The code object of (target, name): *code malloc'd. 1 found, 0 not, -1 error. */
int db_kernel_code(kt_db *db, const char *target, const char *name, void **code, size_t *len,
                   char *err, size_t errlen);

typedef struct db_measurement_row {
    const char *device_key, *problem_key, *code_hash, *kernel;
    const char *kind;          /* verify | coarse | fine | tiebreak */
    const char *status;        /* ok | wrong | crash | timeout | error */
    const char *detail;
    long long pass_id, run_id;
    double error, median_us, min_us, max_us;
    int reps, launches;
} db_measurement_row;
/* verify rows replace an earlier verify row of the same (device, problem, code hash). */
int db_measurement_put(kt_db *db, const db_measurement_row *r, char *err, size_t errlen);

/* The verification of a code object on a problem: 1 found (status/error filled), 0 not, -1 error. */
int db_verify_get(kt_db *db, const char *device_key, const char *problem_key, const char *code_hash,
                  char status[16], double *error, char *err, size_t errlen);
/* The newest timing of a code object (kind coarse, fine or tiebreak): 1 found, 0 not, -1 error. */
int db_timing_get(kt_db *db, const char *device_key, const char *problem_key, const char *code_hash,
                  const char *kind, double *median_us, char *err, size_t errlen);

/* The median of a code object in one pass: 1 found, 0 not, -1 error. Deciding from a pass reads
 * this, not the newest timing: the same code may have been timed again in a later pass with
 * other members, and a decision compares only medians taken side by side. */
int db_timing_in_pass(kt_db *db, long long pass_id, const char *code_hash, double *median_us, char *err,
                      size_t errlen);

typedef struct db_pass_row {
    long long run_id;
    const char *device_key, *problem_key, *kind, *control_hash;
    int variants, rounds, cold, gpu;
    double control_spread;
} db_pass_row;
int db_pass_put(kt_db *db, const db_pass_row *r, long long *pass_id, char *err, size_t errlen);
/* The newest pass of this kind whose timed code hashes are exactly `hashes` (any order): 1 found
 * (pass_id, control_spread filled), 0 not, -1 error. */
int db_pass_find(kt_db *db, const char *device_key, const char *problem_key, const char *kind,
                 const char *const *hashes, int n, long long *pass_id, double *control_spread,
                 char *err, size_t errlen);

typedef struct db_selection_row {
    const char *device_key, *target, *problem_key, *op, *dtype;
    const char *kernel, *code_hash, *source, *law_kernel, *decided_by;
    double time_us, error, law_us, regret, noise_floor;
    long long run_id;
} db_selection_row;
int db_selection_put(kt_db *db, const db_selection_row *r, char *err, size_t errlen);
/* Storage for the text columns db_selection_get reads back. */
typedef struct db_selection_text {
    char kernel[KT_KERNEL_NAME_MAX], source[16], law_kernel[KT_KERNEL_NAME_MAX], decided_by[32];
} db_selection_text;
/* The selection of (device, problem): 1 found (r's numbers filled, its strings pointing into
 * text), 0 not, -1 error. */
int db_selection_get(kt_db *db, const char *device_key, const char *problem_key, db_selection_row *r,
                     db_selection_text *text, char *err, size_t errlen);

#endif
