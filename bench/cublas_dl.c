/* cublas_dl.c: see cublas_dl.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* dladdr */
#endif
#include "cublas_dl.h"
#include "kt_env.h"

#include <dlfcn.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cublas_api.h / library_types.h (CUDA 12 and 13 agree). */
#define BCL_OP_N 0
#define BCL_OP_T 1
#define BCL_R_16F 2
#define BCL_R_16BF 14
#define BCL_COMPUTE_32F 68
#define BCL_GEMM_DEFAULT (-1)
#define BCL_STATUS_SUCCESS 0

static const struct {
    const char *name;
    size_t offset;
    int optional;
} bcl_symbols[] = {
    { "cublasCreate_v2", offsetof(bcl_cublas, create), 0 },
    { "cublasDestroy_v2", offsetof(bcl_cublas, destroy), 0 },
    { "cublasSetStream_v2", offsetof(bcl_cublas, set_stream), 0 },
    { "cublasSetWorkspace_v2", offsetof(bcl_cublas, set_workspace), 0 },
    { "cublasGetVersion_v2", offsetof(bcl_cublas, get_version), 0 },
    { "cublasGemmEx", offsetof(bcl_cublas, gemm_ex), 0 },
    { "cublasGetStatusString", offsetof(bcl_cublas, status_string), 1 },
};

/* Sonames first (whatever the machine's loader path holds), then folders where a toolkit or a
 * wheel keeps them. Globs: the Python version and the venv's place vary between images. */
static const char *const bcl_sonames[] = { "libcublas.so.13", "libcublas.so.12", "libcublas.so" };
static const char *const bcl_globs[] = {
    "/usr/local/cuda/lib64/libcublas.so.1[0-9]",
    "/usr/local/cuda/targets/x86_64-linux/lib/libcublas.so.1[0-9]",
    "/usr/local/cuda-1[0-9]*/lib*/libcublas.so.1[0-9]",
    "/opt/torch/.venv/lib/python3*/site-packages/nvidia/cu1[0-9]/lib/libcublas.so.1[0-9]",
    "/opt/torch/.venv/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
    "/opt/*/lib/python3*/site-packages/nvidia/cu1[0-9]/lib/libcublas.so.1[0-9]",
    "/opt/*/lib/python3*/site-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
    "/usr/local/lib/python3*/dist-packages/nvidia/cu1[0-9]/lib/libcublas.so.1[0-9]",
    "/usr/local/lib/python3*/dist-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
    "/usr/lib/python3/dist-packages/nvidia/cublas/lib/libcublas.so.1[0-9]",
};

/* Appends "; what" to the list of tried candidates, as far as it fits. */
static void bcl_note(char *tried, size_t len, const char *what)
{
    size_t used = strlen(tried);
    if (used + 3 < len)
        snprintf(tried + used, len - used, "%s%s", used ? "; " : "", what);
}

/* Loads one candidate: a soname, or a path whose folder's libcublasLt is loaded first. Resolves
 * every symbol; 0 on success, else -1 with the reason appended to tried. */
static int bcl_try(bcl_cublas *c, const char *cand, char *tried, size_t tried_len)
{
    const char *slash = strrchr(cand, '/');
    if (slash) {
        /* libcublas.so.N needs libcublasLt.so.N: load it from the same folder, globally, so the
         * soname lookup below finds it already loaded. */
        char lt[1024];
        const char *ver = strstr(slash, ".so");
        snprintf(lt, sizeof lt, "%.*s/libcublasLt%s", (int)(slash - cand), cand, ver ? ver : ".so");
        c->lt = dlopen(lt, RTLD_NOW | RTLD_GLOBAL);
    }
    c->lib = dlopen(cand, RTLD_NOW | RTLD_LOCAL);
    if (!c->lib) {
        const char *e = dlerror();
        char msg[1200];
        snprintf(msg, sizeof msg, "%s", e ? e : cand);
        bcl_note(tried, tried_len, msg);
        if (c->lt)
            dlclose(c->lt);
        c->lt = NULL;
        return -1;
    }
    for (size_t i = 0; i < sizeof bcl_symbols / sizeof bcl_symbols[0]; i++) {
        void *p = dlsym(c->lib, bcl_symbols[i].name);
        if (!p && !bcl_symbols[i].optional) {
            char msg[1200];
            snprintf(msg, sizeof msg, "%s: no %s", cand, bcl_symbols[i].name);
            bcl_note(tried, tried_len, msg);
            dlclose(c->lib);
            c->lib = NULL;
            if (c->lt)
                dlclose(c->lt);
            c->lt = NULL;
            return -1;
        }
        memcpy((char *)c + bcl_symbols[i].offset, &p, sizeof p);   /* POSIX: dlsym holds a function pointer */
    }
    /* The file the loader picked for a soname: where a symbol of it lives. */
    Dl_info info;
    void *sym = NULL;
    memcpy(&sym, (char *)c + bcl_symbols[0].offset, sizeof sym);
    if (dladdr(sym, &info) && info.dli_fname)
        snprintf(c->path, sizeof c->path, "%s", info.dli_fname);
    else
        snprintf(c->path, sizeof c->path, "%s", cand);
    return 0;
}

