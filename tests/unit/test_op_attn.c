/* test_op_attn.c: the attn_decode descriptor (runtime/op_attn.c) on the CPU.
 *  - keys: the text round trip, zero-valued static dimensions, every bucketed dimension snapped;
 *  - problem_of_args reads back the problem args_for wrote, and refuses bad structs naming the
 *    field;
 *  - the segment law: no split once the batch fills the device, the blocks within the resident
 *    slots (no second partial wave), the minimum
 *    tiles a segment, the SEGMAX ceiling, and a workspace bound that covers every query of a key's
 *    buckets (the allocation made at open must never be outgrown);
 *  - a host emulation of decode.hip's arithmetic (its tiles, row blocks, per-sequence segment
 *    spans, online softmax in log2 units, P rounded to P V's type, the fixed-order merge)
 *    over the descriptor's own verification sets, against its float64 reference within its bound:
 *    mixed lengths, GQA rows past 16 (several row blocks), q > 1, sliding windows, soft-cap,
 *    sinks, fp8 caches, one and several segments; and emulations with a planted bug (no rescale,
 *    a window one key short, the sink dropped) are told apart;
 *  - the law picks a candidate compiled for the head size;
 *  - the GPU reference (templates/ref/attn_ref.hip) emulated on the host over the index math and
 *    the exp/tanh/e4m3 of templates/abi/attn_ref.h it runs, from the very arguments
 *    ref_gpu_launch gives it, in its order of sums: within 1e-12 of ref_cpu at every ref_checks
 *    shape and dtype (what `kt worker --check-reference` holds the device to), and its exp and
 *    tanh within a few ulp of libm's. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kt_test.h"
#include "op_attn_prefill.h"
#include "attn_common.h"
#include "op_attn.h"
#include "ktrt.h"
#include "law.h"
#include "target.h"
#include <stdio.h>
#include "../tuner/half_convert.h"
#include "../templates/abi/attn_ref.h"

static const kt_op *op = &kt_op_attn_decode;
enum { DT_BF16, DT_FP16, DT_BF16_E4M3, DT_FP16_E4M3 };

static kt_problem prob(int dtype, int d, int g, int hkv, int bs, int win, int cap, int sink, int q, int batch, int ctx)
{
    kt_problem p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.dtype = dtype;
    long long *x = p.dim;
    x[KT_ATTN_D_D] = d; x[KT_ATTN_D_G] = g; x[KT_ATTN_D_HKV] = hkv; x[KT_ATTN_D_BS] = bs;
    x[KT_ATTN_D_WIN] = win; x[KT_ATTN_D_CAP] = cap; x[KT_ATTN_D_SINK] = sink;
    x[KT_ATTN_D_Q] = q; x[KT_ATTN_D_BATCH] = batch; x[KT_ATTN_D_CTX] = ctx;
    return p;
}

static kt_variant var(int d, int mt, int bn, int nw, int segmax, int occupancy)
{
    kt_variant v;
    memset(&v, 0, sizeof v);
    v.p[KT_ATTN_P_D] = d; v.p[KT_ATTN_P_MT] = mt; v.p[KT_ATTN_P_BN] = bn; v.p[KT_ATTN_P_NW] = nw;
    v.p[KT_ATTN_P_SEGMAX] = segmax;
    v.occupancy = occupancy;
    return v;
}

static void test_keys(void)
{
    kt_problem p = prob(DT_BF16_E4M3, 256, 8, 2, 16, 0, 0, 1, 3, 5, 3000), back;
    char key[160], err[200];
    KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0);
    KT_CHECK(strcmp(key, "attn_decode bf16_e4m3 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=1 q<=4 batch<=8 ctx<=4096") == 0);
    KT_CHECK(kt_problem_parse(key, &back, err, sizeof err) == 0);
    KT_CHECK(back.dim[KT_ATTN_D_Q] == 4 && back.dim[KT_ATTN_D_BATCH] == 8 && back.dim[KT_ATTN_D_CTX] == 4096);
    KT_CHECK(back.dim[KT_ATTN_D_WIN] == 0 && back.dtype == DT_BF16_E4M3);
    KT_CHECK(kt_problem_parse("attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=3 batch<=8 ctx<=4096", &back,
                           err, sizeof err) != 0);
    KT_CHECK(strstr(err, "q<=3") != NULL);
    /* past the last context edge: the last edge serves */
    p.dim[KT_ATTN_D_CTX] = 1 << 20;
    KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0 && strstr(key, "ctx<=131072") != NULL);
    /* the second instance (the sweep's tiebreak): the key's suffix, read back; none for GEMM */
    p.instance = 1;
    KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0 && strstr(key, "ctx<=131072 @equal") != NULL);
    KT_CHECK(kt_problem_parse(key, &back, err, sizeof err) == 0 && back.instance == 1 && back.dim[KT_ATTN_D_CTX] == 131072);
    KT_CHECK(kt_problem_parse("attn_decode bf16 d=256 g=8 hkv=2 bs=16 win=0 cap=0 sink=0 q<=4 batch<=8 ctx<=4096 @mixed",
                              &back, err, sizeof err) != 0 && strstr(err, "@mixed") != NULL);
    KT_CHECK(kt_problem_parse("gemm bf16 n=1536 k=4096 m<=64 @equal", &back, err, sizeof err) != 0);
    KT_CHECK(kt_problem_parse("gemm bf16 n=1536 k=4096 m<=64", &back, err, sizeof err) == 0 && back.instance == 0);
    back.instance = 1;
    KT_CHECK(kt_problem_key(&back, key, sizeof key) < 0);
}

/* the second instance's batch: every sequence at the bucket's length and rows; the first mixes them */
/* libktrt's nearest-bucket step: another batch or context may serve, other query rows may not */
static void test_bucket_serves(void)
{
    const kt_problem key = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 4, 8, 32768);
    kt_problem t = key;
    KT_CHECK(kt_op_bucket_serves(op, &t, &key));
    t.dim[KT_ATTN_D_BATCH] = 16;
    t.dim[KT_ATTN_D_CTX] = 16384;
    KT_CHECK(kt_op_bucket_serves(op, &t, &key));
    t.dim[KT_ATTN_D_Q] = 1;
    KT_CHECK(!kt_op_bucket_serves(op, &t, &key));
    t.dim[KT_ATTN_D_Q] = 8;
    KT_CHECK(!kt_op_bucket_serves(op, &t, &key));
}

static void test_second_instance(void)
{
    kt_problem p = prob(DT_BF16, 128, 4, 2, 16, 0, 0, 0, 4, 8, 4096);
    kt_op_buffer b[KT_OP_MAX_BUFFERS];
    int nb = op->buffers(&p, b);
    KT_CHECK(nb > KT_ATTN_B_QSL);
    int32_t lens[8], qsl[9];
    uint64_t rng = 1;
    op->fill(&p, KT_ATTN_B_LENS, lens, sizeof lens, &rng);
    op->fill(&p, KT_ATTN_B_QSL, qsl, sizeof qsl, &rng);
    int mixed = 0;
    for (int i = 1; i < 8; i++) mixed += lens[i] != 4096 || qsl[i + 1] - qsl[i] != 4;
    KT_CHECK(mixed > 0);
    p.instance = 1;
    nb = op->buffers(&p, b);
    KT_CHECK(nb > KT_ATTN_B_QSL && b[KT_ATTN_B_LENS].bytes == sizeof lens && b[KT_ATTN_B_QSL].bytes == sizeof qsl);
    op->fill(&p, KT_ATTN_B_LENS, lens, sizeof lens, &rng);
    op->fill(&p, KT_ATTN_B_QSL, qsl, sizeof qsl, &rng);
    for (int i = 0; i < 8; i++) KT_CHECK(lens[i] == 4096 && qsl[i + 1] - qsl[i] == 4);
    KT_CHECK(b[KT_ATTN_B_Q].bytes == (size_t)8 * 4 * (8 + 2 * 2) * 128 * 2);   /* 32 tokens of a fused qkv row */
}

/* ---- problem_of_args ---- */

