/* op_gdn_prefill.c: the descriptor of the gated delta-net prefill (op "gdn_prefill"): key
 * `gdn_prefill <dtype> dk= dv= hk= hv= kw= norm= vk= tokens<= seqs<=`, recipe
 * templates/gdn/prefill.lua, template templates/gdn/prefill.hip (three launches; four on wave 64
 * and at BT 16),
 * ABI templates/abi/gdn_prefill.h, float64 reference runtime/gdn_ref.c (the decode steps a prefill
 * equals). Pure functions: no I/O, no state, no GPU (the measurement knob KT_GDNP_PARTS aside). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "op_gdn_prefill.h"
#include "op_gdn.h"                  /* KT_GDN_VERIFY_CONV_LEN */
#include "gdn_ref.h"
#include "gdn_inputs.h"
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "kt_env.h"                  /* KT_GDNP_PARTS */
#include "../tuner/half_convert.h"
#include "../tuner/random_inputs.h"

static const char *const gdnp_dtypes[] = {"bf16", "fp16"};
enum { GDNP_BF16, GDNP_FP16 };

/* a call's tokens (vLLM's max_num_batched_tokens bounds them: 8K-16K by default) and sequences */
static const int gdnp_token_edges[] = {64, 256, 1024, 4096, 16384, 65536};
static const int gdnp_seq_edges[] = {1, 2, 4, 8, 16, 32, 64};
static const kt_op_dim gdnp_dims[KT_GDNP_NDIMS] = {
    {"dk", 0, NULL, 0, 0},
    {"dv", 0, NULL, 0, 0},
    {"hk", 0, NULL, 0, 0},
    {"hv", 0, NULL, 0, 0},
    {"kw", 0, NULL, 0, 0},
    {"norm", 0, NULL, 0, 1},
    {"vk", 0, NULL, 0, 1},
    {"tokens", 1, gdnp_token_edges, (int)(sizeof gdnp_token_edges / sizeof gdnp_token_edges[0]), 0},
    {"seqs", 1, gdnp_seq_edges, (int)(sizeof gdnp_seq_edges / sizeof gdnp_seq_edges[0]), 0},
};

static const kt_op_param gdnp_params[KT_GDNP_NPARAMS] = {
    {"VK", 0, 0},
    {"DK", 0, 1},
    {"DV", 0, 1},
    {"BT", 0, 16},
    {"BV", 0, 16},
    {"NW", 0, 1},
    {"PF", 0, 0},
};

static const char *const gdnp_workspaces[] = {"prefill intermediates (q, k, w, u, vn, h, kd, G)"};

#define DIM(p, d) ((p)->dim[KT_GDNP_D_##d])
#define PAR(v, n) ((v)->p[KT_GDNP_P_##n])
static long long gdnp_conv_dim(const kt_problem *p) { return 2 * DIM(p, HK) * DIM(p, DK) + DIM(p, HV) * DIM(p, DV); }

void kt_gdn_prefill_lds(int bt, int dk, int dv, int bv, int nw, int pf, int lds[KT_GDNP_KERNELS])
{
    const int lk = dk + 8, lt = bt + 8, maxd = dk > dv ? dk : dv;
    const int tr = maxd * lt * 2 > 16 * bt * 4 ? maxd * lt * 2 : 16 * bt * 4;
    const int ks = bv >= 16 ? nw / (bv / 16) : 1;   /* warps splitting a value tile's keys */
    lds[0] = bt * lk * 2;
    lds[1] = bt * lk * 2 + tr + bt * (bt + 4) * 4 + 3 * bt * 4;   /* X rounded shares A's bytes */
    /* w^T and kd (two buffers at PF 2, a row of each at PF 3 and 4), the key splits' partial vn^T (a
     * 16 x 16 fp32 tile is 1 KiB on every target) and vn^T's P fragments (a tile's: 512 bytes, 1 KiB
     * on gfx11 where the operands are replicated), each at least one a token tile (the struct's
     * arrays are never empty) */
    const int ops = pf >= 3 ? lt * 2 + lk * 2 : (pf == 2 ? 2 : 1) * (dk * lt * 2 + bt * lk * 2);
    if (pf == 5)   /* no partials (one tile's, unused); S^T's P fragments, every key tile, two buffers */
        lds[2] = ops + 1024 + (ks > 1 ? bv / 16 : 1) * 2 * (dk / 16) * 1024;
    else
        lds[2] = ops + (ks > 1 ? nw : 1) * (bt / 16) * 1024 + (ks > 1 ? bv / 16 : 1) * (bt / 16) * 1024;
    lds[3] = bt * lk * 2 + (bt > 64 ? bt : 64) * lk * 2 + bt * lt * 2 + 64 * lt * 2 + bt * 4 + (pf == 5 ? bt : 1) * lk * 2;   /* PF 5: w */
    for (int i = 0; i < KT_GDNP_KERNELS; i++) lds[i] = (lds[i] + 15) / 16 * 16;
}

