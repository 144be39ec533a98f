/* backend.h: the runtime's one GPU interface (DESIGN.md "Backends"), prefix ktb_.
 *
 * One small vtable, implemented for CUDA (backend_cuda.c, libcuda.so.1 through cuda_driver.h) and
 * HIP (backend_hip.c, libamdhip64.so.6 / .so.5 / .so). Both are opened with dlopen, so nothing
 * links a GPU library: the same binary loads on either vendor and, where there is no driver or no
 * device, ktb_open fails with a message instead of the program failing to start.
 *
 * Conventions, for every function below:
 *  - 0 is success; any other return (always -1) is an error. Nothing aborts.
 *  - err/errlen (either may be NULL/0) receive "<vendor>: <call>: <driver error name>: <text>",
 *    e.g. "cuda: cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE: device kernel image is invalid".
 *  - A NULL backend (or a NULL required pointer) is an error "ktb: ...: NULL backend", not a crash.
 *  - Handles are opaque void *: device pointers (a CUdeviceptr or hip device pointer, cast),
 *    modules, functions, streams (NULL is the device's default stream), events, graph execs.
 *  - Each call first makes the backend's device current on the calling thread (CUDA: its primary
 *    context; HIP: hipSetDevice), so a backend may be used from any thread, one call at a time.
 */
#ifndef KT_BACKEND_H
#define KT_BACKEND_H

#include <stddef.h>

typedef struct ktb_device_info {
    char name[256];             /* marketing name: cuDeviceGetName / hipDeviceGetName */
    char arch[32];              /* CUDA "sm_<major><minor>"; HIP gcnArchName cut at ':' ("gfx942") */
    int compute_units;          /* SMs / CUs */
    long long l2_bytes;         /* L2 size in bytes */
    int pci_device_id;          /* PCI product id (0x2335 for an H200): read from
                                 * /sys/bus/pci/devices/<pci_address>/device, because neither
                                 * driver reports it: CUDA's CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID and
                                 * HIP's pciDeviceID are the device (slot) number on the bus.
                                 * -1 where sysfs does not have it (not Linux, a container
                                 * without /sys); never the slot number. */
    int pci_bus_id;             /* PCI bus number */
    char pci_address[32];       /* "dddd:bb:ss.f" in sysfs spelling (lower-case hex), or "" */
    long long global_mem_bytes; /* cuDeviceTotalMem / hipDeviceTotalMem */
    int wave_size;              /* warp / wavefront size: 32 or 64 */
} ktb_device_info;

typedef struct ktb_backend ktb_backend; /* opaque; one per (vendor, device) */

/* vendor: "cuda" or "hip"; device: ordinal. On failure *out is NULL and err says why; with no
 * driver library or no device it reads "<vendor>: no device: ...", e.g.
 * "cuda: no device: libcuda.so.1 not found (...)" or "hip: no device: hipGetDeviceCount: ...". */
int ktb_open(const char *vendor, int device, ktb_backend **out, char *err, size_t errlen);
void ktb_close(ktb_backend *b); /* NULL is fine; releases everything ktb_open acquired */
const char *ktb_vendor(const ktb_backend *b); /* "cuda", "hip", or NULL for NULL */

int ktb_info(ktb_backend *b, ktb_device_info *info, char *err, size_t errlen);

/* Modules from an in-memory image (a cubin for CUDA, an amdgpu code object for HIP). */
int ktb_module_load(ktb_backend *b, const void *image, size_t len, void **module, char *err, size_t errlen);
int ktb_module_unload(ktb_backend *b, void *module, char *err, size_t errlen);
int ktb_function(ktb_backend *b, void *module, const char *name, void **fn, char *err, size_t errlen);

/* Launches fn whose one parameter is a struct passed BY VALUE: args points at args_size bytes
 * laid out as that struct. CUDA: kernelParams = { args }. HIP: the bytes are the kernel's
 * argument buffer (extra = { HIP_LAUNCH_PARAM_BUFFER_POINTER, args, ..._SIZE, &args_size, END }),
 * which for a single struct parameter is the same layout. */
int ktb_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
               unsigned shared_bytes, void *stream, const void *args, size_t args_size,
               char *err, size_t errlen);

/* As ktb_launch, for a kernel that itself waits for the work before it in the stream
 * (kt_grid_dependency_wait, templates/arch/): it may be started while that work is still running,
 * so that its launch and its blocks' start overlap the tail of the kernel before (CUDA's
 * programmatic dependent launch, sm_90 on, driver 12.3 on, from which a graph captured from the
 * stream keeps the edge). Elsewhere (HIP, older devices or drivers, a driver that refuses the
 * attribute) a plain ktb_launch. */
int ktb_launch_early(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                     unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                     char *err, size_t errlen);

/* Memory. Copies and memset are synchronous: they have landed on the device, for every stream,
 * when they return (a host-to-device copy from pageable memory is followed by a device sync,
 * since the drivers may return once the bytes are staged). */
int ktb_alloc(ktb_backend *b, size_t bytes, void **dptr, char *err, size_t errlen);
int ktb_free(ktb_backend *b, void *dptr, char *err, size_t errlen);
int ktb_copy_h2d(ktb_backend *b, void *dptr, const void *src, size_t bytes, char *err, size_t errlen);
int ktb_copy_d2h(ktb_backend *b, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen);
int ktb_memset8(ktb_backend *b, void *dptr, unsigned char value, size_t bytes, char *err, size_t errlen);
/* Device-to-device copy, asynchronous on stream (so it can be captured in a graph): bench/ times
 * it as the copy ceiling. 0 bytes is a no-op. */
