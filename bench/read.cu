// read.cu: bench_gemm's memory ceilings, both kernels in one cubin. kt_bench_read, the pure-read ceiling: every byte of a buffer far larger than L2 read
// once with 16-byte loads, four independent loads in flight per thread, grid-stride, nothing
// written (the checksum goes to memory only when it equals a value it never takes, which the
// compiler cannot know). Built here with nvcc -cubin for sm_90a (Makefile: out/bench/read.cubin)
// and loaded by bench/ceiling.c; a kernel, not a copy, because a GEMM at small M is a read of W.
// kt_bench_copy, the copy ceiling: the same loads, each stored to dst (a kernel, because the
// driver's device-to-device memcpy is well under what a kernel reaches on an H200).
#include "read.h"

extern "C" __global__ void __launch_bounds__(KT_READ_THREADS) kt_bench_read(kt_read_args a)
{
    const uint4 *__restrict__ src = (const uint4 *)a.src;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    unsigned acc = 0;
    for (; i + 3 * stride < a.n16; i += 4 * stride) {
        uint4 v0 = src[i], v1 = src[i + stride], v2 = src[i + 2 * stride], v3 = src[i + 3 * stride];
        acc ^= (v0.x ^ v0.y ^ v0.z ^ v0.w) + (v1.x ^ v1.y ^ v1.z ^ v1.w) +
               (v2.x ^ v2.y ^ v2.z ^ v2.w) + (v3.x ^ v3.y ^ v3.z ^ v3.w);
    }
    for (; i < a.n16; i += stride) {
        uint4 v = src[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == a.never)
        a.sink[0] = acc;
}

extern "C" __global__ void __launch_bounds__(KT_COPY_THREADS) kt_bench_copy(kt_copy_args a)
{
    const uint4 *__restrict__ src = (const uint4 *)a.src;
    uint4 *__restrict__ dst = (uint4 *)a.dst;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < a.n16; i += 4 * stride) {
        uint4 v0 = src[i], v1 = src[i + stride], v2 = src[i + 2 * stride], v3 = src[i + 3 * stride];
        dst[i] = v0;
        dst[i + stride] = v1;
        dst[i + 2 * stride] = v2;
        dst[i + 3 * stride] = v3;
    }
    for (; i < a.n16; i += stride)
        dst[i] = src[i];
}
