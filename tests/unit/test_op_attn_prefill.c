/* test_op_attn_prefill.c: the attn_prefill descriptor (runtime/op_attn_prefill.c) on the CPU.
 *  - keys: the text round trip of several bucketed dimensions (qlen, batch, ctx), zero-valued
 *    static ones, a value between edges refused naming it;
 *  - problem_of_args reads back the problem args_for wrote (a window's ctx its visible keys), and
 *    refuses bad structs naming the field (the checks shared with attn_decode, with this op's name);
 *  - the verification sets: ragged query lengths (not multiples of a tile), a sequence with no
 *    cached prefix, cached prefixes elsewhere, query_start_loc their prefix sums;
 *  - a host emulation of prefill.hip's arithmetic (its row blocks over the GQA-folded rows, the KV
 *    loop from the first row's window start to the last row's causal limit, keys past it
 *    rereading the last one, tiles every row sees whole left unmasked, online softmax in log2
 *    units, P rounded to P V's type, one division at the end) over the descriptor's own sets, against its float64 reference within its
 *    bound: GQA, chunked prefill, windows, soft-cap, sinks, fp8 caches, BM 64 / 128, BN 32 / 64;
 *    and emulations with a planted bug (no rescale, the loop one key short of the diagonal, a
 *    straddling tile taken as whole, a window one key short, the sink dropped, heads of a row
 *    swapped) are told apart;
 *  - launches: the grid covers the longest sequence's row blocks; the law picks a candidate
 *    compiled for the head size and a smaller BM for a short prompt. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kt_test.h"
#include "op_attn_prefill.h"
#include "ktrt.h"
#include "law.h"
#include "target.h"
#include "../tuner/half_convert.h"

static const kt_op *op = &kt_op_attn_prefill;
enum { DT_BF16, DT_FP16, DT_BF16_E4M3, DT_FP16_E4M3 };

static kt_problem prob(int dtype, int d, int g, int hkv, int bs, int win, int cap, int sink, int qlen, int batch, int ctx)
{
    kt_problem p;
    memset(&p, 0, sizeof p);
    p.op = op;
    p.dtype = dtype;
    long long *x = p.dim;
    x[KT_PREFILL_D_D] = d; x[KT_PREFILL_D_G] = g; x[KT_PREFILL_D_HKV] = hkv; x[KT_PREFILL_D_BS] = bs;
    x[KT_PREFILL_D_WIN] = win; x[KT_PREFILL_D_CAP] = cap; x[KT_PREFILL_D_SINK] = sink;
    x[KT_PREFILL_D_QLEN] = qlen; x[KT_PREFILL_D_BATCH] = batch; x[KT_PREFILL_D_CTX] = ctx;
    return p;
}

static kt_variant var(int d, int bm, int bn, int nw, int occupancy)
{
    kt_variant v;
    memset(&v, 0, sizeof v);
    v.p[KT_PREFILL_P_D] = d; v.p[KT_PREFILL_P_BM] = bm; v.p[KT_PREFILL_P_BN] = bn; v.p[KT_PREFILL_P_NW] = nw;
    v.p[KT_PREFILL_P_WD] = 1;
    v.occupancy = occupancy;
    return v;
}

static void test_keys(void)
{
    kt_problem p = prob(DT_FP16_E4M3, 128, 4, 8, 16, 0, 50, 0, 300, 3, 5000), back;
    char key[200], err[200];
    KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0);
    KT_CHECK(strcmp(key, "attn_prefill fp16_e4m3 d=128 g=4 hkv=8 bs=16 win=0 cap=50 sink=0 qlen<=512 batch<=4 ctx<=8192") == 0);
    KT_CHECK(kt_problem_parse(key, &back, err, sizeof err) == 0);
    KT_CHECK(back.op == op && back.dtype == DT_FP16_E4M3 && back.dim[KT_PREFILL_D_QLEN] == 512 &&
             back.dim[KT_PREFILL_D_BATCH] == 4 && back.dim[KT_PREFILL_D_CTX] == 8192 && back.dim[KT_PREFILL_D_WIN] == 0 &&
             back.dim[KT_PREFILL_D_CAP] == 50);
    KT_CHECK(kt_problem_parse("attn_prefill bf16 d=128 g=4 hkv=8 bs=16 win=0 cap=0 sink=0 qlen<=300 batch<=4 ctx<=8192", &back,
                              err, sizeof err) != 0);
    KT_CHECK(strstr(err, "qlen<=300") != NULL);
    /* the edges' ends: a one-token chunk takes the first qlen edge, a huge prompt the last */
    p.dim[KT_PREFILL_D_QLEN] = 1;
    p.dim[KT_PREFILL_D_BATCH] = 1000;
    KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0 && strstr(key, "qlen<=16 batch<=64 ") != NULL);
    p.dim[KT_PREFILL_D_QLEN] = 100000;
    KT_CHECK(kt_problem_key(&p, key, sizeof key) > 0 && strstr(key, "qlen<=8192") != NULL);
    KT_CHECK(strcmp(kt_problem_phase(&p), "prefill") == 0);
}

