/* law_gemm.c: the GEMM law across templates (see law_gemm.h for the model). Pure functions, no
 * I/O; every quantity that decides a pick is a 64-bit integer. */
#include <string.h>
#include "law_gemm.h"
#include "op_gemm.h"

/* ---- the card --------------------------------------------------------------------------------
 * H200 (sm_90, 132 SMs). Datasheet or measured-elsewhere values:
 *   DRAM 4631 GB/s read ceiling (bench/NOTES.md, bench_gemm's read kernel) / 132 = 35.08 B/ns;
 *   matrix peak 989 TFLOP/s dense bf16 / 132 = 7495 flop/ns; vector 128 lanes x 1.98 GHz.
 * LAW_GEMM_FIT_*: fitted on the H200 (bench/law_offline.c --fit --holdout qwen3-8b, from
 * eff_swapab=8, over db/results/h200/2026-12-01-sm_90a-op-layer-dump.txt.gz, the sweep that timed
 * every pruned candidate of 196 GEMM problems, and the sm_90a kernel DB with resources; before it
 * they came from the sparser 2026-11-30 dump). Held out: qwen3-8b's own 28 problems regret median
 * +0.0%, worst +8.2%; a second fit holding out qwen2.5-7b-instruct: its 56 problems median +0.0%,
 * worst +51.2%. Stored per device later; law_gemm_card_for() is where a device's own card goes. */
#define LAW_GEMM_H200_DRAM_BYTES_PER_NS_X100 3508
#define LAW_GEMM_H200_MMA_FLOPS_PER_NS 7495
#define LAW_GEMM_H200_VEC_OPS_PER_NS 253
/* Shared memory one SM's wgmma reads, 128 B/clock x 1.98 GHz (datasheet, not fitted). wgmma reads
 * both operands from it: per m64nYk16 instruction the 64-row operand's 64 x 16 and the Y x 16 of the
 * instruction's N. In the swapped forms the 64-row operand is the weights and Y the tokens, so with
 * few tokens the weights' re-reads, not the MMA, bound the block (m64n16: 20 clocks of operands
 * against 8 of math). */
#define LAW_GEMM_H200_SMEM_BYTES_PER_NS 253

#define LAW_GEMM_FIT_UNIT_BYTES_PER_NS 53  /* one SM's L2 port */
#define LAW_GEMM_FIT_UNIT_DRAM_BYTES_PER_NS 54   /* one SM's first-touch (DRAM) stream */
#define LAW_GEMM_FIT_WARP_BYTES_PER_NS_X10 167   /* one loading warp's stream (x10) */
#define LAW_GEMM_FIT_LATENCY_NS 2538         /* load latency seen by Little's law */
#define LAW_GEMM_FIT_LAUNCH_NS 3355         /* the dense reduce's second launch */
#define LAW_GEMM_FIT_TILE_FINISH_NS 8905     /* in-launch split-K finish, per round */
/* Share of the matrix peak each template's inner loop reaches (%), fitted: */
#define LAW_GEMM_FIT_EFF_DENSE 25           /* mma.sync from one LDS buffer (bench: 210-270 TF) */
/* swapab's 2% is not an MMA efficiency: it is the fit's proxy for the direct-fragment loop's
 * instruction cost per token column, and it overestimates swapab 2-3x at M >= 16 on picks the dump
 * never timed (the fit only sees timed candidates): the next thing to model properly. */
#define LAW_GEMM_FIT_EFF_SWAPAB 12         /* mma.sync on direct fragments */
#define LAW_GEMM_FIT_EFF_WGMMA 55           /* wgmma, copies and math in the same warps */
#define LAW_GEMM_FIT_EFF_WGMMA_SWAPAB 27   /* and shared memory: see LAW_GEMM_H200_SMEM_BYTES_PER_NS */
#define LAW_GEMM_FIT_EFF_WGMMA_WS 54        /* warp-specialized wgmma (bench: up to 790 TF) */
#define LAW_GEMM_FIT_EFF_WGMMA_WS_SWAPAB 28
/* Split-K slabs (fp32 tile written, read back by the last block or the reduce), bytes/ns a unit
 * moves them at, fitted: the warp-specialized prefill kernel stores its accumulators' fragment
 * layout 8 bytes at a time (sk2 measured ~2x sk1 at M = 8192). */
