/* op_gdn.c: the descriptor of the fused gated delta-net decode step (op "gdn_decode"): key
 * `gdn_decode <dtype> dk= dv= hk= hv= kw= norm= vk= q<= batch<=`, recipe templates/gdn/decode.lua,
 * template templates/gdn/decode.hip, ABI templates/abi/gdn.h (the math and its rounding points),
 * float64 reference runtime/gdn_ref.c. Pure functions: no I/O, no state, no GPU. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "op_gdn.h"
#include "gdn_ref.h"
#include "gdn_inputs.h"
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "../tuner/half_convert.h"
#include "../tuner/random_inputs.h"

static const char *const gdn_dtypes[] = {"bf16", "fp16"};
enum { GDN_BF16, GDN_FP16 };

/* tokens a sequence: 1 plain, 2 to 8 speculative verify */
static const int gdn_q_edges[] = {1, 2, 4, 8};
static const int gdn_batch_edges[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};
static const kt_op_dim gdn_dims[KT_GDN_NDIMS] = {
    {"dk", 0, NULL, 0, 0},
    {"dv", 0, NULL, 0, 0},
    {"hk", 0, NULL, 0, 0},
    {"hv", 0, NULL, 0, 0},
    {"kw", 0, NULL, 0, 0},
    {"norm", 0, NULL, 0, 1},
    {"vk", 0, NULL, 0, 1},
    {"q", 1, gdn_q_edges, (int)(sizeof gdn_q_edges / sizeof gdn_q_edges[0]), 0},
    {"batch", 1, gdn_batch_edges, (int)(sizeof gdn_batch_edges / sizeof gdn_batch_edges[0]), 0},
};

/* Every axis is required but the layout (0: [.., K, V], fla's and earlier vLLM's; 1: K-last, vLLM's
 * since #33291) and those added later (their fallbacks: what kernels built before them do). */
static const kt_op_param gdn_params[KT_GDN_NPARAMS] = {
    {"VK", 0, 0},
    {"DK", 0, 1},
    {"DV", 0, 1},
    {"BV", 0, 1},
    {"NW", 0, 1},
    {"KPT", 0, 1},
    {"MT", KT_GDN_MAX_TOKENS, 1},   /* tokens a sequence it steps; kernels built before the axis: all */
    {"OB", 0, 0},                   /* resident blocks asked of ptxas: the occupancy it read back says what came */
    {"PS", 0, 0},                   /* persistent blocks a compute unit (0: a block an item; kernels before the axis) */
    {"PF", 0, 0},                   /* 1: the state of the block `ahead` on prefetched into L2 (kernels before the axis: 0) */
};

static const char *const gdn_workspaces[] = {"hand-off counters"};

#define DIM(p, d) ((p)->dim[KT_GDN_D_##d])
#define PAR(v, n) ((v)->p[KT_GDN_P_##n])
static long long gdn_conv_dim(const kt_problem *p) { return 2 * DIM(p, HK) * DIM(p, DK) + DIM(p, HV) * DIM(p, DV); }
/* work items: a block's columns of a head of a sequence (the one-item-a-block grid's blocks) */
static long long gdn_items(const kt_variant *v, const kt_problem *p) { return DIM(p, DV) / PAR(v, BV) * DIM(p, HV) * DIM(p, BATCH); }

/* the blocks a unit holds of v: at least OB (asked of the register allocator), more where the
 * compiled kernel's resources allow */
static int gdn_held_blocks(const kt_variant *v) { return v->occupancy > PAR(v, OB) ? v->occupancy : PAR(v, OB); }

/* ---- geometry ---- */

