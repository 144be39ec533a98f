/* test_op.c: the op layer's shared values (runtime/op.c, op_table.c) and the GEMM descriptor
 * (op_gemm.c): keys round-trip and keep the text libktrt and every earlier database use, a bad
 * key names the word at fault, params JSON parses as the recipes write it, the ops list matches
 * exactly, and the GEMM descriptor's geometry and workspace are gemm_geometry.h's. */
#include <math.h>
#include <stdlib.h>
#include "kt_test.h"
#include "op.h"
#include "op_gemm.h"
#include "ktrt.h"
#include "target.h"

static kt_problem gemm(const char *dtype, int n, int k, int m)
{
    kt_problem p = {&kt_op_gemm, kt_op_dtype_index(&kt_op_gemm, dtype), {0}};
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
        int b = kt_op_bucketed_dim(op), nb = 0;
        for (int d = 0; d < op->ndims; d++) nb += op->dims[d].bucketed;
        KT_CHECK(nb <= 1);
        for (int e = 1; b >= 0 && e < op->nedges; e++) KT_CHECK(op->edges[e] > op->edges[e - 1]);
    }
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
    for (int e = 0; e < kt_op_gemm.nedges; e++) {
        kt_problem a = gemm("fp16", 4096, 14336, kt_op_gemm.edges[e]), b;
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
    kt_op_gemm.bind(&a, &v, &p, ws, wsb);
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
    for (int e = 0; e < kt_op_gemm.nedges; e++) {
        kt_problem p = gemm("bf16", 4096, 4096, kt_op_gemm.edges[e]);
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

int main(void)
{
    test_gemm_law();
    test_table();
    test_keys();
    test_params();
    test_gemm_descriptor();
    KT_TEST_END();
}
