/* gemm.h: the one argument struct every dense GEMM variant takes by value.
 * Plain C, included by the kernels (HIP C++/CUDA) and by the runtime and tuner (C11).
 *
 *   C[M,N] = A[M,K] . W[N,K]^T     (the F.linear layout: W is row-major [N][K])
 *
 * A, W and C are row-major with leading dimensions lda, ldw, ldc (elements). Element type is the
 * variant's dtype (bf16 or fp16) for A, W and C; accumulation is fp32.
 *
 * Split-K: a variant with SPLITK = S > 1 is launched with grid.z = S. Segment z covers
 * K range [z*k_per_split, min(K, (z+1)*k_per_split)), where k_per_split is a multiple of BK
 * (kt_gemm_k_per_split). Each segment writes its fp32 tile to partials[z*M*N + m*N + n]
 * (a dense M x N slab per segment), and the variant's reduce kernel, <name>_reduce, sums the
 * S slabs in order z = 0..S-1 (deterministic) and writes C. The workspace is a fixed-size
 * buffer of partials_elems floats, allocated once; a launch needs S*M*N <= partials_elems -
 * KT_GEMM_TILE_COUNTERS.
 *
 * A split-K variant whose code object has no <name>_reduce reduces in its own launch: after
 * writing its slab, a block bumps the counter of its output tile, and the block that arrives last
 * sums the S slabs in the same order and writes C, then sets the counter back to zero. The
 * counters are the last KT_GEMM_TILE_COUNTERS 32-bit words of the workspace (tile t uses word
 * t % KT_GEMM_TILE_COUNTERS; the last block on a word reduces every tile that shares it). Whoever
 * allocates a workspace zeroes them once; every launch leaves them zero. */
#ifndef KT_ABI_GEMM_H
#define KT_ABI_GEMM_H

#define KT_GEMM_TILE_COUNTERS 4096   /* 32-bit words at the end of every split-K workspace */

typedef struct kt_gemm_args {
    const void *a;          /* [M][lda] */
    const void *w;          /* [N][ldw] */
    void *c;                /* [M][ldc] */
    float *partials;        /* split-K workspace, fp32, S*M*N elements used */
    long long partials_elems;
    int m, n, k;
    int lda, ldw, ldc;
    int k_per_split;        /* K elements per segment, multiple of BK; = K rounded up to BK when S = 1 */
    int pad_;
} kt_gemm_args;

/* K elements per split-K segment: ceil(ceil(K/S)/BK)*BK. */
static inline int kt_gemm_k_per_split(int k, int splitk, int bk)
{
    int per = (k + splitk - 1) / splitk;
    return ((per + bk - 1) / bk) * bk;
}

#endif
