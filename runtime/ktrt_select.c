/* ktrt_select.c: the selection chain of ktrt.h over an in-memory catalog (see ktrt_select.h).
 * Pure: no I/O, no GPU, no globals, so `kt explain` answers exactly what a launch would do. */
#include "ktrt_select.h"
#include "law.h"
#include "problem_key.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grid limits both vendors share: gridDim.y and .z at most 65535, .x at most 2^31 - 1. */
#define KTRT_GRID_YZ_MAX 65535LL
#define KTRT_GRID_X_MAX 2147483647LL

static const char *const dtype_names[KTRT_NDTYPES] = { "bf16", "fp16" };

int ktrt_dtype_index(const char *dtype)
{
    for (int i = 0; dtype && i < KTRT_NDTYPES; i++)
        if (strcmp(dtype, dtype_names[i]) == 0) return i;
    return -1;
}

const char *ktrt_dtype_name(int index) { return index >= 0 && index < KTRT_NDTYPES ? dtype_names[index] : "?"; }

int ktrt_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

/* Appends "; <text>" (or text when empty) to a reason, cutting at its size. */
static void reason_add(char *reason, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void reason_add(char *reason, size_t len, const char *fmt, ...)
{
    size_t used = strlen(reason);
    if (used + 3 >= len) return;
    if (used) {
        memcpy(reason + used, "; ", 3);
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason + used, len - used, fmt, ap);
    va_end(ap);
}

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

const char *ktrt_launch_misfit(const kt_gemm_variant *v, int m, int n, int units, long long workspace_bytes,
                               char *buf, size_t len)
{
    long long rows = ceil_div(m, v->bm), cols = ceil_div(n, v->bn);
    if (rows > KTRT_GRID_YZ_MAX) {
        snprintf(buf, len, "m=%d needs %lld row blocks of %d, over the grid limit %lld", m, rows, v->bm, KTRT_GRID_YZ_MAX);
        return buf;
    }
    if (cols > KTRT_GRID_X_MAX || v->splitk > KTRT_GRID_YZ_MAX) {
        snprintf(buf, len, "n=%d over the grid limit", n);
        return buf;
    }
    if (v->splitk > 1) {
        long long elems = (long long)m * n;
        if (ceil_div(elems, KT_GEMM_REDUCE_THREADS) > KTRT_GRID_X_MAX) {
            snprintf(buf, len, "m*n=%lld over the split-K reduce's grid limit", elems);
            return buf;
        }
    }
    if (kt_gemm_uses_workspace(v)) {
        long long need = kt_gemm_partials_needed(v, m, n, units) * (long long)sizeof(float);
        if (need > workspace_bytes) {
            snprintf(buf, len, "sk%d needs %lld bytes of split-K workspace, %lld available", v->splitk, need,
                     workspace_bytes);
            return buf;
        }
    }
    return NULL;
}

/* ---- catalog lookups ---- */

static const ktrt_device_row *device_row(const ktrt_catalog *c, const char *key)
{
    for (int l = 0; l < c->nlayers; l++)
        for (int i = 0; i < c->layers[l].ndevices; i++)
            if (strcmp(c->layers[l].devices[i].key, key) == 0) return &c->layers[l].devices[i];
    return NULL;
}

/* Compute units a device key stands for: its row, else the key's second field; INT_MAX unknown. */
static int key_compute_units(const ktrt_catalog *c, const char *key)
{
    const ktrt_device_row *r = device_row(c, key);
    if (r) return r->compute_units;
    const char *slash = strchr(key, '/');
    long cus = slash ? strtol(slash + 1, NULL, 10) : 0;
    return cus > 0 && cus < INT_MAX ? (int)cus : INT_MAX;
}

int ktrt_device_from_key(const ktrt_catalog *c, const char *key, ktrt_device *out, char *err, size_t errlen)
{
    if (!c || !key || !out) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_device_from_key: NULL argument");
    memset(out, 0, sizeof *out);
    if (snprintf(out->key, sizeof out->key, "%s", key) >= (int)sizeof out->key)
        return ktrt_fail(err, errlen, KT_EINVAL, "device '%.80s...': key too long", key);
    const ktrt_device_row *r = device_row(c, key);
    if (r) {
        out->target = kt_target_find(r->target);
        if (!out->target) out->target = kt_target_for_arch(r->arch);
        out->compute_units = r->compute_units;
        if (!out->target)
            return ktrt_fail(err, errlen, KT_EINVAL, "device '%s': its target '%s' is not a ktune target", key, r->target);
        if (out->compute_units < 1)
            return ktrt_fail(err, errlen, KT_EINVAL, "device '%s': its row has %d compute units", key, r->compute_units);
        return KT_OK;
    }
    char arch[32];
    const char *slash = strchr(key, '/');
    size_t alen = slash ? (size_t)(slash - key) : strlen(key);
    if (!slash || alen == 0 || alen >= sizeof arch)
        return ktrt_fail(err, errlen, KT_EINVAL, "device '%s': expected <arch>/<compute units>/<pci id>, e.g. sm_90/132/0x2335", key);
    memcpy(arch, key, alen);
    arch[alen] = 0;
    if (strcmp(slash + 1, "law") == 0)
        return ktrt_fail(err, errlen, KT_EINVAL, "device '%s': no device row has this key, so the law's compute units are unknown", key);
    char *end;
    long cus = strtol(slash + 1, &end, 10);
    if (end == slash + 1 || *end != '/' || cus < 1 || cus > 1 << 20)
        return ktrt_fail(err, errlen, KT_EINVAL, "device '%s': expected <arch>/<compute units>/<pci id>, e.g. sm_90/132/0x2335", key);
    out->target = kt_target_for_arch(arch);
    if (!out->target) out->target = kt_target_find(arch);
    if (!out->target) return ktrt_fail(err, errlen, KT_EINVAL, "device '%s': arch '%s' has no ktune target", key, arch);
    out->compute_units = (int)cus;
    return KT_OK;
}

int ktrt_catalog_check_target(const ktrt_catalog *c, const kt_target *t, char *err, size_t errlen)
{
    if (!c || !t) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_catalog_check_target: NULL argument");
    for (int l = 0; l < c->nlayers; l++) {
        const ktrt_layer *L = &c->layers[l];
        int has = L->ntargets == 0;
        char list[160] = "";
        for (int i = 0; i < L->ntargets; i++) {
            if (strcmp(L->targets[i], t->name) == 0) has = 1;
            size_t u = strlen(list);
            snprintf(list + u, sizeof list - u, "%s%s", i ? ", " : "", L->targets[i]);
        }
        if (!has)
            return ktrt_fail(err, errlen, KT_EBADDB, "%s: a database for %s, not for this device's target %s", L->path,
                        list, t->name);
    }
    return KT_OK;
}

/* The kernel a selection names: in its own layer first, then any layer, with the same target and
 * code hash. *why says what was wrong when NULL is returned. */
static const ktrt_kernel *find_kernel(const ktrt_catalog *c, int prefer, const ktrt_selection *s, int *layer,
                                      const char **why)
{
    int stale = 0, refused = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int l = 0; l < c->nlayers; l++) {
            if ((pass == 0) != (l == prefer)) continue;
            const ktrt_layer *L = &c->layers[l];
            for (int i = 0; i < L->nkernels; i++) {
                const ktrt_kernel *k = &L->kernels[i];
                if (strcmp(k->name, s->kernel) != 0 || strcmp(k->target, s->target) != 0) continue;
                if (strcmp(k->code_hash, s->code_hash) != 0) { stale = 1; continue; }
                if (k->dtype != s->dtype) continue;
                if (k->refused) { refused = 1; continue; }
                *layer = l;
                return k;
            }
        }
    *why = refused ? "failed its sha256 check at load (the database is damaged)"
           : stale ? "was recompiled since it was measured (code hash differs)" : "is not among the ok kernels";
    return NULL;
}

