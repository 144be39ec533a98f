/* db_tuner.c: the tuner's statements. Prepared per call: a sweep issues a few per variant, next to
 * kernel launches that take milliseconds, so caching statements would buy nothing. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "db_internal.h"
#include "db_tuner.h"
#include "op.h"

static int tu_prepare(kt_db *db, sqlite3_stmt **st, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_prepare_v2(db_handle(db), sql, -1, st, NULL) != SQLITE_OK) {
        *st = NULL;
        return db_error(db, err, errlen, "prepare");
    }
    return 0;
}

static void tu_text(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

static void tu_real(sqlite3_stmt *st, int i, double v)
{
    if (isnan(v)) sqlite3_bind_null(st, i);
    else sqlite3_bind_double(st, i, v);
}

static void tu_id(sqlite3_stmt *st, int i, long long v)
{
    if (v > 0) sqlite3_bind_int64(st, i, v);
    else sqlite3_bind_null(st, i);
}

/* Step a statement that returns no row, finalize it. */
static int tu_done(kt_db *db, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    int bad = rc != SQLITE_DONE ? db_error(db, err, errlen, what) : 0;
    sqlite3_finalize(st);
    return bad;
}

int db_device_put(kt_db *db, const db_device_row *r, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "INSERT INTO device (key, target, arch, compute_units, pci_device_id, name, l2_bytes) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (key) DO UPDATE SET name = excluded.name, "
                   "l2_bytes = excluded.l2_bytes", err, errlen))
        return 1;
    tu_text(st, 1, r->key);
    tu_text(st, 2, r->target);
    tu_text(st, 3, r->arch);
    sqlite3_bind_int(st, 4, r->compute_units);
    sqlite3_bind_int(st, 5, r->pci_device_id);
    tu_text(st, 6, r->name ? r->name : "");
    sqlite3_bind_int64(st, 7, r->l2_bytes);
    return tu_done(db, st, err, errlen, "storing device");
}

int db_run_begin(kt_db *db, const db_run_row *r, long long *run_id, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "INSERT INTO run (device_key, target, mode, model, tp, args, gpus, status) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'running')", err, errlen))
        return 1;
    tu_text(st, 1, r->device_key);
    tu_text(st, 2, r->target);
    tu_text(st, 3, r->mode);
    tu_text(st, 4, r->model);
    sqlite3_bind_int(st, 5, r->tp);
    tu_text(st, 6, r->args ? r->args : "");
    sqlite3_bind_int(st, 7, r->gpus > 0 ? r->gpus : 1);
    if (tu_done(db, st, err, errlen, "starting run")) return 1;
    *run_id = sqlite3_last_insert_rowid(db_handle(db));
    return 0;
}

int db_run_find_unfinished(kt_db *db, const db_run_row *r, long long *run_id, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "SELECT id FROM run WHERE status IN ('running', 'interrupted') AND device_key = ?1 AND "
                   "target = ?2 AND model = ?3 AND tp = ?4 AND mode = ?5 ORDER BY id DESC LIMIT 1", err, errlen))
        return -1;
    tu_text(st, 1, r->device_key);
    tu_text(st, 2, r->target);
    tu_text(st, 3, r->model);
    sqlite3_bind_int(st, 4, r->tp);
    tu_text(st, 5, r->mode);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) *run_id = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "finding run"), -1;
    return found;
}

int db_run_finish(kt_db *db, long long run_id, const char *status, double noise_floor, const char *note,
                  char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "UPDATE run SET status = ?2, noise_floor = ?3, note = ?4, finished_at = datetime('now') "
                   "WHERE id = ?1", err, errlen))
        return 1;
    sqlite3_bind_int64(st, 1, run_id);
    tu_text(st, 2, status);
    tu_real(st, 3, noise_floor);
    tu_text(st, 4, note);
    return tu_done(db, st, err, errlen, "finishing run");
}

