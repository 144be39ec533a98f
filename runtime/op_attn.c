/* op_attn.c: the paged decode attention descriptor (op "attn_decode", runtime/op_attn.h): key
 * `attn_decode <dt> d= g= hkv= bs= win= cap= sink= q<= batch<= ctx<=`, recipe
 * templates/attn/decode.lua, template templates/attn/decode.hip, ABI templates/abi/attn.h (which
 * states the arithmetic). Pure functions: no I/O, no state, no GPU. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "op_attn.h"
#include "op_attn_model.h"
#include "../templates/abi/attn_ref.h"
#include "attn_common.h"
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "../tuner/half_convert.h"
#include "../tuner/random_inputs.h"

/* query rows a sequence: decode, then 1 + speculative tokens */
static const int attn_q_edges[] = {1, 2, 4, 8};
static const int attn_batch_edges[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const int attn_ctx_edges[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
#define NE(a) ((int)(sizeof a / sizeof a[0]))

static const kt_op_dim attn_dims[KT_ATTN_NDIMS] = {
    KT_ATTN_STATIC_DIMS,
    {"q", 1, attn_q_edges, NE(attn_q_edges), 0},
    {"batch", 1, attn_batch_edges, NE(attn_batch_edges), 0},
    {"ctx", 1, attn_ctx_edges, NE(attn_ctx_edges), 0},
};

/* Required: D, BN, NW, and the rows a block as MT (decode.hip, decode_ws.hip) or BM (prefill.hip).
 * SEGMAX (no axis: no split), RE (no axis: Q's fragments are read from LDS every tile), KD (no
 * axis: K goes through LDS), ST (no axis: no ring), WS (no axis: not decode_ws.hip's form), WD
 * (no axis: a warp holds all of d), PD (no axis: a kernel built before its reduce waited for
 * the main launch itself: launched in plain stream order), F8 (no axis: S in 16 bits) and PF (no
 * axis: no prefetch) have fallbacks. */
static const kt_op_param attn_params[KT_ATTN_NPARAMS] = {
    {"D", 0, 16}, {"MT", 0, 0}, {"BN", 0, 16}, {"NW", 0, 1}, {"SEGMAX", 1, 1}, {"RE", 0, 0}, {"KD", 0, 0}, {"ST", 1, 1},
    {"WS", 0, 0}, {"BM", 0, 0}, {"WD", 1, 1}, {"QL", 0, 0}, {"PD", 0, 0}, {"F8", 0, 0}, {"PF", 0, 0},
};
static const char *const attn_workspaces[] = {"split-KV partials"};

/* The segment law's one empirical constant (the seed's MIN_TPS): a segment covers at least this
 * many KV tiles, below which its partials and the reduce cost more than the parallelism buys. */
#define ATTN_LAW_MIN_TILES 2
#define GRID_YZ_MAX 65535LL
#define GRID_X_MAX 2147483647LL

#define DIM(p, n) ((p)->dim[KT_ATTN_D_##n])
#define PAR(v, n) ((v)->p[KT_ATTN_P_##n])

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
static long long attn_heads(const kt_problem *p) { return DIM(p, G) * DIM(p, HKV); }

/* Rows a block: 16 * MT (decode.hip, decode_ws.hip; the tiles split over the warps), BM
 * (prefill.hip: a 16-row tile a warp, or a row group of WD warps) */
static long long attn_block_rows(const kt_variant *v) { return PAR(v, MT) > 0 ? 16LL * PAR(v, MT) : PAR(v, BM); }

/* Blocks a kv head's g * q rows take (1 for a row naming neither MT nor BM, which misfit refuses:
 * the law and bind may see it first). */
static long long attn_row_blocks(const kt_variant *v, const kt_problem *p)
{
    const long long rows = attn_block_rows(v);
    return rows > 0 ? ceil_div(DIM(p, G) * DIM(p, Q), rows) : 1;
}

/* Keys the longest sequence's rows can see: the window bounds a windowed layer's. */
static long long attn_visible(const kt_problem *p)
{
    const long long ctx = DIM(p, CTX), win = DIM(p, WIN);
    return win > 0 && win + DIM(p, Q) - 1 < ctx ? win + DIM(p, Q) - 1 : ctx;
}

/* The segment law (the seed's, derived from the kernel's footprint): TARGET = compute units x the
 * kernel's resident blocks a unit (its ELF resources: kt_variant.occupancy), segments = the most
 * whose blocks all fit those slots at once, TARGET / (blocks without a split) rounded down, then
 * at most a count whose segments keep ATTN_LAW_MIN_TILES KV tiles of the longest sequence, within
 * [1, SEGMAX]. Rounded down, not to the nearest power of two (the seed's snap): a block past the
 * slots is a second wave that costs a whole segment's time (ncu on the H200, fp8 d256 batch 8:
 * 24.75 -> 32 segments put 512 blocks on 396 slots, 9.4 of 12 warps an SM active on average). */
static long long attn_segments(const kt_variant *v, const kt_problem *p, int units)
{
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long target = (long long)(units > 0 ? units : 1) * occ;
    const long long blocks = DIM(p, HKV) * attn_row_blocks(v, p) * DIM(p, BATCH);
    long long s = target / (blocks > 0 ? blocks : 1);
    const long long tile = PAR(v, BN);
    const long long by_tiles = attn_visible(p) / (ATTN_LAW_MIN_TILES * tile);
    if (s > by_tiles) s = by_tiles;
    if (s > PAR(v, SEGMAX)) s = PAR(v, SEGMAX);
    return s < 1 ? 1 : s;
}

/* (token, segment) pairs of partials any problem of p's buckets can need: tokens * segments is at
 * most q * TARGET / (hkv * row blocks) once split (the law's count), and at most
 * tokens * SEGMAX, so the allocation made at open for a key serves every query in its buckets
 * whatever batch below the edge the law then splits for. Above the last q edge (8 rows) the bound
 * is the last edge's: bind then gives such a query fewer segments (correct, less parallel). */
static long long attn_partial_units(const kt_variant *v, const kt_problem *p, int units)
{
    const long long q = kt_op_bucket(p->op, KT_ATTN_D_Q, DIM(p, Q));
    const long long batch = kt_op_bucket(p->op, KT_ATTN_D_BATCH, DIM(p, BATCH));
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long target = (long long)(units > 0 ? units : 1) * occ;
    const long long by_law = q * (2 * target / DIM(p, HKV) + 1);
    const long long by_ceiling = q * batch * PAR(v, SEGMAX);
    return by_law < by_ceiling ? by_law : by_ceiling;
}

/* ---- geometry ---- */

static const char *attn_misfit(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len)
{
    if (PAR(v, D) != DIM(p, D)) {
        snprintf(buf, len, "compiled for head size %d, the problem's is d=%lld", PAR(v, D), DIM(p, D));
        return buf;
    }
    if ((PAR(v, MT) < 1) == (PAR(v, BM) < 16) || attn_block_rows(v) % 16 || PAR(v, BN) < 16 || PAR(v, NW) < 1 ||
        PAR(v, SEGMAX) < 1) {
        snprintf(buf, len, "bad variant: MT=%d BM=%d (one of them, rows a block) BN=%d NW=%d SEGMAX=%d", PAR(v, MT),
                 PAR(v, BM), PAR(v, BN), PAR(v, NW), PAR(v, SEGMAX));
        return buf;
    }
    /* the kernels address a page's aligned 16-key groups with one base each (attn/kv.h); vLLM's
     * block sizes are multiples of 16 */
    if (PAR(v, SEGMAX) > GRID_YZ_MAX) {
        snprintf(buf, len, "bad variant: SEGMAX=%d over the grid's %lld segments", PAR(v, SEGMAX), GRID_YZ_MAX);
        return buf;
    }
    if (DIM(p, BS) % 16) {
        snprintf(buf, len, "block_size=%lld: decode reads whole 16-key groups of a page, a multiple of 16 is needed",
                 DIM(p, BS));
        return buf;
    }
    if (DIM(p, HKV) * attn_row_blocks(v, p) > GRID_X_MAX || DIM(p, BATCH) > GRID_YZ_MAX) {
        snprintf(buf, len, "hkv=%lld batch=%lld over the grid limits", DIM(p, HKV), DIM(p, BATCH));
        return buf;
    }
    if (DIM(p, BATCH) * DIM(p, Q) * attn_heads(p) > GRID_X_MAX) {
        snprintf(buf, len, "batch=%lld q=%lld heads=%lld: the reduce's grid is over its limit", DIM(p, BATCH), DIM(p, Q),
                 attn_heads(p));
        return buf;
    }
    return NULL;
}

static int attn_launches(const kt_variant *v, const kt_problem *p, int wave_size, int units,
                         kt_op_launch out[KT_OP_MAX_LAUNCHES])
{
    char buf[160];
    if (!v || !p || !out || attn_misfit(v, p, units, buf, sizeof buf)) return 0;
    const long long segs = attn_segments(v, p, units);
    memset(out, 0, 2 * sizeof *out);
    out[0].suffix = "";
    out[0].dims = (kt_launch_dims){{(unsigned)(DIM(p, HKV) * attn_row_blocks(v, p)), (unsigned)DIM(p, BATCH), (unsigned)segs},
                                   {(unsigned)(PAR(v, NW) * wave_size), 1, 1},
                                   (unsigned)(v->lds_bytes > 0 ? v->lds_bytes : 0)};   /* all of it at launch */
    if (segs <= 1) return 1;
    /* the reduce's column slices: batch 1, 6 heads, d 256: 8 slices, 48 blocks; 512 rows: one */
    out[1].suffix = "_reduce";
    out[1].dims = kt_attn_reduce_launch(DIM(p, BATCH) * DIM(p, Q) * attn_heads(p), DIM(p, D), units);
    /* the reduce's launch and its blocks' start overlap the main kernel's tail (attn/reduce.h) */
    out[1].early = PAR(v, PD) > 0;
    return 2;
}

/* partials: {m, l} and head_size accumulators, fp32, for each (token, head, segment) */
static long long attn_workspace_bytes(const kt_variant *v, const kt_problem *p, int units, int i)
{
    if (i != 0 || PAR(v, SEGMAX) <= 1) return 0;
    return attn_partial_units(v, p, units) * kt_attn_partial_bytes(attn_heads(p), DIM(p, D));
}

/* every partial is written before the reduce reads it: all of it may be poisoned */
static long long attn_workspace_poison_bytes(int i, long long bytes) { return i == 0 ? bytes : 0; }
/* A split variant uses the partials when it has them, and runs one segment without (bind). */
static int attn_needs_workspace(const kt_variant *v) { return PAR(v, SEGMAX) > 1; }
static long long attn_workspace_min_bytes(const kt_variant *v, const kt_problem *p, int units, int i) { return 0; }
static int attn_split_of(const kt_variant *v) { return PAR(v, SEGMAX); }

/* ---- arguments ---- */

static int attn_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    return kt_attn_problem_of_args(&kt_op_attn_decode, args, p, err, errlen);
}

/* The segment count the launch geometry used, and the partials; fewer segments where the caller's
 * workspace is smaller than the law's (the kernel's extra blocks then exit; none has no reduce). */
static void attn_bind(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                      const long long *workspace_bytes)
{
    kt_attn_bind_split(args, attn_segments(v, p, units), workspace, workspace_bytes);
}

/* ---- the law ----
 * The kernel is a stream of K and V whose latency the loads in flight, in registers, hide: a
 * block keeps a tile of BN keys in flight, and a compute unit as many blocks as its ELF
 * resources allow (kt_variant.occupancy) or as the grid gives it, whichever is fewer; what fills
 * the memory pipe is those keys in flight a unit, up to ATTN_LAW_KEYS_SATURATE. Before them comes
 * what a split costs: every segment writes fp32 partials of its rows (g * q rows x d x 4 bytes)
 * that the reduce reads back, against the keys x d x 2 x element bytes of K and V it reads, so
 * a segment count whose partials pass 1/8 of its KV bytes pays for them in powers of two
 * (attn_split_weight: an fp8 cache reads half the bytes and so takes half the segments; on the
 * H200, fp8 d256 batch 1 16K took 28 us at 256 segments and 19.5 at 128). Then, as before, how
 * long a block streams: a segment of at least ATTN_LAW_STREAM_TILES KV tiles (at the candidate's
 * own segment count) is bandwidth-bound, so K and V are best read once (the fewest row blocks)
 * by fewer warps; a shorter one is bound by the block's fixed costs (Q, the first loads, the
 * partials), which fewer segments (the smaller ceiling) and more warps finish sooner.
 * First, prefill.hip's form (BM: a 16-row tile a warp, K and V read once a block) where a kv head's
 * rows carry rows x d >= ATTN_LAW_ROWS_WORK multiply-adds a key (32 rows at d 256: what decode.hip's
 * split of a tile's work over its warps, partial scores and P through LDS, stops paying for) and
 * the batch's keys give every compute unit at least ATTN_LAW_ROWS_KEYS of them (two 64-key tiles:
 * the block's fixed costs, 64 rows of Q and of partials, over at least that), with at most a
 * quarter of the block's 16-row tiles idle (they compute on zeros: 48 rows in 64, not 32); else it and
 * decode_ws.hip's form (WS 1) only where nothing else fits (the rest of the rule was fitted without
 * them). Among prefill.hip's: the fewest d-slices (WD), the larger tile, Q read from LDS. Then the
 * units with a block at all: a grid short of the device leaves units that read
 * nothing (a smaller tile, whose minimum segment is shorter, splits into more blocks). Then a
 * ring (ST > 1: the next tiles copied into LDS, no registers held): from d 256 passed over (as
 * fast or slower, and slower still with more stages: the streams are not short of bytes in
 * flight; since the grouped addressing freed the register form's registers, speculative rows no
 * longer want it either: 26 us against 50 at d256 q 4 batch 1 16K), except prefill.hip's form
 * where its blocks before the split are fewer than the units (each then streams a long segment
 * alone at one block a unit, its ring's LDS: q 8 batch 1-4 swept, fifteenth session, the law's
 * regret over the 48 q 8 keys 5.33 -> 3.21%); at d <= 128 left to the keys after where a
 * segment streams (there the registers it frees are a resident block more, which keys in flight
 * see), passed over where it does not (a short segment is its fixed costs, which a ring's prologue
 * does not shorten: the H200's fp8 d128 sweep, seventeenth session, worst cell +22.8 -> +6.4%, its
 * 32 keys 2.92 -> 2.88% pooled; the eleventh to sixteenth sessions' sweeps 2.64 -> 2.63%, the rest
 * unchanged). A ring counts BN keys
 * in flight a resident block, as the register form (bench/NOTES.md, seventh
 * session), and an fp8 key half a 16-bit one (its bytes: fp8 d128 then takes BN 64, 9-14% faster).
 * Then, lexicographically, among the candidates compiled for the head size: the split's
 * weight; the fewest row blocks (each reads the kv head's K and V: at speculative q 4, g 8, two
 * 16-row blocks at four resident took 209 us where one 32-row block at two took 167; fifteenth
 * session); keys in flight a unit, capped; then the blocks resident a unit (the same keys in
 * flight from more blocks hide more: their prologues, barriers and softmax chains overlap; OB's
 * fourth block of KD d256 BN16 against the register form's two of BN32, fourteenth session);
 * short of streaming, the smaller segment
 * ceiling; streaming at most 16 x 256 multiply-adds a key (rows x d: one 16-row tile at d 256, two
 * at d 128), fewer warps, else more (more arithmetic a key, which more warps share); Q's fragments in registers (RE); K through LDS
 * (KD 0: since the softmax's vector reads the LDS form is the faster or level at equal
 * residency); the larger ceiling; the smaller tile; the fewest idle rows; the first candidate.
 * Fitted on the H200's sweeps (every fitting candidate timed): before the ring, +3.44% pooled in
 * sample (168 keys) and +2.1% held out on gemma-3 tp 4; with the ring's variants, whose sweeps
 * moved the rule to +5.3% (288 keys of tests/device/attn_shapes.json) and +6.9% (gemma-3 tp 4,
 * 124 keys), the two keys in front were fitted on both together: +3.2% pooled over the 412
 * (bench/NOTES.md, seventh session). Refitted on the eighth session's sweep (272 keys, the new
 * addressing): +4.67% -> +2.31% pooled in sample (bench/NOTES.md, ninth session). With prefill.hip's
 * kernels swept at q 4 and 8 (five geometries, 240 keys) beside the ninth session's 277: +9.39% with
 * them last, +2.23% pooled over the 469 with the rule above (the two thresholds chosen on them:
 * flat from 96 to 192 keys a unit); on the landed kernels' sweep (idle row groups unguarded, hence
 * the quarter) +2.61% over the same 469 keys (bench/NOTES.md, tenth session). With the OB axis
 * (fourteenth session's sweep, 144 keys) +3.33% until the resident blocks' key: +1.59% there, the
 * earlier sweeps 2.70 / 0.74 / 1.92% -> 2.79 / 0.74 / 1.93%. The row blocks moved before the keys
 * in flight: 2.79 -> 2.74% on the eleventh session's 469 keys, the rest unchanged; on the
 * fifteenth session's 240 (q 1, and q 4 / 8 at 16/2/256 and 6/1/256) 4.79 -> 3.32%, with the
 * ring of prefill.hip's short grids 2.85% (the eleventh's 2.64%). PF (the KD form's L2 prefetch)
 * where the blocks fill at most half of units x resident blocks and the segments stream, among what
 * the keys in flight leave, and nowhere else: on the H200 (eighteenth session) it took 6/1/256
 * batch 1 at 128K 6-8% faster and every fuller grid of 36 rows (batch 1-4, 4K-128K, four
 * geometries) 1-12% slower; ranked before the keys in flight it took a smaller SEGMAX to empty a
 * grid, 7% slower. */
#define ATTN_LAW_KEYS 21
#define ATTN_LAW_STREAM_TILES 8
#define ATTN_LAW_KEYS_SATURATE 128
#define ATTN_LAW_SPLIT_SHARE 8      /* partials up to 1/8 of a segment's KV bytes cost nothing */
#define ATTN_LAW_ROWS_WORK (32 * 256)   /* rows x d a key from which prefill.hip's form comes first */
#define ATTN_LAW_ROWS_KEYS 128      /* ... given this many of the batch's keys a compute unit */
_Static_assert(ATTN_LAW_KEYS <= KT_OP_LEX_MAX_KEYS, "kt_op_lex_pick compares at most KT_OP_LEX_MAX_KEYS");

/* ceil(log2(partial bytes x ATTN_LAW_SPLIT_SHARE / KV bytes)) of a segment, 0 when under or
 * unsplit */
static long long attn_split_weight(const kt_problem *p, long long segs)
{
    if (segs <= 1) return 0;
    const double esz = kt_attn_kv8(p->dtype) ? 1.0 : 2.0;
    const double rows = (double)DIM(p, G) * (double)DIM(p, Q);
    const double kv = (double)attn_visible(p) / (double)segs * 2.0 * esz;
    const double ratio = rows * 4.0 * ATTN_LAW_SPLIT_SHARE / (kv > 0.0 ? kv : 1.0);
    return ratio > 1.0 ? (long long)ceil(log2(ratio)) : 0;
}

/* whether v is prefill.hip's form and p's rows and keys put it first (above) */
static int attn_rows_first(const kt_variant *v, const kt_problem *p, int units)
{
    if (PAR(v, BM) <= 0) return 0;
    const long long rows = DIM(p, G) * DIM(p, Q);
    const long long keys = DIM(p, HKV) * attn_row_blocks(v, p) * DIM(p, BATCH) * attn_visible(p);
    /* its idle row groups compute on zeros (prefill.hip): at most a quarter of a block's */
    const long long tiles = attn_row_blocks(v, p) * PAR(v, BM) / 16, idle_tiles = tiles - ceil_div(rows, 16);
    return rows * DIM(p, D) >= ATTN_LAW_ROWS_WORK && keys >= (long long)ATTN_LAW_ROWS_KEYS * units &&
           4 * idle_tiles <= tiles;
}

static void attn_law_key(const law_device *d, const kt_candidate *c, const kt_problem *p, long long key[ATTN_LAW_KEYS])
{
    const kt_variant *v = &c->v;
    const long long rows = DIM(p, G) * DIM(p, Q);   /* of a kv head */
    const long long rb = attn_row_blocks(v, p);
    const long long idle = rb * attn_block_rows(v) - rows;
    const int units = d && d->compute_units > 0 ? d->compute_units : 1;
    const long long segs = attn_segments(v, p, units);
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long blocks = DIM(p, HKV) * rb * DIM(p, BATCH) * segs;
    const long long resident = occ < ceil_div(blocks, units) ? occ : ceil_div(blocks, units);
    /* an fp8 key is half a 16-bit key's bytes */
    const long long in_flight = resident * PAR(v, BN) / (kt_attn_kv8(p->dtype) ? 2 : 1);
    const int streams = attn_visible(p) >= segs * ATTN_LAW_STREAM_TILES * PAR(v, BN);
    const int ring = PAR(v, ST) > 1;
    /* PF's prefetches pay where the blocks fill at most half the units' resident slots */
    const int half_empty = 2 * blocks <= (long long)units * occ;
    int i = 0;
    key[i++] = attn_rows_first(v, p, units) ? 1 : -(PAR(v, WS) || PAR(v, BM) > 0);
    /* among prefill.hip's: the fewest d-slices, then the larger tile and Q read from LDS (a
     * block streams its segment: a tile's fixed steps over more keys, registers for residency) */
    key[i++] = -PAR(v, WD);
    key[i++] = PAR(v, BM) > 0 ? PAR(v, BN) : 0;
    key[i++] = PAR(v, BM) > 0 ? PAR(v, QL) : 0;
    /* KD with an fp8 cache and a bf16 query is the slower form at any residency: first for its K
     * conversion to bf16 (five instructions a pair; bench/NOTES.md, twelfth session: fp8 d256
     * batch 8 32K, KD 105-114 us against 86 for the LDS form), and still with S in f16 (one a
     * pair, fifteenth session: 84.7 against 81.3 us; d128 206 against 177), and at any count of
     * units with a block (thirteenth session: before that key, the three sweeps' pooled regret
     * 2.74 / 0.78 / 2.03% -> 2.70 / 0.74 / 1.92%, the worst cell +36.6% -> +27.2%) */
    key[i++] = kt_attn_kv8(p->dtype) && !kt_attn_fp16(p->dtype) ? -PAR(v, KD) : 0;
    key[i++] = blocks < units ? blocks : units;
    key[i++] = PAR(v, D) <= 128 ? (streams ? 0 : -ring) : (PAR(v, BM) > 0 && DIM(p, HKV) * rb * DIM(p, BATCH) < units ? ring : -ring);
    key[i++] = -attn_split_weight(p, segs);
    key[i++] = -rb;
    key[i++] = in_flight < ATTN_LAW_KEYS_SATURATE ? in_flight : ATTN_LAW_KEYS_SATURATE;
    key[i++] = resident;
    /* there, where the segments stream, among what the keys in flight left (a twin and its
     * prefetching one: a smaller ceiling that empties the grid does not get it: 16/2/256 batch 1
     * 128K at 256 blocks, PF 7.5% slower than 512 without); elsewhere last */
    key[i++] = PAR(v, PF) && half_empty && streams;
    key[i++] = streams ? 0 : -PAR(v, SEGMAX);
    key[i++] = streams && rows * DIM(p, D) <= 16 * 256 ? -PAR(v, NW) : PAR(v, NW);
    key[i++] = PAR(v, RE);
    key[i++] = -PAR(v, KD);
    key[i++] = PAR(v, SEGMAX);
    key[i++] = -PAR(v, BN);
    key[i++] = -idle;
    /* S in e4m3 (F8) only where a sweep has timed it: it saves the KV loop 29% of its
     * instructions on gfx1201 (ISA counts, d256 BN32 NW4), where no device of ours runs, and on
     * sm_90 mma.sync's e4m3 is software (f16 conversions and the f16 instruction) */
    key[i++] = -PAR(v, F8);
    key[i++] = -PAR(v, PF);
}

static int attn_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    return kt_op_lex_pick(d, c, n, p, attn_misfit, attn_law_key, ATTN_LAW_KEYS);
}

