/* backend_hip.c: the ktb_ vtable over the HIP runtime, dlopen'd (libamdhip64.so.6, then .so.5,
 * then .so). Every entry point is resolved at open, so a missing one is reported by name; then
 * hipInit and hipGetDeviceCount decide whether there is a device.
 *
 * The types, values and prototypes below are copied from ROCm 5.2's /usr/include/hip
 * (hip_runtime_api.h, driver_types.h); the header itself is not included, so nothing here needs
 * ROCm to compile. The ones that matter across ROCm versions are noted where they are defined. */
#include "backend.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hip_error;                          /* hipError_t (hip_runtime_api.h) */
typedef int hip_device;                         /* hipDevice_t (hip_runtime_api.h) */
typedef struct ihipModule_t *hip_module;        /* hipModule_t */
typedef struct ihipModuleSymbol_t *hip_function;/* hipFunction_t */
typedef struct ihipStream_t *hip_stream;        /* hipStream_t; NULL is the default stream */
typedef struct ihipEvent_t *hip_event;          /* hipEvent_t */
typedef struct ihipGraph *hip_graph;            /* hipGraph_t */
typedef struct hipGraphExec *hip_graph_exec;    /* hipGraphExec_t */

#define HIP_SUCCESS 0                           /* hipSuccess */
#define HIP_MEMCPY_HOST_TO_DEVICE 1             /* hipMemcpyHostToDevice (driver_types.h) */
#define HIP_MEMCPY_DEVICE_TO_HOST 2             /* hipMemcpyDeviceToHost */
#define HIP_STREAM_NON_BLOCKING 0x01            /* hipStreamNonBlocking */
#define HIP_STREAM_CAPTURE_MODE_THREAD_LOCAL 1  /* hipStreamCaptureModeThreadLocal */
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

/* hipDeviceAttribute_t values (the CUDA-compatible block that starts at 0, same in ROCm 5 and 6). */
#define HIP_ATTR_L2_CACHE_SIZE 19               /* hipDeviceAttributeL2CacheSize */
#define HIP_ATTR_MULTIPROCESSOR_COUNT 63        /* hipDeviceAttributeMultiprocessorCount */
#define HIP_ATTR_PCI_BUS_ID 67                  /* hipDeviceAttributePciBusId */
#define HIP_ATTR_WARP_SIZE 87                   /* hipDeviceAttributeWarpSize */

/* hipDeviceProp_t as ROCm 5 lays it out, up to gcnArchName (offset 396 on x86-64). ROCm 6 changed
 * the layout but still exports the plain hipGetDeviceProperties symbol with this one (its headers
 * call it hipDeviceProp_tR0000 and map the name to hipGetDevicePropertiesR0600), so the plain
 * symbol is the one looked up. The union gives the library room for the full struct (792 bytes). */
typedef union hip_device_prop {
    struct {
        char name[256];
        size_t totalGlobalMem, sharedMemPerBlock;
        int regsPerBlock, warpSize, maxThreadsPerBlock, maxThreadsDim[3], maxGridSize[3];
        int clockRate, memoryClockRate, memoryBusWidth;
        size_t totalConstMem;
        int major, minor, multiProcessorCount, l2CacheSize, maxThreadsPerMultiProcessor;
        int computeMode, clockInstructionRate;
        unsigned arch;                          /* hipDeviceArch_t: 4 bytes of bit fields */
        int concurrentKernels, pciDomainID, pciBusID, pciDeviceID;
        size_t maxSharedMemoryPerMultiProcessor;
        int isMultiGpuBoard, canMapHostMemory, gcnArch;
        char gcnArchName[256];
    } p;
    char room[4096];
} hip_device_prop;

