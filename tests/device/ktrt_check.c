/* ktrt_check.c: proves libktrt works on its own on the card: every selection of a tuned database
 * dispatched through ktrt_gemm and checked against a float64 CPU reference, plus untuned shapes
 * (bucket and law paths), a launch inside a CUDA graph capture, and two threads on two streams.
 *
 *   ktrt_check --db FILE [--seed S] [--max-selections N]
 *   ktrt_check --db FILE --plan [--device-key KEY]     (no GPU: print the cases it would run)
 *
 * Linked with out/lib/libktrt.a, -lsqlite3, -ldl, -lm, -lpthread and nothing else of ktune, so a
 * pass means the serving library works alone (tests/device/build.sh checks the link).
 *
 * Cases:
 *  - selection: every row of the selection table for the device's key (read here with SQLite,
 *    read-only, so the test does not depend on the reader under test), at M = the bucket edge,
 *    M = edge - 1 (padded leading dimensions), and M = the previous edge + 1 (the smallest M the
 *    bucket serves); where M falls in a tuned bucket of the same shape the path must be "exact"
 *    and the kernel the selection's (a different answer fails the case: it is the runtime's
 *    promise); the largest tuned edge is also run at edge + 7 (over the last edge: chunk-wise).
 *  - untuned: 20 shapes the database does not hold: ragged M in untuned buckets of tuned (n, k)
 *    (path "bucket") and ragged (n, k) never tuned (path "law"), some with padded leading
 *    dimensions; the path is printed, and a refusal fails.
 *  - capture: ktrt_gemm on a capturing stream, the first launch of its kernel in the process (the
 *    code object loads under capture), then the graph replayed twice on fresh inputs; and once
 *    more after the kernel is loaded.
 *  - stats: ktrt_get_stats equals the calls the test made, path by path.
 *  - threads: two threads, each with its own stream and backend, enqueue the same split-K-heavy
 *    list back to back at the same moment (a shared workspace would corrupt one of them), then
 *    check every output; each choice must match the single-threaded one.
 * Each case: fresh random inputs (never zeros; seeded per case from --seed, default the clock,
 * printed), NaN-poisoned output with guard bands and padding, every element written, norm-wise
 * and per-element bounds of tests/device/gemm_ref.h on all rows (or a sample where M*N*K is large).
 *
 * Output: one line per case, then "ktrt_check: N cases, F failed". Exit: 0 all passed; 1 a
 * failure or bad input; 2 no device ("ktrt_check: no device: ..."). */
#define _GNU_SOURCE
#include "runtime/ktrt.h"
#include "runtime/backend.h"
#include "runtime/problem_key.h"
#include "build/kernel_name.h"
#include "gemm_ref.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KC_GUARD 128                 /* poison elements before and after C */
#define KC_UNTUNED 20                /* untuned shapes */
#define KC_BUCKET_MAX 8              /* of which at most this many on the bucket path */
#define KC_THREAD_SHAPES 4
#define KC_THREAD_REPEATS 2
#define KC_FULL_MACS (1ll << 28)     /* check every row up to this many multiply-adds */
#define KC_SAMPLE_MACS (1ll << 27)   /* else about this many, at least KC_MIN_ROWS rows */
#define KC_MIN_ROWS 8

/* ---------------------------------------------------------------- cases */

typedef struct kc_sel {                /* a selection row */
    char key[96], dtype[8], kernel[KT_KERNEL_NAME_MAX], source[12];
    int n, k, m;
} kc_sel;

typedef struct kc_case {
    const char *kind;                  /* "selection" | "ragged" | "over" | "bucket" | "law" | ... */
    char dtype[8];
    kt_ref_dtype dt;
    int m, n, k, pad;
    char expect_path[8];               /* "" when anything that computes right will do */
    char expect_kernel[KT_KERNEL_NAME_MAX];
    int strict;                        /* 1: a path or kernel other than expected fails */
} kc_case;

typedef struct kc_list {
    kc_case *v;
    int n, cap;
} kc_list;

static int kc_push(kc_list *l, const kc_case *c)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 64;
        kc_case *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *c;
    return 0;
}

/* The selection serving (dtype, n, k, bucket(m)) on this device, or NULL. */
static const kc_sel *kc_find_sel(const kc_sel *s, int ns, const char *dtype, int n, int k, int m)
{
    int b = kt_m_bucket(m);
    for (int i = 0; i < ns; i++)
        if (s[i].n == n && s[i].k == k && s[i].m == b && !strcmp(s[i].dtype, dtype))
            return &s[i];
    return NULL;
}

static int kc_shape_tuned(const kc_sel *s, int ns, const char *dtype, int n, int k)
{
    for (int i = 0; i < ns; i++)
        if (s[i].n == n && s[i].k == k && !strcmp(s[i].dtype, dtype))
            return 1;
    return 0;
}