/* prefill.hip's blocks (a 16-row tile a warp) are not timed where most of their row tiles would
 * be idle, more than twice the tiles a kv head's rows fill: plain decode's g rows, a few
 * speculative rows of a small group (those warps only copy) */
static int attn_prune(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, int law_idx, int *keep)
{
    const long long tiles = ceil_div(DIM(p, G) * DIM(p, Q), 16);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        keep[i] = i == law_idx || PAR(&c[i].v, BM) <= 0 || PAR(&c[i].v, BM) / 16 <= 2 * tiles;
        kept += keep[i];
    }
    return kept;
}

/* ---- verification sets ----
 * The batch is the key's, as serving lays it out: batch sequences of mixed lengths (the first the
 * bucket's ctx, the rest uniform in [ctx/2, ctx]) and mixed query rows (the first q, the rest
 * uniform in [1, q]: speculative tokens partly accepted; the second instance, "@equal", has every
 * sequence at ctx and q), their blocks scattered over a cache
 * with spare blocks by a random permutation, and q a slice of a fused qkv buffer (its token
 * stride is (heads + 2 kv heads) x d, as vLLM's qkv_proj output) while out is contiguous. The
 * metadata is a function of the problem alone (a fixed seed), so every buffer's fill agrees on it;
 * the data (q, K, V, sinks) comes from the caller's rng. */
