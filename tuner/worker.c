/* worker.c: one GPU's share of a sweep. Per problem: fresh random inputs, the GPU reference
 * (templates/ref/gemm_ref.hip, double accumulation), each variant verified on NaN-poisoned
 * outputs, then every verified variant timed by tuner/timing.c, interleaved, with a control. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "db.h"
#include "db_tuner.h"
#include "gemm_geometry.h"
#include "problem_key.h"
#include "timing.h"
#include "worker.h"
#include "kernel_name.h"
#include "half_convert.h"
#include "random_inputs.h"

#define WK_MAX_VARIANTS 512
#define WK_MAX_SETS 32

typedef struct wk_variant {
    char hash[72], name[KT_KERNEL_NAME_MAX];
    kt_gemm_variant v;
    int verify;             /* 1: verify before timing; 0: verified earlier, time only */
    int ok;                 /* passed (or skipped) verification */
    void *module, *fn, *fn_reduce;
} wk_variant;

typedef struct wk_state {
    ktb_backend *b;
    void *stream;
    kt_db *db;
    const char *target;
    ktb_device_info info;
    /* the problem in hand */
    char dtype[8];
    int m, n, k, cold, rounds, sets;
    unsigned long long seed;
    char control[72];
    wk_variant *vars;
    int nvars;
    void *a[WK_MAX_SETS], *w[WK_MAX_SETS], *c[WK_MAX_SETS];
    void *partials, *ref_dev;
    long long partials_elems;
    uint16_t *h_c;
    double *h_ref;
    char err[1024];
} wk_state;

double wk_error_bound(const char *dtype) { return strcmp(dtype, "fp16") == 0 ? 0x1p-9 : 0x1p-8; }

static double wk_elem_to_double(int fp16, uint16_t h) { return fp16 ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }

static void wk_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wk_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

/* A context-poisoning fault: nothing further can run in this process. */
static int wk_fatal_error(const char *msg)
{
    return strstr(msg, "ILLEGAL") || strstr(msg, "LAUNCH_TIMEOUT") || strstr(msg, "MISALIGNED") ||
           strstr(msg, "HARDWARE_STACK") || strstr(msg, "ILLEGAL_INSTRUCTION") || strstr(msg, "LAUNCH_FAILED") ||
           strstr(msg, "hipErrorIllegal") || strstr(msg, "hipErrorLaunchFailure");
}

static void wk_one_line(char *s)
{
    for (; *s; s++)
        if (*s == '\n' || *s == '\r') *s = ' ';
}

static void wk_free_problem(wk_state *st)
{
    char e[256];
    for (int i = 0; i < st->nvars; i++)
        if (st->vars[i].module) ktb_module_unload(st->b, st->vars[i].module, e, sizeof e);
    free(st->vars);
    st->vars = NULL;
    st->nvars = 0;
    for (int s = 0; s < WK_MAX_SETS; s++) {
        if (st->a[s]) ktb_free(st->b, st->a[s], e, sizeof e);
        if (st->w[s]) ktb_free(st->b, st->w[s], e, sizeof e);
        if (st->c[s]) ktb_free(st->b, st->c[s], e, sizeof e);
        st->a[s] = st->w[s] = st->c[s] = NULL;
    }
    if (st->partials) ktb_free(st->b, st->partials, e, sizeof e);
    if (st->ref_dev) ktb_free(st->b, st->ref_dev, e, sizeof e);
    st->partials = st->ref_dev = NULL;
    free(st->h_c);
    free(st->h_ref);
    st->h_c = NULL;
    st->h_ref = NULL;
    st->control[0] = 0;
}

static int wk_load(wk_state *st, const char *name, void **module, void **fn, void **fn_reduce)
{
    void *code = NULL;
    size_t len = 0;
    int found = db_kernel_code(st->db, st->target, name, &code, &len, st->err, sizeof st->err);
    if (found <= 0) {
        if (found == 0) snprintf(st->err, sizeof st->err, "kernel %s for %s is not in the database", name, st->target);
        return -1;
    }
    int rc = ktb_module_load(st->b, code, len, module, st->err, sizeof st->err);
    free(code);
    if (rc) return -1;
    if (ktb_function(st->b, *module, name, fn, st->err, sizeof st->err)) return -1;
    if (fn_reduce) {
        char rname[KT_KERNEL_NAME_MAX + 8];
        snprintf(rname, sizeof rname, "%s_reduce", name);
        /* none: the variant reduces in its own launch (templates/abi/gemm.h) */
        char ignored[384];
        if (ktb_function(st->b, *module, rname, fn_reduce, ignored, sizeof ignored)) *fn_reduce = NULL;
    }
    return 0;
}