static void test_args(void)
{
    kt_problem p = prob(DT_BF16, 128, 4, 2, 16, 128, 30, 1, 2, 3, 500), got;
    void *bufs[KT_OP_MAX_BUFFERS];
    for (int i = 0; i < KT_OP_MAX_BUFFERS; i++) bufs[i] = (void *)(uintptr_t)(0x1000 * (i + 1));
    kt_attn_args a;
    op->args_for(&a, &p, bufs);
    char err[256];
    KT_CHECK(op->problem_of_args(&a, &got, err, sizeof err) == KT_OK);
    /* every dimension read back, but a windowed layer's context: window + q - 1 keys at most */
    for (int i = 0; i < KT_ATTN_NDIMS; i++) KT_CHECK(got.dim[i] == (i == KT_ATTN_D_CTX ? 128 + 2 - 1 : p.dim[i]));
    a.softcap = 0.4f;   /* any soft-cap at all is keyed non-zero */
    KT_CHECK(op->problem_of_args(&a, &got, err, sizeof err) == KT_OK && got.dim[KT_ATTN_D_CAP] == 1);
    a.softcap = 30.0f;
    struct { const char *field; void (*spoil)(kt_attn_args *); } bad[] = {
        {"q is NULL", NULL}, {"num_heads", NULL}, {"head_size", NULL}, {"bt_stride", NULL}, {"k_stride_slot", NULL},
        {"window", NULL}, {"max_query_len", NULL}, {"scale", NULL}, {"q is not 16-byte aligned", NULL},
        {"num_tokens", NULL}, {"v_stride_slot", NULL}, {"squared must be below 2^32", NULL},
        {"times num_heads", NULL},
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        kt_attn_args b = a;
        switch (i) {
        case 0: b.q = NULL; break;
        case 1: b.num_heads = 7; break;
        case 2: b.head_size = 100; break;
        case 3: b.bt_stride = 1; break;
        case 4: b.k_stride_slot = 24; break;
        case 5: b.window = -1; break;
        case 6: b.max_query_len = 0; break;
        case 7: b.scale = 0.0f; break;
        case 8: b.q = (const char *)b.q + 8; break;
        case 9: b.num_tokens = b.num_seqs * b.max_query_len + 1; break;
        case 10: b.v_stride_slot = 1LL << 26; break;   /* 16 slots x 2^26 x 2 bytes: 2^31 */
        case 11: b.num_heads = 64 * b.num_kv_heads; b.max_query_len = 1 << 20; break;   /* 64 x 64 x 2^20 = 2^32 */
        case 12: b.num_kv_heads = 1; b.num_heads = 256; b.num_tokens = b.num_seqs = 1 << 23; break;   /* 2^31 rows */
        }
        err[0] = 0;
        KT_CHECK(op->problem_of_args(&b, &got, err, sizeof err) == KT_EINVAL);
        KT_CHECK(strstr(err, bad[i].field) != NULL);
    }
}

/* decode addresses whole 16-key groups of a page: other block sizes have no variant, by name */
static void test_block_size(void)
{
    kt_variant v = var(128, 1, 32, 4, 256, 2);
    char buf[160];
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    kt_problem p = prob(DT_BF16, 128, 4, 2, 16, 0, 0, 0, 1, 2, 500);
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL && op->launches(&v, &p, 32, 132, l) >= 1);
    p = prob(DT_BF16, 128, 4, 2, 48, 0, 0, 0, 1, 2, 500);
    KT_CHECK(op->misfit(&v, &p, 132, buf, sizeof buf) == NULL);
    p = prob(DT_BF16, 128, 4, 2, 24, 0, 0, 0, 1, 2, 500);
    const char *why = op->misfit(&v, &p, 132, buf, sizeof buf);
    KT_CHECK(why && strstr(why, "block_size=24") && op->launches(&v, &p, 32, 132, l) == 0);
}

/* ---- the segment law and its workspace ---- */

static long long segments_of(const kt_variant *v, const kt_problem *p, int units)
{
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    int n = op->launches(v, p, 32, units, l);
    return n >= 1 ? (long long)l[0].dims.grid[2] : -1;
}

static void test_law(void)
{
    const int units = 132;
    kt_variant v = var(256, 1, 32, 4, 64, 2);
    /* batch 1, 2 kv heads, a long context: 264 / 2 = 132, clamped to SEGMAX 64 */
    kt_problem p = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 1, 32768);
    KT_CHECK(segments_of(&v, &p, units) == 64);
    v.p[KT_ATTN_P_SEGMAX] = 256;
    KT_CHECK(segments_of(&v, &p, units) == 132);
    /* batch 8 at three resident blocks (fp8 d256's): 396 / 16 = 24, one wave of 384 blocks */
    v.occupancy = 3;
    p.dim[KT_ATTN_D_BATCH] = 8;
    KT_CHECK(segments_of(&v, &p, units) == 24);
    v.occupancy = 2;
    /* the batch fills the device: one segment, and no reduce launch */
    p.dim[KT_ATTN_D_BATCH] = 256;
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    KT_CHECK(op->launches(&v, &p, 32, units, l) == 1 && l[0].dims.grid[2] == 1);
    /* non-increasing in the batch, and once split every block has a resident slot */
    long long last = 1 << 30;
    for (int b = 1; b <= 256; b++) {
        p.dim[KT_ATTN_D_BATCH] = b;
        long long s = segments_of(&v, &p, units);
        KT_CHECK(s >= 1 && s <= last && (s == 1 || s * 2 * b <= (long long)units * 2));
        last = s;
    }
    /* the reduce's column slices: as few as fill the device (two blocks a unit), 32 to 256
     * columns a slice. Batch 1, 16 heads, d 256: 16 rows x 8 slices; 512 rows: whole rows; d 512
     * never over 256 columns a block; d 64 at most 2 */
    p.dim[KT_ATTN_D_BATCH] = 1;
    KT_CHECK(op->launches(&v, &p, 32, units, l) == 2 && l[1].dims.grid[0] == 16 && l[1].dims.grid[1] == 8 &&
             l[1].dims.block[0] == 256);
    p.dim[KT_ATTN_D_BATCH] = 8;            /* 128 rows: 4 slices of 64 columns, 512 blocks */
    KT_CHECK(op->launches(&v, &p, 32, units, l) == 2 && l[1].dims.grid[1] == 4);
    p.dim[KT_ATTN_D_Q] = 4;                /* 512 rows */
    KT_CHECK(op->launches(&v, &p, 32, units, l) == 2 && l[1].dims.grid[1] == 1);
    kt_variant v512 = var(512, 1, 32, 4, 256, 1);
    kt_problem p512 = prob(DT_BF16, 512, 8, 2, 16, 0, 0, 0, 4, 8, 32768);
    KT_CHECK(op->launches(&v512, &p512, 32, units, l) == 2 && l[1].dims.grid[1] == 2);
    /* the reduce waits for the main kernel itself only in a PD variant: launched early there alone */
    KT_CHECK(l[0].early == 0 && l[1].early == 0);
    kt_variant vpd = v512;
    vpd.p[KT_ATTN_P_PD] = 1;
    KT_CHECK(op->launches(&vpd, &p512, 32, units, l) == 2 && l[0].early == 0 && l[1].early == 1);
    kt_variant v64 = var(64, 1, 32, 4, 256, 4);
    kt_problem p64 = prob(DT_BF16, 64, 8, 1, 16, 0, 0, 0, 1, 1, 32768);
    KT_CHECK(op->launches(&v64, &p64, 32, units, l) == 2 && l[1].dims.grid[1] == 2);
    p.dim[KT_ATTN_D_Q] = 1;
    /* a short (windowed) range: a segment keeps at least two 32-key tiles */
    p = prob(DT_BF16, 256, 8, 2, 16, 128, 0, 0, 1, 1, 32768);
    long long s = segments_of(&v, &p, units);
    KT_CHECK(s == 2);   /* 128 visible keys: 2 segments of 64 */
    /* every query in a key's buckets fits the partials sized for the key */
    kt_problem key = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 8, 64, 32768);
    const long long have = op->workspace_bytes(&v, &key, units, 0);
    int fits = 1;
    for (int q = 5; q <= 8; q++)
        for (int b = 33; b <= 64; b++)
            for (int ctx = 16385; ctx <= 32768; ctx += 4096) {
                kt_problem x = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, q, b, ctx);
                const long long segs = segments_of(&v, &x, units);
                const long long need = segs > 1 ? (long long)q * b * segs * 16 * (256 + 2) * 4 : 0;
                if (need > have || op->workspace_bytes(&v, &x, units, 0) != have) fits = 0;
            }
    KT_CHECK(fits);
    /* small batches of a key batch<=8 need more segments than the key itself, and still fit */
    key = prob(DT_BF16, 128, 4, 8, 16, 0, 0, 0, 1, 8, 65536);
    kt_variant w = var(128, 1, 32, 4, 256, 3);
    const long long have8 = op->workspace_bytes(&w, &key, units, 0);
    for (int b = 5; b <= 8; b++) {
        kt_problem x = key;
        x.dim[KT_ATTN_D_BATCH] = b;
        const long long segs = segments_of(&w, &x, units);
        KT_CHECK((long long)b * segs * 32 * (128 + 2) * 4 <= have8);
    }
}