int kt_gdn_prefill_runs_prep(int wave_size, int bt) { return wave_size == 64 || bt == 16; }

long long kt_gdn_prefill_chunks(long long tokens, long long seqs, int bt) { return bt > 0 ? tokens / bt + seqs : 0; }

/* ---- geometry ---- */

static const char *gdnp_misfit(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len)
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
    if (DIM(p, HK) < 1 || DIM(p, HV) % DIM(p, HK)) {
        snprintf(buf, len, "hv=%lld is not a multiple of hk=%lld", DIM(p, HV), DIM(p, HK));
        return buf;
    }
    if (DIM(p, KW) < 2 || DIM(p, KW) > KT_GDN_MAX_KW) {
        snprintf(buf, len, "kw=%lld: the template serves 2 to %d conv taps", DIM(p, KW), KT_GDN_MAX_KW);
        return buf;
    }
    const long long chunks = kt_gdn_prefill_chunks(DIM(p, TOKENS), DIM(p, SEQS), PAR(v, BT));
    if (chunks > INT_MAX || DIM(p, HV) > 65535 || DIM(p, SEQS) > 65535) {
        snprintf(buf, len, "tokens=%lld seqs=%lld hv=%lld: past the grid's limits", DIM(p, TOKENS), DIM(p, SEQS), DIM(p, HV));
        return buf;
    }
    if (gdnp_conv_dim(p) > INT_MAX / 4) {
        snprintf(buf, len, "conv_dim=%lld does not fit the argument struct's ints", gdnp_conv_dim(p));
        return buf;
    }
    return NULL;
}

/* The plan's parts (abi). Where the state pass's blocks (dv / BV x hv x seqs, about one a unit:
 * their registers fill it) leave at least half the compute units idle, wy runs a part at a time,
 * the state pass of part j (on lane 1, ahead) as soon as wy's part j is done, beside wy's later
 * parts, and out of part j beside the state pass of part j + 1, so that only wy's first part and
 * the last part's out stay outside the serial pass; with fewer idle units the launches beside it
 * would hold units the next part's state pass waits for. Each part costs three launches and two
 * cross-stream waits, hence parts of at least GDNP_PART_CHUNKS chunks of the mean sequence, at most
 * GDNP_MAX_PARTS. KT_GDNP_PARTS (a measurement knob) sets the count instead; KT_GDNP_WY_PARTS=0
 * (another) keeps wy whole ahead of the parts, the plan before wy had parts. */
#define GDNP_PART_CHUNKS 32
#define GDNP_MAX_PARTS 8
_Static_assert(1 + 3 * GDNP_MAX_PARTS <= KT_OP_MAX_LAUNCHES, "prep and three launches a part");

int kt_gdn_prefill_parts(long long tokens, long long seqs, long long dv, long long hv, int bt, int bv, int units)
{
    if (seqs < 1 || bt < 1 || bv < 1) return 1;
    long long parts;
    const char *knob = kt_env_get("KT_GDNP_PARTS");
    if (knob && *knob) {
        parts = atoi(knob);
    } else {
        const long long mean = (tokens + seqs - 1) / seqs;
        parts = 2 * (dv / bv * hv * seqs) > units ? 1 : (mean + bt - 1) / bt / GDNP_PART_CHUNKS;
    }
    const long long chunks = kt_gdn_prefill_chunks(tokens, seqs, bt);   /* no part without a chunk */
    if (parts > chunks) parts = chunks;
    return parts < 1 ? 1 : parts > GDNP_MAX_PARTS ? GDNP_MAX_PARTS : (int)parts;
}

/* chunks [*begin, *end) of part `part` of `parts` over the grid's chunk bound */
static void gdnp_part_range(long long chunks, int part, int parts, int *begin, int *end)
{
    *begin = (int)(chunks * part / parts);
    *end = (int)(chunks * (part + 1) / parts);
}

/* wy (chunks x key heads; on wave-64 targets and at BT 16 prep first, the same grid:
 * prefill.hip's kFusedPrep), a part at a time where there are parts; then a part at a time the
 * state pass (dv / BV x value heads x sequences; lane 1 where there are parts, each part after
 * wy's) and out (its part's chunks x value heads), each with its LDS at launch */
