/* test_law_gemm.c: the cross-template GEMM law (runtime/law_gemm.c) picks the template a shape
 * wants on sm_90a (vector skinny at M = 1, swap-AB on the matrix units at small M, the swapped
 * warp-specialized ring at M = 64, the warp-specialized prefill tile at large M: what the H200
 * sweep measured), sensible picks on the AMD targets where only dense, skinny and swapab exist,
 * keeps its pick when pruning, and refuses degenerate input. */
#include <string.h>
#include "kt_test.h"
#include "law.h"
#include "law_gemm.h"
#include "op_gemm.h"
#include "target.h"

static kt_candidate cand(const char *name, const char *cls, int bm, int bn, int bk, int wm, int wn, int sk,
                         int st, int threads, int regs, int lds, int wps)
{
    kt_candidate c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.law_class = cls;
    c.v.p[KT_GEMM_P_BM] = bm;
    c.v.p[KT_GEMM_P_BN] = bn;
    c.v.p[KT_GEMM_P_BK] = bk;
    c.v.p[KT_GEMM_P_WM] = wm;
    c.v.p[KT_GEMM_P_WN] = wn;
    c.v.p[KT_GEMM_P_SK] = sk;
    c.v.p[KT_GEMM_P_ST] = st;
    c.threads = threads;
    c.regs = regs;
    c.lds_bytes = lds;
    c.waves_per_simd = wps;
    return c;
}

static kt_problem problem(long long n, long long k, long long m)
{
    kt_problem p;
    memset(&p, 0, sizeof p);
    p.dim[KT_GEMM_D_N] = n;
    p.dim[KT_GEMM_D_K] = k;
    p.dim[KT_GEMM_D_M] = m;
    return p;
}

static law_device device(const char *name, int cus)
{
    return law_device_from_target(kt_target_find(name), cus);
}

/* sm_90a: one variant of each template as the DB reads them (resources from the H200 prebuild). */
static kt_candidate sm90[8];
static int nsm90;

static void sm90_list(void)
{
    nsm90 = 0;
    sm90[nsm90++] = cand("skinny", "skinny", 1, 4, 256, 4, 1, 1, 0, 128, 40, 64, 48);
    sm90[nsm90++] = cand("swapab", "swapab", 16, 32, 64, 8, 1, 1, 0, 256, 120, 16384, 16);
    sm90[nsm90++] = cand("dense", "dense", 64, 128, 64, 2, 4, 1, 0, 256, 128, 27648, 16);
    sm90[nsm90++] = cand("wgmma", "wgmma", 128, 128, 64, 8, 1, 1, 4, 256, 106, 132096, 8);
    sm90[nsm90++] = cand("wgswap", "wgmma_swapab", 16, 64, 64, 1, 4, 1, 6, 128, 53, 62464, 12);
    sm90[nsm90++] = cand("wgws", "wgmma_ws", 128, 256, 64, 12, 1, 1, 4, 384, 168, 197632, 12);
    sm90[nsm90++] = cand("wgwsswap", "wgmma_ws_swapab", 64, 64, 64, 1, 8, 1, 8, 256, 90, 132096, 8);
}

static const char *pick_name(const law_device *d, const kt_candidate *c, int n, long long nn, long long k,
                             long long m)
{
    kt_problem p = problem(nn, k, m);
    int i = law_gemm_pick(d, c, n, &p);
    return i >= 0 ? c[i].name : "(none)";
}

