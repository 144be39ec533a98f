/* law_gemm.h: the GEMM law across every template (dense, skinny, swapab, wgmma, wgmma_swapab,
 * wgmma_ws, wgmma_ws_swapab). law.c's tile rule only knows the dense template's wave grids; this
 * one estimates, for every compiled candidate, how long its launch takes from the template's
 * footprint, and picks the shortest. The estimate is a roofline over one compute unit (CU / SM):
 *
 *   grid      tiles = ceil(M/BM) * ceil(N/BN) (BM along the tokens and BN along the weights in
 *             every template, swapped or not), blocks = tiles * SK; stream-K (SK = 0) launches
 *             KT_GEMM_STREAMK_PER_UNIT blocks a unit over the same K steps;
 *   residency r blocks a unit at once (the kernel's occupancy from the DB, else an estimate from
 *             its threads and staged shared memory); the busiest unit runs b = ceil(blocks / CUs)
 *             blocks in ceil(b / r) rounds (wave quantization over the units);
 *   stream    the busiest unit's bytes (b blocks x (BN + min(BM, M)) x K/SK x 2) at the rate its
 *             resident blocks' bytes in flight buy (Little's law: in flight / latency, capped by
 *             the unit's share of the L2 bandwidth); the whole device's compulsory bytes at the
 *             memory bandwidth is a floor under it;
 *   math      the busiest unit's padded MMA work (2 x BM x BN x K/SK a block; a swapped kernel
 *             pays its token columns padded to BM) at the template's share of the matrix peak
 *             (swapab: per four warps, its warps each on their own K slice; wgmma forms: no
 *             faster than shared memory serves both operands, the 64-row one, the weights when
 *             swapped, re-read per instruction), or the vector units' rate for skinny (one
 *             lane-op per weight element per token row and one to unpack it);
 *   overheads a pipeline fill per round (one memory latency), the split-K finish (slabs written
 *             and read back, a fence and a counter per tile; a second launch and its slab pass for
 *             dense, which reduces in its own kernel), and stream-K's per-piece cost.
 * Stream and math overlap imperfectly: the estimate is max + LAW_GEMM_OVERLAP_DIV-th of the min.
 * Every quantity is an integer (bytes, lane-ops, picoseconds); the pick is the smallest integer
 * estimate, ties to the fewest threads, then the lower index.
 *
 * The card's constants (bandwidth, latency, template efficiencies) are in law_gemm_card. Those
 * named LAW_GEMM_FIT_* were fitted on the H200 sweep of 2026-12-01 (db/results/h200, every pruned
 * candidate of 196 GEMM problems timed) with qwen3-8b held out (bench/law_offline.c reports the held-out regret); the rest are datasheet values. A
 * device without a stored card gets law_gemm_card_default(), the H200's values scaled per compute
 * unit (only ratios decide a pick, so the H200's balance of bytes to flops stands in). */
#ifndef KT_LAW_GEMM_H
#define KT_LAW_GEMM_H

#include "law.h"
#include "op.h"

/* Template classes the law knows (kt_candidate.law_class strings, the recipe's stem). */
typedef enum {
    LAW_GEMM_DENSE, LAW_GEMM_SKINNY, LAW_GEMM_SWAPAB, LAW_GEMM_WGMMA, LAW_GEMM_WGMMA_SWAPAB,
    LAW_GEMM_WGMMA_WS, LAW_GEMM_WGMMA_WS_SWAPAB, LAW_GEMM_NCLASSES, LAW_GEMM_UNKNOWN = -1
} law_gemm_class;

/* Class of a law_class string (NULL or unknown: LAW_GEMM_UNKNOWN; such a candidate is never
 * picked nor pruned away). */
law_gemm_class law_gemm_class_of(const char *law_class);

/* A card as the law sees it: rates per compute unit, so one card's values scale to another
 * count of units. Integers throughout. */
typedef struct law_gemm_card {
    int dram_bytes_per_ns_x100;  /* DRAM bandwidth per unit, bytes/ns x 100 (all units streaming) */
    int unit_bytes_per_ns;       /* most bytes/ns one unit pulls from L2 (its port) */
    int unit_dram_bytes_per_ns;  /* most bytes/ns of first-touch (DRAM) data one unit streams */
    int warp_bytes_per_ns_x10;   /* most bytes/ns x 10 one loading warp keeps coming (issue-bound) */
    int latency_ns;              /* load latency Little's law divides the bytes in flight by */
    int mma_flops_per_ns;        /* matrix-unit peak per unit, dense bf16, flops/ns */
    int vec_ops_per_ns;          /* vector lane-ops per ns per unit (lanes x issue x clock) */
    int eff_pct[LAW_GEMM_NCLASSES];  /* share of the matrix peak each template reaches, % */
    int launch_ns;               /* a second kernel launch in a stream (dense split-K reduce) */
    int tile_finish_ns;          /* in-launch split-K finish per tile: fence, counter, last block */
    int slab_bytes_per_ns[LAW_GEMM_NCLASSES];  /* split-K slab traffic one unit moves, bytes/ns */
    int smem_bytes_per_ns;       /* shared memory a unit's matrix instructions read, bytes/ns (wgmma
                                    reads both operands from it: the 64-row one per instruction) */
} law_gemm_card;

/* The stored card for a device (today only the H200: sm_90, 132 SMs), else the default. */
law_gemm_card law_gemm_card_for(const law_device *d);
law_gemm_card law_gemm_card_default(void);

/* Estimated time of candidate c for problem p, picoseconds; -1 when c cannot serve p (unknown
 * class, degenerate parameters, a NULL argument). */
long long law_gemm_estimate_ps(const law_device *d, const law_gemm_card *card, const kt_candidate *c,
                               const kt_problem *p);

/* Index of the candidate the law picks for p (smallest estimate), or -1 when none can serve it. */
int law_gemm_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p);
int law_gemm_pick_card(const law_device *d, const law_gemm_card *card, const kt_candidate *c, int n,
                       const kt_problem *p);

/* How far past the law's estimate of the best candidate a candidate may be estimated and still be
 * timed by the tuner: kept when estimate <= best * LAW_GEMM_PRUNE_PCT / 100. Also kept: the best
 * LAW_GEMM_PRUNE_PER_CLASS of every template class and the best LAW_GEMM_PRUNE_PER_GROUP of every
 * (template, BM) group (so a template or token tile the model misjudges is still measured), the
 * law's own pick and every candidate the law cannot estimate. Checked on the H200 dump
 * (bench/law_offline.c --prune, the 2026-12-01 dump): 40.9% of the candidates kept (30577 of 74676
 * over 196 problems), the sweep's winner kept in all 196. */
#define LAW_GEMM_PRUNE_PCT 350
#define LAW_GEMM_PRUNE_PER_CLASS 6
#define LAW_GEMM_PRUNE_PER_GROUP 3

/* keep[i] = 1 for the candidates worth timing (law_idx, when in range, always kept); returns the
 * number kept. NULL keep or c, n < 1: 0. */
int law_gemm_prune(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, int law_idx, int *keep);
int law_gemm_prune_card(const law_device *d, const law_gemm_card *card, const kt_candidate *c, int n,
                        const kt_problem *p, int law_idx, int *keep);

#endif
