/* op.c: the values every descriptor shares (runtime/op.h): bucket edges, key text, variant
 * parameters, a kernel row's occupancy. Written once here, so a key or a parameter spelt two ways cannot happen. */
#include "op.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fitted(int n, size_t len) { return n < 0 || (size_t)n >= len ? -1 : n; }

int kt_op_dtype_index(const kt_op *op, const char *dtype)
{
    for (int i = 0; op && dtype && i < op->ndtypes; i++)
        if (strcmp(op->dtypes[i], dtype) == 0) return i;
    return -1;
}

int kt_op_bucketed_dim(const kt_op *op)
{
    for (int i = 0; op && i < op->ndims; i++)
        if (op->dims[i].bucketed) return i;
    return -1;
}

_Static_assert(KT_OP_MAX_DIMS <= 32, "kt_op.bucket_same_dims holds a bit a dimension");
int kt_op_bucket_serves(const kt_op *op, const kt_problem *tuned, const kt_problem *key)
{
    for (int d = 0; op && d < op->ndims; d++)
        if ((op->bucket_same_dims >> d & 1u) && tuned->dim[d] != key->dim[d]) return 0;
    return 1;
}

/* Dimension d of op when it is a bucketed one with edges, else NULL. */
static const kt_op_dim *bucketed(const kt_op *op, int d)
{
    if (!op || d < 0 || d >= op->ndims || !op->dims[d].bucketed || op->dims[d].nedges < 1) return NULL;
    return &op->dims[d];
}

/* Index of the edge serving v in dimension dd (v >= 1). */
static int edge_index(const kt_op_dim *dd, long long v)
{
    for (int i = 0; i < dd->nedges; i++)
        if (dd->edges[i] >= v) return i;
    return dd->nedges - 1;
}

long long kt_op_bucket(const kt_op *op, int d, long long v)
{
    const kt_op_dim *dd = bucketed(op, d);
    if (!dd || v < 1) return -1;
    return dd->edges[edge_index(dd, v)];
}

int kt_op_is_edge(const kt_op *op, int d, long long v)
{
    const kt_op_dim *dd = bucketed(op, d);
    for (int i = 0; dd && i < dd->nedges; i++)
        if (dd->edges[i] == v) return 1;
    return 0;
}

int kt_op_edges_kept(const kt_op *op, int d, long long limit)
{
    const kt_op_dim *dd = bucketed(op, d);
    if (!dd) return 0;
    return limit > 0 ? edge_index(dd, limit) + 1 : dd->nedges;
}

long long kt_op_edge_combos(const kt_op *op, const long long *limit)
{
    if (!op) return 0;
    long long n = 1;
    for (int d = 0; d < op->ndims; d++)
        if (op->dims[d].bucketed) n *= kt_op_edges_kept(op, d, limit ? limit[d] : 0);
    return n;
}

int kt_problem_edge_combo(const kt_problem *shape, const long long *limit, long long i, kt_problem *out)
{
    const kt_op *op = shape ? shape->op : NULL;
    if (!op || i < 0 || i >= kt_op_edge_combos(op, limit)) return -1;
    *out = *shape;
    /* mixed radix, the last bucketed dimension the lowest digit: key (and kt_key_order) order */
    for (int d = op->ndims - 1; d >= 0; d--) {
        if (!op->dims[d].bucketed) continue;
        int kept = kt_op_edges_kept(op, d, limit ? limit[d] : 0);
        out->dim[d] = op->dims[d].edges[i % kept];
        i /= kept;
    }
    return 0;
}

kt_problem kt_problem_snapped(const kt_problem *p)
{
    kt_problem s = *p;
    for (int d = 0; p->op && d < p->op->ndims; d++)
        if (p->op->dims[d].bucketed) s.dim[d] = kt_op_bucket(p->op, d, p->dim[d]);
    return s;
}

int kt_problem_equal(const kt_problem *a, const kt_problem *b)
{
    if (a->op != b->op || a->dtype != b->dtype) return 0;
    for (int i = 0; a->op && i < a->op->ndims; i++)
        if (a->dim[i] != b->dim[i]) return 0;
    return 1;
}

