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
#include "sweep.h"
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

static int tune_layers_text(const model_problem *p, char *buf, size_t len)
{
    buf[0] = 0;
    for (int l = 0; l < p->nlayers; l++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", l ? "," : "", model_layer_name(p->layers[l]));
    }
    return 0;
}

/* --shapes FILE: [{"n": 4096, "k": 4096, "dtype": "bf16"}, ...] in place of the model's shapes. */
static int tune_read_shapes(const char *path, const char *dtype, model_problems *mp, char *err, size_t errlen)
{
    size_t len = 0;
    char *text = file_read_all(path, 1 << 20, &len);
    if (!text) return snprintf(err, errlen, "%s: cannot read (missing, or over 1 MiB)", path), -1;
    cJSON *root = cJSON_ParseWithLength(text, len);
    free(text);
    if (!cJSON_IsArray(root)) {
        cJSON_Delete(root);
        return snprintf(err, errlen, "%s: expected a JSON array of {\"n\": N, \"k\": K}", path), -1;
    }
    mp->nproblems = 0;
    int i = 0;
    cJSON *it;
    cJSON_ArrayForEach(it, root) {
        cJSON *n = cJSON_GetObjectItem(it, "n"), *k = cJSON_GetObjectItem(it, "k"), *dt = cJSON_GetObjectItem(it, "dtype");
        if (!cJSON_IsNumber(n) || !cJSON_IsNumber(k) || n->valueint < 1 || k->valueint < 1) {
            cJSON_Delete(root);
            return snprintf(err, errlen, "%s: entry %d: needs positive integers \"n\" and \"k\"", path, i), -1;
        }
        if (mp->nproblems == MODEL_LAYER_COUNT) {
            cJSON_Delete(root);
            return snprintf(err, errlen, "%s: at most %d shapes", path, MODEL_LAYER_COUNT), -1;
        }
        model_problem *p = &mp->problems[mp->nproblems++];
        memset(p, 0, sizeof *p);
        snprintf(p->dtype, sizeof p->dtype, "%s", cJSON_IsString(dt) ? dt->valuestring : dtype);
        if (strcmp(p->dtype, "bf16") && strcmp(p->dtype, "fp16")) {
            cJSON_Delete(root);
            return snprintf(err, errlen, "%s: entry %d: dtype '%s' (bf16 or fp16)", path, i, p->dtype), -1;
        }
        p->n = n->valueint;
        p->k = k->valueint;
        p->count = 1;
        i++;
    }
    cJSON_Delete(root);
    return 0;
}

static void tune_print_table(const kt_tune_options *o, const sweep_problem *ps, int np, const sweep_outcome *out,
                             kt_db *db)
{
    double peak = tune_spec_matrix_tflops(o->target);
    printf("\n%-34s %-8s %-48s %10s %14s %9s\n", "problem", "layers", "kernel", "time", "ceiling", "law regret");
    for (int i = 0; i < np; i++) {
        db_selection_row r;
        db_selection_text txt;
        char e[256];
        int f = db_selection_get(db, out->device_key, ps[i].key, &r, &txt, e, sizeof e);
        if (f != 1) {
            printf("%-34s %-8s %-48s\n", ps[i].key, ps[i].layers, f == 0 ? "(no selection)" : e);
            continue;
        }
        char tbuf[32] = "-", cbuf[32] = "-", rbuf[32] = "-";
        if (strcmp(txt.source, "measured") == 0 && r.time_us > 0) {
            snprintf(tbuf, sizeof tbuf, "%.2f us", r.time_us);
            double bytes = 2.0 * ((double)ps[i].m * ps[i].k + (double)ps[i].n * ps[i].k + (double)ps[i].m * ps[i].n);
            double flops = 2.0 * ps[i].m * (double)ps[i].n * ps[i].k;
            if (ps[i].m <= 64 && out->copy_gbps > 0)
                snprintf(cbuf, sizeof cbuf, "%.0f%% copy BW", 100.0 * bytes / (r.time_us * 1e-6) / 1e9 / out->copy_gbps);
            else if (peak > 0)
                snprintf(cbuf, sizeof cbuf, "%.0f%% spec MMA", 100.0 * flops / (r.time_us * 1e-6) / 1e12 / peak);
            if (!isnan(r.regret)) snprintf(rbuf, sizeof rbuf, "%+.1f%%", 100.0 * r.regret);
        } else {
            snprintf(tbuf, sizeof tbuf, "(law)");
        }
        printf("%-34s %-8s %-48s %10s %14s %9s\n", ps[i].key, ps[i].layers, txt.kernel, tbuf, cbuf, rbuf);
    }
    if (out->copy_gbps > 0) printf("copy bandwidth measured in this run: %.0f GB/s (read + write)\n", out->copy_gbps);
    if (peak > 0) printf("matrix peak: %.0f TFLOP/s dense bf16, datasheet figure (not measured)\n", peak);
    if (!isnan(out->noise_floor)) printf("noise floor (median control spread): %.2f%%\n", 100.0 * out->noise_floor);
}

