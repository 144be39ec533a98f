/* ktrt_select.c: the selection chain of ktrt.h over an in-memory catalog (see ktrt_select.h).
 * Pure: no I/O, no GPU, no globals, so `kt explain` answers exactly what a launch would do. Every
 * family field is the descriptor's (runtime/op.h): this file knows no op by name. */
#include "ktrt_select.h"
#include "op_gemm.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const char *ktrt_launch_misfit(const ktrt_kernel *k, const kt_problem *p, int units, const long long *workspace,
                               char *buf, size_t len)
{
    const kt_op *op = k->op;
    const char *why = op->misfit ? op->misfit(&k->v, p, units, buf, len) : NULL;
    if (why) return why;
    for (int i = 0; i < op->nworkspaces; i++) {
        long long need = op->workspace_min_bytes ? op->workspace_min_bytes(&k->v, p, units, i)
                                                 : op->workspace_bytes(&k->v, p, units, i);
        long long have = workspace ? workspace[i] : 0;
        if (need > have) {
            int split = op->split_of ? op->split_of(&k->v) : -1;
            if (split >= 0)
                snprintf(buf, len, "sk%d needs %lld bytes of %s workspace, %lld available", split, need,
                         op->workspace_names[i], have);
            else
                snprintf(buf, len, "needs %lld bytes of %s workspace, %lld available", need, op->workspace_names[i], have);
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


/* The kernel a selection names: in its own layer first, then any layer, with the same target,
 * op, dtype and code hash. *why says what was wrong when NULL is returned. */
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
                if (strcmp(k->name, s->kernel) != 0 || strcmp(k->target, s->target) != 0 || k->op != s->p.op) continue;
                if (strcmp(k->code_hash, s->code_hash) != 0) { stale = 1; continue; }
                if (k->dtype != s->p.dtype) continue;
                if (k->refused) { refused = 1; continue; }
                *layer = l;
                return k;
            }
        }
    *why = refused ? "failed its sha256 check at load (the database is damaged)"
           : stale ? "was recompiled since it was measured (code hash differs)" : "is not among the ok kernels";
    return NULL;
}

long long ktrt_catalog_workspace(const ktrt_catalog *c, const kt_target *t, int units, const kt_op *op, int wi)
{
    long long most = 0;
    if (!c || !t || !op || wi < 0 || wi >= op->nworkspaces) return 0;
    /* a family that can split untuned shapes gets its floor once the catalog has its kernels */
    if (op->workspace_floor_bytes > 0)
        for (int l = 0; l < c->nlayers && most == 0; l++)
            for (int i = 0; i < c->layers[l].nkernels; i++)
                if (c->layers[l].kernels[i].op == op && strcmp(c->layers[l].kernels[i].target, t->name) == 0) {
                    most = op->workspace_floor_bytes;
                    break;
                }
    for (int l = 0; l < c->nlayers; l++)
        for (int i = 0; i < c->layers[l].nselections; i++) {
            const ktrt_selection *s = &c->layers[l].selections[i];
            int kl;
            const char *why;
            if (s->p.op != op || strcmp(s->target, t->name) != 0) continue;
            const ktrt_kernel *k = find_kernel(c, l, s, &kl, &why);
            if (!k) continue;
            long long need = op->workspace_bytes(&k->v, &s->p, units, wi);
            if (need > most) most = need;
        }
    return most;
}

long long ktrt_catalog_workspace_bytes(const ktrt_catalog *c, const kt_target *t, int units)
{
    return ktrt_catalog_workspace(c, t, units, &kt_op_gemm, 0);
}

/* ---- the chain ---- */

typedef struct chain {
    const ktrt_catalog *c;
    const ktrt_op_query *q;
    const kt_op *op;
    kt_problem key;          /* the query with every bucketed dimension snapped to its edge */
    long long bucket;        /* the first bucketed dimension's edge (ktrt_pick.bucket) */
    int bdim;                /* index of the first bucketed dimension, -1 when none */
    char buckets[64];        /* the key's bucketed part for messages: "m<=16" */
    char shape[96];          /* the key's static part for messages: "n=4096 k=4096" */
    char skipped[200];       /* why the first selection passed over did not serve */
    char law_note[200];      /* why the first layer with kernels of the dtype could not launch any */
    char ws_note[200];       /* why the law's pick is not its choice with unlimited workspace */
} chain;

static long long sel_edge(const chain *ch, const ktrt_selection *s) { return ch->bdim < 0 ? 1 : s->p.dim[ch->bdim]; }

