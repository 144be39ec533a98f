/* ktrt.c: libktrt's handle: the layers (ktrt_layers.c), the device (backend.h), split-K workspace
 * slots, lazily loaded code objects, and the launch. The choice itself is ktrt_select.c's. */
#include "ktrt.h"
#include "ktrt_select.h"
#include "backend.h"
#include "problem_key.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Choices are remembered per (dtype, m, n, k, workspace): a serving loop asks the same few
 * questions millions of times, and the law path ranks every kernel of the dtype. Direct-mapped:
 * a collision only costs a recomputation. */
#define KTRT_CACHE_SIZE 256

typedef struct ktrt_slot {
    void *stream;            /* the stream bound to this slot */
    int bound;
    void *buf;               /* ws_bytes of device memory; NULL when ws_bytes is 0 */
} ktrt_slot;

typedef struct ktrt_loaded {
    void *module, *fn, *reduce;
} ktrt_loaded;

typedef struct ktrt_cached {
    int used, dtype, m, n, k, rc;
    long long ws;
    ktrt_pick pick;
} ktrt_cached;

struct ktrt {
    ktrt_catalog cat;
    ktb_backend *gpu;
    ktb_device_info info;
    ktrt_device dev;
    pthread_mutex_t lock;            /* guards everything below and the layers' code reads */
    long long ws_bytes;
    ktrt_slot *slots;
    int nslots;
    ktrt_loaded **loaded;            /* [layer][kernel index] */
    ktrt_cached *cache;
    ktrt_log log;                    /* once-per-key stderr lines (KT_LOG) */
    ktrt_stats stats;                /* ktrt_gemm calls by path */
};


/* ---- choice (under the lock) ---- */

static int choose_locked(ktrt *rt, const char *dtype, int m, int n, int k, long long ws, const ktrt_pick **out)
{
    int di = ktrt_dtype_index(dtype);
    uint64_t h = (uint64_t)(unsigned)di * 0x9E3779B97F4A7C15ull;
    h = (h ^ (unsigned)m) * 0x100000001B3ull;
    h = (h ^ (unsigned)n) * 0x100000001B3ull;
    h = (h ^ (unsigned)k) * 0x100000001B3ull;
    h = (h ^ (uint64_t)ws) * 0x100000001B3ull;
    ktrt_cached *c = &rt->cache[(h >> 17) % KTRT_CACHE_SIZE];
    if (c->used && c->dtype == di && c->m == m && c->n == n && c->k == k && c->ws == ws) {
        *out = &c->pick;
        return c->rc;
    }
    ktrt_query q = {&rt->dev, dtype, m, n, k, ws};
    c->rc = ktrt_select_gemm(&rt->cat, &q, &c->pick);
    c->used = c->rc != KT_EINVAL;
    c->dtype = di, c->m = m, c->n = n, c->k = k, c->ws = ws;
    ktrt_log_pick(&rt->log, stderr, &rt->dev, &c->pick);
    *out = &c->pick;
    return c->rc;
}

static int check_problem(const char *who, const char *dtype, int m, int n, int k, char *err, size_t errlen)
{
    if (ktrt_dtype_index(dtype) < 0)
        return ktrt_fail(err, errlen, KT_EINVAL, "%s: unknown dtype '%.32s' (bf16 or fp16)", who, dtype ? dtype : "(null)");
    if (m < 1 || n < 1 || k < 1)
        return ktrt_fail(err, errlen, KT_EINVAL, "%s: m=%d n=%d k=%d: every dimension must be >= 1", who, m, n, k);
    return KT_OK;
}

int ktrt_choose_gemm(ktrt *rt, const char *dtype, int m, int n, int k, ktrt_choice *choice,
                     char *err, size_t errlen)
{
    if (!rt) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_choose_gemm: NULL handle");
    int rc = check_problem("ktrt_choose_gemm", dtype, m, n, k, err, errlen);
    if (rc) return rc;
    const ktrt_pick *p;
    pthread_mutex_lock(&rt->lock);
    rc = choose_locked(rt, dtype, m, n, k, rt->ws_bytes, &p);   /* as on a stream with a slot */
    ktrt_choice copy = p->choice;
    pthread_mutex_unlock(&rt->lock);
    if (choice) *choice = copy;
    if (rc != KT_OK) ktrt_fail(err, errlen, rc, "%s: %s", copy.problem_key, copy.reason);
    return rc;
}

/* ---- launch ---- */

static void count_path(ktrt_stats *s, const char *path)
{
    if (!strcmp(path, "exact")) s->exact++;
    else if (!strcmp(path, "bucket")) s->bucket++;
    else if (!strcmp(path, "law")) s->law++;
    else s->refused++;
}

