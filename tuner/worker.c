/* worker.c: one GPU's share of a sweep, for any op family (runtime/op.h). Per problem: the op's
 * buffers with fresh random inputs, its reference (a GPU reference kernel, or the float64 CPU
 * reference), each variant verified on poisoned outputs with in-place operands restored, then every
 * verified variant timed by tuner/timing.c, interleaved, with a control. The worker knows no
 * family's fields: it is told a problem key and code hashes, and asks the descriptor the rest. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "backend.h"
#include "db.h"
#include "db_tuner.h"
#include "op.h"
#include "op_run.h"
#include "problem_key.h"
#include "timing.h"
#include "worker.h"

#define WK_MAX_VARIANTS 512
#define WK_MAX_SETS 32
#define WK_ARGS_MAX 512

typedef struct wk_variant {
    char hash[72], name[KT_OP_NAME_LEN];
    kt_variant v;
    int verify;             /* 1: verify before timing; 0: verified earlier, time only */
    int ok;                 /* passed (or skipped) verification */
    void *module;
    void *fn[KT_OP_MAX_LAUNCHES];
} wk_variant;

typedef struct wk_state {
    ktb_backend *b;
    void *stream;
    kt_lanes lanes;                       /* stream's second lane: the plans' lane 1, as libktrt runs them */
    kt_db *db;
    const char *target;
    ktb_device_info info;
    /* the problem in hand */
    kt_problem p;
    char key[160];
    int cold, rounds, sets;
    unsigned long long seed;
    char control[72];
    wk_variant *vars;
    int nvars;
    kt_op_buffer bufs[KT_OP_MAX_BUFFERS];
    int nbufs;
    void *dev[WK_MAX_SETS][KT_OP_MAX_BUFFERS];
    void *host_in[KT_OP_MAX_BUFFERS];     /* every buffer's initial contents (outputs: zeros) */
    void *host_out[KT_OP_MAX_BUFFERS];    /* outputs and in-place operands read back */
    void *ws[KT_OP_MAX_WORKSPACES];
    long long ws_bytes[KT_OP_MAX_WORKSPACES];
    double *ref;
    void *ref_dev;
    char err[1024];
} wk_state;

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

static int wk_reads_back(const kt_op_buffer *b) { return (b->role & KT_BUF_OUT) != 0; }

static void wk_free_problem(wk_state *st)
{
    char e[256];
    for (int i = 0; i < st->nvars; i++)
        if (st->vars[i].module) ktb_module_unload(st->b, st->vars[i].module, e, sizeof e);
    free(st->vars);
    st->vars = NULL;
    st->nvars = 0;
    for (int s = 0; s < WK_MAX_SETS; s++)
        for (int i = 0; i < KT_OP_MAX_BUFFERS; i++) {
            if (st->dev[s][i]) ktb_free(st->b, st->dev[s][i], e, sizeof e);
            st->dev[s][i] = NULL;
        }
    for (int i = 0; i < KT_OP_MAX_BUFFERS; i++) {
        free(st->host_in[i]);
        free(st->host_out[i]);
        st->host_in[i] = st->host_out[i] = NULL;
    }
    for (int i = 0; i < KT_OP_MAX_WORKSPACES; i++) {
        if (st->ws[i]) ktb_free(st->b, st->ws[i], e, sizeof e);
        st->ws[i] = NULL;
        st->ws_bytes[i] = 0;
    }
    if (st->ref_dev) ktb_free(st->b, st->ref_dev, e, sizeof e);
    st->ref_dev = NULL;
    free(st->ref);
    st->ref = NULL;
    st->nbufs = 0;
    st->control[0] = 0;
}

/* Loads a kernel's code object by name and the functions of its launches (an optional launch's
 * function may be missing: its slot stays NULL). */
