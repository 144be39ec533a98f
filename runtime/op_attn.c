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
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "../tuner/half_convert.h"
#include "../tuner/random_inputs.h"

static const char *const attn_dtypes[] = {"bf16", "fp16", "bf16_e4m3", "fp16_e4m3"};
enum { ATTN_BF16, ATTN_FP16, ATTN_BF16_E4M3, ATTN_FP16_E4M3 };

/* query rows a sequence: decode, then 1 + speculative tokens */
static const int attn_q_edges[] = {1, 2, 4, 8};
static const int attn_batch_edges[] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const int attn_ctx_edges[] = {1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
#define NE(a) ((int)(sizeof a / sizeof a[0]))

static const kt_op_dim attn_dims[KT_ATTN_NDIMS] = {
    {"d", 0, NULL, 0, 0},
    {"g", 0, NULL, 0, 0},
    {"hkv", 0, NULL, 0, 0},
    {"bs", 0, NULL, 0, 0},
    {"win", 0, NULL, 0, 1},
    {"cap", 0, NULL, 0, 1},
    {"sink", 0, NULL, 0, 1},
    {"q", 1, attn_q_edges, NE(attn_q_edges), 0},
    {"batch", 1, attn_batch_edges, NE(attn_batch_edges), 0},
    {"ctx", 1, attn_ctx_edges, NE(attn_ctx_edges), 0},
};

/* Every axis is required but SEGMAX (no axis: no split). */
static const kt_op_param attn_params[KT_ATTN_NPARAMS] = {
    {"D", 0, 16}, {"MT", 0, 1}, {"BN", 0, 16}, {"NW", 0, 1}, {"SEGMAX", 1, 1},
};
static const char *const attn_workspaces[] = {"split-KV partials"};

/* The segment law's one empirical constant (the seed's MIN_TPS): a segment covers at least this
 * many KV tiles, below which its partials and the reduce cost more than the parallelism buys. */
#define ATTN_LAW_MIN_TILES 2
#define ATTN_REDUCE_THREADS 64
#define GRID_YZ_MAX 65535LL
#define GRID_X_MAX 2147483647LL

#define DIM(p, n) ((p)->dim[KT_ATTN_D_##n])
#define PAR(v, n) ((v)->p[KT_ATTN_P_##n])

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
static int attn_kv8(int dtype) { return dtype == ATTN_BF16_E4M3 || dtype == ATTN_FP16_E4M3; }
static int attn_fp16(int dtype) { return dtype == ATTN_FP16 || dtype == ATTN_FP16_E4M3; }
static long long attn_heads(const kt_problem *p) { return DIM(p, G) * DIM(p, HKV); }

/* Blocks a kv head's g * q rows take (each of 16 * MT rows). */
static long long attn_row_blocks(const kt_variant *v, const kt_problem *p)
{
    return ceil_div(DIM(p, G) * DIM(p, Q), 16LL * PAR(v, MT));
}

/* Keys the longest sequence's rows can see: the window bounds a windowed layer's. */
static long long attn_visible(const kt_problem *p)
{
    const long long ctx = DIM(p, CTX), win = DIM(p, WIN);
    return win > 0 && win + DIM(p, Q) - 1 < ctx ? win + DIM(p, Q) - 1 : ctx;
}

/* The nearest power of two to x in log distance (x >= 1). */
static long long attn_pow2_snap(double x)
{
    if (!(x >= 1.0)) return 1;
    return 1LL << (int)lround(log2(x));
}

/* The segment law (the seed's, derived from the kernel's footprint): TARGET = compute units x the
 * kernel's resident blocks a unit (its ELF resources: kt_variant.occupancy), segments = the power
 * of two nearest TARGET / (blocks without a split), halved while a segment would cover fewer
 * than ATTN_LAW_MIN_TILES KV tiles of the longest sequence, within [1, SEGMAX]. */
static long long attn_segments(const kt_variant *v, const kt_problem *p, int units)
{
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    const long long target = (long long)(units > 0 ? units : 1) * occ;
    const long long blocks = DIM(p, HKV) * attn_row_blocks(v, p) * DIM(p, BATCH);
    long long s = attn_pow2_snap((double)target / (double)blocks);
    const long long tile = PAR(v, BN);
    while (s > 1 && attn_visible(p) < s * ATTN_LAW_MIN_TILES * tile) s /= 2;
    if (s > PAR(v, SEGMAX)) s = PAR(v, SEGMAX);
    return s < 1 ? 1 : s;
}

/* (token, segment) pairs of partials any problem of p's buckets can need: tokens * segments is at
 * most q * sqrt(2) * TARGET / (hkv * row blocks) once split (the law's snap), and at most
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
    if (PAR(v, MT) < 1 || PAR(v, BN) < 16 || PAR(v, NW) < 1 || PAR(v, SEGMAX) < 1) {
        snprintf(buf, len, "bad variant: MT=%d BN=%d NW=%d SEGMAX=%d", PAR(v, MT), PAR(v, BN), PAR(v, NW), PAR(v, SEGMAX));
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
                                   {(unsigned)(PAR(v, NW) * wave_size), 1, 1}, 0};
    if (segs <= 1) return 1;
    out[1].suffix = "_reduce";
    out[1].dims = (kt_launch_dims){{(unsigned)(DIM(p, BATCH) * DIM(p, Q) * attn_heads(p)), 1, 1}, {ATTN_REDUCE_THREADS, 1, 1}, 0};
    return 2;
}

/* partials: {m, l} and head_size accumulators, fp32, for each (token, head, segment) */
static long long attn_workspace_bytes(const kt_variant *v, const kt_problem *p, int units, int i)
{
    if (i != 0 || PAR(v, SEGMAX) <= 1) return 0;
    return attn_partial_units(v, p, units) * attn_heads(p) * (DIM(p, D) + 2) * (long long)sizeof(float);
}

/* every partial is written before the reduce reads it: all of it may be poisoned */
static long long attn_workspace_poison_bytes(int i, long long bytes) { return i == 0 ? bytes : 0; }
/* A split variant uses the partials when it has them, and runs one segment without (bind). */
static int attn_needs_workspace(const kt_variant *v) { return PAR(v, SEGMAX) > 1; }
static long long attn_workspace_min_bytes(const kt_variant *v, const kt_problem *p, int units, int i) { return 0; }
static int attn_split_of(const kt_variant *v) { return PAR(v, SEGMAX); }

/* ---- arguments ---- */

#define ARG_FAIL(...) do { snprintf(err, errlen, "attn_decode: " __VA_ARGS__); return KT_EINVAL; } while (0)

static int attn_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    const kt_attn_args *a = args;
    if (!a || !p) ARG_FAIL("NULL %s", a ? "problem" : "args");
    if (!a->q) ARG_FAIL("q is NULL");
    if (!a->out) ARG_FAIL("out is NULL");
    if (!a->k_cache || !a->v_cache) ARG_FAIL("%s is NULL", a->k_cache ? "v_cache" : "k_cache");
    if (!a->block_table) ARG_FAIL("block_table is NULL");
    if (!a->seq_lens) ARG_FAIL("seq_lens is NULL");
    if (!a->query_start_loc) ARG_FAIL("query_start_loc is NULL");
    if (a->num_seqs < 1) ARG_FAIL("num_seqs = %d, must be >= 1", a->num_seqs);
    if (a->num_tokens < a->num_seqs) ARG_FAIL("num_tokens = %d is below num_seqs = %d", a->num_tokens, a->num_seqs);
    if (a->num_kv_heads < 1 || a->num_heads < a->num_kv_heads || a->num_heads % a->num_kv_heads)
        ARG_FAIL("num_heads = %d is not a multiple of num_kv_heads = %d", a->num_heads, a->num_kv_heads);
    if (a->head_size < 16 || a->head_size % 16) ARG_FAIL("head_size = %d, must be a multiple of 16", a->head_size);
    if (a->block_size < 2) ARG_FAIL("block_size = %d, must be >= 2", a->block_size);
    /* the kernels divide a key by block_size as a 32-bit multiply-high, exact below this */
    if ((long long)a->max_seq_len * a->block_size >= (1LL << 32))
        ARG_FAIL("max_seq_len = %d times block_size = %d must be below 2^32", a->max_seq_len, a->block_size);
    if (a->max_query_len < 1 || a->max_query_len > a->num_tokens)
        ARG_FAIL("max_query_len = %d, must be in [1, num_tokens = %d]", a->max_query_len, a->num_tokens);
    if (a->max_seq_len < a->max_query_len) ARG_FAIL("max_seq_len = %d is below max_query_len = %d", a->max_seq_len, a->max_query_len);
    if ((long long)a->num_tokens > (long long)a->num_seqs * a->max_query_len)
        ARG_FAIL("num_tokens = %d is over num_seqs x max_query_len = %lld", a->num_tokens,
                 (long long)a->num_seqs * a->max_query_len);
    /* 16-byte loads of q and of the caches (out is written an element at a time) */
    if ((uintptr_t)a->q % 16) ARG_FAIL("q is not 16-byte aligned");
    if ((uintptr_t)a->k_cache % 16 || (uintptr_t)a->v_cache % 16)
        ARG_FAIL("%s is not 16-byte aligned", (uintptr_t)a->k_cache % 16 ? "k_cache" : "v_cache");
    if (a->bt_stride < ceil_div(a->max_seq_len, a->block_size))
        ARG_FAIL("bt_stride = %d holds fewer than the %lld blocks of max_seq_len = %d", a->bt_stride,
                 ceil_div(a->max_seq_len, a->block_size), a->max_seq_len);
    if (a->window < 0) ARG_FAIL("window = %d, must be >= 0 (0: none)", a->window);
    if (!(a->softcap >= 0.0f) || isinf(a->softcap)) ARG_FAIL("softcap = %g, must be finite and >= 0", (double)a->softcap);
    if (!(a->scale > 0.0f) || isinf(a->scale)) ARG_FAIL("scale = %g, must be finite and > 0", (double)a->scale);
    if (!(a->k_scale > 0.0f) || !(a->v_scale > 0.0f) || isinf(a->k_scale) || isinf(a->v_scale))
        ARG_FAIL("k_scale = %g, v_scale = %g: must be finite and > 0", (double)a->k_scale, (double)a->v_scale);
    /* 16-byte moves: 8 16-bit elements (16 fp8 ones, whose strides are checked by the kernel's
     * dtype at bind; 16 divides every stride vLLM's caches have) */
    const long long q_strides[] = {a->q_stride_tok, a->q_stride_head, a->o_stride_tok, a->o_stride_head};
    const char *q_names[] = {"q_stride_tok", "q_stride_head", "o_stride_tok", "o_stride_head"};
    for (int i = 0; i < 4; i++)
        if (q_strides[i] < 1 || q_strides[i] % 8) ARG_FAIL("%s = %lld, must be a positive multiple of 8", q_names[i], q_strides[i]);
    const long long kv_strides[] = {a->k_stride_block, a->k_stride_slot, a->k_stride_head,
                                    a->v_stride_block, a->v_stride_slot, a->v_stride_head};
    const char *kv_names[] = {"k_stride_block", "k_stride_slot", "k_stride_head", "v_stride_block", "v_stride_slot", "v_stride_head"};
    for (int i = 0; i < 6; i++)
        if (kv_strides[i] < 1 || kv_strides[i] % 16) ARG_FAIL("%s = %lld, must be a positive multiple of 16", kv_names[i], kv_strides[i]);
    p->op = &kt_op_attn_decode;
    for (int i = 0; i < KT_OP_MAX_DIMS; i++) p->dim[i] = 0;
    DIM(p, D) = a->head_size;
    DIM(p, G) = a->num_heads / a->num_kv_heads;
    DIM(p, HKV) = a->num_kv_heads;
    DIM(p, BS) = a->block_size;
    DIM(p, WIN) = a->window;
    /* the key's cap is an integer, as the models set it; any soft-cap at all is keyed non-zero */
    DIM(p, CAP) = a->softcap > 0.0f ? (lroundf(a->softcap) > 0 ? lroundf(a->softcap) : 1) : 0;
    DIM(p, SINK) = a->sinks != NULL;
    DIM(p, Q) = a->max_query_len;
    DIM(p, BATCH) = a->num_seqs;
    /* a windowed layer reads at most window + q - 1 keys a sequence whatever its length: the key
     * (and what tune swept for it, kt_attn_model_limits) is that */
    DIM(p, CTX) = a->window > 0 && (long long)a->window + a->max_query_len - 1 < a->max_seq_len
                      ? (long long)a->window + a->max_query_len - 1 : a->max_seq_len;
    return KT_OK;
}

