/* test_db: schema creation, idempotent reopen, upsert laws, and refusal of bad files by message. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sqlite3.h>
#include "kt_test.h"
#include "db/db.h"

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) { fwrite(data, 1, n, f); fclose(f); }
}

static const char *open_error(const char *path)
{
    static char err[512];
    kt_db *db = NULL;
    err[0] = 0;
    if (db_open(path, 0, &db, err, sizeof err) == 0) { db_close(db); return "(opened)"; }
    KT_CHECK(db == NULL);
    return err;
}

int main(void)
{
    char dir[] = "/tmp/kt_test_db_XXXXXX", path[256], err[512] = "";
    KT_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/a.ktdb", dir);

    kt_db *db = NULL;
    KT_CHECK_INT(db_open(path, 1, &db, err, sizeof err), 0);
    db_kernel_row row = {
        .name = "k1", .target = "gfx1201", .template_rel = "gemm/dense.hip", .recipe = "r.lua", .ops = "gemm",
        .params = "{\"BM\":16}", .status = "ok", .threads = 64, .vgpr = 40, .sgpr = 20, .regs = 40,
        .lds_bytes = 1024, .waves_per_simd = 16, .fingerprint = "fp", .cache_key = "key1", .code_hash = "h",
        .code = "\x7f" "ELF", .code_len = 4, .has_resources = 1,
    };
    KT_CHECK_INT(db_kernel_is_current(db, "k1", "gfx1201", "key1", NULL, err, sizeof err), 0);
    KT_CHECK_INT(db_begin(db, err, sizeof err), 0);
    KT_CHECK_INT(db_kernel_put(db, &row, err, sizeof err), 0);
    KT_CHECK_INT(db_commit(db, err, sizeof err), 0);
    KT_CHECK_INT(db_kernel_is_current(db, "k1", "gfx1201", "key1", NULL, err, sizeof err), 1);
    KT_CHECK_INT(db_kernel_is_current(db, "k1", "gfx1100", "key1", NULL, err, sizeof err), 0);
    row.cache_key = "key2";   /* a recompile replaces the row, never duplicates it */
    KT_CHECK_INT(db_kernel_put(db, &row, err, sizeof err), 0);
    KT_CHECK_INT(db_kernel_is_current(db, "k1", "gfx1201", "key1", NULL, err, sizeof err), 0);
    db_kernel_brief brief;
    KT_CHECK_INT(db_kernel_is_current(db, "k1", "gfx1201", "key2", &brief, err, sizeof err), 1);
    KT_CHECK(strcmp(brief.status, "ok") == 0);
    KT_CHECK_INT(brief.waves_per_simd, 16);
    row.status = "bogus";     /* the schema holds the status vocabulary */
    KT_CHECK(db_kernel_put(db, &row, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "CHECK constraint failed");
    /* retirement: of the recipe's (template, prefix, target) kernels, those not named are excluded
     * and lose their cache key; other targets, templates and prefixes are untouched */
    row.status = "ok";
    const char *names[4] = {"kt_x_a", "kt_x_b", "kt_xy_c", "kt_x_d"};
    for (int i = 0; i < 4; i++) {
        row.name = names[i];
        row.template_rel = i == 3 ? "gemm/other.hip" : "gemm/dense.hip";
        KT_CHECK_INT(db_kernel_put(db, &row, err, sizeof err), 0);
    }
    int retired = -1;
    KT_CHECK_INT(db_kernel_retire_absent(db, "gfx1201", "gemm/dense.hip", "kt_x", "[\"kt_x_a\"]", &retired, err, sizeof err), 0);
    KT_CHECK_INT(retired, 1);   /* kt_x_b only: kt_xy_c has another prefix, kt_x_d another template */
    KT_CHECK_INT(db_kernel_is_current(db, "kt_x_b", "gfx1201", "key2", NULL, err, sizeof err), 0);
    KT_CHECK_INT(db_kernel_is_current(db, "kt_x_a", "gfx1201", "key2", NULL, err, sizeof err), 1);
    KT_CHECK_INT(db_kernel_retire_absent(db, "gfx1201", "gemm/dense.hip", "kt_x", "[\"kt_x_a\"]", &retired, err, sizeof err), 0);
    KT_CHECK_INT(retired, 0);   /* already retired: counted once */
    row.name = "kt_x_b";        /* admitted again: stored again, ok */
    KT_CHECK_INT(db_kernel_put(db, &row, err, sizeof err), 0);
    KT_CHECK_INT(db_kernel_is_current(db, "kt_x_b", "gfx1201", "key2", &brief, err, sizeof err), 1);
    KT_CHECK(strcmp(brief.status, "ok") == 0);
    row.name = "k1";
    db_toolchain_row tc = {"fp", "clang", "/usr/bin/clang-19", "clang 19", "-O3", "gfx1201"};
    KT_CHECK_INT(db_toolchain_put(db, &tc, err, sizeof err), 0);
    KT_CHECK_INT(db_toolchain_put(db, &tc, err, sizeof err), 0);
    db_close(db);

    /* reopen: schema version kept, rows kept */
    KT_CHECK_INT(db_open(path, 0, &db, err, sizeof err), 0);
    KT_CHECK_INT(db_kernel_is_current(db, "k1", "gfx1201", "key2", NULL, err, sizeof err), 1);
    db_close(db);
    sqlite3 *h;
    sqlite3_open(path, &h);
    sqlite3_stmt *st;
    sqlite3_prepare_v2(h, "PRAGMA user_version", -1, &st, NULL);
    KT_CHECK(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == KT_DB_SCHEMA_VERSION);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(h, "SELECT count(*) FROM toolchain", -1, &st, NULL);
    KT_CHECK(sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) == 1);
    sqlite3_finalize(st);
    sqlite3_close(h);

    /* refusals, each by message naming the file */
    char bad[256];
    snprintf(bad, sizeof bad, "%s/text.ktdb", dir);
    write_file(bad, "this is not sqlite, just text that is long enough to look like a header....", 77);
    KT_CHECK_CONTAINS(open_error(bad), bad);
    KT_CHECK_CONTAINS(open_error(bad), "not a ktune database");

    snprintf(bad, sizeof bad, "%s/newer.ktdb", dir);
    sqlite3_open(bad, &h);
    sqlite3_exec(h, "CREATE TABLE x(y); PRAGMA user_version = 99;", NULL, NULL, NULL);
    sqlite3_close(h);
    KT_CHECK_CONTAINS(open_error(bad), "schema version 99 is newer");

    snprintf(bad, sizeof bad, "%s/foreign.ktdb", dir);
    sqlite3_open(bad, &h);
    sqlite3_exec(h, "CREATE TABLE x(y);", NULL, NULL, NULL);
    sqlite3_close(h);
    KT_CHECK_CONTAINS(open_error(bad), "not a ktune database");

    /* truncated: keep the header page of a real database, drop the rest */
    FILE *f = fopen(path, "rb");
    static char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    KT_CHECK(n > 4096);
    snprintf(bad, sizeof bad, "%s/trunc.ktdb", dir);
    write_file(bad, buf, 4096 + 100);
    const char *m = open_error(bad);
    KT_CHECK_CONTAINS(m, bad);
    KT_CHECK(strstr(m, "corrupt") || strstr(m, "malformed") || strstr(m, "not a"));

    snprintf(bad, sizeof bad, "%s/missing.ktdb", dir);
    KT_CHECK_CONTAINS(open_error(bad), "cannot open database");

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    KT_CHECK(system(cmd) == 0);
    KT_TEST_END();
}
