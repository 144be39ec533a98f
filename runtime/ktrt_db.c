/* ktrt_db.c: one .ktdb read into a catalog layer (see ktrt_select.h). Read-only: the connection
 * stays open for the handle's life only to fetch code objects when a kernel is first launched, so
 * a process serving a few problems never copies the blobs of the hundreds it does not use. */
#include "ktrt_select.h"
#include "ktrt_dbfile.h"
#include "sha256.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ktrt_source {
    sqlite3 *h;
    sqlite3_stmt *code;       /* prepared once: every first launch of a kernel uses it */
};

static int db_fail(char *err, size_t errlen, const char *path, const char *what, sqlite3 *h)
{
    if (err && errlen) snprintf(err, errlen, "%s: %s: %s", path, what, h ? sqlite3_errmsg(h) : "");
    return KT_EBADDB;
}

/* Column i as text into dst; 0 when it fits (NULL reads as ""), -1 when it would be cut. */
static int col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    int n = snprintf(dst, len, "%s", s ? (const char *)s : "");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A row left out because a kernel name in it is longer than any the generator makes
 * (build/kernel_name.h): said on stderr, naming the row, unless KT_LOG=0. */
static void say_name_too_long(const ktrt_layer *l, sqlite3_stmt *st, int col, const char *row)
{
    if (ktrt_log_level(kt_env_get("KT_LOG")) < 1) return;
    fprintf(stderr, "ktrt: %s: %s: %s '%s' has %d characters, more than the %d a kernel name may have; row left out\n",
            l->path, row, sqlite3_column_name(st, col), (const char *)sqlite3_column_text(st, col),
            sqlite3_column_bytes(st, col), KTRT_NAME_LEN - 1);
}

/* Grows *arr (of *cap elements of size sz) to hold one more; 0 or -1 (out of memory). */
static int grow(void **arr, int *cap, int count, size_t sz)
{
    if (count < *cap) return 0;
    int ncap = *cap ? 2 * *cap : 32;
    void *p = realloc(*arr, (size_t)ncap * sz);
    if (!p) return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

static int read_devices(ktrt_layer *l, sqlite3 *h, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT key, target, arch, compute_units, pci_device_id FROM device ORDER BY key",
                           -1, &st, NULL) != SQLITE_OK)
        return db_fail(err, errlen, l->path, "reading devices", h);
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow((void **)&l->devices, &cap, l->ndevices, sizeof *l->devices)) { rc = SQLITE_NOMEM; break; }
        ktrt_device_row *d = &l->devices[l->ndevices];
        memset(d, 0, sizeof *d);
        if (col_text(st, 0, d->key, sizeof d->key) || col_text(st, 1, d->target, sizeof d->target) ||
            col_text(st, 2, d->arch, sizeof d->arch))
            continue;   /* a key longer than any we make cannot match a lookup: leave it out */
        d->compute_units = sqlite3_column_int(st, 3);
        d->pci_device_id = sqlite3_column_int(st, 4);
        l->ndevices++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KT_OK : db_fail(err, errlen, l->path, "reading devices", h);
}

/* Selections of every op the table knows, each read through its key text: a key this libktrt
 * cannot parse (an op it does not know, a malformed key) cannot match a query and is left out. */
static int read_selections(ktrt_layer *l, sqlite3 *h, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT device_key, target, problem_key, kernel, code_hash, source, time_us "
                              "FROM selection ORDER BY device_key, problem_key", -1, &st, NULL) != SQLITE_OK)
        return db_fail(err, errlen, l->path, "reading selections", h);
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (grow((void **)&l->selections, &cap, l->nselections, sizeof *l->selections)) { rc = SQLITE_NOMEM; break; }
        ktrt_selection *s = &l->selections[l->nselections];
        memset(s, 0, sizeof *s);
        char key[160], source[16], why[256];
        if (col_text(st, 3, s->kernel, sizeof s->kernel)) {
            char row[200];
            snprintf(row, sizeof row, "selection of device %.64s, %.100s", (const char *)sqlite3_column_text(st, 0),
                     (const char *)sqlite3_column_text(st, 2));
            say_name_too_long(l, st, 3, row);
            continue;
        }
        if (col_text(st, 0, s->device_key, sizeof s->device_key) || col_text(st, 1, s->target, sizeof s->target) ||
            col_text(st, 2, key, sizeof key) || col_text(st, 3, s->kernel, sizeof s->kernel) ||
            col_text(st, 4, s->code_hash, sizeof s->code_hash) || col_text(st, 5, source, sizeof source))
            continue;
        if (kt_problem_parse(key, &s->p, why, sizeof why)) continue;
        s->measured = strcmp(source, "measured") == 0;
        s->time_us = sqlite3_column_type(st, 6) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 6);
        l->nselections++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KT_OK : db_fail(err, errlen, l->path, "reading selections", h);
}

