/* op_rmsnorm.c: the descriptor of vLLM's fused add + RMSNorm (op "rmsnorm_add"): key
 * `rmsnorm_add <dtype> hidden=<h> rows<=<edge>`, recipe templates/norm/rmsnorm_add.lua, template
 * templates/norm/rmsnorm_add.hip, ABI templates/abi/rmsnorm.h (which states the arithmetic and
 * its rounding points). Pure functions: no I/O, no state, no GPU. */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "op_rmsnorm.h"
#include "ktrt.h"                    /* KT_OK, KT_EINVAL */
#include "../tuner/half_convert.h"   /* header-only, libc-only: bit-exact RNE conversions */
#include "../tuner/random_inputs.h" /* header-only: the generator every verifier draws from */

static const char *const rms_dtypes[] = {"bf16", "fp16"};
enum { RMS_BF16, RMS_FP16 };

/* Tokens of a forward pass; <= 64 is decode. */
static const int rms_edges[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
static const kt_op_dim rms_dims[KT_RMS_NDIMS] = {
    {"hidden", 0, NULL, 0, 0},
    {"rows", 1, rms_edges, (int)(sizeof rms_edges / sizeof rms_edges[0]), 0},
};

/* Fallbacks: one row a block, 16-byte loads, 256 threads, one pack held (what the recipe's axes
 * would give a plain vLLM-like launch). The template admits VW 4 and 8 only; a block is at least
 * one 32-lane group. */
static const kt_op_param rms_params[KT_RMS_NPARAMS] = {
    {"RB", 1, 1},
    {"VW", 8, 4},
    {"TH", 256, 32},
    {"UN", 1, 1},
};

#define RMS_MAX_THREADS 1024

static long long rms_hidden(const kt_problem *p) { return p->dim[KT_RMS_D_HIDDEN]; }
static long long rms_rows(const kt_problem *p) { return p->dim[KT_RMS_D_ROWS]; }
static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

/* ---- geometry ---- */

static const char *rms_misfit(const kt_variant *v, const kt_problem *p, int units, char *buf, size_t len)
{
    const int rb = v->p[KT_RMS_P_RB], vw = v->p[KT_RMS_P_VW], th = v->p[KT_RMS_P_TH], un = v->p[KT_RMS_P_UN];
    if (rb < 1 || th < 1 || un < 1 || (vw != 4 && vw != 8)) {
        snprintf(buf, len, "bad variant: RB=%d VW=%d TH=%d UN=%d (RB, TH, UN >= 1, VW 4 or 8)", rb, vw, th, un);
        return buf;
    }
    if (th > RMS_MAX_THREADS || th % rb != 0 || ((th / rb) & (th / rb - 1)) != 0) {
        snprintf(buf, len, "TH=%d threads over RB=%d rows is not a power-of-two group of at most %d threads", th, rb,
                 RMS_MAX_THREADS);
        return buf;
    }
    const long long h = rms_hidden(p), r = rms_rows(p);
    if (h < 1 || r < 1) {
        snprintf(buf, len, "hidden=%lld rows=%lld: both must be >= 1", h, r);
        return buf;
    }
    if (h > INT_MAX || r > INT_MAX) {
        snprintf(buf, len, "hidden=%lld rows=%lld: the argument struct holds them as int", h, r);
        return buf;
    }
    /* grid.x = ceil(rows / RB) <= rows < 2^31: within every device's x limit */
    return NULL;
}

static int rms_launches(const kt_variant *v, const kt_problem *p, int wave_size, int units,
                        kt_op_launch out[KT_OP_MAX_LAUNCHES])
{
    char buf[160];
    if (!v || !p || !out || rms_misfit(v, p, units, buf, sizeof buf)) return 0;
    const int rb = v->p[KT_RMS_P_RB], th = v->p[KT_RMS_P_TH];
    memset(out, 0, sizeof *out);
    out[0].suffix = "";
    out[0].dims.grid[0] = (unsigned)ceil_div(rms_rows(p), rb);
    out[0].dims.grid[1] = 1;
    out[0].dims.grid[2] = 1;
    out[0].dims.block[0] = (unsigned)th;
    out[0].dims.block[1] = 1;
    out[0].dims.block[2] = 1;
    out[0].dims.shared = 0;   /* the partials are static shared memory */
    out[0].optional = 0;
    return 1;
}

static long long rms_workspace_bytes(const kt_variant *v, const kt_problem *p, int units, int i) { return 0; }
static long long rms_workspace_poison_bytes(int i, long long bytes) { return 0; }
static int rms_needs_workspace(const kt_variant *v) { return 0; }
static int rms_split_of(const kt_variant *v) { return -1; }

/* ---- arguments ---- */

static int rms_overlap(unsigned long long a0, unsigned long long a1, unsigned long long b0, unsigned long long b1)
{
    return a0 < b1 && b0 < a1;
}

static int rms_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    const kt_rmsnorm_add_args *a = args;
    if (!a || !p) { snprintf(err, errlen, "rmsnorm_add: NULL %s", a ? "problem" : "args"); return KT_EINVAL; }
    if (!a->x) { snprintf(err, errlen, "rmsnorm_add: x is NULL"); return KT_EINVAL; }
    if (!a->residual) { snprintf(err, errlen, "rmsnorm_add: residual is NULL"); return KT_EINVAL; }
    if (!a->weight) { snprintf(err, errlen, "rmsnorm_add: weight is NULL"); return KT_EINVAL; }
    if (a->rows < 1) { snprintf(err, errlen, "rmsnorm_add: rows = %d, must be >= 1", a->rows); return KT_EINVAL; }
    if (a->hidden < 1) { snprintf(err, errlen, "rmsnorm_add: hidden = %d, must be >= 1", a->hidden); return KT_EINVAL; }
    if (a->x_stride < a->hidden) {
        snprintf(err, errlen, "rmsnorm_add: x_stride = %d is less than hidden = %d", a->x_stride, a->hidden);
        return KT_EINVAL;
    }
    if (!(a->eps >= 0.0f) || isinf(a->eps)) {
        snprintf(err, errlen, "rmsnorm_add: eps = %g, must be finite and >= 0", (double)a->eps);
        return KT_EINVAL;
    }
    /* in place: the three operands must not share bytes (16-bit elements) */
    const unsigned long long x0 = (unsigned long long)(uintptr_t)a->x;
    const unsigned long long x1 = x0 + 2ull * ((unsigned long long)(a->rows - 1) * (unsigned)a->x_stride + (unsigned)a->hidden);
    const unsigned long long r0 = (unsigned long long)(uintptr_t)a->residual;
    const unsigned long long r1 = r0 + 2ull * (unsigned long long)a->rows * (unsigned)a->hidden;
    const unsigned long long w0 = (unsigned long long)(uintptr_t)a->weight;
    const unsigned long long w1 = w0 + 2ull * (unsigned)a->hidden;
    if (rms_overlap(x0, x1, r0, r1)) { snprintf(err, errlen, "rmsnorm_add: x and residual overlap"); return KT_EINVAL; }
    if (rms_overlap(w0, w1, x0, x1)) { snprintf(err, errlen, "rmsnorm_add: weight overlaps x"); return KT_EINVAL; }
    if (rms_overlap(w0, w1, r0, r1)) { snprintf(err, errlen, "rmsnorm_add: weight overlaps residual"); return KT_EINVAL; }
    /* the struct has no dtype: p->dtype is the caller's (it named the dtype to ktrt_run) */
    p->op = &kt_op_rmsnorm_add;
    for (int i = 0; i < KT_OP_MAX_DIMS; i++) p->dim[i] = 0;
    p->dim[KT_RMS_D_HIDDEN] = a->hidden;
    p->dim[KT_RMS_D_ROWS] = a->rows;
    return KT_OK;
}

