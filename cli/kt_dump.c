/* kt dump: a database as stable, diffable text. Rows are sorted by their keys and numbers (not by
 * insertion ids), numbers have fixed precision, NULL is "-", strings with spaces are quoted, and
 * only runs carry timestamps (UTC, one format), so `diff <(kt dump --db a) <(kt dump --db b)` shows
 * what two tunings decided differently rather than when they ran. Code objects are not dumped:
 * their hash stands for them. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "runtime/op.h"
#include "db/db_read.h"

#define DUMP_HASH_CHARS 16   /* enough to tell code objects apart in a diff */

static void dump_usage(FILE *f)
{
    fprintf(f, "usage: kt dump --db FILE\n\n"
               "Writes the database's kernels (counts), devices, runs, problems, passes with their control\n"
               "spread and timings, verifications and selections as sorted text lines to stdout. Opens the\n"
               "file read-only. Exit 0, or 1 when the database cannot be used.\n");
}

/* s as one token: bare when it has no space, quote, backslash or control character, else quoted
 * with \" \\ \n \t escapes. Empty text is "". */
static void put_text(const char *s)
{
    int bare = s[0] != 0;
    for (const char *p = s; *p && bare; p++)
        if (*p == ' ' || *p == '"' || *p == '\\' || (unsigned char)*p < 0x20 || *p == '=') bare = 0;
    if (bare) { fputs(s, stdout); return; }
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') printf("\\%c", *p);
        else if (*p == '\n') fputs("\\n", stdout);
        else if (*p == '\t') fputs("\\t", stdout);
        else if (*p < 0x20) printf("\\x%02x", *p);
        else putchar(*p);
    }
    putchar('"');
}

static void field(const char *name, const char *s)
{
    printf(" %s=", name);
    if (s[0]) put_text(s);
    else fputs("-", stdout);
}

static void field_hash(const char *name, const char *s) { printf(" %s=%.*s", name, DUMP_HASH_CHARS, s[0] ? s : "-"); }

static void field_num(const char *name, double v, const char *fmt)
{
    printf(" %s=", name);
    if (isnan(v)) fputs("-", stdout);
    else printf(fmt, v);
}

static void field_int(const char *name, long long v)
{
    if (v < 0) printf(" %s=-", name);
    else printf(" %s=%lld", name, v);
}

static int kernel_count(void *ctx, const db_read_kernel_count *c)
{
    printf("kernels target=%s ops=", c->target);
    put_text(c->ops);
    printf(" status=%s count=%d\n", c->status, c->count);
    return 0;
}

static int device(void *ctx, const db_read_device *d)
{
    printf("device %s target=%s arch=%s cus=%d", d->key, d->target, d->arch, d->compute_units);
    if (d->pci_device_id < 0) printf(" pci=-");
    else printf(" pci=0x%04x", (unsigned)d->pci_device_id);
    field_int("l2", d->l2_bytes);
    field("name", d->name);
    printf("\n");
    return 0;
}

static int run(void *ctx, const db_read_run *r)
{
    printf("run %lld device=%s target=%s mode=%s status=%s", r->id, r->device_key, r->target, r->mode, r->status);
    field("model", r->model);
    printf(" tp=%d gpus=%d", r->tp, r->gpus);
    field_num("noise_floor", r->noise_floor, "%.4f");
    field("started", r->started_at);
    field("finished", r->finished_at);
    field("args", r->args);
    field("note", r->note);
    printf("\n");
    return 0;
}

static int problem(void *ctx, const db_read_problem *p)
{
    printf("problem ");
    put_text(p->key);
    printf(" op=%s dtype=%s", p->op, p->dtype);
    /* the dimensions as the op's descriptor reads them from the key (a key it cannot read: none) */
    kt_problem pr;
    char why[160];
    if (kt_problem_parse(p->key, &pr, why, sizeof why) == 0)
        for (int i = 0; i < pr.op->ndims; i++) printf(" %s=%lld", pr.op->dims[i].name, pr.dim[i]);
    printf(" phase=%s\n", p->phase);
    return 0;
}

static int run_problem(void *ctx, const db_read_run_problem *p)
{
    printf("cover run=%lld problem=", p->run_id);
    put_text(p->problem_key);
    field("layers", p->layers);
    printf(" calls=%d\n", p->calls);
    return 0;
}

