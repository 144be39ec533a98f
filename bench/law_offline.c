/* law_offline.c: the GEMM law measured offline against a sweep's dump.
 *
 *   law_offline --dump DUMP.txt --db KERNELS.ktdb [--target sm_90a] [--holdout MODEL[,MODEL]]
 *               [--quiet] [--prune]
 *
 * DUMP is `kt dump`'s text (gunzipped). Per problem (each `selection` line) it builds the
 * candidate list: every ok kernel of the problem's dtype for the target in the DB, plus any
 * kernel the dump timed for the problem that the DB does not have yet (parameters read from its
 * name, resources unknown). Timings: per kernel, the latest coarse pass that timed it for the
 * problem (fine/tiebreak passes where no coarse one did), the selection's winner at its
 * time_us where no pass line has it, and the old law's pick at its law_us. Regret is
 * law_time / best_time - 1 with best_time the fastest of those timings, and the law picking only
 * among the timed candidates; how often its pick over ALL candidates was untimed is reported.
 * The old law's regret is the dump's (measured by the tuner). Problems are counted under every
 * model/tp whose run covered them (equal shapes share a problem key); "overall" counts each key
 * once. --holdout: the summary over the problems only those models cover.
 * --prune: law_gemm_prune over all candidates, kept/total and whether the winner was kept.
 * --card NAME=V sets one of the card's fields (unit udram warp lat launch finish smem slab_* eff_*);
 * --fit refits the fitted ones by coordinate descent (smem, a datasheet rate, is not fitted).
 * Only `gemm ` problems are read: the schema-3 dump's other ops (rmsnorm_add) are skipped. */
#include <ctype.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "law.h"
#include "law_gemm.h"
#include "op_gemm.h"
#include "target.h"

#define MAXP 1024
#define MAXK 4096
#define MAXMT 16

typedef struct { char name[KT_OP_NAME_LEN]; double us; int run; int kind; } timing;

typedef struct {
    char key[128];
    long long n, k, m;
    char winner[KT_OP_NAME_LEN], oldlaw[KT_OP_NAME_LEN];
    double win_us, law_us, old_regret;
    timing *t;
    int nt, cap;
    unsigned mt;             /* bitmask over model/tp pairs covering it */
} problem;

typedef struct {
    char name[KT_OP_NAME_LEN];
    char cls[32];
    kt_candidate c;
} cand;

static problem P[MAXP];
static int np;
static char mt_model[MAXMT][96];
static int mt_tp[MAXMT];
static int nmt;
static int run_mt[4096];
static cand C[MAXK];
static int nc;

static problem *find_problem(const char *key)
{
    for (int i = 0; i < np; i++)
        if (strcmp(P[i].key, key) == 0) return &P[i];
    return NULL;
}

/* Value of `field=` in line (quoted or bare) into out. */
static int field(const char *line, const char *name, char *out, size_t len)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", name);
    const char *s = strstr(line, pat);
    if (!s) {
        snprintf(pat, sizeof pat, "%s=", name);
        if (strncmp(line, pat, strlen(pat)) != 0) return 0;
        s = line - 1;
    }
    s += strlen(pat);
    size_t i = 0;
    if (*s == '"') {
        s++;
        while (*s && *s != '"' && i + 1 < len) out[i++] = *s++;
    } else {
        while (*s && !isspace((unsigned char)*s) && i + 1 < len) out[i++] = *s++;
    }
    out[i] = 0;
    return 1;
}

