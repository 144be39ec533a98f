/* gemm.c: bench_gemm, the runtime-dispatched GEMM (libktrt's ktrt_gemm over a tuned .ktdb) against
 * cuBLAS on the same card, in one process, on the same buffers, under the same protocol.
 *
 *   bench_gemm --db FILE [--models DIR] [--tp 1,4] [--m 1,4,16,64,256,1024,4096] [--dtype bf16]
 *              [--tsv FILE] [--rounds N] [--read-cubin FILE] [--seed S]
 *
 * For every distinct per-rank (n, k) of every DIR/<model>/config.json at each tp (bench/shapes.c)
 * and every M:
 *  1. verify: ktrt_gemm and cublasGemmEx write NaN-poisoned outputs (guard bands around them) from
 *     the same random inputs (never zeros); each is checked against a float64 CPU reference on
 *     sampled rows (tests/device/gemm_ref.h: the device checks' bounds), every element must be
 *     written, and the two must agree with each other over the whole matrix. A mismatch prints a
 *     FAIL line, the row is not timed, and the run exits non-zero.
 *  2. time: ktrt, cuBLAS and ktrt again (the identical-code control, whose spread is the noise
 *     floor of that row), each captured in a graph, warmed up together on the wall clock, then
 *     timed with events in interleaved rounds (tuner/timing.h). For M <= 64 (decode, memory
 *     bound) each replay rotates through enough buffer sets to stream more than twice the L2, so
 *     no launch finds its weights in cache; larger M reuse one set as prefill does.
 *  3. report: path (exact/bucket/law) and kernel, median us of both, ratio cuBLAS/ktrt (> 1: ktrt
 *     faster), TFLOP/s, GB/s of the compulsory bytes 2*(MK + NK + MN), and that rate as a share
 *     of the read and copy ceilings measured at the start of the same run (bench/ceiling.c: both
 *     kernels of --read-cubin; a ceiling the cubin cannot give is "unavailable" and its column "-").
 * A summary ends the table: the smallest ratio at M <= 16, the range at M >= 1024, the card.
 *
 * Exit status: 0 every row verified and timed; 1 a mismatch, a refusal, an error, or bad
 * arguments; 2 no device ("bench_gemm: no device: ..."). */
#include "backend.h"
#include "ktrt.h"
#include "timing.h"
#include "ceiling.h"
#include "cublas_dl.h"
#include "shapes.h"
#include "tests/device/gemm_ref.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BG_MAX_LIST 32
#define BG_MAX_SETS 64                 /* buffer sets a cold replay may rotate through */
#define BG_GUARD 128                   /* poison elements before and after a verification output */
#define BG_CHECK_ROWS 4                /* rows per (shape, M) checked against float64 */
#define BG_CUBLAS_WS (32u << 20)       /* cuBLAS's recommended workspace on Hopper */
#define BG_REPLAY_US 200.0             /* aim for replays this long: launch gaps stay small */
#define BG_MAX_LAUNCHES 256

typedef struct bg_opts {
    const char *db, *models, *tsv, *read_cubin, *dtype;
    int tps[BG_MAX_LIST], ntp;
    int ms[BG_MAX_LIST], nm;
    int rounds;
    unsigned long long seed;
} bg_opts;

/* The device side of the run: everything opened once. */
typedef struct bg_dev {
    ktb_backend *b;
    ktb_device_info info;
    void *stream;
    ktrt *rt;
    bcl_cublas cb;
    void *cb_ws;
    bce_ceilings ceil;
    kt_ref_dtype dt;
    const char *dtype;
} bg_dev;

/* One (tp, n, k): device buffer sets, the host inputs, and the float64 reference rows. */
typedef struct bg_shape {
    const bsh_shape *s;
    int mmax, mcold;                   /* largest M; largest M <= 64 (0: none) */
    int nsets;                         /* buffer sets allocated */
    void *a[BG_MAX_SETS], *w[BG_MAX_SETS], *c[BG_MAX_SETS];
    void *vk, *vb;                     /* verification outputs (ktrt, cuBLAS), BG_GUARD each side */
    size_t vbytes;
    uint16_t *ha, *hw;                 /* host inputs: mmax x k, n x k */
    uint16_t *hk, *hb;                 /* read-back verification outputs */
    int *rows, nrows;                  /* union of the rows every M checks, ascending */
    double *ref, *absdot;              /* [nrows][n] */
} bg_shape;

typedef struct bg_row {
    const bsh_shape *s;
    int m, sets, launches;
    ktrt_choice ch;
    int timed_kt, timed_cb;
    tm_result kt, ctl, cb;
    double err_kt, err_cb, err_x;      /* vs float64 (sampled rows), vs float64, ktrt vs cuBLAS */
    char status[12];                   /* ok | wrong | refused | error */
    char note[1280];
} bg_row;

typedef struct bg_call {
    bg_dev *d;
    bg_shape *sh;
    int cublas;                        /* 0: ktrt_gemm, 1: cublasGemmEx */
    int m, sets;
} bg_call;

/* ---------------------------------------------------------------- arguments */