static void measurement_fields(const db_read_measurement *m)
{
    field("kernel", m->kernel);
    field_hash("code", m->code_hash);
    printf(" status=%s", m->status);
    field_num("median_us", m->median_us, "%.3f");
    field_num("min_us", m->min_us, "%.3f");
    field_num("max_us", m->max_us, "%.3f");
    field_num("error", m->error, "%.3e");
    field_int("reps", m->reps);
    field_int("launches", m->launches);
    field("detail", m->detail);
    printf("\n");
}

static int timing(void *ctx, const db_read_measurement *m)
{
    printf("  time");
    measurement_fields(m);
    return 0;
}

typedef struct dump_ctx {
    db_reader *r;
    char *err;
    size_t errlen;
} dump_ctx;

static int pass(void *ctx, const db_read_pass *p)
{
    dump_ctx *d = ctx;
    printf("pass device=%s problem=", p->device_key);
    put_text(p->problem_key);
    printf(" kind=%s run=%lld variants=%d rounds=%d cold=%d gpu=%d", p->kind, p->run_id, p->variants, p->rounds,
           p->cold, p->gpu);
    field_hash("control", p->control_hash);
    field_num("control_spread", p->control_spread, "%.4f");
    printf("\n");
    return db_read_pass_measurements(d->r, p->id, timing, NULL, d->err, d->errlen) < 0 ? -1 : 0;
}

static int unpassed(void *ctx, const db_read_measurement *m)
{
    printf("%s device=%s problem=", strcmp(m->kind, "verify") == 0 ? "verify" : "time-without-pass", m->device_key);
    put_text(m->problem_key);
    if (strcmp(m->kind, "verify") != 0) printf(" kind=%s", m->kind);
    printf(" run=%lld", m->run_id);
    measurement_fields(m);
    return 0;
}

static int selection(void *ctx, const db_read_selection *s)
{
    printf("selection device=%s problem=", s->device_key);
    put_text(s->problem_key);
    field("kernel", s->kernel);
    field_hash("code", s->code_hash);
    printf(" source=%s", s->source);
    field_num("time_us", s->time_us, "%.3f");
    field_num("error", s->error, "%.3e");
    field("law", s->law_kernel);
    field_num("law_us", s->law_us, "%.3f");
    field_num("regret", s->regret, "%.4f");
    field_num("noise_floor", s->noise_floor, "%.4f");
    field("decided_by", s->decided_by);
    field_int("run", s->run_id);
    printf("\n");
    return 0;
}

int kt_cmd_dump(int argc, char **argv)
{
    const char *db = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) { dump_usage(stdout); return 0; }
        if (strcmp(argv[i], "--db") == 0 && i + 1 < argc) { db = argv[++i]; continue; }
        fprintf(stderr, "kt dump: unknown option or missing value '%s'\n", argv[i]);
        dump_usage(stderr);
        return 2;
    }
    if (!db) { fprintf(stderr, "kt dump: --db is required\n"); dump_usage(stderr); return 2; }
    char err[1024] = "";
    db_reader *r = NULL;
    if (db_read_open(db, &r, err, sizeof err)) {
        fprintf(stderr, "kt dump: %s\n", err);
        return 1;
    }
    dump_ctx ctx = {r, err, sizeof err};
    printf("ktune-dump 1 schema %d\n", db_read_schema_version(r));
    int bad = db_read_kernel_counts(r, kernel_count, NULL, err, sizeof err) < 0 ||
              db_read_devices(r, device, NULL, err, sizeof err) < 0 ||
              db_read_runs(r, run, NULL, err, sizeof err) < 0 ||
              db_read_problems(r, problem, NULL, err, sizeof err) < 0 ||
              db_read_run_problems(r, run_problem, NULL, err, sizeof err) < 0 ||
              db_read_passes(r, pass, &ctx, err, sizeof err) != 0 ||
              db_read_unpassed_measurements(r, unpassed, NULL, err, sizeof err) < 0 ||
              db_read_selections(r, NULL, NULL, selection, NULL, err, sizeof err) < 0;
    db_read_close(r);
    if (bad) {
        fprintf(stderr, "kt dump: %s\n", err[0] ? err : "reading failed");
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