static int wk_load(wk_state *st, const char *name, const kt_op_launch *L, int nl, void **module, void **fn)
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
    for (int i = 0; i < nl; i++) {
        char fname[KT_OP_NAME_LEN + 16], ignored[384];
        snprintf(fname, sizeof fname, "%s%s", name, L[i].suffix);
        if (ktb_function(st->b, *module, fname, &fn[i], L[i].optional ? ignored : st->err,
                         L[i].optional ? sizeof ignored : sizeof st->err)) {
            fn[i] = NULL;
            if (!L[i].optional) return -1;
        }
    }
    return 0;
}

static int wk_enqueue_variant(wk_state *st, const wk_variant *wv, void *const *fn, int set, void *stream, char *err,
                              size_t errlen)
{
    const kt_op *op = st->p.op;
    unsigned char args[WK_ARGS_MAX];
    memset(args, 0, sizeof args);
    op->args_for(args, &st->p, st->dev[set]);
    op->bind(args, &wv->v, &st->p, st->info.compute_units, st->ws, st->ws_bytes);
    kt_op_launch L[KT_OP_MAX_LAUNCHES];
    int nl = op->launches(&wv->v, &st->p, st->info.wave_size, st->info.compute_units, L);
    return kt_op_enqueue(st->b, op, L, nl, fn, args, stream, &st->lanes, err, errlen) ? -1 : 0;
}

typedef struct wk_item_ctx {
    wk_state *st;
    const wk_variant *wv;
    void *const *fn;
} wk_item_ctx;

static int wk_item_enqueue(void *ctx, int set, void *stream, char *err, size_t errlen)
{
    wk_item_ctx *c = ctx;
    return wk_enqueue_variant(c->st, c->wv, c->fn, set, stream, err, errlen);
}

/* The reference result of the problem into st->ref: the op's GPU reference kernel over set 0, or
 * its float64 CPU reference over the initial contents. */
static int wk_reference(wk_state *st)
{
    const kt_op *op = st->p.op;
    size_t count = op->ref_count(&st->p);
    st->ref = malloc((count ? count : 1) * sizeof *st->ref);
    if (!st->ref) return snprintf(st->err, sizeof st->err, "host out of memory for the reference"), -1;
    char ref_name[KT_OP_NAME_LEN];
    if (!op->ref_gpu_name || !op->ref_gpu_name(&st->p, ref_name, sizeof ref_name)) {
        op->ref_cpu(&st->p, st->host_in, st->ref);
        return 0;
    }
    if (ktb_alloc(st->b, count * sizeof(double), &st->ref_dev, st->err, sizeof st->err)) return -1;
    kt_op_launch one = {.suffix = "", .dims = {{1, 1, 1}, {1, 1, 1}, 0}};
    void *mod = NULL, *fn = NULL;
    if (wk_load(st, ref_name, &one, 1, &mod, &fn)) {
        if (mod) ktb_module_unload(st->b, mod, NULL, 0);
        return -1;
    }
    const size_t args_size = op->ref_args_size ? op->ref_args_size : op->args_size;
    if (args_size > WK_ARGS_MAX) {
        ktb_module_unload(st->b, mod, NULL, 0);
        return snprintf(st->err, sizeof st->err, "%s: the reference's arguments take %zu bytes, over the worker's %d",
                        ref_name, args_size, WK_ARGS_MAX), -1;
    }
    unsigned char args[WK_ARGS_MAX];
    memset(args, 0, sizeof args);
    kt_launch_dims d = op->ref_gpu_launch(&st->p, args, st->dev[0], st->ref_dev);
    int bad = ktb_launch(st->b, fn, d.grid, d.block, d.shared, st->stream, args, args_size, st->err, sizeof st->err) ||
              ktb_sync(st->b, st->stream, st->err, sizeof st->err) ||
              ktb_copy_d2h(st->b, st->ref, st->ref_dev, count * sizeof(double), st->err, sizeof st->err);
    ktb_module_unload(st->b, mod, NULL, 0);
    return bad ? -1 : 0;
}

