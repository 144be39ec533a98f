/* test_migrate.c: a database tuned before the op layer (schema 2, a GEMM's n/k/m in columns)
 * opens and serves the same selections: libktrt reads it as it is (read-only, no migration), and
 * once kt or tune opens it (migration 3) every problem and selection row is still there and
 * libktrt serves the same kernels by the same paths. The schema-2 file is made by the schema-2
 * SQL itself (db/schema.sql and db/migrate_002_tuner.sql, embedded in libkt), with rows as the
 * schema-2 tuner wrote them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>
#include "kt_test.h"
#include "db/db.h"
#include "runtime/ktrt_select.h"
#include "runtime/op_gemm.h"
#include "runtime/problem_key.h"

extern const char kt_schema_sql[];
extern const char kt_migrate_002_tuner_sql[];

#define DEV "sm_90/132/0x2335"

static void exec(sqlite3 *h, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(h, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fprintf(stderr, "sql failed: %s\n  %s\n", msg ? msg : "?", sql);
        kt_test_failures++;
    }
    sqlite3_free(msg);
}

static void make_v2(const char *path)
{
    unlink(path);
    sqlite3 *h;
    KT_CHECK(sqlite3_open(path, &h) == SQLITE_OK);
    exec(h, kt_schema_sql);
    exec(h, kt_migrate_002_tuner_sql);
    exec(h, "PRAGMA user_version = 2");
    const char *kernels[][2] = {
        {"kt_gemm_dense_bf16_bm16_bn64_bk32_wm1_wn2_sk1", "{\"dtype\":\"bf16\",\"BM\":16,\"BN\":64,\"BK\":32,\"WM\":1,\"WN\":2,\"SK\":1}"},
        {"kt_gemm_dense_bf16_bm64_bn64_bk64_wm2_wn2_sk1", "{\"dtype\":\"bf16\",\"BM\":64,\"BN\":64,\"BK\":64,\"WM\":2,\"WN\":2,\"SK\":1}"},
        {"kt_gemm_skinny_bf16_bm1_bn4_bk256_wm8_wn1_sk1", "{\"dtype\":\"bf16\",\"BM\":1,\"BN\":4,\"BK\":256,\"WM\":8,\"WN\":1,\"SK\":1}"},
    };
    for (int i = 0; i < 3; i++) {
        char sql[1024];
        snprintf(sql, sizeof sql,
                 "INSERT INTO kernel (name, target, template, recipe, ops, params, status, threads, regs, lds_bytes, "
                 "waves_per_simd, cache_key, code_hash, code) VALUES ('%s', 'sm_90a', 'gemm/dense.hip', 'gemm/dense.lua', "
                 "'gemm', '%s', 'ok', 128, 96, 8192, 16, 'ck%d', 'h%d', x'00')", kernels[i][0], kernels[i][1], i, i);
        exec(h, sql);
    }
    exec(h, "INSERT INTO device (key, target, arch, compute_units, pci_device_id, name) VALUES "
            "('" DEV "', 'sm_90a', 'sm_90', 132, 9013, 'NVIDIA H200')");
    exec(h, "INSERT INTO run (id, device_key, target, mode, model, tp, args, status) VALUES "
            "(1, '" DEV "', 'sm_90a', 'sweep', 'models/x', 1, 'tune', 'done')");
    struct { int n, k, m, kern; double us; } sel[] = {{4096, 4096, 1, 2, 8.5}, {4096, 4096, 16, 0, 9.25},
                                                      {4096, 4096, 512, 1, 70.0}, {1536, 4096, 64, 0, 5.0}};
    for (int i = 0; i < 4; i++) {
        char key[96], sql[1024];
        kt_gemm_problem_key(key, sizeof key, "bf16", sel[i].n, sel[i].k, sel[i].m);
        snprintf(sql, sizeof sql, "INSERT INTO problem (key, op, dtype, n, k, m, phase) VALUES ('%s', 'gemm', 'bf16', "
                 "%d, %d, %d, '%s')", key, sel[i].n, sel[i].k, sel[i].m, sel[i].m <= 64 ? "decode" : "prefill");
        exec(h, sql);
        snprintf(sql, sizeof sql, "INSERT INTO selection (device_key, target, problem_key, op, dtype, n, k, m, kernel, "
                 "code_hash, source, time_us, regret, decided_by, run_id) VALUES ('" DEV "', 'sm_90a', '%s', 'gemm', "
                 "'bf16', %d, %d, %d, '%s', 'h%d', 'measured', %g, 0.05, 'fastest', 1)", key, sel[i].n, sel[i].k,
                 sel[i].m, kernels[sel[i].kern][0], sel[i].kern, sel[i].us);
        exec(h, sql);
    }
    sqlite3_close(h);
}

/* The picks for a fixed list of queries, as text: path and kernel each. */
static void picks(const char *path, char *out, size_t len)
{
    ktrt_catalog c = {NULL, 0};
    char err[512];
    out[0] = 0;
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    if (c.nlayers == 0) { fprintf(stderr, "%s\n", err); return; }
    ktrt_device dev;
    KT_CHECK_INT(ktrt_device_from_key(&c, DEV, &dev, err, sizeof err), KT_OK);
    int queries[][3] = {{1, 4096, 4096}, {13, 4096, 4096}, {300, 4096, 4096}, {64, 1536, 4096}, {2, 1536, 4096},
                        {8, 5120, 8704}};
    for (int i = 0; i < 6; i++) {
        ktrt_query q = {&dev, "bf16", queries[i][0], queries[i][1], queries[i][2], 1 << 30};
        ktrt_pick p;
        ktrt_select_gemm(&c, &q, &p);
        size_t u = strlen(out);
        snprintf(out + u, len - u, "%s %s %.3f\n", p.choice.path, p.choice.kernel, p.choice.tuned_us);
    }
    ktrt_catalog_free(&c);
}

