/* cublas_dl.h: cuBLAS opened at run time with dlopen, for bench_gemm's peer column. Prefix bcl_.
 *
 * bench_gemm is built on a machine without CUDA libraries and carried to the GPU machine, so it
 * links no cuBLAS: bcl_open tries, in order, $KT_CUBLAS (a file), the sonames libcublas.so.13,
 * .so.12 and .so (the loader's search path), the toolkit folders (/usr/local/cuda/lib64, ...) and
 * the NVIDIA wheels under a Python install (torch's venv: site-packages/nvidia/cu13/lib or
 * nvidia/cublas/lib), and reports the file that loaded. Where a folder is tried, its libcublasLt
 * is loaded first by path, so libcublas finds it even where its RUNPATH does not say $ORIGIN.
 *
 * The handle is given a stream and a fixed workspace, so a GEMM enqueued under stream capture
 * allocates nothing and the captured graph replays it. Enum values are cuBLAS 12/13's
 * (cublas_api.h, library_types.h). */
#ifndef KT_BENCH_CUBLAS_DL_H
#define KT_BENCH_CUBLAS_DL_H
#include <stddef.h>

typedef struct bcl_cublas {
    void *lib, *lt;                 /* dlopen handles (lt: libcublasLt loaded ahead, or NULL) */
    char path[1024];                /* the file that loaded, as the loader resolved it */
    int version;                    /* cublasGetVersion: 130100 = 13.1.0 */
    void *handle;                   /* cublasHandle_t */
    int (*create)(void **handle);                                        /* cublasCreate_v2 */
    int (*destroy)(void *handle);                                        /* cublasDestroy_v2 */
    int (*set_stream)(void *handle, void *stream);                       /* cublasSetStream_v2 */
    int (*set_workspace)(void *handle, void *ws, size_t bytes);          /* cublasSetWorkspace_v2 */
    int (*get_version)(void *handle, int *version);                      /* cublasGetVersion_v2 */
    int (*gemm_ex)(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
                   const void *a, int atype, int lda, const void *b, int btype, int ldb,
                   const void *beta, void *c, int ctype, int ldc, int compute, int algo); /* cublasGemmEx */
    const char *(*status_string)(int status);                            /* cublasGetStatusString, optional */
} bcl_cublas;

/* Loads the library and creates a handle on the current device's primary context (the one the
 * ktb_ CUDA backend retains), bound to stream with a workspace of ws_bytes at ws (device memory
 * the caller owns and frees after bcl_close). 0, or -1 with err naming every candidate tried. */
int bcl_open(bcl_cublas *c, void *stream, void *ws, size_t ws_bytes, char *err, size_t errlen);
void bcl_close(bcl_cublas *c);   /* safe on a zeroed or failed bcl_cublas */

/* Row-major C[m][n] = A[m][k] . W[n][k]^T with leading dimensions in elements, bf16 (bf16 = 1) or
 * fp16 in and out, fp32 compute (CUBLAS_COMPUTE_32F), the default algorithm; enqueued on the
 * handle's stream. cuBLAS is column-major, so it computes C^T (n x m, ldc) = op_T(W as k x n,
 * ld = ldw) x op_N(A^T as k x m, ld = lda). 0, or -1 with err. */
int bcl_gemm(bcl_cublas *c, int bf16, int m, int n, int k, const void *a, int lda, const void *w, int ldw,
             void *out, int ldc, char *err, size_t errlen);

#endif