/* ---- a host emulation of decode.hip ---- */

enum { BUG_NONE, BUG_NO_RESCALE, BUG_WINDOW, BUG_SINK };

static float to_f(int fp16, uint16_t h) { return fp16 ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }
static uint16_t from_f(int fp16, float f) { return fp16 ? kt_f32_to_f16(f) : kt_f32_to_bf16(f); }

static float e4m3(uint8_t b)
{
    const int e = (b >> 3) & 15, m = b & 7;
    const float f = e ? ldexpf(1.0f + m / 8.0f, e - 7) : ldexpf(m / 8.0f, -6);
    return (b & 0x80) ? -f : f;
}

typedef struct emu {
    const kt_problem *p;
    const kt_attn_args *a;
    void *const *h;
    int bn, mt, nseg, bug;
    float *part;      /* [tokens][heads][nseg] {m, l}, then [tokens][heads][nseg][d] */
} emu;

static float kv_at(const emu *e, const void *cache, int seq, int j, int kvh, int d)
{
    const kt_attn_args *a = e->a;
    const int32_t *bt = e->h[4];
    const long long off = (long long)bt[(long long)seq * a->bt_stride + j / a->block_size] * a->k_stride_block +
                          (long long)(j % a->block_size) * a->k_stride_slot + (long long)kvh * a->k_stride_head + d;
    const int kv8 = e->p->dtype >= DT_BF16_E4M3, fp16 = e->p->dtype == DT_FP16 || e->p->dtype == DT_FP16_E4M3;
    /* staged to the element type (exact for e4m3) */
    return kv8 ? e4m3(((const uint8_t *)cache)[off]) : to_f(fp16, ((const uint16_t *)cache)[off]);
}

static void emu_block(const emu *e, int kvh, int rb, int seq, int seg)
{
    const kt_attn_args *a = e->a;
    const int fp16 = e->p->dtype == DT_FP16 || e->p->dtype == DT_FP16_E4M3;
    const int pf16 = fp16 || e->p->dtype == DT_BF16_E4M3;   /* P V in f16 with an fp8 cache (attn/dtype.h) */
    const int g = a->num_heads / a->num_kv_heads, m_rows = 16 * e->mt, d = a->head_size, bn = e->bn;
    const int32_t *lens = e->h[5], *qsl = e->h[6];
    const float *sinks = a->sinks ? e->h[7] : NULL;
    const uint16_t *q = e->h[0];
    const int q0 = qsl[seq], qlen = qsl[seq + 1] - q0, len = lens[seq], ctx = len - qlen;
    const int row0 = rb * m_rows;
    if (row0 >= g * qlen || seg >= e->nseg) return;   /* as the kernel: no rows, a surplus segment */
    const int win = a->window + (e->bug == BUG_WINDOW ? -1 : 0);
    /* the kernel's lower bound rounded down to 16 keys; the masks drop the keys below the window */
    const int lo = (win > 0 && ctx - win + 1 > 0 ? ctx - win + 1 : 0) & ~15;
    const int span = len - lo;
    const int per = ((span + e->nseg - 1) / e->nseg + bn - 1) / bn * bn;
    const int kv_lo = lo + seg * per, kv_hi = kv_lo + per < len ? kv_lo + per : len;
    const int with_sink = sinks && e->nseg == 1 && e->bug != BUG_SINK;
    const float log2e = 1.4426950408889634f;
    float *m = calloc((size_t)m_rows, sizeof *m), *l = calloc((size_t)m_rows, sizeof *l);
    float *o = calloc((size_t)m_rows * d, sizeof *o), *s = calloc((size_t)bn, sizeof *s);
    for (int r = 0; r < m_rows; r++) {
        const int h = kvh * g + (row0 + r) % g;
        m[r] = with_sink ? sinks[h] * log2e : -INFINITY;
        l[r] = with_sink ? 1.0f : 0.0f;
    }
    for (int j0 = kv_lo; j0 < kv_hi; j0 += bn) {
        for (int r = 0; r < m_rows; r++) {
            const int rg = row0 + r, pos = ctx + rg / g;
            const uint16_t *qr = q + (long long)(q0 + rg / g) * a->q_stride_tok + (long long)(kvh * g + rg % g) * a->q_stride_head;
            float mx = -INFINITY;
            for (int c = 0; c < bn; c++) {
                const int j = j0 + c;
                const int seen = rg < g * qlen && j < kv_hi && j <= pos && (win <= 0 || pos - j < win);
                float v = -INFINITY;
                if (seen) {
                    float dot = 0.0f;
                    for (int x = 0; x < d; x++) dot += to_f(fp16, qr[x]) * kv_at(e, a->k_cache, seq, j, kvh, x);
                    v = dot * (a->scale * a->k_scale);
                    if (a->softcap > 0.0f) v = a->softcap * tanhf(v / a->softcap);
                    v *= log2e;
                }
                s[c] = v;
                if (v > mx) mx = v;
            }
            const float m_new = m[r] > mx ? m[r] : mx, base = m_new == -INFINITY ? 0.0f : m_new;
            const float al = e->bug == BUG_NO_RESCALE ? 1.0f : exp2f(m[r] - base);
            float sum = 0.0f;
            for (int x = 0; x < d; x++) o[r * d + x] *= al;
            for (int c = 0; c < bn; c++) {
                const float pv = exp2f(s[c] - base);
                sum += pv;
                const float p16 = to_f(pf16, from_f(pf16, pv));   /* P in P V's type */
                if (p16 != 0.0f)
                    for (int x = 0; x < d; x++) o[r * d + x] += p16 * kv_at(e, a->v_cache, seq, j0 + c, kvh, x);
            }
            l[r] = l[r] * al + sum;
            m[r] = m_new;
        }
    }
    const long long rows_total = (long long)a->num_tokens * a->num_heads;
    for (int r = 0; r < m_rows; r++) {
        const int rg = row0 + r;
        if (rg >= g * qlen) continue;
        const int tok = q0 + rg / g, h = kvh * g + rg % g;
        const long long row = (long long)tok * a->num_heads + h;
        if (e->nseg > 1) {
            e->part[(row * e->nseg + seg) * 2] = m[r];
            e->part[(row * e->nseg + seg) * 2 + 1] = l[r];
        }
        for (int x = 0; x < d; x++) {
            const float v = o[r * d + x] * a->v_scale;
            if (e->nseg > 1)
                e->part[2 * rows_total * e->nseg + (row * e->nseg + seg) * d + x] = v;
            else
                ((uint16_t *)e->h[1])[(long long)tok * a->o_stride_tok + (long long)h * a->o_stride_head + x] =
                    from_f(fp16, l[r] > 0.0f ? v / l[r] : 0.0f);
        }
    }
    free(m); free(l); free(o); free(s);
}

static void emu_reduce(const emu *e)
{
    const kt_attn_args *a = e->a;
    const int fp16 = e->p->dtype == DT_FP16 || e->p->dtype == DT_FP16_E4M3, d = a->head_size, ns = e->nseg;
    const float *sinks = a->sinks && e->bug != BUG_SINK ? e->h[7] : NULL;
    const float log2e = 1.4426950408889634f;
    const long long rows_total = (long long)a->num_tokens * a->num_heads;
    for (long long row = 0; row < rows_total; row++) {
        const int h = (int)(row % a->num_heads);
        const float *ml = e->part + row * ns * 2, *acc = e->part + 2 * rows_total * ns + row * ns * d;
        float mx = sinks ? sinks[h] * log2e : -INFINITY;
        for (int s = 0; s < ns; s++)
            if (ml[2 * s + 1] > 0.0f && ml[2 * s] > mx) mx = ml[2 * s];
        /* the kernel's order: the weights and L once, the sink after the segments, each column
         * in four chains over the segments */
        float l = 0.0f, *w = calloc((size_t)ns, sizeof *w);
        for (int s = 0; s < ns; s++) {
            w[s] = ml[2 * s + 1] > 0.0f ? exp2f(ml[2 * s] - mx) : 0.0f;
            l += ml[2 * s + 1] * w[s];
        }
        if (sinks) l += exp2f(sinks[h] * log2e - mx);
        for (int x = 0; x < d; x++) {
            float part[4] = {0.0f, 0.0f, 0.0f, 0.0f}, ll = l;
            int s = 0;
            for (; s + 4 <= ns; s += 4)
                for (int u = 0; u < 4; u++) part[u] += acc[(s + u) * d + x] * w[s + u];
            for (; s < ns; s++) part[0] += acc[s * d + x] * w[s];
            const float sum = (part[0] + part[1]) + (part[2] + part[3]);
            ((uint16_t *)e->h[1])[(row / a->num_heads) * a->o_stride_tok + (long long)h * a->o_stride_head + x] =
                from_f(fp16, ll > 0.0f ? sum / ll : 0.0f);
        }
        free(w);
    }
}

