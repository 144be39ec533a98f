/* timing.h: the measurement protocol of ../shared/DESIGN.md, written once for the tuner's worker
 * and for bench/. Prefix tm_.
 *
 * An item is a piece of GPU work (one kernel variant, a cuBLAS call, a copy) that the caller can
 * enqueue on a stream for buffer set s. tm_capture captures `launches` enqueues (sets 0..launches-1,
 * so a cold problem rotates through buffers larger than L2 inside one replay) into a graph;
 * tm_time_interleaved warms every graph up for a wall-clock interval, then times replays with
 * events in rounds, each round visiting every item once, starting at a different item each round
 * so no item always follows the same neighbour. Times are per launch (replay / launches). */
#ifndef KT_TIMING_H
#define KT_TIMING_H
#include <stddef.h>
#include "backend.h"

/* Enqueue one unit of work for buffer set `set` on `stream`; 0 or -1 with err filled. */
typedef int (*tm_enqueue_fn)(void *ctx, int set, void *stream, char *err, size_t errlen);

typedef struct tm_item {
    tm_enqueue_fn enqueue;
    void *ctx;
    int launches;          /* enqueues per replay (buffer sets rotated); >= 1 */
    void *exec;            /* filled by tm_capture */
} tm_item;

typedef struct tm_options {
    double warmup_ms;      /* wall-clock warm-up over all items before timing (default 30) */
    int rounds;            /* timed replays per item (default 10) */
} tm_options;

typedef struct tm_result {
    double median_us, min_us, max_us;   /* per launch */
    int reps;                            /* timed replays */
} tm_result;

/* Capture item->launches enqueues on stream into item->exec. */
int tm_capture(ktb_backend *b, void *stream, tm_item *item, char *err, size_t errlen);
/* Destroy item->exec (NULL is fine). */
void tm_release(ktb_backend *b, tm_item *item);

/* Time n captured items interleaved in rounds; out[i] for items[i]. */
int tm_time_interleaved(ktb_backend *b, void *stream, tm_item *items, int n, const tm_options *o,
                        tm_result *out, char *err, size_t errlen);

/* Buffer sets needed so that one replay streams through more than twice the L2 (cache-cold): at
 * least 1, at most max_sets. */
int tm_cold_sets(long long l2_bytes, long long bytes_per_set, int max_sets);

/* Relative spread of two medians of identical code: |a - b| / min(a, b); 0 when both are 0. */
double tm_spread(double a, double b);

/* Median of n doubles (sorts v in place); 0 when n < 1. */
double tm_median(double *v, int n);

#endif
