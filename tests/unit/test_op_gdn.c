/* test_op_gdn.c: the gdn_decode descriptor (runtime/op_gdn.c) on the CPU; the kernel itself runs
 * against the reference in test_gdn_emu.cpp (host emulation) and on the device (tests/device).
 *  - key text round trip, and the model's problem (tune --modelpath) as a key;
 *  - problem_of_args refuses bad structs naming the field;
 *  - misfit: layout, head sizes, tokens a step; a head split over blocks serves the gated norm;
 *  - every variant the recipe admits on gfx1201, gfx942 and sm_90a parses and launches the
 *    recipe's block over dv/BV x hv x batch; the counters workspace is batch x (hk + hv) words;
 *  - the law picks a variant that serves every problem of a grid, a narrower BV where the batch
 *    leaves compute units idle (under the gated norm too), the widest where it does not; replayed
 *    over the H100's sweeps (tests/data/gdn_decode_sweeps.tsv), its regret stays within bounds.
 * Run from the repository root (the recipe is read from templates/gdn/decode.lua). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kt_test.h"
#include "op_gdn.h"
#include "ktrt.h"
#include "law.h"
#include "gen/recipe.h"
#include "law_replay.h"

static const kt_op *op = &kt_op_gdn_decode;

static kt_problem prob(int hk, int hv, int norm, int vk, int q, int batch)
{
    kt_problem p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.dim[KT_GDN_D_DK] = 128;
    p.dim[KT_GDN_D_DV] = 128;
    p.dim[KT_GDN_D_HK] = hk;
    p.dim[KT_GDN_D_HV] = hv;
    p.dim[KT_GDN_D_KW] = 4;
    p.dim[KT_GDN_D_NORM] = norm;
    p.dim[KT_GDN_D_VK] = vk;
    p.dim[KT_GDN_D_Q] = q;
    p.dim[KT_GDN_D_BATCH] = batch;
    return p;
}

static void test_keys(void)
{
    const char *key = "gdn_decode bf16 dk=128 dv=128 hk=4 hv=8 kw=4 norm=1 vk=0 q<=4 batch<=32";
    kt_problem p;
    char err[256], buf[256];
    KT_CHECK(kt_problem_parse(key, &p, err, sizeof err) == 0);
    KT_CHECK(kt_problem_key(&p, buf, sizeof buf) > 0);
    KT_CHECK(strcmp(buf, key) == 0);
    KT_CHECK(p.op == op);
    /* a query of 3 tokens and 20 sequences is keyed by its buckets */
    kt_problem q = prob(4, 8, 1, 0, 3, 20);
    KT_CHECK(kt_problem_key(&q, buf, sizeof buf) > 0);
    KT_CHECK(strcmp(buf, key) == 0);

    kt_model_shape m;
    memset(&m, 0, sizeof m);
    m.dtype = "bf16";
    m.gdn = (kt_model_gdn){36, 4, 8, 128, 128, 4};
    kt_op_model_problem mp[2];
    KT_CHECK(op->from_model(&m, mp, 2, err, sizeof err) == 1);
    KT_CHECK(kt_problem_key(&mp[0].p, buf, sizeof buf) > 0);
    /* the serving vLLM's state layout: K-last by default (KT_GDN_STATE), [.., K, V] asked for */
    KT_CHECK(strcmp(buf, "gdn_decode bf16 dk=128 dv=128 hk=4 hv=8 kw=4 norm=1 vk=1 q<=1 batch<=1") == 0);
    setenv("KT_GDN_STATE", "kv", 1);
    KT_CHECK(op->from_model(&m, mp, 2, err, sizeof err) == 1);
    KT_CHECK_INT((int)mp[0].p.dim[KT_GDN_D_VK], 0);
    setenv("KT_GDN_STATE", "v-k", 1);
    KT_CHECK(op->from_model(&m, mp, 2, err, sizeof err) < 0);
    KT_CHECK(strstr(err, "KT_GDN_STATE = 'v-k'") != NULL);
    unsetenv("KT_GDN_STATE");
    KT_CHECK(op->from_model(&m, mp, 2, err, sizeof err) == 1);
    KT_CHECK_INT(mp[0].calls, 36);
    m.gdn.layers = 0;
    KT_CHECK(op->from_model(&m, mp, 2, err, sizeof err) == 0);
}