/* For every problem, the path libktrt will take, through the runtime's own chain. */
static int tune_print_coverage(const kt_tune_options *o, const sweep_problem *ps, int np, const sweep_outcome *out)
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
    long long ws = ktrt_catalog_workspace_bytes(&cat, dev.target, dev.compute_units);
    int counts[4] = {0};
    const char *names[4] = {"exact", "bucket", "law", "refused"};
    printf("\ncoverage on %s: the path libktrt takes for each problem of %s at tp=%d\n", out->device_key, o->model, o->tp);
    for (int i = 0; i < np; i++) {
        ktrt_query q = {&dev, ps[i].dtype, ps[i].m, ps[i].n, ps[i].k, ws};
        ktrt_pick pick;
        ktrt_select_gemm(&cat, &q, &pick);
        for (int p = 0; p < 4; p++)
            if (strcmp(pick.choice.path, names[p]) == 0) counts[p]++;
        printf("  %-34s %-8s path=%-7s %s\n", ps[i].key, ps[i].layers, pick.choice.path,
               pick.choice.kernel[0] ? pick.choice.kernel : pick.choice.reason);
        if (strcmp(pick.choice.path, "refused") == 0) rc = 1;
    }
    printf("coverage: %d problems: %d exact, %d bucket, %d law, %d refused\n", np, counts[0], counts[1], counts[2],
           counts[3]);
    ktrt_catalog_free(&cat);
    return rc;
}

int kt_tune_check_model(const char *model, int tp, const char *shapes, char *err, size_t errlen)
{
    if (!model) return snprintf(err, errlen, "tune: missing --modelpath"), 2;
    model_problems mp;
    if (model_load(model, tp, &mp, err, errlen)) return 2;
    if (shapes && *shapes && tune_read_shapes(shapes, mp.config.dtype, &mp, err, errlen)) return 2;
    return 0;
}

int kt_tune_model(const kt_tune_options *o, char *err, size_t errlen)
{
    if (!o || !o->model || !o->db_path || !o->target) return snprintf(err, errlen, "tune: missing option"), 2;
    if (o->only && *o->only && strcmp(o->only, "gemm") != 0)
        return snprintf(err, errlen, "--only %s: this build tunes only 'gemm'", o->only), 2;
    model_problems mp;
    if (model_load(o->model, o->tp, &mp, err, errlen)) return 2;
    if (o->shapes && *o->shapes && tune_read_shapes(o->shapes, mp.config.dtype, &mp, err, errlen)) return 2;

    int nb = model_m_bucket_count();
    sweep_problem *ps = calloc((size_t)mp.nproblems * nb, sizeof *ps);
    if (!ps) return snprintf(err, errlen, "out of memory"), 1;
    int np = 0;
    for (int i = 0; i < mp.nproblems; i++)
        for (int b = 0; b < nb; b++) {
            sweep_problem *p = &ps[np++];
            const model_problem *m = &mp.problems[i];
            p->m = model_m_bucket_at(b);
            p->n = m->n;
            p->k = m->k;
            snprintf(p->dtype, sizeof p->dtype, "%s", m->dtype);
            model_problem_key(m, p->m, p->key, sizeof p->key);
            if (o->shapes && *o->shapes) snprintf(p->layers, sizeof p->layers, "shape%d", i);
            else tune_layers_text(m, p->layers, sizeof p->layers);
            p->calls = m->count;
        }
    printf("model %s (%s, %s) at tp=%d: %d GEMM shapes x %d M buckets = %d problems\n", mp.config.path,
           mp.config.architecture, mp.config.dtype, o->tp, mp.nproblems, nb, np);

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
    int cov = tune_print_coverage(o, ps, np, &out);
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