/* Buffers and inputs for the problem, the workspace its variants need, the reference. */
static int wk_prepare(wk_state *st)
{
    const kt_op *op = st->p.op;
    st->nbufs = op->buffers(&st->p, st->bufs);
    long long per_set = 0;
    for (int i = 0; i < st->nbufs; i++) per_set += (long long)st->bufs[i].bytes;
    st->sets = st->cold ? tm_cold_sets(st->info.l2_bytes, per_set, WK_MAX_SETS) : 1;
    uint64_t rng = st->seed;
    for (int i = 0; i < st->nbufs; i++) {
        size_t bytes = st->bufs[i].bytes ? st->bufs[i].bytes : 1;
        st->host_in[i] = calloc(1, bytes);
        st->host_out[i] = wk_reads_back(&st->bufs[i]) ? calloc(1, bytes) : NULL;
        if (!st->host_in[i] || (wk_reads_back(&st->bufs[i]) && !st->host_out[i]))
            return snprintf(st->err, sizeof st->err, "host out of memory for %s", st->key), -1;
        if (st->bufs[i].role & KT_BUF_IN) op->fill(&st->p, i, st->host_in[i], st->bufs[i].bytes, &rng);
    }
    for (int s = 0; s < st->sets; s++)
        for (int i = 0; i < st->nbufs; i++)
            if (ktb_alloc(st->b, st->bufs[i].bytes ? st->bufs[i].bytes : 1, &st->dev[s][i], st->err, sizeof st->err) ||
                ktb_copy_h2d(st->b, st->dev[s][i], st->host_in[i], st->bufs[i].bytes, st->err, sizeof st->err))
                return -1;
    for (int w = 0; w < op->nworkspaces; w++) {
        long long most = 0;
        for (int i = 0; i < st->nvars; i++) {
            long long need = op->workspace_bytes(&st->vars[i].v, &st->p, st->info.compute_units, w);
            if (need > most) most = need;
        }
        if (most <= 0) continue;
        st->ws_bytes[w] = most;
        if (ktb_alloc(st->b, (size_t)most, &st->ws[w], st->err, sizeof st->err) ||
            ktb_memset8(st->b, st->ws[w], 0, (size_t)most, st->err, sizeof st->err))   /* tile counters */
            return -1;
    }
    return wk_reference(st);
}

