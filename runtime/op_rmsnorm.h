/* op_rmsnorm.h: the fused add + RMSNorm descriptor (op_rmsnorm.c) and the order of its variant
 * parameters and dimensions, for the code that reads them (its tests, its law). Everything else
 * goes through runtime/op.h. ABI: templates/abi/rmsnorm.h; template templates/norm/rmsnorm_add.hip. */
#ifndef KT_OP_RMSNORM_H
#define KT_OP_RMSNORM_H
#include "op.h"
#include "../templates/abi/rmsnorm.h"

/* kt_variant.p[] of an rmsnorm_add kernel, in this order (recipe axes RB VW TH UN). */
enum { KT_RMS_P_RB, KT_RMS_P_VW, KT_RMS_P_TH, KT_RMS_P_UN, KT_RMS_NPARAMS };

/* The dimensions of a problem, in kt_problem.dim[] order: hidden static, rows bucketed. */
enum { KT_RMS_D_HIDDEN, KT_RMS_D_ROWS, KT_RMS_NDIMS };

/* The eps the verification sets use (args_for) and the CPU reference assumes: the problem key
 * has no eps, and a model's 1e-5 or 1e-6 changes nothing the tuner measures. */
#define KT_RMS_VERIFY_EPS 1e-6f

extern const kt_op kt_op_rmsnorm_add;

#endif
