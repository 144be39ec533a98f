/* db.c: open/migrate the .ktdb and the statements the build stage needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "db.h"
#include "db_internal.h"

extern const char kt_schema_sql[];   /* db/schema.sql, embedded by build/embed.sh */
extern const char kt_migrate_002_tuner_sql[]; /* db/migrate_002_tuner.sql */
extern const char kt_migrate_003_ops_sql[];   /* db/migrate_003_ops.sql */

/* db_migrations[i] takes a database from user_version i to i+1. Append, never edit. */
static const char *const *db_migrations(void)
{
    static const char *list[KT_DB_SCHEMA_VERSION];
    list[0] = kt_schema_sql;
    list[1] = kt_migrate_002_tuner_sql;
    list[2] = kt_migrate_003_ops_sql;
    return list;
}

struct kt_db {
    sqlite3 *h;
    char path[512];
    sqlite3_stmt *is_current, *kernel_params, *kernel_put, *toolchain_put;
};

static int db_fail(kt_db *db, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "%s: %s: %s", db ? db->path : "?", what, db && db->h ? sqlite3_errmsg(db->h) : "");
    return 1;
}

static int db_exec(kt_db *db, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(db->h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", db->path, msg ? msg : sqlite3_errmsg(db->h));
        sqlite3_free(msg);
        return 1;
    }
    return 0;
}

static int db_user_version(kt_db *db, int *version, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "not a ktune database");
    int rc = sqlite3_step(st);
    *version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 0 : db_fail(db, err, errlen, "not a ktune database (cannot read schema version)");
}

static int db_check_integrity(kt_db *db, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db->h, "PRAGMA quick_check", -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "not a ktune database");
    int rc = sqlite3_step(st);
    const char *res = rc == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
    int ok = res && strcmp(res, "ok") == 0;
    if (!ok) snprintf(err, errlen, "%s: database is corrupt: %s", db->path, res ? res : sqlite3_errmsg(db->h));
    sqlite3_finalize(st);
    return !ok;
}

static int db_migrate(kt_db *db, int from, char *err, size_t errlen)
{
    const char *const *m = db_migrations();
    for (int v = from; v < KT_DB_SCHEMA_VERSION; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d;", v + 1);
        if (db_exec(db, "BEGIN IMMEDIATE", err, errlen)) return 1;
        if (db_exec(db, m[v], err, errlen) || db_exec(db, bump, err, errlen)) {
            char ignored[64];
            db_exec(db, "ROLLBACK", ignored, sizeof ignored);
            return 1;
        }
        if (db_exec(db, "COMMIT", err, errlen)) return 1;
    }
    return 0;
}

static int db_prepare(kt_db *db, sqlite3_stmt **st, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_prepare_v2(db->h, sql, -1, st, NULL) != SQLITE_OK) return db_fail(db, err, errlen, "prepare");
    return 0;
}