long long ktrt_catalog_workspace_bytes(const ktrt_catalog *c, const kt_target *t, int units)
{
    long long most = 0;
    if (!c || !t) return 0;
    for (int l = 0; l < c->nlayers; l++)
        for (int i = 0; i < c->layers[l].nselections; i++) {
            const ktrt_selection *s = &c->layers[l].selections[i];
            int kl;
            const char *why;
            if (strcmp(s->target, t->name) != 0) continue;
            const ktrt_kernel *k = find_kernel(c, l, s, &kl, &why);
            if (!k || !kt_gemm_uses_workspace(&k->v)) continue;
            long long need = kt_gemm_partials_needed(&k->v, s->m, s->n, units) * (long long)sizeof(float);
            if (need > most) most = need;
        }
    return most;
}

/* ---- the chain ---- */

typedef struct chain {
    const ktrt_catalog *c;
    const ktrt_query *q;
    int dtype, bucket;
    char skipped[256];       /* why the first selection passed over did not serve */
    char law_note[160];      /* why the first layer with kernels of the dtype could not launch any */
} chain;

static int same_shape(const chain *ch, const ktrt_selection *s)
{
    return s->dtype == ch->dtype && s->n == ch->q->n && s->k == ch->q->k &&
           strcmp(s->target, ch->q->device->target->name) == 0;
}

