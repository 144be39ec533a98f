/* nv_kernels.cu: fixture kernels for the cubin reader (tests/unit/test_elf_cubin.c).
 * make_fixtures.sh compiles this with nvcc -cubin for sm_90a and keeps ptxas -v's report beside it. */

/* k_axpy: the baseline, no shared memory, no stack, no launch bound. */
extern "C" __global__ void k_axpy(float a, const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

/* k_shared: 4096 bytes of static shared memory and __launch_bounds__(256) (EIATTR_MAX_THREADS). */
extern "C" __global__ void __launch_bounds__(256) k_shared(const float *x, float *y)
{
    __shared__ float tile[1024];
    int t = threadIdx.x;
    tile[t] = x[t];
    __syncthreads();
    y[t] = tile[255 - t] + tile[t ^ 1];
}

/* k_frame: a runtime-indexed 2 KiB local array gives a stack frame (local memory) with no spills. */
extern "C" __global__ void k_frame(const int *idx, float *y, int n)
{
    float priv[512];
    int t = threadIdx.x;
#pragma unroll 1
    for (int i = 0; i < 512; i++) priv[i] = (float)(i * t);
    float s = 0;
    for (int i = 0; i < n; i++) s += priv[idx[i] & 511];
    y[t] = s;
}

/* k_spill: 24 live values under a 16-register cap (ptxas raises it to its floor of 24) spill. */
extern "C" __global__ void __maxnreg__(16) k_spill(const float *x, float *y)
{
    int t = threadIdx.x;
    float v[24];
#pragma unroll
    for (int i = 0; i < 24; i++) v[i] = x[t + i * 64];
    float s = 0;
#pragma unroll
    for (int i = 0; i < 24; i++) s = s * v[i] + v[(i * 7 + 1) % 24];
#pragma unroll
    for (int i = 0; i < 24; i++) y[t + i * 64] = v[i] * s;
}

/* k_mixed: a local array and register spills together. Only the spill loads/stores count as
 * spills; the array's local loads/stores only add to the stack frame. */
extern "C" __global__ void __maxnreg__(24) k_mixed(const int *idx, const float *x, float *y, int n)
{
    float priv[64];
    float v[24];
    int t = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 24; i++) v[i] = x[t + i * 64];
#pragma unroll 1
    for (int i = 0; i < 64; i++) priv[i] = (float)(i * t);
    float s = 0;
    for (int i = 0; i < n; i++) s += priv[idx[i] & 63];
#pragma unroll
    for (int i = 0; i < 24; i++) s = s * v[i] + v[(i * 5 + 2) % 24];
#pragma unroll
    for (int i = 0; i < 24; i++) y[t + i * 64] = v[i] * s;
}

/* k_dynamic: dynamic shared memory only. Its static shared size is 0 even though sm_90 cubins
 * still give it a .nv.shared section (holding just the 1 KiB driver reserve). */
extern "C" __global__ void k_dynamic(float *y)
{
    extern __shared__ float dyn[];
    dyn[threadIdx.x] = y[threadIdx.x];
    __syncthreads();
    y[threadIdx.x] = dyn[31 - threadIdx.x];
}