#define ATTN_META_SEED 0x5eed0a77e17ULL

typedef struct attn_meta {
    int batch, q, bs, max_blocks, num_blocks;
    long long tokens;
} attn_meta;

/* query rows of sequence i (the second instance: every sequence the bucket's q) */
static int attn_q_len(const kt_problem *p, int i)
{
    const long long q = DIM(p, Q);
    if (i == 0 || q == 1 || p->instance) return (int)q;
    uint64_t s = ATTN_META_SEED ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
    return 1 + (int)(kt_rand_splitmix64(&s) % (uint64_t)q);
}

static int attn_seq_len(const kt_problem *p, int i)
{
    const long long ctx = DIM(p, CTX), q = DIM(p, Q);
    if (i == 0 || p->instance) return (int)ctx;
    uint64_t s = ATTN_META_SEED + (uint64_t)i * 0x9E3779B97F4A7C15ull;
    const long long lo = ctx / 2 > q ? ctx / 2 : q;
    return (int)(lo + (long long)(kt_rand_splitmix64(&s) % (uint64_t)(ctx - lo + 1)));
}

static attn_meta attn_meta_of(const kt_problem *p)
{
    attn_meta m;
    m.batch = (int)DIM(p, BATCH);
    m.q = (int)DIM(p, Q);
    m.bs = (int)DIM(p, BS);
    m.max_blocks = (int)ceil_div(DIM(p, CTX), m.bs);
    long long blocks = 0;
    for (int i = 0; i < m.batch; i++) blocks += ceil_div(attn_seq_len(p, i), m.bs);
    m.num_blocks = (int)(blocks + blocks / 8 + 1);   /* spare blocks: a table is not the identity */
    m.tokens = 0;
    for (int i = 0; i < m.batch; i++) m.tokens += attn_q_len(p, i);
    return m;
}

