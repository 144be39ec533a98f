/* test_law.c: the GEMM shape laws hold as laws (powers of two, monotone in M, retired by fill and by
 * traffic, bounded by K) and reproduce the seed's measured gfx1201 trough table. */
#include <math.h>
#include "kt_test.h"
#include "law.h"
#include "target.h"
#include "gemm_geometry.h"

static int is_pow2(int x) { return x >= 1 && (x & (x - 1)) == 0; }

static law_device device(const char *name, int cus)
{
    return law_device_from_target(kt_target_find(name), cus);
}

static void test_devices(void)
{
    law_device g = device("gfx1201", 64);        /* seed: 64 CUs x 2 SIMD32 x 16 slots */
    KT_CHECK_INT(g.simds_per_cu, 2);
    KT_CHECK_INT(g.wave_slots_per_cu, 32);
    KT_CHECK_INT(law_device_wave_slots(&g), 2048);
    KT_CHECK_INT(g.wave_size, 32);
    law_device h = device("sm_90a", 132);        /* H200: 132 SMs x 64 warps */
    KT_CHECK_INT(h.wave_slots_per_cu, 64);
    KT_CHECK_INT(law_device_wave_slots(&h), 8448);
    law_device c = device("gfx942", 304);        /* MI300X: 4 SIMDs x 8 waves a CU */
    KT_CHECK_INT(c.wave_slots_per_cu, 32);
    KT_CHECK_INT(c.wave_size, 64);
    law_device none = law_device_from_target(NULL, 64);
    KT_CHECK_INT(law_device_wave_slots(&none), 0);
    KT_CHECK_INT(law_device_wave_slots(NULL), 0);
    law_device zero = device("gfx1201", 0);
    KT_CHECK_INT(law_device_wave_slots(&zero), 0);
}

/* Tiles the recipe can compile: (bm, bn, bk, waves a workgroup). */
static const int tiles[][4] = {
    {16, 32, 32, 1}, {16, 64, 64, 1}, {16, 128, 32, 2}, {32, 64, 32, 2}, {32, 128, 64, 4},
    {64, 64, 64, 4}, {64, 128, 32, 4}, {128, 128, 64, 4}, {128, 32, 32, 4},
};
static const int ms[] = {1, 2, 3, 7, 8, 16, 31, 32, 64, 100, 128, 256, 512, 1024, 4096, 16384};
static const int nks[][2] = {{1, 1}, {4096, 4096}, {5120, 8704}, {8704, 5120}, {151936, 5120},
                             {1024, 128}, {128, 65536}, {3000, 1000}, {64, 320}};

static void test_splitk_laws(void)
{
    const char *targets[] = {"gfx1201", "sm_90a", "gfx942"};
    const int cus[] = {64, 132, 304};
    for (int ti = 0; ti < 3; ti++) {
        law_device d = device(targets[ti], cus[ti]);
        long long slots = law_device_wave_slots(&d);
        for (size_t s = 0; s < sizeof nks / sizeof nks[0]; s++) {
            int n = nks[s][0], k = nks[s][1];
            for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
                int bm = tiles[t][0], bn = tiles[t][1], bk = tiles[t][2], w = tiles[t][3];
                int prev = 1 << 30;
                for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
                    int m = ms[mi];
                    int seg = law_splitk_segments(&d, m, n, k, bm, bn, bk, w, 8);
                    KT_CHECK(is_pow2(seg));
                    KT_CHECK(seg <= 8);
                    KT_CHECK(seg <= prev);                         /* non-increasing in M */
                    prev = seg;
                    KT_CHECK(seg <= (k + bk - 1) / bk);            /* a K block a segment at least */
                    int kps = kt_gemm_k_per_split(k, seg, bk);     /* and no segment left empty */
                    KT_CHECK((long long)(seg - 1) * kps < k);
                    long long waves = (long long)((m + bm - 1) / bm) * ((n + bn - 1) / bn) * w;
                    if (waves >= slots) KT_CHECK_INT(seg, 1);      /* the tiles alone fill it */
                    if (seg > 1) {                                 /* partials stay a small share */
                        double partials = 8.0 * seg * (double)m * n;
                        double compulsory = 2.0 * ((double)n * k + (double)m * k + (double)m * n);
                        KT_CHECK(partials <= LAW_SPLITK_TRAFFIC_FRACTION * compulsory);
                        /* and the split does not overshoot the slots by a doubling */
                        KT_CHECK(waves * (seg / 2) < slots);
                    }
                    /* max_segments is a ceiling, itself rounded down to a power of two */
                    KT_CHECK(law_splitk_segments(&d, m, n, k, bm, bn, bk, w, 5) <= 4);
                    KT_CHECK_INT(law_splitk_segments(&d, m, n, k, bm, bn, bk, w, 1), 1);
                }
            }
        }
    }
}

