/* ktrt.c: libktrt's handle: the layers (ktrt_layers.c), the device (backend.h), split-K workspace
 * slots, lazily loaded code objects, and the launch. The choice itself is ktrt_select.c's. */
#include "ktrt.h"
#include "ktrt_select.h"
#include "backend.h"
#include "problem_key.h"
#include "op_gemm.h"
#include "op_run.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Choices are remembered per (op, dtype, dimensions, workspace): a serving loop asks the same few
 * questions millions of times, and the law path ranks every kernel of the op. Direct-mapped: a
 * collision only costs a recomputation. */
#define KTRT_CACHE_SIZE 256

typedef struct ktrt_slot {
    void *stream;            /* the stream bound to this slot */
    int bound;
    void **buf;              /* [op][workspace] device buffers of ws_bytes; NULL where 0 bytes */
    kt_lanes lanes;          /* the bound stream's second lane (op_run.h): a plan's lane 1 */
} ktrt_slot;

typedef struct ktrt_loaded {
    void *module;
    void *fn[KT_OP_MAX_LAUNCHES];   /* by the launch's suffix, as op->launches lists them */
    char suffix[KT_OP_MAX_LAUNCHES][16];
    int nfn;
} ktrt_loaded;

typedef struct ktrt_cached {
    int used, rc;
    kt_problem p;
    long long ws[KT_OP_MAX_WORKSPACES];
    ktrt_pick pick;
} ktrt_cached;

struct ktrt {
    ktrt_catalog cat;
    ktb_backend *gpu;
    ktb_device_info info;
    ktrt_device dev;
    pthread_mutex_t lock;            /* guards everything below and the layers' code reads */
    int nops;
    long long *ws_bytes;             /* [op][workspace]: bytes of each slot's buffer */
    int any_ws;                      /* some op has a workspace buffer of > 0 bytes */
    ktrt_slot *slots;
    int nslots;
    ktrt_loaded **loaded;            /* [layer][kernel index] */
    ktrt_cached *cache;
    ktrt_log log;                    /* once-per-key stderr lines (KT_LOG) */
    ktrt_stats stats;                /* launches by path */
};

static long long *ws_of(ktrt *rt, const kt_op *op)
{
    for (int i = 0; i < rt->nops; i++)
        if (kt_op_at(i) == op) return &rt->ws_bytes[i * KT_OP_MAX_WORKSPACES];
    return NULL;
}

static int op_index(const kt_op *op)
{
    for (int i = 0; i < kt_op_count(); i++)
        if (kt_op_at(i) == op) return i;
    return -1;
}

/* ---- choice (under the lock) ---- */

static int same_problem(const kt_problem *a, const kt_problem *b)
{
    if (a->op != b->op || a->dtype != b->dtype) return 0;
    for (int i = 0; i < a->op->ndims; i++)
        if (a->dim[i] != b->dim[i]) return 0;
    return 1;
}

static int choose_locked(ktrt *rt, const kt_problem *p, const long long *ws, const ktrt_pick **out)
{
    uint64_t h = (uint64_t)(uintptr_t)p->op * 0x9E3779B97F4A7C15ull;
    h = (h ^ (unsigned)p->dtype) * 0x100000001B3ull;
    for (int i = 0; i < p->op->ndims; i++) h = (h ^ (uint64_t)p->dim[i]) * 0x100000001B3ull;
    for (int i = 0; i < KT_OP_MAX_WORKSPACES; i++) h = (h ^ (uint64_t)ws[i]) * 0x100000001B3ull;
    ktrt_cached *c = &rt->cache[(h >> 17) % KTRT_CACHE_SIZE];
    if (c->used && same_problem(&c->p, p) && memcmp(c->ws, ws, sizeof c->ws) == 0) {
        *out = &c->pick;
        return c->rc;
    }
    ktrt_op_query q;
    memset(&q, 0, sizeof q);
    q.device = &rt->dev;
    q.p = *p;
    memcpy(q.workspace, ws, sizeof q.workspace);
    c->rc = ktrt_select(&rt->cat, &q, &c->pick);
    c->used = c->rc != KT_EINVAL;
    c->p = *p;
    memcpy(c->ws, ws, sizeof c->ws);
    ktrt_log_pick(&rt->log, stderr, &rt->dev, &c->pick);
    *out = &c->pick;
    return c->rc;
}

