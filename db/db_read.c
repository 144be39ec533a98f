/* db_read.c: the read-only queries of db_read.h. Orders are by keys and numbers, never by rowid
 * alone, so two databases tuned the same way list the same rows in the same order. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db_read.h"
#include "op.h"
#include "runtime/ktrt.h"
#include "runtime/ktrt_dbfile.h"

struct db_reader {
    sqlite3 *h;
    char path[512];
};

/* Problem order: op, dtype, then the dimensions numerically (kt_key_order, below), then the key
 * text. The order comes from the key alone, so schema 2's n/k/m columns are not needed. */
#define RD_PROBLEM_ORDER(alias) " kt_key_order(" alias ".problem_key)"
#define RD_UTC(col) "strftime('%Y-%m-%dT%H:%M:%SZ', " col ")"

/* kt_key_order(key): a text that sorts as the problem does: "<op> <dtype>" then each dimension
 * zero-padded; a key no descriptor parses sorts after every parsed one, by its text. */
static void rd_key_order(sqlite3_context *cx, int argc, sqlite3_value **argv)
{
    const char *key = (const char *)sqlite3_value_text(argv[0]);
    char out[256], why[160];
    kt_problem p;
    if (!key || kt_problem_parse(key, &p, why, sizeof why)) {
        snprintf(out, sizeof out, "~%s", key ? key : "");
    } else {
        int n = snprintf(out, sizeof out, "%s %s", p.op->name, p.op->dtypes[p.dtype]);
        for (int i = 0; i < p.op->ndims && n > 0 && (size_t)n < sizeof out; i++)
            n += snprintf(out + n, sizeof out - (size_t)n, " %012lld", p.dim[i]);
    }
    sqlite3_result_text(cx, out, -1, SQLITE_TRANSIENT);
}

int db_read_open(const char *path, db_reader **out, char *err, size_t errlen)
{
    *out = NULL;
    db_reader *r = calloc(1, sizeof *r);
    if (!r) return snprintf(err, errlen, "%s: out of memory", path), KT_ENODB;
    snprintf(r->path, sizeof r->path, "%s", path);
    int rc = ktrt_dbfile_open(path, &r->h, err, errlen);
    if (rc) {
        free(r);
        return rc;
    }
    if (sqlite3_create_function(r->h, "kt_key_order", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, rd_key_order, NULL,
                                NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: registering kt_key_order: %s", path, sqlite3_errmsg(r->h));
        sqlite3_close(r->h);
        free(r);
        return KT_EBADDB;
    }
    *out = r;
    return 0;
}

int db_read_schema_version(db_reader *r)
{
    sqlite3_stmt *st;
    int v = -1;
    if (sqlite3_prepare_v2(r->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK) return -1;
    if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return v;
}

void db_read_close(db_reader *r)
{
    if (!r) return;
    sqlite3_close(r->h);
    free(r);
}

static int rd_fail(db_reader *r, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s: %s", r->path, what, sqlite3_errmsg(r->h));
    return -1;
}

static const char *rd_text(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? (const char *)s : "";
}

static double rd_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static long long rd_int(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

/* Runs a prepared statement, handing each row to row_fn (which calls the caller's fn). */
typedef void (*rd_any_fn)(void);   /* the caller's typed callback, cast back by each row function */
typedef int (*rd_row_fn)(sqlite3_stmt *st, rd_any_fn fn, void *ctx);

static int rd_each(db_reader *r, sqlite3_stmt *st, rd_row_fn row, rd_any_fn fn, void *ctx, char *err, size_t errlen,
                   const char *what)
{
    int rc, stop = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if ((stop = row(st, fn, ctx)) != 0) break;
    int bad = !stop && rc != SQLITE_DONE;
    if (bad) rd_fail(r, err, errlen, what);
    sqlite3_finalize(st);
    return bad ? -1 : stop;
}

static int rd_prepare(db_reader *r, const char *sql, sqlite3_stmt **st, char *err, size_t errlen, const char *what)
{
    if (sqlite3_prepare_v2(r->h, sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return rd_fail(r, err, errlen, what);
    }
    return 0;
}

/* ---- devices ---- */

static int device_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_device d = {rd_text(st, 0), rd_text(st, 1), rd_text(st, 2), rd_text(st, 3), sqlite3_column_int(st, 4),
                        sqlite3_column_int(st, 5), rd_int(st, 6)};
    return ((int (*)(void *, const db_read_device *))fn)(ctx, &d);
}

int db_read_devices(db_reader *r, int (*fn)(void *ctx, const db_read_device *row), void *ctx,
                    char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT key, target, arch, name, compute_units, pci_device_id, l2_bytes FROM device ORDER BY key",
                   &st, err, errlen, "reading devices"))
        return -1;
    return rd_each(r, st, device_row, (rd_any_fn)fn, ctx, err, errlen, "reading devices");
}

/* ---- runs ---- */

static int run_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_run x = {sqlite3_column_int64(st, 0), rd_text(st, 1), rd_text(st, 2), rd_text(st, 3), rd_text(st, 4),
                     rd_text(st, 5), rd_text(st, 6), rd_text(st, 7), rd_text(st, 8), rd_text(st, 9),
                     sqlite3_column_int(st, 10), sqlite3_column_int(st, 11), rd_real(st, 12)};
    return ((int (*)(void *, const db_read_run *))fn)(ctx, &x);
}