/* What the chain should answer for (dtype, m, n, k) given this device's selections. */
static void kc_expect(kc_case *c, const kc_sel *s, int ns)
{
    const kc_sel *hit = kc_find_sel(s, ns, c->dtype, c->n, c->k, c->m);
    c->strict = 0;
    c->expect_kernel[0] = 0;
    if (hit) {
        snprintf(c->expect_path, sizeof c->expect_path, "exact");
        snprintf(c->expect_kernel, sizeof c->expect_kernel, "%s", hit->kernel);
        c->strict = !strcmp(hit->source, "measured");
    } else if (kc_shape_tuned(s, ns, c->dtype, c->n, c->k)) {
        snprintf(c->expect_path, sizeof c->expect_path, "bucket");
    } else {
        snprintf(c->expect_path, sizeof c->expect_path, "law");
    }
}

static int kc_make(kc_list *l, const char *kind, const char *dtype, int m, int n, int k, int pad, const kc_sel *s,
                   int ns)
{
    kc_case c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    snprintf(c.dtype, sizeof c.dtype, "%s", dtype);
    if (kt_ref_dtype_parse(dtype, &c.dt))
        return 0;   /* a dtype this check cannot generate: not a case */
    c.m = m;
    c.n = n;
    c.k = k;
    c.pad = pad;
    kc_expect(&c, s, ns);
    return kc_push(l, &c);
}

/* Ragged shapes no model has: odd N and K, K not a multiple of 8 or of any BK, tiny and large M. */
static const int kc_law_shapes[][3] = {
    { 1, 1000, 777 }, { 3, 1537, 4100 }, { 7, 4095, 333 }, { 13, 257, 1030 }, { 33, 5003, 2050 },
    { 65, 999, 4096 }, { 100, 3001, 1000 }, { 257, 1234, 567 }, { 511, 4097, 129 }, { 1000, 640, 2309 },
    { 2049, 1111, 77 }, { 2, 7000, 3583 }, { 40, 130, 8190 }, { 129, 2047, 1536 }, { 5, 6151, 4091 },
    { 300, 96, 72 }, { 17, 72, 1000 }, { 4100, 520, 640 }, { 9, 3072, 12289 }, { 48, 200, 264 },
};
#define KC_NLAW ((int)(sizeof kc_law_shapes / sizeof kc_law_shapes[0]))

/* Every case except capture and threads, in run order. */
static int kc_plan(kc_list *l, const kc_sel *s, int ns, char dtypes[][8], int ndt)
{
    int top = 0;
    for (int i = 0; i < ns; i++)
        top = s[i].m > top ? s[i].m : top;
    for (int i = 0; i < ns; i++) {
        const kc_sel *x = &s[i];
        int bi = kt_m_bucket_index(x->m), prev = bi > 0 ? kt_m_bucket_at(bi - 1) : 0;
        if (bi < 0) {
            fprintf(stderr, "ktrt_check: selection \"%s\": m=%d is not a bucket edge; dispatched at m as is\n",
                    x->key, x->m);
        }
        if (kc_make(l, "selection", x->dtype, x->m, x->n, x->k, 0, s, ns))
            return -1;
        if (x->m > 1 && kc_make(l, "ragged", x->dtype, x->m - 1, x->n, x->k, 8, s, ns))
            return -1;
        if (bi >= 0 && prev + 1 < x->m - 1 && kc_make(l, "ragged", x->dtype, prev + 1, x->n, x->k, 0, s, ns))
            return -1;
        if (x->m == top && top == kt_m_bucket_at(kt_m_bucket_count() - 1) &&
            kc_make(l, "over", x->dtype, x->m + 7, x->n, x->k, 3, s, ns))
            return -1;
    }

    /* Untuned buckets of tuned shapes, round-robin over the shapes, smallest M first. */
    int made = 0;
    for (int pass = 0; pass < kt_m_bucket_count() && made < KC_BUCKET_MAX; pass++)
        for (int i = 0; i < ns && made < KC_BUCKET_MAX; i++) {
            int first = 1;   /* each (dtype, n, k) once per pass: at its first row */
            for (int j = 0; j < i; j++)
                first &= !(s[j].n == s[i].n && s[j].k == s[i].k && !strcmp(s[j].dtype, s[i].dtype));
            if (!first)
                continue;
            /* The pass-th untuned edge of this shape. */
            int seen = 0;
            for (int e = 0; e < kt_m_bucket_count(); e++) {
                int edge = kt_m_bucket_at(e), prev = e ? kt_m_bucket_at(e - 1) : 0;
                if (kc_find_sel(s, ns, s[i].dtype, s[i].n, s[i].k, edge))
                    continue;
                if (seen++ != pass)
                    continue;
                int m = edge - 1 > prev ? edge - 1 : edge;
                if (kc_make(l, "bucket", s[i].dtype, m, s[i].n, s[i].k, made % 2 ? 3 : 0, s, ns))
                    return -1;
                made++;
                break;
            }
        }
    if (ns && !made)
        printf("ktrt_check: note: every bucket of every tuned shape is tuned on this device: the bucket path "
               "cannot be reached with this database\n");

    /* Never-tuned shapes (law), the rest of the 20. */
    for (int i = 0; made < KC_UNTUNED && i < KC_NLAW; i++) {
        const char *dt = dtypes[i % ndt];
        int m = kc_law_shapes[i][0], n = kc_law_shapes[i][1], k = kc_law_shapes[i][2];
        while (kc_shape_tuned(s, ns, dt, n, k))
            n++;
        if (kc_make(l, "law", dt, m, n, k, i % 3 == 1 ? 8 : i % 3 == 2 ? 3 : 0, s, ns))
            return -1;
        made++;
    }
    return 0;
}