static void test_args(void)
{
    kt_problem p = prob(DT_BF16, 128, 4, 2, 16, 128, 30, 1, 40, 3, 500), got;
    void *bufs[KT_OP_MAX_BUFFERS];
    for (int i = 0; i < KT_OP_MAX_BUFFERS; i++) bufs[i] = (void *)(uintptr_t)(0x1000 * (i + 1));
    kt_attn_args a;
    op->args_for(&a, &p, bufs);
    char err[256];
    KT_CHECK(op->problem_of_args(&a, &got, err, sizeof err) == KT_OK);
    KT_CHECK(got.op == op);
    /* every dimension read back, but a windowed layer's context: window + qlen - 1 keys at most */
    for (int i = 0; i < KT_PREFILL_NDIMS; i++) KT_CHECK(got.dim[i] == (i == KT_PREFILL_D_CTX ? 128 + 40 - 1 : p.dim[i]));
    for (int i = 0; i < 12; i++) {
        kt_attn_args b = a;
        const char *field = NULL;
        switch (i) {
        case 0: b.q = NULL; field = "q is NULL"; break;
        case 1: b.num_heads = 7; field = "num_heads"; break;
        case 2: b.head_size = 100; field = "head_size"; break;
        case 3: b.bt_stride = 1; field = "bt_stride"; break;
        case 4: b.v_stride_head = 24; field = "v_stride_head"; break;
        case 5: b.window = -1; field = "window"; break;
        case 6: b.max_query_len = b.num_tokens + 1; field = "max_query_len"; break;
        case 7: b.query_start_loc = NULL; field = "query_start_loc"; break;
        case 8: b.softcap = -1.0f; field = "softcap"; break;
        case 9: b.block_size = 1; field = "block_size"; break;
        case 10: b.k_cache = (const char *)b.k_cache + 8; field = "k_cache is not 16-byte aligned"; break;
        case 11: b.num_tokens = b.num_seqs * b.max_query_len + 1; field = "num_tokens"; break;
        }
        err[0] = 0;
        KT_CHECK(op->problem_of_args(&b, &got, err, sizeof err) == KT_EINVAL);
        KT_CHECK(strstr(err, field) != NULL && strncmp(err, "attn_prefill: ", 14) == 0);
    }
}

static void test_sets(void)
{
    kt_problem p = prob(DT_BF16, 64, 4, 2, 16, 0, 0, 0, 77, 6, 300);
    int fresh = 0, cached = 0, ragged = 0;
    for (int i = 0; i < 6; i++) {
        const int q = kt_prefill_qlen_of(&p, i), len = kt_prefill_seq_len_of(&p, i);
        KT_CHECK(q >= 1 && q <= 77 && len >= q && len <= 300);
        fresh += len == q;
        cached += len > q;
        ragged += q % 16 != 0;
    }
    KT_CHECK(kt_prefill_qlen_of(&p, 0) == 77 && kt_prefill_seq_len_of(&p, 0) == 300);
    KT_CHECK(fresh >= 1 && cached >= 4 && ragged >= 4);
    /* a prompt longer than the ctx bucket: its keys are its tokens */
    p = prob(DT_BF16, 64, 4, 2, 16, 0, 0, 0, 500, 2, 100);
    KT_CHECK(kt_prefill_seq_len_of(&p, 0) == 500);
}