static const char *gdn_misfit(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len)
{
    if (PAR(v, DK) != DIM(p, DK) || PAR(v, DV) != DIM(p, DV)) {
        snprintf(buf, len, "compiled for dk=%d dv=%d, the problem has dk=%lld dv=%lld", PAR(v, DK), PAR(v, DV),
                 DIM(p, DK), DIM(p, DV));
        return buf;
    }
    if (PAR(v, VK) != DIM(p, VK)) {
        snprintf(buf, len, "reads the state layout vk=%d, the problem's is vk=%lld", PAR(v, VK), DIM(p, VK));
        return buf;
    }
    if (PAR(v, BV) < 1 || DIM(p, DV) % PAR(v, BV)) {
        snprintf(buf, len, "BV=%d does not divide dv=%lld", PAR(v, BV), DIM(p, DV));
        return buf;
    }
    if (DIM(p, HK) < 1 || DIM(p, HV) % DIM(p, HK)) {
        snprintf(buf, len, "hv=%lld is not a multiple of hk=%lld", DIM(p, HV), DIM(p, HK));
        return buf;
    }
    if (DIM(p, KW) < 2 || DIM(p, KW) > KT_GDN_MAX_KW) {
        snprintf(buf, len, "kw=%lld: the template serves 2 to %d conv taps", DIM(p, KW), KT_GDN_MAX_KW);
        return buf;
    }
    if (DIM(p, Q) > KT_GDN_MAX_TOKENS) {
        snprintf(buf, len, "q=%lld: at most %d tokens a sequence", DIM(p, Q), KT_GDN_MAX_TOKENS);
        return buf;
    }
    if (DIM(p, Q) > PAR(v, MT)) {
        snprintf(buf, len, "steps at most MT=%d tokens a sequence, the problem has q=%lld", PAR(v, MT), DIM(p, Q));
        return buf;
    }
    if (DIM(p, BATCH) > 65535 || DIM(p, HV) > 65535) {
        snprintf(buf, len, "batch=%lld hv=%lld: the grid's y and z hold at most 65535", DIM(p, BATCH), DIM(p, HV));
        return buf;
    }
    if (PAR(v, PF) && gdn_items(v, p) > INT_MAX - (long long)(units > 0 ? units : 1) * gdn_held_blocks(v)) {
        snprintf(buf, len, "PF: %lld work items and the blocks ahead do not fit the kernel's int", gdn_items(v, p));
        return buf;
    }
    if (PAR(v, PS) > 0 && gdn_items(v, p) > INT_MAX - (long long)(units > 0 ? units : 1) * PAR(v, PS)) {
        snprintf(buf, len, "PS=%d: %lld work items do not fit the kernel's int", PAR(v, PS), gdn_items(v, p));
        return buf;
    }
    if (gdn_conv_dim(p) > INT_MAX / KT_GDN_MAX_TOKENS) {
        snprintf(buf, len, "conv_dim=%lld does not fit the argument struct's ints", gdn_conv_dim(p));
        return buf;
    }
    return NULL;
}

static int gdn_launches(const kt_variant *v, const kt_problem *p, int wave_size, int units,
                        kt_op_launch out[KT_OP_MAX_LAUNCHES])
{
    char buf[200];
    if (!v || !p || !out || gdn_misfit(v, p, units, buf, sizeof buf)) return 0;
    memset(out, 0, sizeof *out);
    out[0].suffix = "";
    out[0].dims.grid[0] = (unsigned)(DIM(p, DV) / PAR(v, BV));
    out[0].dims.grid[1] = (unsigned)DIM(p, HV);
    out[0].dims.grid[2] = (unsigned)DIM(p, BATCH);
    out[0].dims.block[0] = (unsigned)(PAR(v, NW) * wave_size);
    out[0].dims.block[1] = 1;
    out[0].dims.block[2] = 1;
    out[0].dims.shared = 0;   /* static shared memory only */
    if (PAR(v, PS) > 0) {     /* a persistent grid over the items, with its state buffer */
        const long long items = gdn_items(v, p), cap = (long long)(units > 0 ? units : 1) * PAR(v, PS);
        out[0].dims.grid[0] = (unsigned)(items < cap ? items : cap);
        out[0].dims.grid[1] = out[0].dims.grid[2] = 1;
        out[0].dims.shared = (unsigned)(4 * PAR(v, DK) * PAR(v, BV));
    }
    return 1;
}

/* one counter a (sequence, key head): the q/k conv state's readers; then one a (sequence, value
 * head): the blocks of a head split under the gated norm */
static long long gdn_workspace_bytes(const kt_variant *v, const kt_problem *p, int units, int i)
{
    return i == 0 ? 4 * DIM(p, BATCH) * (DIM(p, HK) + DIM(p, HV)) : 0;
}
static long long gdn_workspace_poison_bytes(int i, long long bytes) { return 0; }   /* counters stay zero */
static int gdn_needs_workspace(const kt_variant *v) { return 1; }
static int gdn_split_of(const kt_variant *v) { return -1; }

/* ---- arguments ---- */

#define AT_LEAST(field, min) \
    do { if (a->field < (min)) { snprintf(err, errlen, "gdn_decode: " #field " = %lld, must be >= %lld", \
                                          (long long)a->field, (long long)(min)); return KT_EINVAL; } } while (0)