static float f32_pool[64] __attribute__((aligned(16)));
static int ints[8];
static unsigned short h16[8];

static kt_gdn_decode_args good_args(void)
{
    kt_gdn_decode_args a;
    memset(&a, 0, sizeof a);
    a.qkv = h16; a.z = h16; a.a = h16; a.b = h16; a.A_log = f32_pool; a.dt_bias = f32_pool;
    a.conv_weight = h16; a.norm_weight = h16; a.conv_state = h16; a.ssm_state = f32_pool; a.spec_log = f32_pool;
    a.query_start_loc = ints; a.state_indices = ints; a.num_accepted = ints; a.out = h16;
    a.batch = 3; a.num_k_heads = 2; a.num_v_heads = 4; a.dk = 128; a.dv = 128; a.conv_kw = 4;
    a.conv_len = 3 + 4; a.max_tokens = 4;
    a.qkv_stride = 2 * 2 * 128 + 4 * 128; a.z_stride = 512; a.ab_stride = 4; a.out_stride = 512;
    a.conv_chan_stride = 7; a.conv_col_stride = 1; a.conv_slot_stride = 7 * 1024;
    a.ssm_slot_stride = 4 * 128 * 128; a.log_slot_stride = 4 * 8 * 128 * 2;
    a.scale = 0.088f; a.norm_eps = 1e-6f;
    return a;
}

static void refuses(kt_gdn_decode_args a, const char *field)
{
    kt_problem p;
    char err[256] = "";
    memset(&p, 0, sizeof p);
    KT_CHECK_INT(op->problem_of_args(&a, &p, err, sizeof err), KT_EINVAL);
    KT_CHECK_CONTAINS(err, field);
}

static void test_args(void)
{
    kt_gdn_decode_args a = good_args();
    kt_problem p;
    char err[256];
    memset(&p, 0, sizeof p);
    KT_CHECK_INT(op->problem_of_args(&a, &p, err, sizeof err), KT_OK);
    char buf[256];
    KT_CHECK(kt_problem_key(&p, buf, sizeof buf) > 0);
    KT_CHECK(strcmp(buf, "gdn_decode bf16 dk=128 dv=128 hk=2 hv=4 kw=4 norm=1 vk=0 q<=4 batch<=4") == 0);

    a = good_args(); a.qkv = NULL; refuses(a, "qkv is NULL");
    a = good_args(); a.z = NULL; refuses(a, "z is NULL");
    a = good_args(); a.spec_log = NULL; refuses(a, "spec_log is NULL");
    a = good_args(); a.num_v_heads = 5; refuses(a, "num_v_heads = 5");
    a = good_args(); a.conv_kw = 5; refuses(a, "conv_kw = 5");
    a = good_args(); a.conv_len = 6; refuses(a, "conv_len = 6");
    a = good_args(); a.num_accepted = NULL; a.conv_len = 3; KT_CHECK_INT(op->problem_of_args(&a, &p, err, sizeof err), KT_OK);
    a = good_args(); a.max_tokens = 9; refuses(a, "max_tokens = 9");
    a = good_args(); a.qkv_stride = 100; refuses(a, "qkv_stride = 100");
    a = good_args(); a.ssm_slot_stride = 4 * 128 * 128 + 2; refuses(a, "16-byte aligned");
    a = good_args(); a.ssm_slot_stride = 100; refuses(a, "ssm_slot_stride = 100");
    a = good_args(); a.state_vk = 2; refuses(a, "state_vk = 2");
    a = good_args(); a.scale = 0.0f; refuses(a, "scale = 0");
    a = good_args(); a.batch = 0; refuses(a, "batch = 0");
}