static kt_gemm_args wk_args(const wk_state *st, const kt_gemm_variant *v, int set)
{
    kt_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a = st->a[set];
    a.w = st->w[set];
    a.c = st->c[set];
    a.partials = st->partials;
    a.partials_elems = st->partials_elems;
    a.m = st->m;
    a.n = st->n;
    a.k = st->k;
    a.lda = st->k;
    a.ldw = st->k;
    a.ldc = st->n;
    a.k_per_split = kt_gemm_k_per_split(st->k, v->splitk, v->bk);
    return a;
}

static int wk_enqueue_variant(wk_state *st, const wk_variant *wv, void *fn, void *fn_reduce, int set, void *stream,
                              char *err, size_t errlen)
{
    kt_gemm_args a = wk_args(st, &wv->v, set);
    kt_launch_dims d = kt_gemm_main_dims(&wv->v, st->m, st->n, st->info.wave_size, st->info.compute_units);
    if (ktb_launch(st->b, fn, d.grid, d.block, d.shared, stream, &a, sizeof a, err, errlen)) return -1;
    if (wv->v.splitk > 1 && fn_reduce) {
        kt_launch_dims r = kt_gemm_reduce_dims(st->m, st->n);
        if (ktb_launch(st->b, fn_reduce, r.grid, r.block, r.shared, stream, &a, sizeof a, err, errlen)) return -1;
    }
    return 0;
}

typedef struct wk_item_ctx {
    wk_state *st;
    const wk_variant *wv;
    void *fn, *fn_reduce;
} wk_item_ctx;

static int wk_item_enqueue(void *ctx, int set, void *stream, char *err, size_t errlen)
{
    wk_item_ctx *c = ctx;
    return wk_enqueue_variant(c->st, c->wv, c->fn, c->fn_reduce, set, stream, err, errlen);
}

