/* backend_cuda.c: the ktb_ vtable over the CUDA driver API (cuda_driver.h, dlopen("libcuda.so.1")).
 *
 * The backend retains the device's primary context at open (the one the CUDA runtime would use)
 * and makes it current on the calling thread before every call. */
#include "backend.h"
#include "cuda_driver.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cuda_backend {
    ktb_backend base; /* first: a ktb_backend * is a cuda_backend * */
    cudrv d;
    cudrv_device dev;
    cudrv_context ctx;
    int early;        /* programmatic dependent launch: sm_90 on and cuLaunchKernelEx */
} cuda_backend;

static const ktb_ops cuda_ops;

static cuda_backend *cb(ktb_backend *b) { return (cuda_backend *)b; }
static cudrv_deviceptr dp(const void *p) { return (cudrv_deviceptr)(uintptr_t)p; }

/* "cuda: <call>: <NAME>: <text>" into err; returns -1 (0 when r is success). */
static int cerr(cuda_backend *c, cudrv_result r, const char *call, char *err, size_t errlen)
{
    if (r == CUDRV_SUCCESS)
        return 0;
    char msg[256];
    return ktb_fail(err, errlen, "cuda: %s: %s", call, cudrv_strerror(&c->d, r, msg, sizeof msg));
}

#define CUR(c)                                                                         \
    do {                                                                               \
        cudrv_result r_ = (c)->d.ctx_set_current((c)->ctx);                            \
        if (r_ != CUDRV_SUCCESS)                                                       \
            return cerr((c), r_, "cuCtxSetCurrent", err, errlen);                      \
    } while (0)

int ktb_cuda_open(int device, ktb_backend **out, char *err, size_t errlen)
{
    *out = NULL;
    cuda_backend *c = calloc(1, sizeof *c);
    if (!c)
        return ktb_fail(err, errlen, "cuda: out of memory");
    char why[512];
    int rc = cudrv_open(&c->d, why, sizeof why);
    if (rc) {
        free(c);
        if (rc == CUDRV_OPEN_NO_LIBRARY)
            return ktb_fail(err, errlen, "cuda: no device: libcuda.so.1 not found (%s)", why);
        if (rc == CUDRV_OPEN_NO_DEVICE)
            return ktb_fail(err, errlen, "cuda: no device: %s", why);
        return ktb_fail(err, errlen, "cuda: %s", why);
    }
    cudrv_result r;
    int count = 0;
    if ((r = c->d.device_get_count(&count)) != CUDRV_SUCCESS) {
        cerr(c, r, "cuDeviceGetCount", err, errlen);
        goto fail;
    }
    if (device >= count) {
        ktb_fail(err, errlen, "cuda: no device: device %d requested, the driver reports %d", device, count);
        goto fail;
    }
    if ((r = c->d.device_get(&c->dev, device)) != CUDRV_SUCCESS) {
        cerr(c, r, "cuDeviceGet", err, errlen);
        goto fail;
    }
    if ((r = c->d.primary_ctx_retain(&c->ctx, c->dev)) != CUDRV_SUCCESS) {
        cerr(c, r, "cuDevicePrimaryCtxRetain", err, errlen);
        goto fail;
    }
    c->base.ops = &cuda_ops;
    /* an early launch captured into a graph keeps its edge from driver 12.3 on */
    int major = 0, version = 0;
    c->early = c->d.launch_kernel_ex && c->d.driver_get_version(&version) == CUDRV_SUCCESS && version >= 12030 &&
               c->d.device_get_attribute(&major, CUDRV_ATTR_COMPUTE_CAPABILITY_MAJOR, c->dev) == CUDRV_SUCCESS &&
               major >= 9;
    c->base.device = device;
    *out = &c->base;
    return 0;
fail:
    cudrv_close(&c->d);
    free(c);
    return -1;
}

static void cuda_close(ktb_backend *b)
{
    cuda_backend *c = cb(b);
    if (c->ctx) {
        c->d.ctx_set_current(NULL);
        c->d.primary_ctx_release(c->dev);
    }
    cudrv_close(&c->d);
    free(c);
}