/* the block table: a random permutation of the cache's blocks, dealt out to the sequences */
static void attn_block_table(const kt_problem *p, const attn_meta *m, int32_t *bt)
{
    int32_t *lens = malloc((size_t)m->batch * sizeof *lens);
    if (!lens) { memset(bt, 0xff, (size_t)m->batch * m->max_blocks * sizeof *bt); return; }
    for (int i = 0; i < m->batch; i++) lens[i] = attn_seq_len(p, i);
    kt_attn_deal_blocks(lens, m->batch, m->bs, m->max_blocks, m->num_blocks, ATTN_META_SEED ^ 0xb10cULL, bt);
    free(lens);
}

enum { B_Q, B_OUT, B_K, B_V, B_BT, B_LENS, B_QSL, B_SINKS, B_COUNT };
/* the order attn_common.c's verification sets, reference and problem_of_args use */
_Static_assert((int)B_SINKS == (int)KT_ATTN_B_SINKS && (int)B_QSL == (int)KT_ATTN_B_QSL && (int)B_BT == (int)KT_ATTN_B_BT, "attn_common.h's buffer order");
_Static_assert((int)KT_ATTN_D_D == (int)KT_ATTN_DIM_D && (int)KT_ATTN_D_SINK == (int)KT_ATTN_DIM_SINK && (int)KT_ATTN_D_Q == (int)KT_ATTN_DIM_ROWS && (int)KT_ATTN_D_CTX == (int)KT_ATTN_DIM_CTX,
               "attn_common.h's dimension order");