int db_read_runs(db_reader *r, int (*fn)(void *ctx, const db_read_run *row), void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT id, device_key, target, mode, model, args, status, note, " RD_UTC("started_at") ", "
                      RD_UTC("finished_at") ", tp, gpus, noise_floor FROM run ORDER BY started_at, id",
                   &st, err, errlen, "reading runs"))
        return -1;
    return rd_each(r, st, run_row, (rd_any_fn)fn, ctx, err, errlen, "reading runs");
}

int db_read_latest_run_device(db_reader *r, char *key, size_t keylen, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT device_key FROM run ORDER BY started_at DESC, id DESC LIMIT 1", &st, err, errlen,
                   "reading runs"))
        return -1;
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) snprintf(key, keylen, "%s", rd_text(st, 0));
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) rd_fail(r, err, errlen, "reading runs");
    sqlite3_finalize(st);
    return rc == SQLITE_ROW || rc == SQLITE_DONE ? found : -1;
}

/* ---- problems ---- */

static int problem_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_problem p = {rd_text(st, 0), rd_text(st, 1), rd_text(st, 2), rd_text(st, 3)};
    return ((int (*)(void *, const db_read_problem *))fn)(ctx, &p);
}

int db_read_problems(db_reader *r, int (*fn)(void *ctx, const db_read_problem *row), void *ctx,
                     char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT key, op, dtype, phase FROM problem ORDER BY kt_key_order(key), key",
                   &st, err, errlen, "reading problems"))
        return -1;
    return rd_each(r, st, problem_row, (rd_any_fn)fn, ctx, err, errlen, "reading problems");
}

static int run_problem_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_run_problem p = {sqlite3_column_int64(st, 0), rd_text(st, 1), rd_text(st, 2), sqlite3_column_int(st, 3)};
    return ((int (*)(void *, const db_read_run_problem *))fn)(ctx, &p);
}

int db_read_run_problems(db_reader *r, int (*fn)(void *ctx, const db_read_run_problem *row), void *ctx,
                         char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT rp.run_id, rp.problem_key, rp.layers, rp.calls FROM run_problem rp "
                      "LEFT JOIN run ru ON ru.id = rp.run_id "
                      "ORDER BY ru.started_at, rp.run_id," RD_PROBLEM_ORDER("rp") ", rp.problem_key",
                   &st, err, errlen, "reading run problems"))
        return -1;
    return rd_each(r, st, run_problem_row, (rd_any_fn)fn, ctx, err, errlen, "reading run problems");
}

