/* op_attn_prefill.c: the paged prefill attention descriptor (op "attn_prefill",
 * runtime/op_attn_prefill.h): key `attn_prefill <dt> d= g= hkv= bs= win= cap= sink= qlen<= batch<=
 * ctx<=`, recipe templates/attn/prefill.lua, template templates/attn/prefill.hip, ABI
 * templates/abi/attn.h. Split-KV where the grid is short of the device (a chunk over a long
 * prefix): segments into a workspace of partials and a second launch merging them. What it shares
 * with attn_decode (checks, value generators, the float64 reference, the error bound) is in
 * attn_common.c. No model problems yet (from_model NULL): tune derives none until the serving
 * path asks for prefill keys. Pure functions: no I/O, no state, no GPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "op_attn_prefill.h"
#include "attn_common.h"
#include "../templates/abi/attn_ref.h"
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "../tuner/random_inputs.h"

static const int prefill_qlen_edges[] = {16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
static const int prefill_batch_edges[] = {1, 2, 4, 8, 16, 32, 64};
static const int prefill_ctx_edges[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
#define NE(a) ((int)(sizeof a / sizeof a[0]))

static const kt_op_dim prefill_dims[KT_PREFILL_NDIMS] = {
    KT_ATTN_STATIC_DIMS,
    {"qlen", 1, prefill_qlen_edges, NE(prefill_qlen_edges), 0},
    {"batch", 1, prefill_batch_edges, NE(prefill_batch_edges), 0},
    {"ctx", 1, prefill_ctx_edges, NE(prefill_ctx_edges), 0},
};

static const kt_op_param prefill_params[KT_PREFILL_NPARAMS] = {
    {"D", 0, 16}, {"BM", 0, 16}, {"BN", 0, 16}, {"NW", 0, 1}, {"WD", 1, 1}, {"QL", 0, 0}, {"SEGMAX", 1, 1}, {"ST", 1, 1},
    {"PD", 0, 0},
};
static const char *const prefill_workspaces[] = {"split-KV partials"};

/* a segment covers at least this many KV tiles (decode's MIN_TPS, runtime/op_attn.c) */
#define PREFILL_SPLIT_MIN_TILES 2

#define GRID_Y_MAX 65535LL
#define GRID_X_MAX 2147483647LL
#define DIM(p, n) ((p)->dim[KT_PREFILL_D_##n])
#define PAR(v, n) ((v)->p[KT_PREFILL_P_##n])

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
static long long prefill_heads(const kt_problem *p) { return DIM(p, G) * DIM(p, HKV); }

/* Blocks a kv head's rows take in the longest sequence (g * qlen rows, BM a block). */
static long long prefill_row_blocks(const kt_variant *v, const kt_problem *p)
{
    return ceil_div(DIM(p, G) * DIM(p, QLEN), PAR(v, BM));
}

/* The split: none while the grid (kv heads x row blocks x sequences) has a block for every
 * compute unit (each block then streams its keys alone, as FlashAttention-2 runs prefill); short
 * of it (a chunk of few tokens over a long prefix, one sequence of a small group), as many
 * segments as fill the resident slots (compute units x the kernel's blocks a unit), each of at
 * least PREFILL_SPLIT_MIN_TILES tiles of the longest sequence's keys, at most SEGMAX. */
static long long prefill_segments(const kt_variant *v, const kt_problem *p, int units)
{
    const long long u = units > 0 ? units : 1, occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long blocks = DIM(p, HKV) * prefill_row_blocks(v, p) * DIM(p, BATCH);
    if (PAR(v, SEGMAX) <= 1 || blocks >= u) return 1;
    long long s = u * occ / (blocks > 0 ? blocks : 1);
    const long long by_tiles = DIM(p, CTX) / (PREFILL_SPLIT_MIN_TILES * PAR(v, BN));
    if (s > by_tiles) s = by_tiles;
    if (s > PAR(v, SEGMAX)) s = PAR(v, SEGMAX);
    return s < 1 ? 1 : s;
}