typedef struct hip_api {
    void *lib;
    hip_error (*init)(unsigned flags);                                   /* hipInit */
    hip_error (*get_device_count)(int *count);                           /* hipGetDeviceCount */
    hip_error (*set_device)(int device);                                 /* hipSetDevice */
    hip_error (*device_get)(hip_device *dev, int ordinal);               /* hipDeviceGet */
    hip_error (*device_get_name)(char *name, int len, hip_device dev);   /* hipDeviceGetName */
    hip_error (*device_get_attribute)(int *v, int attr, int device);     /* hipDeviceGetAttribute */
    hip_error (*device_total_mem)(size_t *bytes, hip_device dev);        /* hipDeviceTotalMem */
    hip_error (*device_get_pci_bus_id)(char *id, int len, int device);   /* hipDeviceGetPCIBusId */
    hip_error (*get_device_properties)(hip_device_prop *p, int device);  /* hipGetDeviceProperties */
    hip_error (*device_synchronize)(void);                               /* hipDeviceSynchronize */
    hip_error (*module_load_data)(hip_module *m, const void *image);     /* hipModuleLoadData */
    hip_error (*module_unload)(hip_module m);                            /* hipModuleUnload */
    hip_error (*module_get_function)(hip_function *f, hip_module m, const char *name); /* hipModuleGetFunction */
    hip_error (*module_launch_kernel)(hip_function f, unsigned gx, unsigned gy, unsigned gz,
                                      unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                      hip_stream s, void **params, void **extra); /* hipModuleLaunchKernel */
    hip_error (*mem_alloc)(void **p, size_t bytes);                         /* hipMalloc */
    hip_error (*mem_free)(void *p);                                          /* hipFree */
    hip_error (*mem_copy)(void *dst, const void *src, size_t bytes, int kind); /* hipMemcpy */
    hip_error (*mem_set)(void *dst, int value, size_t bytes);             /* hipMemset */
    hip_error (*mem_copy_dtod_async)(void *dst, void *src, size_t bytes, hip_stream s); /* hipMemcpyDtoDAsync */
    hip_error (*stream_create_with_flags)(hip_stream *s, unsigned flags); /* hipStreamCreateWithFlags */
    hip_error (*stream_destroy)(hip_stream s);                           /* hipStreamDestroy */
    hip_error (*stream_synchronize)(hip_stream s);                       /* hipStreamSynchronize */
    hip_error (*stream_create_with_priority)(hip_stream *s, unsigned flags, int priority); /* hipStreamCreateWithPriority */
    hip_error (*device_get_stream_priority_range)(int *least, int *greatest); /* hipDeviceGetStreamPriorityRange */
    hip_error (*stream_wait_event)(hip_stream s, hip_event e, unsigned flags); /* hipStreamWaitEvent */
    hip_error (*event_create)(hip_event *e);                             /* hipEventCreate */
    hip_error (*event_record)(hip_event e, hip_stream s);                /* hipEventRecord */
    hip_error (*event_synchronize)(hip_event e);                         /* hipEventSynchronize */
    hip_error (*event_elapsed_time)(float *ms, hip_event start, hip_event end); /* hipEventElapsedTime */
    hip_error (*event_destroy)(hip_event e);                             /* hipEventDestroy */
    hip_error (*stream_begin_capture)(hip_stream s, int mode);           /* hipStreamBeginCapture */
    hip_error (*stream_end_capture)(hip_stream s, hip_graph *g);         /* hipStreamEndCapture */
    hip_error (*graph_instantiate)(hip_graph_exec *x, hip_graph g, void *error_node,
                                   char *log, size_t log_len);           /* hipGraphInstantiate */
    hip_error (*graph_launch)(hip_graph_exec x, hip_stream s);           /* hipGraphLaunch */
    hip_error (*graph_exec_destroy)(hip_graph_exec x);                   /* hipGraphExecDestroy */
    hip_error (*graph_destroy)(hip_graph g);                             /* hipGraphDestroy */
    const char *(*get_error_name)(hip_error e);                          /* hipGetErrorName */
    const char *(*get_error_string)(hip_error e);                        /* hipGetErrorString */
} hip_api;

