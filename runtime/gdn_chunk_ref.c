/* gdn_chunk_ref.c: the chunked form of the gated delta rule in float64 (gdn_chunk_ref.h): one chunk a
 * sequential step, and two chunks a step from one state. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gdn_chunk_ref.h"

/* One chunk: its rows of q and k, and the chunk-parallel terms (running gates G, u, w, kd). */
typedef struct {
    int n;
    const double *q, *k;
    double *G, *u, *w, *kd;
} chunk;

typedef struct {
    size_t b;           /* rows allotted: bt */
    double *A, *X;      /* bt x bt scratch */
    chunk c[2];
    double *vn[2], *P;  /* vn of each chunk; P: w S of the pair's second chunk */
} scratch;

static void scratch_free(scratch *s)
{
    free(s->A); free(s->X); free(s->P);
    for (int i = 0; i < 2; i++) {
        free(s->c[i].G); free(s->c[i].u); free(s->c[i].w); free(s->c[i].kd); free(s->vn[i]);
    }
}

static int scratch_alloc(scratch *s, int bt, int dk, int dv)
{
    memset(s, 0, sizeof *s);
    const size_t b = (size_t)bt;
    s->b = b;
    s->A = calloc(b * b, sizeof(double));
    s->X = calloc(b * b, sizeof(double));
    s->P = malloc(sizeof(double) * b * (size_t)dv);
    int ok = s->A && s->X && s->P;
    for (int i = 0; i < 2; i++) {
        s->c[i].G = malloc(sizeof(double) * b);
        s->c[i].u = malloc(sizeof(double) * b * (size_t)dv);
        s->c[i].w = malloc(sizeof(double) * b * (size_t)dk);
        s->c[i].kd = malloc(sizeof(double) * b * (size_t)dk);
        s->vn[i] = malloc(sizeof(double) * b * (size_t)dv);
        ok = ok && s->c[i].G && s->c[i].u && s->c[i].w && s->c[i].kd && s->vn[i];
    }
    if (!ok) scratch_free(s);
    return ok ? 0 : -1;
}

/* the chunk at token c0 (n tokens): G, A, X = (I + A)^-1, u = X (beta v), w = X (beta e^G k),
 * kd = k e^{G_last - G} */
static void chunk_terms(chunk *c, scratch *s, int c0, int n, int dk, int dv, const double *q, const double *k,
                        const double *v, const double *g, const double *beta)
{
    const size_t b = s->b;
    double *A = s->A, *X = s->X, *G = c->G;
    const double *vc = v + (long long)c0 * dv, *bc = beta + c0;
    c->n = n;
    c->q = q + (long long)c0 * dk;
    c->k = k + (long long)c0 * dk;
    double run = 0.0;
    for (int r = 0; r < n; r++) G[r] = run += g[c0 + r];
    for (int r = 0; r < n; r++)
        for (int t = 0; t < r; t++) {
            double kk = 0.0;
            for (int i = 0; i < dk; i++) kk += c->k[(long long)r * dk + i] * c->k[(long long)t * dk + i];
            A[r * b + t] = bc[r] * exp(G[r] - G[t]) * kk;
        }
    /* X = (I + A)^-1, unit lower-triangular: X[r][t] = -sum_{t <= m < r} A[r][m] X[m][t] */
    for (int r = 0; r < n; r++) {
        X[r * b + r] = 1.0;
        for (int t = 0; t < r; t++) {
            double x = 0.0;
            for (int m = t; m < r; m++) x -= A[r * b + m] * X[m * b + t];
            X[r * b + t] = x;
        }
    }
    for (int r = 0; r < n; r++) {
        for (int j = 0; j < dv; j++) {
            double x = 0.0;
            for (int t = 0; t <= r; t++) x += X[r * b + t] * bc[t] * vc[(long long)t * dv + j];
            c->u[(long long)r * dv + j] = x;
        }
        for (int i = 0; i < dk; i++) {
            double x = 0.0;
            for (int t = 0; t <= r; t++) x += X[r * b + t] * bc[t] * exp(G[t]) * c->k[(long long)t * dk + i];
            c->w[(long long)r * dk + i] = x;
            c->kd[(long long)r * dk + i] = c->k[(long long)r * dk + i] * exp(G[n - 1] - G[r]);
        }
    }
}

/* out = w S (n x dv) */
static void chunk_wS(const chunk *c, int dk, int dv, const double *S, double *out)
{
    for (int r = 0; r < c->n; r++)
        for (int j = 0; j < dv; j++) {
            double x = 0.0;
            for (int i = 0; i < dk; i++) x += c->w[(long long)r * dk + i] * S[(long long)i * dv + j];
            out[(long long)r * dv + j] = x;
        }
}

/* o = scale (q e^G) S + ((q k^T) e^{G_r - G_s} [r >= s]) vn, the chunk's rows of o */
static void chunk_out(const chunk *c, int dk, int dv, const double *S, double scale, const double *vn, double *o)
{
    for (int r = 0; r < c->n; r++) {
        double qk[512];
        for (int t = 0; t <= r; t++) {
            double x = 0.0;
            for (int i = 0; i < dk; i++) x += c->q[(long long)r * dk + i] * c->k[(long long)t * dk + i];
            qk[t] = x * exp(c->G[r] - c->G[t]);
        }
        for (int j = 0; j < dv; j++) {
            double x = 0.0;
            for (int i = 0; i < dk; i++) x += c->q[(long long)r * dk + i] * S[(long long)i * dv + j];
            x *= scale * exp(c->G[r]);
            for (int t = 0; t <= r; t++) x += qk[t] * vn[(long long)t * dv + j];
            o[(long long)r * dv + j] = x;
        }
    }
}