static int gdnp_launches(const kt_variant *v, const kt_problem *p, int wave_size, int units,
                         kt_op_launch out[KT_OP_MAX_LAUNCHES])
{
    char buf[200];
    if (!v || !p || !out || gdnp_misfit(v, p, units, buf, sizeof buf)) return 0;
    int lds[KT_GDNP_KERNELS];
    kt_gdn_prefill_lds(PAR(v, BT), PAR(v, DK), PAR(v, DV), PAR(v, BV), PAR(v, NW), PAR(v, PF), lds);
    const long long chunks = kt_gdn_prefill_chunks(DIM(p, TOKENS), DIM(p, SEQS), PAR(v, BT));
    const int parts = kt_gdn_prefill_parts(DIM(p, TOKENS), DIM(p, SEQS), DIM(p, DV), DIM(p, HV), PAR(v, BT),
                                           PAR(v, BV), units);
    const char *knob = kt_env_get("KT_GDNP_WY_PARTS");
    const int wy_parts = parts > 1 && !(knob && strcmp(knob, "0") == 0) ? parts : 1;
    const int prep = kt_gdn_prefill_runs_prep(wave_size, PAR(v, BT)), n = prep + wy_parts + 2 * parts;
    kt_op_launch *l = out;
    memset(out, 0, (size_t)n * sizeof *out);
    if (prep) {
        l->suffix = "_prep";
        l->dims = (kt_launch_dims){{(unsigned)chunks, (unsigned)DIM(p, HK), 1}, {(unsigned)(4 * wave_size), 1, 1}, (unsigned)lds[0]};
        l++;
    }
    const int wy = (int)(l - out);
    for (int j = 0; j < wy_parts; j++) {
        int b = 0, e = (int)chunks;
        if (wy_parts > 1) gdnp_part_range(chunks, j, parts, &b, &e);
        l->suffix = "_wy";
        l->dims = (kt_launch_dims){{(unsigned)(e - b), (unsigned)DIM(p, HK), 1}, {(unsigned)(4 * wave_size), 1, 1}, (unsigned)lds[1]};
        if (wy_parts > 1) l->part = j, l->parts = parts;
        l++;
    }
    for (int j = 0; j < parts; j++) {
        int b, e;
        gdnp_part_range(chunks, j, parts, &b, &e);
        l->suffix = "";
        l->dims = (kt_launch_dims){{(unsigned)(DIM(p, DV) / PAR(v, BV)), (unsigned)DIM(p, HV), (unsigned)DIM(p, SEQS)},
                                   {(unsigned)(PAR(v, NW) * wave_size), 1, 1}, (unsigned)lds[2]};
        l->lane = parts > 1;
        /* forks after wy (whole), or waits for wy's own part */
        l->after = parts == 1 ? 0 : wy_parts > 1 ? wy + j + 1 : j == 0 ? wy + 1 : 0;
        l->part = j, l->parts = parts;
        const int state = (int)(l - out);
        l++;
        l->suffix = "_out";
        l->dims = (kt_launch_dims){{(unsigned)(e - b), (unsigned)DIM(p, HV), 1}, {(unsigned)(PAR(v, BT) / 16 * wave_size), 1, 1},
                                   (unsigned)lds[3]};
        l->after = parts > 1 ? state + 1 : 0;
        l->part = j, l->parts = parts;
        l++;
    }
    return n;
}

/* The workspace's regions (abi), each 256-byte aligned, in order q, k, w, u, vn, h, kd, g, c, b;
 * offsets into one buffer for `chunks` chunks, a region the variant does not use empty (PF 5: vn and
 * kd; elsewhere c and b). Returns the total. */
#define GDNP_REGIONS 10
static long long gdnp_regions(const kt_problem *p, int bt, int pf, long long chunks, long long off[GDNP_REGIONS],
                              long long bytes[GDNP_REGIONS])
{
    const long long H = DIM(p, HK), HV = DIM(p, HV), dk = DIM(p, DK), dv = DIM(p, DV);
    const int folded = pf == 5;
    const long long b[GDNP_REGIONS] = {chunks * H * bt * dk * 2,  chunks * H * bt * dk * 2, chunks * HV * bt * dk * 2,
                                       chunks * HV * bt * dv * 2, folded ? 0 : chunks * HV * dv * bt * 2, chunks * HV * dv * dk * 2,
                                       folded ? 0 : chunks * HV * bt * dk * 2, chunks * HV * bt * 4,
                                       folded ? chunks * HV * dk * dk * 2 : 0, folded ? chunks * HV * dv * dk * 2 : 0};
    long long at = 0;
    for (int i = 0; i < GDNP_REGIONS; i++) {
        off[i] = at;
        bytes[i] = b[i];
        at += (b[i] + 255) / 256 * 256;
    }
    return at;
}