int ktb_copy_d2d_async(ktb_backend *b, void *dst, const void *src, size_t bytes, void *stream,
                       char *err, size_t errlen);

/* Streams: created non-blocking (graph capture needs a stream other than the legacy default). */
int ktb_stream_create(ktb_backend *b, void **stream, char *err, size_t errlen);
int ktb_stream_destroy(ktb_backend *b, void *stream, char *err, size_t errlen);
int ktb_sync(ktb_backend *b, void *stream, char *err, size_t errlen); /* waits for stream's work */
/* A second stream for work that runs beside a caller's (an op's lane 1, runtime/op_run.h): as
 * ktb_stream_create, at the device's greatest priority, so that its pending blocks are started
 * before those of the caller's stream when both wait for room. */
int ktb_lane_create(ktb_backend *b, void **stream, char *err, size_t errlen);
/* Makes stream's later work wait for event's last record (the work before it on its stream); in
 * a capture, an edge of the graph. */
int ktb_stream_wait(ktb_backend *b, void *stream, void *event, char *err, size_t errlen);

/* Events, for timing: elapsed_ms waits for end, then gives end - start in milliseconds. */
int ktb_event_create(ktb_backend *b, void **event, char *err, size_t errlen);
int ktb_event_record(ktb_backend *b, void *event, void *stream, char *err, size_t errlen);
int ktb_event_elapsed_ms(ktb_backend *b, void *start, void *end, float *ms, char *err, size_t errlen);
int ktb_event_destroy(ktb_backend *b, void *event, char *err, size_t errlen);

/* Graphs: begin_capture on a ktb_stream_create stream (thread-local capture mode), launch work
 * into it, end_capture instantiates the captured graph into *exec (the graph itself is freed);
 * graph_launch replays exec on a stream; graph_destroy frees exec. */
int ktb_graph_begin_capture(ktb_backend *b, void *stream, char *err, size_t errlen);
int ktb_graph_end_capture(ktb_backend *b, void *stream, void **exec, char *err, size_t errlen);
int ktb_graph_launch(ktb_backend *b, void *exec, void *stream, char *err, size_t errlen);
int ktb_graph_destroy(ktb_backend *b, void *exec, char *err, size_t errlen);

/* ---- For the backend implementations only (backend.c, backend_cuda.c, backend_hip.c). ---- */
typedef struct ktb_ops {
    const char *vendor;
    void (*close)(ktb_backend *b);
    int (*info)(ktb_backend *b, ktb_device_info *info, char *err, size_t errlen);
    int (*module_load)(ktb_backend *b, const void *image, size_t len, void **module, char *err, size_t errlen);
    int (*module_unload)(ktb_backend *b, void *module, char *err, size_t errlen);
    int (*function)(ktb_backend *b, void *module, const char *name, void **fn, char *err, size_t errlen);
    int (*launch)(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                  unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                  char *err, size_t errlen);
    /* NULL: ktb_launch_early is a plain launch */
    int (*launch_early)(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3],
                        unsigned shared_bytes, void *stream, const void *args, size_t args_size,
                        char *err, size_t errlen);
    int (*alloc)(ktb_backend *b, size_t bytes, void **dptr, char *err, size_t errlen);
    int (*free)(ktb_backend *b, void *dptr, char *err, size_t errlen);
    int (*copy_h2d)(ktb_backend *b, void *dptr, const void *src, size_t bytes, char *err, size_t errlen);
    int (*copy_d2h)(ktb_backend *b, void *dst, const void *dptr, size_t bytes, char *err, size_t errlen);
    int (*memset8)(ktb_backend *b, void *dptr, unsigned char value, size_t bytes, char *err, size_t errlen);
    int (*copy_d2d_async)(ktb_backend *b, void *dst, const void *src, size_t bytes, void *stream,
                          char *err, size_t errlen);
    int (*stream_create)(ktb_backend *b, void **stream, char *err, size_t errlen);
    int (*stream_destroy)(ktb_backend *b, void *stream, char *err, size_t errlen);
    int (*sync)(ktb_backend *b, void *stream, char *err, size_t errlen);
    int (*lane_create)(ktb_backend *b, void **stream, char *err, size_t errlen);
    int (*stream_wait)(ktb_backend *b, void *stream, void *event, char *err, size_t errlen);
    int (*event_create)(ktb_backend *b, void **event, char *err, size_t errlen);
    int (*event_record)(ktb_backend *b, void *event, void *stream, char *err, size_t errlen);
    int (*event_elapsed_ms)(ktb_backend *b, void *start, void *end, float *ms, char *err, size_t errlen);
    int (*event_destroy)(ktb_backend *b, void *event, char *err, size_t errlen);
    int (*graph_begin_capture)(ktb_backend *b, void *stream, char *err, size_t errlen);
    int (*graph_end_capture)(ktb_backend *b, void *stream, void **exec, char *err, size_t errlen);
    int (*graph_launch)(ktb_backend *b, void *exec, void *stream, char *err, size_t errlen);
    int (*graph_destroy)(ktb_backend *b, void *exec, char *err, size_t errlen);
} ktb_ops;

/* Every implementation's backend struct starts with this. */
struct ktb_backend {
    const ktb_ops *ops;
    int device;
};

int ktb_cuda_open(int device, ktb_backend **out, char *err, size_t errlen);
int ktb_hip_open(int device, ktb_backend **out, char *err, size_t errlen);
/* snprintf into err when err is non-NULL; returns -1. */
int ktb_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Product id from /sys/bus/pci/devices/<address>/device, address normalised in place to
 * "dddd:bb:ss.f" lower case; -1 when unreadable. */
int ktb_pci_product_id(char *address, size_t len);

#endif
