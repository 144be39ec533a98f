/* problem_key.c: M bucket edges and the key texts (see problem_key.h). */
#include "problem_key.h"
#include "op_gemm.h"
#include <stdio.h>

/* The M buckets are the GEMM descriptor's (runtime/op_gemm.c): one list of edges, one key text. */
static const kt_op_dim *m_dim(void) { return &kt_op_gemm.dims[KT_GEMM_D_M]; }

int kt_m_bucket_count(void) { return m_dim()->nedges; }

int kt_m_bucket_at(int i) { return i >= 0 && i < m_dim()->nedges ? m_dim()->edges[i] : -1; }

int kt_m_bucket(long m) { return (int)kt_op_bucket(&kt_op_gemm, KT_GEMM_D_M, m); }

int kt_m_bucket_index(int bucket)
{
    for (int i = 0; i < m_dim()->nedges; i++)
        if (m_dim()->edges[i] == bucket) return i;
    return -1;
}

const char *kt_m_phase(int bucket) { return bucket <= kt_op_gemm.decode_edge ? "decode" : "prefill"; }

/* snprintf's result as this file's convention: the length, or -1 when truncated. */
static int fitted(int n, size_t len) { return n < 0 || (size_t)n >= len ? -1 : n; }

int kt_gemm_problem_key(char *buf, size_t len, const char *dtype, int n, int k, int bucket)
{
    if (len) buf[0] = 0;
    if (!dtype || kt_m_bucket_index(bucket) < 0) return -1;   /* only edges make keys */
    kt_problem p = {.op = &kt_op_gemm, .dtype = kt_op_dtype_index(&kt_op_gemm, dtype)};
    if (p.dtype < 0) return fitted(snprintf(buf, len, "gemm %s n=%d k=%d m<=%d", dtype, n, k, bucket), len);
    p.dim[KT_GEMM_D_N] = n;
    p.dim[KT_GEMM_D_K] = k;
    p.dim[KT_GEMM_D_M] = bucket;
    return kt_problem_key(&p, buf, len);
}

int kt_device_key(char *buf, size_t len, const char *arch, int compute_units, int pci_device_id)
{
    if (len) buf[0] = 0;
    if (!arch || !arch[0]) return -1;
    if (pci_device_id < 0)
        return fitted(snprintf(buf, len, "%s/%d/unknown", arch, compute_units), len);
    return fitted(snprintf(buf, len, "%s/%d/0x%04x", arch, compute_units, (unsigned)pci_device_id), len);
}

int kt_law_device_key(char *buf, size_t len, const char *target)
{
    if (len) buf[0] = 0;
    if (!target || !target[0]) return -1;
    return fitted(snprintf(buf, len, "%s/law", target), len);
}
