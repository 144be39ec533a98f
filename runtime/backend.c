/* backend.c: ktb_open's vendor choice, the NULL-checked vtable dispatch, shared helpers.
 * See backend.h. */
#include "backend.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int ktb_fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

int ktb_open(const char *vendor, int device, ktb_backend **out, char *err, size_t errlen)
{
    if (!out)
        return ktb_fail(err, errlen, "ktb_open: NULL out pointer");
    *out = NULL;
    if (!vendor)
        return ktb_fail(err, errlen, "ktb_open: NULL vendor (want \"cuda\" or \"hip\")");
    if (device < 0)
        return ktb_fail(err, errlen, "%s: device %d: ordinal must be >= 0", vendor, device);
    if (!strcmp(vendor, "cuda"))
        return ktb_cuda_open(device, out, err, errlen);
    if (!strcmp(vendor, "hip"))
        return ktb_hip_open(device, out, err, errlen);
    return ktb_fail(err, errlen, "ktb_open: unknown vendor \"%s\" (want \"cuda\" or \"hip\")", vendor);
}

void ktb_close(ktb_backend *b)
{
    if (b && b->ops)
        b->ops->close(b);
}

const char *ktb_vendor(const ktb_backend *b)
{
    return b && b->ops ? b->ops->vendor : NULL;
}

#define KTB_CHECK(name)                                                                  \
    if (!b || !b->ops)                                                                   \
        return ktb_fail(err, errlen, "ktb: " #name ": NULL backend")

int ktb_info(ktb_backend *b, ktb_device_info *info, char *err, size_t errlen)
{
    KTB_CHECK(ktb_info);
    if (!info)
        return ktb_fail(err, errlen, "%s: ktb_info: NULL info", b->ops->vendor);
    memset(info, 0, sizeof *info);
    info->pci_device_id = -1;
    return b->ops->info(b, info, err, errlen);
}

int ktb_module_load(ktb_backend *b, const void *image, size_t len, void **module, char *err, size_t errlen)
{
    KTB_CHECK(ktb_module_load);
    if (!image || !len || !module)
        return ktb_fail(err, errlen, "%s: ktb_module_load: NULL or empty image or NULL module", b->ops->vendor);
    *module = NULL;
    return b->ops->module_load(b, image, len, module, err, errlen);
}

int ktb_module_unload(ktb_backend *b, void *module, char *err, size_t errlen)
{
    KTB_CHECK(ktb_module_unload);
    if (!module)
        return 0;
    return b->ops->module_unload(b, module, err, errlen);
}

int ktb_function(ktb_backend *b, void *module, const char *name, void **fn, char *err, size_t errlen)
{
    KTB_CHECK(ktb_function);
    if (!module || !name || !fn)
        return ktb_fail(err, errlen, "%s: ktb_function: NULL module, name or fn", b->ops->vendor);
    *fn = NULL;
    return b->ops->function(b, module, name, fn, err, errlen);
}

int ktb_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
               unsigned shared_bytes, void *stream, const void *args, size_t args_size,
               char *err, size_t errlen)
{
    KTB_CHECK(ktb_launch);
    if (!fn || !grid || !block || (args_size && !args))
        return ktb_fail(err, errlen, "%s: ktb_launch: NULL fn, grid, block or args", b->ops->vendor);
    return b->ops->launch(b, fn, grid, block, shared_bytes, stream, args, args_size, err, errlen);
}

int ktb_launch_early(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                     unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                     char *err, size_t errlen)
{
    KTB_CHECK(ktb_launch_early);
    if (!fn || !grid || !block || (args_size && !args))
        return ktb_fail(err, errlen, "%s: ktb_launch_early: NULL fn, grid, block or args", b->ops->vendor);
    if (!b->ops->launch_early)
        return b->ops->launch(b, fn, grid, block, shared_bytes, stream, args, args_size, err, errlen);
    return b->ops->launch_early(b, fn, grid, block, shared_bytes, stream, args, args_size, err, errlen);
}

int ktb_alloc(ktb_backend *b, size_t bytes, void **dptr, char *err, size_t errlen)
{
    KTB_CHECK(ktb_alloc);
    if (!dptr)
        return ktb_fail(err, errlen, "%s: ktb_alloc: NULL dptr", b->ops->vendor);
    *dptr = NULL;
    return b->ops->alloc(b, bytes, dptr, err, errlen);
}

int ktb_free(ktb_backend *b, void *dptr, char *err, size_t errlen)
{
    KTB_CHECK(ktb_free);
    if (!dptr)
        return 0;
    return b->ops->free(b, dptr, err, errlen);
}

int ktb_copy_h2d(ktb_backend *b, void *dptr, const void *src, size_t bytes, char *err, size_t errlen)
{
    KTB_CHECK(ktb_copy_h2d);
    if (!bytes)
        return 0;
    if (!dptr || !src)
        return ktb_fail(err, errlen, "%s: ktb_copy_h2d: NULL pointer", b->ops->vendor);
    return b->ops->copy_h2d(b, dptr, src, bytes, err, errlen);
}

int ktb_copy_d2h(ktb_backend *b, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen)
{
    KTB_CHECK(ktb_copy_d2h);
    if (!bytes)
        return 0;
    if (!dptr || !dst)
        return ktb_fail(err, errlen, "%s: ktb_copy_d2h: NULL pointer", b->ops->vendor);
    return b->ops->copy_d2h(b, dst, dptr, bytes, err, errlen);
}