/* sized at the buckets' edges: any call the key serves fits */
static long long gdnp_workspace_bytes(const kt_variant *v, const kt_problem *p, int units, int i)
{
    if (i != 0) return 0;
    kt_problem e = kt_problem_snapped(p);
    long long off[GDNP_REGIONS], bytes[GDNP_REGIONS];
    return gdnp_regions(&e, PAR(v, BT), PAR(v, PF), kt_gdn_prefill_chunks(DIM(&e, TOKENS), DIM(&e, SEQS), PAR(v, BT)), off, bytes);
}
/* exactly the call's own chunks: a call below its bucket's edge needs no more */
static long long gdnp_workspace_min_bytes(const kt_variant *v, const kt_problem *p, int units, int i)
{
    if (i != 0) return 0;
    long long off[GDNP_REGIONS], bytes[GDNP_REGIONS];
    return gdnp_regions(p, PAR(v, BT), PAR(v, PF), kt_gdn_prefill_chunks(DIM(p, TOKENS), DIM(p, SEQS), PAR(v, BT)), off, bytes);
}
/* every region is written by the launch before the one that reads it */
static long long gdnp_workspace_poison_bytes(int i, long long bytes) { return i == 0 ? bytes : 0; }
static int gdnp_needs_workspace(const kt_variant *v) { return 1; }
static int gdnp_split_of(const kt_variant *v) { return -1; }

/* ---- arguments ---- */

#define AT_LEAST(field, min) \
    do { if (a->field < (min)) { snprintf(err, errlen, "gdn_prefill: " #field " = %lld, must be >= %lld", \
                                          (long long)a->field, (long long)(min)); return KT_EINVAL; } } while (0)

static int gdnp_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    const kt_gdn_prefill_args *a = args;
    if (!a || !p) { snprintf(err, errlen, "gdn_prefill: NULL %s", a ? "problem" : "args"); return KT_EINVAL; }
    const kt_gdn_layer_view lv = KT_GDN_LAYER_VIEW(a);
    if (kt_gdn_inputs_check("gdn_prefill", &lv, err, errlen)) return KT_EINVAL;
    AT_LEAST(tokens, 1);
    p->op = &kt_op_gdn_prefill;
    for (int i = 0; i < KT_OP_MAX_DIMS; i++) p->dim[i] = 0;
    p->dim[KT_GDNP_D_DK] = a->dk;
    p->dim[KT_GDNP_D_DV] = a->dv;
    p->dim[KT_GDNP_D_HK] = a->num_k_heads;
    p->dim[KT_GDNP_D_HV] = a->num_v_heads;
    p->dim[KT_GDNP_D_KW] = a->conv_kw;
    p->dim[KT_GDNP_D_NORM] = a->norm_weight != NULL;
    p->dim[KT_GDNP_D_VK] = a->state_vk;
    p->dim[KT_GDNP_D_TOKENS] = a->tokens;
    p->dim[KT_GDNP_D_SEQS] = a->batch;
    return KT_OK;
}

/* the regions for the call's own chunks (the kernels index them with the same count); an empty
 * region's pointer NULL */
static void gdnp_bind(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                      const long long *workspace_bytes)
{
    kt_gdn_prefill_args *a = args;
    const long long chunks = kt_gdn_prefill_chunks(a->tokens, a->batch, PAR(v, BT));
    long long off[GDNP_REGIONS], bytes[GDNP_REGIONS];
    gdnp_regions(p, PAR(v, BT), PAR(v, PF), chunks, off, bytes);
    char *base = workspace ? workspace[0] : NULL;
    void *r[GDNP_REGIONS];
    for (int i = 0; i < GDNP_REGIONS; i++) r[i] = base && bytes[i] > 0 ? base + off[i] : NULL;
    a->chunks = (int)chunks;
    a->chunk_begin = 0;
    a->chunk_end = (int)chunks;
    a->ws_q = r[0];
    a->ws_k = r[1];
    a->ws_w = r[2];
    a->ws_u = r[3];
    a->ws_vn = r[4];
    a->ws_h = r[5];
    a->ws_kd = r[6];
    a->ws_g = r[7];
    a->ws_c = r[8];
    a->ws_b = r[9];
}

/* a part's launch (wy, state, out) covers its chunks; the others (prep, a whole wy) all of them */
static void gdnp_bind_launch(void *args, const kt_op_launch *l)
{
    kt_gdn_prefill_args *a = args;
    if (l->parts > 1) {
        gdnp_part_range(a->chunks, l->part, l->parts, &a->chunk_begin, &a->chunk_end);
    } else {
        a->chunk_begin = 0;
        a->chunk_end = a->chunks;
    }
}