static const struct {
    const char *name;
    size_t offset;
} hip_symbols[] = {
    { "hipInit", offsetof(hip_api, init) },
    { "hipGetDeviceCount", offsetof(hip_api, get_device_count) },
    { "hipSetDevice", offsetof(hip_api, set_device) },
    { "hipDeviceGet", offsetof(hip_api, device_get) },
    { "hipDeviceGetName", offsetof(hip_api, device_get_name) },
    { "hipDeviceGetAttribute", offsetof(hip_api, device_get_attribute) },
    { "hipDeviceTotalMem", offsetof(hip_api, device_total_mem) },
    { "hipDeviceGetPCIBusId", offsetof(hip_api, device_get_pci_bus_id) },
    { "hipGetDeviceProperties", offsetof(hip_api, get_device_properties) },
    { "hipDeviceSynchronize", offsetof(hip_api, device_synchronize) },
    { "hipModuleLoadData", offsetof(hip_api, module_load_data) },
    { "hipModuleUnload", offsetof(hip_api, module_unload) },
    { "hipModuleGetFunction", offsetof(hip_api, module_get_function) },
    { "hipModuleLaunchKernel", offsetof(hip_api, module_launch_kernel) },
    { "hipMalloc", offsetof(hip_api, mem_alloc) },
    { "hipFree", offsetof(hip_api, mem_free) },
    { "hipMemcpy", offsetof(hip_api, mem_copy) },
    { "hipMemset", offsetof(hip_api, mem_set) },
    { "hipMemcpyDtoDAsync", offsetof(hip_api, mem_copy_dtod_async) },
    { "hipStreamCreateWithFlags", offsetof(hip_api, stream_create_with_flags) },
    { "hipStreamCreateWithPriority", offsetof(hip_api, stream_create_with_priority) },
    { "hipDeviceGetStreamPriorityRange", offsetof(hip_api, device_get_stream_priority_range) },
    { "hipStreamWaitEvent", offsetof(hip_api, stream_wait_event) },
    { "hipStreamDestroy", offsetof(hip_api, stream_destroy) },
    { "hipStreamSynchronize", offsetof(hip_api, stream_synchronize) },
    { "hipEventCreate", offsetof(hip_api, event_create) },
    { "hipEventRecord", offsetof(hip_api, event_record) },
    { "hipEventSynchronize", offsetof(hip_api, event_synchronize) },
    { "hipEventElapsedTime", offsetof(hip_api, event_elapsed_time) },
    { "hipEventDestroy", offsetof(hip_api, event_destroy) },
    { "hipStreamBeginCapture", offsetof(hip_api, stream_begin_capture) },
    { "hipStreamEndCapture", offsetof(hip_api, stream_end_capture) },
    { "hipGraphInstantiate", offsetof(hip_api, graph_instantiate) },
    { "hipGraphLaunch", offsetof(hip_api, graph_launch) },
    { "hipGraphExecDestroy", offsetof(hip_api, graph_exec_destroy) },
    { "hipGraphDestroy", offsetof(hip_api, graph_destroy) },
    { "hipGetErrorName", offsetof(hip_api, get_error_name) },
    { "hipGetErrorString", offsetof(hip_api, get_error_string) },
};

static const char *const hip_libraries[] = { "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so" };

typedef struct hip_backend {
    ktb_backend base; /* first: a ktb_backend * is a hip_backend * */
    hip_api h;
    const char *libname;
} hip_backend;

static const ktb_ops hip_ops;

static hip_backend *hb(ktb_backend *b) { return (hip_backend *)b; }

/* "hip: <call>: <hipErrorName>: <text>" into err; returns -1 (0 when r is success). */
static int herr(const hip_api *h, hip_error r, const char *call, char *err, size_t errlen)
{
    if (r == HIP_SUCCESS)
        return 0;
    const char *name = h->get_error_name ? h->get_error_name(r) : NULL;
    const char *text = h->get_error_string ? h->get_error_string(r) : NULL;
    return ktb_fail(err, errlen, "hip: %s: %s (%d): %s", call, name ? name : "hipError", r,
                    text ? text : "unknown error");
}

#define CUR(c)                                                                         \
    do {                                                                               \
        hip_error r_ = (c)->h.set_device((c)->base.device);                            \
        if (r_ != HIP_SUCCESS)                                                         \
            return herr(&(c)->h, r_, "hipSetDevice", err, errlen);                     \
    } while (0)