#define LAW_GEMM_FIT_SLAB_DENSE 7
#define LAW_GEMM_FIT_SLAB_SWAPAB 20
#define LAW_GEMM_FIT_SLAB_WGMMA_SWAPAB 10
#define LAW_GEMM_FIT_SLAB_WGMMA_WS 3
#define LAW_GEMM_FIT_SLAB_WGMMA_WS_SWAPAB 12
/* Stream and math overlap: estimate = max + min / LAW_GEMM_OVERLAP_DIV. */
#define LAW_GEMM_OVERLAP_DIV 2

law_gemm_card law_gemm_card_default(void)
{
    law_gemm_card c;
    memset(&c, 0, sizeof c);
    c.dram_bytes_per_ns_x100 = LAW_GEMM_H200_DRAM_BYTES_PER_NS_X100;
    c.unit_bytes_per_ns = LAW_GEMM_FIT_UNIT_BYTES_PER_NS;
    c.unit_dram_bytes_per_ns = LAW_GEMM_FIT_UNIT_DRAM_BYTES_PER_NS;
    c.latency_ns = LAW_GEMM_FIT_LATENCY_NS;
    c.warp_bytes_per_ns_x10 = LAW_GEMM_FIT_WARP_BYTES_PER_NS_X10;
    c.mma_flops_per_ns = LAW_GEMM_H200_MMA_FLOPS_PER_NS;
    c.vec_ops_per_ns = LAW_GEMM_H200_VEC_OPS_PER_NS;
    c.eff_pct[LAW_GEMM_DENSE] = LAW_GEMM_FIT_EFF_DENSE;
    c.eff_pct[LAW_GEMM_SKINNY] = 100;   /* skinny runs on the vector units: vec_ops_per_ns */
    c.eff_pct[LAW_GEMM_SWAPAB] = LAW_GEMM_FIT_EFF_SWAPAB;
    c.eff_pct[LAW_GEMM_WGMMA] = LAW_GEMM_FIT_EFF_WGMMA;
    c.eff_pct[LAW_GEMM_WGMMA_SWAPAB] = LAW_GEMM_FIT_EFF_WGMMA_SWAPAB;
    c.eff_pct[LAW_GEMM_WGMMA_WS] = LAW_GEMM_FIT_EFF_WGMMA_WS;
    c.eff_pct[LAW_GEMM_WGMMA_WS_SWAPAB] = LAW_GEMM_FIT_EFF_WGMMA_WS_SWAPAB;
    c.smem_bytes_per_ns = LAW_GEMM_H200_SMEM_BYTES_PER_NS;
    c.launch_ns = LAW_GEMM_FIT_LAUNCH_NS;
    c.tile_finish_ns = LAW_GEMM_FIT_TILE_FINISH_NS;
    for (int i = 0; i < LAW_GEMM_NCLASSES; i++) c.slab_bytes_per_ns[i] = LAW_GEMM_FIT_SLAB_SWAPAB;
    c.slab_bytes_per_ns[LAW_GEMM_DENSE] = LAW_GEMM_FIT_SLAB_DENSE;
    c.slab_bytes_per_ns[LAW_GEMM_WGMMA_SWAPAB] = LAW_GEMM_FIT_SLAB_WGMMA_SWAPAB;
    c.slab_bytes_per_ns[LAW_GEMM_WGMMA_WS] = LAW_GEMM_FIT_SLAB_WGMMA_WS;
    c.slab_bytes_per_ns[LAW_GEMM_WGMMA_WS_SWAPAB] = LAW_GEMM_FIT_SLAB_WGMMA_WS_SWAPAB;
    return c;
}