static int gdn_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    const kt_gdn_decode_args *a = args;
    if (!a || !p) { snprintf(err, errlen, "gdn_decode: NULL %s", a ? "problem" : "args"); return KT_EINVAL; }
    const kt_gdn_layer_view lv = KT_GDN_LAYER_VIEW(a);
    if (kt_gdn_inputs_check("gdn_decode", &lv, err, errlen)) return KT_EINVAL;
    if (a->num_accepted && !a->spec_log) {
        snprintf(err, errlen, "gdn_decode: spec_log is NULL with num_accepted set (speculative steps keep a log)");
        return KT_EINVAL;
    }
    AT_LEAST(max_tokens, 1);
    if (a->max_tokens > KT_GDN_MAX_TOKENS) {
        snprintf(err, errlen, "gdn_decode: max_tokens = %d, at most %d", a->max_tokens, KT_GDN_MAX_TOKENS);
        return KT_EINVAL;
    }
    const int need = a->num_accepted ? a->conv_kw - 1 + a->max_tokens : a->conv_kw - 1;
    if (a->conv_len < need) {
        snprintf(err, errlen, "gdn_decode: conv_len = %d, a %s step of %d tokens needs %d columns", a->conv_len,
                 a->num_accepted ? "speculative" : "plain", a->max_tokens, need);
        return KT_EINVAL;
    }
    if (a->num_accepted) AT_LEAST(log_slot_stride, (long long)a->num_v_heads * KT_GDN_MAX_TOKENS * a->dv * 2);
    if (a->ssm_slot_stride % 4 || a->log_slot_stride % 4 || ((unsigned long long)(uintptr_t)a->ssm_state & 15) ||
        ((unsigned long long)(uintptr_t)a->spec_log & 15)) {
        snprintf(err, errlen, "gdn_decode: ssm_state and spec_log must be 16-byte aligned and their slot strides "
                 "multiples of 4 floats");
        return KT_EINVAL;
    }
    p->op = &kt_op_gdn_decode;
    for (int i = 0; i < KT_OP_MAX_DIMS; i++) p->dim[i] = 0;
    p->dim[KT_GDN_D_DK] = a->dk;
    p->dim[KT_GDN_D_DV] = a->dv;
    p->dim[KT_GDN_D_HK] = a->num_k_heads;
    p->dim[KT_GDN_D_HV] = a->num_v_heads;
    p->dim[KT_GDN_D_KW] = a->conv_kw;
    p->dim[KT_GDN_D_NORM] = a->norm_weight != NULL;
    p->dim[KT_GDN_D_VK] = a->state_vk;
    p->dim[KT_GDN_D_Q] = a->max_tokens;
    p->dim[KT_GDN_D_BATCH] = a->batch;
    return KT_OK;
}

static void gdn_bind(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                     const long long *workspace_bytes)
{
    kt_gdn_decode_args *a = args;
    a->counters = workspace ? workspace[0] : NULL;
    a->ahead = PAR(v, PF) && PAR(v, OB) > 0 && PAR(v, PS) == 0 && units > 0 ? units * gdn_held_blocks(v) : 0;
}

