/* test_ktrt.c: libktrt without a GPU: the selection chain over a synthetic tuned database (exact,
 * nearest bucket, another device's bucket with its notice, a stored law pick, the live law, split-K
 * workspace, refusals), the layer order, the refusal of bad files by message, ktrt_open's clean
 * "no device", and `kt explain` / `kt dump` run as the real binary against the same database.
 *
 * The database is built through db/ (db_open creates schema v2; db_tuner.h writes the tuner's
 * rows), as `tune` would build it; only the newer-schema and foreign-file cases poke SQLite. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "kt_test.h"
#include "db/db.h"
#include "db/db_tuner.h"
#include "build/sha256.h"
#include "runtime/ktrt.h"
#include "runtime/ktrt_select.h"
#include "runtime/op_gemm.h"
#include "runtime/problem_key.h"

#define DEV_A "sm_90/132/0x2335"     /* the H200 the fixture was "tuned" on */
#define DEV_B "sm_90/114/0x2331"     /* another sm_90 part: no selections of its own */
#define DEV_LAW "sm_90a/law"

static char dir[64];
static char kt_bin[PATH_MAX];

static void path_in(char *buf, size_t len, const char *name) { snprintf(buf, len, "%s/%s", dir, name); }

/* ---- building databases through db/ ---- */

/* A fixture kernel's code object: bytes derived from its name. */
static void fx_code(const char *name, char *code, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) code[i] = (char)(i * 31 + name[i % strlen(name)]);
}

/* The code hash (sha256 of the code object, as build/pipeline.c stores it) of a fixture kernel made
 * with the usual 64 bytes; selections and timings name their kernel's code by it. */
static const char *fx_hash(const char *name)
{
    static char ring[4][65];
    static int next;
    char code[64], *hex = ring[next++ % 4];
    fx_code(name, code, sizeof code);
    sha256_hex(code, sizeof code, hex);
    return hex;
}

static int kernel(kt_db *db, const char *target, const char *ops, const char *status, const char *dtype,
                  int bm, int bn, int bk, int wm, int wn, int sk, const char *name_override, size_t code_bytes)
{
    char name[256], params[256], hash[300], key[300];
    if (name_override) snprintf(name, sizeof name, "%s", name_override);
    else snprintf(name, sizeof name, "kt_gemm_dense_%s_bm%d_bn%d_bk%d_wm%d_wn%d_sk%d", dtype, bm, bn, bk, wm, wn, sk);
    snprintf(params, sizeof params, "{\"dtype\":\"%s\",\"BM\":%d,\"BN\":%d,\"BK\":%d,\"WM\":%d,\"WN\":%d,\"SK\":%d}",
             dtype, bm, bn, bk, wm, wn, sk);
    if (sk < 0)   /* a recipe without an SK axis */
        snprintf(params, sizeof params, "{\"dtype\":\"%s\",\"BM\":%d,\"BN\":%d,\"BK\":%d,\"WM\":%d,\"WN\":%d}", dtype, bm,
                 bn, bk, wm, wn);
    snprintf(key, sizeof key, "ck_%s_%s", target, name);
    char *code = malloc(code_bytes);
    fx_code(name, code, code_bytes);
    sha256_hex(code, code_bytes, hash);
    db_kernel_row row = {
        .name = name, .target = target, .template_rel = "gemm/dense.hip", .recipe = "gemm/dense.lua", .ops = ops,
        .params = params, .status = status, .reason = strcmp(status, "ok") ? "test" : NULL, .threads = 32 * wm * wn,
        .regs = 96, .lds_bytes = 8192, .waves_per_simd = 8, .fingerprint = "fp", .cache_key = key, .code_hash = hash,
        .code = code, .code_len = code_bytes, .has_resources = 1,
    };
    char err[512];
    int rc = db_kernel_put(db, &row, err, sizeof err);
    if (rc) fprintf(stderr, "kernel %s: %s\n", name, err);
    free(code);
    return rc;
}

#define K_A "kt_gemm_dense_bf16_bm16_bn64_bk32_wm1_wn2_sk1"
#define K_B "kt_gemm_dense_bf16_bm16_bn64_bk32_wm1_wn2_sk4"
#define K_C "kt_gemm_dense_bf16_bm64_bn128_bk64_wm2_wn2_sk1"
#define K_D "kt_gemm_dense_bf16_bm128_bn128_bk64_wm2_wn2_sk1"
#define K_E "kt_gemm_dense_bf16_bm32_bn64_bk32_wm2_wn2_sk2"
#define K_REF "kt_gemm_ref_bf16"

static void kernels_sm90(kt_db *db)
{
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 64, 32, 1, 2, 1, NULL, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 64, 32, 1, 2, 4, NULL, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 64, 128, 64, 2, 2, 1, NULL, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 128, 128, 64, 2, 2, 1, NULL, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 32, 64, 32, 2, 2, 2, NULL, 64), 0);
    /* never dispatched: a reference (same tile as K_A, fewer threads would win ties) and a failure */
    KT_CHECK_INT(kernel(db, "sm_90a", "reference:gemm", "ok", "bf16", 16, 64, 32, 1, 1, 1, K_REF, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "failed", "bf16", 16, 32, 32, 1, 1, 1, NULL, 64), 0);
}

static void device(kt_db *db, const char *key, int cus, int pci)
{
    db_device_row d = {key, "sm_90a", "sm_90", "NVIDIA test part", cus, pci, 50 << 20};
    char err[512];
    KT_CHECK_INT(db_device_put(db, &d, err, sizeof err), 0);
}

static long long run(kt_db *db, const char *dev, const char *mode)
{
    db_run_row r = {dev, "sm_90a", mode, "models/test", "tune --modelpath models/test --tp 1", 1, 1};
    long long id = 0;
    char err[512];
    KT_CHECK_INT(db_run_begin(db, &r, &id, err, sizeof err), 0);
    return id;
}

static void problem_key(char *key, size_t len, int n, int k, int m) { kt_gemm_problem_key(key, len, "bf16", n, k, m); }

static void selection(kt_db *db, long long run_id, const char *dev, int n, int k, int m, const char *kern,
                      const char *hash_override, const char *source, double us)
{
    char key[96], hash[160], err[512];
    problem_key(key, sizeof key, n, k, m);
    KT_CHECK_INT(db_problem_put(db, key, "gemm", "bf16", kt_m_phase(m), err, sizeof err), 0);
    snprintf(hash, sizeof hash, "%s", fx_hash(kern));
    db_selection_row s = {
        .device_key = dev, .target = "sm_90a", .problem_key = key, .op = "gemm", .dtype = "bf16",
        .kernel = kern, .code_hash = hash_override ? hash_override : hash, .source = source,
        .law_kernel = K_A, .decided_by = strcmp(source, "law") ? "fastest" : "law", .time_us = us,
        .error = strcmp(source, "law") ? 1e-3 : NAN, .law_us = strcmp(source, "law") ? us * 1.1 : NAN,
        .regret = strcmp(source, "law") ? 0.1 : NAN, .noise_floor = 0.01, .run_id = run_id,
    };
    KT_CHECK_INT(db_selection_put(db, &s, err, sizeof err), 0);
}

static void timing(kt_db *db, long long run_id, long long pass_id, const char *key, const char *kern, const char *status,
                   double median)
{
    char hash[160], err[512];
    snprintf(hash, sizeof hash, "%s", fx_hash(kern));
    db_measurement_row v = {DEV_A, key, hash, kern, "verify", strcmp(status, "ok") ? "crash" : "ok",
                            strcmp(status, "ok") ? "worker died" : NULL, 0, run_id, 1e-3, NAN, NAN, NAN, 0, 0};
    KT_CHECK_INT(db_measurement_put(db, &v, err, sizeof err), 0);
    db_measurement_row t = {DEV_A, key, hash, kern, "coarse", status, strcmp(status, "ok") ? "worker died" : NULL,
                            pass_id, run_id, NAN, median, median * 0.98, median * 1.05, 5, 8};
    KT_CHECK_INT(db_measurement_put(db, &t, err, sizeof err), 0);
}