/* No variant-specific fields: the grid alone carries RB, and the kernel reads nothing else. */
static void rms_bind(void *args, const kt_variant *v, const kt_problem *p, int units, void *const *workspace,
                     const long long *workspace_bytes)
{
}

/* ---- the law ----
 * The kernel is a stream of 10 bytes an element with one row reduction in the middle, so the law
 * is about keeping every load wide, every row in registers, and the right number of loads in
 * flight a thread. Among the candidates that can launch, lexicographically:
 *  1. the widest load that divides hidden (VW 8 before 4; where neither divides, the template
 *     goes element by element whatever VW is, and VW no longer matters);
 *  2. the row fits the registers (k = ceil(packs / G) <= UN, G = TH/RB threads a row): one read
 *     of the residual instead of a store and a read back;
 *  3. blocks to fill the device: min(ceil(rows / RB), units) — several rows a block only where
 *     that still leaves a block for every compute unit;
 *  4. packs a thread k closest to k*: k* = 1 while the device has a resident thread for every
 *     pack of the problem (rows * packs <= wave slots * wave size: latency-bound, so the widest
 *     spread of each row's loads over threads, and the shortest chain a thread), else 2 (a
 *     stream: six 16-byte loads in flight a thread cover the latency, and each row's reduction
 *     and barrier are paid over twice the bytes); and k* at least packs / RMS_LAW_ROW_THREADS:
 *     a row's group stops growing at 512 threads (measured on the H200, bf16, cold, rows 1 and
 *     64: hidden 5120 and 8192 ran 8-10% faster on 512 threads with two packs each than on 1024
 *     with one; the 32-wave reduction and barrier cost more than the second load chain);
 *  5. no registers held for packs the row does not have (UN - k smallest: occupancy);
 *  6. fewest idle pack slots in the row's group (G*k - packs: ragged rows). In the stream regime
 *     this key comes second, before 2: measured on the H200 (bf16, hot, 1024 and 8192 rows),
 *     hidden 5120 (640 packs) ran 13-28% slower on 512 threads holding two packs each (384 of
 *     1024 slots idle) than on 128 or 256 threads streaming the row twice (128 or none idle),
 *     while at 4096 and 8192, where no candidate idles, the held row won (7-8%);
 *  7. blocks nearest 256 threads (vLLM's choice for many rows: big enough to amortize the
 *     block's launch and barrier, small enough to pack a compute unit evenly);
 *  8. more resident waves, then fewer registers, then the first candidate. */