static const char *bcl_status(const bcl_cublas *c, int st)
{
    const char *s = c->status_string ? c->status_string(st) : NULL;
    return s ? s : "cuBLAS error";
}

static int bcl_load(bcl_cublas *c, char *err, size_t errlen)
{
    char tried[4096] = "";
    const char *env = kt_env_get("KT_CUBLAS");
    if (env && *env) {
        if (bcl_try(c, env, tried, sizeof tried) == 0)
            return 0;
        snprintf(err, errlen, "cublas: KT_CUBLAS=%s does not load: %s", env, tried);
        return -1;
    }
    for (size_t i = 0; i < sizeof bcl_sonames / sizeof bcl_sonames[0]; i++)
        if (bcl_try(c, bcl_sonames[i], tried, sizeof tried) == 0)
            return 0;
    for (size_t i = 0; i < sizeof bcl_globs / sizeof bcl_globs[0]; i++) {
        glob_t g;
        if (glob(bcl_globs[i], 0, NULL, &g) != 0) {
            bcl_note(tried, sizeof tried, bcl_globs[i]);   /* nothing matched */
            continue;
        }
        /* Highest version last in glob's sorted order: try from the end. */
        for (size_t j = g.gl_pathc; j-- > 0;)
            if (bcl_try(c, g.gl_pathv[j], tried, sizeof tried) == 0) {
                globfree(&g);
                return 0;
            }
        globfree(&g);
    }
    snprintf(err, errlen, "cublas: no libcublas could be loaded (set KT_CUBLAS=/path/libcublas.so.N); tried: %s",
             tried);
    return -1;
}

int bcl_open(bcl_cublas *c, void *stream, void *ws, size_t ws_bytes, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    if (bcl_load(c, err, errlen))
        return -1;
    int st = c->create(&c->handle);
    if (st != BCL_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublas: %s: cublasCreate: status %d (%s)", c->path, st, bcl_status(c, st));
        c->handle = NULL;
        bcl_close(c);
        return -1;
    }
    const char *call = "cublasSetStream";
    st = c->set_stream(c->handle, stream);
    if (st == BCL_STATUS_SUCCESS) {
        call = "cublasSetWorkspace";
        st = c->set_workspace(c->handle, ws, ws_bytes);
    }
    if (st == BCL_STATUS_SUCCESS) {
        call = "cublasGetVersion";
        st = c->get_version(c->handle, &c->version);
    }
    if (st != BCL_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublas: %s: %s: status %d (%s)", c->path, call, st, bcl_status(c, st));
        bcl_close(c);
        return -1;
    }
    return 0;
}

void bcl_close(bcl_cublas *c)
{
    if (!c)
        return;
    if (c->handle && c->destroy)
        c->destroy(c->handle);
    if (c->lib)
        dlclose(c->lib);
    if (c->lt)
        dlclose(c->lt);
    memset(c, 0, sizeof *c);
}

int bcl_gemm(bcl_cublas *c, int bf16, int m, int n, int k, const void *a, int lda, const void *w, int ldw,
             void *out, int ldc, char *err, size_t errlen)
{
    const float one = 1.0f, zero = 0.0f;   /* CUBLAS_COMPUTE_32F takes float scalars */
    int dt = bf16 ? BCL_R_16BF : BCL_R_16F;
    int st = c->gemm_ex(c->handle, BCL_OP_T, BCL_OP_N, n, m, k, &one, w, dt, ldw, a, dt, lda, &zero, out, dt, ldc,
                        BCL_COMPUTE_32F, BCL_GEMM_DEFAULT);
    if (st != BCL_STATUS_SUCCESS) {
        snprintf(err, errlen, "cublas: cublasGemmEx(m=%d n=%d k=%d): status %d (%s)", m, n, k, st, bcl_status(c, st));
        return -1;
    }
    return 0;
}