/* elements between q's tokens: a fused qkv row, the q heads first */
static long long attn_q_stride(const kt_problem *p) { return (attn_heads(p) + 2 * DIM(p, HKV)) * DIM(p, D); }

static int attn_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const attn_meta m = attn_meta_of(p);
    return kt_attn_set_buffers(p, (int)m.tokens, attn_q_stride(p), m.num_blocks, m.max_blocks, out);
}

static void attn_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    const attn_meta m = attn_meta_of(p);
    switch (i) {
    case B_Q:
        kt_attn_fill_values(p->dtype, 0, host, bytes, rng);
        break;
    case B_K:
    case B_V:
        kt_attn_fill_values(p->dtype, 1, host, bytes, rng);
        break;
    case B_BT:
        attn_block_table(p, &m, host);
        break;
    case B_LENS:
        for (int s = 0; s < m.batch; s++) ((int32_t *)host)[s] = attn_seq_len(p, s);
        break;
    case B_QSL: {
        int32_t *qsl = host;
        qsl[0] = 0;
        for (int s = 0; s < m.batch; s++) qsl[s + 1] = qsl[s] + attn_q_len(p, s);
        break;
    }
    case B_SINKS:
        kt_attn_fill_sinks(host, bytes / 4, rng);
        break;
    default:
        memset(host, 0, bytes);
    }
}