static void test_splitk_boundaries(void)
{
    law_device d = device("gfx1201", 64);
    /* Degenerate input never splits. */
    KT_CHECK_INT(law_splitk_segments(&d, 1, 1, 1, 16, 32, 32, 1, 8), 1);
    KT_CHECK_INT(law_splitk_segments(&d, 0, 4096, 4096, 16, 32, 32, 1, 8), 1);
    KT_CHECK_INT(law_splitk_segments(&d, 1, 0, 4096, 16, 32, 32, 1, 8), 1);
    KT_CHECK_INT(law_splitk_segments(&d, 1, 4096, 0, 16, 32, 32, 1, 8), 1);
    KT_CHECK_INT(law_splitk_segments(&d, 1, 4096, 4096, 0, 32, 32, 1, 8), 1);
    KT_CHECK_INT(law_splitk_segments(&d, 1, 4096, 4096, 16, 32, 32, 0, 8), 1);
    KT_CHECK_INT(law_splitk_segments(NULL, 1, 4096, 4096, 16, 32, 32, 1, 8), 1);
    law_device none = law_device_from_target(NULL, 0);
    KT_CHECK_INT(law_splitk_segments(&none, 1, 4096, 4096, 16, 32, 32, 1, 8), 1);
    /* K bounds it: K = 5 blocks allows 4 by count, but 4 segments of 2 blocks leave the last
     * one empty, so 2. K = 64 = one block: no split however starved. */
    KT_CHECK_INT(law_splitk_segments(&d, 1, 64, 320, 16, 64, 64, 1, 8), 2);
    KT_CHECK_INT(law_splitk_segments(&d, 1, 4096, 64, 16, 64, 64, 1, 8), 1);
    /* Seed, M=1: N=4096 is 256 waves on 2048 slots; starved, so the cap binds. */
    KT_CHECK_INT(law_splitk_segments(&d, 1, 4096, 4096, 16, 64, 64, 4, 8), 8);

    /* Traffic alone retires split-K: on a device with a million slots "want" never binds, yet
     * the count falls with M and reaches 1 (N=5120, K=8704: from M=~140 on no split pays). */
    law_device huge = d;
    huge.compute_units = 1 << 15;
    int prev = 1 << 30;
    for (int m = 1; m <= 8192; m *= 2) {
        int seg = law_splitk_segments(&huge, m, 5120, 8704, 16, 64, 64, 4, 64);
        KT_CHECK(seg <= prev);
        prev = seg;
        if (m >= 256) KT_CHECK_INT(seg, 1);
    }
    /* Starved at M=1, K=136 blocks: 64 segments would be 3 blocks each and leave the last ones
     * empty (63 * 192 >= 8704), 32 too (31 * 320); 16 segments of 9 blocks all have work. */
    KT_CHECK_INT(law_splitk_segments(&huge, 1, 5120, 8704, 16, 64, 64, 4, 64), 16);
}