/* The segment count the launch geometry used, and the partials; fewer segments where the caller's
 * workspace is smaller than the law's (the kernel's extra blocks then exit; none has no reduce). */
static void attn_bind(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                      const long long *workspace_bytes)
{
    kt_attn_args *a = args;
    long long segs = attn_segments(v, p, units);
    const long long per_unit = (long long)a->num_heads * (a->head_size + 2) * (long long)sizeof(float);
    const long long have = workspace && workspace[0] ? workspace_bytes[0] : 0;
    while (segs > 1 && (long long)a->num_tokens * segs * per_unit > have) segs /= 2;
    a->num_segments = (int)segs;
    a->partials = segs > 1 ? (float *)workspace[0] : NULL;
}

/* ---- the law ----
 * The kernel is a stream of K and V whose latency the next tile's loads, in registers, hide: what
 * fills the memory pipe is the KV bytes in flight a compute unit, resident blocks (its ELF
 * resources: kt_variant.occupancy) x keys a tile. Among the candidates compiled for the head
 * size, lexicographically: the most keys in flight a compute unit (occupancy x BN); the fewest
 * row blocks (a kv head's rows in one block: K and V read once), then the fewest idle rows; more
 * warps; a segment ceiling the law's count does not hit, then the smaller (less scratch); the
 * first candidate. (The first run's rule, 4 warps and the KV tile nearest 32 at d256, had a
 * median regret of +12.8% over 59 swept keys on the H200: bench/NOTES.md.) */