/* the set's struct: q a fused qkv row a token, the longest sequence the ctx bucket's keys */
static void attn_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    const attn_meta m = attn_meta_of(p);
    kt_attn_set_args(args, p, buffers, (int)m.tokens, m.max_blocks, (int)DIM(p, CTX), attn_q_stride(p));
}

static size_t attn_ref_count(const kt_problem *p)
{
    return (size_t)attn_meta_of(p).tokens * (size_t)attn_heads(p) * (size_t)DIM(p, D);
}

/* float64 over the inputs, as templates/abi/attn.h states it (attn_common.c); q's tokens a fused
 * qkv row apart */
static void attn_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    kt_attn_ref_cpu(p, attn_meta_of(p).max_blocks, attn_q_stride(p), host, ref);
}

/* templates/ref/attn_ref.hip, one per dtype: any head size up to KT_ATTN_REF_MAX_D (its threads
 * hold the head's output in registers); above it the worker takes ref_cpu. The worker runs the
 * GPU reference whenever there is one, as for the GEMM: ref_cpu is its check (ref_checks). */
static kt_launch_dims attn_ref_gpu_launch(const kt_problem *p, void *args, void *const *buffers, void *ref_out)
{
    kt_attn_ref_args *ra = args;
    memset(ra, 0, sizeof *ra);
    attn_args_for(&ra->a, p, buffers);
    return kt_attn_ref_gpu_dims(ra, attn_meta_of(p).tokens, attn_heads(p), ref_out);
}

