/* law.c: the seed's GEMM shape laws (see law.h for the derivation). Pure functions: no I/O, no
 * state, integer arithmetic wherever a comparison decides a pick, so tuner and runtime agree. */
#include <math.h>
#include "law.h"
#include "gemm_geometry.h"

law_device law_device_from_target(const kt_target *t, int compute_units)
{
    law_device d = {0, 0, 0, 0, 0};
    if (!t || compute_units < 1) return d;
    d.compute_units = compute_units;
    d.wave_size = t->wave_size;
    d.wave_slots_per_simd = t->max_waves_per_simd;
    if (t->vendor == KT_VENDOR_NVIDIA)
        d.simds_per_cu = 1;                      /* max_waves_per_simd is already warps per SM */
    else if (t->wave_size == 32)
        d.simds_per_cu = t->simds_per_pool / 2;  /* RDNA: the pool is a WGP, two CUs of 2 SIMD32 */
    else
        d.simds_per_cu = t->simds_per_pool;      /* CDNA: the pool is the CU */
    if (d.simds_per_cu < 1) d.simds_per_cu = 1;
    d.wave_slots_per_cu = d.simds_per_cu * d.wave_slots_per_simd;
    return d;
}

long long law_device_wave_slots(const law_device *d)
{
    if (!d || d->compute_units < 1 || d->wave_slots_per_cu < 1) return 0;
    return (long long)d->compute_units * d->wave_slots_per_cu;
}

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

static long long min_ll(long long a, long long b) { return a < b ? a : b; }

int law_splitk_segments(const law_device *d, int m, int n, int k, int bm, int bn, int bk,
                        int waves_per_wg, int max_segments)
{
    if (!d || m < 1 || n < 1 || k < 1 || bm < 1 || bn < 1 || bk < 1 || waves_per_wg < 1 ||
        max_segments < 2)
        return 1;

    /* want: segments until the launched waves reach the device's slots (1 once tiles fill it). */
    long long slots = law_device_wave_slots(d);
    long long waves = ceil_div(m, bm) * ceil_div(n, bn) * waves_per_wg;
    long long want = slots > waves ? ceil_div(slots, waves) : 1;

    /* traffic: nseg * M * N fp32 partials written and read back, against the compulsory bytes. */
    double compulsory = 2.0 * ((double)n * k + (double)m * k + (double)m * n);
    double per_segment = 8.0 * (double)m * n;
    double traffic_d = LAW_SPLITK_TRAFFIC_FRACTION * compulsory / per_segment;
    long long traffic = traffic_d >= (double)max_segments ? max_segments : (long long)traffic_d;

    long long blocks = ceil_div(k, bk);

    long long s = min_ll(min_ll(want, traffic), min_ll(blocks, max_segments));
    if (s < 1) s = 1;

    /* Power of two, rounded down: equal K bands and a regular grid. */
    long long p = 1;
    while (p * 2 <= s) p *= 2;

    /* ceil(K/S) rounded up to BK can leave the last segment with nothing (K = 5 blocks, S = 4:
     * 2 blocks a segment, segment 3 starts past K); halve until every segment has work. */
    while (p > 1 && (p - 1) * (long long)kt_gemm_k_per_split(k, (int)p, bk) >= k) p /= 2;
    return (int)p;
}