/* "kt_gemm_<stem>_<dtype>_bm.._bn.._bk.._wm.._wn.._sk..[_st..]" -> class and parameters. */
static int parse_name(const char *name, char *cls, size_t clen, kt_variant *v, char *dtype, size_t dlen)
{
    static const struct { const char *stem, *cls; } stems[] = {
        {"dense", "dense"}, {"skinny", "skinny"}, {"swapab", "swapab"}, {"wgmma", "wgmma"},
        {"wgswap", "wgmma_swapab"}, {"wgws", "wgmma_ws"}, {"wgwsswap", "wgmma_ws_swapab"}};
    if (strncmp(name, "kt_gemm_", 8) != 0) return -1;
    const char *s = name + 8;
    const char *u = strchr(s, '_');
    if (!u) return -1;
    size_t sl = (size_t)(u - s);
    cls[0] = 0;
    for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++)
        if (strlen(stems[i].stem) == sl && strncmp(s, stems[i].stem, sl) == 0)
            snprintf(cls, clen, "%s", stems[i].cls);
    if (!cls[0]) return -1;
    s = u + 1;
    u = strchr(s, '_');
    if (!u) return -1;
    snprintf(dtype, dlen, "%.*s", (int)(u - s), s);
    memset(v, 0, sizeof *v);
    v->p[KT_GEMM_P_SK] = 1;
    static const char *const ax[KT_GEMM_NPARAMS] = {"bm", "bn", "bk", "wm", "wn", "sk", "st"};
    for (s = u + 1; *s;) {
        int j;
        for (j = 0; j < KT_GEMM_NPARAMS; j++)
            if (strncmp(s, ax[j], 2) == 0 && isdigit((unsigned char)s[2])) break;
        if (j == KT_GEMM_NPARAMS) return -1;
        v->p[j] = atoi(s + 2);
        u = strchr(s, '_');
        if (!u) break;
        s = u + 1;
    }
    return 0;
}

static int cand_find(const char *name)
{
    for (int i = 0; i < nc; i++)
        if (strcmp(C[i].name, name) == 0) return i;
    return -1;
}

/* t: the kernel row's target, for its occupancy (kt_row_occupancy); NULL for a name-only kernel. */
static int cand_add(const kt_target *t, const char *name, const char *cls_from_db, int threads, int regs, int lds,
                    int wps)
{
    if (nc >= MAXK) return -1;
    char cls[32], dtype[16];
    kt_variant v;
    if (parse_name(name, cls, sizeof cls, &v, dtype, sizeof dtype) != 0) return -1;
    if (strcmp(dtype, "bf16") != 0) return -1;
    cand *c = &C[nc];
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->cls, sizeof c->cls, "%s", cls_from_db && *cls_from_db ? cls_from_db : cls);
    c->c.name = c->name;
    c->c.law_class = c->cls;
    c->c.v = v;
    c->c.v.occupancy = kt_row_occupancy(t, &(kt_row_resources){threads, wps, regs, lds});
    c->c.threads = threads;
    c->c.regs = regs;
    c->c.lds_bytes = lds;
    c->c.waves_per_simd = wps;
    return nc++;
}

