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

/* The same result with the sequential pass taking two chunks a step from one state (the prefill's
 * planned shorter chain, bench/NOTES.md thirty-sixth session). With chunks c and c + 1 of a pair,
 * g_c = e^{G_last} of chunk c, kd = k e^{G_last - G}, and two chunk-parallel BT x BT couplings
 *   C = w_{c+1} kd_c^T,   D = (q_{c+1} e^{G}) kd_c^T,
 * the pass from S (the state entering c, the only one a pair stores: h every other chunk) is
 *   vn_c = u_c - w_c S;   vn_{c+1} = u_{c+1} - g_c w_{c+1} S - C vn_c   (w_c S, w_{c+1} S: one product)
 *   S <- g_{c+1} g_c S + g_{c+1} kd_c^T vn_c + kd_{c+1}^T vn_{c+1}        (one update over 2 BT keys)
 * and chunk c + 1's output takes its entering state through the pair's:
 *   o_{c+1} = g_c (q_{c+1} e^G) S + D vn_c + ((q k^T) e^{G_r - G_s} [r >= s]) vn_{c+1}.
 * An odd chunk count leaves the last chunk a step of its own. Same arguments and returns. */
int kt_gdn_chunk_pair_ref(int T, int dk, int dv, int bt, const double *q, const double *k, const double *v,
                          const double *g, const double *beta, double *S, double *o);

#endif