/* A new, empty database at path; NULL (the check failed) when it cannot be made. */
static kt_db *fresh_db(const char *path)
{
    char err[512];
    kt_db *db = NULL;
    unlink(path);
    KT_CHECK_INT(db_open(path, 1, &db, err, sizeof err), 0);
    return db;
}

/* The main fixture: kernels, three devices, selections on DEV_A and the law device, one timed pass. */
static void build_main(const char *path)
{
    char err[512];
    kt_db *db = fresh_db(path);
    if (!db) return;
    kernels_sm90(db);
    device(db, DEV_A, 132, 0x2335);
    device(db, DEV_B, 114, 0x2331);
    device(db, DEV_LAW, 132, -1);
    long long r = run(db, DEV_A, "sweep"), rl = run(db, DEV_LAW, "law");
    selection(db, r, DEV_A, 4096, 4096, 16, K_A, NULL, "measured", 10.0);
    selection(db, r, DEV_A, 4096, 4096, 512, K_C, NULL, "measured", 50.0);
    selection(db, r, DEV_A, 2048, 2048, 64, K_A, NULL, "measured", 5.0);
    selection(db, r, DEV_A, 2048, 2048, 256, K_C, NULL, "measured", 20.0);
    selection(db, r, DEV_A, 8192, 1024, 8, K_B, NULL, "measured", 7.0);          /* split-K: 4 x 8 x 8192 floats */
    selection(db, r, DEV_A, 3072, 3072, 32, K_A, "h_recompiled", "measured", 9.0); /* stale code hash */
    selection(db, rl, DEV_LAW, 1024, 1024, 1, K_D, NULL, "law", NAN);               /* a law pick, no device */

    char key[96];
    problem_key(key, sizeof key, 4096, 4096, 16);
    db_pass_row p = {r, DEV_A, key, "coarse", fx_hash(K_A), 3, 5, 1, 0, 0.0123};
    long long pass_id = 0;
    KT_CHECK_INT(db_pass_put(db, &p, &pass_id, err, sizeof err), 0);
    timing(db, r, pass_id, key, K_C, "ok", 12.5);
    timing(db, r, pass_id, key, K_E, "crash", NAN);
    timing(db, r, pass_id, key, K_A, "ok", 10.0);
    KT_CHECK_INT(db_run_finish(db, r, "done", 0.0123, NULL, err, sizeof err), 0);
    db_close(db);
}

/* A recipe's ops are stored comma-joined: a kernel serving "gemm" among others is a GEMM kernel for
 * libktrt and the tuner alike; "reference:gemm" (or any other op merely containing the text) is not. */
#define K_MULTI "kt_gemm_multi_bf16_bm16_bn64_bk32_wm1_wn2_sk1"
#define K_MULTI2 "kt_gemm_multi_bf16_bm32_bn64_bk32_wm2_wn2_sk1"
static void test_ops_membership(void)
{
    char path[256], err[512];
    path_in(path, sizeof path, "ops.ktdb");
    kt_db *db = fresh_db(path);
    if (!db) return;
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm,other", "ok", "bf16", 16, 64, 32, 1, 2, 1, K_MULTI, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "other,gemm", "ok", "bf16", 32, 64, 32, 2, 2, 1, K_MULTI2, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "reference:gemm", "ok", "bf16", 16, 64, 32, 1, 1, 1, K_REF, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "reference:gemm,other", "ok", "bf16", 16, 64, 32, 1, 1, 1, "kt_ref2", 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm2", "ok", "bf16", 16, 64, 32, 1, 1, 1, "kt_gemm2", 64), 0);
    db_candidate *cands = NULL;
    int n = 0;
    KT_CHECK_INT(db_candidates(db, "sm_90a", "gemm", "bf16", &cands, &n, err, sizeof err), 0);
    KT_CHECK_INT(n, 2);
    for (int i = 0; i < n; i++) {
        printf("  db_candidates gemm: %s\n", cands[i].name);
        KT_CHECK(strcmp(cands[i].name, K_MULTI) == 0 || strcmp(cands[i].name, K_MULTI2) == 0);
    }
    free(cands);
    db_close(db);
    ktrt_catalog c = {NULL, 0};
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    if (c.nlayers != 1) return;
    KT_CHECK_INT(c.layers[0].nkernels, 2);
    for (int i = 0; i < c.layers[0].nkernels; i++) {
        printf("  libktrt gemm kernel: %s\n", c.layers[0].kernels[i].name);
        KT_CHECK(strcmp(c.layers[0].kernels[i].name, K_MULTI) == 0 || strcmp(c.layers[0].kernels[i].name, K_MULTI2) == 0);
    }
    ktrt_catalog_free(&c);
}

/* ---- the chain ---- */

static ktrt_pick pick(const ktrt_catalog *c, const char *dev_key, const char *dtype, int m, int n, int k,
                      long long ws, int *rc)
{
    ktrt_device dev;
    char err[512];
    ktrt_pick p;
    memset(&p, 0, sizeof p);
    *rc = ktrt_device_from_key(c, dev_key, &dev, err, sizeof err);
    KT_CHECK_INT(*rc, KT_OK);
    if (*rc) return p;
    ktrt_query q = {&dev, dtype, m, n, k, ws};
    *rc = ktrt_select_gemm(c, &q, &p);
    return p;
}

/* Runs f with stderr going to the file at path (what libktrt says, for the checks to read). */
static void with_stderr_to(const char *path, void (*f)(void *), void *arg)
{
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (saved < 0 || fd < 0) { KT_CHECK(0); return; }
    dup2(fd, 2);
    close(fd);
    f(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
}

static char *read_text(const char *path)
{
    static char buf[8192];
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* Kernel names as long as the generator makes (gen_variant.name holds 191 characters) are served,
 * by libktrt and the tuner; a row whose name is longer still is left out with a message naming it. */
static char long_name[151], too_long_name[221];
static ktrt_catalog long_cat;
static void add_long_layer(void *path)
{
    char err[512];
    KT_CHECK_INT(ktrt_catalog_add(&long_cat, path, "caller", err, sizeof err), KT_OK);
}

static void test_long_names(void)
{
    char path[256], err[512], log[256];
    snprintf(long_name, sizeof long_name, "kt_gemm_dense_bf16_bm16_bn64_bk32_wm1_wn2_sk1_%0104d", 7);
    snprintf(too_long_name, sizeof too_long_name, "kt_gemm_dense_bf16_bm32_bn64_bk32_wm2_wn2_sk1_%0174d", 9);
    KT_CHECK_INT(strlen(long_name), 150);
    KT_CHECK_INT(strlen(too_long_name), 220);
    path_in(path, sizeof path, "long.ktdb");
    path_in(log, sizeof log, "long.stderr");
    kt_db *db = fresh_db(path);
    if (!db) return;
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 64, 32, 1, 2, 1, long_name, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 32, 64, 32, 2, 2, 1, too_long_name, 64), 0);
    device(db, DEV_A, 132, 0x2335);
    selection(db, run(db, DEV_A, "sweep"), DEV_A, 4096, 4096, 16, long_name, NULL, "measured", 10.0);
    db_candidate *cands = NULL;
    int n = 0;
    KT_CHECK_INT(db_candidates(db, "sm_90a", "gemm", "bf16", &cands, &n, err, sizeof err), 0);
    KT_CHECK(n >= 1 && strcmp(cands[0].name, long_name) == 0);   /* sorted: the 150-character one first */
    free(cands);
    db_selection_row sr;
    db_selection_text txt;
    char key[96];
    problem_key(key, sizeof key, 4096, 4096, 16);
    KT_CHECK_INT(db_selection_get(db, DEV_A, key, &sr, &txt, err, sizeof err), 1);
    KT_CHECK(strcmp(txt.kernel, long_name) == 0);
    db_close(db);

    memset(&long_cat, 0, sizeof long_cat);
    setenv("KT_LOG", "1", 1);
    with_stderr_to(log, add_long_layer, path);
    setenv("KT_LOG", "0", 1);
    if (long_cat.nlayers != 1) return;
    const char *said = read_text(log);
    printf("  libktrt said: %s", said[0] ? said : "(nothing)\n");
    KT_CHECK_INT(long_cat.layers[0].nkernels, 1);
    KT_CHECK(long_cat.layers[0].nkernels >= 1 && strcmp(long_cat.layers[0].kernels[0].name, long_name) == 0);
    KT_CHECK_CONTAINS(said, path);
    KT_CHECK_CONTAINS(said, "kt_gemm_dense_bf16_bm32_bn64_bk32_wm2_wn2_sk1_000");
    int rc;
    ktrt_pick p = pick(&long_cat, DEV_A, "bf16", 16, 4096, 4096, 0, &rc);
    KT_CHECK_INT(rc, KT_OK);
    printf("  pick: path=%s kernel=%s (%zu characters)\n", p.choice.path, p.choice.kernel, strlen(p.choice.kernel));
    KT_CHECK(strcmp(p.choice.path, "exact") == 0 && strcmp(p.choice.kernel, long_name) == 0);
    ktrt_catalog_free(&long_cat);
}

