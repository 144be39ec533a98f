/* plan.h: the sweep's decisions as pure functions (unit-tested without a GPU): which variants go on
 * to the fine pass, and which one wins. What a problem sweeps at all is its op's law and pruning
 * (runtime/op.h). Prefix plan_. */
#ifndef KT_PLAN_H
#define KT_PLAN_H
#include "db_tuner.h"

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