long long kt_problem_bucketed(const kt_problem *p)
{
    int b = kt_op_bucketed_dim(p->op);
    return b < 0 ? 1 : p->dim[b];
}

const char *kt_problem_phase(const kt_problem *p)
{
    long long e = kt_op_bucket(p->op, kt_op_bucketed_dim(p->op), kt_problem_bucketed(p));
    return e > 0 && e <= p->op->decode_edge ? "decode" : "prefill";
}

int kt_op_dim_min(const kt_op *op, int d)
{
    return op && d >= 0 && d < op->ndims && !op->dims[d].bucketed && op->dims[d].zero_ok ? 0 : 1;
}

int kt_problem_check(const kt_problem *p, char *err, size_t errlen)
{
    if (!p || !p->op) return snprintf(err, errlen, "no op"), -1;
    if (p->dtype < 0 || p->dtype >= p->op->ndtypes)
        return snprintf(err, errlen, "%s: dtype index %d out of range", p->op->name, p->dtype), -1;
    for (int i = 0; i < p->op->ndims; i++) {
        int lo = kt_op_dim_min(p->op, i);
        if (p->dim[i] < lo || p->dim[i] > 0x7fffffffLL)
            return snprintf(err, errlen, "%s: %s=%lld: must be >= %d and fit an int", p->op->name, p->op->dims[i].name,
                            p->dim[i], lo), -1;
    }
    return 0;
}

/* "name=v" or "name<=edge" for each dimension of p that `which` selects (1: the bucketed ones; 2:
 * every one), bucketed values snapped, appended at buf + n (space-separated). The new length, or
 * -1 (does not fit, a value below its dimension's minimum). */
static int dims_text(const kt_problem *p, int which, char *buf, size_t len, int n)
{
    const kt_op *op = p->op;
    for (int i = 0; i < op->ndims; i++) {
        const kt_op_dim *d = &op->dims[i];
        if (which == 1 && !d->bucketed) continue;
        long long v = d->bucketed ? kt_op_bucket(op, i, p->dim[i]) : p->dim[i];
        if (v < kt_op_dim_min(op, i)) return -1;
        int m = snprintf(buf + n, len - (size_t)n, "%s%s%s%lld", n ? " " : "", d->name, d->bucketed ? "<=" : "=", v);
        if (fitted(m, len - (size_t)n) < 0) return -1;
        n += m;
    }
    return n;
}

int kt_problem_key(const kt_problem *p, char *buf, size_t len)
{
    if (len) buf[0] = 0;
    if (!p || !p->op || p->dtype < 0 || p->dtype >= p->op->ndtypes) return -1;
    if (p->instance && !p->op->second_instance) return -1;
    int n = fitted(snprintf(buf, len, "%s %s", p->op->name, p->op->dtypes[p->dtype]), len);
    n = n < 0 ? -1 : dims_text(p, 2, buf, len, n);
    if (n >= 0 && p->instance) n = fitted(n + snprintf(buf + n, len - (size_t)n, " @%s", p->op->second_instance), len);
    return n;
}

int kt_problem_bucket_text(const kt_problem *p, char *buf, size_t len)
{
    if (len) buf[0] = 0;
    if (!p || !p->op || !len) return -1;
    return dims_text(p, 1, buf, len, 0);
}

int kt_problem_parse(const char *key, kt_problem *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char word[64];
    const char *s = key ? key : "";
    if (sscanf(s, "%63s", word) != 1) return snprintf(err, errlen, "empty problem key"), -1;
    const kt_op *op = kt_op_find(word);
    if (!op) return snprintf(err, errlen, "'%s': unknown op '%s'", s, word), -1;
    return kt_op_parse_key(op, key, p, err, errlen);
}