static int count(const char *path, const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *st;
    int n = -1;
    if (sqlite3_open(path, &h) == SQLITE_OK && sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
}

int main(void)
{
    char path[] = "/tmp/kt_test_migrate_XXXXXX";
    KT_CHECK(mkdtemp(path) != NULL);
    char db_path[600];
    snprintf(db_path, sizeof db_path, "%s/v2.ktdb", path);
    make_v2(db_path);

    char before[2048], after[2048];
    picks(db_path, before, sizeof before);                  /* libktrt reads schema 2 as it is */
    KT_CHECK_INT(count(db_path, "PRAGMA user_version"), 2);
    KT_CHECK_CONTAINS(before, "exact kt_gemm_skinny_bf16_bm1_bn4_bk256_wm8_wn1_sk1 8.500\n");
    KT_CHECK_CONTAINS(before, "exact kt_gemm_dense_bf16_bm16_bn64_bk32_wm1_wn2_sk1 9.250\n");    /* m=13 -> m<=16 */
    KT_CHECK_CONTAINS(before, "bucket kt_gemm_dense_bf16_bm16_bn64_bk32_wm1_wn2_sk1 5.000\n");   /* m=2: nearest m<=64 */
    KT_CHECK_CONTAINS(before, "exact kt_gemm_dense_bf16_bm64_bn64_bk64_wm2_wn2_sk1 70.000\n");   /* m=300 -> 512 */
    KT_CHECK_CONTAINS(before, "law ");                                                           /* n=5120: untuned */

    kt_db *db = NULL;
    char err[512];
    KT_CHECK_INT(db_open(db_path, 0, &db, err, sizeof err), 0);   /* kt and tune migrate on open */
    if (!db) fprintf(stderr, "%s\n", err);
    db_close(db);
    KT_CHECK_INT(count(db_path, "PRAGMA user_version"), KT_DB_SCHEMA_VERSION);
    KT_CHECK_INT(count(db_path, "SELECT count(*) FROM selection"), 4);
    KT_CHECK_INT(count(db_path, "SELECT count(*) FROM problem"), 4);
    KT_CHECK_INT(count(db_path, "SELECT count(*) FROM pragma_table_info('selection') WHERE name IN ('n', 'k', 'm')"), 0);
    KT_CHECK_INT(count(db_path, "SELECT count(*) FROM pragma_table_info('problem') WHERE name IN ('n', 'k', 'm')"), 0);
    KT_CHECK_INT(count(db_path, "SELECT count(*) FROM selection WHERE regret = 0.05 AND decided_by = 'fastest' AND run_id = 1"), 4);
    KT_CHECK_INT(count(db_path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);   /* nothing dangles */
    picks(db_path, after, sizeof after);
    KT_CHECK(strcmp(before, after) == 0);
    if (strcmp(before, after)) fprintf(stderr, "before:\n%safter:\n%s", before, after);

    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    KT_CHECK_INT(system(cmd), 0);
    KT_TEST_END();
}