/* libktrt hashes a code object at its first load: one damaged on disk (its bytes changed, the
 * row's code_hash not) is refused with a message naming the kernel and the layer, and the chain
 * passes over that kernel from then on; an intact one loads. */
static void test_code_hash(void)
{
    char path[256], err[512];
    path_in(path, sizeof path, "damaged.ktdb");
    kt_db *db = fresh_db(path);
    if (!db) return;
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 64, 32, 1, 2, 1, NULL, 64), 0);       /* K_A */
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 64, 128, 64, 2, 2, 1, NULL, 64), 0);      /* K_C */
    device(db, DEV_A, 132, 0x2335);
    selection(db, run(db, DEV_A, "sweep"), DEV_A, 4096, 4096, 512, K_C, NULL, "measured", 50.0);
    db_close(db);
    sqlite3 *h = NULL;
    KT_CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
    KT_CHECK_INT(sqlite3_exec(h, "UPDATE kernel SET code = CAST(zeroblob(3) || substr(code, 4) AS BLOB) "
                                 "WHERE name = '" K_C "'", NULL, NULL, NULL), SQLITE_OK);
    KT_CHECK_INT(sqlite3_changes(h), 1);
    sqlite3_close(h);

    ktrt_catalog c = {NULL, 0};
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    if (c.nlayers != 1 || c.layers[0].nkernels != 2) { KT_CHECK(0); ktrt_catalog_free(&c); return; }
    int rc;
    ktrt_pick p = pick(&c, DEV_A, "bf16", 512, 4096, 4096, 0, &rc);
    KT_CHECK(rc == KT_OK && strcmp(p.choice.path, "exact") == 0 && p.kernel && strcmp(p.kernel->name, K_C) == 0);
    const ktrt_kernel *ka = NULL, *kc = NULL;
    for (int i = 0; i < c.layers[0].nkernels; i++) {
        if (!strcmp(c.layers[0].kernels[i].name, K_A)) ka = &c.layers[0].kernels[i];
        if (!strcmp(c.layers[0].kernels[i].name, K_C)) kc = &c.layers[0].kernels[i];
    }
    KT_CHECK(ka && kc);
    if (!ka || !kc) { ktrt_catalog_free(&c); return; }
    void *code = NULL;
    size_t len = 0;
    err[0] = 0;
    KT_CHECK_INT(ktrt_layer_code(&c.layers[0], ka, &code, &len, err, sizeof err), KT_OK);
    KT_CHECK_INT(len, 64);
    free(code);
    err[0] = 0;
    rc = ktrt_layer_code(&c.layers[0], kc, &code, &len, err, sizeof err);
    printf("  damaged code object: rc=%d: %s\n", rc, err);
    KT_CHECK_INT(rc, KT_EBADDB);
    KT_CHECK(code == NULL && len == 0);
    free(code);
    KT_CHECK_CONTAINS(err, K_C);
    KT_CHECK_CONTAINS(err, path);
    KT_CHECK_CONTAINS(err, "sha256");
    /* the chain goes on: the measured pick's kernel is passed over, as a stale one is */
    p = pick(&c, DEV_A, "bf16", 512, 4096, 4096, 0, &rc);
    printf("  then: path=%s kernel=%s: %s\n", p.choice.path, p.choice.kernel, p.choice.reason);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "law") == 0 && strcmp(p.choice.kernel, K_A) == 0);
    KT_CHECK_CONTAINS(p.choice.reason, "sha256");
    ktrt_catalog_free(&c);
}