static void bg_usage(FILE *to)
{
    fprintf(to, "usage: bench_gemm --db FILE [--models DIR] [--tp 1,4] [--m 1,4,16,64,256,1024,4096]\n"
                "                  [--dtype bf16|fp16] [--tsv FILE] [--rounds N] [--read-cubin FILE] [--seed S]\n"
                "exit: 0 all rows verified and timed, 1 a mismatch/refusal/error, 2 no device\n");
}

/* "1,4,16" -> ints in [lo, hi]; -1 with a message naming the flag on anything else. */
static int bg_parse_list(const char *flag, const char *text, int lo, int hi, int *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < lo || v > hi || (*end && *end != ',') || n == max) {
            fprintf(stderr, "bench_gemm: %s \"%s\": want up to %d comma-separated integers in %d..%d\n", flag, text,
                    max, lo, hi);
            return -1;
        }
        out[n++] = (int)v;
        p = *end ? end + 1 : end;
    }
    if (!n) {
        fprintf(stderr, "bench_gemm: %s is empty\n", flag);
        return -1;
    }
    return n;
}

static int bg_parse_args(int argc, char **argv, bg_opts *o)
{
    static char cubin_default[1024];
    memset(o, 0, sizeof *o);
    o->models = "models";
    o->dtype = "bf16";
    o->rounds = 20;
    o->seed = 1;
    o->ntp = bg_parse_list("--tp", "1,4", 1, 64, o->tps, BG_MAX_LIST);
    o->nm = bg_parse_list("--m", "1,4,16,64,256,1024,4096", 1, 65536, o->ms, BG_MAX_LIST);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            bg_usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "bench_gemm: %s needs a value\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--db")) o->db = v;
        else if (!strcmp(a, "--models")) o->models = v;
        else if (!strcmp(a, "--tsv")) o->tsv = v;
        else if (!strcmp(a, "--read-cubin")) o->read_cubin = v;
        else if (!strcmp(a, "--dtype")) o->dtype = v;
        else if (!strcmp(a, "--tp")) { if ((o->ntp = bg_parse_list(a, v, 1, 64, o->tps, BG_MAX_LIST)) < 0) return -1; }
        else if (!strcmp(a, "--m")) { if ((o->nm = bg_parse_list(a, v, 1, 65536, o->ms, BG_MAX_LIST)) < 0) return -1; }
        else if (!strcmp(a, "--rounds")) {
            int r[1];
            if (bg_parse_list(a, v, 3, 10000, r, 1) < 0) return -1;
            o->rounds = r[0];
        } else if (!strcmp(a, "--seed")) {
            char *end;
            errno = 0;
            o->seed = strtoull(v, &end, 0);
            if (errno || *end || !*v || *v == '-') {
                fprintf(stderr, "bench_gemm: --seed \"%s\": want a non-negative integer\n", v);
                return -1;
            }
        } else {
            fprintf(stderr, "bench_gemm: unknown argument \"%s\"\n", a);
            bg_usage(stderr);
            return -1;
        }
    }
    if (!o->db) {
        fprintf(stderr, "bench_gemm: --db FILE is required (a tuned .ktdb)\n");
        bg_usage(stderr);
        return -1;
    }
    kt_ref_dtype dt;
    if (kt_ref_dtype_parse(o->dtype, &dt)) {
        fprintf(stderr, "bench_gemm: --dtype \"%s\": want bf16 or fp16\n", o->dtype);
        return -1;
    }
    if (!o->read_cubin) {
        /* Beside the binary: out/bin/bench_gemm -> out/bench/read.cubin (the Makefile's), else
         * out/device/read.cubin (where pack.sh puts it, as out/bench is not carried). */
        char self[1024];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        const char *dir = ".";
        if (n > 0) {
            self[n] = 0;
            dir = dirname(self);
        }
        snprintf(cubin_default, sizeof cubin_default, "%s/../bench/read.cubin", dir);
        if (access(cubin_default, R_OK) != 0)
            snprintf(cubin_default, sizeof cubin_default, "%s/../device/read.cubin", dir);
        o->read_cubin = cubin_default;
    }
    return 0;
}

/* ---------------------------------------------------------------- device setup */