/* ---- the law ----
 * Only the state pass is serial: a (sequence, value head, BV columns) walks its chunks in order,
 * two 16 x 16 fragment products of BT x dk x BV a chunk. Lexicographically:
 *  1. its blocks filling the device (min(dv / BV x hv x seqs, units)): one long sequence at 8 value
 *     heads has 8 x dv / BV chains, and a chain's time is the prefill's;
 *  2. the chunk BT: no larger than the sequences' mean length (past it a chunk is mostly padding,
 *     which the chunk-parallel launches compute: 64 sequences of 1 token took 1.37x at BT 64), then
 *     the chunk-parallel launches' blocks (chunks x hv) filling the device (1,024 tokens at hv 8:
 *     BT 64's 128 blocks took 1.08x BT 32's 256 on 132 units), then the largest (fewer serial
 *     steps: 4,096 tokens, BT 32 took 1.22x BT 64);
 *  3. the next chunk's loads in flight: PF 4 (the operands as fragments, the next chunk's all in a
 *     second set of registers) first, timed 9% under PF 1 on an H200 (s29; AMD untimed: where its
 *     registers spill the sweep excludes it and PF 1 serves); then PF 1, a chunk costing
 *     its compute rather than its latency; PF 2 (tiles also in LDS ahead, half the barriers) and
 *     PF 3 (fragments, one set) rank as PF 1: timed no faster, the later keys decide; PF 5 (the
 *     step folded into one product) ranks with PF 0: timed 41% slower than PF 4 (s39). Where the
 *     problem's chains at the narrowest value tile (16 columns) fill the device twice over, any PF
 *     past 0 ranks alike: PF 4's registers (one block a unit) lost to wider, more resident forms
 *     there (the tp 4 sweep: 4,096 tokens x 32 sequences, BV 16 PF 4 +11.9% over BV 64 PF 2);
 *  4. the widest BV among those (each block re-reads the chunk's w^T and kd: fewer blocks, less of it);
 *  5. resident threads a compute unit, then fewer registers. */
#define GDNP_LAW_KEYS 8
#define GDNP_NARROWEST_BV 16   /* a warp's value tile: the recipe's narrowest BV */
_Static_assert(GDNP_LAW_KEYS <= KT_OP_LEX_MAX_KEYS, "the lexicographic pick's key array");

static void gdnp_law_key(const law_device *d, const kt_candidate *c, const kt_problem *p, long long key[GDNP_LAW_KEYS])
{
    const kt_variant *v = &c->v;
    const int wave = d && d->wave_size > 0 ? d->wave_size : 32;
    const long long units = d && d->compute_units > 0 ? d->compute_units : 1;
    const long long blocks = DIM(p, DV) / PAR(v, BV) * DIM(p, HV) * DIM(p, SEQS);
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    /* the chunk: the mean sequence's length, and the chunks of that length the launches run (not
     * kt_gdn_prefill_chunks, the grid's bound for any mix of lengths, whose spare blocks exit) */
    const long long seqs = DIM(p, SEQS) > 0 ? DIM(p, SEQS) : 1, bt = PAR(v, BT);
    const long long mean = (DIM(p, TOKENS) + seqs - 1) / seqs;
    const long long par_blocks = seqs * ((mean + bt - 1) / bt) * DIM(p, HV);
    int i = 0;
    key[i++] = blocks < units ? blocks : units;
    key[i++] = -(bt > mean ? bt - mean : 0);
    key[i++] = par_blocks < units ? par_blocks : units;
    key[i++] = bt;
    const long long chains16 = DIM(p, DV) / GDNP_NARROWEST_BV * DIM(p, HV) * seqs;
    const int pf = PAR(v, PF) == 5 ? 0 : PAR(v, PF);
    key[i++] = chains16 >= 2 * units ? pf > 0 : pf == 4 ? 2 : pf > 1 ? 1 : pf;
    key[i++] = PAR(v, BV);
    key[i++] = occ * PAR(v, NW) * wave;
    key[i++] = -(long long)c->regs;
}

static int gdnp_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    return kt_op_lex_pick(d, c, n, p, gdnp_misfit, gdnp_law_key, GDNP_LAW_KEYS);
}

/* ---- verification ----
 * A set: seqs sequences whose lengths sum to the tokens (weights 1 + (7i mod 5), so none is a
 * multiple of the chunk where the tokens allow), slots scattered in a pool of seqs + 2 (slots 0
 * and seqs + 1 belong to nobody), every third sequence from the second on without an initial
 * state. */
enum { B_QKV, B_ZAB, B_PAR, B_META, B_CONV, B_SSM, B_OUT, B_COUNT };