int db_problem_put(kt_db *db, const char *key, const char *op, const char *dtype, const char *phase, char *err,
                   size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "INSERT INTO problem (key, op, dtype, phase) VALUES (?1, ?2, ?3, ?4) "
                   "ON CONFLICT (key) DO NOTHING", err, errlen))
        return 1;
    tu_text(st, 1, key);
    tu_text(st, 2, op);
    tu_text(st, 3, dtype);
    tu_text(st, 4, phase);
    return tu_done(db, st, err, errlen, "storing problem");
}

int db_run_problem_put(kt_db *db, long long run_id, const char *problem_key, const char *layers, int calls,
                       char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "INSERT INTO run_problem (run_id, problem_key, layers, calls) VALUES (?1, ?2, ?3, ?4) "
                   "ON CONFLICT (run_id, problem_key) DO NOTHING", err, errlen))
        return 1;
    sqlite3_bind_int64(st, 1, run_id);
    tu_text(st, 2, problem_key);
    tu_text(st, 3, layers);
    sqlite3_bind_int(st, 4, calls);
    return tu_done(db, st, err, errlen, "storing run problem");
}

/* Row columns: name, code_hash, params, template, threads, regs, lds_bytes, waves_per_simd, ops. */
#define TU_CANDIDATE_COLS "name, code_hash, params, template, threads, regs, lds_bytes, waves_per_simd, ops"

static void tu_copy(char *dst, size_t len, sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    snprintf(dst, len, "%s", t ? (const char *)t : "");
}

static void tu_candidate_row(sqlite3_stmt *st, db_candidate *c)
{
    memset(c, 0, sizeof *c);
    tu_copy(c->name, sizeof c->name, st, 0);
    tu_copy(c->code_hash, sizeof c->code_hash, st, 1);
    tu_copy(c->params, sizeof c->params, st, 2);
    tu_copy(c->template_path, sizeof c->template_path, st, 3);
    c->threads = sqlite3_column_int(st, 4);
    c->regs = sqlite3_column_int(st, 5);
    c->lds_bytes = sqlite3_column_int(st, 6);
    c->waves_per_simd = sqlite3_column_int(st, 7);
}

/* The "dtype" of a params object, "" when it has none. */
static void tu_params_dtype(const char *params, char *out, size_t len)
{
    if (kt_params_text(params, "dtype", out, len) != 1 && len) out[0] = 0;
}

int db_candidates(kt_db *db, const char *target, const char *op, const char *dtype,
                  db_candidate **out, int *count, char *err, size_t errlen)
{
    *out = NULL;
    *count = 0;
    sqlite3_stmt *st;
    if (tu_prepare(db, &st, "SELECT " TU_CANDIDATE_COLS " FROM kernel WHERE target = ?1 AND status = 'ok' AND "
                            "code IS NOT NULL ORDER BY name", err, errlen))
        return 1;
    tu_text(st, 1, target);
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!kt_ops_has((const char *)sqlite3_column_text(st, 8), op)) continue;
        char dt[16];
        tu_params_dtype((const char *)sqlite3_column_text(st, 2), dt, sizeof dt);
        if (strcmp(dt, dtype) != 0) continue;
        const unsigned char *name = sqlite3_column_text(st, 0);
        if (sqlite3_column_bytes(st, 0) >= KT_KERNEL_NAME_MAX) {
            fprintf(stderr, "tune: kernel %s (%s): its name has %d characters, more than the %d a kernel name may "
                            "have (build/kernel_name.h): left out\n", name, target, sqlite3_column_bytes(st, 0),
                    KT_KERNEL_NAME_MAX - 1);
            continue;
        }
        if (*count == cap) {
            cap = cap ? 2 * cap : 64;
            db_candidate *grown = realloc(*out, (size_t)cap * sizeof **out);
            if (!grown) { rc = SQLITE_NOMEM; break; }
            *out = grown;
        }
        tu_candidate_row(st, &(*out)[(*count)++]);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        free(*out);
        *out = NULL;
        *count = 0;
        return db_error(db, err, errlen, "listing kernels");
    }
    return 0;
}