static void test_chain(const char *path)
{
    ktrt_catalog c = {NULL, 0};
    char err[512];
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    if (c.nlayers != 1) return;
    KT_CHECK_INT(c.layers[0].nkernels, 5);          /* ok gemm kernels only: no reference, no failure */
    for (int i = 0; i < c.layers[0].nkernels; i++) KT_CHECK(strcmp(c.layers[0].kernels[i].name, K_REF) != 0);
    long long ws = ktrt_catalog_workspace_bytes(&c, kt_target_find("sm_90a"), 132);
    KT_CHECK_INT(ws, (4LL * 8 * 8192 + KT_GEMM_TILE_COUNTERS) * 4);   /* slabs and the tile counters */
    int rc;

    /* exact: bucket(13) = 16 was tuned on this device */
    ktrt_pick p = pick(&c, DEV_A, "bf16", 13, 4096, 4096, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "exact") == 0);
    KT_CHECK(strcmp(p.choice.kernel, K_A) == 0);
    KT_CHECK(strcmp(p.choice.problem_key, "gemm bf16 n=4096 k=4096 m<=16") == 0);
    KT_CHECK(fabs(p.choice.tuned_us - 10.0) < 1e-9);
    KT_CHECK_INT(p.choice.splitk, 1);
    KT_CHECK(strcmp(p.choice.db_path, path) == 0);

    /* bucket: 128 is 2 octaves from 512 and 3 from 16: 512 */
    p = pick(&c, DEV_A, "bf16", 100, 4096, 4096, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "bucket") == 0);
    KT_CHECK(strcmp(p.choice.kernel, K_C) == 0);
    KT_CHECK_INT(p.served_bucket, 512);
    KT_CHECK_CONTAINS(p.choice.reason, "m<=128 not tuned on this device; nearest tuned bucket m<=512");
    KT_CHECK(p.other_device[0] == 0);
    /* a tie (64 and 256 are both one octave from 128) goes to the larger bucket */
    p = pick(&c, DEV_A, "bf16", 128, 2048, 2048, ws, &rc);
    KT_CHECK(strcmp(p.choice.path, "bucket") == 0);
    KT_CHECK_INT(p.served_bucket, 256);
    KT_CHECK(strcmp(p.choice.kernel, K_C) == 0);
    /* below the first bucket of a shape: the nearest is its smallest */
    p = pick(&c, DEV_A, "bf16", 1, 2048, 2048, ws, &rc);
    KT_CHECK_INT(p.served_bucket, 64);
    /* past the last edge m is served by bucket 8192: the nearest tuned one is 512 */
    p = pick(&c, DEV_A, "bf16", 100000, 4096, 4096, ws, &rc);
    KT_CHECK(strcmp(p.choice.path, "bucket") == 0);
    KT_CHECK_INT(p.bucket, 8192);
    KT_CHECK_INT(p.served_bucket, 512);

    /* another device of the same target: DEV_A's selections serve through the bucket path, with a notice */
    p = pick(&c, DEV_B, "bf16", 13, 4096, 4096, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "bucket") == 0);
    KT_CHECK(strcmp(p.choice.kernel, K_A) == 0);
    KT_CHECK(strcmp(p.other_device, DEV_A) == 0);
    KT_CHECK_CONTAINS(p.choice.reason, "tuned on " DEV_A);
    /* a device key not in the database parses (arch/cus/pci) and gets the same answer */
    p = pick(&c, "sm_90/78/unknown", "bf16", 16, 4096, 4096, ws, &rc);
    KT_CHECK(strcmp(p.choice.path, "bucket") == 0);

    /* the law: a shape nobody tuned */
    p = pick(&c, DEV_A, "bf16", 1, 5120, 8704, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "law") == 0);
    KT_CHECK(p.choice.kernel[0] != 0 && strcmp(p.choice.kernel, K_REF) != 0);
    KT_CHECK_CONTAINS(p.choice.reason, "no tuned selection serves");
    KT_CHECK(p.choice.tuned_us == 0);
    /* a law pick stored for the law device serves as path law, that very kernel */
    p = pick(&c, DEV_LAW, "bf16", 1, 1024, 1024, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "law") == 0);
    KT_CHECK(strcmp(p.choice.kernel, K_D) == 0);
    KT_CHECK_CONTAINS(p.choice.reason, "law pick");
    /* ... but it is not another device's measurement: a real device re-runs the law with its own CUs */
    p = pick(&c, DEV_A, "bf16", 1, 1024, 1024, ws, &rc);
    KT_CHECK(strcmp(p.choice.path, "law") == 0);
    KT_CHECK_CONTAINS(p.choice.reason, "no tuned selection serves");

    /* a kernel recompiled since its measurement does not serve its selection */
    p = pick(&c, DEV_A, "bf16", 32, 3072, 3072, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "law") == 0);
    KT_CHECK_CONTAINS(p.choice.reason, "recompiled");

    /* split-K: the selection fits the workspace the catalog asks for; without workspace it does not */
    p = pick(&c, DEV_A, "bf16", 8, 8192, 1024, ws, &rc);
    KT_CHECK(strcmp(p.choice.path, "exact") == 0);
    KT_CHECK_INT(p.choice.splitk, 4);
    p = pick(&c, DEV_A, "bf16", 8, 8192, 1024, 0, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "exact") != 0);
    KT_CHECK_INT(p.choice.splitk, 1);
    KT_CHECK_CONTAINS(p.choice.reason, "split-K workspace");
    /* the law at M=1 on a big K wants to split; with no workspace it takes a one-segment variant */
    p = pick(&c, DEV_A, "bf16", 1, 512, 16384, 1LL << 30, &rc);
    int wanted = p.choice.splitk;
    p = pick(&c, DEV_A, "bf16", 1, 512, 16384, 0, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK_INT(p.choice.splitk, 1);
    KT_CHECK(wanted > 1);
    if (wanted > 1) KT_CHECK_CONTAINS(p.choice.reason, "instead of the law's");

    /* refused: no kernel of the dtype; a dimension no grid can launch */
    p = pick(&c, DEV_A, "fp16", 16, 4096, 4096, ws, &rc);
    KT_CHECK_INT(rc, KT_ENOKERNEL);
    KT_CHECK(strcmp(p.choice.path, "refused") == 0);
    KT_CHECK(p.choice.kernel[0] == 0);
    KT_CHECK_CONTAINS(p.choice.reason, "no ok gemm kernel of dtype fp16 for sm_90a");
    p = pick(&c, DEV_A, "bf16", 1 << 30, 5120, 8704, ws, &rc);
    KT_CHECK_INT(rc, KT_ENOKERNEL);
    KT_CHECK_CONTAINS(p.choice.reason, "grid limit");
    /* bad arguments */
    p = pick(&c, DEV_A, "fp8", 16, 4096, 4096, ws, &rc);
    KT_CHECK_INT(rc, KT_EINVAL);
    KT_CHECK_CONTAINS(p.choice.reason, "unknown dtype 'fp8'");
    p = pick(&c, DEV_A, "bf16", 0, 4096, 4096, ws, &rc);
    KT_CHECK_INT(rc, KT_EINVAL);

    /* the reference kernel is never chosen, whatever the shape */
    for (int m = 1; m <= 8192; m *= 4) {
        p = pick(&c, DEV_B, "bf16", m, 1000 + m, 777, ws, &rc);
        KT_CHECK(strcmp(p.choice.kernel, K_REF) != 0);
    }

    /* device keys */
    ktrt_device d;
    KT_CHECK_INT(ktrt_device_from_key(&c, DEV_LAW, &d, err, sizeof err), KT_OK);
    KT_CHECK_INT(d.compute_units, 132);
    KT_CHECK(d.target && strcmp(d.target->name, "sm_90a") == 0);
    KT_CHECK_INT(ktrt_device_from_key(&c, "gfx1201/law", &d, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, "compute units are unknown");
    KT_CHECK_INT(ktrt_device_from_key(&c, "gfx1201/64/0x7550", &d, err, sizeof err), KT_OK);
    KT_CHECK_INT(ktrt_device_from_key(&c, "nonsense", &d, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, "nonsense");
    KT_CHECK_INT(ktrt_device_from_key(&c, "gfx9999/64/0x1", &d, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, "no ktune target");

    /* the target check: this database is sm_90a's */
    KT_CHECK_INT(ktrt_catalog_check_target(&c, kt_target_find("sm_90a"), err, sizeof err), KT_OK);
    KT_CHECK_INT(ktrt_catalog_check_target(&c, kt_target_find("gfx1201"), err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, path);
    KT_CHECK_CONTAINS(err, "a database for sm_90a, not for this device's target gfx1201");
    ktrt_catalog_free(&c);
    KT_CHECK_INT(c.nlayers, 0);
}

/* KT_LOG: fallbacks once per key at level 2, the other-device notice once per device unless 0. */
static void test_log(const char *path)
{
    ktrt_catalog c = {NULL, 0};
    char err[512];
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    KT_CHECK_INT(ktrt_log_level(NULL), 1);
    KT_CHECK_INT(ktrt_log_level("0"), 0);
    KT_CHECK_INT(ktrt_log_level("1"), 2);
    for (int level = 0; level <= 2; level++) {
        ktrt_log log = {level, NULL, 0, 0};
        FILE *f = tmpfile();
        KT_CHECK(f != NULL);
        if (!f) break;
        ktrt_device dev;
        KT_CHECK_INT(ktrt_device_from_key(&c, DEV_B, &dev, err, sizeof err), KT_OK);
        int ms[] = {13, 14, 16, 100, 1};   /* bucket 16 three times, 128 once, then a law pick elsewhere */
        for (int i = 0; i < 5; i++) {
            ktrt_query q = {&dev, "bf16", ms[i], i == 4 ? 5120 : 4096, i == 4 ? 8704 : 4096, 0};
            ktrt_pick p;
            ktrt_select_gemm(&c, &q, &p);
            ktrt_log_pick(&log, f, &dev, &p);
            ktrt_log_pick(&log, f, &dev, &p);
        }
        static char text[8192];
        rewind(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        fclose(f);
        int lines = 0, notices = 0;
        for (const char *t = text; (t = strchr(t, '\n')) != NULL; t++) lines++;
        for (const char *t = text; (t = strstr(t, "ktrt: notice:")) != NULL; t++) notices++;
        KT_CHECK_INT(notices, level >= 1 ? 1 : 0);
        KT_CHECK_INT(lines, level == 0 ? 0 : level == 1 ? 1 : 4);   /* notice + m<=16, m<=128, law */
        if (level == 2) {
            KT_CHECK_CONTAINS(text, "ktrt: gemm bf16 n=4096 k=4096 m<=16: path=bucket: not tuned on this device");
            KT_CHECK_CONTAINS(text, "ktrt: gemm bf16 n=5120 k=8704 m<=1: path=law: ");
            KT_CHECK_CONTAINS(text, "serve this device " DEV_B " (same target sm_90a)");
        }
        ktrt_log_free(&log);
    }
    ktrt_catalog_free(&c);
}

/* ---- layers ---- */

/* A second database: the same kernels, and DEV_A's key n=4096 k=4096 m<=16 picked differently. */
static void build_override(const char *path)
{
    kt_db *db = fresh_db(path);
    if (!db) return;
    kernels_sm90(db);
    device(db, DEV_A, 132, 0x2335);
    selection(db, run(db, DEV_A, "sweep"), DEV_A, 4096, 4096, 16, K_C, NULL, "measured", 9.0);
    db_close(db);
}

/* Stream-K (SK = 0) is read as such, not as "no SK axis" (absent: one segment); its workspace is
 * sized by the device's compute units; without that workspace its selection does not serve and
 * the law, which never picks stream-K, serves instead. */
#define K_SK0 "kt_gemm_swapab_bf16_bm16_bn32_bk64_wm8_wn1_sk0"
#define K_NOSK "kt_gemm_skinny_bf16_bm16_bn64_bk64_wm1_wn1"
static void test_streamk(const char *path)
{
    char err[512];
    kt_db *db = fresh_db(path);
    if (!db) return;
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 32, 64, 8, 1, 0, K_SK0, 64), 0);
    KT_CHECK_INT(kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 64, 64, 1, 1, -1, K_NOSK, 64), 0);
    device(db, DEV_A, 132, 0x2335);
    selection(db, run(db, DEV_A, "sweep"), DEV_A, 4608, 3584, 16, K_SK0, NULL, "measured", 13.0);
    db_close(db);

    ktrt_catalog c = {NULL, 0};
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    if (c.nlayers != 1) return;
    KT_CHECK_INT(c.layers[0].nkernels, 2);
    for (int i = 0; i < c.layers[0].nkernels; i++) {
        const ktrt_kernel *k = &c.layers[0].kernels[i];
        KT_CHECK_INT(k->v.p[KT_GEMM_P_SK], strcmp(k->name, K_SK0) == 0 ? 0 : 1);
    }
    long long ws = ktrt_catalog_workspace_bytes(&c, kt_target_find("sm_90a"), 132);
    KT_CHECK_INT(ws, (2LL * 264 * 16 * 32 + KT_GEMM_TILE_COUNTERS) * 4);   /* two slabs a block, two blocks an SM */
    KT_CHECK_INT(ktrt_catalog_workspace_bytes(&c, kt_target_find("sm_90a"), 66), (2LL * 132 * 16 * 32 + KT_GEMM_TILE_COUNTERS) * 4);
    int rc;
    ktrt_pick p = pick(&c, DEV_A, "bf16", 16, 4608, 3584, ws, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "exact") == 0 && strcmp(p.choice.kernel, K_SK0) == 0);
    KT_CHECK_INT(p.choice.splitk, 0);
    p = pick(&c, DEV_A, "bf16", 16, 4608, 3584, ws - 4, &rc);
    KT_CHECK_INT(rc, KT_OK);
    KT_CHECK(strcmp(p.choice.path, "law") == 0 && strcmp(p.choice.kernel, K_NOSK) == 0);
    KT_CHECK(strstr(p.choice.reason, "sk0 needs") != NULL);
    ktrt_catalog_free(&c);
}

static void test_layers(const char *main_db, const char *override_db)
{
    char err[1024], missing[256];
    path_in(missing, sizeof missing, "missing.ktdb");
    setenv("KT_USER_DB", main_db, 1);
    setenv("KT_SHIPPED_DB", missing, 1);
    unsetenv("KT_DB");

    ktrt_catalog c = {NULL, 0};
    ktrt_options o = {.db_path = override_db};
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_OK);
    KT_CHECK_INT(c.nlayers, 2);                          /* the shipped one does not exist: skipped */
    if (c.nlayers == 2) {
        KT_CHECK(strcmp(c.layers[0].role, "caller") == 0 && strcmp(c.layers[0].path, override_db) == 0);
        KT_CHECK(strcmp(c.layers[1].role, "user") == 0 && strcmp(c.layers[1].path, main_db) == 0);
    }
    int rc;
    ktrt_pick p = pick(&c, DEV_A, "bf16", 16, 4096, 4096, 0, &rc);
    KT_CHECK(strcmp(p.choice.kernel, K_C) == 0);        /* the caller's database answers first */
    KT_CHECK(strcmp(p.choice.db_path, override_db) == 0);
    p = pick(&c, DEV_A, "bf16", 64, 2048, 2048, 0, &rc);
    KT_CHECK(strcmp(p.choice.path, "exact") == 0);      /* each step over all layers: the user's exact */
    KT_CHECK(strcmp(p.choice.db_path, main_db) == 0);   /* beats the caller's law */
    ktrt_catalog_free(&c);

    /* the same file twice is one layer */
    o.db_path = main_db;
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_OK);
    KT_CHECK_INT(c.nlayers, 1);
    ktrt_catalog_free(&c);
    /* no_default_layers: only the caller's */
    o.db_path = override_db;
    o.no_default_layers = 1;
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_OK);
    KT_CHECK_INT(c.nlayers, 1);
    ktrt_catalog_free(&c);
    /* $KT_DB stands in for db_path */
    setenv("KT_DB", override_db, 1);
    o.db_path = NULL;
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_OK);
    KT_CHECK(c.nlayers == 1 && strcmp(c.layers[0].path, override_db) == 0);
    ktrt_catalog_free(&c);
    unsetenv("KT_DB");
    /* a given path must exist; nothing at all is KT_ENODB */
    o.db_path = missing;
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_ENODB);
    KT_CHECK_CONTAINS(err, missing);
    KT_CHECK_CONTAINS(err, "ktrt_options.db_path");
    KT_CHECK_INT(c.nlayers, 0);
    o.db_path = NULL;
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_ENODB);
    KT_CHECK_CONTAINS(err, "no database");
    /* an optional layer that exists but is bad fails the open: it is not silently skipped */
    char garbage[256];
    path_in(garbage, sizeof garbage, "garbage.ktdb");
    setenv("KT_USER_DB", garbage, 1);
    o.db_path = override_db;
    o.no_default_layers = 0;
    KT_CHECK_INT(ktrt_layers_open(&c, &o, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, garbage);
    KT_CHECK_CONTAINS(err, "$KT_USER_DB");
    ktrt_catalog_free(&c);
    unsetenv("KT_USER_DB");
    unsetenv("KT_SHIPPED_DB");
}

