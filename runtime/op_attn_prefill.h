/* op_attn_prefill.h: the paged prefill attention descriptor (op_attn_prefill.c) and the order of
 * its variant parameters and dimensions, for the code that reads them (its test, its law).
 * ABI templates/abi/attn.h (the decode op's struct); template templates/attn/prefill.hip.
 *
 * Problem key:
 *   attn_prefill <dt> d=128 g=4 hkv=8 bs=16 win=0 cap=0 sink=0 qlen<=512 batch<=4 ctx<=4096
 * d, g, hkv, bs, win, cap, sink as attn_decode's (runtime/op_attn.h); qlen the new query tokens of
 * the longest sequence (max_query_len), batch sequences, ctx keys of the longest sequence
 * (max_seq_len: its cached prefix and its new tokens). dtypes as attn_decode's. */
#ifndef KT_OP_ATTN_PREFILL_H
#define KT_OP_ATTN_PREFILL_H
#include "op.h"
#include "../templates/abi/attn.h"

/* kt_variant.p[] of a prefill kernel (recipe axes D BM BN NW WD QL SEGMAX ST PD): head size, rows a
 * block (query tokens x the GQA group's heads), keys a KV tile, warps, warps sharing rows (each a
 * d-slice; 1 for a row without the axis), Q's fragments read from LDS each tile, the most split-KV
 * segments a launch may be given (1 without the axis: no split), the stages of the K / V ring (1
 * without the axis: one tile buffer each), 1 where its reduce waits for the main kernel itself (0
 * without the axis: launched in plain stream order). */
enum { KT_PREFILL_P_D, KT_PREFILL_P_BM, KT_PREFILL_P_BN, KT_PREFILL_P_NW, KT_PREFILL_P_WD, KT_PREFILL_P_QL, KT_PREFILL_P_SEGMAX,
       KT_PREFILL_P_ST, KT_PREFILL_P_PD, KT_PREFILL_NPARAMS };

enum {
    KT_PREFILL_D_D, KT_PREFILL_D_G, KT_PREFILL_D_HKV, KT_PREFILL_D_BS, KT_PREFILL_D_WIN, KT_PREFILL_D_CAP,
    KT_PREFILL_D_SINK, KT_PREFILL_D_QLEN, KT_PREFILL_D_BATCH, KT_PREFILL_D_CTX, KT_PREFILL_NDIMS
};

extern const kt_op kt_op_attn_prefill;

/* The verification set's lengths (a function of the problem alone, so every buffer's fill agrees):
 * sequence i's new query tokens and keys (cached prefix + new tokens). Sequence 0 is the longest
 * (qlen, max(ctx, qlen)); sequence 1 has no cached prefix (a fresh prompt); the rest draw both. */
int kt_prefill_qlen_of(const kt_problem *p, int i);
int kt_prefill_seq_len_of(const kt_problem *p, int i);

#endif