static void test_sm90_picks(void)
{
    law_device d = device("sm_90a", 132);
    sm90_list();
    /* llama-3.1-8b down at tp 4 (n 4096, k 3584) and qkv at tp 1 (n 6144, k 4096): the sweep's
     * templates at M = 1, 16, 64, 4096 */
    KT_CHECK(strcmp(pick_name(&d, sm90, nsm90, 4096, 3584, 1), "skinny") == 0);
    /* M = 16: a swapped kernel on the matrix units (the sweep: swapab 14 of 19 shapes, the swapped
     * wgmma forms the rest); the law's fitted swapab share makes it lean to the wgmma forms here */
    const char *m16 = pick_name(&d, sm90, nsm90, 6144, 4096, 16);
    KT_CHECK(strcmp(m16, "swapab") == 0 || strcmp(m16, "wgswap") == 0 || strcmp(m16, "wgwsswap") == 0);
    KT_CHECK(strcmp(pick_name(&d, sm90, nsm90, 6144, 4096, 64), "wgwsswap") == 0);
    KT_CHECK(strcmp(pick_name(&d, sm90, nsm90, 6144, 4096, 4096), "wgws") == 0);
    KT_CHECK(strcmp(pick_name(&d, sm90, nsm90, 28672, 4096, 8192), "wgws") == 0);

    /* without the warp-specialized kernels, prefill goes to wgmma, not to mma.sync */
    KT_CHECK(strcmp(pick_name(&d, sm90, 5, 6144, 4096, 4096), "wgmma") == 0);
    /* only dense: it is what there is */
    KT_CHECK(strcmp(pick_name(&d, &sm90[2], 1, 6144, 4096, 1), "dense") == 0);

    /* the estimate falls as the problem shrinks, and grows with K */
    law_gemm_card card = law_gemm_card_for(&d);
    kt_problem a = problem(4096, 4096, 4096), b = problem(4096, 4096, 8192), c = problem(4096, 8192, 4096);
    long long ta = law_gemm_estimate_ps(&d, &card, &sm90[5], &a);
    KT_CHECK(ta > 0);
    KT_CHECK(law_gemm_estimate_ps(&d, &card, &sm90[5], &b) > ta);
    KT_CHECK(law_gemm_estimate_ps(&d, &card, &sm90[5], &c) > ta);
    /* a split that leaves the grid as wide costs its slabs */
    kt_candidate s1 = sm90[1], s4 = sm90[1];
    s4.v.p[KT_GEMM_P_SK] = 4;
    kt_problem big = problem(28672, 4096, 16);
    KT_CHECK(law_gemm_estimate_ps(&d, &card, &s4, &big) > law_gemm_estimate_ps(&d, &card, &s1, &big));
}

/* The H200 sweep of 2026-12-01 (every pruned candidate timed) where the law of 2026-11-30 picked
 * the warp-specialized prefill tile with split K or the swapped wgmma with sk8 (regret 62-86%):
 * the winners, resources from the H200 DB. */
static void test_sm90_fixed(void)
{
    law_device d = device("sm_90a", 132);
    kt_candidate c[4];
    c[0] = cand("wgwsswap_64x128", "wgmma_ws_swapab", 64, 128, 64, 1, 12, 1, 8, 384, 80, 197760, 12);
    c[1] = cand("wgws_128x192_sk4", "wgmma_ws", 128, 192, 64, 12, 1, 4, 4, 384, 122, 164944, 12);
    c[2] = cand("swapab_16x32", "swapab", 16, 32, 64, 16, 1, 1, 0, 512, 120, 32768, 16);
    c[3] = cand("wgswap_32x64_sk8", "wgmma_swapab", 32, 64, 64, 1, 4, 8, 6, 128, 48, 74768, 12);
    /* M = 128..512 on small N: the swapped warp-specialized tile, one wave of sk1 blocks
     * (measured 24.6 us against 45.5 us at n=1536 k=4096 m=512) */
    KT_CHECK(strcmp(pick_name(&d, c, 2, 1536, 4096, 512), "wgwsswap_64x128") == 0);
    KT_CHECK(strcmp(pick_name(&d, c, 2, 6144, 4096, 128), "wgwsswap_64x128") == 0);
    KT_CHECK(strcmp(pick_name(&d, c, 2, 1152, 3584, 512), "wgwsswap_64x128") == 0);
    /* M = 32: swapab's 16 warps on direct fragments (7.4 us) over the swapped wgmma with sk8
     * (12.8 us) at n=1152 k=3584 */
    KT_CHECK(strcmp(pick_name(&d, c + 2, 2, 1152, 3584, 32), "swapab_16x32") == 0);
    /* at prefill sizes the prefill tile wins (the sweep: wgws at every M >= 1024 of n = 28672) */
    kt_candidate pf[2] = {c[0], c[1]};
    pf[1].v.p[KT_GEMM_P_SK] = 1;
    pf[1].name = "wgws_128x192";
    KT_CHECK(strcmp(pick_name(&d, pf, 2, 28672, 4096, 8192), "wgws_128x192") == 0);
    KT_CHECK(strcmp(pick_name(&d, pf, 2, 4096, 4096, 4096), "wgws_128x192") == 0);
}