/* ---- the tile rule ---------------------------------------------------------------------------
 * Candidates are ranked lexicographically; the first criterion that differs decides:
 *   1. BM is the M rule's target: the smallest compiled BM >= min(M, largest compiled BM). One
 *      M block covering M re-streams the weights once; the seed's M=4096 extremes (MT=1 pinned at
 *      the HBM roofline, MT=8 2.2x faster) and its M=128 pick (mt8/sk2 at 31% occupancy over
 *      thinner tiles) both favour the fat block. Candidates with another BM are never picked.
 *   2. SK is the split law's count for that tile: law_splitk_segments with max_segments = the
 *      tile's largest compiled SK, then the largest compiled SK of the tile <= that count (the
 *      smallest compiled SK when none is <=).
 *   3. BK is the M rule's depth: the shallowest compiled BK below LAW_DEEP_BK_MIN_M, the deepest
 *      from it on (among the candidates with the target BM). A measured rule, so it outranks the
 *      modelled fill below.
 *   4. More resident waves, min(launched waves, the kernel's own resident capacity from its
 *      occupancy, LAW_FILL_FRACTION of the device's slots): "the fattest block that still fills
 *      the machine". Waves past the capacity only queue, and past the fill share they stop
 *      paying, so rule 5 decides among tiles that all fill the machine.
 *   5. Fewer fragment loads per MMA, (fm + fn) / (fm * fn) for a wave tile of fm x fn fragments:
 *      square wave tiles (seed: 2x2 at 0.75 beat the 8x1 sliver's 1.125 by 5-10%).
 *   6. Higher occupancy (waves per SIMD; unknown ranks lowest), then fewer threads a workgroup.
 *   7. Smaller BN, BK, WM, SK: the cheaper variant, so the pick does not depend on list order;
 *      then the lower index (entries equal in all of these, e.g. two dtypes).                   */

typedef struct law_score {
    int sk_match;            /* 1 when SK is the split law's count for the tile */
    long long resident;      /* resident waves */
    int bk_match;
    int loads_num, loads_den;/* fragment loads per MMA = num / den */
    int occupancy;
    int threads;
} law_score;

/* Stream-K variants (splitk 0) are not the law's to pick: it reasons in segment counts. */
static int candidate_usable(const law_gemm_candidate *c)
{
    if (c->bm < 16 || c->bn < 16 || c->bk < 1 || c->wm < 1 || c->wn < 1 || c->splitk < 1)
        return 0;
    return c->bm % (16 * c->wm) == 0 && c->bn % (16 * c->wn) == 0;
}

static int same_tile(const law_gemm_candidate *a, const law_gemm_candidate *b)
{
    return a->bm == b->bm && a->bn == b->bn && a->bk == b->bk && a->wm == b->wm && a->wn == b->wn;
}

/* The split count rule 2 wants for candidate i's tile. */
static int tile_splitk(const law_device *d, const law_gemm_candidate *cands, int n, int i,
                       int m, int nn, int k)
{
    const law_gemm_candidate *c = &cands[i];
    int max_sk = 0, min_sk = 0;
    for (int j = 0; j < n; j++) {
        if (!candidate_usable(&cands[j]) || !same_tile(c, &cands[j])) continue;
        if (cands[j].splitk > max_sk) max_sk = cands[j].splitk;
        if (min_sk == 0 || cands[j].splitk < min_sk) min_sk = cands[j].splitk;
    }
    int law = law_splitk_segments(d, m, nn, k, c->bm, c->bn, c->bk, c->wm * c->wn, max_sk);
    int best = 0;
    for (int j = 0; j < n; j++) {
        if (!candidate_usable(&cands[j]) || !same_tile(c, &cands[j])) continue;
        if (cands[j].splitk <= law && cands[j].splitk > best) best = cands[j].splitk;
    }
    return best ? best : min_sk;
}

