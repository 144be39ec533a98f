/* gdn_ref.c: the float64 reference of a gdn_decode step (gdn_ref.h; the math: templates/abi/gdn.h).
 * Compiles as C11 and as C++17 (tests/unit/test_gdn_emu.cpp includes it). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gdn_ref.h"
#include "../tuner/half_convert.h"

double kt_gdn_ref_val(unsigned short h, int fp16) { return fp16 ? kt_f16_to_f32(h) : kt_bf16_to_f32(h); }

/* through fp32, as the kernel rounds its fp32 values (a double rounded straight to 16 bits could
 * differ from the kernel's double rounding only past fp32's precision) */
double kt_gdn_ref_rnd(double x, int fp16)
{
    const float f = (float)x;
    return fp16 ? kt_f16_to_f32(kt_f32_to_f16(f)) : kt_bf16_to_f32(kt_f32_to_bf16(f));
}

static double ref_silu(double x) { return x / (1.0 + exp(-x)); }

double kt_gdn_ref_conv(const double *w, const double *e, int kw, int fp16)
{
    double y = 0.0;
    for (int j = 0; j < kw; j++) y += w[j] * e[j];
    return kt_gdn_ref_rnd(ref_silu(y), fp16);
}

static double ref_l2_scale(const double *x, int n)
{
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += x[i] * x[i];
    return 1.0 / sqrt(ss + 1e-6);
}

/* the state element (i, j) of a head */
static double *ref_at(double *head, int vk, int dk, int dv, int i, int j)
{
    return vk ? head + (long long)j * dk + i : head + (long long)i * dv + j;
}