#define RMS_LAW_KEYS 10
#define RMS_LAW_ROW_THREADS 512

static int rms_ilog2(int x)
{
    int l = 0;
    while (x > 1) { x >>= 1; l++; }
    return l;
}

static void rms_law_key(const law_device *d, const kt_candidate *c, const kt_problem *p, long long key[RMS_LAW_KEYS])
{
    const kt_variant *v = &c->v;
    const int rb = v->p[KT_RMS_P_RB], vw = v->p[KT_RMS_P_VW], th = v->p[KT_RMS_P_TH], un = v->p[KT_RMS_P_UN];
    const long long h = rms_hidden(p), r = rms_rows(p);
    const int vec = h % vw == 0 ? vw : 1;
    const long long packs = ceil_div(h, vec);
    const long long g = th / rb;
    const long long k = ceil_div(packs, g);
    const long long units = d && d->compute_units > 0 ? d->compute_units : 1;
    const long long slots = d ? law_device_wave_slots(d) * (d->wave_size > 0 ? d->wave_size : 1) : 0;
    const int stream = !(slots > 0 && r * packs <= slots);
    long long kstar = stream ? 2 : 1;
    if (kstar < ceil_div(packs, RMS_LAW_ROW_THREADS)) kstar = ceil_div(packs, RMS_LAW_ROW_THREADS);
    const long long blocks = ceil_div(r, rb);
    const int fits = k <= un;
    const long long idle = g * k - packs;
    int i = 0;
    key[i++] = vec;
    if (stream) key[i++] = -idle;      /* a stream: idle threads first (see 6) */
    key[i++] = fits;
    key[i++] = blocks < units ? blocks : units;
    key[i++] = -llabs(k - kstar);
    key[i++] = fits ? -(un - k) : un;
    if (!stream) key[i++] = -idle;
    key[i++] = -abs(rms_ilog2(th) - 8);
    key[i++] = c->waves_per_simd;
    key[i++] = -(long long)c->regs;
    while (i < RMS_LAW_KEYS) key[i++] = 0;
}

static int rms_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    if (!c || n < 1 || !p || rms_hidden(p) < 1 || rms_rows(p) < 1) return -1;
    const int units = d && d->compute_units > 0 ? d->compute_units : 1;
    int best = -1;
    long long bk[RMS_LAW_KEYS] = {0};
    for (int i = 0; i < n; i++) {
        char buf[160];
        if (rms_misfit(&c[i].v, p, units, buf, sizeof buf)) continue;
        if (c[i].threads > 0 && c[i].threads != c[i].v.p[KT_RMS_P_TH]) continue;   /* not this template's block */
        long long key[RMS_LAW_KEYS];
        rms_law_key(d, &c[i], p, key);
        int better = best < 0;
        for (int j = 0; !better && j < RMS_LAW_KEYS; j++) {
            if (key[j] != bk[j]) {
                better = key[j] > bk[j];
                break;
            }
        }
        if (better) {
            best = i;
            memcpy(bk, key, sizeof bk);
        }
    }
    return best;
}

/* ---- verification ---- */