int kt_op_parse_key(const kt_op *op, const char *key, kt_problem *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    char word[64];
    const char *s = key ? key : "";
    int used = 0;
    if (!op) return snprintf(err, errlen, "'%s': no op", s), -1;
    if (sscanf(s, "%63s%n", word, &used) != 1) return snprintf(err, errlen, "empty problem key"), -1;
    if (strcmp(word, op->name) != 0) return snprintf(err, errlen, "'%s': not a key of %s", s, op->name), -1;
    p->op = op;
    s += used;
    if (sscanf(s, "%63s%n", word, &used) != 1) return snprintf(err, errlen, "'%s': no dtype", key), -1;
    p->dtype = kt_op_dtype_index(p->op, word);
    if (p->dtype < 0) return snprintf(err, errlen, "'%s': %s has no dtype '%s'", key, p->op->name, word), -1;
    s += used;
    for (int i = 0; i < p->op->ndims; i++) {
        const kt_op_dim *d = &p->op->dims[i];
        while (*s == ' ') s++;
        size_t nl = strlen(d->name);
        const char *rel = d->bucketed ? "<=" : "=";
        size_t rl = strlen(rel);
        if (strncmp(s, d->name, nl) != 0 || strncmp(s + nl, rel, rl) != 0)
            return snprintf(err, errlen, "'%s': expected '%s%s' at '%s'", key, d->name, rel, s), -1;
        s += nl + rl;
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        int lo = kt_op_dim_min(p->op, i);
        if (end == s || errno || v < lo || v > 0x7fffffffLL || (*end && *end != ' '))
            return snprintf(err, errlen, "'%s': %s: not %s", key, d->name,
                            lo ? "a positive integer" : "an integer >= 0"), -1;
        if (d->bucketed && !kt_op_is_edge(p->op, i, v))
            return snprintf(err, errlen, "'%s': %s<=%lld is not a bucket edge of %s", key, d->name, v, p->op->name), -1;
        p->dim[i] = v;
        s = end;
    }
    while (*s == ' ') s++;
    if (*s == '@' && p->op->second_instance && strcmp(s + 1, p->op->second_instance) == 0) {
        p->instance = 1;
        return 0;
    }
    if (*s) return snprintf(err, errlen, "'%s': unexpected '%s' after the dimensions", key, s), -1;
    return 0;
}

int kt_problem_same_shape(const kt_problem *a, const kt_problem *b)
{
    if (a->op != b->op || a->dtype != b->dtype) return 0;
    for (int i = 0; i < a->op->ndims; i++)
        if (!a->op->dims[i].bucketed && a->dim[i] != b->dim[i]) return 0;
    return 1;
}

/* ---- params JSON: a flat object of integers and strings, as gen writes it ---- */

static const char *skip_ws(const char *s)
{
    while (*s && isspace((unsigned char)*s)) s++;
    return s;
}

/* A JSON string at s (after its opening quote is checked): copied to out (escapes kept only
 * for \" and \\, which is all gen emits), returns the text after the closing quote or NULL. */
static const char *read_string(const char *s, char *out, size_t len)
{
    if (*s != '"') return NULL;
    s++;
    size_t n = 0;
    while (*s && *s != '"') {
        char c = *s++;
        if (c == '\\') {
            if (!*s) return NULL;
            c = *s++;
        }
        if (n + 1 < len) out[n++] = c;
    }
    if (len) out[n < len ? n : len - 1] = 0;
    return *s == '"' ? s + 1 : NULL;
}

/* Walks a flat object: calls each(ctx, name, text, number, is_string) per member; each returns 0
 * to go on or -1 (its message in err). 0 at the end, -1 on bad JSON or a refusal. */
typedef int (*member_fn)(void *ctx, const char *name, const char *text, long long number, int is_string,
                         char *err, size_t errlen);

