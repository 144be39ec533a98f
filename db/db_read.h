/* db_read.h: read-only queries over a .ktdb for `kt explain` and `kt dump`. The file is opened
 * through runtime/ktrt_dbfile.h (the same refusals as libktrt: not a ktune database, truncated,
 * corrupt, another schema version), never written, never migrated, so a database a tuner is
 * writing can be inspected while it runs.
 *
 * Listers call fn once per row in the order each documents; a nonzero return from fn stops the
 * listing and is returned. Text fields are never NULL (SQL NULL reads as ""), doubles are NAN for
 * SQL NULL, integers that may be NULL are -1 for it. Row pointers are valid during the call only.
 * Errors return -1 with "<path>: <what>: <sqlite message>" in err. */
#ifndef KT_DB_READ_H
#define KT_DB_READ_H
#include <stddef.h>

typedef struct db_reader db_reader;

/* 0, or a KT_* code of ktrt.h (KT_ENODB, KT_EBADDB) with a message naming the file. */
int db_read_open(const char *path, db_reader **out, char *err, size_t errlen);
void db_read_close(db_reader *r);   /* NULL is fine */
/* The file's schema version (PRAGMA user_version; the reader never migrates), -1 on error. */
int db_read_schema_version(db_reader *r);

typedef struct db_read_device {
    const char *key, *target, *arch, *name;
    int compute_units, pci_device_id;
    long long l2_bytes;                 /* -1 when NULL */
} db_read_device;
/* Ordered by key. */
int db_read_devices(db_reader *r, int (*fn)(void *ctx, const db_read_device *row), void *ctx,
                    char *err, size_t errlen);

typedef struct db_read_run {
    long long id;
    const char *device_key, *target, *mode, *model, *args, *status, *note;
    const char *started_at, *finished_at;   /* "YYYY-MM-DDTHH:MM:SSZ" (UTC), "" when NULL */
    int tp, gpus;
    double noise_floor;
} db_read_run;
/* Ordered by start time, then id. */
int db_read_runs(db_reader *r, int (*fn)(void *ctx, const db_read_run *row), void *ctx, char *err, size_t errlen);
/* Device key of the most recently started run: 1 found, 0 no run, -1 error. */
int db_read_latest_run_device(db_reader *r, char *key, size_t keylen, char *err, size_t errlen);

typedef struct db_read_problem {
    const char *key, *op, *dtype, *phase;
} db_read_problem;
/* Ordered by op, dtype, then the key's dimensions numerically (not as key text). */
int db_read_problems(db_reader *r, int (*fn)(void *ctx, const db_read_problem *row), void *ctx,
                     char *err, size_t errlen);

typedef struct db_read_run_problem {
    long long run_id;
    const char *problem_key, *layers;
    int calls;
} db_read_run_problem;
/* Ordered by run start, run id, then problem as above. */
int db_read_run_problems(db_reader *r, int (*fn)(void *ctx, const db_read_run_problem *row), void *ctx,
                         char *err, size_t errlen);

typedef struct db_read_pass {
    long long id, run_id;
    const char *device_key, *problem_key, *kind, *control_hash;
    int variants, rounds, cold, gpu;
    double control_spread;
} db_read_pass;
/* Ordered by device, problem (numerically), kind (coarse, fine, tiebreak), run start, creation, id. */
int db_read_passes(db_reader *r, int (*fn)(void *ctx, const db_read_pass *row), void *ctx,
                   char *err, size_t errlen);

typedef struct db_read_measurement {
    long long id, pass_id, run_id;      /* pass_id -1 for verification */
    const char *device_key, *problem_key, *code_hash, *kernel, *kind, *status, *detail;
    double error, median_us, min_us, max_us;
    int reps, launches;                 /* -1 when NULL */
    const char *verify_status;          /* timings listed by db_read_timings: the code's verification, or "" */
    double verify_error;
} db_read_measurement;
/* A pass's timings, ordered by kernel, code hash, id. */
int db_read_pass_measurements(db_reader *r, long long pass_id, int (*fn)(void *ctx, const db_read_measurement *row),
                              void *ctx, char *err, size_t errlen);
/* Rows not under a pass (verification, and any timing whose pass is missing), ordered by device,
 * problem (numerically), kind, kernel, code hash, id. */
int db_read_unpassed_measurements(db_reader *r, int (*fn)(void *ctx, const db_read_measurement *row), void *ctx,
                                  char *err, size_t errlen);
/* Timings (coarse, fine, tiebreak) of one problem key on one device, with each code object's
 * verification joined in; fastest median first, rows without a median (failures) last. */
int db_read_timings(db_reader *r, const char *device_key, const char *problem_key,
                    int (*fn)(void *ctx, const db_read_measurement *row), void *ctx, char *err, size_t errlen);

typedef struct db_read_selection {
    const char *device_key, *target, *problem_key, *op, *dtype, *kernel, *code_hash, *source;
    const char *law_kernel, *decided_by;
    double time_us, error, law_us, regret, noise_floor;
    long long run_id;                   /* -1 when NULL */
} db_read_selection;
/* Ordered by device, then problem (numerically). device_key/problem_key NULL: all; else only that. */
int db_read_selections(db_reader *r, const char *device_key, const char *problem_key,
                       int (*fn)(void *ctx, const db_read_selection *row), void *ctx, char *err, size_t errlen);
/* Distinct device keys that have selections, ordered: the count, -1 on error; keys[i] filled up to max. */
int db_read_selection_devices(db_reader *r, char (*keys)[64], int max, char *err, size_t errlen);

typedef struct db_read_kernel_count {
    const char *target, *status, *ops;
    int count;
} db_read_kernel_count;
/* Kernels per (target, ops, status), ordered by those. */
int db_read_kernel_counts(db_reader *r, int (*fn)(void *ctx, const db_read_kernel_count *row), void *ctx,
                          char *err, size_t errlen);

#endif