/* ---------------------------------------------------------------- the database, read directly */

/* Selections for device_key (NULL: every device) and the dtypes of the dispatchable kernels. */
static int kc_read_db(const char *path, const char *device_key, kc_sel **out, int *count, char dtypes[][8], int *ndt)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    kc_sel *v = NULL;
    int n = 0, cap = 0, rc = -1;
    *ndt = 0;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "ktrt_check: %s: %s\n", path, db ? sqlite3_errmsg(db) : "cannot open");
        goto done;
    }
    /* the dimensions from the key text (schema 3 has no n/k/m columns; schema 2's keys are the same) */
    const char *q = "SELECT problem_key, dtype, kernel, source FROM selection "
                    "WHERE op = 'gemm' AND (?1 IS NULL OR device_key = ?1) ORDER BY problem_key";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "ktrt_check: %s: reading selections: %s (not a tuned database of schema 2 or 3?)\n", path,
                sqlite3_errmsg(db));
        goto done;
    }
    sqlite3_bind_text(st, 1, device_key, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            kc_sel *bigger = realloc(v, sizeof *v * (size_t)cap);
            if (!bigger) {
                fprintf(stderr, "ktrt_check: out of memory\n");
                goto done;
            }
            v = bigger;
        }
        kc_sel *x = &v[n++];
        memset(x, 0, sizeof *x);
        snprintf(x->key, sizeof x->key, "%s", (const char *)sqlite3_column_text(st, 0));
        snprintf(x->dtype, sizeof x->dtype, "%s", (const char *)sqlite3_column_text(st, 1));
        char kdt[16];
        if (sscanf(x->key, "gemm %15s n=%d k=%d m<=%d", kdt, &x->n, &x->k, &x->m) != 4) x->n = x->k = x->m = 0;
        snprintf(x->kernel, sizeof x->kernel, "%s", (const char *)sqlite3_column_text(st, 2));
        snprintf(x->source, sizeof x->source, "%s", (const char *)sqlite3_column_text(st, 3));
        if (x->n < 1 || x->k < 1 || x->m < 1) {
            fprintf(stderr, "ktrt_check: %s: selection \"%s\" has n=%d k=%d m=%d\n", path, x->key, x->n, x->k, x->m);
            goto done;
        }
    }
    if (step != SQLITE_DONE) {
        fprintf(stderr, "ktrt_check: %s: reading selections: %s\n", path, sqlite3_errmsg(db));
        goto done;
    }
    sqlite3_finalize(st);
    st = NULL;
    /* dtypes the law can serve: those of the ok dense GEMM kernels (reference kernels excluded). */
    q = "SELECT DISTINCT json_extract(params, '$.dtype') FROM kernel WHERE status = 'ok' "
        "AND code IS NOT NULL AND (',' || ops || ',') LIKE '%,gemm,%' ORDER BY 1";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK) {
        while (sqlite3_step(st) == SQLITE_ROW && *ndt < KT_REF_DTYPES) {
            const char *t = (const char *)sqlite3_column_text(st, 0);
            kt_ref_dtype dt;
            if (t && !kt_ref_dtype_parse(t, &dt))
                snprintf(dtypes[(*ndt)++], 8, "%s", t);
        }
    }
    if (!*ndt)
        snprintf(dtypes[(*ndt)++], 8, "bf16");
    rc = 0;
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    if (rc) {
        free(v);
        return -1;
    }
    *out = v;
    *count = n;
    return 0;
}

/* ---------------------------------------------------------------- one case on the device */

typedef struct kc_buf {
    void *a, *w, *c;                   /* device */
    uint16_t *ha, *hw, *hc;            /* host: inputs as uploaded, C as read back */
    size_t c_elems;                    /* guard + m*ldc + guard */
    int *rows, nrows;
    double *ref, *absdot;
} kc_buf;

typedef struct kc_result {
    int ok;
    ktrt_choice ch;
    kt_ref_check ck;
    int nrows;
    char detail[1024];
} kc_result;

static int kc_lda(const kc_case *c) { return c->k + c->pad; }
static int kc_ldw(const kc_case *c) { return c->k + 2 * c->pad; }
static int kc_ldc(const kc_case *c) { return c->n + c->pad; }