/* ---- bad files ---- */

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(data, 1, n, f);
        fclose(f);
    }
}

static int refusal(const char *path, char *err, size_t errlen)
{
    ktrt_catalog c = {NULL, 0};
    err[0] = 0;
    int rc = ktrt_catalog_add(&c, path, "caller", err, errlen);
    KT_CHECK_INT(c.nlayers, rc == KT_OK ? 1 : 0);
    ktrt_catalog_free(&c);
    return rc;
}

static void sql(const char *path, const char *text)
{
    sqlite3 *h = NULL;
    KT_CHECK_INT(sqlite3_open(path, &h), SQLITE_OK);
    KT_CHECK_INT(sqlite3_exec(h, text, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(h);
}

static void test_bad_files(const char *main_db)
{
    char path[256], err[1024];
    path_in(path, sizeof path, "garbage.ktdb");
    char junk[4096];
    for (size_t i = 0; i < sizeof junk; i++) junk[i] = (char)(i * 7919 >> 3);
    write_bytes(path, junk, sizeof junk);
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, path);
    KT_CHECK_CONTAINS(err, "not a ktune database");

    path_in(path, sizeof path, "empty.ktdb");
    write_bytes(path, "", 0);
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, "empty file");

    /* truncated: the first half of a real database with some bulk in it */
    char big[256];
    path_in(big, sizeof big, "big.ktdb");
    kt_db *db = NULL;
    unlink(big);
    KT_CHECK_INT(db_open(big, 1, &db, err, sizeof err), 0);
    if (db) {
        db_begin(db, err, sizeof err);
        kernels_sm90(db);
        for (int i = 0; i < 200; i++) {
            char name[64];
            snprintf(name, sizeof name, "filler_%03d", i);
            kernel(db, "sm_90a", "gemm", "ok", "bf16", 16, 32, 32, 1, 1, 1, name, 4000);
        }
        db_commit(db, err, sizeof err);
        db_close(db);
    }
    struct stat st;
    KT_CHECK_INT(stat(big, &st), 0);
    KT_CHECK(refusal(big, err, sizeof err) == KT_OK);
    FILE *f = fopen(big, "rb");
    char *bytes = malloc((size_t)st.st_size);
    size_t got = f && bytes ? fread(bytes, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    path_in(path, sizeof path, "half.ktdb");
    write_bytes(path, bytes, got / 2);
    free(bytes);
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, path);
    KT_CHECK_CONTAINS(err, "truncated");

    /* corrupt inside: a page overwritten after the header */
    path_in(path, sizeof path, "scribbled.ktdb");
    f = fopen(big, "rb");
    bytes = malloc((size_t)st.st_size);
    got = f && bytes ? fread(bytes, 1, (size_t)st.st_size, f) : 0;
    if (f) fclose(f);
    if (got > 3 * 4096) memset(bytes + 4096, 0xa5, 2 * 4096);
    write_bytes(path, bytes, got);
    free(bytes);
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, path);

    /* schema versions: newer, older, none (somebody else's SQLite file) */
    char cmd[600];
    path_in(path, sizeof path, "newer.ktdb");
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", main_db, path);
    KT_CHECK_INT(system(cmd), 0);
    sql(path, "PRAGMA user_version = 4");
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, path);
    KT_CHECK_CONTAINS(err, "newer schema: schema version 4");
    sql(path, "PRAGMA user_version = 1");
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, "older schema");
    path_in(path, sizeof path, "foreign.db");
    unlink(path);
    sql(path, "CREATE TABLE notes (x)");
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, "not a ktune database");
    sql(path, "PRAGMA user_version = 2");       /* right number, wrong tables */
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, "missing");

    path_in(path, sizeof path, "nothing-here.ktdb");
    KT_CHECK_INT(refusal(path, err, sizeof err), KT_ENODB);
    KT_CHECK_CONTAINS(err, "no such file");
    KT_CHECK_INT(refusal(dir, err, sizeof err), KT_EBADDB);   /* a folder */

    /* wrong target: a gfx1201 database for an sm_90a device */
    path_in(path, sizeof path, "gfx.ktdb");
    unlink(path);
    KT_CHECK_INT(db_open(path, 1, &db, err, sizeof err), 0);
    if (db) {
        kernel(db, "gfx1201", "gemm", "ok", "bf16", 16, 64, 32, 1, 2, 1, NULL, 64);
        db_close(db);
    }
    ktrt_catalog c = {NULL, 0};
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    KT_CHECK_INT(ktrt_catalog_check_target(&c, kt_target_find("sm_90a"), err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, path);
    KT_CHECK_CONTAINS(err, "gfx1201");
    ktrt_catalog_free(&c);
}

