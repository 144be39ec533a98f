/* op_attn.h: the paged-attention descriptors (op_attn.c) and the order of their variant
 * parameters and dimensions, for the code that reads them (their tests, their law, tune's model
 * problems). Everything else goes through runtime/op.h. ABI: templates/abi/attn.h; templates
 * templates/attn/decode.hip (and prefill.hip).
 *
 * Problem keys:
 *   attn_decode <dt> d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=1 batch<=8 ctx<=4096
 * d head size, g query heads per kv head (the GQA group), hkv kv heads of one rank, bs the cache's
 * block size, win the sliding window (0 none), cap the logit soft-cap (0 none; an integer, as the
 * models set it), sink 1 when the layer has attention sinks; q query rows per sequence (1, or
 * 1 + speculative tokens), batch sequences, ctx keys per sequence (the longest).
 * dtypes: "bf16", "fp16" (q, out and cache), "bf16_e4m3", "fp16_e4m3" (an fp8 e4m3 cache). */
#ifndef KT_OP_ATTN_H
#define KT_OP_ATTN_H
#include "op.h"
#include "../templates/abi/attn.h"

/* kt_variant.p[] of a decode kernel (recipe axes D MT BN NW SEGMAX RE KD ST WS BM WD). D is the
 * head size the kernel is compiled for, MT its 16-row M tiles split over the warps (decode.hip,
 * decode_ws.hip: 16 * MT rows a block), BN its KV tile (keys), NW its warps, SEGMAX the most
 * split-KV segments it may be given (its scratch ceiling), RE and KD where Q and K live
 * (decode.hip), ST the tiles of its LDS ring (1: none), WS 1 for decode_ws.hip (the keys split
 * over the warps); BM the rows a block of prefill.hip (MT 0: a 16-row tile a warp, each warp
 * FlashAttention-2's loop on the block's shared tiles), WD its warps sharing rows by d-slices, QL
 * 1 where Q's fragments are read from LDS each tile (prefill.hip and decode_ws.hip), PD 1 where
 * the variant's reduce waits for the main kernel itself (its launch may then start early), F8 1
 * where S runs in the target's e4m3 matrix instruction (decode.hip, fp8 caches), PF 1 where the KD
 * form prefetches the next-but-one tile into L2 (decode.hip). */
enum { KT_ATTN_P_D, KT_ATTN_P_MT, KT_ATTN_P_BN, KT_ATTN_P_NW, KT_ATTN_P_SEGMAX, KT_ATTN_P_RE, KT_ATTN_P_KD, KT_ATTN_P_ST,
       KT_ATTN_P_WS, KT_ATTN_P_BM, KT_ATTN_P_WD, KT_ATTN_P_QL, KT_ATTN_P_PD, KT_ATTN_P_F8,
       KT_ATTN_P_PF, KT_ATTN_NPARAMS };

/* The dimensions of an attn_decode problem, in kt_problem.dim[] order. */
enum {
    KT_ATTN_D_D, KT_ATTN_D_G, KT_ATTN_D_HKV, KT_ATTN_D_BS, KT_ATTN_D_WIN, KT_ATTN_D_CAP, KT_ATTN_D_SINK,
    KT_ATTN_D_Q, KT_ATTN_D_BATCH, KT_ATTN_D_CTX, KT_ATTN_NDIMS
};

extern const kt_op kt_op_attn_decode;

#endif
