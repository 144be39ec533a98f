/* cuda_driver.h: the CUDA driver API opened at run time with dlopen("libcuda.so.1").
 *
 * A program built with this needs no CUDA toolkit to compile and links no GPU library, so it
 * starts on a machine without a GPU and reports that cleanly. It depends on nothing else in ktune
 * (plain C11 + libdl): the runtime's CUDA backend (backend_cuda.c) is built on it, and
 * tests/device/gemm_check.c compiles it on its own.
 *
 * The types, constants and entry-point signatures below are copied from the CUDA 13.0 toolkit's
 * include/cuda.h (CUresult, CUdevice, CUcontext, CUmodule, CUfunction, CUstream, CUdeviceptr,
 * CUdevice_attribute values, the cuXxx prototypes). Where cuda.h maps a name to a versioned symbol
 * (cuMemAlloc -> cuMemAlloc_v2, ...), the versioned symbol is the one looked up: those are the
 * stable ABI names the driver exports. cuCtxCreate_v2 (flags, device) is used rather than CUDA 13's
 * cuCtxCreate_v4: the driver still exports it, and it needs no parameter struct. */
#ifndef KT_CUDA_DRIVER_H
#define KT_CUDA_DRIVER_H

#include <stddef.h>

typedef int cudrv_result;                         /* CUresult */
typedef int cudrv_device;                         /* CUdevice */
typedef struct CUctx_st *cudrv_context;           /* CUcontext */
typedef struct CUmod_st *cudrv_module;            /* CUmodule */
typedef struct CUfunc_st *cudrv_function;         /* CUfunction */
typedef struct CUstream_st *cudrv_stream;         /* CUstream; NULL is the legacy default stream */
typedef unsigned long long cudrv_deviceptr;       /* CUdeviceptr (CUdeviceptr_v2) */
typedef struct CUevent_st *cudrv_event;           /* CUevent */
typedef struct CUgraph_st *cudrv_graph;           /* CUgraph */
typedef struct CUgraphExec_st *cudrv_graph_exec;  /* CUgraphExec */

/* CUresult values this code tests for (cuda.h, enum cudaError_enum). */
#define CUDRV_SUCCESS 0
#define CUDRV_ERROR_NO_DEVICE 100
#define CUDRV_ERROR_NOT_SUPPORTED 801

/* CUdevice_attribute values (cuda.h, enum CUdevice_attribute_enum). */
#define CUDRV_ATTR_WARP_SIZE 10
#define CUDRV_ATTR_MULTIPROCESSOR_COUNT 16
#define CUDRV_ATTR_PCI_BUS_ID 33
#define CUDRV_ATTR_PCI_DEVICE_ID 34    /* the device (slot) number on its bus, NOT the product id */
#define CUDRV_ATTR_L2_CACHE_SIZE 38
#define CUDRV_ATTR_COMPUTE_CAPABILITY_MAJOR 75
#define CUDRV_ATTR_COMPUTE_CAPABILITY_MINOR 76
#define CUDRV_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN 97

/* CUfunction_attribute values (cuda.h, enum CUfunction_attribute_enum). */
#define CUDRV_FUNC_ATTR_SHARED_SIZE_BYTES 1
#define CUDRV_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES 8

/* Flag values (cuda.h: CUstream_flags, CUevent_flags, CUstreamCaptureMode). */
#define CUDRV_STREAM_NON_BLOCKING 0x1
#define CUDRV_EVENT_DEFAULT 0x0
#define CUDRV_STREAM_CAPTURE_MODE_THREAD_LOCAL 1
#define CUDRV_GRAPH_INSTANTIATE_USE_NODE_PRIORITY 8   /* CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY */

/* cuLaunchKernelEx's launch configuration and one attribute (cuda.h, CUDA 12.0: CUlaunchConfig,
 * CUlaunchAttribute, whose value is a 64-byte union) and the attribute this code sets. */