static void add_timing(problem *p, const char *name, double us, int run, int kind)
{
    /* coarse (0) beats fine/tiebreak (1, 2); within a kind the later run wins */
    for (int i = 0; i < p->nt; i++) {
        timing *t = &p->t[i];
        if (strcmp(t->name, name) != 0) continue;
        int better = (kind == 0 && t->kind != 0) || (kind == t->kind && run >= t->run) ||
                     (kind != 0 && t->kind != 0 && run >= t->run);
        if (better) { t->us = us; t->run = run; t->kind = kind; }
        return;
    }
    if (p->nt == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 64;
        p->t = realloc(p->t, (size_t)p->cap * sizeof *p->t);
    }
    timing *t = &p->t[p->nt++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->us = us;
    t->run = run;
    t->kind = kind;
}

static double timed(const problem *p, const char *name)
{
    for (int i = 0; i < p->nt; i++)
        if (strcmp(p->t[i].name, name) == 0) return p->t[i].us;
    return -1;
}

static int read_dump(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) { perror(path); return -1; }
    static char line[8192];
    char buf[512], key[128] = "";
    int cur_run = 0, cur_kind = -1;
    problem *cur = NULL;
    /* two passes: problems and selections first, then timings and covers */
    for (int pass = 0; pass < 2; pass++) {
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            if (pass == 0 && strncmp(line, "run ", 4) == 0) {
                int run = atoi(line + 4);
                char model[96] = "", tp[16] = "";
                field(line, "model", model, sizeof model);
                field(line, "tp", tp, sizeof tp);
                const char *m = strrchr(model, '/');
                m = m ? m + 1 : model;
                int j;
                for (j = 0; j < nmt; j++)
                    if (strcmp(mt_model[j], m) == 0 && mt_tp[j] == atoi(tp)) break;
                if (j == nmt && nmt < MAXMT) {
                    snprintf(mt_model[nmt], sizeof mt_model[nmt], "%s", m);
                    mt_tp[nmt++] = atoi(tp);
                }
                if (run >= 0 && run < 4096) run_mt[run] = j < MAXMT ? j : 0;
            } else if (pass == 0 && strncmp(line, "selection ", 10) == 0) {
                if (np >= MAXP || !field(line, "problem", key, sizeof key)) continue;
                /* a law pick stored without measuring (no device, a problem a sweep did not reach)
                 * has no timings to measure the law against */
                if (field(line, "source", buf, sizeof buf) && strcmp(buf, "law") == 0) continue;
                problem *p = &P[np++];
                memset(p, 0, sizeof *p);
                snprintf(p->key, sizeof p->key, "%s", key);
                char dt[16];
                if (sscanf(key, "gemm %15s n=%lld k=%lld m<=%lld", dt, &p->n, &p->k, &p->m) != 4 ||
                    strcmp(dt, "bf16") != 0) { np--; continue; }
                field(line, "kernel", p->winner, sizeof p->winner);
                field(line, "law", p->oldlaw, sizeof p->oldlaw);
                if (field(line, "time_us", buf, sizeof buf)) p->win_us = atof(buf);
                if (field(line, "law_us", buf, sizeof buf)) p->law_us = atof(buf);
                p->old_regret = field(line, "regret", buf, sizeof buf) ? atof(buf) : NAN;
            } else if (pass == 1 && strncmp(line, "pass ", 5) == 0) {
                field(line, "problem", key, sizeof key);
                cur = find_problem(key);
                field(line, "run", buf, sizeof buf);
                cur_run = atoi(buf);
                field(line, "kind", buf, sizeof buf);
                cur_kind = strcmp(buf, "coarse") == 0 ? 0 : strcmp(buf, "fine") == 0 ? 1 : 2;
            } else if (pass == 1 && strncmp(line, "  time ", 7) == 0) {
                if (!cur) continue;
                char name[KT_OP_NAME_LEN], st[16], med[32];
                if (!field(line, "kernel", name, sizeof name) || !field(line, "status", st, sizeof st) ||
                    !field(line, "median_us", med, sizeof med)) continue;
                if (strcmp(st, "ok") != 0 || med[0] == '-') continue;
                add_timing(cur, name, atof(med), cur_run, cur_kind);
            } else if (pass == 1 && strncmp(line, "cover ", 6) == 0) {
                field(line, "problem", key, sizeof key);
                problem *p = find_problem(key);
                field(line, "run", buf, sizeof buf);
                int run = atoi(buf);
                if (p && run >= 0 && run < 4096) p->mt |= 1u << run_mt[run];
            } else if (strncmp(line, "  time ", 7) != 0 && strncmp(line, "pass ", 5) != 0) {
                cur = NULL;
            }
        }
    }
    fclose(f);
    for (int i = 0; i < np; i++) {
        problem *p = &P[i];
        if (timed(p, p->winner) < 0) add_timing(p, p->winner, p->win_us, 1 << 30, 3);
        if (p->oldlaw[0] && p->law_us > 0 && timed(p, p->oldlaw) < 0) add_timing(p, p->oldlaw, p->law_us, 1 << 30, 3);
    }
    return 0;
}

static int read_db(const char *path, const char *target)
{
    sqlite3 *db;
    char uri[1200];
    snprintf(uri, sizeof uri, "file:%s?mode=ro", path);
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(db));
        return -1;
    }
    sqlite3_stmt *st;
    const char *sql = "select name, template, coalesce(threads,0), coalesce(regs,0), coalesce(lds_bytes,0), "
                      "coalesce(waves_per_simd,0) from kernel where target=?1 and status='ok' "
                      "and (',' || ops || ',') like '%,gemm,%' order by name";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "%s: %s\n", path, sqlite3_errmsg(db));
        sqlite3_close(db);
        return -1;
    }
    sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        const char *tmpl = (const char *)sqlite3_column_text(st, 1);
        char cls[64] = "";
        if (tmpl) {   /* "gemm/wgmma_ws.hip" -> "wgmma_ws" */
            const char *s = strrchr(tmpl, '/');
            s = s ? s + 1 : tmpl;
            snprintf(cls, sizeof cls, "%s", s);
            char *dot = strchr(cls, '.');
            if (dot) *dot = 0;
        }
        cand_add(kt_target_find(target), name, cls, sqlite3_column_int(st, 2), sqlite3_column_int(st, 3),
                 sqlite3_column_int(st, 4), sqlite3_column_int(st, 5));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct { double *v; int n; } series;