#define ATTN_LAW_KEYS 6

static void attn_law_key(const law_device *d, const kt_candidate *c, const kt_problem *p, long long key[ATTN_LAW_KEYS])
{
    const kt_variant *v = &c->v;
    const long long rb = attn_row_blocks(v, p);
    const long long idle = rb * 16 * PAR(v, MT) - DIM(p, G) * DIM(p, Q);
    kt_variant unclamped = *v;
    unclamped.p[KT_ATTN_P_SEGMAX] = 1 << 20;
    const int units = d && d->compute_units > 0 ? d->compute_units : 1;
    const int hits = attn_segments(&unclamped, p, units) > PAR(v, SEGMAX);
    const long long occ = v->occupancy > 0 ? v->occupancy : 1;
    int i = 0;
    key[i++] = occ * PAR(v, BN);
    key[i++] = -rb;
    key[i++] = -idle;
    key[i++] = PAR(v, NW);
    key[i++] = -hits;
    key[i++] = -PAR(v, SEGMAX);
}

static int attn_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    if (!c || n < 1 || !p) return -1;
    const int units = d && d->compute_units > 0 ? d->compute_units : 1;
    int best = -1;
    long long bk[ATTN_LAW_KEYS] = {0};
    for (int i = 0; i < n; i++) {
        char buf[160];
        if (attn_misfit(&c[i].v, p, units, buf, sizeof buf)) continue;
        long long key[ATTN_LAW_KEYS];
        attn_law_key(d, &c[i], p, key);
        int better = best < 0;
        for (int j = 0; !better && j < ATTN_LAW_KEYS; j++)
            if (key[j] != bk[j]) { better = key[j] > bk[j]; break; }
        if (better) { best = i; memcpy(bk, key, sizeof bk); }
    }
    return best;
}

