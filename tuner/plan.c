/* plan.c: pruning, finalists and winners (see plan.h). */
#include <string.h>
#include "plan.h"

int plan_finalists(const double *median, int n, int law_idx, double margin, int max_finalists, int *out)
{
    double best = -1;
    for (int i = 0; i < n; i++)
        if (median[i] > 0 && (best < 0 || median[i] < best)) best = median[i];
    if (best < 0) return 0;
    int count = 0;
    /* selection by repeated minimum keeps the order fastest first, ties by index */
    char taken[1024] = {0};
    if (n > 1024) n = 1024;
    while (count < max_finalists) {
        int pick = -1;
        for (int i = 0; i < n; i++)
            if (!taken[i] && median[i] > 0 && median[i] <= best * (1 + margin) && (pick < 0 || median[i] < median[pick]))
                pick = i;
        if (pick < 0) break;
        taken[pick] = 1;
        out[count++] = pick;
    }
    if (law_idx >= 0 && law_idx < n && median[law_idx] > 0 && !taken[law_idx]) out[count++] = law_idx;
    return count;
}

static long long plan_resources(const db_candidate *c) { return (long long)c->regs * c->threads; }

int plan_winner(const double *median, const db_candidate *const *cands, int n, int law_pos, double noise,
                int *tied, const char **decided_by)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (median[i] > 0 && (best < 0 || median[i] < median[best])) best = i;
    *tied = 0;
    *decided_by = "fastest";
    if (best < 0) return -1;
    int ties = 0, win = -1;
    for (int i = 0; i < n; i++) {
        if (!(median[i] > 0 && median[i] <= median[best] * (1 + noise))) continue;
        ties++;
        if (win < 0) { win = i; continue; }
        long long ri = plan_resources(cands[i]), rw = plan_resources(cands[win]);
        if (ri < rw || (ri == rw && (cands[i]->lds_bytes < cands[win]->lds_bytes ||
                                     (cands[i]->lds_bytes == cands[win]->lds_bytes &&
                                      strcmp(cands[i]->name, cands[win]->name) < 0))))
            win = i;
    }
    *tied = ties;
    if (ties == 1) return best;
    if (law_pos >= 0 && law_pos < n && median[law_pos] > 0 && median[law_pos] <= median[best] * (1 + noise)) {
        *decided_by = "tie->law";
        return law_pos;
    }
    *decided_by = "tie->resources";
    return win;
}
