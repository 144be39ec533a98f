/* pipeline.c: recipe -> variants -> cache/compile -> analysis -> database. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "analyze.h"
#include "closure.h"
#include "compile.h"
#include "file_io.h"
#include "db/db.h"
#include "db/db_tuner.h"
#include "gen/recipe.h"
#include "pipeline.h"
#include "sha256.h"
#include "toolchain.h"
#include "runtime/kt_env.h"

typedef struct pl_item {
    gen_variant *v;
    char key[65];
    char obj[1400];       /* cache/objects/<key>.co */
    char fail[1400];      /* cache/objects/<key>.fail: the compiler's message when it failed */
    int job;              /* index into jobs, -1 when not compiled this run */
    int state;            /* 0 stored already, 1 analyse, 2 failed, 3 stored but its params text changed */
} pl_item;

static double pl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pl_mkdirs(const char *path)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++)
        if (*p == '/') { *p = 0; if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1; *p = '/'; }
    return mkdir(buf, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

static void pl_count_excluded(kt_gen_summary *s, const char *reason)
{
    for (int i = 0; i < s->nexcluded_by; i++)
        if (strcmp(s->excluded_by[i].reason, reason) == 0) { s->excluded_by[i].count++; return; }
    if (s->nexcluded_by < KT_GEN_MAX_REASONS) {
        snprintf(s->excluded_by[s->nexcluded_by].reason, sizeof s->excluded_by[0].reason, "%s", reason);
        s->excluded_by[s->nexcluded_by++].count = 1;
    }
}

static void pl_tally(kt_gen_summary *s, const char *status, const char *reason, int waves, const char *name)
{
    if (strcmp(status, "ok") == 0) {
        s->ok++;
        s->waves_hist[waves < 0 ? 0 : waves >= KT_GEN_MAX_WAVES ? KT_GEN_MAX_WAVES - 1 : waves]++;
    } else if (strcmp(status, "excluded") == 0) {
        s->excluded++;
        pl_count_excluded(s, reason ? reason : "?");
    } else {
        s->failed++;
        if (!s->first_failure[0]) {
            const char *r = reason ? reason : "";
            const char *line = strstr(r, "error");
            if (!line) line = r;
            snprintf(s->first_failure, sizeof s->first_failure, "%s: %.*s", name, (int)strcspn(line, "\n"), line);
        }
    }
}

/* The cache key: what the compiler sees (instantiation source and every file it includes), what
 * it is asked for (target) and who answers (the toolchain fingerprint). */
static void pl_cache_key(const gen_variant *v, const char *closure, const kt_target *t, const char *fp, char key[65])
{
    sha256_ctx c;
    sha256_init(&c);
    const char *parts[5] = {"ktune-cache-v1", v->source, closure, t->name, fp};
    for (int i = 0; i < 5; i++) sha256_update(&c, parts[i], strlen(parts[i]) + 1);
    sha256_final_hex(&c, key);
}

/* The cache key covers what the compiler sees; the recipe's threads() and launch-time LDS are
 * declarations the analysis uses (occupancy, verdict), not compiler input. A row analysed with
 * other figures is stale although its key matches: 1 when the row agrees with v, 0 when not,
 * -1 on a database error. Other lds_bytes() figures enter no row (only the recipe's constraint). */
static int pl_declared_same(kt_db *db, const kt_target *t, const gen_variant *v, const db_kernel_brief *b,
                            char *err, size_t errlen)
{
    if (b->threads != v->threads) return 0;
    if (b->lds_bytes < 0) return 1;           /* no resources (failed): LDS entered nothing */
    void *code;
    size_t len;
    int lds, same = 0;
    char aerr[256];
    if (db_kernel_code(db, t->name, v->name, &code, &len, err, errlen) < 0) return -1;
    /* the row's lds_bytes is the object's static LDS plus what the launch provided */
    if (code && analyze_static_lds(t, code, len, v->name, &lds, aerr, sizeof aerr) == 0)
        same = lds + v->lds_dynamic == b->lds_bytes;
    free(code);
    return same;
}

static void pl_default_cache(const gen_space *sp, char *out, size_t n)
{
    const char *env = kt_env_get("KT_CACHE");
    if (env && *env) { snprintf(out, n, "%s", env); return; }
    /* the project's out/ beside templates/ */
    snprintf(out, n, "%s/../out/cache", sp->templates_root);
}

/* The recipe's companion kernels under the main one's verdict: a missing one fails the row, one
 * that spills excludes it (reason names the companion). */
static void pl_companions(const gen_space *sp, const kt_target *t, const void *code, size_t len, const char *name,
                          db_kernel_row *row, char *reason, size_t rlen)
{
    char list[sizeof sp->companions];
    snprintf(list, sizeof list, "%s", sp->companions);
    for (char *save = NULL, *sfx = strtok_r(list, ",", &save); sfx && strcmp(row->status, "failed") != 0;
         sfx = strtok_r(NULL, ",", &save)) {
        char cname[KT_KERNEL_NAME_MAX + 32], why[64], cerr[256];
        snprintf(cname, sizeof cname, "%s%s", name, sfx);
        if (analyze_companion(t, code, len, cname, why, sizeof why, cerr, sizeof cerr) != 0) {
            snprintf(reason, rlen, "companion %s: %s", sfx, cerr);
            row->status = "failed";
            row->reason = reason;
        } else if (why[0] && strcmp(row->status, "ok") == 0) {
            snprintf(reason, rlen, "%s (%s)", why, sfx);
            row->status = "excluded";
            row->reason = reason;
        }
    }
}

static int pl_store(kt_db *db, const gen_space *sp, const kt_target *t, const kt_toolchain *tc, pl_item *it,
                    kt_gen_summary *sum, char *err, size_t errlen)
{
    db_kernel_row row;
    memset(&row, 0, sizeof row);
    row.name = it->v->name; row.target = t->name; row.template_rel = sp->template_rel; row.recipe = sp->recipe_path;
    row.ops = sp->ops; row.params = it->v->params_json; row.threads = it->v->threads;
    row.fingerprint = tc->fingerprint; row.cache_key = it->key;
    char *code = NULL, *log = NULL, reason[4096], hash[65], aerr[512];
    size_t len = 0;
    kt_analysis an;
    if (it->state == 2) {
        size_t loglen;
        log = file_read_all(it->fail, 0, &loglen);
        snprintf(reason, sizeof reason, "compile failed: %s", log && *log ? log : "(no compiler output)");
        row.status = "failed";
        row.reason = reason;
    } else if (!(code = file_read_all(it->obj, 0, &len))) {
        snprintf(reason, sizeof reason, "code object %s unreadable: %s", it->obj, strerror(errno));
        row.status = "failed";
        row.reason = reason;
    } else if (analyze_code_object(t, code, len, it->obj, it->v->name, it->v->threads, it->v->lds_dynamic, &an, aerr, sizeof aerr) != 0) {
        snprintf(reason, sizeof reason, "%s: %s", it->obj, aerr);
        row.status = "failed";
        row.reason = reason;
    } else {
        sha256_hex(code, len, hash);
        row.status = an.status;
        row.reason = an.reason[0] ? an.reason : NULL;
        row.has_resources = 1;
        row.vgpr = an.res.vgpr; row.sgpr = an.res.sgpr; row.agpr = an.res.agpr; row.regs = an.regs;
        row.lds_bytes = an.res.lds_bytes + an.res.lds_dynamic_bytes; row.scratch_bytes = an.res.scratch_bytes;
        row.spills = an.res.vgpr_spills + an.res.sgpr_spills; row.waves_per_simd = an.waves;
        row.occupancy_limit = an.limit; row.isa = an.isa_json[0] ? an.isa_json : NULL;
        row.code_hash = hash; row.code = code; row.code_len = len;
        pl_companions(sp, t, code, len, it->v->name, &row, reason, sizeof reason);
    }
    int rc = db_kernel_put(db, &row, err, errlen);
    if (!rc) pl_tally(sum, row.status, row.reason, row.waves_per_simd, row.name);
    free(code);
    free(log);
    return rc;
}

/* Keeps `keep` of the space's variants, evenly spaced in the recipe's order (the first always). */
static void pl_sample(gen_space *sp, int keep)
{
    if (keep <= 0 || sp->nvariants <= keep) return;
    const int n = sp->nvariants;
    int w = 0;
    for (int i = 0; i < n; i++) {
        const int take = i == 0 || (long long)i * keep / n != (long long)(i - 1) * keep / n;
        if (!take) { free(sp->variants[i].source); continue; }
        if (w != i) sp->variants[w] = sp->variants[i];
        w++;
    }
    sp->nvariants = w;
}

/* Moves the variants keep() declines (a model's build: no problem of the run can use them) behind
 * the first nvariants, in order, their sources freed: still admitted by the recipe (retiring reads
 * their names), not built. Returns how many. */
static int pl_keep(gen_space *sp, const kt_gen_options *o, char *err, size_t errlen)
{
    const int n = sp->nvariants;
    if (!o->keep || n == 0) return 0;
    gen_variant *tmp = malloc((size_t)n * sizeof *tmp);
    unsigned char *kept = malloc((size_t)n);
    if (!tmp || !kept) {
        free(tmp);
        free(kept);
        return snprintf(err, errlen, "out of memory"), -1;
    }
    int w = 0;
    for (int i = 0; i < n; i++)
        if ((kept[i] = o->keep(o->keep_ctx, sp->ops, sp->variants[i].params_json) != 0)) tmp[w++] = sp->variants[i];
    for (int i = 0, d = w; i < n; i++) {
        if (kept[i]) continue;
        free(sp->variants[i].source);
        sp->variants[i].source = NULL;
        tmp[d++] = sp->variants[i];
    }
    memcpy(sp->variants, tmp, (size_t)n * sizeof *tmp);
    free(tmp);
    free(kept);
    sp->nvariants = w;
    return n - w;
}

/* A kernel this recipe built earlier but no longer admits (its axes or constraint changed) must
 * not stay dispatchable on code no current source produces. Names are C identifiers: no quoting. */
static int pl_retire_absent(kt_db *db, const gen_space *sp, int admitted, const kt_target *t, kt_gen_summary *sum,
                            char *err, size_t errlen)
{
    size_t cap = 3, used = 0;
    for (int i = 0; i < admitted; i++) cap += strlen(sp->variants[i].name) + 3;
    char *json = malloc(cap);
    if (!json) { snprintf(err, errlen, "out of memory"); return 1; }
    used += (size_t)snprintf(json, cap, "[");
    for (int i = 0; i < admitted; i++)
        used += (size_t)snprintf(json + used, cap - used, "%s\"%s\"", i ? "," : "", sp->variants[i].name);
    snprintf(json + used, cap - used, "]");
    int rc = db_kernel_retire_absent(db, t->name, sp->template_rel, sp->kernel, json, &sum->retired, err, errlen);
    free(json);
    return rc;
}

int pipeline_gen(const kt_gen_options *o, const kt_target *t, kt_gen_summary *sum, char *err, size_t errlen)
{
    double t0 = pl_now();
    gen_space sp;
    kt_toolchain tc;
    kt_db *db = NULL;
    pl_item *items = NULL;
    build_job *jobs = NULL;
    int rc = 1, njobs = 0;
    char cache[1024], objdir[1200], srcdir[1200], closure[65];

    memset(sum, 0, sizeof *sum);
    snprintf(sum->target, sizeof sum->target, "%s", t->name);
    if (gen_enumerate(o->recipe, t, &sp, err, errlen)) return 1;
    if (sp.not_for_target) {
        snprintf(sum->only_for, sizeof sum->only_for, "%s", sp.only_for);
        gen_space_free(&sp);
        return 0;
    }
    if (o->cache_dir) snprintf(cache, sizeof cache, "%s", o->cache_dir);
    else pl_default_cache(&sp, cache, sizeof cache);
    snprintf(objdir, sizeof objdir, "%s/objects", cache);
    snprintf(srcdir, sizeof srcdir, "%s/src", cache);
    if (pl_mkdirs(objdir) || pl_mkdirs(srcdir)) { snprintf(err, errlen, "%s: cannot create cache folder: %s", cache, strerror(errno)); goto done; }
    if (toolchain_find(t, o->extra_flags, cache, &tc, err, errlen)) goto done;
    /* the informative version line: nvcc's first line is its banner, the release is further down */
    const char *vline = strstr(tc.version, "release") ? strstr(tc.version, "Cuda compilation tools") : NULL;
    if (!vline) vline = tc.version;
    snprintf(sum->compiler, sizeof sum->compiler, "%s %s: %.*s", tc.kind, tc.path, (int)strcspn(vline, "\n"), vline);
    snprintf(sum->fingerprint, sizeof sum->fingerprint, "%s", tc.fingerprint);
    const char *roots[2] = {t->prelude, sp.template_rel};
    if (closure_hash(sp.templates_root, roots, 2, closure, NULL, err, errlen)) goto done;
    if (db_open(o->db_path, 1, &db, err, errlen)) goto done;
    db_toolchain_row tcrow = {tc.fingerprint, tc.kind, tc.path, tc.version, tc.flags, t->name};
    if (db_toolchain_put(db, &tcrow, err, errlen)) goto done;

    if ((sum->unused = pl_keep(&sp, o, err, errlen)) < 0) goto done;
    pl_sample(&sp, o->sample);
    sum->space = sp.total;
    sum->variants = sp.nvariants;
    for (int i = 0; i < sp.nrejected; i++) {
        sum->rejected += sp.rejected[i].count;
        if (sum->nrejected_by < KT_GEN_MAX_REASONS) {
            snprintf(sum->rejected_by[sum->nrejected_by].reason, sizeof sum->rejected_by[0].reason, "%s", sp.rejected[i].reason);
            sum->rejected_by[sum->nrejected_by++].count = sp.rejected[i].count;
        }
    }
    items = calloc((size_t)sp.nvariants, sizeof *items);
    jobs = calloc((size_t)sp.nvariants, sizeof *jobs);
    if (sp.nvariants > 0 && (!items || !jobs)) { snprintf(err, errlen, "out of memory"); goto done; }

    for (int i = 0; i < sp.nvariants; i++) {
        pl_item *it = &items[i];
        db_kernel_brief brief;
        it->v = &sp.variants[i];
        it->job = -1;
        pl_cache_key(it->v, closure, t, tc.fingerprint, it->key);
        snprintf(it->obj, sizeof it->obj, "%s/%s.co", objdir, it->key);
        snprintf(it->fail, sizeof it->fail, "%s/%s.fail", objdir, it->key);
        int cur = db_kernel_is_current(db, it->v->name, t->name, it->key, &brief, err, errlen);
        if (cur == 1) cur = pl_declared_same(db, t, it->v, &brief, err, errlen);
        if (cur < 0) goto done;
        if (cur == 1) {                       /* stored with this exact key and declarations: nothing to do */
            /* ... but params that enter neither the source nor the analysis (the law) may have
             * changed: the stored text is refreshed, nothing else */
            it->state = strcmp(brief.params, it->v->params_json) == 0 ? 0 : 3;
            sum->cached++;
            pl_tally(sum, brief.status, brief.reason, brief.waves_per_simd, it->v->name);
            continue;
        }
        /* a changed declaration re-analyses the cached object; with the cache gone it recompiles */
        if (access(it->obj, R_OK) == 0) { it->state = 1; sum->cached++; continue; }
        if (access(it->fail, R_OK) == 0) { it->state = 2; sum->cached++; continue; }
        /* compile: source under src/, output to a temporary name renamed on success, so an
         * interrupted run never leaves a half-written object under the final name */
        char src[1300], tmp[1300], out[1300];
        snprintf(src, sizeof src, "%s/%s.hip", srcdir, it->key);
        snprintf(tmp, sizeof tmp, "%s/%s.bundle.%d", objdir, it->key, (int)getpid());
        snprintf(out, sizeof out, "%s/%s.co.%d", objdir, it->key, (int)getpid());
        if (file_write_atomic(src, it->v->source)) { snprintf(err, errlen, "%s: cannot write: %s", src, strerror(errno)); goto done; }
        build_job *job = &jobs[njobs];
        job->label = it->v->name;
        snprintf(job->log, sizeof job->log, "%s/%s.log.%d", objdir, it->key, (int)getpid());
        if (toolchain_compile_steps(&tc, sp.templates_root, src, tmp, out, &job->steps) < 0) {
            snprintf(err, errlen, "%s: compile command too long", it->v->name);
            goto done;
        }
        it->job = njobs++;
        it->state = 1;
    }

    if (njobs) {
        int parallel = o->jobs > 0 ? o->jobs : build_default_parallelism();
        if (!o->quiet) fprintf(stderr, "%s: compiling %d of %d variants with %s, %d at a time\n", t->name, njobs, sp.nvariants, tc.kind, parallel);
        build_run_jobs(jobs, njobs, parallel, o->quiet);
    }
    for (int i = 0; i < sp.nvariants; i++) {
        pl_item *it = &items[i];
        if (it->job < 0) continue;
        build_job *job = &jobs[it->job];
        char out[1300], tmp[1300];
        snprintf(out, sizeof out, "%s/%s.co.%d", objdir, it->key, (int)getpid());
        snprintf(tmp, sizeof tmp, "%s/%s.bundle.%d", objdir, it->key, (int)getpid());
        unlink(tmp);
        if (job->status == 0 && access(out, R_OK) == 0 && rename(out, it->obj) == 0) {
            sum->compiled++;
            unlink(job->log);
        } else if (job->killed) {
            /* the compiler process died of a signal (a kill, an interrupted build): not the
             * source's failure, so neither cached nor stored, and the next run compiles it again.
             * A compiler that crashes on the source exits with a code (clang: 128 + the signal)
             * and is cached as any failure, its log kept. */
            unlink(out);
            unlink(job->log);
            it->state = 0;
            sum->interrupted++;
        } else {
            sum->compiled++;
            /* keep the compiler's words: a failure is cached too, so a rerun does not retry it */
            unlink(out);
            if (job->status == 0) {
                FILE *f = fopen(job->log, "a");
                if (f) { fprintf(f, "compiler exited 0 but wrote no code object\n"); fclose(f); }
            }
            rename(job->log, it->fail);
            it->state = 2;
        }
    }

    /* one transaction: a gen run is stored whole or (if killed) re-stored from the cache next time */
    if (db_begin(db, err, errlen)) goto done;
    for (int i = 0; i < sp.nvariants; i++) {
        if (items[i].state == 3) {
            if (db_kernel_set_params(db, items[i].v->name, t->name, items[i].v->params_json, err, errlen)) goto done;
        } else if (items[i].state != 0 && pl_store(db, &sp, t, &tc, &items[i], sum, err, errlen)) {
            goto done;
        }
    }
    if (o->sample <= 0 && pl_retire_absent(db, &sp, sp.nvariants + sum->unused, t, sum, err, errlen)) {
        db_rollback(db);
        goto done;
    }
    if (db_commit(db, err, errlen)) goto done;
    rc = 0;
done:
    sum->seconds = pl_now() - t0;
    free(items);
    free(jobs);
    db_close(db);
    gen_space_free(&sp);
    return rc;
}

void pipeline_print_summary(FILE *f, const kt_gen_summary *s)
{
    if (s->only_for[0]) {
        fprintf(f, "%s  nothing to build: the recipe is written for %s only\n", s->target, s->only_for);
        return;
    }
    fprintf(f, "%s  %s\n", s->target, s->compiler);
    fprintf(f, "  space %d, variants %d (rejected by the recipe: %d)\n", s->space, s->variants, s->rejected);
    for (int i = 0; i < s->nrejected_by; i++) fprintf(f, "    %6d  %s\n", s->rejected_by[i].count, s->rejected_by[i].reason);
    if (s->unused) fprintf(f, "  not built: %d no problem of this run can use (another dtype, head size or layout; --only)\n", s->unused);
    fprintf(f, "  compiled %d, cached %d, failed %d, excluded %d, ok %d   (%.1f s)\n",
            s->compiled, s->cached, s->failed, s->excluded, s->ok, s->seconds);
    if (s->interrupted)
        fprintf(f, "  interrupted %d compiles (killed by a signal): not stored, the next run compiles them\n", s->interrupted);
    if (s->retired) fprintf(f, "  retired %d stored kernels the recipe no longer admits (excluded; measurements kept)\n", s->retired);
    for (int i = 0; i < s->nexcluded_by; i++) fprintf(f, "    %6d  excluded: %s\n", s->excluded_by[i].count, s->excluded_by[i].reason);
    if (s->first_failure[0]) fprintf(f, "    first failure: %s\n", s->first_failure);
    int max = 0;
    for (int w = 0; w < KT_GEN_MAX_WAVES; w++) if (s->waves_hist[w] > max) max = s->waves_hist[w];
    if (max) {
        fprintf(f, "  occupancy of ok kernels (%s):\n", strncmp(s->target, "sm_", 3) == 0 ? "warps/SM" : "waves/SIMD");
        for (int w = 0; w < KT_GEN_MAX_WAVES; w++) {
            if (!s->waves_hist[w]) continue;
            int bar = (s->waves_hist[w] * 40 + max - 1) / max;
            fprintf(f, "    %3d%s %5d  ", w, w == KT_GEN_MAX_WAVES - 1 ? "+" : " ", s->waves_hist[w]);
            for (int b = 0; b < bar; b++) fputc('#', f);
            fputc('\n', f);
        }
    }
}

int pipeline_gen_and_print(const kt_gen_options *o, const char *target_name, char *err, size_t errlen)
{
    const kt_target *t = kt_target_find(target_name);
    if (!t) {
        size_t used = (size_t)snprintf(err, errlen, "unknown target '%s' (known:", target_name ? target_name : "(null)");
        for (int i = 0; i < kt_target_count() && used < errlen; i++)
            used += (size_t)snprintf(err + used, errlen - used, " %s", kt_target_at(i)->name);
        if (used < errlen) snprintf(err + used, errlen - used, ")");
        return 2;
    }
    kt_gen_summary sum;
    if (pipeline_gen(o, t, &sum, err, errlen)) return 1;
    pipeline_print_summary(stdout, &sum);
    fflush(stdout);
    if (sum.interrupted) {   /* what follows (a sweep) would run short of kernels without a word */
        snprintf(err, errlen, "%d compiles were killed by a signal: run kt gen again", sum.interrupted);
        return 1;
    }
    return 0;
}