int ktrt_get_stats(ktrt *rt, ktrt_stats *out)
{
    if (!rt || !out) return KT_EINVAL;
    pthread_mutex_lock(&rt->lock);
    *out = rt->stats;
    pthread_mutex_unlock(&rt->lock);
    return KT_OK;
}


/* The slot bound to stream, else a free one (*bound 0), else -1. */
static int slot_for(ktrt *rt, void *stream, int *bound)
{
    int free_slot = -1;
    for (int i = 0; i < rt->nslots; i++) {
        if (rt->slots[i].bound && rt->slots[i].stream == stream) {
            *bound = 1;
            return i;
        }
        if (!rt->slots[i].bound && free_slot < 0) free_slot = i;
    }
    *bound = 0;
    return free_slot;
}

static int load_kernel(ktrt *rt, const ktrt_pick *p, ktrt_loaded *out, char *err, size_t errlen)
{
    ktrt_layer *layer = &rt->cat.layers[p->kernel_layer];
    ktrt_loaded *l = &rt->loaded[p->kernel_layer][p->kernel - layer->kernels];
    if (l->fn) {
        *out = *l;
        return KT_OK;
    }
    const ktrt_kernel *k = p->kernel;
    void *code = NULL;
    size_t len = 0;
    int rc = ktrt_layer_code(layer, k, &code, &len, err, errlen);
    if (rc) return rc;
    void *module = NULL, *fn = NULL, *reduce = NULL;
    char why[384] = "", reduce_name[KTRT_NAME_LEN + 8];
    snprintf(reduce_name, sizeof reduce_name, "%s_reduce", k->name);
    if (ktb_module_load(rt->gpu, code, len, &module, why, sizeof why) ||
        ktb_function(rt->gpu, module, k->name, &fn, why, sizeof why)) {
        char ignored[64];
        if (module) ktb_module_unload(rt->gpu, module, ignored, sizeof ignored);
        free(code);
        return ktrt_fail(err, errlen, KT_EDEVICE, "%s: kernel %s: %s", layer->path, k->name, why);
    }
    free(code);
    /* a split-K variant without a reduce kernel reduces in its own launch (templates/abi/gemm.h) */
    char ignored[384];
    if (k->v.splitk > 1 && ktb_function(rt->gpu, module, reduce_name, &reduce, ignored, sizeof ignored)) reduce = NULL;
    l->module = module, l->fn = fn, l->reduce = reduce;
    *out = *l;
    return KT_OK;
}