static void push(series *s, double x)
{
    s->v = realloc(s->v, (size_t)(s->n + 1) * sizeof *s->v);
    s->v[s->n++] = x;
}

static void summary(const char *label, series *s)
{
    if (s->n == 0) { printf("  %-34s      n=0\n", label); return; }
    qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_double);
    double med = s->n % 2 ? s->v[s->n / 2] : 0.5 * (s->v[s->n / 2 - 1] + s->v[s->n / 2]);
    double sum = 0;
    int within15 = 0;
    for (int i = 0; i < s->n; i++) { sum += s->v[i]; within15 += s->v[i] <= 0.15; }
    printf("  %-34s n=%3d  median %+7.1f%%  mean %+7.1f%%  worst %+7.1f%%  <=15%%: %d\n", label, s->n,
           100 * med, 100 * sum / s->n, 100 * s->v[s->n - 1], within15);
}

/* --card name=value: one of the card's fields, for fitting (the defaults are law_gemm.c's). */
static law_gemm_card card;
static int card_set(const char *kv)
{
    static const struct { const char *name; size_t off; } f[] = {
        {"dram", offsetof(law_gemm_card, dram_bytes_per_ns_x100)},
        {"unit", offsetof(law_gemm_card, unit_bytes_per_ns)},
        {"lat", offsetof(law_gemm_card, latency_ns)},
        {"udram", offsetof(law_gemm_card, unit_dram_bytes_per_ns)},
        {"warp", offsetof(law_gemm_card, warp_bytes_per_ns_x10)},
        {"mma", offsetof(law_gemm_card, mma_flops_per_ns)},
        {"vec", offsetof(law_gemm_card, vec_ops_per_ns)},
        {"launch", offsetof(law_gemm_card, launch_ns)},
        {"finish", offsetof(law_gemm_card, tile_finish_ns)},
        {"smem", offsetof(law_gemm_card, smem_bytes_per_ns)},
        {"slab_dense", offsetof(law_gemm_card, slab_bytes_per_ns) + LAW_GEMM_DENSE * sizeof(int)},
        {"slab_swapab", offsetof(law_gemm_card, slab_bytes_per_ns) + LAW_GEMM_SWAPAB * sizeof(int)},
        {"slab_wgswap", offsetof(law_gemm_card, slab_bytes_per_ns) + LAW_GEMM_WGMMA_SWAPAB * sizeof(int)},
        {"slab_wgws", offsetof(law_gemm_card, slab_bytes_per_ns) + LAW_GEMM_WGMMA_WS * sizeof(int)},
        {"slab_wgwsswap", offsetof(law_gemm_card, slab_bytes_per_ns) + LAW_GEMM_WGMMA_WS_SWAPAB * sizeof(int)},
        {"eff_dense", offsetof(law_gemm_card, eff_pct) + LAW_GEMM_DENSE * sizeof(int)},
        {"eff_swapab", offsetof(law_gemm_card, eff_pct) + LAW_GEMM_SWAPAB * sizeof(int)},
        {"eff_wgmma", offsetof(law_gemm_card, eff_pct) + LAW_GEMM_WGMMA * sizeof(int)},
        {"eff_wgswap", offsetof(law_gemm_card, eff_pct) + LAW_GEMM_WGMMA_SWAPAB * sizeof(int)},
        {"eff_wgws", offsetof(law_gemm_card, eff_pct) + LAW_GEMM_WGMMA_WS * sizeof(int)},
        {"eff_wgwsswap", offsetof(law_gemm_card, eff_pct) + LAW_GEMM_WGMMA_WS_SWAPAB * sizeof(int)},
    };
    const char *eq = strchr(kv, '=');
    for (size_t i = 0; eq && i < sizeof f / sizeof f[0]; i++)
        if (strlen(f[i].name) == (size_t)(eq - kv) && strncmp(kv, f[i].name, (size_t)(eq - kv)) == 0) {
            *(int *)((char *)&card + f[i].off) = atoi(eq + 1);
            return 0;
        }
    fprintf(stderr, "law_offline: --card %s: unknown field\n", kv);
    return -1;
}

/* The GEMM problem of a dump problem, as the law reads it. */
static kt_problem gemm_problem(const problem *p)
{
    kt_problem kp;
    memset(&kp, 0, sizeof kp);
    kp.op = &kt_op_gemm;
    kp.dim[KT_GEMM_D_N] = p->n;
    kp.dim[KT_GEMM_D_K] = p->k;
    kp.dim[KT_GEMM_D_M] = p->m;
    return kp;
}