/* ---- a host emulation of prefill.hip ---- */

enum { BUG_NONE, BUG_NO_RESCALE, BUG_CAUSAL_SHORT, BUG_WHOLE, BUG_WINDOW, BUG_SINK, BUG_HEAD, BUG_SEGMENT_TILES, BUG_SINK_TWICE };

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
    int bm, bn, bug;
} emu;

static float kv_at(const emu *e, const void *cache, int seq, int j, int kvh, int d)
{
    const kt_attn_args *a = e->a;
    const int32_t *bt = e->h[4];
    const long long off = (long long)bt[(long long)seq * a->bt_stride + j / a->block_size] * a->k_stride_block +
                          (long long)(j % a->block_size) * a->k_stride_slot + (long long)kvh * a->k_stride_head + d;
    const int kv8 = e->p->dtype >= DT_BF16_E4M3, fp16 = e->p->dtype == DT_FP16 || e->p->dtype == DT_FP16_E4M3;
    return kv8 ? e4m3(((const uint8_t *)cache)[off]) : to_f(fp16, ((const uint16_t *)cache)[off]);
}

/* Block (kv head, row block, sequence, segment) as prefill.hip computes it, a row at a time (the
 * order of a row's fp32 sums differs from the kernel's butterflies, which the bound absorbs); with
 * a->num_segments > 1 into a->partials, as templates/abi/attn.h lays them out. */
