/* plan.h: the sweep's decisions as pure functions (unit-tested without a GPU): which variants a
 * problem sweeps, which go on to the fine pass, and which one wins. Prefix plan_. */
#ifndef KT_PLAN_H
#define KT_PLAN_H
#include "db_tuner.h"
#include "law.h"

/* The law's pick among cands for (m, n, k): an index, or -1. */
int plan_law_pick(const law_device *d, const db_candidate *cands, int ncands, int m, int n, int k);

/* Prune by the laws: keep[i] = 1 for the variants worth timing at (m, n, k). Kept: M blocks no
 * taller than twice the problem's M rounded up to a power of two (at least 16: a taller block only
 * multiplies MMA work on padding rows) and, from M = 256, at least 64 rows (shorter blocks
 * re-stream the weights M/BM times), and split counts up to twice the law's count for that tile
 * (the law's split and the one above it, so the law's own answer is measured against a neighbour).
 * The law's pick is always kept. Returns the number kept. */
int plan_prune(const law_device *d, const db_candidate *cands, int ncands, int m, int n, int k, int law_idx,
               int *keep);

/* Finalists for the fine pass: the variants whose coarse median is within (1 + margin) of the
 * best, fastest first, at most max_finalists, plus the law's pick when it has a time (so its
 * regret is measured in the same pass as the winner). median[i] < 0 means "no time". Returns the
 * count written to out (indices). */
int plan_finalists(const double *median, int n, int law_idx, double margin, int max_finalists, int *out);

/* The winner among n timed variants (median in us). Variants within (1 + noise) of the fastest
 * are tied; a tie goes to the law's pick if it is among them, then to the fewest resources
 * (registers x threads, then LDS), then to the name (deterministic). *tied receives the number of
 * variants in the tie; *decided_by "fastest" | "tie->law" | "tie->resources". */
int plan_winner(const double *median, const db_candidate *const *cands, int n, int law_pos, double noise,
                int *tied, const char **decided_by);

#endif