static kt_variant var(int vk, int bv, int nw, int kpt)
{
    kt_variant v;
    memset(&v, 0, sizeof v);
    v.p[KT_GDN_P_VK] = vk;
    v.p[KT_GDN_P_DK] = 128;
    v.p[KT_GDN_P_DV] = 128;
    v.p[KT_GDN_P_BV] = bv;
    v.p[KT_GDN_P_NW] = nw;
    v.p[KT_GDN_P_KPT] = kpt;
    v.p[KT_GDN_P_MT] = 8;
    return v;
}

static void test_misfit(void)
{
    char buf[200];
    kt_problem p = prob(2, 4, 1, 0, 1, 8);
    KT_CHECK(op->misfit(&(kt_variant){0}, &p, 132, buf, sizeof buf) != NULL);
    kt_variant v = var(0, 128, 8, 8);
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL);
    v = var(0, 64, 4, 16);   /* the head over two blocks: the last normalizes its rows */
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL);
    p.dim[KT_GDN_D_NORM] = 0;
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL);
    v = var(1, 64, 4, 16);
    KT_CHECK_CONTAINS(op->misfit(&v, &p, 132, buf, sizeof buf), "layout");
    p.dim[KT_GDN_D_DK] = 64;
    v = var(0, 64, 4, 16);
    KT_CHECK_CONTAINS(op->misfit(&v, &p, 132, buf, sizeof buf), "dk=64");
    /* a variant built for one token a step serves q 1 only */
    p = prob(2, 4, 1, 0, 4, 8);
    v = var(0, 128, 8, 8);
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL);
    v.p[KT_GDN_P_MT] = 1;
    KT_CHECK_CONTAINS(op->misfit(&v, &p, 132, buf, sizeof buf), "MT=1");
    p = prob(2, 4, 1, 0, 1, 8);
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL);
}

typedef struct { kt_variant v; int threads; char name[KT_KERNEL_NAME_MAX]; } recipe_variant;

static int load_recipe(const char *target, recipe_variant **out)
{
    gen_space s;
    char err[512];
    if (gen_enumerate("templates/gdn/decode.lua", kt_target_find(target), &s, err, sizeof err) != 0) {
        fprintf(stderr, "recipe: %s\n", err);
        return 0;
    }
    recipe_variant *rv = calloc((size_t)s.nvariants, sizeof *rv);
    int n = 0;
    for (int i = 0; i < s.nvariants; i++) {
        if (strstr(s.variants[i].params_json, "\"fp16\"")) continue;
        KT_CHECK(kt_variant_parse(op, s.variants[i].params_json, &rv[n].v, NULL, 0, err, sizeof err) == 0);
        rv[n].threads = s.variants[i].threads;
        snprintf(rv[n].name, sizeof rv[n].name, "%s", s.variants[i].name);
        n++;
    }
    KT_CHECK(strcmp(s.ops, "gdn_decode") == 0);
    gen_space_free(&s);
    *out = rv;
    return n;
}