/* Can selection s of layer l serve this query? Fills kernel and its layer; else notes why not. */
static int serves(chain *ch, int l, const ktrt_selection *s, const ktrt_kernel **k, int *kl)
{
    const char *why = NULL;
    char buf[160];
    *k = find_kernel(ch->c, l, s, kl, &why);
    if (*k) why = ktrt_launch_misfit(&(*k)->v, ch->q->m, ch->q->n, ch->q->device->compute_units, ch->q->workspace_bytes,
                                     buf, sizeof buf);
    if (!why) return 1;
    if (!ch->skipped[0])
        snprintf(ch->skipped, sizeof ch->skipped, "m<=%d's pick %s %s", s->m, s->kernel, why);
    *k = NULL;
    return 0;
}

static void serve(chain *ch, ktrt_pick *out, const char *path, int answering_layer, const ktrt_kernel *k, int kl)
{
    snprintf(out->choice.path, sizeof out->choice.path, "%s", path);
    snprintf(out->choice.kernel, sizeof out->choice.kernel, "%s", k->name);
    snprintf(out->choice.db_path, sizeof out->choice.db_path, "%s", ch->c->layers[answering_layer].path);
    out->choice.splitk = k->v.splitk;
    out->kernel = k;
    out->kernel_layer = kl;
}

static double log2_distance(int a, int b) { return fabs(log2((double)a) - log2((double)b)); }

/* Does candidate s (bucket-path rank inputs) rank before the best so far? */
static int nearer(const chain *ch, const ktrt_selection *s, const ktrt_selection *best, int other)
{
    if (!best) return 1;
    double ds = log2_distance(s->m, ch->bucket), db = log2_distance(best->m, ch->bucket);
    if (fabs(ds - db) > 1e-9) return ds < db;
    if (s->m != best->m) return s->m > best->m;           /* ties go to the larger bucket */
    if (!other) return 0;
    int own = ch->q->device->compute_units;
    long long cs = llabs((long long)key_compute_units(ch->c, s->device_key) - own);
    long long cb = llabs((long long)key_compute_units(ch->c, best->device_key) - own);
    if (cs != cb) return cs < cb;                          /* then the device most like this one */
    return strcmp(s->device_key, best->device_key) < 0;
}

/* This device's own selection for the key: measured = 1 a tuned one (path exact), 0 a law pick
 * the tuner stored with no device at tune time ('<target>/law'; path law). */
static int step_own(chain *ch, ktrt_pick *out, int measured)
{
    for (int l = 0; l < ch->c->nlayers; l++) {
        const ktrt_layer *L = &ch->c->layers[l];
        for (int i = 0; i < L->nselections; i++) {
            const ktrt_selection *s = &L->selections[i];
            const ktrt_kernel *k;
            int kl;
            if (s->measured != measured || s->m != ch->bucket || !same_shape(ch, s) ||
                strcmp(s->device_key, ch->q->device->key) != 0 || !serves(ch, l, s, &k, &kl))
                continue;
            serve(ch, out, measured ? "exact" : "law", l, k, kl);
            out->served_bucket = s->m;
            if (!measured)
                snprintf(out->choice.reason, sizeof out->choice.reason,
                         "the database's law pick for this device (nothing measured)");
            else if (s->time_us > 0) {
                out->choice.tuned_us = s->time_us;
                snprintf(out->choice.reason, sizeof out->choice.reason, "tuned on this device: %.3f us", s->time_us);
            } else
                snprintf(out->choice.reason, sizeof out->choice.reason, "tuned on this device");
            return 1;
        }
    }
    return 0;
}