/* The emulated kernel's error against the reference on the descriptor's own verification set.
 * nseg < 0: the segment count and the grid are the descriptor's (launches, then bind over the
 * workspace it asks for, on a 132-unit device), as libktrt and the worker run them. */
static double emulate(const kt_problem *p, int bn, int mt, int nseg, int bug)
{
    int grid_z = nseg;
    kt_op_buffer b[KT_OP_MAX_BUFFERS];
    const int nb = op->buffers(p, b);
    void *h[KT_OP_MAX_BUFFERS] = {0};
    uint64_t rng = 12345;
    for (int i = 0; i < nb; i++) {
        h[i] = calloc(1, b[i].bytes ? b[i].bytes : 1);
        if (b[i].role & KT_BUF_IN) op->fill(p, i, h[i], b[i].bytes, &rng);
    }
    double *ref = malloc(op->ref_count(p) * sizeof *ref);
    op->ref_cpu(p, h, ref);
    kt_attn_args a;
    op->args_for(&a, p, h);
    void *ws[1] = {NULL};
    if (nseg < 0) {
        kt_variant v = var((int)p->dim[KT_ATTN_D_D], mt, bn, 8, 256, 2);
        kt_op_launch l[KT_OP_MAX_LAUNCHES];
        KT_CHECK(op->launches(&v, p, 32, 132, l) >= 1);
        grid_z = (int)l[0].dims.grid[2];
        long long bytes = op->workspace_bytes(&v, p, 132, 0);
        ws[0] = malloc((size_t)bytes + 1);
        op->bind(&a, &v, p, 132, ws, &bytes);
        nseg = a.num_segments;
        KT_CHECK(nseg >= 1 && nseg <= grid_z);
    }
    emu e = {p, &a, h, bn, mt, nseg, bug, NULL};
    const int g = a.num_heads / a.num_kv_heads, rbs = (g * a.max_query_len + 16 * mt - 1) / (16 * mt);
    if (nseg > 1) e.part = calloc((size_t)a.num_tokens * a.num_heads * nseg * (a.head_size + 2), sizeof(float));
    for (int seq = 0; seq < a.num_seqs; seq++)
        for (int kvh = 0; kvh < a.num_kv_heads; kvh++)
            for (int rb = 0; rb < rbs; rb++)
                for (int s = 0; s < grid_z; s++) emu_block(&e, kvh, rb, seq, s);
    if (nseg > 1) emu_reduce(&e);
    const double err = op->rel_error(p, h, ref);
    free(e.part);
    free(ws[0]);
    free(ref);
    for (int i = 0; i < nb; i++) free(h[i]);
    return err;
}

static void test_emulation(void)
{
    struct { int dt, d, g, hkv, bs, win, cap, sink, q, batch, ctx, bn, mt, nseg; } c[] = {
        {DT_BF16, 64, 4, 2, 16, 0, 0, 0, 1, 3, 100, 16, 1, 1},
        {DT_BF16, 64, 4, 2, 16, 0, 0, 0, 1, 3, 100, 32, 1, 4},
        {DT_FP16, 64, 8, 1, 32, 0, 0, 0, 3, 2, 77, 16, 1, 3},       /* 24 rows: two row blocks */
        {DT_BF16, 128, 2, 2, 16, 40, 0, 0, 2, 3, 150, 16, 1, 2},    /* window */
        {DT_BF16, 64, 4, 1, 16, 0, 30, 1, 1, 2, 90, 16, 1, 1},      /* soft-cap, sinks */
        {DT_BF16, 64, 4, 1, 16, 0, 0, 1, 2, 2, 90, 16, 2, 4},       /* sinks through the reduce */
        {DT_BF16_E4M3, 64, 4, 2, 16, 0, 0, 0, 1, 2, 120, 32, 1, 2}, /* fp8 cache */
        {DT_FP16_E4M3, 64, 2, 2, 16, 24, 0, 0, 4, 2, 60, 16, 1, 1},
        {DT_BF16, 64, 4, 1, 16, 0, 0, 0, 1, 2, 40, 16, 1, 8},       /* trailing segments empty */
        /* the descriptor's own segment counts (launches, bind), q mixed, sinks through the reduce */
        {DT_BF16, 64, 4, 1, 16, 0, 0, 1, 4, 2, 3000, 32, 1, -1},
        {DT_FP16_E4M3, 128, 8, 2, 16, 100, 0, 0, 2, 3, 1500, 16, 1, -1},
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        kt_problem p = prob(c[i].dt, c[i].d, c[i].g, c[i].hkv, c[i].bs, c[i].win, c[i].cap, c[i].sink, c[i].q,
                            c[i].batch, c[i].ctx);
        const double err = emulate(&p, c[i].bn, c[i].mt, c[i].nseg, BUG_NONE);
        do { KT_CHECK(err <= op->error_bound(p.dtype)); if (!(err <= op->error_bound(p.dtype))) fprintf(stderr, "case %d: error %.3g over the bound %.3g\n", i, err, op->error_bound(p.dtype)); } while (0);
    }
    /* planted bugs are O(1) errors, not within the bound */
    kt_problem p = prob(DT_BF16, 64, 4, 2, 16, 0, 0, 0, 1, 3, 100);
    KT_CHECK(emulate(&p, 16, 1, 1, BUG_NO_RESCALE) > op->error_bound(p.dtype));
    p = prob(DT_BF16, 64, 4, 1, 16, 8, 0, 0, 1, 2, 60);
    KT_CHECK(emulate(&p, 16, 1, 1, BUG_WINDOW) > op->error_bound(p.dtype));
    p = prob(DT_BF16, 64, 4, 1, 16, 0, 0, 1, 1, 2, 60);
    KT_CHECK(emulate(&p, 16, 1, 2, BUG_SINK) > op->error_bound(p.dtype));
}

/* two candidates for the law, a then b, nothing else set */
static void pair_of(kt_candidate c[2], kt_variant a, kt_variant b)
{
    memset(c, 0, 2 * sizeof *c);
    c[0].v = a;
    c[1].v = b;
}

/* PF (the KD form's L2 prefetch of the next-but-one tile) where the grid fills at most half of the
 * units' resident slots, its twin elsewhere (also at a lower occupancy of its own). H200,
 * bench/NOTES.md, eighteenth session: 6/1/256 batch 1 256 blocks on 528 slots, 128K -6 to -8%;
 * full grids 9-12% slower. */
