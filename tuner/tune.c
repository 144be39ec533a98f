/* tune.c: `tune --modelpath DIR --tp N`, after the build stage: the model's problems, the sweep,
 * the result table and the coverage report. tune.lua calls kt_tune_model through the FFI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "backend.h"
#include "db.h"
#include "db_tuner.h"
#include "file_io.h"
#include "ktrt_select.h"
#include "model.h"
#include "op.h"
#include "sweep.h"
#include "timing.h"
#include "target.h"
#include "tune.h"

/* Spec dense bf16 matrix peak, TFLOP/s, to express prefill times as a share of it. A datasheet
 * figure, labelled as such in the output (H100/H200 SXM: 989.4; the RX 9070 XT: 195 at boost). */
static double tune_spec_matrix_tflops(const char *target)
{
    if (strcmp(target, "sm_90a") == 0) return 989.4;
    if (strcmp(target, "gfx1201") == 0) return 195.0;
    return 0;
}

/* Grows *ps to hold one more problem: 0, or -1 out of memory. */
static int tune_grow(sweep_problem **ps, int *cap, int n)
{
    if (n < *cap) return 0;
    int ncap = *cap ? 2 * *cap : 64;
    sweep_problem *p = realloc(*ps, (size_t)ncap * sizeof *p);
    if (!p) return -1;
    *ps = p;
    *cap = ncap;
    return 0;
}

/* One static shape crossed with every combination of its op's bucket edges under the limits
 * (NULL or 0: every edge of that dimension), in key order. */
static int tune_add_edges(sweep_problem **ps, int *cap, int *n, const kt_problem *shape, const long long *limit,
                          const long long *lo_edge, const char *layers, int calls, char *err, size_t errlen)
{
    const kt_op *op = shape->op;
    long long combos = kt_op_edge_combos(op, limit);
    for (long long e = 0; e < combos; e++) {
        if (tune_grow(ps, cap, *n)) return snprintf(err, errlen, "out of memory"), -1;
        sweep_problem *p = &(*ps)[(*n)++];
        memset(p, 0, sizeof *p);
        kt_problem_edge_combo(shape, limit, e, &p->p);
        int below = 0;   /* an edge under lo_edge's bucket (lo_edge NULL or 0: none) */
        for (int k = 0; lo_edge && k < op->ndims; k++)
            below |= lo_edge[k] > 0 && p->p.dim[k] < kt_op_bucket(op, k, lo_edge[k]);
        if (below) { (*n)--; continue; }
        if (kt_problem_key(&p->p, p->key, sizeof p->key) < 0 || kt_problem_check(&p->p, err, errlen))
            return snprintf(err, errlen, "%s: a problem of this shape makes no key", op->name), -1;
        snprintf(p->layers, sizeof p->layers, "%s", layers);
        p->calls = calls;
    }
    return 0;
}

/* Whether op is among --only's comma list (NULL or empty: every op). */
static int tune_wanted(const char *only, const kt_op *op) { return !only || !*only || kt_ops_has(only, op->name); }

/* Refuses an --only that names no op of the table. */
static int tune_check_only(const char *only, char *err, size_t errlen)
{
    if (!only || !*only) return 0;
    char copy[256];
    snprintf(copy, sizeof copy, "%s", only);
    for (char *save = NULL, *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save))
        if (!kt_op_find(w)) {
            char known[256] = "";
            for (int i = 0, u = 0; i < kt_op_count(); i++)
                u += snprintf(known + u, sizeof known - (size_t)u, "%s%s", i ? " " : "", kt_op_at(i)->name);
            return snprintf(err, errlen, "--only %s: '%s' is not an op family (known: %s)", only, w, known), -1;
        }
    return 0;
}

/* --shapes FILE: [{"op": "gemm", "n": 4096, "k": 4096, "dtype": "bf16"}, ...] in place of the model's
 * problems: each entry names its op (default gemm) and that op's static dimensions by name (>= 1,
 * or >= 0 where the dimension is zero_ok); a bucketed dimension given is its limit (the edges past
 * the one serving it are not swept), absent every edge, and [lo, hi] the edges from the one serving
 * lo to the one serving hi (speculative rows alone: "q": [4, 8]). */