/* other = 0: this device's measured selections; 1: another device's of the same target. */
static int step_bucket(chain *ch, ktrt_pick *out, int other)
{
    for (int l = 0; l < ch->c->nlayers; l++) {
        const ktrt_layer *L = &ch->c->layers[l];
        const ktrt_selection *best = NULL;
        const ktrt_kernel *bk = NULL;
        int bkl = -1;
        for (int i = 0; i < L->nselections; i++) {
            const ktrt_selection *s = &L->selections[i];
            const ktrt_kernel *k;
            int kl;
            if (!s->measured || !same_shape(ch, s) || (strcmp(s->device_key, ch->q->device->key) != 0) != other)
                continue;
            if (!nearer(ch, s, best, other) || !serves(ch, l, s, &k, &kl)) continue;
            best = s;
            bk = k;
            bkl = kl;
        }
        if (!best) continue;
        serve(ch, out, "bucket", l, bk, bkl);
        out->served_bucket = best->m;
        out->choice.tuned_us = best->time_us;
        if (other) {
            snprintf(out->other_device, sizeof out->other_device, "%s", best->device_key);
            snprintf(out->choice.reason, sizeof out->choice.reason,
                     "not tuned on this device (%s); tuned on %s (same target %s) at m<=%d, %.3f us there",
                     ch->q->device->key, best->device_key, best->target, best->m, best->time_us);
        } else {
            snprintf(out->choice.reason, sizeof out->choice.reason,
                     "m<=%d not tuned on this device; nearest tuned bucket m<=%d, %.3f us there", ch->bucket,
                     best->m, best->time_us);
        }
        return 1;
    }
    return 0;
}

/* The live law over one layer's kernels of (target, dtype). 1 served, 0 not (why in ch->skipped,
 * or *none set when the layer has no such kernel), -1 out of memory. */
static int law_layer(chain *ch, int l, ktrt_pick *out, int *kernels_seen)
{
    const ktrt_layer *L = &ch->c->layers[l];
    const ktrt_query *q = ch->q;
    int first = -1, count = 0;
    for (int i = 0; i < L->nkernels; i++)
        if (L->kernels[i].dtype == ch->dtype && strcmp(L->kernels[i].target, q->device->target->name) == 0) {
            if (first < 0) first = i;
            count++;
        }
    if (count == 0) return 0;
    *kernels_seen += count;
    /* all: what the law picks with unlimited workspace; fit: among what this launch can run */
    law_gemm_candidate *all = malloc((size_t)count * sizeof *all), *fit = malloc((size_t)count * sizeof *fit);
    int *fit_index = malloc((size_t)count * sizeof *fit_index), *all_index = malloc((size_t)count * sizeof *all_index);
    if (!all || !fit || !fit_index || !all_index) {
        free(all), free(fit), free(fit_index), free(all_index);
        return -1;
    }
    int nall = 0, nfit = 0;
    char buf[160], first_misfit[160] = "";
    for (int i = first; i < first + count; i++) {
        const ktrt_kernel *k = &L->kernels[i];
        if (k->refused) continue;   /* its code object failed the sha256 check */
        law_gemm_candidate cand = {k->v.bm, k->v.bn, k->v.bk, k->v.wm, k->v.wn, k->v.splitk, k->waves_per_simd};
        const char *why = ktrt_launch_misfit(&k->v, q->m, q->n, q->device->compute_units, LLONG_MAX, buf, sizeof buf);
        if (why) {
            if (!first_misfit[0]) snprintf(first_misfit, sizeof first_misfit, "%s", why);
            continue;
        }
        all_index[nall] = i;
        all[nall++] = cand;
        if (ktrt_launch_misfit(&k->v, q->m, q->n, q->device->compute_units, q->workspace_bytes, buf, sizeof buf)) continue;
        fit_index[nfit] = i;
        fit[nfit++] = cand;
    }
    law_device d = law_device_from_target(q->device->target, q->device->compute_units);
    int pf = nfit ? law_pick_gemm(&d, fit, nfit, q->m, q->n, q->k) : -1;
    int pa = nall ? law_pick_gemm(&d, all, nall, q->m, q->n, q->k) : -1;
    int served = 0;
    if (pf >= 0) {
        const ktrt_kernel *k = &L->kernels[fit_index[pf]];
        serve(ch, out, "law", l, k, l);
        snprintf(out->choice.reason, sizeof out->choice.reason,
                 "no tuned selection serves n=%d k=%d m<=%d on %s; law over %d %s kernels at %d compute units",
                 q->n, q->k, ch->bucket, q->device->target->name, count, ktrt_dtype_name(ch->dtype), q->device->compute_units);
        const ktrt_kernel *want = pa >= 0 ? &L->kernels[all_index[pa]] : NULL;
        if (want && want != k && want->v.splitk > k->v.splitk)
            reason_add(out->choice.reason, sizeof out->choice.reason,
                       "sk%d instead of the law's %s: it needs %lld bytes of split-K workspace, %lld available",
                       k->v.splitk, want->name,
                       kt_gemm_partials_needed(&want->v, q->m, q->n, q->device->compute_units) * (long long)sizeof(float),
                       q->workspace_bytes);
        served = 1;
    } else if (!ch->law_note[0] && nall > 0 && nfit == 0) {
        snprintf(ch->law_note, sizeof ch->law_note, "every %s kernel of the %s database splits K and needs more than "
                 "the %lld bytes of split-K workspace available", ktrt_dtype_name(ch->dtype), L->role, q->workspace_bytes);
    } else if (!ch->law_note[0]) {
        snprintf(ch->law_note, sizeof ch->law_note, "no %s kernel of the %s database can launch m=%d n=%d: %s",
                 ktrt_dtype_name(ch->dtype), L->role, q->m, q->n, first_misfit[0] ? first_misfit : "no usable tile");
    }
    free(all), free(fit), free(fit_index), free(all_index);
    return served;
}