/* A selection's bucketed part of its key, "m<=16" (its dimensions are edges already). */
static const char *sel_buckets(const ktrt_selection *s, char *buf, size_t len)
{
    if (kt_problem_bucket_text(&s->p, buf, len) < 0 && len) buf[0] = 0;
    return buf;
}

/* Is s keyed by exactly the query's edges, every bucketed dimension? */
static int same_buckets(const chain *ch, const ktrt_selection *s)
{
    for (int d = 0; d < ch->op->ndims; d++)
        if (ch->op->dims[d].bucketed && s->p.dim[d] != ch->key.dim[d]) return 0;
    return 1;
}

static int same_shape(const chain *ch, const ktrt_selection *s)
{
    return kt_problem_same_shape(&s->p, &ch->q->p) && strcmp(s->target, ch->q->device->target->name) == 0;
}

/* Can selection s of layer l serve this query? Fills kernel and its layer; else notes why not. */
static int serves(chain *ch, int l, const ktrt_selection *s, const ktrt_kernel **k, int *kl)
{
    const char *why = NULL;
    char buf[200];
    *k = find_kernel(ch->c, l, s, kl, &why);
    if (*k) why = ktrt_launch_misfit(*k, &ch->q->p, ch->q->device->compute_units, ch->q->workspace, buf, sizeof buf);
    if (!why) return 1;
    if (!ch->skipped[0]) {
        char b[64];
        snprintf(ch->skipped, sizeof ch->skipped, "%s's pick %s %s", sel_buckets(s, b, sizeof b), s->kernel, why);
    }
    *k = NULL;
    return 0;
}

static void serve(chain *ch, ktrt_pick *out, const char *path, int answering_layer, const ktrt_kernel *k, int kl)
{
    snprintf(out->choice.path, sizeof out->choice.path, "%s", path);
    snprintf(out->choice.kernel, sizeof out->choice.kernel, "%s", k->name);
    snprintf(out->choice.db_path, sizeof out->choice.db_path, "%s", ch->c->layers[answering_layer].path);
    out->choice.splitk = k->op->split_of ? k->op->split_of(&k->v) : -1;
    out->kernel = k;
    out->kernel_layer = kl;
}

static double log2_distance(long long a, long long b) { return fabs(log2((double)a) - log2((double)b)); }

/* A selection's distance from the query's buckets: the octaves between their edges, summed over
 * the bucketed dimensions (with one, the log2 distance of its edges). */
static double bucket_distance(const chain *ch, const ktrt_selection *s)
{
    double d = 0;
    for (int i = 0; i < ch->op->ndims; i++)
        if (ch->op->dims[i].bucketed) d += log2_distance(s->p.dim[i], ch->key.dim[i]);
    return d;
}

/* Does candidate s (bucket-path rank inputs) rank before the best so far? */
static int nearer(const chain *ch, const ktrt_selection *s, const ktrt_selection *best, int other)
{
    if (!best) return 1;
    double ds = bucket_distance(ch, s), db = bucket_distance(ch, best);
    if (fabs(ds - db) > 1e-9) return ds < db;
    /* ties go to the larger bucket: the first bucketed dimension where the two differ decides */
    for (int i = 0; i < ch->op->ndims; i++)
        if (ch->op->dims[i].bucketed && s->p.dim[i] != best->p.dim[i]) return s->p.dim[i] > best->p.dim[i];
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
            if (s->measured != measured || !same_buckets(ch, s) || !same_shape(ch, s) ||
                strcmp(s->device_key, ch->q->device->key) != 0 || !serves(ch, l, s, &k, &kl))
                continue;
            serve(ch, out, measured ? "exact" : "law", l, k, kl);
            out->served_bucket = sel_edge(ch, s);
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
            if (!s->measured || !same_shape(ch, s) || (strcmp(s->device_key, ch->q->device->key) != 0) != other ||
                !kt_op_bucket_serves(ch->op, &s->p, &ch->key))
                continue;
            if (!nearer(ch, s, best, other) || !serves(ch, l, s, &k, &kl)) continue;
            best = s;
            bk = k;
            bkl = kl;
        }
        if (!best) continue;
        serve(ch, out, "bucket", l, bk, bkl);
        out->served_bucket = sel_edge(ch, best);
        out->choice.tuned_us = best->time_us;
        char b[64];
        sel_buckets(best, b, sizeof b);
        if (other) {
            snprintf(out->other_device, sizeof out->other_device, "%s", best->device_key);
            snprintf(out->choice.reason, sizeof out->choice.reason,
                     "not tuned on this device (%s); tuned on %s (same target %s) at %s, %.3f us there",
                     ch->q->device->key, best->device_key, best->target, b, best->time_us);
        } else {
            snprintf(out->choice.reason, sizeof out->choice.reason,
                     "%s not tuned on this device; nearest tuned bucket %s, %.3f us there", ch->buckets, b,
                     best->time_us);
        }
        return 1;
    }
    return 0;
}