static int tune_read_shapes(const char *path, const char *dtype, const char *only, sweep_problem **ps, int *cap,
                            int *np, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = file_read_all(path, 1 << 20, &len);
    if (!text) return snprintf(err, errlen, "%s: cannot read (missing, or over 1 MiB)", path), -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return snprintf(err, errlen, "%s: expected a JSON array of {\"op\": OP, <dimension>: N, ...}", path), -1;
    }
    int i = 0, rc = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, root) {
        cJSON *jo = cJSON_GetObjectItem(it, "op"), *dt = cJSON_GetObjectItem(it, "dtype");
        const kt_op *op = kt_op_find(cJSON_IsString(jo) ? jo->valuestring : "gemm");
        if (!op) { rc = (snprintf(err, errlen, "%s: entry %d: unknown op '%s'", path, i, jo->valuestring), -1); break; }
        kt_problem shape;
        memset(&shape, 0, sizeof shape);
        shape.op = op;
        const char *d = cJSON_IsString(dt) ? dt->valuestring : dtype;
        shape.dtype = kt_op_dtype_index(op, d);
        if (shape.dtype < 0) { rc = (snprintf(err, errlen, "%s: entry %d: %s has no dtype '%s'", path, i, op->name, d), -1); break; }
        long long limit[KT_OP_MAX_DIMS] = {0}, lo_edge[KT_OP_MAX_DIMS] = {0};
        for (int k = 0; k < op->ndims && rc == 0; k++) {
            const kt_op_dim *dd = &op->dims[k];
            cJSON *v = cJSON_GetObjectItem(it, dd->name);
            int lo = kt_op_dim_min(op, k);
            if (dd->bucketed && !v) continue;
            if (dd->bucketed && cJSON_IsArray(v)) {
                cJSON *a = cJSON_GetArrayItem(v, 0), *b = cJSON_GetArrayItem(v, 1);
                if (cJSON_GetArraySize(v) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) || a->valuedouble < 1 ||
                    b->valuedouble < a->valuedouble || b->valuedouble > 0x7fffffff || a->valuedouble != (int)a->valuedouble ||
                    b->valuedouble != (int)b->valuedouble) {
                    rc = (snprintf(err, errlen, "%s: entry %d: %s \"%s\": [lo, hi] needs two integers 1 <= lo <= hi",
                                   path, i, op->name, dd->name), -1);
                    break;
                }
                lo_edge[k] = a->valueint;
                limit[k] = b->valueint;
                continue;
            }
            if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > 0x7fffffff || v->valuedouble != (int)v->valuedouble)
                rc = (snprintf(err, errlen, "%s: entry %d: %s needs %s \"%s\"%s", path, i, op->name,
                               lo ? "a positive integer" : "an integer >= 0", dd->name,
                               dd->bucketed ? " (a limit of its buckets), [lo, hi], or none" : ""), -1);
            else if (dd->bucketed) limit[k] = v->valueint;
            else shape.dim[k] = v->valueint;
        }
        if (rc) break;
        char layers[32];
        snprintf(layers, sizeof layers, "shape%d", i);
        if (tune_wanted(only, op) && tune_add_edges(ps, cap, np, &shape, limit, lo_edge, layers, 1, err, errlen)) { rc = -1; break; }
        i++;
    }
    cJSON_Delete(root);
    return rc;
}

/* Every op's problems of the model at this rank, crossed with its bucket edges under each problem's
 * limits. */
static int tune_model_problems(const model_problems *mp, const char *only, sweep_problem **ps, int *cap, int *np,
                               char *err, size_t errlen)
{
    kt_model_shape shape;
    model_shape_of(mp, &shape);
    for (int o = 0; o < kt_op_count(); o++) {
        const kt_op *op = kt_op_at(o);
        if (!op->from_model || !tune_wanted(only, op)) continue;
        kt_op_model_problem got[32];
        memset(got, 0, sizeof got);   /* a family that sets no limit leaves them 0: every edge */
        int n = op->from_model(&shape, got, 32, err, errlen);
        if (n < 0) return -1;
        for (int i = 0; i < n; i++)
            if (tune_add_edges(ps, cap, np, &got[i].p, got[i].limit, NULL, got[i].layers, got[i].calls, err, errlen)) return -1;
    }
    return 0;
}

/* Per op family: how the law did on this run's measured problems (median and worst regret), so
 * the law is itself measured on every tune. */