/* A database a tuner still has open in WAL mode: committed rows are visible read-only. */
static void test_wal_reader(void)
{
    char path[256], err[512], wal[300];
    path_in(path, sizeof path, "live.ktdb");
    unlink(path);
    kt_db *db = NULL;
    KT_CHECK_INT(db_open(path, 1, &db, err, sizeof err), 0);
    if (!db) return;
    kernels_sm90(db);
    device(db, DEV_A, 132, 0x2335);
    selection(db, run(db, DEV_A, "sweep"), DEV_A, 4096, 4096, 16, K_A, NULL, "measured", 10.0);
    snprintf(wal, sizeof wal, "%s-wal", path);
    struct stat st;
    KT_CHECK(stat(wal, &st) == 0 && st.st_size > 0);   /* the rows live in the WAL, not yet in the file */
    ktrt_catalog c = {NULL, 0};
    KT_CHECK_INT(ktrt_catalog_add(&c, path, "caller", err, sizeof err), KT_OK);
    KT_CHECK(c.nlayers == 1 && c.layers[0].nselections == 1 && c.layers[0].nkernels == 5);
    /* and code objects come out by name and hash */
    if (c.nlayers == 1 && c.layers[0].nkernels > 0) {
        void *code = NULL;
        size_t len = 0;
        KT_CHECK_INT(ktrt_layer_code(&c.layers[0], &c.layers[0].kernels[0], &code, &len, err, sizeof err), KT_OK);
        KT_CHECK_INT(len, 64);
        free(code);
    }
    ktrt_catalog_free(&c);
    db_close(db);
}

/* ---- ktrt_open without a GPU ---- */