static void test_launches(void)
{
    const char *targets[] = {"gfx1201", "gfx942", "sm_90a"};
    for (int ti = 0; ti < 3; ti++) {
        recipe_variant *rv;
        const int n = load_recipe(targets[ti], &rv), wave = kt_target_find(targets[ti])->wave_size;
        KT_CHECK(n >= 10);
        for (int i = 0; i < n; i++) {
            kt_problem p = prob(2, 6, i % 2, rv[i].v.p[KT_GDN_P_VK],
                                rv[i].v.p[KT_GDN_P_MT] < 4 ? rv[i].v.p[KT_GDN_P_MT] : 4, 37);
            kt_op_launch l[KT_OP_MAX_LAUNCHES];
            KT_CHECK_INT(op->launches(&rv[i].v, &p, wave, 64, l), 1);
            KT_CHECK_INT(l[0].dims.block[0], rv[i].threads);
            if (rv[i].v.p[KT_GDN_P_PS] > 0) {   /* persistent: min(items, 64 units x PS) blocks, the state buffer */
                const int items = 128 / rv[i].v.p[KT_GDN_P_BV] * 6 * 37, cap = 64 * rv[i].v.p[KT_GDN_P_PS];
                KT_CHECK_INT(l[0].dims.grid[0], items < cap ? items : cap);
                KT_CHECK_INT(l[0].dims.grid[1] * l[0].dims.grid[2], 1);
                KT_CHECK_INT(l[0].dims.shared, 4 * 128 * rv[i].v.p[KT_GDN_P_BV]);
            } else {
                KT_CHECK_INT(l[0].dims.grid[0] * rv[i].v.p[KT_GDN_P_BV], 128);
                KT_CHECK_INT(l[0].dims.grid[1], 6);
                KT_CHECK_INT(l[0].dims.grid[2], 37);
                KT_CHECK_INT(l[0].dims.shared, 0);
            }
            KT_CHECK_INT(op->workspace_bytes(&rv[i].v, &p, 64, 0), 4 * 37 * (2 + 6));
        }
        free(rv);
    }
    kt_gdn_decode_args a = good_args();
    unsigned words[8];
    void *ws[1] = {words};
    long long wsb[1] = {sizeof words};
    kt_variant v = var(0, 128, 8, 8);
    kt_problem p = prob(2, 4, 1, 0, 1, 1);
    op->bind(&a, &v, &p, 132, ws, wsb);
    KT_CHECK(a.counters == words);
    KT_CHECK_INT(a.ahead, 0);   /* OB 0: no stream of waves to prefetch along */
    /* OB 2 with PF: the state prefetch reaches the block the device starts next, units x OB on */
    v.p[KT_GDN_P_OB] = 2;
    op->bind(&a, &v, &p, 132, ws, wsb);
    KT_CHECK_INT(a.ahead, 0);   /* PF 0: none */
    v.p[KT_GDN_P_PF] = 1;
    op->bind(&a, &v, &p, 132, ws, wsb);
    KT_CHECK_INT(a.ahead, 264);
    v.p[KT_GDN_P_PS] = 2;   /* persistent: its own copy of the next item, no prefetch */
    op->bind(&a, &v, &p, 132, ws, wsb);
    KT_CHECK_INT(a.ahead, 0);
}

static void test_law(void)
{
    const struct { const char *target; int units; } devs[] = {{"sm_90a", 132}, {"gfx1201", 64}};
    const int hvs[] = {2, 8, 32}, batches[] = {1, 2, 8, 32, 128, 512}, qs[] = {1, 4, 8};
    for (int di = 0; di < 2; di++) {
        recipe_variant *rv;
        const int n = load_recipe(devs[di].target, &rv);
        kt_candidate *c = calloc((size_t)n, sizeof *c);
        for (int i = 0; i < n; i++) {
            c[i].name = rv[i].name;
            c[i].law_class = "decode";
            c[i].v = rv[i].v;
            c[i].v.occupancy = 2;
            c[i].threads = rv[i].threads;
        }
        law_device d = law_device_from_target(kt_target_find(devs[di].target), devs[di].units);
        for (int h = 0; h < 3; h++)
            for (int b = 0; b < 6; b++)
                for (int qi = 0; qi < 3; qi++)
                    for (int norm = 0; norm < 2; norm++)
                        for (int vk = 0; vk < 2; vk++) {
                            kt_problem p = prob(hvs[h] / 2, hvs[h], norm, vk, qs[qi], batches[b]);
                            const int k = op->law_pick(&d, c, n, &p);
                            char buf[200];
                            KT_CHECK(k >= 0);
                            if (k < 0) continue;
                            KT_CHECK(op->misfit(&c[k].v, &p, devs[di].units, buf, sizeof buf) == NULL);
                            const int bv = c[k].v.p[KT_GDN_P_BV];
                            /* the step's tokens size the conv's registers: the least MT that serves q */
                            KT_CHECK_INT(c[k].v.p[KT_GDN_P_MT], qs[qi] == 1 ? 1 : 8);
                            /* the 16-warp form holds a whole K-last head (the recipe offers no other) */
                            if (c[k].v.p[KT_GDN_P_NW] == 16) KT_CHECK(vk == 1 && c[k].v.p[KT_GDN_P_BV] == 128);
                            /* whole heads once they fill the device; split to the narrowest BV
                             * while they leave three quarters of it idle; between, split only
                             * without the gated norm (whose split pays a hand-off a step) */
                            const long long blocks128 = (long long)hvs[h] * batches[b];
                            if (blocks128 >= devs[di].units) KT_CHECK_INT(bv, 128);
                            else if (4 * blocks128 <= devs[di].units) KT_CHECK_INT(bv, 32);
                            else if (norm) KT_CHECK_INT(bv, 128);
                            else KT_CHECK(bv < 128);
                        }
        free(c);
        free(rv);
    }
}