/* The op, the dtype and the problem a caller's argument struct describes. */
static int read_call(const char *who, const char *opname, const char *dtype, const void *args, size_t args_size,
                     kt_problem *p, char *err, size_t errlen)
{
    const kt_op *op = kt_op_find(opname);
    if (!op) return ktrt_fail(err, errlen, KT_EINVAL, "%s: unknown op '%.32s'", who, opname ? opname : "(null)");
    int dt = kt_op_dtype_index(op, dtype);
    if (dt < 0) {
        char list[64] = "";
        for (int i = 0, u = 0; i < op->ndtypes; i++)
            u += snprintf(list + u, sizeof list - (size_t)u, "%s%s", i ? " or " : "", op->dtypes[i]);
        return ktrt_fail(err, errlen, KT_EINVAL, "%s: unknown dtype '%.32s' (%s)", who, dtype ? dtype : "(null)", list);
    }
    if (!args) return ktrt_fail(err, errlen, KT_EINVAL, "%s: NULL args", who);
    if (args_size != op->args_size)
        return ktrt_fail(err, errlen, KT_EINVAL, "%s: args_size %zu, but %s's argument struct is %zu bytes (templates/abi)",
                         who, args_size, op->name, op->args_size);
    char why[256];
    memset(p, 0, sizeof *p);   /* instance 0: a call is the problem itself, never a tiebreak's */
    if (op->problem_of_args(args, p, why, sizeof why) != KT_OK)
        return ktrt_fail(err, errlen, KT_EINVAL, "%s: %s", who, why);
    p->op = op;
    p->dtype = dt;
    return KT_OK;
}

static int choose_call(ktrt *rt, const char *who, const char *op, const char *dtype, const void *args,
                       size_t args_size, ktrt_choice *choice, char *err, size_t errlen)
{
    if (!rt) return ktrt_fail(err, errlen, KT_EINVAL, "%s: NULL handle", who);
    kt_problem p;
    int rc = read_call(who, op, dtype, args, args_size, &p, err, errlen);
    if (rc) return rc;
    const ktrt_pick *pk;
    pthread_mutex_lock(&rt->lock);
    long long ws[KT_OP_MAX_WORKSPACES] = {0}, *have = ws_of(rt, p.op);
    if (have) memcpy(ws, have, sizeof ws);   /* as on a stream with a slot */
    rc = choose_locked(rt, &p, ws, &pk);
    ktrt_choice copy = pk->choice;
    pthread_mutex_unlock(&rt->lock);
    if (choice) *choice = copy;
    if (rc != KT_OK) ktrt_fail(err, errlen, rc, "%s: %s", copy.problem_key, copy.reason);
    return rc;
}

int ktrt_choose_gemm(ktrt *rt, const char *dtype, int m, int n, int k, ktrt_choice *choice,
                     char *err, size_t errlen)
{
    /* operands are not read when choosing: stand-ins pass the descriptor's NULL checks */
    static char stand_in;
    kt_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a = a.w = a.c = &stand_in;
    a.m = m, a.n = n, a.k = k, a.lda = k, a.ldw = k, a.ldc = n;
    return choose_call(rt, "ktrt_choose_gemm", "gemm", dtype, &a, sizeof a, choice, err, errlen);
}

