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
 * allocates a workspace zeroes them once; every launch leaves them zero.
 *
 * Stream-K: a variant with SPLITK = 0 is launched with G blocks along grid.x (grid.y = grid.z = 1;
 * G is a fixed multiple of the device's compute units, at most KT_GEMM_TILE_COUNTERS:
 * kt_gemm_streamk_blocks in runtime/gemm_geometry.h).
 * The work is T = ceil(M/BM) * ceil(N/BN) tiles (N fastest) of U = ceil(K/BK) K steps each, laid
 * end to end; of the G blocks the first B = min(G, T*U) work (the rest return at once, so every
 * working block has at least one step), block b taking steps [kt_gemm_streamk_start(T*U, B, b),
 * ...(b + 1)): every block streams the same number of weight bytes to within one step. A tile one block
 * covers whole is written directly. A tile split over blocks c0..c1 (c0 = the owner of its first
 * step) is summed in a slab of BM*BN floats per piece, piece of block c at slab
 * kt_gemm_streamk_slab(c, ...): 2c, or 2c + 1 for block c0 when c0 began in an earlier tile. The
 * last of the c1 - c0 + 1 blocks to bump counter word c0 adds the pieces in block order (so in K
 * order: deterministic), writes C and zeroes the word. Workspace: 2*G*BM*BN floats + counters. */
#ifndef KT_ABI_GEMM_H
#define KT_ABI_GEMM_H

#define KT_GEMM_TILE_COUNTERS 4096   /* 32-bit words at the end of every split-K workspace */

/* The functions below run on the host (launch geometry, tests) and in kernels. */
#if defined(__CUDACC__) && !defined(__clang__)
#define KT_ABI_FN static inline __host__ __device__
#elif defined(__CUDA__) || defined(__HIP__)
#define KT_ABI_FN static inline __attribute__((host, device))
#else
#define KT_ABI_FN static inline
#endif

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

/* K elements per split-K segment: ceil(ceil(K/S)/BK)*BK (S < 1, stream-K: the whole of K). */
static inline int kt_gemm_k_per_split(int k, int splitk, int bk)
{
    if (splitk < 1) splitk = 1;
    int per = (k + splitk - 1) / splitk;
    return ((per + bk - 1) / bk) * bk;
}

/* Stream-K: the blocks of a grid of `grid` that take steps: at most one a step. */
KT_ABI_FN int kt_gemm_streamk_working(long long total, int grid)
{
    return total < grid ? (int)total : grid;
}

/* Stream-K: the first of the `total` steps block b of `blocks` (working blocks) takes; block
 * `blocks` gives the end. */
KT_ABI_FN long long kt_gemm_streamk_start(long long total, int blocks, int b)
{
    return total * b / blocks;
}

/* Stream-K: the block whose steps include step x (0 <= x < total): the last b with start(b) <= x. */
KT_ABI_FN int kt_gemm_streamk_owner(long long total, int blocks, long long x)
{
    return (int)(((x + 1) * blocks - 1) / total);
}

/* Stream-K: the slab of block c's piece of the tile whose first step is `first_step` and whose
 * first step's owner is c0. */
KT_ABI_FN int kt_gemm_streamk_slab(long long total, int blocks, int c, int c0, long long first_step)
{
    return c == c0 && kt_gemm_streamk_start(total, blocks, c) < first_step ? 2 * c + 1 : 2 * c;
}

#endif