/* The seed's trough table (rfihip trough_dflt_b8: gfx1201, N=5120, K=8704): law picks
 * mt1/sk4 at M=1 and 8, mt2/sk4 at 32, mt4/sk4 at 64, mt8/sk2 at 128, mt8/sk1 at 512, with
 * occupancy 62.5 / 62.5 / 62.5 / 62.5 / 31.2 / 62.5 %. mtX is BM = 16X; each wave of that kernel
 * owns 16 columns ("total waves = N/16 regardless of tile shape"), modelled as BN=64 with 4 waves. */
static void test_seed_trough(void)
{
    law_device d = device("gfx1201", 64);
    static const struct { int m, bm, sk, occ_permille; } rows[] = {
        {1, 16, 4, 625}, {8, 16, 4, 625}, {32, 32, 4, 625}, {64, 64, 4, 625},
        {128, 128, 2, 312}, {512, 128, 1, 625},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int seg = law_splitk_segments(&d, rows[i].m, 5120, 8704, rows[i].bm, 64, 64, 4, 8);
        KT_CHECK_INT(seg, rows[i].sk);
        long long waves = (long long)((rows[i].m + rows[i].bm - 1) / rows[i].bm) * (5120 / 64) * 4 * seg;
        KT_CHECK_INT(waves * 1000 / law_device_wave_slots(&d), rows[i].occ_permille);
    }
    /* The seed's BK=32 table gives the same splits (K has 272 blocks, never binding). */
    KT_CHECK_INT(law_splitk_segments(&d, 128, 5120, 8704, 128, 64, 32, 4, 8), 2);
}

/* The recipe's variant space for one dtype (templates/gemm/dense.lua, wave32, 256 threads): tile
 * divisible by waves, at least min(4, fragments) fragments a wave, at most 16, the squarest grid
 * for a wave count, SK * BM <= 128 when SK > 1. */
static int squarest(int bm, int bn, int wm, int wn)
{
    int best_m = 0, bnum = 0, bden = 1;
    for (int m = 1; m <= 8; m *= 2) {
        int w = wm * wn, nn = w / m;
        if (m * nn != w || bm % (16 * m) || bn % (16 * nn)) continue;
        int fm = bm / (16 * m), fn = bn / (16 * nn);
        if (best_m == 0 || (fm + fn) * bden < bnum * (fm * fn)) { best_m = m; bnum = fm + fn; bden = fm * fn; }
    }
    return best_m == wm;
}

static int recipe_candidates(law_gemm_candidate *out, int cap)
{
    static const int bms[] = {16, 32, 64, 128}, bns[] = {32, 64, 128}, bks[] = {32, 64};
    static const int ws[] = {1, 2, 4}, sks[] = {1, 2, 4, 8};
    int n = 0;
    for (int a = 0; a < 4; a++) for (int b = 0; b < 3; b++) for (int c = 0; c < 2; c++)
    for (int e = 0; e < 3; e++) for (int f = 0; f < 3; f++) for (int g = 0; g < 4; g++) {
        int bm = bms[a], bn = bns[b], wm = ws[e], wn = ws[f], sk = sks[g];
        if (bm % (16 * wm) || bn % (16 * wn) || wm * wn * 32 > 256) continue;
        int fm = bm / (16 * wm), fn = bn / (16 * wn), frags = bm * bn / 256;
        if (fm * fn < (frags < 4 ? frags : 4) || fm * fn > 16) continue;
        if (!squarest(bm, bn, wm, wn)) continue;
        if (sk > 1 && sk * bm > 128) continue;
        /* Occupancy as LDS would bound it on a 128 KiB WGP of 4 SIMDs, at most 16 a SIMD. */
        int lds = (bm + bn) * (bks[c] + 8) * 2, occ = 131072 / lds * wm * wn / 4;
        if (occ > 16) occ = 16;
        if (occ < 1) occ = 1;
        if (n < cap) out[n] = (law_gemm_candidate){bm, bn, bks[c], wm, wn, sk, occ};
        n++;
    }
    return n;
}

static int same_params(const law_gemm_candidate *a, const law_gemm_candidate *b)
{
    return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk && a->wm == b->wm && a->wn == b->wn &&
           a->splitk == b->splitk;
}