/* Qwen3-Next at tp 4 (the H100 sweep, db/results/h100/): its tiny-N projections. in_proj_ba (n =
 * 16) at M = 512: the swapped warp-specialized bn 128 form took 17.7 us (its copies fill the
 * weights' whole 128-row tile, 112 rows of zeros), swapab bm8 bn16 wm16 5.9 us; at M = 1 the skinny
 * bm 16 form ran its 16 rows on zeros (4.8 us) where bm 1 bk 512 took 1.8 us (the model's margin
 * there is thin, 5.28 against 5.10 us: math is its overlapped term). Resources from the sm_90a DB. */
static void test_sm90_tiny_n(void)
{
    law_device d = device("sm_90a", 132);
    kt_candidate c[2];
    c[0] = cand("wgwsswap_8x128", "wgmma_ws_swapab", 8, 128, 64, 1, 12, 1, 8, 384, 32, 140416, 12);
    c[1] = cand("swapab_8x16", "swapab", 8, 16, 128, 16, 1, 1, 0, 512, 98, 8192, 16);
    KT_CHECK(strcmp(pick_name(&d, c, 2, 16, 2048, 512), "swapab_8x16") == 0);
    kt_candidate s[2];
    s[0] = cand("skinny_16x2", "skinny", 16, 2, 512, 8, 1, 1, 0, 256, 252, 1024, 8);
    s[1] = cand("skinny_1x2", "skinny", 1, 2, 512, 8, 1, 1, 0, 256, 53, 64, 32);
    KT_CHECK(strcmp(pick_name(&d, s, 2, 16, 2048, 1), "skinny_1x2") == 0);
}

/* AMD: dense, skinny and swapab only, resources unknown (waves_per_simd 0: the law's fallback). */
static void test_amd_picks(void)
{
    const char *targets[] = {"gfx1201", "gfx942"};
    const int cus[] = {64, 304};
    for (int t = 0; t < 2; t++) {
        law_device d = device(targets[t], cus[t]);
        int w = d.wave_size;
        kt_candidate c[6];
        int n = 0;
        c[n++] = cand("skinny", "skinny", 1, 4, 8 * w, 4, 1, 1, 0, 4 * w, 0, 0, 0);
        c[n++] = cand("swapab", "swapab", 16, 32, 128, 8, 1, 1, 0, 8 * w, 0, 0, 0);
        c[n++] = cand("dense_small", "dense", 16, 32, 32, 1, 1, 8, 0, w, 0, 0, 0);
        c[n++] = cand("dense_big", "dense", 128, 128, 64, 2, 2, 1, 0, 4 * w, 0, 0, 0);
        c[n++] = cand("dense_mid", "dense", 64, 64, 64, 2, 2, 1, 0, 4 * w, 0, 0, 0);
        c[n++] = cand("wgws", "wgmma_ws", 128, 256, 64, 12, 1, 1, 4, 0, 0, 0, 0);   /* not built here */
        n--;   /* the AMD DB has no wgmma rows */
        /* M = 1: a weight stream; skinny (one launch), swapab or the split dense tile (on gfx1201
         * all three within 20% of the 52 us weight stream), never a fat tile */
        const char *m1 = pick_name(&d, c, n, 4096, 4096, 1);
        KT_CHECK(strcmp(m1, "skinny") == 0 || strcmp(m1, "dense_small") == 0 || strcmp(m1, "swapab") == 0);
        if (t == 1) KT_CHECK(strcmp(m1, "skinny") == 0);   /* gfx942: by a factor of 3 */
        const char *m16 = pick_name(&d, c, n, 4096, 4096, 16);
        KT_CHECK(strcmp(m16, "dense_big") != 0 && strcmp(m16, "dense_mid") != 0);
        KT_CHECK(strcmp(pick_name(&d, c, n, 4096, 4096, 4096), "dense_big") == 0);
        /* prune keeps the pick, and keeps something of every template */
        kt_problem p = problem(4096, 4096, 64);
        int pick = law_gemm_pick(&d, c, n, &p), keep[6];
        KT_CHECK(pick >= 0);
        int kept = law_gemm_prune(&d, c, n, &p, pick, keep);
        KT_CHECK(kept >= 1 && kept <= n);
        KT_CHECK(pick >= 0 && keep[pick]);
    }
}

