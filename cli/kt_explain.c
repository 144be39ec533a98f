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
    fprintf(f, "usage: kt explain --db FILE --op gemm --dtype bf16|fp16 --n N --k K --m M [--device KEY]\n"
               "                  [--workspace BYTES]\n\n"
               "  --db FILE         a tuned database (.ktdb), opened read-only\n"
               "  --device KEY      the device to choose for, e.g. sm_90/132/0x2335 (default: the database's\n"
               "                    one device with selections, preferring a real device to a '<target>/law'\n"
               "                    one; else its latest run's device; else its only device)\n"
               "  --workspace BYTES split-K workspace a launch may use (default: what libktrt allocates, the\n"
               "                    largest any selection needs)\n\n"
               "Prints the problem key, path=exact|bucket|law|refused, the kernel, the reason, and the timings\n"
               "measured for that key on that device, fastest first. Exit 0 when served, 3 when refused, 1 when\n"
               "the database cannot be used, 2 for a usage error.\n");
}

/* A positive int option value; -1 when it is not one. */
static int positive(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return end != s && !*end && v >= 1 && v <= 0x7fffffffL ? (int)v : -1;
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
    const char *db = NULL, *op = NULL, *dtype = NULL, *device = NULL, *nt = NULL, *kt = NULL, *mt = NULL, *wst = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { explain_usage(stdout); return 0; }
        const char **slot = !strcmp(a, "--db") ? &db : !strcmp(a, "--op") ? &op : !strcmp(a, "--dtype") ? &dtype :
                            !strcmp(a, "--device") ? &device : !strcmp(a, "--n") ? &nt : !strcmp(a, "--k") ? &kt :
                            !strcmp(a, "--m") ? &mt : !strcmp(a, "--workspace") ? &wst : NULL;
        if (!slot) { fprintf(stderr, "kt explain: unknown option '%s'\n", a); explain_usage(stderr); return 2; }
        if (!val) { fprintf(stderr, "kt explain: %s needs a value\n", a); return 2; }
        *slot = val;
        i++;
    }
    if (!db || !op || !dtype || !nt || !kt || !mt) {
        fprintf(stderr, "kt explain: --db, --op, --dtype, --n, --k and --m are required\n");
        explain_usage(stderr);
        return 2;
    }
    if (strcmp(op, "gemm") != 0) { fprintf(stderr, "kt explain: --op %s: only gemm is served\n", op); return 2; }
    if (ktrt_dtype_index(dtype) < 0) { fprintf(stderr, "kt explain: --dtype %s: expected bf16 or fp16\n", dtype); return 2; }
    int n = positive(nt), k = positive(kt), m = positive(mt);
    if (n < 0 || k < 0 || m < 0) {
        fprintf(stderr, "kt explain: --n %s --k %s --m %s: each must be a whole number >= 1\n", nt, kt, mt);
        return 2;
    }
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
    if (ws < 0) ws = ktrt_catalog_workspace_bytes(&cat, dev.target, dev.compute_units);

    ktrt_query q = {&dev, dtype, m, n, k, ws};
    ktrt_pick p;
    int rc = ktrt_select_gemm(&cat, &q, &p);
    if (rc == KT_EINVAL) { fprintf(stderr, "kt explain: %s\n", p.choice.reason); status = 2; goto done; }
    printf("problem: %s (m=%d)\n", p.choice.problem_key, m);
    printf("device: %s (%s, %d compute units)\n", dev.key, dev.target->name, dev.compute_units);
    printf("path=%s\n", p.choice.path);
    printf("kernel: %s\n", p.choice.kernel[0] ? p.choice.kernel : "-");
    if (rc == KT_OK) {
        printf("splitk: %d\n", p.choice.splitk);
        if (p.choice.tuned_us > 0) printf("tuned_us: %.3f\n", p.choice.tuned_us);
    }
    printf("reason: %s\n", p.choice.reason);
    if (p.other_device[0])
        printf("notice: tuned on %s, not on this device: tune on it for exact picks\n", p.other_device);
    printf("workspace: %lld bytes\n", ws);
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