static void test_pick(void)
{
    law_device d = device("gfx1201", 64);
    law_gemm_candidate c[512], r[512];
    int n = recipe_candidates(c, 512);
    KT_CHECK(n > 20 && n <= 512);
    for (int i = 0; i < n; i++) r[i] = c[n - 1 - i];

    /* Nothing to pick from. */
    KT_CHECK_INT(law_pick_gemm(&d, NULL, 0, 1, 4096, 4096), -1);
    KT_CHECK_INT(law_pick_gemm(&d, c, 0, 1, 4096, 4096), -1);
    KT_CHECK_INT(law_pick_gemm(NULL, c, n, 1, 4096, 4096), -1);
    law_gemm_candidate bad[2] = {{16, 32, 32, 2, 1, 1, 8}, {0, 0, 0, 0, 0, 0, 0}};
    KT_CHECK_INT(law_pick_gemm(&d, bad, 2, 1, 4096, 4096), -1);

    /* Decode: BM=16, the split law's count for the tile, the shallow K block. */
    int p = law_pick_gemm(&d, c, n, 1, 5120, 8704);
    KT_CHECK(p >= 0);
    if (p >= 0) {
        KT_CHECK_INT(c[p].bm, 16);
        KT_CHECK_INT(c[p].wm, 1);
        KT_CHECK_INT(c[p].bk, 32);
        KT_CHECK_INT(c[p].splitk, law_splitk_segments(&d, 1, 5120, 8704, c[p].bm, c[p].bn, c[p].bk,
                                                      c[p].wm * c[p].wn, 8));
        KT_CHECK(c[p].splitk > 1);
    }
    /* The M block covers M: 32 -> 32, 64 -> 64, 100 -> 128, 128 and beyond -> 128. */
    static const int m_bm[][2] = {{8, 16}, {16, 16}, {17, 32}, {32, 32}, {33, 64}, {64, 64},
                                  {100, 128}, {128, 128}, {512, 128}, {16384, 128}};
    for (int i = 0; i < 10; i++) {
        int q = law_pick_gemm(&d, c, n, m_bm[i][0], 5120, 8704);
        KT_CHECK(q >= 0);
        if (q >= 0) KT_CHECK_INT(c[q].bm, m_bm[i][1]);
        if (q >= 0) KT_CHECK_INT(c[q].bk, m_bm[i][0] >= LAW_DEEP_BK_MIN_M ? 64 : 32);
    }
    /* M=64: the law wants 4 segments for BM=64, but the recipe compiles at most SK=2 there
     * (SK * BM <= 128): the largest compiled count below the law's. */
    int q = law_pick_gemm(&d, c, n, 64, 5120, 8704);
    if (q >= 0) KT_CHECK_INT(c[q].splitk, 2);
    /* Large M: no split, and a wave tile no worse than the seed's 2x2 split at MT=8 (0.75
     * fragment loads per MMA, against the 8x1 sliver's 1.125). */
    q = law_pick_gemm(&d, c, n, 16384, 5120, 8704);
    if (q >= 0) {
        KT_CHECK_INT(c[q].splitk, 1);
        int fm = c[q].bm / (16 * c[q].wm), fn = c[q].bn / (16 * c[q].wn);
        KT_CHECK(4 * (fm + fn) <= 3 * fm * fn);
        KT_CHECK(squarest(c[q].bm, c[q].bn, c[q].wm, c[q].wn));
    }
    /* Square beats sliver for one tile and wave count: 4 waves of 128x128 as 2x2, 4x1, 1x4. */
    law_gemm_candidate sq[3] = {{128, 128, 64, 4, 1, 1, 8}, {128, 128, 64, 1, 4, 1, 8},
                                {128, 128, 64, 2, 2, 1, 8}};
    KT_CHECK_INT(law_pick_gemm(&d, sq, 3, 4096, 4096, 4096), 2);
    /* Occupancy breaks a tie of everything above it; then the lower index. */
    law_gemm_candidate oc[3] = {{64, 64, 64, 2, 2, 1, 6}, {64, 64, 64, 2, 2, 1, 10},
                                {64, 64, 64, 2, 2, 1, 10}};
    KT_CHECK_INT(law_pick_gemm(&d, oc, 3, 4096, 4096, 4096), 1);
    /* A split count not compiled below the law's: the smallest compiled one. */
    law_gemm_candidate only[2] = {{16, 64, 64, 1, 1, 8, 8}, {16, 64, 64, 1, 1, 4, 8}};
    KT_CHECK_INT(law_pick_gemm(&d, only, 2, 1, 64, 64), 1);

    /* Deterministic: the same answer twice, and the same variant whatever the list order. */
    static const int shapes[][3] = {{1, 5120, 8704}, {8, 4096, 4096}, {64, 151936, 5120},
                                    {300, 1024, 128}, {4096, 5120, 8704}, {1, 1, 1}, {1, 64, 1},
                                    {1, 1, 4096}, {7, 3000, 1000}};
    for (int i = 0; i < 9; i++) {
        int a = law_pick_gemm(&d, c, n, shapes[i][0], shapes[i][1], shapes[i][2]);
        int b = law_pick_gemm(&d, c, n, shapes[i][0], shapes[i][1], shapes[i][2]);
        int e = law_pick_gemm(&d, r, n, shapes[i][0], shapes[i][1], shapes[i][2]);
        KT_CHECK(a >= 0 && e >= 0);
        KT_CHECK_INT(a, b);
        if (a >= 0 && e >= 0) KT_CHECK(same_params(&c[a], &r[e]));
    }
    /* M = N = K = 1: the smallest tile, no split. */
    int one = law_pick_gemm(&d, c, n, 1, 1, 1);
    if (one >= 0) { KT_CHECK_INT(c[one].bm, 16); KT_CHECK_INT(c[one].splitk, 1); }
    /* The H200 picks too, from the same list. */
    law_device h = device("sm_90a", 132);
    int hp = law_pick_gemm(&h, c, n, 1, 5120, 8704);
    KT_CHECK(hp >= 0);
    if (hp >= 0) KT_CHECK_INT(c[hp].bm, 16);
}