static void tune_print_law_summary(const sweep_problem *ps, int np, const double *regret)
{
    double *v = malloc((size_t)(np > 0 ? np : 1) * sizeof *v);
    if (!v) return;
    for (int o = 0; o < kt_op_count(); o++) {
        int n = 0, untimed = 0, measured = 0;
        for (int i = 0; i < np; i++) {
            if (ps[i].p.op != kt_op_at(o) || isinf(regret[i])) continue;
            measured++;
            if (isnan(regret[i])) untimed++;
            else v[n++] = regret[i];
        }
        if (n == 0) continue;
        double median = tm_median(v, n);   /* sorts v */
        int within = 0;
        for (int i = 0; i < n; i++) within += v[i] <= 0.15;
        printf("law regret (%s): median %+.1f%%, worst %+.1f%%, %d of %d within 15%%", kt_op_at(o)->name,
               100.0 * median, 100.0 * v[n - 1], within, n);
        if (untimed) printf("; %d of %d measured problems have no regret (the law's pick was not timed)", untimed, measured);
        printf("\n");
    }
    free(v);
}

/* The problem column's width: 44, or the longest key (an attention key is longer than a GEMM's). */
static int tune_key_width(const sweep_problem *ps, int np)
{
    int w = 44;
    for (int i = 0; i < np; i++)
        if ((int)strlen(ps[i].key) > w) w = (int)strlen(ps[i].key);
    return w;
}

static void tune_print_table(const kt_tune_options *o, const sweep_problem *ps, int np, const sweep_outcome *out,
                             kt_db *db)
{
    const int kw = tune_key_width(ps, np);
    double peak = tune_spec_matrix_tflops(o->target);
    /* regret per problem for the summary: INFINITY where nothing was measured */
    double *regret = malloc((size_t)(np > 0 ? np : 1) * sizeof *regret);
    for (int i = 0; regret && i < np; i++) regret[i] = INFINITY;
    printf("\n%-*s %-10s %-52s %10s %14s %9s\n", kw, "problem", "layers", "kernel", "time", "ceiling", "law regret");
    for (int i = 0; i < np; i++) {
        db_selection_row r;
        db_selection_text txt;
        char e[256];
        int f = db_selection_get(db, out->device_key, ps[i].key, &r, &txt, e, sizeof e);
        if (f != 1) {
            printf("%-*s %-10s %-52s\n", kw, ps[i].key, ps[i].layers, f == 0 ? "(no selection)" : e);
            continue;
        }
        const kt_op *op = ps[i].p.op;
        char tbuf[32] = "-", cbuf[32] = "-", rbuf[32] = "-";
        if (strcmp(txt.source, "measured") == 0 && r.time_us > 0) {
            snprintf(tbuf, sizeof tbuf, "%.2f us", r.time_us);
            double bytes = op->bytes_moved(&ps[i].p), flops = op->flops(&ps[i].p);
            int memory_bound = flops <= 0 || strcmp(kt_problem_phase(&ps[i].p), "decode") == 0;
            if (memory_bound && out->copy_gbps > 0)
                snprintf(cbuf, sizeof cbuf, "%.0f%% copy BW", 100.0 * bytes / (r.time_us * 1e-6) / 1e9 / out->copy_gbps);
            else if (!memory_bound && peak > 0)
                snprintf(cbuf, sizeof cbuf, "%.0f%% spec MMA", 100.0 * flops / (r.time_us * 1e-6) / 1e12 / peak);
            if (!isnan(r.regret)) snprintf(rbuf, sizeof rbuf, "%+.1f%%", 100.0 * r.regret);
            if (regret) regret[i] = r.regret;
        } else {
            snprintf(tbuf, sizeof tbuf, "(law)");
        }
        printf("%-*s %-10s %-52s %10s %14s %9s\n", kw, ps[i].key, ps[i].layers, txt.kernel, tbuf, cbuf, rbuf);
    }
    if (out->copy_gbps > 0) printf("copy bandwidth measured in this run: %.0f GB/s (read + write)\n", out->copy_gbps);
    if (peak > 0) printf("matrix peak: %.0f TFLOP/s dense bf16, datasheet figure (not measured)\n", peak);
    if (!isnan(out->noise_floor)) printf("noise floor (median control spread): %.2f%%\n", 100.0 * out->noise_floor);
    if (regret) tune_print_law_summary(ps, np, regret);
    free(regret);
}

/* What the model runs that no op family derives (GDN layers, experts, ...): refused, each named by
 * its layers, with the reason, so a partial derivation never reads as full coverage. */
