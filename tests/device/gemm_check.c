/* gemm_check.c: runs the generator's dense GEMM variants (cubins) on a CUDA device and verifies
 * every one against a float64 CPU reference, at ragged shapes, on random data.
 *
 *   gemm_check MANIFEST [--shapes MxNxK[+P],...] [--seed S] [--tsv FILE] [--timeout S]
 *   gemm_check --selftest
 *
 * MANIFEST: one variant per line, "<cubin> <kernel> <bf16|fp16> <BM> <BN> <BK> <WM> <WN> <SK> [<ST>]"
 * (ST: stages of dynamic shared memory, runtime/gemm_geometry.h; absent or 0 for none);
 * '#' starts a comment line; a relative cubin path is taken from the manifest's directory.
 * A shape MxNxK+P uses padded leading dimensions lda = K+P, ldw = K+2P, ldc = N+P (different from
 * each other so a kernel that mixes them up fails); without +P they are K, K and N.
 *
 * Exit status: 0 every case passed; 1 a case failed, or bad arguments or manifest; 2 no CUDA
 * device (no libcuda.so.1, no device, driver error), printed as "no CUDA device: <reason>".
 *
 * The protocol (docs: DESIGN.md, "Measurement protocol"):
 *  - Inputs are uniform in [-1,1), never zero, rounded to the dtype (RNE, tuner/half_convert.h); the
 *    float64 reference is computed from the rounded values, so only the kernel's own arithmetic is
 *    measured. Inputs are drawn once per (shape, dtype) from a seed derived from --seed and the
 *    shape, and every variant of that dtype runs on them (the reference is the costly part).
 *  - Before each case the device buffers are poisoned with 0xFF bytes: 0xFFFF is a NaN in bf16 and
 *    fp16, 0xFFFFFFFF a NaN in fp32. That covers C (with guard bands before and after it and the
 *    padding columns N..ldc), the split-K workspace, and the A/W padding and buffer tails, so any
 *    value from outside the logical matrices that reaches C shows up as a NaN.
 *  - Pass needs all of: every C element finite; ||out - ref||_2 / ||ref||_2 under the dtype's
 *    bound; every element within its own worst-case bound; the padding columns, the guard bands and
 *    the workspace past S*M*N still poison (nothing written outside what the ABI allows).
 *  - Every driver call is checked; a launch error, or a failing cuCtxSynchronize, fails the case.
 *    Each variant runs in a process of its own, so a kernel that faults (which leaves the process
 *    unable to use the device) or hangs (killed after --timeout seconds without a result) fails
 *    its own remaining shapes and not the other variants'.
 *
 * Bounds, and why they are these:
 *  - Norm-wise: bf16 2^-8 (3.9e-3), fp16 2^-9 (1.95e-3 = 4 x 2^-11). C is stored in the dtype, so
 *    rounding the output alone costs up to u = 2^-8 (bf16) or 2^-11 (fp16) relative per element,
 *    about 0.4u norm-wise on random data (measured on the H200: 1.6e-3 bf16, 2.1e-4 fp16); fp32 accumulation adds about sqrt(K) * 2^-24 relative, far
 *    less. bf16's bound is u itself (2.5 times the typical error): tight enough that one dropped
 *    K term (relative error ~1/sqrt(K), 1.6e-2 at K = 4104) fails. fp16's u is so small that fp32
 *    accumulation noise is no longer negligible next to it, hence the 4x margin.
 *  - Per element: |out - ref| <= u*|ref| + K * 2^-22 * sum_k |a_k w_k| + 2^-24: the rigorous bound
 *    for fp32 accumulation in any order (products of 16-bit values are exact in fp32) with twice
 *    the margin a truncating adder (the matrix units' accumulator) needs, then the output rounding;
 *    2^-24 covers fp16's subnormal spacing. Loose in K, but it catches one garbage element in a
 *    large C, which the norm-wise bound averages away (one wrong element in 64x1024 moves it by
 *    ~4e-3). At small K it is tight (correct kernels reach ~0.98 of it where the output rounding
 *    dominates), so it also fails an output conversion that is not round-to-nearest-even.
 */
#define _POSIX_C_SOURCE 200809L

#include "runtime/cuda_driver.h"
#include "gemm_ref.h"
#include "../../runtime/gemm_geometry.h"

#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAVE_SIZE 32          /* NVIDIA warp */
#define POISON16 KT_REF_POISON16 /* NaN in bf16 and fp16 */
#define POISON32 0xFFFFFFFFu  /* NaN in fp32 */
#define C_GUARD 128           /* poison elements before and after C; 256 bytes keeps C's alignment */
#define CASE_TIMEOUT_S 60     /* default --timeout: a shape not done by then has hung */

enum dtype { DT_BF16 = KT_REF_BF16, DT_F16 = KT_REF_F16, DT_COUNT = KT_REF_DTYPES };
#define dtype_names kt_ref_dtype_names

typedef struct variant {
    char *cubin_path;
    char *kernel;
    enum dtype dt;
    kt_gemm_variant geo;
    unsigned char *image;     /* the cubin file's bytes */
    size_t image_len;
} variant;

typedef struct shape {
    int m, n, k, pad;
} shape;

static int shape_lda(const shape *s) { return s->k + s->pad; }
static int shape_ldw(const shape *s) { return s->k + 2 * s->pad; }
static int shape_ldc(const shape *s) { return s->n + s->pad; }

static void shape_label(const shape *s, char *buf, size_t len)
{
    if (s->pad)
        snprintf(buf, len, "%dx%dx%d+%d", s->m, s->n, s->k, s->pad);
    else
        snprintf(buf, len, "%dx%dx%d", s->m, s->n, s->k);
}

/* Ragged on purpose: M, N and K off every tile multiple; M = 1 (decode); K = 77 and 333, not
 * multiples of 8 (no 16-byte vector covers a row exactly, rows start unaligned); K = 72 and 77,
 * fewer BK steps than a split-K variant may have segments (empty segments); two padded cases. */
static const shape default_shapes[] = {
    { 1, 257, 1000, 0 }, { 7, 130, 333, 0 }, { 33, 517, 129, 0 }, { 64, 1024, 2048, 0 },
    { 129, 96, 4104, 0 }, { 300, 200, 72, 0 }, { 5, 100, 77, 0 }, { 48, 200, 264, 8 },
    { 17, 72, 1000, 24 },
};

/* ---------------------------------------------------------------- host data and reference */

/* The conversions, the random inputs and the float64 reference are gemm_ref.h's, shared with
 * ktrt_check and bench/gemm.c. */
static uint16_t to_dtype(enum dtype dt, float x) { return kt_ref_to_dtype((kt_ref_dtype)dt, x); }
static double from_dtype(enum dtype dt, uint16_t h) { return kt_ref_from_dtype((kt_ref_dtype)dt, h); }

/* One (shape, dtype): the rounded inputs as uploaded (padding columns poisoned), the float64
 * reference and, per element, sum_k |a_k w_k| for the per-element bound. */
typedef struct host_case {
    uint16_t *a, *w;          /* [m][lda], [n][ldw] */
    double *ref, *absdot;     /* [m][n] */
} host_case;

static void host_case_free(host_case *hc)
{
    free(hc->a);
    free(hc->w);
    free(hc->ref);
    free(hc->absdot);
    memset(hc, 0, sizeof *hc);
}

/* ref[m][n] = sum_k a[m][k] * w[n][k] in float64 from the 16-bit values (gemm_ref.h), every
 * row. Returns -1 when out of memory. */
