/* law_replay.c: an op's law replayed offline on the database a sweep measured into.
 *
 *   law_replay --db KTDB --op OP [--target sm_90a] [--holdout SUBSTR] [--worst N] [--units N]
 *
 * KTDB is a sweep's database (ktune.ktdb, or the ktune-nocode.ktdb a device run returns: the code
 * is not needed). Per problem key of OP measured on the target: the candidates are the ok kernels
 * timed for it (a kernel's latest coarse median, else its latest fine one), each made a kt_variant
 * from its row as libktrt makes it (kt_variant_from_row: its params and its occupancy from its
 * resources), and the law that libktrt runs (op->law_pick) picks among them. A key's regret is the
 * pick's time over the fastest's, less 1; pooled, the sum of the picks' times over the sum of the
 * fastest, less 1 (the tuner's figure, so a law changed since the sweep is measured on its
 * timings without a device). --holdout: keys containing SUBSTR are summed apart (a model the law
 * was not fitted on). --units: the compute units, where the database's device table has none. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include "law.h"
#include "op.h"
#include "target.h"

#define MAXC 512

typedef struct {
    kt_candidate c[MAXC];
    char names[MAXC][KT_OP_NAME_LEN];
    char classes[MAXC][32];
    double us[MAXC];
    int kind[MAXC];   /* 1 fine, 2 coarse: a coarse timing replaces a fine one */
    int n;
} key_set;

typedef struct {
    double law, best;
    int keys;
} tally;

typedef struct {
    double regret, best;
    char key[160], law[KT_OP_NAME_LEN];
} miss;

static int usage(void)
{
    fprintf(stderr, "usage: law_replay --db KTDB --op OP [--target T] [--holdout SUBSTR] [--worst N] [--units N]\n");
    return 2;
}

static int cmp_miss(const void *a, const void *b)
{
    const double x = ((const miss *)a)->regret, y = ((const miss *)b)->regret;
    return x < y ? 1 : x > y ? -1 : 0;
}

static void report(const char *what, const tally *t)
{
    if (t->keys == 0) { printf("%-10s no keys\n", what); return; }
    printf("%-10s %4d keys  pooled regret %+.2f%%  (law %.1f us, fastest %.1f us)\n", what, t->keys,
           100.0 * (t->law / t->best - 1.0), t->law, t->best);
}