/* AMD targets have no stored card yet: the H200's fitted template shares with their own datasheet
 * rates per CU (not fitted; they set the balance of bytes to flops the picks depend on).
 *   gfx1201 (RX 9070 XT): 640 GB/s / 64 CUs = 10 B/ns; ~195 TFLOP/s dense bf16 / 64 = 3047 flop/ns;
 *                         2 SIMD32 dual-issue x 2.97 GHz = 380 lane-ops/ns.
 *   gfx942 (MI300X):      5300 GB/s / 304 CUs = 17.4 B/ns; 1307 TFLOP/s / 304 = 4299 flop/ns;
 *                         64 lanes a clock x 2.1 GHz = 134 lane-ops/ns. */
#define LAW_GEMM_GFX12_DRAM_BYTES_PER_NS_X100 1000
#define LAW_GEMM_GFX12_MMA_FLOPS_PER_NS 3047
#define LAW_GEMM_GFX12_VEC_OPS_PER_NS 380
#define LAW_GEMM_CDNA3_DRAM_BYTES_PER_NS_X100 1740
#define LAW_GEMM_CDNA3_MMA_FLOPS_PER_NS 4299
#define LAW_GEMM_CDNA3_VEC_OPS_PER_NS 134

law_gemm_card law_gemm_card_for(const law_device *d)
{
    law_gemm_card c = law_gemm_card_default();   /* the H200's (sm_90, 132 SMs) */
    if (!d || d->simds_per_cu <= 1) return c;    /* NVIDIA: the SM is the unit */
    if (d->wave_size == 64) {
        c.dram_bytes_per_ns_x100 = LAW_GEMM_CDNA3_DRAM_BYTES_PER_NS_X100;
        c.mma_flops_per_ns = LAW_GEMM_CDNA3_MMA_FLOPS_PER_NS;
        c.vec_ops_per_ns = LAW_GEMM_CDNA3_VEC_OPS_PER_NS;
    } else {
        c.dram_bytes_per_ns_x100 = LAW_GEMM_GFX12_DRAM_BYTES_PER_NS_X100;
        c.mma_flops_per_ns = LAW_GEMM_GFX12_MMA_FLOPS_PER_NS;
        c.vec_ops_per_ns = LAW_GEMM_GFX12_VEC_OPS_PER_NS;
    }
    /* a unit's port and first-touch stream scale with its DRAM share as on the H200 */
    c.unit_dram_bytes_per_ns = (int)((long long)c.unit_dram_bytes_per_ns * c.dram_bytes_per_ns_x100 /
                                     LAW_GEMM_H200_DRAM_BYTES_PER_NS_X100);
    c.unit_bytes_per_ns = (int)((long long)c.unit_bytes_per_ns * c.dram_bytes_per_ns_x100 /
                                LAW_GEMM_H200_DRAM_BYTES_PER_NS_X100);
    if (c.unit_dram_bytes_per_ns < 1) c.unit_dram_bytes_per_ns = 1;
    if (c.unit_bytes_per_ns < 1) c.unit_bytes_per_ns = 1;
    return c;
}

law_gemm_class law_gemm_class_of(const char *s)
{
    static const char *const names[LAW_GEMM_NCLASSES] = {
        "dense", "skinny", "swapab", "wgmma", "wgmma_swapab", "wgmma_ws", "wgmma_ws_swapab"};
    if (!s) return LAW_GEMM_UNKNOWN;
    for (int i = 0; i < LAW_GEMM_NCLASSES; i++)
        if (strcmp(s, names[i]) == 0) return (law_gemm_class)i;
    return LAW_GEMM_UNKNOWN;
}

/* ---- the estimate ------------------------------------------------------------------------------ */

static long long cdiv(long long a, long long b) { return b > 0 ? (a + b - 1) / b : 0; }
static long long lmin(long long a, long long b) { return a < b ? a : b; }
static long long lmax(long long a, long long b) { return a > b ? a : b; }

