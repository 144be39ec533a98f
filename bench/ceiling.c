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
#define BCE_GRIDS 3                   /* blocks per SM tried, for each kernel: 2, 4, 8 */

typedef struct bce_work {
    ktb_backend *b;
    void *fn;
    unsigned blocks, threads;
    const void *args;
    size_t args_size;
} bce_work;

static int bce_enqueue(void *ctx, int set, void *stream, char *err, size_t errlen)
{
    bce_work *w = ctx;
    (void)set;   /* one buffer: it is far larger than L2 already */
    unsigned grid[3] = { w->blocks, 1, 1 }, block[3] = { w->threads, 1, 1 };
    return ktb_launch(w->b, w->fn, grid, block, 0, stream, w->args, w->args_size, err, errlen);
}

/* Loads the cubin and looks up both kernels. A missing cubin, one the driver refuses, or one
 * without a kernel leaves that kernel's handle NULL with its note saying why (not an error): the
 * ceiling is then unavailable. There is no fallback to the driver's memcpy: on an H200 it reaches
 * ~2.7 TB/s where a copy kernel reaches ~4.2, so a memcpy "ceiling" sits under what GEMMs achieve. */
static void bce_load(ktb_backend *b, const char *cubin_path, void **module, void **read_fn, void **copy_fn,
                     char *read_note, char *copy_note, size_t len)
{
    size_t n = 0;
    char msg[384];
    *module = *read_fn = *copy_fn = NULL;
    if (!cubin_path || !*cubin_path) {
        snprintf(read_note, len, "unavailable: no read cubin given");
        snprintf(copy_note, len, "unavailable: no read cubin given (its %s kernel is the copy)", KT_COPY_KERNEL);
        return;
    }
    char *image = file_read_all(cubin_path, 64u << 20, &n);
    if (!image) {
        snprintf(read_note, len, "unavailable: %s: %s (build it with `make bench-read`; needs nvcc)", cubin_path,
                 strerror(errno));
        snprintf(copy_note, len, "%s", read_note);
        return;
    }
    if (ktb_module_load(b, image, n, module, msg, sizeof msg)) {
        snprintf(read_note, len, "unavailable: %s: %s", cubin_path, msg);
        snprintf(copy_note, len, "%s", read_note);
        *module = NULL;
        free(image);
        return;
    }
    free(image);
    if (ktb_function(b, *module, KT_READ_KERNEL, read_fn, msg, sizeof msg)) {
        snprintf(read_note, len, "unavailable: %s: %s", cubin_path, msg);
        *read_fn = NULL;
    }
    if (ktb_function(b, *module, KT_COPY_KERNEL, copy_fn, msg, sizeof msg)) {
        snprintf(copy_note, len, "unavailable: %s has no %s kernel (rebuild it with `make bench-read`): %s",
                 cubin_path, KT_COPY_KERNEL, msg);
        *copy_fn = NULL;
    }
    if (!*read_fn && !*copy_fn) {
        ktb_module_unload(b, *module, msg, sizeof msg);
        *module = NULL;
    }
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

    void *buf = NULL, *sink = NULL, *module = NULL, *read_fn = NULL, *copy_fn = NULL;
    enum { NITEMS = 2 * BCE_GRIDS + 1 };
    tm_item items[NITEMS];
    bce_work work[NITEMS];
    tm_result res[NITEMS];
    int nitems = 0, rc = -1, read0 = -1, copy0 = -1;
    memset(items, 0, sizeof items);

    if (ktb_alloc(b, (size_t)bytes, &buf, err, errlen) || ktb_alloc(b, 256, &sink, err, errlen))
        goto done;
    /* Not zeros: the content does not change a read's speed on this card, but nothing is timed on
     * zeros here (METHOD.md). */
    if (ktb_memset8(b, buf, 0x5A, (size_t)bytes, err, errlen))
        goto done;
    bce_load(b, cubin_path, &module, &read_fn, &copy_fn, out->read_note, out->copy_note, sizeof out->read_note);

    /* read: the whole buffer at 2, 4, 8 blocks per SM, then the 4-per-SM grid again (the
     * identical-code control); copy: the first half into the second at 2, 4, 8 blocks per SM. */
    kt_read_args ra = { buf, (unsigned long long)bytes / 16, sink, 1u, 0 };   /* 0x5A.. never XORs to 1 */
    kt_copy_args ca = { (char *)buf + bytes / 2, buf, (unsigned long long)bytes / 2 / 16 };
    if (read_fn) {
        read0 = nitems;
        for (int g = 0; g <= BCE_GRIDS; g++) {
            int per_sm = g < BCE_GRIDS ? 2 << g : 4;
            work[nitems] = (bce_work){ b, read_fn, (unsigned)(info->compute_units * per_sm), KT_READ_THREADS, &ra, sizeof ra };
            items[nitems] = (tm_item){ bce_enqueue, &work[nitems], 2, NULL };
            nitems++;
        }
    }
    if (copy_fn) {
        copy0 = nitems;
        for (int g = 0; g < BCE_GRIDS; g++) {
            work[nitems] = (bce_work){ b, copy_fn, (unsigned)(info->compute_units * (2 << g)), KT_COPY_THREADS, &ca, sizeof ca };
            items[nitems] = (tm_item){ bce_enqueue, &work[nitems], 2, NULL };
            nitems++;
        }
    }
    for (int i = 0; i < nitems; i++)
        if (tm_capture(b, stream, &items[i], err, errlen))
            goto done;
    tm_options o = { 30, rounds };
    if (nitems && tm_time_interleaved(b, stream, items, nitems, &o, res, err, errlen))
        goto done;
    for (int g = 0; read0 >= 0 && g < BCE_GRIDS; g++) {
        double gbps = res[read0 + g].median_us > 0 ? (double)bytes / (res[read0 + g].median_us * 1e3) : 0;
        if (gbps > out->read_gbps) {
            out->read_gbps = gbps;
            out->read_blocks = (int)work[read0 + g].blocks;
        }
    }
    if (read0 >= 0)
        out->read_spread = tm_spread(res[read0 + 1].median_us, res[read0 + BCE_GRIDS].median_us);
    for (int g = 0; copy0 >= 0 && g < BCE_GRIDS; g++) {   /* half read + half written */
        double gbps = res[copy0 + g].median_us > 0 ? (double)bytes / (res[copy0 + g].median_us * 1e3) : 0;
        if (gbps > out->copy_gbps) {
            out->copy_gbps = gbps;
            out->copy_blocks = (int)work[copy0 + g].blocks;
        }
    }
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
