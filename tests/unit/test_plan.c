/* test_plan.c: the sweep's decisions (tuner/plan.c) as laws: finalists are the near-best plus the law's pick, and the winner of a
 * tie is the law's pick, else the fewest resources, else the name; and the timing helpers. (The
 * GEMM's pruning is its descriptor's, tested in test_op.c.) */
#include <math.h>
#include <string.h>
#include "kt_test.h"
#include "plan.h"
#include "target.h"
#include "timing.h"

static db_candidate cand(const char *name, int regs, int threads)
{
    db_candidate c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "%s", name);
    snprintf(c.code_hash, sizeof c.code_hash, "h_%s", name);
    c.regs = regs; c.threads = threads; c.waves_per_simd = 8;
    return c;
}

static void test_finalists(void)
{
    int out[8];
    double med[] = {10.0, 10.5, 12.0, -1, 10.79, 30.0};
    /* margin 8%: 10.0, 10.5, 10.79 in time order; the law's pick (30.0) appended */
    int n = plan_finalists(med, 6, 5, 0.08, 6, out);
    KT_CHECK_INT(n, 4);
    KT_CHECK_INT(out[0], 0);
    KT_CHECK_INT(out[1], 1);
    KT_CHECK_INT(out[2], 4);
    KT_CHECK_INT(out[3], 5);
    /* capped, and a law pick without a time is not added */
    n = plan_finalists(med, 6, 3, 0.08, 2, out);
    KT_CHECK_INT(n, 2);
    /* nothing timed: no finalists */
    double none[] = {-1, -1};
    KT_CHECK_INT(plan_finalists(none, 2, 0, 0.1, 6, out), 0);
}

static void test_winner(void)
{
    db_candidate a = cand("a", 100, 64), b = cand("b", 90, 64),
                 c = cand("c", 90, 64);
    const db_candidate *cs[] = {&a, &b, &c};
    int tied = 0;
    const char *by = NULL;
    double clear[] = {10.0, 11.0, 12.0};
    KT_CHECK_INT(plan_winner(clear, cs, 3, 2, 0.003, &tied, &by), 0);
    KT_CHECK_INT(tied, 1);
    KT_CHECK(strcmp(by, "fastest") == 0);
    /* a tie inside the noise: the law's pick (c) wins */
    double tie[] = {10.0, 10.01, 10.02};
    KT_CHECK_INT(plan_winner(tie, cs, 3, 2, 0.003, &tied, &by), 2);
    KT_CHECK_INT(tied, 3);
    KT_CHECK(strcmp(by, "tie->law") == 0);
    /* the law's pick outside the tie: fewest registers x threads, then the name (b before c) */
    double tie2[] = {10.0, 10.01, 10.02};
    KT_CHECK_INT(plan_winner(tie2, cs, 3, -1, 0.003, &tied, &by), 1);
    KT_CHECK(strcmp(by, "tie->resources") == 0);
    /* deterministic under reordering: same winner whatever the order of the tied */
    const db_candidate *rev[] = {&c, &b, &a};
    KT_CHECK_INT(plan_winner(tie2, rev, 3, -1, 0.003, &tied, &by), 1);
    double none[] = {-1, -1, -1};
    KT_CHECK_INT(plan_winner(none, cs, 3, 0, 0.003, &tied, &by), -1);
}

static void test_timing_helpers(void)
{
    double v[] = {5, 1, 3, 4, 2};
    KT_CHECK(tm_median(v, 5) == 3);
    double w[] = {4, 1, 3, 2};
    KT_CHECK(tm_median(w, 4) == 2.5);
    KT_CHECK(fabs(tm_spread(10.0, 10.1) - 0.01) < 1e-12);
    KT_CHECK(tm_spread(10.1, 10.0) == tm_spread(10.0, 10.1));
    /* sets: one replay streams past twice the L2 (60 MiB L2, 12 MiB a set -> 11 sets) */
    KT_CHECK_INT(tm_cold_sets(60LL << 20, 12LL << 20, 32), 11);
    KT_CHECK_INT(tm_cold_sets(60LL << 20, 1LL << 20, 32), 32);
    KT_CHECK_INT(tm_cold_sets(60LL << 20, 1LL << 30, 32), 2);
    KT_CHECK_INT(tm_cold_sets(0, 1, 32), 1);
}

int main(void)
{
    test_finalists();
    test_winner();
    test_timing_helpers();
    KT_TEST_END();
}