static void kc_release(ktb_backend *b, kc_buf *x)
{
    char ignored[256];
    ktb_free(b, x->a, ignored, sizeof ignored);
    ktb_free(b, x->w, ignored, sizeof ignored);
    ktb_free(b, x->c, ignored, sizeof ignored);
    free(x->ha);
    free(x->hw);
    free(x->hc);
    free(x->rows);
    free(x->ref);
    free(x->absdot);
    memset(x, 0, sizeof *x);
}

/* New random A (and W when with_w) from seed, uploaded, C poisoned, reference rows computed. */
static int kc_fill(ktb_backend *b, const kc_case *c, kc_buf *x, uint64_t seed, int with_w, char *err, size_t errlen)
{
    int lda = kc_lda(c), ldw = kc_ldw(c);
    uint64_t rng = seed;
    kt_ref_fill(c->dt, x->ha, (size_t)c->m, c->k, lda, &rng);
    if (with_w)
        kt_ref_fill(c->dt, x->hw, (size_t)c->n, c->k, ldw, &rng);
    if (ktb_copy_h2d(b, x->a, x->ha, (size_t)c->m * lda * 2, err, errlen) ||
        (with_w && ktb_copy_h2d(b, x->w, x->hw, (size_t)c->n * ldw * 2, err, errlen)) ||
        ktb_memset8(b, x->c, 0xFF, x->c_elems * 2, err, errlen))
        return -1;
    if (kt_ref_gemm_rows(c->dt, x->rows, x->nrows, c->n, c->k, x->ha, lda, x->hw, ldw, x->ref, x->absdot))
        return snprintf(err, errlen, "out of host memory for the reference"), -1;
    return 0;
}

static int kc_prepare(ktb_backend *b, const kc_case *c, kc_buf *x, uint64_t seed, char *err, size_t errlen)
{
    memset(x, 0, sizeof *x);
    int lda = kc_lda(c), ldw = kc_ldw(c), ldc = kc_ldc(c);
    long long macs = (long long)c->m * c->n * c->k;
    int want = macs <= KC_FULL_MACS ? c->m : (int)(KC_SAMPLE_MACS / ((long long)c->n * c->k));
    want = want < KC_MIN_ROWS ? KC_MIN_ROWS : want;
    x->c_elems = 2 * KC_GUARD + (size_t)c->m * ldc;
    x->ha = malloc((size_t)c->m * lda * 2);
    x->hw = malloc((size_t)c->n * ldw * 2);
    x->hc = malloc(x->c_elems * 2);
    x->rows = malloc(sizeof *x->rows * (size_t)(want < c->m ? want : c->m));
    if (!x->ha || !x->hw || !x->hc || !x->rows)
        return snprintf(err, errlen, "out of host memory"), -1;
    x->nrows = kt_ref_sample_rows(c->m, want, seed ^ 0x5EED, x->rows);
    x->ref = malloc(sizeof *x->ref * (size_t)x->nrows * c->n);
    x->absdot = malloc(sizeof *x->absdot * (size_t)x->nrows * c->n);
    if (!x->ref || !x->absdot)
        return snprintf(err, errlen, "out of host memory"), -1;
    if (ktb_alloc(b, (size_t)c->m * lda * 2, &x->a, err, errlen) ||
        ktb_alloc(b, (size_t)c->n * ldw * 2, &x->w, err, errlen) || ktb_alloc(b, x->c_elems * 2, &x->c, err, errlen))
        return -1;
    return kc_fill(b, c, x, seed, 1, err, errlen);
}

static void *kc_c0(const kc_buf *x) { return (char *)x->c + KC_GUARD * 2; }

/* Every ktrt_gemm call this test makes, by the path it reported (from any thread), to hold
 * ktrt_get_stats to at the end. */
static unsigned long long kc_calls[4];   /* exact, bucket, law, refused */

static int kc_launch(ktrt *rt, const kc_case *c, const kc_buf *x, void *stream, ktrt_choice *ch, char *err,
                     size_t errlen)
{
    ch->path[0] = 0;
    int rc = ktrt_gemm(rt, c->dtype, c->m, c->n, c->k, x->a, kc_lda(c), x->w, kc_ldw(c), kc_c0(x), kc_ldc(c), stream,
                       ch, err, errlen);
    if (rc != KT_EINVAL && ch->path[0]) {
        int i = !strcmp(ch->path, "exact") ? 0 : !strcmp(ch->path, "bucket") ? 1 : !strcmp(ch->path, "law") ? 2 : 3;
        __atomic_fetch_add(&kc_calls[i], 1ull, __ATOMIC_RELAXED);
    }
    return rc;
}