/* ---- the law ----
 * The step is a stream of the state (2 x dk x dv x 4 bytes a head, in and out) with a little
 * compute a token, latency-bound when the batch is small. A block's time is mostly fixed (its
 * loads' round trips, the conv, the norm's reductions), so a grid's time is its rounds: the blocks a
 * unit gets over those it holds at once. Among the candidates that can serve p, lexicographically:
 *  1. blocks enough to fill the device (min(blocks, units) with blocks = dv/BV x hv x batch): at
 *     batch 1 the state of a few heads is spread over more compute units by a narrower BV. Under
 *     the gated norm a head split over blocks pays a hand-off a step (the head's last block
 *     normalizes its rows: three round trips) and each block repeats its key head's q/k conv, so
 *     there the split counts only while whole heads would leave all but 1 / GDN_SPLIT_SHARE of
 *     the units idle, where one unit's load rate, not the device's, bounds a head's state (the
 *     H100's Qwen3-Next tp 4 sweep: the split wins at 32 heads on 132 units, bv128 by 9-29% at
 *     64 and 128);
 *  2. the fewest tokens a step built in (MT) among those that serve p: an MT 8 form pays its
 *     per-token LDS and loops on one token (1.12-1.25x its MT 1 twin, the H100's K-last sweep);
 *  3. the fewest rounds: ceil(ceil(blocks / units) / blocks a unit holds) (occupancy; a persistent
 *     grid holds at most PS). With the device full this is the state in flight: K-last bv64 nw4
 *     (three blocks of 128 threads a unit) took 21 rounds at 128 x 32 heads where the 256- and
 *     512-thread forms holding one took 32, and was 1.06-1.13x faster;
 *  4. the widest BV among those (a block's conv of its key head's q and k and its counter are
 *     paid once a block: fewer blocks, less of both);
 *  5. the fewest state floats a thread (KPT x VPT): in as many rounds, the shorter block. This is
 *     what puts the 16-warp whole-head form first from 64 to 256 heads under the gated norm (below,
 *     key 1 splits heads; K-last, the H100: 1.04-1.25x ahead of the 8-warp forms), and the
 *     narrower blocks before it once it needs more rounds;
 *  6. no persistent grid (PS 0): it streams the next item's state into LDS while this one computes,
 *     yet took 0.80x the one-item-a-block grid's speed wherever it ran (the H100: batch 128 x hv 32
 *     262.6 us against 209.8, batch 32 x hv 32 74.6 against 59.4); only a measurement selects it;
 *  7. no residency asked of the register allocator (OB 0) where it buys no round: the bound costs
 *     the registers that keep a block's loads in flight (the H100: 9.70 us at batch 1 x hv 8 with
 *     OB 2, 6.98 without);
 *  8. the row sums reduced in the wave alone (no LDS round and barrier a token);
 *  9. no L2 prefetch of a later block's state (PF 0): like for like it lost 11-22% ([.., K, V], the
 *     H100, thirty-fifth session); a twin's choice only, last, since a form whose prefetch spilled
 *     has no twin;
 * 10. fewer registers, then the first candidate.
 * Refitted on the H100's K-last sweep (thirty-sixth session) with the [.., K, V] sweeps held
 * unchanged; test_op_gdn replays both (tests/data/gdn_decode_sweeps.tsv) and bounds the regret. */
#define GDN_LAW_KEYS 10
#define GDN_SPLIT_SHARE 4
_Static_assert(GDN_LAW_KEYS <= KT_OP_LEX_MAX_KEYS, "the lexicographic pick's key array");

/* the block's thread grid over its DK x BV state (decode.lua's layout): ti threads along the rows,
 * tj along the columns */
static void gdn_grid(const kt_variant *v, int wave, int *ti, int *tj)
{
    *ti = PAR(v, DK) / PAR(v, KPT);
    *tj = *ti > 0 ? PAR(v, NW) * wave / *ti : 0;
}

static int gdn_parts(const kt_variant *v, int wave)
{
    int ti, tj;
    gdn_grid(v, wave, &ti, &tj);
    if (PAR(v, VK)) return ti > wave ? ti / wave : 1;
    return tj < wave ? PAR(v, NW) : ti;
}

/* state floats a thread holds: KPT rows x BV / tj columns */
static long long gdn_thread_floats(const kt_variant *v, int wave)
{
    int ti, tj;
    gdn_grid(v, wave, &ti, &tj);
    return tj > 0 ? (long long)PAR(v, KPT) * PAR(v, BV) / tj : 0;
}

static void gdn_law_key(const law_device *d, const kt_candidate *c, const kt_problem *p, long long key[GDN_LAW_KEYS])
{
    const kt_variant *v = &c->v;
    const int wave = d && d->wave_size > 0 ? d->wave_size : 32;
    const long long units = d && d->compute_units > 0 ? d->compute_units : 1;
    const long long blocks = DIM(p, DV) / PAR(v, BV) * DIM(p, HV) * DIM(p, BATCH);
    /* a persistent grid keeps at most PS blocks a unit, whatever more its resources would allow */
    long long occ = v->occupancy > 0 ? v->occupancy : 1;
    if (PAR(v, PS) > 0 && occ > PAR(v, PS)) occ = PAR(v, PS);
    const long long per_unit = (blocks + units - 1) / units;
    const long long heads = DIM(p, HV) * DIM(p, BATCH);
    /* a split under the gated norm that buys no units worth its hand-off counts as whole heads */
    const int split_pays = PAR(v, BV) >= DIM(p, DV) || !DIM(p, NORM) || GDN_SPLIT_SHARE * heads <= units;
    const long long used = split_pays ? blocks : heads;
    int i = 0;
    key[i++] = used < units ? used : units;
    key[i++] = -PAR(v, MT);
    key[i++] = -((per_unit + occ - 1) / occ);
    key[i++] = PAR(v, BV);
    key[i++] = -gdn_thread_floats(v, wave);
    key[i++] = -PAR(v, PS);
    key[i++] = -PAR(v, OB);
    key[i++] = -gdn_parts(v, wave);
    key[i++] = -PAR(v, PF);
    key[i++] = -(long long)c->regs;
}