static size_t rms_elems(const kt_problem *p) { return (size_t)rms_rows(p) * (size_t)rms_hidden(p); }

static int rms_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    const size_t e = rms_elems(p);
    out[0] = (kt_op_buffer){"x", KT_BUF_INOUT, e * 2};          /* a set's x_stride = hidden */
    out[1] = (kt_op_buffer){"residual", KT_BUF_INOUT, e * 2};
    out[2] = (kt_op_buffer){"weight", KT_BUF_IN, (size_t)rms_hidden(p) * 2};
    return 3;
}

static uint16_t rms_round(int dtype, float f) { return dtype == RMS_FP16 ? kt_f32_to_f16(f) : kt_f32_to_bf16(f); }
static double rms_val(int dtype, uint16_t h) { return dtype == RMS_FP16 ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }

/* x and residual: uniform in [-1, 1) (multiples of 2^-23, exact in fp32), rounded, never zero;
 * weight: 1 + uniform [-1/2, 1/2), like a trained norm's gains (never zero either). Zeros would
 * hide unwritten or misindexed outputs. */
static void rms_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    uint16_t *h = host;
    const int dt = p->dtype;
    for (size_t j = 0; j < bytes / 2; j++) {
        if (i != 2) {
            h[j] = kt_rand_input(dt == RMS_FP16, rng);   /* the tuner's generator, as the GEMM's */
            continue;
        }
        for (;;) {   /* the same draw, mapped to 1 + [-1/2, 1/2) */
            const int32_t r = (int32_t)(kt_rand_splitmix64(rng) >> 40) - (1 << 23);
            const uint16_t b = rms_round(dt, 1.0f + 0.5f * ((float)r * 0x1p-23f));
            if (b & 0x7FFFu) { h[j] = b; break; }
        }
    }
}

static void rms_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    kt_rmsnorm_add_args *a = args;
    memset(a, 0, sizeof *a);
    a->x = buffers[0];
    a->residual = buffers[1];
    a->weight = buffers[2];
    a->rows = (int)rms_rows(p);
    a->hidden = (int)rms_hidden(p);
    a->x_stride = a->hidden;
    a->eps = KT_RMS_VERIFY_EPS;
}

/* new x [rows][hidden], then new residual [rows][hidden] */
static size_t rms_ref_count(const kt_problem *p) { return 2 * rms_elems(p); }

/* float64, at the kernel's rounding points (templates/abi/rmsnorm.h): z = rnd(x + r) (the fp32
 * sum of two 16-bit values rounds to the same 16-bit value as the exact sum), the mean square in
 * float64 from the rounded z, n = rnd(z * s), out = rnd(n * w); the last two round the float64
 * product through fp32 to the dtype. */
static void rms_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    const uint16_t *x = host[0], *res = host[1], *w = host[2];
    const int dt = p->dtype;
    const size_t h = (size_t)rms_hidden(p), rows = (size_t)rms_rows(p);
    double *rx = ref, *rr = ref + rows * h;
    for (size_t i = 0; i < rows; i++) {
        double ss = 0.0;
        for (size_t j = 0; j < h; j++) {
            const double z = rms_val(dt, rms_round(dt, (float)(rms_val(dt, x[i * h + j]) + rms_val(dt, res[i * h + j]))));
            rr[i * h + j] = z;
            ss += z * z;
        }
        const double s = 1.0 / sqrt(ss / (double)h + (double)KT_RMS_VERIFY_EPS);
        for (size_t j = 0; j < h; j++) {
            const double n = rms_val(dt, rms_round(dt, (float)(rr[i * h + j] * s)));
            rx[i * h + j] = rms_val(dt, rms_round(dt, (float)(n * rms_val(dt, w[j]))));
        }
    }
}

/* max over the two outputs of ||out - ref|| / ||ref|| (each output against its own norm, so a
 * wrong residual is not hidden by x, nor the reverse); NaN when an output is not finite. */
static double rms_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    const int dt = p->dtype;
    const size_t e = rms_elems(p);
    double worst = 0.0;
    for (int b = 0; b < 2; b++) {
        const uint16_t *o = host[b];
        const double *r = ref + (size_t)b * e;
        double num = 0.0, den = 0.0;
        for (size_t j = 0; j < e; j++) {
            const double v = rms_val(dt, o[j]);
            if (!isfinite(v)) return NAN;
            num += (v - r[j]) * (v - r[j]);
            den += r[j] * r[j];
        }
        const double rel = den > 0.0 ? sqrt(num / den) : sqrt(num);
        if (rel > worst) worst = rel;
    }
    return worst;
}