/* ---- passes and measurements ---- */

static int pass_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_pass p = {sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), rd_text(st, 2), rd_text(st, 3),
                      rd_text(st, 4), rd_text(st, 5), sqlite3_column_int(st, 6), sqlite3_column_int(st, 7),
                      sqlite3_column_int(st, 8), sqlite3_column_int(st, 9), rd_real(st, 10)};
    return ((int (*)(void *, const db_read_pass *))fn)(ctx, &p);
}

#define RD_KIND_ORDER(col) "CASE " col " WHEN 'verify' THEN 0 WHEN 'coarse' THEN 1 WHEN 'fine' THEN 2 ELSE 3 END"

int db_read_passes(db_reader *r, int (*fn)(void *ctx, const db_read_pass *row), void *ctx,
                   char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT pa.id, pa.run_id, pa.device_key, pa.problem_key, pa.kind, pa.control_hash, pa.variants, "
                      "pa.rounds, pa.cold, pa.gpu, pa.control_spread FROM pass pa LEFT JOIN run ru ON ru.id = pa.run_id"
                       " ORDER BY pa.device_key," RD_PROBLEM_ORDER("pa") ", pa.problem_key, "
                      RD_KIND_ORDER("pa.kind") ", ru.started_at, pa.created_at, pa.id",
                   &st, err, errlen, "reading passes"))
        return -1;
    return rd_each(r, st, pass_row, (rd_any_fn)fn, ctx, err, errlen, "reading passes");
}

#define RD_MEASUREMENT_COLS "me.id, me.pass_id, me.run_id, me.device_key, me.problem_key, me.code_hash, me.kernel, " \
    "me.kind, me.status, me.detail, me.error, me.median_us, me.min_us, me.max_us, me.reps, me.launches"

static int measurement_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_measurement m = {
        sqlite3_column_int64(st, 0), rd_int(st, 1), sqlite3_column_int64(st, 2), rd_text(st, 3), rd_text(st, 4),
        rd_text(st, 5), rd_text(st, 6), rd_text(st, 7), rd_text(st, 8), rd_text(st, 9), rd_real(st, 10),
        rd_real(st, 11), rd_real(st, 12), rd_real(st, 13), (int)rd_int(st, 14), (int)rd_int(st, 15), "", NAN,
    };
    if (sqlite3_column_count(st) > 17) {
        m.verify_status = rd_text(st, 16);
        m.verify_error = rd_real(st, 17);
    }
    return ((int (*)(void *, const db_read_measurement *))fn)(ctx, &m);
}

int db_read_pass_measurements(db_reader *r, long long pass_id, int (*fn)(void *ctx, const db_read_measurement *row),
                              void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT " RD_MEASUREMENT_COLS " FROM measurement me WHERE me.pass_id = ?1 "
                      "ORDER BY me.kernel, me.code_hash, me.id", &st, err, errlen, "reading measurements"))
        return -1;
    sqlite3_bind_int64(st, 1, pass_id);
    return rd_each(r, st, measurement_row, (rd_any_fn)fn, ctx, err, errlen, "reading measurements");
}

int db_read_unpassed_measurements(db_reader *r, int (*fn)(void *ctx, const db_read_measurement *row), void *ctx,
                                  char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT " RD_MEASUREMENT_COLS " FROM measurement me "
                      "WHERE me.pass_id IS NULL OR me.pass_id NOT IN (SELECT id FROM pass) "
                      "ORDER BY me.device_key," RD_PROBLEM_ORDER("me") ", me.problem_key, " RD_KIND_ORDER("me.kind")
                      ", me.kernel, me.code_hash, me.id", &st, err, errlen, "reading measurements"))
        return -1;
    return rd_each(r, st, measurement_row, (rd_any_fn)fn, ctx, err, errlen, "reading measurements");
}