static int gdn_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    return kt_op_lex_pick(d, c, n, p, gdn_misfit, gdn_law_key, GDN_LAW_KEYS);
}

/* ---- verification ----
 * A set: batch sequences with mixed token counts (sequence 0 at q, the others 1 .. q), scattered
 * slots in a pool of batch + 2 (slots 0 and batch + 1 belong to nobody: a stray write shows), the
 * sixth sequence padded (one only: the sweep times the set it verifies, and a padded sequence moves
 * no state; with every eighth padded the worker read 10.5% under bench_gdn and Nsight at batch 128,
 * bench/NOTES.md thirty-sixth session), and for q > 1 a speculative step replaying 0 .. q of
 * the slot's logged tokens. Everything but the values is a function of the problem, so buffers()
 * knows the token count. */
enum { B_QKV, B_ZAB, B_PAR, B_META, B_CONV, B_SSM, B_LOG, B_OUT, B_COUNT };

static int gdn_seq_tokens(const kt_problem *p, int i)
{
    const int q = (int)DIM(p, Q);
    return i == 0 || q == 1 ? q : 1 + (i * 3 + 1) % q;
}
static int gdn_seq_slot(const kt_problem *p, int i) { return i == 5 ? -1 : (int)DIM(p, BATCH) - i; }
static int gdn_seq_accepted(const kt_problem *p, int i) { return i % ((int)DIM(p, Q) + 1); }
static int gdn_spec(const kt_problem *p) { return DIM(p, Q) > 1; }
static long long gdn_slots(const kt_problem *p) { return DIM(p, BATCH) + 2; }
static long long gdn_tokens(const kt_problem *p)
{
    long long t = 0;
    for (int i = 0; i < DIM(p, BATCH); i++) t += gdn_seq_tokens(p, i);
    return t;
}
static long long gdn_conv_slot(const kt_problem *p) { return gdn_conv_dim(p) * KT_GDN_VERIFY_CONV_LEN; }
static long long gdn_ssm_slot(const kt_problem *p) { return DIM(p, HV) * DIM(p, DK) * DIM(p, DV); }
static long long gdn_log_slot(const kt_problem *p) { return DIM(p, HV) * KT_GDN_MAX_TOKENS * DIM(p, DV) * 2; }
static long long gdn_out_elems(const kt_problem *p) { return gdn_tokens(p) * DIM(p, HV) * DIM(p, DV); }
/* params: A_log and dt_bias (fp32), then the conv weight and the norm weight (16-bit) */
static long long gdn_par_bytes(const kt_problem *p)
{
    return kt_gdn_inputs_param_bytes(DIM(p, HV), gdn_conv_dim(p), DIM(p, KW), DIM(p, DV));
}

static int gdn_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const long long t = gdn_tokens(p), b = DIM(p, BATCH), hv = DIM(p, HV), dv = DIM(p, DV);
    out[B_QKV] = (kt_op_buffer){"qkv", KT_BUF_IN, (size_t)(t * gdn_conv_dim(p) * 2)};
    out[B_ZAB] = (kt_op_buffer){"z,a,b", KT_BUF_IN, (size_t)(t * hv * (dv + 2) * 2)};
    out[B_PAR] = (kt_op_buffer){"A_log,dt_bias,conv_weight,norm_weight", KT_BUF_IN, (size_t)gdn_par_bytes(p)};
    out[B_META] = (kt_op_buffer){"query_start_loc,state_indices,num_accepted", KT_BUF_IN, (size_t)((3 * b + 1) * 4)};
    out[B_CONV] = (kt_op_buffer){"conv_state", KT_BUF_INOUT, (size_t)(gdn_slots(p) * gdn_conv_slot(p) * 2)};
    out[B_SSM] = (kt_op_buffer){"ssm_state", KT_BUF_INOUT, (size_t)(gdn_slots(p) * gdn_ssm_slot(p) * 4)};
    out[B_LOG] = (kt_op_buffer){"spec_log", KT_BUF_INOUT, (size_t)(gdn_slots(p) * gdn_log_slot(p) * 4)};
    out[B_OUT] = (kt_op_buffer){"out", KT_BUF_OUT, (size_t)(gdn_out_elems(p) * 2)};
    return B_COUNT;
}