int db_kernel_by_hash(kt_db *db, const char *target, const char *code_hash, const char *op, db_candidate *out,
                      char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st, "SELECT " TU_CANDIDATE_COLS " FROM kernel WHERE target = ?1 AND code_hash = ?2 AND "
                            "status = 'ok' AND code IS NOT NULL ORDER BY name", err, errlen))
        return -1;
    tu_text(st, 1, target);
    tu_text(st, 2, code_hash);
    int rc, found = 0;
    while (!found && (rc = sqlite3_step(st)) == SQLITE_ROW)
        if (kt_ops_has((const char *)sqlite3_column_text(st, 8), op)) {
            tu_candidate_row(st, out);
            found = 1;
        }
    if (found) rc = SQLITE_DONE;
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_error(db, err, errlen, "finding a kernel by code hash"), -1;
    return found;
}

int db_kernel_code(kt_db *db, const char *target, const char *name, void **code, size_t *len,
                   char *err, size_t errlen)
{
    *code = NULL;
    *len = 0;
    sqlite3_stmt *st;
    if (tu_prepare(db, &st, "SELECT code FROM kernel WHERE target = ?1 AND name = ?2 AND code IS NOT NULL",
                   err, errlen))
        return -1;
    tu_text(st, 1, target);
    tu_text(st, 2, name);
    int rc = sqlite3_step(st), found = 0;
    if (rc == SQLITE_ROW) {
        int n = sqlite3_column_bytes(st, 0);
        *code = malloc(n > 0 ? (size_t)n : 1);
        if (*code) {
            memcpy(*code, sqlite3_column_blob(st, 0), (size_t)n);
            *len = (size_t)n;
            found = 1;
        } else {
            rc = SQLITE_NOMEM;
        }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "reading code object"), -1;
    return found;
}

int db_measurement_put(kt_db *db, const db_measurement_row *r, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int verify = r->kind && strcmp(r->kind, "verify") == 0;
    const char *sql_verify =
        "INSERT INTO measurement (device_key, problem_key, code_hash, kernel, pass_id, kind, status, error, detail, "
        "median_us, min_us, max_us, reps, launches, run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
        "?12, ?13, ?14, ?15) ON CONFLICT (device_key, problem_key, code_hash) WHERE kind = 'verify' DO UPDATE SET "
        "kernel = excluded.kernel, status = excluded.status, error = excluded.error, detail = excluded.detail, "
        "run_id = excluded.run_id, created_at = datetime('now')";
    const char *sql_time =
        "INSERT INTO measurement (device_key, problem_key, code_hash, kernel, pass_id, kind, status, error, detail, "
        "median_us, min_us, max_us, reps, launches, run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
        "?12, ?13, ?14, ?15)";
    if (tu_prepare(db, &st, verify ? sql_verify : sql_time, err, errlen)) return 1;
    tu_text(st, 1, r->device_key);
    tu_text(st, 2, r->problem_key);
    tu_text(st, 3, r->code_hash);
    tu_text(st, 4, r->kernel);
    tu_id(st, 5, r->pass_id);
    tu_text(st, 6, r->kind);
    tu_text(st, 7, r->status);
    tu_real(st, 8, r->error);
    tu_text(st, 9, r->detail);
    tu_real(st, 10, r->median_us);
    tu_real(st, 11, r->min_us);
    tu_real(st, 12, r->max_us);
    if (r->reps > 0) sqlite3_bind_int(st, 13, r->reps); else sqlite3_bind_null(st, 13);
    if (r->launches > 0) sqlite3_bind_int(st, 14, r->launches); else sqlite3_bind_null(st, 14);
    sqlite3_bind_int64(st, 15, r->run_id);
    return tu_done(db, st, err, errlen, "storing measurement");
}