/* Buffers and inputs for the problem; the reference result in st->h_ref. */
static int wk_prepare(wk_state *st)
{
    int fp16 = strcmp(st->dtype, "fp16") == 0;
    size_t ea = (size_t)st->m * st->k, ew = (size_t)st->n * st->k, ec = (size_t)st->m * st->n;
    long long per_set = 2LL * (long long)(ea + ew + ec);
    st->sets = st->cold ? tm_cold_sets(st->info.l2_bytes, per_set, WK_MAX_SETS) : 1;
    uint16_t *h_a = malloc(ea * 2), *h_w = malloc(ew * 2);
    st->h_c = malloc(ec * 2);
    st->h_ref = malloc(ec * sizeof(double));
    if (!h_a || !h_w || !st->h_c || !st->h_ref) {
        free(h_a);
        free(h_w);
        snprintf(st->err, sizeof st->err, "host out of memory for m=%d n=%d k=%d", st->m, st->n, st->k);
        return -1;
    }
    uint64_t rng = st->seed;
    for (size_t i = 0; i < ea; i++) h_a[i] = kt_rand_input(fp16, &rng);
    for (size_t i = 0; i < ew; i++) h_w[i] = kt_rand_input(fp16, &rng);
    int rc = -1;
    long long max_partials = 1;
    for (int i = 0; i < st->nvars; i++) {
        long long need = kt_gemm_partials_needed(&st->vars[i].v, st->m, st->n, st->info.compute_units);
        if (need > max_partials) max_partials = need;
    }
    st->partials_elems = max_partials;
    for (int s = 0; s < st->sets; s++) {
        if (ktb_alloc(st->b, ea * 2, &st->a[s], st->err, sizeof st->err) ||
            ktb_alloc(st->b, ew * 2, &st->w[s], st->err, sizeof st->err) ||
            ktb_alloc(st->b, ec * 2, &st->c[s], st->err, sizeof st->err) ||
            ktb_copy_h2d(st->b, st->a[s], h_a, ea * 2, st->err, sizeof st->err) ||
            ktb_copy_h2d(st->b, st->w[s], h_w, ew * 2, st->err, sizeof st->err))
            goto done;
    }
    if (ktb_alloc(st->b, (size_t)max_partials * 4, &st->partials, st->err, sizeof st->err) ||
        ktb_memset8(st->b, st->partials, 0, (size_t)max_partials * 4, st->err, sizeof st->err) ||   /* tile counters */
        ktb_alloc(st->b, ec * sizeof(double), &st->ref_dev, st->err, sizeof st->err))
        goto done;

    /* GPU reference in double */
    char ref_name[64];
    snprintf(ref_name, sizeof ref_name, "kt_gemm_ref_%s", st->dtype);
    void *ref_mod = NULL, *ref_fn = NULL;
    if (wk_load(st, ref_name, &ref_mod, &ref_fn, NULL)) {
        if (ref_mod) ktb_module_unload(st->b, ref_mod, NULL, 0);
        goto done;
    }
    kt_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a = st->a[0];
    a.w = st->w[0];
    a.c = st->ref_dev;
    a.m = st->m;
    a.n = st->n;
    a.k = st->k;
    a.lda = a.ldw = st->k;
    a.ldc = st->n;
    unsigned grid[3] = {(unsigned)((st->n + 15) / 16), (unsigned)((st->m + 15) / 16), 1}, block[3] = {256, 1, 1};
    int bad = ktb_launch(st->b, ref_fn, grid, block, 0, st->stream, &a, sizeof a, st->err, sizeof st->err) ||
              ktb_sync(st->b, st->stream, st->err, sizeof st->err) ||
              ktb_copy_d2h(st->b, st->h_ref, st->ref_dev, ec * sizeof(double), st->err, sizeof st->err);
    ktb_module_unload(st->b, ref_mod, NULL, 0);
    if (bad) goto done;
    rc = 0;
done:
    free(h_a);
    free(h_w);
    return rc;
}