static void emu_block(const emu *e, int kvh, int rb, int seq, int seg)
{
    const kt_attn_args *a = e->a;
    const int fp16 = e->p->dtype == DT_FP16 || e->p->dtype == DT_FP16_E4M3;
    const int pf16 = fp16 || e->p->dtype == DT_BF16_E4M3;   /* P V in f16 with an fp8 cache (attn/dtype.h) */
    const int g = a->num_heads / a->num_kv_heads, d = a->head_size, bm = e->bm, bn = e->bn;
    const int32_t *lens = e->h[5], *qsl = e->h[6];
    const float *sinks = a->sinks && e->bug != BUG_SINK ? e->h[7] : NULL;
    const uint16_t *q = e->h[0];
    const int q0 = qsl[seq], qlen = qsl[seq + 1] - q0, rows = g * qlen, ctx = lens[seq] - qlen;
    const int row0 = rb * bm;
    if (row0 >= rows) return;
    const int last = (row0 + bm < rows ? row0 + bm : rows) - 1;
    const int pos_first = ctx + row0 / g, pos_last = ctx + last / g;
    const int win = a->window + (e->bug == BUG_WINDOW ? -1 : 0);
    const int vis_lo = win > 0 && pos_first - win + 1 > 0 ? pos_first - win + 1 : 0;
    const int vis_hi = pos_last + 1 - (e->bug == BUG_CAUSAL_SHORT);
    const int nseg = a->num_segments;
    const int per = ((vis_hi - vis_lo + nseg - 1) / nseg + (e->bug == BUG_SEGMENT_TILES ? 0 : bn - 1)) / bn * bn;
    const int kv_lo = vis_lo + seg * per < vis_hi ? vis_lo + seg * per : vis_hi;
    const int kv_hi = kv_lo + per < vis_hi ? kv_lo + per : vis_hi;
    const float log2e = 1.4426950408889634f;
    const int capped = a->softcap > 0.0f;
    const float score_scale = a->scale * a->k_scale * (capped ? 1.0f : log2e);
    float *o = calloc((size_t)d, sizeof *o), *s = calloc((size_t)bn, sizeof *s);
    for (int r = 0; r < bm; r++) {
        const int rg = row0 + r;
        if (rg >= rows) continue;   /* its row sees nothing and writes nothing */
        const int pos = ctx + rg / g;
        const int h = kvh * g + (e->bug == BUG_HEAD ? (rg + 1) % g : rg % g);
        const uint16_t *qr = q + (long long)(q0 + rg / g) * a->q_stride_tok + (long long)h * a->q_stride_head;
        const int sink = sinks && (nseg == 1 || e->bug == BUG_SINK_TWICE);   /* split: the reduce's */
        float m = sink ? sinks[kvh * g + rg % g] * log2e : -INFINITY, l = sink ? 1.0f : 0.0f;
        memset(o, 0, (size_t)d * sizeof *o);
        for (int j0 = kv_lo; j0 < kv_hi; j0 += bn) {
            const int whole = row0 + bm <= rows && j0 + bn - 1 <= (e->bug == BUG_WHOLE ? pos_last : pos_first) &&
                              (win <= 0 || pos_last - j0 < win);
            float mx = -INFINITY;
            for (int c = 0; c < bn; c++) {
                const int j = j0 + c;
                const int jl = j < kv_hi ? j : kv_hi - 1;   /* the kernel's loads reread the last key past kv_hi */
                float v = 0.0f;
                for (int x = 0; x < d; x++) v += to_f(fp16, qr[x]) * kv_at(e, a->k_cache, seq, jl, kvh, x);
                v *= score_scale;
                if (capped) v = a->softcap * tanhf(v / a->softcap) * log2e;
                if (!whole && !(j <= pos && (win <= 0 || pos - j < win))) v = -INFINITY;
                s[c] = v;
                if (v > mx) mx = v;
            }
            const float m_new = m > mx ? m : mx, base = m_new == -INFINITY ? 0.0f : m_new;
            const float al = e->bug == BUG_NO_RESCALE ? 1.0f : exp2f(m - base);
            float sum = 0.0f;
            for (int x = 0; x < d; x++) o[x] *= al;
            for (int c = 0; c < bn; c++) {
                const float pv = exp2f(s[c] - base);
                sum += pv;
                const float p16 = to_f(pf16, from_f(pf16, pv));   /* P in P V's type */
                const int jl = j0 + c < kv_hi ? j0 + c : kv_hi - 1;
                for (int x = 0; x < d; x++) o[x] += p16 * kv_at(e, a->v_cache, seq, jl, kvh, x);
            }
            l = l * al + sum;
            m = m_new;
        }
        const int tok = q0 + rg / g, hw = kvh * g + rg % g;
        if (nseg > 1) {
            const long long row = (long long)tok * a->num_heads + hw;
            a->partials[(row * nseg + seg) * 2] = m;
            a->partials[(row * nseg + seg) * 2 + 1] = l;
            float *acc = a->partials + 2LL * a->num_tokens * a->num_heads * nseg + (row * nseg + seg) * d;
            for (int x = 0; x < d; x++) acc[x] = o[x] * a->v_scale;
            continue;
        }
        const float inv = l > 0.0f ? a->v_scale / l : 0.0f;
        for (int x = 0; x < d; x++)
            ((uint16_t *)e->h[1])[(long long)tok * a->o_stride_tok + (long long)hw * a->o_stride_head + x] = from_f(fp16, o[x] * inv);
    }
    free(o);
    free(s);
}

/* reduce.h's merge of a row's segments: weights 2^(m_s - M) over the segments that saw a key,
 * the sink's term once */
static void emu_reduce(const emu *e)
{
    const kt_attn_args *a = e->a;
    const int nseg = a->num_segments, d = a->head_size, fp16 = e->p->dtype == DT_FP16 || e->p->dtype == DT_FP16_E4M3;
    const float *sinks = a->sinks && e->bug != BUG_SINK ? e->h[7] : NULL;
    for (long long row = 0; row < (long long)a->num_tokens * a->num_heads; row++) {
        const float *ml = a->partials + row * nseg * 2;
        const float *acc = a->partials + 2LL * a->num_tokens * a->num_heads * nseg + row * nseg * d;
        const int h = (int)(row % a->num_heads);
        const float sink = sinks ? sinks[h] * 1.4426950408889634f : -INFINITY;
        float mx = sink, l = 0.0f;
        for (int sg = 0; sg < nseg; sg++)
            if (ml[2 * sg + 1] > 0.0f && ml[2 * sg] > mx) mx = ml[2 * sg];
        for (int sg = 0; sg < nseg; sg++) l += ml[2 * sg + 1] > 0.0f ? ml[2 * sg + 1] * exp2f(ml[2 * sg] - mx) : 0.0f;
        if (sinks) l += exp2f(sink - mx);
        for (int x = 0; x < d; x++) {
            float sum = 0.0f;
            for (int sg = 0; sg < nseg; sg++)
                if (ml[2 * sg + 1] > 0.0f) sum += acc[(long long)sg * d + x] * exp2f(ml[2 * sg] - mx);
            ((uint16_t *)e->h[1])[(row / a->num_heads) * a->o_stride_tok + (long long)h * a->o_stride_head + x] =
                from_f(fp16, l > 0.0f ? sum / l : 0.0f);
        }
    }
}