static void test_prune(void)
{
    law_device d = device("sm_90a", 132);
    sm90_list();
    const long long ms[] = {1, 4, 16, 64, 256, 1024, 8192};
    for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
        kt_problem p = problem(4096, 4096, ms[i]);
        int pick = law_gemm_pick(&d, sm90, nsm90, &p), keep[8];
        int kept = law_gemm_prune(&d, sm90, nsm90, &p, pick, keep);
        KT_CHECK(pick >= 0 && keep[pick]);
        int count = 0;
        for (int j = 0; j < nsm90; j++) count += keep[j];
        KT_CHECK_INT(kept, count);
        /* a forced law_idx other than the pick is kept too */
        int other = (pick + 1) % nsm90;
        law_gemm_prune(&d, sm90, nsm90, &p, other, keep);
        KT_CHECK(keep[other]);
    }
}

static void test_degenerate(void)
{
    law_device d = device("sm_90a", 132);
    sm90_list();
    kt_problem p = problem(4096, 4096, 16);
    int keep[8];
    KT_CHECK_INT(law_gemm_pick(&d, sm90, 0, &p), -1);
    KT_CHECK_INT(law_gemm_pick(&d, NULL, 3, &p), -1);
    KT_CHECK_INT(law_gemm_pick(NULL, sm90, nsm90, &p), -1);
    KT_CHECK_INT(law_gemm_pick(&d, sm90, nsm90, NULL), -1);
    kt_problem zero = problem(4096, 4096, 0);
    KT_CHECK_INT(law_gemm_pick(&d, sm90, nsm90, &zero), -1);
    kt_problem negk = problem(4096, -1, 16);
    KT_CHECK_INT(law_gemm_pick(&d, sm90, nsm90, &negk), -1);
    KT_CHECK_INT(law_gemm_prune(&d, sm90, 0, &p, 0, keep), 0);
    KT_CHECK_INT(law_gemm_prune(&d, sm90, nsm90, &p, 0, NULL), 0);

    /* unknown classes and broken parameters are never picked, but prune keeps them (unjudged) */
    kt_candidate c[3];
    c[0] = cand("mystery", "winograd", 64, 64, 64, 2, 2, 1, 0, 128, 0, 0, 0);
    c[1] = cand("nullclass", NULL, 64, 64, 64, 2, 2, 1, 0, 128, 0, 0, 0);
    c[2] = cand("zero_bm", "dense", 0, 64, 64, 2, 2, 1, 0, 128, 0, 0, 0);
    KT_CHECK_INT(law_gemm_pick(&d, c, 3, &p), -1);
    KT_CHECK_INT(law_gemm_prune(&d, c, 3, &p, -1, keep), 3);
    c[2].v.p[KT_GEMM_P_BM] = 64;
    KT_CHECK_INT(law_gemm_pick(&d, c, 3, &p), 2);

    /* a device with no units still answers (as one unit) */
    law_device none = law_device_from_target(NULL, 0);
    KT_CHECK(law_gemm_pick(&none, sm90, nsm90, &p) >= 0);

    KT_CHECK_INT(law_gemm_class_of("wgmma_ws_swapab"), LAW_GEMM_WGMMA_WS_SWAPAB);
    KT_CHECK_INT(law_gemm_class_of("dense"), LAW_GEMM_DENSE);
    KT_CHECK_INT(law_gemm_class_of("wgmma_ws_swap"), LAW_GEMM_UNKNOWN);
}

int main(void)
{
    test_sm90_picks();
    test_sm90_fixed();
    test_sm90_tiny_n();
    test_amd_picks();
    test_prune();
    test_degenerate();
    KT_TEST_END();
}
