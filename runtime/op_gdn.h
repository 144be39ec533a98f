/* op_gdn.h: the gated delta-net decode descriptor (op_gdn.c) and the order of its variant
 * parameters and dimensions, for the code that reads them (its tests, its law). Everything else
 * goes through runtime/op.h. ABI: templates/abi/gdn.h; template templates/gdn/decode.hip.
 *
 * Problem key:
 *   gdn_decode bf16 dk=128 dv=128 hk=4 hv=8 kw=4 norm=1 vk=1 q<=1 batch<=8
 * dk, dv the key and value head sizes, hk and hv the key and value heads of one rank, kw the conv
 * taps, norm 1 when the step ends in the gated RMSNorm, vk 1 for a K-last state; q tokens a
 * sequence (1, or 1 + speculative tokens), batch sequences. */
#ifndef KT_OP_GDN_H
#define KT_OP_GDN_H
#include "op.h"
#include "../templates/abi/gdn.h"

/* kt_variant.p[] of a gdn_decode kernel (recipe axes VK DK DV BV NW KPT MT OB PS PF). */
enum { KT_GDN_P_VK, KT_GDN_P_DK, KT_GDN_P_DV, KT_GDN_P_BV, KT_GDN_P_NW, KT_GDN_P_KPT, KT_GDN_P_MT, KT_GDN_P_OB,
       KT_GDN_P_PS, KT_GDN_P_PF, KT_GDN_NPARAMS };

/* The dimensions of a problem, in kt_problem.dim[] order. */
enum { KT_GDN_D_DK, KT_GDN_D_DV, KT_GDN_D_HK, KT_GDN_D_HV, KT_GDN_D_KW, KT_GDN_D_NORM, KT_GDN_D_VK, KT_GDN_D_Q,
       KT_GDN_D_BATCH, KT_GDN_NDIMS };

/* Columns of a conv-state slot in the verification sets: enough for any speculative step. */
#define KT_GDN_VERIFY_CONV_LEN (KT_GDN_MAX_KW - 1 + KT_GDN_MAX_TOKENS)

extern const kt_op kt_op_gdn_decode;

#endif