/* The law's pick among one key's candidates, into the tallies. */
static int replay_key(const kt_op *op, const law_device *d, const char *key, key_set *s, const char *holdout,
                      tally *all, tally *held, miss *m, int *nm, int maxm)
{
    kt_problem p;
    char err[256];
    if (kt_problem_parse(key, &p, err, sizeof err) != 0) {
        fprintf(stderr, "law_replay: %s: %s (skipped)\n", key, err);
        return 0;
    }
    const int pick = op->law_pick(d, s->c, s->n, &p);
    if (pick < 0) {
        fprintf(stderr, "law_replay: %s: the law picks none of its %d candidates (skipped)\n", key, s->n);
        return 0;
    }
    double best = s->us[0];
    for (int i = 1; i < s->n; i++) if (s->us[i] < best) best = s->us[i];
    tally *t = holdout && strstr(key, holdout) ? held : all;
    t->law += s->us[pick];
    t->best += best;
    t->keys++;
    if (*nm < maxm) {
        miss *x = &m[(*nm)++];
        x->regret = s->us[pick] / best - 1.0;
        x->best = best;
        snprintf(x->key, sizeof x->key, "%s", key);
        snprintf(x->law, sizeof x->law, "%s", s->names[pick]);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *db_path = NULL, *op_name = NULL, *target = "sm_90a", *holdout = NULL;
    int worst = 10, units = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return usage();
        if (!strcmp(argv[i], "--db")) db_path = argv[++i];
        else if (!strcmp(argv[i], "--op")) op_name = argv[++i];
        else if (!strcmp(argv[i], "--target")) target = argv[++i];
        else if (!strcmp(argv[i], "--holdout")) holdout = argv[++i];
        else if (!strcmp(argv[i], "--worst")) worst = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--units")) units = atoi(argv[++i]);
        else return usage();
    }
    if (!db_path || !op_name) return usage();
    const kt_op *op = kt_op_find(op_name);
    if (!op || !op->law_pick) { fprintf(stderr, "law_replay: --op %s: no such op with a law\n", op_name); return 2; }
    const kt_target *t = kt_target_find(target);
    if (!t) { fprintf(stderr, "law_replay: --target %s: unknown target\n", target); return 2; }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "law_replay: --db %s: %s\n", db_path, db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return 1;
    }
    int rc = 1;
    sqlite3_stmt *st = NULL;
    key_set *s = calloc(1, sizeof *s);
    const int maxm = 65536;
    miss *m = calloc((size_t)maxm, sizeof *m);
    if (!s || !m) { fprintf(stderr, "law_replay: out of memory\n"); goto done; }
    if (units <= 0 && sqlite3_prepare_v2(db, "SELECT compute_units FROM device WHERE target = ?1 LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) units = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
        st = NULL;
    }
    if (units <= 0) { fprintf(stderr, "law_replay: %s: no device of target %s (give --units)\n", db_path, target); goto done; }
    const law_device dev = law_device_from_target(t, units);
    const char *sql =
        "SELECT m.problem_key, m.kernel, m.median_us, m.kind, k.params, k.template, k.threads, k.waves_per_simd, k.regs, "
        "k.lds_bytes FROM measurement m JOIN kernel k ON k.name = m.kernel AND k.code_hash = m.code_hash AND k.target = ?1 "
        "WHERE m.status = 'ok' AND m.kind IN ('coarse', 'fine') AND m.median_us > 0 AND m.problem_key LIKE ?2 "
        "AND k.status = 'ok' ORDER BY m.problem_key, m.id";
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "law_replay: %s: %s (not a sweep's database?)\n", db_path, sqlite3_errmsg(db));
        goto done;
    }
    char like[96];
    snprintf(like, sizeof like, "%s %%", op_name);
    sqlite3_bind_text(st, 1, target, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, like, -1, SQLITE_TRANSIENT);
    tally all = {0}, held = {0};
    int nm = 0;
    char key[160] = "";
    for (;;) {
        const int step = sqlite3_step(st);
        const char *k = step == SQLITE_ROW ? (const char *)sqlite3_column_text(st, 0) : NULL;
        if (step != SQLITE_ROW || strcmp(k, key) != 0) {
            if (s->n > 0) replay_key(op, &dev, key, s, holdout, &all, &held, m, &nm, maxm);
            s->n = 0;
            if (step != SQLITE_ROW) break;
            snprintf(key, sizeof key, "%s", k);
        }
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const int kind = strcmp((const char *)sqlite3_column_text(st, 3), "coarse") == 0 ? 2 : 1;
        int i = 0;
        while (i < s->n && strcmp(s->names[i], name) != 0) i++;
        if (i < s->n) {   /* timed again: the later pass of the same or a coarser kind stands */
            if (kind >= s->kind[i]) { s->us[i] = sqlite3_column_double(st, 2); s->kind[i] = kind; }
            continue;
        }
        if (s->n == MAXC) continue;
        kt_row_resources r = {sqlite3_column_int(st, 6), sqlite3_column_int(st, 7), sqlite3_column_int(st, 8),
                              sqlite3_column_int(st, 9)};
        kt_candidate *c = &s->c[i];
        memset(c, 0, sizeof *c);
        char dtype[32], err[256];
        const char *params = (const char *)sqlite3_column_text(st, 4);
        if (kt_variant_from_row(op, t, params, &r, &c->v, dtype, sizeof dtype, err, sizeof err) != 0) {
            fprintf(stderr, "law_replay: %s: %s (skipped)\n", name, err);
            continue;
        }
        snprintf(s->names[i], sizeof s->names[i], "%s", name);
        kt_law_class(params, (const char *)sqlite3_column_text(st, 5), s->classes[i], sizeof s->classes[i]);
        c->name = s->names[i];
        c->law_class = s->classes[i];
        c->threads = r.threads;
        c->regs = r.regs;
        c->lds_bytes = r.lds_bytes;
        c->waves_per_simd = r.waves_per_simd;
        s->us[i] = sqlite3_column_double(st, 2);
        s->kind[i] = kind;
        s->n++;
    }
    printf("law_replay: %s on %s (%d compute units), %s\n", op_name, target, units, db_path);
    report(holdout ? "fitted" : "all", &all);
    if (holdout) {
        char what[64];
        snprintf(what, sizeof what, "'%s'", holdout);
        report(what, &held);
    }
    qsort(m, (size_t)nm, sizeof *m, cmp_miss);
    for (int i = 0; i < nm && i < worst; i++)
        printf("  %+6.1f%%  %8.1f us  %s  law %s\n", 100.0 * m[i].regret, m[i].best, m[i].key, m[i].law);
    rc = all.keys + held.keys > 0 ? 0 : 1;
    if (rc) fprintf(stderr, "law_replay: %s: no measured %s keys on %s\n", db_path, op_name, target);
done:
    sqlite3_finalize(st);
    sqlite3_close(db);
    free(s);
    free(m);
    return rc;
}