/* Returns 0, 1 (an error, printed) or 2 (no device, printed). */
static int bg_open_device(const bg_opts *o, bg_dev *d)
{
    char err[1024];
    memset(d, 0, sizeof *d);
    d->dtype = o->dtype;
    kt_ref_dtype_parse(o->dtype, &d->dt);
    if (ktb_open("cuda", 0, &d->b, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: %s\n", err);   /* "cuda: no device: ..." where there is none */
        return strstr(err, "no device") ? 2 : 1;
    }
    if (ktb_info(d->b, &d->info, err, sizeof err) || ktb_stream_create(d->b, &d->stream, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: %s\n", err);
        return 1;
    }
    ktrt_options ro = { 0 };
    ro.db_path = o->db;
    ro.no_default_layers = 1;   /* this database alone: the bench measures what it selects */
    int rc = ktrt_open(&ro, &d->rt, err, sizeof err);
    if (rc != KT_OK) {
        fprintf(stderr, "bench_gemm: %s%s\n", rc == KT_ENODEVICE && !strstr(err, "no device") ? "no device: " : "", err);
        return rc == KT_ENODEVICE ? 2 : 1;
    }
    if (ktb_alloc(d->b, BG_CUBLAS_WS, &d->cb_ws, err, sizeof err) ||
        bcl_open(&d->cb, d->stream, d->cb_ws, BG_CUBLAS_WS, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: %s\n", err);
        return 1;
    }
    return 0;
}

static void bg_close_device(bg_dev *d)
{
    char ignored[256];
    bcl_close(&d->cb);
    ktrt_close(d->rt);
    if (d->b) {
        ktb_free(d->b, d->cb_ws, ignored, sizeof ignored);
        ktb_stream_destroy(d->b, d->stream, ignored, sizeof ignored);
        ktb_close(d->b);
    }
    memset(d, 0, sizeof *d);
}

/* ---------------------------------------------------------------- per shape */

static long long bg_bytes(int m, int n, int k)
{
    return 2ll * ((long long)m * k + (long long)n * k + (long long)m * n);
}

/* Buffer sets for M: cold (M <= 64) rotates through enough to stream over twice the L2. */
static int bg_sets_for(const bg_dev *d, int m, int n, int k)
{
    return m <= 64 ? tm_cold_sets(d->info.l2_bytes, bg_bytes(m, n, k), BG_MAX_SETS) : 1;
}

static void bg_shape_free(bg_dev *d, bg_shape *sh)
{
    char ignored[256];
    for (int i = 0; i < BG_MAX_SETS; i++) {
        ktb_free(d->b, sh->a[i], ignored, sizeof ignored);
        ktb_free(d->b, sh->w[i], ignored, sizeof ignored);
        ktb_free(d->b, sh->c[i], ignored, sizeof ignored);
    }
    ktb_free(d->b, sh->vk, ignored, sizeof ignored);
    ktb_free(d->b, sh->vb, ignored, sizeof ignored);
    free(sh->ha);
    free(sh->hw);
    free(sh->hk);
    free(sh->hb);
    free(sh->rows);
    free(sh->ref);
    free(sh->absdot);
    memset(sh, 0, sizeof *sh);
}

static int bg_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static uint64_t bg_mix(uint64_t seed, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t st = seed ^ (a * 0x9E3779B97F4A7C15ull) ^ (b << 21) ^ (c << 42);
    return kt_rand_splitmix64(&st);
}

/* Sample rows of M (a deterministic function of the seed, the shape and M). */
static int bg_rows_for(const bg_opts *o, const bsh_shape *s, int m, int *rows)
{
    return kt_ref_sample_rows(m, BG_CHECK_ROWS, bg_mix(o->seed, (uint64_t)s->n, (uint64_t)s->k, (uint64_t)m), rows);
}

/* Host inputs, device sets (same inputs uploaded to each: a set differs by address, which is what
 * the cache sees), the verification outputs, and the float64 reference of every row any M checks.
 * 0, or -1 with err. */
static int bg_shape_make(const bg_opts *o, bg_dev *d, const bsh_shape *s, bg_shape *sh, char *err, size_t errlen)
{
    memset(sh, 0, sizeof *sh);
    sh->s = s;
    int n = s->n, k = s->k;
    for (int i = 0; i < o->nm; i++) {
        int m = o->ms[i], sets = bg_sets_for(d, m, n, k);
        sh->mmax = m > sh->mmax ? m : sh->mmax;
        if (m <= 64 && m > sh->mcold)
            sh->mcold = m;
        sh->nsets = sets > sh->nsets ? sets : sh->nsets;
    }
    size_t na = (size_t)sh->mmax * k, nw = (size_t)n * k, nc = (size_t)sh->mmax * n;
    sh->ha = malloc(na * 2);
    sh->hw = malloc(nw * 2);
    sh->vbytes = (nc + 2 * BG_GUARD) * 2;
    sh->hk = malloc(sh->vbytes);
    sh->hb = malloc(sh->vbytes);
    if (!sh->ha || !sh->hw || !sh->hk || !sh->hb)
        return snprintf(err, errlen, "out of host memory for n=%d k=%d m=%d", n, k, sh->mmax), -1;
    uint64_t rng = bg_mix(o->seed, (uint64_t)s->tp, (uint64_t)n, (uint64_t)k);
    kt_ref_fill(d->dt, sh->ha, (size_t)sh->mmax, k, k, &rng);
    kt_ref_fill(d->dt, sh->hw, (size_t)n, k, k, &rng);

    for (int i = 0; i < sh->nsets; i++) {
        /* Set 0 serves every M; the others only the cold ones (M <= 64). */
        size_t rows = i == 0 ? (size_t)sh->mmax : (size_t)sh->mcold;
        if (ktb_alloc(d->b, nw * 2, &sh->w[i], err, errlen) || ktb_alloc(d->b, rows * k * 2, &sh->a[i], err, errlen) ||
            ktb_alloc(d->b, rows * n * 2, &sh->c[i], err, errlen) ||
            ktb_copy_h2d(d->b, sh->w[i], sh->hw, nw * 2, err, errlen) ||
            ktb_copy_h2d(d->b, sh->a[i], sh->ha, rows * k * 2, err, errlen))
            return -1;
    }
    if (ktb_alloc(d->b, sh->vbytes, &sh->vk, err, errlen) || ktb_alloc(d->b, sh->vbytes, &sh->vb, err, errlen))
        return -1;

    /* The union of the rows every M samples, so W is walked once per shape on the CPU. */
    sh->rows = malloc(sizeof *sh->rows * (size_t)o->nm * BG_CHECK_ROWS);
    if (!sh->rows)
        return snprintf(err, errlen, "out of host memory"), -1;
    for (int i = 0; i < o->nm; i++)
        sh->nrows += bg_rows_for(o, s, o->ms[i], sh->rows + sh->nrows);
    qsort(sh->rows, (size_t)sh->nrows, sizeof *sh->rows, bg_cmp_int);
    int u = 0;
    for (int i = 0; i < sh->nrows; i++)
        if (!u || sh->rows[i] != sh->rows[u - 1])
            sh->rows[u++] = sh->rows[i];
    sh->nrows = u;
    sh->ref = malloc(sizeof *sh->ref * (size_t)u * n);
    sh->absdot = malloc(sizeof *sh->absdot * (size_t)u * n);
    if (!sh->ref || !sh->absdot ||
        kt_ref_gemm_rows(d->dt, sh->rows, u, n, k, sh->ha, k, sh->hw, k, sh->ref, sh->absdot))
        return snprintf(err, errlen, "out of host memory for the reference"), -1;
    return 0;
}

/* ---------------------------------------------------------------- verify one (shape, M) */

/* The reference rows of M, copied out of the shape's union. Caller frees the three arrays. */
static int bg_ref_for(const bg_opts *o, const bg_shape *sh, int m, int **rows, double **ref, double **absdot)
{
    int n = sh->s->n;
    *rows = malloc(sizeof **rows * BG_CHECK_ROWS);
    *ref = malloc(sizeof **ref * BG_CHECK_ROWS * (size_t)n);
    *absdot = malloc(sizeof **absdot * BG_CHECK_ROWS * (size_t)n);
    if (!*rows || !*ref || !*absdot)
        return -1;
    int nr = bg_rows_for(o, sh->s, m, *rows);
    for (int r = 0; r < nr; r++) {
        int *hit = bsearch(&(*rows)[r], sh->rows, (size_t)sh->nrows, sizeof *sh->rows, bg_cmp_int);
        size_t u = (size_t)(hit - sh->rows);
        memcpy(*ref + (size_t)r * n, sh->ref + u * n, sizeof **ref * (size_t)n);
        memcpy(*absdot + (size_t)r * n, sh->absdot + u * n, sizeof **absdot * (size_t)n);
    }
    return nr;
}

/* Runs both once on set 0 into poisoned outputs and judges them. Sets row->status to "ok",
 * "wrong", "refused" or "error"; returns 0 when ktrt's output may be timed. */
static int bg_verify(const bg_opts *o, bg_dev *d, bg_shape *sh, bg_row *row)
{
    int m = row->m, n = sh->s->n, k = sh->s->k, rc = -1;
    char err[1024];
    int *rows = NULL;
    double *ref = NULL, *absdot = NULL;
    uint16_t *gk = (uint16_t *)((char *)sh->vk + BG_GUARD * 2), *gb = (uint16_t *)((char *)sh->vb + BG_GUARD * 2);
    size_t vbytes = ((size_t)m * n + 2 * BG_GUARD) * 2;

    snprintf(row->status, sizeof row->status, "error");
    if (ktb_memset8(d->b, sh->vk, 0xFF, vbytes, err, sizeof err) ||
        ktb_memset8(d->b, sh->vb, 0xFF, vbytes, err, sizeof err)) {
        snprintf(row->note, sizeof row->note, "%s", err);
        return -1;
    }
    int krc = ktrt_gemm(d->rt, d->dtype, m, n, k, sh->a[0], k, sh->w[0], k, gk, n, d->stream, &row->ch, err, sizeof err);
    if (krc == KT_ENOKERNEL) {
        snprintf(row->status, sizeof row->status, "refused");
        snprintf(row->note, sizeof row->note, "ktrt refused: %s", row->ch.reason[0] ? row->ch.reason : err);
    } else if (krc != KT_OK) {
        snprintf(row->note, sizeof row->note, "ktrt_gemm: %s", err);
        return -1;
    }
    if (bcl_gemm(&d->cb, d->dt == KT_REF_BF16, m, n, k, sh->a[0], k, sh->w[0], k, gb, n, err, sizeof err) ||
        ktb_sync(d->b, d->stream, err, sizeof err) ||
        ktb_copy_d2h(d->b, sh->hk, sh->vk, vbytes, err, sizeof err) ||
        ktb_copy_d2h(d->b, sh->hb, sh->vb, vbytes, err, sizeof err)) {
        snprintf(row->status, sizeof row->status, "error");
        snprintf(row->note, sizeof row->note, "%s", err);
        return -1;
    }
    int nr = bg_ref_for(o, sh, m, &rows, &ref, &absdot);
    if (nr < 0) {
        snprintf(row->note, sizeof row->note, "out of host memory");
        goto done;
    }
    kt_ref_check ckk, ckb;
    char whatk[256] = "", whatb[256] = "";
    kt_ref_check_output(&ckb, d->dt, sh->hb, (size_t)m * n + 2 * BG_GUARD, BG_GUARD, m, n, k, n, rows, nr, ref, absdot);
    kt_ref_check_describe(&ckb, d->dt, whatb, sizeof whatb);
    row->err_cb = ckb.err;
    int cb_ok = kt_ref_check_passed(&ckb, d->dt);
    if (krc == KT_ENOKERNEL) {
        if (!cb_ok) {
            snprintf(row->status, sizeof row->status, "wrong");
            snprintf(row->note + strlen(row->note), sizeof row->note - strlen(row->note), "; cuBLAS:%s", whatb);
        }
        goto done;   /* cuBLAS alone is still timed when it is right */
    }
    kt_ref_check_output(&ckk, d->dt, sh->hk, (size_t)m * n + 2 * BG_GUARD, BG_GUARD, m, n, k, n, rows, nr, ref, absdot);
    kt_ref_check_describe(&ckk, d->dt, whatk, sizeof whatk);
    row->err_kt = ckk.err;

    /* ktrt against cuBLAS over every element: each is within the bound of the reference, so the
     * two are within twice it of each other. */
    double sq = 0, bsq = 0;
    const uint16_t *pk = sh->hk + BG_GUARD, *pb = sh->hb + BG_GUARD;
    for (size_t i = 0; i < (size_t)m * n; i++) {
        double x = kt_ref_from_dtype(d->dt, pk[i]), y = kt_ref_from_dtype(d->dt, pb[i]);
        if (isfinite(x) && isfinite(y)) {
            sq += (x - y) * (x - y);
            bsq += y * y;
        }
    }
    row->err_x = bsq > 0 ? sqrt(sq / bsq) : sqrt(sq);
    int x_ok = !ckk.nonfinite && !ckb.nonfinite && row->err_x <= 2 * kt_ref_norm_bound(d->dt);
    int kt_ok = kt_ref_check_passed(&ckk, d->dt);
    if (kt_ok && cb_ok && x_ok) {
        snprintf(row->status, sizeof row->status, "ok");
        rc = 0;
    } else {
        snprintf(row->status, sizeof row->status, "wrong");
        snprintf(row->note, sizeof row->note, "ktrt(%s)%s; cuBLAS%s; ktrt-vs-cuBLAS %.2e%s", row->ch.kernel,
                 kt_ok ? " ok" : whatk, cb_ok ? " ok" : whatb, row->err_x, x_ok ? "" : " over 2x bound");
    }
done:
    free(rows);
    free(ref);
    free(absdot);
    return rc;
}

/* ---------------------------------------------------------------- time one (shape, M) */

static int bg_enqueue(void *ctx, int set, void *stream, char *err, size_t errlen)
{
    bg_call *c = ctx;
    bg_shape *sh = c->sh;
    int s = set % c->sets, n = sh->s->n, k = sh->s->k;
    if (c->cublas)
        return bcl_gemm(&c->d->cb, c->d->dt == KT_REF_BF16, c->m, n, k, sh->a[s], k, sh->w[s], k, sh->c[s], n, err,
                        errlen);
    return ktrt_gemm(c->d->rt, c->d->dtype, c->m, n, k, sh->a[s], k, sh->w[s], k, sh->c[s], n, stream, NULL, err,
                     errlen) == KT_OK ? 0 : -1;
}

/* Launches per replay: whole rotations of the sets, enough for about BG_REPLAY_US by a rough
 * estimate (3 TB/s, 500 TFLOP/s), so launch gaps do not dominate small shapes. */
static int bg_launches(int m, int n, int k, int sets)
{
    double est = fmax(bg_bytes(m, n, k) / 3e6, 2.0 * m * n * k / 5e8) + 3;
    int cycles = (int)ceil(BG_REPLAY_US / (est * sets));
    int launches = sets * (cycles < 1 ? 1 : cycles);
    while (launches > BG_MAX_LAUNCHES && launches > sets)
        launches -= sets;
    return launches;
}

static void bg_time(const bg_opts *o, bg_dev *d, bg_shape *sh, bg_row *row, int with_ktrt)
{
    char err[1024];
    int m = row->m;
    row->sets = bg_sets_for(d, m, sh->s->n, sh->s->k);
    row->launches = bg_launches(m, sh->s->n, sh->s->k, row->sets);
    bg_call calls[3] = { { d, sh, 0, m, row->sets }, { d, sh, 1, m, row->sets }, { d, sh, 0, m, row->sets } };
    tm_item items[3];
    tm_result res[3];
    int order[3], ni = 0;
    /* ktrt, cuBLAS, ktrt again (the control); cuBLAS alone when ktrt has no verified output. */
    for (int i = 0; i < 3; i++) {
        if (!with_ktrt && !calls[i].cublas)
            continue;
        items[ni] = (tm_item){ bg_enqueue, &calls[i], row->launches, NULL };
        order[ni++] = i;
    }
    for (int i = 0; i < ni; i++)
        if (tm_capture(d->b, d->stream, &items[i], err, sizeof err)) {
            snprintf(row->status, sizeof row->status, "error");
            snprintf(row->note, sizeof row->note, "capture (%s): %s", calls[order[i]].cublas ? "cuBLAS" : "ktrt", err);
            goto done;
        }
    tm_options to = { 30, o->rounds };
    if (tm_time_interleaved(d->b, d->stream, items, ni, &to, res, err, sizeof err)) {
        snprintf(row->status, sizeof row->status, "error");
        snprintf(row->note, sizeof row->note, "timing: %s", err);
        goto done;
    }
    for (int i = 0; i < ni; i++) {
        if (order[i] == 0) row->kt = res[i], row->timed_kt = 1;
        else if (order[i] == 1) row->cb = res[i], row->timed_cb = 1;
        else row->ctl = res[i];
    }
done:
    for (int i = 0; i < ni; i++)
        tm_release(d->b, &items[i]);
}

/* ---------------------------------------------------------------- reporting */

typedef struct bg_derived {
    double ratio, tflops, cb_tflops, gbps, cb_gbps, pct_read, pct_copy, spread;
} bg_derived;

static bg_derived bg_derive(const bg_dev *d, const bg_row *r)
{
    bg_derived x = { NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN };
    double flops = 2.0 * r->m * r->s->n * r->s->k, bytes = (double)bg_bytes(r->m, r->s->n, r->s->k);
    if (r->timed_kt && r->kt.median_us > 0) {
        x.tflops = flops / (r->kt.median_us * 1e6);
        x.gbps = bytes / (r->kt.median_us * 1e3);
        if (d->ceil.read_gbps > 0) x.pct_read = 100 * x.gbps / d->ceil.read_gbps;
        if (d->ceil.copy_gbps > 0) x.pct_copy = 100 * x.gbps / d->ceil.copy_gbps;
        x.spread = tm_spread(r->kt.median_us, r->ctl.median_us);
    }
    if (r->timed_cb && r->cb.median_us > 0) {
        x.cb_tflops = flops / (r->cb.median_us * 1e6);
        x.cb_gbps = bytes / (r->cb.median_us * 1e3);
    }
    if (r->timed_kt && r->timed_cb && r->kt.median_us > 0)
        x.ratio = r->cb.median_us / r->kt.median_us;
    return x;
}

/* "%*.*f", or "-" for NaN, right-aligned in width. */
static const char *bg_num(char *buf, size_t len, int width, int prec, double v)
{
    if (isnan(v)) snprintf(buf, len, "%*s", width, "-");
    else snprintf(buf, len, "%*.*f", width, prec, v);
    return buf;
}

static void bg_print_header(void)
{
    printf("%-24s %-12s %2s %6s %6s %5s %-6s %-28s %9s %9s %6s %7s %6s %6s %6s %6s\n", "model", "layers", "tp", "n",
           "k", "m", "path", "kernel", "ktrt_us", "cublas_us", "ratio", "TFLOP/s", "GB/s", "%read", "%copy", "ctl%");
}

static void bg_print_row(const bg_dev *d, const bg_row *r)
{
    bg_derived x = bg_derive(d, r);
    char model[64], b[8][32];
    const char *comma = strchr(r->s->models, ',');
    if (comma) snprintf(model, sizeof model, "%.*s+%d", (int)(comma - r->s->models) > 20 ? 20 : (int)(comma - r->s->models),
                        r->s->models, r->s->nmodels - 1);
    else snprintf(model, sizeof model, "%.24s", r->s->models);
    /* kt_gemm_dense_bf16_bm16_bn32_bk32_wm1_wn1_sk2 -> bm16_bn32_bk32_wm1_wn1_sk2: the family and
     * dtype are the same on every row (the TSV has the full name). */
    const char *kernel = r->ch.kernel;
    if (!strncmp(kernel, "kt_gemm_dense_", 14) && strchr(kernel + 14, '_'))
        kernel = strchr(kernel + 14, '_') + 1;
    printf("%-24s %-12s %2d %6d %6d %5d %-6s %-28.28s %s %s %s %s %s %s %s %s", model, r->s->layers, r->s->tp, r->s->n,
           r->s->k, r->m, r->ch.path[0] ? r->ch.path : "-", kernel[0] ? kernel : "-",
           bg_num(b[0], 32, 9, 2, r->timed_kt ? r->kt.median_us : NAN),
           bg_num(b[1], 32, 9, 2, r->timed_cb ? r->cb.median_us : NAN), bg_num(b[2], 32, 6, 3, x.ratio),
           bg_num(b[3], 32, 7, 1, x.tflops), bg_num(b[4], 32, 6, 0, x.gbps), bg_num(b[5], 32, 6, 1, x.pct_read),
           bg_num(b[6], 32, 6, 1, x.pct_copy), bg_num(b[7], 32, 6, 2, 100 * x.spread));
    if (strcmp(r->status, "ok"))
        printf("  %s: %s", r->status, r->note);
    printf("\n");
    fflush(stdout);
}

static const char bg_tsv_header[] =
    "model\tlayers\ttp\tdtype\tn\tk\tm\tpath\tkernel\tsplitk\tproblem_key\treason\tsets\tlaunches\trounds\t"
    "ktrt_us\tktrt_min_us\tktrt_max_us\tcontrol_us\tcontrol_spread\tcublas_us\tcublas_min_us\tcublas_max_us\t"
    "ratio_cublas_over_ktrt\tktrt_tflops\tcublas_tflops\tktrt_gbps\tcublas_gbps\tpct_read_ceiling\t"
    "pct_copy_ceiling\terr_ktrt\terr_cublas\terr_ktrt_vs_cublas\tstatus\tnote\n";

static void bg_tsv_row(FILE *f, const bg_dev *d, const bg_opts *o, const bg_row *r)
{
    if (!f)
        return;
    bg_derived x = bg_derive(d, r);
    fprintf(f, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%s\t%s\t%d\t%d\t%d\t", r->s->models, r->s->layers, r->s->tp,
            d->dtype, r->s->n, r->s->k, r->m, r->ch.path, r->ch.kernel, r->ch.splitk, r->ch.problem_key, r->ch.reason,
            r->sets, r->launches, o->rounds);
    fprintf(f, "%.3f\t%.3f\t%.3f\t%.3f\t%.4f\t%.3f\t%.3f\t%.3f\t", r->timed_kt ? r->kt.median_us : NAN,
            r->timed_kt ? r->kt.min_us : NAN, r->timed_kt ? r->kt.max_us : NAN, r->timed_kt ? r->ctl.median_us : NAN,
            x.spread, r->timed_cb ? r->cb.median_us : NAN, r->timed_cb ? r->cb.min_us : NAN,
            r->timed_cb ? r->cb.max_us : NAN);
    fprintf(f, "%.4f\t%.2f\t%.2f\t%.1f\t%.1f\t%.2f\t%.2f\t%.3e\t%.3e\t%.3e\t%s\t%s\n", x.ratio, x.tflops, x.cb_tflops,
            x.gbps, x.cb_gbps, x.pct_read, x.pct_copy, r->err_kt, r->err_cb, r->err_x, r->status, r->note);
    fflush(f);
}

static int bg_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bg_summary(const bg_dev *d, const bg_row *rows, int nrows)
{
    const bg_row *lo_small = NULL;
    double lo = INFINITY, big_lo = INFINITY, big_hi = -INFINITY, smax = 0;
    int big = 0, counts[4] = { 0 }, bad = 0, refused = 0, ns = 0;
    double *spreads = malloc(sizeof *spreads * (size_t)(nrows > 0 ? nrows : 1));
    static const char *const paths[4] = { "exact", "bucket", "law", "refused" };
    for (int i = 0; i < nrows; i++) {
        const bg_row *r = &rows[i];
        bg_derived x = bg_derive(d, r);
        for (int p = 0; p < 4; p++)
            counts[p] += !strcmp(r->ch.path, paths[p]);
        bad += !strcmp(r->status, "wrong") || !strcmp(r->status, "error");
        refused += !strcmp(r->status, "refused");
        if (!isnan(x.spread) && spreads) {
            spreads[ns++] = x.spread;
            smax = fmax(smax, x.spread);
        }
        if (isnan(x.ratio))
            continue;
        if (r->m <= 16 && x.ratio < lo) {
            lo = x.ratio;
            lo_small = r;
        }
        if (r->m >= 1024) {
            big++;
            big_lo = fmin(big_lo, x.ratio);
            big_hi = fmax(big_hi, x.ratio);
        }
    }
    if (spreads)
        qsort(spreads, (size_t)ns, sizeof *spreads, bg_cmp_double);
    printf("\nbench_gemm summary on %s (%s, %d SMs), cuBLAS %d.%d.%d (%s)\n", d->info.name, d->info.arch,
           d->info.compute_units, d->cb.version / 10000, d->cb.version / 100 % 100, d->cb.version % 100, d->cb.path);
    if (lo_small)
        printf("  min ratio cuBLAS/ktrt at M<=16: %.3f (%s %s tp%d n=%d k=%d m=%d, %s %s)\n", lo, lo_small->s->models,
               lo_small->s->layers, lo_small->s->tp, lo_small->s->n, lo_small->s->k, lo_small->m, lo_small->ch.path,
               lo_small->ch.kernel);
    else
        printf("  min ratio cuBLAS/ktrt at M<=16: n/a (no timed row)\n");
    if (big)
        printf("  ratio range at M>=1024: %.3f .. %.3f over %d rows\n", big_lo, big_hi, big);
    else
        printf("  ratio range at M>=1024: n/a (no timed row)\n");
    printf("  paths: %d exact, %d bucket, %d law, %d refused; control spread median %.2f%%, max %.2f%%\n", counts[0],
           counts[1], counts[2], counts[3], ns ? 100 * spreads[ns / 2] : 0.0, 100 * smax);
    if (d->ceil.read_gbps > 0)
        printf("  read ceiling %.0f GB/s, ", d->ceil.read_gbps);
    else
        printf("  read ceiling %s, ", d->ceil.read_note);
    if (d->ceil.copy_gbps > 0)
        printf("copy ceiling %.0f GB/s (copy kernel, read+write)\n", d->ceil.copy_gbps);
    else
        printf("copy ceiling %s\n", d->ceil.copy_note);
    printf("  rows: %d, wrong or error: %d, refused: %d\n", nrows, bad, refused);
    free(spreads);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    bg_opts o;
    bsh_list shapes = { 0 };
    bg_dev d;
    bg_row *rows = NULL;
    FILE *tsv = NULL;
    char err[1024];
    int status = 1, nrows = 0;

    memset(&d, 0, sizeof d);
    if (bg_parse_args(argc, argv, &o))
        return 1;
    if (bsh_collect(o.models, o.tps, o.ntp, &shapes, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: %s\n", err);
        return 1;
    }
    int st = bg_open_device(&o, &d);
    if (st) {
        status = st;
        goto done;
    }
    rows = calloc((size_t)shapes.n * o.nm, sizeof *rows);
    if (!rows) {
        fprintf(stderr, "bench_gemm: out of memory\n");
        goto done;
    }
    if (o.tsv) {
        tsv = fopen(o.tsv, "w");
        if (!tsv) {
            fprintf(stderr, "bench_gemm: --tsv %s: %s\n", o.tsv, strerror(errno));
            goto done;
        }
        fputs(bg_tsv_header, tsv);
    }

    printf("bench_gemm: %s, %s, %d SMs, L2 %.1f MiB, %.0f GiB; ktrt device key %s; db %s\n", d.info.name, d.info.arch,
           d.info.compute_units, d.info.l2_bytes / 1048576.0, d.info.global_mem_bytes / 1073741824.0,
           ktrt_device_key(d.rt), o.db);
    printf("bench_gemm: cuBLAS %d.%d.%d loaded from %s\n", d.cb.version / 10000, d.cb.version / 100 % 100,
           d.cb.version % 100, d.cb.path);
    if (bce_measure(d.b, d.stream, &d.info, o.read_cubin, o.rounds, &d.ceil, err, sizeof err)) {
        fprintf(stderr, "bench_gemm: ceilings: %s\n", err);
        goto done;
    }
    if (d.ceil.read_gbps > 0)
        printf("bench_gemm: read ceiling %.0f GB/s (%s, %d blocks x %d, %.2f GiB, control spread %.2f%%)\n",
               d.ceil.read_gbps, o.read_cubin, d.ceil.read_blocks, 512, d.ceil.buffer_bytes / 1073741824.0,
               100 * d.ceil.read_spread);
    else
        printf("bench_gemm: read ceiling %s\n", d.ceil.read_note);
    if (d.ceil.copy_gbps > 0)
        printf("bench_gemm: copy ceiling %.0f GB/s (%s's copy kernel, %d blocks x %d, read+write bytes, %.2f GiB "
               "each way)\n", d.ceil.copy_gbps, o.read_cubin, d.ceil.copy_blocks, 512, d.ceil.buffer_bytes / 2 / 1073741824.0);
    else
        printf("bench_gemm: copy ceiling %s\n", d.ceil.copy_note);
    printf("bench_gemm: %d shapes x %d M, %s, %d rounds; M<=64 cache-cold (buffer sets past 2x L2); control = ktrt "
           "timed twice\n\n", shapes.n, o.nm, o.dtype, o.rounds);
    bg_print_header();

    int failed_setup = 0;
    for (int si = 0; si < shapes.n; si++) {
        bg_shape sh;
        if (bg_shape_make(&o, &d, &shapes.v[si], &sh, err, sizeof err)) {
            fprintf(stderr, "bench_gemm: tp%d n=%d k=%d: %s\n", shapes.v[si].tp, shapes.v[si].n, shapes.v[si].k, err);
            for (int mi = 0; mi < o.nm; mi++) {
                bg_row *r = &rows[nrows++];
                r->s = &shapes.v[si];
                r->m = o.ms[mi];
                snprintf(r->status, sizeof r->status, "error");
                snprintf(r->note, sizeof r->note, "setup: %s", err);
                bg_print_row(&d, r);
                bg_tsv_row(tsv, &d, &o, r);
            }
            bg_shape_free(&d, &sh);
            failed_setup++;
            continue;
        }
        for (int mi = 0; mi < o.nm; mi++) {
            bg_row *r = &rows[nrows++];
            r->s = &shapes.v[si];
            r->m = o.ms[mi];
            int verified = bg_verify(&o, &d, &sh, r) == 0;
            if (!strcmp(r->status, "wrong"))
                fprintf(stderr, "bench_gemm: FAIL tp%d n=%d k=%d m=%d: %s\n", r->s->tp, r->s->n, r->s->k, r->m, r->note);
            /* Time what is right: both, or cuBLAS alone where ktrt refused. */
            if (verified || !strcmp(r->status, "refused"))
                bg_time(&o, &d, &sh, r, verified);
            bg_print_row(&d, r);
            bg_tsv_row(tsv, &d, &o, r);
        }
        bg_shape_free(&d, &sh);
    }
    bg_summary(&d, rows, nrows);
    status = 0;
    for (int i = 0; i < nrows; i++)
        if (strcmp(rows[i].status, "ok"))
            status = 1;
    if (failed_setup)
        status = 1;
    if (tsv && fclose(tsv) != 0) {
        fprintf(stderr, "bench_gemm: --tsv %s: write error\n", o.tsv);
        status = 1;
    }
    tsv = NULL;
done:
    if (tsv)
        fclose(tsv);
    free(rows);
    bg_close_device(&d);
    bsh_free(&shapes);
    return status;
}
