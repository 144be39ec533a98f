/* kt explain: which kernel libktrt would serve for one problem on one device, by which path of the
 * selection chain and why, and what was measured for that key: the same choice code as a launch
 * (runtime/ktrt_select.c), with no GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "db/db_read.h"
#include "runtime/ktrt_select.h"

static void explain_usage(FILE *f)
{
    fprintf(f, "usage: kt explain --db FILE --op OP --dtype DTYPE --<dim> N ... [--device KEY] [--workspace BYTES]\n\n"
               "  --db FILE         a tuned database (.ktdb), opened read-only\n"
               "  --op OP           the op family; its dimensions, each given as --<name> N:\n");
    for (int i = 0; i < kt_op_count(); i++) {
        const kt_op *op = kt_op_at(i);
        fprintf(f, "                      %-12s", op->name);
        for (int d = 0; d < op->ndims; d++) fprintf(f, " --%s N", op->dims[d].name);
        fprintf(f, "   (dtype");
        for (int t = 0; t < op->ndtypes; t++) fprintf(f, "%s%s", t ? "|" : " ", op->dtypes[t]);
        fprintf(f, ")\n");
    }
    fprintf(f, "  --device KEY      the device to choose for, e.g. sm_90/132/0x2335 (default: the database's\n"
               "                    one device with selections, preferring a real device to a '<target>/law'\n"
               "                    one; else its latest run's device; else its only device)\n"
               "  --workspace BYTES the op's first workspace buffer a launch may use (default: what libktrt\n"
               "                    allocates, the largest any selection needs)\n\n"
               "Prints the problem key, path=exact|bucket|law|refused, the kernel, the reason, and the timings\n"
               "measured for that key on that device, fastest first. Exit 0 when served, 3 when refused, 1 when\n"
               "the database cannot be used, 2 for a usage error.\n");
}

/* An int option value >= lo; -1 when it is not one. */
static int at_least(const char *s, int lo)
{
    char *end;
    long v = strtol(s, &end, 10);
    return end != s && !*end && v >= lo && v <= 0x7fffffffL ? (int)v : -1;
}

/* The device when --device is not given (see the usage text). 0, or 1 with a message. */
static int default_device(db_reader *r, const ktrt_catalog *cat, char *key, size_t len)
{
    char err[768];
    char keys[8][64];
    int n = db_read_selection_devices(r, keys, 8, err, sizeof err);
    if (n < 0) return fprintf(stderr, "kt explain: %s\n", err), 1;
    /* a '<target>/law' pseudo-device only when no real device has selections */
    int real = 0, last_real = -1;
    for (int i = 0; i < n && i < 8; i++) {
        size_t kl = strlen(keys[i]);
        if (kl < 4 || strcmp(keys[i] + kl - 4, "/law") != 0) real++, last_real = i;
    }
    if (n == 1) return snprintf(key, len, "%s", keys[0]), 0;
    if (real == 1) return snprintf(key, len, "%s", keys[last_real]), 0;
    if (n > 1) {
        fprintf(stderr, "kt explain: the database has selections for %d devices; pass --device, one of:\n", n);
        for (int i = 0; i < n && i < 8; i++) fprintf(stderr, "  %s\n", keys[i]);
        return 1;
    }
    int found = db_read_latest_run_device(r, key, len, err, sizeof err);
    if (found < 0) return fprintf(stderr, "kt explain: %s\n", err), 1;
    if (found) return 0;
    const ktrt_layer *l = &cat->layers[0];
    if (l->ndevices == 1) return snprintf(key, len, "%s", l->devices[0].key), 0;
    fprintf(stderr, "kt explain: %s: no selection, run or single device row names a device; pass --device "
                    "<arch>/<compute units>/<pci id>, e.g. sm_90/132/0x2335\n", l->path);
    return 1;
}

static void print_us(const char *label, double v)
{
    if (isnan(v)) printf(" %s=-", label);
    else printf(" %s=%.3f", label, v);
}