int ktb_hip_open(int device, ktb_backend **out, char *err, size_t errlen)
{
    *out = NULL;
    hip_backend *c = calloc(1, sizeof *c);
    if (!c)
        return ktb_fail(err, errlen, "hip: out of memory");
    /* RTLD_NODELETE: dlclose (in ktb_close and on failure) drops the reference but leaves the
     * runtime mapped. Its static constructors keep allocations in its own globals (valgrind calls
     * them "definitely lost" once those globals are unmapped), and the ROCm runtime is not made to
     * be torn down and loaded again within one process. */
    const char *last = NULL;
    for (size_t i = 0; i < sizeof hip_libraries / sizeof hip_libraries[0] && !c->h.lib; i++) {
        c->h.lib = dlopen(hip_libraries[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (c->h.lib)
            c->libname = hip_libraries[i];
        else
            last = dlerror();
    }
    if (!c->h.lib) {
        ktb_fail(err, errlen, "hip: no device: libamdhip64.so not found (tried .so.6, .so.5, .so; %s)",
                 last ? last : "dlopen failed");
        free(c);
        return -1;
    }
    for (size_t i = 0; i < sizeof hip_symbols / sizeof hip_symbols[0]; i++) {
        void *p = dlsym(c->h.lib, hip_symbols[i].name);
        if (!p) {
            ktb_fail(err, errlen, "hip: %s has no %s (runtime too old?)", c->libname, hip_symbols[i].name);
            goto fail;
        }
        /* POSIX lets a dlsym data pointer hold a function pointer; memcpy avoids the ISO C cast. */
        memcpy((char *)&c->h + hip_symbols[i].offset, &p, sizeof p);
    }
    hip_error r = c->h.init(0);
    if (r != HIP_SUCCESS) {
        char why[384];
        herr(&c->h, r, "hipInit", why, sizeof why);
        ktb_fail(err, errlen, "hip: no device: %s", why + 5); /* why + 5 skips "hip: " */
        goto fail;
    }
    int count = 0;
    r = c->h.get_device_count(&count);
    if (r != HIP_SUCCESS) {
        char why[384];
        herr(&c->h, r, "hipGetDeviceCount", why, sizeof why);
        ktb_fail(err, errlen, "hip: no device: %s", why + 5);
        goto fail;
    }
    if (count < 1) {
        ktb_fail(err, errlen, "hip: no device: hipGetDeviceCount reports 0 devices");
        goto fail;
    }
    if (device >= count) {
        ktb_fail(err, errlen, "hip: no device: device %d requested, hipGetDeviceCount reports %d", device, count);
        goto fail;
    }
    c->base.ops = &hip_ops;
    c->base.device = device;
    if ((r = c->h.set_device(device)) != HIP_SUCCESS) {
        herr(&c->h, r, "hipSetDevice", err, errlen);
        goto fail;
    }
    *out = &c->base;
    return 0;
fail:
    dlclose(c->h.lib);
    free(c);
    return -1;
}

static void hip_close(ktb_backend *b)
{
    hip_backend *c = hb(b);
    dlclose(c->h.lib);
    free(c);
}

static int hip_info(ktb_backend *b, ktb_device_info *info, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    hip_api *h = &c->h;
    hip_error r;
    hip_device dev = 0;
    int cus = 0, l2 = 0, bus = 0, warp = 0;
    size_t mem = 0;
    char busid[64] = "";
    CUR(c);
    if ((r = h->device_get(&dev, c->base.device)) != HIP_SUCCESS)
        return herr(h, r, "hipDeviceGet", err, errlen);
    if ((r = h->device_get_name(info->name, (int)sizeof info->name, dev)) != HIP_SUCCESS)
        return herr(h, r, "hipDeviceGetName", err, errlen);
    static const struct { int attr; const char *what; } attrs[] = {
        { HIP_ATTR_MULTIPROCESSOR_COUNT, "hipDeviceGetAttribute(hipDeviceAttributeMultiprocessorCount)" },
        { HIP_ATTR_L2_CACHE_SIZE, "hipDeviceGetAttribute(hipDeviceAttributeL2CacheSize)" },
        { HIP_ATTR_PCI_BUS_ID, "hipDeviceGetAttribute(hipDeviceAttributePciBusId)" },
        { HIP_ATTR_WARP_SIZE, "hipDeviceGetAttribute(hipDeviceAttributeWarpSize)" },
    };
    int *dst[] = { &cus, &l2, &bus, &warp };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((r = h->device_get_attribute(dst[i], attrs[i].attr, c->base.device)) != HIP_SUCCESS)
            return herr(h, r, attrs[i].what, err, errlen);
    if ((r = h->device_total_mem(&mem, dev)) != HIP_SUCCESS)
        return herr(h, r, "hipDeviceTotalMem", err, errlen);
    hip_device_prop *prop = calloc(1, sizeof *prop);
    if (!prop)
        return ktb_fail(err, errlen, "hip: ktb_info: out of memory");
    if ((r = h->get_device_properties(prop, c->base.device)) != HIP_SUCCESS) {
        free(prop);
        return herr(h, r, "hipGetDeviceProperties", err, errlen);
    }
    prop->p.gcnArchName[sizeof prop->p.gcnArchName - 1] = '\0';
    /* "gfx942:sramecc+:xnack-" -> "gfx942" */
    size_t n = strcspn(prop->p.gcnArchName, ":");
    if (n >= sizeof info->arch)
        n = sizeof info->arch - 1;
    memcpy(info->arch, prop->p.gcnArchName, n);
    info->arch[n] = '\0';
    free(prop);
    /* hipDeviceAttributePciDeviceId / pciDeviceID is the device (slot) number on the bus, like
     * CUDA's; the product id comes from sysfs (see backend.h). */
    if (h->device_get_pci_bus_id(busid, (int)sizeof busid, c->base.device) == HIP_SUCCESS) {
        info->pci_device_id = ktb_pci_product_id(busid, sizeof busid);
        snprintf(info->pci_address, sizeof info->pci_address, "%s", busid);
    }
    info->compute_units = cus;
    info->l2_bytes = l2;
    info->pci_bus_id = bus;
    info->global_mem_bytes = (long long)mem;
    info->wave_size = warp;
    return 0;
}

static int hip_module_load(ktb_backend *b, const void *image, size_t len, void **module, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    (void)len; /* hipModuleLoadData reads the length from the code object's headers */
    hip_module m = NULL;
    int rc = herr(&c->h, c->h.module_load_data(&m, image), "hipModuleLoadData", err, errlen);
    *module = m;
    return rc;
}

static int hip_module_unload(ktb_backend *b, void *module, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.module_unload((hip_module)module), "hipModuleUnload", err, errlen);
}

static int hip_get_function(ktb_backend *b, void *module, const char *name, void **fn, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    hip_function f = NULL;
    hip_error r = c->h.module_get_function(&f, (hip_module)module, name);
    if (r != HIP_SUCCESS) {
        char call[320];
        snprintf(call, sizeof call, "hipModuleGetFunction(\"%.256s\")", name);
        return herr(&c->h, r, call, err, errlen);
    }
    *fn = f;
    return 0;
}

static int hip_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                      unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                      char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    /* The argument buffer route (the one every ROCm release supports): args is the kernarg
     * segment, which for one by-value struct parameter is that struct's bytes. */
    size_t size = args_size;
    void *extra[] = { HIP_LAUNCH_PARAM_BUFFER_POINTER, (void *)args, HIP_LAUNCH_PARAM_BUFFER_SIZE, &size,
                      HIP_LAUNCH_PARAM_END };
    return herr(&c->h, c->h.module_launch_kernel((hip_function)fn, grid[0], grid[1], grid[2], block[0],
                                                 block[1], block[2], shared_bytes, (hip_stream)stream,
                                                 NULL, args_size ? extra : NULL),
                "hipModuleLaunchKernel", err, errlen);
}

