/* sweep.c: the sweep's state machine over worker processes (see sweep.h). */
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>
#include "backend.h"
#include "db.h"
#include "db_tuner.h"
#include "kt_env.h"
#include "law.h"
#include "op.h"
#include "plan.h"
#include "problem_key.h"
#include "sweep.h"
#include "target.h"
#include "worker_proc.h"

#define SW_MAX_GPUS 16
#define SW_MAX_FINALISTS 6
#define SW_NOISE_MIN 0.003        /* below 0.3% two medians are never told apart, whatever the control says */
#define SW_COARSE_ROUNDS 7        /* timed replays a variant in the coarse pass */
#define SW_FINE_ROUNDS 21         /* in the fine pass (twice that in a tiebreak) */
#define SW_FINE_MARGIN 0.08       /* finalists: within 8% of the best coarse median */

enum { ST_COARSE, ST_FINE, ST_TIEBREAK, ST_DONE };

typedef struct sw_timed {
    char hash[72];
    double median, min, max;
    int reps, launches;
} sw_timed;

typedef struct sw_job {
    const sweep_problem *p;
    db_candidate *cands;     /* the op's kernels of the problem's dtype that its descriptor reads */
    kt_candidate *kc;        /* the same, as the op's law sees them */
    char (*law_class)[32];
    int ncands;
    int *keep;
    int law_idx;
    int stage;
    int attempts;            /* worker deaths outside a verification, this problem */
    int failed;
    int finished;            /* sw_finish_job ran: measured, or failed with the law's pick stored */
    char fail_reason[256];
    /* the pass in flight */
    char inflight[72];       /* code hash being verified */
    char crashed[72];        /* code hash the worker reported `verified <hash> crash` for: the worker
                                exits next (worker.h), and that exit is this variant's crash, recorded */
    int *members;            /* candidate indices sent in this pass */
    int nmembers;
    sw_timed *timed;
    int ntimed;
    char control_hash[72];
    double control_a, control_b;
    int have_control;
    int rounds, cold;
    /* the pass to decide from, and the fine pass (the law's regret is read from it: the law's
     * pick is always one of its members, the tiebreak holds only the tied) */
    long long decide_pass, fine_pass;
    double decide_spread;
    int *finalists;
    int nfinalists;
    /* the key the tiebreak times: the problem's second instance where its op has one (op.h:
     * kt_op.second_instance), else the problem's own */
    char tie_key[160];
} sw_job;

typedef struct sw_worker {
    wp_proc proc;
    int gpu;
    int job;                 /* index into jobs, -1 idle */
    int ready;
    double last_heard;
} sw_worker;

typedef struct sw_ctx {
    const sweep_options *o;
    kt_db *db;
    sweep_outcome *out;
    char exe[1024];
    law_device dev;
    sw_job *jobs;
    int njobs, next_job, finished;
    double t0, timeout_s;
    double *spreads;
    int nspreads;
    char *err;
    size_t errlen;
} sw_ctx;

