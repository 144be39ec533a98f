/* gemm_ref.h: the float64 CPU reference and output check for C[M][N] = A[M][K] . W[N][K]^T
 * (templates/abi/gemm.h), shared by the device checks (gemm_check.c, ktrt_check.c) and
 * bench/gemm.c's spot checks, so all three judge a GEMM by the same numbers. Prefix kt_ref_.
 *
 * Header-only (static functions), plain C11 + libm + POSIX threads (in glibc itself since 2.34):
 * gemm_check must build with nothing but libc.
 *
 * Inputs are uniform in [-1,1), never zero, rounded to the dtype (RNE; tuner/random_inputs.h); the
 * reference is computed from the rounded values, so only the kernel's own arithmetic is judged.
 * Outputs are judged on the rows the caller asks for (all rows, or a sample where M x N x K is too
 * large for a CPU), while the poison checks (every element written, nothing written outside C)
 * always cover the whole buffer. The bounds, and why they are these, are explained at the top of
 * gemm_check.c; in short:
 *   norm-wise   ||out - ref|| / ||ref|| <= 2^-8 (bf16), 2^-9 (fp16);
 *   per element |out - ref| <= u*|ref| + K * 2^-22 * sum_k |a_k w_k| + 2^-24, u the output's unit
 *               roundoff (bf16 2^-8, fp16 2^-11). */
#ifndef KT_GEMM_REF_H
#define KT_GEMM_REF_H

#include "../../tuner/random_inputs.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define KT_REF_POISON16 0xFFFFu      /* NaN in bf16 and fp16: 0xFF bytes */

typedef enum kt_ref_dtype { KT_REF_BF16, KT_REF_F16, KT_REF_DTYPES } kt_ref_dtype;
static const char *const kt_ref_dtype_names[KT_REF_DTYPES] = { "bf16", "fp16" };

/* 0 and *dt for "bf16" / "fp16", -1 otherwise. */
static inline int kt_ref_dtype_parse(const char *s, kt_ref_dtype *dt)
{
    for (int i = 0; i < KT_REF_DTYPES; i++)
        if (s && !strcmp(s, kt_ref_dtype_names[i])) {
            *dt = (kt_ref_dtype)i;
            return 0;
        }
    return -1;
}

static inline uint16_t kt_ref_to_dtype(kt_ref_dtype dt, float x)
{
    return dt == KT_REF_BF16 ? kt_f32_to_bf16(x) : kt_f32_to_f16(x);
}

static inline double kt_ref_from_dtype(kt_ref_dtype dt, uint16_t h)
{
    return dt == KT_REF_BF16 ? kt_bf16_to_f32(h) : kt_f16_to_f32(h);
}


/* The tuner's inputs (tuner/random_inputs.h): uniform in [-1,1), exact, never zero. */
static inline uint16_t kt_ref_random_input(kt_ref_dtype dt, uint64_t *rng) { return kt_rand_input(dt == KT_REF_F16, rng); }

/* rows x cols values into a row-major buffer of leading dimension ld; the columns cols..ld-1 are
 * set to poison, so a kernel that reads past K picks up NaN. */
static inline void kt_ref_fill(kt_ref_dtype dt, uint16_t *dst, size_t rows, int cols, int ld, uint64_t *rng)
{
    for (size_t i = 0; i < rows; i++)
        for (int j = 0; j < ld; j++)
            dst[i * (size_t)ld + j] = j < cols ? kt_ref_random_input(dt, rng) : (uint16_t)KT_REF_POISON16;
}

static inline double kt_ref_norm_bound(kt_ref_dtype dt) { return dt == KT_REF_BF16 ? 0x1p-8 : 0x1p-9; }
static inline double kt_ref_out_roundoff(kt_ref_dtype dt) { return dt == KT_REF_BF16 ? 0x1p-8 : 0x1p-11; }

/* The per-element bound for one output whose reference is ref and whose sum_k |a_k w_k| is absdot. */
static inline double kt_ref_elem_bound(kt_ref_dtype dt, int k, double ref, double absdot)
{
    return kt_ref_out_roundoff(dt) * fabs(ref) + k * 0x1p-22 * absdot + 0x1p-24;
}

/* ref[r][j] = sum_kk a[rows[r]][kk] * w[j][kk] in float64 from the 16-bit values, for r < nrows
 * (rows NULL: rows 0..nrows-1), j < n; absdot[r][j] = sum_kk |a w|. A's chosen rows are widened
 * once and each W row once, so the inner loop runs over two contiguous double rows and the
 * memory is (nrows + 1) * k doubles whatever N is; four partial sums let the adds overlap (at
 * float64 the order does not matter at these sizes: gemm_check --selftest checks this against a
 * long double Kahan sum). Returns 0, or -1 when out of memory. */