static int cuda_info(ktb_backend *b, ktb_device_info *info, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    cudrv_result r;
    int major = 0, minor = 0, sms = 0, l2 = 0, bus = 0, warp = 0;
    size_t mem = 0;
    char busid[64] = "";
    if ((r = c->d.device_get_name(info->name, (int)sizeof info->name, c->dev)) != CUDRV_SUCCESS)
        return cerr(c, r, "cuDeviceGetName", err, errlen);
    static const struct { int attr; const char *what; size_t off; } attrs[] = {
        { CUDRV_ATTR_COMPUTE_CAPABILITY_MAJOR, "COMPUTE_CAPABILITY_MAJOR", 0 },
        { CUDRV_ATTR_COMPUTE_CAPABILITY_MINOR, "COMPUTE_CAPABILITY_MINOR", 1 },
        { CUDRV_ATTR_MULTIPROCESSOR_COUNT, "MULTIPROCESSOR_COUNT", 2 },
        { CUDRV_ATTR_L2_CACHE_SIZE, "L2_CACHE_SIZE", 3 },
        { CUDRV_ATTR_PCI_BUS_ID, "PCI_BUS_ID", 4 },
        { CUDRV_ATTR_WARP_SIZE, "WARP_SIZE", 5 },
    };
    int *dst[] = { &major, &minor, &sms, &l2, &bus, &warp };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((r = c->d.device_get_attribute(dst[attrs[i].off], attrs[i].attr, c->dev)) != CUDRV_SUCCESS) {
            char call[96];
            snprintf(call, sizeof call, "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_%s)", attrs[i].what);
            return cerr(c, r, call, err, errlen);
        }
    if ((r = c->d.device_total_mem(&mem, c->dev)) != CUDRV_SUCCESS)
        return cerr(c, r, "cuDeviceTotalMem", err, errlen);
    /* The PCI product id: CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID is the device (slot) number on the
     * bus, not the product id, and the driver API has no product id at all (NVML does). So the
     * bus address goes to sysfs; where that fails pci_device_id stays -1 (see backend.h). */
    if (c->d.device_get_pci_bus_id(busid, (int)sizeof busid, c->dev) == CUDRV_SUCCESS) {
        info->pci_device_id = ktb_pci_product_id(busid, sizeof busid);
        snprintf(info->pci_address, sizeof info->pci_address, "%s", busid);
    }
    snprintf(info->arch, sizeof info->arch, "sm_%d%d", major, minor);
    info->compute_units = sms;
    info->l2_bytes = l2;
    info->pci_bus_id = bus;
    info->global_mem_bytes = (long long)mem;
    info->wave_size = warp;
    return 0;
}

static int cuda_module_load(ktb_backend *b, const void *image, size_t len, void **module, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    cudrv_module m = NULL;
    (void)len; /* cuModuleLoadData reads the length from the ELF/fatbin headers */
    int rc = cerr(c, c->d.module_load_data(&m, image), "cuModuleLoadData", err, errlen);
    *module = m;
    return rc;
}

static int cuda_module_unload(ktb_backend *b, void *module, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.module_unload((cudrv_module)module), "cuModuleUnload", err, errlen);
}

static int cuda_function(ktb_backend *b, void *module, const char *name, void **fn, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    cudrv_function f = NULL;
    cudrv_result r = c->d.module_get_function(&f, (cudrv_module)module, name);
    if (r != CUDRV_SUCCESS) {
        char call[320];
        snprintf(call, sizeof call, "cuModuleGetFunction(\"%.256s\")", name);
        return cerr(c, r, call, err, errlen);
    }
    /* staged kernels take their shared memory at launch, beyond the 48 KiB a launch gets unasked */
    r = cudrv_allow_dynamic_shared(&c->d, f, c->dev);
    if (r != CUDRV_SUCCESS) {
        char call[320];
        snprintf(call, sizeof call, "cuFuncSetAttribute(\"%.256s\", MAX_DYNAMIC_SHARED_SIZE_BYTES)", name);
        return cerr(c, r, call, err, errlen);
    }
    *fn = f;
    return 0;
}