/* ---- geometry ---- */

static const char *prefill_misfit(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len)
{
    if (PAR(v, D) != DIM(p, D)) {
        snprintf(buf, len, "compiled for head size %d, the problem's is d=%lld", PAR(v, D), DIM(p, D));
        return buf;
    }
    if (PAR(v, BM) < 16 || PAR(v, BM) % 16 || PAR(v, BN) < 16 || PAR(v, NW) < 1 || PAR(v, WD) < 1 || PAR(v, NW) % PAR(v, WD)) {
        snprintf(buf, len, "bad variant: BM=%d BN=%d NW=%d WD=%d", PAR(v, BM), PAR(v, BN), PAR(v, NW), PAR(v, WD));
        return buf;
    }
    if (DIM(p, HKV) * prefill_row_blocks(v, p) > GRID_X_MAX || DIM(p, BATCH) > GRID_Y_MAX) {
        snprintf(buf, len, "hkv=%lld qlen=%lld batch=%lld over the grid limits", DIM(p, HKV), DIM(p, QLEN), DIM(p, BATCH));
        return buf;
    }
    if (PAR(v, SEGMAX) > GRID_Y_MAX) {
        snprintf(buf, len, "bad variant: SEGMAX=%d over the grid's %lld segments", PAR(v, SEGMAX), GRID_Y_MAX);
        return buf;
    }
    return NULL;
}

/* grid (kv heads x row blocks of the longest sequence, sequences): see prefill.hip's header */
static int prefill_launches(const kt_variant *v, const kt_problem *p, int wave_size, int units,
                            kt_op_launch out[KT_OP_MAX_LAUNCHES])
{
    char buf[160];
    if (!v || !p || !out || prefill_misfit(v, p, units, buf, sizeof buf)) return 0;
    const long long segs = prefill_segments(v, p, units);
    memset(out, 0, 2 * sizeof *out);
    out[0].suffix = "";
    out[0].dims = (kt_launch_dims){{(unsigned)(DIM(p, HKV) * prefill_row_blocks(v, p)), (unsigned)DIM(p, BATCH), (unsigned)segs},
                                   {(unsigned)(PAR(v, NW) * wave_size), 1, 1},
                                   /* all of the kernel's LDS is taken at launch (prefill.lua) */
                                   (unsigned)(v->lds_bytes > 0 ? v->lds_bytes : 0)};
    if (segs <= 1) return 1;
    /* the merge over every (token, head) row the buckets allow; rows past the tokens exit */
    out[1].suffix = "_reduce";
    out[1].dims = kt_attn_reduce_launch(DIM(p, BATCH) * DIM(p, QLEN) * prefill_heads(p), DIM(p, D), units);
    out[1].early = PAR(v, PD) > 0;   /* as decode's (runtime/op_attn.c) */
    return 2;
}

/* (token, segment) pairs of partials any problem of p's buckets can need: the split fills the
 * resident slots only, so tokens x segments <= qlen x batch x TARGET / (hkv x row blocks x batch)
 * <= TARGET x BM / (g x hkv), whatever the lengths below the bucket's edges; and at most tokens x
 * SEGMAX */
static long long prefill_workspace_bytes(const kt_variant *v, const kt_problem *p, int units, int i)
{
    if (i != 0 || PAR(v, SEGMAX) <= 1) return 0;
    const long long qlen = kt_op_bucket(p->op, KT_PREFILL_D_QLEN, DIM(p, QLEN));
    const long long batch = kt_op_bucket(p->op, KT_PREFILL_D_BATCH, DIM(p, BATCH));
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long target = (long long)(units > 0 ? units : 1) * occ;
    const long long by_law = ceil_div(target * PAR(v, BM), prefill_heads(p));
    const long long by_ceiling = qlen * batch * PAR(v, SEGMAX);
    return (by_law < by_ceiling ? by_law : by_ceiling) * kt_attn_partial_bytes(prefill_heads(p), DIM(p, D));
}
/* every partial is written before the reduce reads it */
static long long prefill_workspace_poison_bytes(int i, long long bytes) { return i == 0 ? bytes : 0; }
/* a split variant uses the partials when it has them, and runs one segment without (bind) */
static int prefill_needs_workspace(const kt_variant *v) { return PAR(v, SEGMAX) > 1; }
static long long prefill_workspace_min_bytes(const kt_variant *v, const kt_problem *p, int units, int i) { return 0; }
static int prefill_split_of(const kt_variant *v) { return PAR(v, SEGMAX); }