static double attn_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    return kt_attn_rel_error(p->dtype, host[B_OUT], attn_ref_count(p), ref);
}

/* compulsory: every visible key's K and V row once per kv head, q and out */
static double attn_bytes_moved(const kt_problem *p)
{
    const attn_meta m = attn_meta_of(p);
    double keys = 0.0;
    for (int s = 0; s < m.batch; s++) {
        const long long len = attn_seq_len(p, s), win = DIM(p, WIN);
        keys += (double)(win > 0 && win + m.q - 1 < len ? win + m.q - 1 : len);
    }
    const double esz = kt_attn_kv8(p->dtype) ? 1.0 : 2.0;
    return 2.0 * keys * (double)DIM(p, HKV) * (double)DIM(p, D) * esz +
           2.0 * 2.0 * (double)m.tokens * (double)attn_heads(p) * (double)DIM(p, D);
}

static double attn_flops(const kt_problem *p)
{
    const attn_meta m = attn_meta_of(p);
    return 4.0 * (double)m.tokens * (double)attn_heads(p) * (double)attn_visible(p) * (double)DIM(p, D);
}

/* Where `kt worker --check-reference` holds the GPU reference to ref_cpu, every dtype (fp8 caches
 * among them): (d, g, hkv, bs, win, cap, sink, q, batch, ctx), small enough for ref_cpu. Plain
 * decode; speculative rows (q 2 to 8); a window shorter than the context (with q > 1 each row has
 * its own start); soft-caps of 50, 30 and 5 (scores of a few units: both of tanh's branches),
 * with a window and with sinks; sinks alone; head sizes 64 to 512, and 80 (no power of two:
 * most threads own no output element); block sizes 8 to 32; contexts of one to twenty 256-key
 * chunks. */
