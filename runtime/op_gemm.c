/* op_gemm.c: the dense GEMM's descriptor (runtime/op.h): C[m][n] = A[m][k] . W[n][k]^T, bf16 or
 * fp16, fp32 accumulation; the ABI is templates/abi/gemm.h, the geometry runtime/gemm_geometry.h,
 * the law runtime/law.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "op_gemm.h"
#include "ktrt.h"
#include "half_convert.h"
#include "random_inputs.h"
#include "law_gemm.h"

/* Grid limits both vendors share: gridDim.y and .z at most 65535, .x at most 2^31 - 1. */
#define GRID_YZ_MAX 65535LL
#define GRID_X_MAX 2147483647LL

static const char *const gemm_dtypes[] = {"bf16", "fp16"};
/* M buckets, part of the key schema: decode 1 .. 64, prefill 128 .. 8192. A token count is served
 * by the smallest edge >= it; above the last edge, by the last (longer prompts run chunk-wise). */
static const int gemm_edges[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};
static const kt_op_dim gemm_dims[KT_GEMM_NDIMS] = {
    {"n", 0, NULL, 0, 0}, {"k", 0, NULL, 0, 0}, {"m", 1, gemm_edges, (int)(sizeof gemm_edges / sizeof gemm_edges[0]), 0},
};
static const kt_op_param gemm_params[KT_GEMM_NPARAMS] = {
    {"BM", 0, 1}, {"BN", 0, 1}, {"BK", 0, 1}, {"WM", 0, 1}, {"WN", 0, 1},
    {"SK", 1, 0},   /* no SK axis: one segment; 0 is stream-K */
    {"ST", 0, 0},   /* no ST axis: static shared memory only */
};
static const char *const gemm_workspaces[] = {"split-K"};   /* partials slabs and tile counters */

#define DIM(p, d) ((int)(p)->dim[KT_GEMM_D_##d])

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

static int gemm_launches(const kt_variant *var, const kt_problem *p, int wave_size, int units,
                         kt_op_launch out[KT_OP_MAX_LAUNCHES])
{
    kt_gemm_variant v = kt_gemm_variant_of(var);
    out[0] = (kt_op_launch){.suffix = "", .dims = kt_gemm_main_dims(&v, DIM(p, M), DIM(p, N), wave_size, units)};
    if (v.splitk <= 1) return 1;
    /* a split-K variant without <name>_reduce reduces in its own launch (templates/abi/gemm.h) */
    out[1] = (kt_op_launch){.suffix = "_reduce", .dims = kt_gemm_reduce_dims(DIM(p, M), DIM(p, N)), .optional = 1};
    return 2;
}

static const char *gemm_misfit(const kt_variant *var, const kt_problem *p, int units, char *buf, size_t len)
{
    kt_gemm_variant v = kt_gemm_variant_of(var);
    int m = DIM(p, M), n = DIM(p, N);
    long long rows = ceil_div(m, v.bm), cols = ceil_div(n, v.bn);
    if (rows > GRID_YZ_MAX) {
        snprintf(buf, len, "m=%d needs %lld row blocks of %d, over the grid limit %lld", m, rows, v.bm, GRID_YZ_MAX);
        return buf;
    }
    if (cols > GRID_X_MAX || v.splitk > GRID_YZ_MAX) {
        snprintf(buf, len, "n=%d over the grid limit", n);
        return buf;
    }
    if (v.splitk > 1 && ceil_div((long long)m * n, KT_GEMM_REDUCE_THREADS) > GRID_X_MAX) {
        snprintf(buf, len, "m*n=%lld over the split-K reduce's grid limit", (long long)m * n);
        return buf;
    }
    return NULL;
}

static long long gemm_workspace_bytes(const kt_variant *var, const kt_problem *p, int units, int i)
{
    kt_gemm_variant v = kt_gemm_variant_of(var);
    if (i != 0 || !kt_gemm_uses_workspace(&v)) return 0;
    return kt_gemm_partials_needed(&v, DIM(p, M), DIM(p, N), units) * (long long)sizeof(float);
}

static long long gemm_workspace_poison_bytes(int i, long long bytes)
{
    return i == 0 ? kt_gemm_slab_bytes(bytes / (long long)sizeof(float)) : 0;
}

static int gemm_needs_workspace(const kt_variant *var)
{
    kt_gemm_variant v = kt_gemm_variant_of(var);
    return kt_gemm_uses_workspace(&v);
}

static int gemm_split_of(const kt_variant *v) { return v->p[KT_GEMM_P_SK]; }