/* 16-bit inputs: the generator every verifier draws from (never zero); the conv weight in
 * [-0.6, 0.6) and the norm weight 1 +- 1/2; A_log in [-3, -1) and dt_bias in [-1, 1), so the
 * state decays by 5 to 50% a token: old state and new tokens both weigh in the output. The state
 * and the log hold what a previous step could have left: S in [-1, 1), d in [-1, 1), g in
 * [-0.5, -0.01). */
static void gdn_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    const int dt = p->dtype, fp16 = dt == GDN_FP16;
    switch (i) {
    case B_QKV:
    case B_ZAB:
    case B_CONV:
        for (size_t j = 0; j < bytes / 2; j++) ((uint16_t *)host)[j] = kt_rand_input(fp16, rng);
        break;
    case B_PAR:
        kt_gdn_inputs_fill_params(host, DIM(p, HV), gdn_conv_dim(p), DIM(p, KW), DIM(p, DV), fp16, rng);
        break;
    case B_META: {
        int32_t *m = host;
        const int b = (int)DIM(p, BATCH);
        m[0] = 0;
        for (int s = 0; s < b; s++) {
            m[s + 1] = m[s] + gdn_seq_tokens(p, s);
            m[b + 1 + s] = gdn_seq_slot(p, s);
            m[2 * b + 1 + s] = gdn_seq_accepted(p, s);
        }
        break;
    }
    case B_SSM:
        for (size_t j = 0; j < bytes / 4; j++) ((float *)host)[j] = (float)kt_gdn_inputs_uniform(rng, -1.0, 1.0);
        break;
    case B_LOG:
        for (size_t j = 0; j + 1 < bytes / 4; j += 2) {
            ((float *)host)[j] = (float)kt_gdn_inputs_uniform(rng, -1.0, 1.0);
            ((float *)host)[j + 1] = (float)kt_gdn_inputs_uniform(rng, -0.5, -0.01);
        }
        break;
    default:
        memset(host, 0, bytes);
    }
}

static void gdn_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    kt_gdn_decode_args *a = args;
    memset(a, 0, sizeof *a);
    const long long t = gdn_tokens(p), hv = DIM(p, HV), dv = DIM(p, DV), b = DIM(p, BATCH);
    const int spec = gdn_spec(p);
    a->qkv = buffers[B_QKV];
    a->z = buffers[B_ZAB];
    a->a = (const uint16_t *)buffers[B_ZAB] + t * hv * dv;
    a->b = (const uint16_t *)buffers[B_ZAB] + t * hv * (dv + 1);
    kt_gdn_inputs_bind_params(buffers[B_PAR], hv, gdn_conv_dim(p), DIM(p, KW), (int)DIM(p, NORM), &a->A_log, &a->dt_bias,
                              &a->conv_weight, &a->norm_weight);
    a->conv_state = buffers[B_CONV];
    a->ssm_state = buffers[B_SSM];
    a->spec_log = spec ? buffers[B_LOG] : NULL;
    a->query_start_loc = buffers[B_META];
    a->state_indices = (const int *)buffers[B_META] + b + 1;
    a->num_accepted = spec ? (const int *)buffers[B_META] + 2 * b + 1 : NULL;
    a->out = buffers[B_OUT];
    a->conv_slot_stride = gdn_conv_slot(p);
    a->ssm_slot_stride = gdn_ssm_slot(p);
    a->log_slot_stride = gdn_log_slot(p);
    a->conv_chan_stride = KT_GDN_VERIFY_CONV_LEN;
    a->conv_col_stride = 1;
    a->qkv_stride = (int)gdn_conv_dim(p);
    a->z_stride = (int)(hv * dv);
    a->ab_stride = (int)hv;
    a->out_stride = (int)(hv * dv);
    a->batch = (int)b;
    a->num_k_heads = (int)DIM(p, HK);
    a->num_v_heads = (int)hv;
    a->dk = (int)DIM(p, DK);
    a->dv = (int)dv;
    a->conv_kw = (int)DIM(p, KW);
    a->conv_len = KT_GDN_VERIFY_CONV_LEN;
    a->max_tokens = (int)DIM(p, Q);
    a->state_vk = (int)DIM(p, VK);
    a->scale = (float)(1.0 / sqrt((double)DIM(p, DK)));
    a->norm_eps = 1e-6f;
}