int db_open(const char *path, int create, kt_db **out, char *err, size_t errlen)
{
    *out = NULL;
    kt_db *db = calloc(1, sizeof *db);
    if (!db) { snprintf(err, errlen, "%s: out of memory", path); return 1; }
    snprintf(db->path, sizeof db->path, "%s", path);
    int flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0);
    int version = 0;
    if (sqlite3_open_v2(path, &db->h, flags, NULL) != SQLITE_OK) {
        db_fail(db, err, errlen, "cannot open database");
        goto fail;
    }
    sqlite3_busy_timeout(db->h, 10000);
    if (db_user_version(db, &version, err, errlen)) goto fail;
    if (version > KT_DB_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s: schema version %d is newer than this ktune understands (%d); use a newer kt",
                 path, version, KT_DB_SCHEMA_VERSION);
        goto fail;
    }
    if (db_check_integrity(db, err, errlen)) goto fail;
    if (version == 0) {
        /* version 0 with tables in it is somebody else's SQLite file, not an empty one */
        sqlite3_stmt *st;
        int foreign = 1;
        if (sqlite3_prepare_v2(db->h, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) == SQLITE_OK) {
            if (sqlite3_step(st) == SQLITE_ROW) foreign = sqlite3_column_int(st, 0) != 0;
            sqlite3_finalize(st);
        }
        if (foreign) { snprintf(err, errlen, "%s: not a ktune database (SQLite file without a ktune schema version)", path); goto fail; }
    }
    /* Foreign keys are enforced from after the migrations on: a migration that rebuilds a table
     * (migrate_003) drops it while other tables still name it, which SQLite allows only with the
     * enforcement off; the keys are unchanged by the rebuild, so nothing dangles after it. */
    if (db_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", err, errlen)) goto fail;
    if (db_migrate(db, version, err, errlen)) goto fail;
    if (db_exec(db, "PRAGMA foreign_keys=ON;", err, errlen)) goto fail;
    if (db_prepare(db, &db->is_current, "SELECT status, reason, waves_per_simd, threads, lds_bytes, params FROM kernel "
                                         "WHERE name = ?1 AND target = ?2 AND cache_key = ?3", err, errlen) ||
        db_prepare(db, &db->kernel_params, "UPDATE kernel SET params = ?3, updated_at = datetime('now') "
                                           "WHERE name = ?1 AND target = ?2", err, errlen) ||
        db_prepare(db, &db->toolchain_put,
                   "INSERT INTO toolchain (fingerprint, kind, path, version, flags, target) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
                   "ON CONFLICT (fingerprint) DO NOTHING", err, errlen) ||
        db_prepare(db, &db->kernel_put,
                   "INSERT INTO kernel (name, target, template, recipe, ops, params, status, reason, threads, vgpr, sgpr, agpr, regs, "
                   "lds_bytes, scratch_bytes, spills, waves_per_simd, occupancy_limit, isa, fingerprint, cache_key, code_hash, code) "
                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23) "
                   "ON CONFLICT (name, target) DO UPDATE SET template = excluded.template, recipe = excluded.recipe, "
                   "ops = excluded.ops, params = excluded.params, status = excluded.status, reason = excluded.reason, "
                   "threads = excluded.threads, vgpr = excluded.vgpr, sgpr = excluded.sgpr, agpr = excluded.agpr, "
                   "regs = excluded.regs, lds_bytes = excluded.lds_bytes, scratch_bytes = excluded.scratch_bytes, "
                   "spills = excluded.spills, waves_per_simd = excluded.waves_per_simd, "
                   "occupancy_limit = excluded.occupancy_limit, isa = excluded.isa, fingerprint = excluded.fingerprint, "
                   "cache_key = excluded.cache_key, code_hash = excluded.code_hash, code = excluded.code, "
                   "updated_at = datetime('now')", err, errlen))
        goto fail;
    *out = db;
    return 0;
fail:
    db_close(db);
    return 1;
}

void db_close(kt_db *db)
{
    if (!db) return;
    sqlite3_finalize(db->is_current);
    sqlite3_finalize(db->kernel_params);
    sqlite3_finalize(db->kernel_put);
    sqlite3_finalize(db->toolchain_put);
    sqlite3_close(db->h);
    free(db);
}

int db_begin(kt_db *db, char *err, size_t errlen) { return db_exec(db, "BEGIN IMMEDIATE", err, errlen); }
int db_commit(kt_db *db, char *err, size_t errlen) { return db_exec(db, "COMMIT", err, errlen); }
void db_rollback(kt_db *db)
{
    char ignored[256];
    db_exec(db, "ROLLBACK", ignored, sizeof ignored);
}

static int db_step_done(kt_db *db, sqlite3_stmt *st, char *err, size_t errlen, const char *what)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : db_fail(db, err, errlen, what);
}

int db_toolchain_put(kt_db *db, const db_toolchain_row *r, char *err, size_t errlen)
{
    sqlite3_stmt *st = db->toolchain_put;
    const char *v[6] = {r->fingerprint, r->kind, r->path, r->version, r->flags, r->target};
    for (int i = 0; i < 6; i++) sqlite3_bind_text(st, i + 1, v[i] ? v[i] : "", -1, SQLITE_TRANSIENT);
    return db_step_done(db, st, err, errlen, "storing toolchain");
}

