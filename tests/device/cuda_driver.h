/* cuda_driver.h: the CUDA driver API opened at run time with dlopen("libcuda.so.1").
 *
 * A program built with this needs no CUDA toolkit to compile and links no GPU library, so it
 * starts on a machine without a GPU and reports that cleanly. It is kept independent of the rest
 * of ktune so the runtime's CUDA backend can take it over.
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

/* CUresult values this code tests for (cuda.h, enum cudaError_enum). */
#define CUDRV_SUCCESS 0
#define CUDRV_ERROR_NO_DEVICE 100

/* CUdevice_attribute values (cuda.h, enum CUdevice_attribute_enum). */
#define CUDRV_ATTR_MULTIPROCESSOR_COUNT 16
#define CUDRV_ATTR_PCI_DEVICE_ID 34
#define CUDRV_ATTR_COMPUTE_CAPABILITY_MAJOR 75
#define CUDRV_ATTR_COMPUTE_CAPABILITY_MINOR 76

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
    cudrv_result (*mem_alloc)(cudrv_deviceptr *ptr, size_t bytes);              /* cuMemAlloc_v2 */
    cudrv_result (*mem_free)(cudrv_deviceptr ptr);                               /* cuMemFree_v2 */
    cudrv_result (*memcpy_htod)(cudrv_deviceptr dst, const void *src, size_t bytes); /* cuMemcpyHtoD_v2 */
    cudrv_result (*memcpy_dtoh)(void *dst, cudrv_deviceptr src, size_t bytes);   /* cuMemcpyDtoH_v2 */
    cudrv_result (*memset_d8)(cudrv_deviceptr dst, unsigned char value, size_t count); /* cuMemsetD8_v2 */
    cudrv_result (*launch_kernel)(cudrv_function fn,
                                  unsigned grid_x, unsigned grid_y, unsigned grid_z,
                                  unsigned block_x, unsigned block_y, unsigned block_z,
                                  unsigned shared_bytes, cudrv_stream stream,
                                  void **params, void **extra);                 /* cuLaunchKernel */
    cudrv_result (*get_error_name)(cudrv_result err, const char **name);        /* cuGetErrorName */
    cudrv_result (*get_error_string)(cudrv_result err, const char **text);      /* cuGetErrorString */
} cudrv;

/* Opens libcuda.so.1, resolves every entry point and calls cuInit(0), then checks that at least
 * one device is present. Returns 0 on success; otherwise fills why (a sentence fragment such as
 * "libcuda.so.1: cannot open shared object file: ..." or "cuInit: CUDA_ERROR_NO_DEVICE: ...")
 * and leaves *d closed. */
int cudrv_open(cudrv *d, char *why, size_t why_len);

/* dlcloses the library; *d is unusable afterwards. Safe on a closed or zeroed cudrv. */
void cudrv_close(cudrv *d);

/* "CUDA_ERROR_NAME: description" for err into buf (falls back to the number when the driver does
 * not know the code); returns buf. */
const char *cudrv_strerror(const cudrv *d, cudrv_result err, char *buf, size_t len);

#endif