/* ---- verification sets ----
 * The batch is the key's, as serving lays it out: batch sequences of mixed lengths (the first the
 * bucket's ctx, the rest uniform in [ctx/2, ctx]) and mixed query rows (the first q, the rest
 * uniform in [1, q]: speculative tokens partly accepted), their blocks scattered over a cache
 * with spare blocks by a random permutation, and q a slice of a fused qkv buffer (its token
 * stride is (heads + 2 kv heads) x d, as vLLM's qkv_proj output) while out is contiguous. The
 * metadata is a function of the problem alone (a fixed seed), so every buffer's fill agrees on it;
 * the data (q, K, V, sinks) comes from the caller's rng. */
#define ATTN_META_SEED 0x5eed0a77e17ULL

typedef struct attn_meta {
    int batch, q, bs, max_blocks, num_blocks;
    long long tokens;
} attn_meta;

/* query rows of sequence i */
static int attn_q_len(const kt_problem *p, int i)
{
    const long long q = DIM(p, Q);
    if (i == 0 || q == 1) return (int)q;
    uint64_t s = ATTN_META_SEED ^ ((uint64_t)i * 0xD1B54A32D192ED03ull);
    return 1 + (int)(kt_rand_splitmix64(&s) % (uint64_t)q);
}

static int attn_seq_len(const kt_problem *p, int i)
{
    const long long ctx = DIM(p, CTX), q = DIM(p, Q);
    if (i == 0) return (int)ctx;
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
    int32_t *perm = malloc((size_t)m->num_blocks * sizeof *perm);
    if (!perm) { memset(bt, 0, (size_t)m->batch * m->max_blocks * sizeof *bt); return; }
    for (int i = 0; i < m->num_blocks; i++) perm[i] = i;
    uint64_t s = ATTN_META_SEED ^ 0xb10cULL;
    for (int i = m->num_blocks - 1; i > 0; i--) {
        const int j = (int)(kt_rand_splitmix64(&s) % (uint64_t)(i + 1));
        const int32_t t = perm[i]; perm[i] = perm[j]; perm[j] = t;
    }
    int next = 0;
    for (int i = 0; i < m->batch; i++) {
        const int nb = (int)ceil_div(attn_seq_len(p, i), m->bs);
        for (int b = 0; b < m->max_blocks; b++) bt[(size_t)i * m->max_blocks + b] = b < nb ? perm[next++] : -1;
    }
    free(perm);
}