static int gemm_problem_of_args(const void *args, kt_problem *p, char *err, size_t errlen)
{
    const kt_gemm_args *a = args;
    memset(p, 0, sizeof *p);
    p->op = &kt_op_gemm;
    if (!a->a || !a->w || !a->c)
        return snprintf(err, errlen, "gemm: NULL %s", !a->a ? "a" : !a->w ? "w" : "c"), KT_EINVAL;
    if (a->m < 1 || a->n < 1 || a->k < 1)
        return snprintf(err, errlen, "gemm: m=%d n=%d k=%d: every dimension must be >= 1", a->m, a->n, a->k), KT_EINVAL;
    if (a->lda < a->k || a->ldw < a->k || a->ldc < a->n)
        return snprintf(err, errlen, "gemm: lda=%d ldw=%d ldc=%d: need lda >= k=%d, ldw >= k, ldc >= n=%d", a->lda,
                        a->ldw, a->ldc, a->k, a->n), KT_EINVAL;
    p->dim[KT_GEMM_D_N] = a->n;
    p->dim[KT_GEMM_D_K] = a->k;
    p->dim[KT_GEMM_D_M] = a->m;
    return KT_OK;
}

static void gemm_bind(void *args, const kt_variant *var, const kt_problem *p, int units, void *const *workspace,
                      const long long *workspace_bytes)
{
    kt_gemm_args *a = args;
    kt_gemm_variant v = kt_gemm_variant_of(var);
    a->partials = workspace ? workspace[0] : NULL;
    a->partials_elems = a->partials ? workspace_bytes[0] / (long long)sizeof(float) : 0;
    a->k_per_split = kt_gemm_k_per_split(DIM(p, K), v.splitk, v.bk);
}

/* ---- the law ---- */

static law_gemm_candidate law_candidate(const kt_candidate *c)
{
    kt_gemm_variant v = kt_gemm_variant_of(&c->v);
    law_gemm_candidate l = {v.bm, v.bn, v.bk, v.wm, v.wn, v.splitk, c->waves_per_simd};
    return l;
}

/* The law ranks every template's candidates by their estimated time (runtime/law_gemm.c); the
 * dense-only tile rule of law.c remains for a database whose kernels carry no law class. */
static int gemm_law_pick(const law_device *d, const kt_candidate *c, int n, const kt_problem *p)
{
    int pick = law_gemm_pick(d, c, n, p);
    if (pick >= 0) return pick;
    law_gemm_candidate l[1024];
    int count = n < 1024 ? n : 1024;
    for (int i = 0; i < count; i++) l[i] = law_candidate(&c[i]);
    return law_pick_gemm(d, l, count, DIM(p, M), DIM(p, N), DIM(p, K));
}

static int gemm_prune(const law_device *d, const kt_candidate *c, int n, const kt_problem *p, int law_idx, int *keep)
{
    return law_gemm_prune(d, c, n, p, law_idx, keep);
}

/* ---- verification ---- */

static int is_fp16(const kt_problem *p) { return p->dtype == 1; }

static int gemm_buffers(const kt_problem *p, kt_op_buffer out[KT_OP_MAX_BUFFERS])
{
    size_t m = (size_t)DIM(p, M), n = (size_t)DIM(p, N), k = (size_t)DIM(p, K);
    out[0] = (kt_op_buffer){"a", KT_BUF_IN, m * k * 2};
    out[1] = (kt_op_buffer){"w", KT_BUF_IN, n * k * 2};
    out[2] = (kt_op_buffer){"c", KT_BUF_OUT, m * n * 2};
    return 3;
}

static void gemm_fill(const kt_problem *p, int i, void *host, size_t bytes, uint64_t *rng)
{
    uint16_t *h = host;
    for (size_t e = 0; e < bytes / 2; e++) h[e] = kt_rand_input(is_fp16(p), rng);
}

static void gemm_args_for(void *args, const kt_problem *p, void *const *buffers)
{
    kt_gemm_args *a = args;
    memset(a, 0, sizeof *a);
    a->a = buffers[0];
    a->w = buffers[1];
    a->c = buffers[2];
    a->m = DIM(p, M);
    a->n = DIM(p, N);
    a->k = DIM(p, K);
    a->lda = a->ldw = a->k;
    a->ldc = a->n;
}

static size_t gemm_ref_count(const kt_problem *p) { return (size_t)DIM(p, M) * (size_t)DIM(p, N); }

static double elem(const kt_problem *p, uint16_t h) { return is_fp16(p) ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }

static void gemm_ref_cpu(const kt_problem *p, void *const *host, double *ref)
{
    const uint16_t *a = host[0], *w = host[1];
    int m = DIM(p, M), n = DIM(p, N), k = DIM(p, K);
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0;
            for (int kk = 0; kk < k; kk++) acc += elem(p, a[(size_t)i * k + kk]) * elem(p, w[(size_t)j * k + kk]);
            ref[(size_t)i * n + j] = acc;
        }
}

static const char *gemm_ref_gpu_name(const kt_problem *p, char *buf, size_t len)
{
    snprintf(buf, len, "kt_gemm_ref_%s", gemm_dtypes[p->dtype]);
    return buf;
}