static int tune_print_not_derived(const model_problems *mp)
{
    for (int i = 0; mp && i < mp->nnot_derived; i++) {
        const model_not_derived *d = &mp->not_derived[i];
        char what[64];
        snprintf(what, sizeof what, "(not derived) x%d/forward", d->count);
        printf("  %-44s %-10s path=%-7s %s\n", what, d->layers, "refused", d->reason);
    }
    return mp ? mp->nnot_derived : 0;
}

/* For every problem, the path libktrt will take, through the runtime's own chain; then what the
 * model runs that was not derived (mp NULL: the problems came from --shapes). */
static int tune_print_coverage(const kt_tune_options *o, const sweep_problem *ps, int np, const sweep_outcome *out,
                               const model_problems *mp)
{
    ktrt_catalog cat = {0};
    char e[512];
    if (ktrt_catalog_add(&cat, o->db_path, "caller", e, sizeof e) != KT_OK) {
        printf("coverage: cannot read %s back: %s\n", o->db_path, e);
        return -1;
    }
    ktrt_device dev;
    int rc = 0;
    if (ktrt_device_from_key(&cat, out->device_key, &dev, e, sizeof e) != KT_OK) {
        printf("coverage: %s\n", e);
        ktrt_catalog_free(&cat);
        return -1;
    }
    int counts[4] = {0};
    const char *names[4] = {"exact", "bucket", "law", "refused"};
    const int kw = tune_key_width(ps, np);
    printf("\ncoverage on %s: the path libktrt takes for each problem of %s at tp=%d\n", out->device_key, o->model, o->tp);
    for (int i = 0; i < np; i++) {
        ktrt_op_query q;
        memset(&q, 0, sizeof q);
        q.device = &dev;
        q.p = ps[i].p;
        for (int w = 0; w < q.p.op->nworkspaces; w++)
            q.workspace[w] = ktrt_catalog_workspace(&cat, dev.target, dev.compute_units, q.p.op, w);
        ktrt_pick pick;
        ktrt_select(&cat, &q, &pick);
        for (int p = 0; p < 4; p++)
            if (strcmp(pick.choice.path, names[p]) == 0) counts[p]++;
        printf("  %-*s %-10s path=%-7s %s\n", kw, ps[i].key, ps[i].layers, pick.choice.path,
               pick.choice.kernel[0] ? pick.choice.kernel : pick.choice.reason);
        if (strcmp(pick.choice.path, "refused") == 0) rc = 1;
    }
    int gaps = tune_print_not_derived(mp);
    if (gaps) rc = 1;
    printf("coverage: %d problems: %d exact, %d bucket, %d law, %d refused", np, counts[0], counts[1], counts[2],
           counts[3]);
    if (gaps) printf("; %d layer group%s not derived (refused above)", gaps, gaps == 1 ? "" : "s");
    printf("\n");
    ktrt_catalog_free(&cat);
    return rc;
}

/* The model, --only and --shapes read and checked, and the problems they make (*ps malloc'd). 0, or
 * 2 with err naming the input at fault. */
static int tune_problems(const char *model, int tp, const char *shapes, const char *only, model_problems *mp,
                         sweep_problem **ps, int *np, char *err, size_t errlen)
{
    *ps = NULL;
    *np = 0;
    if (!model) return snprintf(err, errlen, "tune: missing --modelpath"), 2;
    if (tune_check_only(only, err, errlen)) return 2;
    if (model_load(model, tp, mp, err, errlen)) return 2;
    int cap = 0;
    int bad = shapes && *shapes ? tune_read_shapes(shapes, mp->config.dtype, only, ps, &cap, np, err, errlen)
                                : tune_model_problems(mp, only, ps, &cap, np, err, errlen);
    if (!bad && *np == 0) {
        snprintf(err, errlen, "no problem to tune (--only %s)", only ? only : "");
        bad = 1;
    }
    if (bad) {
        free(*ps);
        *ps = NULL;
        return 2;
    }
    return 0;
}

int kt_tune_problems(const char *model, int tp, const char *shapes, const char *only, model_problems *mp,
                     sweep_problem **ps, int *np, char *err, size_t errlen)
{
    return tune_problems(model, tp, shapes, only, mp, ps, np, err, errlen);
}