/* Reads C back (the stream must be synchronized) and judges it, with the path expectation. */
static void kc_judge(ktb_backend *b, const kc_case *c, kc_buf *x, kc_result *r)
{
    char what[256];
    if (ktb_copy_d2h(b, x->hc, x->c, x->c_elems * 2, r->detail, sizeof r->detail)) {
        r->ok = 0;
        return;
    }
    kt_ref_check_output(&r->ck, c->dt, x->hc, x->c_elems, KC_GUARD, c->m, c->n, c->k, kc_ldc(c), x->rows, x->nrows,
                        x->ref, x->absdot);
    r->nrows = x->nrows;
    kt_ref_check_describe(&r->ck, c->dt, what, sizeof what);
    r->ok = kt_ref_check_passed(&r->ck, c->dt);
    size_t used = strlen(r->detail);
    if (!r->ok)
        used += (size_t)snprintf(r->detail + used, sizeof r->detail - used, "%s", what);
    int path_ok = !c->expect_path[0] || !strcmp(c->expect_path, r->ch.path);
    int kernel_ok = !c->expect_kernel[0] || !strcmp(c->expect_kernel, r->ch.kernel);
    if ((!path_ok || !kernel_ok) && used < sizeof r->detail) {
        snprintf(r->detail + used, sizeof r->detail - used, " %s: expected %s%s%s (%s)", c->strict ? "FAILS" : "note",
                 c->expect_path, c->expect_kernel[0] ? " " : "", c->expect_kernel, r->ch.reason);
        if (c->strict)
            r->ok = 0;
    }
}

/* One case on stream: prepare, launch, synchronize, judge, release. */
static void kc_run(ktb_backend *b, ktrt *rt, void *stream, const kc_case *c, uint64_t seed, kc_result *r)
{
    kc_buf x;
    char err[600];
    memset(r, 0, sizeof *r);
    if (kc_prepare(b, c, &x, seed, err, sizeof err)) {
        snprintf(r->detail, sizeof r->detail, "setup: %s", err);
        goto done;
    }
    int rc = kc_launch(rt, c, &x, stream, &r->ch, err, sizeof err);
    if (rc != KT_OK) {
        snprintf(r->detail, sizeof r->detail, "%s: %s", rc == KT_ENOKERNEL ? "refused" : "ktrt_gemm", err);
        goto done;
    }
    if (ktb_sync(b, stream, err, sizeof err)) {
        snprintf(r->detail, sizeof r->detail, "after the launch: %s", err);
        goto done;
    }
    kc_judge(b, c, &x, r);
done:
    kc_release(b, &x);
}

/* ---------------------------------------------------------------- reporting */

typedef struct kc_tally {
    int cases, failed;
} kc_tally;

static void kc_report(kc_tally *t, const char *kind, const kc_case *c, const kc_result *r, uint64_t seed)
{
    char key[160], err[32];
    snprintf(key, sizeof key, "%s m=%d n=%d k=%d", c->dtype, c->m, c->n, c->k);
    if (c->pad)
        snprintf(key + strlen(key), sizeof key - strlen(key), " pad=%d", c->pad);
    if (isnan(r->ck.err) || r->nrows == 0)
        snprintf(err, sizeof err, "n/a");
    else
        snprintf(err, sizeof err, "%.2e", r->ck.err);
    printf("%-4s %-9s %-7s %-36s %-48s sk=%d err=%s rows=%d/%d seed=%llu%s%s\n", r->ok ? "ok" : "FAIL", kind,
           r->ch.path[0] ? r->ch.path : "-", key, r->ch.kernel[0] ? r->ch.kernel : "-", r->ch.splitk, err, r->nrows,
           c->m, (unsigned long long)seed, r->detail[0] ? " " : "", r->detail);
    fflush(stdout);
    t->cases++;
    t->failed += !r->ok;
}

/* ktrt_get_stats counts exactly the calls made, path by path. */
static void kc_stats(ktrt *rt, kc_tally *t)
{
    ktrt_stats st;
    int rc = ktrt_get_stats(rt, &st);
    int ok = rc == KT_OK && st.exact == kc_calls[0] && st.bucket == kc_calls[1] && st.law == kc_calls[2] &&
             st.refused == kc_calls[3];
    printf("%-4s stats     ktrt_get_stats exact=%llu bucket=%llu law=%llu refused=%llu; calls made %llu/%llu/%llu/%llu\n",
           ok ? "ok" : "FAIL", st.exact, st.bucket, st.law, st.refused, kc_calls[0], kc_calls[1], kc_calls[2],
           kc_calls[3]);
    t->cases++;
    t->failed += !ok;
}

static uint64_t kc_seed(uint64_t base, int index)
{
    uint64_t st = base ^ ((uint64_t)index * 0xD1B54A32D192ED03ull);
    return kt_rand_splitmix64(&st);
}

/* ---------------------------------------------------------------- capture */

/* ktrt_gemm on a capturing stream, then the graph replayed twice, each time on fresh A with C
 * poisoned first, so the replay (not the capture) is what wrote C. */