static void test_regret(void)
{
    KT_CHECK(fabs(law_regret(1.0, 1.0)) < 1e-12);
    KT_CHECK(fabs(law_regret(0.1208, 0.1) - 0.208) < 1e-9);
    KT_CHECK(isnan(law_regret(1.0, 0.0)));
    KT_CHECK(isnan(law_regret(-1.0, 1.0)));
}

/* Launch geometry: a staged variant asks for its stages (plus the alignment slack) at launch;
 * every other variant and the reduce kernel ask for none. */
static void test_geometry(void)
{
    kt_gemm_variant v = {128, 256, 64, 8, 1, 1, 4};
    kt_launch_dims d = kt_gemm_main_dims(&v, 4096, 1000, 32, 132);
    KT_CHECK_INT(d.grid[0], 4);
    KT_CHECK_INT(d.grid[1], 32);
    KT_CHECK_INT(d.block[0], 256);
    KT_CHECK_INT(d.shared, 4 * (128 + 256) * 64 * 2 + 1024);
    v.stages = 0;
    KT_CHECK_INT(kt_gemm_main_dims(&v, 1, 1, 32, 132).shared, 0);
    KT_CHECK_INT(kt_gemm_reduce_dims(64, 64).shared, 0);
    KT_CHECK_INT(kt_gemm_partials_needed(&v, 4096, 1000, 132), 0);
    KT_CHECK(!kt_gemm_uses_workspace(&v));
    /* stream-K: two blocks a compute unit whatever the shape, within the tile counters */
    kt_gemm_variant s = {16, 32, 64, 8, 1, 0, 0};
    d = kt_gemm_main_dims(&s, 16, 4608, 32, 132);
    KT_CHECK_INT(d.grid[0], 264);
    KT_CHECK_INT(d.grid[1], 1);
    KT_CHECK_INT(d.grid[2], 1);
    KT_CHECK_INT(d.block[0], 256);
    KT_CHECK_INT(kt_gemm_main_dims(&s, 1, 1, 32, 100000).grid[0], KT_GEMM_TILE_COUNTERS);
    KT_CHECK_INT(kt_gemm_main_dims(&s, 1, 1, 32, 0).grid[0], 2);
    KT_CHECK(kt_gemm_uses_workspace(&s));
    KT_CHECK_INT(kt_gemm_partials_needed(&s, 16, 4608, 132), 2LL * 264 * 16 * 32 + KT_GEMM_TILE_COUNTERS);
    KT_CHECK_INT(kt_gemm_k_per_split(3584, 0, 64), 3584);
}

