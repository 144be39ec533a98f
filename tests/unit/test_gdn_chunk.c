/* test_gdn_chunk.c: the chunked (WY) form of the gated delta rule (runtime/gdn_chunk_ref.c), the
 * algorithm the GDN prefill kernels split, one chunk a sequential step and two chunks a step from
 * one state, against the per-token recurrence written here directly (../shared/ref/gdn.md section
 * 1), in float64: outputs and the final state, at chunk sizes 16, 32 and 64, token counts around
 * and inside the chunk boundaries (1, 15-17, 63-65, 200: an odd and an even chunk count, a partial
 * last chunk paired and alone), head sizes 32 and 128, a non-zero initial state, gates from mild
 * to strong decay. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "kt_test.h"
#include "gdn_chunk_ref.h"
#include "../tuner/random_inputs.h"

static double urand(uint64_t *r, double lo, double hi)
{
    return lo + (hi - lo) * (double)(kt_rand_splitmix64(r) >> 11) * 0x1p-53;
}

static void recurrence(int T, int dk, int dv, const double *q, const double *k, const double *v, const double *g,
                       const double *beta, double *S, double *o)
{
    double *kv = malloc(sizeof(double) * (size_t)dv);
    for (int t = 0; t < T; t++) {
        const double a = exp(g[t]);
        for (int e = 0; e < dk * dv; e++) S[e] *= a;
        for (int j = 0; j < dv; j++) {
            double x = 0.0;
            for (int i = 0; i < dk; i++) x += S[i * dv + j] * k[(long long)t * dk + i];
            kv[j] = beta[t] * (v[(long long)t * dv + j] - x);
        }
        for (int i = 0; i < dk; i++)
            for (int j = 0; j < dv; j++) S[i * dv + j] += k[(long long)t * dk + i] * kv[j];
        for (int j = 0; j < dv; j++) {
            double x = 0.0;
            for (int i = 0; i < dk; i++) x += S[i * dv + j] * q[(long long)t * dk + i];
            o[(long long)t * dv + j] = x;
        }
    }
    free(kv);
}

static double rel(const double *x, const double *ref, long long n)
{
    double num = 0.0, den = 0.0;
    for (long long i = 0; i < n; i++) {
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num / (den > 0 ? den : 1.0));
}

static void one(int T, int d, int bt, double gmin, uint64_t *r, double *worst)
{
    const int dk = d, dv = d;
    double *q = malloc(sizeof(double) * (size_t)T * dk), *k = malloc(sizeof(double) * (size_t)T * dk);
    double *v = malloc(sizeof(double) * (size_t)T * dv), *g = malloc(sizeof(double) * (size_t)T);
    double *beta = malloc(sizeof(double) * (size_t)T), *S0 = malloc(sizeof(double) * (size_t)dk * dv);
    double *S1 = malloc(sizeof(double) * (size_t)dk * dv), *o0 = malloc(sizeof(double) * (size_t)T * dv);
    double *o1 = malloc(sizeof(double) * (size_t)T * dv), *S2 = malloc(sizeof(double) * (size_t)dk * dv);
    double *o2 = malloc(sizeof(double) * (size_t)T * dv);
    for (int t = 0; t < T; t++) {
        double nq = 0, nk = 0;
        for (int i = 0; i < dk; i++) {
            q[t * dk + i] = urand(r, -1, 1);
            k[t * dk + i] = urand(r, -1, 1);
            nq += q[t * dk + i] * q[t * dk + i];
            nk += k[t * dk + i] * k[t * dk + i];
        }
        for (int i = 0; i < dk; i++) {
            q[t * dk + i] /= sqrt(nq) * sqrt((double)dk);
            k[t * dk + i] /= sqrt(nk);
        }
        for (int j = 0; j < dv; j++) v[t * dv + j] = urand(r, -2, 2);
        g[t] = urand(r, gmin, -0.001);
        beta[t] = urand(r, 0.05, 0.95);
    }
    for (int e = 0; e < dk * dv; e++) S0[e] = S1[e] = S2[e] = urand(r, -1, 1);
    recurrence(T, dk, dv, q, k, v, g, beta, S0, o0);
    KT_CHECK_INT(kt_gdn_chunk_ref(T, dk, dv, bt, q, k, v, g, beta, S1, o1), 0);
    KT_CHECK_INT(kt_gdn_chunk_pair_ref(T, dk, dv, bt, q, k, v, g, beta, S2, o2), 0);
    const double *so[2] = {o1, o2}, *ss[2] = {S1, S2};
    for (int f = 0; f < 2; f++) {
        const double eo = rel(so[f], o0, (long long)T * dv), es = rel(ss[f], S0, (long long)dk * dv);
        if (eo > *worst) *worst = eo;
        if (es > *worst) *worst = es;
        if (!(eo < 1e-10 && es < 1e-10))
            fprintf(stderr, "  %s T %d d %d bt %d gmin %g: out %.2e state %.2e\n", f ? "pairs" : "one", T, d, bt, gmin, eo, es);
        KT_CHECK(eo < 1e-10);
        KT_CHECK(es < 1e-10);
    }
    free(q); free(k); free(v); free(g); free(beta); free(S0); free(S1); free(S2); free(o0); free(o1); free(o2);
}

int main(void)
{
    uint64_t r = 12345;
    double worst = 0.0;
    const int Ts[] = {1, 15, 16, 17, 63, 64, 65, 200}, bts[] = {16, 32, 64};
    for (int a = 0; a < 8; a++)
        for (int b = 0; b < 3; b++) {
            one(Ts[a], 32, bts[b], -0.5, &r, &worst);
            one(Ts[a], 32, bts[b], -6.0, &r, &worst);
        }
    one(130, 128, 64, -1.0, &r, &worst);
    printf("chunked forms (one chunk and two a step) against the recurrence: worst relative error %.2e\n", worst);
    double z = 0;
    KT_CHECK_INT(kt_gdn_chunk_ref(4, 8, 8, 600, &z, &z, &z, &z, &z, &z, &z), -1);   /* bt past 512 refused */
    KT_CHECK_INT(kt_gdn_chunk_pair_ref(4, 8, 8, 600, &z, &z, &z, &z, &z, &z, &z), -1);
    KT_TEST_END();
}