#define CUDRV_LAUNCH_ATTR_PROGRAMMATIC_STREAM_SERIALIZATION 6
typedef struct cudrv_launch_attr {
    int id;
    char pad[4];
    union {
        char bytes[64];
        int value;
        unsigned long long align;
    } v;
} cudrv_launch_attr;
typedef struct cudrv_launch_config {
    unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
    cudrv_stream stream;
    cudrv_launch_attr *attrs;
    unsigned nattrs;
} cudrv_launch_config;
/* cuda.h's layouts (LP64), which the driver reads */
_Static_assert(sizeof(cudrv_launch_attr) == 72 && offsetof(cudrv_launch_attr, v) == 8, "CUlaunchAttribute");
_Static_assert(offsetof(cudrv_launch_config, stream) == 32 && offsetof(cudrv_launch_config, attrs) == 40 &&
               offsetof(cudrv_launch_config, nattrs) == 48, "CUlaunchConfig");

/* cudrv_open's failures, so a caller can tell "no driver here" from a broken one. */
#define CUDRV_OPEN_NO_LIBRARY (-1)  /* dlopen("libcuda.so.1") failed */
#define CUDRV_OPEN_NO_SYMBOL (-2)   /* the library lacks an entry point below */
#define CUDRV_OPEN_NO_DEVICE (-3)   /* cuInit or cuDeviceGetCount failed, or 0 devices */

/* The entry points, one field each; the comment names the symbol. */
typedef struct cudrv {
    void *lib;                                                                   /* dlopen handle */
    cudrv_result (*init)(unsigned flags);                                        /* cuInit */
    cudrv_result (*driver_get_version)(int *version);                            /* cuDriverGetVersion */
    cudrv_result (*device_get_count)(int *count);                                /* cuDeviceGetCount */
    cudrv_result (*device_get)(cudrv_device *dev, int ordinal);                  /* cuDeviceGet */
    cudrv_result (*device_get_name)(char *name, int len, cudrv_device dev);      /* cuDeviceGetName */
    cudrv_result (*device_get_attribute)(int *value, int attr, cudrv_device dev); /* cuDeviceGetAttribute */
    cudrv_result (*ctx_create)(cudrv_context *ctx, unsigned flags, cudrv_device dev); /* cuCtxCreate_v2 */
    cudrv_result (*ctx_destroy)(cudrv_context ctx);                              /* cuCtxDestroy_v2 */
    cudrv_result (*ctx_synchronize)(void);                                       /* cuCtxSynchronize */
    cudrv_result (*module_load_data)(cudrv_module *mod, const void *image);      /* cuModuleLoadData */
    cudrv_result (*module_unload)(cudrv_module mod);                             /* cuModuleUnload */
    cudrv_result (*module_get_function)(cudrv_function *fn, cudrv_module mod, const char *name); /* cuModuleGetFunction */
    cudrv_result (*func_get_attribute)(int *value, int attr, cudrv_function fn); /* cuFuncGetAttribute */
    cudrv_result (*func_set_attribute)(cudrv_function fn, int attr, int value);  /* cuFuncSetAttribute */
    cudrv_result (*mem_alloc)(cudrv_deviceptr *ptr, size_t bytes);              /* cuMemAlloc_v2 */
    cudrv_result (*mem_free)(cudrv_deviceptr ptr);                               /* cuMemFree_v2 */
    cudrv_result (*memcpy_htod)(cudrv_deviceptr dst, const void *src, size_t bytes); /* cuMemcpyHtoD_v2 */
    cudrv_result (*memcpy_dtoh)(void *dst, cudrv_deviceptr src, size_t bytes);   /* cuMemcpyDtoH_v2 */
    cudrv_result (*memset_d8)(cudrv_deviceptr dst, unsigned char value, size_t count); /* cuMemsetD8_v2 */
    cudrv_result (*memcpy_dtod_async)(cudrv_deviceptr dst, cudrv_deviceptr src, size_t bytes,
                                      cudrv_stream s);                          /* cuMemcpyDtoDAsync_v2 */
    cudrv_result (*launch_kernel)(cudrv_function fn,
                                  unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                  unsigned block_x, unsigned block_y, unsigned block_z,
                                  unsigned shared_bytes, cudrv_stream stream,
                                  void **params, void **extra);                 /* cuLaunchKernel */
    /* Primary context, device queries, streams, events and graphs (the runtime backend's). */
    cudrv_result (*primary_ctx_retain)(cudrv_context *ctx, cudrv_device dev);  /* cuDevicePrimaryCtxRetain */
    cudrv_result (*primary_ctx_release)(cudrv_device dev);                      /* cuDevicePrimaryCtxRelease_v2 */
    cudrv_result (*ctx_set_current)(cudrv_context ctx);                         /* cuCtxSetCurrent */
    cudrv_result (*device_total_mem)(size_t *bytes, cudrv_device dev);          /* cuDeviceTotalMem_v2 */
    cudrv_result (*device_get_pci_bus_id)(char *id, int len, cudrv_device dev); /* cuDeviceGetPCIBusId */
    cudrv_result (*stream_create)(cudrv_stream *s, unsigned flags);             /* cuStreamCreate */
    cudrv_result (*stream_destroy)(cudrv_stream s);                             /* cuStreamDestroy_v2 */
    cudrv_result (*stream_synchronize)(cudrv_stream s);                         /* cuStreamSynchronize */
    cudrv_result (*stream_create_with_priority)(cudrv_stream *s, unsigned flags, int priority); /* cuStreamCreateWithPriority */
    cudrv_result (*ctx_get_stream_priority_range)(int *least, int *greatest);   /* cuCtxGetStreamPriorityRange */
    cudrv_result (*stream_wait_event)(cudrv_stream s, cudrv_event e, unsigned flags); /* cuStreamWaitEvent */
    cudrv_result (*event_create)(cudrv_event *e, unsigned flags);               /* cuEventCreate */
    cudrv_result (*event_record)(cudrv_event e, cudrv_stream s);                /* cuEventRecord */
    cudrv_result (*event_synchronize)(cudrv_event e);                           /* cuEventSynchronize */
    cudrv_result (*event_elapsed_time)(float *ms, cudrv_event start, cudrv_event end); /* cuEventElapsedTime (v1: every driver has it) */
    cudrv_result (*event_destroy)(cudrv_event e);                               /* cuEventDestroy_v2 */
    cudrv_result (*stream_begin_capture)(cudrv_stream s, int mode);             /* cuStreamBeginCapture_v2 */
    cudrv_result (*stream_end_capture)(cudrv_stream s, cudrv_graph *g);         /* cuStreamEndCapture */
    cudrv_result (*graph_instantiate)(cudrv_graph_exec *exec, cudrv_graph g,
                                      unsigned long long flags);                /* cuGraphInstantiateWithFlags (driver >= 11.4) */
    cudrv_result (*graph_launch)(cudrv_graph_exec exec, cudrv_stream s);        /* cuGraphLaunch */
    cudrv_result (*graph_exec_destroy)(cudrv_graph_exec exec);                  /* cuGraphExecDestroy */
    cudrv_result (*graph_destroy)(cudrv_graph g);                               /* cuGraphDestroy */
    cudrv_result (*get_error_name)(cudrv_result err, const char **name);        /* cuGetErrorName */
    cudrv_result (*get_error_string)(cudrv_result err, const char **text);      /* cuGetErrorString */
    /* Optional (NULL on a driver older than CUDA 12.0): */
    cudrv_result (*launch_kernel_ex)(const cudrv_launch_config *config, cudrv_function fn, void **params,
                                     void **extra);                             /* cuLaunchKernelEx */
} cudrv;

