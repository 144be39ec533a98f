/* gdn_chunk_ref.c: the chunked form of the gated delta rule in float64 (gdn_chunk_ref.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "gdn_chunk_ref.h"

int kt_gdn_chunk_ref(int T, int dk, int dv, int bt, const double *q, const double *k, const double *v,
                     const double *g, const double *beta, double *S, double *o)
{
    const size_t b = (size_t)bt;
    double *G = malloc(sizeof(double) * b), *A = calloc(b * b, sizeof(double)), *X = calloc(b * b, sizeof(double));
    double *u = malloc(sizeof(double) * b * (size_t)dv), *w = malloc(sizeof(double) * b * (size_t)dk);
    double *vn = malloc(sizeof(double) * b * (size_t)dv);
    int rc = -1;
    if (!G || !A || !X || !u || !w || !vn || bt < 1 || bt > 512) goto done;
    for (int c0 = 0; c0 < T; c0 += bt) {
        const int n = T - c0 < bt ? T - c0 : bt;
        const double *qc = q + (long long)c0 * dk, *kc = k + (long long)c0 * dk, *vc = v + (long long)c0 * dv;
        const double *bc = beta + c0;
        double run = 0.0;
        for (int r = 0; r < n; r++) G[r] = run += g[c0 + r];
        for (int r = 0; r < n; r++)
            for (int s = 0; s < r; s++) {
                double kk = 0.0;
                for (int i = 0; i < dk; i++) kk += kc[(long long)r * dk + i] * kc[(long long)s * dk + i];
                A[r * b + s] = bc[r] * exp(G[r] - G[s]) * kk;
            }
        /* X = (I + A)^-1, unit lower-triangular: X[r][s] = -sum_{s <= m < r} A[r][m] X[m][s] */
        for (int r = 0; r < n; r++) {
            X[r * b + r] = 1.0;
            for (int s = 0; s < r; s++) {
                double x = 0.0;
                for (int m = s; m < r; m++) x -= A[r * b + m] * X[m * b + s];
                X[r * b + s] = x;
            }
        }
        /* u = X (beta v), w = X (beta e^G k) */
        for (int r = 0; r < n; r++) {
            for (int j = 0; j < dv; j++) {
                double x = 0.0;
                for (int s = 0; s <= r; s++) x += X[r * b + s] * bc[s] * vc[(long long)s * dv + j];
                u[(long long)r * dv + j] = x;
            }
            for (int i = 0; i < dk; i++) {
                double x = 0.0;
                for (int s = 0; s <= r; s++) x += X[r * b + s] * bc[s] * exp(G[s]) * kc[(long long)s * dk + i];
                w[(long long)r * dk + i] = x;
            }
        }
        /* vn = u - w S (S: the state entering the chunk) */
        for (int r = 0; r < n; r++)
            for (int j = 0; j < dv; j++) {
                double x = u[(long long)r * dv + j];
                for (int i = 0; i < dk; i++) x -= w[(long long)r * dk + i] * S[(long long)i * dv + j];
                vn[(long long)r * dv + j] = x;
            }
        /* o = (q e^G) S + ((q k^T) e^{G_r - G_s} [r >= s]) vn */
        for (int r = 0; r < n; r++) {
            double qk[512];
            for (int s = 0; s <= r; s++) {
                double x = 0.0;
                for (int i = 0; i < dk; i++) x += qc[(long long)r * dk + i] * kc[(long long)s * dk + i];
                qk[s] = x * exp(G[r] - G[s]);
            }
            for (int j = 0; j < dv; j++) {
                double x = 0.0;
                for (int i = 0; i < dk; i++) x += qc[(long long)r * dk + i] * S[(long long)i * dv + j];
                x *= exp(G[r]);
                for (int s = 0; s <= r; s++) x += qk[s] * vn[(long long)s * dv + j];
                o[(long long)(c0 + r) * dv + j] = x;
            }
        }
        /* S = e^{G_last} S + (k e^{G_last - G})^T vn */
        const double gl = G[n - 1];
        for (int i = 0; i < dk; i++)
            for (int j = 0; j < dv; j++) {
                double x = exp(gl) * S[(long long)i * dv + j];
                for (int r = 0; r < n; r++) x += kc[(long long)r * dk + i] * exp(gl - G[r]) * vn[(long long)r * dv + j];
                S[(long long)i * dv + j] = x;
            }
    }
    rc = 0;
done:
    free(G); free(A); free(X); free(u); free(w); free(vn);
    return rc;
}