static void kc_capture(ktb_backend *b, ktrt *rt, void *stream, const kc_case *c, uint64_t seed, const char *kind,
                       kc_tally *t)
{
    kc_buf x;
    kc_result r;
    char err[600];
    void *exec = NULL;
    memset(&r, 0, sizeof r);
    if (kc_prepare(b, c, &x, seed, err, sizeof err)) {
        snprintf(r.detail, sizeof r.detail, "setup: %s", err);
        kc_report(t, kind, c, &r, seed);
        kc_release(b, &x);
        return;
    }
    if (ktb_graph_begin_capture(b, stream, err, sizeof err)) {
        snprintf(r.detail, sizeof r.detail, "begin capture: %s", err);
        goto out;
    }
    int rc = kc_launch(rt, c, &x, stream, &r.ch, err, sizeof err);
    char end_err[512];
    int end_rc = ktb_graph_end_capture(b, stream, &exec, end_err, sizeof end_err);
    if (rc != KT_OK) {
        snprintf(r.detail, sizeof r.detail, "ktrt_gemm under capture: %s", err);
        goto out;
    }
    if (end_rc) {
        snprintf(r.detail, sizeof r.detail, "end capture (ktrt_gemm did something a graph cannot hold): %s", end_err);
        goto out;
    }
    for (int replay = 0; replay < 2; replay++) {
        uint64_t s = kc_seed(seed, replay + 1);
        if (kc_fill(b, c, &x, s, 0, err, sizeof err) || ktb_graph_launch(b, exec, stream, err, sizeof err) ||
            ktb_sync(b, stream, err, sizeof err)) {
            snprintf(r.detail, sizeof r.detail, "replay %d: %s", replay + 1, err);
            goto out;
        }
        r.detail[0] = 0;
        kc_judge(b, c, &x, &r);
        if (!r.ok) {
            size_t used = strlen(r.detail);
            snprintf(r.detail + used, sizeof r.detail - used, " (replay %d)", replay + 1);
            goto out;
        }
    }
out:
    if (exec)
        ktb_graph_destroy(b, exec, err, sizeof err);
    kc_report(t, kind, c, &r, seed);
    kc_release(b, &x);
}

/* ---------------------------------------------------------------- two threads */

typedef struct kc_thread {
    int id;
    ktrt *rt;
    const kc_case *cases;
    int ncases;
    const ktrt_choice *solo;           /* the single-threaded choice of each case */
    uint64_t seed;
    pthread_barrier_t *start;
    kc_result results[KC_THREAD_SHAPES * KC_THREAD_REPEATS];
    uint64_t seeds[KC_THREAD_SHAPES * KC_THREAD_REPEATS];
    char setup_err[1024];
} kc_thread;

/* Its own backend (a backend is one caller at a time) and stream; every launch enqueued back to
 * back after the barrier, one synchronize, then every output judged. */
static void *kc_thread_main(void *arg)
{
    kc_thread *th = arg;
    ktb_backend *b = NULL;
    void *stream = NULL;
    kc_buf bufs[KC_THREAD_SHAPES * KC_THREAD_REPEATS];
    int nb = th->ncases * KC_THREAD_REPEATS, prepared = 0, waited = 0;
    char err[600];
    memset(bufs, 0, sizeof bufs);
    if (ktb_open("cuda", 0, &b, err, sizeof err) || ktb_stream_create(b, &stream, err, sizeof err)) {
        snprintf(th->setup_err, sizeof th->setup_err, "thread %d: %s", th->id, err);
        goto out;
    }
    for (; prepared < nb; prepared++) {
        th->seeds[prepared] = kc_seed(th->seed, 1000 * th->id + prepared);
        if (kc_prepare(b, &th->cases[prepared % th->ncases], &bufs[prepared], th->seeds[prepared], err, sizeof err)) {
            snprintf(th->setup_err, sizeof th->setup_err, "thread %d: setup: %s", th->id, err);
            prepared++;
            goto out;
        }
    }
    pthread_barrier_wait(th->start);
    waited = 1;
    for (int i = 0; i < nb; i++) {
        const kc_case *c = &th->cases[i % th->ncases];
        int rc = kc_launch(th->rt, c, &bufs[i], stream, &th->results[i].ch, err, sizeof err);
        if (rc != KT_OK)
            snprintf(th->results[i].detail, sizeof th->results[i].detail, "ktrt_gemm: %s", err);
    }
    if (ktb_sync(b, stream, err, sizeof err)) {
        snprintf(th->setup_err, sizeof th->setup_err, "thread %d: synchronize: %s", th->id, err);
        goto out;
    }
    for (int i = 0; i < nb; i++) {
        kc_result *r = &th->results[i];
        const kc_case *c = &th->cases[i % th->ncases];
        if (r->detail[0])
            continue;   /* the launch failed */
        kc_judge(b, c, &bufs[i], r);
        const ktrt_choice *solo = &th->solo[i % th->ncases];
        if (strcmp(solo->kernel, r->ch.kernel) || solo->splitk != r->ch.splitk) {
            size_t used = strlen(r->detail);
            snprintf(r->detail + used, sizeof r->detail - used, " chose %s sk=%d, alone %s sk=%d", r->ch.kernel,
                     r->ch.splitk, solo->kernel, solo->splitk);
            r->ok = 0;
        }
    }
out:
    if (!waited)
        pthread_barrier_wait(th->start);   /* the other thread must not wait forever */
    for (int i = 0; i < prepared; i++)
        kc_release(b, &bufs[i]);
    if (b) {
        ktb_stream_destroy(b, stream, err, sizeof err);
        ktb_close(b);
    }
    return NULL;
}