static void test_prefetch_pick(void)
{
    law_device d = law_device_from_target(kt_target_find("sm_90a"), 132);
    kt_variant a = var(256, 1, 16, 4, 256, 4), b = a;
    a.p[KT_ATTN_P_KD] = b.p[KT_ATTN_P_KD] = 1;
    a.p[KT_ATTN_P_RE] = b.p[KT_ATTN_P_RE] = 1;
    b.p[KT_ATTN_P_PF] = 1;
    kt_candidate c[2];
    pair_of(c, a, b);
    kt_problem p = prob(DT_BF16, 256, 6, 1, 16, 0, 0, 0, 1, 1, 32768);   /* 256 blocks */
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 1);
    p.dim[KT_ATTN_D_CTX] = 131072;
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 1);
    pair_of(c, b, a);                                                    /* not by order */
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 0);
    /* not where the segments are too short to stream (4K: 128 segments of two tiles; call 9 of the
     * eighteenth session, PF 0-2.5% slower there) */
    pair_of(c, a, b);
    p.dim[KT_ATTN_D_CTX] = 4096;
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 0);
    p.dim[KT_ATTN_D_CTX] = 131072;
    b.occupancy = 3;
    pair_of(c, a, b);
    p.dim[KT_ATTN_D_BATCH] = 2;                                          /* 512 blocks */
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 0);
    p.dim[KT_ATTN_D_BATCH] = 8;
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 0);
    p = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 1, 131072);            /* two kv heads: 512 */
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 0);
    p = prob(DT_BF16, 256, 6, 1, 16, 0, 0, 0, 4, 1, 32768);             /* 24 rows: two row blocks */
    KT_CHECK(op->law_pick(&d, c, 2, &p) == 0);
    /* not by halving the split to empty the grid: at 16/2/256 batch 1 a SEGMAX 128 prefetching
     * variant leaves 256 blocks on 528 slots, its twins of SEGMAX 256 fill 512; the fuller grid's
     * keys in flight come first (call 8 of the eighteenth session: the SEGMAX 128 one 7.5% slower
     * at 128K, 6/1/256 batch 2 likewise) */
    kt_variant a256 = a, b128 = a;
    b128.p[KT_ATTN_P_SEGMAX] = 128;
    b128.p[KT_ATTN_P_PF] = 1;
    kt_candidate t[3];
    memset(t, 0, sizeof t);
    t[0].v = b128;
    t[1].v = a256;
    t[2].v = b128;
    t[2].v.p[KT_ATTN_P_PF] = 0;
    p = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 1, 131072);
    KT_CHECK(op->law_pick(&d, t, 3, &p) == 1);
    p = prob(DT_BF16, 256, 6, 1, 16, 0, 0, 0, 1, 2, 131072);
    KT_CHECK(op->law_pick(&d, t, 3, &p) == 1);
    /* alone, a prefetching candidate still serves a full grid (the law ranks, it does not refuse) */
    p.dim[KT_ATTN_D_Q] = 1;
    p.dim[KT_ATTN_D_BATCH] = 8;
    KT_CHECK(op->law_pick(&d, c + 1, 1, &p) == 0);
}