/* ---- arguments ---- */

static int prefill_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    return kt_attn_problem_of_args(&kt_op_attn_prefill, args, p, err, errlen);
}

/* the launch geometry's segment count, fewer where the caller's workspace is smaller */
static void prefill_bind(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                         const long long *workspace_bytes)
{
    kt_attn_bind_split(args, prefill_segments(v, p, units), workspace, workspace_bytes);
}

/* ---- the law ----
 * A footprint rule, lexicographically among the candidates compiled for the head size, refitted on
 * the H200's sweeps of the register-P kernel (206 keys, bench/NOTES.md, "sixth session"). First,
 * not most of a block's rows idle in the longest sequence (g * qlen rows against BM: a 64-row
 * block serves a short prompt that a 128-row one would half waste); then the fewest d-slices (WD:
 * the slabs' LDS traffic and a barrier a tile cost 20-50% wherever a WD 1 variant exists). Then
 * it depends on whether the grid (kv heads x row blocks x sequences) reaches one block a compute
 * unit:
 *   - short of it, every block streams its keys (the whole context, or its segment where the
 *     split fills the slots) and the time is the block's chain a tile: the smaller BM (more blocks), the larger BN (a tile's fixed steps, barriers and
 *     row reductions, over more keys), the more resident blocks;
 *   - else whether the blocks fill the resident slots (compute units x occupancy; 90% counts as
 *     full: a second wave of an occupancy-1 kernel is no better than 97% of an occupancy-2
 *     one's), the larger BM (each K/V tile read from L2 serves more rows), the most keys in
 *     flight a compute unit (occupancy x BN, x ST - 1 for a ring, whose copies fly ST - 1 tiles
 *     ahead all through the loop: on the H200 a 32-key ring of 3 stages is 1.1-1.6% faster than
 *     the 64-key tile at d 256, bench/NOTES.md, eleventh session), then the most rows a warp (each
 *     K / V fragment read from LDS serves that many 16-row tiles).
 * Then more warps; then the eager form (QL 1, WD 1, one 16-row tile a warp: prefill.hip's kEager,
 * which works out its copies' addresses before each barrier and rescales O with no branch: on the
 * H200 at d256, BM128 BN64 NW8 QL1 ST1 took 4-9% off BM128 BN32 NW8 QL0 ST3 at equal keys in
 * flight, bench/NOTES.md, fifteenth session); then Q in registers (QL 0: fewer LDS reads at equal
 * residency), then the fewer stages (LDS for nothing where the keys in flight tie), then the first
 * candidate. */
#define PREFILL_LAW_KEYS 10
#define PREFILL_LAW_FULL 900          /* per mille of the resident slots that counts as full */