/* out (every token; a padded sequence's rows are not compared), then the three pools whole */
static size_t gdn_ref_count(const kt_problem *p)
{
    return (size_t)(gdn_out_elems(p) + gdn_slots(p) * (gdn_conv_slot(p) + gdn_ssm_slot(p) + gdn_log_slot(p)));
}

static void gdn_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    const int fp16 = p->dtype == GDN_FP16;
    kt_gdn_decode_args a;
    gdn_args_for(&a, p, host);
    const long long no = gdn_out_elems(p), nc = gdn_slots(p) * gdn_conv_slot(p), ns = gdn_slots(p) * gdn_ssm_slot(p);
    const long long nl = gdn_slots(p) * gdn_log_slot(p);
    double *out = ref, *conv = ref + no, *ssm = conv + nc, *log = ssm + ns;
    for (long long i = 0; i < no; i++) out[i] = 0.0;
    for (long long i = 0; i < nc; i++) conv[i] = kt_gdn_ref_val(((const uint16_t *)host[B_CONV])[i], fp16);
    for (long long i = 0; i < ns; i++) ssm[i] = ((const float *)host[B_SSM])[i];
    for (long long i = 0; i < nl; i++) log[i] = ((const float *)host[B_LOG])[i];
    kt_gdn_ref_pools pools = {conv, ssm, log, (int)DIM(p, VK)};
    kt_gdn_ref_step(&a, fp16, &pools, out);
}

/* The output against the dtype's bound; the fp32 state and log, and the conv state (copies of
 * 16-bit inputs, exact), against a bound 100x tighter: the worst of out's error and 100x the
 * pools' is what error_bound judges. */
static double gdn_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    const int fp16 = p->dtype == GDN_FP16, b = (int)DIM(p, BATCH);
    const long long t = gdn_tokens(p), per = DIM(p, HV) * DIM(p, DV);
    const long long no = gdn_out_elems(p), nc = gdn_slots(p) * gdn_conv_slot(p), ns = gdn_slots(p) * gdn_ssm_slot(p);
    const long long nl = gdn_slots(p) * gdn_log_slot(p);
    uint8_t *live = calloc((size_t)t, 1);
    if (!live) return NAN;
    const int32_t *m = host[B_META];
    for (int s = 0; s < b; s++)
        for (int k = m[s]; k < m[s + 1]; k++) live[k] = m[b + 1 + s] >= 0;
    const double eo = kt_gdn_ref_rel(ref, host[B_OUT], no, 0, fp16, live, per);
    free(live);
    const double ec = kt_gdn_ref_rel(ref + no, host[B_CONV], nc, 0, fp16, NULL, 1);
    const double es = kt_gdn_ref_rel(ref + no + nc, host[B_SSM], ns, 1, fp16, NULL, 1);
    const double el = kt_gdn_ref_rel(ref + no + nc + ns, host[B_LOG], nl, 1, fp16, NULL, 1);
    if (isnan(eo) || isnan(ec) || isnan(es) || isnan(el)) return NAN;
    double e = eo;
    if (100.0 * ec > e) e = 100.0 * ec;
    if (100.0 * es > e) e = 100.0 * es;
    if (100.0 * el > e) e = 100.0 * el;
    return e;
}

/* out's rounding (2^-9 bf16, 2^-12 fp16 relative) and the conv outputs' (a one-ulp flip of a q,
 * k or v channel where the fp32 and float64 sums straddle a rounding boundary) bound it: 1e-2 and
 * 2.5e-3 leave room for both; a wrong column, slot or token is an O(1) error. The host emulation
 * (test_gdn_emu.cpp) measured 3e-4 worst in bf16, the fp32 state 4e-7. */
static double gdn_error_bound(int dtype) { return dtype == GDN_FP16 ? 2.5e-3 : 1e-2; }

/* compulsory, per live sequence: each head's state in and out (fp32), its log when speculative,
 * the conv state's history and new columns, and the token rows (qkv, z, a, b in; out) */