static int kernel_order(const void *a, const void *b)
{
    const ktrt_kernel *x = a, *y = b;
    int c = strcmp(x->target, y->target);
    if (!c) c = strcmp(x->op->name, y->op->name);
    if (!c) c = x->dtype - y->dtype;
    if (!c) c = strcmp(x->name, y->name);
    return c;
}

/* Dispatchable kernels: ok, code present, serving an op of the table (the `ops` column is a comma
 * list; reference kernels are 'reference:<op>' and match none). The variant is read by the op's
 * parameter table; a row whose params its op refuses cannot be launched and is left out. */
static int read_kernels(ktrt_layer *l, sqlite3 *h, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT name, target, code_hash, ops, params, template, threads, regs, lds_bytes, "
                              "waves_per_simd FROM kernel WHERE status = 'ok' AND code IS NOT NULL", -1, &st, NULL)
        != SQLITE_OK)
        return db_fail(err, errlen, l->path, "reading kernels", h);
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *ops = (const char *)sqlite3_column_text(st, 3), *params = (const char *)sqlite3_column_text(st, 4);
        const char *tmpl = (const char *)sqlite3_column_text(st, 5);
        for (int o = 0; o < kt_op_count(); o++) {
            const kt_op *op = kt_op_at(o);
            if (!kt_ops_has(ops, op->name)) continue;
            if (grow((void **)&l->kernels, &cap, l->nkernels, sizeof *l->kernels)) { rc = SQLITE_NOMEM; goto done; }
            ktrt_kernel *k = &l->kernels[l->nkernels];
            memset(k, 0, sizeof *k);
            char dtype[16], why[256];
            if (col_text(st, 0, k->name, sizeof k->name)) {
                char row[64];
                snprintf(row, sizeof row, "kernel of target %.16s", (const char *)sqlite3_column_text(st, 1));
                say_name_too_long(l, st, 0, row);
                break;
            }
            if (col_text(st, 1, k->target, sizeof k->target) || col_text(st, 2, k->code_hash, sizeof k->code_hash))
                continue;
            kt_row_resources res = {sqlite3_column_int(st, 6), sqlite3_column_int(st, 9), sqlite3_column_int(st, 7),
                                    sqlite3_column_int(st, 8)};
            if (kt_variant_from_row(op, kt_target_find(k->target), params, &res, &k->v, dtype, sizeof dtype, why,
                                    sizeof why))
                continue;
            k->op = op;
            k->dtype = kt_op_dtype_index(op, dtype);
            if (k->dtype < 0) continue;
            kt_law_class(params, tmpl, k->law_class, sizeof k->law_class);
            k->threads = sqlite3_column_int(st, 6);
            k->regs = sqlite3_column_int(st, 7);
            k->lds_bytes = sqlite3_column_int(st, 8);
            k->waves_per_simd = sqlite3_column_int(st, 9);
            l->nkernels++;
        }
    }
done:
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(err, errlen, l->path, "reading kernels", h);
    if (l->nkernels > 1) qsort(l->kernels, (size_t)l->nkernels, sizeof *l->kernels, kernel_order);
    return KT_OK;
}

static int read_targets(ktrt_layer *l, sqlite3 *h, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, "SELECT target FROM kernel UNION SELECT target FROM selection UNION "
                              "SELECT target FROM device ORDER BY 1", -1, &st, NULL) != SQLITE_OK)
        return db_fail(err, errlen, l->path, "reading targets", h);
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW)
        if (l->ntargets < KTRT_MAX_TARGETS &&
            col_text(st, 0, l->targets[l->ntargets], sizeof l->targets[0]) == 0)
            l->ntargets++;
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? KT_OK : db_fail(err, errlen, l->path, "reading targets", h);
}

static void layer_free(ktrt_layer *l)
{
    if (l->src) {
        sqlite3_finalize(l->src->code);
        sqlite3_close(l->src->h);
        free(l->src);
    }
    free(l->devices);
    free(l->selections);
    free(l->kernels);
    memset(l, 0, sizeof *l);
}