static size_t attn_cache_elems(const kt_problem *p, const attn_meta *m)
{
    return (size_t)m->num_blocks * (size_t)m->bs * (size_t)DIM(p, HKV) * (size_t)DIM(p, D);
}

enum { B_Q, B_OUT, B_K, B_V, B_BT, B_LENS, B_QSL, B_SINKS, B_COUNT };

/* elements between q's tokens: a fused qkv row, the q heads first */
static long long attn_q_stride(const kt_problem *p) { return (attn_heads(p) + 2 * DIM(p, HKV)) * DIM(p, D); }

static int attn_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const attn_meta m = attn_meta_of(p);
    const size_t qe = (size_t)m.tokens * (size_t)attn_heads(p) * (size_t)DIM(p, D);
    const size_t esz = attn_kv8(p->dtype) ? 1 : 2;
    out[B_Q] = (kt_op_buffer){"q", KT_BUF_IN, (size_t)m.tokens * (size_t)attn_q_stride(p) * 2};
    out[B_OUT] = (kt_op_buffer){"out", KT_BUF_OUT, qe * 2};
    out[B_K] = (kt_op_buffer){"k_cache", KT_BUF_IN, attn_cache_elems(p, &m) * esz};
    out[B_V] = (kt_op_buffer){"v_cache", KT_BUF_IN, attn_cache_elems(p, &m) * esz};
    out[B_BT] = (kt_op_buffer){"block_table", KT_BUF_IN, (size_t)m.batch * m.max_blocks * 4};
    out[B_LENS] = (kt_op_buffer){"seq_lens", KT_BUF_IN, (size_t)m.batch * 4};
    out[B_QSL] = (kt_op_buffer){"query_start_loc", KT_BUF_IN, ((size_t)m.batch + 1) * 4};
    out[B_SINKS] = (kt_op_buffer){"sinks", KT_BUF_IN, (size_t)attn_heads(p) * 4};
    return B_COUNT;
}