static int hip_alloc(ktb_backend *b, size_t bytes, void **dptr, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    char call[64];
    snprintf(call, sizeof call, "hipMalloc(%zu)", bytes);
    return herr(&c->h, c->h.mem_alloc(dptr, bytes), call, err, errlen);
}

static int hip_free(ktb_backend *b, void *dptr, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.mem_free(dptr), "hipFree", err, errlen);
}

static int hip_copy_h2d(ktb_backend *b, void *dptr, const void *src, size_t bytes, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    int rc = herr(&c->h, c->h.mem_copy(dptr, src, bytes, HIP_MEMCPY_HOST_TO_DEVICE), "hipMemcpy(HostToDevice)", err,
                  errlen);
    /* as cuda_copy_h2d: a staged pageable copy must have landed before any stream's next kernel */
    return rc ? rc : herr(&c->h, c->h.device_synchronize(), "hipDeviceSynchronize", err, errlen);
}

static int hip_copy_d2h(ktb_backend *b, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.mem_copy(dst, dptr, bytes, HIP_MEMCPY_DEVICE_TO_HOST), "hipMemcpy(DeviceToHost)", err,
                errlen);
}

static int hip_memset8(ktb_backend *b, void *dptr, unsigned char value, size_t bytes, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    int rc = herr(&c->h, c->h.mem_set(dptr, value, bytes), "hipMemset", err, errlen);
    return rc ? rc : herr(&c->h, c->h.device_synchronize(), "hipDeviceSynchronize", err, errlen);
}

static int hip_copy_d2d_async(ktb_backend *b, void *dst, const void *src, size_t bytes, void *stream,
                              char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    /* hipDeviceptr_t is a non-const void *; the source is only read. */
    return herr(&c->h, c->h.mem_copy_dtod_async(dst, (void *)src, bytes, (hip_stream)stream), "hipMemcpyDtoDAsync",
                err, errlen);
}

static int hip_stream_create(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    hip_stream s = NULL;
    int rc = herr(&c->h, c->h.stream_create_with_flags(&s, HIP_STREAM_NON_BLOCKING), "hipStreamCreateWithFlags",
                  err, errlen);
    *stream = s;
    return rc;
}