static double sw_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int sweep_default_compute_units(const char *target)
{
    static const struct { const char *target; int cus; } table[] = {
        {"gfx1201", 64}, {"gfx1100", 96}, {"gfx942", 304}, {"gfx90a", 110}, {"sm_90a", 132},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (target && strcmp(table[i].target, target) == 0) return table[i].cus;
    return 0;
}

static void sw_fmt_duration(double s, char *buf, size_t len)
{
    if (s < 0 || !isfinite(s)) snprintf(buf, len, "?");
    else if (s < 60) snprintf(buf, len, "%.0fs", s);
    else if (s < 3600) snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
    else snprintf(buf, len, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static unsigned long long sw_seed(const char *key, long long run_id)
{
    unsigned long long h = 1469598103934665603ull;
    for (const char *c = key; *c; c++) h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h ^ (unsigned long long)run_id * 0x9E3779B97F4A7C15ull;
}

static int sw_cand_index(const sw_job *j, const char *hash)
{
    for (int i = 0; i < j->ncands; i++)
        if (strcmp(j->cands[i].code_hash, hash) == 0) return i;
    return -1;
}

/* ---- writing what the workers report ---- */

static int sw_put_verify(sw_ctx *c, sw_job *j, const char *hash, const char *status, double error, const char *detail)
{
    int ci = sw_cand_index(j, hash);
    db_measurement_row r = {
        .device_key = c->out->device_key, .problem_key = j->p->key, .code_hash = hash,
        .kernel = ci >= 0 ? j->cands[ci].name : "?", .kind = "verify", .status = status, .detail = detail,
        .run_id = c->out->run_id, .error = error, .median_us = NAN, .min_us = NAN, .max_us = NAN,
    };
    return db_measurement_put(c->db, &r, c->err, c->errlen);
}

static const char *sw_stage_name(int stage)
{
    return stage == ST_COARSE ? "coarse" : stage == ST_FINE ? "fine" : "tiebreak";
}

/* the key the pass in flight times and is stored under */
static const char *sw_pass_key(const sw_job *j) { return j->stage == ST_TIEBREAK ? j->tie_key : j->p->key; }

/* The pass is complete: one transaction for the pass row and its timings. */
static int sw_commit_pass(sw_ctx *c, sw_job *j, int gpu)
{
    double spread = j->have_control ? fmax(0, fabs(j->control_a - j->control_b) / fmin(j->control_a, j->control_b)) : NAN;
    db_pass_row pr = {
        .run_id = c->out->run_id, .device_key = c->out->device_key, .problem_key = sw_pass_key(j),
        .kind = sw_stage_name(j->stage), .control_hash = j->have_control ? j->control_hash : NULL,
        .variants = j->ntimed, .rounds = j->rounds, .cold = j->cold, .gpu = gpu, .control_spread = spread,
    };
    long long pass_id = 0;
    if (db_begin(c->db, c->err, c->errlen)) return -1;
    if (db_pass_put(c->db, &pr, &pass_id, c->err, c->errlen)) goto fail;
    for (int t = 0; t < j->ntimed; t++) {
        int ci = sw_cand_index(j, j->timed[t].hash);
        db_measurement_row r = {
            .device_key = c->out->device_key, .problem_key = sw_pass_key(j), .code_hash = j->timed[t].hash,
            .kernel = ci >= 0 ? j->cands[ci].name : "?", .kind = sw_stage_name(j->stage), .status = "ok",
            .pass_id = pass_id, .run_id = c->out->run_id, .error = NAN, .median_us = j->timed[t].median,
            .min_us = j->timed[t].min, .max_us = j->timed[t].max, .reps = j->timed[t].reps,
            .launches = j->timed[t].launches,
        };
        if (db_measurement_put(c->db, &r, c->err, c->errlen)) goto fail;
    }
    if (db_commit(c->db, c->err, c->errlen)) goto fail;
    if (!isnan(spread) && c->nspreads < 4096) c->spreads[c->nspreads++] = spread;
    j->decide_pass = pass_id;
    j->decide_spread = spread;
    if (j->stage == ST_FINE) j->fine_pass = pass_id;
    return 0;
fail:
    db_rollback(c->db);
    return -1;
}

/* ---- planning each pass ---- */

static int sw_verified_ok(sw_ctx *c, sw_job *j, int ci, int *known)
{
    char status[16];
    double e;
    int f = db_verify_get(c->db, c->out->device_key, j->p->key, j->cands[ci].code_hash, status, &e, c->err, c->errlen);
    if (f < 0) return -1;
    *known = f;
    return f && strcmp(status, "ok") == 0;
}

/* Median of candidate ci from `kind` timings, -1 when none. */
static double sw_median(sw_ctx *c, sw_job *j, int ci, const char *kind)
{
    double m = -1;
    if (db_timing_get(c->db, c->out->device_key, j->p->key, j->cands[ci].code_hash, kind, &m, c->err, c->errlen) != 1)
        return -1;
    return m;
}

/* Members of the next pass into j->members; 0 when the stage needs no measuring. */
static int sw_plan_pass(sw_ctx *c, sw_job *j)
{
    if (j->stage != ST_TIEBREAK) j->nmembers = 0;
    if (j->stage == ST_COARSE) {
        for (int i = 0; i < j->ncands; i++) {
            if (!j->keep[i]) continue;
            int known = 0, ok = sw_verified_ok(c, j, i, &known);
            if (ok < 0) return -1;
            if (known && !ok) continue;                 /* wrong/crash/timeout: never again */
            if (ok && sw_median(c, j, i, "coarse") > 0) continue;   /* timed before: same code, same key */
            j->members[j->nmembers++] = i;
        }
        return j->nmembers;
    }
    if (j->stage == ST_FINE) {
        double *med = malloc((size_t)j->ncands * sizeof *med);
        if (!med) return -1;
        for (int i = 0; i < j->ncands; i++) {
            int known = 0, ok = j->keep[i] ? sw_verified_ok(c, j, i, &known) : 0;
            med[i] = ok == 1 ? sw_median(c, j, i, "coarse") : -1;
        }
        j->nfinalists = plan_finalists(med, j->ncands, j->law_idx, SW_FINE_MARGIN, SW_MAX_FINALISTS, j->finalists);
        free(med);
        if (j->nfinalists == 0) return 0;
        /* a fine pass over exactly these code objects already exists: decide from it */
        const char *hashes[SW_MAX_FINALISTS + 1];
        for (int f = 0; f < j->nfinalists; f++) hashes[f] = j->cands[j->finalists[f]].code_hash;
        long long pass = 0;
        double spread = NAN;
        int found = db_pass_find(c->db, c->out->device_key, j->p->key, "fine", hashes, j->nfinalists, &pass, &spread,
                                 c->err, c->errlen);
        if (found < 0) return -1;
        if (found) {
            j->decide_pass = j->fine_pass = pass;
            j->decide_spread = spread;
            return 0;
        }
        for (int f = 0; f < j->nfinalists; f++) j->members[j->nmembers++] = j->finalists[f];
        return j->nmembers;
    }
    /* tiebreak: members set by sw_decide; a stored tiebreak over exactly them is reused */
    const char *hashes[SW_MAX_FINALISTS + 1];
    for (int f = 0; f < j->nmembers; f++) hashes[f] = j->cands[j->members[f]].code_hash;
    long long pass = 0;
    double spread = NAN;
    int found = db_pass_find(c->db, c->out->device_key, j->tie_key, "tiebreak", hashes, j->nmembers, &pass, &spread,
                             c->err, c->errlen);
    if (found < 0) return -1;
    if (found) {
        j->decide_pass = pass;
        j->decide_spread = spread;
        return 0;
    }
    return j->nmembers;
}

static void sw_send_pass(sw_ctx *c, sw_worker *w, sw_job *j)
{
    const sweep_problem *p = j->p;
    j->rounds = j->stage == ST_COARSE ? SW_COARSE_ROUNDS : j->stage == ST_FINE ? SW_FINE_ROUNDS : 2 * SW_FINE_ROUNDS;
    j->cold = p->p.op->cold_decode && strcmp(kt_problem_phase(&p->p), "decode") == 0;
    j->ntimed = 0;
    j->have_control = 0;
    j->inflight[0] = 0;
    j->crashed[0] = 0;
    /* the control: the law's pick when it is in the pass, else the first member */
    int ctl = j->members[0];
    for (int i = 0; i < j->nmembers; i++)
        if (j->members[i] == j->law_idx) ctl = j->law_idx;
    snprintf(j->control_hash, sizeof j->control_hash, "%s", j->cands[ctl].code_hash);
    wp_send(&w->proc, "problem %d %llu %d %s", j->cold, sw_seed(p->key, c->out->run_id) + (unsigned)j->stage,
            j->rounds, sw_pass_key(j));
    for (int i = 0; i < j->nmembers; i++) {
        const db_candidate *d = &j->cands[j->members[i]];
        int known = 0, ok = sw_verified_ok(c, j, j->members[i], &known);
        wp_send(&w->proc, "variant %s %d %s", d->code_hash, ok == 1 ? 0 : 1, d->name);
    }
    wp_send(&w->proc, "control %s", j->control_hash);
    wp_send(&w->proc, "run");
    w->last_heard = sw_now();
}

/* ---- deciding ---- */

/* The measured winner of a problem, with its verification error and the law's regret. */
static int sw_write_selection(sw_ctx *c, sw_job *j, int win, double win_us, double noise, const char *decided_by)
{
    const db_candidate *d = &j->cands[win];
    char status[16];
    double error = NAN;
    if (db_verify_get(c->db, c->out->device_key, j->p->key, d->code_hash, status, &error, c->err, c->errlen) < 0)
        return -1;
    /* regret: the law's pick against the winner, both from the fine pass (same conditions) */
    double law_us = NAN, regret = NAN;
    if (j->law_idx >= 0 && j->fine_pass > 0) {
        double lm = -1, wm = -1;
        int fl = db_timing_in_pass(c->db, j->fine_pass, j->cands[j->law_idx].code_hash, &lm, c->err, c->errlen);
        int fw = fl < 0 ? -1 : db_timing_in_pass(c->db, j->fine_pass, d->code_hash, &wm, c->err, c->errlen);
        if (fl < 0 || fw < 0) return -1;
        if (fl == 1 && fw == 1) {
            law_us = lm;
            regret = law_regret(lm, wm);
        }
    }
    db_selection_row r = {
        .device_key = c->out->device_key, .target = c->o->target, .problem_key = j->p->key, .op = j->p->p.op->name,
        .dtype = j->p->p.op->dtypes[j->p->p.dtype], .kernel = d->name, .code_hash = d->code_hash,
        .source = "measured", .law_kernel = j->law_idx >= 0 ? j->cands[j->law_idx].name : NULL, .decided_by = decided_by,
        .time_us = win_us, .error = error, .law_us = law_us, .regret = regret, .noise_floor = noise,
        .run_id = c->out->run_id,
    };
    return db_selection_put(c->db, &r, c->err, c->errlen);
}

/* The tiebreak's key into j->tie_key, its problem row in the database (passes reference it). A tie
 * on the op's first instance of a problem is timed again on its second: variants that one draw of
 * the inputs cannot tell apart, another can (attention: equal lengths, where mixed ones hid an 8%
 * gap; bench/NOTES.md, twelfth session). */
static int sw_tie_key(sw_ctx *c, sw_job *j)
{
    kt_problem alt = j->p->p;
    alt.instance = alt.op->second_instance != NULL;
    if (kt_problem_key(&alt, j->tie_key, sizeof j->tie_key) < 0)
        return snprintf(c->err, c->errlen, "%s: no key for its second instance", j->p->key), -1;
    if (!alt.instance) return 0;
    return db_problem_put(c->db, j->tie_key, alt.op->name, alt.op->dtypes[alt.dtype], kt_problem_phase(&alt), c->err,
                          c->errlen) ? -1 : 0;
}

/* After a pass (or a reused one): decide, or schedule the tiebreak. 1 = problem done, 0 = more. */
static int sw_decide(sw_ctx *c, sw_job *j)
{
    int n = j->stage == ST_TIEBREAK ? j->nmembers : j->nfinalists;
    int *idx = j->stage == ST_TIEBREAK ? j->members : j->finalists;
    double med[SW_MAX_FINALISTS + 1];
    const db_candidate *cands[SW_MAX_FINALISTS + 1];
    int law_pos = -1;
    for (int i = 0; i < n; i++) {
        double m = -1;
        int f = db_timing_in_pass(c->db, j->decide_pass, j->cands[idx[i]].code_hash, &m, c->err, c->errlen);
        if (f < 0) return -1;
        med[i] = f == 1 ? m : -1;
        cands[i] = &j->cands[idx[i]];
        if (idx[i] == j->law_idx) law_pos = i;
    }
    double noise = isnan(j->decide_spread) ? SW_NOISE_MIN : fmax(j->decide_spread, SW_NOISE_MIN);
    int tied = 0;
    const char *decided_by = "fastest";
    int w = plan_winner(med, cands, n, law_pos, noise, &tied, &decided_by);
    if (w < 0) {
        j->failed = 1;
        snprintf(j->fail_reason, sizeof j->fail_reason, "no variant verified and timed");
        return 1;
    }
    if (tied > 1 && j->stage == ST_FINE) {
        /* re-measure the tied ones, twice the rounds, before falling back to the tie rules */
        int best = w;
        for (int i = 0; i < n; i++)
            if (med[i] > 0 && med[i] < med[best]) best = i;
        int count = 0;
        for (int i = 0; i < n; i++)
            if (med[i] > 0 && med[i] <= med[best] * (1 + noise)) j->members[count++] = idx[i];
        j->nmembers = count;
        j->stage = ST_TIEBREAK;
        return sw_tie_key(c, j) ? -1 : 0;
    }
    /* decided on the second instance: said so, and the time kept is the winner's on the problem's
     * own (the fine pass), as every other selection's */
    char by[64];
    double win_us = med[w];
    if (j->stage == ST_TIEBREAK && j->p->p.op->second_instance) {
        snprintf(by, sizeof by, "@%s: %s", j->p->p.op->second_instance, decided_by);
        decided_by = by;
        double fm = -1;
        int f = j->fine_pass > 0 ? db_timing_in_pass(c->db, j->fine_pass, cands[w]->code_hash, &fm, c->err, c->errlen) : 0;
        if (f < 0) return -1;
        if (f == 1) win_us = fm;
    }
    if (sw_write_selection(c, j, idx[w], win_us, noise, decided_by)) return -1;
    return 1;
}

static void sw_law_selection(sw_ctx *c, sw_job *j, const char *why)
{
    if (j->law_idx < 0) return;
    char e[512];
    db_selection_row r = {
        .device_key = c->out->device_key, .target = c->o->target, .problem_key = j->p->key, .op = j->p->p.op->name,
        .dtype = j->p->p.op->dtypes[j->p->p.dtype], .kernel = j->cands[j->law_idx].name,
        .code_hash = j->cands[j->law_idx].code_hash, .source = "law", .law_kernel = j->cands[j->law_idx].name,
        .decided_by = why, .time_us = NAN, .error = NAN, .law_us = NAN, .regret = NAN, .noise_floor = NAN,
        .run_id = c->out->run_id,
    };
    if (db_selection_put(c->db, &r, e, sizeof e)) fprintf(stderr, "tune: %s\n", e);
}

/* ---- the loop ---- */

static void sw_progress(sw_ctx *c, sw_job *j, const char *what)
{
    if (c->o->quiet) return;
    double el = sw_now() - c->t0;
    double eta = c->finished > 0 ? el / c->finished * (c->njobs - c->finished) : NAN;
    char e1[32], e2[32];
    sw_fmt_duration(el, e1, sizeof e1);
    sw_fmt_duration(eta, e2, sizeof e2);
    printf("[%d/%d] %-34s %s  (elapsed %s, ETA %s)\n", c->finished, c->njobs, j->p->key, what, e1, e2);
    fflush(stdout);
}

/* Advance job j on worker w until it needs the GPU (sends a pass) or is done. */
static int sw_advance(sw_ctx *c, sw_worker *w, sw_job *j)
{
    for (;;) {
        if (j->stage == ST_DONE) return 1;
        int members = sw_plan_pass(c, j);
        if (members < 0) return -1;
        if (members > 0) {
            sw_send_pass(c, w, j);
            return 0;
        }
        if (j->stage == ST_COARSE) { j->stage = ST_FINE; continue; }
        /* a fine or tiebreak pass stored earlier, or nothing to time */
        if (j->stage == ST_FINE && j->nfinalists == 0) {
            j->failed = 1;
            snprintf(j->fail_reason, sizeof j->fail_reason, "no variant passed verification");
            j->stage = ST_DONE;
            return 1;
        }
        int d = sw_decide(c, j);
        if (d < 0) return -1;
        if (d == 1) { j->stage = ST_DONE; return 1; }
    }
}

static void sw_finish_job(sw_ctx *c, sw_job *j)
{
    c->finished++;
    j->finished = 1;
    char what[512];
    if (j->failed) {
        sw_law_selection(c, j, "law (sweep failed)");
        c->out->failed++;
        snprintf(what, sizeof what, "FAILED: %s (law pick stored)", j->fail_reason);
    } else {
        c->out->measured++;
        db_selection_row r;
        db_selection_text txt;
        char e[256];
        if (db_selection_get(c->db, c->out->device_key, j->p->key, &r, &txt, e, sizeof e) == 1) {
            char regret[48] = "law pick not timed";
            if (!isnan(r.regret)) snprintf(regret, sizeof regret, "law %+.1f%%", 100 * r.regret);
            snprintf(what, sizeof what, "%s %.2f us (%s, %s)", txt.kernel + (strncmp(txt.kernel, "kt_gemm_dense_", 14) ? 0 : 14),
                     r.time_us, regret, r.decided_by ? r.decided_by : "");
        } else {
            snprintf(what, sizeof what, "done");
        }
    }
    sw_progress(c, j, what);
}

static int sw_start_worker(sw_ctx *c, sw_worker *w)
{
    if (wp_spawn(&w->proc, c->exe, c->o->db_path, c->o->target, w->gpu, c->err, c->errlen)) return -1;
    w->ready = 0;
    w->last_heard = sw_now();
    return 0;
}

/* The worker died or hung while on job j. */
static int sw_worker_lost(sw_ctx *c, sw_worker *w, const char *why_status)
{
    char how[64];
    wp_stop(&w->proc, how, sizeof how);
    if (w->job >= 0) {
        sw_job *j = &c->jobs[w->job];
        if (j->inflight[0]) {
            char detail[160];
            snprintf(detail, sizeof detail, "worker %s while verifying (%s)", how,
                     strcmp(why_status, "timeout") == 0 ? "no answer in time" : "died");
            if (sw_put_verify(c, j, j->inflight, why_status, NAN, detail)) return -1;
            fprintf(stderr, "tune: %s: %s: %s\n", j->p->key, j->inflight, detail);
        } else if (j->crashed[0]) {
            /* the exit the worker announced with `verified <hash> crash`: already recorded */
        } else if (++j->attempts >= 2) {
            j->failed = 1;
            snprintf(j->fail_reason, sizeof j->fail_reason, "worker %s twice outside verification", how);
            j->stage = ST_DONE;
        }
        j->inflight[0] = j->crashed[0] = 0;   /* accounted once: a later death is a new one */
    }
    if (sw_start_worker(c, w)) return -1;
    return 0;
}

static int sw_handle_line(sw_ctx *c, sw_worker *w, const char *line)
{
    w->last_heard = sw_now();
    if (strncmp(line, "ready ", 6) == 0) {
        char key[96];
        long long l2 = 0;
        int cus = 0;
        double gbps = 0;
        int off = 0;
        if (sscanf(line, "ready %95s %lld %d %lf %n", key, &l2, &cus, &gbps, &off) < 4) return 0;
        if (strcmp(key, c->out->device_key) != 0) {
            snprintf(c->err, c->errlen, "GPU %d is %s, the sweep's device is %s: one sweep needs identical GPUs", w->gpu,
                     key, c->out->device_key);
            return -1;
        }
        if (gbps > c->out->copy_gbps) c->out->copy_gbps = gbps;
        w->ready = 1;
        if (w->job >= 0) {
            /* a replacement worker: re-plan and re-send the pass its predecessor lost */
            sw_job *j = &c->jobs[w->job];
            int r = sw_advance(c, w, j);
            if (r < 0) return -1;
            if (r == 1) { sw_finish_job(c, j); w->job = -1; }
        }
        return 0;
    }
    if (w->job < 0) return 0;
    sw_job *j = &c->jobs[w->job];
    if (strncmp(line, "begin ", 6) == 0) {
        snprintf(j->inflight, sizeof j->inflight, "%s", line + 6);
    } else if (strncmp(line, "verified ", 9) == 0) {
        char hash[72], status[16], errs[64];
        int off = 0;
        if (sscanf(line, "verified %71s %15s %63s %n", hash, status, errs, &off) < 3) return 0;
        double e = strcmp(errs, "nan") == 0 ? NAN : strtod(errs, NULL);
        const char *detail = off > 0 && strcmp(line + off, "-") != 0 ? line + off : NULL;
        if (sw_put_verify(c, j, hash, status, e, detail)) return -1;
        if (strcmp(status, "ok") != 0) fprintf(stderr, "tune: %s: %s: %s %s\n", j->p->key, hash, status, detail ? detail : "");
        if (strcmp(status, "crash") == 0) snprintf(j->crashed, sizeof j->crashed, "%s", hash);
        j->inflight[0] = 0;
    } else if (strncmp(line, "timed ", 6) == 0) {
        sw_timed *t = &j->timed[j->ntimed];
        if (j->ntimed < j->ncands + 1 &&
            sscanf(line, "timed %71s %lf %lf %lf %d %d", t->hash, &t->median, &t->min, &t->max, &t->reps, &t->launches) == 6)
            j->ntimed++;
    } else if (strncmp(line, "control ", 8) == 0) {
        char hash[72];
        if (sscanf(line, "control %71s %lf %lf", hash, &j->control_a, &j->control_b) == 3) j->have_control = 1;
    } else if (strncmp(line, "fail ", 5) == 0) {
        fprintf(stderr, "tune: %s: worker: %s\n", j->p->key, line + 5);
        j->failed = 1;
        snprintf(j->fail_reason, sizeof j->fail_reason, "%s", line + 5);
        j->stage = ST_DONE;
    } else if (strcmp(line, "done") == 0) {
        if (j->stage == ST_DONE) {
            sw_finish_job(c, j);
            w->job = -1;
            return 0;
        }
        if (j->ntimed > 0 && sw_commit_pass(c, j, w->gpu) < 0) return -1;
        if (j->stage == ST_COARSE) {
            j->stage = ST_FINE;
        } else {
            int d = j->ntimed > 0 ? sw_decide(c, j) : 1;
            if (d < 0) return -1;
            if (j->ntimed == 0) {
                j->failed = 1;
                snprintf(j->fail_reason, sizeof j->fail_reason, "nothing timed in the %s pass", sw_stage_name(j->stage));
            }
            if (d == 1) j->stage = ST_DONE;
        }
        int r = sw_advance(c, w, j);
        if (r < 0) return -1;
        if (r == 1) {
            sw_finish_job(c, j);
            w->job = -1;
        }
    }
    return 0;
}

static int sw_probe(const sweep_options *o, const kt_target *t, int gpus, ktb_device_info *info, sweep_outcome *out,
                    char *err, size_t errlen)
{
    const char *vendor = t->vendor == KT_VENDOR_NVIDIA ? "cuda" : "hip";
    ktb_backend *b = NULL;
    char e[512];
    /* Test hook: KT_SWEEP_FAKE_DEVICE="<arch> <cus> <pci id>" stands for a GPU, so the tests can
     * drive the whole sweep with a scripted worker (KT_WORKER_EXE) on a machine without one. */
    const char *fake = kt_env_get("KT_SWEEP_FAKE_DEVICE");
    if (fake && *fake) {
        memset(info, 0, sizeof *info);
        if (sscanf(fake, "%31s %d %i", info->arch, &info->compute_units, &info->pci_device_id) != 3)
            return snprintf(err, errlen, "KT_SWEEP_FAKE_DEVICE='%s': expected '<arch> <cus> <pci id>'", fake), -1;
        snprintf(info->name, sizeof info->name, "fake %s (KT_SWEEP_FAKE_DEVICE)", info->arch);
        info->l2_bytes = 50 << 20;
        info->wave_size = 32;
    } else if (ktb_open(vendor, 0, &b, e, sizeof e) || ktb_info(b, info, e, sizeof e)) {
        ktb_close(b);
        snprintf(out->no_device_reason, sizeof out->no_device_reason, "%s", e);
        return 0;
    }
    if (b) ktb_close(b);
    const kt_target *runs = kt_target_for_arch(info->arch);
    if (!runs || strcmp(runs->name, t->name) != 0) {
        snprintf(err, errlen, "GPU 0 is %s (%s), which runs %s code, not --target %s", info->name, info->arch,
                 runs ? runs->name : "no ktune target's", t->name);
        return -1;
    }
    for (int g = 1; g < gpus && !(fake && *fake); g++) {
        if (ktb_open(vendor, g, &b, e, sizeof e)) {
            snprintf(err, errlen, "--gpus %d: GPU %d: %s", gpus, g, e);
            return -1;
        }
        ktb_close(b);
    }
    return 1;
}

/* The op's kernels of the problem's dtype, each read by its descriptor (a row it refuses is left
 * out, with a message), and the law's and pruning's view of them. */
static int sw_job_candidates(sw_ctx *c, sw_job *j)
{
    const kt_op *op = j->p->p.op;
    db_candidate *all = NULL;
    int n = 0;
    if (db_candidates(c->db, c->o->target, op->name, op->dtypes[j->p->p.dtype], &all, &n, c->err, c->errlen)) return -1;
    j->cands = all;
    j->kc = calloc((size_t)n + 1, sizeof *j->kc);
    j->law_class = calloc((size_t)n + 1, sizeof *j->law_class);
    if (!j->kc || !j->law_class) return snprintf(c->err, c->errlen, "out of memory"), -1;
    int kept = 0;
    const kt_target *t = kt_target_find(c->o->target);
    for (int i = 0; i < n; i++) {
        kt_candidate *k = &j->kc[kept];
        char why[256];
        kt_row_resources res = {all[i].threads, all[i].waves_per_simd, all[i].regs, all[i].lds_bytes};
        if (kt_variant_from_row(op, t, all[i].params, &res, &k->v, NULL, 0, why, sizeof why)) {
            fprintf(stderr, "tune: %s: kernel %s left out: %s\n", j->p->key, all[i].name, why);
            continue;
        }
        /* a kernel that cannot launch this problem at all (compiled for another head size, ...) is
         * not a candidate: verifying it would only record a wrong result */
        if (op->misfit && op->misfit(&k->v, &j->p->p, c->dev.compute_units, why, sizeof why)) continue;
        all[kept] = all[i];
        kt_law_class(all[kept].params, all[kept].template_path, j->law_class[kept], sizeof j->law_class[kept]);
        k->name = all[kept].name;
        k->law_class = j->law_class[kept];
        k->threads = all[kept].threads;
        k->regs = all[kept].regs;
        k->lds_bytes = all[kept].lds_bytes;
        k->waves_per_simd = all[kept].waves_per_simd;
        kept++;
    }
    j->ncands = kept;
    return 0;
}

static int sw_setup_jobs(sw_ctx *c, const sweep_problem *problems, int np)
{
    c->jobs = calloc((size_t)np, sizeof *c->jobs);
    if (!c->jobs) return snprintf(c->err, c->errlen, "out of memory"), -1;
    c->njobs = np;
    for (int i = 0; i < np; i++) {
        sw_job *j = &c->jobs[i];
        j->p = &problems[i];
        j->law_idx = -1;
        if (sw_job_candidates(c, j)) return -1;
        j->keep = calloc((size_t)j->ncands + 1, sizeof *j->keep);
        j->members = calloc((size_t)j->ncands + 1, sizeof *j->members);
        j->timed = calloc((size_t)j->ncands + 2, sizeof *j->timed);
        j->finalists = calloc(SW_MAX_FINALISTS + 2, sizeof *j->finalists);
        if (!j->keep || !j->members || !j->timed || !j->finalists) return snprintf(c->err, c->errlen, "out of memory"), -1;
        const kt_op *op = j->p->p.op;
        if (j->ncands == 0) {
            j->failed = 1;
            snprintf(j->fail_reason, sizeof j->fail_reason, "no compiled %s %s kernel for %s in the database",
                     op->dtypes[j->p->p.dtype], op->name, c->o->target);
            j->stage = ST_DONE;
            continue;
        }
        j->law_idx = op->law_pick(&c->dev, j->kc, j->ncands, &j->p->p);
        if (op->prune) op->prune(&c->dev, j->kc, j->ncands, &j->p->p, j->law_idx, j->keep);
        else for (int k = 0; k < j->ncands; k++) j->keep[k] = 1;
    }
    return 0;
}

static void sw_free_jobs(sw_ctx *c)
{
    for (int i = 0; i < c->njobs; i++) {
        free(c->jobs[i].cands);
        free(c->jobs[i].kc);
        free(c->jobs[i].law_class);
        free(c->jobs[i].keep);
        free(c->jobs[i].members);
        free(c->jobs[i].timed);
        free(c->jobs[i].finalists);
    }
    free(c->jobs);
}

static int sw_loop(sw_ctx *c, int gpus)
{
    sw_worker w[SW_MAX_GPUS];
    memset(w, 0, sizeof w);
    int rc = -1;
    for (int g = 0; g < gpus; g++) {
        w[g].gpu = g;
        w[g].job = -1;
        if (sw_start_worker(c, &w[g])) goto done;
    }
    double budget_s = c->o->budget_min > 0 ? c->o->budget_min * 60 : 0;
    int startup_failures = 0;
    char last_fail[512] = "";
    for (;;) {
        int over_budget = budget_s > 0 && sw_now() - c->t0 > budget_s;
        int busy = 0;
        for (int g = 0; g < gpus; g++) {
            /* hand out problems; one whose passes are all stored finishes without the GPU */
            while (w[g].job < 0 && w[g].ready && c->next_job < c->njobs && !over_budget) {
                sw_job *j = &c->jobs[c->next_job];
                w[g].job = c->next_job++;
                int r = j->stage == ST_DONE ? 1 : sw_advance(c, &w[g], j);
                if (r < 0) goto done;
                if (r == 1) { sw_finish_job(c, j); w[g].job = -1; }
            }
            busy += w[g].job >= 0;
        }
        if (!busy && (c->next_job >= c->njobs || over_budget)) break;
        struct pollfd pf[SW_MAX_GPUS];
        for (int g = 0; g < gpus; g++) pf[g] = (struct pollfd){.fd = w[g].proc.from_fd, .events = POLLIN};
        poll(pf, (nfds_t)gpus, 1000);
        for (int g = 0; g < gpus; g++) {
            if (pf[g].revents) wp_fill(&w[g].proc);
            char line[2048];
            while (wp_next_line(&w[g].proc, line, sizeof line)) {
                if (strncmp(line, "fail ", 5) == 0) snprintf(last_fail, sizeof last_fail, "%s", line + 5);
                if (sw_handle_line(c, &w[g], line)) goto done;
            }
            if (w[g].proc.eof) {
                if (!w[g].ready && ++startup_failures > 2 * gpus) {
                    snprintf(c->err, c->errlen, "the worker on GPU %d keeps failing at start: %s", g,
                             last_fail[0] ? last_fail : "(no message)");
                    goto done;
                }
                if (sw_worker_lost(c, &w[g], "crash")) goto done;
            } else if (w[g].job >= 0 && sw_now() - w[g].last_heard > c->timeout_s) {
                if (sw_worker_lost(c, &w[g], "timeout")) goto done;
            }
            /* a job whose worker gave up on it for good is finished here */
            if (w[g].job >= 0 && c->jobs[w[g].job].stage == ST_DONE && !w[g].ready) {
                sw_finish_job(c, &c->jobs[w[g].job]);
                w[g].job = -1;
            }
        }
    }
    rc = 0;
done:
    for (int g = 0; g < gpus; g++) {
        /* closing stdin ends a worker's loop; give it a moment to release the GPU, then kill */
        if (w[g].proc.to_fd >= 0) { close(w[g].proc.to_fd); w[g].proc.to_fd = -1; }
        for (int t = 0; t < 50 && w[g].proc.pid > 0 && waitpid(w[g].proc.pid, NULL, WNOHANG) == 0; t++) usleep(20000);
        wp_stop(&w[g].proc, NULL, 0);
    }
    return rc;
}

static int sw_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int sweep_run(const sweep_options *o, const sweep_problem *problems, int nproblems, sweep_outcome *out,
              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->noise_floor = NAN;
    const kt_target *t = kt_target_find(o->target);
    if (!t) return snprintf(err, errlen, "unknown target '%s'", o->target ? o->target : "(null)"), -1;
    int gpus = o->gpus > 0 ? o->gpus : 1;
    if (gpus > SW_MAX_GPUS) return snprintf(err, errlen, "--gpus %d: at most %d", gpus, SW_MAX_GPUS), -1;

    ktb_device_info info;
    memset(&info, 0, sizeof info);
    int have = 0;
    if (o->no_device) snprintf(out->no_device_reason, sizeof out->no_device_reason, "--no-device given");
    else if ((have = sw_probe(o, t, gpus, &info, out, err, errlen)) < 0) return -1;

    sw_ctx c;
    memset(&c, 0, sizeof c);
    c.o = o;
    c.out = out;
    c.err = err;
    c.errlen = errlen;
    c.t0 = sw_now();
    const char *tmo = kt_env_get("KT_WORKER_TIMEOUT_S");
    c.timeout_s = tmo && atof(tmo) > 0 ? atof(tmo) : 120;
    int rc = -1;
    /* One sweep per database at a time: two would time on the same GPU and race on the same
     * passes. The lock dies with its process, so kill -9 leaves nothing to clean up. */
    char lock_path[1100];
    snprintf(lock_path, sizeof lock_path, "%s.lock", o->db_path);
    int lock_fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd < 0) return snprintf(err, errlen, "%s: cannot create the sweep lock", lock_path), -1;
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
        close(lock_fd);
        return snprintf(err, errlen, "%s: another tune is sweeping this database (lock %s is held)", o->db_path,
                        lock_path), -1;
    }
    if (db_open(o->db_path, 1, &c.db, err, errlen)) { close(lock_fd); return -1; }

    db_device_row dr;
    if (have) {
        kt_device_key(out->device_key, sizeof out->device_key, info.arch, info.compute_units, info.pci_device_id);
        snprintf(out->device_name, sizeof out->device_name, "%s", info.name);
        out->compute_units = info.compute_units;
        dr = (db_device_row){out->device_key, t->name, info.arch, info.name, info.compute_units, info.pci_device_id,
                             info.l2_bytes};
    } else {
        kt_law_device_key(out->device_key, sizeof out->device_key, t->name);
        snprintf(out->device_name, sizeof out->device_name, "no device");
        out->compute_units = sweep_default_compute_units(t->name);
        dr = (db_device_row){out->device_key, t->name, t->name, "no device (law picks)", out->compute_units, -1, 0};
    }
    snprintf(out->mode, sizeof out->mode, "%s", have ? "sweep" : "law");
    c.dev = law_device_from_target(t, out->compute_units);
    c.spreads = calloc(4096, sizeof *c.spreads);
    if (!c.spreads) { snprintf(err, errlen, "out of memory"); goto done; }
    if (db_device_put(c.db, &dr, err, errlen)) goto done;

    db_run_row rr = {out->device_key, t->name, out->mode, o->model, o->args, o->tp, gpus};
    int resumed = 0;
    if (o->resume) {
        resumed = db_run_find_unfinished(c.db, &rr, &out->run_id, err, errlen);
        if (resumed < 0) goto done;
    }
    if (!resumed && db_run_begin(c.db, &rr, &out->run_id, err, errlen)) goto done;
    if (!o->quiet)
        printf("run %lld (%s) on %s [%s]: %d problems\n", out->run_id, resumed ? "resumed" : "new",
               out->device_name, out->device_key, nproblems);

    if (db_begin(c.db, err, errlen)) goto done;
    for (int i = 0; i < nproblems; i++) {
        const sweep_problem *p = &problems[i];
        if (db_problem_put(c.db, p->key, p->p.op->name, p->p.op->dtypes[p->p.dtype], kt_problem_phase(&p->p), err, errlen) ||
            db_run_problem_put(c.db, out->run_id, p->key, p->layers, p->calls, err, errlen)) {
            db_rollback(c.db);
            goto done;
        }
    }
    if (db_commit(c.db, err, errlen)) goto done;
    if (sw_setup_jobs(&c, problems, nproblems)) goto done;

    if (!have) {
        for (int i = 0; i < c.njobs; i++) {
            if (c.jobs[i].law_idx >= 0) { sw_law_selection(&c, &c.jobs[i], "law (no device)"); out->by_law++; }
            else out->failed++;
        }
        char note[600];
        snprintf(note, sizeof note, "no device: %s; selections are the law's picks, not measured", out->no_device_reason);
        if (db_run_finish(c.db, out->run_id, "done", NAN, note, err, errlen)) goto done;
        rc = 0;
        goto done;
    }

    if (wp_find_exe(c.exe, sizeof c.exe, err, errlen)) goto done;
    void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);   /* a dead worker's pipe must not kill tune */
    int lrc = sw_loop(&c, gpus);
    signal(SIGPIPE, old_pipe);
    out->unmeasured = c.njobs - c.finished;
    /* the problems the budget left unmeasured (a sweep that failed stores nothing more): the law's
     * pick stored for this device where it has no selection yet (a measured one is never replaced;
     * a later run measures them and overwrites), so libktrt serves them by the law and sizes its
     * workspaces for them at open: a long prefill no finished problem needed would otherwise find
     * too little */
    for (int i = 0; lrc == 0 && i < c.njobs; i++) {
        sw_job *j = &c.jobs[i];
        if (j->finished || j->law_idx < 0) continue;
        db_selection_row r;
        db_selection_text txt;
        char e[256];
        int have = db_selection_get(c.db, out->device_key, j->p->key, &r, &txt, e, sizeof e);
        if (have < 0) fprintf(stderr, "tune: %s\n", e);
        if (have != 0) continue;
        sw_law_selection(&c, j, "law (not reached)");
        out->by_law++;
    }
    if (c.nspreads > 0) {
        qsort(c.spreads, (size_t)c.nspreads, sizeof *c.spreads, sw_cmp_double);
        out->noise_floor = c.spreads[c.nspreads / 2];
    }
    char note[256];
    snprintf(note, sizeof note, "%d measured, %d failed, %d not reached%s", out->measured, out->failed,
             out->unmeasured, out->unmeasured ? " (budget)" : "");
    char e2[512];
    db_run_finish(c.db, out->run_id, lrc ? "failed" : out->unmeasured ? "interrupted" : "done", out->noise_floor,
                  lrc ? err : note, e2, sizeof e2);
    rc = lrc;
done:
    if (c.jobs) sw_free_jobs(&c);
    free(c.spreads);
    db_close(c.db);
    close(lock_fd);
    return rc;
}