static void test_open(const char *main_db)
{
    char err[1024], gfx[256], garbage[256];
    ktrt *rt = NULL;
    ktrt_options o = {.db_path = main_db, .no_default_layers = 1};
    int rc = ktrt_open(&o, &rt, err, sizeof err);
    if (rc == KT_OK) {
        /* a GPU machine: the handle works and chooses */
        printf("ktrt_open found a device: %s\n", ktrt_device_key(rt));
        ktrt_choice ch;
        KT_CHECK(ktrt_choose_gemm(rt, "bf16", 16, 4096, 4096, &ch, err, sizeof err) == KT_OK);
        ktrt_stats st;
        KT_CHECK_INT(ktrt_get_stats(rt, &st), KT_OK);
        KT_CHECK(st.exact + st.bucket + st.law + st.refused == 0);   /* choosing is not dispatching */
        ktrt_close(rt);
    } else {
        KT_CHECK(rt == NULL);
        KT_CHECK_INT(rc, KT_ENODEVICE);
        KT_CHECK_CONTAINS(err, "no device");
        KT_CHECK_CONTAINS(err, "sm_90a");
        KT_CHECK_CONTAINS(err, "cuda");
    }
    ktrt_stats none;
    KT_CHECK_INT(ktrt_get_stats(NULL, &none), KT_EINVAL);
    /* a HIP database: Debian's libamdhip64 loads, finds no device */
    path_in(gfx, sizeof gfx, "gfx.ktdb");
    o.db_path = gfx;
    rc = ktrt_open(&o, &rt, err, sizeof err);
    if (rc != KT_OK) {
        KT_CHECK_INT(rc, KT_ENODEVICE);
        KT_CHECK_CONTAINS(err, "hip");
        KT_CHECK_CONTAINS(err, "no device");
    }
    ktrt_close(rt);
    rt = NULL;
    /* the database is judged before the device */
    path_in(garbage, sizeof garbage, "garbage.ktdb");
    o.db_path = garbage;
    KT_CHECK_INT(ktrt_open(&o, &rt, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, garbage);
    KT_CHECK(rt == NULL);
    o.db_path = NULL;
    unsetenv("KT_DB");
    KT_CHECK_INT(ktrt_open(&o, &rt, err, sizeof err), KT_ENODB);
    setenv("KT_DB", garbage, 1);
    KT_CHECK_INT(ktrt_open(&o, &rt, err, sizeof err), KT_EBADDB);
    KT_CHECK_CONTAINS(err, "$KT_DB");
    unsetenv("KT_DB");
    KT_CHECK_INT(ktrt_open(NULL, NULL, err, sizeof err), KT_EINVAL);
    o.db_path = main_db;
    o.max_streams = -1;
    KT_CHECK_INT(ktrt_open(&o, &rt, err, sizeof err), KT_EINVAL);
    /* NULL handles are errors, not crashes */
    ktrt_choice ch;
    KT_CHECK_INT(ktrt_choose_gemm(NULL, "bf16", 1, 1, 1, &ch, err, sizeof err), KT_EINVAL);
    KT_CHECK_INT(ktrt_gemm(NULL, "bf16", 1, 1, 1, NULL, 1, NULL, 1, NULL, 1, NULL, NULL, err, sizeof err), KT_EINVAL);
    KT_CHECK(strcmp(ktrt_device_key(NULL), "") == 0);
    ktrt_close(NULL);
}

/* ---- kt explain / kt dump, the real binary ---- */

/* Runs kt with args; stdout+stderr into out; the exit status, or -1 when it could not run. */
static int kt(char *out, size_t len, const char *args)
{
    char cmd[PATH_MAX + 2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", kt_bin, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, len - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli(const char *main_db)
{
    if (access(kt_bin, X_OK) != 0) {
        fprintf(stderr, "test_ktrt: %s not found: build out/bin/kt first (make out/bin/kt)\n", kt_bin);
        KT_CHECK(0);
        return;
    }
    static char out[65536];
    char args[1024], path[256];
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 4096 --k 4096 --m 13", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 0);
    KT_CHECK_CONTAINS(out, "problem: gemm bf16 n=4096 k=4096 m<=16 (m=13)");
    KT_CHECK_CONTAINS(out, "device: " DEV_A " (sm_90a, 132 compute units)");   /* the real device, not the law's */
    KT_CHECK_CONTAINS(out, "path=exact\nkernel: " K_A "\n");
    KT_CHECK_CONTAINS(out, "reason: tuned on this device: 10.000 us");
    KT_CHECK_CONTAINS(out, "selection: kernel=" K_A " source=measured time_us=10.000");
    /* measured alternatives, fastest first, the crash last */
    const char *a = strstr(out, "  " K_A " coarse ok median_us=10.000");
    const char *c = strstr(out, "  " K_C " coarse ok median_us=12.500");
    const char *e = strstr(out, "  " K_E " coarse crash median_us=-");
    KT_CHECK(a && c && e && a < c && c < e);
    KT_CHECK_CONTAINS(out, "verify=ok error=1.000e-03");
    KT_CHECK_CONTAINS(out, "detail=\"worker died\"");

    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 4096 --k 4096 --m 13 --device " DEV_B,
             main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 0);
    KT_CHECK_CONTAINS(out, "path=bucket");
    KT_CHECK_CONTAINS(out, "notice: tuned on " DEV_A);
    KT_CHECK_CONTAINS(out, "(nothing)");                      /* nothing measured on DEV_B */

    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype fp16 --n 4096 --k 4096 --m 13 --device " DEV_A,
             main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 3);
    KT_CHECK_CONTAINS(out, "path=refused");
    KT_CHECK_CONTAINS(out, "reason: no ok gemm kernel of dtype fp16");

    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1024 --k 1024 --m 1 --device " DEV_LAW,
             main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 0);
    KT_CHECK_CONTAINS(out, "path=law\nkernel: " K_D);

    path_in(path, sizeof path, "garbage.ktdb");
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1 --k 1 --m 1", path);
    KT_CHECK_INT(kt(out, sizeof out, args), 1);
    KT_CHECK_CONTAINS(out, path);
    KT_CHECK_CONTAINS(out, "not a ktune database");
    path_in(path, sizeof path, "gfx.ktdb");
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1 --k 1 --m 1 --device " DEV_A, path);
    KT_CHECK_INT(kt(out, sizeof out, args), 1);
    KT_CHECK_CONTAINS(out, "not for this device's target sm_90a");
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1 --k 1 --m 0", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 2);
    KT_CHECK_INT(kt(out, sizeof out, "explain --op gemm"), 2);
    /* the op's own dimensions, named in every refusal */
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1 --k 1 --m 1 --hidden 4", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 2);
    KT_CHECK_CONTAINS(out, "unknown option '--hidden' (gemm has no such dimension)");
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1 --m 1", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 2);
    KT_CHECK_CONTAINS(out, "--k is required for --op gemm");
    snprintf(args, sizeof args, "explain --db '%s' --op conv --dtype bf16 --n 1", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 2);
    KT_CHECK_CONTAINS(out, "--op conv: not an op of this build");
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype int4 --n 1 --k 1 --m 1", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 2);
    KT_CHECK_CONTAINS(out, "gemm takes bf16 fp16");
    KT_CHECK_INT(kt(out, sizeof out, "ops"), 0);
    KT_CHECK_CONTAINS(out, "gemm: C[m][n]");
    KT_CHECK_CONTAINS(out, "key:       gemm <dtype> n=N k=N m<=N");

    /* law-only database: the '<target>/law' device is found without --device */
    char lawdb[256], err[512];
    path_in(lawdb, sizeof lawdb, "law.ktdb");
    unlink(lawdb);
    kt_db *db = NULL;
    KT_CHECK_INT(db_open(lawdb, 1, &db, err, sizeof err), 0);
    if (db) {
        kernels_sm90(db);
        device(db, DEV_LAW, 132, -1);
        selection(db, run(db, DEV_LAW, "law"), DEV_LAW, 1024, 1024, 1, K_D, NULL, "law", NAN);
        db_close(db);
    }
    snprintf(args, sizeof args, "explain --db '%s' --op gemm --dtype bf16 --n 1024 --k 1024 --m 1", lawdb);
    KT_CHECK_INT(kt(out, sizeof out, args), 0);
    KT_CHECK_CONTAINS(out, "device: " DEV_LAW " (sm_90a, 132 compute units)");
    KT_CHECK_CONTAINS(out, "path=law\nkernel: " K_D);

    /* dump: stable, sorted, fixed precision */
    snprintf(args, sizeof args, "dump --db '%s'", main_db);
    KT_CHECK_INT(kt(out, sizeof out, args), 0);
    static char again[65536];
    KT_CHECK_INT(kt(again, sizeof again, args), 0);
    KT_CHECK(strcmp(out, again) == 0);
    KT_CHECK_CONTAINS(out, "ktune-dump 1 schema 3\n");   /* the file's own version */
    KT_CHECK_CONTAINS(out, "kernels target=sm_90a ops=reference:gemm status=ok count=1\n");
    KT_CHECK_CONTAINS(out, "device " DEV_A " target=sm_90a arch=sm_90 cus=132 pci=0x2335 l2=52428800 "
                           "name=\"NVIDIA test part\"\n");
    KT_CHECK_CONTAINS(out, "device " DEV_LAW " target=sm_90a arch=sm_90 cus=132 pci=- ");
    KT_CHECK_CONTAINS(out, "problem \"gemm bf16 n=1024 k=1024 m<=1\" op=gemm dtype=bf16 n=1024 k=1024 m=1 phase=decode\n");
    char want[512], code_a[17];
    snprintf(code_a, sizeof code_a, "%.16s", fx_hash(K_A));   /* dump shows 16 hex digits of the hash */
    snprintf(want, sizeof want, "pass device=" DEV_A " problem=\"gemm bf16 n=4096 k=4096 m<=16\" kind=coarse run=1 "
             "variants=3 rounds=5 cold=1 gpu=0 control=%s control_spread=0.0123\n", code_a);
    KT_CHECK_CONTAINS(out, want);
    snprintf(want, sizeof want, "  time kernel=" K_A " code=%s status=ok median_us=10.000 min_us=9.800 "
             "max_us=10.500 error=- reps=5 launches=8 detail=-\n", code_a);
    KT_CHECK_CONTAINS(out, want);
    KT_CHECK_CONTAINS(out, "verify device=" DEV_A " problem=\"gemm bf16 n=4096 k=4096 m<=16\" run=1 kernel=" K_E);
    snprintf(want, sizeof want, "selection device=" DEV_A " problem=\"gemm bf16 n=2048 k=2048 m<=64\" kernel=" K_A
             " code=%s source=measured time_us=5.000 error=1.000e-03 law=" K_A
             " law_us=5.500 regret=0.1000 noise_floor=0.0100 decided_by=fastest run=1\n", code_a);
    KT_CHECK_CONTAINS(out, want);
    KT_CHECK_CONTAINS(out, " started=20");                   /* runs keep their timestamps, ISO UTC */
    /* sorted by shape, not by insertion: m<=64 before m<=256 before 4096's rows; timings by kernel name */
    const char *s64 = strstr(out, "selection device=" DEV_A " problem=\"gemm bf16 n=2048 k=2048 m<=64\"");
    const char *s256 = strstr(out, "selection device=" DEV_A " problem=\"gemm bf16 n=2048 k=2048 m<=256\"");
    const char *s4k = strstr(out, "selection device=" DEV_A " problem=\"gemm bf16 n=4096 k=4096 m<=16\"");
    KT_CHECK(s64 && s256 && s4k && s64 < s256 && s256 < s4k);
    const char *t_a = strstr(out, "  time kernel=" K_A), *t_c = strstr(out, "  time kernel=" K_C);
    const char *t_e = strstr(out, "  time kernel=" K_E);
    KT_CHECK(t_a && t_c && t_e && t_a < t_e && t_e < t_c);
    path_in(path, sizeof path, "half.ktdb");
    snprintf(args, sizeof args, "dump --db '%s'", path);
    KT_CHECK_INT(kt(out, sizeof out, args), 1);
    KT_CHECK_CONTAINS(out, "truncated");
}

