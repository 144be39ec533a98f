/* gdn_chunk_ref.h: the chunked (WY) form of the gated delta rule in float64, one sequence and one
 * value head: the algorithm the GDN prefill kernels implement (../shared/ref/gdn.md section 2),
 * written out so that its every step is checked against the per-token recurrence on the CPU
 * (tests/unit/test_gdn_chunk.c) before a kernel splits it. Prefix kt_gdn_chunk_. */
#ifndef KT_GDN_CHUNK_REF_H
#define KT_GDN_CHUNK_REF_H

/* Over T tokens in chunks of bt (the last one partial): q (already normalized and scaled) and k
 * (normalized) [T][dk], v [T][dv], g (log gates, <= 0) and beta [T]; S [dk][dv] the state entering
 * (in) and leaving (out); o [T][dv]; bt <= 512. Per chunk, with G the gates' running sum inside it:
 *   A  = strictly lower (beta_r e^{G_r - G_s} k_r . k_s);  Ai = (I + A)^-1 by forward substitution
 *   u  = Ai (beta v);  w = Ai (beta e^G k)                          (chunk-parallel)
 *   vn = u - w S;  o = (q e^G) S + ((q k^T) e^{G_r - G_s} [r >= s]) vn
 *   S  = e^{G_last} S + (k e^{G_last - G})^T vn                     (the only sequential step)
 * 0, or -1 when scratch cannot be allocated (nothing written). */
int kt_gdn_chunk_ref(int T, int dk, int dv, int bt, const double *q, const double *k, const double *v,
                     const double *g, const double *beta, double *S, double *o);

#endif