/* templates/ref/gemm_ref.hip: a 16 x 16 output tile a block of 256, double accumulation. */
static kt_launch_dims gemm_ref_gpu_launch(const kt_problem *p, void *args, void *const *buffers, void *ref_out)
{
    gemm_args_for(args, p, buffers);
    ((kt_gemm_args *)args)->c = ref_out;
    kt_launch_dims d = {{(unsigned)ceil_div(DIM(p, N), 16), (unsigned)ceil_div(DIM(p, M), 16), 1}, {256, 1, 1}, 0};
    return d;
}

static double gemm_rel_error(const kt_problem *p, void *const *host, const double *ref)
{
    const uint16_t *c = host[2];
    size_t count = gemm_ref_count(p);
    double num = 0, den = 0;
    for (size_t i = 0; i < count; i++) {
        double o = elem(p, c[i]);
        if (!isfinite(o)) return NAN;
        double d = o - ref[i];
        num += d * d;
        den += ref[i] * ref[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* A few output roundings (2^-8 bf16, 2^-9 fp16): far above fp32 accumulation error at LLM K, far
 * below any indexing or fragment-layout bug, which lands near 1. */
static double gemm_error_bound(int dtype) { return dtype == 1 ? 0x1p-9 : 0x1p-8; }

static double gemm_bytes_moved(const kt_problem *p)
{
    double m = DIM(p, M), n = DIM(p, N), k = DIM(p, K);
    return 2.0 * (m * k + n * k + m * n);
}

static double gemm_flops(const kt_problem *p) { return 2.0 * DIM(p, M) * (double)DIM(p, N) * DIM(p, K); }

/* One problem per distinct linear shape of the rank (tuner/model.c's sharding). */
static int gemm_from_model(const kt_model_shape *m, kt_op_model_problem *out, int max, char *err, size_t errlen)
{
    int dt = kt_op_dtype_index(&kt_op_gemm, m->dtype);
    if (dt < 0) return snprintf(err, errlen, "gemm: dtype '%s' (bf16 or fp16)", m->dtype ? m->dtype : "?"), -1;
    int n = 0;
    for (int i = 0; i < m->nlinear && n < max; i++, n++) {
        memset(&out[n], 0, sizeof out[n]);
        out[n].p.op = &kt_op_gemm;
        out[n].p.dtype = dt;
        out[n].p.dim[KT_GEMM_D_N] = m->linear[i].n;
        out[n].p.dim[KT_GEMM_D_K] = m->linear[i].k;
        out[n].p.dim[KT_GEMM_D_M] = 1;
        snprintf(out[n].layers, sizeof out[n].layers, "%s", m->linear[i].layers);
        out[n].calls = m->linear[i].count;
    }
    return n;
}

/* Ragged and model shapes: (n, k, m). */
static const long long gemm_ref_checks[][KT_OP_MAX_DIMS] = {
    {1536, 4096, 1}, {100, 77, 7}, {1024, 1024, 64}, {520, 1000, 300}, {4096, 3584, 33}, {257, 4099, 129},
};

const kt_op kt_op_gemm = {
    .name = "gemm",
    .summary = "C[m][n] = A[m][k] . W[n][k]^T (F.linear), bf16/fp16, fp32 accumulation",
    .dtypes = gemm_dtypes,
    .ndtypes = 2,
    .dims = gemm_dims,
    .ndims = KT_GEMM_NDIMS,
    .decode_edge = 64,
    .params = gemm_params,
    .nparams = KT_GEMM_NPARAMS,
    .args_size = sizeof(kt_gemm_args),
    .launches = gemm_launches,
    .misfit = gemm_misfit,
    .nworkspaces = 1,
    .workspace_names = gemm_workspaces,
    .workspace_bytes = gemm_workspace_bytes,
    .workspace_poison_bytes = gemm_workspace_poison_bytes,
    .needs_workspace = gemm_needs_workspace,
    .split_of = gemm_split_of,
    .problem_of_args = gemm_problem_of_args,
    .bind = gemm_bind,
    .law_pick = gemm_law_pick,
    .prune = gemm_prune,
    .buffers = gemm_buffers,
    .fill = gemm_fill,
    .args_for = gemm_args_for,
    .ref_count = gemm_ref_count,
    .ref_cpu = gemm_ref_cpu,
    .ref_gpu_name = gemm_ref_gpu_name,
    .ref_gpu_launch = gemm_ref_gpu_launch,
    .rel_error = gemm_rel_error,
    .error_bound = gemm_error_bound,
    .bytes_moved = gemm_bytes_moved,
    .flops = gemm_flops,
    .cold_decode = 1,
    .ref_checks = gemm_ref_checks,
    .nref_checks = (int)(sizeof gemm_ref_checks / sizeof gemm_ref_checks[0]),
    .from_model = gemm_from_model,
};