int db_kernel_is_current(kt_db *db, const char *name, const char *target, const char *cache_key,
                         db_kernel_brief *brief, char *err, size_t errlen)
{
    sqlite3_stmt *st = db->is_current;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, cache_key, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW && brief) {
        const unsigned char *status = sqlite3_column_text(st, 0), *reason = sqlite3_column_text(st, 1);
        snprintf(brief->status, sizeof brief->status, "%s", status ? (const char *)status : "");
        snprintf(brief->reason, sizeof brief->reason, "%s", reason ? (const char *)reason : "");
        brief->waves_per_simd = sqlite3_column_int(st, 2);
        brief->threads = sqlite3_column_int(st, 3);
        brief->lds_bytes = sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4);
        const unsigned char *params = sqlite3_column_text(st, 5);
        snprintf(brief->params, sizeof brief->params, "%s", params ? (const char *)params : "");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    if (rc == SQLITE_ROW) return 1;
    if (rc == SQLITE_DONE) return 0;
    db_fail(db, err, errlen, "looking up kernel");
    return -1;
}

int db_kernel_set_params(kt_db *db, const char *name, const char *target, const char *params, char *err, size_t errlen)
{
    sqlite3_stmt *st = db->kernel_params;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, params, -1, SQLITE_STATIC);
    return db_step_done(db, st, err, errlen, "updating a kernel's params");
}

static void db_bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s) sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, i);
}

int db_kernel_put(kt_db *db, const db_kernel_row *r, char *err, size_t errlen)
{
    sqlite3_stmt *st = db->kernel_put;
    const char *text[8] = {r->name, r->target, r->template_rel, r->recipe, r->ops, r->params, r->status, r->reason};
    for (int i = 0; i < 8; i++) db_bind_text_or_null(st, i + 1, text[i]);
    sqlite3_bind_int(st, 9, r->threads);
    int nums[8] = {r->vgpr, r->sgpr, r->agpr, r->regs, r->lds_bytes, r->scratch_bytes, r->spills, r->waves_per_simd};
    for (int i = 0; i < 8; i++) {
        if (r->has_resources) sqlite3_bind_int(st, 10 + i, nums[i]);
        else sqlite3_bind_null(st, 10 + i);
    }
    db_bind_text_or_null(st, 18, r->occupancy_limit);
    db_bind_text_or_null(st, 19, r->isa);
    db_bind_text_or_null(st, 20, r->fingerprint);
    db_bind_text_or_null(st, 21, r->cache_key);
    db_bind_text_or_null(st, 22, r->code_hash);
    if (r->code) sqlite3_bind_blob(st, 23, r->code, (int)r->code_len, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, 23);
    return db_step_done(db, st, err, errlen, "storing kernel");
}

int db_kernel_retire_absent(kt_db *db, const char *target, const char *template_rel, const char *prefix,
                            const char *names_json, int *retired, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    *retired = 0;
    if (sqlite3_prepare_v2(db->h,
                           "UPDATE kernel SET status = 'excluded', reason = 'no longer in the recipe''s space', "
                           "cache_key = 'retired', updated_at = datetime('now') "
                           "WHERE target = ?1 AND template = ?2 AND substr(name, 1, length(?3) + 1) = ?3 || '_' "
                           "AND cache_key <> 'retired' AND name NOT IN (SELECT value FROM json_each(?4))",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(db, err, errlen, "retiring kernels");
    sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, template_rel, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, prefix, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, names_json, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(db, err, errlen, "retiring kernels");
    *retired = sqlite3_changes(db->h);
    return 0;
}

sqlite3 *db_handle(kt_db *db) { return db->h; }
const char *db_path(kt_db *db) { return db->path; }
int db_error(kt_db *db, char *err, size_t errlen, const char *what) { return db_fail(db, err, errlen, what); }
