/* Fixture kernel for tests/unit/test_isa_stats.c (sm_90a): a K loop staging A/B through shared
 * memory with two HMMA per iteration, then a wider epilogue loop with no matrix op. */
#include <mma.h>
using namespace nvcuda;

extern "C" __global__ void kloops(const uint4 *a, const uint4 *b, float *c, const float *s,
                                  int ksteps, int nepi)
{
    __shared__ uint4 sa[32], sb[32];
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    int t = threadIdx.x;
#pragma unroll 1
    for (int k = 0; k < ksteps; k++) {
        sa[t] = a[k * 32 + t];
        sb[t] = b[k * 32 + t];
        __syncthreads();
        wmma::load_matrix_sync(fa, (const half *)sa, 16);
        wmma::load_matrix_sync(fb, (const half *)sb, 16);
        wmma::mma_sync(acc, fa, fb, acc);
        __syncthreads();
    }
#pragma unroll 1
    for (int e = 0; e < nepi; e++) {
        float x = s[e * 32 + t];
        for (int i = 0; i < acc.num_elements; i++) acc.x[i] = (acc.x[i] * x + x * x) * x - 1.0f;
    }
    wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

/* A second kernel in the same cubin, so selection by name is exercised. */
extern "C" __global__ void kplain(float *p)
{
    p[threadIdx.x] = p[threadIdx.x] * 2.0f + 1.0f;
}