void kt_gdn_ref_step(const kt_gdn_decode_args *a, int fp16, kt_gdn_ref_pools *pl, double *out)
{
    const int H = a->num_k_heads, HV = a->num_v_heads, dk = a->dk, dv = a->dv, kw = a->conv_kw;
    const int cdim = 2 * H * dk + HV * dv;
    const unsigned short *qkv = (const unsigned short *)a->qkv, *cw = (const unsigned short *)a->conv_weight;
    const unsigned short *za = (const unsigned short *)a->z, *aa = (const unsigned short *)a->a;
    const unsigned short *ba = (const unsigned short *)a->b, *nw = (const unsigned short *)a->norm_weight;
    const int spec = a->num_accepted != NULL;
    double *y = (double *)malloc(sizeof(double) * (size_t)KT_GDN_MAX_TOKENS * (size_t)cdim);
    double *yr = (double *)malloc(sizeof(double) * (size_t)KT_GDN_MAX_TOKENS * (size_t)(H * dk));
    double *S = (double *)malloc(sizeof(double) * (size_t)dk * (size_t)dv);
    double *q = (double *)malloc(sizeof(double) * (size_t)dk * 2), *k = q + dk;
    double *d = (double *)malloc(sizeof(double) * (size_t)dv * 2), *o = d + dv;
    if (!y || !yr || !S || !q || !d) goto done;

    for (int i = 0; i < a->batch; i++) {
        const int t0 = a->query_start_loc[i], n = a->query_start_loc[i + 1] - t0, s = a->state_indices[i];
        if (n <= 0 || n > KT_GDN_MAX_TOKENS || s < 0) continue;
        int na = spec ? a->num_accepted[i] : 0;
        na = na < 0 ? 0 : na > KT_GDN_MAX_TOKENS ? KT_GDN_MAX_TOKENS : na;

        /* ---- conv, every channel; then its new conv state ---- */
        for (int c = 0; c < cdim; c++) {
            double w[KT_GDN_MAX_KW], e[KT_GDN_MAX_KW - 1 + KT_GDN_MAX_TOKENS], old[KT_GDN_MAX_KW - 1 + KT_GDN_MAX_TOKENS];
            double *col = pl->conv + (long long)s * a->conv_slot_stride + (long long)c * a->conv_chan_stride;
            for (int j = 0; j < kw; j++) w[j] = kt_gdn_ref_val(cw[(long long)c * kw + j], fp16);
            for (int u = 0; u < kw - 1 + n; u++)
                e[u] = u < kw - 1 ? col[(long long)(na + u) * a->conv_col_stride]
                                  : kt_gdn_ref_val(qkv[(long long)(t0 + u - (kw - 1)) * a->qkv_stride + c], fp16);
            for (int t = 0; t < n; t++) y[(long long)t * cdim + c] = kt_gdn_ref_conv(w, e + t, kw, fp16);
            if (c >= H * dk && c < 2 * H * dk) {
                for (int u = 0; u < na + kw - 1; u++) old[u] = col[(long long)u * a->conv_col_stride];
                for (int t = 0; t < na; t++) yr[(long long)t * H * dk + (c - H * dk)] = kt_gdn_ref_conv(w, old + t, kw, fp16);
            }
            const int ncol = spec ? kw - 1 + n : kw - 1, from = spec ? 0 : n;
            for (int u = 0; u < ncol; u++) col[(long long)u * a->conv_col_stride] = e[from + u];
        }

        /* ---- per value head: replay, the tokens, out ---- */
        for (int h = 0; h < HV; h++) {
            const int hk = h / (HV / H);
            double *head = pl->ssm + (long long)s * a->ssm_slot_stride + (long long)h * dk * dv;
            double *log = spec ? pl->log + (long long)s * a->log_slot_stride + (long long)h * KT_GDN_MAX_TOKENS * dv * 2 : NULL;
            for (int ii = 0; ii < dk; ii++)
                for (int j = 0; j < dv; j++) S[(long long)ii * dv + j] = *ref_at(head, pl->vk, dk, dv, ii, j);
            for (int u = 0; u < na; u++) {
                for (int ii = 0; ii < dk; ii++) k[ii] = yr[(long long)u * H * dk + hk * dk + ii];
                const double rk = ref_l2_scale(k, dk);
                for (int ii = 0; ii < dk; ii++)
                    for (int j = 0; j < dv; j++) {
                        const double *e = log + ((long long)u * dv + j) * 2;
                        S[(long long)ii * dv + j] = S[(long long)ii * dv + j] * exp(e[1]) + k[ii] * rk * e[0];
                    }
            }
            if (spec)   /* the slot keeps the state entering this step */
                for (int ii = 0; ii < dk; ii++)
                    for (int j = 0; j < dv; j++) *ref_at(head, pl->vk, dk, dv, ii, j) = S[(long long)ii * dv + j];
            for (int t = 0; t < n; t++) {
                const double *yt = y + (long long)t * cdim;
                for (int ii = 0; ii < dk; ii++) {
                    q[ii] = yt[hk * dk + ii];
                    k[ii] = yt[H * dk + hk * dk + ii];
                }
                const double rq = ref_l2_scale(q, dk) * a->scale, rk = ref_l2_scale(k, dk);
                for (int ii = 0; ii < dk; ii++) { q[ii] *= rq; k[ii] *= rk; }
                const long long r = (long long)(t0 + t) * a->ab_stride + h;
                const double x = kt_gdn_ref_val(aa[r], fp16) + a->dt_bias[h];
                const double sp = x > 20.0 ? x : log1p(exp(x));
                const double g = -exp((double)a->A_log[h]) * sp;
                const double beta = 1.0 / (1.0 + exp(-kt_gdn_ref_val(ba[r], fp16)));
                const double dec = exp(g);
                for (long long e = 0; e < (long long)dk * dv; e++) S[e] *= dec;
                for (int j = 0; j < dv; j++) {
                    double kv = 0.0;
                    for (int ii = 0; ii < dk; ii++) kv += S[(long long)ii * dv + j] * k[ii];
                    d[j] = beta * (yt[2 * H * dk + h * dv + j] - kv);
                }
                for (int ii = 0; ii < dk; ii++)
                    for (int j = 0; j < dv; j++) S[(long long)ii * dv + j] += k[ii] * d[j];
                double ss = 0.0;
                for (int j = 0; j < dv; j++) {
                    double acc = 0.0;
                    for (int ii = 0; ii < dk; ii++) acc += S[(long long)ii * dv + j] * q[ii];
                    o[j] = kt_gdn_ref_rnd(acc, fp16);
                    ss += o[j] * o[j];
                }
                double *orow = out + (long long)(t0 + t) * a->out_stride + (long long)h * dv;
                const double rstd = 1.0 / sqrt(ss / dv + (double)a->norm_eps);
                for (int j = 0; j < dv; j++) {
                    if (nw) {
                        const double zz = kt_gdn_ref_val(za[(long long)(t0 + t) * a->z_stride + (long long)h * dv + j], fp16);
                        orow[j] = kt_gdn_ref_rnd(o[j] * rstd * kt_gdn_ref_val(nw[j], fp16) * ref_silu(zz), fp16);
                    } else {
                        orow[j] = o[j];
                    }
                }
                if (spec)
                    for (int j = 0; j < dv; j++) {
                        log[((long long)t * dv + j) * 2] = d[j];
                        log[((long long)t * dv + j) * 2 + 1] = g;
                    }
            }
            if (!spec)
                for (int ii = 0; ii < dk; ii++)
                    for (int j = 0; j < dv; j++) *ref_at(head, pl->vk, dk, dv, ii, j) = S[(long long)ii * dv + j];
        }
    }
done:
    free(y);
    free(yr);
    free(S);
    free(q);
    free(d);
}

