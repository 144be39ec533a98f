/* law_replay.h: an op's law replayed over a sweep's measurements (tests/data/<op>_sweeps.tsv, made by
 * tests/data/make_gdn_sweeps.py). For each measured problem the candidates are the timed forms the
 * recipe still offers (`all`: one candidate a recipe variant, name, variant and threads set), with
 * the registers and warps a unit they were measured with; the law's pick is charged its time
 * against the fastest's. Header-only, for the unit tests. */
#ifndef KT_LAW_REPLAY_H
#define KT_LAW_REPLAY_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "law.h"
#include "op.h"

typedef struct {
    int problems;      /* problems with at least one offered form timed */
    int unknown;       /* timings of forms the recipe no longer offers */
    double sum[2];     /* regret summed, by the problem's group (group_of) */
    double worst[2];
    int count[2];
    double worst_all;  /* the worst regret against every timed form, those no longer offered too */
} lr_result;

/* problem_of: the problem of a `P` line's five numbers; group_of: 0 or 1 (a layout, say).
 * nw_param: the index of the variant's warps parameter (occupancy = warps a unit / NW). */
static int lr_replay(const char *path, const char *kernel_prefix, const kt_op *op, const kt_candidate *all, int n,
                     int nw_param, kt_problem (*problem_of)(const int d[5]), int (*group_of)(const int d[5]),
                     lr_result *out)
{
    enum { MAXF = 512 };
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    law_device dev = law_device_from_target(kt_target_find("sm_90a"), 132);   /* the sweeps' H100 */
    struct lr_form { int cand, regs, warps; } *forms = calloc(MAXF, sizeof *forms);
    kt_candidate *c = calloc((size_t)n + 1, sizeof *c);
    double *us = calloc((size_t)n + 1, sizeof *us);
    static char line[16384];
    int nf = 0, rc = forms && c && us ? 0 : -1;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        char suffix[96], name[KT_OP_NAME_LEN + 8];
        int idx, regs, warps, d[5], used;
        if (!strchr(line, '\n') && !feof(f)) { rc = -1; break; }   /* a line longer than the buffer */
        if (sscanf(line, "F %d %95s %d %d", &idx, suffix, &regs, &warps) == 4) {
            if (idx != nf || nf >= MAXF) { rc = -1; break; }
            /* the first sweeps' names predate the PF axis: theirs is PF 0 */
            snprintf(name, sizeof name, "%s%s", kernel_prefix, suffix);
            int k = 0;
            while (k < n && strcmp(all[k].name, name) != 0) k++;
            if (k == n && !strstr(suffix, "_pf")) {
                snprintf(name, sizeof name, "%s%s_pf0", kernel_prefix, suffix);
                for (k = 0; k < n && strcmp(all[k].name, name) != 0; k++) {}
            }
            for (int j = 0; j < nf && k < n; j++)   /* two names for one form: the fixture is wrong */
                if (forms[j].cand == k) rc = -1;
            forms[nf++] = (struct lr_form){k < n ? k : -1, regs, warps};
            continue;
        }
        if (sscanf(line, "P %d %d %d %d %d%n", &d[0], &d[1], &d[2], &d[3], &d[4], &used) != 5) continue;
        int m = 0;
        double best = 1e30, best_all = 1e30;
        for (const char *s = line + used; m < n;) {
            int fi, k = 0;
            double t;
            if (sscanf(s, " %d:%lf%n", &fi, &t, &k) != 2 || k == 0) {
                if (strspn(s, " \t\r\n") != strlen(s)) rc = -1;   /* anything but the line's end */
                break;
            }
            s += k;
            if (fi < 0 || fi >= nf) { rc = -1; break; }
            if (t < best_all) best_all = t;
            if (forms[fi].cand < 0) { out->unknown++; continue; }
            c[m] = all[forms[fi].cand];
            const int nw = c[m].v.p[nw_param];
            c[m].v.occupancy = nw > 0 ? forms[fi].warps / nw : 1;
            c[m].regs = forms[fi].regs;
            us[m++] = t;
            if (t < best) best = t;
        }
        if (rc || m == 0) continue;
        kt_problem p = problem_of(d);
        const int k = op->law_pick(&dev, c, m, &p);
        if (k < 0) { rc = -1; break; }
        const int g = group_of ? group_of(d) != 0 : 0;
        const double regret = us[k] / best - 1;
        out->problems++;
        out->count[g]++;
        out->sum[g] += regret;
        if (regret > out->worst[g]) out->worst[g] = regret;
        if (us[k] / best_all - 1 > out->worst_all) out->worst_all = us[k] / best_all - 1;
    }
    fclose(f);
    free(us);
    free(c);
    free(forms);
    return rc;
}

#endif
