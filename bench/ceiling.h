/* ceiling.h: the two memory ceilings bench_gemm measures in its own run, on its own card, with the
 * same protocol as the GEMMs (graphs, warm-up, interleaved event-timed rounds, tuner/timing.h):
 *   read  bench/read.cu over a buffer many times the L2: bytes read / time;
 *   copy  bench/read.cu's copy kernel, half that buffer into the other half: (read + write) / time,
 *         the usual way to count a copy (METHOD.md). A kernel, not the driver's memcpy: on an
 *         H200 cuMemcpyDtoDAsync reaches ~2.7 TB/s where a copy kernel reaches ~4.2, and a
 *         decode GEMM above the memcpy figure read as "more than 100 % of copy".
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
    double copy_gbps;           /* 0 when unavailable */
    int copy_blocks;            /* the grid that gave it */
    char read_note[512];        /* why the read ceiling is unavailable, else "" */
    char copy_note[512];        /* why the copy ceiling is unavailable, else "" */
} bce_ceilings;

/* Measures both on stream. Both kernels come from cubin_path: a missing or unloadable cubin, or one
 * without the kernel, leaves that figure 0 with its note saying why ("unavailable: ..."), and is
 * not an error; nothing falls back to a driver copy. Returns 0, or -1 with err
 * when the buffer cannot be allocated or timing fails. */
int bce_measure(ktb_backend *b, void *stream, const ktb_device_info *info, const char *cubin_path, int rounds,
                bce_ceilings *out, char *err, size_t errlen);

#endif