static int params_walk(const char *json, member_fn each, void *ctx, char *err, size_t errlen)
{
    const char *s = skip_ws(json ? json : "");
    if (*s != '{') return snprintf(err, errlen, "params '%.60s': not a JSON object", json ? json : ""), -1;
    s = skip_ws(s + 1);
    while (*s && *s != '}') {
        char name[48], text[64] = "";
        long long x = 0;
        int is_string = *s == '"';
        s = read_string(s, name, sizeof name);
        if (!s) return snprintf(err, errlen, "params '%.60s': bad key", json), -1;
        s = skip_ws(s);
        if (*s != ':') return snprintf(err, errlen, "params '%.60s': expected ':' after \"%s\"", json, name), -1;
        s = skip_ws(s + 1);
        is_string = *s == '"';
        if (is_string) {
            s = read_string(s, text, sizeof text);
            if (!s) return snprintf(err, errlen, "params '%.60s': bad string for \"%s\"", json, name), -1;
        } else {
            char *end;
            errno = 0;
            x = strtoll(s, &end, 10);
            if (end == s || errno || x < -0x7fffffffLL || x > 0x7fffffffLL || *end == '.' || *end == 'e' || *end == 'E')
                return snprintf(err, errlen, "params '%.60s': \"%s\" is not an integer", json, name), -1;
            s = end;
        }
        if (each(ctx, name, text, x, is_string, err, errlen)) return -1;
        s = skip_ws(s);
        if (*s == ',') s = skip_ws(s + 1);
        else if (*s != '}') return snprintf(err, errlen, "params '%.60s': expected ',' or '}'", json), -1;
    }
    if (*s != '}') return snprintf(err, errlen, "params '%.60s': unterminated object", json), -1;
    return 0;
}

typedef struct variant_ctx {
    const kt_op *op;
    kt_variant *v;
    int seen[KT_OP_MAX_PARAMS];
    char *dtype;
    size_t dtype_len;
} variant_ctx;

static int variant_member(void *ctx, const char *name, const char *text, long long x, int is_string, char *err,
                          size_t errlen)
{
    variant_ctx *c = ctx;
    int idx = -1;
    for (int i = 0; i < c->op->nparams; i++)
        if (strcmp(c->op->params[i].name, name) == 0) idx = i;
    if (is_string) {
        if (idx >= 0) return snprintf(err, errlen, "params: %s: \"%s\" must be an integer", c->op->name, name), -1;
        if (strcmp(name, "dtype") == 0 && c->dtype) snprintf(c->dtype, c->dtype_len, "%s", text);
        return 0;
    }
    if (idx < 0) return 0;
    if (x < c->op->params[idx].min)
        return snprintf(err, errlen, "params: %s: %s=%lld below its minimum %d", c->op->name, name, x,
                        c->op->params[idx].min), -1;
    c->v->p[idx] = (int)x;
    c->seen[idx] = 1;
    return 0;
}

int kt_variant_parse(const kt_op *op, const char *json, kt_variant *v, char *dtype_out, size_t dtype_len,
                     char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    if (dtype_out && dtype_len) dtype_out[0] = 0;
    variant_ctx c = {op, v, {0}, dtype_out, dtype_len};
    if (params_walk(json, variant_member, &c, err, errlen)) return -1;
    for (int i = 0; i < op->nparams; i++) {
        if (c.seen[i]) continue;
        if (op->params[i].fallback < op->params[i].min)
            return snprintf(err, errlen, "params '%.60s': %s needs \"%s\"", json, op->name, op->params[i].name), -1;
        v->p[i] = op->params[i].fallback;
    }
    return 0;
}

typedef struct text_ctx {
    const char *name;
    char *out;
    size_t len;
    int found;
} text_ctx;

static int text_member(void *ctx, const char *name, const char *text, long long x, int is_string, char *err,
                       size_t errlen)
{
    text_ctx *c = ctx;
    if (is_string && strcmp(name, c->name) == 0) {
        snprintf(c->out, c->len, "%s", text);
        c->found = 1;
    }
    return 0;
}

int kt_params_text(const char *json, const char *name, char *out, size_t len)
{
    char err[160];
    if (len) out[0] = 0;
    text_ctx c = {name, out, len, 0};
    if (params_walk(json, text_member, &c, err, sizeof err)) return -1;
    return c.found;
}