/* Columns [j0, j1) of the reference rows, from A's rows already widened to double (ad). */
typedef struct kt_ref_cols_job {
    kt_ref_dtype dt;
    int nrows, n, k, j0, j1, ldw;
    const double *ad;
    const uint16_t *w;
    double *ref, *absdot;
    int failed;
} kt_ref_cols_job;

static inline void *kt_ref_gemm_cols(void *arg)
{
    kt_ref_cols_job *jb = arg;
    const int k = jb->k, n = jb->n;
    double *wd = malloc(sizeof *wd * (size_t)k);
    if (!wd) {
        jb->failed = 1;
        return NULL;
    }
    for (int j = jb->j0; j < jb->j1; j++) {
        for (int kk = 0; kk < k; kk++)
            wd[kk] = kt_ref_from_dtype(jb->dt, jb->w[(size_t)j * jb->ldw + kk]);
        for (int r = 0; r < jb->nrows; r++) {
            const double *ar = jb->ad + (size_t)r * k;
            double s0 = 0, s1 = 0, s2 = 0, s3 = 0, t0 = 0, t1 = 0;
            int kk = 0;
            for (; kk + 4 <= k; kk += 4) {
                double p0 = ar[kk] * wd[kk], p1 = ar[kk + 1] * wd[kk + 1];
                double p2 = ar[kk + 2] * wd[kk + 2], p3 = ar[kk + 3] * wd[kk + 3];
                s0 += p0; s1 += p1; s2 += p2; s3 += p3;
                t0 += fabs(p0) + fabs(p1);
                t1 += fabs(p2) + fabs(p3);
            }
            for (; kk < k; kk++) {
                double p = ar[kk] * wd[kk];
                s0 += p;
                t0 += fabs(p);
            }
            jb->ref[(size_t)r * n + j] = (s0 + s1) + (s2 + s3);
            jb->absdot[(size_t)r * n + j] = t0 + t1;
        }
    }
    free(wd);
    return NULL;
}

/* Large references are split by columns over the host's cores (each column's sum is computed
 * the same way whoever computes it, so the result does not depend on the thread count). */
#define KT_REF_THREAD_MACS (1ll << 24)
#define KT_REF_MAX_THREADS 32

static inline int kt_ref_gemm_rows(kt_ref_dtype dt, const int *rows, int nrows, int n, int k,
                                   const uint16_t *a, int lda, const uint16_t *w, int ldw,
                                   double *ref, double *absdot)
{
    double *ad = malloc(sizeof *ad * (size_t)nrows * k);
    if (!ad) return -1;
    for (int r = 0; r < nrows; r++) {
        size_t i = (size_t)(rows ? rows[r] : r);
        for (int kk = 0; kk < k; kk++)
            ad[(size_t)r * k + kk] = kt_ref_from_dtype(dt, a[i * lda + kk]);
    }
    long long macs = (long long)nrows * n * k;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int threads = macs < KT_REF_THREAD_MACS || cores < 2 ? 1 : cores > KT_REF_MAX_THREADS ? KT_REF_MAX_THREADS : (int)cores;
    if (threads > n) threads = n;
    kt_ref_cols_job jobs[KT_REF_MAX_THREADS];
    pthread_t tid[KT_REF_MAX_THREADS];
    int created[KT_REF_MAX_THREADS] = {0}, failed = 0;
    for (int t = 0; t < threads; t++)
        jobs[t] = (kt_ref_cols_job){dt, nrows, n, k, (int)((long long)n * t / threads),
                                    (int)((long long)n * (t + 1) / threads), ldw, ad, w, ref, absdot, 0};
    for (int t = 1; t < threads; t++) created[t] = pthread_create(&tid[t], NULL, kt_ref_gemm_cols, &jobs[t]) == 0;
    /* this thread's share, and the share of any thread that could not start */
    for (int t = 0; t < threads; t++)
        if (!created[t]) kt_ref_gemm_cols(&jobs[t]);
    for (int t = 0; t < threads; t++) {
        if (created[t]) pthread_join(tid[t], NULL);
        failed |= jobs[t].failed;
    }
    free(ad);
    return failed ? -1 : 0;
}

/* Up to max distinct rows of 0..m-1 spread over the matrix, ascending: all of them when m <= max,
 * else the first, the last, and the rest evenly spaced with a seeded jitter (so a fault that hits
 * every 2^p-th row is not always missed). rows has room for max entries; returns the count. */
static inline int kt_ref_sample_rows(int m, int max, uint64_t seed, int *rows)
{
    if (m <= max) {
        for (int i = 0; i < m; i++)
            rows[i] = i;
        return m;
    }
    if (max < 2) {
        rows[0] = 0;
        return 1;
    }
    int count = 0;
    uint64_t st = seed;
    for (int i = 0; i < max; i++) {
        long lo = (long)m * i / max, hi = (long)m * (i + 1) / max;   /* [lo, hi) non-empty */
        int r = i == 0 ? 0 : i == max - 1 ? m - 1 : (int)(lo + (long)(kt_rand_splitmix64(&st) % (uint64_t)(hi - lo)));
        if (!count || r > rows[count - 1])
            rows[count++] = r;
    }
    return count;
}