static int kc_sk_of(const char *kernel)
{
    const char *p = strstr(kernel, "_sk");
    return p ? atoi(p + 3) : 1;
}

/* The thread list: the cheapest selections with the most split-K segments, and a law shape. */
static int kc_thread_cases(const kc_list *plan, kc_case *out)
{
    int n = 0;
    int used[KC_THREAD_SHAPES] = { 0 };
    for (int slot = 0; slot < KC_THREAD_SHAPES - 1; slot++) {
        int best = -1;
        for (int i = 0; i < plan->n; i++) {
            const kc_case *c = &plan->v[i];
            int dup = 0;
            for (int j = 0; j < n; j++)
                dup |= used[j] == i;
            if (dup || strcmp(c->kind, "selection") || (long long)c->m * c->n * c->k > (1ll << 31))
                continue;
            if (best < 0 || kc_sk_of(c->expect_kernel) > kc_sk_of(plan->v[best].expect_kernel) ||
                (kc_sk_of(c->expect_kernel) == kc_sk_of(plan->v[best].expect_kernel) && c->m < plan->v[best].m))
                best = i;
        }
        if (best < 0)
            break;
        used[n] = best;
        out[n++] = plan->v[best];
    }
    for (int i = 0; i < plan->n && n < KC_THREAD_SHAPES; i++)
        if (!strcmp(plan->v[i].kind, "law") && (long long)plan->v[i].m * plan->v[i].n * plan->v[i].k <= (1ll << 31)) {
            out[n++] = plan->v[i];
            break;
        }
    return n;
}

static void kc_threads(ktb_backend *b, ktrt *rt, const kc_list *plan, uint64_t seed, kc_tally *t)
{
    kc_case cases[KC_THREAD_SHAPES];
    ktrt_choice solo[KC_THREAD_SHAPES];
    char err[600];
    int nc = kc_thread_cases(plan, cases);
    (void)b;
    memset(solo, 0, sizeof solo);
    for (int i = 0; i < nc; i++) {
        cases[i].kind = "thread";
        if (ktrt_choose_gemm(rt, cases[i].dtype, cases[i].m, cases[i].n, cases[i].k, &solo[i], err, sizeof err) != KT_OK)
            snprintf(solo[i].kernel, sizeof solo[i].kernel, "(refused: %.100s)", err);
    }
    if (!nc) {
        printf("ktrt_check: threads: no case small enough to run\n");
        return;
    }
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, 2);
    kc_thread th[2];
    pthread_t tid[2];
    int started[2] = { 0, 0 };
    for (int i = 0; i < 2; i++) {
        memset(&th[i], 0, sizeof th[i]);
        th[i] = (kc_thread){ .id = i, .rt = rt, .cases = cases, .ncases = nc, .solo = solo, .seed = seed,
                             .start = &start };
    }
    for (int i = 0; i < 2; i++)
        started[i] = pthread_create(&tid[i], NULL, kc_thread_main, &th[i]) == 0;
    if (!started[0] || !started[1]) {
        /* One thread alone would wait at the barrier forever: release it with a second waiter. */
        if (started[0] != started[1])
            pthread_barrier_wait(&start);
        fprintf(stderr, "ktrt_check: pthread_create failed\n");
    }
    for (int i = 0; i < 2; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < 2; i++) {
        char kind[16];
        snprintf(kind, sizeof kind, "thread%d", i);
        for (int j = 0; j < nc * KC_THREAD_REPEATS; j++) {
            kc_result *r = &th[i].results[j];
            if (!started[i] || th[i].setup_err[0]) {
                r->ok = 0;
                snprintf(r->detail, sizeof r->detail, "%s", started[i] ? th[i].setup_err : "thread not started");
            }
            kc_report(t, kind, &cases[j % nc], r, th[i].seeds[j]);
        }
    }
}

/* ---------------------------------------------------------------- main */

static void kc_usage(FILE *to)
{
    fprintf(to, "usage: ktrt_check --db FILE [--seed S] [--max-selections N]\n"
                "       ktrt_check --db FILE --plan [--device-key KEY]   (no GPU: list the cases)\n"
                "exit: 0 all passed, 1 a failure or bad input, 2 no device\n");
}