/* OB 2 (ptxas held to two resident blocks) only pays when the grid needs the second block: one
 * wave's worth of blocks takes the allocator's own choice, whose registers keep more loads in
 * flight (the H100: 6.98 us at batch 1 x hv 8 against 9.70 with OB 2; 66.5% of the copy ceiling
 * at batch 128 x hv 32 against 58.6% without) */
static void test_law_ob(void)
{
    recipe_variant *rv;
    const int n = load_recipe("sm_90a", &rv), units = 132;
    kt_candidate *c = calloc((size_t)n, sizeof *c);
    int ob2 = 0;
    for (int i = 0; i < n; i++) {
        c[i].name = rv[i].name;
        c[i].law_class = "decode";
        c[i].v = rv[i].v;
        c[i].v.occupancy = rv[i].v.p[KT_GDN_P_OB] == 2 ? 2 : 1;
        c[i].regs = rv[i].v.p[KT_GDN_P_OB] == 2 ? 128 : 160;
        c[i].threads = rv[i].threads;
        ob2 += rv[i].v.p[KT_GDN_P_OB] == 2;
    }
    KT_CHECK(ob2 > 0);
    law_device d = law_device_from_target(kt_target_find("sm_90a"), units);
    /* and never PS (a persistent grid: 0.80x the one-item-a-block grid's speed where it ran, even
     * at 32 x 128 heads, four waves of two blocks a unit) */
    /* BV: the H100's tp 4 sweep (hv 8, gated norm) split heads up to 32 of them (batch 4) and kept
     * them whole from 64 (batch 8: bv128 9% ahead, batch 16: 12-29%) */
    /* never PF (the L2 prefetch, untimed: only a sweep's measurement selects it), even where the
     * grid runs more blocks a unit than OB holds (32 x 32 heads: four waves of two a unit) */
    const struct { int hv, batch, q, ob, ps, bv, pf; } rows[] = {
        {8, 1, 1, 0, 0, 32, 0}, {32, 1, 1, 0, 0, 32, 0}, {8, 8, 1, 0, 0, 128, 0}, {32, 4, 1, 0, 0, 128, 0},
        {8, 16, 1, 0, 0, 128, 0}, {8, 32, 1, 2, 0, 128, 0}, {32, 32, 1, 2, 0, 128, 0}, {32, 128, 1, 2, 0, 128, 0},
        {32, 128, 4, 2, 0, 128, 0}, {8, 1, 4, 0, 0, 32, 0}, {8, 4, 1, 0, 0, 32, 0}, {8, 8, 4, 0, 0, 128, 0}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        kt_problem p = prob(rows[r].hv / 2, rows[r].hv, 1, 0, rows[r].q, rows[r].batch);
        const int k = op->law_pick(&d, c, n, &p);
        KT_CHECK(k >= 0);
        if (k < 0) continue;
        KT_CHECK_INT(c[k].v.p[KT_GDN_P_OB], rows[r].ob);
        KT_CHECK_INT(c[k].v.p[KT_GDN_P_PS], rows[r].ps);
        KT_CHECK_INT(c[k].v.p[KT_GDN_P_BV], rows[r].bv);
        KT_CHECK_INT(c[k].v.p[KT_GDN_P_PF], rows[r].pf);
    }
    /* a form whose prefetch spilled has no PF twin: the law keeps its MT 1 pick without the
     * prefetch rather than an MT 8 form with it (PF ranks after MT) */
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!(c[i].v.p[KT_GDN_P_PF] && c[i].v.p[KT_GDN_P_MT] == 1)) c[m++] = c[i];
    for (int vk = 0; vk < 2; vk++) {
        kt_problem p = prob(16, 32, 1, vk, 1, 128);
        const int k = op->law_pick(&d, c, m, &p);
        KT_CHECK(k >= 0);
        if (k < 0) continue;
        KT_CHECK_INT(c[k].v.p[KT_GDN_P_MT], 1);
        KT_CHECK_INT(c[k].v.p[KT_GDN_P_PF], 0);
    }
    free(c);
    free(rv);
}

