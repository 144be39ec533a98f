/* rmsnorm.h: the one argument struct every fused add + RMSNorm variant takes by value (op
 * "rmsnorm_add", templates/norm/rmsnorm_add.hip, descriptor runtime/op_rmsnorm.c).
 * Plain C, included by the kernels (HIP C++/CUDA) and by the runtime and tuner (C11).
 *
 * In place, per row i < rows, with every element type the variant's dtype (bf16 or fp16):
 *
 *   z[j]        = rnd(float(x[i][j]) + float(residual[i][j]))      j < hidden
 *   residual[i] = z                                                 (the new residual stream)
 *   s           = 1 / sqrt(sum_j float(z[j])^2 / hidden + eps)      (fp32, from the ROUNDED z)
 *   x[i][j]     = rnd(float(rnd(float(z[j]) * s)) * float(weight[j]))
 *
 * rnd is round-to-nearest-even to the dtype. These are vLLM's fused_add_rms_norm rounding points
 * (csrc/layernorm_kernels.cu, both its vectorized and its generic kernel): the sum is rounded
 * before it is stored and squared, and the normalized value is rounded before the weight
 * multiply. The sum of squares is accumulated in fp32 (its order is the variant's: per thread,
 * then across the block); s is the correctly rounded fp32 1/sqrt (vLLM's rsqrtf may differ from
 * it by an ulp).
 *
 * Layout: x is row-major with x_stride elements between rows (x_stride >= hidden: x may be a
 * slice of a wider tensor); residual is contiguous [rows][hidden]; weight is [hidden]. x and
 * residual must not overlap. Any rows >= 1 and hidden >= 1 are served: a variant moves VW
 * elements a load when hidden and x_stride are multiples of VW and x, residual and weight are
 * VW*2-byte aligned (checked at run time), element by element otherwise.
 *
 * Launch: grid.x = ceil(rows / RB) blocks of TH threads (runtime/op_rmsnorm.c); block b owns
 * rows [b*RB, b*RB + RB), TH/RB threads a row. No workspace. */
#ifndef KT_ABI_RMSNORM_H
#define KT_ABI_RMSNORM_H

typedef struct kt_rmsnorm_add_args {
    void *x;                /* [rows][x_stride]: in the input, out the normalized rows */
    void *residual;         /* [rows][hidden], contiguous: in the residual, out x + residual */
    const void *weight;     /* [hidden] */
    int rows, hidden;
    int x_stride;           /* elements between rows of x, >= hidden */
    float eps;              /* added to the mean square, > 0 in practice (1e-5, 1e-6) */
} kt_rmsnorm_add_args;

#endif