static kt_candidate candidate_of(const ktrt_kernel *k)
{
    kt_candidate c = {k->name, k->law_class, k->v, k->threads, 0, k->lds_bytes, k->waves_per_simd};
    c.regs = k->regs;
    return c;
}

/* The live law over one layer's kernels of (target, op, dtype). 1 served, 0 not (why in
 * ch->law_note), -1 out of memory. */
static int law_layer(chain *ch, int l, ktrt_pick *out, int *kernels_seen)
{
    const ktrt_layer *L = &ch->c->layers[l];
    const ktrt_op_query *q = ch->q;
    const char *dtype = ch->op->dtypes[q->p.dtype];
    int first = -1, count = 0;
    for (int i = 0; i < L->nkernels; i++)
        if (L->kernels[i].op == ch->op && L->kernels[i].dtype == q->p.dtype &&
            strcmp(L->kernels[i].target, q->device->target->name) == 0) {
            if (first < 0) first = i;
            count++;
        }
    if (count == 0) return 0;
    *kernels_seen += count;
    /* all: what the law picks with unlimited workspace; fit: among what this launch can run */
    kt_candidate *all = malloc((size_t)count * sizeof *all), *fit = malloc((size_t)count * sizeof *fit);
    int *fit_index = malloc((size_t)count * sizeof *fit_index), *all_index = malloc((size_t)count * sizeof *all_index);
    if (!all || !fit || !fit_index || !all_index) {
        free(all), free(fit), free(fit_index), free(all_index);
        return -1;
    }
    long long unlimited[KT_OP_MAX_WORKSPACES];
    for (int i = 0; i < KT_OP_MAX_WORKSPACES; i++) unlimited[i] = LLONG_MAX;
    int nall = 0, nfit = 0;
    char buf[200], first_misfit[200] = "";
    for (int i = first; i < L->nkernels; i++) {
        const ktrt_kernel *k = &L->kernels[i];
        if (k->op != ch->op || k->dtype != q->p.dtype || strcmp(k->target, q->device->target->name) != 0) continue;
        if (k->refused) continue;   /* its code object failed the sha256 check */
        const char *why = ktrt_launch_misfit(k, &q->p, q->device->compute_units, unlimited, buf, sizeof buf);
        if (why) {
            if (!first_misfit[0]) snprintf(first_misfit, sizeof first_misfit, "%s", why);
            continue;
        }
        all_index[nall] = i;
        all[nall++] = candidate_of(k);
        if (ktrt_launch_misfit(k, &q->p, q->device->compute_units, q->workspace, buf, sizeof buf)) continue;
        fit_index[nfit] = i;
        fit[nfit++] = candidate_of(k);
    }
    law_device d = law_device_from_target(q->device->target, q->device->compute_units);
    int pf = nfit ? ch->op->law_pick(&d, fit, nfit, &q->p) : -1;
    int pa = nall ? ch->op->law_pick(&d, all, nall, &q->p) : -1;
    int served = 0;
    if (pf >= 0) {
        const ktrt_kernel *k = &L->kernels[fit_index[pf]];
        serve(ch, out, "law", l, k, l);
        snprintf(out->choice.reason, sizeof out->choice.reason,
                 "no tuned selection serves %s %s on %s; law over %d %s kernels at %d compute units", ch->shape,
                 ch->buckets, q->device->target->name, count, dtype, q->device->compute_units);
        const ktrt_kernel *want = pa >= 0 ? &L->kernels[all_index[pa]] : NULL;
        if (want && want != k) {
            for (int w = 0; w < ch->op->nworkspaces; w++) {
                long long need = ch->op->workspace_bytes(&want->v, &q->p, q->device->compute_units, w);
                if (need <= q->workspace[w]) continue;
                int split = ch->op->split_of ? ch->op->split_of(&k->v) : -1;
                snprintf(ch->ws_note, sizeof ch->ws_note,
                           "%s%d instead of the law's %s: it needs %lld bytes of %s workspace, %lld available",
                           split >= 0 ? "sk" : "variant ", split >= 0 ? split : fit_index[pf], want->name, need,
                           ch->op->workspace_names[w], q->workspace[w]);
                break;
            }
        }
        served = 1;
    } else if (!ch->law_note[0] && nall > 0 && nfit == 0) {
        snprintf(ch->law_note, sizeof ch->law_note, "every %s %s kernel of the %s database needs more %s workspace "
                 "than is available", dtype, ch->op->name, L->role,
                 ch->op->nworkspaces ? ch->op->workspace_names[0] : "");
    } else if (!ch->law_note[0]) {
        snprintf(ch->law_note, sizeof ch->law_note, "no %s %s kernel of the %s database can launch %s: %s", dtype,
                 ch->op->name, L->role, ch->shape, first_misfit[0] ? first_misfit : "no usable variant");
    }
    free(all), free(fit), free(fit_index), free(all_index);
    return served;
}