static law_score score_of(const law_device *d, const law_gemm_candidate *cands, int n, int i,
                          int m, int nn, int k, int bk_target)
{
    const law_gemm_candidate *c = &cands[i];
    law_score s;
    s.sk_match = c->splitk == tile_splitk(d, cands, n, i, m, nn, k);

    int wpw = c->wm * c->wn;
    long long launched = ceil_div(m, c->bm) * ceil_div(nn, c->bn) * c->splitk * wpw;
    int per_simd = d->wave_slots_per_simd;
    if (c->waves_per_simd > 0 && (per_simd < 1 || c->waves_per_simd < per_simd))
        per_simd = c->waves_per_simd;
    long long capacity = (long long)d->compute_units * d->simds_per_cu * per_simd;
    s.resident = capacity > 0 ? min_ll(launched, capacity) : launched;
    long long fill = (long long)ceil(LAW_FILL_FRACTION * (double)law_device_wave_slots(d));
    if (fill > 0) s.resident = min_ll(s.resident, fill);

    s.bk_match = c->bk == bk_target;
    int fm = c->bm / (16 * c->wm), fn = c->bn / (16 * c->wn);
    s.loads_num = fm + fn;
    s.loads_den = fm * fn;
    s.occupancy = c->waves_per_simd > 0 ? c->waves_per_simd : 0;
    s.threads = wpw;
    return s;
}

/* > 0 when a ranks before b, < 0 after, 0 when the score does not separate them. */
static int compare_scores(const law_score *a, const law_score *b)
{
    if (a->sk_match != b->sk_match) return a->sk_match - b->sk_match;
    if (a->bk_match != b->bk_match) return a->bk_match - b->bk_match;
    if (a->resident != b->resident) return a->resident > b->resident ? 1 : -1;
    long long la = (long long)a->loads_num * b->loads_den, lb = (long long)b->loads_num * a->loads_den;
    if (la != lb) return la < lb ? 1 : -1;
    if (a->occupancy != b->occupancy) return a->occupancy > b->occupancy ? 1 : -1;
    if (a->threads != b->threads) return a->threads < b->threads ? 1 : -1;
    return 0;
}

static int compare_params(const law_gemm_candidate *a, const law_gemm_candidate *b)
{
    if (a->bn != b->bn) return a->bn < b->bn ? 1 : -1;
    if (a->bk != b->bk) return a->bk < b->bk ? 1 : -1;
    if (a->wm != b->wm) return a->wm < b->wm ? 1 : -1;
    if (a->splitk != b->splitk) return a->splitk < b->splitk ? 1 : -1;
    return 0;
}

int law_pick_gemm(const law_device *d, const law_gemm_candidate *cands, int n, int m, int nn, int k)
{
    if (!d || !cands || n < 1) return -1;
    if (m < 1) m = 1;
    if (nn < 1) nn = 1;
    if (k < 1) k = 1;

    /* Rule 1: the M block. */
    int max_bm = 0;
    for (int i = 0; i < n; i++)
        if (candidate_usable(&cands[i]) && cands[i].bm > max_bm) max_bm = cands[i].bm;
    if (max_bm == 0) return -1;
    int cover = m < max_bm ? m : max_bm;
    int bm_target = 0;
    for (int i = 0; i < n; i++)
        if (candidate_usable(&cands[i]) && cands[i].bm >= cover &&
            (bm_target == 0 || cands[i].bm < bm_target))
            bm_target = cands[i].bm;

    /* Rule 3's depth among the tiles of that M block. */
    int bk_target = 0;
    for (int i = 0; i < n; i++) {
        if (!candidate_usable(&cands[i]) || cands[i].bm != bm_target) continue;
        int bk = cands[i].bk;
        if (bk_target == 0 || (m >= LAW_DEEP_BK_MIN_M ? bk > bk_target : bk < bk_target))
            bk_target = bk;
    }

    int best = -1;
    law_score best_score = {0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < n; i++) {
        if (!candidate_usable(&cands[i]) || cands[i].bm != bm_target) continue;
        law_score s = score_of(d, cands, n, i, m, nn, k, bk_target);
        if (best < 0) { best = i; best_score = s; continue; }
        int c = compare_scores(&s, &best_score);
        if (c == 0) c = compare_params(&cands[i], &cands[best]);
        if (c > 0) { best = i; best_score = s; }     /* a tie keeps the lower index */
    }
    return best;
}

double law_regret(double law_time, double best_time)
{
    if (!(law_time > 0.0) || !(best_time > 0.0)) return NAN;
    return law_time / best_time - 1.0;
}