/* The stream-K partition of templates/abi/gemm.h, for every (tiles, steps, grid) in a range that
 * includes grids larger than the steps: the working blocks' shares are non-empty, differ by at
 * most one step and cover the steps once; the owner of a step is the block whose share holds it;
 * a tile split over blocks c0..c1 has a piece in every one of them (the last block counts c1 - c0
 * + 1 arrivals), in distinct slabs below 2G; only c0 may have begun in an earlier tile; no two
 * split tiles share a counter word (c0). */
static void test_streamk_partition(void)
{
    static const int blocks[] = {1, 2, 3, 7, 64, 132};
    for (int bi = 0; bi < (int)(sizeof blocks / sizeof blocks[0]); bi++)
        for (int tiles = 1; tiles <= 300; tiles += tiles < 20 ? 1 : 37)
            for (int steps = 1; steps <= 70; steps += steps < 10 ? 1 : 13) {
                long long total = (long long)tiles * steps;
                int g = kt_gemm_streamk_working(total, blocks[bi]);
                KT_CHECK(g >= 1 && g <= blocks[bi] && g <= total);
                char slab_used[264] = {0}, word_used[132] = {0};
                long long lo = total, hi = 0;
                KT_CHECK_INT(kt_gemm_streamk_start(total, g, 0), 0);
                KT_CHECK_INT(kt_gemm_streamk_start(total, g, g), total);
                for (int b = 0; b < g; b++) {
                    long long s0 = kt_gemm_streamk_start(total, g, b), s1 = kt_gemm_streamk_start(total, g, b + 1);
                    KT_CHECK(s1 > s0);
                    lo = s1 - s0 < lo ? s1 - s0 : lo;
                    hi = s1 - s0 > hi ? s1 - s0 : hi;
                    for (long long x = s0; x < s1; x++) KT_CHECK_INT(kt_gemm_streamk_owner(total, g, x), b);
                }
                KT_CHECK(hi - lo <= 1);
                for (int t = 0; t < tiles; t++) {
                    long long first = (long long)t * steps;
                    int c0 = kt_gemm_streamk_owner(total, g, first);
                    int c1 = kt_gemm_streamk_owner(total, g, first + steps - 1);
                    KT_CHECK(c0 <= c1 && c1 < g);
                    if (c0 == c1) continue;   /* whole in one block: written directly */
                    KT_CHECK(!word_used[c0]);
                    word_used[c0] = 1;
                    for (int c = c0; c <= c1; c++) {
                        int slab = kt_gemm_streamk_slab(total, g, c, c0, first);
                        KT_CHECK(slab >= 0 && slab < 2 * g && !slab_used[slab]);
                        slab_used[slab] = 1;
                        long long cs = kt_gemm_streamk_start(total, g, c), ce = kt_gemm_streamk_start(total, g, c + 1);
                        KT_CHECK(cs < first + steps && ce > first);   /* c has a piece of the tile */
                        if (c > c0) KT_CHECK(cs > first);
                    }
                }
            }
}

int main(void)
{
    test_streamk_partition();
    test_geometry();
    test_devices();
    test_splitk_laws();
    test_splitk_boundaries();
    test_seed_trough();
    test_pick();
    test_regret();
    KT_TEST_END();
}