int ktrt_select(const ktrt_catalog *c, const ktrt_op_query *q, ktrt_pick *out)
{
    if (!out) return KT_EINVAL;
    memset(out, 0, sizeof *out);
    out->kernel_layer = -1;
    snprintf(out->choice.path, sizeof out->choice.path, "refused");
    ktrt_choice *ch_out = &out->choice;
    if (!c || !q || !q->device || !q->device->target || !q->p.op) {
        snprintf(ch_out->reason, sizeof ch_out->reason, "NULL catalog, query, device or op");
        return KT_EINVAL;
    }
    chain ch;
    memset(&ch, 0, sizeof ch);
    ch.c = c, ch.q = q, ch.op = q->p.op;
    if (kt_problem_check(&q->p, ch_out->reason, sizeof ch_out->reason)) return KT_EINVAL;
    ch.key = kt_problem_snapped(&q->p);
    ch.bdim = kt_op_bucketed_dim(ch.op);
    ch.bucket = ch.bdim >= 0 ? ch.key.dim[ch.bdim] : 1;
    out->bucket = ch.bucket;
    kt_problem_key(&q->p, ch_out->problem_key, sizeof ch_out->problem_key);
    kt_problem_bucket_text(&q->p, ch.buckets, sizeof ch.buckets);
    for (int i = 0, u = 0; i < ch.op->ndims; i++)
        if (!ch.op->dims[i].bucketed)
            u += snprintf(ch.shape + u, sizeof ch.shape - (size_t)u, "%s%s=%lld", u ? " " : "", ch.op->dims[i].name,
                          q->p.dim[i]);

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
                if (c->layers[l].kernels[i].op == ch.op &&
                    strcmp(c->layers[l].kernels[i].target, q->device->target->name) == 0)
                    any_target = 1;
        if (any_target)
            snprintf(ch_out->reason, sizeof ch_out->reason, "no ok %s kernel of dtype %s for %s in %d database(s)",
                     ch.op->name, ch.op->dtypes[q->p.dtype], q->device->target->name, c->nlayers);
        else
            snprintf(ch_out->reason, sizeof ch_out->reason, "no ok %s kernel for %s in %d database(s)", ch.op->name,
                     q->device->target->name, c->nlayers);
    } else {
        snprintf(ch_out->reason, sizeof ch_out->reason, "%s", ch.law_note[0] ? ch.law_note : "no usable variant");
    }
    if (ch.skipped[0]) reason_add(ch_out->reason, sizeof ch_out->reason, "%s", ch.skipped);
    return KT_ENOKERNEL;

served:
    /* a selection passed over on the way says why this path and not an earlier one */
    if (ch.skipped[0] && strcmp(ch_out->path, "exact") != 0)
        reason_add(ch_out->reason, sizeof ch_out->reason, "passed over: %s", ch.skipped);
    if (ch.ws_note[0]) reason_add(ch_out->reason, sizeof ch_out->reason, "%s", ch.ws_note);
    return KT_OK;
}

int ktrt_select_gemm(const ktrt_catalog *c, const ktrt_query *q, ktrt_pick *out)
{
    ktrt_op_query oq;
    memset(&oq, 0, sizeof oq);
    if (q) {
        oq.device = q->device;
        oq.p.op = &kt_op_gemm;
        oq.p.dtype = kt_op_dtype_index(&kt_op_gemm, q->dtype);
        oq.p.dim[KT_GEMM_D_N] = q->n;
        oq.p.dim[KT_GEMM_D_K] = q->k;
        oq.p.dim[KT_GEMM_D_M] = q->m;
        oq.workspace[0] = q->workspace_bytes;
        if (oq.p.dtype < 0) {
            memset(out, 0, sizeof *out);
            out->kernel_layer = -1;
            snprintf(out->choice.path, sizeof out->choice.path, "refused");
            snprintf(out->choice.reason, sizeof out->choice.reason, "unknown dtype '%.32s' (bf16 or fp16)",
                     q->dtype ? q->dtype : "(null)");
            return KT_EINVAL;
        }
    }
    return ktrt_select(c, q ? &oq : NULL, out);
}