static long long gdnp_seq_len(const kt_problem *p, int i)
{
    const long long T = DIM(p, TOKENS), S = DIM(p, SEQS);
    long long wsum = 0, before = 0;
    for (int j = 0; j < S; j++) wsum += 1 + (7 * j) % 5;
    for (int j = 0; j < i; j++) before += 1 + (7 * j) % 5;
    const long long lo = (T - S) * before / wsum, hi = (T - S) * (before + 1 + (7 * i) % 5) / wsum;
    return 1 + (i == S - 1 ? T - S - lo : hi - lo);
}
static int gdnp_seq_slot(const kt_problem *p, int i) { return (int)DIM(p, SEQS) - i; }
static int gdnp_seq_init(int i) { return i % 3 != 1; }
static long long gdnp_slots(const kt_problem *p) { return DIM(p, SEQS) + 2; }
static long long gdnp_conv_slot(const kt_problem *p) { return gdnp_conv_dim(p) * KT_GDN_VERIFY_CONV_LEN; }
static long long gdnp_ssm_slot(const kt_problem *p) { return DIM(p, HV) * DIM(p, DK) * DIM(p, DV); }
static long long gdnp_out_elems(const kt_problem *p) { return DIM(p, TOKENS) * DIM(p, HV) * DIM(p, DV); }
static long long gdnp_par_bytes(const kt_problem *p)
{
    return kt_gdn_inputs_param_bytes(DIM(p, HV), gdnp_conv_dim(p), DIM(p, KW), DIM(p, DV));
}

static int gdnp_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const long long t = DIM(p, TOKENS), s = DIM(p, SEQS), hv = DIM(p, HV), dv = DIM(p, DV);
    out[B_QKV] = (kt_op_buffer){"qkv", KT_BUF_IN, (size_t)(t * gdnp_conv_dim(p) * 2)};
    out[B_ZAB] = (kt_op_buffer){"z,a,b", KT_BUF_IN, (size_t)(t * hv * (dv + 2) * 2)};
    out[B_PAR] = (kt_op_buffer){"A_log,dt_bias,conv_weight,norm_weight", KT_BUF_IN, (size_t)gdnp_par_bytes(p)};
    out[B_META] = (kt_op_buffer){"query_start_loc,state_indices,has_initial_state", KT_BUF_IN, (size_t)((3 * s + 1) * 4)};
    out[B_CONV] = (kt_op_buffer){"conv_state", KT_BUF_INOUT, (size_t)(gdnp_slots(p) * gdnp_conv_slot(p) * 2)};
    out[B_SSM] = (kt_op_buffer){"ssm_state", KT_BUF_INOUT, (size_t)(gdnp_slots(p) * gdnp_ssm_slot(p) * 4)};
    out[B_OUT] = (kt_op_buffer){"out", KT_BUF_OUT, (size_t)(gdnp_out_elems(p) * 2)};
    return B_COUNT;
}

/* as gdn_decode's sets (op_gdn.c): the state decays 5 to 50% a token, S in [-1, 1) */
static void gdnp_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    const int dt = p->dtype, fp16 = dt == GDNP_FP16;
    switch (i) {
    case B_QKV:
    case B_ZAB:
    case B_CONV:
        for (size_t j = 0; j < bytes / 2; j++) ((uint16_t *)host)[j] = kt_rand_input(fp16, rng);
        break;
    case B_PAR:
        kt_gdn_inputs_fill_params(host, DIM(p, HV), gdnp_conv_dim(p), DIM(p, KW), DIM(p, DV), fp16, rng);
        break;
    case B_META: {
        int32_t *m = host;
        const int s = (int)DIM(p, SEQS);
        m[0] = 0;
        for (int q = 0; q < s; q++) {
            m[q + 1] = m[q] + (int32_t)gdnp_seq_len(p, q);
            m[s + 1 + q] = gdnp_seq_slot(p, q);
            m[2 * s + 1 + q] = gdnp_seq_init(q);
        }
        break;
    }
    case B_SSM:
        for (size_t j = 0; j < bytes / 4; j++) ((float *)host)[j] = (float)kt_gdn_inputs_uniform(rng, -1.0, 1.0);
        break;
    default:
        memset(host, 0, bytes);
    }
}