/* A WAL database in a folder the reader cannot write (a serving image's /usr/local/share): no -shm
 * can be made, so the file is read as immutable. Needs an unprivileged user: run as root with
 * setpriv, kt explain as nobody; skipped (said so) elsewhere. */
static void test_readonly_folder(const char *main_db)
{
    if (geteuid() != 0 || system("command -v setpriv >/dev/null 2>&1") != 0) {
        printf("test_ktrt: read-only folder case skipped (needs root and setpriv to become nobody)\n");
        return;
    }
    char ro[256], db[300], cmd[PATH_MAX + 2048];
    path_in(ro, sizeof ro, "ro");
    snprintf(db, sizeof db, "%s/tuned.ktdb", ro);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s' && chmod 755 '%s' '%s' && chmod 644 '%s'", ro, main_db, db,
             dir, ro, db);
    KT_CHECK_INT(system(cmd), 0);
    char readable[PATH_MAX + 64];   /* nobody must reach kt: every folder above it searchable */
    snprintf(readable, sizeof readable, "setpriv --reuid=65534 --regid=65534 --clear-groups test -x '%s'", kt_bin);
    if (system(readable) != 0) {
        printf("test_ktrt: read-only folder case skipped (%s is not reachable as nobody)\n", kt_bin);
        return;
    }
    static char out[16384];
    snprintf(cmd, sizeof cmd, "setpriv --reuid=65534 --regid=65534 --clear-groups '%s' explain --db '%s' --op gemm "
             "--dtype bf16 --n 4096 --k 4096 --m 13 2>&1", kt_bin, db);
    FILE *p = popen(cmd, "r");
    size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
    out[n] = 0;
    int st = p ? pclose(p) : -1;
    KT_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    KT_CHECK_CONTAINS(out, "path=exact\nkernel: " K_A);
    char shm[320];
    snprintf(shm, sizeof shm, "%s-shm", db);
    KT_CHECK(access(shm, F_OK) != 0);    /* nothing was written beside it */
}

static void test_keys(void)
{
    char buf[96];
    KT_CHECK_INT(kt_gemm_problem_key(buf, sizeof buf, "bf16", 5120, 8704, 16), 29);
    KT_CHECK(strcmp(buf, "gemm bf16 n=5120 k=8704 m<=16") == 0);
    KT_CHECK_INT(kt_gemm_problem_key(buf, sizeof buf, "bf16", 5120, 8704, 17), -1);
    KT_CHECK_INT(kt_gemm_problem_key(buf, 8, "bf16", 5120, 8704, 16), -1);
    KT_CHECK(kt_device_key(buf, sizeof buf, "sm_90", 132, 0x2335) > 0 && strcmp(buf, DEV_A) == 0);
    KT_CHECK(kt_device_key(buf, sizeof buf, "gfx1201", 64, -1) > 0 && strcmp(buf, "gfx1201/64/unknown") == 0);
    KT_CHECK_INT(kt_device_key(buf, sizeof buf, "", 64, 1), -1);
    KT_CHECK(kt_law_device_key(buf, sizeof buf, "sm_90a") > 0 && strcmp(buf, DEV_LAW) == 0);
    KT_CHECK_INT(kt_m_bucket_index(256), 8);
    KT_CHECK_INT(kt_m_bucket_index(100), -1);
}

int main(int argc, char **argv)
{
    /* kt sits at <out>/bin/kt beside this test's <out>/tests/test_ktrt */
    char self[PATH_MAX];
    snprintf(self, sizeof self, "%s", argv[0]);
    snprintf(kt_bin, sizeof kt_bin, "%s/../bin/kt", dirname(self));
    snprintf(dir, sizeof dir, "/tmp/kt_test_ktrt_XXXXXX");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return 1;
    }
    char main_db[256], override_db[256];
    path_in(main_db, sizeof main_db, "main.ktdb");
    path_in(override_db, sizeof override_db, "override.ktdb");
    setenv("KT_LOG", "0", 1);
    build_main(main_db);
    build_override(override_db);
    test_keys();
    test_chain(main_db);
    test_ops_membership();
    test_long_names();
    test_code_hash();
    test_log(main_db);
    test_bad_files(main_db);
    test_layers(main_db, override_db);
    test_wal_reader();
    test_open(main_db);
    test_cli(main_db);
    test_readonly_folder(main_db);
    char streamk_db[256];
    path_in(streamk_db, sizeof streamk_db, "streamk.ktdb");
    test_streamk(streamk_db);
    if (!kt_test_failures && !kt_env_get("KT_TEST_KEEP")) {   /* KT_TEST_KEEP=1 keeps them to look at */
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    } else {
        fprintf(stderr, "test_ktrt: databases left in %s\n", dir);
    }
    KT_TEST_END();
}
