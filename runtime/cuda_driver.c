/* cuda_driver.c: see cuda_driver.h. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_driver.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Symbol name and where its pointer goes. Versioned names are the ones cuda.h (CUDA 13.0) maps the
 * plain names to; see the header. */
static const struct {
    const char *name;
    size_t offset;
} cudrv_symbols[] = {
    { "cuInit", offsetof(cudrv, init) },
    { "cuDriverGetVersion", offsetof(cudrv, driver_get_version) },
    { "cuDeviceGetCount", offsetof(cudrv, device_get_count) },
    { "cuDeviceGet", offsetof(cudrv, device_get) },
    { "cuDeviceGetName", offsetof(cudrv, device_get_name) },
    { "cuDeviceGetAttribute", offsetof(cudrv, device_get_attribute) },
    { "cuCtxCreate_v2", offsetof(cudrv, ctx_create) },
    { "cuCtxDestroy_v2", offsetof(cudrv, ctx_destroy) },
    { "cuCtxSynchronize", offsetof(cudrv, ctx_synchronize) },
    { "cuModuleLoadData", offsetof(cudrv, module_load_data) },
    { "cuModuleUnload", offsetof(cudrv, module_unload) },
    { "cuModuleGetFunction", offsetof(cudrv, module_get_function) },
    { "cuFuncGetAttribute", offsetof(cudrv, func_get_attribute) },
    { "cuFuncSetAttribute", offsetof(cudrv, func_set_attribute) },
    { "cuMemAlloc_v2", offsetof(cudrv, mem_alloc) },
    { "cuMemFree_v2", offsetof(cudrv, mem_free) },
    { "cuMemcpyHtoD_v2", offsetof(cudrv, memcpy_htod) },
    { "cuMemcpyDtoH_v2", offsetof(cudrv, memcpy_dtoh) },
    { "cuMemsetD8_v2", offsetof(cudrv, memset_d8) },
    { "cuMemcpyDtoDAsync_v2", offsetof(cudrv, memcpy_dtod_async) },
    { "cuLaunchKernel", offsetof(cudrv, launch_kernel) },
    { "cuDevicePrimaryCtxRetain", offsetof(cudrv, primary_ctx_retain) },
    { "cuDevicePrimaryCtxRelease_v2", offsetof(cudrv, primary_ctx_release) },
    { "cuCtxSetCurrent", offsetof(cudrv, ctx_set_current) },
    { "cuDeviceTotalMem_v2", offsetof(cudrv, device_total_mem) },
    { "cuDeviceGetPCIBusId", offsetof(cudrv, device_get_pci_bus_id) },
    { "cuStreamCreate", offsetof(cudrv, stream_create) },
    { "cuStreamDestroy_v2", offsetof(cudrv, stream_destroy) },
    { "cuStreamSynchronize", offsetof(cudrv, stream_synchronize) },
    { "cuStreamCreateWithPriority", offsetof(cudrv, stream_create_with_priority) },
    { "cuCtxGetStreamPriorityRange", offsetof(cudrv, ctx_get_stream_priority_range) },
    { "cuStreamWaitEvent", offsetof(cudrv, stream_wait_event) },
    { "cuEventCreate", offsetof(cudrv, event_create) },
    { "cuEventRecord", offsetof(cudrv, event_record) },
    { "cuEventSynchronize", offsetof(cudrv, event_synchronize) },
    { "cuEventElapsedTime", offsetof(cudrv, event_elapsed_time) },
    { "cuEventDestroy_v2", offsetof(cudrv, event_destroy) },
    { "cuStreamBeginCapture_v2", offsetof(cudrv, stream_begin_capture) },
    { "cuStreamEndCapture", offsetof(cudrv, stream_end_capture) },
    { "cuGraphInstantiateWithFlags", offsetof(cudrv, graph_instantiate) },
    { "cuGraphLaunch", offsetof(cudrv, graph_launch) },
    { "cuGraphExecDestroy", offsetof(cudrv, graph_exec_destroy) },
    { "cuGraphDestroy", offsetof(cudrv, graph_destroy) },
    { "cuGetErrorName", offsetof(cudrv, get_error_name) },
    { "cuGetErrorString", offsetof(cudrv, get_error_string) },
};

/* Names for the codes cuInit gives on machines where the driver cannot name them itself (the
 * toolkit's stub libcuda answers cuGetErrorName with an error too). Values from cuda.h. */
