/* ceiling.h: the two memory ceilings bench_gemm measures in its own run, on its own card, with the
 * same protocol as the GEMMs (graphs, warm-up, interleaved event-timed rounds, tuner/timing.h):
 *   read  bench/read.cu over a buffer many times the L2: bytes read / time;
 *   copy  a device-to-device copy of half that buffer into the other half: (read + write) / time,
 *         the usual way to count a copy (METHOD.md).
 * A GEMM's compulsory bytes over its time, against these, says how close a memory-bound shape is to
 * the wall. Prefix bce_. */
#ifndef KT_BENCH_CEILING_H
#define KT_BENCH_CEILING_H
#include <stddef.h>
#include "backend.h"

typedef struct bce_ceilings {
    long long buffer_bytes;     /* the buffer read (the copy moves half of it each way) */
    double read_gbps;           /* best of the read kernel's grid shapes; 0 when unavailable */
    int read_blocks;            /* the grid that gave it */
    double read_spread;         /* identical-code control of the best grid: relative spread */
    double copy_gbps;           /* 0 when the copy failed */
    char read_note[512];        /* why the read ceiling is unavailable, else "" */
    char copy_note[512];
} bce_ceilings;

/* Measures both on stream. The read kernel comes from cubin_path (a missing or unloadable cubin
 * leaves read_gbps 0 with read_note saying why, and is not an error). Returns 0, or -1 with err
 * when the buffer cannot be allocated or timing fails. */
int bce_measure(ktb_backend *b, void *stream, const ktb_device_info *info, const char *cubin_path, int rounds,
                bce_ceilings *out, char *err, size_t errlen);

#endif