/* An e4m3 byte of magnitude 2^-4 .. 3.75 (exponent field 3..8): never zero, never NaN. */
static uint8_t attn_rand_e4m3(uint64_t *rng)
{
    const uint64_t r = kt_rand_splitmix64(rng);
    return (uint8_t)(((r & 1) << 7) | ((3 + (r >> 1) % 6) << 3) | ((r >> 8) & 7));
}

static double attn_e4m3_value(uint8_t b)
{
    const int e = (b >> 3) & 15, m = b & 7;
    const double f = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return (b & 0x80) ? -f : f;
}

static void attn_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    const attn_meta m = attn_meta_of(p);
    const int fp16 = attn_fp16(p->dtype);
    switch (i) {
    case B_Q:
        for (size_t j = 0; j < bytes / 2; j++) ((uint16_t *)host)[j] = kt_rand_input(fp16, rng);
        break;
    case B_K:
    case B_V:
        if (attn_kv8(p->dtype))
            for (size_t j = 0; j < bytes; j++) ((uint8_t *)host)[j] = attn_rand_e4m3(rng);
        else
            for (size_t j = 0; j < bytes / 2; j++) ((uint16_t *)host)[j] = kt_rand_input(fp16, rng);
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
    case B_SINKS:   /* learned logits, uniform in [-2, 2) */
        for (size_t j = 0; j < bytes / 4; j++)
            ((float *)host)[j] = (float)((double)(kt_rand_splitmix64(rng) >> 11) * 0x1p-53 * 4.0 - 2.0);
        break;
    default:
        memset(host, 0, bytes);
    }
}

/* The scales the verification sets use: fp8 caches hold values of magnitude up to ~4, so a
 * k_scale below 1 keeps the scores in softmax's working range, and a v_scale != 1 shows a missed
 * multiply. */
#define ATTN_VERIFY_K_SCALE 0.375f
#define ATTN_VERIFY_V_SCALE 0.625f

static void attn_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    const attn_meta m = attn_meta_of(p);
    kt_attn_args *a = args;
    memset(a, 0, sizeof *a);
    const int d = (int)DIM(p, D), hkv = (int)DIM(p, HKV), heads = (int)attn_heads(p);
    a->q = buffers[B_Q];
    a->out = buffers[B_OUT];
    a->k_cache = buffers[B_K];
    a->v_cache = buffers[B_V];
    a->block_table = buffers[B_BT];
    a->seq_lens = buffers[B_LENS];
    a->query_start_loc = buffers[B_QSL];
    a->sinks = DIM(p, SINK) ? buffers[B_SINKS] : NULL;
    a->q_stride_tok = attn_q_stride(p);
    a->o_stride_tok = (long long)heads * d;
    a->q_stride_head = a->o_stride_head = d;
    a->k_stride_block = a->v_stride_block = (long long)m.bs * hkv * d;
    a->k_stride_slot = a->v_stride_slot = hkv * d;
    a->k_stride_head = a->v_stride_head = d;
    a->bt_stride = m.max_blocks;
    a->num_seqs = m.batch;
    a->num_tokens = (int)m.tokens;
    a->num_heads = heads;
    a->num_kv_heads = hkv;
    a->head_size = d;
    a->block_size = m.bs;
    a->max_query_len = m.q;
    a->max_seq_len = (int)DIM(p, CTX);
    a->window = (int)DIM(p, WIN);
    a->scale = (float)(1.0 / sqrt((double)d));
    a->softcap = (float)DIM(p, CAP);
    a->k_scale = attn_kv8(p->dtype) ? ATTN_VERIFY_K_SCALE : 1.0f;
    a->v_scale = attn_kv8(p->dtype) ? ATTN_VERIFY_V_SCALE : 1.0f;
}