/* The law against the H100's measurements (tests/data/gdn_decode_sweeps.tsv: every form's coarse
 * timing on Qwen3-Next's problems, [.., K, V] at tp 4 / 2 / 1 and K-last at tp 4 and tp 1): each
 * problem's candidates are the timed forms the recipe still admits, with the registers and warps a
 * unit they were measured with; the law's pick is charged its coarse time against the fastest's.
 * Bounds: the refit's own regret (thirty-sixth session: [.., K, V] mean +0.3%, worst +4.2%; K-last
 * mean +2.8%, worst +22.8%, the old law's +35.6% / +118.4%) with a little room. */
static kt_problem decode_problem(const int d[5]) { return prob(d[0] / 2, d[0], d[1], d[2], d[3], d[4]); }
static int decode_layout(const int d[5]) { return d[2]; }

static void test_law_measured(void)
{
    recipe_variant *rv = NULL;
    const int n = load_recipe("sm_90a", &rv);
    kt_candidate *all = calloc((size_t)n, sizeof *all);
    for (int i = 0; all && i < n; i++)
        all[i] = (kt_candidate){.name = rv[i].name, .law_class = "decode", .v = rv[i].v, .threads = rv[i].threads};
    lr_result r = {0};
    KT_CHECK(all && lr_replay("tests/data/gdn_decode_sweeps.tsv", "kt_gdn_decode_bf16_", op, all, n, KT_GDN_P_NW,
                              decode_problem, decode_layout, &r) == 0);
    fprintf(stderr, "  law on the H100's sweeps: [.., K, V] %d problems mean %+.1f%% worst %+.1f%%; K-last %d mean "
            "%+.1f%% worst %+.1f%% (%d timings of forms no longer offered; worst against those too %+.1f%%)\n",
            r.count[0], r.count[0] ? 100 * r.sum[0] / r.count[0] : 0.0, 100 * r.worst[0], r.count[1],
            r.count[1] ? 100 * r.sum[1] / r.count[1] : 0.0, 100 * r.worst[1], r.unknown, 100 * r.worst_all);
    KT_CHECK(r.count[0] >= 80 && r.count[1] >= 55);
    KT_CHECK(r.count[0] > 0 && r.sum[0] / r.count[0] <= 0.01 && r.worst[0] <= 0.06);
    KT_CHECK(r.count[1] > 0 && r.sum[1] / r.count[1] <= 0.035 && r.worst[1] <= 0.25);
    free(all);
    free(rv);
}

int main(void)
{
    unsetenv("KT_GDN_STATE");   /* the model problems' default layout, whatever the shell exported */
    test_keys();
    test_args();
    test_misfit();
    test_launches();
    test_law();
    test_law_ob();
    test_law_measured();
    KT_TEST_END();
}