void kt_gdn_ref_prefill(const kt_gdn_prefill_args *a, int conv_len, int fp16, kt_gdn_ref_pools *pl, double *out)
{
    const int cdim = 2 * a->num_k_heads * a->dk + a->num_v_heads * a->dv;
    const long long ssm_head = (long long)a->num_v_heads * a->dk * a->dv;
    for (int i = 0; i < a->batch; i++) {
        const int s = a->state_indices[i], t0 = a->query_start_loc[i], len = a->query_start_loc[i + 1] - t0;
        if (s < 0 || len <= 0) continue;
        if (a->has_initial_state && !a->has_initial_state[i]) {
            for (int c = 0; c < cdim; c++)
                for (int u = 0; u < a->conv_kw - 1; u++)
                    pl->conv[s * a->conv_slot_stride + (long long)c * a->conv_chan_stride + (long long)u * a->conv_col_stride] = 0.0;
            for (long long e = 0; e < ssm_head; e++) pl->ssm[s * a->ssm_slot_stride + e] = 0.0;
        }
        for (int t = 0; t < len; t++) {
            kt_gdn_decode_args d;
            memset(&d, 0, sizeof d);
            const int q2[2] = {t0 + t, t0 + t + 1};
            d.qkv = a->qkv; d.z = a->z; d.a = a->a; d.b = a->b;
            d.A_log = a->A_log; d.dt_bias = a->dt_bias; d.conv_weight = a->conv_weight; d.norm_weight = a->norm_weight;
            d.query_start_loc = q2; d.state_indices = &a->state_indices[i];
            d.conv_slot_stride = a->conv_slot_stride; d.ssm_slot_stride = a->ssm_slot_stride;
            d.conv_chan_stride = a->conv_chan_stride; d.conv_col_stride = a->conv_col_stride;
            d.qkv_stride = a->qkv_stride; d.z_stride = a->z_stride; d.ab_stride = a->ab_stride; d.out_stride = a->out_stride;
            d.batch = 1; d.num_k_heads = a->num_k_heads; d.num_v_heads = a->num_v_heads; d.dk = a->dk; d.dv = a->dv;
            d.conv_kw = a->conv_kw; d.conv_len = conv_len; d.max_tokens = 1; d.state_vk = a->state_vk;
            d.scale = a->scale; d.norm_eps = a->norm_eps;
            kt_gdn_ref_step(&d, fp16, pl, out);
        }
    }
}

double kt_gdn_ref_rel(const double *ref, const void *x, long long n, int kind, int fp16, const unsigned char *live,
                      long long per)
{
    double num = 0.0, den = 0.0;
    for (long long i = 0; i < n; i++) {
        if (live && !live[i / per]) continue;
        const double v = kind == 0 ? kt_gdn_ref_val(((const unsigned short *)x)[i], fp16) : ((const float *)x)[i];
        if (!isfinite(v)) return NAN;
        num += (v - ref[i]) * (v - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}
