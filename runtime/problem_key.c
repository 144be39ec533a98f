/* problem_key.c: M bucket edges and the key texts (see problem_key.h). */
#include "problem_key.h"
#include <stdio.h>

/* Edges of the M buckets; the key text uses them verbatim. */
static const int m_edges[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192 };
#define N_M_EDGES ((int)(sizeof m_edges / sizeof m_edges[0]))
#define M_LAST_DECODE_EDGE 64

int kt_m_bucket_count(void) { return N_M_EDGES; }

int kt_m_bucket_at(int i) { return i >= 0 && i < N_M_EDGES ? m_edges[i] : -1; }

int kt_m_bucket(long m)
{
    if (m < 1) return -1;
    for (int i = 0; i < N_M_EDGES; i++)
        if (m_edges[i] >= m) return m_edges[i];
    return m_edges[N_M_EDGES - 1];
}

int kt_m_bucket_index(int bucket)
{
    for (int i = 0; i < N_M_EDGES; i++)
        if (m_edges[i] == bucket) return i;
    return -1;
}

const char *kt_m_phase(int bucket) { return bucket <= M_LAST_DECODE_EDGE ? "decode" : "prefill"; }

/* snprintf's result as this file's convention: the length, or -1 when truncated. */
static int fitted(int n, size_t len) { return n < 0 || (size_t)n >= len ? -1 : n; }

int kt_gemm_problem_key(char *buf, size_t len, const char *dtype, int n, int k, int bucket)
{
    if (len) buf[0] = 0;
    if (!dtype || kt_m_bucket_index(bucket) < 0) return -1;   /* only edges make keys */
    return fitted(snprintf(buf, len, "gemm %s n=%d k=%d m<=%d", dtype, n, k, bucket), len);
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