/* The emulated kernel's error against the reference on the descriptor's own verification set,
 * over the grid launches() gives, with nseg segments (1: none; else forced, as bind may clamp) */
static double emulate(const kt_problem *p, int bm, int bn, int bug, int nseg)
{
    kt_op_buffer b[KT_OP_MAX_BUFFERS];
    const int nb = op->buffers(p, b);
    void *h[KT_OP_MAX_BUFFERS] = {0};
    uint64_t rng = 777;
    for (int i = 0; i < nb; i++) {
        h[i] = calloc(1, b[i].bytes ? b[i].bytes : 1);
        if (b[i].role & KT_BUF_IN) op->fill(p, i, h[i], b[i].bytes, &rng);
    }
    double *ref = malloc(op->ref_count(p) * sizeof *ref);
    op->ref_cpu(p, h, ref);
    kt_attn_args a;
    op->args_for(&a, p, h);
    kt_variant v = var((int)p->dim[KT_PREFILL_D_D], bm, bn, 4, 1);
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    KT_CHECK(op->launches(&v, p, 32, 132, l) >= 1);
    const int row_blocks = (int)l[0].dims.grid[0] / a.num_kv_heads;
    KT_CHECK((int)l[0].dims.grid[1] == a.num_seqs);
    a.num_segments = nseg;
    a.partials = nseg > 1 ? calloc((size_t)a.num_tokens * a.num_heads * nseg * (a.head_size + 2), sizeof(float)) : NULL;
    emu e = {p, &a, h, bm, bn, bug};
    for (int seq = 0; seq < a.num_seqs; seq++)
        for (int x = 0; x < (int)l[0].dims.grid[0]; x++)
            for (int seg = 0; seg < nseg; seg++) emu_block(&e, x / row_blocks, row_blocks - 1 - x % row_blocks, seq, seg);
    if (nseg > 1) emu_reduce(&e);
    const double err = op->rel_error(p, h, ref);
    free(a.partials);
    free(ref);
    for (int i = 0; i < nb; i++) free(h[i]);
    return err;
}

