/* ceiling.c: see ceiling.h. */
#include "ceiling.h"
#include "read.h"
#include "timing.h"
#include "file_io.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BCE_MIN_BYTES (1ll << 30)     /* 1 GiB: ~18x an H200's L2, so nothing is served from it */
#define BCE_READ_GRIDS 3              /* blocks per SM tried: 2, 4, 8 */

typedef struct bce_work {
    ktb_backend *b;
    void *fn;                         /* read kernel, or NULL for the copy */
    unsigned blocks;
    kt_read_args args;
    void *dst;
    const void *src;
    size_t bytes;
} bce_work;

static int bce_enqueue(void *ctx, int set, void *stream, char *err, size_t errlen)
{
    bce_work *w = ctx;
    (void)set;   /* one buffer: it is far larger than L2 already */
    if (!w->fn)
        return ktb_copy_d2d_async(w->b, w->dst, w->src, w->bytes, stream, err, errlen);
    unsigned grid[3] = { w->blocks, 1, 1 }, block[3] = { KT_READ_THREADS, 1, 1 };
    return ktb_launch(w->b, w->fn, grid, block, 0, stream, &w->args, sizeof w->args, err, errlen);
}

/* Loads the read kernel; on failure note says why and *fn stays NULL (not an error). */
static void bce_load_read(ktb_backend *b, const char *cubin_path, void **module, void **fn, char *note, size_t len)
{
    size_t n = 0;
    char msg[384];
    *module = *fn = NULL;
    if (!cubin_path || !*cubin_path) {
        snprintf(note, len, "unavailable: no read cubin given");
        return;
    }
    char *image = file_read_all(cubin_path, 64u << 20, &n);
    if (!image) {
        snprintf(note, len, "unavailable: %s: %s (build it with `make bench-read`; needs nvcc)", cubin_path,
                 strerror(errno));
        return;
    }
    if (ktb_module_load(b, image, n, module, msg, sizeof msg) ||
        ktb_function(b, *module, KT_READ_KERNEL, fn, msg, sizeof msg)) {
        snprintf(note, len, "unavailable: %s: %s", cubin_path, msg);
        if (*module)
            ktb_module_unload(b, *module, msg, sizeof msg);
        *module = *fn = NULL;
    }
    free(image);
}

int bce_measure(ktb_backend *b, void *stream, const ktb_device_info *info, const char *cubin_path, int rounds,
                bce_ceilings *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    long long bytes = info->l2_bytes * 16 > BCE_MIN_BYTES ? info->l2_bytes * 16 : BCE_MIN_BYTES;
    if (info->global_mem_bytes > 0 && bytes > info->global_mem_bytes / 4)
        bytes = info->global_mem_bytes / 4;
    bytes &= ~255ll;   /* both copy halves 128-byte aligned */
    out->buffer_bytes = bytes;

    void *buf = NULL, *sink = NULL, *module = NULL, *fn = NULL;
    tm_item items[2 + BCE_READ_GRIDS];
    bce_work work[2 + BCE_READ_GRIDS];
    tm_result res[2 + BCE_READ_GRIDS];
    int nitems = 0, rc = -1;
    memset(items, 0, sizeof items);

    if (ktb_alloc(b, (size_t)bytes, &buf, err, errlen) || ktb_alloc(b, 256, &sink, err, errlen))
        goto done;
    /* Not zeros: the content does not change a read's speed on this card, but nothing is timed on
     * zeros here (METHOD.md). */
    if (ktb_memset8(b, buf, 0x5A, (size_t)bytes, err, errlen))
        goto done;
    bce_load_read(b, cubin_path, &module, &fn, out->read_note, sizeof out->read_note);

    /* item 0: the copy; 1..GRIDS: the read kernel at 2, 4, 8 blocks per SM; last: the 4-per-SM
     * grid again, the identical-code control. */
    work[nitems] = (bce_work){ b, NULL, 0, { 0 }, (char *)buf + bytes / 2, buf, (size_t)(bytes / 2) };
    items[nitems] = (tm_item){ bce_enqueue, &work[nitems], 2, NULL };
    nitems++;
    if (fn) {
        for (int g = 0; g <= BCE_READ_GRIDS; g++) {
            int per_sm = g < BCE_READ_GRIDS ? 2 << g : 4;
            kt_read_args a = { buf, (unsigned long long)bytes / 16, sink, 1u, 0 };  /* 0x5A.. never XORs to 1 */
            work[nitems] = (bce_work){ b, fn, (unsigned)(info->compute_units * per_sm), a, NULL, NULL, 0 };
            items[nitems] = (tm_item){ bce_enqueue, &work[nitems], 2, NULL };
            nitems++;
        }
    }
    for (int i = 0; i < nitems; i++)
        if (tm_capture(b, stream, &items[i], err, errlen)) {
            if (i == 0) {   /* the copy: report, and go on without it */
                snprintf(out->copy_note, sizeof out->copy_note, "unavailable: %s", err);
                continue;
            }
            goto done;
        }
    /* A copy that failed to capture is left out of the timing. */
    int first = items[0].exec ? 0 : 1;
    tm_options o = { 30, rounds };
    if (nitems > first && tm_time_interleaved(b, stream, items + first, nitems - first, &o, res + first, err, errlen))
        goto done;
    if (items[0].exec && res[0].median_us > 0)
        out->copy_gbps = (double)bytes / (res[0].median_us * 1e3);   /* half read + half written */
    for (int g = 0; fn && g < BCE_READ_GRIDS; g++) {
        double gbps = res[1 + g].median_us > 0 ? (double)bytes / (res[1 + g].median_us * 1e3) : 0;
        if (gbps > out->read_gbps) {
            out->read_gbps = gbps;
            out->read_blocks = (int)work[1 + g].blocks;
        }
    }
    if (fn)
        out->read_spread = tm_spread(res[2].median_us, res[1 + BCE_READ_GRIDS].median_us);
    rc = 0;
done:
    for (int i = 0; i < nitems; i++)
        tm_release(b, &items[i]);
    char ignored[256];
    if (module)
        ktb_module_unload(b, module, ignored, sizeof ignored);
    ktb_free(b, sink, ignored, sizeof ignored);
    ktb_free(b, buf, ignored, sizeof ignored);
    return rc;
}