int ktrt_gemm(ktrt *rt, const char *dtype, int m, int n, int k,
              const void *a, int lda, const void *w, int ldw, void *c, int ldc,
              void *stream, ktrt_choice *choice, char *err, size_t errlen)
{
    if (!rt) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_gemm: NULL handle");
    int rc = check_problem("ktrt_gemm", dtype, m, n, k, err, errlen);
    if (rc) return rc;
    if (!a || !w || !c) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_gemm: NULL %s", !a ? "a" : !w ? "w" : "c");
    if (lda < k || ldw < k || ldc < n)
        return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_gemm: lda=%d ldw=%d ldc=%d: need lda >= k=%d, ldw >= k, ldc >= n=%d",
                    lda, ldw, ldc, k, n);

    const ktrt_pick *p;
    ktrt_loaded fns = {NULL, NULL, NULL};
    void *partials = NULL;
    pthread_mutex_lock(&rt->lock);
    int bound = 0, slot = slot_for(rt, stream, &bound);
    if (slot < 0 && rt->ws_bytes > 0 && rt->log.level >= 2 && ktrt_log_first(&rt->log, "slots full"))
        fprintf(stderr, "ktrt: all %d split-K workspace slots are bound to other streams; further streams use "
                        "one-segment variants\n", rt->nslots);
    long long ws = slot >= 0 ? rt->ws_bytes : 0;
    int chose = rc = choose_locked(rt, dtype, m, n, k, ws, &p);
    kt_gemm_variant v = {0};
    while (rc == KT_OK) {
        v = p->kernel->v;
        rc = load_kernel(rt, p, &fns, err, errlen);
        /* a code object that fails its sha256 check at first load marks its kernel refused: the
         * remembered choices are forgotten and the chain goes on without it (each round refuses
         * one more kernel, so this ends) */
        if (rc != KT_EBADDB || !p->kernel->refused) break;
        if (rt->log.level >= 1) fprintf(stderr, "ktrt: %s; choosing again without it\n", err);
        memset(rt->cache, 0, KTRT_CACHE_SIZE * sizeof *rt->cache);
        chose = rc = choose_locked(rt, dtype, m, n, k, ws, &p);
    }
    ktrt_choice copy = p->choice;
    count_path(&rt->stats, copy.path);
    if (chose != KT_OK) ktrt_fail(err, errlen, rc, "%s: %s", copy.problem_key, copy.reason);
    if (rc == KT_OK && kt_gemm_uses_workspace(&v)) {   /* the choice fitted the workspace, so slot >= 0 */
        rt->slots[slot].stream = stream;
        rt->slots[slot].bound = 1;
        partials = rt->slots[slot].buf;
    }
    pthread_mutex_unlock(&rt->lock);
    if (choice) *choice = copy;
    if (rc != KT_OK) return rc;

    kt_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = a, args.w = w, args.c = c;
    args.partials = partials;
    args.partials_elems = partials ? rt->ws_bytes / (long long)sizeof(float) : 0;
    args.m = m, args.n = n, args.k = k;
    args.lda = lda, args.ldw = ldw, args.ldc = ldc;
    args.k_per_split = kt_gemm_k_per_split(k, v.splitk, v.bk);
    kt_launch_dims d = kt_gemm_main_dims(&v, m, n, rt->dev.target->wave_size, rt->dev.compute_units);
    char why[384];
    if (ktb_launch(rt->gpu, fns.fn, d.grid, d.block, d.shared, stream, &args, sizeof args, why, sizeof why))
        return ktrt_fail(err, errlen, KT_EDEVICE, "%s: launching %s: %s", copy.problem_key, copy.kernel, why);
    if (v.splitk > 1 && fns.reduce) {
        d = kt_gemm_reduce_dims(m, n);
        if (ktb_launch(rt->gpu, fns.reduce, d.grid, d.block, d.shared, stream, &args, sizeof args, why, sizeof why))
            return ktrt_fail(err, errlen, KT_EDEVICE, "%s: launching %s_reduce: %s", copy.problem_key, copy.kernel, why);
    }
    return KT_OK;
}

/* ---- open / close ---- */

const char *ktrt_device_key(const ktrt *rt) { return rt ? rt->dev.key : ""; }

static const char *vendor_of(const char *target)
{
    const kt_target *t = kt_target_find(target);
    if (t) return t->vendor == KT_VENDOR_NVIDIA ? "cuda" : "hip";
    if (strncmp(target, "sm_", 3) == 0) return "cuda";
    if (strncmp(target, "gfx", 3) == 0) return "hip";
    return NULL;
}

/* The device: each vendor the layers' targets name, in layer order, until one has a device. */
static int open_device(ktrt *rt, int ordinal, char *err, size_t errlen)
{
    const char *vendors[2] = {NULL, NULL};
    int nv = 0;
    char targets[128] = "";
    for (int l = 0; l < rt->cat.nlayers; l++)
        for (int i = 0; i < rt->cat.layers[l].ntargets; i++) {
            const char *t = rt->cat.layers[l].targets[i], *v = vendor_of(t);
            if (!strstr(targets, t)) {
                size_t u = strlen(targets);
                snprintf(targets + u, sizeof targets - u, "%s%s", u ? ", " : "", t);
            }
            if (v && nv < 2 && (nv == 0 || strcmp(vendors[0], v) != 0)) vendors[nv++] = v;
        }
    if (nv == 0)
        return ktrt_fail(err, errlen, KT_ENODB, "ktrt_open: %s: the database%s no kernels or selections%s%s",
                    rt->cat.layers[0].path, rt->cat.nlayers > 1 ? "s have" : " has",
                    targets[0] ? " for a known target; targets: " : "", targets);
    char why[2][384] = {"", ""};
    for (int i = 0; i < nv; i++)
        if (ktb_open(vendors[i], ordinal, &rt->gpu, why[i], sizeof why[i]) == 0) break;
    if (!rt->gpu)
        return ktrt_fail(err, errlen, KT_ENODEVICE, "ktrt_open: no device for the databases' targets (%s): %s%s%s", targets,
                    why[0], nv > 1 ? "; " : "", nv > 1 ? why[1] : "");
    if (ktb_info(rt->gpu, &rt->info, why[0], sizeof why[0]))
        return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: device %d: %s", ordinal, why[0]);
    rt->dev.target = kt_target_for_arch(rt->info.arch);
    rt->dev.compute_units = rt->info.compute_units;
    if (!rt->dev.target)
        return ktrt_fail(err, errlen, KT_ENODEVICE, "ktrt_open: device %d (%s, %s) is not a ktune target", ordinal,
                    rt->info.name, rt->info.arch);
    if (kt_device_key(rt->dev.key, sizeof rt->dev.key, rt->info.arch, rt->info.compute_units,
                      rt->info.pci_device_id) < 0)
        return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: device %d: arch '%s' makes no device key", ordinal, rt->info.arch);
    int rc = ktrt_catalog_check_target(&rt->cat, rt->dev.target, err, errlen);
    if (rc) {
        size_t u = err ? strlen(err) : 0;
        if (err && u < errlen) snprintf(err + u, errlen - u, " (device %d: %s, %s)", ordinal, rt->info.name, rt->info.arch);
    }
    return rc;
}