static double gdn_bytes_moved(const kt_problem *p)
{
    const double hv = (double)DIM(p, HV), dk = (double)DIM(p, DK), dv = (double)DIM(p, DV);
    const double cdim = (double)gdn_conv_dim(p), kw = (double)DIM(p, KW);
    double bytes = 0.0;
    for (int i = 0; i < DIM(p, BATCH); i++) {
        if (gdn_seq_slot(p, i) < 0) continue;
        const double n = gdn_seq_tokens(p, i);
        bytes += 2.0 * hv * dk * dv * 4.0;
        if (gdn_spec(p)) bytes += (gdn_seq_accepted(p, i) + n) * hv * dv * 2.0 * 4.0;
        bytes += cdim * 2.0 * ((kw - 1.0) + (gdn_spec(p) ? kw - 1.0 + n : kw - 1.0));
        bytes += n * (cdim + hv * (2.0 * dv + 2.0)) * 2.0;
    }
    return bytes;
}

static double gdn_flops(const kt_problem *p) { return 0.0; }

/* The model's GDN layers at this rank: one problem (norm on, the state in the serving vLLM's layout: KT_GDN_STATE). */
static int gdn_from_model(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen)
{
    if (!m->gdn.layers || max < 1) return 0;
    const int dt = kt_op_dtype_index(&kt_op_gdn_decode, m->dtype);
    if (dt < 0) return snprintf(err, errlen, "gdn_decode: dtype '%s' (bf16 or fp16)", m->dtype ? m->dtype : "?"), -1;
    const int vk = kt_gdn_inputs_model_vk("gdn_decode", err, errlen);
    if (vk < 0) return -1;
    memset(&out[0], 0, sizeof out[0]);
    kt_problem *p = &out[0].p;
    p->op = &kt_op_gdn_decode;
    p->dtype = dt;
    p->dim[KT_GDN_D_DK] = m->gdn.key_dim;
    p->dim[KT_GDN_D_DV] = m->gdn.value_dim;
    p->dim[KT_GDN_D_HK] = m->gdn.k_heads_per_rank;
    p->dim[KT_GDN_D_HV] = m->gdn.v_heads_per_rank;
    p->dim[KT_GDN_D_KW] = m->gdn.conv_kw;
    p->dim[KT_GDN_D_NORM] = 1;
    p->dim[KT_GDN_D_VK] = vk;
    p->dim[KT_GDN_D_Q] = 1;
    p->dim[KT_GDN_D_BATCH] = 1;
    snprintf(out[0].layers, sizeof out[0].layers, "gdn");
    out[0].calls = m->gdn.layers;
    return 1;
}

/* (dk, dv, hk, hv, kw, norm, vk, q, batch) where `kt worker --check-reference` would hold a GPU
 * reference to ref_cpu: none, the op has no GPU reference (ref_cpu serves every swept size). */

const kt_op kt_op_gdn_decode = {
    .name = "gdn_decode",
    .summary = "gated delta-net decode step, fused: conv, gates, delta rule, out, gated norm (1-8 tokens)",
    .dtypes = gdn_dtypes,
    .ndtypes = 2,
    .dims = gdn_dims,
    .ndims = KT_GDN_NDIMS,
    .decode_edge = 8,   /* every q bucket is decode */
    .params = gdn_params,
    .nparams = KT_GDN_NPARAMS,
    .args_size = sizeof(kt_gdn_decode_args),
    .launches = gdn_launches,
    .misfit = gdn_misfit,
    .nworkspaces = 1,
    .workspace_names = gdn_workspaces,
    .workspace_bytes = gdn_workspace_bytes,
    /* 1 MiB a stream slot: counters for batch x (key + value heads) up to 262144 (4096 sequences
     * of 16 key and 48 value heads), so a shape nobody tuned is served by the law */
    .workspace_floor_bytes = 1LL << 20,
    .workspace_poison_bytes = gdn_workspace_poison_bytes,
    .needs_workspace = gdn_needs_workspace,
    .split_of = gdn_split_of,
    .problem_of_args = gdn_problem_of_args,
    .bind = gdn_bind,
    .law_pick = gdn_law_pick,
    .prune = NULL,
    .buffers = gdn_buffers,
    .fill = gdn_fill,
    .args_for = gdn_args_for,
    .ref_count = gdn_ref_count,
    .ref_cpu = gdn_ref_cpu,
    .ref_gpu_name = NULL,
    .ref_gpu_launch = NULL,
    .rel_error = gdn_rel_error,
    .error_bound = gdn_error_bound,
    .bytes_moved = gdn_bytes_moved,
    .flops = gdn_flops,
    /* timed cold: at batch >= 8 a rank's GDN state (36 layers x batch x hv x 64 KiB) is far past the
     * H200's L2 in serving; bench/gdn also times it warm, the regime of a small batch on a large cache */
    .cold_decode = 1,
    .from_model = gdn_from_model,
};