int ktb_memset8(ktb_backend *b, void *dptr, unsigned char value, size_t bytes, char *err, size_t errlen)
{
    KTB_CHECK(ktb_memset8);
    if (!bytes)
        return 0;
    if (!dptr)
        return ktb_fail(err, errlen, "%s: ktb_memset8: NULL pointer", b->ops->vendor);
    return b->ops->memset8(b, dptr, value, bytes, err, errlen);
}

int ktb_copy_d2d_async(ktb_backend *b, void *dst, const void *src, size_t bytes, void *stream,
                       char *err, size_t errlen)
{
    KTB_CHECK(ktb_copy_d2d_async);
    if (!bytes)
        return 0;
    if (!dst || !src)
        return ktb_fail(err, errlen, "%s: ktb_copy_d2d_async: NULL pointer", b->ops->vendor);
    return b->ops->copy_d2d_async(b, dst, src, bytes, stream, err, errlen);
}

int ktb_stream_create(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_stream_create);
    if (!stream)
        return ktb_fail(err, errlen, "%s: ktb_stream_create: NULL stream", b->ops->vendor);
    *stream = NULL;
    return b->ops->stream_create(b, stream, err, errlen);
}

int ktb_stream_destroy(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_stream_destroy);
    if (!stream)
        return 0; /* the default stream is not ours to destroy */
    return b->ops->stream_destroy(b, stream, err, errlen);
}

int ktb_sync(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_sync);
    return b->ops->sync(b, stream, err, errlen);
}

int ktb_lane_create(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_lane_create);
    if (!stream)
        return ktb_fail(err, errlen, "%s: ktb_lane_create: NULL stream", b->ops->vendor);
    *stream = NULL;
    return b->ops->lane_create(b, stream, err, errlen);
}

int ktb_stream_wait(ktb_backend *b, void *stream, void *event, char *err, size_t errlen)
{
    KTB_CHECK(ktb_stream_wait);
    if (!event)
        return ktb_fail(err, errlen, "%s: ktb_stream_wait: NULL event", b->ops->vendor);
    return b->ops->stream_wait(b, stream, event, err, errlen);
}

int ktb_event_create(ktb_backend *b, void **event, char *err, size_t errlen)
{
    KTB_CHECK(ktb_event_create);
    if (!event)
        return ktb_fail(err, errlen, "%s: ktb_event_create: NULL event", b->ops->vendor);
    *event = NULL;
    return b->ops->event_create(b, event, err, errlen);
}

int ktb_event_record(ktb_backend *b, void *event, void *stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_event_record);
    if (!event)
        return ktb_fail(err, errlen, "%s: ktb_event_record: NULL event", b->ops->vendor);
    return b->ops->event_record(b, event, stream, err, errlen);
}

int ktb_event_elapsed_ms(ktb_backend *b, void *start, void *end, float *ms, char *err, size_t errlen)
{
    KTB_CHECK(ktb_event_elapsed_ms);
    if (!start || !end || !ms)
        return ktb_fail(err, errlen, "%s: ktb_event_elapsed_ms: NULL event or ms", b->ops->vendor);
    return b->ops->event_elapsed_ms(b, start, end, ms, err, errlen);
}

int ktb_event_destroy(ktb_backend *b, void *event, char *err, size_t errlen)
{
    KTB_CHECK(ktb_event_destroy);
    if (!event)
        return 0;
    return b->ops->event_destroy(b, event, err, errlen);
}

int ktb_graph_begin_capture(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_graph_begin_capture);
    if (!stream)
        return ktb_fail(err, errlen, "%s: ktb_graph_begin_capture: the default stream cannot be captured; "
                        "use ktb_stream_create", b->ops->vendor);
    return b->ops->graph_begin_capture(b, stream, err, errlen);
}

int ktb_graph_end_capture(ktb_backend *b, void *stream, void **exec, char *err, size_t errlen)
{
    KTB_CHECK(ktb_graph_end_capture);
    if (!stream || !exec)
        return ktb_fail(err, errlen, "%s: ktb_graph_end_capture: NULL stream or exec", b->ops->vendor);
    *exec = NULL;
    return b->ops->graph_end_capture(b, stream, exec, err, errlen);
}

int ktb_graph_launch(ktb_backend *b, void *exec, void *stream, char *err, size_t errlen)
{
    KTB_CHECK(ktb_graph_launch);
    if (!exec)
        return ktb_fail(err, errlen, "%s: ktb_graph_launch: NULL exec", b->ops->vendor);
    return b->ops->graph_launch(b, exec, stream, err, errlen);
}

int ktb_graph_destroy(ktb_backend *b, void *exec, char *err, size_t errlen)
{
    KTB_CHECK(ktb_graph_destroy);
    if (!exec)
        return 0;
    return b->ops->graph_destroy(b, exec, err, errlen);
}

int ktb_pci_product_id(char *address, size_t len)
{
    unsigned dom = 0, bus = 0, slot = 0, fn = 0;
    if (!address || sscanf(address, "%x:%x:%x.%x", &dom, &bus, &slot, &fn) != 4)
        return -1;
    /* The drivers may spell the domain with 8 digits or in upper case; sysfs uses 4, lower. */
    snprintf(address, len, "%04x:%02x:%02x.%x", dom & 0xffff, bus, slot, fn);
    char path[96];
    snprintf(path, sizeof path, "/sys/bus/pci/devices/%04x:%02x:%02x.%x/device", dom & 0xffff, bus, slot, fn);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    unsigned id = 0;
    int ok = fscanf(f, "%x", &id) == 1;
    fclose(f);
    return ok ? (int)id : -1;
}