/* ||out - ref|| / ||ref||; NaN when any output is NaN/Inf (unwritten: the poison is NaN). */
static double wk_rel_error(const wk_state *st)
{
    int fp16 = strcmp(st->dtype, "fp16") == 0;
    size_t ec = (size_t)st->m * st->n;
    double num = 0, den = 0;
    for (size_t i = 0; i < ec; i++) {
        double o = wk_elem_to_double(fp16, st->h_c[i]);
        if (!isfinite(o)) return NAN;
        double d = o - st->h_ref[i];
        num += d * d;
        den += st->h_ref[i] * st->h_ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* Returns 0 normally, 3 when the context is poisoned (the caller exits). */
static int wk_verify(wk_state *st, wk_variant *wv)
{
    size_t ec = (size_t)st->m * st->n;
    wk_say("begin %s", wv->hash);
    char e[1024] = "";
    if (ktb_memset8(st->b, st->c[0], 0xff, ec * 2, e, sizeof e) ||
        ktb_memset8(st->b, st->partials, 0xff, (size_t)kt_gemm_slab_bytes(st->partials_elems), e, sizeof e) ||
        wk_enqueue_variant(st, wv, wv->fn, wv->fn_reduce, 0, st->stream, e, sizeof e) ||
        ktb_sync(st->b, st->stream, e, sizeof e) ||
        ktb_copy_d2h(st->b, st->h_c, st->c[0], ec * 2, e, sizeof e)) {
        wk_one_line(e);
        if (wk_fatal_error(e)) {
            wk_say("verified %s crash nan %s", wv->hash, e);
            return 3;
        }
        wk_say("verified %s error nan %s", wv->hash, e);
        return 0;
    }
    double rel = wk_rel_error(st);
    double bound = wk_error_bound(st->dtype);
    wv->ok = !isnan(rel) && rel <= bound;
    if (wv->ok) wk_say("verified %s ok %.6e -", wv->hash, rel);
    else if (isnan(rel)) wk_say("verified %s wrong nan output has NaN/Inf (unwritten or overflow)", wv->hash);
    else wk_say("verified %s wrong %.6e error over the %s bound %.3e", wv->hash, rel, st->dtype, bound);
    return 0;
}

static int wk_time(wk_state *st)
{
    int n = 0;
    for (int i = 0; i < st->nvars; i++) n += st->vars[i].ok;
    if (n == 0) return 0;
    /* the control: the requested code object if it passed, else the first that did */
    int ci = -1;
    for (int i = 0; i < st->nvars; i++)
        if (st->vars[i].ok && ci < 0) ci = i;
    for (int i = 0; i < st->nvars; i++)
        if (st->vars[i].ok && strcmp(st->vars[i].hash, st->control) == 0) ci = i;
    int want_control = st->control[0] != 0;
    int total = n + (want_control ? 1 : 0);
    tm_item *items = calloc((size_t)total, sizeof *items);
    wk_item_ctx *ctx = calloc((size_t)total, sizeof *ctx);
    tm_result *res = calloc((size_t)total, sizeof *res);
    int *which = calloc((size_t)total, sizeof *which);
    void *ctl_mod = NULL;
    int rc = -1;
    if (!items || !ctx || !res || !which) { snprintf(st->err, sizeof st->err, "out of memory"); goto done; }
    int j = 0;
    for (int i = 0; i < st->nvars; i++) {
        if (!st->vars[i].ok) continue;
        ctx[j] = (wk_item_ctx){st, &st->vars[i], st->vars[i].fn, st->vars[i].fn_reduce};
        which[j++] = i;
    }
    if (want_control) {
        /* the control is the same code object loaded a second time: identical code, own module */
        const wk_variant *cv = &st->vars[ci];
        void *fn = NULL, *fr = NULL;
        if (wk_load(st, cv->name, &ctl_mod, &fn, cv->v.splitk > 1 ? &fr : NULL)) goto done;
        ctx[j] = (wk_item_ctx){st, cv, fn, fr};
        which[j++] = ci;
    }
    for (int t = 0; t < total; t++) {
        items[t].enqueue = wk_item_enqueue;
        items[t].ctx = &ctx[t];
        items[t].launches = st->sets;
        if (tm_capture(st->b, st->stream, &items[t], st->err, sizeof st->err)) goto done;
    }
    tm_options o = {.warmup_ms = 30, .rounds = st->rounds};
    if (tm_time_interleaved(st->b, st->stream, items, total, &o, res, st->err, sizeof st->err)) goto done;
    for (int t = 0; t < n; t++)
        wk_say("timed %s %.4f %.4f %.4f %d %d", st->vars[which[t]].hash, res[t].median_us, res[t].min_us,
               res[t].max_us, res[t].reps, st->sets);
    if (want_control) {
        int first = -1;
        for (int t = 0; t < n; t++)
            if (which[t] == ci) first = t;
        wk_say("control %s %.4f %.4f", st->vars[ci].hash, res[first].median_us, res[n].median_us);
    }
    rc = 0;
done:
    if (items)
        for (int t = 0; t < total; t++) tm_release(st->b, &items[t]);
    if (ctl_mod) ktb_module_unload(st->b, ctl_mod, NULL, 0);
    free(items);
    free(ctx);
    free(res);
    free(which);
    return rc;
}

/* Returns 0 to go on, 3 to exit (poisoned context). */
static int wk_run_problem(wk_state *st)
{
    if (wk_prepare(st)) {
        wk_one_line(st->err);
        wk_say("fail %s", st->err);
        return wk_fatal_error(st->err) ? 3 : 0;
    }
    for (int i = 0; i < st->nvars; i++) {
        wk_variant *wv = &st->vars[i];
        if (wk_load(st, wv->name, &wv->module, &wv->fn, wv->v.splitk > 1 ? &wv->fn_reduce : NULL)) {
            wk_one_line(st->err);
            wk_say("verified %s error nan %s", wv->hash, st->err);
            wv->ok = 0;
            continue;
        }
        if (wv->verify) {
            if (wk_verify(st, wv) == 3) return 3;
        } else {
            wv->ok = 1;
        }
    }
    if (wk_time(st)) {
        wk_one_line(st->err);
        wk_say("fail timing: %s", st->err);
        if (wk_fatal_error(st->err)) return 3;
    }
    wk_say("done");
    return 0;
}

static int wk_open(wk_state *st, const char *db_path, const char *target, int device)
{
    memset(st, 0, sizeof *st);
    st->target = target;
    const char *vendor = strncmp(target, "sm_", 3) == 0 ? "cuda" : "hip";
    if (db_open(db_path, 0, &st->db, st->err, sizeof st->err)) return -1;
    if (ktb_open(vendor, device, &st->b, st->err, sizeof st->err) ||
        ktb_info(st->b, &st->info, st->err, sizeof st->err) ||
        ktb_stream_create(st->b, &st->stream, st->err, sizeof st->err))
        return -1;
    return 0;
}

static void wk_close(wk_state *st)
{
    wk_free_problem(st);
    if (st->stream) ktb_stream_destroy(st->b, st->stream, NULL, 0);
    ktb_close(st->b);
    db_close(st->db);
}

/* Device-to-device copy bandwidth (bytes read + written per second), for the report's ceilings. */
static double wk_copy_gbps(wk_state *st)
{
    size_t bytes = (size_t)1 << 30;
    void *src = NULL, *dst = NULL, *e0 = NULL, *e1 = NULL;
    double gbps = 0;
    char e[512];
    if (ktb_alloc(st->b, bytes, &src, e, sizeof e) || ktb_alloc(st->b, bytes, &dst, e, sizeof e) ||
        ktb_event_create(st->b, &e0, e, sizeof e) || ktb_event_create(st->b, &e1, e, sizeof e))
        goto done;
    double best = 0;
    for (int r = 0; r < 6; r++) {
        float ms = 0;
        if (ktb_event_record(st->b, e0, st->stream, e, sizeof e) ||
            ktb_copy_d2d_async(st->b, dst, src, bytes, st->stream, e, sizeof e) ||
            ktb_event_record(st->b, e1, st->stream, e, sizeof e) ||
            ktb_event_elapsed_ms(st->b, e0, e1, &ms, e, sizeof e))
            goto done;
        double g = 2.0 * (double)bytes / (ms * 1e-3) / 1e9;
        if (r > 0 && g > best) best = g;   /* first copy warms up */
    }
    gbps = best;
done:
    if (e0) ktb_event_destroy(st->b, e0, e, sizeof e);
    if (e1) ktb_event_destroy(st->b, e1, e, sizeof e);
    if (src) ktb_free(st->b, src, e, sizeof e);
    if (dst) ktb_free(st->b, dst, e, sizeof e);
    return gbps;
}

static int wk_parse_variant(wk_state *st, const char *line)
{
    if (st->nvars >= WK_MAX_VARIANTS) return -1;
    wk_variant *wv = &st->vars[st->nvars];
    memset(wv, 0, sizeof *wv);
    if (sscanf(line, "variant %71s " KT_KERNEL_NAME_SCAN " %d %d %d %d %d %d %d %d", wv->hash, wv->name, &wv->v.bm, &wv->v.bn, &wv->v.bk,
               &wv->v.wm, &wv->v.wn, &wv->v.splitk, &wv->v.stages, &wv->verify) != 10 || wv->v.splitk < 0 ||
        wv->v.stages < 0)
        return -1;
    st->nvars++;
    return 0;
}

int wk_main(const char *db_path, const char *target, int device)
{
    wk_state st;
    if (wk_open(&st, db_path, target, device)) {
        wk_one_line(st.err);
        wk_say("fail %s", st.err);
        wk_close(&st);
        return 1;
    }
    char key[96];
    kt_device_key(key, sizeof key, st.info.arch, st.info.compute_units, st.info.pci_device_id);
    wk_say("ready %s %lld %d %.1f %s", key, st.info.l2_bytes, st.info.compute_units, wk_copy_gbps(&st), st.info.name);
    char line[1024];
    int status = 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "problem ", 8) == 0) {
            wk_free_problem(&st);
            st.vars = calloc(WK_MAX_VARIANTS, sizeof *st.vars);
            if (!st.vars ||
                sscanf(line, "problem %7s %d %d %d %d %llu %d", st.dtype, &st.m, &st.n, &st.k, &st.cold, &st.seed,
                       &st.rounds) != 7 || st.m < 1 || st.n < 1 || st.k < 1) {
                wk_say("fail bad problem line: %s", line);
                continue;
            }
        } else if (strncmp(line, "variant ", 8) == 0) {
            if (!st.vars || wk_parse_variant(&st, line)) wk_say("fail bad variant line: %s", line);
        } else if (strncmp(line, "control ", 8) == 0) {
            snprintf(st.control, sizeof st.control, "%s", line + 8);
        } else if (strcmp(line, "run") == 0) {
            if (!st.vars) { wk_say("fail run without a problem"); continue; }
            if (wk_run_problem(&st) == 3) { status = 3; break; }
            wk_free_problem(&st);
        } else if (line[0]) {
            wk_say("fail unknown message: %s", line);
        }
    }
    wk_close(&st);
    return status;
}