static int alloc_state(ktrt *rt, const ktrt_options *o, char *err, size_t errlen)
{
    long long need = ktrt_catalog_workspace_bytes(&rt->cat, rt->dev.target, rt->dev.compute_units);
    rt->ws_bytes = (long long)o->workspace_bytes > need ? (long long)o->workspace_bytes : need;
    rt->nslots = o->max_streams > 0 ? o->max_streams : 4;
    rt->slots = calloc((size_t)rt->nslots, sizeof *rt->slots);
    rt->loaded = calloc((size_t)rt->cat.nlayers, sizeof *rt->loaded);
    rt->cache = calloc(KTRT_CACHE_SIZE, sizeof *rt->cache);
    if (!rt->slots || !rt->loaded || !rt->cache) return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: out of memory");
    for (int l = 0; l < rt->cat.nlayers; l++) {
        int n = rt->cat.layers[l].nkernels;
        rt->loaded[l] = calloc((size_t)(n > 0 ? n : 1), sizeof **rt->loaded);
        if (!rt->loaded[l]) return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: out of memory");
    }
    char why[384];
    for (int i = 0; rt->ws_bytes > 0 && i < rt->nslots; i++)
        if (ktb_alloc(rt->gpu, (size_t)rt->ws_bytes, &rt->slots[i].buf, why, sizeof why))
            return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: split-K workspace slot %d of %d (%lld bytes): %s", i + 1,
                        rt->nslots, rt->ws_bytes, why);
    /* the tile counters at each workspace's end start at zero; launches leave them zero */
    for (int i = 0; rt->ws_bytes > 0 && i < rt->nslots; i++)
        if (ktb_memset8(rt->gpu, rt->slots[i].buf, 0, (size_t)rt->ws_bytes, why, sizeof why))
            return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: clearing split-K workspace slot %d: %s", i + 1, why);
    return KT_OK;
}

int ktrt_open(const ktrt_options *opts, ktrt **out, char *err, size_t errlen)
{
    if (!out) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_open: NULL out pointer");
    *out = NULL;
    ktrt_options o;
    memset(&o, 0, sizeof o);
    if (opts) o = *opts;
    if (o.device < 0 || o.max_streams < 0)
        return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_open: device %d, max_streams %d: must be >= 0", o.device, o.max_streams);
    ktrt *rt = calloc(1, sizeof *rt);
    if (!rt) return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: out of memory");
    pthread_mutex_init(&rt->lock, NULL);
    rt->log.level = ktrt_log_level(getenv("KT_LOG"));
    int rc = ktrt_layers_open(&rt->cat, &o, err, errlen);
    if (rc == KT_OK) rc = open_device(rt, o.device, err, errlen);
    if (rc == KT_OK) rc = alloc_state(rt, &o, err, errlen);
    if (rc != KT_OK) {
        ktrt_close(rt);
        return rc;
    }
    *out = rt;
    return KT_OK;
}

void ktrt_close(ktrt *rt)
{
    if (!rt) return;
    char ignored[256];
    for (int l = 0; rt->loaded && l < rt->cat.nlayers; l++) {
        for (int i = 0; rt->loaded[l] && i < rt->cat.layers[l].nkernels; i++)
            if (rt->loaded[l][i].module) ktb_module_unload(rt->gpu, rt->loaded[l][i].module, ignored, sizeof ignored);
        free(rt->loaded[l]);
    }
    free(rt->loaded);
    for (int i = 0; rt->slots && i < rt->nslots; i++)
        if (rt->slots[i].buf) ktb_free(rt->gpu, rt->slots[i].buf, ignored, sizeof ignored);
    free(rt->slots);
    free(rt->cache);
    ktrt_log_free(&rt->log);
    ktb_close(rt->gpu);
    ktrt_catalog_free(&rt->cat);
    pthread_mutex_destroy(&rt->lock);
    free(rt);
}