static void test_emulation(void)
{
    /* nseg: split-KV segments (1 none; 2 and 3 uneven over the tiles; 9 leaves the short
     * sequences' last segments empty) */
    struct { int dt, d, g, hkv, bs, win, cap, sink, qlen, batch, ctx, bm, bn, nseg; } c[] = {
        {DT_BF16, 64, 4, 2, 16, 0, 0, 0, 37, 3, 120, 64, 32, 1},       /* GQA, chunked and fresh prompts */
        {DT_FP16, 64, 1, 2, 16, 0, 0, 0, 75, 3, 75, 64, 32, 1},        /* no GQA, prompts only */
        {DT_BF16, 64, 8, 1, 32, 0, 0, 0, 21, 4, 200, 128, 64, 1},      /* 168 rows: two 128-row blocks */
        {DT_BF16, 128, 2, 2, 16, 40, 0, 0, 50, 3, 160, 64, 32, 1},     /* window */
        {DT_FP16, 64, 4, 1, 16, 17, 0, 0, 30, 3, 90, 64, 64, 1},       /* window shorter than a tile */
        {DT_BF16, 64, 4, 1, 16, 0, 30, 1, 19, 3, 90, 64, 32, 1},       /* soft-cap, sinks */
        {DT_BF16_E4M3, 64, 4, 2, 16, 0, 0, 0, 33, 2, 150, 128, 32, 1}, /* fp8 cache */
        {DT_FP16_E4M3, 64, 2, 2, 16, 24, 0, 1, 40, 3, 70, 64, 64, 1},
        {DT_BF16, 64, 4, 2, 16, 0, 0, 0, 37, 3, 120, 64, 32, 2},       /* split */
        {DT_BF16, 64, 4, 1, 16, 0, 30, 1, 19, 3, 300, 64, 32, 3},      /* split, soft-cap, sinks */
        {DT_FP16, 128, 2, 2, 16, 40, 0, 0, 50, 3, 160, 64, 32, 3},     /* split, window */
        {DT_BF16_E4M3, 64, 8, 1, 16, 0, 0, 1, 8, 3, 700, 64, 32, 9},   /* speculative rows, empty segments */
    };
    for (int i = 0; i < (int)(sizeof c / sizeof c[0]); i++) {
        kt_problem p = prob(c[i].dt, c[i].d, c[i].g, c[i].hkv, c[i].bs, c[i].win, c[i].cap, c[i].sink, c[i].qlen,
                            c[i].batch, c[i].ctx);
        const double err = emulate(&p, c[i].bm, c[i].bn, BUG_NONE, c[i].nseg);
        KT_CHECK(err <= op->error_bound(p.dtype));
        if (!(err <= op->error_bound(p.dtype))) fprintf(stderr, "case %d: error %.3g over the bound %.3g\n", i, err, op->error_bound(p.dtype));
    }
    /* planted bugs are far outside the bound */
    struct { int bug, win, sink, bm, bn, nseg; } bad[] = {
        {BUG_NO_RESCALE, 0, 0, 64, 32, 1}, {BUG_CAUSAL_SHORT, 0, 0, 64, 32, 1}, {BUG_WHOLE, 0, 0, 64, 32, 1},
        {BUG_WINDOW, 8, 0, 64, 32, 1}, {BUG_SINK, 0, 1, 64, 32, 1}, {BUG_HEAD, 0, 0, 128, 64, 1},
        {BUG_SEGMENT_TILES, 0, 0, 64, 32, 3}, {BUG_SINK, 0, 1, 64, 32, 2}, {BUG_SINK_TWICE, 0, 1, 64, 32, 3},
    };
    for (int i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) {
        kt_problem p = prob(DT_BF16, 64, 4, 1, 16, bad[i].win, 0, bad[i].sink, 37, 3, 120);
        const double err = emulate(&p, bad[i].bm, bad[i].bn, bad[i].bug, bad[i].nseg);
        KT_CHECK(err > op->error_bound(p.dtype));
        if (!(err > op->error_bound(p.dtype))) fprintf(stderr, "planted bug %d: error %.3g within the bound\n", bad[i].bug, err);
    }
}

