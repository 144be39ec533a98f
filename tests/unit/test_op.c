/* test_op.c: the op layer's shared values (runtime/op.c, op_table.c) and the GEMM descriptor
 * (op_gemm.c): keys round-trip and keep the text libktrt and every earlier database use, a bad
 * key names the word at fault, params JSON parses as the recipes write it, the ops list matches
 * exactly, and the GEMM descriptor's geometry and workspace are gemm_geometry.h's. A toy op of
 * this file has two bucketed dimensions and one that may be 0: its keys, parse errors, buckets,
 * the sweep's cartesian product of edges under limits, and the selection chain over it. A kernel
 * row's occupancy (blocks per compute unit) is checked per vendor. */
#include <math.h>
#include <stdlib.h>
#include "kt_test.h"
#include "op.h"
#include "op_gemm.h"
#include "op_rmsnorm.h"
#include "ktrt.h"
#include "ktrt_select.h"
#include "target.h"

static kt_problem gemm(const char *dtype, int n, int k, int m)
{
    kt_problem p = {.op = &kt_op_gemm, .dtype = kt_op_dtype_index(&kt_op_gemm, dtype)};
    p.dim[KT_GEMM_D_N] = n;
    p.dim[KT_GEMM_D_K] = k;
    p.dim[KT_GEMM_D_M] = m;
    return p;
}

static void test_table(void)
{
    KT_CHECK(kt_op_count() >= 1);
    KT_CHECK(kt_op_find("gemm") == &kt_op_gemm);
    KT_CHECK(kt_op_find("reference:gemm") == NULL);
    KT_CHECK(kt_op_find(NULL) == NULL);
    for (int i = 0; i < kt_op_count(); i++) {
        const kt_op *op = kt_op_at(i);
        KT_CHECK(op && op->name && op->launches && op->law_pick && op->buffers && op->rel_error);
        KT_CHECK(kt_op_find(op->name) == op);
        KT_CHECK(op->nparams <= KT_OP_MAX_PARAMS && op->ndims <= KT_OP_MAX_DIMS);
        KT_CHECK(op->nworkspaces <= KT_OP_MAX_WORKSPACES);
        /* a bucketed dimension has ascending edges >= 1, a static one none; only a static one may be 0 */
        for (int d = 0; d < op->ndims; d++) {
            const kt_op_dim *dd = &op->dims[d];
            KT_CHECK(dd->bucketed ? dd->nedges >= 1 && dd->edges && dd->edges[0] >= 1 && !dd->zero_ok
                                  : dd->nedges == 0 && !dd->edges);
            for (int e = 1; dd->bucketed && e < dd->nedges; e++) KT_CHECK(dd->edges[e] > dd->edges[e - 1]);
            /* only a bucketed dimension can be one a tuned bucket must share with the query */
            if (!dd->bucketed) KT_CHECK(!(op->bucket_same_dims >> d & 1u));
        }
        KT_CHECK(op->bucket_same_dims >> op->ndims == 0);
    }
    /* GEMM and rmsnorm_add: one bucketed dimension each, the last, 14 edges: 14 problems a shape */
    KT_CHECK_INT(kt_op_bucketed_dim(&kt_op_gemm), KT_GEMM_D_M);
    KT_CHECK_INT(kt_op_edge_combos(&kt_op_gemm, NULL), 14);
    KT_CHECK_INT(kt_op_bucketed_dim(&kt_op_rmsnorm_add), KT_RMS_D_ROWS);
    KT_CHECK_INT(kt_op_edge_combos(&kt_op_rmsnorm_add, NULL), 14);
    KT_CHECK(kt_op_at(-1) == NULL && kt_op_at(kt_op_count()) == NULL);
    /* the ops column is comma-joined: membership, never a prefix or a substring */
    KT_CHECK(kt_ops_has("gemm", "gemm"));
    KT_CHECK(kt_ops_has("gemm,other", "gemm"));
    KT_CHECK(kt_ops_has("other,gemm", "gemm"));
    KT_CHECK(!kt_ops_has("reference:gemm", "gemm"));
    KT_CHECK(!kt_ops_has("gemmx", "gemm"));
    KT_CHECK(!kt_ops_has("", "gemm"));
}