/* The verdict on one output. */
typedef struct kt_ref_check {
    double err;               /* ||out-ref|| / ||ref|| over the checked rows; NaN when one is not finite */
    double elem_worst;        /* max over checked elements of |out-ref| / element bound */
    long long nonfinite;      /* NaN/inf anywhere in the M x N matrix (unwritten or garbage) */
    long long elem_bad;       /* checked elements over their own bound */
    long long pad_written;    /* padding columns N..ldc-1 that are no longer poison */
    long long guard_written;  /* guard elements around C that are no longer poison */
    long long ws_written;     /* filled by a caller that owns a split-K workspace (gemm_check) */
} kt_ref_check;

/* cbuf is the whole C buffer as read back: guard poison elements, the m x ldc matrix, then poison
 * up to cbuf_elems. ref/absdot are [nrows][n] for rows[] (NULL: rows 0..nrows-1). */
static inline void kt_ref_check_output(kt_ref_check *ck, kt_ref_dtype dt, const uint16_t *cbuf, size_t cbuf_elems,
                                       size_t guard, int m, int n, int k, int ldc, const int *rows, int nrows,
                                       const double *ref, const double *absdot)
{
    size_t end = guard + (size_t)m * ldc;
    const uint16_t *c = cbuf + guard;
    double sq = 0, rsq = 0;

    memset(ck, 0, sizeof *ck);
    for (size_t i = 0; i < guard && i < cbuf_elems; i++)
        ck->guard_written += cbuf[i] != KT_REF_POISON16;
    for (size_t i = end; i < cbuf_elems; i++)
        ck->guard_written += cbuf[i] != KT_REF_POISON16;
    for (int i = 0; i < m; i++) {
        for (int j = 0; j < n; j++)
            ck->nonfinite += !isfinite(kt_ref_from_dtype(dt, c[(size_t)i * ldc + j]));
        for (int j = n; j < ldc; j++)
            ck->pad_written += c[(size_t)i * ldc + j] != KT_REF_POISON16;
    }
    for (int r = 0; r < nrows; r++) {
        size_t i = (size_t)(rows ? rows[r] : r);
        for (int j = 0; j < n; j++) {
            double out = kt_ref_from_dtype(dt, c[i * ldc + j]);
            double rf = ref[(size_t)r * n + j];
            rsq += rf * rf;
            if (!isfinite(out))
                continue;   /* counted above */
            double diff = fabs(out - rf);
            double bound = kt_ref_elem_bound(dt, k, rf, absdot[(size_t)r * n + j]);
            sq += diff * diff;
            if (diff / bound > ck->elem_worst)
                ck->elem_worst = diff / bound;
            ck->elem_bad += diff > bound;
        }
    }
    if (ck->nonfinite)
        ck->err = NAN;
    else
        ck->err = rsq > 0 ? sqrt(sq) / sqrt(rsq) : sqrt(sq);
}

static inline int kt_ref_check_passed(const kt_ref_check *ck, kt_ref_dtype dt)
{
    return !ck->nonfinite && ck->err <= kt_ref_norm_bound(dt) && !ck->elem_bad && !ck->pad_written &&
           !ck->guard_written && !ck->ws_written;
}

/* What failed, as " key=value" pairs for a FAIL line; empty when nothing did. */
static inline void kt_ref_check_describe(const kt_ref_check *ck, kt_ref_dtype dt, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = 0;
#define KT_REF_DESCRIBE(...) \
    do { if (used < len) used += (size_t)snprintf(buf + used, len - used, __VA_ARGS__); } while (0)
    if (ck->nonfinite)
        KT_REF_DESCRIBE(" nonfinite=%lld", ck->nonfinite);
    if (!ck->nonfinite && !(ck->err <= kt_ref_norm_bound(dt)))
        KT_REF_DESCRIBE(" over_bound=%.2e", kt_ref_norm_bound(dt));
    if (ck->elem_bad)
        KT_REF_DESCRIBE(" elem_over=%lld(worst %.1fx)", ck->elem_bad, ck->elem_worst);
    if (ck->pad_written)
        KT_REF_DESCRIBE(" pad_written=%lld", ck->pad_written);
    if (ck->guard_written)
        KT_REF_DESCRIBE(" guard_written=%lld", ck->guard_written);
    if (ck->ws_written)
        KT_REF_DESCRIBE(" workspace_overrun=%lld", ck->ws_written);
#undef KT_REF_DESCRIBE
}

#endif