/* S <- scale S + wk kd^T vn over the chunk's keys (the caller folds the decays into scale and wk) */
static void chunk_update(const chunk *c, int dk, int dv, double *S, double scale, double wk, const double *vn)
{
    for (int i = 0; i < dk; i++)
        for (int j = 0; j < dv; j++) {
            double x = scale * S[(long long)i * dv + j];
            for (int r = 0; r < c->n; r++) x += wk * c->kd[(long long)r * dk + i] * vn[(long long)r * dv + j];
            S[(long long)i * dv + j] = x;
        }
}

/* one chunk a step: vn = u - w S, its output, S = e^{G_last} S + kd^T vn */
static void step_one(scratch *s, int dk, int dv, double *S, double *o)
{
    const chunk *c = &s->c[0];
    chunk_wS(c, dk, dv, S, s->vn[0]);
    for (long long e = 0; e < (long long)c->n * dv; e++) s->vn[0][e] = c->u[e] - s->vn[0][e];
    chunk_out(c, dk, dv, S, 1.0, s->vn[0], o);
    chunk_update(c, dk, dv, S, exp(c->G[c->n - 1]), 1.0, s->vn[0]);
}

/* two chunks a step from the state entering the first (gdn_chunk_ref.h has the algebra) */
static void step_pair(scratch *s, int dk, int dv, double *S, double *o0, double *o1)
{
    const chunk *a = &s->c[0], *z = &s->c[1];
    double *va = s->vn[0], *vz = s->vn[1], *P = s->P;
    const double ga = exp(a->G[a->n - 1]), gz = exp(z->G[z->n - 1]);
    chunk_wS(a, dk, dv, S, va);   /* w_c S and w_{c+1} S: both from S */
    chunk_wS(z, dk, dv, S, P);
    for (long long e = 0; e < (long long)a->n * dv; e++) va[e] = a->u[e] - va[e];
    for (int r = 0; r < z->n; r++) {
        double C[512], D[512];   /* row r of w_{c+1} kd_c^T and of (q_{c+1} e^G) kd_c^T */
        for (int t = 0; t < a->n; t++) {
            double cw = 0.0, cq = 0.0;
            for (int i = 0; i < dk; i++) {
                cw += z->w[(long long)r * dk + i] * a->kd[(long long)t * dk + i];
                cq += z->q[(long long)r * dk + i] * a->kd[(long long)t * dk + i];
            }
            C[t] = cw;
            D[t] = cq * exp(z->G[r]);
        }
        for (int j = 0; j < dv; j++) {
            double x = z->u[(long long)r * dv + j] - ga * P[(long long)r * dv + j];
            for (int t = 0; t < a->n; t++) x -= C[t] * va[(long long)t * dv + j];
            vz[(long long)r * dv + j] = x;
        }
        for (int j = 0; j < dv; j++) {
            double x = 0.0;
            for (int t = 0; t < a->n; t++) x += D[t] * va[(long long)t * dv + j];
            P[(long long)r * dv + j] = x;   /* w_{c+1} S's rows are spent: D vn_c in their place */
        }
    }
    chunk_out(a, dk, dv, S, 1.0, va, o0);
    chunk_out(z, dk, dv, S, ga, vz, o1);
    for (long long e = 0; e < (long long)z->n * dv; e++) o1[e] += P[e];
    chunk_update(a, dk, dv, S, gz * ga, gz, va);   /* g_{c+1} g_c S + g_{c+1} kd_c^T vn_c */
    chunk_update(z, dk, dv, S, 1.0, 1.0, vz);      /* + kd_{c+1}^T vn_{c+1} */
}

static int chunked(int pairs, int T, int dk, int dv, int bt, const double *q, const double *k, const double *v,
                   const double *g, const double *beta, double *S, double *o)
{
    scratch s;
    if (bt < 1 || bt > 512 || scratch_alloc(&s, bt, dk, dv)) return -1;
    for (int c0 = 0; c0 < T;) {
        const int n0 = T - c0 < bt ? T - c0 : bt, c1 = c0 + n0;
        chunk_terms(&s.c[0], &s, c0, n0, dk, dv, q, k, v, g, beta);
        if (!pairs || c1 >= T) {
            step_one(&s, dk, dv, S, o + (long long)c0 * dv);
            c0 = c1;
            continue;
        }
        const int n1 = T - c1 < bt ? T - c1 : bt;
        chunk_terms(&s.c[1], &s, c1, n1, dk, dv, q, k, v, g, beta);
        step_pair(&s, dk, dv, S, o + (long long)c0 * dv, o + (long long)c1 * dv);
        c0 = c1 + n1;
    }
    scratch_free(&s);
    return 0;
}

int kt_gdn_chunk_ref(int T, int dk, int dv, int bt, const double *q, const double *k, const double *v,
                     const double *g, const double *beta, double *S, double *o)
{
    return chunked(0, T, dk, dv, bt, q, k, v, g, beta, S, o);
}

int kt_gdn_chunk_pair_ref(int T, int dk, int dv, int bt, const double *q, const double *k, const double *v,
                          const double *g, const double *beta, double *S, double *o)
{
    return chunked(1, T, dk, dv, bt, q, k, v, g, beta, S, o);
}
