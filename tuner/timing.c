/* timing.c: graph capture, wall-clock warm-up, interleaved event-timed rounds. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "timing.h"

static double tm_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int tm_capture(ktb_backend *b, void *stream, tm_item *item, char *err, size_t errlen)
{
    item->exec = NULL;
    if (item->launches < 1) return ktb_fail(err, errlen, "timing: launches must be >= 1");
    if (ktb_graph_begin_capture(b, stream, err, errlen)) return -1;
    for (int s = 0; s < item->launches; s++) {
        if (item->enqueue(item->ctx, s, stream, err, errlen)) {
            void *junk = NULL;
            char ignored[256];
            /* end the capture so the stream is usable again; the enqueue's message stays */
            if (ktb_graph_end_capture(b, stream, &junk, ignored, sizeof ignored) == 0 && junk)
                ktb_graph_destroy(b, junk, ignored, sizeof ignored);
            return -1;
        }
    }
    return ktb_graph_end_capture(b, stream, &item->exec, err, errlen);
}

void tm_release(ktb_backend *b, tm_item *item)
{
    char ignored[256];
    if (item && item->exec) ktb_graph_destroy(b, item->exec, ignored, sizeof ignored);
    if (item) item->exec = NULL;
}

static int tm_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double tm_median(double *v, int n)
{
    if (n < 1) return 0;
    qsort(v, (size_t)n, sizeof *v, tm_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double tm_spread(double a, double b)
{
    double lo = a < b ? a : b, hi = a < b ? b : a;
    if (lo <= 0) return hi > 0 ? 1.0 : 0.0;
    return (hi - lo) / lo;
}

int tm_cold_sets(long long l2_bytes, long long bytes_per_set, int max_sets)
{
    if (bytes_per_set < 1 || l2_bytes < 1) return 1;
    long long sets = (2 * l2_bytes + bytes_per_set - 1) / bytes_per_set + 1;
    if (sets > max_sets) sets = max_sets;
    return sets < 1 ? 1 : (int)sets;
}

int tm_time_interleaved(ktb_backend *b, void *stream, tm_item *items, int n, const tm_options *o,
                        tm_result *out, char *err, size_t errlen)
{
    double warmup_ms = o && o->warmup_ms > 0 ? o->warmup_ms : 30;
    int rounds = o && o->rounds > 0 ? o->rounds : 10;
    if (n < 1) return 0;
    int rc = -1;
    void **ev = calloc((size_t)n * 2, sizeof *ev);
    double *ms = calloc((size_t)n * rounds, sizeof *ms);
    if (!ev || !ms) { ktb_fail(err, errlen, "timing: out of memory"); goto done; }
    for (int i = 0; i < 2 * n; i++)
        if (ktb_event_create(b, &ev[i], err, errlen)) goto done;

    /* Warm-up: whole rounds until the interval has passed (clocks ramp, code and TLBs load). */
    double t0 = tm_now_ms();
    do {
        for (int i = 0; i < n; i++)
            if (ktb_graph_launch(b, items[i].exec, stream, err, errlen)) goto done;
        if (ktb_sync(b, stream, err, errlen)) goto done;
    } while (tm_now_ms() - t0 < warmup_ms);

    for (int r = 0; r < rounds; r++) {
        for (int j = 0; j < n; j++) {
            int i = (j + r) % n;  /* rotate the start: no item always runs first or after the same one */
            if (ktb_event_record(b, ev[2 * i], stream, err, errlen) ||
                ktb_graph_launch(b, items[i].exec, stream, err, errlen) ||
                ktb_event_record(b, ev[2 * i + 1], stream, err, errlen))
                goto done;
        }
        if (ktb_sync(b, stream, err, errlen)) goto done;
        for (int i = 0; i < n; i++) {
            float t = 0;
            if (ktb_event_elapsed_ms(b, ev[2 * i], ev[2 * i + 1], &t, err, errlen)) goto done;
            ms[(size_t)i * rounds + r] = (double)t * 1e3 / items[i].launches; /* us per launch */
        }
    }
    for (int i = 0; i < n; i++) {
        double *v = ms + (size_t)i * rounds;
        out[i].median_us = tm_median(v, rounds); /* sorted now */
        out[i].min_us = v[0];
        out[i].max_us = v[rounds - 1];
        out[i].reps = rounds;
    }
    rc = 0;
done:
    if (ev) {
        char ignored[256];
        for (int i = 0; i < 2 * n; i++)
            if (ev[i]) ktb_event_destroy(b, ev[i], ignored, sizeof ignored);
    }
    free(ev);
    free(ms);
    return rc;
}