static int reference_gemm(enum dtype dt, const shape *s, const uint16_t *a, const uint16_t *w,
                          double *ref, double *absdot)
{
    return kt_ref_gemm_rows((kt_ref_dtype)dt, NULL, s->m, s->n, s->k, a, shape_lda(s), w, shape_ldw(s), ref,
                            absdot);
}

static uint64_t case_seed(uint64_t seed, const shape *s, enum dtype dt)
{
    uint64_t st = seed;
    uint64_t h = kt_rand_splitmix64(&st);
    uint64_t parts[5] = { (uint64_t)s->m, (uint64_t)s->n, (uint64_t)s->k, (uint64_t)s->pad, (uint64_t)dt };
    for (int i = 0; i < 5; i++) {
        st = h ^ parts[i];
        h = kt_rand_splitmix64(&st);
    }
    return h;
}

static int host_case_make(host_case *hc, const shape *s, enum dtype dt, uint64_t seed)
{
    int lda = shape_lda(s), ldw = shape_ldw(s);
    size_t na = (size_t)s->m * lda, nw = (size_t)s->n * ldw, nc = (size_t)s->m * s->n;
    memset(hc, 0, sizeof *hc);
    hc->a = malloc(na * sizeof *hc->a);
    hc->w = malloc(nw * sizeof *hc->w);
    hc->ref = malloc(nc * sizeof *hc->ref);
    hc->absdot = malloc(nc * sizeof *hc->absdot);
    if (!hc->a || !hc->w || !hc->ref || !hc->absdot)
        goto oom;

    uint64_t rng = case_seed(seed, s, dt);
    for (size_t i = 0; i < na; i++)
        hc->a[i] = (int)(i % (size_t)lda) < s->k ? kt_ref_random_input((kt_ref_dtype)dt, &rng) : POISON16;
    for (size_t i = 0; i < nw; i++)
        hc->w[i] = (int)(i % (size_t)ldw) < s->k ? kt_ref_random_input((kt_ref_dtype)dt, &rng) : POISON16;
    if (reference_gemm(dt, s, hc->a, hc->w, hc->ref, hc->absdot))
        goto oom;
    return 0;
oom:
    host_case_free(hc);
    return -1;
}

/* ---------------------------------------------------------------- checking one output */

/* The verdict and its rules are gemm_ref.h's; gemm_check fills ws_written itself (the split-K
 * workspace past S*M*N must stay poison, and the tile counters at its end zero: a variant that
 * reduces in its own launch must leave them as it found them). */
typedef kt_ref_check check;

static double norm_bound(enum dtype dt) { return kt_ref_norm_bound((kt_ref_dtype)dt); }
static double out_roundoff(enum dtype dt) { return kt_ref_out_roundoff((kt_ref_dtype)dt); }

/* cbuf is the whole C buffer as read back: C_GUARD guard elements, the M x ldc matrix, then guard
 * up to cbuf_elems. Every row is checked against the reference. */
static void check_output(check *ck, const uint16_t *cbuf, size_t cbuf_elems, const shape *s,
                         enum dtype dt, const host_case *hc)
{
    kt_ref_check_output(ck, (kt_ref_dtype)dt, cbuf, cbuf_elems, C_GUARD, s->m, s->n, s->k, shape_ldc(s), NULL,
                        s->m, hc->ref, hc->absdot);
}

static int check_passed(const check *ck, enum dtype dt) { return kt_ref_check_passed(ck, (kt_ref_dtype)dt); }

static void check_describe(const check *ck, enum dtype dt, char *buf, size_t len)
{
    kt_ref_check_describe(ck, (kt_ref_dtype)dt, buf, len);
}

/* ---------------------------------------------------------------- reporting */

/* Results go to stdout and the TSV file from whichever process has them: the variant's own
 * process for every case it finishes, the parent for the cases a dead or killed one left. Each
 * report is also counted: directly in the parent, through the pipe to the parent in a child. */
typedef struct tally {
    FILE *tsv;
    int record_fd;            /* child: pipe to the parent, one record per report; parent: -1 */
    int passed, failed;
} tally;

typedef struct record {
    int shape;                /* index into the shape list */
    int ok;
} record;

static void report(tally *t, const variant *v, const shape *shapes, int si, const check *ck,
                   const char *detail)
{
    const shape *s = &shapes[si];
    char label[64], what[512], err[32];
    int ok = ck && check_passed(ck, v->dt) && !detail[0];
    shape_label(s, label, sizeof label);
    what[0] = 0;
    if (ck)
        check_describe(ck, v->dt, what, sizeof what);
    if (ck)
        snprintf(err, sizeof err, "%.2e", ck->err);
    else
        snprintf(err, sizeof err, "n/a");
    printf("%s %s %s err=%s%s%s%s\n", ok ? "ok" : "FAIL", v->kernel, label, err, what,
           detail[0] ? " " : "", detail);
    fflush(stdout);
    if (t->tsv) {
        fseek(t->tsv, 0, SEEK_END);   /* parent and child share the file; append after the other */
        fprintf(t->tsv, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t",
                v->kernel, dtype_names[v->dt], v->geo.bm, v->geo.bn, v->geo.bk, v->geo.wm, v->geo.wn,
                v->geo.splitk, s->m, s->n, s->k, shape_lda(s), shape_ldw(s), shape_ldc(s),
                ok ? "ok" : "FAIL", err);
        if (ck)
            fprintf(t->tsv, "%.3g\t%lld\t%lld\t%lld\t%lld\t%lld\t", ck->elem_worst, ck->nonfinite,
                    ck->elem_bad, ck->pad_written, ck->guard_written, ck->ws_written);
        else
            fprintf(t->tsv, "n/a\tn/a\tn/a\tn/a\tn/a\tn/a\t");
        fprintf(t->tsv, "%s%s%s\n", what[0] ? what + 1 : "", what[0] && detail[0] ? " " : "", detail);
        fflush(t->tsv);
    }
    if (t->record_fd >= 0) {
        record rec = { si, ok };
        /* 8 bytes, under PIPE_BUF: arrives whole. A failed write only loses the count, and the
         * parent then reports the case as not run, which fails the run too. */
        ssize_t w = write(t->record_fd, &rec, sizeof rec);
        (void)w;
    }
    if (ok)
        t->passed++;
    else
        t->failed++;
}

static const char tsv_header[] =
    "kernel\tdtype\tbm\tbn\tbk\twm\twn\tsk\tm\tn\tk\tlda\tldw\tldc\tstatus\terr\telem_worst\t"
    "nonfinite\telem_over\tpad_written\tguard_written\tworkspace_overrun\tdetail\n";

/* ---------------------------------------------------------------- running on the device */

/* What every variant's run shares. Device buffers are sized for the largest shape so each
 * variant allocates once; the workspace is the largest S*M*N over all variants and shapes, the
 * fixed-size buffer the runtime will also pass. */
typedef struct device_run {
    const cudrv *d;
    cudrv_device dev;
    const shape *shapes;
    int nshapes;
    host_case (*cases)[DT_COUNT];
    size_t a_elems, w_elems, c_elems;
    long long ws_elems;
    int units;                /* the device's SMs: stream-K launches are sized by them */
    uint16_t *cbuf;           /* host copy of C, c_elems */
    uint32_t *wsbuf;          /* host copy of the workspace, ws_elems (NULL when 0) */
    tally *t;
} device_run;