static void gdnp_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    kt_gdn_prefill_args *a = args;
    memset(a, 0, sizeof *a);
    const long long t = DIM(p, TOKENS), hv = DIM(p, HV), dv = DIM(p, DV), s = DIM(p, SEQS);
    a->qkv = buffers[B_QKV];
    a->z = buffers[B_ZAB];
    a->a = (const uint16_t *)buffers[B_ZAB] + t * hv * dv;
    a->b = (const uint16_t *)buffers[B_ZAB] + t * hv * (dv + 1);
    kt_gdn_inputs_bind_params(buffers[B_PAR], hv, gdnp_conv_dim(p), DIM(p, KW), (int)DIM(p, NORM), &a->A_log, &a->dt_bias,
                              &a->conv_weight, &a->norm_weight);
    a->conv_state = buffers[B_CONV];
    a->ssm_state = buffers[B_SSM];
    a->query_start_loc = buffers[B_META];
    a->state_indices = (const int *)buffers[B_META] + s + 1;
    a->has_initial_state = (const int *)buffers[B_META] + 2 * s + 1;
    a->out = buffers[B_OUT];
    a->conv_slot_stride = gdnp_conv_slot(p);
    a->ssm_slot_stride = gdnp_ssm_slot(p);
    a->conv_chan_stride = KT_GDN_VERIFY_CONV_LEN;
    a->conv_col_stride = 1;
    a->qkv_stride = (int)gdnp_conv_dim(p);
    a->z_stride = (int)(hv * dv);
    a->ab_stride = (int)hv;
    a->out_stride = (int)(hv * dv);
    a->batch = (int)s;
    a->num_k_heads = (int)DIM(p, HK);
    a->num_v_heads = (int)hv;
    a->dk = (int)DIM(p, DK);
    a->dv = (int)dv;
    a->conv_kw = (int)DIM(p, KW);
    a->tokens = (int)t;
    a->state_vk = (int)DIM(p, VK);
    a->scale = (float)(1.0 / sqrt((double)DIM(p, DK)));
    a->norm_eps = 1e-6f;
}

/* out (every token), then the conv and ssm pools whole */
static size_t gdnp_ref_count(const kt_problem *p)
{
    return (size_t)(gdnp_out_elems(p) + gdnp_slots(p) * (gdnp_conv_slot(p) + gdnp_ssm_slot(p)));
}

static void gdnp_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    const int fp16 = p->dtype == GDNP_FP16;
    kt_gdn_prefill_args a;
    gdnp_args_for(&a, p, host);
    const long long no = gdnp_out_elems(p), nc = gdnp_slots(p) * gdnp_conv_slot(p), ns = gdnp_slots(p) * gdnp_ssm_slot(p);
    double *out = ref, *conv = ref + no, *ssm = conv + nc;
    for (long long i = 0; i < no; i++) out[i] = 0.0;
    for (long long i = 0; i < nc; i++) conv[i] = kt_gdn_ref_val(((const uint16_t *)host[B_CONV])[i], fp16);
    for (long long i = 0; i < ns; i++) ssm[i] = ((const float *)host[B_SSM])[i];
    kt_gdn_ref_pools pools = {conv, ssm, NULL, (int)DIM(p, VK)};
    kt_gdn_ref_prefill(&a, KT_GDN_VERIFY_CONV_LEN, fp16, &pools, out);
}

/* out and the fp32 state against the dtype's bound, the conv state (copies of inputs, exact)
 * 100x tighter: the worst of the three is what error_bound judges */
static double gdnp_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    const int fp16 = p->dtype == GDNP_FP16;
    const long long no = gdnp_out_elems(p), nc = gdnp_slots(p) * gdnp_conv_slot(p), ns = gdnp_slots(p) * gdnp_ssm_slot(p);
    const double eo = kt_gdn_ref_rel(ref, host[B_OUT], no, 0, fp16, NULL, 1);
    const double ec = kt_gdn_ref_rel(ref + no, host[B_CONV], nc, 0, fp16, NULL, 1);
    const double es = kt_gdn_ref_rel(ref + no + nc, host[B_SSM], ns, 1, fp16, NULL, 1);
    if (isnan(eo) || isnan(ec) || isnan(es)) return NAN;
    double e = eo > es ? eo : es;
    if (100.0 * ec > e) e = 100.0 * ec;
    return e;
}

/* Every product's operands are rounded to the dtype (q, k, w, u, vn, h, the decayed q k^T) where
 * the float64 truth keeps them exact: the host emulation (tests/unit/test_gdn_prefill_emu.cpp)
 * measured out and state within 7e-3 (max norm) in bf16 over 70-token sequences; a wrong chunk,
 * head or mask is an O(1) error. */
static double gdnp_error_bound(int dtype) { return dtype == GDNP_FP16 ? 5e-3 : 2e-2; }

/* compulsory: the token rows (qkv, z, a, b in; out), each sequence's state in and out and its
 * conv history */
static double gdnp_bytes_moved(const kt_problem *p)
{
    const double t = (double)DIM(p, TOKENS), s = (double)DIM(p, SEQS), hv = (double)DIM(p, HV);
    const double dk = (double)DIM(p, DK), dv = (double)DIM(p, DV), cdim = (double)gdnp_conv_dim(p);
    return t * (cdim + hv * (2.0 * dv + 2.0)) * 2.0 + s * (2.0 * hv * dk * dv * 4.0 + 2.0 * cdim * (DIM(p, KW) - 1) * 2.0);
}