int ktrt_choose(ktrt *rt, const char *op, const char *dtype, const void *args, size_t args_size, ktrt_choice *choice,
                char *err, size_t errlen)
{
    return choose_call(rt, "ktrt_choose", op, dtype, args, args_size, choice, err, errlen);
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

/* Looks up in l's module the function of every launch whose position has not held its suffix
 * before: a family whose launch count varies with the problem (split-KV's reduce only when it
 * splits, gdn_prefill's parts) finds its later functions on the first launch that needs them. An
 * optional one the code object lacks stays NULL. */
static int load_functions(ktrt *rt, const ktrt_layer *layer, const ktrt_kernel *k, const kt_op_launch *L, int nl,
                          ktrt_loaded *l, char *err, size_t errlen)
{
    char why[384] = "";
    for (int i = 0; i < nl && i < KT_OP_MAX_LAUNCHES; i++) {
        if (i < l->nfn && !strcmp(l->suffix[i], L[i].suffix)) continue;   /* looked up for this position before */
        char fname[KTRT_NAME_LEN + 16];
        snprintf(fname, sizeof fname, "%s%s", k->name, L[i].suffix);
        snprintf(l->suffix[i], sizeof l->suffix[i], "%s", L[i].suffix);
        if (ktb_function(rt->gpu, l->module, fname, &l->fn[i], why, sizeof why)) {
            l->fn[i] = NULL;
            if (!L[i].optional) return ktrt_fail(err, errlen, KT_EDEVICE, "%s: kernel %s: %s", layer->path, fname, why);
        }
        if (l->nfn < i + 1) l->nfn = i + 1;
    }
    return KT_OK;
}

static int load_kernel(ktrt *rt, const ktrt_pick *p, const kt_op_launch *L, int nl, ktrt_loaded *out, char *err,
                       size_t errlen)
{
    ktrt_layer *layer = &rt->cat.layers[p->kernel_layer];
    ktrt_loaded *l = &rt->loaded[p->kernel_layer][p->kernel - layer->kernels];
    const ktrt_kernel *k = p->kernel;
    if (!l->module) {
        void *code = NULL;
        size_t len = 0;
        int rc = ktrt_layer_code(layer, k, &code, &len, err, errlen);
        if (rc) return rc;
        char why[384] = "";
        ktrt_loaded got;
        memset(&got, 0, sizeof got);
        if (ktb_module_load(rt->gpu, code, len, &got.module, why, sizeof why)) {
            free(code);
            return ktrt_fail(err, errlen, KT_EDEVICE, "%s: kernel %s: %s", layer->path, k->name, why);
        }
        free(code);
        if ((rc = load_functions(rt, layer, k, L, nl, &got, err, errlen)) != KT_OK) {
            char ignored[64];
            ktb_module_unload(rt->gpu, got.module, ignored, sizeof ignored);
            return rc;
        }
        *l = got;
    } else {
        int rc = load_functions(rt, layer, k, L, nl, l, err, errlen);
        if (rc) return rc;
    }
    *out = *l;
    return KT_OK;
}

/* The one launch path: choose, load, bind the variant's fields and workspace, launch in order. */
static int run_problem(ktrt *rt, const kt_problem *p, const void *args, void *stream, ktrt_choice *choice, char *err,
                       size_t errlen)
{
    const kt_op *op = p->op;
    const ktrt_pick *pk;
    ktrt_loaded fns;
    memset(&fns, 0, sizeof fns);
    void *ws_ptr[KT_OP_MAX_WORKSPACES] = {NULL};
    long long ws[KT_OP_MAX_WORKSPACES] = {0}, *have = ws_of(rt, op);
    kt_op_launch L[KT_OP_MAX_LAUNCHES];
    int nl = 0;
    pthread_mutex_lock(&rt->lock);
    int bound = 0, slot = slot_for(rt, stream, &bound);
    if (slot < 0 && rt->any_ws && rt->log.level >= 2 && ktrt_log_first(&rt->log, "slots full"))
        fprintf(stderr, "ktrt: all %d workspace slots are bound to other streams; further streams use variants "
                        "that need no workspace\n", rt->nslots);
    if (slot >= 0 && have) memcpy(ws, have, sizeof ws);
    int chose = choose_locked(rt, p, ws, &pk), rc = chose;
    kt_variant v;
    memset(&v, 0, sizeof v);
    while (rc == KT_OK) {
        v = pk->kernel->v;
        nl = op->launches(&v, p, rt->dev.target->wave_size, rt->dev.compute_units, L);
        rc = load_kernel(rt, pk, L, nl, &fns, err, errlen);
        /* a code object that fails its sha256 check at first load marks its kernel refused: the
         * remembered choices are forgotten and the chain goes on without it (each round refuses
         * one more kernel, so this ends) */
        if (rc != KT_EBADDB || !pk->kernel->refused) break;
        if (rt->log.level >= 1) fprintf(stderr, "ktrt: %s; choosing again without it\n", err);
        memset(rt->cache, 0, KTRT_CACHE_SIZE * sizeof *rt->cache);
        chose = rc = choose_locked(rt, p, ws, &pk);
    }
    ktrt_choice copy = pk->choice;
    count_path(&rt->stats, copy.path);
    if (chose != KT_OK)
        ktrt_fail(err, errlen, rc, "%s: %s%s", copy.problem_key, copy.reason,
                  slot < 0 && rt->any_ws ? " (this stream has no workspace: every slot is bound to another stream; "
                                           "raise ktrt_options.max_streams)" : "");
    if (rc == KT_OK && slot >= 0 && op->nworkspaces > 0 && op->needs_workspace && op->needs_workspace(&v)) {
        /* a choice that needs its workspace fitted it, so it has a slot; one that can run on less
         * (workspace_min_bytes) runs without one when every slot is bound elsewhere */
        rt->slots[slot].stream = stream;
        rt->slots[slot].bound = 1;
        int oi = op_index(op);
        for (int i = 0; i < op->nworkspaces; i++) ws_ptr[i] = rt->slots[slot].buf[oi * KT_OP_MAX_WORKSPACES + i];
    }
    pthread_mutex_unlock(&rt->lock);
    if (choice) *choice = copy;
    if (rc != KT_OK) return rc;

    unsigned char bound_args[512];
    if (op->args_size > sizeof bound_args)
        return ktrt_fail(err, errlen, KT_EINVAL, "%s: argument struct of %zu bytes", op->name, op->args_size);
    memcpy(bound_args, args, op->args_size);
    long long ws_used[KT_OP_MAX_WORKSPACES];
    for (int i = 0; i < KT_OP_MAX_WORKSPACES; i++) ws_used[i] = ws_ptr[i] ? ws[i] : 0;
    op->bind(bound_args, &v, p, rt->dev.compute_units, ws_ptr[0] ? ws_ptr : NULL, ws_used);
    /* the second lane is the slot's, so only a call holding the slot's workspace takes it */
    const kt_lanes *lanes = ws_ptr[0] ? &rt->slots[slot].lanes : NULL;
    char why[384];
    if ((rc = kt_op_enqueue(rt->gpu, op, L, nl, fns.fn, bound_args, stream, lanes, why, sizeof why)) != KT_OK)
        return ktrt_fail(err, errlen, rc, "%s: %s: %s", copy.problem_key, copy.kernel, why);
    return KT_OK;
}

int ktrt_run(ktrt *rt, const char *op, const char *dtype, const void *args, size_t args_size, void *stream,
             ktrt_choice *choice, char *err, size_t errlen)
{
    if (!rt) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_run: NULL handle");
    kt_problem p;
    int rc = read_call("ktrt_run", op, dtype, args, args_size, &p, err, errlen);
    if (rc) return rc;
    return run_problem(rt, &p, args, stream, choice, err, errlen);
}

int ktrt_gemm(ktrt *rt, const char *dtype, int m, int n, int k,
              const void *a, int lda, const void *w, int ldw, void *c, int ldc,
              void *stream, ktrt_choice *choice, char *err, size_t errlen)
{
    if (!rt) return ktrt_fail(err, errlen, KT_EINVAL, "ktrt_gemm: NULL handle");
    kt_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = a, args.w = w, args.c = c;
    args.m = m, args.n = n, args.k = k;
    args.lda = lda, args.ldw = ldw, args.ldc = ldc;
    kt_problem p;
    int rc = read_call("ktrt_gemm", "gemm", dtype, &args, sizeof args, &p, err, errlen);
    if (rc) return rc;
    return run_problem(rt, &p, &args, stream, choice, err, errlen);
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
    rt->nops = kt_op_count();
    rt->ws_bytes = calloc((size_t)rt->nops * KT_OP_MAX_WORKSPACES, sizeof *rt->ws_bytes);
    if (!rt->ws_bytes) return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: out of memory");
    for (int i = 0; i < rt->nops; i++)
        for (int w = 0; w < kt_op_at(i)->nworkspaces; w++) {
            long long need = ktrt_catalog_workspace(&rt->cat, rt->dev.target, rt->dev.compute_units, kt_op_at(i), w);
            /* opts.workspace_bytes: the floor of every op's first buffer (the GEMM's split-K partials,
             * gdn_prefill's intermediates: what calls nobody tuned may need) */
            if (w == 0 && (long long)o->workspace_bytes > need) need = (long long)o->workspace_bytes;
            rt->ws_bytes[i * KT_OP_MAX_WORKSPACES + w] = need;
            if (need > 0) rt->any_ws = 1;
        }
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
    for (int s = 0; s < rt->nslots; s++) {
        rt->slots[s].buf = calloc((size_t)rt->nops * KT_OP_MAX_WORKSPACES, sizeof *rt->slots[s].buf);
        if (!rt->slots[s].buf) return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: out of memory");
        /* without its second lane a slot runs plans in list order: slower, never wrong */
        if (rt->any_ws && kt_lanes_open(rt->gpu, &rt->slots[s].lanes, why, sizeof why) && rt->log.level >= 1)
            fprintf(stderr, "ktrt: slot %d of %d has no second stream (%s): its plans run on one stream\n", s + 1,
                    rt->nslots, why);
        for (int i = 0; i < rt->nops * KT_OP_MAX_WORKSPACES; i++) {
            long long bytes = rt->ws_bytes[i];
            if (bytes <= 0) continue;
            const kt_op *op = kt_op_at(i / KT_OP_MAX_WORKSPACES);
            const char *what = op->workspace_names[i % KT_OP_MAX_WORKSPACES];
            if (ktb_alloc(rt->gpu, (size_t)bytes, &rt->slots[s].buf[i], why, sizeof why))
                return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: %s %s workspace, slot %d of %d (%lld bytes): %s",
                                 op->name, what, s + 1, rt->nslots, bytes, why);
            /* counters at a workspace's end start at zero; launches leave them zero */
            if (ktb_memset8(rt->gpu, rt->slots[s].buf[i], 0, (size_t)bytes, why, sizeof why))
                return ktrt_fail(err, errlen, KT_EDEVICE, "ktrt_open: clearing %s %s workspace slot %d: %s", op->name,
                                 what, s + 1, why);
        }
    }
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
    rt->log.level = ktrt_log_level(kt_env_get("KT_LOG"));
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
    for (int i = 0; rt->slots && i < rt->nslots; i++) {
        for (int w = 0; rt->slots[i].buf && w < rt->nops * KT_OP_MAX_WORKSPACES; w++)
            if (rt->slots[i].buf[w]) ktb_free(rt->gpu, rt->slots[i].buf[w], ignored, sizeof ignored);
        free(rt->slots[i].buf);
        kt_lanes_close(rt->gpu, &rt->slots[i].lanes);
    }
    free(rt->slots);
    free(rt->cache);
    free(rt->ws_bytes);
    ktrt_log_free(&rt->log);
    ktb_close(rt->gpu);
    ktrt_catalog_free(&rt->cat);
    pthread_mutex_destroy(&rt->lock);
    free(rt);
}