static int hip_lane_create(ktb_backend *b, void **stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    int least = 0, greatest = 0;
    int rc = herr(&c->h, c->h.device_get_stream_priority_range(&least, &greatest), "hipDeviceGetStreamPriorityRange",
                  err, errlen);
    if (rc)
        return rc;
    hip_stream s = NULL;
    rc = herr(&c->h, c->h.stream_create_with_priority(&s, HIP_STREAM_NON_BLOCKING, greatest),
              "hipStreamCreateWithPriority", err, errlen);
    *stream = s;
    return rc;
}

static int hip_stream_wait(ktb_backend *b, void *stream, void *event, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.stream_wait_event((hip_stream)stream, (hip_event)event, 0), "hipStreamWaitEvent", err,
                errlen);
}

static int hip_stream_destroy(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.stream_destroy((hip_stream)stream), "hipStreamDestroy", err, errlen);
}

static int hip_sync(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.stream_synchronize((hip_stream)stream), "hipStreamSynchronize", err, errlen);
}

static int hip_event_create(ktb_backend *b, void **event, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    hip_event e = NULL;
    int rc = herr(&c->h, c->h.event_create(&e), "hipEventCreate", err, errlen);
    *event = e;
    return rc;
}

static int hip_event_record(ktb_backend *b, void *event, void *stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.event_record((hip_event)event, (hip_stream)stream), "hipEventRecord", err, errlen);
}

static int hip_event_elapsed_ms(ktb_backend *b, void *start, void *end, float *ms, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    int rc = herr(&c->h, c->h.event_synchronize((hip_event)end), "hipEventSynchronize", err, errlen);
    if (rc)
        return rc;
    return herr(&c->h, c->h.event_elapsed_time(ms, (hip_event)start, (hip_event)end), "hipEventElapsedTime", err,
                errlen);
}

static int hip_event_destroy(ktb_backend *b, void *event, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.event_destroy((hip_event)event), "hipEventDestroy", err, errlen);
}

static int hip_graph_begin_capture(ktb_backend *b, void *stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.stream_begin_capture((hip_stream)stream, HIP_STREAM_CAPTURE_MODE_THREAD_LOCAL),
                "hipStreamBeginCapture", err, errlen);
}

static int hip_graph_end_capture(ktb_backend *b, void *stream, void **exec, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    hip_graph g = NULL;
    int rc = herr(&c->h, c->h.stream_end_capture((hip_stream)stream, &g), "hipStreamEndCapture", err, errlen);
    if (rc)
        return rc;
    hip_graph_exec x = NULL;
    rc = herr(&c->h, c->h.graph_instantiate(&x, g, NULL, NULL, 0), "hipGraphInstantiate", err, errlen);
    c->h.graph_destroy(g); /* the exec is independent of the graph it came from */
    *exec = rc ? NULL : x;
    return rc;
}

static int hip_graph_launch(ktb_backend *b, void *exec, void *stream, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.graph_launch((hip_graph_exec)exec, (hip_stream)stream), "hipGraphLaunch", err, errlen);
}

static int hip_graph_destroy(ktb_backend *b, void *exec, char *err, size_t errlen)
{
    hip_backend *c = hb(b);
    CUR(c);
    return herr(&c->h, c->h.graph_exec_destroy((hip_graph_exec)exec), "hipGraphExecDestroy", err, errlen);
}

static const ktb_ops hip_ops = {
    .vendor = "hip",
    .close = hip_close,
    .info = hip_info,
    .module_load = hip_module_load,
    .module_unload = hip_module_unload,
    .function = hip_get_function,
    .launch = hip_launch,
    .alloc = hip_alloc,
    .free = hip_free,
    .copy_h2d = hip_copy_h2d,
    .copy_d2h = hip_copy_d2h,
    .memset8 = hip_memset8,
    .copy_d2d_async = hip_copy_d2d_async,
    .stream_create = hip_stream_create,
    .stream_destroy = hip_stream_destroy,
    .sync = hip_sync,
    .event_create = hip_event_create,
    .event_record = hip_event_record,
    .event_elapsed_ms = hip_event_elapsed_ms,
    .event_destroy = hip_event_destroy,
    .lane_create = hip_lane_create,
    .stream_wait = hip_stream_wait,
    .graph_begin_capture = hip_graph_begin_capture,
    .graph_end_capture = hip_graph_end_capture,
    .graph_launch = hip_graph_launch,
    .graph_destroy = hip_graph_destroy,
};
