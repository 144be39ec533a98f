/* op_gdn_prefill.h: the gated delta-net prefill descriptor (op_gdn_prefill.c) and the order of its
 * variant parameters and dimensions, for the code that reads them (its tests, its law). Everything
 * else goes through runtime/op.h. ABI: templates/abi/gdn_prefill.h; template
 * templates/gdn/prefill.hip.
 *
 * Problem key:
 *   gdn_prefill bf16 dk=128 dv=128 hk=4 hv=8 kw=4 norm=1 vk=0 tokens<=4096 seqs<=8
 * the static dimensions as gdn_decode's; tokens the call's total (every sequence's), seqs its
 * sequences. */
#ifndef KT_OP_GDN_PREFILL_H
#define KT_OP_GDN_PREFILL_H
#include "op.h"
#include "../templates/abi/gdn_prefill.h"

/* kt_variant.p[] of a gdn_prefill kernel (recipe axes VK DK DV BT BV NW PF). */
enum { KT_GDNP_P_VK, KT_GDNP_P_DK, KT_GDNP_P_DV, KT_GDNP_P_BT, KT_GDNP_P_BV, KT_GDNP_P_NW, KT_GDNP_P_PF, KT_GDNP_NPARAMS };

/* The dimensions of a problem, in kt_problem.dim[] order. */
enum { KT_GDNP_D_DK, KT_GDNP_D_DV, KT_GDNP_D_HK, KT_GDNP_D_HV, KT_GDNP_D_KW, KT_GDNP_D_NORM, KT_GDNP_D_VK,
       KT_GDNP_D_TOKENS, KT_GDNP_D_SEQS, KT_GDNP_NDIMS };

/* The kernels' LDS (bytes, each given at launch) of a variant: prep, wy, the state pass, out
 * (prep is launched on wave-64 targets and at BT 16 only: elsewhere wy does its work). prefill.lua's lds() is
 * the same arithmetic. */
enum { KT_GDNP_KERNELS = 4 };
/* 1 where prep is a launch of its own (wave 64, BT 16: prefill.hip's kFusedPrep is the converse) */
int kt_gdn_prefill_runs_prep(int wave_size, int bt);
void kt_gdn_prefill_lds(int bt, int dk, int dv, int bv, int nw, int pf, int lds[KT_GDNP_KERNELS]);

/* Chunks the grid covers for `tokens` over `seqs` sequences at chunk bt (abi: tokens / bt + seqs). */
long long kt_gdn_prefill_chunks(long long tokens, long long seqs, int bt);

/* The plan's parts for a call (abi; 1: no part runs beside another): where the state pass's
 * dv / bv x hv x seqs blocks leave half or more of `units` compute units idle, the mean sequence's
 * chunks in parts of at least 32, at most 8 parts; KT_GDNP_PARTS (measurement) instead where set. */
int kt_gdn_prefill_parts(long long tokens, long long seqs, long long dv, long long hv, int bt, int bv, int units);

extern const kt_op kt_op_gdn_prefill;

#endif