int ktrt_select_gemm(const ktrt_catalog *c, const ktrt_query *q, ktrt_pick *out)
{
    if (!out) return KT_EINVAL;
    memset(out, 0, sizeof *out);
    out->kernel_layer = -1;
    snprintf(out->choice.path, sizeof out->choice.path, "refused");
    ktrt_choice *ch_out = &out->choice;
    if (!c || !q || !q->device || !q->device->target) {
        snprintf(ch_out->reason, sizeof ch_out->reason, "NULL catalog, query or device");
        return KT_EINVAL;
    }
    chain ch = {c, q, ktrt_dtype_index(q->dtype), 0, "", ""};
    if (ch.dtype < 0) {
        snprintf(ch_out->reason, sizeof ch_out->reason, "unknown dtype '%.32s' (bf16 or fp16)", q->dtype ? q->dtype : "(null)");
        return KT_EINVAL;
    }
    if (q->m < 1 || q->n < 1 || q->k < 1) {
        snprintf(ch_out->reason, sizeof ch_out->reason, "m=%d n=%d k=%d: every dimension must be >= 1", q->m, q->n, q->k);
        return KT_EINVAL;
    }
    ch.bucket = kt_m_bucket(q->m);
    out->bucket = ch.bucket;
    kt_gemm_problem_key(ch_out->problem_key, sizeof ch_out->problem_key, ktrt_dtype_name(ch.dtype), q->n, q->k, ch.bucket);

    if (step_own(&ch, out, 1) || step_bucket(&ch, out, 0) || step_bucket(&ch, out, 1) || step_own(&ch, out, 0))
        goto served;
    int seen = 0;
    for (int l = 0; l < c->nlayers; l++) {
        int r = law_layer(&ch, l, out, &seen);
        if (r > 0) goto served;
        if (r < 0) {
            snprintf(ch_out->reason, sizeof ch_out->reason, "out of memory choosing by the law");
            return KT_ENOKERNEL;
        }
    }

    /* refused: say the most specific thing that is true */
    if (seen == 0) {
        int any_target = 0;
        for (int l = 0; l < c->nlayers; l++)
            for (int i = 0; i < c->layers[l].nkernels; i++)
                if (strcmp(c->layers[l].kernels[i].target, q->device->target->name) == 0) any_target = 1;
        if (any_target)
            snprintf(ch_out->reason, sizeof ch_out->reason, "no ok gemm kernel of dtype %s for %s in %d database(s)",
                     ktrt_dtype_name(ch.dtype), q->device->target->name, c->nlayers);
        else
            snprintf(ch_out->reason, sizeof ch_out->reason, "no ok gemm kernel for %s in %d database(s)",
                     q->device->target->name, c->nlayers);
    } else {
        snprintf(ch_out->reason, sizeof ch_out->reason, "%s", ch.law_note[0] ? ch.law_note : "no usable tile");
    }
    if (ch.skipped[0]) reason_add(ch_out->reason, sizeof ch_out->reason, "%s", ch.skipped);
    return KT_ENOKERNEL;

served:
    /* a selection passed over on the way says why this path and not an earlier one */
    if (ch.skipped[0] && strcmp(ch_out->path, "exact") != 0)
        reason_add(ch_out->reason, sizeof ch_out->reason, "passed over: %s", ch.skipped);
    return KT_OK;
}