static void test_keys(void)
{
    char key[128], err[256];
    kt_problem p = gemm("bf16", 5120, 8704, 16);
    KT_CHECK_INT(kt_problem_key(&p, key, sizeof key), (long long)strlen("gemm bf16 n=5120 k=8704 m<=16"));
    KT_CHECK(strcmp(key, "gemm bf16 n=5120 k=8704 m<=16") == 0);
    p.dim[KT_GEMM_D_M] = 7;                      /* a query snaps to its edge */
    kt_problem_key(&p, key, sizeof key);
    KT_CHECK(strcmp(key, "gemm bf16 n=5120 k=8704 m<=8") == 0);
    p.dim[KT_GEMM_D_M] = 100000;                 /* past the last edge: the last */
    kt_problem_key(&p, key, sizeof key);
    KT_CHECK(strcmp(key, "gemm bf16 n=5120 k=8704 m<=8192") == 0);
    KT_CHECK_INT(kt_problem_key(&p, key, 10), -1);
    KT_CHECK_INT(strlen(key) < 10, 1);
    p.dim[KT_GEMM_D_N] = 0;
    KT_CHECK_INT(kt_problem_key(&p, key, sizeof key), -1);
    KT_CHECK(kt_problem_check(&p, err, sizeof err) < 0);
    KT_CHECK_CONTAINS(err, "n=0");

    kt_problem q;
    KT_CHECK_INT(kt_problem_parse("gemm fp16 n=1536 k=4096 m<=64", &q, err, sizeof err), 0);
    KT_CHECK(q.op == &kt_op_gemm && q.dtype == 1 && q.dim[KT_GEMM_D_N] == 1536 && q.dim[KT_GEMM_D_K] == 4096 &&
             q.dim[KT_GEMM_D_M] == 64);
    KT_CHECK(strcmp(kt_problem_phase(&q), "decode") == 0);
    q.dim[KT_GEMM_D_M] = 128;
    KT_CHECK(strcmp(kt_problem_phase(&q), "prefill") == 0);
    struct { const char *key, *word; } bad[] = {
        {"conv bf16 n=1 k=1 m<=1", "unknown op 'conv'"}, {"gemm int8 n=1 k=1 m<=1", "no dtype 'int8'"},
        {"gemm bf16 k=1 n=1 m<=1", "expected 'n='"}, {"gemm bf16 n=1 k=1 m<=3", "m<=3 is not a bucket edge"},
        {"gemm bf16 n=1 k=x m<=1", "k: not a positive integer"}, {"gemm bf16 n=1 k=1 m<=1 z=2", "unexpected 'z=2'"},
        {"gemm bf16 n=0 k=1 m<=1", "n: not a positive integer"}, {"", "empty"}, {"gemm", "no dtype"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        KT_CHECK_INT(kt_problem_parse(bad[i].key, &q, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, bad[i].word);
    }
    /* every edge's key parses back to the same problem */
    const kt_op_dim *m = &kt_op_gemm.dims[KT_GEMM_D_M];
    for (int e = 0; e < m->nedges; e++) {
        kt_problem a = gemm("fp16", 4096, 14336, m->edges[e]), b;
        kt_problem_key(&a, key, sizeof key);
        KT_CHECK_INT(kt_problem_parse(key, &b, err, sizeof err), 0);
        KT_CHECK(kt_problem_same_shape(&a, &b) && b.dim[KT_GEMM_D_M] == a.dim[KT_GEMM_D_M]);
    }
    kt_problem a = gemm("bf16", 1, 2, 3), b = gemm("bf16", 1, 2, 300), c = gemm("fp16", 1, 2, 3);
    KT_CHECK(kt_problem_same_shape(&a, &b) && !kt_problem_same_shape(&a, &c));
}

static void test_params(void)
{
    kt_variant v;
    char dt[16], err[256];
    KT_CHECK_INT(kt_variant_parse(&kt_op_gemm, "{\"dtype\":\"bf16\",\"BM\":64,\"BN\":128,\"BK\":32,\"WM\":2,\"WN\":2,"
                                               "\"SK\":4,\"law\":\"dense\"}", &v, dt, sizeof dt, err, sizeof err), 0);
    KT_CHECK(strcmp(dt, "bf16") == 0);
    kt_gemm_variant g = kt_gemm_variant_of(&v);
    KT_CHECK(g.bm == 64 && g.bn == 128 && g.bk == 32 && g.wm == 2 && g.wn == 2 && g.splitk == 4 && g.stages == 0);
    KT_CHECK_INT(kt_variant_get(&kt_op_gemm, &v, "BN"), 128);
    /* the law class: the recipe's law, else the template's stem */
    char cls[32];
    kt_law_class("{\"BM\":1,\"law\":\"swapab\"}", "gemm/dense.hip", cls, sizeof cls);
    KT_CHECK(strcmp(cls, "swapab") == 0);
    kt_law_class("{\"BM\":1}", "gemm/wgmma_ws.hip", cls, sizeof cls);
    KT_CHECK(strcmp(cls, "wgmma_ws") == 0);
    kt_law_class(NULL, NULL, cls, sizeof cls);
    KT_CHECK(cls[0] == 0);
    /* no SK axis: one segment; SK 0 is stream-K and stays 0 */
    KT_CHECK_INT(kt_variant_parse(&kt_op_gemm, "{ \"BM\" : 16, \"BN\":16,\"BK\":64,\"WM\":1,\"WN\":1 }", &v, NULL, 0,
                                  err, sizeof err), 0);
    KT_CHECK_INT(v.p[KT_GEMM_P_SK], 1);
    KT_CHECK_INT(kt_variant_parse(&kt_op_gemm, "{\"BM\":16,\"BN\":16,\"BK\":64,\"WM\":1,\"WN\":1,\"SK\":0,\"ST\":4}", &v,
                                  NULL, 0, err, sizeof err), 0);
    KT_CHECK(v.p[KT_GEMM_P_SK] == 0 && v.p[KT_GEMM_P_ST] == 4);
    struct { const char *json, *word; } bad[] = {
        {"{\"BM\":16,\"BN\":16,\"BK\":64,\"WM\":1}", "needs \"WN\""},
        {"{\"BM\":0,\"BN\":16,\"BK\":64,\"WM\":1,\"WN\":1}", "BM=0 below its minimum 1"},
        {"{\"BM\":1.5,\"BN\":16,\"BK\":64,\"WM\":1,\"WN\":1}", "\"BM\" is not an integer"},
        {"{\"BM\":\"x\",\"BN\":16,\"BK\":64,\"WM\":1,\"WN\":1}", "must be an integer"},
        {"[1]", "not a JSON object"}, {"{\"BM\":16", "expected ',' or '}'"}, {"{\"BM\" 16}", "expected ':'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        KT_CHECK_INT(kt_variant_parse(&kt_op_gemm, bad[i].json, &v, NULL, 0, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, bad[i].word);
    }
}

static void test_gemm_descriptor(void)
{
    char err[256], buf[160];
    kt_variant v;
    kt_variant_parse(&kt_op_gemm, "{\"BM\":32,\"BN\":64,\"BK\":32,\"WM\":2,\"WN\":2,\"SK\":4}", &v, NULL, 0, err, sizeof err);
    kt_problem p = gemm("bf16", 1000, 4096, 7);
    kt_op_launch L[KT_OP_MAX_LAUNCHES];
    KT_CHECK_INT(kt_op_gemm.launches(&v, &p, 32, 64, L), 2);
    KT_CHECK(L[0].dims.grid[0] == 16 && L[0].dims.grid[1] == 1 && L[0].dims.grid[2] == 4 && L[0].dims.block[0] == 128);
    KT_CHECK(strcmp(L[1].suffix, "_reduce") == 0 && L[1].optional);
    kt_gemm_variant g = kt_gemm_variant_of(&v);
    KT_CHECK_INT(kt_op_gemm.workspace_bytes(&v, &p, 64, 0), kt_gemm_partials_needed(&g, 7, 1000, 64) * 4);
    KT_CHECK(kt_op_gemm.needs_workspace(&v));
    KT_CHECK(kt_op_gemm.misfit(&v, &p, 64, buf, sizeof buf) == NULL);
    p.dim[KT_GEMM_D_M] = 65535LL * 32 + 1;
    KT_CHECK(kt_op_gemm.misfit(&v, &p, 64, buf, sizeof buf) != NULL);
    KT_CHECK_CONTAINS(buf, "over the grid limit");

    /* the caller's struct names the field at fault */
    kt_gemm_args a;
    memset(&a, 0, sizeof a);
    int x;
    a.a = a.w = a.c = &x;
    a.m = 4, a.n = 8, a.k = 16, a.lda = 16, a.ldw = 16, a.ldc = 4;
    KT_CHECK_INT(kt_op_gemm.problem_of_args(&a, &p, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, "ldc >= n=8");
    a.ldc = 8;
    a.w = NULL;
    KT_CHECK_INT(kt_op_gemm.problem_of_args(&a, &p, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, "NULL w");
    a.w = &x;
    KT_CHECK_INT(kt_op_gemm.problem_of_args(&a, &p, err, sizeof err), KT_OK);
    KT_CHECK(p.dim[KT_GEMM_D_M] == 4 && p.dim[KT_GEMM_D_N] == 8 && p.dim[KT_GEMM_D_K] == 16);
    void *ws[1] = {&x};
    long long wsb[1] = {4096 * 4 + 400};
    kt_op_gemm.bind(&a, &v, &p, 132, ws, wsb);
    KT_CHECK(a.partials == (float *)&x && a.partials_elems == 4096 + 100 && a.k_per_split == kt_gemm_k_per_split(16, 4, 32));

    /* the CPU reference and the error: exact output 0 error, a wrong one far over the bound */
    kt_problem s = gemm("bf16", 5, 7, 3);
    kt_op_buffer b[KT_OP_MAX_BUFFERS];
    int nb = kt_op_gemm.buffers(&s, b);
    KT_CHECK_INT(nb, 3);
    void *host[3];
    uint64_t rng = 42;
    for (int i = 0; i < nb; i++) {
        host[i] = calloc(1, b[i].bytes);
        if (b[i].role & KT_BUF_IN) kt_op_gemm.fill(&s, i, host[i], b[i].bytes, &rng);
    }
    for (size_t i = 0; i < b[0].bytes / 2; i++) KT_CHECK(((uint16_t *)host[0])[i] & 0x7fff);   /* never zero */
    double *ref = calloc(kt_op_gemm.ref_count(&s), sizeof *ref);
    kt_op_gemm.ref_cpu(&s, host, ref);
    uint16_t *c = host[2];
    for (size_t i = 0; i < kt_op_gemm.ref_count(&s); i++) c[i] = 0x7fc0;   /* NaN: unwritten */
    KT_CHECK(isnan(kt_op_gemm.rel_error(&s, host, ref)));
    for (size_t i = 0; i < kt_op_gemm.ref_count(&s); i++) c[i] = 0;
    KT_CHECK(kt_op_gemm.rel_error(&s, host, ref) > 0.5);
    KT_CHECK(kt_op_gemm.error_bound(0) == 0x1p-8 && kt_op_gemm.error_bound(1) == 0x1p-9);
    for (int i = 0; i < nb; i++) free(host[i]);
    free(ref);
}

static kt_candidate gcand(const char *name, int bm, int bn, int bk, int wm, int wn, int sk)
{
    kt_candidate c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.law_class = "dense";
    int p[KT_GEMM_NPARAMS] = {bm, bn, bk, wm, wn, sk, 0};
    memcpy(c.v.p, p, sizeof p);
    c.waves_per_simd = 8;
    return c;
}

/* The GEMM's law and pruning are law_gemm.c's (tests/unit/test_law_gemm.c holds their rules): through
 * the descriptor, the pick is one of the candidates, the pruning keeps it and keeps something at
 * every edge, and a candidate of no known law class is never picked. */
static void test_gemm_law(void)
{
    law_device d = law_device_from_target(kt_target_find("sm_90a"), 132);
    kt_candidate c[] = {
        gcand("bm16_sk1", 16, 64, 64, 1, 2, 1), gcand("bm16_sk4", 16, 64, 64, 1, 2, 4),
        gcand("bm128_sk1", 128, 128, 64, 2, 4, 1), gcand("bm64_sk1", 64, 128, 64, 1, 4, 1),
        gcand("skinny_bm1", 1, 4, 256, 8, 1, 1), gcand("skinny_bm16", 16, 4, 256, 8, 1, 1),
    };
    c[4].law_class = c[5].law_class = "skinny";
    int n = (int)(sizeof c / sizeof c[0]), keep[6];
    for (int e = 0; e < kt_op_gemm.dims[KT_GEMM_D_M].nedges; e++) {
        kt_problem p = gemm("bf16", 4096, 4096, kt_op_gemm.dims[KT_GEMM_D_M].edges[e]);
        int pick = kt_op_gemm.law_pick(&d, c, n, &p);
        KT_CHECK(pick >= 0 && pick < n);
        int kept = kt_op_gemm.prune(&d, c, n, &p, pick, keep);
        KT_CHECK(kept >= 1 && kept <= n && keep[pick]);
    }
    kt_problem p = gemm("bf16", 4096, 4096, 4096);
    int fat = kt_op_gemm.law_pick(&d, c, n, &p);
    KT_CHECK(fat == 2 || fat == 3);                             /* a 64- or 128-row tile at M = 4096 */
    for (int i = 0; i < n; i++) c[i].law_class = "conv";   /* a template the law does not know */
    KT_CHECK(kt_op_gemm.law_pick(&d, c, 4, &p) >= 0);        /* falls back to law.c's tile rule */
}


/* ---- a toy op: d static, win static and may be 0, q and ctx bucketed ---- */

enum { TOY_D, TOY_WIN, TOY_Q, TOY_CTX, TOY_NDIMS };
static const int toy_q_edges[] = {1, 2, 4};
static const int toy_ctx_edges[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
static const char *const toy_dtypes[] = {"bf16"};
static const kt_op_dim toy_dims[TOY_NDIMS] = {
    {"d", 0, NULL, 0, 0}, {"win", 0, NULL, 0, 1}, {"q", 1, toy_q_edges, 3, 0}, {"ctx", 1, toy_ctx_edges, 8, 0},
};
static int toy_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p) { return n > 0 ? 0 : -1; }
static const kt_op toy = {
    .name = "toy", .summary = "a test op", .dtypes = toy_dtypes, .ndtypes = 1, .dims = toy_dims, .ndims = TOY_NDIMS,
    .decode_edge = 2, .law_pick = toy_pick,
};

/* the same op whose tuned buckets serve only their own q edge (kt_op.bucket_same_dims) */
static const kt_op toy_rows = {
    .name = "toy", .summary = "a test op", .dtypes = toy_dtypes, .ndtypes = 1, .dims = toy_dims, .ndims = TOY_NDIMS,
    .decode_edge = 2, .law_pick = toy_pick, .bucket_same_dims = 1u << TOY_Q,
};

static kt_problem toyp(long long d, long long win, long long q, long long ctx)
{
    kt_problem p = {.op = &toy};
    p.dim[TOY_D] = d, p.dim[TOY_WIN] = win, p.dim[TOY_Q] = q, p.dim[TOY_CTX] = ctx;
    return p;
}

static void test_toy_keys(void)
{
    char key[160], err[256];
    kt_problem p = toyp(128, 0, 3, 900), q;
    KT_CHECK_INT(kt_problem_key(&p, key, sizeof key), (long long)strlen("toy bf16 d=128 win=0 q<=4 ctx<=1024"));
    KT_CHECK(strcmp(key, "toy bf16 d=128 win=0 q<=4 ctx<=1024") == 0);   /* every bucketed dim snapped */
    KT_CHECK_INT(kt_problem_bucket_text(&p, key, sizeof key), 14);
    KT_CHECK(strcmp(key, "q<=4 ctx<=1024") == 0);
    p.dim[TOY_CTX] = 1000000;                                            /* past the last edge: the last */
    kt_problem_key(&p, key, sizeof key);
    KT_CHECK(strcmp(key, "toy bf16 d=128 win=0 q<=4 ctx<=131072") == 0);
    /* round trip through the op's own parser (the toy is not in the table) */
    KT_CHECK_INT(kt_op_parse_key(&toy, key, &q, err, sizeof err), 0);
    KT_CHECK(q.op == &toy && q.dim[TOY_D] == 128 && q.dim[TOY_WIN] == 0 && q.dim[TOY_Q] == 4 && q.dim[TOY_CTX] == 131072);
    kt_problem s = kt_problem_snapped(&p);
    KT_CHECK(kt_problem_equal(&s, &q) && !kt_problem_equal(&p, &q) && kt_problem_same_shape(&p, &q));
    KT_CHECK_INT(kt_problem_parse(key, &q, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "unknown op 'toy'");
    /* every combination of edges round-trips */
    for (long long i = 0; i < kt_op_edge_combos(&toy, NULL); i++) {
        kt_problem a, b;
        KT_CHECK_INT(kt_problem_edge_combo(&p, NULL, i, &a), 0);
        KT_CHECK(kt_problem_key(&a, key, sizeof key) > 0);
        KT_CHECK_INT(kt_op_parse_key(&toy, key, &b, err, sizeof err), 0);
        KT_CHECK(kt_problem_equal(&a, &b));
    }
    /* 0 only where zero_ok: in keys, parses and checks */
    struct { const char *key, *word; } bad[] = {
        {"toy bf16 d=0 win=0 q<=1 ctx<=1024", "d: not a positive integer"},
        {"toy bf16 d=1 win=-1 q<=1 ctx<=1024", "win: not an integer >= 0"},
        {"toy bf16 d=1 win=0 q<=3 ctx<=1024", "q<=3 is not a bucket edge of toy"},
        {"toy bf16 d=1 win=0 q<=1 ctx<=1000", "ctx<=1000 is not a bucket edge of toy"},
        {"toy bf16 d=1 win=0 q<=0 ctx<=1024", "q: not a positive integer"},
        {"toy bf16 d=1 win=0 ctx<=1024 q<=1", "expected 'q<='"},
        {"toy bf16 d=1 q<=1 ctx<=1024", "expected 'win='"},
        {"toy bf16 d=1 win=0 q<=1 ctx<=1024 x=1", "unexpected 'x=1'"},
        {"gemm bf16 n=1 k=1 m<=1", "not a key of toy"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        KT_CHECK_INT(kt_op_parse_key(&toy, bad[i].key, &q, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, bad[i].word);
    }
    p = toyp(128, 0, 1, 1);
    KT_CHECK_INT(kt_problem_check(&p, err, sizeof err), 0);
    KT_CHECK_INT(kt_op_dim_min(&toy, TOY_WIN), 0);
    KT_CHECK_INT(kt_op_dim_min(&toy, TOY_D), 1);
    KT_CHECK_INT(kt_op_dim_min(&toy, TOY_Q), 1);
    long long *at[] = {&p.dim[TOY_D], &p.dim[TOY_Q], &p.dim[TOY_CTX]};
    const char *named[] = {"d=0", "q=0", "ctx=0"};
    for (int i = 0; i < 3; i++) {
        long long keep = *at[i];
        *at[i] = 0;
        KT_CHECK_INT(kt_problem_check(&p, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, named[i]);
        KT_CHECK_INT(kt_problem_key(&p, key, sizeof key), -1);
        *at[i] = keep;
    }
    p.dim[TOY_WIN] = -1;
    KT_CHECK_INT(kt_problem_check(&p, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "win=-1: must be >= 0");
}

static void test_toy_buckets(void)
{
    /* each bucketed dimension by its own edges; a static one has none */
    KT_CHECK_INT(kt_op_bucket(&toy, TOY_Q, 3), 4);
    KT_CHECK_INT(kt_op_bucket(&toy, TOY_Q, 9), 4);
    KT_CHECK_INT(kt_op_bucket(&toy, TOY_CTX, 3), 1024);
    KT_CHECK_INT(kt_op_bucket(&toy, TOY_CTX, 3000), 4096);
    KT_CHECK_INT(kt_op_bucket(&toy, TOY_CTX, 0), -1);
    KT_CHECK_INT(kt_op_bucket(&toy, TOY_D, 5), -1);
    KT_CHECK_INT(kt_op_bucket(&toy, 9, 5), -1);
    KT_CHECK(kt_op_is_edge(&toy, TOY_Q, 4) && !kt_op_is_edge(&toy, TOY_CTX, 4) && !kt_op_is_edge(&toy, TOY_D, 128));
    KT_CHECK(kt_op_is_edge(&toy, TOY_CTX, 65536) && !kt_op_is_edge(&toy, TOY_Q, 1024));
    KT_CHECK_INT(kt_op_bucketed_dim(&toy), TOY_Q);
    /* the first bucketed dimension is the size and decides the phase */
    kt_problem p = toyp(128, 0, 2, 100000);
    KT_CHECK_INT(kt_problem_bucketed(&p), 2);
    KT_CHECK(strcmp(kt_problem_phase(&p), "decode") == 0);
    p.dim[TOY_Q] = 3;
    KT_CHECK(strcmp(kt_problem_phase(&p), "prefill") == 0);
    /* the gemm's M keeps its edges through the dimension */
    KT_CHECK_INT(kt_op_bucket(&kt_op_gemm, KT_GEMM_D_M, 7), 8);
    KT_CHECK_INT(kt_op_bucket(&kt_op_gemm, KT_GEMM_D_N, 7), -1);
}

/* The sweep's problems of one shape: every combination of edges, the last bucketed dimension
 * fastest; a limit keeps the edges up to the one serving it (ctx 40960: 1024 .. 32768 and 65536). */
static void test_toy_combos(void)
{
    kt_problem shape = toyp(128, 0, 1, 1), c;
    KT_CHECK_INT(kt_op_edge_combos(&toy, NULL), 3 * 8);
    long long none[KT_OP_MAX_DIMS] = {0};
    KT_CHECK_INT(kt_op_edge_combos(&toy, none), 3 * 8);
    long long lim[KT_OP_MAX_DIMS] = {0};
    lim[TOY_CTX] = 40960;
    KT_CHECK_INT(kt_op_edges_kept(&toy, TOY_CTX, 40960), 7);
    KT_CHECK_INT(kt_op_edges_kept(&toy, TOY_CTX, 65536), 7);
    KT_CHECK_INT(kt_op_edges_kept(&toy, TOY_CTX, 65537), 8);
    KT_CHECK_INT(kt_op_edges_kept(&toy, TOY_CTX, 1), 1);
    KT_CHECK_INT(kt_op_edges_kept(&toy, TOY_CTX, 1 << 30), 8);
    KT_CHECK_INT(kt_op_edges_kept(&toy, TOY_D, 5), 0);
    long long n = kt_op_edge_combos(&toy, lim);
    KT_CHECK_INT(n, 3 * 7);
    int seen_ctx[8] = {0};
    for (long long i = 0; i < n; i++) {
        KT_CHECK_INT(kt_problem_edge_combo(&shape, lim, i, &c), 0);
        KT_CHECK(kt_problem_same_shape(&c, &shape));
        KT_CHECK(c.dim[TOY_Q] == toy_q_edges[i / 7] && c.dim[TOY_CTX] == toy_ctx_edges[i % 7]);
        for (int e = 0; e < 8; e++) seen_ctx[e] += c.dim[TOY_CTX] == toy_ctx_edges[e];
    }
    KT_CHECK(seen_ctx[0] == 3 && seen_ctx[5] == 3 && seen_ctx[6] == 3 && seen_ctx[7] == 0);   /* 32768, 65536; not 131072 */
    KT_CHECK_INT(kt_problem_edge_combo(&shape, lim, n, &c), -1);
    KT_CHECK_INT(kt_problem_edge_combo(&shape, lim, -1, &c), -1);
    /* limits on both dimensions */
    lim[TOY_Q] = 2;
    KT_CHECK_INT(kt_op_edge_combos(&toy, lim), 2 * 7);
    kt_problem_edge_combo(&shape, lim, 13, &c);
    KT_CHECK(c.dim[TOY_Q] == 2 && c.dim[TOY_CTX] == 65536);
    /* GEMM: no limit, its M edges in order, as tune listed them before */
    kt_problem g = gemm("bf16", 4096, 4096, 1);
    for (int i = 0; i < 14; i++) {
        KT_CHECK_INT(kt_problem_edge_combo(&g, NULL, i, &c), 0);
        KT_CHECK_INT(c.dim[KT_GEMM_D_M], kt_op_gemm.dims[KT_GEMM_D_M].edges[i]);
        KT_CHECK(c.dim[KT_GEMM_D_N] == 4096 && c.dim[KT_GEMM_D_K] == 4096);
    }
}

/* The chain over a catalog held in memory: exact on every snapped edge, else the nearest tuned
 * buckets summed over both dimensions (ties to the larger), else the law. */
static void test_toy_chain(void)
{
    ktrt_kernel k[2];
    memset(k, 0, sizeof k);
    for (int i = 0; i < 2; i++) {
        snprintf(k[i].name, sizeof k[i].name, "kt_toy_%d", i);
        snprintf(k[i].target, sizeof k[i].target, "sm_90a");
        snprintf(k[i].code_hash, sizeof k[i].code_hash, "hash%d", i);
        k[i].op = &toy;
        snprintf(k[i].law_class, sizeof k[i].law_class, "toy");
    }
    struct { int d, q, ctx, kernel; double us; } sel[] = {
        {128, 1, 1024, 0, 5}, {128, 4, 8192, 1, 9}, {128, 1, 4096, 1, 7}, {64, 2, 4096, 0, 3},
    };
    ktrt_selection s[4];
    memset(s, 0, sizeof s);
    for (int i = 0; i < 4; i++) {
        snprintf(s[i].device_key, sizeof s[i].device_key, "sm_90/132/0x2335");
        snprintf(s[i].target, sizeof s[i].target, "sm_90a");
        s[i].p = toyp(sel[i].d, 0, sel[i].q, sel[i].ctx);
        s[i].measured = 1;
        snprintf(s[i].kernel, sizeof s[i].kernel, "%s", k[sel[i].kernel].name);
        snprintf(s[i].code_hash, sizeof s[i].code_hash, "%s", k[sel[i].kernel].code_hash);
        s[i].time_us = sel[i].us;
    }
    ktrt_layer layer;
    memset(&layer, 0, sizeof layer);
    snprintf(layer.path, sizeof layer.path, "(memory)");
    layer.role = "caller";
    layer.selections = s, layer.nselections = 4, layer.kernels = k, layer.nkernels = 2;
    ktrt_catalog cat = {&layer, 1};
    ktrt_device dev = {"sm_90/132/0x2335", kt_target_find("sm_90a"), 132};
    ktrt_op_query q;
    memset(&q, 0, sizeof q);
    q.device = &dev;
    ktrt_pick pk;

    q.p = toyp(128, 0, 1, 900);                  /* both dimensions snap onto a tuned key */
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK(strcmp(pk.choice.path, "exact") == 0 && strcmp(pk.choice.kernel, "kt_toy_0") == 0);
    KT_CHECK(strcmp(pk.choice.problem_key, "toy bf16 d=128 win=0 q<=1 ctx<=1024") == 0);
    KT_CHECK(pk.bucket == 1 && pk.served_bucket == 1);

    q.p = toyp(128, 0, 2, 3000);                 /* q<=2 ctx<=4096: (1,4096) is 1 octave off, the rest more */
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK(strcmp(pk.choice.path, "bucket") == 0 && pk.choice.tuned_us == 7);
    KT_CHECK_CONTAINS(pk.choice.reason, "q<=2 ctx<=4096 not tuned on this device; nearest tuned bucket q<=1 ctx<=4096");

    q.p = toyp(128, 0, 2, 2048);                 /* (1,1024) and (1,4096) both 2 octaves off: the larger ctx */
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK_CONTAINS(pk.choice.reason, "nearest tuned bucket q<=1 ctx<=4096");

    q.p = toyp(128, 0, 4, 16384);                /* (4,8192): 1 octave; the d=64 selection is another shape */
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK(strcmp(pk.choice.kernel, "kt_toy_1") == 0 && pk.served_bucket == 4);
    KT_CHECK_CONTAINS(pk.choice.reason, "q<=4 ctx<=16384 not tuned on this device; nearest tuned bucket q<=4 ctx<=8192");

    q.p = toyp(128, 4096, 1, 1024);              /* win=4096 is another static shape: the law */
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK(strcmp(pk.choice.path, "law") == 0);
    KT_CHECK_CONTAINS(pk.choice.reason, "no tuned selection serves d=128 win=4096 q<=1 ctx<=1024 on sm_90a");

    q.p = toyp(128, 0, 0, 1024);                 /* a bucketed value of 0 is refused, naming it */
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_EINVAL);
    KT_CHECK_CONTAINS(pk.choice.reason, "q=0");

    /* an op whose buckets serve only their own q edge: q<=2 has none tuned, so the law, not
     * (q<=1, ctx<=4096) as above; q<=4 still takes its nearest q<=4 bucket */
    for (int i = 0; i < 2; i++) k[i].op = &toy_rows;
    for (int i = 0; i < 4; i++) s[i].p.op = &toy_rows;
    q.p = toyp(128, 0, 2, 3000);
    q.p.op = &toy_rows;
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK(strcmp(pk.choice.path, "law") == 0);
    q.p = toyp(128, 0, 4, 16384);
    q.p.op = &toy_rows;
    KT_CHECK_INT(ktrt_select(&cat, &q, &pk), KT_OK);
    KT_CHECK(strcmp(pk.choice.path, "bucket") == 0 && pk.served_bucket == 4);
    KT_CHECK_CONTAINS(pk.choice.reason, "nearest tuned bucket q<=4 ctx<=8192");
}

/* Blocks per compute unit from a kernel row: NVIDIA's warps per SM are exact; AMD's waves per
 * SIMD (the busiest) bound it, and the pool's LDS tightens it; an RDNA WGP is two CUs. */
static void test_occupancy(void)
{
    const kt_target *nv = kt_target_find("sm_90a"), *cdna = kt_target_find("gfx942"), *rdna = kt_target_find("gfx1201");
    KT_CHECK_INT(kt_row_occupancy(nv, &(kt_row_resources){128, 16, 64, 0}), 4);
    KT_CHECK_INT(kt_row_occupancy(nv, &(kt_row_resources){256, 64, 32, 1024}), 8);
    KT_CHECK_INT(kt_row_occupancy(nv, &(kt_row_resources){128, 0, 64, 0}), 0);      /* occupancy unknown */
    KT_CHECK_INT(kt_row_occupancy(NULL, &(kt_row_resources){128, 16, 64, 0}), 0);
    KT_CHECK_INT(kt_row_occupancy(nv, NULL), 0);
    KT_CHECK_INT(kt_row_occupancy(cdna, &(kt_row_resources){256, 8, 64, 0}), 8);
    KT_CHECK_INT(kt_row_occupancy(cdna, &(kt_row_resources){256, 8, 64, 32768}), 2);
    KT_CHECK_INT(kt_row_occupancy(rdna, &(kt_row_resources){256, 16, 64, 0}), 4);
    KT_CHECK_INT(kt_row_occupancy(rdna, &(kt_row_resources){1024, 8, 64, 0}), 1);  /* one block a WGP */
    /* the one place a row becomes a variant: the parameters as kt_variant_parse reads them, and the occupancy */
    kt_variant v, w;
    char err[256], dt[16];
    const char *json = "{\"dtype\":\"bf16\",\"BM\":64,\"BN\":128,\"BK\":32,\"WM\":2,\"WN\":2}";
    KT_CHECK_INT(kt_variant_from_row(&kt_op_gemm, nv, json, &(kt_row_resources){128, 16, 64, 0}, &v, dt, sizeof dt,
                                     err, sizeof err), 0);
    KT_CHECK_INT(kt_variant_parse(&kt_op_gemm, json, &w, NULL, 0, err, sizeof err), 0);
    KT_CHECK(memcmp(v.p, w.p, sizeof v.p) == 0 && v.occupancy == 4 && w.occupancy == 0 && strcmp(dt, "bf16") == 0);
    KT_CHECK_INT(kt_variant_from_row(&kt_op_gemm, nv, "{\"BM\":0}", &(kt_row_resources){128, 16, 64, 0}, &v, NULL, 0,
                                     err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "BM=0 below its minimum 1");
}

int main(void)
{
    test_gemm_law();
    test_table();
    test_keys();
    test_params();
    test_gemm_descriptor();
    test_toy_keys();
    test_toy_buckets();
    test_toy_combos();
    test_toy_chain();
    test_occupancy();
    KT_TEST_END();
}