int kt_tune_check_model(const char *model, int tp, const char *shapes, const char *only, char *err, size_t errlen)
{
    model_problems mp;
    sweep_problem *ps;
    int np, rc = tune_problems(model, tp, shapes, only, &mp, &ps, &np, err, errlen);
    free(ps);
    return rc;
}

/* "gemm 4 shapes x 14 buckets = 56;" for one op's problems (each shape's problems adjacent); shapes
 * whose limits give them different bucket counts: "attn_decode 3 shapes, 150 problems;". */
static void tune_print_op_counts(const kt_op *op, const sweep_problem *ps, int np)
{
    int shapes = 0, all = 0, per = -1, even = 1, run = 0;
    for (int i = 0; i <= np; i++) {
        int mine = i < np && ps[i].p.op == op;
        int starts = mine && (i == 0 || ps[i - 1].p.op != op || !kt_problem_same_shape(&ps[i].p, &ps[i - 1].p));
        if (run && (starts || !mine)) {             /* the previous shape's run ended */
            if (per >= 0 && per != run) even = 0;
            per = run;
            run = 0;
        }
        if (!mine) continue;
        shapes += starts;
        all++, run++;
    }
    if (!all) return;
    if (even) printf(" %s %d shape%s x %d buckets = %d;", op->name, shapes, shapes == 1 ? "" : "s", per, all);
    else printf(" %s %d shapes, %d problems;", op->name, shapes, all);
}

int kt_tune_model(const kt_tune_options *o, char *err, size_t errlen)
{
    if (!o || !o->model || !o->db_path || !o->target) return snprintf(err, errlen, "tune: missing option"), 2;
    model_problems mp;
    sweep_problem *ps;
    int np;
    if (tune_problems(o->model, o->tp, o->shapes, o->only, &mp, &ps, &np, err, errlen)) return 2;
    printf("model %s (%s, %s) at tp=%d: %d problems:", mp.config.path, mp.config.architecture, mp.config.dtype, o->tp, np);
    for (int op = 0; op < kt_op_count(); op++) tune_print_op_counts(kt_op_at(op), ps, np);
    printf("\n");

    sweep_options so = {
        .db_path = o->db_path, .target = o->target, .model = o->model, .args = o->args, .tp = o->tp,
        .gpus = o->gpus, .resume = o->resume, .no_device = o->no_device, .budget_min = o->budget_min,
        .quiet = o->quiet,
    };
    sweep_outcome out;
    int rc = 0;
    if (sweep_run(&so, ps, np, &out, err, errlen)) { rc = 1; if (!out.run_id) goto done; }
    if (strcmp(out.mode, "law") == 0)
        printf("\nNO GPU: %s\nselections are the law's picks for %s (%d CUs assumed), NOT measured; "
               "the database says so (device %s, run mode 'law')\n",
               out.no_device_reason, o->target, out.compute_units, out.device_key);
    else
        printf("\nsweep on %s [%s]: %d problems measured, %d failed, %d not reached\n", out.device_name,
               out.device_key, out.measured, out.failed, out.unmeasured);
    kt_db *db = NULL;
    char e[512];
    if (db_open(o->db_path, 0, &db, e, sizeof e) == 0) {
        tune_print_table(o, ps, np, &out, db);
        db_close(db);
    }
    int cov = tune_print_coverage(o, ps, np, &out, o->shapes && *o->shapes ? NULL : &mp);
    if (rc == 0 && cov < 0) rc = 1;
done:
    free(ps);
    return rc;
}

int kt_target_auto(char *out, size_t len, char *msg, size_t msglen)
{
    static const char *const vendors[] = {"cuda", "hip"};
    char why[2][256];
    for (int v = 0; v < 2; v++) {
        ktb_backend *b = NULL;
        ktb_device_info info;
        if (ktb_open(vendors[v], 0, &b, why[v], sizeof why[v]) || ktb_info(b, &info, why[v], sizeof why[v])) {
            ktb_close(b);
            continue;
        }
        ktb_close(b);
        const kt_target *t = kt_target_for_arch(info.arch);
        if (!t) return snprintf(msg, msglen, "GPU 0 is %s (%s): no ktune target runs on it", info.name, info.arch), -1;
        snprintf(out, len, "%s", t->name);
        snprintf(msg, msglen, "GPU 0 is %s (%s)", info.name, info.arch);
        return 0;
    }
    snprintf(msg, msglen, "no GPU (%s; %s)", why[0], why[1]);
    return 1;
}