int db_verify_get(kt_db *db, const char *device_key, const char *problem_key, const char *code_hash,
                  char status[16], double *error, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "SELECT status, error FROM measurement WHERE kind = 'verify' AND device_key = ?1 AND "
                   "problem_key = ?2 AND code_hash = ?3", err, errlen))
        return -1;
    tu_text(st, 1, device_key);
    tu_text(st, 2, problem_key);
    tu_text(st, 3, code_hash);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) {
        snprintf(status, 16, "%s", (const char *)sqlite3_column_text(st, 0));
        *error = sqlite3_column_type(st, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 1);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "reading verification"), -1;
    return found;
}

int db_timing_get(kt_db *db, const char *device_key, const char *problem_key, const char *code_hash,
                  const char *kind, double *median_us, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "SELECT median_us FROM measurement WHERE kind = ?4 AND status = 'ok' AND "
                   "device_key = ?1 AND problem_key = ?2 AND code_hash = ?3 ORDER BY id DESC LIMIT 1", err, errlen))
        return -1;
    tu_text(st, 1, device_key);
    tu_text(st, 2, problem_key);
    tu_text(st, 3, code_hash);
    tu_text(st, 4, kind);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) *median_us = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "reading timing"), -1;
    return found;
}

int db_timing_in_pass(kt_db *db, long long pass_id, const char *code_hash, double *median_us, char *err,
                      size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "SELECT median_us FROM measurement WHERE pass_id = ?1 AND code_hash = ?2 AND status = 'ok' "
                   "ORDER BY id DESC LIMIT 1", err, errlen))
        return -1;
    sqlite3_bind_int64(st, 1, pass_id);
    tu_text(st, 2, code_hash);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) *median_us = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "reading timing"), -1;
    return found;
}

int db_pass_put(kt_db *db, const db_pass_row *r, long long *pass_id, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "INSERT INTO pass (run_id, device_key, problem_key, kind, variants, rounds, cold, control_hash, "
                   "control_spread, gpu) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)", err, errlen))
        return 1;
    sqlite3_bind_int64(st, 1, r->run_id);
    tu_text(st, 2, r->device_key);
    tu_text(st, 3, r->problem_key);
    tu_text(st, 4, r->kind);
    sqlite3_bind_int(st, 5, r->variants);
    sqlite3_bind_int(st, 6, r->rounds);
    sqlite3_bind_int(st, 7, r->cold);
    tu_text(st, 8, r->control_hash);
    tu_real(st, 9, r->control_spread);
    sqlite3_bind_int(st, 10, r->gpu);
    if (tu_done(db, st, err, errlen, "storing pass")) return 1;
    *pass_id = sqlite3_last_insert_rowid(db_handle(db));
    return 0;
}

static int tu_cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

int db_pass_find(kt_db *db, const char *device_key, const char *problem_key, const char *kind,
                 const char *const *hashes, int n, long long *pass_id, double *control_spread,
                 char *err, size_t errlen)
{
    const char **want = malloc((size_t)(n > 0 ? n : 1) * sizeof *want);
    if (!want) return snprintf(err, errlen, "out of memory"), -1;
    for (int i = 0; i < n; i++) want[i] = hashes[i];
    qsort(want, (size_t)n, sizeof *want, tu_cmp_str);
    /* group_concat over hashes in order gives each pass's set as one comparable string */
    sqlite3_stmt *st;
    int found = 0;
    if (tu_prepare(db, &st,
                   "SELECT p.id, p.control_spread, (SELECT group_concat(code_hash, ',') FROM "
                   "(SELECT code_hash FROM measurement m WHERE m.pass_id = p.id AND m.status = 'ok' ORDER BY code_hash)) "
                   "FROM pass p WHERE p.device_key = ?1 AND p.problem_key = ?2 AND p.kind = ?3 ORDER BY p.id DESC",
                   err, errlen)) {
        free(want);
        return -1;
    }
    tu_text(st, 1, device_key);
    tu_text(st, 2, problem_key);
    tu_text(st, 3, kind);
    size_t cap = (size_t)n * 72 + 1;
    char *joined = calloc(cap, 1);
    if (!joined) { sqlite3_finalize(st); free(want); return snprintf(err, errlen, "out of memory"), -1; }
    for (int i = 0; i < n; i++) {
        if (i) strcat(joined, ",");
        strncat(joined, want[i], cap - strlen(joined) - 1);
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *set = sqlite3_column_text(st, 2);
        if (set && strcmp((const char *)set, joined) == 0) {
            *pass_id = sqlite3_column_int64(st, 0);
            *control_spread = sqlite3_column_type(st, 1) == SQLITE_NULL ? NAN : sqlite3_column_double(st, 1);
            found = 1;
            break;
        }
    }
    sqlite3_finalize(st);
    free(joined);
    free(want);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "finding pass"), -1;
    return found;
}