/* Regret of the law (card) over problem i's timed candidates; NaN when nothing is timed. */
static double problem_regret(const law_device *d, const law_gemm_card *cd, int i, kt_candidate *list, double *tt)
{
    problem *p = &P[i];
    kt_problem kp = gemm_problem(p);
    int m = 0;
    double best = -1;
    for (int j = 0; j < p->nt; j++) {
        int c = cand_find(p->t[j].name);
        if (c < 0) continue;
        tt[m] = p->t[j].us;
        list[m++] = C[c].c;
        if (best < 0 || p->t[j].us < best) best = p->t[j].us;
    }
    int pick = law_gemm_pick_card(d, cd, list, m, &kp);
    return pick >= 0 ? tt[pick] / best - 1 : NAN;
}

/* --fit: coordinate descent over the card's fields on the problems not held out. Objective: the
 * mean regret (each capped at 150%) plus a quarter of the worst. */
static double fit_objective(const law_device *d, const law_gemm_card *cd, unsigned hold, kt_candidate *list, double *tt)
{
    double sum = 0, worst = 0;
    int n = 0;
    for (int i = 0; i < np; i++) {
        if (hold && (P[i].mt & ~hold) == 0) continue;
        double r = problem_regret(d, cd, i, list, tt);
        if (isnan(r)) continue;
        sum += r < 1.5 ? r : 1.5;
        if (r > worst) worst = r;
        n++;
    }
    return n ? sum / n + 0.25 * worst : 0;
}

