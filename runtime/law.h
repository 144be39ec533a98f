/* law.h: the seed's shape laws for the dense GEMM as pure C functions. The tuner uses them to prune
 * and records each law pick's regret against the measured best (so the laws are themselves
 * measured); the runtime falls back to them for a problem that was never tuned.
 *
 * Split-K (law_splitk_segments). At small M a GEMM cannot fill the machine: at M=1 the grid is
 * N/BN tiles whatever BM is, and splitting K is the only thing that adds workgroups. The segment
 * count is the smallest of
 *   want     = ceil(slots / (tiles * waves_per_wg)): segments needed so the launched waves reach
 *              the device's wave slots (tiles = ceil(M/BM) * ceil(N/BN));
 *   traffic  = floor(LAW_SPLITK_TRAFFIC_FRACTION * compulsory / (8 * M * N)): each segment writes
 *              an fp32 M x N slab and the reduce reads it back (8 bytes an element), while the GEMM
 *              must move at least compulsory = 2*(N*K + M*K + M*N) bf16/fp16 bytes. The ratio
 *              falls like 1/M (the weights dominate compulsory at small M), so this bound retires
 *              split-K as M grows with no M threshold written anywhere;
 *   blocks   = ceil(K / BK): a segment covers at least one K block;
 *   max_segments (the largest split the caller compiled or allocated partials for);
 * then rounded down to a power of two (odd counts cut K into unbalanced bands and leave a ragged
 * grid), halved while kt_gemm_k_per_split would leave a trailing segment empty, and at least 1.
 *
 * Tile (law_pick_gemm): among compiled, valid variants, the seed's three measured rules: the
 * fattest M block that covers M (weights are re-streamed once per M block), the split count the
 * law above gives for that tile, as many resident waves as the tile can get, a K-block depth that
 * depends on M, and square wave tiles (fewest fragment loads per MMA). See law.c for the order. */
#ifndef KT_LAW_H
#define KT_LAW_H

#include "target.h"

/* Partials traffic (written + read back) may be at most this fraction of the GEMM's compulsory
 * bytes. 1/8 reproduces the seed's measured trough table on gfx1201 (N=5120, K=8704): M=64 keeps
 * sk4 (partials 11.5% of compulsory) and M=128 drops to sk2 (sk4 would be 22.6%), so any value in
 * [0.116, 0.226) does; 1/8 is the power-of-two fraction inside that window, with margin on both
 * sides. (The seed's kernel had 8-bit weights, half the compulsory bytes; its window in those
 * units is [0.23, 0.44), i.e. the same picks. In bf16 units, 1/8 is what matches.) */
#define LAW_SPLITK_TRAFFIC_FRACTION 0.125

/* From this M on the deep K block wins (seed: BK rides on the M-tile dispatch, MT >= 4, i.e.
 * BM >= 64 -> BK=64; measured BK=32 best at M=1 and 32 among {32, 64}, BK=64 best at M=128, 512). */
#define LAW_DEEP_BK_MIN_M 64

/* The tile rule counts a candidate's resident waves only up to this share of the device's wave
 * slots; past it the machine counts as filled and instruction count decides (seed: on gfx1201
 * raising co-residency from 6 to 8 waves a SIMD was null, and a square tile that fell from 6 to 4
 * waves a SIMD won 13.6%: 4 of 16 slots, a quarter, already filled it). As a share of the slots
 * it means the same on every vendor: 16 of an SM's 64 warps, 2 of a CDNA SIMD's 8 waves. */
#define LAW_FILL_FRACTION 0.25

/* The device as the laws see it. A compute unit is a CU (AMD) or an SM (NVIDIA). */
typedef struct law_device {
    int compute_units;       /* CUs / SMs: gfx1201 64, H200 132 */
    int simds_per_cu;        /* SIMDs per CU (RDNA 2, CDNA 4); 1 on NVIDIA (the SM is the unit) */
    int wave_slots_per_simd; /* resident waves per SIMD (gfx12 16, gfx942 8); warps per SM on NVIDIA */
    int wave_slots_per_cu;   /* simds_per_cu * wave_slots_per_simd: gfx1201 32, H200 64 */
    int wave_size;           /* lanes per wave / warp */
} law_device;

/* The law_device of a target with the given number of CUs (the classic CU count, as rocminfo's
 * "Compute Unit" or the seed's 64 for gfx1201; not WGPs) or SMs. On RDNA (wave32 AMD) the target
 * table's LDS pool is a WGP of two CUs, so a CU has half the pool's SIMDs; on CDNA the pool is
 * the CU. gfx1201 x 64 -> 2048 wave slots; sm_90a x 132 -> 8448. A NULL target or compute_units
 * < 1 gives a device with no slots (every law then answers its no-split / first-choice value). */
law_device law_device_from_target(const kt_target *t, int compute_units);

/* Wave slots of the whole device: compute_units * wave_slots_per_cu (0 for a NULL device). */
long long law_device_wave_slots(const law_device *d);

/* Split-K segments for a problem (m, n, k) on a tile (bm, bn, bk) of waves_per_wg waves: a power of
 * two in [1, max_segments], see the derivation above. Degenerate input (a dimension < 1, a NULL
 * device) answers 1: nothing worth splitting. */
int law_splitk_segments(const law_device *d, int m, int n, int k, int bm, int bn, int bk,
                        int waves_per_wg, int max_segments);

/* One compiled, valid variant as the tile rule sees it (dtype does not enter). */
typedef struct law_gemm_candidate {
    int bm, bn, bk;          /* workgroup tile */
    int wm, wn;              /* waves along M and N */
    int splitk;              /* compiled K segments */
    int waves_per_simd;      /* resident waves per SIMD (warps per SM) from the DB's occupancy;
                              * 0 = unknown, taken as the device's slots per SIMD */
} law_gemm_candidate;

/* Index of the candidate the law picks for C[m, nn] = A[m, k] . W[nn, k]^T, or -1 when there is no
 * usable candidate (n < 1, NULL list, or no entry with a whole number of 16x16 fragments a wave). */
int law_pick_gemm(const law_device *d, const law_gemm_candidate *cands, int n, int m, int nn, int k);

/* Regret of the law's pick: law_time / best_time - 1 (0 when the law picked the best). NaN when a
 * time is not positive (nothing measured). */
double law_regret(double law_time, double best_time);

#endif