static void test_law_pick(void)
{
    kt_candidate c[6];
    const int ds[6] = {64, 128, 256, 256, 256, 512};
    const int mts[6] = {1, 1, 1, 2, 4, 1};
    for (int i = 0; i < 6; i++) {
        memset(&c[i], 0, sizeof c[i]);
        c[i].name = "k";
        c[i].v = var(ds[i], mts[i], 32, 4, 64, 2);
    }
    law_device d = law_device_from_target(kt_target_find("sm_90a"), 132);
    kt_problem p = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 4, 4096);
    int k = op->law_pick(&d, c, 6, &p);
    KT_CHECK(k == 2);                       /* 8 rows: one 16-row tile, the least idle */
    /* 32 rows: the one-block MT2 form takes 32 segments of 128 keys, whose partials (32 rows x 4
     * bytes a column) pass 1/8 of their KV bytes; MT1 in two row blocks takes 16 */
    p.dim[KT_ATTN_D_Q] = 4;
    KT_CHECK(op->law_pick(&d, c, 6, &p) == 2);
    p.dim[KT_ATTN_D_CTX] = 65536;         /* long enough that MT2's split is light: one block */
    KT_CHECK(op->law_pick(&d, c, 6, &p) == 3);
    p.dim[KT_ATTN_D_CTX] = 4096;
    p.dim[KT_ATTN_D_D] = 96;
    KT_CHECK(op->law_pick(&d, c, 6, &p) == -1);
    /* keys in flight a compute unit first: BN 64 at 2 blocks (128) over BN 16 at 4 (64), even with
     * two row blocks; equal in flight, the smaller M tile while segments are short (4K keys over
     * 16-64 segments: under 8 tiles each), one row block once they stream (128K keys) */
    kt_candidate e[3];
    memset(e, 0, sizeof e);
    e[0].v = var(128, 2, 16, 8, 256, 4);
    e[1].v = var(128, 1, 64, 8, 256, 2);
    e[2].v = var(128, 2, 32, 8, 256, 4);
    kt_problem r = prob(DT_BF16, 128, 4, 2, 16, 0, 0, 0, 8, 4, 4096);   /* 32 rows */
    KT_CHECK(op->law_pick(&d, e, 2, &r) == 1);
    KT_CHECK(op->law_pick(&d, e, 3, &r) == 1);
    r.dim[KT_ATTN_D_CTX] = 131072;
    KT_CHECK(op->law_pick(&d, e, 3, &r) == 2);
    /* warps: more while short, fewer once streaming (the 4-warp form keeps Q and P in registers) */
    kt_candidate w[2];
    pair_of(w, var(256, 1, 32, 8, 128, 2), var(256, 1, 32, 4, 128, 2));
    kt_problem s = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 1, 4096);
    KT_CHECK(op->law_pick(&d, w, 2, &s) == 0);
    s.dim[KT_ATTN_D_BATCH] = 32;
    s.dim[KT_ATTN_D_CTX] = 32768;
    KT_CHECK(op->law_pick(&d, w, 2, &s) == 1);
    /* KD (K straight into fragments): since the softmax's vector reads the LDS form is level or
     * faster at equal keys in flight, so KD 0 is taken there; KD 1 where it keeps more keys in
     * flight (a resident block more, under the cap), not where it has half the keys a tile */
    kt_candidate r2[2];
    pair_of(r2, var(256, 1, 32, 8, 128, 2), var(256, 1, 32, 8, 128, 2));
    r2[1].v.p[KT_ATTN_P_KD] = 1;
    KT_CHECK(op->law_pick(&d, r2, 2, &s) == 0);
    r2[0].v.occupancy = 1;
    KT_CHECK(op->law_pick(&d, r2, 2, &s) == 1);
    r2[0].v.occupancy = 2;
    r2[1].v.occupancy = 1;
    KT_CHECK(op->law_pick(&d, r2, 2, &s) == 0);
    r2[1].v.occupancy = 2;
    r2[1].v.p[KT_ATTN_P_BN] = 16;
    KT_CHECK(op->law_pick(&d, r2, 2, &s) == 0);
    /* past the cap, keys in flight no longer decide: the LDS form with 256 and the KD form with 128
     * tie there, and K through LDS is taken */
    r2[0].v.occupancy = 8;
    r2[0].v.p[KT_ATTN_P_BN] = 64;
    r2[1].v.occupancy = 4;
    r2[1].v.p[KT_ATTN_P_BN] = 64;
    s.dim[KT_ATTN_D_BATCH] = 256;
    KT_CHECK(op->law_pick(&d, r2, 2, &s) == 0);
    /* an fp8 cache read by KD with a bf16 query: the LDS form first though KD keeps more keys in
     * flight (KD slower at any residency: its K to bf16 in five instructions a pair, and still
     * with S in f16, op_attn.c), which still decide with 16-bit KV and with an fp16 query */
    kt_candidate kd8[2];
    pair_of(kd8, var(256, 1, 32, 4, 128, 3), var(256, 1, 64, 4, 128, 2));   /* the H200's pair: 48 and 64 */
    kd8[1].v.p[KT_ATTN_P_KD] = 1;
    kt_problem k8 = prob(DT_BF16_E4M3, 256, 8, 2, 16, 0, 0, 0, 1, 8, 32768);
    KT_CHECK(op->law_pick(&d, kd8, 2, &k8) == 0);
    k8.dtype = DT_FP16_E4M3;
    KT_CHECK(op->law_pick(&d, kd8, 2, &k8) == 1);
    k8.dtype = DT_BF16;
    KT_CHECK(op->law_pick(&d, kd8, 2, &k8) == 1);
    /* ... and before the units with a block: at batch 2 4K a 16-key KD tile splits into segments
     * for every unit where a 64-key LDS tile leaves 4 of 132 idle; KD still loses (the H200's worst
     * law cell, +36.6% -> the LDS form; bench/NOTES.md, thirteenth session) */
    kt_candidate kd16[2];
    pair_of(kd16, var(256, 1, 64, 4, 128, 2), var(256, 1, 16, 8, 128, 2));
    kd16[1].v.p[KT_ATTN_P_KD] = 1;
    kt_problem s8 = prob(DT_BF16_E4M3, 256, 8, 2, 16, 0, 0, 0, 1, 2, 4096);
    KT_CHECK(op->law_pick(&d, kd16, 2, &s8) == 0);
    s8.dtype = DT_BF16;                     /* 16-bit: the units with a block decide, for KD's tile */
    KT_CHECK(op->law_pick(&d, kd16, 2, &s8) == 1);
    /* an fp8 cache halves a segment's KV bytes, so the same split weighs twice as much: at batch 1
     * 16K (d256, 8 rows) the 256-segment ceiling's 64-key segments lose to the 128 one's */
    kt_candidate f8[2];
    pair_of(f8, var(256, 1, 32, 4, 256, 3), var(256, 1, 32, 4, 128, 3));
    kt_problem t = prob(DT_BF16_E4M3, 256, 8, 2, 16, 0, 0, 0, 1, 1, 16384);
    KT_CHECK(op->law_pick(&d, f8, 2, &t) == 1);
    t.dtype = DT_BF16;                    /* the same split is light enough with 16-bit KV */
    KT_CHECK(op->law_pick(&d, f8, 2, &t) == 0);
    /* a grid short of the device: units with a block first. Batch 1, 2K keys, 4 kv heads: BN 64
     * splits into 16 segments (64 blocks), BN 16 into 64 (256 blocks, every unit), though BN 64
     * holds more keys in flight a unit */
    kt_candidate sh[2];
    pair_of(sh, var(128, 1, 64, 8, 256, 2), var(128, 1, 16, 8, 256, 2));
    kt_problem u = prob(DT_BF16, 128, 2, 4, 16, 0, 0, 0, 1, 1, 2048);
    KT_CHECK(op->law_pick(&d, sh, 2, &u) == 1);
    u.dim[KT_ATTN_D_BATCH] = 32;          /* both fill the device: keys in flight decide */
    u.dim[KT_ATTN_D_CTX] = 32768;
    KT_CHECK(op->law_pick(&d, sh, 2, &u) == 0);
    /* warps with more than one 16-row tile of rows: more while streaming too (32 rows: twice the
     * arithmetic a key) */
    s.dim[KT_ATTN_D_BATCH] = 32;
    s.dim[KT_ATTN_D_Q] = 4;
    w[0].v.p[KT_ATTN_P_MT] = w[1].v.p[KT_ATTN_P_MT] = 2;
    KT_CHECK(op->law_pick(&d, w, 2, &s) == 0);
    s.dim[KT_ATTN_D_Q] = 1;
    /* the ring: from d 256 passed over even with a resident block more, for one 16-row tile and
     * past it; at d 128 judged by the keys after, where its resident block more wins */
    kt_candidate rg[2];
    pair_of(rg, var(256, 1, 16, 4, 128, 3), var(256, 1, 16, 4, 128, 4));
    rg[1].v.p[KT_ATTN_P_ST] = 2;
    kt_problem w8 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 8, 32768);
    KT_CHECK(op->law_pick(&d, rg, 2, &w8) == 0);
    w8.dim[KT_ATTN_D_Q] = 4;
    rg[0].v.p[KT_ATTN_P_MT] = rg[1].v.p[KT_ATTN_P_MT] = 2;
    KT_CHECK(op->law_pick(&d, rg, 2, &w8) == 0);
    pair_of(rg, var(128, 1, 32, 4, 256, 3), var(128, 1, 32, 4, 256, 4));
    rg[1].v.p[KT_ATTN_P_ST] = 2;
    kt_problem r8 = prob(DT_BF16, 128, 4, 8, 16, 0, 0, 0, 1, 8, 32768);
    KT_CHECK(op->law_pick(&d, rg, 2, &r8) == 1);
    rg[1].v.occupancy = 3;                /* no block more: a tie, the first candidate */
    KT_CHECK(op->law_pick(&d, rg, 2, &r8) == 0);
    /* ... but not where a segment is too short to stream (fewer than ATTN_LAW_STREAM_TILES tiles:
     * bound by the block's fixed costs, which a ring's prologue does not shorten): fp8 d128 batch 1
     * 4K, where the ring BN32 NW8 ST2 took 21% longer than the register form (the H200's sweep,
     * bench/NOTES.md, seventeenth session); streaming, its resident block more still decides */
    kt_candidate sr[2];
    pair_of(sr, var(128, 1, 32, 8, 256, 4), var(128, 1, 32, 8, 256, 3));
    sr[0].v.p[KT_ATTN_P_ST] = 2;
    kt_problem s4 = prob(DT_BF16_E4M3, 128, 4, 8, 16, 0, 0, 0, 1, 1, 4096);
    KT_CHECK(op->law_pick(&d, sr, 2, &s4) == 1);
    s4.dim[KT_ATTN_D_BATCH] = 8;
    s4.dim[KT_ATTN_D_CTX] = 131072;
    KT_CHECK(op->law_pick(&d, sr, 2, &s4) == 0);
    /* an fp8 key is half a 16-bit one's bytes in flight: BN 64 at 3 blocks (96 16-bit keys' worth)
     * over BN 32 at 4 (64); with a 16-bit cache both pass the cap and the smaller tile is taken */
    kt_candidate fk[2];
    pair_of(fk, var(128, 1, 32, 4, 256, 4), var(128, 1, 64, 4, 256, 3));
    kt_problem x8 = prob(DT_BF16_E4M3, 128, 4, 8, 16, 0, 0, 0, 1, 8, 8192);
    KT_CHECK(op->law_pick(&d, fk, 2, &x8) == 1);
    x8.dtype = DT_BF16;
    KT_CHECK(op->law_pick(&d, fk, 2, &x8) == 0);
    /* the same keys in flight from more resident blocks: KD BN16 at four blocks an SM (OB 4)
     * before the register form's BN32 at two, which the later KD 0 key would take (the H200:
     * 206 against 232 us at 8/4/256 batch 8 32K; bench/NOTES.md, fourteenth session) */
    kt_candidate rb[2];
    pair_of(rb, var(256, 1, 32, 4, 256, 2), var(256, 1, 16, 4, 256, 4));
    rb[1].v.p[KT_ATTN_P_KD] = 1;
    kt_problem b8 = prob(DT_BF16, 256, 2, 4, 16, 0, 0, 0, 1, 8, 32768);
    KT_CHECK(op->law_pick(&d, rb, 2, &b8) == 1);
    rb[1].v.occupancy = 2;                /* fewer keys in flight at equal blocks: the wider tile */
    KT_CHECK(op->law_pick(&d, rb, 2, &b8) == 0);
    /* ... but not where its rows take two blocks that each read K and V: speculative q 4 at g 8
     * (32 rows) goes to one 32-row block (MT 2, two resident) before two 16-row ones at four (the
     * H200: 167 against 209 us at 16/2/256 q 4 batch 8 32K; bench/NOTES.md, fifteenth session) */
    kt_candidate sp[2];
    pair_of(sp, var(256, 2, 32, 8, 256, 2), var(256, 1, 16, 4, 256, 4));
    sp[1].v.p[KT_ATTN_P_KD] = 1;
    sp[0].v.p[KT_ATTN_P_RE] = 0;
    kt_problem q4 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 4, 8, 32768);
    KT_CHECK(op->law_pick(&d, sp, 2, &q4) == 0);
    /* decode_ws's form (not swept yet) only where decode.hip's has nothing: passed over even with
     * a resident block more, taken alone */
    kt_candidate ws[2];
    pair_of(ws, var(128, 1, 32, 4, 256, 3), var(128, 1, 16, 4, 256, 4));
    ws[1].v.p[KT_ATTN_P_WS] = 1;
    ws[1].v.p[KT_ATTN_P_ST] = 2;
    KT_CHECK(op->law_pick(&d, ws, 2, &r8) == 0);
    KT_CHECK(op->law_pick(&d, ws + 1, 1, &r8) == 0);
}

/* prefill.hip's kernels serving decode: BM rows a block (no MT), the launch's row blocks from it,
 * exactly one of MT and BM; the tuner times them only where at most half a block's row tiles idle;
 * the law puts them first for many rows over long streams (below) */
