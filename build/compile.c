/* compile.c: a small process pool. Compilers are separate processes, so a crashing compiler
 * fails one job and nothing else. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "compile.h"

extern char **environ;

typedef struct build_slot {
    pid_t pid;
    int job;
    int step;
    double started;
} build_slot;

static double build_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int build_default_parallelism(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static pid_t build_spawn(build_job *job, int step)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    posix_spawn_file_actions_init(&fa);
    /* the first step truncates the log, later steps append to it */
    int flags = O_WRONLY | O_CREAT | (step == 0 ? O_TRUNC : O_APPEND);
    posix_spawn_file_actions_addopen(&fa, 1, job->log, flags, 0666);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    int rc = posix_spawn(&pid, job->steps.argv[step][0], &fa, NULL, job->steps.argv[step], environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        FILE *f = fopen(job->log, step == 0 ? "w" : "a");
        if (f) { fprintf(f, "cannot start %s: %s\n", job->steps.argv[step][0], strerror(rc)); fclose(f); }
        return -1;
    }
    return pid;
}

/* One rewritten line on a terminal; in a log, a line per tenth of the work. */
static void build_progress(int done, int total, int failed, double t0, const char *label)
{
    static int tty = -1;
    if (tty < 0) tty = isatty(2);
    if (!tty && done != total && done * 10 / total == (done - 1) * 10 / total) return;
    double el = build_now() - t0;
    double eta = done ? el / done * (total - done) : 0;
    fprintf(stderr, "%s  compiling %d/%d (%d failed)  %.0fs elapsed, ETA %.0fs  %-60.60s%s", tty ? "\r" : "", done, total,
            failed, el, eta, label ? label : "", tty && done != total ? "" : "\n");
    fflush(stderr);
}

int build_run_jobs(build_job *jobs, int njobs, int parallel, int quiet)
{
    if (parallel < 1) parallel = 1;
    build_slot *slots = calloc((size_t)parallel, sizeof *slots);
    if (!slots) return njobs;
    int next = 0, running = 0, done = 0, failed = 0;
    double t0 = build_now();
    for (int i = 0; i < njobs; i++) jobs[i].status = -1;
    while (done < njobs) {
        while (running < parallel && next < njobs) {
            int s = 0;
            while (slots[s].pid) s++;
            build_job *job = &jobs[next];
            pid_t pid = build_spawn(job, 0);
            if (pid < 0) { job->status = 127; failed++; done++; next++; continue; }
            slots[s] = (build_slot){pid, next, 0, build_now()};
            running++;
            next++;
        }
        if (!running) continue;
        int status;
        pid_t pid = waitpid(-1, &status, 0);
        if (pid < 0) { if (errno == EINTR) continue; break; }
        int s = 0;
        while (s < parallel && slots[s].pid != pid) s++;
        if (s == parallel) continue;   /* not ours */
        build_job *job = &jobs[slots[s].job];
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        job->killed = WIFSIGNALED(status);
        if (code == 0 && slots[s].step + 1 < job->steps.nsteps) {
            slots[s].step++;
            pid_t np = build_spawn(job, slots[s].step);
            if (np > 0) { slots[s].pid = np; continue; }
            code = 127;
        }
        job->status = code;
        job->seconds = build_now() - slots[s].started;
        slots[s].pid = 0;
        running--;
        done++;
        if (code) failed++;
        if (!quiet) build_progress(done, njobs, failed, t0, job->label);
    }
    free(slots);
    return failed;
}
