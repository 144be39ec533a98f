/* plan.c: pruning, finalists and winners (see plan.h). */
#include <string.h>
#include "plan.h"

static law_gemm_candidate plan_law_candidate(const db_candidate *c)
{
    law_gemm_candidate l = {c->bm, c->bn, c->bk, c->wm, c->wn, c->sk, c->waves_per_simd};
    return l;
}

int plan_law_pick(const law_device *d, const db_candidate *cands, int ncands, int m, int n, int k)
{
    if (ncands < 1) return -1;
    law_gemm_candidate l[1024];
    int count = ncands < 1024 ? ncands : 1024;
    for (int i = 0; i < count; i++) l[i] = plan_law_candidate(&cands[i]);
    return law_pick_gemm(d, l, count, m, n, k);
}

static int plan_pow2_at_least(int x)
{
    int p = 1;
    while (p < x) p *= 2;
    return p;
}

int plan_prune(const law_device *d, const db_candidate *cands, int ncands, int m, int n, int k, int law_idx,
               int *keep)
{
    int kept = 0;
    int max_bm = 2 * plan_pow2_at_least(m);
    if (max_bm < 16) max_bm = 16;
    /* from M = 256 on, a block shorter than 64 rows re-streams the weights M/BM >= 4 times over */
    int min_bm = m >= 256 ? 64 : 0;
    for (int i = 0; i < ncands; i++) {
        const db_candidate *c = &cands[i];
        int waves = c->wm * c->wn;
        int law_sk = law_splitk_segments(d, m, n, k, c->bm, c->bn, c->bk, waves, 32);
        /* a block of fewer than half the problem's rows (up to 16) streams the weights twice over */
        int short_block = 2 * c->bm < (m < 16 ? m : 16);
        keep[i] = i == law_idx || (c->bm <= max_bm && c->bm >= min_bm && !short_block && c->sk <= 2 * law_sk);
        kept += keep[i];
    }
    return kept;
}

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