static void test_launch_law(void)
{
    kt_variant v = var(128, 128, 64, 8, 1);
    kt_problem p = prob(DT_BF16, 128, 4, 8, 16, 0, 0, 0, 1000, 5, 4096);
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 1);
    KT_CHECK(l[0].dims.grid[0] == 8 * 32 && l[0].dims.grid[1] == 5 && l[0].dims.grid[2] == 1 && l[0].dims.block[0] == 256);
    char buf[160];
    kt_problem q = p;
    q.dim[KT_PREFILL_D_D] = 64;
    KT_CHECK(op->misfit(&v, &q, 132, buf, sizeof buf) != NULL && strstr(buf, "d=64") != NULL);
    KT_CHECK(op->launches(&v, &q, 32, 132, l) == 0);
    kt_candidate c[4];
    memset(c, 0, sizeof c);
    c[0].v = var(64, 128, 64, 8, 1);
    c[1].v = var(128, 64, 32, 4, 2);
    c[2].v = var(128, 128, 64, 8, 1);
    c[3].v = var(128, 128, 32, 8, 1);
    law_device d = law_device_from_target(kt_target_find("sm_90a"), 132);
    /* a long batch fills the device either way: the larger BM, then the more keys in flight */
    KT_CHECK(op->law_pick(&d, c, 4, &p) == 2);
    /* a short prompt (g * 12 = 48 rows): 128-row blocks would be mostly idle */
    p.dim[KT_PREFILL_D_QLEN] = 12;
    KT_CHECK(op->law_pick(&d, c, 4, &p) == 1);
    p.dim[KT_PREFILL_D_D] = 96;
    KT_CHECK(op->law_pick(&d, c, 4, &p) == -1);
    /* a grid short of one block a compute unit (one sequence of 256 rows, 8 kv heads: 16 or 32
     * blocks): the smaller BM, then the larger BN, whatever fills the resident slots */
    kt_candidate e[3];
    memset(e, 0, sizeof e);
    e[0].v = var(128, 128, 32, 8, 1);
    e[1].v = var(128, 64, 64, 4, 2);
    e[2].v = var(128, 64, 32, 4, 2);
    kt_problem s = prob(DT_BF16, 128, 4, 8, 16, 0, 0, 0, 64, 1, 1024);
    KT_CHECK(op->law_pick(&d, e, 3, &s) == 1);
    KT_CHECK(op->law_pick(&d, e + 1, 2, &s) == 0);
    e[1].v.p[KT_PREFILL_P_WD] = 2;    /* d-slices lose to any WD 1 candidate */
    KT_CHECK(op->law_pick(&d, e, 3, &s) == 2);
    e[1].v.p[KT_PREFILL_P_WD] = 1;
    s.dim[KT_PREFILL_D_BATCH] = 64;   /* 1024 blocks or more: the larger BM again */
    KT_CHECK(op->law_pick(&d, e, 3, &s) == 0);
    /* a full grid (8 kv heads x 32 row blocks of 128 = 256 blocks): 97% of two slots a unit counts
     * as full as one slot a unit twice over, and at equal keys in flight the warp that owns two
     * 16-row tiles (BM128 NW4) beats the one that owns one (BM128 NW8) */
    kt_candidate f[2];
    memset(f, 0, sizeof f);
    f[0].v = var(128, 128, 64, 8, 1);
    f[1].v = var(128, 128, 32, 4, 2);
    kt_problem full = prob(DT_BF16, 128, 4, 8, 16, 0, 0, 0, 1024, 1, 4096);
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 1);
    f[1].v.occupancy = 1;             /* half the keys in flight: the BN 64 one */
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 0);
    /* a ring's copies fly ST - 1 tiles ahead: three 32-key stages keep as many keys in flight as
     * a 64-key tile, and at equal keys the eager form (Q from LDS, one row tile a warp) beats Q
     * held in registers (the H200, d256: 4-9%); with Q from LDS at two row tiles a warp, Q in
     * registers again; two stages keep fewer keys in flight */
    f[1].v = var(128, 128, 32, 8, 1);
    f[1].v.p[KT_PREFILL_P_ST] = 3;
    f[0].v.p[KT_PREFILL_P_QL] = 1;
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 0);
    f[0].v.p[KT_PREFILL_P_QL] = 0;    /* both hold Q: the fewer stages */
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 0);
    f[0].v.p[KT_PREFILL_P_QL] = 1;
    f[0].v.p[KT_PREFILL_P_NW] = 4;    /* two row tiles a warp: not the eager form, Q held wins */
    f[1].v.p[KT_PREFILL_P_NW] = 4;
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 1);
    f[0].v.p[KT_PREFILL_P_NW] = 8;
    f[1].v.p[KT_PREFILL_P_NW] = 8;
    f[1].v.p[KT_PREFILL_P_ST] = 2;
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 0);
    f[0].v = var(128, 128, 32, 8, 1);
    f[0].v.p[KT_PREFILL_P_ST] = 1;
    KT_CHECK(op->law_pick(&d, f, 2, &full) == 0);
}

/* Split-KV where the grid is short of the device: a 16-token chunk over a 32K prefix (16/2/256:
 * 128 rows, one 128-row block a kv head) takes 132 x 2 / 2 = 132 segments, capped at SEGMAX, and a
 * reduce launch; a grid with a block a compute unit none; no SEGMAX axis none; the workspace
 * sized for a key holds every problem of its buckets. */