typedef struct variant_dev {
    cudrv_function fn_main, fn_reduce;
    cudrv_deviceptr a, w, c, ws;
} variant_dev;

/* Runs shape si. Returns 0 when the context is still usable afterwards, -1 when it is lost (a
 * fault in a kernel poisons the context, and on this driver every later context of the process). */
static int run_case(device_run *dr, const variant *v, variant_dev *vd, int si)
{
    const cudrv *d = dr->d;
    const shape *s = &dr->shapes[si];
    const host_case *hc = &dr->cases[si][v->dt];
    char detail[512], msg[256];
    const char *what;
    cudrv_result r;
    kt_gemm_variant geo = v->geo;
    int lda = shape_lda(s), ldw = shape_ldw(s), ldc = shape_ldc(s);
    long long slab_elems = kt_gemm_uses_workspace(&geo) ? kt_gemm_partials_needed(&geo, s->m, s->n, dr->units) -
                                                              KT_GEMM_TILE_COUNTERS : 0;
    long long counters_at = dr->ws_elems - KT_GEMM_TILE_COUNTERS;   /* the slabs' limit */

    kt_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = (const void *)(uintptr_t)vd->a;
    args.w = (const void *)(uintptr_t)vd->w;
    args.c = (void *)(uintptr_t)(vd->c + C_GUARD * sizeof(uint16_t));
    args.partials = (float *)(uintptr_t)vd->ws;
    args.partials_elems = dr->ws_elems;
    args.m = s->m;
    args.n = s->n;
    args.k = s->k;
    args.lda = lda;
    args.ldw = ldw;
    args.ldc = ldc;
    args.k_per_split = kt_gemm_k_per_split(s->k, geo.splitk, geo.bk);
    void *params[] = { &args };
    kt_launch_dims md = kt_gemm_main_dims(&geo, s->m, s->n, WAVE_SIZE, dr->units);
    kt_launch_dims rd = kt_gemm_reduce_dims(s->m, s->n);

#define CU(call, name) do { what = (name); if ((r = (call)) != CUDRV_SUCCESS) goto failed; } while (0)
    /* Poison whole buffers first: the upload leaves the tails past M*lda / N*ldw poisoned. */
    CU(d->memset_d8(vd->a, 0xFF, dr->a_elems * sizeof(uint16_t)), "cuMemsetD8(A)");
    CU(d->memset_d8(vd->w, 0xFF, dr->w_elems * sizeof(uint16_t)), "cuMemsetD8(W)");
    CU(d->memset_d8(vd->c, 0xFF, dr->c_elems * sizeof(uint16_t)), "cuMemsetD8(C)");
    if (dr->ws_elems) {
        CU(d->memset_d8(vd->ws, 0xFF, (size_t)kt_gemm_slab_bytes(dr->ws_elems)), "cuMemsetD8(workspace)");
        CU(d->memset_d8(vd->ws + (size_t)counters_at * sizeof(float), 0, KT_GEMM_TILE_COUNTERS * sizeof(float)),
           "cuMemsetD8(tile counters)");
    }
    CU(d->memcpy_htod(vd->a, hc->a, (size_t)s->m * lda * sizeof(uint16_t)), "cuMemcpyHtoD(A)");
    CU(d->memcpy_htod(vd->w, hc->w, (size_t)s->n * ldw * sizeof(uint16_t)), "cuMemcpyHtoD(W)");
    CU(d->launch_kernel(vd->fn_main, md.grid[0], md.grid[1], md.grid[2], md.block[0], md.block[1],
                        md.block[2], md.shared, NULL, params, NULL), "cuLaunchKernel(main)");
    if (geo.splitk > 1 && vd->fn_reduce)
        CU(d->launch_kernel(vd->fn_reduce, rd.grid[0], rd.grid[1], rd.grid[2], rd.block[0],
                            rd.block[1], rd.block[2], 0, NULL, params, NULL), "cuLaunchKernel(reduce)");
    CU(d->ctx_synchronize(), "cuCtxSynchronize");
    CU(d->memcpy_dtoh(dr->cbuf, vd->c, dr->c_elems * sizeof(uint16_t)), "cuMemcpyDtoH(C)");
    if (dr->ws_elems)
        CU(d->memcpy_dtoh(dr->wsbuf, vd->ws, (size_t)dr->ws_elems * sizeof(float)), "cuMemcpyDtoH(workspace)");
#undef CU

    check ck;
    check_output(&ck, dr->cbuf, dr->c_elems, s, v->dt, hc);
    for (long long i = slab_elems; i < counters_at; i++)
        ck.ws_written += dr->wsbuf[i] != POISON32;
    for (long long i = counters_at > 0 ? counters_at : 0; i < dr->ws_elems; i++)
        ck.ws_written += dr->wsbuf[i] != 0;
    report(dr->t, v, dr->shapes, si, &ck, "");
    return 0;

failed:
    snprintf(detail, sizeof detail, "%s: %s", what, cudrv_strerror(d, r, msg, sizeof msg));
    /* A launch error (bad grid, too many threads) leaves the context usable; a fault inside a
     * kernel makes every later call fail. Asking once more tells the two apart. */
    int lost = d->ctx_synchronize() != CUDRV_SUCCESS;
    if (lost)
        snprintf(detail + strlen(detail), sizeof detail - strlen(detail), " (context lost)");
    report(dr->t, v, dr->shapes, si, NULL, detail);
    return lost ? -1 : 0;
}

/* Runs every shape of one variant in a context of its own, then frees what it made. */
static void run_variant(device_run *dr, const variant *v)
{
    const cudrv *d = dr->d;
    char detail[512], msg[256], reduce_name[512];
    const char *what;
    cudrv_result r;
    cudrv_context ctx = NULL;
    cudrv_module mod = NULL;
    variant_dev vd;
    int lost = 0, i = 0;
    memset(&vd, 0, sizeof vd);

#define CU(call, name) do { what = (name); if ((r = (call)) != CUDRV_SUCCESS) goto setup_failed; } while (0)
    CU(d->ctx_create(&ctx, 0, dr->dev), "cuCtxCreate");
    CU(d->module_load_data(&mod, v->image), "cuModuleLoadData");
    CU(d->module_get_function(&vd.fn_main, mod, v->kernel), "cuModuleGetFunction(main)");
    CU(cudrv_allow_dynamic_shared(d, vd.fn_main, dr->dev), "cuFuncSetAttribute(main, dynamic shared)");
    if (v->geo.splitk > 1) {
        snprintf(reduce_name, sizeof reduce_name, "%s_reduce", v->kernel);
        /* none: the variant reduces in its own launch (templates/abi/gemm.h) */
        if (d->module_get_function(&vd.fn_reduce, mod, reduce_name) != CUDRV_SUCCESS) vd.fn_reduce = 0;
    }
    CU(d->mem_alloc(&vd.a, dr->a_elems * sizeof(uint16_t)), "cuMemAlloc(A)");
    CU(d->mem_alloc(&vd.w, dr->w_elems * sizeof(uint16_t)), "cuMemAlloc(W)");
    CU(d->mem_alloc(&vd.c, dr->c_elems * sizeof(uint16_t)), "cuMemAlloc(C)");
    if (dr->ws_elems)
        CU(d->mem_alloc(&vd.ws, (size_t)dr->ws_elems * sizeof(float)), "cuMemAlloc(workspace)");
#undef CU

    for (i = 0; i < dr->nshapes; i++) {
        if (lost) {
            report(dr->t, v, dr->shapes, i, NULL, "not run: the context was lost in an earlier shape");
            continue;
        }
        lost = run_case(dr, v, &vd, i) != 0;
    }
    goto cleanup;

setup_failed:
    snprintf(detail, sizeof detail, "%s: %s", what, cudrv_strerror(d, r, msg, sizeof msg));
    for (i = 0; i < dr->nshapes; i++)
        report(dr->t, v, dr->shapes, i, NULL, detail);

cleanup:
    /* A lost context refuses every call; destroying it releases its memory and module. */
    if (ctx && !lost) {
        cudrv_deviceptr bufs[4] = { vd.a, vd.w, vd.c, vd.ws };
        for (int b = 0; b < 4; b++)
            if (bufs[b] && (r = d->mem_free(bufs[b])) != CUDRV_SUCCESS)
                fprintf(stderr, "gemm_check: %s: cuMemFree: %s\n", v->kernel, cudrv_strerror(d, r, msg, sizeof msg));
        if (mod && (r = d->module_unload(mod)) != CUDRV_SUCCESS)
            fprintf(stderr, "gemm_check: %s: cuModuleUnload: %s\n", v->kernel, cudrv_strerror(d, r, msg, sizeof msg));
    }
    if (ctx && (r = d->ctx_destroy(ctx)) != CUDRV_SUCCESS)
        fprintf(stderr, "gemm_check: %s: cuCtxDestroy: %s\n", v->kernel, cudrv_strerror(d, r, msg, sizeof msg));
}