/* the chunked form's products at BT 64 (a chunk of a value head: A's k k^T, w and u, vn and the
 * state update, the output's q k^T, q h and P vn), 2 flops a multiply-add */
static double gdnp_flops(const kt_problem *p)
{
    const double t = (double)DIM(p, TOKENS), hv = (double)DIM(p, HV), dk = (double)DIM(p, DK), dv = (double)DIM(p, DV);
    const double bt = 64.0;
    const double per_token = bt * dk + bt * (dk + dv) + 2.0 * dk * dv + bt * dk + dk * dv + bt * dv;
    return 2.0 * t * hv * per_token;
}

/* The model's GDN layers at this rank: one problem (norm on, the state in the serving vLLM's layout: KT_GDN_STATE), its tokens
 * swept to 16384 (vLLM's default max_num_batched_tokens is at most that). */
static int gdnp_from_model(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen)
{
    if (!m->gdn.layers || max < 1) return 0;
    const int dt = kt_op_dtype_index(&kt_op_gdn_prefill, m->dtype);
    if (dt < 0) return snprintf(err, errlen, "gdn_prefill: dtype '%s' (bf16 or fp16)", m->dtype ? m->dtype : "?"), -1;
    const int vk = kt_gdn_inputs_model_vk("gdn_prefill", err, errlen);
    if (vk < 0) return -1;
    memset(&out[0], 0, sizeof out[0]);
    kt_problem *p = &out[0].p;
    p->op = &kt_op_gdn_prefill;
    p->dtype = dt;
    p->dim[KT_GDNP_D_DK] = m->gdn.key_dim;
    p->dim[KT_GDNP_D_DV] = m->gdn.value_dim;
    p->dim[KT_GDNP_D_HK] = m->gdn.k_heads_per_rank;
    p->dim[KT_GDNP_D_HV] = m->gdn.v_heads_per_rank;
    p->dim[KT_GDNP_D_KW] = m->gdn.conv_kw;
    p->dim[KT_GDNP_D_NORM] = 1;
    p->dim[KT_GDNP_D_VK] = vk;
    p->dim[KT_GDNP_D_TOKENS] = 64;
    p->dim[KT_GDNP_D_SEQS] = 1;
    out[0].limit[KT_GDNP_D_TOKENS] = 16384;
    snprintf(out[0].layers, sizeof out[0].layers, "gdn");
    out[0].calls = m->gdn.layers;
    return 1;
}

const kt_op kt_op_gdn_prefill = {
    .name = "gdn_prefill",
    .summary = "gated delta-net prefill, chunked: conv, gates, WY form, serial state pass, out, gated norm",
    .dtypes = gdnp_dtypes,
    .ndtypes = 2,
    .dims = gdnp_dims,
    .ndims = KT_GDNP_NDIMS,
    .decode_edge = 0,   /* every tokens bucket is prefill */
    .params = gdnp_params,
    .nparams = KT_GDNP_NPARAMS,
    .args_size = sizeof(kt_gdn_prefill_args),
    .launches = gdnp_launches,
    .misfit = gdnp_misfit,
    .nworkspaces = 1,
    .workspace_names = gdnp_workspaces,
    .workspace_bytes = gdnp_workspace_bytes,
    /* 64 MiB a stream slot: a call nobody tuned of about 4K tokens at 8 value heads (BT 64); larger
     * ones need a tuned selection at their bucket, or ktrt_options.workspace_bytes */
    .workspace_floor_bytes = 64LL << 20,
    .workspace_min_bytes = gdnp_workspace_min_bytes,
    .workspace_poison_bytes = gdnp_workspace_poison_bytes,
    .needs_workspace = gdnp_needs_workspace,
    .split_of = gdnp_split_of,
    .problem_of_args = gdnp_problem_of_args,
    .bind = gdnp_bind,
    .bind_launch = gdnp_bind_launch,
    .law_pick = gdnp_law_pick,
    .prune = NULL,
    .buffers = gdnp_buffers,
    .fill = gdnp_fill,
    .args_for = gdnp_args_for,
    .ref_count = gdnp_ref_count,
    .ref_cpu = gdnp_ref_cpu,
    .ref_gpu_name = NULL,
    .ref_gpu_launch = NULL,
    .rel_error = gdnp_rel_error,
    .error_bound = gdnp_error_bound,
    .bytes_moved = gdnp_bytes_moved,
    .flops = gdnp_flops,
    .cold_decode = 0,
    .from_model = gdnp_from_model,
};