static void prefill_law_key(const law_device *d, const kt_candidate *c, const kt_problem *p, long long key[PREFILL_LAW_KEYS])
{
    const kt_variant *v = &c->v;
    const long long rb = prefill_row_blocks(v, p);
    const long long idle = rb * PAR(v, BM) - DIM(p, G) * DIM(p, QLEN);
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long units = d && d->compute_units > 0 ? d->compute_units : 1;
    const long long blocks = DIM(p, HKV) * rb * DIM(p, BATCH);
    const long long tiles_a_warp = (long long)PAR(v, BM) * PAR(v, WD) / (16LL * PAR(v, NW));
    int i = 0;
    key[i++] = -(2 * idle > rb * PAR(v, BM));
    key[i++] = -PAR(v, WD);
    if (blocks < units) {
        key[i++] = -PAR(v, BM);
        key[i++] = PAR(v, BN);
        key[i++] = occ;
        key[i++] = 0;
    } else {
        const long long fill = blocks >= units * occ ? 1000 : blocks * 1000 / (units * occ);
        key[i++] = fill >= PREFILL_LAW_FULL ? 1000 : fill;
        key[i++] = PAR(v, BM);
        key[i++] = occ * PAR(v, BN) * (PAR(v, ST) > 1 ? PAR(v, ST) - 1 : 1);
        key[i++] = tiles_a_warp;
    }
    key[i++] = PAR(v, NW);
    key[i++] = PAR(v, QL) == 1 && PAR(v, WD) == 1 && tiles_a_warp == 1;
    key[i++] = -PAR(v, QL);
    key[i++] = -PAR(v, ST);
}

static int prefill_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    return kt_op_lex_pick(d, c, n, p, prefill_misfit, prefill_law_key, PREFILL_LAW_KEYS);
}

/* ---- verification sets ----
 * batch sequences of mixed lengths (kt_prefill_qlen_of / kt_prefill_seq_len_of: each a cached
 * prefix and its new tokens, the query lengths varying, rarely a multiple of any tile), blocks
 * scattered over a cache with spare blocks. The metadata is a function of the problem alone (a
 * fixed seed); the data (q, K, V, sinks) comes from the caller's rng. */
#define PREFILL_META_SEED 0x5eedf111ULL

static uint64_t prefill_draw(int i, int salt, long long lo, long long hi)
{
    uint64_t s = PREFILL_META_SEED + (uint64_t)i * 0x9E3779B97F4A7C15ull + (uint64_t)salt;
    return (uint64_t)lo + kt_rand_splitmix64(&s) % (uint64_t)(hi - lo + 1);
}

int kt_prefill_qlen_of(const kt_problem *p, int i)
{
    const long long q = DIM(p, QLEN);
    if (i == 0) return (int)q;
    return (int)prefill_draw(i, 1, q / 2 > 1 ? q / 2 : 1, q);
}

int kt_prefill_seq_len_of(const kt_problem *p, int i)
{
    const long long qlen = kt_prefill_qlen_of(p, i), ctx = DIM(p, CTX);
    const long long top = ctx > qlen ? ctx : qlen;
    if (i == 0) return (int)top;
    if (i == 1) return (int)qlen;                        /* a fresh prompt: nothing cached */
    const long long lo = ctx / 2 > qlen ? ctx / 2 : qlen;
    return (int)prefill_draw(i, 2, lo, top);
}

typedef struct prefill_meta {
    int batch, bs, max_len, max_blocks, num_blocks;
    long long tokens;
} prefill_meta;

static prefill_meta prefill_meta_of(const kt_problem *p)
{
    prefill_meta m;
    m.batch = (int)DIM(p, BATCH);
    m.bs = (int)DIM(p, BS);
    m.max_len = kt_prefill_seq_len_of(p, 0);
    m.max_blocks = (int)ceil_div(m.max_len, m.bs);
    long long blocks = 0;
    m.tokens = 0;
    for (int i = 0; i < m.batch; i++) {
        blocks += ceil_div(kt_prefill_seq_len_of(p, i), m.bs);
        m.tokens += kt_prefill_qlen_of(p, i);
    }
    m.num_blocks = (int)(blocks + blocks / 8 + 1);   /* spare blocks: a table is not the identity */
    return m;
}

enum { B_Q, B_OUT, B_K, B_V, B_BT, B_LENS, B_QSL, B_SINKS, B_COUNT };
/* the order attn_common.c's verification sets, reference and problem_of_args use */
_Static_assert((int)B_SINKS == (int)KT_ATTN_B_SINKS && (int)B_QSL == (int)KT_ATTN_B_QSL && (int)B_BT == (int)KT_ATTN_B_BT, "attn_common.h's buffer order");
_Static_assert((int)KT_PREFILL_D_D == (int)KT_ATTN_DIM_D && (int)KT_PREFILL_D_SINK == (int)KT_ATTN_DIM_SINK && (int)KT_PREFILL_D_QLEN == (int)KT_ATTN_DIM_ROWS && (int)KT_PREFILL_D_CTX == (int)KT_ATTN_DIM_CTX,
               "attn_common.h's dimension order");