static void test_rows_form(void)
{
    const int units = 132;
    char buf[160];
    kt_variant pf = var(256, 0, 32, 4, 128, 2);
    pf.p[KT_ATTN_P_BM] = 64;
    pf.p[KT_ATTN_P_WD] = 1;
    kt_problem q8 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 8, 8, 32768);   /* 64 rows a kv head */
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    KT_CHECK(op->misfit(&pf, &q8, units, buf, sizeof buf) == NULL);
    KT_CHECK(op->launches(&pf, &q8, 32, units, l) == 2 && l[0].dims.grid[0] == 2 && l[0].dims.block[0] == 128);
    pf.p[KT_ATTN_P_BM] = 32;   /* 64 rows: two row blocks a kv head */
    KT_CHECK(op->launches(&pf, &q8, 32, units, l) >= 1 && l[0].dims.grid[0] == 4);
    pf.p[KT_ATTN_P_MT] = 2;    /* both: which is the block's rows? */
    KT_CHECK(op->misfit(&pf, &q8, units, buf, sizeof buf) != NULL && strstr(buf, "MT=2 BM=32"));
    pf.p[KT_ATTN_P_MT] = 0;
    pf.p[KT_ATTN_P_BM] = 0;    /* neither */
    KT_CHECK(op->misfit(&pf, &q8, units, buf, sizeof buf) != NULL);
    pf.p[KT_ATTN_P_BM] = 24;   /* not whole 16-row tiles */
    KT_CHECK(op->misfit(&pf, &q8, units, buf, sizeof buf) != NULL);

    /* prune: BM 128 (8 tiles) at 64 rows (4) kept, at 32 rows (2) kept at BM 64 only, at 8 rows
     * (plain decode, g 8) neither; the law's candidate always */
    law_device d = law_device_from_target(kt_target_find("sm_90a"), units);
    kt_candidate c[3];
    memset(c, 0, sizeof c);
    c[0].v = var(256, 1, 32, 4, 256, 2);
    c[1].v = c[2].v = var(256, 0, 32, 4, 128, 2);
    c[1].v.p[KT_ATTN_P_BM] = 64;
    c[2].v.p[KT_ATTN_P_BM] = 128;
    int keep[3];
    KT_CHECK(op->prune(&d, c, 3, &q8, 0, keep) == 3);
    kt_problem q4 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 4, 8, 32768);
    KT_CHECK(op->prune(&d, c, 3, &q4, 0, keep) == 2 && keep[0] && keep[1] && !keep[2]);
    kt_problem q1 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1, 8, 32768);
    KT_CHECK(op->prune(&d, c, 3, &q1, 2, keep) == 2 && keep[0] && !keep[1] && keep[2]);
    /* the law: prefill.hip's block first where a kv head's rows carry rows x d >= 32 x 256 a key
     * and the batch gives every compute unit two 64-key tiles (q 8, batch 8, 32K: 64 x 256, 4K
     * keys a unit), at most a quarter of its row tiles idle, the fewest d-slices, then the larger tile; decode.hip's below either (q 4 at
     * d 128: 32 x 128; q 8 at batch 1, 1K keys: 15 keys a unit) */
    KT_CHECK(op->law_pick(&d, c, 3, &q8) == 1);
    kt_candidate r[3];
    memset(r, 0, sizeof r);
    r[0].v = var(256, 1, 32, 4, 256, 2);
    r[1].v = r[2].v = var(256, 0, 64, 4, 128, 2);
    r[1].v.p[KT_ATTN_P_BM] = r[2].v.p[KT_ATTN_P_BM] = 64;
    r[1].v.p[KT_ATTN_P_WD] = 2;
    r[2].v.p[KT_ATTN_P_WD] = 1;
    r[1].v.p[KT_ATTN_P_BN] = 32;
    KT_CHECK(op->law_pick(&d, r, 3, &q8) == 2);
    kt_problem q4r = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 4, 8, 32768);   /* 32 rows: half of 64 idle */
    KT_CHECK(op->law_pick(&d, r, 3, &q4r) == 0);
    kt_problem g6 = prob(DT_BF16, 256, 6, 1, 16, 0, 0, 0, 8, 8, 32768);    /* 48 rows: a quarter */
    KT_CHECK(op->law_pick(&d, r, 3, &g6) == 2);
    kt_problem short8 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 8, 1, 1024);
    KT_CHECK(op->law_pick(&d, r, 3, &short8) == 0);
    kt_problem d128 = prob(DT_BF16, 128, 8, 2, 16, 0, 0, 0, 4, 8, 32768);
    r[0].v.p[KT_ATTN_P_D] = r[1].v.p[KT_ATTN_P_D] = r[2].v.p[KT_ATTN_P_D] = 128;
    KT_CHECK(op->law_pick(&d, r, 3, &d128) == 0);
    KT_CHECK(op->law_pick(&d, r + 1, 2, &d128) == 1);   /* alone, still the fewest d-slices */
    /* prefill.hip's ring at d 256 where its blocks before the split are fewer than the units
     * (q 8 batch 1: 2 kv heads, each block streams a long segment at one block a unit, its
     * ring's LDS: the H200 sweep, fifteenth session); at batch 8 the register stage, decided
     * before the ring's key by the units with a block (the ring's one block a unit splits into
     * 128 blocks, under the 132 units; the register stage's two, into 256) */
    kt_candidate pr[2];
    memset(pr, 0, sizeof pr);
    pr[0].v = pr[1].v = var(256, 0, 64, 4, 128, 2);
    pr[0].v.p[KT_ATTN_P_BM] = pr[1].v.p[KT_ATTN_P_BM] = 64;
    pr[0].v.p[KT_ATTN_P_WD] = pr[1].v.p[KT_ATTN_P_WD] = 1;
    pr[0].v.p[KT_ATTN_P_QL] = pr[1].v.p[KT_ATTN_P_QL] = 1;
    pr[1].v.p[KT_ATTN_P_ST] = 2;
    pr[1].v.occupancy = 1;
    kt_problem q8b1 = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 8, 1, 16384);
    KT_CHECK(op->law_pick(&d, pr, 2, &q8b1) == 1);
    KT_CHECK(op->law_pick(&d, pr, 2, &q8) == 0);
}

/* ---- the GPU reference, emulated ---- */

static double max_rel_ulp(double (*f)(double, const double *), double (*ref)(double), double lo, double hi, int n,
                          const double *inv)
{
    double worst = 0.0;
    for (int i = 0; i <= n; i++) {
        const double x = lo + (hi - lo) * i / n, want = ref(x), got = f(x, inv);
        if (want == 0.0) { if (got != 0.0) return INFINITY; continue; }
        const double e = fabs(got - want) / fabs(want) / 0x1p-53;
        if (e > worst) worst = e;
    }
    return worst;
}

static double ref_kv(const kt_problem *p, const void *cache, long long i)
{
    if (p->dtype == DT_BF16_E4M3 || p->dtype == DT_FP16_E4M3) return kt_attn_ref_e4m3(((const uint8_t *)cache)[i], 0);
    const uint16_t h = ((const uint16_t *)cache)[i];
    return p->dtype == DT_FP16 ? kt_f16_to_f32(h) : kt_bf16_to_f32(h);
}

/* attn_ref.hip's block `row` on the host: the same functions, the same order of every sum (the
 * max's order does not matter); `out` as the kernel's ra.out. */
static void ref_gpu_block(const kt_problem *p, const kt_attn_ref_args *ra, long long row, const double *inv, int bug)
{
    const kt_attn_args *a = &ra->a;
    kt_attn_ref_row r = kt_attn_ref_row_of(a, row);
    r.lo += bug && r.lo < r.pos;   /* planted: the window one key short */
    const int d = a->head_size, fp16 = p->dtype == DT_FP16 || p->dtype == DT_FP16_E4M3;
    const double ks = a->k_scale, vs = a->v_scale, cap = a->softcap;
    const uint16_t *qh = (const uint16_t *)a->q + (long long)r.tok * a->q_stride_tok + (long long)r.head * a->q_stride_head;
    double q[KT_ATTN_REF_MAX_D], acc[KT_ATTN_REF_MAX_D];
    for (int e = 0; e < d; e++) q[e] = fp16 ? kt_f16_to_f32(qh[e]) : kt_bf16_to_f32(qh[e]);
    double *s = malloc((size_t)(r.pos - r.lo + 1) * sizeof *s);
    double mx = -INFINITY;
    for (int j = r.lo; j <= r.pos; j++) {
        const long long off = kt_attn_ref_kv_offset(a, r.seq, j, r.kvh, a->k_stride_block, a->k_stride_slot, a->k_stride_head);
        double dot = 0.0;
        for (int e = 0; e < d; e++) dot += q[e] * ref_kv(p, a->k_cache, off + e);
        double v = dot * ks * ra->scale;
        if (cap > 0.0) v = cap * kt_attn_ref_tanh(v / cap, inv);
        s[j - r.lo] = v;
        if (v > mx) mx = v;
    }
    if (a->sinks && (double)a->sinks[r.head] > mx) mx = a->sinks[r.head];
    double l = a->sinks ? kt_attn_ref_exp((double)a->sinks[r.head] - mx, inv) : 0.0;
    for (int e = 0; e < d; e++) acc[e] = 0.0;
    for (int j = r.lo; j <= r.pos; j++) {
        const double w = kt_attn_ref_exp(s[j - r.lo] - mx, inv);
        const long long off = kt_attn_ref_kv_offset(a, r.seq, j, r.kvh, a->v_stride_block, a->v_stride_slot, a->v_stride_head);
        l += w;
        for (int e = 0; e < d; e++) acc[e] += w * ref_kv(p, a->v_cache, off + e) * vs;
    }
    for (int e = 0; e < d; e++) ra->out[row * d + e] = l > 0.0 ? acc[e] / l : 0.0;
    free(s);
}