/* ---------------------------------------------------------------- one process per variant */

/* A kernel that faults leaves the whole process unable to use the device (seen on the H200:
 * after CUDA_ERROR_ILLEGAL_ADDRESS, cuCtxCreate fails in the same process), and one that hangs
 * never returns from cuCtxSynchronize. So each variant runs in a child process that opens the
 * driver itself; the parent never touches CUDA (a CUDA process cannot be forked), keeps the
 * inputs and references the children inherit, counts the results they send back, kills a child
 * that sends nothing for timeout_s, and reports whatever shapes a dead child left. */

/* fork() with stdio flushed, so buffered output is not written twice. */
static pid_t fork_flushed(void)
{
    fflush(NULL);
    return fork();
}

/* Child of the device probe: prints the device line and writes "<SMs> <name>" to name_fd, or prints
 * "no CUDA device: ..." and exits 2. */
static void probe_child(int name_fd)
{
    cudrv d;
    char why[512], msg[256], name[256];
    cudrv_result r;
    cudrv_device dev;
    int cc_major = 0, cc_minor = 0, sms = 0, version = 0;

    if (cudrv_open(&d, why, sizeof why)) {
        printf("no CUDA device: %s\n", why);
        fflush(stdout);
        _exit(2);
    }
    if ((r = d.device_get(&dev, 0)) != CUDRV_SUCCESS ||
        (r = d.device_get_name(name, sizeof name, dev)) != CUDRV_SUCCESS ||
        (r = d.device_get_attribute(&cc_major, CUDRV_ATTR_COMPUTE_CAPABILITY_MAJOR, dev)) != CUDRV_SUCCESS ||
        (r = d.device_get_attribute(&cc_minor, CUDRV_ATTR_COMPUTE_CAPABILITY_MINOR, dev)) != CUDRV_SUCCESS ||
        (r = d.device_get_attribute(&sms, CUDRV_ATTR_MULTIPROCESSOR_COUNT, dev)) != CUDRV_SUCCESS ||
        (r = d.driver_get_version(&version)) != CUDRV_SUCCESS) {
        printf("no CUDA device: querying device 0: %s\n", cudrv_strerror(&d, r, msg, sizeof msg));
        fflush(stdout);
        cudrv_close(&d);
        _exit(2);
    }
    printf("gemm_check: device 0: %s, sm_%d%d, %d SMs, driver %d.%d\n", name, cc_major, cc_minor,
           sms, version / 1000, version % 1000 / 10);
    fflush(stdout);
    char line[300];
    snprintf(line, sizeof line, "%d %s", sms, name);
    size_t len = strlen(line);
    ssize_t w = write(name_fd, line, len);
    cudrv_close(&d);
    _exit(w == (ssize_t)len ? 0 : 1);
}

/* Finds the device in a child process. Returns 0 with its name, 2 when there is none (the child
 * has said why), 1 on any other failure. */
