/* op_gemm.h: the GEMM descriptor (op_gemm.c) and the order of its variant parameters, for the
 * code that reads a GEMM variant's fields (its law, its geometry). Everything else goes through
 * runtime/op.h. */
#ifndef KT_OP_GEMM_H
#define KT_OP_GEMM_H
#include "op.h"
#include "gemm_geometry.h"

/* kt_variant.p[] of a GEMM kernel, in this order (recipe axes BM BN BK WM WN SK ST). */
enum { KT_GEMM_P_BM, KT_GEMM_P_BN, KT_GEMM_P_BK, KT_GEMM_P_WM, KT_GEMM_P_WN, KT_GEMM_P_SK, KT_GEMM_P_ST,
       KT_GEMM_NPARAMS };

/* The dimensions of a GEMM problem, in kt_problem.dim[] order: C[m][n] = A[m][k] . W[n][k]^T. */
enum { KT_GEMM_D_N, KT_GEMM_D_K, KT_GEMM_D_M, KT_GEMM_NDIMS };

extern const kt_op kt_op_gemm;

static inline kt_gemm_variant kt_gemm_variant_of(const kt_variant *v)
{
    kt_gemm_variant g = {v->p[KT_GEMM_P_BM], v->p[KT_GEMM_P_BN], v->p[KT_GEMM_P_BK], v->p[KT_GEMM_P_WM],
                         v->p[KT_GEMM_P_WN], v->p[KT_GEMM_P_SK], v->p[KT_GEMM_P_ST]};
    return g;
}

#endif