static size_t attn_ref_count(const kt_problem *p)
{
    return (size_t)attn_meta_of(p).tokens * (size_t)attn_heads(p) * (size_t)DIM(p, D);
}

static double attn_q_val(const kt_problem *p, uint16_t h) { return attn_fp16(p->dtype) ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }

static double attn_kv_val(const kt_problem *p, const void *cache, size_t i)
{
    if (attn_kv8(p->dtype)) return attn_e4m3_value(((const uint8_t *)cache)[i]);
    return attn_q_val(p, ((const uint16_t *)cache)[i]);
}

/* float64 over the inputs, as templates/abi/attn.h states it (no rounding but the inputs'). */
static void attn_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    const attn_meta m = attn_meta_of(p);
    const int d = (int)DIM(p, D), g = (int)DIM(p, G), hkv = (int)DIM(p, HKV), heads = g * hkv;
    const long long win = DIM(p, WIN);
    const double cap = (double)DIM(p, CAP), scale = 1.0 / sqrt((double)d);
    const double ks = attn_kv8(p->dtype) ? ATTN_VERIFY_K_SCALE : 1.0, vs = attn_kv8(p->dtype) ? ATTN_VERIFY_V_SCALE : 1.0;
    const uint16_t *q = host[B_Q];
    const int32_t *bt = host[B_BT], *lens = host[B_LENS], *qsl = host[B_QSL];
    const float *sinks = DIM(p, SINK) ? host[B_SINKS] : NULL;
    double *s = malloc((size_t)DIM(p, CTX) * sizeof *s);
    double *acc = malloc((size_t)d * sizeof *acc);
    if (!s || !acc) { free(s); free(acc); for (size_t i = 0; i < attn_ref_count(p); i++) ref[i] = NAN; return; }
    for (int sq = 0; sq < m.batch; sq++) {
        const int qlen = qsl[sq + 1] - qsl[sq], len = lens[sq], ctx = len - qlen;
        for (int t = 0; t < qlen; t++) {
            const int pos = ctx + t, tok = qsl[sq] + t;
            const int lo = win > 0 && pos - win + 1 > 0 ? (int)(pos - win + 1) : 0;
            for (int h = 0; h < heads; h++) {
                const int kvh = h / g;
                const uint16_t *qv = q + (size_t)tok * (size_t)attn_q_stride(p) + (size_t)h * d;
                double mx = sinks ? (double)sinks[h] : -INFINITY;
                for (int j = lo; j <= pos; j++) {
                    const size_t base = (((size_t)bt[(size_t)sq * m.max_blocks + j / m.bs] * m.bs + j % m.bs) * hkv + kvh) * d;
                    double dot = 0.0;
                    for (int e = 0; e < d; e++) dot += attn_q_val(p, qv[e]) * attn_kv_val(p, host[B_K], base + e);
                    double v = dot * ks * scale;
                    if (cap > 0.0) v = cap * tanh(v / cap);
                    s[j - lo] = v;
                    if (v > mx) mx = v;
                }
                double l = sinks ? exp((double)sinks[h] - mx) : 0.0;
                for (int e = 0; e < d; e++) acc[e] = 0.0;
                for (int j = lo; j <= pos; j++) {
                    const double w = exp(s[j - lo] - mx);
                    l += w;
                    const size_t base = (((size_t)bt[(size_t)sq * m.max_blocks + j / m.bs] * m.bs + j % m.bs) * hkv + kvh) * d;
                    for (int e = 0; e < d; e++) acc[e] += w * attn_kv_val(p, host[B_V], base + e) * vs;
                }
                double *o = ref + ((size_t)tok * heads + h) * d;
                for (int e = 0; e < d; e++) o[e] = l > 0.0 ? acc[e] / l : 0.0;
            }
        }
    }
    free(s);
    free(acc);
}