static int swapped(law_gemm_class k)
{
    return k == LAW_GEMM_SWAPAB || k == LAW_GEMM_WGMMA_SWAPAB || k == LAW_GEMM_WGMMA_WS_SWAPAB;
}

/* the templates on wgmma: shared-memory operands, tiles filled by copies */
static int wgmma_family(law_gemm_class k)
{
    return k == LAW_GEMM_WGMMA || k == LAW_GEMM_WGMMA_SWAPAB || k == LAW_GEMM_WGMMA_WS || k == LAW_GEMM_WGMMA_WS_SWAPAB;
}

/* Shared memory a staged variant takes (runtime/gemm_geometry.h) and an SM's pool for them when
 * the DB gives no occupancy: the sm_90 figure (staged templates are sm_90a only). */
#define LAW_GEMM_STAGED_POOL_BYTES 233472

/* Blocks of the candidate resident on one unit at once. */
static long long resident_blocks(const law_device *d, const kt_candidate *c, long long warps)
{
    long long r;
    if (c->waves_per_simd > 0) {
        int simds = d->simds_per_cu > 0 ? d->simds_per_cu : 1;
        r = (long long)c->waves_per_simd * simds / warps;
    } else {
        long long slots = d->wave_slots_per_cu > 0 ? d->wave_slots_per_cu : 32;
        r = slots / warps / 2;                 /* registers unknown: assume they halve the slots */
        int st = c->v.p[KT_GEMM_P_ST];
        law_gemm_class cls = law_gemm_class_of(c->law_class);
        if (cls == LAW_GEMM_WGMMA_WS || cls == LAW_GEMM_WGMMA_WS_SWAPAB)
            r = 1;                             /* warp-specialized: registers up to the block's bound */
        else if (st > 0)
            r = slots / warps;                 /* staged: the ring, not registers, binds */
        if (st > 0) {
            long long lds = (long long)st * (c->v.p[KT_GEMM_P_BM] + c->v.p[KT_GEMM_P_BN]) *
                            c->v.p[KT_GEMM_P_BK] * 2 + 2 * KT_GEMM_STAGE_ALIGN;
            r = lmin(r, LAW_GEMM_STAGED_POOL_BYTES / lds);
        }
    }
    return r < 1 ? 1 : r;
}