static int probe_device(char *name, size_t len, int *units)
{
    int fds[2];
    if (pipe(fds)) {
        fprintf(stderr, "gemm_check: pipe: %s\n", strerror(errno));
        return 1;
    }
    pid_t pid = fork_flushed();
    if (pid < 0) {
        fprintf(stderr, "gemm_check: fork: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return 1;
    }
    if (pid == 0) {
        close(fds[0]);
        probe_child(fds[1]);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t n;
    while (got + 1 < len && ((n = read(fds[0], name + got, len - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
        got += n > 0 ? (size_t)n : 0;
    name[got] = 0;
    close(fds[0]);
    int st, skip = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && sscanf(name, "%d %n", units, &skip) == 1 && skip > 0 && *units > 0) {
        memmove(name, name + skip, strlen(name + skip) + 1);
        return 0;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 2)
        return 2;
    fprintf(stderr, "gemm_check: the device probe failed (status 0x%x)\n", (unsigned)st);
    return 1;
}

/* In the child: open the driver, run the variant, report every shape through the pipe. */
static void variant_child(device_run *dr, const variant *v)
{
    cudrv d;
    char why[512], msg[600];
    cudrv_result r;
    if (cudrv_open(&d, why, sizeof why)) {
        snprintf(msg, sizeof msg, "driver: %s", why);
        for (int i = 0; i < dr->nshapes; i++)
            report(dr->t, v, dr->shapes, i, NULL, msg);
        return;
    }
    dr->d = &d;
    if ((r = d.device_get(&dr->dev, 0)) != CUDRV_SUCCESS) {
        char detail[1024];
        snprintf(detail, sizeof detail, "cuDeviceGet: %s", cudrv_strerror(&d, r, msg, sizeof msg));
        for (int i = 0; i < dr->nshapes; i++)
            report(dr->t, v, dr->shapes, i, NULL, detail);
    } else {
        run_variant(dr, v);
    }
    cudrv_close(&d);
    dr->d = NULL;
}

/* In the parent: runs one variant in a child and accounts for every one of its shapes. */
static void run_variant_isolated(device_run *dr, const variant *v, int timeout_s)
{
    tally *t = dr->t;
    int fds[2];
    char detail[256];

    if (pipe(fds)) {
        snprintf(detail, sizeof detail, "not run: pipe: %s", strerror(errno));
        for (int i = 0; i < dr->nshapes; i++)
            report(t, v, dr->shapes, i, NULL, detail);
        return;
    }
    pid_t pid = fork_flushed();
    if (pid < 0) {
        snprintf(detail, sizeof detail, "not run: fork: %s", strerror(errno));
        for (int i = 0; i < dr->nshapes; i++)
            report(t, v, dr->shapes, i, NULL, detail);
        close(fds[0]);
        close(fds[1]);
        return;
    }
    if (pid == 0) {
        close(fds[0]);
        t->record_fd = fds[1];
        variant_child(dr, v);
        fflush(NULL);
        _exit(0);   /* not exit(): the parent's stdio and atexit state are not the child's to end */
    }
    close(fds[1]);

    /* Records arrive in shape order; a quiet pipe for timeout_s means the case in flight hangs. */
    int reported = 0, killed = 0;
    size_t have = 0;
    unsigned char buf[sizeof(record) * 64];
    for (;;) {
        struct pollfd pfd = { fds[0], POLLIN, 0 };
        int p = poll(&pfd, 1, timeout_s * 1000);
        if (p < 0 && errno == EINTR)
            continue;
        if (p == 0) {
            kill(pid, SIGKILL);
            killed = 1;
            break;
        }
        ssize_t n = p < 0 ? -1 : read(fds[0], buf + have, sizeof buf - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;   /* the child closed the pipe: it has exited, or is about to */
        have += (size_t)n;
        size_t used = 0;
        for (; have - used >= sizeof(record); used += sizeof(record)) {
            record rec;
            memcpy(&rec, buf + used, sizeof rec);
            if (rec.ok)
                t->passed++;
            else
                t->failed++;
            reported++;
        }
        memmove(buf, buf + used, have - used);
        have -= used;
    }
    close(fds[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;

    if (reported < dr->nshapes) {
        if (killed)
            snprintf(detail, sizeof detail, "timeout: no result after %d s (hung kernel?); process killed", timeout_s);
        else if (WIFSIGNALED(st))
            snprintf(detail, sizeof detail, "the checker's process for this variant died (signal %d)", WTERMSIG(st));
        else
            snprintf(detail, sizeof detail, "the checker's process for this variant ended early (status %d)",
                     WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        report(t, v, dr->shapes, reported, NULL, detail);
        for (int i = reported + 1; i < dr->nshapes; i++)
            report(t, v, dr->shapes, i, NULL, "not run: the variant's process ended at an earlier shape");
    }
}


/* ---------------------------------------------------------------- manifest and arguments */

static void variants_free(variant *vs, int n)
{
    for (int i = 0; i < n; i++) {
        free(vs[i].cubin_path);
        free(vs[i].kernel);
        free(vs[i].image);
    }
    free(vs);
}

static int read_file(const char *path, unsigned char **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t cap = 1 << 16, used = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        used += fread(buf + used, 1, cap - used, f);
        if (used < cap)
            break;
        unsigned char *bigger = realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        if (!errno)
            errno = EIO;
        return -1;
    }
    *data = buf;
    *len = used;
    return 0;
}

static int parse_dtype(const char *s, enum dtype *dt)
{
    for (int i = 0; i < DT_COUNT; i++)
        if (!strcmp(s, dtype_names[i])) {
            *dt = (enum dtype)i;
            return 0;
        }
    return -1;
}

/* Reads the manifest and every cubin it names. Returns 0 and the variants, or -1 after printing
 * what is wrong on stderr. */
static int load_manifest(const char *path, variant **out, int *count)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "gemm_check: %s: %s\n", path, strerror(errno));
        return -1;
    }
    const char *slash = strrchr(path, '/');
    int dirlen = slash ? (int)(slash - path + 1) : 0;   /* keeps the slash */
    variant *vs = NULL;
    int n = 0, cap = 0, lineno = 0, bad = 0;
    char line[4096];

    while (!bad && fgets(line, sizeof line, f)) {
        lineno++;
        if (!strchr(line, '\n') && !feof(f)) {
            fprintf(stderr, "gemm_check: %s:%d: line too long\n", path, lineno);
            bad = 1;
            break;
        }
        char *p = line + strspn(line, " \t\r\n");
        if (!*p || *p == '#')
            continue;
        char file[4096], kernel[4096], dts[16];
        int bm, bn, bk, wm, wn, sk, st = 0, end = 0, end_st = 0;
        enum dtype dt;
        if (sscanf(p, "%4095s %4095s %15s %d %d %d %d %d %d %n", file, kernel, dts, &bm, &bn, &bk,
                   &wm, &wn, &sk, &end) != 9 ||
            (p[end] != 0 && (sscanf(p + end, "%d %n", &st, &end_st) != 1 || p[end + end_st] != 0))) {
            fprintf(stderr, "gemm_check: %s:%d: expected \"<cubin> <kernel> <bf16|fp16> BM BN BK WM WN SK [ST]\"\n",
                    path, lineno);
            bad = 1;
            break;
        }
        if (parse_dtype(dts, &dt) || bm < 1 || bn < 1 || bk < 1 || wm < 1 || wn < 1 || sk < 0 || st < 0) {
            fprintf(stderr, "gemm_check: %s:%d: dtype must be bf16 or fp16, BM..WN positive, SK >= 0 (0: stream-K)\n",
                    path, lineno);
            bad = 1;
            break;
        }
        if (n == cap) {
            int ncap = cap ? cap * 2 : 16;
            variant *bigger = realloc(vs, sizeof *vs * (size_t)ncap);
            if (!bigger) {
                fprintf(stderr, "gemm_check: out of memory\n");
                bad = 1;
                break;
            }
            vs = bigger;
            cap = ncap;
        }
        variant *v = &vs[n];
        memset(v, 0, sizeof *v);
        n++;
        size_t plen = (file[0] == '/' ? 0 : (size_t)dirlen) + strlen(file) + 1;
        v->cubin_path = malloc(plen);
        v->kernel = malloc(strlen(kernel) + 1);
        if (!v->cubin_path || !v->kernel) {
            fprintf(stderr, "gemm_check: out of memory\n");
            bad = 1;
            break;
        }
        snprintf(v->cubin_path, plen, "%.*s%s", file[0] == '/' ? 0 : dirlen, path, file);
        memcpy(v->kernel, kernel, strlen(kernel) + 1);
        v->dt = dt;
        v->geo.bm = bm;
        v->geo.bn = bn;
        v->geo.bk = bk;
        v->geo.wm = wm;
        v->geo.wn = wn;
        v->geo.splitk = sk;
        v->geo.stages = st;
        errno = 0;
        if (read_file(v->cubin_path, &v->image, &v->image_len)) {
            fprintf(stderr, "gemm_check: %s:%d: %s: %s\n", path, lineno, v->cubin_path, strerror(errno));
            bad = 1;
        }
    }
    if (!bad && ferror(f)) {
        fprintf(stderr, "gemm_check: %s: read error\n", path);
        bad = 1;
    }
    fclose(f);
    if (!bad && n == 0) {
        fprintf(stderr, "gemm_check: %s: no variants\n", path);
        bad = 1;
    }
    if (bad) {
        variants_free(vs, n);
        return -1;
    }
    *out = vs;
    *count = n;
    return 0;
}

/* "MxNxK[+P],..." -> shapes. Returns the count, or -1 after printing what is wrong. */
static int parse_shapes(const char *list, shape **out)
{
    int cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    shape *ss = malloc(sizeof *ss * (size_t)cap);
    if (!ss) {
        fprintf(stderr, "gemm_check: out of memory\n");
        return -1;
    }
    int n = 0;
    const char *p = list;
    for (;;) {
        shape s = { 0, 0, 0, 0 };
        int used = 0, got = sscanf(p, "%dx%dx%d%n", &s.m, &s.n, &s.k, &used);
        if (got == 3 && p[used] == '+') {
            int more = 0;
            if (sscanf(p + used + 1, "%d%n", &s.pad, &more) != 1 || p[used + 1] == '-')
                got = 0;
            used += 1 + more;
        }
        if (got != 3 || s.m < 1 || s.n < 1 || s.k < 1 || s.pad < 0 || (p[used] && p[used] != ',') ||
            (double)s.m * (s.k + s.pad) > 1e9 || (double)s.n * (s.k + 2.0 * s.pad) > 1e9 ||
            (double)s.m * (s.n + s.pad) > 1e9) {
            fprintf(stderr, "gemm_check: bad shape in \"%s\": want MxNxK or MxNxK+P, positive, "
                    "each matrix under 1e9 elements\n", list);
            free(ss);
            return -1;
        }
        ss[n++] = s;
        if (!p[used])
            break;
        p += used + 1;
    }
    *out = ss;
    return n;
}

/* ---------------------------------------------------------------- self-test (no GPU) */

static int st_checks, st_failures;
#define ST_CHECK(cond, ...) do { st_checks++; if (!(cond)) { st_failures++; \
    fprintf(stderr, "selftest: %s:%d: ", __FILE__, __LINE__); fprintf(stderr, __VA_ARGS__); \
    fputc('\n', stderr); } } while (0)

/* The reference written another way: k outermost, long double, Kahan-compensated, straight from
 * the 16-bit inputs. */
static void naive_reference(enum dtype dt, const shape *s, const uint16_t *a, const uint16_t *w,
                            long double *sum, long double *comp)
{
    int lda = shape_lda(s), ldw = shape_ldw(s);
    for (size_t i = 0; i < (size_t)s->m * s->n; i++)
        sum[i] = comp[i] = 0;
    for (int kk = 0; kk < s->k; kk++)
        for (int i = 0; i < s->m; i++)
            for (int j = 0; j < s->n; j++) {
                long double p = (long double)from_dtype(dt, a[(size_t)i * lda + kk]) *
                                from_dtype(dt, w[(size_t)j * ldw + kk]);
                size_t o = (size_t)i * s->n + j;
                long double y = p - comp[o], t = sum[o] + y;
                comp[o] = (t - sum[o]) - y;
                sum[o] = t;
            }
}

/* What a correct fp32 kernel would write: fp32 accumulation over each split-K segment (k in
 * descending order, unlike the reference), segments summed in z order, rounded to the dtype,
 * into a poisoned buffer laid out as the device's. skip_k >= 0 leaves that k out, as a kernel
 * that drops one K element would. */
static uint16_t *simulate_kernel(enum dtype dt, const shape *s, const host_case *hc, int splitk,
                                 int skip_k, size_t *elems)
{
    int lda = shape_lda(s), ldw = shape_ldw(s), ldc = shape_ldc(s);
    int kper = kt_gemm_k_per_split(s->k, splitk, 32);
    *elems = 2 * C_GUARD + (size_t)s->m * ldc;
    uint16_t *cbuf = malloc(*elems * sizeof *cbuf);
    if (!cbuf)
        return NULL;
    for (size_t i = 0; i < *elems; i++)
        cbuf[i] = POISON16;
    for (int i = 0; i < s->m; i++)
        for (int j = 0; j < s->n; j++) {
            float total = 0;
            for (int z = 0; z < splitk; z++) {
                float part = 0;
                int k0 = z * kper, k1 = k0 + kper < s->k ? k0 + kper : s->k;
                for (int kk = k1 - 1; kk >= k0; kk--)
                    if (kk != skip_k)
                        part += (float)from_dtype(dt, hc->a[(size_t)i * lda + kk]) *
                                (float)from_dtype(dt, hc->w[(size_t)j * ldw + kk]);
                total += part;
            }
            cbuf[C_GUARD + (size_t)i * ldc + j] = to_dtype(dt, total);
        }
    return cbuf;
}

static void selftest_reference(void)
{
    /* the last is over KT_REF_THREAD_MACS: the reference is split by columns over threads */
    static const shape shapes[] = { { 1, 1, 1, 0 }, { 3, 5, 7, 0 }, { 4, 9, 33, 3 }, { 17, 13, 100, 8 },
                                    { 2, 3, 1001, 0 }, { 64, 263, 1031, 5 } };
    for (int dt = 0; dt < DT_COUNT; dt++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            const shape *s = &shapes[si];
            host_case hc;
            size_t nc = (size_t)s->m * s->n;
            long double *sum = malloc(nc * sizeof *sum), *comp = malloc(nc * sizeof *comp);
            int made = host_case_make(&hc, s, (enum dtype)dt, 7) == 0;
            ST_CHECK(made && sum && comp, "out of memory");
            if (made && sum && comp) {
                naive_reference((enum dtype)dt, s, hc.a, hc.w, sum, comp);
                int bad = 0;
                for (size_t i = 0; i < nc; i++) {
                    /* both are within K float64 roundings of the exact sum */
                    double tol = s->k * 0x1p-52 * hc.absdot[i];
                    bad += !(fabsl((long double)hc.ref[i] - sum[i]) <= tol) || !(hc.absdot[i] > 0);
                }
                ST_CHECK(!bad, "%s %dx%dx%d: %d elements differ from the long double reference",
                         dtype_names[dt], s->m, s->n, s->k, bad);
                /* inputs: nonzero, representable, padding poisoned */
                int lda = shape_lda(s), zero = 0, unpoisoned = 0;
                for (size_t i = 0; i < (size_t)s->m * lda; i++) {
                    if ((int)(i % (size_t)lda) < s->k)
                        zero += (hc.a[i] & 0x7FFFu) == 0 || !(fabs(from_dtype((enum dtype)dt, hc.a[i])) <= 1);
                    else
                        unpoisoned += hc.a[i] != POISON16;
                }
                ST_CHECK(!zero && !unpoisoned, "%s inputs: %d zero or out of range, %d padding not poison",
                         dtype_names[dt], zero, unpoisoned);
            }
            free(sum);
            free(comp);
            if (made)
                host_case_free(&hc);
        }

    /* Small integers: every product and sum is exact, so the reference must equal the integer
     * sum to the last bit. */
    shape s = { 6, 5, 37, 2 };
    int lda = shape_lda(&s), ldw = shape_ldw(&s);
    uint16_t a[6 * 39], w[5 * 41];
    double ref[30], absdot[30];
    for (int i = 0; i < s.m; i++)
        for (int kk = 0; kk < lda; kk++)
            a[i * lda + kk] = kt_f32_to_bf16((float)((i * 7 + kk * 3) % 9 - 4));
    for (int j = 0; j < s.n; j++)
        for (int kk = 0; kk < ldw; kk++)
            w[j * ldw + kk] = kt_f32_to_bf16((float)((j * 5 + kk * 11) % 7 - 3));
    ST_CHECK(reference_gemm(DT_BF16, &s, a, w, ref, absdot) == 0, "out of memory");
    int bad = 0;
    for (int i = 0; i < s.m; i++)
        for (int j = 0; j < s.n; j++) {
            long long exact = 0, exact_abs = 0;
            for (int kk = 0; kk < s.k; kk++) {
                long long p = (long long)((i * 7 + kk * 3) % 9 - 4) * ((j * 5 + kk * 11) % 7 - 3);
                exact += p;
                exact_abs += p < 0 ? -p : p;
            }
            bad += ref[i * s.n + j] != (double)exact || absdot[i * s.n + j] != (double)exact_abs;
        }
    ST_CHECK(!bad, "integer case: %d elements not exact", bad);
}

static void selftest_checker(void)
{
    for (int dt = 0; dt < DT_COUNT; dt++) {
        const char *dn = dtype_names[dt];
        /* A correct fp32 kernel passes, with and without split-K, at the largest default K. */
        shape s = { 9, 37, 4104, 8 };
        host_case hc;
        check ck;
        size_t elems;
        if (host_case_make(&hc, &s, (enum dtype)dt, 11)) {
            ST_CHECK(0, "out of memory");
            return;
        }
        int ldc = shape_ldc(&s);
        for (int sk = 1; sk <= 4; sk += 3) {
            uint16_t *cbuf = simulate_kernel((enum dtype)dt, &s, &hc, sk, -1, &elems);
            if (!cbuf)
                continue;
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(check_passed(&ck, (enum dtype)dt), "%s sk=%d: a correct output fails (err %.2e)", dn, sk, ck.err);
            ST_CHECK(ck.err > 0 && ck.err < norm_bound((enum dtype)dt) / 2,
                     "%s sk=%d: err %.2e not well inside the bound", dn, sk, ck.err);
            printf("gemm_check selftest: simulated fp32 kernel %s %dx%dx%d+%d sk=%d: err=%.2e "
                   "(bound %.2e), worst element at %.2f of its bound\n", dn, s.m, s.n, s.k, s.pad, sk,
                   ck.err, norm_bound((enum dtype)dt), ck.elem_worst);

            /* Each kind of damage is caught on its own. */
            size_t in = C_GUARD + 4 * (size_t)ldc + 7;     /* an element inside the matrix */
            uint16_t keep = cbuf[in];
            cbuf[in] = POISON16;                            /* left unwritten */
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(!check_passed(&ck, (enum dtype)dt) && ck.nonfinite == 1 && isnan(ck.err), "%s: unwritten element passes", dn);
            double r47 = hc.ref[4 * s.n + 7];           /* one element off by twice its bound */
            double b47 = out_roundoff((enum dtype)dt) * fabs(r47) + s.k * 0x1p-22 * hc.absdot[4 * s.n + 7];
            cbuf[in] = to_dtype((enum dtype)dt, (float)(r47 + 2 * b47));
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(!check_passed(&ck, (enum dtype)dt) && ck.elem_bad == 1, "%s: one wrong element passes", dn);
            cbuf[in] = keep;
            cbuf[C_GUARD + 2 * (size_t)ldc + s.n] = 0;      /* a padding column written */
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(!check_passed(&ck, (enum dtype)dt) && ck.pad_written == 1, "%s: padding write passes", dn);
            cbuf[C_GUARD + 2 * (size_t)ldc + s.n] = POISON16;
            cbuf[C_GUARD - 1] = 0;                          /* just before C */
            cbuf[elems - 1] = 0;                            /* the end of the tail guard */
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(!check_passed(&ck, (enum dtype)dt) && ck.guard_written == 2, "%s: guard writes pass", dn);
            free(cbuf);
        }
        /* One K element dropped (an off-by-one at the K edge) fails on the norm alone. */
        uint16_t *cbuf = simulate_kernel((enum dtype)dt, &s, &hc, 1, s.k - 1, &elems);
        if (cbuf) {
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(!check_passed(&ck, (enum dtype)dt) && ck.err > norm_bound((enum dtype)dt),
                     "%s: dropping k=K-1 passes (err %.2e)", dn, ck.err);
            /* every element off by twice the norm bound, relative: fails the norm bound */
            for (int i = 0; i < s.m; i++)
                for (int j = 0; j < s.n; j++)
                    cbuf[C_GUARD + (size_t)i * ldc + j] =
                        to_dtype((enum dtype)dt, (float)(hc.ref[i * s.n + j] * (1 + 2 * norm_bound((enum dtype)dt))));
            check_output(&ck, cbuf, elems, &s, (enum dtype)dt, &hc);
            ST_CHECK(!check_passed(&ck, (enum dtype)dt) && ck.err > norm_bound((enum dtype)dt),
                     "%s: output scaled by 1+2*bound passes (err %.2e)", dn, ck.err);
            free(cbuf);
        }
        host_case_free(&hc);
    }
}

/* gemm_ref.h's row sampling (ktrt_check and bench_gemm judge large outputs on sampled rows): the
 * rows are distinct, ascending, in range, include the first and last, and a damaged element in a
 * checked row fails while an unwritten one fails wherever it is. */
static void selftest_sampling(void)
{
    int rows[64];
    for (int m = 1; m <= 300; m += 37)
        for (int max = 1; max <= 9; max += 4) {
            int n = kt_ref_sample_rows(m, max, (uint64_t)m * 31 + max, rows), bad = 0;
            for (int i = 0; i < n; i++)
                bad += rows[i] < 0 || rows[i] >= m || (i && rows[i] <= rows[i - 1]);
            int want = m <= max ? m : max;
            ST_CHECK(!bad && n == want && rows[0] == 0 && (max < 2 || rows[n - 1] == m - 1),
                     "sample_rows(m=%d, max=%d): %d rows, %d out of order or range", m, max, n, bad);
        }
    shape s = { 40, 24, 300, 4 };
    host_case hc;
    if (host_case_make(&hc, &s, DT_BF16, 3)) {
        ST_CHECK(0, "out of memory");
        return;
    }
    size_t elems;
    uint16_t *cbuf = simulate_kernel(DT_BF16, &s, &hc, 1, -1, &elems);
    int n = kt_ref_sample_rows(s.m, 5, 9, rows);
    double *ref = malloc(sizeof *ref * (size_t)n * s.n), *absdot = malloc(sizeof *absdot * (size_t)n * s.n);
    if (cbuf && ref && absdot) {
        for (int r = 0; r < n; r++) {
            memcpy(ref + (size_t)r * s.n, hc.ref + (size_t)rows[r] * s.n, sizeof *ref * s.n);
            memcpy(absdot + (size_t)r * s.n, hc.absdot + (size_t)rows[r] * s.n, sizeof *absdot * s.n);
        }
        kt_ref_check ck;
        int ldc = shape_ldc(&s);
        kt_ref_check_output(&ck, KT_REF_BF16, cbuf, elems, C_GUARD, s.m, s.n, s.k, ldc, rows, n, ref, absdot);
        ST_CHECK(kt_ref_check_passed(&ck, KT_REF_BF16), "sampled rows: a correct output fails (err %.2e)", ck.err);
        int unsampled = rows[1] - 1;                   /* rows[0] = 0, rows[1] > 1 at m = 40, max = 5 */
        size_t at = C_GUARD + (size_t)unsampled * ldc + 3;
        uint16_t keep = cbuf[at];
        cbuf[at] = POISON16;
        kt_ref_check_output(&ck, KT_REF_BF16, cbuf, elems, C_GUARD, s.m, s.n, s.k, ldc, rows, n, ref, absdot);
        ST_CHECK(!kt_ref_check_passed(&ck, KT_REF_BF16) && ck.nonfinite == 1,
                 "sampled rows: an unwritten element in an unchecked row passes");
        cbuf[at] = keep;
        at = C_GUARD + (size_t)rows[2] * ldc + 5;
        cbuf[at] = to_dtype(DT_BF16, (float)(hc.ref[(size_t)rows[2] * s.n + 5] + 1.0));
        kt_ref_check_output(&ck, KT_REF_BF16, cbuf, elems, C_GUARD, s.m, s.n, s.k, ldc, rows, n, ref, absdot);
        ST_CHECK(!kt_ref_check_passed(&ck, KT_REF_BF16) && ck.elem_bad == 1,
                 "sampled rows: a wrong element in a checked row passes");
    } else {
        ST_CHECK(0, "out of memory");
    }
    free(cbuf);
    free(ref);
    free(absdot);
    host_case_free(&hc);
}

static int selftest(void)
{
    /* The conversions' spot values (tests/unit/test_half_convert.c checks them exhaustively). */
    ST_CHECK(kt_f32_to_bf16(1.0f) == 0x3F80 && kt_f32_to_f16(1.0f) == 0x3C00, "1.0");
    ST_CHECK(kt_f32_to_bf16(kt_f32_from_bits(0x3F808000u)) == 0x3F80, "bf16 tie to even, down");
    ST_CHECK(kt_f32_to_bf16(kt_f32_from_bits(0x3F818000u)) == 0x3F82, "bf16 tie to even, up");
    ST_CHECK(kt_f32_to_f16(65520.0f) == 0x7C00 && kt_f32_to_f16(0x1p-24f) == 0x0001, "fp16 edges");
    selftest_reference();
    selftest_checker();
    selftest_sampling();
    printf("gemm_check selftest: %d checks, %d failed\n", st_checks, st_failures);
    return st_failures ? 1 : 0;
}

/* ---------------------------------------------------------------- main */

static void usage(FILE *to)
{
    fprintf(to, "usage: gemm_check MANIFEST [--shapes MxNxK[+P],...] [--seed S] [--tsv FILE] [--timeout S]\n"
                "       gemm_check --selftest\n"
                "MANIFEST lines: <cubin> <kernel> <bf16|fp16> BM BN BK WM WN SK\n"
                "--timeout: seconds a variant may go without finishing a shape (default %d)\n"
                "exit: 0 all passed, 1 a failure or bad input, 2 no CUDA device\n", CASE_TIMEOUT_S);
}

static int parse_uint(const char *s, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno || !*s || *end || *s == '-' || v > max)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    const char *manifest = NULL, *shapes_arg = NULL, *tsv_path = NULL;
    unsigned long long seed = 1, timeout_s = CASE_TIMEOUT_S;
    int self = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--selftest")) {
            self = 1;
        } else if (!strcmp(a, "--shapes") && i + 1 < argc) {
            shapes_arg = argv[++i];
        } else if (!strcmp(a, "--tsv") && i + 1 < argc) {
            tsv_path = argv[++i];
        } else if (!strcmp(a, "--seed") && i + 1 < argc) {
            if (parse_uint(argv[++i], ~0ull, &seed)) {
                fprintf(stderr, "gemm_check: bad seed \"%s\"\n", argv[i]);
                return 1;
            }
        } else if (!strcmp(a, "--timeout") && i + 1 < argc) {
            if (parse_uint(argv[++i], 86400, &timeout_s) || timeout_s < 1) {
                fprintf(stderr, "gemm_check: bad timeout \"%s\"\n", argv[i]);
                return 1;
            }
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] != '-' && !manifest) {
            manifest = a;
        } else {
            usage(stderr);
            return 1;
        }
    }
    if (self)
        return selftest();
    if (!manifest) {
        usage(stderr);
        return 1;
    }

    variant *vs = NULL;
    shape *shapes = NULL;
    host_case (*cases)[DT_COUNT] = NULL;
    uint16_t *cbuf = NULL;
    uint32_t *wsbuf = NULL;
    FILE *tsv = NULL;
    int nv = 0, ns, status = 1;

    if (load_manifest(manifest, &vs, &nv))
        return 1;
    if (shapes_arg) {
        ns = parse_shapes(shapes_arg, &shapes);
    } else {
        ns = (int)(sizeof default_shapes / sizeof default_shapes[0]);
        shapes = malloc(sizeof default_shapes);
        if (shapes)
            memcpy(shapes, default_shapes, sizeof default_shapes);
        else
            fprintf(stderr, "gemm_check: out of memory\n");
    }
    if (ns < 0 || !shapes)
        goto done;

    char name[256];
    int units = 0;
    status = probe_device(name, sizeof name, &units);
    if (status)
        goto done;
    status = 1;

    /* Inputs and references for every (shape, dtype) the manifest uses. */
    int used[DT_COUNT] = { 0 };
    for (int i = 0; i < nv; i++)
        used[vs[i].dt] = 1;
    cases = calloc((size_t)ns, sizeof *cases);
    if (!cases) {
        fprintf(stderr, "gemm_check: out of memory\n");
        goto done;
    }
    clock_t t0 = clock();
    for (int i = 0; i < ns; i++)
        for (int dt = 0; dt < DT_COUNT; dt++)
            if (used[dt] && host_case_make(&cases[i][dt], &shapes[i], (enum dtype)dt, seed)) {
                fprintf(stderr, "gemm_check: out of memory for the reference\n");
                goto done;
            }
    printf("gemm_check: %d shapes, seed %llu, references in %.2f s of CPU\n", ns, seed,
           (double)(clock() - t0) / CLOCKS_PER_SEC);

    device_run dr;
    tally t = { NULL, -1, 0, 0 };
    memset(&dr, 0, sizeof dr);
    dr.units = units;
    dr.shapes = shapes;
    dr.nshapes = ns;
    dr.cases = cases;
    dr.t = &t;
    for (int i = 0; i < ns; i++) {
        const shape *s = &shapes[i];
        size_t na = (size_t)s->m * shape_lda(s), nw = (size_t)s->n * shape_ldw(s);
        size_t nc = 2 * C_GUARD + (size_t)s->m * shape_ldc(s);
        dr.a_elems = na > dr.a_elems ? na : dr.a_elems;
        dr.w_elems = nw > dr.w_elems ? nw : dr.w_elems;
        dr.c_elems = nc > dr.c_elems ? nc : dr.c_elems;
        for (int j = 0; j < nv; j++) {
            long long need = kt_gemm_partials_needed(&vs[j].geo, s->m, s->n, units);
            dr.ws_elems = need > dr.ws_elems ? need : dr.ws_elems;
        }
    }
    cbuf = malloc(dr.c_elems * sizeof *cbuf);
    wsbuf = dr.ws_elems ? malloc((size_t)dr.ws_elems * sizeof *wsbuf) : NULL;
    if (!cbuf || (dr.ws_elems && !wsbuf)) {
        fprintf(stderr, "gemm_check: out of memory\n");
        goto done;
    }
    dr.cbuf = cbuf;
    dr.wsbuf = wsbuf;
    if (tsv_path) {
        tsv = fopen(tsv_path, "w");
        if (!tsv) {
            fprintf(stderr, "gemm_check: %s: %s\n", tsv_path, strerror(errno));
            goto done;
        }
        fputs(tsv_header, tsv);
        t.tsv = tsv;
    }

    for (int i = 0; i < nv; i++)
        run_variant_isolated(&dr, &vs[i], (int)timeout_s);
    printf("gemm_check: %d variants x %d shapes: %d passed, %d failed on %s\n", nv, ns, t.passed,
           t.failed, name);
    status = t.failed || t.passed != nv * ns ? 1 : 0;
    if (tsv && fclose(tsv) != 0) {
        fprintf(stderr, "gemm_check: %s: write error\n", tsv_path);
        status = 1;
    }
    tsv = NULL;

done:
    if (tsv)
        fclose(tsv);
    if (cases)
        for (int i = 0; i < ns; i++)
            for (int dt = 0; dt < DT_COUNT; dt++)
                host_case_free(&cases[i][dt]);
    free(cases);
    free(cbuf);
    free(wsbuf);
    free(shapes);
    variants_free(vs, nv);
    return status;
}