int main(int argc, char **argv)
{
    const char *db = NULL, *plan_key = NULL;
    unsigned long long seed = (unsigned long long)time(NULL);
    int plan_only = 0, max_sel = -1, status = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--plan")) {
            plan_only = 1;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            kc_usage(stdout);
            return 0;
        } else if (!strcmp(a, "--db") && v) {
            db = argv[++i];
        } else if (!strcmp(a, "--device-key") && v) {
            plan_key = argv[++i];
        } else if (!strcmp(a, "--seed") && v) {
            errno = 0;
            seed = strtoull(argv[++i], &end, 0);
            if (errno || *end || *v == '-') {
                fprintf(stderr, "ktrt_check: --seed \"%s\": want a non-negative integer\n", v);
                return 1;
            }
        } else if (!strcmp(a, "--max-selections") && v) {
            errno = 0;
            max_sel = (int)strtol(argv[++i], &end, 10);
            if (errno || *end || max_sel < 0) {
                fprintf(stderr, "ktrt_check: --max-selections \"%s\": want a non-negative integer\n", v);
                return 1;
            }
        } else {
            kc_usage(stderr);
            return 1;
        }
    }
    if (!db) {
        kc_usage(stderr);
        return 1;
    }

    ktrt *rt = NULL;
    ktb_backend *b = NULL;
    void *stream = NULL;
    kc_sel *sels = NULL;
    kc_list plan = { 0 };
    char dtypes[KT_REF_DTYPES][8], err[1024];
    int ns = 0, ndt = 0;
    const char *key = plan_key;

    if (!plan_only) {
        /* The device first: without one there is nothing to check, and the message says so. */
        ktrt_options o = { 0 };
        o.db_path = db;
        o.no_default_layers = 1;
        int rc = ktrt_open(&o, &rt, err, sizeof err);
        if (rc != KT_OK) {
            int nodev = rc == KT_ENODEVICE;
            fprintf(stderr, "ktrt_check: %s%s\n", nodev && !strstr(err, "no device") ? "no device: " : "", err);
            return nodev ? 2 : 1;
        }
        if (ktb_open("cuda", 0, &b, err, sizeof err) || ktb_stream_create(b, &stream, err, sizeof err)) {
            fprintf(stderr, "ktrt_check: %s\n", err);
            status = strstr(err, "no device") ? 2 : 1;
            goto done;
        }
        key = ktrt_device_key(rt);
    }
    if (kc_read_db(db, key, &sels, &ns, dtypes, &ndt))
        goto done;
    if (max_sel >= 0 && ns > max_sel)
        ns = max_sel;
    if (kc_plan(&plan, sels, ns, dtypes, ndt)) {
        fprintf(stderr, "ktrt_check: out of memory\n");
        goto done;
    }
    printf("ktrt_check: %s, device key %s: %d selections, %d cases planned (+ capture, threads), seed %llu\n", db,
           key ? key : "(any)", ns, plan.n, seed);
    if (!ns)
        printf("ktrt_check: note: no selection for this device in %s: only the law path is exercised\n", db);
    if (plan_only) {
        for (int i = 0; i < plan.n; i++) {
            const kc_case *c = &plan.v[i];
            printf("plan %-9s %s m=%d n=%d k=%d pad=%d expect %s%s%s%s\n", c->kind, c->dtype, c->m, c->n, c->k, c->pad,
                   c->expect_path, c->expect_kernel[0] ? " " : "", c->expect_kernel, c->strict ? " (strict)" : "");
        }
        status = 0;
        goto done;
    }

    kc_tally t = { 0, 0 };
    int ci = 0;
    /* Capture first, while no code object is loaded: the first launch of a kernel under capture. */
    if (plan.n) {
        kc_case cap[KC_THREAD_SHAPES];   /* the first thread case: a cheap split-K selection */
        if (!kc_thread_cases(&plan, cap))
            cap[0] = plan.v[0];
        kc_capture(b, rt, stream, &cap[0], kc_seed(seed, ci++), "capture", &t);
        for (int i = 0; i < plan.n; i++, ci++) {
            kc_result r;
            uint64_t s = kc_seed(seed, ci);
            kc_run(b, rt, stream, &plan.v[i], s, &r);
            kc_report(&t, plan.v[i].kind, &plan.v[i], &r, s);
        }
        kc_capture(b, rt, stream, &cap[0], kc_seed(seed, ci++), "capture2", &t);
        kc_threads(b, rt, &plan, kc_seed(seed, ci++), &t);
        kc_stats(rt, &t);
    }
    printf("ktrt_check: %d cases, %d failed\n", t.cases, t.failed);
    status = t.failed || !t.cases ? 1 : 0;
done:
    free(plan.v);
    free(sels);
    if (b) {
        ktb_stream_destroy(b, stream, err, sizeof err);
        ktb_close(b);
    }
    ktrt_close(rt);
    return status;
}