long long law_gemm_estimate_ps(const law_device *d, const law_gemm_card *card, const kt_candidate *c,
                               const kt_problem *p)
{
    if (!d || !card || !c || !p) return -1;
    law_gemm_class cls = law_gemm_class_of(c->law_class);
    if (cls == LAW_GEMM_UNKNOWN) return -1;
    long long M = p->dim[KT_GEMM_D_M], N = p->dim[KT_GEMM_D_N], K = p->dim[KT_GEMM_D_K];
    if (M < 1 || N < 1 || K < 1) return -1;
    const int *v = c->v.p;
    long long bm = v[KT_GEMM_P_BM], bn = v[KT_GEMM_P_BN], bk = v[KT_GEMM_P_BK];
    long long wm = v[KT_GEMM_P_WM], wn = v[KT_GEMM_P_WN], sk = v[KT_GEMM_P_SK], st = v[KT_GEMM_P_ST];
    if (bm < 1 || bn < 1 || bk < 1 || wm < 1 || wn < 1 || sk < 0 || st < 0) return -1;

    long long units = d->compute_units > 0 ? d->compute_units : 1;
    long long wave = d->wave_size > 0 ? d->wave_size : 32;
    long long warps = c->threads > 0 ? cdiv(c->threads, wave) : wm * wn;
    if (cls == LAW_GEMM_SKINNY || cls == LAW_GEMM_SWAPAB) warps = c->threads > 0 ? warps : wm;
    if (cls == LAW_GEMM_WGMMA_WS) warps = c->threads > 0 ? warps : 12;
    if (warps < 1) warps = 1;
    long long r = resident_blocks(d, c, warps);
    long long lat = card->latency_ns > 0 ? card->latency_ns : 1;

    long long tm = cdiv(M, bm), tn = cdiv(N, bn), tiles = tm * tn;
    long long rows_w = cdiv(N, tn), rows_t = cdiv(M, tm);     /* average rows a tile loads */
    long long segs = sk > 0 ? sk : 1;
    long long kseg = sk > 0 ? kt_gemm_k_per_split((int)K, (int)sk, (int)bk) : K;
    if (kseg > K) kseg = K;

    /* Rows a block moves through its unit's port: the wgmma templates copy the weights' whole
     * BN-row tile (rows past N as zero fills: cp.async with no source bytes, still a copy
     * instruction and a shared-memory write each), the others load only the rows that exist.
     * Counting the fills as read rows is a fit to the timings, not a mechanism: Qwen3-Next's
     * n = 16 took 17.7 us at bn 128 against 12.5 at bn 64 (bench/NOTES.md). The token tile's
     * fills did not show in the sweeps' small-M timings. */
    const int boxed = wgmma_family(cls);
    long long port_w = boxed ? bn : rows_w, port_t = rows_t;

    /* The busiest unit: blocks, rounds and its bytes and flops. */
    long long b, conc, unit_bytes, unit_work, pieces = 0;
    long long block_bytes = (port_w + port_t) * kseg * 2;
    if (sk == 0) {
        long long grid = (long long)kt_gemm_streamk_blocks((int)units);
        long long steps = tiles * cdiv(K, bk);
        if (grid > steps) grid = steps;
        b = cdiv(grid, units);
        conc = lmin(b, r);
        unit_bytes = cdiv(tiles * (port_w + port_t) * K * 2, lmin(grid, units));
        pieces = cdiv(tiles, grid) + 1;        /* tile pieces a block walks: a first and a last partial */
        block_bytes = cdiv(unit_bytes, b);
    } else {
        long long blocks = tiles * segs;
        b = cdiv(blocks, units);
        conc = lmin(b, r);
        unit_bytes = b * block_bytes;
    }
    long long rounds = cdiv(b, r);

    /* Bytes a block keeps in flight. */
    long long inflight;
    switch (cls) {
    case LAW_GEMM_DENSE: inflight = (bm + bn) * bk * 2; break;
    case LAW_GEMM_SKINNY: case LAW_GEMM_SWAPAB: inflight = wm * bn * bk * 2; break;
    case LAW_GEMM_WGMMA: case LAW_GEMM_WGMMA_SWAPAB: inflight = lmax(1, st - 2) * (bm + bn) * bk * 2; break;
    default: inflight = lmax(1, st) * (bm + bn) * bk * 2; break;
    }
    if (inflight > block_bytes) inflight = block_bytes;
    /* Warps that issue the block's loads: all of them, but one warpgroup in the warp-specialized
     * templates (the copying one). Their issue rate caps a block's stream. */
    long long loaders = (cls == LAW_GEMM_WGMMA_WS || cls == LAW_GEMM_WGMMA_WS_SWAPAB) ? 4 : warps;
    long long block_rate_x1000 = lmin(inflight * 1000 / lat, loaders * card->warp_bytes_per_ns_x10 * 100);
    long long rate_x1000 = lmin((long long)card->unit_bytes_per_ns * 1000, conc * block_rate_x1000);
    if (rate_x1000 < 1) rate_x1000 = 1;
    long long t_stream = unit_bytes * 1000000 / rate_x1000;            /* ps */

    /* First-touch bytes of the busiest unit (a weight tile read by tm blocks, a token tile by tn,
     * comes from DRAM once: L2 serves the rest) at what DRAM gives one unit: its share among the
     * units that stream, at most unit_dram_bytes_per_ns. */
    long long active = lmin(units, sk == 0 ? units : tiles * segs);
    long long unit_dram = cdiv(unit_bytes * rows_w, (port_w + port_t) * tm) +
                          cdiv(unit_bytes * rows_t, (port_w + port_t) * tn);
    long long share_x1000 = (long long)card->dram_bytes_per_ns_x100 * units * 10 / (active > 0 ? active : 1);
    long long dram_rate_x1000 = lmin(share_x1000, (long long)card->unit_dram_bytes_per_ns * 1000);
    if (dram_rate_x1000 < 1) dram_rate_x1000 = 1;
    long long t_unit_dram = unit_dram * 1000000 / dram_rate_x1000;
    if (t_stream < t_unit_dram) t_stream = t_unit_dram;

    /* The device floor: compulsory bytes at DRAM bandwidth. */
    long long compulsory = 2 * (N * K + M * K + M * N);
    long long dram_x100 = (long long)card->dram_bytes_per_ns_x100 * units;
    long long t_dram = compulsory * 100000 / (dram_x100 > 0 ? dram_x100 : 1);

    /* Math on the busiest unit. */
    long long t_math;
    if (cls == LAW_GEMM_SKINNY) {
        /* one lane-op a weight element per token row, one to unpack it, the A row unpacks; over
         * the whole BM x BN tile: the loop runs the padding rows too (on zeros) */
        long long ops_block = bn * kseg * (bm + 1) + bm * kseg;
        unit_work = b * ops_block;
        if (sk == 0) unit_work = cdiv(tiles * (bn * K * (bm + 1) + bm * K), units);
        t_math = unit_work * 1000 / (card->vec_ops_per_ns > 0 ? card->vec_ops_per_ns : 1);
    } else {
        long long flops_block = 2 * bm * bn * kseg;   /* padded: the MMA runs whole fragments */
        unit_work = b * flops_block;
        if (sk == 0) unit_work = cdiv(tiles * 2 * bm * bn * K, lmin(units * 1, units));
        /* eff_pct is what one block's warps issue of the unit's matrix peak; co-resident blocks
         * add up to the peak */
        long long rate = lmin((long long)card->mma_flops_per_ns,
                              conc * card->mma_flops_per_ns * card->eff_pct[cls] / 100);
        if (cls == LAW_GEMM_SWAPAB)   /* eff_pct: the share four of its warps issue */
            rate = lmin((long long)card->mma_flops_per_ns,
                        conc * warps * card->mma_flops_per_ns * card->eff_pct[cls] / 400);
        t_math = unit_work * 1000 / (rate > 0 ? rate : 1);
        if (wgmma_family(cls)) {
            /* shared-memory operand reads: each 64 rows of the 64-row operand (xr: the weights when
             * swapped, the tokens else) read with all yr rows of the instruction's N per k16 */
            long long xr = swapped(cls) ? bn : bm, yr = swapped(cls) ? bm : bn;
            long long smem_block = 2 * kseg * xr * (64 + yr) / 64;
            long long units_smem = sk == 0 ? cdiv(tiles * 2 * K * xr * (64 + yr) / 64, units) : b * smem_block;
            long long t_smem = units_smem * 1000 / (card->smem_bytes_per_ns > 0 ? card->smem_bytes_per_ns : 1);
            if (t_smem > t_math) t_math = t_smem;
        }
    }

    long long hi = lmax(t_stream, t_math), lo = lmin(t_stream, t_math);
    long long t = hi + lo / LAW_GEMM_OVERLAP_DIV;
    if (t < t_dram) t = t_dram;

    /* Overheads: a pipeline fill per round; split-K's finish; stream-K's pieces. */
    t += rounds * lat * 1000;
    if (sk > 1) {
        long long slab = b * bm * bn * 4 * 2;      /* the unit's slabs, written and read back, fp32 */
        int sr = card->slab_bytes_per_ns[cls] > 0 ? card->slab_bytes_per_ns[cls] : 1;
        t += slab * 1000 / sr;
        if (cls == LAW_GEMM_DENSE) t += (long long)card->launch_ns * 1000;
        else t += rounds * (long long)card->tile_finish_ns * 1000;
    } else if (sk == 0) {
        t += pieces * (lat + card->tile_finish_ns) * 1000;
    }
    return t;
}