/* Opens libcuda.so.1, resolves every entry point and calls cuInit(0), then checks that at least
 * one device is present. Returns 0 on success; otherwise one of CUDRV_OPEN_NO_LIBRARY,
 * CUDRV_OPEN_NO_SYMBOL, CUDRV_OPEN_NO_DEVICE, fills why (a sentence fragment such as
 * "libcuda.so.1: cannot open shared object file: ..." or "cuInit: CUDA_ERROR_NO_DEVICE: ...")
 * and leaves *d closed. */
int cudrv_open(cudrv *d, char *why, size_t why_len);

/* dlcloses the library; *d is unusable afterwards. Safe on a closed or zeroed cudrv. */
void cudrv_close(cudrv *d);

/* Lets fn's launches ask for all the dynamic shared memory a block of dev may have beside fn's
 * static shared memory. Without this opt-in a launch asking for more than 48 KiB fails; it
 * reserves nothing (each launch still allocates only what it asks for). */
cudrv_result cudrv_allow_dynamic_shared(const cudrv *d, cudrv_function fn, cudrv_device dev);

/* "CUDA_ERROR_NAME: description" for err into buf (falls back to the number when the driver does
 * not know the code); returns buf. */
const char *cudrv_strerror(const cudrv *d, cudrv_result err, char *buf, size_t len);

#endif