static int prefill_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const prefill_meta m = prefill_meta_of(p);
    return kt_attn_set_buffers(p, (int)m.tokens, prefill_heads(p) * DIM(p, D), m.num_blocks, m.max_blocks, out);
}

static void prefill_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    const prefill_meta m = prefill_meta_of(p);
    int32_t *w = host;
    switch (i) {
    case B_Q: kt_attn_fill_values(p->dtype, 0, host, bytes, rng); break;
    case B_K:
    case B_V: kt_attn_fill_values(p->dtype, 1, host, bytes, rng); break;
    case B_LENS:
        for (int s = 0; s < m.batch; s++) w[s] = kt_prefill_seq_len_of(p, s);
        break;
    case B_QSL:
        w[0] = 0;
        for (int s = 0; s < m.batch; s++) w[s + 1] = w[s] + kt_prefill_qlen_of(p, s);
        break;
    case B_BT: {
        int32_t *lens = malloc((size_t)m.batch * sizeof *lens);
        if (!lens) { memset(host, 0xff, bytes); break; }
        for (int s = 0; s < m.batch; s++) lens[s] = kt_prefill_seq_len_of(p, s);
        kt_attn_deal_blocks(lens, m.batch, m.bs, m.max_blocks, m.num_blocks, PREFILL_META_SEED ^ 0xb10cULL, host);
        free(lens);
        break;
    }
    case B_SINKS: kt_attn_fill_sinks(host, bytes / 4, rng); break;
    default: memset(host, 0, bytes);
    }
}

/* the set's struct: q contiguous, one segment */
static void prefill_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    const prefill_meta m = prefill_meta_of(p);
    kt_attn_args *a = args;
    kt_attn_set_args(a, p, buffers, (int)m.tokens, m.max_blocks, m.max_len, prefill_heads(p) * DIM(p, D));
    a->num_segments = 1;
}

static size_t prefill_ref_count(const kt_problem *p)
{
    return (size_t)prefill_meta_of(p).tokens * (size_t)prefill_heads(p) * (size_t)DIM(p, D);
}

static void prefill_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    kt_attn_ref_cpu(p, prefill_meta_of(p).max_blocks, (long long)prefill_heads(p) * DIM(p, D), host, ref);
}

/* attn_decode's GPU reference serves prefill as it is (attn_common.c): the set's own struct */
static kt_launch_dims prefill_ref_gpu_launch(const kt_problem *p, void *args, void *const *buffers, void *ref_out)
{
    kt_attn_ref_args *ra = args;
    memset(ra, 0, sizeof *ra);
    prefill_args_for(&ra->a, p, buffers);
    return kt_attn_ref_gpu_dims(ra, prefill_meta_of(p).tokens, prefill_heads(p), ref_out);
}

/* Where `kt worker --check-reference` holds the GPU reference to ref_cpu on prefill's sets,
 * every dtype: (d, g, hkv, bs, win, cap, sink, qlen, batch, ctx). Plain prefill (ctx = qlen);
 * chunked prefill over a cached prefix; a window shorter than the prompt with soft-cap and
 * sinks; head size 256 with qlen not a multiple of anything. */
static const long long prefill_ref_checks[][KT_OP_MAX_DIMS] = {
    {128, 4, 2, 16, 0, 0, 0, 100, 2, 100},
    {64, 8, 1, 16, 0, 0, 0, 64, 3, 900},
    {128, 2, 2, 16, 48, 30, 1, 200, 2, 600},
    {256, 2, 1, 16, 0, 0, 0, 37, 2, 300},
};

static double prefill_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    return kt_attn_rel_error(p->dtype, host[B_OUT], prefill_ref_count(p), ref);
}