/* ---- pick and prune ---------------------------------------------------------------------------- */

int law_gemm_pick_card(const law_device *d, const law_gemm_card *card, const kt_candidate *c, int n,
                       const kt_problem *p)
{
    if (!d || !card || !c || !p || n < 1) return -1;
    int best = -1;
    long long best_t = 0;
    for (int i = 0; i < n; i++) {
        long long t = law_gemm_estimate_ps(d, card, &c[i], p);
        if (t < 0) continue;
        if (best < 0 || t < best_t || (t == best_t && c[i].threads < c[best].threads)) {
            best = i;
            best_t = t;
        }
    }
    return best;
}

int law_gemm_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    law_gemm_card card = law_gemm_card_for(d);
    return law_gemm_pick_card(d, &card, c, n, p);
}

/* The estimates of up to LAW_GEMM_PRUNE_CACHE candidates are kept on the stack; past that
 * they are recomputed (same values: the function is pure). */
#define LAW_GEMM_PRUNE_CACHE 2048

static long long est_at(const law_device *d, const law_gemm_card *card, const kt_candidate *c,
                        const kt_problem *p, const long long *cache, int i)
{
    return i < LAW_GEMM_PRUNE_CACHE ? cache[i] : law_gemm_estimate_ps(d, card, &c[i], p);
}

