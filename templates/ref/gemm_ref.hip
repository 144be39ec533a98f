/* gemm_ref.hip: the GPU reference for the dense GEMM, C64[M,N] = A[M,K] . W[N,K]^T accumulated in
 * double. The tuner verifies every variant against it at the problem's real shape (a CPU float64
 * reference at M = 8192 would take seconds per problem); the device tests hold it to the CPU one.
 *
 * ABI: kt_gemm_args, with c pointing at a dense double [M][N] (ldc = N, ignored) and partials
 * unused. Launch: grid (ceil(N/16), ceil(M/16)), 256 threads; thread (tx, ty) of the block owns
 * C64[y*16 + ty][x*16 + tx]. Each 16-deep K slice of A and W is staged in LDS as double, so every
 * element is converted once per block, not once per product. Products of two bf16/fp16 values are
 * exact in double, and the sum's rounding error is ~K * 2^-53 relative: far under any bound. */
#include "abi/gemm.h"

#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;

KT_KERNEL(KT_KERNEL_NAME, 256)(kt_gemm_args args)
{
    KT_SHARED double sa[16][17];   /* +1: column reads hit distinct banks */
    KT_SHARED double sw[16][17];
    const kt_elem *a = (const kt_elem *)args.a;
    const kt_elem *w = (const kt_elem *)args.w;
    const int tx = kt_thread_id() % 16, ty = kt_thread_id() / 16;
    const int row = kt_block_id_y() * 16 + ty, col = kt_block_id_x() * 16 + tx;
    const int wrow = kt_block_id_x() * 16 + ty;  /* the W row this thread stages */
    double acc = 0.0;
    for (int k0 = 0; k0 < args.k; k0 += 16) {
        const int k = k0 + tx;
        sa[ty][tx] = (row < args.m && k < args.k) ? (double)kt_to_float(a[(long long)row * args.lda + k]) : 0.0;
        sw[ty][tx] = (wrow < args.n && k < args.k) ? (double)kt_to_float(w[(long long)wrow * args.ldw + k]) : 0.0;
        kt_barrier();
        for (int j = 0; j < 16; j++) acc += sa[ty][j] * sw[tx][j];
        kt_barrier();
    }
    if (row < args.m && col < args.n) ((double *)args.c)[(long long)row * args.n + col] = acc;
}
