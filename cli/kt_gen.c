/* kt gen: recipe -> compiled, analysed kernels in a database, for one or more targets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "build/pipeline.h"
#include "build/target.h"
#include "cli.h"

static void gen_usage(FILE *f)
{
    fprintf(f, "usage: kt gen --recipe FILE --target T[,T...]|all --db FILE [-j N] [--flags \"...\"] [--cache DIR]\n"
               "              [--sample N] [--quiet]\n\n"
               "  --recipe FILE  a recipe beside its template, e.g. templates/gemm/dense.lua\n"
               "  --target T     one or more of:");
    for (int i = 0; i < kt_target_count(); i++) fprintf(f, " %s", kt_target_at(i)->name);
    fprintf(f, "; 'all' means every target\n"
               "  --db FILE      the .ktdb to create or update\n"
               "  -j N           parallel compiles (default: the cores available)\n"
               "  --flags \"..\"   extra compiler flags (part of the cache key)\n"
               "  --cache DIR    compile cache (default $KT_CACHE, else out/cache beside templates/)\n"
               "  --sample N     build N of the admitted variants, evenly spaced (tests); retires nothing\n");
}

int kt_cmd_targets(int argc, char **argv)
{
    printf("%-8s %-7s %-5s %-11s %-14s %s\n", "target", "vendor", "wave", "mma", "lds/workgroup", "prelude");
    for (int i = 0; i < kt_target_count(); i++) {
        const kt_target *t = kt_target_at(i);
        printf("%-8s %-7s %-5d %-11s %-14d %s\n", t->name, t->vendor == KT_VENDOR_AMD ? "amd" : "nvidia",
               t->wave_size, t->mma, t->lds_per_workgroup, t->prelude);
    }
    return 0;
}

int kt_cmd_gen(int argc, char **argv)
{
    kt_gen_options o;
    memset(&o, 0, sizeof o);
    const char *targets = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { gen_usage(stdout); return 0; }
        if (strcmp(a, "--quiet") == 0) { o.quiet = 1; continue; }
        if (!val) { fprintf(stderr, "kt gen: %s needs a value\n", a); gen_usage(stderr); return 2; }
        if (strcmp(a, "--recipe") == 0) o.recipe = val;
        else if (strcmp(a, "--target") == 0) targets = val;
        else if (strcmp(a, "--db") == 0) o.db_path = val;
        else if (strcmp(a, "--cache") == 0) o.cache_dir = val;
        else if (strcmp(a, "--flags") == 0) o.extra_flags = val;
        else if (strcmp(a, "--sample") == 0) {
            char *end;
            long s = strtol(val, &end, 10);
            if (*end || s < 1 || s > 100000) { fprintf(stderr, "kt gen: --sample %s: expected a count 1..100000\n", val); return 2; }
            o.sample = (int)s;
        } else if (strcmp(a, "-j") == 0) {
            char *end;
            long j = strtol(val, &end, 10);
            if (*end || j < 1 || j > 1024) { fprintf(stderr, "kt gen: -j %s: expected a count 1..1024\n", val); return 2; }
            o.jobs = (int)j;
        } else { fprintf(stderr, "kt gen: unknown option '%s'\n", a); gen_usage(stderr); return 2; }
        i++;
    }
    if (!o.recipe || !targets || !o.db_path) {
        fprintf(stderr, "kt gen: --recipe, --target and --db are required\n");
        gen_usage(stderr);
        return 2;
    }
    /* validate every target name before compiling anything */
    const kt_target *list[16];
    int n = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", targets);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (strcmp(tok, "all") == 0) {
            for (int i = 0; i < kt_target_count() && n < 16; i++) list[n++] = kt_target_at(i);
            continue;
        }
        const kt_target *t = kt_target_find(tok);
        if (!t) {
            fprintf(stderr, "kt gen: unknown target '%s' (known:", tok);
            for (int i = 0; i < kt_target_count(); i++) fprintf(stderr, " %s", kt_target_at(i)->name);
            fprintf(stderr, ")\n");
            return 2;
        }
        if (n < 16) list[n++] = t;
    }
    int failures = 0;
    for (int i = 0; i < n; i++) {
        char err[2048];
        if (pipeline_gen_and_print(&o, list[i]->name, err, sizeof err) != 0) {
            fprintf(stderr, "kt gen: %s: %s\n", list[i]->name, err);
            failures++;
        }
    }
    return failures ? 1 : 0;
}