static void test_split(void)
{
    kt_variant v = var(256, 128, 32, 8, 2);
    v.p[KT_PREFILL_P_SEGMAX] = 128;
    kt_problem p = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 16, 1, 32768);
    kt_op_launch l[KT_OP_MAX_LAUNCHES];
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 2 && l[0].dims.grid[0] == 2 && l[0].dims.grid[2] == 128);
    KT_CHECK(strcmp(l[1].suffix, "_reduce") == 0 && l[1].dims.grid[0] == 16 * 16 && l[1].dims.block[0] == 256);
    KT_CHECK(l[0].early == 0 && l[1].early == 0);   /* no PD axis: a reduce that does not wait itself */
    v.p[KT_PREFILL_P_PD] = 1;
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 2 && l[0].early == 0 && l[1].early == 1);
    v.p[KT_PREFILL_P_PD] = 0;
    p.dim[KT_PREFILL_D_BATCH] = 16;   /* 32 blocks: 8 segments */
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 2 && l[0].dims.grid[2] == 8);
    p.dim[KT_PREFILL_D_CTX] = 256;    /* a short context: 4 segments of two 32-key tiles */
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 2 && l[0].dims.grid[2] == 4);
    p = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 1024, 1, 32768);   /* 128 blocks, short of 132: 2 */
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 2 && l[0].dims.grid[2] == 2);
    p.dim[KT_PREFILL_D_QLEN] = 2048;  /* 256 blocks: no split, one launch */
    KT_CHECK(op->launches(&v, &p, 32, 132, l) == 1 && l[0].dims.grid[2] == 1);
    kt_variant none = var(256, 128, 32, 8, 2);
    none.p[KT_PREFILL_P_SEGMAX] = 1;
    p.dim[KT_PREFILL_D_QLEN] = 16;
    KT_CHECK(op->launches(&none, &p, 32, 132, l) == 1 && op->workspace_bytes(&none, &p, 132, 0) == 0);
    KT_CHECK(op->needs_workspace(&v) && !op->needs_workspace(&none));
    /* bind: the law's count where the workspace holds it, halved where it does not, none without */
    kt_problem key = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, 64, 4, 32768);
    const long long have = op->workspace_bytes(&v, &key, 132, 0);
    int fits = 1;
    for (int qlen = 33; qlen <= 64; qlen += 7)
        for (int b = 1; b <= 4; b++)
            for (int ctx = 16385; ctx <= 32768; ctx += 4096) {
                kt_problem x = prob(DT_BF16, 256, 8, 2, 16, 0, 0, 0, qlen, b, ctx);
                if (op->launches(&v, &x, 32, 132, l) < 1) { fits = 0; continue; }
                const long long need = l[0].dims.grid[2] > 1 ? (long long)qlen * b * l[0].dims.grid[2] * 16 * (256 + 2) * 4 : 0;
                fits &= need <= have;
            }
    KT_CHECK(fits && have > 0);
    kt_attn_args a;
    memset(&a, 0, sizeof a);
    a.num_tokens = 64 * 4;
    a.num_heads = 16;
    a.head_size = 256;
    float scratch[1];
    void *ws[1] = {scratch};
    long long bytes[1] = {have};
    op->bind(&a, &v, &key, 132, ws, bytes);
    KT_CHECK(a.num_segments == 8 && a.partials == (float *)scratch);   /* 32 blocks: 264 / 32 */
    bytes[0] = have / 2;                                                  /* half: 4 */
    op->bind(&a, &v, &key, 132, ws, bytes);
    KT_CHECK(a.num_segments == 4);
    bytes[0] = 0;
    op->bind(&a, &v, &key, 132, ws, bytes);
    KT_CHECK(a.num_segments == 1 && a.partials == NULL);
}

int main(void)
{
    test_keys();
    test_args();
    test_sets();
    test_emulation();
    test_launch_law();
    test_split();
    KT_TEST_END();
}