/* The emulated GPU reference against ref_cpu on an op's check-reference shapes: the kernel reads
 * only kt_attn_args, so decode's and prefill's sets alike. */
static void ref_gpu_vs_cpu(const kt_op *o, const double *inv)
{
    KT_CHECK(o->ref_gpu_name && o->ref_gpu_launch && o->nref_checks >= 4 && o->ref_args_size == sizeof(kt_attn_ref_args));
    double worst = 0.0;
    for (int c = 0; c < o->nref_checks; c++)
        for (int dt = 0; dt < o->ndtypes; dt++) {
            kt_problem p;
            memset(&p, 0, sizeof p);
            p.op = o;
            p.dtype = dt;
            for (int i = 0; i < o->ndims; i++) p.dim[i] = o->ref_checks[c][i];
            char key[160], why[200];
            KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0 && kt_problem_check(&p, why, sizeof why) == 0);
            kt_op_buffer b[KT_OP_MAX_BUFFERS];
            const int nb = o->buffers(&p, b);
            void *h[KT_OP_MAX_BUFFERS] = {0};
            uint64_t rng = 0x5eed0000ull + (unsigned)c * 31 + (unsigned)dt;
            for (int i = 0; i < nb; i++) {
                h[i] = calloc(1, b[i].bytes ? b[i].bytes : 1);
                if (b[i].role & KT_BUF_IN) o->fill(&p, i, h[i], b[i].bytes, &rng);
            }
            const size_t n = o->ref_count(&p);
            double *cpu = malloc(n * sizeof *cpu), *gpu = malloc(n * sizeof *gpu);
            for (size_t i = 0; i < n; i++) gpu[i] = NAN;   /* every element must be written */
            o->ref_cpu(&p, h, cpu);
            kt_attn_ref_args ra;
            const kt_launch_dims L = o->ref_gpu_launch(&p, &ra, h, gpu);
            const long long rows = (long long)ra.a.num_tokens * ra.a.num_heads;
            KT_CHECK(L.grid[0] == (unsigned)rows && L.grid[1] == 1 && L.grid[2] == 1 && L.block[0] == KT_ATTN_REF_THREADS);
            KT_CHECK((size_t)rows * (size_t)ra.a.head_size == n && ra.out == gpu && ra.a.head_size <= KT_ATTN_REF_MAX_D);
            for (long long row = 0; row < (long long)L.grid[0]; row++) ref_gpu_block(&p, &ra, row, inv, 0);
            double num = 0.0, den = 0.0;
            for (size_t i = 0; i < n; i++) {
                num += (gpu[i] - cpu[i]) * (gpu[i] - cpu[i]);
                den += cpu[i] * cpu[i];
            }
            const double rel = den > 0.0 ? sqrt(num / den) : sqrt(num);
            if (c == 0 && dt == 0) {   /* the comparison sees a one-key slip */
                for (long long row = 0; row < (long long)L.grid[0]; row++) ref_gpu_block(&p, &ra, row, inv, 1);
                double bn = 0.0;
                for (size_t i = 0; i < n; i++) bn += (gpu[i] - cpu[i]) * (gpu[i] - cpu[i]);
                KT_CHECK(sqrt(bn / den) > 1e-4);
            }
            if (!(rel <= 1e-12)) fprintf(stderr, "attn_ref %s: rel diff %.3g over 1e-12\n", key, rel);
            KT_CHECK(rel <= 1e-12);
            if (!(rel <= worst)) worst = rel;
            free(cpu);
            free(gpu);
            for (int i = 0; i < nb; i++) free(h[i]);
        }
    printf("attn_ref on %s: emulated GPU reference vs ref_cpu over %d shapes x %d dtypes: worst rel diff %.3g\n", o->name,
           o->nref_checks, o->ndtypes, worst);
}

static void test_ref_gpu(void)
{
    double inv[KT_ATTN_REF_NINV];
    for (int n = 0; n < KT_ATTN_REF_NINV; n++) inv[n] = kt_attn_ref_inverse(n);
    /* the functions: softmax's arguments are <= 0 (to the subnormal edge), soft-cap's any sign, both
     * tanh branches; e4m3 against op_attn.c's decode, and fnuz one exponent down */
    const double e_exp = max_rel_ulp(kt_attn_ref_exp, exp, -708.0, 0.0, 200003, inv);   /* normal results */
    double sub = 0.0;   /* subnormal results: in units of the smallest subnormal */
    for (int i = 0; i <= 10000; i++) {
        const double x = -708.5 - 36.5 * i / 10000, e = fabs(kt_attn_ref_exp(x, inv) - exp(x)) / 0x1p-1074;
        if (e > sub) sub = e;
    }
    KT_CHECK(sub <= 1.0);
    const double e_exp_small = max_rel_ulp(kt_attn_ref_exp, exp, -2.0, 2.0, 100003, inv);
    const double e_tanh = max_rel_ulp(kt_attn_ref_tanh, tanh, -30.0, 30.0, 200003, inv);
    const double e_tanh_small = max_rel_ulp(kt_attn_ref_tanh, tanh, -0.6, 0.6, 100003, inv);
    printf("attn_ref: exp within %.2f ulp of libm (%.2f near 0, subnormal %.0f), tanh %.2f (%.2f below 0.6)\n", e_exp,
           e_exp_small, sub, e_tanh, e_tanh_small);
    KT_CHECK(e_exp <= 4.0 && e_exp_small <= 4.0 && e_tanh <= 8.0 && e_tanh_small <= 8.0);
    KT_CHECK(kt_attn_ref_exp(-800.0, inv) == 0.0 && kt_attn_ref_exp(0.0, inv) == 1.0 && isinf(kt_attn_ref_exp(710.0, inv)));
    KT_CHECK(kt_attn_ref_tanh(0.0, inv) == 0.0 && kt_attn_ref_tanh(40.0, inv) == 1.0 && kt_attn_ref_tanh(-40.0, inv) == -1.0);
    KT_CHECK(kt_attn_ref_e4m3(0x38, 0) == 1.0 && kt_attn_ref_e4m3(0x38, 1) == 0.5 && kt_attn_ref_e4m3(0x7e, 0) == 448.0);
    KT_CHECK(kt_attn_ref_e4m3(0x01, 0) == 0x1p-9 && kt_attn_ref_e4m3(0x81, 1) == -0x1p-10 && kt_attn_ref_e4m3(0x00, 0) == 0.0);

    KT_CHECK(op->ref_gpu_name && op->ref_gpu_launch && op->nref_checks >= 6);
    KT_CHECK(op->ref_args_size == sizeof(kt_attn_ref_args) && op->ref_args_size > op->args_size);
    char name[KT_OP_NAME_LEN];
    kt_problem big = prob(DT_FP16_E4M3, 1024, 1, 1, 16, 0, 0, 0, 1, 1, 64);
    KT_CHECK(op->ref_gpu_name(&big, name, sizeof name) && strcmp(name, "kt_attn_ref_fp16_e4m3") == 0);
    big.dim[KT_ATTN_D_D] = 1040;   /* over the reference's registers: the worker takes ref_cpu */
    KT_CHECK(op->ref_gpu_name(&big, name, sizeof name) == NULL);

    ref_gpu_vs_cpu(op, inv);
    ref_gpu_vs_cpu(&kt_op_attn_prefill, inv);
}

int main(void)
{
    test_keys();
    test_bucket_serves();
    test_second_instance();
    test_args();
    test_block_size();
    test_law();
    test_emulation();
    test_law_pick();
    test_prefetch_pick();
    test_rows_form();
    test_ref_gpu();
    KT_TEST_END();
}