static const long long attn_ref_checks[][KT_OP_MAX_DIMS] = {
    {128, 4, 2, 16, 0, 0, 0, 1, 3, 300},
    {64, 8, 1, 32, 0, 0, 0, 3, 2, 700},
    {256, 2, 2, 16, 100, 0, 0, 2, 3, 500},
    {128, 4, 1, 16, 64, 50, 0, 4, 2, 400},
    {64, 4, 2, 16, 0, 5, 1, 1, 4, 1000},
    {512, 2, 1, 16, 0, 0, 1, 8, 2, 260},
    {80, 3, 2, 8, 0, 30, 1, 2, 2, 129},
    {128, 8, 1, 16, 0, 0, 0, 1, 2, 5000},
};

const kt_op kt_op_attn_decode = {
    .name = "attn_decode",
    .summary = "paged attention decode / speculative verify, split-KV (vLLM's NHD cache)",
    .dtypes = kt_attn_dtypes,
    .ndtypes = KT_ATTN_NDTYPES,
    .dims = attn_dims,
    .ndims = KT_ATTN_NDIMS,
    .decode_edge = 8,   /* every q bucket is decode */
    .params = attn_params,
    .nparams = KT_ATTN_NPARAMS,
    .args_size = sizeof(kt_attn_args),
    .launches = attn_launches,
    .misfit = attn_misfit,
    .nworkspaces = 1,
    .workspace_names = attn_workspaces,
    .workspace_bytes = attn_workspace_bytes,
    .workspace_min_bytes = attn_workspace_min_bytes,
    /* 32 MiB a stream slot: (token, segment) pairs enough for ~256 segments of a 32-row, d256 batch
     * of 16 heads; a larger untuned split is clamped by bind (fewer segments, still correct) */
    .workspace_floor_bytes = 32LL << 20,
    .workspace_poison_bytes = attn_workspace_poison_bytes,
    .needs_workspace = attn_needs_workspace,
    .split_of = attn_split_of,
    .split_label = "split-KV segments at most (the law sets the count at bind)",
    .problem_of_args = attn_problem_of_args,
    .bind = attn_bind,
    .law_pick = attn_law_pick,
    .prune = attn_prune,
    .buffers = attn_buffers,
    .fill = attn_fill,
    .args_for = attn_args_for,
    .ref_count = attn_ref_count,
    .ref_cpu = attn_ref_cpu,
    .ref_gpu_name = kt_attn_ref_gpu_name,
    .ref_gpu_launch = attn_ref_gpu_launch,
    .ref_args_size = sizeof(kt_attn_ref_args),
    .rel_error = attn_rel_error,
    .error_bound = kt_attn_error_bound,
    .bytes_moved = attn_bytes_moved,
    .flops = attn_flops,
    /* timed cold: serving reads every layer's KV from HBM (it is far larger than L2) */
    .cold_decode = 1,
    /* every sequence at the bucket's length and rows: a tie at mixed lengths is not one at equal
     * ones (the H200, 8/4/256 batch 8 32K: KD and the ring 225.5 / 226.1 us mixed, 254 / 275 equal) */
    .second_instance = "equal",
    /* a kernel tuned at other query rows is another form (rows a block, prefill.hip's rows form
     * from q 4): the H200 served q 4 / q 8 with q 1's pick at 1.3x / 2.3x the law's time */
    .bucket_same_dims = 1u << KT_ATTN_D_Q,
    .ref_checks = attn_ref_checks,
    .nref_checks = (int)(sizeof attn_ref_checks / sizeof attn_ref_checks[0]),
    .from_model = kt_attn_model_problems,
};