int main(int argc, char **argv)
{
    const char *dump = NULL, *dbp = NULL, *target = "sm_90a", *holdout = NULL;
    int quiet = 0, do_prune = 0, units = 0, do_fit = 0, fit_rounds = 4;
    const char *explain = NULL;   /* --explain KEY: estimate against measurement, every timed candidate */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dump") && i + 1 < argc) dump = argv[++i];
        else if (!strcmp(argv[i], "--db") && i + 1 < argc) dbp = argv[++i];
        else if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
        else if (!strcmp(argv[i], "--holdout") && i + 1 < argc) holdout = argv[++i];
        else if (!strcmp(argv[i], "--units") && i + 1 < argc) units = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--card") && i + 1 < argc) { if (card_set(argv[++i]) != 0) return 2; }
        else if (!strcmp(argv[i], "--explain") && i + 1 < argc) explain = argv[++i];
        else if (!strcmp(argv[i], "--fit")) do_fit = 1;
        else if (!strcmp(argv[i], "--fit-rounds") && i + 1 < argc) fit_rounds = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--quiet")) quiet = 1;
        else if (!strcmp(argv[i], "--prune")) do_prune = 1;
        else {
            fprintf(stderr, "usage: law_offline --dump DUMP.txt --db KERNELS.ktdb [--target T] [--units N] "
                            "[--holdout MODEL[,MODEL]] [--prune] [--quiet]\n");
            return 2;
        }
    }
    if (!dump) { fprintf(stderr, "law_offline: --dump is required\n"); return 2; }
    card = law_gemm_card_default();
    for (int i = 1; i < argc; i++)   /* the card's fields again, now over the defaults */
        if (!strcmp(argv[i], "--card") && i + 1 < argc) card_set(argv[++i]);
    const kt_target *t = kt_target_find(target);
    if (!t) { fprintf(stderr, "law_offline: unknown target %s\n", target); return 2; }
    if (read_dump(dump) != 0) return 1;
    if (dbp && read_db(dbp, target) != 0) return 1;
    int from_db = nc;
    for (int i = 0; i < np; i++)
        for (int j = 0; j < P[i].nt; j++)
            if (cand_find(P[i].t[j].name) < 0) cand_add(NULL, P[i].t[j].name, NULL, 0, 0, 0, 0);
    if (units < 1) {
        units = 132;
        FILE *f = fopen(dump, "r");
        static char line[4096];
        char buf[32];
        while (f && fgets(line, sizeof line, f))
            if (strncmp(line, "device ", 7) == 0 && field(line, "cus", buf, sizeof buf)) { units = atoi(buf); break; }
        if (f) fclose(f);
    }
    law_device d = law_device_from_target(t, units);
    printf("law_offline: %d problems, %d candidates (%d from the DB, %d only named by the dump), %s x %d units\n",
           np, nc, from_db, nc - from_db, target, units);

    unsigned hold = 0;
    if (holdout)
        for (int j = 0; j < nmt; j++)
            if (strstr(holdout, mt_model[j])) hold |= 1u << j;

    if (do_fit) {
        kt_candidate *fl = malloc((size_t)nc * sizeof *fl);
        double *ft = malloc((size_t)nc * sizeof *ft);
        int *fields[] = {&card.unit_bytes_per_ns, &card.unit_dram_bytes_per_ns, &card.warp_bytes_per_ns_x10, &card.latency_ns,
                         &card.launch_ns, &card.tile_finish_ns,
                         &card.slab_bytes_per_ns[LAW_GEMM_DENSE], &card.slab_bytes_per_ns[LAW_GEMM_SWAPAB],
                         &card.slab_bytes_per_ns[LAW_GEMM_WGMMA_SWAPAB], &card.slab_bytes_per_ns[LAW_GEMM_WGMMA_WS],
                         &card.slab_bytes_per_ns[LAW_GEMM_WGMMA_WS_SWAPAB],
                         &card.eff_pct[LAW_GEMM_DENSE], &card.eff_pct[LAW_GEMM_SWAPAB], &card.eff_pct[LAW_GEMM_WGMMA],
                         &card.eff_pct[LAW_GEMM_WGMMA_SWAPAB], &card.eff_pct[LAW_GEMM_WGMMA_WS],
                         &card.eff_pct[LAW_GEMM_WGMMA_WS_SWAPAB]};
        static const char *const names[] = {"unit", "udram", "warp", "lat", "launch", "finish", "slab_dense",
                                            "slab_swapab", "slab_wgswap", "slab_wgws", "slab_wgwsswap", "eff_dense",
                                            "eff_swapab", "eff_wgmma", "eff_wgswap", "eff_wgws", "eff_wgwsswap"};
        static const int steps[] = {50, 71, 84, 119, 141, 200};
        double cur = fit_objective(&d, &card, hold, fl, ft);
        for (int round = 0; round < fit_rounds; round++) {
            for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
                int base = *fields[f], bestv = base;
                for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
                    int v = (int)((long long)base * steps[s] / 100);
                    if (v < 1 || v == base) continue;
                    if (f >= 11 && v > 100) continue;
                    *fields[f] = v;
                    double o = fit_objective(&d, &card, hold, fl, ft);
                    if (o < cur - 1e-9) { cur = o; bestv = v; }
                }
                *fields[f] = bestv;
            }
            printf("fit round %d: objective %.4f:", round, cur);
            for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) printf(" %s=%d", names[f], *fields[f]);
            printf("\n");
        }
        free(fl);
        free(ft);
    }

    series old_all = {0}, new_all = {0}, old_mt[MAXMT] = {{0}}, new_mt[MAXMT] = {{0}};
    series old_ho = {0}, new_ho = {0}, old_tr = {0}, new_tr = {0};
    int untimed = 0, winner_pick = 0, pruned_total = 0, kept_total = 0, winner_kept = 0, timed_kept_best = 0;
    kt_candidate *list = malloc((size_t)nc * sizeof *list);
    int *idx = malloc((size_t)nc * sizeof *idx), *keep = malloc((size_t)nc * sizeof *keep);
    double *tt = malloc((size_t)nc * sizeof *tt);
    if (!quiet) printf("%-36s %-56s %9s %-56s %9s %8s %8s\n", "problem", "best", "us", "law pick", "us", "regret", "old");
    for (int i = 0; i < np; i++) {
        problem *p = &P[i];
        kt_problem kp = gemm_problem(p);
        /* over all candidates */
        for (int j = 0; j < nc; j++) list[j] = C[j].c;
        int all = law_gemm_pick_card(&d, &card, list, nc, &kp);
        if (all >= 0 && timed(p, C[all].name) < 0) untimed++;
        if (do_prune) {
            int kept = law_gemm_prune_card(&d, &card, list, nc, &kp, all, keep);
            pruned_total += nc;
            kept_total += kept;
            int w = cand_find(p->winner);
            if (w >= 0 && keep[w]) winner_kept++;
            else if (!quiet) printf("  prune drops the winner %s of %s\n", p->winner, p->key);
            /* the fastest timed candidate among those kept vs the best timed */
            double bk = -1, ba = -1;
            for (int j = 0; j < nc; j++) {
                double u = timed(p, C[j].name);
                if (u <= 0) continue;
                if (ba < 0 || u < ba) ba = u;
                if (keep[j] && (bk < 0 || u < bk)) bk = u;
            }
            if (bk > 0 && bk <= ba * 1.02) timed_kept_best++;
        }
        /* over the timed ones */
        int m = 0;
        double best = -1;
        for (int j = 0; j < nc; j++) {
            double u = timed(p, C[j].name);
            if (u <= 0) continue;
            idx[m] = j;
            tt[m] = u;
            list[m++] = C[j].c;
            if (best < 0 || u < best) best = u;
        }
        int pick = law_gemm_pick_card(&d, &card, list, m, &kp);
        if (explain && strcmp(explain, p->key) == 0) {
            for (int a = 0; a < m; a++)        /* by measured time */
                for (int b2 = a + 1; b2 < m; b2++)
                    if (tt[b2] < tt[a]) {
                        double x = tt[a]; tt[a] = tt[b2]; tt[b2] = x;
                        int y = idx[a]; idx[a] = idx[b2]; idx[b2] = y;
                        kt_candidate z = list[a]; list[a] = list[b2]; list[b2] = z;
                    }
            pick = law_gemm_pick_card(&d, &card, list, m, &kp);
            for (int a = 0; a < m; a++)
                printf("  explain %9.3f us measured %9.3f us law  %s%s\n", tt[a],
                       law_gemm_estimate_ps(&d, &card, &list[a], &kp) / 1e6, C[idx[a]].name + 8, a == pick ? "  <- pick" : "");
        }
        double reg = pick >= 0 ? tt[pick] / best - 1 : NAN;
        if (pick >= 0 && strcmp(C[idx[pick]].name, p->winner) == 0) winner_pick++;
        const char *bname = p->winner;
        for (int j = 0; j < m; j++) if (tt[j] == best) bname = C[idx[j]].name;
        if (!quiet)
            printf("%-36s %-56s %9.3f %-56s %9.3f %+7.1f%% %+7.1f%%%s\n", p->key, bname + 8, best,
                   pick >= 0 ? C[idx[pick]].name + 8 : "-", pick >= 0 ? tt[pick] : NAN, 100 * reg,
                   100 * p->old_regret, all >= 0 && all != (pick >= 0 ? idx[pick] : -1) ? "  (pick over all differs)" : "");
        if (isnan(reg)) continue;
        push(&old_all, p->old_regret);
        push(&new_all, reg);
        for (int j = 0; j < nmt; j++)
            if (p->mt & (1u << j)) { push(&old_mt[j], p->old_regret); push(&new_mt[j], reg); }
        if (hold) {
            if ((p->mt & ~hold) == 0) { push(&old_ho, p->old_regret); push(&new_ho, reg); }
            else { push(&old_tr, p->old_regret); push(&new_tr, reg); }
        }
    }
    printf("\nregret (law_time / best_time - 1) over the timed candidates:\n");
    char label[160];
    for (int j = 0; j < nmt; j++) {
        snprintf(label, sizeof label, "old %s tp%d", mt_model[j], mt_tp[j]);
        summary(label, &old_mt[j]);
        snprintf(label, sizeof label, "new %s tp%d", mt_model[j], mt_tp[j]);
        summary(label, &new_mt[j]);
    }
    summary("old overall", &old_all);
    summary("new overall", &new_all);
    if (hold) {
        snprintf(label, sizeof label, "old held out (%s)", holdout);
        summary(label, &old_ho);
        snprintf(label, sizeof label, "new held out (%s)", holdout);
        summary(label, &new_ho);
        summary("new fitted-on", &new_tr);
    }
    printf("law pick = the sweep's winner: %d of %d; pick over all candidates untimed: %d of %d\n",
           winner_pick, np, untimed, np);
    if (do_prune)
        printf("prune: kept %d of %d (%.1f%%); winner kept in %d of %d; best timed kept (within 2%%) in %d of %d\n",
               kept_total, pruned_total, pruned_total ? 100.0 * kept_total / pruned_total : 0.0, winner_kept, np,
               timed_kept_best, np);
    free(list); free(idx); free(keep); free(tt);
    return 0;
}