int db_selection_put(kt_db *db, const db_selection_row *r, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "INSERT INTO selection (device_key, target, problem_key, op, dtype, kernel, code_hash, "
                   "source, time_us, error, law_kernel, law_us, regret, noise_floor, decided_by, run_id) VALUES "
                   "(?1, ?2, ?3, ?4, ?5, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19) "
                   "ON CONFLICT (device_key, problem_key) DO UPDATE SET kernel = excluded.kernel, "
                   "code_hash = excluded.code_hash, source = excluded.source, time_us = excluded.time_us, "
                   "error = excluded.error, law_kernel = excluded.law_kernel, law_us = excluded.law_us, "
                   "regret = excluded.regret, noise_floor = excluded.noise_floor, decided_by = excluded.decided_by, "
                   "run_id = excluded.run_id, updated_at = datetime('now')", err, errlen))
        return 1;
    tu_text(st, 1, r->device_key);
    tu_text(st, 2, r->target);
    tu_text(st, 3, r->problem_key);
    tu_text(st, 4, r->op);
    tu_text(st, 5, r->dtype);
    tu_text(st, 9, r->kernel);
    tu_text(st, 10, r->code_hash);
    tu_text(st, 11, r->source);
    tu_real(st, 12, r->time_us);
    tu_real(st, 13, r->error);
    tu_text(st, 14, r->law_kernel);
    tu_real(st, 15, r->law_us);
    tu_real(st, 16, r->regret);
    tu_real(st, 17, r->noise_floor);
    tu_text(st, 18, r->decided_by);
    tu_id(st, 19, r->run_id);
    return tu_done(db, st, err, errlen, "storing selection");
}

static double tu_col_real(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

int db_selection_get(kt_db *db, const char *device_key, const char *problem_key, db_selection_row *r,
                     db_selection_text *text, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (tu_prepare(db, &st,
                   "SELECT kernel, source, law_kernel, time_us, error, law_us, regret, noise_floor, 0, 0, 0, decided_by "
                   "FROM selection WHERE device_key = ?1 AND problem_key = ?2", err, errlen))
        return -1;
    tu_text(st, 1, device_key);
    tu_text(st, 2, problem_key);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) {
        memset(r, 0, sizeof *r);
        char *dst[4] = {text->kernel, text->source, text->law_kernel, text->decided_by};
        size_t cap[4] = {sizeof text->kernel, sizeof text->source, sizeof text->law_kernel, sizeof text->decided_by};
        int col[4] = {0, 1, 2, 11};
        for (int i = 0; i < 4; i++) {
            const unsigned char *t = sqlite3_column_text(st, col[i]);
            if (snprintf(dst[i], cap[i], "%s", t ? (const char *)t : "") >= (int)cap[i])
                fprintf(stderr, "tune: selection of %s on %s: %s '%s' is longer than %zu characters: shown cut\n",
                        problem_key, device_key, sqlite3_column_name(st, col[i]), t, cap[i] - 1);
        }
        r->kernel = text->kernel;
        r->source = text->source;
        r->law_kernel = text->law_kernel;
        r->decided_by = text->decided_by;
        r->time_us = tu_col_real(st, 3);
        r->error = tu_col_real(st, 4);
        r->law_us = tu_col_real(st, 5);
        r->regret = tu_col_real(st, 6);
        r->noise_floor = tu_col_real(st, 7);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_error(db, err, errlen, "reading selection"), -1;
    return found;
}