static int cuda_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                       unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                       char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    /* One by-value struct parameter: kernelParams[0] points at it. A kernel without parameters
     * gets a NULL kernelParams. */
    void *params[1] = { (void *)args };
    return cerr(c, c->d.launch_kernel((cudrv_function)fn, grid[0], grid[1], grid[2], block[0], block[1],
                                      block[2], shared_bytes, (cudrv_stream)stream,
                                      args_size ? params : NULL, NULL),
                "cuLaunchKernel", err, errlen);
}

static int cuda_launch_early(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                             unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                             char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    if (!c->early) return cuda_launch(b, fn, grid, block, shared_bytes, stream, args, args_size, err, errlen);
    CUR(c);
    cudrv_launch_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CUDRV_LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.v.value = 1;
    const cudrv_launch_config cfg = {grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes,
                                     (cudrv_stream)stream, &attr, 1};
    void *params[1] = { (void *)args };
    cudrv_result r = c->d.launch_kernel_ex(&cfg, (cudrv_function)fn, args_size ? params : NULL, NULL);
    if (r == CUDRV_ERROR_NOT_SUPPORTED) {   /* the attribute refused here: stream order is always right */
        c->early = 0;
        return cuda_launch(b, fn, grid, block, shared_bytes, stream, args, args_size, err, errlen);
    }
    return cerr(c, r, "cuLaunchKernelEx (programmatic stream serialization)", err, errlen);
}

static int cuda_alloc(ktb_backend *b, size_t bytes, void **dptr, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    cudrv_deviceptr p = 0;
    char call[64];
    snprintf(call, sizeof call, "cuMemAlloc(%zu)", bytes);
    int rc = cerr(c, c->d.mem_alloc(&p, bytes), call, err, errlen);
    *dptr = (void *)(uintptr_t)p;
    return rc;
}

static int cuda_free(ktb_backend *b, void *dptr, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.mem_free(dp(dptr)), "cuMemFree", err, errlen);
}

static int cuda_copy_h2d(ktb_backend *b, void *dptr, const void *src, size_t bytes, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    int rc = cerr(c, c->d.memcpy_htod(dp(dptr), src, bytes), "cuMemcpyHtoD", err, errlen);
    /* From pageable memory cuMemcpyHtoD may return once the bytes are staged, before the DMA has
     * landed; a kernel on a non-blocking stream could then read the old contents (the sweep's
     * in-place operands, restored before each verification, did: H200, rmsnorm_add rows 64-256).
     * The contract is synchronous. */
    return rc ? rc : cerr(c, c->d.ctx_synchronize(), "cuCtxSynchronize", err, errlen);
}

static int cuda_copy_d2h(ktb_backend *b, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.memcpy_dtoh(dst, dp(dptr), bytes), "cuMemcpyDtoH", err, errlen);
}

static int cuda_memset8(ktb_backend *b, void *dptr, unsigned char value, size_t bytes, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    int rc = cerr(c, c->d.memset_d8(dp(dptr), value, bytes), "cuMemsetD8", err, errlen);
    /* cuMemsetD8 may return before the device has written; the contract is synchronous. */
    return rc ? rc : cerr(c, c->d.ctx_synchronize(), "cuCtxSynchronize", err, errlen);
}

static int cuda_copy_d2d_async(ktb_backend *b, void *dst, const void *src, size_t bytes, void *stream,
                               char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.memcpy_dtod_async(dp(dst), dp(src), bytes, (cudrv_stream)stream), "cuMemcpyDtoDAsync",
                err, errlen);
}

static int cuda_stream_create(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    cudrv_stream s = NULL;
    int rc = cerr(c, c->d.stream_create(&s, CUDRV_STREAM_NON_BLOCKING), "cuStreamCreate", err, errlen);
    *stream = s;
    return rc;
}

static int cuda_lane_create(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    int least = 0, greatest = 0;
    int rc = cerr(c, c->d.ctx_get_stream_priority_range(&least, &greatest), "cuCtxGetStreamPriorityRange", err, errlen);
    if (rc)
        return rc;
    cudrv_stream s = NULL;
    rc = cerr(c, c->d.stream_create_with_priority(&s, CUDRV_STREAM_NON_BLOCKING, greatest), "cuStreamCreateWithPriority",
              err, errlen);
    *stream = s;
    return rc;
}