/* templates/ref/attn_ref.hip, one per dtype: any head size up to KT_ATTN_REF_MAX_D (its threads
 * hold the head's output in registers); above it the worker takes ref_cpu. The worker runs the
 * GPU reference whenever there is one, as for the GEMM: ref_cpu is its check (ref_checks). */
static const char *attn_ref_gpu_name(const kt_problem *p, char *buf, size_t len)
{
    if (DIM(p, D) > KT_ATTN_REF_MAX_D) return NULL;
    snprintf(buf, len, "kt_attn_ref_%s", attn_dtypes[p->dtype]);
    return buf;
}

/* One block of KT_ATTN_REF_THREADS per (token, head), row = token * heads + head; the set's own
 * arguments (args_for) and the scale in double, as ref_cpu takes it. */
static kt_launch_dims attn_ref_gpu_launch(const kt_problem *p, void *args, void *const *buffers, void *ref_out)
{
    kt_attn_ref_args *ra = args;
    memset(ra, 0, sizeof *ra);
    attn_args_for(&ra->a, p, buffers);
    ra->a.num_segments = 1;
    ra->out = ref_out;
    ra->scale = 1.0 / sqrt((double)DIM(p, D));
    const long long rows = attn_meta_of(p).tokens * attn_heads(p);
    kt_launch_dims d = {{(unsigned)rows, 1, 1}, {KT_ATTN_REF_THREADS, 1, 1}, 0};
    return d;
}

static double attn_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    const uint16_t *o = host[B_OUT];
    const size_t n = attn_ref_count(p);
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double v = attn_q_val(p, o[i]);
        if (!isfinite(v)) return NAN;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* The kernel rounds P to the element type before P V (as FlashAttention does) and the output
 * once: ~2^-9 (bf16) / 2^-11 (fp16) relative an element, a norm error near a third of that. 2^-7
 * and 2^-9 leave ~4x margin over it; a dropped tile, a wrong mask or a misrouted head is O(1). */
static double attn_error_bound(int dtype) { return attn_fp16(dtype) ? 0x1p-9 : 0x1p-7; }

/* compulsory: every visible key's K and V row once per kv head, q and out */
static double attn_bytes_moved(const kt_problem *p)
{
    const attn_meta m = attn_meta_of(p);
    double keys = 0.0;
    for (int s = 0; s < m.batch; s++) {
        const long long len = attn_seq_len(p, s), win = DIM(p, WIN);
        keys += (double)(win > 0 && win + m.q - 1 < len ? win + m.q - 1 : len);
    }
    const double esz = attn_kv8(p->dtype) ? 1.0 : 2.0;
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
    .dtypes = attn_dtypes,
    .ndtypes = 4,
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
    .problem_of_args = attn_problem_of_args,
    .bind = attn_bind,
    .law_pick = attn_law_pick,
    .prune = NULL,
    .buffers = attn_buffers,
    .fill = attn_fill,
    .args_for = attn_args_for,
    .ref_count = attn_ref_count,
    .ref_cpu = attn_ref_cpu,
    .ref_gpu_name = attn_ref_gpu_name,
    .ref_gpu_launch = attn_ref_gpu_launch,
    .ref_args_size = sizeof(kt_attn_ref_args),
    .rel_error = attn_rel_error,
    .error_bound = attn_error_bound,
    .bytes_moved = attn_bytes_moved,
    .flops = attn_flops,
    /* timed cold: serving reads every layer's KV from HBM (it is far larger than L2) */
    .cold_decode = 1,
    .ref_checks = attn_ref_checks,
    .nref_checks = (int)(sizeof attn_ref_checks / sizeof attn_ref_checks[0]),
    .from_model = kt_attn_model_problems,
};