static const struct {
    cudrv_result code;
    const char *name;
} cudrv_init_errors[] = {
    { 3, "CUDA_ERROR_NOT_INITIALIZED" },
    { 34, "CUDA_ERROR_STUB_LIBRARY (a toolkit stub, not a driver)" },
    { 35, "CUDA_ERROR_INSUFFICIENT_DRIVER" },
    { 100, "CUDA_ERROR_NO_DEVICE" },
    { 304, "CUDA_ERROR_OPERATING_SYSTEM" },
    { 803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH" },
    { 804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE" },
    { 999, "CUDA_ERROR_UNKNOWN" },
};

cudrv_result cudrv_allow_dynamic_shared(const cudrv *d, cudrv_function fn, cudrv_device dev)
{
    int optin = 0, fixed = 0;
    cudrv_result r = d->device_get_attribute(&optin, CUDRV_ATTR_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
    if (r == CUDRV_SUCCESS) r = d->func_get_attribute(&fixed, CUDRV_FUNC_ATTR_SHARED_SIZE_BYTES, fn);
    if (r == CUDRV_SUCCESS && optin > fixed)
        r = d->func_set_attribute(fn, CUDRV_FUNC_ATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin - fixed);
    return r;
}

const char *cudrv_strerror(const cudrv *d, cudrv_result err, char *buf, size_t len)
{
    const char *name = NULL, *text = NULL;
    if (d && d->get_error_name && d->get_error_name(err, &name) != CUDRV_SUCCESS)
        name = NULL;
    if (d && d->get_error_string && d->get_error_string(err, &text) != CUDRV_SUCCESS)
        text = NULL;
    if (name && text) {
        snprintf(buf, len, "%s: %s", name, text);
        return buf;
    }
    for (size_t i = 0; i < sizeof cudrv_init_errors / sizeof cudrv_init_errors[0]; i++)
        if (cudrv_init_errors[i].code == err) {
            snprintf(buf, len, "%s", cudrv_init_errors[i].name);
            return buf;
        }
    snprintf(buf, len, "CUDA error %d", err);
    return buf;
}

int cudrv_open(cudrv *d, char *why, size_t why_len)
{
    memset(d, 0, sizeof *d);
    d->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!d->lib) {
        const char *e = dlerror();
        snprintf(why, why_len, "%s", e ? e : "libcuda.so.1: dlopen failed");
        return CUDRV_OPEN_NO_LIBRARY;
    }
    for (size_t i = 0; i < sizeof cudrv_symbols / sizeof cudrv_symbols[0]; i++) {
        void *p = dlsym(d->lib, cudrv_symbols[i].name);
        if (!p) {
            snprintf(why, why_len, "libcuda.so.1 has no %s (driver too old?)", cudrv_symbols[i].name);
            cudrv_close(d);
            return CUDRV_OPEN_NO_SYMBOL;
        }
        /* POSIX guarantees a data pointer from dlsym can hold a function pointer; memcpy moves it
         * into the typed field without the cast ISO C leaves undefined. */
        memcpy((char *)d + cudrv_symbols[i].offset, &p, sizeof p);
    }
    void *ex = dlsym(d->lib, "cuLaunchKernelEx");   /* optional: launches fall back without it */
    if (ex) memcpy(&d->launch_kernel_ex, &ex, sizeof ex);

    char msg[256];
    cudrv_result r = d->init(0);
    if (r != CUDRV_SUCCESS) {
        snprintf(why, why_len, "cuInit: %s", cudrv_strerror(d, r, msg, sizeof msg));
        cudrv_close(d);
        return CUDRV_OPEN_NO_DEVICE;
    }
    int count = 0;
    r = d->device_get_count(&count);
    if (r != CUDRV_SUCCESS || count < 1) {
        if (r != CUDRV_SUCCESS)
            snprintf(why, why_len, "cuDeviceGetCount: %s", cudrv_strerror(d, r, msg, sizeof msg));
        else
            snprintf(why, why_len, "the driver reports 0 devices");
        cudrv_close(d);
        return CUDRV_OPEN_NO_DEVICE;
    }
    return 0;
}

void cudrv_close(cudrv *d)
{
    if (d->lib)
        dlclose(d->lib);
    memset(d, 0, sizeof *d);
}