int ktrt_catalog_add(ktrt_catalog *c, const char *path, const char *role, char *err, size_t errlen)
{
    if (!c || !path) {
        if (err && errlen) snprintf(err, errlen, "ktrt_catalog_add: NULL catalog or path");
        return KT_EINVAL;
    }
    ktrt_layer l;
    memset(&l, 0, sizeof l);
    if (snprintf(l.path, sizeof l.path, "%s", path) >= (int)sizeof l.path) {
        if (err && errlen) snprintf(err, errlen, "%.200s...: path longer than %zu bytes", path, sizeof l.path - 1);
        return KT_EINVAL;
    }
    l.role = role ? role : "caller";
    sqlite3 *h = NULL;
    int code = ktrt_dbfile_open(path, &h, err, errlen);
    if (code != KT_OK) return code;
    l.src = calloc(1, sizeof *l.src);
    if (!l.src) {
        sqlite3_close(h);
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        return KT_ENODB;
    }
    l.src->h = h;
    if ((code = read_devices(&l, h, err, errlen)) || (code = read_selections(&l, h, err, errlen)) ||
        (code = read_kernels(&l, h, err, errlen)) || (code = read_targets(&l, h, err, errlen)))
        goto fail;
    if (sqlite3_prepare_v2(h, "SELECT code FROM kernel WHERE target = ?1 AND name = ?2 AND code_hash = ?3",
                           -1, &l.src->code, NULL) != SQLITE_OK) {
        code = db_fail(err, errlen, path, "preparing code reads", h);
        goto fail;
    }
    ktrt_layer *grown = realloc(c->layers, (size_t)(c->nlayers + 1) * sizeof *grown);
    if (!grown) {
        if (err && errlen) snprintf(err, errlen, "%s: out of memory", path);
        code = KT_ENODB;
        goto fail;
    }
    c->layers = grown;
    c->layers[c->nlayers++] = l;
    return KT_OK;
fail:
    layer_free(&l);
    return code;
}

void ktrt_catalog_free(ktrt_catalog *c)
{
    if (!c) return;
    for (int i = 0; i < c->nlayers; i++) layer_free(&c->layers[i]);
    free(c->layers);
    c->layers = NULL;
    c->nlayers = 0;
}

int ktrt_layer_code(ktrt_layer *l, const ktrt_kernel *k, void **code, size_t *len, char *err, size_t errlen)
{
    *code = NULL;
    *len = 0;
    if (!l || !l->src || !k) {
        if (err && errlen) snprintf(err, errlen, "ktrt_layer_code: NULL layer or kernel");
        return KT_EINVAL;
    }
    sqlite3_stmt *st = l->src->code;
    sqlite3_bind_text(st, 1, k->target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, k->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, k->code_hash, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st), code_rc = KT_OK;
    if (rc == SQLITE_ROW) {
        int n = sqlite3_column_bytes(st, 0);
        const void *blob = sqlite3_column_blob(st, 0);
        char hex[65] = "";
        if (n > 0 && blob) sha256_hex(blob, (size_t)n, hex);
        if (n <= 0 || !blob) {
            if (err && errlen) snprintf(err, errlen, "%s: kernel %s (%s): empty code object", l->path, k->name, k->target);
            code_rc = KT_EBADDB;
        } else if (strcmp(hex, k->code_hash) != 0) {
            if (err && errlen)
                snprintf(err, errlen, "%s: kernel %s (%s): the code object's sha256 is %.16s..., its row's code hash "
                         "%.16s...: the database is damaged; code refused", l->path, k->name, k->target, hex, k->code_hash);
            /* every entry of this row (one per op it serves) is refused */
            for (int i = 0; i < l->nkernels; i++)
                if (strcmp(l->kernels[i].name, k->name) == 0 && strcmp(l->kernels[i].target, k->target) == 0)
                    l->kernels[i].refused = 1;
            code_rc = KT_EBADDB;
        } else if (!(*code = malloc((size_t)n))) {
            if (err && errlen) snprintf(err, errlen, "%s: kernel %s: out of memory (%d bytes)", l->path, k->name, n);
            code_rc = KT_EDEVICE;
        } else {
            memcpy(*code, blob, (size_t)n);
            *len = (size_t)n;
        }
    } else if (rc == SQLITE_DONE) {
        if (err && errlen)
            snprintf(err, errlen, "%s: kernel %s (%s) with code hash %.16s is gone (the database changed since it was opened)",
                     l->path, k->name, k->target, k->code_hash);
        code_rc = KT_EBADDB;
    } else {
        code_rc = db_fail(err, errlen, l->path, "reading a code object", l->src->h);
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return code_rc;
}