/* ---- device test: the GPU reference against float64 on the CPU ---- */

int wk_check_reference(const char *db_path, const char *target, int device)
{
    static const int shapes[][3] = {{1, 1536, 4096}, {7, 100, 77}, {64, 1024, 1024}, {300, 520, 1000},
                                    {33, 4096, 3584}, {129, 257, 4099}};
    wk_state st;
    if (wk_open(&st, db_path, target, device)) {
        fprintf(stderr, "check-reference: %s\n", st.err);
        wk_close(&st);
        return 1;
    }
    printf("check-reference: %s (%s)\n", st.info.name, st.info.arch);
    int failed = 0, total = 0;
    double worst = 0;
    for (int d = 0; d < 2; d++) {
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
            snprintf(st.dtype, sizeof st.dtype, "%s", d ? "fp16" : "bf16");
            st.m = shapes[s][0];
            st.n = shapes[s][1];
            st.k = shapes[s][2];
            st.cold = 0;
            st.seed = 0x5eed0000ull + s * 31 + (unsigned)d;
            st.vars = calloc(1, sizeof *st.vars);
            total++;
            if (!st.vars || wk_prepare(&st)) {
                printf("  FAIL %s m=%d n=%d k=%d: %s\n", st.dtype, st.m, st.n, st.k, st.err);
                failed++;
                wk_free_problem(&st);
                continue;
            }
            /* regenerate the inputs on the host exactly as wk_prepare drew them */
            int fp16 = d;
            size_t ea = (size_t)st.m * st.k, ew = (size_t)st.n * st.k;
            uint16_t *h_a = malloc(ea * 2), *h_w = malloc(ew * 2);
            uint64_t rng = st.seed;
            for (size_t i = 0; i < ea; i++) h_a[i] = kt_rand_input(fp16, &rng);
            for (size_t i = 0; i < ew; i++) h_w[i] = kt_rand_input(fp16, &rng);
            double num = 0, den = 0;
            for (int i = 0; i < st.m; i++)
                for (int j = 0; j < st.n; j++) {
                    double acc = 0;
                    for (int kk = 0; kk < st.k; kk++)
                        acc += wk_elem_to_double(fp16, h_a[(size_t)i * st.k + kk]) *
                               wk_elem_to_double(fp16, h_w[(size_t)j * st.k + kk]);
                    double g = st.h_ref[(size_t)i * st.n + j];
                    num += (g - acc) * (g - acc);
                    den += acc * acc;
                }
            free(h_a);
            free(h_w);
            double rel = den > 0 ? sqrt(num / den) : sqrt(num);
            /* both sum exact products in double, in different orders: ~K * 2^-53 apart */
            int ok = isfinite(rel) && rel <= 1e-12;
            if (rel > worst || !isfinite(rel)) worst = rel;
            failed += !ok;
            printf("  %s %s m=%d n=%d k=%d  rel diff %.3e\n", ok ? "ok  " : "FAIL", st.dtype, st.m, st.n, st.k, rel);
            wk_free_problem(&st);
        }
    }
    printf("check-reference: %d shapes, %d failed, worst rel diff %.3e (bound 1e-12)\n", total, failed, worst);
    wk_close(&st);
    return failed ? 1 : 0;
}