int db_read_timings(db_reader *r, const char *device_key, const char *problem_key,
                    int (*fn)(void *ctx, const db_read_measurement *row), void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT " RD_MEASUREMENT_COLS ", v.status, v.error FROM measurement me "
                      "LEFT JOIN measurement v ON v.kind = 'verify' AND v.device_key = me.device_key AND "
                      "v.problem_key = me.problem_key AND v.code_hash = me.code_hash "
                      "WHERE me.device_key = ?1 AND me.problem_key = ?2 AND me.kind IN ('coarse', 'fine', 'tiebreak') "
                      "ORDER BY me.median_us IS NULL, me.median_us, me.kernel, " RD_KIND_ORDER("me.kind") ", me.id",
                   &st, err, errlen, "reading timings"))
        return -1;
    sqlite3_bind_text(st, 1, device_key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, problem_key, -1, SQLITE_TRANSIENT);
    return rd_each(r, st, measurement_row, (rd_any_fn)fn, ctx, err, errlen, "reading timings");
}

/* ---- selections ---- */

static int selection_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_selection s = {
        rd_text(st, 0), rd_text(st, 1), rd_text(st, 2), rd_text(st, 3), rd_text(st, 4), rd_text(st, 5),
        rd_text(st, 6), rd_text(st, 7), rd_text(st, 8), rd_text(st, 9), rd_real(st, 10), rd_real(st, 11),
        rd_real(st, 12), rd_real(st, 13), rd_real(st, 14), rd_int(st, 15),
    };
    return ((int (*)(void *, const db_read_selection *))fn)(ctx, &s);
}

int db_read_selections(db_reader *r, const char *device_key, const char *problem_key,
                       int (*fn)(void *ctx, const db_read_selection *row), void *ctx, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT device_key, target, problem_key, op, dtype, kernel, code_hash, source, law_kernel, "
                      "decided_by, time_us, error, law_us, regret, noise_floor, run_id FROM selection "
                      "WHERE (?1 IS NULL OR device_key = ?1) AND (?2 IS NULL OR problem_key = ?2) "
                      "ORDER BY device_key, kt_key_order(problem_key), problem_key", &st, err, errlen, "reading selections"))
        return -1;
    if (device_key) sqlite3_bind_text(st, 1, device_key, -1, SQLITE_TRANSIENT);
    if (problem_key) sqlite3_bind_text(st, 2, problem_key, -1, SQLITE_TRANSIENT);
    return rd_each(r, st, selection_row, (rd_any_fn)fn, ctx, err, errlen, "reading selections");
}

int db_read_selection_devices(db_reader *r, char (*keys)[64], int max, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT DISTINCT device_key FROM selection ORDER BY device_key", &st, err, errlen,
                   "reading selections"))
        return -1;
    int rc, n = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (n < max) snprintf(keys[n], sizeof keys[0], "%s", rd_text(st, 0));
        n++;
    }
    if (rc != SQLITE_DONE) rd_fail(r, err, errlen, "reading selections");
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? n : -1;
}

/* ---- kernels ---- */

static int kernel_count_row(sqlite3_stmt *st, rd_any_fn fn, void *ctx)
{
    db_read_kernel_count c = {rd_text(st, 0), rd_text(st, 1), rd_text(st, 2), sqlite3_column_int(st, 3)};
    return ((int (*)(void *, const db_read_kernel_count *))fn)(ctx, &c);
}

int db_read_kernel_counts(db_reader *r, int (*fn)(void *ctx, const db_read_kernel_count *row), void *ctx,
                          char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (rd_prepare(r, "SELECT target, status, ops, count(*) FROM kernel GROUP BY target, ops, status "
                      "ORDER BY target, ops, status", &st, err, errlen, "reading kernels"))
        return -1;
    return rd_each(r, st, kernel_count_row, (rd_any_fn)fn, ctx, err, errlen, "reading kernels");
}