/* The kernel differs from the reference only through the scale s: an fp32 sum of squares (its
 * own order, fused multiply-adds) and an fp32 1/sqrt, both within ~2^-16 relative for hidden up
 * to 16K on these inputs. The residual is then bit-exact, and n = rnd(z * s) and out = rnd(n * w)
 * land on the reference's value except where z * s falls within that relative distance of a
 * rounding boundary: a fraction ~2^-16 / 2^-8 of the elements in bf16 (8 significant bits), each
 * off by one ulp (<= 2^-7 relative), i.e. a norm error ~2^-7 * 2^-4 = 2^-11. Bounds of 2^-8
 * (bf16) and 2^-10 (fp16, 11 bits: three bits finer) leave 8x margin for that, while a dropped
 * term, a misindexed pack or a missed weight multiply is an O(1) error; a missed rounding point
 * (z unrounded into the squares, n unrounded before the weight) is caught bit-exactly by the unit
 * test's emulation, not by this bound. */
static double rms_error_bound(int dtype) { return dtype == RMS_FP16 ? 0x1p-10 : 0x1p-8; }

/* compulsory: read x, residual (rows x hidden each) and the weight once; write x and residual */
static double rms_bytes_moved(const kt_problem *p)
{
    return 2.0 * (4.0 * (double)rms_rows(p) * (double)rms_hidden(p) + (double)rms_hidden(p));
}

static double rms_flops(const kt_problem *p) { return 0.0; }

/* vLLM's decoder layers run the residual stream through two fused add + RMSNorms a layer
 * (input_layernorm, post_attention_layernorm; the first layer's input norm has no residual yet and
 * the final norm has one, so 2 x layers calls), all over the model's hidden size, unsharded. */
static int rms_from_model(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen)
{
    int dt = kt_op_dtype_index(&kt_op_rmsnorm_add, m->dtype);
    if (dt < 0) return snprintf(err, errlen, "rmsnorm_add: dtype '%s' (bf16 or fp16)", m->dtype ? m->dtype : "?"), -1;
    if (m->hidden < 1) return snprintf(err, errlen, "rmsnorm_add: the model has no hidden size"), -1;
    /* GemmaRMSNorm's x * (1 + weight) is not this op: tuning it would report coverage for norms the
     * model does not run (tuner/model.c lists them as not derived instead). */
    if (max < 1 || m->norm_plus_one) return 0;
    memset(&out[0], 0, sizeof out[0]);
    out[0].p.op = &kt_op_rmsnorm_add;
    out[0].p.dtype = dt;
    out[0].p.dim[KT_RMS_D_HIDDEN] = m->hidden;
    out[0].p.dim[KT_RMS_D_ROWS] = 1;
    snprintf(out[0].layers, sizeof out[0].layers, "input_norm,post_attn_norm");
    out[0].calls = 2 * m->layers;
    return 1;
}

const kt_op kt_op_rmsnorm_add = {
    .name = "rmsnorm_add",
    .summary = "fused residual add + RMSNorm, in place (vLLM fused_add_rms_norm)",
    .dtypes = rms_dtypes,
    .ndtypes = 2,
    .dims = rms_dims,
    .ndims = KT_RMS_NDIMS,
    .decode_edge = 64,
    .params = rms_params,
    .nparams = KT_RMS_NPARAMS,
    .args_size = sizeof(kt_rmsnorm_add_args),
    .launches = rms_launches,
    .misfit = rms_misfit,
    .nworkspaces = 0,
    .workspace_names = NULL,
    .workspace_bytes = rms_workspace_bytes,
    .workspace_poison_bytes = rms_workspace_poison_bytes,
    .needs_workspace = rms_needs_workspace,
    .split_of = rms_split_of,
    .problem_of_args = rms_problem_of_args,
    .bind = rms_bind,
    .law_pick = rms_law_pick,
    .prune = NULL,
    .buffers = rms_buffers,
    .fill = rms_fill,
    .args_for = rms_args_for,
    .ref_count = rms_ref_count,
    .ref_cpu = rms_ref_cpu,
    .ref_gpu_name = NULL,
    .ref_gpu_launch = NULL,
    .rel_error = rms_rel_error,
    .error_bound = rms_error_bound,
    .bytes_moved = rms_bytes_moved,
    .flops = rms_flops,
    /* timed warm: the residual stream was written by the layer just before (o_proj, down_proj) */
    .cold_decode = 0,
    .from_model = rms_from_model,
};