/* Keys a query token at position pos sees: pos + 1, or the window. */
static double prefill_seen(long long pos, long long win) { return (double)(win > 0 && win < pos + 1 ? win : pos + 1); }

/* compulsory: every key some row sees, K and V once per kv head, and q and out */
static double prefill_bytes_moved(const kt_problem *p)
{
    const prefill_meta m = prefill_meta_of(p);
    const long long win = DIM(p, WIN);
    double keys = 0.0;
    for (int s = 0; s < m.batch; s++) {
        const long long len = kt_prefill_seq_len_of(p, s), qlen = kt_prefill_qlen_of(p, s);
        keys += (double)(win > 0 && win + qlen - 1 < len ? win + qlen - 1 : len);
    }
    const double esz = kt_attn_kv8(p->dtype) ? 1.0 : 2.0;
    return 2.0 * keys * (double)DIM(p, HKV) * (double)DIM(p, D) * esz +
           2.0 * 2.0 * (double)m.tokens * (double)prefill_heads(p) * (double)DIM(p, D);
}

/* 4 d flops a (row, visible key): Q K^T and P V, the causal triangle counted exactly */
static double prefill_flops(const kt_problem *p)
{
    const prefill_meta m = prefill_meta_of(p);
    double pairs = 0.0;
    for (int s = 0; s < m.batch; s++) {
        const long long len = kt_prefill_seq_len_of(p, s), qlen = kt_prefill_qlen_of(p, s);
        for (long long t = 0; t < qlen; t++) pairs += prefill_seen(len - qlen + t, DIM(p, WIN));
    }
    return 4.0 * pairs * (double)prefill_heads(p) * (double)DIM(p, D);
}

const kt_op kt_op_attn_prefill = {
    .name = "attn_prefill",
    .summary = "paged causal varlen prefill attention, chunked prefill included (vLLM's NHD cache)",
    .dtypes = kt_attn_dtypes,
    .ndtypes = KT_ATTN_NDTYPES,
    .dims = prefill_dims,
    .ndims = KT_PREFILL_NDIMS,
    .decode_edge = 0,   /* every qlen bucket is prefill */
    .params = prefill_params,
    .nparams = KT_PREFILL_NPARAMS,
    .args_size = sizeof(kt_attn_args),
    .launches = prefill_launches,
    .misfit = prefill_misfit,
    .nworkspaces = 1,
    .workspace_names = prefill_workspaces,
    .workspace_bytes = prefill_workspace_bytes,
    /* as decode's: a larger untuned split is clamped by bind (fewer segments, still correct) */
    .workspace_floor_bytes = 32LL << 20,
    .workspace_min_bytes = prefill_workspace_min_bytes,
    .workspace_poison_bytes = prefill_workspace_poison_bytes,
    .needs_workspace = prefill_needs_workspace,
    .split_of = prefill_split_of,
    .split_label = "split-KV segments at most (where the grid is short of the device)",
    .problem_of_args = prefill_problem_of_args,
    .bind = prefill_bind,
    .law_pick = prefill_law_pick,
    .prune = NULL,
    .buffers = prefill_buffers,
    .fill = prefill_fill,
    .args_for = prefill_args_for,
    .ref_count = prefill_ref_count,
    .ref_cpu = prefill_ref_cpu,
    .ref_gpu_name = kt_attn_ref_gpu_name,
    .ref_gpu_launch = prefill_ref_gpu_launch,
    .ref_args_size = sizeof(kt_attn_ref_args),
    .rel_error = prefill_rel_error,
    .error_bound = kt_attn_error_bound,
    .ref_checks = prefill_ref_checks,
    .nref_checks = (int)(sizeof prefill_ref_checks / sizeof prefill_ref_checks[0]),
    .bytes_moved = prefill_bytes_moved,
    .flops = prefill_flops,
    /* prefill is compute-bound and its q was just written: timed warm */
    .cold_decode = 0,
    .from_model = NULL,
};