static int print_selection(void *ctx, const db_read_selection *s)
{
    printf("selection: kernel=%s source=%s", s->kernel, s->source);
    print_us("time_us", s->time_us);
    printf(" decided_by=%s law=%s", s->decided_by[0] ? s->decided_by : "-", s->law_kernel[0] ? s->law_kernel : "-");
    print_us("law_us", s->law_us);
    if (isnan(s->regret)) printf(" regret=-\n");
    else printf(" regret=%.4f\n", s->regret);
    return 0;
}

static int print_timing(void *ctx, const db_read_measurement *m)
{
    (*(int *)ctx)++;
    printf("  %s %s %s", m->kernel, m->kind, m->status);
    print_us("median_us", m->median_us);
    print_us("min_us", m->min_us);
    print_us("max_us", m->max_us);
    if (m->verify_status[0]) printf(" verify=%s", m->verify_status);
    if (!isnan(m->verify_error)) printf(" error=%.3e", m->verify_error);
    else if (!isnan(m->error)) printf(" error=%.3e", m->error);
    if (m->detail[0]) printf(" detail=\"%s\"", m->detail);
    printf("\n");
    return 0;
}

int kt_cmd_explain(int argc, char **argv)
{
    const char *db = NULL, *opname = NULL, *dtype = NULL, *device = NULL, *wst = NULL;
    const char *dim_name[16], *dim_text[16];
    int ndim_args = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { explain_usage(stdout); return 0; }
        if (strncmp(a, "--", 2) != 0) { fprintf(stderr, "kt explain: unexpected '%s'\n", a); explain_usage(stderr); return 2; }
        if (!val) { fprintf(stderr, "kt explain: %s needs a value\n", a); return 2; }
        const char **slot = !strcmp(a, "--db") ? &db : !strcmp(a, "--op") ? &opname : !strcmp(a, "--dtype") ? &dtype :
                            !strcmp(a, "--device") ? &device : !strcmp(a, "--workspace") ? &wst : NULL;
        if (slot) *slot = val;
        else if (ndim_args < 16) { dim_name[ndim_args] = a + 2; dim_text[ndim_args++] = val; }
        else { fprintf(stderr, "kt explain: too many options\n"); return 2; }
        i++;
    }
    if (!db || !opname || !dtype) {
        fprintf(stderr, "kt explain: --db, --op and --dtype are required, and the op's dimensions\n");
        explain_usage(stderr);
        return 2;
    }
    const kt_op *op = kt_op_find(opname);
    if (!op) { fprintf(stderr, "kt explain: --op %s: not an op of this build\n", opname); explain_usage(stderr); return 2; }
    kt_problem prob;
    memset(&prob, 0, sizeof prob);
    prob.op = op;
    prob.dtype = kt_op_dtype_index(op, dtype);
    if (prob.dtype < 0) {
        fprintf(stderr, "kt explain: --dtype %s: %s takes", dtype, op->name);
        for (int t = 0; t < op->ndtypes; t++) fprintf(stderr, " %s", op->dtypes[t]);
        fprintf(stderr, "\n");
        return 2;
    }
    int given[KT_OP_MAX_DIMS] = {0};
    for (int j = 0; j < ndim_args; j++) {
        int d = -1;
        for (int i = 0; i < op->ndims; i++)
            if (strcmp(op->dims[i].name, dim_name[j]) == 0) d = i;
        if (d < 0) { fprintf(stderr, "kt explain: unknown option '--%s' (%s has no such dimension)\n", dim_name[j], op->name); return 2; }
        int lo = kt_op_dim_min(op, d), v = at_least(dim_text[j], lo);
        if (v < 0) { fprintf(stderr, "kt explain: --%s %s: must be a whole number >= %d\n", dim_name[j], dim_text[j], lo); return 2; }
        prob.dim[d] = v;
        given[d] = 1;
    }
    for (int i = 0; i < op->ndims; i++)
        if (!given[i]) { fprintf(stderr, "kt explain: --%s is required for --op %s\n", op->dims[i].name, op->name); return 2; }
    long long ws = -1;
    if (wst) {
        char *end;
        ws = strtoll(wst, &end, 10);
        if (end == wst || *end || ws < 0) { fprintf(stderr, "kt explain: --workspace %s: expected bytes >= 0\n", wst); return 2; }
    }

    char err[1024];
    db_reader *r = NULL;
    ktrt_catalog cat = {NULL, 0};
    int status = 1;
    if (db_read_open(db, &r, err, sizeof err) || ktrt_catalog_add(&cat, db, "caller", err, sizeof err)) {
        fprintf(stderr, "kt explain: %s\n", err);
        goto done;
    }
    char key[KTRT_KEY_LEN];
    if (device) snprintf(key, sizeof key, "%s", device);
    else if (default_device(r, &cat, key, sizeof key)) goto done;
    ktrt_device dev;
    if (ktrt_device_from_key(&cat, key, &dev, err, sizeof err)) {
        fprintf(stderr, "kt explain: %s\n", err);
        status = device ? 2 : 1;
        goto done;
    }
    if (ktrt_catalog_check_target(&cat, dev.target, err, sizeof err)) {
        fprintf(stderr, "kt explain: %s (device %s)\n", err, dev.key);
        goto done;
    }
    ktrt_op_query q;
    memset(&q, 0, sizeof q);
    q.device = &dev;
    q.p = prob;
    for (int i = 0; i < op->nworkspaces; i++)
        q.workspace[i] = ktrt_catalog_workspace(&cat, dev.target, dev.compute_units, op, i);
    if (ws >= 0 && op->nworkspaces > 0) q.workspace[0] = ws;
    ktrt_pick p;
    int rc = ktrt_select(&cat, &q, &p);
    if (rc == KT_EINVAL) { fprintf(stderr, "kt explain: %s\n", p.choice.reason); status = 2; goto done; }
    /* the key, then the query's actual value of every bucketed dimension: "(m=7)", "(q=1 batch=3 ctx=900)" */
    printf("problem: %s", p.choice.problem_key);
    for (int d = 0, first = 1; d < op->ndims; d++)
        if (op->dims[d].bucketed) printf("%s%s=%lld", first ? " (" : " ", op->dims[d].name, prob.dim[d]), first = 0;
    printf("%s\n", kt_op_bucketed_dim(op) >= 0 ? ")" : "");
    printf("device: %s (%s, %d compute units)\n", dev.key, dev.target->name, dev.compute_units);
    printf("path=%s\n", p.choice.path);
    printf("kernel: %s\n", p.choice.kernel[0] ? p.choice.kernel : "-");
    if (rc == KT_OK) {
        if (p.choice.splitk >= 0) printf("%s: %d\n", op->split_label ? op->split_label : "splitk", p.choice.splitk);
        if (p.choice.tuned_us > 0) printf("tuned_us: %.3f\n", p.choice.tuned_us);
    }
    printf("reason: %s\n", p.choice.reason);
    if (p.other_device[0])
        printf("notice: tuned on %s, not on this device: tune on it for exact picks\n", p.other_device);
    for (int i = 0; i < op->nworkspaces; i++) printf("workspace: %lld bytes (%s)\n", q.workspace[i], op->workspace_names[i]);
    printf("db: %s\n", db);
    if (db_read_selections(r, dev.key, p.choice.problem_key, print_selection, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "kt explain: %s\n", err);
        goto done;
    }
    int shown = 0;
    printf("measured on %s for this key, fastest first:\n", dev.key);
    if (db_read_timings(r, dev.key, p.choice.problem_key, print_timing, &shown, err, sizeof err) < 0) {
        fprintf(stderr, "kt explain: %s\n", err);
        goto done;
    }
    if (!shown) printf("  (nothing)\n");
    status = rc == KT_OK ? 0 : 3;
done:
    ktrt_catalog_free(&cat);
    db_read_close(r);
    return status;
}