static int cuda_stream_wait(ktb_backend *b, void *stream, void *event, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.stream_wait_event((cudrv_stream)stream, (cudrv_event)event, 0), "cuStreamWaitEvent", err,
                errlen);
}

static int cuda_stream_destroy(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.stream_destroy((cudrv_stream)stream), "cuStreamDestroy", err, errlen);
}

static int cuda_sync(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.stream_synchronize((cudrv_stream)stream), "cuStreamSynchronize", err, errlen);
}

static int cuda_event_create(ktb_backend *b, void **event, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    cudrv_event e = NULL;
    int rc = cerr(c, c->d.event_create(&e, CUDRV_EVENT_DEFAULT), "cuEventCreate", err, errlen);
    *event = e;
    return rc;
}

static int cuda_event_record(ktb_backend *b, void *event, void *stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.event_record((cudrv_event)event, (cudrv_stream)stream), "cuEventRecord", err, errlen);
}

static int cuda_event_elapsed_ms(ktb_backend *b, void *start, void *end, float *ms, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    int rc = cerr(c, c->d.event_synchronize((cudrv_event)end), "cuEventSynchronize", err, errlen);
    if (rc)
        return rc;
    return cerr(c, c->d.event_elapsed_time(ms, (cudrv_event)start, (cudrv_event)end), "cuEventElapsedTime",
                err, errlen);
}

static int cuda_event_destroy(ktb_backend *b, void *event, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.event_destroy((cudrv_event)event), "cuEventDestroy", err, errlen);
}

static int cuda_graph_begin_capture(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.stream_begin_capture((cudrv_stream)stream, CUDRV_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "cuStreamBeginCapture", err, errlen);
}

static int cuda_graph_end_capture(ktb_backend *b, void *stream, void **exec, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    cudrv_graph g = NULL;
    int rc = cerr(c, c->d.stream_end_capture((cudrv_stream)stream, &g), "cuStreamEndCapture", err, errlen);
    if (rc)
        return rc;
    cudrv_graph_exec x = NULL;
    /* node priorities kept: a plan's lane 1 (ktb_lane_create) is captured at its stream's priority */
    rc = cerr(c, c->d.graph_instantiate(&x, g, CUDRV_GRAPH_INSTANTIATE_USE_NODE_PRIORITY), "cuGraphInstantiateWithFlags",
              err, errlen);
    c->d.graph_destroy(g); /* the exec is independent of the graph it came from */
    *exec = rc ? NULL : x;
    return rc;
}

static int cuda_graph_launch(ktb_backend *b, void *exec, void *stream, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.graph_launch((cudrv_graph_exec)exec, (cudrv_stream)stream), "cuGraphLaunch", err, errlen);
}

static int cuda_graph_destroy(ktb_backend *b, void *exec, char *err, size_t errlen)
{
    cuda_backend *c = cb(b);
    CUR(c);
    return cerr(c, c->d.graph_exec_destroy((cudrv_graph_exec)exec), "cuGraphExecDestroy", err, errlen);
}

static const ktb_ops cuda_ops = {
    .vendor = "cuda",
    .close = cuda_close,
    .info = cuda_info,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .function = cuda_function,
    .launch = cuda_launch,
    .launch_early = cuda_launch_early,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .copy_h2d = cuda_copy_h2d,
    .copy_d2h = cuda_copy_d2h,
    .memset8 = cuda_memset8,
    .copy_d2d_async = cuda_copy_d2d_async,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .sync = cuda_sync,
    .event_create = cuda_event_create,
    .event_record = cuda_event_record,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .event_destroy = cuda_event_destroy,
    .lane_create = cuda_lane_create,
    .stream_wait = cuda_stream_wait,
    .graph_begin_capture = cuda_graph_begin_capture,
    .graph_end_capture = cuda_graph_end_capture,
    .graph_launch = cuda_graph_launch,
    .graph_destroy = cuda_graph_destroy,
};