/* Candidates i and j compete in one group: the same template and the same token tile (BM). */
static int same_group(const kt_candidate *a, const kt_candidate *b)
{
    return law_gemm_class_of(a->law_class) == law_gemm_class_of(b->law_class) &&
           a->v.p[KT_GEMM_P_BM] == b->v.p[KT_GEMM_P_BM];
}

int law_gemm_prune_card(const law_device *d, const law_gemm_card *card, const kt_candidate *c, int n,
                        const kt_problem *p, int law_idx, int *keep)
{
    if (!c || !keep || n < 1) return 0;
    long long cache[LAW_GEMM_PRUNE_CACHE];
    long long best_t = -1;
    for (int i = 0; i < n; i++) {
        long long t = law_gemm_estimate_ps(d, card, &c[i], p);
        if (i < LAW_GEMM_PRUNE_CACHE) cache[i] = t;
        keep[i] = 0;
        if (t >= 0 && (best_t < 0 || t < best_t)) best_t = t;
    }
    int kept = 0;
    for (int i = 0; i < n; i++) {
        long long t = est_at(d, card, c, p, cache, i);
        int k = t < 0 || i == law_idx || (best_t >= 0 && t * 100 <= best_t * LAW_GEMM_PRUNE_PCT);
        if (!k) {
            /* among the best LAW_GEMM_PRUNE_PER_CLASS of its template, or the best
             * LAW_GEMM_PRUNE_PER_GROUP of its template and token tile? */
            law_gemm_class cls = law_gemm_class_of(c[i].law_class);
            int in_class = 0, in_group = 0;
            for (int j = 0; j < n; j++) {
                if (j == i || law_gemm_class_of(c[j].law_class) != cls) continue;
                long long tj = est_at(d, card, c, p, cache, j);
                if (tj < 0 || !(tj < t || (tj == t && j < i))) continue;
                in_class++;
                if (same_group(&c[i], &c[j])) in_group++;
            }
            k = in_class < LAW_GEMM_PRUNE_PER_CLASS || in_group < LAW_GEMM_PRUNE_PER_GROUP;
        }
        keep[i] = k;
        kept += k;
    }
    return kept;
}

int law_gemm_prune(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, int law_idx, int *keep)
{
    law_gemm_card card = law_gemm_card_for(d);
    return law_gemm_prune_card(d, &card, c, n, p, law_idx, keep);
}