/* Returns 0 normally, 3 when the context is poisoned (the caller exits). */
static int wk_verify(wk_state *st, wk_variant *wv)
{
    const kt_op *op = st->p.op;
    wk_say("begin %s", wv->hash);
    char e[1024] = "";
    int bad = 0;
    /* in-place operands start from the inputs again; outputs and workspace slabs are NaN-poisoned */
    for (int i = 0; i < st->nbufs && !bad; i++) {
        if (st->bufs[i].role == KT_BUF_INOUT)
            bad = ktb_copy_h2d(st->b, st->dev[0][i], st->host_in[i], st->bufs[i].bytes, e, sizeof e);
        else if (st->bufs[i].role == KT_BUF_OUT)
            bad = ktb_memset8(st->b, st->dev[0][i], 0xff, st->bufs[i].bytes, e, sizeof e);
    }
    for (int w = 0; w < op->nworkspaces && !bad; w++)
        if (st->ws[w] && op->workspace_poison_bytes)
            bad = ktb_memset8(st->b, st->ws[w], 0xff, (size_t)op->workspace_poison_bytes(w, st->ws_bytes[w]), e, sizeof e);
    if (!bad) bad = wk_enqueue_variant(st, wv, wv->fn, 0, st->stream, e, sizeof e) || ktb_sync(st->b, st->stream, e, sizeof e);
    for (int i = 0; i < st->nbufs && !bad; i++)
        if (wk_reads_back(&st->bufs[i]))
            bad = ktb_copy_d2h(st->b, st->host_out[i], st->dev[0][i], st->bufs[i].bytes, e, sizeof e);
    if (bad) {
        wk_one_line(e);
        if (wk_fatal_error(e)) {
            wk_say("verified %s crash nan %s", wv->hash, e);
            return 3;
        }
        wk_say("verified %s error nan %s", wv->hash, e);
        return 0;
    }
    /* the error reads every output back in place of its initial contents */
    void *view[KT_OP_MAX_BUFFERS];
    for (int i = 0; i < st->nbufs; i++) view[i] = wk_reads_back(&st->bufs[i]) ? st->host_out[i] : st->host_in[i];
    double rel = op->rel_error(&st->p, view, st->ref);
    double bound = op->error_bound(st->p.dtype);
    wv->ok = !isnan(rel) && rel <= bound;
    if (wv->ok) wk_say("verified %s ok %.6e -", wv->hash, rel);
    else if (isnan(rel)) wk_say("verified %s wrong nan output has NaN/Inf (unwritten or overflow)", wv->hash);
    else wk_say("verified %s wrong %.6e error over the %s bound %.3e", wv->hash, rel, op->dtypes[st->p.dtype], bound);
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
    void *ctl_mod = NULL, *ctl_fn[KT_OP_MAX_LAUNCHES] = {NULL};
    int rc = -1;
    if (!items || !ctx || !res || !which) { snprintf(st->err, sizeof st->err, "out of memory"); goto done; }
    int j = 0;
    for (int i = 0; i < st->nvars; i++) {
        if (!st->vars[i].ok) continue;
        ctx[j] = (wk_item_ctx){st, &st->vars[i], st->vars[i].fn};
        which[j++] = i;
    }
    if (want_control) {
        /* the control is the same code object loaded a second time: identical code, own module */
        const wk_variant *cv = &st->vars[ci];
        kt_op_launch L[KT_OP_MAX_LAUNCHES];
        int nl = st->p.op->launches(&cv->v, &st->p, st->info.wave_size, st->info.compute_units, L);
        if (wk_load(st, cv->name, L, nl, &ctl_mod, ctl_fn)) goto done;
        ctx[j] = (wk_item_ctx){st, cv, ctl_fn};
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
        kt_op_launch L[KT_OP_MAX_LAUNCHES];
        int nl = st->p.op->launches(&wv->v, &st->p, st->info.wave_size, st->info.compute_units, L);
        if (wk_load(st, wv->name, L, nl, &wv->module, wv->fn)) {
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
    /* as libktrt: without a second lane the plans run in list order (slower, never wrong) */
    char why[256];
    if (kt_lanes_open(st->b, &st->lanes, why, sizeof why))
        fprintf(stderr, "kt worker: no second stream (%s): plans run on one stream\n", why);
    return 0;
}

static void wk_close(wk_state *st)
{
    wk_free_problem(st);
    kt_lanes_close(st->b, &st->lanes);
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

/* `variant <code_hash> <verify 0|1> <name>`: the kernel is the database's row of that code hash
 * serving the problem's op; its parameters are read by the op's descriptor. */
static int wk_parse_variant(wk_state *st, const char *line)
{
    if (st->nvars >= WK_MAX_VARIANTS) return snprintf(st->err, sizeof st->err, "more than %d variants", WK_MAX_VARIANTS), -1;
    wk_variant *wv = &st->vars[st->nvars];
    memset(wv, 0, sizeof *wv);
    char said[KT_OP_NAME_LEN] = "";
    if (sscanf(line, "variant %71s %d %191s", wv->hash, &wv->verify, said) < 2)
        return snprintf(st->err, sizeof st->err, "bad variant line: %s", line), -1;
    db_candidate row;
    int f = db_kernel_by_hash(st->db, st->target, wv->hash, st->p.op->name, &row, st->err, sizeof st->err);
    if (f == 0) snprintf(st->err, sizeof st->err, "no ok %s kernel with code hash %.16s (%s) for %s", st->p.op->name,
                         wv->hash, said[0] ? said : "?", st->target);
    if (f <= 0) return -1;
    char why[256];
    kt_row_resources res = {row.threads, row.waves_per_simd, row.regs, row.lds_bytes};
    if (kt_variant_from_row(st->p.op, kt_target_find(st->target), row.params, &res, &wv->v, NULL, 0, why, sizeof why))
        return snprintf(st->err, sizeof st->err, "%s: %s", row.name, why), -1;
    snprintf(wv->name, sizeof wv->name, "%s", row.name);
    st->nvars++;
    return 0;
}

/* `problem <cold 0|1> <seed> <rounds> <key...>` */
static int wk_parse_problem(wk_state *st, const char *line)
{
    int off = 0;
    if (sscanf(line, "problem %d %llu %d %n", &st->cold, &st->seed, &st->rounds, &off) < 3 || off <= 0)
        return snprintf(st->err, sizeof st->err, "bad problem line: %s", line), -1;
    snprintf(st->key, sizeof st->key, "%s", line + off);
    char why[256];
    if (kt_problem_parse(st->key, &st->p, why, sizeof why)) return snprintf(st->err, sizeof st->err, "%s", why), -1;
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
            if (!st.vars || wk_parse_problem(&st, line)) {
                wk_one_line(st.err);
                wk_say("fail %s", st.vars ? st.err : "out of memory");
                free(st.vars);
                st.vars = NULL;
                continue;
            }
        } else if (strncmp(line, "variant ", 8) == 0) {
            if (!st.vars) wk_say("fail variant before a problem: %s", line);
            else if (wk_parse_variant(&st, line)) {
                wk_one_line(st.err);
                wk_say("fail %s", st.err);
            }
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

/* ---- device test: every op's GPU reference against its float64 CPU reference ---- */

int wk_check_reference(const char *db_path, const char *target, int device)
{
    wk_state st;
    if (wk_open(&st, db_path, target, device)) {
        fprintf(stderr, "check-reference: %s\n", st.err);
        wk_close(&st);
        return 1;
    }
    printf("check-reference: %s (%s)\n", st.info.name, st.info.arch);
    int failed = 0, total = 0;
    double worst = 0;
    for (int o = 0; o < kt_op_count(); o++) {
        const kt_op *op = kt_op_at(o);
        for (int d = 0; d < op->ndtypes; d++)
            for (int s = 0; s < op->nref_checks; s++) {
                memset(&st.p, 0, sizeof st.p);
                st.p.op = op;
                st.p.dtype = d;
                for (int i = 0; i < op->ndims; i++) st.p.dim[i] = op->ref_checks[s][i];
                kt_problem_key(&st.p, st.key, sizeof st.key);
                st.cold = 0;
                st.seed = 0x5eed0000ull + (unsigned)s * 31 + (unsigned)d;
                st.vars = calloc(1, sizeof *st.vars);
                total++;
                if (!st.vars || wk_prepare(&st)) {
                    printf("  FAIL %s: %s\n", st.key, st.err);
                    failed++;
                    wk_free_problem(&st);
                    continue;
                }
                size_t count = op->ref_count(&st.p);
                double *cpu = malloc((count ? count : 1) * sizeof *cpu), num = 0, den = 0;
                if (!cpu) { printf("  FAIL %s: out of memory\n", st.key); failed++; wk_free_problem(&st); continue; }
                op->ref_cpu(&st.p, st.host_in, cpu);
                for (size_t i = 0; i < count; i++) {
                    double diff = st.ref[i] - cpu[i];
                    num += diff * diff;
                    den += cpu[i] * cpu[i];
                }
                free(cpu);
                double rel = den > 0 ? sqrt(num / den) : sqrt(num);
                /* both sum exact products in double, in different orders: ~K * 2^-53 apart */
                int ok = isfinite(rel) && rel <= 1e-12;
                if (rel > worst || !isfinite(rel)) worst = rel;
                failed += !ok;
                printf("  %s %s  rel diff %.3e\n", ok ? "ok  " : "FAIL", st.key, rel);
                wk_free_problem(&st);
            }
    }
    printf("check-reference: %d shapes, %d failed, worst rel diff %.3e (bound 1e-12)\n", total, failed, worst);
    wk_close(&st);
    return failed ? 1 : 0;
}