int kt_variant_get(const kt_op *op, const kt_variant *v, const char *param)
{
    for (int i = 0; op && i < op->nparams; i++)
        if (strcmp(op->params[i].name, param) == 0) return v->p[i];
    return 0;
}

void kt_law_class(const char *params, const char *template_path, char *out, size_t len)
{
    if (kt_params_text(params ? params : "", "law", out, len) == 1 && out[0]) return;
    const char *t = template_path ? template_path : "", *base = strrchr(t, '/');
    base = base ? base + 1 : t;
    snprintf(out, len, "%.*s", (int)strcspn(base, "."), base);
}

/* ---- a kernel row's occupancy ---- */

static int ceil_div_int(int a, int b) { return (a + b - 1) / b; }

/* build/occupancy.c wrote waves_per_simd with every limit (registers, LDS, slots) applied, from
 * the ELF's full resources, which the row no longer has; libktrt does not link it. So the blocks
 * are recovered from that figure. NVIDIA: warps per SM = blocks x warps per block, exact. AMD:
 * waves per SIMD = ceil(blocks x waves per block / SIMDs) over the pool (the busiest SIMD), so
 * floor(waves x SIMDs / waves per block) is an upper bound, tightened by the pool's LDS and block
 * slots. An RDNA pool is a WGP of two CUs (the CUs the device reports, law_device_from_target):
 * its blocks are halved, and a block that needs the whole WGP counts as one per CU. */
int kt_row_occupancy(const kt_target *t, const kt_row_resources *r)
{
    if (!t || !r || r->threads < 1 || r->waves_per_simd < 1 || t->wave_size < 1) return 0;
    int wpb = ceil_div_int(r->threads, t->wave_size);
    if (t->vendor == KT_VENDOR_NVIDIA) return r->waves_per_simd / wpb;
    int simds = t->simds_per_pool > 0 ? t->simds_per_pool : 1;
    int groups = r->waves_per_simd * simds / wpb;
    if (t->max_blocks_per_pool > 0 && groups > t->max_blocks_per_pool) groups = t->max_blocks_per_pool;
    if (r->lds_bytes > 0 && t->lds_granule > 0 && t->lds_per_pool > 0) {
        int alloc = ceil_div_int(r->lds_bytes, t->lds_granule) * t->lds_granule, by_lds = t->lds_per_pool / alloc;
        if (groups > by_lds) groups = by_lds;
    }
    int cus_per_pool = t->wave_size == 32 ? 2 : 1;
    if (groups < 1) return 0;
    return groups / cus_per_pool > 0 ? groups / cus_per_pool : 1;
}

int kt_variant_from_row(const kt_op *op, const kt_target *t, const char *params, const kt_row_resources *r,
                        kt_variant *v, char *dtype_out, size_t dtype_len, char *err, size_t errlen)
{
    if (kt_variant_parse(op, params, v, dtype_out, dtype_len, err, errlen)) return -1;
    v->occupancy = kt_row_occupancy(t, r);
    v->lds_bytes = r ? r->lds_bytes : 0;
    return 0;
}

int kt_op_lex_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, kt_op_misfit_fn misfit,
                   kt_op_law_key_fn key_of, int nkeys)
{
    if (!c || n < 1 || !p || nkeys < 1 || nkeys > KT_OP_LEX_MAX_KEYS) return -1;
    const int units = d && d->compute_units > 0 ? d->compute_units : 1;
    int best = -1;
    long long bk[KT_OP_LEX_MAX_KEYS] = {0};
    for (int i = 0; i < n; i++) {
        char buf[200];
        if (misfit(&c[i].v, p, units, buf, sizeof buf)) continue;
        long long key[KT_OP_LEX_MAX_KEYS];
        key_of(d, &c[i], p, key);
        int better = best < 0;
        for (int j = 0; !better && j < nkeys; j++)
            if (key[j] != bk[j]) { better = key[j] > bk[j]; break; }
        if (better) { best = i; memcpy(bk, key, sizeof bk); }
    }
    return best;
}
